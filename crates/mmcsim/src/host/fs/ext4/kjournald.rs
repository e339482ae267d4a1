//! The journal thread (`jbd2/mmcblk0pN-8`, kjournald2): commits the
//! running transaction when asked (fsync, sync, the `commit=` timer, a
//! full transaction) as `jbd2_journal_commit_transaction` does in ordered
//! mode, and checkpoints when the log runs out of space.
//!
//! Commit sequence:
//! 1. ordered data: dirty, mapped pages of the transaction's inodes are
//!    written, and all their writeback is waited for;
//! 2. the log body — descriptor blocks and one copy of each buffer —
//!    written sequentially from the log head (one plug) and waited for;
//! 3. with barrier=1, a cache FLUSH, and once it completes the commit
//!    block written with FUA (Linux's blk-flush sequence for
//!    `WRITE_FLUSH_FUA`: the write waits for the pre-flush); with
//!    barrier=0 a plain commit block;
//!    with `journal_async_commit` the commit block goes out with the body
//!    (no wait, no pre-flush, no FUA) and one FLUSH follows the lot;
//! 4. the buffers become dirty for writeback to their home locations and
//!    join the checkpoint list; blocks freed by the transaction become
//!    allocatable; waiters wake.
//!
//! Checkpoint (`jbd2_log_do_checkpoint`): the oldest committed
//! transaction's buffers are written home (clean ones just leave the
//! list) and waited for; then `jbd2_cleanup_journal_tail` flushes and
//! writes the journal superblock with FUA.
//!
//! The thread is ext4's: it runs through the [`Kernel`] the host lends
//! (page cache, bio submission on its own thread index, timers, waking
//! the tasks that wait for a commit).

use super::super::jbd2::{Buf, CommitPlan, LogBlock};
use super::super::{FsEvent, Kernel, PageRun};
use super::Ext4;
use crate::block::request::{Bio, Submitter};
use crate::host::page_cache::FileId;
use crate::stats::DeviceTimes;
use crate::types::{IoPrio, Ns, Op, NS_PER_S, SECTORS_PER_PAGE};

/// Pid the journal thread's bios are charged to.
pub const JBD2_PID: u32 = 2;

/// Where a commit or checkpoint is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Stage {
    /// Nothing in progress.
    #[default]
    Idle,
    /// Waiting for ordered data.
    Ordered,
    /// Waiting for the log body (and, async, the commit block).
    Log,
    /// Waiting for the pre-flush before the commit block.
    PreFlush,
    /// Waiting for the commit block.
    CommitBlock,
    /// Async commit: waiting for the flush after the commit block.
    PostFlush,
    /// Checkpoint: waiting for transaction `tid`'s buffers to reach home.
    CpWrite(u64),
    /// Checkpoint: waiting for the flush before the superblock update.
    CpFlush,
    /// Checkpoint: waiting for the journal superblock write.
    CpSuper,
}

/// The journal thread's state.
#[derive(Default)]
pub(super) struct Kjournald {
    /// Thread index of its bios (after the flusher).
    pub thread: u32,
    /// Tasks waiting for a commit: `(task, tid)`.
    pub waiters: Vec<(u32, u64)>,
    stage: Stage,
    /// Its bios in flight.
    pending: u32,
    plan: CommitPlan,
    /// Mappings whose writeback the commit waits for.
    ordered: Vec<FileId>,
    /// Bios prepared, submitted at the next `Jbd2Submit`.
    bios: Vec<Bio>,
    /// Transaction whose `commit=` timer is armed.
    timer_tid: u64,
    /// Device times of the latest page-writeback request that completed:
    /// the critical request when it ends the commit's ordered-data wait.
    pub last_data: Option<DeviceTimes>,
}

impl Kjournald {
    /// Its state in words, for the stall report.
    pub(super) fn describe(&self) -> String {
        format!(
            "jbd2 {:?}, {} bio(s) in flight, {} prepared, waiters (task, tid) {:?}",
            self.stage,
            self.pending,
            self.bios.len(),
            self.waiters
        )
    }
}

