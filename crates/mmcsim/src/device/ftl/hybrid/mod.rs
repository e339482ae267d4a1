//! Hybrid log-block mapping in the FAST style (Lee, Park, Chung, Lee, Park
//! and Song, "A log buffer-based flash translation layer using
//! fully-associative sector translation", ACM TECS 6(3), 2007) — the
//! mapping of 2010–2012 managed flash (emmc-parameters.md §3 "block-mapped
//! with a small number of open allocation units / log blocks", §6 item 1).
//!
//! * The erase unit is a *superblock*: block `u` of every plane of every
//!   die, so position `k` of a superblock is stripe page `k / dies` on die
//!   `k % dies` and consecutive positions interleave the dies. A logical
//!   block (LBN) covers `dies × planes × pages_per_block × page_kib / 4`
//!   LPNs; offset `o` of an LBN sits at position `o / stripe_slots`, entry
//!   `o % stripe_slots` of its *data block* (in place).
//! * Host stripe pages that continue a logical block from offset 0 upward
//!   go to the single **sequential log block** (in place). One starting at
//!   offset 0 first merges the previous sequential log block. Everything
//!   else goes, page-mapped, to the current **random log block**, a pool of
//!   `random_log_blocks` fully-associative log blocks.
//! * **Switch merge**: the sequential log block is complete and holds the
//!   newest copy of every offset — it becomes the data block; the old data
//!   block is erased. **Partial merge**: it holds the newest copy of every
//!   offset written so far — the remaining offsets are copied in after them
//!   and it becomes the data block. **Full merge**: every valid page of a
//!   logical block (data block, sequential and random logs) is copied in
//!   offset order into a free superblock, which becomes the data block; the
//!   old data block (and the sequential log block, if it held this LBN) are
//!   erased.
//! * When the random pool is full, the [`VictimPolicy`] picks a random log
//!   block (FIFO = FAST's round robin; greedy = fewest valid; cost-benefit =
//!   age × (1 − u) / 2u); every logical block with valid data in it is
//!   full-merged, then it is erased and a free superblock opens as the new
//!   random log block. This is the random-write collapse of the era.
//! * **Bounded associativity** (`[ftl.hybrid] log_associativity = K`,
//!   KAST; `hybrid/assoc.rs`): a random log block holds pages of at most K logical
//!   blocks, so reclaiming one costs at most K full merges.
//! * **Incremental merges** (`[gc] copy_budget_pages`, phased garbage
//!   collection; `hybrid/merge.rs`): a merge runs in steps of a few stripe pages,
//!   one before each host stripe page and more in idle time.
//! * Copies program pages in ascending order (NAND rule); a block's pages
//!   after its last valid data stay erased, holes before it are padded.
//! * Dynamic wear leveling: a new log or merge target is the least-worn
//!   free superblock. Static wear leveling: after each reclaim, when the
//!   spread between the most-worn superblock and the least-worn data block
//!   passes the threshold, that cold logical block is full-merged into the
//!   most-worn free superblock.
//! * The block map and the log blocks' page maps fit the controller SRAM;
//!   the device's map-page cache is not consulted
//!   ([`Mapping::owns_translation`]).

mod assoc;
mod merge;

use super::integrity::IntegrityError;
use super::integrity_journal::{MapChange, MapJournal};
use super::wear_leveling::StaticWearLeveling;
use super::{BlockState, FtlStats, Mapping, MappingScheme, Placement, VictimPolicy, UNMAPPED};
use crate::device::config::{FtlConfig, GcConfig, WearLevelingConfig};
use crate::device::nand::{Geometry, NandArray, NandOp};
use crate::device::state::{StateError, StateReader, StateWriter};
use merge::MergeJob;

/// Sequential log blocks: FAST keeps exactly one (Lee et al., ACM TECS
/// 2007; `[ftl.hybrid] sequential_log_blocks` is validated to 1). The free
/// pool counts its superblock as reserved whether it is open or not.
const SEQUENTIAL_LOG_BLOCKS: u32 = 1;

/// Saved-state code of a free superblock's role.
const ROLE_FREE: u32 = u32::MAX;
/// Saved-state code of the sequential log block's role.
const ROLE_SEQ_LOG: u32 = u32::MAX - 1;
/// Saved-state code of a random log block's role (any other code is the
/// logical block a data block holds).
const ROLE_RAND_LOG: u32 = u32::MAX - 2;

/// Logical blocks left to the host by `units` superblocks with a fraction
/// `over_provisioning` hidden (rounded down).
pub fn logical_blocks(units: u32, over_provisioning: f64) -> u32 {
    (units as f64 * (1.0 - over_provisioning)).floor() as u32
}

/// What a superblock is used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Erased, in the free list.
    Free,
    /// Data block of a logical block.
    Data(u32),
    /// The sequential log block.
    SeqLog,
    /// A random log block.
    RandLog,
    /// The superblock an incremental full merge of this logical block is
    /// filling ([`merge`]).
    Target(u32),
}

/// The sequential log block: its superblock, logical block and next
/// in-place offset.
#[derive(Clone, Copy, Debug)]
struct SeqLog {
    unit: u32,
    lbn: u32,
    next: u32,
}

/// A random log block: its superblock, positions programmed and when it
/// was opened (FTL clock).
#[derive(Clone, Copy, Debug)]
struct RandLog {
    unit: u32,
    next: u32,
    opened: u64,
}

/// Why a logical block is fully merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Reclaim,
    WearLeveling,
}

