//! The intellidemand cpufreq governor (Paul Reioux's
//! `drivers/cpufreq/cpufreq_intellidemand.c`, 2012-2013, versions 4.x, as
//! custom Android 3.4 kernels for Snapdragon phones shipped it): Qualcomm's
//! multi-core ondemand with a lower up threshold, floors that keep a core
//! from idling while another core is loaded, an optional two-phase ramp,
//! and iowait counted as load (`io_is_busy` on by default on ARM).
//!
//! Followed from `dbs_check_cpu` (v4.2) step by step; what is left out:
//! * touch-input boosts (`dbs_input_event`: a boost to 1,026 MHz and a 15 ms
//!   sampling rate for 2.5 s after a touch) and `boostpulse`: a simulated
//!   benchmark runs untouched;
//! * `powersave_bias` (0 by default), the early-suspend sampling rate and
//!   the `CONFIG_CPUFREQ_LIMIT_MAX_FREQ` browsing limits (screen-on,
//!   off by default in the builds that have them);
//! * CPU hotplug (MSM `mpdecision`): every core stays online.
//!
//! All cores share one clock (one policy, `policy->cpu` = core 0), as the
//! platform model has it; `freq_avg` (`__cpufreq_driver_getavg`) is the
//! current clock.

use super::freq_table::FreqTable;
use crate::error::SettingError;
use serde::{Deserialize, Serialize};

/// intellidemand tunables (`/sys/devices/system/cpu/cpufreq/intellidemand/`).
/// Defaults are the source's for a kernel with NO_HZ idle accounting
/// (`MICRO_FREQUENCY_*`), as every phone kernel has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct IntellidemandParams {
    /// Sampling interval, µs. The source sets max(`min_sampling_rate` =
    /// 15,000, transition latency × `LATENCY_MULTIPLIER` 1000); the MSM
    /// clock driver's transition latency is not in the sources at hand, so
    /// the default is the governor's own `DEF_SAMPLING_RATE` = 50,000
    /// \[uncertain: 15,000-50,000\].
    pub sampling_rate_us: u64,
    /// Load (%) of the busiest core above which the clock goes up.
    /// Default 75 (`MICRO_FREQUENCY_UP_THRESHOLD`).
    pub up_threshold: u32,
    /// Hysteresis (% points) below `up_threshold` before scaling down.
    /// Default 3 (`MICRO_FREQUENCY_DOWN_DIFFERENTIAL`).
    pub down_differential: u32,
    /// Load (%) above which a multi-core system goes to `optimal_freq`.
    /// Default 75 (`DEF_FREQUENCY_UP_THRESHOLD`).
    pub up_threshold_multi_core: u32,
    /// Hysteresis of `up_threshold_multi_core`, % points. Default 3
    /// (`MICRO_FREQUENCY_DOWN_DIFFERENTIAL`).
    pub down_differential_multi_core: u32,
    /// Load (%) of another core above which the clock is held at least at
    /// `sync_freq`. Default 75 (`DEF_FREQUENCY_UP_THRESHOLD`).
    pub up_threshold_any_cpu_load: u32,
    /// Floor while another core is loaded, MHz. Default 702
    /// (`DBS_SYNC_FREQ` 702000 kHz, written for the MSM8960's table)
    /// \[uncertain: a falcon build may set its own\].
    pub sync_freq_mhz: f64,
    /// Frequency of a multi-core ramp, MHz. Default 1,296
    /// (`DBS_OPTIMAL_FREQ` 1296000 kHz, MSM8960; above the MSM8226's top
    /// entry, so there it means the maximum) \[uncertain\].
    pub optimal_freq_mhz: f64,
    /// Multiplier of the sampling interval while at the maximum. Default 1
    /// (`DEF_SAMPLING_DOWN_FACTOR`).
    pub sampling_down_factor: u32,
    /// First step of a ramp while the system was idle, MHz (0 = off, the
    /// default: every ramp goes to the maximum).
    pub two_phase_freq_mhz: f64,
}

impl Default for IntellidemandParams {
    fn default() -> Self {
        IntellidemandParams {
            sampling_rate_us: 50_000,
            up_threshold: 75,
            down_differential: 3,
            up_threshold_multi_core: 75,
            down_differential_multi_core: 3,
            up_threshold_any_cpu_load: 75,
            sync_freq_mhz: 702.0,
            optimal_freq_mhz: 1296.0,
            sampling_down_factor: 1,
            two_phase_freq_mhz: 0.0,
        }
    }
}

