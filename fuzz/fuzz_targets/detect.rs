#![no_main]
//! Feeds arbitrary bytes through format detection and the detected reader.

use libfuzzer_sys::fuzz_target;
use mmcsim_trace::{detect_bytes, open_bytes, OpenOptions};

fuzz_target!(|data: &[u8]| {
    if detect_bytes(data, "fuzz").is_ok() {
        if let Ok(mut r) = open_bytes(data, "fuzz", &OpenOptions::default()) {
            while r.next_record().is_some() {}
        }
    }
});
