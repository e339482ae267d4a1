//! Crash grids through `simctl sweep` (issue 29 item 5): a grid with a
//! `[crash]` table runs `crash` in every cell; the cell files carry the
//! crash section, `results.csv` the crash counters beside the speed,
//! shards merge into the same bytes, and `plot --kind crash-safety` draws
//! speed against safety from the directory.

use crate::common::{scratch, simctl, simctl_ok};
use serde_json::Value;
use std::path::Path;

/// Three configurations (WAL, journal off, journal off on the
/// atomic-write FTL) x 5 cuts of the SQLite crash workload.
const GRID: &str = "crates/simctl/tests/crash/grid.toml";

fn sweep(out: &Path, extra: &[&str]) -> String {
    let o = out.display().to_string();
    let mut a = vec!["sweep", GRID, "--out", &o];
    a.extend_from_slice(extra);
    simctl_ok(&a)
}

/// `results.csv` as (header, rows), every row a map column → value.
fn results(dir: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            // The grid's set lists hold no commas or quotes.
            header
                .iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn a_crash_grid_reports_speed_and_safety_per_configuration() {
    let dir = scratch("crash-sweep");
    let out = dir.join("all");
    let said = sweep(&out, &["--jobs", "2"]);
    assert!(
        said.contains("3 cells of 5 power cuts each; ran 3"),
        "{said}"
    );
    let rows = results(&out);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r["crash.cuts"], "5", "{r:?}");
        assert!(r["sqlite_tps"].parse::<f64>().unwrap() > 0.0);
        // Barriers on an honest cache: no acknowledged write is lost.
        assert_eq!(r["crash.acked_writes_lost"], "0", "{r:?}");
        for k in ["crash.recovery_ms.mean", "crash.recovery_ms.p99"] {
            assert!(r[k].parse::<f64>().unwrap() > 0.0, "{k}");
        }
    }
    // The CSV's counters are the cell report's.
    let cell: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("cells").join(format!("{}.json", rows[1]["cell"])))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(cell["schema"], "mmcsim-report/2");
    assert_eq!(cell["crash"]["per_cut"].as_array().unwrap().len(), 5);
    for (col, ptr) in [
        ("crash.cuts_violating", "/crash/cuts_violating"),
        (
            "crash.sqlite.uncommitted_visible",
            "/crash/sqlite/uncommitted_visible",
        ),
        ("crash.sqlite.corrupt_pages", "/crash/sqlite/corrupt_pages"),
    ] {
        assert_eq!(
            rows[1][col],
            cell.pointer(ptr).unwrap().to_string(),
            "{col}"
        );
    }
    // WAL with FULL and journal off on the atomic-write FTL keep every
    // promise.
    for r in [&rows[0], &rows[2]] {
        assert_eq!(r["crash.cuts_violating"], "0", "{r:?}");
    }

    // Shards merge into the same bytes; a resumed sweep runs nothing.
    let parts: Vec<_> = (1..=2).map(|i| dir.join(format!("shard{i}"))).collect();
    for (i, p) in parts.iter().enumerate() {
        sweep(p, &["--shard", &format!("{}/2", i + 1), "--jobs", "1"]);
    }
    let merged = dir.join("merged");
    let mut args = vec!["merge".to_string()];
    args.extend(parts.iter().map(|p| p.display().to_string()));
    args.extend(["--out".to_string(), merged.display().to_string()]);
    simctl_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    for f in ["results.csv", "sweep.json"] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(merged.join(f)).unwrap(),
            "{f}"
        );
    }
    let again = sweep(&out, &[]);
    assert!(again.contains("ran 0, skipped 3"), "{again}");

    // Speed against safety, from the directory.
    let svg = dir.join("safety.svg");
    let o = out.display().to_string();
    let s = svg.display().to_string();
    simctl_ok(&["plot", "--kind", "crash-safety", &o, "--out", &s]);
    let text = std::fs::read_to_string(&svg).unwrap();
    for needle in [
        "SQLite transactions/s",
        "3: OFF atomic_write=true (0/5)",
        "Cuts that broke a promise",
    ] {
        assert!(text.contains(needle), "{needle} not in the figure");
    }
}

#[test]
fn plotting_crash_safety_needs_a_crash_sweep() {
    let dir = scratch("crash-sweep-plot-errors");
    let csv = dir.join("results.csv");
    std::fs::write(
        &csv,
        "cell,index,scheduler,workload,phone,device,seed,set_variant,sets,iops\n",
    )
    .unwrap();
    let c = csv.display().to_string();
    let svg = dir.join("x.svg").display().to_string();
    let o = simctl(&["plot", "--kind", "crash-safety", &c, "--out", &svg]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("sqlite_tps") && err.contains("[crash]"),
        "{err}"
    );
}
