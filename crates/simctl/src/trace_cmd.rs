//! `simctl trace`: list the formats, inspect a trace, convert it to the
//! native CSV. Everything streams: memory does not grow with the trace.

use anyhow::Result;
use mmcsim::stats::histogram::{LatencyHistogram, LatencySummary};
use mmcsim::types::{Op, SECTOR_BYTES};
use mmcsim::workload::trace::{self, Format, OpenOptions, TraceReader};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// `simctl trace formats`.
pub fn formats() -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for f in Format::all() {
        let unit = f
            .default_time_unit()
            .map_or("named by the header".to_string(), |u| u.name().to_string());
        let _ = writeln!(s, "{:<13} {}", f.name(), f.description());
        let _ = writeln!(s, "{:<13} default time unit: {unit}", "");
        let _ = writeln!(s, "{:<13} e.g. {}", "", f.example());
    }
    s
}

/// Request-size buckets of the inspection histogram, upper bounds in KiB.
const SIZE_BUCKETS_KIB: [u64; 9] = [4, 8, 16, 32, 64, 128, 256, 512, u64::MAX];

/// One operation's share of a trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OpStats {
    /// Records.
    pub count: u64,
    /// Bytes moved (0 for flushes).
    pub bytes: u64,
}

/// One process's share of a trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ProcessStats {
    /// Process id.
    pub pid: u32,
    /// Process name, where the trace has one.
    pub name: String,
    /// Records.
    pub requests: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Bytes read and written.
    pub bytes: u64,
}

/// One device's share of a multi-device trace (`simctl trace inspect`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeviceSummary {
    /// The device as the trace names it (`179,0` for a `dev_t`, else the
    /// id), and as `--device-id` takes it.
    pub device: String,
    /// The device's numeric id (`major << 20 | minor` for a `dev_t`).
    pub id: u32,
    /// Records.
    pub requests: u64,
    /// Bytes read, written and discarded.
    pub bytes: u64,
    /// Reads.
    pub read: OpStats,
    /// Writes.
    pub write: OpStats,
    /// Discards.
    pub discard: OpStats,
    /// Flushes.
    pub flush: OpStats,
    /// Fraction of data requests (reads and writes) that are reads.
    pub read_fraction: f64,
    /// Request sizes: (upper bound in KiB, or "larger", count).
    pub size_histogram: Vec<(String, u64)>,
    /// First timestamp on the device, ns as in the file.
    pub first_ns: u64,
    /// Last minus first timestamp on the device, s.
    pub span_s: f64,
}

/// What `simctl trace inspect` reports.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Inspection {
    /// The trace, as given.
    pub path: String,
    /// Detected (or forced) format.
    pub format: String,
    /// Why that format: what detection saw, or that it was forced.
    pub detection: String,
    /// Unit the timestamps were read in.
    pub time_unit: Option<String>,
    /// Records.
    pub requests: u64,
    /// First timestamp in the file, ns.
    pub first_ns: u64,
    /// Last minus first timestamp, s.
    pub span_s: f64,
    /// Reads, writes, discards and flushes.
    pub read: OpStats,
    /// Writes.
    pub write: OpStats,
    /// Discards.
    pub discard: OpStats,
    /// Flushes.
    pub flush: OpStats,
    /// Request sizes: (upper bound in KiB, or "larger", count).
    pub size_histogram: Vec<(String, u64)>,
    /// Fraction of data requests starting where the previous one ended.
    pub sequential_fraction: f64,
    /// Lowest sector addressed.
    pub min_sector: u64,
    /// One past the highest sector addressed.
    pub end_sector: u64,
    /// Recorded latency (issue to completion), where the trace has
    /// completions.
    pub recorded_latency_us: Option<LatencySummary>,
    /// Offsets or sizes that were not whole sectors (rounded).
    pub unaligned: u64,
    /// Per process, by pid.
    pub processes: Vec<ProcessStats>,
    /// Per device, by id, where the trace names devices (empty when it
    /// does not). Every device of the trace is read unless one is chosen
    /// with `--device-id`.
    pub devices: Vec<DeviceSummary>,
}

/// Counts of one set of records: by operation, size class and time.
#[derive(Clone, Debug, Default)]
struct Tally {
    requests: u64,
    ops: [OpStats; 4],
    sizes: [u64; SIZE_BUCKETS_KIB.len()],
    first: Option<u64>,
    last: u64,
}

