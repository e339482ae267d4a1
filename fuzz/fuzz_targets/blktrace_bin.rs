#![no_main]
//! Feeds arbitrary bytes through the binary blktrace reader (forced format,
//! all devices, then the single-device path), and through detection and
//! a text reader (the binary-data hint); no input may panic.

use libfuzzer_sys::fuzz_target;
use mmcsim_trace::{open_bytes, Format, OpenOptions};

fuzz_target!(|data: &[u8]| {
    for all_devices in [true, false] {
        let opts = OpenOptions {
            format: Some(Format::new(&mmcsim_trace::blktrace_bin::BlktraceBin)),
            all_devices,
            ..Default::default()
        };
        if let Ok(mut r) = open_bytes(data, "fuzz.blktrace.0", &opts) {
            while let Some(rec) = r.next_record() {
                if let Ok(rec) = rec {
                    let _ = rec.process.map(|p| r.process_name(p).len());
                    let _ = rec.device.map(|d| r.device_label(d));
                }
            }
        }
    }
    let _ = mmcsim_trace::detect_bytes(data, "fuzz");
    let text = OpenOptions {
        format: Some(Format::new(&mmcsim_trace::blkparse::Blkparse)),
        all_devices: true,
        ..Default::default()
    };
    if let Ok(mut r) = open_bytes(data, "fuzz", &text) {
        while r.next_record().is_some() {}
    }
});
