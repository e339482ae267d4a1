//! Foreground garbage collection.
//!
//! When a die's free blocks fall below `start_below_free_blocks_per_die`
//! (or fewer than two free stripes remain), GC collects victims on that die
//! before the host write proceeds — valid slots read and reprogrammed at the
//! die's GC write point, then the stripe erased — until the die has
//! `stop_at_free_blocks_per_die` free blocks. A victim is *worth
//! collecting* only if it frees at least one stripe page (at most
//! `pages_per_block − 1` stripe pages of valid data); with that, its data
//! needs at most one new GC stripe, so GC starting with one free stripe never
//! runs dry. The [`VictimPolicy`] picks among the victims worth collecting.
//! After each session the static wear-leveling hook
//! ([`super::wear_leveling`]) may name a cold stripe to migrate the same way.

use super::block_manager::{BlockManager, Stream};
use super::page_table::PageTable;
use super::wear_leveling::StaticWearLeveling;
use super::FtlStats;
use crate::device::nand::{Geometry, NandOp};
use serde::{Deserialize, Serialize};

/// How GC chooses a victim among the full stripes worth collecting
/// (`[gc] policy` of a device profile).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VictimPolicy {
    /// The stripe with the fewest valid slots (ties: lowest stripe number).
    Greedy,
    /// The stripe with the highest benefit/cost `age × (1 − u) / 2u`
    /// (Kawaguchi et al. 1995, after Rosenblum and Ousterhout's LFS
    /// cleaner): `u` the valid fraction, `age` the stripe pages programmed
    /// since the stripe's data last changed (its last program or
    /// invalidation). An entirely invalid stripe wins outright; ties go to
    /// the fewest valid slots, then the lowest stripe number.
    CostBenefit,
    /// The stripe filled longest ago (first in, first out).
    Fifo,
}

impl VictimPolicy {
    /// The name used in device profiles.
    pub fn name(self) -> &'static str {
        match self {
            VictimPolicy::Greedy => "greedy",
            VictimPolicy::CostBenefit => "cost-benefit",
            VictimPolicy::Fifo => "fifo",
        }
    }
}

/// Why a stripe is collected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// Reclaim free space.
    Reclaim,
    /// Static wear leveling: move cold data off a little-worn stripe.
    WearLeveling,
}

/// The GC policy and thresholds, with the staging buffer of moved slots.
#[derive(Clone, Debug)]
pub struct GarbageCollector {
    policy: VictimPolicy,
    /// Start below this many free blocks per die.
    start: u32,
    /// Stop at this many free blocks per die.
    stop: u32,
    /// Valid slots read from a victim, waiting for a full stripe page:
    /// `(lpn, version)` as the write takes them.
    stage: Vec<(u32, u32)>,
    /// The slot each staged entry was read from (a staged entry whose
    /// slot the host overwrote meanwhile is dropped, not moved).
    stage_src: Vec<u32>,
    /// Incremental GC, per die: the staged entries of its victim in
    /// progress, kept between steps (`(lpn, version, source slot)`).
    held: Vec<Vec<(u32, u32, u32)>>,
    /// Incremental foreground GC: the least stripe pages of valid data a
    /// step copies per host stripe page (`[gc] copy_budget_pages`);
    /// `None` = whole victims at once.
    budget: Option<u32>,
    /// LPNs moved since last taken, when recording (DFTL).
    moved: Option<Vec<u32>>,
    /// Emergency sessions: incremental GC fell behind (fewer than two free
    /// stripes) and whole victims were collected at once.
    emergencies: u64,
}

impl GarbageCollector {
    /// A collector with `policy` and thresholds in blocks per die, for
    /// stripe pages of `stripe_slots` slots.
    pub fn new(policy: VictimPolicy, start: u32, stop: u32, stripe_slots: u32) -> GarbageCollector {
        GarbageCollector {
            policy,
            start,
            stop,
            stage: Vec::with_capacity(stripe_slots as usize),
            stage_src: Vec::with_capacity(stripe_slots as usize),
            held: Vec::new(),
            budget: None,
            moved: None,
            emergencies: 0,
        }
    }

    /// Makes foreground GC incremental: a step copies at least `pages`
    /// stripe pages of valid data per host stripe page (more when the
    /// victim's valid share needs it to keep pace, see
    /// [`GarbageCollector::paced_budget`]).
    pub fn set_copy_budget(&mut self, pages: Option<u32>) {
        self.budget = pages.map(|p| p.max(1));
    }

    /// Emergency sessions so far (incremental GC fell behind).
    pub fn emergencies(&self) -> u64 {
        self.emergencies
    }

