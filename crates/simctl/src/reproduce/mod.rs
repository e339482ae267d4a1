//! `simctl reproduce`: regenerate the seed papers' findings on each
//! profile over several seeds, each as a verdict with a 95 % confidence
//! interval, a figure (PNG + SVG), the data behind it (CSV), plus one
//! self-contained report page (`index.html`).
//!
//! Each finding is one module of [`findings`], implementing
//! [`finding::Finding`]: the runs it needs and how one seed's reports and
//! request logs become the quantities it judges ([`finding::Check`]).
//! Every comparison runs with seeds 1..=N (`--seeds`); [`verdict`] judges
//! the per-seed values. Findings 1-5 also run with the CPU clock pinned
//! (`host.governor=performance`) and are judged there, the free-clock
//! result beside them as the governor's contribution. The distinct runs
//! of every selected finding on every profile, seed and clock run once
//! each, in parallel, and are collected in a fixed order: the outputs are
//! byte-identical for any `--jobs`.

mod aggregate;
pub mod ensemble;
mod finding;
mod findings;
mod lhs;
mod page;
mod plan;
mod profile;
mod runner;
mod sensitivity;
mod sets;
pub(crate) mod single;
pub(crate) mod verdict;
mod verdicts_csv;

use crate::cli::ReproduceArgs;
use crate::output::Stdout;
use aggregate::{ClockResult, Verdict};
use anyhow::{Context, Result};
use finding::Finding;
use mmcsim::sched::Registry;
use plan::{ClockKind, Plan};
use profile::Profile;
use runner::RunOutput;
pub use single::finding_numbers;
use std::io::Write;
use std::process::ExitCode;
pub use verdict::Outcome;

/// A finding that did not run (on a profile, or at all), and why.
pub struct NotRun {
    number: u32,
    title: &'static str,
    /// The profile it skipped, when it ran on others.
    profile: Option<String>,
    reason: String,
}

