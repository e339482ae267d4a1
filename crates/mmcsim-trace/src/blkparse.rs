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
//! `(dev, sector, n)` in FIFO order (a request without data prints no
//! sector on its issue line — `FWS [jbd2]` — and is keyed without one).
//! All other actions are ignored. `N` (no-data) and SCSI passthrough
//! requests (`<bytes> (<cdb>) [...]`) are skipped; a leading `F` without
//! data (`FN`, or `FWS` with 0 sectors or none printed) is a flush. The
//! binary capture's reader ([`crate::blktrace_bin`]) decodes its records
//! into the same events and pairs them with the same code.
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
    parse_dev, parse_rwbs, parse_u64, split_ws, Cx, Interner, LineParser, Pairing, Rwbs, Source,
    TextReader,
};
use super::{TimeUnit, TraceRecord};
use crate::error::{Error, Result};
use crate::format::{Sniff, TraceFormat};
use crate::head::{is_decimal, is_digits, Head};
use crate::TraceReader;
use mmcsim_types::{Ns, Op};

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

/// What one blktrace event says about a request, as blkparse's text and a
/// binary capture ([`crate::blktrace_bin`]) both carry it: the two readers
/// decode their input into this and share [`BlkEvents`], so a capture and
/// its blkparse text give the same records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlkEvent<'a> {
    /// The device, `dev_t` as the kernel encodes it (`major << 20 | minor`).
    pub dev: u32,
    /// Issue to the driver (`D`) or completion (`C`).
    pub action: BlkAction,
    /// The RWBS letters.
    pub rwbs: Rwbs,
    /// First sector (the completion's, or 0 when the issue line printed
    /// none).
    pub sector: u64,
    /// Length in sectors (0 for a request without data, e.g. a flush).
    pub sectors: u32,
    /// Issuing process id.
    pub pid: u32,
    /// Issuing process name (empty when unknown).
    pub process: &'a [u8],
    /// The completion reported an error.
    pub failed: bool,
    /// Time, ns since the trace's first event.
    pub time_ns: Ns,
}

/// The two blktrace actions the replay uses (reference trace-formats.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlkAction {
    /// `D`: issued to the driver.
    Issue,
    /// `C`: completed.
    Complete,
}

/// Issue/completion pairing of blktrace events, shared by the text and the
/// binary reader: `D` makes a record, `C` completes it; keyed by
/// `(dev, sector, n)` in FIFO order (the sector is left out of the key of a
/// request without data: blkparse prints none on its issue line).
pub(crate) struct BlkEvents {
    pairing: Pairing<(u32, u64, u32)>,
    names: Interner,
}

impl Default for BlkEvents {
    fn default() -> Self {
        BlkEvents {
            pairing: Pairing::new(false, MAX_IN_FLIGHT),
            names: Interner::default(),
        }
    }
}

impl BlkEvents {
    /// Takes event `e` (from line or record `line`); errors name `field`s
    /// through `err`.
    pub fn event(
        &mut self,
        e: &BlkEvent,
        line: u64,
        err: impl Fn(&str, String) -> Error,
    ) -> Result<()> {
        let key = (
            e.dev,
            if e.sectors == 0 { u64::MAX } else { e.sector },
            e.sectors,
        );
        if e.action == BlkAction::Complete {
            let failed = if e.failed { TraceRecord::FAILED } else { 0 };
            self.pairing.complete(&key, e.time_ns, failed);
            return Ok(());
        }
        let Some(mut op) = e.rwbs.op else {
            return Ok(()); // `N`: no data, no flush
        };
        if op == Op::Write && e.sectors == 0 && e.rwbs.flags & TraceRecord::PREFLUSH != 0 {
            op = Op::Flush;
        }
        let (s, c) = if op == Op::Flush {
            (0, 0)
        } else {
            (e.sector, e.sectors)
        };
        if op != Op::Flush && c == 0 {
            return Err(err(
                "sectors",
                "expected at least 1 sector for a data request, found 0".into(),
            ));
        }
        if s.checked_add(u64::from(c)).is_none() {
            return Err(err(
                "sector",
                "sector + n overflows a 64-bit address".into(),
            ));
        }
        let mut r = TraceRecord::new(line, e.time_ns, op, s, c);
        r.pid = Some(e.pid);
        if !e.process.is_empty() {
            r.process = Some(self.names.intern(e.process));
        }
        r.sync = Some(e.rwbs.sync);
        r.flags = e.rwbs.flags;
        r.device = Some(e.dev);
        self.pairing.issue(key, r);
        Ok(())
    }

