//! What ext4 + JBD2 put in the report's `fs` section: the mount options,
//! the geometry and the counters.

use serde::Serialize;

use super::super::config::FsConfig;
use super::Ext4;

/// ext4's counters in the report's `fs` section.
/// Counts are events or 4 KiB blocks since the start of measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Ext4Stats {
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

/// The report's `fs` section of an ext4 mount: the options, the geometry
/// and the counters.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Ext4Report {
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
    pub stats: Ext4Stats,
}

impl Ext4 {
    /// The report section: counters since the start of measurement, the
    /// journal's folded in.
    pub fn report(&self) -> Ext4Report {
        let l = self.layout();
        let mut stats = self.stats.clone();
        if let Some(j) = self.journal() {
            stats.journal_commits = j.stats.commits;
            stats.periodic_commits = j.stats.periodic_commits;
            stats.journal_blocks_written = j.stats.log_blocks;
            stats.journal_descriptor_blocks = j.stats.descriptor_blocks;
            stats.journal_wraps = j.stats.wraps;
            stats.checkpoints = j.stats.checkpoints;
        }
        Ext4Report {
            config: self.config().clone(),
            partition_first_sector: self.sector_of(0),
            blocks: l.blocks,
            groups: l.ngroups() as u64,
            inodes_per_group: l.inodes_per_group,
            journal_first_block: l.journal_first,
            journal_blocks: l.journal_blocks,
            fstrim_blocks: self.fstrim_blocks,
            stats,
        }
    }
}
