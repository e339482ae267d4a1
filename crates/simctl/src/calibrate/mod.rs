//! `simctl calibrate`: fit named device- and host-profile parameters to
//! measurements.
//!
//! Inputs: a profile (a device profile, or a phone whose device and host
//! profiles are fitted and whose scheduler is used for the runs), free
//! parameters with bounds (`--param device.nand.t_r_us=40:120`, and for a
//! phone `--param host.syscall_us=10:80`: host and device fitted jointly),
//! and a targets file ([`targets`]: scenario, metric, measured value or
//! band, weight, schedulers). The search is Nelder–Mead (argmin) over the
//! parameters mapped log-linearly onto [0, 1]; each evaluation runs every
//! target in parallel ([`objective`]). The outputs are the device profile
//! (`--out`) and the host profile (`--host-out`) with their fitted values
//! replaced (comments kept), each with the same `[calibration.record]`
//! table of all parameters, the targets, achieved values, relative errors
//! and the command that produced it ([`record`]). Same inputs give a
//! byte-identical output: the simulator, the search and the collection
//! order are deterministic.

mod objective;
mod params;
mod record;
pub(crate) mod targets;

use anyhow::{bail, Context, Result};
use argmin::core::{Executor, State};
use argmin::solver::neldermead::NelderMead;
use mmcsim::config::Phone;
use mmcsim::sched::Registry;
use objective::{Cost, Problem};
use params::{Param, ProfileKind};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Offset of the initial simplex's other vertices from the start, in
/// search coordinates (a quarter of each parameter's log range).
const SIMPLEX_STEP: f64 = 0.25;

/// What `simctl calibrate` was asked to do.
#[derive(Debug)]
pub struct CalibrateArgs {
    /// Device profile or phone file.
    pub profile: PathBuf,
    /// Targets file.
    pub targets: PathBuf,
    /// `KEY=LOW:HIGH` free parameters.
    pub params: Vec<String>,
    /// Nelder–Mead iterations at most.
    pub max_iters: u64,
    /// Output device profile (needed when a `device.*` parameter is fitted).
    pub out: Option<PathBuf>,
    /// Output host profile (needed when a `host.*` parameter is fitted).
    pub host_out: Option<PathBuf>,
    /// Threads (default: one per core); the output does not depend on it.
    pub jobs: Option<usize>,
}

/// The profile being calibrated.
struct Profile {
    /// The device profile whose values are fitted.
    device: PathBuf,
    /// Its text.
    text: String,
    /// A phone's host profile and its text.
    host: Option<(PathBuf, String)>,
    /// Overrides selecting the profile for every run.
    sets: Vec<(String, String)>,
    /// The phone file, when the profile is a phone.
    phone: Option<PathBuf>,
}

fn load_profile(path: &Path) -> Result<Profile> {
    let src = path.display().to_string();
    let text = mmcsim::textfile::read_config(path).with_context(|| format!("profile {src}"))?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{src}: {}", e.to_string().trim_end()))?;
    let is_phone = table.get("device").is_some_and(toml::Value::is_str)
        && table.get("host").is_some_and(toml::Value::is_str);
    if is_phone {
        let phone = Phone::load(path)?;
        let text = mmcsim::textfile::read_config(&phone.device)
            .with_context(|| format!("{src}: device profile {}", phone.device.display()))?;
        mmcsim::device::DeviceConfig::from_toml_str(&text, &phone.device.display().to_string())?;
        let host_text = mmcsim::textfile::read_config(&phone.host)
            .with_context(|| format!("{src}: host profile {}", phone.host.display()))?;
        return Ok(Profile {
            device: phone.device.clone(),
            text,
            host: Some((phone.host.clone(), host_text)),
            sets: phone.sets(),
            phone: Some(path.to_path_buf()),
        });
    }
    mmcsim::device::DeviceConfig::from_toml_str(&text, &src)?;
    let abs = std::path::absolute(path).with_context(|| format!("profile {src}"))?;
    Ok(Profile {
        device: path.to_path_buf(),
        text,
        host: None,
        sets: vec![("device.profile".into(), abs.display().to_string())],
        phone: None,
    })
}

/// Runs the calibration, writes the calibrated profile to `args.out` and
/// returns the fit table.
pub fn calibrate(args: &CalibrateArgs, registry: &Registry) -> Result<String> {
    let profile = load_profile(&args.profile)?;
    if args.params.is_empty() {
        bail!(
            "no --param: name at least one free parameter, e.g. --param device.nand.t_r_us=40:120"
        );
    }
    if args.max_iters == 0 {
        bail!("--max-iters 0: expected at least 1 iteration");
    }
    let table: toml::Table = toml::from_str(&profile.text)?;
    let src = profile.device.display().to_string();
    let host_table = match &profile.host {
        Some((path, text)) => Some((
            toml::from_str::<toml::Table>(text)
                .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.to_string().trim_end()))?,
            path.display().to_string(),
        )),
        None => None,
    };
    let params = args
        .params
        .iter()
        .map(|a| {
            Param::parse(
                a,
                (&table, &src),
                host_table.as_ref().map(|(t, s)| (t, s.as_str())),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.key == p.key) {
            bail!("--param {}: given twice", p.key);
        }
    }
    let outputs = outputs(args, &params)?;
    let opened = open_outputs(args, &profile, &outputs)?;
    let targets =
        targets::load(&args.targets, &registry.names()).map_err(crate::output::as_unusable)?;
    let mut problem = Problem::new(&targets.targets, &params, profile.sets.clone(), registry);
    problem.phone = profile.phone.clone();
    problem.configs = crate::catalogue::configs_dir(Path::new("configs"))?;
    let search = || fit(&problem, args.max_iters);
    let (best, iters, converged) = match args.jobs {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .context("starting worker threads")?
            .install(search)?,
        None => search()?,
    };
    let fit = record::Fit {
        params: &params,
        targets: &targets,
        best: &best,
        evaluations: problem.evaluations(),
        iterations: iters,
        converged,
        command: command_line(args),
    };
    for ((kind, _, _), o) in outputs.iter().zip(opened) {
        let text = match kind {
            ProfileKind::Device => &profile.text,
            ProfileKind::Host => &profile.host.as_ref().expect("checked: a phone").1,
        };
        let written = record::calibrated_profile(text, &fit, *kind)?;
        o.expect("opened")
            .write(written.as_bytes(), &mut std::io::stdout())?;
    }
    let files: Vec<(ProfileKind, &Path)> =
        outputs.iter().map(|(k, p, _)| (*k, p.as_path())).collect();
    Ok(record::table(&fit, &files))
}

