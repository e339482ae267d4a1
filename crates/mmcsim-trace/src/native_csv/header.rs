//! The header row of the native CSV: which column holds what.

use super::fast::Role;
use super::{NativeCsvReader, MAX_COLUMNS};
use crate::error::Result;

/// Every column name the format accepts.
pub(super) const VALID_COLUMNS: &str =
    "time_s, time_ms, time_us, time_ns, op, sector, sectors, pid, process, sync, done_s, done_ms, done_us, done_ns, device, flags";
/// The accepted time columns.
pub(super) const TIME_COLUMNS: &str = "time_s, time_ms, time_us or time_ns";

/// Column indices found in the header.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Columns {
    pub(super) time: usize,
    pub(super) op: usize,
    pub(super) sector: usize,
    pub(super) sectors: usize,
    pub(super) pid: Option<usize>,
    pub(super) process: Option<usize>,
    pub(super) sync: Option<usize>,
    pub(super) done: Option<usize>,
    pub(super) device: Option<usize>,
    pub(super) flags: Option<usize>,
}

/// A time or completion column: its canonical name and the power of ten
/// from its unit to ns.
type TimedColumn = (usize, &'static str, u32);

/// The columns of a header as they are read, before the required ones
/// are checked.
#[derive(Debug, Default)]
struct Found {
    time: Option<TimedColumn>,
    done: Option<TimedColumn>,
    op: Option<usize>,
    sector: Option<usize>,
    sectors: Option<usize>,
    pid: Option<usize>,
    process: Option<usize>,
    sync: Option<usize>,
    device: Option<usize>,
    flags: Option<usize>,
}

/// Why a header is refused; the reader names the header's line and
/// [`HeaderError::field`].
#[derive(Debug, thiserror::Error)]
enum HeaderError {
    /// A second time column.
    #[error(
        "several time columns (`{prev}` and `{name}`): expected exactly one of {TIME_COLUMNS}"
    )]
    SeveralTimes {
        /// The first time column.
        prev: &'static str,
        /// This one.
        name: &'static str,
    },
    /// A second completion column.
    #[error("several completion columns (`{prev}` and `{name}`): expected at most one")]
    SeveralDones {
        /// The first completion column.
        prev: &'static str,
        /// This one.
        name: &'static str,
    },
    /// A name that is no column of the format.
    #[error("unknown column `{0}`: expected one of {VALID_COLUMNS}")]
    Unknown(String),
    /// A column named twice.
    #[error("column `{0}` appears twice")]
    Twice(String),
    /// No time column.
    #[error("no time column: expected exactly one of {TIME_COLUMNS}")]
    NoTime,
    /// A required column other than the time is missing.
    #[error("missing required column `{0}` (required: one time column, op, sector, sectors)")]
    Missing(&'static str),
}

impl HeaderError {
    /// The field the error names: the column at fault.
    fn field(&self) -> &str {
        match self {
            HeaderError::SeveralTimes { name, .. } | HeaderError::SeveralDones { name, .. } => name,
            HeaderError::Unknown(name) | HeaderError::Twice(name) => name,
            HeaderError::NoTime => "time",
            HeaderError::Missing(name) => name,
        }
    }
}

