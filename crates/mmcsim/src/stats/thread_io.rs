//! Per-thread results by direction, kept on request for outputs that
//! report each job as fio does (`simctl run --output-format=json`): the
//! latency histogram, bytes and active span of a thread's reads, writes
//! and fsync()/fdatasync() calls, and the device's requests by direction.
//! Not part of the JSON report.

use super::histogram::LatencyHistogram;
use crate::types::Ns;

/// One direction of one thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirIo {
    /// Latency of each completed call (issue to return), ns.
    pub hist: LatencyHistogram,
    /// Bytes moved.
    pub bytes: u64,
    /// First call's issue time, ns.
    pub first_issue: Option<Ns>,
    /// Last call's completion time, ns.
    pub last_done: Ns,
}

impl DirIo {
    /// Records a call of `bytes` issued at `issue` and done at `done` (ns).
    pub fn record(&mut self, bytes: u64, issue: Ns, done: Ns) {
        self.hist.record(done.saturating_sub(issue));
        self.bytes += bytes;
        self.first_issue = Some(self.first_issue.map_or(issue, |f| f.min(issue)));
        self.last_done = self.last_done.max(done);
    }

    /// Adds `other`'s calls (a clone's, under fio's `group_reporting`).
    pub fn merge(&mut self, other: &DirIo) {
        self.hist.merge(&other.hist);
        self.bytes += other.bytes;
        self.first_issue = match (self.first_issue, other.first_issue) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_done = self.last_done.max(other.last_done);
    }
}

/// One thread's results by direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadIo {
    /// Thread id.
    pub id: u32,
    /// Name (its job's).
    pub name: String,
    /// Index of its job in the scenario's `[[jobs]]`, for a job thread.
    pub job: Option<u32>,
    /// read() calls.
    pub read: DirIo,
    /// write() calls.
    pub write: DirIo,
    /// fsync() and fdatasync() calls (bytes 0).
    pub sync: DirIo,
}

/// The device's requests by direction, as `/proc/diskstats` counts them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskIo {
    /// Read and write requests completed.
    pub ios: [u64; 2],
    /// Sum of their D→C times (driver fetch to completion), ns.
    pub ticks_ns: [u128; 2],
}
