//! `simctl reproduce --ensemble M`: the findings over each phone's
//! plausible configurations (issue 27, item 3).
//!
//! Each selected phone's `[uncertain]` entries are sampled at `M` points
//! ([`sample`]); every selected finding runs in every configuration at its
//! verdict's clock (pinned when the phone's governor moves the clock),
//! seeds 1..=N. A configuration passes a finding when every check of it
//! lies on the paper's side: over N ≥ 2 seeds, the 95 % interval; with
//! one seed, the value. The rows ([`table`]) give the fraction per finding
//! and the consistent region ([`summary`]); on the Moto G, finding 7's
//! runs also give the fitted members and SQLite predictions ([`motog`]).
//!
//! Splitting: `--shard I/N` runs the configurations whose index (over the
//! phones, in order) mod N is I-1 and writes its rows; `simctl merge`
//! combines shard directories into exactly the unsharded outputs. All
//! outputs are computed from the rows, so `--jobs`, sharding and merging
//! change no byte.

mod motog;
mod page;
mod sample;
mod summary;
mod table;

use super::finding::Finding;
use super::plan::{self, Plan};
use super::profile::{self, Profile};
use super::runner::RunOutput;
use super::verdict::{judge, Interval, Outcome, Side};
use crate::cli::ReproduceArgs;
use crate::output::Stdout;
use crate::sweep::shard::Shard;
use anyhow::{bail, Context, Result};
use mmcsim::sched::Registry;
use sample::Member;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use table::{KeyInfo, Manifest, MotoRow, PhoneKeys, Row};

/// What was sampled: the phones and their configurations (this shard's).
struct Ensemble {
    manifest: Manifest,
    phones: Vec<Profile>,
    members: Vec<Member>,
}

/// The phones with `[uncertain]` entries and this shard's configurations;
/// every error is unusable input.
fn sample(a: &ReproduceArgs, m: usize) -> Result<Ensemble> {
    if m == 0 {
        bail!("--ensemble 0: expected at least 1 configuration");
    }
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let all = profile::resolve(&a.phones, &a.configs.join("phones")).map_err(anyhow::Error::msg)?;
    let (phones, skipped): (Vec<Profile>, Vec<Profile>) =
        all.into_iter().partition(|p| !p.uncertain.is_empty());
    for p in &skipped {
        eprintln!("note: {} has no [uncertain] entries: not sampled", p.name);
    }
    if phones.is_empty() {
        bail!("--ensemble: none of the profiles selected declares [uncertain] entries; select a phone, e.g. --phone nexus-s");
    }
    let members: Vec<Member> = phones
        .iter()
        .enumerate()
        .flat_map(|(i, p)| sample::members(i, p, m))
        .enumerate()
        .filter(|(g, _)| shard.is_none_or(|s| s.owns(*g)))
        .map(|(_, mem)| mem)
        .collect();
    let manifest = Manifest {
        ensemble: m,
        seeds: a.seeds,
        findings: Vec::new(),
        phones: phones
            .iter()
            .map(|p| PhoneKeys {
                name: p.name.clone(),
                lhs_seed: sample::lhs_seed(&p.name),
                keys: p
                    .uncertain
                    .iter()
                    .map(|u| KeyInfo {
                        key: u.key.clone(),
                        range: matches!(u.spread, mmcsim::config::uncertain::Spread::Range { .. }),
                        spread: u.describe(),
                        reason: u.reason.clone(),
                    })
                    .collect(),
            })
            .collect(),
        sets: a.set.clone(),
        shard: shard.map(|s| s.to_string()),
    };
    Ok(Ensemble {
        manifest,
        phones,
        members,
    })
}

/// The number of configurations `reproduce --ensemble m` with `a` samples
/// over every phone (shards left aside): what `sweep --slurm` splits.
pub fn configurations(a: &ReproduceArgs, m: usize) -> Result<usize> {
    let whole = ReproduceArgs {
        shard: None,
        ..a.clone()
    };
    Ok(sample(&whole, m)?.members.len())
}