/// Opens `outputs` before the fit, refusing one that names an input
/// (the profile, its device or host profile, the targets file) or both
/// naming one file.
fn open_outputs(
    args: &CalibrateArgs,
    profile: &Profile,
    outputs: &[(ProfileKind, &PathBuf, &'static str)],
) -> Result<Vec<Option<crate::output::Output>>> {
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a).is_ok_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b))
    };
    let mut inputs = vec![
        ("profile", args.profile.as_path()),
        ("device profile", profile.device.as_path()),
        ("targets file", args.targets.as_path()),
    ];
    if let Some((h, _)) = &profile.host {
        inputs.push(("host profile", h.as_path()));
    }
    for (_, out, flag) in outputs {
        for (what, p) in &inputs {
            if same(out, p) {
                bail!(
                    "{flag} {}: this is the {what} calibrate reads; refusing to overwrite an input (choose another output file)",
                    out.display()
                );
            }
        }
    }
    if let [(_, a, _), (_, b, _)] = outputs {
        if a == b || same(a, b) {
            bail!(
                "--out and --host-out are both {}: the device and host profiles need two files",
                a.display()
            );
        }
    }
    let list: Vec<(&str, Option<&Path>)> = outputs
        .iter()
        .map(|(_, p, flag)| (*flag, Some(p.as_path())))
        .collect();
    crate::output::open_all(&list)
}

/// The output file of each profile kind that has a fitted parameter, with
/// its option's name; an output without parameters, or parameters without
/// an output, is an error.
fn outputs<'a>(
    args: &'a CalibrateArgs,
    params: &[Param],
) -> Result<Vec<(ProfileKind, &'a PathBuf, &'static str)>> {
    let mut v = Vec::new();
    for (kind, out, flag) in [
        (ProfileKind::Device, &args.out, "--out"),
        (ProfileKind::Host, &args.host_out, "--host-out"),
    ] {
        let fitted = params.iter().any(|p| p.kind == kind);
        match (fitted, out) {
            (true, Some(o)) => v.push((kind, o, flag)),
            (true, None) => bail!(
                "{flag} FILE is needed: a {}.* parameter is fitted, and the calibrated {} is written there",
                if kind == ProfileKind::Device { "device" } else { "host" },
                kind.noun()
            ),
            (false, Some(o)) => bail!(
                "{flag} {}: no {}.* parameter is fitted, so there is no calibrated {} to write",
                o.display(),
                if kind == ProfileKind::Device { "device" } else { "host" },
                kind.noun()
            ),
            (false, None) => {}
        }
    }
    Ok(v)
}

/// Nelder–Mead from the profile's values; returns the best evaluation, the
/// iterations run and whether the simplex converged (false: `max_iters`
/// ended the search).
fn fit(
    problem: &Problem,
    max_iters: u64,
) -> Result<(std::sync::Arc<objective::Evaluation>, u64, bool)> {
    let start: Vec<f64> = problem.params.iter().map(|p| p.to_unit(p.start)).collect();
    let mut simplex = vec![start.clone()];
    for i in 0..start.len() {
        let mut v = start.clone();
        v[i] += if v[i] + SIMPLEX_STEP <= 1.0 {
            SIMPLEX_STEP
        } else {
            -SIMPLEX_STEP
        };
        simplex.push(v);
    }
    // The vertices run in parallel before the search (argmin evaluates
    // them one by one); its calls then hit the cache. This also reports a
    // bad target or scenario before the search starts.
    simplex
        .par_iter()
        .map(|u| problem.evaluate(&problem.x_of(u)).map(|_| ()))
        .collect::<Result<Vec<()>>>()?;
    let solver = NelderMead::new(simplex).with_sd_tolerance(1e-9)?;
    let res = Executor::new(Cost(problem), solver)
        .configure(|s| s.max_iters(max_iters))
        .run()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let state = res.state();
    let u = state
        .get_best_param()
        .cloned()
        .context("the search found no point")?;
    let best = problem.evaluate(&problem.x_of(&u))?;
    let converged = matches!(
        state.get_termination_reason(),
        Some(argmin::core::TerminationReason::SolverConverged)
    );
    Ok((best, state.get_iter(), converged))
}

/// The command that reproduces the output (paths as given; no --jobs,
/// which does not change it).
fn command_line(a: &CalibrateArgs) -> String {
    let mut s = format!(
        "simctl calibrate {} --targets {}",
        a.profile.display(),
        a.targets.display()
    );
    for p in &a.params {
        s.push_str(&format!(" --param {p}"));
    }
    s.push_str(&format!(" --max-iters {}", a.max_iters));
    if let Some(o) = &a.out {
        s.push_str(&format!(" --out {}", o.display()));
    }
    if let Some(o) = &a.host_out {
        s.push_str(&format!(" --host-out {}", o.display()));
    }
    s
}
