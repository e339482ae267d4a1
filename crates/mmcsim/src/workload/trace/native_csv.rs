//! The project's own CSV trace format.
//!
//! A header row names the columns, in any order (names are
//! case-insensitive):
//!
//! | column | required | meaning |
//! |---|---|---|
//! | `time_s` / `time_ms` / `time_us` / `time_ns` | exactly one | request time in the unit the name says; decimals allowed except for `time_ns`, converted to whole ns rounding to nearest |
//! | `op` | yes | `R` read, `W` write, `D` discard, `F` flush |
//! | `sector` | yes | first sector, 512-byte units (may be empty or 0 for `F`) |
//! | `sectors` | yes | length in sectors, ≥ 1 for R/W/D (may be empty or 0 for `F`) |
//! | `pid` | no | process id (u32) |
//! | `process` | no | process name |
//! | `sync` | no | `0`/`1`/`true`/`false` |
//!
//! Fields are trimmed; blank lines and lines starting with `#` are skipped;
//! the last line may lack its newline. Times must not decrease. Empty
//! optional fields mean "not recorded".
//!
//! ```text
//! time_us,pid,process,op,sector,sectors,sync
//! 0,1203,com.android.chrome,R,2048,256,1
//! 15.5,1203,com.android.chrome,W,90112,8,1
//! 40,1203,com.android.chrome,F,,,1
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use csv::{ByteRecord, ReaderBuilder, Trim};

use super::{TraceReader, TraceRecord};
use crate::error::{Error, Result};
use crate::types::{Ns, Op};

/// Every column name the format accepts.
const VALID_COLUMNS: &str =
    "time_s, time_ms, time_us, time_ns, op, sector, sectors, pid, process, sync";
/// The accepted time columns.
const TIME_COLUMNS: &str = "time_s, time_ms, time_us or time_ns";

/// Column indices found in the header.
#[derive(Clone, Copy, Debug, Default)]
struct Columns {
    time: usize,
    op: usize,
    sector: usize,
    sectors: usize,
    pid: Option<usize>,
    process: Option<usize>,
    sync: Option<usize>,
}

/// Streaming reader of the native CSV format.
///
/// Memory is independent of the trace length: one reused record buffer, and
/// a table of the distinct process names seen.
pub struct NativeCsvReader {
    rdr: csv::Reader<Box<dyn Read>>,
    path: PathBuf,
    record: ByteRecord,
    cols: Columns,
    ncols: usize,
    header_line: u64,
    /// Name of the time column and the power of ten from its unit to ns.
    time_name: &'static str,
    time_digits: u32,
    processes: Vec<String>,
    process_ids: BTreeMap<String, u32>,
    /// Previous record's time (ns), its text and line.
    prev_time: Option<(Ns, u64)>,
    prev_time_text: String,
    done: bool,
}

impl std::fmt::Debug for NativeCsvReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeCsvReader")
            .field("path", &self.path)
            .field("time", &self.time_name)
            .finish_non_exhaustive()
    }
}

