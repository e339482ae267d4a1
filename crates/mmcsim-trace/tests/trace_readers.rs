//! Every trace reader against the composed samples in `traces/`, malformed
//! samples in `traces/bad/`, the public files in `../shared/traces/` (when
//! present), detection, the native-CSV round trip and arbitrary input.

use std::path::{Path, PathBuf};

use mmcsim_trace::{
    detect, detect_bytes, open, open_bytes, Format, NativeCsvWriter, OpenOptions, TimeUnit,
    TraceRecord,
};
use mmcsim_trace::{Error, Op};
use proptest::prelude::*;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces")
        .join(name)
}

#[path = "../../simctl/tests/it/common/shared.rs"]
mod shared_policy;

/// `../shared/traces/NAME` beside the repository, or `None` after saying
/// why the test is skipped (a failure under CI).
fn shared(name: &str) -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    shared_policy::shared_trace_in(&repo, "public trace reader test", name)
}

/// The registered format named `name`.
fn fmt(name: &str) -> Format {
    name.parse().unwrap()
}

fn all_devices() -> OpenOptions {
    OpenOptions {
        all_devices: true,
        ..Default::default()
    }
}

/// Every record (panicking on an error) with its process name.
fn read_all(path: &Path, opts: &OpenOptions) -> Vec<(TraceRecord, Option<String>)> {
    let mut r = open(path, opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap_or_else(|e| panic!("{e}"));
        let name = rec.process.map(|p| r.process_name(p).to_string());
        out.push((rec, name));
    }
    out
}

fn count(path: &Path, opts: &OpenOptions) -> usize {
    let mut r = open(path, opts).unwrap();
    let mut n = 0;
    let mut last = 0;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap_or_else(|e| panic!("{e}"));
        assert!(rec.time_ns >= last, "{}: time decreases", path.display());
        last = rec.time_ns;
        n += 1;
    }
    n
}

fn parse_err(e: &Error) -> (u64, String, String) {
    match e {
        Error::Parse {
            line,
            field,
            message,
            ..
        } => (*line, field.clone(), message.clone()),
        other => panic!("not a parse error: {other}"),
    }
}

#[test]
fn detection_of_every_sample() {
    let cases = [
        ("mmc-ftrace.txt", fmt("mmc-ftrace")),
        ("mmc-ftrace-3x.txt", fmt("mmc-ftrace")),
        ("block-ftrace.txt", fmt("block-ftrace")),
        ("blkparse.txt", fmt("blkparse")),
        ("fio-v2.log", fmt("fio-iolog")),
        ("fio-v3.log", fmt("fio-iolog")),
        ("msr.csv", fmt("msr")),
        ("spc.csv", fmt("spc")),
        ("disksim.trace", fmt("disksim")),
        ("mqsim.trace", fmt("mqsim")),
        ("ssdsim.ascii", fmt("ssdsim")),
        ("pixel6a.csv.gz", fmt("pixel6a")),
        ("biotracer.txt", fmt("biotracer")),
        ("native-extended.csv", fmt("native")),
        ("sample.csv", fmt("native")),
    ];
    for (name, f) in cases {
        assert_eq!(detect(sample(name)).unwrap(), f, "{name}");
    }
    let e = detect_bytes(b"hello world\n", "x.txt").unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("x.txt") && msg.contains("mqsim") && msg.contains("pixel6a"),
        "{msg}"
    );
    assert!(detect_bytes(b"", "empty").is_err());
}

#[test]
fn format_names_round_trip() {
    assert_eq!(Format::all().len(), 13);
    for f in Format::all() {
        assert_eq!(f.name().parse::<Format>().unwrap(), *f);
        assert!(!f.description().is_empty() && !f.example().is_empty());
    }
    let e = "nope".parse::<Format>().unwrap_err().to_string();
    assert!(
        e.contains("native") && e.contains("blkparse") && e.contains("ssdsim"),
        "{e}"
    );
    assert_eq!("ms".parse::<TimeUnit>().unwrap(), TimeUnit::Ms);
    assert!("fortnight".parse::<TimeUnit>().is_err());
    // Aliases and any case.
    assert_eq!("CSV".parse::<Format>().unwrap(), fmt("native"));
    assert_eq!("ftrace".parse::<Format>().unwrap(), fmt("block-ftrace"));
    assert_eq!("µs".parse::<TimeUnit>().unwrap(), TimeUnit::Us);
    assert_eq!(
        "FileTime".parse::<TimeUnit>().unwrap(),
        TimeUnit::Ticks100Ns
    );
    for u in TimeUnit::ALL {
        assert_eq!(u.name().parse::<TimeUnit>().unwrap(), u);
        for a in u.aliases() {
            assert_eq!(a.parse::<TimeUnit>().unwrap(), u);
        }
    }
}

