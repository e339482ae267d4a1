//! simctl's library face for other programs (the Python package
//! `mmcsim`): the parts of `run`, `replay`, `compare` and `sweep` that
//! find inputs by name, load a workload with overrides, flatten a report
//! into the `--csv` rows, and run a grid, so another front end builds the
//! same scenarios and reports as the command line, byte for byte.
//!
//! Everything here is what the subcommands themselves call; nothing is a
//! second implementation.

use anyhow::Result;
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use std::path::{Path, PathBuf};

pub use crate::compare::{is_scenario, parse_entries, Entry};
pub use crate::csv_out::{metrics, metrics_of, Metric, HEADER as CSV_HEADER};
pub use crate::sweep::cell::CellRecord;

/// The workload file `run`/`compare` take for `given`: the path as
/// written when it exists (or has a separator), else a bundled or on-disk
/// scenario or fio job of that name (`rand16-128m`, `androbench-3.4`).
pub fn workload_path(given: &Path) -> Result<PathBuf> {
    crate::catalogue::workload(given)
}

/// The overrides `--phone NAME|FILE` applies first (device and host
/// profiles, scheduler, `android_version`, ...).
pub fn phone_sets(name_or_file: &str) -> Result<Vec<(String, String)>> {
    Ok(crate::catalogue::phone(name_or_file)?.sets())
}

/// Loads the workload file at `path` (a scenario TOML or an fio job file)
/// with `sets` applied in order, as `simctl run` does; a trace given by
/// mistake is an error saying to replay it.
pub fn load_workload(path: &Path, sets: &[(String, String)]) -> Result<Scenario> {
    crate::commands::load_workload(path, sets).map_err(|e| crate::input::not_a_scenario(path, e))
}

/// Checks the start of trace `path` as `simctl replay` does before
/// anything is built (a folder, a scenario or an fio job file is an error
/// saying what it is).
pub fn check_trace(path: &Path) -> Result<()> {
    crate::input::check_trace(path)
}

/// `work` over `items` on `jobs` threads (default one per core), results
/// in the order of `items` (as `compare` runs its entries).
pub fn parallel<T: Send, R: Send>(
    items: Vec<T>,
    jobs: Option<usize>,
    work: impl Fn(T) -> R + Sync + Send,
) -> Result<Vec<R>> {
    crate::compare::parallel(items, jobs, work)
}

/// An error's message as `simctl` prints it: the context chain, skipping
/// causes a message already quotes.
pub fn error_message(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg.push_str(": ");
            msg.push_str(&c);
        }
    }
    msg
}

/// True when `e` is unusable input or usage (simctl's exit code 2: a
/// missing or malformed file, a bad setting, an unknown name), not a run
/// that failed (exit code 1).
pub fn is_usage_error(e: &anyhow::Error) -> bool {
    crate::output::is_usage_error(e)
}

/// What [`sweep`] ran: every cell of the grid with its report.
#[derive(Debug)]
pub struct SweepOutcome {
    /// Every cell's coordinates, in cell order.
    pub cells: Vec<CellRecord>,
    /// Each cell's report (the JSON text of `cells/<id>.json`), in cell
    /// order; `None` for a cell that failed.
    pub reports: Vec<Option<String>>,
    /// Cells that failed (index, reason), in cell order.
    pub failed: Vec<(usize, String)>,
}

/// Runs the grid `text` (read from, or standing for, the file `path`,
/// against whose folder relative paths resolve) into the output directory
/// `out` on `jobs` workers, as `simctl sweep GRID --out OUT` does
/// (resuming what a previous run of the same grid left there), and reads
/// back every cell's report.
pub fn sweep(
    text: &str,
    path: &Path,
    out: &Path,
    jobs: Option<usize>,
    registry: &Registry,
) -> Result<SweepOutcome> {
    use crate::sweep::layout;
    let grid = crate::sweep::grid::Grid::parse(text, path, registry)?;
    let (_, outcome, _) = crate::sweep::run_grid(&grid, out, None, registry, jobs)?;
    let cells: Vec<CellRecord> = grid.cells.iter().map(|c| c.record()).collect();
    let reports = cells
        .iter()
        .map(|c| {
            layout::read_complete(&layout::cell_path(out, &c.id))
                .map(|(bytes, _)| String::from_utf8_lossy(&bytes).into_owned())
        })
        .collect();
    Ok(SweepOutcome {
        cells,
        reports,
        failed: outcome.failed,
    })
}

/// The profile `name` under `configs/SUB/` (`devices`, `hosts`):
/// `NAME.toml` on disk from the current directory up, else bundled; an
/// error naming where it looked otherwise.
pub fn profile_path(sub: &str, name: &str) -> Result<PathBuf> {
    let file = if name.ends_with(".toml") {
        name.to_string()
    } else {
        format!("{name}.toml")
    };
    match crate::bundled::base_for(sub, &file)? {
        Some(base) => Ok(base.join(crate::bundled::CONFIGS).join(sub).join(file)),
        None => Err(crate::output::unusable(format!(
            "{name}: no such file, and no {sub} profile of that name in {}/{sub}/ (here or in a parent folder) or bundled",
            crate::bundled::CONFIGS
        ))),
    }
}
