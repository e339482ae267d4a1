//! The FUSE kernel side of an application's namespace and descriptor
//! calls (Linux 3.4 `fs/namei.c` path walk into `fs/fuse/dir.c` and
//! `fs/fuse/file.c`): which requests each call sends, in order, each
//! after the previous reply.
//!
//! * The path walk checks `MAY_EXEC` on every directory it passes
//!   (`may_lookup`); on sdcard's `default_permissions` mount that needs
//!   the directory's attributes, so expired ones send FUSE_GETATTR
//!   (`fuse_permission`). Each component the dentry cache does not hold
//!   valid sends FUSE_LOOKUP (`fuse_lookup`, `fuse_dentry_revalidate`).
//! * `open(O_CREAT)` of a missing name tries FUSE_CREATE once per mount:
//!   sdcard answers ENOSYS, the kernel sets `no_create` and falls back to
//!   FUSE_MKNOD, then opens with FUSE_OPEN (`fuse_create`,
//!   `fuse_create_open`). Opening an existing file checks its
//!   permission (FUSE_GETATTR when expired), then FUSE_OPEN; O_TRUNC
//!   travels in the open flags (`FUSE_ATOMIC_O_TRUNC`), so no
//!   FUSE_SETATTR. O_DIRECT fails with EINVAL before FUSE_OPEN
//!   (`fuse_open_common`). A directory opens without a request
//!   (FUSE_OPENDIR is not modelled).
//! * `close` of a regular file sends FUSE_FLUSH and waits, then queues
//!   FUSE_RELEASE without waiting (`fuse_flush`, `fuse_release_common`;
//!   every modelled descriptor is its file's last reference).
//! * `unlink`/`rmdir`, `mkdir`, `rename` send FUSE_UNLINK/FUSE_RMDIR,
//!   FUSE_MKDIR, FUSE_RENAME after the walk; `ftruncate` sends
//!   FUSE_SETATTR; `stat` sends FUSE_GETATTR when the attributes expired.
//!   The VFS's own refusals (EEXIST, EISDIR, ENOTDIR before a request)
//!   come from the kernel; every other error is the reply's, which is
//!   the errno of the daemon's lower call.

use super::super::{may_open, Errno, Ino, NodeRef, NsCall, NsStep, Upcall, UpcallOp};
use super::Fuse;
use crate::types::Ns;

/// Where a call's walk is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// The `MAY_EXEC` check of the directory of the first `depth`
    /// components of path `arg`.
    Perm { arg: u8, depth: u32 },
    /// The look-up of the first `depth` components of path `arg`.
    Lookup { arg: u8, depth: u32 },
    /// Paths resolved: the call's own requests.
    Call,
}

/// What the request in flight asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pending {
    /// FUSE_GETATTR of a node.
    Getattr(Ino),
    /// FUSE_LOOKUP.
    Lookup { arg: u8, depth: u32 },
    /// FUSE_CREATE (open of a missing name).
    Create,
    /// The call's own request.
    Op,
}

/// A namespace call in progress.
#[derive(Clone, Debug)]
pub struct Walk {
    call: NsCall,
    fd: u32,
    at: At,
    /// The last component of each path argument, once looked up: its
    /// node, or `None` (a negative dentry).
    found: [Option<Ino>; 2],
    pending: Option<Pending>,
    /// FUSE_CREATE was tried or skipped (open).
    tried_create: bool,
    /// The file was made by this call (open).
    created: bool,
    /// The target's own permission check is done (open).
    perm_done: bool,
    /// The call's main request was answered.
    op_done: bool,
}

fn done(e: Errno) -> NsStep {
    NsStep::Done {
        ret: -e.code(),
        detach: None,
    }
}

fn ok(ret: i64) -> NsStep {
    NsStep::Done { ret, detach: None }
}

impl Walk {
    /// Path argument `arg` of the call.
    fn path(&self, arg: u8) -> &[String] {
        match (&self.call, arg) {
            (NsCall::Open { path, .. }, 0)
            | (NsCall::Unlink { path, .. }, 0)
            | (NsCall::Mkdir { path }, 0)
            | (NsCall::Stat { path }, 0)
            | (NsCall::Rename { from: path, .. }, 0)
            | (NsCall::Rename { to: path, .. }, 1) => path,
            _ => &[],
        }
    }

    /// The path arguments the call walks.
    fn args(&self) -> u8 {
        match self.call {
            NsCall::Close { .. } | NsCall::Truncate { .. } => 0,
            NsCall::Rename { .. } => 2,
            _ => 1,
        }
    }
}

