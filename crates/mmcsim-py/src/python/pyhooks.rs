//! [`Hooks`] for a Python object (a subclass of `mmcsim.Elevator`): each
//! hook takes the GIL, calls the object's method, and turns its answer or
//! exception into the hook's result.

use super::view::{BioView, Ctx, Params};
use crate::hooks::{
    intern, HookElevator, HookError, HookResult, HookStatus, Hooks, Optional, SharedStatus, Traits,
};
use mmcsim_elevator::{
    Bio, Elevator, Factory, MergeKind, RqId, SchedCtx, SchedParams, TunableError, TunableInfo,
};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, Mutex};

/// A Python exception as a hook error: type, message and traceback.
pub fn describe(py: Python<'_>, e: &PyErr) -> String {
    let mut s = e.to_string();
    if let Some(tb) = e.traceback(py) {
        if let Ok(t) = tb.format() {
            s = format!("{s}\n{}", t.trim_end());
        }
    }
    s
}

/// The bound methods of one Python scheduler, looked up once.
struct Methods {
    add_request: PyObject,
    dispatch: PyObject,
    has_work: PyObject,
    merge_lookup: Option<PyObject>,
    allow_merge: Option<PyObject>,
    merged: Option<PyObject>,
    merge_requests: Option<PyObject>,
    former: Option<PyObject>,
    latter: Option<PyObject>,
    activate: Option<PyObject>,
    completed: Option<PyObject>,
    on_timer: Option<PyObject>,
}

/// A Python scheduler object and its reused context.
pub struct PyHooks {
    obj: PyObject,
    m: Methods,
    ctx: Py<Ctx>,
}

/// The method `name` of `obj` when its class overrides the one of the
/// base class `mmcsim.Elevator` (`None`: the hook is left to the
/// adapter's default).
fn overridden(
    obj: &Bound<'_, PyAny>,
    base: &Bound<'_, PyAny>,
    name: &str,
) -> PyResult<Option<PyObject>> {
    let cls = obj.get_type();
    let mine = match cls.getattr(name) {
        Ok(m) => m,
        Err(_) => return Ok(None),
    };
    if let Ok(b) = base.getattr(name) {
        if mine.is(&b) {
            return Ok(None);
        }
    }
    Ok(Some(obj.getattr(name)?.unbind()))
}

impl PyHooks {
    /// Wraps `obj`; `base` is the class `mmcsim.Elevator`. Reads the
    /// required methods and the class's traits.
    pub fn new(
        py: Python<'_>,
        obj: PyObject,
        base: &Bound<'_, PyAny>,
    ) -> PyResult<(PyHooks, Traits)> {
        let b = obj.bind(py);
        let req = |name: &str| -> PyResult<PyObject> {
            match overridden(b, base, name)? {
                Some(m) => Ok(m),
                None => Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "{} does not implement `{name}`, a required hook (add_request, dispatch, has_work)",
                    b.get_type().name()?
                ))),
            }
        };
        let opt = |name: &str| overridden(b, base, name);
        let m = Methods {
            add_request: req("add_request")?,
            dispatch: req("dispatch")?,
            has_work: req("has_work")?,
            merge_lookup: opt("merge_lookup")?,
            allow_merge: opt("allow_merge")?,
            merged: opt("merged")?,
            merge_requests: opt("merge_requests")?,
            former: opt("former")?,
            latter: opt("latter")?,
            activate: opt("activate")?,
            completed: opt("completed")?,
            on_timer: opt("on_timer")?,
        };
        let flag = |name: &str| -> PyResult<bool> {
            match b.getattr(name) {
                Ok(v) => v.is_truthy(),
                Err(_) => Ok(false),
            }
        };
        let traits = Traits {
            name: b.getattr("name")?.extract::<String>()?,
            blk_mq: flag("blk_mq")?,
            dispatch_sort: flag("dispatch_sort")?,
            none_is_stable: flag("none_is_stable")?,
        };
        let ctx = Py::new(py, Ctx::idle())?;
        Ok((PyHooks { obj, m, ctx }, traits))
    }

    /// Calls `f` with the GIL and the context pointing at `ctx`.
    fn call<T>(
        &self,
        ctx: &SchedCtx,
        mutable: bool,
        f: impl FnOnce(Python<'_>, &Bound<'_, Ctx>) -> PyResult<T>,
    ) -> HookResult<T> {
        Python::with_gil(|py| {
            let c = self.ctx.bind(py);
            c.borrow_mut().enter(ctx, mutable);
            let r = f(py, c);
            c.borrow_mut().leave();
            r.map_err(|e| HookError(describe(py, &e)))
        })
    }
}

