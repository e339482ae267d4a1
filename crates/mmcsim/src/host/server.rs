//! User-space file-system servers: the threads of a daemon process that
//! serve a stacked file system's forwarded requests (FUSE: Android's
//! sdcard daemon), run as host tasks.
//!
//! An application call on a forwarded file sends its requests one after
//! another and sleeps until each reply (the FUSE request path is
//! synchronous for reads without `FUSE_ASYNC_READ` and for write-through
//! writes). The connection ([`Forwarding`]) hands a request to an idle
//! server thread or queues it. The server thread wakes (a context switch),
//! returns from `read(/dev/fuse)` with the request (system call, payload
//! copy, per-request CPU), then makes the lower system call — `pread`,
//! `pwrite`, `fsync`/`fdatasync` on its descriptor of the lower file —
//! through the same host path as any task (lower page cache, read-ahead,
//! writeback, journal, block I/O). Its reply (`writev`, payload copy) fills
//! the upper pages of a read and wakes the sender; the thread then takes
//! the next queued request or sleeps in `read(/dev/fuse)` again.
//!
//! The sender's wait is split as: until the server's lower call starts,
//! `syscall_fs` (FUSE queueing and the daemon's own work); then along the
//! lower call's last request (`block_queue`, `driver`, `device`,
//! `irq_wakeup`); then the wake-up.

use std::collections::VecDeque;

use super::fs::{Forwarding, Upcall, UpcallOp};
use super::stage::{Below, Host, HostEvent, HostEvents};
use super::syscall::{Access, OpenFlags, Syscall};
use super::task::Node;
use super::task::{OpenFile, Phase, Task, FIRST_FD};
use crate::stats::report::Layer;
use crate::stats::DeviceTimes;
use crate::types::{IoPrio, Ns, PAGE_BYTES};

/// A request a server thread is on, with when it took it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Serving {
    pub req: Upcall,
    /// When the thread took it (before its wake-up), ns.
    pub taken: Ns,
    /// Payload bytes copied in from the kernel.
    pub copied_in: u64,
}

impl Host {
    /// The mounted file system's forwarding side, if it forwards.
    pub(super) fn fwd(&self) -> Option<&dyn Forwarding> {
        self.mount.fs()?.forwarding()
    }

    fn fwd_mut(&mut self) -> Option<&mut dyn Forwarding> {
        self.mount.fs_mut()?.forwarding_mut()
    }

    /// Whether `m` is a forwarded (upper) mapping.
    pub(super) fn forwarded(&self, m: super::page_cache::FileId) -> bool {
        self.fwd().is_some_and(|f| f.forwards(m))
    }

    /// Creates the server's threads as tasks at their thread indices
    /// (after the application threads, the flusher and the file system's
    /// kernel threads; the slots between hold idle placeholders).
    pub(super) fn spawn_servers(&mut self) {
        let Some(f) = self.fwd() else { return };
        let (n, pid) = (f.servers(), f.server_pid());
        let threads: Vec<u32> = (0..n).map(|i| f.server_thread(i)).collect();
        for t in threads {
            while self.tasks.len() <= t as usize {
                self.tasks.push(Task::new(0, IoPrio::NORM));
            }
            let mut task = Task::new(pid, IoPrio::NORM);
            task.server = true;
            self.tasks[t as usize] = task;
        }
        self.serving = vec![None; n as usize];
    }

