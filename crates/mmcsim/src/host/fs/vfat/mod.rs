//! FAT32 through the Linux 2.6.35-3.4 `vfat` driver, as Android's vold
//! formatted (`newfs_msdos -F 32 -O android -c 8`) and mounted
//! (`MS_DIRSYNC`, `utf8,uid=,gid=,fmask=,dmask=,shortname=mixed`) the
//! `/sdcard` volume [src: AOSP system/vold Fat.cpp, gingerbread to kitkat].
//!
//! * [`layout`]: the geometry `newfs_msdos` chose for the partition.
//! * [`fat`]: the FAT in memory and `fat_alloc_clusters`' next-free scan.
//! * [`dir`]: 32-byte directory slots, long-name slots, placement.
//! * `vfs.rs`: [`super::FileSystem`] for [`Vfat`]; `release.rs`: the
//!   `flush` mount option at the last close.
//!
//! What each operation dirties, as the driver does it: a write past the
//! last cluster allocates clusters one at a time at `write_begin`
//! (`fat_get_block` → `fat_add_cluster`; no delayed allocation), each
//! writing its FAT entry and the previous cluster's link
//! (`fat_ent_write`, mirrored to the second FAT by `fat_mirror_bhs`) and,
//! for a file's first cluster, its directory entry; a size or time
//! change dirties the file's directory entry (`__fat_write_inode`);
//! create/unlink/rename/mkdir write directory slots. All of it lives in
//! the block device's page cache (the metadata mapping; page = 4 KiB of
//! the partition) and is written by the flusher, by `fsync`, or at once
//! under `MS_DIRSYNC`. There is no journal.
//!
//! Simplifications, each a known deviation: the driver's buffers are 512
//! bytes and only dirty ones are written, here the whole 4 KiB page
//! holding them is; a dirtied inode's directory entry is dirtied at once
//! instead of when the flusher writes the inode (`write_inode`, up to
//! `dirty_expire` later); FSINFO (free count, next-free hint) is dirtied
//! at each allocation instead of by `sync_supers` every 5 s; the
//! synchronous writes of one `MS_DIRSYNC` call are issued together and
//! waited for once, where the driver waits for each buffer in turn.

pub mod dir;
pub mod fat;
pub mod layout;
mod release;
pub mod report;
mod vfs;

use crate::host::fs::mkfs_error::MkfsError;
use std::collections::{BTreeMap, BTreeSet};

use self::dir::{Dir, Entry};
use self::fat::Fat;
use self::layout::{Layout, FSINFO_SECTOR, ROOT_CLUSTER, SECTOR_BYTES};
use self::report::VfatStats;
use super::config::{AtimeMode, FsConfig};
use super::{Errno, PageRun};
use crate::host::page_cache::{FileId, PageCache};
use crate::types::{Ns, NS_PER_S, SECTORS_PER_PAGE};

/// The largest file, bytes (`sb->s_maxbytes` = 0xffffffff: the directory
/// entry's 32-bit size).
pub const S_MAXBYTES: u64 = 0xffff_ffff;
/// The root directory's inode number (`MSDOS_ROOT_INO`).
pub const ROOT_INO: u32 = 1;
/// Default cluster size, KiB: vold's `Fat::format` passes `-c 8` (8
/// sectors) from Android 2.2 to 4.4 [src: AOSP system/vold Fat.cpp; `-c
/// 64 -A` from June 2014, commit "Tuned FAT parameters according to SD
/// Association recommendations"].
pub const DEFAULT_CLUSTER_KIB: u32 = 4;
/// Relatime's age limit: atime older than this is updated anyway, ns.
const RELATIME_AGE: Ns = 24 * 3600 * NS_PER_S;
/// Inode times count from mkfs, this long before the run starts (files
/// made before the run are two days old), ns.
const RUN_EPOCH: Ns = 2 * 24 * 3600 * NS_PER_S;
/// Page size, bytes.
const PAGE_BYTES: u64 = 4096;

/// How dirty an inode is, as `mark_inode_dirty` records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Dirty {
    /// Nothing to write.
    Clean,
    /// Times only (`I_DIRTY_SYNC`): `fdatasync` skips it.
    Sync,
    /// Size or first cluster (`I_DIRTY_DATASYNC`).
    Datasync,
}

/// File or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

