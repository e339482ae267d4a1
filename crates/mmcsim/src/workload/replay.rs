//! Trace replay: records are read one at a time from a streaming reader
//! and issued either at their recorded times (timed, open loop) or per
//! process when the previous record of that process completes, plus the
//! think time recorded between them (closed loop). Block-level records
//! enter below the file system: each becomes bios submitted straight to
//! the block stage, and its completion comes back through
//! [`Replay::bio_done`].
//!
//! The trace is read once, lazily, as the replay needs its records: the
//! first record's timestamp rebases the replay to start at zero, a record
//! addressing beyond the device is refused at its line unless `fit` says
//! how to map it (`wrap` maps each record on its own), and the record count
//! and highest sector are counted on the way. Only `fit = "compact"` reads
//! the trace twice: packing the touched 1 MiB regions densely needs all of
//! them before the first record is mapped.

use super::spec::{FitMode, ReplayMode, TraceSpec};
use crate::engine::{EventQueue, Slab};
use crate::error::{Error, Result};
use crate::host::blockdev::{Bio, Submitter};
use crate::host::{Below, Call, HostEvents};
use crate::stats::histogram::{LatencyHistogram, LatencySummary};
use crate::stats::report::{CallKind, Collector};
use crate::stats::DeviceTimes;
use crate::types::{IoPrio, Ns, Op, SECTOR_BYTES};
use crate::workload::service_compare::{Recorded, ServiceComparison, ServiceRow};
use crate::workload::trace::{OpenOptions, TraceReader, TraceRecord};
use crate::workload::validation::Validation;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

/// The most distinct processes (pids) a replayed trace may have.
pub const MAX_TRACE_PROCESSES: usize = 4096;

/// Timed replay: the most arrived records held in memory while their
/// processes wait for a request (`nr_requests` full). Beyond it the feed
/// stops reading the trace until the block layer admits one of them: a
/// record not yet read still arrives at its recorded time (its latency
/// counts from there), it is only issued when it is read. Memory is thus
/// bounded whatever the trace length. A held record does nothing until
/// its process is admitted, so whether it waits in memory or unread makes
/// no difference, except to a record of a process that is not waiting
/// which arrives behind a full backlog: it waits for the feed too.
pub const BACKLOG_RECORDS: usize = 4096;

/// Sectors per compaction region (1 MiB).
const REGION_SECTORS: u64 = 2048;

/// Opens `path` with the reader its format needs (detected from the
/// content unless `spec.format` names one).
pub(crate) fn open_reader(path: &Path, spec: &TraceSpec) -> Result<Box<dyn TraceReader>> {
    let opts = OpenOptions {
        format: spec.format,
        time_unit: spec.time_unit,
        device_id: spec.device_id,
        all_devices: spec.all_devices,
        // Rebasing is done here, so the report can show the original start.
        rebase: false,
    };
    Ok(crate::workload::trace::open(path, &opts)?)
}

/// The recorded completion time of a record, where its format has one.
fn recorded_done(r: &TraceRecord) -> Option<Ns> {
    r.done_ns
}

/// Touched 1 MiB regions as disjoint runs of consecutive regions, so the
/// memory is proportional to the runs (at most one per record), not to
/// the address span or the number of regions a large request covers.
#[derive(Clone, Debug, Default)]
struct Regions {
    /// Run start → one past its last region.
    runs: BTreeMap<u64, u64>,
}

