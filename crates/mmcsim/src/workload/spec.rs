//! What a scenario asks of the workload: synthetic jobs (application
//! threads), scripted threads, and a trace to replay. The scenario file
//! (`crate::config`) holds these sections; the workload stage owns their
//! meaning.

use super::block_sizes::{BlockSizes, SizeWeight};
use super::distribution::Distribution;
use super::job_error::{JobError, JobRule, TimeError};
use crate::types::{IoClass, IoPrio};
use crate::workload::trace::{Format, TimeUnit};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Direction of a job's I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobOp {
    /// read() calls.
    Read,
    /// write() calls.
    Write,
    /// A mix of reads and writes (fio `rw=rw`/`randrw`): each call is a
    /// read with probability `rwmix_read` percent, else a write.
    Readwrite,
}

/// How a job picks offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Consecutive `request_bytes` slots of the region.
    Sequential,
    /// Uniformly random offsets in the region, aligned to `align_bytes`.
    Random,
    /// One request at the start of every `stride_bytes` of the region.
    Strided,
}

/// Order in which a sequential or strided job visits its offsets.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Increasing offsets.
    #[default]
    Ascending,
    /// Decreasing offsets.
    Descending,
    /// A seeded random permutation of the offsets (each visited once).
    Shuffled,
}

/// A synthetic job: `threads` closed-loop threads, each issuing its next
/// call when the previous one returns, plus the think time.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// Name (the process name of its threads).
    pub name: String,
    /// File the job works on.
    pub file: String,
    /// read or write.
    pub op: JobOp,
    /// Offset pattern.
    pub pattern: Pattern,
    /// Visiting order for sequential and strided patterns.
    #[serde(default)]
    pub order: Order,
    /// Bytes per call (1 = a 1-byte read, which reads its 4 KiB page).
    pub request_bytes: u64,
    /// Distance between strided requests, bytes.
    #[serde(default)]
    pub stride_bytes: Option<u64>,
    /// Alignment of random offsets, bytes (default: `request_bytes`).
    #[serde(default)]
    pub align_bytes: Option<u64>,
    /// Start of the job's region within the file, bytes.
    #[serde(default)]
    pub region_offset_bytes: u64,
    /// Length of the region, bytes (default: to the end of the file).
    #[serde(default)]
    pub region_bytes: Option<u64>,
    /// Number of threads.
    #[serde(default = "one")]
    pub threads: u32,
    /// Calls per thread (default: one pass over the offsets for sequential
    /// and strided patterns; required for random unless `duration_ms`).
    #[serde(default)]
    pub requests: Option<u64>,
    /// Stop issuing after this long, ms.
    #[serde(default)]
    pub duration_ms: Option<f64>,
    /// Pause between a call's return and the next call, µs.
    #[serde(default)]
    pub think_time_us: f64,
    /// When the job's threads start, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// O_DIRECT: bypass the page cache.
    #[serde(default)]
    pub direct: bool,
    /// O_SYNC / O_DSYNC writes (each write() returns once on the device).
    #[serde(default)]
    pub sync: bool,
    /// Call fsync() after every N writes (0 = never).
    #[serde(default)]
    pub fsync_every: u32,
    /// Call fdatasync() after every N writes (0 = never).
    #[serde(default)]
    pub fdatasync_every: u32,
    /// Nice value of the threads (-20..=19); the I/O priority level
    /// derives from it when `ioprio_level` is unset: (nice + 20) / 5.
    #[serde(default)]
    pub nice: i32,
    /// CPU scheduling policy: `normal` (default), `batch`, `idle`, `fifo`
    /// or `rr`. With no explicit `ioprio_class` the class follows it, as
    /// in the kernel: SCHED_IDLE → IDLE, SCHED_FIFO/RR → RT, else BE.
    #[serde(default)]
    pub sched_policy: SchedPolicy,
    /// I/O priority class set with ioprio_set(): `rt`, `be` or `idle`.
    #[serde(default)]
    pub ioprio_class: Option<IoClass>,
    /// I/O priority level 0 (highest) ..= 7 set with ioprio_set().
    #[serde(default)]
    pub ioprio_level: Option<u8>,
    /// First pid of the job's threads (each thread is its own process);
    /// default: 1000 + 100 × job index.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Percent of a `readwrite` job's calls that are reads (fio
    /// `rwmixread`), 0..=100; default 50.
    #[serde(default)]
    pub rwmix_read: Option<u32>,
    /// How each thread issues its I/O (fio `ioengine`): synchronous
    /// `pread`/`pwrite` (`psync`, the default) or asynchronous submission
    /// (`libaio`, `io_uring`).
    #[serde(default)]
    pub ioengine: IoEngine,
    /// I/Os a thread keeps in flight (fio `iodepth`), ≥ 1. Only the
    /// asynchronous engines on `direct` I/O use more than 1 (each thread
    /// submits without waiting and reaps completions); a synchronous
    /// engine, like fio's, has one call in flight whatever the depth.
    #[serde(default = "one")]
    pub iodepth: u32,
    /// Ramp-up time, ms (fio `ramp_time`): calls completing in the first
    /// `ramp_ms` after `start_ms` are excluded from the statistics (device
    /// and block counters still see them). `duration_ms` includes it.
    #[serde(default)]
    pub ramp_ms: f64,
    /// Bytes per write call when writes differ from reads (fio `bs=R,W`);
    /// default `request_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_request_bytes: Option<u64>,
    /// Per-call sizes drawn by weight (fio `bssplit`), for reads (and
    /// writes unless `write_bssplit`); empty = `request_bytes` every call.
    /// See [`super::block_sizes`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bssplit: Vec<SizeWeight>,
    /// Per-call sizes of writes, when they differ from the reads'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bssplit: Option<Vec<SizeWeight>>,
    /// How a random job picks blocks (fio `random_distribution`); see
    /// [`super::distribution`]. Default uniform.
    #[serde(default, skip_serializing_if = "is_uniform")]
    pub distribution: Distribution,
    /// Percent of a random job's calls that draw a random offset; the
    /// others continue right after the previous call (fio
    /// `percentage_random`), 0..=100. Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<u32>,
    /// Bytes each thread moves per pass (fio `size`/`io_size` with
    /// `bssplit`): the pass ends at the first call reaching it. Default:
    /// `requests` calls (or one pass over the region).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_pass: Option<u64>,
    /// Passes each thread makes (fio `loops`); a pass is `requests` calls
    /// (or `bytes_per_pass` bytes, or one sweep of the region). Ignored
    /// by a job with `duration_ms` and no `requests`. Default 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub loops: u32,
    /// Read rate limit per thread, bytes/s (fio `rate`); see
    /// [`super::rate`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate_bytes_per_s: Option<u64>,
    /// Write rate limit per thread, bytes/s (fio `rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_rate_bytes_per_s: Option<u64>,
    /// Read rate limit per thread, I/Os per second (fio `rate_iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate_iops: Option<u64>,
    /// Write rate limit per thread, I/Os per second (fio `rate_iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_rate_iops: Option<u64>,
    /// fsync() every file of a writing thread at the end of each pass
    /// (fio `end_fsync`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end_fsync: bool,
    /// fsync() every file of a writing thread when it closes them at the
    /// end of each pass (fio `fsync_on_close`): after the end-of-pass
    /// fsync() fio issues for it, a second one at close.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fsync_on_close: bool,
    /// Further files each thread works on after `file` (fio `nrfiles`,
    /// `filename=a:b`); each has its own region (`region_offset_bytes`,
    /// `region_bytes`) and offsets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_files: Vec<String>,
    /// Which file a multi-file thread serves next (fio
    /// `file_service_type`).
    #[serde(default, skip_serializing_if = "is_round_robin")]
    pub file_service: FileService,
    /// Calls on one file before switching (the `:N` of
    /// `file_service_type`), ≥ 1; default 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub file_service_calls: u32,
}

