//! Binary blktrace captures: the per-CPU files `NAME.blktrace.N` that
//! `blktrace -d /dev/mmcblk0` writes (kernel
//! `include/uapi/linux/blktrace_api.h`, `kernel/trace/blktrace.c`; read as
//! blktrace's `blkparse.c` and `blkparse_fmt.c` read them).
//!
//! Each file is a sequence of 48-byte `struct blk_io_trace` records, each
//! followed by `pdu_len` bytes of payload:
//!
//! | offset | field | |
//! |---|---|---|
//! | 0 | `magic` u32 | `0x65617400 \| version` (version 7) |
//! | 4 | `sequence` u32 | per-CPU event number |
//! | 8 | `time` u64 | ns (the kernel's trace clock) |
//! | 16 | `sector` u64 | 512-byte sectors |
//! | 24 | `bytes` u32 | transfer length |
//! | 28 | `action` u32 | category bits `<< 16` \| action code |
//! | 32 | `pid` u32 | |
//! | 36 | `device` u32 | `dev_t`, `major << 20 \| minor` |
//! | 40 | `cpu` u32 | |
//! | 44 | `error` u16 | completion error |
//! | 46 | `pdu_len` u16 | payload bytes that follow |
//!
//! The byte order is the capturing machine's; the magic tells which (as
//! blkparse does, every record's magic is checked). Given one file
//! (`mmcblk0.blktrace.0`, or any `.N`) or the common prefix
//! (`mmcblk0`), the reader finds the sibling files of every CPU and merges
//! their events by time, ties broken by device, then sequence (blkparse's
//! order), then file; times are ns since the first event (blkparse's
//! "genesis"), so they equal the blkparse text's `%5T.%9t`.
//!
//! The events are then read as the blkparse text reader reads its lines
//! (the same [`crate::blkparse`] pairing code): the action code gives `D`
//! (issue, 7) and `C` (complete, 8); the category bits give the RWBS
//! letters as blkparse's `fill_rwbs` prints them (`F` flush, `D` discard /
//! `W` write / `R` read with bytes / `N`, then `F` FUA, `A` read-ahead, `S`
//! sync, `M` metadata); process names come from the `BLK_TN_PROCESS`
//! notes. Passthrough (`BLK_TC_PC`) events and every other action are
//! skipped. A capture therefore gives the same records as its blkparse
//! text. A malformed record (truncated, bad magic or version, a payload
//! over [`MAX_PDU_BYTES`], time going backwards within a CPU's file) is an
//! [`Error::Record`] naming the file, the record's index and byte offset,
//! and the field; that CPU's file is read no further.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use crate::blkparse::{BlkAction, BlkEvent, BlkEvents};
use crate::common::{parse_rwbs, Source, TimeUnit};
use crate::error::{Error, Result};
use crate::format::{Sniff, TraceFormat};
use crate::head::Head;
use crate::{TraceReader, TraceRecord};

/// The format's name (`--format blktrace-bin`).
pub const NAME: &str = "blktrace-bin";

/// `BLK_IO_TRACE_MAGIC`: the upper 24 bits of every record's `magic`.
pub const MAGIC: u32 = 0x6561_7400;

/// `BLK_IO_TRACE_VERSION`: the version this reader (and blkparse) reads.
pub const VERSION: u8 = 0x07;

/// Bytes of one `struct blk_io_trace`.
pub const RECORD_BYTES: usize = 48;

/// Largest payload accepted after a record, bytes: above any the kernel
/// writes (a message note is at most 128 bytes, `BLK_TN_MAX_MSG` in
/// `kernel/trace/blktrace.c`; a SCSI command block at most 260,
/// `SCSI_MAX_VARLEN_CDB_SIZE`; a cgroup id adds 8), so a larger `pdu_len`
/// is corruption, not a record to skip.
pub const MAX_PDU_BYTES: u16 = 4096;

/// Most per-CPU files read: `CONFIG_NR_CPUS` is at most 8,192 (x86-64
/// `MAXSMP`, `arch/x86/Kconfig`).
pub const MAX_CPU_FILES: usize = 8192;

