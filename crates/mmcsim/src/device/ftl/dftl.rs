//! Demand-cached page mapping in the DFTL style (Gupta, Kim and Urgaonkar,
//! "DFTL: a flash translation layer employing demand-based selective
//! caching of page-level address mappings", ASPLOS 2009) — the direction of
//! 2013+ eMMC firmware (emmc-parameters.md §3 "page-level ... with a
//! demand-loaded map (DFTL-like)").
//!
//! * The page-level table lives on NAND in *translation pages* of 1,024
//!   4-byte entries (one 4 KiB slot each), written out of place like data;
//!   the global translation directory (GTD, in SRAM) locates them. Here
//!   they are extra logical pages `user_lpns + t` of an inner
//!   [`PageMapping`], so garbage collection and wear leveling move them
//!   like data and the GTD is the inner table's entry for them.
//! * The cached mapping table (CMT, `cmt_entries`, LRU) holds recently used
//!   entries. A miss reads the entry's translation page (one tR and
//!   transfer on its die) before the access; evicting a dirty entry writes
//!   its translation page back — read, then program a new copy — with every
//!   other dirty entry of that page (DFTL's batch update), which become
//!   clean.
//! * Host writes and discards make their entries dirty in the CMT. Data
//!   moved by GC changes translations too: a cached entry is updated in the
//!   CMT; for uncached ones the translation page is rewritten at once
//!   (batched per page), as in DFTL.
//! * The translation the controller acts on — the CMT entry, else the
//!   translation page's — must always name the slot with the newest data;
//!   [`Mapping::check`] proves it besides the page-level checks.

use super::integrity::IntegrityError;
use super::integrity_journal::{MapChange, MapJournal};
use super::page::PageMapping;
use super::{FtlStats, Mapping, MappingScheme, Placement, UNMAPPED};
use crate::device::cache::ENTRIES_PER_MAP_PAGE;
use crate::device::config::{FtlConfig, GcConfig, WearLevelingConfig};
use crate::device::nand::{Geometry, NandOp};
use crate::device::state::{StateError, StateReader, StateWriter};

/// "Not in the CMT" / list end marker.
const NONE: u32 = u32::MAX;

/// Most SANITIZE rounds (collect the blocks holding invalid slots, then
/// write back the translation pages the moves changed, whose old copies
/// are invalid in turn). Each round's write-back lands in translation-only
/// stripe pages, so the second or third round moves no host data and the
/// loop ends; the bound only guards against a simulator bug [est].
const SANITIZE_ROUNDS_MAX: u32 = 16;

/// The DFTL mapping: an inner page mapping over data and translation pages,
/// the on-flash translations and the cached mapping table.
#[derive(Clone, Debug)]
pub struct DftlMapping {
    inner: PageMapping,
    /// Host-visible LPNs.
    user: u32,
    /// Per host LPN: the slot its translation page records.
    flash_map: Vec<u32>,
    /// Per translation page: the oracle version of its newest copy.
    tver: Vec<u32>,
    next_tver: u32,
    /// Per host LPN: its CMT entry, or [`NONE`].
    cmt_of: Vec<u32>,
    /// CMT entries: LPN, slot, dirty, LRU links (`prev` towards the most
    /// recently used end).
    cmt_lpn: Vec<u32>,
    cmt_slot: Vec<u32>,
    cmt_dirty: Vec<bool>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most and least recently used entries.
    mru: u32,
    lru: u32,
    capacity: u32,
    /// Translation pages waiting to be written back (deduplicated).
    dirty_tpages: Vec<u32>,
    /// Per translation page: queued in `dirty_tpages` (its membership
    /// test in O(1); GC can queue thousands at once).
    tpage_queued: Vec<bool>,
    /// Per translation page: the CMT entries made dirty since its last
    /// write-back, so a write-back visits those, not the page's 1024 LPNs.
    /// An entry evicted meanwhile stays listed and is skipped (it is clean
    /// or caches another page's LPN by then).
    dirty_in: Vec<Vec<u32>>,
    /// Scratch: LPNs moved by GC.
    moved: Vec<u32>,
    /// Scratch: translation pages as `(lpn, version)` for the inner write.
    batch: Vec<(u32, u32)>,
    /// Scratch: NAND work of untimed calls, dropped.
    scratch_ops: Vec<NandOp>,
    stats: FtlStats,
    /// The host LPNs' translation changes for the incremental integrity
    /// check: the inner table's changes (host programs, GC moves, trims)
    /// without the translation pages'. The translation the controller acts
    /// on equals the inner table's after every command
    /// ([`Mapping::check`] proves it), so the check sees DFTL's view.
    journal: MapJournal,
    /// Scratch: changes drained from the inner table's journal.
    inner_changes: Vec<MapChange>,
}

