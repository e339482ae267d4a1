//! cpuidle: the idle states a core sleeps in between pieces of work, and
//! what leaving one costs when work arrives on an idle core.
//!
//! A SoC's cpuidle driver registers its states shallowest first, each with
//! an `exit_latency` (µs from the wake-up event until the core runs code)
//! and a `target_residency` (µs the core must stay idle for the state to
//! pay off); Qualcomm's `qcom,lpm-levels` give the same pair as
//! `qcom,latency-us` and `qcom,time-overhead`. The model's governor picks
//! the deepest state whose target residency the idle spell reached, and
//! the shallowest (WFI) for any shorter spell: the menu governor's choice
//! when its prediction of the spell is right (it predicts from the next
//! timer and recent spells; its mispredictions are not modelled).
//! Cluster- and system-wide levels (L2 off, XO off), which need every core
//! idle, are not modelled; the host profiles list per-core states only.

use crate::error::SettingError;
use crate::types::{us_to_ns, Ns};
use serde::{Deserialize, Serialize};

/// One idle state as the driver registers it (`struct cpuidle_state`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleState {
    /// The state's name in the driver (`WFI`, `LP2`, `standalone_pc`).
    pub name: String,
    /// `exit_latency`: from the wake-up event until the core runs, µs.
    pub exit_latency_us: f64,
    /// `target_residency`: the shortest idle spell the state is chosen
    /// for, µs.
    pub target_residency_us: f64,
}

/// Checks `states` (the `host.cpuidle_states` list): names given, values
/// finite and non-negative, deeper states no faster to leave and no
/// shorter to pay off than shallower ones. The error names the entry and
/// field.
pub fn check(states: &[IdleState]) -> Result<(), SettingError> {
    let mut prev: Option<&IdleState> = None;
    for (i, s) in states.iter().enumerate() {
        let at = format!("host.cpuidle_states[{i}]");
        if s.name.trim().is_empty() {
            return Err(SettingError::Empty {
                key: format!("{at}.name"),
                expected: "give the state's name in the cpuidle driver (e.g. \"WFI\")",
            });
        }
        for (field, v) in [
            ("exit_latency_us", s.exit_latency_us),
            ("target_residency_us", s.target_residency_us),
        ] {
            if !v.is_finite() || !(0.0..=1e9).contains(&v) {
                return Err(SettingError::invalid(
                    format!("{at}.{field}"),
                    v,
                    "a number of µs in 0..=1e9",
                ));
            }
        }
        if let Some(p) = prev {
            if s.exit_latency_us < p.exit_latency_us
                || s.target_residency_us < p.target_residency_us
            {
                return Err(SettingError::Field {
                    key: at,
                    problem: format!(
                        "{:?} (exit {} µs, residency {} µs) is shallower than the state before it, {:?} (exit {} µs, residency {} µs): expected the states shallowest first, as the driver registers them",
                        s.name,
                        s.exit_latency_us,
                        s.target_residency_us,
                        p.name,
                        p.exit_latency_us,
                        p.target_residency_us
                    ),
                });
            }
        }
        prev = Some(s);
    }
    Ok(())
}

/// The states resolved to ns, shallowest first.
#[derive(Clone, Debug, Default)]
pub struct IdleStates {
    /// `(exit_latency, target_residency)` per state, ns.
    states: Vec<(Ns, Ns)>,
}

impl IdleStates {
    /// The states of `list` (checked with [`check`]).
    pub fn new(list: &[IdleState]) -> IdleStates {
        IdleStates {
            states: list
                .iter()
                .map(|s| (us_to_ns(s.exit_latency_us), us_to_ns(s.target_residency_us)))
                .collect(),
        }
    }

    /// Exit latency of the state a core idle for `spell` ns sleeps in, ns
    /// (0 without states or when the core was not idle).
    pub fn exit_after(&self, spell: Ns) -> Ns {
        if spell == 0 {
            return 0;
        }
        self.states
            .iter()
            .rev()
            .find(|&&(_, residency)| residency <= spell)
            .or(self.states.first())
            .map_or(0, |&(exit, _)| exit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, exit: f64, residency: f64) -> IdleState {
        IdleState {
            name: name.into(),
            exit_latency_us: exit,
            target_residency_us: residency,
        }
    }

    #[test]
    fn the_deepest_state_the_spell_pays_for_is_left() {
        // Tegra 3: LP3 (10 / 10 µs) and LP2 (2000 / 2200 µs).
        let s = IdleStates::new(&[state("LP3", 10.0, 10.0), state("LP2", 2000.0, 2200.0)]);
        assert_eq!(s.exit_after(0), 0, "not idle");
        assert_eq!(s.exit_after(5_000), 10_000, "short spell: WFI-like LP3");
        assert_eq!(s.exit_after(2_199_999), 10_000);
        assert_eq!(s.exit_after(2_200_000), 2_000_000, "LP2 once it pays off");
        assert_eq!(IdleStates::default().exit_after(1_000_000), 0);
    }

    #[test]
    fn bad_tables_are_refused_by_entry_and_field() {
        let e = check(&[state("WFI", -1.0, 1.0)]).unwrap_err().to_string();
        assert!(
            e.starts_with("host.cpuidle_states[0].exit_latency_us = -1"),
            "{e}"
        );
        let e = check(&[state("WFI", 1.0, 1.0), state("PC", 0.5, 100.0)])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("host.cpuidle_states[1]: \"PC\" (exit"), "{e}");
        let e = check(&[state(" ", 1.0, 1.0)]).unwrap_err().to_string();
        assert!(e.contains("cpuidle_states[0].name is empty"), "{e}");
        check(&[state("WFI", 1.0, 100.0), state("retention", 75.0, 105.0)]).unwrap();
    }
}
