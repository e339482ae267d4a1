//! In-memory ext4 inodes: size, timestamps, the extent map and the
//! transaction ids `ext4_sync_file` waits for.
//!
//! The extent tree holds up to 4 extents in the inode (`i_block`); beyond
//! that a depth-1 tree of leaf blocks with 340 extents each
//! (`(4096 - 12) / 12`), indexed from the inode. A change to an extent
//! dirties the inode (depth 0) or the leaf block holding it.

use crate::host::page_cache::FileId;
use crate::types::Ns;

/// Extents held in the inode itself (`EXT4_N_BLOCKS` words = 4 extents).
pub const EXTENTS_IN_INODE: usize = 4;
/// Extents per 4 KiB leaf block: (4096 − 12-byte header) / 12.
pub const EXTENTS_PER_LEAF: usize = 340;
/// Longest initialized extent, blocks (`EXT_INIT_MAX_LEN`).
pub const MAX_EXTENT_LEN: u64 = 32_768;

/// A mapped run of a file: `len` blocks from logical block `lblk` at
/// physical block `pblk`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// First logical block (4 KiB units within the file).
    pub lblk: u64,
    /// First physical block (file-system block number).
    pub pblk: u64,
    /// Length, blocks.
    pub len: u64,
}

/// Regular file or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// S_IFREG.
    File,
    /// S_IFDIR.
    Dir,
}

/// One inode.
#[derive(Clone, Debug)]
pub struct Inode {
    /// Inode number.
    pub ino: u32,
    /// File or directory.
    pub kind: Kind,
    /// Page-cache mapping of its data.
    pub mapping: FileId,
    /// `i_size`, bytes.
    pub size: u64,
    /// `i_disksize`: the size the on-disk inode records (with delayed
    /// allocation it trails `i_size` until writeback), bytes.
    pub disksize: u64,
    /// Extent map, sorted by `lblk`, non-overlapping.
    pub extents: Vec<Extent>,
    /// Extent leaf blocks (empty while the extents fit in the inode).
    pub leaves: Vec<u64>,
    /// Hard links (`i_links_count`).
    pub nlink: u32,
    /// Open file descriptions referring to it.
    pub open: u32,
    /// atime, mtime and ctime at kernel-tick resolution, ns.
    pub atime: Ns,
    /// Modification time, ns (tick resolution).
    pub mtime: Ns,
    /// Change time, ns (tick resolution).
    pub ctime: Ns,
    /// Latest transaction that changed the inode (`i_sync_tid`).
    pub sync_tid: u64,
    /// Latest transaction that changed what reading the data needs:
    /// allocation or on-disk size (`i_datasync_tid`).
    pub datasync_tid: u64,
    /// Created since the last sync of its parent directory (fsync of a
    /// new file without a journal also syncs the parent: `ext4_sync_parent`).
    pub new: bool,
    /// Parent directory inode (for `ext4_sync_parent`).
    pub parent: u32,
}

impl Inode {
    /// A new, empty inode.
    pub fn new(ino: u32, kind: Kind, mapping: FileId, parent: u32, now: Ns) -> Inode {
        Inode {
            ino,
            kind,
            mapping,
            size: 0,
            disksize: 0,
            extents: Vec::new(),
            leaves: Vec::new(),
            nlink: 1,
            open: 0,
            atime: now,
            mtime: now,
            ctime: now,
            sync_tid: 0,
            datasync_tid: 0,
            new: true,
            parent,
        }
    }

    /// The physical block of logical block `lblk` and how many blocks from
    /// it are contiguous in the same extent, or `None` for a hole.
    pub fn map(&self, lblk: u64) -> Option<(u64, u64)> {
        let i = self.extents.partition_point(|e| e.lblk + e.len <= lblk);
        let e = self.extents.get(i)?;
        (e.lblk <= lblk).then(|| (e.pblk + (lblk - e.lblk), e.len - (lblk - e.lblk)))
    }

