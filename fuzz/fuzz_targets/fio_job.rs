#![no_main]
//! Feeds arbitrary text through fio job-file detection, the job-file
//! parser and its translation into a scenario, then the scenario's parsing
//! and validation (as `simctl run JOB.fio` does before simulating); no
//! input may panic. A translation that succeeds must be valid TOML.

use libfuzzer_sys::fuzz_target;
use mmcsim::config::Scenario;
use mmcsim::workload::fio_job;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// An empty folder the translated scenario's paths resolve against.
fn base_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("mmcsim-fuzz-fio-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Detection by content (no .fio/.toml extension).
    let _ = fio_job::is_job_file(Path::new("fuzz"), text);
    let Ok(w) = fio_job::parse(text, "fuzz.fio", "fuzz") else {
        return;
    };
    let Ok(toml_text) = w.to_scenario_toml() else {
        return;
    };
    assert!(
        toml_text.parse::<toml::Table>().is_ok(),
        "the translation is not TOML:\n{toml_text}"
    );
    if let Ok(sc) = Scenario::from_toml(&toml_text, "fuzz.fio", base_dir().clone(), &[]) {
        let _ = mmcsim::sim::PreparedDevice::key(&sc);
    }
});