    /// The next record in issue order once complete (`eof`: all).
    pub fn pop(&mut self, eof: bool) -> Option<TraceRecord> {
        self.pairing.pop(eof)
    }

    /// The process name interned as `id`.
    pub fn process_name(&self, id: u32) -> &str {
        self.names.name(id)
    }

    /// Completions that matched no issue so far.
    pub fn unmatched(&self) -> u64 {
        self.pairing.unmatched
    }
}

/// Line parser of blkparse text output.
#[derive(Default)]
pub struct BlkparseParser {
    events: BlkEvents,
    seen_event: bool,
    ended: bool,
}

/// Opens blkparse output reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<BlkparseReader> {
    TextReader::new(source, BlkparseParser::default(), unit)
}

impl BlkparseParser {
    /// Completions that matched no issue so far.
    pub fn unmatched_completions(&self) -> u64 {
        self.events.unmatched()
    }
}

/// Splits `<sector> + <n> ... [<x>]` into sector, n and the bracket text.
pub(crate) fn sector_range(tail: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
    let mut f = [&[][..]; 3];
    if split_ws(tail, &mut f) < 3 || f[1] != b"+" {
        return None;
    }
    let n = f[2].strip_suffix(b"]").unwrap_or(f[2]);
    Some((f[0], n, bracket(tail)))
}

/// The text between the first `[` and the last `]` of `tail` (empty when
/// there is none).
fn bracket(tail: &[u8]) -> &[u8] {
    match (
        tail.iter().position(|&b| b == b'['),
        tail.iter().rposition(|&b| b == b']'),
    ) {
        (Some(open), Some(close)) if close > open => &tail[open + 1..close],
        _ => &[][..],
    }
}

/// What the tail of a `D` or `C` line (after the RWBS field) holds.
enum Tail<'a> {
    /// `<sector> + <n>`, `<sector>` (a completion without data) or nothing
    /// (an issue without data), and the bracket text.
    Range(Option<&'a [u8]>, Option<&'a [u8]>, &'a [u8]),
    /// A SCSI passthrough request (`<bytes> (<cdb>) [...]` on the issue,
    /// `(<cdb>) [...]` on the completion): not block I/O, skipped.
    Passthrough,
}

/// Reads the tail of a `D` (`issue`) or `C` line as blkparse's
/// `process_default` prints it (with or without `-t`'s elapsed time).
fn tail_of(tail: &[u8], issue: bool) -> Option<Tail<'_>> {
    if let Some((s, n, b)) = sector_range(tail) {
        return Some(Tail::Range(Some(s), Some(n), b));
    }
    let mut f = [&[][..]; 1];
    split_ws(tail, &mut f);
    let first = f[0];
    let opens = first.starts_with(b"[") || first.starts_with(b"(");
    match (issue, opens) {
        (true, true) => Some(Tail::Range(None, None, bracket(tail))),
        (true, false) if is_digits(first) => Some(Tail::Passthrough),
        (false, false) if is_digits(first) => Some(Tail::Range(Some(first), None, bracket(tail))),
        (false, true) => Some(Tail::Passthrough),
        _ => None,
    }
}

