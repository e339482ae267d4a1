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
//! copy, per-request CPU), then makes its handler's lower system calls
//! one after another ([`Forwarding::daemon_step`]: `pread`, `pwrite`,
//! `fsync` on its descriptor of the lower file; `access`, `lstat`,
//! `mknod`, `open`, `close`, `unlink`, `mkdir`, `rename`, `truncate` for
//! the namespace requests) through the same host path as any task (lower
//! page cache, read-ahead, writeback, metadata, journal, block I/O). Its
//! reply (`writev`, payload copy) carries the handler's result or the
//! errno of its failing call, fills the upper pages of a read and wakes
//! the sender (none for FUSE_RELEASE); the thread then takes the next
//! queued request or sleeps in `read(/dev/fuse)` again.
//!
//! The sender's wait is split as: until the server's first lower call
//! starts, `syscall_fs` (FUSE queueing and the daemon's own work); then
//! along the lower calls' last request (`block_queue`, `driver`, `device`,
//! `irq_wakeup`); then the wake-up.

use std::collections::VecDeque;

use super::fs::{DaemonStep, Forwarding, Upcall, UpcallOp, HANDLE_FD};
use super::stage::{Below, Host, HostEvent, HostEvents};
use super::syscall::{Access, OpenFlags};
use super::task::Node;
use super::task::{OpenFile, Phase, Task, FIRST_FD};
use crate::stats::report::Layer;
use crate::stats::DeviceTimes;
use crate::types::{IoPrio, Ns};

const _: () = assert!(
    HANDLE_FD == FIRST_FD,
    "a server's handle is its first descriptor"
);

/// A request a server thread is on, with when it took it and how far
/// its handler got.
#[derive(Clone, Debug)]
pub(super) struct Serving {
    pub req: Upcall,
    /// When the thread took it (before its wake-up), ns.
    pub taken: Ns,
    /// Payload bytes copied in from the kernel.
    pub copied_in: u64,
    /// Results of the lower calls made for it so far.
    pub rets: Vec<i64>,
    /// When its first lower call was issued, ns.
    pub issued: Option<Ns>,
    /// The last request of its lower calls' I/O.
    pub io: Option<DeviceTimes>,
}

impl Host {
    /// The mounted file system's forwarding side, if it forwards.
    pub(super) fn fwd(&self) -> Option<&dyn Forwarding> {
        self.mount.fs()?.forwarding()
    }

