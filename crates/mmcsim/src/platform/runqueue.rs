//! A core's run queue: tasks (application threads, the flusher, the
//! journal thread, `mmcqd`) that become runnable while the core is busy
//! wait for it; one that wakes on an idle core pays the cpuidle exit
//! latency first.
//!
//! Each task asks for the core when it becomes runnable, at its simulated
//! time; the simulation handles those moments in time order (same-time
//! ties in event order, so the jobs' first calls go by thread index), and
//! a task is queued behind the work already placed on its core (the
//! queue's tail). A burst is the CPU work between two of a task's sleeps
//! or hand-overs (a system call's entry, a page-cache copy, a bio
//! submission, a request's preparation): tens of µs, far below CFS's
//! `sched_min_granularity` (0.75 ms × (1 + ilog2 ncpus)), so CFS lets it
//! finish once it runs, and runnable CPU-bound tasks take one burst each
//! in turn — each gets its fair share, in bursts instead of 0.75 ms
//! slices. Choosing among several waiting tasks by least virtual runtime
//! instead of arrival, and slicing bursts longer than the granularity,
//! are not modelled: the host learns when its work ends at the moment it
//! asks, so work already placed is never moved.

use super::cpuidle::IdleStates;
use crate::types::Ns;
use serde::Serialize;

/// Where a burst that became runnable at some time runs on its core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// When it starts running, ns.
    pub begin: Ns,
    /// Time spent waiting behind work already on the core, ns.
    pub wait: Ns,
    /// cpuidle exit latency paid because the core was idle, ns.
    pub exit: Ns,
}

/// Admits a burst runnable at `ready` to a core whose placed work ends at
/// `tail`: behind it when the core is busy then; after the exit latency
/// of the idle state it sleeps in when it has been idle (never with a
/// background hog, which keeps the core busy).
pub fn admit(tail: Ns, ready: Ns, hogs: u32, idle: &IdleStates) -> Admission {
    if tail >= ready {
        return Admission {
            begin: tail,
            wait: tail - ready,
            exit: 0,
        };
    }
    let exit = if hogs > 0 {
        0
    } else {
        idle.exit_after(ready - tail)
    };
    Admission {
        begin: ready + exit,
        wait: 0,
        exit,
    }
}

/// Run-queue and idle-exit counters of the whole CPU.
#[derive(Clone, Debug, Default)]
pub struct RunQueueCounters {
    /// Bursts placed on a core (work of a task, non-zero).
    bursts: u64,
    /// Bursts that waited for their core.
    waited: u64,
    /// Summed wait, ns.
    wait_total: u128,
    /// Longest wait, ns.
    wait_max: Ns,
    /// Wake-ups of an idle core (bursts and interrupts).
    idle_exits: u64,
    /// Summed exit latency, ns.
    exit_total: u128,
}

impl RunQueueCounters {
    /// Notes a burst that waited `wait` ns (behind other work or, on a
    /// core with hogs, for CFS to pick it) and paid `exit` ns of idle
    /// exit.
    pub fn burst(&mut self, wait: Ns, exit: Ns) {
        self.bursts += 1;
        if wait > 0 {
            self.waited += 1;
            self.wait_total += u128::from(wait);
            self.wait_max = self.wait_max.max(wait);
        }
        self.exit(exit);
    }

    /// Notes an idle exit of `exit` ns (0: the core was not idle).
    pub fn exit(&mut self, exit: Ns) {
        if exit > 0 {
            self.idle_exits += 1;
            self.exit_total += u128::from(exit);
        }
    }

    /// What the report shows.
    pub fn stats(&self) -> RunQueueStats {
        let mean = |total: u128, n: u64| {
            if n == 0 {
                0.0
            } else {
                total as f64 / n as f64 / 1000.0
            }
        };
        RunQueueStats {
            run_queue_wait_us: WaitUs {
                mean: mean(self.wait_total, self.bursts),
                max: self.wait_max as f64 / 1000.0,
            },
            bursts: self.bursts,
            bursts_waited: self.waited,
            idle_exits: self.idle_exits,
            idle_exit_us_total: self.exit_total as f64 / 1000.0,
        }
    }
}

/// A wait time's mean and maximum, µs.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct WaitUs {
    /// Mean over every burst (those that did not wait count as 0), µs.
    pub mean: f64,
    /// Longest, µs.
    pub max: f64,
}

/// The run queues' part of the CPU report.
#[derive(Clone, Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct RunQueueStats {
    /// Time a runnable task waited for its core, per burst, µs.
    pub run_queue_wait_us: WaitUs,
    /// Bursts of task CPU work placed on the cores.
    pub bursts: u64,
    /// Bursts that waited for their core.
    pub bursts_waited: u64,
    /// Wake-ups that found their core idle and paid its cpuidle exit
    /// latency (task bursts and interrupts).
    pub idle_exits: u64,
    /// Exit latency paid in all, µs.
    pub idle_exit_us_total: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::cpuidle::IdleState;

    #[test]
    fn a_busy_core_queues_and_an_idle_one_wakes_first() {
        let idle = IdleStates::new(&[IdleState {
            name: "WFI".into(),
            exit_latency_us: 1.0,
            target_residency_us: 1.0,
        }]);
        let busy = admit(50_000, 10_000, 0, &idle);
        assert_eq!((busy.begin, busy.wait, busy.exit), (50_000, 40_000, 0));
        let back_to_back = admit(10_000, 10_000, 0, &idle);
        assert_eq!(back_to_back.exit, 0, "its own previous burst just ended");
        let woke = admit(10_000, 30_000, 0, &idle);
        assert_eq!((woke.begin, woke.exit), (31_000, 1_000));
        assert_eq!(
            admit(10_000, 30_000, 1, &idle).exit,
            0,
            "a hog keeps it busy"
        );
        let mut c = RunQueueCounters::default();
        c.burst(busy.wait, busy.exit);
        c.burst(woke.wait, woke.exit);
        let s = c.stats();
        assert_eq!(s.run_queue_wait_us.mean, 20.0);
        assert_eq!(s.run_queue_wait_us.max, 40.0);
        assert_eq!((s.bursts, s.bursts_waited, s.idle_exits), (2, 1, 1));
    }
}
