//! bfq-mq only: `strict_guarantees` and I/O injection while idling
//! (reference §11; the rules follow mainline `block/bfq-iosched.c`).
//!
//! *strict_guarantees* = 1: `bfq_better_to_idle` is always true, so the
//! in-service queue is idled for whenever it empties (async, idle-class,
//! seeky, large-burst and non-rotational/`hw_tag` queues included), and no
//! request is dispatched while any request is still in the driver
//! (`__bfq_dispatch_request`), so the device cannot reorder across queues.
//! Enabling it raises `slice_idle` to at least 8 ms.
//!
//! *Injection*: while the in-service queue is empty and BFQ waits for it
//! (idle timer pending, or requests in flight and idling is worth it), a
//! request of another busy queue may be dispatched if fewer than the
//! in-service queue's `inject_limit` requests are in the driver
//! (`bfq_choose_bfqq_for_injection`). The limit starts at 0, becomes ≥ 1
//! once a baseline "total service time" (arrival of a request of the empty
//! in-service queue → its completion, drive otherwise empty) is sampled,
//! then goes +1 when a sample taken with injection stays under 1.5 × the
//! baseline (while limit ≤ `max_rq_in_driver`) and −1 otherwise
//! (`bfq_update_inject_limit`); it is reset every second
//! (`bfq_reset_inject_limit`: 0 with a short think time, else 1).
//!
//! Approximations: BFQ's per-process async queue and waker-queue injection
//! alternatives are not modelled (async queues are shared per class/level
//! here); the injection source is the first eligible busy queue by queue id
//! (mainline walks its active list, newest first); think time is in jiffies
//! ("short" = mean ≤ `slice_idle` / 2 jiffies, mainline works in ns); the
//! `has_short_ttime` state-change reset is not modelled; "the process has at
//! most one request" is "its sync queue is empty with nothing in flight".

use super::wf2q::CLASS_IDLE;
use super::Bfq;
use mmcsim_elevator::{Ns, RqId, SchedCtx};

/// `BFQQ_SECT_THR_NONROT`: a request at least this large is "large".
pub const SECT_THR_NONROT: u32 = 24;

/// Device-wide state of the inject-limit measurement.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct InjectState {
    /// `wait_dispatch`: the next dispatch of the in-service queue starts a
    /// total-service-time sample.
    pub wait_dispatch: bool,
    /// `waited_rq`: the request being timed.
    pub waited_rq: Option<RqId>,
    /// `rqs_injected`: injection happened during the sample.
    pub rqs_injected: bool,
    /// `last_empty_occupied_ns`: when the sample started.
    pub last_empty_occupied: Ns,
}

impl Bfq {
    /// `strict_guarantees` in force (bfq-mq only).
    pub(super) fn strict(&self) -> bool {
        self.variant.mq && self.tun.strict_guarantees
    }

    /// `bfq_bfqq_has_short_ttime`, computed from the process's think time.
    pub(super) fn has_short_ttime(&self, q: u32) -> bool {
        let bq = &self.queues[q as usize];
        if !bq.sync || self.wf.ents[q as usize].class == CLASS_IDLE {
            return false;
        }
        match self.bics.get(&bq.pid) {
            Some(b) if super::queue::sample_valid(b.ttime_samples) => {
                b.ttime_mean <= self.tun.slice_idle / 2
            }
            _ => true,
        }
    }

    /// Number of busy weight-raised queues (`wr_busy_queues`).
    fn wr_busy_count(&self) -> usize {
        self.queues
            .iter()
            .filter(|q| q.busy && q.wr_coeff > 1)
            .count()
    }

    /// `idling_boosts_thr_without_issues`.
    fn idling_boosts_thr_without_issues(&self, q: u32) -> bool {
        let hw = self.hw_tag();
        let nonrot = self.params.nonrot;
        let bq = &self.queues[q as usize];
        let rot_without_queueing = !nonrot && !hw;
        let seq_io_bound = !bq.seeky() && bq.io_bound && self.has_short_ttime(q);
        let boosts = rot_without_queueing || ((!nonrot || !hw) && seq_io_bound);
        boosts && !self.wr_busy()
    }

    /// The injection decision of `bfq_select_queue` for the empty in-service
    /// queue `q` that BFQ keeps: another queue to dispatch from, or `None`.
    pub(super) fn try_inject(&mut self, ctx: &SchedCtx, q: u32) -> Option<u32> {
        if !self.variant.mq {
            return None;
        }
        let wr = self.queues[q as usize].wr_coeff;
        let short = self.has_short_ttime(q);
        if self.idling_boosts_thr_without_issues(q)
            || !(wr == 1 || self.wr_busy_count() > 1 || !short)
        {
            return None;
        }
        self.choose_for_injection(ctx, q)
    }

