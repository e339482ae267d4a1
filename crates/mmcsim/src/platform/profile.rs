//! The host profile: the `[host]` table of a scenario (or a
//! `configs/hosts/*.toml` file it names with `profile = "..."`): cores,
//! frequency table, governor, background load, interrupt affinity and every
//! per-layer CPU cost with its unit.
//!
//! Without a profile every default reproduces the static cost model: one
//! core, the userspace governor at `cpu_freq_mhz`, no platform layer, no
//! background processes, the completion interrupt on the waiting thread's
//! core. Cost defaults are engineering estimates from
//! reference/emmc-parameters.md §4 (\[est\]) for a 1.0-1.5 GHz Cortex-A9/A7.

use super::costs::{CostsUs, LayerCosts};
use super::cpuidle::IdleState;
use super::governor::{GovernorKind, InteractiveParams, OndemandParams};
use super::intellidemand::IntellidemandParams;
use crate::error::{Error, Result, SettingError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Lowest clock a host profile may give (`reference_freq_mhz`,
/// `cpu_freq_mhz`, table entries), in MHz.
pub const MIN_FREQ_MHZ: f64 = 1.0;

/// Highest clock a host profile may give, in MHz (100 GHz).
pub const MAX_FREQ_MHZ: f64 = 100_000.0;

/// The host: CPU, governor, per-layer costs and page-cache size. All
/// costs in µs at `reference_freq_mhz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// The host profile file this table was merged over (as written in
    /// the scenario), if any.
    pub profile: Option<String>,
    /// Platform layer per crossing from the app into native code
    /// (Dalvik → libcore → JNI and back), µs: paid once per Java I/O call
    /// of a job or AndroBench file test, per SQLite statement and per
    /// pass of a script, not per system call made inside the native code
    /// (SQLite's VFS calls). Default 0 (native callers).
    pub platform_call_us: f64,
    /// Platform layer per KiB of the buffer of the call that crosses, µs.
    /// Default 0.
    pub platform_us_per_kib: f64,
    /// System-call entry and exit (trap, register save/restore), µs.
    /// Default 0 (folded into `syscall_us`).
    pub syscall_entry_us: f64,
    /// System call + VFS + file system, per read()/write()/fsync() call, µs.
    /// \[est\] §4 "syscall + VFS + ext4: 20-60 µs".
    pub syscall_us: f64,
    /// Copy between page cache and user buffer, µs per KiB. \[est\] about
    /// 1 GB/s memcpy on a Cortex-A9.
    pub copy_us_per_kib: f64,
    /// Block layer per bio submitted (bio allocation, merge attempt,
    /// request allocation, plug), µs. \[est\] §4 "block layer + scheduler:
    /// 10-30 µs".
    pub block_submit_us: f64,
    /// I/O scheduler dispatch hook per request, µs (all schedulers; see
    /// `sched_dispatch_us_per_scheduler`). Default 0 (folded into
    /// `block_submit_us`).
    pub sched_dispatch_us: f64,
    /// Per-scheduler dispatch cost overriding `sched_dispatch_us`, µs, by
    /// scheduler name (\[est\] §4: "CFQ more than noop/deadline").
    pub sched_dispatch_us_per_scheduler: BTreeMap<String, f64>,
    /// Waking the sleeping `mmcqd` thread (context switch), µs. \[est\] §4
    /// "mmcqd wake-up, context switches: 10-50 µs".
    pub mmcqd_wakeup_us: f64,
    /// MMC core + host driver command setup per request, µs. \[est\] §4
    /// "MMC core + host driver + IRQ: 20-60 µs per command" (the IRQ part
    /// is `irq_us`).
    pub driver_prep_us: f64,
    /// DMA mapping and ARM cache maintenance, µs per KiB transferred.
    /// \[est\] §4 "1-5 µs per 4 KB, tens of µs at 512 KB".
    pub dma_us_per_kib: f64,
    /// Interrupt handling and request completion in the driver, µs. \[est\]
    /// §4 (IRQ share of "MMC core + host driver + IRQ").
    pub irq_us: f64,
    /// Waking the thread that waits for the I/O (context switch), µs.
    /// \[est\] §4.
    pub wakeup_us: f64,
    /// Inter-processor interrupt delivery (GIC SGI to a core in WFI, not
    /// scaled by the clock), µs, paid when a completion wakes a thread on
    /// another core than the one handling it. Default 0.
    pub ipi_us: f64,
    /// Remote wake-up work on the target core after an IPI
    /// (`scheduler_ipi`, `ttwu_do_activate`, idle exit), µs. Default 0.
    pub remote_wakeup_us: f64,
    /// CPU clock the costs above were written for, MHz.
    pub reference_freq_mhz: f64,
    /// CPU clock of the userspace governor (`scaling_setspeed`), MHz; with
    /// a frequency table the lowest entry at or above it.
    pub cpu_freq_mhz: f64,
    /// Cores (one clock domain: every core runs at the policy's frequency).
    pub cores: u32,
    /// Frequency table, MHz, ascending (`scaling_available_frequencies`);
    /// empty = any frequency (userspace only).
    pub freq_table_mhz: Vec<f64>,
    /// cpufreq governor.
    pub governor: GovernorKind,
    /// ondemand tunables.
    pub ondemand: OndemandParams,
    /// interactive tunables.
    pub interactive: InteractiveParams,
    /// intellidemand tunables.
    pub intellidemand: IntellidemandParams,
    /// Whether ondemand, interactive or intellidemand count a core's
    /// iowait (idle time while one of its threads sleeps in
    /// `io_schedule`) as load (`io_is_busy`). Unset = the governor's own
    /// default on ARM: on for intellidemand (`should_io_be_busy` returns 1
    /// on ARM), off for ondemand (its `should_io_be_busy` whitelists only
    /// Intel CPUs) and interactive (`io_is_busy` 0). Vendor boot scripts
    /// set it per SoC (Qualcomm's `init.qcom.post_boot.sh`).
    pub io_is_busy: Option<bool>,
    /// CPU-bound background processes (always runnable, nice 0).
    pub background_cpu_hogs: u32,
    /// Core that handles the MMC completion interrupt (`smp_affinity`);
    /// unset = the core of the thread it completes (no IPI ever).
    pub irq_core: Option<u32>,
    /// CFS `sched_latency` before scaling, µs. Default 6,000
    /// (`sysctl_sched_latency`, kernel/sched/fair.c, 3.x).
    pub sched_latency_us: f64,
    /// CFS `sched_wakeup_granularity` before scaling, µs. Default 1,000
    /// (`sysctl_sched_wakeup_granularity`, 3.x). Both are multiplied by
    /// 1 + ilog2(cores) (`SCHED_TUNABLESCALING_LOG`).
    pub sched_wakeup_granularity_us: f64,
    /// Page cache size, MiB (RAM available for file pages). \[est\] half of a
    /// 1 GB phone's RAM.
    pub page_cache_mib: u64,
    /// The SoC's cpuidle states, shallowest first, each with its exit
    /// latency and target residency in µs (the kernel's cpuidle driver or
    /// `qcom,lpm-levels` table): work arriving on an idle core first pays
    /// the exit latency of the state it sleeps in. Default none (no exit
    /// latency).
    pub cpuidle_states: Vec<IdleState>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            profile: None,
            platform_call_us: 0.0,
            platform_us_per_kib: 0.0,
            syscall_entry_us: 0.0,
            syscall_us: 20.0,
            copy_us_per_kib: 1.0,
            block_submit_us: 10.0,
            sched_dispatch_us: 0.0,
            sched_dispatch_us_per_scheduler: BTreeMap::new(),
            mmcqd_wakeup_us: 15.0,
            driver_prep_us: 25.0,
            dma_us_per_kib: 0.1,
            irq_us: 10.0,
            wakeup_us: 15.0,
            ipi_us: 0.0,
            remote_wakeup_us: 0.0,
            reference_freq_mhz: 1200.0,
            cpu_freq_mhz: 1200.0,
            cores: 1,
            freq_table_mhz: Vec::new(),
            governor: GovernorKind::Userspace,
            ondemand: OndemandParams::default(),
            interactive: InteractiveParams::default(),
            intellidemand: IntellidemandParams::default(),
            io_is_busy: None,
            background_cpu_hogs: 0,
            irq_core: None,
            sched_latency_us: 6000.0,
            sched_wakeup_granularity_us: 1000.0,
            page_cache_mib: 512,
            cpuidle_states: Vec::new(),
        }
    }
}

