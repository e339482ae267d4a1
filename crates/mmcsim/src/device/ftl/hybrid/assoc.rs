//! Bounded log-block associativity (KAST: Cho, Shin, Eom, "KAST:
//! K-Associative Sector Translation for NAND Flash Memory in Real-Time
//! Systems", DATE 2009): a random log block holds pages of at most K
//! logical blocks, so reclaiming it full-merges at most K of them.
//!
//! * A logical block *is in* a random log block while that block holds a
//!   valid page of it (counted per log block, so the state follows from
//!   the mapping alone and a saved state needs nothing more).
//! * A random write of logical block L goes to the newest log block L is
//!   in, if it has a free position and is not being reclaimed (BAST's
//!   rule, Kim et al., IEEE TCE 2002: a logical block keeps writing to its
//!   log block); otherwise to the current (newest) log block, if it has a
//!   free position and already holds L or fewer than K logical blocks;
//!   otherwise the next log block opens — reclaiming the pool's victim
//!   first when the pool is full — and the current one takes no new
//!   logical block any more.
//! * A stripe page whose entries belong to logical blocks going to
//!   different log blocks is programmed once per log block, each program
//!   padded: the log block of one logical block never receives another's
//!   data beyond its K.

use super::{HybridMapping, Placement, RandLog, UNMAPPED};
use crate::device::nand::NandOp;

impl HybridMapping {
    /// Notes a valid page of `lbn` programmed into random log block `unit`.
    pub(super) fn log_gain(&mut self, unit: u32, lbn: u32) {
        let set = &mut self.log_lbns[unit as usize];
        match set.iter_mut().find(|e| e.0 == lbn) {
            Some(e) => e.1 += 1,
            None => set.push((lbn, 1)),
        }
    }

    /// Notes a valid page of `lbn` in random log block `unit` invalidated.
    pub(super) fn log_lose(&mut self, unit: u32, lbn: u32) {
        let set = &mut self.log_lbns[unit as usize];
        if let Some(i) = set.iter().position(|e| e.0 == lbn) {
            set[i].1 -= 1;
            if set[i].1 == 0 {
                set.swap_remove(i);
            }
        }
    }

    /// True when random log block `unit` holds a valid page of `lbn`.
    fn log_holds(&self, unit: u32, lbn: u32) -> bool {
        self.log_lbns[unit as usize].iter().any(|e| e.0 == lbn)
    }

    /// The logical blocks with valid pages in random log block `unit`.
    pub(super) fn log_associativity(&self, unit: u32) -> usize {
        self.log_lbns[unit as usize].len()
    }

    /// Rebuilds the per-log-block counts from the reverse map (after a
    /// saved state is loaded).
    pub(super) fn rebuild_log_lbns(&mut self) {
        self.log_lbns.iter_mut().for_each(Vec::clear);
        if self.assoc_limit.is_none() {
            return;
        }
        for i in 0..self.rand.len() {
            let unit = self.rand[i].unit;
            for k in 0..self.positions() {
                for e in 0..self.geo.stripe_slots() {
                    let lpn = self.p2l[self.slot_at(unit, k, e) as usize];
                    if lpn != UNMAPPED {
                        self.log_gain(unit, lpn / self.unit_slots);
                    }
                }
            }
        }
    }

    /// Integrity check: the counts of random log block `unit` match its
    /// valid pages and stay within K (always true under FAST).
    pub(super) fn log_lbns_agree(&self, unit: u32) -> bool {
        let Some(k) = self.assoc_limit else {
            return true;
        };
        let mut counted: Vec<(u32, u32)> = Vec::new();
        for pos in 0..self.positions() {
            for e in 0..self.geo.stripe_slots() {
                let lpn = self.p2l[self.slot_at(unit, pos, e) as usize];
                if lpn == UNMAPPED {
                    continue;
                }
                let lbn = lpn / self.unit_slots;
                match counted.iter_mut().find(|c| c.0 == lbn) {
                    Some(c) => c.1 += 1,
                    None => counted.push((lbn, 1)),
                }
            }
        }
        let mut recorded = self.log_lbns[unit as usize].clone();
        counted.sort_unstable();
        recorded.sort_unstable();
        counted == recorded && counted.len() <= k as usize
    }

