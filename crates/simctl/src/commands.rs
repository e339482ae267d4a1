//! The subcommands.

use crate::cli::{Cli, Command, ConvertTo, RunArgs, SimArgs};
use crate::output::Stdout;
use anyhow::{Context, Result};
use mmcsim::config::{parse_set, Scenario};
use mmcsim::sched::{Registry, SchedParams};
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Runs `cli`'s command, writing its output to `out`.
pub fn dispatch(cli: Cli, registry: &Registry, out: &mut Stdout) -> Result<ExitCode> {
    match cli.command {
        Command::Replay { trace, replay, run } => {
            let mut sets = replay.sets();
            sets.extend(overrides(&run.sim, run.scheduler.as_deref())?);
            let sc = Scenario::for_trace(&trace, &sets)?;
            simulate(sc, &run, &[], registry, out)
        }
        Command::Run { scenario, run } => {
            let sets = overrides(&run.sim, run.scheduler.as_deref())?;
            let sc = load_workload(&scenario, &sets)?;
            simulate(sc, &run, &[scenario.as_path()], registry, out)
        }
        Command::Compare {
            workload,
            schedulers,
            plot,
            jobs,
            sim,
            replay,
        } => {
            let mut sets = replay.sets();
            if crate::compare::is_scenario(&workload) && !sets.is_empty() {
                let given: Vec<String> = sets
                    .iter()
                    .map(|(k, _)| format!("--{}", k["trace.".len()..].replace('_', "-")))
                    .collect();
                anyhow::bail!(
                    "{} only apply to a trace workload; for a scenario set its trace with --set trace.<key>=<value>",
                    given.join(", ")
                );
            }
            sets.extend(overrides(&sim, None)?);
            refuse_clashing_outputs(&[
                ("--json", sim.json.as_deref()),
                ("--csv", sim.csv.as_deref()),
            ])?;
            for (flag, o) in [("--json", &sim.json), ("--csv", &sim.csv)] {
                if let Some(o) = o {
                    refuse_input(flag, o, &[("workload".to_string(), workload.clone())])?;
                }
            }
            let entries = crate::compare::parse_entries(&schedulers, registry)?;
            let c = crate::compare::run(&workload, &entries, &sets, registry, jobs)?;
            if let Some(p) = &sim.json {
                write_out(p, &(serde_json::to_string_pretty(&c)? + "\n"), out)?;
            }
            if let Some(p) = &sim.csv {
                let runs: Vec<(&str, &mmcsim::sim::Report)> = c
                    .reports
                    .iter()
                    .map(|o| (o.label.as_str(), &o.report))
                    .collect();
                crate::csv_out::write(p, &runs, out)?;
            }
            if let Some(prefix) = &plot {
                crate::compare::figure(&c)?.write_both(prefix)?;
            }
            if !sim.quiet && !to_stdout(&sim) {
                write!(out, "{}", crate::compare::table(&c))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Sweep {
            grid,
            out,
            jobs,
            shard,
            slurm,
            shards,
        } => {
            let args = crate::sweep::SweepArgs {
                grid,
                out,
                jobs,
                shard: shard
                    .as_deref()
                    .map(crate::sweep::shard::Shard::parse)
                    .transpose()?,
                slurm,
                shards,
            };
            crate::sweep::sweep(&args, registry)
        }
        Command::Calibrate {
            profile,
            targets,
            params,
            max_iters,
            out: dest,
            host_out,
            jobs,
        } => {
            let args = crate::calibrate::CalibrateArgs {
                profile,
                targets,
                params,
                max_iters,
                out: dest,
                host_out,
                jobs,
            };
            let table = crate::calibrate::calibrate(&args, registry)?;
            write!(out, "{table}")?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { dirs, out } => {
            let n = crate::sweep::merge::merge(&dirs, &out)?;
            println!(
                "merged {n} cells from {} directories into {}",
                dirs.len(),
                out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Check {
            report,
            baseline,
            tolerances,
        } => check(&report, &baseline, &tolerances, out),
        Command::Reproduce(a) => crate::reproduce::reproduce(&a, registry, out),
        Command::Plot { inputs, kind, out } => {
            let inputs = inputs
                .iter()
                .map(|p| crate::plot::inputs::load(p))
                .collect::<Result<Vec<_>>>()?;
            let figure = crate::plot::inputs::figure(kind, &inputs)?;
            for o in &figure.omitted {
                eprintln!("note: {o}");
            }
            figure.write(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Trace(t) => trace(t, out),
        Command::Schedulers { hz, json } => schedulers(registry, hz, json, out),
        Command::Completions { shell } => {
            crate::generate::completions(shell, out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => {
            match dir {
                Some(d) => crate::generate::man_pages(&d)?,
                None => crate::generate::man(out)?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `--set` values plus the shorthand flags, in the order they apply:
/// `--phone` first (it replaces the scenario's profile choices), then
/// `--device`, `--scheduler`, `--seed` and every `--set`.
pub(crate) fn overrides(a: &SimArgs, scheduler: Option<&str>) -> Result<Vec<(String, String)>> {
    let mut sets = Vec::new();
    if let Some(p) = &a.phone {
        let here = std::env::current_dir().context("--phone: the current directory")?;
        sets.extend(mmcsim::config::Phone::find(p, &here)?.sets());
    }
    if let Some(d) = &a.device {
        // Device paths on the command line are relative to the current
        // directory, not to the scenario file.
        let p = std::path::absolute(d).with_context(|| format!("--device {}", d.display()))?;
        sets.push(("device.profile".to_string(), p.display().to_string()));
    }
    if let Some(s) = scheduler {
        sets.push(("scheduler.name".to_string(), s.to_string()));
    }
    if let Some(seed) = a.seed {
        sets.push(("seed".to_string(), seed.to_string()));
    }
    for s in &a.set {
        sets.push(parse_set(s)?);
    }
    Ok(sets)
}

/// Refuses an output path that names one of the run's inputs (the trace,
/// its preconditioning trace, the scenario, the device profile), before
/// anything is written.
fn refuse_overwriting_inputs(sc: &Scenario, a: &RunArgs, scenario: &[&Path]) -> Result<()> {
    let mut inputs: Vec<(String, std::path::PathBuf)> = scenario
        .iter()
        .map(|p| ("scenario".to_string(), p.to_path_buf()))
        .collect();
    if let Some(t) = &sc.trace {
        inputs.push(("trace".into(), sc.resolve(&t.path)));
        if let Some(p) = &t.precondition {
            inputs.push(("preconditioning trace".into(), sc.resolve(p)));
        }
    }
    if let Some(p) = sc.device.get("profile").and_then(|v| v.as_str()) {
        inputs.push(("device profile".into(), sc.resolve(Path::new(p))));
    }
    if let Some(p) = &a.load_state {
        inputs.push(("device state".into(), p.clone()));
    }
    let outputs = [
        ("--log", a.log.as_deref()),
        ("--json", a.sim.json.as_deref()),
        ("--csv", a.sim.csv.as_deref()),
        ("--save-state", a.save_state.as_deref()),
    ];
    for (flag, out) in outputs {
        if let Some(out) = out {
            refuse_input(flag, out, &inputs)?;
        }
    }
    refuse_clashing_outputs(&outputs)
}

/// Refuses output `out` of option `flag` when it names one of `inputs`
/// (what, path) that exists.
fn refuse_input(flag: &str, out: &Path, inputs: &[(String, std::path::PathBuf)]) -> Result<()> {
    if out == Path::new("-") {
        return Ok(());
    }
    let Ok(o) = std::fs::canonicalize(out) else {
        return Ok(());
    };
    for (what, input) in inputs {
        if std::fs::canonicalize(input).is_ok_and(|i| i == o) {
            anyhow::bail!(
                "{flag} {}: this is the {what} the run reads; refusing to overwrite an input (choose another output file)",
                out.display()
            );
        }
    }
    Ok(())
}

/// Refuses two output options naming the same file (standard output `-`
/// may be named by one only).
fn refuse_clashing_outputs(outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    for (i, (f1, p1)) in outputs.iter().enumerate() {
        for (f2, p2) in &outputs[i + 1..] {
            if let (Some(a), Some(b)) = (p1, p2) {
                if a == b {
                    anyhow::bail!(
                        "{f1} and {f2} both name {}: choose two different files",
                        a.display()
                    );
                }
            }
        }
    }
    Ok(())
}

/// True when the JSON report or the CSV table goes to standard output
/// (the summary table then stays off it).
fn to_stdout(a: &SimArgs) -> bool {
    [&a.json, &a.csv]
        .iter()
        .any(|p| p.as_deref() == Some(Path::new("-")))
}

/// Loads the workload file of `run` or `compare`: an fio job file
/// (extension `.fio`, or detected from its content) translated into a
/// scenario on the default device, host and scheduler, or a scenario
/// TOML; `sets` apply to either.
pub(crate) fn load_workload(path: &Path, sets: &[(String, String)]) -> Result<Scenario> {
    use mmcsim::workload::fio_job;
    let text = match mmcsim::textfile::read_config(path) {
        Ok(t) if fio_job::is_job_file(path, &t) => t,
        // A scenario, or unreadable: the scenario loader says why.
        _ => return Ok(Scenario::load(path, sets)?),
    };
    let source = path.display().to_string();
    let name = path
        .file_stem()
        .map_or_else(|| source.clone(), |s| s.to_string_lossy().into_owned());
    let w = fio_job::parse(&text, &source, &name)?;
    let base = path.parent().unwrap_or(Path::new("")).to_path_buf();
    Ok(Scenario::from_toml(
        &w.to_scenario_toml()?,
        &source,
        base,
        sets,
    )?)
}

fn simulate(
    sc: Scenario,
    a: &RunArgs,
    scenario: &[&Path],
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    refuse_overwriting_inputs(&sc, a, scenario)?;
    let sim = if let Some(p) = &a.load_state {
        let bytes = std::fs::read(p).with_context(|| format!("--load-state {}", p.display()))?;
        let device = PreparedDevice::load_state(&sc, &bytes, p)?;
        drop(bytes);
        Simulation::with_owned_device(sc, registry, device)?
    } else if let Some(p) = &a.save_state {
        let device = PreparedDevice::new(&sc)?;
        crate::output::write_atomic(p, &device.save_state()?).context("--save-state")?;
        Simulation::with_owned_device(sc, registry, device)?
    } else {
        Simulation::with_registry(sc, registry)?
    };
    // The log is written to a temporary file beside its destination and
    // renamed over it only when the run succeeds: a failed run leaves no
    // partial log.
    let mut log_tmp = None;
    let log: Option<Box<dyn Write>> = match &a.log {
        Some(p) => {
            let tmp = temp_beside(p).with_context(|| format!("--log {}", p.display()))?;
            let f = tmp
                .as_file()
                .try_clone()
                .with_context(|| format!("--log {}", p.display()))?;
            log_tmp = Some(tmp);
            Some(Box::new(std::io::BufWriter::new(f)))
        }
        None => None,
    };
    let report = sim.run(RunOptions {
        log,
        allow_empty: a.allow_empty,
        check_integrity: a.check_integrity,
        strict: a.strict,
    })?;
    if let (Some(tmp), Some(p)) = (log_tmp, &a.log) {
        tmp.persist(p)
            .map_err(|e| e.error)
            .with_context(|| format!("writing --log {}", p.display()))?;
    }
    if let Some(p) = &a.sim.json {
        write_out(p, &(report.to_json() + "\n"), out)?;
    }
    if let Some(p) = &a.sim.csv {
        crate::csv_out::write(p, &[(report.scheduler.name.as_str(), &report)], out)?;
    }
    if !a.sim.quiet && !to_stdout(&a.sim) {
        write!(out, "{}", report.to_table())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn trace(t: crate::cli::TraceCommand, out: &mut Stdout) -> Result<ExitCode> {
    use crate::cli::TraceCommand;
    use crate::trace_cmd as tc;
    match t {
        TraceCommand::Formats => write!(out, "{}", tc::formats())?,
        TraceCommand::Inspect { trace, read, json } => {
            let i = tc::inspect(&trace, &read.open_options())?;
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&i)?)?;
            } else {
                write!(out, "{}", tc::inspection_table(&i))?;
            }
        }
        TraceCommand::Convert {
            trace,
            to: ConvertTo::Csv,
            output,
            read,
        } => {
            let o = read.open_options();
            let n = match &output {
                Some(p) => {
                    if std::fs::canonicalize(p)
                        .is_ok_and(|o| std::fs::canonicalize(&trace).is_ok_and(|i| i == o))
                    {
                        anyhow::bail!(
                            "--output {}: this is the trace being converted; refusing to overwrite an input (choose another output file)",
                            p.display()
                        );
                    }
                    // Written beside the destination and renamed over it
                    // on success: a failed conversion leaves nothing.
                    let tmp =
                        temp_beside(p).with_context(|| format!("--output {}", p.display()))?;
                    let mut f = std::io::BufWriter::new(
                        tmp.as_file()
                            .try_clone()
                            .with_context(|| format!("--output {}", p.display()))?,
                    );
                    let writing = || format!("writing {}", p.display());
                    let n = tc::convert(&trace, &o, &mut f).map_err(|e| match e {
                        mmcsim::Error::Output { source } => {
                            anyhow::Error::new(source).context(writing())
                        }
                        other => other.into(),
                    })?;
                    f.flush().with_context(writing)?;
                    drop(f);
                    tmp.persist(p).map_err(|e| e.error).with_context(writing)?;
                    n
                }
                None => {
                    let n = tc::convert(&trace, &o, out)?;
                    out.flush()?;
                    n
                }
            };
            eprintln!("converted {n} records");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check(
    report: &Path,
    baseline: &Path,
    tolerances: &[String],
    out: &mut Stdout,
) -> Result<ExitCode> {
    use crate::check::{parse_tolerance, table, Unusable};
    let run = || -> Result<Vec<crate::check::Row>, Unusable> {
        let t = tolerances
            .iter()
            .map(|a| parse_tolerance(a))
            .collect::<Result<Vec<_>, _>>()?;
        crate::check::check(report, baseline, &t)
    };
    match run() {
        Err(Unusable(m)) => {
            eprintln!("error: {m}");
            Ok(ExitCode::from(2))
        }
        Ok(rows) => {
            let bad = rows.iter().filter(|r| !r.ok).count();
            if bad == 0 {
                writeln!(
                    out,
                    "check passed: {} metrics within tolerance of {}",
                    rows.len(),
                    baseline.display()
                )?;
                Ok(ExitCode::SUCCESS)
            } else {
                write!(out, "{}", table(&rows))?;
                writeln!(
                    out,
                    "check FAILED: {bad} of {} metrics regressed",
                    rows.len()
                )?;
                Ok(ExitCode::from(1))
            }
        }
    }
}

/// Writes `text` to the file `p`, or to `out` when `p` is `-`.
fn write_out(p: &Path, text: &str, out: &mut Stdout) -> Result<()> {
    if p == Path::new("-") {
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    crate::output::write_atomic(p, text.as_bytes())
}

/// A temporary file in the folder of `p`, deleted unless persisted.
fn temp_beside(p: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    crate::output::temp_beside(p, ".tmp")
}

fn schedulers(registry: &Registry, hz: u32, json: bool, out: &mut Stdout) -> Result<ExitCode> {
    let params = SchedParams { hz, nonrot: true };
    let mut all = Vec::new();
    for name in registry.names() {
        let e = registry.create(name, &params).map_err(anyhow::Error::msg)?;
        all.push((
            name.to_string(),
            registry.description(name).unwrap_or("").to_string(),
            e.tunables(),
        ));
    }
    if json {
        let v: Vec<serde_json::Value> = all
            .iter()
            .map(|(n, d, t)| serde_json::json!({"name": n, "description": d, "hz": hz, "tunables": t}))
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for (name, desc, tunables) in &all {
        writeln!(out, "{name}: {desc}")?;
        if tunables.is_empty() {
            writeln!(out, "    (no tunables)")?;
        }
        for t in tunables {
            writeln!(
                out,
                "    {:<20} default {:>8} {:<10} {}",
                t.name, t.default, t.unit, t.help
            )?;
        }
    }
    writeln!(
        out,
        "(defaults shown at HZ={hz}; set tunables with --set iosched.<name>=<value>)"
    )?;
    Ok(ExitCode::SUCCESS)
}
