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
//! | `bssplit`, `blockalign` | per-call sizes drawn by weight ([`crate::workload::block_sizes`]); alignment of random offsets |
//! | `io_size`/`io_limit`, `number_ios` | bytes and I/Os per clone and pass |
//! | `random_distribution`, `percentage_random` | skewed offsets ([`crate::workload::distribution`]); a sequential share |
//! | `rate`, `rate_iops`, `rate_process=linear` | rate limits per direction ([`crate::workload::rate`]) |
//! | `offset_increment`, `nrfiles`, `file_service_type` | clone regions; several files per clone |
//! | `loops`, `startdelay`, `end_fsync`, `fsync_on_close`, `create_on_open` | passes, start delay, end-of-pass fsyncs, no layout |
//! | `new_group`, `group_reporting`, `percentile_list` | how fio's JSON output reports the jobs ([`FioReportJob`]) |
//! | `name` | the job's name |
//!
//! [`keys`] lists the options accepted with no effect (reporting, CPU
//! placement, buffer contents) and those refused with their reason.
//!
//! Sizes take fio's suffixes with its default `kb_base=1024`: `k`, `m`,
//! `g`, `t`, `p` (optionally followed by `b`) are powers of 1024, and
//! `kib`, `mib`, ... are powers of 1000 (fio's compatibility reversal).
//! Random I/O without `norandommap` visits each block of the region once
//! per pass in a seeded random order (a shuffled sequential job), like
//! fio's random map; a time-based job repeats the same order each pass.
//!
//! A refused or unknown key is an error naming it and its line; a bad
//! value is an error naming the file, line, key and what was expected.

mod job;
pub mod keys;
mod option_error;
mod parse;
mod pattern;
mod section;
mod translate;
mod values;

#[cfg(test)]
mod tests;

pub use option_error::{JobProblem, LineProblem, OptionError};
pub use parse::parse;
pub use values::size;

use crate::error::{Error, Result};
use crate::workload::spec::JobSpec;
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
    /// Laid out with data before the run (false for `create_on_open`).
    pub prewrite: bool,
}

/// How one translated job is reported in fio's output: its fio job, its
/// clone numbers and its reporting group.
#[derive(Clone, Debug, PartialEq)]
pub struct FioReportJob {
    /// The fio job's name.
    pub jobname: String,
    /// Reporting group (a `stonewall` or `new_group` starts the next).
    pub groupid: u32,
    /// `group_reporting`: the group's jobs are reported as one.
    pub group_reporting: bool,
    /// Completion-latency percentiles to report (`percentile_list`, else
    /// fio's default list).
    pub percentiles: Vec<f64>,
}

/// fio's default completion-latency percentiles (`def_percentile_list`,
/// fio `stat.c`).
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

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
    /// How each of `jobs` is reported (same order).
    pub report: Vec<FioReportJob>,
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
                if !f.prewrite {
                    ft.insert("prewrite".into(), false.into());
                }
                toml::Value::Table(ft)
            })
            .collect();
        t.insert("files".into(), toml::Value::Array(files));
        let jobs = self
            .jobs
            .iter()
            .map(toml::Value::try_from)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(Error::FioTranslation)?;
        t.insert("jobs".into(), toml::Value::Array(jobs));
        toml::to_string(&t).map_err(Error::FioTranslation)
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
