//! cpufreq governors of the Linux 3.x / Android 3.4 kernels: how the clock
//! of a policy (all cores of one clock domain) follows the load measured at
//! each sampling timer.
//!
//! Sources (defaults):
//! * `drivers/cpufreq/cpufreq_ondemand.c` (Linux 3.0-3.4): with NO_HZ idle
//!   accounting (`get_cpu_idle_time_us` works, as on every phone kernel)
//!   `up_threshold` = `MICRO_FREQUENCY_UP_THRESHOLD` = 95,
//!   `down_differential` = `MICRO_FREQUENCY_DOWN_DIFFERENTIAL` = 3,
//!   `sampling_down_factor` = `DEF_SAMPLING_DOWN_FACTOR` = 1, and
//!   `sampling_rate` = max(`MICRO_FREQUENCY_MIN_SAMPLE_RATE` = 10 ms,
//!   transition latency (µs) × `LATENCY_MULTIPLIER` = 1000). `dbs_check_cpu`:
//!   load above `up_threshold` jumps to the maximum (and multiplies the next
//!   sampling interval by `sampling_down_factor`); load below
//!   `up_threshold − down_differential` picks the lowest frequency at or
//!   above `load × cur / (up_threshold − down_differential)`.
//! * `drivers/cpufreq/cpufreq_interactive.c` (android-3.4):
//!   `timer_rate` = 20 ms, `hispeed_freq` = the maximum, `go_hispeed_load`
//!   = 99, `target_loads` = 90, `min_sample_time` = 80 ms,
//!   `above_hispeed_delay` = `timer_rate`; `cpufreq_interactive_timer` and
//!   `choose_freq` are followed step by step below.
//! * `drivers/cpufreq/cpufreq_intellidemand.c`: [`super::intellidemand`].

pub use super::freq_table::FreqTable;
use super::intellidemand::Intellidemand;
use serde::{Deserialize, Serialize};

/// Which governor drives the clock (`scaling_governor`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum GovernorKind {
    /// Always the highest frequency.
    Performance,
    /// Always the lowest frequency.
    Powersave,
    /// A fixed frequency, `host.cpu_freq_mhz` (`scaling_setspeed`).
    #[default]
    Userspace,
    /// The ondemand governor (sampling, jump to max above `up_threshold`).
    Ondemand,
    /// Android's interactive governor (hispeed jump, target loads).
    Interactive,
    /// intellidemand (custom Snapdragon kernels' multi-core ondemand,
    /// [`super::intellidemand`]).
    Intellidemand,
}

impl GovernorKind {
    /// Sysfs name of the governor.
    pub fn name(self) -> &'static str {
        match self {
            GovernorKind::Performance => "performance",
            GovernorKind::Powersave => "powersave",
            GovernorKind::Userspace => "userspace",
            GovernorKind::Ondemand => "ondemand",
            GovernorKind::Interactive => "interactive",
            GovernorKind::Intellidemand => "intellidemand",
        }
    }
}

/// ondemand tunables (`/sys/devices/system/cpu/cpufreq/ondemand/`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OndemandParams {
    /// Sampling interval, µs. Default 100,000: the Exynos 4210 driver's
    /// transition latency of 100 µs (`cpuinfo.transition_latency = 100000`
    /// ns in `exynos-cpufreq.c`) × `LATENCY_MULTIPLIER` 1000.
    pub sampling_rate_us: u64,
    /// Load (%) above which the clock jumps to the maximum. Default 95
    /// (`MICRO_FREQUENCY_UP_THRESHOLD`).
    pub up_threshold: u32,
    /// Multiplier of the sampling interval while at the maximum. Default 1
    /// (`DEF_SAMPLING_DOWN_FACTOR`).
    pub sampling_down_factor: u32,
    /// Hysteresis (% points) below `up_threshold` before scaling down.
    /// Default 3 (`MICRO_FREQUENCY_DOWN_DIFFERENTIAL`).
    pub down_differential: u32,
}

impl Default for OndemandParams {
    fn default() -> Self {
        OndemandParams {
            sampling_rate_us: 100_000,
            up_threshold: 95,
            sampling_down_factor: 1,
            down_differential: 3,
        }
    }
}

/// interactive tunables (`/sys/devices/system/cpu/cpufreq/interactive/`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct InteractiveParams {
    /// Timer interval, µs. Default 20,000 (`DEFAULT_TIMER_RATE`).
    pub timer_rate_us: u64,
    /// Frequency of the first jump on a load burst, MHz; 0 = the maximum
    /// (the kernel's default).
    pub hispeed_freq_mhz: f64,
    /// Load (%) at or above which the clock jumps to `hispeed_freq`.
    /// Default 99 (`DEFAULT_GO_HISPEED_LOAD`).
    pub go_hispeed_load: u32,
    /// Target loads in the sysfs syntax `"90"` or `"85 1000000:90"` (load,
    /// then `kHz:load` pairs above which the next load applies). Default
    /// `"90"` (`DEFAULT_TARGET_LOAD`).
    pub target_loads: String,
    /// Minimum time at a frequency before ramping down, µs. Default 80,000
    /// (`DEFAULT_MIN_SAMPLE_TIME`).
    pub min_sample_time_us: u64,
    /// Time at or above `hispeed_freq` before going higher, µs. Default
    /// 20,000 (`DEFAULT_ABOVE_HISPEED_DELAY` = `DEFAULT_TIMER_RATE`).
    pub above_hispeed_delay_us: u64,
}