/// The hybrid (FAST) mapping FTL.
#[derive(Clone, Debug)]
pub struct HybridMapping {
    geo: Geometry,
    /// Superblocks (= blocks per plane).
    units: u32,
    /// LPNs per logical block.
    unit_slots: u32,
    lbns: u32,
    nand: NandArray,
    /// Per LPN: its slot (the lookup FAST does through block map and log
    /// page maps, kept resolved).
    l2p: Vec<u32>,
    /// Per slot: the LPN whose valid data it holds.
    p2l: Vec<u32>,
    slot_version: Vec<u32>,
    /// Per superblock: valid slots.
    valid: Vec<u32>,
    /// Per superblock: slots programmed with data (not padding) since its
    /// last erase; `written − valid` are its invalid slots (data
    /// overwritten, trimmed or merged away), which SANITIZE removes.
    written: Vec<u32>,
    role: Vec<Role>,
    /// Per logical block: its data superblock ([`UNMAPPED`] = none yet).
    data: Vec<u32>,
    free: Vec<u32>,
    seq: Option<SeqLog>,
    rand: Vec<RandLog>,
    rand_max: u32,
    policy: VictimPolicy,
    dynamic_wl: bool,
    wl: StaticWearLeveling,
    /// Stripe pages programmed: the FTL clock.
    clock: u64,
    stats: FtlStats,
    /// Scratch: one stripe page of `(lpn, version)`, UNMAPPED = padding.
    stage: Vec<(u32, u32)>,
    /// Scratch: per die, pages to program in a copy.
    pages_end: Vec<u32>,
    /// Scratch: `(die, page id, slots)` read for one copied stripe page.
    sources: Vec<(u32, u32, u32)>,
    /// Translation changes for the incremental integrity check.
    journal: MapJournal,
    /// KAST: the most logical blocks a random log block may hold; `None`
    /// = FAST (fully associative).
    assoc_limit: Option<u32>,
    /// KAST: per superblock holding a random log block, the logical blocks
    /// with valid pages in it and how many (empty otherwise, and always
    /// under FAST).
    log_lbns: Vec<Vec<(u32, u32)>>,
    /// Scratch: entries of a random write not yet placed (KAST).
    rest: Vec<(u32, u32)>,
    /// Incremental merging: stripe pages copied per host stripe page
    /// (`[gc] copy_budget_pages`); `None` = merges at once.
    budget: Option<u32>,
    /// The merge in progress (incremental merging).
    job: Option<MergeJob>,
    /// Per die, the pages the merge in progress programs (fixed when it
    /// begins).
    job_pages_end: Vec<u32>,
    /// The random log block being reclaimed, one merge after another
    /// (incremental merging).
    reclaiming: Option<u32>,
    /// Merges that had to run at once because incremental merging fell
    /// behind (since the last [`Mapping::reset_stats`]).
    emergencies: u64,
}

impl HybridMapping {
    /// An empty (fully erased) hybrid FTL on `geo`.
    pub fn new(
        geo: Geometry,
        ftl: &FtlConfig,
        gc: &GcConfig,
        wl: &WearLevelingConfig,
    ) -> HybridMapping {
        let units = geo.blocks_per_plane;
        let unit_slots = geo.dies() * geo.stripe_slots() * geo.pages_per_block;
        let lbns = logical_blocks(units, ftl.over_provisioning);
        let h = ftl.hybrid();
        HybridMapping {
            geo,
            units,
            unit_slots,
            lbns,
            nand: NandArray::new(geo),
            l2p: vec![UNMAPPED; (lbns * unit_slots) as usize],
            p2l: vec![UNMAPPED; geo.slots() as usize],
            slot_version: vec![0; geo.slots() as usize],
            valid: vec![0; units as usize],
            written: vec![0; units as usize],
            role: vec![Role::Free; units as usize],
            data: vec![UNMAPPED; lbns as usize],
            free: (0..units).rev().collect(),
            seq: None,
            rand: Vec::with_capacity(h.random_log_blocks as usize),
            rand_max: h.random_log_blocks,
            policy: gc.policy,
            dynamic_wl: wl.dynamic,
            wl: if wl.static_wl {
                StaticWearLeveling::with_threshold(wl.static_threshold())
            } else {
                StaticWearLeveling::off()
            },
            clock: 0,
            stats: FtlStats::default(),
            stage: Vec::with_capacity(geo.stripe_slots() as usize),
            pages_end: vec![0; geo.dies() as usize],
            sources: Vec::with_capacity(geo.stripe_slots() as usize),
            journal: MapJournal::default(),
            assoc_limit: h.log_associativity.limit(),
            log_lbns: vec![Vec::new(); units as usize],
            rest: Vec::with_capacity(geo.stripe_slots() as usize),
            budget: gc.copy_budget_pages,
            job: None,
            job_pages_end: vec![0; geo.dies() as usize],
            reclaiming: None,
            emergencies: 0,
        }
    }

    /// Positions (stripe pages) of a superblock.
    fn positions(&self) -> u32 {
        self.geo.dies() * self.geo.pages_per_block
    }

    /// Slot of entry `e` at position `k` of superblock `unit`.
    fn slot_at(&self, unit: u32, k: u32, e: u32) -> u32 {
        let g = &self.geo;
        let (die, page) = (k % g.dies(), k / g.dies());
        let blk = g.block_id(die, e / g.slots_per_page, unit);
        g.slot(blk, page, e % g.slots_per_page)
    }

    /// Superblock holding a slot.
    fn unit_of(&self, slot: u32) -> u32 {
        self.geo.slot_block(slot) % self.geo.blocks_per_plane
    }

    /// In-place offset (within a logical block) of a slot.
    fn offset_of(&self, slot: u32) -> u32 {
        let g = &self.geo;
        let blk = g.slot_block(slot);
        let e = g.block_plane(blk) * g.slots_per_page + slot % g.slots_per_page;
        let k = g.slot_page(slot) * g.dies() + g.block_die(blk);
        k * g.stripe_slots() + e
    }

    /// Erase count of superblock `unit` (its blocks are erased together).
    fn wear(&self, unit: u32) -> u32 {
        self.nand.erase_count(self.geo.block_id(0, 0, unit))
    }

    /// Takes a free superblock: the least worn (dynamic wear leveling; the
    /// most worn for cold data moved by static wear leveling), else the
    /// lowest numbered; ties to the lowest number.
    fn alloc(&mut self, most_worn: bool, role: Role) -> u32 {
        let key = |h: &Self, u: u32| {
            let w = if h.dynamic_wl || most_worn {
                h.wear(u)
            } else {
                0
            };
            if most_worn {
                (u32::MAX - w, u)
            } else {
                (w, u)
            }
        };
        let i = (0..self.free.len())
            .min_by_key(|&i| key(self, self.free[i]))
            .unwrap_or_else(|| {
                panic!("mmcsim device: simulator bug: hybrid FTL has no free superblock (profile validation should have rejected these log blocks)")
            });
        let u = self.free.swap_remove(i);
        self.role[u as usize] = role;
        u
    }

