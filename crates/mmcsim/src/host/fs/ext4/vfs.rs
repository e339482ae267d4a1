//! ext4 as the host sees it: [`FileSystem`] for [`Ext4`]. Each method
//! is the VFS entry into ext4 the host core used to make directly, in the
//! same order (the checks `may_open`/`may_delete` make, then the ext4
//! operation), so a run is the same step for step.

use super::super::{Errno, FileSystem, FsEvent, FsReport, FsyncPlan, Ino, Kernel, PageRun};
use super::inode::Kind;
use super::{Ext4, S_MAXBYTES};
use crate::host::page_cache::{FileId, PageCache};
use crate::host::syscall::OpenFlags;
use crate::stats::DeviceTimes;
use crate::types::Ns;

impl FileSystem for Ext4 {
    fn describe(&self) -> String {
        match self.journal() {
            Some(j) => format!("{}; {}", self.kj.describe(), j.describe()),
            None => String::new(),
        }
    }

    fn populate(&mut self, path: &[&str], pages: u64, cache: &mut PageCache) -> Result<Ino, Errno> {
        let (name, dirs) = path.split_last().ok_or(Errno::Inval)?;
        let mut dir = self.lookup(&[])?;
        for (i, d) in dirs.iter().enumerate() {
            dir = match self.lookup(&path[..=i]) {
                Ok(ino) => ino,
                Err(_) => self.create(dir, d, Kind::Dir, 0, cache, 0)?,
            };
        }
        let ino = self.create(dir, name, Kind::File, 0, cache, 0)?;
        if pages > 0 {
            self.alloc_blocks(ino, 0, pages, 0, cache, 0)?;
            let i = self.inode_mut(ino);
            i.size = pages * 4096;
            i.disksize = pages * 4096;
            let m = i.mapping;
            cache.extend_file(m, pages);
        }
        Ok(ino)
    }

    fn finish_mount(&mut self) {
        Ext4::finish_mount(self);
    }

    fn written_extents(&self, with_data: &dyn Fn(Ino) -> bool) -> Vec<(u64, u64)> {
        Ext4::written_extents(self, with_data)
    }

    fn fstrim(&mut self) -> Vec<(u64, u64)> {
        Ext4::fstrim(self)
    }

    fn report(&self) -> FsReport {
        FsReport::Ext4(Ext4::report(self))
    }

    fn record_recovery(&mut self) {
        self.start_recovery_record();
    }

    fn recover(
        &self,
        media: &dyn crate::host::fs::recovery::MediaAfterCut,
        at: Ns,
    ) -> crate::host::fs::recovery::FsRecovery {
        self.recover_after_cut(media, at)
    }

    fn threads(&self) -> u32 {
        self.journal().is_some() as u32
    }

    fn set_first_thread(&mut self, first: u32) {
        self.kj.thread = first;
    }

    fn max_bytes(&self) -> u64 {
        S_MAXBYTES
    }

    fn lookup(&self, path: &[&str]) -> Result<Ino, Errno> {
        Ext4::lookup(self, path)
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
        let ino = match Ext4::lookup(self, path) {
            Ok(ino) => {
                let i = self.inode(ino);
                if super::super::may_open(flags, i.kind == Kind::Dir, i.size)? {
                    Ext4::truncate(self, ino, 0, cache, now);
                }
                ino
            }
            Err(Errno::NoEnt) if flags.creat => {
                let (dir, name) = self.parent(path)?;
                self.create(dir, name, Kind::File, pid, cache, now)?
            }
            Err(e) => return Err(e),
        };
        self.inode_mut(ino).open += 1;
        Ok(ino)
    }

    fn hold(&mut self, ino: Ino) {
        self.inode_mut(ino).open += 1;
    }

    fn close(&mut self, ino: Ino, cache: &mut PageCache, now: Ns) {
        let i = self.inode_mut(ino);
        i.open -= 1;
        if i.open == 0 && i.nlink == 0 {
            self.evict(ino, cache, now);
        }
    }

    fn truncate(
        &mut self,
        ino: Ino,
        len: u64,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        Ext4::truncate(self, ino, len, cache, now);
        Ok(())
    }

