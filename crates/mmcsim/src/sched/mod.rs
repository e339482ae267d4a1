//! I/O schedulers ("elevators"), shaped like the Linux elevator operations
//! so a kernel scheduler ports one hook at a time.
//!
//! Contract:
//! * The block layer owns every [`Request`]; a scheduler holds request ids
//!   and reads (or, for `fifo_time` / `elv_priv`, writes) the requests
//!   through [`SchedCtx::rqs`]. It never sees the device.
//! * `add_request` hands a request to the scheduler; `dispatch` takes one
//!   back out (and forgets it). A request absorbed by a merge leaves through
//!   `merge_requests`.
//! * Time comes only from [`SchedCtx::now`]; a scheduler that wants to be
//!   called back later (idling, expiry) arms its one timer with
//!   [`SchedCtx::set_timer`]; the block layer calls [`Elevator::on_timer`]
//!   then and runs the queue.
//! * Tunables are set by their sysfs names (`queue/iosched/<name>`), in
//!   sysfs units (milliseconds for times), validated.

pub mod bfq;
pub mod bfq_mq;
pub mod cfq;
pub mod deadline;
pub mod fifo_list;
pub mod fiops;
pub mod kyber;
pub mod mq_deadline;
pub mod none;
pub mod noop;
mod registry;
pub mod row;
pub mod sector_tree;
pub mod sio;
#[cfg(test)]
mod testutil;
pub mod tunable;
pub mod vr;
pub mod zen;

pub use deadline::Deadline;
pub use fifo_list::FifoList;
pub use fiops::Fiops;
pub use noop::Noop;
pub use registry::{Factory, Registry};
pub use row::Row;
pub use sector_tree::SectorTree;
pub use sio::Sio;
pub use tunable::{TunableInfo, TunableValue};
pub use vr::Vr;
pub use zen::Zen;

use crate::block::request::{Bio, Request, RqId};
use crate::engine::Slab;
use crate::types::{Ns, NS_PER_S};

/// Facts about the queue and platform a scheduler is created with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedParams {
    /// Kernel tick rate `HZ`: tunables are held in jiffies, so integer
    /// division by `HZ` changes defaults (e.g. `HZ/125` = 0 at HZ=100).
    pub hz: u32,
    /// The queue is flagged non-rotational (`QUEUE_FLAG_NONROT`); true for
    /// MMC.
    pub nonrot: bool,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            hz: 1000,
            nonrot: true,
        }
    }
}

impl SchedParams {
    /// Converts a jiffies count to nanoseconds at this `hz`.
    pub fn jiffies_to_ns(&self, j: u64) -> Ns {
        j * NS_PER_S / self.hz as u64
    }

    /// `msecs_to_jiffies`: milliseconds to jiffies, rounding up.
    pub fn ms_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1000)
    }

    /// `jiffies_to_msecs`: jiffies to milliseconds, rounding up.
    pub fn jiffies_to_ms(&self, j: u64) -> u64 {
        (j * 1000).div_ceil(self.hz as u64)
    }

    /// The jiffies counter at simulated time `now` (ns).
    pub fn jiffies(&self, now: Ns) -> u64 {
        ((now as u128 * self.hz as u128) / NS_PER_S as u128) as u64
    }
}

/// What a scheduler may see and touch while one of its hooks runs.
pub struct SchedCtx<'a> {
    /// Current simulated time, ns.
    pub now: Ns,
    /// All requests of the queue, by id.
    pub rqs: &'a mut Slab<Request>,
    /// Requests handed to the driver and not yet completed, split
    /// `[async, sync]` (`rq_in_driver`).
    pub in_driver: [u32; 2],
    /// The scheduler's timer: `Some(t)` = call `on_timer` at `t` ns.
    pub timer: &'a mut Option<Ns>,
}

impl SchedCtx<'_> {
    /// Arms (or re-arms) the scheduler's timer for absolute time `at` ns.
    pub fn set_timer(&mut self, at: Ns) {
        *self.timer = Some(at);
    }

    /// Cancels the scheduler's timer.
    pub fn cancel_timer(&mut self) {
        *self.timer = None;
    }

    /// The request `id`.
    pub fn rq(&self, id: RqId) -> &Request {
        &self.rqs[id]
    }
}

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
    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), String>;
}
