//! The block layer as a stage of the running simulation: the request queue
//! ([`BlockLayer`], private) plus what it does in time — the scheduler's
//! timer (an event the block stage owns), running the queue, and the
//! doorbell of the driver below, which only this stage rings
//! (`__blk_run_queue` → `request_fn`, or `urgent_request_fn` once for an
//! urgent request when the driver takes those notifications). The stage
//! owns the driver; the stages above submit bios and read the queue's
//! state through the stage's methods, never through the driver.
//!
//! The way up: the driver's interrupt ends a request in the queue the
//! stage lends it (`RequestQueue::end_request`), and the request's
//! finished bios go back to their submitters as [`Completion`] events (see
//! [`super::completion`]).

use super::completion::{Completion, EndedBios};
use super::request::{Bio, RqId};
use super::{BlockLayer, BlockStats, QueueParams};
use crate::driver::{
    Driver, DriverEvent, DriverEvents, DriverRequest, RequestQueue, Ring, WarmHint,
};
use crate::engine::EventQueue;
use crate::stats::report::Collector;
use crate::stats::request_log::{LogRow, RequestLog};
use crate::stats::DeviceTimes;
use crate::types::Ns;
use mmcsim_elevator::Elevator;

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

/// Where the requests the device served are recorded: the run's counters
/// and the optional per-request log.
pub struct Accounting<'a> {
    /// The run's counters.
    pub collector: &'a mut Collector,
    /// The per-request CSV log, when asked for.
    pub log: Option<&'a mut RequestLog>,
}

/// The block stage: the request queue, its scheduler timer event, and the
/// driver it rings.
pub struct BlockStage {
    queue: Queue,
    /// The MMC driver below (it owns the eMMC device).
    driver: Driver,
}

/// The queue side of the stage: what the driver pulls from.
struct Queue {
    /// The request queue: bios, requests, merging, plugging, the elevator.
    layer: BlockLayer,
    /// Generation of the armed timer event.
    timer_gen: u64,
    /// When the armed timer event fires, if one is armed.
    timer_at: Option<Ns>,
    /// Finished bios waiting for their completion events.
    ended: EndedBios,
    /// Scratch list of a request's bios as it ends.
    scratch: Vec<Bio>,
    /// A cache-warming hint from above, handed to the driver with the next
    /// request it fetches.
    hint: Option<WarmHint>,
}

impl BlockStage {
    /// The stage around `layer`, ringing `driver`, with no timer armed.
    pub fn new(layer: BlockLayer, driver: Driver) -> BlockStage {
        BlockStage {
            queue: Queue {
                layer,
                timer_gen: 0,
                timer_at: None,
                ended: EndedBios::default(),
                scratch: Vec::with_capacity(64),
                hint: None,
            },
            driver,
        }
    }

    /// The driver below.
    pub fn driver(&self) -> &Driver {
        &self.driver
    }

    /// The driver below, for set-up and checks outside the run's events
    /// (the device's integrity check).
    pub fn driver_mut(&mut self) -> &mut Driver {
        &mut self.driver
    }

    /// Handles one of the block stage's own events.
    pub fn handle<E: BlockEvents>(&mut self, now: Ns, ev: BlockEvent, q: &mut EventQueue<E>) {
        match ev {
            BlockEvent::SchedTimer(gen) => {
                let queue = &mut self.queue;
                if gen == queue.timer_gen && queue.timer_at.is_some() {
                    queue.timer_at = None;
                    queue.layer.on_timer(now);
                    self.run_queue(now, q);
                }
            }
        }
    }

    /// Hands one of the driver's events to the driver, lending it this
    /// stage's queue; requests the device served are recorded in `acct`.
    pub fn handle_driver<E: BlockEvents>(
        &mut self,
        now: Ns,
        ev: DriverEvent,
        acct: Accounting<'_>,
        q: &mut EventQueue<E>,
    ) {
        let mut up = Lent {
            queue: &mut self.queue,
            acct,
        };
        self.driver.handle(now, ev, &mut up, q);
    }

    /// Keeps the scheduler's timer event in step with the timer the
    /// scheduler asked for (a new generation makes older events stale).
    #[inline]
    pub fn sync_timer<E: From<BlockEvent>>(&mut self, q: &mut EventQueue<E>) {
        self.queue.sync_timer(q);
    }

    /// Runs the queue after it changed (submission, completion, timer):
    /// syncs the timer and rings the driver when requests wait.
    pub fn run_queue<E: BlockEvents>(&mut self, now: Ns, q: &mut EventQueue<E>) {
        let takes_urgent = self.driver.takes_urgent_requests();
        if let Some(ring) = self.queue.ring(takes_urgent, q) {
            self.driver.ring(now, ring, q);
        }
    }

    /// Submits `bios` unplugged (each may merge or become a request) and
    /// runs the queue.
    pub fn submit<E: BlockEvents>(
        &mut self,
        now: Ns,
        bios: impl IntoIterator<Item = Bio>,
        q: &mut EventQueue<E>,
    ) {
        for bio in bios {
            self.queue.layer.submit_bio(now, bio, false);
        }
        self.run_queue(now, q);
    }

    /// Submits `bios` of `thread` under one plug (`blk_start_plug` …
    /// `blk_finish_plug`) and runs the queue.
    pub fn submit_plugged<E: BlockEvents>(
        &mut self,
        now: Ns,
        thread: u32,
        bios: impl IntoIterator<Item = Bio>,
        q: &mut EventQueue<E>,
    ) {
        self.start_plug(thread);
        for bio in bios {
            self.submit_bio_plugged(now, bio);
        }
        self.finish_plug(now, thread);
        self.run_queue(now, q);
    }

