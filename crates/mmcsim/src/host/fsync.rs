//! Making data durable: `fsync`/`fdatasync` (`ext4_sync_file`, or the raw
//! layout's writeback plus a cache flush), `O_SYNC`/`O_DSYNC` writes
//! (`generic_write_sync`), and `sync()`.
//!
//! On ext4 with a journal, reference android-workloads.md §4.2:
//! 1. the file's dirty pages are written and waited for — including pages
//!    the flusher already has under writeback (`filemap_write_and_wait`);
//! 2. when the inode's relevant change (`i_sync_tid` for fsync,
//!    `i_datasync_tid` for fdatasync) is not yet committed, JBD2 commits
//!    it and the caller waits (`jbd2_complete_transaction`); the commit
//!    sends the cache flush;
//! 3. otherwise one cache flush (`blkdev_issue_flush`, barrier=1).
//!
//! Without a journal: data, then the inode's metadata blocks written in
//! place (and, for a new inode, its directory's), then a flush.

use super::fs::jbd2::Buf;
use super::stage::{Below, Host, HostEvent, HostEvents, Notify};
use super::syscall::Fd;
use super::task::{Node, Phase};
use super::vfs::Mount;
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
            return self.fail(now, t, kind, super::fs::ext4::Errno::BadF, b);
        }
        let call = self.calls.insert(super::call::Call::new(now, t, kind, 0));
        let task = &mut self.tasks[t as usize];
        task.fd = fd;
        task.ret = 0;
        task.call = Some(call);
        task.phase = if self.mount.ext4().is_some() {
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
        let template = self.tasks[t as usize].bio(t, Op::Write, 0, 0, 0);
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

    /// `ext4_sync_file` step 1 (and its resumption): write the file's
    /// dirty pages, wait until none is under writeback, then go on.
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

    /// `ext4_sync_file` after the data: commit, in-place metadata, or a
    /// flush.
    fn sync_after_data<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        datasync: bool,
        b: &mut Below<E>,
    ) {
        let Node::Ext4(ino) = self.tasks[t as usize].cur().node else {
            unreachable!("ext4 sync of a raw file")
        };
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("ext4 sync without ext4")
        };
        let barrier = fs.config().barrier;
        let journals_data = fs.config().journals_data();
        let (sync_tid, datasync_tid) = (fs.inode(ino).sync_tid, fs.inode(ino).datasync_tid);
        match fs.journal_mut() {
            None => {
                // generic_file_fsync: the inode's buffers in place.
                let mut blocks = Vec::new();
                fs.inode_sync_blocks(ino, &mut blocks);
                let bdev = fs.bdev();
                let call = self.tasks[t as usize].call.expect("sync has a call");
                let template = self.tasks[t as usize].bio(t, Op::Write, 0, 0, 0);
                let mut bios = std::mem::take(&mut self.tasks[t as usize].pending_bios);
                let mut n = 0;
                for blk in blocks {
                    if self.cache.take_dirty_page(bdev, blk) {
                        n += self.write_bios(
                            now,
                            bdev,
                            blk,
                            1,
                            template,
                            Notify::Call(call),
                            &mut bios,
                        );
                    }
                }
                self.tasks[t as usize].pending_bios = bios;
                self.tasks[t as usize].phase = Phase::SyncMeta;
                if n > 0 {
                    self.calls[call].pending = n;
                    let at = self.submit_cost(t, now, n);
                    b.q.at(at, HostEvent::SubmitPlug(t));
                } else {
                    self.sync_barrier(now, t, b);
                }
            }
            Some(j) => {
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
                    fs.stats.syncs_committed += 1;
                    self.tasks[t as usize].phase = Phase::SyncCommit { barrier: false };
                    self.kj.waiters.push((t, tid));
                    self.jbd2_kick(now, b);
                } else {
                    fs.stats.syncs_flush_only += 1;
                    self.tasks[t as usize].phase = Phase::SyncCommit { barrier };
                    self.sync_barrier(now, t, b);
                }
            }
        }
    }

    /// The final cache flush of a sync (barrier=1), or the return.
    pub(super) fn sync_barrier<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let barrier = self.mount.ext4().is_none_or(|fs| fs.config().barrier);
        if !barrier {
            b.q.at(now, HostEvent::Return(t));
            return;
        }
        if let Some(fs) = self.mount.ext4_mut() {
            fs.stats.flushes_issued += 1;
        }
        let call = self.tasks[t as usize].call.expect("sync has a call");
        self.tasks[t as usize].phase = Phase::SyncFlush;
        let c = &mut self.calls[call];
        c.pending = 1;
        let bio = self.tasks[t as usize].bio(t, Op::Flush, 0, 0, call);
        b.block.submit(now, [bio], b.driver, b.q);
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
    /// (`sync_inodes_sb`); 1 commit the running transaction and wait
    /// (`ext4_sync_fs`); 2 write the block-device mapping — metadata in
    /// place — and wait (`sync_blockdev`); 3 flush.
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
                let bdev = self.mount.ext4().map(|fs| fs.bdev());
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
                let tid = self.mount.ext4_mut().and_then(|fs| {
                    let j = fs.journal_mut()?;
                    let tid = if j.running().is_empty() {
                        j.committing_tid()?
                    } else {
                        j.running_tid()
                    };
                    j.request(tid).then_some(tid)
                });
                match tid {
                    Some(tid) => {
                        self.kj.waiters.push((t, tid));
                        self.jbd2_kick(now, b);
                    }
                    None => self.sync_all_step(now, t, 2, b),
                }
            }
            2 => {
                self.tasks[t as usize].phase = Phase::SyncAll(3);
                if let Some(bdev) = self.mount.ext4().map(|fs| fs.bdev()) {
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

    /// Whether metadata buffer `blk` of the block device waits for a
    /// checkpoint (for tests and reports).
    pub fn on_checkpoint(&self, blk: u64) -> bool {
        self.mount
            .ext4()
            .and_then(|fs| fs.journal())
            .is_some_and(|j| j.on_checkpoint(&Buf::Meta(blk)))
    }
}
