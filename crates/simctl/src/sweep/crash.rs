//! Crash grids: a grid with a `[crash]` table runs every cell as `simctl
//! crash` does — the workload once uncut (its speed), then `cuts` seeded
//! power cuts, each recovered and checked — instead of as `simctl run`.
//!
//! ```toml
//! [crash]
//! cuts = 20    # seeded power cuts per cell (1 to 100000), drawn from the cell's seed
//! ```
//!
//! A crash cell's file is the uncut run's report with the `crash` section
//! of its cuts (what `simctl run --power-cut` adds for one cut), so
//! `simctl check`, `merge` and resuming read it like any cell; the
//! `results.csv` of a crash grid adds the speed metric SQLite workloads
//! are judged by and the crash counters ([`COLUMNS`]) after the ordinary
//! metrics.

use anyhow::{anyhow, Result};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::crash::{crash_campaign_on, CutPlan};
use mmcsim::sim::{PreparedDevice, Report};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most cuts a crash grid's cell may ask for.
pub const MAX_CUTS: u64 = 100_000;

/// The `[crash]` table of a grid, as `sweep.json` records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashGrid {
    /// Seeded power cuts per cell, drawn uniformly over the uncut run
    /// from the cell's seed (as `simctl crash --cuts N`).
    pub cuts: u64,
}

impl CrashGrid {
    /// Checks the table; `at` is the table's location for the message.
    pub fn checked(self, at: &str) -> Result<CrashGrid> {
        if !(1..=MAX_CUTS).contains(&self.cuts) {
            return Err(anyhow!(
                "{at}: [crash] cuts = {}: expected a number of power cuts per cell from 1 to {MAX_CUTS}",
                self.cuts
            ));
        }
        Ok(self)
    }

    /// Runs one cell: the uncut run and the cuts on `device` (built for
    /// `sc`), as the uncut run's report with its `crash` section.
    pub fn run(
        &self,
        sc: &Scenario,
        registry: &Registry,
        device: &PreparedDevice,
    ) -> mmcsim::error::Result<Report> {
        let plan = CutPlan::Seeded {
            cuts: self.cuts,
            seed: sc.seed,
        };
        Ok(crash_campaign_on(sc, registry, device, plan, |_, _| {})?.into_report())
    }

    /// True when the report `v` is a finished crash cell of this grid
    /// (its `crash` section holds this many cuts); else the cell runs
    /// again.
    pub fn finished(&self, v: &Value) -> bool {
        v.pointer("/crash/cuts").and_then(Value::as_u64) == Some(self.cuts)
    }
}

/// The columns a crash grid's `results.csv` adds: name and JSON pointer
/// into the cell's report (counts summed over the cuts).
pub const COLUMNS: &[(&str, &str)] = &[
    ("crash.cuts", "/crash/cuts"),
    ("crash.cuts_violating", "/crash/cuts_violating"),
    ("crash.acked_writes_lost", "/crash/acked_writes_lost"),
    (
        "crash.cuts_losing_acked_writes",
        "/crash/cuts_losing_acked_writes",
    ),
    ("crash.torn_pages", "/crash/torn_pages"),
    ("crash.paired_page_victims", "/crash/paired_page_victims"),
    ("crash.flying_writes", "/crash/flying_writes"),
    ("crash.msb_program_cuts", "/crash/msb_program_cuts"),
    ("crash.fs_inconsistencies", "/crash/fs_inconsistencies"),
    (
        "crash.fs.committed_transactions_lost",
        "/crash/fs/committed_transactions_lost",
    ),
    (
        "crash.sqlite.committed_lost",
        "/crash/sqlite/committed_lost",
    ),
    (
        "crash.sqlite.uncommitted_visible",
        "/crash/sqlite/uncommitted_visible",
    ),
    ("crash.sqlite.corrupt_pages", "/crash/sqlite/corrupt_pages"),
    ("crash.recovery_ms.mean", "/crash/recovery_ms/mean"),
    ("crash.recovery_ms.p99", "/crash/recovery_ms/p99"),
];

/// The speed column a crash grid adds before [`COLUMNS`]: SQLite
/// transactions per second of the uncut run (empty without
/// `[[sqlite_jobs]]`; IOPS is the ordinary `iops` column).
pub const SQLITE_TPS: &str = "sqlite_tps";

/// SQLite transactions per second of statement time over every operation
/// of the report `v` (as `simctl crash`'s `speed.sqlite_tps`).
pub fn sqlite_tps(v: &Value) -> Option<f64> {
    let p = v.pointer("/sqlite/per_transaction")?;
    crate::crash::tps_over(
        ["insert", "update", "delete", "select"]
            .iter()
            .filter_map(|k| {
                let o = p.get(*k)?;
                Some((o.get("transactions")?.as_u64()?, o.get("tps")?.as_f64()?))
            }),
    )
}

/// The cells of a crash grid's added columns for report `v` (in the order
/// [`SQLITE_TPS`], then [`COLUMNS`]); `id` names the cell in the error.
pub fn row(v: &Value, id: &str) -> Result<Vec<String>> {
    let mut row = vec![sqlite_tps(v).map_or(String::new(), |t| Value::from(t).to_string())];
    for (name, pointer) in COLUMNS {
        let x = v
            .pointer(pointer)
            .ok_or_else(|| anyhow!("cell {id}: the report has no `{name}` ({pointer})"))?;
        row.push(x.to_string());
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_out_of_range_are_refused_with_the_place() {
        let e = CrashGrid { cuts: 0 }.checked("g.toml:4:1").unwrap_err();
        assert!(
            e.to_string().starts_with("g.toml:4:1: [crash] cuts = 0"),
            "{e}"
        );
        assert!(CrashGrid { cuts: MAX_CUTS + 1 }.checked("x").is_err());
        assert_eq!(CrashGrid { cuts: 3 }.checked("x").unwrap().cuts, 3);
    }

    #[test]
    fn sqlite_tps_weights_operations_by_their_statement_time() {
        let v: Value = serde_json::json!({"sqlite": {"per_transaction": {
            "insert": {"transactions": 10, "tps": 100.0},
            "update": {"transactions": 10, "tps": 50.0},
            "delete": {"transactions": 0, "tps": 0.0}
        }}});
        // 20 transactions in 0.1 s + 0.2 s.
        let tps = sqlite_tps(&v).unwrap();
        assert!((tps - 20.0 / 0.3).abs() < 1e-9, "{tps}");
        assert_eq!(sqlite_tps(&serde_json::json!({})), None);
    }
}
