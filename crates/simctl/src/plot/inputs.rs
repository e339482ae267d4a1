//! `simctl plot`: figures from the files runs leave behind — JSON reports
//! (`run`/`replay --json`, sweep cells), comparisons (`compare --json`)
//! and request logs (`run --log`).

use super::reqlog::{self, Row};
pub use super::validation::ClassFilter;
use super::{BarPanel, Figure, Mark, Panel, Series, XyPanel};
use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use serde_json::Value;
use std::path::Path;

/// What `simctl plot` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Latency CDFs on a log axis: call latency from each report's
    /// percentiles, block request latency (exact) from each request log,
    /// and for a replay report with `trace.validation` the recorded and
    /// simulated device service and total latency per direction and size
    /// class.
    Cdf,
    /// Bars: per-thread IOPS and mean latency of each report; per-scheduler
    /// metrics of a comparison.
    Bars,
    /// Throughput and queue depth over simulated time, from request logs.
    Timeline,
    /// Start-address difference to the previous request against device
    /// time, from request logs.
    ScatterAddr,
    /// Speed against safety per configuration, from crash sweeps (output
    /// directories of `simctl sweep` on a grid with `[crash]`, or their
    /// `results.csv`).
    CrashSafety,
}

/// One input file, read and recognised.
#[derive(Clone, Debug)]
pub enum Input {
    /// A run's JSON report (`mmcsim-report/N`).
    Report {
        /// Label: the file stem.
        name: String,
        /// The report.
        json: Value,
    },
    /// A `compare --json` document (`mmcsim-compare/1`).
    Comparison {
        /// Label: the file stem.
        name: String,
        /// The document.
        json: Value,
    },
    /// A request log.
    Log {
        /// Label: the file stem.
        name: String,
        /// Its rows.
        rows: Vec<Row>,
    },
}

/// Reads `path` and recognises it by content.
pub fn load(path: &Path) -> Result<Input> {
    let text = crate::input::read_text(
        path,
        "plot input (report, comparison or request log)",
        crate::input::MAX_PLOT_INPUT_BYTES,
    )?;
    let name = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into(),
    );
    let src = path.display().to_string();
    if reqlog::is_log(&text) {
        return Ok(Input::Log {
            name,
            rows: reqlog::parse(&text, &src)?,
        });
    }
    let json: Value = serde_json::from_str(&text).with_context(|| {
        format!("{src}: neither a request log (CSV from --log) nor JSON from --json")
    })?;
    match json.get("schema").and_then(Value::as_str) {
        Some(s) if s.starts_with("mmcsim-report/") => Ok(Input::Report { name, json }),
        Some(s) if s.starts_with("mmcsim-compare/") => Ok(Input::Comparison { name, json }),
        other => bail!(
            "{src}: JSON with schema {}; expected a report (mmcsim-report/N) or a comparison (mmcsim-compare/1)",
            other.map_or("(none)".to_string(), |s| format!("`{s}`"))
        ),
    }
}

/// The number at dotted `path` in `v`, or an error naming it.
pub fn number(v: &Value, path: &str, source: &str) -> Result<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
        .with_context(|| format!("{source}: no number at `{path}`"))
}

/// The figure of `kind` for `inputs`, the recorded-against-simulated CDF
/// overlay restricted to `class` when one is given (`--class`).
pub fn figure(kind: Kind, inputs: &[Input], class: Option<&ClassFilter>) -> Result<Figure> {
    if inputs.is_empty() {
        bail!("no input file given");
    }
    if class.is_some() && kind != Kind::Cdf {
        bail!("--class selects a panel of the recorded-vs-simulated CDFs: it needs --kind cdf");
    }
    match kind {
        Kind::Cdf => cdf(inputs, class),
        Kind::Bars => bars(inputs),
        Kind::Timeline => per_log(inputs, "timeline", timeline_panels),
        Kind::ScatterAddr => per_log(inputs, "scatter-addr", |name, rows| {
            vec![Panel::Xy(address_scatter(name, rows))]
        }),
        Kind::CrashSafety => {
            bail!("--kind crash-safety reads crash sweeps' output directories, not reports or logs")
        }
    }
}

/// The report percentiles a CDF falls back on (a report written before
/// reports carried `latency_histogram`).
const PERCENTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p999", 0.999),
    ("max", 1.0),
];

/// The legend label of a report: its scheduler and run (`deadline ·
/// rand16-128m`), not the file it was read from.
pub fn report_label(r: &Value, fallback: &str) -> String {
    let scheduler = r.pointer("/scheduler/name").and_then(Value::as_str);
    let run = r.pointer("/run/name").and_then(Value::as_str);
    match (scheduler, run) {
        (Some(s), Some(n)) => format!("{s} · {n}"),
        (Some(s), None) => s.to_string(),
        (None, Some(n)) => n.to_string(),
        (None, None) => fallback.to_string(),
    }
}

