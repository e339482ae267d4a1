//! none: the blk-mq "no scheduler" (reference io-schedulers.md §11).
//!
//! Requests leave in insertion order (FIFO pass-through: no sorting, no
//! dispatch-sort); merging only through the generic paths of the block
//! layer (the back-merge hash and the one-hit `last_merge` cache) — no
//! front-merge lookup and no request–request merging. No tunables.

use mmcsim_elevator::{Elevator, FifoList, RqId, SchedCtx, SchedParams, TunableError, TunableInfo};

/// The blk-mq `none` scheduler.
#[derive(Clone, Debug, Default)]
pub struct NoneSched {
    queue: FifoList,
}

impl NoneSched {
    /// A new, empty pass-through queue.
    pub fn new(_params: &SchedParams) -> Self {
        NoneSched {
            queue: FifoList::with_capacity(256),
        }
    }
}

impl Elevator for NoneSched {
    fn name(&self) -> &str {
        "none"
    }

    fn blk_mq(&self) -> bool {
        true
    }

    fn add_request(&mut self, _ctx: &mut SchedCtx, rq: RqId) {
        self.queue.push_back(rq);
    }

    fn merge_requests(&mut self, _ctx: &mut SchedCtx, _rq: RqId, next: RqId) {
        self.queue.remove(next);
    }

    fn dispatch(&mut self, _ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        self.queue.pop_front()
    }

    fn has_work(&self) -> bool {
        !self.queue.is_empty()
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        Vec::new()
    }

    fn set_tunable(&mut self, name: &str, _value: &str) -> Result<(), TunableError> {
        Err(TunableError::unknown("none", name, &[]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, drain, layer, swrite};
    use mmcsim_elevator::types::Op;

    #[test]
    fn dispatch_order_is_insertion_order() {
        let mut b = layer(1000, |p| Box::new(NoneSched::new(p)));
        for (i, s) in [9000u64, 100, 5000, 42, 7000].iter().enumerate() {
            let x = if i % 2 == 0 {
                bio(Op::Read, *s, 1)
            } else {
                swrite(*s, 2)
            };
            b.submit_bio(0, x, false);
        }
        let order: Vec<u64> = drain(&mut b, 1).iter().map(|r| r.sector).collect();
        assert_eq!(order, vec![9000, 100, 5000, 42, 7000]);
    }

    #[test]
    fn generic_back_merge_still_happens() {
        let mut b = layer(1000, |p| Box::new(NoneSched::new(p)));
        b.submit_bio(0, bio(Op::Read, 800, 1), false);
        b.submit_bio(0, bio(Op::Read, 808, 1), false);
        let rs = drain(&mut b, 1);
        assert_eq!(rs.len(), 1);
        assert_eq!(rs[0].sectors, 16);
    }
}