#[test]
fn mmc_ftrace_mainline() {
    let recs = read_all(&sample("mmc-ftrace.txt"), &all_devices());
    assert_eq!(recs.len(), 4);
    let (w, name) = &recs[0];
    assert_eq!(name.as_deref(), Some("mmcqd/0"));
    assert_eq!(
        (w.line, w.time_ns, w.op, w.sector, w.sectors, w.pid, w.device),
        (
            8,
            812_447_120_000,
            Op::Write,
            0x2c6c10,
            32,
            Some(112),
            Some(0)
        )
    );
    assert_eq!(w.done_ns, Some(812_449_873_000));
    assert!(w.has(TraceRecord::FUA), "reliable write");
    let (r, name) = &recs[1];
    assert_eq!(name.as_deref(), Some("kworker/1:1H"), "tgid column skipped");
    assert_eq!((r.op, r.sector, r.sectors), (Op::Read, 0x1c4a08, 64));
    assert_eq!(r.done_ns, Some(812_451_500_000), "CMD13 in between ignored");
    assert!(r.has(TraceRecord::FAILED) && !r.has(TraceRecord::FUA));
    let (f, _) = &recs[2];
    assert_eq!(
        (f.op, f.sector, f.sectors, f.done_ns),
        (Op::Flush, 0, 0, Some(812_460_900_000))
    );
    let (d, _) = &recs[3];
    assert_eq!(
        (d.op, d.sector, d.sectors, d.device),
        (Op::Discard, 0x1000, 0x1000, Some(1))
    );
    assert!(d.has(TraceRecord::SECURE));
    assert_eq!(d.done_ns, Some(812_475_020_000));
    // two hosts: refused without a choice, filtered with one
    // (found while reading, at the first record of the second device)
    let e = first_error(&sample("mmc-ftrace.txt"), &OpenOptions::default());
    assert!(
        e.contains("2 devices (0, 1)") && e.contains("field `device`"),
        "{e}"
    );
    let one = OpenOptions {
        device_id: Some(1),
        ..Default::default()
    };
    assert_eq!(read_all(&sample("mmc-ftrace.txt"), &one).len(), 1);
}

#[test]
fn mmc_ftrace_legacy() {
    let recs = read_all(&sample("mmc-ftrace-3x.txt"), &all_devices());
    assert_eq!(recs.len(), 5);
    let (r, name) = &recs[0];
    assert_eq!(
        (r.line, r.time_ns, r.op, r.sector, r.sectors, r.done_ns),
        (
            1,
            1_543_210_977_000,
            Op::Read,
            0x1c4a08,
            64,
            Some(1_543_212_604_000)
        )
    );
    assert_eq!(name.as_deref(), Some("mmcqd/0"));
    // end without start
    let (w, name) = &recs[1];
    assert_eq!(
        (w.op, w.sector, w.sectors, w.time_ns, w.done_ns),
        (Op::Write, 0x2000, 1, 1_543_213_000_000, None)
    );
    assert!(name.is_none());
    let (d, _) = &recs[2];
    assert_eq!(
        (d.op, d.sector, d.sectors, d.done_ns),
        (Op::Discard, 0x10000, 0x800, Some(1_543_225_000_000))
    );
    let (o, _) = &recs[3];
    assert_eq!((o.op, o.sector, o.sectors), (Op::Write, 0x3000, 16));
    let (v, name) = &recs[4];
    assert_eq!(
        (v.op, v.sector, v.sectors, v.done_ns),
        (Op::Write, 4096, 16, Some(1_543_231_000_000))
    );
    assert_eq!(name.as_deref(), Some("sdcard"));
}

