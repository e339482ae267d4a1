//! The namespace and descriptor calls: `open`/`creat`, `close`, `lseek`,
//! `ftruncate`, `unlink`, `rmdir`, `rename`, `mkdir`. They change metadata that is
//! cached (no I/O of their own): the call costs the system-call time and
//! the file system records its metadata updates (ext4: in the running
//! transaction, written by a later commit, as reference §4.2 notes for
//! `ftruncate`/`unlink`). The namespace itself is the file system's
//! ([`super::fs::FileSystem`]); the raw layout has fixed files only.

use super::call::Call;
use super::errno::Errno;
use super::fs::FsyncPlan;
use super::stage::{Below, Host, HostEvent, HostEvents};
use super::syscall::{OpenFlags, Syscall, Whence};
use super::task::{Node, OpenFile, Phase};
use super::vfs::{components, Mount};
use crate::stats::report::CallKind;
use crate::types::Ns;

impl Host {
    /// Serves a namespace or descriptor call of thread `t`.
    pub(super) fn namei<E: HostEvents>(&mut self, now: Ns, t: u32, sc: Syscall, b: &mut Below<E>) {
        let kind = match &sc {
            Syscall::Open { .. } => CallKind::Open,
            Syscall::Close { .. } => CallKind::Close,
            Syscall::Lseek { .. } => CallKind::Lseek,
            Syscall::Ftruncate { .. } => CallKind::Ftruncate,
            Syscall::Unlink { .. } | Syscall::Rmdir { .. } => CallKind::Unlink,
            Syscall::Rename { .. } => CallKind::Rename,
            Syscall::Mkdir { .. } => CallKind::Mkdir,
            Syscall::Stat { .. } => CallKind::Stat,
            Syscall::Mknod { .. } => CallKind::Mknod,
            Syscall::Truncate { .. } => CallKind::Truncate,
            Syscall::Readdir { .. } => CallKind::Readdir,
            _ => unreachable!("data calls are served elsewhere"),
        };
        if self.forward_namei(now, t, kind, &sc, b) {
            return;
        }
        let readdir = matches!(sc, Syscall::Readdir { .. });
        let ret = self.namei_apply(now, t, sc);
        self.after_fs_change(now, b);
        let call = self.calls.insert(Call::new(now, t, kind, 0));
        let task = &mut self.tasks[t as usize];
        task.call = Some(call);
        task.ret = ret.unwrap_or_else(|e| -e.code());
        let mut at = self.enter(now, t, call, 0);
        if readdir {
            // getdents64 and closedir after opendir: two more system calls.
            at += self
                .cpu
                .thread(t, at, |c| 2 * (c.syscall_entry + c.syscall));
            self.calls[call].charge(crate::stats::report::Layer::SyscallFs, at);
        }
        let plan = match ret {
            Ok(_) => self.with_fs(b, |fs, k| fs.namei_sync(t, at, k)).flatten(),
            Err(_) => None,
        };
        match plan {
            None => b.q.at(at, HostEvent::Return(t)),
            Some(plan) => self.namei_sync(at, t, plan, b),
        }
    }

    /// What a namespace call must still write or wait for before it
    /// returns ([`super::fs::FileSystem::namei_sync`]): metadata blocks
    /// written and waited for, a sleep until the file system wakes the
    /// task, or a cache flush.
    fn namei_sync<E: HostEvents>(&mut self, at: Ns, t: u32, plan: FsyncPlan, b: &mut Below<E>) {
        match plan {
            FsyncPlan::InPlace { mapping, blocks } => {
                // The call returns when they complete (no flush).
                self.tasks[t as usize].phase = Phase::WaitIo;
                if self.write_blocks_for_call(at, t, mapping, &blocks, b) == 0 {
                    b.q.at(at, HostEvent::Return(t));
                } else {
                    self.io_sleep(t, at);
                }
            }
            FsyncPlan::Wait => self.tasks[t as usize].phase = Phase::SyncWait,
            FsyncPlan::Flush => self.sync_barrier(at, t, b),
        }
    }

