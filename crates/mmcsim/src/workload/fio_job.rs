//! fio job files as a workload: translates an fio job file (fio's HOWTO,
//! "Job file format") into the scenario's `[[files]]` and `[[jobs]]`, so
//! `simctl run job.fio` runs it on the default (or given) device, host and
//! scheduler.
//!
//! The file is INI-like: `[global]` and `[jobname]` sections of `key=value`
//! lines (`;` and `#` start comment lines). A job inherits the options of
//! every `[global]` section above it, then applies its own; the last value
//! of a key wins. Each option maps onto a [`JobSpec`] field:
//!
//! | fio key | meaning in mmcsim |
//! |---|---|
//! | `rw`, `readwrite` | `read`, `write`, `randread`, `randwrite`, `rw`/`readwrite`, `randrw`; `:N` on sequential I/O skips N bytes after each I/O (a strided job) |
//! | `bs`, `blocksize` | bytes per I/O; `R,W` gives reads and writes their own size (one size per job) |
//! | `size` | bytes of I/O per thread, over the region starting at `offset` |
//! | `filesize` | size of the file (default `offset + size`) |
//! | `offset` | start of the region within the file |
//! | `numjobs` | clones: threads on one file (with `filename`), else one file each (`jobname.N.0`) |
//! | `ioengine` | `psync`, `sync`, `pvsync` (synchronous), `libaio`, `io_uring` (asynchronous on `direct` I/O) |
//! | `iodepth` | I/Os in flight per thread (asynchronous engines) |
//! | `direct`, `buffered` | O_DIRECT |
//! | `sync` | O_SYNC writes (`1`/`sync`; `0`/`none`) |
//! | `fsync`, `fdatasync` | fsync() / fdatasync() every N writes |
//! | `rwmixread`, `rwmixwrite` | percent of reads (writes) of a mixed job |
//! | `runtime`, `time_based` | run time (s by default); with `time_based` the job runs for it whatever `size` |
//! | `ramp_time` | lead-in excluded from the statistics (adds to the run time) |
//! | `thinktime` | pause after each I/O, µs by default |
//! | `filename`, `directory` | the file (a `[[files]]` entry; shared by jobs naming it) |
//! | `randrepeat`, `randseed` | the run's seed (`randrepeat=0`, a time-based seed, is refused: runs are deterministic) |
//! | `nice`, `prio`, `prioclass` | nice value, I/O priority level and class (1 RT, 2 BE, 3 IDLE) |
//! | `norandommap` | random offsets drawn with replacement (default: fio's random map, each block once per pass) |
//! | `stonewall`, `wait_for_previous` | start after the jobs above end (known only for `time_based` jobs) |
//! | `name`, `description`, `group_reporting`, `thread` | accepted, no effect on the model |
//!
//! Sizes take fio's suffixes with its default `kb_base=1024`: `k`, `m`,
//! `g`, `t`, `p` (optionally followed by `b`) are powers of 1024, and
//! `kib`, `mib`, ... are powers of 1000 (fio's compatibility reversal).
//! Random I/O without `norandommap` visits each block of the region once
//! per pass in a seeded random order (a shuffled sequential job), like
//! fio's random map; a time-based job repeats the same order each pass.
//!
//! Any other key is an error naming it and its line; a bad value is an
//! error naming the file, line, key and what was expected.

use super::spec::{IoEngine, JobOp, JobSpec, Order, Pattern, SchedPolicy};
use crate::error::{Error, Result};
use crate::types::IoClass;
use std::path::Path;

/// fio's default block size, bytes (`bs=4k`).
pub const DEFAULT_BS: u64 = 4096;

/// The largest size, offset or block size a job file may give, in bytes
/// (2^50, 1 PiB: far beyond any modelled device, and small enough that
/// `offset + size` never overflows).
pub const MAX_BYTES: u64 = 1 << 50;

/// The most clones one job may have (`numjobs`; the scenario allows 4096
/// threads in all).
pub const MAX_NUMJOBS: u64 = 4096;

