//! What an ensemble shows per phone, computed from its rows alone: the
//! fraction of configurations in which each finding passes, and the
//! consistent region — the ranges and alternatives spanned by the
//! configurations in which every finding of the phone passes together —
//! or, when there is none, the findings that never pass (the candidate
//! missing mechanisms).

use super::table::{Manifest, PhoneKeys, Row};
use crate::reproduce::verdict::Outcome;

/// A phone's summary.
pub struct PhoneSummary {
    /// The phone.
    pub phone: String,
    /// Configurations with rows.
    pub configurations: usize,
    /// Per finding: `(number, configurations passing, configurations run)`.
    pub fractions: Vec<(u32, usize, usize)>,
    /// Configurations in which every finding passes.
    pub consistent: Vec<usize>,
    /// Per key: `(key, declared spread, spread of the consistent
    /// configurations)`.
    pub region: Vec<(String, String, String)>,
    /// Findings that pass in no configuration.
    pub never: Vec<u32>,
}

/// The part of a key's spread the configurations `vals` span: `[min,
/// max]` for a range, the alternatives present (in declared order) for
/// alternatives; configurations where the key does not apply (`n/a`)
/// take no part in it and are named after it.
fn span(k: &super::table::KeyInfo, vals: &[&str]) -> String {
    let na = super::sample::NOT_APPLICABLE;
    let applied: Vec<&str> = vals.iter().copied().filter(|v| *v != na).collect();
    if applied.is_empty() {
        return format!("{na} (applies in none of these configurations)");
    }
    let s = span_of(k, &applied);
    if applied.len() < vals.len() {
        format!(
            "{s} ({na} in {} of {})",
            vals.len() - applied.len(),
            vals.len()
        )
    } else {
        s
    }
}

/// [`span`] over values that all apply.
fn span_of(k: &super::table::KeyInfo, vals: &[&str]) -> String {
    if k.range {
        let nums: Vec<f64> = vals.iter().filter_map(|v| v.parse().ok()).collect();
        let lo = nums.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("[{lo}, {hi}]")
    } else {
        let present: Vec<&str> = k.spread.split(" | ").filter(|a| vals.contains(a)).collect();
        present.join(" | ")
    }
}

/// The summary of phone `p` from `rows` (every phone's).
fn of_phone(p: &PhoneKeys, rows: &[Row], findings: &[u32]) -> PhoneSummary {
    let mine: Vec<&Row> = rows.iter().filter(|r| r.phone == p.name).collect();
    let mut configs: Vec<usize> = mine.iter().map(|r| r.configuration).collect();
    configs.dedup();
    let run: Vec<u32> = findings
        .iter()
        .copied()
        .filter(|f| mine.iter().any(|r| r.finding == *f))
        .collect();
    let fractions = run
        .iter()
        .map(|&f| {
            let of: Vec<&&Row> = mine.iter().filter(|r| r.finding == f).collect();
            let pass = of.iter().filter(|r| r.outcome == Outcome::Pass).count();
            (f, pass, of.len())
        })
        .collect::<Vec<_>>();
    let consistent: Vec<usize> = configs
        .iter()
        .copied()
        .filter(|c| {
            mine.iter()
                .filter(|r| r.configuration == *c)
                .all(|r| r.outcome == Outcome::Pass)
        })
        .collect();
    let region = p
        .keys
        .iter()
        .map(|k| {
            let vals: Vec<&str> = mine
                .iter()
                .filter(|r| consistent.contains(&r.configuration))
                .filter_map(|r| r.values.iter().find(|(key, _)| *key == k.key))
                .map(|(_, v)| v.as_str())
                .collect();
            (k.key.clone(), k.spread.clone(), span(k, &vals))
        })
        .collect();
    PhoneSummary {
        phone: p.name.clone(),
        configurations: configs.len(),
        never: fractions.iter().filter(|f| f.1 == 0).map(|f| f.0).collect(),
        fractions,
        consistent,
        region,
    }
}

/// One summary per phone of the manifest.
pub fn summarize(m: &Manifest, rows: &[Row]) -> Vec<PhoneSummary> {
    m.phones
        .iter()
        .map(|p| of_phone(p, rows, &m.findings))
        .collect()
}

/// The fraction as printed: `20/32 (62.5 %)`.
pub fn fraction(pass: usize, of: usize) -> String {
    let pct = if of == 0 {
        0.0
    } else {
        100.0 * pass as f64 / of as f64
    };
    format!("{pass}/{of} ({pct:.1} %)")
}

/// The sentence on the consistent region.
pub fn region_sentence(s: &PhoneSummary) -> String {
    if !s.consistent.is_empty() {
        return format!(
            "all {} findings hold together in {} of {} configurations",
            s.fractions.len(),
            s.consistent.len(),
            s.configurations
        );
    }
    let never: Vec<String> = s.never.iter().map(|n| format!("finding-{n}")).collect();
    if never.is_empty() {
        "no plausible configuration reproduces the findings together: each passes in some configuration, never all in one".into()
    } else {
        format!(
            "no plausible configuration reproduces the findings together; never passes: {} (the candidate missing mechanism)",
            never.join(", ")
        )
    }
}

/// The summary lines printed on stdout.
pub fn lines(m: &Manifest, s: &PhoneSummary) -> Vec<String> {
    let mut l = vec![format!(
        "ensemble phone={} configurations={} seeds={}",
        s.phone, s.configurations, m.seeds
    )];
    for (f, pass, of) in &s.fractions {
        l.push(format!("  finding-{f}: PASS in {}", fraction(*pass, *of)));
    }
    l.push(format!("  {}", region_sentence(s)));
    if !s.consistent.is_empty() {
        for (k, _, r) in &s.region {
            l.push(format!("    {k}: {r}"));
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::super::table::KeyInfo;
    use super::*;

    fn key(range: bool, spread: &str) -> KeyInfo {
        KeyInfo {
            key: "k".into(),
            range,
            spread: spread.into(),
            reason: String::new(),
        }
    }

    /// A value that does not apply (`n/a`) takes no part in the region.
    #[test]
    fn the_region_ignores_values_that_do_not_apply() {
        let r = key(true, "[1, 5]");
        assert_eq!(span(&r, &["2", "4"]), "[2, 4]");
        assert_eq!(span(&r, &["2", "n/a", "4"]), "[2, 4] (n/a in 1 of 3)");
        assert_eq!(
            span(&r, &["n/a", "n/a"]),
            "n/a (applies in none of these configurations)"
        );
        let a = key(false, "hybrid | page | dftl");
        assert_eq!(
            span(&a, &["dftl", "page", "n/a"]),
            "page | dftl (n/a in 1 of 3)"
        );
    }
}
