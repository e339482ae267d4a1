//! The targets file of `simctl calibrate`: measurements the fitted profile
//! should reproduce.
//!
//! ```toml
//! note = "what the targets are and where the numbers come from"
//! [[targets]]
//! name = "seq-read"                       # optional label
//! scenario = "../scenarios/x.toml"         # relative to this file
//! metric = "throughput.mb_per_s"           # JSON path in the run report
//! band = [53.0, 63.0]                      # or: value = 58.0
//! weight = 1.0                             # optional, default 1; 0 = held out
//! schedulers = ["noop", "cfq"]             # optional: run under each
//! ```

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// What a target's runs should give: one value or a band.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measured {
    /// A single measured value.
    Value(f64),
    /// A measured range `[low, high]`: anything inside is exact.
    Band(f64, f64),
}

impl Measured {
    /// Signed relative error of `achieved`: 0 inside a band, else the
    /// distance to the nearer end (or to the value) over that end.
    pub fn relative_error(self, achieved: f64) -> f64 {
        match self {
            Measured::Value(v) => (achieved - v) / v,
            Measured::Band(lo, _) if achieved < lo => (achieved - lo) / lo,
            Measured::Band(_, hi) if achieved > hi => (achieved - hi) / hi,
            Measured::Band(..) => 0.0,
        }
    }

    /// As text, for tables.
    pub fn text(self) -> String {
        match self {
            Measured::Value(v) => format!("{v}"),
            Measured::Band(lo, hi) => format!("{lo}–{hi}"),
        }
    }
}

/// One measurement to reproduce.
#[derive(Clone, Debug)]
pub struct Target {
    /// Label (the `name`, or the scenario's file stem).
    pub name: String,
    /// Scenario file, resolved against the targets file's folder.
    pub scenario: PathBuf,
    /// The scenario path as written.
    pub scenario_text: String,
    /// Dotted JSON path of the metric in the run report.
    pub metric: String,
    /// The measurement.
    pub measured: Measured,
    /// Weight in the objective; 0 = held out (run and recorded with its
    /// error, not fitted: a validation of the fit).
    pub weight: f64,
    /// Schedulers to run it under (empty: the profile's or scenario's).
    pub schedulers: Vec<String>,
}

/// The parsed targets file.
#[derive(Clone, Debug)]
pub struct Targets {
    /// Free text describing the targets (copied into the record).
    pub note: String,
    /// The targets, in file order.
    pub targets: Vec<Target>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    note: String,
    #[serde(default)]
    targets: Vec<RawTarget>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    #[serde(default)]
    name: Option<String>,
    scenario: String,
    metric: String,
    #[serde(default)]
    value: Option<f64>,
    #[serde(default)]
    band: Option<Vec<f64>>,
    #[serde(default)]
    weight: Option<f64>,
    #[serde(default)]
    schedulers: Vec<String>,
}