    /// Erases superblock `unit` (no valid data) and frees it.
    fn erase(&mut self, unit: u32, ops: &mut Vec<NandOp>) {
        debug_assert_eq!(self.valid[unit as usize], 0, "erasing valid data");
        let g = self.geo;
        for die in 0..g.dies() {
            for pl in 0..g.planes {
                let blk = g.block_id(die, pl, unit);
                self.nand.erase(blk);
                ops.push(NandOp::Erase {
                    die,
                    blk,
                    multi_plane: pl > 0,
                });
            }
            self.stats.nand_erases += 1;
        }
        self.written[unit as usize] = 0;
        self.role[unit as usize] = Role::Free;
        self.log_lbns[unit as usize].clear();
        self.free.push(unit);
    }

    fn invalidate(&mut self, slot: u32) {
        let lpn = std::mem::replace(&mut self.p2l[slot as usize], UNMAPPED);
        let u = self.unit_of(slot);
        self.valid[u as usize] -= 1;
        if self.assoc_limit.is_some() && self.role[u as usize] == Role::RandLog {
            self.log_lose(u, lpn / self.unit_slots);
        }
    }

    /// Programs `self.stage` (entry `e` at entry `e`; UNMAPPED = padding) at
    /// position `k` of `unit`, remapping each LPN and invalidating its old
    /// slot.
    fn program(&mut self, unit: u32, k: u32, ops: &mut Vec<NandOp>) {
        let g = self.geo;
        let (die, page) = (k % g.dies(), k / g.dies());
        for e in 0..g.stripe_slots() {
            let (lpn, ver) = self.stage.get(e as usize).copied().unwrap_or((UNMAPPED, 0));
            if lpn == UNMAPPED {
                self.stats.padding_slots += 1;
                continue;
            }
            let slot = self.slot_at(unit, k, e);
            let old = std::mem::replace(&mut self.l2p[lpn as usize], slot);
            if old != UNMAPPED {
                self.invalidate(old);
            }
            self.p2l[slot as usize] = lpn;
            self.journal.record(MapChange::Map { lpn, slot });
            self.slot_version[slot as usize] = ver;
            self.valid[unit as usize] += 1;
            self.written[unit as usize] += 1;
            if self.assoc_limit.is_some() && self.role[unit as usize] == Role::RandLog {
                self.log_gain(unit, lpn / self.unit_slots);
            }
        }
        for pl in 0..g.planes {
            if let Err(e) = self.nand.program(g.block_id(die, pl, unit), page) {
                panic!("mmcsim device: simulator bug: {e}");
            }
        }
        ops.push(NandOp::Program {
            die,
            bytes: g.stripe_slots() * 4096,
            upper: Geometry::is_upper_page(page),
            blk: g.block_id(die, 0, unit),
            page,
        });
        self.stats.programmed_slots += g.stripe_slots() as u64;
        self.stats.nand_programs += 1;
        self.clock += 1;
    }

    /// Copies the valid data of offsets `from..` of logical block `lbn`,
    /// wherever it is, in place into `unit` (positions from `from /
    /// stripe_slots` on), skipping each die's pages after its last valid
    /// data.
    fn copy_into(
        &mut self,
        unit: u32,
        lbn: u32,
        from: u32,
        purpose: Purpose,
        ops: &mut Vec<NandOp>,
    ) {
        self.measure_pages_end(lbn, from);
        let ss = self.geo.stripe_slots();
        self.copy_positions(unit, lbn, from / ss, None, purpose, ops);
    }

    /// Sets `pages_end`: per die, the pages up to the last one holding
    /// valid data of offsets `from..` of `lbn`.
    fn measure_pages_end(&mut self, lbn: u32, from: u32) {
        let g = self.geo;
        let (ss, dies) = (g.stripe_slots(), g.dies());
        let base = lbn * self.unit_slots;
        self.pages_end.iter_mut().for_each(|p| *p = 0);
        for o in from..self.unit_slots {
            if self.l2p[(base + o) as usize] != UNMAPPED {
                let k = o / ss;
                let d = (k % dies) as usize;
                self.pages_end[d] = self.pages_end[d].max(k / dies + 1);
            }
        }
    }

    /// Copies the valid data of `lbn` in place into `unit` from position
    /// `k0` on, up to `pages_end` on each die, stopping after `limit`
    /// stripe-page programs (`None` = to the end); returns the next
    /// position to copy (`positions()` when done).
    fn copy_positions(
        &mut self,
        unit: u32,
        lbn: u32,
        k0: u32,
        limit: Option<u32>,
        purpose: Purpose,
        ops: &mut Vec<NandOp>,
    ) -> u32 {
        let g = self.geo;
        let (ss, dies) = (g.stripe_slots(), g.dies());
        let base = lbn * self.unit_slots;
        let mut programs = 0;
        for k in k0..self.positions() {
            if limit.is_some_and(|l| programs >= l) {
                return k;
            }
            if k / dies >= self.pages_end[(k % dies) as usize] {
                continue;
            }
            programs += 1;
            self.stage.clear();
            self.sources.clear();
            let mut moved = 0u64;
            for e in 0..ss {
                let lpn = base + k * ss + e;
                let slot = self.l2p[lpn as usize];
                if slot == UNMAPPED {
                    self.stage.push((UNMAPPED, 0));
                    continue;
                }
                self.stage.push((lpn, self.slot_version[slot as usize]));
                moved += 1;
                let src = (g.slot_die(slot), g.slot_page_id(slot));
                match self.sources.iter_mut().find(|s| (s.0, s.1) == src) {
                    Some(s) => s.2 += 1,
                    None => self.sources.push((src.0, src.1, 1)),
                }
            }
            for &(die, page_id, n) in &self.sources {
                ops.push(NandOp::Read {
                    die,
                    bytes: n * 4096,
                    upper: Geometry::is_upper_page(page_id % g.pages_per_block),
                });
                self.stats.nand_reads += 1;
            }
            match purpose {
                Purpose::Reclaim => self.stats.gc_slots_moved += moved,
                Purpose::WearLeveling => self.stats.wl_slots_moved += moved,
            }
            self.program(unit, k, ops);
        }
        self.positions()
    }

    /// Frees the old data block of `lbn` (all its data moved) and makes
    /// `unit` its data block.
    fn install(&mut self, lbn: u32, unit: u32, ops: &mut Vec<NandOp>) {
        let old = std::mem::replace(&mut self.data[lbn as usize], unit);
        self.role[unit as usize] = Role::Data(lbn);
        if old != UNMAPPED {
            self.erase(old, ops);
        }
    }

