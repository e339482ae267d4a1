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
//! | `done_s` / `done_ms` / `done_us` / `done_ns` | no (at most one) | recorded completion time, same unit rules and origin as the time column |
//! | `device` | no | device id (u32) |
//! | `flags` | no | letters: `F` FUA, `P` preflush, `M` metadata, `A` read-ahead, `E` secure, `X` failed |
//!
//! Fields are separated by commas and trimmed; a field may be quoted with
//! `"` (`""` inside for a quote) but not span lines. Blank lines and lines
//! starting with `#` are skipped; lines may end in CRLF; the last line may
//! lack its newline. Times must not decrease. Empty
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
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::{TraceReader, TraceRecord};
use crate::error::{Error, Result};
use mmcsim_types::{Ns, Op};

/// Every column name the format accepts.
const VALID_COLUMNS: &str =
    "time_s, time_ms, time_us, time_ns, op, sector, sectors, pid, process, sync, done_s, done_ms, done_us, done_ns, device, flags";
/// The accepted time columns.
const TIME_COLUMNS: &str = "time_s, time_ms, time_us or time_ns";

/// The most columns a valid header can name: each of the ten kinds of
/// column (one time column, at most one completion column, and the eight
/// others) at most once. The fast path reads up to this many fields.
const MAX_COLUMNS: usize = 10;

/// A line split by the fast path of [`NativeCsvReader::next_record`].
struct SplitLine<'a> {
    /// The line, without its line break.
    line: &'a [u8],
    /// The value of each field of 1 to 19 digits alone.
    values: [u64; MAX_COLUMNS],
    /// Where each field is in `line` (untrimmed).
    spans: [(usize, usize); MAX_COLUMNS],
    /// Bit `i`: field `i` is not 1 to 19 digits alone.
    special: u32,
}

impl<'a> SplitLine<'a> {
    /// Whether field `i` is 1 to 19 digits alone (its value in `values`).
    #[inline(always)]
    fn plain(&self, i: usize) -> bool {
        self.special & (1 << i) == 0
    }

    /// Field `i`, trimmed.
    #[inline(always)]
    fn field(&self, i: usize) -> &'a [u8] {
        let (start, end) = self.spans[i];
        trim_blanks(&self.line[start..end])
    }

    /// Field `i` as a number: `Some(None)` when empty, `Some(Some(v))` for
    /// 1 to 19 digits, `None` for anything else.
    #[inline(always)]
    fn number(&self, i: usize) -> Option<Option<u64>> {
        if self.plain(i) {
            return Some(Some(self.values[i]));
        }
        let f = self.field(i);
        if f.is_empty() {
            Some(None)
        } else {
            plain_uint(f).map(Some)
        }
    }

    /// Field `i` as an optional 32-bit id, as [`SplitLine::number`].
    #[inline(always)]
    fn id(&self, i: usize) -> Option<Option<u32>> {
        match self.number(i)? {
            Some(v) => Some(Some(u32::try_from(v).ok()?)),
            None => Some(None),
        }
    }
}

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
    done: Option<usize>,
    device: Option<usize>,
    flags: Option<usize>,
}

/// What a column holds, for [`NativeCsvReader::quick_record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Role {
    Time,
    Op,
    Sector,
    Sectors,
    Pid,
    Sync,
    Done,
    Device,
}

/// The number of [`Role`]s.
const ROLES: usize = 8;

/// `10^i` for `i` in `0..=19` (all that fit a `u64`).
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// The value of the 0 to 19 digits at `text[at..]`, how many there are
/// and the byte after them, read eight bytes at a time. `None` when fewer
/// than eight bytes remain where it reads, or for more than 19 digits.
#[inline(always)]
fn digits_at(text: &[u8], at: usize) -> Option<(u64, usize, u8)> {
    let word = u64::from_le_bytes(*text.get(at..)?.first_chunk::<8>()?);
    let x = word ^ ZEROS;
    let marks = non_digits(x);
    if marks == 0 {
        return long_digits(text, at);
    }
    let len = marks.trailing_zeros() as usize / 8;
    Some((swar_digits(x, len), len, (word >> (8 * len)) as u8))
}

/// `b'0'` in each byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The high bit of each byte of `x` (bytes minus `b'0'`) that is not a
/// digit, and maybe of bytes after one: a byte above 9 gets its high bit
/// set (a carry out of it only reaches bytes after it), so the lowest
/// marked byte is the first non-digit.
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080
}

/// [`digits_at`] for a field of eight digits or more.
#[cold]
#[inline(never)]
fn long_digits(text: &[u8], at: usize) -> Option<(u64, usize, u8)> {
    let mut value = 0u64;
    let mut digits = 0;
    loop {
        let word = u64::from_le_bytes(*text.get(at + digits..)?.first_chunk::<8>()?);
        let x = word ^ ZEROS;
        let len = non_digits(x).trailing_zeros() as usize / 8;
        let part = if len == 8 {
            eight_digits(x)
        } else {
            swar_digits(x, len)
        };
        value = value.wrapping_mul(POW10[len]).wrapping_add(part);
        digits += len;
        if len < 8 {
            // More than 19 digits are not plain.
            return (digits <= 19).then_some((value, digits, (word >> (8 * len)) as u8));
        }
        if digits > 16 {
            return None;
        }
    }
}

/// The value of the first `len` (0 to 7) bytes of `x` (little-endian),
/// each a digit 0 to 9.
#[inline(always)]
fn swar_digits(x: u64, len: usize) -> u64 {
    // The digits to the top bytes (leading zeros below; none for 0).
    eight_digits((x << 8) << (56 - 8 * len))
}

/// The value of the eight bytes of `x` (little-endian), each a digit 0 to
/// 9: pairs, quads and the eight combined.
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    let v = (x & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561) >> 8;
    let v = (v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001) >> 32
}

