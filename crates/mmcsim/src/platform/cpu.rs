//! The host CPU: cores sharing one clock, per-core busy time, thread
//! placement, background CPU hogs under CFS, and where completions run
//! (interrupt affinity, IPIs).
//!
//! Rules (each a documented simplification):
//! * **Clock.** One clock domain: every core runs at the policy frequency
//!   (Exynos 4210 and Snapdragon 400 both clock their cores together). A
//!   cost is converted to time at the frequency current when it starts.
//! * **Placement.** Background hogs are running before the workload starts
//!   and are placed first, each on the least-loaded core (hogs + threads
//!   there; ties to the lowest index, the order `find_idlest_cpu` scans).
//!   Each application thread is placed at its first call on the
//!   least-loaded core by the same rule, and stays there. `mmcqd` runs on
//!   the core of the thread that last submitted I/O (wake-affine: it is
//!   woken by the submitter, and its previous core is idle when the
//!   completion wakes it again).
//! * **Completions.** The MMC interrupt is handled on `irq_core` (unset =
//!   wherever the completion is consumed). With the legacy driver the
//!   handler wakes `mmcqd`: on another core that is an IPI plus a remote
//!   wake-up before the request can end; `mmcqd` then wakes the waiting
//!   thread (another IPI when that thread sits elsewhere). With CMDQ the
//!   request ends on the interrupt core and wakes the thread from there.
//! * **Run queue.** A core runs one task at a time: a task's CPU work
//!   that becomes runnable while its core is busy waits behind the work
//!   already there ([`super::runqueue`]), so CPU-bound threads sharing a
//!   core take turns; a task's own pieces of work follow each other.
//!   `mmcqd`, the flusher and the journal thread queue like application
//!   threads. The completion interrupt (hard IRQ) preempts whatever runs
//!   and does not queue.
//! * **Idle exit.** Work (a task's or the interrupt's) arriving on a core
//!   that has been idle first pays the exit latency of the cpuidle state
//!   the core sleeps in ([`super::cpuidle`]); the exit is idle time to the
//!   governor.
//! * **CFS and hogs.** A hog is always runnable, so a hog core is 100 %
//!   busy. An application thread (or `mmcqd`) waking on a hog core is
//!   placed at `max(vruntime, min_vruntime − sched_latency/2)`
//!   (GENTLE_FAIR_SLEEPERS) and preempts the hog at once when it is more
//!   than `sched_wakeup_granularity` behind (`check_preempt_wakeup`);
//!   otherwise it waits until the hogs have run that far ahead (the
//!   scheduler tick that would notice is not modelled). That wait counts
//!   as run-queue wait.
//! * **JNI.** The platform layer's cost (Dalvik → libcore → JNI and back)
//!   is paid once per crossing from the app into native code, which the
//!   workload announces ([`Cpu::cross`]); the system calls made inside the
//!   native code (SQLite's VFS calls of one statement) pay none.

use super::costs::{CostsUs, LayerCosts};
use super::cpuidle::IdleStates;
use super::governor::{FreqTable, Governor, GovernorKind};
use super::profile::HostConfig;
use super::runqueue::{self, RunQueueCounters, RunQueueStats};
use crate::types::{us_to_ns, Ns};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;

/// One core's state.
#[derive(Clone, Debug, Default)]
struct Core {
    /// Background hogs placed here.
    hogs: u32,
    /// Threads placed here.
    threads: u32,
    /// Busy time charged so far (union of charged intervals), ns.
    busy: u64,
    /// End of the latest charged interval, ns: the tail of the core's run
    /// queue (work placed here so far ends then).
    busy_until: Ns,
    /// `busy` at the previous governor sample, ns.
    busy_at_sample: u64,
    /// CPU time of threads (not hogs) here, ns (the hogs get the rest).
    thread_cpu: u64,
    /// Threads placed here now asleep in `io_schedule` (`rq->nr_iowait`).
    nr_iowait: u32,
    /// When `nr_iowait` last became non-zero, ns.
    iowait_since: Ns,
    /// Time with `nr_iowait > 0` up to `iowait_since` (closed spells), ns.
    iowait: u64,
    /// `iowait` (spell in progress included) at the previous sample, ns.
    iowait_at_sample: u64,
    /// Busy time charged while `nr_iowait > 0` (the core ran something
    /// else while a thread waited: not iowait in the kernel's accounting), ns.
    busy_in_iowait: u64,
    /// `busy_in_iowait` at the previous sample, ns.
    busy_in_iowait_at_sample: u64,
}

