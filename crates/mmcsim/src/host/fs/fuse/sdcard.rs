//! What Android's sdcard daemon does for each request: the lower system
//! calls of its handlers, in order, and the reply [src: AOSP system/core
//! sdcard/sdcard.c, android-4.2_r1 and android-4.4_r1, `handle_*`].
//!
//! * A request that names a child (LOOKUP, MKNOD, MKDIR, UNLINK, RMDIR,
//!   and RENAME's target) first resolves it with `find_file_within`:
//!   `access(child, F_OK)`, and when that fails a case-insensitive search
//!   of the parent (`opendir`, `readdir` to the end, `closedir`:
//!   [`Syscall::Readdir`]).
//! * LOOKUP replies with `lstat` of the child (`fuse_reply_entry`); MKNOD
//!   and MKDIR `mknod`/`mkdir` it, then `lstat`; UNLINK/RMDIR `unlink`/
//!   `rmdir`; RENAME `rename`s.
//! * GETATTR is `lstat` of the node's path (`fuse_reply_attr`); SETATTR
//!   with a size `truncate`s the path, then `lstat`s it.
//! * OPEN `open`s the node's path with the kernel's flags; its descriptor
//!   is the handle READ, WRITE and FSYNC use (`pread64`, `pwrite64`,
//!   `fsync`/`fdatasync`); RELEASE `close`s it and replies 0. FLUSH
//!   replies 0 with no system call. FUSE_CREATE is not handled: ENOSYS.
//!
//! A failing lower call ends the handler with its errno as the reply.
//! Paths come from the daemon's node table ([`super::dcache`]) and, for
//! names, from the request's name in its parent.

use super::super::{DaemonStep, Errno, Upcall, UpcallOp, HANDLE_FD};
use super::Fuse;
use crate::host::syscall::Syscall;

/// An absolute path of the lower file system.
fn abs(path: &[String]) -> String {
    format!("/{}", path.join("/"))
}

/// Continues a handler after `find_file_within(parent, child)`: `None`
/// while its `access` and search are still to make (then `step` holds
/// the call), else the results of the handler's own calls after it.
fn after_find<'r>(
    child: &[String],
    rets: &'r [i64],
    step: &mut Option<DaemonStep>,
) -> Option<&'r [i64]> {
    let parent = &child[..child.len().saturating_sub(1)];
    let skip = match rets.first() {
        None => {
            *step = Some(DaemonStep::Call(Syscall::Stat { path: abs(child) }));
            return None;
        }
        Some(&r) if r < 0 => 2,
        Some(_) => 1,
    };
    if rets.len() < skip {
        *step = Some(DaemonStep::Call(Syscall::Readdir { path: abs(parent) }));
        return None;
    }
    Some(&rets[skip..])
}

/// The next of `calls` after the results `rets`, or the reply: the first
/// failing result, else the last result (`lstat` replies 0).
fn sequence(calls: Vec<Syscall>, rets: &[i64]) -> DaemonStep {
    if let Some(&r) = rets.last().filter(|r| **r < 0) {
        return DaemonStep::Reply(r);
    }
    match calls.into_iter().nth(rets.len()) {
        Some(sc) => DaemonStep::Call(sc),
        None => DaemonStep::Reply(0),
    }
}

/// Continues a handler that first resolves `child` with
/// `find_file_within`, then makes `calls`.
fn find_then(child: &[String], rets: &[i64], calls: Vec<Syscall>) -> DaemonStep {
    let mut step = None;
    match after_find(child, rets, &mut step) {
        None => step.expect("a call"),
        Some(r) => sequence(calls, r),
    }
}

