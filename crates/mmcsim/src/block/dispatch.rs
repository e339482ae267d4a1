//! The dispatch list and the driver's side (reference §1.5): fetch,
//! activate, complete; `elv_dispatch_sort` and `elv_dispatch_add_tail`.

use super::request::{Bio, RqId, NIL};
use super::{ctx, is_barrier, BlockLayer};
use crate::types::{Ns, Op};

impl BlockLayer {
    /// The driver pulls the next request (`blk_fetch_request`): the head of
    /// the dispatch list, or, if the list is empty, one request from the
    /// scheduler (`dispatch(force = false)`), moved onto the list by
    /// dispatch-sort or tail append. The request leaves the list. `None`:
    /// nothing to do now (wait for a submission, completion or timer).
    pub fn fetch(&mut self, now: Ns) -> Option<RqId> {
        if self.dispatch.is_empty() {
            if self.sched_dry {
                return None;
            }
            let Some(rq) = self.elevator.dispatch(ctx!(self, now), false) else {
                self.sched_dry = self.none_is_stable;
                return None;
            };
            self.move_to_dispatch(now, rq);
        }
        let rq = self.dispatch.pop_front()?;
        // blk_peek_request: the boundary for dispatch-sort.
        if self.boundary_rq.is_none() || self.boundary_rq == Some(rq) {
            self.end_sector = self.rqs[rq].end();
            self.boundary_rq = None;
        }
        Some(rq)
    }

    /// True when [`BlockLayer::fetch`] would answer `None` without asking
    /// the scheduler: the dispatch list is empty and the scheduler already
    /// answered `None` (and promised to keep it, see
    /// [`mmcsim_elevator::Elevator::none_is_stable`]).
    #[inline]
    pub fn nothing_to_fetch(&self) -> bool {
        self.sched_dry && self.dispatch.is_empty()
    }

    /// The driver started `rq`: counts it in the driver and calls the
    /// scheduler's `activate` (if it came through the scheduler).
    pub fn activate(&mut self, now: Ns, rq: RqId) {
        self.in_driver[self.rqs[rq].sync as usize] += 1;
        if self.sorted(rq) {
            self.elevator.activate(ctx!(self, now), rq);
        }
    }

    /// `blk_reinsert_request`: the driver gives back `rq`, fetched and not
    /// completed. It leaves the driver's count; the scheduler puts it back
    /// (`elevator_reinsert_req_fn`), or, without that hook or for a request
    /// that bypassed the scheduler, it is requeued at the head of the
    /// dispatch list (`blk_requeue_request`).
    pub fn reinsert(&mut self, now: Ns, rq: RqId) {
        let c = self.rqs[rq].sync as usize;
        self.in_driver[c] = self.in_driver[c].saturating_sub(1);
        self.rqs[rq].device_start_ns = None;
        self.sched_dry = false;
        if self.sorted(rq) && self.elevator.reinsert_request(ctx!(self, now), rq) {
            return;
        }
        self.dispatch.push_front(rq);
    }

    /// The device finished `rq`: the scheduler's `completed` (if it came
    /// through the scheduler), then the request and its bios are freed — the
    /// bios are pushed to `done` in sector order so the caller can notify
    /// their owners — and its allocation is released, which may admit bios
    /// waiting for a request.
    pub fn complete(&mut self, now: Ns, rq: RqId, done: &mut Vec<Bio>) {
        let c = self.rqs[rq].sync as usize;
        self.in_driver[c] = self.in_driver[c].saturating_sub(1);
        if self.rqs[rq].urgent {
            // elv_completed_request
            self.notified_urgent = false;
        }
        if self.sorted(rq) {
            self.elevator.completed(ctx!(self, now), rq);
        }
        let (mut b, tail) = (self.rqs[rq].bio_head, self.rqs[rq].bio_tail);
        loop {
            let next = self.bio_next[b as usize];
            self.bio_next[b as usize] = NIL;
            done.push(self.bios.remove(b));
            if b == tail {
                break;
            }
            b = next;
        }
        self.free_request(rq);
        self.run_wakeups(now);
    }

    /// A request leaves the scheduler: out of the merge hash and
    /// `last_merge`, onto the dispatch list.
    #[inline(never)]
    pub(super) fn move_to_dispatch(&mut self, now: Ns, rq: RqId) {
        if self.last_merge == Some(rq) {
            self.last_merge = None;
        }
        self.hash.remove(rq);
        self.rqs[rq].dispatch_ns = Some(now);
        if self.elevator.dispatch_sort() {
            self.dispatch_sort(rq);
        } else {
            // elv_dispatch_add_tail
            self.end_sector = self.rqs[rq].end();
            self.boundary_rq = Some(rq);
            self.dispatch.push_back(rq);
        }
    }

    /// `elv_dispatch_sort`: one-way elevator insertion. Walking back from
    /// the tail, stop at a different direction or discard-ness or a barrier;
    /// requests at or beyond the boundary (`end_sector`) sort before those
    /// that wrapped below it; within a side, ascending sector.
    fn dispatch_sort(&mut self, rq: RqId) {
        let boundary = self.end_sector;
        let r = &self.rqs[rq];
        let (sector, dir, discard) = (r.sector, r.dir(), r.op == Op::Discard);
        let mut pos = self.dispatch.len();
        while pos > 0 {
            let p = &self.rqs[self.dispatch[pos - 1]];
            if (p.op == Op::Discard) != discard || p.dir() != dir || is_barrier(p) {
                break;
            }
            if sector >= boundary {
                if p.sector < boundary {
                    pos -= 1;
                    continue;
                }
            } else if p.sector >= boundary {
                break;
            }
            if sector >= p.sector {
                break;
            }
            pos -= 1;
        }
        self.dispatch.insert(pos, rq);
    }
}