/// Most pid → process-name notes kept: `PID_MAX_LIMIT` (4,194,304,
/// `include/linux/threads.h`), the number of pids a kernel can have.
pub const MAX_PROCESS_NOTES: usize = 1 << 22;

/// `TASK_COMM_LEN`: longest process name, bytes with its NUL.
const TASK_COMM_LEN: usize = 16;

/// Category bits of `action` (`enum blktrace_cat`), shifted by 16.
mod tc {
    pub const WRITE: u32 = 1 << (1 + 16);
    pub const FLUSH: u32 = 1 << (2 + 16);
    pub const SYNC: u32 = 1 << (3 + 16);
    pub const NOTIFY: u32 = 1 << (10 + 16);
    pub const PC: u32 = 1 << (9 + 16);
    pub const AHEAD: u32 = 1 << (11 + 16);
    pub const META: u32 = 1 << (12 + 16);
    pub const DISCARD: u32 = 1 << (13 + 16);
    pub const FUA: u32 = 1 << (15 + 16);
}

/// `__BLK_TA_ISSUE`, `__BLK_TA_COMPLETE` (`enum blktrace_act`).
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
/// `__BLK_TN_PROCESS` (`enum blktrace_notify`).
const TN_PROCESS: u32 = 0;
/// `__BLK_TA_CGROUP` / `__BLK_TN_CGROUP`: a cgroup id (8 bytes) starts the
/// payload.
const CGROUP: u32 = 1 << 8;

/// Binary blktrace captures, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct BlktraceBin;

impl TraceFormat for BlktraceBin {
    fn name(&self) -> &'static str {
        NAME
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["blktrace"]
    }

    fn description(&self) -> &'static str {
        "blktrace binary capture (per-CPU NAME.blktrace.N files, merged by time): D = issue, C = completion; ns; sectors; process names"
    }

    fn example(&self) -> &'static str {
        "mmcblk0.blktrace.0 (48-byte struct blk_io_trace records, magic 0x65617407)"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(TimeUnit::Ns)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let endian = magic_endian(head.raw())?;
        let magic = endian.u32(head.raw(), 0);
        let verdict = if magic as u8 == VERSION {
            Ok(format!(
                "the file starts with blktrace's magic {MAGIC:#x}, version {VERSION} ({} struct blk_io_trace)",
                endian.name()
            ))
        } else {
            Err(Error::Record {
                path: head.path().to_path_buf(),
                record: 1,
                offset: 0,
                field: "magic".into(),
                message: version_message(magic),
            })
        };
        // 100: a signature (the scale is in `Sniff::confidence`).
        Some(Sniff {
            confidence: 100,
            verdict,
        })
    }

    fn open(&self, source: &Source, _unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source)?))
    }
}

/// The message for a record of blktrace version other than [`VERSION`].
fn version_message(magic: u32) -> String {
    format!(
        "blktrace version {} (magic {magic:#010x}); this reader reads version {VERSION}, as blkparse does",
        magic & 0xff
    )
}

/// Byte order of a capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian (x86, ARM phones).
    Little,
    /// Big-endian.
    Big,
}

impl Endian {
    fn name(self) -> &'static str {
        match self {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        }
    }

    fn u16(self, b: &[u8], at: usize) -> u16 {
        let a = [b[at], b[at + 1]];
        match self {
            Endian::Little => u16::from_le_bytes(a),
            Endian::Big => u16::from_be_bytes(a),
        }
    }

    fn u32(self, b: &[u8], at: usize) -> u32 {
        let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        match self {
            Endian::Little => u32::from_le_bytes(a),
            Endian::Big => u32::from_be_bytes(a),
        }
    }

    fn u64(self, b: &[u8], at: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        match self {
            Endian::Little => u64::from_le_bytes(a),
            Endian::Big => u64::from_be_bytes(a),
        }
    }
}

