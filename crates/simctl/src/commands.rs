//! The subcommands.

use crate::cli::{Cli, Command, ConvertTo, RunArgs, SimArgs};
use crate::output::{Output, Stdout};
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
            replay_trace(&trace, &replay, &run, registry, out)
        }
        Command::Run { scenario, run } => {
            let scenario = crate::catalogue::workload(&scenario)?;
            run_workload(&scenario, &run, registry, out)
        }
        Command::Crash {
            workload,
            cuts,
            at,
            at_event,
            sim,
        } => {
            let plan = crate::crash::plan(cuts, at.as_deref(), at_event, &sim)?;
            crate::crash::crash(&workload, plan, &sim, registry, out)
        }
        Command::Compare {
            workload,
            schedulers,
            plot,
            jobs,
            seeds,
            sim,
            replay,
        } => compare(
            &workload,
            &schedulers,
            plot.as_deref(),
            (jobs, seeds),
            (&sim, &replay),
            registry,
            out,
        ),
        Command::Sweep {
            grid,
            out,
            jobs,
            shard,
            slurm,
            shards,
            sbatch_opt,
        } => sweep(
            crate::sweep::SweepArgs {
                grid,
                out,
                jobs,
                shard: None,
                slurm,
                shards,
                sbatch_opts: Vec::new(),
            },
            shard.as_deref(),
            &sbatch_opt,
            registry,
        ),
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
            calibrate(&args, registry, out)
        }
        Command::Reproduce(mut a) => {
            a.configs = crate::catalogue::configs_dir(&a.configs)?;
            crate::reproduce::reproduce(&a, registry, out)
        }
        tool => dispatch_tool(tool, registry, out),
    }
}

/// Runs one of the commands that run no simulation (merging, checking,
/// plotting, traces, listings, generated documents).
fn dispatch_tool(command: Command, registry: &Registry, out: &mut Stdout) -> Result<ExitCode> {
    match command {
        Command::Merge { dirs, out: to } => merge(&dirs, &to, out),
        Command::Check {
            report,
            baseline,
            tolerances,
            allow_mismatch,
            fail_on_improvement,
        } => check(
            &report,
            &baseline,
            &tolerances,
            (allow_mismatch, fail_on_improvement),
            out,
        ),
        Command::Plot {
            inputs,
            kind,
            out,
            class,
        } => plot(&inputs, kind, &out, class.as_ref()),
        Command::Trace(t) => trace(t, out),
        Command::Schedulers { hz, json } => schedulers(registry, hz, json, out),
        Command::Phones { json } => crate::catalogue::phones(json, out),
        Command::Scenarios { json } => crate::catalogue::scenarios(json, out),
        Command::Completions { shell } => {
            crate::generate::completions(shell, out).map(|()| ExitCode::SUCCESS)
        }
        Command::Schema { doc, markdown } => schema(doc, markdown, out),
        Command::Man { dir } => man(dir.as_deref(), out),
        Command::Replay { .. }
        | Command::Run { .. }
        | Command::Crash { .. }
        | Command::Compare { .. }
        | Command::Sweep { .. }
        | Command::Calibrate { .. }
        | Command::Reproduce(_) => {
            anyhow::bail!("internal: a simulation command reached the tool dispatcher")
        }
    }
}

/// `simctl calibrate`: fits and prints the fit table.
fn calibrate(
    args: &crate::calibrate::CalibrateArgs,
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    write!(out, "{}", crate::calibrate::calibrate(args, registry)?)?;
    Ok(ExitCode::SUCCESS)
}

