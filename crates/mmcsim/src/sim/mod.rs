//! The simulation core: wires workload, host, block layer, driver and
//! device together and runs the event loop.
//!
//! Contract: [`Simulation::new`] builds every layer from a [`Scenario`]
//! (preconditioning the device and laying out files, unmeasured);
//! [`Simulation::run`] plays the workload to completion and returns the
//! [`Report`]. Same scenario and seed ⇒ the same report, byte for byte.

mod event;
mod log;
mod report;
mod threads;
pub mod trace_feed;
mod writeback;

pub use event::Event;
pub use log::{LogRow, RequestLog, HEADER as LOG_HEADER};
pub use report::Report;
pub use trace_feed::{PreconditionTrace, TraceInfo};

use crate::block::request::{Bio, RqId};
use crate::block::BlockLayer;
use crate::config::Scenario;
use crate::device::host_interface::{legacy_commands, queued_commands};
use crate::device::{DeviceCommand, Emmc, PreconditionSummary};
use crate::driver::{CmdqDriver, LegacyDriver};
use crate::engine::{EventQueue, Slab};
use crate::error::{Error, Result};
use crate::host::cost::HostCosts;
use crate::host::page_cache::{FileId, PageCache, ReadPlan};
use crate::sched::{Registry, SchedParams};
use crate::stats::report::{CallKind, Collector};
use crate::types::{Ns, Op, PAGE_BYTES, SECTORS_PER_PAGE};
use threads::SimThread;
use trace_feed::TraceFeed;

/// Owner tag bit: the bio moves page-cache pages (read-ahead or writeback).
const PAGE_IO: u32 = 1 << 31;
/// Owner tag value: no call waits for this bio by id.
const NO_CALL: u32 = PAGE_IO - 1;

/// A file laid out on the device.
#[derive(Clone, Debug)]
struct SimFile {
    name: String,
    first_sector: u64,
    pages: u64,
    cache: FileId,
}

/// One call in progress (a synthetic thread's read()/write()/fsync() or a
/// trace record).
#[derive(Clone, Debug)]
struct Call {
    thread: u32,
    kind: CallKind,
    bytes: u64,
    issue: Ns,
    /// Bios owned by this call not yet completed.
    pending: u32,
    /// When its most recent bios entered the block layer.
    submit: Ns,
    /// Queueing and device time of the request that completed it last.
    queue: Ns,
    device: Ns,
    /// Issue a cache flush once the data bios complete (fsync, O_SYNC).
    then_flush: bool,
}

/// Optional outputs of a run.
#[derive(Default)]
pub struct RunOptions {
    /// Per-request CSV log destination.
    pub log: Option<Box<dyn std::io::Write>>,
}

/// A configured simulation, ready to run.
pub struct Simulation {
    sc: Scenario,
    q: EventQueue<Event>,
    costs: HostCosts,
    block: BlockLayer,
    driver: LegacyDriver,
    /// The eMMC 5.1 command-queue driver, when the run uses it (then
    /// `driver` stays idle).
    cmdq: Option<CmdqDriver>,
    driver_kick: Option<Ns>,
    device: Emmc,
    cache: PageCache,
    files: Vec<SimFile>,
    threads: Vec<SimThread>,
    calls: Slab<Call>,
    waiters: Vec<(u32, FileId, u64)>,
    /// Writers sleeping in balance_dirty_pages.
    throttled: Vec<u32>,
    /// A flusher run is already scheduled.
    flusher_kicked: bool,
    /// The flusher backed off on congestion and waits for a completion.
    flusher_waiting: bool,
    wb_files: Vec<FileId>,
    /// Thread index of the writeback flusher's bios (right after the
    /// synthetic threads; the request log shows it).
    flusher_thread: u32,
    plan: ReadPlan,
    done_bios: Vec<Bio>,
    /// Device start and end of each request id, ns.
    dev_times: Vec<(Ns, Ns)>,
    collector: Collector,
    trace: Option<TraceFeed>,
    log: Option<RequestLog>,
    timer_gen: u64,
    timer_at: Option<Ns>,
    active_threads: u32,
    precondition: PreconditionSummary,
    max_bio_sectors: u32,
    /// An error raised inside an event handler that cannot return one
    /// (e.g. a malformed record met while reading ahead); the run stops
    /// with it after the event.
    deferred_error: Option<Error>,
}

impl Simulation {
    /// Builds every layer from `sc` with the built-in schedulers.
    pub fn new(sc: Scenario) -> Result<Simulation> {
        Simulation::with_registry(sc, &Registry::builtin())
    }

