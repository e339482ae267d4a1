//! FUSE over ext4 (Android's sdcard daemon) through the `simctl` binary:
//! the daemon's threads serialise the readers before the block layer, the
//! kernel splits reads at `max_read` and writes at `max_write`, and bad
//! `[fs]` settings give located errors.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A scenario on a FUSE (or other `fs_type`) mount of a 1 GiB file with
/// one job `job` (TOML body of `[[jobs]]` after `file`), `fs_extra` in
/// `[fs]`.
fn scenario(fs_type: &str, fs_extra: &str, job: &str) -> String {
    format!(
        r#"name = "fuse-test"
seed = 1
[device]
profile = "{root}/configs/devices/generic-emmc.toml"
[scheduler]
name = "noop"
[precondition]
fill_fraction = 0.0
[fs]
type = "{fs_type}"
atime = "noatime"
partition_size_mib = 2048
{fs_extra}
[[files]]
name = "sdcard/bench"
size_mib = 1024
[[jobs]]
name = "app"
file = "sdcard/bench"
{job}
"#,
        root = root().display()
    )
}

/// 16 app threads of 100 random buffered 4 KiB reads each.
const READERS16: &str =
    "op = \"read\"\npattern = \"random\"\nrequest_bytes = 4096\nthreads = 16\nrequests = 100\n";

fn write_scenario(dir: &Path, toml: &str) -> PathBuf {
    let sc = dir.join("scenario.toml");
    std::fs::write(&sc, toml).unwrap();
    sc
}

/// Runs `toml` with `extra` arguments: the report and the request log's
/// rows as (submit ns, complete ns, op).
fn run(name: &str, toml: &str, extra: &[&str]) -> (Value, Vec<(u64, u64, String)>) {
    let tmp = scratch(name);
    let sc = write_scenario(&tmp, toml);
    let log = tmp.join("log.csv");
    let mut args = vec!["run", sc.to_str().unwrap(), "--log", log.to_str().unwrap()];
    args.extend_from_slice(extra);
    let r = report(&args, &tmp);
    let rows = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[3].parse().unwrap(),
                f[6].to_string(),
            )
        })
        .collect();
    (r, rows)
}

/// The most read requests in the block layer (submitted, not completed)
/// at any instant.
fn max_reads_in_flight(rows: &[(u64, u64, String)]) -> u32 {
    let mut ev: Vec<(u64, i32)> = Vec::new();
    for (s, c, _) in rows.iter().filter(|r| r.2 == "R") {
        ev.push((*s, 1));
        ev.push((*c, -1));
    }
    // A completion at the same instant as a submission ends first.
    ev.sort();
    let (mut n, mut max) = (0i32, 0i32);
    for (_, d) in ev {
        n += d;
        max = max.max(n);
    }
    max as u32
}

// The lower device's read-ahead is off (`read_ahead_kb = 0`) so each
// daemon pread waits for all the I/O it starts: read-ahead a pread
// leaves in flight would be the daemon's own speculative I/O, not a
// reader's request.
const NO_LOWER_RA: &[&str] = &["--set", "queue.read_ahead_kb=0"];

#[test]
fn one_daemon_thread_lets_one_reader_request_into_the_block_layer_at_a_time() {
    let toml = scenario("fuse", "daemon_threads = 1", READERS16);
    let (r, rows) = run("fuse-1thread", &toml, NO_LOWER_RA);
    assert_eq!(max_reads_in_flight(&rows), 1, "one daemon thread");
    let fuse = &r["fs"]["fuse"];
    assert_eq!(fuse["daemon_threads"], 1);
    assert_eq!(fuse["lower"], "ext4");
    // 1,600 reads, a few served from the upper page cache.
    let reads = fuse["requests"]["read"].as_u64().unwrap();
    assert!((1500..=1600).contains(&reads), "{fuse}");
    // The other 15 readers queue behind the one being served.
    assert!(fuse["queue_wait_us"]["mean"].as_f64().unwrap() > 0.0);
    assert!(fuse["max_pending"].as_u64().unwrap() >= 10, "{fuse}");
    // ext4's own keys are still there, at the top of `fs`.
    assert!(r["fs"]["journal_blocks"].as_u64().is_some(), "{}", r["fs"]);
}

#[test]
fn two_daemon_threads_let_two_in_and_ext4_alone_lets_all_sixteen() {
    let toml = scenario("fuse", "daemon_threads = 2", READERS16);
    let (two, rows) = run("fuse-2threads", &toml, NO_LOWER_RA);
    assert_eq!(max_reads_in_flight(&rows), 2, "two daemon threads");
    let (one, _) = run(
        "fuse-1thread-cmp",
        &scenario("fuse", "daemon_threads = 1", READERS16),
        NO_LOWER_RA,
    );
    let iops = |r: &Value| r["throughput"]["iops"].as_f64().unwrap();
    assert!(
        iops(&two) > iops(&one),
        "a second daemon thread overlaps I/O"
    );
    // Without FUSE the 16 readers reach the block layer together.
    let (_, rows) = run(
        "fuse-ext4-cmp",
        &scenario("ext4", "", READERS16),
        NO_LOWER_RA,
    );
    assert!(max_reads_in_flight(&rows) > 2);
}

