//! The output directory of a sweep (or of a merge, identical):
//!
//! ```text
//! DIR/sweep.json        the manifest: every cell of the grid with its coordinates
//! DIR/cells/<id>.json   one full report per finished cell
//! DIR/results.csv       one row per finished cell: coordinates, then headline metrics
//! DIR/shard.json        only in a `--shard I/N` run: which shard
//! ```
//!
//! Every file is written to a temporary name in the same folder and
//! renamed ([`crate::output::Output`]), so a killed run never leaves a
//! complete-looking partial file.

use super::cell::CellRecord;
use super::crash::CrashGrid;
use super::shard::Shard;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Schema tag of `sweep.json`.
pub const MANIFEST_SCHEMA: &str = "mmcsim-sweep/1";

/// `sweep.json`: the whole grid, whatever slice of it a directory holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Schema tag, [`MANIFEST_SCHEMA`].
    pub schema: String,
    /// Every cell, by index.
    pub cells: Vec<CellRecord>,
    /// The grid's `[crash]` table: every cell is a power-cut campaign
    /// (absent, and left out of the file, for an ordinary grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<CrashGrid>,
}

impl Manifest {
    /// The manifest of `cells`, power-cut campaigns when `crash` is given.
    pub fn new(cells: Vec<CellRecord>, crash: Option<CrashGrid>) -> Manifest {
        Manifest {
            schema: MANIFEST_SCHEMA.to_string(),
            cells,
            crash,
        }
    }

    /// The file text (pretty JSON and a newline).
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).expect("manifest serializes") + "\n"
    }

    /// Reads `DIR/sweep.json`, or `None` when absent.
    pub fn read(dir: &Path) -> Result<Option<Manifest>> {
        let p = manifest_path(dir);
        if !p.exists() {
            return Ok(None);
        }
        let text = crate::input::read_json_text(&p, "sweep manifest")?;
        let m: Manifest = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a sweep manifest", p.display()))?;
        if m.schema != MANIFEST_SCHEMA {
            bail!(
                "{}: schema `{}`, expected `{MANIFEST_SCHEMA}`",
                p.display(),
                m.schema
            );
        }
        Ok(Some(m))
    }
}

/// `DIR/sweep.json`.
pub fn manifest_path(dir: &Path) -> PathBuf {
    dir.join("sweep.json")
}

/// `DIR/shard.json`.
pub fn shard_path(dir: &Path) -> PathBuf {
    dir.join("shard.json")
}

/// `DIR/cells`.
pub fn cells_dir(dir: &Path) -> PathBuf {
    dir.join("cells")
}

/// `DIR/cells/<id>.json`.
pub fn cell_path(dir: &Path, id: &str) -> PathBuf {
    cells_dir(dir).join(format!("{id}.json"))
}

/// `DIR/results.csv`.
pub fn results_path(dir: &Path) -> PathBuf {
    dir.join("results.csv")
}

/// Reads `DIR/shard.json`, or `None` when absent (an unsharded run).
pub fn read_shard(dir: &Path) -> Result<Option<Shard>> {
    let p = shard_path(dir);
    if !p.exists() {
        return Ok(None);
    }
    let text = crate::input::read_json_text(&p, "shard record")?;
    Ok(Some(serde_json::from_str(&text).with_context(|| {
        format!("{}: not a shard record", p.display())
    })?))
}

/// Removes temporary files a killed run left in `DIR/cells`.
pub fn remove_stale_temporaries(dir: &Path) -> Result<()> {
    let cells = cells_dir(dir);
    let Ok(entries) = std::fs::read_dir(&cells) else {
        return Ok(());
    };
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") {
            std::fs::remove_file(e.path())
                .with_context(|| format!("removing {}", e.path().display()))?;
        }
    }
    Ok(())
}

/// A finished cell's report: the file's text, parsed. `None` when the
/// file is absent or is not a complete report (then the cell runs again).
pub fn read_complete(path: &Path) -> Option<(Vec<u8>, Value)> {
    let bytes =
        crate::input::read_limited(path, "cell report", crate::input::MAX_JSON_BYTES).ok()?;
    if !bytes.ends_with(b"}\n") {
        return None;
    }
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    let schema = v.get("schema")?.as_str()?;
    (schema == mmcsim::stats::report::SCHEMA).then_some((bytes, v))
}

/// True when the report value `v` may be the setting `text` (`KEY=VALUE`
/// text): equal strings, numbers or booleans; another kind of value
/// cannot tell.
fn may_be(v: &Value, text: &str) -> bool {
    let text = text.trim().trim_matches('"');
    match v {
        Value::String(s) => s == text,
        Value::Number(n) => text.parse::<f64>().ok() == n.as_f64(),
        Value::Bool(b) => text == b.to_string(),
        _ => true,
    }
}

/// The value the report `v` records for override `key` (as `--set` names
/// it), when it records one.
fn recorded<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        ["iosched", t] => tunable(v, t),
        ["seed"] => v.pointer("/run/seed"),
        ["device", rest @ ..] => rest
            .iter()
            .try_fold(v.get("device_profile")?, |v, k| v.get(*k)),
        _ => parts.iter().try_fold(v, |v, k| v.get(*k)),
    }
}

/// The value of tunable `name` in the report `v`'s scheduler.
fn tunable<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v.pointer("/scheduler/tunables")?
        .as_array()?
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")
}

