//! Entry points for the fuzz targets in `fuzz/`: simctl's own input readers
//! (sweep grids, calibration targets, `check` report/baseline pairs) run
//! on their own, without simulating anything. Not a stable API.

use std::path::Path;

/// Parses and checks sweep grid `text` as if read from `path` (relative
/// paths resolve against its folder); returns the number of cells.
pub fn grid(text: &str, path: &Path) -> anyhow::Result<usize> {
    let g = crate::sweep::grid::Grid::parse(text, path, &crate::builtin_registry())?;
    Ok(g.cells.len())
}

/// Reads and checks the calibration targets file `path` (what `simctl
/// calibrate --targets` reads); returns each target's metric path.
pub fn calibration_targets(path: &Path) -> anyhow::Result<Vec<String>> {
    let registry = crate::builtin_registry();
    let t = crate::calibrate::targets::load(path, &registry.names())?;
    Ok(t.targets.into_iter().map(|t| t.metric).collect())
}

/// The number at dotted `metric` of `report`, as `simctl calibrate` reads
/// a target's metric from a run's report.
pub fn calibration_metric(report: &serde_json::Value, metric: &str) -> Result<f64, String> {
    crate::calibrate::targets::metric(report, metric)
}

/// What `simctl check REPORT --baseline BASELINE [--tolerance T]...`
/// does, without printing: the per-metric table, or the input problem
/// (exit code 2) as text.
pub fn check_baseline(
    report: &Path,
    baseline: &Path,
    tolerances: &[&str],
) -> Result<String, String> {
    let tol = tolerances
        .iter()
        .map(|t| crate::check::parse_tolerance(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.0)?;
    let opts = crate::check::Options {
        tolerances: tol,
        allow_mismatch: true,
    };
    let outcome = crate::check::check(report, baseline, &opts).map_err(|e| e.0)?;
    Ok(crate::check::table(&outcome.rows))
}
