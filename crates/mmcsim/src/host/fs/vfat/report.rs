//! What vfat puts in the report's `fs` section: the mount options, the
//! FAT32 geometry and the counters.

use serde::Serialize;

use super::super::config::{AtimeMode, FsType};
use super::Vfat;

/// vfat's counters, since the start of measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VfatStats {
    /// Clusters allocated from the FAT (files and directories).
    pub clusters_allocated: u64,
    /// Clusters freed (truncate, unlink).
    pub clusters_freed: u64,
    /// FAT entries written (allocation, chain links, frees), each
    /// mirrored to the second FAT.
    pub fat_entry_updates: u64,
    /// Sectors of the two FATs written to the device, 512 B sectors (a
    /// written 4 KiB block-device page counts the FAT sectors it holds).
    pub fat_sectors_written: u64,
    /// Directory-entry updates (create, remove, size / first cluster /
    /// time of an inode: `__fat_write_inode`).
    pub dirent_updates: u64,
    /// Block-device pages of directory clusters written to the device
    /// (4 KiB pages).
    pub dirent_writes: u64,
    /// Block-device pages a namespace call wrote synchronously before it
    /// returned (`MS_DIRSYNC`), 4 KiB pages.
    pub dirsync_pages: u64,
    /// fsync / fdatasync calls.
    pub fsyncs: u64,
    /// Cache flushes (REQ_FLUSH) the file system issued: none in this
    /// era's driver (`fat_file_fsync` = `generic_file_fsync` +
    /// `sync_mapping_buffers`, no `blkdev_issue_flush` before Linux 3.16).
    pub flushes_issued: u64,
    /// Last closes that ran the `flush` mount option's writeback.
    pub close_flushes: u64,
}

/// The `[fs]` options a vfat mount used, defaults resolved (ext4's keys
/// do not apply and are left out).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VfatConfig {
    /// `vfat`.
    #[serde(rename = "type")]
    pub fs_type: FsType,
    /// Cluster size, KiB.
    pub cluster_kib: u32,
    /// The `flush` mount option.
    pub flush: bool,
    /// `MS_DIRSYNC`.
    pub dirsync: bool,
    /// Access-time policy.
    pub atime: AtimeMode,
    /// Start of the partition, MiB.
    pub partition_offset_mib: u64,
    /// Size of the partition, MiB.
    pub partition_size_mib: u64,
}

/// The report's `fs` section of a vfat mount.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct VfatReport {
    /// The `[fs]` options as mounted.
    pub config: VfatConfig,
    /// Bytes per cluster.
    pub cluster_bytes: u64,
    /// Sectors per FAT copy (512 B).
    pub fat_sectors: u64,
    /// First sector of the data region (cluster 2), from the partition's
    /// start; not a multiple of 8 means clusters straddle 4 KiB pages.
    pub data_start_sector: u64,
    /// Data clusters.
    pub clusters: u64,
    /// Free clusters at the end of the run.
    pub free_clusters: u64,
    /// The counters.
    #[serde(flatten)]
    pub stats: VfatStats,
}

impl Vfat {
    /// The report section.
    pub fn report(&self) -> VfatReport {
        VfatReport {
            config: VfatConfig {
                fs_type: FsType::Vfat,
                cluster_kib: Self::cluster_kib(&self.cfg),
                flush: self.cfg.flush.unwrap_or(false),
                dirsync: self.cfg.dirsync.unwrap_or(true),
                atime: self.cfg.atime,
                partition_offset_mib: self.cfg.partition_offset_mib,
                partition_size_mib: self.layout.sectors / 2048,
            },
            cluster_bytes: self.layout.cluster_bytes(),
            fat_sectors: self.layout.fat_sectors,
            data_start_sector: self.layout.data_start(),
            clusters: self.layout.clusters,
            free_clusters: self.fat.free_clusters(),
            stats: self.stats.clone(),
        }
    }
}