impl IntellidemandParams {
    /// Checks the tunables as the sysfs stores would; the error names the
    /// key.
    pub fn check(&self) -> Result<(), SettingError> {
        let bad =
            |name: &str, v: &dyn std::fmt::Display, expected: std::borrow::Cow<'static, str>| {
                Err(SettingError::invalid(
                    format!("host.intellidemand.{name}"),
                    v,
                    expected,
                ))
            };
        let pct = |name: &str, v: u32| {
            if (11..=100).contains(&v) {
                Ok(())
            } else {
                bad(
                    name,
                    &v,
                    "11-100 % (MIN_FREQUENCY_UP_THRESHOLD..MAX_FREQUENCY_UP_THRESHOLD)".into(),
                )
            }
        };
        pct("up_threshold", self.up_threshold)?;
        pct("up_threshold_multi_core", self.up_threshold_multi_core)?;
        pct("up_threshold_any_cpu_load", self.up_threshold_any_cpu_load)?;
        if self.sampling_rate_us == 0 || self.sampling_rate_us > 10_000_000 {
            return bad(
                "sampling_rate_us",
                &self.sampling_rate_us,
                "1-10000000 µs".into(),
            );
        }
        for (name, d, up) in [
            (
                "down_differential",
                self.down_differential,
                self.up_threshold,
            ),
            (
                "down_differential_multi_core",
                self.down_differential_multi_core,
                self.up_threshold_multi_core,
            ),
        ] {
            if d == 0 || d >= up {
                return bad(
                    name,
                    &d,
                    format!("1 % point up to below its up threshold ({up})").into(),
                );
            }
        }
        if self.sampling_down_factor == 0 || self.sampling_down_factor > 100_000 {
            return bad(
                "sampling_down_factor",
                &self.sampling_down_factor,
                "1-100000 (MAX_SAMPLING_DOWN_FACTOR)".into(),
            );
        }
        for (name, f) in [
            ("sync_freq_mhz", self.sync_freq_mhz),
            ("optimal_freq_mhz", self.optimal_freq_mhz),
            ("two_phase_freq_mhz", self.two_phase_freq_mhz),
        ] {
            if !f.is_finite() || !(0.0..=100_000.0).contains(&f) {
                return bad(name, &f, "MHz from 0 to 100000".into());
            }
        }
        Ok(())
    }
}

/// The running governor's state.
#[derive(Clone, Debug)]
pub struct Intellidemand {
    p: IntellidemandParams,
    /// `rate_mult` of the policy core.
    rate_mult: u32,
    /// `prev_load` of each core, %.
    prev_load: Vec<f64>,
    /// Busy-phase counter (the source's static `counter`).
    counter: u32,
    /// In the busy phase (the source's static `phase`).
    busy_phase: bool,
}

impl Intellidemand {
    /// The governor with tunables `p` for `cores` cores.
    pub fn new(p: IntellidemandParams, cores: usize) -> Intellidemand {
        Intellidemand {
            p,
            rate_mult: 1,
            prev_load: vec![0.0; cores.max(1)],
            counter: 0,
            busy_phase: false,
        }
    }

    /// Interval to the next sample, ns.
    pub fn next_sample_ns(&self) -> u64 {
        self.p.sampling_rate_us * 1000 * u64::from(self.rate_mult.max(1))
    }

    /// `dbs_check_cpu` with `loads` (each core's load over the last
    /// interval, %, core 0 first) at clock `cur`: the new clock, MHz.
    pub fn sample(&mut self, loads: &[f64], cur: f64, table: &FreqTable) -> f64 {
        let p = self.p.clone();
        // Load × frequency of the busiest core, and each core's max_load
        // (this sample's or the previous one's, whichever is higher).
        let mut max_load = 0.0f64;
        let mut max_load_other = 0.0f64;
        for (j, &l) in loads.iter().enumerate() {
            let prev = self.prev_load.get(j).copied().unwrap_or(0.0);
            let core_max = l.max(prev);
            if let Some(slot) = self.prev_load.get_mut(j) {
                *slot = l;
            }
            max_load = max_load.max(l);
            if j > 0 {
                max_load_other = max_load_other.max(core_max);
            }
        }
        let multi_core = loads.len() > 1;
        // Another core at the maximum with this one at or above the optimal
        // frequency counts as loaded (one shared clock: every core's `cur`
        // is this one).
        if multi_core && cur >= table.max() && cur >= p.optimal_freq_mhz {
            max_load_other = p.up_threshold_any_cpu_load as f64;
        }
        let max_load_freq = max_load * cur;
        if max_load_freq > p.up_threshold as f64 * cur {
            if self.counter < 5 {
                self.counter += 1;
                if self.counter > 2 {
                    self.busy_phase = true;
                }
            }
            if p.two_phase_freq_mhz > 0.0 && !self.busy_phase {
                let target = p.two_phase_freq_mhz.max(table.max() * 0.8);
                return increase(cur, target, table);
            }
            if cur < table.max() {
                self.rate_mult = p.sampling_down_factor;
            }
            return increase(cur, table.max(), table);
        }
        if self.counter > 0 {
            self.counter -= 1;
            if self.counter == 0 {
                self.busy_phase = false;
            }
        }
        if multi_core {
            if max_load_other > p.up_threshold_any_cpu_load as f64 {
                return if cur < p.sync_freq_mhz {
                    increase(cur, p.sync_freq_mhz, table)
                } else {
                    cur
                };
            }
            if max_load_freq > p.up_threshold_multi_core as f64 * cur {
                return if cur < p.optimal_freq_mhz {
                    increase(cur, p.optimal_freq_mhz, table)
                } else {
                    cur
                };
            }
        }
        if cur <= table.min() {
            return cur;
        }
        let down = p.up_threshold.saturating_sub(p.down_differential) as f64;
        if max_load_freq >= down * cur {
            return cur;
        }
        self.rate_mult = 1;
        let mut next = (max_load_freq / down).max(table.min());
        if multi_core {
            let floor_other = (p.up_threshold_multi_core - p.down_differential) as f64;
            if max_load_other > floor_other && next < p.sync_freq_mhz {
                next = p.sync_freq_mhz;
            }
            let floor_busy = (p.up_threshold_multi_core - p.down_differential_multi_core) as f64;
            if max_load_freq > floor_busy * cur && next < p.optimal_freq_mhz {
                next = p.optimal_freq_mhz;
            }
        }
        table.at_or_above(next)
    }
}

