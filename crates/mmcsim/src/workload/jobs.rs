//! Synthetic jobs as application threads: each thread holds its file open
//! (from before the run) and issues its next `pread`/`pwrite` to the host
//! when the previous call returns, plus its think time, until its request
//! count or duration runs out; every `fsync_every` (`fdatasync_every`)
//! writes it calls fsync() (fdatasync()). A thread of an asynchronous
//! engine on O_DIRECT (`libaio`, `io_uring`) instead submits without
//! waiting, up to `iodepth` I/Os in flight, sleeps in `io_getevents` when
//! the depth is reached, and goes on as each completion is reaped; before
//! an fsync() it lets its I/Os drain, as fio does. A `readwrite` job draws
//! each call's direction from its thread's stream (`rwmix_read` percent
//! reads); a sequential one keeps one position per direction, as fio does.
//! Scripted threads issue their list of system calls in order instead.
//!
//! JNI: each call of a job thread is one Java I/O call, so each crosses
//! from the app into native code and pays the platform layer; a script
//! crosses once per pass over its calls (one app loop iteration); a
//! program says which of its calls cross ([`Program::crossing`]: once per
//! SQLite statement).

use super::job_io::JobIo;
use super::program::{Action, Program};
use super::script::{self, ScriptStep, CURRENT_FD};
use super::spec::{JobOp, JobSpec, OnError, ScriptSpec};
use super::sqlite::session::IoMark;
use crate::engine::{component_rng, EventQueue, SimRng};
use crate::error::{Result, SettingError};
use crate::host::Errno;
use crate::host::{Below, Fd, Host, HostEvents, OpenFlags, Syscall, Task};
use crate::platform::SharedCpu;
use crate::stats::report::Collector;
use crate::types::{us_to_ns, IoPrio, Ns, Op, NS_PER_MS};

/// Events of the synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobEvent {
    /// A thread starts its next call.
    Issue(u32),
}

/// An event type that can carry the jobs' events and the host's.
pub trait JobEvents: From<JobEvent> + HostEvents {}
impl<E: From<JobEvent> + HostEvents> JobEvents for E {}

/// A scripted thread's progress.
struct Script {
    /// The script's name and calls as written (for a failure's message).
    name: String,
    texts: Vec<String>,
    /// `on_error = "stop"`: its first failed call ends the run.
    stop: bool,
    steps: Vec<ScriptStep>,
    next: usize,
    repeat_left: u32,
    /// Open descriptors, most recent last (the current one).
    fds: Vec<Fd>,
    /// The call in progress was an open.
    opening: bool,
    /// The call in progress was a close.
    closing: bool,
    /// This pass over the calls has crossed into native code already.
    crossed: bool,
}

/// One application thread of a job (or a script).
struct JobThread {
    /// The scripted calls, for a script thread.
    script: Option<Script>,
    start_ns: Ns,
    /// Its files, offsets, sizes, passes and rate.
    io: JobIo,
    rng: SimRng,
    stop_at: Option<Ns>,
    think: Ns,
    /// fsync() after this many writes (0 = never).
    fsync_every: u32,
    /// fdatasync() after this many writes (0 = never).
    fdatasync_every: u32,
    writes_since_fsync: u32,
    finished: bool,
    /// I/Os the thread may keep in flight: `iodepth` when it submits
    /// asynchronously, else 0 (synchronous calls).
    depth: u32,
    /// Asynchronous I/Os submitted and not yet reaped.
    in_flight: u32,
    /// Asleep in `io_getevents` until a completion is reaped.
    blocked: bool,
    /// In a synchronous system call (its return resumes the thread).
    in_call: bool,
}

/// The threads of every job.
pub struct Jobs {
    threads: Vec<JobThread>,
    active: u32,
    /// Programs (SQLite jobs, AndroBench); their threads follow the job
    /// and script threads.
    programs: Vec<Box<dyn Program>>,
    /// Per program thread (index − `threads.len()`): its program, its
    /// index there, and whether a call of it is in progress.
    prog_threads: Vec<(usize, u32, bool)>,
    /// First thread index of each program.
    prog_first: Vec<u32>,
    /// Scratch list of threads a program released.
    ready: Vec<u32>,
    /// `--strict`: the first failed call of any thread ends the run.
    strict: bool,
    /// A failed call that ends the run (`--strict`, `on_error = "stop"`):
    /// the error's message.
    failure: Option<crate::error::Error>,
    /// The CPU, told of each crossing from the app into native code.
    cpu: SharedCpu,
}

