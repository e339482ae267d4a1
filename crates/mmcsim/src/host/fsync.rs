//! Making data durable: `fsync`/`fdatasync` (`vfs_fsync` into the file
//! system, or the raw layout's writeback plus a cache flush),
//! `O_SYNC`/`O_DSYNC` writes (`generic_write_sync`), and `sync()`.
//!
//! On a file system (reference android-workloads.md §4.2 for ext4):
//! 1. the file's dirty pages are written and waited for — including pages
//!    the flusher already has under writeback (`filemap_write_and_wait`);
//! 2. the file system says what remains ([`crate::host::fs::FileSystem::fsync`]): wait for
//!    it (ext4: the JBD2 commit of the inode's transaction, which sends
//!    the cache flush), write metadata blocks in place then flush (ext4
//!    without a journal), or only the cache flush
//!    ([`crate::host::fs::FileSystem::sync_flush`]: ext4's `barrier=1`).

use super::fs::FsyncPlan;
use super::stage::{Below, Host, HostEvent, HostEvents, Notify};
use super::syscall::Fd;
use super::task::{Node, Phase};
use crate::block::request::Submitter;
use crate::stats::report::CallKind;
use crate::types::{Ns, Op};

/// Pages one pass of a sync-writeback takes per bio (`max_sectors_kb`).
fn max_pages(max_bio_sectors: u32) -> u32 {
    max_bio_sectors / 8
}

