//! Page-level mapping: every logical 4 KiB page (LPN) maps to any physical
//! 4 KiB slot.
//!
//! Host stripe pages go to the dies round-robin; before writing on a die,
//! foreground GC runs there if the die is short of free blocks, and a die
//! that cannot take host data (no room at its write point and fewer than
//! two free stripes) is skipped for the next. Map-table persistence
//! (translation pages) is charged by the controller's mapping cache, not
//! here; GC updates the map through each slot's physical-to-logical record.
//!
//! Device-profile validation guarantees some die always takes the data: the
//! spare slots exceed what every die could hold without a victim worth
//! collecting (see [`crate::device::config`], `[ftl] over_provisioning`).

use super::block_manager::{BlockManager, Stream};
use super::gc::GarbageCollector;
use super::integrity::{self, IntegrityError};
use super::integrity_journal::MapJournal;
use super::page_table::PageTable;
use super::wear_leveling::StaticWearLeveling;
use super::{FtlStats, Mapping, MappingScheme, Placement};
use crate::device::config::{FtlConfig, GcConfig, WearLevelingConfig};
use crate::device::nand::{Geometry, NandOp};
use crate::device::state::{StateError, StateReader, StateWriter};

/// The page-level mapping FTL: L2P table, block manager, garbage collector
/// and static wear-leveling hook.
#[derive(Clone, Debug)]
pub struct PageMapping {
    pub(super) table: PageTable,
    pub(super) blocks: BlockManager,
    gc: GarbageCollector,
    wl: StaticWearLeveling,
    next_die: u32,
    stats: FtlStats,
}

impl PageMapping {
    /// An empty (fully erased) FTL on `geo`. User capacity is the raw slot
    /// count × (1 − over-provisioning), rounded down to whole LPNs.
    pub fn new(
        geo: Geometry,
        ftl: &FtlConfig,
        gc: &GcConfig,
        wl: &WearLevelingConfig,
    ) -> PageMapping {
        let lpns = super::user_lpns(geo.slots(), ftl.over_provisioning);
        Self::with_lpns(geo, lpns, gc, wl)
    }

    /// As [`PageMapping::new`], but with the L2P table left unfilled: only
    /// to restore a saved state into ([`Mapping::load_state`] writes the
    /// whole table).
    pub(crate) fn to_load(
        geo: Geometry,
        ftl: &FtlConfig,
        gc: &GcConfig,
        wl: &WearLevelingConfig,
    ) -> PageMapping {
        let lpns = super::user_lpns(geo.slots(), ftl.over_provisioning);
        PageMapping {
            table: PageTable::unfilled(lpns),
            ..Self::with_lpns(geo, 0, gc, wl)
        }
    }

    /// An empty FTL mapping `lpns` logical pages (DFTL adds its translation
    /// pages to the host's).
    pub(super) fn with_lpns(
        geo: Geometry,
        lpns: u32,
        gc: &GcConfig,
        wl: &WearLevelingConfig,
    ) -> PageMapping {
        let mut collector = GarbageCollector::new(
            gc.policy,
            gc.start_below_free_blocks_per_die,
            gc.stop_at_free_blocks_per_die,
            geo.stripe_slots(),
        );
        collector.set_copy_budget(gc.copy_budget_pages);
        PageMapping {
            table: PageTable::new(lpns),
            blocks: BlockManager::new(geo, wl.dynamic),
            gc: collector,
            wl: if wl.static_wl {
                StaticWearLeveling::with_threshold(wl.static_threshold())
            } else {
                StaticWearLeveling::off()
            },
            next_die: 0,
            stats: FtlStats::default(),
        }
    }

    /// Makes GC and wear leveling record the LPNs they move (for a scheme
    /// that must persist their new translations: DFTL).
    pub(super) fn record_moves(&mut self) {
        self.gc.record_moves();
    }