/// A file the job file's jobs use, laid out before the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FioFile {
    /// Name (the job's `filename`, or fio's `jobname.N.0`).
    pub name: String,
    /// Size, MiB (the bytes the jobs need, rounded up to whole MiB).
    pub size_mib: u64,
}

/// A job file translated: the scenario parts it defines.
#[derive(Clone, Debug)]
pub struct FioWorkload {
    /// Scenario name: the job file's stem.
    pub name: String,
    /// `randseed` of the jobs, if any.
    pub seed: Option<u64>,
    /// The files, in order of first use.
    pub files: Vec<FioFile>,
    /// One job per fio job (per clone when clones get their own file).
    pub jobs: Vec<JobSpec>,
}

impl FioWorkload {
    /// The equivalent scenario TOML: `name`, `description`, `seed` (when
    /// the job file sets `randseed`), `[[files]]` and `[[jobs]]`; every
    /// other section takes its default.
    pub fn to_scenario_toml(&self) -> Result<String> {
        let mut t = toml::Table::new();
        t.insert("name".into(), self.name.clone().into());
        t.insert(
            "description".into(),
            format!("fio job file {}", self.name).into(),
        );
        if let Some(s) = self.seed {
            let v = match i64::try_from(s) {
                Ok(i) => toml::Value::Integer(i),
                Err(_) => toml::Value::String(s.to_string()),
            };
            t.insert("seed".into(), v);
        }
        let files = self
            .files
            .iter()
            .map(|f| {
                let mut ft = toml::Table::new();
                ft.insert("name".into(), f.name.clone().into());
                ft.insert("size_mib".into(), toml::Value::Integer(f.size_mib as i64));
                toml::Value::Table(ft)
            })
            .collect();
        t.insert("files".into(), toml::Value::Array(files));
        let jobs = self
            .jobs
            .iter()
            .map(toml::Value::try_from)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::config(format!("fio job translation: {e}")))?;
        t.insert("jobs".into(), toml::Value::Array(jobs));
        toml::to_string(&t).map_err(|e| Error::config(format!("fio job translation: {e}")))
    }
}

/// True when `path` holds an fio job file rather than a scenario TOML (or
/// a trace): its extension is `.fio`, or (another extension than `.toml`)
/// `head`, the file's first lines, starts with a `[section]` header and
/// holds an option line that is not TOML (`rw=randread`, `direct`).
pub fn is_job_file(path: &Path, head: &str) -> bool {
    let head = head.strip_prefix(crate::textfile::BOM).unwrap_or(head);
    match path.extension().and_then(|e| e.to_str()) {
        Some("fio") => true,
        Some("toml") => false,
        _ => {
            let mut lines = head
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with(';') && !l.starts_with('#'));
            let header = lines
                .next()
                .is_some_and(|l| l.starts_with('[') && !l.starts_with("[[") && l.ends_with(']'));
            header
                && lines.any(|l| {
                    !l.starts_with('[')
                        && match l.split_once('=') {
                            None => true,
                            Some((k, v)) => format!("{} = {}", k.trim(), v.trim())
                                .parse::<toml::Table>()
                                .is_err(),
                        }
                })
        }
    }
}

/// The most bytes of a file [`is_job_file`] needs to look at.
pub const DETECT_BYTES: u64 = 64 << 10;

/// One `key[=value]` line.
#[derive(Clone, Debug)]
struct Opt {
    key: String,
    value: Option<String>,
    line: usize,
}

/// A job section with the options it inherited and its own.
struct Section {
    name: String,
    line: usize,
    opts: Vec<Opt>,
}