impl Core {
    fn load(&self) -> u32 {
        self.hogs + self.threads
    }

    /// Busy time up to `t` (the part of the last interval beyond `t` not
    /// counted), ns.
    fn busy_at(&self, t: Ns) -> u64 {
        self.busy.saturating_sub(self.busy_until.saturating_sub(t))
    }

    /// Time with a thread asleep in `io_schedule` up to `t`, ns.
    fn iowait_at(&self, t: Ns) -> u64 {
        if self.nr_iowait > 0 {
            self.iowait + t.saturating_sub(self.iowait_since)
        } else {
            self.iowait
        }
    }

    /// Adds `[start, end)` to the busy time (the part not already counted).
    fn charge(&mut self, start: Ns, end: Ns) {
        let new = end.saturating_sub(start.max(self.busy_until));
        self.busy += new;
        if self.nr_iowait > 0 {
            self.busy_in_iowait += new;
        }
        self.busy_until = self.busy_until.max(end);
    }
}

/// What the report shows of one core.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct CoreStats {
    /// Fraction of the run the core was busy (1 with a hog).
    pub busy_fraction: f64,
    /// Background hogs on it.
    pub hogs: u32,
    /// Workload threads placed on it.
    pub threads: u32,
}

/// What the report shows of the CPU.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct CpuStats {
    /// Governor that ran.
    pub governor: &'static str,
    /// Whether the governor counted iowait as load (`io_is_busy`).
    pub io_is_busy: bool,
    /// Time-weighted mean clock over the run, MHz.
    pub mean_freq_mhz: f64,
    /// Clock at the end of the run, MHz.
    pub final_freq_mhz: f64,
    /// Inter-processor interrupts sent to wake a thread (or `mmcqd`) on
    /// another core than the one that completed its I/O.
    pub ipis: u64,
    /// Per core.
    pub cores: Vec<CoreStats>,
    /// Run-queue waits and idle exits.
    #[serde(flatten)]
    pub run_queue: RunQueueStats,
}

/// The CPU model.
#[derive(Debug)]
pub struct Cpu {
    reference_mhz: f64,
    costs_us: CostsUs,
    table: Option<FreqTable>,
    kind: GovernorKind,
    governor: Governor,
    /// The governor counts time a core's threads sleep in `io_schedule` as
    /// busy (`io_is_busy`).
    io_is_busy: bool,
    /// Thread index → asleep in `io_schedule` now.
    thread_iowait: Vec<bool>,
    freq: f64,
    costs: LayerCosts,
    cores: Vec<Core>,
    /// Core of each thread index, once placed.
    thread_core: Vec<Option<u32>>,
    /// CFS virtual runtime of each thread index, ns.
    thread_vr: Vec<f64>,
    mmcqd_core: u32,
    mmcqd_vr: f64,
    irq_core: Option<u32>,
    /// The CMDQ driver ends requests on the interrupt core.
    cmdq: bool,
    ipi: Ns,
    ipis: u64,
    /// Scaled `sched_latency`, ns.
    latency: f64,
    /// Scaled `sched_wakeup_granularity`, ns.
    granularity: f64,
    freq_area: f64,
    last_change: Ns,
    last_sample: Ns,
    /// The SoC's cpuidle states.
    idle: IdleStates,
    /// Run-queue and idle-exit counters.
    rq: RunQueueCounters,
    /// End of each thread index's latest work, ns.
    thread_end: Vec<Ns>,
    /// End of `mmcqd`'s latest work, ns.
    mmcqd_end: Ns,
    /// Thread index → its next system call starts a crossing from the app
    /// into native code (pays the platform layer).
    crossing: Vec<bool>,
}

