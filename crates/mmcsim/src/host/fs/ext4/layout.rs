//! The on-disk geometry of an ext4 file system with 4 KiB blocks, as
//! `mke2fs -t ext4` / `make_ext4fs` lay it out without `flex_bg`: block
//! groups of 32,768 blocks; in groups 0, 1 and powers of 3, 5 and 7
//! (`sparse_super`) a superblock copy, the group descriptor table and the
//! reserved GDT blocks; then in every group its block bitmap, inode bitmap
//! and inode table; the journal (inode 8) contiguous from the start of the
//! middle group (e2fsprogs `ext2fs_mkjournal`).
//!
//! Block numbers are file-system blocks (4 KiB) from the start of the
//! partition; `s_first_data_block` is 0 for 4 KiB blocks.

use crate::host::fs::mkfs_error::MkfsError;

/// File-system block size, bytes.
pub const BLOCK_BYTES: u64 = 4096;
/// Blocks per group (`s_blocks_per_group` = 8 × block size).
pub const BLOCKS_PER_GROUP: u64 = 32_768;
/// On-disk inode size, bytes (`s_inode_size`, `make_ext4fs` default 256).
pub const INODE_BYTES: u64 = 256;
/// Group descriptor size without the 64bit feature, bytes.
pub const DESC_BYTES: u64 = 32;
/// First data block (`s_first_data_block`): 0 with 4 KiB blocks.
pub const FIRST_DATA_BLOCK: u64 = 0;
/// Root directory inode (`EXT4_ROOT_INO`).
pub const ROOT_INO: u32 = 2;
/// Journal inode (`EXT4_JOURNAL_INO`).
pub const JOURNAL_INO: u32 = 8;
/// First non-reserved inode (`EXT4_GOOD_OLD_FIRST_INO`, lost+found).
pub const FIRST_INO: u32 = 11;

/// The static layout of one block group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLayout {
    /// First block of the group.
    pub first: u64,
    /// Blocks in the group (the last group may be short).
    pub blocks: u64,
    /// Whether the group holds a superblock and GDT copy.
    pub has_super: bool,
    /// Block bitmap block (`bg_block_bitmap`).
    pub block_bitmap: u64,
    /// Inode bitmap block (`bg_inode_bitmap`).
    pub inode_bitmap: u64,
    /// First inode-table block (`bg_inode_table`).
    pub inode_table: u64,
}

/// The geometry of the whole file system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Blocks in the file system (`s_blocks_count`).
    pub blocks: u64,
    /// Inodes per group (`s_inodes_per_group`).
    pub inodes_per_group: u32,
    /// Inode-table blocks per group.
    pub inode_table_blocks: u64,
    /// Group-descriptor-table blocks.
    pub gdt_blocks: u64,
    /// Reserved GDT blocks for online resize (`s_reserved_gdt_blocks`).
    pub reserved_gdt_blocks: u64,
    /// Every group.
    pub groups: Vec<GroupLayout>,
    /// First block of the journal (its superblock).
    pub journal_first: u64,
    /// Journal length, blocks (`s_maxlen` of the journal superblock).
    pub journal_blocks: u64,
}

/// Whether group `g` holds a superblock backup under `sparse_super`.
pub fn group_has_super(g: u64) -> bool {
    if g <= 1 {
        return true;
    }
    [3u64, 5, 7].iter().any(|&b| {
        let mut p = b;
        while p < g {
            p *= b;
        }
        p == g
    })
}

/// `make_ext4fs`'s `compute_journal_blocks`: 1/64 of the file system,
/// clamped to 1,024-32,768 blocks (reference android-workloads.md §4.1).
pub fn default_journal_blocks(fs_blocks: u64) -> u64 {
    (fs_blocks / 64).clamp(1024, 32_768)
}

