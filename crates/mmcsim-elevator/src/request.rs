//! Block requests and bios: what the block layer queues and the scheduler
//! sees.

use crate::types::{IoPrio, Ns, Op};

/// Id of a request in the block layer's request slab.
pub type RqId = u32;
/// Id of a bio in the block layer's bio slab.
pub type BioId = u32;
/// "No id" marker for intrusive links.
pub const NIL: u32 = u32::MAX;

/// Who submitted a bio and takes its completion back: the role of Linux's
/// `bi_end_io` + `bi_private`. The block layer hands it back unchanged
/// when the bio completes, and the completion is delivered to that
/// submitter as an event; a scheduler has no use for it. A new kind of
/// submitter is a new variant, not a free range of numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Submitter {
    /// A host system call waits for the bio (the call's id: direct I/O,
    /// an O_SYNC write's flush, an `fsync`'s cache flush).
    Call(u32),
    /// Page-cache I/O (read-ahead, writeback, metadata): the index of the
    /// host's record of the pages the bio moves and whom to tell.
    PageIo(u32),
    /// The mounted file system's own I/O (ext4's JBD2 commit writes and
    /// flushes), completed through the file system.
    Fs,
    /// A replayed block-trace record (the replay's call id).
    Replay(u32),
}

/// A bio: one contiguous piece of I/O submitted by the host, before merging.
///
/// `submitter` says who takes its completion back; the block layer hands
/// it back unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bio {
    /// Operation.
    pub op: Op,
    /// First sector (512 B units).
    pub sector: u64,
    /// Length in sectors (0 for a flush).
    pub sectors: u32,
    /// Synchronous (every read, and writes flagged SYNC / FUA / O_DIRECT).
    pub sync: bool,
    /// Force unit access: the device must make the data durable first.
    pub fua: bool,
    /// REQ_SECURE on a discard (BLKSECDISCARD): the data must be made
    /// unrecoverable, not only unmapped.
    pub secure: bool,
    /// REQ_META / REQ_PRIO: file-system metadata that CFQ favours.
    pub prio: bool,
    /// Submitting process id (the flusher's pid for background writeback).
    pub pid: u32,
    /// Submitting thread index in the workload (for reports and logs).
    pub thread: u32,
    /// I/O priority of the submitter.
    pub ioprio: IoPrio,
    /// Who submitted it and takes its completion back.
    pub submitter: Submitter,
}

impl Bio {
    /// One past the last sector.
    #[inline]
    pub fn end(&self) -> u64 {
        self.sector + self.sectors as u64
    }
}

/// A block request: one or more merged bios, the unit the scheduler orders
/// and the driver sends to the device.
#[derive(Clone, Debug)]
pub struct Request {
    /// Operation.
    pub op: Op,
    /// First sector (512 B units).
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u32,
    /// Synchronous request (`rq_is_sync`).
    pub sync: bool,
    /// Force unit access.
    pub fua: bool,
    /// REQ_SECURE: a secure discard (merges only with secure discards).
    pub secure: bool,
    /// REQ_META / REQ_PRIO.
    pub prio: bool,
    /// Process the request is charged to (its first bio's submitter).
    pub pid: u32,
    /// Workload thread of the first bio.
    pub thread: u32,
    /// I/O priority of the first bio.
    pub ioprio: IoPrio,
    /// Arrival time in the block layer, ns; a merge keeps the older one.
    pub start_ns: Ns,
    /// Scheduler-owned deadline or FIFO time, ns (`rq->fifo_time`).
    pub fifo_time: Ns,
    /// Scheduler-owned private words (`rq->elv.priv`).
    pub elv_priv: [u64; 2],
    /// Merging with this request failed once (REQ_NOMERGE).
    pub nomerge: bool,
    /// `REQ_URGENT`: the scheduler marked the request urgent (it may
    /// interrupt a write the driver has in flight; see
    /// [`crate::Elevator::is_urgent`]). Only the scheduler sets it.
    pub urgent: bool,
    /// Set when the request leaves the scheduler for the dispatch list.
    pub dispatch_ns: Option<Ns>,
    /// Set when the device starts executing it.
    pub device_start_ns: Option<Ns>,
    /// First and last bio of the request's chain.
    pub bio_head: BioId,
    /// Last bio of the chain (back merges append here).
    pub bio_tail: BioId,
    /// Number of bios merged into this request.
    pub nr_bios: u32,
}

impl Request {
    /// One past the last sector.
    #[inline]
    pub fn end(&self) -> u64 {
        self.sector + self.sectors as u64
    }

    /// Data direction index: 0 read, 1 write (discards and flushes count as
    /// writes, like `rq_data_dir`).
    #[inline]
    pub fn dir(&self) -> usize {
        self.op.dir()
    }

    /// A fresh request built from its first bio.
    #[inline]
    pub fn from_bio(bio: &Bio, bio_id: BioId, now: Ns) -> Request {
        Request {
            op: bio.op,
            sector: bio.sector,
            sectors: bio.sectors,
            sync: bio.sync,
            fua: bio.fua,
            secure: bio.secure,
            prio: bio.prio,
            pid: bio.pid,
            thread: bio.thread,
            ioprio: bio.ioprio,
            start_ns: now,
            fifo_time: 0,
            elv_priv: [0; 2],
            nomerge: false,
            urgent: false,
            dispatch_ns: None,
            device_start_ns: None,
            bio_head: bio_id,
            bio_tail: bio_id,
            nr_bios: 1,
        }
    }
}