/// Who runs a piece of work: a workload thread (by thread index) or the
/// MMC driver's `mmcqd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// A host thread (application, flusher or traced process).
    Thread(u32),
    /// The `mmcqd` kernel thread.
    Mmcqd,
}

impl Cpu {
    /// A CPU built from `h` for a queue run by `scheduler`; `cmdq` says
    /// whether the CMDQ driver (completions end on the interrupt core)
    /// runs. Call [`HostConfig::validate`] first.
    pub fn new(h: &HostConfig, scheduler: &str, cmdq: bool) -> Cpu {
        let table = (!h.freq_table_mhz.is_empty()).then(|| FreqTable(h.freq_table_mhz.clone()));
        let snap = |f: f64| table.as_ref().map_or(f, |t| t.at_or_above(f));
        let freq = match (h.governor, &table) {
            (GovernorKind::Performance, Some(t)) => t.max(),
            (GovernorKind::Powersave, Some(t)) => t.min(),
            _ => snap(h.cpu_freq_mhz),
        };
        let governor = match (h.governor, &table) {
            (GovernorKind::Ondemand, Some(_)) => Governor::Ondemand {
                p: h.ondemand.clone(),
                rate_mult: 1,
            },
            (GovernorKind::Interactive, Some(t)) => {
                let hs = h.interactive.hispeed_freq_mhz;
                Governor::Interactive {
                    p: h.interactive.clone(),
                    loads: h
                        .interactive
                        .parse_target_loads()
                        .expect("validated target_loads"),
                    hispeed: if hs > 0.0 { t.at_or_above(hs) } else { t.max() },
                    floor_freq: freq,
                    floor_validate: 0,
                    hispeed_validate: 0,
                }
            }
            (GovernorKind::Intellidemand, Some(_)) => Governor::Intellidemand(
                super::intellidemand::Intellidemand::new(h.intellidemand.clone(), h.cores as usize),
            ),
            _ => Governor::Fixed,
        };
        let n = h.cores as usize;
        // SCHED_TUNABLESCALING_LOG: factor 1 + ilog2(min(cpus, 8)).
        let factor = 1.0 + (n.min(8) as f64).log2().floor();
        let costs_us = h.costs_us(scheduler);
        let mut cpu = Cpu {
            reference_mhz: h.reference_freq_mhz,
            costs_us,
            costs: costs_us.at(h.reference_freq_mhz, freq),
            table,
            kind: h.governor,
            governor,
            io_is_busy: h.io_is_busy_resolved(),
            thread_iowait: Vec::new(),
            freq,
            cores: vec![Core::default(); n],
            thread_core: Vec::new(),
            thread_vr: Vec::new(),
            mmcqd_core: 0,
            mmcqd_vr: 0.0,
            irq_core: h.irq_core,
            cmdq,
            ipi: us_to_ns(h.ipi_us),
            ipis: 0,
            latency: h.sched_latency_us * 1000.0 * factor,
            granularity: h.sched_wakeup_granularity_us * 1000.0 * factor,
            freq_area: 0.0,
            last_change: 0,
            last_sample: 0,
            idle: IdleStates::new(&h.cpuidle_states),
            rq: RunQueueCounters::default(),
            thread_end: Vec::new(),
            mmcqd_end: 0,
            crossing: Vec::new(),
        };
        for _ in 0..h.background_cpu_hogs {
            let c = cpu.least_loaded();
            cpu.cores[c].hogs += 1;
        }
        // The governor has settled at the background load before the run:
        // 100 % on a core with a hog, idle elsewhere.
        if let Some(t) = &cpu.table {
            let loads: Vec<f64> = cpu
                .cores
                .iter()
                .map(|c| if c.hogs > 0 { 100.0 } else { 0.0 })
                .collect();
            cpu.freq = cpu.governor.sample(0, &loads, cpu.freq, t);
            cpu.costs = cpu.costs_us.at(cpu.reference_mhz, cpu.freq);
        }
        cpu
    }

