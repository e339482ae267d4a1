//! Finding 2: 1-byte reads at the start of each 1 MiB block finish sooner
//! in ascending order than shuffled (the device's mapping cache and its
//! forward prefetch of map pages).

use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{
    cell, num, About, Boundary, Check, Finding, Measure, Quantity, Sensitivity, Side,
};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::Result;
use mmcsim::sched::Registry;

/// Sorted vs shuffled strided reads.
pub struct Stride;

const ABOUT: About = About {
    number: 2,
    title: "Sorted vs shuffled 1 MiB-strided 1-byte reads",
    source: "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 2",
    claim: "the same 1 MiB-strided 1-byte reads finish faster in ascending (sorted) order than shuffled",
    boundary: Boundary::AppCalls,
    csv_header: &[
            "order",
            "reads",
            "simulated_time_s",
            "mean_latency_us",
            "device_map_cache_hit_rate",
        ],
};

/// The mapping cache's size against the region this finding reads.
const SENSITIVITY: Sensitivity = Sensitivity {
    key: "device.map_cache.entries",
    values: super::MAP_CACHE_ENTRIES,
    range: super::MAP_CACHE_RANGE,
    mechanism: "Each 4 KiB map page translates 4 MiB, so the 1 GiB file needs 256 of them. Ascending reads use each map page four times in a row and the forward map prefetch (§6 item 3) brings in the next one; shuffled reads miss whenever the cache holds fewer map pages than the file spans. The hybrid phones keep their whole block map in SRAM, so this setting does not apply to them.",
};

impl Finding for Stride {
    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn sensitivity(&self) -> Option<&'static Sensitivity> {
        Some(&SENSITIVITY)
    }
    fn pinned_verdict(&self) -> Option<&'static str> {
        Some(super::PINNED_ORDER)
    }
    fn runs(&self, _: &Registry) -> Vec<RunSpec> {
        vec![
            RunSpec::new("sorted-stride.toml", &[]).on_benchmark_fs(),
            RunSpec::new("shuffled-stride.toml", &[]).on_benchmark_fs(),
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
            checks: vec![Check::predicted(
                "shuffled / sorted time to finish > 1",
                Side::Above(1.0),
                speedup,
            )],
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
