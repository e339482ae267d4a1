//! The block layer as a stage of the running simulation: the request queue
//! ([`BlockLayer`]) plus the two things it does in time — the scheduler's
//! timer (an event the block stage owns) and running the queue, which rings
//! the driver below when requests wait (`__blk_run_queue` → `request_fn`,
//! or `urgent_request_fn` once for an urgent request when the driver takes
//! those notifications).

use super::completion::{Completion, EndedBios};
use super::request::{Bio, RqId};
use super::BlockLayer;
use crate::driver::{DeviceTimes, Driver, DriverEvents, DriverRequest, Ring};
use crate::engine::EventQueue;
use crate::types::Ns;

/// Events the block stage schedules for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockEvent {
    /// The scheduler's timer (generation number; stale ones are ignored).
    SchedTimer(u64),
}

/// An event type that can carry the block stage's events, its completions
/// for the stages above, and the events of the driver it rings.
pub trait BlockEvents: From<BlockEvent> + From<Completion> + DriverEvents {}
impl<E: From<BlockEvent> + From<Completion> + DriverEvents> BlockEvents for E {}

/// The block stage: the request queue and its scheduler timer event.
pub struct BlockStage {
    /// The request queue: bios, requests, merging, plugging, the elevator.
    pub layer: BlockLayer,
    /// Generation of the armed timer event.
    timer_gen: u64,
    /// When the armed timer event fires, if one is armed.
    timer_at: Option<Ns>,
    /// Finished bios waiting for their completion events.
    ended: EndedBios,
    /// Scratch list of a request's bios as it ends.
    scratch: Vec<Bio>,
}

impl BlockStage {
    /// The stage around `layer`, with no timer armed.
    pub fn new(layer: BlockLayer) -> BlockStage {
        BlockStage {
            layer,
            timer_gen: 0,
            timer_at: None,
            ended: EndedBios::default(),
            scratch: Vec::with_capacity(64),
        }
    }

    /// Handles one of the block stage's own events.
    pub fn handle<E: BlockEvents>(
        &mut self,
        now: Ns,
        ev: BlockEvent,
        driver: &mut Driver,
        q: &mut EventQueue<E>,
    ) {
        match ev {
            BlockEvent::SchedTimer(gen) => {
                if gen == self.timer_gen && self.timer_at.is_some() {
                    self.timer_at = None;
                    self.layer.on_timer(now);
                    self.run_queue(now, driver, q);
                }
            }
        }
    }

    /// Keeps the scheduler's timer event in step with the timer the
    /// scheduler asked for (a new generation makes older events stale).
    #[inline]
    pub fn sync_timer<E: From<BlockEvent>>(&mut self, q: &mut EventQueue<E>) {
        let t = self.layer.timer();
        if t != self.timer_at {
            self.timer_gen += 1;
            self.timer_at = t;
            if let Some(at) = t {
                q.at(at, BlockEvent::SchedTimer(self.timer_gen));
            }
        }
    }

    /// Runs the queue after it changed (submission, completion, timer):
    /// syncs the timer and rings the driver when requests wait.
    pub fn run_queue<E: BlockEvents>(
        &mut self,
        now: Ns,
        driver: &mut Driver,
        q: &mut EventQueue<E>,
    ) {
        if let Some(ring) = self.ring(driver.takes_urgent_requests(), q) {
            driver.ring(now, ring, q);
        }
    }

    /// `__blk_run_queue` up to the doorbell: syncs the timer and says how
    /// to ring the driver when requests wait (an urgent request is
    /// announced once, when the driver takes urgent notifications).
    pub fn ring<E: From<BlockEvent>>(
        &mut self,
        takes_urgent: bool,
        q: &mut EventQueue<E>,
    ) -> Option<Ring> {
        self.sync_timer(q);
        if !self.layer.has_pending() {
            return None;
        }
        if takes_urgent && self.layer.notify_urgent() {
            Some(Ring::Urgent)
        } else {
            Some(Ring::Request)
        }
    }

