//! Helpers shared by the text readers: input opening (with transparent
//! gzip), line splitting, number and time parsing, process-name interning,
//! issue/completion pairing, and the generic line-driven reader.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{TraceReader, TraceRecord};
use crate::error::{Error, Result, UnknownChoice};
use mmcsim_types::{Ns, Op};

/// Unit of a trace's timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeUnit {
    /// Picoseconds (MQSim `PICOSECOND`).
    Ps,
    /// Nanoseconds.
    Ns,
    /// 100-ns ticks (Windows FILETIME, MSR Cambridge).
    Ticks100Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// Every unit, finest first.
    pub const ALL: [TimeUnit; 6] = [
        TimeUnit::Ps,
        TimeUnit::Ns,
        TimeUnit::Ticks100Ns,
        TimeUnit::Us,
        TimeUnit::Ms,
        TimeUnit::S,
    ];

    /// Stable short name (`ps`, `ns`, `100ns`, `us`, `ms`, `s`).
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Ps => "ps",
            TimeUnit::Ns => "ns",
            TimeUnit::Ticks100Ns => "100ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        }
    }

    /// Other (lower-case) spellings accepted for the unit.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            TimeUnit::Ps => &["picosecond", "picoseconds"],
            TimeUnit::Ns => &["nanosecond", "nanoseconds"],
            TimeUnit::Ticks100Ns => &["filetime", "ticks"],
            TimeUnit::Us => &["µs", "microsecond", "microseconds"],
            TimeUnit::Ms => &["millisecond", "milliseconds"],
            TimeUnit::S => &["sec", "second", "seconds"],
        }
    }

    /// Power of ten from this unit to ns (ps = -3, s = 9).
    pub fn exponent(self) -> i32 {
        match self {
            TimeUnit::Ps => -3,
            TimeUnit::Ns => 0,
            TimeUnit::Ticks100Ns => 2,
            TimeUnit::Us => 3,
            TimeUnit::Ms => 6,
            TimeUnit::S => 9,
        }
    }
}

impl std::fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for TimeUnit {
    type Err = UnknownChoice;
    /// A unit by its name or an alias, in any case.
    fn from_str(s: &str) -> std::result::Result<TimeUnit, UnknownChoice> {
        let l = s.to_ascii_lowercase();
        TimeUnit::ALL
            .into_iter()
            .find(|u| u.name() == l || u.aliases().contains(&l.as_str()))
            .ok_or_else(|| UnknownChoice {
                what: "time unit",
                found: s.to_string(),
                expected: TimeUnit::ALL.map(TimeUnit::name).join(", "),
            })
    }
}

/// In a report's JSON Schema: the unit's name.
impl schemars::JsonSchema for TimeUnit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TimeUnit".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "enum": ["s", "ms", "us", "ns", "100ns", "ps"]
        })
    }
}

/// Written as its name (`us`), read from its name or an alias.
impl serde::Serialize for TimeUnit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for TimeUnit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The command-line values: every unit by its name, aliases accepted.
#[cfg(feature = "clap")]
impl clap::ValueEnum for TimeUnit {
    fn value_variants<'a>() -> &'a [Self] {
        &TimeUnit::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).aliases(self.aliases().iter().copied()))
    }
}

/// Where a trace's bytes come from: a file, or bytes in memory (tests,
/// fuzzing). Either can be opened several times (format detection reads
/// the head; a compact fit measures the regions before the replay).
#[derive(Clone, Debug)]
pub enum Source {
    /// A file on disk.
    File(PathBuf),
    /// Bytes in memory, with the name used in error messages.
    Memory(Arc<[u8]>, PathBuf),
}

impl Source {
    /// The name used in error messages.
    pub fn path(&self) -> &Path {
        match self {
            Source::File(p) => p,
            Source::Memory(_, p) => p,
        }
    }

    /// Opens the source, gunzipping it if it starts with the gzip magic
    /// bytes `1f 8b`, past a leading UTF-8 byte-order mark.
    pub fn open(&self) -> Result<Box<dyn BufRead>> {
        let io = |source| Error::Io {
            path: self.path().to_path_buf(),
            source,
        };
        match self {
            Source::File(p) => {
                let f: Box<dyn Read> = match spooled(p)? {
                    Some(file) => Box::new(SpoolReader { file, pos: 0 }),
                    None => Box::new(File::open(p).map_err(io)?),
                };
                let mut r = BufReader::with_capacity(1 << 16, f);
                let gz = r.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
                let mut r: Box<dyn BufRead> = if gz {
                    Box::new(BufReader::with_capacity(
                        1 << 16,
                        flate2::bufread::MultiGzDecoder::new(r),
                    ))
                } else {
                    Box::new(r)
                };
                skip_bom(&mut *r).map_err(io)?;
                Ok(r)
            }
            Source::Memory(bytes, _) => {
                let c = Cursor::new(Arc::clone(bytes));
                let mut r: Box<dyn BufRead> = if bytes.starts_with(&[0x1f, 0x8b]) {
                    Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(c)))
                } else {
                    Box::new(c)
                };
                skip_bom(&mut *r).map_err(io)?;
                Ok(r)
            }
        }
    }
}

impl Source {
    /// Opens the source for a text reader ([`Source::open`]), refusing
    /// binary data with an error that names the right format
    /// ([`crate::binary`]).
    pub fn open_text(&self) -> Result<Box<dyn BufRead>> {
        let mut input = self.open()?;
        crate::binary::refuse(&mut *input, self.path())?;
        Ok(input)
    }
}

