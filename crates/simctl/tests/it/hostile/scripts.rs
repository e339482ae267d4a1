//! Scripted threads against Linux semantics (issue 24): failed system
//! calls return the errno Linux would and are counted apart, ENOSPC gives
//! a short write of what fits, `--strict` / `on_error = "stop"` end the run
//! at the first failure, and every count, size and time from input is
//! checked against a stated limit before anything is allocated.

use crate::common::{report, scratch, simctl, simctl_err};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A 512 MiB ext4 on an empty device.
const FS: &str = "seed = 1\n[precondition]\nfill_fraction = 0.0\n[fs]\ntype = \"ext4\"\npartition_size_mib = 512\n";

/// Writes scenario `text` as `dir/name.toml`.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// A scenario with [fs] (unless `fs` is empty) and one script of `calls`,
/// `extra` lines added to the script.
fn script(fs: &str, extra: &str, calls: &[&str]) -> String {
    let calls: Vec<String> = calls.iter().map(|c| format!("  \"{c}\",")).collect();
    format!(
        "name = \"t\"\n{fs}\n[[scripts]]\nname = \"app\"\n{extra}\ncalls = [\n{}\n]\n",
        calls.join("\n")
    )
}

fn failed(v: &Value) -> Vec<(String, u64)> {
    v["calls"]["failed"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn failed_calls_return_linux_errnos_and_are_not_counted_as_completed() {
    let dir = scratch("hostile-scripts-errno");
    let calls = [
        "open /missing/x",                  // ENOENT
        "write 4096",                       // EBADF: nothing open
        "close",                            // EBADF
        "mkdir /d",                         // ok
        "open /d O_WRONLY",                 // EISDIR
        "mkdir /d",                         // EEXIST
        "mkdir /no/such",                   // ENOENT: missing parent
        "unlink /nope",                     // ENOENT
        "close",                            // EBADF
        "creat /f",                         // ok
        "lseek -100 SET",                   // EINVAL
        "ftruncate 100000000000000",        // EFBIG: past s_maxbytes
        "pwrite 17592186040320 1",          // EFBIG: at s_maxbytes
        "pwrite 18446744073709551615 4096", // EINVAL: negative loff_t
        "write 18446744073709551615",       // EINVAL: negative ssize_t
        "close",                            // ok
        "open /f O_RDONLY",                 // ok
        "write 4096",                       // EBADF: read-only descriptor
        "ftruncate 0",                      // EINVAL: not open for writing
        "close",                            // ok
        "open /f/x",                        // ENOTDIR
        "rename /nope /q",                  // ENOENT
        "unlink /d",                        // EISDIR: unlink(2) of a directory
        "rmdir /f",                         // ENOTDIR: rmdir(2) of a file
        "rmdir /d",                         // ok: empty
    ];
    let sc = write(&dir, "errno", &script(FS, "", &calls));
    let r = report(&["run", sc.to_str().unwrap()], &dir);
    let want: Vec<(String, u64)> = [
        ("EBADF", 4),
        ("EEXIST", 1),
        ("EFBIG", 2),
        ("EINVAL", 4),
        ("EISDIR", 2),
        ("ENOENT", 4),
        ("ENOTDIR", 2),
    ]
    .iter()
    .map(|(k, n)| (k.to_string(), *n))
    .collect();
    assert_eq!(failed(&r), want, "{}", r["calls"]);
    assert_eq!(failed(&r["threads"][0]), want, "per thread too");
    // mkdir, creat, close, open, close, rmdir completed; nothing written
    assert_eq!(r["requests"]["count"], 6, "{}", r["requests"]);
    assert_eq!(r["requests"]["bytes_written"], 0);
    assert_eq!(r["requests"]["writes"], 0);
    // the table says so too
    let out = simctl(&["run", sc.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        table.contains("failed calls 19") && table.contains("ENOENT 4"),
        "{table}"
    );
}

#[test]
fn a_full_file_system_gives_a_short_write_then_enospc() {
    let dir = scratch("hostile-scripts-enospc");
    let fs = FS.replace("512", "64");
    // 100 MiB into a 64 MiB ext4: the write is short, the next one fails
    let sc = write(
        &dir,
        "enospc",
        &script(
            &fs,
            "",
            &[
                "creat /big",
                "write 104857600",
                "write 4096",
                "fsync",
                "close",
            ],
        ),
    );
    let r = report(&["run", sc.to_str().unwrap()], &dir);
    let written = r["requests"]["bytes_written"].as_u64().unwrap();
    assert_eq!(
        failed(&r),
        vec![("ENOSPC".to_string(), 1)],
        "{}",
        r["calls"]
    );
    assert_eq!(r["requests"]["writes"], 1, "the short write completed");
    assert!(
        written > 50 << 20 && written < 64 << 20 && written % 4096 == 0,
        "short write of what fits: {written} bytes"
    );
    // the delayed allocation happened at writeback: every byte has a block
    let blocks = r["fs"]["blocks_allocated"].as_u64().unwrap();
    assert!(
        blocks * 4096 >= written,
        "{blocks} blocks for {written} bytes"
    );
    assert!(blocks <= r["fs"]["blocks"].as_u64().unwrap());
    // and no write went faster than the card
    assert!(
        r["write"]["mb_per_s"].as_f64().unwrap() < 1000.0,
        "{}",
        r["write"]
    );
}

#[test]
fn strict_and_on_error_stop_end_the_run_at_the_first_failure() {
    let dir = scratch("hostile-scripts-strict");
    let calls = ["mkdir /a", "open /missing/x", "write 4096", "close"];
    let sc = write(&dir, "strict", &script(FS, "", &calls));
    let s = sc.to_str().unwrap();
    // by default the script goes on
    assert!(simctl(&["run", s, "--quiet"]).status.success());
    let out = simctl(&["run", s, "--strict"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    for want in [
        "script `app`",
        "calls[1]",
        "`open /missing/x`",
        "ENOENT",
        "--strict",
    ] {
        assert!(err.contains(want), "missing {want:?}: {err}");
    }
    let stop = write(
        &dir,
        "stop",
        &script(FS, "on_error = \"stop\"", &["mkdir /a", "write 4096"]),
    );
    let err = simctl_err(&["run", stop.to_str().unwrap()]);
    assert!(
        err.contains("calls[1] `write 4096`") && err.contains("EBADF"),
        "{err}"
    );
}

#[test]
fn scripts_without_a_file_system_are_a_located_error() {
    let dir = scratch("hostile-scripts-nofs");
    let sc = write(&dir, "nofs", &script("", "", &["open /f", "read 4096"]));
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(
        err.contains("nofs.toml") && err.contains("script `app`") && err.contains("[fs]"),
        "{err}"
    );
}

#[test]
fn huge_negative_and_nan_times_are_refused_not_wrapped() {
    let dir = scratch("hostile-scripts-times");
    let cases = [
        ("", vec!["sync", "sleep 1e30"], "calls[1]"),
        ("think_time_us = 1e30", vec!["sync"], "think_time_us = 1e30"),
        ("start_ms = -5", vec!["sync"], "start_ms = -5"),
        ("start_ms = nan", vec!["sync"], "start_ms = NaN"),
        ("think_time_us = inf", vec!["sync"], "think_time_us = inf"),
    ];
    for (i, (extra, calls, want)) in cases.iter().enumerate() {
        let sc = write(&dir, &format!("t{i}"), &script(FS, extra, calls));
        let err = simctl_err(&["run", sc.to_str().unwrap()]);
        assert!(
            err.contains("script `app`") && err.contains(want),
            "{extra} {calls:?}: {err}"
        );
    }
    let sq = format!(
        "name = \"t\"\n{FS}\n[[sqlite_jobs]]\nname = \"db\"\nop = \"insert\"\ntransactions = 2\nthink_time_us = 1e30\n"
    );
    let sc = write(&dir, "sqlite", &sq);
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(
        err.contains("sqlite job `db`") && err.contains("simulated clock"),
        "{err}"
    );
}

#[test]
fn a_partition_too_small_for_ext4_names_the_minimum() {
    let dir = scratch("hostile-scripts-partition");
    let sc = write(&dir, "p", &script(FS, "", &["sync"]));
    for size in ["0", "1"] {
        let set = format!("fs.partition_size_mib={size}");
        let err = simctl_err(&["run", sc.to_str().unwrap(), "--set", &set]);
        assert!(
            err.contains(&format!("fs.partition_size_mib = {size}"))
                && err.contains("at least 7 MiB"),
            "{err}"
        );
    }
    let out = simctl(&[
        "run",
        sc.to_str().unwrap(),
        "--set",
        "fs.partition_size_mib=7",
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn counts_and_threads_are_limited_before_anything_is_allocated() {
    let dir = scratch("hostile-scripts-limits");
    let sqlite = |extra: &str| {
        format!("name = \"t\"\n{FS}\n[[sqlite_jobs]]\nname = \"db\"\nop = \"update\"\n{extra}\n")
    };
    let cases = [
        (sqlite("transactions = 1000000000000"), "sqlite job `db`"),
        (
            sqlite("transactions = 10\nrows = 10000000000"),
            "rows = 10000000000",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let sc = write(&dir, &format!("c{i}"), text);
        let err = simctl_err(&["run", sc.to_str().unwrap()]);
        assert!(err.contains(want) && err.contains("at most"), "{err}");
    }
    // 4,096 threads over jobs, scripts and SQLite jobs together
    let mut many = format!("name = \"t\"\n{FS}\n[[files]]\nname = \"f\"\nsize_mib = 1\n");
    many.push_str("[[jobs]]\nname = \"j\"\nfile = \"f\"\nop = \"read\"\npattern = \"sequential\"\nrequest_bytes = 4096\nthreads = 4000\n");
    for i in 0..60 {
        many.push_str(&format!(
            "[[scripts]]\nname = \"s{i}\"\ncalls = [\"sync\"]\n"
        ));
    }
    for i in 0..40 {
        many.push_str(&format!(
            "[[sqlite_jobs]]\nname = \"q{i}\"\nop = \"insert\"\ntransactions = 1\n"
        ));
    }
    let sc = write(&dir, "many", &many);
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(
        err.contains("4100 threads in all") && err.contains("at most 4096"),
        "{err}"
    );
}

#[test]
fn jobs_whose_offsets_or_pids_collapse_are_located_errors() {
    let dir = scratch("hostile-scripts-jobs");
    let job = |name: &str, extra: &str| {
        format!("[[jobs]]\nname = \"{name}\"\nfile = \"f\"\nop = \"read\"\nrequest_bytes = 4096\nrequests = 4\n{extra}\n")
    };
    let head = "name = \"t\"\n[[files]]\nname = \"f\"\nsize_mib = 64\n";
    let cases = [
        (
            job("a", "pattern = \"random\"\nalign_bytes = 134217728"),
            "job `a`: align_bytes = 134217728 is larger than the job's region",
        ),
        (
            job("a", "pattern = \"strided\"\nstride_bytes = 67108865"),
            "job `a`: stride_bytes = 67108865 is larger",
        ),
        (
            job(
                "a",
                "pattern = \"sequential\"\npid = 4294967295\nthreads = 2",
            ),
            "job `a`: pid = 4294967295 with 2 threads",
        ),
        (
            job("a", "pattern = \"sequential\"\npid = 1000\nthreads = 8")
                + &job("b", "pattern = \"sequential\"\npid = 1005"),
            "job `b`: pids 1005..=1005 overlap job `a`'s 1000..=1007",
        ),
    ];
    for (i, (jobs, want)) in cases.iter().enumerate() {
        let sc = write(&dir, &format!("j{i}"), &format!("{head}{jobs}"));
        let err = simctl_err(&["run", sc.to_str().unwrap()]);
        assert!(err.contains(want), "want {want:?}: {err}");
    }
}