impl DftlMapping {
    /// An empty DFTL on `geo`: the mapped pages (raw × (1 − OP)) are split
    /// into host pages and the translation pages that map them.
    pub fn new(
        geo: Geometry,
        ftl: &FtlConfig,
        gc: &GcConfig,
        wl: &WearLevelingConfig,
    ) -> DftlMapping {
        let total = super::user_lpns(geo.slots(), ftl.over_provisioning);
        let tpages = total.div_ceil(ENTRIES_PER_MAP_PAGE + 1);
        let user = total - tpages;
        let mut inner = PageMapping::with_lpns(geo, total, gc, wl);
        inner.record_moves();
        let cap = ftl.dftl().cmt_entries.min(user.max(1));
        DftlMapping {
            inner,
            user,
            flash_map: vec![UNMAPPED; user as usize],
            tver: vec![0; tpages as usize],
            next_tver: 1,
            cmt_of: vec![NONE; user as usize],
            cmt_lpn: Vec::with_capacity(cap as usize),
            cmt_slot: Vec::with_capacity(cap as usize),
            cmt_dirty: Vec::with_capacity(cap as usize),
            prev: Vec::with_capacity(cap as usize),
            next: Vec::with_capacity(cap as usize),
            mru: NONE,
            lru: NONE,
            capacity: cap,
            dirty_tpages: Vec::with_capacity(64),
            tpage_queued: vec![false; tpages as usize],
            dirty_in: vec![Vec::new(); tpages as usize],
            moved: Vec::with_capacity(4096),
            batch: Vec::with_capacity(geo.stripe_slots() as usize),
            scratch_ops: Vec::with_capacity(256),
            stats: FtlStats::default(),
            journal: MapJournal::default(),
            inner_changes: Vec::new(),
        }
    }