/// Parses the job file `text` (`source` names it in errors: `source:LINE:
/// ...`) into files and jobs; the scenario name is `name`.
pub fn parse(text: &str, source: &str, name: &str) -> Result<FioWorkload> {
    let err = |line: usize, msg: String| Error::config(format!("{source}:{line}: {msg}"));
    let mut global: Vec<Opt> = Vec::new();
    let mut in_global = false;
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(head) = rest.strip_suffix(']').map(str::trim) else {
                return Err(err(
                    line,
                    format!("`{l}`: expected a section header `[name]`"),
                ));
            };
            if head.is_empty() || head.contains(['[', ']']) {
                return Err(err(
                    line,
                    format!("`{l}`: expected a section name between [ and ]"),
                ));
            }
            in_global = head == "global";
            if !in_global {
                sections.push(Section {
                    name: head.to_string(),
                    line,
                    opts: global.clone(),
                });
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (l, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(err(line, format!("`{l}`: expected key=value")));
        }
        check_key(key).map_err(|m| err(line, m))?;
        let opt = Opt {
            key: key.to_string(),
            value,
            line,
        };
        match (in_global, sections.last_mut()) {
            (true, _) => global.push(opt),
            (false, Some(s)) => s.opts.push(opt),
            (false, None) => {
                return Err(err(
                    line,
                    format!(
                        "key '{key}' comes before any section: put it under [global] or a [job]"
                    ),
                ))
            }
        }
    }
    if sections.is_empty() {
        return Err(Error::config(format!(
            "{source}: no job section: an fio job file needs at least one [jobname] section besides [global]"
        )));
    }
    let mut w = FioWorkload {
        name: name.to_string(),
        seed: None,
        files: Vec::new(),
        jobs: Vec::new(),
    };
    let mut seed_line = 0;
    // End of the latest time-based job so far (for stonewall), ms; None
    // once a job's end is known only at run time.
    let mut known_end: Option<f64> = Some(0.0);
    for s in &sections {
        let o = Options::read(s, source)?;
        if let Some((seed, line)) = o.randseed {
            match w.seed {
                Some(prev) if prev != seed => {
                    return Err(err(
                        line,
                        format!("key 'randseed' = {seed}: another job set randseed = {prev} (line {seed_line}); a run has one seed"),
                    ))
                }
                _ => {
                    w.seed = Some(seed);
                    seed_line = line;
                }
            }
        }
        let start_ms = match (o.stonewall, known_end) {
            (None, _) => 0.0,
            (Some(_), Some(end)) => end,
            (Some(line), None) => {
                return Err(err(
                    line,
                    "key 'stonewall': the jobs above end when their I/O is done, known only at run time; mmcsim models a stonewall only after time_based jobs".into(),
                ))
            }
        };
        let end = o
            .time_based
            .then(|| start_ms + o.ramp_ms + o.runtime_ms.unwrap_or(0.0));
        known_end = match (known_end, end) {
            (Some(k), Some(e)) => Some(k.max(e)),
            _ => None,
        };
        o.translate(s, start_ms, &mut w, source)?;
    }
    Ok(w)
}

/// Keys mmcsim reads, and keys accepted with no effect on the model.
const KEYS: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "size",
    "filesize",
    "offset",
    "numjobs",
    "iodepth",
    "ioengine",
    "direct",
    "buffered",
    "sync",
    "fsync",
    "fdatasync",
    "rwmixread",
    "rwmixwrite",
    "runtime",
    "time_based",
    "ramp_time",
    "thinktime",
    "filename",
    "directory",
    "randrepeat",
    "randseed",
    "nice",
    "prio",
    "prioclass",
    "norandommap",
    "stonewall",
    "wait_for_previous",
    "name",
    "description",
    "group_reporting",
    "thread",
];

fn check_key(key: &str) -> std::result::Result<(), String> {
    if KEYS.contains(&key) {
        Ok(())
    } else {
        Err(format!("key '{key}' is not modelled by mmcsim"))
    }
}

/// The access pattern of `rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    Mixed,
    RandMixed,
}

impl Rw {
    fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandMixed)
    }
    fn op(self) -> JobOp {
        match self {
            Rw::Read | Rw::RandRead => JobOp::Read,
            Rw::Write | Rw::RandWrite => JobOp::Write,
            Rw::Mixed | Rw::RandMixed => JobOp::Readwrite,
        }
    }
}

