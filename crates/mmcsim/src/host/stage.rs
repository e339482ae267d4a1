//! The host stage: application threads' system calls served through the
//! VFS, the page cache (buffered reads with read-ahead, buffered writes,
//! O_SYNC, O_DIRECT), the mounted files (raw extents or a file system
//! behind [`FileSystem`]), the writeback flusher, and the host CPU costs of
//! each step. It submits bios to the block stage below and takes
//! their completions back through [`Host::bio_done`].
//!
//! A buffered read walks the page cache like `do_generic_file_read`:
//! read-ahead decides what to read, the task submits those bios under one
//! plug and sleeps on the first page that is not up to date, then resumes
//! from it. Direct I/O submits bios of at most `max_sectors_kb` and waits
//! for all of them.
//!
//! Submitters of the host's bios ([`Submitter`]): `Call`, the call that
//! waits for the bio; `PageIo`, an index into the table of page-cache I/O
//! in flight (which mapping and pages a bio moves, and whom to tell); `Fs`
//! for the file system's own bios (the journal thread's log writes and
//! flushes), whose completions go to [`FileSystem::bio_done`].

use std::collections::{BTreeMap, VecDeque};

use super::call::Call;
use super::errno::Errno;
use super::fs::{FileSystem, FsEvent, Kernel, PageRun, Upcall, UpcallOp};
use super::kernel::{page_write_bios, HostKernel};
use super::page_cache::{FileId, PageCache, PageCacheStats, ReadPlan, ReadStep};
use super::server::Serving;
use super::syscall::{Fd, Syscall};
use super::task::{AfterIo, Node, OpenFile, Phase, Task};
use super::vfs::Mount;
use super::writeback::WritebackParams;
use crate::block::request::{Bio, Submitter};
use crate::block::{split_bio, BlockEvents, BlockStage};
use crate::engine::{EventQueue, Slab};
use crate::platform::SharedCpu;
use crate::stats::report::{CallKind, Collector, Layer};
use crate::stats::DeviceTimes;
use crate::types::{Ns, Op, PAGE_BYTES, SECTORS_PER_PAGE, SECTOR_BYTES};

/// The most bytes one `read()`/`write()` moves (`MAX_RW_COUNT` =
/// `INT_MAX & PAGE_MASK`, include/linux/fs.h): `rw_verify_area` clamps a
/// longer count to it, so the call returns a short count.
pub const MAX_RW_COUNT: u64 = 0x7fff_f000;

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
    /// An event of the mounted file system (its kernel threads' bios, its
    /// timers).
    Fs(FsEvent),
    /// One of a task's asynchronous I/Os completed and the task has reaped
    /// it (`io_getevents`).
    Reaped(u32),
}

/// An event type that can carry the host's events and those of the stages
/// below it.
pub trait HostEvents: From<HostEvent> + BlockEvents {}
impl<E: From<HostEvent> + BlockEvents> HostEvents for E {}

/// The stage below the host (the block stage), lent to it while it
/// handles something, with the event queue and the run's counters. A
/// workload reaches the block device only through the host's methods on
/// it (see `blockdev.rs`).
pub struct Below<'a, E> {
    /// The block stage.
    pub(super) block: &'a mut BlockStage,
    /// The event queue.
    pub q: &'a mut EventQueue<E>,
    /// Where finished calls are recorded.
    pub collector: &'a mut Collector,
}

impl<'a, E> Below<'a, E> {
    /// Lends `block`, the event queue `q` and the run's counters.
    pub fn new(
        block: &'a mut BlockStage,
        q: &'a mut EventQueue<E>,
        collector: &'a mut Collector,
    ) -> Self {
        Below {
            block,
            q,
            collector,
        }
    }
}

/// Whom a page-cache bio's completion concerns besides the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Notify {
    /// Nobody (read-ahead, background writeback).
    None,
    /// The call with this id waits for it (counted in its `pending`).
    Call(u32),
    /// The call with this id waits for the file's writeback to drain; the
    /// bio's times go into its latency split.
    Split(u32),
}

/// Page-cache I/O in flight: a physically contiguous run of a mapping's
/// pages, possibly split into several bios.
#[derive(Clone, Copy, Debug)]
pub(super) struct PageIo {
    pub mapping: FileId,
    pub first_page: u64,
    pub sector: u64,
    pub bios: u32,
    pub notify: Notify,
}

/// The host stage.
pub struct Host {
    /// The CPU the host's steps run on (costs at its current clock).
    pub(super) cpu: SharedCpu,
    pub(super) cache: PageCache,
    pub(super) mount: Mount,
    pub(super) tasks: Vec<Task>,
    pub(super) calls: Slab<Call>,
    /// Page-cache I/O in flight, by the index in its bios' [`Submitter::PageIo`].
    pub(super) ios: Slab<PageIo>,
    /// Tasks sleeping on a page: `(task, file, page)`.
    waiters: Vec<(u32, FileId, u64)>,
    /// Tasks sleeping until a mapping's (or, `None`, every mapping's)
    /// writeback drains (`filemap_fdatawait`).
    pub(super) wb_waiters: Vec<(u32, Option<FileId>)>,
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
    /// Durability acknowledgements, while recorded (module `durability`).
    pub(super) durable: Option<Vec<super::DurableReturn>>,
    /// Which file pages went to which logical pages, while durability is
    /// recorded (module `durability`).
    pub(super) file_writes: Option<super::durability::FileWriteLog>,
    plan: ReadPlan,
    /// Scratch runs of mapped pages.
    pub(super) runs: Vec<PageRun>,
    /// Largest bio, sectors (`max_sectors_kb` × 2).
    pub(super) max_bio_sectors: u32,
    /// Tasks in `io_getevents`: `(task, 0)` asleep, waiting for an
    /// asynchronous I/O; `(task, t)` being woken, running from `t` ns.
    aio_sleepers: Vec<(u32, Ns)>,
    /// Forwarding mounts (FUSE): the request each server thread is on.
    pub(super) serving: Vec<Option<Serving>>,
    /// The server's descriptors of lower files, by (sender task, sender's
    /// descriptor, inode): one per open, as sdcard keeps a handle per
    /// FUSE_OPEN.
    pub(super) server_files: BTreeMap<(u32, u32, u32), OpenFile>,
    /// Requests a task still has to send, in order, each after the
    /// previous one's reply.
    pub(super) chains: BTreeMap<u32, VecDeque<Upcall>>,
    /// Forwarded namespace calls in progress (FUSE).
    pub(super) ns: super::fuse_namei::NsCalls,
}