/// Which file a thread with several files serves next (fio
/// `file_service_type`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FileService {
    /// The files in turn, `file_service_calls` calls each (the default).
    #[default]
    Roundrobin,
    /// One file's pass (its region's calls) before the next.
    Sequential,
    /// A file chosen at random every `file_service_calls` calls.
    Random,
}

fn is_round_robin(f: &FileService) -> bool {
    *f == FileService::Roundrobin
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_uniform(d: &Distribution) -> bool {
    !d.is_skewed()
}

/// Checks what a job's further files (`more_files`), per-call sizes and
/// distribution need of the region: each further file exists
/// (`file_bytes` gives its size) and holds the region, the distribution's
/// absolute zones fit it, and its smallest call fits it.
pub fn check_more_files(
    j: &JobSpec,
    region: u64,
    file_bytes: impl Fn(&str) -> Option<u64>,
) -> Result<(), JobError> {
    j.check_io()?;
    let rules = || -> Result<(), JobRule> {
        for f in &j.more_files {
            let Some(bytes) = file_bytes(f) else {
                return Err(JobRule::UnknownMoreFile { file: f.clone() });
            };
            if j.region_offset_bytes + region > bytes {
                return Err(JobRule::MoreFileRegion {
                    offset: j.region_offset_bytes,
                    region,
                    file: f.clone(),
                    file_bytes: bytes,
                });
            }
        }
        j.distribution.check_region(region)?;
        for read in [true, false] {
            let min = j.block_sizes(read).min();
            if min > region {
                return Err(JobRule::CallBeyondRegion { min, region });
            }
            if j.direct && !j.block_sizes(read).all_multiple_of(512) {
                return Err(JobRule::DirectCallSizes);
            }
        }
        Ok(())
    };
    rules().map_err(|r| r.of(&j.name))
}

pub use super::job_error::MAX_IODEPTH;

/// How a job thread issues I/O (fio's `ioengine`, the ones mmcsim models).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum IoEngine {
    /// `read()`/`write()` (fio `sync`; modelled as `pread`/`pwrite`, the
    /// `lseek` fio adds for non-sequential offsets is not issued).
    Sync,
    /// `pread()`/`pwrite()` (fio `psync`).
    #[default]
    Psync,
    /// `preadv()`/`pwritev()` of one vector (fio `pvsync`; modelled as
    /// `pread`/`pwrite`).
    Pvsync,
    /// Linux native AIO (`io_submit`/`io_getevents`): asynchronous for
    /// O_DIRECT; buffered I/O completes inside `io_submit`, so it behaves
    /// as depth 1.
    Libaio,
    /// io_uring: asynchronous for O_DIRECT (buffered I/O with depth > 1
    /// goes to io-wq workers, which mmcsim does not model).
    #[serde(rename = "io_uring")]
    IoUring,
}

