//! FUSE as the host sees it: [`FileSystem`] for [`Fuse`]. The namespace,
//! block mapping, allocation and durability are the lower file system's
//! (the daemon's system calls reach them with the lower inode, which the
//! FUSE node shares); what FUSE adds is the upper mapping an app's
//! descriptor reads through, the refusal of O_DIRECT, its daemon threads
//! and the forwarding ([`super::super::Forwarding`]).

use super::super::{Errno, FileSystem, FsEvent, FsReport, FsyncPlan, Ino, Kernel, PageRun};
use super::Fuse;
use crate::host::page_cache::{FileId, PageCache};
use crate::host::syscall::OpenFlags;
use crate::stats::DeviceTimes;
use crate::types::Ns;

impl FileSystem for Fuse {
    fn populate(&mut self, path: &[&str], pages: u64, cache: &mut PageCache) -> Result<Ino, Errno> {
        let ino = self.lower.populate(path, pages, cache)?;
        self.upper_of(ino, cache);
        let owned: Vec<String> = path.iter().map(|c| c.to_string()).collect();
        self.dcache.know(ino, &owned);
        for depth in 1..owned.len() {
            if let Ok(dir) = self.lower.lookup(&path[..depth]) {
                self.dcache.know(dir, &owned[..depth]);
            }
        }
        Ok(ino)
    }

    fn finish_mount(&mut self) {
        self.lower.finish_mount();
    }

    fn written_extents(&self, with_data: &dyn Fn(Ino) -> bool) -> Vec<(u64, u64)> {
        self.lower.written_extents(with_data)
    }

    fn fstrim(&mut self) -> Vec<(u64, u64)> {
        self.lower.fstrim()
    }

    fn report(&self) -> FsReport {
        FsReport::Fuse(self.fuse_report())
    }

    fn threads(&self) -> u32 {
        self.lower.threads() + self.daemon_threads
    }

    fn set_first_thread(&mut self, first: u32) {
        self.lower.set_first_thread(first);
        self.first_daemon = first + self.lower.threads();
    }

    fn max_bytes(&self) -> u64 {
        self.lower.max_bytes()
    }

    fn lookup(&self, path: &[&str]) -> Result<Ino, Errno> {
        self.lower.lookup(path)
    }

    fn mapping(&self, ino: Ino) -> FileId {
        // Files made before the mount have their upper mapping; a file
        // created through FUSE gets it in `open`.
        self.upper
            .get(&ino)
            .copied()
            .unwrap_or_else(|| self.lower.mapping(ino))
    }

    fn size(&self, ino: Ino) -> u64 {
        self.lower.size(ino)
    }

    fn is_dir(&self, ino: Ino) -> bool {
        self.lower.is_dir(ino)
    }

    fn open(
        &mut self,
        path: &[&str],
        flags: OpenFlags,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<Ino, Errno> {
        // fuse_open_common (3.x): "VFS checks this, but only _after_
        // ->open()".
        if flags.direct {
            return Err(Errno::Inval);
        }
        let ino = self.lower.open(path, flags, pid, cache, now)?;
        if !self.lower.is_dir(ino) {
            self.upper_of(ino, cache);
        }
        Ok(ino)
    }

    fn hold(&mut self, ino: Ino) {
        self.lower.hold(ino);
    }

    fn close(&mut self, ino: Ino, cache: &mut PageCache, now: Ns) {
        self.lower.close(ino, cache, now);
    }

    fn truncate(
        &mut self,
        ino: Ino,
        len: u64,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        self.lower.truncate(ino, len, cache, now)
    }

    fn unlink(
        &mut self,
        path: &[&str],
        rmdir: bool,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        self.lower.unlink(path, rmdir, cache, now)
    }

    fn rename(
        &mut self,
        from: &[&str],
        to: &[&str],
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        self.lower.rename(from, to, pid, cache, now)
    }

    fn mkdir(
        &mut self,
        path: &[&str],
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        self.lower.mkdir(path, pid, cache, now)
    }

    fn map_pages(&self, m: FileId, first: u64, pages: u64, out: &mut Vec<PageRun>) {
        debug_assert!(
            !self.upper_ino.contains_key(&m),
            "upper pages are read by the daemon"
        );
        self.lower.map_pages(m, first, pages, out);
    }

    fn writepages(
        &mut self,
        m: FileId,
        first: u64,
        pages: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
        out: &mut Vec<PageRun>,
    ) {
        self.lower.writepages(m, first, pages, pid, cache, now, out);
    }

    fn writable_bytes(
        &self,
        ino: Ino,
        pos: u64,
        len: u64,
        buffered: bool,
        cache: &PageCache,
    ) -> u64 {
        self.lower.writable_bytes(ino, pos, len, buffered, cache)
    }

    fn write_end(
        &mut self,
        ino: Ino,
        pos: u64,
        len: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<bool, Errno> {
        self.lower.write_end(ino, pos, len, pid, cache, now)
    }

    fn direct_write(
        &mut self,
        ino: Ino,
        pos: u64,
        len: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        self.lower.direct_write(ino, pos, len, pid, cache, now)
    }

    fn read_done(&mut self, ino: Ino, cache: &mut PageCache, now: Ns) {
        self.lower.read_done(ino, cache, now);
    }

    fn pages_written(&mut self, m: FileId, first: u64, pages: u32, times: DeviceTimes) {
        self.lower.pages_written(m, first, pages, times);
    }

    fn metadata_mapping(&self) -> Option<FileId> {
        self.lower.metadata_mapping()
    }

    fn fsync(
        &mut self,
        ino: Ino,
        datasync: bool,
        task: u32,
        now: Ns,
        k: &mut dyn Kernel,
    ) -> FsyncPlan {
        self.lower.fsync(ino, datasync, task, now, k)
    }

    fn sync_fs(&mut self, task: u32, now: Ns, k: &mut dyn Kernel) -> bool {
        self.lower.sync_fs(task, now, k)
    }

    fn sync_flush(&mut self) -> bool {
        self.lower.sync_flush()
    }

    fn changed(&mut self, now: Ns, k: &mut dyn Kernel) {
        self.lower.changed(now, k);
    }

    fn writeback_progress(&mut self, now: Ns, k: &mut dyn Kernel) {
        self.lower.writeback_progress(now, k);
    }

    fn event(&mut self, now: Ns, ev: FsEvent, k: &mut dyn Kernel) {
        self.lower.event(now, ev, k);
    }

    fn bio_done(&mut self, now: Ns, times: DeviceTimes, k: &mut dyn Kernel) {
        self.lower.bio_done(now, times, k);
    }

    fn forwarding(&self) -> Option<&dyn super::super::Forwarding> {
        Some(self)
    }

    fn forwarding_mut(&mut self) -> Option<&mut dyn super::super::Forwarding> {
        Some(self)
    }
}