    fn namei_apply(&mut self, now: Ns, t: u32, sc: Syscall) -> Result<i64, Errno> {
        let pid = self.tasks[t as usize].pid;
        // rmdir(2) removes directories only, unlink(2) everything else.
        let rmdir = matches!(sc, Syscall::Rmdir { .. });
        let cache = &mut self.cache;
        match sc {
            Syscall::Open { path, flags } => self.open_apply(now, t, &path, flags),
            Syscall::Close { fd } => {
                let of = self.tasks[t as usize].remove(fd).ok_or(Errno::BadF)?;
                if let (Mount::Fs(fs), Node::Inode(ino)) = (&mut self.mount, of.node) {
                    fs.close(ino, cache, now);
                }
                Ok(0)
            }
            Syscall::Lseek { fd, offset, whence } => {
                let task = &self.tasks[t as usize];
                let of = task.file(fd).ok_or(Errno::BadF)?;
                let base = match whence {
                    Whence::Set => 0,
                    Whence::Cur => of.pos as i64,
                    Whence::End => self.mount.size(of.node) as i64,
                };
                // vfs_setpos: below 0 or past s_maxbytes is EINVAL.
                let max = self.mount.max_bytes();
                let pos = base
                    .checked_add(offset)
                    .filter(|p| *p >= 0 && *p as u64 <= max)
                    .ok_or(Errno::Inval)?;
                self.tasks[t as usize].file_mut(fd).expect("checked").pos = pos as u64;
                Ok(pos)
            }
            Syscall::Ftruncate { fd, len } => {
                // do_sys_ftruncate: a negative length, or a descriptor not
                // open for writing, is EINVAL; inode_newsize_ok: past
                // s_maxbytes is EFBIG.
                if len > i64::MAX as u64 {
                    return Err(Errno::Inval);
                }
                let of = self.tasks[t as usize].file(fd).ok_or(Errno::BadF)?;
                if !of.flags.access.writes() {
                    return Err(Errno::Inval);
                }
                if len > self.mount.max_bytes() {
                    return Err(Errno::FBig);
                }
                match (&mut self.mount, of.node) {
                    (Mount::Fs(fs), Node::Inode(ino)) => {
                        fs.truncate(ino, len, cache, now)?;
                        Ok(0)
                    }
                    _ => Err(Errno::NotSupported),
                }
            }
            Syscall::Unlink { path } | Syscall::Rmdir { path } => {
                let fs = self.mount.fs_mut().ok_or(Errno::NotSupported)?;
                fs.unlink(&components(&path)?, rmdir, cache, now)?;
                Ok(0)
            }
            Syscall::Rename { from, to } => {
                let fs = self.mount.fs_mut().ok_or(Errno::NotSupported)?;
                let fc = components(&from)?;
                let tc = components(&to)?;
                fs.rename(&fc, &tc, pid, cache, now)?;
                Ok(0)
            }
            Syscall::Mkdir { path } => {
                let fs = self.mount.fs_mut().ok_or(Errno::NotSupported)?;
                fs.mkdir(&components(&path)?, pid, cache, now)?;
                Ok(0)
            }
            Syscall::Stat { path } => self.mount.lookup_any(&path).map(|_| 0),
            Syscall::Readdir { path } => match self.mount.lookup_any(&path)? {
                Node::Inode(ino) if self.mount.fs().is_some_and(|fs| fs.is_dir(ino)) => Ok(0),
                _ => Err(Errno::NotDir),
            },
            Syscall::Mknod { path } => self.mknod_apply(now, pid, &path),
            Syscall::Truncate { path, len } => self.truncate_apply(now, &path, len),
            _ => unreachable!("data calls are served elsewhere"),
        }
    }

    /// `mknod(path, S_IFREG)`: the file is created (EEXIST if the name
    /// exists) as by `open(O_CREAT | O_EXCL)`, and no opener is left.
    fn mknod_apply(&mut self, now: Ns, pid: u32, path: &str) -> Result<i64, Errno> {
        let cache = &mut self.cache;
        let fs = self.mount.fs_mut().ok_or(Errno::NotSupported)?;
        let flags = OpenFlags {
            access: super::syscall::Access::WriteOnly,
            creat: true,
            excl: true,
            ..OpenFlags::default()
        };
        let ino = fs.open(&components(path)?, flags, pid, cache, now)?;
        fs.close(ino, cache, now);
        Ok(0)
    }

    /// `truncate(path, len)`: `ftruncate` by name (EISDIR for a
    /// directory, EINVAL for a negative length, EFBIG past `s_maxbytes`).
    fn truncate_apply(&mut self, now: Ns, path: &str, len: u64) -> Result<i64, Errno> {
        if len > i64::MAX as u64 {
            return Err(Errno::Inval);
        }
        let cache = &mut self.cache;
        let fs = self.mount.fs_mut().ok_or(Errno::NotSupported)?;
        let ino = fs.lookup(&components(path)?)?;
        if fs.is_dir(ino) {
            return Err(Errno::IsDir);
        }
        if len > fs.max_bytes() {
            return Err(Errno::FBig);
        }
        fs.truncate(ino, len, cache, now)?;
        Ok(0)
    }

    /// `open(path, flags)` of thread `t` at `now`: returns the new
    /// descriptor.
    fn open_apply(&mut self, now: Ns, t: u32, path: &str, flags: OpenFlags) -> Result<i64, Errno> {
        let pid = self.tasks[t as usize].pid;
        let cache = &mut self.cache;
        let (node, mapping) = match &mut self.mount {
            Mount::Raw(_) if flags.creat && flags.excl => return Err(Errno::Exist),
            Mount::Raw(_) if flags.trunc => return Err(Errno::NotSupported),
            m @ Mount::Raw(_) => m.lookup(path)?,
            Mount::Fs(fs) => {
                let ino = fs.open(&components(path)?, flags, pid, cache, now)?;
                // A FUSE daemon's descriptor is on the lower file.
                let mapping = match fs.forwarding() {
                    Some(f) if self.tasks[t as usize].server => f.lower_mapping(ino),
                    _ => fs.mapping(ino),
                };
                (Node::Inode(ino), mapping)
            }
        };
        if let Some(log) = self.file_writes.as_mut() {
            log.note_open(path, mapping, now);
        }
        let fd = self.tasks[t as usize].install(OpenFile {
            node,
            mapping,
            flags,
            pos: 0,
            ra: Default::default(),
        });
        Ok(fd as i64)
    }
}
