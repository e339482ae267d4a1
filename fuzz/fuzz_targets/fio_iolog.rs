#![no_main]
//! Feeds arbitrary bytes through the `fio-iolog` reader (forced format, all
//! devices, then the device pre-scan path); no input may panic.

use libfuzzer_sys::fuzz_target;
use mmcsim_trace::{open_bytes, Format, OpenOptions};

fuzz_target!(|data: &[u8]| {
    for all_devices in [true, false] {
        let opts = OpenOptions {
            format: Some(Format::new(&mmcsim_trace::fio::FioIolog)),
            all_devices,
            ..Default::default()
        };
        if let Ok(mut r) = open_bytes(data, "fuzz", &opts) {
            while let Some(rec) = r.next_record() {
                if let Ok(rec) = rec {
                    let _ = rec.process.map(|p| r.process_name(p).len());
                }
            }
        }
    }
});