    fn least_loaded(&self) -> usize {
        (0..self.cores.len())
            .min_by_key(|&c| (self.cores[c].load(), c))
            .expect("at least one core")
    }

    /// Core of thread `t` (placing it on first use).
    pub fn core_of(&mut self, t: u32) -> u32 {
        let i = t as usize;
        if self.thread_core.len() <= i {
            self.thread_core.resize(i + 1, None);
            self.thread_vr.resize(i + 1, 0.0);
            self.thread_iowait.resize(i + 1, false);
            self.thread_end.resize(i + 1, 0);
            self.crossing.resize(i + 1, false);
        }
        if let Some(c) = self.thread_core[i] {
            return c;
        }
        let c = self.least_loaded();
        self.cores[c].threads += 1;
        self.thread_core[i] = Some(c as u32);
        c as u32
    }

    /// The costs at the current clock.
    pub fn costs(&self) -> &LayerCosts {
        &self.costs
    }

    /// Current clock, MHz.
    pub fn freq_mhz(&self) -> f64 {
        self.freq
    }

    fn core_of_runner(&mut self, r: Runner) -> u32 {
        match r {
            Runner::Thread(t) => self.core_of(t),
            Runner::Mmcqd => self.mmcqd_core,
        }
    }

    /// End of `r`'s latest work, ns.
    fn runner_end(&mut self, r: Runner) -> Ns {
        match r {
            Runner::Thread(t) => {
                self.core_of(t);
                self.thread_end[t as usize]
            }
            Runner::Mmcqd => self.mmcqd_end,
        }
    }

    /// Places `ns` of CPU work of `r`, runnable from `start` (or when its
    /// previous work ends, if later), on its core's run queue; `waited`
    /// ns it already waited for CFS to pick it over a hog are counted as
    /// run-queue wait. Returns when the work ends, ns (`start` for no
    /// work).
    fn run_at(&mut self, r: Runner, start: Ns, ns: Ns, waited: Ns) -> Ns {
        if ns == 0 {
            return start;
        }
        let ready = start.max(self.runner_end(r));
        let c = self.core_of_runner(r) as usize;
        let core = &mut self.cores[c];
        let a = runqueue::admit(core.busy_until, ready, core.hogs, &self.idle);
        self.rq.burst(a.wait + waited, a.exit);
        let end = a.begin + ns;
        core.charge(a.begin, end);
        core.thread_cpu += ns;
        match r {
            Runner::Thread(t) => {
                self.thread_vr[t as usize] += ns as f64;
                self.thread_end[t as usize] = end;
            }
            Runner::Mmcqd => {
                self.mmcqd_vr += ns as f64;
                self.mmcqd_end = end;
            }
        }
        end
    }

    /// Runs `ns` of CPU work of `r` that becomes runnable at `start`;
    /// returns the time from `start` until it is done (its wait for the
    /// core, the core's idle exit and the work), ns.
    pub fn run(&mut self, r: Runner, start: Ns, ns: Ns) -> Ns {
        self.run_at(r, start, ns, 0) - start
    }

    /// Thread `t` submits I/O: `mmcqd` follows it (wake-affine).
    pub fn submitted_by(&mut self, t: u32) {
        self.mmcqd_core = self.core_of(t);
    }