impl HostConfig {
    /// Checks that every cost is finite and non-negative, the clocks are
    /// positive, the table is ascending and the governor can run on it.
    pub fn validate(&self) -> std::result::Result<(), SettingError> {
        let mut costs = vec![
            ("platform_call_us", self.platform_call_us),
            ("platform_us_per_kib", self.platform_us_per_kib),
            ("syscall_entry_us", self.syscall_entry_us),
            ("syscall_us", self.syscall_us),
            ("copy_us_per_kib", self.copy_us_per_kib),
            ("block_submit_us", self.block_submit_us),
            ("sched_dispatch_us", self.sched_dispatch_us),
            ("mmcqd_wakeup_us", self.mmcqd_wakeup_us),
            ("driver_prep_us", self.driver_prep_us),
            ("dma_us_per_kib", self.dma_us_per_kib),
            ("irq_us", self.irq_us),
            ("wakeup_us", self.wakeup_us),
            ("ipi_us", self.ipi_us),
            ("remote_wakeup_us", self.remote_wakeup_us),
            ("sched_latency_us", self.sched_latency_us),
            (
                "sched_wakeup_granularity_us",
                self.sched_wakeup_granularity_us,
            ),
        ];
        let per_sched: Vec<(String, f64)> = self
            .sched_dispatch_us_per_scheduler
            .iter()
            .map(|(k, v)| (format!("sched_dispatch_us_per_scheduler.{k}"), *v))
            .collect();
        costs.extend(per_sched.iter().map(|(k, v)| (k.as_str(), *v)));
        for (name, v) in costs {
            if !v.is_finite() || v < 0.0 {
                return Err(SettingError::invalid(
                    format!("host.{name}"),
                    v,
                    "a non-negative number of µs",
                ));
            }
        }
        self.check_clocks()?;
        if self.page_cache_mib == 0 {
            return Err(SettingError::invalid(
                "host.page_cache_mib",
                0,
                "at least 1 MiB",
            ));
        }
        if !(1..=64).contains(&self.cores) {
            return Err(SettingError::invalid("host.cores", self.cores, "1-64"));
        }
        if let Some(c) = self.irq_core {
            if c >= self.cores {
                return Err(SettingError::invalid(
                    "host.irq_core",
                    c,
                    format!("a core below host.cores = {}", self.cores),
                ));
            }
        }
        let t = &self.freq_table_mhz;
        if t.is_empty() && self.governor != GovernorKind::Userspace {
            return Err(SettingError::conflict(
                "host.governor",
                format!("\"{}\"", self.governor.name()),
                "needs host.freq_table_mhz (the frequencies it may choose); only \"userspace\" runs without one",
            ));
        }
        if self.ondemand.sampling_rate_us == 0
            || !(1..=100).contains(&self.ondemand.up_threshold)
            || self.ondemand.down_differential >= self.ondemand.up_threshold
            || self.ondemand.sampling_down_factor == 0
        {
            return Err(SettingError::invalid(
                "host.ondemand",
                format!("{:?}", self.ondemand),
                "sampling_rate_us > 0, up_threshold 1-100, down_differential below it, sampling_down_factor ≥ 1",
            ));
        }
        let i = &self.interactive;
        if i.timer_rate_us == 0 || !(1..=100).contains(&i.go_hispeed_load) {
            return Err(SettingError::invalid(
                "host.interactive",
                format!("{i:?}"),
                "timer_rate_us > 0 and go_hispeed_load 1-100",
            ));
        }
        i.parse_target_loads()?;
        self.intellidemand.check()?;
        super::cpuidle::check(&self.cpuidle_states)?;
        Ok(())
    }

