//! The elevator operations a scheduler implements, shaped like the Linux
//! `elevator_ops` so a kernel scheduler ports one hook at a time.

use crate::ctx::SchedCtx;
use crate::request::{Bio, RqId};
use crate::tunable::{TunableError, TunableInfo};

/// Kind of a bio merge into an existing request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeKind {
    /// The bio was appended: the request's end grew.
    Back,
    /// The bio was prepended: the request's start sector moved down.
    Front,
}

/// Answer of [`Elevator::may_queue`] (`ELV_MQUEUE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MayQueue {
    /// Allocate if under the `nr_requests` limit.
    May,
    /// Allocate even past the limit (the scheduler is waiting for it).
    Must,
    /// Do not allocate.
    No,
}

/// The elevator operations (reference io-schedulers.md §1.4).
///
/// `Any` is a supertrait so a caller that knows the concrete type (a test,
/// a researcher's tool) can downcast a `&dyn Elevator` safely.
pub trait Elevator: Send + std::any::Any {
    /// Kernel name (`noop`, `deadline`, ...).
    fn name(&self) -> &str;

    /// True for a blk-mq scheduler (`mq-deadline`, `kyber`, `bfq-mq`,
    /// `none`). Informational: every scheduler runs on either driver — on
    /// the CMDQ (blk-mq) driver the scheduler is asked for a request
    /// whenever a tag is free; on the legacy driver whenever `mmcqd` has a
    /// free slot.
    fn blk_mq(&self) -> bool {
        false
    }

    /// `elevator_add_req_fn`: a new request enters the scheduler.
    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId);

    /// `elevator_merge_fn`: a request the bio could be front-merged into
    /// (`rq.sector == bio.end()`), if the scheduler keeps a sector index.
    fn merge_lookup(&mut self, _ctx: &mut SchedCtx, _bio: &Bio) -> Option<RqId> {
        None
    }

    /// `elevator_allow_merge_fn`: may `bio` join `rq`? (CFQ-style schedulers
    /// merge only within the submitter's own queue.)
    fn allow_merge(&self, _ctx: &SchedCtx, _rq: RqId, _bio: &Bio) -> bool {
        true
    }

    /// `elevator_merged_fn`: `rq` grew by a bio; after a front merge its
    /// start sector changed and sector indexes must be updated.
    fn merged(&mut self, _ctx: &mut SchedCtx, _rq: RqId, _kind: MergeKind) {}

    /// `elevator_merge_req_fn`: `next` was merged into `rq` (which is now
    /// the union); the scheduler must forget `next`. Usually `rq` inherits
    /// the earlier FIFO time of the two.
    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId);

    /// `elevator_former_req_fn`: the request before `rq` for
    /// request-request merging (sector or FIFO neighbour), if any.
    fn former(&self, _ctx: &SchedCtx, _rq: RqId) -> Option<RqId> {
        None
    }

    /// `elevator_latter_req_fn`: the request after `rq`, if any.
    fn latter(&self, _ctx: &SchedCtx, _rq: RqId) -> Option<RqId> {
        None
    }

    /// `elevator_dispatch_fn`: choose the next request for the driver and
    /// remove it from the scheduler. `force` asks to drain everything
    /// (scheduler switch, barriers) and forbids idling. `None` means
    /// nothing now (empty, or idling with the timer armed).
    fn dispatch(&mut self, ctx: &mut SchedCtx, force: bool) -> Option<RqId>;

    /// True when the scheduler promises that once [`Elevator::dispatch`]
    /// (without `force`) has answered `None`, asking again answers `None`
    /// and changes nothing until the next [`Elevator::add_request`],
    /// [`Elevator::reinsert_request`], [`Elevator::on_timer`] or tunable
    /// change: the block layer then skips those calls (a closed loop asks
    /// an empty scheduler twice per request). False (the default): every
    /// fetch asks.
    fn none_is_stable(&self) -> bool {
        false
    }

    /// True if the dispatched request goes through the one-way elevator
    /// insertion of the dispatch list (`elv_dispatch_sort`) rather than a
    /// tail append (noop, CFQ, BFQ and ROW sort).
    fn dispatch_sort(&self) -> bool {
        false
    }

    /// `elevator_activate_req_fn`: the driver took `rq`.
    fn activate(&mut self, _ctx: &mut SchedCtx, _rq: RqId) {}

    /// `elevator_completed_req_fn`: the device finished `rq`.
    fn completed(&mut self, _ctx: &mut SchedCtx, _rq: RqId) {}

    /// `elevator_is_urgent_fn` (msm-3.4 urgent-request API): `Some(true)`
    /// when an urgent request waits in the scheduler and none is in the
    /// driver, so the block layer notifies a driver that can stop the
    /// write in flight (`q->urgent_request_fn`). `None` (the default): the
    /// scheduler has no such hook and never marks requests urgent.
    fn is_urgent(&self) -> Option<bool> {
        None
    }

    /// `elevator_reinsert_req_fn`: the driver stopped dispatched request
    /// `rq` (or gave back the one it had prepared) to serve an urgent one;
    /// put it back as if it had never been dispatched. Returns false when
    /// the scheduler has no such hook (the default): the block layer then
    /// requeues it at the head of the dispatch list, as
    /// `blk_requeue_request` does.
    fn reinsert_request(&mut self, _ctx: &mut SchedCtx, _rq: RqId) -> bool {
        false
    }

    /// `elevator_may_queue_fn` for a new request of `bio`'s kind.
    fn may_queue(&self, _ctx: &SchedCtx, _bio: &Bio) -> MayQueue {
        MayQueue::May
    }

    /// The timer armed with [`SchedCtx::set_timer`] fired.
    fn on_timer(&mut self, _ctx: &mut SchedCtx) {}

    /// True when the scheduler holds requests (`elevator_queue_empty` is
    /// the opposite).
    fn has_work(&self) -> bool;

    /// Every tunable with its current value, default and unit, in sysfs
    /// order.
    fn tunables(&self) -> Vec<TunableInfo>;

    /// Sets tunable `name` from its sysfs text `value`. Errors name the
    /// tunable, the accepted range, and (for an unknown name) the valid
    /// names.
    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError>;
}