impl Default for InteractiveParams {
    fn default() -> Self {
        InteractiveParams {
            timer_rate_us: 20_000,
            hispeed_freq_mhz: 0.0,
            go_hispeed_load: 99,
            target_loads: "90".into(),
            min_sample_time_us: 80_000,
            above_hispeed_delay_us: 20_000,
        }
    }
}

impl InteractiveParams {
    /// Parses `target_loads` into `(load %, applies from MHz)` steps.
    pub fn parse_target_loads(&self) -> Result<Vec<(u32, f64)>, crate::error::SettingError> {
        let bad = || {
            crate::error::SettingError::invalid(
                "host.interactive.target_loads",
                format!("\"{}\"", self.target_loads),
                "\"LOAD\" or \"LOAD KHZ:LOAD ...\" with loads 1-100",
            )
        };
        let mut out = Vec::new();
        for (i, tok) in self.target_loads.split_whitespace().enumerate() {
            let (from, load) = match tok.split_once(':') {
                Some((f, l)) if i > 0 => (f.parse::<f64>().map_err(|_| bad())? / 1000.0, l),
                None if i == 0 => (0.0, tok),
                _ => return Err(bad()),
            };
            let load: u32 = load.parse().map_err(|_| bad())?;
            if !(1..=100).contains(&load) {
                return Err(bad());
            }
            out.push((load, from));
        }
        if out.is_empty() {
            return Err(bad());
        }
        Ok(out)
    }
}

/// State of the running governor.
#[derive(Clone, Debug)]
pub enum Governor {
    /// A fixed frequency (performance, powersave, userspace).
    Fixed,
    /// ondemand.
    Ondemand {
        /// Tunables.
        p: OndemandParams,
        /// Current sampling-interval multiplier (`rate_mult`).
        rate_mult: u32,
    },
    /// interactive.
    Interactive {
        /// Tunables.
        p: InteractiveParams,
        /// Parsed target loads.
        loads: Vec<(u32, f64)>,
        /// `hispeed_freq`, MHz.
        hispeed: f64,
        /// `floor_freq`, MHz.
        floor_freq: f64,
        /// `floor_validate_time`, ns.
        floor_validate: u64,
        /// `hispeed_validate_time`, ns.
        hispeed_validate: u64,
    },
    /// intellidemand.
    Intellidemand(Intellidemand),
}

impl Governor {
    /// Interval to the next sample, ns (none for fixed governors).
    pub fn next_sample_ns(&self) -> Option<u64> {
        match self {
            Governor::Fixed => None,
            Governor::Ondemand { p, rate_mult } => {
                Some(p.sampling_rate_us * 1000 * (*rate_mult).max(1) as u64)
            }
            Governor::Interactive { p, .. } => Some(p.timer_rate_us * 1000),
            Governor::Intellidemand(g) => Some(g.next_sample_ns()),
        }
    }

    /// One sample at `now` (ns) with `loads` (0-100, each core of the
    /// policy over the last interval, core 0 first) at frequency `cur`
    /// (MHz): returns the new frequency. ondemand and interactive follow
    /// the busiest core.
    pub fn sample(&mut self, now: u64, loads: &[f64], cur: f64, table: &FreqTable) -> f64 {
        let load = loads.iter().copied().fold(0.0f64, f64::max);
        match self {
            Governor::Fixed => cur,
            Governor::Intellidemand(g) => g.sample(loads, cur, table),
            Governor::Ondemand { p, rate_mult } => {
                // dbs_check_cpu (3.0): load_freq = load × cur.
                if load > p.up_threshold as f64 {
                    if cur < table.max() {
                        *rate_mult = p.sampling_down_factor;
                    }
                    return table.max();
                }
                if cur <= table.min() {
                    return cur;
                }
                let down = p.up_threshold.saturating_sub(p.down_differential) as f64;
                if load < down {
                    *rate_mult = 1;
                    let next = (load * cur / down).max(table.min());
                    return table.at_or_above(next);
                }
                cur
            }
            Governor::Interactive {
                p,
                loads,
                hispeed,
                floor_freq,
                floor_validate,
                hispeed_validate,
            } => {
                let loadadjfreq = load * cur;
                let mut new = if load >= p.go_hispeed_load as f64 {
                    if cur < *hispeed {
                        *hispeed
                    } else {
                        choose_freq(loadadjfreq, cur, loads, table).max(*hispeed)
                    }
                } else {
                    choose_freq(loadadjfreq, cur, loads, table)
                };
                if cur >= *hispeed
                    && new > cur
                    && now.saturating_sub(*hispeed_validate) < p.above_hispeed_delay_us * 1000
                {
                    return cur;
                }
                *hispeed_validate = now;
                new = table.at_or_above(new);
                if new < *floor_freq
                    && now.saturating_sub(*floor_validate) < p.min_sample_time_us * 1000
                {
                    return cur;
                }
                *floor_freq = new;
                *floor_validate = now;
                new
            }
        }
    }
}

