//! Synthetic jobs as application threads: each thread issues its next
//! system call to the host when the previous one returns, plus its think
//! time, until its request count or duration runs out; every
//! `fsync_every` writes it calls fsync().

use super::synthetic::OffsetGen;
use crate::config::{JobOp, Scenario};
use crate::engine::{component_rng, EventQueue, SimRng};
use crate::error::Result;
use crate::host::{Below, Host, HostEvents, OpenFlags, Syscall, Task};
use crate::stats::report::Collector;
use crate::types::{us_to_ns, Ns, NS_PER_MS, PAGE_BYTES};

/// Events of the synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobEvent {
    /// A thread starts its next call.
    Issue(u32),
}

/// An event type that can carry the jobs' events and the host's.
pub trait JobEvents: From<JobEvent> + HostEvents {}
impl<E: From<JobEvent> + HostEvents> JobEvents for E {}

/// One application thread of a job.
struct JobThread {
    start_ns: Ns,
    gen: OffsetGen,
    rng: SimRng,
    remaining: u64,
    stop_at: Option<Ns>,
    think: Ns,
    op: JobOp,
    /// fsync() after this many writes (0 = never).
    fsync_every: u32,
    writes_since_fsync: u32,
    request_bytes: u64,
    finished: bool,
}

/// The threads of every job.
pub struct Jobs {
    threads: Vec<JobThread>,
    active: u32,
}

impl Jobs {
    /// Builds the threads of every job of `sc`, creating each one's task
    /// in `host` (thread indices follow job order) and registering it with
    /// `collector`. Job files must exist in the host's layout (validated
    /// with the scenario).
    pub fn build(sc: &Scenario, host: &mut Host, collector: &mut Collector) -> Result<Jobs> {
        let mut threads = Vec::new();
        for (ji, job) in sc.jobs.iter().enumerate() {
            let f = host
                .files()
                .by_name(&job.file)
                .cloned()
                .expect("validated: job file exists");
            let file_bytes = f.pages * PAGE_BYTES;
            let flags = OpenFlags {
                direct: job.direct,
                sync: job.sync,
            };
            for t in 0..job.threads {
                let mut rng = component_rng(sc.seed, &format!("job{ji}.thread{t}"));
                let gen = OffsetGen::new(job, file_bytes, &mut rng);
                // Without `requests`, a job with a duration runs until it
                // ends; one without makes one pass over its region.
                let remaining = match (job.requests, job.duration_ms) {
                    (Some(n), _) => n,
                    (None, Some(_)) => u64::MAX,
                    (None, None) => gen.slots(),
                };
                let pid = job.pid.unwrap_or(1000 + 100 * ji as u32) + t;
                let id =
                    host.add_task(Task::new(pid, job.ioprio(), f.first_sector, f.cache, flags));
                collector.add_thread(id, &job.name, pid);
                threads.push(JobThread {
                    start_ns: (job.start_ms * NS_PER_MS as f64).round() as Ns,
                    gen,
                    rng,
                    remaining,
                    stop_at: job
                        .duration_ms
                        .map(|d| ((job.start_ms + d) * NS_PER_MS as f64).round() as Ns),
                    think: us_to_ns(job.think_time_us),
                    op: job.op,
                    fsync_every: job.fsync_every,
                    writes_since_fsync: 0,
                    request_bytes: job.request_bytes,
                    finished: false,
                });
            }
        }
        let active = threads.len() as u32;
        Ok(Jobs { threads, active })
    }

    /// True when some job writes through the page cache (so the writeback
    /// flusher runs).
    pub fn buffered_writes(sc: &Scenario) -> bool {
        sc.jobs.iter().any(|j| j.op == JobOp::Write && !j.direct)
    }

    /// Schedules every thread's first call.
    pub fn start<E: JobEvents>(&self, q: &mut EventQueue<E>) {
        for (t, th) in self.threads.iter().enumerate() {
            q.at(th.start_ns, JobEvent::Issue(t as u32));
        }
    }

    /// True while a thread may still issue a call.
    pub fn running(&self) -> bool {
        self.active > 0
    }

    /// Handles a jobs event: thread `t` issues its next system call to
    /// `host` (or finishes).
    pub fn handle<E: JobEvents>(
        &mut self,
        now: Ns,
        ev: JobEvent,
        host: &mut Host,
        b: &mut Below<E>,
    ) {
        let JobEvent::Issue(t) = ev;
        let th = &mut self.threads[t as usize];
        if th.finished {
            return;
        }
        // An fsync() is due after every `fsync_every` writes.
        if th.fsync_every > 0 && th.writes_since_fsync >= th.fsync_every {
            th.writes_since_fsync = 0;
            host.syscall(now, t, Syscall::Fsync, b);
            return;
        }
        if th.remaining == 0 || th.stop_at.is_some_and(|s| now >= s) {
            th.finished = true;
            self.active -= 1;
            return;
        }
        th.remaining -= 1;
        let offset = th.gen.next_offset(&mut th.rng);
        let bytes = th.request_bytes;
        let sc = match th.op {
            JobOp::Read => Syscall::Read { offset, bytes },
            JobOp::Write => {
                th.writes_since_fsync += 1;
                Syscall::Write { offset, bytes }
            }
        };
        host.syscall(now, t, sc, b);
    }

    /// Thread `t`'s call returned at `now`: its next one follows after its
    /// think time.
    pub fn returned<E: JobEvents>(&mut self, now: Ns, t: u32, q: &mut EventQueue<E>) {
        q.at(now + self.threads[t as usize].think, JobEvent::Issue(t));
    }
}
