//! `simctl check`: compare a report with a baseline and fail on a
//! regression, for CI.
//!
//! A report is checked only against a baseline of the same workload,
//! device, host and schema (`run.identity`, digests the report records):
//! another one is unusable input unless `--allow-mismatch`. A different
//! scheduler, tunables, seed or mmcsim version is what a check is for, and
//! is only noted.
//!
//! Exit codes: 0 every metric within tolerance or improved, 1 at least one
//! regressed (or improved, with `--fail-on-improvement`; a table says
//! which), 2 unusable input (missing file, not a report, an empty run, a
//! metric absent, an unknown metric in `--tolerance`, a baseline of
//! another workload, device, host or schema).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Whether a bigger value of a metric is better or worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Throughput, fairness, hit rates.
    HigherIsBetter,
    /// Latency, write amplification, GC work.
    LowerIsBetter,
}

/// Metrics checked by default: (JSON path, direction, tolerance in %). A
/// change beyond the tolerance in the worse direction is a regression, in
/// the better direction an improvement.
pub const DEFAULT_METRICS: &[(&str, Direction, f64)] = &[
    ("throughput.iops", Direction::HigherIsBetter, 3.0),
    ("throughput.mb_per_s", Direction::HigherIsBetter, 3.0),
    ("read.iops", Direction::HigherIsBetter, 3.0),
    ("write.iops", Direction::HigherIsBetter, 3.0),
    ("latency_us.mean", Direction::LowerIsBetter, 10.0),
    ("latency_us.p99", Direction::LowerIsBetter, 15.0),
    ("latency_us.p999", Direction::LowerIsBetter, 25.0),
    ("read.latency_us.p99", Direction::LowerIsBetter, 15.0),
    ("write.latency_us.p99", Direction::LowerIsBetter, 15.0),
    ("fairness.jain", Direction::HigherIsBetter, 2.0),
    ("device.waf", Direction::LowerIsBetter, 5.0),
];

/// The direction of a metric path: known metrics, or by name (`latency`,
/// `_us`, `waf`, `gc_` are lower-is-better; `iops`, `mb_per_s`, `jain`,
/// `hit_rate` higher-is-better).
pub fn direction_of(path: &str) -> Option<Direction> {
    if let Some((_, d, _)) = DEFAULT_METRICS.iter().find(|(p, _, _)| *p == path) {
        return Some(*d);
    }
    let last = path.rsplit('.').next().unwrap_or(path);
    if path.contains("latency")
        || last.ends_with("_us")
        || last == "waf"
        || last.starts_with("gc_")
        || path.contains("breakdown")
    {
        Some(Direction::LowerIsBetter)
    } else if last.contains("iops")
        || last.contains("mb_per_s")
        || last == "jain"
        || last.ends_with("hit_rate")
    {
        Some(Direction::HigherIsBetter)
    } else {
        None
    }
}

/// Outcome of one metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Which report (scheduler label for comparisons, `-` for a report).
    pub report: String,
    /// Metric path.
    pub metric: String,
    /// Baseline value.
    pub baseline: f64,
    /// Current value.
    pub now: f64,
    /// Relative change in %, signed (None when the baseline is 0).
    pub change_pct: Option<f64>,
    /// Allowed change in %, either way.
    pub limit_pct: f64,
    /// Within tolerance, regressed or improved.
    pub status: Status,
}

/// The outcome of one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Within tolerance.
    Ok,
    /// Worse by more than the tolerance.
    Regressed,
    /// Better by more than the tolerance.
    Improved,
}

/// What `check` compares and how.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Per-metric tolerances added to or overriding [`DEFAULT_METRICS`].
    pub tolerances: Vec<(String, f64)>,
    /// Check against a baseline of another workload, device, host or
    /// schema (the differences are still listed).
    pub allow_mismatch: bool,
}

/// The result of a check: a row per metric and notes on what differs
/// between the runs without making them incomparable.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// One row per metric and report.
    pub rows: Vec<Row>,
    /// What differs (scheduler, seed, version; or, with
    /// `--allow-mismatch`, workload, device, host or schema).
    pub notes: Vec<String>,
}

