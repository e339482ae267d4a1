//! The host stage: application threads' system calls served through the
//! page cache (buffered reads with read-ahead, buffered writes, fsync,
//! O_SYNC and O_DIRECT), the writeback flusher, and the host CPU costs of
//! each step. It submits bios to the block stage below and takes their
//! completions back through [`Host::bio_done`].
//!
//! A buffered read walks the page cache like `do_generic_file_read`:
//! read-ahead decides what to read, the task submits those bios under one
//! plug and sleeps on the first page that is not up to date, then resumes
//! from it. Direct I/O submits bios of at most `max_sectors_kb` and waits
//! for all of them.

use super::call::Call;
use super::files::Files;
use super::page_cache::{FileId, PageCache, PageCacheStats, ReadPlan, ReadStep};
use super::syscall::Syscall;
use super::task::{Phase, Task};
use super::writeback::WritebackParams;
use crate::block::request::Bio;
use crate::block::{split_bio, BlockEvents, BlockStage};
use crate::driver::{DeviceTimes, Driver};
use crate::engine::{EventQueue, Slab};
use crate::platform::SharedCpu;
use crate::stats::report::{CallKind, Collector, Layer};
use crate::types::{Ns, Op, PAGE_BYTES, SECTORS_PER_PAGE, SECTOR_BYTES};

/// Owner tag bit of the host's bios: the bio moves page-cache pages
/// (read-ahead or writeback).
pub const PAGE_IO: u32 = 1 << 31;
/// Owner tag value: no call waits for this bio by id.
pub(super) const NO_CALL: u32 = PAGE_IO - 1;
/// Owner tags below this are host calls; [`PAGE_IO`] marks page-cache
/// I/O; the range between is left to other submitters (trace replay).
pub const HOST_CALLS: u32 = 1 << 30;

/// Events the host schedules for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// A task continues its current call (after the system call cost or a
    /// wake-up).
    Step(u32),
    /// A task's call returns to user space.
    Return(u32),
    /// A task's prepared bios reach the block layer (under one plug).
    SubmitPlug(u32),
    /// The writeback flusher wakes up.
    FlusherTick,
}

/// An event type that can carry the host's events and those of the stages
/// below it.
pub trait HostEvents: From<HostEvent> + BlockEvents {}
impl<E: From<HostEvent> + BlockEvents> HostEvents for E {}

/// The stages below the host, lent to it while it handles something.
pub struct Below<'a, E> {
    /// The block stage.
    pub block: &'a mut BlockStage,
    /// The driver the block stage rings.
    pub driver: &'a mut Driver,
    /// The event queue.
    pub q: &'a mut EventQueue<E>,
    /// Where finished calls are recorded.
    pub collector: &'a mut Collector,
}

/// The host stage.
pub struct Host {
    /// The CPU the host's steps run on (costs at its current clock).
    pub(super) cpu: SharedCpu,
    pub(super) cache: PageCache,
    pub(super) files: Files,
    pub(super) tasks: Vec<Task>,
    pub(super) calls: Slab<Call>,
    /// Tasks sleeping on a page: `(task, file, page)`.
    waiters: Vec<(u32, FileId, u64)>,
    /// Writers sleeping in balance_dirty_pages.
    pub(super) throttled: Vec<u32>,
    pub(super) wb: WritebackParams,
    /// The writeback flusher runs (a job writes through the page cache).
    pub(super) flusher: bool,
    /// A flusher run is already scheduled.
    pub(super) flusher_kicked: bool,
    /// The flusher backed off on congestion and waits for a completion.
    pub(super) flusher_waiting: bool,
    pub(super) wb_files: Vec<FileId>,
    /// Thread index of the flusher's bios (right after the tasks; the
    /// request log shows it).
    pub(super) flusher_thread: u32,
    plan: ReadPlan,
    /// Largest bio, sectors (`max_sectors_kb` × 2).
    pub(super) max_bio_sectors: u32,
}

impl Host {
    /// A host with `cache` holding `files`, running on `cpu`, with the
    /// given writeback policy and no tasks yet; `flusher` says whether the
    /// writeback flusher runs; bios are at most `max_bio_sectors` long.
    pub fn new(
        cpu: SharedCpu,
        cache: PageCache,
        files: Files,
        wb: WritebackParams,
        flusher: bool,
        max_bio_sectors: u32,
    ) -> Host {
        Host {
            cpu,
            cache,
            files,
            tasks: Vec::new(),
            calls: Slab::with_capacity(256),
            waiters: Vec::with_capacity(64),
            throttled: Vec::new(),
            wb,
            flusher,
            flusher_kicked: false,
            flusher_waiting: false,
            wb_files: Vec::new(),
            flusher_thread: 0,
            plan: ReadPlan::default(),
            max_bio_sectors,
        }
    }