/// Reads and checks a targets file; every error names the file and the
/// target (`targets[i]`, 0-based, with its name).
pub fn load(path: &Path, known_schedulers: &[&str]) -> Result<Targets> {
    let src = path.display().to_string();
    let text = mmcsim::textfile::read_config(path).with_context(|| format!("--targets {src}"))?;
    let f: File = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{src}: {}", e.to_string().trim_end()))?;
    if f.targets.is_empty() {
        bail!("{src}: no [[targets]]: add at least one (scenario, metric, value or band)");
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for (i, t) in f.targets.into_iter().enumerate() {
        let at = format!(
            "{src}: targets[{i}]{}",
            t.name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
        let measured = match (t.value, t.band.as_deref()) {
            (Some(v), None) => {
                if !(v.is_finite() && v > 0.0) {
                    bail!("{at}: value = {v}: expected a measurement > 0");
                }
                Measured::Value(v)
            }
            (None, Some([lo, hi])) => {
                if !(lo.is_finite() && hi.is_finite() && *lo > 0.0 && lo <= hi) {
                    bail!("{at}: band = [{lo}, {hi}]: expected [low, high] with 0 < low <= high");
                }
                Measured::Band(*lo, *hi)
            }
            (None, Some(b)) => bail!("{at}: band has {} numbers: expected [low, high]", b.len()),
            (Some(_), Some(_)) => bail!("{at}: give either value or band, not both"),
            (None, None) => bail!("{at}: no measurement: add value = X or band = [LOW, HIGH]"),
        };
        let weight = t.weight.unwrap_or(1.0);
        if !(weight.is_finite() && weight >= 0.0) {
            bail!("{at}: weight = {weight}: expected a number >= 0 (0 = held out: run and recorded, not fitted)");
        }
        if t.metric.trim().is_empty() || t.metric.split('.').any(str::is_empty) {
            bail!(
                "{at}: metric = {:?}: expected a dotted JSON path such as \"throughput.iops\"",
                t.metric
            );
        }
        for s in &t.schedulers {
            if !known_schedulers.contains(&s.as_str()) {
                bail!(
                    "{at}: unknown scheduler `{s}`; valid: {}",
                    known_schedulers.join(", ")
                );
            }
        }
        let scenario = dir.join(&t.scenario);
        if !scenario.is_file() {
            bail!(
                "{at}: scenario = {:?}: no such file ({})",
                t.scenario,
                scenario.display()
            );
        }
        let name = t.name.clone().unwrap_or_else(|| {
            Path::new(&t.scenario)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| t.scenario.clone())
        });
        out.push(Target {
            name,
            scenario,
            scenario_text: t.scenario,
            metric: t.metric,
            measured,
            weight,
            schedulers: t.schedulers,
        });
    }
    if !out.is_empty() && out.iter().all(|t| t.weight == 0.0) {
        bail!(
            "{}: every target has weight = 0 (held out): nothing to fit; give at least one a weight > 0",
            path.display()
        );
    }
    Ok(Targets {
        note: f.note,
        targets: out,
    })
}

/// The number at dotted `path` in a report (`a.b.0.c`: array indices are
/// numbers), or an error naming the keys available where the path ends.
pub fn metric(report: &serde_json::Value, path: &str) -> std::result::Result<f64, String> {
    let mut v = report;
    let mut walked = Vec::new();
    for part in path.split('.') {
        let next = match v {
            serde_json::Value::Object(m) => m.get(part),
            serde_json::Value::Array(a) => part.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        };
        let Some(n) = next else {
            let here = if walked.is_empty() {
                "the report".to_string()
            } else {
                format!("`{}`", walked.join("."))
            };
            let keys = match v {
                serde_json::Value::Object(m) => {
                    let k: Vec<&str> = m.keys().map(String::as_str).collect();
                    format!("keys there: {}", k.join(", "))
                }
                serde_json::Value::Array(a) => format!("an array of {} there", a.len()),
                other => format!("a {} there", kind(other)),
            };
            return Err(format!(
                "metric `{path}`: `{part}` not found in {here} ({keys})"
            ));
        };
        walked.push(part);
        v = n;
    }
    v.as_f64()
        .ok_or_else(|| format!("metric `{path}` is a {}, not a number", kind(v)))
}

fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_error_is_zero_inside_a_band_and_measured_from_its_nearer_end() {
        let b = Measured::Band(10.0, 20.0);
        assert_eq!(b.relative_error(15.0), 0.0);
        assert!((b.relative_error(5.0) + 0.5).abs() < 1e-12);
        assert!((b.relative_error(30.0) - 0.5).abs() < 1e-12);
        assert!((Measured::Value(4.0).relative_error(5.0) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn metric_paths_walk_tables_and_arrays_and_name_what_is_there() {
        let r = serde_json::json!({"a": {"b": [1.5, {"c": 2}]}, "s": "x"});
        assert_eq!(metric(&r, "a.b.0"), Ok(1.5));
        assert_eq!(metric(&r, "a.b.1.c"), Ok(2.0));
        let e = metric(&r, "a.x").unwrap_err();
        assert!(
            e.contains("`x` not found in `a`") && e.contains("keys there: b"),
            "{e}"
        );
        assert!(metric(&r, "s").unwrap_err().contains("string"));
    }
}
