//! `trace.validation` (issue 27 item 6): a replayed BIOTracer log's
//! recorded device service and total latency beside the simulated ones,
//! per direction and size class, with the Kolmogorov–Smirnov distance,
//! and its CDF overlay from `simctl plot --kind cdf`. Tests that need
//! ../shared skip with the reason, as the other ../shared tests do.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

const EXCERPT: &str = "nexus5-biotracer-excerpt.txt";
const CLASSES: [&str; 4] = ["4KiB", "8-16KiB", "17-64KiB", ">64KiB"];

/// Records per `(direction, class)` counted from the log itself: column 2
/// is sectors (8k + 1 read as 8k, the driver's extra sector), bit 0 of
/// column 4 is write.
fn records_per_class(trace: &Path) -> Vec<((String, String), u64)> {
    let mut n: std::collections::BTreeMap<(String, String), u64> = Default::default();
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 8 {
            continue;
        }
        let mut sectors: u64 = f[1].parse().unwrap();
        if sectors > 8 && sectors % 8 == 1 {
            sectors -= 1;
        }
        let dir = if f[3].parse::<u32>().unwrap() & 1 == 1 {
            "write"
        } else {
            "read"
        };
        let class = match sectors * 512 {
            0..=4096 => 0,
            4097..=16384 => 1,
            16385..=65536 => 2,
            _ => 3,
        };
        *n.entry((dir.to_string(), CLASSES[class].to_string()))
            .or_default() += 1;
    }
    n.into_iter().collect()
}

fn excerpt(test: &str, tmp: &Path) -> Option<(std::path::PathBuf, Value)> {
    let trace = shared_trace(test, EXCERPT)?;
    let r = report(
        &["replay", trace.to_str().unwrap(), "--phone", "nexus5"],
        tmp,
    );
    Some((trace, r))
}

#[test]
fn the_excerpt_on_the_nexus5_reports_both_times_per_class_with_the_ks_distance() {
    let test = "trace.validation";
    let tmp = scratch("validation-keys");
    let Some((trace, r)) = excerpt(test, &tmp) else {
        return;
    };
    let v = &r["trace"]["validation"];
    let want = records_per_class(&trace);
    for key in ["device_service", "total_latency"] {
        let rows = v[key].as_array().unwrap_or_else(|| panic!("{key}: {v}"));
        let mut got: Vec<((String, String), u64)> = rows
            .iter()
            .map(|x| {
                let k = (
                    x["direction"].as_str().unwrap().to_string(),
                    x["size_class"].as_str().unwrap().to_string(),
                );
                assert_eq!(x["recorded"]["count"], x["simulated"]["count"], "{key} {x}");
                (k, x["recorded"]["count"].as_u64().unwrap())
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "{key}: one row per class, every record once");
        for x in rows {
            let d = x["ks_d"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&d), "{key} {x}");
            let n = x["recorded"]["count"].as_f64().unwrap();
            let crit = x["ks_critical_05"].as_f64().unwrap();
            assert!((crit - 1.3581 * (2.0 / n).sqrt()).abs() < 1e-3, "{x}");
            assert_eq!(x["differs_05"].as_bool(), Some(d > crit));
            for side in ["recorded", "simulated"] {
                let s = &x[side];
                let q = |k: &str| s[k].as_f64().unwrap();
                assert!(q("p50_us") > 0.0, "{key} {side} {s}");
                assert!(q("p50_us") <= q("p90_us") && q("p90_us") <= q("p99_us"));
                assert!(q("p99_us") <= q("max_us"));
                let total: u64 = s["buckets_ns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b[1].as_u64().unwrap())
                    .sum();
                assert_eq!(total, s["count"].as_u64().unwrap());
            }
        }
    }
    // recorded_vs_simulated is the device-service medians of the same rows.
    let medians = r["trace"]["recorded_vs_simulated"].as_array().unwrap();
    for (m, x) in medians.iter().zip(v["device_service"].as_array().unwrap()) {
        assert_eq!(m["recorded_p50_us"], x["recorded"]["p50_us"]);
        assert_eq!(m["simulated_p50_us"], x["simulated"]["p50_us"]);
    }
    // Total latency includes the device service: never shorter at p50.
    for (t, s) in v["total_latency"]
        .as_array()
        .unwrap()
        .iter()
        .zip(v["device_service"].as_array().unwrap())
    {
        for side in ["recorded", "simulated"] {
            assert!(
                t[side]["p50_us"].as_f64() >= s[side]["p50_us"].as_f64(),
                "{t} {s}"
            );
        }
    }
}

#[test]
fn a_run_without_recorded_timings_has_no_validation_and_plotting_one_class_is_a_located_error() {
    let tmp = scratch("validation-none");
    let r = report(
        &[
            "run",
            "configs/scenarios/rand16-128m.toml",
            "--set",
            "jobs.0.requests=50",
        ],
        &tmp,
    );
    assert!(r.pointer("/trace/validation").is_none());
    let json = tmp.join("report.json");
    let out = simctl(&[
        "plot",
        json.to_str().unwrap(),
        "--kind",
        "cdf",
        "--class",
        "write/4KiB",
        "--out",
        tmp.join("x.svg").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("report: no `trace.validation`"), "{err}");
    assert!(!tmp.join("x.svg").exists());
    let bad = simctl_err(&[
        "plot",
        json.to_str().unwrap(),
        "--kind",
        "cdf",
        "--class",
        "write/5KiB",
        "--out",
        tmp.join("y.svg").to_str().unwrap(),
    ]);
    assert!(bad.contains("5KiB") && bad.contains("8-16KiB"), "{bad}");
}

#[test]
fn the_cdf_overlay_draws_recorded_and_simulated_per_class() {
    let test = "plot --kind cdf overlay";
    let tmp = scratch("validation-plot");
    let Some((_, r)) = excerpt(test, &tmp) else {
        return;
    };
    let json = tmp.join("report.json");
    let n4 = r["trace"]["validation"]["device_service"][0]["recorded"]["count"]
        .as_u64()
        .unwrap();
    let all = tmp.join("all.svg");
    simctl_ok(&[
        "plot",
        json.to_str().unwrap(),
        "--kind",
        "cdf",
        "--out",
        all.to_str().unwrap(),
    ]);
    let s = std::fs::read_to_string(&all).unwrap();
    assert!(s.contains("<svg"));
    for title in [
        "Device service, write 4KiB: KS D =",
        "Device service, write 17-64KiB: KS D =",
        "Total latency, write 8-16KiB: KS D =",
    ] {
        assert!(s.contains(title), "{title}");
    }
    assert!(s.contains(&format!("recorded (n = {n4})")));
    assert!(s.contains("hardware submit → finish (log scale)"));
    assert!(
        s.contains(" ms") && s.contains(" µs"),
        "time ticks with units"
    );
    let one = tmp.join("one.png");
    simctl_ok(&[
        "plot",
        json.to_str().unwrap(),
        "--kind",
        "cdf",
        "--class",
        "write/4KiB",
        "--out",
        one.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(&one).unwrap().len() > 1000);
}
