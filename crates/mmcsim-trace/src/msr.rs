//! MSR Cambridge block traces (reference trace-formats.md §5; SNIA IOTTA,
//! Narayanan et al., FAST 2008).
//!
//! CSV without header: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
//! Timestamp is a Windows FILETIME in **100-ns ticks** (the default unit;
//! absolute, since 1601 — rebase with [`super::OpenOptions::rebase`] or
//! [`super::TraceReader::first_time_ns`]); `DiskNumber` becomes the record's
//! `device`; `Type` is `Read` or `Write` (any case); `Offset` and `Size` are
//! **bytes** (offset rounded down, end rounded up to sectors, unaligned
//! values counted); `ResponseTime` (100-ns ticks) gives `done_ns` = time +
//! response. The host name is interned as the record's `process`.
//!
//! ```text
//! 128166381104021338,src1,2,Write,1073741824,4096,1523
//! ```

use super::common::{bytes_to_sectors, split_csv, Cx, Interner, LineParser, Source, TextReader};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::{is_digits, Head};
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (FILETIME 100-ns ticks).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::Ticks100Ns;

/// MSR Cambridge CSV, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct Msr;

impl TraceFormat for Msr {
    fn name(&self) -> &'static str {
        "msr"
    }

    fn description(&self) -> &'static str {
        "MSR Cambridge CSV: FILETIME (100 ns), host, disk, Read/Write, offset and size in bytes, response time"
    }

    fn example(&self) -> &'static str {
        "128166381104021338,src1,2,Write,1073741824,4096,1523"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let (c, n) = head.csv_fields::<8>();
        let rw = c[3].eq_ignore_ascii_case(b"read") || c[3].eq_ignore_ascii_case(b"write");
        if !(n == 7 && is_digits(c[0]) && rw) {
            return None;
        }
        Sniff::matched(30, "the first record has 7 CSV fields with Read/Write")
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Streaming reader of MSR Cambridge traces.
pub type MsrReader = TextReader<MsrParser>;

/// Line parser of MSR Cambridge traces.
#[derive(Debug, Default)]
pub struct MsrParser {
    hosts: Interner,
    unaligned: u64,
}

/// Opens an MSR Cambridge trace reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<MsrReader> {
    TextReader::new(source, MsrParser::default(), unit)
}

impl LineParser for MsrParser {
    fn format_name(&self) -> &'static str {
        "msr"
    }

    fn unaligned(&self) -> u64 {
        self.unaligned
    }

    fn process_name(&self, id: u32) -> &str {
        self.hosts.name(id)
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        let mut f = [&[][..]; 7];
        let n = split_csv(line, &mut f);
        if n != 7 {
            return Err(cx.err(
                "fields",
                format!("expected 7 comma-separated fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {n}"),
            ));
        }
        let time_ns = cx.time(f[0], "Timestamp", cx.unit)?;
        let disk = cx.u32(f[2], "DiskNumber")?;
        let op = if f[3].eq_ignore_ascii_case(b"read") {
            Op::Read
        } else if f[3].eq_ignore_ascii_case(b"write") {
            Op::Write
        } else {
            return Err(cx.expected("Type", "Read or Write", f[3]));
        };
        let offset = cx.uint(f[4], "Offset")?;
        let size = cx.uint(f[5], "Size")?;
        let resp = cx.time(f[6], "ResponseTime", cx.unit)?;
        if size == 0 {
            return Err(cx.err("Size", "expected at least 1 byte, found 0"));
        }
        let (sector, sectors) = bytes_to_sectors(offset, size, &mut self.unaligned)
            .ok_or_else(|| cx.err("Size", "offset + size out of range"))?;
        let mut r = TraceRecord::new(cx.line, time_ns, op, sector, sectors);
        r.device = Some(disk);
        r.process = Some(self.hosts.intern(f[1]));
        r.done_ns = Some(
            time_ns
                .checked_add(resp)
                .ok_or_else(|| cx.err("ResponseTime", "completion time overflows 2^64 ns"))?,
        );
        Ok(Some(r))
    }
}