    fn tpage_of(lpn: u32) -> u32 {
        lpn / ENTRIES_PER_MAP_PAGE
    }

    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        if p == NONE {
            self.mru = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.lru = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    fn push_mru(&mut self, i: u32) {
        self.prev[i as usize] = NONE;
        self.next[i as usize] = self.mru;
        if self.mru != NONE {
            self.prev[self.mru as usize] = i;
        }
        self.mru = i;
        if self.lru == NONE {
            self.lru = i;
        }
    }

    /// Reads translation page `t` from NAND (if it was ever written).
    fn read_tpage(&mut self, t: u32, ops: &mut Vec<NandOp>) {
        if let Some(slot) = self.inner.lookup(self.user + t) {
            let g = self.inner.blocks().geometry();
            ops.push(NandOp::Read {
                die: g.slot_die(slot),
                bytes: 4096,
                upper: Geometry::is_upper_page(g.slot_page(slot)),
            });
            self.stats.translation_reads += 1;
        }
    }

    /// The CMT entry of `lpn`, loaded on a miss (translation-page read;
    /// the LRU entry evicted, its page queued for write-back if dirty).
    fn entry(&mut self, lpn: u32, ops: &mut Vec<NandOp>) -> u32 {
        let i = self.cmt_of[lpn as usize];
        if i != NONE {
            self.stats.cmt_hits += 1;
            self.unlink(i);
            self.push_mru(i);
            return i;
        }
        self.stats.cmt_misses += 1;
        let i = if (self.cmt_lpn.len() as u32) < self.capacity {
            self.cmt_lpn.push(NONE);
            self.cmt_slot.push(UNMAPPED);
            self.cmt_dirty.push(false);
            self.prev.push(NONE);
            self.next.push(NONE);
            self.cmt_lpn.len() as u32 - 1
        } else {
            let v = self.lru;
            self.unlink(v);
            let old = self.cmt_lpn[v as usize];
            if self.cmt_dirty[v as usize] {
                self.queue_writeback(Self::tpage_of(old));
                // Written back with its page below; keep its translation
                // until then through the queue.
                self.flash_map[old as usize] = self.cmt_slot[v as usize];
            }
            self.cmt_of[old as usize] = NONE;
            v
        };
        self.read_tpage(Self::tpage_of(lpn), ops);
        self.cmt_lpn[i as usize] = lpn;
        self.cmt_slot[i as usize] = self.flash_map[lpn as usize];
        self.cmt_dirty[i as usize] = false;
        self.cmt_of[lpn as usize] = i;
        self.push_mru(i);
        i
    }

    fn queue_writeback(&mut self, t: u32) {
        if !self.tpage_queued[t as usize] {
            self.tpage_queued[t as usize] = true;
            self.dirty_tpages.push(t);
        }
    }

    /// Writes the queued translation pages back: each is read, merged with
    /// the CMT's dirty entries of its range (which become clean) and
    /// programmed anew, a stripe page of translation pages at a time. Data
    /// that GC moves meanwhile updates the translations it changed, until
    /// nothing is left.
    fn write_back(&mut self, ops: &mut Vec<NandOp>) {
        let ss = self.inner.blocks().geometry().stripe_slots() as usize;
        loop {
            self.absorb_moves();
            if self.dirty_tpages.is_empty() {
                return;
            }
            self.batch.clear();
            while self.batch.len() < ss {
                let Some(t) = self.dirty_tpages.pop() else {
                    break;
                };
                self.tpage_queued[t as usize] = false;
                self.read_tpage(t, ops);
                self.merge_dirty_entries(t);
                self.tver[t as usize] = self.next_tver;
                self.batch.push((self.user + t, self.next_tver));
                self.next_tver += 1;
                self.stats.translation_writes += 1;
            }
            let batch = std::mem::take(&mut self.batch);
            self.inner.write(&batch, ops);
            self.batch = batch;
        }
    }

    /// Marks CMT entry `i` dirty, listing it under its translation page.
    fn mark_dirty(&mut self, i: u32) {
        if !self.cmt_dirty[i as usize] {
            self.cmt_dirty[i as usize] = true;
            self.dirty_in[Self::tpage_of(self.cmt_lpn[i as usize]) as usize].push(i);
        }
    }

    /// Folds the CMT's dirty entries of translation page `t` into the
    /// on-flash translations (they become clean): DFTL's batch update.
    fn merge_dirty_entries(&mut self, t: u32) {
        let mut listed = std::mem::take(&mut self.dirty_in[t as usize]);
        for &i in &listed {
            let lpn = self.cmt_lpn[i as usize];
            if self.cmt_dirty[i as usize] && Self::tpage_of(lpn) == t {
                self.flash_map[lpn as usize] = self.cmt_slot[i as usize];
                self.cmt_dirty[i as usize] = false;
            }
        }
        listed.clear();
        self.dirty_in[t as usize] = listed;
    }

    /// Takes the LPNs GC moved: cached entries follow in the CMT (dirty);
    /// the translation pages of the others are queued for rewrite.
    fn absorb_moves(&mut self) {
        self.moved.clear();
        self.inner.take_moves(&mut self.moved);
        for k in 0..self.moved.len() {
            let lpn = self.moved[k];
            if lpn >= self.user {
                continue; // a translation page: the GTD (inner table) follows it
            }
            let now = self.inner.lookup(lpn).unwrap_or(UNMAPPED);
            let i = self.cmt_of[lpn as usize];
            if i != NONE {
                self.cmt_slot[i as usize] = now;
                self.mark_dirty(i);
            } else {
                self.flash_map[lpn as usize] = now;
                self.queue_writeback(Self::tpage_of(lpn));
            }
        }
    }

    /// The translation the controller acts on for `lpn`.
    fn view(&self, lpn: u32) -> u32 {
        match self.cmt_of[lpn as usize] {
            NONE => self.flash_map[lpn as usize],
            i => self.cmt_slot[i as usize],
        }
    }

    fn add_inner_stats(&self, mut s: FtlStats) -> FtlStats {
        let i = self.inner.stats();
        s.programmed_slots += i.programmed_slots;
        s.padding_slots += i.padding_slots;
        s.gc_runs += i.gc_runs;
        s.gc_slots_moved += i.gc_slots_moved;
        s.wl_migrations += i.wl_migrations;
        s.wl_slots_moved += i.wl_slots_moved;
        s.nand_reads += i.nand_reads;
        s.nand_programs += i.nand_programs;
        s.nand_erases += i.nand_erases;
        s
    }
}

impl Mapping for DftlMapping {
    fn clone_box(&self) -> Box<dyn Mapping> {
        Box::new(self.clone())
    }

