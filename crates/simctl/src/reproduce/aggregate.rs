//! From one finding's per-seed measurements on one profile and clock to
//! what is judged and shown: each checked quantity's mean and 95 %
//! interval over the seeds with its outcome, the figure's panels as means
//! with error bars, the table and CSV of every seed; and from those, the
//! verdict lines.

use super::finding::{Check, Label, Measure, Quantity};
use super::plan::ClockKind;
use super::verdict::{judge, num, Interval, Outcome};
use crate::plot::{BarPanel, Mark, Panel, Series, XyPanel};

/// One judged quantity over the seeds.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// The claim about it, as the verdict line shows it.
    pub claim: String,
    /// Fitted or predicted.
    pub label: Label,
    /// Its value per seed (seed 1 first).
    pub values: Vec<f64>,
    /// Mean and 95 % interval over the seeds.
    pub interval: Interval,
    /// Where the interval lies against the claim.
    pub outcome: Outcome,
}

/// A finding on one profile at one clock, over the seeds.
#[derive(Clone, Debug)]
pub struct ClockResult {
    /// The clock of the runs.
    pub clock: ClockKind,
    /// The judged quantities.
    pub checks: Vec<CheckResult>,
    /// The figure's panels: bars as means over the seeds with 95 %
    /// intervals, scatter plots of seed 1, lines as means.
    pub panels: Vec<Panel>,
    /// Published beside simulated (a value per seed where they differ).
    pub table: Vec<Quantity>,
    /// CSV rows per seed.
    pub csv: Vec<Vec<Vec<String>>>,
    /// The numbers of each seed, one line each.
    pub summaries: Vec<String>,
}

/// One verdict line: a finding on a profile, for the checks of one label.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// The profile.
    pub profile: String,
    /// Fitted or predicted.
    pub label: Label,
    /// The worst outcome of its checks.
    pub outcome: Outcome,
    /// The line as printed.
    pub line: String,
    /// Lines printed under it (indented): the other checks, the free
    /// clock.
    pub detail: Vec<String>,
    /// The decisive check (the first with the verdict's outcome).
    pub check: CheckResult,
    /// The same check with the governor free, when the verdict is the
    /// pinned clock's.
    pub free: Option<CheckResult>,
}

/// Combines the per-seed measurements (seed 1 first) of one clock.
pub fn combine(clock: ClockKind, measures: &[Measure]) -> ClockResult {
    let first = &measures[0];
    let checks = first
        .checks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let values: Vec<f64> = measures
                .iter()
                .map(|m| m.checks.get(i).map_or(f64::NAN, |x: &Check| x.value))
                .collect();
            let interval = Interval::of(&values);
            CheckResult {
                claim: c.claim.clone(),
                label: c.label,
                outcome: judge(c.side, &interval),
                values,
                interval,
            }
        })
        .collect();
    let panels = (0..first.panels.len())
        .map(|i| {
            let per_seed: Vec<&Panel> = measures.iter().filter_map(|m| m.panels.get(i)).collect();
            panel(&per_seed)
        })
        .collect();
    let table = first
        .table
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let sims: Vec<&str> = measures
                .iter()
                .filter_map(|m| m.table.get(i).map(|x| x.simulated.as_str()))
                .collect();
            let simulated = if sims.iter().all(|s| *s == sims[0]) {
                sims[0].to_string()
            } else {
                sims.join(" | ")
            };
            Quantity {
                name: q.name.clone(),
                published: q.published.clone(),
                simulated,
            }
        })
        .collect();
    ClockResult {
        clock,
        checks,
        panels,
        table,
        csv: measures.iter().map(|m| m.csv.clone()).collect(),
        summaries: measures.iter().map(|m| m.summary.clone()).collect(),
    }
}

