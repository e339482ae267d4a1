//! Finding 3: with 16 random readers in 128 MiB, deadline (ascending-sector
//! batches) is ahead of cfq and noop in throughput.

use super::{rand16_runs, scheduler_names};
use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{cell, num, Finding, Measure, Quantity};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::{Context, Result};
use mmcsim::sched::Registry;

/// 16 readers under every scheduler.
pub struct Schedulers;

impl Finding for Schedulers {
    fn number(&self) -> u32 {
        3
    }
    fn title(&self) -> &'static str {
        "16 random readers in 128 MiB under every scheduler"
    }
    fn source(&self) -> &'static str {
        "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 3"
    }
    fn claim(&self) -> &'static str {
        "with 16 random readers, deadline's throughput is ahead of both cfq's and noop's"
    }
    fn csv_header(&self) -> &'static [&'static str] {
        &[
            "scheduler",
            "iops",
            "mean_latency_us",
            "p99_latency_us",
            "jain",
        ]
    }
    fn runs(&self, registry: &Registry) -> Vec<RunSpec> {
        rand16_runs(registry)
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let names = scheduler_names(runs);
        let iops = runs
            .iter()
            .map(|r| num(r, "throughput.iops"))
            .collect::<Result<Vec<_>>>()?;
        let of = |s: &str| -> Result<f64> {
            let i = names
                .iter()
                .position(|n| n == s)
                .with_context(|| format!("no run under `{s}`"))?;
            Ok(iops[i])
        };
        let (d, c, n) = (of("deadline")?, of("cfq")?, of("noop")?);
        let mut csv = Vec::new();
        for (name, r) in names.iter().zip(runs) {
            csv.push(vec![
                name.clone(),
                cell(num(r, "throughput.iops")?),
                cell(num(r, "latency_us.mean")?),
                cell(num(r, "latency_us.p99")?),
                cell(num(r, "fairness.jain")?),
            ]);
        }
        Ok(Measure {
            pass: d > c && d > n,
            summary: format!(
                "deadline {d:.0} IOPS, cfq {c:.0} IOPS ({:+.1} %), noop {n:.0} IOPS ({:+.1} %)",
                (d / c - 1.0) * 100.0,
                (d / n - 1.0) * 100.0
            ),
            table: vec![
                Quantity::new("deadline (IOPS)", "highest of the three", format!("{d:.0}")),
                Quantity::new("cfq (IOPS)", "below deadline", format!("{c:.0}")),
                Quantity::new("noop (IOPS)", "below deadline", format!("{n:.0}")),
            ],
            csv,
            panels: vec![Panel::Bars(BarPanel::amounts(
                "16 threads, random 1-byte reads in 128 MiB",
                "IOPS",
                names.into_iter().zip(iops).collect(),
            ))],
        })
    }
}