    /// `blk_start_plug`: `thread` holds a plug; its bios go in with
    /// [`BlockStage::submit_bio_plugged`] until
    /// [`BlockStage::finish_plug`] (for a submitter that decides bio by
    /// bio, such as the writeback flusher watching congestion).
    pub fn start_plug(&mut self, thread: u32) {
        self.queue.layer.start_plug(thread);
    }

    /// Submits `bio` of a thread that holds a plug (`bio.thread`), without
    /// running the queue.
    pub fn submit_bio_plugged(&mut self, now: Ns, bio: Bio) {
        self.queue.layer.submit_bio(now, bio, true);
    }

    /// `blk_finish_plug`: flushes `thread`'s plug list into the scheduler;
    /// the caller then runs the queue ([`BlockStage::run_queue`]).
    pub fn finish_plug(&mut self, now: Ns, thread: u32) {
        self.queue.layer.finish_plug(now, thread);
    }

    /// A cache-warming hint from above: the next I/O will likely touch
    /// `sector` (`write`: to write it). It goes down with the next request
    /// the driver fetches; a performance hint only, no simulated effect.
    pub fn hint(&mut self, sector: u64, write: bool) {
        self.queue.hint = Some(WarmHint { sector, write });
    }

    /// Writeback / read-ahead congestion of a class (`sync` true = sync
    /// requests), see [`BlockLayer::congested`].
    pub fn congested(&self, sync: bool) -> bool {
        self.queue.layer.congested(sync)
    }

    /// True while `thread` waits for a free request (`get_request`).
    pub fn is_blocked(&self, thread: u32) -> bool {
        self.queue.layer.is_blocked(thread)
    }

    /// True while anything waits in the queue (see
    /// [`BlockLayer::has_pending`]).
    pub fn has_pending(&self) -> bool {
        self.queue.layer.has_pending()
    }

    /// The queue attributes.
    pub fn params(&self) -> &QueueParams {
        self.queue.layer.params()
    }

    /// The scheduler.
    pub fn elevator(&self) -> &dyn Elevator {
        self.queue.layer.elevator()
    }

    /// The block layer's counters so far.
    pub fn stats(&self) -> BlockStats {
        self.queue.layer.stats()
    }

    /// The finished bios waiting for their completion events.
    pub fn ended(&mut self) -> &mut EndedBios {
        &mut self.queue.ended
    }
}

impl Queue {
    fn sync_timer<E: From<BlockEvent>>(&mut self, q: &mut EventQueue<E>) {
        let t = self.layer.timer();
        if t != self.timer_at {
            self.timer_gen += 1;
            self.timer_at = t;
            if let Some(at) = t {
                q.at(at, BlockEvent::SchedTimer(self.timer_gen));
            }
        }
    }

    /// `__blk_run_queue` up to the doorbell: syncs the timer and says how
    /// to ring the driver when requests wait (an urgent request is
    /// announced once, when the driver takes urgent notifications).
    fn ring<E: From<BlockEvent>>(
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

    /// `blk_fetch_request` past its quick check: the next dispatched
    /// request, activated at `now`, carrying the pending hint.
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
            hint: self.hint.take(),
        })
    }

    /// Records request `rq`, which ran at `times`, in `acct`.
    fn account(&self, now: Ns, rq: RqId, times: DeviceTimes, acct: &mut Accounting<'_>) {
        let r = self.layer.request(rq);
        if let Some(log) = acct.log.as_mut() {
            log.row(&LogRow {
                submit_ns: r.start_ns,
                dispatch_ns: r.dispatch_ns.unwrap_or(times.start),
                device_start_ns: times.start,
                complete_ns: times.done,
                sector: r.sector,
                sectors: r.sectors,
                op: r.op,
                fua: r.fua,
                thread: r.thread,
            });
        }
        acct.collector.request_done(
            now.saturating_sub(times.fetch),
            times.data_cmd(),
            times.busy_poll(),
            times.status_polls,
        );
        acct.collector.device_request(r.op, r.sectors);
    }
}

/// The queue lent to the driver for one driver event, with the accounting
/// of the requests it ends.
struct Lent<'a, 'b> {
    queue: &'a mut Queue,
    acct: Accounting<'b>,
}

impl<E: BlockEvents> RequestQueue<E> for Lent<'_, '_> {
    #[inline]
    fn fetch(&mut self, now: Ns) -> Option<DriverRequest> {
        if self.queue.layer.nothing_to_fetch() {
            return None;
        }
        self.queue.fetch_next(now)
    }

    fn dispatch_tried(&mut self, q: &mut EventQueue<E>) {
        self.queue.sync_timer(q);
    }

    /// `blk_end_request`: the request is recorded and freed, and its
    /// completions are queued to run right after the current event (see
    /// [`super::completion`]): [`Completion::Freed`], then one
    /// [`Completion::Bio`] per bio.
    fn end_request(&mut self, now: Ns, rq: RqId, times: DeviceTimes, q: &mut EventQueue<E>) {
        self.queue.account(now, rq, times, &mut self.acct);
        let queue = &mut *self.queue;
        let mut bios = std::mem::take(&mut queue.scratch);
        queue.layer.complete(now, rq, &mut bios);
        q.immediately(Completion::Freed);
        for bio in bios.drain(..) {
            q.immediately(Completion::Bio(bio.submitter));
            queue.ended.push(bio, times);
        }
        queue.scratch = bios;
    }

    fn run_queue(&mut self, takes_urgent: bool, q: &mut EventQueue<E>) -> Option<Ring> {
        self.queue.ring(takes_urgent, q)
    }

    /// `blk_reinsert_request` (see [`BlockLayer::reinsert`]).
    fn reinsert(&mut self, now: Ns, rq: RqId) {
        self.queue.layer.reinsert(now, rq);
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