#[test]
fn block_ftrace() {
    let recs = read_all(&sample("block-ftrace.txt"), &OpenOptions::default());
    assert_eq!(recs.len(), 4);
    let (w, name) = &recs[0];
    assert_eq!(
        (w.line, w.time_ns, w.op, w.sector, w.sectors, w.done_ns, w.sync, w.pid),
        (
            3,
            96_114_020_000,
            Op::Write,
            5_521_408,
            8,
            Some(96_115_301_000),
            Some(true),
            Some(95)
        )
    );
    assert_eq!(w.device, Some(179 << 20));
    assert_eq!(name.as_deref(), Some("mmcqd/0"));
    let (r, _) = &recs[1];
    assert!(r.has(TraceRecord::READAHEAD) && r.has(TraceRecord::FAILED));
    let (f, name) = &recs[2];
    assert_eq!(
        (f.op, f.sector, f.sectors, f.done_ns),
        (Op::Flush, 0, 0, Some(96_118_000_000))
    );
    assert_eq!(name.as_deref(), Some("kworker/0:1H"));
    let (d, _) = &recs[3];
    assert_eq!(
        (d.op, d.sectors, d.done_ns),
        (Op::Discard, 2048, Some(96_130_000_000))
    );
}

#[test]
fn blkparse_sample() {
    let recs = read_all(&sample("blkparse.txt"), &OpenOptions::default());
    assert_eq!(recs.len(), 4, "D events only; N and summary skipped");
    let (w, name) = &recs[0];
    assert_eq!(
        (w.line, w.time_ns, w.op, w.sector, w.sectors, w.pid, w.done_ns),
        (
            3,
            12_304_580_331,
            Op::Write,
            5_521_408,
            8,
            Some(95),
            Some(12_305_912_004)
        )
    );
    assert_eq!(name.as_deref(), Some("mmcqd/0"));
    assert!(recs[1].0.has(TraceRecord::META));
    let (f, name) = &recs[2];
    assert_eq!((f.op, f.sectors), (Op::Flush, 0));
    assert!(f.has(TraceRecord::PREFLUSH | TraceRecord::FUA));
    assert_eq!(name.as_deref(), Some("jbd2/mmcblk0p2"));
    let (d, _) = &recs[3];
    assert_eq!(
        (d.op, d.sector, d.sectors, d.done_ns),
        (Op::Discard, 40960, 2048, Some(12_309_000_000))
    );
}

#[test]
fn fio_v2_and_v3() {
    let v2 = read_all(&sample("fio-v2.log"), &OpenOptions::default());
    assert_eq!(v2.len(), 4);
    assert_eq!(
        (v2[0].0.time_ns, v2[0].0.op, v2[0].0.sector, v2[0].0.sectors),
        (0, Op::Write, 2_097_152, 8)
    );
    assert_eq!(
        (v2[1].0.time_ns, v2[1].0.op, v2[1].0.sector, v2[1].0.sectors),
        (1_500_000, Op::Read, 40, 32)
    );
    assert_eq!((v2[2].0.op, v2[2].0.sectors), (Op::Flush, 0));
    assert_eq!(
        (v2[3].0.op, v2[3].0.sector, v2[3].0.sectors),
        (Op::Discard, 1, 2),
        "unaligned trim rounded out"
    );
    let r = open(sample("fio-v2.log"), &OpenOptions::default()).unwrap();
    assert_eq!(r.time_unit(), None);
    let v3 = read_all(&sample("fio-v3.log"), &OpenOptions::default());
    assert_eq!(v3.len(), 3);
    assert_eq!((v3[0].0.line, v3[0].0.time_ns), (4, 410_000));
    assert_eq!((v3[2].0.time_ns, v3[2].0.op), (2_391_000, Op::Read));
    let ms = OpenOptions {
        time_unit: Some(TimeUnit::Ms),
        ..Default::default()
    };
    let mut r = open(sample("fio-v3.log"), &ms).unwrap();
    assert_eq!(r.next_record().unwrap().unwrap().time_ns, 410_000_000);
    assert_eq!(r.time_unit(), Some(TimeUnit::Ms));
}

#[test]
fn msr_sample() {
    let rebase = OpenOptions {
        rebase: true,
        ..Default::default()
    };
    let mut r = open(sample("msr.csv"), &rebase).unwrap();
    let a = r.next_record().unwrap().unwrap();
    assert_eq!(r.first_time_ns(), Some(128_166_381_104_021_338 * 100));
    assert_eq!(
        (a.time_ns, a.op, a.sector, a.sectors, a.device, a.done_ns),
        (0, Op::Write, 2_097_152, 8, Some(2), Some(152_300))
    );
    assert_eq!(r.process_name(a.process.unwrap()), "src1");
    let b = r.next_record().unwrap().unwrap();
    assert_eq!(
        (b.time_ns, b.op, b.sector, b.sectors),
        (
            (128_166_381_104_263_004 - 128_166_381_104_021_338) * 100,
            Op::Read,
            17_432_152,
            128
        )
    );
    let c = r.next_record().unwrap().unwrap();
    assert_eq!((c.sector, c.sectors), (1, 2));
    assert_eq!(r.unaligned_count(), 1);
    assert_eq!(r.time_unit(), Some(TimeUnit::Ticks100Ns));
}

