//! `simctl crash`: power cuts over a workload, and `--power-cut` parsing.

use crate::cli::SimArgs;
use crate::output::Stdout;
use anyhow::Result;
use mmcsim::sched::Registry;
use mmcsim::sim::crash::{crash_campaign, CutPlan};
use mmcsim::sim::PowerCut;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Parses a simulated instant with its unit (`250ms`, `1.5s`, `800us`,
/// `1000ns`; `0` alone is accepted) into ns; `flag` names the option in
/// the error.
pub fn parse_time(flag: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        crate::output::unusable(format!(
            "{flag} {text}: expected a non-negative time with a unit (ns, us, ms or s), e.g. 250ms or 1.5s"
        ))
    };
    if t == "0" {
        return Ok(0);
    }
    let (num, scale) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(u, f)| t.strip_suffix(u).map(|n| (n, *f)))
        .ok_or_else(bad)?;
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let ns = v * scale;
    if !(ns.is_finite() && (0.0..1.8e19).contains(&ns)) {
        return Err(bad());
    }
    Ok(ns.round() as u64)
}

/// The cut plan of the command line: one cut (`--at`, `--at-event`) or
/// `cuts` seeded ones.
pub fn plan(cuts: u64, at: Option<&str>, at_event: Option<u64>, sim: &SimArgs) -> Result<CutPlan> {
    if sim.csv.is_some() {
        return Err(crate::output::unusable(
            "--csv: simctl crash writes its report as JSON (--json) and a text summary; it has no CSV table",
        ));
    }
    Ok(match (at, at_event) {
        (Some(t), _) => CutPlan::One(PowerCut::At(parse_time("--at", t)?)),
        (None, Some(k)) => CutPlan::One(PowerCut::AfterEvent(k)),
        (None, None) => CutPlan::Seeded { cuts, seed: 0 },
    })
}

/// The JSON of `simctl crash`.
#[derive(Serialize)]
struct CrashJson<'a> {
    schema: &'static str,
    workload: String,
    seed: u64,
    device: &'a str,
    /// The uncut run's speed.
    speed: Speed,
    crash: &'a mmcsim::sim::CrashReport,
}

/// The uncut run's speed.
#[derive(Serialize)]
struct Speed {
    iops: f64,
    mb_per_s: f64,
    mean_latency_us: f64,
    simulated_s: f64,
    /// SQLite transactions per second of statement wall time over every
    /// measured operation (absent without `[[sqlite_jobs]]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    sqlite_tps: Option<f64>,
}

/// Measured SQLite transactions per second of statement time, over every
/// operation of the report's `sqlite` section.
pub fn sqlite_tps(r: &mmcsim::sim::Report) -> Option<f64> {
    let p = &r.sqlite.as_ref()?.per_transaction;
    let ops = [
        Some(&p.insert),
        Some(&p.update),
        Some(&p.delete),
        p.select.as_ref(),
    ];
    tps_over(ops.into_iter().flatten().map(|o| (o.transactions, o.tps)))
}

/// Transactions per second over operations given as (transactions, their
/// transactions per second): every transaction over the statement time of
/// all (`None` when no operation ran).
pub fn tps_over(ops: impl IntoIterator<Item = (u64, f64)>) -> Option<f64> {
    let (mut n, mut secs) = (0.0, 0.0);
    for (t, tps) in ops.into_iter().filter(|o| o.1 > 0.0) {
        n += t as f64;
        secs += t as f64 / tps;
    }
    (secs > 0.0).then(|| n / secs)
}

/// `simctl crash`.
pub fn crash(
    workload: &Path,
    plan: CutPlan,
    sim: &SimArgs,
    registry: &Registry,
    out: &mut Stdout,
) -> Result<ExitCode> {
    let workload = crate::catalogue::workload(workload)?;
    let sets = crate::commands::overrides(sim, None)?;
    let sc = crate::commands::workload_scenario(&workload, &sets)?;
    let [json] = crate::output::open_all(&[("--json", sim.json.as_deref())])?
        .try_into()
        .unwrap_or_else(|_| unreachable!("one output"));
    let plan = match plan {
        CutPlan::Seeded { cuts, .. } => CutPlan::Seeded {
            cuts,
            seed: sc.seed,
        },
        p => p,
    };
    let quiet = sim.quiet || sim.json.as_deref() == Some(Path::new("-"));
    let c = crash_campaign(&sc, registry, plan, |done, total| {
        if !quiet && total > 1 && (done % 10 == 0 || done == total) {
            eprint!("\rcuts {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    })?;
    let w = &c.full.workload;
    let j = CrashJson {
        schema: "mmcsim-crash/1",
        workload: workload.display().to_string(),
        seed: sc.seed,
        device: &c.full.device_profile.name,
        speed: Speed {
            iops: w.throughput.iops,
            mb_per_s: w.throughput.mb_per_s,
            mean_latency_us: w.latency_us.mean,
            simulated_s: w.simulated_time_s,
            sqlite_tps: sqlite_tps(&c.full),
        },
        crash: &c.crash,
    };
    if let Some(o) = json {
        o.write((serde_json::to_string_pretty(&j)? + "\n").as_bytes(), out)?;
    }
    if !quiet {
        let tps = j
            .speed
            .sqlite_tps
            .map_or(String::new(), |t| format!(", SQLite {t:.1} TPS"));
        writeln!(
            out,
            "mmcsim crash | {} | device {} | seed {} | uncut: {:.1} IOPS, {:.2} MB/s, mean {:.1} µs{tps}",
            j.workload, j.device, j.seed, j.speed.iops, j.speed.mb_per_s, j.speed.mean_latency_us
        )?;
        write!(out, "{}", c.crash.to_table())?;
    }
    Ok(ExitCode::SUCCESS)
}
