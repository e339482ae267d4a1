//! A phone's `[uncertain]` table: the values of its device and host
//! profiles that no source fixes and that can decide a finding, each as a
//! range or a set of alternatives, with the reason it is unknown.
//!
//! Keys are `--set` keys (`device.map_cache.entries`, `host.…`). One rule
//! reads every entry:
//!
//! * an array of exactly two numbers is a closed range `[lo, hi]` (two
//!   integers: an integer-valued key, sampled as integers);
//! * any other array (strings, booleans, three or more numbers) is a set of
//!   alternatives;
//! * a table is the long form: `{ range = [lo, hi], reason = "…" }` or
//!   `{ alternatives = [a, b], reason = "…" }` (two numeric alternatives
//!   need it: `[16, 32]` would read as a range).
//!
//! Every entry has exactly one reason: the long form's `reason`, or the
//! same key in the `[uncertain.reasons]` table. The profile's own value
//! stays the nominal point (what `run` uses); it must lie inside the range
//! or be one of the alternatives. Which keys and values a profile accepts
//! is checked by [`check_accepted`].

use crate::error::{Error, Result, SettingError};
use toml::Value;

/// Name of the sub-table that holds the short form's reasons.
const REASONS: &str = "reasons";

/// What an unknown value may be.
#[derive(Clone, Debug, PartialEq)]
pub enum Spread {
    /// A closed range `[lo, hi]`, in the key's own unit; `integer` when
    /// the key takes integers (both ends written as integers).
    Range {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
        /// Sampled as integers.
        integer: bool,
    },
    /// A closed set of alternatives, as TOML literals in `--set` form.
    Alternatives(Vec<String>),
}

/// One `[uncertain]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Uncertain {
    /// The `--set` key, e.g. `device.ftl.mapping`.
    pub key: String,
    /// Its range or alternatives.
    pub spread: Spread,
    /// Why no source fixes it.
    pub reason: String,
}

impl Uncertain {
    /// The range or the alternatives as the page and CSV header show them:
    /// `[8, 64]` or `hybrid | page | dftl`.
    pub fn describe(&self) -> String {
        match &self.spread {
            Spread::Range { lo, hi, .. } => format!("[{lo}, {hi}]"),
            Spread::Alternatives(a) => a.join(" | "),
        }
    }

    /// The `--set` values to probe for acceptance: both ends of a range,
    /// every alternative.
    pub fn probe_values(&self) -> Vec<String> {
        match &self.spread {
            Spread::Range { lo, hi, integer } => {
                [lo, hi].iter().map(|v| literal(**v, *integer)).collect()
            }
            Spread::Alternatives(a) => a.clone(),
        }
    }
}

