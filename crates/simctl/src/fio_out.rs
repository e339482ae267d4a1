//! fio's JSON output (`simctl run JOB.fio --output-format=json`), so
//! scripts that parse `fio --output-format=json` read a simulated run.
//!
//! The shape is fio's (`stat.c`, show_thread_status_json and
//! add_ddir_status_json): `fio version`, `timestamp`, `time`,
//! `global options`, `jobs[]` — one per clone, or one per reporting group
//! with `group_reporting` — each with `jobname`, `groupid`, `read`,
//! `write`, `trim` (`io_bytes`, `io_kbytes`, `bw_bytes`, `bw` in KiB/s,
//! `iops`, `runtime` in ms, `total_ios`, `slat_ns`/`clat_ns`/`lat_ns` with
//! `min`, `max`, `mean`, `stddev`, `N` and the completion-latency
//! `percentile` object), `sync`, the latency buckets and `disk_util`.
//! Every number comes from the simulation's own per-thread histograms
//! (hdrhistogram, 3 significant digits). Fields with no modelled meaning
//! carry what fio writes when it has none:
//!
//! * `slat_ns` is empty (`N` = 0): a call's latency is not split into
//!   submission and completion, so `clat_ns` and `lat_ns` are both the
//!   whole call (issue to return), as fio reports for its synchronous
//!   engines.
//! * `bw_min` ... `iops_samples` are 0: fio fills them from periodic
//!   bandwidth samples, which mmcsim does not take.
//! * `usr_cpu`, `sys_cpu`, `ctx`, `majf`, `minf`, `short_ios`,
//!   `drop_ios`, `error`, `eta` are 0; `timestamp` is 0 and `time` empty
//!   (the run is simulated; a wall clock would break determinism);
//!   `job options` and `global options` are empty.
//! * `iodepth_level` is 100 % at depth 1 for a synchronous engine (one
//!   call in flight); the depth distribution of an asynchronous engine is
//!   not measured (all 0), nor are `iodepth_submit`/`iodepth_complete`.
//! * `disk_util` (one entry, `mmcblk0`): `read_ios`/`write_ios` are the
//!   device requests, `read_ticks`/`write_ticks` their D→C times in ms
//!   (from the driver's fetch, not the kernel's allocation), `in_queue`
//!   their sum, `util` that sum over the run (exact at queue depth 1),
//!   capped at 100; merges are the block layer's, given to the one
//!   direction when the device saw one direction, else 0.
//!
//! `--output-format=json+` adds `bins` to `clat_ns`: the histogram's
//! buckets (upper value in ns → count), hdrhistogram's buckets rather than
//! fio's log-linear ones.

use mmcsim::sim::Report;
use mmcsim::stats::thread_io::{DirIo, ThreadIo};
use mmcsim::stats::LatencyHistogram;
use mmcsim::workload::fio_job::{FioReportJob, DEFAULT_PERCENTILES};
use mmcsim::workload::spec::JobSpec;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// What `run --output-format` writes to standard output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// mmcsim's summary table.
    #[default]
    Normal,
    /// fio's JSON output.
    Json,
    /// fio's JSON output with the latency histograms' buckets.
    #[value(name = "json+")]
    JsonPlus,
}

/// A JSON object that keeps its keys in insertion order (fio's order).
#[derive(Default)]
struct Obj(Vec<(String, Node)>);

/// A value of an [`Obj`]: a scalar, an object or a list of objects.
enum Node {
    Value(Value),
    Obj(Obj),
    List(Vec<Obj>),
}

impl Obj {
    fn put(mut self, k: &str, v: impl Into<Value>) -> Obj {
        self.0.push((k.to_string(), Node::Value(v.into())));
        self
    }
    fn obj(mut self, k: &str, v: Obj) -> Obj {
        self.0.push((k.to_string(), Node::Obj(v)));
        self
    }
    fn list(mut self, k: &str, v: Vec<Obj>) -> Obj {
        self.0.push((k.to_string(), Node::List(v)));
        self
    }
}

impl Serialize for Obj {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            match v {
                Node::Value(v) => m.serialize_entry(k, v)?,
                Node::Obj(o) => m.serialize_entry(k, o)?,
                Node::List(l) => m.serialize_entry(k, l)?,
            }
        }
        m.end()
    }
}

/// How each scenario job is reported: the fio job file's own entries, or
/// one per `[[jobs]]` entry of a scenario (its name, group 0, no group
/// reporting, fio's default percentiles).
pub fn report_jobs(jobs: &[JobSpec]) -> Vec<FioReportJob> {
    jobs.iter()
        .map(|j| FioReportJob {
            jobname: j.name.clone(),
            groupid: 0,
            group_reporting: false,
            percentiles: DEFAULT_PERCENTILES.to_vec(),
        })
        .collect()
}

