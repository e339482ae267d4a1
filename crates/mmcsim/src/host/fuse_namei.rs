//! The application side of namespace and descriptor calls on a
//! forwarding mount (FUSE): `open`, `close`, `ftruncate`, `unlink`,
//! `rmdir`, `mkdir`, `rename` and `stat` of an application thread become
//! a sequence of requests the mount decides ([`Forwarding::ns_begin`],
//! [`Forwarding::ns_replied`]). The thread enters the kernel (platform
//! layer and system call cost), sends each request and sleeps until its
//! reply (`request_wait_answer`: not an I/O sleep), is woken by the reply
//! and goes on; FUSE_RELEASE is queued without waiting. The daemon's side
//! is [`super::server`]. `lseek` stays in the kernel.
//!
//! [`Forwarding::ns_begin`]: super::fs::Forwarding::ns_begin
//! [`Forwarding::ns_replied`]: super::fs::Forwarding::ns_replied

use std::collections::BTreeMap;

use super::call::Call;
use super::errno::Errno;
use super::fs::{Ino, NsCall, NsStep, Upcall};
use super::stage::{Below, Host, HostEvent, HostEvents};
use super::syscall::{OpenFlags, Syscall};
use super::task::{Node, OpenFile, Phase, FIRST_FD};
use super::vfs::components;
use crate::stats::report::CallKind;
use crate::types::Ns;

/// Forwarded namespace calls in progress.
#[derive(Debug, Default)]
pub(super) struct NsCalls {
    /// The flags of each task's `open` in progress.
    opens: BTreeMap<u32, OpenFlags>,
    /// Daemon handles whose FUSE_RELEASE is queued, by token.
    pub(super) releasing: BTreeMap<u32, OpenFile>,
    /// The next token.
    next_token: u32,
    /// A task's first request, sent once its system-call entry is over.
    first: BTreeMap<u32, Upcall>,
}

/// `path` as owned components (EINVAL for a relative path or `..`).
fn owned(path: &str) -> Result<Vec<String>, Errno> {
    Ok(components(path)?.into_iter().map(String::from).collect())
}

