//! File systems the host can mount, and what the report says about them.
//!
//! * [`config`]: the scenario's `[fs]` section.
//! * [`ext4`]: ext4 with 3.x behaviour — layout, allocation, inodes,
//!   directories, metadata buffers.
//! * [`jbd2`]: the journal's log, transactions and checkpoint lists.
//!
//! Without `[fs]` the host keeps files as raw contiguous extents
//! ([`crate::host::files`]), with no metadata at all.

pub mod config;
pub mod ext4;
pub mod jbd2;

use serde::Serialize;

pub use config::{AtimeMode, DataMode, FsConfig, FsType, JournalSwitch};

/// The file-system part of the report (present when ext4 is mounted).
/// Counts are events or 4 KiB blocks since the start of measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FsStats {
    /// JBD2 transactions committed.
    pub journal_commits: u64,
    /// Of those, started by the `commit=` timer.
    pub periodic_commits: u64,
    /// Log blocks written to the journal (descriptors, metadata and data
    /// copies, commit blocks), 4 KiB blocks.
    pub journal_blocks_written: u64,
    /// Descriptor blocks among them.
    pub journal_descriptor_blocks: u64,
    /// Times the circular log wrapped to its start.
    pub journal_wraps: u64,
    /// Checkpoints forced by lack of log space (metadata written home,
    /// then the journal superblock).
    pub checkpoints: u64,
    /// Metadata blocks written to their home location (checkpoint or
    /// writeback; in place without a journal), 4 KiB blocks.
    pub metadata_blocks_written_in_place: u64,
    /// Data pages logged in the journal (data=journal).
    pub data_blocks_journaled: u64,
    /// Cache flushes the file system and its callers issued (REQ_FLUSH).
    pub flushes_issued: u64,
    /// Writes issued with FUA (commit blocks, journal superblock).
    pub fua_writes_issued: u64,
    /// Block allocations (`ext4_mb_new_blocks` calls that found a run).
    pub allocations: u64,
    /// Blocks allocated (data, directory and extent blocks).
    pub blocks_allocated: u64,
    /// Blocks freed.
    pub blocks_freed: u64,
    /// Inodes allocated.
    pub inodes_allocated: u64,
    /// Inodes freed.
    pub inodes_freed: u64,
    /// fsync/fdatasync calls that waited for a JBD2 commit.
    pub syncs_committed: u64,
    /// fsync/fdatasync calls that found nothing to commit and only
    /// flushed (or, with barrier=0, did nothing more).
    pub syncs_flush_only: u64,
    /// Reads that updated atime (and so dirtied the inode).
    pub atime_updates: u64,
}

/// The report's `fs` section: the options, the geometry and the counters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FsReport {
    /// The `[fs]` section as mounted.
    pub config: FsConfig,
    /// First sector of the partition.
    pub partition_first_sector: u64,
    /// File-system blocks (4 KiB).
    pub blocks: u64,
    /// Block groups.
    pub groups: u64,
    /// Inodes per group.
    pub inodes_per_group: u32,
    /// First block of the journal (0 without one).
    pub journal_first_block: u64,
    /// Journal length, blocks (0 without one).
    pub journal_blocks: u64,
    /// Blocks discarded by the FITRIM before measurement (0 without
    /// `fstrim`), 4 KiB blocks.
    pub fstrim_blocks: u64,
    /// Counters.
    #[serde(flatten)]
    pub stats: FsStats,
}
