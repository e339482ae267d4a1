//! Incremental merging (`[gc] copy_budget_pages` with the hybrid mapping):
//! the phased garbage collection of managed flash, in which a write
//! command does a part of a merge within its timeout and the rest waits
//! for the next command (SanDisk, Traister and Lin, "Methods for phased
//! garbage collection", US 7,444,461 B2, filed 2006; US 7,444,462 B2 names
//! the SD protocol's 250 ms write timeout as the limit).
//!
//! * A merge in progress ([`MergeJob`]) copies one logical block in place
//!   into a superblock, a budget of stripe pages per step, in position
//!   order; the pages each die programs are fixed when it begins (up to
//!   its last valid page then: data the host writes later beyond them
//!   stays in its log block, newer than the merged copy), and every copy
//!   reads the newest version, so host writes during the merge stay
//!   valid. When the last position is copied the superblock becomes the
//!   data block and the old one (and a retired sequential log block) is
//!   erased.
//! * Full merges (a retired out-of-order sequential log block, or each
//!   logical block of a random log block being reclaimed) fill a free
//!   superblock; partial merges fill the sequential log block's rest.
//!   Switch merges need no copy and stay immediate.
//! * Reclaiming a random log block begins when the pool is full and one
//!   of its log blocks is full (the policy's victim among the full ones:
//!   a log block with free pages still takes writes and is not merged
//!   ahead); its logical blocks are merged one after another, then it is
//!   erased. It takes no more writes meanwhile.
//! * A step runs before every host stripe page (foreground) and in idle
//!   time ([`super::Mapping::idle_collect`]). A merge needed while
//!   another is in progress, or a new log block needed while the reclaim
//!   is unfinished, finishes the one in progress at once: an emergency,
//!   counted in `device.gc.emergencies`.

use super::{HybridMapping, Purpose, Role, SeqLog};
use crate::device::nand::NandOp;

/// A merge in progress.
#[derive(Clone, Copy, Debug)]
pub(super) struct MergeJob {
    /// The logical block merged.
    pub(super) lbn: u32,
    /// The superblock filled in place (a free one for a full merge, the
    /// sequential log block for a partial merge).
    pub(super) unit: u32,
    /// The next position to copy.
    pub(super) next: u32,
    /// Full merge (else partial).
    pub(super) full: bool,
    /// The retired sequential log block of `lbn`, erased at the end (a
    /// full merge of the sequential log block's logical block).
    pub(super) old_seq: Option<u32>,
}

impl HybridMapping {
    /// One step of at most `budget` stripe-page copies (`None` = the whole
    /// merge) of the merge in progress, beginning the reclaim's next
    /// logical block when none is; true when there was work.
    pub(super) fn merge_step(&mut self, budget: Option<u32>, ops: &mut Vec<NandOp>) -> bool {
        if self.job.is_none() {
            let Some(victim) = self.reclaiming else {
                return false;
            };
            match self.first_lbn_in(victim) {
                Some(lbn) => self.begin_full(lbn, ops),
                None => {
                    self.end_reclaim(victim, ops);
                    return true;
                }
            }
        }
        let job = self.job.expect("a merge in progress");
        self.pages_end.clone_from(&self.job_pages_end);
        let next = self.copy_positions(job.unit, job.lbn, job.next, budget, Purpose::Reclaim, ops);
        if next == self.positions() {
            self.finish_job(job, ops);
        } else {
            self.job = Some(MergeJob { next, ..job });
        }
        true
    }

    /// Finishes every merge and reclaim in progress at once.
    pub(super) fn settle(&mut self, ops: &mut Vec<NandOp>) {
        while self.merge_step(None, ops) {}
    }

