//! The output of `simctl calibrate`: the calibrated device and host
//! profiles (each input text with its fitted values replaced, comments
//! kept, plus the same `[calibration.record]` table of the whole fit) and
//! the printed fit table.

use super::objective::Evaluation;
use super::params::{Param, ProfileKind};
use super::targets::{Measured, Targets};
use anyhow::{Context, Result};
use std::path::Path;
use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item, Table};

/// Search method, as recorded.
const METHOD: &str = "Nelder-Mead (argmin 0.11) on parameters mapped log-linearly onto [0, 1]; objective = sum over targets of weight x mean squared relative error (0 inside a band)";

/// A finished fit.
pub struct Fit<'a> {
    /// Free parameters.
    pub params: &'a [Param],
    /// Targets.
    pub targets: &'a Targets,
    /// The best evaluation.
    pub best: &'a Evaluation,
    /// Distinct parameter vectors evaluated.
    pub evaluations: usize,
    /// Nelder–Mead iterations.
    pub iterations: u64,
    /// True when the search ended because the simplex converged, false when
    /// `--max-iters` cut it short (printed, not recorded in the profile).
    pub converged: bool,
    /// The command that produced it.
    pub command: String,
}

fn number(p: &Param, x: f64) -> toml_edit::Value {
    if p.integer {
        (x as i64).into()
    } else {
        x.into()
    }
}

/// The input text of the `kind` profile with its fitted values and the
/// record of the whole fit (every parameter, of both profiles).
pub fn calibrated_profile(text: &str, fit: &Fit, kind: ProfileKind) -> Result<String> {
    let mut doc: DocumentMut = text
        .parse()
        .with_context(|| format!("re-reading the {}", kind.noun()))?;
    for (p, &x) in fit.params.iter().zip(&fit.best.x) {
        if p.kind != kind {
            continue;
        }
        let mut item: &mut Item = doc.as_item_mut();
        for part in &p.path {
            item = item
                .get_mut(part)
                .with_context(|| format!("--param {}: not in the profile", p.key))?;
        }
        let v = item
            .as_value_mut()
            .with_context(|| format!("--param {}: not a value", p.key))?;
        let decor = v.decor().clone();
        *v = number(p, x);
        *v.decor_mut() = decor;
    }
    let cal = doc
        .entry("calibration")
        .or_insert(Item::Table(Table::new()))
        .as_table_mut()
        .context("[calibration] is not a table")?;
    cal.remove("record");
    let mut rec = Table::new();
    rec.decor_mut().set_prefix(
        "\n# Written by simctl calibrate (not read by the simulation): how the\n# values above were fitted. Re-run `command` to reproduce this file.\n",
    );
    rec["command"] = value(fit.command.clone());
    rec["method"] = value(METHOD);
    if !fit.targets.note.is_empty() {
        rec["targets_note"] = value(fit.targets.note.clone());
    }
    rec["evaluations"] = value(fit.evaluations as i64);
    rec["iterations"] = value(fit.iterations as i64);
    rec["objective"] = value(fit.best.objective);
    let mut ps = ArrayOfTables::new();
    for (p, &x) in fit.params.iter().zip(&fit.best.x) {
        let mut t = Table::new();
        t["key"] = value(p.key.clone());
        t["lower"] = value(p.lower);
        t["upper"] = value(p.upper);
        t["start"] = value(number(p, p.start));
        t["fitted"] = value(number(p, x));
        ps.push(t);
    }
    rec.insert("parameters", Item::ArrayOfTables(ps));
    let mut ts = ArrayOfTables::new();
    for r in &fit.best.rows {
        let tg = &fit.targets.targets[r.target];
        let mut t = Table::new();
        t["name"] = value(tg.name.clone());
        t["scenario"] = value(tg.scenario_text.clone());
        t["metric"] = value(tg.metric.clone());
        if let Some(s) = &r.scheduler {
            t["scheduler"] = value(s.clone());
        }
        match tg.goal.measured(r.scheduler.as_deref()) {
            Some(Measured::Value(v)) => t["measured"] = value(v),
            Some(Measured::Band(lo, hi)) => {
                let mut a = Array::new();
                a.push(lo);
                a.push(hi);
                t["measured_band"] = value(a);
            }
            None => t["measured"] = value("the finding's claim holds (hinge 0)"),
        }
        if let Some(f) = &tg.fit_name {
            t["fit_target"] = value(f.clone());
        }
        t["weight"] = value(tg.weight);
        if tg.weight == 0.0 {
            t["held_out"] = value(true);
        }
        t["achieved"] = value(r.achieved);
        t["relative_error"] = value(r.relative_error);
        ts.push(t);
    }
    rec.insert("targets", Item::ArrayOfTables(ts));
    cal.insert("record", Item::Table(rec));
    write_fit(&mut doc, fit);
    Ok(doc.to_string())
}