/// An in-memory inode: its cluster chain (a copy of the FAT's, for
/// mapping), size, times and where its directory entry is.
#[derive(Clone, Debug)]
struct Inode {
    kind: Kind,
    mapping: FileId,
    /// Directory holding its entry and the entry's short slot (none for
    /// the root).
    dirent: Option<(u32, u64)>,
    chain: Vec<u32>,
    size: u64,
    mtime: Ns,
    atime: Ns,
    open: u32,
    unlinked: bool,
    dirty: Dirty,
    /// Written since the last close (for the `flush` option, which acts
    /// on the release of a writable file).
    written: bool,
    /// The last opener's process id (the `flush` writeback's submitter).
    pid: u32,
}

/// The mounted file system.
pub struct Vfat {
    cfg: FsConfig,
    layout: Layout,
    fat: Fat,
    inodes: BTreeMap<u32, Inode>,
    dirs: BTreeMap<u32, Dir>,
    /// Block-device mapping: page = 4 KiB of the partition.
    bdev: FileId,
    part_sector: u64,
    /// Mapping → inode (`u32::MAX`: none).
    ino_of: Vec<u32>,
    next_ino: u32,
    /// Timestamp granularity (one kernel tick), ns.
    tick: Ns,
    mounting: bool,
    /// Clusters holding directories (their pages are directory entries).
    dir_cluster: Vec<bool>,
    /// Block-device pages holding dirty FAT buffers (`fat_inode`'s
    /// buffer list, which `fsync` writes whole).
    fat_dirty: BTreeSet<u64>,
    /// Pages the current namespace call writes synchronously.
    sync_pages: Vec<u64>,
    release: release::Release,
    /// Counters.
    pub stats: VfatStats,
}

impl Vfat {
    /// Makes (`newfs_msdos`) and mounts a FAT32 on `blocks` 4 KiB blocks
    /// from sector `part_sector`, then creates `LOST.DIR` as vold does
    /// after mounting `/sdcard` (`Fat::doMount` with `createLost`).
    pub fn mkfs(
        cfg: &FsConfig,
        part_sector: u64,
        blocks: u64,
        tick_ns: Ns,
        cache: &mut PageCache,
    ) -> Result<Vfat, MkfsError> {
        let spc = Self::cluster_kib(cfg) as u64 * 1024 / SECTOR_BYTES;
        let layout = Layout::new(blocks * SECTORS_PER_PAGE, spc).map_err(|e| MkfsError::Fat32 {
            blocks,
            cluster_kib: Self::cluster_kib(cfg),
            why: Box::new(e),
            min_mib: Self::min_blocks(cfg).div_ceil(256),
        })?;
        let bdev = cache.add_file(layout.sectors / SECTORS_PER_PAGE);
        let root_map = cache.add_file(0);
        let mut fs = Vfat {
            cfg: cfg.clone(),
            fat: Fat::new(layout.max_cluster()),
            dir_cluster: vec![false; layout.max_cluster() as usize],
            layout,
            inodes: BTreeMap::new(),
            dirs: BTreeMap::new(),
            bdev,
            part_sector,
            ino_of: Vec::new(),
            next_ino: ROOT_INO + 1,
            tick: tick_ns.max(1),
            mounting: true,
            fat_dirty: BTreeSet::new(),
            sync_pages: Vec::new(),
            release: Default::default(),
            stats: VfatStats::default(),
        };
        fs.note_mapping(root_map, ROOT_INO);
        fs.inodes
            .insert(ROOT_INO, Inode::new(Kind::Dir, root_map, None, 0));
        fs.dirs.insert(ROOT_INO, Dir::new(0));
        // newfs_msdos gives the root its first cluster (2).
        let root = fs
            .add_cluster(ROOT_INO, cache, 0)
            .map_err(|_| MkfsError::NoRoom {
                what: "the root directory",
            })?;
        debug_assert_eq!(root, ROOT_CLUSTER);
        fs.create(ROOT_INO, "LOST.DIR", Kind::Dir, 0, cache, 0)
            .map_err(|_| MkfsError::NoRoom { what: "LOST.DIR" })?;
        Ok(fs)
    }

    /// The cluster size of `cfg`, KiB.
    fn cluster_kib(cfg: &FsConfig) -> u32 {
        cfg.cluster_kib.unwrap_or(DEFAULT_CLUSTER_KIB)
    }

    /// Whether `MS_DIRSYNC` is on (vold's default).
    fn dirsync(&self) -> bool {
        self.cfg.dirsync.unwrap_or(true) && !self.mounting
    }