/// Runs `simctl reproduce`: exit 0 when every verdict passes, 1 when one
/// fails or is unresolved, 2 on unusable input.
pub fn reproduce(a: &ReproduceArgs, registry: &Registry, out: &mut Stdout) -> Result<ExitCode> {
    if let Some(m) = a.ensemble {
        return ensemble::run(a, m, registry, out);
    }
    let plan = match plan::plan(a, registry) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    crate::output::create_dir("--out", &a.out)?;
    for n in &plan.not_run {
        match &n.profile {
            Some(p) => eprintln!("note: finding-{} not run on {p}: {}", n.number, n.reason),
            None => eprintln!("note: finding-{} not run: {}", n.number, n.reason),
        }
    }
    for note in &plan.set_notes {
        eprintln!("note: {note}");
    }
    let outputs = run_all(&plan, a.jobs, registry)?;
    let mut sections = Vec::new();
    let mut all_pass = true;
    for (k, f) in plan.findings.iter().enumerate() {
        let mut s = section(&plan, k, *f, &outputs, &a.out)?;
        if let (Some(sens), Some(probe)) = (f.sensitivity(), &plan.probes[k]) {
            s.sensitivity = Some(sensitivity::measure(
                *f,
                sens,
                probe,
                &plan.profiles,
                &outputs,
                &a.out,
            )?);
        }
        for v in &s.verdicts {
            writeln!(out, "{}", v.line)?;
            for l in &v.detail {
                writeln!(out, "  {l}")?;
            }
            all_pass &= v.outcome == Outcome::Pass;
        }
        if let Some(line) = s.sensitivity.as_ref().map(sensitivity::Outcome::line) {
            writeln!(out, "{line}")?;
        }
        sections.push(s);
    }
    let version = outputs
        .first()
        .and_then(|o| o.report["mmcsim_version"].as_str())
        .unwrap_or(env!("CARGO_PKG_VERSION"))
        .to_string();
    let html = page::render(&page::Page {
        version,
        command: command_line(a),
        seeds: plan.seeds,
        profiles: &plan.profiles,
        sections: &sections,
        not_run: &plan.not_run,
        set_notes: &plan.set_notes,
    });
    writeln!(out, "{}", prediction_summary(&sections))?;
    crate::output::write_file(
        &a.out.join("verdicts.csv"),
        &verdicts_csv::render(&sections)?,
    )?;
    let index = a.out.join("index.html");
    crate::output::write_file(&index, html.as_bytes())?;
    writeln!(out, "report page: {}", index.display())?;
    Ok(if all_pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `N of M predictions reproduced`, then the fitted verdicts apart: only
/// predictions count as reproduction.
fn prediction_summary(sections: &[Section]) -> String {
    let all: Vec<&Verdict> = sections.iter().flat_map(|s| &s.verdicts).collect();
    let count = |label: finding::Label| {
        let of: Vec<&&Verdict> = all.iter().filter(|v| v.label == label).collect();
        let pass = of.iter().filter(|v| v.outcome == Outcome::Pass).count();
        (pass, of.len())
    };
    let (p, m) = count(finding::Label::Predicted);
    let (fp, fm) = count(finding::Label::Fitted);
    let fitted = if fm == 0 {
        "no fitted verdicts".to_string()
    } else {
        format!("{fp} of {fm} fitted verdicts pass (not counted: the profile was fitted to them)")
    };
    format!("{p} of {m} predictions reproduced; {fitted}")
}

/// Runs every distinct job of the plan, in parallel, jobs on the same
/// preconditioned device (profile and seed) starting from one copy of it;
/// collected in job order.
fn run_all(plan: &Plan, jobs: Option<usize>, registry: &Registry) -> Result<Vec<RunOutput>> {
    let bar = crate::compare::progress_bar(plan.jobs.len() as u64);
    let items = plan
        .jobs
        .iter()
        .zip(plan.scenarios.clone())
        .map(|(job, sc)| (sc, &job.spec, plan.profiles[job.profile].name.as_str()))
        .collect();
    let outputs = runner::run_all(items, jobs, registry, || bar.inc(1));
    bar.finish_and_clear();
    outputs
}

/// The command line that reproduces the outputs (`--jobs` left out: it
/// changes nothing in them).
fn command_line(a: &ReproduceArgs) -> String {
    let mut c = vec!["simctl".to_string(), "reproduce".to_string()];
    c.extend(a.findings.iter().cloned());
    for p in &a.phones {
        c.push(format!("--phone {p}"));
    }
    for s in &a.set {
        c.push(format!("--set {s}"));
    }
    c.push(format!("--seeds {}", a.seeds));
    c.push(format!("--out {}", a.out.display()));
    if a.configs != std::path::Path::new("configs") {
        c.push(format!("--configs {}", a.configs.display()));
    }
    c.join(" ")
}

/// A finding's outcome over every profile, as written and shown.
pub struct Section {
    number: u32,
    title: &'static str,
    source: &'static str,
    claim: &'static str,
    /// Where the paper measured (and the verdict is judged).
    boundary: finding::Boundary,
    note: Option<&'static str>,
    /// Why the verdict is the pinned clock's, when it is.
    pinned: Option<&'static str>,
    /// One verdict per profile and label.
    verdicts: Vec<Verdict>,
    /// Per profile, the results at each clock (the verdict's first).
    results: Vec<(String, Vec<ClockResult>)>,
    /// `(profile, run description, parameters)` of every run used.
    runs: Vec<(String, String, String)>,
    svg: String,
    omitted: Vec<String>,
    /// The sensitivity probe's outcome, when one ran or was skipped.
    sensitivity: Option<sensitivity::Outcome>,
}

/// The file system a run's report says it ran on: `fuse over ext4 (N
/// daemon threads)`, `vfat`, `ext4`, or `none (raw file)`.
fn file_system(rep: &serde_json::Value) -> String {
    let fs = &rep["fs"];
    if let Some(fuse) = fs.get("fuse") {
        return format!(
            "fuse over {} ({} daemon threads)",
            fuse["lower"].as_str().unwrap_or("?"),
            fuse["daemon_threads"]
        );
    }
    fs["config"]["type"]
        .as_str()
        .unwrap_or("none (raw file)")
        .to_string()
}

/// One run as the page lists it: its scenario and settings, and the
/// parameters its report echoes.
fn run_row(p: &Profile, r: &RunOutput, user_sets: &[(String, String)]) -> (String, String, String) {
    let rep = &r.report;
    let sets: Vec<String> = user_sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let extra = if sets.is_empty() {
        String::new()
    } else {
        format!(" (then --set {})", sets.join(" "))
    };
    (
        p.name.clone(),
        format!("{}{extra}", r.run),
        format!(
            "device {}, host {}, governor {}, file system {}, scheduler {}, seed {}",
            rep["device_profile"]["name"].as_str().unwrap_or("?"),
            rep["host"]["profile"].as_str().unwrap_or("static model"),
            rep["host"]["governor"].as_str().unwrap_or("fixed clock"),
            file_system(rep),
            rep["scheduler"]["name"].as_str().unwrap_or("?"),
            rep["run"]["seed"]
        ),
    )
}

/// Measures finding `k` of the plan on every profile, seed and clock,
/// judges it and writes finding-N.{png,svg,csv}.
fn section(
    plan: &Plan,
    k: usize,
    f: &dyn Finding,
    outputs: &[RunOutput],
    dir: &std::path::Path,
) -> Result<Section> {
    let n = f.about().number;
    let mut results = Vec::new();
    let mut verdicts = Vec::new();
    let mut runs = Vec::new();
    for use_ in &plan.uses[k] {
        let p = &plan.profiles[use_.profile];
        let mut clocks = Vec::new();
        for c in &use_.clocks {
            let mut measures = Vec::new();
            for (s, idx) in c.seeds.iter().enumerate() {
                let rs: Vec<&RunOutput> = idx.iter().map(|&i| &outputs[i]).collect();
                let mut m = f.measure(&rs).with_context(|| {
                    format!(
                        "finding-{n} on {}, seed {}, clock {}",
                        p.name,
                        s + 1,
                        c.clock.key()
                    )
                })?;
                m.checks = m
                    .checks
                    .into_iter()
                    .map(|c| c.labelled(n, &p.fit_targets))
                    .collect();
                runs.extend(rs.iter().map(|r| run_row(p, r, &plan.user_sets)));
                measures.push(m);
            }
            clocks.push(aggregate::combine(c.clock, &measures));
        }
        verdicts.extend(aggregate::verdicts(n, &p.name, &clocks));
        results.push((p.name.clone(), clocks));
    }
    let (svg, omitted) = write_outputs(f, &results, plan.seeds, dir)?;
    Ok(Section {
        number: n,
        title: f.about().title,
        source: f.about().source,
        claim: f.about().claim,
        boundary: f.about().boundary,
        note: f.note(),
        pinned: f.pinned_verdict(),
        verdicts,
        results,
        runs,
        svg,
        omitted,
        sensitivity: None,
    })
}

/// Writes finding-N.{png,svg,csv} from the combined results; returns the
/// SVG and the panels left out.
fn write_outputs(
    f: &dyn Finding,
    results: &[(String, Vec<ClockResult>)],
    seeds: u32,
    dir: &std::path::Path,
) -> Result<(String, Vec<String>)> {
    let n = f.about().number;
    let mut panels = Vec::new();
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["profile", "clock", "seed"];
    header.extend_from_slice(f.about().csv_header);
    csv.write_record(&header)?;
    for (p, clocks) in results {
        for c in clocks {
            for mut panel in c.panels.clone() {
                let title = match &mut panel {
                    crate::plot::Panel::Bars(b) => &mut b.title,
                    crate::plot::Panel::Xy(x) => &mut x.title,
                };
                *title = format!("{p}, {}: {title}", c.clock.short());
                panels.push(panel);
            }
            for (seed, rows) in c.csv.iter().enumerate() {
                let seed = (seed + 1).to_string();
                for row in rows {
                    let lead = [p.as_str(), c.clock.key(), seed.as_str()];
                    csv.write_record(lead.into_iter().chain(row.iter().map(String::as_str)))?;
                }
            }
        }
    }
    let title = format!(
        "Finding {n}: {} ({seeds} seed{}; error bars: 95 % intervals)",
        f.about().title,
        if seeds == 1 { "" } else { "s" }
    );
    let mut figure = crate::plot::Figure::new(title, panels)?;
    if figure.cuts_at_zero() {
        // The mean of a non-negative amount cannot be negative: the
        // interval is cut at zero (open end), which keeps its coverage.
        figure.title = figure.title.replace(
            "95 % intervals)",
            "95 % intervals, cut at 0 where they reach below it)",
        );
    }
    let prefix = dir.join(format!("finding-{n}"));
    let svg = figure.write_both_at(&prefix)?;
    let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::output::write_file(&prefix.with_extension("csv"), &bytes)?;
    Ok((svg, figure.omitted.clone()))
}

impl ClockKind {
    /// The clock as a CSV cell: `pinned`, `free` or `fixed`.
    pub fn key(self) -> &'static str {
        match self {
            ClockKind::Pinned => "pinned",
            ClockKind::Free => "free",
            ClockKind::Fixed => "fixed",
        }
    }

    /// The clock as a figure's panel title names it.
    pub fn short(self) -> &'static str {
        match self {
            ClockKind::Pinned => "clock pinned",
            ClockKind::Free => "governor free",
            ClockKind::Fixed => "fixed clock",
        }
    }

    /// The clock in a sentence.
    pub fn describe(self) -> &'static str {
        match self {
            ClockKind::Pinned => "clock pinned (host.governor=performance: the highest frequency throughout)",
            ClockKind::Free => "governor free (the profile's own governor, as configured)",
            ClockKind::Fixed => "fixed clock (static host model: the clock cannot move, so pinned and free are the same runs)",
        }
    }
}