impl Regions {
    /// Marks regions `a..b` touched.
    fn add(&mut self, mut a: u64, mut b: u64) {
        if let Some((&s, &e)) = self.runs.range(..=a).next_back() {
            if e >= a {
                a = s;
                b = b.max(e);
                self.runs.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.runs.range(a..).next() {
            if s > b {
                break;
            }
            b = b.max(e);
            self.runs.remove(&s);
        }
        self.runs.insert(a, b);
    }

    /// Touched regions in all.
    fn count(&self) -> u64 {
        self.runs.iter().map(|(s, e)| e - s).sum()
    }

    /// The runs with the rank of their first region among all touched
    /// regions, ascending.
    fn ranked(&self) -> Vec<(u64, u64, u64)> {
        let mut rank = 0;
        self.runs
            .iter()
            .map(|(&s, &e)| {
                let r = (s, e, rank);
                rank += e - s;
                r
            })
            .collect()
    }
}

/// The touched 1 MiB regions of a trace (the measuring pass of
/// `fit = "compact"`, the only fit that needs one).
fn scan_regions(path: &Path, spec: &TraceSpec) -> Result<Regions> {
    let mut reader = open_reader(path, spec)?;
    let mut regions = Regions::default();
    while let Some(r) = reader.next_record() {
        let r = r?;
        if r.op != Op::Flush {
            let last = (r.sector + r.sectors as u64).saturating_sub(1) / REGION_SECTORS;
            regions.add(r.sector / REGION_SECTORS, last + 1);
        }
    }
    Ok(regions)
}

/// How sectors of the trace land on the device.
#[derive(Clone, Debug)]
struct Fit {
    mode: FitMode,
    capacity: u64,
    /// Touched runs `(first region, one past the last, rank of the first)`.
    regions: Vec<(u64, u64, u64)>,
}

impl Fit {
    fn map(&self, sector: u64, sectors: u32) -> u64 {
        match self.mode {
            FitMode::Error => sector,
            FitMode::Wrap => {
                // Keep the whole request on the device.
                let room = self.capacity - sectors as u64;
                if sector <= room {
                    sector
                } else {
                    sector % (room + 1)
                }
            }
            FitMode::Compact => {
                let g = sector / REGION_SECTORS;
                let i = self.regions.partition_point(|&(s, _, _)| s <= g);
                let (s, e, base) = self.regions[i - 1];
                debug_assert!(g < e, "every touched region was scanned");
                (base + g - s) * REGION_SECTORS + sector % REGION_SECTORS
            }
        }
    }
}

/// The trace part of the report.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct TraceInfo {
    /// The trace, as given.
    pub path: String,
    /// Its format.
    pub format: String,
    /// The unit its timestamps were read in (`None` for formats without
    /// timestamps, e.g. fio iolog v2).
    pub time_unit: Option<String>,
    /// `timed` or `closed`.
    pub mode: ReplayMode,
    /// Time scale of timed replay.
    pub speed: f64,
    /// Records in the trace.
    pub records: u64,
    /// The first record's original timestamp, ns: replay starts it at 0.
    pub rebased_from_ns: Ns,
    /// One past the highest sector the trace addresses.
    pub highest_sector: u64,
    /// How out-of-capacity records were mapped.
    pub fit: FitMode,
    /// Records whose sector the fit changed.
    pub remapped: u64,
    /// Touched 1 MiB regions (compact fit), else 0.
    pub regions: u64,
    /// Byte offsets or lengths that were not whole sectors (rounded).
    pub unaligned: u64,
    /// Latency the trace itself recorded (issue to completion), where its
    /// format has completions; beside the simulated `latency_us`.
    pub recorded_latency_us: Option<LatencySummary>,
    /// Recorded against simulated device service medians per direction and
    /// size class, where the trace records when each request reached the
    /// hardware (BIOTracer); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_vs_simulated: Option<Vec<ServiceRow>>,
    /// Recorded against simulated device service and total latency, whole
    /// distributions with the Kolmogorov–Smirnov distance, per direction
    /// and size class, where the trace records completions; absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    /// The preconditioning trace, if any.
    pub precondition: Option<PreconditionTrace>,
    /// How far timed replay fell behind the trace; absent when every
    /// record was issued at its arrival.
    #[serde(skip_serializing_if = "Backlog::is_empty")]
    pub backlog: Backlog,
}

/// What a preconditioning trace did.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct PreconditionTrace {
    /// The trace, as given.
    pub path: String,
    /// Write records applied.
    pub writes: u64,
    /// Discard records applied.
    pub discards: u64,
    /// Sectors written.
    pub sectors_written: u64,
}

/// How far timed replay fell behind its trace (JSON `trace.backlog`, when
/// any record waited): records that arrived while their process waited for
/// a request wait in the feed, at most [`BACKLOG_RECORDS`] of them in
/// memory; beyond that the trace is not read until one is admitted, so the
/// depth in records is known up to that bound, and in time exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Backlog {
    /// Records issued after their arrival time (their process waited for
    /// a request when they arrived).
    #[serde(rename = "records_deferred")]
    pub deferred: u64,
    /// The most records held in memory at once (arrived, not issued; at
    /// most [`BACKLOG_RECORDS`] + 1).
    #[serde(rename = "max_records_held")]
    pub max_held: u64,
    /// The longest a record waited between its arrival and its issue, ns:
    /// how far behind the trace the replay fell.
    #[serde(rename = "max_wait_ns")]
    pub max_wait_ns: Ns,
}

