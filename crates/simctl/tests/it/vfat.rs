//! VFAT (FAT32 as vold mounted Android's /sdcard) through the `simctl`
//! binary: what a block trace of a Nexus S writing to /sdcard shows — the
//! data cluster, then the directory entry and both FAT copies written in
//! place by fsync, directory slots written at once by create (MS_DIRSYNC),
//! no journal and no cache flush — asserted on the request log and the
//! report's `fs` section.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// One row of the request log.
#[derive(Debug, Clone)]
struct Row {
    sector: u64,
    sectors: u64,
    op: String,
}

fn read_log(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                sector: f[4].parse().unwrap(),
                sectors: f[5].parse().unwrap(),
                op: f[6].to_string(),
            }
        })
        .collect()
}

/// Runs scenario `file` (under crates/simctl/tests/vfat) with `extra` arguments: the
/// report and the request log.
fn run(name: &str, file: &str, extra: &[&str]) -> (Value, Vec<Row>) {
    let tmp = scratch(name);
    let sc = root().join("crates/simctl/tests/vfat").join(file);
    let log = tmp.join("log.csv");
    let mut args = vec!["run", sc.to_str().unwrap(), "--log", log.to_str().unwrap()];
    args.extend_from_slice(extra);
    let r = report(&args, &tmp);
    (r, read_log(&log))
}

fn fs_u64(r: &Value, k: &str) -> u64 {
    r["fs"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("fs.{k} in {}", r["fs"]))
}

/// The FAT region `[first sector, end)` (both copies) and the data
/// region's start, from the report's geometry.
fn regions(r: &Value) -> ((u64, u64), u64) {
    let fat = fs_u64(r, "fat_sectors");
    let data = fs_u64(r, "data_start_sector");
    ((32, 32 + 2 * fat), data)
}

#[test]
fn fsync_writes_the_data_cluster_then_the_dirent_and_both_fats_in_place() {
    let (r, rows) = run("vfat-append-fsync", "append-fsync.toml", &[]);
    let ((fat0, fat_end), data) = regions(&r);
    let fat_sectors = fs_u64(&r, "fat_sectors");
    let in_fat1 = |x: &Row| x.sector + x.sectors > fat0 && x.sector < fat0 + fat_sectors;
    let in_fat2 = |x: &Row| x.sector + x.sectors > fat0 + fat_sectors && x.sector < fat_end;
    // 1 dirsync write of the root's slots, then per fsync: data, FAT 1,
    // FAT 2, directory entry.
    assert_eq!(rows.len(), 1 + 3 * 4, "{rows:#?}");
    assert!(
        rows.iter().all(|x| x.op == "W"),
        "writes only, no flush: {rows:#?}"
    );
    for k in 0..3 {
        let f = &rows[1 + 4 * k..5 + 4 * k];
        assert!(f[0].sector >= data, "data first: {f:#?}");
        assert!(
            f[1..].iter().any(in_fat1) && f[1..].iter().any(in_fat2),
            "{f:#?}"
        );
    }
    // three appends took three consecutive clusters: contiguous on disk
    let data_rows: Vec<&Row> = rows.iter().filter(|x| x.sector >= data + 16).collect();
    assert_eq!(data_rows.len(), 3, "{rows:#?}");
    assert_eq!(data_rows[1].sector, data_rows[0].sector + 8);
    assert_eq!(data_rows[2].sector, data_rows[1].sector + 8);
    assert_eq!(fs_u64(&r, "clusters_allocated"), 3);
    assert_eq!(fs_u64(&r, "fsyncs"), 3);
    assert!(fs_u64(&r, "fat_sectors_written") >= 6 * 8);
    assert!(fs_u64(&r, "dirent_writes") >= 3);
    assert_eq!(fs_u64(&r, "dirsync_pages"), 1);
    // no journal, no flush
    assert_eq!(fs_u64(&r, "flushes_issued"), 0);
    assert_eq!(r["device"]["flush"]["count"].as_u64(), Some(0));
    assert!(r["fs"].get("journal_commits").is_none());
    assert_eq!(r["fs"]["config"]["type"], "vfat");
    assert_eq!(r["fs"]["config"]["cluster_kib"], 4);
}

#[test]
fn a_vfat_run_is_deterministic() {
    let tmp = scratch("vfat-determinism");
    let sc = root().join("crates/simctl/tests/vfat/append-fsync.toml");
    let a = simctl_ok(&["run", sc.to_str().unwrap(), "--json", "-"]);
    let b = simctl_ok(&["run", sc.to_str().unwrap(), "--json", "-"]);
    assert_eq!(a, b);
    let _ = tmp;
}

#[test]
fn the_flush_option_writes_at_close_and_without_dirsync_create_writes_nothing() {
    let (r, rows) = run(
        "vfat-flush-close",
        "create-close.toml",
        &["--set", "fs.flush=true", "--set", "fs.dirsync=false"],
    );
    assert_eq!(fs_u64(&r, "dirsync_pages"), 0);
    assert_eq!(fs_u64(&r, "close_flushes"), 1);
    let (_, data) = regions(&r);
    // the close wrote the file's cluster and the metadata
    assert!(rows.iter().any(|x| x.sector >= data + 16), "{rows:#?}");
    assert!(rows.iter().any(|x| x.sector < data), "{rows:#?}");
    // without flush and dirsync, nothing is written before the flusher
    let (r, rows) = run(
        "vfat-lazy-close",
        "create-close.toml",
        &["--set", "fs.dirsync=false"],
    );
    assert_eq!(fs_u64(&r, "close_flushes"), 0);
    assert!(rows.is_empty(), "{rows:#?}");
}

#[test]
fn bad_vfat_options_are_located_errors() {
    let tmp = scratch("vfat-bad-option");
    let sc = tmp.join("bad.toml");
    let text =
        std::fs::read_to_string(root().join("crates/simctl/tests/vfat/append-fsync.toml")).unwrap();
    std::fs::write(
        &sc,
        text.replace("type = \"vfat\"", "type = \"vfat\"\ncluster_kib = 3"),
    )
    .unwrap();
    let out = simctl(&["run", sc.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml") && err.contains("fs.cluster_kib = 3"),
        "{err}"
    );
    std::fs::write(
        &sc,
        text.replace("type = \"vfat\"", "type = \"vfat\"\nfstrim = true"),
    )
    .unwrap();
    let err = String::from_utf8_lossy(&simctl(&["run", sc.to_str().unwrap()]).stderr).to_string();
    assert!(err.contains("bad.toml") && err.contains("FITRIM"), "{err}");
    std::fs::write(&sc, text.replace("type = \"vfat\"", "type = \"fat32\"")).unwrap();
    let err = String::from_utf8_lossy(&simctl(&["run", sc.to_str().unwrap()]).stderr).to_string();
    assert!(err.contains("bad.toml") && err.contains("fat32"), "{err}");
}
