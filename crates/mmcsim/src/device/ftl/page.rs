//! Page-level FTL: every logical 4 KiB page (LPN) maps to any physical 4 KiB
//! slot (PPN).
//!
//! * Host write points are striped round-robin over dies; each die has its
//!   own GC write point, so moved (cold) data does not mix with host data.
//!   A write point is a stripe: one open block per plane at the same page
//!   offset, programmed with one multi-plane program per stripe page.
//! * Greedy GC in the foreground: when a die's free blocks fall below the
//!   start threshold (or a plane has fewer than 2 free blocks) the full block
//!   with the fewest valid slots on the plane shortest of free blocks is
//!   collected — valid slots read and reprogrammed at the die's GC write
//!   point, then the block erased — until the stop threshold. Victims come
//!   from an ordered set `(valid, block)`, not a scan.
//! * Dynamic wear leveling: a write point takes the least-worn free block of
//!   each plane (ordered set `(erase_count, block)`).
//! * Map-table persistence (translation pages) is charged by the controller's
//!   mapping cache, not here; GC updates the map through the P2L entries.

use super::{BlockState, FtlStats, UNMAPPED};
use crate::device::nand::{Geometry, NandArray, NandOp};
use std::collections::BTreeSet;

/// Page-level FTL state.
#[derive(Clone, Debug)]
pub struct PageFtl {
    geo: Geometry,
    nand: NandArray,
    user_lpns: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    slot_version: Vec<u32>,
    valid: Vec<u32>,
    state: Vec<BlockState>,
    /// Per (die, plane): free blocks keyed by wear.
    free: Vec<BTreeSet<(u32, u32)>>,
    /// Per (die, plane): full blocks keyed by valid slots.
    victims: Vec<BTreeSet<(u32, u32)>>,
    host_wp: Vec<u32>,
    host_page: Vec<u32>,
    gc_wp: Vec<u32>,
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
    /// (1 − `over_provisioning`), rounded down to whole LPNs.
    pub fn new(
        geo: Geometry,
        over_provisioning: f64,
        gc_start: u32,
        gc_stop: u32,
        dynamic_wl: bool,
    ) -> PageFtl {
        let slots = geo.slots();
        let user_lpns = (slots as f64 * (1.0 - over_provisioning)).floor() as u32;
        let planes_total = (geo.dies() * geo.planes) as usize;
        let mut free = vec![BTreeSet::new(); planes_total];
        for blk in 0..geo.blocks() {
            free[(blk / geo.blocks_per_plane) as usize].insert((0, blk));
        }
        let ppb = geo.pages_per_block;
        PageFtl {
            geo,
            nand: NandArray::new(geo),
            user_lpns,
            l2p: vec![UNMAPPED; user_lpns as usize],
            p2l: vec![UNMAPPED; slots as usize],
            slot_version: vec![0; slots as usize],
            valid: vec![0; geo.blocks() as usize],
            state: vec![BlockState::Free; geo.blocks() as usize],
            free,
            victims: vec![BTreeSet::new(); planes_total],
            host_wp: vec![UNMAPPED; planes_total],
            host_page: vec![ppb; geo.dies() as usize],
            gc_wp: vec![UNMAPPED; planes_total],
            gc_page: vec![ppb; geo.dies() as usize],
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
    /// Free blocks on `die`.
    pub fn free_blocks(&self, die: u32) -> u32 {
        let p = self.geo.planes;
        (0..p)
            .map(|pl| self.free[(die * p + pl) as usize].len() as u32)
            .sum()
    }
    fn min_plane_free(&self, die: u32) -> u32 {
        let p = self.geo.planes;
        (0..p)
            .map(|pl| self.free[(die * p + pl) as usize].len() as u32)
            .min()
            .unwrap_or(0)
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
            if self.host_page[die as usize] < self.geo.pages_per_block
                || self.min_plane_free(die) >= 2
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

    fn free_key(&self, blk: u32) -> (u32, u32) {
        if self.dynamic_wl {
            (self.nand.erase_count(blk), blk)
        } else {
            (0, blk)
        }
    }

    fn alloc_block(&mut self, die: u32, plane: u32) -> u32 {
        let (_, blk) = self.free[(die * self.geo.planes + plane) as usize]
            .pop_first()
            .unwrap_or_else(|| {
                panic!("mmcsim device: die {die} plane {plane} has no free block (GC thresholds too low for the over-provisioning)")
            });
        debug_assert_eq!(self.state[blk as usize], BlockState::Free);
        self.state[blk as usize] = BlockState::Open;
        blk
    }

    fn invalidate(&mut self, slot: u32) {
        let blk = self.geo.slot_block(slot);
        self.p2l[slot as usize] = UNMAPPED;
        let b = blk as usize;
        if self.state[b] == BlockState::Full {
            let set = &mut self.victims[(blk / self.geo.blocks_per_plane) as usize];
            set.remove(&(self.valid[b], blk));
            self.valid[b] -= 1;
            set.insert((self.valid[b], blk));
        } else {
            self.valid[b] -= 1;
        }
    }

    fn program_stripe(&mut self, die: u32, gc: bool, entries: &[(u32, u32)], ops: &mut Vec<NandOp>) {
        let g = self.geo;
        let p = g.planes;
        let ppb = g.pages_per_block;
        let spp = g.slots_per_page;
        let d = die as usize;
        let page = if gc { self.gc_page[d] } else { self.host_page[d] };
        let page = if page == ppb {
            for pl in 0..p {
                let blk = self.alloc_block(die, pl);
                let wp = if gc { &mut self.gc_wp } else { &mut self.host_wp };
                wp[(die * p + pl) as usize] = blk;
            }
            0
        } else {
            page
        };
        let wp_base = (die * p) as usize;
        for i in 0..g.stripe_slots() {
            let pl = i / spp;
            let blk = if gc { self.gc_wp[wp_base + pl as usize] } else { self.host_wp[wp_base + pl as usize] };
            let slot = g.slot(blk, page, i % spp);
            if let Some(&(lpn, ver)) = entries.get(i as usize) {
                let old = self.l2p[lpn as usize];
                if old != UNMAPPED {
                    self.invalidate(old);
                }
                self.l2p[lpn as usize] = slot;
                self.p2l[slot as usize] = lpn;
                self.slot_version[slot as usize] = ver;
                self.valid[blk as usize] += 1;
            } else {
                self.stats.padding_slots += 1;
            }
        }
        for pl in 0..p {
            let blk = if gc { self.gc_wp[wp_base + pl as usize] } else { self.host_wp[wp_base + pl as usize] };
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
            for pl in 0..p {
                let blk = if gc { self.gc_wp[wp_base + pl as usize] } else { self.host_wp[wp_base + pl as usize] };
                self.state[blk as usize] = BlockState::Full;
                self.victims[(blk / g.blocks_per_plane) as usize].insert((self.valid[blk as usize], blk));
            }
        }
        if gc {
            self.gc_page[d] = next;
        } else {
            self.host_page[d] = next;
        }
    }

    /// Foreground greedy GC on `die` if it is short of free blocks.
    fn maybe_gc(&mut self, die: u32, ops: &mut Vec<NandOp>) {
        if self.free_blocks(die) >= self.gc_start && self.min_plane_free(die) >= 2 {
            return;
        }
        let p = self.geo.planes;
        let spb = self.geo.slots_per_block();
        let useful = spb - self.geo.stripe_slots();
        let mut guard = self.geo.blocks_per_die() * 2;
        while (self.free_blocks(die) < self.gc_stop || self.min_plane_free(die) < 2) && guard > 0 {
            guard -= 1;
            // Planes ordered by free blocks (fewest first, ties by number):
            // take the best victim of the first plane that has a useful one.
            let mut best: Option<(u32, u32, u32)> = None; // (free, plane, blk)
            for pl in 0..p {
                let idx = (die * p + pl) as usize;
                if let Some(&(v, blk)) = self.victims[idx].first() {
                    if v <= useful {
                        let f = self.free[idx].len() as u32;
                        if best.is_none_or(|(bf, _, _)| f < bf) {
                            best = Some((f, pl, blk));
                        }
                    }
                }
            }
            let Some((_, _, victim)) = best else { break };
            self.collect(die, victim, ops);
        }
    }

    /// Moves the valid slots of `victim` to the die's GC write point and
    /// erases it.
    fn collect(&mut self, die: u32, victim: u32, ops: &mut Vec<NandOp>) {
        let g = self.geo;
        let v = victim as usize;
        self.victims[(victim / g.blocks_per_plane) as usize].remove(&(self.valid[v], victim));
        self.state[v] = BlockState::Collecting;
        self.stats.gc_runs += 1;
        let stripe = g.stripe_slots() as usize;
        let mut stage = std::mem::take(&mut self.gc_stage);
        stage.clear();
        for page in 0..g.pages_per_block {
            let base = g.slot(victim, page, 0);
            let mut sensed = false;
            for s in 0..g.slots_per_page {
                let slot = (base + s) as usize;
                let lpn = self.p2l[slot];
                if lpn == UNMAPPED {
                    continue;
                }
                if !sensed {
                    ops.push(NandOp::Read { die, bytes: g.page_bytes() });
                    self.stats.nand_reads += 1;
                    sensed = true;
                }
                stage.push((lpn, self.slot_version[slot]));
                if stage.len() == stripe {
                    self.stats.gc_slots_moved += stage.len() as u64;
                    self.program_stripe(die, true, &stage, ops);
                    stage.clear();
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
        self.nand.erase(victim);
        ops.push(NandOp::Erase { die, blk: victim });
        self.stats.nand_erases += 1;
        self.state[v] = BlockState::Free;
        let key = self.free_key(victim);
        self.free[(victim / g.blocks_per_plane) as usize].insert(key);
    }

    /// Checks the FTL against the oracle: `expected[lpn]` is the newest
    /// version the host wrote (0 = never written or trimmed) and `pending`
    /// the `(lpn, version)` entries still in the write buffer, oldest first.
    /// Verifies that every LPN reads its newest version, that every valid
    /// slot is mapped exactly once, that valid + invalid + free slots add up
    /// per block and in total, that block states, free sets and victim sets
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
                return Err(format!("lpn {lpn}: read version {got}, newest written {want}"));
            }
        }
        let spp = g.slots_per_page;
        let (mut tot_valid, mut tot_invalid, mut tot_free) = (0u64, 0u64, 0u64);
        for blk in 0..g.blocks() {
            let b = blk as usize;
            let programmed = self.nand.programmed_pages(blk) * spp;
            let mut valid = 0;
            for i in 0..g.slots_per_block() {
                let slot = blk * g.slots_per_block() + i;
                let lpn = self.p2l[slot as usize];
                if lpn == UNMAPPED {
                    continue;
                }
                if i >= programmed {
                    return Err(format!("slot {slot} above block {blk}'s program point holds lpn {lpn}"));
                }
                if lpn >= self.user_lpns || self.l2p[lpn as usize] != slot {
                    return Err(format!("slot {slot} holds lpn {lpn} which is not mapped to it"));
                }
                valid += 1;
            }
            if valid != self.valid[b] {
                return Err(format!("block {blk}: valid count {} but {valid} slots valid", self.valid[b]));
            }
            tot_valid += valid as u64;
            tot_invalid += (programmed - valid) as u64;
            tot_free += (g.slots_per_block() - programmed) as u64;
            let idx = (blk / g.blocks_per_plane) as usize;
            let pages = self.nand.programmed_pages(blk);
            match self.state[b] {
                BlockState::Free => {
                    if pages != 0 || !self.free[idx].contains(&self.free_key(blk)) {
                        return Err(format!("free block {blk} is programmed or not in the free set"));
                    }
                }
                BlockState::Full => {
                    if pages != g.pages_per_block || !self.victims[idx].contains(&(valid, blk)) {
                        return Err(format!("full block {blk} is not full or not in the victim set"));
                    }
                }
                BlockState::Open => {
                    let die = g.block_die(blk) as usize;
                    let is_wp = self.host_wp[idx % g.planes as usize + die * g.planes as usize] == blk
                        || self.gc_wp[idx % g.planes as usize + die * g.planes as usize] == blk;
                    if !is_wp {
                        return Err(format!("open block {blk} is no write point"));
                    }
                }
                BlockState::Collecting => return Err(format!("block {blk} left in collecting state")),
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
        let free_blocks = self.state.iter().filter(|&&s| s == BlockState::Free).count();
        if free_sets != free_blocks {
            return Err(format!("{free_sets} blocks in free sets, {free_blocks} free blocks"));
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
        assert!(mx - mn <= 6, "dynamic WL keeps erase counts close: {mn}..{mx}");
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
