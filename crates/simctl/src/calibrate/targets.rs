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
//! measures = "TABLE:METRIC"                # optional: the published metric
//!                                          # the value or band is taken from
//!
//! [[targets]]                              # a published measurement table:
//! scenario = "../scenarios/androbench-3.4.toml"
//! measurement = "motog-2013-androbench34:seq_read_mb_s"
//! # runs under each of the table's schedulers (or `schedulers`, a subset)
//! # and compares each run with that scheduler's measured mean
//!
//! [[targets]]                              # a finding's claim:
//! finding = "finding-3"                    # runs as `simctl reproduce 3`
//! ```
//!
//! A finding target runs the finding's simulations on the profile (one
//! seed: the scenarios' own; with the clock pinned when `reproduce` judges
//! it pinned) and scores each of its checks with a hinge: 0 on the
//! paper's side of the threshold, else the shortfall over the threshold
//! (over 1 when the threshold is 0, e.g. a lead's sign), so the objective
//! term is the mean squared shortfall. Targets with a weight > 0 that name
//! a measurement (`measurement`, `measures`) or a finding are what the
//! output profile's `[fit] targets` records.

use crate::fit::FitTarget;
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

/// What a target compares a run with.
#[derive(Clone, Debug, PartialEq)]
pub enum Goal {
    /// A metric of the run report against a value or band.
    Metric(Measured),
    /// A metric of a published measurement table: each run under a
    /// scheduler against that scheduler's measured mean.
    Table(Vec<(String, f64)>),
    /// A finding's claim (`finding-N`), scored by a hinge per check.
    Finding(u32),
}

impl Goal {
    /// What the run under `scheduler` should give, when it is a value or
    /// band.
    pub fn measured(&self, scheduler: Option<&str>) -> Option<Measured> {
        match self {
            Goal::Metric(m) => Some(*m),
            Goal::Table(means) => means
                .iter()
                .find(|(s, _)| Some(s.as_str()) == scheduler)
                .map(|&(_, v)| Measured::Value(v)),
            Goal::Finding(_) => None,
        }
    }
}