impl Backlog {
    /// True when no record waited (the section is left out of reports).
    pub fn is_empty(&self) -> bool {
        self.deferred == 0
    }
}

/// Per-process state of trace replay.
#[derive(Default)]
struct Process {
    thread: u32,
    pid: u32,
    /// Closed loop: records read ahead. Timed: records that arrived while
    /// the process waited for a request, in arrival order.
    queue: VecDeque<TraceRecord>,
    /// Recorded issue and completion of the previous record.
    prev: Option<(Ns, Option<Ns>)>,
}

/// The trace being replayed.
struct TraceFeed {
    reader: Box<dyn TraceReader>,
    spec: TraceSpec,
    /// Timed mode: the next record to issue.
    next: Option<TraceRecord>,
    eof: bool,
    capacity: u64,
    fit: Fit,
    /// The first record's timestamp (replay time 0), once it is read.
    base_ns: Option<Ns>,
    info: TraceInfo,
    recorded: LatencyHistogram,
    /// The processes by thread index − `thread_base` (in order of first
    /// sight).
    procs: Vec<Process>,
    /// pid → index in `procs`.
    index_of: BTreeMap<u32, u32>,
    /// The last pid looked up and its index (records of one process
    /// mostly follow each other).
    last: Option<(u32, u32)>,
    thread_base: u32,
    /// Timed: records held in processes' queues.
    held: usize,
    /// Timed: `next` has arrived but the backlog is full; the trace is not
    /// read further until an admission makes room.
    stalled: bool,
    /// Timed: threads whose queue holds records, in the order they began
    /// to wait.
    waiting: Vec<u32>,
    backlog: Backlog,
    /// Timed: records placed (issued or held), held records issued and
    /// waiting processes visited on admissions: an operation count
    /// guarding the feed's linear cost (not in the report).
    ops: u64,
}

impl TraceFeed {
    /// Opens the trace of `spec` (path resolved by the caller) for
    /// records within `capacity` sectors (unless a fit is chosen); traced
    /// processes get thread indices from `thread_base` on. Only a compact
    /// fit reads the trace here (its touched regions); otherwise nothing is
    /// read before the first record is needed.
    fn open(path: &Path, spec: &TraceSpec, capacity: u64, thread_base: u32) -> Result<TraceFeed> {
        let regions = if spec.fit == FitMode::Compact {
            let r = scan_regions(path, spec)?;
            if r.count() * REGION_SECTORS > capacity {
                return Err(Error::TraceTooLarge {
                    path: path.to_path_buf(),
                    touched_mib: r.count(),
                    capacity_mib: capacity / 2048,
                });
            }
            r
        } else {
            Regions::default()
        };
        let reader = open_reader(path, spec)?;
        let info = TraceInfo {
            path: spec.path.display().to_string(),
            format: reader.format_name().to_string(),
            time_unit: reader.time_unit().map(|u| u.name().to_string()),
            mode: spec.mode,
            speed: spec.speed,
            records: 0,
            rebased_from_ns: 0,
            highest_sector: 0,
            fit: spec.fit,
            remapped: 0,
            regions: regions.count(),
            unaligned: 0,
            recorded_latency_us: None,
            recorded_vs_simulated: None,
            validation: None,
            precondition: None,
            backlog: Backlog::default(),
        };
        Ok(TraceFeed {
            reader,
            spec: spec.clone(),
            next: None,
            eof: false,
            capacity,
            fit: Fit {
                mode: spec.fit,
                capacity,
                regions: regions.ranked(),
            },
            base_ns: None,
            info,
            recorded: LatencyHistogram::new(),
            procs: Vec::new(),
            index_of: BTreeMap::new(),
            last: None,
            thread_base,
            held: 0,
            ops: 0,
            stalled: false,
            waiting: Vec::new(),
            backlog: Backlog::default(),
        })
    }

    /// True while records remain to be issued.
    fn has_next(&self) -> bool {
        !self.eof || self.next.is_some() || self.procs.iter().any(|p| !p.queue.is_empty())
    }

    /// Records what preconditioning from a trace did, for the report.
    fn set_precondition(&mut self, p: Option<PreconditionTrace>) {
        self.info.precondition = p;
    }