/// One panel over the seeds.
fn panel(per_seed: &[&Panel]) -> Panel {
    let n = per_seed.len();
    match per_seed[0] {
        Panel::Bars(b) => {
            let seeds: Vec<&BarPanel> = per_seed
                .iter()
                .filter_map(|p| match p {
                    Panel::Bars(b) => Some(b),
                    Panel::Xy(_) => None,
                })
                .collect();
            Panel::Bars(mean_bars(b, &seeds, n))
        }
        Panel::Xy(x) => {
            let seeds: Vec<&XyPanel> = per_seed
                .iter()
                .filter_map(|p| match p {
                    Panel::Xy(x) => Some(x),
                    Panel::Bars(_) => None,
                })
                .collect();
            Panel::Xy(mean_xy(x, &seeds))
        }
    }
}

/// Bars as their means over the seeds, with a 95 % interval as the error
/// bar; a bar the same in every seed (a measured value) keeps its own
/// error bar.
fn mean_bars(first: &BarPanel, seeds: &[&BarPanel], n: usize) -> BarPanel {
    let mut out = first.clone();
    let mut errors = Vec::new();
    for (i, bar) in out.bars.iter_mut().enumerate() {
        let values: Vec<f64> = seeds
            .iter()
            .filter_map(|b| b.bars.get(i).map(|x| x.1))
            .collect();
        let own = first.errors.get(i).copied().flatten();
        let constant = values.iter().all(|v| *v == values[0]);
        if constant || values.len() < 2 {
            errors.push(own);
            continue;
        }
        let iv = Interval::of(&values);
        bar.1 = iv.mean;
        errors.push(Some((iv.lo, iv.hi)));
    }
    out.errors = errors;
    if n > 1 {
        out.title = format!("{} (mean of {n} seeds)", out.title);
    }
    out
}

/// Lines as the mean y per point over the seeds; scatter plots (points)
/// from seed 1 only, which the title says.
fn mean_xy(first: &XyPanel, seeds: &[&XyPanel]) -> XyPanel {
    let mut out = first.clone();
    let scatter = first.series.iter().any(|s| s.mark == Mark::Points);
    if scatter {
        if seeds.len() > 1 {
            out.title = format!("{} (seed 1)", out.title);
        }
        return out;
    }
    out.series = first
        .series
        .iter()
        .enumerate()
        .map(|(si, s)| Series {
            name: s.name.clone(),
            mark: s.mark,
            points: s
                .points
                .iter()
                .enumerate()
                .map(|(pi, &(x, _))| {
                    let ys: Vec<f64> = seeds
                        .iter()
                        .filter_map(|p| p.series.get(si)?.points.get(pi).map(|q| q.1))
                        .collect();
                    (x, ys.iter().sum::<f64>() / ys.len() as f64)
                })
                .collect(),
        })
        .collect();
    if seeds.len() > 1 {
        out.title = format!("{} (mean of {} seeds)", out.title, seeds.len());
    }
    out
}

/// `mean [lo, hi]` of an interval.
pub fn interval_text(i: &Interval) -> String {
    format!("{} [{}, {}]", num(i.mean), num(i.lo), num(i.hi))
}