    /// Builds every layer from `sc`, creating the scheduler from
    /// `registry` (so a researcher's own scheduler runs the same path).
    pub fn with_registry(sc: Scenario, registry: &Registry) -> Result<Simulation> {
        let dev_cfg = sc.device_config()?;
        let cmdq_tags = sc
            .driver
            .resolve(dev_cfg.cmdq.as_ref().map(|q| q.depth))
            .map_err(Error::config)?;
        let mut device = Emmc::new(&dev_cfg)?;
        let capacity = device.capacity_sectors();

        let params = SchedParams {
            hz: sc.scheduler.hz,
            nonrot: !sc.queue.rotational,
        };
        let mut elevator = registry
            .create(&sc.scheduler.name, &params)
            .map_err(Error::Config)?;
        for (name, value) in sc.scheduler.tunable_text() {
            elevator
                .set_tunable(&name, &value)
                .map_err(|e| Error::config(format!("iosched.{name}: {e}")))?;
        }
        let max_bio_sectors = sc.queue.max_sectors_kb * 2;
        let block = BlockLayer::new(sc.queue.clone(), elevator, params);

        // Files: contiguous extents, checked against the capacity.
        let cache_pages = sc.host.page_cache_mib * (1 << 20) / PAGE_BYTES;
        let mut cache = PageCache::new(cache_pages);
        let mut files = Vec::new();
        let mut next_mib = 0u64;
        for f in &sc.files {
            let start_mib = f.offset_mib.unwrap_or(next_mib);
            next_mib = start_mib + f.size_mib;
            let first_sector = start_mib * 2048;
            let end = first_sector + f.size_mib * 2048;
            if end > capacity {
                return Err(Error::config(format!(
                    "file `{}` ends at {} MiB, beyond the device's {} MiB",
                    f.name,
                    next_mib,
                    capacity / 2048
                )));
            }
            if let Some(o) = files.iter().find(|o: &&SimFile| {
                first_sector < o.first_sector + o.pages * SECTORS_PER_PAGE && o.first_sector < end
            }) {
                return Err(Error::config(format!(
                    "file `{}` overlaps file `{}` on the device",
                    f.name, o.name
                )));
            }
            let pages = f.size_mib * (1 << 20) / PAGE_BYTES;
            files.push(SimFile {
                name: f.name.clone(),
                first_sector,
                pages,
                cache: cache.add_file(pages),
            });
        }

        // Unmeasured set-up: precondition, then write the files' data.
        let precondition = device.precondition(&sc.precondition, sc.seed);
        for (f, spec) in files.iter().zip(&sc.files) {
            if spec.prewrite {
                device.write_untimed(f.first_sector, f.pages * SECTORS_PER_PAGE);
            }
        }
        let precondition_trace = match sc
            .trace
            .as_ref()
            .and_then(|t| t.precondition.as_ref().map(|p| (t, p)))
        {
            Some((t, p)) => Some(trace_feed::precondition(&mut device, &sc.resolve(p), p, t)?),
            None => None,
        };
        device.reset_stats();

        let mut collector = Collector::new();
        let threads = threads::build(&sc, &files_index(&files), &mut collector)?;
        // The flusher exists when a job writes through the page cache; it
        // takes the thread index after the synthetic threads, and traced
        // processes follow.
        let flusher_thread = threads.len() as u32;
        let trace_base = flusher_thread + has_flusher(&sc) as u32;
        let trace = match &sc.trace {
            Some(t) => {
                let mut feed = TraceFeed::open(&sc.resolve(&t.path), t, capacity, trace_base)?;
                feed.set_precondition(precondition_trace);
                Some(feed)
            }
            None => None,
        };
        let costs = sc.host.resolve();
        Ok(Simulation {
            active_threads: threads.len() as u32,
            costs,
            block,
            driver: LegacyDriver::new(&sc.driver),
            cmdq: cmdq_tags.map(CmdqDriver::new),
            driver_kick: None,
            device,
            cache,
            files,
            threads,
            calls: Slab::with_capacity(256),
            waiters: Vec::with_capacity(64),
            throttled: Vec::new(),
            flusher_kicked: false,
            flusher_waiting: false,
            wb_files: Vec::new(),
            flusher_thread,
            plan: ReadPlan::default(),
            done_bios: Vec::with_capacity(64),
            dev_times: Vec::with_capacity(512),
            collector,
            trace,
            log: None,
            timer_gen: 0,
            timer_at: None,
            precondition,
            max_bio_sectors,
            deferred_error: None,
            q: EventQueue::new(),
            sc,
        })
    }