pub use crate::output::Unusable;

fn load(path: &Path) -> Result<Value, Unusable> {
    let text = crate::input::read_json_text(path, "report").map_err(|e| Unusable(e.to_string()))?;
    serde_json::from_str(&text)
        .map_err(|e| Unusable(format!("{}: not valid JSON: {e}", path.display())))
}

/// Refuses an empty run (`"empty": true`, from `--allow-empty`): it
/// completed no request, so its metrics say nothing to check.
fn refuse_empty(report: &Value, label: &str, path: &Path, role: &str) -> Result<(), Unusable> {
    if report.get("empty").and_then(Value::as_bool) == Some(true) {
        let which = if label == "-" {
            format!("the {role}")
        } else {
            format!("the {role}'s report `{label}`")
        };
        return Err(Unusable(format!(
            "{}: {which} is an empty run (\"empty\": true: it completed no request); there is nothing to check",
            path.display()
        )));
    }
    Ok(())
}

/// The reports inside a document: a single report (`mmcsim-report/2`) or a
/// comparison (`mmcsim-compare/1`, by label).
/// `role` (report or baseline) names the document in messages.
fn reports(v: &Value, path: &Path, role: &str) -> Result<BTreeMap<String, Value>, Unusable> {
    let mut out = BTreeMap::new();
    match v.get("schema").and_then(Value::as_str) {
        Some(mmcsim::stats::report::SCHEMA) => {
            out.insert("-".to_string(), v.clone());
        }
        Some(old @ "mmcsim-report/1") => {
            return Err(Unusable(format!(
                "{}: {role} has schema {old:?}, an older report format (renamed in {:?}: `breakdown_us.host_software`/`host_share` became `not_device`/`not_device_share`, with `block_submit`, `queue_wait` and `shares` added); run it again with this simctl to compare like with like",
                path.display(),
                mmcsim::stats::report::SCHEMA
            )))
        }
        Some("mmcsim-compare/1") => {
            let Some(list) = v.get("reports").and_then(Value::as_array) else {
                return Err(Unusable(format!(
                    "{}: field `reports`: missing or not an array; expected the list of reports of `simctl compare --json`",
                    path.display()
                )));
            };
            for (i, r) in list.iter().enumerate() {
                let (Some(label), Some(report)) = (
                    r.get("label").and_then(Value::as_str),
                    r.get("report").filter(|r| r.is_object()),
                ) else {
                    return Err(Unusable(format!(
                        "{}: reports[{i}]: expected an object with a `label` string and a `report` object",
                        path.display()
                    )));
                };
                out.insert(label.to_string(), report.clone());
            }
            if out.is_empty() {
                return Err(Unusable(format!(
                    "{}: the comparison has no reports: nothing to check against (an empty baseline never passes a check)",
                    path.display()
                )));
            }
        }
        other => {
            return Err(Unusable(format!(
                "{}: not an mmcsim report (schema {:?}; expected {:?} or \"mmcsim-compare/1\")",
                path.display(),
                other,
                mmcsim::stats::report::SCHEMA
            )))
        }
    }
    for (label, r) in &out {
        refuse_empty(r, label, path, role)?;
    }
    Ok(out)
}

fn metric(v: &Value, path: &str) -> Option<f64> {
    let mut cur = v;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    cur.as_f64()
}

/// Parses `--tolerance METRIC=PCT`.
pub fn parse_tolerance(arg: &str) -> Result<(String, f64), Unusable> {
    let (m, p) = arg.split_once('=').ok_or_else(|| {
        Unusable(format!(
            "--tolerance `{arg}`: expected METRIC=PCT, e.g. latency_us.p99=20"
        ))
    })?;
    let pct: f64 = p
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| Unusable(format!("--tolerance `{arg}`: `{p}` is not a percentage")))?;
    if !(pct.is_finite() && pct >= 0.0) {
        return Err(Unusable(format!(
            "--tolerance `{arg}`: the percentage must be ≥ 0"
        )));
    }
    let m = m.trim().to_string();
    if direction_of(&m).is_none() {
        let known: Vec<&str> = DEFAULT_METRICS.iter().map(|(p, _, _)| *p).collect();
        return Err(Unusable(format!(
            "--tolerance `{arg}`: cannot tell whether higher `{m}` is better; use a latency/_us, waf, gc_, iops, mb_per_s, jain or hit_rate metric, e.g. {}",
            known.join(", ")
        )));
    }
    Ok((m, pct))
}

