//! Finding 5: Jain's fairness index over the 16 readers' IOPS, per
//! scheduler. The claim is the mechanism of io-schedulers.md §deadline:
//! each read carries a deadline (`read_expire`, 500 ms) that overrides the
//! ascending-sector batches, so deadline's throughput gain (finding 3) is
//! not bought by starving the threads whose data lies at high sectors.

use super::{of_scheduler, per_scheduler, rand16_runs};
use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{cell, About, Boundary, Finding, Measure, Quantity};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::{Context, Result};
use mmcsim::sched::Registry;

/// Jain's index per scheduler.
pub struct Fairness;

/// The band: deadline at least this fair...
const MIN_JAIN: f64 = 0.99;
/// ...and no further below noop than this.
const MAX_GAP: f64 = 0.01;

const ABOUT: About = About {
    number: 5,
    title: "Jain's fairness index over 16 threads, per scheduler",
    source: "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 7; band from the deadline mechanism (io-schedulers.md §deadline: read_expire)",
    claim: "deadline's throughput gain costs no fairness: its Jain index over the 16 threads is ≥ 0.99 and within 0.01 of noop's",
    boundary: Boundary::AppCalls,
    csv_header: &["scheduler", "jain", "min_thread_iops", "max_thread_iops"],
};

impl Finding for Fairness {
    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn runs(&self, registry: &Registry) -> Vec<RunSpec> {
        rand16_runs(registry)
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let (names, jain) = per_scheduler(runs, "fairness.jain")?;
        let of = |s: &str| of_scheduler(&names, &jain, s);
        let (d, n, c) = (of("deadline")?, of("noop")?, of("cfq")?);
        let mut csv = Vec::new();
        for ((name, r), j) in names.iter().zip(runs).zip(&jain) {
            let threads = r.report["threads"]
                .as_array()
                .with_context(|| format!("{}: no threads", r.label))?;
            let iops: Vec<f64> = threads.iter().filter_map(|t| t["iops"].as_f64()).collect();
            let min = iops.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = iops.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            csv.push(vec![name.clone(), cell(*j), cell(min), cell(max)]);
        }
        Ok(Measure {
            pass: d >= MIN_JAIN && d >= n - MAX_GAP,
            summary: format!("Jain deadline {d:.4}, noop {n:.4}, cfq {c:.4}"),
            table: vec![
                Quantity::new("deadline: Jain's index", "≥ 0.99", format!("{d:.4}")),
                Quantity::new("noop: Jain's index", "—", format!("{n:.4}")),
                Quantity::new("deadline − noop", "≥ −0.01", format!("{:+.4}", d - n)),
                Quantity::new("cfq: Jain's index", "—", format!("{c:.4}")),
            ],
            csv,
            panels: vec![Panel::Bars(BarPanel::ratios(
                "Jain's fairness index over the 16 threads' IOPS",
                "Jain's index",
                names.into_iter().zip(jain).collect(),
            ))],
        })
    }
}
