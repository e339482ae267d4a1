//! DiskSim ASCII traces (`tracetype ascii`, reference trace-formats.md §4,
//! DiskSim 4.0 `disksim_iotrace.c`, read with `%lf %d %d %d %x`).
//!
//! One request per line, fields separated by tabs or runs of spaces (the
//! sample below uses spaces; the public `ascii.trace` uses tabs):
//! arrival time (float, **ms** by default, DiskSim's unit; override with
//! [`super::OpenOptions::time_unit`]), device number, start block (512-byte
//! sectors), size in blocks, flags in **hex** (bit 0 = read, `0x80`
//! synchronous, `0x100` asynchronous; other bits are priority hints and are
//! ignored). Times must not decrease. Each record carries its `device`.
//!
//! ```text
//! 12.750000 0 2097160 8 1
//! ```

use super::common::{split_ws, Cx, LineParser, Source, TextReader};
use super::{TimeUnit, TraceRecord};
use crate::ascii5::Ascii5;
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (DiskSim's arrival times are milliseconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::Ms;

/// DiskSim ASCII, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct DiskSim;

impl TraceFormat for DiskSim {
    fn name(&self) -> &'static str {
        "disksim"
    }

    fn description(&self) -> &'static str {
        "DiskSim ASCII: time ms (float), device, block, blocks, hex flags (bit 0 = read)"
    }

    fn example(&self) -> &'static str {
        "12.750000\t0\t2097160\t8\t1"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        crate::ascii5::sniff(head, Ascii5::DiskSim)
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Streaming reader of DiskSim ASCII traces.
pub type DiskSimReader = TextReader<DiskSimParser>;

/// Line parser of DiskSim ASCII traces.
#[derive(Debug, Default)]
pub struct DiskSimParser;

/// Opens a DiskSim ASCII trace reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<DiskSimReader> {
    TextReader::new(source, DiskSimParser, unit)
}

impl LineParser for DiskSimParser {
    fn format_name(&self) -> &'static str {
        "disksim"
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        let mut f = [&[][..]; 5];
        let n = split_ws(line, &mut f);
        if n != 5 {
            return Err(cx.err(
                "fields",
                format!("expected 5 fields (time device block size flags), found {n}"),
            ));
        }
        let time_ns = cx.time(f[0], "time", cx.unit)?;
        let device = cx.u32(f[1], "device")?;
        let sector = cx.uint(f[2], "block")?;
        let sectors = cx.u32(f[3], "size")?;
        let flags = cx.hex(f[4], "flags")?;
        if sectors == 0 {
            return Err(cx.err("size", "expected at least 1 block, found 0"));
        }
        if sector.checked_add(u64::from(sectors)).is_none() {
            return Err(cx.err("block", "block + size overflows a 64-bit address"));
        }
        let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
        let mut r = TraceRecord::new(cx.line, time_ns, op, sector, sectors);
        r.device = Some(device);
        r.sync = if flags & 0x80 != 0 {
            Some(true)
        } else if flags & 0x100 != 0 {
            Some(false)
        } else {
            None
        };
        Ok(Some(r))
    }
}