    /// Full merge of `lbn` into a free superblock.
    fn full_merge(&mut self, lbn: u32, purpose: Purpose, ops: &mut Vec<NandOp>) {
        let unit = self.alloc(purpose == Purpose::WearLeveling, Role::Data(lbn));
        self.copy_into(unit, lbn, 0, purpose, ops);
        self.install(lbn, unit, ops);
        if let Some(sw) = self.seq.filter(|s| s.lbn == lbn) {
            self.seq = None;
            self.erase(sw.unit, ops);
        }
        match purpose {
            Purpose::Reclaim => {
                self.stats.merges_full += 1;
                self.stats.gc_runs += 1;
            }
            Purpose::WearLeveling => self.stats.wl_migrations += 1,
        }
    }

    /// Retires the sequential log block: switch, partial or full merge.
    fn merge_seq(&mut self, ops: &mut Vec<NandOp>) {
        let Some(sw) = self.seq else {
            return;
        };
        let base = sw.lbn * self.unit_slots;
        let mut in_order = true;
        let mut rest = false;
        for o in 0..self.unit_slots {
            let slot = self.l2p[(base + o) as usize];
            if slot == UNMAPPED {
                continue;
            }
            if o < sw.next {
                in_order &= self.unit_of(slot) == sw.unit;
            } else {
                rest = true;
            }
        }
        if !in_order {
            if self.budget.is_some() {
                self.begin_full(sw.lbn, ops);
            } else {
                self.full_merge(sw.lbn, Purpose::Reclaim, ops);
            }
            return;
        }
        self.seq = None;
        if sw.next == self.unit_slots && !rest {
            self.stats.merges_switch += 1;
        } else if self.budget.is_some() {
            self.begin_partial(sw, ops);
            return;
        } else {
            self.copy_into(sw.unit, sw.lbn, sw.next, Purpose::Reclaim, ops);
            self.stats.merges_partial += 1;
        }
        self.stats.gc_runs += 1;
        self.install(sw.lbn, sw.unit, ops);
    }

    /// The random log block the policy reclaims, among the full ones
    /// (index into the pool); `None` when none is full. When the pool is
    /// full every block in it is.
    fn rand_victim(&self) -> Option<usize> {
        let positions = self.positions();
        self.victim_among(|_, r| r.next == positions)
    }

    /// The random log block the policy reclaims among those `ok` accepts
    /// (index into the pool and the log block).
    fn victim_among(&self, ok: impl Fn(usize, &RandLog) -> bool + Copy) -> Option<usize> {
        let capacity = (self.positions() * self.geo.stripe_slots()) as f64;
        let valid = |r: &RandLog| self.valid[r.unit as usize];
        let full = || self.rand.iter().enumerate().filter(move |(i, r)| ok(*i, r));
        let pick = match self.policy {
            VictimPolicy::Fifo => full().min_by_key(|(_, r)| r.opened),
            // KAST: a reclaim costs one full merge per logical block held,
            // whatever the valid pages, so greedy takes the fewest logical
            // blocks, then the oldest (a young log block with few pages is
            // the one its logical blocks are writing to).
            VictimPolicy::Greedy if self.assoc_limit.is_some() => {
                full().min_by_key(|(_, r)| (self.log_associativity(r.unit), r.opened))
            }
            VictimPolicy::Greedy => full().min_by_key(|(i, r)| (valid(r), *i)),
            VictimPolicy::CostBenefit => full().max_by(|(i, a), (j, b)| {
                let score = |r: &RandLog| {
                    let v = valid(r);
                    if v == 0 {
                        return f64::INFINITY;
                    }
                    let u = v as f64 / capacity;
                    (self.clock - r.opened) as f64 * (1.0 - u) / (2.0 * u)
                };
                score(a).total_cmp(&score(b)).then(j.cmp(i))
            }),
        };
        pick.map(|(i, _)| i)
    }

    /// The logical block of the first valid page (in position order) of
    /// random log block `unit`, if any.
    fn first_lbn_in(&self, unit: u32) -> Option<u32> {
        (0..self.positions())
            .flat_map(|k| (0..self.geo.stripe_slots()).map(move |e| (k, e)))
            .map(|(k, e)| self.p2l[self.slot_at(unit, k, e) as usize])
            .find(|&lpn| lpn != UNMAPPED)
            .map(|lpn| lpn / self.unit_slots)
    }

    /// Reclaims random log block `i` of the pool: every logical block with
    /// valid data in it is full-merged, then it is erased.
    fn reclaim_rand(&mut self, i: usize, ops: &mut Vec<NandOp>) {
        let victim = self.rand.remove(i);
        for k in 0..self.positions() {
            for e in 0..self.geo.stripe_slots() {
                let lpn = self.p2l[self.slot_at(victim.unit, k, e) as usize];
                if lpn != UNMAPPED {
                    self.full_merge(lpn / self.unit_slots, Purpose::Reclaim, ops);
                }
            }
        }
        self.erase(victim.unit, ops);
    }

    /// Spare superblocks neither reserved for the sequential log block nor
    /// holding a random log block (see
    /// [`Mapping::min_free_blocks_per_die`]).
    fn spare_pool(&self) -> u32 {
        let logs = SEQUENTIAL_LOG_BLOCKS + self.rand.len() as u32;
        (self.units - self.lbns).saturating_sub(logs)
    }

    /// Erases the full random log blocks left without a valid page (their
    /// logical blocks merged meanwhile); true when there was one.
    fn erase_empty_full_logs(&mut self, ops: &mut Vec<NandOp>) -> bool {
        let positions = self.positions();
        let mut any = false;
        let mut i = 0;
        while i < self.rand.len() {
            let r = self.rand[i];
            if r.next == positions && self.valid[r.unit as usize] == 0 {
                self.rand.remove(i);
                self.erase(r.unit, ops);
                any = true;
            } else {
                i += 1;
            }
        }
        any
    }

    /// Frees superblock `unit` (no valid data) as an ERASE does: erased if
    /// it holds programmed pages (true), else returned to the free list as
    /// it is (false).
    fn release(&mut self, unit: u32, ops: &mut Vec<NandOp>) -> bool {
        let g = self.geo;
        let programmed = (0..g.dies()).any(|d| {
            (0..g.planes).any(|pl| self.nand.programmed_pages(g.block_id(d, pl, unit)) > 0)
        });
        if programmed {
            self.erase(unit, ops);
        } else {
            self.written[unit as usize] = 0;
            self.role[unit as usize] = Role::Free;
            self.log_lbns[unit as usize].clear();
            self.free.push(unit);
        }
        programmed
    }

