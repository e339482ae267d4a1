//! `blkparse` default text output (reference trace-formats.md §2; blktrace
//! `blkparse_fmt.c`, `doc/blkparse.1`).
//!
//! Each event line is `%D %2c %8s %5T.%9t %5p %2a %3d <tail>`: device
//! `maj,min`, CPU, sequence, time **s.ns** since trace start, pid, action,
//! RWBS, then `<sector> + <n> [<process>]` (or `[<error>]` on `C`; an
//! elapsed time in parentheses before the bracket with `-t` is skipped).
//!
//! Replay rule: `D` (issued to the driver) gives the record (time, pid,
//! process name, RWBS flags), `C` (completed) its `done_ns` (and the
//! [`TraceRecord::FAILED`] flag for a non-zero error); pairing is by
//! `(dev, sector, n)` in FIFO order. All other actions are ignored. `N`
//! (no-data, e.g. SCSI passthrough `0 (00 ..)`) requests are skipped; a
//! leading `F` without data (`FN`, or `FWS` with 0 sectors) is a flush.
//! Records come out in `D` order once completed (at most 65,536 wait; beyond
//! that, or at the end, they come out without `done_ns`). `device` is the
//! `dev_t` (`major << 20 | minor`). The summary block (`CPU0 (8,0):`, ...)
//! ends the trace: reading stops at the first line after an event line that
//! does not start with `maj,min`.
//!
//! ```text
//! 179,0    0      201    12.304580331    95  D  WS 5521408 + 8 [mmcqd/0]
//! ```

use super::common::{
    parse_dev, parse_rwbs, parse_u64, split_ws, Cx, Interner, LineParser, Pairing, Source,
    TextReader,
};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::{is_decimal, is_digits, Head};
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (seconds with a nanosecond fraction).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::S;

/// blkparse default text output, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct Blkparse;

impl TraceFormat for Blkparse {
    fn name(&self) -> &'static str {
        "blkparse"
    }

    fn description(&self) -> &'static str {
        "blkparse default text: D = issue, C = completion; s.ns; sectors; process names"
    }

    fn example(&self) -> &'static str {
        "179,0    0      201    12.304580331    95  D  WS 5521408 + 8 [mmcqd/0]"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let (f, n) = head.ws_fields::<9>();
        let event = n >= 6
            && parse_dev(f[0]).is_some()
            && is_digits(f[1])
            && is_digits(f[2])
            && is_decimal(f[3])
            && is_digits(f[4])
            && f[5].len() <= 2;
        if !event {
            return None;
        }
        Sniff::matched(
            40,
            "the first record is a blkparse event line (major,minor cpu seq time pid action)",
        )
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Requests that may wait for their completion.
const MAX_IN_FLIGHT: usize = 65_536;

/// Streaming reader of blkparse text output.
pub type BlkparseReader = TextReader<BlkparseParser>;

/// Line parser of blkparse text output.
pub struct BlkparseParser {
    pairing: Pairing<(u32, u64, u32)>,
    names: Interner,
    seen_event: bool,
    ended: bool,
}

impl Default for BlkparseParser {
    fn default() -> Self {
        BlkparseParser {
            pairing: Pairing::new(false, MAX_IN_FLIGHT),
            names: Interner::default(),
            seen_event: false,
            ended: false,
        }
    }
}

/// Opens blkparse output reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<BlkparseReader> {
    TextReader::new(source, BlkparseParser::default(), unit)
}

impl BlkparseParser {
    /// Completions that matched no issue so far.
    pub fn unmatched_completions(&self) -> u64 {
        self.pairing.unmatched
    }
}

/// Splits `<sector> + <n> ... [<x>]` into sector, n and the bracket text.
pub(crate) fn sector_range(tail: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let mut f = [&[][..]; 3];
    if split_ws(tail, &mut f) < 3 || f[1] != b"+" {
        return None;
    }
    let open = tail.iter().position(|&b| b == b'[')?;
    let close = tail.iter().rposition(|&b| b == b']')?;
    let bracket = if close > open {
        &tail[open + 1..close]
    } else {
        &[][..]
    };
    let n = f[2].strip_suffix(b"]").unwrap_or(f[2]);
    Some((f[0], n, bracket))
}

impl LineParser for BlkparseParser {
    fn format_name(&self) -> &'static str {
        "blkparse"
    }

    fn process_name(&self, id: u32) -> &str {
        self.names.name(id)
    }

    fn pop(&mut self, eof: bool) -> Option<TraceRecord> {
        self.pairing.pop(eof)
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        if self.ended {
            return Ok(None);
        }
        let mut f = [&[][..]; 7];
        let n = split_ws(line, &mut f);
        let Some(dev) = (n > 0).then(|| parse_dev(f[0])).flatten() else {
            if self.seen_event {
                self.ended = true; // the summary block
                return Ok(None);
            }
            return Err(cx.expected("device", "a `maj,min` device field", f[0]));
        };
        self.seen_event = true;
        if n < 6 {
            return Err(cx.err(
                "fields",
                format!("expected at least 6 fields (dev cpu seq time pid action), found {n}"),
            ));
        }
        let action = f[5];
        if action != b"D" && action != b"C" {
            return Ok(None);
        }
        if n < 7 {
            return Err(cx.err("rwbs", "missing RWBS field"));
        }
        let time_ns = cx.time(f[3], "time", cx.unit)?;
        let rw = parse_rwbs(f[6])
            .ok_or_else(|| cx.expected("rwbs", "an RWBS string such as R, WS, FWFS or N", f[6]))?;
        // Tail after the RWBS field.
        let start = f[6].as_ptr() as usize - line.as_ptr() as usize + f[6].len();
        let tail = &line[start..];
        let Some((sec_t, n_t, bracket)) = sector_range(tail) else {
            if rw.op.is_none() || rw.op == Some(Op::Flush) && tail.trim_ascii().starts_with(b"0 (")
            {
                return Ok(None); // passthrough / no-data request
            }
            return Err(cx.expected("sector", "`<sector> + <n> [...]`", tail.trim_ascii()));
        };
        let sector = cx.uint(sec_t, "sector")?;
        let nsec = cx.u32(n_t, "sectors")?;
        let key = (dev, sector, nsec);
        if action == b"C" {
            let failed = match bracket {
                b"0" | b"" => 0,
                _ => TraceRecord::FAILED,
            };
            self.pairing.complete(&key, time_ns, failed);
            return Ok(None);
        }
        let Some(mut op) = rw.op else {
            return Ok(None);
        };
        if op == Op::Write && nsec == 0 && rw.flags & TraceRecord::PREFLUSH != 0 {
            op = Op::Flush;
        }
        let (s, c) = if op == Op::Flush {
            (0, 0)
        } else {
            (sector, nsec)
        };
        if op != Op::Flush && c == 0 {
            return Err(cx.err(
                "sectors",
                "expected at least 1 sector for a data request, found 0",
            ));
        }
        if s.checked_add(u64::from(c)).is_none() {
            return Err(cx.err("sector", "sector + n overflows a 64-bit address"));
        }
        let mut r = TraceRecord::new(cx.line, time_ns, op, s, c);
        r.pid = parse_u64(f[4]).and_then(|p| u32::try_from(p).ok());
        if r.pid.is_none() {
            return Err(cx.expected("pid", "an unsigned 32-bit integer", f[4]));
        }
        if !bracket.is_empty() {
            r.process = Some(self.names.intern(bracket));
        }
        r.sync = Some(rw.sync);
        r.flags = rw.flags;
        r.device = Some(dev);
        self.pairing.issue(key, r);
        Ok(None)
    }
}
