//! `simctl compare`: one workload under several schedulers, side by side.
//!
//! Each entry of the comparison is a scheduler name, optionally with its
//! own tunables (`cfq:slice_idle=0:quantum=4`). Entries run in parallel
//! (one simulation per core, rayon) and are collected in the order given,
//! so the output is byte-identical to a serial run.

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{Report, RunOptions, Simulation};
use mmcsim::stats::histogram::Buckets;
use mmcsim::stats::LatencyDistribution;
use rayon::prelude::*;
use serde::Serialize;
use std::io::IsTerminal;
use std::path::Path;

/// One scheduler configuration of a comparison.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The entry as written, used as its label.
    pub label: String,
    /// Scheduler name.
    pub scheduler: String,
    /// Tunables for this entry only, `(name, value)` in sysfs units.
    pub tunables: Vec<(String, String)>,
}

/// Parses `--schedulers`: `all` or a comma-separated list of entries
/// `NAME[:TUNABLE=VALUE]...`.
pub fn parse_entries(spec: &str, registry: &Registry) -> Result<Vec<Entry>> {
    if spec.trim() == "all" {
        return Ok(registry
            .names()
            .into_iter()
            .map(|n| Entry {
                label: n.to_string(),
                scheduler: n.to_string(),
                tunables: Vec::new(),
            })
            .collect());
    }
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let mut parts = item.split(':');
        let name = parts.next().unwrap_or_default().to_string();
        if registry.description(&name).is_none() {
            bail!(
                "--schedulers: unknown scheduler `{name}`; valid: all, {}",
                registry.names().join(", ")
            );
        }
        let mut tunables = Vec::new();
        for kv in parts {
            let Some((k, v)) = kv.split_once('=') else {
                bail!(
                    "--schedulers: `{kv}` in `{item}` is not TUNABLE=VALUE (e.g. cfq:slice_idle=0)"
                );
            };
            tunables.push((k.trim().to_string(), v.trim().to_string()));
        }
        if out.iter().any(|e: &Entry| e.label == item) {
            bail!("--schedulers: `{item}` is listed twice");
        }
        out.push(Entry {
            label: item.to_string(),
            scheduler: name,
            tunables,
        });
    }
    if out.is_empty() {
        bail!("--schedulers: no scheduler given (e.g. --schedulers deadline,noop or --schedulers all)");
    }
    Ok(out)
}

/// One entry's result.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The entry's label.
    pub label: String,
    /// Its report.
    pub report: Report,
}

/// The JSON document `simctl compare --json` writes.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Schema tag.
    pub schema: &'static str,
    /// The workload, as given.
    pub workload: String,
    /// One report per entry, in the order given (with `--seeds`, the run
    /// at seed 1).
    pub reports: Vec<Outcome>,
    /// With `--seeds N` (N > 1): every entry's metrics over seeds 1..=N,
    /// mean and 95 % interval; absent with one seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seeds: Option<SeedSummary>,
}

/// The metrics a comparison gives intervals for: (report key, unit), the
/// ones its table and bars show.
pub const INTERVAL_METRICS: [(&str, &str); 5] = [
    ("throughput.iops", "IOPS"),
    ("latency_us.mean", "µs"),
    ("latency_us.p99", "µs"),
    ("latency_us.p999", "µs"),
    ("fairness.jain", ""),
];

/// Every entry's metrics over the seeds of `compare --seeds N`.
#[derive(Clone, Debug, Serialize)]
pub struct SeedSummary {
    /// Seeds run per entry: 1..=`count`.
    pub count: usize,
    /// How the intervals were made.
    pub interval: &'static str,
    /// Per entry, in the order given.
    pub entries: Vec<EntrySeeds>,
}

/// One entry's metrics over the seeds.
#[derive(Clone, Debug, Serialize)]
pub struct EntrySeeds {
    /// The entry's label.
    pub label: String,
    /// Per metric of [`INTERVAL_METRICS`].
    pub metrics: Vec<MetricSeeds>,
    /// Call latency over every seed's run pooled into one distribution
    /// (each bucket's counts summed over the seeds; the runs share
    /// hdrhistogram's bucket boundaries, so the sum is exact): the CDF the
    /// figure draws.
    pub latency_histogram: LatencyDistribution,
}

/// One metric over the seeds: mean, 95 % interval and the per-seed values.
#[derive(Clone, Debug, Serialize)]
pub struct MetricSeeds {
    /// Report key, e.g. `throughput.iops`.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Mean over the seeds.
    pub mean: f64,
    /// Lower end of the 95 % interval (mean − t·s/√n).
    pub ci95_low: f64,
    /// Upper end of the 95 % interval (mean + t·s/√n).
    pub ci95_high: f64,
    /// Per seed, seed 1 first.
    pub values: Vec<f64>,
}