/// Largest non-seekable input copied to a temporary file, bytes (4 GiB):
/// an endless one (`/dev/zero`, `yes |`) is an error before it fills the
/// disk; a larger trace is replayed from a regular file, which is read in
/// place.
pub const MAX_SPOOL_BYTES: u64 = 4 << 30;

/// Copies of non-seekable inputs (pipes, FIFOs, `/dev/stdin`), by path.
static SPOOLED: std::sync::Mutex<Option<HashMap<PathBuf, Arc<File>>>> = std::sync::Mutex::new(None);

/// A non-seekable input (anything but a regular file: a pipe, a FIFO,
/// `/dev/stdin`, a character device) can be read only once, but format
/// detection (the head), the measuring pass of a compact fit and the
/// replay itself each open the trace. So the first open of such a path copies all its
/// bytes to an anonymous temporary file (deleted when the process ends),
/// and every open of that path in this process reads the copy: every pass
/// sees the same bytes. `None` for a regular file (or a path whose
/// metadata cannot be read: opening it reports the error).
fn spooled(p: &Path) -> Result<Option<Arc<File>>> {
    let io = |source| Error::Io {
        path: p.to_path_buf(),
        source,
    };
    match std::fs::metadata(p) {
        Ok(m) if !m.is_file() && !m.is_dir() => {}
        _ => return Ok(None),
    }
    let mut cache = SPOOLED.lock().unwrap_or_else(|e| e.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(f) = cache.get(p) {
        return Ok(Some(Arc::clone(f)));
    }
    let mut input = File::open(p).map_err(io)?;
    let mut copy = tempfile::tempfile().map_err(|e| Error::Io {
        path: p.to_path_buf(),
        source: std::io::Error::new(
            e.kind(),
            format!("copying the non-seekable input to a temporary file: {e}"),
        ),
    })?;
    let copied =
        std::io::copy(&mut (&mut input).take(MAX_SPOOL_BYTES + 1), &mut copy).map_err(io)?;
    if copied > MAX_SPOOL_BYTES {
        return Err(Error::Io {
            path: p.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!(
                    "a non-seekable input (pipe, FIFO, device) is copied to a temporary file to be read more than once, and this one is larger than {} GiB (or endless): save it to a regular file and give that",
                    MAX_SPOOL_BYTES >> 30
                ),
            ),
        });
    }
    let f = Arc::new(copy);
    cache.insert(p.to_path_buf(), Arc::clone(&f));
    Ok(Some(f))
}

/// Reads a spooled copy from the start, independently of other readers of
/// the same copy (positioned reads; the shared file offset is not used).
struct SpoolReader {
    file: Arc<File>,
    pos: u64,
}