    /// The report's trace section.
    fn info(&self) -> TraceInfo {
        let mut i = self.info.clone();
        i.unaligned = self.reader.unaligned_count();
        i.backlog = self.backlog;
        if self.recorded.count() > 0 {
            i.recorded_latency_us = Some(self.recorded.summary());
        }
        i
    }

    /// Replay time of a recorded timestamp: rebased to zero and scaled.
    fn replay_time(&self, t: Ns) -> Ns {
        let t = t.saturating_sub(self.base_ns.unwrap_or(0));
        if self.spec.speed == 1.0 {
            t
        } else {
            (t as f64 / self.spec.speed).round() as Ns
        }
    }

    /// An error at `line` of the trace, in `field`.
    fn located(&self, line: u64, field: &str, message: String) -> Error {
        Error::Parse {
            path: self.reader.path().to_path_buf(),
            line,
            field: field.into(),
            message,
        }
    }

    /// Reads the next record, applying the capacity check and the fit.
    fn read(&mut self) -> Result<Option<TraceRecord>> {
        if self.eof {
            return Ok(None);
        }
        let mut r = match self.reader.next_record() {
            None => {
                self.eof = true;
                return Ok(None);
            }
            Some(r) => r?,
        };
        self.info.records += 1;
        if self.base_ns.is_none() {
            self.base_ns = Some(r.time_ns);
            self.info.rebased_from_ns = r.time_ns;
        }
        let pid = r.pid.unwrap_or(0);
        if self.procs.len() >= MAX_TRACE_PROCESSES && self.index(pid).is_none() {
            let message = format!(
                "pid {pid} is the trace's {}th distinct process: at most {MAX_TRACE_PROCESSES} are replayed (each costs its own statistics)",
                MAX_TRACE_PROCESSES + 1
            );
            return Err(self.located(r.line, "pid", message));
        }
        let at = self.replay_time(r.time_ns);
        if at > crate::engine::MAX_SIM_NS {
            let message = format!(
                "time overflows the simulated clock at line {}: {} ns after the first record{} is beyond the limit of {}",
                r.line,
                at,
                if self.spec.speed == 1.0 {
                    String::new()
                } else {
                    format!(" at speed {}", self.spec.speed)
                },
                crate::engine::MAX_SIM_TEXT
            );
            return Err(self.located(r.line, "time", message));
        }
        if let Some(d) = recorded_done(&r) {
            self.recorded.record(d.saturating_sub(r.time_ns));
        }
        if r.op != Op::Flush {
            let end = r.sector + r.sectors as u64;
            self.info.highest_sector = self.info.highest_sector.max(end);
            if end > self.capacity && self.spec.fit == FitMode::Error {
                let message = format!(
                    "the trace addresses sector {} ({:.1} GiB) on this line but the modelled device's capacity is {} sectors ({:.1} GiB); use a bigger device profile (--device), or map the trace with --fit wrap (sector modulo capacity) or --fit compact (touched 1 MiB regions packed densely)",
                    end - 1,
                    end as f64 / 2048.0 / 1024.0,
                    self.capacity,
                    self.capacity as f64 / 2048.0 / 1024.0
                );
                return Err(self.located(r.line, "sector", message));
            }
            let mapped = self.fit.map(r.sector, r.sectors);
            if mapped != r.sector {
                self.info.remapped += 1;
                r.sector = mapped;
            }
            if r.sector + r.sectors as u64 > self.capacity {
                return Err(self.located(
                    r.line,
                    "sectors",
                    format!(
                        "a request of {} sectors does not fit the modelled device of {} sectors",
                        r.sectors, self.capacity
                    ),
                ));
            }
        }
        Ok(Some(r))
    }

    /// The process of `pid`, registered (with a thread index) on first
    /// sight.
    fn process(
        &mut self,
        pid: u32,
        process: Option<u32>,
        collector: &mut Collector,
    ) -> &mut Process {
        let i = match self.index(pid) {
            Some(i) => i,
            None => {
                let i = self.procs.len() as u32;
                let thread = self.thread_base + i;
                let name = match process {
                    Some(p) => self.reader.process_name(p).to_string(),
                    None => format!("pid {pid}"),
                };
                collector.add_thread(thread, &name, pid);
                self.index_of.insert(pid, i);
                self.procs.push(Process {
                    thread,
                    pid,
                    ..Process::default()
                });
                i
            }
        };
        self.last = Some((pid, i));
        &mut self.procs[i as usize]
    }