impl SeedSummary {
    /// The summary of `runs` (per entry, its reports at seeds 1..=n).
    fn of(labels: &[String], runs: &[Vec<Report>]) -> Result<SeedSummary> {
        let entries = labels
            .iter()
            .zip(runs)
            .map(|(label, reports)| {
                let values = reports
                    .iter()
                    .map(serde_json::to_value)
                    .collect::<Result<Vec<_>, _>>()?;
                let metrics = INTERVAL_METRICS
                    .iter()
                    .map(|(key, unit)| {
                        let v: Vec<f64> = values
                            .iter()
                            .map(|r| crate::plot::inputs::number(r, key, label))
                            .collect::<Result<_>>()?;
                        let i = crate::reproduce::verdict::Interval::of(&v);
                        Ok(MetricSeeds {
                            metric: key.to_string(),
                            unit: unit.to_string(),
                            mean: i.mean,
                            ci95_low: i.lo,
                            ci95_high: i.hi,
                            values: v,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(EntrySeeds {
                    label: label.clone(),
                    metrics,
                    latency_histogram: pooled_latency(reports),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SeedSummary {
            count: runs.first().map_or(0, Vec::len),
            interval: "95 % confidence interval of the mean over the seeds, Student t with n − 1 degrees of freedom",
            entries,
        })
    }
}

/// The call-latency distributions of `reports` pooled: per bucket value,
/// the counts summed.
fn pooled_latency(reports: &[Report]) -> LatencyDistribution {
    let mut pooled = std::collections::BTreeMap::<u64, u64>::new();
    for r in reports {
        for &(v, c) in &r.workload.latency_histogram.buckets.0 {
            *pooled.entry(v).or_insert(0) += c;
        }
    }
    let first = reports.first().map(|r| &r.workload.latency_histogram);
    LatencyDistribution {
        unit: first.map_or("ns", |h| h.unit),
        significant_digits: first.map_or(0, |h| h.significant_digits),
        buckets: Buckets(pooled.into_iter().collect()),
    }
}

/// True when `workload` is a scenario (`.toml`) or an fio job file rather
/// than a trace.
pub fn is_scenario(workload: &Path) -> bool {
    use mmcsim::workload::fio_job::{is_job_file, DETECT_BYTES};
    use std::io::Read;
    if workload.extension().is_some_and(|e| e == "toml") {
        return true;
    }
    let mut head = Vec::new();
    let read =
        std::fs::File::open(workload).and_then(|f| f.take(DETECT_BYTES).read_to_end(&mut head));
    read.is_ok() && is_job_file(workload, &String::from_utf8_lossy(&head))
}

/// Runs `workload` (a scenario `.toml`, an fio job file or a trace) under
/// every entry, at `seeds` seeds (1..=seeds; with one, the scenario's own
/// seed).
pub fn run(
    workload: &Path,
    entries: &[Entry],
    sets: &[(String, String)],
    registry: &Registry,
    (jobs, seeds): (Option<usize>, usize),
) -> Result<Comparison> {
    let is_scenario = is_scenario(workload);
    let scenario_for = |(e, seed): (&Entry, Option<usize>)| -> Result<Scenario> {
        let mut s = sets.to_vec();
        if let Some(seed) = seed {
            s.push(("seed".into(), seed.to_string()));
        }
        s.push(("scheduler.name".into(), e.scheduler.clone()));
        for (k, v) in &e.tunables {
            s.push((format!("iosched.{k}"), v.clone()));
        }
        let sc = if is_scenario {
            crate::commands::load_workload(workload, &s)?
        } else {
            Scenario::for_trace(workload, &s)?
        };
        Ok(sc)
    };
    // Validate every entry before spending time on any run: entry-major,
    // seed 1 first.
    let runs: Vec<(&Entry, Option<usize>)> = entries
        .iter()
        .flat_map(|e| (1..=seeds).map(move |s| (e, (seeds > 1).then_some(s))))
        .collect();
    let scenarios = runs
        .iter()
        .map(|&r| scenario_for(r).with_context(|| format!("scheduler entry `{}`", r.0.label)))
        .collect::<Result<Vec<_>>>()?;

    let bar = progress_bar(runs.len() as u64);
    let work = |(e, sc): (&Entry, Scenario)| -> Result<Outcome> {
        let report = Simulation::with_registry(sc, registry)
            .and_then(|s| s.run(RunOptions::default()))
            .with_context(|| format!("scheduler entry `{}`", e.label))?;
        bar.inc(1);
        Ok(Outcome {
            label: e.label.clone(),
            report,
        })
    };
    let pairs: Vec<(&Entry, Scenario)> = runs.iter().map(|r| r.0).zip(scenarios).collect();
    let results = parallel(pairs, jobs, work)?;
    bar.finish_and_clear();
    let all = results.into_iter().collect::<Result<Vec<_>>>()?;
    let per_entry: Vec<Vec<Report>> = all
        .chunks(seeds)
        .map(|c| c.iter().map(|o| o.report.clone()).collect())
        .collect();
    let reports: Vec<Outcome> = all.into_iter().step_by(seeds).collect();
    let labels: Vec<String> = reports.iter().map(|o| o.label.clone()).collect();
    let seeds = if seeds > 1 {
        Some(SeedSummary::of(&labels, &per_entry)?)
    } else {
        None
    };
    Ok(Comparison {
        schema: "mmcsim-compare/1",
        workload: workload.display().to_string(),
        reports,
        seeds,
    })
}

/// A progress bar of `len` simulations on standard error when it is a
/// terminal; hidden otherwise (CI logs stay clean).
pub(crate) fn progress_bar(len: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(len);
    b.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    b.set_message("simulating");
    b
}

/// `work` over `items` in parallel (on `jobs` threads, default one per
/// core), results in the order of `items` whatever the scheduling.
pub(crate) fn parallel<T: Send, R: Send>(
    items: Vec<T>,
    jobs: Option<usize>,
    work: impl Fn(T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    Ok(match jobs {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .context("starting worker threads")?
            .install(|| items.into_par_iter().map(&work).collect()),
        None => items.into_par_iter().map(work).collect(),
    })
}

/// The figure of a comparison: one bar panel per metric, one bar per entry
/// (with `--seeds`, at the mean with its 95 % error bar), and the entries'
/// latency CDFs; drawn as `simctl plot` draws a saved comparison.
pub fn figure(c: &Comparison) -> Result<crate::plot::Figure> {
    let json = serde_json::to_value(c)?;
    crate::plot::inputs::comparison_figure(&format!("mmcsim: {}", c.workload), &json)
}

/// The side-by-side table.
pub fn table(c: &Comparison) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "workload: {}", c.workload);
    let lw = c
        .reports
        .iter()
        .map(|o| o.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(9);
    let _ = writeln!(
        s,
        "{:<lw$} {:>9} {:>8} {:>9} {:>9} {:>10} {:>7} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
        "scheduler",
        "IOPS",
        "MB/s",
        "mean µs",
        "p99 µs",
        "p99.9 µs",
        "Jain",
        "R IOPS",
        "R mean",
        "R p99",
        "W IOPS",
        "W mean",
        "W p99"
    );
    for o in &c.reports {
        let w = &o.report.workload;
        let _ = writeln!(
            s,
            "{:<lw$} {:>9.1} {:>8.2} {:>9.1} {:>9.1} {:>10.1} {:>7.4} | {:>9.1} {:>9.1} {:>9.1} | {:>9.1} {:>9.1} {:>9.1}",
            o.label,
            w.throughput.iops,
            w.throughput.mb_per_s,
            w.latency_us.mean,
            w.latency_us.p99,
            w.latency_us.p999,
            w.fairness.jain,
            w.read.iops,
            w.read.latency_us.mean,
            w.read.latency_us.p99,
            w.write.iops,
            w.write.latency_us.mean,
            w.write.latency_us.p99
        );
    }
    intervals_table(&mut s, c);
    s
}

/// The table's lines on seeds: each entry's mean and 95 % interval per
/// metric, or that one seed gives none.
fn intervals_table(s: &mut String, c: &Comparison) {
    use std::fmt::Write;
    let Some(seeds) = &c.seeds else {
        let _ = writeln!(
            s,
            "one seed: no interval (--seeds N runs each scheduler at seeds 1..=N and gives 95 % intervals)"
        );
        return;
    };
    let _ = writeln!(
        s,
        "over seeds 1..={}: mean [95 % interval], Student t with {} degrees of freedom (the table above is seed 1)",
        seeds.count,
        seeds.count.saturating_sub(1)
    );
    let lw = seeds
        .entries
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(0)
        .max(9);
    let _ = write!(s, "{:<lw$}", "scheduler");
    for (key, unit) in INTERVAL_METRICS {
        let head = if unit.is_empty() {
            key.to_string()
        } else {
            format!("{key} ({unit})")
        };
        let _ = write!(s, " | {head:>30}");
    }
    let _ = writeln!(s);
    for e in &seeds.entries {
        let _ = write!(s, "{:<lw$}", e.label);
        for m in &e.metrics {
            let prec = if m.unit.is_empty() { 4 } else { 1 };
            let cell = format!(
                "{:.prec$} [{:.prec$}, {:.prec$}]",
                m.mean, m.ci95_low, m.ci95_high
            );
            let _ = write!(s, " | {cell:>30}");
        }
        let _ = writeln!(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_carry_their_own_tunables_and_unknown_names_are_rejected() {
        let r = mmcsim::sched::builtin();
        let e = parse_entries("deadline, deadline:fifo_batch=1:writes_starved=4", &r).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[1].scheduler, "deadline");
        assert_eq!(
            e[1].tunables,
            vec![
                ("fifo_batch".to_string(), "1".to_string()),
                ("writes_starved".to_string(), "4".to_string())
            ]
        );
        let err = parse_entries("deadline,bogus", &r).unwrap_err().to_string();
        assert!(err.contains("bogus") && err.contains("noop"), "{err}");
        assert!(parse_entries("deadline:fifo_batch", &r).is_err());
        assert_eq!(parse_entries("all", &r).unwrap().len(), r.names().len());
    }
}
