//! The Moto G (2013) protocol (issue 27, item 4): the phone's free
//! parameters are its `[uncertain]` entries alone; an ensemble member is
//! *fitted* when each of AndroBench 3.4's four file metrics, simulated as
//! the mean over the nine schedulers of finding 7 (and the seeds), lies
//! within ±10 % of the blog's nine-scheduler mean. SQLite insert, update
//! and delete are then predictions: their range and mean over the fitted
//! members, beside the measured value. With no fitted member the closest
//! members are shown; the tolerance is never widened.

use super::super::findings::nine_scheduler_means;
use super::super::runner::RunOutput;
use super::super::verdict::num;
use super::table::MotoRow;

/// The phone the protocol is about.
pub const PHONE: &str = "motog-2013";
/// The finding whose runs it reads (AndroBench 3.4 under nine schedulers).
pub const FINDING: u32 = 7;
/// A fitted member's largest relative distance from a measured file
/// metric: ±10 % [src: issue 27 item 4, "all file metrics within ±10 %"].
pub const TOLERANCE: f64 = 0.10;
/// The fitted metrics: the four file tests.
const FILE_METRICS: [&str; 4] = [
    "seq_read_mb_s",
    "seq_write_mb_s",
    "rand_read_iops",
    "rand_write_iops",
];

/// The metrics' report keys, in the app's order.
pub fn keys() -> Vec<String> {
    nine_scheduler_means()
        .into_iter()
        .map(|(k, _, _)| k)
        .collect()
}

/// A configuration's metrics: per key, the mean of `androbench.KEY` over
/// `runs` (nine schedulers × seeds).
pub fn metrics_of(runs: &[&RunOutput]) -> Vec<(String, f64)> {
    keys()
        .into_iter()
        .map(|k| {
            let v: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.report["androbench"][&k].as_f64())
                .collect();
            let mean = if v.len() == runs.len() && !v.is_empty() {
                v.iter().sum::<f64>() / v.len() as f64
            } else {
                f64::NAN
            };
            (k, mean)
        })
        .collect()
}

/// The measured nine-scheduler mean of `key`.
fn measured(key: &str) -> Option<(String, f64)> {
    nine_scheduler_means()
        .into_iter()
        .find(|(k, _, _)| k == key)
        .map(|(_, u, m)| (u, m))
}

/// The largest relative distance of a row's file metrics from the
/// measured means (NaN when one is missing).
fn distance(r: &MotoRow) -> f64 {
    FILE_METRICS
        .iter()
        .map(|k| {
            let sim = r
                .metrics
                .iter()
                .find(|(m, _)| m == k)
                .map_or(f64::NAN, |m| m.1);
            let meas = measured(k).map_or(f64::NAN, |m| m.1);
            (sim / meas - 1.0).abs()
        })
        .fold(0.0, |a: f64, d| {
            if d.is_nan() || a.is_nan() {
                f64::NAN
            } else {
                a.max(d)
            }
        })
}

/// A prediction over the fitted members.
pub struct Prediction {
    /// Report key.
    pub key: String,
    /// Unit.
    pub unit: String,
    /// The blog's nine-scheduler mean.
    pub measured: f64,
    /// `(min, max, mean)` over the fitted members.
    pub interval: (f64, f64, f64),
}

/// The protocol's outcome.
pub struct Protocol {
    /// Configurations run.
    pub members: usize,
    /// The fitted configurations.
    pub fitted: Vec<usize>,
    /// SQLite predictions over the fitted members (empty when none).
    pub predictions: Vec<Prediction>,
    /// With no fitted member: up to three closest, `(configuration,
    /// largest distance, row)`.
    pub closest: Vec<(usize, f64, MotoRow)>,
}

/// Judges the protocol on `rows`.
pub fn judge(rows: &[MotoRow]) -> Protocol {
    let fitted: Vec<&MotoRow> = rows.iter().filter(|r| distance(r) <= TOLERANCE).collect();
    let predictions = if fitted.is_empty() {
        Vec::new()
    } else {
        keys()
            .into_iter()
            .filter(|k| k.starts_with("sqlite_"))
            .filter_map(|k| {
                let (unit, meas) = measured(&k)?;
                let v: Vec<f64> = fitted
                    .iter()
                    .filter_map(|r| r.metrics.iter().find(|(m, _)| *m == k).map(|m| m.1))
                    .collect();
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                Some(Prediction {
                    key: k,
                    unit,
                    measured: meas,
                    interval: (lo, hi, mean),
                })
            })
            .collect()
    };
    let mut closest: Vec<(usize, f64, MotoRow)> = if fitted.is_empty() {
        rows.iter()
            .map(|r| (r.configuration, distance(r), r.clone()))
            .collect()
    } else {
        Vec::new()
    };
    closest.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    closest.truncate(3);
    Protocol {
        members: rows.len(),
        fitted: fitted.iter().map(|r| r.configuration).collect(),
        predictions,
        closest,
    }
}

/// A row's metrics in one line: `key sim (measured m, ±d %)`.
pub fn row_text(r: &MotoRow) -> String {
    r.metrics
        .iter()
        .map(|(k, v)| {
            let (unit, m) = measured(k).unwrap_or_default();
            format!(
                "{k} {} {unit} ({:+.0} % of {})",
                num(*v),
                (v / m - 1.0) * 100.0,
                num(m)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The protocol's summary lines.
pub fn lines(p: &Protocol) -> Vec<String> {
    let mut l = vec![format!(
        "Moto G protocol: {} of {} configurations fitted (all four AndroBench 3.4 file metrics within ±{:.0} % of the blog's nine-scheduler means)",
        p.fitted.len(),
        p.members,
        TOLERANCE * 100.0
    )];
    for pr in &p.predictions {
        let (lo, hi, mean) = pr.interval;
        let inside = if (lo..=hi).contains(&pr.measured) {
            "inside"
        } else {
            "outside"
        };
        l.push(format!(
            "  predicted {}: [{}, {}] {}, mean {} over the {} fitted; measured {} {} ({inside})",
            pr.key,
            num(lo),
            num(hi),
            pr.unit,
            num(mean),
            p.fitted.len(),
            num(pr.measured),
            pr.unit
        ));
    }
    if p.fitted.is_empty() {
        l.push("  no configuration qualifies; the closest (largest file-metric distance):".into());
        for (c, d, r) in &p.closest {
            l.push(format!(
                "  configuration {c}: {:.0} %: {}",
                d * 100.0,
                row_text(r)
            ));
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(c: usize, scale: f64) -> MotoRow {
        MotoRow {
            configuration: c,
            metrics: nine_scheduler_means()
                .into_iter()
                .map(|(k, _, m)| (k, m * scale))
                .collect(),
        }
    }

    #[test]
    fn members_within_ten_percent_are_fitted_and_predict_sqlite() {
        let p = judge(&[row(1, 1.05), row(2, 0.85), row(3, 0.95)]);
        assert_eq!(p.fitted, [1, 3]);
        let insert = p
            .predictions
            .iter()
            .find(|x| x.key == "sqlite_insert_tps")
            .unwrap();
        assert!((insert.interval.0 - insert.measured * 0.95).abs() < 1e-9);
        assert!((insert.interval.1 - insert.measured * 1.05).abs() < 1e-9);
        let none = judge(&[row(1, 0.5), row(2, 0.8)]);
        assert!(none.fitted.is_empty() && none.predictions.is_empty());
        assert_eq!(none.closest[0].0, 2, "the closest first");
        assert!(lines(&none)
            .iter()
            .any(|l| l.contains("no configuration qualifies")));
    }
}