impl Fuse {
    /// The path the daemon resolves for `name` of task `sender`'s call.
    pub(super) fn walk_name(&self, sender: u32, name: NodeRef) -> Vec<String> {
        let w = &self.walks[&sender];
        w.path(name.arg)[..name.depth as usize].to_vec()
    }

    /// The paths of task `sender`'s rename.
    pub(super) fn walk_rename(&self, sender: u32) -> (Vec<String>, Vec<String>) {
        let w = &self.walks[&sender];
        (w.path(0).to_vec(), w.path(1).to_vec())
    }

    /// Task `sender` starts `call` at `now`.
    pub(super) fn walk_begin(&mut self, sender: u32, fd: u32, call: NsCall, now: Ns) -> NsStep {
        let mut w = Walk {
            call,
            fd,
            at: At::Call,
            found: [None, None],
            pending: None,
            tried_create: false,
            created: false,
            perm_done: false,
            op_done: false,
        };
        if w.args() > 0 {
            w.at = At::Perm { arg: 0, depth: 0 };
        }
        self.walk_run(sender, w, now)
    }

    /// The reply `ret` to task `sender`'s request came back at `now`.
    pub(super) fn walk_reply(&mut self, sender: u32, ret: i64, now: Ns) -> NsStep {
        let mut w = self.walks.remove(&sender).expect("a walk in progress");
        let pending = w.pending.take().expect("a request in flight");
        match pending {
            Pending::Getattr(ino) => {
                if ret < 0 {
                    return ok(ret);
                }
                self.dcache.attr_reply(ino, now);
            }
            Pending::Lookup { arg, depth } => {
                let prefix = &w.path(arg)[..depth as usize];
                let last = depth as usize == w.path(arg).len();
                if ret == -Errno::NoEnt.code() && last {
                    w.found[arg as usize] = None;
                    w.at = self.after_arg(&w, arg);
                } else if ret < 0 {
                    return ok(ret);
                } else {
                    // Another daemon thread may have removed it since.
                    let ino = match self.lower_ino(prefix) {
                        Ok(ino) => ino,
                        Err(e) => return done(e),
                    };
                    self.dcache.entry_reply(prefix, ino, now);
                    match self.after_lookup(&mut w, arg, depth, ino) {
                        Ok(at) => w.at = at,
                        Err(e) => return done(e),
                    }
                }
            }
            Pending::Create => {
                // sdcard has no FUSE_CREATE: ENOSYS, and the kernel falls
                // back to mknod from now on.
                debug_assert!(ret < 0, "sdcard does not implement FUSE_CREATE");
                if ret != -Errno::NoSys.code() {
                    return ok(ret.min(-1));
                }
                self.no_create = true;
            }
            Pending::Op => {
                if let Some(step) = self.op_reply(&mut w, ret, now) {
                    return step;
                }
            }
        }
        self.walk_run(sender, w, now)
    }

    /// Runs `w` until it sends a request or ends.
    fn walk_run(&mut self, sender: u32, mut w: Walk, now: Ns) -> NsStep {
        loop {
            let step = match w.at {
                At::Perm { arg, depth } => self.perm_step(&mut w, arg, depth, now),
                At::Lookup { arg, depth } => self.lookup_step(&mut w, arg, depth, now),
                At::Call => self.call_step(&mut w, now),
            };
            match step {
                None => continue,
                Some(NsStep::Send(mut req)) => {
                    req.sender = sender;
                    req.fd = w.fd;
                    req.queued = now;
                    self.walks.insert(sender, w);
                    return NsStep::Send(req);
                }
                Some(end) => return end,
            }
        }
    }

    /// The lower inode at `path`.
    fn lower_ino(&self, path: &[String]) -> Result<Ino, Errno> {
        let comps: Vec<&str> = path.iter().map(String::as_str).collect();
        self.lower.lookup(&comps)
    }

    /// A request of `op` on node `ino`, recorded as `pending` (the sender,
    /// descriptor and time are filled in by [`Fuse::walk_run`]).
    fn send(w: &mut Walk, op: UpcallOp, ino: Ino, pending: Pending) -> Option<NsStep> {
        w.pending = Some(pending);
        Some(NsStep::Send(Upcall {
            op,
            ino,
            sender: 0,
            fd: 0,
            queued: 0,
        }))
    }