    /// CFS wake-up of `r` at `now` on its core: how long until it runs, ns
    /// (0 without hogs, or when it preempts the hog at once).
    fn wake_delay(&mut self, r: Runner, now: Ns) -> Ns {
        let c = self.core_of_runner(r) as usize;
        let hogs = self.cores[c].hogs;
        if hogs == 0 {
            return 0;
        }
        let min_vr = now.saturating_sub(self.cores[c].thread_cpu) as f64 / hogs as f64;
        let vr = match r {
            Runner::Thread(t) => &mut self.thread_vr[t as usize],
            Runner::Mmcqd => &mut self.mmcqd_vr,
        };
        *vr = vr.max(min_vr - self.latency / 2.0);
        let behind = min_vr - *vr;
        if behind > self.granularity {
            0
        } else {
            ((self.granularity - behind) * hogs as f64).ceil() as Ns
        }
    }

    /// Waking `mmcqd` for new requests at `now`: time until it has run
    /// its wake-up (CFS delay behind hogs, run-queue wait, idle exit,
    /// wake-up cost), ns.
    pub fn mmcqd_wakeup(&mut self, now: Ns) -> Ns {
        let d = self.wake_delay(Runner::Mmcqd, now);
        let cost = self.costs.mmcqd_wakeup;
        self.run_at(Runner::Mmcqd, now + d, cost, d) - now
    }

    /// `mmcqd` fetches (scheduler dispatch hook) and prepares a request of
    /// `sectors` at `now`: time until the preparation is done, ns. Several
    /// preparations asked for at the same `now` run one after the other:
    /// each returns the end of its own.
    pub fn prep(&mut self, now: Ns, sectors: u32) -> Ns {
        let cost = self.costs.sched_dispatch + self.costs.prep(sectors);
        self.run(Runner::Mmcqd, now, cost)
    }

    /// The completion interrupt fires at `now`: time until the request can
    /// end (idle exit of the interrupt's core, handler, then with the
    /// legacy driver the wake-up of `mmcqd`, across cores an IPI and a
    /// remote wake-up), ns.
    pub fn completion_irq(&mut self, now: Ns) -> Ns {
        let irq = self.costs.irq;
        let Some(ic) = self.irq_core else {
            let c = self.mmcqd_core as usize;
            return self.hardirq(c, now, irq) - now;
        };
        let handled = self.hardirq(ic as usize, now, irq);
        if self.cmdq || ic == self.mmcqd_core {
            return handled - now;
        }
        self.ipis += 1;
        let at = handled + self.ipi;
        let d = self.wake_delay(Runner::Mmcqd, at);
        let remote = self.costs.remote_wakeup;
        self.run_at(Runner::Mmcqd, at + d, remote, d) - now
    }

    /// A hard interrupt handler of `ns` on core `c` raised at `now`: it
    /// preempts whatever runs there (it never queues), after the core's
    /// idle exit when the core was idle. Returns when it is done, ns.
    fn hardirq(&mut self, c: usize, now: Ns, ns: Ns) -> Ns {
        let core = &mut self.cores[c];
        let exit = if core.busy_until >= now {
            0
        } else {
            runqueue::admit(core.busy_until, now, core.hogs, &self.idle).exit
        };
        self.rq.exit(exit);
        let begin = now + exit;
        core.charge(begin, begin + ns);
        if core.hogs > 0 {
            core.thread_cpu += ns;
        }
        begin + ns
    }

    /// Thread `t` goes to sleep at `now` waiting for I/O in
    /// `io_schedule` (a page read, direct I/O, writeback it waits on,
    /// dirty throttling): its core's idle time counts as iowait until
    /// [`Cpu::wake_thread`] wakes it.
    pub fn io_sleep(&mut self, t: u32, now: Ns) {
        let c = self.core_of(t) as usize;
        let slot = &mut self.thread_iowait[t as usize];
        if *slot {
            return;
        }
        *slot = true;
        let core = &mut self.cores[c];
        if core.nr_iowait == 0 {
            core.iowait_since = now;
        }
        core.nr_iowait += 1;
    }