impl Host {
    /// A host with `cache` holding the files of `mount`, the given costs
    /// and writeback policy, and no tasks yet; `flusher` says whether the
    /// writeback flusher runs (always with a file system, whose metadata
    /// is written back); bios are at most `max_bio_sectors` long.
    pub fn new(
        cpu: SharedCpu,
        cache: PageCache,
        mount: Mount,
        wb: WritebackParams,
        flusher: bool,
        max_bio_sectors: u32,
    ) -> Host {
        let flusher = flusher || mount.fs().is_some();
        Host {
            cpu,
            cache,
            mount,
            tasks: Vec::new(),
            calls: Slab::with_capacity(256),
            ios: Slab::with_capacity(256),
            waiters: Vec::with_capacity(64),
            wb_waiters: Vec::new(),
            throttled: Vec::new(),
            wb,
            flusher,
            flusher_kicked: false,
            flusher_waiting: false,
            wb_files: Vec::new(),
            flusher_thread: 0,
            durable: None,
            file_writes: None,
            plan: ReadPlan::default(),
            runs: Vec::with_capacity(8),
            max_bio_sectors,
            aio_sleepers: Vec::new(),
            serving: Vec::new(),
            server_files: BTreeMap::new(),
            chains: BTreeMap::new(),
            ns: Default::default(),
        }
    }

    /// Creates the kernel side of the next application thread; returns its
    /// thread index. The flusher's index follows the last task, then the
    /// file system's kernel threads' (the journal thread).
    pub fn add_task(&mut self, task: Task) -> u32 {
        self.tasks.push(task);
        self.flusher_thread = self.tasks.len() as u32;
        if let Some(fs) = self.mount.fs_mut() {
            fs.set_first_thread(self.flusher_thread + 1);
        }
        self.tasks.len() as u32 - 1
    }

    /// Thread indices the host uses: its tasks and, when they run, the
    /// flusher and the file system's kernel threads.
    pub fn threads(&self) -> u32 {
        let fs_threads = self.mount.fs().map_or(0, |fs| fs.threads());
        // The application threads come first (server threads, when a
        // forwarding mount runs them, are counted in `fs_threads`).
        self.flusher_thread + self.flusher as u32 + fs_threads
    }

    /// Runs `f` on the mounted file system with the [`Kernel`] the host
    /// lends it (page cache, page I/O, submission, timers, wake-ups);
    /// `None` on the raw layout.
    pub(super) fn with_fs<E: HostEvents, R>(
        &mut self,
        b: &mut Below<E>,
        f: impl FnOnce(&mut dyn FileSystem, &mut dyn Kernel) -> R,
    ) -> Option<R> {
        let Mount::Fs(fs) = &mut self.mount else {
            return None;
        };
        let mut k = HostKernel {
            cache: &mut self.cache,
            ios: &mut self.ios,
            tasks: &self.tasks,
            calls: &mut self.calls,
            cpu: &self.cpu,
            max_bio_sectors: self.max_bio_sectors,
            below: b,
        };
        Some(f(fs.as_mut(), &mut k))
    }

    /// After a step that may have changed file-system metadata: the file
    /// system arms its periodic work and starts what is due
    /// ([`FileSystem::changed`]).
    pub(super) fn after_fs_change<E: HostEvents>(&mut self, now: Ns, b: &mut Below<E>) {
        self.with_fs(b, |fs, k| fs.changed(now, k));
    }

    /// What is mounted.
    pub fn mount(&self) -> &Mount {
        &self.mount
    }

    /// Page-cache counters.
    pub fn cache_stats(&self) -> PageCacheStats {
        self.cache.stats()
    }

    /// The file-system report, when a file system is mounted.
    pub fn fs_report(&self) -> Option<super::fs::FsReport> {
        Some(self.mount.fs()?.report())
    }

    /// Calls in progress.
    pub fn calls_in_progress(&self) -> usize {
        self.calls.len()
    }

    /// The return value of thread `t`'s last call (bytes, descriptor or
    /// offset; −errno on failure).
    pub fn retval(&self, t: u32) -> i64 {
        self.tasks[t as usize].ret
    }

    /// Size of the file at `path`, bytes, if it exists.
    pub fn file_size(&self, path: &str) -> Option<u64> {
        let (node, _) = self.mount.lookup(path).ok()?;
        Some(self.mount.size(node))
    }

    /// Opens an existing file for thread `t` before the run (untimed, like
    /// a descriptor the process already holds); returns the descriptor.
    pub fn open_untimed(
        &mut self,
        t: u32,
        path: &str,
        flags: super::syscall::OpenFlags,
    ) -> Result<Fd, crate::error::Error> {
        use crate::error::{Error, OpenProblem};
        let bad = |problem| Error::Open {
            path: path.to_string(),
            problem,
        };
        let (node, mapping) = self
            .mount
            .lookup(path)
            .map_err(|e| bad(OpenProblem::Errno(e.code())))?;
        if flags.direct && self.forwarded(mapping) {
            return Err(bad(OpenProblem::DirectOnFuse));
        }
        if let (Mount::Fs(fs), Node::Inode(ino)) = (&mut self.mount, node) {
            fs.hold(ino);
        }
        Ok(self.tasks[t as usize].install(OpenFile {
            node,
            mapping,
            flags,
            pos: 0,
            ra: Default::default(),
        }))
    }