impl IoEngine {
    /// True for the engines that submit without waiting (libaio,
    /// io_uring).
    pub fn is_async(self) -> bool {
        matches!(self, IoEngine::Libaio | IoEngine::IoUring)
    }
}

fn one() -> u32 {
    1
}

/// A scripted thread: its system calls, in order, `repeat` times. Each
/// call is one line of text:
///
/// | call | meaning |
/// |---|---|
/// | `open PATH [FLAGS]` | `open(PATH, FLAGS)`, e.g. `O_CREAT\|O_TRUNC\|O_WRONLY`; later calls use this descriptor |
/// | `creat PATH` | `open(PATH, O_CREAT\|O_TRUNC\|O_WRONLY)` |
/// | `close` | close the current descriptor (the previous one becomes current) |
/// | `read BYTES`, `write BYTES` | at the descriptor's offset |
/// | `pread OFFSET BYTES`, `pwrite OFFSET BYTES` | at a byte offset |
/// | `lseek OFFSET [SET\|CUR\|END]` | move the offset |
/// | `fsync`, `fdatasync`, `ftruncate BYTES` | on the current descriptor |
/// | `unlink PATH`, `rmdir PATH`, `mkdir PATH`, `rename FROM TO`, `sync` | |
/// | `sleep US` | think time before the next call, µs |
///
/// A failed call returns −errno as Linux would and is counted in the
/// report's `calls.failed`; `on_error = "stop"` ends the run at it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptSpec {
    /// Name (the process name of the thread).
    pub name: String,
    /// The calls, one per entry.
    pub calls: Vec<String>,
    /// Times the whole list runs.
    #[serde(default = "one")]
    pub repeat: u32,
    /// Pause between a call's return and the next call, µs.
    #[serde(default)]
    pub think_time_us: f64,
    /// When the thread starts, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// Process id (default 5000 + index).
    #[serde(default)]
    pub pid: Option<u32>,
    /// What a failed call does: `continue` (default; the script goes on,
    /// as a program ignoring the return value would) or `stop` (the run
    /// ends with an error naming the call and its errno).
    #[serde(default)]
    pub on_error: OnError,
}