    /// `bfq_choose_bfqq_for_injection`.
    fn choose_for_injection(&mut self, ctx: &SchedCtx, inserv: u32) -> Option<u32> {
        let bq = &self.queues[inserv as usize];
        let mut limit = bq.inject_limit;
        let always = bq.wr_coeff == 1 || !self.has_short_ttime(inserv);
        let idling_since = self.params.jiffies(self.last_idling_start) as i64;
        if limit == 0
            && bq.last_serv_time_ns == 0
            && self.timer_pending
            && self.jiffies(ctx) >= idling_since + self.tun.slice_idle as i64
        {
            limit = 1;
        }
        if self.in_flight >= limit {
            return None;
        }
        for (i, cand) in self.queues.iter().enumerate() {
            let c = i as u32;
            if c == inserv || !cand.busy || (!always && cand.wr_coeff == 1) {
                continue;
            }
            let Some(n) = cand.next_rq else {
                continue;
            };
            let sectors = ctx.rq(n).sectors;
            if self.serv_to_charge(c, sectors) > self.budget_left(c) {
                continue;
            }
            if self.params.nonrot && sectors >= SECT_THR_NONROT && self.in_flight >= 1 {
                continue;
            }
            self.inj.rqs_injected = true;
            return Some(c);
        }
        None
    }

    /// Dispatches `q`'s `next_rq` as injected service: charged to `q`, no
    /// slot bookkeeping (`bfq_dispatch_rq_from_bfqq` for a queue not in
    /// service).
    pub(super) fn dispatch_injected(&mut self, ctx: &mut SchedCtx, q: u32) -> Option<RqId> {
        let rq = self.queues[q as usize].next_rq?;
        let cost = self.serv_to_charge(q, ctx.rq(rq).sectors);
        self.wf.served(q, cost);
        self.dispatch_insert(ctx, rq);
        Some(rq)
    }

    /// `bfq_reset_inject_limit`.
    fn reset_inject_limit(&mut self, now: i64, q: u32) {
        let short = self.has_short_ttime(q);
        self.inj.waited_rq = None;
        let bq = &mut self.queues[q as usize];
        bq.last_serv_time_ns = 0;
        bq.inject_limit = if short { 0 } else { 1 };
        bq.decrease_time_jif = now;
    }

    /// The inject-limit part of `bfq_add_request`, before the request of
    /// queue `q` is inserted.
    pub(super) fn inject_on_add(&mut self, ctx: &SchedCtx, q: u32) {
        if !self.variant.mq {
            return;
        }
        let bq = &self.queues[q as usize];
        if !bq.sync || !bq.sort.is_empty() || bq.dispatched != 0 {
            return;
        }
        let now = self.jiffies(ctx);
        if now >= bq.decrease_time_jif + self.params.ms_to_jiffies(1000) as i64 {
            self.reset_inject_limit(now, q);
        }
        let bq = &self.queues[q as usize];
        if self.in_service == Some(q)
            && (self.in_flight == 0
                || (bq.last_serv_time_ns > 0 && self.inj.rqs_injected && self.in_flight > 0))
            && now >= bq.decrease_time_jif + self.params.ms_to_jiffies(10) as i64
        {
            self.inj.last_empty_occupied = ctx.now;
            self.inj.wait_dispatch = true;
            if self.in_flight == 0 {
                self.inj.rqs_injected = false;
            }
        }
    }

    /// The in-service queue dispatched `rq`: it becomes the timed request
    /// if a sample is pending.
    pub(super) fn inject_on_dispatch(&mut self, rq: RqId) {
        if self.variant.mq && self.inj.wait_dispatch {
            self.inj.wait_dispatch = false;
            self.inj.waited_rq = Some(rq);
        }
    }

    /// `bfq_update_inject_limit`, at the completion of the timed request of
    /// queue `q` (before `in_flight` is decremented).
    pub(super) fn inject_on_complete(&mut self, ctx: &SchedCtx, q: u32, rq: RqId) {
        if !self.variant.mq || self.inj.waited_rq != Some(rq) {
            return;
        }
        let now = self.jiffies(ctx);
        let tot = ctx.now.saturating_sub(self.inj.last_empty_occupied);
        let max_in_driver = self.max_rq_in_driver;
        let injected = self.inj.rqs_injected;
        let alone = self.in_flight == 1;
        let bq = &mut self.queues[q as usize];
        let old = bq.inject_limit;
        if bq.last_serv_time_ns > 0 && injected {
            let threshold = bq.last_serv_time_ns * 3 / 2;
            if tot >= threshold && old > 0 {
                bq.inject_limit -= 1;
                bq.decrease_time_jif = now;
            } else if tot < threshold && old <= max_in_driver {
                bq.inject_limit += 1;
            }
        }
        if (bq.last_serv_time_ns == 0 && alone) || tot < bq.last_serv_time_ns {
            if bq.last_serv_time_ns == 0 {
                bq.inject_limit = old.max(1);
            }
            bq.last_serv_time_ns = tot;
        } else if !injected && alone {
            bq.last_serv_time_ns = tot;
        }
        self.inj.waited_rq = None;
        self.inj.rqs_injected = false;
    }
}
