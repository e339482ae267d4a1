//! The block manager: erase blocks, their free pools, write points and
//! valid-data accounting.
//!
//! * Blocks are handled in *stripes* ("superblocks"): block `b` of every
//!   plane of a die, allocated, programmed (one multi-plane program per
//!   stripe page, same page offset on every plane), collected and erased
//!   (multi-plane erase) together, so the planes of a die never run out of
//!   free blocks unevenly. Stripe `s` is `die * blocks_per_plane + b`.
//! * Each die has a host write point and a GC write point ([`Stream`]), so
//!   data moved by GC (cold) does not mix with host data, and a third one
//!   for the cold data static wear leveling moves (used only when that is
//!   on). Host stripe pages go to the dies round-robin (the mapping
//!   decides).
//! * Allocation takes a die's least-worn free stripe (ordered set
//!   `(erase_count, stripe)`): dynamic wear leveling. With it off, the
//!   lowest-numbered free stripe. The cold write point takes the most-worn
//!   (highest-numbered) one instead.
//! * Full stripes are kept in a per-die [`VictimTree`] (a tournament tree
//!   keyed by `(valid, stripe)`: the greedy victim at its root); each
//!   stripe also records when it was filled and last modified (in
//!   stripe-page programs) for the FIFO and cost-benefit policies.
//! * Every slot's out-of-band record holds the LPN and oracle version written
//!   with it (the physical-to-logical map); invalidating a slot clears its
//!   LPN, so "valid" = "has an LPN".
//! * Neither the free pools ([`SortedSet`]s: sorted vectors with room for
//!   every stripe of the die reserved up front) nor the victim trees
//!   (fixed arrays) allocate after the manager is built: the hot path —
//!   a valid count dropping on every overwrite — is a short walk up the
//!   tree.

use super::{BlockState, FtlStats, UNMAPPED};
use crate::device::nand::{Geometry, NandArray, NandOp};
use crate::device::state::{StateError, StateReader, StateWriter};

/// An ordered set of `(u32, u32)` keys of fixed capacity: one sorted vector
/// whose capacity is reserved when it is built (and kept by `clone`), so
/// inserting, removing and re-keying never allocate. Lookups are binary
/// searches; an insert or removal shifts the keys after it.
#[derive(Debug)]
pub struct SortedSet {
    keys: Vec<(u32, u32)>,
    capacity: usize,
}

impl Clone for SortedSet {
    fn clone(&self) -> Self {
        let mut keys = Vec::with_capacity(self.capacity.max(self.keys.len()));
        keys.extend_from_slice(&self.keys);
        SortedSet {
            keys,
            capacity: self.capacity,
        }
    }
}

impl SortedSet {
    /// An empty set with room for `capacity` keys.
    pub fn with_capacity(capacity: usize) -> SortedSet {
        SortedSet {
            keys: Vec::with_capacity(capacity),
            capacity,
        }
    }
    /// Keys in the set.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    /// True when `k` is in the set.
    pub fn contains(&self, k: &(u32, u32)) -> bool {
        self.keys.binary_search(k).is_ok()
    }
    /// Adds `k` (which must not be in the set).
    pub fn insert(&mut self, k: (u32, u32)) {
        debug_assert!(self.keys.len() < self.capacity, "SortedSet over capacity");
        let i = self.keys.partition_point(|&x| x < k);
        debug_assert_ne!(self.keys.get(i), Some(&k), "key already in the set");
        self.keys.insert(i, k);
    }
    /// Removes `k`; false when it was not in the set.
    pub fn remove(&mut self, k: &(u32, u32)) -> bool {
        match self.keys.binary_search(k) {
            Ok(i) => {
                self.keys.remove(i);
                true
            }
            Err(_) => false,
        }
    }
    /// Removes and returns the smallest key.
    pub fn pop_first(&mut self) -> Option<(u32, u32)> {
        (!self.keys.is_empty()).then(|| self.keys.remove(0))
    }
    /// Removes and returns the largest key.
    pub fn pop_last(&mut self) -> Option<(u32, u32)> {
        self.keys.pop()
    }
    /// The keys, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.keys.iter().copied()
    }
    /// Replaces the contents with `keys` (distinct, in any order; at most
    /// the capacity), sorting them once instead of inserting one by one.
    pub fn replace(&mut self, mut keys: Vec<(u32, u32)>) {
        debug_assert!(keys.len() <= self.capacity, "SortedSet over capacity");
        keys.sort_unstable();
        debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "duplicate keys");
        self.keys.clear();
        self.keys.extend_from_slice(&keys);
    }
}