/// What a script does when one of its calls fails (`on_error`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Count the failure (`calls.failed`) and go on with the next call.
    #[default]
    Continue,
    /// End the run with an error naming the script, call and errno.
    Stop,
}

/// Checks a time from input: finite, ≥ 0, and (as `unit_ns` ns per unit)
/// within the simulated clock's limit ([`crate::engine::MAX_SIM_NS`]).
/// Returns it in ns; the error names `field`.
pub fn checked_time_ns(field: &'static str, v: f64, unit_ns: f64) -> Result<u64, TimeError> {
    if !(v.is_finite() && v >= 0.0) {
        return Err(TimeError::NotATime { field, value: v });
    }
    let ns = (v * unit_ns).round();
    if ns > crate::engine::MAX_SIM_NS as f64 {
        return Err(TimeError::BeyondClock {
            field,
            value: v,
            from_start: false,
        });
    }
    Ok(ns as u64)
}

pub use super::job_error::show_time;

/// A thread's CPU scheduling policy (`sched_setscheduler`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SchedPolicy {
    /// SCHED_NORMAL (CFS).
    #[default]
    Normal,
    /// SCHED_BATCH.
    Batch,
    /// SCHED_IDLE.
    Idle,
    /// SCHED_FIFO (real time).
    Fifo,
    /// SCHED_RR (real time).
    Rr,
}

impl JobSpec {
    /// True when the job's threads submit asynchronously (an asynchronous
    /// engine on O_DIRECT I/O), keeping up to `iodepth` I/Os in flight.
    pub fn submits_async(&self) -> bool {
        self.ioengine.is_async() && self.direct
    }

    /// Checks the fields the synthetic-job threads add to the scenario's
    /// checks: the read/write mix, the engine and depth, the ramp.
    pub fn check_io(&self) -> Result<(), JobError> {
        self.check_io_rules().map_err(|r| r.of(&self.name))
    }

    /// [`JobSpec::check_io`]'s rules.
    fn check_io_rules(&self) -> Result<(), JobRule> {
        if let Some(percent) = self.rwmix_read {
            if percent > 100 {
                return Err(JobRule::RwmixRange { percent });
            }
            if self.op != JobOp::Readwrite {
                return Err(JobRule::RwmixNotMixed);
            }
        }
        if !(1..=MAX_IODEPTH).contains(&self.iodepth) {
            return Err(JobRule::Iodepth {
                depth: self.iodepth,
            });
        }
        if self.ioengine == IoEngine::IoUring && !self.direct && self.iodepth > 1 {
            return Err(JobRule::BufferedIoUring);
        }
        if self.submits_async() && self.sync {
            return Err(JobRule::AsyncOsync);
        }
        if !(self.ramp_ms.is_finite() && self.ramp_ms >= 0.0) {
            return Err(JobRule::Time(TimeError::NotATime {
                field: "ramp_ms",
                value: self.ramp_ms,
            }));
        }
        self.check_pattern()
    }

