//! A host task: the kernel side of one application thread — the system
//! call it is in, its read-ahead state, and the bios it is about to submit.

use super::page_cache::FileId;
use super::readahead::RaState;
use super::syscall::OpenFlags;
use crate::block::request::Bio;
use crate::types::{IoPrio, Op};

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
    /// An fsync() call.
    Fsync,
    /// Sleeping in balance_dirty_pages until dirty pages drop.
    Throttled,
}

/// The kernel side of one application thread.
#[derive(Clone, Debug)]
pub struct Task {
    /// Process id (bios are charged to it).
    pub pid: u32,
    /// I/O priority of its bios.
    pub ioprio: IoPrio,
    /// First sector of the file it works on.
    pub file_first_sector: u64,
    /// Page-cache mapping of that file.
    pub file_cache: FileId,
    /// How the file is open.
    pub flags: OpenFlags,
    /// Read-ahead state of its file descriptor.
    pub ra: RaState,
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
}

impl Task {
    /// A task of process `pid` working on the file at `first_sector` with
    /// page-cache mapping `cache`.
    pub fn new(
        pid: u32,
        ioprio: IoPrio,
        first_sector: u64,
        cache: FileId,
        flags: OpenFlags,
    ) -> Task {
        Task {
            pid,
            ioprio,
            file_first_sector: first_sector,
            file_cache: cache,
            flags,
            ra: RaState::default(),
            call_off: 0,
            call_bytes: 0,
            phase: Phase::Read,
            call: None,
            pos_page: 0,
            end_page: 0,
            pending_bios: Vec::with_capacity(16),
        }
    }

    /// A synchronous bio of this task (thread index `t`) owned by `owner`.
    pub fn bio(&self, t: u32, op: Op, sector: u64, sectors: u32, owner: u32) -> Bio {
        Bio {
            op,
            sector,
            sectors,
            sync: true,
            fua: false,
            prio: false,
            pid: self.pid,
            thread: t,
            ioprio: self.ioprio,
            owner,
        }
    }
}