/// A request id (or None) returned by `hook`.
fn rq_or_none(hook: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<RqId>> {
    if v.is_none() {
        return Ok(None);
    }
    v.extract::<RqId>().map(Some).map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "{hook} returned {} ({}); expected a request id (int) or None",
            v.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
            v.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })
}

fn kind_name(k: MergeKind) -> &'static str {
    match k {
        MergeKind::Back => "back",
        MergeKind::Front => "front",
    }
}

impl Hooks for PyHooks {
    fn optional(&self) -> Optional {
        Optional {
            merge_lookup: self.m.merge_lookup.is_some(),
            allow_merge: self.m.allow_merge.is_some(),
            merged: self.m.merged.is_some(),
            merge_requests: self.m.merge_requests.is_some(),
            former: self.m.former.is_some(),
            latter: self.m.latter.is_some(),
            activate: self.m.activate.is_some(),
            completed: self.m.completed.is_some(),
            on_timer: self.m.on_timer.is_some(),
        }
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) -> HookResult<()> {
        self.call(ctx, true, |py, c| {
            self.m.add_request.call1(py, (c, rq)).map(drop)
        })
    }

    fn merge_lookup(&mut self, ctx: &mut SchedCtx, bio: &Bio) -> HookResult<Option<RqId>> {
        let m = self
            .m
            .merge_lookup
            .as_ref()
            .expect("checked by the adapter");
        self.call(ctx, true, |py, c| {
            let v = m.call1(py, (c, BioView::of(bio)))?;
            rq_or_none("merge_lookup", v.bind(py))
        })
    }

