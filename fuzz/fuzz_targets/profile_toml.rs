#![no_main]
//! Feeds arbitrary text through device-profile and host-profile parsing
//! and validation; no input may panic. The first byte chooses: even = a
//! device profile (a valid one of at most 64 MiB raw is also built into a
//! device), odd = a host profile (selected from a scenario's `[host]
//! profile`, merged and validated as a scenario would).

use libfuzzer_sys::fuzz_target;
use mmcsim::config::Scenario;
use mmcsim::device::{DeviceConfig, Emmc};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A private folder holding the host profile under test.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("mmcsim-fuzz-profile-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if which % 2 == 0 {
        if let Ok(cfg) = DeviceConfig::from_toml_str(text, "fuzz.toml") {
            if cfg.raw_bytes() <= 64 << 20 {
                let _ = Emmc::new(&cfg).map(|d| d.capacity_sectors());
            }
        }
    } else {
        std::fs::write(dir().join("host.toml"), text).expect("profile written");
        let _ = Scenario::from_toml(
            "name = \"fuzz\"\n[host]\nprofile = \"host.toml\"\n",
            "fuzz.toml",
            dir().clone(),
            &[],
        );
    }
});