#[test]
fn the_daemon_thread_count_follows_the_android_release() {
    // Android 4.1's sdcard is single-threaded; 4.2 shipped "Make sdcard
    // daemon multi-threaded" with DEFAULT_NUM_THREADS 2.
    let job = "op = \"read\"\npattern = \"random\"\nrequest_bytes = 4096\nrequests = 10\n";
    for (version, threads) in [("4.1", 1), ("4.2", 2)] {
        let toml = format!(
            "android_version = \"{version}\"\n{}",
            scenario("fuse", "", job)
        );
        let (r, _) = run(&format!("fuse-android-{version}"), &toml, &[]);
        assert_eq!(
            r["fs"]["fuse"]["daemon_threads"], threads,
            "Android {version}"
        );
    }
}

#[test]
fn reads_are_split_at_max_read_and_writes_at_max_write() {
    // Sequential 1 MiB reads: the FUSE mount's 128 KiB read-ahead fills
    // the upper cache in FUSE_READ requests of at most max_read.
    let job = "op = \"read\"\npattern = \"sequential\"\nrequest_bytes = 1048576\nrequests = 8\n";
    let (r, _) = run(
        "fuse-max-read",
        &scenario("fuse", "max_read_kib = 64", job),
        &[],
    );
    let f = &r["fs"]["fuse"];
    let reads = f["requests"]["read"].as_u64().unwrap();
    let bytes = f["bytes_copied"].as_u64().unwrap();
    // The 8 MiB read, and at most one read-ahead window (128 KiB) past it.
    assert!((8 << 20..=(8 << 20) + (128 << 10)).contains(&bytes), "{f}");
    assert!(reads >= (8 << 20) / (64 << 10), "{f}");
    assert!(bytes / reads <= 64 << 10, "{f}");
    // Writes of 512 KiB: sdcard's max_write is 256 KiB, but a 3.x kernel
    // sends at most FUSE_MAX_PAGES_PER_REQ (32) pages per request.
    let job = "op = \"write\"\npattern = \"sequential\"\nrequest_bytes = 524288\nrequests = 4\nfsync_every = 4\n";
    let (r, _) = run("fuse-max-write", &scenario("fuse", "", job), &[]);
    let f = &r["fs"]["fuse"];
    assert_eq!(f["max_write_kib"], 128);
    assert_eq!(f["requests"]["write"], 16, "{f}");
    assert_eq!(f["requests"]["fsync"], 1, "{f}");
    assert_eq!(f["bytes_copied"], 2 << 20, "{f}");
}

#[test]
fn fuse_runs_are_deterministic() {
    let toml = scenario("fuse", "daemon_threads = 2", READERS16);
    let (a, la) = run("fuse-det-a", &toml, &[]);
    let (b, lb) = run("fuse-det-b", &toml, &[]);
    assert_eq!(a["fs"], b["fs"]);
    assert_eq!(a["throughput"], b["throughput"]);
    assert_eq!(a["breakdown_us"], b["breakdown_us"]);
    assert_eq!(la, lb);
}

#[test]
fn bad_fuse_settings_are_located_errors() {
    let tmp = scratch("fuse-errors");
    let cases = [
        ("daemon_threads = 0", "fs.daemon_threads = 0"),
        ("max_read_kib = 6", "fs.max_read_kib = 6"),
        ("max_write_kib = 0", "fs.max_write_kib = 0"),
        ("lower = \"fuse\"", "fs.lower"),
        ("lower = \"ntfs\"", "lower"),
    ];
    for (extra, expect) in cases {
        let sc = write_scenario(&tmp, &scenario("fuse", extra, READERS16));
        let err = simctl_err(&["run", sc.to_str().unwrap()]);
        assert!(err.contains(expect), "{extra}: {err}");
        assert!(err.contains("scenario.toml"), "{extra}: not located: {err}");
    }
    // A FUSE key on ext4.
    let sc = write_scenario(&tmp, &scenario("ext4", "daemon_threads = 1", READERS16));
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(
        err.contains("fs.daemon_threads") && err.contains("fuse"),
        "{err}"
    );
    // O_DIRECT on FUSE: EINVAL in Linux 3.x.
    let job = format!("{READERS16}direct = true\n");
    let sc = write_scenario(&tmp, &scenario("fuse", "", &job));
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(err.contains("O_DIRECT") && err.contains("FUSE"), "{err}");
}