    /// The index in `procs` of `pid`, if seen.
    fn index(&self, pid: u32) -> Option<u32> {
        match self.last {
            Some((p, i)) if p == pid => Some(i),
            _ => self.index_of.get(&pid).copied(),
        }
    }

    /// The pid of thread index `thread`.
    fn pid_of(&self, thread: u32) -> u32 {
        self.procs[(thread - self.thread_base) as usize].pid
    }

    /// The process of thread index `thread`.
    fn of_thread(&mut self, thread: u32) -> &mut Process {
        &mut self.procs[(thread - self.thread_base) as usize]
    }
}

/// Applies a preconditioning trace's writes and discards to the device of
/// `capacity` sectors, untimed and unmeasured, through `device(op,
/// sector, sectors)` (the set-up code owns the device: a workload never
/// names it).
pub fn precondition(
    capacity: u64,
    device: &mut dyn FnMut(Op, u64, u64),
    path: &Path,
    shown: &Path,
    spec: &TraceSpec,
) -> Result<PreconditionTrace> {
    let pspec = TraceSpec {
        path: PathBuf::from(path),
        precondition: None,
        ..spec.clone()
    };
    let mut feed = TraceFeed::open(path, &pspec, capacity, 0)?;
    let mut out = PreconditionTrace {
        path: shown.display().to_string(),
        writes: 0,
        discards: 0,
        sectors_written: 0,
    };
    while let Some(r) = feed.read()? {
        match r.op {
            Op::Write => {
                device(Op::Write, r.sector, r.sectors as u64);
                out.writes += 1;
                out.sectors_written += r.sectors as u64;
            }
            Op::Discard => {
                device(Op::Discard, r.sector, r.sectors as u64);
                out.discards += 1;
            }
            Op::Read | Op::Flush => {}
        }
    }
    Ok(out)
}

/// Events of trace replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayEvent {
    /// Timed replay: the next trace record is due.
    Arrival,
    /// Closed-loop replay: the traced process with this thread index
    /// issues its next record.
    Next(u32),
}

/// An event type that can carry replay's events and those below it.
pub trait ReplayEvents: From<ReplayEvent> + HostEvents {}
impl<E: From<ReplayEvent> + HostEvents> ReplayEvents for E {}

/// A trace being replayed: the feed and the records in flight.
pub struct Replay {
    feed: TraceFeed,
    calls: Slab<Call>,
    /// Writes waiting for their pre-flush, by call id.
    after_flush: Vec<Option<Bio>>,
    bios: Vec<Bio>,
    max_bio_sectors: u32,
    /// By call id: what the trace recorded of the record (operation,
    /// length, device service and total latency), when it records a
    /// completion.
    recorded_service: Vec<Option<Recorded>>,
    service: ServiceComparison,
}

impl Replay {
    /// Opens the trace of `spec` (path resolved by the caller),
    /// refusing records beyond `capacity` sectors unless a fit is chosen;
    /// traced processes get thread indices from `thread_base` on; bios are
    /// at most `max_bio_sectors`.
    pub fn open(
        path: &Path,
        spec: &TraceSpec,
        capacity: u64,
        thread_base: u32,
        max_bio_sectors: u32,
        precondition: Option<PreconditionTrace>,
    ) -> Result<Replay> {
        let mut feed = TraceFeed::open(path, spec, capacity, thread_base)?;
        feed.set_precondition(precondition);
        Ok(Replay {
            feed,
            calls: Slab::with_capacity(256),
            after_flush: Vec::new(),
            bios: Vec::with_capacity(64),
            max_bio_sectors,
            recorded_service: Vec::new(),
            service: ServiceComparison::default(),
        })
    }

    /// True while records remain to be issued.
    pub fn has_next(&self) -> bool {
        self.feed.has_next()
    }

    /// Records in flight.
    pub fn calls_in_progress(&self) -> usize {
        self.calls.len()
    }

    /// The report's trace section.
    pub fn info(&self) -> TraceInfo {
        let mut i = self.feed.info();
        i.recorded_vs_simulated = self.service.rows();
        i.validation = self.service.validation();
        i
    }

    /// How far timed replay fell behind its trace.
    pub fn backlog(&self) -> Backlog {
        self.feed.backlog
    }

