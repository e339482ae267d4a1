//! Synthetic closed-loop threads: each issues its next call when the
//! previous one returns, plus its think time.
//!
//! A buffered read walks the page cache like `do_generic_file_read`:
//! read-ahead decides what to read, the thread submits those bios under
//! one plug and sleeps on the first page that is not up to date, then
//! resumes from it. Direct I/O submits bios of at most `max_sectors_kb`
//! and waits for all of them.

use super::{Call, Event, Simulation, NO_CALL, PAGE_IO};
use crate::block::request::Bio;
use crate::config::{JobOp, Scenario};
use crate::engine::{component_rng, SimRng};
use crate::error::Result;
use crate::host::page_cache::{FileId, ReadStep};
use crate::host::readahead::RaState;
use crate::stats::report::{CallKind, CallRecord, Collector};
use crate::types::{
    us_to_ns, IoPrio, Ns, Op, NS_PER_MS, PAGE_BYTES, SECTORS_PER_PAGE, SECTOR_BYTES,
};
use crate::workload::synthetic::OffsetGen;

/// One synthetic thread.
pub(super) struct SimThread {
    pub pid: u32,
    pub ioprio: IoPrio,
    pub start_ns: Ns,
    file_first_sector: u64,
    file_cache: FileId,
    ra: RaState,
    gen: OffsetGen,
    rng: SimRng,
    remaining: u64,
    stop_at: Option<Ns>,
    think: Ns,
    op: JobOp,
    direct: bool,
    /// O_SYNC / O_DSYNC: writes return once on the device (then a flush).
    sync: bool,
    /// fsync() after this many writes (0 = never).
    fsync_every: u32,
    writes_since_fsync: u32,
    request_bytes: u64,
    /// Byte offset of the call in progress within the file.
    call_off: u64,
    /// What the thread's next `ThreadStep` continues.
    pub phase: Phase,
    /// The call in progress.
    pub call: Option<u32>,
    /// Buffered read progress: next page to walk and end page.
    pos_page: u64,
    end_page: u64,
    /// Bios prepared by the thread, submitted at its next `SubmitPlug`.
    pending_bios: Vec<Bio>,
    finished: bool,
}

/// Which part of a call a thread is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// A buffered read walking the page cache.
    Read,
    /// A buffered write (write_begin, then dirtying the pages).
    Write,
    /// Waiting for the data bios of a direct or synchronous write, or of
    /// an fsync's writeback.
    WaitIo,
    /// An fsync() call.
    Fsync,
    /// Sleeping in balance_dirty_pages until dirty pages drop.
    Throttled,
}

/// Builds the threads of every job, registering them with the collector.
pub(super) fn build(
    sc: &Scenario,
    files: &[(String, u64, u64, FileId)],
    collector: &mut Collector,
) -> Result<Vec<SimThread>> {
    let mut out = Vec::new();
    for (ji, job) in sc.jobs.iter().enumerate() {
        let (_, first_sector, pages, cache) = files
            .iter()
            .find(|f| f.0 == job.file)
            .cloned()
            .expect("validated: job file exists");
        let file_bytes = pages * PAGE_BYTES;
        for t in 0..job.threads {
            let id = out.len() as u32;
            let mut rng = component_rng(sc.seed, &format!("job{ji}.thread{t}"));
            let gen = OffsetGen::new(job, file_bytes, &mut rng);
            let remaining = job.requests.unwrap_or(gen.slots());
            let pid = job.pid.unwrap_or(1000 + 100 * ji as u32) + t;
            collector.add_thread(id, &job.name, pid);
            out.push(SimThread {
                pid,
                ioprio: job.ioprio(),
                start_ns: (job.start_ms * NS_PER_MS as f64).round() as Ns,
                file_first_sector: first_sector,
                file_cache: cache,
                ra: RaState::default(),
                gen,
                rng,
                remaining,
                stop_at: job
                    .duration_ms
                    .map(|d| ((job.start_ms + d) * NS_PER_MS as f64).round() as Ns),
                think: us_to_ns(job.think_time_us),
                op: job.op,
                direct: job.direct,
                sync: job.sync,
                fsync_every: job.fsync_every,
                writes_since_fsync: 0,
                request_bytes: job.request_bytes,
                call_off: 0,
                phase: Phase::Read,
                call: None,
                pos_page: 0,
                end_page: 0,
                pending_bios: Vec::with_capacity(16),
                finished: false,
            });
        }
    }
    Ok(out)
}

