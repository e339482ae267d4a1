//! Why `mkfs` cannot make a file system on a partition (mke2fs's and
//! newfs_msdos's refusals, in the model's words).

/// Why a file system cannot be made on the partition given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MkfsError {
    /// An empty partition.
    #[error("a partition of 0 blocks holds no file system")]
    NoBlocks,
    /// An ext4 block group too small for its bitmaps and inode table.
    #[error("a partition of {blocks} blocks leaves group {group} ({len} blocks) too small for its bitmaps and inode table; use a bigger fs.partition_size_mib")]
    GroupTooSmall {
        /// The partition, 4 KiB blocks.
        blocks: u64,
        /// The group.
        group: u64,
        /// Its length, blocks.
        len: u64,
    },
    /// A journal longer than the file system holds.
    #[error("a journal of {journal_blocks} blocks does not fit a file system of {blocks} blocks")]
    JournalTooLarge {
        /// The journal, blocks.
        journal_blocks: u64,
        /// The partition, blocks.
        blocks: u64,
    },
    /// A partition below the smallest ext4 of the options.
    #[error("a partition of {blocks} blocks ({} MiB) is too small: with these options the smallest ext4 is {min_mib} MiB (one block group's superblock, group descriptors, bitmaps and inode table, the journal, the root directory and lost+found); set fs.partition_size_mib to at least {min_mib}", .blocks / 256)]
    Ext4TooSmall {
        /// The partition, 4 KiB blocks.
        blocks: u64,
        /// The smallest partition that holds it, MiB.
        min_mib: u64,
    },
    /// No room left for a directory mkfs (or vold) creates.
    #[error("no room for {what}")]
    NoRoom {
        /// `the root directory`, `lost+found`, `LOST.DIR`.
        what: &'static str,
    },
    /// A FAT32 volume above 2^32 - 1 sectors.
    #[error("a FAT32 volume holds at most 2^32 - 1 sectors (2 TiB); the partition has {sectors}")]
    Fat32TooLarge {
        /// The partition, 512-byte sectors.
        sectors: u64,
    },
    /// A partition below FAT32's reserved region, FATs and one cluster.
    #[error("too small for FAT32's reserved region, two FATs and a cluster")]
    Fat32TooSmall,
    /// A FAT32 layout that cannot be made, with the partition and the
    /// smallest that can.
    #[error("fs: a partition of {blocks} blocks cannot hold FAT32 with {cluster_kib} KiB clusters: {why}; set fs.partition_size_mib to at least {min_mib}")]
    Fat32 {
        /// The partition, 4 KiB blocks.
        blocks: u64,
        /// The cluster size, KiB.
        cluster_kib: u32,
        /// Why.
        why: Box<MkfsError>,
        /// The smallest partition that holds it, MiB.
        min_mib: u64,
    },
}
