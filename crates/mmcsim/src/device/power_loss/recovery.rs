//! The FTL's mount after a power cut: the mapping rebuilt the way its
//! class does it, and how long that takes.
//!
//! * The *persisted map* is the mapping as of the last map checkpoint that
//!   completed before the power failed — a FLUSH_CACHE that programmed the
//!   dirty map pages (`[map_cache] on_flush = "program_dirty"`) — or, with
//!   none, as it was when recording started (the preconditioned device's
//!   map is on NAND).
//! * The *scan* reads the spare (OOB) area of every stripe page programmed
//!   since that checkpoint, in program order (the sequence number each
//!   page carries), and maps each readable page's LPN to it unless the
//!   map already holds a newer readable copy. An interrupted program,
//!   a paired-page victim or an interrupted erase reads as uncorrectable
//!   and is skipped, so the scan falls back to the copy the map had.
//! * Time: each map page read (tR plus its 4 KiB transfer) and each
//!   scanned stripe page (one multi-plane tR; the spare area's transfer is
//!   neglected), plus one read per scanned block to find its first erased
//!   page, spread evenly over the dies [est: the usual mount of a
//!   page-mapping FTL, e.g. Gupta et al. ASPLOS 2009 (DFTL) §3 "recovery
//!   ... the global translation directory", and the OOB scan of log
//!   blocks in FAST (Lee et al., ACM TECS 2007)]. The map read is the
//!   whole L2P table for the page mapping, the global translation
//!   directory for DFTL, and the block map for the hybrid mapping.

use super::super::cache::ENTRIES_PER_MAP_PAGE;
use super::super::ftl::{MapChange, MappingScheme, UNMAPPED};
use super::tracker::{Logged, Tracker, PADDING};
use crate::types::Ns;

/// The rebuilt mapping and what the mount read.
pub(super) struct Rebuilt {
    /// Per LPN: its slot after recovery ([`UNMAPPED`] = none).
    pub l2p: Vec<u32>,
    /// Stripe pages the scan read.
    pub scanned_pages: u64,
    /// Map pages the mount read.
    pub map_pages: u64,
    /// Distinct blocks (stripes) the scan read.
    pub scanned_blocks: u64,
}

/// Rebuilds the mapping from `phys` (per slot, what it reads after the
/// cut), with the map checkpoints done by `te` ns.
pub(super) fn rebuild(tr: &Tracker, phys: &[(u32, u32)], te: Ns, scheme: MappingScheme) -> Rebuilt {
    let cp = tr.checkpoints.iter().rev().find(|c| c.done <= te);
    let (changes, from) = cp.map_or((0, 0), |c| (c.changes as usize, c.ops as usize));
    let mut l2p = tr.base_l2p.clone();
    for c in &tr.changes[..changes] {
        match *c {
            MapChange::Map { lpn, slot } => l2p[lpn as usize] = slot,
            MapChange::Unmap { lpn } => l2p[lpn as usize] = UNMAPPED,
        }
    }
    let g = tr.geo;
    let n = g.stripe_slots() as usize;
    let mut scanned_pages = 0u64;
    let mut blocks = std::collections::BTreeSet::new();
    for op in &tr.ops[from..] {
        let Logged::Program {
            blk,
            page,
            start,
            first,
            ..
        } = *op
        else {
            continue;
        };
        if start >= te {
            continue;
        }
        scanned_pages += 1;
        blocks.insert(blk);
        for i in 0..n {
            let slot = slot_of(tr, blk, page, i as u32);
            let c = tr.contents[first as usize + i];
            if c.0 >= PADDING || phys[slot as usize] != c {
                continue;
            }
            let cur = l2p[c.0 as usize];
            let keep = cur != UNMAPPED && {
                let held = phys[cur as usize];
                held.0 == c.0 && held.1 > c.1
            };
            if !keep {
                l2p[c.0 as usize] = slot;
            }
        }
    }
    let lpns = tr.base_l2p.len() as u64;
    let table_pages = lpns.div_ceil(ENTRIES_PER_MAP_PAGE as u64);
    let map_pages = match scheme {
        MappingScheme::Page => table_pages,
        // The global translation directory: 4 bytes per translation page.
        MappingScheme::Dftl => (table_pages * 4).div_ceil(4096),
        // The block map: 4 bytes per logical block.
        MappingScheme::Hybrid => (g.blocks() as u64 / g.planes as u64 * 4).div_ceil(4096),
    };
    Rebuilt {
        l2p,
        scanned_pages,
        map_pages,
        scanned_blocks: blocks.len() as u64,
    }
}

/// Slot `i` of the stripe page at plane-0 block `blk`, page `page` (plane
/// by plane, as the tracker records them).
pub(super) fn slot_of(tr: &Tracker, blk: u32, page: u32, i: u32) -> u32 {
    let g = tr.geo;
    let pl = i / g.slots_per_page;
    g.slot(blk + pl * g.blocks_per_plane, page, i % g.slots_per_page)
}

/// Mount time of `r`, ms, with sense time `t_r` ns, a 4 KiB channel
/// transfer of `xfer_4k` ns and `dies` dies reading in parallel.
pub(super) fn mount_ms(r: &Rebuilt, t_r: Ns, xfer_4k: Ns, dies: u32) -> f64 {
    let reads = r.map_pages * (t_r + xfer_4k) + (r.scanned_pages + r.scanned_blocks) * t_r;
    reads as f64 / dies.max(1) as f64 / 1e6
}
