//! `--set KEY=VALUE` overrides applied to a scenario's TOML tree.

use crate::error::{Error, OverrideProblem, Result};
use toml::Value;

/// Splits `KEY=VALUE`; errors say what was expected.
pub fn parse_set(arg: &str) -> Result<(String, String)> {
    match arg.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(bad(arg, OverrideProblem::NotKeyValue)),
    }
}

/// The error of override `key`.
fn bad(key: &str, problem: OverrideProblem) -> Error {
    Error::Override {
        key: key.to_string(),
        problem,
    }
}

/// Parses an override value as a TOML literal (integer, float — TOML's
/// `inf`, `-inf` and `nan` included, so the setting's own check refuses
/// them by name and range — boolean, or an array / inline table written
/// in TOML, e.g. `[300.0, 600.0]`) and falls back to a string.
fn literal(value: &str) -> Value {
    if value.starts_with('[') || value.starts_with('{') {
        if let Ok(mut t) = toml::from_str::<toml::Table>(&format!("v = {value}")) {
            if let Some(v) = t.remove("v") {
                return v;
            }
        }
    }
    if let Ok(i) = value.parse::<i64>() {
        return Value::Integer(i);
    }
    if let Ok(f) = value.parse::<f64>() {
        let toml_special = ["inf", "+inf", "-inf", "nan", "+nan", "-nan"].contains(&value);
        if f.is_finite() || toml_special {
            return Value::Float(f);
        }
    }
    match value {
        "true" => Value::Boolean(true),
        "false" => Value::Boolean(false),
        _ => Value::String(value.trim_matches('"').to_string()),
    }
}

/// Top-level sections an override may address.
const SECTIONS: &[&str] = &[
    "queue",
    "iosched",
    "scheduler",
    "driver",
    "device",
    "host",
    "writeback",
    "fs",
    "precondition",
    "trace",
    "seed",
    "android_version",
    "jobs",
    "sqlite",
    "androbench",
];

/// Applies one override to the scenario tree `root`.
///
/// `iosched.<name>` lands in `scheduler.tunables.<name>` as text (tunables
/// are parsed by the scheduler, in sysfs units); `device.<section>.<key>`
/// lands in the device overrides that are merged over the profile. Unknown
/// sections are rejected here; unknown keys inside a section are rejected
/// when the scenario is validated.
pub fn apply_set(root: &mut Value, key: &str, value: &str) -> Result<()> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) || !SECTIONS.contains(&parts[0]) {
        return Err(bad(
            key,
            OverrideProblem::UnknownSection {
                known: SECTIONS.join(", "),
            },
        ));
    }
    let (path, val): (Vec<&str>, Value) = match parts[0] {
        "jobs" => return set_job_key(root, &parts, value, key),
        "iosched" => {
            if parts.len() != 2 {
                return Err(bad(
                    key,
                    OverrideProblem::Shape {
                        expected: "iosched.<tunable>, e.g. iosched.fifo_batch".into(),
                    },
                ));
            }
            (
                vec!["scheduler", "tunables", parts[1]],
                Value::String(value.to_string()),
            )
        }
        "seed" => {
            if parts.len() != 1 {
                return Err(bad("seed", OverrideProblem::NoSubKey));
            }
            // A seed is any u64; TOML integers stop at 2^63 - 1, so a
            // larger seed travels as its decimal text.
            let v = match value.trim_matches('"').parse::<u64>() {
                Ok(n) => match i64::try_from(n) {
                    Ok(i) => Value::Integer(i),
                    Err(_) => Value::String(n.to_string()),
                },
                Err(_) => {
                    return Err(bad(
                        "seed",
                        OverrideProblem::NotASeed {
                            value: value.to_string(),
                        },
                    ))
                }
            };
            (parts.clone(), v)
        }
        "android_version" => {
            if parts.len() != 1 {
                return Err(bad("android_version", OverrideProblem::NoSubKey));
            }
            // A release such as 4.4 is text, not a float.
            (
                parts.clone(),
                Value::String(value.trim_matches('"').to_string()),
            )
        }
        _ => {
            if parts.len() < 2 {
                return Err(bad(
                    key,
                    OverrideProblem::Shape {
                        expected: format!("{}.<key>", parts[0]).into(),
                    },
                ));
            }
            let v = if parts[0] == "scheduler" && parts[1] == "name" {
                Value::String(value.to_string())
            } else {
                literal(value)
            };
            (parts.clone(), v)
        }
    };
    let table = root
        .as_table_mut()
        .ok_or_else(|| bad(key, OverrideProblem::NotATable))?;
    insert(table, &path, val, key)
}