    /// Checks the per-call sizes, distribution, random share, passes and
    /// file service.
    fn check_pattern(&self) -> Result<(), JobRule> {
        BlockSizes::check(&self.bssplit).map_err(JobRule::Bssplit)?;
        if let Some(w) = &self.write_bssplit {
            BlockSizes::check(w).map_err(JobRule::WriteBssplit)?;
        }
        let zero = |field| Err(JobRule::Zero { field });
        if self.write_request_bytes == Some(0) {
            return zero("write_request_bytes");
        }
        self.distribution.check()?;
        if self.random_percent.is_some_and(|p| p > 100) {
            return Err(JobRule::RandomPercent);
        }
        let variable = !self.bssplit.is_empty() || self.write_bssplit.is_some();
        if variable && self.pattern == Pattern::Strided {
            return Err(JobRule::StridedBssplit);
        }
        if (self.distribution.is_skewed() || self.random_percent.is_some())
            && !self.random_offsets()
        {
            return Err(JobRule::SkewWithoutRandom);
        }
        if self.loops == 0 {
            return zero("loops");
        }
        if self.file_service_calls == 0 {
            return zero("file_service_calls");
        }
        if self.bytes_per_pass == Some(0) {
            return zero("bytes_per_pass");
        }
        Ok(())
    }

    /// True when the job draws random offsets (uniform with or without
    /// fio's random map, or a distribution).
    pub fn random_offsets(&self) -> bool {
        self.pattern == Pattern::Random
            || (self.pattern == Pattern::Sequential && self.order == Order::Shuffled)
    }

    /// The sizes of the job's reads (`read`) or writes.
    pub fn block_sizes(&self, read: bool) -> BlockSizes {
        match (read, &self.write_bssplit) {
            (false, Some(w)) => {
                BlockSizes::new(self.write_request_bytes.unwrap_or(self.request_bytes), w)
            }
            (false, None) if self.bssplit.is_empty() => {
                BlockSizes::Fixed(self.write_request_bytes.unwrap_or(self.request_bytes))
            }
            _ => BlockSizes::new(self.request_bytes, &self.bssplit),
        }
    }

    /// Every file of the job: `file`, then `more_files`.
    pub fn all_files(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.file.as_str()).chain(self.more_files.iter().map(String::as_str))
    }

    /// The I/O priority of the job's threads: an explicit class and level
    /// where given; otherwise the class from the CPU policy and the level
    /// from nice (reference io-schedulers.md §0).
    pub fn ioprio(&self) -> IoPrio {
        let from_nice = IoPrio::from_nice(self.nice);
        let class = self.ioprio_class.unwrap_or(match self.sched_policy {
            SchedPolicy::Idle => IoClass::Idle,
            SchedPolicy::Fifo | SchedPolicy::Rr => IoClass::Rt,
            SchedPolicy::Normal | SchedPolicy::Batch => IoClass::Be,
        });
        IoPrio {
            class,
            level: self.ioprio_level.unwrap_or(from_nice.level),
        }
    }
}

/// How trace records are issued.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum ReplayMode {
    /// Open loop: each record at its recorded time (divided by `speed`),
    /// whatever the simulated system does.
    #[default]
    Timed,
    /// Closed loop per process: a process issues its next record when its
    /// previous one completes, plus the think time recorded between them.
    Closed,
}

/// What to do with records addressing beyond the modelled device.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum FitMode {
    /// Refuse the trace at the first record beyond the device, naming its
    /// line and sector.
    #[default]
    Error,
    /// Map sectors modulo the capacity.
    Wrap,
    /// Pack the touched 1 MiB regions densely, preserving their order and
    /// the distances inside each run of touched regions.
    Compact,
}

