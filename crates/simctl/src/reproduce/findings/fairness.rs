//! Finding 5: Jain's fairness index over the 16 readers' IOPS, per
//! scheduler. The claim as the seed papers state it (Fig. 7): deadline is
//! fairer than the other schedulers they compared, noop and cfq (the same
//! three as Fig. 3, finding 3). The mechanism is io-schedulers.md
//! §deadline: each read carries a deadline (`read_expire`, 500 ms) that
//! overrides the ascending-sector batches, so no thread starves.

use super::{of_scheduler, per_scheduler, rand16_runs};
use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{cell, About, Boundary, Check, Finding, Measure, Quantity, Side};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::{Context, Result};
use mmcsim::sched::Registry;

/// Jain's index per scheduler.
pub struct Fairness;

/// The schedulers the papers set deadline against (Fig. 3 and 7).
const OTHERS: [&str; 2] = ["noop", "cfq"];

const ABOUT: About = About {
    number: 5,
    title: "Jain's fairness index over 16 threads, per scheduler",
    source: "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 7 (deadline, noop and cfq)",
    claim: "deadline's Jain fairness index over the 16 threads' IOPS is above noop's and cfq's",
    boundary: Boundary::AppCalls,
    csv_header: &["scheduler", "jain", "min_thread_iops", "max_thread_iops"],
};

impl Finding for Fairness {
    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn pinned_verdict(&self) -> Option<&'static str> {
        Some(super::PINNED_5)
    }
    fn runs(&self, registry: &Registry) -> Vec<RunSpec> {
        rand16_runs(registry)
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let (names, jain) = per_scheduler(runs, "fairness.jain")?;
        let of = |s: &str| of_scheduler(&names, &jain, s);
        let d = of("deadline")?;
        let others = OTHERS.iter().map(|s| of(s)).collect::<Result<Vec<_>>>()?;
        let best_other = others.iter().copied().fold(f64::NEG_INFINITY, f64::max);
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
        let mut table = vec![Quantity::new(
            "deadline: Jain's index",
            "highest of deadline, noop, cfq",
            format!("{d:.4}"),
        )];
        for (s, j) in OTHERS.iter().zip(&others) {
            table.push(Quantity::new(
                &format!("{s}: Jain's index"),
                "below deadline",
                format!("{j:.4}"),
            ));
        }
        let gaps: Vec<(String, f64)> = names
            .iter()
            .zip(&jain)
            .filter(|(n, _)| *n != "deadline")
            .map(|(n, j)| (n.clone(), d - j))
            .collect();
        Ok(Measure {
            checks: vec![Check::predicted(
                "deadline's Jain index minus the higher of noop's and cfq's > 0",
                Side::Above(0.0),
                d - best_other,
            )],
            summary: format!(
                "Jain deadline {d:.4}, {}",
                OTHERS
                    .iter()
                    .zip(&others)
                    .map(|(s, j)| format!("{s} {j:.4}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            table,
            csv,
            panels: vec![
                Panel::Bars(BarPanel::amounts(
                    "Jain's fairness index over the 16 threads' IOPS",
                    "Jain's index (1 = equal shares)",
                    names.into_iter().zip(jain).collect(),
                )),
                Panel::Bars(BarPanel::differences(
                    "deadline's index minus each other scheduler's",
                    "difference in Jain's index",
                    gaps,
                )),
            ],
        })
    }
}