impl Simulation {
    pub(super) fn thread_issue(&mut self, now: Ns, t: u32) {
        let th = &mut self.threads[t as usize];
        if th.finished {
            return;
        }
        // An fsync() is due after every `fsync_every` writes.
        if th.fsync_every > 0 && th.writes_since_fsync >= th.fsync_every {
            th.writes_since_fsync = 0;
            th.phase = Phase::Fsync;
            let call = self.new_call(now, t, CallKind::Fsync, 0);
            self.threads[t as usize].call = Some(call);
            self.q.push(now + self.costs.syscall, Event::ThreadStep(t));
            return;
        }
        if th.remaining == 0 || th.stop_at.is_some_and(|s| now >= s) {
            th.finished = true;
            self.active_threads -= 1;
            return;
        }
        th.remaining -= 1;
        let off = th.gen.next_offset(&mut th.rng);
        let bytes = th.request_bytes;
        let kind = match th.op {
            JobOp::Read => CallKind::Read,
            JobOp::Write => {
                th.writes_since_fsync += 1;
                CallKind::Write
            }
        };
        th.call_off = off;
        th.pos_page = off / PAGE_BYTES;
        th.end_page = (off + bytes).div_ceil(PAGE_BYTES);
        let call = self.new_call(now, t, kind, bytes);
        let th = &mut self.threads[t as usize];
        th.call = Some(call);
        if th.direct {
            // O_DIRECT: bios of at most max_sectors_kb go straight to the
            // block layer after the system call and the per-bio cost; a
            // synchronous write is followed by a cache flush.
            th.phase = Phase::WaitIo;
            let op = if th.op == JobOp::Read {
                Op::Read
            } else {
                Op::Write
            };
            let then_flush = op == Op::Write && th.sync;
            let sector = th.file_first_sector + off / SECTOR_BYTES;
            let template = self.bio_for(t, op, sector, (bytes / SECTOR_BYTES) as u32, call);
            let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
            let n = self.push_bios(template, &mut bios);
            self.threads[t as usize].pending_bios = bios;
            self.calls[call].pending = n;
            self.calls[call].then_flush = then_flush;
            let at = now + self.costs.syscall + n as Ns * self.costs.block_submit;
            self.q.push(at, Event::SubmitPlug(t));
        } else {
            th.phase = if th.op == JobOp::Read {
                Phase::Read
            } else {
                Phase::Write
            };
            self.q.push(now + self.costs.syscall, Event::ThreadStep(t));
        }
    }

    fn new_call(&mut self, now: Ns, thread: u32, kind: CallKind, bytes: u64) -> u32 {
        self.calls.insert(Call {
            thread,
            kind,
            bytes,
            issue: now,
            pending: 0,
            submit: now,
            queue: 0,
            device: 0,
            then_flush: false,
        })
    }

    /// A bio of thread `t` owned by call `owner`.
    fn bio_for(&self, t: u32, op: Op, sector: u64, sectors: u32, owner: u32) -> Bio {
        let th = &self.threads[t as usize];
        Bio {
            op,
            sector,
            sectors,
            sync: true,
            fua: false,
            prio: false,
            pid: th.pid,
            thread: t,
            ioprio: th.ioprio,
            owner,
        }
    }