impl Host {
    /// `fsync(fd)` / `fdatasync(fd)`.
    pub(super) fn fsync<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        fd: Fd,
        datasync: bool,
        b: &mut Below<E>,
    ) {
        let kind = if datasync {
            CallKind::Fdatasync
        } else {
            CallKind::Fsync
        };
        if self.tasks[t as usize].file(fd).is_none() {
            return self.fail(now, t, kind, super::errno::Errno::BadF, b);
        }
        let call = self.calls.insert(super::call::Call::new(now, t, kind, 0));
        let task = &mut self.tasks[t as usize];
        task.fd = fd;
        task.ret = 0;
        task.call = Some(call);
        let mapping = task.cur().mapping;
        if self.forwarded(mapping) {
            let at = self.enter(now, t, call, 0);
            return self.forward_fsync(at, t, datasync, b);
        }
        let task = &mut self.tasks[t as usize];
        task.phase = if self.mount.fs().is_some() {
            Phase::SyncData { datasync }
        } else {
            Phase::Fsync
        };
        let at = self.enter(now, t, call, 0);
        b.q.at(at, HostEvent::Step(t));
    }

    /// Raw layout: write back the file's dirty pages synchronously, wait,
    /// then flush the device cache.
    pub(super) fn fsync_step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let call = self.tasks[t as usize].call.expect("fsync has a call");
        self.tasks[t as usize].phase = Phase::WaitIo;
        self.io_sleep(t, now);
        self.calls[call].then_flush = true;
        self.writeback_for_call(now, t, call, b);
    }

    /// Writes the mapping's dirty pages as synchronous bios of task `t`
    /// whose times go into `call`'s split; returns how many were
    /// submitted (at `now` plus the per-bio cost).
    pub(super) fn sync_writeback<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        mapping: super::page_cache::FileId,
        call: u32,
        b: &mut Below<E>,
    ) -> u32 {
        let max = max_pages(self.max_bio_sectors);
        let mut bios = std::mem::take(&mut self.tasks[t as usize].pending_bios);
        let template = self.tasks[t as usize].bio(t, Op::Write, 0, 0, Submitter::Call(call));
        let mut n = 0;
        while let Some((first, pages)) = self.cache.take_dirty_run(mapping, max) {
            n += self.write_bios(
                now,
                mapping,
                first,
                pages,
                template,
                Notify::Split(call),
                &mut bios,
            );
        }
        self.tasks[t as usize].pending_bios = bios;
        if n > 0 {
            let at = self.submit_cost(t, now, n);
            b.q.at(at, HostEvent::SubmitPlug(t));
        }
        self.after_fs_change(now, b);
        n
    }

    /// `fsync` step 1 on a file system (and its resumption): write the
    /// file's dirty pages, wait until none is under writeback, then go on.
    pub(super) fn sync_data_step<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        datasync: bool,
        b: &mut Below<E>,
    ) {
        let call = self.tasks[t as usize].call.expect("sync has a call");
        let mapping = self.tasks[t as usize].cur().mapping;
        let n = self.sync_writeback(now, t, mapping, call, b);
        let _ = n;
        if self.cache.file_writeback_pages(mapping) > 0 {
            // wait_on_page_writeback: io_schedule.
            self.io_sleep(t, now);
            self.wb_waiters.push((t, Some(mapping)));
            return;
        }
        self.sync_after_data(now, t, datasync, b);
    }

    /// `fsync` after the data: what the file system says remains — wait
    /// for it, metadata blocks in place, or the cache flush.
    fn sync_after_data<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        datasync: bool,
        b: &mut Below<E>,
    ) {
        let Node::Inode(ino) = self.tasks[t as usize].cur().node else {
            unreachable!("file-system sync of a raw file")
        };
        let plan = self
            .with_fs(b, |fs, k| fs.fsync(ino, datasync, t, now, k))
            .expect("file-system sync without a file system");
        match plan {
            FsyncPlan::Wait => self.tasks[t as usize].phase = Phase::SyncWait,
            FsyncPlan::Flush => self.sync_barrier(now, t, b),
            FsyncPlan::InPlace { mapping, blocks } => {
                self.tasks[t as usize].phase = Phase::SyncMeta;
                if self.write_blocks_for_call(now, t, mapping, &blocks, b) == 0 {
                    self.sync_barrier(now, t, b);
                }
            }
        }
    }

    /// Task `t` writes the dirty ones of `blocks` (pages of the metadata
    /// mapping `mapping`) for its call, which waits for them
    /// (`sync_dirty_buffer` / `sync_mapping_buffers`); returns how many
    /// bios it submitted (at `now` plus the per-bio cost).
    pub(super) fn write_blocks_for_call<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        mapping: super::page_cache::FileId,
        blocks: &[u64],
        b: &mut Below<E>,
    ) -> u32 {
        let call = self.tasks[t as usize].call.expect("sync has a call");
        let template = self.tasks[t as usize].bio(t, Op::Write, 0, 0, Submitter::Call(call));
        let mut bios = std::mem::take(&mut self.tasks[t as usize].pending_bios);
        let mut n = 0;
        for &blk in blocks {
            if self.cache.take_dirty_page(mapping, blk) {
                n += self.write_bios(
                    now,
                    mapping,
                    blk,
                    1,
                    template,
                    Notify::Call(call),
                    &mut bios,
                );
            }
        }
        self.tasks[t as usize].pending_bios = bios;
        if n > 0 {
            self.calls[call].pending = n;
            let at = self.submit_cost(t, now, n);
            b.q.at(at, HostEvent::SubmitPlug(t));
        }
        n
    }

    /// The final cache flush of a sync (always on the raw layout; on a
    /// file system when it flushes, [`crate::host::fs::FileSystem::sync_flush`]), or the
    /// return.
    pub(super) fn sync_barrier<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let flush = self.mount.fs_mut().is_none_or(|fs| fs.sync_flush());
        if !flush {
            b.q.at(now, HostEvent::Return(t));
            return;
        }
        let call = self.tasks[t as usize].call.expect("sync has a call");
        self.tasks[t as usize].phase = Phase::SyncFlush;
        let c = &mut self.calls[call];
        c.pending = 1;
        let bio = self.tasks[t as usize].bio(t, Op::Flush, 0, 0, Submitter::Call(call));
        b.block.submit(now, [bio], b.q);
    }

    /// A task waiting for a mapping's writeback to drain wakes when it has.
    pub(super) fn wake_drained<E: HostEvents>(
        &mut self,
        now: Ns,
        mapping: super::page_cache::FileId,
        b: &mut Below<E>,
    ) {
        let drained_all = self.cache.writeback_pages() == 0;
        let drained = self.cache.file_writeback_pages(mapping) == 0;
        let mut i = 0;
        while i < self.wb_waiters.len() {
            let (t, m) = self.wb_waiters[i];
            let ready = match m {
                Some(m) => m == mapping && drained,
                None => drained_all,
            };
            if ready {
                self.wb_waiters.swap_remove(i);
                let wake = self.wake(t, now);
                b.q.at(wake, HostEvent::Step(t));
            } else {
                i += 1;
            }
        }
    }

    /// `sync()`.
    pub(super) fn sync<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let call = self
            .calls
            .insert(super::call::Call::new(now, t, CallKind::Sync, 0));
        let task = &mut self.tasks[t as usize];
        task.call = Some(call);
        task.ret = 0;
        task.phase = Phase::SyncAll(0);
        let at = self.enter(now, t, call, 0);
        b.q.at(at, HostEvent::Step(t));
    }

    /// `sync()` steps: 0 write back every file's data and wait
    /// (`sync_inodes_sb`); 1 the file system's `sync_fs` (ext4: commit the
    /// running transaction) and wait; 2 write the block-device mapping —
    /// metadata in place — and wait (`sync_blockdev`); 3 flush.
    pub(super) fn sync_all_step<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        n: u8,
        b: &mut Below<E>,
    ) {
        let call = self.tasks[t as usize].call.expect("sync has a call");
        match n {
            0 => {
                let bdev = self.mount.fs().and_then(|fs| fs.metadata_mapping());
                let mut files = Vec::new();
                self.cache.files_to_write(now, 0, &mut files);
                for f in files {
                    if Some(f) != bdev {
                        self.sync_writeback(now, t, f, call, b);
                    }
                }
                self.tasks[t as usize].phase = Phase::SyncAll(1);
                if self.cache.writeback_pages() > 0 {
                    // wait_on_page_writeback: io_schedule.
                    self.io_sleep(t, now);
                    self.wb_waiters.push((t, None));
                } else {
                    self.sync_all_step(now, t, 1, b);
                }
            }
            1 => {
                self.tasks[t as usize].phase = Phase::SyncAll(2);
                let waits = self.with_fs(b, |fs, k| fs.sync_fs(t, now, k));
                if waits != Some(true) {
                    self.sync_all_step(now, t, 2, b);
                }
            }
            2 => {
                self.tasks[t as usize].phase = Phase::SyncAll(3);
                if let Some(bdev) = self.mount.fs().and_then(|fs| fs.metadata_mapping()) {
                    self.sync_writeback(now, t, bdev, call, b);
                }
                if self.cache.writeback_pages() > 0 {
                    // wait_on_page_writeback: io_schedule.
                    self.io_sleep(t, now);
                    self.wb_waiters.push((t, None));
                } else {
                    self.sync_all_step(now, t, 3, b);
                }
            }
            _ => self.sync_barrier(now, t, b),
        }
    }
}
