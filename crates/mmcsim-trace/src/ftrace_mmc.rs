//! MMC events in ftrace text (reference trace-formats.md §1.1–§1.3).
//!
//! Accepted events (all others, and `#` lines, are ignored):
//!
//! | event | role | pairing |
//! |---|---|---|
//! | `mmc_request_start` / `mmc_request_done` (mainline ≥ 4.8) | issue / completion | host + `mmc_request[<ptr>]` + opcode, most recent unmatched start |
//! | `mmc_blk_rw_start` / `mmc_blk_rw_end` (Android 3.x) | issue / completion | `(cmd, addr, size)` FIFO; an end without a start (CMD17/24 on grouper) is a record at the end time without `done_ns` |
//! | `mmc_blk_erase_start` / `_end` | discard | `(cmd, addr, size)` FIFO |
//! | `mmc_blk_op_start` / `_end` (early Google, `%d,0x%x,0x%x`) | as `mmc_blk_rw_*` | FIFO |
//! | `mmc_queue_fetch` / `mmc_block_req_done` (vendor `struct request[%p]:sector= rw= len=`) | issue / completion | pointer, most recent |
//!
//! Mainline: keys are parsed by name (`key=` tokens; the four-word
//! response arrays are skipped). Opcodes 17/18 read, 24/25 write with
//! sector = `cmd_arg`, length = `blocks × block_size` (or `blksz`) in
//! sectors; a `sbc_arg` with bit 31 set (reliable write) sets
//! [`TraceRecord::FUA`]; CMD6 with `cmd_arg=0x03200100` (FLUSH_CACHE) is a
//! flush; CMD38 (erase/trim/discard; bit 31 → [`TraceRecord::SECURE`]) is a
//! discard of the range set by the preceding CMD35/CMD36 on that host, timed
//! at the CMD38 start. Other commands (CMD13, CMD8, other CMD6 switches) are
//! skipped. A non-zero `cmd_err` or `data_err` on the done event sets
//! [`TraceRecord::FAILED`]. `device` is the host number (`mmc0` → 0).
//!
//! Legacy `size` is in 512-byte blocks (hex), `addr` the start sector;
//! vendor `len` is bytes. Timestamps are **s** on the ftrace clock
//! (absolute). Records come out in issue order once completed (at most
//! 65,536 wait); lines out of time order are reported as `time` errors.
//!
//! ```text
//!  mmcqd/0-112 [001] ...1 812.447120: mmc_request_start: mmc0: start struct mmc_request[d5a3c2e0]: cmd_opcode=25 cmd_arg=0x2c6c10 ... blocks=32 block_size=512 data_flags=0x100
//! ```

use std::collections::BTreeMap;

