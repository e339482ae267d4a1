//! Binary blktrace captures through `simctl`: a capture written with the
//! kernel's `struct blk_io_trace` layout (include/uapi/linux/blktrace_api.h)
//! in per-CPU files replays to the same report as the blkparse text of the
//! same events; malformed records are located errors; a multi-device
//! capture is summarised per device by `trace inspect` and refused by
//! `replay` until a device is chosen; binary data given to a text reader
//! names the right format.

use crate::common::*;
use std::path::{Path, PathBuf};

/// `BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION`.
const MAGIC_V7: u32 = 0x6561_7407;
/// Category bits (`enum blktrace_cat`) and action codes (`enum
/// blktrace_act`, `enum blktrace_notify`).
const TC_READ: u32 = 1 << 16;
const TC_WRITE: u32 = 1 << 17;
const TC_FLUSH: u32 = 1 << 18;
const TC_SYNC: u32 = 1 << 19;
const TC_QUEUE: u32 = 1 << 20;
const TC_ISSUE: u32 = 1 << 22;
const TC_COMPLETE: u32 = 1 << 23;
const TC_NOTIFY: u32 = 1 << 26;
const TC_FUA: u32 = 1 << 31;
const TA_QUEUE: u32 = 1 | TC_QUEUE;
const TA_ISSUE: u32 = 7 | TC_ISSUE;
const TA_COMPLETE: u32 = 8 | TC_COMPLETE;
const TN_PROCESS: u32 = TC_NOTIFY;

/// One event of a capture.
#[derive(Clone, Debug)]
struct Ev {
    cpu: u32,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    dev: (u32, u32),
    error: u16,
    pdu: Vec<u8>,
}

fn ev(cpu: u32, time: u64, action: u32, sector: u64, bytes: u32, pid: u32) -> Ev {
    Ev {
        cpu,
        time,
        sector,
        bytes,
        action,
        pid,
        dev: (179, 0),
        error: 0,
        pdu: Vec::new(),
    }
}

/// A process note: the kernel's `BLK_TN_PROCESS` with the comm as payload.
fn note(cpu: u32, time: u64, pid: u32, comm: &str) -> Ev {
    let mut pdu = comm.as_bytes().to_vec();
    pdu.resize(16, 0);
    Ev {
        pdu,
        ..ev(cpu, time, TN_PROCESS, 0, 0, pid)
    }
}

/// Encodes `e` with sequence `seq` as the kernel lays out a `struct
/// blk_io_trace` (48 bytes) followed by its payload, in little- or
/// big-endian order.
fn encode(e: &Ev, seq: u32, big: bool) -> Vec<u8> {
    let mut b = Vec::new();
    let u32b = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u64b = |v: u64| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    b.extend(u32b(MAGIC_V7));
    b.extend(u32b(seq));
    b.extend(u64b(e.time));
    b.extend(u64b(e.sector));
    b.extend(u32b(e.bytes));
    b.extend(u32b(e.action));
    b.extend(u32b(e.pid));
    b.extend(u32b(e.dev.0 << 20 | e.dev.1));
    b.extend(u32b(e.cpu));
    b.extend(u16b(e.error));
    b.extend(u16b(e.pdu.len() as u16));
    b.extend(&e.pdu);
    b
}

/// Writes `events` as per-CPU files `PREFIX.blktrace.N` in `dir`; returns
/// the first file.
fn write_capture(dir: &Path, prefix: &str, events: &[Ev], big: bool) -> PathBuf {
    let cpus = events.iter().map(|e| e.cpu).max().unwrap_or(0);
    for cpu in 0..=cpus {
        let mut bytes = Vec::new();
        for (seq, e) in events.iter().filter(|e| e.cpu == cpu).enumerate() {
            bytes.extend(encode(e, seq as u32, big));
        }
        std::fs::write(dir.join(format!("{prefix}.blktrace.{cpu}")), bytes).unwrap();
    }
    dir.join(format!("{prefix}.blktrace.0"))
}

/// The RWBS letters blkparse prints (`fill_rwbs` in blkparse_fmt.c).
fn rwbs(e: &Ev) -> String {
    let mut s = String::new();
    if e.action & TC_FLUSH != 0 {
        s.push('F');
    }
    s.push(if e.action & TC_WRITE != 0 {
        'W'
    } else if e.bytes != 0 {
        'R'
    } else {
        'N'
    });
    if e.action & TC_FUA != 0 {
        s.push('F');
    }
    if e.action & TC_SYNC != 0 {
        s.push('S');
    }
    s
}