impl Ext4 {
    fn jbd2_bio(&self, op: Op, sector: u64, sectors: u32, fua: bool) -> Bio {
        Bio {
            op,
            sector,
            sectors,
            sync: true,
            fua,
            secure: false,
            prio: false,
            pid: JBD2_PID,
            thread: self.kj.thread,
            ioprio: IoPrio::NORM,
            submitter: Submitter::Fs,
        }
    }

    /// Queues journal-thread bios; they reach the block layer after the
    /// per-bio submission cost.
    fn jbd2_queue(&mut self, now: Ns, bios: Vec<Bio>, own: u32, k: &mut dyn Kernel) {
        let n = bios.len() as u32;
        self.kj.pending += own;
        if n == 0 {
            return;
        }
        let first = self.kj.bios.is_empty();
        self.kj.bios.extend(bios);
        if first {
            let thread = self.kj.thread;
            let at = k.submit_cost(thread, now, n);
            k.at(at, FsEvent::Submit { thread });
        }
    }

    /// The journal thread's prepared bios enter the block layer under one
    /// plug.
    pub(super) fn jbd2_submit(&mut self, now: Ns, k: &mut dyn Kernel) {
        let mut bios = std::mem::take(&mut self.kj.bios);
        k.submit_plugged(now, self.kj.thread, &mut bios);
        self.kj.bios = bios;
    }

    /// Writes pages `[first, first + pages)` of `m` (taken for writeback)
    /// as the journal thread's page I/O, appending the bios to `bios`.
    fn jbd2_write_pages(
        &mut self,
        now: Ns,
        m: FileId,
        first: u64,
        pages: u32,
        bios: &mut Vec<Bio>,
        k: &mut dyn Kernel,
    ) {
        let template = self.jbd2_bio(Op::Write, 0, 0, false);
        let mut runs: Vec<PageRun> = Vec::new();
        self.writepages(
            m,
            first,
            pages as u64,
            template.pid,
            k.cache(),
            now,
            &mut runs,
        );
        k.page_write_bios(m, &runs, template, bios);
    }

    /// After file-system metadata may have changed: arms the running
    /// transaction's `commit=` timer and asks for a commit when it is full.
    pub(super) fn after_change(&mut self, now: Ns, k: &mut dyn Kernel) {
        let commit_ns = self.config().commit_s as Ns * NS_PER_S;
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        let tid = j.running_tid();
        if let Some(start) = j.running().started {
            if self.kj.timer_tid != tid {
                self.kj.timer_tid = tid;
                k.at(start + commit_ns, FsEvent::Timer(tid));
            }
        }
        if j.running_is_full() {
            j.request(tid);
            self.jbd2_kick(now, k);
        }
    }

    /// The `commit=` timer of `tid` expired: commit it if it still runs.
    pub(super) fn commit_timer(&mut self, now: Ns, tid: u64, k: &mut dyn Kernel) {
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        if j.running_tid() == tid && !j.running().is_empty() && j.request(tid) {
            j.note_periodic();
            self.jbd2_kick(now, k);
        }
    }

    /// Task `t` waits for transaction `tid` to commit
    /// (`jbd2_log_wait_commit`); a commit starts if none is running.
    pub(super) fn wait_commit(&mut self, now: Ns, t: u32, tid: u64, k: &mut dyn Kernel) {
        self.kj.waiters.push((t, tid));
        self.jbd2_kick(now, k);
    }

    /// Starts a commit if one was asked for and none is in progress.
    pub(super) fn jbd2_kick(&mut self, now: Ns, k: &mut dyn Kernel) {
        if self.kj.stage != Stage::Idle {
            return;
        }
        let Some(j) = self.journal() else {
            return;
        };
        if !j.should_start() {
            return;
        }
        if j.free_blocks() < j.blocks_needed() && j.oldest_checkpoint().is_some() {
            self.checkpoint(now, k);
        } else {
            self.start_commit(now, k);
        }
    }

