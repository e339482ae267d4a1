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
use crate::error::Result;

/// The default time unit (SSDSim's arrival times are nanoseconds).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::Ns;

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