/// The blkparse default text of `events` (`process_default`): merged by
/// time, times since the first event, per-CPU sequence numbers, the
/// process names from the notes.
fn blkparse_text(events: &[Ev]) -> String {
    // blkparse's order: time, device, sequence (then the CPU), and the
    // event's index.
    type Key = (u64, (u32, u32), u32, u32, usize);
    let mut order: Vec<Key> = Vec::new();
    let mut seqs = std::collections::HashMap::new();
    let mut seq_of = vec![0u32; events.len()];
    for (i, e) in events.iter().enumerate() {
        let s = seqs.entry(e.cpu).or_insert(0u32);
        seq_of[i] = *s;
        *s += 1;
        order.push((e.time, e.dev, seq_of[i], e.cpu, i));
    }
    order.sort();
    let genesis = order[0].0;
    let mut names = std::collections::HashMap::new();
    let mut out = String::new();
    for &(_, _, seq, _, i) in &order {
        let e = &events[i];
        if e.action & TC_NOTIFY != 0 {
            let end = e.pdu.iter().position(|&c| c == 0).unwrap_or(e.pdu.len());
            names.insert(e.pid, String::from_utf8_lossy(&e.pdu[..end]).into_owned());
            continue;
        }
        let t = e.time - genesis;
        let act = match e.action & 0xffff {
            1 => "Q",
            7 => "D",
            8 => "C",
            _ => unreachable!(),
        };
        out.push_str(&format!(
            "{:3},{:<3} {:2} {:8} {:5}.{:09} {:5} {:>2} {:>3} ",
            e.dev.0,
            e.dev.1,
            e.cpu,
            seq,
            t / 1_000_000_000,
            t % 1_000_000_000,
            e.pid,
            act,
            rwbs(e)
        ));
        let name = names.get(&e.pid).cloned().unwrap_or_default();
        let n = e.bytes >> 9;
        out.push_str(&match (act, n) {
            ("C", 0) => format!("{} [{}]\n", e.sector, e.error),
            ("C", _) => format!("{} + {n} [{}]\n", e.sector, e.error),
            (_, 0) => format!("[{name}]\n"),
            _ => format!("{} + {n} [{name}]\n", e.sector),
        });
    }
    out
}

/// A phone-like capture on two CPUs: a writer with FUA and a flush, two
/// readers, completions on the other CPU, equal times across CPUs.
fn events() -> Vec<Ev> {
    let base = 5_000_000_000_123; // the kernel's clock, not zero
    let mut v = vec![
        note(0, base, 1873, "jbd2/mmcblk0p2"),
        note(1, base, 2001, "com.android.chrome"),
        note(0, base + 10, 95, "mmcqd/0"),
    ];
    let mut t = base + 1_000;
    for i in 0..60u64 {
        let (cpu, pid) = ((i % 2) as u32, if i % 3 == 0 { 1873 } else { 2001 });
        let sector = 5_521_408 + i * 64;
        let (kind, bytes) = match i % 3 {
            0 => (TC_WRITE | TC_SYNC, 4096 * (1 + (i % 4) as u32)),
            1 => (TC_READ, 16_384),
            _ => (TC_READ | TC_SYNC, 4096),
        };
        v.push(ev(cpu, t, TA_QUEUE | kind, sector, bytes, pid));
        v.push(ev(cpu, t + 5_000, TA_ISSUE | kind, sector, bytes, 95));
        v.push(ev(
            1 - cpu,
            t + 400_000 + i * 977,
            TA_COMPLETE | kind,
            sector,
            bytes,
            0,
        ));
        t += 1_250_000;
        if i % 20 == 19 {
            let f = TC_WRITE | TC_FLUSH | TC_SYNC;
            v.push(ev(0, t, TA_ISSUE | f, 0, 0, 1873));
            v.push(ev(1, t + 90_000, TA_COMPLETE | f, 0, 0, 0));
            v.push(ev(
                1,
                t + 90_000,
                TA_ISSUE | TC_WRITE | TC_FUA | TC_SYNC,
                900,
                4096,
                1873,
            ));
            v.push(ev(
                0,
                t + 200_000,
                TA_COMPLETE | TC_WRITE | TC_FUA | TC_SYNC,
                900,
                4096,
                0,
            ));
            t += 300_000;
        }
    }
    v.sort_by_key(|e| e.time); // each CPU's buffer is in time order
    v
}