impl Jobs {
    /// Builds the threads of every job of `sc`, creating each one's task
    /// in `host` (thread indices follow job order) and registering it with
    /// `collector`; `cpu` is told of their crossings into native code. Job files must exist in the host's layout (validated
    /// with the scenario).
    pub fn build(
        jobs: &[JobSpec],
        scripts: &[ScriptSpec],
        seed: u64,
        cpu: SharedCpu,
        host: &mut Host,
        collector: &mut Collector,
    ) -> Result<Jobs> {
        let mut threads = Vec::new();
        for (ji, job) in jobs.iter().enumerate() {
            job.check_io().map_err(|e| SettingError::Job(Box::new(e)))?;
            for t in 0..job.threads {
                threads.push(Self::job_thread(ji, job, t, seed, host, collector)?);
            }
        }
        for (si, s) in scripts.iter().enumerate() {
            threads.push(Self::script_thread(si, s, seed, host, collector)?);
        }
        let active = threads.len() as u32;
        Ok(Jobs {
            threads,
            active,
            programs: Vec::new(),
            prog_threads: Vec::new(),
            prog_first: Vec::new(),
            ready: Vec::new(),
            strict: false,
            failure: None,
            cpu,
        })
    }

    /// Thread `t` of job `job` (index `ji`): its task in `host`, its files
    /// opened, registered with `collector`.
    fn job_thread(
        ji: usize,
        job: &JobSpec,
        t: u32,
        seed: u64,
        host: &mut Host,
        collector: &mut Collector,
    ) -> Result<JobThread> {
        let flags = OpenFlags {
            direct: job.direct,
            sync: job.sync,
            ..OpenFlags::default()
        };
        let mut rng = component_rng(seed, &format!("job{ji}.thread{t}"));
        let pid = job.pid.unwrap_or(1000 + 100 * ji as u32) + t;
        let id = host.add_task(Task::new(pid, job.ioprio()));
        let mut files = Vec::new();
        for file in job.all_files() {
            let path = if file.starts_with('/') {
                file.to_string()
            } else {
                format!("/{file}")
            };
            let bytes = host.file_size(&path).expect("validated: job file exists");
            let fd = host.open_untimed(id, &path, flags)?;
            files.push((fd, bytes));
        }
        let start_ns = (job.start_ms * NS_PER_MS as f64).round() as Ns;
        let io = JobIo::new(job, &files, start_ns, &mut rng);
        collector.add_thread(id, &job.name, pid);
        collector.set_job(id, ji as u32);
        if job.ramp_ms > 0.0 {
            let end = ((job.start_ms + job.ramp_ms) * NS_PER_MS as f64).round() as Ns;
            collector.set_ramp_end(id, end);
        }
        Ok(JobThread {
            script: None,
            start_ns,
            io,
            rng,
            stop_at: job
                .duration_ms
                .map(|d| ((job.start_ms + d) * NS_PER_MS as f64).round() as Ns),
            think: us_to_ns(job.think_time_us),
            fsync_every: job.fsync_every,
            fdatasync_every: job.fdatasync_every,
            writes_since_fsync: 0,
            finished: false,
            depth: if job.submits_async() { job.iodepth } else { 0 },
            in_flight: 0,
            blocked: false,
            in_call: false,
        })
    }

    /// `--strict`: the first failed system call of any thread ends the run
    /// ([`Jobs::take_failure`]), as `on_error = "stop"` does for a script.
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    /// The failed call that ends the run, when one did: a message naming
    /// the thread (a script's name, call index and text) and the errno.
    pub fn take_failure(&mut self) -> Option<crate::error::Error> {
        self.failure.take()
    }

    /// Notes a failed call of thread `t` (return value `ret` < 0) at `now`
    /// when it ends the run.
    fn note_failure(&mut self, now: Ns, t: u32, ret: i64) {
        if self.failure.is_some() {
            return;
        }
        let errno: &'static str = Errno::from_code(-ret).map_or("EIO", Errno::name);
        let at = now as f64 / 1e9;
        let script = self
            .threads
            .get(t as usize)
            .and_then(|th| th.script.as_ref());
        let (who, stop) = match script {
            Some(s) => {
                let i = (s.next + s.steps.len() - 1) % s.steps.len();
                (
                    format!("script `{}`: calls[{i}] `{}`", s.name, s.texts[i]),
                    s.stop,
                )
            }
            None => (format!("thread {t}: a system call"), false),
        };
        if stop || self.strict {
            let why = if self.strict {
                "--strict"
            } else {
                "on_error = \"stop\""
            };
            self.failure = Some(crate::error::Error::CallFailed {
                caller: who,
                errno,
                code: -ret,
                at_s: at,
                why,
            });
        }
    }

