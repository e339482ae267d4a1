//! The events of the simulation. They carry small ids, never copies of
//! requests.

use crate::block::request::RqId;

/// Something that happens at a simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A synthetic thread starts its next call.
    ThreadIssue(u32),
    /// A thread continues its current call (after the system call cost or
    /// a wake-up).
    ThreadStep(u32),
    /// A thread's call returns to user space.
    ThreadDone(u32),
    /// A thread's prepared bios reach the block layer (under one plug).
    SubmitPlug(u32),
    /// Timed replay: the next trace record is due.
    TraceArrival,
    /// Closed-loop replay: the traced process with this thread index
    /// issues its next record.
    TraceNext(u32),
    /// `mmcqd` runs: start the prepared request, fetch the next.
    DriverRun,
    /// The device finished a request.
    DeviceDone(RqId),
    /// The completion interrupt of a request has been handled.
    Irq(RqId),
    /// The scheduler's timer (generation number, stale ones are ignored).
    SchedTimer(u64),
    /// The writeback flusher wakes up.
    FlusherTick,
}
