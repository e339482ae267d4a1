//! What a Python scheduler sees during a hook call: the context
//! ([`Ctx`]: the clock, read-only requests, the fields the scheduler owns,
//! its timer), request and bio snapshots, and the queue's parameters.

use mmcsim_elevator::types::{IoClass, IoPrio, Ns, Op};
use mmcsim_elevator::{Bio, Request, RqId, SchedCtx, SchedParams};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// The operation's name (`read`, `write`, `discard`, `flush`).
pub fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Discard => "discard",
        Op::Flush => "flush",
    }
}

/// `(class, level)` of an I/O priority, the class as `rt`, `be` or `idle`.
fn ioprio(p: IoPrio) -> (&'static str, u8) {
    let class = match p.class {
        IoClass::Rt => "rt",
        IoClass::Be => "be",
        IoClass::Idle => "idle",
    };
    (class, p.level)
}

/// A raw pointer to the hook call's [`SchedCtx`], set only while the hook
/// runs (with the GIL held) and cleared after it.
#[derive(Clone, Copy)]
struct CtxPtr(*mut SchedCtx<'static>);

// SAFETY: the pointer is dereferenced only by `Ctx`'s methods, with the
// GIL held, between `Ctx::enter` and `Ctx::leave` of one hook call, on the
// thread running that call (which holds the `SchedCtx` borrow).
unsafe impl Send for CtxPtr {}
unsafe impl Sync for CtxPtr {}

/// The scheduler's window on the queue during one hook call
/// (`SchedCtx`): `now_ns`, `rq(id)`, the setters of the fields a scheduler
/// owns, and its timer. Valid only inside the hook it was passed to.
#[pyclass(name = "SchedCtx", module = "mmcsim")]
pub struct Ctx {
    ptr: CtxPtr,
    mutable: bool,
}

impl Ctx {
    /// A context not yet in any hook.
    pub fn idle() -> Ctx {
        Ctx {
            ptr: CtxPtr(std::ptr::null_mut()),
            mutable: false,
        }
    }

    /// Points at `ctx` for one hook call (`mutable`: the hook may use the
    /// setters).
    pub fn enter(&mut self, ctx: *const SchedCtx<'_>, mutable: bool) {
        self.ptr = CtxPtr(ctx as *mut SchedCtx<'static>);
        self.mutable = mutable;
    }

    /// Ends the hook call: the context is no longer usable.
    pub fn leave(&mut self) {
        self.ptr = CtxPtr(std::ptr::null_mut());
        self.mutable = false;
    }

    fn get(&self) -> PyResult<&SchedCtx<'static>> {
        // SAFETY: see `CtxPtr`; null outside a hook call.
        unsafe { self.ptr.0.as_ref() }.ok_or_else(|| {
            PyRuntimeError::new_err("this SchedCtx is used outside the hook it was passed to")
        })
    }

    fn get_mut(&mut self) -> PyResult<&mut SchedCtx<'static>> {
        if !self.mutable {
            return Err(PyRuntimeError::new_err(
                "this hook sees the queue read-only (allow_merge, former, latter): it may not set request fields or the timer",
            ));
        }
        // SAFETY: see `CtxPtr`; the hook was given a `&mut SchedCtx`.
        unsafe { self.ptr.0.as_mut() }.ok_or_else(|| {
            PyRuntimeError::new_err("this SchedCtx is used outside the hook it was passed to")
        })
    }

    fn request(&self, id: RqId) -> PyResult<&Request> {
        self.get()?
            .requests()
            .get(id)
            .ok_or_else(|| PyKeyError::new_err(format!("no request with id {id} in the queue")))
    }
}

#[pymethods]
impl Ctx {
    /// Current simulated time, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<Ns> {
        Ok(self.get()?.now)
    }

    /// Requests in the driver, `(async, sync)` (`rq_in_driver`).
    #[getter]
    fn in_driver(&self) -> PyResult<(u32, u32)> {
        let c = self.get()?;
        Ok((c.in_driver[0], c.in_driver[1]))
    }

    /// The armed timer (absolute ns), or None.
    #[getter]
    fn timer(&self) -> PyResult<Option<Ns>> {
        Ok(self.get()?.timer())
    }

    /// Request `id`, read-only: a snapshot of its fields now.
    fn rq(&self, id: RqId) -> PyResult<Rq> {
        Ok(Rq::of(id, self.request(id)?))
    }

    /// Sets request `id`'s `fifo_time` (its deadline or FIFO time), ns.
    fn set_fifo_time(&mut self, id: RqId, ns: Ns) -> PyResult<()> {
        self.request(id)?;
        self.get_mut()?.set_fifo_time(id, ns);
        Ok(())
    }

    /// Sets word `slot` (0 or 1) of request `id`'s `elv_priv`.
    fn set_elv_priv(&mut self, id: RqId, slot: usize, value: u64) -> PyResult<()> {
        self.request(id)?;
        if slot > 1 {
            return Err(PyValueError::new_err(format!(
                "elv_priv has slots 0 and 1, not {slot}"
            )));
        }
        self.get_mut()?.set_elv_priv(id, slot, value);
        Ok(())
    }

    /// Marks request `id` urgent or not (`REQ_URGENT`).
    fn set_urgent(&mut self, id: RqId, urgent: bool) -> PyResult<()> {
        self.request(id)?;
        self.get_mut()?.set_urgent(id, urgent);
        Ok(())
    }

    /// Arms the scheduler's timer for absolute time `at_ns`: `on_timer` is
    /// called then.
    fn set_timer(&mut self, at_ns: Ns) -> PyResult<()> {
        self.get_mut()?.set_timer(at_ns);
        Ok(())
    }

    /// Cancels the scheduler's timer.
    fn cancel_timer(&mut self) -> PyResult<()> {
        self.get_mut()?.cancel_timer();
        Ok(())
    }
}

