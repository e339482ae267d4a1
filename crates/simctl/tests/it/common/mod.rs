//! Helpers for the end-to-end tests: run the real `simctl` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod shared;
pub use shared::*;

/// The repository root (where configs/ and traces/ live): two levels above
/// this package (crates/simctl).
pub fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// This package's test data directory (`crates/simctl/tests`: golden/,
/// crash/, ext4/, sweep-grid/, ...), as a path from the repository root.
pub const DATA: &str = "crates/simctl/tests";

/// `DATA/rel` under the repository root.
pub fn data(rel: &str) -> PathBuf {
    root().join(DATA).join(rel)
}

/// `../shared/traces/NAME` beside this repository, or `None` after saying
/// why `test` is skipped (a failure under CI; see [`shared`]).
pub fn shared_trace(test: &str, name: &str) -> Option<PathBuf> {
    shared_trace_in(&root(), test, name)
}

/// Runs simctl with `args` from the repository root.
pub fn simctl(args: &[&str]) -> Output {
    simctl_in(&root(), args)
}

/// Runs simctl with `args` from directory `dir`.
pub fn simctl_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_simctl"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("simctl runs")
}

/// Runs simctl, asserts success, and returns stdout.
pub fn simctl_ok(args: &[&str]) -> String {
    simctl_ok_in(&root(), args)
}

/// Runs simctl from directory `dir`, asserts success, and returns stdout.
pub fn simctl_ok_in(dir: &Path, args: &[&str]) -> String {
    let out = simctl_in(dir, args);
    assert!(
        out.status.success(),
        "simctl {:?} failed: {}\n{}",
        args,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Runs simctl with `--json FILE` in a fresh temp dir and parses the report.
pub fn report(args: &[&str], tmp: &Path) -> serde_json::Value {
    let json = tmp.join("report.json");
    let mut a: Vec<&str> = args.to_vec();
    let js = json.to_str().unwrap().to_string();
    a.extend(["--json", &js, "--quiet"]);
    simctl_ok(&a);
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("valid JSON")
}

/// A fresh scratch directory under the target dir, `name` the first time
/// this process asks for it and `name-N` after: every test of the one
/// test binary runs in the same process, in parallel, so two tests (or
/// two calls of one helper) naming the same folder must not wipe each
/// other's files.
pub fn scratch(name: &str) -> PathBuf {
    static USED: std::sync::Mutex<Vec<(String, usize)>> = std::sync::Mutex::new(Vec::new());
    let unique = {
        let mut used = USED.lock().unwrap_or_else(|e| e.into_inner());
        match used.iter_mut().find(|(n, _)| n == name) {
            Some((_, k)) => {
                *k += 1;
                format!("{name}-{k}")
            }
            None => {
                used.push((name.to_string(), 1));
                name.to_string()
            }
        }
    };
    let d = root().join("target").join("test-scratch").join(unique);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs simctl expecting failure; returns stderr, asserting no panic.
pub fn simctl_err(args: &[&str]) -> String {
    let out = simctl(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "simctl {args:?} should fail");
    assert_ne!(
        out.status.code(),
        Some(101),
        "simctl {args:?} panicked: {err}"
    );
    assert!(!err.contains("panicked"), "simctl {args:?} panicked: {err}");
    err
}

/// Mean device time (ns) of requests whose start sector is above / below
/// the previous request's, in device start order, from a `--log` CSV:
/// `(up count, up mean, down count, down mean)`.
pub fn direction_split(log: &std::path::Path) -> (u64, f64, u64, f64) {
    let text = std::fs::read_to_string(log).unwrap();
    let mut rows: Vec<(u64, u64, u64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect();
    rows.sort_by_key(|r| r.0); // dispatch order = device start order
    let (mut up, mut nup, mut down, mut ndown) = (0u64, 0u64, 0u64, 0u64);
    for w in rows.windows(2) {
        let dev = w[1].1 - w[1].0;
        if w[1].2 > w[0].2 {
            up += dev;
            nup += 1;
        } else if w[1].2 < w[0].2 {
            down += dev;
            ndown += 1;
        }
    }
    (
        nup,
        up as f64 / nup.max(1) as f64,
        ndown,
        down as f64 / ndown.max(1) as f64,
    )
}

/// Compares `text`, the measured numbers of a finding the model does not
/// show as published (with the check's verdict), byte for byte with the
/// committed `crates/simctl/tests/golden/verdicts/NAME.txt`; with
/// `MMCSIM_BLESS` set, writes it instead (an intended model change, said
/// in its own commit like the golden reports).
pub fn assert_verdict(name: &str, text: &str) {
    let path = data("golden/verdicts").join(format!("{name}.txt"));
    if std::env::var_os("MMCSIM_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        want == text,
        "verdict {name} differs from {}:\n--- committed\n{want}--- measured\n{text}\
         (MMCSIM_BLESS=1 cargo test -p simctl --test it {name} rewrites it after an intended model change)",
        path.display()
    );
}

/// `shown` or `not shown`: the verdict line of a finding's check.
pub fn shown(holds: bool) -> &'static str {
    if holds {
        "shown"
    } else {
        "not shown"
    }
}