/// Streaming reader of the native CSV format.
///
/// Memory is independent of the trace length: one reused line buffer, one
/// reused field buffer, and a table of the distinct process names seen.
pub struct NativeCsvReader {
    input: BufReader<Box<dyn Read>>,
    path: PathBuf,
    /// 1-based number of the line last read.
    line_no: u64,
    /// The raw line (reused).
    buf: Vec<u8>,
    /// The current record's fields of a line with quotes, trimmed and
    /// unquoted, back to back (reused); `ends[i]` is where field `i` ends.
    fields: Vec<u8>,
    ends: Vec<usize>,
    /// Field `i` of the current record is `spans[i]` of `buf` (a line
    /// without quotes: no copy) or, with `unquoted`, of `fields`.
    spans: Vec<(usize, usize)>,
    unquoted: bool,
    cols: Columns,
    ncols: usize,
    /// What each column holds, when every column is one the quick path
    /// reads (no `process` or `flags` column); `quick_cols` is then the
    /// number of columns, else 0 (no quick path).
    roles: [Role; MAX_COLUMNS],
    quick_cols: usize,
    /// The quick path's header has a `sync`, `done_*` or `device` column.
    quick_extra: bool,
    header_line: u64,
    /// Name of the time column and the power of ten from its unit to ns.
    time_name: &'static str,
    time_digits: u32,
    /// `10^time_digits`.
    time_scale: u64,
    /// Name of the completion column, if any, and its power of ten.
    done_name: &'static str,
    done_digits: u32,
    /// `10^done_digits`.
    done_scale: u64,
    processes: Vec<String>,
    process_ids: BTreeMap<String, u32>,
    /// Previous record's time (ns), its text and line.
    prev_time: Option<(Ns, u64)>,
    /// (The time field's bytes: valid UTF-8, the record was accepted.)
    /// Unused while `prev_time_is_integer`.
    prev_time_text: Vec<u8>,
    /// The previous record's time field was a whole number in the time
    /// column's unit without leading zeros: its text is the decimal of
    /// that time over `time_scale`, not copied (the fast path's case).
    prev_time_is_integer: bool,
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
        NativeCsvReader::from_input(
            BufReader::new(Box::new(reader) as Box<dyn Read>),
            path_for_messages.as_ref(),
        )
    }

    /// Reads a trace from `input` (the tests choose its buffer size: a
    /// line is read in place only when it lies wholly in the buffer).
    fn from_input(mut input: BufReader<Box<dyn Read>>, path: &Path) -> Result<NativeCsvReader> {
        super::common::skip_bom(&mut input).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut this = NativeCsvReader {
            input,
            path: path.to_path_buf(),
            line_no: 0,
            buf: Vec::new(),
            fields: Vec::new(),
            ends: Vec::new(),
            spans: Vec::new(),
            unquoted: false,
            cols: Columns::default(),
            ncols: 0,
            roles: [Role::Time; MAX_COLUMNS],
            quick_cols: 0,
            quick_extra: false,
            header_line: 1,
            time_name: "time_ns",
            time_digits: 0,
            time_scale: 1,
            done_name: "",
            done_digits: 0,
            done_scale: 1,
            processes: Vec::new(),
            process_ids: BTreeMap::new(),
            prev_time: None,
            prev_time_text: Vec::new(),
            prev_time_is_integer: false,
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

    /// Reads the next non-blank, non-comment line and splits it into
    /// fields. `Ok(false)` at the end of input.
    fn read_next(&mut self) -> Result<bool> {
        loop {
            self.buf.clear();
            let n = match super::common::read_line_bounded(&mut self.input, &mut self.buf) {
                Ok(super::common::LineRead::Line) => 1,
                Ok(super::common::LineRead::Eof) => 0,
                Ok(super::common::LineRead::TooLong) => {
                    self.done = true;
                    let no = self.line_no + 1;
                    return Err(super::common::lone_cr_error(&self.path, no, &self.buf)
                        .unwrap_or_else(|| super::common::line_too_long(&self.path, no)));
                }
                Err(source) => {
                    self.done = true;
                    return Err(Error::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            };
            if n == 0 {
                return Ok(false);
            }
            self.line_no += 1;
            if let Some(e) = super::common::lone_cr_error(&self.path, self.line_no, &self.buf) {
                self.done = true;
                return Err(e);
            }
            let line = self.buf.trim_ascii();
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            self.spans.clear();
            if !line.contains(&b'"') {
                // The common case: fields are the trimmed pieces between
                // commas, read in place.
                let base = line.as_ptr() as usize - self.buf.as_ptr() as usize;
                let mut start = base;
                for piece in line.split(|&b| b == b',') {
                    let lead = piece.len() - piece.trim_ascii_start().len();
                    let field = piece.trim_ascii();
                    self.spans.push((start + lead, start + lead + field.len()));
                    start += piece.len() + 1;
                }
                self.unquoted = false;
                return Ok(true);
            }
            if let Err(e) = split_fields(line, &mut self.fields, &mut self.ends) {
                return Err(self.err(self.line_no, "record", e.to_string()));
            }
            let mut start = 0;
            for &end in &self.ends {
                self.spans.push((start, end));
                start = end;
            }
            self.unquoted = true;
            return Ok(true);
        }
    }

    /// Field `i` of the current record, as bytes.
    fn get(&self, i: usize) -> Option<&[u8]> {
        let (start, end) = *self.spans.get(i)?;
        Some(if self.unquoted {
            &self.fields[start..end]
        } else {
            &self.buf[start..end]
        })
    }

    fn line(&self) -> u64 {
        self.line_no
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

    /// Field `idx` of the current record as text (fields are already trimmed).
    fn field(&self, idx: usize, name: &str, line: u64) -> Result<&str> {
        let raw = self.get(idx).unwrap_or_default();
        std::str::from_utf8(raw).map_err(|_| self.err(line, name, "expected UTF-8 text"))
    }

    fn parse_record(&mut self) -> Result<TraceRecord> {
        let line = self.line();
        if self.spans.len() != self.ncols {
            return Err(self.err(
                line,
                "fields",
                format!(
                    "expected {} fields (as in the header at line {}), found {}",
                    self.ncols,
                    self.header_line,
                    self.spans.len()
                ),
            ));
        }
        let c = self.cols;
        let time_name = self.time_name;
        let time_ns = match plain_time(self.get(c.time).unwrap_or_default(), self.time_digits) {
            Some(t) => t,
            None => {
                let time_text = self.field(c.time, time_name, line)?;
                parse_time(time_text, self.time_digits)
                    .map_err(|m| self.err(line, time_name, m.to_string()))?
            }
        };
        if let Some((prev, prev_line)) = self.prev_time {
            if time_ns < prev {
                let time_text = self.field(c.time, time_name, line)?;
                return Err(self.err(
                    line,
                    time_name,
                    format!(
                        "time goes backwards: {time_text} is earlier than {} at line {prev_line}; expected non-decreasing times",
                        self.prev_time_text()
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
        let sector = match plain_uint(self.get(c.sector).unwrap_or_default()) {
            Some(v) => v,
            None => {
                let sector_text = self.field(c.sector, "sector", line)?;
                if flush && sector_text.is_empty() {
                    0
                } else {
                    parse_uint::<u64>(
                        sector_text,
                        "a sector number (unsigned integer, 512-byte units)",
                    )
                    .map_err(|m| self.err(line, "sector", m.to_string()))?
                }
            }
        };
        let sectors = match plain_uint(self.get(c.sectors).unwrap_or_default())
            .and_then(|v| u32::try_from(v).ok())
        {
            Some(v) => v,
            None => {
                let sectors_text = self.field(c.sectors, "sectors", line)?;
                if flush && sectors_text.is_empty() {
                    0
                } else {
                    parse_uint::<u32>(sectors_text, "a sector count (unsigned 32-bit integer)")
                        .map_err(|m| self.err(line, "sectors", m.to_string()))?
                }
            }
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
        let plain_pid = c.pid.and_then(|i| {
            plain_uint(self.get(i).unwrap_or_default()).and_then(|v| u32::try_from(v).ok())
        });
        let pid = match c.pid {
            Some(_) if plain_pid.is_some() => plain_pid,
            Some(i) => {
                let t = self.field(i, "pid", line)?;
                if t.is_empty() {
                    None
                } else {
                    Some(
                        parse_uint::<u32>(t, "a process id (unsigned 32-bit integer)")
                            .map_err(|m| self.err(line, "pid", m.to_string()))?,
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
        let done_ns = match c.done {
            Some(i) => {
                let name = self.done_name;
                let t = self.field(i, name, line)?;
                if t.is_empty() {
                    None
                } else {
                    let d = parse_time(t, self.done_digits)
                        .map_err(|m| self.err(line, name, m.to_string()))?;
                    if d < time_ns {
                        let time_text = self.field(c.time, self.time_name, line)?;
                        return Err(self.err(
                            line,
                            name,
                            format!(
                                "{t} is before the issue time {} = {time_text}: a request completes after it is issued (both columns count from the same origin)",
                                self.time_name
                            ),
                        ));
                    }
                    Some(d)
                }
            }
            None => None,
        };
        let device = match c.device {
            Some(i) => {
                let t = self.field(i, "device", line)?;
                if t.is_empty() {
                    None
                } else {
                    Some(
                        parse_uint::<u32>(t, "a device id (unsigned 32-bit integer)")
                            .map_err(|m| self.err(line, "device", m.to_string()))?,
                    )
                }
            }
            None => None,
        };
        let mut flags = 0u8;
        if let Some(i) = c.flags {
            let t = self.field(i, "flags", line)?;
            for ch in t.chars() {
                match TraceRecord::FLAG_LETTERS.iter().find(|(_, l)| *l == ch) {
                    Some((bit, _)) => flags |= bit,
                    None => {
                        return Err(self.err(
                            line,
                            "flags",
                            format!(
                            "unknown flag `{ch}` in `{t}`: expected letters from F, P, M, A, E, X"
                        ),
                        ))
                    }
                }
            }
        }
        // Only now is the record accepted: remember its time.
        let mut prev_text = std::mem::take(&mut self.prev_time_text);
        prev_text.clear();
        prev_text.extend_from_slice(self.get(c.time).unwrap_or_default());
        self.prev_time_text = prev_text;
        self.prev_time_is_integer = false;
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
            done_ns,
            fetch_ns: None,
            device_start_ns: None,
            device,
            flags,
        })
    }

    /// The record of the line at the start of `text` (which must not
    /// start with white space or `#`; the record's `line` is left 0), the
    /// text of its time field unless that is a whole number without
    /// leading zeros, and the line's length with its `\n`, when the line
    /// ends in `text` and every field is in its plain form and the record
    /// is valid: the same record [`NativeCsvReader::parse_record`] makes of
    /// it, without its copies and UTF-8 checks. `None` for anything else
    /// (quotes, an unknown process name, a field needing the checked
    /// parsers, any error, no line end in `text`), which the general path
    /// then reads, changing nothing here.
    #[allow(clippy::type_complexity)]
    fn fast_record<'a>(&self, text: &'a [u8]) -> Option<(TraceRecord, Option<&'a [u8]>, usize)> {
        // One pass splits the line at commas and reads each field that is
        // 1 to 19 digits alone (most are) into `values`; any other field
        // (one with blanks, a CR before the line break, letters, quotes)
        // is marked in `special` and read below from its span.
        let ncols = self.ncols;
        if ncols > MAX_COLUMNS {
            return None; // not from a valid header
        }
        let mut split = SplitLine {
            line: &[],
            values: [0; MAX_COLUMNS],
            spans: [(0, 0); MAX_COLUMNS],
            special: 0,
        };
        let mut at = 0;
        let mut n = 0;
        loop {
            if n == ncols {
                return None; // more fields than columns
            }
            let start = at;
            let mut value = 0u64;
            let mut stop = *text.get(at)?;
            while stop.wrapping_sub(b'0') <= 9 {
                // 19 digits cannot overflow; more are not plain.
                value = value
                    .wrapping_mul(10)
                    .wrapping_add(u64::from(stop.wrapping_sub(b'0')));
                at += 1;
                stop = *text.get(at)?;
            }
            // 1 to 19 digits: `digits - 1` (wrapping) below 19.
            let digits = at - start;
            if (stop != b',' && stop != b'\n') || digits.wrapping_sub(1) >= 19 {
                while stop != b',' && stop != b'\n' {
                    at += 1;
                    stop = *text.get(at)?;
                }
                split.special |= 1 << n;
            }
            split.values[n] = value;
            split.spans[n] = (start, at);
            n += 1;
            at += 1;
            if stop == b'\n' {
                break;
            }
        }
        if n != ncols || at > super::common::MAX_LINE_BYTES {
            return None;
        }
        split.line = &text[..at - 1];
        let split = &split;
        let c = &self.cols;
        let (time_ns, time_text) = if split.plain(c.time) {
            let (start, end) = split.spans[c.time];
            let integer = end - start == 1 || split.line[start] != b'0';
            (
                split.values[c.time].checked_mul(self.time_scale)?,
                (!integer).then(|| split.field(c.time)),
            )
        } else {
            let f = split.field(c.time);
            (plain_decimal_time(f, self.time_digits)?, Some(f))
        };
        if self.prev_time.is_some_and(|(prev, _)| time_ns < prev) {
            return None;
        }
        let op = match split.field(c.op) {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            b"D" | b"d" => Op::Discard,
            b"F" | b"f" => Op::Flush,
            _ => return None,
        };
        // `None`: the field is empty (allowed for a flush only).
        let sector = split.number(c.sector)?;
        let sectors = match split.number(c.sectors)? {
            Some(v) => Some(u32::try_from(v).ok()?),
            None => None,
        };
        let (sector, sectors) = if op == Op::Flush {
            (0, 0)
        } else {
            (sector?, sectors?)
        };
        if (op != Op::Flush && sectors == 0) || sector.checked_add(u64::from(sectors)).is_none() {
            return None;
        }
        let pid = match c.pid {
            Some(i) => split.id(i)?,
            None => None,
        };
        let process = match c.process.map(|i| split.field(i)) {
            Some(f) if !f.is_empty() => {
                if f.contains(&b'"') {
                    return None;
                }
                Some(*self.process_ids.get(std::str::from_utf8(f).ok()?)?)
            }
            _ => None,
        };
        let sync = match c.sync.map(|i| split.field(i)) {
            None | Some(b"") => None,
            Some(b"1") => Some(true),
            Some(b"0") => Some(false),
            Some(t) if t.eq_ignore_ascii_case(b"true") => Some(true),
            Some(t) if t.eq_ignore_ascii_case(b"false") => Some(false),
            Some(_) => return None,
        };
        let done_ns = match c.done {
            Some(i) if split.plain(i) => Some(split.values[i].checked_mul(self.done_scale)?),
            Some(i) if !split.field(i).is_empty() => {
                Some(plain_decimal_time(split.field(i), self.done_digits)?)
            }
            _ => None,
        };
        if done_ns.is_some_and(|d| d < time_ns) {
            return None; // the general path words the error
        }
        let device = match c.device {
            Some(i) => split.id(i)?,
            None => None,
        };
        let mut flags = 0u8;
        for &b in c.flags.map(|i| split.field(i)).unwrap_or_default() {
            let (bit, _) = TraceRecord::FLAG_LETTERS
                .iter()
                .find(|(_, l)| b.is_ascii() && *l == char::from(b))?;
            flags |= bit;
        }
        Some((
            TraceRecord {
                line: 0,
                time_ns,
                op,
                sector,
                sectors,
                pid,
                process,
                sync,
                done_ns,
                fetch_ns: None,
                device_start_ns: None,
                device,
                flags,
            },
            time_text,
            at,
        ))
    }

    /// The record of the line at the start of `text` when that line is in
    /// the plainest form: the header planned a quick path
    /// ([`NativeCsvReader::plan_quick_path`]), the line ends in `text` with
    /// `\n` (no CR), each field is exactly 1 to 19 digits (the op field:
    /// one of the op letters; `pid`, `sync`, `done_*` and `device` may be
    /// empty), the time has no leading zero, and the record is valid. Then
    /// it is the record [`NativeCsvReader::fast_record`] makes of it
    /// (the record's `line` left 0, the time field's text a whole number
    /// without leading zeros), with the line's length with its `\n`.
    /// `None` for anything else, which the other paths then read.
    #[inline]
    fn quick_record(&self, text: &[u8]) -> Option<(TraceRecord, usize)> {
        let roles = &self.roles[..self.quick_cols];
        // Each field's value and digit count, by role (0 digits: empty or
        // absent).
        let mut values = [0u64; ROLES];
        let mut lens = [0u8; ROLES];
        let mut op = Op::Read;
        let mut at = 0;
        let mut fields = roles.iter();
        loop {
            let role = *fields.next()?; // more fields than columns
            let stop = if role == Role::Op {
                op = match *text.get(at)? {
                    b'R' | b'r' => Op::Read,
                    b'W' | b'w' => Op::Write,
                    b'D' | b'd' => Op::Discard,
                    b'F' | b'f' => Op::Flush,
                    _ => return None,
                };
                at += 1;
                *text.get(at)?
            } else {
                let (value, digits, stop) = digits_at(text, at)?;
                at += digits;
                values[role as usize] = value;
                lens[role as usize] = digits as u8;
                stop
            };
            at += 1;
            match stop {
                b',' => {}
                b'\n' if fields.len() == 0 => break,
                _ => return None, // too few fields, or not a plain field
            }
        }
        let get = |role: Role| (lens[role as usize], values[role as usize]);
        let (time_len, time) = get(Role::Time);
        // Empty, or a leading zero (its text is then kept: not read here).
        if time_len == 0 || time < POW10[usize::from(time_len - 1)] && time_len > 1 {
            return None;
        }
        let [sector, sectors, pid, device] =
            [Role::Sector, Role::Sectors, Role::Pid, Role::Device].map(|r| values[r as usize]);
        // An absent or empty field's value is 0: one test refuses a count,
        // a pid or a device id beyond 32 bits.
        if at > super::common::MAX_LINE_BYTES
            || lens[Role::Sector as usize] == 0
            || lens[Role::Sectors as usize] == 0
            || (sectors | pid | device) > u64::from(u32::MAX)
        {
            return None;
        }
        let time_ns = time.checked_mul(self.time_scale)?;
        if self.prev_time.is_some_and(|(prev, _)| time_ns < prev) {
            return None;
        }
        let (sector, sectors) = if op == Op::Flush {
            (0, 0)
        } else {
            if sectors == 0 {
                return None;
            }
            sector.checked_add(sectors)?;
            (sector, sectors as u32)
        };
        let id = |role: Role, v: u64| (lens[role as usize] > 0).then_some(v as u32);
        let pid = id(Role::Pid, pid);
        let (sync, done_ns, device) = if self.quick_extra {
            let sync = match get(Role::Sync) {
                (0, _) => None,
                (1, v) if v <= 1 => Some(v == 1),
                _ => return None,
            };
            let done_ns = match get(Role::Done) {
                (0, _) => None,
                (_, v) => Some(v.checked_mul(self.done_scale)?).filter(|&d| d >= time_ns),
            };
            if get(Role::Done).0 != 0 && done_ns.is_none() {
                return None; // before the issue: the general path words the error
            }
            (sync, done_ns, id(Role::Device, device))
        } else {
            (None, None, None)
        };
        Some((
            TraceRecord {
                line: 0,
                time_ns,
                op,
                sector,
                sectors,
                pid,
                process: None,
                sync,
                done_ns,
                fetch_ns: None,
                device_start_ns: None,
                device,
                flags: 0,
            },
            at,
        ))
    }

    /// [`TraceReader::next_record`] for a line the quick path does not
    /// take. The fast path: a line wholly in the input's buffer, read there
    /// (no copy) by `fast_record`. A line it does not take (one that spans
    /// the buffer's end, lacks its final newline, or is anything but a
    /// plain valid record) is left unread for the general path below,
    /// which reads it as it always has and words every error.
    #[inline(never)]
    fn next_record_slow(&mut self) -> Option<Result<TraceRecord>> {
        loop {
            let buffered = self.input.buffer();
            let Some(&first) = buffered.first() else {
                break;
            };
            if first <= b' ' || first == b'#' {
                // A blank or comment line is skipped here; a record after
                // white space is left to the general path.
                let Some(newline) = memchr::memchr(b'\n', buffered) else {
                    break;
                };
                if newline >= super::common::MAX_LINE_BYTES {
                    break;
                }
                let line = buffered[..newline].trim_ascii();
                if line.is_empty() || line[0] == b'#' {
                    self.line_no += 1;
                    self.input.consume(newline + 1);
                    continue;
                }
                break;
            }
            let Some((mut rec, time_text, used)) = self.fast_record(buffered) else {
                break;
            };
            self.line_no += 1;
            rec.line = self.line_no;
            self.prev_time_is_integer = time_text.is_none();
            if let Some(text) = time_text {
                self.prev_time_text.clear();
                self.prev_time_text.extend_from_slice(text);
            }
            self.prev_time = Some((rec.time_ns, self.line_no));
            self.input.consume(used);
            return Some(Ok(rec));
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

    /// The text of the previous accepted record's time field.
    fn prev_time_text(&self) -> String {
        match self.prev_time {
            Some((ns, _)) if self.prev_time_is_integer => (ns / self.time_scale).to_string(),
            _ => String::from_utf8_lossy(&self.prev_time_text).into_owned(),
        }
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
        // Most lines are plain: the quick path first (it refuses blank and
        // comment lines, and an empty buffer); the others are read out of
        // line.
        if let Some((mut rec, used)) = self.quick_record(self.input.buffer()) {
            self.line_no += 1;
            rec.line = self.line_no;
            self.prev_time_is_integer = true;
            self.prev_time = Some((rec.time_ns, self.line_no));
            self.input.consume(used);
            return Some(Ok(rec));
        }
        self.next_record_slow()
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

    fn time_unit(&self) -> Option<super::TimeUnit> {
        Some(match self.time_digits {
            9 => super::TimeUnit::S,
            6 => super::TimeUnit::Ms,
            3 => super::TimeUnit::Us,
            _ => super::TimeUnit::Ns,
        })
    }
}

/// Writes records as native CSV with the columns
/// `time_ns,op,sector,sectors,pid,process,sync,done_ns,device,flags`
/// (unset optional fields are left empty; process names are quoted when
/// needed, control characters become spaces, and an empty name reads back
/// as no name).
///
/// Written by hand rather than with the `csv` crate's writer: the reader
/// trims unquoted fields, so a name with leading or trailing blanks must be
/// quoted, and that writer quotes a field only for delimiters, quotes and
/// line breaks.
#[derive(Debug)]
pub struct NativeCsvWriter<W: Write> {
    out: W,
    line: String,
}

/// The header [`NativeCsvWriter`] writes.
pub const NATIVE_HEADER: &str = "time_ns,op,sector,sectors,pid,process,sync,done_ns,device,flags";

impl<W: Write> NativeCsvWriter<W> {
    /// A writer on `out`; writes the header row.
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(NATIVE_HEADER.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(NativeCsvWriter {
            out,
            line: String::new(),
        })
    }

    /// Writes one record; `process` is the name of `rec.process`.
    pub fn write(&mut self, rec: &TraceRecord, process: Option<&str>) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let l = &mut self.line;
        l.clear();
        let _ = write!(l, "{},{},", rec.time_ns, rec.op.code());
        if rec.op != Op::Flush {
            let _ = write!(l, "{},{}", rec.sector, rec.sectors);
        } else {
            l.push(',');
        }
        l.push(',');
        if let Some(p) = rec.pid {
            let _ = write!(l, "{p}");
        }
        l.push(',');
        if let Some(name) = process.filter(|_| rec.process.is_some()) {
            let clean: String = name
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            if clean.contains([',', '"']) || clean.trim() != clean {
                l.push('"');
                l.push_str(&clean.replace('"', "\"\""));
                l.push('"');
            } else {
                l.push_str(&clean);
            }
        }
        l.push(',');
        if let Some(s) = rec.sync {
            l.push(if s { '1' } else { '0' });
        }
        l.push(',');
        if let Some(d) = rec.done_ns {
            let _ = write!(l, "{d}");
        }
        l.push(',');
        if let Some(d) = rec.device {
            let _ = write!(l, "{d}");
        }
        l.push(',');
        for (bit, letter) in TraceRecord::FLAG_LETTERS {
            if rec.flags & bit != 0 {
                l.push(letter);
            }
        }
        l.push('\n');
        self.out.write_all(l.as_bytes())
    }

    /// Flushes and returns the output.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Streams every record of `reader` to `out` as native CSV (see
/// [`NativeCsvWriter`]), stopping at the first error; returns the number of
/// records written. A failed write is an [`Error::Output`].
pub fn write_native_csv<W: Write>(reader: &mut dyn TraceReader, out: W) -> Result<u64> {
    let io = |source| Error::Output { source };
    let mut w = NativeCsvWriter::new(out).map_err(io)?;
    let mut n = 0;
    while let Some(rec) = reader.next_record() {
        let rec = rec?;
        let name = rec.process.map(|p| reader.process_name(p));
        w.write(&rec, name).map_err(io)?;
        n += 1;
    }
    w.into_inner().map_err(io)?;
    Ok(n)
}

impl Iterator for NativeCsvReader {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

/// Why a line or a field of the native CSV was rejected; the reader puts
/// it in an [`Error::Parse`] naming the file, line and field.
#[derive(Debug, thiserror::Error)]
enum FieldError {
    /// A quoted field lacks its closing quote on its line.
    #[error("unterminated quoted field: expected a closing `\"`")]
    UnterminatedQuote,
    /// Something other than a comma follows a closing quote.
    #[error("text after a closing quote: expected `,`")]
    TextAfterQuote,
    /// The field is not of the expected form.
    #[error("expected {expected}, found `{found}`")]
    Expected {
        /// What the field should hold.
        expected: &'static str,
        /// The field's text.
        found: String,
    },
    /// A whole number too large for the field.
    #[error("expected {expected}, found `{found}` (out of range)")]
    OutOfRange {
        /// What the field should hold.
        expected: &'static str,
        /// The field's text.
        found: String,
    },
    /// A time beyond 2^64 ns.
    #[error("time `{0}` is too large (more than 2^64 ns)")]
    TimeTooLarge(String),
}

/// Splits one line (without its terminator) at commas into `fields` /
/// `ends`, trimming each field and removing `"` quoting.
///
/// Hand-rolled rather than the `csv` crate: this format is line-oriented
/// (a quoted field may not span lines, so an error names one line and
/// reading goes on with the next) and trims blanks around quoted fields,
/// which the crate does not; and on the benchmark's lines the crate with
/// trimming split about 3 M lines/s against about 8 M for this loop.
fn split_fields(
    line: &[u8],
    fields: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> std::result::Result<(), FieldError> {
    fields.clear();
    ends.clear();
    let mut rest = line;
    loop {
        let t = rest.trim_ascii_start();
        if let Some(q) = t.strip_prefix(b"\"") {
            let mut i = 0;
            loop {
                match q.get(i) {
                    None => return Err(FieldError::UnterminatedQuote),
                    Some(b'"') if q.get(i + 1) == Some(&b'"') => {
                        fields.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&b) => {
                        fields.push(b);
                        i += 1;
                    }
                }
            }
            let after = q[i..].trim_ascii_start();
            match after.first() {
                None => {
                    ends.push(fields.len());
                    return Ok(());
                }
                Some(b',') => {
                    ends.push(fields.len());
                    rest = &after[1..];
                }
                Some(_) => return Err(FieldError::TextAfterQuote),
            }
        } else {
            let (field, next) = match t.iter().position(|&b| b == b',') {
                Some(p) => (&t[..p], Some(&t[p + 1..])),
                None => (t, None),
            };
            fields.extend_from_slice(field.trim_ascii_end());
            ends.push(fields.len());
            match next {
                Some(n) => rest = n,
                None => return Ok(()),
            }
        }
    }
}

/// The value of `b` when it is 1 to 19 ASCII digits (then exactly what
/// [`parse_uint`] gives); `None` sends the field through the checked path,
/// which also words the errors.
fn plain_uint(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

/// [`parse_time`] of a time without a decimal point, in a unit `10^digits`
/// ns wide: the same whole nanoseconds, or `None` for anything else
/// (fractions, bad text, overflow), which takes the checked path.
fn plain_time(b: &[u8], digits: u32) -> Option<Ns> {
    plain_uint(b)?.checked_mul(10u64.checked_pow(digits)?)
}

/// [`parse_time`] of a time of ASCII digits with at most one `.`, for the
/// fast path: the same whole nanoseconds, or `None` for anything else
/// (which the checked path then reads and, if bad, words).
fn plain_decimal_time(b: &[u8], digits: u32) -> Option<Ns> {
    if let Some(t) = plain_time(b, digits) {
        return Some(t);
    }
    if b.iter().any(|&c| !c.is_ascii_digit() && c != b'.') {
        return None;
    }
    parse_time(std::str::from_utf8(b).ok()?, digits).ok()
}

/// `b` without the ASCII white space around it, as [`slice::trim_ascii`]
/// (the fast path looks at the end bytes first: fields rarely have any).
#[inline(always)]
fn trim_blanks(b: &[u8]) -> &[u8] {
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) if first <= b' ' || last <= b' ' => b.trim_ascii(),
        _ => b,
    }
}

/// Parses an unsigned integer, describing `expected` on failure.
fn parse_uint<T: std::str::FromStr>(
    text: &str,
    expected: &'static str,
) -> std::result::Result<T, FieldError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FieldError::Expected {
            expected,
            found: text.to_string(),
        });
    }
    text.parse::<T>().map_err(|_| FieldError::OutOfRange {
        expected,
        found: text.to_string(),
    })
}

/// Parses a non-negative decimal time in a unit `10^digits` ns wide into
/// whole nanoseconds, exactly, rounding half up at the first dropped digit.
/// `digits` = 0 (ns) accepts integers only.
fn parse_time(text: &str, digits: u32) -> std::result::Result<Ns, FieldError> {
    let expected = if digits == 0 {
        "a non-negative integer number of nanoseconds"
    } else {
        "a non-negative decimal number"
    };
    let bad = || FieldError::Expected {
        expected,
        found: text.to_string(),
    };
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
    let too_big = || FieldError::TimeTooLarge(text.to_string());
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn reader(text: &str) -> Result<NativeCsvReader> {
        NativeCsvReader::from_reader(Cursor::new(text.as_bytes().to_vec()), "mem.csv")
    }

    fn all(text: &str) -> Vec<Result<TraceRecord>> {
        reader(text).unwrap().collect()
    }

    /// The (line, field, message) of a parse error.
    fn parse_err(e: &Error) -> (u64, String, String) {
        match e {
            Error::Parse {
                line,
                field,
                message,
                ..
            } => (*line, field.clone(), message.clone()),
            other => panic!("not a parse error: {other}"),
        }
    }

    fn manifest_path(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(rel)
    }

    /// Lines without quotes are split in place; with quotes, through the
    /// unquoting copy: both give the same records (blanks around fields,
    /// empty optional fields, a trailing empty field).
    #[test]
    fn unquoted_lines_read_like_quoted_ones() {
        let head = "time_us , op,sector,sectors ,pid,process,flags\n";
        let plain = "1.5, R ,8,  8 ,7, app ,\n 2 ,W,16,8,,,F\n3,F,,,9,,\n";
        let quoted = "\"1.5\",\"R\",\"8\",\"8\",\"7\",\"app\",\"\"\n\
                      \"2\",\"W\",\"16\",\"8\",\"\",\"\",\"F\"\n\
                      \"3\",\"F\",\"\",\"\",\"9\",\"\",\"\"\n";
        let a: Vec<_> = all(&format!("{head}{plain}"))
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let b: Vec<_> = all(&format!("{head}{quoted}"))
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(a.len(), 3);
        assert_eq!(a, b);
        assert_eq!((a[0].time_ns, a[0].sector, a[0].pid), (1_500, 8, Some(7)));
        assert_eq!(a[1].flags, TraceRecord::FUA);
    }

    #[test]
    fn reads_columns_in_any_order_with_optional_fields() {
        let text = "# comment\n\nsync, process ,SECTORS,op,pid,sector,time_ns\n\
                    1,app,8,R,42,1000,5\n \n0,,16,w,,2000,7\n,app,,F,,,9";
        let mut r = reader(text).unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(
            a,
            TraceRecord {
                line: 4,
                time_ns: 5,
                op: Op::Read,
                sector: 1000,
                sectors: 8,
                pid: Some(42),
                process: Some(0),
                sync: Some(true),
                done_ns: None,
                fetch_ns: None,
                device_start_ns: None,
                device: None,
                flags: 0,
            }
        );
        assert_eq!(r.process_name(0), "app");
        let b = r.next_record().unwrap().unwrap();
        assert_eq!(
            (b.line, b.op, b.sector, b.sectors, b.pid, b.process, b.sync),
            (6, Op::Write, 2000, 16, None, None, Some(false))
        );
        let c = r.next_record().unwrap().unwrap();
        assert_eq!(
            (c.line, c.op, c.sector, c.sectors, c.time_ns),
            (7, Op::Flush, 0, 0, 9)
        );
        assert_eq!(c.process, Some(0));
        assert!(r.next_record().is_none());
        assert!(r.next_record().is_none());
        assert_eq!(r.format_name(), "native-csv");
        assert_eq!(r.path(), Path::new("mem.csv"));
        assert_eq!(r.time_column(), "time_ns");
    }

    #[test]
    fn minimal_header_and_crlf() {
        let recs = all("time_ms,op,sector,sectors\r\n1.5,D,0,2048\r\n2,F,0,0\r\n");
        let recs: Vec<_> = recs.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(recs[0].time_ns, 1_500_000);
        assert_eq!((recs[0].op, recs[0].sectors), (Op::Discard, 2048));
        assert_eq!(
            (recs[0].pid, recs[0].process, recs[0].sync),
            (None, None, None)
        );
        assert_eq!(recs[1].op, Op::Flush);
    }

    #[test]
    fn time_units_convert_exactly_rounding_to_nearest() {
        let cases = [
            ("time_s", "1.5", 1_500_000_000),
            ("time_s", "0.000000001", 1),
            ("time_s", "0.0000000014", 1),
            ("time_s", "0.0000000015", 2),
            ("time_s", "12", 12_000_000_000),
            ("time_ms", "0.001", 1_000),
            ("time_ms", "2.0000005", 2_000_001),
            ("time_us", "812.447120", 812_447),
            ("time_us", "812.4475", 812_448),
            ("time_us", ".5", 500),
            ("time_us", "7.", 7_000),
            ("time_ns", "123456789012", 123_456_789_012),
            ("time_s", "18446744073.709551615", u64::MAX),
        ];
        for (col, val, ns) in cases {
            let text = format!("{col},op,sector,sectors\n{val},R,0,8\n");
            let rec = all(&text).remove(0).unwrap();
            assert_eq!(rec.time_ns, ns, "{col} = {val}");
        }
    }

    #[test]
    fn bad_times_are_reported() {
        for (col, val) in [
            ("time_ns", "1.5"),
            ("time_us", "-1"),
            ("time_us", "1e3"),
            ("time_us", "."),
            ("time_us", ""),
            ("time_s", "18446744074"),
        ] {
            let text = format!("{col},op,sector,sectors\n{val},R,0,8\n");
            let e = all(&text).remove(0).unwrap_err();
            let (line, field, msg) = parse_err(&e);
            assert_eq!((line, field.as_str()), (2, col), "{msg}");
            assert!(msg.contains(val), "{msg}");
        }
    }

    #[test]
    fn header_errors() {
        let cases: [(&str, &str, &[&str]); 6] = [
            (
                "time_us,pid,sector,sectors\n",
                "op",
                &["missing required column `op`"],
            ),
            (
                "time_us,time_ms,op,sector,sectors\n",
                "time_ms",
                &[
                    "several time columns",
                    "time_s, time_ms, time_us or time_ns",
                ],
            ),
            (
                "op,sector,sectors\n",
                "time",
                &["no time column", "time_s, time_ms, time_us or time_ns"],
            ),
            (
                "time_us,op,sector,sectors,lba\n",
                "lba",
                &[
                    "unknown column `lba`",
                    "time_s, time_ms, time_us, time_ns, op, sector, sectors, pid, process, sync",
                ],
            ),
            ("time_us,op,op,sector,sectors\n", "op", &["appears twice"]),
            ("# only a comment\n\n", "header", &["expected a header row"]),
        ];
        for (text, field, needles) in cases {
            let e = reader(text).unwrap_err();
            let (line, f, msg) = parse_err(&e);
            assert_eq!(f, field, "{msg}");
            assert_eq!(line, 1, "{msg}");
            for n in needles {
                assert!(msg.contains(n), "{msg:?} lacks {n:?}");
            }
        }
        // line of a header after comments
        let e = reader("# c\n# d\ntime_us,op,sector\n").unwrap_err();
        assert_eq!(parse_err(&e).0, 3);
        assert!(
            e.to_string().starts_with("mem.csv:3: field `sectors`"),
            "{e}"
        );
    }

    #[test]
    fn record_errors_name_line_and_field() {
        let h = "time_us,op,sector,sectors,pid,sync\n";
        let cases = [
            ("1,X,0,8,,\n", "op", "expected R, W, D or F, found `X`"),
            ("1,R,abc,8,,\n", "sector", "found `abc`"),
            ("1,R,0,-8,,\n", "sectors", "found `-8`"),
            ("1,R,0,4294967296,,\n", "sectors", "out of range"),
            ("1,R,0,8,x1,\n", "pid", "found `x1`"),
            ("1,R,0,8,,maybe\n", "sync", "expected 0, 1, true or false"),
            ("1,R,0,0,,\n", "sectors", "at least 1 sector"),
            ("1,W,0,,,\n", "sectors", "found ``"),
            ("1,D,0,0,,\n", "sectors", "a D request"),
            (
                "1,R,0,8\n",
                "fields",
                "expected 6 fields (as in the header at line 1), found 4",
            ),
            ("1,R,0,8,,,\n", "fields", "found 7"),
            ("1,R,18446744073709551615,8,,\n", "sector", "overflows"),
        ];
        for (row, field, needle) in cases {
            let e = all(&format!("{h}{row}")).remove(0).unwrap_err();
            let (line, f, msg) = parse_err(&e);
            assert_eq!((line, f.as_str()), (2, field), "{row}: {msg}");
            assert!(msg.contains(needle), "{row}: {msg:?} lacks {needle:?}");
            assert!(e.to_string().starts_with("mem.csv:2: "), "{e}");
        }
    }

    #[test]
    fn quoted_fields_and_odd_bytes() {
        let text: &[u8] = b"time_us,op,sector,sectors,process\n1,R,0,8,\"a, \"\"b\"\"\"\n2,R,0,8,\"open\n3,R,0,8,\xff\n4,R,0,8, \"x\" y\n";
        let recs = {
            let mut r =
                NativeCsvReader::from_reader(Cursor::new(text.to_vec()), "mem.csv").unwrap();
            let a = r.next_record().unwrap().unwrap();
            assert_eq!(r.process_name(a.process.unwrap()), "a, \"b\"");
            let rest: Vec<_> = r.collect();
            rest
        };
        let fields: Vec<_> = recs
            .iter()
            .map(|r| parse_err(r.as_ref().unwrap_err()))
            .collect();
        assert_eq!((fields[0].0, fields[0].1.as_str()), (3, "record"));
        assert!(fields[0].2.contains("unterminated"));
        assert_eq!((fields[1].0, fields[1].1.as_str()), (4, "process"));
        assert!(fields[1].2.contains("UTF-8"));
        assert_eq!((fields[2].0, fields[2].1.as_str()), (5, "record"));
    }

    #[test]
    fn decreasing_time_names_both_values_and_reading_continues() {
        let text = "time_us,op,sector,sectors\n0,R,8,8\n10.5,W,16,8\n9.25,R,24,8\n11,R,32,8\n";
        let recs = all(text);
        assert_eq!(recs.len(), 4);
        let (line, field, msg) = parse_err(recs[2].as_ref().unwrap_err());
        assert_eq!((line, field.as_str()), (4, "time_us"));
        assert!(
            msg.contains("9.25") && msg.contains("10.5") && msg.contains("line 3"),
            "{msg}"
        );
        assert_eq!(recs[3].as_ref().unwrap().time_ns, 11_000);
        // equal times are fine
        assert!(all("time_ns,op,sector,sectors\n5,R,0,1\n5,R,1,1\n")
            .iter()
            .all(|r| r.is_ok()));
    }

    #[test]
    fn bundled_bad_samples_fail_with_line_and_field() {
        let cases = [
            ("missing_op.csv", 1, "op"),
            ("two_time_columns.csv", 1, "time_ms"),
            ("no_time_column.csv", 1, "time"),
            ("unknown_column.csv", 1, "lba"),
            ("bad_op.csv", 4, "op"),
            ("bad_number.csv", 3, "sector"),
            ("time_backwards.csv", 4, "time_us"),
            ("zero_length.csv", 4, "sectors"),
            ("wrong_field_count.csv", 4, "fields"),
        ];
        for (name, line, field) in cases {
            let path = manifest_path(&format!("traces/bad/{name}"));
            let err = match NativeCsvReader::open(&path) {
                Err(e) => e,
                Ok(r) => r
                    .filter_map(|r| r.err())
                    .next()
                    .unwrap_or_else(|| panic!("{name}: no error")),
            };
            let (l, f, msg) = parse_err(&err);
            assert_eq!((l, f.as_str()), (line, field), "{name}: {msg}");
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let e = NativeCsvReader::open("/nonexistent/trace.csv").unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent/trace.csv"));
    }

    #[test]
    fn bundled_sample_is_valid() {
        let r = NativeCsvReader::open(manifest_path("traces/sample.csv")).unwrap();
        let mut n = 0;
        let mut ops = [0usize; 4];
        let mut last = 0;
        let mut pids = std::collections::BTreeSet::new();
        for rec in r {
            let rec = rec.unwrap();
            assert!(rec.time_ns >= last);
            last = rec.time_ns;
            assert!(rec.sector + u64::from(rec.sectors) <= 8_388_608);
            ops[rec.op as usize] += 1;
            pids.insert(rec.pid.unwrap());
            assert!(rec.process.is_some() && rec.sync.is_some());
            n += 1;
        }
        assert!((300..=2000).contains(&n), "{n} records");
        assert!(ops.iter().all(|&c| c > 0), "{ops:?}");
        assert!(pids.len() >= 4);
    }

    /// Generates a long trace on the fly, one line at a time.
    struct Generated {
        next: u64,
        total: u64,
        line: Vec<u8>,
        pos: usize,
        header: bool,
    }

    impl Read for Generated {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.pos == self.line.len() {
                self.line.clear();
                self.pos = 0;
                if !self.header {
                    self.header = true;
                    self.line
                        .extend_from_slice(b"time_us,pid,process,op,sector,sectors,sync\n");
                } else if self.next < self.total {
                    let i = self.next;
                    self.next += 1;
                    let name = ["app", "system_server", "kworker/u8:2"][(i % 3) as usize];
                    let op = ["R", "W", "R", "D"][(i % 4) as usize];
                    let s = format!(
                        "{}.{},{},{name},{op},{},{},1\n",
                        i,
                        i % 1000,
                        1000 + i % 7,
                        (i * 8) % 8_000_000,
                        8 + i % 64
                    );
                    self.line.extend_from_slice(s.as_bytes());
                } else {
                    return Ok(0);
                }
            }
            let n = buf.len().min(self.line.len() - self.pos);
            buf[..n].copy_from_slice(&self.line[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn streams_a_long_trace_without_per_record_state() {
        let total = 300_000;
        let gen = Generated {
            next: 0,
            total,
            line: Vec::new(),
            pos: 0,
            header: false,
        };
        let mut r = NativeCsvReader::from_reader(gen, "generated.csv").unwrap();
        let mut n = 0u64;
        let mut last_line = 0;
        while let Some(rec) = r.next_record() {
            let rec = rec.unwrap();
            n += 1;
            last_line = rec.line;
            // only the three distinct names are interned
            assert!(r.process_count() <= 3);
        }
        assert_eq!(n, total);
        assert_eq!(last_line, total + 1);
        assert_eq!(r.process_count(), 3);
        assert_eq!(r.process_name(2), "kworker/u8:2");
        assert_eq!(r.process_name(99), "");
        // the reused buffers stay record-sized
        assert!(r.prev_time_text.capacity() < 64);
    }

    /// Every result of reading `text` through a buffer of `capacity`
    /// bytes, errors as their messages, each record with its process name.
    fn read_with_capacity(
        text: &[u8],
        capacity: usize,
    ) -> Vec<std::result::Result<(TraceRecord, String), String>> {
        let input = BufReader::with_capacity(
            capacity,
            Box::new(Cursor::new(text.to_vec())) as Box<dyn Read>,
        );
        match NativeCsvReader::from_input(input, Path::new("mem.csv")) {
            Err(e) => vec![Err(e.to_string())],
            Ok(mut r) => {
                let mut out = Vec::new();
                while let Some(rec) = r.next_record() {
                    out.push(match rec {
                        Ok(rec) => {
                            let name = rec.process.map_or("", |p| r.process_name(p)).to_string();
                            Ok((rec, name))
                        }
                        Err(e) => Err(e.to_string()),
                    });
                    assert!(out.len() <= 10_000, "no end");
                }
                out
            }
        }
    }

    /// Reads `text` in place (large buffer), through the copying general
    /// path (a 1-byte buffer never holds a whole line), and with lines
    /// split across buffer ends; all must agree.
    /// `head` then `rows`, one per line.
    fn trace_text(head: &str, rows: &[&str]) -> String {
        let mut text = head.to_string();
        for row in rows {
            text.push_str(row);
            text.push('\n');
        }
        text
    }

    /// The paths agree on `text` as it is, with CRLF line ends, and
    /// without its final newline.
    fn assert_paths_agree_with_line_ends(text: &str) {
        assert_paths_agree(text.as_bytes());
        assert_paths_agree(text.replace('\n', "\r\n").as_bytes());
        assert_paths_agree(text.trim_end().as_bytes());
    }

    fn assert_paths_agree(text: &[u8]) {
        let general = read_with_capacity(text, 1);
        for capacity in [3, 16, 61, 8192] {
            assert_eq!(
                read_with_capacity(text, capacity),
                general,
                "capacity {capacity}, text {:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn fast_and_general_paths_agree_on_odd_lines() {
        let head = "time_us,op,sector,sectors,pid,process,sync,done_us,device,flags\n";
        let rows = [
            "10,W,4108600,8,100,app,1,12,0,FM",
            "10,w,0,8,,,,,,",
            " 11 , R , 8 , 8 , 7 , app , true , 13.5 , 2 , A ",
            "12,R,8,8,7,\"app\",0,,,\r",
            "# comment, 1,2,3",
            "",
            "   \t ",
            "13.25,D,16,8,,,FALSE,,,E",
            "13.2500,F,,,,,,,,",
            "14,F,5,7,,,,,,",
            "14,F,abc,,,,,,,",
            "015,R,0,1,,,,,,",
            "0015.0,R,0,1,,,,,,",
            "9,R,0,1,,,,,,",
            "16,R,0,0,,,,,,",
            "17,R,0,4294967296,,,,,,",
            "18,R,18446744073709551615,8,,,,,,",
            "19,R,99999999999999999999,8,,,,,,",
            "20,R,0,8,4294967296,,,,,",
            "21,R,0,8,,new name,,,,",
            "22,R,0,8,,new name,,,,",
            "23,R,0,8,,app,maybe,,,",
            "24,R,0,8,,,,,,Q",
            "25,R,0,8,,,,1.2.3,,",
            "26,X,0,8,,,,,,",
            "27,R,0,8",
            "28,R,0,8,,,,,,,",
            "29,R,0,8,,,,,4294967295,",
            "30,R,00000000000000000000008,8,,,,,,",
            "18446744073709551616,R,0,8,,,,,,",
            "18446744073709551,R,0,8,,,,,,",
            "31,R,0,8,,\u{e9}t\u{e9},,,,",
            "33,R,0,8,,,,,,F\u{e9}",
            "34,\"R\",0,8,,,,,,",
            "35,R,0,8,,\"unterminated,,,,",
            "1,R,0,8,,,,,,",
            "36,R,0,8,,,,,,",
        ];
        let text = trace_text(head, &rows);
        assert_paths_agree_with_line_ends(&text);
        // a name that is not UTF-8
        let mut bytes = text.clone().into_bytes();
        bytes.extend_from_slice(b"40,R,0,8,,\xff,,,,\n41,R,0,8,,,,,,\n");
        assert_paths_agree(&bytes);
        // other headers: a completion column in ms, columns reordered
        assert_paths_agree(b"pid,sectors,done_ms,sector,op,time_s\n1,8,2.5,0,R,1\n,8,,0,W,1.000000001\n1,8,007,16,R,2\n");
        assert_paths_agree(b"time_ns,op,sector,sectors\n5,R,0,1\n5.5,R,0,1\n4,R,0,1\n6,R,0,1\n");
        // a ten-column header has room for nothing more
        assert_paths_agree(format!("{head}1,R,0,8,,,,,,,,\n").as_bytes());
    }

    #[test]
    fn quick_path_agrees_with_the_general_path() {
        // Headers without `process` and `flags`: the quick path is planned.
        let head = "time_us,op,sector,sectors,pid,sync,done_us,device\n";
        let rows = [
            "10,W,4108600,8,100,1,12,0",
            "10,w,0,8,,,,",
            "11,r,12345678,8,7,0,13,2",
            "12,d,123456789,16,4294967295,,99999999,4294967295",
            "13,f,,,,,,",
            "13,F,5,7,,,,",
            "14,R,1234567890123456789,8,,,,",
            "15,R,12345678901234567890,8,,,,",
            "16,R,18446744073709551615,1,,,,",
            "17,R,0,4294967296,,,,",
            "18,R,0,0,,,,",
            "19,R,0,8,4294967296,,,",
            "20,R,0,8,,01,,",
            "21,R,0,8,,2,,",
            "22,R,0,8,,true,,",
            "23,R,0,8,,,1.5,",
            "24,R,0,8,,,,4294967296",
            "025,R,0,8,,,,",
            "0,R,0,8,,,,",
            "26,R,007,08,0012,1,007,01",
            "26.5,R,0,8,,,,",
            "27,X,0,8,,,,",
            "28,RW,0,8,,,,",
            "29,R,0,8,,,",
            "30,R,0,8,,,,,",
            "31, R,0,8,,,,",
            "32,R,0,8 ,,,,",
            "9,R,0,8,,,,",
            "33,R,0,8,,,,\r",
            "# comment",
            "",
            "34,\"R\",0,8,,,,",
            "12345678901234567,R,0,8,,,,",
            "18446744073709551615,R,0,8,,,,",
            "99999999999999999999,R,0,8,,,,",
            "1234567890123456789012,R,0,8,,,,",
            "35,R,99999999999999999999999,8,,,,",
            "36,R,0,8,,,,",
        ];
        let text = trace_text(head, &rows);
        assert_paths_agree_with_line_ends(&text);
        for capacity in [17, 18, 19, 20, 21, 22, 23, 24, 25, 26] {
            assert_eq!(
                read_with_capacity(text.as_bytes(), capacity),
                read_with_capacity(text.as_bytes(), 1),
                "capacity {capacity}"
            );
        }
        // the benchmark's layout, times in every unit, columns reordered
        for unit in ["s", "ms", "us", "ns"] {
            let t = format!("time_{unit},op,sector,sectors,pid\n0,R,419608,8,100\n10,W,4108600,8,100\n999980,R,2215224,8,100\n18446744073709,R,1,8,100\n");
            assert_paths_agree(t.as_bytes());
        }
        assert_paths_agree(b"sectors,pid,op,sector,time_ms,done_ns\n8,1,R,16,5,5000000\n8,,W,24,6,\n8,2,R,32,5,18446744073709551615\n");
        assert_paths_agree(b"op,sector,sectors,time_ns\nR,1,1,5\nR,1,1,4\n");
    }

    #[test]
    fn quick_path_reads_records_and_locates_errors() {
        let text = "time_us,op,sector,sectors,pid\n0,R,419608,8,100\n10,W,4108600,8,100\n5,R,8,8,100\n20,R,8,0,100\n30,D,16,8,\n";
        let recs = read_with_capacity(text.as_bytes(), 8192);
        let (a, _) = recs[1].as_ref().unwrap();
        assert_eq!(
            (a.line, a.time_ns, a.op, a.sector, a.sectors, a.pid),
            (3, 10_000, Op::Write, 4_108_600, 8, Some(100))
        );
        assert!(
            recs[2].as_ref().unwrap_err().starts_with("mem.csv:4: "),
            "{recs:?}"
        );
        assert!(recs[2]
            .as_ref()
            .unwrap_err()
            .contains("5 is earlier than 10 at line 3"));
        assert!(recs[3]
            .as_ref()
            .unwrap_err()
            .starts_with("mem.csv:5: field `sectors`"));
        let (e, _) = recs[4].as_ref().unwrap();
        assert_eq!(
            (e.line, e.op, e.pid, e.sync, e.done_ns),
            (6, Op::Discard, None, None, None)
        );
    }

    #[test]
    fn quick_path_takes_only_plain_lines() {
        let r = reader("time_us,op,sector,sectors,pid\n").unwrap();
        let (rec, used) = r.quick_record(b"10,W,4108600,8,100\n1,R,0,8,1\n").unwrap();
        assert_eq!(used, 19);
        assert_eq!(
            (rec.time_ns, rec.sector, rec.pid),
            (10_000, 4_108_600, Some(100))
        );
        let (rec, _) = r
            .quick_record(b"123456789012,R,123456789,8,\n........")
            .unwrap();
        assert_eq!(
            (rec.time_ns, rec.sector, rec.pid),
            (123_456_789_012_000, 123_456_789, None)
        );
        for declined in [
            &b"10,W,4108600,8,100\r\n"[..],
            b"10,W,4108600,8,100",
            b"10,W,4108600,8,100\n",
            b"010,W,4108600,8,100\n........",
            b" 10,W,4108600,8,100\n........",
        ] {
            assert!(r.quick_record(declined).is_none(), "{declined:?}");
        }
        // a column it does not read turns it off
        let r = reader("time_us,op,sector,sectors,process\n").unwrap();
        assert!(r.quick_record(b"10,W,4108600,8,\n........").is_none());
    }

    #[test]
    fn an_over_long_line_is_refused_by_both_paths() {
        let mut text = b"time_us,op,sector,sectors\n1,R,0,8\n".to_vec();
        text.extend(std::iter::repeat_n(
            b'7',
            crate::common::MAX_LINE_BYTES + 10,
        ));
        text.extend_from_slice(b",R,0,8\n2,R,0,8\n");
        let general = read_with_capacity(&text, 1);
        assert_eq!(general.len(), 2, "{general:?}");
        assert!(
            general[1].as_ref().unwrap_err().contains("longer than"),
            "{general:?}"
        );
        assert_eq!(read_with_capacity(&text, 8192), general);
    }

    #[test]
    fn a_time_read_in_place_is_named_as_written_when_time_goes_backwards() {
        for prev in ["10", "010", "10.5", " 10 ", "10.50", "00010"] {
            let text = format!("time_us,op,sector,sectors\n{prev},R,0,8\n9,R,0,8\n");
            let recs = read_with_capacity(text.as_bytes(), 8192);
            let msg = recs[1].as_ref().unwrap_err();
            assert!(
                msg.contains(&format!("9 is earlier than {} at line 2", prev.trim())),
                "{msg}"
            );
            assert_eq!(recs, read_with_capacity(text.as_bytes(), 1));
        }
    }

    proptest::proptest! {
        #[test]
        fn fast_and_general_paths_agree(
            rows in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["0", "7", "10", "010", "12.5", ".5", "99999999999999999999", "18446744073709551615", "", " 3 ", "x"]),
                    proptest::sample::select(vec!["R", "w", "D", "F", "f", "X", "", " R"]),
                    proptest::sample::select(vec!["0", "8", "4108600", "", "abc", "18446744073709551615", "007"]),
                    proptest::sample::select(vec!["1", "8", "0", "", "4294967296", "-8", "2 "]),
                    proptest::sample::select(vec!["", "100", "4294967296", "a"]),
                    proptest::sample::select(vec!["", "app", "other app", "\"q,\"\"\"", " app", "\u{e9}"]),
                    proptest::sample::select(vec!["", "1", "0", "TRUE", "false", "2"]),
                    proptest::sample::select(vec!["", "FM", "Z", "F"]),
                    proptest::sample::select(vec!["\n", "\r\n", " \n", "\n\n", "\n# note\n", ",\n", "\n\""]),
                ),
                0..40,
            ),
            capacity in 2usize..80,
        ) {
            let mut text = String::from("time_ms,op,sector,sectors,pid,process,sync,flags\n");
            for (time, op, sector, sectors, pid, process, sync, flags, end) in rows {
                text.push_str(&format!("{time},{op},{sector},{sectors},{pid},{process},{sync},{flags}{end}"));
            }
            let general = read_with_capacity(text.as_bytes(), 1);
            proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), capacity), &general);
            proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), 8192), &general);
        }

        #[test]
        fn quick_and_general_paths_agree(
            rows in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["0", "7", "10", "010", "12.5", "123456789", "99999999999999999999", "18446744073709551615", "", " 3", "x"]),
                    proptest::sample::select(vec!["R", "w", "D", "F", "f", "X", "", " R", "RR"]),
                    proptest::sample::select(vec!["0", "8", "4108600", "12345678", "", "abc", "18446744073709551615", "007"]),
                    proptest::sample::select(vec!["1", "8", "0", "", "4294967296", "-8", "2 "]),
                    proptest::sample::select(vec!["", "100", "4294967296", "a", "01"]),
                    proptest::sample::select(vec!["", "1", "0", "TRUE", "2", "01"]),
                    proptest::sample::select(vec!["\n", "\r\n", " \n", "\n\n", "\n# note\n", ",\n", "\n\""]),
                ),
                0..40,
            ),
            capacity in 2usize..80,
        ) {
            let mut text = String::from("time_ms,op,sector,sectors,pid,sync\n");
            for (time, op, sector, sectors, pid, sync, end) in rows {
                text.push_str(&format!("{time},{op},{sector},{sectors},{pid},{sync}{end}"));
            }
            let general = read_with_capacity(text.as_bytes(), 1);
            proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), capacity), &general);
            proptest::prop_assert_eq!(&read_with_capacity(text.as_bytes(), 8192), &general);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            if let Ok(r) = NativeCsvReader::from_reader(Cursor::new(bytes), "fuzz.csv") {
                for _ in r.take(1000) {}
            }
        }

        #[test]
        fn arbitrary_rows_never_panic(rows in proptest::collection::vec("[0-9a-zA-Z.,# \\-]{0,40}", 0..20)) {
            let text = format!("time_s,op,sector,sectors,pid,process,sync\n{}", rows.join("\n"));
            let r = reader(&text).unwrap();
            for _ in r.take(1000) {}
        }
    }
}
