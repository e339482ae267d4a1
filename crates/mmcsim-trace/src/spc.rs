//! SPC / UMass trace format (Financial1/2, WebSearch1-3; reference
//! trace-formats.md §6, "SPC Trace File Format Specification" rev 1.0.1).
//!
//! Comma separated, white space allowed after commas: ASU (volume id, kept
//! as the record's `device`), LBA in **512-byte** blocks, size in **bytes**
//! (rounded up to whole sectors; unaligned sizes are counted), opcode
//! `R`/`r`/`W`/`w`, timestamp in **s** (real number) from trace start, then
//! any number of optional fields, ignored.
//!
//! ```text
//! 0,662144,8192,W,12.503990
//! ```

use super::common::{bytes_to_sectors, split_csv, Cx, LineParser, Source, TextReader};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::{is_decimal, is_digits, Head};
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (SPC timestamps are seconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::S;

/// SPC / UMass CSV, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct Spc;

impl TraceFormat for Spc {
    fn name(&self) -> &'static str {
        "spc"
    }

    fn description(&self) -> &'static str {
        "SPC / UMass CSV: ASU, LBA (512 B), size in bytes, R/W, time in s, optional fields"
    }

    fn example(&self) -> &'static str {
        "0,662144,8192,W,12.503990"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let (c, n) = head.csv_fields::<8>();
        let record = n >= 5
            && is_digits(c[0])
            && is_digits(c[1])
            && is_digits(c[2])
            && matches!(c[3], b"R" | b"r" | b"W" | b"w")
            && is_decimal(c[4]);
        if !record {
            return None;
        }
        Sniff::matched(20, "the first record is CSV ASU,LBA,size,R/W,time")
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Streaming reader of SPC traces.
pub type SpcReader = TextReader<SpcParser>;

/// Line parser of SPC traces.
#[derive(Debug, Default)]
pub struct SpcParser {
    unaligned: u64,
}

/// Opens an SPC trace reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<SpcReader> {
    TextReader::new(source, SpcParser::default(), unit)
}

impl LineParser for SpcParser {
    fn format_name(&self) -> &'static str {
        "spc"
    }

    fn unaligned(&self) -> u64 {
        self.unaligned
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        let mut f = [&[][..]; 5];
        let n = split_csv(line, &mut f);
        if n < 5 {
            return Err(cx.err(
                "fields",
                format!("expected at least 5 comma-separated fields (asu,lba,size,opcode,timestamp), found {n}"),
            ));
        }
        let asu = cx.u32(f[0], "asu")?;
        let lba = cx.uint(f[1], "lba")?;
        let size = cx.uint(f[2], "size")?;
        let op = match f[3] {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            other => return Err(cx.expected("opcode", "R, r, W or w", other)),
        };
        let time_ns = cx.time(f[4], "timestamp", cx.unit)?;
        if size == 0 {
            return Err(cx.err("size", "expected at least 1 byte, found 0"));
        }
        if size % 512 != 0 {
            self.unaligned += 1;
        }
        let (_, sectors) = bytes_to_sectors(0, size, &mut 0)
            .ok_or_else(|| cx.err("size", "size too large (more than 2^32 sectors)"))?;
        if lba.checked_add(u64::from(sectors)).is_none() {
            return Err(cx.err("lba", "lba + size overflows a 64-bit address"));
        }
        let mut r = TraceRecord::new(cx.line, time_ns, op, lba, sectors);
        r.device = Some(asu);
        Ok(Some(r))
    }
}