/// The outcome of finding `f` from its runs at the verdict's clock: the
/// worst over its checks, with the number on the paper's side.
fn judge_member(f: &dyn Finding, seeds: &[Vec<&RunOutput>]) -> Result<(Outcome, usize, usize)> {
    let mut per_check: Vec<(Side, Vec<f64>)> = Vec::new();
    for rs in seeds {
        let m = f.measure(rs)?;
        for (j, c) in m.checks.iter().enumerate() {
            if per_check.len() <= j {
                per_check.push((c.side, Vec::new()));
            }
            per_check[j].1.push(c.value);
        }
    }
    let outcomes: Vec<Outcome> = per_check
        .iter()
        .map(|(side, v)| {
            let i = if v.len() == 1 {
                // One seed: the value's side (no interval to judge).
                Interval {
                    mean: v[0],
                    lo: v[0],
                    hi: v[0],
                    n: 1,
                }
            } else {
                Interval::of(v)
            };
            judge(*side, &i)
        })
        .collect();
    let worst = outcomes
        .iter()
        .copied()
        .max()
        .unwrap_or(Outcome::Unresolved);
    let passed = outcomes.iter().filter(|o| **o == Outcome::Pass).count();
    Ok((worst, passed, outcomes.len()))
}

/// The rows (and Moto G protocol rows) of a planned, run ensemble.
fn rows_of(e: &Ensemble, plan: &Plan, outputs: &[RunOutput]) -> Result<(Vec<Row>, Vec<MotoRow>)> {
    let (mut rows, mut moto) = (Vec::new(), Vec::new());
    for (k, f) in plan.findings.iter().enumerate() {
        for use_ in &plan.uses[k] {
            let mem = &e.members[use_.profile];
            let phone = &e.phones[mem.phone];
            let clock = &use_.clocks[0];
            let seeds: Vec<Vec<&RunOutput>> = clock
                .seeds
                .iter()
                .map(|idx| idx.iter().map(|&i| &outputs[i]).collect())
                .collect();
            let n = f.about().number;
            let (outcome, passed, checks) = judge_member(*f, &seeds).unwrap_or_else(|err| {
                eprintln!(
                    "note: finding-{n} on {} configuration {}: {err:#}",
                    phone.name, mem.configuration
                );
                (Outcome::Unresolved, 0, 0)
            });
            if n == motog::FINDING && phone.name == motog::PHONE {
                let all: Vec<&RunOutput> = seeds.iter().flatten().copied().collect();
                moto.push(MotoRow {
                    configuration: mem.configuration,
                    metrics: motog::metrics_of(&all),
                });
            }
            rows.push(Row {
                phone: phone.name.clone(),
                configuration: mem.configuration,
                finding: n,
                outcome,
                passed,
                checks,
                values: phone
                    .uncertain
                    .iter()
                    .map(|u| u.key.clone())
                    .zip(mem.values.iter().cloned())
                    .collect(),
            });
        }
    }
    Ok((rows, moto))
}

/// Runs `simctl reproduce --ensemble M`.
pub fn run(a: &ReproduceArgs, m: usize, registry: &Registry, out: &mut Stdout) -> Result<ExitCode> {
    let planned = sample(a, m).and_then(|mut e| {
        let profiles = e
            .members
            .iter()
            .map(|mem| e.phones[mem.phone].with_sets(&mem.sets))
            .collect();
        let plan = plan::plan_for(a, registry, profiles, true)?;
        e.manifest.findings = plan.findings.iter().map(|f| f.about().number).collect();
        Ok((e, plan))
    });
    let (e, plan) = match planned {
        Ok(x) => x,
        Err(err) => {
            eprintln!("error: {err:#}");
            return Ok(ExitCode::from(2));
        }
    };
    crate::output::create_dir("--out", &a.out)?;
    for n in &plan.not_run {
        eprintln!("note: finding-{} not run: {}", n.number, n.reason);
    }
    for note in &plan.set_notes {
        eprintln!("note: {note}");
    }
    let outputs = super::run_all(&plan, a.jobs, registry)?;
    let (mut rows, mut moto) = rows_of(&e, &plan, &outputs)?;
    table::sort_rows(&e.manifest, &mut rows);
    moto.sort_by_key(|r| r.configuration);
    write_all(&e.manifest, &rows, &moto, &a.out, out)
}