#[test]
fn spc_sample() {
    let recs = read_all(&sample("spc.csv"), &all_devices());
    assert_eq!(recs.len(), 3);
    let a = recs[0].0;
    assert_eq!(
        (a.time_ns, a.device, a.sector, a.sectors, a.op),
        (12_503_990_000, Some(0), 662_144, 16, Op::Write)
    );
    let b = recs[1].0;
    assert_eq!((b.device, b.op, b.sectors), (Some(3), Op::Read, 8));
    let c = recs[2].0;
    assert_eq!((c.op, c.sectors, c.time_ns), (Op::Write, 2, 12_600_000_000));
    let three = OpenOptions {
        device_id: Some(3),
        ..Default::default()
    };
    assert_eq!(read_all(&sample("spc.csv"), &three).len(), 2);
}

#[test]
fn ascii_simulators() {
    let d = read_all(&sample("disksim.trace"), &OpenOptions::default());
    assert_eq!(d.len(), 4);
    assert_eq!(
        (d[0].0.time_ns, d[0].0.op, d[0].0.sector, d[0].0.sectors),
        (12_750_000, Op::Read, 2_097_160, 8)
    );
    assert_eq!((d[1].0.time_ns, d[1].0.op), (13_018_250, Op::Write));
    assert_eq!((d[2].0.op, d[2].0.sync), (Op::Read, Some(true)));
    assert_eq!((d[3].0.op, d[3].0.sync), (Op::Write, Some(false)));
    let us = OpenOptions {
        time_unit: Some(TimeUnit::Us),
        ..Default::default()
    };
    assert_eq!(read_all(&sample("disksim.trace"), &us)[0].0.time_ns, 12_750);

    let m = read_all(&sample("mqsim.trace"), &OpenOptions::default());
    assert_eq!(m.len(), 3, "no final newline");
    assert_eq!(
        (
            m[0].0.time_ns,
            m[0].0.op,
            m[0].0.sector,
            m[0].0.sectors,
            m[0].0.device
        ),
        (1_250_000, Op::Read, 2_097_160, 8, Some(0))
    );
    assert_eq!((m[2].0.line, m[2].0.sector), (3, 8));
    let ps = OpenOptions {
        time_unit: Some(TimeUnit::Ps),
        ..Default::default()
    };
    assert_eq!(read_all(&sample("mqsim.trace"), &ps)[0].0.time_ns, 1_250);

    let s = read_all(&sample("ssdsim.ascii"), &OpenOptions::default());
    assert_eq!(s.len(), 3);
    assert_eq!(
        (s[1].0.op, s[1].0.sector, s[1].0.sectors),
        (Op::Read, 55_590, 6)
    );
    assert_eq!((s[2].0.time_ns, s[2].0.op), (26_214_000, Op::Write));
}

#[test]
fn pixel6a_sample_gzip_crlf() {
    let recs = read_all(&sample("pixel6a.csv.gz"), &OpenOptions::default());
    assert_eq!(recs.len(), 4);
    let (a, name) = &recs[0];
    assert_eq!(
        (a.line, a.time_ns, a.op, a.sector, a.sectors, a.pid, a.device),
        (
            2,
            653_406_907_265_000,
            Op::Read,
            206_567_552,
            8,
            Some(2757),
            Some(8 << 20)
        )
    );
    assert_eq!(name.as_deref(), Some("loop40"));
    assert_eq!(
        (recs[1].0.pid, recs[1].1.as_deref()),
        (Some(21515), None),
        "<...> has no name"
    );
    assert_eq!(
        recs[3].0.time_ns, 653_408_082_164_000,
        "float noise rounded"
    );
    assert_eq!(recs[3].1.as_deref(), Some("kworker/u17:0"));
    let rebase = OpenOptions {
        rebase: true,
        ..Default::default()
    };
    let r = read_all(&sample("pixel6a.csv.gz"), &rebase);
    assert_eq!((r[0].0.time_ns, r[1].0.time_ns), (0, 1_709_000));
}