/// `labels` made unique: a label that several inputs share gets its input
/// file's name in parentheses.
fn unique(labels: Vec<(String, String)>) -> Vec<String> {
    labels
        .iter()
        .map(|(l, file)| {
            if labels.iter().filter(|(m, _)| m == l).count() > 1 {
                format!("{l} ({file})")
            } else {
                l.clone()
            }
        })
        .collect()
}

fn cdf(inputs: &[Input], class: Option<&ClassFilter>) -> Result<Figure> {
    let mut calls: Vec<(String, String, &Value)> = Vec::new();
    let mut blocks = Vec::new();
    for i in inputs {
        match i {
            Input::Report { name, json } => {
                calls.push((report_label(json, name), name.clone(), json));
            }
            Input::Comparison { name, json } => {
                for (label, r) in comparison_entries(name, json)? {
                    calls.push((label, name.clone(), r));
                }
            }
            Input::Log { name, rows } => {
                let lat = reqlog::latencies_us(rows);
                let n = lat.len() as f64;
                blocks.push(Series {
                    name: name.clone(),
                    points: lat
                        .iter()
                        .enumerate()
                        .map(|(k, v)| (*v, (k + 1) as f64 / n))
                        .collect(),
                    mark: Mark::Line,
                });
            }
        }
    }
    let labels = unique(
        calls
            .iter()
            .map(|(l, f, _)| (l.clone(), f.clone()))
            .collect(),
    );
    let mut series = Vec::new();
    let mut overlays = Vec::new();
    let mut from_percentiles = false;
    for ((_, file, r), label) in calls.iter().zip(labels) {
        let named = (calls.len() > 1).then_some(label.as_str());
        overlays.extend(super::validation::panels(named, file, r, class)?);
        match histogram_cdf(r) {
            Some(points) => series.push(Series {
                name: label,
                points,
                mark: Mark::Line,
            }),
            None => {
                from_percentiles = true;
                series.push(percentile_series(&label, r, file)?);
            }
        }
    }
    let panel = |title: &str, x: &str, series: Vec<Series>| XyPanel {
        title: title.into(),
        x_label: x.into(),
        y_label: "fraction of requests ≤ latency".into(),
        log_x: true,
        x_time_us: true,
        y_range: Some((0.0, 1.02)),
        series,
    };
    let mut panels = Vec::new();
    if class.is_some() {
        // One chosen class: its overlays alone.
        return Figure::new("Recorded against simulated", overlays);
    }
    if !series.is_empty() {
        let title = if from_percentiles {
            "Call latency CDF (a report without latency_histogram: its percentiles only)"
        } else {
            "Call latency CDF (every recorded value, HDR histogram within 0.1 %)"
        };
        panels.push(Panel::Xy(panel(title, "call latency (log scale)", series)));
    }
    if !blocks.is_empty() {
        panels.push(Panel::Xy(panel(
            "Block request latency, arrival to completion (request log)",
            "request latency (log scale)",
            blocks,
        )));
    }
    panels.extend(overlays);
    Figure::new("Latency CDF", panels)
}

/// The CDF of a report's `latency_histogram` as a step line through every
/// recorded bucket, `(latency µs, fraction ≤ it)`; `None` when the report
/// has no histogram (or an empty one).
pub fn histogram_cdf(r: &Value) -> Option<Vec<(f64, f64)>> {
    let buckets = r.pointer("/latency_histogram/buckets")?.as_array()?;
    let pairs: Vec<(f64, f64)> = buckets
        .iter()
        .filter_map(|b| Some((b.get(0)?.as_f64()?, b.get(1)?.as_f64()?)))
        .collect();
    step_cdf(&pairs)
}

/// A step CDF through `(value ns, count)` buckets, ascending: at each
/// bucket's value the fraction rises from the one before to its own.
pub fn step_cdf(buckets: &[(f64, f64)]) -> Option<Vec<(f64, f64)>> {
    let total: f64 = buckets.iter().map(|b| b.1).sum();
    if total <= 0.0 {
        return None;
    }
    let mut points = Vec::with_capacity(buckets.len() * 2);
    let mut running = 0.0;
    for &(v, c) in buckets {
        let x = v / 1000.0;
        points.push((x, running / total));
        running += c;
        points.push((x, running / total));
    }
    Some(points)
}

