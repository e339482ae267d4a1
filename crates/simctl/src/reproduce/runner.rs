//! The simulations behind the findings: each distinct run (profile,
//! scenario, settings) once, in parallel, collected in a fixed order so the
//! outputs do not depend on the number of workers.

use super::profile::Profile;
use crate::plot::reqlog::{self, Row};
use anyhow::{Context, Result};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use serde_json::Value;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One simulation a finding asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpec {
    /// Scenario file name in `configs/scenarios/`.
    pub scenario: &'static str,
    /// Settings on top of the scenario and profile, as `--set` pairs.
    pub sets: Vec<(String, String)>,
    /// Keep the request log.
    pub log: bool,
    /// A seed micro-benchmark: on a phone, its file goes on the phone's
    /// benchmark file system (`benchmark_fs`) as the papers ran it.
    pub on_benchmark_fs: bool,
}

impl RunSpec {
    /// A run of `scenario` with `sets`, without the request log.
    pub fn new(scenario: &'static str, sets: &[(&str, String)]) -> RunSpec {
        RunSpec {
            scenario,
            sets: sets
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            log: false,
            on_benchmark_fs: false,
        }
    }

    /// The same run as a seed micro-benchmark, on the profile's benchmark
    /// file system.
    pub fn on_benchmark_fs(mut self) -> RunSpec {
        self.on_benchmark_fs = true;
        self
    }

    /// The same run, keeping its request log.
    pub fn logged(mut self) -> RunSpec {
        self.log = true;
        self
    }

    /// `scenario --set k=v ...`, for labels and the report page.
    pub fn describe(&self) -> String {
        let mut s = self.scenario.to_string();
        for (k, v) in &self.sets {
            s.push_str(&format!(" {k}={v}"));
        }
        s
    }
}

/// What a run left: its report (as the JSON `--json` writes) and, when
/// asked for, its request log.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// `profile: scenario settings`, naming the run in errors.
    pub label: String,
    /// The scenario and the finding's settings (without the profile).
    pub run: String,
    /// The report.
    pub report: Value,
    /// The request log rows.
    pub log: Option<Vec<Row>>,
}

/// Path of a scenario by file name.
pub fn scenario_path(configs: &Path, name: &str) -> PathBuf {
    configs.join("scenarios").join(name)
}

/// The text of `spec`'s scenario file, and its path.
fn scenario_text(spec: &RunSpec, configs: &Path) -> Result<(String, PathBuf)> {
    let path = scenario_path(configs, spec.scenario);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (run from the repository root or pass --configs DIR)",
            path.display()
        )
    })?;
    Ok((text, path))
}

/// The settings of `spec` on `profile` before the user's: the profile's
/// overrides, its benchmark file system for a seed micro-benchmark, then
/// the spec's own.
fn own_sets(profile: &Profile, spec: &RunSpec) -> Vec<(String, String)> {
    let mut sets = profile.sets().to_vec();
    if spec.on_benchmark_fs {
        sets.extend(profile.benchmark_fs_sets());
    }
    sets.extend(spec.sets.iter().cloned());
    sets
}

/// Which of the user's `user` settings the scenario of `spec` on
/// `profile` has no part for (see [`super::sets::lacks`]): their indices,
/// with what the scenario lacks.
pub fn lacking(
    profile: &Profile,
    spec: &RunSpec,
    configs: &Path,
    user: &[(String, String)],
) -> Result<Vec<(usize, String)>> {
    let (text, path) = scenario_text(spec, configs)?;
    let mut tree: toml::Value =
        toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
    for (k, v) in own_sets(profile, spec) {
        mmcsim::config::apply_set(&mut tree, &k, &v)
            .with_context(|| format!("{}", path.display()))?;
    }
    Ok(user
        .iter()
        .enumerate()
        .filter_map(|(i, (k, _))| super::sets::lacks(&tree, k).map(|why| (i, why)))
        .collect())
}

/// Loads and validates the scenario of `spec` on profile `profile` (the
/// profile's overrides, its benchmark file system for a seed
/// micro-benchmark, the spec's settings, then `sets`: the user's and
/// `reproduce`'s own).
pub fn scenario(
    profile: &usize,
    spec: &RunSpec,
    profiles: &[Profile],
    configs: &Path,
    sets_after: &[(String, String)],
) -> Result<Scenario> {
    let (text, path) = scenario_text(spec, configs)?;
    let mut sets = own_sets(&profiles[*profile], spec);
    sets.extend(sets_after.iter().cloned());
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    Ok(Scenario::from_toml(
        &text,
        &path.display().to_string(),
        base,
        &sets,
    )?)
}

/// A writer whose bytes stay readable after the simulation drops it.
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One run to make: its scenario (loaded), what it is, and the profile's
/// name.
pub type Item<'a> = (Scenario, &'a RunSpec, &'a str);

/// Runs every item on `jobs` workers (default: one per core), runs that
/// precondition the same device starting from one preconditioned copy
/// (the reports are the same as preconditioning each;
/// [`crate::shared_devices`]); `done` is called after each run. The
/// outputs come back in the order of `items`.
pub fn run_all(
    items: Vec<Item<'_>>,
    jobs: Option<usize>,
    registry: &Registry,
    done: impl Fn() + Sync,
) -> Result<Vec<RunOutput>> {
    let keyed = items
        .into_iter()
        .map(|(sc, spec, profile)| {
            let key = PreparedDevice::key(&sc)
                .with_context(|| format!("{profile}: {}", spec.describe()))?;
            Ok(((sc, spec, profile), key))
        })
        .collect::<Result<Vec<_>>>()?;
    let shared = crate::shared_devices::run(
        keyed,
        jobs,
        |(sc, _, _): &Item<'_>| PreparedDevice::new(sc).map_err(|e| e.to_string()),
        |(sc, spec, profile), device| {
            let r = device
                .map_err(|e| {
                    anyhow::anyhow!(
                        "{profile}: {}: preconditioning the device: {e}",
                        spec.describe()
                    )
                })
                .and_then(|d| run(sc, spec, profile, registry, &d));
            done();
            r
        },
    )?;
    shared.results.into_iter().collect()
}

/// Runs one scenario of `profile` (by name) on a clone of `device`
/// (preconditioned from a scenario with the same device key).
pub fn run(
    sc: Scenario,
    spec: &RunSpec,
    profile: &str,
    registry: &Registry,
    device: &PreparedDevice,
) -> Result<RunOutput> {
    let log = spec.log;
    let label = format!("{profile}: {}", spec.describe());
    let buf = Rc::new(RefCell::new(Vec::new()));
    let opts = RunOptions {
        log: log.then(|| Box::new(Shared(buf.clone())) as Box<dyn Write>),
        ..RunOptions::default()
    };
    let report = Simulation::with_prepared_device(sc, registry, device)
        .and_then(|s| s.run(opts))
        .with_context(|| label.clone())?;
    let log = if log {
        let text = String::from_utf8(buf.take()).context("request log is not UTF-8")?;
        Some(reqlog::parse(&text, &label)?)
    } else {
        None
    };
    Ok(RunOutput {
        report: serde_json::from_str(&report.to_json())?,
        label,
        run: spec.describe(),
        log,
    })
}
