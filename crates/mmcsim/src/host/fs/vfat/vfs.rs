//! vfat as the host sees it: [`FileSystem`] for [`Vfat`]. Each method is
//! the VFS entry into `fs/fat` the host core makes, with the checks
//! `may_open` / `may_delete` make first.

use super::super::{Errno, FileSystem, FsEvent, FsReport, FsyncPlan, Ino, Kernel, PageRun};
use super::{Dirty, Kind, Vfat, ROOT_INO, S_MAXBYTES};
use crate::host::page_cache::{FileId, PageCache};
use crate::host::syscall::OpenFlags;
use crate::stats::DeviceTimes;
use crate::types::Ns;

impl FileSystem for Vfat {
    fn populate(&mut self, path: &[&str], pages: u64, cache: &mut PageCache) -> Result<Ino, Errno> {
        let (name, dirs) = path.split_last().ok_or(Errno::Inval)?;
        let mut dir = ROOT_INO;
        for (i, d) in dirs.iter().enumerate() {
            dir = match Vfat::lookup(self, &path[..=i]) {
                Ok(ino) => ino,
                Err(_) => self.create(dir, d, Kind::Dir, 0, cache, 0)?,
            };
        }
        let ino = self.create(dir, name, Kind::File, 0, cache, 0)?;
        if pages > 0 {
            self.grow_to(ino, pages * 4096, cache, 0)?;
            self.inode_mut(ino).size = pages * 4096;
            let m = self.inode(ino).mapping;
            cache.extend_file(m, pages);
        }
        Ok(ino)
    }

    fn finish_mount(&mut self) {
        Vfat::finish_mount(self);
    }

    fn written_extents(&self, with_data: &dyn Fn(Ino) -> bool) -> Vec<(u64, u64)> {
        Vfat::written_extents(self, with_data)
    }

    fn fstrim(&mut self) -> Vec<(u64, u64)> {
        // Refused by FsConfig::validate: no FITRIM in this era's driver.
        Vec::new()
    }

    fn report(&self) -> FsReport {
        FsReport::Vfat(Vfat::report(self))
    }

    fn threads(&self) -> u32 {
        0
    }

    fn set_first_thread(&mut self, _first: u32) {}

    fn max_bytes(&self) -> u64 {
        S_MAXBYTES
    }

    fn lookup(&self, path: &[&str]) -> Result<Ino, Errno> {
        Vfat::lookup(self, path)
    }

    fn mapping(&self, ino: Ino) -> FileId {
        self.inode(ino).mapping
    }

    fn size(&self, ino: Ino) -> u64 {
        self.inode(ino).size
    }

    fn is_dir(&self, ino: Ino) -> bool {
        self.inode(ino).kind == Kind::Dir
    }

