#![no_main]
//! `simctl check REPORT --baseline BASELINE [--tolerance METRIC=PCT]...` on
//! arbitrary inputs: the bytes are the report, a NUL, the baseline, and
//! optionally a NUL and newline-separated tolerances. Every input problem
//! must be an error (exit code 2), never a panic; a check that succeeds
//! prints one row per metric.

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The report and baseline files of this process, rewritten every case.
fn paths() -> &'static (PathBuf, PathBuf) {
    static PATHS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    PATHS.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("mmcsim-fuzz-check-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        (d.join("report.json"), d.join("baseline.json"))
    })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let report = parts.next().unwrap_or_default();
    let Some(baseline) = parts.next() else {
        return;
    };
    let tolerances = parts.next().unwrap_or_default();
    let Ok(tolerances) = std::str::from_utf8(tolerances) else {
        return;
    };
    let tolerances: Vec<&str> = tolerances.lines().filter(|l| !l.is_empty()).collect();
    let (r, b) = paths();
    std::fs::write(r, report).expect("report written");
    std::fs::write(b, baseline).expect("baseline written");
    if let Ok(table) = simctl::fuzzing::check_baseline(r, b, &tolerances) {
        assert!(table.lines().count() >= 2, "a header and at least one row");
    }
});
