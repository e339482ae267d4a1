//! Finding 7: the Moto G (2013) AndroBench v3.4 table under nine I/O
//! schedulers, measured beside simulated in absolute units.
//!
//! The measurements are the blog's per-scheduler means and standard
//! deviations (three runs each), kept with their source in
//! `configs/measurements/motog-2013-androbench34.toml` and compiled in. The
//! claim is the one the band form of the same measurements states: every
//! scheduler's result lies inside the range the nine measured means span,
//! and on each metric the simulated spread across the nine is no wider
//! than the measured one. Each metric gives three judged quantities (the
//! lowest of the nine simulated values against the band's bottom, the
//! highest against its top, the spread against the measured spread).
//!
//! Each check names the table metric it compares against
//! (`motog-2013-androbench34:KEY`): its verdict is labelled `fitted` when
//! the phone's `[fit] targets` name that metric (or `finding-7`), else
//! `predicted`. The bundled Moto G was fitted to nothing (its profiles hold
//! the reference's values; the fits of `configs/calibration/` are separate
//! profiles), so every verdict there is a prediction.
//!
//! The suite runs as the app does (three runs averaged, the scenario's
//! `androbench.repetitions`); `--set androbench.repetitions=1` shortens it.

use super::{scheduler_of, ANDROBENCH};
use crate::plot::{BarPanel, Panel};
use crate::reproduce::finding::{cell, About, Boundary, Check, Finding, Measure, Quantity, Side};
use crate::reproduce::runner::{RunOutput, RunSpec};
use crate::reproduce::verdict::num;
use anyhow::{bail, Context, Result};
use mmcsim::sched::Registry;

/// The Moto G AndroBench 3.4 table under nine schedulers.
pub struct AndrobenchMotoG;

/// The phone measured (its name in `configs/phones/`).
const PHONE: &str = "motog-2013";

/// The measured table's name in `configs/measurements/`.
const TABLE: &str = "motog-2013-androbench34";

/// The measured table (`configs/measurements/`).
type Measured = crate::measurements::Table;

/// One metric of the measured table.
type MeasuredMetric = crate::measurements::Metric;

impl MeasuredMetric {
    /// The range `(low, high)` the nine measured means span.
    fn band(&self) -> (f64, f64) {
        range(&self.mean)
    }

    /// (max − min) / median of the measured means.
    fn spread(&self) -> f64 {
        let (lo, hi) = self.band();
        (hi - lo) / median(&self.mean)
    }

    /// The metric's name as the app's result screen shows it.
    fn name(&self) -> &'static str {
        match self.key.as_str() {
            "seq_read_mb_s" => "sequential read",
            "seq_write_mb_s" => "sequential write",
            "rand_read_iops" => "random read",
            "rand_write_iops" => "random write",
            "sqlite_insert_tps" => "SQLite insert",
            "sqlite_update_tps" => "SQLite update",
            "sqlite_delete_tps" => "SQLite delete",
            _ => "?",
        }
    }
}

/// Per metric of the measured table, in the app's order: its report key
/// under `androbench`, its unit and the mean of the nine schedulers'
/// measured means (the Moto G ensemble protocol's targets and
/// predictions).
pub fn nine_scheduler_means() -> Vec<(String, String, f64)> {
    measured()
        .metrics
        .iter()
        .map(|m| {
            let mean = m.mean.iter().sum::<f64>() / m.mean.len() as f64;
            (m.key.clone(), m.unit.clone(), mean)
        })
        .collect()
}

/// The measured table (a unit test checks it matches the calibration
/// targets).
fn measured() -> &'static Measured {
    crate::measurements::find(TABLE).expect("a bundled measurement table (unit-tested)")
}

