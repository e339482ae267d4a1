//! The library's error types: every message says what was wrong and what was
//! expected, naming the file, line and field where there is one.
//!
//! [`Error`] is what the library's fallible functions return. Two smaller
//! errors describe one rejected value and convert into it:
//! [`UnknownChoice`] (a name outside a closed set, such as a trace format)
//! and [`SettingError`] (a named setting with an unusable value, such as a
//! queue attribute or a host cost).

use std::borrow::Cow;
use std::path::PathBuf;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong when configuring or feeding a simulation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Writing an output stream failed; the caller knows, and names, the
    /// output.
    #[error("{source}")]
    Output {
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A record of an input file is malformed. Displayed with control
    /// characters of the field and message escaped (a quoted value never
    /// prints a raw CR or escape sequence).
    #[error(
        "{path}:{line}: field `{}`: {}",
        crate::textfile::escape_controls(.field),
        crate::textfile::escape_controls(.message)
    )]
    Parse {
        /// The input file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The column or key at fault.
        field: String,
        /// What was found and what was expected.
        message: String,
    },
    /// A configuration file cannot be read as text (too large, not UTF-8,
    /// CR-only line endings).
    #[error("{}", escape(&format!("{}: {problem}", .path.display())))]
    ConfigText {
        /// The file.
        path: PathBuf,
        /// What is wrong with its bytes.
        problem: TextProblem,
    },
    /// A configuration file (scenario, device or host profile, phone) is
    /// not TOML, or not of its kind's shape (an unknown key, a value of the
    /// wrong type); the parser's message names the line and key.
    #[error("{}", escape(&format!("{origin}: {}", .source.to_string().trim_end())))]
    Toml {
        /// The file, or what was merged into it (e.g. `s.toml with the
        /// scenario's [device] settings and --set device.*: invalid device
        /// profile`).
        origin: String,
        /// The parser's error.
        source: toml::de::Error,
    },
    /// A setting of a configuration file (or of the command line) has an
    /// unusable value: the located form of [`SettingError`].
    #[error("{}", escape(&format!("{origin}: {source}")))]
    Setting {
        /// Where the setting came from: the file, `--set KEY`, `--phone
        /// NAME`, or `replay` for a trace replayed without a scenario.
        origin: String,
        /// The setting and what it expects.
        source: SettingError,
    },
    /// A `--set KEY=VALUE` override cannot be applied to the scenario.
    #[error("{}", escape(&override_text(.key, .problem)))]
    Override {
        /// The override's key (the whole argument when it has no `=`).
        key: String,
        /// What is wrong with it.
        problem: OverrideProblem,
    },
    /// `--phone NAME` names no phone file in the phones folder of the
    /// working directory or its parents.
    #[error("{}", escape(&format!(
        "--phone {name}: no {dir}/{name}.toml in {} or its parents ({}); give a phone file's path instead",
        .from.display(),
        if .known.is_empty() { "no phones found".to_string() } else { format!("phones: {}", .known.join(", ")) }
    )))]
    NoSuchPhone {
        /// The name given.
        name: String,
        /// The phones folder's name (`configs/phones`).
        dir: &'static str,
        /// The folder the search started from.
        from: PathBuf,
        /// The phones of the nearest phones folder.
        known: Vec<String>,
    },
    /// A setting checked where its file is no longer known (the driver
    /// against the card, a file system at mount); the message names the
    /// key.
    #[error("{}", escape(&.0.to_string()))]
    Unlocated(#[from] SettingError),
    /// A line of a job file (fio) is unusable: the file's structure, or
    /// a job's options together (one option's value is
    /// [`Error::FioOption`]).
    #[error("{}", escape(&format!("{origin}:{line}: {problem}")))]
    FioLine {
        /// The file.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// The section, key or job at fault and what was expected.
        problem: Box<crate::workload::fio_job::LineProblem>,
    },
    /// One option of an fio job file is unusable: the file, line, key and
    /// value, and why.
    #[error("{}", escape(&fio_option(.origin, *.line, .key, .value.as_deref(), .source)))]
    FioOption {
        /// The file.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// The option's key.
        key: String,
        /// Its value, if it has one.
        value: Option<String>,
        /// Why it is refused.
        source: Box<crate::workload::fio_job::OptionError>,
    },
    /// An fio job file has no job section.
    #[error("{}", escape(&format!("{origin}: no job section: an fio job file needs at least one [jobname] section besides [global]")))]
    NoJobSection {
        /// The file.
        origin: String,
    },
    /// A translated fio job file could not be written as a scenario (a
    /// simulator bug).
    #[error("fio job translation: {0}")]
    FioTranslation(#[source] toml::ser::Error),
    /// The scenario names a scheduler the registry does not hold.
    #[error("{}", escape(&.0.to_string()))]
    Scheduler(#[from] mmcsim_elevator::registry::UnknownScheduler),
    /// A scheduler tunable (`iosched.NAME`) has an unusable name or value.
    #[error("{}", escape(&format!("iosched.{name}: {source}")))]
    Tunable {
        /// The tunable's name.
        name: String,
        /// The scheduler's error.
        source: mmcsim_elevator::tunable::TunableError,
    },
    /// Two run options that cannot be combined.
    #[error("{a} does not combine with {b} ({why}); run them separately")]
    Exclusive {
        /// The first option, e.g. `--check-integrity`.
        a: &'static str,
        /// The second, e.g. `a power cut`.
        b: &'static str,
        /// Why not.
        why: &'static str,
    },
    /// A job's file cannot be opened before the run.
    #[error("{}", escape(&format!("open {path}: {problem}")))]
    Open {
        /// The file's path.
        path: String,
        /// Why not.
        problem: OpenProblem,
    },
    /// The partition the scenario places the file system in does not fit
    /// the device.
    #[error("fs: the partition [{start_mib} MiB, {end_mib} MiB) does not fit the device's {capacity_mib} MiB")]
    PartitionTooLarge {
        /// Partition start, MiB.
        start_mib: u64,
        /// Partition end (exclusive), MiB.
        end_mib: u64,
        /// The device's capacity, MiB.
        capacity_mib: u64,
    },
    /// A file of the scenario's `[[files]]` (raw device, no file system)
    /// does not fit where it is laid out.
    #[error("{}", escape(&format!("file `{name}` {problem}")))]
    FileLayout {
        /// The file's name as the scenario gives it.
        name: String,
        /// Where it does not fit.
        problem: FileLayoutProblem,
    },
    /// A file of the scenario's `[[files]]` cannot be created at mount.
    #[error("{}", escape(&populate_file(.name, *.errno)))]
    PopulateFile {
        /// The file's path as the scenario gives it.
        name: String,
        /// The errno creating it failed with (`None`: the path is empty).
        errno: Option<i64>,
    },
    /// A saved device state cannot be written (`path` is `None`), or the
    /// one read from `path` does not fit this scenario or is corrupted.
    #[error("{}", device_state(.path.as_deref(), .source))]
    DeviceState {
        /// The state file read, `None` when saving.
        path: Option<PathBuf>,
        /// What is wrong.
        source: crate::device::StateError,
    },
    /// The key of a prepared device could not be encoded.
    #[error("device key: {0}")]
    DeviceKey(#[source] serde_json::Error),
    /// A prepared device was given to a scenario it was not prepared for.
    #[error("the prepared device was built from another device profile, precondition setting or seed than this scenario's")]
    PreparedMismatch,
    /// A name is not one of a closed set of choices.
    #[error(transparent)]
    Choice(#[from] UnknownChoice),
    /// A trace could not be detected, opened or read: the trace readers'
    /// own error, naming the file and, for a malformed record, its line and
    /// field.
    #[error(transparent)]
    Trace(#[from] mmcsim_trace::Error),
    /// A call failed and the run stops at its first failed call
    /// (`on_error = "stop"` or `--strict`).
    #[error(
        "{caller} failed with {errno} (errno {code}) at {at_s:.6} s simulated; {why} ends the run at the first failed call"
    )]
    CallFailed {
        /// The call: its script and index with the call's text, or the
        /// thread.
        caller: String,
        /// The errno's name, e.g. `ENOSPC`.
        errno: &'static str,
        /// The errno's number.
        code: i64,
        /// When it failed, simulated s.
        at_s: f64,
        /// The setting that stops the run (`--strict` or
        /// `on_error = "stop"`).
        why: &'static str,
    },
    /// An event was scheduled beyond the simulated clock's limit.
    #[error("{}", clock_overflow(*.now, *.at))]
    ClockOverflow {
        /// When it was scheduled, ns (`None`: found after the last event).
        now: Option<u64>,
        /// The time it was scheduled at, ns.
        at: u64,
    },
    /// The run completed no request, and an empty result was not allowed.
    #[error(
        "the run completed no request: {why}; an empty result is an error unless allowed (simctl: --allow-empty, and the report then says \"empty\": true)"
    )]
    EmptyRun {
        /// Why: the calls that failed, or that nothing was issued.
        why: EmptyWhy,
    },
    /// A trace replayed with `fit = "compact"` touches more than the
    /// device holds even when compacted.
    #[error("{}: the trace touches {touched_mib} MiB, more than the device's {capacity_mib} MiB even when compacted", .path.display())]
    TraceTooLarge {
        /// The trace file.
        path: PathBuf,
        /// The 1 MiB regions the trace touches.
        touched_mib: u64,
        /// The device's capacity, MiB.
        capacity_mib: u64,
    },
    /// Writing the request log failed.
    #[error("request log: {source}")]
    RequestLog {
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The simulation cannot finish: calls wait for something nothing will
    /// deliver (a simulator bug; the message says what waits).
    #[error(transparent)]
    Stalled(Stall),
    /// The device model broke one of its invariants (a simulator bug).
    #[error("device: {0}")]
    Device(#[from] crate::device::DeviceError),
}

/// `s` with control characters escaped (a quoted key or value, a parser's
/// excerpt, never prints raw).
fn escape(s: &str) -> String {
    crate::textfile::escape_controls(s)
}

/// The text of [`Error::Override`].
fn override_text(key: &str, problem: &OverrideProblem) -> String {
    match problem {
        OverrideProblem::NotASeed { value } => format!("--set seed={value}: {problem}"),
        OverrideProblem::NotATable => problem.to_string(),
        _ => format!("--set `{key}`: {problem}"),
    }
}

/// The text of [`Error::PopulateFile`].
/// `origin:line: key 'k' = 'v': why`.
fn fio_option(
    origin: &str,
    line: usize,
    key: &str,
    value: Option<&str>,
    why: &crate::workload::fio_job::OptionError,
) -> String {
    let value = value.map(|v| format!(" = '{v}'")).unwrap_or_default();
    format!("{origin}:{line}: key '{key}'{value}: {why}")
}

fn populate_file(name: &str, errno: Option<i64>) -> String {
    match errno {
        Some(code) => format!("file `{name}`: cannot create it in the file system (errno {code})"),
        None => format!("file `{name}`: empty path"),
    }
}

/// The text of [`Error::DeviceState`].
fn device_state(path: Option<&std::path::Path>, e: &crate::device::StateError) -> String {
    match path {
        Some(p) => escape(&format!("{}: device state: {e}", p.display())),
        None => format!("saving the device state: {e}"),
    }
}

/// The text of [`Error::ClockOverflow`].
fn clock_overflow(now: Option<u64>, at: u64) -> String {
    let limit = crate::engine::MAX_SIM_TEXT;
    match now {
        Some(now) => format!(
            "time overflows the simulated clock: at {now} ns an event was scheduled at {at} ns, beyond the limit of {limit} (check think times, start times, durations and trace times)"
        ),
        None => format!(
            "time overflows the simulated clock: an event was scheduled at {at} ns, beyond the limit of {limit}"
        ),
    }
}

impl Error {
    /// True when the error says an input (a file, a setting, the command
    /// line) is unusable, not that a run failed: `simctl` exits with 2 for
    /// these and 1 for the others. A trace's own errors answer through
    /// [`mmcsim_trace::Error::is_input_error`].
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Error::Io { .. }
                | Error::Parse { .. }
                | Error::ConfigText { .. }
                | Error::Toml { .. }
                | Error::Setting { .. }
                | Error::Unlocated(_)
                | Error::Override { .. }
                | Error::NoSuchPhone { .. }
                | Error::FioLine { .. }
                | Error::FioOption { .. }
                | Error::NoJobSection { .. }
                | Error::FioTranslation(_)
                | Error::Scheduler(_)
                | Error::Tunable { .. }
                | Error::Exclusive { .. }
                | Error::Open { .. }
                | Error::PartitionTooLarge { .. }
                | Error::FileLayout { .. }
                | Error::PopulateFile { .. }
                | Error::DeviceState { .. }
                | Error::DeviceKey(_)
                | Error::PreparedMismatch
                | Error::Choice(_)
        )
    }

    /// Shorthand for [`Error::Toml`]: `source` met parsing `origin`.
    pub fn toml(origin: impl Into<String>, source: toml::de::Error) -> Error {
        Error::Toml {
            origin: origin.into(),
            source,
        }
    }

    /// Shorthand for [`Error::Setting`]: `source` found in `origin`.
    pub fn setting(origin: impl Into<String>, source: SettingError) -> Error {
        Error::Setting {
            origin: origin.into(),
            source,
        }
    }
}

/// A name that is not one of a closed set of choices (a trace format, a
/// time unit), with the valid names (shared with the trace readers).
pub use mmcsim_types::UnknownChoice;

/// A named setting (a sysfs attribute, a configuration key) whose name or
/// value is unusable.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SettingError {
    /// No setting has this name.
    #[error("no {kind} `{name}`; valid: {valid}")]
    Unknown {
        /// What kind of setting, e.g. `queue attribute`.
        kind: &'static str,
        /// The name given.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// The value is not a whole number.
    #[error("{key}: `{value}` is not a whole number (expected {min}..={max})")]
    NotAWholeNumber {
        /// The setting, e.g. `queue/nr_requests`.
        key: String,
        /// The text given.
        value: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// The value is a whole number outside the accepted range.
    #[error("{key}: {value} is out of range (expected {min}..={max})")]
    OutOfRange {
        /// The setting, e.g. `queue/nr_requests`.
        key: String,
        /// The value given.
        value: u64,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// The value does not meet the setting's condition.
    #[error("{key} = {value}: expected {expected}")]
    Invalid {
        /// The setting, e.g. `host.irq_us`.
        key: String,
        /// The value given, as text.
        value: String,
        /// What the setting accepts, e.g. `a positive clock in MHz`.
        expected: Cow<'static, str>,
    },
    /// The value of a setting (a profile's `[section] key`) breaks the
    /// setting's rule or a rule it shares with others; `problem` starts
    /// with the value and says what was expected.
    #[error("{key}: {problem}")]
    Field {
        /// The setting, e.g. `[gc] copy_budget_pages`.
        key: String,
        /// The value and what was expected, e.g. `0: expected 1..=256
        /// stripe pages`.
        problem: String,
    },
    /// The value is well-formed but conflicts with the setting's rule or
    /// with other settings; `why` says which and what to change.
    #[error("{key} = {value}: {why}")]
    Conflict {
        /// The setting, e.g. `driver.cmdq_depth`.
        key: String,
        /// The value given, as text.
        value: String,
        /// The rule broken and what to change.
        why: String,
    },
    /// A key that has no place where it is written (or not with the
    /// other settings given).
    #[error("{key} {rule}")]
    Misplaced {
        /// The key or section, e.g. `[calibration]`.
        key: String,
        /// What the place allows.
        rule: &'static str,
    },
    /// A required text setting is empty.
    #[error("{key} is empty: {expected}")]
    Empty {
        /// The setting, e.g. `scheduler.name`.
        key: String,
        /// What to write there, e.g. `name the stock kernel's default
        /// scheduler, e.g. "cfq"`.
        expected: &'static str,
    },
    /// A setting names a file that does not exist.
    #[error("{key} = \"{}\": no such file ({})", .given.display(), .resolved.display())]
    NoSuchFile {
        /// The setting, e.g. `device`.
        key: String,
        /// The path as given.
        given: PathBuf,
        /// The path it resolves to.
        resolved: PathBuf,
    },
    /// One entry of a list setting is given twice.
    #[error("{key} = {value:?} is given twice")]
    Duplicate {
        /// The entry, e.g. `[fit] targets[2]`.
        key: String,
        /// Its value.
        value: String,
    },
    /// A scenario breaks a rule between its parts.
    #[error(transparent)]
    Scenario(Box<crate::config::ScenarioRule>),
    /// A scenario's `[trace]` replay settings are unusable.
    #[error(transparent)]
    Trace(crate::workload::spec::TraceSpecError),
    /// One call of a script's `calls` is unusable.
    #[error("{key}: {problem}")]
    ScriptCall {
        /// The call, e.g. ``calls[2] `write x` ``.
        key: String,
        /// Why.
        problem: crate::workload::script::CallError,
    },
    /// A SQLite job breaks one of its rules.
    #[error(transparent)]
    SqliteJob(Box<crate::workload::sqlite::SqliteJobError>),
    /// The file system cannot be made on the partition.
    #[error(transparent)]
    Mkfs(#[from] crate::host::fs::mkfs_error::MkfsError),
    /// A synthetic job breaks one of its rules.
    #[error(transparent)]
    Job(#[from] Box<crate::workload::job_error::JobError>),
}

impl SettingError {
    /// `key = value: expected {expected}`.
    pub fn invalid(
        key: impl Into<String>,
        value: impl ToString,
        expected: impl Into<Cow<'static, str>>,
    ) -> SettingError {
        SettingError::Invalid {
            key: key.into(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// `key = value: {why}` (a rule the value breaks, with what to change).
    pub fn conflict(
        key: impl Into<String>,
        value: impl ToString,
        why: impl Into<String>,
    ) -> SettingError {
        SettingError::Conflict {
            key: key.into(),
            value: value.to_string(),
            why: why.into(),
        }
    }
}

/// Why a run completed no request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmptyWhy {
    /// The trace has no records.
    #[error("the trace {path} has no records (a header or comments only?)")]
    NoRecords {
        /// The trace.
        path: String,
    },
    /// Records were read, none completed.
    #[error("none of the {records} records of the trace {path} completed")]
    NoneCompleted {
        /// Records read.
        records: u64,
        /// The trace.
        path: String,
    },
    /// Every system call failed.
    #[error("every system call failed ({})", .failed.iter().map(|(e, n)| format!("{e} {n}")).collect::<Vec<_>>().join(", "))]
    AllCallsFailed {
        /// Failed calls by errno name.
        failed: Vec<(&'static str, u64)>,
    },
    /// The jobs issued nothing.
    #[error("the jobs issued no request")]
    NoRequest,
}

/// How a simulation stalled (a simulator bug: each says what waits).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stall {
    /// Only periodic timers ran for `limit_s` of simulated time while
    /// calls waited, with nothing else pending.
    #[error("simulation stalled at {at_ns} ns: for {limit_s} s of simulated time only periodic timers ran while {calls} call(s) waited, and nothing else is pending, so they can never finish: this is a simulator bug, please report it with the scenario. Waiting:{waiting}")]
    TimersOnly {
        /// Simulated time, ns.
        at_ns: u64,
        /// The stall limit, s.
        limit_s: u64,
        /// Calls in progress.
        calls: usize,
        /// The first waiting calls, one per line (the host's description).
        waiting: String,
    },
    /// The event queue ran dry with work left.
    #[error("simulation stalled with work left (calls in progress: {calls}, block layer pending: {pending}, in driver: {held}): this is a simulator bug, please report it with the scenario")]
    WorkLeft {
        /// Calls in progress (host and replay).
        calls: usize,
        /// The block layer still holds requests.
        pending: bool,
        /// Requests the driver holds.
        held: u32,
    },
}

/// Why a job's file cannot be opened before the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenProblem {
    /// The lookup failed with this errno.
    #[error("errno {0}")]
    Errno(i64),
    /// O_DIRECT on a FUSE mount.
    #[error(
        "O_DIRECT on a FUSE mount fails with EINVAL (fs/fuse/file.c fuse_open_common, Linux 3.x)"
    )]
    DirectOnFuse,
}

/// Why a `--set KEY=VALUE` override cannot be applied.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum OverrideProblem {
    /// The argument has no `KEY=`.
    #[error("expected KEY=VALUE, e.g. `iosched.fifo_batch=8` or `queue.read_ahead_kb=256`")]
    NotKeyValue,
    /// The key starts with no section an override may address.
    #[error("unknown key; it must start with one of: {known}")]
    UnknownSection {
        /// The sections, comma-separated.
        known: String,
    },
    /// The key has the wrong number of parts for its section.
    #[error("expected {expected}")]
    Shape {
        /// The key's shape, e.g. `iosched.<tunable>`.
        expected: Cow<'static, str>,
    },
    /// A top-level value (`seed`, `android_version`) given a sub-key.
    #[error("takes no sub-key")]
    NoSubKey,
    /// The seed is not a u64.
    #[error("expected an unsigned integer 0..=18446744073709551615")]
    NotASeed {
        /// The value given.
        value: String,
    },
    /// The scenario tree is not a table (a simulator bug).
    #[error("scenario is not a TOML table")]
    NotATable,
    /// `jobs.N.KEY` names a job the scenario does not have.
    #[error("the scenario has {jobs} job(s) (indices 0..{jobs})")]
    NoSuchJob {
        /// How many jobs it has.
        jobs: usize,
    },
    /// Job `index` of the scenario is not a table.
    #[error("job {index} is not a table")]
    JobNotATable {
        /// 0-based job index.
        index: usize,
    },
    /// A part of the key names a value, not a section.
    #[error("`{name}` is a value, not a section")]
    NotASection {
        /// The part.
        name: String,
    },
}

/// Why a file of a raw-device scenario does not fit its place.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FileLayoutProblem {
    /// It ends beyond the device.
    #[error("ends at {end_mib} MiB, beyond the device's {capacity_mib} MiB")]
    BeyondDevice {
        /// Where it ends, MiB.
        end_mib: u64,
        /// The device's capacity, MiB.
        capacity_mib: u64,
    },
    /// It overlaps an earlier file.
    #[error("overlaps file `{other}` on the device")]
    Overlaps {
        /// The earlier file.
        other: String,
    },
}

/// Why a configuration file cannot be read as text.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TextProblem {
    /// Over the size limit of a configuration file.
    #[error("larger than {limit} bytes (16 MiB), the limit for a configuration file (TOML): not a configuration file?")]
    TooLarge {
        /// The limit, bytes.
        limit: u64,
    },
    /// Bytes that are not UTF-8.
    #[error("not UTF-8 text (invalid byte at offset {offset}): a configuration file is TOML text")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// A CR not followed by LF (old Mac line endings).
    #[error("{}", mmcsim_types::text::lone_cr_text(*.at, *.line))]
    LoneCr {
        /// Byte offset of the CR.
        at: usize,
        /// Its 1-based line.
        line: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_value_and_what_was_expected() {
        let e = Error::setting(
            "s.toml",
            SettingError::OutOfRange {
                key: "queue/nomerges".into(),
                value: 3,
                min: 0,
                max: 2,
            },
        );
        assert_eq!(
            e.to_string(),
            "s.toml: queue/nomerges: 3 is out of range (expected 0..=2)"
        );
        let c: Error = UnknownChoice {
            what: "time unit",
            found: "min".into(),
            expected: "ms, s".into(),
        }
        .into();
        assert_eq!(
            c.to_string(),
            "unknown time unit `min`: expected one of ms, s"
        );
    }
}