    /// Runs the workload to completion and returns the report.
    pub fn run(mut self, opts: RunOptions) -> Result<Report> {
        self.log = opts.log.map(RequestLog::new);
        for t in 0..self.threads.len() {
            let start = self.threads[t].start_ns;
            self.q.push(start, Event::ThreadIssue(t as u32));
        }
        if has_flusher(&self.sc) {
            let first = self.sc.writeback.writeback_interval_ns();
            self.q.push(first, Event::FlusherTick);
        }
        if self.trace.is_some() {
            self.trace_start()?;
        }
        while let Some((now, ev)) = self.q.pop() {
            self.handle(now, ev)?;
            if let Some(e) = self.deferred_error.take() {
                return Err(e);
            }
        }
        self.check_drained()?;
        if let Some(log) = self.log.take() {
            log.finish()
                .map_err(|e| Error::Workload(format!("request log: {e}")))?;
        }
        Ok(report::build(&self))
    }

    fn handle(&mut self, now: Ns, ev: Event) -> Result<()> {
        match ev {
            Event::ThreadIssue(t) => self.thread_issue(now, t),
            Event::ThreadStep(t) => self.thread_step(now, t),
            Event::ThreadDone(t) => self.thread_done(now, t),
            Event::SubmitPlug(t) => self.submit_plug(now, t),
            Event::TraceArrival => return self.trace_arrival(now),
            Event::TraceNext(t) => return self.trace_next(now, t),
            Event::DriverRun => {
                if self.driver_kick == Some(now) {
                    self.driver_kick = None;
                }
                if self.cmdq.is_some() {
                    self.cmdq_run(now)
                } else {
                    self.driver_run(now)
                }
            }
            Event::DeviceDone(rq) => self.q.push(now + self.costs.irq, Event::Irq(rq)),
            Event::Irq(rq) if self.cmdq.is_some() => self.cmdq_irq(now, rq),
            Event::Irq(rq) => self.irq(now, rq),
            Event::SchedTimer(gen) => {
                if gen == self.timer_gen && self.timer_at.is_some() {
                    self.timer_at = None;
                    self.block.on_timer(now);
                    self.after_block_change(now);
                }
            }
            Event::FlusherTick => self.flusher_tick(now),
        }
        Ok(())
    }

    // ----- block layer and driver -------------------------------------

    /// Keeps the scheduler's timer event in step and wakes the driver when
    /// requests are waiting.
    fn after_block_change(&mut self, now: Ns) {
        let t = self.block.timer();
        if t != self.timer_at {
            self.timer_gen += 1;
            self.timer_at = t;
            if let Some(at) = t {
                self.q.push(at, Event::SchedTimer(self.timer_gen));
            }
        }
        if !self.block.has_pending() {
            return;
        }
        if let Some(d) = self.cmdq.as_mut() {
            // blk-mq runs the hardware queue from the submitter's or the
            // completion's context: no driver thread to wake.
            d.asleep = false;
            if d.can_fetch() || d.can_issue(now) {
                self.kick_driver(now);
            }
            return;
        }
        if self.driver.asleep {
            self.driver.asleep = false;
            self.kick_driver(now + self.costs.mmcqd_wakeup);
        } else if self.driver.can_fetch() {
            self.kick_driver(now);
        }
    }

    fn kick_driver(&mut self, at: Ns) {
        if self.driver_kick.is_some_and(|k| k <= at) {
            return;
        }
        self.driver_kick = Some(at);
        self.q.push(at, Event::DriverRun);
    }

    fn driver_run(&mut self, now: Ns) {
        if self.driver.asleep {
            return;
        }
        if self.driver.can_start(now) {
            self.start_on_device(now);
        }
        if self.driver.can_fetch() {
            if self.driver.cpu_free > now {
                self.kick_driver(self.driver.cpu_free);
                return;
            }
            match self.block.fetch(now) {
                Some(rq) => {
                    self.block.activate(now, rq);
                    let prep = self.costs.prep(self.block.request(rq).sectors);
                    self.driver.prepared = Some(rq);
                    self.driver.prepared_ready = now + prep;
                    self.driver.cpu_free = now + prep;
                    if self.driver.executing.is_none() {
                        self.kick_driver(now + prep);
                    }
                }
                None => {
                    if self.driver.held() == 0 {
                        self.driver.asleep = true;
                    }
                }
            }
        } else if self.driver.executing.is_none() && self.driver.prepared.is_some() {
            self.kick_driver(self.driver.prepared_ready);
        }
        // A dispatch attempt may have armed the scheduler's idle timer.
        let t = self.block.timer();
        if t != self.timer_at {
            self.timer_gen += 1;
            self.timer_at = t;
            if let Some(at) = t {
                self.q.push(at, Event::SchedTimer(self.timer_gen));
            }
        }
    }