    /// Starts the host's own activity at time 0: the flusher's periodic
    /// wake-ups.
    pub fn start<E: HostEvents>(&mut self, q: &mut EventQueue<E>) {
        self.spawn_servers();
        // dirty_writeback_centisecs = 0 disables the periodic wake-ups.
        if self.flusher && self.wb.writeback_interval_ns() > 0 {
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
            HostEvent::Fs(ev) => {
                self.with_fs(b, |fs, k| fs.event(now, ev, k));
            }
            HostEvent::Reaped(t) => {
                // The thread runs as it reaps: it no longer sleeps in
                // io_getevents (it may have gone to sleep after this
                // completion arrived, before reaping it).
                self.aio_sleepers.retain(|&(s, _)| s != t);
                return Some(t);
            }
        }
        None
    }

    /// Thread `t` enters system call `sc` at `now`.
    pub fn syscall<E: HostEvents>(&mut self, now: Ns, t: u32, sc: Syscall, b: &mut Below<E>) {
        // Every path sets its result; a call that sets none returns 0.
        self.tasks[t as usize].ret = 0;
        match sc {
            Syscall::Read { fd, bytes } => self.rw(now, t, fd, None, bytes, Op::Read, b),
            Syscall::Pread { fd, offset, bytes } => {
                self.rw(now, t, fd, Some(offset), bytes, Op::Read, b)
            }
            Syscall::Write { fd, bytes } => self.rw(now, t, fd, None, bytes, Op::Write, b),
            Syscall::Pwrite { fd, offset, bytes } => {
                self.rw(now, t, fd, Some(offset), bytes, Op::Write, b)
            }
            Syscall::Fsync { fd } => self.fsync(now, t, fd, false, b),
            Syscall::Fdatasync { fd } => self.fsync(now, t, fd, true, b),
            Syscall::Sync => self.sync(now, t, b),
            other => self.namei(now, t, other, b),
        }
    }

