//! The MMC driver: turns block requests into eMMC commands and hands their
//! completions back up.
//!
//! Contract (reference io-schedulers.md §1.5, emmc-parameters.md §1.3):
//! * The driver pulls requests from the queue above it through
//!   [`RequestQueue`] (`blk_fetch_request`) when it has room, decides which
//!   bus commands each becomes ([`command`]: CMD23 + CMD18/CMD25, the erase
//!   sequence for a discard, CMD6 FLUSH_CACHE, or a CMDQ task) and issues
//!   them through the device's command interface ([`Emmc::execute`]).
//! * The device returns each command's completion time; the driver owns the
//!   resulting events ([`DriverEvent`]): the device finishing, the
//!   completion interrupt, and its own thread (`mmcqd`) or hardware-queue
//!   runs. At the interrupt it ends the request in the queue above
//!   ([`RequestQueue::end_request`]), which frees it and queues its
//!   completions as events; the interrupt's remaining work (ending the next
//!   request of a pack, running the queue, `mmcqd`'s next step) follows as
//!   the driver's own [`DriverEvent::Ended`], after those completions have
//!   been delivered. Nothing above the queue runs inside the driver.
//! * The queue above rings the driver with [`Driver::request_fn`] when it
//!   holds requests (Linux's `request_fn`): a sleeping `mmcqd` pays its
//!   wake-up first.
//! * After a legacy write the driver polls the card's status with CMD13
//!   SEND_STATUS requests of its own until the card leaves the programming
//!   state ([`busy_poll`], Linux 3.x `mmc_blk_err_check`); the request's
//!   [`DeviceTimes`] split its device time into the data command and the
//!   busy polling.
//! * Two drivers exist ([`DriverConfig::mode`]): the legacy `mmcqd` thread
//!   of Linux 3.x ([`legacy`]: one request on the bus, the next one prepared
//!   meanwhile) and the eMMC 5.1 command-queue (blk-mq) driver ([`cmdq`]:
//!   up to `cmdq_depth` tasks in the device, completions out of order).

pub mod busy_poll;
pub mod cmdq;
pub mod command;
pub mod config;
pub mod legacy;

pub use cmdq::CmdqDriver;
pub use config::{DriverConfig, DriverMode};
pub use legacy::LegacyDriver;

use crate::device::{DeviceConfig, Emmc, FuaPath, WriteStep};
use crate::engine::EventQueue;
use crate::error::Result;
use crate::platform::SharedCpu;
pub use crate::stats::DeviceTimes;
use crate::types::{Ns, Op};

/// Id of a request in the queue above (the block layer's request id),
/// handed back at completion.
pub type RqId = u32;

/// Events the driver schedules for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverEvent {
    /// `mmcqd` (legacy) or the hardware-queue run (CMDQ) takes its next
    /// step: start the prepared request, fetch and prepare another.
    Run,
    /// The device finished a request.
    DeviceDone(RqId),
    /// The completion interrupt of a request has been handled.
    Irq(RqId),
    /// The completions of the request the interrupt ended last have been
    /// delivered: the interrupt goes on (the next request of a pack ends,
    /// or the queue runs and the driver takes its next step).
    Ended,
    /// The queue has been idle for `bkops_idle_ms` since the driver went to
    /// sleep (the arming with this number): check BKOPS_STATUS.
    BkopsIdle(u32),
    /// The planned 4 KiB transfer of a stoppable write ended (request, and
    /// the driver's stop generation when it was planned: a stop makes the
    /// older ones stale).
    WriteStep(RqId, u32),
    /// `mmcqd`, woken by an urgent-request notification, checks whether to
    /// stop the write in flight (`mmc_wait_for_data_req_done`).
    Urgent,
    /// The stop sequence of the write `rq` (host stop, CMD12, CMD13) ended:
    /// the driver gives the write back to the scheduler.
    Stopped(RqId),
}

/// BKOPS_STATUS level from which the idle-time check starts BKOPS [src:
/// Linux 3.7+ drivers/mmc/core/core.c `mmc_start_bkops`: outside an
/// exception any non-zero status starts it].
pub const BKOPS_START_LEVEL: u8 = 1;