impl Read for SpoolReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(&*self.file, buf, self.pos)?;
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(&*self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The longest line a text trace reader accepts, in bytes (1 MiB, line
/// break included): a longer line is an error naming it, so a binary file
/// or a file without line breaks cannot take memory without bound.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What [`read_line_bounded`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A line (with its line break, if any) was appended.
    Line,
    /// The input had ended.
    Eof,
    /// The line is longer than [`MAX_LINE_BYTES`] (the input is left
    /// mid-line: stop reading).
    TooLong,
}

/// Appends the next line of `input` to `buf`, reading at most
/// [`MAX_LINE_BYTES`] of it.
pub fn read_line_bounded<R: BufRead + ?Sized>(
    input: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<LineRead> {
    let start = buf.len();
    loop {
        let avail = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(if buf.len() == start {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let room = MAX_LINE_BYTES + 1 - (buf.len() - start);
        let (take, end) = match memchr::memchr(b'\n', &avail[..avail.len().min(room)]) {
            Some(i) => (i + 1, true),
            None => (avail.len().min(room), false),
        };
        buf.extend_from_slice(&avail[..take]);
        input.consume(take);
        if end {
            return Ok(LineRead::Line);
        }
        if buf.len() - start > MAX_LINE_BYTES {
            return Ok(LineRead::TooLong);
        }
    }
}

/// The error for a carriage return inside line `line` of `path` (`buf`,
/// its raw bytes): CR-only (old Mac) line endings, which would otherwise
/// run the whole file into one line, or show a raw CR in a message. CRs
/// among the white space ending the line (CRLF) are fine.
pub fn lone_cr_error(path: &Path, line: u64, buf: &[u8]) -> Option<Error> {
    let body = buf.trim_ascii_end();
    let at = memchr::memchr(b'\r', body)?;
    Some(Error::Parse {
        path: path.to_path_buf(),
        line,
        field: "line".into(),
        message: if line == 1 {
            mmcsim_types::text::lone_cr_message(body, at)
        } else {
            format!(
                "a carriage return without a line feed at byte {at} of the line: CR-only (old Mac) line endings; convert the file to LF line endings"
            )
        },
    })
}

/// Strips a UTF-8 byte-order mark ([`mmcsim_types::text::BOM`]) from the
/// start of `r`, so it never becomes part of the first field.
pub(crate) fn skip_bom(r: &mut dyn BufRead) -> std::io::Result<()> {
    let bom = mmcsim_types::text::BOM.as_bytes();
    if r.fill_buf()?.starts_with(bom) {
        r.consume(bom.len());
    }
    Ok(())
}

/// The error for line `line` of `path` being longer than
/// [`MAX_LINE_BYTES`].
pub fn line_too_long(path: &Path, line: u64) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        line,
        field: "line".into(),
        message: format!(
            "the line is longer than {MAX_LINE_BYTES} bytes (1 MiB), the limit of every text trace reader: not a trace line (a binary file, or a file without line breaks?)"
        ),
    }
}

/// A line source reusing one buffer; lines are numbered from 1 and returned
/// trimmed of surrounding white space (so CRLF, trailing tabs and a missing
/// final newline are all fine).
pub struct Lines {
    input: Box<dyn BufRead>,
    buf: Vec<u8>,
    no: u64,
    path: PathBuf,
    done: bool,
}

impl Lines {
    /// Reads lines from `input`, naming `path` in I/O errors.
    pub fn new(input: Box<dyn BufRead>, path: &Path) -> Lines {
        Lines {
            input,
            buf: Vec::with_capacity(256),
            no: 0,
            path: path.to_path_buf(),
            done: false,
        }
    }

    /// 1-based number of the line last returned.
    pub fn number(&self) -> u64 {
        self.no
    }

    /// The next line (trimmed), `Ok(None)` at the end; an I/O error (e.g.
    /// corrupt gzip) ends the input.
    pub fn next_line(&mut self) -> Result<Option<&[u8]>> {
        Ok(self.next_numbered()?.map(|(_, l)| l))
    }

    /// The next line (trimmed) with its 1-based number.
    pub fn next_numbered(&mut self) -> Result<Option<(u64, &[u8])>> {
        if self.done {
            return Ok(None);
        }
        self.buf.clear();
        match read_line_bounded(&mut *self.input, &mut self.buf) {
            Ok(LineRead::Line) => {}
            Ok(LineRead::Eof) => {
                self.done = true;
                return Ok(None);
            }
            Ok(LineRead::TooLong) => {
                self.done = true;
                let no = self.no + 1;
                return Err(lone_cr_error(&self.path, no, &self.buf)
                    .unwrap_or_else(|| line_too_long(&self.path, no)));
            }
            Err(source) => {
                self.done = true;
                return Err(Error::Io {
                    path: self.path.clone(),
                    source,
                });
            }
        }
        self.no += 1;
        if let Some(e) = lone_cr_error(&self.path, self.no, &self.buf) {
            self.done = true;
            return Err(e);
        }
        Ok(Some((self.no, self.buf.trim_ascii())))
    }
}

/// Context of the line being parsed, for error messages.
#[derive(Clone, Copy, Debug)]
pub struct Cx<'a> {
    /// The trace file.
    pub path: &'a Path,
    /// 1-based line number.
    pub line: u64,
    /// The time unit in force.
    pub unit: TimeUnit,
}

impl Cx<'_> {
    /// A parse error at this line naming `field`.
    pub fn err(&self, field: &str, message: impl Into<String>) -> Error {
        Error::Parse {
            path: self.path.to_path_buf(),
            line: self.line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// An error saying `field` should have been `expected` but was `found`.
    pub fn expected(&self, field: &str, expected: &str, found: &[u8]) -> Error {
        self.err(
            field,
            format!("expected {expected}, found `{}`", show(found)),
        )
    }

    /// Parses `t` as an unsigned decimal integer for `field`.
    pub fn uint(&self, t: &[u8], field: &str) -> Result<u64> {
        parse_u64(t).ok_or_else(|| self.expected(field, "an unsigned integer", t))
    }

    /// Parses `t` as an unsigned integer that fits in 32 bits.
    pub fn u32(&self, t: &[u8], field: &str) -> Result<u32> {
        parse_u64(t)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| self.expected(field, "an unsigned 32-bit integer", t))
    }

    /// Parses `t` as a hexadecimal number (optional `0x`).
    pub fn hex(&self, t: &[u8], field: &str) -> Result<u64> {
        parse_hex(t).ok_or_else(|| self.expected(field, "a hexadecimal number", t))
    }

    /// Parses `t` as a non-negative decimal time in `unit`, to whole ns.
    pub fn time(&self, t: &[u8], field: &str, unit: TimeUnit) -> Result<Ns> {
        parse_time(t, unit).ok_or_else(|| {
            self.expected(
                field,
                &format!("a non-negative decimal time in {} (≤ 2^64 ns)", unit.name()),
                t,
            )
        })
    }
}

/// Text of `b` for a message (lossy UTF-8, at most 60 characters), with
/// control characters escaped (`\r`, `\t`, `\u{1b}`, ...) so none reaches
/// a terminal raw.
pub fn show(b: &[u8]) -> String {
    let s = mmcsim_types::text::escape_controls(&String::from_utf8_lossy(b));
    if s.chars().count() > 60 {
        let mut t: String = s.chars().take(57).collect();
        t.push_str("...");
        t
    } else {
        s
    }
}

/// Parses an unsigned decimal integer (digits only).
pub fn parse_u64(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses a hexadecimal number with an optional `0x`/`0X` prefix.
pub fn parse_hex(t: &[u8]) -> Option<u64> {
    let t = t
        .strip_prefix(b"0x")
        .or_else(|| t.strip_prefix(b"0X"))
        .unwrap_or(t);
    if t.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        let d = (b as char).to_digit(16)?;
        v = v.checked_mul(16)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses a non-negative decimal `int[.frac]` in `unit` into whole ns,
/// exactly, rounding half up at the first dropped digit.
pub fn parse_time(t: &[u8], unit: TimeUnit) -> Option<Ns> {
    let (int, frac) = match t.iter().position(|&b| b == b'.') {
        Some(p) => (&t[..p], &t[p + 1..]),
        None => (t, &[][..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.iter().all(u8::is_ascii_digit) || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let k = unit.exponent();
    if k < 0 {
        let mut v: u128 = 0;
        for &b in int {
            v = v.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
        }
        let div = 10u128.pow(k.unsigned_abs());
        return u64::try_from((v + div / 2) / div).ok();
    }
    let mut ns: u64 = 0;
    for &b in int {
        ns = ns.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    let k = k as usize;
    for i in 0..k {
        let d = frac.get(i).map_or(0, |b| u64::from(b - b'0'));
        ns = ns.checked_mul(10)?.checked_add(d)?;
    }
    if frac.get(k).is_some_and(|&b| b >= b'5') {
        ns = ns.checked_add(1)?;
    }
    Some(ns)
}

/// Splits `line` at runs of spaces and tabs into `out`, returning how many
/// fields there were (more than `out.len()` means extra fields, which are
/// counted but not stored).
pub fn split_ws<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && (line[i] == b' ' || line[i] == b'\t') {
            i += 1;
        }
        if i == len {
            break;
        }
        let s = i;
        while i < len && line[i] != b' ' && line[i] != b'\t' {
            i += 1;
        }
        if n < out.len() {
            out[n] = &line[s..i];
        }
        n += 1;
    }
    n
}

/// Splits `line` at commas into `out` with each field trimmed, returning
/// the number of fields (possibly more than `out.len()`).
pub fn split_csv<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    for f in line.split(|&b| b == b',') {
        if n < out.len() {
            out[n] = f.trim_ascii();
        }
        n += 1;
    }
    n
}

/// Interns strings (process names, host names) as small ids in order of
/// first appearance; lookups only, never iterated in hash order.
#[derive(Default, Debug)]
pub struct Interner {
    names: Vec<String>,
    ids: HashMap<Box<[u8]>, u32>,
}

impl Interner {
    /// The id of `name`, adding it if new.
    pub fn intern(&mut self, name: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(String::from_utf8_lossy(name).into_owned());
        self.ids.insert(name.into(), id);
        id
    }

    /// The name interned as `id` ("" if none).
    pub fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Converts a byte offset and length to sectors (offset rounded down,
/// end rounded up), counting unaligned values in `unaligned`.
pub fn bytes_to_sectors(offset: u64, len: u64, unaligned: &mut u64) -> Option<(u64, u32)> {
    if offset % 512 != 0 || len % 512 != 0 {
        *unaligned += 1;
    }
    let first = offset / 512;
    let end = offset.checked_add(len)?.div_ceil(512);
    Some((first, u32::try_from(end - first).ok()?))
}

/// Decoded RWBS string (`[F](W|R|D|N)[F][A][S][M][E]`, plus old `B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rwbs {
    /// The operation; `None` for a no-data (`N`) request without flush.
    pub op: Option<Op>,
    /// Synchronous.
    pub sync: bool,
    /// [`TraceRecord`] flag bits (FUA, PREFLUSH, META, READAHEAD, SECURE).
    pub flags: u8,
}

/// Parses an RWBS string; `None` if it has no direction letter or an
/// unknown letter.
pub fn parse_rwbs(t: &[u8]) -> Option<Rwbs> {
    let mut flags = 0u8;
    let mut sync = false;
    let mut dir = None;
    for (i, &c) in t.iter().enumerate() {
        match c {
            b'F' if dir.is_none() && i == 0 => flags |= TraceRecord::PREFLUSH,
            b'F' => flags |= TraceRecord::FUA,
            b'W' | b'R' | b'D' | b'N' if dir.is_none() => dir = Some(c),
            b'A' => flags |= TraceRecord::READAHEAD,
            b'S' => sync = true,
            b'M' => flags |= TraceRecord::META,
            b'E' => flags |= TraceRecord::SECURE,
            b'B' => flags |= TraceRecord::PREFLUSH,
            _ => return None,
        }
    }
    let op = match dir {
        Some(b'W') => Some(Op::Write),
        Some(b'R') => Some(Op::Read),
        Some(b'D') => Some(Op::Discard),
        Some(_) => None,
        None if flags & TraceRecord::PREFLUSH != 0 => None,
        None => return None,
    };
    let op = match op {
        None if flags & TraceRecord::PREFLUSH != 0 => Some(Op::Flush),
        o => o,
    };
    Some(Rwbs { op, sync, flags })
}

/// One request waiting for its completion, in issue order.
struct Slot<K> {
    rec: TraceRecord,
    key: Option<K>,
    done: bool,
}

/// Pairs issue and completion events keyed by `K`, yielding records in
/// issue order once complete. Memory is bounded: at most `cap` requests wait;
/// beyond that the oldest is released without a completion time.
pub struct Pairing<K: Ord + Clone> {
    queue: VecDeque<Slot<K>>,
    base: u64,
    open: BTreeMap<K, VecDeque<u64>>,
    /// Match completions with the most recent (true) or the oldest (false)
    /// unmatched issue; may be changed between calls.
    pub lifo: bool,
    cap: usize,
    /// Completions with no matching issue, so far.
    pub unmatched: u64,
}

impl<K: Ord + Clone> Pairing<K> {
    /// A pairing that matches a completion with the oldest (`lifo` false)
    /// or the most recent (`lifo` true) unmatched issue of the same key.
    pub fn new(lifo: bool, cap: usize) -> Self {
        Pairing {
            queue: VecDeque::new(),
            base: 0,
            open: BTreeMap::new(),
            lifo,
            cap: cap.max(1),
            unmatched: 0,
        }
    }

    /// Records an issue that waits for a completion keyed `key`.
    pub fn issue(&mut self, key: K, rec: TraceRecord) {
        let seq = self.base + self.queue.len() as u64;
        self.open.entry(key.clone()).or_default().push_back(seq);
        self.queue.push_back(Slot {
            rec,
            key: Some(key),
            done: false,
        });
    }

    /// Adds a record that needs no completion (already complete, or the
    /// format has none), keeping issue order.
    pub fn ready(&mut self, rec: TraceRecord) {
        self.queue.push_back(Slot {
            rec,
            key: None,
            done: true,
        });
    }

    /// Completes the matching issue with `done_ns` and extra `flags`;
    /// false (and counted) when no issue waits under `key`.
    pub fn complete(&mut self, key: &K, done_ns: Ns, flags: u8) -> bool {
        let Some(list) = self.open.get_mut(key) else {
            self.unmatched += 1;
            return false;
        };
        let seq = if self.lifo {
            list.pop_back()
        } else {
            list.pop_front()
        };
        if list.is_empty() {
            self.open.remove(key);
        }
        let Some(seq) = seq else {
            self.unmatched += 1;
            return false;
        };
        let slot = &mut self.queue[(seq - self.base) as usize];
        slot.rec.done_ns = Some(done_ns.max(slot.rec.time_ns));
        slot.rec.flags |= flags;
        slot.done = true;
        slot.key = None;
        true
    }

    /// True when an issue waits under `key`.
    pub fn is_open(&self, key: &K) -> bool {
        self.open.contains_key(key)
    }

    /// The next record in issue order if it is complete, if more than the
    /// cap wait, or (with `all`) unconditionally.
    pub fn pop(&mut self, all: bool) -> Option<TraceRecord> {
        let front = self.queue.front()?;
        if !(front.done || all || self.queue.len() > self.cap) {
            return None;
        }
        let slot = self.queue.pop_front()?;
        let seq = self.base;
        self.base += 1;
        if let Some(key) = slot.key {
            if let Some(list) = self.open.get_mut(&key) {
                if let Some(p) = list.iter().position(|&s| s == seq) {
                    list.remove(p);
                }
                if list.is_empty() {
                    self.open.remove(&key);
                }
            }
        }
        Some(slot.rec)
    }
}

/// A parser of one line-oriented format, driven by [`TextReader`].
pub trait LineParser {
    /// Short format name (as [`TraceReader::format_name`]).
    fn format_name(&self) -> &'static str;
    /// Parses one non-blank line: a record, `None` for a line that carries
    /// no record (header, comment, event of no interest, or an event queued
    /// for pairing), or an error naming the field.
    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>>;
    /// A queued record ready to go (paired formats); `eof` releases all.
    fn pop(&mut self, _eof: bool) -> Option<TraceRecord> {
        None
    }
    /// The interned process name `id`.
    fn process_name(&self, _id: u32) -> &str {
        ""
    }
    /// Count of unaligned byte offsets/lengths.
    fn unaligned(&self) -> u64 {
        0
    }
    /// True if the format carries timestamps (fio v2 does not).
    fn has_time(&self) -> bool {
        true
    }
    /// Device id `id` as the format names devices
    /// ([`TraceReader::device_label`]).
    fn device_label(&self, id: u32) -> String {
        id.to_string()
    }
}

/// A reader driving a [`LineParser`] over the lines of a file; checks that
/// times do not decrease (a record earlier than its predecessor is reported
/// as an error on the `time` field and skipped).
pub struct TextReader<P: LineParser> {
    lines: Lines,
    path: PathBuf,
    parser: P,
    unit: TimeUnit,
    prev: Option<(Ns, u64)>,
    eof: bool,
}

impl<P: LineParser> TextReader<P> {
    /// A reader of `source` with `parser`, reading times in `unit`.
    pub fn new(source: &Source, parser: P, unit: TimeUnit) -> Result<Self> {
        let input = source.open_text()?;
        Ok(TextReader {
            lines: Lines::new(input, source.path()),
            path: source.path().to_path_buf(),
            parser,
            unit,
            prev: None,
            eof: false,
        })
    }

    /// The parser (format-specific counters).
    pub fn parser(&self) -> &P {
        &self.parser
    }

    fn check(&mut self, rec: TraceRecord) -> Result<TraceRecord> {
        if let Some((prev, prev_line)) = self.prev {
            if rec.time_ns < prev {
                return Err(Error::Parse {
                    path: self.path.clone(),
                    line: rec.line,
                    field: "time".into(),
                    message: format!(
                        "time goes backwards: {} ns is earlier than {prev} ns at line {prev_line}; expected non-decreasing times",
                        rec.time_ns
                    ),
                });
            }
        }
        self.prev = Some((rec.time_ns, rec.line));
        Ok(rec)
    }
}

impl<P: LineParser> TraceReader for TextReader<P> {
    fn next_record(&mut self) -> Option<Result<TraceRecord>> {
        loop {
            if let Some(r) = self.parser.pop(self.eof) {
                return Some(self.check(r));
            }
            if self.eof {
                return None;
            }
            let (no, line) = match self.lines.next_numbered() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    self.eof = true;
                    continue;
                }
                Err(e) => {
                    self.eof = true;
                    return Some(Err(e));
                }
            };
            if line.is_empty() {
                continue;
            }
            let cx = Cx {
                path: &self.path,
                line: no,
                unit: self.unit,
            };
            match self.parser.parse(line, &cx) {
                Ok(Some(r)) => return Some(self.check(r)),
                Ok(None) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn process_name(&self, id: u32) -> &str {
        self.parser.process_name(id)
    }

    fn format_name(&self) -> &'static str {
        self.parser.format_name()
    }

    fn time_unit(&self) -> Option<TimeUnit> {
        self.parser.has_time().then_some(self.unit)
    }

    fn unaligned_count(&self) -> u64 {
        self.parser.unaligned()
    }

    fn device_label(&self, id: u32) -> String {
        self.parser.device_label(id)
    }
}

impl<P: LineParser> Iterator for TextReader<P> {
    type Item = Result<TraceRecord>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record()
    }
}

/// Applies the [`super::OpenOptions`] on top of a format reader: keeps one
/// device (or all), remembers the first time and optionally rebases.
pub struct Filtered {
    inner: Box<dyn TraceReader>,
    device: Option<u32>,
    rebase: bool,
    first: Option<Ns>,
    /// Records kept.
    kept: u64,
    /// Device ids of records skipped (at most 65 kept, for the message).
    others: std::collections::BTreeSet<u32>,
    /// Refuse a second device id: `(first id seen, its line)`, once seen.
    single: Option<Option<(u32, u64)>>,
    ended: bool,
}

impl Filtered {
    /// Wraps `inner`, keeping only records of `device` (a record without a
    /// device id is then an error: the choice cannot apply to it) and
    /// subtracting the first time if `rebase`.
    pub fn new(inner: Box<dyn TraceReader>, device: Option<u32>, rebase: bool) -> Filtered {
        Filtered {
            inner,
            device,
            rebase,
            first: None,
            kept: 0,
            others: std::collections::BTreeSet::new(),
            single: None,
            ended: false,
        }
    }

    /// The error for a record on device `dev` (at `at`) after records on
    /// `first` (from `line`): the rest of the trace is read (this pass
    /// ends here anyway) to list every device id it has.
    fn second_device(&mut self, first: u32, line: u64, dev: u32, at: u64) -> Error {
        let mut devices = std::collections::BTreeSet::from([first, dev]);
        while let Some(r) = self.inner.next_record() {
            if let Some(d) = r.ok().and_then(|r| r.device) {
                devices.insert(d);
            }
        }
        let label = |d: u32| self.inner.device_label(d);
        let list: Vec<String> = devices.iter().take(64).map(|&d| label(d)).collect();
        Error::Parse {
            path: self.inner.path().to_path_buf(),
            line: at,
            field: "device".into(),
            message: format!(
                "the trace has records on {} devices ({}{}): device {} here, device {} from line {line}; choose one with a device id (simctl: --device-id {}; `simctl trace inspect` summarises each) or read them all (simctl: --all-devices)",
                devices.len(),
                list.join(", "),
                if devices.len() > 64 { ", ..." } else { "" },
                label(dev),
                label(first),
                label(first),
            ),
        }
    }

    /// Makes a record on a second device id an error (at its line, naming
    /// both ids): a multi-device trace needs a device chosen or all
    /// allowed, and this is found while reading, without a pass of its own.
    pub fn refuse_second_device(&mut self) {
        self.single = Some(None);
    }

    /// At the end of the trace: the error for a chosen device with no
    /// record, listing the device ids the trace has.
    fn absent_device(&mut self) -> Option<Error> {
        let want = self.device?;
        if self.kept > 0 || self.others.is_empty() {
            return None;
        }
        Some(Error::NoRecordOnDevice {
            path: self.inner.path().to_path_buf(),
            device: self.inner.device_label(want),
            found: self
                .others
                .iter()
                .take(64)
                .map(|&d| self.inner.device_label(d))
                .collect(),
            more: self.others.len() > 64,
        })
    }

    /// Whether to keep `rec` (one with a device id, or with a device
    /// chosen), by the device choice and the single-device rule.
    #[inline(never)]
    fn choose(&mut self, rec: &TraceRecord) -> Choice {
        if let (Some(want), None) = (self.device, rec.device) {
            // A chosen device cannot select records that name none:
            // replaying them all would silently ignore the choice.
            self.ended = true;
            return Choice::Fail(Error::Parse {
                path: self.inner.path().to_path_buf(),
                line: rec.line,
                field: "device".into(),
                message: format!(
                    "device {want} was chosen (simctl: --device-id {want}), but this record names no device: the trace has no device field; replay it without a device id"
                ),
            });
        }
        if let (Some(want), Some(dev)) = (self.device, rec.device) {
            if want != dev {
                if self.others.len() <= 64 {
                    self.others.insert(dev);
                }
                return Choice::Skip;
            }
        }
        if let (Some(seen), Some(dev)) = (self.single.as_mut(), rec.device) {
            match *seen {
                None => *seen = Some((dev, rec.line)),
                Some((first, line)) if first != dev => {
                    self.ended = true;
                    return Choice::Fail(self.second_device(first, line, dev, rec.line));
                }
                Some(_) => {}
            }
        }
        Choice::Keep
    }
}

/// What [`Filtered::choose`] makes of a record.
enum Choice {
    Keep,
    Skip,
    Fail(Error),
}

impl TraceReader for Filtered {
    fn next_record(&mut self) -> Option<Result<TraceRecord>> {
        if self.ended {
            return None;
        }
        loop {
            let mut rec = match self.inner.next_record() {
                Some(Ok(r)) => r,
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    self.ended = true;
                    return self.absent_device().map(Err);
                }
            };
            if self.device.is_some() || rec.device.is_some() {
                match self.choose(&rec) {
                    Choice::Keep => {}
                    Choice::Skip => continue,
                    Choice::Fail(e) => return Some(Err(e)),
                }
            }
            self.kept += 1;
            let first = *self.first.get_or_insert(rec.time_ns);
            if self.rebase {
                rec.time_ns = rec.time_ns.saturating_sub(first);
                rec.done_ns = rec.done_ns.map(|d| d.saturating_sub(first));
            }
            return Some(Ok(rec));
        }
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
    fn process_name(&self, id: u32) -> &str {
        self.inner.process_name(id)
    }
    fn format_name(&self) -> &'static str {
        self.inner.format_name()
    }
    fn time_unit(&self) -> Option<TimeUnit> {
        self.inner.time_unit()
    }
    fn first_time_ns(&self) -> Option<Ns> {
        self.first
    }
    fn unaligned_count(&self) -> u64 {
        self.inner.unaligned_count()
    }
    fn device_label(&self, id: u32) -> String {
        self.inner.device_label(id)
    }
}

/// The common prefix of an ftrace event line (§1.1).
#[derive(Clone, Copy, Debug)]
pub struct FtraceLine<'a> {
    /// Task name (comm).
    pub task: &'a [u8],
    /// Thread id.
    pub pid: u32,
    /// Timestamp text (seconds).
    pub ts: &'a [u8],
    /// Event name.
    pub event: &'a [u8],
    /// Event text after `<event>: `.
    pub text: &'a [u8],
}

/// The field of an ftrace event line's prefix that is malformed
/// ([`parse_ftrace_line`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FtraceField {
    /// The ` [<cpu>]` column.
    Cpu,
    /// The `<task>-<pid>` column (no dash).
    TaskPid,
    /// The pid after the task name.
    Pid,
    /// The `<secs>:` timestamp.
    Timestamp,
    /// The `<event>:` name.
    Event,
}

impl FtraceField {
    /// The field's name in messages (`cpu`, `task-pid`, `pid`,
    /// `timestamp`, `event`).
    pub fn name(self) -> &'static str {
        match self {
            FtraceField::Cpu => "cpu",
            FtraceField::TaskPid => "task-pid",
            FtraceField::Pid => "pid",
            FtraceField::Timestamp => "timestamp",
            FtraceField::Event => "event",
        }
    }

    /// The located error for `line` (at `cx`) with this field malformed.
    pub fn error(self, cx: &Cx, line: &[u8]) -> Error {
        cx.expected(
            self.name(),
            "an ftrace line `<task>-<pid> [<cpu>] <flags> <secs>: <event>: <text>`",
            line,
        )
    }
}