    /// The fewest 4 KiB blocks [`Vfat::mkfs`] can make a file system of:
    /// the reserved region, two FATs, the root's and LOST.DIR's clusters.
    pub fn min_blocks(cfg: &FsConfig) -> u64 {
        let spc = Self::cluster_kib(cfg) as u64 * 1024 / SECTOR_BYTES;
        let mut b = 1;
        while !Layout::new(b * SECTORS_PER_PAGE, spc).is_ok_and(|l| l.clusters >= 2) {
            b += 1;
        }
        b
    }

    /// Ends mount-time set-up: changes are dirtied from now on, and the
    /// counters start.
    pub fn finish_mount(&mut self) {
        self.mounting = false;
        for i in self.inodes.values_mut() {
            i.dirty = Dirty::Clean;
            i.written = false;
        }
        self.fat_dirty.clear();
        self.sync_pages.clear();
        self.stats = VfatStats::default();
    }

    fn note_mapping(&mut self, m: FileId, ino: u32) {
        let i = m as usize;
        if self.ino_of.len() <= i {
            self.ino_of.resize(i + 1, u32::MAX);
        }
        self.ino_of[i] = ino;
    }

    /// The inode whose data mapping is `m`.
    fn ino_of(&self, m: FileId) -> Option<u32> {
        self.ino_of
            .get(m as usize)
            .copied()
            .filter(|&i| i != u32::MAX)
    }

    fn inode(&self, ino: u32) -> &Inode {
        &self.inodes[&ino]
    }

    fn inode_mut(&mut self, ino: u32) -> &mut Inode {
        self.inodes.get_mut(&ino).expect("live inode")
    }

    /// The geometry.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The FAT.
    pub fn fat(&self) -> &Fat {
        &self.fat
    }

    /// The cluster chain of the file at `path`.
    pub fn chain_of(&self, path: &[&str]) -> Result<Vec<u32>, Errno> {
        Ok(self.inode(self.lookup(path)?).chain.clone())
    }

    /// Device sector of partition sector `s`.
    fn dev_sector(&self, s: u64) -> u64 {
        self.part_sector + s
    }

    // ---- metadata buffers ------------------------------------------------

    /// Dirties the block-device page holding partition sector `sector`;
    /// `sync`: the current call writes it before returning
    /// (`sync_dirty_buffer` under `MS_DIRSYNC`).
    fn dirty_sector(&mut self, sector: u64, sync: bool, cache: &mut PageCache, now: Ns) {
        let page = Layout::page_of(sector);
        cache.install_uptodate(self.bdev, page);
        if self.mounting {
            return;
        }
        cache.mark_dirty(self.bdev, page, 1, now);
        if sync && self.dirsync() {
            self.sync_pages.push(page);
        }
    }

    /// Writes cluster `c`'s FAT entry (`fat_ent_write`): the sector in the
    /// first FAT and its mirror in the second (`fat_mirror_bhs`); `sync`
    /// writes the first copy's at once (`fat_sync_bhs`).
    fn write_fat(&mut self, c: u32, sync: bool, cache: &mut PageCache, now: Ns) {
        for copy in 0..layout::NFATS {
            let s = self.layout.fat_entry_sector(copy, c);
            self.dirty_sector(s, sync && copy == 0, cache, now);
            if !self.mounting {
                self.fat_dirty.insert(Layout::page_of(s));
            }
        }
        if !self.mounting {
            self.stats.fat_entry_updates += 1;
        }
    }

    /// FSINFO's free count and next-free hint changed.
    fn dirty_fsinfo(&mut self, cache: &mut PageCache, now: Ns) {
        self.dirty_sector(FSINFO_SECTOR, false, cache, now);
    }

    /// The partition sector holding slot `slot` of directory `dir`.
    fn slot_sector(&self, dir: u32, slot: u64) -> u64 {
        let per = self.layout.slots_per_cluster();
        let c = self.inode(dir).chain[(slot / per) as usize];
        self.layout.cluster_sector(c) + (slot % per) * layout::DIRENT_BYTES / SECTOR_BYTES
    }

