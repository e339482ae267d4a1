//! The extension module `_mmcsim`: one simulation or many from a spec
//! the Python package builds, a sweep over a grid, and the table of
//! schedulers registered from Python. The simulation runs with the GIL
//! released; a Python scheduler takes it only while one of its hooks
//! runs.

mod pyhooks;
mod view;

use anyhow::Context;
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{RunOptions, Simulation};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

create_exception!(
    _mmcsim,
    MmcsimError,
    PyException,
    "An mmcsim run could not be built or did not finish."
);
create_exception!(
    _mmcsim,
    SchedulerError,
    MmcsimError,
    "A Python scheduler raised in a hook or broke the hook contract."
);

/// The Python class `mmcsim.Elevator`, set once by the package.
static BASE: GILOnceCell<PyObject> = GILOnceCell::new();

/// Schedulers registered from Python: name, description, factory.
static REGISTERED: Mutex<Vec<(String, String, PyObject)>> = Mutex::new(Vec::new());

/// Statuses of the Python schedulers one run (or sweep) created.
type Statuses = Arc<Mutex<Vec<(String, crate::hooks::SharedStatus)>>>;

fn base(py: Python<'_>) -> PyResult<PyObject> {
    BASE.get(py).map(|b| b.clone_ref(py)).ok_or_else(|| {
        MmcsimError::new_err("mmcsim.Elevator is not set: import the package `mmcsim`")
    })
}

/// A registry with the built-in schedulers, those registered from Python,
/// and `extra` (`(name, factory)`) for this run.
fn registry(
    py: Python<'_>,
    extra: Option<(&str, &PyObject)>,
    statuses: &Statuses,
) -> PyResult<Registry> {
    let base = base(py)?;
    let mut r = mmcsim::sched::builtin();
    let registered = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    for (name, desc, f) in registered.iter() {
        let fac = pyhooks::factory(f.clone_ref(py), base.clone_ref(py), statuses.clone());
        r.register(name, desc, fac);
    }
    if let Some((name, f)) = extra {
        let fac = pyhooks::factory(f.clone_ref(py), base.clone_ref(py), statuses.clone());
        r.register(name, "a Python scheduler", fac);
    }
    Ok(r)
}

/// What one run is, as the Python package describes it.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Spec {
    /// `scenario` or `trace`.
    kind: String,
    /// The workload's path or bundled name (None with `toml`).
    workload: Option<String>,
    /// The scenario as JSON text of a dict (None with `workload`).
    scenario_json: Option<String>,
    /// `--phone`.
    phone: Option<String>,
    /// `--device`: a path or bundled device name.
    device: Option<String>,
    /// The device profile as JSON text of a dict.
    device_json: Option<String>,
    /// `--scheduler` (a built-in or registered name).
    scheduler: Option<String>,
    /// A Python scheduler's registry name and factory.
    elevator: Option<(String, PyObject)>,
    /// Tunables of a compare entry, `(name, value)`.
    tunables: Vec<(String, String)>,
    /// `--seed`.
    seed: Option<u64>,
    /// `--set KEY=VALUE`, in order.
    sets: Vec<(String, String)>,
    /// Keep the per-request log.
    log: bool,
}

/// What the spec resolves to before the run.
struct Prepared {
    sc: Scenario,
    registry: Registry,
    statuses: Statuses,
    log: bool,
    /// Temporary files the scenario refers to (a device profile given as
    /// a dict), removed after the run.
    _temp: Option<tempfile::TempDir>,
}

/// One run's output: the JSON report (as `simctl --json` writes it), the
/// per-request log (CSV) and the `--csv` rows `(metric, value, unit)`.
type Output = (String, Option<Vec<u8>>, Vec<(String, String, String)>);

/// A TOML text from the JSON text of a Python dict.
fn toml_text(json: &str, what: &str) -> anyhow::Result<String> {
    let v: serde_json::Value =
        serde_json::from_str(json).with_context(|| format!("{what}: not JSON"))?;
    let t: toml::Value = serde_json::from_value(v)
        .map_err(|e| anyhow::anyhow!("{what}: cannot be written as TOML: {e}"))?;
    toml::to_string(&t).with_context(|| {
        format!("{what}: cannot be written as TOML (a None value, or a table before a value?)")
    })
}

/// The device profile file of `--device`: as given when it exists or has
/// a separator, else a bundled or on-disk `configs/devices/NAME.toml`.
fn device_path(given: &str) -> anyhow::Result<PathBuf> {
    let p = Path::new(given);
    if p.exists() || given.contains('/') {
        return Ok(std::path::absolute(p)?);
    }
    simctl::api::profile_path("devices", given)
}