impl NativeCsvReader {
    /// Opens the trace at `path` and reads its header.
    pub fn open(path: impl AsRef<Path>) -> Result<NativeCsvReader> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        NativeCsvReader::from_reader(file, path)
    }

    /// Reads a trace from `reader`, naming it `path_for_messages` in errors,
    /// and reads its header.
    pub fn from_reader(
        reader: impl Read + 'static,
        path_for_messages: impl AsRef<Path>,
    ) -> Result<NativeCsvReader> {
        let rdr = ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(Trim::All)
            .comment(Some(b'#'))
            .from_reader(Box::new(reader) as Box<dyn Read>);
        let mut this = NativeCsvReader {
            rdr,
            path: path_for_messages.as_ref().to_path_buf(),
            record: ByteRecord::new(),
            cols: Columns::default(),
            ncols: 0,
            header_line: 1,
            time_name: "time_ns",
            time_digits: 0,
            processes: Vec::new(),
            process_ids: BTreeMap::new(),
            prev_time: None,
            prev_time_text: String::new(),
            done: false,
        };
        this.read_header()?;
        Ok(this)
    }

    fn err(&self, line: u64, field: &str, message: impl Into<String>) -> Error {
        Error::Parse {
            path: self.path.clone(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// Reads the next non-blank, non-comment record into `self.record`.
    /// `Ok(false)` at the end of input.
    fn read_next(&mut self) -> Result<bool> {
        loop {
            match self.rdr.read_byte_record(&mut self.record) {
                Ok(false) => return Ok(false),
                Ok(true) => {
                    let blank = self.record.iter().all(|f| f.is_empty());
                    let comment = self.record.get(0).is_some_and(|f| f.starts_with(b"#"));
                    if !blank && !comment {
                        return Ok(true);
                    }
                }
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line());
                    return Err(match e.into_kind() {
                        csv::ErrorKind::Io(source) => {
                            self.done = true;
                            Error::Io {
                                path: self.path.clone(),
                                source,
                            }
                        }
                        other => self.err(line, "record", format!("malformed CSV: {other:?}")),
                    });
                }
            }
        }
    }

    fn line(&self) -> u64 {
        self.record.position().map_or(0, |p| p.line())
    }

    fn read_header(&mut self) -> Result<()> {
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
        for (i, raw) in self.record.iter().enumerate() {
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
        };
        self.ncols = self.record.len();
        self.time_name = time_name;
        self.time_digits = digits;
        Ok(())
    }

    /// Field `idx` of the current record as text (fields are already trimmed).
    fn field(&self, idx: usize, name: &str, line: u64) -> Result<&str> {
        let raw = self.record.get(idx).unwrap_or(b"");
        std::str::from_utf8(raw).map_err(|_| self.err(line, name, "expected UTF-8 text"))
    }

    fn parse_record(&mut self) -> Result<TraceRecord> {
        let line = self.line();
        if self.record.len() != self.ncols {
            return Err(self.err(
                line,
                "fields",
                format!(
                    "expected {} fields (as in the header at line {}), found {}",
                    self.ncols,
                    self.header_line,
                    self.record.len()
                ),
            ));
        }
        let c = self.cols;
        let time_name = self.time_name;
        let time_text = self.field(c.time, time_name, line)?;
        let time_ns =
            parse_time(time_text, self.time_digits).map_err(|m| self.err(line, time_name, m))?;
        if let Some((prev, prev_line)) = self.prev_time {
            if time_ns < prev {
                return Err(self.err(
                    line,
                    time_name,
                    format!(
                        "time goes backwards: {time_text} is earlier than {} at line {prev_line}; expected non-decreasing times",
                        self.prev_time_text
                    ),
                ));
            }
        }
        let op_text = self.field(c.op, "op", line)?;
        let op = Op::from_code(op_text).ok_or_else(|| {
            self.err(
                line,
                "op",
                format!("expected R, W, D or F, found `{op_text}`"),
            )
        })?;
        let flush = op == Op::Flush;
        let sector_text = self.field(c.sector, "sector", line)?;
        let sector = if flush && sector_text.is_empty() {
            0
        } else {
            parse_uint::<u64>(
                sector_text,
                "a sector number (unsigned integer, 512-byte units)",
            )
            .map_err(|m| self.err(line, "sector", m))?
        };
        let sectors_text = self.field(c.sectors, "sectors", line)?;
        let sectors = if flush && sectors_text.is_empty() {
            0
        } else {
            parse_uint::<u32>(sectors_text, "a sector count (unsigned 32-bit integer)")
                .map_err(|m| self.err(line, "sectors", m))?
        };
        let (sector, sectors) = if flush { (0, 0) } else { (sector, sectors) };
        if !flush && sectors == 0 {
            return Err(self.err(
                line,
                "sectors",
                format!(
                    "a {} request must cover at least 1 sector, found 0",
                    op.code()
                ),
            ));
        }
        if sector.checked_add(u64::from(sectors)).is_none() {
            return Err(self.err(
                line,
                "sector",
                "sector + sectors overflows a 64-bit address",
            ));
        }
        let pid = match c.pid {
            Some(i) => {
                let t = self.field(i, "pid", line)?;
                if t.is_empty() {
                    None
                } else {
                    Some(
                        parse_uint::<u32>(t, "a process id (unsigned 32-bit integer)")
                            .map_err(|m| self.err(line, "pid", m))?,
                    )
                }
            }
            None => None,
        };
        let sync = match c.sync {
            Some(i) => {
                let t = self.field(i, "sync", line)?;
                match t.to_ascii_lowercase().as_str() {
                    "" => None,
                    "1" | "true" => Some(true),
                    "0" | "false" => Some(false),
                    _ => {
                        return Err(self.err(
                            line,
                            "sync",
                            format!("expected 0, 1, true or false, found `{t}`"),
                        ))
                    }
                }
            }
            None => None,
        };
        let process = match c.process {
            Some(i) => {
                let t = self.field(i, "process", line)?;
                if t.is_empty() {
                    None
                } else if let Some(&id) = self.process_ids.get(t) {
                    Some(id)
                } else {
                    let id = u32::try_from(self.processes.len()).map_err(|_| {
                        self.err(line, "process", "too many distinct process names")
                    })?;
                    let name = t.to_string();
                    self.processes.push(name.clone());
                    self.process_ids.insert(name, id);
                    Some(id)
                }
            }
            None => None,
        };
        // Only now is the record accepted: remember its time.
        let mut prev_text = std::mem::take(&mut self.prev_time_text);
        prev_text.clear();
        prev_text.push_str(self.field(c.time, time_name, line)?);
        self.prev_time_text = prev_text;
        self.prev_time = Some((time_ns, line));
        Ok(TraceRecord {
            line,
            time_ns,
            op,
            sector,
            sectors,
            pid,
            process,
            sync,
        })
    }

    /// Number of distinct process names seen so far.
    pub fn process_count(&self) -> usize {
        self.processes.len()
    }

    /// Name of the time column in the header (`time_s`, `time_ms`, `time_us`
    /// or `time_ns`).
    pub fn time_column(&self) -> &'static str {
        self.time_name
    }
}

