//! The rules between a scenario's parts (workload, file system, files,
//! threads, jobs) and, typed, the one a scenario breaks. Each stage's own
//! settings have their owner's errors ([`SettingError`]); these are the
//! scenario's.

use crate::error::SettingError;
use crate::workload::job_error::{JobError, TimeError};

/// The most threads all jobs of a scenario may have together.
pub const MAX_THREADS: u64 = 4096;
/// The most files a scenario may lay out.
pub const MAX_FILES: usize = 4096;
/// The most SQL statements (rows filled plus transactions) all SQLite
/// jobs of a scenario may run together: each job keeps its statement plan
/// and its row keys in memory (about 40 bytes a statement).
pub const MAX_SQLITE_STATEMENTS: u64 = 1 << 22;

/// A rule between a scenario's parts that it breaks, with the values at
/// fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScenarioRule {
    /// No workload section.
    #[error("no workload: add [[jobs]], [[scripts]], [[sqlite_jobs]], [androbench] or a [trace]")]
    NoWorkload,
    /// More `[[files]]` than [`MAX_FILES`].
    #[error("{count} files: at most {MAX_FILES} are supported")]
    TooManyFiles {
        /// Files given.
        count: usize,
    },
    /// `[fs]`'s own settings.
    #[error(transparent)]
    Fs(SettingError),
    /// A partition smaller than the smallest file system of its options.
    #[error("fs.partition_size_mib = {size_mib}: expected at least {min_mib} MiB, the smallest ext4 with these options (one block group's superblock, group descriptors, bitmaps and inode table, the journal, the root directory and lost+found)")]
    PartitionTooSmall {
        /// The size given, MiB.
        size_mib: u64,
        /// The smallest that holds the file system, MiB.
        min_mib: u64,
    },
    /// A raw extent (`offset_mib`) beside a file system.
    #[error("file `{file}`: offset_mib places raw extents; with [fs] the allocator places files (remove offset_mib)")]
    RawExtentWithFs {
        /// The file.
        file: String,
    },
    /// A raw file of 0 MiB.
    #[error("file `{file}`: size_mib must be at least 1")]
    EmptyFile {
        /// The file.
        file: String,
    },
    /// Two files of one name.
    #[error("file `{file}` is defined twice")]
    FileTwice {
        /// The file.
        file: String,
    },
    /// A script with no file system to run on.
    #[error("script `{script}`: scripts run on a file system (their calls create, open, resize and remove files): add [fs] with type = \"ext4\"")]
    ScriptWithoutFs {
        /// The script.
        script: String,
    },
    /// A script with no calls.
    #[error("script `{script}`: calls is empty")]
    ScriptWithoutCalls {
        /// The script.
        script: String,
    },
    /// A script's time the clock cannot hold.
    #[error("script `{script}`: {time}")]
    ScriptTime {
        /// The script.
        script: String,
        /// The time at fault.
        time: TimeError,
    },
    /// More threads than [`MAX_THREADS`] in all.
    #[error("{} threads in all ({jobs} of [[jobs]], {scripts} [[scripts]], {sqlite} [[sqlite_jobs]]): at most {MAX_THREADS} are supported (each costs its own statistics)", .jobs + .scripts + .sqlite)]
    TooManyThreads {
        /// Threads of `[[jobs]]`.
        jobs: u64,
        /// `[[scripts]]`.
        scripts: u64,
        /// `[[sqlite_jobs]]`.
        sqlite: u64,
    },
    /// A job whose last thread's pid would pass `u32::MAX`.
    #[error("job `{job}`: pid = {first} with {threads} threads: the last pid would be {last}, beyond {}", u32::MAX)]
    PidWraps {
        /// The job.
        job: String,
        /// Its first pid.
        first: u64,
        /// Its threads.
        threads: u32,
        /// The last pid it would need.
        last: u64,
    },
    /// Two jobs whose pid ranges overlap.
    #[error("job `{job}`: pids {first}..={last} overlap job `{other}`'s {other_first}..={other_last} (each thread is its own process); set pid on one of them")]
    PidOverlap {
        /// The job.
        job: String,
        /// Its first pid.
        first: u64,
        /// Its last pid.
        last: u64,
        /// The job it overlaps.
        other: String,
        /// That job's first pid.
        other_first: u64,
        /// That job's last pid.
        other_last: u64,
    },
    /// One SQLite job beyond [`MAX_SQLITE_STATEMENTS`].
    #[error("sqlite job `{job}`: transactions = {transactions} and rows = {rows}: {} statements, at most {MAX_SQLITE_STATEMENTS} are supported (the job keeps its plan and keys in memory)", .transactions.saturating_add(*.rows))]
    SqliteJobStatements {
        /// The job.
        job: String,
        /// Its transactions.
        transactions: u64,
        /// Its rows filled first.
        rows: u64,
    },
    /// All SQLite jobs together beyond [`MAX_SQLITE_STATEMENTS`].
    #[error("the SQLite jobs run {statements} statements in all (rows filled + transactions): at most {MAX_SQLITE_STATEMENTS} are supported (each job keeps its plan and keys in memory)")]
    SqliteStatements {
        /// Statements in all.
        statements: u64,
    },
    /// SQLite jobs or AndroBench with no file system to run on.
    #[error(
        "[[sqlite_jobs]] and [androbench] run on a file system: add [fs] with type = \"ext4\""
    )]
    SqliteWithoutFs,
    /// Two SQLite jobs of one name.
    #[error("sqlite job `{job}` is defined twice")]
    SqliteJobTwice {
        /// The job.
        job: String,
    },
    /// A synthetic job's rule.
    #[error(transparent)]
    Job(JobError),
}