    /// Handles a replay event.
    pub fn handle<E: ReplayEvents>(
        &mut self,
        now: Ns,
        ev: ReplayEvent,
        b: &mut Below<E>,
    ) -> Result<()> {
        match ev {
            ReplayEvent::Arrival => self.arrival(now, b),
            ReplayEvent::Next(t) => self.next(now, t, b),
        }
    }

    /// A bio of record `id` (its [`Submitter::Replay`]) completed on the
    /// device (`times`); the record completes with its last bio, and in
    /// closed loop its process then issues its next record.
    pub fn bio_done<E: ReplayEvents>(
        &mut self,
        now: Ns,
        id: u32,
        times: DeviceTimes,
        b: &mut Below<E>,
    ) -> Result<()> {
        if !self.calls[id].bio_done(times, now) {
            return Ok(());
        }
        if let Some(write) = self.after_flush.get_mut(id as usize).and_then(Option::take) {
            // The pre-flush is done: now the write (blk-flush's
            // REQ_FSEQ_PREFLUSH then REQ_FSEQ_DATA).
            self.submit_split(now, id, write, b);
            return Ok(());
        }
        if let Some(rec) = self
            .recorded_service
            .get_mut(id as usize)
            .and_then(Option::take)
        {
            // Device service: the (last) command issued on the bus → the
            // device done; total: the record's submission → now.
            let service = times.done.saturating_sub(times.start);
            let total = now.saturating_sub(self.calls[id].issue);
            self.service.record(rec, service, total);
        }
        let c = self.calls.remove(id);
        let thread = c.thread;
        c.finish(now, b.collector);
        self.call_done(now, thread, b)
    }

    /// Schedules the start of trace replay.
    pub fn start<E: ReplayEvents>(
        &mut self,
        q: &mut EventQueue<E>,
        collector: &mut Collector,
    ) -> Result<()> {
        let feed = &mut self.feed;
        match feed.spec.mode {
            ReplayMode::Timed => {
                feed.next = feed.read()?;
                if let Some(r) = &feed.next {
                    let at = feed.replay_time(r.time_ns);
                    q.at(at, ReplayEvent::Arrival);
                }
            }
            ReplayMode::Closed => {
                // Discover the first process; the others start as the
                // read-ahead meets them.
                self.closed_read_ahead(None, q, collector)?;
            }
        }
        Ok(())
    }

    /// Timed replay: the due record is issued (or held, when its process
    /// waits for a request) and the next one is scheduled.
    fn arrival<E: ReplayEvents>(&mut self, now: Ns, b: &mut Below<E>) -> Result<()> {
        let Some(r) = self.feed.next.take() else {
            return Ok(());
        };
        if !self.place(now, r, b) {
            return Ok(());
        }
        let feed = &mut self.feed;
        feed.next = feed.read()?;
        if let Some(r) = &feed.next {
            // A performance hint only (`device::warm`), carried down with
            // the next request.
            b.hint(r.sector, r.op == Op::Write);
            let at = feed.replay_time(r.time_ns);
            b.q.at(at, ReplayEvent::Arrival);
        }
        Ok(())
    }

    /// Timed replay: record `r`, arrived by `now`, is issued now, unless
    /// its process waits for a request (or holds earlier records): then it
    /// is held in the process's queue and does nothing until the process
    /// is admitted (a task asleep in `get_request` submits nothing, so it
    /// does not run the queue either). When the backlog is full it stays
    /// the feed's next record and reading stops (returns false).
    fn place<E: ReplayEvents>(&mut self, now: Ns, r: TraceRecord, b: &mut Below<E>) -> bool {
        let feed = &mut self.feed;
        feed.ops += 1;
        let pid = r.pid.unwrap_or(0);
        let proc = feed.process(pid, r.process, b.collector);
        let (thread, holds) = (proc.thread, !proc.queue.is_empty());
        if !holds && !b.raw_blocked(thread) {
            let at = feed.replay_time(r.time_ns);
            self.issue_record(now, at, &r, thread, b);
            return true;
        }
        if feed.held >= BACKLOG_RECORDS {
            feed.next = Some(r);
            feed.stalled = true;
            feed.backlog.max_held = feed.backlog.max_held.max(feed.held as u64 + 1);
            return false;
        }
        if !holds {
            feed.waiting.push(thread);
        }
        feed.held += 1;
        feed.backlog.max_held = feed.backlog.max_held.max(feed.held as u64);
        feed.of_thread(thread).queue.push_back(r);
        true
    }