/// A read-only snapshot of a block request (`struct request`).
#[pyclass(name = "Request", module = "mmcsim", frozen, get_all)]
pub struct Rq {
    /// Request id.
    id: RqId,
    /// `read`, `write`, `discard` or `flush`.
    op: &'static str,
    /// Data direction: 0 read, 1 write (discards and flushes count as
    /// writes, like `rq_data_dir`).
    dir: usize,
    /// First sector (512 B).
    sector: u64,
    /// Length in sectors.
    sectors: u32,
    /// One past the last sector.
    end: u64,
    /// Synchronous request.
    sync: bool,
    /// Force unit access.
    fua: bool,
    /// REQ_META / REQ_PRIO.
    prio: bool,
    /// Process the request is charged to.
    pid: u32,
    /// Workload thread of its first bio.
    thread: u32,
    /// I/O priority `(class, level)`, class `rt`, `be` or `idle`.
    ioprio: (&'static str, u8),
    /// Arrival in the block layer, ns.
    arrival_ns: Ns,
    /// The scheduler-owned `fifo_time`, ns.
    fifo_time: Ns,
    /// The scheduler-owned `elv_priv` words.
    elv_priv: (u64, u64),
    /// Bios merged into it.
    nr_bios: u32,
}

impl Rq {
    fn of(id: RqId, r: &Request) -> Rq {
        Rq {
            id,
            op: op_name(r.op),
            dir: r.dir(),
            sector: r.sector,
            sectors: r.sectors,
            end: r.end(),
            sync: r.sync,
            fua: r.fua,
            prio: r.prio,
            pid: r.pid,
            thread: r.thread,
            ioprio: ioprio(r.ioprio),
            arrival_ns: r.start_ns,
            fifo_time: r.fifo_time,
            elv_priv: (r.elv_priv[0], r.elv_priv[1]),
            nr_bios: r.nr_bios,
        }
    }
}

#[pymethods]
impl Rq {
    fn __repr__(&self) -> String {
        format!(
            "Request(id={}, op={}, sector={}, sectors={}, sync={}, pid={}, arrival_ns={})",
            self.id, self.op, self.sector, self.sectors, self.sync, self.pid, self.arrival_ns
        )
    }
}

/// A read-only snapshot of a bio (`struct bio`) offered for merging.
#[pyclass(name = "Bio", module = "mmcsim", frozen, get_all)]
pub struct BioView {
    /// `read`, `write`, `discard` or `flush`.
    op: &'static str,
    /// Data direction: 0 read, 1 write.
    dir: usize,
    /// First sector (512 B).
    sector: u64,
    /// Length in sectors.
    sectors: u32,
    /// One past the last sector.
    end: u64,
    /// Synchronous.
    sync: bool,
    /// Submitting process.
    pid: u32,
    /// I/O priority `(class, level)`.
    ioprio: (&'static str, u8),
}

impl BioView {
    /// The snapshot of `b`.
    pub fn of(b: &Bio) -> BioView {
        BioView {
            op: op_name(b.op),
            dir: b.op.dir(),
            sector: b.sector,
            sectors: b.sectors,
            end: b.end(),
            sync: b.sync,
            pid: b.pid,
            ioprio: ioprio(b.ioprio),
        }
    }
}

/// What a scheduler is created with (`init_queue(params)`): the kernel's
/// tick rate and the queue's rotational flag, with the jiffies
/// arithmetic kernels do.
#[pyclass(name = "SchedParams", module = "mmcsim", frozen)]
pub struct Params(pub SchedParams);

#[pymethods]
impl Params {
    #[new]
    #[pyo3(signature = (hz = 1000, nonrot = true))]
    fn new(hz: u32, nonrot: bool) -> PyResult<Params> {
        if hz == 0 {
            return Err(PyValueError::new_err("hz must be at least 1"));
        }
        Ok(Params(SchedParams { hz, nonrot }))
    }
    /// Kernel tick rate `HZ`.
    #[getter]
    fn hz(&self) -> u32 {
        self.0.hz
    }
    /// The queue is non-rotational (true for MMC).
    #[getter]
    fn nonrot(&self) -> bool {
        self.0.nonrot
    }
    /// The jiffies counter at simulated time `ns`.
    fn jiffies(&self, ns: Ns) -> u64 {
        self.0.jiffies(ns)
    }
    /// `msecs_to_jiffies`: milliseconds to jiffies, rounding up.
    fn ms_to_jiffies(&self, ms: u64) -> u64 {
        self.0.ms_to_jiffies(ms)
    }
    /// `jiffies_to_msecs`: jiffies to milliseconds, rounding up.
    fn jiffies_to_ms(&self, j: u64) -> u64 {
        self.0.jiffies_to_ms(j)
    }
    /// Jiffies to nanoseconds.
    fn jiffies_to_ns(&self, j: u64) -> Ns {
        self.0.jiffies_to_ns(j)
    }
    fn __repr__(&self) -> String {
        format!("SchedParams(hz={}, nonrot={})", self.0.hz, self.0.nonrot)
    }
}