/// One measurement to reproduce.
#[derive(Clone, Debug)]
pub struct Target {
    /// Label (the `name`, or the measurement or finding it names, or the
    /// scenario's file stem).
    pub name: String,
    /// Scenario file, resolved against the targets file's folder (empty
    /// for a finding, which runs its own scenarios).
    pub scenario: PathBuf,
    /// The scenario path as written (the finding's name for a finding).
    pub scenario_text: String,
    /// Dotted JSON path of the metric in the run report (`finding-N` for a
    /// finding).
    pub metric: String,
    /// What the runs are compared with.
    pub goal: Goal,
    /// The measurement or finding fitted to, as `[fit] targets` names it
    /// (`TABLE:METRIC` or `finding-N`), when the target names one.
    pub fit_name: Option<String>,
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
    #[serde(default)]
    scenario: Option<String>,
    #[serde(default)]
    metric: Option<String>,
    #[serde(default)]
    measurement: Option<String>,
    #[serde(default)]
    measures: Option<String>,
    #[serde(default)]
    finding: Option<String>,
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
    let findings = crate::reproduce::finding_numbers();
    for (i, t) in f.targets.into_iter().enumerate() {
        let at = format!(
            "{src}: targets[{i}]{}",
            t.name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
        let weight = t.weight.unwrap_or(1.0);
        if !(weight.is_finite() && weight >= 0.0) {
            bail!("{at}: weight = {weight}: expected a number >= 0 (0 = held out: run and recorded, not fitted)");
        }
        for s in &t.schedulers {
            if !known_schedulers.contains(&s.as_str()) {
                bail!(
                    "{at}: unknown scheduler `{s}`; valid: {}",
                    known_schedulers.join(", ")
                );
            }
        }
        let target = match (&t.finding, &t.measurement) {
            (Some(_), Some(_)) => bail!("{at}: give finding or measurement, not both"),
            (Some(name), None) => finding_target(&at, &t, name, &findings)?,
            (None, Some(name)) => table_target(&at, &t, name, dir, &findings)?,
            (None, None) => metric_target(&at, &t, dir, &findings)?,
        };
        out.push(Target { weight, ..target });
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

/// A target that is a finding's claim.
fn finding_target(at: &str, t: &RawTarget, name: &str, findings: &[u32]) -> Result<Target> {
    let extra = [
        ("scenario", t.scenario.is_some()),
        ("metric", t.metric.is_some()),
        ("value", t.value.is_some()),
        ("band", t.band.is_some()),
        ("measures", t.measures.is_some()),
        ("schedulers", !t.schedulers.is_empty()),
    ];
    if let Some((key, _)) = extra.iter().find(|(_, given)| *given) {
        bail!("{at}: finding = {name:?} runs the finding's own scenarios and judges its claim: remove `{key}`");
    }
    let n = match FitTarget::parse(name, findings)
        .map_err(|e| anyhow::anyhow!("{at}: finding = {name:?}: {e}"))?
    {
        FitTarget::Finding(n) => n,
        FitTarget::Measurement { .. } => bail!("{at}: finding = {name:?}: expected \"finding-N\""),
    };
    Ok(Target {
        name: t.name.clone().unwrap_or_else(|| name.to_string()),
        scenario: PathBuf::new(),
        scenario_text: name.to_string(),
        metric: name.to_string(),
        goal: Goal::Finding(n),
        fit_name: Some(name.to_string()),
        weight: 1.0,
        schedulers: Vec::new(),
    })
}

/// A target that is a metric of a published measurement table.
fn table_target(
    at: &str,
    t: &RawTarget,
    name: &str,
    dir: &Path,
    findings: &[u32],
) -> Result<Target> {
    for (key, given) in [
        ("value", t.value.is_some()),
        ("band", t.band.is_some()),
        ("metric", t.metric.is_some()),
        ("measures", t.measures.is_some()),
    ] {
        if given {
            bail!("{at}: measurement = {name:?} takes the table's per-scheduler means and report key: remove `{key}`");
        }
    }
    let (table, key) = match FitTarget::parse(name, findings)
        .map_err(|e| anyhow::anyhow!("{at}: measurement = {name:?}: {e}"))?
    {
        FitTarget::Measurement { table, metric } => (table, metric),
        FitTarget::Finding(_) => {
            bail!("{at}: measurement = {name:?}: a finding goes in `finding = {name:?}`")
        }
    };
    let table = crate::measurements::find(table).map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
    let m = table
        .metric(&key)
        .map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
    let schedulers = if t.schedulers.is_empty() {
        table.schedulers.clone()
    } else {
        t.schedulers.clone()
    };
    let mut means = Vec::new();
    for s in &schedulers {
        let Some(k) = table.schedulers.iter().position(|x| x == s) else {
            bail!(
                "{at}: scheduler `{s}` is not in measurement table `{}` (it has {})",
                table.name,
                table.schedulers.join(", ")
            );
        };
        means.push((s.clone(), m.mean[k]));
    }
    let (scenario, scenario_text) = scenario_of(at, t, dir)?;
    Ok(Target {
        name: t.name.clone().unwrap_or_else(|| name.to_string()),
        scenario,
        scenario_text,
        metric: format!("{}.{key}", table.report_section),
        goal: Goal::Table(means),
        fit_name: Some(table.target_name(&key)),
        weight: 1.0,
        schedulers,
    })
}

/// A target that is a metric of the run report against a value or band.
fn metric_target(at: &str, t: &RawTarget, dir: &Path, findings: &[u32]) -> Result<Target> {
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
        (None, None) => bail!("{at}: no measurement: add value = X or band = [LOW, HIGH] (or measurement = \"TABLE:METRIC\", or finding = \"finding-N\")"),
    };
    let Some(metric) = t.metric.clone() else {
        bail!("{at}: no metric: add metric = \"a.dotted.report.path\"");
    };
    if metric.trim().is_empty() || metric.split('.').any(str::is_empty) {
        bail!("{at}: metric = {metric:?}: expected a dotted JSON path such as \"throughput.iops\"");
    }
    if let Some(m) = &t.measures {
        match FitTarget::parse(m, findings).map_err(|e| anyhow::anyhow!("{at}: measures = {m:?}: {e}"))? {
            FitTarget::Measurement { .. } => {}
            FitTarget::Finding(_) => bail!("{at}: measures = {m:?}: expected \"TABLE:METRIC\" (a finding is its own target: finding = {m:?})"),
        }
    }
    let (scenario, scenario_text) = scenario_of(at, t, dir)?;
    let name = t.name.clone().unwrap_or_else(|| {
        Path::new(&scenario_text)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| scenario_text.clone())
    });
    Ok(Target {
        name,
        scenario,
        scenario_text,
        metric,
        goal: Goal::Metric(measured),
        fit_name: t.measures.clone(),
        weight: 1.0,
        schedulers: t.schedulers.clone(),
    })
}

/// The target's scenario, resolved against the targets file's folder.
fn scenario_of(at: &str, t: &RawTarget, dir: &Path) -> Result<(PathBuf, String)> {
    let Some(text) = t.scenario.clone() else {
        bail!("{at}: no scenario: add scenario = \"FILE\" (relative to the targets file)");
    };
    let scenario = dir.join(&text);
    if !scenario.is_file() {
        bail!(
            "{at}: scenario = {text:?}: no such file ({})",
            scenario.display()
        );
    }
    Ok((scenario, text))
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
