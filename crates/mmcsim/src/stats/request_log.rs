//! The optional per-request CSV log: one row per block request the device
//! served, for analyses such as address difference vs. response time. The
//! `op` column is `R`, `W`, `D` or `F` (flush); a write with FUA is `WF`.

use crate::types::{Ns, Op};
use std::io::Write;

/// Header of the request log.
pub const HEADER: &str =
    "submit_ns,dispatch_ns,device_start_ns,complete_ns,sector,sectors,op,thread";

/// One row of the request log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogRow {
    /// Arrival in the block layer, ns.
    pub submit_ns: Ns,
    /// Entry into the dispatch list, ns.
    pub dispatch_ns: Ns,
    /// Start of device execution, ns.
    pub device_start_ns: Ns,
    /// Device completion, ns.
    pub complete_ns: Ns,
    /// First sector.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u32,
    /// Operation.
    pub op: Op,
    /// Force unit access (the op column shows `WF`, blktrace's RWBS).
    pub fua: bool,
    /// Workload thread of the request's first bio.
    pub thread: u32,
}

/// Streams log rows to a writer (buffered by the caller).
pub struct RequestLog {
    out: Box<dyn Write>,
    error: Option<std::io::Error>,
}

impl RequestLog {
    /// A log writing to `out`; writes the header at once.
    pub fn new(mut out: Box<dyn Write>) -> RequestLog {
        let error = writeln!(out, "{HEADER}").err();
        RequestLog { out, error }
    }

    /// Appends a row (the first write error is kept and reported by
    /// [`RequestLog::finish`]).
    pub fn row(&mut self, r: &LogRow) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = writeln!(
            self.out,
            "{},{},{},{},{},{},{}{},{}",
            r.submit_ns,
            r.dispatch_ns,
            r.device_start_ns,
            r.complete_ns,
            r.sector,
            r.sectors,
            r.op.code(),
            if r.fua { "F" } else { "" },
            r.thread
        ) {
            self.error = Some(e);
        }
    }

    /// Flushes and reports the first write error, if any.
    pub fn finish(mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}
