//! Finding 4: in the MMC-level request log, a request whose start address
//! is above the previous one's is served faster than one below it (read
//! buffer and mapping-cache prefetch run forward only).

use super::{rand16_runs, scheduler_names};
use crate::plot::reqlog;
use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{Finding, Measure, Quantity};
use crate::reproduce::runner::{RunOutput, RunSpec};
use anyhow::{Context, Result};
use mmcsim::sched::Registry;

/// Address difference vs device response time.
pub struct AddrDiff;

/// The scheduler whose request log is analysed: the one finding 3
/// favours, whose ascending batches give both directions of difference.
const SCHEDULER: &str = "deadline";

impl Finding for AddrDiff {
    fn number(&self) -> u32 {
        4
    }
    fn title(&self) -> &'static str {
        "Address difference vs device response time"
    }
    fn source(&self) -> &'static str {
        "Seed papers on I/O scheduling of Android eMMC (Nexus S, Nexus 7), Fig. 4 and 5"
    }
    fn claim(&self) -> &'static str {
        "requests whose address is above the previous request's (positive difference) are served faster than those below it"
    }
    fn csv_header(&self) -> &'static [&'static str] {
        &["address_difference_sectors", "device_time_us"]
    }
    fn runs(&self, registry: &Registry) -> Vec<RunSpec> {
        rand16_runs(registry)
    }
    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let names = scheduler_names(runs);
        let run = names
            .iter()
            .position(|n| n == SCHEDULER)
            .map(|i| runs[i])
            .with_context(|| format!("no run under `{SCHEDULER}`"))?;
        let rows = run
            .log
            .as_deref()
            .with_context(|| format!("{}: no request log", run.label))?;
        let points = reqlog::address_differences(rows);
        let ((up, nup), (down, ndown)) = reqlog::direction_means(&points);
        let pass = nup > 0 && ndown > 0 && up < down;
        let csv = points
            .iter()
            .map(|p| vec![p.diff_sectors.to_string(), format!("{}", p.device_us)])
            .collect();
        let mut scatter = crate::plot::inputs::address_scatter(SCHEDULER, rows);
        scatter.title = format!("16 random readers under {SCHEDULER}");
        Ok(Measure {
            pass,
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
