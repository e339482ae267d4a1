//! Request allocation under `nr_requests` (reference §1.2): `get_request`,
//! `freed_request`, the batcher rule, and the wait queues.

use super::request::{Bio, BioId};
use super::{ctx, BlockLayer, BLK_BATCH_REQ};
use crate::types::Ns;
use mmcsim_elevator::MayQueue;

impl BlockLayer {
    /// True while a bio of `thread` waits for a request (the thread sleeps
    /// in `get_request`): anything it submits now is held back.
    pub fn is_blocked(&self, thread: u32) -> bool {
        self.threads.get(thread as usize).is_some_and(|t| t.blocked)
    }

    /// `ioc_batching`: may `thread` allocate past a full queue?
    fn ioc_batching(&self, thread: u32, now: Ns) -> bool {
        let Some(t) = self.threads.get(thread as usize) else {
            return false;
        };
        let batch_time = self.sched.hz as u64 / 50; // BLK_BATCH_TIME = HZ/50
        t.nr_batch == BLK_BATCH_REQ
            || (t.nr_batch > 0 && self.sched.jiffies(now) < t.last_waited + batch_time)
    }

    /// `ioc_set_batching`: `thread` becomes a batcher (unless it already is).
    pub(super) fn ioc_set_batching(&mut self, thread: u32, now: Ns) {
        if self.ioc_batching(thread, now) {
            return;
        }
        let j = self.sched.jiffies(now);
        let t = self.thread_mut(thread);
        t.nr_batch = BLK_BATCH_REQ;
        t.last_waited = j;
    }

    /// `get_request`: counts an allocation of `bio`'s class, or returns false
    /// when the bio must wait.
    pub(super) fn get_request(&mut self, now: Ns, bio: &Bio) -> bool {
        let c = bio.sync as usize;
        let mq = self.elevator.may_queue(ctx!(ref self, now), bio);
        if mq == MayQueue::No {
            if self.count[c] == 0 {
                self.starved[c] = true;
            }
            return false;
        }
        let nr = self.params.nr_requests;
        if self.count[c] + 1 >= self.params.congestion_on() {
            if self.count[c] + 1 >= nr {
                if !self.full[c] {
                    self.ioc_set_batching(bio.thread, now);
                    self.full[c] = true;
                } else if mq != MayQueue::Must && !self.ioc_batching(bio.thread, now) {
                    return false;
                }
            }
            self.congested[c] = true;
        }
        // Hard cap: 1.5 × nr_requests, even for batchers and Must.
        if self.count[c] >= 3 * nr / 2 {
            return false;
        }
        self.count[c] += 1;
        self.starved[c] = false;
        if self.ioc_batching(bio.thread, now) {
            self.thread_mut(bio.thread).nr_batch -= 1;
        }
        let total = (self.count[0] + self.count[1]) as u64;
        self.stats.max_queued = self.stats.max_queued.max(total);
        true
    }

    /// `freed_request`: an allocation of class `c` ended.
    pub(super) fn freed_request(&mut self, c: usize) {
        self.count[c] -= 1;
        self.freed_class(c);
        if self.starved[c ^ 1] {
            self.freed_class(c ^ 1);
        }
    }

    /// `__freed_request`: congestion off below the threshold; below the
    /// limit, wake one waiter and clear the full flag.
    fn freed_class(&mut self, c: usize) {
        if self.count[c] < self.params.congestion_off() {
            self.congested[c] = false;
        }
        if self.count[c] < self.params.nr_requests {
            if self.wait[c].len > self.pending_wake[c] {
                self.pending_wake[c] += 1;
            }
            self.full[c] = false;
        }
    }

    /// Bio `b` found no request: its thread sleeps (its plug is flushed, as
    /// `io_schedule` does) and the bio joins its class's wait queue.
    pub(super) fn wait_for_request(&mut self, now: Ns, b: BioId) {
        let bio = self.bios[b];
        self.flush_plug(now, bio.thread);
        self.thread_mut(bio.thread).blocked = true;
        self.wait[bio.sync as usize].push_back(&mut self.bio_next, b);
        self.stats.alloc_waits += 1;
    }

    /// Processes wake-ups issued by frees: each woken bio's thread becomes a
    /// batcher and retries; on success the bio's request goes to the
    /// scheduler (unplugged) and the thread's held-back bios are resubmitted
    /// in order. Loops until no wake-up is left. With no wake-up pending
    /// (the common case) it returns at once.
    #[inline]
    pub(super) fn run_wakeups(&mut self, now: Ns) {
        if self.pending_wake != [0, 0] {
            self.run_pending_wakeups(now);
        }
    }

    /// The loop of [`BlockLayer::run_wakeups`], for when a wake-up is pending.
    #[inline(never)]
    fn run_pending_wakeups(&mut self, now: Ns) {
        loop {
            let mut progressed = false;
            for c in [1usize, 0] {
                while self.pending_wake[c] > 0 {
                    self.pending_wake[c] -= 1;
                    let Some(b) = self.wait[c].pop_front(&mut self.bio_next) else {
                        self.pending_wake[c] = 0;
                        break;
                    };
                    let bio = self.bios[b];
                    self.ioc_set_batching(bio.thread, now);
                    if !self.get_request(now, &bio) {
                        self.wait[c].push_front(&mut self.bio_next, b);
                        self.pending_wake[c] = 0;
                        break;
                    }
                    progressed = true;
                    let rq = self.new_request(now, b);
                    self.insert_unplugged(now, rq);
                    self.release_held(now, bio.thread);
                }
            }
            if !progressed {
                break;
            }
        }
    }

    /// `thread` was admitted: unblock it and resubmit its held-back bios in
    /// order (unplugged) until one has to wait again; the rest stay held, in
    /// order, untouched (resubmitting them would only hold each again), so
    /// a wake-up costs the bios it admits plus one, never the whole backlog.
    fn release_held(&mut self, now: Ns, thread: u32) {
        let t = self.thread_mut(thread);
        t.blocked = false;
        let mut held = std::mem::take(&mut t.held);
        while let Some(b) = held.pop_front(&mut self.bio_next) {
            self.submit_id(now, b, false);
            self.stats.held_resubmits += 1;
            let t = self.thread_mut(thread);
            if t.blocked {
                debug_assert_eq!(t.held.len, 0, "a blocked thread held nothing new");
                t.held = held;
                return;
            }
        }
    }
}