/// `jobs.N.KEY=VALUE`: sets `KEY` of the scenario's job number `N`
/// (0-based, in file order).
fn set_job_key(root: &mut Value, parts: &[&str], value: &str, key: &str) -> Result<()> {
    let n = root
        .get("jobs")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let index = match parts {
        [_, i, _] => i.parse::<usize>().ok(),
        _ => None,
    };
    let Some(i) = index else {
        return Err(bad(
            key,
            OverrideProblem::Shape {
                expected: "jobs.<index>.<key>, e.g. jobs.0.request_bytes".into(),
            },
        ));
    };
    if i >= n {
        return Err(bad(key, OverrideProblem::NoSuchJob { jobs: n }));
    }
    let job = root["jobs"][i]
        .as_table_mut()
        .ok_or_else(|| bad(key, OverrideProblem::JobNotATable { index: i }))?;
    // Names, files and enums are strings; everything else a literal.
    let v = match literal(value) {
        Value::Integer(_) | Value::Float(_) | Value::Boolean(_)
            if ["name", "file"].contains(&parts[2]) =>
        {
            Value::String(value.to_string())
        }
        v => v,
    };
    job.insert(parts[2].to_string(), v);
    Ok(())
}

fn insert(table: &mut toml::Table, path: &[&str], val: Value, key: &str) -> Result<()> {
    if path.len() == 1 {
        table.insert(path[0].to_string(), val);
        return Ok(());
    }
    let entry = table
        .entry(path[0].to_string())
        .or_insert_with(|| Value::Table(toml::Table::new()));
    match entry {
        Value::Table(t) => insert(t, &path[1..], val, key),
        _ => Err(bad(
            key,
            OverrideProblem::NotASection {
                name: path[0].to_string(),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iosched_values_land_in_scheduler_tunables_as_text() {
        let mut v: Value = toml::from_str("[scheduler]\nname = \"deadline\"\n").unwrap();
        apply_set(&mut v, "iosched.fifo_batch", "8").unwrap();
        apply_set(&mut v, "queue.read_ahead_kb", "256").unwrap();
        apply_set(&mut v, "device.nand.t_r_us", "60.5").unwrap();
        assert_eq!(v["scheduler"]["tunables"]["fifo_batch"].as_str(), Some("8"));
        assert_eq!(v["queue"]["read_ahead_kb"].as_integer(), Some(256));
        assert_eq!(v["device"]["nand"]["t_r_us"].as_float(), Some(60.5));
    }

    /// TOML's non-finite spellings are floats (the setting's check then
    /// names the key and its range); other words stay strings.
    #[test]
    fn inf_and_nan_are_floats_for_the_settings_check() {
        assert_eq!(literal("inf").as_float(), Some(f64::INFINITY));
        assert_eq!(literal("-inf").as_float(), Some(f64::NEG_INFINITY));
        assert!(literal("nan").as_float().is_some_and(f64::is_nan));
        assert_eq!(literal("infinity").as_str(), Some("infinity"));
        assert_eq!(literal("NaN").as_str(), Some("NaN"));
    }

    #[test]
    fn job_keys_are_set_by_index() {
        let mut v: Value = toml::from_str(
            "[[jobs]]\nname = \"a\"\nrequest_bytes = 4096\n[[jobs]]\nname = \"b\"\n",
        )
        .unwrap();
        apply_set(&mut v, "jobs.1.request_bytes", "16384").unwrap();
        apply_set(&mut v, "jobs.0.sync", "true").unwrap();
        assert_eq!(v["jobs"][1]["request_bytes"].as_integer(), Some(16384));
        assert_eq!(v["jobs"][0]["sync"].as_bool(), Some(true));
        assert_eq!(v["jobs"][0]["request_bytes"].as_integer(), Some(4096));
        let e = apply_set(&mut v, "jobs.2.sync", "true")
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 job(s)"), "{e}");
        assert!(apply_set(&mut v, "jobs.x.sync", "true").is_err());
    }

    #[test]
    fn unknown_sections_and_malformed_pairs_are_rejected() {
        let mut v: Value = toml::from_str("").unwrap();
        let e = apply_set(&mut v, "bogus.x", "1").unwrap_err().to_string();
        assert!(e.contains("queue, iosched"), "{e}");
        assert!(parse_set("novalue").is_err());
        assert_eq!(
            parse_set("seed=3").unwrap(),
            ("seed".to_string(), "3".to_string())
        );
    }
}