    fn unlink(
        &mut self,
        path: &[&str],
        rmdir: bool,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let (dir, name) = self.parent(path)?;
        let is_dir = self.inode(Ext4::lookup(self, path)?).kind == Kind::Dir;
        match (rmdir, is_dir) {
            (false, true) => return Err(Errno::IsDir),
            (true, false) => return Err(Errno::NotDir),
            _ => {}
        }
        Ext4::unlink(self, dir, name, cache, now)
    }

    fn rename(
        &mut self,
        from: &[&str],
        to: &[&str],
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno> {
        let (fd, fname) = self.parent(from)?;
        let (td, tname) = self.parent(to)?;
        Ext4::rename(self, fd, fname, td, tname, pid, cache, now)
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
        Ext4::map_pages(self, m, first, pages, out);
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
        Ext4::writepages(self, m, first, pages, pid, cache, now, out);
    }

    fn writable_bytes(
        &self,
        ino: Ino,
        pos: u64,
        len: u64,
        buffered: bool,
        cache: &PageCache,
    ) -> u64 {
        Ext4::writable_bytes(self, ino, pos, len, buffered, cache)
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
        Ext4::write_end(self, ino, pos, len, pid, cache, now)
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
        Ext4::direct_write(self, ino, pos, len, pid, cache, now)
    }

    fn read_done(&mut self, ino: Ino, cache: &mut PageCache, now: Ns) {
        self.touch_atime(ino, cache, now);
    }

    fn pages_written(&mut self, m: FileId, first: u64, pages: u32, times: DeviceTimes) {
        self.kj.last_data = Some(times);
        self.pages_home(m, first, pages);
    }

    fn metadata_mapping(&self) -> Option<FileId> {
        Some(self.bdev())
    }

    fn fsync(
        &mut self,
        ino: Ino,
        datasync: bool,
        task: u32,
        now: Ns,
        k: &mut dyn Kernel,
    ) -> FsyncPlan {
        let journals_data = self.config().journals_data();
        let (sync_tid, datasync_tid) = (self.inode(ino).sync_tid, self.inode(ino).datasync_tid);
        let Some(j) = self.journal.as_mut() else {
            // generic_file_fsync: the inode's buffers in place.
            let mut blocks = Vec::new();
            self.inode_sync_blocks(ino, &mut blocks);
            return FsyncPlan::InPlace {
                mapping: self.bdev(),
                blocks,
            };
        };
        let tid = if journals_data {
            // ext4_force_commit: everything logged so far.
            if j.running().is_empty() {
                j.committing_tid().unwrap_or(j.committed_tid())
            } else {
                j.running_tid()
            }
        } else if datasync {
            datasync_tid
        } else {
            sync_tid
        };
        if j.request(tid) {
            // jbd2_trans_will_send_data_barrier: the commit flushes.
            self.stats.syncs_committed += 1;
            self.wait_commit(now, task, tid, k);
            FsyncPlan::Wait
        } else {
            self.stats.syncs_flush_only += 1;
            FsyncPlan::Flush
        }
    }

    fn sync_fs(&mut self, task: u32, now: Ns, k: &mut dyn Kernel) -> bool {
        // ext4_sync_fs: commit the running (or committing) transaction.
        let Some(j) = self.journal.as_mut() else {
            return false;
        };
        let tid = if j.running().is_empty() {
            match j.committing_tid() {
                Some(tid) => tid,
                None => return false,
            }
        } else {
            j.running_tid()
        };
        if !j.request(tid) {
            return false;
        }
        self.wait_commit(now, task, tid, k);
        true
    }

    fn sync_flush(&mut self) -> bool {
        if self.config().barrier {
            self.stats.flushes_issued += 1;
        }
        self.config().barrier
    }

    fn changed(&mut self, now: Ns, k: &mut dyn Kernel) {
        self.after_change(now, k);
    }

    fn writeback_progress(&mut self, now: Ns, k: &mut dyn Kernel) {
        self.jbd2_progress(now, k);
    }

    fn event(&mut self, now: Ns, ev: FsEvent, k: &mut dyn Kernel) {
        match ev {
            FsEvent::Submit { .. } => self.jbd2_submit(now, k),
            FsEvent::Timer(tid) => self.commit_timer(now, tid, k),
        }
    }

    fn bio_done(&mut self, now: Ns, times: DeviceTimes, k: &mut dyn Kernel) {
        self.jbd2_bio_done(now, times, k);
    }
}