    /// Creates the kernel side of the next application thread; returns its
    /// thread index. The flusher's index follows the last task.
    pub fn add_task(&mut self, task: Task) -> u32 {
        self.tasks.push(task);
        self.flusher_thread = self.tasks.len() as u32;
        self.tasks.len() as u32 - 1
    }

    /// Thread indices the host uses: its tasks and, when it runs, the
    /// flusher.
    pub fn threads(&self) -> u32 {
        self.tasks.len() as u32 + self.flusher as u32
    }

    /// The files laid out on the device.
    pub fn files(&self) -> &Files {
        &self.files
    }

    /// Page-cache counters.
    pub fn cache_stats(&self) -> PageCacheStats {
        self.cache.stats()
    }

    /// Calls in progress.
    pub fn calls_in_progress(&self) -> usize {
        self.calls.len()
    }

    /// Starts the host's own activity at time 0: the flusher's periodic
    /// wake-ups.
    pub fn start<E: HostEvents>(&mut self, q: &mut EventQueue<E>) {
        if self.flusher {
            q.at(self.wb.writeback_interval_ns(), HostEvent::FlusherTick);
        }
    }

    /// Handles one of the host's own events; `workload_running` says
    /// whether anything above may still issue work (the periodic flusher
    /// stops when nothing will). Returns the thread whose call returned to
    /// user space, if one did.
    pub fn handle<E: HostEvents>(
        &mut self,
        now: Ns,
        ev: HostEvent,
        workload_running: bool,
        b: &mut Below<E>,
    ) -> Option<u32> {
        match ev {
            HostEvent::Step(t) => self.step(now, t, b),
            HostEvent::Return(t) => return self.call_return(now, t, b),
            HostEvent::SubmitPlug(t) => self.submit_plug(now, t, b),
            HostEvent::FlusherTick => self.flusher_tick(now, workload_running, b),
        }
        None
    }

    /// Thread `t` enters system call `sc` at `now`.
    pub fn syscall<E: HostEvents>(&mut self, now: Ns, t: u32, sc: Syscall, b: &mut Below<E>) {
        let (kind, op, off, bytes) = match sc {
            Syscall::Fsync => {
                let call = self.calls.insert(Call::new(now, t, CallKind::Fsync, 0));
                let task = &mut self.tasks[t as usize];
                task.phase = Phase::Fsync;
                task.call = Some(call);
                let entered = self.enter(now, t, call, 0);
                b.q.at(entered, HostEvent::Step(t));
                return;
            }
            Syscall::Read { offset, bytes } => (CallKind::Read, Op::Read, offset, bytes),
            Syscall::Write { offset, bytes } => (CallKind::Write, Op::Write, offset, bytes),
        };
        let task = &mut self.tasks[t as usize];
        task.call_off = off;
        task.call_bytes = bytes;
        task.pos_page = off / PAGE_BYTES;
        task.end_page = (off + bytes).div_ceil(PAGE_BYTES);
        let call = self.calls.insert(Call::new(now, t, kind, bytes));
        self.tasks[t as usize].call = Some(call);
        let entered = self.enter(now, t, call, bytes);
        let task = &mut self.tasks[t as usize];
        if task.flags.direct {
            // O_DIRECT: bios of at most max_sectors_kb go straight to the
            // block layer after the system call and the per-bio cost; a
            // synchronous write is followed by a cache flush.
            task.phase = Phase::WaitIo;
            let then_flush = op == Op::Write && task.flags.sync;
            let sector = task.file_first_sector + off / SECTOR_BYTES;
            let template = task.bio(t, op, sector, (bytes / SECTOR_BYTES) as u32, call);
            let mut bios = std::mem::take(&mut task.pending_bios);
            let n = split_bio(template, self.max_bio_sectors, &mut bios);
            self.tasks[t as usize].pending_bios = bios;
            self.calls[call].pending = n;
            self.calls[call].then_flush = then_flush;
            let at = entered + self.cpu.thread(t, entered, |c| n as Ns * c.block_submit);
            self.calls[call].charge(Layer::BlockQueue, at);
            b.q.at(at, HostEvent::SubmitPlug(t));
        } else {
            task.phase = if op == Op::Read {
                Phase::Read
            } else {
                Phase::Write
            };
            b.q.at(entered, HostEvent::Step(t));
        }
    }

    /// Call `call` of thread `t` moving `bytes` enters the kernel at `now`:
    /// the platform layer, then the system call (entry, VFS, file system)
    /// run on the thread's core. Returns when the kernel work can start.
    fn enter(&mut self, now: Ns, t: u32, call: u32, bytes: u64) -> Ns {
        let platform = now + self.cpu.thread(t, now, |c| c.platform(bytes));
        let entered = platform
            + self
                .cpu
                .thread(t, platform, |c| c.syscall_entry + c.syscall);
        let c = &mut self.calls[call];
        c.charge(Layer::Platform, platform);
        c.charge(Layer::SyscallFs, entered);
        entered
    }

