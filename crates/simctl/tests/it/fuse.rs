//! FUSE over ext4 (Android's sdcard daemon) through the `simctl` binary:
//! the daemon's threads serialise the readers before the block layer, the
//! kernel splits reads at `max_read` and writes at `max_write`, and bad
//! `[fs]` settings give located errors.

use crate::common::*;
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

// ---- namespace calls through the daemon ---------------------------------

/// `fs.fuse.requests` as (opcode, count) of the non-zero ones, in the
/// report's order.
fn opcodes(r: &Value) -> Vec<(String, u64)> {
    r["fs"]["fuse"]["requests"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// `crates/simctl/tests/fuse/create-unlink.toml` with only its first `calls` calls (and
/// the file system `fs_type`).
fn create_unlink(calls: usize, fs_type: &str) -> String {
    let text = std::fs::read_to_string(root().join("crates/simctl/tests/fuse/create-unlink.toml"))
        .unwrap();
    let (head, rest) = text.split_once("calls = [\n").unwrap();
    let (list, tail) = rest.split_once("]\n").unwrap();
    let kept: Vec<&str> = list.lines().take(calls).collect();
    let head = head.replace("type = \"fuse\"", &format!("type = \"{fs_type}\""));
    let head = if fs_type == "fuse" {
        head
    } else {
        head.replace("daemon_threads = 1\n", "")
    };
    format!("{head}calls = [\n{}\n]\n{tail}", kept.join("\n"))
}

#[test]
fn create_write_fsync_close_unlink_send_the_kernels_requests_in_order() {
    // The opcodes each call adds, in the order the calls run (a fresh
    // mount: the root's attributes start expired, no dentry is cached).
    let steps: [&[(&str, u64)]; 5] = [
        // creat: GETATTR of / (MAY_EXEC), LOOKUP sdcard, LOOKUP photo.jpg
        // (ENOENT), CREATE (sdcard: ENOSYS), MKNOD, OPEN.
        &[
            ("lookup", 2),
            ("getattr", 1),
            ("create", 1),
            ("mknod", 1),
            ("open", 1),
        ],
        &[("write", 1)],
        &[("fsync", 1)],
        &[("flush", 1), ("release", 1)],
        // unlink: the mknod invalidated /sdcard's attributes: GETATTR,
        // then the cached dentry of photo.jpg, then UNLINK.
        &[("getattr", 1), ("unlink", 1)],
    ];
    let mut want: Vec<(String, u64)> = Vec::new();
    for (n, step) in steps.iter().enumerate() {
        for (k, c) in *step {
            match want.iter_mut().find(|(w, _)| w == k) {
                Some(e) => e.1 += c,
                None => want.push((k.to_string(), *c)),
            }
        }
        let (r, _) = run(
            &format!("fuse-ns-steps-{n}"),
            &create_unlink(n + 1, "fuse"),
            &[],
        );
        // The report's keys come in name order.
        want.sort();
        assert_eq!(opcodes(&r), want, "after {} calls", n + 1);
        assert_eq!(r["calls"]["failed"], Value::Null, "{}", r["calls"]);
    }
}

#[test]
fn the_same_calls_cost_more_host_time_on_fuse_than_on_ext4() {
    let (fuse, _) = run("fuse-ns-cost-fuse", &create_unlink(5, "fuse"), &[]);
    let (ext4, _) = run("fuse-ns-cost-ext4", &create_unlink(5, "ext4"), &[]);
    let host = |r: &Value| {
        r["breakdown_us"]["not_device"].as_f64().unwrap() * r["requests"]["count"].as_f64().unwrap()
    };
    assert_eq!(fuse["requests"]["count"], 5);
    assert_eq!(ext4["requests"]["count"], 5);
    assert!(
        host(&fuse) > 2.0 * host(&ext4),
        "FUSE {} µs of host software, ext4 {} µs",
        host(&fuse),
        host(&ext4)
    );
    assert!(fuse["fs"]["fuse"]["daemon_busy_us"].as_f64().unwrap() > 0.0);
    assert!(ext4["fs"]["fuse"].is_null());
}

/// `threads` scripts, each creating its own new file, through a one-thread
/// daemon.
fn creators(threads: usize) -> String {
    let mut s = String::from(
        "name = \"fuse-creators\"\nseed = 1\n[fs]\ntype = \"fuse\"\ndaemon_threads = 1\npartition_size_mib = 512\n[precondition]\nfill_fraction = 0.0\n[[files]]\nname = \"/sdcard/old\"\nsize_mib = 1\n",
    );
    for i in 0..threads {
        s += &format!(
            "[[scripts]]\nname = \"app{i}\"\ncalls = [\"open /sdcard/new{i} O_CREAT|O_EXCL|O_WRONLY\"]\n"
        );
    }
    s
}

#[test]
fn a_one_thread_daemon_serialises_sixteen_threads_creating_their_own_files() {
    let mut waits = Vec::new();
    for threads in [1, 4, 16] {
        let (r, _) = run(&format!("fuse-creators-{threads}"), &creators(threads), &[]);
        let f = &r["fs"]["fuse"];
        assert_eq!(f["requests"]["mknod"], threads, "{f}");
        assert_eq!(f["requests"]["open"], threads, "{f}");
        // One CREATE per mount at most: the others see no_create (the
        // first thread's ENOSYS) or sent theirs before it came back.
        let create = f["requests"]["create"].as_u64().unwrap();
        assert!((1..=threads as u64).contains(&create), "{f}");
        assert_eq!(r["requests"]["count"], threads, "{}", r["requests"]);
        assert!(f["max_pending"].as_u64().unwrap() < threads as u64 || threads == 1);
        waits.push((
            f["queue_wait_us"]["mean"].as_f64().unwrap(),
            r["latency_us"]["max"].as_f64().unwrap(),
        ));
    }
    // Queueing for the daemon grows with the threads, and so does the
    // slowest open.
    assert!(
        waits[0].0 < waits[1].0 && waits[1].0 < waits[2].0,
        "{waits:?}"
    );
    assert!(
        waits[0].1 < waits[1].1 && waits[1].1 < waits[2].1,
        "{waits:?}"
    );
    let (r, _) = run("fuse-creators-16b", &creators(16), &[]);
    assert!(
        r["fs"]["fuse"]["max_pending"].as_u64().unwrap() >= 8,
        "{}",
        r["fs"]["fuse"]
    );
}

#[test]
fn namespace_errors_come_back_with_the_lower_calls_errno() {
    // The hostile-input list of failing calls, on FUSE: the same errnos
    // as on ext4 (from the daemon's reply or the kernel's own checks).
    let calls = [
        "open /missing/x",           // ENOENT: LOOKUP
        "write 4096",                // EBADF
        "mkdir /d",                  // ok
        "open /d O_WRONLY",          // EISDIR
        "mkdir /d",                  // EEXIST
        "mkdir /no/such",            // ENOENT
        "unlink /nope",              // ENOENT
        "creat /f",                  // ok
        "ftruncate 100000000000000", // EFBIG
        "close",                     // ok
        "open /f/x",                 // ENOTDIR
        "rename /nope /q",           // ENOENT
        "unlink /d",                 // EISDIR
        "rmdir /f",                  // ENOTDIR
        "mkdir /d/e",                // ok
        "rmdir /d",                  // ENOTEMPTY: the daemon's rmdir
        "open /f O_CREAT|O_EXCL",    // EEXIST
        "stat /nope",                // ENOENT
        "stat /f",                   // ok
    ];
    let body: Vec<String> = calls.iter().map(|c| format!("  \"{c}\",")).collect();
    let failed = |fs_type: &str| {
        let toml = format!(
            "name = \"t\"\nseed = 1\n[precondition]\nfill_fraction = 0.0\n[fs]\ntype = \"{fs_type}\"\npartition_size_mib = 512\n[[scripts]]\nname = \"app\"\ncalls = [\n{}\n]\n",
            body.join("\n")
        );
        let (r, _) = run(&format!("fuse-ns-errno-{fs_type}"), &toml, &[]);
        (
            r["calls"]["failed"].clone(),
            r["requests"]["count"].clone(),
            r,
        )
    };
    let (on_fuse, n_fuse, r) = failed("fuse");
    let (on_ext4, n_ext4, _) = failed("ext4");
    assert_eq!(on_fuse, on_ext4);
    assert_eq!(n_fuse, n_ext4);
    assert_eq!(on_fuse["ENOTEMPTY"], 1, "{on_fuse}");
    assert_eq!(on_fuse["EEXIST"], 2, "{on_fuse}");
    let f = &r["fs"]["fuse"]["requests"];
    // The daemon's rmdir of /d answered ENOTEMPTY; the VFS refused
    // `unlink /d` and `rmdir /f` before any request, and `rename /nope`
    // ended at its LOOKUP.
    assert_eq!(f["rmdir"], 1, "{f}");
    assert_eq!(f["unlink"], 0, "{f}");
    assert_eq!(f["rename"], 0, "{f}");
    assert_eq!(f["mkdir"], 2, "{f}");
}

#[test]
fn enospc_from_the_daemons_mknod_comes_back_to_the_creator() {
    // 16 inodes (one inode-table block) of which the reserved ones and
    // the root leave a few: the daemon's mknod fails with ENOSPC, and so
    // does the app's creat, as on ext4.
    let calls: Vec<String> = (0..16)
        .map(|i| format!("\"creat /f{i}\", \"close\""))
        .collect();
    let failed = |fs_type: &str| {
        let toml = format!(
            "name = \"t\"\nseed = 1\n[precondition]\nfill_fraction = 0.0\n[fs]\ntype = \"{fs_type}\"\npartition_size_mib = 8\nbytes_per_inode = 67108864\n[[scripts]]\nname = \"app\"\ncalls = [{}]\n",
            calls.join(", ")
        );
        run(&format!("fuse-enospc-{fs_type}"), &toml, &[]).0
    };
    let (fuse, ext4) = (failed("fuse"), failed("ext4"));
    assert_eq!(fuse["calls"], ext4["calls"]);
    let enospc = fuse["calls"]["failed"]["ENOSPC"].as_u64().unwrap();
    assert!(enospc > 0, "{}", fuse["calls"]);
    let f = &fuse["fs"]["fuse"]["requests"];
    assert_eq!(f["mknod"], 16, "{f}");
    assert_eq!(f["open"].as_u64().unwrap(), 16 - enospc, "{f}");
}

#[test]
fn names_and_attributes_expire_after_ten_seconds() {
    // sdcard replies entry_valid = attr_valid = 10 s: a second open within
    // them sends only OPEN; after an 11 s sleep the walk looks every name
    // up again and refreshes the attributes.
    let script = |sleep_us: u64| {
        format!(
            "name = \"t\"\nseed = 1\n[precondition]\nfill_fraction = 0.0\n[fs]\ntype = \"fuse\"\npartition_size_mib = 512\n[[files]]\nname = \"/sdcard/a/f\"\nsize_mib = 1\n[[scripts]]\nname = \"app\"\ncalls = [\"open /sdcard/a/f\", \"close\", \"sleep {sleep_us}\", \"open /sdcard/a/f\", \"close\"]\n"
        )
    };
    let (warm, _) = run("fuse-ns-warm", &script(1_000), &[]);
    let (cold, _) = run("fuse-ns-cold", &script(11_000_000), &[]);
    let req = |r: &Value, k: &str| r["fs"]["fuse"]["requests"][k].as_u64().unwrap();
    // First open: GETATTR of /, /sdcard and /sdcard/a (their permission
    // checks), LOOKUP of sdcard, a and f, GETATTR of f (may_open) — f's
    // lookup reply made it valid, so none — then OPEN.
    assert_eq!(
        (req(&warm, "lookup"), req(&warm, "getattr")),
        (3, 1),
        "{}",
        warm["fs"]["fuse"]
    );
    assert_eq!(
        (req(&cold, "lookup"), req(&cold, "getattr")),
        (6, 2),
        "{}",
        cold["fs"]["fuse"]
    );
    assert_eq!(req(&warm, "open"), 2);
    assert_eq!(req(&cold, "open"), 2);
}

#[test]
fn namespace_runs_are_deterministic() {
    let toml = creators(16);
    let (a, la) = run("fuse-ns-det-a", &toml, &[]);
    let (b, lb) = run("fuse-ns-det-b", &toml, &[]);
    assert_eq!(a.to_string(), b.to_string());
    assert_eq!(la, lb);
}
