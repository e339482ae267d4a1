//! FAT32 geometry as Android's `newfs_msdos -F 32 -O android -c N` lays it
//! out on a partition: the reserved region (boot sector, FSINFO, backup
//! boot sector), two copies of the FAT, then the data region of clusters
//! numbered from 2, whose first cluster holds the root directory.
//!
//! [src: AOSP system/core toolbox newfs_msdos.c (FreeBSD newfs_msdos of
//! the era): `bpb.res = fat == 32 ? MAX(x, MAX(16384 / bpb.bps, 4))`,
//! `bpb.nft = 2`, the FAT size from `(bsec - x1) * bps * NPB / (spc * bps
//! * NPB + fat / BPN * nft)` clusters, `RESFTE` = 2 reserved entries, root
//! directory at cluster `RESFTE`; no `-A` alignment before 2014.]

use crate::host::fs::mkfs_error::MkfsError;
use crate::types::SECTORS_PER_PAGE;

/// Bytes per logical sector (`bpb.bps`: the eMMC's 512-byte sector).
pub const SECTOR_BYTES: u64 = 512;
/// Reserved sectors before the first FAT (`newfs_msdos` FAT32 default:
/// 16 KiB / 512 B = 32).
pub const RESERVED_SECTORS: u64 = 32;
/// FSINFO sector (`bpb.infs` = 1, after the boot sector).
pub const FSINFO_SECTOR: u64 = 1;
/// Copies of the FAT (`bpb.nft`).
pub const NFATS: u64 = 2;
/// FAT entries 0 and 1 are reserved (`RESFTE`); clusters start at 2.
pub const FIRST_CLUSTER: u32 = 2;
/// The root directory's first cluster (`bpb.rdcl` = `RESFTE`).
pub const ROOT_CLUSTER: u32 = 2;
/// Bytes of one FAT32 entry.
pub const FAT_ENTRY_BYTES: u64 = 4;
/// Bytes of one directory entry (short or long-name slot).
pub const DIRENT_BYTES: u64 = 32;
/// The largest valid cluster count of FAT32 (`MAXCLS32`, 0xffffff5).
const MAXCLS32: u64 = 0x0fff_fff5;

/// A FAT32 file system's geometry, in 512-byte sectors from the start of
/// its partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Sectors in the partition (`bpb.bsec`).
    pub sectors: u64,
    /// Sectors per cluster (`bpb.spc`).
    pub spc: u64,
    /// Sectors per FAT copy (`bpb.bspf`).
    pub fat_sectors: u64,
    /// Data clusters (numbered `2..2 + clusters`).
    pub clusters: u64,
}

impl Layout {
    /// The layout `newfs_msdos -F 32 -c spc` makes on `sectors` sectors,
    /// or why it cannot.
    pub fn new(sectors: u64, spc: u64) -> Result<Layout, MkfsError> {
        if sectors > u32::MAX as u64 {
            return Err(MkfsError::Fat32TooLarge { sectors });
        }
        // x1: reserved sectors plus a one-sector FAT per copy, as
        // newfs_msdos starts its estimate.
        let x1 = RESERVED_SECTORS + NFATS;
        if sectors <= x1 + spc {
            return Err(MkfsError::Fat32TooSmall);
        }
        // Nibbles: a byte is 2 (NPB), a FAT32 entry 8 (fat / BPN).
        let est = (sectors - x1) * SECTOR_BYTES * 2 / (spc * SECTOR_BYTES * 2 + 8 * NFATS);
        let fat_sectors =
            ((FIRST_CLUSTER as u64 + est.min(MAXCLS32)) * 8).div_ceil(SECTOR_BYTES * 2);
        let meta = RESERVED_SECTORS + fat_sectors * NFATS;
        if sectors <= meta + spc {
            return Err(MkfsError::Fat32TooSmall);
        }
        let fits = fat_sectors * SECTOR_BYTES / FAT_ENTRY_BYTES - FIRST_CLUSTER as u64;
        let clusters = ((sectors - meta) / spc).min(fits).min(MAXCLS32);
        Ok(Layout {
            sectors,
            spc,
            fat_sectors,
            clusters,
        })
    }

    /// Bytes per cluster.
    pub fn cluster_bytes(&self) -> u64 {
        self.spc * SECTOR_BYTES
    }

    /// First sector of FAT copy `copy` (0 or 1).
    pub fn fat_start(&self, copy: u64) -> u64 {
        RESERVED_SECTORS + copy * self.fat_sectors
    }

    /// First sector of the data region (cluster 2).
    pub fn data_start(&self) -> u64 {
        RESERVED_SECTORS + NFATS * self.fat_sectors
    }

    /// One past the last cluster number (`sbi->max_cluster`).
    pub fn max_cluster(&self) -> u32 {
        (self.clusters + FIRST_CLUSTER as u64) as u32
    }

    /// First sector of cluster `c`.
    pub fn cluster_sector(&self, c: u32) -> u64 {
        self.data_start() + (c - FIRST_CLUSTER) as u64 * self.spc
    }

    /// The sector of FAT copy `copy` holding cluster `c`'s entry.
    pub fn fat_entry_sector(&self, copy: u64, c: u32) -> u64 {
        self.fat_start(copy) + c as u64 * FAT_ENTRY_BYTES / SECTOR_BYTES
    }

    /// Whether `sector` lies in either FAT copy.
    pub fn in_fat(&self, sector: u64) -> bool {
        (self.fat_start(0)..self.data_start()).contains(&sector)
    }

    /// The cluster holding data-region `sector`, if any.
    pub fn cluster_of(&self, sector: u64) -> Option<u32> {
        let s = sector.checked_sub(self.data_start())?;
        let c = s / self.spc;
        (c < self.clusters).then(|| c as u32 + FIRST_CLUSTER)
    }

    /// The block-device page (4 KiB of the partition) holding `sector`.
    pub fn page_of(sector: u64) -> u64 {
        sector / SECTORS_PER_PAGE
    }

    /// Directory-entry slots per cluster.
    pub fn slots_per_cluster(&self) -> u64 {
        self.cluster_bytes() / DIRENT_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_512_mib_card_with_4_kib_clusters() {
        let l = Layout::new(512 * 2048, 8).unwrap();
        // ~131,000 clusters of 4 bytes each in each FAT
        assert!(l.clusters > 130_000 && l.clusters < 131_072, "{l:?}");
        assert!(l.fat_sectors * 128 >= l.clusters + 2);
        assert!(l.data_start() + l.clusters * l.spc <= l.sectors);
        assert_eq!(l.fat_start(0), 32);
        assert_eq!(l.fat_entry_sector(1, 200), 32 + l.fat_sectors + 1);
        assert_eq!(l.cluster_of(l.cluster_sector(7) + 3), Some(7));
    }

    #[test]
    fn too_small_and_too_large_partitions_fail() {
        assert!(Layout::new(30, 8).is_err());
        assert!(Layout::new(1 << 33, 8).is_err());
    }
}
