//! Page-level FTL: every logical 4 KiB page (LPN) maps to any physical 4 KiB
//! slot (PPN).
//!
//! * Host write points are striped round-robin over dies; each die has its
//!   own GC write point, so moved (cold) data does not mix with host data.
//!   A write point is a stripe: one open block per plane at the same page
//!   offset, programmed with one multi-plane program per stripe page.
//! * Blocks are handled in stripes (block `b` of every plane of a die), the
//!   unit of allocation, GC and (multi-plane) erase.
//! * Greedy GC in the foreground: when a die's free blocks fall below the
//!   start threshold the full stripe with the fewest valid slots is
//!   collected — valid slots read and reprogrammed at the die's GC write
//!   point, then the stripe erased — until the stop threshold. Victims come
//!   from an ordered set `(valid, stripe)`, not a scan.
//! * Dynamic wear leveling: a write point takes the least-worn free stripe of
//!   the die (ordered set `(erase_count, stripe)`).
//! * Both ordered sets are `StripeSet`s, preallocated per die, so
//!   invalidating a slot or collecting a stripe never allocates.
//! * Map-table persistence (translation pages) is charged by the controller's
//!   mapping cache, not here; GC updates the map through the P2L entries.

use super::stripe_set::StripeSet;
use super::{BlockState, FtlStats, UNMAPPED};
use crate::device::nand::{Geometry, NandArray, NandOp};

/// Page-level FTL state. Blocks are managed in *stripes* ("superblocks"):
/// block `b` of every plane of a die, allocated, programmed (multi-plane,
/// same page offset), collected and erased (multi-plane erase) together, so
/// the planes of a die can never run out of free blocks unevenly.
#[derive(Clone, Debug)]
pub struct PageFtl {
    geo: Geometry,
    nand: NandArray,
    user_lpns: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    slot_version: Vec<u32>,
    /// Per stripe (`die * blocks_per_plane + b`): valid slots.
    valid: Vec<u32>,
    state: Vec<BlockState>,
    /// Per die: free stripes keyed by wear `(erase_count, stripe)`.
    free: Vec<StripeSet>,
    /// Per die: full stripes keyed by `(valid, stripe)`.
    victims: Vec<StripeSet>,
    host_sb: Vec<u32>,
    host_page: Vec<u32>,
    gc_sb: Vec<u32>,
    gc_page: Vec<u32>,
    next_die: u32,
    gc_start: u32,
    gc_stop: u32,
    dynamic_wl: bool,
    gc_stage: Vec<(u32, u32)>,
    stats: FtlStats,
}

impl PageFtl {
    /// An empty (fully erased) FTL. User capacity is the raw slot count ×
    /// (1 − `over_provisioning`), rounded down to whole LPNs. GC thresholds
    /// are in blocks per die.
    pub fn new(
        geo: Geometry,
        over_provisioning: f64,
        gc_start: u32,
        gc_stop: u32,
        dynamic_wl: bool,
    ) -> PageFtl {
        let slots = geo.slots();
        let user_lpns = (slots as f64 * (1.0 - over_provisioning)).floor() as u32;
        let dies = geo.dies() as usize;
        let sbs = geo.dies() * geo.blocks_per_plane;
        let bpp = geo.blocks_per_plane;
        let per_die = |d: usize| StripeSet::new(d as u32 * bpp, bpp);
        let mut free: Vec<StripeSet> = (0..dies).map(per_die).collect();
        for sb in 0..sbs {
            free[(sb / geo.blocks_per_plane) as usize].insert((0, sb));
        }
        let ppb = geo.pages_per_block;
        PageFtl {
            geo,
            nand: NandArray::new(geo),
            user_lpns,
            l2p: vec![UNMAPPED; user_lpns as usize],
            p2l: vec![UNMAPPED; slots as usize],
            slot_version: vec![0; slots as usize],
            valid: vec![0; sbs as usize],
            state: vec![BlockState::Free; sbs as usize],
            free,
            victims: (0..dies).map(per_die).collect(),
            host_sb: vec![UNMAPPED; dies],
            host_page: vec![ppb; dies],
            gc_sb: vec![UNMAPPED; dies],
            gc_page: vec![ppb; dies],
            next_die: 0,
            gc_start,
            gc_stop,
            dynamic_wl,
            gc_stage: Vec::with_capacity(geo.stripe_slots() as usize),
            stats: FtlStats::default(),
        }
    }