/// The string at `path` of `v` (`-` when absent).
fn text(v: &Value, path: &str) -> String {
    let mut cur = v;
    for part in path.split('.') {
        match cur.get(part) {
            Some(x) => cur = x,
            None => return "-".into(),
        }
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// The tunables of `r` as (name, value).
fn tunables(r: &Value) -> BTreeMap<String, String> {
    r.pointer("/scheduler/tunables")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| (text(t, "name"), text(t, "value")))
        .collect()
}

/// What differs between report `n` and baseline `b`: (differences that
/// make them incomparable, differences a check is for). `who` prefixes
/// each line (empty, or the report's label).
fn differences(n: &Value, b: &Value, who: &str) -> (Vec<String>, Vec<String>) {
    let (mut refuse, mut note) = (Vec::new(), Vec::new());
    if n.pointer("/run/identity").is_none() || b.pointer("/run/identity").is_none() {
        let which = if b.pointer("/run/identity").is_none() {
            "baseline"
        } else {
            "report"
        };
        refuse.push(format!(
            "{who}identity: the {which} has no `run.identity` (written by an older simctl): regenerate it"
        ));
        return (refuse, note);
    }
    let id = |v: &Value, k: &str| text(v, &format!("run.identity.{k}"));
    // (identity key, what a reader recognises it by, refuse)
    let keys = [
        ("schema", "schema", true),
        ("workload", "run.name", true),
        ("device", "device_profile.name", true),
        ("host", "host.profile", true),
        ("scheduler", "scheduler.name", false),
        ("seed", "run.seed", false),
        ("mmcsim_version", "mmcsim_version", false),
    ];
    for (key, shown, refuses) in keys {
        let (nk, bk) = (id(n, key), id(b, key));
        if nk == bk {
            continue;
        }
        let (ns, bs) = (text(n, shown), text(b, shown));
        let mut line = if ns == nk || ns == bs {
            format!("{who}{key}: report {nk}, baseline {bk}")
        } else {
            format!("{who}{key}: report {ns} ({nk}), baseline {bs} ({bk})")
        };
        if key == "scheduler" && ns == bs {
            let (nt, bt) = (tunables(n), tunables(b));
            let changed: Vec<String> = nt
                .iter()
                .filter(|(k, v)| bt.get(*k) != Some(*v))
                .map(|(k, v)| format!("{k}={v} (baseline {})", bt.get(k).map_or("-", |s| s)))
                .collect();
            line = format!("{who}scheduler {ns}: tunables {}", changed.join(", "));
        }
        if refuses {
            refuse.push(line);
        } else {
            note.push(line);
        }
    }
    (refuse, note)
}

/// The metrics to check: the defaults, overridden or extended by
/// `tolerances`.
fn metrics(tolerances: &[(String, f64)]) -> Vec<(String, Direction, f64)> {
    let mut metrics: Vec<(String, Direction, f64)> = DEFAULT_METRICS
        .iter()
        .map(|(p, d, t)| (p.to_string(), *d, *t))
        .collect();
    for (m, pct) in tolerances {
        match metrics.iter_mut().find(|(p, _, _)| p == m) {
            Some(x) => x.2 = *pct,
            None => metrics.push((m.clone(), direction_of(m).expect("validated"), *pct)),
        }
    }
    metrics
}

/// The status of a metric that went from `bv` to `nv`.
fn status(bv: f64, nv: f64, dir: Direction, limit: f64) -> Status {
    let worse = match dir {
        Direction::HigherIsBetter => bv - nv,
        Direction::LowerIsBetter => nv - bv,
    };
    if bv == 0.0 {
        return match worse.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Greater) => Status::Regressed,
            Some(std::cmp::Ordering::Less) => Status::Improved,
            _ => Status::Ok,
        };
    }
    let pct = worse / bv.abs() * 100.0;
    if pct > limit + 1e-9 {
        Status::Regressed
    } else if -pct > limit + 1e-9 {
        Status::Improved
    } else {
        Status::Ok
    }
}

