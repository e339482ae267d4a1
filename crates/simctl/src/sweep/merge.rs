//! `simctl merge DIR... --out DIR2`: shard outputs combined into exactly
//! the layout an unsharded sweep writes.
//!
//! Every input must hold the same grid (identical `sweep.json`); every
//! cell of the grid must be finished in exactly one input. Overlapping or
//! missing cells are refused, naming them, before anything is written.

use super::layout::{self, Manifest};
use super::shard::Shard;
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// At most this many cells are named in an error.
const SHOWN: usize = 8;

/// Merges `inputs` into `out`; returns the number of cells.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<usize> {
    if inputs.is_empty() {
        bail!(
            "merge: give the shard directories to merge, e.g. simctl merge out/shards/* --out out"
        );
    }
    let mut manifest: Option<(Manifest, &Path)> = None;
    let mut shards: Vec<Option<Shard>> = Vec::new();
    for dir in inputs {
        if out == dir.as_path() {
            bail!(
                "merge: --out {} is also an input; merge into another directory",
                out.display()
            );
        }
        let m = Manifest::read(dir)?.with_context(|| {
            format!(
                "{}: no sweep.json; is it the --out of a `simctl sweep`?",
                dir.display()
            )
        })?;
        match &manifest {
            Some((first, from)) if *first != m => bail!(
                "merge: {} and {} come from different grids (their sweep.json differ)",
                from.display(),
                dir.display()
            ),
            Some(_) => {}
            None => manifest = Some((m, dir)),
        }
        shards.push(layout::read_shard(dir)?);
    }
    let (manifest, _) = manifest.expect("at least one input");
    for (i, a) in shards.iter().enumerate() {
        for (j, b) in shards.iter().enumerate().skip(i + 1) {
            if a.is_some() && a == b {
                bail!(
                    "merge: {} and {} are both shard {}: overlapping inputs",
                    inputs[i].display(),
                    inputs[j].display(),
                    a.expect("some")
                );
            }
        }
    }

    let source = sources(&manifest, inputs)?;
    let count = shards.iter().flatten().map(|s| s.count).next();
    let missing: Vec<_> = manifest
        .cells
        .iter()
        .filter(|c| source[c.index].is_none())
        .collect();
    if !missing.is_empty() {
        let mut msg = String::new();
        for c in missing.iter().take(SHOWN) {
            let _ = write!(msg, "\n  {}", c.describe());
            if let Some(n) = count {
                let _ = write!(msg, " belongs to shard {}", Shard::of(c.index, n));
            }
        }
        if missing.len() > SHOWN {
            let _ = write!(msg, "\n  ... and {} more", missing.len() - SHOWN);
        }
        bail!(
            "merge: {} of {} cells are finished in no input (a shard not given, not finished, or with failed cells):{msg}",
            missing.len(),
            manifest.cells.len()
        );
    }

    // Write: the manifest, each cell's file as is, then the CSV.
    crate::output::create_dir("--out", &layout::cells_dir(out))?;
    match Manifest::read(out)? {
        Some(m) if m != manifest => bail!(
            "merge: {} holds another sweep; use another --out or remove it",
            out.display()
        ),
        _ => {}
    }
    if let Some(s) = layout::read_shard(out)? {
        bail!(
            "merge: {} holds shard {s}; merge into a directory of its own",
            out.display()
        );
    }
    write_cells(&manifest, inputs, &source, out)?;
    let records: Vec<_> = manifest.cells.iter().collect();
    layout::write_results(out, &records, manifest.crash)?;
    Ok(manifest.cells.len())
}

/// Which of `inputs` holds each cell of `manifest` finished (by index),
/// refusing a cell file holding another cell's report and a cell finished
/// in two inputs.
fn sources(manifest: &Manifest, inputs: &[PathBuf]) -> Result<Vec<Option<usize>>> {
    let mut source: Vec<Option<usize>> = vec![None; manifest.cells.len()];
    let mut overlaps = String::new();
    let mut n_overlaps = 0;
    for (k, dir) in inputs.iter().enumerate() {
        for c in &manifest.cells {
            let path = layout::cell_path(dir, &c.id);
            let Some((_, report)) = layout::read_complete(&path) else {
                continue;
            };
            if manifest.crash.is_some_and(|g| !g.finished(&report)) {
                continue;
            }
            if let Some(why) = layout::foreign_cell(c, &report) {
                return Err(crate::output::unusable(format!(
                    "merge: {} is not the report of {}: {why}",
                    path.display(),
                    c.describe()
                )));
            }
            match source[c.index] {
                Some(prev) => {
                    n_overlaps += 1;
                    if n_overlaps <= SHOWN {
                        let _ = write!(
                            overlaps,
                            "\n  cell {} ({} on {}) is in {} and {}",
                            c.id,
                            c.scheduler,
                            c.workload,
                            inputs[prev].display(),
                            dir.display()
                        );
                    }
                }
                None => source[c.index] = Some(k),
            }
        }
    }
    if n_overlaps > 0 {
        bail!("merge: {n_overlaps} cell(s) are in more than one input:{overlaps}");
    }
    Ok(source)
}

/// Writes the manifest and each cell's file, copied as is from the input
/// `source` names (an identical file already in `out` is left alone).
fn write_cells(
    manifest: &Manifest,
    inputs: &[PathBuf],
    source: &[Option<usize>],
    out: &Path,
) -> Result<()> {
    crate::output::write_file(&layout::manifest_path(out), manifest.to_text().as_bytes())?;
    for c in &manifest.cells {
        let from = layout::cell_path(&inputs[source[c.index].expect("checked")], &c.id);
        let to = layout::cell_path(out, &c.id);
        let bytes = crate::input::read_limited(&from, "cell report", crate::input::MAX_JSON_BYTES)?;
        if let Ok(existing) =
            crate::input::read_limited(&to, "cell report", crate::input::MAX_JSON_BYTES)
        {
            if existing == bytes {
                continue;
            }
        }
        crate::output::write_file(&to, &bytes)?;
    }
    Ok(())
}
