#![no_main]
//! Feeds arbitrary text through scenario parsing and validation (and the
//! device configuration it names, with its overrides); no input may panic:
//! every rejection is an error.

use libfuzzer_sys::fuzz_target;
use mmcsim::config::Scenario;
use std::path::PathBuf;
use std::sync::OnceLock;

/// An empty folder the scenario's relative paths resolve against.
fn base_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("mmcsim-fuzz-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sc) = Scenario::from_toml(text, "fuzz.toml", base_dir().clone(), &[]) {
        if let Ok(dev) = sc.device_config() {
            let _ = dev.raw_bytes();
        }
        let _ = mmcsim::sim::PreparedDevice::key(&sc);
    }
});
