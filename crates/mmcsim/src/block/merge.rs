//! The bio → request path and merging (reference §1.1): plug merges,
//! `last_merge`, the end-sector hash, the scheduler's front-merge lookup,
//! request–request merges via `former`/`latter`, and the merge rules.

use super::request::{Bio, BioId, RqId, NIL};
use super::{bio_is_barrier, ctx, rq_mergeable, BlockLayer, BLK_MAX_REQUEST_COUNT};
use crate::types::{Ns, Op};
use mmcsim_elevator::MergeKind;

impl BlockLayer {
    /// `blk_queue_bio` for bio `b` (already in the bio slab).
    pub(super) fn submit_id(&mut self, now: Ns, b: BioId, plugged: bool) {
        let bio = self.bios[b];
        let t = self.thread_mut(bio.thread);
        if t.blocked {
            // The thread is asleep in get_request: this bio comes later.
            let mut held = t.held;
            held.push_back(&mut self.bio_next, b);
            self.thread_mut(bio.thread).held = held;
            return;
        }
        if !bio_is_barrier(&bio) {
            if plugged && self.params.nomerges < 2 && self.attempt_plug_merge(now, b) {
                self.stats.plug_merges += 1;
                return;
            }
            if self.elv_merge(now, b) {
                return;
            }
        }
        // get_rq
        if !self.get_request(now, &bio) {
            self.wait_for_request(now, b);
            return;
        }
        let rq = self.new_request(now, b);
        if plugged {
            if self.thread_mut(bio.thread).plug.len() >= BLK_MAX_REQUEST_COUNT {
                self.flush_plug(now, bio.thread);
            }
            self.thread_mut(bio.thread).plug.push(rq);
        } else {
            self.insert_unplugged(now, rq);
        }
    }

    /// `blk_rq_merge_ok` / `elv_rq_merge_ok`: may `bio` join request `rq` at
    /// all (either end)? Same operation (so same direction, discard only with
    /// discard, a secure discard only with a secure one), neither a
    /// barrier, `rq` not NOMERGE, and the scheduler's `allow_merge`.
    fn bio_merge_ok(&mut self, now: Ns, rq: RqId, bio: &Bio) -> bool {
        let r = &self.rqs[rq];
        if !rq_mergeable(r) || bio_is_barrier(bio) || r.op != bio.op || r.secure != bio.secure {
            return false;
        }
        self.elevator.allow_merge(ctx!(ref self, now), rq, bio)
    }

    /// `attempt_plug_merge`: back or front merge with a request on the
    /// thread's plug list, newest first.
    fn attempt_plug_merge(&mut self, now: Ns, b: BioId) -> bool {
        let bio = self.bios[b];
        let plug = std::mem::take(&mut self.thread_mut(bio.thread).plug);
        let mut merged = false;
        for &rq in plug.iter().rev() {
            if !self.bio_merge_ok(now, rq, &bio) {
                continue;
            }
            let r = &self.rqs[rq];
            if r.end() == bio.sector {
                if self.bio_attempt_back_merge(rq, b) {
                    merged = true;
                    break;
                }
            } else if r.sector == bio.end() && self.bio_attempt_front_merge(rq, b) {
                merged = true;
                break;
            }
        }
        self.thread_mut(bio.thread).plug = plug;
        merged
    }

    /// `elv_merge` and the merge branch of `blk_queue_bio`: one-hit cache,
    /// hash (back), scheduler lookup (front). True if `b` was merged.
    fn elv_merge(&mut self, now: Ns, b: BioId) -> bool {
        if self.params.nomerges >= 2 {
            return false;
        }
        let bio = self.bios[b];
        if let Some(lm) = self.last_merge {
            if self.bio_merge_ok(now, lm, &bio) {
                let r = &self.rqs[lm];
                if r.end() == bio.sector {
                    return self.back_merge(now, lm, b);
                }
                if r.sector == bio.end() {
                    return self.front_merge(now, lm, b);
                }
            }
        }
        if self.params.nomerges == 1 {
            return false;
        }
        if let Some(h) = self.hash_find(bio.sector) {
            if self.bio_merge_ok(now, h, &bio) {
                return self.back_merge(now, h, b);
            }
        }
        if let Some(f) = self.elevator.merge_lookup(ctx!(self, now), &bio) {
            if self.rqs[f].sector == bio.end() && self.bio_merge_ok(now, f, &bio) {
                return self.front_merge(now, f, b);
            }
        }
        false
    }

    /// `elv_rqhash_find`: the most recently hashed mergeable request ending
    /// at `sector`; requests found NOMERGE are dropped from the hash.
    pub(super) fn hash_find(&mut self, sector: u64) -> Option<RqId> {
        while let Some(rq) = self.hash.find_last(sector) {
            if rq_mergeable(&self.rqs[rq]) {
                return Some(rq);
            }
            self.hash.remove(rq);
        }
        None
    }