/// Writes the manifest, the rows and the page into `dir`, and prints the
/// summary; exit 1 when a phone has no consistent configuration (a
/// shard's exit says nothing: the merge judges).
fn write_all(
    m: &Manifest,
    rows: &[Row],
    moto: &[MotoRow],
    dir: &Path,
    out: &mut Stdout,
) -> Result<ExitCode> {
    m.write(dir)?;
    table::write_rows(m, rows, dir)?;
    let protocol = (!moto.is_empty()).then(|| motog::judge(moto));
    if !moto.is_empty() {
        table::write_motog(moto, &motog::keys(), dir)?;
    }
    let summaries = summary::summarize(m, rows);
    for s in &summaries {
        for l in summary::lines(m, s) {
            writeln!(out, "{l}")?;
        }
    }
    if let Some(p) = &protocol {
        for l in motog::lines(p) {
            writeln!(out, "{l}")?;
        }
    }
    let index = dir.join("index.html");
    crate::output::write_file(
        &index,
        page::render(m, &summaries, protocol.as_ref()).as_bytes(),
    )?;
    writeln!(out, "ensemble rows: {}", dir.join(table::ROWS).display())?;
    writeln!(out, "report page: {}", index.display())?;
    let consistent = summaries.iter().all(|s| !s.consistent.is_empty());
    Ok(if consistent || m.shard.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether `dir` holds an ensemble's output (for `simctl merge`).
pub fn is_ensemble_dir(dir: &Path) -> bool {
    dir.join(table::MANIFEST).is_file()
}

/// `simctl merge` of `reproduce --ensemble --shard` directories: every
/// shard of one ensemble exactly once, combined into the unsharded
/// outputs.
pub fn merge(inputs: &[PathBuf], dir: &Path, out: &mut Stdout) -> Result<ExitCode> {
    let mut first: Option<Manifest> = None;
    let mut seen: Vec<Shard> = Vec::new();
    let (mut rows, mut moto) = (Vec::new(), Vec::new());
    for d in inputs {
        let mut m = Manifest::read(d)?;
        let shard = m
            .shard
            .take()
            .with_context(|| {
                format!(
                    "{}: a complete ensemble, not a shard: nothing to merge",
                    d.display()
                )
            })
            .and_then(|s| Shard::parse(&s))?;
        match &first {
            Some(f) if *f != m => bail!(
                "{}: another ensemble than {} (ensemble.json differs)",
                d.display(),
                inputs[0].display()
            ),
            Some(_) => {}
            None => first = Some(m.clone()),
        }
        if seen.contains(&shard) {
            bail!("{}: shard {shard} is given twice", d.display());
        }
        if seen.first().is_some_and(|s| s.count != shard.count) {
            bail!(
                "{}: shard {shard} is of another split than {}",
                d.display(),
                seen[0]
            );
        }
        seen.push(shard);
        rows.extend(table::read_rows(&m, d)?);
        moto.extend(table::read_motog(d)?);
    }
    let m = first.context("merge: no input")?;
    let count = seen[0].count;
    if let Some(missing) = (1..=count).find(|i| !seen.iter().any(|s| s.index == *i)) {
        bail!("merge: shard {missing}/{count} is missing");
    }
    crate::output::create_dir("--out", dir)?;
    table::sort_rows(&m, &mut rows);
    moto.sort_by_key(|r: &MotoRow| r.configuration);
    write_all(&m, &rows, &moto, dir, out)
}