const ABOUT: About = About {
    number: 7,
    title: "Moto G (2013) AndroBench 3.4 under nine I/O schedulers",
    source: "andrux-and-me.blogspot.com, \"I/O schedulers and their impact on performance\" parts 2 and 3 (May 2014): Moto G (2013) on CM11, RenderKernel r17, intellidemand; AndroBench v3.4 under fiops, noop, bfq, cfq, deadline, zen, vr, row and sio, 3 runs each (configs/measurements/motog-2013-androbench34.toml)",
    claim: "on the Moto G, every scheduler's AndroBench 3.4 result lies inside the range of the nine measured means, and on each metric the spread across the nine is no wider than measured",
    boundary: Boundary::AppCalls,
    csv_header: &[
        "scheduler",
        "metric",
        "unit",
        "simulated",
        "measured_mean",
        "measured_stdev",
        "band_low",
        "band_high",
        "inside_band",
        "simulated_vs_measured_pct",
    ],
};

const NOTE: &str = "Each panel draws, per scheduler, the blog's measured mean with whiskers of ± one standard deviation of its 3 runs, beside the simulated mean over the seeds with its 95 % interval, in the metric's own unit; the grey band is the range of the nine measured means, against which every scheduler is judged. A metric is labelled fitted when the phone's [fit] targets name it (the bundled Moto G names none: every metric is a prediction). The suite runs as the app does (three runs averaged) unless --set androbench.repetitions=N says otherwise.";

/// The median of `v` (the mean of the middle two for an even count).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// `(min, max)` of `v`.
fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

fn band_text(m: &MeasuredMetric) -> String {
    let (lo, hi) = m.band();
    format!("{}–{} {}", num(lo), num(hi), m.unit)
}

/// The simulated values of metric `m` in the runs, which are in the
/// table's scheduler order.
fn simulated(m: &MeasuredMetric, runs: &[&RunOutput]) -> Result<Vec<f64>> {
    let values = runs
        .iter()
        .map(|r| crate::reproduce::finding::num(r, &format!("androbench.{}", m.key)))
        .collect::<Result<Vec<_>>>()?;
    let med = median(&values);
    if !(med.is_finite() && med > 0.0) {
        bail!(
            "{}: the median of the {} schedulers is {med} {}: no spread against it",
            m.name(),
            values.len(),
            m.unit
        );
    }
    Ok(values)
}

/// The three judged quantities of one metric.
fn checks(m: &MeasuredMetric, sim: &[f64]) -> [Check; 3] {
    let (lo, hi) = m.band();
    let (smin, smax) = range(sim);
    let check = |claim: String, side: Side, value: f64| {
        Check::predicted(claim, side, value).measuring(measured().target_name(&m.key))
    };
    [
        check(
            format!(
                "{}: lowest of the nine ≥ the lowest measured mean, {} {}",
                m.name(),
                num(lo),
                m.unit
            ),
            Side::Above(lo),
            smin,
        ),
        check(
            format!(
                "{}: highest of the nine ≤ the highest measured mean, {} {}",
                m.name(),
                num(hi),
                m.unit
            ),
            Side::Below(hi),
            smax,
        ),
        check(
            format!(
                "{}: spread across the nine, (max − min) / median, ≤ the measured {}",
                m.name(),
                num(m.spread())
            ),
            Side::Below(m.spread()),
            (smax - smin) / median(sim),
        ),
    ]
}

impl Finding for AndrobenchMotoG {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn runs(&self, _: &Registry) -> Vec<RunSpec> {
        measured()
            .schedulers
            .iter()
            .map(|s| RunSpec::new(ANDROBENCH, &[("scheduler.name", s.to_string())]))
            .collect()
    }

