//! `--csv FILE` on run, replay and compare: one tidy row per (run,
//! scheduler, metric) with the JSON report's values, written atomically.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

const HEADER: [&str; 7] = [
    "run",
    "scenario",
    "scheduler",
    "seed",
    "metric",
    "value",
    "unit",
];

fn read_rows(p: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(p).unwrap();
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), HEADER);
    r.records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect()
}

/// The value at a dotted metric name (array elements by index).
fn lookup<'a>(mut v: &'a Value, metric: &str) -> &'a Value {
    for seg in metric.split('.') {
        v = match v {
            Value::Array(items) => seg
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .unwrap_or_else(|| panic!("{metric}: no element {seg}")),
            other => other
                .get(seg)
                .unwrap_or_else(|| panic!("{metric}: no key {seg}")),
        };
    }
    v
}

fn numeric_leaves(v: &Value) -> usize {
    match v {
        Value::Number(_) => 1,
        Value::Array(a) => a.iter().map(numeric_leaves).sum(),
        Value::Object(m) => m.values().map(numeric_leaves).sum(),
        _ => 0,
    }
}

/// The numeric leaves that are metrics: all but the latency histogram's
/// buckets (a distribution, left out of the CSV).
fn metric_leaves(report: &Value) -> usize {
    numeric_leaves(report) - report.get("latency_histogram").map_or(0, numeric_leaves)
}

fn unit<'a>(rows: &'a [Vec<String>], metric: &str) -> &'a str {
    &rows.iter().find(|r| r[4] == metric).unwrap()[6]
}

#[test]
fn run_csv_rows_hold_every_numeric_metric_of_the_json_report() {
    let tmp = scratch("csv_run");
    let (csv, json) = (tmp.join("r.csv"), tmp.join("r.json"));
    simctl_ok(&[
        "run",
        "configs/scenarios/sync-write-app.toml",
        "--set",
        "jobs.0.requests=50",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
        "-q",
    ]);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = read_rows(&csv);
    assert_eq!(rows.len(), metric_leaves(&report));
    for r in &rows {
        assert_eq!(&r[..4], ["0", "sync-write-app", "cfq", "1"]);
        assert_eq!(lookup(&report, &r[4]).to_string(), r[5], "{}", r[4]);
    }
    assert_eq!(unit(&rows, "latency_us.p99"), "us");
    assert_eq!(unit(&rows, "throughput.iops"), "1/s");
    assert_eq!(unit(&rows, "write.mb_per_s"), "MB/s");
    assert_eq!(unit(&rows, "requests.bytes_written"), "bytes");
    assert_eq!(unit(&rows, "requests.writes"), "");
    assert_eq!(unit(&rows, "threads.0.latency_us.mean"), "us");
    assert_eq!(unit(&rows, "device.die_busy_ns.0"), "ns");
    let names: std::collections::BTreeSet<&str> = rows.iter().map(|r| r[4].as_str()).collect();
    assert_eq!(names.len(), rows.len(), "metric names repeat");
}

#[test]
fn compare_csv_has_one_run_per_entry_and_replay_csv_works() {
    let tmp = scratch("csv_compare");
    let (csv, json) = (tmp.join("c.csv"), tmp.join("c.json"));
    simctl_ok(&[
        "compare",
        "configs/scenarios/rand16-128m.toml",
        "--schedulers",
        "noop,deadline:fifo_batch=1",
        "--set",
        "jobs.0.requests=20",
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "-q",
    ]);
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = read_rows(&csv);
    for (i, label) in ["noop", "deadline:fifo_batch=1"].iter().enumerate() {
        let mine: Vec<&Vec<String>> = rows.iter().filter(|r| r[0] == i.to_string()).collect();
        let rep = &c["reports"][i]["report"];
        assert_eq!(mine.len(), metric_leaves(rep));
        for r in mine {
            assert_eq!((r[1].as_str(), r[2].as_str()), ("rand16-128m", *label));
            assert_eq!(lookup(rep, &r[4]).to_string(), r[5], "{}", r[4]);
        }
    }
    let rcsv = tmp.join("replay.csv");
    simctl_ok(&[
        "replay",
        "traces/blkparse.txt",
        "--csv",
        rcsv.to_str().unwrap(),
        "-q",
    ]);
    let r = read_rows(&rcsv);
    assert!(r
        .iter()
        .any(|x| x[4] == "requests.count" && x[1] == "traces/blkparse.txt"));
}

fn dir_names(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_failed_run_leaves_no_csv_and_inputs_are_never_overwritten() {
    let tmp = scratch("csv_atomic");
    let csv = tmp.join("out.csv");
    let err = simctl_err(&[
        "run",
        "configs/scenarios/sync-write-app.toml",
        "--set",
        "jobs.0.requests=0",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(err.contains("requests = 0"), "{err}");
    assert!(
        dir_names(&tmp).is_empty(),
        "left behind: {:?}",
        dir_names(&tmp)
    );

    let scenario = tmp.join("s.toml");
    let text = "name = \"s\"\n[[files]]\nname = \"f\"\nsize_mib = 16\n[[jobs]]\nname = \"w\"\nfile = \"f\"\nop = \"write\"\npattern = \"sequential\"\nrequest_bytes = 4096\nrequests = 10\n";
    std::fs::write(&scenario, text).unwrap();
    let err = simctl_err(&[
        "run",
        scenario.to_str().unwrap(),
        "--csv",
        scenario.to_str().unwrap(),
    ]);
    assert!(
        err.contains("--csv") && err.contains("refusing to overwrite"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&scenario).unwrap(), text);

    let same = tmp.join("x");
    let err = simctl_err(&[
        "run",
        scenario.to_str().unwrap(),
        "--csv",
        same.to_str().unwrap(),
        "--json",
        same.to_str().unwrap(),
    ]);
    assert!(err.contains("--json and --csv"), "{err}");
    assert_eq!(dir_names(&tmp), ["s.toml"]);
}