fn percentile_series(label: &str, r: &Value, file: &str) -> Result<Series> {
    let points = PERCENTILES
        .iter()
        .map(|(k, q)| Ok((number(r, &format!("latency_us.{k}"), file)?, *q)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Series {
        name: format!("{label} (percentiles only)"),
        points,
        mark: Mark::LinePoints,
    })
}

/// `(label, report)` of each entry of a comparison document.
fn comparison_entries<'a>(name: &str, json: &'a Value) -> Result<Vec<(String, &'a Value)>> {
    let reports = json
        .get("reports")
        .and_then(Value::as_array)
        .with_context(|| format!("{name}: comparison without `reports`"))?;
    reports
        .iter()
        .map(|o| {
            let label = o.get("label").and_then(Value::as_str).unwrap_or("?");
            let r = o
                .get("report")
                .with_context(|| format!("{name}: entry `{label}` without `report`"))?;
            Ok((label.to_string(), r))
        })
        .collect()
}

/// The metrics of a per-scheduler bar chart: (title, unit, report key,
/// axis from zero).
const SCHEDULER_METRICS: [(&str, &str, &str, bool); 4] = [
    ("Throughput", "IOPS", "throughput.iops", true),
    ("Mean latency", "mean latency (µs)", "latency_us.mean", true),
    ("p99 latency", "p99 latency (µs)", "latency_us.p99", true),
    (
        "Jain's fairness index",
        "Jain's index over threads",
        "fairness.jain",
        false,
    ),
];

/// A comparison's `seeds` summary of entry `i` and `metric`: `(mean, low,
/// high)` of its 95 % interval.
fn seed_interval(json: &Value, i: usize, metric: &str) -> Option<(f64, f64, f64)> {
    let metrics = json
        .pointer(&format!("/seeds/entries/{i}/metrics"))?
        .as_array()?;
    let m = metrics
        .iter()
        .find(|m| m.get("metric").and_then(Value::as_str) == Some(metric))?;
    let f = |k: &str| m.get(k).and_then(Value::as_f64);
    Some((f("mean")?, f("ci95_low")?, f("ci95_high")?))
}

/// The figure of a comparison document (`compare --json`, or what
/// `compare --plot` draws): one bar panel per metric, one bar per entry —
/// at the mean over the seeds with its 95 % error bar when the comparison
/// ran several — and the entries' latency CDFs (every seed's requests
/// pooled when it ran several).
pub fn comparison_figure(title: &str, json: &Value) -> Result<Figure> {
    let entries = comparison_entries(title, json)?;
    let seeds = json.pointer("/seeds/count").and_then(Value::as_u64);
    let mut panels = Vec::new();
    for (t, unit, key, from_zero) in SCHEDULER_METRICS {
        let mut bars = Vec::new();
        let mut errors = Vec::new();
        for (i, (l, r)) in entries.iter().enumerate() {
            match seed_interval(json, i, key) {
                Some((mean, lo, hi)) => {
                    bars.push((l.clone(), mean));
                    errors.push(Some((lo, hi)));
                }
                None => {
                    bars.push((l.clone(), number(r, key, l)?));
                    errors.push(None);
                }
            }
        }
        let t = match seeds {
            Some(n) => format!("{t} (mean of {n} seeds, 95 % interval)"),
            None => format!("{t} (one seed: no interval)"),
        };
        panels.push(Panel::Bars(
            BarPanel {
                from_zero,
                ..BarPanel::amounts(&t, unit, bars)
            }
            .with_errors(errors),
        ));
    }
    // With several seeds, each entry's CDF pools every seed's requests
    // (`seeds.entries[i].latency_histogram`); a comparison written before
    // that key existed falls back on seed 1's run, and says so.
    let pooled = |i: usize| {
        json.pointer(&format!("/seeds/entries/{i}"))
            .and_then(histogram_cdf)
    };
    let mut all_pooled = seeds.is_some();
    let series: Vec<Series> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, (l, r))| {
            let points = match pooled(i) {
                Some(p) => p,
                None => {
                    all_pooled = false;
                    histogram_cdf(r)?
                }
            };
            Some(Series {
                name: l.clone(),
                points,
                mark: Mark::Line,
            })
        })
        .collect();
    panels.push(Panel::Xy(XyPanel {
        title: match seeds {
            Some(n) if all_pooled => {
                format!("Call latency CDF, {n} seeds pooled (every recorded value)")
            }
            Some(_) => "Call latency CDF, seed 1 (every recorded value)".into(),
            None => "Call latency CDF (every recorded value)".into(),
        },
        x_label: "call latency (log scale)".into(),
        y_label: "fraction of requests ≤ latency".into(),
        log_x: true,
        x_time_us: true,
        y_range: Some((0.0, 1.02)),
        series,
    }));
    Figure::new(title, panels)
}

