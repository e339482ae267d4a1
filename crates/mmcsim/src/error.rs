//! The library's error type: every message says what was wrong and what was
//! expected, naming the file, line and field where there is one.

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
    /// A record of an input file is malformed.
    #[error("{path}:{line}: field `{field}`: {message}")]
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
    /// The workload asks for something the modelled system cannot do.
    #[error("{0}")]
    Workload(String),
    /// The device model broke one of its invariants (a simulator bug).
    #[error("device: {0}")]
    Device(#[from] crate::device::DeviceError),
}

impl Error {
    /// Shorthand for [`Error::Config`].
    pub fn config(msg: impl Into<String>) -> Error {
        Error::Config(msg.into())
    }
}