    /// Bio back merge into a queued request, then `attempt_back_merge`
    /// (`latter`), else `elv_merged_request`. False if the size cap refused.
    fn back_merge(&mut self, now: Ns, rq: RqId, b: BioId) -> bool {
        if !self.bio_attempt_back_merge(rq, b) {
            return false;
        }
        self.stats.back_merges += 1;
        let next = self.elevator.latter(ctx!(ref self, now), rq);
        if next.is_some_and(|n| self.attempt_merge(now, rq, n)) {
            return true;
        }
        self.elevator.merged(ctx!(self, now), rq, MergeKind::Back);
        let end = self.rqs[rq].end();
        self.hash.reposition(rq, end);
        self.last_merge = Some(rq);
        true
    }

    /// Bio front merge into a queued request, then `attempt_front_merge`
    /// (`former`), else `elv_merged_request`. False if the size cap refused.
    fn front_merge(&mut self, now: Ns, rq: RqId, b: BioId) -> bool {
        if !self.bio_attempt_front_merge(rq, b) {
            return false;
        }
        self.stats.front_merges += 1;
        let prev = self.elevator.former(ctx!(ref self, now), rq);
        if prev.is_some_and(|p| self.attempt_merge(now, p, rq)) {
            return true;
        }
        self.elevator.merged(ctx!(self, now), rq, MergeKind::Front);
        self.last_merge = Some(rq);
        true
    }

    /// `ll_back_merge_fn` / `ll_front_merge_fn` size check: a refusal marks
    /// the request NOMERGE and drops it from `last_merge`.
    fn size_ok(&mut self, rq: RqId, sectors: u32) -> bool {
        let r = &mut self.rqs[rq];
        if r.sectors as u64 + sectors as u64 > self.params.max_sectors() {
            r.nomerge = true;
            if self.last_merge == Some(rq) {
                self.last_merge = None;
            }
            return false;
        }
        true
    }

    /// `bio_attempt_back_merge`: appends bio `b` to `rq`'s chain.
    fn bio_attempt_back_merge(&mut self, rq: RqId, b: BioId) -> bool {
        let bio = self.bios[b];
        if !self.size_ok(rq, bio.sectors) {
            return false;
        }
        let r = &mut self.rqs[rq];
        self.bio_next[r.bio_tail as usize] = b;
        self.bio_next[b as usize] = NIL;
        r.bio_tail = b;
        r.sectors += bio.sectors;
        r.nr_bios += 1;
        r.ioprio = r.ioprio.min(bio.ioprio);
        true
    }

    /// `bio_attempt_front_merge`: prepends bio `b` to `rq`'s chain; the
    /// start sector moves down.
    fn bio_attempt_front_merge(&mut self, rq: RqId, b: BioId) -> bool {
        let bio = self.bios[b];
        if !self.size_ok(rq, bio.sectors) {
            return false;
        }
        let r = &mut self.rqs[rq];
        self.bio_next[b as usize] = r.bio_head;
        r.bio_head = b;
        r.sector = bio.sector;
        r.sectors += bio.sectors;
        r.nr_bios += 1;
        r.ioprio = r.ioprio.min(bio.ioprio);
        true
    }

    /// `attempt_merge(req, next)`: request–request merge of `next` into the
    /// request just before it. Both mergeable, same operation, contiguous,
    /// merged size ≤ `max_sectors_kb`. `merge_requests` is called if `next`
    /// was in the scheduler; `req` keeps the older start time; `next` is
    /// freed.
    pub(super) fn attempt_merge(&mut self, now: Ns, req: RqId, next: RqId) -> bool {
        if req == next {
            return false;
        }
        let (a, n) = (&self.rqs[req], &self.rqs[next]);
        if !rq_mergeable(a)
            || !rq_mergeable(n)
            || a.op != n.op
            || a.secure != n.secure
            || a.end() != n.sector
        {
            return false;
        }
        if a.op == Op::Flush || a.sectors as u64 + n.sectors as u64 > self.params.max_sectors() {
            return false;
        }
        let n = self.rqs[next].clone();
        let a = &mut self.rqs[req];
        self.bio_next[a.bio_tail as usize] = n.bio_head;
        a.bio_tail = n.bio_tail;
        a.sectors += n.sectors;
        a.nr_bios += n.nr_bios;
        a.ioprio = a.ioprio.min(n.ioprio);
        a.start_ns = a.start_ns.min(n.start_ns);
        let end = a.end();
        // elv_merge_requests: `req` is now the union.
        if self.sorted(next) {
            self.elevator.merge_requests(ctx!(self, now), req, next);
        }
        self.hash.remove(next);
        if self.sorted(req) {
            self.hash.reposition(req, end);
        }
        self.last_merge = Some(req);
        self.free_request(next);
        self.stats.request_merges += 1;
        true
    }
}