/// Why the report `v` is not cell `c`'s, when a parameter it records
/// differs from the cell's: the scheduler and the tunables its entry
/// names, the seed, a trace workload's path, and the settings of the set
/// variant that the report echoes.
pub fn foreign_cell(c: &CellRecord, v: &Value) -> Option<String> {
    let mut entry = c.scheduler.split(':');
    let name = entry.next().unwrap_or_default();
    let ran = v.pointer("/scheduler/name").and_then(Value::as_str);
    if ran != Some(name) {
        return Some(format!(
            "the report ran scheduler `{}`, the cell `{name}`",
            ran.unwrap_or("(none)")
        ));
    }
    let mut settings: Vec<(String, &str)> = entry
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, x)| (format!("iosched.{}", k.trim()), x))
        .collect();
    let seed = c.seed.map(|s| s.to_string());
    settings.extend(seed.as_deref().map(|s| ("seed".to_string(), s)));
    let trace = !c.workload_path.ends_with(".toml") && !c.workload_path.ends_with(".fio");
    if trace {
        settings.push(("run.name".to_string(), c.workload_path.as_str()));
    }
    for set in &c.sets {
        if let Some((k, x)) = set.split_once('=') {
            settings.push((k.trim().to_string(), x));
        }
    }
    for (key, want) in &settings {
        if let Some(got) = recorded(v, key) {
            if !may_be(got, want) {
                return Some(format!("the report has {key} = {got}, the cell {want}"));
            }
        }
    }
    None
}

/// The headline metrics of `results.csv`: column name and where the value
/// sits in the report (a JSON pointer).
pub const METRICS: &[(&str, &str)] = &[
    ("requests", "/requests/count"),
    ("simulated_time_s", "/simulated_time_s"),
    ("iops", "/throughput/iops"),
    ("mb_per_s", "/throughput/mb_per_s"),
    ("lat_mean_us", "/latency_us/mean"),
    ("lat_p50_us", "/latency_us/p50"),
    ("lat_p90_us", "/latency_us/p90"),
    ("lat_p99_us", "/latency_us/p99"),
    ("lat_p999_us", "/latency_us/p999"),
    ("lat_max_us", "/latency_us/max"),
    ("read_iops", "/read/iops"),
    ("read_lat_mean_us", "/read/latency_us/mean"),
    ("read_lat_p99_us", "/read/latency_us/p99"),
    ("write_iops", "/write/iops"),
    ("write_lat_mean_us", "/write/latency_us/mean"),
    ("write_lat_p99_us", "/write/latency_us/p99"),
    ("jain", "/fairness/jain"),
    ("platform_us", "/breakdown_us/platform"),
    ("syscall_fs_us", "/breakdown_us/syscall_fs"),
    ("block_queue_us", "/breakdown_us/block_queue"),
    ("queue_wait_us", "/breakdown_us/queue_wait"),
    ("driver_us", "/breakdown_us/driver"),
    ("device_us", "/breakdown_us/device"),
    ("irq_wakeup_us", "/breakdown_us/irq_wakeup"),
    ("not_device_share", "/breakdown_us/not_device_share"),
    ("waf", "/device/waf"),
    ("gc_runs", "/device/gc_runs"),
    ("gc_pages_moved", "/device/gc_pages_moved"),
    ("map_cache_hit_rate", "/device/map_cache_hit_rate"),
    ("read_buffer_hit_rate", "/device/read_buffer_hit_rate"),
    ("erase_count_max", "/device/erase_count/max"),
];

/// The coordinate columns of `results.csv`, before the metrics.
pub const COORDINATES: &[&str] = &[
    "cell",
    "index",
    "scheduler",
    "workload",
    "phone",
    "device",
    "seed",
    "set_variant",
    "sets",
];

/// Writes `DIR/results.csv` from the finished cells among `cells` (in
/// their order), reading each report from its file, so a sweep, a resumed
/// sweep and a merge produce the same bytes; a crash grid's rows add the
/// SQLite speed and the crash counters ([`super::crash::COLUMNS`]).
/// Returns the rows written.
pub fn write_results(dir: &Path, cells: &[&CellRecord], crash: Option<CrashGrid>) -> Result<usize> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = COORDINATES
        .iter()
        .copied()
        .chain(METRICS.iter().map(|(name, _)| *name))
        .collect();
    if crash.is_some() {
        header.push(super::crash::SQLITE_TPS);
        header.extend(super::crash::COLUMNS.iter().map(|(name, _)| *name));
    }
    w.write_record(&header)?;
    let mut rows = 0;
    for c in cells {
        let Some((_, report)) = read_complete(&cell_path(dir, &c.id)) else {
            continue;
        };
        if crash.is_some_and(|g| !g.finished(&report)) {
            continue;
        }
        let mut row = vec![
            c.id.clone(),
            c.index.to_string(),
            c.scheduler.clone(),
            c.workload.clone(),
            c.phone.clone(),
            c.device.clone(),
            c.seed.map_or(String::new(), |s| s.to_string()),
            c.set_variant.to_string(),
            c.sets.join(" "),
        ];
        for (name, pointer) in METRICS {
            let v = report.pointer(pointer).with_context(|| {
                format!("cell {}: the report has no `{name}` ({pointer})", c.id)
            })?;
            row.push(match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        if crash.is_some() {
            row.extend(super::crash::row(&report, &c.id)?);
        }
        w.write_record(&row)?;
        rows += 1;
    }
    let bytes = w.into_inner().context("writing results.csv")?;
    crate::output::write_file(&results_path(dir), &bytes)?;
    Ok(rows)
}