    /// Logical blocks from `lblk` until the next mapped block (at most
    /// `max`): the length of the hole at `lblk`.
    pub fn hole_len(&self, lblk: u64, max: u64) -> u64 {
        let i = self.extents.partition_point(|e| e.lblk + e.len <= lblk);
        match self.extents.get(i) {
            Some(e) if e.lblk <= lblk => 0,
            Some(e) => (e.lblk - lblk).min(max),
            None => max,
        }
    }

    /// The goal block for extending logical block `lblk`
    /// (`ext4_ext_find_goal`): right after the nearest extent before it.
    pub fn goal_after(&self, lblk: u64) -> Option<u64> {
        let i = self.extents.partition_point(|e| e.lblk <= lblk);
        let e = self.extents.get(i.checked_sub(1)?)?;
        Some(e.pblk + (lblk - e.lblk))
    }

    /// Inserts the mapping `ext` (a hole before), merging with a
    /// physically and logically adjacent extent. Returns the index of the
    /// extent that now holds it.
    pub fn insert_extent(&mut self, ext: Extent) -> usize {
        let i = self.extents.partition_point(|e| e.lblk < ext.lblk);
        if i > 0 {
            let p = &mut self.extents[i - 1];
            if p.lblk + p.len == ext.lblk
                && p.pblk + p.len == ext.pblk
                && p.len + ext.len <= MAX_EXTENT_LEN
            {
                p.len += ext.len;
                return i - 1;
            }
        }
        if let Some(n) = self.extents.get_mut(i) {
            if ext.lblk + ext.len == n.lblk
                && ext.pblk + ext.len == n.pblk
                && n.len + ext.len <= MAX_EXTENT_LEN
            {
                n.lblk = ext.lblk;
                n.pblk = ext.pblk;
                n.len += ext.len;
                return i;
            }
        }
        self.extents.insert(i, ext);
        i
    }

    /// Removes the mappings of logical blocks at or beyond `from`; returns
    /// the freed physical runs.
    pub fn truncate_extents(&mut self, from: u64) -> Vec<(u64, u64)> {
        let mut freed = Vec::new();
        while let Some(e) = self.extents.last_mut() {
            if e.lblk >= from {
                freed.push((e.pblk, e.len));
                self.extents.pop();
            } else if e.lblk + e.len > from {
                let keep = from - e.lblk;
                freed.push((e.pblk + keep, e.len - keep));
                e.len = keep;
                break;
            } else {
                break;
            }
        }
        freed
    }

    /// Leaf blocks the extent count needs (0 while they fit in the inode).
    pub fn leaves_needed(&self) -> usize {
        if self.extents.len() <= EXTENTS_IN_INODE {
            0
        } else {
            self.extents.len().div_ceil(EXTENTS_PER_LEAF)
        }
    }

    /// Blocks mapped (data, without extent blocks).
    pub fn mapped_blocks(&self) -> u64 {
        self.extents.iter().map(|e| e.len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_merge_when_contiguous_and_map_finds_runs() {
        let mut i = Inode::new(12, Kind::File, 0, 2, 0);
        i.insert_extent(Extent {
            lblk: 0,
            pblk: 1000,
            len: 4,
        });
        i.insert_extent(Extent {
            lblk: 4,
            pblk: 1004,
            len: 4,
        });
        assert_eq!(i.extents.len(), 1);
        i.insert_extent(Extent {
            lblk: 10,
            pblk: 2000,
            len: 2,
        });
        assert_eq!(i.extents.len(), 2);
        assert_eq!(i.map(5), Some((1005, 3)));
        assert_eq!(i.map(8), None);
        assert_eq!(i.hole_len(8, 100), 2);
        assert_eq!(i.goal_after(9), Some(1009));
        assert_eq!(i.truncate_extents(6), vec![(2000, 2), (1006, 2)]);
        assert_eq!(i.mapped_blocks(), 6);
    }
}