    /// The thread of script `s` (index `si`): its task in `host`,
    /// registered with `collector`.
    fn script_thread(
        si: usize,
        s: &ScriptSpec,
        seed: u64,
        host: &mut Host,
        collector: &mut Collector,
    ) -> Result<JobThread> {
        let steps = script::parse(&s.name, &s.calls)?;
        let pid = s.pid.unwrap_or(5000 + si as u32);
        let id = host.add_task(Task::new(pid, IoPrio::NORM));
        collector.add_thread(id, &s.name, pid);
        let rng = component_rng(seed, &format!("script{si}"));
        Ok(JobThread {
            script: Some(Script {
                name: s.name.clone(),
                texts: s.calls.clone(),
                stop: s.on_error == OnError::Stop,
                steps,
                next: 0,
                repeat_left: s.repeat,
                fds: Vec::new(),
                opening: false,
                closing: false,
                crossed: false,
            }),
            start_ns: (s.start_ms * NS_PER_MS as f64).round() as Ns,
            io: JobIo::none(),
            rng,
            stop_at: None,
            think: us_to_ns(s.think_time_us),
            fsync_every: 0,
            fdatasync_every: 0,
            writes_since_fsync: 0,
            finished: false,
            depth: 0,
            in_flight: 0,
            blocked: false,
            in_call: false,
        })
    }

    /// Adds `program`, creating its threads' tasks in `host` (after every
    /// job and script thread) and registering them with `collector`.
    pub fn add_program(
        &mut self,
        program: Box<dyn Program>,
        host: &mut Host,
        collector: &mut Collector,
    ) {
        let p = self.programs.len();
        self.prog_first
            .push(self.threads.len() as u32 + self.prog_threads.len() as u32);
        for (local, (name, pid)) in program.threads(p).into_iter().enumerate() {
            let id = host.add_task(Task::new(pid, IoPrio::NORM));
            collector.add_thread(id, &name, pid);
            self.prog_threads.push((p, local as u32, false));
        }
        self.programs.push(program);
    }

    /// The programs (for their reports).
    pub fn programs(&self) -> &[Box<dyn Program>] {
        &self.programs
    }

    /// The programs, to start recording in them.
    pub fn programs_mut(&mut self) -> &mut [Box<dyn Program>] {
        &mut self.programs
    }

    /// True when some job writes through the page cache (so the writeback
    /// flusher runs).
    pub fn buffered_writes(jobs: &[JobSpec], scripts: &[ScriptSpec]) -> bool {
        jobs.iter().any(|j| j.op != JobOp::Read && !j.direct) || !scripts.is_empty()
    }

    /// Schedules every thread's first call.
    pub fn start<E: JobEvents>(&mut self, q: &mut EventQueue<E>) {
        for (t, th) in self.threads.iter().enumerate() {
            q.at(th.start_ns, JobEvent::Issue(t as u32));
        }
        for (p, prog) in self.programs.iter_mut().enumerate() {
            self.ready.clear();
            let at = prog.start(&mut self.ready);
            for &l in &self.ready {
                q.at(at, JobEvent::Issue(self.prog_first[p] + l));
            }
        }
    }

    /// True while a thread may still issue a call.
    pub fn running(&self) -> bool {
        self.active > 0 || self.programs.iter().any(|p| !p.finished())
    }

    /// A program's thread `t` takes its next action.
    fn program_issue<E: JobEvents>(&mut self, now: Ns, t: u32, host: &mut Host, b: &mut Below<E>) {
        let k = t as usize - self.threads.len();
        let (p, local, in_call) = self.prog_threads[k];
        let ret = in_call.then(|| host.retval(t));
        let (block_writes, flushes) = b.collector.device_io();
        let io = IoMark {
            block_writes,
            flushes,
        };
        self.prog_threads[k].2 = false;
        match self.programs[p].next(now, local, ret, io) {
            Action::Call(sc) => {
                self.prog_threads[k].2 = true;
                if self.programs[p].crossing() {
                    self.cpu.with(|c| c.cross(t));
                }
                host.syscall(now, t, sc, b);
            }
            Action::Sleep(ns) => b.q.at(now.saturating_add(ns), JobEvent::Issue(t)),
            Action::Idle => {
                self.ready.clear();
                self.programs[p].ready(&mut self.ready);
                for &l in &self.ready {
                    b.q.at(now, JobEvent::Issue(self.prog_first[p] + l));
                }
            }
        }
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
        if t as usize >= self.threads.len() {
            return self.program_issue(now, t, host, b);
        }
        let th = &mut self.threads[t as usize];
        if th.finished {
            return;
        }
        if th.script.is_some() {
            return self.script_issue(now, t, host, b);
        }
        self.job_issue(now, t, host, b);
    }

