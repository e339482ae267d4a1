//! The simulation core: builds the stages of the storage path from a
//! scenario, wires them together, and runs the event loop.
//!
//! ```text
//! jobs / replay ─► host ─► block ─► (scheduler) ─► driver ─► device
//!        ▲          ▲        ▲                        │
//!        └──────────┴────────┴──── completions ◄──────┘
//! ```
//!
//! Contract: [`Simulation::new`] builds every stage from a [`Scenario`]
//! (preconditioning the device and laying out files, unmeasured);
//! [`Simulation::run`] pops events in `(time, sequence)` order and hands
//! each to the stage that scheduled it, until none is left, then returns
//! the [`Report`]. The core holds no stage's logic: each stage owns its
//! state machine and its events ([`Event`] has one variant per stage).
//! Completions climb as events: the driver's interrupt ends a request in
//! the block layer, which queues a
//! [`Completion`] per finished bio to run right after the interrupt; the
//! loop hands each to the bio's [`Submitter`] (the host, or trace replay),
//! and an error met on the way up ends the run. Same scenario and seed ⇒
//! the same report, byte for byte.

mod build;
pub mod crash;
mod event;
mod identity;
mod mount;
pub mod programs;
mod report;

pub use crate::stats::request_log::{LogRow, RequestLog, HEADER as LOG_HEADER};
pub use crate::workload::replay::{PreconditionTrace, TraceInfo};
pub use build::PreparedDevice;
pub use crash::{CrashReport, PowerCut};
pub use event::Event;
pub use identity::{fnv1a64, RunIdentity};
pub use report::{HostReport, Report, RunCost};

use crate::block::request::Submitter;
use crate::block::{Accounting, BlockStage, Completion};
use crate::config::Scenario;
use crate::device::{IntegrityStats, PreconditionSummary};
use crate::engine::EventQueue;
use crate::error::{EmptyWhy, Error, Result, SettingError, Stall};
use crate::host::{Below, Host};
use crate::platform::Platform;
use crate::sched::Registry;
use crate::stats::report::Collector;
use crate::types::Ns;

/// How long (simulated) only periodic timers may run while calls wait
/// before the run is declared stalled: one day, far beyond any kernel
/// timer's period (`commit=`, `dirty_expire_centisecs`), ns.
pub const STALL_LIMIT_NS: Ns = 24 * 3600 * 1_000_000_000;
use crate::workload::jobs::Jobs;
use crate::workload::replay::Replay;

/// Optional outputs of a run.
#[derive(Default)]
pub struct RunOptions {
    /// Per-request CSV log destination.
    pub log: Option<Box<dyn std::io::Write>>,
    /// Accept a run that completes no request (a trace without records, a
    /// job with `requests = 0`): the report then says `"empty": true`.
    /// Without it such a run is an error, never a silent empty report.
    pub allow_empty: bool,
    /// Check the FTL against the integrity oracle after every device
    /// command (cost proportional to what each command touched; see
    /// [`crate::device::Emmc::start_integrity_check`]): the first violation
    /// stops the run with an error, and the report gains an `integrity`
    /// section, its other numbers unchanged.
    pub check_integrity: bool,
    /// End the run at the first failed system call of any thread (a
    /// script's `on_error = "stop"` for every thread), with an error
    /// naming the call and its errno.
    pub strict: bool,
}

/// A configured simulation, ready to run: the stages, top to bottom, and
/// the event queue.
pub struct Simulation {
    sc: Scenario,
    q: EventQueue<Event>,
    jobs: Jobs,
    replay: Option<Replay>,
    host: Host,
    /// The CPU's governor timer (the CPU itself is shared by the stages).
    platform: Platform,
    /// The block layer; it owns the MMC driver, which owns the eMMC
    /// device.
    block: BlockStage,
    collector: Collector,
    log: Option<RequestLog>,
    precondition: PreconditionSummary,
    /// Time of the last event handled, ns.
    end: Ns,
    /// What the per-command integrity check cost, when it ran.
    integrity: Option<IntegrityStats>,
    /// Events handled so far (an operation count, see [`RunCost`]).
    events: u64,
}

impl Simulation {
    /// Builds every stage from `sc` with the built-in schedulers.
    pub fn new(sc: Scenario) -> Result<Simulation> {
        Simulation::with_registry(sc, &crate::sched::builtin())
    }

    /// Builds every stage from `sc`, creating the scheduler from `registry`
    /// (so a researcher's own scheduler runs the same path).
    pub fn with_registry(sc: Scenario, registry: &Registry) -> Result<Simulation> {
        build::build(sc, registry)
    }