    /// Submits `bios` unplugged (each may merge or become a request) and
    /// runs the queue.
    pub fn submit<E: BlockEvents>(
        &mut self,
        now: Ns,
        bios: impl IntoIterator<Item = Bio>,
        driver: &mut Driver,
        q: &mut EventQueue<E>,
    ) {
        for bio in bios {
            self.layer.submit_bio(now, bio, false);
        }
        self.run_queue(now, driver, q);
    }

    /// Submits `bios` of `thread` under one plug (`blk_start_plug` …
    /// `blk_finish_plug`) and runs the queue.
    pub fn submit_plugged<E: BlockEvents>(
        &mut self,
        now: Ns,
        thread: u32,
        bios: impl IntoIterator<Item = Bio>,
        driver: &mut Driver,
        q: &mut EventQueue<E>,
    ) {
        self.layer.start_plug(thread);
        for bio in bios {
            self.layer.submit_bio(now, bio, true);
        }
        self.layer.finish_plug(now, thread);
        self.run_queue(now, driver, q);
    }

    /// `blk_fetch_request` for the driver: the next dispatched request,
    /// activated at `now`.
    #[inline]
    pub fn fetch(&mut self, now: Ns) -> Option<DriverRequest> {
        if self.layer.nothing_to_fetch() {
            return None;
        }
        self.fetch_next(now)
    }

    /// [`BlockStage::fetch`] past its quick check.
    #[inline(never)]
    fn fetch_next(&mut self, now: Ns) -> Option<DriverRequest> {
        let rq = self.layer.fetch(now)?;
        self.layer.activate(now, rq);
        let r = self.layer.request(rq);
        Some(DriverRequest {
            id: rq,
            op: r.op,
            sector: r.sector,
            sectors: r.sectors,
            fua: r.fua,
            urgent: r.urgent,
            secure: r.secure,
        })
    }

    /// `blk_reinsert_request` for the driver (see
    /// [`BlockLayer::reinsert`]).
    pub fn reinsert(&mut self, now: Ns, rq: RqId) {
        self.layer.reinsert(now, rq);
    }

    /// `blk_end_request`: the driver ended request `rq`, which ran on the
    /// device at `times`. The request is freed, and its completions are
    /// queued to run right after the current event (see
    /// [`super::completion`]): [`Completion::Freed`], then one
    /// [`Completion::Bio`] per bio.
    pub fn end_request<E: From<Completion>>(
        &mut self,
        now: Ns,
        rq: RqId,
        times: DeviceTimes,
        q: &mut EventQueue<E>,
    ) {
        let mut bios = std::mem::take(&mut self.scratch);
        self.layer.complete(now, rq, &mut bios);
        q.immediately(Completion::Freed);
        for bio in bios.drain(..) {
            q.immediately(Completion::Bio(bio.submitter));
            self.ended.push(bio, times);
        }
        self.scratch = bios;
    }

    /// The finished bios waiting for their completion events.
    pub fn ended(&mut self) -> &mut EndedBios {
        &mut self.ended
    }
}

/// Splits `template` (covering `template.sectors` from `template.sector`)
/// into bios of at most `max_sectors` appended to `out` (`blk_queue_split`);
/// discards and flushes go down whole (MMC's discard limit is far above
/// `max_sectors_kb`). Returns how many bios were appended.
pub fn split_bio(template: Bio, max_sectors: u32, out: &mut Vec<Bio>) -> u32 {
    if !template.op.has_data() {
        out.push(template);
        return 1;
    }
    let mut n = 0;
    let mut sector = template.sector;
    let end = template.sector + template.sectors as u64;
    while sector < end {
        let len = (end - sector).min(max_sectors as u64) as u32;
        out.push(Bio {
            sector,
            sectors: len,
            ..template
        });
        sector += len as u64;
        n += 1;
    }
    n
}