/// `simctl man`: one page per subcommand into `dir`, or the main page to
/// standard output.
fn man(dir: Option<&Path>, out: &mut Stdout) -> Result<ExitCode> {
    match dir {
        Some(d) => crate::generate::man_pages(d)?,
        None => crate::generate::man(out)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `simctl sweep`: `args` with its shard (`I/N`) and `#SBATCH` options
/// parsed from the command line.
fn sweep(
    mut args: crate::sweep::SweepArgs,
    shard: Option<&str>,
    sbatch_opt: &[String],
    registry: &Registry,
) -> Result<ExitCode> {
    args.sbatch_opts = sbatch_opt
        .iter()
        .map(|o| crate::sweep::slurm::parse_opt(o).map_err(crate::output::as_unusable))
        .collect::<Result<Vec<_>>>()?;
    args.shard = shard.map(crate::sweep::shard::Shard::parse).transpose()?;
    crate::sweep::sweep(&args, registry)
}

/// `simctl schema`: the report's JSON Schema, or its Markdown rendering.
fn schema(doc: crate::cli::SchemaDoc, markdown: bool, out: &mut Stdout) -> Result<ExitCode> {
    let crate::cli::SchemaDoc::Report = doc;
    let schema = crate::schema::report_schema();
    if markdown {
        write!(out, "{}", crate::schema::markdown(&schema))?;
    } else {
        writeln!(out, "{}", serde_json::to_string_pretty(&schema)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `simctl compare`: `workload` (a scenario or fio job by file or name, or
/// a trace) under every scheduler entry of `schedulers`.
fn compare(
    workload: &Path,
    schedulers: &str,
    plot: Option<&Path>,
    (jobs, seeds): (Option<usize>, usize),
    (sim, replay): (&SimArgs, &crate::cli::TraceArgs),
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    let workload = crate::catalogue::workload(workload)?;
    let workload = mmcsim::workload::trace::blktrace_bin::resolve_path(&workload);
    let sets = compare_sets(&workload, replay, sim)?;
    let outputs = open_comparison_outputs(&workload, sim, plot)?;
    let entries = crate::compare::parse_entries(schedulers, registry)?;
    if seeds > 1 && sim.seed.is_some() {
        return Err(crate::output::unusable(
            "--seed and --seeds: --seeds N runs every scheduler at seeds 1..=N; give one of them",
        ));
    }
    let c = crate::compare::run(&workload, &entries, &sets, registry, (jobs, seeds))
        .map_err(|e| blamed(e, &sets, &sim.set, |s| workload_scenario(&workload, s)))?;
    write_comparison(&c, outputs, out)?;
    if !sim.quiet && !to_stdout(sim, None) {
        write!(out, "{}", crate::compare::table(&c))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `simctl replay`: the trace is opened and checked before the device is
/// built; `-` is standard input, copied to a temporary file first.
fn replay_trace(
    trace: &Path,
    replay: &crate::cli::TraceArgs,
    run: &RunArgs,
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    let stdin = crate::input::stdin_trace(trace)?;
    let trace = stdin.as_ref().map_or(trace, |t| t.path());
    // A blktrace capture may be named by its prefix (`mmcblk0` for
    // `mmcblk0.blktrace.*`).
    let resolved = mmcsim::workload::trace::blktrace_bin::resolve_path(trace);
    let trace = resolved.as_path();
    crate::input::check_trace(trace)?;
    let mut sets = replay.sets();
    sets.extend(overrides(&run.sim, run.scheduler.as_deref())?);
    let mut sc = blame_set(&sets, &run.sim.set, |s| Ok(Scenario::for_trace(trace, s)?))?;
    if stdin.is_some() {
        sc.name = "-".into();
    }
    if run.output_format != crate::fio_out::OutputFormat::Normal {
        return Err(crate::output::unusable(
            "--output-format json/json+ writes fio's per-job output, which a trace replay has no jobs for; use it with `simctl run` of an fio job file or a scenario with [[jobs]]",
        ));
    }
    simulate(sc, run, &[], None, registry, out)
}

/// `simctl run`: a scenario or fio job file; `-` is standard input, read
/// once.
fn run_workload(
    scenario: &Path,
    run: &RunArgs,
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    let sets = overrides(&run.sim, run.scheduler.as_deref())?;
    let text = if scenario == Path::new("-") {
        Some(crate::input::stdin_text()?)
    } else {
        None
    };
    let sc = blame_set(&sets, &run.sim.set, |s| match &text {
        Some(t) => workload_from_text(scenario, t.clone(), s),
        None => load_workload(scenario, s),
    })
    .map_err(|e| crate::input::not_a_scenario(scenario, e))?;
    let fio = match run.output_format {
        crate::fio_out::OutputFormat::Normal => None,
        _ => Some(fio_report_jobs(scenario, text.as_deref(), &sc)?),
    };
    simulate(sc, run, &[scenario], fio, registry, out)
}

/// `simctl merge`: the shard directories `dirs` into `out`.
fn merge(dirs: &[std::path::PathBuf], out: &Path, stdout: &mut Stdout) -> Result<ExitCode> {
    if dirs
        .first()
        .is_some_and(|d| crate::reproduce::ensemble::is_ensemble_dir(d))
    {
        return crate::reproduce::ensemble::merge(dirs, out, stdout);
    }
    let n = crate::sweep::merge::merge(dirs, out)?;
    println!(
        "merged {n} cells from {} directories into {}",
        dirs.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The overrides of `compare`: the trace options (refused for a scenario
/// workload), then those of [`overrides`].
fn compare_sets(
    workload: &Path,
    replay: &crate::cli::TraceArgs,
    sim: &SimArgs,
) -> Result<Vec<(String, String)>> {
    let mut sets = replay.sets();
    if crate::compare::is_scenario(workload) && !sets.is_empty() {
        let given: Vec<String> = sets
            .iter()
            .map(|(k, _)| format!("--{}", k["trace.".len()..].replace('_', "-")))
            .collect();
        return Err(crate::output::unusable(format!(
            "{} only apply to a trace workload; for a scenario set its trace with --set trace.<key>=<value>",
            given.join(", ")
        )));
    }
    sets.extend(overrides(sim, None)?);
    Ok(sets)
}

/// The scenario of `workload` (a scenario, an fio job file or a trace)
/// with `sets`, as `compare` loads it.
pub(crate) fn workload_scenario(workload: &Path, sets: &[(String, String)]) -> Result<Scenario> {
    if crate::compare::is_scenario(workload) {
        load_workload(workload, sets)
    } else {
        Ok(Scenario::for_trace(workload, sets)?)
    }
}

/// The outputs of `compare` (`--json`, `--csv`, the PNG and SVG of
/// `--plot`), refused when naming the workload, opened before the runs.
fn open_comparison_outputs(
    workload: &Path,
    sim: &SimArgs,
    plot: Option<&Path>,
) -> Result<[Option<Output>; 4]> {
    for (flag, o) in [("--json", &sim.json), ("--csv", &sim.csv)] {
        if let Some(o) = o {
            refuse_input(flag, o, &[("workload".to_string(), workload.to_path_buf())])?;
        }
    }
    let plots = plot.map(|p| (p.with_extension("png"), p.with_extension("svg")));
    open_outputs([
        ("--json", sim.json.as_deref()),
        ("--csv", sim.csv.as_deref()),
        ("--plot", plots.as_ref().map(|p| p.0.as_path())),
        ("--plot", plots.as_ref().map(|p| p.1.as_path())),
    ])
}

/// Writes comparison `c` to the outputs opened by
/// [`open_comparison_outputs`].
fn write_comparison(
    c: &crate::compare::Comparison,
    [json, csv, png, svg]: [Option<Output>; 4],
    out: &mut Stdout,
) -> Result<()> {
    if let Some(o) = json {
        o.write((serde_json::to_string_pretty(c)? + "\n").as_bytes(), out)?;
    }
    if let Some(o) = csv {
        let runs: Vec<(&str, &mmcsim::sim::Report)> = c
            .reports
            .iter()
            .map(|o| (o.label.as_str(), &o.report))
            .collect();
        crate::csv_out::write(o, &runs, out)?;
    }
    if let (Some(png), Some(svg)) = (png, svg) {
        crate::compare::figure(c)?.write_both(png, svg)?;
    }
    Ok(())
}

/// `--set` values plus the shorthand flags, in the order they apply:
/// `--phone` first (it replaces the scenario's profile choices), then
/// `--device`, `--scheduler`, `--seed` and every `--set`.
pub(crate) fn overrides(a: &SimArgs, scheduler: Option<&str>) -> Result<Vec<(String, String)>> {
    let mut sets = Vec::new();
    if let Some(p) = &a.phone {
        sets.extend(crate::catalogue::phone(p)?.sets());
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

/// Loads a scenario with `load` from `sets`, whose last entries are the
/// `--set` arguments `given`; an error a `--set` causes names it
/// ([`blamed`]).
fn blame_set(
    sets: &[(String, String)],
    given: &[String],
    load: impl Fn(&[(String, String)]) -> Result<Scenario>,
) -> Result<Scenario> {
    load(sets).map_err(|e| blamed(e, sets, given, load))
}

/// Error `e` of loading with `sets` (whose last entries are the `--set`
/// arguments `given`), naming the first `--set` after which `load`
/// fails when it succeeds without them: a bad value is then the
/// argument's fault, not the scenario file's.
fn blamed(
    e: anyhow::Error,
    sets: &[(String, String)],
    given: &[String],
    load: impl Fn(&[(String, String)]) -> Result<Scenario>,
) -> anyhow::Error {
    let first = sets.len().saturating_sub(given.len());
    if given.is_empty() || e.to_string().contains("--set") || load(&sets[..first]).is_err() {
        return e;
    }
    let Some(i) = (first..sets.len()).find(|&i| load(&sets[..=i]).is_err()) else {
        return e;
    };
    let value = &sets[i].1;
    let hint = if value.parse::<f64>().is_ok_and(|v| !v.is_finite()) {
        " (not a finite number)"
    } else {
        ""
    };
    e.context(format!(
        "--set {}{hint}: the workload loads without it",
        given[i - first]
    ))
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
    Ok(())
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
            return Err(crate::output::unusable(format!(
                "{flag} {}: this is the {what} the run reads; refusing to overwrite an input (choose another output file)",
                out.display()
            )));
        }
    }
    Ok(())
}

/// Opens the outputs of `list` (option, path if given) before any work,
/// refusing two that name one file ([`crate::output::open_all`]).
fn open_outputs<const N: usize>(list: [(&str, Option<&Path>); N]) -> Result<[Option<Output>; N]> {
    let v = crate::output::open_all(&list)?;
    Ok(v.try_into()
        .unwrap_or_else(|_| unreachable!("one output per option")))
}

/// True when the JSON report or the CSV table goes to standard output
/// (the summary table then stays off it).
fn to_stdout(a: &SimArgs, log: Option<&Path>) -> bool {
    [a.json.as_deref(), a.csv.as_deref(), log]
        .iter()
        .any(|p| *p == Some(Path::new("-")))
}

/// Loads the workload file of `run` or `compare`: an fio job file
/// (extension `.fio`, or detected from its content) translated into a
/// scenario on the default device, host and scheduler, or a scenario
/// TOML; `sets` apply to either.
pub(crate) fn load_workload(path: &Path, sets: &[(String, String)]) -> Result<Scenario> {
    match mmcsim::textfile::read_config(path) {
        Ok(t) => workload_from_text(path, t, sets),
        // Unreadable: the scenario loader says why.
        Err(_) => Ok(Scenario::load(path, sets)?),
    }
}

/// The workload of [`load_workload`] from its text `text`, read from
/// `path` (`-` for standard input, whose relative paths are resolved
/// against the current directory).
fn workload_from_text(path: &Path, text: String, sets: &[(String, String)]) -> Result<Scenario> {
    use mmcsim::workload::fio_job;
    let source = path.display().to_string();
    let base = match path.parent() {
        Some(p) if path != Path::new("-") => p.to_path_buf(),
        _ => std::path::PathBuf::new(),
    };
    if !fio_job::is_job_file(path, &text) {
        if path == Path::new("-") {
            return Ok(Scenario::from_toml(&text, &source, base, sets)?);
        }
        return Ok(Scenario::load(path, sets)?);
    }
    let name = path
        .file_stem()
        .map_or_else(|| source.clone(), |s| s.to_string_lossy().into_owned());
    let w = fio_job::parse(&text, &source, &name)?;
    Ok(Scenario::from_toml(
        &w.to_scenario_toml()?,
        &source,
        base,
        sets,
    )?)
}

/// How the jobs of `sc`, loaded from `path` (`text` when read from
/// standard input), are reported in fio's output: the job file's own
/// entries, or one per `[[jobs]]` entry of a scenario (refused when it has
/// none).
fn fio_report_jobs(
    path: &Path,
    text: Option<&str>,
    sc: &Scenario,
) -> Result<Vec<mmcsim::workload::fio_job::FioReportJob>> {
    use mmcsim::workload::fio_job;
    let text = match text {
        Some(t) => t.to_string(),
        None => mmcsim::textfile::read_config(path)?,
    };
    if fio_job::is_job_file(path, &text) {
        let w = fio_job::parse(&text, &path.display().to_string(), "")?;
        return Ok(w.report);
    }
    if sc.jobs.is_empty() {
        return Err(crate::output::unusable(format!(
            "--output-format json/json+: {} has no [[jobs]] to report as fio jobs",
            path.display()
        )));
    }
    Ok(crate::fio_out::report_jobs(&sc.jobs))
}

fn simulate(
    sc: Scenario,
    a: &RunArgs,
    scenario: &[&Path],
    fio: Option<Vec<mmcsim::workload::fio_job::FioReportJob>>,
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    refuse_overwriting_inputs(&sc, a, scenario)?;
    let power_cut = a
        .power_cut
        .as_deref()
        .map(|t| crate::crash::parse_time("--power-cut", t))
        .transpose()?;
    let specs = fio.as_ref().map(|_| sc.jobs.clone());
    // A trace read from standard input is named `-` in the report, not by
    // its temporary file.
    let stdin_trace = sc.name == "-" && sc.trace.is_some();
    let [json, csv, log, save_state] = open_outputs([
        ("--json", a.sim.json.as_deref()),
        ("--csv", a.sim.csv.as_deref()),
        ("--log", a.log.as_deref()),
        ("--save-state", a.save_state.as_deref()),
    ])?;
    let mut state_done = None;
    let sim = if let Some(p) = &a.load_state {
        let bytes = crate::input::read_state(p, &sc)?;
        // A state that does not fit the run is unusable input (exit 2).
        let device = PreparedDevice::load_state(&sc, &bytes, p)
            .map_err(|e| crate::output::unusable(format!("--load-state: {e}")))?;
        drop(bytes);
        Simulation::with_owned_device(sc, registry, device)?
    } else if let Some(o) = save_state {
        let device = PreparedDevice::new(&sc)?;
        // A replaced state file takes its content when the run succeeds.
        state_done = Some(o.write_pending(&device.save_state()?, out)?);
        Simulation::with_owned_device(sc, registry, device)?
    } else {
        Simulation::with_registry(sc, registry)?
    };
    let mut sim = sim;
    if fio.is_some() {
        sim.keep_thread_io();
    }

    // A replaced log takes its content only when the run succeeds: a
    // failed run leaves the file as it was.
    let (log, log_done) = match log {
        Some(o) => {
            let (w, done) = o.stream()?;
            (Some(w as Box<dyn Write>), Some(done))
        }
        None => (None, None),
    };
    let opts = RunOptions {
        log,
        allow_empty: a.allow_empty,
        check_integrity: a.check_integrity,
        strict: a.strict,
    };
    let mut report = match power_cut {
        Some(t) => sim.run_to_cut(opts, mmcsim::sim::PowerCut::At(t))?,
        None => sim.run(opts)?,
    };
    if stdin_trace {
        report.run.trace = Some("-".into());
        if let Some(t) = &mut report.trace {
            t.path = "-".into();
        }
    }
    for done in [log_done, state_done].into_iter().flatten() {
        done.commit()?;
    }
    if let Some(o) = json {
        o.write((report.to_json() + "\n").as_bytes(), out)?;
    }
    if let Some(o) = csv {
        crate::csv_out::write(o, &[(report.scheduler.name.as_str(), &report)], out)?;
    }
    if let (Some(jobs), Some(specs)) = (&fio, &specs) {
        let plus = a.output_format == crate::fio_out::OutputFormat::JsonPlus;
        write!(out, "{}", crate::fio_out::json(&report, jobs, specs, plus))?;
    } else if !a.sim.quiet && !to_stdout(&a.sim, a.log.as_deref()) {
        write!(out, "{}", report.to_table())?;
        if let Some(c) = &report.crash {
            write!(out, "{}", c.to_table())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `simctl plot`: the output opened first, then the inputs read (a bad
/// one is unusable input, exit code 2) and the figure drawn.
fn plot(
    inputs: &[std::path::PathBuf],
    kind: crate::plot::inputs::Kind,
    out: &Path,
    class: Option<&crate::plot::inputs::ClassFilter>,
) -> Result<ExitCode> {
    let [dest] = open_outputs([("--out", Some(out))])?;
    if kind == crate::plot::inputs::Kind::CrashSafety {
        if class.is_some() {
            return Err(crate::output::unusable(
                "--class selects a panel of the recorded-vs-simulated CDFs: it needs --kind cdf",
            ));
        }
        let figure =
            crate::plot::crash_safety::figure(inputs).map_err(crate::output::as_unusable)?;
        figure.write(dest.expect("opened"), out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let inputs = inputs
        .iter()
        .map(|p| crate::plot::inputs::load(p).map_err(crate::output::as_unusable))
        .collect::<Result<Vec<_>>>()?;
    // A class asked for that a report lacks is unusable input (exit 2).
    let figure = crate::plot::inputs::figure(kind, &inputs, class).map_err(|e| {
        if class.is_some() {
            crate::output::as_unusable(e)
        } else {
            e
        }
    })?;
    for o in &figure.omitted {
        eprintln!("note: {o}");
    }
    figure.write(dest.expect("opened"), out)?;
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
            if let Some(p) = &output {
                if std::fs::canonicalize(p)
                    .is_ok_and(|o| std::fs::canonicalize(&trace).is_ok_and(|i| i == o))
                {
                    return Err(crate::output::unusable(format!(
                        "--output {}: this is the trace being converted; refusing to overwrite an input (choose another output file)",
                        p.display()
                    )));
                }
            }
            // Standard output (no -o, or `-o -`) goes through `out`, whose
            // closed pipe ends the command quietly.
            let dest = output
                .as_deref()
                .map(|p| Output::open("--output", p).map(|o| (o, p)))
                .transpose()?
                .filter(|(o, _)| !o.is_stdout());
            let n = match dest {
                Some((o, p)) => convert_to(&trace, &read.open_options(), o, p)?,
                None => {
                    let n = tc::convert(&trace, &read.open_options(), out)?;
                    out.flush()?;
                    n
                }
            };
            eprintln!("converted {n} records");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `simctl check`; `flags` are (--allow-mismatch, --fail-on-improvement).
fn check(
    report: &Path,
    baseline: &Path,
    tolerances: &[String],
    (allow_mismatch, fail_on_improvement): (bool, bool),
    out: &mut Stdout,
) -> Result<ExitCode> {
    use crate::check::{parse_tolerance, table, Options, Status, Unusable};
    let run = || -> Result<crate::check::Outcome, Unusable> {
        let opts = Options {
            tolerances: tolerances
                .iter()
                .map(|a| parse_tolerance(a))
                .collect::<Result<Vec<_>, _>>()?,
            allow_mismatch,
        };
        crate::check::check(report, baseline, &opts)
    };
    let o = match run() {
        Err(Unusable(m)) => {
            eprintln!("error: {m}");
            return Ok(ExitCode::from(2));
        }
        Ok(o) => o,
    };
    for n in &o.notes {
        writeln!(out, "note: {n}")?;
    }
    let count = |s: Status| o.rows.iter().filter(|r| r.status == s).count();
    let (bad, better, n) = (
        count(Status::Regressed),
        count(Status::Improved),
        o.rows.len(),
    );
    if bad == 0 && better == 0 {
        writeln!(
            out,
            "check passed: {n} metrics within tolerance of {}",
            baseline.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    write!(out, "{}", table(&o.rows))?;
    if bad > 0 {
        writeln!(out, "check FAILED: {bad} of {n} metrics regressed")?;
    }
    if better > 0 && fail_on_improvement {
        writeln!(
            out,
            "check FAILED: {better} of {n} metrics improved beyond tolerance (--fail-on-improvement): update the baseline"
        )?;
    } else if better > 0 && bad == 0 {
        writeln!(
            out,
            "check passed: {better} of {n} metrics improved beyond tolerance (consider updating the baseline), the others within it"
        )?;
    }
    let failed = bad > 0 || (better > 0 && fail_on_improvement);
    Ok(ExitCode::from(u8::from(failed)))
}

/// Converts `trace` into output `o`, which takes the content only when
/// the whole trace converted; returns the records written.
fn convert_to(
    trace: &Path,
    opts: &mmcsim::workload::trace::OpenOptions,
    o: Output,
    p: &Path,
) -> Result<u64> {
    let writing = || format!("writing --output {}", p.display());
    let (mut w, done) = o.stream()?;
    let n = crate::trace_cmd::convert(trace, opts, &mut w).map_err(|e| match e {
        mmcsim::workload::trace::Error::Output { source } => {
            anyhow::Error::new(source).context(writing())
        }
        other => other.into(),
    })?;
    w.flush().with_context(writing)?;
    drop(w);
    done.commit()?;
    Ok(n)
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