impl LineParser for BlkparseParser {
    fn format_name(&self) -> &'static str {
        "blkparse"
    }

    fn process_name(&self, id: u32) -> &str {
        self.events.process_name(id)
    }

    fn pop(&mut self, eof: bool) -> Option<TraceRecord> {
        self.events.pop(eof)
    }

    fn device_label(&self, id: u32) -> String {
        super::common::dev_label(id)
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
        let action = match f[5] {
            b"D" => BlkAction::Issue,
            b"C" => BlkAction::Complete,
            _ => return Ok(None),
        };
        if n < 7 {
            return Err(cx.err("rwbs", "missing RWBS field"));
        }
        let time_ns = cx.time(f[3], "time", cx.unit)?;
        let rwbs = parse_rwbs(f[6])
            .ok_or_else(|| cx.expected("rwbs", "an RWBS string such as R, WS, FWFS or N", f[6]))?;
        // Tail after the RWBS field.
        let start = f[6].as_ptr() as usize - line.as_ptr() as usize + f[6].len();
        let tail = &line[start..];
        let (sec_t, n_t, bracket) = match tail_of(tail, action == BlkAction::Issue) {
            Some(Tail::Range(s, n, b)) => (s, n, b),
            Some(Tail::Passthrough) => return Ok(None),
            None if rwbs.op.is_none() => return Ok(None), // no-data request
            None => return Err(cx.expected("sector", "`<sector> + <n> [...]`", tail.trim_ascii())),
        };
        let sector = sec_t
            .map(|t| cx.uint(t, "sector"))
            .transpose()?
            .unwrap_or(0);
        let sectors = n_t.map(|t| cx.u32(t, "sectors")).transpose()?.unwrap_or(0);
        let pid = parse_u64(f[4])
            .and_then(|p| u32::try_from(p).ok())
            .ok_or_else(|| cx.expected("pid", "an unsigned 32-bit integer", f[4]))?;
        let e = BlkEvent {
            dev,
            action,
            rwbs,
            sector,
            sectors,
            pid,
            process: if action == BlkAction::Issue {
                bracket
            } else {
                &[]
            },
            failed: !matches!(bracket, b"0" | b""),
            time_ns,
        };
        self.events
            .event(&e, cx.line, |field, message| cx.err(field, message))?;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{open_bytes, OpenOptions};

    /// The tails blkparse prints for requests without data (no sector on
    /// the issue, a bare sector on the completion) and for SCSI
    /// passthrough (skipped).
    #[test]
    fn flushes_without_sectors_pair_and_passthrough_is_skipped() {
        let text = "\
179,0    0        1     0.000000000    95  D  FWS [jbd2/mmcblk0p2]
179,0    0        2     0.000001000    95  D   R 8 (12 00 00 00 24 00 ..) [sg_inq]
179,0    0        3     0.000002000    95  D  WS 64 + 8 (      12) [jbd2/mmcblk0p2]
179,0    0        4     0.000003000     0  C  FWS 0 [0]
179,0    0        5     0.000004000     0  C   R (12 00 00 00 24 00 ..) [0]
179,0    0        6     0.000005000     0  C  WS 64 + 8 [5]
";
        let opts = OpenOptions {
            format: Some("blkparse".parse().unwrap()),
            ..OpenOptions::default()
        };
        let mut r = open_bytes(text.as_bytes(), "t.txt", &opts).unwrap();
        let recs: Vec<TraceRecord> = std::iter::from_fn(|| r.next_record())
            .map(|x| x.unwrap())
            .collect();
        let got: Vec<(Op, u64, u32, Option<Ns>, bool)> = recs
            .iter()
            .map(|r| {
                (
                    r.op,
                    r.sector,
                    r.sectors,
                    r.done_ns,
                    r.has(TraceRecord::FAILED),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (Op::Flush, 0, 0, Some(3_000), false),
                (Op::Write, 64, 8, Some(5_000), true),
            ]
        );
        assert_eq!(r.process_name(recs[0].process.unwrap()), "jbd2/mmcblk0p2");
    }
}
