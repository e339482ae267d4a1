//! `DIR/verdicts.csv`: every verdict line as a row, for tables and
//! scripts: the finding, profile, label and outcome, the decisive check's
//! claim, its mean and 95 % interval over the seeds, and (when the verdict
//! is the pinned clock's) the same check with the governor free and the
//! governor's contribution (free − pinned mean).

use super::aggregate::Verdict;
use super::finding::cell;
use super::Section;
use anyhow::Result;

/// The header, in column order.
const HEADER: [&str; 13] = [
    "finding",
    "profile",
    "label",
    "outcome",
    "claim",
    "seeds",
    "mean",
    "lo",
    "hi",
    "free_mean",
    "free_lo",
    "free_hi",
    "governor_contribution",
];

/// A number as the findings' CSVs write it ([`cell`]), empty when absent
/// or not finite.
fn number(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map(cell).unwrap_or_default()
}

/// One row of verdict `v` of finding `n`.
fn row(n: u32, v: &Verdict) -> Vec<String> {
    let c = &v.check;
    let free = v.free.as_ref().map(|f| &f.interval);
    vec![
        n.to_string(),
        v.profile.clone(),
        v.label.name().to_string(),
        v.outcome.name().to_string(),
        c.claim.clone(),
        c.interval.n.to_string(),
        number(Some(c.interval.mean)),
        number(Some(c.interval.lo)),
        number(Some(c.interval.hi)),
        number(free.map(|f| f.mean)),
        number(free.map(|f| f.lo)),
        number(free.map(|f| f.hi)),
        number(free.map(|f| f.mean - c.interval.mean)),
    ]
}

/// The CSV of every verdict of `sections`, in the order printed.
pub fn render(sections: &[Section]) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for s in sections {
        for v in &s.verdicts {
            w.write_record(row(s.number, v))?;
        }
    }
    Ok(w.into_inner()?)
}