impl Fuse {
    /// What a daemon thread serving `req` does after lower calls that
    /// returned `rets`.
    pub(super) fn sdcard_step(&self, req: &Upcall, rets: &[i64]) -> DaemonStep {
        let fd = HANDLE_FD;
        match req.op {
            UpcallOp::Read {
                first_page, pages, ..
            } => sequence(
                vec![Syscall::Pread {
                    fd,
                    offset: first_page * crate::types::PAGE_BYTES,
                    bytes: pages * crate::types::PAGE_BYTES,
                }],
                rets,
            )
            .or_result(rets),
            UpcallOp::Write { offset, bytes } => {
                sequence(vec![Syscall::Pwrite { fd, offset, bytes }], rets).or_result(rets)
            }
            UpcallOp::Fsync { datasync } => {
                let sc = if datasync {
                    Syscall::Fdatasync { fd }
                } else {
                    Syscall::Fsync { fd }
                };
                sequence(vec![sc], rets)
            }
            UpcallOp::Release => match rets.len() {
                0 => DaemonStep::Call(Syscall::Close { fd }),
                _ => DaemonStep::Reply(0),
            },
            UpcallOp::Flush => DaemonStep::Reply(0),
            UpcallOp::Create { .. } => DaemonStep::Reply(-Errno::NoSys.code()),
            UpcallOp::Getattr => self.on_node(req, rets, |path| vec![Syscall::Stat { path }]),
            UpcallOp::Setattr { size } => self.on_node(req, rets, |path| {
                vec![
                    Syscall::Truncate {
                        path: path.clone(),
                        len: size,
                    },
                    Syscall::Stat { path },
                ]
            }),
            UpcallOp::Open { flags } => {
                self.on_node(req, rets, |path| vec![Syscall::Open { path, flags }])
            }
            UpcallOp::Lookup { name } => {
                let child = self.walk_name(req.sender, name);
                let stat = Syscall::Stat { path: abs(&child) };
                find_then(&child, rets, vec![stat])
            }
            UpcallOp::Mknod { name } | UpcallOp::Mkdir { name } => {
                let child = self.walk_name(req.sender, name);
                let path = abs(&child);
                let make = match req.op {
                    UpcallOp::Mknod { .. } => Syscall::Mknod { path: path.clone() },
                    _ => Syscall::Mkdir { path: path.clone() },
                };
                find_then(&child, rets, vec![make, Syscall::Stat { path }])
            }
            UpcallOp::Unlink { name, rmdir } => {
                let child = self.walk_name(req.sender, name);
                let path = abs(&child);
                let remove = if rmdir {
                    Syscall::Rmdir { path }
                } else {
                    Syscall::Unlink { path }
                };
                find_then(&child, rets, vec![remove])
            }
            UpcallOp::Rename => self.rename_step(req, rets),
        }
    }

    /// A handler on the request's own node: `calls` on its lower path, or
    /// ENOENT when the daemon has no such node.
    fn on_node(
        &self,
        req: &Upcall,
        rets: &[i64],
        calls: impl FnOnce(String) -> Vec<Syscall>,
    ) -> DaemonStep {
        match self.dcache.path(req.ino).map(abs) {
            Some(path) => sequence(calls(path), rets),
            None => DaemonStep::Reply(-Errno::NoEnt.code()),
        }
    }

    /// RENAME: resolve the target, then `rename`; "mv foo FOO" in one
    /// directory skips the search.
    fn rename_step(&self, req: &Upcall, rets: &[i64]) -> DaemonStep {
        let (from, to) = self.walk_rename(req.sender);
        let rename = Syscall::Rename {
            from: abs(&from),
            to: abs(&to),
        };
        if abs(&from).eq_ignore_ascii_case(&abs(&to)) {
            return sequence(vec![rename], rets);
        }
        find_then(&to, rets, vec![rename])
    }
}

impl DaemonStep {
    /// A read or write replies with the byte count its call returned.
    fn or_result(self, rets: &[i64]) -> DaemonStep {
        match (self, rets.first()) {
            (DaemonStep::Reply(0), Some(&n)) => DaemonStep::Reply(n),
            (s, _) => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handler_stops_at_its_first_failing_call() {
        let calls = || {
            vec![
                Syscall::Mknod { path: "/a".into() },
                Syscall::Stat { path: "/a".into() },
            ]
        };
        assert!(matches!(
            sequence(calls(), &[]),
            DaemonStep::Call(Syscall::Mknod { .. })
        ));
        assert!(matches!(
            sequence(calls(), &[0]),
            DaemonStep::Call(Syscall::Stat { .. })
        ));
        assert_eq!(sequence(calls(), &[0, 0]), DaemonStep::Reply(0));
        assert_eq!(sequence(calls(), &[-28]), DaemonStep::Reply(-28));
    }

    #[test]
    fn find_file_within_searches_the_parent_only_when_access_fails() {
        let child = vec!["d".to_string(), "f".to_string()];
        let mut step = None;
        assert!(after_find(&child, &[], &mut step).is_none());
        assert!(matches!(step, Some(DaemonStep::Call(Syscall::Stat { .. }))));
        assert_eq!(after_find(&child, &[0], &mut step), Some(&[][..]));
        let mut step = None;
        assert!(after_find(&child, &[-2], &mut step).is_none());
        assert_eq!(
            step,
            Some(DaemonStep::Call(Syscall::Readdir { path: "/d".into() }))
        );
        assert_eq!(after_find(&child, &[-2, 0, 0], &mut step), Some(&[0][..]));
    }
}
