//! Scheduler tunables by their sysfs names (`queue/iosched/<name>`): how a
//! scheduler describes them ([`TunableInfo`]), how a written value is
//! parsed and checked the way the kernel's `*_store` functions do
//! ([`TunableValue`]), and what goes wrong ([`TunableError`]).

use serde::Serialize;

use crate::params::SchedParams;

/// `INT_MAX`: the upper bound of a tunable the kernel stores in an `int`
/// (most of them).
pub const INT_MAX: u64 = i32::MAX as u64;

/// `UINT_MAX`: the upper bound of a tunable the kernel stores in an
/// `unsigned int` (CFQ's).
pub const UINT_MAX: u64 = u32::MAX as u64;

/// One tunable as `simctl schedulers` and the report show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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

/// Why a tunable could not be set. Each message names the tunable and what
/// it accepts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TunableError {
    /// The text is not a whole number.
    #[error("tunable `{name}`: `{value}` is not a whole number (expected {min}..={max})")]
    NotANumber {
        /// sysfs name of the tunable.
        name: String,
        /// The text written, as given.
        value: String,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// The number is outside the accepted range.
    #[error("tunable `{name}`: {value} is out of range (expected {min}..={max})")]
    OutOfRange {
        /// sysfs name of the tunable.
        name: String,
        /// The number written.
        value: u64,
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// The text is none of the few values the tunable accepts (`0` or `1`
    /// for a switch).
    #[error("tunable `{name}`: `{value}` is not {expected}")]
    NotAChoice {
        /// sysfs name of the tunable.
        name: String,
        /// The text written, trimmed.
        value: String,
        /// The accepted values, in words (`0 or 1`).
        expected: &'static str,
    },
    /// The scheduler refused the value for a reason of its own (a
    /// scheduler written outside Rust, e.g. in Python, whose check raised).
    #[error("tunable `{name}`: `{value}` refused: {reason}")]
    Rejected {
        /// sysfs name of the tunable.
        name: String,
        /// The text written, as given.
        value: String,
        /// The scheduler's reason, as it gave it.
        reason: String,
    },
    /// The scheduler has no tunables at all.
    #[error("scheduler `{scheduler}` has no tunables (got `{name}`)")]
    NoTunables {
        /// Kernel name of the scheduler.
        scheduler: String,
        /// The tunable name asked for.
        name: String,
    },
    /// The scheduler has no tunable of that name.
    #[error("scheduler `{scheduler}` has no tunable `{name}`; valid: {}", .valid.join(", "))]
    Unknown {
        /// Kernel name of the scheduler.
        scheduler: String,
        /// The tunable name asked for.
        name: String,
        /// The scheduler's tunables, in sysfs order.
        valid: Vec<&'static str>,
    },
}

impl TunableError {
    /// The error for a tunable `name` that `scheduler` does not have, given
    /// its tunables `valid` (from [`crate::Elevator::tunables`]).
    pub fn unknown(scheduler: &str, name: &str, valid: &[TunableInfo]) -> TunableError {
        if valid.is_empty() {
            TunableError::NoTunables {
                scheduler: scheduler.to_string(),
                name: name.to_string(),
            }
        } else {
            TunableError::Unknown {
                scheduler: scheduler.to_string(),
                name: name.to_string(),
                valid: valid.iter().map(|t| t.name).collect(),
            }
        }
    }
}

/// A value written to one tunable: its sysfs name and text, with the
/// parsers a scheduler's `set_tunable` needs. Errors name the tunable and
/// the accepted values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TunableValue<'a> {
    /// sysfs name of the tunable.
    pub name: &'a str,
    /// The text written, as given.
    pub text: &'a str,
}

impl<'a> TunableValue<'a> {
    /// The text `text` written to tunable `name`.
    pub fn new(name: &'a str, text: &'a str) -> Self {
        TunableValue { name, text }
    }

    /// A whole number within `[min, max]`.
    pub fn u64(&self, min: u64, max: u64) -> Result<u64, TunableError> {
        let v: u64 = self
            .text
            .trim()
            .parse()
            .map_err(|_| TunableError::NotANumber {
                name: self.name.to_string(),
                value: self.text.to_string(),
                min,
                max,
            })?;
        if v < min || v > max {
            return Err(TunableError::OutOfRange {
                name: self.name.to_string(),
                value: v,
                min,
                max,
            });
        }
        Ok(v)
    }

