//! The recorded-against-simulated CDF overlay of `simctl plot --kind cdf`:
//! for a replay report with `trace.validation`, one panel per time
//! (device service, total latency), direction and size class, the
//! recorded and simulated CDFs as step lines on a log time axis, titled
//! with the Kolmogorov–Smirnov D and its 5 % critical value.

use super::inputs::step_cdf;
use super::{Mark, Panel, Series, XyPanel};
use anyhow::{bail, Result};
use serde_json::Value;

/// The times of `trace.validation`: (key, panel title, x-axis label).
const TIMES: [(&str, &str, &str); 2] = [
    (
        "device_service",
        "Device service",
        "device service: hardware submit → finish (log scale)",
    ),
    (
        "total_latency",
        "Total latency",
        "total latency: generate → finish (log scale)",
    ),
];

/// A direction and size class to draw alone (`--class write/4KiB`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassFilter {
    /// `read` or `write`.
    pub direction: String,
    /// A size class of `trace.validation` (`4KiB`, `8-16KiB`, `17-64KiB`,
    /// `>64KiB`).
    pub size_class: String,
}

impl std::str::FromStr for ClassFilter {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<ClassFilter, String> {
        let classes = ["4KiB", "8-16KiB", "17-64KiB", ">64KiB"];
        let (d, c) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: expected DIRECTION/CLASS, e.g. write/4KiB"))?;
        if !["read", "write"].contains(&d) {
            return Err(format!("`{s}`: direction `{d}`: expected read or write"));
        }
        if !classes.contains(&c) {
            return Err(format!(
                "`{s}`: size class `{c}`: expected one of {}",
                classes.join(", ")
            ));
        }
        Ok(ClassFilter {
            direction: d.into(),
            size_class: c.into(),
        })
    }
}

/// The overlay panels of report `r` (file `file`; `label` names the run
/// in the titles when several reports are drawn), every row or only
/// `only`'s. A report without `trace.validation` gives
/// none, unless a class was asked for: then it is an error naming the file.
pub fn panels(
    label: Option<&str>,
    file: &str,
    r: &Value,
    only: Option<&ClassFilter>,
) -> Result<Vec<Panel>> {
    let Some(v) = r.pointer("/trace/validation") else {
        if only.is_some() {
            bail!(
                "{file}: no `trace.validation`: the replayed trace records no completion times (BIOTracer, blkparse with completions, MSR, native CSV with done_ns have them)"
            );
        }
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (key, title, x_label) in TIMES {
        let rows = v.get(key).and_then(Value::as_array).into_iter().flatten();
        for row in rows {
            let dir = row["direction"].as_str().unwrap_or("?");
            let class = row["size_class"].as_str().unwrap_or("?");
            if only.is_some_and(|o| o.direction != dir || o.size_class != class) {
                continue;
            }
            out.push(Panel::Xy(panel(label, title, x_label, dir, class, row)));
        }
    }
    if let (Some(o), true) = (only, out.is_empty()) {
        bail!(
            "{file}: `trace.validation` has no {}/{} row (no record of that direction and size class)",
            o.direction,
            o.size_class
        );
    }
    Ok(out)
}

fn side(row: &Value, which: &str) -> (u64, Vec<(f64, f64)>) {
    let count = row[which]["count"].as_u64().unwrap_or(0);
    let buckets: Vec<(f64, f64)> = row[which]["buckets_ns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| Some((b.get(0)?.as_f64()?, b.get(1)?.as_f64()?)))
        .collect();
    (count, step_cdf(&buckets).unwrap_or_default())
}

fn panel(
    label: Option<&str>,
    title: &str,
    x_label: &str,
    dir: &str,
    class: &str,
    row: &Value,
) -> XyPanel {
    let (nr, rec) = side(row, "recorded");
    let (ns, sim) = side(row, "simulated");
    let d = row["ks_d"].as_f64().unwrap_or(f64::NAN);
    let crit = row["ks_critical_05"].as_f64().unwrap_or(f64::NAN);
    let verdict = if d > crit { "differ" } else { "do not differ" };
    XyPanel {
        title: format!(
            "{}{title}, {dir} {class}: KS D = {d:.2} (5 % critical {crit:.2}: {verdict})",
            label.map_or(String::new(), |l| format!("{l}: "))
        ),
        x_label: x_label.into(),
        y_label: "fraction of requests ≤ time".into(),
        log_x: true,
        x_time_us: true,
        y_range: Some((0.0, 1.02)),
        series: vec![
            Series {
                name: format!("recorded (n = {nr})"),
                points: rec,
                mark: Mark::Line,
            },
            Series {
                name: format!("simulated (n = {ns})"),
                points: sim,
                mark: Mark::Line,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_filter_names_direction_and_class() {
        let f: ClassFilter = "write/17-64KiB".parse().unwrap();
        assert_eq!(
            (f.direction.as_str(), f.size_class.as_str()),
            ("write", "17-64KiB")
        );
        assert!("write"
            .parse::<ClassFilter>()
            .unwrap_err()
            .contains("DIRECTION/CLASS"));
        assert!("trim/4KiB"
            .parse::<ClassFilter>()
            .unwrap_err()
            .contains("read or write"));
        assert!("read/5KiB"
            .parse::<ClassFilter>()
            .unwrap_err()
            .contains("8-16KiB"));
    }

    #[test]
    fn a_report_row_gives_one_panel_with_both_cdfs() {
        let r: Value = serde_json::json!({"trace": {"validation": {
            "device_service": [{"direction": "write", "size_class": "4KiB",
                "recorded": {"count": 2, "buckets_ns": [[700000, 1], [900000, 1]]},
                "simulated": {"count": 2, "buckets_ns": [[80000, 2]]},
                "ks_d": 1.0, "ks_critical_05": 1.36}],
            "total_latency": []}}});
        let p = panels(None, "r.json", &r, None).unwrap();
        assert_eq!(p.len(), 1);
        let Panel::Xy(x) = &p[0] else { panic!() };
        assert_eq!(x.series.len(), 2);
        assert!(x.title.contains("KS D = 1.00"));
        let only: ClassFilter = "read/4KiB".parse().unwrap();
        assert!(panels(Some("cfq"), "r.json", &r, Some(&only)).is_err());
        assert!(panels(None, "r.json", &serde_json::json!({}), Some(&only))
            .unwrap_err()
            .to_string()
            .contains("r.json: no `trace.validation`"));
    }
}