    /// `mark_inode_dirty`: records how dirty `ino` is and dirties its
    /// directory entry; `sync` writes it at once (`fat_sync_inode` under
    /// `MS_DIRSYNC`).
    fn dirty_inode(&mut self, ino: u32, level: Dirty, sync: bool, cache: &mut PageCache, now: Ns) {
        let i = self.inode_mut(ino);
        i.dirty = i.dirty.max(level);
        let Some((dir, slot)) = i.dirent else {
            return; // the FAT32 root has no directory entry
        };
        let s = self.slot_sector(dir, slot);
        self.dirty_sector(s, sync, cache, now);
        if !self.mounting {
            self.stats.dirent_updates += 1;
        }
    }

    // ---- clusters ----------------------------------------------------------

    /// `fat_add_cluster`: one cluster from the FAT at the end of `ino`'s
    /// chain (`fat_alloc_clusters`, then `fat_chain_add`: the previous
    /// cluster's link, or the first cluster in the directory entry). A
    /// directory's new cluster is zeroed (`fat_zeroed_cluster`), and under
    /// `MS_DIRSYNC` its FAT sector and buffers are written at once.
    fn add_cluster(&mut self, ino: u32, cache: &mut PageCache, now: Ns) -> Result<u32, Errno> {
        let c = self.fat.alloc().ok_or(Errno::NoSpc)?;
        let is_dir = self.inode(ino).kind == Kind::Dir;
        if !self.mounting {
            self.stats.clusters_allocated += 1;
        }
        self.write_fat(c, is_dir, cache, now);
        self.dirty_fsinfo(cache, now);
        match self.inode(ino).chain.last().copied() {
            Some(prev) => {
                self.fat.link(prev, c);
                self.write_fat(prev, is_dir, cache, now);
            }
            None => self.dirty_inode(ino, Dirty::Datasync, is_dir, cache, now),
        }
        self.inode_mut(ino).chain.push(c);
        if is_dir {
            self.dir_cluster[c as usize] = true;
            let first = self.layout.cluster_sector(c);
            for s in (first..first + self.layout.spc).step_by(SECTORS_PER_PAGE as usize) {
                self.dirty_sector(s, true, cache, now);
            }
            // A cluster straddling a page boundary ends in another page.
            self.dirty_sector(first + self.layout.spc - 1, true, cache, now);
        }
        Ok(c)
    }

    /// Gives `ino` clusters for its first `bytes` bytes.
    fn grow_to(
        &mut self,
        ino: u32,
        bytes: u64,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let need = bytes.div_ceil(self.layout.cluster_bytes());
        while (self.inode(ino).chain.len() as u64) < need {
            self.add_cluster(ino, cache, now)?;
        }
        Ok(())
    }

    /// `fat_free`: keeps the first `keep` clusters of `ino`, ends the chain
    /// there (or clears the first cluster in the directory entry) and
    /// frees the rest (`fat_free_clusters`). The chain's new end is
    /// written at once under `MS_DIRSYNC` (`wait = IS_DIRSYNC(inode)`).
    fn free_from(&mut self, ino: u32, keep: usize, cache: &mut PageCache, now: Ns) {
        if self.inode(ino).chain.len() <= keep {
            return;
        }
        let freed = self.inode_mut(ino).chain.split_off(keep);
        match self.inode(ino).chain.last().copied() {
            Some(last) => {
                self.fat.end_at(last);
                self.write_fat(last, true, cache, now);
            }
            None => self.dirty_inode(ino, Dirty::Datasync, true, cache, now),
        }
        for c in freed {
            self.fat.free(c);
            self.dir_cluster[c as usize] = false;
            self.write_fat(c, false, cache, now);
            if !self.mounting {
                self.stats.clusters_freed += 1;
            }
        }
        self.dirty_fsinfo(cache, now);
    }

    // ---- namespace -------------------------------------------------------

    /// The inode of entry `name` in directory `dir`.
    fn entry(&self, dir: u32, name: &str) -> Result<Entry, Errno> {
        self.dirs
            .get(&dir)
            .ok_or(Errno::NotDir)?
            .lookup(name)
            .ok_or(Errno::NoEnt)
    }

    /// Looks up an absolute path.
    pub fn lookup(&self, path: &[&str]) -> Result<u32, Errno> {
        let mut ino = ROOT_INO;
        for name in path {
            ino = self.entry(ino, name)?.ino;
        }
        Ok(ino)
    }

