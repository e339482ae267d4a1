//! The trace readers' error type: every message names the file, and where
//! a record is at fault its 1-based line and the field, and says what was
//! expected.

use std::path::PathBuf;

pub use mmcsim_types::UnknownChoice;

/// Result alias of the trace readers.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong when detecting, opening or reading a trace.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The trace could not be opened or read (including corrupt gzip).
    #[error("{path}: {source}")]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The operating system's (or the decompressor's) error.
        source: std::io::Error,
    },
    /// Writing converted records failed; the caller knows, and names, the
    /// output.
    #[error("{source}")]
    Output {
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A line of the trace is malformed, or the format cannot be detected.
    /// Displayed with control characters of the field and message escaped
    /// (a quoted value never prints a raw CR or escape sequence).
    #[error(
        "{path}:{line}: field `{}`: {}",
        mmcsim_types::text::escape_controls(.field),
        mmcsim_types::text::escape_controls(.message)
    )]
    Parse {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The column, key or event field at fault.
        field: String,
        /// What was found and what was expected.
        message: String,
    },
    /// A record of a binary trace (a blktrace capture) is malformed.
    /// Displayed with control characters of the field and message escaped.
    #[error(
        "{}: record {record} (byte offset {offset}): field `{}`: {}",
        .path.display(),
        mmcsim_types::text::escape_controls(.field),
        mmcsim_types::text::escape_controls(.message)
    )]
    Record {
        /// The trace file.
        path: PathBuf,
        /// 1-based index of the record in the file.
        record: u64,
        /// Byte offset of the record's start in the file (after gunzip).
        offset: u64,
        /// The field at fault.
        field: String,
        /// What was found and what was expected.
        message: String,
    },
    /// A name is not one of a closed set (a trace format, a time unit).
    #[error(transparent)]
    Choice(#[from] UnknownChoice),
    /// A device id was chosen, but no record of the trace is on it.
    #[error(
        "{}: no record is on device {device}: the trace has records on device{} {}; choose one of them with the device id (simctl: --device-id {}) or read them all (simctl: --all-devices)",
        .path.display(),
        if .found.len() == 1 && !.more { "" } else { "s" },
        device_list(.found, *.more),
        .found.first().map_or("N", String::as_str)
    )]
    NoRecordOnDevice {
        /// The trace file.
        path: PathBuf,
        /// The device chosen, as the trace names devices (`179,0` for a
        /// `dev_t`, else the id).
        device: String,
        /// The devices the trace has records on (at most 64, ascending by
        /// id), named as `device` is.
        found: Vec<String>,
        /// The trace has more device ids than `found` lists.
        more: bool,
    },
}

impl Error {
    /// True when the error says the input is unusable (a file that cannot
    /// be read, a malformed record, an unknown name), not that a request of
    /// the caller could not be met (a chosen device with no record) or that
    /// writing failed.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            Error::Io { .. } | Error::Parse { .. } | Error::Record { .. } | Error::Choice(_)
        )
    }
}

/// `ids` comma-separated, with `, ...` when there are `more`.
fn device_list(ids: &[String], more: bool) -> String {
    format!("{}{}", ids.join(", "), if more { ", ..." } else { "" })
}
