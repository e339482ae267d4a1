//! A host task: the kernel side of one application thread — its file
//! descriptor table, the system call it is in, and the bios it is about
//! to submit.

use super::page_cache::FileId;
use super::readahead::RaState;
use super::syscall::{Fd, OpenFlags};
use crate::block::request::{Bio, Submitter};
use crate::types::{IoPrio, Op};

/// First descriptor a task's `open` returns (0-2 are stdio).
pub const FIRST_FD: Fd = 3;

/// Which part of a call a task is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A buffered read walking the page cache.
    Read,
    /// A buffered write (write_begin, then dirtying the pages).
    Write,
    /// Waiting for the data bios of a direct or synchronous write, or of
    /// an fsync's writeback.
    WaitIo,
    /// An fsync() call of the raw layout.
    Fsync,
    /// Sleeping in balance_dirty_pages until dirty pages drop.
    Throttled,
    /// `fsync` on a file system, step 1: waiting for the file's data
    /// writeback (`filemap_write_and_wait`).
    SyncData {
        /// fdatasync (true) or fsync.
        datasync: bool,
    },
    /// `fsync` writing the inode's metadata blocks in place (no journal):
    /// waiting for them; then the cache flush.
    SyncMeta,
    /// Asleep in the file system until it wakes the task (ext4: a JBD2
    /// commit, `jbd2_complete_transaction`, whose commit flushed); the
    /// call returns when woken.
    SyncWait,
    /// Waiting for a cache flush; the call returns after it.
    SyncFlush,
    /// `sync()`: step `n` of writeback, commit, metadata, flush.
    SyncAll(u8),
    /// A user-space server thread (FUSE daemon) about to make the lower
    /// system call of the request it took.
    Serve,
    /// Waiting for the replies of forwarded FUSE_WRITE/FUSE_FSYNC
    /// requests; then a FUSE_FSYNC (`sync`: O_SYNC/O_DSYNC, fdatasync when
    /// true) or the return.
    Forwarded {
        /// The FUSE_FSYNC still to send after the writes, if any.
        sync: Option<bool>,
    },
    /// A namespace call on a FUSE mount, woken by the reply to its
    /// request (whose result is in `ret`): it sends the next request or
    /// returns.
    FuseWalk,
}

/// What happens when a task's data I/O completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AfterIo {
    /// The call returns.
    #[default]
    Return,
    /// `generic_write_sync` of an O_SYNC/O_DSYNC write on a file system.
    Sync {
        /// O_DSYNC only.
        datasync: bool,
    },
}

/// What an open file description refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// A file of the raw extent layout (its index).
    Raw(usize),
    /// An inode of the mounted file system (its number).
    Inode(u32),
}

/// An open file description.
#[derive(Clone, Debug)]
pub struct OpenFile {
    /// The file.
    pub node: Node,
    /// Its page-cache mapping.
    pub mapping: FileId,
    /// Open flags.
    pub flags: OpenFlags,
    /// File offset, bytes (`f_pos`).
    pub pos: u64,
    /// Read-ahead state (`f_ra`).
    pub ra: RaState,
}

/// The kernel side of one application thread.
#[derive(Clone, Debug)]
pub struct Task {
    /// Process id (bios are charged to it).
    pub pid: u32,
    /// I/O priority of its bios.
    pub ioprio: IoPrio,
    /// File descriptor table: slot `fd - FIRST_FD`.
    pub fds: Vec<Option<OpenFile>>,
    /// Descriptor of the call in progress.
    pub fd: Fd,
    /// Byte offset of the call in progress within the file.
    pub call_off: u64,
    /// Bytes of the call in progress.
    pub call_bytes: u64,
    /// What the task's next step continues.
    pub phase: Phase,
    /// The call in progress.
    pub call: Option<u32>,
    /// Buffered I/O progress: next page to walk and end page.
    pub pos_page: u64,
    /// One past the last page of the call.
    pub end_page: u64,
    /// Bios prepared by the task, submitted at its next plug.
    pub pending_bios: Vec<Bio>,
    /// What follows the data I/O of the call in progress.
    pub after_io: AfterIo,
    /// Return value of the last call (bytes, descriptor, offset, or
    /// −errno).
    pub ret: i64,
    /// A thread of a user-space file-system server (the FUSE daemon): its
    /// calls serve forwarded requests, are native (no platform layer) and
    /// are not recorded as application calls.
    pub server: bool,
}

impl Task {
    /// A task of process `pid` with no open file.
    pub fn new(pid: u32, ioprio: IoPrio) -> Task {
        Task {
            pid,
            ioprio,
            fds: Vec::new(),
            fd: 0,
            call_off: 0,
            call_bytes: 0,
            phase: Phase::Read,
            call: None,
            pos_page: 0,
            end_page: 0,
            pending_bios: Vec::with_capacity(16),
            after_io: AfterIo::Return,
            ret: 0,
            server: false,
        }
    }

    /// Installs `f` at the lowest free descriptor; returns it.
    pub fn install(&mut self, f: OpenFile) -> Fd {
        match self.fds.iter().position(Option::is_none) {
            Some(i) => {
                self.fds[i] = Some(f);
                FIRST_FD + i as Fd
            }
            None => {
                self.fds.push(Some(f));
                FIRST_FD + self.fds.len() as Fd - 1
            }
        }
    }

    /// The open file of `fd`.
    pub fn file(&self, fd: Fd) -> Option<&OpenFile> {
        self.fds
            .get(fd.checked_sub(FIRST_FD)? as usize)
            .and_then(Option::as_ref)
    }

    /// The open file of `fd`, mutably.
    pub fn file_mut(&mut self, fd: Fd) -> Option<&mut OpenFile> {
        self.fds
            .get_mut(fd.checked_sub(FIRST_FD)? as usize)
            .and_then(Option::as_mut)
    }

    /// The open file of the call in progress.
    pub fn cur(&self) -> &OpenFile {
        self.file(self.fd).expect("the call's descriptor is open")
    }

    /// The open file of the call in progress, mutably.
    pub fn cur_mut(&mut self) -> &mut OpenFile {
        let fd = self.fd;
        self.file_mut(fd).expect("the call's descriptor is open")
    }

    /// Removes descriptor `fd`; returns its open file.
    pub fn remove(&mut self, fd: Fd) -> Option<OpenFile> {
        self.fds
            .get_mut(fd.checked_sub(FIRST_FD)? as usize)
            .and_then(Option::take)
    }

    /// A synchronous bio of this task (thread index `t`) whose completion
    /// goes to `submitter`.
    pub fn bio(&self, t: u32, op: Op, sector: u64, sectors: u32, submitter: Submitter) -> Bio {
        Bio {
            op,
            sector,
            sectors,
            sync: true,
            fua: false,
            secure: false,
            prio: false,
            pid: self.pid,
            thread: t,
            ioprio: self.ioprio,
            submitter,
        }
    }
}