    /// Ends thread `t`'s iowait sleep (if any) at `now`.
    fn io_wake(&mut self, t: u32, c: usize, now: Ns) {
        let Some(slot) = self.thread_iowait.get_mut(t as usize) else {
            return;
        };
        if !std::mem::take(slot) {
            return;
        }
        let core = &mut self.cores[c];
        core.nr_iowait -= 1;
        if core.nr_iowait == 0 {
            core.iowait += now.saturating_sub(core.iowait_since);
        }
    }

    /// Thread `t`'s I/O completed at `now` (its request ended): time until
    /// it runs again (remote wake-up across cores, CFS delay behind hogs,
    /// run-queue wait, idle exit, context switch), ns.
    pub fn wake_thread(&mut self, t: u32, now: Ns) -> Ns {
        let tc = self.core_of(t);
        self.io_wake(t, tc as usize, now);
        let from = match (self.cmdq, self.irq_core) {
            (true, Some(ic)) => ic,
            _ => self.mmcqd_core,
        };
        let mut d = 0;
        if self.irq_core.is_some() && from != tc {
            self.ipis += 1;
            d += self.ipi + self.costs.remote_wakeup;
        }
        let hog = self.wake_delay(Runner::Thread(t), now + d);
        let w = self.costs.wakeup;
        let end = self.run_at(Runner::Thread(t), now + d + hog, w, hog);
        // A wake-up without a cost still waits for CFS to pick it.
        end.max(now + d + hog) - now
    }

    /// Thread `t` runs `ns` of work (a cost from [`Cpu::costs`]) that
    /// becomes runnable at `start`; returns the time from `start` until it
    /// is done (run-queue wait, idle exit and the work), ns.
    pub fn thread_work(&mut self, t: u32, start: Ns, ns: Ns) -> Ns {
        self.run(Runner::Thread(t), start, ns)
    }

    /// Thread `t`'s next system call is a new crossing from the app into
    /// native code (a Java I/O call, a SQLite statement, an app loop's
    /// iteration): that call pays the platform layer.
    pub fn cross(&mut self, t: u32) {
        self.core_of(t);
        self.crossing[t as usize] = true;
    }

    /// Thread `t` enters the kernel at `start` for a call moving `bytes`:
    /// the platform layer when the call starts a crossing ([`Cpu::cross`]),
    /// else nothing. Returns the time from `start` until it is done, ns.
    pub fn platform_entry(&mut self, t: u32, start: Ns, bytes: u64) -> Ns {
        self.core_of(t);
        if !std::mem::take(&mut self.crossing[t as usize]) {
            return 0;
        }
        let ns = self.costs.platform(bytes);
        self.thread_work(t, start, ns)
    }

    /// True when a governor samples the load.
    pub fn samples(&self) -> bool {
        self.governor.next_sample_ns().is_some()
    }

    /// Interval to the next governor sample, ns.
    pub fn next_sample_ns(&self) -> Option<Ns> {
        self.governor.next_sample_ns()
    }