    /// Starts recording the LPNs GC and wear leveling move.
    pub fn record_moves(&mut self) {
        self.moved.get_or_insert_with(|| Vec::with_capacity(4096));
    }

    /// Appends the LPNs moved since the last call to `out` and forgets
    /// them.
    pub fn take_moves(&mut self, out: &mut Vec<u32>) {
        if let Some(m) = &mut self.moved {
            out.append(m);
        }
    }

    /// Runs foreground GC on `die` if it is short of free blocks, then
    /// consults the static wear-leveling hook.
    pub fn run(
        &mut self,
        die: u32,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        wl: &StaticWearLeveling,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        if let Some(budget) = self.budget {
            if blocks.free_stripes(die) >= 2 {
                if blocks.free_blocks(die) < self.start || blocks.in_progress(die).is_some() {
                    self.step(die, budget, blocks, table, stats, ops);
                }
                self.wear_level(die, blocks, table, wl, stats, ops);
                return;
            }
            // Fell behind: finish the victim in progress, then collect
            // whole victims as below.
            self.emergencies += 1;
            self.finish(die, blocks, table, stats, ops);
        }
        if blocks.free_blocks(die) >= self.start && blocks.free_stripes(die) >= 2 {
            return;
        }
        while blocks.free_blocks(die) < self.stop || blocks.free_stripes(die) < 2 {
            let Some(victim) = self.select(die, blocks) else {
                break;
            };
            if blocks.free_stripes(die) == 0 {
                break;
            }
            self.collect(victim, Purpose::Reclaim, blocks, table, stats, ops);
        }
        self.wear_level(die, blocks, table, wl, stats, ops);
    }

    /// The static wear-leveling hook after a GC session on `die`.
    fn wear_level(
        &mut self,
        die: u32,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        wl: &StaticWearLeveling,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        if let Some(cold) = wl.cold_stripe(die, blocks) {
            // Moving a whole stripe of data may take one new stripe; keep one
            // free for the host.
            if blocks.free_stripes(die) >= 2 {
                self.collect(cold, Purpose::WearLeveling, blocks, table, stats, ops);
            }
        }
    }

