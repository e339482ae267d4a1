//! The platform under the storage stack: the host CPU that every software
//! layer runs on — cores sharing one clock, a cpufreq governor sampling the
//! load on its own timer, CPU-bound background processes under CFS,
//! interrupt affinity and IPIs — and the per-layer CPU costs (platform/JNI,
//! system call, VFS + file system, block layer, scheduler hooks, driver,
//! interrupt, wake-up) that the host, block layer and driver charge on it.
//!
//! Contract:
//! * [`HostConfig`] is the `[host]` table (optionally merged over a host
//!   profile, [`apply_host_profile`]); [`Cpu::new`] builds the CPU from it.
//! * Stages hold a [`SharedCpu`] and ask it to run a step at the current
//!   clock on the core of the task that runs it: the answer is when the
//!   step is done, after any wait in the core's run queue and the core's
//!   cpuidle exit ([`Cpu::run`]), and the core records its busy time;
//!   completions ask where they run ([`Cpu::completion_irq`],
//!   [`Cpu::wake_thread`]). The workload announces each crossing from the
//!   app into native code ([`Cpu::cross`]); the host's system-call entry
//!   charges the platform layer for it ([`Cpu::platform_entry`]).
//! * The [`Platform`] stage owns the governor's timer ([`PlatformEvent`]).
//! * This module sits at the bottom of the layering: it imports only
//!   `types`, `engine`, `error` and `stats`.

pub mod costs;
pub mod cpu;
pub mod cpuidle;
pub mod freq_table;
pub mod governor;
pub mod intellidemand;
pub mod profile;
pub mod runqueue;

pub use costs::{CostsUs, LayerCosts};
pub use cpu::{CoreStats, Cpu, CpuStats, Runner, SharedCpu};
pub use cpuidle::IdleState;
pub use governor::{GovernorKind, InteractiveParams, OndemandParams};
pub use intellidemand::IntellidemandParams;
pub use profile::{apply_host_profile, HostConfig};
pub use runqueue::RunQueueStats;

use crate::engine::EventQueue;
use crate::types::Ns;

/// Events the platform schedules for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlatformEvent {
    /// The governor's sampling timer.
    GovernorSample,
}

/// The platform stage: the CPU and its governor timer.
#[derive(Clone, Debug)]
pub struct Platform {
    cpu: SharedCpu,
}

impl Platform {
    /// The stage around `cpu`.
    pub fn new(cpu: SharedCpu) -> Platform {
        Platform { cpu }
    }

    /// The CPU (shared with the stages that charge time on it).
    pub fn cpu(&self) -> &SharedCpu {
        &self.cpu
    }

    /// Starts the governor's timer at time 0 (a fixed clock has none).
    pub fn start<E: From<PlatformEvent>>(&self, q: &mut EventQueue<E>) {
        if let Some(dt) = self.cpu.with(|c| c.next_sample_ns()) {
            q.at(dt, PlatformEvent::GovernorSample);
        }
    }

    /// Handles a platform event; `running` says whether anything may still
    /// happen (the timer stops when nothing will).
    pub fn handle<E: From<PlatformEvent>>(
        &mut self,
        now: Ns,
        ev: PlatformEvent,
        running: bool,
        q: &mut EventQueue<E>,
    ) {
        match ev {
            PlatformEvent::GovernorSample => {
                let next = self.cpu.with(|c| {
                    c.sample(now);
                    c.next_sample_ns()
                });
                if let (true, Some(dt)) = (running, next) {
                    q.at(now + dt, PlatformEvent::GovernorSample);
                }
            }
        }
    }

    /// The CPU's report for a run that ended at `end`.
    pub fn stats(&self, end: Ns) -> CpuStats {
        self.cpu.with(|c| c.stats(end))
    }
}