/// The full stripes of one die keyed by `(valid, stripe)`, as a tournament
/// (winner) tree over all the die's stripes: every inner node holds the
/// smaller key of its two children, so the root is the stripe with the
/// fewest valid slots, ties to the lowest number — exactly the first key
/// of an ordered set. Changing a key walks one leaf-to-root path (a valid
/// count dropping usually stops after a step or two); stripes that are not
/// full are absent leaves. Fixed arrays: nothing allocates after `new`.
#[derive(Clone, Debug)]
pub struct VictimTree {
    /// First stripe of the die.
    base: u32,
    /// Leaves: the stripe count rounded up to a power of two.
    size: usize,
    /// Per leaf (stripe − base): its valid count, [`VictimTree::ABSENT`]
    /// when not a candidate.
    key: Vec<u32>,
    /// Per node (root 1, children 2k and 2k + 1, leaf i at size + i): the
    /// winning leaf of its subtree.
    win: Vec<u32>,
}

impl VictimTree {
    const ABSENT: u32 = u32::MAX;

    /// An empty tree for stripes `base..base + n`.
    pub fn new(base: u32, n: u32) -> VictimTree {
        let size = (n as usize).next_power_of_two().max(1);
        let mut win = vec![0u32; 2 * size];
        for i in 0..size {
            win[size + i] = i as u32;
        }
        for j in (1..size).rev() {
            win[j] = win[2 * j];
        }
        VictimTree {
            base,
            size,
            key: vec![Self::ABSENT; size],
            win,
        }
    }

    /// The smaller of two leaves by `(key, leaf)`.
    fn better(&self, a: u32, b: u32) -> u32 {
        if (self.key[a as usize], a) <= (self.key[b as usize], b) {
            a
        } else {
            b
        }
    }

    /// Sets leaf `i`'s key and recomputes its path to the root.
    fn set(&mut self, i: u32, key: u32) {
        self.key[i as usize] = key;
        let mut j = (self.size + i as usize) / 2;
        while j >= 1 {
            self.win[j] = self.better(self.win[2 * j], self.win[2 * j + 1]);
            j /= 2;
        }
    }

    /// Adds full stripe `sb` with `valid` slots.
    pub fn insert(&mut self, valid: u32, sb: u32) {
        debug_assert_eq!(self.key[(sb - self.base) as usize], Self::ABSENT);
        self.set(sb - self.base, valid);
    }

    /// Removes stripe `sb`.
    pub fn remove(&mut self, sb: u32) {
        self.set(sb - self.base, Self::ABSENT);
    }

    /// Stripe `sb` lost one valid slot: it can only move towards the root,
    /// and only as far as it now wins.
    pub fn decrement(&mut self, sb: u32) {
        let i = sb - self.base;
        let k = self.key[i as usize];
        debug_assert!(k != Self::ABSENT && k > 0);
        self.key[i as usize] = k - 1;
        let mut j = (self.size + i as usize) / 2;
        while j >= 1 {
            let w = self.win[j];
            if w != i {
                if self.better(i, w) != i {
                    break;
                }
                self.win[j] = i;
            }
            j /= 2;
        }
    }

    /// The candidate with the fewest valid slots (ties: lowest stripe), as
    /// `(valid, stripe)`.
    pub fn first(&self) -> Option<(u32, u32)> {
        let w = self.win[1];
        let k = self.key[w as usize];
        (k != Self::ABSENT).then_some((k, self.base + w))
    }

    /// True when `sb` is a candidate recorded with `valid` slots.
    pub fn holds(&self, valid: u32, sb: u32) -> bool {
        self.key.get((sb - self.base) as usize) == Some(&valid) && valid != Self::ABSENT
    }

    /// The candidates as `(valid, stripe)`, in stripe order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.key
            .iter()
            .enumerate()
            .filter(|&(_, &k)| k != Self::ABSENT)
            .map(|(i, &k)| (k, self.base + i as u32))
    }

    /// Replaces every leaf's key at once — `keys` gives, per stripe of the
    /// die in order, its valid count when it is a candidate — and
    /// recomputes the inner nodes bottom-up.
    fn rebuild(&mut self, mut keys: impl Iterator<Item = Option<u32>>) {
        for k in &mut self.key {
            *k = keys.next().flatten().unwrap_or(Self::ABSENT);
        }
        for i in 0..self.size {
            self.win[self.size + i] = i as u32;
        }
        for j in (1..self.size).rev() {
            self.win[j] = self.better(self.win[2 * j], self.win[2 * j + 1]);
        }
    }
}

/// Which write point of a die a program goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Host data.
    Host,
    /// Data moved by garbage collection.
    Gc,
    /// Cold data moved by static wear leveling; its stripes are the die's
    /// most-worn free ones, so cold data rests on worn blocks.
    Cold,
}