    /// Like [`Simulation::with_registry`], but the device is a clone of
    /// `device` instead of one built and preconditioned here; the report
    /// is byte-identical. `device` must come from [`PreparedDevice::new`]
    /// on a scenario with the same [`PreparedDevice::key`] (same profile
    /// and overrides, `[precondition]` and seed), else this is an error.
    pub fn with_prepared_device(
        sc: Scenario,
        registry: &Registry,
        device: &PreparedDevice,
    ) -> Result<Simulation> {
        build::build_on(sc, registry, Some(std::borrow::Cow::Borrowed(device)))
    }

    /// Like [`Simulation::with_prepared_device`], taking the device instead
    /// of a copy (a device loaded from a saved state, used once).
    pub fn with_owned_device(
        sc: Scenario,
        registry: &Registry,
        device: PreparedDevice,
    ) -> Result<Simulation> {
        build::build_on(sc, registry, Some(std::borrow::Cow::Owned(device)))
    }

    /// Keeps each thread's results by direction for the report's
    /// `thread_io` (per-job outputs such as fio's JSON); off by default,
    /// as it costs a histogram per thread and direction.
    pub fn keep_thread_io(&mut self) {
        self.collector.keep_thread_io();
    }

    /// Runs the workload to completion and returns the report.
    pub fn run(mut self, opts: RunOptions) -> Result<Report> {
        let allow_empty = opts.allow_empty;
        self.start(opts)?;
        self.run_events(None)?;
        self.finish(allow_empty)
    }

    /// Checks the options and starts every stage (before the first event).
    fn start(&mut self, opts: RunOptions) -> Result<()> {
        if !opts.allow_empty {
            if let Some(j) = self.sc.jobs.iter().find(|j| j.requests == Some(0)) {
                return Err(Error::setting(
                    format!("job `{}`", j.name),
                    SettingError::Conflict {
                        key: "requests".into(),
                        value: "0".into(),
                        why: "the job would issue nothing; give it at least 1 request, remove it, or allow an empty result (simctl: --allow-empty)".into(),
                    },
                ));
            }
        }
        self.log = opts.log.map(RequestLog::new);
        if opts.check_integrity {
            self.block
                .driver_mut()
                .device_mut()
                .start_integrity_check()?;
        }
        self.jobs.set_strict(opts.strict);
        self.jobs.start(&mut self.q);
        self.host.start(&mut self.q);
        self.platform.start(&mut self.q);
        if let Some(r) = self.replay.as_mut() {
            r.start(&mut self.q, &mut self.collector)?;
        }
        Ok(())
    }

    /// Pops and handles events until none is left or, with `cut`, until
    /// power fails; returns the instant of the cut, ns (with `cut`: its
    /// instant even when the events ran out first).
    fn run_events(&mut self, cut: Option<crash::PowerCut>) -> Result<Option<Ns>> {
        // Since when only periodic timers have run while calls wait.
        let mut idle_since: Option<Ns> = None;
        if cut == Some(crash::PowerCut::AfterEvent(0)) {
            return Ok(Some(0));
        }
        loop {
            if let (Some(crash::PowerCut::At(t)), Some(next)) = (cut, self.q.peek_time()) {
                if next >= t {
                    return Ok(Some(t));
                }
            }
            let Some((now, ev)) = self.q.pop() else {
                break;
            };
            self.end = now;
            self.events += 1;
            let timer = ev.is_periodic_timer();
            self.handle(now, ev)?;
            idle_since = self.watch_stall(now, timer, idle_since)?;
            if let Some(f) = self.jobs.take_failure() {
                return Err(f);
            }
            if let Some(v) = self
                .block
                .driver_mut()
                .device_mut()
                .take_integrity_violation()
            {
                return Err(crate::device::DeviceError::from(v).into());
            }
            if let Some(t) = self.q.overflow() {
                return Err(Error::ClockOverflow {
                    now: Some(now),
                    at: t,
                });
            }
            if cut == Some(crash::PowerCut::AfterEvent(self.events)) {
                return Ok(Some(now));
            }
        }
        if let Some(t) = self.q.overflow() {
            return Err(Error::ClockOverflow { now: None, at: t });
        }
        Ok(match cut {
            Some(crash::PowerCut::At(t)) => Some(t),
            Some(crash::PowerCut::AfterEvent(_)) => Some(self.end),
            None => None,
        })
    }

    /// After the last event: nothing may still wait; the report.
    fn finish(mut self, allow_empty: bool) -> Result<Report> {
        self.check_drained()?;
        self.integrity = self
            .block
            .driver_mut()
            .device_mut()
            .finish_integrity_check(self.end)?;
        if !allow_empty && self.collector.count() == 0 {
            return Err(self.empty_run());
        }
        if let Some(log) = self.log.take() {
            log.finish()
                .map_err(|source| Error::RequestLog { source })?;
        }
        Ok(report::build(&self))
    }

