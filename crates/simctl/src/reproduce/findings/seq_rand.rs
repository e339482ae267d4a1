//! Finding 1: sequential 4 KiB buffered reads reach at least three times
//! the IOPS of random ones (read-ahead and the device's read buffer).

use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{
    cell, num, About, Boundary, Check, Finding, Measure, Quantity, Side,
};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::Result;
use mmcsim::sched::Registry;

/// Sequential vs random 4 KiB reads.
pub struct SeqRand;

/// The published lower bound of sequential / random IOPS.
const MIN_RATIO: f64 = 3.0;

const ABOUT: About = About {
    number: 1,
    title: "Sequential vs random 4 KiB reads",
    source: "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 1",
    claim: "sequential 4 KiB reads reach ≥ 3× the IOPS of random 4 KiB reads",
    boundary: Boundary::AppCalls,
    csv_header: &[
        "pattern",
        "iops",
        "mean_latency_us",
        "page_cache_hits",
        "device_read_buffer_hit_rate",
    ],
};

impl Finding for SeqRand {
    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn pinned_verdict(&self) -> Option<&'static str> {
        Some(super::PINNED_1)
    }
    fn runs(&self, _: &Registry) -> Vec<RunSpec> {
        vec![
            RunSpec::new("seq-read-4k.toml", &[]).on_benchmark_fs(),
            RunSpec::new("rand-read-4k.toml", &[]).on_benchmark_fs(),
        ]
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let names = ["sequential", "random"];
        let iops = [
            num(runs[0], "throughput.iops")?,
            num(runs[1], "throughput.iops")?,
        ];
        let ratio = iops[0] / iops[1];
        let mut csv = Vec::new();
        for (name, r) in names.iter().zip(runs) {
            csv.push(vec![
                name.to_string(),
                cell(num(r, "throughput.iops")?),
                cell(num(r, "latency_us.mean")?),
                cell(num(r, "page_cache.hits")?),
                cell(num(r, "device.read_buffer_hit_rate")?),
            ]);
        }
        Ok(Measure {
            checks: vec![Check::predicted(
                "sequential / random 4 KiB read IOPS ≥ 3",
                Side::Above(MIN_RATIO),
                ratio,
            )],
            summary: format!(
                "sequential {:.0} IOPS, random {:.0} IOPS: {ratio:.2}×",
                iops[0], iops[1]
            ),
            table: vec![
                Quantity::new(
                    "sequential 4 KiB reads (IOPS)",
                    "—",
                    format!("{:.0}", iops[0]),
                ),
                Quantity::new("random 4 KiB reads (IOPS)", "—", format!("{:.0}", iops[1])),
                Quantity::new("sequential / random", "≥ 3×", format!("{ratio:.2}×")),
            ],
            csv,
            panels: vec![Panel::Bars(BarPanel::amounts(
                "4 KiB buffered reads, mean over seeds",
                "IOPS",
                names.iter().map(|n| n.to_string()).zip(iops).collect(),
            ))],
        })
    }
}
