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

mod fast;
mod fields;
mod header;
mod record;
#[cfg(test)]
mod tests;
mod writer;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::common::{Source, TimeUnit};
use crate::error::{Error, Result};
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::{TraceReader, TraceRecord};
use fast::Role;
use fields::split_fields;
use header::Columns;
use mmcsim_types::Ns;

pub use writer::{write_native_csv, NativeCsvWriter, NATIVE_HEADER};

/// The project's own CSV, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct NativeCsv;

impl TraceFormat for NativeCsv {
    fn name(&self) -> &'static str {
        "native"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["native-csv", "csv"]
    }

    fn description(&self) -> &'static str {
        "mmcsim CSV: header naming time_s|ms|us|ns, op (R/W/D/F), sector, sectors; optional pid, process, sync, done_<unit>, device, flags"
    }

    fn example(&self) -> &'static str {
        "time_us,pid,process,op,sector,sectors,sync / 15.5,1203,com.android.chrome,W,90112,8,1"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        None
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let time = [&b"time_s"[..], b"time_ms", b"time_us", b"time_ns"];
        if !(head.has_column(b"op") && time.iter().any(|t| head.has_column(t))) {
            return None;
        }
        Sniff::matched(60, "a header with op and time_<unit> columns")
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        let _ = unit; // the header names the unit
        Ok(Box::new(NativeCsvReader::from_reader(
            source.open_text()?,
            source.path(),
        )?))
    }
}

/// The most columns a valid header can name: each of the ten kinds of
/// column (one time column, at most one completion column, and the eight
/// others) at most once. The fast path reads up to this many fields.
const MAX_COLUMNS: usize = 10;

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
        crate::common::skip_bom(&mut input).map_err(|source| Error::Io {
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
            let n = match crate::common::read_line_bounded(&mut self.input, &mut self.buf) {
                Ok(crate::common::LineRead::Line) => 1,
                Ok(crate::common::LineRead::Eof) => 0,
                Ok(crate::common::LineRead::TooLong) => {
                    self.done = true;
                    let no = self.line_no + 1;
                    return Err(crate::common::lone_cr_error(&self.path, no, &self.buf)
                        .unwrap_or_else(|| crate::common::line_too_long(&self.path, no)));
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
            if let Some(e) = crate::common::lone_cr_error(&self.path, self.line_no, &self.buf) {
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

    /// Field `idx` of the current record as text (fields are already trimmed).
    fn field(&self, idx: usize, name: &str, line: u64) -> Result<&str> {
        let raw = self.get(idx).unwrap_or_default();
        std::str::from_utf8(raw).map_err(|_| self.err(line, name, "expected UTF-8 text"))
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
                if newline >= crate::common::MAX_LINE_BYTES {
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

    fn time_unit(&self) -> Option<crate::TimeUnit> {
        Some(match self.time_digits {
            9 => crate::TimeUnit::S,
            6 => crate::TimeUnit::Ms,
            3 => crate::TimeUnit::Us,
            _ => crate::TimeUnit::Ns,
        })
    }
}

impl Iterator for NativeCsvReader {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}