    /// `MAY_EXEC` on the directory at `depth` of path `arg`.
    fn perm_step(&mut self, w: &mut Walk, arg: u8, depth: u32, now: Ns) -> Option<NsStep> {
        let dir = match self.lower_ino(&w.path(arg)[..depth as usize]) {
            Ok(d) => d,
            Err(e) => return Some(done(e)),
        };
        if !self.dcache.attr_fresh(dir, now) {
            return Fuse::send(w, UpcallOp::Getattr, dir, Pending::Getattr(dir));
        }
        let n = w.path(arg).len() as u32;
        w.at = if n == 0 {
            // The root itself.
            w.found[arg as usize] = Some(dir);
            self.after_arg(w, arg)
        } else {
            At::Lookup {
                arg,
                depth: depth + 1,
            }
        };
        None
    }

    /// The look-up of the first `depth` components of path `arg`: from
    /// a valid dentry, or FUSE_LOOKUP.
    fn lookup_step(&mut self, w: &mut Walk, arg: u8, depth: u32, now: Ns) -> Option<NsStep> {
        let prefix = &w.path(arg)[..depth as usize];
        let cached = self
            .dcache
            .entry_fresh(prefix, now)
            .then(|| self.lower_ino(prefix).ok())
            .flatten();
        let Some(ino) = cached else {
            let name = NodeRef { arg, depth };
            return Fuse::send(
                w,
                UpcallOp::Lookup { name },
                0,
                Pending::Lookup { arg, depth },
            );
        };
        match self.after_lookup(w, arg, depth, ino) {
            Ok(at) => w.at = at,
            Err(e) => return Some(done(e)),
        }
        None
    }

    /// Component `depth` of path `arg` is node `ino`: the walk goes on
    /// into it (a directory: ENOTDIR otherwise), or the path is resolved.
    fn after_lookup(&self, w: &mut Walk, arg: u8, depth: u32, ino: Ino) -> Result<At, Errno> {
        if depth as usize == w.path(arg).len() {
            w.found[arg as usize] = Some(ino);
            return Ok(self.after_arg(w, arg));
        }
        if !self.lower.is_dir(ino) {
            return Err(Errno::NotDir);
        }
        Ok(At::Perm { arg, depth })
    }

    /// What follows the resolution of path `arg`.
    fn after_arg(&self, w: &Walk, arg: u8) -> At {
        if arg + 1 < w.args() {
            At::Perm {
                arg: arg + 1,
                depth: 0,
            }
        } else {
            At::Call
        }
    }

    /// The parent directory of path `arg`'s last component.
    fn parent_ino(&self, w: &Walk, arg: u8) -> Option<Ino> {
        let p = w.path(arg);
        self.lower_ino(&p[..p.len().saturating_sub(1)]).ok()
    }

    /// The call's own requests once its paths are resolved.
    fn call_step(&mut self, w: &mut Walk, now: Ns) -> Option<NsStep> {
        if w.op_done {
            return Some(ok(0));
        }
        let name = |depth: usize| NodeRef {
            arg: 0,
            depth: depth as u32,
        };
        match w.call.clone() {
            NsCall::Open { flags, .. } => self.open_step(w, flags, now),
            NsCall::Close { ino } if self.lower.is_dir(ino) => Some(ok(0)),
            NsCall::Close { ino } => Fuse::send(w, UpcallOp::Flush, ino, Pending::Op),
            NsCall::Truncate { ino, len } => {
                Fuse::send(w, UpcallOp::Setattr { size: len }, ino, Pending::Op)
            }
            NsCall::Unlink { path, rmdir } => {
                let Some(ino) = w.found[0] else {
                    return Some(done(Errno::NoEnt));
                };
                // may_delete: the wrong kind is refused before a request.
                match (rmdir, self.lower.is_dir(ino)) {
                    (true, false) => return Some(done(Errno::NotDir)),
                    (false, true) => return Some(done(Errno::IsDir)),
                    _ => {}
                }
                let op = UpcallOp::Unlink {
                    name: name(path.len()),
                    rmdir,
                };
                Fuse::send(w, op, ino, Pending::Op)
            }
            NsCall::Mkdir { path } => match w.found[0] {
                Some(_) => Some(done(Errno::Exist)),
                None => Fuse::send(
                    w,
                    UpcallOp::Mkdir {
                        name: name(path.len()),
                    },
                    0,
                    Pending::Op,
                ),
            },
            NsCall::Rename { from, to } => match w.found[0] {
                None => Some(done(Errno::NoEnt)),
                // The same name: nothing to do (vfs_rename).
                Some(_) if from == to => Some(ok(0)),
                Some(ino) => Fuse::send(w, UpcallOp::Rename, ino, Pending::Op),
            },
            NsCall::Stat { .. } => match w.found[0] {
                None => Some(done(Errno::NoEnt)),
                Some(ino) if !self.dcache.attr_fresh(ino, now) => {
                    Fuse::send(w, UpcallOp::Getattr, ino, Pending::Op)
                }
                Some(_) => Some(ok(0)),
            },
        }
    }

