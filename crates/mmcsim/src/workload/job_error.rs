//! Why a synthetic job (`[[jobs]]`, or a job of an fio file) is refused:
//! the rule it breaks, typed, with the job's name. Times from input share
//! [`TimeError`] with scripts and SQLite jobs.

use super::block_sizes::BssplitError;
use super::distribution::DistributionError;
use crate::engine::MAX_SIM_TEXT;

/// The most I/Os one thread may keep in flight (`iodepth`).
pub const MAX_IODEPTH: u32 = 4096;

/// The most offsets the shuffled jobs' threads may permute, per job (4
/// bytes each).
pub const MAX_SHUFFLED_SLOTS: u64 = 1 << 25;

/// A time from input as an error shows it (exponent form from 10^15).
pub fn show_time(v: f64) -> String {
    if v >= 1e15 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A time from input the simulated clock cannot hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TimeError {
    /// Negative, NaN or infinite.
    #[error("{field} = {value}: expected a finite time ≥ 0")]
    NotATime {
        /// The field, e.g. `think_time_us`.
        field: &'static str,
        /// The value given, in the field's unit.
        value: f64,
    },
    /// Beyond the simulated clock's limit ([`crate::engine::MAX_SIM_NS`]).
    #[error("{field} = {} exceeds the simulated clock's limit of {MAX_SIM_TEXT}{}", show_time(*.value), if *.from_start { " (counted from start_ms)" } else { "" })]
    BeyondClock {
        /// The field, e.g. `duration_ms`.
        field: &'static str,
        /// The value given, in the field's unit.
        value: f64,
        /// The limit is reached only counted from the job's `start_ms`.
        from_start: bool,
    },
}

/// A job whose settings break a rule: the job and the rule.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("job `{job}`: {rule}")]
pub struct JobError {
    /// The job's name.
    pub job: String,
    /// The rule broken.
    pub rule: JobRule,
}

/// The rule a job breaks, with the values at fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum JobRule {
    /// A count or size that must be at least 1 is 0.
    #[error("{field} must be at least 1")]
    Zero {
        /// The field, e.g. `request_bytes`.
        field: &'static str,
    },
    /// The job names a file the scenario does not define.
    #[error("unknown file `{file}` (files: {known})")]
    UnknownFile {
        /// The file named.
        file: String,
        /// The scenario's files, comma-separated (`none` when it has none).
        known: String,
    },
    /// A further file (`more_files`) the scenario does not define.
    #[error("unknown file `{file}` in more_files")]
    UnknownMoreFile {
        /// The file named.
        file: String,
    },
    /// The region does not fit the job's file, or holds no request.
    #[error("region [{offset}, +{region}) bytes does not fit file `{file}` ({file_bytes} bytes) or is smaller than one request")]
    Region {
        /// Region offset, bytes.
        offset: u64,
        /// Region length, bytes.
        region: u64,
        /// The file.
        file: String,
        /// Its size, bytes.
        file_bytes: u64,
    },
    /// The region does not fit one of the further files.
    #[error("region [{offset}, +{region}) bytes does not fit file `{file}` ({file_bytes} bytes)")]
    MoreFileRegion {
        /// Region offset, bytes.
        offset: u64,
        /// Region length, bytes.
        region: u64,
        /// The further file.
        file: String,
        /// Its size, bytes.
        file_bytes: u64,
    },
    /// A strided job without a stride.
    #[error("pattern = \"strided\" needs stride_bytes")]
    NoStride,
    /// A shuffled job whose threads would keep too many offsets.
    #[error("order = \"shuffled\" over {slots} slots × {threads} threads = {total} offsets: at most {MAX_SHUFFLED_SLOTS} are supported (each thread keeps a permutation); use a smaller region or bigger requests/stride")]
    ShuffledSlots {
        /// Slots per thread.
        slots: u64,
        /// Threads.
        threads: u32,
        /// Offsets in all.
        total: u64,
    },
    /// A random job with neither a request count nor a duration.
    #[error("a random job needs `requests` or `duration_ms`")]
    RandomWithoutEnd,
    /// An alignment or stride longer than the region.
    #[error("{field} = {value} is larger than the job's region ({region} bytes): every request would go to one offset; use a smaller {field} or a bigger region")]
    StepBeyondRegion {
        /// `align_bytes` or `stride_bytes`.
        field: &'static str,
        /// Its value, bytes.
        value: u64,
        /// The region, bytes.
        region: u64,
    },
    /// The smallest call is larger than the region.
    #[error("the smallest call ({min} bytes) does not fit the {region}-byte region")]
    CallBeyondRegion {
        /// The smallest call, bytes.
        min: u64,
        /// The region, bytes.
        region: u64,
    },
    /// O_DIRECT with a request size or offset not in whole sectors.
    #[error("O_DIRECT needs request_bytes and offsets in whole 512-byte sectors")]
    DirectUnaligned,
    /// O_DIRECT with a per-call size not in whole sectors.
    #[error("O_DIRECT needs every call size in whole 512-byte sectors")]
    DirectCallSizes,
    /// A nice value outside Linux's range.
    #[error("nice = {nice} is outside -20..=19")]
    Nice {
        /// The value given.
        nice: i32,
    },
    /// An I/O priority level outside 0..=7.
    #[error("ioprio_level must be 0..=7")]
    IoprioLevel,
    /// A time the clock cannot hold.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// `rwmix_read` above 100 %.
    #[error("rwmix_read = {percent}: expected a percentage 0..=100")]
    RwmixRange {
        /// The value given.
        percent: u32,
    },
    /// `rwmix_read` on a job that does not mix reads and writes.
    #[error("rwmix_read applies to op = \"readwrite\" only")]
    RwmixNotMixed,
    /// `iodepth` outside 1..=[`MAX_IODEPTH`].
    #[error("iodepth = {depth}: expected 1..={MAX_IODEPTH} I/Os in flight per thread")]
    Iodepth {
        /// The value given.
        depth: u32,
    },
    /// Buffered io_uring beyond depth 1 (io-wq workers are not modelled).
    #[error("io_uring with buffered I/O and iodepth > 1 runs on io-wq worker threads, which mmcsim does not model; use direct I/O or iodepth = 1")]
    BufferedIoUring,
    /// O_SYNC writes on an asynchronous engine.
    #[error("O_SYNC writes with an asynchronous engine are not modelled; use a synchronous engine (psync) or fsync_every")]
    AsyncOsync,
    /// The read (or both directions') block-size split is unusable.
    #[error(transparent)]
    Bssplit(BssplitError),
    /// The write block-size split is unusable.
    #[error("write_{0}")]
    WriteBssplit(BssplitError),
    /// The offset distribution is unusable.
    #[error(transparent)]
    Distribution(#[from] DistributionError),
    /// `random_percent` above 100 %.
    #[error("random_percent: expected a percentage 0..=100")]
    RandomPercent,
    /// Per-call sizes on a strided job.
    #[error("bssplit with a strided pattern is not modelled")]
    StridedBssplit,
    /// A skewed distribution or random share on a job with no random
    /// offsets.
    #[error("distribution and random_percent apply to random jobs (pattern = \"random\", or order = \"shuffled\")")]
    SkewWithoutRandom,
}

impl JobRule {
    /// This rule, broken by job `job`.
    pub fn of(self, job: &str) -> JobError {
        JobError {
            job: job.to_string(),
            rule: self,
        }
    }
}