    fn scheme(&self) -> MappingScheme {
        MappingScheme::Dftl
    }

    fn owns_translation(&self) -> bool {
        true
    }

    fn user_lpns(&self) -> u32 {
        self.user
    }

    fn lookup(&self, lpn: u32) -> Option<u32> {
        match self.view(lpn) {
            UNMAPPED => None,
            s => Some(s),
        }
    }

    fn translate(&mut self, lpn: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.entry(lpn, ops);
        self.write_back(ops);
        self.lookup(lpn)
    }

    fn write(&mut self, entries: &[(u32, u32)], ops: &mut Vec<NandOp>) -> Placement {
        let first = ops.len();
        for &(lpn, _) in entries {
            self.entry(lpn, ops);
        }
        self.write_back(ops);
        let before = ops.len() - first;
        let p = self.inner.write(entries, ops);
        for &(lpn, _) in entries {
            // Loaded above; reloaded only if a later entry of this stripe
            // page evicted it (a CMT smaller than a stripe page).
            let i = match self.cmt_of[lpn as usize] {
                NONE => self.entry(lpn, ops),
                i => i,
            };
            self.cmt_slot[i as usize] = self.inner.lookup(lpn).unwrap_or(UNMAPPED);
            self.mark_dirty(i);
        }
        self.write_back(ops);
        Placement {
            die: p.die,
            reclaim_ops: before + p.reclaim_ops,
        }
    }

    /// ERASE: the blocks left without valid data — host data or
    /// translation pages — are erased, as in the page mapping (no data
    /// moves, so no translation changes).
    fn erase_unmapped(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.inner.erase_unmapped(ops)
    }

    /// SANITIZE: the page mapping's sanitize over host data and translation
    /// pages alike, the moved host LPNs' translations then updated as GC
    /// does (cached entries dirty in the CMT, the others by a batched
    /// translation-page write-back), repeated until that write-back leaves
    /// no stale translation page behind: afterwards no block holds an
    /// invalid slot. Returns the blocks (stripes) collected over all rounds.
    fn sanitize(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        let mut n = 0;
        for _ in 0..SANITIZE_ROUNDS_MAX {
            n += self.inner.sanitize(ops)?;
            self.write_back(ops);
            if self.inner.invalid_slots() == Some(0) {
                break;
            }
        }
        Some(n)
    }

    /// Invalid slots of host data and of stale translation pages.
    fn invalid_slots(&self) -> Option<u64> {
        self.inner.invalid_slots()
    }

    /// Fewest free blocks on any die, as in the page mapping (translation
    /// pages share the blocks with host data).
    fn min_free_blocks_per_die(&self) -> Option<u32> {
        self.inner.min_free_blocks_per_die()
    }

    /// BKOPS: one victim collected as in the page mapping, then the moved
    /// host LPNs' translations updated as foreground GC's are (CMT entries
    /// dirtied, translation pages of uncached ones written back).
    fn background_collect(&mut self, target: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let die = self.inner.background_collect(target, ops)?;
        self.write_back(ops);
        Some(die)
    }

    fn discard(&mut self, lpn: u32, ops: &mut Vec<NandOp>) {
        let i = self.entry(lpn, ops);
        self.inner.trim(lpn);
        self.cmt_slot[i as usize] = UNMAPPED;
        self.mark_dirty(i);
        self.write_back(ops);
    }

    fn trim(&mut self, lpn: u32) {
        let mut ops = std::mem::take(&mut self.scratch_ops);
        self.discard(lpn, &mut ops);
        ops.clear();
        self.scratch_ops = ops;
    }

    fn stats(&self) -> FtlStats {
        self.add_inner_stats(self.stats)
    }

    fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
        self.inner.reset_stats();
    }

    fn restore_stats(&mut self, saved: FtlStats) {
        // `saved` includes the inner counters; keep them there.
        self.inner.reset_stats();
        self.stats = saved;
    }

    fn erase_counts(&self) -> &[u32] {
        self.inner.erase_counts()
    }

    fn journal(&mut self) -> Option<&mut MapJournal> {
        let inner = self.inner.journal()?;
        if !inner.is_recording() {
            inner.start();
        }
        inner.drain_into(&mut self.inner_changes);
        for c in self.inner_changes.drain(..) {
            let (MapChange::Map { lpn, .. } | MapChange::Unmap { lpn }) = c;
            if lpn < self.user {
                self.journal.record(c);
            }
        }
        Some(&mut self.journal)
    }

