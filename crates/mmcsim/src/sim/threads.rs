//! Synthetic closed-loop threads: each issues its next call when the
//! previous one returns, plus its think time.
//!
//! A buffered read walks the page cache like `do_generic_file_read`:
//! read-ahead decides what to read, the thread submits those bios under
//! one plug and sleeps on the first page that is not up to date, then
//! resumes from it. Direct I/O submits bios of at most `max_sectors_kb`
//! and waits for all of them.

use super::{Call, Event, Simulation, NO_CALL, PAGE_IO};
use crate::block::request::Bio;
use crate::config::{JobOp, Scenario};
use crate::engine::{component_rng, SimRng};
use crate::error::Result;
use crate::host::page_cache::{FileId, ReadStep};
use crate::host::readahead::RaState;
use crate::stats::report::{CallKind, CallRecord, Collector};
use crate::types::{us_to_ns, IoPrio, Ns, Op, NS_PER_MS, PAGE_BYTES, SECTORS_PER_PAGE, SECTOR_BYTES};
use crate::workload::synthetic::OffsetGen;

/// One synthetic thread.
pub(super) struct SimThread {
    pub pid: u32,
    pub ioprio: IoPrio,
    pub start_ns: Ns,
    file_first_sector: u64,
    file_cache: FileId,
    ra: RaState,
    gen: OffsetGen,
    rng: SimRng,
    remaining: u64,
    stop_at: Option<Ns>,
    think: Ns,
    op: JobOp,
    direct: bool,
    request_bytes: u64,
    /// The call in progress.
    pub call: Option<u32>,
    /// Buffered read progress: next page to walk and end page.
    pos_page: u64,
    end_page: u64,
    /// Bios prepared by the thread, submitted at its next `SubmitPlug`.
    pending_bios: Vec<Bio>,
    finished: bool,
}

/// Builds the threads of every job, registering them with the collector.
pub(super) fn build(
    sc: &Scenario,
    files: &[(String, u64, u64, FileId)],
    collector: &mut Collector,
) -> Result<Vec<SimThread>> {
    let mut out = Vec::new();
    for (ji, job) in sc.jobs.iter().enumerate() {
        let (_, first_sector, pages, cache) = files
            .iter()
            .find(|f| f.0 == job.file)
            .cloned()
            .expect("validated: job file exists");
        let file_bytes = pages * PAGE_BYTES;
        if job.op == JobOp::Write && !job.direct {
            return Err(crate::error::Error::config(format!(
                "job `{}`: buffered writes are not supported yet; set direct = true",
                job.name
            )));
        }
        for t in 0..job.threads {
            let id = out.len() as u32;
            let mut rng = component_rng(sc.seed, &format!("job{ji}.thread{t}"));
            let gen = OffsetGen::new(job, file_bytes, &mut rng);
            let remaining = job.requests.unwrap_or(gen.slots());
            let pid = job.pid.unwrap_or(1000 + 100 * ji as u32) + t;
            collector.add_thread(id, &job.name, pid);
            out.push(SimThread {
                pid,
                ioprio: IoPrio::from_nice(job.nice),
                start_ns: (job.start_ms * NS_PER_MS as f64).round() as Ns,
                file_first_sector: first_sector,
                file_cache: cache,
                ra: RaState::default(),
                gen,
                rng,
                remaining,
                stop_at: job
                    .duration_ms
                    .map(|d| ((job.start_ms + d) * NS_PER_MS as f64).round() as Ns),
                think: us_to_ns(job.think_time_us),
                op: job.op,
                direct: job.direct,
                request_bytes: job.request_bytes,
                call: None,
                pos_page: 0,
                end_page: 0,
                pending_bios: Vec::with_capacity(16),
                finished: false,
            });
        }
    }
    Ok(out)
}