    fn start_on_device(&mut self, now: Ns) {
        let Some(rq) = self.driver.prepared.take() else {
            return;
        };
        self.driver.executing = Some(rq);
        self.issue_to_device(now, rq, false);
    }

    /// Sends request `rq` to the device at `now` (queued as a CMDQ task or
    /// as a legacy command), records its device times and schedules its
    /// completion.
    fn issue_to_device(&mut self, now: Ns, rq: RqId, queued: bool) {
        let r = self.block.request(rq);
        let poll = self.device.config().bus.status_poll_after_write;
        // Flush and discard go as direct commands even on the CMDQ path.
        let commands = match (queued, queued_commands(r.op)) {
            (true, Some(task)) => task,
            _ => legacy_commands(r.op, poll),
        };
        let cmd = DeviceCommand {
            op: r.op,
            sector: r.sector,
            sectors: r.sectors,
            fua: r.fua,
            commands,
        };
        let done = self.device.execute(now, &cmd);
        let i = rq as usize;
        if self.dev_times.len() <= i {
            self.dev_times.resize(i + 1, (0, 0));
        }
        self.dev_times[i] = (now, done);
        self.q.push(done, Event::DeviceDone(rq));
    }

    fn irq(&mut self, now: Ns, rq: RqId) {
        self.driver.executing = None;
        // mmcqd starts the prepared request first, then ends the old one.
        if self.driver.can_start(now) {
            self.start_on_device(now);
        }
        self.end_request(now, rq);
        self.after_block_change(now);
        if !self.driver.asleep {
            self.driver_run(now);
        }
    }

    /// Logs `rq`, completes it in the block layer and hands its bios back
    /// to their owners (both drivers).
    fn end_request(&mut self, now: Ns, rq: RqId) {
        let (dev_start, dev_done) = self.dev_times[rq as usize];
        if let Some(log) = self.log.as_mut() {
            let r = self.block.request(rq);
            log.row(&LogRow {
                submit_ns: r.start_ns,
                dispatch_ns: r.dispatch_ns.unwrap_or(dev_start),
                device_start_ns: dev_start,
                complete_ns: dev_done,
                sector: r.sector,
                sectors: r.sectors,
                op: r.op,
                thread: r.thread,
            });
        }
        let mut bios = std::mem::take(&mut self.done_bios);
        bios.clear();
        self.block.complete(now, rq, &mut bios);
        for bio in &bios {
            self.bio_done(now, bio, dev_start, dev_done);
        }
        self.done_bios = bios;
    }

    // ----- CMDQ (blk-mq) driver -----------------------------------------

    /// Runs the CMDQ driver: issues the prepared request when it may go,
    /// then fetches and prepares another while a tag is free.
    fn cmdq_run(&mut self, now: Ns) {
        let Some(d) = self.cmdq.as_mut() else {
            return;
        };
        if d.asleep {
            return;
        }
        if d.can_issue(now) {
            let rq = d.issue();
            self.cmdq_start(now, rq);
        }
        let d = self.cmdq.as_mut().expect("cmdq driver");
        if let Some((_, ready, _)) = d.prepared {
            // Preparing, or a direct command waiting for the queue to
            // drain (a completion runs the driver again).
            if ready > now {
                self.kick_driver(ready);
            }
        } else if d.can_fetch() {
            if d.cpu_free > now {
                let at = d.cpu_free;
                self.kick_driver(at);
            } else {
                match self.block.fetch(now) {
                    Some(rq) => {
                        self.block.activate(now, rq);
                        let r = self.block.request(rq);
                        let prep = self.costs.prep(r.sectors);
                        let dcmd = !r.op.has_data();
                        let d = self.cmdq.as_mut().expect("cmdq driver");
                        d.prepared = Some((rq, now + prep, dcmd));
                        d.cpu_free = now + prep;
                        self.kick_driver(now + prep);
                    }
                    None => {
                        let d = self.cmdq.as_mut().expect("cmdq driver");
                        if d.held() == 0 {
                            d.asleep = true;
                        }
                    }
                }
            }
        }
        self.sync_sched_timer();
    }

    /// Queues `rq` on the device (a direct command runs alone).
    fn cmdq_start(&mut self, now: Ns, rq: RqId) {
        self.issue_to_device(now, rq, true);
    }