    /// A log block that takes writes: a free position, not being
    /// reclaimed.
    fn open_for_writes(&self, r: &RandLog) -> bool {
        r.next < self.positions() && Some(r.unit) != self.reclaiming
    }

    /// The random log block (pool index) a page of `lbn` goes to when
    /// `new` other logical blocks not yet in the current log block go
    /// there with it; `None` when a new log block must open.
    fn route(&self, lbn: u32, new: u32) -> Option<usize> {
        let k = self.assoc_limit.expect("KAST routing");
        if let Some(i) = self.rand.iter().rposition(|r| self.log_holds(r.unit, lbn)) {
            if self.open_for_writes(&self.rand[i]) {
                return Some(i);
            }
        }
        let i = self.rand.len().checked_sub(1)?;
        let c = &self.rand[i];
        let fits = self.log_holds(c.unit, lbn) || self.log_associativity(c.unit) as u32 + new < k;
        (self.open_for_writes(c) && fits).then_some(i)
    }

    /// A random host write under KAST: each entry's logical block routed
    /// as the module says, entries going to the same log block programmed
    /// together. `first` is where this write's operations began in `ops`
    /// (an incremental merge step may precede); the placement reports the
    /// operations up to the last reclaim as reclaim work and the die of the
    /// program after them.
    pub(super) fn write_random_kast(
        &mut self,
        entries: &[(u32, u32)],
        first: usize,
        ops: &mut Vec<NandOp>,
    ) -> Placement {
        let s = self.unit_slots;
        let dies = self.geo.dies();
        let mut reclaim_end = ops.len();
        let mut die = None;
        self.rest.clear();
        self.rest.extend_from_slice(entries);
        while let Some(&(lpn, _)) = self.rest.first() {
            let i = match self.route(lpn / s, 0) {
                Some(i) => i,
                None => {
                    let before = ops.len();
                    self.open_rand_log(ops);
                    if ops.len() > before {
                        reclaim_end = ops.len();
                        die = None;
                    }
                    self.route(lpn / s, 0)
                        .expect("a newly opened random log block takes any logical block")
                }
            };
            self.stage_for(i);
            let r = self.rand[i];
            die.get_or_insert(r.next % dies);
            self.program(r.unit, r.next, ops);
            self.rand[i].next += 1;
        }
        Placement {
            die: die.unwrap_or(0),
            reclaim_ops: reclaim_end - first,
        }
    }

    /// Moves into `stage` the entries of `rest` that go to log block `i`
    /// together (the first one does by construction).
    fn stage_for(&mut self, i: usize) {
        let s = self.unit_slots;
        let unit = self.rand[i].unit;
        self.stage.clear();
        let mut new = 0u32;
        let mut kept = 0;
        for j in 0..self.rest.len() {
            let e = self.rest[j];
            let lbn = e.0 / s;
            let staged = self.stage.iter().any(|x| x.0 / s == lbn);
            if staged || self.route(lbn, new) == Some(i) {
                if !staged && !self.log_holds(unit, lbn) {
                    new += 1;
                }
                self.stage.push(e);
            } else {
                self.rest[kept] = e;
                kept += 1;
            }
        }
        self.rest.truncate(kept);
    }

    /// The logical block a superblock in the sequential-log role holds:
    /// the open sequential log block's, or that of the merge in progress
    /// holding a retired one.
    pub(super) fn seq_lbn_of(&self, unit: u32) -> Option<u32> {
        if let Some(w) = self.seq.filter(|w| w.unit == unit) {
            return Some(w.lbn);
        }
        self.job
            .filter(|j| j.old_seq == Some(unit) || (j.unit == unit && !j.full))
            .map(|j| j.lbn)
    }
}
