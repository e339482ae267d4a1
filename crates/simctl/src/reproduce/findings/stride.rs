//! Finding 2: 1-byte reads at the start of each 1 MiB block finish sooner
//! in ascending order than shuffled (the device's mapping cache and its
//! forward prefetch of map pages).

use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{cell, num, Finding, Measure, Quantity};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::Result;
use mmcsim::sched::Registry;

/// Sorted vs shuffled strided reads.
pub struct Stride;

impl Finding for Stride {
    fn number(&self) -> u32 {
        2
    }
    fn title(&self) -> &'static str {
        "Sorted vs shuffled 1 MiB-strided 1-byte reads"
    }
    fn source(&self) -> &'static str {
        "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 2"
    }
    fn claim(&self) -> &'static str {
        "the same 1 MiB-strided 1-byte reads finish faster in ascending (sorted) order than shuffled"
    }
    fn csv_header(&self) -> &'static [&'static str] {
        &[
            "order",
            "reads",
            "simulated_time_s",
            "mean_latency_us",
            "device_map_cache_hit_rate",
        ]
    }
    fn runs(&self, _: &Registry) -> Vec<RunSpec> {
        vec![
            RunSpec::new("sorted-stride.toml", &[]),
            RunSpec::new("shuffled-stride.toml", &[]),
        ]
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let names = ["sorted", "shuffled"];
        let time = [
            num(runs[0], "simulated_time_s")?,
            num(runs[1], "simulated_time_s")?,
        ];
        let mut csv = Vec::new();
        for (name, r) in names.iter().zip(runs) {
            csv.push(vec![
                name.to_string(),
                cell(num(r, "requests.reads")?),
                cell(num(r, "simulated_time_s")?),
                cell(num(r, "latency_us.mean")?),
                cell(num(r, "device.map_cache_hit_rate")?),
            ]);
        }
        let speedup = time[1] / time[0];
        Ok(Measure {
            pass: time[0] < time[1],
            summary: format!(
                "sorted {:.4} s, shuffled {:.4} s: shuffled takes {speedup:.2}× as long",
                time[0], time[1]
            ),
            table: vec![
                Quantity::new("sorted: time to finish (s)", "—", format!("{:.4}", time[0])),
                Quantity::new(
                    "shuffled: time to finish (s)",
                    "—",
                    format!("{:.4}", time[1]),
                ),
                Quantity::new("shuffled / sorted", "> 1", format!("{speedup:.2}×")),
            ],
            csv,
            panels: vec![Panel::Bars(BarPanel::amounts(
                "1-byte reads, one per 1 MiB block",
                "time to finish all reads (s)",
                names.iter().map(|n| n.to_string()).zip(time).collect(),
            ))],
        })
    }
}