/// The report without the keys that describe the input file (its path,
/// format, digest and the unit its times were written in: s.ns text, ns
/// binary): everything the simulation computed.
fn simulated_part(mut v: serde_json::Value) -> String {
    let run = v["run"].as_object_mut().unwrap();
    run.remove("trace");
    run.remove("name");
    run["identity"].as_object_mut().unwrap().remove("workload");
    let trace = v["trace"].as_object_mut().unwrap();
    trace.remove("path");
    trace.remove("format");
    trace.remove("time_unit");
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn a_capture_replays_to_the_report_of_its_blkparse_text() {
    let dir = scratch("blktrace_bin_same_report");
    let events = events();
    let text = dir.join("mmcblk0.txt");
    std::fs::write(&text, blkparse_text(&events)).unwrap();
    let want = report(
        &["replay", text.to_str().unwrap(), "--mode", "closed"],
        &dir,
    );
    assert_eq!(want["trace"]["format"], "blkparse");
    assert_eq!(
        want["requests"]["count"], 66,
        "60 requests, 3 flushes, 3 FUA writes"
    );
    for big in [false, true] {
        let sub = dir.join(if big { "be" } else { "le" });
        std::fs::create_dir_all(&sub).unwrap();
        let first = write_capture(&sub, "mmcblk0", &events, big);
        // One CPU's file, or the prefix: every CPU's file is read.
        for given in [first.clone(), sub.join("mmcblk0")] {
            let got = report(
                &["replay", given.to_str().unwrap(), "--mode", "closed"],
                &dir,
            );
            assert_eq!(got["trace"]["format"], "blktrace-bin");
            let (got, want) = (simulated_part(got), simulated_part(want.clone()));
            assert!(got == want, "{given:?}: the reports differ:\n{got}\n{want}");
        }
    }
    // Timed replay too (the times are blkparse's, since the first event).
    let first = write_capture(&dir, "mmcblk0", &events, false);
    let a = report(&["replay", text.to_str().unwrap()], &dir);
    let b = report(&["replay", first.to_str().unwrap()], &dir);
    assert_eq!(simulated_part(a), simulated_part(b));
    // And the converted records are the same, line for line.
    let csv = |p: &Path| simctl_ok(&["trace", "convert", p.to_str().unwrap()]);
    assert_eq!(csv(&first), csv(&text));
}

fn one_file(dir: &Path, name: &str, bytes: Vec<u8>) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn malformed_records_are_located_errors() {
    let dir = scratch("blktrace_bin_malformed");
    let good: Vec<u8> = [
        encode(&note(0, 10, 95, "mmcqd/0"), 0, false),
        encode(&ev(0, 20, TA_ISSUE | TC_READ, 8, 4096, 95), 1, false),
    ]
    .concat();
    let offset = good.len();

    let mut cut = good.clone();
    cut.extend(&encode(&ev(0, 30, TA_COMPLETE | TC_READ, 8, 4096, 0), 2, false)[..30]);
    let p = one_file(&dir, "cut.blktrace.0", cut);
    let e = simctl_err(&["replay", &p]);
    assert!(
        e.contains(&format!("cut.blktrace.0: record 3 (byte offset {offset}): field `record`: truncated: 30 of the 48 bytes")),
        "{e}"
    );

    let mut magic = good.clone();
    let mut bad = encode(&ev(0, 30, TA_COMPLETE | TC_READ, 8, 4096, 0), 2, false);
    bad[..4].copy_from_slice(b"\xde\xad\xbe\xef");
    magic.extend(bad);
    let p = one_file(&dir, "magic.blktrace.0", magic);
    let e = simctl_err(&["trace", "inspect", &p, "--format", "blktrace-bin"]);
    assert!(
        e.contains(&format!(
            "record 3 (byte offset {offset}): field `magic`: expected 0x65617407"
        )),
        "{e}"
    );

    let mut pdu = good.clone();
    let mut big = ev(0, 30, TA_COMPLETE | TC_READ, 8, 4096, 0);
    big.pdu = vec![0; 5000];
    pdu.extend(encode(&big, 2, false));
    let p = one_file(&dir, "pdu.blktrace.0", pdu);
    let e = simctl_err(&["replay", &p]);
    assert!(
        e.contains(&format!("record 3 (byte offset {offset}): field `pdu_len`: 5000 payload bytes; expected at most 4096")),
        "{e}"
    );
    // Each exits 2: unusable input.
    assert_eq!(simctl(&["replay", &p]).status.code(), Some(2));
}

/// A capture of two devices: `mmcblk0` (179,0) and `mmcblk1` (179,32).
fn two_devices() -> Vec<Ev> {
    let mut v = vec![note(0, 1_000, 95, "mmcqd/0")];
    for i in 0..12u64 {
        let dev = if i % 3 == 2 { (179, 32) } else { (179, 0) };
        let kind = if i % 2 == 0 { TC_READ } else { TC_WRITE };
        let t = 2_000 + i * 1_000_000;
        let bytes = if dev.1 == 32 { 65_536 } else { 4096 };
        for (action, at) in [(TA_ISSUE, t), (TA_COMPLETE, t + 300_000)] {
            v.push(Ev {
                dev,
                ..ev(0, at, action | kind, 1000 + i * 8, bytes, 95)
            });
        }
    }
    v.sort_by_key(|e| e.time);
    v
}

#[test]
fn a_multi_device_capture_is_inspected_per_device_and_replayed_by_choice() {
    let dir = scratch("blktrace_bin_devices");
    let first = write_capture(&dir, "phone", &two_devices(), false);
    let p = first.to_str().unwrap();
    let out = simctl_ok(&["trace", "inspect", p, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["format"], "blktrace-bin");
    assert_eq!(v["requests"], 12);
    let devs = v["devices"].as_array().unwrap();
    let row = |d: &serde_json::Value| {
        (
            d["device"].as_str().unwrap().to_string(),
            d["requests"].as_u64().unwrap(),
            d["bytes"].as_u64().unwrap(),
            d["read"]["count"].as_u64().unwrap(),
            d["write"]["count"].as_u64().unwrap(),
        )
    };
    assert_eq!(
        devs.iter().map(row).collect::<Vec<_>>(),
        [
            ("179,0".to_string(), 8, 8 * 4096, 4, 4),
            ("179,32".to_string(), 4, 4 * 65_536, 2, 2),
        ]
    );
    assert_eq!(
        devs[1]["size_histogram"][4],
        serde_json::json!(["<=64KiB", 4])
    );
    assert!(devs[0]["span_s"].as_f64().unwrap() > 0.009);
    let text = simctl_ok(&["trace", "inspect", p]);
    assert!(text.contains("devices: 2"), "{text}");
    assert!(text.contains("179,32"), "{text}");
    assert!(text.contains("--device-id 179,0"), "{text}");

    let e = simctl_err(&["replay", p]);
    assert!(
        e.contains("records on 2 devices (179,0, 179,32)") && e.contains("--device-id 179,0"),
        "{e}"
    );
    assert!(e.contains("--all-devices"), "{e}");
    let r = report(&["replay", p, "--device-id", "179,32"], &dir);
    assert_eq!(r["requests"]["count"], 4);
    let r = report(
        &["replay", p, "--device-id", &(179u32 << 20).to_string()],
        &dir,
    );
    assert_eq!(r["requests"]["count"], 8);
    let e = simctl_err(&["replay", p, "--device-id", "8,0"]);
    assert!(
        e.contains("no record is on device 8,0") && e.contains("179,0, 179,32"),
        "{e}"
    );
    let e = simctl_err(&["replay", p, "--device-id", "179,x"]);
    assert!(e.contains("expected MAJ,MIN"), "{e}");
}

#[test]
fn binary_data_given_to_a_text_reader_names_the_format() {
    let dir = scratch("blktrace_bin_hint");
    let first = write_capture(&dir, "cap", &two_devices(), false);
    let e = simctl_err(&["replay", first.to_str().unwrap(), "--format", "blkparse"]);
    assert!(
        e.contains("this is a binary blktrace capture") && e.contains("use --format blktrace-bin"),
        "{e}"
    );
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let p = one_file(&dir, "noise.bin", noise);
    let e = simctl_err(&["replay", &p]);
    assert!(
        e.contains("binary data") && e.contains("the text formats are native"),
        "{e}"
    );
    let e = simctl_err(&["trace", "inspect", &p, "--format", "msr"]);
    assert!(
        e.contains("noise.bin:1: field `format`: binary data"),
        "{e}"
    );
}
