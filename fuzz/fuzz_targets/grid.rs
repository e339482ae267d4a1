#![no_main]
//! Feeds arbitrary text through the sweep grid parser (`simctl sweep
//! GRID`: axes, scheduler entries, workloads, phones, devices, seeds, set
//! variants, the cartesian product), as if the grid were a file in
//! `crates/simctl/tests/sweep-grid/` so its relative paths can name the repository's
//! own workloads, devices and phones; no input may panic. Nothing runs.

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where the grid pretends to live (the file is never written).
fn grid_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../crates/simctl/tests/sweep-grid/fuzz-grid.toml"
        ))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = simctl::fuzzing::grid(text, grid_path());
});