    /// A whole number within `[min, max]` for a tunable held in 32 bits;
    /// `max` must not exceed [`UINT_MAX`].
    pub fn u32(&self, min: u64, max: u64) -> Result<u32, TunableError> {
        debug_assert!(
            max <= UINT_MAX,
            "tunable `{}`: max {max} > UINT_MAX",
            self.name
        );
        self.u64(min, max).map(|v| v as u32)
    }

    /// A time written in milliseconds within `[min, max]`, converted to
    /// jiffies at `params.hz` (`msecs_to_jiffies`, rounding up), as the
    /// kernel stores it.
    pub fn ms_as_jiffies(
        &self,
        params: &SchedParams,
        min: u64,
        max: u64,
    ) -> Result<u64, TunableError> {
        Ok(params.ms_to_jiffies(self.u64(min, max)?))
    }

    /// A switch written as `0` or `1`.
    pub fn bool(&self) -> Result<bool, TunableError> {
        self.choice(&[("0", false), ("1", true)], "0 or 1")
    }

    /// One of a few accepted texts, each standing for a value; `expected`
    /// lists them in words for the error (`-1, 0 or 1`).
    pub fn choice<T: Copy>(
        &self,
        choices: &[(&str, T)],
        expected: &'static str,
    ) -> Result<T, TunableError> {
        let text = self.text.trim();
        choices
            .iter()
            .find(|(t, _)| *t == text)
            .map(|&(_, v)| v)
            .ok_or_else(|| TunableError::NotAChoice {
                name: self.name.to_string(),
                value: text.to_string(),
                expected,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &'static str) -> TunableInfo {
        TunableInfo {
            name,
            value: "0".into(),
            default: "0".into(),
            unit: "ms",
            help: "",
        }
    }

    #[test]
    fn numbers_are_trimmed_and_range_checked_with_the_kernel_messages() {
        let v = TunableValue::new("fifo_batch", " 16\n");
        assert_eq!(v.u64(0, INT_MAX), Ok(16));
        assert_eq!(v.u32(1, 16), Ok(16));
        let e = v.u64(1, 8).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tunable `fifo_batch`: 16 is out of range (expected 1..=8)"
        );
        let e = TunableValue::new("fifo_batch", "-1").u64(0, 9).unwrap_err();
        assert_eq!(
            e,
            TunableError::NotANumber {
                name: "fifo_batch".into(),
                value: "-1".into(),
                min: 0,
                max: 9
            }
        );
        assert_eq!(
            e.to_string(),
            "tunable `fifo_batch`: `-1` is not a whole number (expected 0..=9)"
        );
    }

    #[test]
    fn milliseconds_become_jiffies_rounding_up() {
        let hz100 = SchedParams {
            hz: 100,
            nonrot: true,
        };
        let v = TunableValue::new("read_expire", "15");
        assert_eq!(v.ms_as_jiffies(&hz100, 0, INT_MAX), Ok(2));
        assert_eq!(v.ms_as_jiffies(&SchedParams::default(), 0, INT_MAX), Ok(15));
        assert!(matches!(
            v.ms_as_jiffies(&hz100, 20, INT_MAX),
            Err(TunableError::OutOfRange { value: 15, .. })
        ));
    }

    #[test]
    fn switches_and_choices_accept_only_their_texts() {
        assert_eq!(TunableValue::new("low_latency", "1 ").bool(), Ok(true));
        assert_eq!(TunableValue::new("low_latency", "0").bool(), Ok(false));
        let e = TunableValue::new("low_latency", " yes").bool().unwrap_err();
        assert_eq!(e.to_string(), "tunable `low_latency`: `yes` is not 0 or 1");
        let tri = [("-1", -1), ("0", 0), ("1", 1)];
        let v = TunableValue::new("hw_tag", "-1");
        assert_eq!(v.choice(&tri, "-1, 0 or 1"), Ok(-1));
        let e = TunableValue::new("hw_tag", "2")
            .choice(&tri, "-1, 0 or 1")
            .unwrap_err();
        assert_eq!(e.to_string(), "tunable `hw_tag`: `2` is not -1, 0 or 1");
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = TunableError::unknown("deadline", "bogus", &[info("a"), info("b")]);
        assert_eq!(
            e.to_string(),
            "scheduler `deadline` has no tunable `bogus`; valid: a, b"
        );
        let e = TunableError::unknown("noop", "bogus", &[]);
        assert_eq!(
            e.to_string(),
            "scheduler `noop` has no tunables (got `bogus`)"
        );
    }
}