/// The canonical name and power of ten of `name` if it is `<prefix>_s`,
/// `_ms`, `_us` or `_ns`, for the given `names` of the four.
fn timed(name: &str, names: [&'static str; 4]) -> Option<(&'static str, u32)> {
    names
        .into_iter()
        .zip([9, 6, 3, 0])
        .find(|(n, _)| *n == name)
}

impl Found {
    /// Notes column `i` named `name` (lower case).
    fn add(&mut self, i: usize, name: &str) -> std::result::Result<(), HeaderError> {
        if let Some((canon, digits)) = timed(name, ["time_s", "time_ms", "time_us", "time_ns"]) {
            if let Some((_, prev, _)) = self.time {
                return Err(HeaderError::SeveralTimes { prev, name: canon });
            }
            self.time = Some((i, canon, digits));
            return Ok(());
        }
        if let Some((canon, digits)) = timed(name, ["done_s", "done_ms", "done_us", "done_ns"]) {
            if let Some((_, prev, _)) = self.done {
                return Err(HeaderError::SeveralDones { prev, name: canon });
            }
            self.done = Some((i, canon, digits));
            return Ok(());
        }
        let slot = match name {
            "device" => &mut self.device,
            "flags" => &mut self.flags,
            "op" => &mut self.op,
            "sector" => &mut self.sector,
            "sectors" => &mut self.sectors,
            "pid" => &mut self.pid,
            "process" => &mut self.process,
            "sync" => &mut self.sync,
            _ => return Err(HeaderError::Unknown(name.to_string())),
        };
        if slot.is_some() {
            return Err(HeaderError::Twice(name.to_string()));
        }
        *slot = Some(i);
        Ok(())
    }

    /// The columns, once the required ones are all there.
    fn columns(&self) -> std::result::Result<Columns, HeaderError> {
        let (time, ..) = self.time.ok_or(HeaderError::NoTime)?;
        let need = |c: Option<usize>, name| c.ok_or(HeaderError::Missing(name));
        Ok(Columns {
            time,
            op: need(self.op, "op")?,
            sector: need(self.sector, "sector")?,
            sectors: need(self.sectors, "sectors")?,
            pid: self.pid,
            process: self.process,
            sync: self.sync,
            done: self.done.map(|d| d.0),
            device: self.device,
            flags: self.flags,
        })
    }
}

impl NativeCsvReader {
    /// Reads the header row (the first non-blank, non-comment line) and
    /// plans the reading of records from it.
    pub(super) fn read_header(&mut self) -> Result<()> {
        if !self.read_next()? {
            return Err(self.err(
                1,
                "header",
                format!("empty trace: expected a header row naming the columns ({VALID_COLUMNS})"),
            ));
        }
        let line = self.line();
        self.header_line = line;
        let located = |e: HeaderError| self.err(line, e.field(), e.to_string());
        let mut found = Found::default();
        for i in 0..self.spans.len() {
            let raw = self.get(i).unwrap_or_default();
            let name = String::from_utf8_lossy(raw).to_ascii_lowercase();
            found.add(i, &name).map_err(located)?;
        }
        self.cols = found.columns().map_err(located)?;
        if let Some((_, name, digits)) = found.done {
            self.done_name = name;
            self.done_digits = digits;
            self.done_scale = 10u64.pow(digits);
        }
        if let Some((_, name, digits)) = found.time {
            self.time_name = name;
            self.time_digits = digits;
            self.time_scale = 10u64.pow(digits);
        }
        self.ncols = self.spans.len();
        self.plan_quick_path();
        Ok(())
    }

    /// Resolves once, from the header's columns, what each column holds for
    /// [`NativeCsvReader::quick_record`]; leaves the quick path off when a
    /// column it does not read (`process`, `flags`) is present.
    fn plan_quick_path(&mut self) {
        let c = self.cols;
        self.quick_cols = 0;
        if c.process.is_some() || c.flags.is_some() || self.ncols > MAX_COLUMNS {
            return;
        }
        let named = [
            (Some(c.time), Role::Time),
            (Some(c.op), Role::Op),
            (Some(c.sector), Role::Sector),
            (Some(c.sectors), Role::Sectors),
            (c.pid, Role::Pid),
            (c.sync, Role::Sync),
            (c.done, Role::Done),
            (c.device, Role::Device),
        ];
        let mut found = 0;
        for (idx, role) in named {
            if let Some(i) = idx.filter(|&i| i < self.ncols) {
                self.roles[i] = role;
                found += 1;
            }
        }
        if found == self.ncols {
            self.quick_cols = self.ncols;
            self.quick_extra = c.sync.is_some() || c.done.is_some() || c.device.is_some();
        }
    }
}
