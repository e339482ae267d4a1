//! The subcommands.

use crate::cli::{Cli, Command, RunArgs};
use anyhow::{Context, Result};
use mmcsim::config::{parse_set, Scenario};
use mmcsim::sched::{Registry, SchedParams};
use mmcsim::sim::{RunOptions, Simulation};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub fn dispatch(cli: Cli, registry: &Registry) -> Result<ExitCode> {
    match cli.command {
        Command::Replay {
            trace,
            replay,
            common,
        } => {
            let mut sets = replay.sets();
            sets.extend(overrides(&common)?);
            let sc = Scenario::for_trace(&trace, &sets)?;
            simulate(sc, &common, registry)
        }
        Command::Run { scenario, common } => {
            let sets = overrides(&common)?;
            let sc = Scenario::load(&scenario, &sets)?;
            simulate(sc, &common, registry)
        }
        Command::Compare {
            workload,
            schedulers,
            plot,
            jobs,
            replay,
            common,
        } => {
            if common.log.is_some() {
                anyhow::bail!(
                    "--log is per run; use `simctl run` or `simctl replay` for a request log"
                );
            }
            let mut sets = if workload.extension().is_some_and(|e| e == "toml") {
                Vec::new()
            } else {
                replay.sets()
            };
            sets.extend(overrides(&common)?);
            let entries = crate::compare::parse_entries(&schedulers, registry)?;
            let c = crate::compare::run(&workload, &entries, &sets, registry, jobs)?;
            if let Some(p) = &common.json {
                write_out(p, &(serde_json::to_string_pretty(&c)? + "\n"))?;
            }
            if let Some(prefix) = &plot {
                crate::plot::write(&c, prefix)?;
            }
            if !common.quiet && common.json.as_deref() != Some(Path::new("-")) {
                print!("{}", crate::compare::table(&c));
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
        } => Ok(check(&report, &baseline, &tolerances)),
        Command::Trace(t) => trace(t),
        Command::Schedulers { hz, json } => schedulers(registry, hz, json),
    }
}

/// `--set` values plus the shorthand flags, in the order they apply.
fn overrides(a: &RunArgs) -> Result<Vec<(String, String)>> {
    let mut sets = Vec::new();
    if let Some(d) = &a.device {
        // Device paths on the command line are relative to the current
        // directory, not to the scenario file.
        let p = std::path::absolute(d).with_context(|| format!("--device {}", d.display()))?;
        sets.push(("device.profile".to_string(), p.display().to_string()));
    }
    if let Some(s) = &a.scheduler {
        sets.push(("scheduler.name".to_string(), s.clone()));
    }
    if let Some(seed) = a.seed {
        sets.push(("seed".to_string(), seed.to_string()));
    }
    for s in &a.set {
        sets.push(parse_set(s)?);
    }
    Ok(sets)
}

fn simulate(sc: Scenario, a: &RunArgs, registry: &Registry) -> Result<ExitCode> {
    let sim = Simulation::with_registry(sc, registry)?;
    let log: Option<Box<dyn Write>> = match &a.log {
        Some(p) => Some(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("--log {}", p.display()))?,
        ))),
        None => None,
    };
    let report = sim.run(RunOptions { log })?;
    if let Some(p) = &a.json {
        write_out(p, &(report.to_json() + "\n"))?;
    }
    if !a.quiet && a.json.as_deref() != Some(Path::new("-")) {
        print!("{}", report.to_table());
    }
    Ok(ExitCode::SUCCESS)
}

fn trace(t: crate::cli::TraceCommand) -> Result<ExitCode> {
    use crate::cli::{ReadArgs, TraceCommand};
    use crate::trace_cmd as tc;
    let opts = |r: &ReadArgs| {
        tc::options(
            r.format.as_deref(),
            r.time_unit.as_deref(),
            r.device_id,
            r.all_devices,
        )
    };
    match t {
        TraceCommand::Formats => print!("{}", tc::formats()),
        TraceCommand::Inspect { trace, read, json } => {
            let i = tc::inspect(&trace, &opts(&read)?)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&i)?);
            } else {
                print!("{}", tc::inspection_table(&i));
            }
        }
        TraceCommand::Convert {
            trace,
            to,
            output,
            read,
        } => {
            if to != "csv" {
                anyhow::bail!("--to {to}: only `csv` (the native CSV) is supported");
            }
            let o = opts(&read)?;
            let n = match &output {
                Some(p) => {
                    let mut f = std::io::BufWriter::new(
                        std::fs::File::create(p)
                            .with_context(|| format!("--output {}", p.display()))?,
                    );
                    let n = tc::convert(&trace, &o, &mut f)?;
                    f.flush()?;
                    n
                }
                None => {
                    let stdout = std::io::stdout();
                    let mut lock = std::io::BufWriter::new(stdout.lock());
                    let n = tc::convert(&trace, &o, &mut lock)?;
                    lock.flush()?;
                    n
                }
            };
            eprintln!("converted {n} records");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check(report: &Path, baseline: &Path, tolerances: &[String]) -> ExitCode {
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
            ExitCode::from(2)
        }
        Ok(rows) => {
            let bad = rows.iter().filter(|r| !r.ok).count();
            if bad == 0 {
                println!(
                    "check passed: {} metrics within tolerance of {}",
                    rows.len(),
                    baseline.display()
                );
                ExitCode::SUCCESS
            } else {
                print!("{}", table(&rows));
                println!("check FAILED: {bad} of {} metrics regressed", rows.len());
                ExitCode::from(1)
            }
        }
    }
}

fn write_out(p: &Path, text: &str) -> Result<()> {
    if p == Path::new("-") {
        std::io::stdout().write_all(text.as_bytes())?;
        return Ok(());
    }
    std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))
}

fn schedulers(registry: &Registry, hz: u32, json: bool) -> Result<ExitCode> {
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
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    for (name, desc, tunables) in &all {
        println!("{name}: {desc}");
        if tunables.is_empty() {
            println!("    (no tunables)");
        }
        for t in tunables {
            println!(
                "    {:<20} default {:>8} {:<10} {}",
                t.name, t.default, t.unit, t.help
            );
        }
    }
    println!("(defaults shown at HZ={hz}; set tunables with --set iosched.<name>=<value>)");
    Ok(ExitCode::SUCCESS)
}