/// The names of the measurements and findings the fit used (weight > 0),
/// in target order without repeats: the output's `[fit] targets`.
pub fn fit_targets(targets: &Targets) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for t in targets.targets.iter().filter(|t| t.weight > 0.0) {
        if let Some(n) = &t.fit_name {
            if !v.contains(n) {
                v.push(n.clone());
            }
        }
    }
    v
}

/// Replaces the profile's `[fit]` with the fit's targets (none: no
/// `[fit]`; a target without a measurement or finding name is recorded in
/// `[calibration.record]` only).
fn write_fit(doc: &mut DocumentMut, fit: &Fit) {
    doc.remove("fit");
    let names = fit_targets(fit.targets);
    if names.is_empty() {
        return;
    }
    let mut t = Table::new();
    t.decor_mut().set_prefix(
        "\n# Written by simctl calibrate: the measurements and findings these values\n# were fitted to. `simctl reproduce` labels a verdict on them `fitted`.\n",
    );
    let mut a = Array::new();
    for n in names {
        a.push(n);
    }
    t["targets"] = value(a);
    doc.insert("fit", Item::Table(t));
}

/// The `[fit] targets` written, as the printed fit says it.
fn fit_line(fit: &Fit) -> String {
    let names = fit_targets(fit.targets);
    if names.is_empty() {
        "[fit] targets: none written (no target with weight > 0 names a measurement table metric or a finding)".to_string()
    } else {
        format!("[fit] targets: {}", names.join(", "))
    }
}

/// The fit as a text table, naming the profile files written.
pub fn table(fit: &Fit, files: &[(ProfileKind, &Path)]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let written: Vec<String> = files
        .iter()
        .map(|(k, p)| format!("{} {}", k.noun(), p.display()))
        .collect();
    let _ = writeln!(
        s,
        "calibrated {} (objective {:.6} after {} evaluations, {} iterations)",
        written.join(" and "),
        fit.best.objective,
        fit.evaluations,
        fit.iterations
    );
    let _ = writeln!(
        s,
        "{}",
        if fit.converged {
            "search: converged (the simplex's spread of objective values fell below 1e-9)"
                .to_string()
        } else {
            format!(
                "search: stopped by --max-iters {} before the simplex converged; more iterations may lower the objective",
                fit.iterations
            )
        }
    );
    let _ = writeln!(s, "{}", fit_line(fit));
    let kw = fit
        .params
        .iter()
        .map(|p| p.key.len())
        .max()
        .unwrap_or(0)
        .max(9);
    let _ = writeln!(
        s,
        "{:<kw$} {:>10} {:>10} {:>10} {:>10}",
        "parameter", "lower", "upper", "start", "fitted"
    );
    for (p, &x) in fit.params.iter().zip(&fit.best.x) {
        let _ = writeln!(
            s,
            "{:<kw$} {:>10} {:>10} {:>10} {:>10}",
            p.key,
            p.lower,
            p.upper,
            p.text(p.start),
            p.text(x)
        );
    }
    let label = |r: &super::objective::Row| {
        let n = &fit.targets.targets[r.target].name;
        match &r.scheduler {
            Some(sc) => format!("{n} ({sc})"),
            None => n.clone(),
        }
    };
    let tw = fit
        .best
        .rows
        .iter()
        .map(|r| label(r).len())
        .max()
        .unwrap_or(0)
        .max(6);
    let mw = fit
        .targets
        .targets
        .iter()
        .map(|t| t.metric.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let _ = writeln!(
        s,
        "{:<tw$} {:<mw$} {:>17} {:>12} {:>9}",
        "target", "metric", "measured", "achieved", "rel. err"
    );
    for r in &fit.best.rows {
        let t = &fit.targets.targets[r.target];
        let _ = writeln!(
            s,
            "{:<tw$} {:<mw$} {:>17} {:>12.4} {:>8.1}%{}",
            label(r),
            t.metric,
            t.goal
                .measured(r.scheduler.as_deref())
                .map_or_else(|| "claim holds".to_string(), Measured::text),
            r.achieved,
            r.relative_error * 100.0,
            if t.weight == 0.0 { "  (held out)" } else { "" }
        );
    }
    s
}