    /// Continues the thread's current call.
    pub(super) fn thread_step(&mut self, now: Ns, t: u32) {
        match self.threads[t as usize].phase {
            Phase::Read => self.read_step(now, t),
            Phase::Write => self.write_step(now, t),
            Phase::Fsync => self.fsync_step(now, t),
            Phase::WaitIo | Phase::Throttled => {}
        }
    }

    /// Walks the page cache for a buffered read from the current page.
    fn read_step(&mut self, now: Ns, t: u32) {
        let ra_max = self.block.params().read_ahead_kb / 4;
        let congested = self.block.congested(true);
        let th = &mut self.threads[t as usize];
        let step = self.cache.read_step(
            th.file_cache,
            &mut th.ra,
            th.pos_page,
            th.end_page,
            ra_max,
            congested,
            &mut self.plan,
        );
        let submit_done = self.submit_plan(now, t);
        match step {
            ReadStep::Done => {
                let call = self.threads[t as usize]
                    .call
                    .expect("stepping thread has a call");
                let bytes = self.calls[call].bytes;
                self.q
                    .push(submit_done + self.costs.copy(bytes), Event::ThreadDone(t));
            }
            ReadStep::WaitFor { page } => self.wait_for_page(t, page, submit_done),
        }
    }

    /// A buffered write: read partial pages first (read-modify-write),
    /// dirty the pages, then return, throttle, or (O_SYNC) write back.
    fn write_step(&mut self, now: Ns, t: u32) {
        let th = &self.threads[t as usize];
        let (file, off, bytes) = (th.file_cache, th.call_off, th.request_bytes);
        let step = self.cache.write_begin(file, off, bytes, &mut self.plan);
        let submit_done = self.submit_plan(now, t);
        if let ReadStep::WaitFor { page } = step {
            self.wait_for_page(t, page, submit_done);
            return;
        }
        let th = &self.threads[t as usize];
        let (first, end, sync) = (th.pos_page, th.end_page, th.sync);
        let call = th.call.expect("writing thread has a call");
        self.cache.mark_dirty(file, first, end - first, now);
        let copied = submit_done + self.costs.copy(bytes);
        if self.cache.over_background_thresh(&self.sc.writeback) {
            self.flusher_kick(now);
        }
        if sync {
            // O_SYNC: write the file's dirty pages back and flush, like
            // generic_write_sync -> fsync of the range.
            self.threads[t as usize].phase = Phase::WaitIo;
            self.calls[call].then_flush = true;
            self.writeback_for_call(copied, t, call);
        } else if self.cache.over_dirty_limit(&self.sc.writeback) {
            self.threads[t as usize].phase = Phase::Throttled;
            self.throttled.push(t);
            self.flusher_kick(now);
        } else {
            self.q.push(copied, Event::ThreadDone(t));
        }
    }

    /// fsync(): write back the file's dirty pages synchronously, wait, then
    /// flush the device cache.
    fn fsync_step(&mut self, now: Ns, t: u32) {
        let call = self.threads[t as usize].call.expect("fsync has a call");
        self.threads[t as usize].phase = Phase::WaitIo;
        self.calls[call].then_flush = true;
        self.writeback_for_call(now, t, call);
    }

    /// Submits the thread's file's dirty pages as synchronous writes owned
    /// by `call` (or, with nothing dirty, goes straight to the call's
    /// flush).
    fn writeback_for_call(&mut self, at: Ns, t: u32, call: u32) {
        let file = self.threads[t as usize].file_cache;
        let first_sector = self.threads[t as usize].file_first_sector;
        let max_pages = self.max_bio_sectors / SECTORS_PER_PAGE as u32;
        let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
        let mut n = 0;
        while let Some((first, pages)) = self.cache.take_dirty_run(file, max_pages) {
            bios.push(self.bio_for(
                t,
                Op::Write,
                first_sector + first * SECTORS_PER_PAGE,
                pages * SECTORS_PER_PAGE as u32,
                PAGE_IO | call,
            ));
            n += 1;
        }
        if n == 0 {
            // Nothing to write: the flush (if any) follows at once.
            self.calls[call].then_flush = false;
            bios.push(self.bio_for(t, Op::Flush, 0, 0, call));
            n = 1;
        }
        self.threads[t as usize].pending_bios = bios;
        self.calls[call].pending = n;
        self.q
            .push(at + n as Ns * self.costs.block_submit, Event::SubmitPlug(t));
    }

