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

impl NativeCsvReader {
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
        let mut time: Option<(usize, &'static str, u32)> = None;
        let (mut op, mut sector, mut sectors) = (None, None, None);
        let (mut pid, mut process, mut sync) = (None, None, None);
        let (mut device, mut flags) = (None, None);
        let mut done: Option<(usize, &'static str, u32)> = None;
        for i in 0..self.spans.len() {
            let raw = self.get(i).unwrap_or_default();
            let name = String::from_utf8_lossy(raw).to_ascii_lowercase();
            let slot = match name.as_str() {
                "time_s" | "time_ms" | "time_us" | "time_ns" => {
                    let (canon, digits) = match name.as_str() {
                        "time_s" => ("time_s", 9),
                        "time_ms" => ("time_ms", 6),
                        "time_us" => ("time_us", 3),
                        _ => ("time_ns", 0),
                    };
                    if let Some((_, prev, _)) = time {
                        return Err(self.err(
                            line,
                            canon,
                            format!(
                                "several time columns (`{prev}` and `{canon}`): expected exactly one of {TIME_COLUMNS}"
                            ),
                        ));
                    }
                    time = Some((i, canon, digits));
                    continue;
                }
                "done_s" | "done_ms" | "done_us" | "done_ns" => {
                    let (canon, digits) = match name.as_str() {
                        "done_s" => ("done_s", 9),
                        "done_ms" => ("done_ms", 6),
                        "done_us" => ("done_us", 3),
                        _ => ("done_ns", 0),
                    };
                    if let Some((_, prev, _)) = done {
                        return Err(self.err(
                            line,
                            canon,
                            format!("several completion columns (`{prev}` and `{canon}`): expected at most one"),
                        ));
                    }
                    done = Some((i, canon, digits));
                    continue;
                }
                "device" => &mut device,
                "flags" => &mut flags,
                "op" => &mut op,
                "sector" => &mut sector,
                "sectors" => &mut sectors,
                "pid" => &mut pid,
                "process" => &mut process,
                "sync" => &mut sync,
                _ => {
                    return Err(self.err(
                        line,
                        &name,
                        format!("unknown column `{name}`: expected one of {VALID_COLUMNS}"),
                    ))
                }
            };
            if slot.is_some() {
                return Err(self.err(line, &name, format!("column `{name}` appears twice")));
            }
            *slot = Some(i);
        }
        let Some((time_idx, time_name, digits)) = time else {
            return Err(self.err(
                line,
                "time",
                format!("no time column: expected exactly one of {TIME_COLUMNS}"),
            ));
        };
        let need = |c: Option<usize>, name: &str| {
            c.ok_or_else(|| {
                self.err(
                    line,
                    name,
                    format!("missing required column `{name}` (required: one time column, op, sector, sectors)"),
                )
            })
        };
        self.cols = Columns {
            time: time_idx,
            op: need(op, "op")?,
            sector: need(sector, "sector")?,
            sectors: need(sectors, "sectors")?,
            pid,
            process,
            sync,
            done: done.map(|d| d.0),
            device,
            flags,
        };
        if let Some((_, n, d)) = done {
            self.done_name = n;
            self.done_digits = d;
            self.done_scale = 10u64.pow(d);
        }
        self.ncols = self.spans.len();
        self.plan_quick_path();
        self.time_name = time_name;
        self.time_digits = digits;
        self.time_scale = 10u64.pow(digits);
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
