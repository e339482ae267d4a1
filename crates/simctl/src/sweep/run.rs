//! Running a sweep's cells: in parallel (rayon), skipping finished ones,
//! sharing preconditioned devices between cells that precondition the
//! same device, and writing each report atomically. A crash grid's cell
//! runs its power-cut campaign on the shared device ([`super::crash`]).

use super::cell::Cell;
use super::crash::CrashGrid;
use super::layout::{cell_path, read_complete};
use crate::output::write_file;
use crate::shared_devices::{self, panic_message, Device};
use indicatif::{ProgressBar, ProgressStyle};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use std::io::IsTerminal;
use std::path::Path;

/// What running a set of cells did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Cells simulated now.
    pub ran: usize,
    /// Cells skipped because their report was already complete.
    pub skipped: usize,
    /// Cells that failed, with the reason, in cell order.
    pub failed: Vec<(usize, String)>,
    /// Distinct preconditioned devices built.
    pub devices_prepared: usize,
}

/// A cell to run: its scenario and its device's preparation key.
type Pending<'a> = (&'a Cell, Scenario, String);

/// The cells of `cells` whose report is not complete in `dir`, with their
/// scenarios (cheap: files parsed, nothing built); complete ones count as
/// skipped and one that does not load as failed, in `out`.
fn pending<'a>(
    dir: &Path,
    cells: &[&'a Cell],
    crash: Option<CrashGrid>,
    out: &mut Outcome,
) -> Vec<Pending<'a>> {
    let mut pending = Vec::new();
    for &c in cells {
        // A report of another cell in this cell's file runs again, as does
        // a crash cell's report without the grid's cuts.
        let done = read_complete(&cell_path(dir, &c.id)).is_some_and(|(_, v)| {
            super::layout::foreign_cell(&c.record(), &v).is_none()
                && crash.is_none_or(|g| g.finished(&v))
        });
        if done {
            out.skipped += 1;
            continue;
        }
        match c
            .scenario()
            .and_then(|sc| Ok((PreparedDevice::key(&sc)?, sc)))
        {
            Ok((key, sc)) => pending.push((c, sc, key)),
            Err(e) => out.failed.push((c.index, format!("{e:#}"))),
        }
    }
    pending
}

/// A progress bar of `n` cells on a terminal, else a hidden one.
fn progress(n: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(n as u64);
    b.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells {msg}",
        )
        .expect("valid template"),
    );
    b
}

/// Runs one cell on its shared device and writes its report into `dir`;
/// a panic is a failed cell.
fn run_cell(
    cell: &Cell,
    sc: Scenario,
    device: Device,
    crash: Option<CrashGrid>,
    registry: &Registry,
    dir: &Path,
) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let device = device?;
        let report = match crash {
            None => Simulation::with_prepared_device(sc, registry, &device)
                .and_then(|s| s.run(RunOptions::default())),
            Some(g) => g.run(&sc, registry, &device),
        }
        .map_err(|e| e.to_string())?;
        drop(device);
        write_file(
            &cell_path(dir, &cell.id),
            (report.to_json() + "\n").as_bytes(),
        )
        .map_err(|e| format!("{e:#}"))
    }))
    .unwrap_or_else(|p| Err(format!("the simulator panicked: {}", panic_message(&*p))))
}

/// Runs every cell of `cells` whose report is not complete in `dir`, on
/// `jobs` workers (default: one per core); with `crash`, each cell's
/// power-cut campaign.
pub fn run_cells(
    dir: &Path,
    cells: &[&Cell],
    crash: Option<CrashGrid>,
    registry: &Registry,
    jobs: Option<usize>,
) -> anyhow::Result<Outcome> {
    let mut out = Outcome::default();
    let pending = pending(dir, cells, crash, &mut out);
    let bar = progress(pending.len());
    let items = pending.into_iter().map(|(c, sc, key)| ((c, sc), key));
    let shared = shared_devices::run(
        items.collect(),
        jobs,
        |(_, sc): &(&Cell, Scenario)| {
            PreparedDevice::new(sc).map_err(|e| format!("preconditioning the device: {e}"))
        },
        |(cell, sc), device| {
            let r = run_cell(cell, sc, device, crash, registry, dir);
            bar.inc(1);
            (cell.index, r)
        },
    )?;
    bar.finish_and_clear();
    for (index, r) in shared.results {
        match r {
            Ok(()) => out.ran += 1,
            Err(e) => out.failed.push((index, e)),
        }
    }
    out.failed.sort_by_key(|f| f.0);
    out.devices_prepared = shared.devices_prepared;
    Ok(out)
}