impl Tally {
    fn add(&mut self, op: Op, time_ns: u64, bytes: u64) {
        self.requests += 1;
        self.first.get_or_insert(time_ns);
        self.last = self.last.max(time_ns);
        let o = &mut self.ops[match op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Discard => 2,
            Op::Flush => 3,
        }];
        o.count += 1;
        o.bytes += bytes;
        if op.has_data() {
            let kib = bytes.div_ceil(1024);
            let b = SIZE_BUCKETS_KIB
                .iter()
                .position(|&u| kib <= u)
                .unwrap_or(SIZE_BUCKETS_KIB.len() - 1);
            self.sizes[b] += 1;
        }
    }

    fn first_ns(&self) -> u64 {
        self.first.unwrap_or(0)
    }

    fn span_s(&self) -> f64 {
        (self.last - self.first_ns()) as f64 / 1e9
    }

    fn size_histogram(&self) -> Vec<(String, u64)> {
        SIZE_BUCKETS_KIB
            .iter()
            .zip(self.sizes)
            .map(|(&u, n)| {
                let label = if u == u64::MAX {
                    "larger".to_string()
                } else {
                    format!("<={u}KiB")
                };
                (label, n)
            })
            .collect()
    }

    fn device(&self, id: u32, label: String) -> DeviceSummary {
        let [read, write, discard, flush] = self.ops.clone();
        let data = read.count + write.count;
        DeviceSummary {
            device: label,
            id,
            requests: self.requests,
            bytes: read.bytes + write.bytes + discard.bytes,
            read_fraction: if data > 0 {
                read.count as f64 / data as f64
            } else {
                0.0
            },
            read,
            write,
            discard,
            flush,
            size_histogram: self.size_histogram(),
            first_ns: self.first_ns(),
            span_s: self.span_s(),
        }
    }
}

/// `simctl trace inspect`: every device of a multi-device trace is read
/// (and summarised apart) unless one is chosen.
pub fn inspect(path: &Path, opts: &OpenOptions) -> Result<Inspection> {
    let detection = match opts.format {
        Some(f) => format!("forced with --format {f}"),
        None => {
            let source = trace::common::Source::File(path.to_path_buf());
            format!("detected: {}", trace::detect::detect_explained(&source)?.1)
        }
    };
    let opts = OpenOptions {
        all_devices: opts.device_id.is_none(),
        ..opts.clone()
    };
    let mut r = trace::open(path, &opts)?;
    let mut i = Inspection {
        path: path.display().to_string(),
        format: r.format_name().to_string(),
        detection,
        time_unit: r.time_unit().map(|u| u.name().to_string()),
        min_sector: u64::MAX,
        ..Inspection::default()
    };
    let mut all = Tally::default();
    let mut devices: BTreeMap<u32, Tally> = BTreeMap::new();
    let mut procs: BTreeMap<u32, ProcessStats> = BTreeMap::new();
    let mut recorded = LatencyHistogram::new();
    let (mut prev_end, mut data, mut seq) = (None::<u64>, 0u64, 0u64);
    while let Some(rec) = r.next_record() {
        let rec = rec?;
        let bytes = if rec.op.has_data() || rec.op == Op::Discard {
            rec.sectors as u64 * SECTOR_BYTES
        } else {
            0
        };
        all.add(rec.op, rec.time_ns, bytes);
        if let Some(d) = rec.device {
            devices
                .entry(d)
                .or_default()
                .add(rec.op, rec.time_ns, bytes);
        }
        if rec.op != Op::Flush {
            i.min_sector = i.min_sector.min(rec.sector);
            i.end_sector = i.end_sector.max(rec.sector + rec.sectors as u64);
        }
        if rec.op.has_data() {
            data += 1;
            if prev_end == Some(rec.sector) {
                seq += 1;
            }
            prev_end = Some(rec.sector + rec.sectors as u64);
        }
        if let Some(d) = rec.done_ns {
            recorded.record(d.saturating_sub(rec.time_ns));
        }
        let pid = rec.pid.unwrap_or(0);
        let p = procs.entry(pid).or_insert_with(|| ProcessStats {
            pid,
            name: rec
                .process
                .map(|n| r.process_name(n).to_string())
                .unwrap_or_default(),
            ..ProcessStats::default()
        });
        p.requests += 1;
        p.reads += (rec.op == Op::Read) as u64;
        p.writes += (rec.op == Op::Write) as u64;
        p.bytes += if rec.op.has_data() { bytes } else { 0 };
    }
    i.requests = all.requests;
    [i.read, i.write, i.discard, i.flush] = all.ops.clone();
    i.first_ns = all.first_ns();
    i.span_s = all.span_s();
    i.size_histogram = all.size_histogram();
    if i.min_sector == u64::MAX {
        i.min_sector = 0;
    }
    i.sequential_fraction = if data > 0 {
        seq as f64 / data as f64
    } else {
        0.0
    };
    if recorded.count() > 0 {
        i.recorded_latency_us = Some(recorded.summary());
    }
    i.unaligned = r.unaligned_count();
    i.processes = procs.into_values().collect();
    i.devices = devices
        .iter()
        .map(|(&id, t)| t.device(id, r.device_label(id)))
        .collect();
    Ok(i)
}