    /// A governor sample at `now`: measures each core's load since the
    /// previous sample and sets the clock.
    pub fn sample(&mut self, now: Ns) {
        let window = now.saturating_sub(self.last_sample);
        if window == 0 {
            return;
        }
        let mut loads = Vec::with_capacity(self.cores.len());
        for core in &mut self.cores {
            let busy_now = core.busy_at(now).max(core.busy_at_sample);
            let busy = busy_now - core.busy_at_sample;
            // iowait is idle time with a thread asleep in io_schedule: the
            // spells' length less what the core ran meanwhile, within the
            // window's idle time.
            let iowait_now = core.iowait_at(now);
            let iowait = iowait_now.saturating_sub(core.iowait_at_sample);
            let ran = core
                .busy_in_iowait
                .saturating_sub(core.busy_in_iowait_at_sample);
            let idle_iowait = iowait.saturating_sub(ran).min(window.saturating_sub(busy));
            let counted = if self.io_is_busy {
                busy + idle_iowait
            } else {
                busy
            };
            let l = if core.hogs > 0 {
                100.0
            } else {
                100.0 * counted as f64 / window as f64
            };
            core.busy_at_sample = busy_now;
            core.iowait_at_sample = iowait_now;
            core.busy_in_iowait_at_sample = core.busy_in_iowait;
            loads.push(l.min(100.0));
        }
        self.last_sample = now;
        let Some(table) = &self.table else {
            return;
        };
        let new = self.governor.sample(now, &loads, self.freq, table);
        if new != self.freq {
            self.freq_area += self.freq * (now - self.last_change) as f64;
            self.last_change = now;
            self.freq = new;
            self.costs = self.costs_us.at(self.reference_mhz, new);
        }
    }

    /// The CPU's part of the report for a run that ended at `end`.
    pub fn stats(&self, end: Ns) -> CpuStats {
        let area = self.freq_area + self.freq * end.saturating_sub(self.last_change) as f64;
        let mean = if end > 0 {
            area / end as f64
        } else {
            self.freq
        };
        CpuStats {
            governor: self.kind.name(),
            io_is_busy: self.io_is_busy,
            mean_freq_mhz: mean,
            final_freq_mhz: self.freq,
            ipis: self.ipis,
            cores: self
                .cores
                .iter()
                .map(|c| CoreStats {
                    busy_fraction: if c.hogs > 0 {
                        1.0
                    } else if end > 0 {
                        (c.busy_at(end) as f64 / end as f64).min(1.0)
                    } else {
                        0.0
                    },
                    hogs: c.hogs,
                    threads: c.threads,
                })
                .collect(),
            run_queue: self.rq.stats(),
        }
    }
}

/// The CPU shared by the stages that charge time on it (host, driver) and
/// the platform stage that runs its governor. The simulation is
/// single-threaded; borrows never outlive one call.
#[derive(Clone, Debug)]
pub struct SharedCpu(Rc<RefCell<Cpu>>);

impl SharedCpu {
    /// Shares `cpu`.
    pub fn new(cpu: Cpu) -> SharedCpu {
        SharedCpu(Rc::new(RefCell::new(cpu)))
    }