    /// A job thread issues its next call: a due fsync() (fdatasync()),
    /// the end-of-pass fsync()s, then a read or write at its rate.
    fn job_issue<E: JobEvents>(&mut self, now: Ns, t: u32, host: &mut Host, b: &mut Below<E>) {
        let th = &mut self.threads[t as usize];
        // An fsync() (fdatasync()) is due after every `fsync_every`
        // (`fdatasync_every`) writes; asynchronous I/O drains first.
        let fsync_due = th.fsync_every > 0 && th.writes_since_fsync >= th.fsync_every;
        let fdatasync_due = th.fdatasync_every > 0 && th.writes_since_fsync >= th.fdatasync_every;
        let timed_out = th.stop_at.is_some_and(|s| now >= s);
        let done = th.io.pass_done() || timed_out;
        let full = th.depth > 0 && th.in_flight >= th.depth;
        if th.in_flight > 0 && (fsync_due || fdatasync_due || done || full) {
            th.blocked = true;
            host.aio_getevents(t);
            return;
        }
        let sync = if fsync_due || fdatasync_due {
            th.writes_since_fsync = 0;
            let fd = th.io.fd();
            Some(if fsync_due {
                Syscall::Fsync { fd }
            } else {
                Syscall::Fdatasync { fd }
            })
        } else if done {
            th.io.end_sync().map(|fd| Syscall::Fsync { fd })
        } else {
            None
        };
        if let Some(sc) = sync {
            th.in_call = true;
            self.cpu.with(|c| c.cross(t));
            host.syscall(now, t, sc, b);
            return;
        }
        if done && (timed_out || !th.io.next_pass()) {
            th.finished = true;
            self.active -= 1;
            return;
        }
        // The direction (mixed jobs draw it) and its rate, then its
        // offset.
        let (read, at) = th.io.direction(now, &mut th.rng);
        if at > now {
            b.q.at(at, JobEvent::Issue(t));
            return;
        }
        let (fd, offset, bytes) = th.io.next_call(read, &mut th.rng);
        if !read {
            th.writes_since_fsync += 1;
        }
        self.cpu.with(|c| c.cross(t));
        if th.depth > 0 {
            let op = if read { Op::Read } else { Op::Write };
            th.in_flight += 1;
            let free = host.aio_submit(now, t, fd, op, offset, bytes, b);
            b.q.at(free.saturating_add(th.think), JobEvent::Issue(t));
            return;
        }
        let sc = if read {
            Syscall::Pread { fd, offset, bytes }
        } else {
            Syscall::Pwrite { fd, offset, bytes }
        };
        th.in_call = true;
        host.syscall(now, t, sc, b);
    }

    /// A scripted thread issues its next call (after any sleeps).
    fn script_issue<E: JobEvents>(&mut self, now: Ns, t: u32, host: &mut Host, b: &mut Below<E>) {
        let th = &mut self.threads[t as usize];
        let s = th.script.as_mut().expect("a script thread");
        if s.next == s.steps.len() {
            s.next = 0;
            s.repeat_left = s.repeat_left.saturating_sub(1);
            s.crossed = false;
        }
        if s.repeat_left == 0 {
            th.finished = true;
            self.active -= 1;
            return;
        }
        let step = s.steps[s.next].clone();
        s.next += 1;
        match step {
            ScriptStep::Sleep(ns) => b.q.at(now.saturating_add(ns), JobEvent::Issue(t)),
            ScriptStep::Call(mut sc) => {
                let cur = s.fds.last().copied().unwrap_or(0);
                script::bind_fd(&mut sc, cur);
                s.opening = matches!(sc, Syscall::Open { .. });
                s.closing = matches!(sc, Syscall::Close { fd } if fd == cur && fd != CURRENT_FD);
                if !std::mem::replace(&mut s.crossed, true) {
                    self.cpu.with(|c| c.cross(t));
                }
                host.syscall(now, t, sc, b);
            }
        }
    }

    /// Thread `t`'s call returned at `now`: its next one follows after its
    /// think time.
    pub fn returned<E: JobEvents>(&mut self, now: Ns, t: u32, host: &Host, q: &mut EventQueue<E>) {
        let ret = host.retval(t);
        let synchronous = self
            .threads
            .get(t as usize)
            .is_none_or(|th| th.in_call || th.script.is_some());
        if ret < 0 && synchronous {
            self.note_failure(now, t, ret);
        }
        if t as usize >= self.threads.len() {
            q.at(now, JobEvent::Issue(t));
            return;
        }
        let th = &mut self.threads[t as usize];
        if let Some(s) = th.script.as_mut() {
            let ret = host.retval(t);
            if s.opening && ret >= 0 {
                s.fds.push(ret as Fd);
            }
            if s.closing && ret == 0 {
                s.fds.pop();
            }
            s.opening = false;
            s.closing = false;
        } else if !th.in_call {
            // An asynchronous I/O was reaped: a thread waiting for one
            // goes on at once.
            th.in_flight -= 1;
            if th.blocked {
                th.blocked = false;
                q.at(now, JobEvent::Issue(t));
            }
            return;
        }
        th.in_call = false;
        q.at(now.saturating_add(th.think), JobEvent::Issue(t));
    }
}