    pub(super) fn fwd_mut(&mut self) -> Option<&mut dyn Forwarding> {
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
    pub(super) fn dispatch<E: HostEvents>(
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
            rets: Vec::new(),
            issued: None,
            io: None,
        });
        self.tasks[d as usize].phase = Phase::Serve;
        b.q.at(at, HostEvent::Step(d));
    }

    /// The daemon's handle of task `sender`'s open file `fd` of `ino`:
    /// the lower descriptor its FUSE_OPEN made, or (a descriptor the
    /// process held before the run) one opened now, read-write with the
    /// synchronous flags `sync` of the sender's descriptor.
    pub(super) fn daemon_handle(
        &mut self,
        sender: u32,
        fd: u32,
        ino: u32,
        sync: Option<(bool, bool)>,
    ) -> OpenFile {
        if let Some(of) = self.server_files.remove(&(sender, fd, ino)) {
            return of;
        }
        let lower = self.fwd().expect("a forwarding mount").lower_mapping(ino);
        let (sync, dsync) = sync.unwrap_or_default();
        OpenFile {
            node: Node::Inode(ino),
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

    /// The serving thread index of server task `d`.
    fn server_index(&self, d: u32) -> usize {
        (d - self.fwd().expect("a forwarding mount").server_thread(0)) as usize
    }

    /// Server thread `d` starts the handler of the request it took: its
    /// descriptor table holds the request's handle (at `FIRST_FD`) when
    /// the request uses one.
    pub(super) fn serve<E: HostEvents>(&mut self, now: Ns, d: u32, b: &mut Below<E>) {
        let i = self.server_index(d);
        let req = self.serving[i].as_ref().expect("a taken request").req;
        self.tasks[d as usize].fds.clear();
        if req.op.uses_handle() {
            let of = if req.op == UpcallOp::Release {
                self.ns.releasing.remove(&req.fd)
            } else {
                let sender = self.tasks[req.sender as usize].file(req.fd);
                let sync = sender.map(|o| (o.flags.sync, o.flags.dsync));
                Some(self.daemon_handle(req.sender, req.fd, req.ino, sync))
            };
            if let Some(of) = of {
                let fd = self.tasks[d as usize].install(of);
                debug_assert_eq!(fd, FIRST_FD);
            }
        }
        self.daemon_next(now, d, b);
    }

    /// Server thread `d`'s handler goes on at `now`: its next lower system
    /// call, or the reply.
    fn daemon_next<E: HostEvents>(&mut self, now: Ns, d: u32, b: &mut Below<E>) {
        let i = self.server_index(d);
        let s = self.serving[i].as_ref().expect("a taken request");
        let step = self
            .fwd()
            .expect("a forwarding mount")
            .daemon_step(&s.req, &s.rets);
        match step {
            DaemonStep::Call(sc) => {
                let s = self.serving[i].as_mut().expect("a taken request");
                s.issued.get_or_insert(now);
                self.syscall(now, d, sc, b);
            }
            DaemonStep::Reply(ret) => self.reply(now, d, ret, b),
        }
    }

    /// Server thread `d`'s lower call (issued at `issued`, its last
    /// request `io`) returned at `now` with the task's `ret`: its handler
    /// goes on.
    pub(super) fn server_reply<E: HostEvents>(
        &mut self,
        now: Ns,
        d: u32,
        issued: Ns,
        io: Option<DeviceTimes>,
        b: &mut Below<E>,
    ) {
        let ret = self.tasks[d as usize].ret;
        let i = self.server_index(d);
        let s = self.serving[i].as_mut().expect("a taken request");
        s.rets.push(ret);
        s.issued.get_or_insert(issued);
        if io.is_some() {
            s.io = io;
        }
        self.daemon_next(now, d, b);
    }

    /// Server thread `d` replies `ret` at `now` (`writev(/dev/fuse)`): the
    /// handle it opened or used is kept, a read's pages fill, the sender
    /// is answered, and the thread takes the next request.
    fn reply<E: HostEvents>(&mut self, now: Ns, d: u32, ret: i64, b: &mut Below<E>) {
        let i = self.server_index(d);
        let s = self.serving[i].take().expect("a taken request");
        let req = s.req;
        if let Some(of) = self.tasks[d as usize].remove(FIRST_FD) {
            if req.op != UpcallOp::Release {
                self.server_files.insert((req.sender, req.fd, req.ino), of);
            }
        }
        let copied_out = match req.op {
            UpcallOp::Read { .. } => ret.max(0) as u64,
            _ => 0,
        };
        // writev(/dev/fuse) with the reply (fuse_dev_write copies it).
        let replied = now
            + self
                .cpu
                .thread(d, now, |c| c.syscall_entry + c.syscall + c.copy(copied_out));
        let issued = s.issued.unwrap_or(now);
        if let UpcallOp::Read {
            mapping,
            first_page,
            pages,
        } = req.op
        {
            self.cache.complete_read(mapping, first_page, pages as u32);
            self.wake_page_waiters(replied, mapping, first_page, pages as u32, s.io, b);
        }
        let bytes = s.copied_in + copied_out;
        let next = self
            .fwd_mut()
            .and_then(|f| f.replied(i as u32, replied, replied - s.taken, bytes));
        match req.op {
            // Nobody waits for a release.
            UpcallOp::Release => {}
            op if op.is_namespace() => {
                self.sender_replied(replied, req.sender, issued, s.io);
                self.ns_reply(replied, req.sender, ret, b);
            }
            _ => {
                self.sender_replied(replied, req.sender, issued, s.io);
                self.send_next(replied, req.sender, b);
            }
        }
        if let Some(req) = next {
            self.dispatch(replied, i as u32, req, false, b);
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
