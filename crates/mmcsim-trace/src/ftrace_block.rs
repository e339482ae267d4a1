//! Block-layer tracepoints in ftrace text (reference trace-formats.md §1.1,
//! §1.4; `include/trace/events/block.h`).
//!
//! `block_rq_issue: <maj>,<min> <rwbs> <bytes> (<cmd>) <sector> + <n> [<comm>]`
//! is the issue, `block_rq_complete: <maj>,<min> <rwbs> (<cmd>) <sector> + <n> [<errors>]`
//! the completion (newer kernels insert an ioprio token before the bracket;
//! tolerated). Pairing is by `(dev, sector, n)` in FIFO order; a non-zero
//! error sets [`TraceRecord::FAILED`]. A cache flush (`FWS`/`FN` with 0
//! sectors, or sector 18446744073709551615) becomes a flush. The timestamp
//! is **s** on the trace clock (absolute). Other events (including other
//! `block_*` events and `#` header lines) are ignored. `device` is the
//! `dev_t` (`major << 20 | minor`), the pid and process are the issuing
//! task's. Records come out in issue order once completed (at most 65,536
//! wait); lines out of time order (per-CPU buffers interleaving) are
//! reported as `time` errors, not reordered.
//!
//! ```text
//!    mmcqd/0-95   [001] d..2   96.114020: block_rq_issue: 179,0 WS 0 () 5521408 + 8 [mmcqd/0]
//! ```

use super::blkparse::sector_range;
use super::common::{
    parse_dev, parse_ftrace_line, parse_rwbs, split_ws, Cx, Interner, LineParser, Pairing, Source,
    TextReader,
};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{FtraceEvent, Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (ftrace timestamps are seconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::S;

/// Linux ftrace block events, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct BlockFtrace;

impl TraceFormat for BlockFtrace {
    fn name(&self) -> &'static str {
        "block-ftrace"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["ftrace-block", "ftrace"]
    }

    fn description(&self) -> &'static str {
        "ftrace text with block_rq_issue / block_rq_complete; s; sectors"
    }

    fn example(&self) -> &'static str {
        "mmcqd/0-95 [001] d..2 96.114020: block_rq_issue: 179,0 WS 0 () 5521408 + 8 [mmcqd/0]"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn ftrace_event(&self, event: &[u8]) -> Option<FtraceEvent> {
        (event == b"block_rq_issue" || event == b"block_rq_complete").then_some(FtraceEvent::Seen)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        head.ftrace_events_of(self.name())?;
        Sniff::matched(
            80,
            format!(
                "ftrace text with block_rq_issue/complete events (no MMC events) in the first {} lines",
                head.lines_read()
            ),
        )
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Requests that may wait for their completion.
const MAX_IN_FLIGHT: usize = 65_536;

/// Streaming reader of ftrace block events.
pub type BlockFtraceReader = TextReader<BlockFtraceParser>;

/// Line parser of ftrace block events.
pub struct BlockFtraceParser {
    pairing: Pairing<(u32, u64, u32)>,
    names: Interner,
}

impl Default for BlockFtraceParser {
    fn default() -> Self {
        BlockFtraceParser {
            pairing: Pairing::new(false, MAX_IN_FLIGHT),
            names: Interner::default(),
        }
    }
}

/// Opens an ftrace text file reading block events, times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<BlockFtraceReader> {
    TextReader::new(source, BlockFtraceParser::default(), unit)
}

impl LineParser for BlockFtraceParser {
    fn format_name(&self) -> &'static str {
        "block-ftrace"
    }

    fn device_label(&self, id: u32) -> String {
        super::common::dev_label(id)
    }

    fn process_name(&self, id: u32) -> &str {
        self.names.name(id)
    }

    fn pop(&mut self, eof: bool) -> Option<TraceRecord> {
        self.pairing.pop(eof)
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        let ev = match parse_ftrace_line(line) {
            Ok(Some(ev)) => ev,
            Ok(None) => return Ok(None),
            Err(field) => return Err(field.error(cx, line)),
        };
        let issue = match ev.event {
            b"block_rq_issue" => true,
            b"block_rq_complete" => false,
            _ => return Ok(None),
        };
        let time_ns = cx.time(ev.ts, "timestamp", cx.unit)?;
        let mut f = [&[][..]; 2];
        split_ws(ev.text, &mut f);
        let dev = parse_dev(f[0]).ok_or_else(|| cx.expected("dev", "`<major>,<minor>`", f[0]))?;
        let rw = parse_rwbs(f[1])
            .ok_or_else(|| cx.expected("rwbs", "an RWBS string such as R, WS or FWS", f[1]))?;
        let paren = ev
            .text
            .iter()
            .position(|&b| b == b')')
            .ok_or_else(|| cx.expected("cmd", "a `(<cmd>)` field", ev.text))?;
        let tail = &ev.text[paren + 1..];
        let (sec_t, n_t, bracket) = sector_range(tail)
            .ok_or_else(|| cx.expected("sector", "`<sector> + <n> [...]`", tail.trim_ascii()))?;
        let sector = cx.uint(sec_t, "sector")?;
        let nsec = cx.u32(n_t, "sectors")?;
        let key = (dev, sector, nsec);
        if !issue {
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
        if sector == u64::MAX || (nsec == 0 && rw.flags & TraceRecord::PREFLUSH != 0) {
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
        r.pid = Some(ev.pid);
        let comm = if bracket.is_empty() { ev.task } else { bracket };
        if !comm.is_empty() {
            r.process = Some(self.names.intern(comm));
        }
        r.sync = Some(rw.sync);
        r.flags = rw.flags;
        r.device = Some(dev);
        self.pairing.issue(key, r);
        Ok(None)
    }
}