    /// Makes room in the random log pool: opens a new random log block, or
    /// reclaims one (full merges of its logical blocks) when the pool is
    /// full.
    fn rand_room(&mut self, ops: &mut Vec<NandOp>) {
        if self.rand.last().is_some_and(|r| r.next < self.positions()) {
            return;
        }
        self.open_rand_log(ops);
    }

    /// Opens a new random log block, reclaiming one first when the pool is
    /// full (at once, or by finishing the incremental reclaim in progress);
    /// with incremental merging, reclaiming the next victim begins once the
    /// pool is full again and holds a full log block
    /// ([`HybridMapping::begin_reclaim_ahead`]).
    fn open_rand_log(&mut self, ops: &mut Vec<NandOp>) {
        if self.rand.len() as u32 == self.rand_max {
            if self.budget.is_some() {
                self.reclaim_now(ops);
            } else {
                let victim = self.pool_victim().unwrap_or_else(|| {
                    panic!("mmcsim device: simulator bug: the hybrid random log pool is full but holds no log block to reclaim")
                });
                self.reclaim_rand(victim, ops);
                self.static_wear_leveling(ops);
            }
        }
        let unit = self.alloc(false, Role::RandLog);
        self.rand.push(RandLog {
            unit,
            next: 0,
            opened: self.clock,
        });
        if self.budget.is_some() {
            self.begin_reclaim_ahead();
        }
    }

    /// The pool's victim when a new log block is needed at once: among the
    /// full log blocks under FAST (every one when the pool is full), among
    /// all under KAST (a log block closes to new logical blocks before it
    /// is full); never the one being reclaimed.
    fn pool_victim(&self) -> Option<usize> {
        let positions = self.positions();
        let kast = self.assoc_limit.is_some();
        let reclaiming = self.reclaiming;
        self.victim_among(move |_, r| (kast || r.next == positions) && Some(r.unit) != reclaiming)
    }

    /// Static wear leveling: moves the least-worn data block's logical
    /// block to the most-worn free superblock when the spread passes the
    /// threshold.
    fn static_wear_leveling(&mut self, ops: &mut Vec<NandOp>) {
        let Some(threshold) = self.wl.threshold() else {
            return;
        };
        let most = (0..self.units).map(|u| self.wear(u)).max().unwrap_or(0);
        let cold = (0..self.units)
            .filter_map(|u| match self.role[u as usize] {
                Role::Data(lbn) => Some((self.wear(u), u, lbn)),
                _ => None,
            })
            .min();
        if let Some((least, _, lbn)) = cold {
            if most - least > threshold && !self.free.is_empty() {
                self.full_merge(lbn, Purpose::WearLeveling, ops);
            }
        }
    }

    /// Fills `self.stage` with `entries` at entries `0..` (padding after).
    fn stage_entries(&mut self, entries: &[(u32, u32)]) {
        self.stage.clear();
        self.stage.extend_from_slice(entries);
    }
}

impl Mapping for HybridMapping {
    fn clone_box(&self) -> Box<dyn Mapping> {
        Box::new(self.clone())
    }

    fn scheme(&self) -> MappingScheme {
        MappingScheme::Hybrid
    }

    fn owns_translation(&self) -> bool {
        true
    }

    fn in_place(&self) -> bool {
        true
    }

    fn user_lpns(&self) -> u32 {
        self.lbns * self.unit_slots
    }

    /// The random log pool's capacity: after that many random writes every
    /// log block has been reclaimed (full-merging the logical blocks it
    /// held) and refilled, so the state renews itself at that period.
    fn renewal_window(&self) -> Option<u64> {
        Some(u64::from(self.rand_max) * u64::from(self.unit_slots))
    }

    fn lookup(&self, lpn: u32) -> Option<u32> {
        match self.l2p[lpn as usize] {
            UNMAPPED => None,
            s => Some(s),
        }
    }

    fn write(&mut self, entries: &[(u32, u32)], ops: &mut Vec<NandOp>) -> Placement {
        let ss = self.geo.stripe_slots();
        debug_assert!(!entries.is_empty() && entries.len() <= ss as usize);
        let first = ops.len();
        if let Some(b) = self.budget {
            self.merge_step(Some(b), ops);
        }
        let s = self.unit_slots;
        let (lbn, off) = (entries[0].0 / s, entries[0].0 % s);
        let in_order = off % ss == 0
            && entries
                .iter()
                .enumerate()
                .all(|(i, &(l, _))| l / s == lbn && l % s == off + i as u32);
        if in_order && off == 0 {
            self.merge_seq(ops);
            let unit = self.alloc(false, Role::SeqLog);
            self.seq = Some(SeqLog { unit, lbn, next: 0 });
        }
        if let Some(sw) = self
            .seq
            .filter(|w| in_order && w.lbn == lbn && w.next == off)
        {
            let reclaim_ops = ops.len() - first;
            let k = off / ss;
            self.stage_entries(entries);
            self.program(sw.unit, k, ops);
            let next = off + ss;
            self.seq = Some(SeqLog { next, ..sw });
            if next == s {
                self.merge_seq(ops);
            }
            return Placement {
                die: k % self.geo.dies(),
                reclaim_ops,
            };
        }
        if self.assoc_limit.is_some() {
            return self.write_random_kast(entries, first, ops);
        }
        self.rand_room(ops);
        let reclaim_ops = ops.len() - first;
        let r = *self.rand.last().expect("a random log block is open");
        self.stage_entries(entries);
        self.program(r.unit, r.next, ops);
        self.rand.last_mut().expect("open").next += 1;
        Placement {
            die: r.next % self.geo.dies(),
            reclaim_ops,
        }
    }

    fn trim(&mut self, lpn: u32) {
        let old = std::mem::replace(&mut self.l2p[lpn as usize], UNMAPPED);
        if old != UNMAPPED {
            self.invalidate(old);
        }
        self.journal.record(MapChange::Unmap { lpn });
    }

    fn journal(&mut self) -> Option<&mut MapJournal> {
        Some(&mut self.journal)
    }