    /// Task `t` sends `reqs` in order, each after the previous one's reply,
    /// and sleeps until the last reply (then its call goes on: `Step`).
    pub(super) fn forward<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        reqs: VecDeque<Upcall>,
        b: &mut Below<E>,
    ) {
        self.chains.insert(t, reqs);
        self.send_next(now, t, b);
    }

    /// Sends task `t`'s next chained request at `now`, or (none left)
    /// wakes it.
    fn send_next<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        let next = self.chains.get_mut(&t).and_then(VecDeque::pop_front);
        let Some(mut req) = next else {
            self.chains.remove(&t);
            let wake = self.wake(t, now);
            b.q.at(wake, HostEvent::Step(t));
            return;
        };
        req.queued = now;
        let taken = self.fwd_mut().and_then(|f| f.send(req, now));
        if let Some((i, req)) = taken {
            self.dispatch(now, i, req, true, b);
        }
    }

    /// Server thread `i` takes `req` at `now` (`woken`: it slept in
    /// `read(/dev/fuse)`): the read returns with the request.
    fn dispatch<E: HostEvents>(
        &mut self,
        now: Ns,
        i: u32,
        req: Upcall,
        woken: bool,
        b: &mut Below<E>,
    ) {
        let f = self.fwd().expect("a forwarding mount");
        let (d, request_ns) = (f.server_thread(i), f.request_ns());
        let copied_in = match req.op {
            UpcallOp::Write { bytes, .. } => bytes,
            _ => 0,
        };
        let start = if woken {
            now + self.cpu.with(|c| c.wake_thread(d, now))
        } else {
            now
        };
        let at = start
            + self.cpu.thread(d, start, |c| {
                c.syscall_entry + c.syscall + c.copy(copied_in) + request_ns
            });
        self.serving[i as usize] = Some(Serving {
            req,
            taken: now,
            copied_in,
        });
        self.tasks[d as usize].phase = Phase::Serve;
        b.q.at(at, HostEvent::Step(d));
    }

    /// Server thread `d` makes the lower system call of its request
    /// through its descriptor of the lower file (one per sender's open).
    pub(super) fn serve<E: HostEvents>(&mut self, now: Ns, d: u32, b: &mut Below<E>) {
        let f = self.fwd().expect("a forwarding mount");
        let i = d - f.server_thread(0);
        let req = self.serving[i as usize].expect("a taken request").req;
        let lower = f.lower_mapping(req.ino);
        let handle = (req.sender, req.fd, req.ino);
        let of = match self.server_files.remove(&handle) {
            Some(of) => of,
            None => {
                let sender = self.tasks[req.sender as usize].file(req.fd);
                let (sync, dsync) =
                    sender.map_or((false, false), |o| (o.flags.sync, o.flags.dsync));
                OpenFile {
                    node: Node::Inode(req.ino),
                    mapping: lower,
                    flags: OpenFlags {
                        access: Access::ReadWrite,
                        sync,
                        dsync,
                        ..OpenFlags::default()
                    },
                    pos: 0,
                    ra: Default::default(),
                }
            }
        };
        let task = &mut self.tasks[d as usize];
        task.fds.clear();
        let fd = task.install(of);
        debug_assert_eq!(fd, FIRST_FD);
        let sc = match req.op {
            UpcallOp::Read {
                first_page, pages, ..
            } => Syscall::Pread {
                fd,
                offset: first_page * PAGE_BYTES,
                bytes: pages * PAGE_BYTES,
            },
            UpcallOp::Write { offset, bytes } => Syscall::Pwrite { fd, offset, bytes },
            UpcallOp::Fsync { datasync: true } => Syscall::Fdatasync { fd },
            UpcallOp::Fsync { datasync: false } => Syscall::Fsync { fd },
        };
        self.syscall(now, d, sc, b);
    }

    /// Server thread `d`'s lower call (issued at `issued`, its last request
    /// `io`) returned at `now` with `ret`: it replies; the sender's pages
    /// fill and its chain goes on; the thread takes the next request.
    pub(super) fn server_reply<E: HostEvents>(
        &mut self,
        now: Ns,
        d: u32,
        issued: Ns,
        io: Option<DeviceTimes>,
        b: &mut Below<E>,
    ) {
        let task = &mut self.tasks[d as usize];
        let ret = task.ret;
        let of = task
            .remove(FIRST_FD)
            .expect("the server's lower descriptor");
        let f = self.fwd().expect("a forwarding mount");
        let i = d - f.server_thread(0);
        let s = self.serving[i as usize].take().expect("a taken request");
        self.server_files
            .insert((s.req.sender, s.req.fd, s.req.ino), of);
        let copied_out = match s.req.op {
            UpcallOp::Read { .. } => ret.max(0) as u64,
            _ => 0,
        };
        // writev(/dev/fuse) with the reply (fuse_dev_write copies it).
        let replied = now
            + self
                .cpu
                .thread(d, now, |c| c.syscall_entry + c.syscall + c.copy(copied_out));
        if let UpcallOp::Read {
            mapping,
            first_page,
            pages,
        } = s.req.op
        {
            self.cache.complete_read(mapping, first_page, pages as u32);
            self.wake_page_waiters(replied, mapping, first_page, pages as u32, io, b);
        }
        self.sender_replied(replied, s.req.sender, issued, io);
        let bytes = s.copied_in + copied_out;
        let next = self
            .fwd_mut()
            .and_then(|f| f.replied(i, replied, replied - s.taken, bytes));
        self.send_next(replied, s.req.sender, b);
        if let Some(req) = next {
            self.dispatch(replied, i, req, false, b);
        }
    }

    /// The sender's call is charged for the wait up to a reply at `now`:
    /// FUSE's own time until the server's lower call `issued`, then the
    /// lower call's last request `io`.
    fn sender_replied(&mut self, now: Ns, t: u32, issued: Ns, io: Option<DeviceTimes>) {
        let Some(c) = self.tasks[t as usize].call else {
            return;
        };
        let Some(call) = self.calls.get_mut(c) else {
            return;
        };
        call.charge(Layer::SyscallFs, issued);
        if let Some(times) = io {
            call.waited(times, now);
        }
        call.charge(Layer::SyscallFs, now);
    }

    /// After the forwarded writes of task `t`'s call: the FUSE_FSYNC of an
    /// O_SYNC/O_DSYNC write, or the return.
    pub(super) fn forwarded_done<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        sync: Option<bool>,
        b: &mut Below<E>,
    ) {
        match sync {
            Some(datasync) => self.forward_fsync(now, t, datasync, b),
            None => b.q.at(now, HostEvent::Return(t)),
        }
    }

    /// Task `t`'s `fsync`/`fdatasync` of a forwarded file: `fuse_fsync`
    /// (the upper mapping has nothing dirty: writes went through) sends
    /// FUSE_FSYNC.
    pub(super) fn forward_fsync<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        datasync: bool,
        b: &mut Below<E>,
    ) {
        let task = &mut self.tasks[t as usize];
        task.phase = Phase::Forwarded { sync: None };
        let Node::Inode(ino) = task.cur().node else {
            unreachable!("a forwarded file is an inode")
        };
        let req = Upcall {
            op: UpcallOp::Fsync { datasync },
            ino,
            sender: t,
            fd: task.fd,
            queued: now,
        };
        self.forward(now, t, VecDeque::from([req]), b);
    }
}