    /// Turns the page cache's read decisions in `self.plan` into bios of
    /// thread `t`; returns when their submission ends.
    fn submit_plan(&mut self, now: Ns, t: u32) -> Ns {
        let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
        let mut n = 0;
        let first_sector = self.threads[t as usize].file_first_sector;
        for i in 0..self.plan.submit.len() {
            let io = self.plan.submit[i];
            let template = self.bio_for(
                t,
                Op::Read,
                first_sector + io.first_page * SECTORS_PER_PAGE,
                io.pages * SECTORS_PER_PAGE as u32,
                PAGE_IO | NO_CALL,
            );
            n += self.push_bios(template, &mut bios);
        }
        self.threads[t as usize].pending_bios = bios;
        let submit_done = now + n as Ns * self.costs.block_submit;
        if n > 0 {
            self.q.push(submit_done, Event::SubmitPlug(t));
        }
        submit_done
    }

    fn wait_for_page(&mut self, t: u32, page: u64, submit_done: Ns) {
        let th = &mut self.threads[t as usize];
        th.pos_page = page.max(th.pos_page);
        if let Some(c) = th.call {
            self.calls[c].submit = submit_done;
        }
        self.waiters.push((t, th.file_cache, page));
    }

    /// The thread's prepared bios enter the block layer under one plug.
    pub(super) fn submit_plug(&mut self, now: Ns, t: u32) {
        let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
        if let Some(c) = self.threads[t as usize].call {
            self.calls[c].submit = now;
        }
        self.block.start_plug(t);
        for bio in bios.drain(..) {
            self.block.submit_bio(now, bio, true);
        }
        self.block.finish_plug(now, t);
        self.threads[t as usize].pending_bios = bios;
        self.after_block_change(now);
    }

    /// All bios owned by call `id` have completed.
    pub(super) fn call_io_done(&mut self, now: Ns, id: u32) {
        let thread = self.calls[id].thread;
        let is_thread = (thread as usize) < self.threads.len()
            && self.threads[thread as usize].call == Some(id);
        if self.calls[id].then_flush {
            // Data is on the device: now flush its cache (REQ_FLUSH).
            self.calls[id].then_flush = false;
            self.calls[id].pending = 1;
            self.calls[id].submit = now;
            let bio = if is_thread {
                self.bio_for(thread, Op::Flush, 0, 0, id)
            } else {
                unreachable!("trace records never chain a flush")
            };
            self.block.submit_bio(now, bio, false);
            self.after_block_change(now);
        } else if is_thread {
            self.q
                .push(now + self.costs.wakeup, Event::ThreadDone(thread));
        } else {
            // A trace record: it completes when its last bio does; in
            // closed loop its process then issues its next record.
            self.finish_call(now, id);
            if let Err(e) = self.trace_call_done(now, thread) {
                self.deferred_error.get_or_insert(e);
            }
        }
    }

    /// The thread's call returns to user space.
    pub(super) fn thread_done(&mut self, now: Ns, t: u32) {
        let Some(id) = self.threads[t as usize].call.take() else {
            return;
        };
        self.finish_call(now, id);
        let think = self.threads[t as usize].think;
        self.q.push(now + think, Event::ThreadIssue(t));
    }

    pub(super) fn finish_call(&mut self, now: Ns, id: u32) {
        let c = self.calls.remove(id);
        self.collector.record(&CallRecord {
            thread: c.thread,
            kind: c.kind,
            bytes: c.bytes,
            issue: c.issue,
            done: now,
            queue: c.queue,
            device: c.device,
        });
    }
}
