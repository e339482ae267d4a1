//! Trace readers: one file per format, each streaming records normalised to
//! [`TraceRecord`] (reference trace-formats.md §0).
//!
//! Contract: a reader yields records in file order, one at a time, with
//! memory independent of trace length (process names are interned into a
//! small table); a malformed record yields an [`crate::Error::Parse`] naming
//! the file, line and field, and reading may continue with the next record.

pub mod native_csv;

use std::path::Path;

use crate::error::Result;
use crate::types::{Ns, Op};

pub use native_csv::NativeCsvReader;

/// One block-level request of a trace, normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// 1-based line of the trace file the record came from.
    pub line: u64,
    /// Time of the request, ns from the trace's time origin.
    pub time_ns: Ns,
    /// Operation (read, write, discard, flush).
    pub op: Op,
    /// First sector (512-byte units); 0 for a flush.
    pub sector: u64,
    /// Length in sectors (512-byte units); 0 for a flush.
    pub sectors: u32,
    /// Issuing process (or thread) id, if the trace has one.
    pub pid: Option<u32>,
    /// Issuing process name, as an index for [`TraceReader::process_name`].
    pub process: Option<u32>,
    /// Synchronous request flag, if the trace records it.
    pub sync: Option<bool>,
}

/// A streaming reader of one trace format.
pub trait TraceReader {
    /// The next record, an error for a malformed record (reading may go on),
    /// or `None` at the end of the trace.
    fn next_record(&mut self) -> Option<Result<TraceRecord>>;
    /// The trace file (as named in error messages).
    fn path(&self) -> &Path;
    /// The process name interned as `id` ("" for an unknown id).
    fn process_name(&self, id: u32) -> &str;
    /// Short name of the format (e.g. `"native-csv"`).
    fn format_name(&self) -> &'static str;
}
