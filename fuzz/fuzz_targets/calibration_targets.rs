#![no_main]
//! Feeds arbitrary text through the calibration targets reader (`simctl
//! calibrate --targets FILE`) and the metric lookup on a report: the input
//! is the targets TOML, optionally followed by a NUL byte and a JSON
//! report each target's `metric` is looked up in. The targets file lives
//! beside `scenario.toml` (so `scenario = "scenario.toml"` exists); no
//! input may panic. Nothing runs.

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The targets file of this process, rewritten for every case.
fn targets_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("mmcsim-fuzz-calibrate-{}", std::process::id()));
        std::fs::create_dir_all(d.join("micro")).expect("temp dir");
        for s in ["scenario.toml", "micro/scenario.toml"] {
            std::fs::write(d.join(s), "name = \"s\"\n").expect("scenario written");
        }
        d.join("targets.toml")
    })
}

fuzz_target!(|data: &[u8]| {
    let (toml_part, json_part) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let path = targets_path();
    std::fs::write(path, toml_part).expect("targets written");
    let Ok(metrics) = simctl::fuzzing::calibration_targets(path) else {
        return;
    };
    let Some(report) = json_part.and_then(|j| serde_json::from_slice::<serde_json::Value>(j).ok())
    else {
        return;
    };
    for m in &metrics {
        let _ = simctl::fuzzing::calibration_metric(&report, m);
    }
});