impl Layout {
    /// The layout of a file system of `blocks` 4 KiB blocks with one inode
    /// per `bytes_per_inode` and a journal of `journal_blocks` (0 = no
    /// journal). Errors when the partition is too small to hold it.
    pub fn new(
        blocks: u64,
        bytes_per_inode: u64,
        journal_blocks: u64,
    ) -> Result<Layout, MkfsError> {
        if blocks == 0 {
            return Err(MkfsError::NoBlocks);
        }
        let ngroups = blocks.div_ceil(BLOCKS_PER_GROUP);
        let inodes_per_block = BLOCK_BYTES / INODE_BYTES;
        // Inodes per group from the density, rounded up to whole
        // inode-table blocks (and at most 8 × block size, one bitmap).
        let ipg = (BLOCKS_PER_GROUP * BLOCK_BYTES / bytes_per_inode).div_ceil(inodes_per_block)
            * inodes_per_block;
        let ipg = ipg.clamp(inodes_per_block, BLOCK_BYTES * 8);
        let itb = ipg / inodes_per_block;
        let gdt_blocks = (ngroups * DESC_BYTES).div_ceil(BLOCK_BYTES);
        // e2fsprogs calc_reserved_gdt_blocks: room to grow 1024-fold (at
        // most 2^32 blocks), capped at one block of addresses.
        let max_blocks = blocks.saturating_mul(1024).min(u32::MAX as u64);
        let rsv_groups = max_blocks.div_ceil(BLOCKS_PER_GROUP);
        let rsv = (rsv_groups.div_ceil(BLOCK_BYTES / DESC_BYTES))
            .saturating_sub(gdt_blocks)
            .min(BLOCK_BYTES / 4);
        let mut groups = Vec::with_capacity(ngroups as usize);
        for g in 0..ngroups {
            let first = FIRST_DATA_BLOCK + g * BLOCKS_PER_GROUP;
            let len = (blocks - first).min(BLOCKS_PER_GROUP);
            let has_super = group_has_super(g);
            let mut b = first;
            if has_super {
                b += 1 + gdt_blocks + rsv;
            }
            let gl = GroupLayout {
                first,
                blocks: len,
                has_super,
                block_bitmap: b,
                inode_bitmap: b + 1,
                inode_table: b + 2,
            };
            if gl.inode_table + itb > first + len {
                return Err(MkfsError::GroupTooSmall {
                    blocks,
                    group: g,
                    len,
                });
            }
            groups.push(gl);
        }
        let mut l = Layout {
            blocks,
            inodes_per_group: ipg as u32,
            inode_table_blocks: itb,
            gdt_blocks,
            reserved_gdt_blocks: rsv,
            groups,
            journal_first: 0,
            journal_blocks,
        };
        if journal_blocks > 0 {
            // ext2fs_mkjournal: from the first data block of the middle
            // group on.
            let mid = ((blocks - FIRST_DATA_BLOCK) / 2 / BLOCKS_PER_GROUP) as usize;
            let g = &l.groups[mid];
            l.journal_first = g.inode_table + itb;
            if l.journal_first + journal_blocks > blocks {
                // Small file systems: right after group 0's inode table.
                let g0 = &l.groups[0];
                l.journal_first = g0.inode_table + itb;
            }
            if l.journal_first + journal_blocks > blocks {
                return Err(MkfsError::JournalTooLarge {
                    journal_blocks,
                    blocks,
                });
            }
        }
        Ok(l)
    }

    /// Number of block groups.
    pub fn ngroups(&self) -> usize {
        self.groups.len()
    }

    /// Group of block `blk`.
    pub fn group_of(&self, blk: u64) -> usize {
        ((blk - FIRST_DATA_BLOCK) / BLOCKS_PER_GROUP) as usize
    }

    /// Group descriptor block holding group `g`'s descriptor (primary
    /// copy, in group 0).
    pub fn gdt_block_of(&self, g: usize) -> u64 {
        FIRST_DATA_BLOCK + 1 + (g as u64 * DESC_BYTES) / BLOCK_BYTES
    }

    /// Group of inode `ino`.
    pub fn inode_group(&self, ino: u32) -> usize {
        ((ino - 1) / self.inodes_per_group) as usize
    }

    /// Inode-table block holding inode `ino` (`__ext4_get_inode_loc`).
    pub fn inode_block(&self, ino: u32) -> u64 {
        let g = self.inode_group(ino);
        let idx = ((ino - 1) % self.inodes_per_group) as u64;
        self.groups[g].inode_table + idx * INODE_BYTES / BLOCK_BYTES
    }

    /// Blocks each group uses for itself at mkfs (superblock copy, GDT,
    /// reserved GDT, bitmaps, inode table): `[first, end)` ranges.
    pub fn group_metadata(&self, g: usize) -> (u64, u64) {
        let gl = &self.groups[g];
        (gl.first, gl.inode_table + self.inode_table_blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_super_groups_are_0_1_and_powers_of_3_5_7() {
        let with: Vec<u64> = (0..60).filter(|&g| group_has_super(g)).collect();
        assert_eq!(with, vec![0, 1, 3, 5, 7, 9, 25, 27, 49]);
    }

    #[test]
    fn a_4_gib_file_system_looks_like_mke2fs_output() {
        let l = Layout::new(1 << 20, 16384, default_journal_blocks(1 << 20)).unwrap();
        assert_eq!(l.ngroups(), 32);
        assert_eq!(l.inodes_per_group, 8192);
        assert_eq!(l.inode_table_blocks, 512);
        assert_eq!(l.gdt_blocks, 1);
        // room to grow 1024-fold: 32,768 groups = 256 GDT blocks, less 1
        assert_eq!(l.reserved_gdt_blocks, 255);
        // group 0: sb, gdt, 255 reserved, then bitmaps and inode table
        assert_eq!(l.groups[0].block_bitmap, 257);
        assert_eq!(l.groups[0].inode_table, 259);
        // group 2 has no superblock backup
        assert_eq!(l.groups[2].block_bitmap, 2 * 32768);
        assert_eq!(l.journal_blocks, 16384);
        // the journal starts after the middle group's inode table
        assert_eq!(l.journal_first, l.groups[16].inode_table + 512);
        assert_eq!(l.inode_block(2), 259);
        assert_eq!(l.inode_block(17), 260);
        assert_eq!(l.inode_group(8193), 1);
    }

    #[test]
    fn journal_size_is_clamped() {
        assert_eq!(default_journal_blocks(10_000), 1024);
        assert_eq!(default_journal_blocks(1 << 20), 16384);
        assert_eq!(default_journal_blocks(1 << 30), 32768);
    }
}