/// The verdict lines of finding `n` on `profile`: one per label of its
/// checks (fitted first), judged at the first clock; a second clock (free, beside a
/// pinned verdict) is reported under it.
pub fn verdicts(n: u32, profile: &str, clocks: &[ClockResult]) -> Vec<Verdict> {
    let judged = &clocks[0];
    let free = clocks.get(1).filter(|c| c.clock == ClockKind::Free);
    let mut labels: Vec<Label> = Vec::new();
    for c in &judged.checks {
        if !labels.contains(&c.label) {
            labels.push(c.label);
        }
    }
    // Fitted first, then the predictions.
    labels.sort();
    labels
        .into_iter()
        .map(|label| {
            let group: Vec<(usize, &CheckResult)> = judged
                .checks
                .iter()
                .enumerate()
                .filter(|(_, c)| c.label == label)
                .collect();
            let outcome = group.iter().map(|(_, c)| c.outcome).max().unwrap_or(Outcome::Unresolved);
            let (k, (idx, check)) = group
                .iter()
                .enumerate()
                .find(|(_, (_, c))| c.outcome == outcome)
                .map(|(k, (i, c))| (k, (*i, *c)))
                .unwrap_or((0, group[0]));
            let of = if group.len() > 1 {
                format!(" (check {} of {})", k + 1, group.len())
            } else {
                String::new()
            };
            let line = format!(
                "{outcome} finding-{n} {} phone={profile}: {}{of} -- {}",
                label.name(),
                check.claim,
                interval_text(&check.interval)
            );
            let mut detail = Vec::new();
            if group.len() > 1 {
                for (j, (_, c)) in group.iter().enumerate() {
                    detail.push(format!(
                        "check {}/{} {}: {} -- {}",
                        j + 1,
                        group.len(),
                        c.outcome,
                        c.claim,
                        interval_text(&c.interval)
                    ));
                }
            }
            let free_check = free.and_then(|f| f.checks.get(idx)).cloned();
            if let Some(fc) = &free_check {
                detail.push(format!(
                    "governor free (as configured): {} -- {}; the governor's contribution {} (free − pinned mean)",
                    fc.outcome,
                    interval_text(&fc.interval),
                    signed(fc.interval.mean - check.interval.mean)
                ));
            }
            Verdict {
                profile: profile.to_string(),
                label,
                outcome,
                line,
                detail,
                check: check.clone(),
                free: free_check,
            }
        })
        .collect()
}

/// A difference with its sign, four significant digits.
fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", num(v))
    } else {
        num(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::finding::Side;

    fn measure(values: &[f64]) -> Measure {
        Measure {
            checks: values
                .iter()
                .enumerate()
                .map(|(i, &v)| Check::predicted(format!("q{i} > 0"), Side::Above(0.0), v))
                .collect(),
            summary: String::new(),
            table: vec![Quantity::new("q", "—", format!("{}", values[0]))],
            csv: vec![],
            panels: vec![Panel::Bars(BarPanel::amounts(
                "t",
                "x",
                vec![("a".into(), values[0]), ("measured".into(), 5.0)],
            ))],
        }
    }

    /// The verdict is the worst check's; the line names it with its
    /// interval, the free clock goes under it with the governor's part.
    #[test]
    fn the_verdict_line_names_the_decisive_check_and_the_free_clock_beside_it() {
        let pinned = combine(
            ClockKind::Pinned,
            &[
                measure(&[2.0, 0.1]),
                measure(&[2.2, -0.1]),
                measure(&[2.1, 0.2]),
            ],
        );
        let free = combine(
            ClockKind::Free,
            &[
                measure(&[3.0, 1.0]),
                measure(&[3.2, 1.1]),
                measure(&[3.1, 0.9]),
            ],
        );
        assert_eq!(pinned.checks[0].outcome, Outcome::Pass);
        assert_eq!(pinned.checks[1].outcome, Outcome::Unresolved);
        let v = verdicts(3, "motog-2013", &[pinned, free]);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].outcome, Outcome::Unresolved);
        assert!(
            v[0].line.starts_with("UNRESOLVED finding-3 predicted phone=motog-2013: q1 > 0 (check 2 of 2) -- 0.06667 ["),
            "{}",
            v[0].line
        );
        assert!(
            v[0].detail.last().unwrap().contains("PASS -- 1.000 ["),
            "{:?}",
            v[0].detail
        );
        assert!(v[0].detail.last().unwrap().contains("contribution +0.9333"));
        // The bars: means with an interval; the bar that is the same in
        // every seed (a measurement) has none.
        let Panel::Bars(b) = &v_panels()[0] else {
            panic!()
        };
        assert!((b.bars[0].1 - 2.1).abs() < 1e-12);
        assert!(b.errors[0].is_some() && b.errors[1].is_none());
    }

    fn v_panels() -> Vec<Panel> {
        combine(
            ClockKind::Fixed,
            &[measure(&[2.0]), measure(&[2.2]), measure(&[2.1])],
        )
        .panels
    }
}
