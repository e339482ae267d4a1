//! The library's error types: every message says what was wrong and what was
//! expected, naming the file, line and field where there is one.
//!
//! [`Error`] is what the library's fallible functions return. Two smaller
//! errors describe one rejected value and convert into it:
//! [`UnknownChoice`] (a name outside a closed set, such as a trace format)
//! and [`SettingError`] (a named setting with an unusable value, such as a
//! queue attribute or a host cost).

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
    /// A configuration value is invalid (unknown key, out of range, ...).
    #[error("{0}")]
    Config(String),
    /// A setting of a scenario (or of the command line) has an unusable
    /// value.
    #[error("{origin}: {source}")]
    Setting {
        /// Where the setting came from: the scenario file, or `replay` for
        /// a trace replayed without one.
        origin: String,
        /// The setting and what it expects.
        source: SettingError,
    },
    /// A name is not one of a closed set of choices.
    #[error(transparent)]
    Choice(#[from] UnknownChoice),
    /// A trace could not be detected, opened or read: the trace readers'
    /// own error, naming the file and, for a malformed record, its line and
    /// field.
    #[error(transparent)]
    Trace(#[from] mmcsim_trace::Error),
    /// The workload asks for something the modelled system cannot do
    /// (kept for the crash run's request log until it moves to
    /// [`Error::RequestLog`]).
    #[error("{0}")]
    Workload(String),
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
        why: String,
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
    #[error("{0}")]
    Stalled(String),
    /// The device model broke one of its invariants (a simulator bug).
    #[error("device: {0}")]
    Device(#[from] crate::device::DeviceError),
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
    /// Shorthand for [`Error::Config`]; control characters of `msg` (a
    /// quoted key or value, a parser's excerpt) are escaped.
    pub fn config(msg: impl Into<String>) -> Error {
        Error::Config(crate::textfile::escape_controls(&msg.into()))
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
        expected: &'static str,
    },
    /// A rule between settings is broken; the text names the settings,
    /// their values and what was expected.
    #[error("{0}")]
    Rule(String),
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