fn prepare(py: Python<'_>, s: Spec) -> anyhow::Result<Prepared> {
    let mut sets = Vec::new();
    if s.kind == "trace" {
        // Replay options (`trace.*`) come first, as `simctl replay` has them.
        sets.extend(
            s.sets
                .iter()
                .filter(|(k, _)| k.starts_with("trace."))
                .cloned(),
        );
    }
    if let Some(p) = &s.phone {
        sets.extend(simctl::api::phone_sets(p)?);
    }
    let mut temp = None;
    if let Some(j) = &s.device_json {
        let dir = tempfile::tempdir()?;
        let f = dir.path().join("device.toml");
        std::fs::write(&f, toml_text(j, "device")?)?;
        sets.push(("device.profile".into(), f.display().to_string()));
        temp = Some(dir);
    } else if let Some(d) = &s.device {
        sets.push((
            "device.profile".into(),
            device_path(d)?.display().to_string(),
        ));
    }
    let sched = match (&s.elevator, &s.scheduler) {
        (Some((name, _)), _) => Some(name.clone()),
        (None, n) => n.clone(),
    };
    if let Some(n) = sched {
        sets.push(("scheduler.name".into(), n));
    }
    for (k, v) in &s.tunables {
        sets.push((format!("iosched.{k}"), v.clone()));
    }
    if let Some(seed) = s.seed {
        sets.push(("seed".into(), seed.to_string()));
    }
    sets.extend(
        s.sets
            .iter()
            .filter(|(k, _)| s.kind != "trace" || !k.starts_with("trace."))
            .cloned(),
    );
    let statuses = Statuses::default();
    let registry = registry(
        py,
        s.elevator.as_ref().map(|(n, f)| (n.as_str(), f)),
        &statuses,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let sc = match (s.kind.as_str(), &s.workload, &s.scenario_json) {
        ("trace", Some(w), _) => {
            let p = Path::new(w);
            simctl::api::check_trace(p)?;
            Scenario::for_trace(p, &sets)?
        }
        (_, _, Some(j)) => {
            let base = std::env::current_dir()?;
            Scenario::from_toml(&toml_text(j, "scenario")?, "<dict>", base, &sets)?
        }
        (_, Some(w), _) => {
            let p = simctl::api::workload_path(Path::new(w))?;
            simctl::api::load_workload(&p, &sets)?
        }
        _ => anyhow::bail!("no workload given"),
    };
    Ok(Prepared {
        sc,
        registry,
        statuses,
        log: s.log,
        _temp: temp,
    })
}

/// A writer into a shared buffer (the request log of a run).
#[derive(Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Why a run failed: a scheduler's failure first (it explains the rest).
enum RunError {
    Scheduler(String),
    Other(anyhow::Error),
}

/// Runs `p` (without the GIL).
fn execute(p: Prepared) -> Result<Output, RunError> {
    let buf = SharedBuf::default();
    let log = p.log.then(|| Box::new(buf.clone()) as Box<dyn Write>);
    let statuses = p.statuses.clone();
    let r = Simulation::with_registry(p.sc, &p.registry).and_then(|s| {
        s.run(RunOptions {
            log,
            ..RunOptions::default()
        })
    });
    let st = statuses.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(m) = pyhooks::first_failure(&st) {
        return Err(RunError::Scheduler(m));
    }
    let report = match r {
        Ok(r) => r,
        Err(e @ mmcsim::Error::Stalled(_)) => {
            return Err(match pyhooks::held_requests(&st) {
                Some(m) => RunError::Scheduler(format!("{m}; {e}")),
                None => RunError::Other(e.into()),
            })
        }
        Err(e) => return Err(RunError::Other(e.into())),
    };
    let rows = simctl::api::metrics(&report)
        .map_err(RunError::Other)?
        .into_iter()
        .map(|m| (m.name, m.value, m.unit))
        .collect();
    let log = p
        .log
        .then(|| std::mem::take(&mut *buf.0.lock().unwrap_or_else(|e| e.into_inner())));
    Ok((report.to_json() + "\n", log, rows))
}

/// The Python exception of an error: `SchedulerError` for a scheduler's
/// failure, else `MmcsimError` with `file`, `line` and `field` where the
/// error names them.
fn to_py(py: Python<'_>, e: RunError, label: Option<&str>) -> PyErr {
    let pre = label.map_or(String::new(), |l| format!("{l}: "));
    match e {
        RunError::Scheduler(m) => SchedulerError::new_err(format!("{pre}{m}")),
        RunError::Other(e) => {
            let err = MmcsimError::new_err(format!("{pre}{}", simctl::api::error_message(&e)));
            let (file, line, field) = location(&e);
            let v = err.value(py);
            let _ = v.setattr("file", file);
            let _ = v.setattr("line", line);
            let _ = v.setattr("field", field);
            let _ = v.setattr("usage", simctl::api::is_usage_error(&e));
            err
        }
    }
}

/// `(file, line, field)` of a located parse error in `e`'s chain.
fn location(e: &anyhow::Error) -> (Option<String>, Option<u64>, Option<String>) {
    for c in e.chain() {
        if let Some(mmcsim::Error::Parse {
            path, line, field, ..
        }) = c.downcast_ref()
        {
            return (
                Some(path.display().to_string()),
                Some(*line),
                Some(field.clone()),
            );
        }
        let trace = match c.downcast_ref() {
            Some(mmcsim::Error::Trace(t)) => Some(t),
            _ => c.downcast_ref::<mmcsim::workload::trace::Error>(),
        };
        if let Some((p, l, f)) = trace.and_then(trace_location) {
            return (Some(p), Some(l), Some(f));
        }
    }
    (None, None, None)
}

fn trace_location(e: &mmcsim::workload::trace::Error) -> Option<(String, u64, String)> {
    match e {
        mmcsim::workload::trace::Error::Parse {
            path, line, field, ..
        } => Some((path.display().to_string(), *line, field.clone())),
        _ => None,
    }
}

/// Runs one spec; returns `(json, log, rows)`.
#[pyfunction]
fn simulate(py: Python<'_>, spec: Spec) -> PyResult<Output> {
    let p = prepare(py, spec).map_err(|e| to_py(py, RunError::Other(e), None))?;
    py.allow_threads(|| execute(p))
        .map_err(|e| to_py(py, e, None))
}

/// Runs every spec on `jobs` threads (default one per core), results in
/// order; `labels` name them in errors. Every spec is checked before any
/// run starts.
#[pyfunction]
#[pyo3(signature = (specs, labels, jobs=None))]
fn simulate_many(
    py: Python<'_>,
    specs: Vec<Spec>,
    labels: Vec<String>,
    jobs: Option<usize>,
) -> PyResult<Vec<Output>> {
    let mut prepared = Vec::with_capacity(specs.len());
    for (s, l) in specs.into_iter().zip(&labels) {
        prepared.push(prepare(py, s).map_err(|e| to_py(py, RunError::Other(e), Some(l)))?);
    }
    let results = py
        .allow_threads(|| simctl::api::parallel(prepared, jobs, execute))
        .map_err(|e| to_py(py, RunError::Other(e), None))?;
    let mut out = Vec::with_capacity(results.len());
    for (r, l) in results.into_iter().zip(&labels) {
        out.push(r.map_err(|e| to_py(py, e, Some(l)))?);
    }
    Ok(out)
}

/// A sweep's cells (JSON), reports, `--csv` rows and failures.
type SweepOutput = (
    String,
    Vec<Option<String>>,
    Vec<Option<Vec<(String, String, String)>>>,
    Vec<(usize, String)>,
);

/// Runs the grid (TOML text `text`, standing for file `path`) into `out`
/// on `jobs` workers; returns `(cells as JSON, reports, failures)`.
#[pyfunction]
#[pyo3(signature = (text, path, out, jobs=None))]
fn sweep(
    py: Python<'_>,
    text: String,
    path: PathBuf,
    out: PathBuf,
    jobs: Option<usize>,
) -> PyResult<SweepOutput> {
    let statuses = Statuses::default();
    let reg = registry(py, None, &statuses)?;
    let r = py.allow_threads(|| simctl::api::sweep(&text, &path, &out, jobs, &reg));
    let st = statuses.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(m) = pyhooks::first_failure(&st) {
        return Err(SchedulerError::new_err(m));
    }
    let o = r.map_err(|e| to_py(py, RunError::Other(e), None))?;
    let cells = serde_json::to_string(&o.cells).map_err(|e| MmcsimError::new_err(e.to_string()))?;
    let rows = o
        .reports
        .iter()
        .map(|r| {
            let v: serde_json::Value = r.as_deref().and_then(|t| serde_json::from_str(t).ok())?;
            Some(
                simctl::api::metrics_of(&v)
                    .into_iter()
                    .map(|m| (m.name, m.value, m.unit))
                    .collect(),
            )
        })
        .collect();
    Ok((cells, o.reports, rows, o.failed))
}

/// Registers the Python scheduler factory `factory` under `name`
/// (replacing any scheduler of that name, built-in ones included, in
/// this process's runs).
#[pyfunction]
#[pyo3(signature = (name, factory, description = ""))]
fn register_scheduler(name: String, factory: PyObject, description: &str) {
    let mut r = REGISTERED.lock().unwrap_or_else(|p| p.into_inner());
    r.retain(|(n, _, _)| *n != name);
    r.push((name, description.to_string(), factory));
}

/// Every scheduler name a run accepts: built-in, then registered.
#[pyfunction]
fn scheduler_names(py: Python<'_>) -> PyResult<Vec<String>> {
    let statuses = Statuses::default();
    Ok(registry(py, None, &statuses)?
        .names()
        .into_iter()
        .map(String::from)
        .collect())
}

/// Sets the base class `mmcsim.Elevator` (the package does, once).
#[pyfunction]
fn _set_base(py: Python<'_>, cls: PyObject) -> PyResult<()> {
    let _ = BASE.set(py, cls);
    Ok(())
}

/// The extension module.
#[pymodule]
fn _mmcsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<view::Ctx>()?;
    m.add_class::<view::Rq>()?;
    m.add_class::<view::BioView>()?;
    m.add_class::<view::Params>()?;
    m.add("MmcsimError", m.py().get_type::<MmcsimError>())?;
    m.add("SchedulerError", m.py().get_type::<SchedulerError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_many, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(register_scheduler, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler_names, m)?)?;
    m.add_function(wrap_pyfunction!(_set_base, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
