//! `--csv FILE`: the reports of `run`, `replay` or `compare` as one tidy
//! table, one row per (run, scheduler, metric).
//!
//! Columns: `run` (0 for `run`/`replay`; the entry's position for
//! `compare`), `scenario` (the report's `run.name`), `scheduler` (the
//! scheduler, or the compare entry as written, e.g. `cfq:slice_idle=0`),
//! `seed`, `metric`, `value`, `unit`. A metric is a numeric leaf of the
//! JSON report, its keys joined with dots (`latency_us.p99`,
//! `device.waf`); an array element is named by its index
//! (`threads.0.iops`). Values are written exactly as in the JSON report.
//! Strings (scheduler tunables among them), booleans and nulls are not
//! metrics and are left out, and so is `latency_histogram` (the
//! distribution's buckets, not a metric). The unit comes from the key (`_us` → `us`,
//! `mb_per_s` → `MB/s`, `iops` → `1/s`, ...), empty for counts and ratios
//! without one.

use anyhow::{Context, Result};
use mmcsim::sim::Report;
use serde_json::Value;
use std::io::Write;

/// The header row.
pub const HEADER: [&str; 7] = [
    "run",
    "scenario",
    "scheduler",
    "seed",
    "metric",
    "value",
    "unit",
];

/// One metric of one report: its dotted name, value text and unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// Dotted key path in the JSON report.
    pub name: String,
    /// The value as the JSON report writes it.
    pub value: String,
    /// Unit (empty for counts and plain ratios).
    pub unit: String,
}

/// Every numeric leaf of `report`, in the JSON report's key order.
pub fn metrics(report: &Report) -> Result<Vec<Metric>> {
    let v = serde_json::to_value(report).context("flattening the report")?;
    Ok(metrics_of(&v))
}

/// Every numeric leaf of a report already in JSON form `v` (a sweep
/// cell's file), in key order.
pub fn metrics_of(v: &Value) -> Vec<Metric> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    walk(v, &mut path, &mut out);
    out
}

/// Collects the numeric leaves under `v` at `path`.
fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<Metric>) {
    match v {
        Value::Number(n) => out.push(Metric {
            name: path.join("."),
            value: n.to_string(),
            unit: unit_of(path).to_string(),
        }),
        Value::Object(m) => {
            for (k, x) in m {
                if path.is_empty() && k == "latency_histogram" {
                    continue; // a distribution (buckets), not a metric
                }
                path.push(k.clone());
                walk(x, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                path.push(i.to_string());
                walk(x, path, out);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// Summary statistics whose unit is their parent's (`latency_us.p99`).
const STATS: &[&str] = &[
    "mean", "min", "max", "stddev", "p50", "p90", "p99", "p999", "total",
];

/// The unit of the metric at `path`.
fn unit_of(path: &[String]) -> &'static str {
    let leaf = path.last().map_or("", String::as_str);
    if let Some(u) = key_unit(leaf) {
        return u;
    }
    if leaf.ends_with("_share") || leaf.ends_with("_fraction") || leaf.ends_with("_rate") {
        return "fraction";
    }
    let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
    match parent {
        Some(p) if STATS.contains(&leaf) || p == "breakdown_us" || leaf.parse::<u64>().is_ok() => {
            key_unit(p).unwrap_or("")
        }
        _ => "",
    }
}

/// The unit a key's name states, if any.
fn key_unit(k: &str) -> Option<&'static str> {
    let u = if k.ends_with("mb_per_s") || k.ends_with("_mb_s") {
        "MB/s"
    } else if k == "iops" || k.ends_with("_iops") || k.ends_with("_tps") {
        "1/s"
    } else if k.ends_with("_mt_per_s") {
        "MT/s"
    } else if k.ends_with("_us") {
        "us"
    } else if k.ends_with("_ns") {
        "ns"
    } else if k.ends_with("_ms") {
        "ms"
    } else if k.ends_with("_s") {
        "s"
    } else if k.ends_with("_mhz") {
        "MHz"
    } else if k.ends_with("_kib") || k.ends_with("_kb") {
        "KiB"
    } else if k.ends_with("_mib") {
        "MiB"
    } else if k.starts_with("bytes") || k.ends_with("_bytes") {
        "bytes"
    } else {
        return None;
    };
    Some(u)
}

/// Writes the tidy table of `runs` (label, report) to output `o` (`-`:
/// `out`), complete or not at all ([`crate::output::Output`]).
pub fn write(
    o: crate::output::Output,
    runs: &[(&str, &Report)],
    out: &mut dyn Write,
) -> Result<()> {
    let mut buf = Vec::new();
    {
        let mut w = csv::Writer::from_writer(&mut buf);
        w.write_record(HEADER)?;
        for (i, (label, report)) in runs.iter().enumerate() {
            let (run, seed) = (i.to_string(), report.run.seed.to_string());
            for m in metrics(report)? {
                w.write_record([
                    run.as_str(),
                    report.run.name.as_str(),
                    label,
                    seed.as_str(),
                    m.name.as_str(),
                    m.value.as_str(),
                    m.unit.as_str(),
                ])?;
            }
        }
        w.flush()?;
    }
    o.write(&buf, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        s.split('.').map(String::from).collect()
    }

    #[test]
    fn units_come_from_the_keys() {
        assert_eq!(unit_of(&p("latency_us.p99")), "us");
        assert_eq!(unit_of(&p("read.mb_per_s")), "MB/s");
        assert_eq!(unit_of(&p("throughput.iops")), "1/s");
        assert_eq!(unit_of(&p("breakdown_us.device")), "us");
        assert_eq!(unit_of(&p("breakdown_us.not_device_share")), "fraction");
        assert_eq!(unit_of(&p("device_response_us.requests")), "");
        assert_eq!(unit_of(&p("requests.bytes_read")), "bytes");
        assert_eq!(unit_of(&p("simulated_time_s")), "s");
        assert_eq!(unit_of(&p("device.waf")), "");
        assert_eq!(unit_of(&p("device.die_busy_ns.1")), "ns");
        // AndroBench's result screen: MB/s, IOPS and transactions/s are
        // rates, not seconds.
        assert_eq!(unit_of(&p("androbench.seq_write_mb_s")), "MB/s");
        assert_eq!(unit_of(&p("androbench.runs.0.seq_read_mb_s")), "MB/s");
        assert_eq!(unit_of(&p("androbench.rand_read_iops")), "1/s");
        assert_eq!(unit_of(&p("androbench.sqlite_insert_tps")), "1/s");
        assert_eq!(unit_of(&p("device_profile.nand.channel_mt_per_s")), "MT/s");
    }
}