#[test]
fn native_extended_columns() {
    let recs = read_all(&sample("native-extended.csv"), &all_devices());
    let a = recs[0].0;
    assert_eq!(
        (a.done_ns, a.device, a.flags),
        (Some(150_500), Some(0), TraceRecord::FUA | TraceRecord::META)
    );
    let f = recs[1].0;
    assert_eq!(
        (f.op, f.done_ns, f.flags),
        (Op::Flush, Some(20_000), TraceRecord::PREFLUSH)
    );
    let r = recs[2].0;
    assert_eq!((r.done_ns, r.device, r.pid), (None, Some(1), None));
    let r = open(sample("native-extended.csv"), &all_devices()).unwrap();
    assert_eq!(r.time_unit(), Some(TimeUnit::Us));
}

#[test]
fn malformed_samples_name_file_line_and_field() {
    let cases = [
        (
            "mmc-ftrace-bad-opcode.txt",
            fmt("mmc-ftrace"),
            2,
            "cmd_opcode",
        ),
        (
            "block-ftrace-bad-sector.txt",
            fmt("block-ftrace"),
            1,
            "sector",
        ),
        ("blkparse-bad-time.txt", fmt("blkparse"), 2, "time"),
        ("fio-bad-action.log", fmt("fio-iolog"), 3, "action"),
        ("msr-bad-type.csv", fmt("msr"), 2, "Type"),
        ("spc-bad-opcode.csv", fmt("spc"), 1, "opcode"),
        ("disksim-bad-flags.trace", fmt("disksim"), 2, "flags"),
        ("mqsim-bad-type.trace", fmt("mqsim"), 3, "type"),
        ("ssdsim-bad-fields.ascii", fmt("ssdsim"), 2, "fields"),
        ("pixel6a-bad-size.csv", fmt("pixel6a"), 3, "size"),
        ("biotracer-bad-flags.txt", fmt("biotracer"), 2, "flags"),
        ("native-bad-done.csv", fmt("native"), 2, "done_us"),
    ];
    for (name, format, line, field) in cases {
        let path = sample(&format!("bad/{name}"));
        let opts = OpenOptions {
            format: Some(format),
            all_devices: true,
            ..Default::default()
        };
        let mut r = open(&path, &opts).unwrap();
        let mut err = None;
        while let Some(rec) = r.next_record() {
            if let Err(e) = rec {
                err = Some(e);
                break;
            }
        }
        let err = err.unwrap_or_else(|| panic!("{name}: no error"));
        let (l, f, msg) = parse_err(&err);
        assert_eq!((l, f.as_str()), (line, field), "{name}: {msg}");
        assert!(msg.contains("expected"), "{name}: {msg}");
        let text = err.to_string();
        assert!(
            text.contains(name) && text.contains(&format!(":{line}:")),
            "{text}"
        );
    }
}

#[test]
fn backwards_time_is_an_error_and_reading_goes_on() {
    let opts = OpenOptions {
        format: Some(fmt("mqsim")),
        ..Default::default()
    };
    let mut r = open_bytes(b"10 0 0 8 1\n5 0 8 8 1\n20 0 16 8 1\n", "back.trace", &opts).unwrap();
    assert!(r.next_record().unwrap().is_ok());
    let e = r.next_record().unwrap().unwrap_err();
    let (line, field, msg) = parse_err(&e);
    assert_eq!((line, field.as_str()), (2, "time"));
    assert!(msg.contains("line 1"), "{msg}");
    assert_eq!(r.next_record().unwrap().unwrap().time_ns, 20);
}

#[test]
fn gzip_is_detected_by_magic_not_name() {
    let mut gz = flate2_bytes(b"1 0 0 8 1\n2 0 8 8 0\n");
    let opts = OpenOptions {
        format: Some(fmt("mqsim")),
        ..Default::default()
    };
    let mut r = open_bytes(&gz, "plain-name.trace", &opts).unwrap();
    assert_eq!(r.next_record().unwrap().unwrap().sector, 0);
    // a corrupt gzip stream is an I/O error, not a panic
    gz.truncate(gz.len() / 2);
    let mut r = open_bytes(&gz, "broken.gz", &opts).unwrap();
    let mut saw_err = false;
    while let Some(rec) = r.next_record() {
        saw_err |= rec.is_err();
    }
    assert!(saw_err);
}