/// Compares `report` with `baseline` under `opts`: refuses a baseline of
/// another workload, device, host or schema (unless
/// [`Options::allow_mismatch`]), then gives a row per metric.
pub fn check(report: &Path, baseline: &Path, opts: &Options) -> Result<Outcome, Unusable> {
    let now_doc = load(report)?;
    let base_doc = load(baseline)?;
    let now = reports(&now_doc, report, "report")?;
    let base = reports(&base_doc, baseline, "baseline")?;
    let metrics = metrics(&opts.tolerances);
    let mut out = Outcome::default();
    let mut refused = Vec::new();
    for (label, b) in &base {
        let n = now.get(label).ok_or_else(|| {
            Unusable(format!(
                "{}: no report `{label}` to compare with the baseline's",
                report.display()
            ))
        })?;
        let who = if label == "-" {
            String::new()
        } else {
            format!("{label}: ")
        };
        let (refuse, note) = differences(n, b, &who);
        refused.extend(refuse);
        out.notes.extend(note);
        for (m, dir, limit) in &metrics {
            let (Some(bv), Some(nv)) = (metric(b, m), metric(n, m)) else {
                return Err(Unusable(format!(
                    "metric `{m}` missing from {} or {}",
                    baseline.display(),
                    report.display()
                )));
            };
            out.rows.push(Row {
                report: label.clone(),
                metric: m.clone(),
                baseline: bv,
                now: nv,
                change_pct: (bv != 0.0).then(|| (nv - bv) / bv.abs() * 100.0),
                limit_pct: *limit,
                status: status(bv, nv, *dir, *limit),
            });
        }
    }
    if !refused.is_empty() {
        if !opts.allow_mismatch {
            return Err(Unusable(format!(
                "{} and baseline {} did not run the same thing; refusing to compare them (--allow-mismatch checks anyway):\n  {}",
                report.display(),
                baseline.display(),
                refused.join("\n  ")
            )));
        }
        out.notes.extend(refused);
    }
    if out.rows.is_empty() {
        return Err(Unusable(format!(
            "{}: no metric to check: an empty check never passes",
            baseline.display()
        )));
    }
    Ok(out)
}

/// The per-metric table.
pub fn table(rows: &[Row]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<14} {:<24} {:>14} {:>14} {:>9} {:>10}  result",
        "report", "metric", "baseline", "now", "change", "limit"
    );
    for r in rows {
        let change = r
            .change_pct
            .map_or("n/a".to_string(), |c| format!("{c:+.1}%"));
        let _ = writeln!(
            s,
            "{:<14} {:<24} {:>14.3} {:>14.3} {:>9} {:>9}%  {}",
            r.report,
            r.metric,
            r.baseline,
            r.now,
            change,
            format!("±{:.1}", r.limit_pct),
            match r.status {
                Status::Ok => "ok",
                Status::Regressed => "REGRESSED",
                Status::Improved => "improved",
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_follow_the_metric_meaning() {
        assert_eq!(
            direction_of("throughput.iops"),
            Some(Direction::HigherIsBetter)
        );
        assert_eq!(
            direction_of("latency_us.p99"),
            Some(Direction::LowerIsBetter)
        );
        assert_eq!(
            direction_of("device.map_cache_hit_rate"),
            Some(Direction::HigherIsBetter)
        );
        assert_eq!(
            direction_of("device.gc_runs"),
            Some(Direction::LowerIsBetter)
        );
        assert_eq!(direction_of("requests.count"), None);
        assert!(parse_tolerance("requests.count=5").is_err());
        assert_eq!(parse_tolerance("latency_us.p99=20%").unwrap().1, 20.0);
    }
}
