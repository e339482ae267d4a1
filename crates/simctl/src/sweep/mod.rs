//! `simctl sweep` and `simctl merge`: a parameter grid run on every core,
//! sliced across machines, and put back together bit for bit.
//!
//! A grid file ([`grid`]) names schedulers, workloads, device profiles,
//! seeds and `--set` variants; their cartesian product is the list of
//! cells ([`cell`]), each with a stable id. `sweep` runs the cells in
//! parallel, writes one report per cell and a tidy CSV ([`layout`]),
//! skips cells a previous (interrupted) run finished, and reuses
//! preconditioned devices across cells that share them ([`run`]).
//! `--shard I/N` runs a deterministic slice ([`shard`]); `merge` combines
//! shard directories into exactly the unsharded layout ([`merge`]);
//! `--slurm` writes a job-array batch script for a cluster ([`slurm`]).
//! A grid with a `[crash]` table cuts the power in every cell ([`crash`]).
//!
//! Determinism: a cell's report depends only on the cell, and the CSV is
//! rebuilt from the report files in cell order, so every output file is
//! byte-identical whatever the number of workers, the sharding, or how
//! often the sweep was interrupted.

pub mod cell;
pub mod crash;
pub mod ensemble;
pub mod grid;
pub mod layout;
pub mod merge;
pub mod run;
pub mod shard;
pub mod slurm;

use anyhow::{bail, Context, Result};
use grid::Grid;
use layout::Manifest;
use mmcsim::sched::Registry;
use shard::Shard;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `simctl sweep` was asked to do.
#[derive(Debug)]
pub struct SweepArgs {
    /// The grid file.
    pub grid: PathBuf,
    /// The output directory.
    pub out: PathBuf,
    /// Worker threads (default: one per core).
    pub jobs: Option<usize>,
    /// Run only this slice of the cells.
    pub shard: Option<Shard>,
    /// Write Slurm batch scripts instead of running.
    pub slurm: bool,
    /// Array tasks of the Slurm job (default: min(cells, 16)).
    pub shards: Option<usize>,
    /// `--sbatch-opt` options (over the grid's `[slurm]` table).
    pub sbatch_opts: Vec<slurm::SbatchOpt>,
}

/// Runs `simctl sweep`. Exit code 1 when a cell failed (the others are
/// kept).
pub fn sweep(a: &SweepArgs, registry: &Registry) -> Result<ExitCode> {
    if let Some(e) = ensemble::load(&a.grid)? {
        return ensemble::sweep(a, &e, registry);
    }
    let grid = Grid::load(&a.grid, registry)?;
    if a.slurm {
        if a.shard.is_some() {
            bail!("--slurm writes a script that runs every shard; leave out --shard");
        }
        let n = a.shards.unwrap_or(grid.cells.len().min(16)).max(1);
        let opts = slurm::merged(&grid.slurm, &a.sbatch_opts);
        let cpus = slurm::cpus_per_task(a.jobs, &opts).map_err(crate::output::as_unusable)?;
        let plan = slurm::write(&a.grid, &a.out, n, cpus, &opts, grid.cells.len())?;
        print!("{plan}");
        return Ok(ExitCode::SUCCESS);
    }
    if !a.sbatch_opts.is_empty() {
        return Err(crate::output::unusable(
            "--sbatch-opt adds #SBATCH lines to the scripts of --slurm; give --slurm too",
        ));
    }
    if a.shards.is_some() {
        bail!("--shards N sets the array size of --slurm; to run one slice here use --shard I/N");
    }

    let (mine, outcome, rows) = run_grid(&grid, &a.out, a.shard, registry, a.jobs)?;
    let mine = mine.len();

    for (index, msg) in &outcome.failed {
        eprintln!("error: {} failed: {msg}", grid.cells[*index].describe());
    }
    let mut scope = match a.shard {
        Some(s) => format!("shard {s}: {mine} of {} cells", grid.cells.len()),
        None => format!("{} cells", grid.cells.len()),
    };
    if let Some(c) = grid.crash {
        scope += &format!(" of {} power cuts each", c.cuts);
    }
    println!(
        "sweep: {scope}; ran {}, skipped {} already finished, failed {}; {} preconditioned device(s) built; {} rows in {}",
        outcome.ran,
        outcome.skipped,
        outcome.failed.len(),
        outcome.devices_prepared,
        rows,
        layout::results_path(&a.out).display()
    );
    if outcome.failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "error: {} of {} cells failed; fix the cause and run the same command again to run only those",
            outcome.failed.len(),
            mine
        );
        Ok(ExitCode::from(1))
    }
}

/// Runs the cells of `grid` that `shard` owns (all without one) into
/// `out` on `jobs` workers: the directory prepared (or resumed), the
/// cells run, `results.csv` written. Returns the cells run here, the
/// outcome and the rows of `results.csv`.
pub fn run_grid<'g>(
    grid: &'g Grid,
    out: &Path,
    shard: Option<Shard>,
    registry: &Registry,
    jobs: Option<usize>,
) -> Result<(Vec<&'g cell::Cell>, run::Outcome, usize)> {
    let manifest = Manifest::new(grid.cells.iter().map(|c| c.record()).collect(), grid.crash);
    prepare_dir(out, &manifest, shard)?;
    let mine: Vec<&cell::Cell> = grid
        .cells
        .iter()
        .filter(|c| shard.is_none_or(|s| s.owns(c.index)))
        .collect();
    let outcome = run::run_cells(out, &mine, grid.crash, registry, jobs)?;
    let records: Vec<&cell::CellRecord> = manifest
        .cells
        .iter()
        .filter(|c| shard.is_none_or(|s| s.owns(c.index)))
        .collect();
    let rows = layout::write_results(out, &records, grid.crash)?;
    Ok((mine, outcome, rows))
}

/// Creates `dir` for this sweep, or checks that it holds the same sweep
/// (and shard) when resuming; removes temporaries a killed run left.
fn prepare_dir(dir: &Path, manifest: &Manifest, shard: Option<Shard>) -> Result<()> {
    crate::output::create_dir("--out", &layout::cells_dir(dir))?;
    match Manifest::read(dir)? {
        Some(m) if m != *manifest => bail!(
            "{} holds another sweep (its sweep.json lists other cells); use another --out or remove it",
            dir.display()
        ),
        Some(_) => {}
        None => crate::output::write_file(&layout::manifest_path(dir), manifest.to_text().as_bytes())?,
    }
    let had = layout::read_shard(dir)?;
    match (had, shard) {
        (Some(h), Some(s)) if h != s => bail!(
            "{} holds shard {h}, not {s}; give each shard its own --out",
            dir.display()
        ),
        (Some(h), None) => bail!(
            "{} holds shard {h}; run the same --shard to resume it, or use another --out",
            dir.display()
        ),
        (None, Some(s)) if has_cells(dir)? => bail!(
            "{} holds an unsharded run; give shard {s} its own --out",
            dir.display()
        ),
        (None, Some(s)) => crate::output::write_file(
            &layout::shard_path(dir),
            (serde_json::to_string_pretty(&s)? + "\n").as_bytes(),
        )?,
        _ => {}
    }
    layout::remove_stale_temporaries(dir)
}

/// True when `DIR/cells` holds a report file.
fn has_cells(dir: &Path) -> Result<bool> {
    let cells = layout::cells_dir(dir);
    for e in std::fs::read_dir(&cells).with_context(|| format!("reading {}", cells.display()))? {
        if e?.file_name().to_string_lossy().ends_with(".json") {
            return Ok(true);
        }
    }
    Ok(false)
}