use super::common::{
    parse_ftrace_line, parse_hex, parse_u64, Cx, FtraceLine, Interner, LineParser, Pairing, Source,
    TextReader,
};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{FtraceEvent, Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;
use mmcsim_types::{Ns, Op};

/// The default time unit (ftrace timestamps are seconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::S;

/// Linux ftrace MMC events, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct MmcFtrace;

impl TraceFormat for MmcFtrace {
    fn name(&self) -> &'static str {
        "mmc-ftrace"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["ftrace-mmc", "mmc"]
    }

    fn description(&self) -> &'static str {
        "ftrace text with mmc_request_start/done (≥4.8) or 3.x mmc_blk_rw_start/end, erase, op and vendor events; s"
    }

    fn example(&self) -> &'static str {
        "mmcqd/0-95 [000] ...1 1543.210977: mmc_blk_rw_start: cmd=18,addr=0x001c4a08,size=0x00000040"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn ftrace_event(&self, event: &[u8]) -> Option<FtraceEvent> {
        let mmc = event.starts_with(b"mmc_request_")
            || event.starts_with(b"mmc_blk_")
            || event == b"mmc_queue_fetch"
            || event == b"mmc_block_req_done";
        mmc.then_some(FtraceEvent::Decisive)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        // 90: MMC events outrank block events (the level nearer the device).
        let n = head.ftrace_events_of(self.name())?;
        Sniff::matched(
            90,
            format!("ftrace text with MMC events within the first {n} lines"),
        )
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Requests that may wait for their completion.
const MAX_IN_FLIGHT: usize = 65_536;

/// `cmd_arg` of the CMD6 SWITCH that flushes the cache (EXT_CSD byte 32).
const FLUSH_CACHE_ARG: u64 = 0x0320_0100;

/// Pairing key: (event family, host, a, b, c).
type Key = (u8, u32, u64, u64, u64);

/// Streaming reader of ftrace MMC events.
pub type MmcFtraceReader = TextReader<MmcFtraceParser>;

/// Line parser of ftrace MMC events.
pub struct MmcFtraceParser {
    pairing: Pairing<Key>,
    names: Interner,
    hosts: Interner,
    /// Per host: start and end sector of the pending erase group (CMD35/36).
    erase: BTreeMap<u32, (Option<u64>, Option<u64>)>,
}

impl Default for MmcFtraceParser {
    fn default() -> Self {
        MmcFtraceParser {
            pairing: Pairing::new(true, MAX_IN_FLIGHT),
            names: Interner::default(),
            hosts: Interner::default(),
            erase: BTreeMap::new(),
        }
    }
}

/// Opens an ftrace text file reading MMC events, times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<MmcFtraceReader> {
    TextReader::new(source, MmcFtraceParser::default(), unit)
}

/// The values of the mainline keys this reader uses.
#[derive(Default, Debug)]
struct Keys<'a> {
    opcode: Option<&'a [u8]>,
    arg: Option<&'a [u8]>,
    sbc_opcode: Option<&'a [u8]>,
    sbc_arg: Option<&'a [u8]>,
    blocks: Option<&'a [u8]>,
    block_size: Option<&'a [u8]>,
    cmd_err: Option<&'a [u8]>,
    data_err: Option<&'a [u8]>,
}

/// An event being parsed: the ftrace line, its context and its time.
struct Event<'e, 'a> {
    ev: &'e FtraceLine<'a>,
    cx: &'e Cx<'e>,
    time_ns: Ns,
}

/// The request pointer of `mmc_request[<ptr>]` in `text` and the text
/// after the `]`.
fn request_pointer<'t>(text: &'t [u8], cx: &Cx) -> Result<(u64, &'t [u8])> {
    let lb = text.iter().position(|&b| b == b'[');
    let rb = text.iter().position(|&b| b == b']');
    let (Some(lb), Some(rb)) = (lb, rb) else {
        return Err(cx.expected("mmc_request", "`mmc_request[<ptr>]`", text));
    };
    if rb < lb {
        return Err(cx.expected("mmc_request", "`mmc_request[<ptr>]`", text));
    }
    let ptr = parse_hex(&text[lb + 1..rb])
        .ok_or_else(|| cx.expected("mmc_request", "a hexadecimal pointer", &text[lb + 1..rb]))?;
    Ok((ptr, &text[rb + 1..]))
}

fn keys(text: &[u8]) -> Keys<'_> {
    let mut k = Keys::default();
    for tok in text.split(|&b| b == b' ' || b == b'\t') {
        let Some(eq) = tok.iter().position(|&b| b == b'=') else {
            continue; // a continuation word of a response array
        };
        let v = &tok[eq + 1..];
        let slot = match &tok[..eq] {
            b"cmd_opcode" => &mut k.opcode,
            b"cmd_arg" => &mut k.arg,
            b"sbc_opcode" => &mut k.sbc_opcode,
            b"sbc_arg" => &mut k.sbc_arg,
            b"blocks" => &mut k.blocks,
            b"block_size" | b"blksz" => &mut k.block_size,
            b"cmd_err" => &mut k.cmd_err,
            b"data_err" => &mut k.data_err,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(v);
        }
    }
    k
}