/// An event type that can carry the driver's events (the simulation
/// core's).
pub trait DriverEvents: From<DriverEvent> {}
impl<E: From<DriverEvent>> DriverEvents for E {}

/// A block request as the driver sees it: what it needs to build the
/// device command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverRequest {
    /// The block layer's request id (handed back at completion).
    pub id: RqId,
    /// Operation.
    pub op: Op,
    /// First 512-byte sector.
    pub sector: u64,
    /// Length in 512-byte sectors.
    pub sectors: u32,
    /// Forced unit access.
    pub fua: bool,
    /// The scheduler marked it urgent (`REQ_URGENT`).
    pub urgent: bool,
    /// A secure discard (`REQ_SECURE`, BLKSECDISCARD).
    pub secure: bool,
    /// A cache-warming hint from a stage above that travels with the
    /// request (e.g. trace replay's next record).
    pub hint: Option<WarmHint>,
}

/// Where an I/O that will follow soon is likely to land: the device warms
/// the host memory of its mapping entries (`device::warm`). A performance
/// hint only: it changes no simulated result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarmHint {
    /// First 512-byte sector.
    pub sector: u64,
    /// The I/O writes.
    pub write: bool,
}

/// How the queue above rings the driver when it holds requests
/// (`__blk_run_queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ring {
    /// `q->request_fn`: requests wait.
    Request,
    /// `q->urgent_request_fn`: an urgent request waits (announced once).
    Urgent,
}

/// The queue above the driver (the block layer), as the driver uses it.
pub trait RequestQueue<E> {
    /// `blk_fetch_request`: the next request the scheduler dispatches,
    /// started (activated) at `now`; `None` when there is nothing now.
    fn fetch(&mut self, now: Ns) -> Option<DriverRequest>;

    /// A dispatch attempt ended (the scheduler may have armed its timer).
    fn dispatch_tried(&mut self, q: &mut EventQueue<E>);

    /// `blk_end_request`: request `rq` is done on the device (at
    /// `times`). The queue frees it and queues its completions as events
    /// (delivered before the driver's [`DriverEvent::Ended`], which the
    /// driver queues after this call).
    fn end_request(&mut self, now: Ns, rq: RqId, times: DeviceTimes, q: &mut EventQueue<E>);

    /// `blk_run_queue` after a completion: the queue re-checks its timer
    /// and says how to ring the driver if it still holds requests
    /// (`takes_urgent`: the driver takes urgent-request notifications).
    fn run_queue(&mut self, takes_urgent: bool, q: &mut EventQueue<E>) -> Option<Ring>;

    /// `blk_reinsert_request`: the driver gives back request `rq`, fetched
    /// and not completed (a write it stopped, or the one it had prepared),
    /// to be dispatched again later; the scheduler puts it back where it
    /// came from, or (without that hook) it is requeued at the head of the
    /// dispatch list (`blk_requeue_request`).
    fn reinsert(&mut self, now: Ns, rq: RqId);
}

/// Which driver runs, with its state.
#[derive(Clone, Debug)]
enum Hw {
    Legacy(LegacyDriver),
    Cmdq(CmdqDriver),
}

/// The MMC driver stage: the chosen driver's state machine, the device it
/// drives, and the requests it holds.
pub struct Driver {
    hw: Hw,
    device: Emmc,
    /// The host CPU the driver's work runs on (`mmcqd`, the interrupt).
    cpu: SharedCpu,
    /// The next scheduled [`DriverEvent::Run`], if any (runs are merged).
    kick: Option<Ns>,
    /// Requests handed to the device, by request id: the request and its
    /// device times.
    held: Vec<(DriverRequest, DeviceTimes)>,
    /// BKOPS idle time, ns, when the card has `[gc] background` and the
    /// legacy driver runs.
    bkops_idle_ns: Option<Ns>,
    /// Arming number of the BKOPS idle check (a wake-up cancels it).
    bkops_gen: u32,
    /// The legacy driver takes urgent-request notifications and stops
    /// writes for them: the host can stop a transfer and the card has HPI
    /// (msm-3.4 `mmc_init_queue` registers `mmc_urgent_request` only then).
    urgent_stop: bool,
    /// Stop generation: [`DriverEvent::WriteStep`]s planned before the
    /// last stop are stale.
    step_gen: u32,
    /// One CMD13 SEND_STATUS with its R1 response on the CMD line, ns.
    cmd13_ns: Ns,
    /// The host's write interrupt waits for the card's busy
    /// ([`DriverConfig::wait_while_busy`]).
    wait_while_busy: bool,
}

