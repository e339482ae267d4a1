//! Describing and parsing scheduler tunables by their sysfs names.

use serde::Serialize;

/// One tunable as `simctl schedulers` and the report show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TunableInfo {
    /// sysfs name under `queue/iosched/`.
    pub name: &'static str,
    /// Current value, as sysfs would print it.
    pub value: String,
    /// Default value at the scheduler's `hz`, as sysfs would print it.
    pub default: String,
    /// Unit of the sysfs value (`ms`, `requests`, `sectors`, `KiB`, `bool`,
    /// ...).
    pub unit: &'static str,
    /// One line on what it does.
    pub help: &'static str,
}

/// Parsing helpers for tunable values.
pub struct TunableValue;

impl TunableValue {
    /// Parses an unsigned integer within `[min, max]`, with an error naming
    /// the tunable and the accepted range.
    pub fn parse_u64(name: &str, value: &str, min: u64, max: u64) -> Result<u64, String> {
        let v: u64 = value.trim().parse().map_err(|_| {
            format!("tunable `{name}`: `{value}` is not a whole number (expected {min}..={max})")
        })?;
        if v < min || v > max {
            return Err(format!(
                "tunable `{name}`: {v} is out of range (expected {min}..={max})"
            ));
        }
        Ok(v)
    }

    /// Parses a boolean written as `0` or `1` (sysfs style).
    pub fn parse_bool(name: &str, value: &str) -> Result<bool, String> {
        match value.trim() {
            "0" => Ok(false),
            "1" => Ok(true),
            other => Err(format!("tunable `{name}`: `{other}` is not 0 or 1")),
        }
    }

    /// The error for an unknown tunable, listing the valid names.
    pub fn unknown(scheduler: &str, name: &str, valid: &[TunableInfo]) -> String {
        let names: Vec<&str> = valid.iter().map(|t| t.name).collect();
        if names.is_empty() {
            format!("scheduler `{scheduler}` has no tunables (got `{name}`)")
        } else {
            format!(
                "scheduler `{scheduler}` has no tunable `{name}`; valid: {}",
                names.join(", ")
            )
        }
    }
}