/// Write points per die (one per [`Stream`]).
const STREAMS: usize = 3;

/// One programmed stripe page: stripe and page offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripePage {
    /// Stripe (`die * blocks_per_plane + block`).
    pub stripe: u32,
    /// Page offset within the stripe's blocks.
    pub page: u32,
}

/// A die's write point: the open stripe and its next page (`pages_per_block`
/// = none open).
#[derive(Clone, Copy, Debug)]
struct WritePoint {
    stripe: u32,
    page: u32,
}

/// Block state of the whole array.
#[derive(Clone, Debug)]
pub struct BlockManager {
    pub(super) geo: Geometry,
    pub(super) nand: NandArray,
    /// Per slot: the LPN stored there while valid, else [`UNMAPPED`].
    pub(super) p2l: Vec<u32>,
    /// Per slot: the oracle version written with the data.
    pub(super) slot_version: Vec<u32>,
    /// Per stripe: valid slots.
    pub(super) valid: Vec<u32>,
    /// Per stripe: slots programmed with host or moved data since its
    /// erase (padding excluded); `written − valid` are its invalid slots
    /// (overwritten, trimmed or moved data still on NAND).
    written: Vec<u32>,
    pub(super) state: Vec<BlockState>,
    /// Per die: free stripes keyed by wear `(erase_count, stripe)`.
    pub(super) free: Vec<SortedSet>,
    /// Per die: full stripes keyed by `(valid, stripe)`.
    pub(super) full: Vec<VictimTree>,
    /// Per die: one write point per [`Stream`].
    points: Vec<[WritePoint; STREAMS]>,
    dynamic_wl: bool,
    /// Stripe pages programmed so far: the FTL's logical clock.
    clock: u64,
    /// Per stripe: clock when it became full.
    filled_at: Vec<u64>,
    /// Per stripe: clock of its last program or invalidation.
    modified_at: Vec<u64>,
    /// Per die: the victim incremental GC is collecting and the next of
    /// its pages to scan (`[gc] copy_budget_pages`); the stripe is in
    /// [`BlockState::Collecting`] meanwhile.
    in_progress: Vec<Option<(u32, u32)>>,
}

impl BlockManager {
    /// A fully erased array; `dynamic_wl` selects least-worn allocation.
    pub fn new(geo: Geometry, dynamic_wl: bool) -> BlockManager {
        let dies = geo.dies() as usize;
        let stripes = geo.dies() * geo.blocks_per_plane;
        let slots = geo.slots() as usize;
        let per_die = geo.blocks_per_plane as usize;
        let mut free = vec![SortedSet::with_capacity(per_die); dies];
        for sb in 0..stripes {
            free[(sb / geo.blocks_per_plane) as usize].insert((0, sb));
        }
        let none = WritePoint {
            stripe: UNMAPPED,
            page: geo.pages_per_block,
        };
        BlockManager {
            geo,
            nand: NandArray::new(geo),
            p2l: vec![UNMAPPED; slots],
            slot_version: vec![0; slots],
            valid: vec![0; stripes as usize],
            written: vec![0; stripes as usize],
            state: vec![BlockState::Free; stripes as usize],
            free,
            full: (0..geo.dies())
                .map(|d| VictimTree::new(d * geo.blocks_per_plane, geo.blocks_per_plane))
                .collect(),
            points: vec![[none; STREAMS]; dies],
            dynamic_wl,
            clock: 0,
            filled_at: vec![0; stripes as usize],
            modified_at: vec![0; stripes as usize],
            in_progress: vec![None; dies],
        }
    }

    /// The victim incremental GC is part-way through on `die`, with the
    /// next page to scan.
    pub fn in_progress(&self, die: u32) -> Option<(u32, u32)> {
        self.in_progress[die as usize]
    }

    /// Notes (or with `None` clears) the victim incremental GC is part-way
    /// through on `die`.
    pub fn set_in_progress(&mut self, die: u32, v: Option<(u32, u32)>) {
        self.in_progress[die as usize] = v;
    }