    /// `jbd2_journal_commit_transaction`, up to the ordered-data wait.
    fn start_commit(&mut self, now: Ns, k: &mut dyn Kernel) {
        let j = self.journal.as_mut().expect("commit with a journal");
        self.kj.plan = j.start_commit();
        self.kj.last_data = None;
        let ordered: Vec<FileId> = j
            .committing()
            .expect("just started")
            .ordered
            .iter()
            .copied()
            .collect();
        // journal_submit_data_buffers: the mapped dirty pages of each
        // ordered inode (ext4_writepage leaves delayed pages alone).
        let mut bios = Vec::new();
        let mut runs = Vec::new();
        let max = k.max_bio_sectors() / SECTORS_PER_PAGE as u32;
        for &m in &ordered {
            if !self.owns(m) {
                continue;
            }
            let pages = k.cache().file_pages(m);
            self.map_pages(m, 0, pages, &mut runs);
            for r in runs.iter().filter(|r| r.sector.is_some()) {
                let mut p = r.page;
                while p < r.page + r.pages {
                    if !k.cache().take_dirty_page(m, p) {
                        p += 1;
                        continue;
                    }
                    let mut n = 1u32;
                    while n < max
                        && p + (n as u64) < r.page + r.pages
                        && k.cache().take_dirty_page(m, p + n as u64)
                    {
                        n += 1;
                    }
                    self.jbd2_write_pages(now, m, p, n, &mut bios, k);
                    p += n as u64;
                }
            }
        }
        let data: Vec<(u64, u32)> = bios.iter().map(|b| (b.sector, b.sectors)).collect();
        self.note_ordered(self.kj.plan.tid, &data, now);
        self.jbd2_queue(now, bios, 0, k);
        self.kj.ordered = ordered;
        self.kj.stage = Stage::Ordered;
        // Writing ordered data may update on-disk sizes (a new transaction).
        self.after_change(now, k);
        self.jbd2_progress(now, k);
    }

    /// Page writeback made progress: an ordered-data wait or a checkpoint
    /// may be over.
    pub(super) fn jbd2_progress(&mut self, now: Ns, k: &mut dyn Kernel) {
        match self.kj.stage {
            Stage::Ordered => {
                let cache = k.cache();
                if self
                    .kj
                    .ordered
                    .iter()
                    .all(|&m| cache.file_writeback_pages(m) == 0)
                {
                    self.kj.ordered.clear();
                    if let Some(times) = self.kj.last_data.take() {
                        self.commit_waiters_waited(times, now, k);
                    }
                    self.write_log(now, k);
                }
            }
            Stage::CpWrite(tid) => {
                let done = self.journal().is_none_or(|j| !j.has_checkpoint(tid));
                if done {
                    self.cleanup_tail(now, k);
                }
            }
            _ => {}
        }
    }

    /// Writes the log body (and, async, the commit block).
    fn write_log(&mut self, now: Ns, k: &mut dyn Kernel) {
        let is_async = self.config().journal_async_commit;
        let sectors: Vec<u64> = self
            .kj
            .plan
            .blocks
            .iter()
            .filter(|&&(_, what)| what != LogBlock::Commit || is_async)
            .map(|&(blk, _)| self.sector_of(blk))
            .collect();
        self.note_log(self.kj.plan.tid, &sectors, is_async, now);
        let template = self.jbd2_bio(Op::Write, 0, 0, false);
        let bios: Vec<Bio> = sectors
            .into_iter()
            .map(|sector| Bio {
                sector,
                sectors: SECTORS_PER_PAGE as u32,
                ..template
            })
            .collect();
        let n = bios.len() as u32;
        self.kj.stage = Stage::Log;
        self.jbd2_queue(now, bios, n, k);
    }

