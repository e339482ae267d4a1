//! Unit tests of the job-file reader.

use super::values::time_us;
use super::*;
use crate::workload::spec::{Order, Pattern};

#[test]
fn sizes_follow_fio_kb_base_1024() {
    assert_eq!(size("4k"), Ok(4096));
    assert_eq!(size("4KB"), Ok(4096));
    assert_eq!(size("1m"), Ok(1 << 20));
    assert_eq!(size("2g"), Ok(2 << 30));
    assert_eq!(size("4kib"), Ok(4000));
    assert_eq!(size("512"), Ok(512));
    assert_eq!(size("0x1000"), Ok(4096));
    assert!(size("4q").is_err());
    assert!(size("50%").unwrap_err() == OptionError::Percentage);
    assert_eq!(size("1p"), Ok(MAX_BYTES));
    for big in [
        "1025p",
        "18446744073709551615",
        "0xffffffffffffffff",
        "16777216t",
    ] {
        let e = size(big).unwrap_err();
        assert!(
            e.to_string().contains("at most 1125899906842624 bytes"),
            "{big}: {e}"
        );
    }
}

/// A huge offset is refused at its file, line and key with the limit
/// (it wrapped past the file-size check and surfaced as "u64 value was
/// too large" from the scenario translation).
#[test]
fn a_huge_offset_names_file_line_key_and_limit() {
    let text = "[global]\nrw=randread\nsize=16m\n[j]\noffset=18446744073709551615\n";
    let e = parse(text, "o.fio", "o").unwrap_err().to_string();
    assert!(
        e.starts_with("o.fio:5: key 'offset' = '18446744073709551615': ")
            && e.contains("at most 1125899906842624 bytes"),
        "{e}"
    );
}

#[test]
fn times_take_units_and_the_key_default() {
    assert_eq!(time_us("30", 1e6), Ok(30e6));
    assert_eq!(time_us("250ms", 1e6), Ok(250e3));
    assert_eq!(time_us("100", 1.0), Ok(100.0));
    assert!(time_us("1.5s", 1e6).is_err());
}

#[test]
fn a_job_inherits_the_globals_above_it_only() {
    let text = "[global]\nbs=8k\nsize=1m\n[a]\nrw=read\n[global]\nbs=16k\n[b]\nrw=write\n";
    let w = parse(text, "t.fio", "t").unwrap();
    assert_eq!(w.jobs[0].request_bytes, 8192);
    assert_eq!(w.jobs[1].request_bytes, 16384);
    assert_eq!(w.jobs[0].requests, Some(128));
    assert_eq!(w.files[0].name, "a.0.0");
}

#[test]
fn random_io_uses_the_random_map_unless_norandommap() {
    let w = parse("[r]\nrw=randread\nsize=1m\n", "t.fio", "t").unwrap();
    assert_eq!(
        (w.jobs[0].pattern, w.jobs[0].order),
        (Pattern::Sequential, Order::Shuffled)
    );
    let w = parse("[r]\nrw=randread\nsize=1m\nnorandommap\n", "t.fio", "t").unwrap();
    assert_eq!(w.jobs[0].pattern, Pattern::Random);
}

#[test]
fn sequential_skip_makes_a_strided_job() {
    let w = parse("[w]\nrw=write:4k\nsize=1m\n", "t.fio", "t").unwrap();
    assert_eq!(w.jobs[0].pattern, Pattern::Strided);
    assert_eq!(w.jobs[0].stride_bytes, Some(8192));
}