/// The byte order in which `b` starts with blktrace's magic (any version),
/// or `None`.
pub fn magic_endian(b: &[u8]) -> Option<Endian> {
    let m: [u8; 4] = b.get(..4)?.try_into().ok()?;
    [Endian::Little, Endian::Big]
        .into_iter()
        .find(|e| e.u32(&m, 0) & 0xffff_ff00 == MAGIC)
}

/// For a path naming a capture's common prefix (`mmcblk0`, which does not
/// exist, beside `mmcblk0.blktrace.0`): the first CPU's file; any other
/// path unchanged.
pub fn resolve_path(path: &Path) -> PathBuf {
    if path.exists() {
        return path.to_path_buf();
    }
    let mut first = path.as_os_str().to_owned();
    first.push(".blktrace.0");
    let first = PathBuf::from(first);
    if first.is_file() {
        first
    } else {
        path.to_path_buf()
    }
}

/// [`resolve_path`] for a source: a file source naming a capture's prefix
/// becomes its first CPU's file.
pub fn resolve(source: &Source) -> Source {
    match source {
        Source::File(p) => Source::File(resolve_path(p)),
        other => other.clone(),
    }
}

/// The prefix and CPU number of a per-CPU file name `PREFIX.blktrace.N`.
fn split_cpu_name(name: &str) -> Option<(&str, u64)> {
    let (prefix, n) = name.rsplit_once(".blktrace.")?;
    let cpu = crate::common::parse_u64(n.as_bytes())?;
    Some((prefix, cpu))
}