/// `dbs_freq_increase` without powersave bias: nothing when already at the
/// maximum, else `CPUFREQ_RELATION_H` (the highest entry at or below the
/// target).
fn increase(cur: f64, target: f64, table: &FreqTable) -> f64 {
    if cur >= table.max() {
        return cur;
    }
    table.at_or_below(target.min(table.max()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msm8226() -> FreqTable {
        FreqTable(vec![
            192.0, 300.0, 384.0, 600.0, 787.2, 998.4, 1094.4, 1190.4,
        ])
    }

    #[test]
    fn a_busy_core_above_75_percent_takes_the_clock_to_the_maximum() {
        let mut g = Intellidemand::new(IntellidemandParams::default(), 4);
        let t = msm8226();
        assert_eq!(g.sample(&[80.0, 0.0, 0.0, 0.0], 192.0, &t), 1190.4);
        // 74 % is below the up threshold but above 72 %: hold.
        assert_eq!(g.sample(&[73.0, 0.0, 0.0, 0.0], 1190.4, &t), 1190.4);
    }

    #[test]
    fn scaling_down_targets_72_percent_load_with_the_other_cores_floors() {
        let t = msm8226();
        // One core: 36 % at 1190.4 MHz → 36 × 1190.4 / 72 = 595.2 → 600.
        let mut one = Intellidemand::new(IntellidemandParams::default(), 1);
        assert_eq!(one.sample(&[36.0], 1190.4, &t), 600.0);
        // Four cores: core 1 at 73 % holds the clock (73 ≥ 72) ...
        let mut four = Intellidemand::new(IntellidemandParams::default(), 4);
        assert_eq!(four.sample(&[0.0, 73.0, 0.0, 0.0], 1190.4, &t), 1190.4);
        // ... and one sample later its max_load (73, the previous sample's)
        // above 72 keeps the floor at sync_freq 702 → 787.2 (RELATION_L)
        // while the busiest core alone would allow 600.
        assert_eq!(four.sample(&[36.0, 10.0, 0.0, 0.0], 1190.4, &t), 787.2);
        // Idle everywhere: the minimum.
        let mut idle = Intellidemand::new(IntellidemandParams::default(), 4);
        assert_eq!(idle.sample(&[0.0; 4], 600.0, &t), 192.0);
    }

    #[test]
    fn another_loaded_core_lifts_an_idle_policy_core_to_sync_freq() {
        let t = msm8226();
        let mut g = Intellidemand::new(IntellidemandParams::default(), 4);
        // Core 2 at 90 % is above up_threshold itself: straight to max.
        assert_eq!(g.sample(&[0.0, 0.0, 90.0, 0.0], 300.0, &t), 1190.4);
        // Next sample core 2's max_load is still 90 (previous sample), the
        // busiest core now idle: the clock is kept (at or above sync_freq).
        assert_eq!(g.sample(&[0.0; 4], 1190.4, &t), 1190.4);
    }

    #[test]
    fn two_phase_ramps_to_its_frequency_before_the_busy_phase() {
        let t = msm8226();
        let p = IntellidemandParams {
            two_phase_freq_mhz: 787.2,
            ..Default::default()
        };
        let mut g = Intellidemand::new(p, 1);
        // max(787.2, 80 % of 1190.4 = 952.3) → RELATION_H → 787.2.
        assert_eq!(g.sample(&[100.0], 192.0, &t), 787.2);
        assert_eq!(g.sample(&[100.0], 787.2, &t), 787.2);
        // Third busy sample: busy phase, to the maximum.
        assert_eq!(g.sample(&[100.0], 787.2, &t), 1190.4);
    }

    #[test]
    fn bad_tunables_are_named() {
        let p = IntellidemandParams {
            up_threshold: 5,
            ..Default::default()
        };
        assert!(p
            .check()
            .unwrap_err()
            .to_string()
            .contains("up_threshold = 5"));
        let p = IntellidemandParams {
            down_differential: 80,
            ..Default::default()
        };
        assert!(p
            .check()
            .unwrap_err()
            .to_string()
            .contains("down_differential = 80"));
    }
}
