//! One seed of one finding on one profile, outside `reproduce`: what a
//! `finding = "finding-N"` target of `simctl calibrate` runs. The runs are
//! those `reproduce N` makes on the profile (the clock pinned when the
//! verdict is judged pinned), with the scenarios' own seed.

use super::finding::{Check, Side};
use super::profile::Profile;
use super::{findings, plan, runner};
use crate::output::unusable;
use anyhow::{bail, Context, Result};
use mmcsim::platform::governor::GovernorKind;
use mmcsim::sched::Registry;
use std::path::Path;

/// The numbers of every finding `reproduce` knows.
pub fn finding_numbers() -> Vec<u32> {
    findings::all().iter().map(|f| f.about().number).collect()
}

/// What calibrate runs a finding on: a phone file, or a device profile
/// selected by `sets` on the scenarios as written.
pub enum On<'a> {
    /// A phone file.
    Phone(&'a Path),
    /// A device profile, selected by these overrides.
    Device(&'a [(String, String)]),
}

/// Runs finding `number` once on `on` with `sets` (the fitted parameters)
/// on top, and returns its checks.
pub fn run_finding(
    number: u32,
    on: On,
    sets: &[(String, String)],
    configs: &Path,
    registry: &Registry,
) -> Result<Vec<Check>> {
    let Some(f) = findings::all()
        .into_iter()
        .find(|f| f.about().number == number)
    else {
        bail!("unknown finding `finding-{number}`");
    };
    let (profile, mut after) = match on {
        On::Phone(p) => (Profile::load(p).map_err(unusable)?, Vec::new()),
        On::Device(s) => {
            if let Err(why) = f.on_generic() {
                return Err(unusable(format!(
                    "finding-{number} needs a phone profile: {why}"
                )));
            }
            (Profile::generic(), s.to_vec())
        }
    };
    if let Some(only) = f.only_on() {
        if !only.contains(&profile.name.as_str()) {
            return Err(unusable(format!(
                "finding-{number} is about {} only; the profile calibrated is `{}`",
                only.join(", "),
                profile.name
            )));
        }
    }
    let profiles = [profile];
    let specs = f.runs(registry);
    if f.pinned_verdict().is_some() {
        if let Some(first) = specs.first() {
            let host = runner::scenario(&0, first, &profiles, configs, &after)?.host;
            let moves = host.freq_table_mhz.len() > 1
                && !matches!(
                    host.governor,
                    GovernorKind::Userspace | GovernorKind::Performance | GovernorKind::Powersave
                );
            // As `reproduce` judges it: pinned where the clock can move.
            if moves {
                after.push((plan::PIN.0.to_string(), plan::PIN.1.to_string()));
            }
        }
    }
    after.extend(sets.iter().cloned());
    let items = specs
        .iter()
        .map(|spec| {
            let sc = runner::scenario(&0, spec, &profiles, configs, &after)?;
            Ok((sc, spec, profiles[0].name.as_str()))
        })
        .collect::<Result<Vec<_>>>()?;
    let outputs = runner::run_all(items, None, registry, || ())?;
    let refs: Vec<&runner::RunOutput> = outputs.iter().collect();
    let m = f
        .measure(&refs)
        .with_context(|| format!("finding-{number} on {}", profiles[0].name))?;
    Ok(m.checks)
}

/// The hinge of a check: 0 on the claim's side of its threshold, else the
/// shortfall over the threshold's magnitude (over 1 when the threshold is
/// 0, as for a lead's sign).
pub fn shortfall(c: &Check) -> f64 {
    let rel = |gap: f64, t: f64| gap.max(0.0) / if t == 0.0 { 1.0 } else { t.abs() };
    match c.side {
        Side::Above(t) => rel(t - c.value, t),
        Side::Below(t) => rel(c.value - t, t),
        Side::Within(lo, hi) => rel(lo - c.value, lo).max(rel(c.value - hi, hi)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hinge_is_zero_on_the_claims_side_and_the_relative_shortfall_beyond() {
        let c = |side, value| Check::predicted("x", side, value);
        assert_eq!(shortfall(&c(Side::Above(0.0), 0.02)), 0.0);
        assert!((shortfall(&c(Side::Above(0.0), -0.02)) - 0.02).abs() < 1e-12);
        assert!((shortfall(&c(Side::Above(3.0), 1.5)) - 0.5).abs() < 1e-12);
        assert!((shortfall(&c(Side::Below(2.0), 3.0)) - 0.5).abs() < 1e-12);
        assert_eq!(shortfall(&c(Side::Within(1.0, 2.0), 1.5)), 0.0);
        assert!((shortfall(&c(Side::Within(1.0, 2.0), 3.0)) - 0.5).abs() < 1e-12);
    }
}