    /// Continues task `t`'s current call.
    fn step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        match self.tasks[t as usize].phase {
            Phase::Read => self.read_step(now, t, b),
            Phase::Write => self.write_step(now, t, b),
            Phase::Fsync => self.fsync_step(now, t, b),
            Phase::WaitIo | Phase::Throttled => {}
        }
    }

    /// Walks the page cache for a buffered read from the current page.
    fn read_step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let ra_max = b.block.layer.params().read_ahead_kb / 4;
        let congested = b.block.layer.congested(true);
        let task = &mut self.tasks[t as usize];
        let step = self.cache.read_step(
            task.file_cache,
            &mut task.ra,
            task.pos_page,
            task.end_page,
            ra_max,
            congested,
            &mut self.plan,
        );
        let submit_done = self.submit_plan(now, t, b);
        match step {
            ReadStep::Done => {
                let call = self.tasks[t as usize]
                    .call
                    .expect("stepping task has a call");
                let bytes = self.calls[call].bytes;
                let done = submit_done + self.cpu.thread(t, submit_done, |c| c.copy(bytes));
                self.calls[call].charge(Layer::SyscallFs, done);
                b.q.at(done, HostEvent::Return(t));
            }
            ReadStep::WaitFor { page } => self.wait_for_page(t, page, submit_done),
        }
    }

    /// A buffered write: read partial pages first (read-modify-write),
    /// dirty the pages, then return, throttle, or (O_SYNC) write back.
    fn write_step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let task = &self.tasks[t as usize];
        let (file, off, bytes) = (task.file_cache, task.call_off, task.call_bytes);
        let step = self.cache.write_begin(file, off, bytes, &mut self.plan);
        let submit_done = self.submit_plan(now, t, b);
        if let ReadStep::WaitFor { page } = step {
            self.wait_for_page(t, page, submit_done);
            return;
        }
        let task = &self.tasks[t as usize];
        let (first, end, sync) = (task.pos_page, task.end_page, task.flags.sync);
        let call = task.call.expect("writing task has a call");
        self.cache.mark_dirty(file, first, end - first, now);
        let copied = submit_done + self.cpu.thread(t, submit_done, |c| c.copy(bytes));
        self.calls[call].charge(Layer::SyscallFs, copied);
        if self.cache.over_background_thresh(&self.wb) {
            self.flusher_kick(now, b.q);
        }
        if sync {
            // O_SYNC: write the file's dirty pages back and flush, like
            // generic_write_sync -> fsync of the range.
            self.tasks[t as usize].phase = Phase::WaitIo;
            self.calls[call].then_flush = true;
            self.writeback_for_call(copied, t, call, b);
        } else if self.cache.over_dirty_limit(&self.wb) {
            self.tasks[t as usize].phase = Phase::Throttled;
            self.throttled.push(t);
            self.flusher_kick(now, b.q);
        } else {
            b.q.at(copied, HostEvent::Return(t));
        }
    }

    /// fsync(): write back the file's dirty pages synchronously, wait, then
    /// flush the device cache.
    fn fsync_step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let call = self.tasks[t as usize].call.expect("fsync has a call");
        self.tasks[t as usize].phase = Phase::WaitIo;
        self.calls[call].then_flush = true;
        self.writeback_for_call(now, t, call, b);
    }

    /// Submits the task's file's dirty pages as synchronous writes owned by
    /// `call` (or, with nothing dirty, goes straight to the call's flush).
    fn writeback_for_call<E: HostEvents>(&mut self, at: Ns, t: u32, call: u32, b: &mut Below<E>) {
        let task = &mut self.tasks[t as usize];
        let (file, first_sector) = (task.file_cache, task.file_first_sector);
        let max_pages = self.max_bio_sectors / SECTORS_PER_PAGE as u32;
        let mut bios = std::mem::take(&mut task.pending_bios);
        let mut n = 0;
        while let Some((first, pages)) = self.cache.take_dirty_run(file, max_pages) {
            bios.push(self.tasks[t as usize].bio(
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
            bios.push(self.tasks[t as usize].bio(t, Op::Flush, 0, 0, call));
            n = 1;
        }
        self.tasks[t as usize].pending_bios = bios;
        self.calls[call].pending = n;
        let submitted = at + self.cpu.thread(t, at, |c| n as Ns * c.block_submit);
        self.calls[call].charge(Layer::BlockQueue, submitted);
        b.q.at(submitted, HostEvent::SubmitPlug(t));
    }

    /// Turns the page cache's read decisions into bios of task `t`;
    /// returns when their submission ends.
    fn submit_plan<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) -> Ns {
        let task = &mut self.tasks[t as usize];
        let mut bios = std::mem::take(&mut task.pending_bios);
        let mut n = 0;
        let first_sector = task.file_first_sector;
        for io in &self.plan.submit {
            let template = task.bio(
                t,
                Op::Read,
                first_sector + io.first_page * SECTORS_PER_PAGE,
                io.pages * SECTORS_PER_PAGE as u32,
                PAGE_IO | NO_CALL,
            );
            n += split_bio(template, self.max_bio_sectors, &mut bios);
        }
        task.pending_bios = bios;
        let call = task.call;
        let submit_done = now + self.cpu.thread(t, now, |c| n as Ns * c.block_submit);
        if let Some(c) = call {
            self.calls[c].charge(Layer::BlockQueue, submit_done);
        }
        if n > 0 {
            b.q.at(submit_done, HostEvent::SubmitPlug(t));
        }
        submit_done
    }

    /// Task `t` sleeps on `page` (its bios, if any, are submitted at
    /// `_submit_done`, already charged to its call).
    fn wait_for_page(&mut self, t: u32, page: u64, _submit_done: Ns) {
        let task = &mut self.tasks[t as usize];
        task.pos_page = page.max(task.pos_page);
        self.waiters.push((t, task.file_cache, page));
    }

    /// The task's prepared bios enter the block layer under one plug.
    fn submit_plug<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let task = &mut self.tasks[t as usize];
        let mut bios = std::mem::take(&mut task.pending_bios);
        self.cpu.with(|c| c.submitted_by(t));
        b.block
            .submit_plugged(now, t, bios.drain(..), b.driver, b.q);
        self.tasks[t as usize].pending_bios = bios;
    }

    /// A bio the host submitted completed on the device (`times`): pages
    /// become up to date or clean, sleepers wake, and its call advances.
    pub fn bio_done<E: HostEvents>(
        &mut self,
        now: Ns,
        bio: &Bio,
        times: DeviceTimes,
        b: &mut Below<E>,
    ) {
        if bio.owner & PAGE_IO != 0 && bio.op == Op::Read {
            let f = self.files.get(self.files.index_of_sector(bio.sector));
            let first = (bio.sector - f.first_sector) / SECTORS_PER_PAGE;
            let pages = bio.sectors / SECTORS_PER_PAGE as u32;
            let fid = f.cache;
            self.cache.complete_read(fid, first, pages);
            let mut i = 0;
            while i < self.waiters.len() {
                let (t, wf, wp) = self.waiters[i];
                if wf == fid && wp >= first && wp < first + pages as u64 {
                    self.waiters.swap_remove(i);
                    let wake = now + self.cpu.with(|c| c.wake_thread(t, now));
                    if let Some(c) = self.tasks[t as usize].call {
                        let call = &mut self.calls[c];
                        call.waited(times, now);
                        call.charge(Layer::IrqWakeup, wake);
                    }
                    b.q.at(wake, HostEvent::Step(t));
                } else {
                    i += 1;
                }
            }
        }
        if bio.owner & PAGE_IO != 0 && bio.op == Op::Write {
            let fi = self.files.index_of_sector(bio.sector);
            let first = (bio.sector - self.files.get(fi).first_sector) / SECTORS_PER_PAGE;
            self.writeback_done(now, fi, first, bio.sectors / SECTORS_PER_PAGE as u32, b);
        }
        let id = bio.owner & !PAGE_IO;
        if id != NO_CALL && self.calls[id].bio_done(times, now) {
            self.call_io_done(now, id, b);
        }
    }

    /// All bios owned by call `id` have completed.
    fn call_io_done<E: HostEvents>(&mut self, now: Ns, id: u32, b: &mut Below<E>) {
        let t = self.calls[id].thread;
        if self.calls[id].then_flush {
            // Data is on the device: now flush its cache (REQ_FLUSH).
            let call = &mut self.calls[id];
            call.then_flush = false;
            call.pending = 1;
            let bio = self.tasks[t as usize].bio(t, Op::Flush, 0, 0, id);
            b.block.submit(now, [bio], b.driver, b.q);
        } else {
            let wake = now + self.cpu.with(|c| c.wake_thread(t, now));
            self.calls[id].charge(Layer::IrqWakeup, wake);
            b.q.at(wake, HostEvent::Return(t));
        }
    }

    /// Task `t`'s call returns to user space: it is recorded.
    fn call_return<E>(&mut self, now: Ns, t: u32, b: &mut Below<E>) -> Option<u32> {
        let id = self.tasks[t as usize].call.take()?;
        self.calls.remove(id).finish(now, b.collector);
        Some(t)
    }
}