/// A trace to replay.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Trace file, relative to the scenario file (gzip is read
    /// transparently).
    pub path: PathBuf,
    /// Format, by name (see `simctl trace formats`); absent = detected
    /// from the content.
    #[serde(default)]
    pub format: Option<Format>,
    /// Time unit for formats that do not fix one (`s`, `ms`, `us`, `ns`,
    /// `100ns`, `ps`).
    #[serde(default)]
    pub time_unit: Option<TimeUnit>,
    /// Replay only this device of a multi-device trace: its id as a
    /// number, or as the string `"MAJ,MIN"` (`"179,0"`, as blkparse, block
    /// ftrace and blktrace name devices; stored as the kernel's `dev_t`,
    /// `major << 20 | minor`).
    #[serde(default, deserialize_with = "device_id_from_toml")]
    #[schemars(with = "Option<DeviceIdInput>")]
    pub device_id: Option<u32>,
    /// Replay every device of a multi-device trace onto the one modelled
    /// device.
    #[serde(default)]
    pub all_devices: bool,
    /// Timed (open loop) or closed (per process) replay.
    #[serde(default)]
    pub mode: ReplayMode,
    /// Time scale of timed replay: 2.0 replays twice as fast.
    #[serde(default = "unit_speed")]
    pub speed: f64,
    /// Records beyond the device's capacity: error, wrap or compact.
    #[serde(default)]
    pub fit: FitMode,
    /// A trace replayed (unmeasured) before measurement to precondition
    /// the device: its writes and discards are applied to the FTL.
    #[serde(default)]
    pub precondition: Option<PathBuf>,
}

/// The slowest trace replay time scale (`trace.speed`).
pub const MIN_SPEED: f64 = 1e-6;
/// The fastest trace replay time scale (`trace.speed`).
pub const MAX_SPEED: f64 = 1e6;

impl TraceSpec {
    /// Checks the replay settings: a time scale in
    /// [`MIN_SPEED`]..=[`MAX_SPEED`], and one device or all of them.
    pub fn validate(&self) -> Result<(), TraceSpecError> {
        if !(self.speed.is_finite() && (MIN_SPEED..=MAX_SPEED).contains(&self.speed)) {
            return Err(TraceSpecError::Speed { speed: self.speed });
        }
        if let (Some(id), true) = (self.device_id, self.all_devices) {
            return Err(TraceSpecError::OneOrAllDevices { device_id: id });
        }
        Ok(())
    }
}

/// Why a scenario's `[trace]` replay settings are unusable.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum TraceSpecError {
    /// A time scale outside [`MIN_SPEED`]..=[`MAX_SPEED`].
    #[error("trace.speed = {speed}: expected a time scale from {MIN_SPEED} to {MAX_SPEED}")]
    Speed {
        /// The scale given.
        speed: f64,
    },
    /// One device and all devices at once.
    #[error("trace.device_id = {device_id} and trace.all_devices = true: one device or all of them, not both")]
    OneOrAllDevices {
        /// The device given.
        device_id: u32,
    },
}

fn unit_speed() -> f64 {
    1.0
}

/// How a scenario may name a trace's device: a number, or `"MAJ,MIN"`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // the schema's shape; values go through `device_id_from_toml`
enum DeviceIdInput {
    /// A device id as a number (a `dev_t` or a trace's own id).
    Number(u32),
    /// `"MAJ,MIN"`: major below 4096, minor below 2^20.
    MajMin(String),
}

/// Reads `trace.device_id` as a number or `"MAJ,MIN"`, refusing anything
/// else with what was expected.
fn device_id_from_toml<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::Error;
    match DeviceIdInput::deserialize(d) {
        Ok(DeviceIdInput::Number(n)) => Ok(Some(n)),
        Ok(DeviceIdInput::MajMin(s)) => crate::workload::trace::common::parse_dev(s.trim().as_bytes())
            .map(Some)
            .ok_or_else(|| {
                D::Error::custom(format!(
                    "`{s}`: expected MAJ,MIN with a major below 4096 and a minor below 2^20 (e.g. \"179,0\")"
                ))
            }),
        Err(_) => Err(D::Error::custom(
            "expected a device id: an unsigned 32-bit number or \"MAJ,MIN\" (e.g. \"179,0\")",
        )),
    }
}
