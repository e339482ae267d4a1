//! Finding 4: in the MMC-level request log, a request whose start address
//! is above the previous one's is served faster than one below it (read
//! buffer and mapping-cache prefetch run forward only).

use super::{rand16_runs, run_under};
use crate::plot::reqlog;
use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{
    About, Boundary, Check, Finding, Measure, Quantity, Sensitivity, Side,
};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::{Context, Result};
use mmcsim::sched::Registry;

/// Address difference vs device response time.
pub struct AddrDiff;

/// The scheduler whose request log is analysed: the one finding 3
/// favours, whose ascending batches give both directions of difference.
const SCHEDULER: &str = "deadline";

const ABOUT: About = About {
    number: 4,
    title: "Address difference vs device response time",
    source: "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 4 and 5",
    claim: "requests whose address is above the previous request's (positive difference) are served faster than those below it",
    boundary: Boundary::MmcRequest,
    csv_header: &["address_difference_sectors", "device_time_us"],
};

/// The mapping cache's size against the region this finding reads.
const SENSITIVITY: Sensitivity = Sensitivity {
    key: "device.map_cache.entries",
    values: super::MAP_CACHE_ENTRIES,
    range: super::MAP_CACHE_RANGE,
    mechanism: "After a positive address difference the next map page may already have been prefetched (§6 item 3); after a negative one it has not. That asymmetry exists only while the cache misses, i.e. while it holds fewer than the 128 MiB region's 32 map pages. The hybrid phones keep their whole block map in SRAM, so this setting does not apply to them.",
};

impl Finding for AddrDiff {
    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn sensitivity(&self) -> Option<&'static Sensitivity> {
        Some(&SENSITIVITY)
    }
    fn pinned_verdict(&self) -> Option<&'static str> {
        Some(super::PINNED_ORDER)
    }
    fn runs(&self, registry: &Registry) -> Vec<RunSpec> {
        rand16_runs(registry)
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let run = run_under(runs, SCHEDULER)?;
        let rows = run
            .log
            .as_deref()
            .with_context(|| format!("{}: no request log", run.label))?;
        let points = reqlog::address_differences(rows);
        let ((up, nup), (down, ndown)) = reqlog::direction_means(&points);
        // No request in one direction: no ratio in this seed.
        let ratio = if nup > 0 && ndown > 0 {
            down / up
        } else {
            f64::NAN
        };
        let csv = points
            .iter()
            .map(|p| vec![p.diff_sectors.to_string(), format!("{}", p.device_us)])
            .collect();
        let mut scatter = crate::plot::inputs::address_scatter(SCHEDULER, rows);
        scatter.title = format!("16 random readers under {SCHEDULER}");
        Ok(Measure {
            checks: vec![Check::predicted(
                "mean device time after a negative / after a positive address difference > 1",
                Side::Above(1.0),
                ratio,
            )],
            summary: format!(
                "mean device time {up:.1} µs after a positive difference ({nup} requests), {down:.1} µs after a negative one ({ndown} requests) under {SCHEDULER}"
            ),
            table: vec![
                Quantity::new(
                    "positive difference: mean device time (µs)",
                    "lower",
                    format!("{up:.1} (n = {nup})"),
                ),
                Quantity::new(
                    "negative difference: mean device time (µs)",
                    "higher",
                    format!("{down:.1} (n = {ndown})"),
                ),
            ],
            csv,
            panels: vec![
                Panel::Xy(scatter),
                Panel::Bars(BarPanel::amounts(
                    "Mean device time by direction",
                    "mean device time (µs)",
                    vec![("positive".into(), up), ("negative".into(), down)],
                )),
            ],
        })
    }
}
