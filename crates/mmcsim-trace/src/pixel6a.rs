//! Pixel 6a mobile block I/O CSV (acsl-technion/MobileBlockIOTraces).
//!
//! A header row names the columns `proces,device,rw_flag,sector,size,timestamp`
//! (the misspelt `proces` is what the published files have; `process` is
//! accepted too; columns may come in any order). Then, comma separated:
//! * `proces`: the ftrace task as `<comm>-<pid>` (split at the last `-`);
//!   `<...>` (comm not resolved by ftrace) gives a pid but no process name;
//! * `device`: the kernel `dev_t` (`major << 20 | minor`; 8388608 = 8,0 =
//!   `sda`), kept as the record's `device`;
//! * `rw_flag`: an RWBS string (`R`, `W`, also `WS`, `FWS`, `D`, ...);
//! * `sector`: start sector (512 B); `size`: length in **sectors**;
//! * `timestamp`: **s** since boot (absolute; float text with up to 12
//!   decimals, rounded to the nearest ns).
//!
//! ```text
//! proces,device,rw_flag,sector,size,timestamp
//! loop40-2757,8388608,R,206567552,8,653406.907265
//! ```

use super::common::{
    parse_rwbs, parse_u64, show, split_csv, Cx, Interner, LineParser, Source, TextReader,
};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (seconds since boot).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::S;

/// Pixel 6a mobile block I/O CSV, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct Pixel6a;

impl TraceFormat for Pixel6a {
    fn name(&self) -> &'static str {
        "pixel6a"
    }

    fn description(&self) -> &'static str {
        "Pixel 6a CSV (MobileBlockIOTraces, gzip): proces,device,rw_flag,sector,size(sectors),timestamp(s)"
    }

    fn example(&self) -> &'static str {
        "loop40-2757,8388608,R,206567552,8,653406.907265"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let header = (head.has_column(b"proces") || head.has_column(b"process"))
            && head.has_column(b"rw_flag");
        if !header {
            return None;
        }
        Sniff::matched(70, "a header with proces and rw_flag columns")
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// The column names, in the published order.
const COLUMNS: [&str; 6] = ["proces", "device", "rw_flag", "sector", "size", "timestamp"];

/// Streaming reader of Pixel 6a CSV traces.
pub type Pixel6aReader = TextReader<Pixel6aParser>;

/// Line parser of Pixel 6a CSV traces.
#[derive(Debug, Default)]
pub struct Pixel6aParser {
    /// Column index of each of [`COLUMNS`], once the header is read.
    cols: Option<[usize; 6]>,
    names: Interner,
}

/// Opens a Pixel 6a CSV trace reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<Pixel6aReader> {
    TextReader::new(source, Pixel6aParser::default(), unit)
}

impl Pixel6aParser {
    fn header(&mut self, line: &[u8], cx: &Cx) -> Result<()> {
        let mut f = [&[][..]; 8];
        let n = split_csv(line, &mut f);
        let mut cols = [usize::MAX; 6];
        for (i, name) in f.iter().take(n.min(8)).enumerate() {
            let name = name.to_ascii_lowercase();
            let name: &[u8] = if name == b"process" { b"proces" } else { &name };
            if let Some(c) = COLUMNS.iter().position(|c| c.as_bytes() == name) {
                cols[c] = i;
            }
        }
        if let Some(c) = cols.iter().position(|&i| i == usize::MAX) {
            return Err(cx.err(
                COLUMNS[c],
                format!(
                    "header `{}` lacks column `{}`: expected proces,device,rw_flag,sector,size,timestamp",
                    show(line),
                    COLUMNS[c]
                ),
            ));
        }
        self.cols = Some(cols);
        Ok(())
    }
}

impl LineParser for Pixel6aParser {
    fn format_name(&self) -> &'static str {
        "pixel6a"
    }

    fn process_name(&self, id: u32) -> &str {
        self.names.name(id)
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        let Some(cols) = self.cols else {
            self.header(line, cx)?;
            return Ok(None);
        };
        let mut f = [&[][..]; 8];
        let n = split_csv(line, &mut f);
        if n != 6 {
            return Err(cx.err(
                "fields",
                format!("expected 6 comma-separated fields (proces,device,rw_flag,sector,size,timestamp), found {n}"),
            ));
        }
        let task = f[cols[0]];
        let device = cx.u32(f[cols[1]], "device")?;
        let rw = parse_rwbs(f[cols[2]]).ok_or_else(|| {
            cx.expected(
                "rw_flag",
                "an RWBS string such as R, W, WS, FWS or D",
                f[cols[2]],
            )
        })?;
        let sector = cx.uint(f[cols[3]], "sector")?;
        let size = cx.u32(f[cols[4]], "size")?;
        let time_ns = cx.time(f[cols[5]], "timestamp", cx.unit)?;
        let Some(op) = rw.op else {
            return Ok(None); // no-data request without flush
        };
        let (sector, sectors) = if op == Op::Flush {
            (0, 0)
        } else {
            (sector, size)
        };
        if op != Op::Flush && sectors == 0 {
            return Err(cx.err(
                "size",
                "expected at least 1 sector for a data request, found 0",
            ));
        }
        if sector.checked_add(u64::from(sectors)).is_none() {
            return Err(cx.err("sector", "sector + size overflows a 64-bit address"));
        }
        let mut r = TraceRecord::new(cx.line, time_ns, op, sector, sectors);
        r.device = Some(device);
        r.flags = rw.flags;
        r.sync = rw.sync.then_some(true);
        if let Some(d) = task.iter().rposition(|&b| b == b'-') {
            if let Some(pid) = parse_u64(&task[d + 1..]).and_then(|p| u32::try_from(p).ok()) {
                r.pid = Some(pid);
                let comm = &task[..d];
                if !comm.is_empty() && comm != b"<...>" {
                    r.process = Some(self.names.intern(comm));
                }
            } else if !task.is_empty() {
                r.process = Some(self.names.intern(task));
            }
        } else if !task.is_empty() {
            r.process = Some(self.names.intern(task));
        }
        Ok(Some(r))
    }
}
