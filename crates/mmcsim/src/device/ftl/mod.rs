//! Flash translation layer: a [`Mapping`] scheme built from a block
//! manager, garbage collection and wear leveling.
//!
//! Contract: an FTL is an untimed state machine. Host data reaches it one
//! *stripe page* at a time (up to `planes × page_kib / 4` logical 4 KiB pages,
//! each with the oracle version written with it); it maps them, reclaims
//! space when a die runs short of free blocks, and appends the NAND
//! operations this costs to a caller-owned buffer of
//! [`super::nand::NandOp`]. The caller times those operations
//! (timed path) or drops them (preconditioning), so both paths run the same
//! code and the hot path does not allocate.
//!
//! The stages, as in MQSim's address-mapping unit / block manager / GC-and-WL
//! unit:
//! * [`Mapping`] — the address-mapping scheme the controller talks to:
//!   lookup, write, trim, user capacity. Built: [`PageMapping`]
//!   (page-level, 4 KiB units; [`MappingScheme::Page`]), [`HybridMapping`]
//!   (FAST-style log blocks with switch / partial / full merges;
//!   [`MappingScheme::Hybrid`]) and [`DftlMapping`] (demand-cached page
//!   mapping; [`MappingScheme::Dftl`]). Each write reports where its data
//!   went and how much reclaim work (GC or merges) it ran first
//!   ([`Placement`]).
//! * [`page_table`] — the page-level L2P table.
//! * [`block_manager`] — erase blocks in stripes: per-die free pools, the
//!   host and GC write points, allocation (dynamic wear leveling: the
//!   least-worn free stripe), valid counts and the physical-to-logical
//!   record of every slot.
//! * [`gc`] — foreground garbage collection with a [`VictimPolicy`].
//! * [`wear_leveling`] — the static wear-leveling hook consulted after each
//!   GC session.

pub mod block_manager;
mod dftl;
pub mod gc;
pub mod hybrid;
mod integrity;
pub mod integrity_journal;
mod page;
pub mod page_table;
pub mod wear_leveling;

pub use dftl::DftlMapping;
pub use gc::VictimPolicy;
pub use hybrid::HybridMapping;
#[cfg(test)]
pub use integrity::Corruption;
pub use integrity::IntegrityError;
pub use integrity_journal::{MapChange, MapJournal};
pub use page::PageMapping;

use super::nand::NandOp;
use super::state::{StateError, StateReader, StateWriter};
use serde::{Deserialize, Serialize};

/// "No mapping" marker in the L2P and P2L tables.
pub const UNMAPPED: u32 = u32::MAX;

/// Address-mapping schemes (`[ftl] mapping` of a device profile).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MappingScheme {
    /// Page-level mapping: any 4 KiB logical page in any 4 KiB slot.
    Page,
    /// Hybrid log-block mapping, FAST style (block-mapped data blocks plus
    /// a sequential and a few page-mapped random log blocks, merged when
    /// they run out): [`HybridMapping`].
    Hybrid,
    /// Demand-based page-level mapping (DFTL: the L2P table on flash, a
    /// cached mapping table in SRAM): [`DftlMapping`].
    Dftl,
}

impl MappingScheme {
    /// The name used in device profiles.
    pub fn name(self) -> &'static str {
        match self {
            MappingScheme::Page => "page",
            MappingScheme::Hybrid => "hybrid",
            MappingScheme::Dftl => "dftl",
        }
    }
}

/// Life-cycle state of an erase block (a stripe of blocks, one per plane).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    /// Erased, in the free pool.
    Free,
    /// A write point (host or GC) is programming it.
    Open,
    /// Fully programmed; a GC victim candidate.
    Full,
    /// Being collected by GC.
    Collecting,
}

/// Counters kept by the FTL (all cumulative until [`Mapping::reset_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtlStats {
    /// 4 KiB slots programmed on NAND: host data, GC moves, wear-leveling
    /// moves and padding.
    pub programmed_slots: u64,
    /// Slots programmed as padding (partial stripe pages).
    pub padding_slots: u64,
    /// Victim blocks collected by garbage collection (hybrid mapping: merges
    /// of every kind).
    pub gc_runs: u64,
    /// Valid slots moved by garbage collection.
    pub gc_slots_moved: u64,
    /// Cold blocks migrated by static wear leveling.
    pub wl_migrations: u64,
    /// Valid slots moved by static wear leveling.
    pub wl_slots_moved: u64,
    /// NAND page reads issued by the FTL (GC and wear leveling).
    pub nand_reads: u64,
    /// NAND stripe-page programs.
    pub nand_programs: u64,
    /// Block erases (multi-plane erases of a stripe count once).
    pub nand_erases: u64,
    /// Hybrid mapping: switch merges (a complete sequential log block
    /// becomes the data block; only the old data block is erased).
    pub merges_switch: u64,
    /// Hybrid mapping: partial merges (the rest of a sequential log block
    /// copied in, then it becomes the data block).
    pub merges_partial: u64,
    /// Hybrid mapping: full merges (every valid page of a logical block
    /// copied into a new block; the old data and log blocks erased).
    pub merges_full: u64,
    /// DFTL: mapping lookups found in the cached mapping table.
    pub cmt_hits: u64,
    /// DFTL: mapping lookups that missed the cached mapping table.
    pub cmt_misses: u64,
    /// DFTL: translation pages read from NAND (misses and read-modify-write
    /// of a write-back).
    pub translation_reads: u64,
    /// DFTL: translation pages programmed (dirty entries written back).
    pub translation_writes: u64,
}

