//! mmcsim-trace: streaming readers of block-level I/O traces, one file per
//! format, each yielding records normalised to [`TraceRecord`] (reference
//! trace-formats.md §0). The crate depends on nothing of the simulator
//! (only the shared vocabulary of `mmcsim-types`); the simulator reads its
//! traces through it as `mmcsim::workload::trace`.
//!
//! Contract: a reader yields records one at a time in non-decreasing time,
//! with memory independent of trace length (process names are interned into a
//! small table; formats that pair an issue with a completion keep only the
//! requests in flight); a malformed record yields an [`Error::Parse`]
//! naming the file, line and field, and reading may continue with the next
//! record. Gzip-compressed input (magic `1f 8b`) is read transparently.
//!
//! Use [`open`] (with [`detect()`] picking the format unless
//! [`OpenOptions::format`] forces one) to get a reader for any supported
//! format with device filtering and optional rebasing applied;
//! [`Format::all`] lists the formats.
//!
//! Each format is one file: its reader and a unit struct implementing
//! [`TraceFormat`] (names, default time unit, how it recognises a trace's
//! head, how it opens one), listed by one line of [`registry::FORMATS`].
//!
//! | format | module | default time unit |
//! |---|---|---|
//! | `native` | [`native_csv`] | named by the time column |
//! | `mmc-ftrace` | [`ftrace_mmc`] | s (ftrace clock) |
//! | `block-ftrace` | [`ftrace_block`] | s (ftrace clock) |
//! | `blkparse` | [`blkparse`] | s.ns |
//! | `blktrace-bin` | [`blktrace_bin`] | ns (per-CPU binary files) |
//! | `fio-iolog` | [`fio`] | v3: µs; v2: no time (wait µs) |
//! | `msr` | [`msr`] | 100 ns (FILETIME ticks) |
//! | `spc` | [`spc`] | s |
//! | `disksim` | [`disksim`] | ms |
//! | `mqsim` | [`mqsim`] | ns |
//! | `ssdsim` | [`ssdsim`] | ns |
//! | `pixel6a` | [`pixel6a`] | s |
//! | `biotracer` | [`biotracer`] | s |

#![warn(missing_docs)]

pub mod ascii5;
pub mod binary;
pub mod biotracer;
pub mod blkparse;
pub mod blktrace_bin;
pub mod common;
pub mod detect;
pub mod disksim;
pub mod error;
pub mod fio;
pub mod format;
pub mod ftrace_block;
pub mod ftrace_mmc;
pub mod head;
pub mod mqsim;
pub mod msr;
pub mod native_csv;
pub mod pixel6a;
pub mod registry;
pub mod spc;
pub mod ssdsim;

use std::path::Path;

pub use error::{Error, Result, UnknownChoice};
pub use mmcsim_types::{Ns, Op};

pub use common::TimeUnit;
pub use detect::{detect, detect_bytes, open, open_bytes, OpenOptions};
pub use format::{Format, FtraceEvent, Sniff, TraceFormat};
pub use head::Head;
pub use native_csv::{write_native_csv, NativeCsvReader, NativeCsvWriter};

/// One block-level request of a trace, normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// 1-based line of the trace file the record came from (for paired
    /// formats, the line of the issue event).
    pub line: u64,
    /// Time of the request (issue), ns from the trace's time origin: the
    /// file's own timestamps converted to ns, or ns since the first record
    /// when the reader rebases ([`OpenOptions::rebase`]).
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
    /// Recorded completion time, ns on the same origin as `time_ns`, where
    /// the format has one (blkparse `C`, ftrace completions, MSR response
    /// time, native `done_*` column).
    pub done_ns: Option<Ns>,
    /// Recorded time the driver fetched the request from the queue, ns on
    /// the same origin as `time_ns`, where the format has one (BIOTracer).
    pub fetch_ns: Option<Ns>,
    /// Recorded time the driver issued the request to the hardware (the
    /// start of device service), ns on the same origin as `time_ns`, where
    /// the format has one (BIOTracer): `done_ns − device_start_ns` is the
    /// recorded device service.
    pub device_start_ns: Option<Ns>,
    /// Device (or volume, ASU, host, file) id, where the format has one.
    pub device: Option<u32>,
    /// Request flags: a bit set of [`TraceRecord::FUA`],
    /// [`TraceRecord::PREFLUSH`], [`TraceRecord::META`],
    /// [`TraceRecord::READAHEAD`], [`TraceRecord::SECURE`],
    /// [`TraceRecord::FAILED`].
    pub flags: u8,
}

impl TraceRecord {
    /// Flag: forced unit access (RWBS `F` after the direction; MMC reliable
    /// write).
    pub const FUA: u8 = 1;
    /// Flag: the request is preceded by a cache flush (RWBS leading `F`).
    pub const PREFLUSH: u8 = 2;
    /// Flag: file-system metadata (RWBS `M`).
    pub const META: u8 = 4;
    /// Flag: read-ahead (RWBS `A`).
    pub const READAHEAD: u8 = 8;
    /// Flag: secure erase / discard (RWBS `E`, MMC erase argument bit 31).
    pub const SECURE: u8 = 16;
    /// Flag: the recorded completion reported an error.
    pub const FAILED: u8 = 32;
    /// Every flag with its one-letter code in the native CSV `flags` column.
    pub const FLAG_LETTERS: [(u8, char); 6] = [
        (Self::FUA, 'F'),
        (Self::PREFLUSH, 'P'),
        (Self::META, 'M'),
        (Self::READAHEAD, 'A'),
        (Self::SECURE, 'E'),
        (Self::FAILED, 'X'),
    ];

    /// A record with the given required fields and every optional field
    /// unset (no pid, process, sync, completion or device; no flags).
    pub fn new(line: u64, time_ns: Ns, op: Op, sector: u64, sectors: u32) -> TraceRecord {
        TraceRecord {
            line,
            time_ns,
            op,
            sector,
            sectors,
            pid: None,
            process: None,
            sync: None,
            done_ns: None,
            fetch_ns: None,
            device_start_ns: None,
            device: None,
            flags: 0,
        }
    }

    /// True when every bit of `flag` is set.
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag == flag
    }
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
    /// The unit the file's timestamps were read in, where the format has
    /// timestamps (`None` for e.g. fio iolog v2).
    fn time_unit(&self) -> Option<TimeUnit> {
        None
    }
    /// Time of the first record yielded, in ns as in the file (before any
    /// rebasing); `None` until a record has been read. Subtract it from
    /// `time_ns` to rebase to zero.
    fn first_time_ns(&self) -> Option<Ns> {
        None
    }
    /// Device id `id` as this format names devices: `maj,min` for a
    /// `dev_t` (blkparse, block ftrace, blktrace captures), else the
    /// number.
    fn device_label(&self, id: u32) -> String {
        id.to_string()
    }
    /// How many byte offsets or lengths so far were not multiples of 512
    /// (offsets are rounded down, lengths up, to whole sectors).
    fn unaligned_count(&self) -> u64 {
        0
    }
}