    fn allow_merge(&self, ctx: &SchedCtx, rq: RqId, bio: &Bio) -> HookResult<bool> {
        let m = self.m.allow_merge.as_ref().expect("checked by the adapter");
        self.call(ctx, false, |py, c| {
            m.call1(py, (c, rq, BioView::of(bio)))?.bind(py).is_truthy()
        })
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) -> HookResult<()> {
        let m = self.m.merged.as_ref().expect("checked by the adapter");
        self.call(ctx, true, |py, c| {
            m.call1(py, (c, rq, kind_name(kind))).map(drop)
        })
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) -> HookResult<()> {
        let m = self
            .m
            .merge_requests
            .as_ref()
            .expect("checked by the adapter");
        self.call(ctx, true, |py, c| m.call1(py, (c, rq, next)).map(drop))
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> HookResult<Option<RqId>> {
        let m = self.m.former.as_ref().expect("checked by the adapter");
        self.call(ctx, false, |py, c| {
            rq_or_none("former", m.call1(py, (c, rq))?.bind(py))
        })
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> HookResult<Option<RqId>> {
        let m = self.m.latter.as_ref().expect("checked by the adapter");
        self.call(ctx, false, |py, c| {
            rq_or_none("latter", m.call1(py, (c, rq))?.bind(py))
        })
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, force: bool) -> HookResult<Option<RqId>> {
        self.call(ctx, true, |py, c| {
            rq_or_none("dispatch", self.m.dispatch.call1(py, (c, force))?.bind(py))
        })
    }

    fn activate(&mut self, ctx: &mut SchedCtx, rq: RqId) -> HookResult<()> {
        let m = self.m.activate.as_ref().expect("checked by the adapter");
        self.call(ctx, true, |py, c| m.call1(py, (c, rq)).map(drop))
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) -> HookResult<()> {
        let m = self.m.completed.as_ref().expect("checked by the adapter");
        self.call(ctx, true, |py, c| m.call1(py, (c, rq)).map(drop))
    }

    fn on_timer(&mut self, ctx: &mut SchedCtx) -> HookResult<()> {
        let m = self.m.on_timer.as_ref().expect("checked by the adapter");
        self.call(ctx, true, |py, c| m.call1(py, (c,)).map(drop))
    }

    fn has_work(&self) -> HookResult<bool> {
        Python::with_gil(|py| {
            self.m
                .has_work
                .call0(py)
                .and_then(|v| v.bind(py).is_truthy())
                .map_err(|e| HookError(describe(py, &e)))
        })
    }

    fn tunables(&self) -> HookResult<Vec<TunableInfo>> {
        Python::with_gil(|py| {
            tunables_of(self.obj.bind(py)).map_err(|e| HookError(describe(py, &e)))
        })
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        Python::with_gil(|py| {
            let r = self.obj.bind(py).call_method1("set_tunable", (name, value));
            match r {
                Ok(_) => Ok(()),
                Err(e) if e.is_instance_of::<PyKeyError>(py) => {
                    let scheduler = self
                        .obj
                        .bind(py)
                        .getattr("name")
                        .and_then(|n| n.extract::<String>())
                        .unwrap_or_default();
                    Err(TunableError::unknown(
                        &scheduler,
                        name,
                        &tunables_of(self.obj.bind(py)).unwrap_or_default(),
                    ))
                }
                Err(e) => Err(TunableError::Rejected {
                    name: name.to_string(),
                    value: value.to_string(),
                    reason: e.to_string(),
                }),
            }
        })
    }
}

/// The tunables `obj.tunables()` lists: dicts (or objects) with `name`,
/// `value`, `default`, `unit` and `help`; values as sysfs text.
fn tunables_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<TunableInfo>> {
    let list = obj.call_method0("tunables")?;
    let mut out = Vec::new();
    for t in list.try_iter()? {
        let t = t?;
        let field = |k: &str| -> PyResult<String> {
            let v = match t.downcast::<PyDict>() {
                Ok(d) => d.get_item(k)?.ok_or_else(|| {
                    PyKeyError::new_err(format!("a tunable of tunables() has no `{k}`"))
                })?,
                Err(_) => t.getattr(k)?,
            };
            Ok(v.str()?.to_string())
        };
        out.push(TunableInfo {
            name: intern(&field("name")?),
            value: field("value")?,
            default: field("default")?,
            unit: intern(&field("unit")?),
            help: intern(&field("help")?),
        });
    }
    Ok(out)
}

/// A registry factory for the Python scheduler factory `factory` (a
/// callable returning an `mmcsim.Elevator`): each queue gets a new
/// object, initialised with `init_queue(params)` when it defines it, its
/// status pushed on `statuses`.
pub fn factory(
    factory: PyObject,
    base: PyObject,
    statuses: Arc<Mutex<Vec<(String, SharedStatus)>>>,
) -> Factory {
    Box::new(move |params: &SchedParams| -> Box<dyn Elevator> {
        let status = SharedStatus::default();
        let made = Python::with_gil(|py| -> PyResult<(PyHooks, Traits)> {
            let obj = factory.call0(py)?;
            let o = obj.bind(py);
            if o.hasattr("init_queue")? {
                o.call_method1("init_queue", (Params(*params),))?;
            }
            PyHooks::new(py, obj, base.bind(py))
        });
        let (hooks, traits) = match made {
            Ok(v) => v,
            Err(e) => {
                let msg = Python::with_gil(|py| describe(py, &e));
                let name = Python::with_gil(|py| {
                    factory
                        .bind(py)
                        .repr()
                        .map_or_else(|_| "?".to_string(), |r| r.to_string())
                });
                status.lock().unwrap_or_else(|p| p.into_inner()).failure =
                    Some(crate::hooks::Failure {
                        hook: "init_queue",
                        ns: None,
                        message: msg,
                    });
                statuses
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((name, status.clone()));
                return Box::new(mmcsim::sched::Noop::new(params));
            }
        };
        statuses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((traits.name.clone(), status.clone()));
        Box::new(HookElevator::new(hooks, traits, status))
    })
}

/// The first failure among `statuses`, as one message; `None` when all
/// ran clean.
pub fn first_failure(statuses: &[(String, SharedStatus)]) -> Option<String> {
    statuses.iter().find_map(|(name, s)| {
        let s: HookStatus = s.lock().unwrap_or_else(|p| p.into_inner()).clone();
        s.failure
            .map(|f| format!("Python scheduler `{name}` failed in {f}"))
    })
}

/// For a run that stalled: the Python schedulers that still held
/// requests, as one message.
pub fn held_requests(statuses: &[(String, SharedStatus)]) -> Option<String> {
    statuses.iter().find_map(|(name, s)| {
        let s = s.lock().unwrap_or_else(|p| p.into_inner()).clone();
        (s.held > 0).then(|| {
            format!(
                "Python scheduler `{name}` never dispatched: it still held {} request(s) when the run stalled, and {} call(s) of dispatch answered None while it held requests (a scheduler that waits must arm its timer with ctx.set_timer)",
                s.held, s.empty_dispatches
            )
        })
    })
}