/// A job's options after inheritance, parsed; `*_line` say where a value
/// came from (0 = default).
struct Options {
    name: String,
    rw: Rw,
    /// Bytes skipped after each sequential I/O (`rw=write:N`).
    skip: u64,
    rw_line: usize,
    bs: (u64, u64),
    bs_line: usize,
    size: Option<(u64, usize)>,
    filesize: Option<(u64, usize)>,
    offset: u64,
    numjobs: u32,
    iodepth: u32,
    ioengine: IoEngine,
    direct: bool,
    sync: bool,
    fsync: u32,
    fdatasync: u32,
    rwmixread: Option<u32>,
    runtime_ms: Option<f64>,
    runtime_line: usize,
    time_based: bool,
    ramp_ms: f64,
    thinktime_us: f64,
    filename: Option<(String, usize)>,
    directory: Option<String>,
    randseed: Option<(u64, usize)>,
    nice: i32,
    prio: Option<u8>,
    prioclass: Option<IoClass>,
    norandommap: bool,
    stonewall: Option<usize>,
}

impl Options {
    /// Reads section `s`'s options (inherited, then its own) in order.
    fn read(s: &Section, source: &str) -> Result<Options> {
        let mut o = Options {
            name: s.name.clone(),
            rw: Rw::Read,
            skip: 0,
            rw_line: 0,
            bs: (DEFAULT_BS, DEFAULT_BS),
            bs_line: 0,
            size: None,
            filesize: None,
            offset: 0,
            numjobs: 1,
            iodepth: 1,
            ioengine: IoEngine::Psync,
            direct: false,
            sync: false,
            fsync: 0,
            fdatasync: 0,
            rwmixread: None,
            runtime_ms: None,
            runtime_line: 0,
            time_based: false,
            ramp_ms: 0.0,
            thinktime_us: 0.0,
            filename: None,
            directory: None,
            randseed: None,
            nice: 0,
            prio: None,
            prioclass: None,
            norandommap: false,
            stonewall: None,
        };
        for opt in &s.opts {
            o.set(opt).map_err(|m| {
                Error::config(format!(
                    "{source}:{}: key '{}'{}: {m}",
                    opt.line,
                    opt.key,
                    opt.value
                        .as_ref()
                        .map(|v| format!(" = '{v}'"))
                        .unwrap_or_default()
                ))
            })?;
        }
        Ok(o)
    }

