//! Power loss end to end through `simctl crash` and `run --power-cut`
//! (issue 29): acknowledged writes survive with barriers on an honest
//! cache, are lost with barrier=0 on a volatile cache, MLC paired pages
//! corrupt old acknowledged data only when an upper-page program is cut;
//! the report is deterministic, edge cuts are handled, bad options are
//! located errors.

use crate::common::*;
use serde_json::Value;

const W: &str = "crates/simctl/tests/crash/fsync-heavy.toml";
/// A 1 GiB-raw card keeps each cut's replay small in debug builds.
const SMALL: &str = "device.nand.blocks_per_plane=128";

fn crash(extra: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("crash.json");
    let js = json.to_str().unwrap().to_string();
    let mut a = vec!["crash", W, "--set", SMALL, "-q", "--json", &js];
    a.extend_from_slice(extra);
    simctl_ok(&a);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn n(v: &Value, k: &str) -> u64 {
    v["crash"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("crash.{k} in {v}"))
}

#[test]
fn barriers_on_an_honest_cache_lose_no_acknowledged_write() {
    let v = crash(&[
        "--cuts",
        "100",
        "--set",
        "device.power_loss.paired_pages=none",
    ]);
    assert_eq!(n(&v, "cuts"), 100);
    assert_eq!(n(&v, "acked_writes_lost"), 0, "{}", v["crash"]);
    assert_eq!(n(&v, "torn_pages") + n(&v, "flying_writes"), 0);
    // The cuts did land on work: acknowledged pages were checked.
    let acked: u64 = v["crash"]["per_cut"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["acked_pages"].as_u64().unwrap())
        .sum();
    assert!(acked > 0);
    for k in ["mean", "p99"] {
        assert!(v["crash"]["recovery_ms"][k].as_f64().unwrap() > 0.0);
    }
    for k in ["committed_lost", "uncommitted_visible", "corrupt_pages"] {
        assert_eq!(v["crash"]["sqlite"][k], 0);
    }
    assert_eq!(n(&v, "fs_inconsistencies"), 0);
    // ext4 replayed committed transactions at mount and lost none.
    assert!(v["crash"]["fs"]["transactions_replayed"].as_u64().unwrap() > 0);
    assert_eq!(v["crash"]["fs"]["committed_transactions_lost"], 0);
}

#[test]
fn every_ext4_data_mode_recovers_consistently_with_barriers() {
    for mode in ["ordered", "writeback", "journal"] {
        let set = format!("fs.data={mode}");
        let v = crash(&[
            "--cuts",
            "12",
            "--set",
            "device.power_loss.paired_pages=none",
            "--set",
            &set,
        ]);
        assert_eq!(n(&v, "fs_inconsistencies"), 0, "{mode}: {}", v["crash"]);
        assert_eq!(v["crash"]["fs"]["committed_transactions_lost"], 0, "{mode}");
    }
    // Journal off: nothing to replay.
    let v = crash(&[
        "--cuts",
        "4",
        "--set",
        "device.power_loss.paired_pages=none",
        "--set",
        "fs.journal=off",
    ]);
    assert_eq!(v["crash"]["fs"]["transactions_replayed"], 0);
}

#[test]
fn barrier_off_on_a_volatile_cache_loses_acknowledged_writes() {
    let v = crash(&[
        "--cuts",
        "40",
        "--set",
        "device.power_loss.paired_pages=none",
        "--set",
        "fs.barrier=0",
    ]);
    assert!(n(&v, "acked_writes_lost") > 0, "{}", v["crash"]);
    assert!(n(&v, "cuts_losing_acked_writes") > 0);
    assert!(n(&v, "cuts_losing_acked_writes") <= 40);
    // A power-protected cache keeps them.
    let kept = crash(&[
        "--cuts",
        "40",
        "--set",
        "device.power_loss.paired_pages=none",
        "--set",
        "fs.barrier=0",
        "--set",
        "device.power_loss.cache_lost=false",
    ]);
    assert_eq!(n(&kept, "acked_writes_lost"), 0, "{}", kept["crash"]);
}

#[test]
fn paired_pages_corrupt_acknowledged_data_only_on_msb_program_cuts() {
    let v = crash(&["--cuts", "60"]);
    assert!(n(&v, "paired_page_victims") > 0, "{}", v["crash"]);
    assert!(n(&v, "acked_lost_to_paired_pages") > 0);
    for c in v["crash"]["per_cut"].as_array().unwrap() {
        if c["paired_page_victims"].as_u64().unwrap() > 0 {
            assert_eq!(c["msb_program_cut"], true, "{c}");
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_report_and_another_seed_other_cuts() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |seed: &str, name: &str| {
        let p = tmp.path().join(name);
        let ps = p.to_str().unwrap().to_string();
        simctl_ok(&[
            "crash", W, "--set", SMALL, "--cuts", "8", "--seed", seed, "-q", "--json", &ps,
        ]);
        std::fs::read(&p).unwrap()
    };
    let a = run("7", "a.json");
    assert_eq!(a, run("7", "b.json"));
    assert_ne!(a, run("8", "c.json"));
}

#[test]
fn cuts_at_zero_after_the_end_and_at_an_event_are_handled() {
    for at in [
        &["--at", "0"][..],
        &["--at", "100s"][..],
        &["--at-event", "0"][..],
        &["--at-event", "500"][..],
    ] {
        let v = crash(at);
        assert_eq!(n(&v, "cuts"), 1, "{at:?}");
        assert_eq!(n(&v, "torn_pages"), 0, "{at:?}");
    }
    // After the end the card is idle and every acknowledged write is on
    // NAND.
    let v = crash(&[
        "--at",
        "100s",
        "--set",
        "device.power_loss.paired_pages=none",
    ]);
    assert_eq!(n(&v, "acked_writes_lost"), 0);
    assert_eq!(v["crash"]["per_cut"][0]["at_ns"], 100_000_000_000u64);
}

#[test]
fn run_power_cut_adds_a_crash_section() {
    let tmp = tempfile::tempdir().unwrap();
    let v = report(
        &["run", W, "--set", SMALL, "--power-cut", "300ms"],
        tmp.path(),
    );
    assert_eq!(v["crash"]["cuts"], 1);
    assert_eq!(v["crash"]["per_cut"][0]["at_ns"], 300_000_000u64);
    // Without it the report has no crash section.
    let plain = report(&["run", W, "--set", SMALL], tmp.path());
    assert!(plain.get("crash").is_none());
}

#[test]
fn bad_crash_options_are_located_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["crash", W, "--at", "5"], "--at 5"),
        (&["crash", W, "--at=-3ms"], "--at -3ms"),
        (&["crash", W, "--cuts", "0"], "--cuts"),
        (&["crash", W, "--at", "1ms", "--at-event", "3"], "--at"),
        (&["run", W, "--power-cut", "soon"], "--power-cut soon"),
        (
            &["crash", W, "--set", "device.power_loss.capacitor_us=-1"],
            "capacitor_us",
        ),
        (
            &["crash", W, "--set", "device.power_loss.torn_program=maybe"],
            "torn_program",
        ),
        (&["crash", W, "--csv", "x.csv"], "--csv"),
    ];
    for (args, needle) in cases {
        let o = simctl(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

const SQL: &str = "crates/simctl/tests/crash/sqlite.toml";

fn sqlite_crash(cuts: &str, sets: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("crash.json");
    let js = json.to_str().unwrap().to_string();
    let mut a = vec![
        "crash",
        SQL,
        "--set",
        SMALL,
        "--set",
        "device.power_loss.paired_pages=none",
        "--cuts",
        cuts,
        "-q",
        "--json",
        &js,
    ];
    for s in sets {
        a.extend(["--set", s]);
    }
    simctl_ok(&a);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn sq(v: &Value, k: &str) -> u64 {
    v["crash"]["sqlite"][k].as_u64().unwrap()
}

#[test]
fn sqlite_rollback_journals_and_wal_full_recover_consistently_with_barriers() {
    for mode in ["delete", "truncate", "persist", "wal"] {
        let m = format!("sqlite.journal_mode={mode}");
        let v = sqlite_crash("20", &[&m, "sqlite.synchronous=full"]);
        assert_eq!(n(&v, "acked_writes_lost"), 0, "{mode}: {}", v["crash"]);
        for k in ["committed_lost", "uncommitted_visible", "corrupt_pages"] {
            assert_eq!(sq(&v, k), 0, "{mode} {k}: {}", v["crash"]["sqlite"]);
        }
        // Recovery did work: a hot journal rolled back or WAL frames read.
        let work = sq(&v, "journals_rolled_back") + sq(&v, "wal_frames_recovered");
        assert!(work > 0, "{mode}");
    }
}

#[test]
fn journal_off_is_unsafe_on_a_plain_part_and_safe_on_the_atomic_write_ftl() {
    let plain = sqlite_crash("30", &["sqlite.journal_mode=off"]);
    let bad = sq(&plain, "uncommitted_visible") + sq(&plain, "corrupt_pages");
    assert!(bad > 0, "{}", plain["crash"]["sqlite"]);
    let x = sqlite_crash(
        "30",
        &["sqlite.journal_mode=off", "device.ftl.atomic_write=true"],
    );
    for k in ["committed_lost", "uncommitted_visible", "corrupt_pages"] {
        assert_eq!(sq(&x, k), 0, "{k}: {}", x["crash"]["sqlite"]);
    }
    // Faster than a rollback journal on the same part.
    let delete = sqlite_crash("1", &["sqlite.journal_mode=delete"]);
    let tps = |v: &Value| v["speed"]["sqlite_tps"].as_f64().unwrap();
    assert!(
        tps(&x) > 1.5 * tps(&delete),
        "{} vs {}",
        tps(&x),
        tps(&delete)
    );
    // At OFF's speed: the commit record replaces the plain part's map-page
    // write at FLUSH_CACHE instead of adding a program to every commit.
    assert!(
        tps(&x) > 0.95 * tps(&plain),
        "atomic-write OFF {} vs plain OFF {} TPS",
        tps(&x),
        tps(&plain)
    );
}

#[test]
fn wal_normal_may_lose_commits_but_never_corrupts() {
    let v = sqlite_crash(
        "20",
        &["sqlite.journal_mode=wal", "sqlite.synchronous=normal"],
    );
    assert_eq!(sq(&v, "corrupt_pages"), 0, "{}", v["crash"]["sqlite"]);
    assert_eq!(sq(&v, "uncommitted_visible"), 0);
}

#[test]
fn sqlite_crash_reports_are_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str| {
        let p = tmp.path().join(name);
        let ps = p.to_str().unwrap().to_string();
        simctl_ok(&[
            "crash",
            SQL,
            "--set",
            SMALL,
            "--cuts",
            "5",
            "--set",
            "sqlite.journal_mode=off",
            "-q",
            "--json",
            &ps,
        ]);
        std::fs::read(&p).unwrap()
    };
    assert_eq!(run("a.json"), run("b.json"));
}

#[test]
fn atomic_write_on_a_hybrid_mapping_is_a_located_error() {
    let o = simctl(&[
        "crash",
        SQL,
        "--set",
        "device.ftl.mapping=hybrid",
        "--set",
        "device.ftl.atomic_write=true",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("atomic_write"), "{err}");
}

/// The bundled crash scenario (configs/scenarios/sqlite-crash.toml: SQLite
/// on ext4, barriers on, an honest volatile cache, paired pages
/// protected): 50 cuts in each rollback mode and WAL with synchronous FULL
/// break no promise (the CI-sized counterpart of the 1,000-cut run in the
/// book's Power loss chapter).
#[test]
fn the_bundled_sqlite_crash_scenario_keeps_every_promise_with_barriers() {
    for mode in ["delete", "truncate", "persist", "wal"] {
        let tmp = tempfile::tempdir().unwrap();
        let json = tmp.path().join("crash.json");
        let js = json.to_str().unwrap().to_string();
        let m = format!("sqlite.journal_mode={mode}");
        simctl_ok(&[
            "crash",
            "configs/scenarios/sqlite-crash.toml",
            "--cuts",
            "50",
            "--set",
            &m,
            "--set",
            "sqlite.synchronous=full",
            "-q",
            "--json",
            &js,
        ]);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(n(&v, "cuts"), 50);
        assert_eq!(n(&v, "cuts_violating"), 0, "{mode}: {}", v["crash"]);
        assert_eq!(n(&v, "acked_writes_lost"), 0, "{mode}");
        assert_eq!(n(&v, "fs_inconsistencies"), 0, "{mode}");
        // The cuts landed on work: ext4 replayed transactions.
        assert!(v["crash"]["fs"]["transactions_replayed"].as_u64().unwrap() > 0);
    }
}
