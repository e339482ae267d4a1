//! Plugging (reference §1.1 step 5): a thread's plugged requests are held
//! back, then flushed into the scheduler, each first trying a whole-request
//! back merge (`ELEVATOR_INSERT_SORT_MERGE`).

use super::request::RqId;
use super::{is_barrier, BlockLayer};
use crate::types::Ns;

impl BlockLayer {
    /// `blk_flush_plug_list` for `thread`: in submission order, FLUSH/FUA
    /// requests go to the dispatch list, others try `last_merge` then the
    /// hash hit ending at their start, else the scheduler's `add_request`.
    pub(super) fn flush_plug(&mut self, now: Ns, thread: u32) {
        let Some(t) = self.threads.get_mut(thread as usize) else {
            return;
        };
        if t.plug.is_empty() {
            return;
        }
        let mut plug = std::mem::take(&mut t.plug);
        for &rq in &plug {
            if is_barrier(&self.rqs[rq]) {
                self.insert_flush(now, rq);
            } else if !self.attempt_insert_merge(now, rq) {
                self.add_sorted(now, rq);
            }
        }
        plug.clear();
        self.threads[thread as usize].plug = plug;
    }

    /// `elv_attempt_insert_merge`: merge the whole request `rq` behind
    /// `last_merge`, or behind the hashed request ending at its start.
    fn attempt_insert_merge(&mut self, now: Ns, rq: RqId) -> bool {
        if self.params.nomerges >= 2 {
            return false;
        }
        if let Some(lm) = self.last_merge {
            if self.attempt_merge(now, lm, rq) {
                return true;
            }
        }
        if self.params.nomerges == 1 {
            return false;
        }
        let sector = self.rqs[rq].sector;
        match self.hash_find(sector) {
            Some(h) => self.attempt_merge(now, h, rq),
            None => false,
        }
    }
}