    /// Hands event `ev` at `now` to the stage that scheduled it, lending it
    /// the stages it talks to.
    fn handle(&mut self, now: Ns, ev: Event) -> Result<()> {
        let Simulation {
            q,
            jobs,
            replay,
            host,
            platform,
            block,
            collector,
            log,
            ..
        } = self;
        // Built in the arms that lend it.
        macro_rules! below {
            () => {
                Below::new(block, q, collector)
            };
        }
        match ev {
            Event::Job(e) => jobs.handle(now, e, host, &mut below!()),
            Event::Replay(e) => {
                if let Some(r) = replay {
                    r.handle(now, e, &mut below!())?;
                }
            }
            Event::Host(e) => {
                let running = jobs.running() || replay.as_ref().is_some_and(Replay::has_next);
                let mut below = below!();
                if let Some(t) = host.handle(now, e, running, &mut below) {
                    jobs.returned(now, t, host, q);
                }
            }
            Event::Block(e) => block.handle(now, e, q),
            Event::Completion(Completion::Freed) => {
                // Records held while their process waited go in where the
                // admission happened, before the completed bios climb.
                if let Some(r) = replay.as_mut().filter(|r| r.holds_records()) {
                    r.admitted(now, &mut below!())?;
                }
            }
            Event::Completion(Completion::Bio(submitter)) => {
                // Queued with its event when the block layer ended the
                // request; routed by the bio's submitter.
                let (bio, times) = block.ended().take().expect("a finished bio per event");
                match (submitter, replay.as_mut()) {
                    (Submitter::Replay(id), Some(r)) => {
                        r.bio_done(now, id, times, &mut below!())?
                    }
                    _ => host.bio_done(now, &bio, times, &mut below!()),
                }
            }
            Event::Platform(e) => {
                let running = jobs.running()
                    || replay.as_ref().is_some_and(Replay::has_next)
                    || host.calls_in_progress() > 0;
                platform.handle(now, e, running, q);
            }
            Event::Driver(e) => {
                // The block stage owns the driver and lends it its queue.
                let acct = Accounting {
                    collector,
                    log: log.as_mut(),
                };
                block.handle_driver(now, e, acct, q);
            }
        }
        Ok(())
    }

    /// The error for a run that completed no request, saying why.
    fn empty_run(&self) -> Error {
        let why = match self.replay.as_ref().map(Replay::info) {
            Some(t) if t.records == 0 => EmptyWhy::NoRecords {
                path: t.path.to_string(),
            },
            Some(t) => EmptyWhy::NoneCompleted {
                records: t.records,
                path: t.path.to_string(),
            },
            None => match self.collector.summarize().calls {
                Some(c) => EmptyWhy::AllCallsFailed {
                    failed: c.failed.iter().map(|(e, n)| (*e, *n)).collect(),
                },
                None => EmptyWhy::NoRequest,
            },
        };
        Error::EmptyRun { why }
    }

    /// The stall watchdog, after an event at `now` (`timer`: a periodic
    /// timer's). Periodic timers (the flusher's, the JBD2 commit timer, the
    /// governor's) re-arm themselves while work is left, so a call that
    /// waits for something nothing will deliver would keep the clock
    /// running to its limit. When only such timers are pending and calls
    /// wait, and that has lasted [`STALL_LIMIT_NS`] of simulated time, the
    /// run stops with [`Error::Stalled`]. Returns the new start of the idle
    /// stretch.
    fn watch_stall(&self, now: Ns, timer: bool, since: Option<Ns>) -> Result<Option<Ns>> {
        // Cheap test first: at most one pending event per periodic timer.
        let idle = timer
            && self.q.len() <= Event::PERIODIC_TIMERS
            && self.host.calls_in_progress() > 0
            && self.q.all_pending(Event::is_periodic_timer);
        if !idle {
            return Ok(None);
        }
        let since = since.unwrap_or(now);
        if now - since > STALL_LIMIT_NS {
            return Err(Error::Stalled(Stall::TimersOnly {
                at_ns: now,
                limit_s: STALL_LIMIT_NS / 1_000_000_000,
                calls: self.host.calls_in_progress(),
                waiting: self.host.describe_calls(8),
            }));
        }
        Ok(Some(since))
    }

    /// A run ends when no event is left; then nothing may still wait.
    fn check_drained(&self) -> Result<()> {
        let calls = self.host.calls_in_progress()
            + self.replay.as_ref().map_or(0, Replay::calls_in_progress);
        let pending = self.block.has_pending();
        let held = self.block.driver().held();
        if pending || calls > 0 || held > 0 {
            return Err(Error::Stalled(Stall::WorkLeft {
                calls,
                pending,
                held,
            }));
        }
        Ok(())
    }
}