    /// Applies one option.
    fn set(&mut self, opt: &Opt) -> std::result::Result<(), String> {
        let key = opt.key.as_str();
        // Flags may stand alone (`time_based`, `direct`): they mean 1.
        let flag = || -> std::result::Result<bool, String> {
            match opt.value.as_deref().unwrap_or("1") {
                "1" | "true" => Ok(true),
                "0" | "false" => Ok(false),
                _ => Err("expected 0 or 1".into()),
            }
        };
        if matches!(
            key,
            "description" | "group_reporting" | "thread" | "stonewall" | "wait_for_previous"
        ) {
            if key == "stonewall" || key == "wait_for_previous" {
                self.stonewall = flag()?.then_some(opt.line);
            }
            return Ok(());
        }
        if matches!(
            key,
            "time_based" | "direct" | "buffered" | "norandommap" | "randrepeat"
        ) {
            let v = flag()?;
            match key {
                "time_based" => self.time_based = v,
                "direct" => self.direct = v,
                "buffered" => self.direct = !v,
                "norandommap" => self.norandommap = v,
                _ if !v => {
                    return Err("a time-seeded random stream is not modelled: mmcsim runs are deterministic; keep randrepeat=1 and set randseed (or simctl --seed)".into())
                }
                _ => {}
            }
            return Ok(());
        }
        let Some(v) = opt.value.as_deref() else {
            return Err("expected key=value".into());
        };
        match key {
            "name" => {
                if v.is_empty() {
                    return Err("expected a job name".into());
                }
                self.name = v.to_string();
            }
            "rw" | "readwrite" => {
                let (kind, skip) = match v.split_once(':') {
                    Some((k, n)) => (k, Some(n)),
                    None => (v, None),
                };
                self.rw = match kind {
                    "read" => Rw::Read,
                    "write" => Rw::Write,
                    "randread" => Rw::RandRead,
                    "randwrite" => Rw::RandWrite,
                    "rw" | "readwrite" => Rw::Mixed,
                    "randrw" => Rw::RandMixed,
                    "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
                        return Err("trim (discard) jobs are not modelled by mmcsim".into())
                    }
                    _ => {
                        return Err(
                            "expected read, write, randread, randwrite, rw, readwrite or randrw (optionally :N)".into(),
                        )
                    }
                };
                self.skip = match skip {
                    None => 0,
                    Some(_) if self.rw.random() => return Err(
                        "the ':N' suffix of random I/O (a new random offset every N I/Os) is not modelled; it is supported on sequential I/O (skip N bytes after each I/O)".into(),
                    ),
                    Some(n) => size(n).map_err(|e| format!("after ':': {e}"))?,
                };
                self.rw_line = opt.line;
            }
            "bs" | "blocksize" => {
                if v.contains(['-', ':']) {
                    return Err(
                        "a block size range is not modelled; give one size (or read,write sizes)"
                            .into(),
                    );
                }
                let mut parts = v.split(',');
                let r = parts.next().unwrap_or("");
                let w = parts.next();
                if parts.next().is_some_and(|t| !t.trim().is_empty()) {
                    return Err("a trim block size is not modelled (no trim jobs)".into());
                }
                let read = if r.trim().is_empty() {
                    DEFAULT_BS
                } else {
                    positive(size(r)?)?
                };
                let write = match w {
                    None => read,
                    Some(w) if w.trim().is_empty() => DEFAULT_BS,
                    Some(w) => positive(size(w)?)?,
                };
                self.bs = (read, write);
                self.bs_line = opt.line;
            }
            "size" => self.size = Some((positive(size(v)?)?, opt.line)),
            "filesize" => self.filesize = Some((positive(size(v)?)?, opt.line)),
            "offset" => self.offset = size(v)?,
            "numjobs" => self.numjobs = count(v, 1, MAX_NUMJOBS)? as u32,
            "iodepth" => self.iodepth = count(v, 1, u64::from(super::spec::MAX_IODEPTH))? as u32,
            "ioengine" => {
                self.ioengine = match v {
                    "sync" => IoEngine::Sync,
                    "psync" => IoEngine::Psync,
                    "pvsync" => IoEngine::Pvsync,
                    "libaio" => IoEngine::Libaio,
                    "io_uring" => IoEngine::IoUring,
                    _ => return Err(
                        "expected an engine mmcsim models: sync, psync, pvsync, libaio or io_uring"
                            .into(),
                    ),
                }
            }
            "sync" => {
                self.sync = match v {
                    "1" | "sync" => true,
                    "0" | "none" => false,
                    "dsync" => {
                        return Err(
                            "O_DSYNC jobs are not modelled; use sync=1 (O_SYNC) or fdatasync=N"
                                .into(),
                        )
                    }
                    _ => return Err("expected 0, 1, none or sync".into()),
                }
            }
            "fsync" => self.fsync = count(v, 0, u64::from(u32::MAX))? as u32,
            "fdatasync" => self.fdatasync = count(v, 0, u64::from(u32::MAX))? as u32,
            "rwmixread" => self.rwmixread = Some(count(v, 0, 100)? as u32),
            "rwmixwrite" => self.rwmixread = Some(100 - count(v, 0, 100)? as u32),
            "runtime" => {
                self.runtime_ms = Some(time_us(v, 1e6)? / 1e3);
                self.runtime_line = opt.line;
            }
            "ramp_time" => self.ramp_ms = time_us(v, 1e6)? / 1e3,
            "thinktime" => self.thinktime_us = time_us(v, 1.0)?,
            "filename" => {
                if v.contains(':') {
                    return Err(
                        "several files per job (':'-separated) are not modelled; give one file"
                            .into(),
                    );
                }
                if v.is_empty() {
                    return Err("expected a file name".into());
                }
                self.filename = Some((v.to_string(), opt.line));
            }
            "directory" => {
                if v.contains(':') {
                    return Err("several directories (':'-separated) are not modelled".into());
                }
                self.directory = Some(v.trim_end_matches('/').to_string());
            }
            "randseed" => {
                self.randseed = Some((int(v).ok_or("expected an unsigned integer seed")?, opt.line))
            }
            "nice" => {
                self.nice = v
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (-20..=19).contains(n))
                    .ok_or("expected a nice value -20..=19")?
            }
            "prio" => self.prio = Some(count(v, 0, 7)? as u8),
            "prioclass" => {
                self.prioclass = match v {
                    "0" => None,
                    "1" => Some(IoClass::Rt),
                    "2" => Some(IoClass::Be),
                    "3" => Some(IoClass::Idle),
                    _ => return Err("expected 0 (none), 1 (RT), 2 (BE) or 3 (IDLE)".into()),
                }
            }
            other => return Err(format!("key '{other}' is not modelled by mmcsim")),
        }
        Ok(())
    }

    /// Adds this job's files and job specs to `w`.
    fn translate(
        &self,
        s: &Section,
        start_ms: f64,
        w: &mut FioWorkload,
        source: &str,
    ) -> Result<()> {
        let at = |line: usize, msg: String| {
            Error::config(format!(
                "{source}:{}: job `{}`: {msg}",
                if line == 0 { s.line } else { line },
                self.name
            ))
        };
        let op = self.rw.op();
        let bs = match op {
            JobOp::Read => self.bs.0,
            JobOp::Write => self.bs.1,
            JobOp::Readwrite if self.bs.0 == self.bs.1 => self.bs.0,
            JobOp::Readwrite => {
                return Err(at(
                    self.bs_line,
                    format!(
                        "key 'bs': reads of {} and writes of {} bytes in one mixed job are not modelled; give one size",
                        self.bs.0, self.bs.1
                    ),
                ))
            }
        };
        let io_size =
            match (self.size, self.filesize) {
                (Some((n, _)), _) => n,
                (None, Some((f, line))) => f
                    .checked_sub(self.offset)
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        at(
                            line,
                            format!(
                                "key 'filesize' = {f}: leaves no I/O after offset {}",
                                self.offset
                            ),
                        )
                    })?,
                (None, None) => return Err(at(
                    0,
                    "neither size nor filesize is given: fio needs one to know how much I/O to do"
                        .into(),
                )),
            };
        let file_bytes = match self.filesize {
            Some((f, _)) => f,
            None => self.offset + io_size,
        };
        if self.offset + io_size > file_bytes {
            let line = self.size.map_or(0, |(_, l)| l);
            return Err(at(
                line,
                format!(
                    "offset {} + size {io_size} bytes runs past the end of the {file_bytes}-byte file",
                    self.offset
                ),
            ));
        }
        if io_size < bs {
            let line = self.size.map_or(self.bs_line, |(_, l)| l);
            return Err(at(
                line,
                format!("size {io_size} bytes is smaller than one block of {bs} bytes"),
            ));
        }
        if self.time_based && self.runtime_ms.is_none() {
            return Err(at(
                0,
                "time_based needs a runtime (fio would run forever)".into(),
            ));
        }
        if self.runtime_ms == Some(0.0) {
            return Err(at(
                self.runtime_line,
                "key 'runtime': expected a run time > 0".into(),
            ));
        }
        let (pattern, order, stride) = match (self.rw.random(), self.norandommap, self.skip) {
            (true, true, _) => (Pattern::Random, Order::Ascending, None),
            (true, false, _) => (Pattern::Sequential, Order::Shuffled, None),
            (false, _, 0) => (Pattern::Sequential, Order::Ascending, None),
            (false, _, n) => (Pattern::Strided, Order::Ascending, Some(bs + n)),
        };
        let path = |file: &str| -> String {
            let p = match &self.directory {
                Some(d) => format!("{d}/{file}"),
                None => file.to_string(),
            };
            p.trim_start_matches('/').to_string()
        };
        // Clones share a named file; otherwise each gets fio's
        // `jobname.N.0`.
        let (files, threads): (Vec<String>, u32) = match &self.filename {
            Some((f, _)) => (vec![path(f)], self.numjobs),
            None => (
                (0..self.numjobs)
                    .map(|i| path(&format!("{}.{i}.0", self.name)))
                    .collect(),
                1,
            ),
        };
        let size_mib = file_bytes.div_ceil(1 << 20);
        for file in files {
            match w.files.iter_mut().find(|f| f.name == file) {
                Some(f) => f.size_mib = f.size_mib.max(size_mib),
                None => w.files.push(FioFile {
                    name: file.clone(),
                    size_mib,
                }),
            }
            let duration_ms = self.runtime_ms.map(|r| self.ramp_ms + r);
            let job = JobSpec {
                name: self.name.clone(),
                file,
                op,
                pattern,
                order,
                request_bytes: bs,
                stride_bytes: stride,
                align_bytes: None,
                region_offset_bytes: self.offset,
                region_bytes: Some(io_size),
                threads,
                requests: (!self.time_based).then_some(io_size / bs),
                duration_ms,
                think_time_us: self.thinktime_us,
                start_ms,
                direct: self.direct,
                sync: self.sync,
                fsync_every: self.fsync,
                fdatasync_every: self.fdatasync,
                nice: self.nice,
                sched_policy: SchedPolicy::Normal,
                ioprio_class: self.prioclass,
                ioprio_level: self.prio,
                pid: None,
                rwmix_read: (op == JobOp::Readwrite).then_some(self.rwmixread.unwrap_or(50)),
                ioengine: self.ioengine,
                iodepth: self.iodepth,
                ramp_ms: self.ramp_ms,
            };
            job.check_io()
                .map_err(|m| Error::config(format!("{source}:{}: {m}", s.line)))?;
            w.jobs.push(job);
        }
        Ok(())
    }
}