/// Splits an ftrace event line into its prefix fields; `Ok(None)` for a
/// `#` comment line; `Err(field)` for a malformed line.
pub fn parse_ftrace_line(line: &[u8]) -> std::result::Result<Option<FtraceLine<'_>>, FtraceField> {
    if line.first() == Some(&b'#') {
        return Ok(None);
    }
    // The CPU column: the first " [digits]" after the task-pid.
    let mut i = 0;
    let cpu = loop {
        let Some(p) = line[i..].iter().position(|&b| b == b'[') else {
            return Err(FtraceField::Cpu);
        };
        let s = i + p;
        let rest = &line[s + 1..];
        let d = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if s > 0 && line[s - 1] == b' ' && d > 0 && rest.get(d) == Some(&b']') {
            break s;
        }
        i = s + 1;
    };
    let mut head = line[..cpu].trim_ascii();
    // Optional "(tgid)" column.
    if head.last() == Some(&b')') {
        if let Some(p) = head.iter().rposition(|&b| b == b'(') {
            head = head[..p].trim_ascii_end();
        }
    }
    let dash = head
        .iter()
        .rposition(|&b| b == b'-')
        .ok_or(FtraceField::TaskPid)?;
    let task = head[..dash].trim_ascii();
    let pid = parse_u64(&head[dash + 1..])
        .and_then(|v| u32::try_from(v).ok())
        .ok_or(FtraceField::Pid)?;
    let after = &line[cpu..];
    let close = after
        .iter()
        .position(|&b| b == b']')
        .ok_or(FtraceField::Cpu)?;
    let rest = after[close + 1..].trim_ascii_start();
    // flags token, then "<ts>:".
    let mut toks = rest.splitn(2, |&b| b == b' ' || b == b'\t');
    let flags_or_ts = toks.next().ok_or(FtraceField::Timestamp)?;
    let (ts_tok, rest) = if flags_or_ts.ends_with(b":")
        && flags_or_ts[..flags_or_ts.len() - 1]
            .iter()
            .all(|b| b.is_ascii_digit() || *b == b'.')
    {
        (flags_or_ts, toks.next().unwrap_or_default())
    } else {
        let r = toks.next().unwrap_or_default().trim_ascii_start();
        let sp = r
            .iter()
            .position(|&b| b == b' ' || b == b'\t')
            .ok_or(FtraceField::Timestamp)?;
        (&r[..sp], &r[sp + 1..])
    };
    let ts = ts_tok.strip_suffix(b":").ok_or(FtraceField::Timestamp)?;
    let rest = rest.trim_ascii_start();
    let colon = rest
        .iter()
        .position(|&b| b == b':')
        .ok_or(FtraceField::Event)?;
    let event = &rest[..colon];
    let text = rest[colon + 1..].trim_ascii_start();
    Ok(Some(FtraceLine {
        task,
        pid,
        ts,
        event,
        text,
    }))
}