    fn slot_record(&self, slot: u32) -> Option<(u32, u32)> {
        match self.p2l.get(slot as usize) {
            Some(&lpn) if lpn != UNMAPPED => Some((lpn, self.slot_version[slot as usize])),
            _ => None,
        }
    }

    /// ERASE: every superblock left without a valid page — the sequential
    /// log block, random log blocks (the open one too: the pool opens a
    /// new one when needed) and data blocks (whose logical block then has
    /// none) — is erased and freed. Returns the superblocks erased.
    fn erase_unmapped(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.settle(ops);
        let mut n = 0;
        if let Some(sw) = self.seq.filter(|w| self.valid[w.unit as usize] == 0) {
            self.seq = None;
            n += u32::from(self.release(sw.unit, ops));
        }
        let mut i = 0;
        while i < self.rand.len() {
            let unit = self.rand[i].unit;
            if self.valid[unit as usize] == 0 {
                self.rand.remove(i);
                n += u32::from(self.release(unit, ops));
            } else {
                i += 1;
            }
        }
        for lbn in 0..self.lbns {
            let unit = self.data[lbn as usize];
            if unit != UNMAPPED && self.valid[unit as usize] == 0 {
                self.data[lbn as usize] = UNMAPPED;
                n += u32::from(self.release(unit, ops));
            }
        }
        Some(n)
    }

    /// SANITIZE: the sequential log block is merged (switch, partial or
    /// full merge as it qualifies), every random log block is reclaimed
    /// oldest first (full merges of the logical blocks it holds, then its
    /// erase), then every data block still holding invalid pages (trimmed
    /// in place) is full-merged, or erased and unmapped when nothing in it
    /// is valid. Every logical block is then whole in its data block and no
    /// superblock holds invalid data. Merges count in the merge and GC
    /// counters as in the foreground. Returns the superblocks erased.
    fn sanitize(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.settle(ops);
        let before = self.stats.nand_erases;
        self.merge_seq(ops);
        while !self.rand.is_empty() {
            self.reclaim_rand(0, ops);
        }
        for lbn in 0..self.lbns {
            let unit = self.data[lbn as usize];
            if unit == UNMAPPED || self.written[unit as usize] == self.valid[unit as usize] {
                continue;
            }
            if self.valid[unit as usize] == 0 {
                self.data[lbn as usize] = UNMAPPED;
                self.release(unit, ops);
            } else {
                self.full_merge(lbn, Purpose::Reclaim, ops);
            }
        }
        let erased = (self.stats.nand_erases - before) / u64::from(self.geo.dies());
        Some(u32::try_from(erased).unwrap_or(u32::MAX))
    }

    fn invalid_slots(&self) -> Option<u64> {
        Some(
            self.written
                .iter()
                .zip(&self.valid)
                .map(|(&w, &v)| u64::from(w - v))
                .sum(),
        )
    }

    /// The hybrid FTL's free-block pool: the spare superblocks (blocks
    /// per plane − logical blocks) neither reserved for the sequential log
    /// block nor holding a random log block — the free superblocks, once
    /// every logical block has its data block and the sequential log block
    /// is open, whatever the fill — each one block per plane of every die,
    /// so free blocks per die = planes × that. It shrinks by one superblock
    /// for each random log block opened and grows by one for each
    /// reclaimed, between planes × (spare − 1 − `random_log_blocks`) (≥ 1
    /// superblock: the merge reserve validation keeps) and planes × (spare
    /// − 1): a BKOPS target (`[gc] bkops_target_free_blocks_per_die`) of
    /// planes × (spare − 1 − k) has idle time keep at most `k` random log
    /// blocks open.
    fn min_free_blocks_per_die(&self) -> Option<u32> {
        Some(self.geo.planes * self.spare_pool())
    }

    /// BKOPS: below `target` free blocks per die (see
    /// [`Mapping::min_free_blocks_per_die`]), one step of reclaiming a
    /// random log block: full random log blocks left without a valid page
    /// are erased, then (still below the target) one logical block with
    /// valid pages in the policy's victim among the full random log blocks
    /// is full-merged, and the log blocks that merge emptied are erased —
    /// so a command arriving waits for at most one merge. `None` when
    /// nothing was done. A superblock spans every die: die 0 is reported.
    fn background_collect(&mut self, target: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        self.settle(ops);
        let below = |h: &Self| h.geo.planes * h.spare_pool() < target;
        if !below(self) {
            return None;
        }
        let mut done = self.erase_empty_full_logs(ops);
        if below(self) {
            if let Some(lbn) = self
                .rand_victim()
                .and_then(|i| self.first_lbn_in(self.rand[i].unit))
            {
                self.full_merge(lbn, Purpose::Reclaim, ops);
                self.erase_empty_full_logs(ops);
                done = true;
            }
        }
        done.then_some(0)
    }

    /// Idle-time merging (`[gc] idle_gc_after_ms`): one step of `budget`
    /// stripe pages of the merge in progress; with none, reclaiming a
    /// full random log block begins when the pool is full (every
    /// `random_log_blocks` open), so the next one opens without a merge.
    /// `target` (free blocks per die) is not used: the hybrid free pool
    /// is fixed by the log blocks (see
    /// [`Mapping::min_free_blocks_per_die`]). A superblock spans every
    /// die: die 0 is reported.
    fn idle_collect(&mut self, target: u32, budget: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let _ = target;
        if self.merge_step(Some(budget), ops) {
            return Some(0);
        }
        self.begin_reclaim_ahead();
        self.merge_step(Some(budget), ops).then_some(0)
    }

    fn settle_gc(&mut self, ops: &mut Vec<NandOp>) {
        self.settle(ops);
    }

    fn gc_emergencies(&self) -> u64 {
        self.emergencies
    }

    fn stats(&self) -> FtlStats {
        self.stats
    }

    fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
        self.emergencies = 0;
    }

    fn restore_stats(&mut self, saved: FtlStats) {
        self.stats = saved;
    }

    fn erase_counts(&self) -> &[u32] {
        self.nand.erase_counts()
    }

    /// Saves the resolved L2P table, every block's program position and
    /// erase count, each superblock's role and written-slot count, the log
    /// blocks and the FTL clock; the reverse map, versions, valid counts,
    /// data-block map and free list are rebuilt from them.
    fn save_state(&self, w: &mut StateWriter) -> Result<(), StateError> {
        if self.job.is_some() || self.reclaiming.is_some() {
            return Err(StateError::NotAtRest(
                "a hybrid merge is in progress: a state is saved with merges settled",
            ));
        }
        w.u32s(&self.l2p);
        let (next, erases) = (0..self.geo.blocks())
            .map(|b| (self.nand.programmed_pages(b), self.nand.erase_count(b)))
            .unzip::<u32, u32, Vec<u32>, Vec<u32>>();
        w.u32s(&next);
        w.u32s(&erases);
        let roles: Vec<u32> = self
            .role
            .iter()
            .map(|r| match *r {
                Role::Free => ROLE_FREE,
                Role::SeqLog => ROLE_SEQ_LOG,
                Role::RandLog => ROLE_RAND_LOG,
                Role::Data(lbn) => lbn,
                Role::Target(_) => unreachable!("merges are settled before a save"),
            })
            .collect();
        w.u32s(&roles);
        w.u32s(&self.written);
        match self.seq {
            Some(sw) => {
                w.u8(1);
                w.u32(sw.unit);
                w.u32(sw.lbn);
                w.u32(sw.next);
            }
            None => w.u8(0),
        }
        w.u32(self.rand.len() as u32);
        for r in &self.rand {
            w.u32(r.unit);
            w.u32(r.next);
            w.u64(r.opened);
        }
        w.u64(self.clock);
        Ok(())
    }

    fn load_state(&mut self, r: &mut StateReader<'_>, expected: &[u32]) -> Result<(), StateError> {
        r.u32s_into("the hybrid L2P table", &mut self.l2p)?;
        self.load_nand(r)?;
        let mut roles = vec![0u32; self.units as usize];
        r.u32s_into("the superblock roles", &mut roles)?;
        r.u32s_into("the superblock written-slot counts", &mut self.written)?;
        self.load_roles(&roles)?;
        self.load_seq_log(r)?;
        self.load_rand_logs(r)?;
        let logs = self.role.iter().filter(|&&r| r == Role::SeqLog).count()
            + self.role.iter().filter(|&&r| r == Role::RandLog).count();
        if logs != self.rand.len() + usize::from(self.seq.is_some()) {
            return Err(corrupt(
                "a superblock has a log role but is not a log block".to_string(),
            ));
        }
        self.clock = r.u64("the FTL clock")?;
        self.rebuild_reverse_map(expected)?;
        self.rebuild_log_lbns();
        self.job = None;
        self.reclaiming = None;
        self.check_written_counts()?;
        self.stats = FtlStats::default();
        Ok(())
    }

    fn check(&self, pending: &[(u32, u32)], expected: &[u32]) -> Result<(), IntegrityError> {
        self.check_mapping(pending, expected)?;
        for u in 0..self.units {
            let valid = self.check_superblock_slots(u)?;
            self.check_superblock_role(u, valid)?;
        }
        Ok(())
    }
}

/// The error of a saved state that contradicts itself: `what` and that the
/// file is corrupted.
fn corrupt(what: String) -> StateError {
    StateError::corrupt(what)
}

/// The steps of [`HybridMapping`]'s `load_state` (in file order) and of
/// its `check`.
impl HybridMapping {
    /// Reads each block's program position (no more than a block's pages)
    /// and erase count.
    fn load_nand(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let pages_per_block = self.geo.pages_per_block;
        let (next, erases) = self.nand.state_mut();
        r.u32s_into("the block program positions", next)?;
        if let Some(b) = next.iter().position(|&p| p > pages_per_block) {
            return Err(corrupt(format!(
                "block {b} has {} pages programmed, more than {pages_per_block}",
                next[b]
            )));
        }
        r.u32s_into("the erase counts", erases)
    }

    /// Sets each superblock's role from its saved code, rebuilding the free
    /// pool and the logical-block-to-data-block table; a logical block
    /// beyond the device or given twice is corruption.
    fn load_roles(&mut self, roles: &[u32]) -> Result<(), StateError> {
        self.data.iter_mut().for_each(|d| *d = UNMAPPED);
        self.free.clear();
        for (u, &code) in roles.iter().enumerate() {
            let u = u as u32;
            self.role[u as usize] = match code {
                ROLE_FREE => {
                    self.free.push(u);
                    Role::Free
                }
                ROLE_SEQ_LOG => Role::SeqLog,
                ROLE_RAND_LOG => Role::RandLog,
                lbn if lbn < self.lbns && self.data[lbn as usize] == UNMAPPED => {
                    self.data[lbn as usize] = u;
                    Role::Data(lbn)
                }
                lbn => {
                    return Err(corrupt(format!(
                        "superblock {u} is the data block of logical block {lbn}, beyond the {} logical blocks or given twice",
                        self.lbns
                    )))
                }
            };
        }
        Ok(())
    }

    /// Reads the open sequential log block, which must be a superblock of
    /// that role, write stripe-aligned, within its unit.
    fn load_seq_log(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        self.seq = match r.u8("the sequential log block")? {
            0 => None,
            1 => Some(SeqLog {
                unit: r.u32("the sequential log block")?,
                lbn: r.u32("the sequential log block")?,
                next: r.u32("the sequential log block")?,
            }),
            f => return Err(corrupt(format!("the sequential log block flag is {f}"))),
        };
        if let Some(sw) = self.seq {
            if sw.unit >= self.units
                || self.role[sw.unit as usize] != Role::SeqLog
                || sw.lbn >= self.lbns
                || sw.next > self.unit_slots
                || sw.next % self.geo.stripe_slots() != 0
            {
                return Err(corrupt(format!(
                    "the sequential log block {sw:?} does not fit the roles"
                )));
            }
        }
        Ok(())
    }

    /// Reads the random log pool: no more blocks than the profile allows,
    /// each a distinct superblock of that role.
    fn load_rand_logs(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        let n = r.u32("the random log pool")?;
        if n > self.rand_max {
            return Err(corrupt(format!(
                "{n} random log blocks, but the profile allows {}",
                self.rand_max
            )));
        }
        self.rand.clear();
        for _ in 0..n {
            let rl = RandLog {
                unit: r.u32("the random log pool")?,
                next: r.u32("the random log pool")?,
                opened: r.u64("the random log pool")?,
            };
            if rl.unit >= self.units
                || self.role[rl.unit as usize] != Role::RandLog
                || rl.next > self.positions()
                || self.rand.iter().any(|o| o.unit == rl.unit)
            {
                return Err(corrupt(format!(
                    "the random log block {rl:?} does not fit the roles"
                )));
            }
            self.rand.push(rl);
        }
        Ok(())
    }