    fn measure(&self, runs: &[&RunOutput]) -> Result<Measure> {
        let t = measured();
        let names: Vec<&str> = runs.iter().map(|r| scheduler_of(r)).collect();
        if names != t.schedulers {
            bail!(
                "runs under {names:?}, expected the table's {:?}",
                t.schedulers
            );
        }
        let (mut csv, mut table, mut panels, mut all, mut parts) =
            (vec![], vec![], vec![], vec![], vec![]);
        for m in &t.metrics {
            let sim = simulated(m, runs).with_context(|| t.source.clone())?;
            let (lo, hi) = m.band();
            let mut bars = Vec::new();
            let mut errors = Vec::new();
            for (i, s) in t.schedulers.iter().enumerate() {
                let (v, mean, sd) = (sim[i], m.mean[i], m.stdev[i]);
                let inside = (lo..=hi).contains(&v);
                let vs = (v / mean - 1.0) * 100.0;
                csv.push(vec![
                    s.clone(),
                    m.key.clone(),
                    m.unit.clone(),
                    cell(v),
                    cell(mean),
                    cell(sd),
                    cell(lo),
                    cell(hi),
                    inside.to_string(),
                    cell(vs),
                ]);
                table.push(Quantity::new(
                    &format!("{} ({}), {s}", m.name(), m.unit),
                    &format!("{} ± {} (band {})", num(mean), num(sd), band_text(m)),
                    format!(
                        "{} — {}; {vs:+.1} % against measured",
                        num(v),
                        if inside { "inside" } else { "OUTSIDE" }
                    ),
                ));
                bars.push((s.clone(), mean));
                bars.push((String::new(), v));
                errors.push(Some((mean - sd, mean + sd)));
                errors.push(None);
            }
            let (smin, smax) = range(&sim);
            parts.push(format!(
                "{} {}–{} {} (measured {})",
                m.name(),
                num(smin),
                num(smax),
                m.unit,
                band_text(m)
            ));
            all.extend(checks(m, &sim));
            panels.push(Panel::Bars(
                BarPanel::amounts(&format!("{} ({})", m.name(), m.unit), &m.unit, bars)
                    .with_errors(errors)
                    .with_series(&["measured (± 1 sd of 3 runs)", "simulated"])
                    .with_band(crate::plot::Band {
                        low: lo,
                        high: hi,
                        label: format!("range of the nine measured means, {}", band_text(m)),
                    }),
            ));
        }
        Ok(Measure {
            checks: all,
            summary: parts.join("; "),
            table,
            csv,
            panels,
        })
    }

    fn only_on(&self) -> Option<&'static [&'static str]> {
        Some(&[PHONE])
    }

    fn note(&self) -> Option<&'static str> {
        Some(NOTE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_nine_is_the_fifth_and_of_an_even_count_the_mean_of_the_middle_two() {
        assert_eq!(median(&[5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 4.0, 6.0]), 5.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    /// The measured table parses, has a mean and a deviation per scheduler
    /// for each of the seven metrics, and the calibration targets' bands
    /// (the same measurements as the issues quoted them) hold its ranges
    /// to the quoted precision.
    #[test]
    fn the_measured_table_matches_the_calibration_targets() {
        let t = measured();
        assert_eq!(t.metrics.len(), 7);
        for m in &t.metrics {
            assert_eq!(m.mean.len(), t.schedulers.len(), "{}", m.key);
            assert_eq!(m.stdev.len(), t.schedulers.len(), "{}", m.key);
        }
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("configs/calibration/motog-2013-androbench34.toml");
        let file: toml::Value = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let targets = file["targets"].as_array().unwrap();
        assert_eq!(targets.len(), 7);
        for tg in targets {
            let key = tg["metric"]
                .as_str()
                .unwrap()
                .strip_prefix("androbench.")
                .unwrap();
            let m = t.metrics.iter().find(|m| m.key == key).unwrap();
            let band: Vec<f64> = tg["band"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_float().unwrap())
                .collect();
            let (lo, hi) = m.band();
            assert!(
                band[0] <= lo + 0.5 && hi - 0.5 <= band[1],
                "{key}: {band:?} vs {lo}-{hi}"
            );
            let s: Vec<&str> = tg["schedulers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(s, t.schedulers, "{key}");
        }
    }
}