impl Driver {
    /// The driver `cfg` selects, driving a new device built from `profile`
    /// (CMDQ needs a profile with `[cmdq]`); errors say what to change.
    /// Its CPU work (waking `mmcqd`, preparing requests, the completion
    /// interrupt) is charged on `cpu`.
    pub fn new(cfg: &DriverConfig, profile: &DeviceConfig, cpu: SharedCpu) -> Result<Driver> {
        // A bad queue setting is reported before the device is built.
        cfg.resolve(profile.cmdq.as_ref().map(|q| q.depth))?;
        let device = Emmc::new(profile)?;
        Driver::with_device(cfg, profile, device, cpu)
    }

    /// Like [`Driver::new`], driving `device` (built from `profile`, e.g. a
    /// copy of a preconditioned one) instead of a new device.
    pub fn with_device(
        cfg: &DriverConfig,
        profile: &DeviceConfig,
        device: Emmc,
        cpu: SharedCpu,
    ) -> Result<Driver> {
        let tags = cfg.resolve(profile.cmdq.as_ref().map(|q| q.depth))?;
        let hw = match tags {
            Some(tags) => Hw::Cmdq(CmdqDriver::new(tags)),
            None => Hw::Legacy(LegacyDriver::new(cfg)),
        };
        let bkops_idle_ns =
            (profile.gc.background && tags.is_none()).then(|| cfg.bkops_idle() as Ns * 1_000_000);
        let urgent_stop = tags.is_none() && cfg.stop_request() && profile.features.hpi;
        let cmd13_ns = crate::device::host_interface::Bus::new(&profile.bus).commands_ns(1);
        Ok(Driver {
            hw,
            device,
            cpu,
            kick: None,
            held: Vec::with_capacity(512),
            bkops_idle_ns,
            bkops_gen: 0,
            urgent_stop,
            step_gen: 0,
            cmd13_ns,
            wait_while_busy: cfg.wait_while_busy(),
        })
    }

    /// The device this driver drives.
    pub fn device(&self) -> &Emmc {
        &self.device
    }

    /// The device, for unmeasured set-up before the run (preconditioning).
    pub fn device_mut(&mut self) -> &mut Emmc {
        &mut self.device
    }

    /// CMDQ tags, when the command-queue driver runs.
    pub fn cmdq_tags(&self) -> Option<u32> {
        match &self.hw {
            Hw::Cmdq(d) => Some(d.tags()),
            Hw::Legacy(_) => None,
        }
    }

    /// Requests the driver holds (on the device or being prepared).
    pub fn held(&self) -> u32 {
        match &self.hw {
            Hw::Legacy(d) => d.held(),
            Hw::Cmdq(d) => d.held(),
        }
    }

