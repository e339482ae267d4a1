//! noop: one FIFO, merging only (reference io-schedulers.md §2).
//!
//! Requests are dispatched in insertion order and go through the dispatch
//! list's one-way elevator insertion (`elv_dispatch_sort`). Merges: generic
//! back merges (hash), front merges only through the one-hit `last_merge`
//! cache, and request–request merges with FIFO neighbours (the block layer
//! merges them only if contiguous). No tunables.

use mmcsim_elevator::{Elevator, FifoList, RqId, SchedCtx, SchedParams, TunableError, TunableInfo};

/// The noop elevator (`noop-iosched.c`).
#[derive(Clone, Debug, Default)]
pub struct Noop {
    /// Requests in insertion order.
    queue: FifoList,
}

impl Noop {
    /// A new, empty noop scheduler (`hz` and rotation do not matter to it).
    pub fn new(_params: &SchedParams) -> Self {
        Noop {
            queue: FifoList::with_capacity(256),
        }
    }
}

impl Elevator for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn add_request(&mut self, _ctx: &mut SchedCtx, rq: RqId) {
        self.queue.push_back(rq);
    }

    fn merge_requests(&mut self, _ctx: &mut SchedCtx, _rq: RqId, next: RqId) {
        self.queue.remove(next);
    }

    fn former(&self, _ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.queue.prev(rq)
    }

    fn latter(&self, _ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.queue.next(rq)
    }

    fn dispatch(&mut self, _ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        self.queue.pop_front()
    }

    fn dispatch_sort(&self) -> bool {
        true
    }

    fn none_is_stable(&self) -> bool {
        // `None` only when nothing is queued (no idling, no state change).
        true
    }

    fn has_work(&self) -> bool {
        !self.queue.is_empty()
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        Vec::new()
    }

    fn set_tunable(&mut self, name: &str, _value: &str) -> Result<(), TunableError> {
        Err(TunableError::unknown("noop", name, &[]))
    }
}
