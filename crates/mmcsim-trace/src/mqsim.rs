//! MQSim ASCII traces (reference trace-formats.md §7, `CMU-SAFARI/MQSim`
//! `src/host/ASCII_Trace_Definition.h`).
//!
//! Exactly 5 fields separated by spaces or tabs: arrival time (integer, unit
//! of the workload's `<Time_Unit>`: **ns** by default, MQSim's sample
//! default; `PICOSECOND`/`MICROSECOND` via
//! [`super::OpenOptions::time_unit`]), device number, start sector (512 B),
//! size in sectors, type `0` = write, `1` = read. MQSim itself stops at the
//! first line without 5 fields; this reader reports it as an error instead.
//!
//! ```text
//! 1250000 0 2097160 8 1
//! ```

use super::common::{split_ws, Cx, LineParser, Source, TextReader};
use super::{TimeUnit, TraceRecord};
use crate::ascii5::Ascii5;
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;
use mmcsim_types::Op;

/// The default time unit (MQSim's sample workloads use nanoseconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::Ns;

/// MQSim ASCII, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct MqSim;

impl TraceFormat for MqSim {
    fn name(&self) -> &'static str {
        "mqsim"
    }

    fn description(&self) -> &'static str {
        "MQSim ASCII: time ns (integer), device, sector, sectors, 1 = read / 0 = write"
    }

    fn example(&self) -> &'static str {
        "1250000 0 2097160 8 1"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        crate::ascii5::sniff(head, Ascii5::MqSim)
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Streaming reader of MQSim ASCII traces.
pub type MqSimReader = TextReader<MqSimParser>;

/// Line parser of MQSim ASCII traces.
#[derive(Debug, Default)]
pub struct MqSimParser;

/// Opens an MQSim ASCII trace reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<MqSimReader> {
    TextReader::new(source, MqSimParser, unit)
}

/// Parses the 5-field integer layout shared by MQSim and SSDSim:
/// `time device sector sectors type` with type `1` = read, `0` = write.
pub(crate) fn parse_int5(line: &[u8], cx: &Cx) -> Result<TraceRecord> {
    let mut f = [&[][..]; 5];
    let n = split_ws(line, &mut f);
    if n != 5 {
        return Err(cx.err(
            "fields",
            format!("expected 5 fields (time device sector sectors type), found {n}"),
        ));
    }
    let time_ns = cx.time(f[0], "time", cx.unit)?;
    let device = cx.u32(f[1], "device")?;
    let sector = cx.uint(f[2], "sector")?;
    let sectors = cx.u32(f[3], "sectors")?;
    let op = match f[4] {
        b"1" => Op::Read,
        b"0" => Op::Write,
        other => return Err(cx.expected("type", "0 (write) or 1 (read)", other)),
    };
    if sectors == 0 {
        return Err(cx.err("sectors", "expected at least 1 sector, found 0"));
    }
    if sector.checked_add(u64::from(sectors)).is_none() {
        return Err(cx.err("sector", "sector + sectors overflows a 64-bit address"));
    }
    let mut r = TraceRecord::new(cx.line, time_ns, op, sector, sectors);
    r.device = Some(device);
    Ok(r)
}

impl LineParser for MqSimParser {
    fn format_name(&self) -> &'static str {
        "mqsim"
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        parse_int5(line, cx).map(Some)
    }
}