    /// The array geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    /// Stripes per die.
    pub fn stripes_per_die(&self) -> u32 {
        self.geo.blocks_per_plane
    }
    /// Free blocks on `die` (free stripes × planes).
    pub fn free_blocks(&self, die: u32) -> u32 {
        self.free[die as usize].len() as u32 * self.geo.planes
    }
    /// Free stripes on `die`.
    pub fn free_stripes(&self, die: u32) -> u32 {
        self.free[die as usize].len() as u32
    }
    /// Die of a stripe.
    pub fn stripe_die(&self, sb: u32) -> u32 {
        sb / self.geo.blocks_per_plane
    }
    /// Block of `plane` in stripe `sb`.
    pub fn stripe_block(&self, sb: u32, plane: u32) -> u32 {
        let g = &self.geo;
        g.block_id(sb / g.blocks_per_plane, plane, sb % g.blocks_per_plane)
    }
    /// Stripe holding a block.
    pub fn block_stripe(&self, blk: u32) -> u32 {
        let g = &self.geo;
        g.block_die(blk) * g.blocks_per_plane + blk % g.blocks_per_plane
    }
    /// Slot of entry `i` of stripe page `at` (entries fill plane 0's page
    /// first, then plane 1's, ...).
    pub fn slot_of(&self, at: StripePage, i: u32) -> u32 {
        let spp = self.geo.slots_per_page;
        self.geo
            .slot(self.stripe_block(at.stripe, i / spp), at.page, i % spp)
    }
    /// LPN whose valid data is in `slot`, if any.
    pub fn owner(&self, slot: u32) -> Option<u32> {
        match self.p2l[slot as usize] {
            UNMAPPED => None,
            l => Some(l),
        }
    }
    /// Oracle version stored with the data in `slot`.
    pub fn slot_version(&self, slot: u32) -> u32 {
        self.slot_version[slot as usize]
    }
    /// Valid slots of stripe `sb`.
    pub fn valid(&self, sb: u32) -> u32 {
        self.valid[sb as usize]
    }
    /// Erase count of stripe `sb` (its blocks are erased together).
    pub fn erase_count(&self, sb: u32) -> u32 {
        self.nand.erase_count(self.stripe_block(sb, 0))
    }
    /// Erase count of every block.
    pub fn erase_counts(&self) -> &[u32] {
        self.nand.erase_counts()
    }
    /// Stripe pages programmed so far (the FTL's logical clock).
    pub fn clock(&self) -> u64 {
        self.clock
    }
    /// Clock when full stripe `sb` was filled.
    pub fn filled_at(&self, sb: u32) -> u64 {
        self.filled_at[sb as usize]
    }
    /// Clock of the last program or invalidation in stripe `sb`.
    pub fn modified_at(&self, sb: u32) -> u64 {
        self.modified_at[sb as usize]
    }
    /// Full stripes of `die` (the victim candidates) as `(valid, stripe)`,
    /// in stripe order.
    pub fn full_stripes(&self, die: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.full[die as usize].iter()
    }
    /// The full stripe of `die` with the fewest valid slots (ties: the
    /// lowest-numbered), as `(valid, stripe)`.
    pub fn least_valid_full(&self, die: u32) -> Option<(u32, u32)> {
        self.full[die as usize].first()
    }
    /// True when full stripe `sb` is a victim candidate with `valid` slots
    /// (for checks).
    pub(super) fn is_candidate(&self, valid: u32, sb: u32) -> bool {
        self.full[self.stripe_die(sb) as usize].holds(valid, sb)
    }
    /// Open stripe of either write point of `die` (for checks).
    pub(super) fn is_write_point(&self, die: u32, sb: u32) -> bool {
        self.points[die as usize].iter().any(|p| p.stripe == sb)
    }

    /// True when the host may program on `die` now: its write point has room,
    /// or a new stripe may be opened while one stays free for GC.
    pub fn host_can_write(&self, die: u32) -> bool {
        self.points[die as usize][Stream::Host as usize].page < self.geo.pages_per_block
            || self.free_stripes(die) >= 2
    }

    fn free_key(&self, sb: u32) -> (u32, u32) {
        if self.dynamic_wl {
            (self.erase_count(sb), sb)
        } else {
            (0, sb)
        }
    }

    /// True when free stripe `sb` is in its die's free pool (for checks).
    pub(super) fn in_free_pool(&self, sb: u32) -> bool {
        self.free[self.stripe_die(sb) as usize].contains(&self.free_key(sb))
    }

    /// Takes the next free stripe of `die` for `stream` (least worn with
    /// dynamic wear leveling; most worn for cold data). A free stripe always
    /// exists where this is called: the host opens one only while another
    /// stays free, and GC and wear leveling collect only a stripe whose
    /// valid data fits one new stripe, with a free stripe left.
    fn alloc(&mut self, die: u32, stream: Stream) -> u32 {
        let pool = &mut self.free[die as usize];
        let next = match stream {
            Stream::Cold => pool.pop_last(),
            Stream::Host | Stream::Gc => pool.pop_first(),
        };
        let (_, sb) = next.unwrap_or_else(|| {
            panic!("mmcsim device: simulator bug: die {die} has no free block for a write point")
        });
        debug_assert_eq!(self.state[sb as usize], BlockState::Free);
        self.state[sb as usize] = BlockState::Open;
        sb
    }