    /// Begins a full merge of `lbn` into a free superblock (finishing a
    /// merge in progress first). The sequential log block, if it holds
    /// `lbn`, is retired into the merge.
    pub(super) fn begin_full(&mut self, lbn: u32, ops: &mut Vec<NandOp>) {
        self.finish_job_now(ops);
        let unit = self.alloc(false, Role::Target(lbn));
        let old_seq = self.seq.filter(|w| w.lbn == lbn).map(|w| w.unit);
        if old_seq.is_some() {
            self.seq = None;
        }
        self.measure_pages_end(lbn, 0);
        self.job_pages_end.clone_from(&self.pages_end);
        self.job = Some(MergeJob {
            lbn,
            unit,
            next: 0,
            full: true,
            old_seq,
        });
    }

    /// Begins the partial merge of retired sequential log block `sw` (its
    /// offsets from `sw.next` on copied in), finishing a merge in progress
    /// first.
    pub(super) fn begin_partial(&mut self, sw: SeqLog, ops: &mut Vec<NandOp>) {
        self.finish_job_now(ops);
        self.measure_pages_end(sw.lbn, sw.next);
        self.job_pages_end.clone_from(&self.pages_end);
        self.job = Some(MergeJob {
            lbn: sw.lbn,
            unit: sw.unit,
            next: sw.next / self.geo.stripe_slots(),
            full: false,
            old_seq: None,
        });
    }

    /// A merge needed while another is in progress: the one in progress
    /// is finished at once (an emergency).
    fn finish_job_now(&mut self, ops: &mut Vec<NandOp>) {
        if let Some(job) = self.job {
            self.emergencies += 1;
            self.pages_end.clone_from(&self.job_pages_end);
            self.copy_positions(job.unit, job.lbn, job.next, None, Purpose::Reclaim, ops);
            self.finish_job(job, ops);
        }
    }

    /// The merge's last position is copied: its superblock becomes the
    /// data block, the old data block and a retired sequential log block
    /// are erased.
    fn finish_job(&mut self, job: MergeJob, ops: &mut Vec<NandOp>) {
        self.job = None;
        if job.full {
            self.install(job.lbn, job.unit, ops);
            if let Some(old) = job.old_seq {
                self.erase(old, ops);
            }
            self.stats.merges_full += 1;
        } else {
            self.install(job.lbn, job.unit, ops);
            self.stats.merges_partial += 1;
        }
        self.stats.gc_runs += 1;
    }

    /// Every logical block of the victim is merged: it is erased and
    /// leaves the pool; static wear leveling is consulted.
    fn end_reclaim(&mut self, victim: u32, ops: &mut Vec<NandOp>) {
        self.reclaiming = None;
        if let Some(i) = self.rand.iter().position(|r| r.unit == victim) {
            self.rand.remove(i);
        }
        self.erase(victim, ops);
        self.static_wear_leveling(ops);
    }

    /// The pool is full and a new log block is needed now: the reclaim in
    /// progress (or one of the policy's victim) is finished at once.
    pub(super) fn reclaim_now(&mut self, ops: &mut Vec<NandOp>) {
        self.emergencies += 1;
        if self.reclaiming.is_none() {
            let i = self.pool_victim().unwrap_or_else(|| {
                panic!("mmcsim device: simulator bug: the hybrid random log pool is full but holds no log block to reclaim")
            });
            self.reclaiming = Some(self.rand[i].unit);
        }
        while self.reclaiming.is_some() {
            self.merge_step(None, ops);
        }
    }

    /// With the pool full and nothing being reclaimed, reclaiming the
    /// policy's victim among the *full* random log blocks begins. A log
    /// block with free pages still takes its logical blocks' writes (under
    /// KAST, the newest log block each of them is in): merging it ahead
    /// would throw those pages away and merge the logical blocks being
    /// written now, as a page-level GC never collects a block still open
    /// for writes. With no full log block, nothing begins: a new log block
    /// needed later reclaims at once (an emergency, within the pause bound
    /// the profile derives).
    pub(super) fn begin_reclaim_ahead(&mut self) {
        if self.reclaiming.is_some() || (self.rand.len() as u32) < self.rand_max {
            return;
        }
        if let Some(i) = self.rand_victim() {
            self.reclaiming = Some(self.rand[i].unit);
        }
    }
}