/// An integer, decimal or `0x` hexadecimal.
fn int(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// An integer in `min..=max`.
fn count(v: &str, min: u64, max: u64) -> std::result::Result<u64, String> {
    int(v)
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("expected an integer {min}..={max}"))
}

fn positive(n: u64) -> std::result::Result<u64, String> {
    if n == 0 {
        Err("expected a size > 0".into())
    } else {
        Ok(n)
    }
}

/// A size in bytes with fio's suffixes at `kb_base=1024`: `k`/`kb`,
/// `m`/`mb`, ... are powers of 1024, `kib`, `mib`, ... powers of 1000.
pub fn size(v: &str) -> std::result::Result<u64, String> {
    let expected = || {
        format!("expected a size in bytes with an optional k/m/g/t/p suffix (base 1024), e.g. 4k; got '{v}'")
    };
    let t = v.trim().to_ascii_lowercase();
    if t.ends_with('%') {
        return Err(
            "a percentage of the file is not modelled; give a size in bytes (e.g. 64m)".into(),
        );
    }
    // A hexadecimal number (`0x...`) takes no suffix.
    let (num, suffix) = if t.starts_with("0x") {
        (t.as_str(), "")
    } else {
        t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()))
    };
    let n = int(num).ok_or_else(expected)?;
    let pow = |base: u64, e: u32| base.checked_pow(e);
    let mult = match suffix {
        "" | "b" => Some(1),
        "k" | "kb" => pow(1024, 1),
        "m" | "mb" => pow(1024, 2),
        "g" | "gb" => pow(1024, 3),
        "t" | "tb" => pow(1024, 4),
        "p" | "pb" => pow(1024, 5),
        "kib" => pow(1000, 1),
        "mib" => pow(1000, 2),
        "gib" => pow(1000, 3),
        "tib" => pow(1000, 4),
        "pib" => pow(1000, 5),
        _ => None,
    }
    .ok_or_else(expected)?;
    n.checked_mul(mult)
        .filter(|&b| b <= MAX_BYTES)
        .ok_or_else(|| {
            format!("{v}: expected at most {MAX_BYTES} bytes (2^50, 1 PiB), the limit of a size, offset or block size")
        })
}