    fn open(
        &mut self,
        path: &[&str],
        flags: OpenFlags,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<Ino, Errno> {
        let ino = match Vfat::lookup(self, path) {
            Ok(ino) => {
                let i = self.inode(ino);
                if super::super::may_open(flags, i.kind == Kind::Dir, i.size)? {
                    self.truncate_to(ino, 0, cache, now)?;
                }
                ino
            }
            Err(Errno::NoEnt) if flags.creat => {
                let (dir, name) = self.parent(path)?;
                self.create(dir, name, Kind::File, pid, cache, now)?
            }
            Err(e) => return Err(e),
        };
        let i = self.inode_mut(ino);
        i.open += 1;
        i.pid = pid;
        Ok(ino)
    }

    fn hold(&mut self, ino: Ino) {
        self.inode_mut(ino).open += 1;
    }

    fn close(&mut self, ino: Ino, cache: &mut PageCache, now: Ns) {
        let i = self.inode_mut(ino);
        i.open -= 1;
        if i.open > 0 {
            return;
        }
        if i.unlinked {
            self.evict(ino, cache, now);
        } else {
            self.release(ino);
        }
    }

    fn truncate(
        &mut self,
        ino: Ino,
        len: u64,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        self.truncate_to(ino, len, cache, now)
    }

    fn unlink(
        &mut self,
        path: &[&str],
        rmdir: bool,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let (dir, name) = self.parent(path)?;
        let is_dir = self.inode(Vfat::lookup(self, path)?).kind == Kind::Dir;
        match (rmdir, is_dir) {
            (false, true) => return Err(Errno::IsDir),
            (true, false) => return Err(Errno::NotDir),
            _ => {}
        }
        self.unlink_entry(dir, name, cache, now)
    }

    fn rename(
        &mut self,
        from: &[&str],
        to: &[&str],
        _pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let (fd, fname) = self.parent(from)?;
        let (td, tname) = self.parent(to)?;
        let ino = self.entry(fd, fname)?.ino;
        if let Ok(old) = self.entry(td, tname) {
            if old.ino == ino {
                return Ok(());
            }
            self.unlink_entry(td, tname, cache, now)?;
        }
        // vfat_rename: the new entry first, then the old one goes.
        let e = self.add_entry(td, tname, ino, cache, now)?;
        self.remove_entry(fd, fname, cache, now)?;
        self.inode_mut(ino).dirent = Some((td, e.short_slot()));
        self.dirty_inode(ino, Dirty::Sync, true, cache, now);
        Ok(())
    }

    fn mkdir(
        &mut self,
        path: &[&str],
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let (dir, name) = self.parent(path)?;
        self.create(dir, name, Kind::Dir, pid, cache, now)?;
        Ok(())
    }

    fn map_pages(&self, m: FileId, first: u64, pages: u64, out: &mut Vec<PageRun>) {
        Vfat::map_pages(self, m, first, pages, out);
    }

    fn writepages(
        &mut self,
        m: FileId,
        first: u64,
        pages: u64,
        _pid: u32,
        _cache: &mut PageCache,
        _now: Ns,
        out: &mut Vec<PageRun>,
    ) {
        // Clusters were allocated at write(): nothing to do but map.
        Vfat::map_pages(self, m, first, pages, out);
    }

    fn writable_bytes(
        &self,
        ino: Ino,
        pos: u64,
        len: u64,
        _buffered: bool,
        _cache: &PageCache,
    ) -> u64 {
        Vfat::writable_bytes(self, ino, pos, len)
    }

    fn write_end(
        &mut self,
        ino: Ino,
        pos: u64,
        len: u64,
        _pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<bool, Errno> {
        Vfat::write_end(self, ino, pos, len, cache, now)?;
        Ok(true)
    }

    fn direct_write(
        &mut self,
        ino: Ino,
        pos: u64,
        len: u64,
        _pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        // fat_direct_IO falls back to a buffered write past the allocated
        // end; the clusters and size come out the same.
        Vfat::write_end(self, ino, pos, len, cache, now)
    }

    fn read_done(&mut self, ino: Ino, cache: &mut PageCache, now: Ns) {
        self.touch_atime(ino, cache, now);
    }

    fn pages_written(&mut self, m: FileId, first: u64, pages: u32, _times: DeviceTimes) {
        if m == self.bdev {
            self.bdev_written(first, pages);
        }
    }

    fn metadata_mapping(&self) -> Option<FileId> {
        Some(self.bdev)
    }

    fn fsync(
        &mut self,
        ino: Ino,
        datasync: bool,
        _task: u32,
        _now: Ns,
        _k: &mut dyn Kernel,
    ) -> FsyncPlan {
        self.stats.fsyncs += 1;
        FsyncPlan::InPlace {
            mapping: self.bdev,
            blocks: self.fsync_pages(ino, datasync),
        }
    }

    fn sync_fs(&mut self, _task: u32, _now: Ns, _k: &mut dyn Kernel) -> bool {
        false
    }

    fn sync_flush(&mut self) -> bool {
        // No blkdev_issue_flush in fat_file_fsync or sync(2) for FAT
        // before Linux 3.16.
        false
    }

    fn namei_sync(&mut self, t: u32, now: Ns, k: &mut dyn Kernel) -> Option<FsyncPlan> {
        if !self.sync_pages.is_empty() {
            let mut blocks = std::mem::take(&mut self.sync_pages);
            blocks.sort_unstable();
            blocks.dedup();
            self.stats.dirsync_pages += blocks.len() as u64;
            return Some(FsyncPlan::InPlace {
                mapping: self.bdev,
                blocks,
            });
        }
        self.release_sync(t, now, k)
    }

    fn changed(&mut self, _now: Ns, _k: &mut dyn Kernel) {}

    fn writeback_progress(&mut self, now: Ns, k: &mut dyn Kernel) {
        self.release_progress(now, k);
    }

    fn event(&mut self, now: Ns, ev: FsEvent, k: &mut dyn Kernel) {
        match ev {
            FsEvent::Submit { thread } => self.release_submit(now, thread, k),
            FsEvent::Timer(tag) => self.release_timeout(now, tag, k),
        }
    }

    fn bio_done(&mut self, _now: Ns, _times: DeviceTimes, _k: &mut dyn Kernel) {}
}