/// The inspection as text.
pub fn inspection_table(i: &Inspection) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({}, times in {})",
        i.path,
        i.format,
        i.time_unit.as_deref().unwrap_or("-")
    );
    let _ = writeln!(s, "format {}", i.detection);
    let _ = writeln!(
        s,
        "requests {} over {:.3} s (first timestamp {} ns)",
        i.requests, i.span_s, i.first_ns
    );
    for (name, o) in [
        ("read", &i.read),
        ("write", &i.write),
        ("discard", &i.discard),
        ("flush", &i.flush),
    ] {
        let _ = writeln!(
            s,
            "  {name:<8} {:>10} requests {:>14} bytes",
            o.count, o.bytes
        );
    }
    let _ = writeln!(s, "sizes:");
    for (label, n) in &i.size_histogram {
        let _ = writeln!(s, "  {label:<10} {n:>10}");
    }
    let _ = writeln!(
        s,
        "sequential fraction {:.3} | sectors {}..{} ({:.2} GiB span) | unaligned {}",
        i.sequential_fraction,
        i.min_sector,
        i.end_sector,
        (i.end_sector.saturating_sub(i.min_sector)) as f64 / 2048.0 / 1024.0,
        i.unaligned
    );
    if let Some(l) = &i.recorded_latency_us {
        let _ = writeln!(
            s,
            "recorded latency µs: mean {:.1} p50 {:.1} p99 {:.1} max {:.1}",
            l.mean, l.p50, l.p99, l.max
        );
    }
    device_table(&mut s, &i.devices);
    let _ = writeln!(
        s,
        "{:>8} {:<28} {:>9} {:>9} {:>9} {:>14}",
        "pid", "process", "requests", "reads", "writes", "bytes"
    );
    for p in &i.processes {
        let _ = writeln!(
            s,
            "{:>8} {:<28} {:>9} {:>9} {:>9} {:>14}",
            p.pid, p.name, p.requests, p.reads, p.writes, p.bytes
        );
    }
    s
}

/// The per-device table of an inspection: one row per device (requests,
/// bytes, read share, flushes and discards, time span) and its size
/// classes; how to replay one of them when there are several.
fn device_table(s: &mut String, devices: &[DeviceSummary]) {
    use std::fmt::Write;
    if devices.is_empty() {
        return;
    }
    let _ = writeln!(s, "devices: {}", devices.len());
    let _ = writeln!(
        s,
        "  {:<10} {:>9} {:>14} {:>7} {:>8} {:>8} {:>9} {:>10}",
        "device", "requests", "bytes", "reads", "flushes", "discards", "span s", "first s"
    );
    for d in devices {
        let _ = writeln!(
            s,
            "  {:<10} {:>9} {:>14} {:>6.1}% {:>8} {:>8} {:>9.3} {:>10.3}",
            d.device,
            d.requests,
            d.bytes,
            100.0 * d.read_fraction,
            d.flush.count,
            d.discard.count,
            d.span_s,
            d.first_ns as f64 / 1e9
        );
        let sizes: Vec<String> = d
            .size_histogram
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        let _ = writeln!(s, "  {:<10} sizes: {}", "", sizes.join(", "));
    }
    if devices.len() > 1 {
        let _ = writeln!(
            s,
            "replay one device with --device-id {} (or all of them with --all-devices)",
            devices[0].device
        );
    }
}

/// `simctl trace convert --to csv`: writes the native CSV to `out`.
/// A failed write is a [`trace::Error::Output`], for the caller to name
/// the output.
pub fn convert(path: &Path, opts: &OpenOptions, out: &mut dyn Write) -> trace::Result<u64> {
    let mut r: Box<dyn TraceReader> = trace::open(path, opts)?;
    trace::write_native_csv(r.as_mut(), out)
}