/// Every per-CPU file of the capture `path` belongs to, by CPU number; just
/// `path` when its name is not `PREFIX.blktrace.N`.
pub fn cpu_files(path: &Path) -> Result<Vec<PathBuf>> {
    let name = path.file_name().and_then(|n| n.to_str());
    let Some((prefix, _)) = name.and_then(split_cpu_name) else {
        return Ok(vec![path.to_path_buf()]);
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let io = |source| Error::Io {
        path: dir.clone(),
        source,
    };
    let mut found: Vec<(u64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let file = entry.file_name();
        let Some((p, cpu)) = file.to_str().and_then(split_cpu_name) else {
            continue;
        };
        if p == prefix {
            found.push((cpu, path.with_file_name(&file)));
        }
        if found.len() > MAX_CPU_FILES {
            return Err(Error::Parse {
                path: path.to_path_buf(),
                line: 1,
                field: "files".into(),
                message: format!(
                    "more than {MAX_CPU_FILES} per-CPU files `{prefix}.blktrace.N` (CONFIG_NR_CPUS is at most {MAX_CPU_FILES}): not one capture"
                ),
            });
        }
    }
    found.sort();
    if found.is_empty() {
        // Listed before it was opened, then gone: opening it reports that.
        found.push((0, path.to_path_buf()));
    }
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// One record as read, before it becomes an event.
#[derive(Clone, Debug)]
struct Raw {
    sequence: u32,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    device: u32,
    error: u16,
    /// The payload of a process note (its name), else empty.
    comm: Vec<u8>,
    /// 1-based index of the record in its file.
    record: u64,
    /// Byte offset of the record in its file.
    offset: u64,
}

/// One CPU's file, read one record ahead.
struct CpuFile {
    path: PathBuf,
    input: Box<dyn BufRead>,
    endian: Option<Endian>,
    /// Records read so far.
    records: u64,
    /// Bytes read so far.
    offset: u64,
    /// Time of the last record read, ns.
    last_time: Option<u64>,
    /// The next record (or the error that ended the file); `None` at the
    /// end.
    head: Option<Result<Raw>>,
}

impl CpuFile {
    fn open(source: &Source) -> Result<CpuFile> {
        let mut f = CpuFile {
            path: source.path().to_path_buf(),
            input: source.open()?,
            endian: None,
            records: 0,
            offset: 0,
            last_time: None,
            head: None,
        };
        f.advance();
        Ok(f)
    }

    /// Reads the next record into `head` (an error ends the file).
    fn advance(&mut self) {
        self.head = self.read().transpose();
        if matches!(self.head, Some(Err(_))) {
            self.input = Box::new(std::io::empty());
        }
    }

    fn err(&self, field: &str, message: String) -> Error {
        Error::Record {
            path: self.path.clone(),
            record: self.records + 1,
            offset: self.offset,
            field: field.into(),
            message,
        }
    }

    /// Fills `buf` from the input; the bytes read (fewer at the end).
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.input.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::Io {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        Ok(n)
    }

    fn read(&mut self) -> Result<Option<Raw>> {
        let mut b = [0u8; RECORD_BYTES];
        let got = self.fill(&mut b)?;
        if got == 0 {
            return Ok(None);
        }
        if got < RECORD_BYTES {
            return Err(self.err(
                "record",
                format!(
                    "truncated: {got} of the {RECORD_BYTES} bytes of a struct blk_io_trace; the file ends mid-record (blktrace stopped uncleanly, or the file was cut)"
                ),
            ));
        }
        let endian = match (self.endian, magic_endian(&b)) {
            (Some(e), _) | (None, Some(e)) => e,
            (None, None) => return Err(self.bad_magic(&b)),
        };
        self.endian = Some(endian);
        let magic = endian.u32(&b, 0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(self.bad_magic(&b));
        }
        if magic as u8 != VERSION {
            return Err(self.err("magic", version_message(magic)));
        }
        let pdu_len = endian.u16(&b, 46);
        if pdu_len > MAX_PDU_BYTES {
            return Err(self.err(
                "pdu_len",
                format!(
                    "{pdu_len} payload bytes; expected at most {MAX_PDU_BYTES} (the kernel writes at most a few hundred): a corrupt record"
                ),
            ));
        }
        let time = endian.u64(&b, 8);
        if let Some(last) = self.last_time.filter(|&l| time < l) {
            return Err(self.err(
                "time",
                format!(
                    "time goes backwards within this CPU's file: {time} ns after {last} ns; expected non-decreasing times"
                ),
            ));
        }
        let mut pdu = vec![0u8; usize::from(pdu_len)];
        let got = self.fill(&mut pdu)?;
        if got < pdu.len() {
            return Err(self.err(
                "pdu",
                format!(
                    "truncated: {got} of the record's {pdu_len} payload bytes; the file ends mid-record"
                ),
            ));
        }
        let action = endian.u32(&b, 28);
        let raw = Raw {
            sequence: endian.u32(&b, 4),
            time,
            sector: endian.u64(&b, 16),
            bytes: endian.u32(&b, 24),
            action,
            pid: endian.u32(&b, 32),
            device: endian.u32(&b, 36),
            error: endian.u16(&b, 44),
            comm: process_note(action, &pdu),
            record: self.records + 1,
            offset: self.offset,
        };
        self.records += 1;
        self.offset += (RECORD_BYTES + pdu.len()) as u64;
        self.last_time = Some(time);
        Ok(Some(raw))
    }

    fn bad_magic(&self, b: &[u8]) -> Error {
        let found = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let what = if self.records == 0 {
            "; not a blktrace capture"
        } else {
            "; the capture is corrupt from here"
        };
        self.err(
            "magic",
            format!(
                "expected {:#010x} (blktrace's magic {MAGIC:#x} with version {VERSION}) in either byte order, found bytes {:02x} {:02x} {:02x} {:02x} ({found:#010x} little-endian){what}",
                MAGIC | u32::from(VERSION),
                b[0],
                b[1],
                b[2],
                b[3]
            ),
        )
    }
}

/// The process name a `BLK_TN_PROCESS` note carries (its payload after the
/// cgroup id, up to the first NUL, at most `TASK_COMM_LEN - 1` bytes);
/// empty for any other record.
fn process_note(action: u32, pdu: &[u8]) -> Vec<u8> {
    if action & tc::NOTIFY == 0 || action & 0xff != TN_PROCESS {
        return Vec::new();
    }
    let name = if action & CGROUP != 0 {
        pdu.get(8..).unwrap_or_default()
    } else {
        pdu
    };
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    name[..end.min(TASK_COMM_LEN - 1)].to_vec()
}

/// The RWBS letters blkparse prints for `action` and `bytes`
/// (`fill_rwbs`), at most 7.
fn rwbs_letters(action: u32, bytes: u32) -> ([u8; 8], usize) {
    let mut s = [0u8; 8];
    let mut n = 0;
    let mut put = |c: u8| {
        s[n] = c;
        n += 1;
    };
    if action & tc::FLUSH != 0 {
        put(b'F');
    }
    if action & tc::DISCARD != 0 {
        put(b'D');
    } else if action & tc::WRITE != 0 {
        put(b'W');
    } else if bytes != 0 {
        put(b'R');
    } else {
        put(b'N');
    }
    for (bit, c) in [
        (tc::FUA, b'F'),
        (tc::AHEAD, b'A'),
        (tc::SYNC, b'S'),
        (tc::META, b'M'),
    ] {
        if action & bit != 0 {
            put(c);
        }
    }
    (s, n)
}

/// Streaming reader of a binary blktrace capture (every CPU's file).
pub struct BlktraceReader {
    path: PathBuf,
    files: Vec<CpuFile>,
    events: BlkEvents,
    /// pid → process name, from the process notes.
    names: HashMap<u32, Vec<u8>>,
    /// Time of the first event, ns (blkparse's genesis).
    genesis: Option<u64>,
    /// Events taken so far (a record's `line` is its event's index).
    taken: u64,
    eof: bool,
}

/// Opens the capture `source` belongs to: for a file named
/// `PREFIX.blktrace.N`, every CPU's file beside it (a prefix is resolved
/// first, [`resolve`]); bytes in memory are one CPU's stream.
pub fn open(source: &Source) -> Result<BlktraceReader> {
    let source = resolve(source);
    let sources = match &source {
        Source::File(p) => cpu_files(p)?.into_iter().map(Source::File).collect(),
        Source::Memory(..) => vec![source.clone()],
    };
    let files = sources
        .iter()
        .map(CpuFile::open)
        .collect::<Result<Vec<_>>>()?;
    Ok(BlktraceReader {
        path: source.path().to_path_buf(),
        files,
        events: BlkEvents::default(),
        names: HashMap::new(),
        genesis: None,
        taken: 0,
        eof: false,
    })
}

impl BlktraceReader {
    /// The per-CPU files read, in CPU order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|f| f.path.as_path())
    }

    /// Completions that matched no issue so far.
    pub fn unmatched_completions(&self) -> u64 {
        self.events.unmatched()
    }

    /// The next event in merged order (an error of a file first), with the
    /// index of its file; `None` when every file has ended.
    fn next_event(&mut self) -> Option<(usize, Result<Raw>)> {
        let errored = self
            .files
            .iter()
            .position(|f| matches!(f.head, Some(Err(_))));
        let pick = errored.or_else(|| {
            let key = |f: &CpuFile| match &f.head {
                Some(Ok(r)) => Some((r.time, r.device, r.sequence)),
                _ => None,
            };
            (0..self.files.len())
                .filter_map(|i| key(&self.files[i]).map(|k| (k, i)))
                .min()
                .map(|(_, i)| i)
        })?;
        let f = &mut self.files[pick];
        let head = f.head.take()?;
        if head.is_ok() {
            f.advance();
        }
        Some((pick, head))
    }

    /// Takes one record of file `file` as blkparse would print it.
    fn take(&mut self, file: usize, raw: Raw) -> Result<()> {
        self.taken += 1;
        let genesis = *self.genesis.get_or_insert(raw.time);
        if raw.action & tc::NOTIFY != 0 {
            if !raw.comm.is_empty() && self.names.len() < MAX_PROCESS_NOTES {
                self.names.insert(raw.pid, raw.comm);
            }
            return Ok(());
        }
        let action = match raw.action & 0xffff & !CGROUP {
            TA_ISSUE => BlkAction::Issue,
            TA_COMPLETE => BlkAction::Complete,
            _ => return Ok(()),
        };
        if raw.action & tc::PC != 0 {
            return Ok(()); // SCSI passthrough: not block I/O
        }
        let (letters, n) = rwbs_letters(raw.action, raw.bytes);
        let rwbs = parse_rwbs(&letters[..n]).expect("fill_rwbs letters parse");
        let e = BlkEvent {
            dev: raw.device,
            action,
            rwbs,
            sector: raw.sector,
            sectors: raw.bytes >> 9,
            pid: raw.pid,
            process: self.names.get(&raw.pid).map_or(&[][..], Vec::as_slice),
            failed: raw.error != 0,
            time_ns: raw.time.saturating_sub(genesis),
        };
        let path = &self.files[file].path;
        self.events
            .event(&e, self.taken, |field, message| Error::Record {
                path: path.clone(),
                record: raw.record,
                offset: raw.offset,
                field: field.into(),
                message,
            })
    }
}

impl TraceReader for BlktraceReader {
    fn next_record(&mut self) -> Option<Result<TraceRecord>> {
        loop {
            if let Some(r) = self.events.pop(self.eof) {
                return Some(Ok(r));
            }
            if self.eof {
                return None;
            }
            match self.next_event() {
                None => self.eof = true,
                Some((_, Err(e))) => return Some(Err(e)),
                Some((file, Ok(raw))) => {
                    if let Err(e) = self.take(file, raw) {
                        return Some(Err(e));
                    }
                }
            }
        }
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn process_name(&self, id: u32) -> &str {
        self.events.process_name(id)
    }

    fn format_name(&self) -> &'static str {
        NAME
    }

    fn time_unit(&self) -> Option<TimeUnit> {
        Some(TimeUnit::Ns)
    }

    fn device_label(&self, id: u32) -> String {
        crate::common::dev_label(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::{detect_bytes, open_bytes, OpenOptions};
    use mmcsim_types::{Ns, Op};
    use std::sync::Arc;

    const Q: u32 = 1;
    const D: u32 = TA_ISSUE | 1 << (6 + 16);
    const C: u32 = TA_COMPLETE | 1 << (7 + 16);
    const READ: u32 = 1 << 16;
    const DEV: u32 = 179 << 20;

    /// One record as the kernel lays it out, in `endian` order.
    fn rec(
        e: Endian,
        seq: u32,
        (time, sector, bytes): (u64, u64, u32),
        action: u32,
        pid: u32,
        pdu: &[u8],
    ) -> Vec<u8> {
        let mut b = Vec::with_capacity(RECORD_BYTES + pdu.len());
        let w32 = |b: &mut Vec<u8>, v: u32| match e {
            Endian::Little => b.extend_from_slice(&v.to_le_bytes()),
            Endian::Big => b.extend_from_slice(&v.to_be_bytes()),
        };
        let w64 = |b: &mut Vec<u8>, v: u64| match e {
            Endian::Little => b.extend_from_slice(&v.to_le_bytes()),
            Endian::Big => b.extend_from_slice(&v.to_be_bytes()),
        };
        w32(&mut b, MAGIC | u32::from(VERSION));
        w32(&mut b, seq);
        w64(&mut b, time);
        w64(&mut b, sector);
        w32(&mut b, bytes);
        w32(&mut b, action);
        w32(&mut b, pid);
        w32(&mut b, DEV);
        w32(&mut b, 0);
        let (err, len) = (0u16, pdu.len() as u16);
        match e {
            Endian::Little => {
                b.extend_from_slice(&err.to_le_bytes());
                b.extend_from_slice(&len.to_le_bytes());
            }
            Endian::Big => {
                b.extend_from_slice(&err.to_be_bytes());
                b.extend_from_slice(&len.to_be_bytes());
            }
        }
        b.extend_from_slice(pdu);
        b
    }

    fn capture(e: Endian) -> Vec<u8> {
        let mut v = rec(
            e,
            0,
            (1_000, 0, 0),
            tc::NOTIFY | TN_PROCESS,
            95,
            b"mmcqd/0\0\0\0\0\0\0\0\0\0",
        );
        v.extend(rec(
            e,
            1,
            (1_500, 64, 4096),
            Q | tc::WRITE | tc::SYNC,
            95,
            &[],
        ));
        v.extend(rec(
            e,
            2,
            (2_000, 64, 4096),
            D | tc::WRITE | tc::SYNC | tc::FUA,
            95,
            &[],
        ));
        v.extend(rec(e, 3, (3_000, 8, 8192), D | READ, 95, &[]));
        v.extend(rec(
            e,
            4,
            (5_000, 64, 4096),
            C | tc::WRITE | tc::SYNC | tc::FUA,
            0,
            &[],
        ));
        v.extend(rec(
            e,
            5,
            (6_000, 0, 0),
            D | tc::WRITE | tc::FLUSH | tc::SYNC,
            95,
            &[],
        ));
        v.extend(rec(e, 6, (7_000, 8, 8192), C | READ, 0, &[]));
        v.extend(rec(
            e,
            7,
            (9_000, u64::MAX, 0),
            C | tc::WRITE | tc::FLUSH | tc::SYNC,
            0,
            &[],
        ));
        v
    }

    fn all(bytes: &[u8]) -> Vec<Result<TraceRecord>> {
        let opts = OpenOptions {
            format: Some(crate::Format::new(&BlktraceBin)),
            ..OpenOptions::default()
        };
        let mut r = open_bytes(bytes, "cap.blktrace.0", &opts).unwrap();
        std::iter::from_fn(|| r.next_record()).collect()
    }

    /// Both byte orders read alike: issues become records at their `D`
    /// (times since the first event), completions pair by device, sector
    /// and length, a zero-length flush pairs without its sector, and the
    /// RWBS bits become the flags blkparse prints.
    #[test]
    fn either_byte_order_gives_the_records_blkparse_prints() {
        for e in [Endian::Little, Endian::Big] {
            let bytes = capture(e);
            assert_eq!(detect_bytes(&bytes, "x").unwrap().name(), NAME);
            let recs: Vec<TraceRecord> = all(&bytes).into_iter().map(|r| r.unwrap()).collect();
            let got: Vec<(Ns, Op, u64, u32, Option<Ns>)> = recs
                .iter()
                .map(|r| (r.time_ns, r.op, r.sector, r.sectors, r.done_ns))
                .collect();
            assert_eq!(
                got,
                [
                    (1_000, Op::Write, 64, 8, Some(4_000)),
                    (2_000, Op::Read, 8, 16, Some(6_000)),
                    (5_000, Op::Flush, 0, 0, Some(8_000)),
                ],
                "{e:?}"
            );
            assert!(recs[0].has(TraceRecord::FUA) && recs[0].sync == Some(true));
            assert_eq!(recs[0].device, Some(DEV));
            assert_eq!(recs[0].pid, Some(95));
        }
        let mut r = open(&Source::Memory(Arc::from(capture(Endian::Big)), "b".into())).unwrap();
        let first = r.next_record().unwrap().unwrap();
        assert_eq!(r.process_name(first.process.unwrap()), "mmcqd/0");
    }

    /// Per-CPU files found from one of them or from their prefix, merged
    /// by time; equal times go by sequence, then file.
    #[test]
    fn cpu_files_merge_by_time() {
        let dir = tempfile::tempdir().unwrap();
        let e = Endian::Little;
        let cpu0 = [
            rec(e, 0, (100, 8, 4096), D | READ, 1, &[]),
            rec(e, 1, (300, 8, 4096), C | READ, 0, &[]),
        ]
        .concat();
        let cpu1 = [
            rec(e, 0, (100, 16, 4096), D | READ, 2, &[]),
            rec(e, 1, (200, 16, 4096), C | READ, 0, &[]),
            rec(e, 2, (400, 24, 4096), D | READ, 2, &[]),
        ]
        .concat();
        std::fs::write(dir.path().join("sda.blktrace.0"), cpu0).unwrap();
        std::fs::write(dir.path().join("sda.blktrace.1"), cpu1).unwrap();
        std::fs::write(dir.path().join("sdb.blktrace.0"), b"other capture").unwrap();
        for given in ["sda.blktrace.1", "sda"] {
            let source = Source::File(dir.path().join(given));
            let mut r = open(&source).unwrap();
            assert_eq!(r.files().count(), 2);
            let recs: Vec<(u32, u64, Option<Ns>)> = std::iter::from_fn(|| r.next_record())
                .map(|r| r.unwrap())
                .map(|r| (r.pid.unwrap(), r.time_ns, r.done_ns))
                .collect();
            assert_eq!(recs, [(1, 0, Some(200)), (2, 0, Some(100)), (2, 300, None)]);
        }
    }

    fn record_error(bytes: &[u8]) -> String {
        let errs: Vec<String> = all(bytes)
            .into_iter()
            .filter_map(|r| r.err())
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errs.len(), 1, "{errs:?}");
        errs[0].clone()
    }

    #[test]
    fn malformed_records_are_located() {
        let e = Endian::Little;
        let good = rec(e, 0, (100, 8, 4096), D | READ, 1, &[]);
        let mut cut = good.clone();
        cut.extend_from_slice(&good[..20]);
        let m = record_error(&cut);
        assert!(m.starts_with("cap.blktrace.0: record 2 (byte offset 48): field `record`: truncated: 20 of the 48 bytes"), "{m}");

        let mut bad = good.clone();
        bad.extend(rec(e, 1, (200, 8, 4096), C | READ, 0, &[]));
        bad[51] = 0x42;
        let m = record_error(&bad);
        assert!(
            m.contains("record 2 (byte offset 48): field `magic`")
                && m.contains("corrupt from here"),
            "{m}"
        );

        let mut big = good.clone();
        let mut over = rec(e, 1, (200, 8, 4096), C | READ, 0, &[]);
        over[46..48].copy_from_slice(&(MAX_PDU_BYTES + 1).to_le_bytes());
        big.extend(over);
        let m = record_error(&big);
        assert!(m.contains("record 2 (byte offset 48): field `pdu_len`: 4097 payload bytes; expected at most 4096"), "{m}");

        let mut pdu = good.clone();
        pdu.extend(rec(e, 1, (200, 8, 4096), C | READ, 0, b"12345678"));
        pdu.truncate(pdu.len() - 3);
        let m = record_error(&pdu);
        assert!(
            m.contains("field `pdu`: truncated: 5 of the record's 8 payload bytes"),
            "{m}"
        );

        let mut back = good.clone();
        back.extend(rec(e, 1, (50, 8, 4096), C | READ, 0, &[]));
        let m = record_error(&back);
        assert!(m.contains("field `time`: time goes backwards"), "{m}");

        let mut v6 = good.clone();
        v6[0] = 0x06;
        let m = detect_bytes(&v6, "old.blktrace.0").unwrap_err().to_string();
        assert!(m.contains("field `magic`: blktrace version 6"), "{m}");
    }

    /// A capture given to a text reader names this format; other binary
    /// data lists the text formats.
    #[test]
    fn text_readers_name_the_binary_format() {
        let bytes = capture(Endian::Little);
        for f in ["blkparse", "native", "fio-iolog", "mqsim"] {
            let opts = OpenOptions {
                format: Some(f.parse().unwrap()),
                ..OpenOptions::default()
            };
            let e = open_bytes(&bytes, "cap.blktrace.0", &opts)
                .err()
                .unwrap()
                .to_string();
            assert!(
                e.starts_with(
                    "cap.blktrace.0:1: field `format`: this is a binary blktrace capture"
                ) && e.contains("--format blktrace-bin"),
                "{f}: {e}"
            );
        }
        let noise: Vec<u8> = (0..512u32).map(|i| (i * 131 % 251) as u8).collect();
        let e = detect_bytes(&noise, "x.bin").unwrap_err().to_string();
        assert!(
            e.contains("binary data") && e.contains("the text formats are native"),
            "{e}"
        );
    }
}
