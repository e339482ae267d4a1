//! Block and inode bitmaps with goal-directed allocation, after ext4's
//! `ext4_mb_new_blocks` (goal block first, then the first free run at or
//! after it in the goal's group, then the following groups) and
//! `ext4_new_inode` (`find_group_other` for files, a simplified
//! `find_group_orlov` for directories).
//!
//! Blocks freed by a transaction are not reused until it commits
//! (`ext4_free_blocks` defers them to `release_blocks_on_commit` unless
//! `data=writeback`): [`Bitmaps::free_blocks`] marks them free only when
//! told the freeing transaction is durable.

use super::layout::{Layout, BLOCKS_PER_GROUP, FIRST_INO, ROOT_INO};

/// A bitmap of `u64` words.
#[derive(Clone, Debug)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u64) -> Bits {
        Bits(vec![0; n.div_ceil(64) as usize])
    }
    fn get(&self, i: u64) -> bool {
        self.0[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    fn set(&mut self, i: u64, v: bool) {
        let w = &mut self.0[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }
    /// First clear bit in `[from, end)`.
    fn next_clear(&self, from: u64, end: u64) -> Option<u64> {
        let mut i = from;
        while i < end {
            let w = self.0[(i / 64) as usize] | ((1u64 << (i % 64)) - 1);
            if w == u64::MAX {
                i = (i / 64 + 1) * 64;
                continue;
            }
            let b = (i / 64) * 64 + (!w).trailing_zeros() as u64;
            return (b < end).then_some(b);
        }
        None
    }
}

/// One group's allocation state.
#[derive(Clone, Debug)]
struct Group {
    blocks: Bits,
    inodes: Bits,
    free_blocks: u64,
    free_inodes: u32,
    dirs: u32,
}

/// The block and inode bitmaps of every group.
#[derive(Clone, Debug)]
pub struct Bitmaps {
    groups: Vec<Group>,
    first: Vec<u64>,
    len: Vec<u64>,
    ipg: u32,
}

/// A run of allocated blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// First block.
    pub start: u64,
    /// Blocks.
    pub len: u64,
}

impl Bitmaps {
    /// The bitmaps of a fresh file system: every group's own metadata and
    /// the journal in use, inodes 1-10 (reserved) in use.
    pub fn mkfs(l: &Layout) -> Bitmaps {
        let mut b = Bitmaps {
            groups: Vec::new(),
            first: l.groups.iter().map(|g| g.first).collect(),
            len: l.groups.iter().map(|g| g.blocks).collect(),
            ipg: l.inodes_per_group,
        };
        for g in &l.groups {
            b.groups.push(Group {
                blocks: Bits::new(BLOCKS_PER_GROUP),
                inodes: Bits::new(l.inodes_per_group as u64),
                free_blocks: g.blocks,
                free_inodes: l.inodes_per_group,
                dirs: 0,
            });
        }
        for g in 0..l.ngroups() {
            let (s, e) = l.group_metadata(g);
            b.mark(s, e - s);
        }
        if l.journal_blocks > 0 {
            b.mark(l.journal_first, l.journal_blocks);
        }
        for ino in 1..FIRST_INO {
            b.mark_inode(ino, ino == ROOT_INO);
        }
        b
    }

    /// Marks `[start, start + len)` in use.
    pub fn mark(&mut self, start: u64, len: u64) {
        for blk in start..start + len {
            let g = self.group_of(blk);
            let i = blk - self.first[g];
            if !self.groups[g].blocks.get(i) {
                self.groups[g].blocks.set(i, true);
                self.groups[g].free_blocks -= 1;
            }
        }
    }

    fn mark_inode(&mut self, ino: u32, dir: bool) {
        let g = ((ino - 1) / self.ipg) as usize;
        let i = ((ino - 1) % self.ipg) as u64;
        let grp = &mut self.groups[g];
        if !grp.inodes.get(i) {
            grp.inodes.set(i, true);
            grp.free_inodes -= 1;
            grp.dirs += dir as u32;
        }
    }

    fn group_of(&self, blk: u64) -> usize {
        (blk / BLOCKS_PER_GROUP) as usize
    }

    /// Free blocks in the whole file system.
    pub fn free_blocks_total(&self) -> u64 {
        self.groups.iter().map(|g| g.free_blocks).sum()
    }

    /// Allocates up to `len` contiguous blocks, preferring `goal`: the run
    /// starts at the first free block at or after `goal` (in its group,
    /// then the following groups, wrapping), and extends while blocks are
    /// free, within one group. Returns `None` when the file system is full.
    pub fn alloc(&mut self, goal: u64, len: u64) -> Option<Run> {
        let n = self.groups.len();
        let g0 = self.group_of(goal.min(self.first[n - 1] + self.len[n - 1] - 1));
        for k in 0..=n {
            let g = (g0 + k) % n;
            if self.groups[g].free_blocks == 0 {
                continue;
            }
            let from = if k == 0 { goal - self.first[g] } else { 0 };
            let end = self.len[g];
            let Some(s) = self.groups[g].blocks.next_clear(from, end) else {
                continue;
            };
            let mut e = s;
            while e < end && e - s < len && !self.groups[g].blocks.get(e) {
                e += 1;
            }
            let run = Run {
                start: self.first[g] + s,
                len: e - s,
            };
            self.mark(run.start, run.len);
            return Some(run);
        }
        None
    }

    /// Every run of free blocks, group by group in block order, a run never
    /// crossing a group (`ext4_trim_all_free` walks each group's bitmap
    /// the same way for FITRIM).
    pub fn free_runs(&self) -> Vec<Run> {
        let mut out = Vec::new();
        for (g, grp) in self.groups.iter().enumerate() {
            let end = self.len[g];
            let mut from = 0;
            while let Some(s) = grp.blocks.next_clear(from, end) {
                let mut e = s + 1;
                while e < end && !grp.blocks.get(e) {
                    e += 1;
                }
                out.push(Run {
                    start: self.first[g] + s,
                    len: e - s,
                });
                from = e;
            }
        }
        out
    }

    /// Returns `[start, start + len)` to the free pool.
    pub fn free_blocks(&mut self, start: u64, len: u64) {
        for blk in start..start + len {
            let g = self.group_of(blk);
            let i = blk - self.first[g];
            if self.groups[g].blocks.get(i) {
                self.groups[g].blocks.set(i, false);
                self.groups[g].free_blocks += 1;
            }
        }
    }

    /// Allocates an inode (`ext4_new_inode`): a directory goes to the
    /// parent's group if it has at least the average free inodes and blocks,
    /// else to the emptiest such group (`find_group_orlov`); a file goes to
    /// the parent's group if it has a free inode and a free block, else to
    /// the next group that does (`find_group_other`). Returns the inode
    /// number, or `None` when no inode is free.
    pub fn alloc_inode(&mut self, parent_group: usize, dir: bool) -> Option<u32> {
        let n = self.groups.len();
        let ok = |g: &Group| g.free_inodes > 0 && g.free_blocks > 0;
        let pick = if dir {
            let avg_i = self
                .groups
                .iter()
                .map(|g| g.free_inodes as u64)
                .sum::<u64>()
                / n as u64;
            let avg_b = self.free_blocks_total() / n as u64;
            let good = |g: &Group| g.free_inodes as u64 >= avg_i && g.free_blocks >= avg_b && ok(g);
            if good(&self.groups[parent_group]) {
                Some(parent_group)
            } else {
                (0..n)
                    .filter(|&g| good(&self.groups[g]))
                    .min_by_key(|&g| (self.groups[g].dirs, g))
            }
        } else {
            (0..n)
                .map(|k| (parent_group + k) % n)
                .find(|&g| ok(&self.groups[g]))
        };
        let g = pick.or_else(|| (0..n).find(|&g| self.groups[g].free_inodes > 0))?;
        let grp = &self.groups[g];
        let start = if g == 0 { (FIRST_INO - 1) as u64 } else { 0 };
        let i = grp.inodes.next_clear(start, self.ipg as u64)?;
        let ino = g as u32 * self.ipg + i as u32 + 1;
        self.mark_inode(ino, dir);
        Some(ino)
    }

    /// Counts inode `ino` (allocated as a file) as a directory.
    pub fn note_dir(&mut self, ino: u32) {
        self.groups[((ino - 1) / self.ipg) as usize].dirs += 1;
    }

    /// Frees inode `ino`.
    pub fn free_inode(&mut self, ino: u32, dir: bool) {
        let g = ((ino - 1) / self.ipg) as usize;
        let i = ((ino - 1) % self.ipg) as u64;
        let grp = &mut self.groups[g];
        if grp.inodes.get(i) {
            grp.inodes.set(i, false);
            grp.free_inodes += 1;
            grp.dirs -= dir as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs() -> (Layout, Bitmaps) {
        let l = Layout::new(65536, 16384, 1024).unwrap();
        let b = Bitmaps::mkfs(&l);
        (l, b)
    }

    #[test]
    fn metadata_and_journal_are_in_use_at_mkfs() {
        let (l, mut b) = fs();
        let data0 = l.groups[0].inode_table + l.inode_table_blocks;
        // the first free block of group 0 follows its inode table
        assert_eq!(
            b.alloc(0, 1),
            Some(Run {
                start: data0,
                len: 1
            })
        );
        // a goal inside the journal skips past it
        let r = b.alloc(l.journal_first, 4).unwrap();
        assert_eq!(r.start, l.journal_first + l.journal_blocks);
    }

    #[test]
    fn allocation_is_contiguous_from_the_goal_and_stops_at_used_blocks() {
        let (l, mut b) = fs();
        // group 0's data area (group 1 holds the journal)
        let g1 = l.groups[0].inode_table + l.inode_table_blocks;
        let a = b.alloc(g1 + 100, 8).unwrap();
        assert_eq!(
            a,
            Run {
                start: g1 + 100,
                len: 8
            }
        );
        // asking for more from just before it: stops at the used run
        let c = b.alloc(g1 + 96, 16).unwrap();
        assert_eq!(
            c,
            Run {
                start: g1 + 96,
                len: 4
            }
        );
        b.free_blocks(a.start, a.len);
        assert_eq!(b.alloc(g1 + 100, 2).unwrap().start, g1 + 100);
    }

    #[test]
    fn free_runs_cover_exactly_the_free_blocks_group_by_group() {
        let (l, mut b) = fs();
        let a = b
            .alloc(l.groups[0].inode_table + l.inode_table_blocks + 10, 5)
            .unwrap();
        let runs = b.free_runs();
        assert_eq!(
            runs.iter().map(|r| r.len).sum::<u64>(),
            b.free_blocks_total()
        );
        for w in runs.windows(2) {
            assert!(
                w[0].start + w[0].len < w[1].start
                    || b.group_of(w[0].start) != b.group_of(w[1].start)
            );
        }
        for r in &runs {
            // inside one group, never over metadata, the journal or a file
            assert_eq!(b.group_of(r.start), b.group_of(r.start + r.len - 1));
            assert!(r.start + r.len <= a.start || r.start >= a.start + a.len);
            assert!(
                r.start + r.len <= l.journal_first || r.start >= l.journal_first + l.journal_blocks
            );
            let (ms, me) = l.group_metadata(b.group_of(r.start));
            assert!(r.start >= me || r.start + r.len <= ms);
        }
        // the allocated run splits group 0's data area in two
        let g0: Vec<_> = runs.iter().filter(|r| b.group_of(r.start) == 0).collect();
        assert_eq!(g0.len(), 2);
        assert_eq!(g0[0].start + g0[0].len, a.start);
        assert_eq!(g0[1].start, a.start + a.len);
    }

    #[test]
    fn allocation_fails_when_the_file_system_is_full() {
        let (_, mut b) = fs();
        let mut got = 0;
        while let Some(r) = b.alloc(0, 4096) {
            got += r.len;
        }
        assert!(got > 0);
        assert_eq!(b.free_blocks_total(), 0);
        assert_eq!(b.alloc(0, 1), None);
    }

    #[test]
    fn files_go_to_the_parents_group_and_inodes_start_after_lost_found() {
        let (_, mut b) = fs();
        assert_eq!(b.alloc_inode(0, false), Some(11));
        assert_eq!(b.alloc_inode(0, false), Some(12));
        b.free_inode(11, false);
        assert_eq!(b.alloc_inode(0, false), Some(11));
        let ino = b.alloc_inode(1, false).unwrap();
        assert_eq!(ino, 8192 + 1);
    }
}
