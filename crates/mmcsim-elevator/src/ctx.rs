//! The scheduler's window on the queue while one of its hooks runs.

use crate::request::{Request, RqId};
use crate::slab::Slab;
use crate::types::Ns;

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
    #[inline]
    pub fn set_timer(&mut self, at: Ns) {
        *self.timer = Some(at);
    }

    /// Cancels the scheduler's timer.
    #[inline]
    pub fn cancel_timer(&mut self) {
        *self.timer = None;
    }

    /// The request `id`.
    #[inline]
    pub fn rq(&self, id: RqId) -> &Request {
        &self.rqs[id]
    }
}
