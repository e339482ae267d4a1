//! An ext4 file system with Linux 3.x behaviour on a partition of the
//! device: the on-disk layout ([`layout`]), bitmaps and goal allocation
//! ([`alloc`]), inodes with extent maps ([`inode`]), linear directories
//! ([`dir`]), and the metadata updates each operation makes — dirtying the
//! 4 KiB metadata blocks (inode-table block, bitmaps, group descriptor,
//! directory and extent blocks) in the block-device mapping of the page
//! cache, through the JBD2 running transaction when the journal is on, or
//! in place when it is off.
//!
//! The host sees it through [`super::FileSystem`] (`vfs.rs`): the host
//! decides when data is written; the journal thread (`kjournald.rs`)
//! commits and checkpoints through the [`super::Kernel`] the host lends.

pub mod alloc;
pub mod dir;
pub mod inode;
mod kjournald;
pub mod layout;
mod recovery;
pub mod report;
mod vfs;

use crate::host::fs::mkfs_error::MkfsError;
use std::collections::BTreeMap;

use self::alloc::Bitmaps;
use self::dir::Dir;
use self::inode::{Extent, Inode, Kind};
pub use self::kjournald::JBD2_PID;
use self::layout::{Layout, BLOCKS_PER_GROUP, BLOCK_BYTES, FIRST_INO, ROOT_INO};
use self::report::Ext4Stats;
use super::config::{AtimeMode, DataMode, FsConfig, JournalSwitch};
use super::jbd2::{Buf, Journal};
use super::{Errno, PageRun};
use crate::host::page_cache::{FileId, PageCache};
use crate::types::{Ns, NS_PER_S, SECTORS_PER_PAGE};

/// The largest file ext4 holds with 4 KiB blocks and extents
/// (`sb->s_maxbytes` = `ext4_max_size(12, huge_file)`: 2^32 − 1 logical
/// blocks, fs/ext4/super.c), bytes. A write or truncate beyond it fails
/// with EFBIG.
pub const S_MAXBYTES: u64 = ((1u64 << 32) - 1) * layout::BLOCK_BYTES;

/// Blocks a delayed-allocation reservation leaves free for the metadata
/// the allocation may need (extent blocks, directory blocks): ext4
/// reserves metadata blocks per reservation (`ext4_da_reserve_space`);
/// mmcsim keeps this fixed margin instead, 4 KiB blocks.
pub const RESERVE_MARGIN_BLOCKS: u64 = 64;

/// The mounted file system.
pub struct Ext4 {
    cfg: FsConfig,
    layout: Layout,
    bitmaps: Bitmaps,
    inodes: BTreeMap<u32, Inode>,
    dirs: BTreeMap<u32, Dir>,
    journal: Option<Journal>,
    /// Block-device mapping: metadata blocks, page = block number.
    bdev: FileId,
    /// First sector of the partition.
    part_sector: u64,
    /// Mapping → inode number (0: the block device).
    ino_of: Vec<u32>,
    /// Timestamp granularity (one kernel tick), ns.
    tick: Ns,
    /// Metadata changes go nowhere while the file system is being made.
    mounting: bool,
    /// Counters.
    pub stats: Ext4Stats,
    /// Blocks discarded by the FITRIM before measurement (`[fs] fstrim`).
    pub fstrim_blocks: u64,
    /// Blocks reserved by delayed-allocation writes and not allocated yet
    /// (`s_dirtyclusters_counter`), 4 KiB blocks.
    da_reserved: u64,
    /// The journal thread's state (commit and checkpoint in progress,
    /// the tasks waiting for a commit).
    kj: kjournald::Kjournald,
    /// The journal's record for recovery after a power cut (`None`: not
    /// recording).
    recovery: Option<recovery::Jbd2Record>,
}

/// 4 KiB blocks per MiB.
const BLOCKS_PER_MIB: u64 = (1 << 20) / BLOCK_BYTES;

/// Relatime's age limit: atime older than this is updated anyway, ns.
const RELATIME_AGE: Ns = 24 * 3600 * NS_PER_S;
/// Inode timestamps count from mkfs, which happened this long before the
/// simulated run starts (files made before the run are two days old).
const RUN_EPOCH: Ns = 2 * 24 * 3600 * NS_PER_S;

