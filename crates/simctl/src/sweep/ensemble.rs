//! An ensemble grid: a sweep file whose `[ensemble]` table names a
//! `reproduce --ensemble` run, so that large ensembles go through `sweep
//! --shard I/N` and `sweep --slurm` like any grid and `simctl merge` puts
//! them together.
//!
//! ```toml
//! [ensemble]
//! phones   = ["nexus-s"]        # names (configs/phones/) or phone files
//! members  = 32                 # configurations per phone (--ensemble M)
//! seeds    = 1                  # seeds per comparison (--seeds; default 5)
//! findings = [1, 3]             # optional: every finding
//! sets     = ["queue.read_ahead_kb=0"]   # optional: --set pairs
//! configs  = "../configs"       # optional: the nearest configs/ above the grid
//!
//! [slurm]                       # optional, as in any grid
//! time = "02:00:00"
//! ```
//!
//! The run is `reproduce`'s own ([`crate::reproduce::ensemble`]): the
//! same sample, the same rows, the same `ensemble.csv`, `ensemble.json`
//! and page, so `sweep GRID --shard I/N` + `merge` gives exactly what
//! `reproduce --ensemble M` gives unsharded. A shard is a slice of the
//! configurations (index over the phones, mod N), as `reproduce --shard`.
//! Paths are relative to the grid file's folder.

use super::SweepArgs;
use crate::cli::ReproduceArgs;
use crate::output::unusable;
use anyhow::{Context, Result};
use mmcsim::sched::Registry;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// An ensemble grid file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    ensemble: Table,
    /// `#SBATCH` options for `--slurm`.
    #[serde(default)]
    slurm: Option<toml::Table>,
}

/// The `[ensemble]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    /// Phones, by name or file.
    phones: Vec<String>,
    /// Configurations per phone (`--ensemble M`).
    members: usize,
    /// Seeds per comparison (`--seeds N`).
    #[serde(default = "default_seeds")]
    seeds: u32,
    /// Findings, as numbers or `finding-N`; empty: all.
    #[serde(default)]
    findings: Vec<toml::Value>,
    /// `KEY=VALUE` overrides of every run.
    #[serde(default)]
    sets: Vec<String>,
    /// The folder of scenarios/, devices/, hosts/ and phones/.
    #[serde(default)]
    configs: Option<PathBuf>,
}

/// `reproduce`'s default number of seeds.
fn default_seeds() -> u32 {
    5
}

/// A loaded ensemble grid.
pub struct EnsembleGrid {
    /// The `reproduce --ensemble` arguments it stands for (without
    /// `--out`, `--jobs` and `--shard`, which the sweep gives).
    args: ReproduceArgs,
    /// Configurations per phone.
    members: usize,
    /// `#SBATCH` options of its `[slurm]` table.
    slurm: Vec<super::slurm::SbatchOpt>,
}

/// The grid at `path` as an ensemble grid, or `None` when it has no
/// `[ensemble]` table (an ordinary grid). Errors name the file.
pub fn load(path: &Path) -> Result<Option<EnsembleGrid>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading grid {}", path.display()))?;
    let Ok(tree) = toml::from_str::<toml::Table>(&text) else {
        return Ok(None); // the ordinary grid parser names the error
    };
    if !tree.contains_key("ensemble") {
        return Ok(None);
    }
    let bad = |what: String| unusable(format!("{}: {what}", path.display()));
    let file: File = toml::from_str(&text).map_err(|e| {
        bad(format!(
            "{} (an ensemble grid has an [ensemble] table and optionally [slurm]; nothing else)",
            e.to_string().trim_end()
        ))
    })?;
    let t = file.ensemble;
    let folder = path.parent().unwrap_or(Path::new(""));
    let findings = t
        .findings
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            toml::Value::Integer(n) => Ok(n.to_string()),
            toml::Value::String(s) => Ok(s.clone()),
            other => Err(bad(format!(
                "[ensemble] findings[{i}] = {other}: expected a finding number or \"finding-N\""
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    let phones = t
        .phones
        .iter()
        .map(|p| {
            if p.ends_with(".toml") || p.contains('/') {
                folder.join(p).display().to_string()
            } else {
                p.clone()
            }
        })
        .collect();
    let configs = match t.configs {
        Some(c) => folder.join(c),
        None => nearest_configs(folder),
    };
    let slurm = match &file.slurm {
        Some(s) => super::slurm::from_table(s).map_err(|e| bad(format!("[slurm]: {e}")))?,
        None => Vec::new(),
    };
    Ok(Some(EnsembleGrid {
        args: ReproduceArgs {
            findings,
            phones,
            set: t.sets,
            seeds: t.seeds,
            out: PathBuf::new(),
            jobs: None,
            configs,
            ensemble: Some(t.members),
            shard: None,
        },
        members: t.members,
        slurm,
    }))
}

/// `configs/` in `folder` or the nearest of its parents that has one;
/// `configs` (the working directory's, as `reproduce`) when none has.
fn nearest_configs(folder: &Path) -> PathBuf {
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    folder
        .ancestors()
        .map(|d| d.join("configs"))
        .find(|d| d.join("phones").is_dir())
        .unwrap_or_else(|| PathBuf::from("configs"))
}

/// Runs `simctl sweep` on an ensemble grid: the configurations of this
/// shard (all without `--shard`) into `--out`, or, with `--slurm`, the
/// job-array and merge scripts.
pub fn sweep(a: &SweepArgs, e: &EnsembleGrid, registry: &Registry) -> Result<ExitCode> {
    let mut args = ReproduceArgs {
        out: a.out.clone(),
        jobs: a.jobs,
        shard: a.shard.map(|s| s.to_string()),
        ..e.args.clone()
    };
    if a.slurm {
        if a.shard.is_some() {
            return Err(unusable(
                "--slurm writes a script that runs every shard; leave out --shard",
            ));
        }
        args.shard = None;
        let count = crate::reproduce::ensemble::configurations(&args, e.members)
            .map_err(crate::output::as_unusable)?;
        let n = a.shards.unwrap_or(count.min(16)).clamp(1, count.max(1));
        let opts = super::slurm::merged(&e.slurm, &a.sbatch_opts);
        let cpus =
            super::slurm::cpus_per_task(a.jobs, &opts).map_err(crate::output::as_unusable)?;
        let plan = super::slurm::write(&a.grid, &a.out, n, cpus, &opts, count)?;
        print!("{plan}");
        return Ok(ExitCode::SUCCESS);
    }
    if !a.sbatch_opts.is_empty() || a.shards.is_some() {
        return Err(unusable(
            "--sbatch-opt and --shards belong to --slurm; give --slurm too",
        ));
    }
    let mut out = crate::output::Stdout::new();
    crate::reproduce::reproduce(&args, registry, &mut out)
}
