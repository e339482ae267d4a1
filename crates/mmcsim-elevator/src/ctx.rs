//! The scheduler's window on the queue while one of its hooks runs.

use crate::request::{Request, RqId};
use crate::slab::Slab;
use crate::types::Ns;

/// What a scheduler may see and touch while one of its hooks runs: the
/// clock, the queue's requests read-only (the block layer owns them) with
/// setters for the fields the scheduler owns (`fifo_time`, `elv_priv`,
/// the `urgent` mark), and its timer.
pub struct SchedCtx<'a> {
    /// Current simulated time, ns.
    pub now: Ns,
    /// All requests of the queue, by id.
    rqs: &'a mut Slab<Request>,
    /// Requests handed to the driver and not yet completed, split
    /// `[async, sync]` (`rq_in_driver`).
    pub in_driver: [u32; 2],
    /// The scheduler's timer: `Some(t)` = call `on_timer` at `t` ns.
    timer: &'a mut Option<Ns>,
}

impl<'a> SchedCtx<'a> {
    /// The context of one hook call at `now` ns (built by the block layer,
    /// or by a test driving a scheduler directly).
    #[inline]
    pub fn new(
        now: Ns,
        rqs: &'a mut Slab<Request>,
        in_driver: [u32; 2],
        timer: &'a mut Option<Ns>,
    ) -> SchedCtx<'a> {
        SchedCtx {
            now,
            rqs,
            in_driver,
            timer,
        }
    }

    /// The scheduler's armed timer (absolute ns), if any.
    #[inline]
    pub fn timer(&self) -> Option<Ns> {
        *self.timer
    }

    /// Sets request `id`'s `fifo_time` (`rq->fifo_time`: its deadline or
    /// FIFO time), ns.
    #[inline]
    pub fn set_fifo_time(&mut self, id: RqId, ns: Ns) {
        self.rqs[id].fifo_time = ns;
    }

    /// Sets word `slot` (0 or 1) of request `id`'s `elv_priv`
    /// (`rq->elv.priv`).
    #[inline]
    pub fn set_elv_priv(&mut self, id: RqId, slot: usize, value: u64) {
        self.rqs[id].elv_priv[slot] = value;
    }

    /// Marks request `id` urgent or not (`REQ_URGENT`; see
    /// [`crate::Elevator::is_urgent`]).
    #[inline]
    pub fn set_urgent(&mut self, id: RqId, urgent: bool) {
        self.rqs[id].urgent = urgent;
    }

    /// Arms (or re-arms) the scheduler's timer for absolute time `at` ns.
    #[inline]
    pub fn set_timer(&mut self, at: Ns) {
        *self.timer = Some(at);
    }

    /// Cancels the scheduler's timer.
    #[inline]
    pub fn cancel_timer(&mut self) {
        *self.timer = None;
    }

    /// The request `id`, read-only.
    #[inline]
    pub fn rq(&self, id: RqId) -> &Request {
        &self.rqs[id]
    }

    /// Every request of the queue, read-only.
    #[inline]
    pub fn requests(&self) -> &Slab<Request> {
        self.rqs
    }
}
