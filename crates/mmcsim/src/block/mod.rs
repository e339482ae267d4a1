//! The generic block layer: bios become requests (merging, plugging,
//! `nr_requests`), the scheduler orders them, and the driver pulls them from
//! the dispatch list (reference io-schedulers.md §1).
//!
//! Contract with the simulator core:
//! * The host calls [`BlockLayer::submit_bio`] (with `plugged` when the
//!   submitting thread holds a plug) and [`BlockLayer::finish_plug`].
//! * The driver pulls with [`BlockLayer::fetch`], then calls
//!   [`BlockLayer::activate`] when it starts the request and
//!   [`BlockLayer::complete`] when the device is done; completion hands the
//!   bios back so their owners can be woken.
//! * The driver gives back a fetched request it stopped (or had prepared)
//!   for an urgent one with [`BlockLayer::reinsert`].
//! * The scheduler's timer is read with [`BlockLayer::timer`]; the core calls
//!   [`BlockLayer::on_timer`] at that time. After any call the core may
//!   `fetch` again (the kernel's "run queue").
//!
//! Submission path (§1.1), per bio: FLUSH/FUA bypass the scheduler (dispatch
//! list tail, soft barrier) and never merge; a plugged bio tries back/front
//! merges with its thread's plug list; then the one-hit `last_merge`, the
//! end-sector hash (back merge) and the scheduler's `merge_lookup` (front
//! merge); after a bio back merge the request tries to absorb `latter(rq)`,
//! after a front merge to be absorbed by `former(rq)`. Otherwise a request is
//! allocated (`nr_requests`, §1.2) and goes to the plug list or the
//! scheduler.
//!
//! `nr_requests` (§1.2): sync and async allocations are counted from
//! allocation to completion. The batcher rule is modelled: the first thread
//! to find its class full becomes a batcher and may allocate up to 32 more
//! (`BLK_BATCH_REQ`) within `HZ/50`; so does a thread woken from the wait
//! queue. Other bios wait in a FIFO per class (their thread's plug is flushed,
//! as `io_schedule` does); one waiter is woken each time a request of the
//! class frees while `count + 1 <= nr_requests`, and is admitted unplugged
//! into the scheduler without retrying merges (like a task woken in
//! `get_request_wait`). Bios a thread submits while it has a bio waiting are
//! held back in submission order and resubmitted (with merging) once it is
//! admitted. `may_queue` = Must passes the full check; the hard cap is
//! 1.5 × `nr_requests`.

mod alloc;
pub mod completion;
mod dispatch;
mod merge;
pub mod params;
mod plug;
pub mod request;
mod rqhash;
mod stage;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use serde::Serialize;

pub use completion::{Completion, EndedBios};
pub use params::QueueParams;
use request::{Bio, BioId, Request, RqId, NIL};
pub use stage::{split_bio, Accounting, BlockEvent, BlockEvents, BlockStage};

use mmcsim_elevator::{Elevator, SchedParams, Slab};
use rqhash::RqHash;

use crate::types::{Ns, Op};

/// `BLK_MAX_REQUEST_COUNT`: a plug list holding this many requests is
/// flushed before the next one is added.
pub const BLK_MAX_REQUEST_COUNT: usize = 16;
/// `BLK_BATCH_REQ`: requests a batcher may allocate past a full queue.
pub const BLK_BATCH_REQ: u32 = 32;

/// Request went through the scheduler (`REQ_SORTED`).
const F_SORTED: u8 = 1;

/// Counters of the block layer, for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BlockStats {
    /// Bios submitted.
    pub bios: u64,
    /// Requests allocated (one per bio that did not merge).
    pub requests_allocated: u64,
    /// Bios back-merged into a request in the scheduler (`last_merge` or
    /// hash).
    pub back_merges: u64,
    /// Bios front-merged into a request in the scheduler (`last_merge` or
    /// the scheduler's lookup).
    pub front_merges: u64,
    /// Bios merged (back or front) into a request on the thread's plug list.
    pub plug_merges: u64,
    /// Request–request merges (after a bio merge via `former`/`latter`, and
    /// whole-request merges at plug flush).
    pub request_merges: u64,
    /// Bios that had to wait for a free request (entered the wait queue).
    pub alloc_waits: u64,
    /// Largest number of requests allocated at once (sync + async).
    pub max_queued: u64,
    /// Held-back bios resubmitted after their thread was admitted: an
    /// operation count (not in the report) that guards the linear cost of
    /// draining an overload backlog.
    #[serde(skip)]
    pub held_resubmits: u64,
    /// Calls into the scheduler's operations that are given the request
    /// table (every `Elevator` op but the flag queries): an operation
    /// count (not in the report).
    #[serde(skip)]
    pub elevator_calls: u64,
}