/// A `k=v,k=v,...` or `v,v,v` legacy text: three numbers (cmd decimal,
/// addr and size hex).
fn legacy3(text: &[u8]) -> Option<(u64, u64, u64)> {
    let mut it = text.split(|&b| b == b',').map(|f| {
        let f = f.trim_ascii();
        match f.iter().position(|&b| b == b'=') {
            Some(p) => &f[p + 1..],
            None => f,
        }
    });
    let cmd = parse_u64(it.next()?)?;
    let addr = parse_hex(it.next()?)?;
    let size = parse_hex(it.next()?)?;
    if it.next().is_some() {
        return None;
    }
    Some((cmd, addr, size))
}

impl MmcFtraceParser {
    fn host_id(&mut self, host: &[u8]) -> u32 {
        let digits = host.iter().rev().take_while(|b| b.is_ascii_digit()).count();
        if host.starts_with(b"mmc") && digits > 0 && digits == host.len() - 3 {
            if let Some(n) = parse_u64(&host[3..]).and_then(|v| u32::try_from(v).ok()) {
                return n;
            }
        }
        // Unusual host names: ids from 1<<16 up, in order of appearance.
        (1 << 16) + self.hosts.intern(host)
    }

    fn record(
        &mut self,
        ev: &FtraceLine,
        cx: &Cx,
        time_ns: Ns,
        op: Op,
        sector: u64,
        sectors: u64,
    ) -> Result<TraceRecord> {
        let sectors =
            u32::try_from(sectors).map_err(|_| cx.err("blocks", "length over 2^32 sectors"))?;
        if op != Op::Flush && sectors == 0 {
            return Err(cx.err(
                "blocks",
                "expected at least 1 block for a data request, found 0",
            ));
        }
        if sector.checked_add(u64::from(sectors)).is_none() {
            return Err(cx.err("cmd_arg", "start + length overflows a 64-bit address"));
        }
        let mut r = TraceRecord::new(cx.line, time_ns, op, sector, sectors);
        r.pid = Some(ev.pid);
        if !ev.task.is_empty() {
            r.process = Some(self.names.intern(ev.task));
        }
        Ok(r)
    }

    /// A ≥ 4.8 `mmc_request_start` (`start`) or `mmc_request_done` event:
    /// a start of a data, flush or erase command queues a request keyed by
    /// host, request pointer and opcode; a done completes it.
    fn mainline(&mut self, ev: &FtraceLine, cx: &Cx, time_ns: Ns, start: bool) -> Result<()> {
        let text = ev.text;
        let colon = text.iter().position(|&b| b == b':').ok_or_else(|| {
            cx.expected(
                "host",
                "`<host>: start|end struct mmc_request[<ptr>]:`",
                text,
            )
        })?;
        let host = self.host_id(&text[..colon]);
        let (ptr, rest) = request_pointer(text, cx)?;
        let k = keys(rest);
        let opcode = k
            .opcode
            .ok_or_else(|| cx.err("cmd_opcode", "missing key `cmd_opcode=`"))?;
        let opcode = cx.uint(opcode, "cmd_opcode")?;
        let key = (0u8, host, ptr, opcode, 0u64);
        if !start {
            let err = |v: Option<&[u8]>| v.is_some_and(|v| v != b"0");
            let failed = if err(k.cmd_err) || err(k.data_err) {
                TraceRecord::FAILED
            } else {
                0
            };
            self.pairing.lifo = true;
            self.pairing.complete(&key, time_ns, failed);
            return Ok(());
        }
        let at = Event { ev, cx, time_ns };
        if let Some(mut rec) = self.mainline_start(&at, host, opcode, &k)? {
            rec.device = Some(host);
            self.pairing.issue(key, rec);
        }
        Ok(())
    }

