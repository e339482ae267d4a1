//! Preconditioning: bring a fresh device to an aged, steady state before a
//! measurement, without timing (same FTL code, NAND operations dropped).
//!
//! Sequential fill of `fill_fraction` of the user LPNs, then uniform random
//! 4 KiB overwrites of the filled range. The overwrites run in windows of
//! 1/16 of the filled pages; GC is in steady state once it has run and the
//! window WAF changed by at most 2 % over two consecutive windows. The run
//! stops there or at `max_overwrite_factor` × filled pages.

use super::{Emmc, Precondition};
use crate::engine::component_rng;
use rand::Rng;
use serde::Serialize;

/// What preconditioning did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PreconditionSummary {
    /// LPNs written by the sequential fill.
    pub pages_filled: u64,
    /// Random 4 KiB overwrites performed.
    pub pages_overwritten: u64,
    /// Victim blocks GC collected during preconditioning.
    pub gc_runs: u64,
    /// WAF of the last window (of the whole run when no window completed).
    pub final_waf: f64,
    /// True when the window WAF settled before the overwrite limit.
    pub steady_reached: bool,
}

pub(super) fn run(d: &mut Emmc, p: &Precondition, seed: u64) -> PreconditionSummary {
    d.reset_stats();
    let fill = (d.ftl.user_lpns() as f64 * p.fill_fraction.clamp(0.0, 1.0)).floor() as u32;
    for lpn in 0..fill {
        d.write_lpn_untimed(lpn);
    }
    let mut overwritten = 0u64;
    let mut steady = false;
    let mut last_waf: Option<f64> = None;
    if p.steady_state && fill > 0 {
        let mut rng = component_rng(seed, "device.precondition");
        let max = (fill as f64 * p.max_overwrite_factor.max(0.0)) as u64;
        let window = (fill as u64 / 16).max(d.geo.stripe_slots() as u64 * 64);
        let mut stable = 0;
        let mut prog0 = d.ftl.stats().programmed_slots;
        let mut in_window = 0u64;
        while overwritten < max {
            let lpn = rng.random_range(0..fill);
            d.write_lpn_untimed(lpn);
            overwritten += 1;
            in_window += 1;
            if in_window == window {
                let prog = d.ftl.stats().programmed_slots;
                let waf = (prog - prog0) as f64 / window as f64;
                let settled = d.ftl.stats().gc_runs > 0
                    && last_waf.is_some_and(|w| (waf - w).abs() <= 0.02 * w);
                stable = if settled { stable + 1 } else { 0 };
                last_waf = Some(waf);
                prog0 = prog;
                in_window = 0;
                if stable >= 2 {
                    steady = true;
                    break;
                }
            }
        }
    }
    if !d.wbuf.pending().is_empty() {
        d.program_pending_untimed();
    }
    let f = d.ftl.stats();
    let total_waf = if fill as u64 + overwritten == 0 {
        0.0
    } else {
        f.programmed_slots as f64 / (fill as u64 + overwritten) as f64
    };
    let summary = PreconditionSummary {
        pages_filled: fill as u64,
        pages_overwritten: overwritten,
        gc_runs: f.gc_runs,
        final_waf: last_waf.unwrap_or(total_waf),
        steady_reached: steady,
    };
    d.reset_timelines();
    d.reset_stats();
    summary
}
