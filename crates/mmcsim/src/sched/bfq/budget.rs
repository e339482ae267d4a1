//! Slot accounting: expiry, peak-rate estimation, full-budget charging and
//! budget feedback, budget timeouts (reference §5.3 "At expiry", "Budget
//! feedback", "Budget timeout").

use super::{Bfq, BfqEvent, ExpireReason, DEFAULT_MAX_BUDGET, RATE_SHIFT};
use mmcsim_elevator::SchedCtx;

/// `BFQ_PEAK_RATE_SAMPLES`.
pub const PEAK_RATE_SAMPLES: u32 = 32;
/// `budgets_assigned` threshold after which the computed `max_budget` is
/// used.
pub const BUDGETS_ASSIGNED_THRESH: u64 = 194;

impl Bfq {
    /// `bfq_max_budget`: 16384 sectors until `budgets_assigned` reaches 194,
    /// then the (possibly auto-tuned) `max_budget`.
    pub(super) fn max_budget_eff(&self) -> u64 {
        if self.budgets_assigned < BUDGETS_ASSIGNED_THRESH {
            DEFAULT_MAX_BUDGET
        } else {
            self.max_budget
        }
    }

    /// `bfq_min_budget`.
    pub(super) fn min_budget(&self) -> u64 {
        self.max_budget_eff() / 32
    }

    /// `bfq_calc_max_budget`: sectors served at `peak_rate` in `timeout_ms`.
    pub(super) fn calc_max_budget(peak_rate: u64, timeout_ms: u64) -> u64 {
        (peak_rate * 1000 * timeout_ms) >> RATE_SHIFT
    }

    /// `bfq_bfqq_budget_left`.
    pub(super) fn budget_left(&self, q: u32) -> u64 {
        let e = &self.wf.ents[q as usize];
        e.budget.saturating_sub(e.service)
    }

    /// `bfq_bfqq_budget_timeout`: the slot's budget timeout has passed.
    pub(super) fn budget_timed_out(&self, ctx: &SchedCtx, q: u32) -> bool {
        let bq = &self.queues[q as usize];
        !bq.budget_new && self.jiffies(ctx) >= bq.budget_timeout
    }

    /// `bfq_may_expire_for_budg_timeout`.
    pub(super) fn may_expire_for_budg_timeout(&self, ctx: &SchedCtx, q: u32) -> bool {
        let bq = &self.queues[q as usize];
        (!bq.wait_request || self.budget_left(q) >= self.wf.ents[q as usize].budget / 3)
            && self.budget_timed_out(ctx, q)
    }

    /// `bfq_set_budget_timeout`, at the slot's first completion: now +
    /// timeout × (weight / orig_weight) unless soft-real-time raised.
    pub(super) fn set_budget_timeout(&mut self, ctx: &SchedCtx, q: u32) {
        let now = self.jiffies(ctx);
        let w = self.wf.ents[q as usize].weight;
        let bq = &self.queues[q as usize];
        let coeff = if bq.wr_cur_max_time == self.tun.wr_rt_max_time as i64 {
            1
        } else {
            (w / bq.orig_weight).max(1)
        };
        let timeout = self.tun.timeout[bq.sync as usize];
        self.last_budget_start = ctx.now;
        let bq = &mut self.queues[q as usize];
        bq.budget_new = false;
        bq.budget_timeout = now + (timeout * coeff) as i64;
    }

    /// `bfq_update_peak_rate`: samples the slot's rate (slots > 20 ms) into
    /// the peak-rate EWMA, re-tunes `max_budget` and the device speed class,
    /// and returns the "slow" verdict used for full-budget charging.
    fn update_peak_rate(
        &mut self,
        ctx: &SchedCtx,
        q: u32,
        compensate: bool,
        reason: ExpireReason,
    ) -> bool {
        let bq = &self.queues[q as usize];
        if !bq.sync || bq.budget_new {
            return false;
        }
        let end = if compensate {
            self.last_idling_start
        } else {
            ctx.now
        };
        let usecs = end.saturating_sub(self.last_budget_start) / 1000;
        if usecs < 100 {
            return false;
        }
        let e = self.wf.ents[q as usize];
        let bw = (e.service << RATE_SHIFT) / usecs;
        let timeout_ms = self.params.jiffies_to_ms(self.tun.timeout[1]);
        if usecs > 20_000 {
            let mut update = false;
            if bw > self.peak_rate || (!bq.seeky() && reason == ExpireReason::BudgetTimeout) {
                let bw8 = bw / 8;
                if bw8 == 0 {
                    return false;
                }
                self.peak_rate = self.peak_rate * 7 / 8 + bw8;
                update = true;
            }
            update |= self.peak_rate_samples == PEAK_RATE_SAMPLES - 1;
            if self.peak_rate_samples < PEAK_RATE_SAMPLES {
                self.peak_rate_samples += 1;
            }
            if self.peak_rate_samples == PEAK_RATE_SAMPLES && update {
                if self.tun.max_budget == 0 {
                    self.max_budget = Self::calc_max_budget(self.peak_rate, timeout_ms);
                }
                self.update_device_speed();
            }
        }
        if e.budget <= self.max_budget_eff() / 8 {
            return false;
        }
        let expected = (bw * 1000 * timeout_ms) >> RATE_SHIFT;
        if self.tun.slow_check_fixed {
            // As the comment intends: slow if, at this rate, the budget
            // would not be served within timeout_sync (⅓ margin).
            expected < e.budget - e.budget / 3
        } else {
            // As shipped in v7r8: `return expected > 4 * budget / 3`.
            expected > 4 * e.budget / 3
        }
    }