impl Host {
    /// Serves namespace call `sc` (of kind `kind`) of task `t` at `now`
    /// through the forwarding mount; false when it is not forwarded (no
    /// forwarding mount, a server thread's own call, `lseek`).
    pub(super) fn forward_namei<E: HostEvents>(
        &mut self,
        now: Ns,
        t: u32,
        kind: CallKind,
        sc: &Syscall,
        b: &mut Below<E>,
    ) -> bool {
        if self.fwd().is_none() || self.tasks[t as usize].server {
            return false;
        }
        let (call, fd) = match self.ns_call(t, sc) {
            None => return false,
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                self.fail(now, t, kind, e, b);
                return true;
            }
        };
        if let NsCall::Open { flags, .. } = &call {
            self.ns.opens.insert(t, *flags);
        }
        let c = self.calls.insert(Call::new(now, t, kind, 0));
        let task = &mut self.tasks[t as usize];
        task.call = Some(c);
        task.ret = 0;
        let at = self.enter(now, t, c, 0);
        let step = self
            .fwd_mut()
            .expect("a forwarding mount")
            .ns_begin(t, fd, call, at);
        match step {
            // Queued when the task gets there, in event order.
            NsStep::Send(req) => {
                self.ns.first.insert(t, req);
                self.tasks[t as usize].phase = Phase::FuseWalk;
                b.q.at(at, HostEvent::Step(t));
            }
            done => self.ns_step(at, t, done, b),
        }
        true
    }

    /// The call `sc` of task `t` hands the mount, with the descriptor it
    /// concerns (an open: the one it will return), after the checks the
    /// VFS makes first; `None` for a call that is not forwarded.
    fn ns_call(&mut self, t: u32, sc: &Syscall) -> Option<Result<(NsCall, u32), Errno>> {
        let max = self.mount.max_bytes();
        let task = &mut self.tasks[t as usize];
        let next_fd = FIRST_FD
            + task
                .fds
                .iter()
                .position(Option::is_none)
                .unwrap_or(task.fds.len()) as u32;
        let inode = |of: &OpenFile| match of.node {
            Node::Inode(ino) => ino,
            Node::Raw(_) => unreachable!("a forwarding mount has inodes"),
        };
        Some(match sc {
            Syscall::Open { path, flags } => owned(path).map(|path| {
                let flags = *flags;
                (NsCall::Open { path, flags }, next_fd)
            }),
            // __close_fd: the descriptor is gone at once.
            Syscall::Close { fd } => task
                .remove(*fd)
                .ok_or(Errno::BadF)
                .map(|of| (NsCall::Close { ino: inode(&of) }, *fd)),
            Syscall::Ftruncate { fd, len } => {
                // do_sys_ftruncate / inode_newsize_ok, as on any mount.
                if *len > i64::MAX as u64 {
                    return Some(Err(Errno::Inval));
                }
                let Some(of) = task.file(*fd) else {
                    return Some(Err(Errno::BadF));
                };
                if !of.flags.access.writes() {
                    return Some(Err(Errno::Inval));
                }
                if *len > max {
                    return Some(Err(Errno::FBig));
                }
                let ino = inode(of);
                Ok((NsCall::Truncate { ino, len: *len }, *fd))
            }
            Syscall::Unlink { path } | Syscall::Rmdir { path } => {
                let rmdir = matches!(sc, Syscall::Rmdir { .. });
                owned(path).map(|path| (NsCall::Unlink { path, rmdir }, 0))
            }
            Syscall::Mkdir { path } => owned(path).map(|path| (NsCall::Mkdir { path }, 0)),
            Syscall::Stat { path } => owned(path).map(|path| (NsCall::Stat { path }, 0)),
            Syscall::Rename { from, to } => owned(from).and_then(|from| {
                Ok((
                    NsCall::Rename {
                        from,
                        to: owned(to)?,
                    },
                    0,
                ))
            }),
            _ => return None,
        })
    }

    /// Task `t`'s call takes `step` at `now`: a request it sleeps on, or
    /// the return (after queueing a background request).
    fn ns_step<E: HostEvents>(&mut self, now: Ns, t: u32, step: NsStep, b: &mut Below<E>) {
        match step {
            NsStep::Send(req) => {
                self.tasks[t as usize].phase = Phase::FuseWalk;
                self.send_upcall(now, req, b);
            }
            NsStep::Done { ret, detach } => {
                if let Some(req) = detach {
                    self.detach(now, req, b);
                }
                let ret = self.ns_finish(t, ret);
                self.tasks[t as usize].ret = ret;
                b.q.at(now, HostEvent::Return(t));
            }
        }
    }

    /// Queues `req` at `now`; an idle server thread takes it at once.
    fn send_upcall<E: HostEvents>(&mut self, now: Ns, req: Upcall, b: &mut Below<E>) {
        let taken = self.fwd_mut().and_then(|f| f.send(req, now));
        if let Some((i, req)) = taken {
            self.dispatch(now, i, req, true, b);
        }
    }

    /// The result `ret` of task `t`'s call: an `open` that succeeded (the
    /// mount returned the inode) installs the descriptor and returns it.
    fn ns_finish(&mut self, t: u32, ret: i64) -> i64 {
        let Some(flags) = self.ns.opens.remove(&t) else {
            return ret;
        };
        if ret < 0 {
            return ret;
        }
        let ino = ret as Ino;
        let mapping = self.mount.fs().expect("a file system").mapping(ino);
        let fd = self.tasks[t as usize].install(OpenFile {
            node: Node::Inode(ino),
            mapping,
            flags,
            pos: 0,
            ra: Default::default(),
        });
        fd as i64
    }

    /// Queues FUSE_RELEASE `req` of the sender's handle at `now`; the
    /// sender does not wait. The handle moves aside under a token, so a
    /// descriptor number the sender reuses meanwhile gets its own.
    fn detach<E: HostEvents>(&mut self, now: Ns, mut req: Upcall, b: &mut Below<E>) {
        let of = self.daemon_handle(req.sender, req.fd, req.ino, None);
        let token = self.ns.next_token;
        self.ns.next_token = token.wrapping_add(1);
        self.ns.releasing.insert(token, of);
        req.fd = token;
        req.queued = now;
        self.send_upcall(now, req, b);
    }

    /// The reply `ret` to task `t`'s namespace request reached the kernel
    /// at `now`: the task is woken (`request_end`) and goes on.
    pub(super) fn ns_reply<E: HostEvents>(&mut self, now: Ns, t: u32, ret: i64, b: &mut Below<E>) {
        let wake = self.wake(t, now);
        self.tasks[t as usize].ret = ret;
        b.q.at(wake, HostEvent::Step(t));
    }

    /// Task `t` sends its call's first request, or, woken by a reply,
    /// its next request or returns.
    pub(super) fn ns_continue<E: HostEvents>(&mut self, now: Ns, t: u32, b: &mut Below<E>) {
        if let Some(mut req) = self.ns.first.remove(&t) {
            req.queued = now;
            return self.send_upcall(now, req, b);
        }
        let ret = self.tasks[t as usize].ret;
        let step = self
            .fwd_mut()
            .expect("a forwarding mount")
            .ns_replied(t, ret, now);
        self.ns_step(now, t, step, b);
    }
}