fn bars(inputs: &[Input]) -> Result<Figure> {
    let mut panels = Vec::new();
    let mut title = "Per-thread bars".to_string();
    for i in inputs {
        match i {
            Input::Report { name, json } => panels.extend(thread_panels(name, json)?),
            Input::Comparison { name, json } => {
                if inputs.len() > 1 {
                    bail!("{name}: a comparison is drawn alone (give it as the only input)");
                }
                return comparison_figure(&format!("mmcsim: {name}"), json);
            }
            Input::Log { name, .. } => bail!(
                "{name}: --kind bars draws reports or comparisons (JSON from --json), not a request log"
            ),
        }
        title = format!("Per-thread bars: {}", names(inputs));
    }
    Figure::new(title, panels)
}

fn names(inputs: &[Input]) -> String {
    inputs
        .iter()
        .map(|i| match i {
            Input::Report { name, .. }
            | Input::Comparison { name, .. }
            | Input::Log { name, .. } => name.as_str(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn thread_panels(name: &str, r: &Value) -> Result<Vec<Panel>> {
    let threads = r
        .get("threads")
        .and_then(Value::as_array)
        .with_context(|| format!("{name}: report without `threads`"))?;
    let mut iops = Vec::new();
    let mut lat = Vec::new();
    for t in threads {
        let label = t.get("id").map_or("?".to_string(), |v| v.to_string());
        iops.push((label.clone(), number(t, "iops", name)?));
        lat.push((label, number(t, "latency_us.mean", name)?));
    }
    Ok(vec![
        Panel::Bars(BarPanel::amounts(
            &format!("{name}: IOPS per thread"),
            "IOPS",
            iops,
        )),
        Panel::Bars(BarPanel::amounts(
            &format!("{name}: mean latency per thread"),
            "mean latency (µs)",
            lat,
        )),
    ])
}

fn per_log(
    inputs: &[Input],
    kind: &str,
    panels_of: impl Fn(&str, &[Row]) -> Vec<Panel>,
) -> Result<Figure> {
    let mut panels = Vec::new();
    for i in inputs {
        match i {
            Input::Log { name, rows } => panels.extend(panels_of(name, rows)),
            Input::Report { name, .. } | Input::Comparison { name, .. } => bail!(
                "{name}: a JSON report carries no per-request times; --kind {kind} needs the request log (`simctl run --log FILE.csv`)"
            ),
        }
    }
    let title = match kind {
        "timeline" => "Throughput and queue depth over simulated time",
        _ => "Address difference vs device time",
    };
    Figure::new(format!("{title}: {}", names(inputs)), panels)
}

/// Bins of a time line.
const TIMELINE_BINS: usize = 100;

fn timeline_panels(name: &str, rows: &[Row]) -> Vec<Panel> {
    let t = reqlog::timeline(rows, TIMELINE_BINS);
    let panel = |title: String, y: &str, points| {
        Panel::Xy(XyPanel {
            title,
            x_label: "simulated time since the first request (s)".into(),
            y_label: y.into(),
            log_x: false,
            x_time_us: false,
            y_range: None,
            series: vec![Series {
                name: String::new(),
                points,
                mark: Mark::Line,
            }],
        })
    };
    vec![
        panel(
            format!("{name}: throughput"),
            "completed requests per second",
            t.iops,
        ),
        panel(
            format!("{name}: queue depth"),
            "requests in flight (mean per bin)",
            t.depth,
        ),
    ]
}

/// The address-difference scatter of one request log: ascending and
/// descending differences in two colours.
pub fn address_scatter(name: &str, rows: &[Row]) -> XyPanel {
    let pts = reqlog::address_differences(rows);
    let mib = |d: i64| d as f64 * mmcsim::SECTOR_BYTES as f64 / (1 << 20) as f64;
    let series = |label: &str, keep: fn(i64) -> bool| Series {
        name: label.into(),
        points: pts
            .iter()
            .filter(|p| keep(p.diff_sectors))
            .map(|p| (mib(p.diff_sectors), p.device_us))
            .collect(),
        mark: Mark::Points,
    };
    XyPanel {
        title: format!("{name}: address difference vs device time"),
        x_label: "start address − previous request's (MiB)".into(),
        y_label: "device time, start to completion (µs)".into(),
        log_x: false,
        x_time_us: false,
        y_range: None,
        series: vec![
            series("positive (ascending)", |d| d > 0),
            series("negative (descending)", |d| d < 0),
            series("zero", |d| d == 0),
        ],
    }
}
