//! A researcher's own I/O scheduler, run through exactly the same code
//! path as `simctl`.
//!
//! SSTF (shortest seek time first): always dispatch the queued request
//! whose start sector is nearest to where the last dispatched request
//! ended. It needs only the scheduler API, `mmcsim_elevator`: it implements
//! the `Elevator` trait, is registered under the name `sstf` in
//! `simctl::builtin_registry()` beside the built-in schedulers, and the
//! whole `simctl` command line is reused:
//!
//! ```sh
//! cargo run --release --example custom_scheduler -- \
//!     compare configs/scenarios/rand16-128m.toml --schedulers sstf,deadline
//! ```

use mmcsim_elevator::{
    Elevator, MergeKind, RqId, SchedCtx, SchedParams, SectorTree, TunableError, TunableInfo,
    TunableValue,
};
use std::process::ExitCode;

/// Shortest seek time first, with an optional cap on how long a request
/// may be passed over.
struct Sstf {
    /// Queued requests by start sector.
    tree: SectorTree,
    /// End sector of the last dispatched request (the "head").
    head: u64,
    /// `max_wait_ms` tunable: a request older than this is served first
    /// (0 = never), so SSTF cannot starve a far-away request forever.
    max_wait_ms: u64,
}

impl Sstf {
    fn new(_p: &SchedParams) -> Sstf {
        Sstf {
            tree: SectorTree::new(),
            head: 0,
            max_wait_ms: 0,
        }
    }
}

impl Elevator for Sstf {
    fn name(&self) -> &str {
        "sstf"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        self.tree.insert(ctx.rq(rq).sector, rq);
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            // The start sector moved: re-key the request.
            self.tree.reposition(rq, ctx.rq(rq).sector);
        }
    }

    fn merge_requests(&mut self, _ctx: &mut SchedCtx, _rq: RqId, next: RqId) {
        self.tree.remove(next);
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        if self.tree.is_empty() {
            return None;
        }
        // An over-age request goes first, if the cap is on.
        let cap_ns = self.max_wait_ms * 1_000_000;
        let oldest = self
            .tree
            .iter()
            .map(|(_, id)| id)
            .min_by_key(|&id| (ctx.rq(id).start_ns, id));
        let pick = match oldest {
            Some(id) if cap_ns > 0 && ctx.now.saturating_sub(ctx.rq(id).start_ns) >= cap_ns => id,
            _ => {
                // Nearest neighbour on either side of the head.
                let up = self.tree.ceiling(self.head);
                let down = self.tree.floor(self.head);
                match (up, down) {
                    (Some(u), Some(d)) => {
                        let du = ctx.rq(u).sector - self.head;
                        let dd = self.head - ctx.rq(d).sector;
                        if du <= dd {
                            u
                        } else {
                            d
                        }
                    }
                    (Some(u), None) => u,
                    (None, Some(d)) => d,
                    (None, None) => return None,
                }
            }
        };
        self.tree.remove(pick);
        self.head = ctx.rq(pick).end();
        Some(pick)
    }

    fn has_work(&self) -> bool {
        !self.tree.is_empty()
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        vec![TunableInfo {
            name: "max_wait_ms",
            value: self.max_wait_ms.to_string(),
            default: "0".into(),
            unit: "ms",
            help: "serve a request first once it has waited this long (0 = pure SSTF)",
        }]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        match name {
            "max_wait_ms" => {
                self.max_wait_ms = TunableValue::new(name, value).u64(0, 60_000)?;
                Ok(())
            }
            _ => Err(TunableError::unknown("sstf", name, &self.tunables())),
        }
    }
}

fn main() -> ExitCode {
    let mut registry = simctl::builtin_registry();
    registry.register(
        "sstf",
        "shortest seek time first (example of a researcher's own scheduler)",
        Box::new(|p| Box::new(Sstf::new(p))),
    );
    simctl::run_cli(std::env::args_os(), &registry)
}