    /// Timed replay, after the block layer may have admitted a waiting
    /// process (a request completed): each waiting process that is no
    /// longer blocked issues its held records in order until it waits
    /// again; then, if the feed had stopped on a full backlog, the records
    /// that arrived meanwhile are read and placed in order, and the first
    /// one still to come is scheduled.
    pub fn admitted<E: ReplayEvents>(&mut self, now: Ns, b: &mut Below<E>) -> Result<()> {
        let mut i = 0;
        while i < self.feed.waiting.len() {
            let thread = self.feed.waiting[i];
            self.feed.ops += 1;
            loop {
                if b.raw_blocked(thread) {
                    break;
                }
                let feed = &mut self.feed;
                let Some(r) = feed.of_thread(thread).queue.pop_front() else {
                    break;
                };
                feed.held -= 1;
                feed.ops += 1;
                let at = feed.replay_time(r.time_ns);
                self.issue_record(now, at, &r, thread, b);
            }
            let feed = &mut self.feed;
            let proc = feed.of_thread(thread);
            if proc.queue.is_empty() {
                if proc.queue.capacity() > 64 {
                    proc.queue = VecDeque::new();
                }
                feed.waiting.remove(i);
            } else {
                i += 1;
            }
        }
        if !self.feed.stalled {
            return Ok(());
        }
        self.feed.stalled = false;
        let r = self
            .feed
            .next
            .take()
            .expect("a stalled feed holds its next record");
        if !self.place(now, r, b) {
            return Ok(());
        }
        loop {
            let feed = &mut self.feed;
            feed.next = feed.read()?;
            let Some(r) = &feed.next else {
                return Ok(());
            };
            let at = feed.replay_time(r.time_ns);
            if at > now {
                b.q.at(at, ReplayEvent::Arrival);
                return Ok(());
            }
            let r = self.feed.next.take().expect("just read");
            if !self.place(now, r, b) {
                return Ok(());
            }
        }
    }

    /// Trace-feed operations so far (timed replay): records placed,
    /// held records issued, waiting processes visited on admissions.
    pub fn feed_ops(&self) -> u64 {
        self.feed.ops
    }

    /// True when timed replay holds records or has stopped reading: the
    /// core then calls [`Replay::admitted`] after each completion.
    pub fn holds_records(&self) -> bool {
        self.feed.held > 0 || self.feed.stalled
    }

    /// Closed loop: reads records until process `want` has one queued (or
    /// the trace ends), queuing the others' records and scheduling each
    /// newly seen process to start at its first record's time.
    fn closed_read_ahead<E: ReplayEvents>(
        &mut self,
        want: Option<u32>,
        q: &mut EventQueue<E>,
        collector: &mut Collector,
    ) -> Result<()> {
        loop {
            let feed = &mut self.feed;
            if let Some(p) = want {
                if feed
                    .index(p)
                    .is_some_and(|i| !feed.procs[i as usize].queue.is_empty())
                {
                    return Ok(());
                }
            }
            let Some(r) = feed.read()? else {
                return Ok(());
            };
            let pid = r.pid.unwrap_or(0);
            let at = feed.replay_time(r.time_ns);
            let new = feed.index(pid).is_none();
            let proc = feed.process(pid, r.process, collector);
            proc.queue.push_back(r);
            if new {
                let thread = proc.thread;
                q.at(at, ReplayEvent::Next(thread));
                if want.is_none() {
                    return Ok(());
                }
            }
        }
    }

    /// Closed loop: process of thread `thread` issues its next record.
    fn next<E: ReplayEvents>(&mut self, now: Ns, thread: u32, b: &mut Below<E>) -> Result<()> {
        let proc = self.feed.of_thread(thread);
        let Some(r) = proc.queue.pop_front() else {
            return Ok(());
        };
        proc.prev = Some((r.time_ns, recorded_done(&r)));
        self.issue_record(now, now, &r, thread, b);
        Ok(())
    }