    /// Background GC (BKOPS): collects one victim on `die` if the policy
    /// finds one worth collecting and a free stripe takes its data; true
    /// when it did.
    pub fn collect_one(
        &mut self,
        die: u32,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> bool {
        if blocks.free_stripes(die) < 2 {
            return false;
        }
        if blocks.in_progress(die).is_some() {
            self.finish(die, blocks, table, stats, ops);
            return true;
        }
        let Some(victim) = self.select(die, blocks) else {
            return false;
        };
        self.collect(victim, Purpose::Reclaim, blocks, table, stats, ops);
        true
    }

    /// Idle-time background GC: one incremental step of `budget` stripe
    /// pages on `die` (continuing its victim in progress or starting one);
    /// true when it did work.
    pub fn idle_step(
        &mut self,
        die: u32,
        budget: u32,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> bool {
        if blocks.free_stripes(die) < 2 {
            return false;
        }
        self.step_with(die, Some(budget), blocks, table, stats, ops)
    }

    /// Completes every victim incremental GC has in progress (before an
    /// ERASE, SANITIZE or a saved state, which need whole stripes).
    pub fn settle(
        &mut self,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        for die in 0..blocks.geometry().dies() {
            self.finish(die, blocks, table, stats, ops);
        }
    }

    /// The stripe pages a step copies for a victim holding `valid` slots:
    /// at least `budget`, and at least the ratio of its valid to its
    /// invalid stripe pages (rounded up), so the victim is empty by the
    /// time the host has filled the stripe pages it frees — firmware GC
    /// pacing; a victim worth collecting frees at least one stripe page.
    pub fn paced_budget(budget: u32, valid: u32, geo: &Geometry) -> u32 {
        let per_page = geo.stripe_slots();
        let valid_pages = valid.div_ceil(per_page);
        let free_pages = geo.pages_per_block.saturating_sub(valid_pages).max(1);
        budget.max(valid_pages.div_ceil(free_pages))
    }

    /// One incremental step on `die` with the foreground budget.
    fn step(
        &mut self,
        die: u32,
        budget: u32,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> bool {
        self.step_with(die, Some(budget), blocks, table, stats, ops)
    }

    /// Finishes the victim in progress on `die`, if any.
    fn finish(
        &mut self,
        die: u32,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        if blocks.in_progress(die).is_some() {
            self.step_with(die, None, blocks, table, stats, ops);
        }
    }

    /// Continues (or starts) the victim of `die`: scans its pages until
    /// `budget` stripe pages (paced; `None` = all) have been copied, keeping
    /// the staged remainder for the next step; erases the victim once every
    /// page is scanned. False when there was no victim to work on.
    fn step_with(
        &mut self,
        die: u32,
        budget: Option<u32>,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> bool {
        let (victim, mut page) = match blocks.in_progress(die) {
            Some(v) => v,
            None => {
                let Some(v) = self.select(die, blocks) else {
                    return false;
                };
                blocks.begin_collect(v);
                stats.gc_runs += 1;
                (v, 0)
            }
        };
        let g = *blocks.geometry();
        let limit = budget.map(|b| Self::paced_budget(b, blocks.valid(victim), &g));
        if self.held.len() < g.dies() as usize {
            self.held.resize(g.dies() as usize, Vec::new());
        }
        self.stage.clear();
        self.stage_src.clear();
        for &(lpn, v, src) in &self.held[die as usize] {
            self.stage.push((lpn, v));
            self.stage_src.push(src);
        }
        self.held[die as usize].clear();
        let before = stats.nand_programs;
        while page < g.pages_per_block
            && limit.is_none_or(|l| stats.nand_programs - before < l as u64)
        {
            self.scan_page(
                victim,
                page,
                die,
                Purpose::Reclaim,
                blocks,
                table,
                stats,
                ops,
            );
            page += 1;
        }
        if page < g.pages_per_block {
            let held = &mut self.held[die as usize];
            held.extend(
                self.stage
                    .iter()
                    .zip(&self.stage_src)
                    .map(|(&(l, v), &s)| (l, v, s)),
            );
            self.stage.clear();
            self.stage_src.clear();
            blocks.set_in_progress(die, Some((victim, page)));
            return true;
        }
        if !self.stage.is_empty() {
            self.relocate(die, Purpose::Reclaim, blocks, table, stats, ops);
        }
        blocks.set_in_progress(die, None);
        blocks.erase(victim, stats, ops);
        true
    }

    /// The card's part of an ERASE (CMD38 argument 0x0) once the erased
    /// groups are unmapped: every full stripe left without valid data is
    /// erased at once and returns to the free pool. Returns the stripes
    /// erased.
    pub fn erase_empty(
        &mut self,
        blocks: &mut BlockManager,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> u32 {
        let mut n = 0;
        for die in 0..blocks.geometry().dies() {
            while let Some((0, sb)) = blocks.least_valid_full(die) {
                blocks.begin_collect(sb);
                blocks.erase(sb, stats, ops);
                n += 1;
            }
        }
        n
    }

    /// SANITIZE (EXT_CSD SANITIZE_START): physically removes every piece
    /// of invalid data. On each die the open write points holding invalid
    /// data are closed with padding, then every full stripe holding
    /// invalid data (as found then) is collected, the emptiest first so
    /// their erases make room for the moves. Returns the stripes
    /// collected (counted in `gc_runs` too).
    pub fn sanitize(
        &mut self,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> u32 {
        let mut n = 0;
        let mut victims = Vec::new();
        for die in 0..blocks.geometry().dies() {
            blocks.close_points_with_invalid(die, stats, ops);
            victims.clear();
            victims.extend(
                blocks
                    .full_stripes(die)
                    .filter(|&(_, sb)| blocks.invalid(sb) > 0),
            );
            victims.sort_unstable();
            for &(_, sb) in &victims {
                self.collect(sb, Purpose::Reclaim, blocks, table, stats, ops);
                n += 1;
            }
        }
        n
    }

    /// Most valid slots a victim may hold to be worth collecting.
    pub fn worth_limit(geo: &Geometry) -> u32 {
        geo.stripe_slots() * (geo.pages_per_block - 1)
    }

    /// The victim the policy picks on `die`, among the full stripes worth
    /// collecting.
    pub fn select(&self, die: u32, blocks: &BlockManager) -> Option<u32> {
        let limit = Self::worth_limit(blocks.geometry());
        // Candidates come in stripe order; ties are broken as if they came
        // fewest valid first, then lowest stripe (`(v, sb)` order).
        let worth = blocks.full_stripes(die).filter(|&(v, _)| v <= limit);
        match self.policy {
            VictimPolicy::Greedy => blocks
                .least_valid_full(die)
                .filter(|&(v, _)| v <= limit)
                .map(|(_, sb)| sb),
            VictimPolicy::CostBenefit => {
                let capacity = blocks.geometry().stripe_slots() * blocks.geometry().pages_per_block;
                let now = blocks.clock();
                let mut best: Option<(f64, (u32, u32))> = None;
                for (v, sb) in worth {
                    let score = if v == 0 {
                        f64::INFINITY
                    } else {
                        let u = v as f64 / capacity as f64;
                        let age = (now - blocks.modified_at(sb)) as f64;
                        age * (1.0 - u) / (2.0 * u)
                    };
                    if best.is_none_or(|(b, k)| score > b || (score == b && (v, sb) < k)) {
                        best = Some((score, (v, sb)));
                    }
                }
                best.map(|(_, (_, sb))| sb)
            }
            VictimPolicy::Fifo => worth
                .min_by_key(|&(v, sb)| (blocks.filled_at(sb), v, sb))
                .map(|(_, sb)| sb),
        }
    }

    /// Moves the valid slots of full stripe `victim` to its die's GC write
    /// point (cold write point for wear leveling) and erases it (one multi-plane read per stripe page holding
    /// valid data, one multi-plane erase).
    fn collect(
        &mut self,
        victim: u32,
        purpose: Purpose,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        let g = *blocks.geometry();
        let die = blocks.stripe_die(victim);
        blocks.begin_collect(victim);
        match purpose {
            Purpose::Reclaim => stats.gc_runs += 1,
            Purpose::WearLeveling => stats.wl_migrations += 1,
        }
        self.stage.clear();
        self.stage_src.clear();
        for page in 0..g.pages_per_block {
            self.scan_page(victim, page, die, purpose, blocks, table, stats, ops);
        }
        if !self.stage.is_empty() {
            self.relocate(die, purpose, blocks, table, stats, ops);
        }
        blocks.erase(victim, stats, ops);
    }

    /// Reads page `page` of `victim` (one multi-plane sense of the planes
    /// holding valid data) into the stage, relocating each full stripe
    /// page of it.
    #[allow(clippy::too_many_arguments)]
    fn scan_page(
        &mut self,
        victim: u32,
        page: u32,
        die: u32,
        purpose: Purpose,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        let g = *blocks.geometry();
        let stripe = g.stripe_slots() as usize;
        {
            let planes_with_data = (0..g.planes)
                .filter(|&pl| {
                    let base = g.slot(blocks.stripe_block(victim, pl), page, 0);
                    (base..base + g.slots_per_page).any(|s| blocks.owner(s).is_some())
                })
                .count() as u32;
            if planes_with_data == 0 {
                return;
            }
            ops.push(NandOp::Read {
                die,
                bytes: planes_with_data * g.page_bytes(),
                upper: Geometry::is_upper_page(page),
            });
            stats.nand_reads += 1;
            for pl in 0..g.planes {
                let base = g.slot(blocks.stripe_block(victim, pl), page, 0);
                for slot in base..base + g.slots_per_page {
                    let Some(lpn) = blocks.owner(slot) else {
                        continue;
                    };
                    self.stage.push((lpn, blocks.slot_version(slot)));
                    self.stage_src.push(slot);
                    if self.stage.len() == stripe {
                        self.relocate(die, purpose, blocks, table, stats, ops);
                    }
                }
            }
        }
    }

    /// Programs the staged slots at the GC (or, for wear leveling, the cold)
    /// write point and remaps them.
    fn relocate(
        &mut self,
        die: u32,
        purpose: Purpose,
        blocks: &mut BlockManager,
        table: &mut PageTable,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) {
        // Entries whose slot the host overwrote or trimmed since they were
        // read (incremental GC) are dropped.
        let mut k = 0;
        for i in 0..self.stage.len() {
            if blocks.owner(self.stage_src[i]) == Some(self.stage[i].0) {
                self.stage[k] = self.stage[i];
                self.stage_src[k] = self.stage_src[i];
                k += 1;
            }
        }
        self.stage.truncate(k);
        self.stage_src.truncate(k);
        if self.stage.is_empty() {
            return;
        }
        let moved = self.stage.len() as u64;
        let stream = match purpose {
            Purpose::Reclaim => {
                stats.gc_slots_moved += moved;
                Stream::Gc
            }
            Purpose::WearLeveling => {
                stats.wl_slots_moved += moved;
                Stream::Cold
            }
        };
        table.write(blocks, die, stream, &self.stage, stats, ops);
        if let Some(m) = &mut self.moved {
            m.extend(self.stage.iter().map(|&(lpn, _)| lpn));
        }
        self.stage.clear();
        self.stage_src.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ftl::block_manager::tests::geo;
    use crate::device::ftl::block_manager::StripePage;

    /// Fills stripes of die 0 one after another with LPNs `0..`, then
    /// invalidates `invalid[k]` slots of the k-th stripe filled.
    fn blocks_with(invalid: &[u32]) -> (BlockManager, PageTable, Vec<u32>) {
        let g = geo(8, 2);
        let mut b = BlockManager::new(g, true);
        let mut t = PageTable::new(g.slots());
        let (mut st, mut ops) = (FtlStats::default(), Vec::new());
        let mut stripes = Vec::new();
        let mut lpn = 0;
        for _ in invalid {
            for _ in 0..g.pages_per_block {
                let e: Vec<_> = (lpn..lpn + 4).map(|l| (l, 1)).collect();
                lpn += 4;
                let at = t.write(&mut b, 0, Stream::Host, &e, &mut st, &mut ops);
                if at.page == 0 {
                    stripes.push(at.stripe);
                }
            }
        }
        for (k, &n) in invalid.iter().enumerate() {
            for i in 0..n {
                let at = StripePage {
                    stripe: stripes[k],
                    page: i / 4,
                };
                let slot = b.slot_of(at, i % 4);
                t.trim(b.owner(slot).unwrap());
                b.invalidate(slot);
            }
        }
        (b, t, stripes)
    }

    fn pick(policy: VictimPolicy, b: &BlockManager) -> Option<u32> {
        GarbageCollector::new(policy, 4, 4, 4).select(0, b)
    }

    #[test]
    fn greedy_takes_the_fewest_valid_and_skips_stripes_not_worth_collecting() {
        // 8 slots per stripe: worth collecting with at most 4 valid.
        let (b, _, s) = blocks_with(&[5, 6, 3]);
        assert_eq!(pick(VictimPolicy::Greedy, &b), Some(s[1]));
        let (b, _, _) = blocks_with(&[3, 2]);
        assert_eq!(pick(VictimPolicy::Greedy, &b), None);
    }

    #[test]
    fn fifo_takes_the_oldest_stripe_worth_collecting() {
        let (b, _, s) = blocks_with(&[1, 4, 8]);
        assert_eq!(pick(VictimPolicy::Fifo, &b), Some(s[1]));
        assert_eq!(pick(VictimPolicy::Greedy, &b), Some(s[2]));
    }

    #[test]
    fn cost_benefit_prefers_old_cold_data_to_a_slightly_emptier_young_stripe() {
        // Stripe 0 lost 4 slots long ago; stripe 2 lost 5 just now.
        let (mut b, mut t, s) = blocks_with(&[4, 0, 0]);
        let (mut st, mut ops) = (FtlStats::default(), Vec::new());
        for k in 0..10 {
            // Age stripe 0 by programming elsewhere (die 1).
            t.write(&mut b, 1, Stream::Host, &[(100 + k, 1)], &mut st, &mut ops);
        }
        for i in 0..5 {
            let slot = b.slot_of(
                StripePage {
                    stripe: s[2],
                    page: i / 4,
                },
                i % 4,
            );
            t.trim(b.owner(slot).unwrap());
            b.invalidate(slot);
        }
        assert_eq!(pick(VictimPolicy::Greedy, &b), Some(s[2]));
        assert_eq!(pick(VictimPolicy::CostBenefit, &b), Some(s[0]));
        // An empty stripe wins outright.
        for i in 0..8 {
            let slot = b.slot_of(
                StripePage {
                    stripe: s[1],
                    page: i / 4,
                },
                i % 4,
            );
            b.invalidate(slot);
        }
        assert_eq!(pick(VictimPolicy::CostBenefit, &b), Some(s[1]));
    }

    #[test]
    fn collecting_moves_valid_data_remaps_it_and_frees_the_stripe() {
        let (mut b, mut t, s) = blocks_with(&[5, 0]);
        let mut gc = GarbageCollector::new(VictimPolicy::Greedy, 4, 4, 4);
        let (mut st, mut ops) = (FtlStats::default(), Vec::new());
        let free = b.free_stripes(0);
        gc.collect(s[0], Purpose::Reclaim, &mut b, &mut t, &mut st, &mut ops);
        assert_eq!((st.gc_runs, st.gc_slots_moved, st.nand_erases), (1, 3, 1));
        // 3 moved slots: one stripe page of the new GC stripe.
        assert_eq!(b.free_stripes(0), free);
        for lpn in 5..8 {
            let slot = t.lookup(lpn).unwrap();
            assert_eq!(b.owner(slot), Some(lpn));
            assert_ne!(b.block_stripe(b.geometry().slot_block(slot)), s[0]);
        }
        assert!(matches!(ops.last(), Some(NandOp::Erase { .. })));
    }
}
