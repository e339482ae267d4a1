//! fio iolog versions 2 and 3 (reference trace-formats.md §3; fio
//! `HOWTO.rst` "Trace file format", `iolog.c`).
//!
//! The first line is `fio version 2 iolog` or `fio version 3 iolog`. Then,
//! space separated (file names contain no spaces):
//! * v2: `<file> add|open|close` or `<file> <action> <offset> <length>`;
//! * v3: `<ts> <file> add|open|close` or `<ts> <file> <action> <offset> <length>`,
//!   `ts` in **µs** from the start of the run by default (what current fio
//!   writes; some converters wrote ms: override with
//!   [`super::OpenOptions::time_unit`]).
//!
//! Actions: `read` → R, `write` → W, `trim` → D, `sync`/`datasync` → F (they
//! carry `0 0`; a two-field sync is rejected, as fio does). `wait` (v2 only)
//! advances the clock by its offset field, in µs (or the unit given); v2
//! records otherwise all have the time of the last wait (0 at first), and
//! [`super::TraceReader::time_unit`] is `None` for v2. Offsets and lengths
//! are **bytes**: offsets are rounded down and ends up to sectors, unaligned
//! values counted. Each distinct file name gets a `device` id in order of
//! first appearance (0, 1, ...); [`FioParser::file_name`] maps it back.
//!
//! ```text
//! fio version 3 iolog
//! 410 /dev/block/mmcblk0p23 write 1073741824 4096
//! ```

use super::common::{
    bytes_to_sectors, show, split_ws, Cx, Interner, LineParser, Source, TextReader,
};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;
use mmcsim_types::{Ns, Op};

/// The default time unit (µs: v3 timestamps and v2 `wait` delays).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::Us;

/// fio iolog v2/v3, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct FioIolog;

impl TraceFormat for FioIolog {
    fn name(&self) -> &'static str {
        "fio-iolog"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["fio"]
    }

    fn description(&self) -> &'static str {
        "fio iolog v2 (no times) or v3 (µs timestamps); bytes"
    }

    fn example(&self) -> &'static str {
        "410 /dev/block/mmcblk0p23 write 1073741824 4096"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        // 100: a signature line, the surest sign of all.
        if !head.first().starts_with(b"fio version ") {
            return None;
        }
        Sniff::matched(100, "the first line is a fio version line")
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Streaming reader of fio iologs.
pub type FioReader = TextReader<FioParser>;

/// Line parser of fio iologs (v2 and v3).
#[derive(Debug, Default)]
pub struct FioParser {
    /// 2 or 3 once the version line is read.
    version: u8,
    /// The version seen by peeking at the first line (0 if unknown).
    peeked: u8,
    files: Interner,
    clock: Ns,
    unaligned: u64,
}

/// Opens a fio iolog reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<FioReader> {
    // Peek at the version line so that `time_unit` is right from the start.
    let mut lines = super::common::Lines::new(source.open_text()?, source.path());
    let mut parser = FioParser::default();
    while let Ok(Some(l)) = lines.next_line() {
        if !l.is_empty() {
            parser.peeked = match l {
                b"fio version 2 iolog" => 2,
                b"fio version 3 iolog" => 3,
                _ => 0,
            };
            break;
        }
    }
    TextReader::new(source, parser, unit)
}

impl FioParser {
    /// The file name of device id `id` ("" if unknown).
    pub fn file_name(&self, id: u32) -> &str {
        self.files.name(id)
    }

    /// The iolog version (2 or 3; 0 before the first line).
    pub fn version(&self) -> u8 {
        self.version
    }
}

impl LineParser for FioParser {
    fn format_name(&self) -> &'static str {
        "fio-iolog"
    }

    fn unaligned(&self) -> u64 {
        self.unaligned
    }

    fn has_time(&self) -> bool {
        self.version.max(self.peeked) != 2
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        if self.version == 0 {
            self.version = match line {
                b"fio version 2 iolog" => 2,
                b"fio version 3 iolog" => 3,
                _ => {
                    return Err(cx.expected(
                        "version",
                        "a first line `fio version 2 iolog` or `fio version 3 iolog`",
                        line,
                    ))
                }
            };
            return Ok(None);
        }
        let mut f = [&[][..]; 6];
        let n = split_ws(line, &mut f);
        let (time, rest, n) = if self.version == 3 {
            if n == 0 {
                return Ok(None);
            }
            (Some(f[0]), &f[1..], n - 1)
        } else {
            (None, &f[..], n)
        };
        if n != 2 && n != 4 {
            return Err(cx.err(
                "fields",
                format!(
                    "expected {}<file> <action> [<offset> <length>], found {n} fields after the timestamp",
                    if self.version == 3 { "<ts> " } else { "" }
                ),
            ));
        }
        if let Some(t) = time {
            self.clock = cx.time(t, "timestamp", cx.unit)?;
        }
        let action = rest[1];
        let op = match action {
            b"add" | b"open" | b"close" => {
                if n != 2 {
                    return Err(cx.err(
                        "fields",
                        format!("`{}` takes no offset and length", show(action)),
                    ));
                }
                self.files.intern(rest[0]);
                return Ok(None);
            }
            b"read" => Op::Read,
            b"write" => Op::Write,
            b"trim" => Op::Discard,
            b"sync" | b"datasync" => Op::Flush,
            b"wait" if self.version == 2 => {
                if n != 4 {
                    return Err(cx.err("fields", "`wait` needs <delay> <length>"));
                }
                let d = cx.time(rest[2], "offset", cx.unit)?;
                self.clock = self
                    .clock
                    .checked_add(d)
                    .ok_or_else(|| cx.err("offset", "clock overflows 2^64 ns"))?;
                return Ok(None);
            }
            other => {
                return Err(cx.expected(
                    "action",
                    "add, open, close, read, write, trim, sync, datasync (or wait in v2)",
                    other,
                ))
            }
        };
        if n != 4 {
            return Err(cx.err(
                "fields",
                format!("`{}` needs <offset> <length>", show(action)),
            ));
        }
        let offset = cx.uint(rest[2], "offset")?;
        let len = cx.uint(rest[3], "length")?;
        let device = self.files.intern(rest[0]);
        let (sector, sectors) = if op == Op::Flush {
            (0, 0)
        } else {
            if len == 0 {
                return Err(cx.err("length", "expected at least 1 byte, found 0"));
            }
            bytes_to_sectors(offset, len, &mut self.unaligned)
                .ok_or_else(|| cx.err("length", "offset + length out of range"))?
        };
        let mut r = TraceRecord::new(cx.line, self.clock, op, sector, sectors);
        r.device = Some(device);
        Ok(Some(r))
    }
}