impl Simulation {
    pub(super) fn thread_issue(&mut self, now: Ns, t: u32) {
        let th = &mut self.threads[t as usize];
        if th.finished {
            return;
        }
        if th.remaining == 0 || th.stop_at.is_some_and(|s| now >= s) {
            th.finished = true;
            self.active_threads -= 1;
            return;
        }
        th.remaining -= 1;
        let off = th.gen.next_offset(&mut th.rng);
        let bytes = th.request_bytes;
        let kind = match th.op {
            JobOp::Read => CallKind::Read,
            JobOp::Write => CallKind::Write,
        };
        th.pos_page = off / PAGE_BYTES;
        th.end_page = (off + bytes).div_ceil(PAGE_BYTES);
        let call = self.calls.insert(Call {
            thread: t,
            kind,
            bytes,
            issue: now,
            pending: 0,
            submit: now,
            queue: 0,
            device: 0,
        });
        let th = &mut self.threads[t as usize];
        th.call = Some(call);
        if th.direct {
            // Build the direct-I/O bios now; they reach the block layer
            // after the system call and the per-bio submission cost.
            let op = if th.op == JobOp::Read { Op::Read } else { Op::Write };
            let template = Bio {
                op,
                sector: th.file_first_sector + off / SECTOR_BYTES,
                sectors: (bytes / SECTOR_BYTES) as u32,
                sync: true,
                fua: false,
                prio: false,
                pid: th.pid,
                thread: t,
                ioprio: th.ioprio,
                owner: call,
            };
            let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
            let n = self.push_bios(template, &mut bios);
            self.threads[t as usize].pending_bios = bios;
            self.calls[call].pending = n;
            let at = now + self.costs.syscall + n as Ns * self.costs.block_submit;
            self.q.push(at, Event::SubmitPlug(t));
        } else {
            self.q.push(now + self.costs.syscall, Event::ThreadStep(t));
        }
    }

    /// Continues a buffered read from the thread's current page.
    pub(super) fn thread_step(&mut self, now: Ns, t: u32) {
        let ra_max = (self.block.params().read_ahead_kb / 4) as u32;
        let congested = self.block.congested(true);
        let th = &mut self.threads[t as usize];
        let step = self.cache.read_step(
            th.file_cache,
            &mut th.ra,
            th.pos_page,
            th.end_page,
            ra_max,
            congested,
            &mut self.plan,
        );
        // Turn the read-ahead decisions into page-cache bios.
        let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
        let mut n = 0;
        for io in self.plan.submit.iter() {
            let th = &self.threads[t as usize];
            let template = Bio {
                op: Op::Read,
                sector: th.file_first_sector + io.first_page * SECTORS_PER_PAGE,
                sectors: io.pages * SECTORS_PER_PAGE as u32,
                sync: true,
                fua: false,
                prio: false,
                pid: th.pid,
                thread: t,
                ioprio: th.ioprio,
                owner: PAGE_IO | NO_CALL,
            };
            n += self.push_bios(template, &mut bios);
        }
        self.threads[t as usize].pending_bios = bios;
        let submit_done = now + n as Ns * self.costs.block_submit;
        if n > 0 {
            self.q.push(submit_done, Event::SubmitPlug(t));
        }
        let th = &mut self.threads[t as usize];
        match step {
            ReadStep::Done => {
                let call = th.call.expect("stepping thread has a call");
                let bytes = self.calls[call].bytes;
                self.q
                    .push(submit_done + self.costs.copy(bytes), Event::ThreadDone(t));
            }
            ReadStep::WaitFor { page } => {
                th.pos_page = page;
                if let Some(c) = th.call {
                    self.calls[c].submit = submit_done;
                }
                self.waiters.push((t, th.file_cache, page));
            }
        }
    }

    /// The thread's prepared bios enter the block layer under one plug.
    pub(super) fn submit_plug(&mut self, now: Ns, t: u32) {
        let mut bios = std::mem::take(&mut self.threads[t as usize].pending_bios);
        if let Some(c) = self.threads[t as usize].call {
            self.calls[c].submit = now;
        }
        self.block.start_plug(t);
        for bio in bios.drain(..) {
            self.block.submit_bio(now, bio, true);
        }
        self.block.finish_plug(now, t);
        self.threads[t as usize].pending_bios = bios;
        self.after_block_change(now);
    }

    /// All bios owned by call `id` have completed.
    pub(super) fn call_io_done(&mut self, now: Ns, id: u32) {
        let thread = self.calls[id].thread;
        if (thread as usize) < self.threads.len() && self.threads[thread as usize].call == Some(id) {
            self.q.push(now + self.costs.wakeup, Event::ThreadDone(thread));
        } else {
            // A trace record: it completes when its last bio does.
            self.finish_call(now, id);
        }
    }

    /// The thread's call returns to user space.
    pub(super) fn thread_done(&mut self, now: Ns, t: u32) {
        let Some(id) = self.threads[t as usize].call.take() else {
            return;
        };
        self.finish_call(now, id);
        let think = self.threads[t as usize].think;
        self.q.push(now + think, Event::ThreadIssue(t));
    }

    pub(super) fn finish_call(&mut self, now: Ns, id: u32) {
        let c = self.calls.remove(id);
        self.collector.record(&CallRecord {
            thread: c.thread,
            kind: c.kind,
            bytes: c.bytes,
            issue: c.issue,
            done: now,
            queue: c.queue,
            device: c.device,
        });
    }
}