    /// Rebuilds the physical-to-logical map, the slot versions (from the
    /// oracle's `expected`) and the valid counts from the loaded L2P table;
    /// two pages in one slot, or a slot outside the array, is corruption.
    fn rebuild_reverse_map(&mut self, expected: &[u32]) -> Result<(), StateError> {
        let g = self.geo;
        self.p2l.iter_mut().for_each(|p| *p = UNMAPPED);
        self.valid.iter_mut().for_each(|v| *v = 0);
        for (lpn, &slot) in self.l2p.iter().enumerate() {
            if slot == UNMAPPED {
                continue;
            }
            if slot >= g.slots() || self.p2l[slot as usize] != UNMAPPED {
                return Err(corrupt(format!(
                    "LPN {lpn} maps to slot {slot}, outside the array or already mapped"
                )));
            }
            self.p2l[slot as usize] = lpn as u32;
            self.slot_version[slot as usize] = expected.get(lpn).copied().unwrap_or(0);
            let u = (g.slot_block(slot) % g.blocks_per_plane) as usize;
            self.valid[u] += 1;
        }
        Ok(())
    }

    /// Each superblock's written-slot count lies between its valid count
    /// and its capacity.
    fn check_written_counts(&self) -> Result<(), StateError> {
        let capacity = self.positions() * self.geo.stripe_slots();
        for u in 0..self.units as usize {
            if self.written[u] < self.valid[u] || self.written[u] > capacity {
                return Err(corrupt(format!(
                    "superblock {u} has {} slots written but {} valid (at most {capacity})",
                    self.written[u], self.valid[u]
                )));
            }
        }
        Ok(())
    }

    /// Each LPN's newest version (from the write buffer's `pending`, else
    /// its mapped slot) is the oracle's `expected`, and each mapped slot's
    /// reverse entry names the LPN back.
    fn check_mapping(
        &self,
        pending: &[(u32, u32)],
        expected: &[u32],
    ) -> Result<(), IntegrityError> {
        let mut newest_pending = vec![0u32; self.l2p.len()];
        for &(lpn, ver) in pending {
            newest_pending[lpn as usize] = ver;
        }
        for lpn in 0..self.l2p.len() as u32 {
            let slot = self.l2p[lpn as usize];
            if slot != UNMAPPED && self.p2l[slot as usize] != lpn {
                return Err(IntegrityError::ReverseMismatch {
                    lpn,
                    slot,
                    p2l: self.p2l[slot as usize],
                });
            }
            let got = match (newest_pending[lpn as usize], slot) {
                (0, UNMAPPED) => 0,
                (0, s) => self.slot_version[s as usize],
                (v, _) => v,
            };
            if got != expected[lpn as usize] {
                return Err(IntegrityError::StaleData {
                    lpn,
                    got,
                    want: expected[lpn as usize],
                });
            }
        }
        Ok(())
    }

    /// Walks superblock `u`'s valid slots: each lies below its block's
    /// program point, is the one its LPN maps to, and sits where `u`'s role
    /// allows; returns how many there are, which must be the recorded
    /// valid count.
    fn check_superblock_slots(&self, u: u32) -> Result<u32, IntegrityError> {
        let role = self.role[u as usize];
        let mut valid = 0;
        for k in 0..self.positions() {
            for e in 0..self.geo.stripe_slots() {
                let slot = self.slot_at(u, k, e);
                let lpn = self.p2l[slot as usize];
                if lpn == UNMAPPED {
                    continue;
                }
                let blk = self.geo.slot_block(slot);
                if self.geo.slot_page(slot) >= self.nand.programmed_pages(blk) {
                    return Err(IntegrityError::AboveProgramPoint { slot, blk, lpn });
                }
                if self.l2p.get(lpn as usize) != Some(&slot) {
                    return Err(IntegrityError::Orphan { slot, lpn });
                }
                let in_place = self.offset_of(slot) == lpn % self.unit_slots;
                let lbn = lpn / self.unit_slots;
                let ok = match role {
                    Role::Data(l) | Role::Target(l) => l == lbn && in_place,
                    Role::SeqLog => self.seq_lbn_of(u) == Some(lbn) && in_place,
                    Role::RandLog => true,
                    Role::Free => false,
                };
                if !ok {
                    return Err(stripe_state(
                        u,
                        BlockState::Full,
                        "holds a page outside its logical block or offset",
                    ));
                }
                valid += 1;
            }
        }
        if valid != self.valid[u as usize] {
            return Err(IntegrityError::ValidCount {
                stripe: u,
                recorded: self.valid[u as usize],
                counted: valid,
            });
        }
        Ok(valid)
    }

    /// Superblock `u` (holding `valid` valid slots) records at least as
    /// many slots written, is listed where its role says (free pool, data
    /// table, merge job, log pools), and is erased when free.
    fn check_superblock_role(&self, u: u32, valid: u32) -> Result<(), IntegrityError> {
        let role = self.role[u as usize];
        if self.written[u as usize] < valid {
            return Err(stripe_state(
                u,
                BlockState::Full,
                "records fewer slots written than valid",
            ));
        }
        let listed = match role {
            Role::Free => self.free.contains(&u),
            Role::Data(l) => self.data[l as usize] == u,
            Role::Target(l) => self.job.is_some_and(|j| j.unit == u && j.lbn == l),
            Role::SeqLog => self.seq_lbn_of(u).is_some(),
            Role::RandLog => self.rand.iter().any(|r| r.unit == u) && self.log_lbns_agree(u),
        };
        let erased = (0..self.geo.dies()).all(|d| {
            (0..self.geo.planes)
                .all(|pl| self.nand.programmed_pages(self.geo.block_id(d, pl, u)) == 0)
        });
        if !listed || (role == Role::Free && !erased) {
            return Err(stripe_state(
                u,
                BlockState::Free,
                "role not recorded, or a free superblock not erased",
            ));
        }
        Ok(())
    }
}

/// The integrity error of superblock `stripe`, seen in `state`, with
/// `problem`.
fn stripe_state(stripe: u32, state: BlockState, problem: &'static str) -> IntegrityError {
    IntegrityError::StripeState {
        stripe,
        state,
        problem,
    }
}

#[cfg(test)]
mod tests;