/// A range point as a `--set` literal: integers without a fraction, floats
/// with one (so `24.0` stays a float key's value).
pub fn literal(v: f64, integer: bool) -> String {
    if integer {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v}");
        if s.contains(['.', 'e', 'E']) || !v.is_finite() {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// A TOML value as a `--set` literal (strings without quotes).
fn set_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses the `[uncertain]` table of `src`, checking its form: a range's
/// ends are finite numbers with `lo <= hi`, alternatives are distinct and
/// at least two, every entry has one reason and every reason an entry.
///
/// Errors name `src`, the entry's key and what was expected.
pub fn parse(src: &str, table: &toml::Table) -> Result<Vec<Uncertain>> {
    let at = |key: &str, msg: String| entry_error(src, key, msg);
    let reasons = match table.get(REASONS) {
        None => toml::Table::new(),
        Some(Value::Table(t)) => t.clone(),
        Some(_) => {
            return Err(at(
                REASONS,
                "expected a table of reasons keyed like the entries".into(),
            ))
        }
    };
    let mut out = Vec::new();
    for (key, v) in table.iter().filter(|(k, _)| *k != REASONS) {
        if !key.starts_with("device.") && !key.starts_with("host.") {
            return Err(at(
                key,
                "unknown key: an unknown internal is a device.* or host.* --set key, e.g. \"device.map_cache.entries\"".into(),
            ));
        }
        let (spread, long_reason) = match v {
            Value::Array(a) => (spread_of(a, &|m| at(key, m))?, None),
            Value::Table(t) => long_form(t, &|m| at(key, m))?,
            other => {
                return Err(at(
                    key,
                    format!("{other}: expected [lo, hi], [alternative, ...] or {{ range = [lo, hi], reason = \"...\" }}"),
                ))
            }
        };
        let reason = match (long_reason, reasons.get(key)) {
            (Some(_), Some(_)) => {
                return Err(at(
                    key,
                    "has a reason twice (its own and in [uncertain.reasons]); keep one".into(),
                ))
            }
            (Some(r), None) => r,
            (None, Some(Value::String(r))) => r.clone(),
            (None, Some(other)) => {
                return Err(at(key, format!("reason {other}: expected a string")));
            }
            (None, None) => return Err(at(
                key,
                "no reason: say why it is unknown in [uncertain.reasons] or the long form's reason"
                    .into(),
            )),
        };
        if reason.trim().is_empty() {
            return Err(at(key, "the reason is empty".into()));
        }
        out.push(Uncertain {
            key: key.clone(),
            spread,
            reason,
        });
    }
    if let Some(k) = reasons.keys().find(|k| !table.contains_key(*k)) {
        return Err(at(
            &format!("{REASONS}.{k}"),
            "a reason for no entry; add the entry or remove the reason".into(),
        ));
    }
    Ok(out)
}

/// The long form's spread and reason.
fn long_form(t: &toml::Table, at: &dyn Fn(String) -> Error) -> Result<(Spread, Option<String>)> {
    if let Some(k) = t
        .keys()
        .find(|k| !["range", "alternatives", "reason"].contains(&k.as_str()))
    {
        return Err(at(format!(
            "unknown field `{k}`: expected range or alternatives, and reason"
        )));
    }
    let reason = match t.get("reason") {
        Some(Value::String(r)) => Some(r.clone()),
        Some(other) => return Err(at(format!("reason = {other}: expected a string"))),
        None => None,
    };
    let spread = match (t.get("range"), t.get("alternatives")) {
        (Some(Value::Array(r)), None) => {
            let s = spread_of(r, at)?;
            if !matches!(s, Spread::Range { .. }) {
                return Err(at("range: expected two numbers [lo, hi]".into()));
            }
            s
        }
        (None, Some(Value::Array(a))) => alternatives(a, at)?,
        _ => {
            return Err(at(
                "expected exactly one of range = [lo, hi] or alternatives = [...]".into(),
            ))
        }
    };
    Ok((spread, reason))
}

/// The short form: two numbers are a range, anything else alternatives.
fn spread_of(a: &[Value], at: &dyn Fn(String) -> Error) -> Result<Spread> {
    let num = |v: &Value| match v {
        Value::Integer(i) => Some((*i as f64, true)),
        Value::Float(f) => Some((*f, false)),
        _ => None,
    };
    if let [x, y] = a {
        if let (Some((lo, li)), Some((hi, hi_int))) = (num(x), num(y)) {
            if !(lo.is_finite() && hi.is_finite()) {
                return Err(at(format!("[{lo}, {hi}]: the ends must be finite")));
            }
            if lo > hi {
                return Err(at(format!("[{lo}, {hi}]: lo > hi; write [lo, hi]")));
            }
            return Ok(Spread::Range {
                lo,
                hi,
                integer: li && hi_int,
            });
        }
    }
    alternatives(a, at)
}

/// A set of at least two distinct alternatives.
fn alternatives(a: &[Value], at: &dyn Fn(String) -> Error) -> Result<Spread> {
    let v: Vec<String> = a.iter().map(set_text).collect();
    if v.len() < 2 {
        return Err(at(format!(
            "{} alternative(s): expected at least two (a value with one is not uncertain)",
            v.len()
        )));
    }
    if let Some(d) = v.iter().enumerate().find(|(i, x)| v[..*i].contains(x)) {
        return Err(at(format!("alternative `{}` is given twice", d.1)));
    }
    if a.iter()
        .any(|x| matches!(x, Value::Table(_) | Value::Array(_)))
    {
        return Err(at("alternatives are numbers, strings or booleans".into()));
    }
    Ok(Spread::Alternatives(v))
}

/// Checks the nominal value (the profile's own, `nominal` as found in its
/// device or host profile) against the entry's spread.
pub fn check_nominal(src: &str, u: &Uncertain, nominal: Option<&Value>) -> Result<()> {
    let at = |msg: String| entry_error(src, &u.key, msg);
    let Some(nominal) = nominal else {
        return Err(at(
            "the profile states no value for it: write the nominal value in the device or host profile (or [host_settings])".into(),
        ));
    };
    match &u.spread {
        Spread::Range { lo, hi, .. } => {
            let v = match nominal {
                Value::Integer(i) => *i as f64,
                Value::Float(f) => *f,
                other => {
                    return Err(at(format!(
                        "nominal {other} is not a number; a range needs one"
                    )))
                }
            };
            if v < *lo || v > *hi {
                return Err(at(format!(
                    "the profile's value {v} lies outside the range [{lo}, {hi}]"
                )));
            }
        }
        Spread::Alternatives(a) => {
            let n = set_text(nominal);
            if !a.contains(&n) {
                return Err(at(format!(
                    "the profile's value `{n}` is not one of the alternatives ({})",
                    a.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Checks that every end and alternative of every entry is a value the
/// phone's profiles accept: a replay scenario with `base` (the phone's
/// overrides) and the value must validate, device profile included.
pub fn check_accepted(src: &str, entries: &[Uncertain], base: &[(String, String)]) -> Result<()> {
    let trace = std::path::Path::new("uncertain-check.csv");
    for u in entries {
        for v in u.probe_values() {
            let mut sets = base.to_vec();
            sets.push((u.key.clone(), v.clone()));
            let ok = super::Scenario::for_trace(trace, &sets).and_then(|sc| {
                sc.device_config()?;
                Ok(())
            });
            if let Err(e) = ok {
                return Err(entry_error(
                    src,
                    &u.key,
                    format!("the value {v} is not accepted: {e}"),
                ));
            }
        }
    }
    Ok(())
}

/// The error of entry `key` of `src`'s `[uncertain]` table: `problem`
/// says what was found and what was expected.
fn entry_error(src: &str, key: &str, problem: String) -> Error {
    Error::setting(
        src,
        SettingError::Field {
            key: format!("[uncertain] \"{key}\""),
            problem,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str::<toml::Table>(text).unwrap()["uncertain"]
            .as_table()
            .unwrap()
            .clone()
    }

    #[test]
    fn short_and_long_forms_read_by_one_rule() {
        let t = table(
            r#"
[uncertain]
"device.ftl.mapping" = ["hybrid", "page", "dftl"]
"device.map_cache.entries" = [8, 64]
"device.nand.t_r_us" = [40.0, 80]
"device.write_buffer.size_kib" = { alternatives = [16, 32], reason = "not in any datasheet" }
"device.gc.idle_gc_after_ms" = { range = [10.0, 1000.0], reason = "vendor firmware" }
[uncertain.reasons]
"device.ftl.mapping" = "firmware is closed"
"device.map_cache.entries" = "SRAM size unpublished"
"device.nand.t_r_us" = "die unknown"
"#,
        );
        let u = parse("p.toml", &t).unwrap();
        assert_eq!(u.len(), 5);
        let get = |k: &str| u.iter().find(|x| x.key == k).unwrap().spread.clone();
        assert_eq!(
            get("device.ftl.mapping"),
            Spread::Alternatives(vec!["hybrid".into(), "page".into(), "dftl".into()])
        );
        assert_eq!(
            get("device.map_cache.entries"),
            Spread::Range {
                lo: 8.0,
                hi: 64.0,
                integer: true
            }
        );
        assert!(matches!(
            get("device.nand.t_r_us"),
            Spread::Range { integer: false, .. }
        ));
        assert_eq!(
            get("device.write_buffer.size_kib"),
            Spread::Alternatives(vec!["16".into(), "32".into()])
        );
    }

    #[test]
    fn malformed_entries_are_located() {
        let cases = [
            (r#""device.map_cache.entries" = [64, 8]"#, "lo > hi"),
            (r#""queue.read_ahead_kb" = [0, 128]"#, "unknown key"),
            (r#""device.ftl.mapping" = ["page"]"#, "at least two"),
            (r#""device.ftl.mapping" = ["page", "page"]"#, "twice"),
            (r#""device.map_cache.entries" = 8"#, "expected [lo, hi]"),
            (
                r#""device.map_cache.entries" = { range = [1, 2], why = "x" }"#,
                "unknown field",
            ),
        ];
        for (entry, want) in cases {
            let t = table(&format!(
                "[uncertain]\n{entry}\n[uncertain.reasons]\n\"{}\" = \"r\"\n",
                entry.split('"').nth(1).unwrap()
            ));
            let e = parse("p.toml", &t).unwrap_err().to_string();
            assert!(e.contains("p.toml") && e.contains(want), "{entry}: {e}");
        }
        let e = parse(
            "p.toml",
            &table("[uncertain]\n\"device.map_cache.entries\" = [8, 64]\n"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no reason"), "{e}");
    }

    #[test]
    fn the_nominal_value_must_lie_inside() {
        let u = Uncertain {
            key: "device.map_cache.entries".into(),
            spread: Spread::Range {
                lo: 8.0,
                hi: 64.0,
                integer: true,
            },
            reason: "r".into(),
        };
        assert!(check_nominal("p", &u, Some(&Value::Integer(36))).is_ok());
        let e = check_nominal("p", &u, Some(&Value::Integer(128)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside"), "{e}");
        assert!(check_nominal("p", &u, None).is_err());
        assert_eq!(literal(24.0, false), "24.0");
        assert_eq!(literal(24.4, true), "24");
    }
}