    /// The request a ≥ 4.8 start event of command `opcode` on `host`
    /// issues: a data transfer (CMD17/18/24/25), a cache flush (CMD6 with
    /// the flush argument) or an erase (CMD38 over the range CMD35 and
    /// CMD36 set); `None` for any other command (CMD35/36 only note their
    /// bound).
    fn mainline_start(
        &mut self,
        at: &Event,
        host: u32,
        opcode: u64,
        k: &Keys,
    ) -> Result<Option<TraceRecord>> {
        let cx = at.cx;
        let arg = || -> Result<u64> {
            let a = k
                .arg
                .ok_or_else(|| cx.err("cmd_arg", "missing key `cmd_arg=`"))?;
            cx.hex(a, "cmd_arg")
        };
        Ok(Some(match opcode {
            17 | 18 | 24 | 25 => self.data_request(at, opcode, arg()?, k)?,
            6 if arg()? == FLUSH_CACHE_ARG => {
                self.record(at.ev, cx, at.time_ns, Op::Flush, 0, 0)?
            }
            35 => {
                self.erase.entry(host).or_default().0 = Some(arg()?);
                return Ok(None);
            }
            36 => {
                self.erase.entry(host).or_default().1 = Some(arg()?);
                return Ok(None);
            }
            38 => self.erase_request(at, host, arg()?)?,
            _ => return Ok(None),
        }))
    }

    /// A read or write of `blocks` × `block_size` bytes from sector `arg`;
    /// FUA when the CMD23 set before it asks for a reliable write.
    fn data_request(&mut self, at: &Event, opcode: u64, arg: u64, k: &Keys) -> Result<TraceRecord> {
        let cx = at.cx;
        let blocks = cx.uint(
            k.blocks
                .ok_or_else(|| cx.err("blocks", "missing key `blocks=`"))?,
            "blocks",
        )?;
        let bsz = match k.block_size {
            Some(b) => cx.uint(b, "block_size")?,
            None => 512,
        };
        let bytes = blocks
            .checked_mul(bsz)
            .ok_or_else(|| cx.err("blocks", "blocks × block_size overflows"))?;
        let op = if opcode < 20 { Op::Read } else { Op::Write };
        let mut r = self.record(at.ev, cx, at.time_ns, op, arg, bytes.div_ceil(512))?;
        if k.sbc_opcode == Some(b"23") {
            if let Some(sa) = k.sbc_arg {
                if cx.hex(sa, "sbc_arg")? & (1 << 31) != 0 {
                    r.flags |= TraceRecord::FUA;
                }
            }
        }
        Ok(r)
    }

    /// A CMD38 erase (argument `arg`) of the range CMD35 and CMD36 set on
    /// `host`; secure when bit 31 of the argument is set.
    fn erase_request(&mut self, at: &Event, host: u32, arg: u64) -> Result<TraceRecord> {
        let cx = at.cx;
        let (s, e) = self.erase.remove(&host).unwrap_or_default();
        let (Some(s), Some(e)) = (s, e) else {
            return Err(cx.err("cmd_opcode", "CMD38 without a preceding CMD35 and CMD36 on this host: the erase range is unknown"));
        };
        if e < s {
            return Err(cx.err(
                "cmd_arg",
                format!("erase group end {e:#x} is before its start {s:#x}"),
            ));
        }
        let mut r = self.record(at.ev, cx, at.time_ns, Op::Discard, s, e - s + 1)?;
        if arg & (1 << 31) != 0 {
            r.flags |= TraceRecord::SECURE;
        }
        Ok(r)
    }