    /// The calls waiting for a commit (fsync, O_SYNC) waited, from their
    /// last attributed instant to `now`, along the commit step that just
    /// ended on the request that ran at `times` (queue, driver, device,
    /// completion): each step of a commit is on their critical path.
    fn commit_waiters_waited(&mut self, times: DeviceTimes, now: Ns, k: &mut dyn Kernel) {
        for &(task, _) in &self.kj.waiters {
            k.call_waited(task, times, now);
        }
    }

    /// One of the journal thread's own bios completed, on the request that
    /// ran at `times`.
    pub(super) fn jbd2_bio_done(&mut self, now: Ns, times: DeviceTimes, k: &mut dyn Kernel) {
        self.kj.pending -= 1;
        if self.kj.pending > 0 {
            return;
        }
        self.commit_waiters_waited(times, now, k);
        let barrier = self.config().barrier;
        let is_async = self.config().journal_async_commit;
        match self.kj.stage {
            Stage::Log if is_async => {
                if barrier {
                    self.jbd2_flush(now, Stage::PostFlush, k);
                } else {
                    self.finish_commit(now, k);
                }
            }
            Stage::Log => {
                if barrier {
                    self.jbd2_flush(now, Stage::PreFlush, k);
                } else {
                    self.commit_block(now, false, k);
                }
            }
            Stage::PreFlush => self.commit_block(now, true, k),
            Stage::CommitBlock | Stage::PostFlush => self.finish_commit(now, k),
            Stage::CpFlush => self.write_journal_super(now, true, k),
            Stage::CpSuper => {
                self.kj.stage = Stage::Idle;
                self.jbd2_kick(now, k);
            }
            s => unreachable!("journal bio completed in stage {s:?}"),
        }
    }

    fn jbd2_flush(&mut self, now: Ns, next: Stage, k: &mut dyn Kernel) {
        self.stats.flushes_issued += 1;
        self.kj.stage = next;
        let bio = self.jbd2_bio(Op::Flush, 0, 0, false);
        self.jbd2_queue(now, vec![bio], 1, k);
    }

    /// The commit block: with FUA after a pre-flush (barrier=1).
    fn commit_block(&mut self, now: Ns, fua: bool, k: &mut dyn Kernel) {
        let &(blk, what) = self
            .kj
            .plan
            .blocks
            .last()
            .expect("a plan ends with its commit block");
        debug_assert_eq!(what, LogBlock::Commit);
        if fua {
            self.stats.fua_writes_issued += 1;
        }
        let bio = Bio {
            sector: self.sector_of(blk),
            sectors: SECTORS_PER_PAGE as u32,
            ..self.jbd2_bio(Op::Write, 0, 0, fua)
        };
        self.note_commit_block(self.kj.plan.tid, bio.sector, now);
        self.kj.stage = Stage::CommitBlock;
        self.jbd2_queue(now, vec![bio], 1, k);
    }

    /// The commit is durable: buffers to writeback and the checkpoint
    /// list, freed blocks released, waiters woken, the next commit started.
    fn finish_commit(&mut self, now: Ns, k: &mut dyn Kernel) {
        let j = self.journal.as_mut().expect("commit with a journal");
        let t = j.finish_commit();
        let committed = j.committed_tid();
        let bdev = self.bdev();
        let homes: Vec<u64> = t
            .bufs
            .iter()
            .map(|b| match *b {
                Buf::Meta(blk) | Buf::Data { blk, .. } => blk,
            })
            .collect();
        self.note_committed(t.tid, &homes, now);
        for buf in &t.bufs {
            match *buf {
                Buf::Meta(blk) => k.cache().mark_dirty(bdev, blk, 1, now),
                Buf::Data { file, page, blk } => {
                    // A page truncated away (and perhaps written again
                    // elsewhere) while its transaction committed has no
                    // home left to write (`journal_unmap_buffer`).
                    if self.owns(file)
                        && page < k.cache().file_pages(file)
                        && self.page_home_is(file, page, blk)
                    {
                        k.cache().mark_dirty(file, page, 1, now);
                    } else {
                        self.journal_mut().expect("journal").written_home(buf);
                    }
                }
            }
        }
        self.release_committed(&t.freed);
        self.kj.stage = Stage::Idle;
        let mut i = 0;
        while i < self.kj.waiters.len() {
            let (task, tid) = self.kj.waiters[i];
            if tid <= committed {
                self.kj.waiters.swap_remove(i);
                k.wake_task(task, now);
            } else {
                i += 1;
            }
        }
        self.jbd2_kick(now, k);
    }