    /// Checks the clocks: `reference_freq_mhz`, `cpu_freq_mhz` and every
    /// table entry in [`MIN_FREQ_MHZ`]..=[`MAX_FREQ_MHZ`] (so no cost
    /// scales to zero or past the clock), the table ascending, and with a
    /// table `cpu_freq_mhz` and `interactive.hispeed_freq_mhz` at most its
    /// top entry: a value above it would be set to the top (the table's
    /// lowest entry at or above it does not exist) while the report echoes
    /// the value given.
    fn check_clocks(&self) -> std::result::Result<(), SettingError> {
        let range = format!("{MIN_FREQ_MHZ}..={MAX_FREQ_MHZ} MHz");
        for (name, v) in [
            ("reference_freq_mhz", self.reference_freq_mhz),
            ("cpu_freq_mhz", self.cpu_freq_mhz),
        ] {
            if !(MIN_FREQ_MHZ..=MAX_FREQ_MHZ).contains(&v) {
                return Err(SettingError::invalid(
                    format!("host.{name}"),
                    format!("{v:?}"),
                    format!("a clock of {range}"),
                ));
            }
        }
        let t = &self.freq_table_mhz;
        let in_range = t.iter().all(|f| (MIN_FREQ_MHZ..=MAX_FREQ_MHZ).contains(f));
        if !in_range || t.windows(2).any(|w| w[0] >= w[1]) {
            return Err(SettingError::invalid(
                "host.freq_table_mhz",
                format!("{t:?}"),
                format!("clocks of {range} in ascending order"),
            ));
        }
        let hs = self.interactive.hispeed_freq_mhz;
        if !(hs == 0.0 || (MIN_FREQ_MHZ..=MAX_FREQ_MHZ).contains(&hs)) {
            return Err(SettingError::invalid(
                "host.interactive.hispeed_freq_mhz",
                format!("{hs:?}"),
                format!("0 (the table's top) or a clock of {range}"),
            ));
        }
        let Some(&top) = t.last() else {
            return Ok(());
        };
        for (name, v) in [
            ("cpu_freq_mhz", self.cpu_freq_mhz),
            ("interactive.hispeed_freq_mhz", hs),
        ] {
            if v > top {
                return Err(SettingError::conflict(
                    format!("host.{name}"),
                    format!("{v:?}"),
                    format!("above the top of host.freq_table_mhz = {t:?}; the governor sets the table's lowest entry at or above the value, so expected at most {top} MHz"),
                ));
            }
        }
        Ok(())
    }