    /// Moves the LPNs recorded since the last call into `out`.
    pub(super) fn take_moves(&mut self, out: &mut Vec<u32>) {
        self.gc.take_moves(out);
    }

    /// The block manager (erase counts, free pools, valid counts).
    pub fn blocks(&self) -> &BlockManager {
        &self.blocks
    }
}

impl Mapping for PageMapping {
    fn clone_box(&self) -> Box<dyn Mapping> {
        Box::new(self.clone())
    }

    fn scheme(&self) -> MappingScheme {
        MappingScheme::Page
    }

    fn user_lpns(&self) -> u32 {
        self.table.lpns()
    }

    fn lookup(&self, lpn: u32) -> Option<u32> {
        self.table.lookup(lpn)
    }

    fn warm(&self, lpn: u32) {
        self.table.warm(lpn);
    }

    fn write(&mut self, entries: &[(u32, u32)], ops: &mut Vec<NandOp>) -> Placement {
        debug_assert!(entries.len() <= self.blocks.geometry().stripe_slots() as usize);
        let first = ops.len();
        let dies = self.blocks.geometry().dies();
        for k in 0..dies {
            let die = (self.next_die + k) % dies;
            self.gc.run(
                die,
                &mut self.blocks,
                &mut self.table,
                &self.wl,
                &mut self.stats,
                ops,
            );
            if self.blocks.host_can_write(die) {
                self.next_die = (die + 1) % dies;
                let reclaim_ops = ops.len() - first;
                self.table.write(
                    &mut self.blocks,
                    die,
                    Stream::Host,
                    entries,
                    &mut self.stats,
                    ops,
                );
                return Placement { die, reclaim_ops };
            }
        }
        panic!(
            "mmcsim device: simulator bug: no die has a free block for host data although GC ran \
             (profile validation should have rejected this over-provisioning)"
        );
    }

    fn trim(&mut self, lpn: u32) {
        if let Some(old) = self.table.trim(lpn) {
            self.blocks.invalidate(old);
        }
    }

    fn min_free_blocks_per_die(&self) -> Option<u32> {
        let dies = self.blocks.geometry().dies();
        (0..dies).map(|d| self.blocks.free_blocks(d)).min()
    }

    fn background_collect(&mut self, target: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let dies = self.blocks.geometry().dies();
        let die = (0..dies).min_by_key(|&d| (self.blocks.free_blocks(d), d))?;
        if self.blocks.free_blocks(die) >= target {
            return None;
        }
        self.gc
            .collect_one(die, &mut self.blocks, &mut self.table, &mut self.stats, ops)
            .then_some(die)
    }

    fn idle_collect(&mut self, target: u32, budget: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let dies = self.blocks.geometry().dies();
        let die = (0..dies)
            .find(|&d| self.blocks.in_progress(d).is_some())
            .or_else(|| (0..dies).min_by_key(|&d| (self.blocks.free_blocks(d), d)))?;
        if self.blocks.in_progress(die).is_none() && self.blocks.free_blocks(die) >= target {
            return None;
        }
        self.gc
            .idle_step(
                die,
                budget,
                &mut self.blocks,
                &mut self.table,
                &mut self.stats,
                ops,
            )
            .then_some(die)
    }

    fn settle_gc(&mut self, ops: &mut Vec<NandOp>) {
        self.gc
            .settle(&mut self.blocks, &mut self.table, &mut self.stats, ops);
    }

    fn gc_emergencies(&self) -> u64 {
        self.gc.emergencies()
    }

    fn erase_unmapped(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.settle_gc(ops);
        Some(self.gc.erase_empty(&mut self.blocks, &mut self.stats, ops))
    }

    fn sanitize(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.settle_gc(ops);
        Some(
            self.gc
                .sanitize(&mut self.blocks, &mut self.table, &mut self.stats, ops),
        )
    }