fn flate2_bytes(data: &[u8]) -> Vec<u8> {
    // A gzip member holding one stored (uncompressed) deflate block.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    // one final stored deflate block
    out.push(1);
    let len = data.len() as u16;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The first error reading `path` gives (a multi-device trace read
/// without a choice fails at the first record of its second device).
fn first_error(path: &std::path::Path, opts: &OpenOptions) -> String {
    let mut r = open(path, opts).unwrap();
    std::iter::from_fn(|| r.next_record())
        .find_map(Result::err)
        .expect("an error")
        .to_string()
}

// ---- public files -------------------------------------------------------

#[test]
fn public_mqsim() {
    let Some(tpcc) = shared("mqsim-tpcc-small.trace") else {
        return;
    };
    assert_eq!(detect(&tpcc).unwrap(), fmt("mqsim"));
    assert_eq!(count(&tpcc, &all_devices()), 6_999);
    let e = first_error(&tpcc, &OpenOptions::default());
    assert!(e.contains("16 devices"), "{e}");
    let rebase = OpenOptions {
        all_devices: true,
        rebase: true,
        ..Default::default()
    };
    let mut r = open(&tpcc, &rebase).unwrap();
    let first = r.next_record().unwrap().unwrap();
    assert_eq!(
        (
            first.time_ns,
            first.device,
            first.sector,
            first.sectors,
            first.op
        ),
        (0, Some(4), 264_719_034, 16, Op::Write)
    );
    assert_eq!(r.first_time_ns(), Some(938_513_000));
    let wsrch = shared("mqsim-wsrch-small.trace").unwrap();
    let recs = read_all(&wsrch, &all_devices());
    assert_eq!(recs.len(), 24_783);
    // the README says "reads"; the file has 4 writes among them
    assert_eq!(
        recs.iter().filter(|(r, _)| r.op == Op::Read).count(),
        24_779
    );
    assert_eq!(recs.last().unwrap().0.line, 24_783);
}

#[test]
fn public_ssdsim_and_disksim() {
    let Some(ssd) = shared("ssdsim-example.ascii") else {
        return;
    };
    assert_eq!(detect(&ssd).unwrap(), fmt("ssdsim"));
    assert_eq!(count(&ssd, &all_devices()), 10_000);
    let ascii = shared("disksim-ascii.trace").unwrap();
    assert_eq!(detect(&ascii).unwrap(), fmt("disksim"));
    assert_eq!(count(&ascii, &all_devices()), 100_000);
    let e = first_error(&ascii, &OpenOptions::default());
    assert!(e.contains("14 devices") && e.contains("0, 3, 4, 5"), "{e}");
    let dev0 = OpenOptions {
        device_id: Some(0),
        ..Default::default()
    };
    assert_eq!(count(&ascii, &dev0), 8_062);
    let mut r = open(&ascii, &dev0).unwrap();
    let a = r.next_record().unwrap().unwrap();
    assert_eq!(a.device, Some(0));
    let pm = shared("disksim-ssd-postmark-aligned2.trace").unwrap();
    assert_eq!(detect(&pm).unwrap(), fmt("disksim"));
    assert_eq!(count(&pm, &OpenOptions::default()), 62_257);
    let mut r = open(&pm, &OpenOptions::default()).unwrap();
    let a = r.next_record().unwrap().unwrap();
    assert_eq!(
        (a.time_ns, a.sector, a.sectors, a.op),
        (7_961_833_000, 20_228_336, 8, Op::Write)
    );
}

#[test]
fn public_blkparse() {
    let Some(p) = shared("wiscsee-blkparse-output.txt") else {
        return;
    };
    assert_eq!(detect(&p).unwrap(), fmt("blkparse"));
    let recs = read_all(&p, &OpenOptions::default());
    // 161 R + 512 WS D events; the 4 `N` passthrough requests are skipped.
    assert_eq!(recs.len(), 673);
    assert_eq!(recs.iter().filter(|(r, _)| r.op == Op::Read).count(), 161);
    let (a, name) = &recs[0];
    assert_eq!(
        (a.line, a.time_ns, a.sector, a.sectors, a.pid),
        (2, 1_368_096, 540_544, 8, Some(5025))
    );
    assert_eq!(name.as_deref(), Some("systemd-udevd"));
    assert_eq!(a.device, Some(8 << 20 | 33));
    // this capture has D events only: no completion to pair
    assert!(recs.iter().all(|(r, _)| r.done_ns.is_none()));
}

#[test]
fn public_pixel6a() {
    let Some(p) = shared("pixel6a-telegram_exec.csv.gz") else {
        return;
    };
    assert_eq!(detect(&p).unwrap(), fmt("pixel6a"));
    let mut r = open(&p, &OpenOptions::default()).unwrap();
    let mut n = 0;
    let mut named = 0;
    let mut ops = [0usize; 4];
    let mut first = None;
    while let Some(rec) = r.next_record() {
        let rec = rec.unwrap();
        if n == 0 {
            first = Some((rec, r.process_name(rec.process.unwrap()).to_string()));
        }
        n += 1;
        named += usize::from(rec.process.is_some());
        ops[rec.op as usize] += 1;
    }
    assert_eq!(n, 251_879);
    assert_eq!(
        (ops[Op::Read as usize], ops[Op::Write as usize]),
        (24_094, 227_785)
    );
    assert!(named > n / 2);
    let (a, name) = first.unwrap();
    assert_eq!(name, "loop40");
    assert_eq!(
        (a.time_ns, a.sector, a.sectors, a.pid),
        (653_406_907_265_000, 206_567_552, 8, Some(2757))
    );
    for f in [
        "pixel6a-pubg_exec.csv.gz",
        "pixel6a-pubg_precond.csv.gz",
        "pixel6a-telegram_precond.csv.gz",
    ] {
        let p = shared(f).unwrap();
        assert_eq!(detect(&p).unwrap(), fmt("pixel6a"), "{f}");
        assert!(count(&p, &OpenOptions::default()) > 5_000);
    }
}

/// The composed BIOTracer sample: every field read, the four recorded
/// times kept (generate → issue, fetch, hardware submit, finish), the
/// driver's extra sector removed from 17 and 25 (not from 8 or 32), the
/// flags' direction bit honoured.
#[test]
fn biotracer_sample_fields_times_and_the_extra_sector() {
    let recs = read_all(&sample("biotracer.txt"), &OpenOptions::default());
    assert_eq!(recs.len(), 8);
    let (a, _) = recs[0];
    assert_eq!(
        (a.line, a.time_ns, a.op, a.sector, a.sectors),
        (1, 100_000_100_000, Op::Write, 1_048_576, 8)
    );
    assert_eq!(a.fetch_ns, Some(100_000_120_000));
    assert_eq!(a.device_start_ns, Some(100_000_130_000));
    assert_eq!(a.done_ns, Some(100_000_850_000));
    let sizes: Vec<u32> = recs.iter().map(|(r, _)| r.sectors).collect();
    assert_eq!(
        sizes,
        [8, 16, 8, 8, 32, 24, 72, 8],
        "17, 25 and 73 lose their extra sector"
    );
    let ops: Vec<Op> = recs.iter().map(|(r, _)| r.op).collect();
    assert_eq!(ops[3], Op::Read, "flags 0: a read");
    assert_eq!(ops[4], Op::Read, "flags 4: a read that did not wait");
    assert_eq!(ops[5], Op::Write, "flags 1: a write that waited");
    assert!(recs
        .iter()
        .all(|(r, _)| r.pid.is_none() && r.process.is_none()));
}

/// Located errors of the BIOTracer reader: field count, bytes that do not
/// match the sectors, times that go backwards along a line.
#[test]
fn biotracer_errors_name_line_and_field() {
    let cases: [(&str, &str); 4] = [
        ("1 8 4096 5 1.0 1.1 1.2", "fields"),
        ("1 8 4000 5 1.0 1.1 1.2 1.3", "bytes"),
        ("1 8 4096 5 1.0 0.9 1.2 1.3", "fetch"),
        ("1 8 4096 5 1.0 1.1 1.2 1.15", "finish"),
    ];
    for (line, field) in cases {
        let text = format!("8 8 4096 5 0.5 0.5 0.5 0.6\n{line}\n");
        let opts = OpenOptions {
            format: Some(fmt("biotracer")),
            ..Default::default()
        };
        let mut r = open_bytes(text.as_bytes(), "n5.log", &opts).unwrap();
        assert!(r.next_record().unwrap().is_ok());
        let e = r.next_record().unwrap().unwrap_err();
        let (l, f, msg) = parse_err(&e);
        assert_eq!((l, f.as_str()), (2, field), "{line}: {msg}");
        assert!(e.to_string().starts_with("n5.log:2:"), "{e}");
    }
}

/// The real Nexus 5 excerpt: detected, 200 records, all writes, every
/// record with its four times, sizes whole 4 KiB blocks after the quirk.
#[test]
fn public_biotracer_nexus5_excerpt() {
    let Some(p) = shared("nexus5-biotracer-excerpt.txt") else {
        return;
    };
    assert_eq!(detect(&p).unwrap(), fmt("biotracer"));
    let recs = read_all(&p, &OpenOptions::default());
    assert_eq!(recs.len(), 200);
    assert!(recs.iter().all(|(r, _)| r.op == Op::Write));
    assert!(
        recs.iter().all(|(r, _)| r.sectors % 8 == 0),
        "the +1 quirk removed"
    );
    assert!(recs.iter().all(|(r, _)| {
        let (t, f, s, d) = (
            r.time_ns,
            r.fetch_ns.unwrap(),
            r.device_start_ns.unwrap(),
            r.done_ns.unwrap(),
        );
        t <= f && f <= s && s <= d
    }));
    let (a, _) = recs[0];
    assert_eq!((a.sector, a.sectors), (4_220_896, 8));
    assert_eq!(a.device_start_ns, Some(1_398_406_382_757_241_486));
}

// ---- round trip and robustness ------------------------------------------

fn arb_record() -> impl Strategy<Value = (TraceRecord, Option<String>)> {
    (
        0u64..1_000_000_000_000,
        0usize..4,
        0u64..(1 << 40),
        1u32..100_000,
        proptest::option::of(any::<u32>()),
        proptest::option::of("[a-zA-Z0-9 ,\"/:._-]{1,20}"),
        proptest::option::of(any::<bool>()),
        proptest::option::of(0u64..1_000_000_000),
        proptest::option::of(any::<u32>()),
        0u8..64,
    )
        .prop_map(
            |(t, op, sector, sectors, pid, name, sync, lat, dev, flags)| {
                let op = [Op::Read, Op::Write, Op::Discard, Op::Flush][op];
                let (sector, sectors) = if op == Op::Flush {
                    (0, 0)
                } else {
                    (sector, sectors)
                };
                let mut r = TraceRecord::new(0, t, op, sector, sectors);
                r.pid = pid;
                r.sync = sync;
                r.done_ns = lat.map(|l| t + l);
                r.device = dev;
                r.flags = flags;
                let name = name.filter(|n| !n.trim().is_empty());
                r.process = name.as_ref().map(|_| 0);
                (r, name)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn native_round_trip(mut recs in proptest::collection::vec(arb_record(), 0..40)) {
        recs.sort_by_key(|(r, _)| r.time_ns);
        let mut w = NativeCsvWriter::new(Vec::new()).unwrap();
        for (r, name) in &recs {
            w.write(r, name.as_deref()).unwrap();
        }
        let bytes = w.into_inner().unwrap();
        let opts = OpenOptions { all_devices: true, ..Default::default() };
        let mut r = open_bytes(&bytes, "round.csv", &opts).unwrap();
        prop_assert_eq!(r.format_name(), "native-csv");
        for (i, (want, name)) in recs.iter().enumerate() {
            let got = r.next_record().unwrap().unwrap();
            prop_assert_eq!(got.line, i as u64 + 2);
            let got_name = got.process.map(|p| r.process_name(p).to_string());
            prop_assert_eq!(got_name.as_deref(), name.as_deref());
            let mut g = got;
            g.line = 0;
            g.process = want.process;
            prop_assert_eq!(&g, want);
        }
        prop_assert!(r.next_record().is_none());
    }

    #[test]
    fn no_input_makes_a_reader_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        for info in Format::all() {
            for all in [true, false] {
                let opts = OpenOptions { format: Some(*info), all_devices: all, ..Default::default() };
                if let Ok(mut r) = open_bytes(&bytes, "fuzz", &opts) {
                    for _ in 0..1000 {
                        if r.next_record().is_none() { break; }
                    }
                }
            }
        }
        let _ = detect_bytes(&bytes, "fuzz");
    }

    #[test]
    fn no_text_line_makes_a_reader_panic(lines in proptest::collection::vec(
        "[0-9a-fA-FxX ,.:\\[\\]()+=/<>_#-]{0,60}|mmc_request_(start|done): mmc0: (start|end) struct mmc_request\\[[0-9a-f]{1,4}\\]: cmd_opcode=[0-9]{1,2} cmd_arg=0x[0-9a-f]{1,8} blocks=[0-9]{1,3}|179,0 +[0-9] +[0-9]+ +[0-9.]+ +[0-9]+ +[DC] +[FWRSNM]{1,3} [0-9]+ \\+ [0-9]+ \\[[a-z0-9]*\\]",
        0..20)) {
        let prefixes = ["", " t-1 [000] .... 1.0: "];
        for p in prefixes {
            let text: String = lines.iter().map(|l| format!("{p}{l}\n")).collect();
            for info in Format::all() {
                let opts = OpenOptions { format: Some(*info), all_devices: true, ..Default::default() };
                if let Ok(mut r) = open_bytes(text.as_bytes(), "fuzz", &opts) {
                    while r.next_record().is_some() {}
                }
            }
        }
    }
}
