//! SSDSim ASCII traces (`huaicheng/ssdsim`, `example.ascii`; read there with
//! `%lld %d %d %d %d`).
//!
//! Five fields separated by spaces or tabs: arrival time (integer, **ns**,
//! SSDSim's unit), device number, start logical sector (512 B), size in
//! sectors, operation `1` = read, `0` = write. The layout is the same as
//! MQSim's; detection tells them apart only by the file name (`ssdsim` or
//! an `.ascii` extension), so force the format when in doubt.
//!
//! ```text
//! 26214000 0 303574 7 0
//! ```

use super::common::{Cx, LineParser, Source, TextReader};
use super::{TimeUnit, TraceRecord};
use crate::ascii5::Ascii5;
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::TraceReader;

/// The default time unit (SSDSim's arrival times are nanoseconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::Ns;

/// SSDSim ASCII, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct SsdSim;

impl TraceFormat for SsdSim {
    fn name(&self) -> &'static str {
        "ssdsim"
    }

    fn description(&self) -> &'static str {
        "SSDSim ASCII: time ns, device, sector, sectors, 1 = read / 0 = write"
    }

    fn example(&self) -> &'static str {
        "26214000 0 303574 7 0"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        crate::ascii5::sniff(head, Ascii5::SsdSim)
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Streaming reader of SSDSim ASCII traces.
pub type SsdSimReader = TextReader<SsdSimParser>;

/// Line parser of SSDSim ASCII traces.
#[derive(Debug, Default)]
pub struct SsdSimParser;

/// Opens an SSDSim ASCII trace reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<SsdSimReader> {
    TextReader::new(source, SsdSimParser, unit)
}

impl LineParser for SsdSimParser {
    fn format_name(&self) -> &'static str {
        "ssdsim"
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        super::mqsim::parse_int5(line, cx).map(Some)
    }
}