/// A time in µs: a number with an optional `us`/`usec`, `ms`/`msec`,
/// `s`/`sec`, `m`/`min`, `h` or `d` suffix; without one, `default_us` µs
/// per unit.
fn time_us(v: &str, default_us: f64) -> std::result::Result<f64, String> {
    let t = v.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!(
            "expected a whole time with an optional unit (us, ms, s, m, h, d), e.g. 30s; got '{v}'"
        )
    })?;
    let unit = match suffix {
        "" => default_us,
        "us" | "usec" => 1.0,
        "ms" | "msec" => 1e3,
        "s" | "sec" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        "d" => 86400e6,
        _ => {
            return Err(format!(
                "unknown time unit '{suffix}': expected us, ms, s, m, h or d"
            ))
        }
    };
    Ok(n as f64 * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_kb_base_1024() {
        assert_eq!(size("4k"), Ok(4096));
        assert_eq!(size("4KB"), Ok(4096));
        assert_eq!(size("1m"), Ok(1 << 20));
        assert_eq!(size("2g"), Ok(2 << 30));
        assert_eq!(size("4kib"), Ok(4000));
        assert_eq!(size("512"), Ok(512));
        assert_eq!(size("0x1000"), Ok(4096));
        assert!(size("4q").is_err());
        assert!(size("50%").unwrap_err().contains("percentage"));
        assert_eq!(size("1p"), Ok(MAX_BYTES));
        for big in [
            "1025p",
            "18446744073709551615",
            "0xffffffffffffffff",
            "16777216t",
        ] {
            let e = size(big).unwrap_err();
            assert!(e.contains("at most 1125899906842624 bytes"), "{big}: {e}");
        }
    }

    /// A huge offset is refused at its file, line and key with the limit
    /// (it wrapped past the file-size check and surfaced as "u64 value was
    /// too large" from the scenario translation).
    #[test]
    fn a_huge_offset_names_file_line_key_and_limit() {
        let text = "[global]\nrw=randread\nsize=16m\n[j]\noffset=18446744073709551615\n";
        let e = parse(text, "o.fio", "o").unwrap_err().to_string();
        assert!(
            e.starts_with("o.fio:5: key 'offset' = '18446744073709551615': ")
                && e.contains("at most 1125899906842624 bytes"),
            "{e}"
        );
    }

    #[test]
    fn times_take_units_and_the_key_default() {
        assert_eq!(time_us("30", 1e6), Ok(30e6));
        assert_eq!(time_us("250ms", 1e6), Ok(250e3));
        assert_eq!(time_us("100", 1.0), Ok(100.0));
        assert!(time_us("1.5s", 1e6).is_err());
    }

    #[test]
    fn a_job_inherits_the_globals_above_it_only() {
        let text = "[global]\nbs=8k\nsize=1m\n[a]\nrw=read\n[global]\nbs=16k\n[b]\nrw=write\n";
        let w = parse(text, "t.fio", "t").unwrap();
        assert_eq!(w.jobs[0].request_bytes, 8192);
        assert_eq!(w.jobs[1].request_bytes, 16384);
        assert_eq!(w.jobs[0].requests, Some(128));
        assert_eq!(w.files[0].name, "a.0.0");
    }

    #[test]
    fn random_io_uses_the_random_map_unless_norandommap() {
        let w = parse("[r]\nrw=randread\nsize=1m\n", "t.fio", "t").unwrap();
        assert_eq!(
            (w.jobs[0].pattern, w.jobs[0].order),
            (Pattern::Sequential, Order::Shuffled)
        );
        let w = parse("[r]\nrw=randread\nsize=1m\nnorandommap\n", "t.fio", "t").unwrap();
        assert_eq!(w.jobs[0].pattern, Pattern::Random);
    }

    #[test]
    fn sequential_skip_makes_a_strided_job() {
        let w = parse("[w]\nrw=write:4k\nsize=1m\n", "t.fio", "t").unwrap();
        assert_eq!(w.jobs[0].pattern, Pattern::Strided);
        assert_eq!(w.jobs[0].stride_bytes, Some(8192));
    }
}