/// Target load (%) at frequency `f` (`freq_to_targetload`).
fn target_load(loads: &[(u32, f64)], f: f64) -> u32 {
    loads
        .iter()
        .rev()
        .find(|(_, from)| f >= *from)
        .map_or(loads[0].0, |l| l.0)
}

/// `choose_freq`: the lowest frequency whose target load is met by
/// `loadadjfreq` (load % × MHz), searched like the kernel from `cur`.
fn choose_freq(loadadjfreq: f64, cur: f64, loads: &[(u32, f64)], table: &FreqTable) -> f64 {
    let mut freq = cur;
    let (mut freqmin, mut freqmax) = (0.0f64, f64::INFINITY);
    loop {
        let prev = freq;
        let tl = target_load(loads, freq) as f64;
        freq = table.at_or_above(loadadjfreq / tl);
        if freq > prev {
            freqmin = prev;
            if freq >= freqmax {
                freq = table.below(freqmax);
                if freq == freqmin {
                    freq = freqmax;
                    break;
                }
            }
        } else if freq < prev {
            freqmax = prev;
            if freq <= freqmin {
                freq = table.above(freqmin);
                if freq == freqmax {
                    break;
                }
            }
        }
        if freq == prev {
            break;
        }
    }
    freq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exynos() -> FreqTable {
        FreqTable(vec![200.0, 500.0, 800.0, 1000.0, 1200.0])
    }

    fn ondemand() -> Governor {
        Governor::Ondemand {
            p: OndemandParams::default(),
            rate_mult: 1,
        }
    }

    #[test]
    fn ondemand_jumps_to_max_above_the_threshold_and_scales_down_proportionally() {
        let mut g = ondemand();
        assert_eq!(g.sample(0, &[100.0], 200.0, &exynos()), 1200.0);
        // 46 % at 1200 MHz: 46 × 1200 / 92 = 600 → 800 (RELATION_L).
        assert_eq!(g.sample(0, &[46.0], 1200.0, &exynos()), 800.0);
        // Between 92 and 95 %: hold.
        assert_eq!(g.sample(0, &[93.0], 1000.0, &exynos()), 1000.0);
        // Low load floors at the minimum.
        assert_eq!(g.sample(0, &[5.0], 500.0, &exynos()), 200.0);
        assert_eq!(g.next_sample_ns(), Some(100_000_000));
    }

    #[test]
    fn interactive_goes_to_hispeed_then_holds_min_sample_time() {
        let p = InteractiveParams {
            hispeed_freq_mhz: 1000.0,
            ..Default::default()
        };
        let loads = p.parse_target_loads().unwrap();
        let mut g = Governor::Interactive {
            p,
            loads,
            hispeed: 1000.0,
            floor_freq: 200.0,
            floor_validate: 0,
            hispeed_validate: 0,
        };
        let t = exynos();
        assert_eq!(g.sample(20_000_000, &[100.0], 200.0, &t), 1000.0);
        // Above hispeed only after above_hispeed_delay (20 ms).
        assert_eq!(g.sample(30_000_000, &[100.0], 1000.0, &t), 1000.0);
        assert_eq!(g.sample(40_000_000, &[100.0], 1000.0, &t), 1200.0);
        // Idle right after: held until min_sample_time (80 ms) passed.
        assert_eq!(g.sample(60_000_000, &[1.0], 1200.0, &t), 1200.0);
        assert_eq!(g.sample(120_000_000, &[1.0], 1200.0, &t), 200.0);
    }

    #[test]
    fn choose_freq_meets_the_target_load() {
        let t = exynos();
        let loads = vec![(90, 0.0)];
        // 50 % at 1200 MHz = 600 load-MHz; at 90 % target → 667 → 800.
        assert_eq!(choose_freq(50.0 * 1200.0, 1200.0, &loads, &t), 800.0);
        assert_eq!(choose_freq(0.0, 800.0, &loads, &t), 200.0);
    }

    #[test]
    fn target_loads_parse_the_sysfs_syntax() {
        let p = InteractiveParams {
            target_loads: "85 1000000:95".into(),
            ..Default::default()
        };
        assert_eq!(
            p.parse_target_loads().unwrap(),
            vec![(85, 0.0), (95, 1000.0)]
        );
        let bad = InteractiveParams {
            target_loads: "x".into(),
            ..Default::default()
        };
        assert!(bad.parse_target_loads().is_err());
    }
}
