//! SQLite on ext4 through the `simctl` binary: the system calls and
//! device work of auto-committed transactions per journal mode
//! (reference android-workloads.md §4), `[[sqlite_jobs]]`, and located
//! errors for bad `[sqlite]` settings.

use crate::common::*;
use serde_json::Value;

/// A Moto G-class phone's /data (reference §4.1) with one SQLite job.
fn scenario(job: &str) -> String {
    format!(
        r#"name = "sqlite-test"
seed = 3
[device]
profile = "../../../configs/devices/generic-emmc.toml"
[host]
profile = "../../../configs/hosts/snapdragon400.toml"
[fs]
type = "ext4"
atime = "noatime"
partition_size_mib = 1024
{job}
"#
    )
}

fn run(name: &str, job: &str, sets: &[&str]) -> Value {
    let tmp = scratch(name);
    let sc = tmp.join("scenario.toml");
    std::fs::write(&sc, scenario(job)).unwrap();
    let mut args = vec!["run", sc.to_str().unwrap()];
    for s in sets {
        args.extend(["--set", s]);
    }
    report(&args, &tmp)
}

const INSERTS: &str = r#"
[[sqlite_jobs]]
name = "contacts"
op = "insert"
transactions = 200
"#;

fn per_txn(r: &Value, op: &str, key: &str) -> f64 {
    r["sqlite"]["per_transaction"][op][key].as_f64().unwrap()
}

#[test]
fn sync_calls_per_insert_follow_the_journal_mode() {
    // Reference §4: DELETE 4, TRUNCATE 4, PERSIST 5, WAL/MEMORY/OFF 1.
    for (mode, syncs) in [
        ("delete", 4.0),
        ("truncate", 4.0),
        ("persist", 5.0),
        ("wal", 1.0),
        ("memory", 1.0),
        ("off", 1.0),
    ] {
        let r = run(
            &format!("sqlite-syncs-{mode}"),
            INSERTS,
            &[&format!("sqlite.journal_mode={mode}")],
        );
        let s = per_txn(&r, "insert", "syncs");
        println!(
            "{mode}: syncs {s}, block writes {:.2}, flushes {:.2}, tps {:.1}",
            per_txn(&r, "insert", "block_writes"),
            per_txn(&r, "insert", "flushes"),
            per_txn(&r, "insert", "tps")
        );
        // WAL adds its checkpoint's syncs once in 200 transactions at most.
        assert!((s - syncs).abs() < 0.05, "{mode}: {s} syncs per insert");
        assert_eq!(r["sqlite"]["failed_calls"], 0, "{mode}");
    }
}

#[test]
fn journal_files_see_the_calls_of_their_mode() {
    let r = run(
        "sqlite-files-delete",
        INSERTS,
        &["sqlite.journal_mode=delete"],
    );
    let f = &r["sqlite"]["files"];
    // DELETE creates and unlinks the journal every transaction and syncs
    // its directory once after the first journal sync.
    assert_eq!(f["journal"]["opens"], 200);
    assert_eq!(f["journal"]["unlinks"], 200);
    assert_eq!(f["dir"]["syncs"], 200);
    assert_eq!(f["wal"]["calls"], 0);
    let w = run("sqlite-files-wal", INSERTS, &["sqlite.journal_mode=wal"]);
    let f = &w["sqlite"]["files"];
    assert_eq!(f["journal"]["calls"], 0);
    // Two frames per commit (AUTOINCREMENT's sequence leaf and the table
    // leaf; page 1 is not rewritten per WAL commit) of two writes each
    // (frame header, page), plus split pages and the WAL header.
    let writes = f["wal"]["writes"].as_u64().unwrap();
    assert!((800..=860).contains(&writes), "{writes} WAL writes");
    // A table leaf written once per commit is cheaper than the journal.
    assert!(per_txn(&w, "insert", "tps") > 2.0 * per_txn(&r, "insert", "tps"));
}

#[test]
fn updates_and_deletes_scan_the_table_from_the_page_cache() {
    let job = r#"
[[sqlite_jobs]]
name = "upd"
op = "update"
transactions = 100
rows = 400
[[sqlite_jobs]]
name = "del"
op = "delete"
transactions = 100
rows = 400
start_ms = 60000
"#;
    let r = run("sqlite-scan", job, &[]);
    let db = &r["sqlite"]["files"]["db"];
    // Every statement reads page 1 and the 11 leaves + root of a
    // 400-row table: served from the page cache, not the device.
    let reads = db["reads"].as_u64().unwrap();
    assert!(reads >= 200 * 12, "{reads} db page reads");
    assert!(per_txn(&r, "update", "transactions") == 100.0);
    assert!(per_txn(&r, "delete", "block_writes") > 0.0);
}

#[test]
fn same_inputs_give_byte_identical_reports() {
    let tmp = scratch("sqlite-determinism");
    let sc = tmp.join("scenario.toml");
    std::fs::write(&sc, scenario(INSERTS)).unwrap();
    let a = tmp.join("a.json");
    let b = tmp.join("b.json");
    for out in [&a, &b] {
        simctl_ok(&[
            "run",
            sc.to_str().unwrap(),
            "--set",
            "sqlite.journal_mode=persist",
            "--json",
            out.to_str().unwrap(),
            "--quiet",
        ]);
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn bad_sqlite_settings_are_located_errors() {
    let tmp = scratch("sqlite-errors");
    let sc = tmp.join("scenario.toml");
    std::fs::write(&sc, scenario(INSERTS)).unwrap();
    let path = sc.to_str().unwrap();
    let e = simctl_err(&["run", path, "--set", "sqlite.journal_mode=rollback"]);
    assert!(e.contains("journal_mode") && e.contains("truncate"), "{e}");
    let e = simctl_err(&["run", path, "--set", "sqlite.synchronous=extra"]);
    assert!(e.contains("synchronous") && e.contains("normal"), "{e}");
    let e = simctl_err(&["run", path, "--set", "sqlite.pagesize=4096"]);
    assert!(e.contains("pagesize") && e.contains("page_size"), "{e}");
    let e = simctl_err(&["run", path, "--set", "sqlite.page_size=3000"]);
    assert!(
        e.contains("sqlite.page_size = 3000") && e.contains("power of two"),
        "{e}"
    );
    let e = simctl_err(&["run", path, "--set", "sqlite.journal_size_limit=-5"]);
    assert!(e.contains("journal_size_limit"), "{e}");
    // A job's row that would need overflow pages names the job and key.
    std::fs::write(
        &sc,
        scenario("[[sqlite_jobs]]\nname = \"big\"\nop = \"insert\"\ntransactions = 1\nrow_bytes = 9000\n"),
    )
    .unwrap();
    let e = simctl_err(&["run", path]);
    assert!(
        e.contains("sqlite job `big`") && e.contains("row_bytes = 9000"),
        "{e}"
    );
    // SQLite needs a file system.
    std::fs::write(
        &sc,
        "[[sqlite_jobs]]\nname = \"x\"\nop = \"insert\"\ntransactions = 1\n",
    )
    .unwrap();
    let e = simctl_err(&["run", path]);
    assert!(e.contains("[fs]"), "{e}");
    std::fs::write(
        &sc,
        scenario("[[sqlite_jobs]]\nname = \"x\"\nop = \"insrt\"\ntransactions = 1\n"),
    )
    .unwrap();
    let e = simctl_err(&["run", path]);
    assert!(e.contains("insrt") && e.contains("insert"), "{e}");
}