    /// The host data in `slot`; `None` for a translation page too.
    fn slot_record(&self, slot: u32) -> Option<(u32, u32)> {
        self.inner
            .slot_record(slot)
            .filter(|&(lpn, _)| lpn < self.user)
    }

    /// Saves the translation pages' versions, the inner page mapping (host
    /// data and translation pages, whose L2P entries for the translation
    /// pages are the GTD), the on-flash translations and the CMT from its
    /// most to its least recently used entry (LPN, slot, dirty).
    fn save_state(&self, w: &mut StateWriter) -> Result<(), StateError> {
        if !self.dirty_tpages.is_empty() {
            return Err(StateError::NotAtRest(
                "the DFTL has translation pages waiting for write-back: a state is saved between commands",
            ));
        }
        w.u32s(&self.tver);
        w.u32(self.next_tver);
        self.inner.save_state(w)?;
        w.u32s(&self.flash_map);
        let (mut lpns, mut slots, mut dirty) = (Vec::new(), Vec::new(), Vec::new());
        let mut i = self.mru;
        while i != NONE {
            lpns.push(self.cmt_lpn[i as usize]);
            slots.push(self.cmt_slot[i as usize]);
            dirty.push(u32::from(self.cmt_dirty[i as usize]));
            i = self.next[i as usize];
        }
        w.u32(lpns.len() as u32);
        for k in 0..lpns.len() {
            w.u32(lpns[k]);
            w.u32(slots[k]);
            w.u32(dirty[k]);
        }
        Ok(())
    }