impl Ext4 {
    /// Makes and mounts a file system on `blocks` 4 KiB blocks from sector
    /// `part_sector`, with the options of `cfg`; `tick_ns` is the kernel
    /// tick (timestamps are kept at that resolution). The block-device
    /// mapping and every inode's data get page-cache mappings in `cache`.
    pub fn mkfs(
        cfg: &FsConfig,
        part_sector: u64,
        blocks: u64,
        tick_ns: Ns,
        cache: &mut PageCache,
    ) -> Result<Ext4, MkfsError> {
        let jblocks = Self::journal_blocks_for(cfg, blocks);
        if blocks < Self::min_blocks(cfg) {
            let mib = Self::min_blocks(cfg).div_ceil(BLOCKS_PER_MIB);
            return Err(MkfsError::Ext4TooSmall {
                blocks,
                min_mib: mib,
            });
        }
        let layout = Layout::new(blocks, cfg.bytes_per_inode as u64, jblocks)?;
        let bitmaps = Bitmaps::mkfs(&layout);
        let bdev = cache.add_file(blocks);
        let journal = (jblocks > 0).then(|| Journal::new(layout.journal_first, jblocks));
        let mut fs = Ext4 {
            cfg: cfg.clone(),
            layout,
            bitmaps,
            inodes: BTreeMap::new(),
            dirs: BTreeMap::new(),
            journal,
            bdev,
            part_sector,
            ino_of: Vec::new(),
            tick: tick_ns.max(1),
            mounting: true,
            stats: Ext4Stats::default(),
            fstrim_blocks: 0,
            da_reserved: 0,
            kj: Default::default(),
            recovery: None,
        };
        fs.note_mapping(bdev, 0);
        // Root directory (inode 2) and lost+found (inode 11, 4 blocks as
        // mke2fs makes it).
        let root_map = cache.add_file(0);
        fs.note_mapping(root_map, ROOT_INO);
        fs.inodes.insert(
            ROOT_INO,
            Inode::new(ROOT_INO, Kind::Dir, root_map, ROOT_INO, 0),
        );
        fs.inodes.get_mut(&ROOT_INO).expect("root").nlink = 2;
        fs.dirs.insert(ROOT_INO, Dir::new());
        fs.alloc_blocks(ROOT_INO, 0, 1, 0, cache, 0)
            .map_err(|_| MkfsError::NoRoom {
                what: "the root directory",
            })?;
        fs.set_size(ROOT_INO, BLOCK_BYTES);
        let lf = fs
            .create(ROOT_INO, "lost+found", Kind::Dir, 0, cache, 0)
            .map_err(|_| MkfsError::NoRoom { what: "lost+found" })?;
        fs.alloc_blocks(lf, 1, 3, 0, cache, 0)
            .map_err(|_| MkfsError::NoRoom { what: "lost+found" })?;
        fs.set_size(lf, 4 * BLOCK_BYTES);
        Ok(fs)
    }

    /// Journal length of a file system of `blocks` blocks with `cfg`
    /// (0 without a journal), blocks.
    fn journal_blocks_for(cfg: &FsConfig, blocks: u64) -> u64 {
        match cfg.journal {
            JournalSwitch::Off => 0,
            JournalSwitch::On => cfg
                .journal_blocks
                .map_or_else(|| layout::default_journal_blocks(blocks), u64::from),
        }
    }

    /// The fewest 4 KiB blocks [`Ext4::mkfs`] can make a file system of
    /// with `cfg`: one block group holding its superblock, descriptors,
    /// bitmaps and inode table, the journal, and the five blocks of the
    /// root directory (1) and lost+found (4).
    pub fn min_blocks(cfg: &FsConfig) -> u64 {
        // The layout grows with the size (reserved GDT blocks, the
        // default journal), so search upwards from the fixed part.
        let mut b = 1;
        loop {
            let j = Self::journal_blocks_for(cfg, b);
            if let Ok(l) = Layout::new(b, cfg.bytes_per_inode as u64, j) {
                let used = l.group_metadata(0).1 + j;
                if l.ngroups() == 1 && used + 5 <= b {
                    return b;
                }
                if l.ngroups() > 1 {
                    return b;
                }
            }
            b += 1;
        }
    }

    /// Ends mount-time set-up: from now on metadata changes are dirtied
    /// (and journaled), and the statistics start.
    pub fn finish_mount(&mut self) {
        self.mounting = false;
        for i in self.inodes.values_mut() {
            i.new = false;
        }
        self.stats = Ext4Stats::default();
    }

    fn note_mapping(&mut self, m: FileId, ino: u32) {
        let i = m as usize;
        if self.ino_of.len() <= i {
            self.ino_of.resize(i + 1, u32::MAX);
        }
        self.ino_of[i] = ino;
    }

    /// The options it was mounted with.
    pub fn config(&self) -> &FsConfig {
        &self.cfg
    }

    /// The geometry.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The journal, when there is one.
    pub fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// The journal, mutably.
    pub fn journal_mut(&mut self) -> Option<&mut Journal> {
        self.journal.as_mut()
    }

    /// The block-device mapping (metadata buffers).
    pub fn bdev(&self) -> FileId {
        self.bdev
    }

    /// First sector of file-system block `blk`.
    pub fn sector_of(&self, blk: u64) -> u64 {
        self.part_sector + blk * SECTORS_PER_PAGE
    }

    /// The inode whose data mapping is `m` (`None` for the block device).
    pub fn ino_of(&self, m: FileId) -> Option<u32> {
        match self.ino_of.get(m as usize) {
            Some(&0) | None => None,
            Some(&u32::MAX) => None,
            Some(&i) => Some(i),
        }
    }

    /// Whether page `page` of mapping `m` still lives at block `blk` (its
    /// file was not truncated past it and written again since).
    pub fn page_home_is(&self, m: FileId, page: u64, blk: u64) -> bool {
        self.ino_of(m)
            .and_then(|ino| self.inode(ino).map(page))
            .is_some_and(|(b, _)| b == blk)
    }

    /// Whether mapping `m` belongs to this file system.
    pub fn owns(&self, m: FileId) -> bool {
        self.ino_of.get(m as usize).is_some_and(|&i| i != u32::MAX)
    }

    /// Inode `ino`.
    pub fn inode(&self, ino: u32) -> &Inode {
        &self.inodes[&ino]
    }

    /// Inode `ino`, mutably.
    pub fn inode_mut(&mut self, ino: u32) -> &mut Inode {
        self.inodes.get_mut(&ino).expect("live inode")
    }

    /// The inode of entry `name` in directory `dir` (`ENOTDIR` when `dir`
    /// is no directory, `ENOENT` when it has no such entry).
    fn entry(&self, dir: u32, name: &str) -> Result<u32, Errno> {
        self.dirs
            .get(&dir)
            .ok_or(Errno::NotDir)?
            .lookup(name)
            .ok_or(Errno::NoEnt)
    }