/// Per-thread state: plug list, batching (`io_context`), allocation wait.
#[derive(Clone, Debug)]
struct ThreadState {
    /// Requests on the plug list, in submission order.
    plug: Vec<RqId>,
    /// `nr_batch_requests`.
    nr_batch: u32,
    /// `last_waited`, jiffies.
    last_waited: u64,
    /// A bio of this thread waits for a request.
    blocked: bool,
    /// Bios submitted while blocked (chained through `bio_next`).
    held: BioQueue,
}

impl Default for ThreadState {
    fn default() -> Self {
        ThreadState {
            plug: Vec::with_capacity(BLK_MAX_REQUEST_COUNT),
            nr_batch: 0,
            last_waited: 0,
            blocked: false,
            held: BioQueue::default(),
        }
    }
}

/// A FIFO of bios chained through the block layer's `bio_next` table.
#[derive(Clone, Copy, Debug)]
struct BioQueue {
    head: BioId,
    tail: BioId,
    len: u32,
}

impl Default for BioQueue {
    fn default() -> Self {
        BioQueue {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl BioQueue {
    fn push_back(&mut self, next: &mut [BioId], b: BioId) {
        next[b as usize] = NIL;
        if self.tail == NIL {
            self.head = b;
        } else {
            next[self.tail as usize] = b;
        }
        self.tail = b;
        self.len += 1;
    }

    fn push_front(&mut self, next: &mut [BioId], b: BioId) {
        next[b as usize] = self.head;
        if self.head == NIL {
            self.tail = b;
        }
        self.head = b;
        self.len += 1;
    }

    fn pop_front(&mut self, next: &mut [BioId]) -> Option<BioId> {
        if self.head == NIL {
            return None;
        }
        let b = self.head;
        self.head = next[b as usize];
        if self.head == NIL {
            self.tail = NIL;
        }
        next[b as usize] = NIL;
        self.len -= 1;
        Some(b)
    }
}

/// Builds a [`SchedCtx`] from the block layer's fields (disjoint borrows, so
/// `self.elevator` stays usable).
macro_rules! ctx {
    (ref $s:ident, $now:expr) => {
        &mmcsim_elevator::SchedCtx::new(
            {
                $s.stats.elevator_calls += 1;
                $now
            },
            &mut $s.rqs,
            $s.in_driver,
            &mut $s.timer,
        )
    };
    ($s:ident, $now:expr) => {
        &mut mmcsim_elevator::SchedCtx::new(
            {
                $s.stats.elevator_calls += 1;
                $now
            },
            &mut $s.rqs,
            $s.in_driver,
            &mut $s.timer,
        )
    };
}
pub(crate) use ctx;

/// The request queue of one block device: requests, bios, the scheduler,
/// the dispatch list, plugs and allocation limits.
pub struct BlockLayer {
    params: QueueParams,
    sched: SchedParams,
    elevator: Box<dyn Elevator>,
    /// Every live request.
    rqs: Slab<Request>,
    /// `F_*` flags by request id.
    rq_flags: Vec<u8>,
    /// Every live bio (from submission to completion).
    bios: Slab<Bio>,
    /// Next bio in a request chain or a wait queue, by bio id.
    bio_next: Vec<BioId>,
    /// The dispatch list (`q->queue_head`): the driver pulls its head.
    dispatch: VecDeque<RqId>,
    /// `q->end_sector`: end of the last request the driver took (or that was
    /// tail-appended), the boundary of `elv_dispatch_sort`.
    end_sector: u64,
    /// `q->boundary_rq`.
    boundary_rq: Option<RqId>,
    /// Back-merge hash: requests in the scheduler keyed by end sector.
    hash: RqHash,
    /// `q->last_merge`: the one-hit merge cache.
    last_merge: Option<RqId>,
    /// Allocated requests `[async, sync]` (`rl->count`).
    count: [u32; 2],
    /// `rl->starved`.
    starved: [bool; 2],
    /// `blk_queue_full` flags.
    full: [bool; 2],
    /// Congestion flags (with on/off hysteresis).
    congested: [bool; 2],
    /// Bios waiting for a request, per class.
    wait: [BioQueue; 2],
    /// Wake-ups issued to `wait[c]` and not yet processed.
    pending_wake: [u32; 2],
    /// Per-thread state, by thread index.
    threads: Vec<ThreadState>,
    /// Requests in the driver `[async, sync]`.
    in_driver: [u32; 2],
    /// The scheduler's armed timer.
    timer: Option<Ns>,
    /// `q->notified_urgent`: the driver was told of the urgent request
    /// the scheduler holds; cleared when an urgent request completes.
    notified_urgent: bool,
    /// The scheduler keeps a `None` from `dispatch` until it is given a
    /// request, a timer or a tunable ([`Elevator::none_is_stable`]).
    none_is_stable: bool,
    /// `dispatch` answered `None` and, by that promise, would again.
    sched_dry: bool,
    stats: BlockStats,
}

impl BlockLayer {
    /// A queue with attributes `params`, scheduler `elevator`, created for
    /// platform `sched` (its `hz` drives jiffies-based rules).
    pub fn new(params: QueueParams, elevator: Box<dyn Elevator>, sched: SchedParams) -> BlockLayer {
        let cap = (params.nr_requests as usize * 3).max(64);
        let none_is_stable = elevator.none_is_stable();
        BlockLayer {
            params,
            sched,
            elevator,
            rqs: Slab::with_capacity(cap),
            rq_flags: vec![0; cap],
            bios: Slab::with_capacity(cap * 4),
            bio_next: vec![NIL; cap * 4],
            dispatch: VecDeque::with_capacity(cap),
            end_sector: 0,
            boundary_rq: None,
            hash: RqHash::with_capacity(cap),
            last_merge: None,
            count: [0; 2],
            starved: [false; 2],
            full: [false; 2],
            congested: [false; 2],
            wait: [BioQueue::default(); 2],
            pending_wake: [0; 2],
            threads: Vec::new(),
            in_driver: [0; 2],
            timer: None,
            notified_urgent: false,
            none_is_stable,
            sched_dry: false,
            stats: BlockStats::default(),
        }
    }

    /// The queue attributes.
    pub fn params(&self) -> &QueueParams {
        &self.params
    }

    /// The platform parameters (`hz`, non-rotational) the queue was made
    /// with.
    pub fn sched_params(&self) -> &SchedParams {
        &self.sched
    }

    /// The request `rq` (live from allocation to completion).
    pub fn request(&self, rq: RqId) -> &Request {
        &self.rqs[rq]
    }

    /// The bio `bio` (live from submission to completion).
    pub fn bio(&self, bio: BioId) -> &Bio {
        &self.bios[bio]
    }

    /// The scheduler's armed timer (absolute ns), if any.
    pub fn timer(&self) -> Option<Ns> {
        self.timer
    }

    /// The scheduler's timer time was reached: clears it and calls the
    /// scheduler's `on_timer` (which may re-arm it). The caller then runs the
    /// queue (`fetch`).
    pub fn on_timer(&mut self, now: Ns) {
        self.timer = None;
        self.sched_dry = false;
        self.elevator.on_timer(ctx!(self, now));
    }

    /// Writeback / read-ahead congestion of a class (`sync` true = sync
    /// requests): set when an allocation finds count + 1 ≥ nr − nr/8 + 1
    /// (113 at 128), cleared when a free leaves count < nr − nr/8 − nr/16 − 1
    /// (103 at 128).
    pub fn congested(&self, sync: bool) -> bool {
        self.congested[sync as usize]
    }

    /// Requests of a class allocated and not yet completed (`rl->count`).
    pub fn allocated(&self, sync: bool) -> u32 {
        self.count[sync as usize]
    }

    /// True while anything is on a plug list, in the scheduler, on the
    /// dispatch list or waiting for a request.
    pub fn has_pending(&self) -> bool {
        !self.dispatch.is_empty()
            || self.elevator.has_work()
            || self.wait.iter().any(|w| w.len > 0)
            || self
                .threads
                .iter()
                .any(|t| !t.plug.is_empty() || t.held.len > 0)
    }

    /// Requests on the dispatch list (not yet taken by the driver).
    pub fn dispatch_len(&self) -> usize {
        self.dispatch.len()
    }

    /// Requests the driver has activated and not yet completed.
    pub fn in_driver(&self) -> u32 {
        self.in_driver[0] + self.in_driver[1]
    }

    /// The scheduler.
    pub fn elevator(&self) -> &dyn Elevator {
        self.elevator.as_ref()
    }

    /// The scheduler, mutably (tunables).
    pub fn elevator_mut(&mut self) -> &mut dyn Elevator {
        self.sched_dry = false;
        self.elevator.as_mut()
    }

    /// The urgent-request check of `__blk_run_queue`: true (once, until an
    /// urgent request completes) when the scheduler reports an urgent
    /// request ([`Elevator::is_urgent`]), so the driver is notified.
    pub fn notify_urgent(&mut self) -> bool {
        if self.notified_urgent || self.elevator.is_urgent() != Some(true) {
            return false;
        }
        self.notified_urgent = true;
        true
    }

    /// Counters so far.
    pub fn stats(&self) -> BlockStats {
        self.stats
    }

    /// Marks that `thread` holds a plug (`blk_start_plug`). Plugged bios are
    /// submitted with `plugged = true`.
    pub fn start_plug(&mut self, thread: u32) {
        self.thread_mut(thread);
    }

    /// Submits `bio` at `now`. `plugged`: the submitting thread
    /// (`bio.thread`) holds a plug. Reads are always sync.
    pub fn submit_bio(&mut self, now: Ns, mut bio: Bio, plugged: bool) {
        self.stats.bios += 1;
        if bio.op == Op::Read {
            bio.sync = true;
        }
        let b = self.bios.insert(bio);
        if b as usize >= self.bio_next.len() {
            self.bio_next.resize(b as usize + 1, NIL);
        }
        self.bio_next[b as usize] = NIL;
        self.submit_id(now, b, plugged);
        self.run_wakeups(now);
    }

    /// Flushes `thread`'s plug list into the scheduler (`blk_finish_plug`).
    pub fn finish_plug(&mut self, now: Ns, thread: u32) {
        self.flush_plug(now, thread);
        self.run_wakeups(now);
    }

    /// The state of `thread`, created on first use.
    fn thread_mut(&mut self, thread: u32) -> &mut ThreadState {
        let i = thread as usize;
        if i >= self.threads.len() {
            self.threads.resize_with(i + 1, ThreadState::default);
        }
        &mut self.threads[i]
    }

    fn flags(&self, rq: RqId) -> u8 {
        self.rq_flags.get(rq as usize).copied().unwrap_or(0)
    }

    fn sorted(&self, rq: RqId) -> bool {
        self.flags(rq) & F_SORTED != 0
    }

    /// Allocates a request for bio `b` (its allocation is already counted).
    fn new_request(&mut self, now: Ns, b: BioId) -> RqId {
        let bio = self.bios[b];
        let mut r = Request::from_bio(&bio, b, now);
        r.sync = bio.sync || bio.op == Op::Read;
        let rq = self.rqs.insert(r);
        if rq as usize >= self.rq_flags.len() {
            self.rq_flags.resize(rq as usize + 1, 0);
        }
        self.rq_flags[rq as usize] = 0;
        self.stats.requests_allocated += 1;
        rq
    }

    /// `__elv_add_request(ELEVATOR_INSERT_SORT)`: into the back-merge hash
    /// (and `last_merge` if empty), then the scheduler's `add_request`.
    fn add_sorted(&mut self, now: Ns, rq: RqId) {
        self.rq_flags[rq as usize] |= F_SORTED;
        if rq_mergeable(&self.rqs[rq]) {
            let end = self.rqs[rq].end();
            self.hash.insert(end, rq);
            if self.last_merge.is_none() {
                self.last_merge = Some(rq);
            }
        }
        self.sched_dry = false;
        self.elevator.add_request(ctx!(self, now), rq);
    }

    /// `ELEVATOR_INSERT_FLUSH`: a FLUSH/FUA request goes to the dispatch
    /// list's tail, bypassing the scheduler; it is a soft barrier there.
    fn insert_flush(&mut self, now: Ns, rq: RqId) {
        self.rqs[rq].dispatch_ns = Some(now);
        self.dispatch.push_back(rq);
    }

    /// Inserts a request outside any plug.
    fn insert_unplugged(&mut self, now: Ns, rq: RqId) {
        if is_barrier(&self.rqs[rq]) {
            self.insert_flush(now, rq);
        } else {
            self.add_sorted(now, rq);
        }
    }

    /// Frees request `rq` (its bios have been moved or handed back) and its
    /// allocation.
    fn free_request(&mut self, rq: RqId) {
        if self.last_merge == Some(rq) {
            self.last_merge = None;
        }
        if self.boundary_rq == Some(rq) {
            self.boundary_rq = None;
        }
        self.hash.remove(rq);
        let r = self.rqs.remove(rq);
        self.rq_flags[rq as usize] = 0;
        self.freed_request(r.sync as usize);
    }
}

/// FLUSH and FUA requests never merge and act as barriers
/// (`REQ_NOMERGE_FLAGS`, `REQ_SOFTBARRIER`).
fn is_barrier(rq: &Request) -> bool {
    rq.op == Op::Flush || rq.fua
}

/// FLUSH and FUA bios never merge.
fn bio_is_barrier(bio: &Bio) -> bool {
    bio.op == Op::Flush || bio.fua
}

/// `rq_mergeable`: not flagged NOMERGE and not a barrier.
fn rq_mergeable(rq: &Request) -> bool {
    !rq.nomerge && !is_barrier(rq)
}