impl TraceReader for NativeCsvReader {
    fn next_record(&mut self) -> Option<Result<TraceRecord>> {
        if self.done {
            return None;
        }
        match self.read_next() {
            Ok(false) => {
                self.done = true;
                None
            }
            Ok(true) => Some(self.parse_record()),
            Err(e) => Some(Err(e)),
        }
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn process_name(&self, id: u32) -> &str {
        self.processes.get(id as usize).map_or("", String::as_str)
    }

    fn format_name(&self) -> &'static str {
        "native-csv"
    }
}

impl Iterator for NativeCsvReader {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

/// Parses an unsigned integer, describing `expected` on failure.
fn parse_uint<T: std::str::FromStr>(text: &str, expected: &str) -> std::result::Result<T, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("expected {expected}, found `{text}`"));
    }
    text.parse::<T>()
        .map_err(|_| format!("expected {expected}, found `{text}` (out of range)"))
}

/// Parses a non-negative decimal time in a unit `10^digits` ns wide into
/// whole nanoseconds, exactly, rounding half up at the first dropped digit.
/// `digits` = 0 (ns) accepts integers only.
fn parse_time(text: &str, digits: u32) -> std::result::Result<Ns, String> {
    let expected = if digits == 0 {
        "a non-negative integer number of nanoseconds"
    } else {
        "a non-negative decimal number"
    };
    let bad = || format!("expected {expected}, found `{text}`");
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => {
            if digits == 0 {
                return Err(bad());
            }
            (i, f)
        }
        None => (text, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
        return Err(bad());
    }
    let too_big = || format!("time `{text}` is too large (more than 2^64 ns)");
    let mut ns: u64 = 0;
    for b in int.bytes() {
        ns = ns
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_big)?;
    }
    let fb = frac.as_bytes();
    for k in 0..digits as usize {
        let d = fb.get(k).map_or(0, |b| u64::from(b - b'0'));
        ns = ns
            .checked_mul(10)
            .and_then(|v| v.checked_add(d))
            .ok_or_else(too_big)?;
    }
    if fb.get(digits as usize).is_some_and(|&b| b >= b'5') {
        ns = ns.checked_add(1).ok_or_else(too_big)?;
    }
    Ok(ns)
}