    /// `open(path, flags)` once the path is resolved.
    fn open_step(
        &mut self,
        w: &mut Walk,
        flags: crate::host::syscall::OpenFlags,
        now: Ns,
    ) -> Option<NsStep> {
        let n = w.path(0).len() as u32;
        let Some(ino) = w.found[0] else {
            if !flags.creat {
                return Some(done(Errno::NoEnt));
            }
            let name = NodeRef { arg: 0, depth: n };
            if !w.tried_create {
                w.tried_create = true;
                if !self.no_create {
                    return Fuse::send(w, UpcallOp::Create { name }, 0, Pending::Create);
                }
            }
            return Fuse::send(w, UpcallOp::Mknod { name }, 0, Pending::Op);
        };
        let is_dir = self.lower.is_dir(ino);
        if !w.created {
            if let Err(e) = may_open(flags, is_dir, self.lower.size(ino)) {
                return Some(done(e));
            }
        }
        if !w.perm_done {
            w.perm_done = true;
            if !self.dcache.attr_fresh(ino, now) {
                return Fuse::send(w, UpcallOp::Getattr, ino, Pending::Getattr(ino));
            }
        }
        if flags.direct {
            return Some(done(Errno::Inval));
        }
        if is_dir {
            return Some(ok(ino as i64));
        }
        let mut lower = flags;
        lower.creat = false;
        lower.excl = false;
        Fuse::send(w, UpcallOp::Open { flags: lower }, ino, Pending::Op)
    }

    /// The reply to the call's own request: `Some` when the call ends.
    fn op_reply(&mut self, w: &mut Walk, ret: i64, now: Ns) -> Option<NsStep> {
        match w.call.clone() {
            NsCall::Open { path, flags } => {
                if ret < 0 {
                    return Some(ok(ret));
                }
                if w.found[0].is_none() {
                    // FUSE_MKNOD made it: its entry reply.
                    let ino = match self.lower_ino(&path) {
                        Ok(ino) => ino,
                        Err(e) => return Some(done(e)),
                    };
                    self.dcache.entry_reply(&path, ino, now);
                    if let Some(dir) = self.parent_ino(w, 0) {
                        self.dcache.invalidate_attr(dir);
                    }
                    w.found[0] = Some(ino);
                    w.created = true;
                    return None;
                }
                let ino = w.found[0].expect("opened");
                if flags.trunc {
                    // fuse_finish_open with atomic O_TRUNC.
                    self.dcache.invalidate_attr(ino);
                }
                Some(ok(ino as i64))
            }
            NsCall::Close { ino } => {
                let release = Upcall {
                    op: UpcallOp::Release,
                    ino,
                    sender: 0,
                    fd: w.fd,
                    queued: now,
                };
                Some(NsStep::Done {
                    ret,
                    detach: Some(release),
                })
            }
            _ if ret < 0 => Some(ok(ret)),
            call => {
                self.namespace_changed(w, &call, now);
                w.op_done = true;
                None
            }
        }
    }

    /// The caches after a successful unlink, mkdir, rename, setattr or
    /// getattr reply.
    fn namespace_changed(&mut self, w: &Walk, call: &NsCall, now: Ns) {
        match call {
            NsCall::Truncate { ino, .. } => self.dcache.attr_reply(*ino, now),
            NsCall::Stat { .. } => {
                if let Some(ino) = w.found[0] {
                    self.dcache.attr_reply(ino, now);
                }
            }
            NsCall::Unlink { path, .. } => {
                self.dcache.drop_entries(path);
                if let Some(ino) = w.found[0] {
                    self.dcache.invalidate_attr(ino);
                }
                if let Some(dir) = self.parent_ino(w, 0) {
                    self.dcache.invalidate_attr(dir);
                }
            }
            NsCall::Mkdir { path } => {
                if let Ok(ino) = self.lower_ino(path) {
                    self.dcache.entry_reply(path, ino, now);
                }
                if let Some(dir) = self.parent_ino(w, 0) {
                    self.dcache.invalidate_attr(dir);
                }
            }
            NsCall::Rename { from, to } => {
                self.dcache.rename(from, to);
                for ino in [w.found[0], w.found[1]].into_iter().flatten() {
                    self.dcache.invalidate_attr(ino);
                }
                for arg in [0, 1] {
                    if let Some(dir) = self.parent_ino(w, arg) {
                        self.dcache.invalidate_attr(dir);
                    }
                }
            }
            NsCall::Open { .. } | NsCall::Close { .. } => {}
        }
    }
}