    /// The array geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    /// Logical 4 KiB pages visible to the host.
    pub fn user_lpns(&self) -> u32 {
        self.user_lpns
    }
    /// Physical slot holding `lpn`, if mapped.
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        match self.l2p[lpn as usize] {
            UNMAPPED => None,
            s => Some(s),
        }
    }
    /// Oracle version stored with the data in `slot`.
    pub fn slot_version(&self, slot: u32) -> u32 {
        self.slot_version[slot as usize]
    }
    /// Counters.
    pub fn stats(&self) -> &FtlStats {
        &self.stats
    }
    /// Clears the counters (state such as erase counts is kept).
    pub fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
    }
    /// Puts back counters saved earlier (untimed work that must not count).
    pub fn restore_stats(&mut self, saved: FtlStats) {
        self.stats = saved;
    }
    /// Erase count of every block.
    pub fn erase_counts(&self) -> &[u32] {
        self.nand.erase_counts()
    }
    /// Free blocks on `die` (free stripes × planes).
    pub fn free_blocks(&self, die: u32) -> u32 {
        self.free[die as usize].len() as u32 * self.geo.planes
    }
    fn free_stripes(&self, die: u32) -> u32 {
        self.free[die as usize].len() as u32
    }
    /// Die of a stripe.
    fn sb_die(&self, sb: u32) -> u32 {
        sb / self.geo.blocks_per_plane
    }
    /// Block of `plane` in stripe `sb`.
    fn sb_block(&self, sb: u32, plane: u32) -> u32 {
        let g = &self.geo;
        g.block_id(sb / g.blocks_per_plane, plane, sb % g.blocks_per_plane)
    }
    /// Stripe holding a block.
    fn block_sb(&self, blk: u32) -> u32 {
        let g = &self.geo;
        g.block_die(blk) * g.blocks_per_plane + blk % g.blocks_per_plane
    }

    /// Programs one stripe page of host data (`entries` = `(lpn, version)`,
    /// at most a stripe; the rest is padding) on the next die round-robin,
    /// running foreground GC on that die first if it is short of free blocks.
    /// NAND operations are appended to `ops`. Returns the die used.
    pub fn write_stripe(&mut self, entries: &[(u32, u32)], ops: &mut Vec<NandOp>) -> u32 {
        debug_assert!(entries.len() <= self.geo.stripe_slots() as usize);
        let dies = self.geo.dies();
        for k in 0..dies {
            let die = (self.next_die + k) % dies;
            self.maybe_gc(die, ops);
            // The host may take a new stripe only while one stays for GC.
            if self.host_page[die as usize] < self.geo.pages_per_block
                || self.free_stripes(die) >= 2
            {
                self.next_die = (die + 1) % dies;
                self.program_stripe(die, false, entries, ops);
                return die;
            }
        }
        panic!(
            "mmcsim device: no die has a free block for host data although GC ran; \
             over-provisioning is too small for this workload's valid data"
        );
    }

    /// Unmaps `lpn` (TRIM/discard): its slot becomes invalid.
    pub fn trim(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != UNMAPPED {
            self.invalidate(old);
            self.l2p[lpn as usize] = UNMAPPED;
        }
    }

    fn free_key(&self, sb: u32) -> (u32, u32) {
        if self.dynamic_wl {
            (self.nand.erase_count(self.sb_block(sb, 0)), sb)
        } else {
            (0, sb)
        }
    }

    fn alloc_stripe(&mut self, die: u32) -> u32 {
        let (_, sb) = self.free[die as usize].pop_first().unwrap_or_else(|| {
            panic!("mmcsim device: die {die} has no free block (GC thresholds too low for the over-provisioning)")
        });
        debug_assert_eq!(self.state[sb as usize], BlockState::Free);
        self.state[sb as usize] = BlockState::Open;
        sb
    }

    fn invalidate(&mut self, slot: u32) {
        let sb = self.block_sb(self.geo.slot_block(slot));
        self.p2l[slot as usize] = UNMAPPED;
        let b = sb as usize;
        if self.state[b] == BlockState::Full {
            let set = &mut self.victims[(sb / self.geo.blocks_per_plane) as usize];
            set.remove(&(self.valid[b], sb));
            self.valid[b] -= 1;
            set.insert((self.valid[b], sb));
        } else {
            self.valid[b] -= 1;
        }
    }

    fn program_stripe(
        &mut self,
        die: u32,
        gc: bool,
        entries: &[(u32, u32)],
        ops: &mut Vec<NandOp>,
    ) {
        let g = self.geo;
        let ppb = g.pages_per_block;
        let spp = g.slots_per_page;
        let d = die as usize;
        let mut page = if gc {
            self.gc_page[d]
        } else {
            self.host_page[d]
        };
        if page == ppb {
            let sb = self.alloc_stripe(die);
            if gc {
                self.gc_sb[d] = sb;
            } else {
                self.host_sb[d] = sb;
            }
            page = 0;
        }
        let sb = if gc { self.gc_sb[d] } else { self.host_sb[d] };
        for i in 0..g.stripe_slots() {
            let blk = self.sb_block(sb, i / spp);
            let slot = g.slot(blk, page, i % spp);
            if let Some(&(lpn, ver)) = entries.get(i as usize) {
                let old = self.l2p[lpn as usize];
                if old != UNMAPPED {
                    self.invalidate(old);
                }
                self.l2p[lpn as usize] = slot;
                self.p2l[slot as usize] = lpn;
                self.slot_version[slot as usize] = ver;
                self.valid[sb as usize] += 1;
            } else {
                self.stats.padding_slots += 1;
            }
        }
        for pl in 0..g.planes {
            let blk = self.sb_block(sb, pl);
            if let Err(e) = self.nand.program(blk, page) {
                panic!("mmcsim device: simulator bug: {}", e.0);
            }
        }
        ops.push(NandOp::Program {
            die,
            bytes: g.stripe_slots() * 4096,
            upper: Geometry::is_upper_page(page),
        });
        self.stats.programmed_slots += g.stripe_slots() as u64;
        self.stats.nand_programs += 1;
        let next = page + 1;
        if next == ppb {
            self.state[sb as usize] = BlockState::Full;
            self.victims[d].insert((self.valid[sb as usize], sb));
        }
        if gc {
            self.gc_page[d] = next;
        } else {
            self.host_page[d] = next;
        }
    }

    /// Foreground greedy GC on `die` if it is short of free blocks.
    fn maybe_gc(&mut self, die: u32, ops: &mut Vec<NandOp>) {
        if self.free_blocks(die) >= self.gc_start && self.free_stripes(die) >= 2 {
            return;
        }
        // A victim is worth collecting only if it frees at least one stripe
        // page; with that, a victim needs at most one new GC stripe, so GC
        // starting with one free stripe never runs dry.
        let useful = self.geo.stripe_slots() * (self.geo.pages_per_block - 1);
        while self.free_blocks(die) < self.gc_stop || self.free_stripes(die) < 2 {
            let Some(&(v, victim)) = self.victims[die as usize].first() else {
                break;
            };
            if v > useful || self.free_stripes(die) == 0 {
                break;
            }
            self.collect(die, victim, ops);
        }
    }

    /// Moves the valid slots of stripe `victim` to the die's GC write point
    /// and erases it (one multi-plane read per stripe page holding valid
    /// data, one multi-plane erase).
    fn collect(&mut self, die: u32, victim: u32, ops: &mut Vec<NandOp>) {
        let g = self.geo;
        let v = victim as usize;
        self.victims[die as usize].remove(&(self.valid[v], victim));
        self.state[v] = BlockState::Collecting;
        self.stats.gc_runs += 1;
        let stripe = g.stripe_slots() as usize;
        let mut stage = std::mem::take(&mut self.gc_stage);
        stage.clear();
        for page in 0..g.pages_per_block {
            // One multi-plane sense of the planes whose page holds valid data.
            let mut planes_with_data = 0;
            for pl in 0..g.planes {
                let base = g.slot(self.sb_block(victim, pl), page, 0) as usize;
                if self.p2l[base..base + g.slots_per_page as usize]
                    .iter()
                    .any(|&l| l != UNMAPPED)
                {
                    planes_with_data += 1;
                }
            }
            if planes_with_data == 0 {
                continue;
            }
            ops.push(NandOp::Read {
                die,
                bytes: planes_with_data * g.page_bytes(),
                upper: Geometry::is_upper_page(page),
            });
            self.stats.nand_reads += 1;
            for pl in 0..g.planes {
                let base = g.slot(self.sb_block(victim, pl), page, 0);
                for s in 0..g.slots_per_page {
                    let slot = (base + s) as usize;
                    let lpn = self.p2l[slot];
                    if lpn == UNMAPPED {
                        continue;
                    }
                    stage.push((lpn, self.slot_version[slot]));
                    if stage.len() == stripe {
                        self.stats.gc_slots_moved += stage.len() as u64;
                        self.program_stripe(die, true, &stage, ops);
                        stage.clear();
                    }
                }
            }
        }
        if !stage.is_empty() {
            self.stats.gc_slots_moved += stage.len() as u64;
            self.program_stripe(die, true, &stage, ops);
            stage.clear();
        }
        self.gc_stage = stage;
        debug_assert_eq!(self.valid[v], 0, "victim still holds valid data");
        for pl in 0..g.planes {
            let blk = self.sb_block(victim, pl);
            self.nand.erase(blk);
            ops.push(NandOp::Erase {
                die,
                blk,
                multi_plane: pl > 0,
            });
        }
        self.stats.nand_erases += 1;
        self.state[v] = BlockState::Free;
        let key = self.free_key(victim);
        self.free[die as usize].insert(key);
    }

    /// Checks the FTL against the oracle: `expected[lpn]` is the newest
    /// version the host wrote (0 = never written or trimmed) and `pending`
    /// the `(lpn, version)` entries still in the write buffer, oldest first.
    /// Verifies that every LPN reads its newest version, that every valid
    /// slot is mapped exactly once, that valid + invalid + free slots add up
    /// per stripe and in total, that stripe states, free sets and victim sets
    /// agree, and that no slot above a block's program point holds data.
    pub fn check(&self, pending: &[(u32, u32)], expected: &[u32]) -> Result<(), String> {
        let g = self.geo;
        let mut newest_pending = vec![0u32; self.user_lpns as usize];
        for &(lpn, ver) in pending {
            newest_pending[lpn as usize] = ver;
        }
        for lpn in 0..self.user_lpns {
            let want = expected[lpn as usize];
            let got = if newest_pending[lpn as usize] != 0 {
                newest_pending[lpn as usize]
            } else {
                match self.lookup(lpn) {
                    Some(slot) => {
                        if self.p2l[slot as usize] != lpn {
                            return Err(format!(
                                "lpn {lpn} maps to slot {slot} whose p2l is {}",
                                self.p2l[slot as usize]
                            ));
                        }
                        self.slot_version[slot as usize]
                    }
                    None => 0,
                }
            };
            if got != want {
                return Err(format!(
                    "lpn {lpn}: read version {got}, newest written {want}"
                ));
            }
        }
        let spp = g.slots_per_page;
        let (mut tot_valid, mut tot_invalid, mut tot_free) = (0u64, 0u64, 0u64);
        for sb in 0..self.valid.len() as u32 {
            let die = self.sb_die(sb);
            let mut valid = 0;
            let pages = self.nand.programmed_pages(self.sb_block(sb, 0));
            for pl in 0..g.planes {
                let blk = self.sb_block(sb, pl);
                if self.nand.programmed_pages(blk) != pages {
                    return Err(format!("stripe {sb}: planes programmed to different pages"));
                }
                let programmed = pages * spp;
                for i in 0..g.slots_per_block() {
                    let slot = blk * g.slots_per_block() + i;
                    let lpn = self.p2l[slot as usize];
                    if lpn == UNMAPPED {
                        continue;
                    }
                    if i >= programmed {
                        return Err(format!(
                            "slot {slot} above block {blk}'s program point holds lpn {lpn}"
                        ));
                    }
                    if lpn >= self.user_lpns || self.l2p[lpn as usize] != slot {
                        return Err(format!(
                            "slot {slot} holds lpn {lpn} which is not mapped to it"
                        ));
                    }
                    valid += 1;
                }
                tot_invalid += programmed as u64;
                tot_free += (g.slots_per_block() - programmed) as u64;
            }
            tot_invalid -= valid as u64;
            if valid != self.valid[sb as usize] {
                return Err(format!(
                    "stripe {sb}: valid count {} but {valid} slots valid",
                    self.valid[sb as usize]
                ));
            }
            tot_valid += valid as u64;
            match self.state[sb as usize] {
                BlockState::Free => {
                    if pages != 0 || !self.free[die as usize].contains(&self.free_key(sb)) {
                        return Err(format!(
                            "free stripe {sb} is programmed or not in the free set"
                        ));
                    }
                }
                BlockState::Full => {
                    if pages != g.pages_per_block
                        || !self.victims[die as usize].contains(&(valid, sb))
                    {
                        return Err(format!(
                            "full stripe {sb} is not full or not in the victim set"
                        ));
                    }
                }
                BlockState::Open => {
                    if self.host_sb[die as usize] != sb && self.gc_sb[die as usize] != sb {
                        return Err(format!("open stripe {sb} is no write point"));
                    }
                }
                BlockState::Collecting => {
                    return Err(format!("stripe {sb} left in collecting state"))
                }
            }
        }
        if tot_valid + tot_invalid + tot_free != g.slots() as u64 {
            return Err("valid + invalid + free slots do not add up to the array".into());
        }
        let mapped = self.l2p.iter().filter(|&&s| s != UNMAPPED).count() as u64;
        if mapped != tot_valid {
            return Err(format!("{mapped} mapped lpns but {tot_valid} valid slots"));
        }
        let free_sets: usize = self.free.iter().map(|s| s.len()).sum();
        let free_sbs = self
            .state
            .iter()
            .filter(|&&s| s == BlockState::Free)
            .count();
        if free_sets != free_sbs {
            return Err(format!(
                "{free_sets} stripes in free sets, {free_sbs} free stripes"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::config::NandConfig;

    fn tiny() -> PageFtl {
        let geo = Geometry::new(&NandConfig {
            channels: 1,
            dies_per_channel: 2,
            planes_per_die: 2,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_kib: 8,
            t_r_us: 75.0,
            t_r_upper_us: None,
            t_prog_lower_us: 850.0,
            t_prog_upper_us: 2300.0,
            t_bers_us: 3500.0,
            channel_mt_per_s: 200.0,
        });
        PageFtl::new(geo, 0.3, 4, 6, true)
    }

    #[test]
    fn overwrites_trigger_gc_and_keep_integrity() {
        let mut f = tiny();
        let n = f.user_lpns();
        let mut expected = vec![0u32; n as usize];
        let mut ops = Vec::new();
        let mut ver = 0;
        let mut x: u64 = 12345;
        for _ in 0..20 {
            for base in (0..n - 3).step_by(4) {
                let mut e = [(0, 0); 4];
                for (k, slot) in e.iter_mut().enumerate() {
                    // xorshift: random LPNs so GC finds partly valid victims
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let lpn = if k == 0 { base } else { (x % n as u64) as u32 };
                    ver += 1;
                    *slot = (lpn, ver);
                    expected[lpn as usize] = ver;
                }
                f.write_stripe(&e, &mut ops);
                ops.clear();
            }
            f.check(&[], &expected).unwrap();
        }
        assert!(f.stats().gc_runs > 0);
        assert!(f.stats().gc_slots_moved > 0);
        let ec = f.erase_counts();
        let (mn, mx) = (ec.iter().min().unwrap(), ec.iter().max().unwrap());
        assert!(
            mx - mn <= 6,
            "dynamic WL keeps erase counts close: {mn}..{mx}"
        );
    }

    #[test]
    fn trim_unmaps() {
        let mut f = tiny();
        let mut ops = Vec::new();
        f.write_stripe(&[(7, 1), (8, 2)], &mut ops);
        assert!(f.lookup(7).is_some());
        f.trim(7);
        assert!(f.lookup(7).is_none());
        let mut expected = vec![0u32; f.user_lpns() as usize];
        expected[8] = 2;
        f.check(&[], &expected).unwrap();
    }
}