    /// Completion interrupt of `rq` (out of order): frees its tag, ends the
    /// request, and runs the hardware queue.
    fn cmdq_irq(&mut self, now: Ns, rq: RqId) {
        self.cmdq.as_mut().expect("cmdq driver").complete(rq);
        self.end_request(now, rq);
        self.after_block_change(now);
        let d = self.cmdq.as_mut().expect("cmdq driver");
        if !d.asleep {
            self.cmdq_run(now);
        }
    }

    /// Keeps the scheduler's timer event in step after a dispatch attempt.
    fn sync_sched_timer(&mut self) {
        let t = self.block.timer();
        if t != self.timer_at {
            self.timer_gen += 1;
            self.timer_at = t;
            if let Some(at) = t {
                self.q.push(at, Event::SchedTimer(self.timer_gen));
            }
        }
    }

    fn bio_done(&mut self, now: Ns, bio: &Bio, dev_start: Ns, dev_done: Ns) {
        if bio.owner & PAGE_IO != 0 && bio.op == Op::Read {
            let fi = self.file_of_sector(bio.sector);
            let f = &self.files[fi];
            let first = (bio.sector - f.first_sector) / SECTORS_PER_PAGE;
            let pages = bio.sectors / SECTORS_PER_PAGE as u32;
            let fid = f.cache;
            self.cache.complete_read(fid, first, pages);
            let mut i = 0;
            while i < self.waiters.len() {
                let (t, wf, wp) = self.waiters[i];
                if wf == fid && wp >= first && wp < first + pages as u64 {
                    self.waiters.swap_remove(i);
                    if let Some(c) = self.threads[t as usize].call {
                        let call = &mut self.calls[c];
                        call.queue += dev_start.saturating_sub(call.submit);
                        call.device += dev_done - dev_start;
                    }
                    self.q.push(now + self.costs.wakeup, Event::ThreadStep(t));
                } else {
                    i += 1;
                }
            }
        }
        if bio.owner & PAGE_IO != 0 && bio.op == Op::Write {
            let fi = self.file_of_sector(bio.sector);
            let first = (bio.sector - self.files[fi].first_sector) / SECTORS_PER_PAGE;
            self.writeback_done(now, fi, first, bio.sectors / SECTORS_PER_PAGE as u32);
        }
        let id = bio.owner & !PAGE_IO;
        if id != NO_CALL {
            let call = &mut self.calls[id];
            call.pending -= 1;
            call.queue = dev_start.saturating_sub(call.submit);
            call.device = dev_done - dev_start;
            if call.pending == 0 {
                self.call_io_done(now, id);
            }
        }
    }

    fn file_of_sector(&self, sector: u64) -> usize {
        self.files
            .iter()
            .position(|f| {
                sector >= f.first_sector && sector < f.first_sector + f.pages * SECTORS_PER_PAGE
            })
            .expect("page-cache bio outside every file")
    }

    fn check_drained(&self) -> Result<()> {
        let held = self.driver.held() + self.cmdq.as_ref().map_or(0, |d| d.held());
        if self.block.has_pending() || !self.calls.is_empty() || held > 0 {
            return Err(Error::Workload(format!(
                "simulation stalled with work left (calls in progress: {}, block layer pending: {}, in driver: {}): this is a simulator bug, please report it with the scenario",
                self.calls.len(),
                self.block.has_pending(),
                held
            )));
        }
        Ok(())
    }

    /// Splits `sectors` starting at `sector` into bios of at most
    /// `max_sectors_kb` and appends them to `out`.
    fn push_bios(&self, template: Bio, out: &mut Vec<Bio>) -> u32 {
        let mut n = 0;
        let mut sector = template.sector;
        let end = template.sector + template.sectors as u64;
        // Discards and flushes go down whole (MMC's discard limit is far
        // above max_sectors_kb); data bios are built at most max_sectors_kb.
        if !template.op.has_data() {
            out.push(template);
            return 1;
        }
        while sector < end {
            let len = (end - sector).min(self.max_bio_sectors as u64) as u32;
            out.push(Bio {
                sector,
                sectors: len,
                ..template
            });
            sector += len as u64;
            n += 1;
        }
        n
    }
}

/// True when a job writes through the page cache, so the writeback
/// flusher runs.
fn has_flusher(sc: &Scenario) -> bool {
    sc.jobs
        .iter()
        .any(|j| j.op == crate::config::JobOp::Write && !j.direct)
}

/// Name → (index, first sector, pages, cache id) of every file.
fn files_index(files: &[SimFile]) -> Vec<(String, u64, u64, FileId)> {
    files
        .iter()
        .map(|f| (f.name.clone(), f.first_sector, f.pages, f.cache))
        .collect()
}