    /// The directory holding the last component of `path`, and that name.
    fn parent<'p>(&self, path: &[&'p str]) -> Result<(u32, &'p str), Errno> {
        let (name, dirs) = path.split_last().ok_or(Errno::Inval)?;
        let dir = self.lookup(dirs)?;
        if !self.dirs.contains_key(&dir) {
            return Err(Errno::NotDir);
        }
        Ok((dir, name))
    }

    /// The timestamp of `now`: whole kernel ticks (0 while mounting).
    fn tick_of(&self, now: Ns) -> Ns {
        if self.mounting {
            return 0;
        }
        (now + RUN_EPOCH) / self.tick * self.tick
    }

    /// A directory's times change after an entry was added or removed
    /// (`vfat_add_entry` / `vfat_remove_entries`): its own entry is
    /// written at once under `MS_DIRSYNC` (`fat_sync_inode`), else
    /// dirtied.
    fn touch_dir(&mut self, dir: u32, cache: &mut PageCache, now: Ns) {
        let t = self.tick_of(now);
        self.inode_mut(dir).mtime = t;
        self.dirty_inode(dir, Dirty::Sync, true, cache, now);
    }

    /// Writes the slots of entry `name` for `ino` into `dir`
    /// (`fat_add_entries`), growing the directory by clusters when no run
    /// of free slots is long enough.
    fn add_entry(
        &mut self,
        dir: u32,
        name: &str,
        ino: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<Entry, Errno> {
        let n = dir::slots_for(name);
        let first = self.dirs[&dir].place(n);
        let per = self.layout.slots_per_cluster();
        while (self.inode(dir).chain.len() as u64) * per < first + n {
            self.add_cluster(dir, cache, now)?;
        }
        let e = self
            .dirs
            .get_mut(&dir)
            .expect("directory")
            .add(name, ino, first, n);
        for slot in e.first..e.first + e.slots {
            let s = self.slot_sector(dir, slot);
            self.dirty_sector(s, true, cache, now);
        }
        if !self.mounting {
            self.stats.dirent_updates += 1;
        }
        self.touch_dir(dir, cache, now);
        Ok(e)
    }

    /// Marks the slots of entry `name` deleted (`fat_remove_entries`).
    fn remove_entry(
        &mut self,
        dir: u32,
        name: &str,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<Entry, Errno> {
        let e = self
            .dirs
            .get_mut(&dir)
            .ok_or(Errno::NotDir)?
            .remove(name)
            .ok_or(Errno::NoEnt)?;
        for slot in e.first..e.first + e.slots {
            let s = self.slot_sector(dir, slot);
            self.dirty_sector(s, true, cache, now);
        }
        if !self.mounting {
            self.stats.dirent_updates += 1;
        }
        self.touch_dir(dir, cache, now);
        Ok(e)
    }

    /// `vfat_create` / `vfat_mkdir`: a directory gets its first cluster
    /// ("." and "..") before its entry is added (`fat_alloc_new_dir`); a
    /// file starts with no cluster.
    fn create(
        &mut self,
        dir: u32,
        name: &str,
        kind: Kind,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<u32, Errno> {
        if self.entry(dir, name).is_ok() {
            return Err(Errno::Exist);
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        let m = cache.add_file(0);
        self.note_mapping(m, ino);
        let t = self.tick_of(now);
        let mut inode = Inode::new(kind, m, None, t);
        inode.pid = pid;
        self.inodes.insert(ino, inode);
        if kind == Kind::Dir {
            self.dirs.insert(ino, Dir::new(2));
            if let Err(e) = self.add_cluster(ino, cache, now) {
                self.drop_inode(ino, cache);
                return Err(e);
            }
            self.inode_mut(ino).size = self.layout.cluster_bytes();
        }
        match self.add_entry(dir, name, ino, cache, now) {
            Ok(e) => self.inode_mut(ino).dirent = Some((dir, e.short_slot())),
            Err(err) => {
                self.free_from(ino, 0, cache, now);
                self.drop_inode(ino, cache);
                return Err(err);
            }
        }
        Ok(ino)
    }

    /// Forgets inode `ino` and its pages.
    fn drop_inode(&mut self, ino: u32, cache: &mut PageCache) {
        if let Some(i) = self.inodes.remove(&ino) {
            cache.truncate(i.mapping, 0);
            self.note_mapping(i.mapping, u32::MAX);
        }
        self.dirs.remove(&ino);
    }

    /// `fat_evict_inode` of an unlinked inode with no opener: its clusters
    /// are freed.
    fn evict(&mut self, ino: u32, cache: &mut PageCache, now: Ns) {
        self.free_from(ino, 0, cache, now);
        self.drop_inode(ino, cache);
    }

    /// `vfat_unlink` / `vfat_rmdir` of `name` in `dir`.
    fn unlink_entry(
        &mut self,
        dir: u32,
        name: &str,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let e = self.entry(dir, name)?;
        if self.dirs.get(&e.ino).is_some_and(|d| !d.is_empty()) {
            return Err(Errno::NotEmpty);
        }
        self.remove_entry(dir, name, cache, now)?;
        let i = self.inode_mut(e.ino);
        i.unlinked = true;
        i.dirent = None;
        if i.open == 0 {
            self.evict(e.ino, cache, now);
        }
        Ok(())
    }

    /// `ftruncate` / `O_TRUNC` of `ino` to `len` bytes (`fat_setattr`):
    /// a shrink drops the pages past it and frees the clusters past it
    /// (`fat_truncate_blocks`); a growth allocates and zero-fills
    /// (`fat_cont_expand`), as FAT has no holes.
    fn truncate_to(
        &mut self,
        ino: u32,
        len: u64,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let old = self.inode(ino).size;
        let m = self.inode(ino).mapping;
        if len < old {
            cache.truncate(m, len.div_ceil(PAGE_BYTES));
            let keep = len.div_ceil(self.layout.cluster_bytes()) as usize;
            self.free_from(ino, keep, cache, now);
        } else if len > old {
            self.grow_to(ino, len, cache, now)?;
            self.zero_fill(ino, old, len, cache, now);
        }
        let t = self.tick_of(now);
        let i = self.inode_mut(ino);
        i.size = len;
        i.mtime = t;
        i.written = true;
        self.dirty_inode(ino, Dirty::Datasync, false, cache, now);
        Ok(())
    }

    /// Pages of `ino` in `[from, to)` bytes become dirty zeros
    /// (`cont_write_begin` / `cont_expand_zero`).
    fn zero_fill(&mut self, ino: u32, from: u64, to: u64, cache: &mut PageCache, now: Ns) {
        if to <= from || self.mounting {
            return;
        }
        let m = self.inode(ino).mapping;
        let first = from / PAGE_BYTES;
        let end = to.div_ceil(PAGE_BYTES);
        cache.mark_dirty(m, first, end - first, now);
    }

    /// `touch_atime` after a read, by the atime policy.
    fn touch_atime(&mut self, ino: u32, cache: &mut PageCache, now: Ns) {
        let t = self.tick_of(now);
        let i = self.inode(ino);
        let update = match self.cfg.atime {
            AtimeMode::Noatime => false,
            AtimeMode::Strictatime => i.atime != t,
            AtimeMode::Relatime => {
                i.atime != t && (i.mtime >= i.atime || t - i.atime >= RELATIME_AGE)
            }
        };
        if update {
            self.inode_mut(ino).atime = t;
            self.dirty_inode(ino, Dirty::Sync, false, cache, now);
        }
    }

    // ---- data --------------------------------------------------------------

    /// The runs of pages `[first, first + pages)` of mapping `m`: the
    /// block device maps linearly; a file's page maps into its cluster.
    fn map_pages(&self, m: FileId, first: u64, pages: u64, out: &mut Vec<PageRun>) {
        out.clear();
        let Some(ino) = self.ino_of(m) else {
            out.push(PageRun {
                page: first,
                pages,
                sector: Some(self.dev_sector(first * SECTORS_PER_PAGE)),
            });
            return;
        };
        let i = self.inode(ino);
        let cb = self.layout.cluster_bytes();
        for p in first..first + pages {
            let byte = p * PAGE_BYTES;
            let sector = i.chain.get((byte / cb) as usize).map(|&c| {
                self.dev_sector(self.layout.cluster_sector(c) + byte % cb / SECTOR_BYTES)
            });
            match out.last_mut() {
                Some(r)
                    if r.page + r.pages == p
                        && match (r.sector, sector) {
                            (Some(a), Some(b)) => a + r.pages * SECTORS_PER_PAGE == b,
                            (None, None) => true,
                            _ => false,
                        } =>
                {
                    r.pages += 1
                }
                _ => out.push(PageRun {
                    page: p,
                    pages: 1,
                    sector,
                }),
            }
        }
    }

    /// Bytes of a write of `len` at `pos` to `ino` the free clusters can
    /// hold (0: ENOSPC). FAT has no holes: a write past the end needs
    /// clusters for the gap too.
    fn writable_bytes(&self, ino: u32, pos: u64, len: u64) -> u64 {
        let cb = self.layout.cluster_bytes();
        let have = self.inode(ino).chain.len() as u64 * cb;
        let room = have + self.fat.free_clusters() * cb;
        if pos + len <= have {
            len
        } else {
            room.saturating_sub(pos).min(len)
        }
    }

    /// `fat_write_begin` + `fat_write_end` of `[pos, pos + len)`: clusters
    /// up to the end of the write now (the gap past the old size zero
    /// filled), the size, mtime and archive bit in the directory entry.
    fn write_end(
        &mut self,
        ino: u32,
        pos: u64,
        len: u64,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let end = pos + len;
        let old = self.inode(ino).size;
        self.grow_to(ino, end, cache, now)?;
        if pos > old {
            self.zero_fill(ino, old, pos, cache, now);
        }
        let t = self.tick_of(now);
        let i = self.inode_mut(ino);
        i.written = true;
        let level = if end > i.size {
            i.size = end;
            Dirty::Datasync
        } else if i.mtime != t {
            Dirty::Sync
        } else {
            Dirty::Clean
        };
        i.mtime = t;
        if level != Dirty::Clean {
            self.dirty_inode(ino, level, false, cache, now);
        }
        Ok(())
    }

    /// Metadata pages `fsync` writes (`generic_file_fsync` →
    /// `sync_inode_metadata` → `__fat_write_inode(inode, 1)` when the inode
    /// is dirty enough, then `sync_mapping_buffers` of the FAT inode: every
    /// dirty FAT buffer of the file system). A directory's own slots are
    /// its mapping's buffers.
    fn fsync_pages(&mut self, ino: u32, datasync: bool) -> Vec<u64> {
        let mut out = Vec::new();
        let i = self.inode(ino);
        let need = if datasync {
            Dirty::Datasync
        } else {
            Dirty::Sync
        };
        if i.dirty >= need {
            if let Some((dir, slot)) = i.dirent {
                out.push(Layout::page_of(self.slot_sector(dir, slot)));
            }
            self.inode_mut(ino).dirty = Dirty::Clean;
        }
        if self.inode(ino).kind == Kind::Dir {
            let spc = self.layout.spc;
            for &c in &self.inode(ino).chain {
                let s = self.layout.cluster_sector(c);
                out.push(Layout::page_of(s));
                out.push(Layout::page_of(s + spc - 1));
            }
        }
        out.extend(std::mem::take(&mut self.fat_dirty));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Block-device pages `[first, first + pages)` reached the device:
    /// counts FAT sectors and directory pages written.
    fn bdev_written(&mut self, first: u64, pages: u32) {
        for p in first..first + pages as u64 {
            self.fat_dirty.remove(&p);
            let (s, e) = (p * SECTORS_PER_PAGE, (p + 1) * SECTORS_PER_PAGE);
            let fat = (
                s.max(self.layout.fat_start(0)),
                e.min(self.layout.data_start()),
            );
            if fat.1 > fat.0 {
                self.stats.fat_sectors_written += fat.1 - fat.0;
            }
            let is_dir = (s..e)
                .filter_map(|x| self.layout.cluster_of(x))
                .any(|c| self.dir_cluster[c as usize]);
            if is_dir {
                self.stats.dirent_writes += 1;
            }
        }
    }

    /// Every region mkfs and set-up wrote, `(device sector, sectors)`.
    fn written_extents(&self, with_data: &dyn Fn(u32) -> bool) -> Vec<(u64, u64)> {
        let mut out = vec![(self.dev_sector(0), self.layout.data_start())];
        let spc = self.layout.spc;
        for (&ino, i) in &self.inodes {
            if i.kind == Kind::Dir || with_data(ino) {
                for &c in &i.chain {
                    let s = self.dev_sector(self.layout.cluster_sector(c));
                    match out.last_mut() {
                        Some((a, n)) if *a + *n == s => *n += spc,
                        _ => out.push((s, spc)),
                    }
                }
            }
        }
        out
    }
}

impl Inode {
    fn new(kind: Kind, mapping: FileId, dirent: Option<(u32, u64)>, t: Ns) -> Inode {
        Inode {
            kind,
            mapping,
            dirent,
            chain: Vec::new(),
            size: 0,
            mtime: t,
            atime: t,
            open: 0,
            unlinked: false,
            dirty: Dirty::Clean,
            written: false,
            pid: 0,
        }
    }
}

#[cfg(test)]
mod tests;
