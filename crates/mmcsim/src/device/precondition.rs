//! Preconditioning: bring a fresh device to an aged, steady state before a
//! measurement, without timing (same FTL code, NAND operations dropped).
//!
//! Sequential fill of `fill_fraction` of the user LPNs, then uniform random
//! 4 KiB overwrites of the filled range. The overwrites run in windows of
//! the mapping's renewal period ([`Mapping::renewal_window`](super::ftl::Mapping::renewal_window):
//! a hybrid FTL's random log pool) or, for page-level schemes whose GC
//! spans the whole range, of 1/16 of the filled pages; GC is in steady
//! state once it has run and the window WAF changed by at most 2 % over
//! two consecutive windows. The run stops there or at
//! `max_overwrite_factor` × filled pages.

use super::{Emmc, Precondition};
use crate::engine::component_rng;
use rand::Rng;
use serde::Serialize;

/// What preconditioning did.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
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

/// Random overwrites drawn ahead of time, so the memory the next ones
/// touch (their L2P entries and oracle versions, scattered over a large
/// device) is loaded while earlier ones are written.
const AHEAD: usize = 64;

/// Untimed host writes of preconditioning, straight to the FTL: the same
/// stripe pages the write buffer would assemble (entries in write order, a
/// stripe page programmed once full, a partial one at the end), without
/// the buffer's per-LPN residency counts or the read-buffer invalidation
/// of erased blocks — preconditioning resets both buffers when it ends.
struct Filler {
    stripe: Vec<(u32, u32)>,
    slots: usize,
}

impl Filler {
    /// Takes over any entries already pending in `d`'s write buffer.
    fn new(d: &mut Emmc) -> Filler {
        let slots = d.geo.stripe_slots() as usize;
        let mut stripe = Vec::with_capacity(slots);
        d.wbuf.take_pending(&mut stripe, None);
        Filler { stripe, slots }
    }

    /// One host write of `lpn` (a fresh oracle version).
    #[inline]
    fn write(&mut self, d: &mut Emmc, lpn: u32) {
        let v = d.oracle.write(lpn);
        self.stripe.push((lpn, v));
        if self.stripe.len() >= self.slots {
            self.program(d);
        }
    }

    /// Programs the entries collected (a partial stripe page is padded).
    fn program(&mut self, d: &mut Emmc) {
        if self.stripe.is_empty() {
            return;
        }
        d.ops.clear();
        d.ftl.write(&self.stripe, &mut d.ops);
        self.stripe.clear();
    }
}

/// Reads what writing `lpns` will touch first (a hint: the values are
/// discarded), so the loads overlap instead of missing one at a time.
fn touch(d: &Emmc, lpns: &[u32]) {
    let expected = d.oracle.expected();
    let mut h = 0u32;
    for &l in lpns {
        h ^= expected[l as usize] ^ d.ftl.lookup(l).unwrap_or(0);
    }
    std::hint::black_box(h);
}

pub(super) fn run(d: &mut Emmc, p: &Precondition, seed: u64) -> PreconditionSummary {
    d.reset_stats();
    let mut f = Filler::new(d);
    let fill = (d.ftl.user_lpns() as f64 * p.fill_fraction.clamp(0.0, 1.0)).floor() as u32;
    for lpn in 0..fill {
        f.write(d, lpn);
    }
    let mut overwritten = 0u64;
    let mut steady = false;
    let mut last_waf: Option<f64> = None;
    if p.steady_state && fill > 0 {
        let mut rng = component_rng(seed, "device.precondition");
        let max = (fill as f64 * p.max_overwrite_factor.max(0.0)) as u64;
        let window = d
            .ftl
            .renewal_window()
            .unwrap_or(fill as u64 / 16)
            .max(d.geo.stripe_slots() as u64 * 64);
        let mut stable = 0;
        let mut prog0 = d.ftl.stats().programmed_slots;
        let mut in_window = 0u64;
        let mut ahead = [0u32; AHEAD];
        'overwrite: while overwritten < max {
            let n = (max - overwritten).min(AHEAD as u64) as usize;
            for l in &mut ahead[..n] {
                *l = rng.random_range(0..fill);
            }
            touch(d, &ahead[..n]);
            for &lpn in &ahead[..n] {
                f.write(d, lpn);
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
                        break 'overwrite;
                    }
                }
            }
        }
    }
    f.program(d);
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
    // A victim incremental GC has part-way collected is finished, so the
    // measurement (and a saved state) starts from whole stripes.
    d.ops.clear();
    d.ftl.settle_gc(&mut d.ops);
    d.reset_timelines();
    d.reset_stats();
    summary
}