    fn load_state(&mut self, r: &mut StateReader<'_>, expected: &[u32]) -> Result<(), StateError> {
        let corrupt = |what: String| Err(StateError::corrupt(what));
        r.u32s_into("the translation-page versions", &mut self.tver)?;
        self.next_tver = r.u32("the next translation-page version")?;
        if let Some(t) = self.tver.iter().position(|&v| v >= self.next_tver) {
            return corrupt(format!(
                "translation page {t} has version {}, not below the next ({})",
                self.tver[t], self.next_tver
            ));
        }
        let mut all = expected.to_vec();
        all.extend_from_slice(&self.tver);
        self.inner.load_state(r, &all)?;
        r.u32s_into("the on-flash translations", &mut self.flash_map)?;
        let slots = self.inner.blocks().geometry().slots();
        if let Some(l) = self
            .flash_map
            .iter()
            .position(|&s| s != UNMAPPED && s >= slots)
        {
            return corrupt(format!(
                "the translation of LPN {l} names slot {}, outside the array",
                self.flash_map[l]
            ));
        }
        let n = r.u32("the cached mapping table")?;
        if n > self.capacity {
            return corrupt(format!(
                "{n} cached mapping entries, but the CMT holds {}",
                self.capacity
            ));
        }
        self.cmt_of.iter_mut().for_each(|c| *c = NONE);
        for v in [
            &mut self.cmt_lpn,
            &mut self.cmt_slot,
            &mut self.prev,
            &mut self.next,
        ] {
            v.clear();
        }
        self.cmt_dirty.clear();
        self.dirty_in.iter_mut().for_each(Vec::clear);
        self.mru = NONE;
        self.lru = NONE;
        let mut entries = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let lpn = r.u32("the cached mapping table")?;
            let slot = r.u32("the cached mapping table")?;
            let dirty = r.u32("the cached mapping table")?;
            entries.push((lpn, slot, dirty));
        }
        // Pushed least recently used first, so the first saved ends MRU.
        for &(lpn, slot, dirty) in entries.iter().rev() {
            if lpn >= self.user
                || self.cmt_of[lpn as usize] != NONE
                || (slot != UNMAPPED && slot >= slots)
                || dirty > 1
            {
                return corrupt(format!(
                    "the cached mapping entry (LPN {lpn}, slot {slot}, dirty {dirty}) is out of range or repeated"
                ));
            }
            let i = self.cmt_lpn.len() as u32;
            self.cmt_lpn.push(lpn);
            self.cmt_slot.push(slot);
            self.cmt_dirty.push(dirty == 1);
            if dirty == 1 {
                self.dirty_in[Self::tpage_of(lpn) as usize].push(i);
            }
            self.prev.push(NONE);
            self.next.push(NONE);
            self.cmt_of[lpn as usize] = i;
            self.push_mru(i);
        }
        self.dirty_tpages.clear();
        self.tpage_queued.fill(false);
        self.stats = FtlStats::default();
        Ok(())
    }

    fn check(&self, pending: &[(u32, u32)], expected: &[u32]) -> Result<(), IntegrityError> {
        let mut all = expected.to_vec();
        all.extend_from_slice(&self.tver);
        self.inner.check(pending, &all)?;
        for lpn in 0..self.user {
            let truth = self.inner.lookup(lpn).unwrap_or(UNMAPPED);
            let view = self.view(lpn);
            if view != truth {
                return Err(IntegrityError::Translation { lpn, view, truth });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::config::DftlConfig;
    use crate::device::ftl::block_manager::tests::geo;
    use crate::device::ftl::VictimPolicy;

    fn tiny(cmt_entries: u32) -> DftlMapping {
        DftlMapping::new(
            geo(16, 8),
            &FtlConfig {
                mapping: MappingScheme::Dftl,
                over_provisioning: 0.3,
                atomic_write: false,
                atomic_commit_map_pages: 1,
                hybrid: None,
                dftl: Some(DftlConfig { cmt_entries }),
            },
            &GcConfig {
                policy: VictimPolicy::Greedy,
                start_below_free_blocks_per_die: 4,
                stop_at_free_blocks_per_die: 6,
                background: false,
                bkops_target_free_blocks_per_die: None,
                copy_budget_pages: None,
                idle_gc_after_ms: None,
                pause_bound_ms: None,
                waf_bound: None,
            },
            &WearLevelingConfig {
                dynamic: true,
                static_wl: false,
                static_threshold_erases: None,
            },
        )
    }

    #[test]
    fn misses_read_translation_pages_and_dirty_evictions_write_them_back() {
        let mut f = tiny(4);
        let n = f.user_lpns();
        assert_eq!(
            n + f.tver.len() as u32,
            716,
            "mapped = host + translation pages"
        );
        let mut ops = Vec::new();
        let mut expected = vec![0u32; n as usize];
        let mut ver = 0;
        for lpn in 0..8 {
            ver += 1;
            expected[lpn as usize] = ver;
            f.write(&[(lpn, ver)], &mut ops);
        }
        let s = f.stats();
        // 8 misses; the first 4 dirty entries were evicted and written back
        // (one translation page, batched).
        assert_eq!((s.cmt_misses, s.cmt_hits), (8, 0));
        assert!(s.translation_writes >= 1, "{s:?}");
        f.check(&[], &expected).unwrap();
        ops.clear();
        assert_eq!(f.translate(7, &mut ops), f.lookup(7));
        assert!(ops.is_empty(), "a hit costs nothing");
        f.translate(0, &mut ops);
        assert!(
            matches!(ops[0], NandOp::Read { bytes: 4096, .. }),
            "a miss reads its translation page: {ops:?}"
        );
    }

    /// `rounds` random 2-LPN writes (xorshift from `seed`), trimming one
    /// LPN every 97 rounds; returns the oracle.
    fn churn(f: &mut DftlMapping, expected: &mut [u32], rounds: u32, seed: u64) {
        let n = f.user_lpns();
        let mut ops = Vec::new();
        let mut ver = expected.iter().copied().max().unwrap_or(0);
        let mut x = seed;
        for round in 0..rounds {
            let mut e = [(0, 0); 2];
            for slot in &mut e {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ver += 1;
                *slot = ((x % n as u64) as u32, ver);
            }
            if e[0].0 == e[1].0 {
                continue;
            }
            for &(l, v) in &e {
                expected[l as usize] = v;
            }
            ops.clear();
            f.write(&e, &mut ops);
            if round % 97 == 0 {
                f.trim(e[0].0);
                expected[e[0].0 as usize] = 0;
            }
        }
    }

    #[test]
    fn sanitize_leaves_no_stale_translation_page_or_invalid_data() {
        // CMTs from one entry (every moved LPN's entry written back to its
        // translation page) to one caching every LPN.
        for cmt in [1, 16, 1024] {
            sanitize_with_cmt(cmt);
        }
    }

    fn sanitize_with_cmt(cmt: u32) {
        let mut f = tiny(cmt);
        let n = f.user_lpns();
        let mut expected = vec![0u32; n as usize];
        churn(&mut f, &mut expected, 3000, 7);
        for lpn in (0..n).step_by(5) {
            f.trim(lpn);
            expected[lpn as usize] = 0;
        }
        assert!(f.invalid_slots().unwrap() > 0);
        let before = f.stats();
        let mut ops = Vec::new();
        let collected = f.sanitize(&mut ops).unwrap();
        let s = f.stats();
        assert!(collected > 0 && s.gc_runs > before.gc_runs, "{s:?}");
        // Moved entries not cached are written back to their translation
        // pages; a CMT holding every LPN keeps them dirty there instead.
        assert_eq!(
            s.translation_writes > before.translation_writes,
            cmt < n,
            "CMT {cmt}: {s:?}"
        );
        // No invalid slot of host data nor stale translation page is left.
        assert_eq!(f.invalid_slots(), Some(0));
        assert!(f.dirty_tpages.is_empty());
        // Every translation page has one copy on NAND, its newest.
        for t in 0..f.tver.len() as u32 {
            if let Some(slot) = f.inner.lookup(f.user + t) {
                assert_eq!(
                    f.inner.slot_record(slot),
                    Some((f.user + t, f.tver[t as usize]))
                );
            }
        }
        f.check(&[], &expected).unwrap();
        ops.clear();
        assert_eq!(f.sanitize(&mut ops), Some(0));
        assert!(ops.is_empty());
        // The device goes on.
        churn(&mut f, &mut expected, 1000, 13);
        f.check(&[], &expected).unwrap();
        assert_bookkeeping(&f);
    }

    /// Every dirty CMT entry is listed under its translation page, and a
    /// page is flagged queued exactly when it waits in the write-back queue.
    fn assert_bookkeeping(f: &DftlMapping) {
        for (i, &lpn) in f.cmt_lpn.iter().enumerate() {
            if f.cmt_dirty[i] {
                let t = DftlMapping::tpage_of(lpn) as usize;
                assert!(f.dirty_in[t].contains(&(i as u32)), "entry {i} (LPN {lpn})");
            }
        }
        for t in 0..f.tver.len() as u32 {
            assert_eq!(
                f.tpage_queued[t as usize],
                f.dirty_tpages.contains(&t),
                "translation page {t}"
            );
        }
    }

    #[test]
    fn dirty_counts_and_queue_flags_follow_every_write_trim_and_eviction() {
        for cmt in [1, 3, 16, 1024] {
            let mut f = tiny(cmt);
            let mut expected = vec![0u32; f.user_lpns() as usize];
            for seed in 1..4 {
                churn(&mut f, &mut expected, 700, seed);
                assert_bookkeeping(&f);
                f.check(&[], &expected).unwrap();
            }
        }
    }

    #[test]
    fn erase_and_background_gc_keep_the_cached_map_consistent() {
        let mut f = tiny(16);
        let n = f.user_lpns();
        let mut expected = vec![0u32; n as usize];
        churn(&mut f, &mut expected, 3000, 3);
        // BKOPS below a target above every die's free blocks: victims are
        // collected and their moved entries followed.
        let target = f.min_free_blocks_per_die().unwrap() + 4;
        let (runs, writes) = (f.stats().gc_runs, f.stats().translation_writes);
        let mut ops = Vec::new();
        let mut steps = 0;
        while steps < 8 && f.background_collect(target, &mut ops).is_some() {
            steps += 1;
            f.check(&[], &expected).unwrap();
        }
        assert!(steps > 0 && f.stats().gc_runs >= runs + steps);
        assert!(f.stats().translation_writes >= writes);
        // ERASE after trimming a range: blocks left empty are erased.
        for lpn in 0..n / 2 {
            f.trim(lpn);
            expected[lpn as usize] = 0;
        }
        let erases = f.stats().nand_erases;
        ops.clear();
        let erased = f.erase_unmapped(&mut ops).unwrap();
        assert_eq!(f.stats().nand_erases - erases, u64::from(erased));
        f.check(&[], &expected).unwrap();
    }

    #[test]
    fn overwrites_with_gc_keep_translations_and_data_consistent() {
        let mut f = tiny(16);
        let n = f.user_lpns();
        let mut expected = vec![0u32; n as usize];
        churn(&mut f, &mut expected, 6000, 7);
        f.check(&[], &expected).unwrap();
        let s = f.stats();
        assert!(
            s.gc_runs > 0 && s.translation_writes > 0 && s.cmt_misses > 0,
            "{s:?}"
        );
    }
}