/// Splits `maj,min` into a `dev_t` as the kernel encodes it internally
/// (`major << 20 | minor`).
pub fn parse_dev(t: &[u8]) -> Option<u32> {
    let c = t.iter().position(|&b| b == b',')?;
    let maj = u32::try_from(parse_u64(&t[..c])?).ok()?;
    let min = u32::try_from(parse_u64(&t[c + 1..])?).ok()?;
    if maj >= 1 << 12 || min >= 1 << 20 {
        return None;
    }
    Some(maj << 20 | min)
}

/// A `dev_t` as the kernel encodes it (`major << 20 | minor`) written as
/// blkparse writes it: `maj,min`.
pub fn dev_label(dev: u32) -> String {
    format!("{},{}", dev >> 20, dev & ((1 << 20) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_exactly() {
        let t = |s: &str, u| parse_time(s.as_bytes(), u);
        assert_eq!(t("1.5", TimeUnit::S), Some(1_500_000_000));
        assert_eq!(
            t("48750.608267999996", TimeUnit::S),
            Some(48_750_608_268_000)
        );
        assert_eq!(t("12.75", TimeUnit::Ms), Some(12_750_000));
        assert_eq!(t("1250000", TimeUnit::Ps), Some(1_250));
        assert_eq!(t("1499", TimeUnit::Ps), Some(1));
        assert_eq!(t("1523", TimeUnit::Ticks100Ns), Some(152_300));
        assert_eq!(t("7", TimeUnit::Us), Some(7_000));
        assert_eq!(t("", TimeUnit::Us), None);
        assert_eq!(t(".", TimeUnit::Us), None);
        assert_eq!(t("-1", TimeUnit::Us), None);
        assert_eq!(t("99999999999999999999", TimeUnit::S), None);
    }

    #[test]
    fn rwbs_letters() {
        let r = parse_rwbs(b"FWFSM").unwrap();
        assert_eq!(r.op, Some(Op::Write));
        assert!(r.sync);
        assert_eq!(
            r.flags,
            TraceRecord::PREFLUSH | TraceRecord::FUA | TraceRecord::META
        );
        assert_eq!(parse_rwbs(b"FN").unwrap().op, Some(Op::Flush));
        assert_eq!(parse_rwbs(b"N").unwrap().op, None);
        assert_eq!(parse_rwbs(b"RA").unwrap().flags, TraceRecord::READAHEAD);
        assert_eq!(parse_rwbs(b"DE").unwrap().op, Some(Op::Discard));
        assert!(parse_rwbs(b"Q").is_none());
        assert!(parse_rwbs(b"").is_none());
    }

    #[test]
    fn ftrace_prefix() {
        let l =
            parse_ftrace_line(b"   mmcqd/0-95    [001] ...1   812.447120: block_rq_issue: 179,0 W")
                .unwrap()
                .unwrap();
        assert_eq!(
            (l.task, l.pid, l.ts, l.event),
            (
                &b"mmcqd/0"[..],
                95,
                &b"812.447120"[..],
                &b"block_rq_issue"[..]
            )
        );
        assert_eq!(l.text, b"179,0 W");
        let l = parse_ftrace_line(b"Binder thread-x-1234 (  987) [003] d..2 5.000000001: ev: t")
            .unwrap()
            .unwrap();
        assert_eq!((l.task, l.pid), (&b"Binder thread-x"[..], 1234));
        let l = parse_ftrace_line(b"<idle>-0 [000] 5.5: ev: t")
            .unwrap()
            .unwrap();
        assert_eq!((l.ts, l.event), (&b"5.5"[..], &b"ev"[..]));
        assert!(parse_ftrace_line(b"# tracer: nop").unwrap().is_none());
        assert!(parse_ftrace_line(b"garbage").is_err());
    }

    #[test]
    fn pairing_orders_and_caps() {
        let mut p: Pairing<u32> = Pairing::new(false, 2);
        p.issue(1, TraceRecord::new(1, 10, Op::Read, 0, 8));
        p.issue(2, TraceRecord::new(2, 11, Op::Read, 8, 8));
        assert!(p.complete(&2, 20, 0));
        assert!(p.pop(false).is_none());
        assert!(p.complete(&1, 30, 0));
        assert_eq!(p.pop(false).unwrap().done_ns, Some(30));
        assert_eq!(p.pop(false).unwrap().done_ns, Some(20));
        for i in 0..3 {
            p.issue(9, TraceRecord::new(i, i, Op::Read, 0, 8));
        }
        assert_eq!(p.pop(false).unwrap().line, 0);
        assert!(p.pop(false).is_none());
        assert!(!p.complete(&7, 1, 0));
        assert_eq!(p.unmatched, 1);
        assert!(p.complete(&9, 5, 0));
        assert_eq!(p.pop(false).unwrap().line, 1);
        assert_eq!(p.pop(true).unwrap().done_ns, None);
    }
}