    /// Looks up an absolute path; returns the inode.
    pub fn lookup(&self, path: &[&str]) -> Result<u32, Errno> {
        let mut ino = ROOT_INO;
        for name in path {
            ino = self.entry(ino, name)?;
        }
        Ok(ino)
    }

    /// The directory inode holding the last component of `path` and that
    /// name.
    pub fn parent<'p>(&self, path: &[&'p str]) -> Result<(u32, &'p str), Errno> {
        let (name, dirs) = path.split_last().ok_or(Errno::Inval)?;
        let dir = self.lookup(dirs)?;
        if !self.dirs.contains_key(&dir) {
            return Err(Errno::NotDir);
        }
        Ok((dir, name))
    }

    // ---- metadata buffers --------------------------------------------

    /// Dirties metadata block `blk` at `now`: into the running transaction
    /// (journal on; a buffer waiting for checkpoint is taken back into it)
    /// or dirty in place (journal off). Returns the transaction id (0
    /// without a journal).
    fn dirty_meta(&mut self, blk: u64, cache: &mut PageCache, now: Ns) -> u64 {
        cache.install_uptodate(self.bdev, blk);
        if self.mounting {
            return 0;
        }
        match self.journal.as_mut() {
            Some(j) => {
                if j.on_checkpoint(&Buf::Meta(blk)) {
                    cache.cancel_dirty(self.bdev, blk);
                }
                j.add(Buf::Meta(blk), now).0
            }
            None => {
                cache.mark_dirty(self.bdev, blk, 1, now);
                0
            }
        }
    }

    /// Marks inode `ino` dirty (`ext4_mark_inode_dirty`): its inode-table
    /// block joins the transaction; `datasync` changes (allocation, size)
    /// also move `i_datasync_tid`.
    pub fn dirty_inode(&mut self, ino: u32, datasync: bool, cache: &mut PageCache, now: Ns) {
        let blk = self.layout.inode_block(ino);
        let tid = self.dirty_meta(blk, cache, now);
        let i = self.inode_mut(ino);
        i.sync_tid = tid;
        if datasync {
            i.datasync_tid = tid;
        }
    }

    fn dirty_group(&mut self, g: usize, inode_bitmap: bool, cache: &mut PageCache, now: Ns) {
        let gl = self.layout.groups[g];
        let bm = if inode_bitmap {
            gl.inode_bitmap
        } else {
            gl.block_bitmap
        };
        self.dirty_meta(bm, cache, now);
        let gd = self.layout.gdt_block_of(g);
        self.dirty_meta(gd, cache, now);
    }

    /// A new metadata block (directory or extent block) allocated near
    /// `goal`: created uptodate in the cache (no read) and dirtied.
    fn new_meta_block(&mut self, goal: u64, cache: &mut PageCache, now: Ns) -> Result<u64, Errno> {
        let r = self.bitmaps.alloc(goal, 1).ok_or(Errno::NoSpc)?;
        self.stats.blocks_allocated += 1;
        self.stats.allocations += 1;
        self.dirty_group(self.layout.group_of(r.start), false, cache, now);
        self.dirty_meta(r.start, cache, now);
        Ok(r.start)
    }

    /// The goal for a first block of inode `ino`
    /// (`ext4_inode_to_goal_block`): the start of its group, plus the
    /// per-pid colour without delayed allocation.
    fn inode_goal(&self, ino: u32, pid: u32) -> u64 {
        let g = self.layout.inode_group(ino);
        let gl = &self.layout.groups[g];
        if self.cfg.delayed_allocation() {
            return gl.first;
        }
        gl.first + (pid as u64 % 16) * (gl.blocks / 16)
    }

    // ---- data blocks ---------------------------------------------------

    /// Allocates blocks for the holes of logical blocks `[lblk, lblk + n)`
    /// of `ino` (`ext4_map_blocks` with create), contiguous after the
    /// previous extent where free; dirties the bitmaps, group descriptors,
    /// extent blocks and the inode, orders the data (data=ordered) and
    /// records the allocation in `i_datasync_tid`. `pid` colours the goal
    /// of a first block without delalloc. Returns blocks allocated.
    pub fn alloc_blocks(
        &mut self,
        ino: u32,
        lblk: u64,
        n: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<u64, Errno> {
        let mut l = lblk;
        let end = lblk + n;
        let mut got = 0;
        let mut touched_leaf: Vec<usize> = Vec::new();
        while l < end {
            let inode = self.inode(ino);
            if let Some((_, run)) = inode.map(l) {
                l += run.min(end - l);
                continue;
            }
            let hole = inode.hole_len(l, end - l);
            let goal = inode
                .goal_after(l)
                .unwrap_or_else(|| self.inode_goal(ino, pid));
            let r = self.bitmaps.alloc(goal, hole).ok_or(Errno::NoSpc)?;
            self.stats.allocations += 1;
            self.stats.blocks_allocated += r.len;
            self.dirty_group(self.layout.group_of(r.start), false, cache, now);
            let idx = self.inode_mut(ino).insert_extent(Extent {
                lblk: l,
                pblk: r.start,
                len: r.len,
            });
            touched_leaf.push(idx);
            l += r.len;
            got += r.len;
        }
        if got == 0 {
            return Ok(0);
        }
        self.fix_extent_tree(ino, &touched_leaf, cache, now)?;
        if !self.mounting && self.cfg.data == DataMode::Ordered {
            let m = self.inode(ino).mapping;
            if let Some(j) = self.journal.as_mut() {
                j.file_inode(m, now);
            }
        }
        self.dirty_inode(ino, true, cache, now);
        Ok(got)
    }

    /// Grows or shrinks the extent tree to the leaves the extent count
    /// needs and dirties the leaves holding extents `touched`.
    fn fix_extent_tree(
        &mut self,
        ino: u32,
        touched: &[usize],
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let need = self.inode(ino).leaves_needed();
        while self.inode(ino).leaves.len() < need {
            let goal = self
                .inode(ino)
                .extents
                .last()
                .map_or_else(|| self.inode_goal(ino, 0), |e| e.pblk + e.len);
            let b = self.new_meta_block(goal, cache, now)?;
            self.inode_mut(ino).leaves.push(b);
        }
        while self.inode(ino).leaves.len() > need {
            let b = self.inode_mut(ino).leaves.pop().expect("a leaf");
            self.release(b, 1, true, cache, now);
        }
        let leaves = self.inode(ino).leaves.clone();
        if !leaves.is_empty() {
            let mut dirtied: Vec<u64> = touched
                .iter()
                .map(|&i| leaves[(i / inode::EXTENTS_PER_LEAF).min(leaves.len() - 1)])
                .collect();
            dirtied.dedup();
            for b in dirtied {
                self.dirty_meta(b, cache, now);
            }
        }
        Ok(())
    }

    /// Frees `[start, start + len)`: bitmaps and group descriptor dirtied;
    /// reusable after the freeing transaction commits (metadata, or data
    /// unless data=writeback), else at once.
    fn release(&mut self, start: u64, len: u64, metadata: bool, cache: &mut PageCache, now: Ns) {
        self.dirty_group(self.layout.group_of(start), false, cache, now);
        self.stats.blocks_freed += len;
        let defer = metadata || self.cfg.data != DataMode::Writeback;
        match self.journal.as_mut() {
            Some(j) if defer && !self.mounting => {
                j.defer_free(start, len, now);
            }
            _ => self.bitmaps.free_blocks(start, len),
        }
    }

    /// Blocks freed by a committed transaction become allocatable.
    pub fn release_committed(&mut self, freed: &[(u64, u64)]) {
        for &(s, l) in freed {
            self.bitmaps.free_blocks(s, l);
        }
    }

    /// The runs of pages `[first, first + pages)` of mapping `m`, mapped to
    /// sectors, holes as `None`. The block-device mapping maps linearly.
    pub fn map_pages(&self, m: FileId, first: u64, pages: u64, out: &mut Vec<PageRun>) {
        out.clear();
        let Some(ino) = self.ino_of(m) else {
            out.push(PageRun {
                page: first,
                pages,
                sector: Some(self.sector_of(first)),
            });
            return;
        };
        let inode = self.inode(ino);
        let mut p = first;
        let end = first + pages;
        while p < end {
            match inode.map(p) {
                Some((pblk, run)) => {
                    let n = run.min(end - p);
                    out.push(PageRun {
                        page: p,
                        pages: n,
                        sector: Some(self.sector_of(pblk)),
                    });
                    p += n;
                }
                None => {
                    let n = inode.hole_len(p, end - p).max(1);
                    out.push(PageRun {
                        page: p,
                        pages: n,
                        sector: None,
                    });
                    p += n;
                }
            }
        }
    }

    /// Prepares pages `[first, first + pages)` of mapping `m` for
    /// writeback (`ext4_da_writepages` → `mpage_da_map_and_submit`):
    /// delayed pages get blocks now, and the on-disk size grows to cover
    /// them. Returns the runs to write.
    #[allow(clippy::too_many_arguments)]
    pub fn writepages(
        &mut self,
        m: FileId,
        first: u64,
        pages: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
        out: &mut Vec<PageRun>,
    ) {
        if let Some(ino) = self.ino_of(m) {
            let got = self
                .alloc_blocks(ino, first, pages, pid, cache, now)
                .expect("file system full at writeback: reserve space at write() (simulator bug)");
            // The delayed pages' reservations become allocations.
            self.da_reserved = self.da_reserved.saturating_sub(got);
            let i = self.inode(ino);
            let covered = ((first + pages) * BLOCK_BYTES).min(i.size);
            if covered > i.disksize {
                self.inode_mut(ino).disksize = covered;
                self.dirty_inode(ino, true, cache, now);
            }
        }
        self.map_pages(m, first, pages, out);
    }

    /// Blocks a write may still claim: free blocks less the
    /// delayed-allocation reservations and [`RESERVE_MARGIN_BLOCKS`]
    /// (`ext4_has_free_clusters`).
    fn claimable_blocks(&self) -> u64 {
        self.bitmaps
            .free_blocks_total()
            .saturating_sub(self.da_reserved + RESERVE_MARGIN_BLOCKS)
    }

    /// Whether page `p` of `ino` needs a new block (a reservation with
    /// delayed allocation, an allocation without): it is a hole, and not
    /// a page a delayed write already reserved (dirty in the cache).
    fn needs_block(&self, ino: u32, p: u64, buffered: bool, cache: &PageCache) -> bool {
        let i = self.inode(ino);
        i.map(p).is_none()
            && !(buffered
                && self.cfg.delayed_allocation()
                && cache.is_dirty_or_writeback(i.mapping, p))
    }

    /// The bytes of a write of `len` bytes at `pos` to `ino` that the file
    /// system has room for: the write stops at the first page whose block
    /// cannot be reserved, as `generic_perform_write` stops when
    /// `ext4_da_write_begin` fails with ENOSPC (0: the write fails with
    /// ENOSPC). `buffered` = through the page cache.
    pub fn writable_bytes(
        &self,
        ino: u32,
        pos: u64,
        len: u64,
        buffered: bool,
        cache: &PageCache,
    ) -> u64 {
        let mut room = self.claimable_blocks();
        let first = pos / BLOCK_BYTES;
        let end = (pos + len).div_ceil(BLOCK_BYTES);
        let mut p = first;
        while p < end {
            if let Some((_, run)) = self.inode(ino).map(p) {
                p += run.min(end - p);
                continue;
            }
            if self.needs_block(ino, p, buffered, cache) {
                if room == 0 {
                    return (p * BLOCK_BYTES).saturating_sub(pos).min(len);
                }
                room -= 1;
            }
            p += 1;
        }
        len
    }

    /// A buffered write of `[pos, pos + len)` bytes to `ino` at `now` after
    /// its pages are in the cache (`ext4_da_write_end` /
    /// `ext4_ordered_write_end`): i_size grows; without delalloc blocks are
    /// allocated now; mtime/ctime change (`file_update_time`) dirties the
    /// inode when the tick changed. With data=journal the pages are logged
    /// in the running transaction instead of being dirtied for writeback;
    /// returns whether the caller must mark them dirty.
    pub fn write_end(
        &mut self,
        ino: u32,
        pos: u64,
        len: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<bool, Errno> {
        let first = pos / BLOCK_BYTES;
        let end = (pos + len).div_ceil(BLOCK_BYTES);
        if self.cfg.delayed_allocation() {
            // ext4_da_reserve_space for each page that has no block and
            // no reservation yet.
            let new = (first..end)
                .filter(|&p| self.needs_block(ino, p, true, cache))
                .count() as u64;
            if new > self.claimable_blocks() {
                return Err(Errno::NoSpc);
            }
            self.da_reserved += new;
        }
        let mut changed = self.touch_mtime(ino, now);
        let grow = pos + len > self.inode(ino).size;
        if grow {
            self.inode_mut(ino).size = pos + len;
        }
        if !self.cfg.delayed_allocation() {
            self.alloc_blocks(ino, first, end - first, pid, cache, now)?;
            let i = self.inode(ino);
            if i.size > i.disksize {
                self.inode_mut(ino).disksize = i.size;
                self.dirty_inode(ino, true, cache, now);
                changed = false;
            }
        } else if grow {
            // i_size changed in memory; the inode is dirtied (mtime path)
            // but i_disksize waits for writeback.
            changed = true;
        }
        if changed {
            self.dirty_inode(ino, false, cache, now);
        }
        if self.cfg.journals_data() && !self.mounting {
            let m = self.inode(ino).mapping;
            for p in first..end {
                let (blk, _) = self.inode(ino).map(p).expect("allocated at write");
                cache.install_uptodate(m, p);
                let j = self.journal.as_mut().expect("data=journal has a journal");
                let buf = Buf::Data {
                    file: m,
                    page: p,
                    blk,
                };
                if j.on_checkpoint(&buf) {
                    cache.cancel_dirty(m, p);
                }
                j.add(buf, now);
                self.stats.data_blocks_journaled += 1;
            }
            return Ok(false);
        }
        Ok(true)
    }

    /// Allocates the holes of a direct write of `[pos, pos + len)` and
    /// grows the size (`ext4_direct_IO` with `ext4_get_block_write`).
    pub fn direct_write(
        &mut self,
        ino: u32,
        pos: u64,
        len: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let first = pos / BLOCK_BYTES;
        let end = (pos + len).div_ceil(BLOCK_BYTES);
        let mut changed = self.touch_mtime(ino, now);
        self.alloc_blocks(ino, first, end - first, pid, cache, now)?;
        if pos + len > self.inode(ino).size {
            let i = self.inode_mut(ino);
            i.size = pos + len;
            i.disksize = pos + len;
            self.dirty_inode(ino, true, cache, now);
            changed = false;
        }
        if changed {
            self.dirty_inode(ino, false, cache, now);
        }
        Ok(())
    }

    /// The inode timestamp of simulated time `now`: whole kernel ticks
    /// since mkfs (0 while mounting).
    fn tick_of(&self, now: Ns) -> Ns {
        if self.mounting {
            return 0;
        }
        (now + RUN_EPOCH) / self.tick * self.tick
    }

    /// `file_update_time`: mtime and ctime to the current tick; true when
    /// they changed (the inode must be dirtied).
    fn touch_mtime(&mut self, ino: u32, now: Ns) -> bool {
        let t = self.tick_of(now);
        let i = self.inode_mut(ino);
        if i.mtime == t && i.ctime == t {
            return false;
        }
        i.mtime = t;
        i.ctime = t;
        true
    }

    /// `touch_atime` after a read of `ino` at `now`, by the atime policy;
    /// dirties the inode when atime changes. Returns whether it did.
    pub fn touch_atime(&mut self, ino: u32, cache: &mut PageCache, now: Ns) -> bool {
        let t = self.tick_of(now);
        let i = self.inode(ino);
        let update = match self.cfg.atime {
            AtimeMode::Noatime => false,
            AtimeMode::Strictatime => i.atime != t,
            AtimeMode::Relatime => {
                i.atime != t
                    && (i.mtime >= i.atime || i.ctime >= i.atime || t - i.atime >= RELATIME_AGE)
            }
        };
        if update {
            self.inode_mut(ino).atime = t;
            self.stats.atime_updates += 1;
            self.dirty_inode(ino, false, cache, now);
        }
        update
    }

    // ---- namespace -------------------------------------------------------

    /// Creates `name` in directory `dir` (`ext4_create` / `ext4_mkdir`):
    /// allocates an inode (inode bitmap, group descriptor, inode-table
    /// block), adds the directory entry (a new directory block when the
    /// last is full) and updates the parent. A directory also gets its
    /// first block. Returns the new inode.
    pub fn create(
        &mut self,
        dir: u32,
        name: &str,
        kind: Kind,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<u32, Errno> {
        if self.dirs[&dir].lookup(name).is_some() {
            return Err(Errno::Exist);
        }
        let pg = self.layout.inode_group(dir);
        // mkfs and the preparation phase place everything next to its
        // parent (lost+found is inode 11); at run time directories are
        // spread by Orlov.
        let ino = self
            .bitmaps
            .alloc_inode(pg, kind == Kind::Dir && !self.mounting)
            .ok_or(Errno::NoSpc)?;
        if kind == Kind::Dir && self.mounting {
            self.bitmaps.note_dir(ino);
        }
        self.stats.inodes_allocated += 1;
        self.dirty_group(self.layout.inode_group(ino), true, cache, now);
        let m = cache.add_file(0);
        self.note_mapping(m, ino);
        let t = self.tick_of(now);
        self.inodes.insert(ino, Inode::new(ino, kind, m, dir, t));
        self.dirty_inode(ino, true, cache, now);
        self.add_entry(dir, name, ino, pid, cache, now)?;
        if kind == Kind::Dir {
            self.dirs.insert(ino, Dir::new());
            self.inode_mut(ino).nlink = 2;
            self.alloc_blocks(ino, 0, 1, pid, cache, now)?;
            self.set_size(ino, BLOCK_BYTES);
            let b = self.inode(ino).extents[0].pblk;
            self.dirty_meta(b, cache, now);
            self.inode_mut(dir).nlink += 1;
        }
        Ok(ino)
    }

    fn set_size(&mut self, ino: u32, size: u64) {
        let i = self.inode_mut(ino);
        i.size = size;
        i.disksize = size;
    }

    /// Adds a directory entry, appending a directory block if needed, and
    /// dirties the block holding it and the directory's inode.
    fn add_entry(
        &mut self,
        dir: u32,
        name: &str,
        ino: u32,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let slot = self.dirs[&dir].slot_for(name);
        if slot == self.dirs[&dir].blocks() {
            self.alloc_blocks(dir, slot as u64, 1, pid, cache, now)?;
            self.set_size(dir, (slot as u64 + 1) * BLOCK_BYTES);
        }
        let b = self.dirs.get_mut(&dir).expect("directory").add(name, ino);
        let (blk, _) = self
            .inode(dir)
            .map(b as u64)
            .expect("directory block mapped");
        self.dirty_meta(blk, cache, now);
        self.touch_mtime(dir, now);
        self.dirty_inode(dir, false, cache, now);
        Ok(())
    }

    /// Removes a directory entry, dirtying its block and the directory.
    fn remove_entry(
        &mut self,
        dir: u32,
        name: &str,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<u32, Errno> {
        let (ino, b) = self
            .dirs
            .get_mut(&dir)
            .ok_or(Errno::NotDir)?
            .remove(name)
            .ok_or(Errno::NoEnt)?;
        let (blk, _) = self
            .inode(dir)
            .map(b as u64)
            .expect("directory block mapped");
        self.dirty_meta(blk, cache, now);
        self.touch_mtime(dir, now);
        self.dirty_inode(dir, false, cache, now);
        Ok(ino)
    }

    /// The orphan list lives in the superblock (`s_last_orphan`): adding
    /// or removing an inode dirties block 0.
    fn orphan(&mut self, cache: &mut PageCache, now: Ns) {
        self.dirty_meta(0, cache, now);
    }

    /// `unlink(2)` of `name` in `dir`: the entry goes, the link count
    /// drops; with no link and no open file the inode and its blocks are
    /// freed now, else at the last close.
    pub fn unlink(
        &mut self,
        dir: u32,
        name: &str,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let ino = self.entry(dir, name)?;
        if self.dirs.get(&ino).is_some_and(|d| !d.is_empty()) {
            return Err(Errno::NotEmpty);
        }
        self.remove_entry(dir, name, cache, now)?;
        let kind = self.inode(ino).kind;
        if kind == Kind::Dir {
            self.inode_mut(dir).nlink -= 1;
        }
        let i = self.inode_mut(ino);
        i.nlink = i
            .nlink
            .saturating_sub(if kind == Kind::Dir { 2 } else { 1 });
        self.touch_mtime(ino, now);
        self.dirty_inode(ino, false, cache, now);
        if self.inode(ino).nlink == 0 {
            self.orphan(cache, now);
            if self.inode(ino).open == 0 {
                self.evict(ino, cache, now);
            }
        }
        Ok(())
    }

    /// Frees an unlinked inode with no opener (`ext4_evict_inode`): its
    /// pages leave the cache, its blocks and inode are freed, it leaves
    /// the orphan list.
    pub fn evict(&mut self, ino: u32, cache: &mut PageCache, now: Ns) {
        self.truncate(ino, 0, cache, now);
        let i = self.inodes.remove(&ino).expect("live inode");
        if i.kind == Kind::Dir {
            self.dirs.remove(&ino);
        }
        self.bitmaps.free_inode(ino, i.kind == Kind::Dir);
        self.stats.inodes_freed += 1;
        self.dirty_group(self.layout.inode_group(ino), true, cache, now);
        let blk = self.layout.inode_block(ino);
        self.dirty_meta(blk, cache, now);
        self.orphan(cache, now);
        self.note_mapping(i.mapping, u32::MAX);
    }

    /// `ftruncate` / `O_TRUNC` to `size` bytes: a shrink drops cached
    /// pages past it and frees their blocks (through the orphan list);
    /// the size change is a datasync change.
    pub fn truncate(&mut self, ino: u32, size: u64, cache: &mut PageCache, now: Ns) {
        let old = self.inode(ino).size;
        if size < old {
            let keep = size.div_ceil(BLOCK_BYTES);
            let m = self.inode(ino).mapping;
            // Dirty delayed pages dropped give their reservation back
            // (ext4_da_page_release_reservation).
            let dropped = (keep..cache.file_pages(m))
                .filter(|&p| cache.is_dirty_or_writeback(m, p) && self.inode(ino).map(p).is_none())
                .count() as u64;
            self.da_reserved = self.da_reserved.saturating_sub(dropped);
            cache.truncate(m, keep);
            if self.cfg.journals_data() {
                if let Some(j) = self.journal.as_mut() {
                    j.forget_truncated(m, keep);
                }
            }
            let freed = self.inode_mut(ino).truncate_extents(keep);
            if !freed.is_empty() {
                self.orphan(cache, now);
                for (s, l) in freed {
                    self.release(s, l, false, cache, now);
                }
                self.fix_extent_tree(ino, &[], cache, now)
                    .expect("shrinking never allocates");
                self.orphan(cache, now);
            }
        }
        self.set_size(ino, size);
        self.touch_mtime(ino, now);
        self.dirty_inode(ino, true, cache, now);
    }

    /// `rename(2)`: moves the entry, replacing (unlinking) an existing
    /// target; both directories and the inode's ctime are dirtied.
    #[allow(clippy::too_many_arguments)]
    pub fn rename(
        &mut self,
        from_dir: u32,
        from: &str,
        to_dir: u32,
        to: &str,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let ino = self.entry(from_dir, from)?;
        if !self.dirs.contains_key(&to_dir) {
            return Err(Errno::NotDir);
        }
        if let Some(old) = self.dirs[&to_dir].lookup(to) {
            if old == ino {
                return Ok(());
            }
            self.unlink(to_dir, to, cache, now)?;
        }
        self.remove_entry(from_dir, from, cache, now)?;
        self.add_entry(to_dir, to, ino, pid, cache, now)?;
        self.inode_mut(ino).ctime = self.tick_of(now);
        self.inode_mut(ino).parent = to_dir;
        self.dirty_inode(ino, false, cache, now);
        Ok(())
    }

    /// The in-place metadata blocks `fsync` of `ino` writes without a
    /// journal (`sync_mapping_buffers` + `ext4_write_inode` +
    /// `ext4_sync_parent` for a new inode): inode-table block, extent
    /// leaves, and for a new inode its directory's blocks and inode.
    pub fn inode_sync_blocks(&mut self, ino: u32, out: &mut Vec<u64>) {
        out.clear();
        out.push(self.layout.inode_block(ino));
        out.extend(self.inode(ino).leaves.iter().copied());
        if self.inode(ino).new {
            self.inode_mut(ino).new = false;
            let p = self.inode(ino).parent;
            out.push(self.layout.inode_block(p));
            out.extend(
                self.inode(p)
                    .extents
                    .iter()
                    .flat_map(|e| e.pblk..e.pblk + e.len),
            );
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Every region mkfs and mount-time set-up wrote: `(first sector,
    /// sectors)` (group metadata, journal, directories, extent blocks and,
    /// for `with_data` inodes, their data), for the untimed pre-write.
    pub fn written_extents(&self, with_data: &dyn Fn(u32) -> bool) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for g in 0..self.layout.ngroups() {
            let (s, e) = self.layout.group_metadata(g);
            out.push((self.sector_of(s), (e - s) * SECTORS_PER_PAGE));
        }
        if self.layout.journal_blocks > 0 {
            out.push((
                self.sector_of(self.layout.journal_first),
                self.layout.journal_blocks * SECTORS_PER_PAGE,
            ));
        }
        for i in self.inodes.values() {
            if i.kind == Kind::Dir || with_data(i.ino) {
                for e in &i.extents {
                    out.push((self.sector_of(e.pblk), e.len * SECTORS_PER_PAGE));
                }
            }
            for &l in &i.leaves {
                out.push((self.sector_of(l), SECTORS_PER_PAGE));
            }
        }
        out
    }

    /// FITRIM of the whole file system (`ext4_trim_fs` with `minlen` one
    /// block, as `fstrim /data` asks): every free block run, as
    /// `(first sector, sectors)` discards, in block order. Records the
    /// blocks in [`Ext4::fstrim_blocks`].
    pub fn fstrim(&mut self) -> Vec<(u64, u64)> {
        let runs = self.bitmaps.free_runs();
        self.fstrim_blocks += runs.iter().map(|r| r.len).sum::<u64>();
        runs.iter()
            .map(|r| (self.sector_of(r.start), r.len * SECTORS_PER_PAGE))
            .collect()
    }

    /// Whether metadata block `blk` is the journal's (its superblock).
    pub fn first_file_ino() -> u32 {
        FIRST_INO
    }

    /// Blocks per group (for reports).
    pub fn blocks_per_group() -> u64 {
        BLOCKS_PER_GROUP
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(extra: &str, cache: &mut PageCache) -> Ext4 {
        let cfg: FsConfig = toml::from_str(&format!("type = \"ext4\"\n{extra}")).unwrap();
        let mut fs = Ext4::mkfs(&cfg, 0, 65536, 1_000_000, cache).unwrap();
        fs.finish_mount();
        fs
    }

    #[test]
    fn writes_reserve_blocks_and_stop_short_when_the_fs_is_full() {
        let mut cache = PageCache::new(10_000);
        let mut fs = fs("", &mut cache);
        let f = fs
            .create(ROOT_INO, "a", Kind::File, 1, &mut cache, 10)
            .unwrap();
        // another file takes all but a few blocks
        let g = fs
            .create(ROOT_INO, "fill", Kind::File, 1, &mut cache, 10)
            .unwrap();
        let most = fs.claimable_blocks() - 8;
        fs.alloc_blocks(g, 0, most, 1, &mut cache, 15).unwrap();
        let room = fs.claimable_blocks();
        assert!((1..=8).contains(&room), "{room}");
        let want = (room + 10) * BLOCK_BYTES;
        // short to the blocks that can be reserved
        assert_eq!(
            fs.writable_bytes(f, 0, want, true, &cache),
            room * BLOCK_BYTES
        );
        let m = fs.inode(f).mapping;
        cache.extend_file(m, room);
        fs.write_end(f, 0, room * BLOCK_BYTES, 1, &mut cache, 20)
            .unwrap();
        cache.mark_dirty(m, 0, room, 20);
        assert_eq!(fs.claimable_blocks(), 0, "all reserved");
        // rewriting reserved pages needs nothing more; a new page fails
        assert_eq!(fs.writable_bytes(f, 0, 4096, true, &cache), 4096);
        assert_eq!(
            fs.writable_bytes(f, room * BLOCK_BYTES, 4096, true, &cache),
            0
        );
        // truncating the dirty pages gives the reservation back
        fs.truncate(f, 0, &mut cache, 30);
        assert_eq!(fs.claimable_blocks(), room);
    }

    #[test]
    fn the_smallest_file_system_holds_its_metadata_and_journal() {
        let cfg: FsConfig = toml::from_str("type = \"ext4\"").unwrap();
        let min = Ext4::min_blocks(&cfg);
        let mut cache = PageCache::new(10_000);
        assert!(Ext4::mkfs(&cfg, 0, min, 1_000_000, &mut cache).is_ok());
        let Err(e) = Ext4::mkfs(&cfg, 0, min - 1, 1_000_000, &mut cache) else {
            panic!("one block less must not fit")
        };
        assert!(e.to_string().contains("too small"), "{e}");
        assert!(Ext4::mkfs(&cfg, 0, 0, 1_000_000, &mut cache).is_err());
        assert_eq!(Errno::from_code(28).map(Errno::name), Some("ENOSPC"));
    }

    #[test]
    fn delalloc_maps_at_writeback_and_nodelalloc_at_write() {
        let mut cache = PageCache::new(10_000);
        let mut da = fs("", &mut cache);
        let f = da
            .create(ROOT_INO, "a", Kind::File, 1, &mut cache, 10)
            .unwrap();
        assert!(da.write_end(f, 0, 8192, 1, &mut cache, 20).unwrap());
        assert!(da.inode(f).extents.is_empty(), "delayed: no block yet");
        assert_eq!(da.inode(f).size, 8192);
        assert_eq!(da.inode(f).disksize, 0);
        let m = da.inode(f).mapping;
        let mut runs = Vec::new();
        da.writepages(m, 0, 2, 1, &mut cache, 30, &mut runs);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].pages, 2);
        assert_eq!(da.inode(f).disksize, 8192);
        // the allocation is in the running transaction: datasync moved
        let tid = da.journal().unwrap().running_tid();
        assert_eq!(da.inode(f).datasync_tid, tid);

        let mut cache = PageCache::new(10_000);
        let mut nd = fs("delalloc = false", &mut cache);
        let f = nd
            .create(ROOT_INO, "a", Kind::File, 1, &mut cache, 10)
            .unwrap();
        nd.write_end(f, 0, 8192, 1, &mut cache, 20).unwrap();
        assert_eq!(nd.inode(f).mapped_blocks(), 2);
        assert_eq!(nd.inode(f).disksize, 8192);
        // ordered mode: the inode's data is ordered before the commit
        let m = nd.inode(f).mapping;
        assert!(nd.journal().unwrap().running().ordered.contains(&m));
    }

    #[test]
    fn a_growing_file_stays_contiguous_and_creating_touches_the_expected_blocks() {
        let mut cache = PageCache::new(10_000);
        let mut fs = fs("delalloc = false", &mut cache);
        let f = fs
            .create(ROOT_INO, "log", Kind::File, 1, &mut cache, 10)
            .unwrap();
        let bufs: Vec<Buf> = fs.journal().unwrap().running().bufs.clone();
        let l = fs.layout().clone();
        let g = l.inode_group(f);
        // inode bitmap, group descriptor, the inode's table block, the
        // root directory's block and the root's inode block
        assert!(bufs.contains(&Buf::Meta(l.groups[g].inode_bitmap)));
        assert!(bufs.contains(&Buf::Meta(l.gdt_block_of(g))));
        assert!(bufs.contains(&Buf::Meta(l.inode_block(f))));
        assert!(bufs.contains(&Buf::Meta(l.inode_block(ROOT_INO))));
        for i in 0..8 {
            fs.write_end(f, i * 4096, 4096, 1, &mut cache, 20 + i)
                .unwrap();
        }
        assert_eq!(fs.inode(f).extents.len(), 1, "{:?}", fs.inode(f).extents);
        assert_eq!(fs.inode(f).extents[0].len, 8);
        // unlink frees the inode and (after the commit) its blocks
        fs.unlink(ROOT_INO, "log", &mut cache, 100).unwrap();
        assert_eq!(fs.stats.blocks_freed, 8);
        assert!(fs.lookup(&["log"]).is_err());
    }
}