    fn invalid_slots(&self) -> Option<u64> {
        let stripes = self.blocks.geometry().dies() * self.blocks.stripes_per_die();
        Some((0..stripes).map(|sb| self.blocks.invalid(sb) as u64).sum())
    }

    fn stats(&self) -> FtlStats {
        self.stats
    }

    fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
    }

    fn restore_stats(&mut self, saved: FtlStats) {
        self.stats = saved;
    }

    fn erase_counts(&self) -> &[u32] {
        self.blocks.erase_counts()
    }

    fn check(&self, pending: &[(u32, u32)], expected: &[u32]) -> Result<(), IntegrityError> {
        integrity::check(&self.table, &self.blocks, pending, expected)
    }

    fn save_state(&self, w: &mut StateWriter) -> Result<(), StateError> {
        debug_assert!(
            (0..self.blocks.geometry().dies()).all(|d| self.blocks.in_progress(d).is_none()),
            "a state is saved with incremental GC settled"
        );
        w.u32s(self.table.entries());
        self.blocks.save_state(w);
        w.u32(self.next_die);
        Ok(())
    }

    fn load_state(&mut self, r: &mut StateReader<'_>, expected: &[u32]) -> Result<(), StateError> {
        self.table.load_state(r)?;
        self.blocks.load_state(r, self.table.entries(), expected)?;
        self.next_die = r.u32("the next host die")?;
        if self.next_die >= self.blocks.geometry().dies() {
            return Err(StateError::corrupt(format!(
                "the next host die is {}, beyond the array",
                self.next_die
            )));
        }
        self.stats = FtlStats::default();
        Ok(())
    }

    fn journal(&mut self) -> Option<&mut MapJournal> {
        Some(self.table.journal_mut())
    }

    fn slot_record(&self, slot: u32) -> Option<(u32, u32)> {
        integrity::slot_record(&self.blocks, slot)
    }

    #[cfg(test)]
    fn corrupt(&mut self, c: integrity::Corruption) -> bool {
        integrity::corrupt(&mut self.table, &mut self.blocks, c);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ftl::block_manager::tests::geo;
    use crate::device::ftl::VictimPolicy;

    fn tiny(policy: VictimPolicy, static_wl: bool) -> PageMapping {
        PageMapping::new(
            geo(16, 8),
            &FtlConfig {
                mapping: MappingScheme::Page,
                over_provisioning: 0.3,
                atomic_write: false,
                atomic_commit_map_pages: 1,
                hybrid: None,
                dftl: None,
            },
            &GcConfig {
                policy,
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
                static_wl,
                static_threshold_erases: Some(4),
            },
        )
    }

    /// 20 passes of stripe writes over the space, 3 of every 4 LPNs random
    /// (xorshift) so GC finds partly valid victims; checks the oracle after
    /// each pass.
    fn overwrite(f: &mut PageMapping) {
        let n = f.user_lpns();
        let mut expected = vec![0u32; n as usize];
        let mut ops = Vec::new();
        let mut ver = 0;
        let mut x: u64 = 12345;
        for _ in 0..20 {
            for base in (0..n - 3).step_by(4) {
                let mut e = [(0, 0); 4];
                for (k, slot) in e.iter_mut().enumerate() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let lpn = if k == 0 { base } else { (x % n as u64) as u32 };
                    ver += 1;
                    *slot = (lpn, ver);
                    expected[lpn as usize] = ver;
                }
                f.write(&e, &mut ops);
                ops.clear();
            }
            f.check(&[], &expected).unwrap();
        }
    }

    /// Incremental GC: the same overwrites keep every LPN's newest data
    /// (checked after every pass, with victims part-way collected), fall
    /// back to whole victims rarely; settling leaves no victim in progress
    /// (the pause bound is checked end to end in `crates/simctl/tests/it/nexus5.rs`).
    #[test]
    fn incremental_gc_keeps_integrity_and_bounds_each_step() {
        let mut f = tiny(VictimPolicy::Greedy, false);
        // Room to pace: steps start 4 stripes above the emergency line.
        let stripe_slots = f.blocks.geometry().stripe_slots();
        f.gc = GarbageCollector::new(VictimPolicy::Greedy, 12, 12, stripe_slots);
        f.gc.set_copy_budget(Some(1));
        let n = f.user_lpns();
        let mut expected = vec![0u32; n as usize];
        let mut ops = Vec::new();
        let (mut ver, mut x, mut most) = (0, 99u64, 0usize);
        for _ in 0..20 {
            for _ in 0..n / 4 {
                let mut e = [(0, 0); 4];
                for slot in e.iter_mut() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let lpn = (x % n as u64) as u32;
                    ver += 1;
                    *slot = (lpn, ver);
                    expected[lpn as usize] = ver;
                }
                let p = f.write(&e, &mut ops);
                most = most.max(p.reclaim_ops);
                ops.clear();
            }
            f.check(&[], &expected).unwrap();
        }
        assert!(f.stats().gc_runs > 0);
        // This 8-stripe die is too small for pacing to keep up every time;
        // most victims are still collected in steps.
        let (runs, em) = (f.stats().gc_runs, f.gc_emergencies());
        assert!(em * 4 < runs, "{em} emergencies in {runs} victims");
        let g = *f.blocks.geometry();
        assert!(most > 0);
        f.settle_gc(&mut ops);
        assert!((0..g.dies()).all(|d| f.blocks.in_progress(d).is_none()));
        f.check(&[], &expected).unwrap();
    }

    #[test]
    fn overwrites_trigger_gc_and_keep_integrity_under_every_policy() {
        for policy in [
            VictimPolicy::Greedy,
            VictimPolicy::CostBenefit,
            VictimPolicy::Fifo,
        ] {
            let mut f = tiny(policy, false);
            overwrite(&mut f);
            let s = f.stats();
            assert!(s.gc_runs > 0 && s.gc_slots_moved > 0, "{policy:?}: {s:?}");
            if policy == VictimPolicy::Greedy {
                let ec = f.erase_counts();
                let (mn, mx) = (ec.iter().min().unwrap(), ec.iter().max().unwrap());
                assert!(
                    mx - mn <= 6,
                    "dynamic WL keeps erase counts close: {mn}..{mx}"
                );
            }
        }
    }

    #[test]
    fn a_write_reports_its_die_and_the_reclaim_work_before_it() {
        let mut f = tiny(VictimPolicy::Greedy, false);
        let mut ops = Vec::new();
        let p = f.write(&[(7, 1), (8, 2)], &mut ops);
        assert_eq!(
            p,
            Placement {
                die: 0,
                reclaim_ops: 0
            }
        );
        assert_eq!(ops.len(), 1);
        assert_eq!(f.write(&[(9, 3)], &mut ops).die, 1);
        // Overwrite until a write has to wait for GC.
        let mut reclaimed = None;
        for v in 0..10_000 {
            ops.clear();
            let p = f.write(&[(v % 64, v + 10)], &mut ops);
            if p.reclaim_ops > 0 {
                reclaimed = Some((p, ops.clone()));
                break;
            }
        }
        let (p, ops) = reclaimed.expect("GC ran");
        assert_eq!(ops.len(), p.reclaim_ops + 1);
        assert!(matches!(ops[p.reclaim_ops], NandOp::Program { die, .. } if die == p.die));
        assert!(ops[..p.reclaim_ops]
            .iter()
            .any(|o| matches!(o, NandOp::Erase { .. })));
    }

    #[test]
    fn trim_unmaps() {
        let mut f = tiny(VictimPolicy::Greedy, false);
        let mut ops = Vec::new();
        f.write(&[(7, 1), (8, 2)], &mut ops);
        assert!(f.lookup(7).is_some());
        f.trim(7);
        assert!(f.lookup(7).is_none());
        let mut expected = vec![0u32; f.user_lpns() as usize];
        expected[8] = 2;
        f.check(&[], &expected).unwrap();
    }

    #[test]
    fn erase_frees_blocks_left_empty_and_sanitize_leaves_no_invalid_data() {
        let mut f = tiny(VictimPolicy::Greedy, false);
        let n = f.user_lpns();
        let mut ops = Vec::new();
        let mut expected = vec![0u32; n as usize];
        // Fill the space sequentially, 4 LPNs a stripe page.
        for base in (0..n - 3).step_by(4) {
            let e: Vec<_> = (base..base + 4).map(|l| (l, l + 1)).collect();
            f.write(&e, &mut ops);
            for &(l, v) in &e {
                expected[l as usize] = v;
            }
        }
        ops.clear();
        // Unmapping the first 64 LPNs (two whole stripes of 8 pages × 4
        // slots) leaves those stripes empty: the ERASE erases them.
        let before = f.stats().nand_erases;
        for l in 0..64 {
            f.trim(l);
            expected[l as usize] = 0;
        }
        assert_eq!(f.erase_unmapped(&mut ops), Some(2));
        assert_eq!(f.stats().nand_erases - before, 2);
        assert!(ops.iter().any(|o| matches!(o, NandOp::Erase { .. })));
        f.check(&[], &expected).unwrap();
        // Scattered trims leave invalid slots in partly valid stripes (and
        // the open write point); SANITIZE collects all of them.
        for l in (64..n).step_by(3) {
            f.trim(l);
            expected[l as usize] = 0;
        }
        assert!(f.invalid_slots().unwrap() > 0);
        ops.clear();
        let collected = f.sanitize(&mut ops).unwrap();
        assert!(collected > 0);
        assert_eq!(f.invalid_slots(), Some(0));
        f.check(&[], &expected).unwrap();
        // Nothing left to do.
        ops.clear();
        assert_eq!(f.sanitize(&mut ops), Some(0));
        assert!(ops.is_empty());
    }

    /// Writes the whole space once (cold data), then rewrites only a hot
    /// eighth of it; returns the erase-count spread (max − min).
    fn hot_cold_spread(static_wl: bool) -> (u32, FtlStats) {
        let mut f = tiny(VictimPolicy::Greedy, static_wl);
        let n = f.user_lpns();
        let mut ops = Vec::new();
        let mut expected = vec![0u32; n as usize];
        let mut ver = 0;
        let mut put = |f: &mut PageMapping, lpns: [u32; 4], ops: &mut Vec<NandOp>| {
            let e = lpns.map(|l| {
                ver += 1;
                expected[l as usize] = ver;
                (l, ver)
            });
            f.write(&e, ops);
            ops.clear();
        };
        for base in (0..n - 3).step_by(4) {
            put(&mut f, [base, base + 1, base + 2, base + 3], &mut ops);
        }
        let hot = n / 8 / 4 * 4;
        for round in 0..400 {
            for base in (0..hot).step_by(4) {
                let b = (base + 4 * round) % hot;
                put(&mut f, [b, b + 1, b + 2, b + 3], &mut ops);
            }
        }
        f.check(&[], &expected).unwrap();
        let ec = f.erase_counts();
        (
            ec.iter().max().unwrap() - ec.iter().min().unwrap(),
            f.stats(),
        )
    }

    #[test]
    fn static_wear_leveling_narrows_the_spread_left_by_cold_data() {
        let (without, s) = hot_cold_spread(false);
        assert_eq!(s.wl_migrations, 0);
        let (with, s) = hot_cold_spread(true);
        assert!(s.wl_migrations > 0 && s.wl_slots_moved > 0, "{s:?}");
        // Without it the cold stripes never cycle (spread > 100 erases here);
        // with it the spread stays within a few times the threshold of 4.
        assert!(
            with * 4 < without && with <= 16,
            "spread with static WL {with}, without {without}"
        );
    }
}