    /// Runs `f` on the CPU.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(&mut Cpu) -> R) -> R {
        f(&mut self.0.borrow_mut())
    }

    /// The costs at the current clock (a copy).
    pub fn costs(&self) -> LayerCosts {
        *self.0.borrow().costs()
    }

    /// Thread `t` runs the cost `pick` selects, runnable from `start`;
    /// returns the time until it is done (run-queue wait and idle exit
    /// included), ns.
    pub fn thread(&self, t: u32, start: Ns, pick: impl FnOnce(&LayerCosts) -> Ns) -> Ns {
        let mut cpu = self.0.borrow_mut();
        let ns = pick(cpu.costs());
        cpu.thread_work(t, start, ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dual(hogs: u32) -> HostConfig {
        HostConfig {
            cores: 2,
            freq_table_mhz: vec![200.0, 500.0, 800.0, 1000.0, 1200.0],
            governor: GovernorKind::Ondemand,
            background_cpu_hogs: hogs,
            irq_core: Some(0),
            ipi_us: 3.0,
            remote_wakeup_us: 6.0,
            ..HostConfig::default()
        }
    }

    #[test]
    fn the_app_avoids_the_hog_core_and_completions_cross_cores() {
        let mut c = Cpu::new(&dual(0), "noop", false);
        assert_eq!(c.core_of(0), 0);
        c.submitted_by(0);
        let local = c.completion_irq(1000);
        assert_eq!(c.stats(1).ipis, 0);
        let mut h = Cpu::new(&dual(1), "noop", false);
        assert_eq!(h.freq_mhz(), 1200.0, "settled at the hog's 100 % load");
        assert_eq!(h.core_of(0), 1);
        h.submitted_by(0);
        let remote = h.completion_irq(1000);
        assert_eq!(h.stats(1).ipis, 1);
        // Same handler cost at 1200 vs 200 MHz (6× less) plus 3 µs IPI and
        // the remote wake-up.
        assert_eq!(local, 6 * 10_000);
        assert_eq!(remote, 10_000 + 3_000 + 6_000);
    }

    #[test]
    fn ondemand_follows_the_measured_load() {
        let mut c = Cpu::new(&dual(0), "noop", false);
        assert_eq!(c.freq_mhz(), 200.0, "idle before the run");
        // 99 ms busy of a 100 ms window.
        c.run(Runner::Thread(0), 0, 99_000_000);
        c.sample(100_000_000);
        assert_eq!(c.freq_mhz(), 1200.0);
        c.sample(200_000_000);
        assert_eq!(c.freq_mhz(), 200.0);
        let s = c.stats(200_000_000);
        assert!((s.mean_freq_mhz - 700.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn a_sleeper_preempts_the_hog_at_once() {
        let h = HostConfig {
            cores: 1,
            background_cpu_hogs: 1,
            ..HostConfig::default()
        };
        let mut c = Cpu::new(&h, "noop", false);
        assert_eq!(c.core_of(0), 0);
        // Slept long: placed sched_latency/2 behind the hog, which is more
        // than the wake-up granularity.
        assert_eq!(c.wake_delay(Runner::Thread(0), 50_000_000), 0);
        // A thread that just ran 10 ms of CPU is not behind: it waits.
        c.run(Runner::Thread(0), 50_000_000, 10_000_000);
        assert!(c.wake_delay(Runner::Thread(0), 60_000_000) > 0);
    }

    #[test]
    fn io_is_busy_counts_a_threads_io_sleep_as_load_on_its_core() {
        let h = |io: Option<bool>| HostConfig {
            cores: 2,
            freq_table_mhz: vec![192.0, 600.0, 1190.4],
            governor: GovernorKind::Intellidemand,
            io_is_busy: io,
            ..HostConfig::default()
        };
        for (io, want) in [(None, 1190.4), (Some(false), 192.0)] {
            let mut c = Cpu::new(&h(io), "noop", false);
            assert_eq!(c.freq_mhz(), 192.0, "idle before the run");
            // 10 ms of CPU, then 80 ms asleep on a read (while mmcqd runs
            // 1 ms on the same core, which is not iowait), then awake.
            c.run(Runner::Thread(0), 0, 10_000_000);
            c.io_sleep(0, 10_000_000);
            c.submitted_by(0);
            c.run(Runner::Mmcqd, 20_000_000, 1_000_000);
            c.wake_thread(0, 90_000_000);
            c.sample(100_000_000);
            // With io_is_busy: 10 + 1 ms busy + 79 ms iowait = 90 % > 75.
            assert_eq!(c.freq_mhz(), want, "io_is_busy {io:?}");
            assert_eq!(c.stats(100_000_000).io_is_busy, io.unwrap_or(true));
        }
    }

    #[test]
    fn an_io_sleep_still_in_progress_counts_up_to_the_sample() {
        let h = HostConfig {
            cores: 1,
            freq_table_mhz: vec![200.0, 1200.0],
            governor: GovernorKind::Ondemand,
            io_is_busy: Some(true),
            ..HostConfig::default()
        };
        let mut c = Cpu::new(&h, "noop", false);
        c.io_sleep(0, 0);
        c.sample(100_000_000);
        assert_eq!(c.freq_mhz(), 1200.0, "100 % iowait is 100 % load");
        c.wake_thread(0, 110_000_000);
        c.sample(200_000_000);
        assert_eq!(c.freq_mhz(), 200.0, "10 % iowait then idle → down");
    }
}