    /// Handles one of the driver's own events.
    pub fn handle<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        ev: DriverEvent,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        match ev {
            DriverEvent::Run => {
                if self.kick == Some(now) {
                    self.kick = None;
                }
                self.run(now, up, q);
            }
            DriverEvent::DeviceDone(rq) => {
                let irq = self.cpu.with(|c| c.completion_irq(now));
                q.at(now + irq, DriverEvent::Irq(rq));
            }
            DriverEvent::Irq(rq) => match self.hw {
                Hw::Legacy(_) => self.legacy_irq(now, rq, up, q),
                Hw::Cmdq(_) => self.cmdq_irq(now, rq, up, q),
            },
            DriverEvent::Ended => match self.hw {
                Hw::Legacy(_) => self.legacy_ended(now, up, q),
                Hw::Cmdq(_) => self.cmdq_ended(now, up, q),
            },
            DriverEvent::BkopsIdle(g) => {
                let idle = matches!(&self.hw, Hw::Legacy(d) if d.asleep && d.held() == 0);
                if g == self.bkops_gen && idle && self.device.bkops_status() >= BKOPS_START_LEVEL {
                    self.device.start_bkops(now);
                }
            }
            DriverEvent::WriteStep(rq, gen) => {
                if gen == self.step_gen {
                    self.step_write(now, rq, q);
                }
            }
            DriverEvent::Urgent => self.legacy_urgent(now, up, q),
            DriverEvent::Stopped(rq) => self.legacy_stopped(now, rq, up, q),
        }
    }

    /// Tells the driver whether the scheduler has the urgent-request hook
    /// (`elevator_is_urgent_fn`). Without it no request is ever urgent, so
    /// no write is ever stopped: writes then go to the card whole instead
    /// of one transfer at a time (the same timing, less simulation work).
    pub fn set_scheduler_marks_urgent(&mut self, marks: bool) {
        self.urgent_stop &= marks;
    }

    /// True when the driver takes urgent-request notifications
    /// (`q->urgent_request_fn` is set): see [`Driver::urgent_request_fn`].
    pub fn takes_urgent_requests(&self) -> bool {
        self.urgent_stop
    }

    /// `q->urgent_request_fn` (msm-3.4 `mmc_urgent_request`): the scheduler
    /// holds an urgent request. When the legacy driver has a request in
    /// flight or prepared, `mmcqd` (waiting for the request on the bus) is
    /// woken to decide whether to stop it; otherwise this is a plain
    /// [`Driver::request_fn`].
    pub fn urgent_request_fn<E: DriverEvents>(&mut self, now: Ns, q: &mut EventQueue<E>) {
        let cpu = &self.cpu;
        match &mut self.hw {
            Hw::Legacy(d) if d.executing.is_some() || d.prepared.is_some() => {
                d.is_urgent = true;
                let from = now.max(d.cpu_free);
                q.at(
                    from + cpu.with(|c| c.mmcqd_wakeup(from)),
                    DriverEvent::Urgent,
                );
            }
            _ => self.request_fn(now, q),
        }
    }

    /// A stoppable write's planned transfer ended at `now`: the device
    /// takes the piece and plans the next, or the write completes.
    fn step_write<E: DriverEvents>(&mut self, now: Ns, rq: RqId, q: &mut EventQueue<E>) {
        let step = self.device.step_write(now);
        self.follow_write(rq, step, q);
    }

    /// Schedules what comes next for stoppable write `rq`: its next
    /// transfer's end, or its completion.
    fn follow_write<E: DriverEvents>(&mut self, rq: RqId, step: WriteStep, q: &mut EventQueue<E>) {
        match step {
            WriteStep::Next(at) => q.at(at, DriverEvent::WriteStep(rq, self.step_gen)),
            WriteStep::Done(done) => {
                let polled = self.polls_writes();
                self.command_done(rq, done, polled, q);
            }
        }
    }

    /// `mmcqd` went to sleep at `now`: arms the BKOPS idle check.
    fn arm_bkops<E: DriverEvents>(&mut self, now: Ns, q: &mut EventQueue<E>) {
        if let Some(idle) = self.bkops_idle_ns {
            self.bkops_gen = self.bkops_gen.wrapping_add(1);
            q.at(now + idle, DriverEvent::BkopsIdle(self.bkops_gen));
        }
    }

    /// The queue above rings the driver (see [`Ring`]).
    pub fn ring<E: DriverEvents>(&mut self, now: Ns, ring: Ring, q: &mut EventQueue<E>) {
        match ring {
            Ring::Request => self.request_fn(now, q),
            Ring::Urgent => self.urgent_request_fn(now, q),
        }
    }

    /// `blk_run_queue` from the interrupt: rings the driver itself when the
    /// queue above still holds requests.
    fn run_queue<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        if let Some(ring) = up.run_queue(self.takes_urgent_requests(), q) {
            self.ring(now, ring, q);
        }
    }

    /// `request_fn`: the queue above holds requests. A sleeping `mmcqd`
    /// is woken (after its wake-up cost); a CMDQ hardware queue runs from
    /// the caller's context when a tag is free.
    pub fn request_fn<E: DriverEvents>(&mut self, now: Ns, q: &mut EventQueue<E>) {
        let cpu = &self.cpu;
        let at = match &mut self.hw {
            Hw::Cmdq(d) => {
                d.asleep = false;
                (d.can_fetch() || d.can_issue(now)).then_some(now)
            }
            Hw::Legacy(d) if d.asleep => {
                d.asleep = false;
                self.bkops_gen = self.bkops_gen.wrapping_add(1);
                Some(now + cpu.with(|c| c.mmcqd_wakeup(now)))
            }
            Hw::Legacy(d) => d.can_fetch().then_some(now),
        };
        if let Some(at) = at {
            self.kick_at(at, q);
        }
    }

    /// Runs the driver's next step at `now` (unless it sleeps).
    fn run<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        match self.hw {
            Hw::Legacy(_) => self.legacy_run(now, up, q),
            Hw::Cmdq(_) => self.cmdq_run(now, up, q),
        }
    }

    /// Schedules a driver run at `at` unless one is due no later.
    fn kick_at<E: DriverEvents>(&mut self, at: Ns, q: &mut EventQueue<E>) {
        if self.kick.is_some_and(|k| k <= at) {
            return;
        }
        self.kick = Some(at);
        q.at(at, DriverEvent::Run);
    }

    /// Takes `r` from the queue at `now`: remembers it until its
    /// completion; returns the time from `now` until `mmcqd` has prepared
    /// it (scheduler dispatch hook, command setup, DMA mapping; after
    /// `mmcqd`'s earlier work and any wait for its core), ns.
    fn hold(&mut self, now: Ns, r: DriverRequest) -> Ns {
        let i = r.id as usize;
        if self.held.len() <= i {
            self.held.resize(i + 1, (r, DeviceTimes::default()));
        }
        let times = DeviceTimes {
            fetch: now,
            ..DeviceTimes::default()
        };
        self.held[i] = (r, times);
        // A performance hint only (`device::warm`): the command follows
        // after the request's preparation.
        self.device.warm(r.sector, r.op == Op::Write);
        if let Some(h) = r.hint {
            self.device.warm(h.sector, h.write);
        }
        self.cpu.with(|c| c.prep(now, r.sectors))
    }

    /// Sends held request `rq` to the device at `now` — queued as a CMDQ
    /// task, or as a legacy command sequence — and schedules its
    /// completion.
    fn issue<E: DriverEvents>(&mut self, now: Ns, rq: RqId, queued: bool, q: &mut EventQueue<E>) {
        let r = self.held[rq as usize].0;
        if self.urgent_stop && !queued && r.op == Op::Write && !r.fua {
            // A write the driver may stop for an urgent read: the device
            // takes it one transfer at a time.
            let cmd = self.command(&r, false);
            self.held[rq as usize].1.start = now;
            let step = self.device.begin_stoppable_write(now, &cmd);
            self.follow_write(rq, step, q);
            return;
        }
        self.held[rq as usize].1.start = now;
        // Whether the last command is a legacy write the driver polls.
        let polled_write = !queued && r.op == Op::Write && self.polls_writes();
        let (done, polled) = if r.op == Op::Flush && !self.device.config().write_buffer.enabled {
            // `mmc_flush_cache` sends nothing when the card's cache is off.
            (now, false)
        } else if r.op == Op::Discard {
            (self.issue_discard(now, &r), false)
        } else if r.op == Op::Write && r.fua {
            self.issue_fua_write(now, rq, queued)
        } else {
            let cmd = self.command(&r, queued);
            (self.device.execute(now, &cmd), polled_write)
        };
        self.command_done(rq, done, polled, q);
    }

    /// The device command of `r` on the legacy or the queued path.
    fn command(&self, r: &DriverRequest, queued: bool) -> crate::device::DeviceCommand {
        if queued {
            command::queued(r)
        } else {
            command::legacy(r)
        }
    }

    /// Sends discard `r` from `now` as the erase-class commands the card
    /// takes (`mmc_blk_issue_discard_rq` / `mmc_blk_issue_secdiscard_rq`,
    /// [`command::erase`]); returns when the card is done, ns (`now` when
    /// nothing is sent).
    fn issue_discard(&mut self, now: Ns, r: &DriverRequest) -> Ns {
        let cfg = self.device.config();
        let plan = command::erase(r, &cfg.features, cfg.erase_group_sectors());
        if r.secure && !cfg.features.can_sanitize() {
            self.device.count_secure_discard_as_plain();
        }
        plan.map_or(now, |cmd| self.device.execute(now, &cmd))
    }

    /// Sends held FUA write `rq` from `now` the way the card makes it
    /// durable ([`FuaPath`]); returns when its last command ends, ns, and
    /// whether that command is a write the driver polls. A legacy write
    /// followed by another command is polled before it
    /// ([`Driver::poll_inline`]).
    fn issue_fua_write(&mut self, now: Ns, rq: RqId, queued: bool) -> (Ns, bool) {
        let r = self.held[rq as usize].0;
        let polled = !queued && self.polls_writes();
        match self.device.config().features.fua_path() {
            FuaPath::ReliableWrite => {
                let cmd = self.command(&r, queued);
                (self.device.execute(now, &cmd), polled)
            }
            FuaPath::LegacyReliableWrite(rel) => {
                // `mmc_apply_rel_rw`: the request goes as several reliable
                // writes, each completed before the next is sent.
                let (mut t, mut sector) = (now, r.sector);
                let end = r.sector + r.sectors as u64;
                let mut times = self.held[rq as usize].1;
                loop {
                    let sectors = command::legacy_reliable_sectors(sector, end - sector, rel);
                    let part = DriverRequest {
                        sector,
                        sectors,
                        ..r
                    };
                    let cmd = self.command(&part, queued);
                    t = self.device.execute(t, &cmd);
                    sector += sectors as u64;
                    if sector >= end {
                        break;
                    }
                    if polled {
                        t = self.poll_inline(t, &mut times);
                    }
                }
                self.held[rq as usize].1 = times;
                (t, polled)
            }
            FuaPath::PostFlush => {
                // No FUA on the queue: blk-flush sends the data as a plain
                // write, then a flush (needed only for a volatile cache
                // that is on) before the request completes.
                let plain = DriverRequest { fua: false, ..r };
                let cmd = self.command(&plain, queued);
                let mut t = self.device.execute(now, &cmd);
                let wb = &self.device.config().write_buffer;
                if !(wb.enabled && wb.volatile) {
                    return (t, polled);
                }
                if polled {
                    let mut times = self.held[rq as usize].1;
                    t = self.poll_inline(t, &mut times);
                    self.held[rq as usize].1 = times;
                }
                let flush = DriverRequest {
                    op: Op::Flush,
                    sector: 0,
                    sectors: 0,
                    ..plain
                };
                let cmd = self.command(&flush, queued);
                (self.device.execute(t, &cmd), false)
            }
        }
    }

    /// Sends held request `lead` with the held requests `members` packed
    /// behind it (all writes or all reads) as one packed command at `now`
    /// and schedules the pack's completion (as `lead`'s).
    fn issue_packed<E: DriverEvents>(
        &mut self,
        now: Ns,
        lead: RqId,
        members: &[RqId],
        q: &mut EventQueue<E>,
    ) {
        let cmds: Vec<_> = std::iter::once(lead)
            .chain(members.iter().copied())
            .map(|id| command::legacy(&self.held[id as usize].0))
            .collect();
        let done = self.device.execute_packed(now, &cmds);
        for &id in std::iter::once(&lead).chain(members) {
            self.held[id as usize].1.start = now;
        }
        let polled = cmds[0].op == Op::Write && self.polls_writes();
        self.command_done(lead, done, polled, q);
        self.share_poll_times(lead, members);
    }

    /// Ends `rq` in the queue above, which queues its completions; the
    /// interrupt goes on with [`DriverEvent::Ended`] once they have been
    /// delivered.
    fn end<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        rq: RqId,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        let times = self.held[rq as usize].1;
        up.end_request(now, rq, times, q);
        q.immediately(DriverEvent::Ended);
    }
}