    /// `io_is_busy` as the governor runs it: the setting, else the
    /// governor's default on ARM (see [`HostConfig::io_is_busy`]).
    pub fn io_is_busy_resolved(&self) -> bool {
        self.io_is_busy
            .unwrap_or(self.governor == GovernorKind::Intellidemand)
    }

    /// The µs values the per-layer costs are resolved from, for the
    /// scheduler `scheduler` (its dispatch cost).
    pub fn costs_us(&self, scheduler: &str) -> CostsUs {
        CostsUs {
            platform_call: self.platform_call_us,
            platform_per_kib: self.platform_us_per_kib,
            syscall_entry: self.syscall_entry_us,
            syscall: self.syscall_us,
            copy_per_kib: self.copy_us_per_kib,
            block_submit: self.block_submit_us,
            sched_dispatch: *self
                .sched_dispatch_us_per_scheduler
                .get(scheduler)
                .unwrap_or(&self.sched_dispatch_us),
            mmcqd_wakeup: self.mmcqd_wakeup_us,
            driver_prep: self.driver_prep_us,
            dma_per_kib: self.dma_us_per_kib,
            irq: self.irq_us,
            wakeup: self.wakeup_us,
            remote_wakeup: self.remote_wakeup_us,
        }
    }

    /// The costs at the userspace clock `cpu_freq_mhz` (no scheduler
    /// dispatch cost override).
    pub fn resolve(&self) -> LayerCosts {
        self.costs_us("")
            .at(self.reference_freq_mhz, self.cpu_freq_mhz)
    }
}

