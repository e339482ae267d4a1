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

use super::fs::jbd2::{Buf, CommitPlan, LogBlock};
use super::page_cache::FileId;
use super::stage::{Below, Host, HostEvent, HostEvents, Notify, JBD2_IO, PAGE_IO};
use super::vfs::Mount;
use crate::block::request::Bio;
use crate::driver::DeviceTimes;
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

impl Host {
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
            owner: PAGE_IO | JBD2_IO,
        }
    }

    /// Queues journal-thread bios; they reach the block layer after the
    /// per-bio submission cost.
    fn jbd2_queue<E: HostEvents>(&mut self, now: Ns, bios: Vec<Bio>, own: u32, b: &mut Below<E>) {
        let n = bios.len() as Ns;
        self.kj.pending += own;
        if n == 0 {
            return;
        }
        let first = self.kj.bios.is_empty();
        self.kj.bios.extend(bios);
        if first {
            let thread = self.kj.thread;
            let at = now + self.cpu.thread(thread, now, |c| n * c.block_submit);
            b.q.at(at, HostEvent::Jbd2Submit);
        }
    }

    /// The journal thread's prepared bios enter the block layer under one
    /// plug.
    pub(super) fn jbd2_submit<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let mut bios = std::mem::take(&mut self.kj.bios);
        b.block
            .submit_plugged(now, self.kj.thread, bios.drain(..), b.driver, b.q);
        self.kj.bios = bios;
    }

    /// After file-system metadata may have changed: arms the running
    /// transaction's `commit=` timer and asks for a commit when it is full.
    pub(super) fn after_fs_change<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let Some(fs) = self.mount.ext4_mut() else {
            return;
        };
        let commit_ns = fs.config().commit_s as Ns * NS_PER_S;
        let Some(j) = fs.journal_mut() else {
            return;
        };
        let tid = j.running_tid();
        if let Some(start) = j.running().started {
            if self.kj.timer_tid != tid {
                self.kj.timer_tid = tid;
                b.q.at(start + commit_ns, HostEvent::CommitTimer(tid));
            }
        }
        if j.running_is_full() {
            j.request(tid);
            self.jbd2_kick(now, b);
        }
    }

    /// The `commit=` timer of `tid` expired: commit it if it still runs.
    pub(super) fn commit_timer<E: HostEvents>(&mut self, now: Ns, tid: u64, b: &mut Below<E>) {
        let Some(j) = self.mount.ext4_mut().and_then(|fs| fs.journal_mut()) else {
            return;
        };
        if j.running_tid() == tid && !j.running().is_empty() && j.request(tid) {
            j.note_periodic();
            self.jbd2_kick(now, b);
        }
    }

    /// Starts a commit if one was asked for and none is in progress.
    pub(super) fn jbd2_kick<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        if self.kj.stage != Stage::Idle {
            return;
        }
        let Some(j) = self.mount.ext4().and_then(|fs| fs.journal()) else {
            return;
        };
        if !j.should_start() {
            return;
        }
        if j.free_blocks() < j.blocks_needed() && j.oldest_checkpoint().is_some() {
            self.checkpoint(now, b);
        } else {
            self.start_commit(now, b);
        }
    }

    /// `jbd2_journal_commit_transaction`, up to the ordered-data wait.
    fn start_commit<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("commit without ext4")
        };
        let j = fs.journal_mut().expect("commit with a journal");
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
        let template = self.jbd2_bio(Op::Write, 0, 0, false);
        let mut bios = Vec::new();
        let mut runs = Vec::new();
        for &m in &ordered {
            let Some(fs) = self.mount.ext4() else { break };
            if !fs.owns(m) {
                continue;
            }
            let pages = self.cache.file_pages(m);
            fs.map_pages(m, 0, pages, &mut runs);
            for r in runs.iter().filter(|r| r.sector.is_some()) {
                let mut p = r.page;
                while p < r.page + r.pages {
                    if !self.cache.take_dirty_page(m, p) {
                        p += 1;
                        continue;
                    }
                    let mut n = 1u32;
                    let max = self.max_bio_sectors / SECTORS_PER_PAGE as u32;
                    while n < max
                        && p + (n as u64) < r.page + r.pages
                        && self.cache.take_dirty_page(m, p + n as u64)
                    {
                        n += 1;
                    }
                    self.write_bios(now, m, p, n, template, Notify::None, &mut bios);
                    p += n as u64;
                }
            }
        }
        self.jbd2_queue(now, bios, 0, b);
        self.kj.ordered = ordered;
        self.kj.stage = Stage::Ordered;
        // Writing ordered data may update on-disk sizes (a new transaction).
        self.after_fs_change(now, b);
        self.jbd2_progress(now, b);
    }

    /// Page writeback made progress: an ordered-data wait or a checkpoint
    /// may be over.
    pub(super) fn jbd2_progress<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        match self.kj.stage {
            Stage::Ordered => {
                let cache = &self.cache;
                if self
                    .kj
                    .ordered
                    .iter()
                    .all(|&m| cache.file_writeback_pages(m) == 0)
                {
                    self.kj.ordered.clear();
                    if let Some(times) = self.kj.last_data.take() {
                        self.commit_waiters_waited(times, now);
                    }
                    self.write_log(now, b);
                }
            }
            Stage::CpWrite(tid) => {
                let done = self
                    .mount
                    .ext4()
                    .and_then(|fs| fs.journal())
                    .is_none_or(|j| !j.has_checkpoint(tid));
                if done {
                    self.cleanup_tail(now, b);
                }
            }
            _ => {}
        }
    }

    /// Writes the log body (and, async, the commit block).
    fn write_log<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("commit without ext4")
        };
        let is_async = fs.config().journal_async_commit;
        let sectors: Vec<u64> = self
            .kj
            .plan
            .blocks
            .iter()
            .filter(|&&(_, what)| what != LogBlock::Commit || is_async)
            .map(|&(blk, _)| fs.sector_of(blk))
            .collect();
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
        self.jbd2_queue(now, bios, n, b);
    }

    /// The calls waiting for a commit (fsync, O_SYNC) waited, from their
    /// last attributed instant to `now`, along the commit step that just
    /// ended on the request that ran at `times` (queue, driver, device,
    /// completion): each step of a commit is on their critical path.
    fn commit_waiters_waited(&mut self, times: DeviceTimes, now: Ns) {
        for &(task, _) in &self.kj.waiters {
            if let Some(c) = self.tasks.get(task as usize).and_then(|k| k.call) {
                if let Some(call) = self.calls.get_mut(c) {
                    call.waited(times, now);
                }
            }
        }
    }

    /// One of the journal thread's own bios completed, on the request that
    /// ran at `times`.
    pub(super) fn jbd2_bio_done<E: HostEvents>(
        &mut self,
        now: Ns,
        times: DeviceTimes,
        b: &mut Below<E>,
    ) {
        self.kj.pending -= 1;
        if self.kj.pending > 0 {
            return;
        }
        self.commit_waiters_waited(times, now);
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("journal bios without ext4")
        };
        let barrier = fs.config().barrier;
        let is_async = fs.config().journal_async_commit;
        match self.kj.stage {
            Stage::Log if is_async => {
                if barrier {
                    self.jbd2_flush(now, Stage::PostFlush, b);
                } else {
                    self.finish_commit(now, b);
                }
            }
            Stage::Log => {
                if barrier {
                    self.jbd2_flush(now, Stage::PreFlush, b);
                } else {
                    self.commit_block(now, false, b);
                }
            }
            Stage::PreFlush => self.commit_block(now, true, b),
            Stage::CommitBlock | Stage::PostFlush => self.finish_commit(now, b),
            Stage::CpFlush => self.write_journal_super(now, true, b),
            Stage::CpSuper => {
                self.kj.stage = Stage::Idle;
                self.jbd2_kick(now, b);
            }
            s => unreachable!("journal bio completed in stage {s:?}"),
        }
    }

    fn jbd2_flush<E: HostEvents>(&mut self, now: Ns, next: Stage, b: &mut Below<E>) {
        if let Some(fs) = self.mount.ext4_mut() {
            fs.stats.flushes_issued += 1;
        }
        self.kj.stage = next;
        let bio = self.jbd2_bio(Op::Flush, 0, 0, false);
        self.jbd2_queue(now, vec![bio], 1, b);
    }

    /// The commit block: with FUA after a pre-flush (barrier=1).
    fn commit_block<E: HostEvents>(&mut self, now: Ns, fua: bool, b: &mut Below<E>) {
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("commit without ext4")
        };
        let &(blk, what) = self
            .kj
            .plan
            .blocks
            .last()
            .expect("a plan ends with its commit block");
        debug_assert_eq!(what, LogBlock::Commit);
        if fua {
            fs.stats.fua_writes_issued += 1;
        }
        let bio = Bio {
            sector: fs.sector_of(blk),
            sectors: SECTORS_PER_PAGE as u32,
            ..self.jbd2_bio(Op::Write, 0, 0, fua)
        };
        self.kj.stage = Stage::CommitBlock;
        self.jbd2_queue(now, vec![bio], 1, b);
    }

    /// The commit is durable: buffers to writeback and the checkpoint
    /// list, freed blocks released, waiters woken, the next commit started.
    fn finish_commit<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("commit without ext4")
        };
        let j = fs.journal_mut().expect("commit with a journal");
        let t = j.finish_commit();
        let committed = j.committed_tid();
        let bdev = fs.bdev();
        for buf in &t.bufs {
            match *buf {
                Buf::Meta(blk) => self.cache.mark_dirty(bdev, blk, 1, now),
                Buf::Data { file, page, blk } => {
                    // A page truncated away (and perhaps written again
                    // elsewhere) while its transaction committed has no
                    // home left to write (`journal_unmap_buffer`).
                    if fs.owns(file)
                        && page < self.cache.file_pages(file)
                        && fs.page_home_is(file, page, blk)
                    {
                        self.cache.mark_dirty(file, page, 1, now);
                    } else {
                        fs.journal_mut().expect("journal").written_home(buf);
                    }
                }
            }
        }
        fs.release_committed(&t.freed);
        self.kj.stage = Stage::Idle;
        let mut i = 0;
        while i < self.kj.waiters.len() {
            let (task, tid) = self.kj.waiters[i];
            if tid <= committed {
                self.kj.waiters.swap_remove(i);
                let wake = self.wake(task, now);
                b.q.at(wake, HostEvent::Step(task));
            } else {
                i += 1;
            }
        }
        self.jbd2_kick(now, b);
    }

    /// `jbd2_log_do_checkpoint` of the oldest committed transaction.
    fn checkpoint<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("checkpoint without ext4")
        };
        let bdev = fs.bdev();
        let j = fs.journal_mut().expect("checkpoint with a journal");
        j.note_checkpoint();
        let (tid, bufs) = j.oldest_checkpoint().expect("something to checkpoint");
        let template = self.jbd2_bio(Op::Write, 0, 0, false);
        let mut bios = Vec::new();
        for buf in bufs {
            let (m, page) = match buf {
                Buf::Meta(blk) => (bdev, blk),
                Buf::Data { file, page, .. } => (file, page),
            };
            if self.cache.take_dirty_page(m, page) {
                self.write_bios(now, m, page, 1, template, Notify::None, &mut bios);
            } else if !self.cache.is_dirty_or_writeback(m, page) {
                // A clean buffer just leaves the checkpoint list.
                if let Some(j) = self.mount.ext4_mut().and_then(|fs| fs.journal_mut()) {
                    j.written_home(&buf);
                }
            }
        }
        self.jbd2_queue(now, bios, 0, b);
        self.kj.stage = Stage::CpWrite(tid);
        self.jbd2_progress(now, b);
    }

    /// `jbd2_cleanup_journal_tail`: flush, then the journal superblock
    /// (with the new tail) with FUA.
    fn cleanup_tail<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        let barrier = self.mount.ext4().is_some_and(|fs| fs.config().barrier);
        if barrier {
            self.jbd2_flush(now, Stage::CpFlush, b);
        } else {
            self.write_journal_super(now, false, b);
        }
    }

    fn write_journal_super<E: HostEvents>(&mut self, now: Ns, fua: bool, b: &mut Below<E>) {
        let Mount::Ext4(fs) = &mut self.mount else {
            unreachable!("checkpoint without ext4")
        };
        let sb = fs.journal().expect("journal").superblock();
        if fua {
            fs.stats.fua_writes_issued += 1;
        }
        let bio = Bio {
            sector: fs.sector_of(sb),
            sectors: SECTORS_PER_PAGE as u32,
            ..self.jbd2_bio(Op::Write, 0, 0, fua)
        };
        self.kj.stage = Stage::CpSuper;
        self.jbd2_queue(now, vec![bio], 1, b);
    }
}
