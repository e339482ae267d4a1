//! Flash translation layers.
//!
//! Contract: an FTL is an untimed state machine. Host data reaches it one
//! *stripe page* at a time (up to `planes × page_kib / 4` logical 4 KiB pages,
//! each with the oracle version written with it); it maps them, runs garbage
//! collection when a die runs short of free blocks, and appends the NAND
//! operations this costs to a caller-owned buffer
//! ([`NandOp`](super::nand::NandOp)). The caller
//! times those operations (timed path) or drops them (preconditioning), so
//! both paths run the same code and the hot path does not allocate.
//!
//! Built: [`PageFtl`] (page-level mapping at 4 KiB granularity, greedy GC,
//! dynamic wear leveling).

mod page;
mod stripe_set;

pub use page::PageFtl;

/// "No mapping" marker in the L2P and P2L tables.
pub const UNMAPPED: u32 = u32::MAX;

/// Life-cycle state of an erase block.
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

/// Counters kept by the FTL (all cumulative until [`PageFtl::reset_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtlStats {
    /// 4 KiB slots programmed on NAND: host data, GC moves and padding.
    pub programmed_slots: u64,
    /// Slots programmed as padding (partial stripe pages).
    pub padding_slots: u64,
    /// Victim blocks collected.
    pub gc_runs: u64,
    /// Valid slots moved by GC.
    pub gc_slots_moved: u64,
    /// NAND page reads issued by the FTL (GC).
    pub nand_reads: u64,
    /// NAND stripe-page programs.
    pub nand_programs: u64,
    /// Block erases.
    pub nand_erases: u64,
}