/// Merges the host profile named by `host.profile` in the scenario tree
/// `root` under the scenario's own `[host]` keys (which win); relative
/// paths resolve against `base_dir`. A scenario without a profile is left
/// as it is.
pub fn apply_host_profile(root: &mut toml::Value, base_dir: &Path) -> Result<()> {
    let Some(host) = root.get_mut("host").and_then(|h| h.as_table_mut()) else {
        return Ok(());
    };
    let path = match host.get("profile") {
        None => return Ok(()),
        Some(toml::Value::String(p)) => p.clone(),
        Some(other) => {
            return Err(SettingError::Invalid {
                key: "host.profile".into(),
                value: other.to_string(),
                expected: "a path to a host TOML (configs/hosts/)".into(),
            }
            .into())
        }
    };
    let full = if Path::new(&path).is_absolute() {
        Path::new(&path).to_path_buf()
    } else {
        base_dir.join(&path)
    };
    let text = crate::textfile::read_config(&full)?;
    let mut base: toml::Table =
        toml::from_str(&text).map_err(|e| Error::toml(full.display().to_string(), e))?;
    // A profile file may describe itself, and `simctl calibrate` records
    // how its values were fitted in `[calibration.record]`; those keys are
    // not host settings.
    base.remove("name");
    base.remove("description");
    // `[fit] targets` (what `simctl calibrate` fitted the values to) is
    // read by `simctl reproduce`, not by the host model.
    base.remove("fit");
    if let Some(cal) = base.remove("calibration") {
        let only_record = cal
            .as_table()
            .is_some_and(|t| t.keys().all(|k| k == "record"));
        if !only_record {
            return Err(Error::setting(
                full.display().to_string(),
                SettingError::Misplaced {
                    key: "[calibration]".into(),
                    rule: "in a host profile holds only the `record` table simctl calibrate writes",
                },
            ));
        }
    }
    if base.contains_key("profile") {
        return Err(Error::setting(
            full.display().to_string(),
            SettingError::Misplaced {
                key: "profile".into(),
                rule: "names another profile, which a host profile cannot do",
            },
        ));
    }
    for (k, v) in std::mem::take(host) {
        merge_value(&mut base, k, v);
    }
    *host = base;
    Ok(())
}

