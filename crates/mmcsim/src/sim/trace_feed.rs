//! Open-loop trace replay: each record is issued at its recorded time
//! (divided by the speed factor), read one at a time from a streaming
//! reader, so memory does not grow with the trace.

use super::{Call, Event, Simulation, NO_CALL};
use crate::block::request::Bio;
use crate::error::{Error, Result};
use crate::stats::report::{CallKind, Collector};
use crate::types::{IoPrio, Ns, Op, SECTOR_BYTES};
use crate::workload::trace::native_csv::NativeCsvReader;
use crate::workload::trace::{TraceReader, TraceRecord};
use std::collections::BTreeMap;
use std::path::Path;

/// The trace being replayed and the process → thread mapping.
pub(super) struct TraceFeed {
    reader: Box<dyn TraceReader>,
    next: Option<TraceRecord>,
    speed: f64,
    capacity: u64,
    /// pid → thread index in the collector.
    pids: BTreeMap<u32, u32>,
    thread_base: u32,
}

impl TraceFeed {
    /// Opens the trace at `path`; records beyond `capacity` sectors are an
    /// error; traced processes get thread indices from `thread_base` on.
    pub(super) fn open(
        path: &Path,
        speed: f64,
        capacity: u64,
        thread_base: u32,
    ) -> Result<TraceFeed> {
        let reader = NativeCsvReader::open(path)?;
        Ok(TraceFeed {
            reader: Box::new(reader),
            next: None,
            speed,
            capacity,
            pids: BTreeMap::new(),
            thread_base,
        })
    }

    /// True while records remain to be issued.
    pub(super) fn has_next(&self) -> bool {
        self.next.is_some()
    }

    /// Reads the first record; returns its issue time.
    pub(super) fn prime(&mut self) -> Result<Option<Ns>> {
        self.advance()
    }

    /// Reads and checks the next record; returns its issue time.
    fn advance(&mut self) -> Result<Option<Ns>> {
        self.next = match self.reader.next_record() {
            None => None,
            Some(r) => Some(r?),
        };
        let Some(r) = &self.next else {
            return Ok(None);
        };
        if r.op != Op::Flush && r.sector + r.sectors as u64 > self.capacity {
            return Err(Error::Parse {
                path: self.reader.path().to_path_buf(),
                line: r.line,
                field: "sector".into(),
                message: format!(
                    "sectors {}..{} lie beyond the modelled device's capacity of {} sectors ({} MiB); use a bigger device profile (--device) or a trace that fits",
                    r.sector,
                    r.sector + r.sectors as u64,
                    self.capacity,
                    self.capacity / 2048
                ),
            });
        }
        let t = if self.speed == 1.0 {
            r.time_ns
        } else {
            (r.time_ns as f64 / self.speed).round() as Ns
        };
        Ok(Some(t))
    }

    /// The thread index of `pid`, registering a new process on first sight.
    fn thread_of(&mut self, pid: u32, process: Option<u32>, collector: &mut Collector) -> u32 {
        if let Some(&t) = self.pids.get(&pid) {
            return t;
        }
        let t = self.thread_base + self.pids.len() as u32;
        let name = match process {
            Some(p) => self.reader.process_name(p).to_string(),
            None => format!("pid {pid}"),
        };
        collector.add_thread(t, &name, pid);
        self.pids.insert(pid, t);
        t
    }
}

impl Simulation {
    /// Issues the due trace record and schedules the next one.
    pub(super) fn trace_arrival(&mut self, now: Ns) -> Result<()> {
        let feed = self.trace.as_mut().expect("trace arrival without a trace");
        let Some(r) = feed.next.take() else {
            return Ok(());
        };
        let pid = r.pid.unwrap_or(0);
        let thread = feed.thread_of(pid, r.process, &mut self.collector);
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
        let id = self.calls.insert(Call {
            thread,
            kind,
            bytes,
            issue: now,
            pending: 0,
            submit: now,
            queue: 0,
            device: 0,
            then_flush: false,
        });
        assert_ne!(id, NO_CALL);
        let template = Bio {
            op: r.op,
            sector: if r.op == Op::Flush { 0 } else { r.sector },
            sectors: if r.op == Op::Flush { 0 } else { r.sectors },
            sync: r.sync.unwrap_or(matches!(r.op, Op::Read | Op::Flush)),
            fua: false,
            prio: false,
            pid,
            thread,
            ioprio: IoPrio::NORM,
            owner: id,
        };
        let mut bios = std::mem::take(&mut self.done_bios);
        bios.clear();
        let n = self.push_bios(template, &mut bios);
        self.calls[id].pending = n;
        for bio in bios.drain(..) {
            self.block.submit_bio(now, bio, false);
        }
        self.done_bios = bios;
        self.after_block_change(now);
        let feed = self.trace.as_mut().expect("trace");
        if let Some(at) = feed.advance()? {
            self.q.push(at, Event::TraceArrival);
        }
        Ok(())
    }
}