    /// `jbd2_log_do_checkpoint` of the oldest committed transaction.
    fn checkpoint(&mut self, now: Ns, k: &mut dyn Kernel) {
        let bdev = self.bdev();
        let j = self.journal.as_mut().expect("checkpoint with a journal");
        j.note_checkpoint();
        let (tid, bufs) = j.oldest_checkpoint().expect("something to checkpoint");
        let mut bios = Vec::new();
        for buf in bufs {
            let (m, page) = match buf {
                Buf::Meta(blk) => (bdev, blk),
                Buf::Data { file, page, .. } => (file, page),
            };
            if k.cache().take_dirty_page(m, page) {
                self.jbd2_write_pages(now, m, page, 1, &mut bios, k);
            } else if !k.cache().is_dirty_or_writeback(m, page) {
                // A clean buffer just leaves the checkpoint list.
                if let Some(j) = self.journal.as_mut() {
                    j.written_home(&buf);
                }
            }
        }
        self.jbd2_queue(now, bios, 0, k);
        self.kj.stage = Stage::CpWrite(tid);
        self.jbd2_progress(now, k);
    }

    /// `jbd2_cleanup_journal_tail`: flush, then the journal superblock
    /// (with the new tail) with FUA.
    fn cleanup_tail(&mut self, now: Ns, k: &mut dyn Kernel) {
        if self.config().barrier {
            self.jbd2_flush(now, Stage::CpFlush, k);
        } else {
            self.write_journal_super(now, false, k);
        }
    }

    fn write_journal_super(&mut self, now: Ns, fua: bool, k: &mut dyn Kernel) {
        let sb = self.journal().expect("journal").superblock();
        if fua {
            self.stats.fua_writes_issued += 1;
        }
        let bio = Bio {
            sector: self.sector_of(sb),
            sectors: SECTORS_PER_PAGE as u32,
            ..self.jbd2_bio(Op::Write, 0, 0, fua)
        };
        self.kj.stage = Stage::CpSuper;
        self.jbd2_queue(now, vec![bio], 1, k);
    }

    /// Pages of mapping `fid` reached their home location: metadata written
    /// in place (block-device mapping) and journaled data leave the
    /// checkpoint lists.
    pub(super) fn pages_home(&mut self, fid: FileId, first: u64, pages: u32) {
        let bdev = self.bdev();
        let journals_data = self.config().journals_data();
        if fid == bdev {
            self.stats.metadata_blocks_written_in_place += pages as u64;
        } else if !journals_data {
            return;
        }
        let ino_blocks: Vec<(u64, u64)> = if fid == bdev {
            (first..first + pages as u64).map(|p| (p, p)).collect()
        } else {
            let mut runs = Vec::new();
            self.map_pages(fid, first, pages as u64, &mut runs);
            let part = self.sector_of(0);
            runs.iter()
                .filter_map(|r| r.sector.map(|s| (r.page, r.pages, s)))
                .flat_map(|(p, n, s)| {
                    let blk0 = (s - part) / SECTORS_PER_PAGE;
                    (0..n).map(move |k| (p + k, blk0 + k))
                })
                .collect()
        };
        if let Some(j) = self.journal.as_mut() {
            for (page, blk) in ino_blocks {
                let buf = if fid == bdev {
                    Buf::Meta(blk)
                } else {
                    Buf::Data {
                        file: fid,
                        page,
                        blk,
                    }
                };
                j.written_home(&buf);
            }
        }
    }
}