fn merge_value(base: &mut toml::Table, k: String, v: toml::Value) {
    match (base.get_mut(&k), v) {
        (Some(toml::Value::Table(b)), toml::Value::Table(o)) => {
            for (k2, v2) in o {
                merge_value(b, k2, v2);
            }
        }
        (_, v) => {
            base.insert(k, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_reproduce_the_static_cost_model() {
        let c = HostConfig::default().resolve();
        assert_eq!(c.syscall, 20_000);
        assert_eq!(c.platform(16384), 0);
        let slow = HostConfig {
            cpu_freq_mhz: 600.0,
            ..HostConfig::default()
        }
        .resolve();
        assert_eq!(slow.syscall, 2 * c.syscall);
    }

    #[test]
    fn bad_values_are_rejected_by_name() {
        let c = HostConfig {
            irq_us: -1.0,
            ..HostConfig::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("host.irq_us"));
        let g = HostConfig {
            governor: GovernorKind::Ondemand,
            ..HostConfig::default()
        };
        assert!(g
            .validate()
            .unwrap_err()
            .to_string()
            .contains("freq_table_mhz"));
        let irq = HostConfig {
            irq_core: Some(1),
            ..HostConfig::default()
        };
        assert!(irq
            .validate()
            .unwrap_err()
            .to_string()
            .contains("host.irq_core"));
    }

    /// A clock outside the stated range, or above the table's top (which
    /// the governor would silently set instead), is refused by name.
    #[test]
    fn clocks_are_in_range_and_within_the_table() {
        let table = vec![300.0, 600.0, 1190.4];
        for (f, table, want) in [
            (1e308, vec![], "expected a clock of 1..=100000 MHz"),
            (f64::INFINITY, vec![], "expected a clock of 1..=100000 MHz"),
            (f64::NAN, vec![], "expected a clock of 1..=100000 MHz"),
            (0.5, vec![], "expected a clock of 1..=100000 MHz"),
            (1e308, table.clone(), "expected a clock of"),
            (
                1200.0,
                table.clone(),
                "above the top of host.freq_table_mhz = [300.0, 600.0, 1190.4]",
            ),
        ] {
            let c = HostConfig {
                cpu_freq_mhz: f,
                freq_table_mhz: table,
                ..HostConfig::default()
            };
            let e = c.validate().unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("host.cpu_freq_mhz = {f:?}: ")) && e.contains(want),
                "{e}"
            );
        }
        let ok = HostConfig {
            cpu_freq_mhz: 1000.0,
            freq_table_mhz: table.clone(),
            ..HostConfig::default()
        };
        ok.validate().unwrap();
        let mut hs = ok.clone();
        hs.interactive.hispeed_freq_mhz = 2000.0;
        let e = hs.validate().unwrap_err().to_string();
        assert!(
            e.contains("host.interactive.hispeed_freq_mhz = 2000.0: above the top"),
            "{e}"
        );
    }

    #[test]
    fn a_profile_keeps_its_calibration_record_and_nothing_else_there() {
        let dir = std::env::temp_dir().join(format!("mmcsim-host-cal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let apply = |body: &str| {
            std::fs::write(dir.join("h.toml"), body).unwrap();
            let mut root: toml::Value = toml::from_str("[host]\nprofile = \"h.toml\"\n").unwrap();
            apply_host_profile(&mut root, &dir).map(|()| root)
        };
        let root =
            apply("syscall_us = 30.0\n[calibration.record]\ncommand = \"simctl calibrate\"\n")
                .unwrap();
        let host = root["host"].as_table().unwrap();
        assert!(
            host.get("calibration").is_none(),
            "the record is not a host setting"
        );
        assert_eq!(host["syscall_us"].as_float(), Some(30.0));
        let e = apply("[calibration]\nfudge = 2.0\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("h.toml") && e.contains("only the `record` table"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn scenario_keys_win_over_the_profile() {
        let dir = std::env::temp_dir().join(format!("mmcsim-hostprof-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("p.toml"),
            "name = \"x\"\ncores = 2\ncpu_freq_mhz = 800.0\n[ondemand]\nup_threshold = 80\nsampling_rate_us = 50000\n",
        )
        .unwrap();
        let mut v: toml::Value = toml::from_str(
            "[host]\nprofile = \"p.toml\"\ncpu_freq_mhz = 500.0\n[host.ondemand]\nup_threshold = 90\n",
        )
        .unwrap();
        apply_host_profile(&mut v, &dir).unwrap();
        let h: HostConfig = v["host"].clone().try_into().unwrap();
        assert_eq!(h.cores, 2);
        assert_eq!(h.cpu_freq_mhz, 500.0);
        assert_eq!(h.ondemand.up_threshold, 90);
        assert_eq!(h.ondemand.sampling_rate_us, 50_000);
        assert_eq!(h.profile.as_deref(), Some("p.toml"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