    /// Programs one stripe page of `entries` (`(lpn, version)`, at most a
    /// stripe page; the rest is padding) at `die`'s `stream` write point,
    /// opening a new stripe if it is full, and records each entry as the
    /// valid content of its slot. Mapping the LPNs is the caller's job
    /// ([`super::page_table::PageTable::write`]).
    pub fn program(
        &mut self,
        die: u32,
        stream: Stream,
        entries: &[(u32, u32)],
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> StripePage {
        let g = self.geo;
        let ppb = g.pages_per_block;
        let (d, s) = (die as usize, stream as usize);
        if self.points[d][s].page == ppb {
            let sb = self.alloc(die, stream);
            self.points[d][s] = WritePoint {
                stripe: sb,
                page: 0,
            };
        }
        let WritePoint { stripe: sb, page } = self.points[d][s];
        let at = StripePage { stripe: sb, page };
        for i in 0..g.stripe_slots() {
            let slot = self.slot_of(at, i) as usize;
            if let Some(&(lpn, ver)) = entries.get(i as usize) {
                self.p2l[slot] = lpn;
                self.slot_version[slot] = ver;
                self.valid[sb as usize] += 1;
                self.written[sb as usize] += 1;
            } else {
                stats.padding_slots += 1;
            }
        }
        for pl in 0..g.planes {
            let blk = self.stripe_block(sb, pl);
            if let Err(e) = self.nand.program(blk, page) {
                panic!("mmcsim device: simulator bug: {e}");
            }
        }
        ops.push(NandOp::Program {
            die,
            bytes: g.stripe_slots() * 4096,
            upper: Geometry::is_upper_page(page),
            blk: self.stripe_block(sb, 0),
            page,
        });
        stats.programmed_slots += g.stripe_slots() as u64;
        stats.nand_programs += 1;
        self.clock += 1;
        self.modified_at[sb as usize] = self.clock;
        if page + 1 == ppb {
            self.state[sb as usize] = BlockState::Full;
            self.filled_at[sb as usize] = self.clock;
            self.full[d].insert(self.valid[sb as usize], sb);
        }
        self.points[d][s].page = page + 1;
        at
    }

    /// Marks the data in `slot` invalid (overwritten, trimmed or moved).
    pub fn invalidate(&mut self, slot: u32) {
        let sb = self.block_stripe(self.geo.slot_block(slot));
        self.p2l[slot as usize] = UNMAPPED;
        let b = sb as usize;
        self.modified_at[b] = self.clock;
        if self.state[b] == BlockState::Full {
            self.full[(sb / self.geo.blocks_per_plane) as usize].decrement(sb);
            self.valid[b] -= 1;
        } else {
            self.valid[b] -= 1;
        }
    }

    /// Invalid slots of stripe `sb`: data programmed there and since
    /// overwritten, trimmed or moved (padding excluded).
    pub fn invalid(&self, sb: u32) -> u32 {
        self.written[sb as usize] - self.valid[sb as usize]
    }

    /// Fills the open write points of `die` whose stripe holds invalid
    /// data with padding pages until the stripe is full (the firmware
    /// closes the block so it can be collected); returns the stripe pages
    /// programmed.
    pub fn close_points_with_invalid(
        &mut self,
        die: u32,
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> u32 {
        let ppb = self.geo.pages_per_block;
        let mut pages = 0;
        for s in [Stream::Host, Stream::Gc, Stream::Cold] {
            let p = self.points[die as usize][s as usize];
            if p.page == ppb || self.invalid(p.stripe) == 0 {
                continue;
            }
            for _ in p.page..ppb {
                self.program(die, s, &[], stats, ops);
                pages += 1;
            }
        }
        pages
    }

    /// Takes full stripe `sb` out of the victim candidates to collect it.
    pub fn begin_collect(&mut self, sb: u32) {
        let die = self.stripe_die(sb) as usize;
        debug_assert_eq!(self.state[sb as usize], BlockState::Full);
        self.full[die].remove(sb);
        self.state[sb as usize] = BlockState::Collecting;
    }

    /// Erases collected stripe `sb` (one multi-plane erase) and returns it
    /// to its die's free pool.
    pub fn erase(&mut self, sb: u32, stats: &mut FtlStats, ops: &mut Vec<NandOp>) {
        let die = self.stripe_die(sb);
        debug_assert_eq!(self.valid[sb as usize], 0, "erasing valid data");
        for pl in 0..self.geo.planes {
            let blk = self.stripe_block(sb, pl);
            self.nand.erase(blk);
            ops.push(NandOp::Erase {
                die,
                blk,
                multi_plane: pl > 0,
            });
        }
        stats.nand_erases += 1;
        self.written[sb as usize] = 0;
        self.state[sb as usize] = BlockState::Free;
        let key = self.free_key(sb);
        self.free[die as usize].insert(key);
    }

    /// Records every mapped LPN of `l2p` (with its `expected` version) as
    /// the valid content of its slot, refusing a slot outside the array or
    /// claimed by two LPNs (the slot records must all be unmapped).
    fn map_slots(&mut self, l2p: &[u32], expected: &[u32]) -> Result<(), StateError> {
        let p2l = &mut self.p2l[..];
        let versions = &mut self.slot_version[..p2l.len()];
        let expected = &expected[..l2p.len()];
        for lpn in 0..l2p.len() {
            let slot = l2p[lpn];
            if slot == UNMAPPED {
                continue;
            }
            let s = slot as usize;
            if s >= p2l.len() || p2l[s] != UNMAPPED {
                return Err(bad_slot(lpn, slot));
            }
            p2l[s] = lpn as u32;
            versions[s] = expected[lpn];
        }
        Ok(())
    }

    /// Sets every stripe's valid count from the slot records (one pass
    /// over them, block by block).
    fn count_valid(&mut self) {
        let per_block = self.geo.slots_per_block() as usize;
        self.valid.fill(0);
        for (blk, slots) in self.p2l.chunks_exact(per_block).enumerate() {
            let n: u32 = slots.iter().map(|&l| u32::from(l != UNMAPPED)).sum();
            let sb = self.block_stripe(blk as u32);
            self.valid[sb as usize] += n;
        }
    }

    /// Rebuilds the free pools and victim trees from the stripe states,
    /// erase counts and valid counts.
    fn rebuild_sets(&mut self) {
        let per_die = self.geo.blocks_per_plane;
        for die in 0..self.geo.dies() {
            let stripes = die * per_die..(die + 1) * per_die;
            let free: Vec<(u32, u32)> = stripes
                .clone()
                .filter(|&sb| self.state[sb as usize] == BlockState::Free)
                .map(|sb| self.free_key(sb))
                .collect();
            self.free[die as usize].replace(free);
            let full = stripes.map(|sb| match self.state[sb as usize] {
                BlockState::Full => Some(self.valid[sb as usize]),
                _ => None,
            });
            self.full[die as usize].rebuild(full);
        }
    }

    /// Appends what a saved device state needs of the block manager: per
    /// block the program position and erase count, per stripe its state and
    /// clocks, the write points and the clock (the slot records, valid
    /// counts and ordered sets follow from them and the L2P table).
    pub(super) fn save_state(&self, w: &mut StateWriter) {
        let (next, erases) = (0..self.geo.blocks())
            .map(|b| (self.nand.programmed_pages(b), self.nand.erase_count(b)))
            .unzip::<u32, u32, Vec<u32>, Vec<u32>>();
        w.u32s(&next);
        w.u32s(&erases);
        let states: Vec<u32> = self.state.iter().map(|&s| state_code(s)).collect();
        w.u32s(&states);
        w.u64s(&self.filled_at);
        w.u64s(&self.modified_at);
        // Slots written since each stripe's last erase: with the valid
        // counts rebuilt from the L2P table they tell invalid data (which
        // SANITIZE and ERASE must find) from padding.
        w.u32s(&self.written);
        let points: Vec<u32> = self
            .points
            .iter()
            .flat_map(|p| p.iter().flat_map(|wp| [wp.stripe, wp.page]))
            .collect();
        w.u32s(&points);
        w.u64(self.clock);
    }

    /// Restores a state written by [`BlockManager::save_state`] into this
    /// freshly built (erased) manager, rebuilding the slot records from the
    /// L2P table `l2p` (`expected` gives the version stored with each valid
    /// slot), the valid counts and the ordered free and victim sets.
    pub(super) fn load_state(
        &mut self,
        r: &mut StateReader<'_>,
        l2p: &[u32],
        expected: &[u32],
    ) -> Result<(), StateError> {
        let g = self.geo;
        {
            let (next, erases) = self.nand.state_mut();
            r.u32s_into("the block program positions", next)?;
            if let Some(b) = next.iter().position(|&p| p > g.pages_per_block) {
                return Err(StateError::corrupt(format!(
                    "block {b} has {} pages programmed, more than {}",
                    next[b], g.pages_per_block
                )));
            }
            r.u32s_into("the erase counts", erases)?;
        }
        let mut codes = vec![0u32; self.state.len()];
        r.u32s_into("the stripe states", &mut codes)?;
        for (sb, &c) in codes.iter().enumerate() {
            self.state[sb] = match c {
                0 => BlockState::Free,
                1 => BlockState::Open,
                2 => BlockState::Full,
                _ => {
                    return Err(StateError::corrupt(format!(
                        "stripe {sb} has state code {c} (a saved state has free, open or full stripes only)"
                    )))
                }
            };
        }
        r.u64s_into("the stripe fill clocks", &mut self.filled_at)?;
        r.u64s_into("the stripe modification clocks", &mut self.modified_at)?;
        let mut written = vec![0u32; self.written.len()];
        r.u32s_into("the stripe written-slot counts", &mut written)?;
        let mut points = vec![0u32; self.points.len() * STREAMS * 2];
        r.u32s_into("the write points", &mut points)?;
        let stripes = g.dies() * g.blocks_per_plane;
        for (d, p) in self.points.iter_mut().enumerate() {
            for (s, wp) in p.iter_mut().enumerate() {
                let k = (d * STREAMS + s) * 2;
                let (stripe, page) = (points[k], points[k + 1]);
                let none = stripe == UNMAPPED && page == g.pages_per_block;
                if !none && (stripe >= stripes || page > g.pages_per_block) {
                    return Err(StateError::corrupt(format!(
                        "write point {s} of die {d} is at stripe {stripe} page {page}, outside the array"
                    )));
                }
                *wp = WritePoint { stripe, page };
            }
        }
        self.check_program_positions()?;
        self.clock = r.u64("the FTL clock")?;
        self.map_slots(l2p, expected)?;
        self.count_valid();
        let stripe_slots = g.pages_per_block * g.stripe_slots();
        for (sb, &w) in written.iter().enumerate() {
            if w < self.valid[sb] || w > stripe_slots {
                return Err(StateError::corrupt(format!(
                    "stripe {sb} has {w} slots written but {} valid (at most {stripe_slots})",
                    self.valid[sb]
                )));
            }
        }
        self.written = written;
        self.rebuild_sets();
        Ok(())
    }
}

impl BlockManager {
    /// Checks a loaded state's write points and free stripes against the
    /// blocks' program positions: the next program goes to a write
    /// point's page on every plane block of its (open) stripe, and a free
    /// stripe is allocated as erased, so a state where these disagree
    /// would have the NAND model refuse a program later (a panic).
    fn check_program_positions(&self) -> Result<(), StateError> {
        let g = self.geo;
        let mut open: Vec<u32> = Vec::new();
        for (d, p) in self.points.iter().enumerate() {
            for (s, wp) in p.iter().enumerate() {
                if wp.page == g.pages_per_block {
                    continue;
                }
                let bad = |what: String| {
                    StateError::corrupt(format!(
                        "write point {s} of die {d} (stripe {} page {}) {what}",
                        wp.stripe, wp.page
                    ))
                };
                if self.state[wp.stripe as usize] != BlockState::Open {
                    return Err(bad("is on a stripe that is not open".into()));
                }
                if open.contains(&wp.stripe) {
                    return Err(bad("shares its stripe with another write point".into()));
                }
                open.push(wp.stripe);
                for pl in 0..g.planes {
                    let blk = self.stripe_block(wp.stripe, pl);
                    let n = self.nand.programmed_pages(blk);
                    if n != wp.page {
                        return Err(bad(format!(
                            "is on block {blk}, which has {n} pages programmed"
                        )));
                    }
                }
            }
        }
        for (sb, st) in self.state.iter().enumerate() {
            if *st != BlockState::Free {
                continue;
            }
            for pl in 0..g.planes {
                let blk = self.stripe_block(sb as u32, pl);
                let n = self.nand.programmed_pages(blk);
                if n != 0 {
                    return Err(StateError::corrupt(format!(
                        "stripe {sb} is free but its block {blk} has {n} pages programmed"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The refusal of a saved L2P table whose `lpn` maps to `slot`, outside
/// the array or already mapped (out of line: the loop that finds it keeps
/// its counters in registers).
#[cold]
#[inline(never)]
fn bad_slot(lpn: usize, slot: u32) -> StateError {
    StateError::corrupt(format!(
        "LPN {lpn} maps to slot {slot}, outside the array or already mapped"
    ))
}

/// A stripe state as stored in a saved device state.
fn state_code(s: BlockState) -> u32 {
    match s {
        BlockState::Free => 0,
        BlockState::Open => 1,
        BlockState::Full => 2,
        BlockState::Collecting => 3,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::device::config::NandConfig;

    pub(crate) fn geo(blocks_per_plane: u32, pages_per_block: u32) -> Geometry {
        Geometry::new(&NandConfig {
            channels: 1,
            dies_per_channel: 2,
            planes_per_die: 2,
            blocks_per_plane,
            pages_per_block,
            page_kib: 8,
            t_r_us: 75.0,
            t_r_upper_us: None,
            t_prog_lower_us: 850.0,
            t_prog_upper_us: 2300.0,
            t_bers_us: 3500.0,
            channel_mt_per_s: 200.0,
        })
    }

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// The sorted set agrees with a `BTreeSet` under random inserts,
    /// removals and pops, and keeps its capacity when cloned.
    #[test]
    fn sorted_set_matches_a_btree_set() {
        use std::collections::BTreeSet;
        let mut s = SortedSet::with_capacity(64);
        let mut m = BTreeSet::new();
        let mut x: u64 = 99;
        for _ in 0..20_000 {
            let r = xorshift(&mut x);
            let k = ((r % 8) as u32, ((r >> 8) % 64) as u32);
            match (r >> 20) % 4 {
                0 | 1 => {
                    if !m.iter().any(|e: &(u32, u32)| e.1 == k.1) {
                        s.insert(k);
                        m.insert(k);
                    }
                }
                2 => assert_eq!(s.remove(&k), m.remove(&k)),
                _ if (r >> 30) % 2 == 0 => assert_eq!(s.pop_first(), m.pop_first()),
                _ => assert_eq!(s.pop_last(), m.pop_last()),
            }
            assert!(s.iter().eq(m.iter().copied()));
            assert_eq!(s.contains(&k), m.contains(&k));
            assert!(s.clone().keys.capacity() >= 64);
        }
    }

    /// The victim tree's root is always the first key of an ordered set of
    /// `(valid, stripe)` under random inserts, removals and decrements.
    #[test]
    fn victim_tree_root_is_the_ordered_minimum() {
        use std::collections::BTreeSet;
        for n in [1u32, 5, 64, 100] {
            let base = 3 * n;
            let mut t = VictimTree::new(base, n);
            let mut m = BTreeSet::new();
            let mut valid = vec![None; n as usize];
            let mut x: u64 = 7 + n as u64;
            for _ in 0..5_000 {
                let r = xorshift(&mut x);
                let i = (r % n as u64) as u32;
                let sb = base + i;
                match (valid[i as usize], (r >> 16) % 4) {
                    (None, _) => {
                        let v = ((r >> 24) % 6) as u32;
                        t.insert(v, sb);
                        m.insert((v, sb));
                        valid[i as usize] = Some(v);
                    }
                    (Some(v), 0) => {
                        t.remove(sb);
                        m.remove(&(v, sb));
                        valid[i as usize] = None;
                    }
                    (Some(v), _) if v > 0 => {
                        t.decrement(sb);
                        m.remove(&(v, sb));
                        m.insert((v - 1, sb));
                        valid[i as usize] = Some(v - 1);
                    }
                    _ => {}
                }
                assert_eq!(t.first(), m.first().copied());
                assert_eq!(t.iter().count(), m.len());
                assert!(t
                    .iter()
                    .all(|(v, sb)| m.contains(&(v, sb)) && t.holds(v, sb)));
            }
        }
    }

    #[test]
    fn a_full_stripe_becomes_a_candidate_and_returns_to_the_pool_erased() {
        let mut b = BlockManager::new(geo(4, 2), true);
        let (mut st, mut ops) = (FtlStats::default(), Vec::new());
        let a = b.program(1, Stream::Host, &[(7, 1), (8, 2)], &mut st, &mut ops);
        assert_eq!(b.stripe_die(a.stripe), 1);
        assert_eq!(b.owner(b.slot_of(a, 1)), Some(8));
        assert_eq!(st.padding_slots, 2);
        assert_eq!(b.free_stripes(1), 3);
        assert_eq!(b.full_stripes(1).count(), 0);
        b.program(1, Stream::Host, &[(9, 3)], &mut st, &mut ops);
        assert_eq!(b.full_stripes(1).collect::<Vec<_>>(), [(3, a.stripe)]);
        for i in 0..2 {
            b.invalidate(b.slot_of(a, i));
        }
        b.invalidate(b.slot_of(StripePage { page: 1, ..a }, 0));
        assert_eq!(b.full_stripes(1).next(), Some((0, a.stripe)));
        b.begin_collect(a.stripe);
        b.erase(a.stripe, &mut st, &mut ops);
        assert_eq!(b.erase_count(a.stripe), 1);
        assert!(b.in_free_pool(a.stripe));
        // Dynamic wear leveling: the erased stripe is now the most worn.
        let next = b.program(1, Stream::Host, &[(1, 4)], &mut st, &mut ops);
        assert_ne!(next.stripe, a.stripe);
        assert_eq!(st.nand_erases, 1);
    }
}
