//! One call in progress — a thread's system call, or a
//! block-level trace record — and the bios it waits for.

use crate::driver::DeviceTimes;
use crate::stats::report::{CallKind, CallRecord, Collector};
use crate::types::Ns;

/// A call in progress.
#[derive(Clone, Debug)]
pub struct Call {
    /// Thread index of the caller (the report's thread id).
    pub thread: u32,
    /// What the call is.
    pub kind: CallKind,
    /// Bytes it moves.
    pub bytes: u64,
    /// When it was issued, ns.
    pub issue: Ns,
    /// Bios owned by this call not yet completed.
    pub pending: u32,
    /// When its most recent bios entered the block layer, ns.
    pub submit: Ns,
    /// Queueing part of its latency, ns.
    pub queue: Ns,
    /// Device part of its latency, ns.
    pub device: Ns,
    /// Issue a cache flush once the data bios complete (fsync, O_SYNC).
    pub then_flush: bool,
}

impl Call {
    /// A call of `thread` issued at `now`.
    pub fn new(now: Ns, thread: u32, kind: CallKind, bytes: u64) -> Call {
        Call {
            thread,
            kind,
            bytes,
            issue: now,
            pending: 0,
            submit: now,
            queue: 0,
            device: 0,
            then_flush: false,
        }
    }

    /// One of its bios completed on the device at `t`: the call's split is
    /// that request's queueing and device time. Returns true when it was
    /// the last bio the call waited for.
    pub fn bio_done(&mut self, t: DeviceTimes) -> bool {
        self.pending -= 1;
        self.queue = t.start.saturating_sub(self.submit);
        self.device = t.done - t.start;
        self.pending == 0
    }

    /// A bio the call slept on completed (`t`): its queueing and device
    /// time add to the call's split.
    pub fn add_times(&mut self, t: DeviceTimes) {
        self.queue += t.start.saturating_sub(self.submit);
        self.device += t.done - t.start;
    }

    /// The call returns at `now`: records it.
    pub fn finish(self, now: Ns, collector: &mut Collector) {
        collector.record(&CallRecord {
            thread: self.thread,
            kind: self.kind,
            bytes: self.bytes,
            issue: self.issue,
            done: now,
            queue: self.queue,
            device: self.device,
        });
    }
}
