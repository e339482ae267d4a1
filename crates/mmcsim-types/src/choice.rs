//! A name outside a closed set of choices (a trace format, a time unit).

/// A name that is not one of a closed set of choices (a trace format, a
/// time unit), with the valid names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{found}`: expected one of {expected}")]
pub struct UnknownChoice {
    /// What was being named, e.g. `trace format`.
    pub what: &'static str,
    /// The name given.
    pub found: String,
    /// The valid names, comma-separated.
    pub expected: String,
}