/// One entry of `jobs[]`: its name, group, threads' results merged,
/// percentiles and engine depth.
struct Entry {
    info: FioReportJob,
    io: ThreadIo,
    synchronous: bool,
}

/// The entries: one per thread, or per reporting group with
/// `group_reporting`.
fn entries(report: &Report, jobs: &[FioReportJob], specs: &[JobSpec]) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for t in &report.thread_io {
        let Some(k) = t.job.map(|k| k as usize) else {
            continue;
        };
        let (Some(info), Some(spec)) = (jobs.get(k), specs.get(k)) else {
            continue;
        };
        let synchronous = !spec.submits_async();
        if info.group_reporting {
            if let Some(e) = out
                .iter_mut()
                .find(|e| e.info.group_reporting && e.info.groupid == info.groupid)
            {
                merge(&mut e.io, t);
                e.synchronous &= synchronous;
                continue;
            }
        }
        out.push(Entry {
            info: info.clone(),
            io: t.clone(),
            synchronous,
        });
    }
    out
}

fn merge(into: &mut ThreadIo, t: &ThreadIo) {
    into.read.merge(&t.read);
    into.write.merge(&t.write);
    into.sync.merge(&t.sync);
}

/// fio's JSON output of `report`, whose jobs `specs` are reported as
/// `jobs` says; `plus` adds the histogram buckets (`json+`).
pub fn json(report: &Report, jobs: &[FioReportJob], specs: &[JobSpec], plus: bool) -> String {
    let list: Vec<Obj> = entries(report, jobs, specs)
        .iter()
        .map(|e| job(e, plus))
        .collect();
    let root = Obj::default()
        .put(
            "fio version",
            format!("mmcsim-{}", env!("CARGO_PKG_VERSION")),
        )
        .put("timestamp", 0)
        .put("timestamp_ms", 0)
        .put("time", "")
        .obj("global options", Obj::default())
        .list("jobs", list)
        .list("disk_util", vec![disk_util(report)]);
    serde_json::to_string_pretty(&root).expect("JSON values serialize") + "\n"
}

/// One job's object.
fn job(e: &Entry, plus: bool) -> Obj {
    let io = &e.io;
    let span = |d: &DirIo| d.first_issue.map_or(0, |f| d.last_done.saturating_sub(f));
    let first = [&io.read, &io.write, &io.sync]
        .iter()
        .filter_map(|d| d.first_issue)
        .min();
    let last = io
        .read
        .last_done
        .max(io.write.last_done)
        .max(io.sync.last_done);
    let elapsed_ns = first.map_or(0, |f| last.saturating_sub(f));
    let total_ios = io.read.hist.count() + io.write.hist.count();
    let mut all = io.read.hist.clone();
    all.merge(&io.write.hist);
    let pct = &e.info.percentiles;
    Obj::default()
        .put("jobname", e.info.jobname.clone())
        .put("groupid", e.info.groupid)
        .put("error", 0)
        .put("eta", 0)
        .put("elapsed", elapsed_ns.div_ceil(1_000_000_000))
        .obj("job options", Obj::default())
        .obj("read", direction(&io.read, span(&io.read), pct, plus))
        .obj("write", direction(&io.write, span(&io.write), pct, plus))
        .obj("trim", direction(&DirIo::default(), 0, pct, plus))
        .obj(
            "sync",
            Obj::default()
                .put("total_ios", io.sync.hist.count())
                .obj("lat_ns", latency(&io.sync.hist, Some(pct), false)),
        )
        .put("job_runtime", elapsed_ns / 1_000_000)
        .put("usr_cpu", 0.0)
        .put("sys_cpu", 0.0)
        .put("ctx", 0)
        .put("majf", 0)
        .put("minf", 0)
        .obj(
            "iodepth_level",
            depth_levels(e.synchronous && total_ios > 0, false),
        )
        .obj("iodepth_submit", depth_levels(false, true))
        .obj("iodepth_complete", depth_levels(false, true))
        .obj("latency_ns", buckets(&all, 1, &BUCKETS_NU, None))
        .obj("latency_us", buckets(&all, 1_000, &BUCKETS_NU, None))
        .obj(
            "latency_ms",
            buckets(&all, 1_000_000, &BUCKETS_M, Some(2000)),
        )
}