    /// `bfq_bfqq_charge_full_budget`: the rest of the budget counts as
    /// served (V advances accordingly).
    fn charge_full_budget(&mut self, q: u32) {
        let left = self.budget_left(q);
        self.wf.served(q, left);
    }

    /// `__bfq_bfqq_recalc_budget`: the budget feedback.
    fn recalc_budget(&mut self, ctx: &SchedCtx, q: u32, reason: ExpireReason) {
        let min_budget = self.min_budget();
        let cap = self.max_budget;
        let bq = &self.queues[q as usize];
        let mut budget = bq.max_budget;
        if bq.sync {
            budget = match reason {
                ExpireReason::TooIdle => {
                    if bq.dispatched > 0 {
                        (budget * 2).min(cap)
                    } else if budget > 5 * min_budget {
                        budget - 4 * min_budget
                    } else {
                        min_budget
                    }
                }
                ExpireReason::BudgetTimeout => (budget * 2).min(cap),
                ExpireReason::BudgetExhausted => (budget * 4).min(cap),
                ExpireReason::NoMoreRequests => return,
            };
        } else {
            budget = cap;
        }
        let mut mb = budget;
        if self.budgets_assigned >= BUDGETS_ASSIGNED_THRESH
            && self.tun.max_budget == 0
            && mb > self.max_budget
        {
            mb = self.max_budget;
        }
        self.queues[q as usize].max_budget = mb;
        let b = match self.queues[q as usize].next_rq {
            Some(n) => mb.max(self.serv_to_charge(q, ctx.rq(n).sectors)),
            None => mb,
        };
        self.wf.ents[q as usize].budget = b;
    }

    /// `bfq_bfqq_expire`: ends the in-service queue's slot for `reason`.
    /// `compensate`: the slot is measured up to the idling start (timer
    /// expiry).
    pub(super) fn expire(
        &mut self,
        ctx: &mut SchedCtx,
        q: u32,
        compensate: bool,
        reason: ExpireReason,
    ) {
        let now = self.jiffies(ctx);
        let slow = self.update_peak_rate(ctx, q, compensate, reason);
        let e = self.wf.ents[q as usize];
        let service = e.service;
        if slow || (reason == ExpireReason::BudgetTimeout && self.budget_left(q) >= e.budget / 3) {
            self.charge_full_budget(q);
        }
        let charged = self.wf.ents[q as usize].service;
        let low_latency = self.tun.low_latency;
        let softrt_rate = self.tun.wr_max_softrt_rate;
        let bq = &mut self.queues[q as usize];
        bq.service_from_backlogged += charged;
        if bq.seeky() && reason == ExpireReason::BudgetTimeout && !bq.constantly_seeky {
            bq.constantly_seeky = true;
        }
        if reason == ExpireReason::TooIdle && charged <= 2 * e.budget / 10 {
            bq.io_bound = false;
        }
        if low_latency && bq.wr_coeff == 1 {
            bq.last_wr_start_finish = now;
        }
        if low_latency && softrt_rate > 0 && bq.sort.is_empty() {
            if bq.dispatched == 0 {
                let t = self.softrt_next_start(ctx, q);
                self.queues[q as usize].soft_rt_next_start = t;
            } else {
                self.queues[q as usize].softrt_update = true;
            }
        }
        self.recalc_budget(ctx, q, reason);
        // __bfq_bfqq_expire
        self.in_service = None;
        if self.queues[q as usize].sort.is_empty() {
            self.del_busy(q, true);
        } else {
            self.activate_queue(q);
        }
        let new_budget = self.queues[q as usize].max_budget;
        self.emit(BfqEvent::Expire {
            at: ctx.now,
            queue: q,
            pid: self.queues[q as usize].pid,
            reason,
            service,
            charged,
            budget: e.budget,
            new_max_budget: new_budget,
        });
    }
}