    /// Thread `t` submits one asynchronous O_DIRECT read or write of
    /// `bytes` at `offset` of its descriptor `fd` at `now` (`io_submit` of
    /// one iocb, as fio's libaio and io_uring engines do at
    /// `iodepth_batch=1`): the system call entry, the file-system mapping
    /// and the block submission run on the thread's core, then the thread
    /// goes on without waiting. Returns when `io_submit` returns. The I/O
    /// is recorded as one call from `now` to its completion, which the
    /// thread learns of through [`HostEvent::Reaped`]; a thread asleep in
    /// [`Host::aio_getevents`] is woken for it first.
    #[allow(clippy::too_many_arguments)]
    pub fn aio_submit<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        fd: Fd,
        op: Op,
        offset: u64,
        bytes: u64,
        b: &mut Below<E>,
    ) -> Ns {
        let kind = if op == Op::Read {
            CallKind::Read
        } else {
            CallKind::Write
        };
        let mut c = Call::new(now, t, kind, bytes);
        c.aio = true;
        let call = self.calls.insert(c);
        let entered = self.enter(now, t, call, bytes);
        let task = &mut self.tasks[t as usize];
        let direct = task.file(fd).is_some_and(|f| f.flags.direct);
        if bytes == 0 || !direct {
            // Nothing to move, or not an O_DIRECT descriptor (the jobs
            // submit asynchronously on O_DIRECT only): it completes at once.
            self.aio_complete(entered, call, b);
            return entered;
        }
        task.fd = fd;
        task.after_io = AfterIo::Return;
        self.direct_io(now, entered, t, call, op, offset, bytes, b)
    }

    /// Thread `t` waits in `io_getevents` for one of its asynchronous I/Os
    /// to complete: the next completion wakes it (remote wake-up cost).
    pub fn aio_getevents(&mut self, t: u32) {
        if !self.aio_sleepers.iter().any(|&(s, _)| s == t) {
            self.aio_sleepers.push((t, 0));
        }
    }

    /// Asynchronous call `id` completed at `now`: its thread, woken first
    /// when asleep in `io_getevents`, reaps it; it is recorded.
    fn aio_complete<E: HostEvents>(&mut self, now: Ns, id: u32, b: &mut Below<E>) {
        let t = self.calls[id].thread;
        let done = match self.aio_sleepers.iter().position(|&(s, _)| s == t) {
            Some(i) if self.aio_sleepers[i].1 == 0 => {
                let wake = now + self.cpu.with(|c| c.wake_thread(t, now));
                self.aio_sleepers[i].1 = wake;
                self.calls[id].charge(Layer::IrqWakeup, wake);
                wake
            }
            // Its wake-up is under way: it reaps this one once running.
            Some(i) => {
                let running = self.aio_sleepers[i].1.max(now);
                self.calls[id].charge(Layer::IrqWakeup, running);
                running
            }
            None => now,
        };
        self.calls.remove(id).finish(done, b.collector);
        b.q.at(done, HostEvent::Reaped(t));
    }

    /// A call that fails at once with `err` (after the system call cost).
    pub(super) fn fail<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        kind: CallKind,
        err: Errno,
        b: &mut Below<E>,
    ) {
        let call = self.calls.insert(Call::new(now, t, kind, 0));
        let task = &mut self.tasks[t as usize];
        task.call = Some(call);
        task.ret = -err.code();
        let at = self.enter(now, t, call, 0);
        b.q.at(at, HostEvent::Return(t));
    }

    /// read/pread/write/pwrite of `bytes` at `offset` (the descriptor's
    /// position when `None`), after the checks Linux makes before any I/O
    /// ([`Host::rw_checks`]); a write may be short (ENOSPC).
    #[allow(clippy::too_many_arguments)]
    fn rw<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        fd: Fd,
        offset: Option<u64>,
        bytes: u64,
        op: Op,
        b: &mut Below<E>,
    ) {
        let kind = if op == Op::Read {
            CallKind::Read
        } else {
            CallKind::Write
        };
        let (off, bytes) = match self.rw_checks(t, fd, offset, bytes, op) {
            Ok(v) => v,
            Err(e) => return self.fail(now, t, kind, e, b),
        };
        let task = &mut self.tasks[t as usize];
        task.fd = fd;
        task.ret = bytes as i64;
        task.after_io = AfterIo::Return;
        if offset.is_none() {
            task.cur_mut().pos = off + bytes;
        }
        task.call_off = off;
        task.call_bytes = bytes;
        task.pos_page = off / PAGE_BYTES;
        task.end_page = (off + bytes).div_ceil(PAGE_BYTES);
        let call = self.calls.insert(Call::new(now, t, kind, bytes));
        self.tasks[t as usize].call = Some(call);
        let mapping = self.tasks[t as usize].cur().mapping;
        if self.forwarded(mapping) {
            let end = self.tasks[t as usize].end_page;
            self.cache.extend_file(mapping, end);
        }
        let entered = self.enter(now, t, call, bytes);
        let task = &mut self.tasks[t as usize];
        if bytes == 0 {
            b.q.at(entered, HostEvent::Return(t));
            return;
        }
        if task.cur().flags.direct {
            self.direct_io(now, entered, t, call, op, off, bytes, b);
        } else {
            task.phase = if op == Op::Read {
                Phase::Read
            } else {
                Phase::Write
            };
            b.q.at(entered, HostEvent::Step(t));
        }
    }

    /// The checks of `vfs_read`/`vfs_write` before any I/O, in the
    /// kernel's order: an open descriptor with the access mode (EBADF), not
    /// a directory (EISDIR), `rw_verify_area` (a count or offset that is
    /// negative as `ssize_t`/`loff_t`, or an end that overflows `loff_t`:
    /// EINVAL; the count clamped to [`MAX_RW_COUNT`]), then on a file
    /// system `generic_write_checks` (a write at or past its `s_maxbytes`,
    /// [`FileSystem::max_bytes`]: EFBIG, else clamped to it), the read
    /// clamped to the file size, and a write shortened to the blocks the
    /// file system can still reserve (none: ENOSPC). Returns the offset
    /// and the bytes the call moves.
    fn rw_checks(
        &self,
        t: u32,
        fd: Fd,
        offset: Option<u64>,
        bytes: u64,
        op: Op,
    ) -> Result<(u64, u64), Errno> {
        let of = self.tasks[t as usize].file(fd).ok_or(Errno::BadF)?;
        let allowed = if op == Op::Read {
            of.flags.access.reads()
        } else {
            of.flags.access.writes()
        };
        if !allowed {
            return Err(Errno::BadF);
        }
        let (node, append) = (of.node, of.flags.append);
        if let (Mount::Fs(fs), Node::Inode(ino)) = (&self.mount, node) {
            if fs.is_dir(ino) {
                return Err(Errno::IsDir);
            }
        }
        let size = self.mount.size(node);
        let off = match offset {
            Some(o) => o,
            None if op == Op::Write && append => size,
            None => of.pos,
        };
        let max = i64::MAX as u64;
        if bytes > max || off > max || off + bytes > max {
            return Err(Errno::Inval);
        }
        let bytes = bytes.min(MAX_RW_COUNT);
        let Mount::Fs(fs) = &self.mount else {
            return Ok((off, bytes));
        };
        let Node::Inode(ino) = node else {
            unreachable!("node of another mount")
        };
        if op == Op::Read {
            return Ok((off, bytes.min(size.saturating_sub(off))));
        }
        if bytes == 0 {
            return Ok((off, 0));
        }
        let max = fs.max_bytes();
        if off >= max {
            return Err(Errno::FBig);
        }
        let bytes = bytes.min(max - off);
        let direct = of.flags.direct;
        match fs.writable_bytes(ino, off, bytes, !direct, &self.cache) {
            0 => Err(Errno::NoSpc),
            n => Ok((off, n)),
        }
    }

    /// O_DIRECT: bios of at most max_sectors_kb go straight to the block
    /// layer after the system call and the per-bio cost; a synchronous
    /// write is then synced (raw layout: a cache flush). Returns when the
    /// submission ends (the thread is free again for an asynchronous call).
    #[allow(clippy::too_many_arguments)]
    fn direct_io<E: HostEvents>(
        &mut self,
        now: Ns,
        entered: Ns,
        t: u32,
        call: u32,
        op: Op,
        off: u64,
        bytes: u64,
        b: &mut Below<E>,
    ) -> Ns {
        let aio = self.calls[call].aio;
        if !aio {
            // dio_await_one: the caller sleeps in io_schedule.
            self.io_sleep(t, now);
        }
        let task = &mut self.tasks[t as usize];
        if !aio {
            task.phase = Phase::WaitIo;
        }
        let (mapping, node, flags) = (task.cur().mapping, task.cur().node, task.cur().flags);
        let mut bios = std::mem::take(&mut task.pending_bios);
        let mut n = 0;
        match (&mut self.mount, node) {
            (Mount::Raw(files), Node::Raw(i)) => {
                self.calls[call].then_flush = op == Op::Write && flags.any_sync();
                let sector = files.get(i).first_sector + off / SECTOR_BYTES;
                let template = task.bio(
                    t,
                    op,
                    sector,
                    (bytes / SECTOR_BYTES) as u32,
                    Submitter::Call(call),
                );
                n = split_bio(template, self.max_bio_sectors, &mut bios);
            }
            (Mount::Fs(fs), Node::Inode(ino)) => {
                let pid = task.pid;
                if op == Op::Write {
                    if let Err(e) = fs.direct_write(ino, off, bytes, pid, &mut self.cache, now) {
                        task.pending_bios = bios;
                        if aio {
                            self.aio_complete(entered, call, b);
                        } else {
                            self.tasks[t as usize].ret = -e.code();
                            b.q.at(entered, HostEvent::Return(t));
                        }
                        return entered;
                    }
                    if flags.any_sync() {
                        task.after_io = AfterIo::Sync {
                            datasync: !flags.sync,
                        };
                    }
                } else {
                    fs.read_done(ino, &mut self.cache, now);
                }
                let first = off / PAGE_BYTES;
                let end = (off + bytes).div_ceil(PAGE_BYTES);
                fs.map_pages(mapping, first, end - first, &mut self.runs);
                for r in &self.runs {
                    let Some(sector) = r.sector else { continue };
                    // The byte range of this run that the call covers.
                    let s = (r.page * PAGE_BYTES).max(off);
                    let e = ((r.page + r.pages) * PAGE_BYTES).min(off + bytes);
                    let sec = sector + (s - r.page * PAGE_BYTES) / SECTOR_BYTES;
                    let len = (e - s).div_ceil(SECTOR_BYTES) as u32;
                    let template = task.bio(t, op, sec, len, Submitter::Call(call));
                    n += split_bio(template, self.max_bio_sectors, &mut bios);
                }
                self.after_fs_change(now, b);
            }
            _ => unreachable!("node of another mount"),
        }
        let task = &mut self.tasks[t as usize];
        task.pending_bios = bios;
        if n == 0 {
            // A read of holes only: zeros, no I/O.
            self.calls[call].then_flush = false;
            let at = entered;
            if aio {
                self.aio_complete(at, call, b);
                return at;
            }
            match task.after_io {
                AfterIo::Return => b.q.at(at, HostEvent::Return(t)),
                AfterIo::Sync { datasync } => {
                    task.phase = Phase::SyncData { datasync };
                    b.q.at(at, HostEvent::Step(t));
                }
            }
            return at;
        }
        self.calls[call].pending = n;
        let at = self.submit_cost(t, entered, n);
        b.q.at(at, HostEvent::SubmitPlug(t));
        at
    }

    /// Continues task `t`'s current call.
    fn step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        match self.tasks[t as usize].phase {
            Phase::Read => self.read_step(now, t, b),
            Phase::Write => self.write_step(now, t, b),
            Phase::Fsync => self.fsync_step(now, t, b),
            Phase::SyncData { datasync } => self.sync_data_step(now, t, datasync, b),
            Phase::SyncMeta => self.sync_barrier(now, t, b),
            Phase::SyncWait => b.q.at(now, HostEvent::Return(t)),
            Phase::SyncAll(n) => self.sync_all_step(now, t, n, b),
            Phase::Serve => self.serve(now, t, b),
            Phase::Forwarded { sync } => self.forwarded_done(now, t, sync, b),
            Phase::FuseWalk => self.ns_continue(now, t, b),
            Phase::WaitIo | Phase::Throttled | Phase::SyncFlush => {}
        }
    }

    /// Walks the page cache for a buffered read from the current page.
    fn read_step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let mapping = self.tasks[t as usize].cur().mapping;
        let forwarded = self.forwarded(mapping);
        let (ra_max, congested) = match self.fwd().filter(|_| forwarded) {
            // The FUSE mount's own backing device: its read-ahead window,
            // and no block queue of its own to be congested.
            Some(f) => (f.read_ahead_pages() as u32, false),
            None => (b.block.params().read_ahead_kb / 4, b.block.congested(true)),
        };
        let task = &mut self.tasks[t as usize];
        let (fd, pos, end) = (task.fd, task.pos_page, task.end_page);
        let of = task.file_mut(fd).expect("reading descriptor is open");
        let step = self.cache.read_step(
            of.mapping,
            &mut of.ra,
            pos,
            end,
            ra_max,
            congested,
            &mut self.plan,
        );
        let submit_done = self.submit_plan(now, t, b);
        if self.chains.contains_key(&t) {
            // fuse_readpages sends its requests synchronously: the reader
            // sleeps until the last reply, then walks the cache again.
            return;
        }
        match step {
            ReadStep::Done => {
                let task = &self.tasks[t as usize];
                let call = task.call.expect("stepping task has a call");
                if let (Mount::Fs(fs), Node::Inode(ino), false) =
                    (&mut self.mount, task.cur().node, forwarded)
                {
                    fs.read_done(ino, &mut self.cache, now);
                    self.after_fs_change(now, b);
                }
                let bytes = self.calls[call].bytes;
                let done = self.copy_cost(t, submit_done, bytes);
                b.q.at(done, HostEvent::Return(t));
            }
            ReadStep::WaitFor { page } => self.wait_for_page(t, page, submit_done, b),
        }
    }

    /// A buffered write: read partial pages first (read-modify-write),
    /// dirty the pages, then return, throttle, or (O_SYNC) write back.
    fn write_step<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let task = &self.tasks[t as usize];
        let (file, off, bytes) = (task.cur().mapping, task.call_off, task.call_bytes);
        if self.forwarded(file) {
            return self.forward_write(now, t, b);
        }
        let step = self.cache.write_begin(file, off, bytes, &mut self.plan);
        let submit_done = self.submit_plan(now, t, b);
        if let ReadStep::WaitFor { page } = step {
            self.wait_for_page(t, page, submit_done, b);
            return;
        }
        let task = &self.tasks[t as usize];
        let (first, end, flags, node, pid) = (
            task.pos_page,
            task.end_page,
            task.cur().flags,
            task.cur().node,
            task.pid,
        );
        let call = task.call.expect("writing task has a call");
        let mut dirty = true;
        if let (Mount::Fs(fs), Node::Inode(ino)) = (&mut self.mount, node) {
            match fs.write_end(ino, off, bytes, pid, &mut self.cache, now) {
                Ok(d) => dirty = d,
                Err(e) => {
                    self.tasks[t as usize].ret = -e.code();
                    b.q.at(submit_done, HostEvent::Return(t));
                    return;
                }
            }
            self.after_fs_change(now, b);
        }
        if dirty {
            self.cache.mark_dirty(file, first, end - first, now);
        }
        let copied = self.copy_cost(t, submit_done, bytes);
        if self.cache.over_background_thresh(&self.wb) {
            self.flusher_kick(now, b.q);
        }
        if flags.any_sync() {
            if self.mount.fs().is_some() {
                // generic_write_sync: vfs_fsync_range, datasync for O_DSYNC.
                let datasync = !flags.sync;
                self.tasks[t as usize].phase = Phase::SyncData { datasync };
                b.q.at(copied, HostEvent::Step(t));
            } else {
                // O_SYNC: write the file's dirty pages back and flush, like
                // generic_write_sync -> fsync of the range.
                self.tasks[t as usize].phase = Phase::WaitIo;
                self.io_sleep(t, copied);
                self.calls[call].then_flush = true;
                self.writeback_for_call(copied, t, call, b);
            }
        } else if self.cache.over_dirty_limit(&self.wb) {
            self.tasks[t as usize].phase = Phase::Throttled;
            // balance_dirty_pages: io_schedule_timeout.
            self.io_sleep(t, copied);
            self.throttled.push(t);
            self.flusher_kick(now, b.q);
        } else {
            b.q.at(copied, HostEvent::Return(t));
        }
    }

    /// Turns the page cache's read decisions into bios of task `t` (holes
    /// complete at once, as zeros); returns when their submission ends.
    fn submit_plan<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) -> Ns {
        let mut bios = std::mem::take(&mut self.tasks[t as usize].pending_bios);
        let mut n = 0;
        let mut upcalls = VecDeque::new();
        for i in 0..self.plan.submit.len() {
            let io = self.plan.submit[i];
            if self.forwarded(io.file) {
                self.read_upcalls(t, io.file, io.first_page, io.pages as u64, &mut upcalls);
                continue;
            }
            self.mount
                .map_pages(io.file, io.first_page, io.pages as u64, &mut self.runs);
            for r in 0..self.runs.len() {
                let run = self.runs[r];
                let Some(sector) = run.sector else {
                    self.cache
                        .complete_read(io.file, run.page, run.pages as u32);
                    continue;
                };
                let id = self.ios.insert(PageIo {
                    mapping: io.file,
                    first_page: run.page,
                    sector,
                    bios: 0,
                    notify: Notify::None,
                });
                let template = self.tasks[t as usize].bio(
                    t,
                    Op::Read,
                    sector,
                    (run.pages * SECTORS_PER_PAGE) as u32,
                    Submitter::PageIo(id),
                );
                let k = split_bio(template, self.max_bio_sectors, &mut bios);
                self.ios[id].bios = k;
                n += k;
            }
        }
        self.tasks[t as usize].pending_bios = bios;
        let submit_done = self.submit_cost(t, now, n);
        if n > 0 {
            b.q.at(submit_done, HostEvent::SubmitPlug(t));
        }
        if !upcalls.is_empty() {
            self.forward(submit_done, t, upcalls, b);
        }
        submit_done
    }

    /// FUSE_READ requests of task `t` for pages `[first, first + pages)` of
    /// upper mapping `m`, at most `max_read` each (`fuse_readpages`),
    /// appended to `out`.
    fn read_upcalls(&self, t: u32, m: FileId, first: u64, pages: u64, out: &mut VecDeque<Upcall>) {
        let f = self.fwd().expect("a forwarding mount");
        let max = f.max_read_pages().max(1);
        let task = &self.tasks[t as usize];
        let Node::Inode(ino) = task.cur().node else {
            unreachable!("a forwarded file is an inode")
        };
        let mut p = first;
        while p < first + pages {
            let n = max.min(first + pages - p);
            out.push_back(Upcall {
                op: UpcallOp::Read {
                    mapping: m,
                    first_page: p,
                    pages: n,
                },
                ino,
                sender: t,
                fd: task.fd,
                queued: 0,
            });
            p += n;
        }
    }

    /// A write to a forwarded file (`fuse_perform_write`, write-through):
    /// the data is copied from user space into the request pages, then
    /// FUSE_WRITE requests of at most `max_write` bytes and
    /// `FUSE_MAX_PAGES_PER_REQ` pages go out one after another; an
    /// O_SYNC/O_DSYNC write then sends FUSE_FSYNC (`generic_write_sync`).
    fn forward_write<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let f = self.fwd().expect("a forwarding mount");
        let max = f.max_write_bytes().max(PAGE_BYTES);
        let task = &self.tasks[t as usize];
        let (off, bytes, fd, flags) = (task.call_off, task.call_bytes, task.fd, task.cur().flags);
        let Node::Inode(ino) = task.cur().node else {
            unreachable!("a forwarded file is an inode")
        };
        let mut reqs = VecDeque::new();
        let mut pos = off;
        while pos < off + bytes {
            // A request covers at most `max` bytes of whole pages from pos.
            let end = (pos + max).min(off + bytes);
            let end = if end < off + bytes {
                (end / PAGE_BYTES * PAGE_BYTES).max(pos + 1)
            } else {
                end
            };
            reqs.push_back(Upcall {
                op: UpcallOp::Write {
                    offset: pos,
                    bytes: end - pos,
                },
                ino,
                sender: t,
                fd,
                queued: 0,
            });
            pos = end;
        }
        let copied = self.copy_cost(t, now, bytes);
        let sync = flags.any_sync().then_some(!flags.sync);
        self.tasks[t as usize].phase = super::task::Phase::Forwarded { sync };
        self.forward(copied, t, reqs, b);
    }

    fn wait_for_page<E: HostEvents>(
        &mut self,
        t: u32,
        page: u64,
        submit_done: Ns,
        b: &mut Below<E>,
    ) {
        let task = &mut self.tasks[t as usize];
        task.pos_page = page.max(task.pos_page);
        let file = task.cur().mapping;
        if self.cache.is_uptodate(file, page) {
            // A hole, read as zeros already.
            b.q.at(submit_done, HostEvent::Step(t));
            return;
        }
        // lock_page_killable: the reader sleeps in io_schedule.
        self.io_sleep(t, submit_done);
        self.waiters.push((t, file, page));
    }

    /// Submits the pages `[first, first + pages)` of `mapping` (already
    /// taken for writeback) as write bios mapped through the file system
    /// (which allocates delayed blocks; `pid` is the writer's), appending
    /// them to `bios`; returns how many. `template` supplies the
    /// submitter's fields.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_bios(
        &mut self,
        now: Ns,
        mapping: FileId,
        first: u64,
        pages: u32,
        template: Bio,
        notify: Notify,
        bios: &mut Vec<Bio>,
    ) -> u32 {
        let mut runs = std::mem::take(&mut self.runs);
        match &mut self.mount {
            Mount::Fs(fs) => fs.writepages(
                mapping,
                first,
                pages as u64,
                template.pid,
                &mut self.cache,
                now,
                &mut runs,
            ),
            raw => raw.map_pages(mapping, first, pages as u64, &mut runs),
        }
        if let Some(log) = self.file_writes.as_mut() {
            log.note_runs(mapping, &runs, now);
        }
        let n = page_write_bios(&mut self.ios, mapping, &runs, template, notify, bios);
        self.runs = runs;
        n
    }

    /// Submits the task's file's dirty pages as synchronous writes owned by
    /// `call` (or, with nothing dirty, goes straight to the call's flush).
    pub(super) fn writeback_for_call<E: HostEvents>(
        &mut self,
        at: Ns,
        t: u32,
        call: u32,
        b: &mut Below<E>,
    ) {
        let task = &mut self.tasks[t as usize];
        let file = task.cur().mapping;
        let max_pages = self.max_bio_sectors / SECTORS_PER_PAGE as u32;
        let mut bios = std::mem::take(&mut task.pending_bios);
        let template = task.bio(t, Op::Write, 0, 0, Submitter::Call(call));
        let mut n = 0;
        while let Some((first, pages)) = self.cache.take_dirty_run(file, max_pages) {
            n += self.write_bios(
                at,
                file,
                first,
                pages,
                template,
                Notify::Call(call),
                &mut bios,
            );
        }
        if n == 0 {
            // Nothing to write: the flush (if any) follows at once.
            self.calls[call].then_flush = false;
            bios.push(self.tasks[t as usize].bio(t, Op::Flush, 0, 0, Submitter::Call(call)));
            n = 1;
        }
        self.tasks[t as usize].pending_bios = bios;
        self.calls[call].pending = n;
        let submitted = self.submit_cost(t, at, n);
        b.q.at(submitted, HostEvent::SubmitPlug(t));
    }

    /// The task's prepared bios enter the block layer under one plug.
    fn submit_plug<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let task = &mut self.tasks[t as usize];
        let mut bios = std::mem::take(&mut task.pending_bios);
        self.cpu.with(|c| c.submitted_by(t));
        b.block.submit_plugged(now, t, bios.drain(..), b.q);
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
        let id = match bio.submitter {
            Submitter::Call(c) => {
                if bio.op == Op::Write {
                    self.note_call_write(c, bio.sector, u64::from(bio.sectors));
                }
                if self.calls[c].bio_done(times, now) {
                    self.call_io_done(now, c, b);
                }
                return;
            }
            Submitter::Fs => {
                self.with_fs(b, |fs, k| fs.bio_done(now, times, k));
                return;
            }
            Submitter::PageIo(id) => id,
            Submitter::Replay(_) => unreachable!("trace replay takes its own completions"),
        };
        let io = self.ios[id];
        let first = io.first_page + (bio.sector - io.sector) / SECTORS_PER_PAGE;
        let pages = bio.sectors / SECTORS_PER_PAGE as u32;
        if io.bios == 1 {
            self.ios.remove(id);
        } else {
            self.ios[id].bios -= 1;
        }
        let fid = io.mapping;
        if bio.op == Op::Read {
            self.cache.complete_read(fid, first, pages);
            self.wake_page_waiters(now, fid, first, pages, Some(times), b);
        } else {
            self.writeback_done(now, fid, first, pages, times, b);
        }
        match io.notify {
            Notify::None => {}
            Notify::Call(c) => {
                if bio.op == Op::Write {
                    self.note_call_write(c, bio.sector, u64::from(bio.sectors));
                }
                if self.calls[c].bio_done(times, now) {
                    self.call_io_done(now, c, b);
                }
            }
            Notify::Split(c) => {
                if bio.op == Op::Write {
                    self.note_call_write(c, bio.sector, u64::from(bio.sectors));
                }
                if let Some(call) = self.calls.get_mut(c) {
                    call.waited(times, now);
                }
            }
        }
    }

    /// Pages `[first, first + pages)` of `fid` became up to date at `now`
    /// (the read that ran at `times`, when one did): the tasks sleeping on
    /// one of them wake and step on.
    pub(super) fn wake_page_waiters<E: HostEvents>(
        &mut self,
        now: Ns,
        fid: FileId,
        first: u64,
        pages: u32,
        times: Option<DeviceTimes>,
        b: &mut Below<E>,
    ) {
        let mut i = 0;
        while i < self.waiters.len() {
            let (t, wf, wp) = self.waiters[i];
            if wf == fid && wp >= first && wp < first + pages as u64 {
                self.waiters.swap_remove(i);
                let wake = now + self.cpu.with(|c| c.wake_thread(t, now));
                if let Some(c) = self.tasks[t as usize].call {
                    let call = &mut self.calls[c];
                    if let Some(times) = times {
                        call.waited(times, now);
                    }
                    call.charge(Layer::IrqWakeup, wake);
                }
                b.q.at(wake, HostEvent::Step(t));
            } else {
                i += 1;
            }
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
            let bio = self.tasks[t as usize].bio(t, Op::Flush, 0, 0, Submitter::Call(id));
            b.block.submit(now, [bio], b.q);
            return;
        }
        if self.calls[id].aio {
            return self.aio_complete(now, id, b);
        }
        let wake = self.wake(t, now);
        let task = &mut self.tasks[t as usize];
        match (task.phase, task.after_io) {
            (Phase::WaitIo, AfterIo::Sync { datasync }) => {
                task.after_io = AfterIo::Return;
                task.phase = Phase::SyncData { datasync };
                b.q.at(wake, HostEvent::Step(t));
            }
            (Phase::SyncMeta | Phase::SyncAll(_), _) => {
                b.q.at(wake, HostEvent::Step(t));
            }
            _ => b.q.at(wake, HostEvent::Return(t)),
        }
    }

    /// Thread `t` enters the kernel for its call `call` moving `bytes` at
    /// `now`: the platform layer (Dalvik/JNI) when the call starts a
    /// crossing from the app, then the system call entry and VFS + file
    /// system, on the thread's core at its clock (after any run-queue
    /// wait). Returns when the kernel work can start; the call is charged
    /// for both.
    pub(super) fn enter(&mut self, now: Ns, t: u32, call: u32, bytes: u64) -> Ns {
        // A server thread is native code: no platform layer.
        let platform = if self.tasks[t as usize].server {
            now
        } else {
            now + self.cpu.with(|c| c.platform_entry(t, now, bytes))
        };
        let entered = platform
            + self
                .cpu
                .thread(t, platform, |c| c.syscall_entry + c.syscall);
        let c = &mut self.calls[call];
        c.charge(Layer::Platform, platform);
        c.charge(Layer::SyscallFs, entered);
        entered
    }

    /// Thread `t` submits `n` bios from `at` (block layer + scheduler CPU
    /// time on its core); returns when it is done, charging its call's
    /// `block_submit`.
    pub(super) fn submit_cost(&mut self, t: u32, at: Ns, n: u32) -> Ns {
        let done = at + self.cpu.thread(t, at, |c| n as Ns * c.block_submit);
        self.charge_task(t, Layer::BlockSubmit, done);
        done
    }

    /// Thread `t` copies `bytes` between the page cache and user space from
    /// `at`; returns when done, charging its call's `syscall_fs`.
    pub(super) fn copy_cost(&mut self, t: u32, at: Ns, bytes: u64) -> Ns {
        let done = at + self.cpu.thread(t, at, |c| c.copy(bytes));
        self.charge_task(t, Layer::SyscallFs, done);
        done
    }

    /// Thread `t` goes to sleep at `now` in `io_schedule` (its core's idle
    /// time counts as iowait until it is woken).
    pub(super) fn io_sleep(&self, t: u32, now: Ns) {
        self.cpu.with(|c| c.io_sleep(t, now));
    }

    /// Thread `t`, asleep, is woken at `now` (from the interrupt core: an
    /// IPI and a remote wake-up when it sits elsewhere); returns when it
    /// runs, charging its call's `irq_wakeup`.
    pub(super) fn wake(&mut self, t: u32, now: Ns) -> Ns {
        let wake = now + self.cpu.with(|c| c.wake_thread(t, now));
        self.charge_task(t, Layer::IrqWakeup, wake);
        wake
    }

    /// Charges `[mark, until)` of thread `t`'s current call (if any) to
    /// `layer`.
    fn charge_task(&mut self, t: u32, layer: Layer, until: Ns) {
        if let Some(c) = self.tasks.get(t as usize).and_then(|k| k.call) {
            if let Some(call) = self.calls.get_mut(c) {
                call.charge(layer, until);
            }
        }
    }

    /// Task `t`'s call returns to user space: it is recorded, as completed
    /// or (a negative return value) as failed with its errno.
    fn call_return<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) -> Option<u32> {
        let task = &mut self.tasks[t as usize];
        let id = task.call.take()?;
        let call = self.calls.remove(id);
        if task.server {
            // A server thread's lower call: not an application call; its
            // reply goes back to the sender.
            self.server_reply(now, t, call.issue, call.last_io, b);
            return None;
        }
        match task.ret {
            r if r < 0 => {
                let name = Errno::from_code(-r).map_or("EIO", Errno::name);
                call.fail(name, b.collector);
            }
            _ => {
                self.note_return(now, t, &call);
                call.finish(now, b.collector)
            }
        }
        Some(t)
    }
}