    /// Closed loop: a traced process's record completed at `now`; its next
    /// record follows after the recorded think time.
    fn call_done<E: ReplayEvents>(&mut self, now: Ns, thread: u32, b: &mut Below<E>) -> Result<()> {
        let feed = &mut self.feed;
        if feed.spec.mode != ReplayMode::Closed {
            return Ok(());
        }
        let pid = feed.pid_of(thread);
        self.closed_read_ahead(Some(pid), b.q, b.collector)?;
        let feed = &mut self.feed;
        let speed = feed.spec.speed;
        let proc = feed.of_thread(thread);
        let Some(next) = proc.queue.front() else {
            return Ok(());
        };
        // A performance hint only (`device::warm`): the record's command
        // comes after the think time and the trip down the stack.
        b.hint(next.sector, next.op == Op::Write);
        // Think time: from the previous record's recorded completion (or,
        // when the format records none, its issue) to this record's issue.
        let (prev_issue, prev_done) = proc.prev.unwrap_or((next.time_ns, None));
        let think = next.time_ns.saturating_sub(prev_done.unwrap_or(prev_issue));
        // (Exact below 2^53 ns at speed 1: no float round trip.)
        let think = if speed == 1.0 && think < 1 << 53 {
            think
        } else {
            (think as f64 / speed).round() as Ns
        };
        b.q.at(now + think, ReplayEvent::Next(thread));
        Ok(())
    }

    /// Issues one record at `now` as a call of `thread` that began at
    /// `start` (its arrival; earlier than `now` when it was held): bios of at most
    /// `max_sectors_kb`, unplugged, straight into the block layer. A write
    /// flagged FUA is submitted with FUA; one flagged pre-flush is preceded
    /// by a cache flush it waits for, as Linux's flush sequence does.
    fn issue_record<E: ReplayEvents>(
        &mut self,
        now: Ns,
        start: Ns,
        r: &TraceRecord,
        thread: u32,
        b: &mut Below<E>,
    ) {
        if now > start {
            let backlog = &mut self.feed.backlog;
            backlog.deferred += 1;
            backlog.max_wait_ns = backlog.max_wait_ns.max(now - start);
        }
        let kind = match r.op {
            Op::Read => CallKind::Read,
            Op::Write => CallKind::Write,
            Op::Discard => CallKind::Discard,
            Op::Flush => CallKind::Flush,
        };
        let bytes = if r.op.has_data() {
            r.sectors as u64 * SECTOR_BYTES
        } else {
            0
        };
        let id = self.calls.insert(Call::new(start, thread, kind, bytes));
        if let Some(d) = r.done_ns {
            if self.recorded_service.len() <= id as usize {
                self.recorded_service.resize(id as usize + 1, None);
            }
            self.recorded_service[id as usize] = Some(Recorded {
                op: r.op,
                sectors: r.sectors,
                service: r.device_start_ns.map(|s| d.saturating_sub(s)),
                total: d.saturating_sub(r.time_ns),
            });
        }
        let is_write = r.op == Op::Write && r.sectors > 0;
        let template = Bio {
            op: r.op,
            sector: if r.op == Op::Flush { 0 } else { r.sector },
            sectors: if r.op == Op::Flush { 0 } else { r.sectors },
            sync: r.sync.unwrap_or(matches!(r.op, Op::Read | Op::Flush)),
            fua: is_write && r.flags & TraceRecord::FUA != 0,
            secure: r.op == Op::Discard && r.flags & TraceRecord::SECURE != 0,
            prio: false,
            pid: r.pid.unwrap_or(0),
            thread,
            ioprio: IoPrio::NORM,
            submitter: Submitter::Replay(id),
        };
        if is_write && r.flags & TraceRecord::PREFLUSH != 0 {
            if self.after_flush.len() <= id as usize {
                self.after_flush.resize(id as usize + 1, None);
            }
            self.after_flush[id as usize] = Some(template);
            let flush = Bio {
                op: Op::Flush,
                sector: 0,
                sectors: 0,
                fua: false,
                ..template
            };
            self.calls[id].pending = 1;
            b.submit_raw(now, flush, self.max_bio_sectors, &mut self.bios);
            return;
        }
        self.submit_split(now, id, template, b);
    }

    /// Submits `template` as bios of call `id`.
    fn submit_split<E: ReplayEvents>(&mut self, now: Ns, id: u32, template: Bio, b: &mut Below<E>) {
        // Counted before the bios go down: none completes while they do.
        let n = b.submit_raw(now, template, self.max_bio_sectors, &mut self.bios);
        self.calls[id].pending = n;
    }
}