    fn legacy(
        &mut self,
        ev: &FtraceLine,
        cx: &Cx,
        time_ns: Ns,
        erase: bool,
        start: bool,
    ) -> Result<()> {
        let (cmd, addr, size) = legacy3(ev.text)
            .ok_or_else(|| cx.expected("cmd", "`cmd=<n>,addr=0x<hex>,size=0x<hex>`", ev.text))?;
        let key = (if erase { 2 } else { 1 }, 0, cmd, addr, size);
        let op = if erase {
            Op::Discard
        } else {
            match cmd {
                17 | 18 => Op::Read,
                24 | 25 => Op::Write,
                _ => return Ok(()),
            }
        };
        if !start {
            self.pairing.lifo = false;
            if self.pairing.is_open(&key) {
                self.pairing.complete(&key, time_ns, 0);
                return Ok(());
            }
            // End without a start: the request is known only from its end.
            // The end fires in interrupt context: no issuing task.
            let mut r = self.record(ev, cx, time_ns, op, addr, size)?;
            r.pid = None;
            r.process = None;
            if erase && cmd & (1 << 31) != 0 {
                r.flags |= TraceRecord::SECURE;
            }
            self.pairing.ready(r);
            return Ok(());
        }
        let mut r = self.record(ev, cx, time_ns, op, addr, size)?;
        if erase && cmd & (1 << 31) != 0 {
            r.flags |= TraceRecord::SECURE;
        }
        self.pairing.issue(key, r);
        Ok(())
    }

    fn vendor(&mut self, ev: &FtraceLine, cx: &Cx, time_ns: Ns, start: bool) -> Result<()> {
        let text = ev.text;
        let lb = text.iter().position(|&b| b == b'[');
        let rb = text.iter().position(|&b| b == b']');
        let (Some(lb), Some(rb)) = (lb, rb) else {
            return Err(cx.expected(
                "request",
                "`struct request[<ptr>]:sector=<n> rw=<0|1> len=<bytes>`",
                text,
            ));
        };
        if rb < lb {
            return Err(cx.expected("request", "`struct request[<ptr>]`", text));
        }
        let ptr = parse_hex(&text[lb + 1..rb])
            .ok_or_else(|| cx.expected("request", "a hexadecimal pointer", &text[lb + 1..rb]))?;
        let key = (3u8, 0, ptr, 0, 0);
        if !start {
            self.pairing.lifo = true;
            self.pairing.complete(&key, time_ns, 0);
            return Ok(());
        }
        let (mut sector, mut rw, mut len) = (None, None, None);
        for tok in text[rb + 1..].split(|&b| b == b' ' || b == b':' || b == b',') {
            if let Some(v) = tok.strip_prefix(b"sector=") {
                sector = Some(cx.uint(v, "sector")?);
            } else if let Some(v) = tok.strip_prefix(b"rw=") {
                rw = Some(cx.uint(v, "rw")?);
            } else if let Some(v) = tok.strip_prefix(b"len=") {
                len = Some(cx.uint(v, "len")?);
            }
        }
        let sector = sector.ok_or_else(|| cx.err("sector", "missing `sector=`"))?;
        let len = len.ok_or_else(|| cx.err("len", "missing `len=`"))?;
        let op = match rw {
            Some(0) => Op::Read,
            Some(1) => Op::Write,
            _ => return Err(cx.err("rw", "expected `rw=0` (read) or `rw=1` (write)")),
        };
        let r = self.record(ev, cx, time_ns, op, sector, len.div_ceil(512))?;
        self.pairing.issue(key, r);
        Ok(())
    }
}

impl LineParser for MmcFtraceParser {
    fn format_name(&self) -> &'static str {
        "mmc-ftrace"
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
        let kind = match ev.event {
            b"mmc_request_start" => 0,
            b"mmc_request_done" => 1,
            b"mmc_blk_rw_start" | b"mmc_blk_op_start" => 2,
            b"mmc_blk_rw_end" | b"mmc_blk_op_end" => 3,
            b"mmc_blk_erase_start" => 4,
            b"mmc_blk_erase_end" => 5,
            b"mmc_queue_fetch" => 6,
            b"mmc_block_req_done" => 7,
            _ => return Ok(None),
        };
        let time_ns = cx.time(ev.ts, "timestamp", cx.unit)?;
        match kind {
            0 | 1 => self.mainline(&ev, cx, time_ns, kind == 0)?,
            2 | 3 => self.legacy(&ev, cx, time_ns, false, kind == 2)?,
            4 | 5 => self.legacy(&ev, cx, time_ns, true, kind == 4)?,
            _ => self.vendor(&ev, cx, time_ns, kind == 6)?,
        }
        Ok(None)
    }
}