/// A direction's object; `span_ns` is its active time.
fn direction(d: &DirIo, span_ns: u64, pct: &[f64], plus: bool) -> Obj {
    let n = d.hist.count();
    let runtime_ms = span_ns.div_ceil(1_000_000);
    // fio's formulas (add_ddir_status_json): bytes and I/Os per ms of
    // the direction's run time.
    let bw_bytes = (1000 * d.bytes).checked_div(runtime_ms).unwrap_or(0);
    let iops = if runtime_ms > 0 {
        1000.0 * n as f64 / runtime_ms as f64
    } else {
        0.0
    };
    let mut o = Obj::default()
        .put("io_bytes", d.bytes)
        .put("io_kbytes", d.bytes >> 10)
        .put("bw_bytes", bw_bytes)
        .put("bw", bw_bytes / 1024)
        .put("iops", iops)
        .put("runtime", runtime_ms)
        .put("total_ios", n)
        .put("short_ios", 0)
        .put("drop_ios", 0)
        .obj("slat_ns", latency(&LatencyHistogram::new(), None, false))
        .obj("clat_ns", latency(&d.hist, Some(pct), plus))
        .obj("lat_ns", latency(&d.hist, None, false));
    for k in [
        "bw_min",
        "bw_max",
        "bw_agg",
        "bw_mean",
        "bw_dev",
        "bw_samples",
        "iops_min",
        "iops_max",
        "iops_mean",
        "iops_stddev",
        "iops_samples",
    ] {
        o = o.put(k, 0);
    }
    o
}

/// `{min, max, mean, stddev, N}` of `h` in ns, with the `percentile`
/// object (fio's `%f` keys) when `pct` is given and `h` holds calls, and
/// the buckets with `bins`.
fn latency(h: &LatencyHistogram, pct: Option<&[f64]>, bins: bool) -> Obj {
    let n = h.count();
    let mut o = Obj::default()
        .put("min", h.min_ns())
        .put("max", h.max_ns())
        .put("mean", if n > 0 { h.mean_ns() } else { 0.0 })
        .put("stddev", if n > 0 { h.stddev_ns() } else { 0.0 })
        .put("N", n);
    if let (Some(pct), true) = (pct, n > 0) {
        let mut p = Obj::default();
        for &q in pct {
            p = p.put(&format!("{q:.6}"), h.percentile_ns(q));
        }
        o = o.obj("percentile", p);
        if bins {
            let mut b = Obj::default();
            for (v, c) in h.buckets() {
                b = b.put(&v.to_string(), c);
            }
            o = o.obj("bins", b);
        }
    }
    o
}

/// fio's latency bucket bounds of `latency_ns` and `latency_us`.
const BUCKETS_NU: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
/// fio's bucket bounds of `latency_ms` (then `>=2000`).
const BUCKETS_M: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// Percent of the calls of `h` in each bucket below each bound (in units
/// of `unit` ns) and at or above the previous one (fio's
/// `stat_calc_lat_n/u/m`); `over` adds the `>=over` bucket.
fn buckets(h: &LatencyHistogram, unit: u64, bounds: &[u64], over: Option<u64>) -> Obj {
    let total = h.count();
    let share = |c: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * c as f64 / total as f64
        }
    };
    // Below 1 µs the calls are in `latency_ns`, below 1 ms in
    // `latency_us`: each range starts at its unit (the ns one at 0).
    let mut prev = if unit == 1 { 0 } else { h.count_below(unit) };
    let mut o = Obj::default();
    for &b in bounds {
        let below = h.count_below(b * unit);
        o = o.put(&b.to_string(), share(below.saturating_sub(prev)));
        prev = below;
    }
    if let Some(v) = over {
        o = o.put(&format!(">={v}"), share(total - h.count_below(v * unit)));
    }
    o
}

/// fio's seven depth levels: 100 % at the first for a synchronous engine
/// (`one`), else all 0; `submit` names them as `iodepth_submit` does.
fn depth_levels(one: bool, submit: bool) -> Obj {
    let names: [&str; 7] = if submit {
        ["0", "4", "8", "16", "32", "64", ">=64"]
    } else {
        ["1", "2", "4", "8", "16", "32", ">=64"]
    };
    names.iter().enumerate().fold(Obj::default(), |o, (i, n)| {
        o.put(n, if one && i == 0 { 100.0 } else { 0.0 })
    })
}

/// The one `disk_util` entry.
fn disk_util(r: &Report) -> Obj {
    let d = &r.disk_io;
    let b = &r.block;
    let merges = b.back_merges + b.front_merges + b.plug_merges + b.request_merges;
    let (rm, wm) = match d.ios {
        [_, 0] => (merges, 0),
        [0, _] => (0, merges),
        _ => (0, 0),
    };
    let ticks = |i: usize| (d.ticks_ns[i] / 1_000_000) as u64;
    let busy = d.ticks_ns[0] + d.ticks_ns[1];
    let span = (r.workload.simulated_time_s * 1e9) as u128;
    let util = if span > 0 {
        (100.0 * busy as f64 / span as f64).min(100.0)
    } else {
        0.0
    };
    Obj::default()
        .put("name", "mmcblk0")
        .put("read_ios", d.ios[0])
        .put("write_ios", d.ios[1])
        .put("read_merges", rm)
        .put("write_merges", wm)
        .put("read_ticks", ticks(0))
        .put("write_ticks", ticks(1))
        .put("in_queue", ticks(0) + ticks(1))
        .put("util", util)
}