/// Where one stripe-page write went and what it cost besides its own
/// program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Die the data was programmed on.
    pub die: u32,
    /// NAND operations appended before the data's own program: the reclaim
    /// work (garbage collection, wear-leveling moves — or merges, in a
    /// log-block scheme) the write had to wait for. The data's program is
    /// the operation right after them.
    pub reclaim_ops: usize,
}

/// An address-mapping scheme: the FTL as the controller sees it.
///
/// Logical pages (LPNs) are 4 KiB; physical slots are 4 KiB units of the
/// NAND array (see [`super::nand`] for their numbering).
pub trait Mapping: std::fmt::Debug + Send + Sync {
    /// The scheme this is.
    fn scheme(&self) -> MappingScheme;
    /// A copy of the whole mapping state (to start several runs from one
    /// preconditioned device).
    fn clone_box(&self) -> Box<dyn Mapping>;
    /// Logical 4 KiB pages visible to the host (the user capacity).
    fn user_lpns(&self) -> u32;
    /// Physical slot holding `lpn`, if mapped.
    fn lookup(&self, lpn: u32) -> Option<u32>;
    /// Simulator performance hint (see [`crate::device::warm`]): prefetch
    /// the host-CPU cache lines a coming lookup of `lpn` reads. No
    /// simulated effect; default: nothing.
    fn warm(&self, lpn: u32) {
        let _ = lpn;
    }
    /// True when the scheme keeps its own translation state (block map and
    /// log page maps in SRAM, or a cached mapping table) so the device's
    /// map-page cache is not consulted. Default false: the page mapping's
    /// table is cached in map pages by the controller.
    fn owns_translation(&self) -> bool {
        false
    }
    /// True when the scheme keeps data in place — offset `o` of a logical
    /// block at position `o` of its data block, as block-mapped and hybrid
    /// log-block FTLs do — so a stripe page of sequential data is only
    /// placed in place when it holds one aligned group of logical pages:
    /// the controller then starts a new stripe page where a write reaches
    /// the first page of such a group (see `firmware.rs`). Default false:
    /// a page-level scheme places any entries anywhere.
    fn in_place(&self) -> bool {
        false
    }
    /// The slot holding `lpn` as the controller resolves it for a host
    /// read, appending the NAND work that costs (a DFTL translation-page
    /// read on a miss); default: [`Mapping::lookup`], free.
    fn translate(&mut self, lpn: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let _ = ops;
        self.lookup(lpn)
    }
    /// A host discard of `lpn`, appending the NAND work it costs; default:
    /// [`Mapping::trim`], free.
    fn discard(&mut self, lpn: u32, ops: &mut Vec<NandOp>) {
        let _ = ops;
        self.trim(lpn);
    }
    /// The card's part of an eMMC ERASE (CMD38 argument 0x0) after the
    /// erased groups' LPNs were trimmed: erases every block left without
    /// valid data, appending the NAND work; returns the blocks (stripes;
    /// superblocks for the hybrid mapping) erased. `None` (default): the
    /// scheme does not model it (every built scheme does).
    fn erase_unmapped(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        let _ = ops;
        None
    }
    /// eMMC SANITIZE: migrates the valid data out of every block holding
    /// invalid data and erases it, appending the NAND work; returns the
    /// blocks (stripes; superblocks erased for the hybrid mapping)
    /// collected. `None` (default): not modelled.
    fn sanitize(&mut self, ops: &mut Vec<NandOp>) -> Option<u32> {
        let _ = ops;
        None
    }
    /// Invalid 4 KiB slots on NAND (data overwritten, trimmed or moved and
    /// not yet erased), where the scheme tracks them.
    fn invalid_slots(&self) -> Option<u64> {
        None
    }
    /// Writes one stripe page of host data (`entries` = `(lpn, version)`, at
    /// most a stripe page; the rest is padding), reclaiming space first if
    /// needed; the NAND operations are appended to `ops`.
    fn write(&mut self, entries: &[(u32, u32)], ops: &mut Vec<NandOp>) -> Placement;
    /// Unmaps `lpn` (TRIM/discard): its slot becomes invalid.
    fn trim(&mut self, lpn: u32);
    /// Fewest free blocks on any die (BKOPS urgency; the hybrid mapping
    /// defines its free-block pool in its implementation); `None` when the
    /// scheme has no background collection (default).
    fn min_free_blocks_per_die(&self) -> Option<u32> {
        None
    }
    /// Background GC (BKOPS): collects one victim on the die with the
    /// fewest free blocks if it has fewer than `target`, appending the NAND
    /// work to `ops`; returns the die, or `None` when nothing was done
    /// (default: the scheme has no background collection).
    fn background_collect(&mut self, target: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let _ = (target, ops);
        None
    }
    /// Idle-time background GC: one incremental step of `budget` stripe
    /// pages on the die with a victim in progress, else on the die with
    /// the fewest free blocks if it has fewer than `target`; returns the
    /// die, or `None` when nothing was done (default: no idle collection).
    fn idle_collect(&mut self, target: u32, budget: u32, ops: &mut Vec<NandOp>) -> Option<u32> {
        let _ = (target, budget, ops);
        None
    }
    /// Completes any victim incremental GC has part-way collected
    /// (before a saved state); default: nothing to do.
    fn settle_gc(&mut self, ops: &mut Vec<NandOp>) {
        let _ = ops;
    }
    /// Emergency GC sessions: incremental GC fell behind and whole
    /// victims were collected at once (default 0).
    fn gc_emergencies(&self) -> u64 {
        0
    }
    /// Host LPN writes over which the scheme's reclaim work renews its
    /// state (LPNs): the window preconditioning measures its WAF over to
    /// decide it is in steady state. `None` (default): a page-level
    /// scheme's GC spans the whole filled range, so the window is a
    /// fraction of that range.
    fn renewal_window(&self) -> Option<u64> {
        None
    }
    /// Counters.
    fn stats(&self) -> FtlStats;
    /// Clears the counters (state such as erase counts is kept).
    fn reset_stats(&mut self);
    /// Puts back counters saved earlier (untimed work that must not count).
    fn restore_stats(&mut self, saved: FtlStats);
    /// Erase count of every block.
    fn erase_counts(&self) -> &[u32];
    /// Checks the FTL against the oracle: `expected[lpn]` is the newest
    /// version the host wrote (0 = never written or trimmed) and `pending`
    /// the `(lpn, version)` entries still in the write buffer, oldest first.
    fn check(&self, pending: &[(u32, u32)], expected: &[u32]) -> Result<(), IntegrityError>;
    /// Appends the mapping's state to a saved device state (taken right
    /// after preconditioning: no write pending, counters reset). A scheme
    /// without saved-state support keeps this default, an error saying so.
    fn save_state(&self, _out: &mut StateWriter) -> Result<(), StateError> {
        Err(StateError::unsupported(self.scheme()))
    }
    /// Restores the state [`Mapping::save_state`] wrote into this freshly
    /// built mapping of the same geometry; `expected` holds the version
    /// oracle's newest version of every LPN (the version stored with each
    /// valid slot). The default refuses, as for saving.
    fn load_state(
        &mut self,
        _input: &mut StateReader<'_>,
        _expected: &[u32],
    ) -> Result<(), StateError> {
        Err(StateError::unsupported(self.scheme()))
    }

    /// The journal in which this mapping reports every translation change
    /// (for the incremental integrity check, `--check-integrity`); `None`
    /// when the scheme does not report them, and the check then refuses to
    /// run on it. A scheme that returns one must also implement
    /// [`Mapping::slot_record`].
    fn journal(&mut self) -> Option<&mut MapJournal> {
        None
    }
    /// The `(lpn, version)` record of the valid data programmed in physical
    /// `slot` (`slot` < the array's slots), or `None` when the slot holds
    /// no valid data (free, erased, padding or invalidated).
    fn slot_record(&self, slot: u32) -> Option<(u32, u32)> {
        let _ = slot;
        None
    }
    /// Test-only hook: damages the mapping state as `c` says; false when
    /// the scheme has no such hook.
    #[cfg(test)]
    fn corrupt(&mut self, c: Corruption) -> bool {
        let _ = c;
        false
    }
}

/// Logical pages left to the host by `slots` physical slots with a fraction
/// `over_provisioning` hidden (rounded down to whole pages).
pub fn user_lpns(slots: u32, over_provisioning: f64) -> u32 {
    (slots as f64 * (1.0 - over_provisioning)).floor() as u32
}
