//! The host software-overhead model: what the CPU spends per system call,
//! per bio, per request in the MMC driver and per completion.
//!
//! Every cost is a named parameter with its unit; values are engineering
//! estimates from reference/emmc-parameters.md §4 (\[est\]) for a 1.0-1.5 GHz
//! Cortex-A9/A7 phone, scaled by CPU frequency (DVFS): a cost written for
//! `reference_freq_mhz` takes `reference_freq_mhz / cpu_freq_mhz` times as
//! long at `cpu_freq_mhz`.

use crate::error::SettingError;
use crate::types::{us_to_ns, Ns};
use serde::{Deserialize, Serialize};

/// Host software costs. All times in microseconds at `reference_freq_mhz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// System call + VFS + ext4 lookup, per read()/write()/fsync() call, µs.
    /// \[est\] §4 "syscall + VFS + ext4: 20-60 µs".
    pub syscall_us: f64,
    /// Copy between page cache and user buffer, µs per KiB. \[est\] about
    /// 1 GB/s memcpy on a Cortex-A9.
    pub copy_us_per_kib: f64,
    /// Block layer + I/O scheduler, per bio submitted, µs. \[est\] §4
    /// "block layer + scheduler: 10-30 µs".
    pub block_submit_us: f64,
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
    /// Waking the thread that waits for the I/O, including the IPI when the
    /// completion lands on another core, µs. \[est\] §4.
    pub wakeup_us: f64,
    /// CPU clock the costs above were written for, MHz.
    pub reference_freq_mhz: f64,
    /// CPU clock the simulated phone runs at, MHz (DVFS operating point).
    pub cpu_freq_mhz: f64,
    /// Page cache size, MiB (RAM available for file pages). \[est\] half of a
    /// 1 GB phone's RAM.
    pub page_cache_mib: u64,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            syscall_us: 20.0,
            copy_us_per_kib: 1.0,
            block_submit_us: 10.0,
            mmcqd_wakeup_us: 15.0,
            driver_prep_us: 25.0,
            dma_us_per_kib: 0.1,
            irq_us: 10.0,
            wakeup_us: 15.0,
            reference_freq_mhz: 1200.0,
            cpu_freq_mhz: 1200.0,
            page_cache_mib: 512,
        }
    }
}

impl HostConfig {
    /// Checks that every cost is finite and non-negative and the clocks are
    /// positive.
    pub fn validate(&self) -> Result<(), SettingError> {
        let costs = [
            ("syscall_us", self.syscall_us),
            ("copy_us_per_kib", self.copy_us_per_kib),
            ("block_submit_us", self.block_submit_us),
            ("mmcqd_wakeup_us", self.mmcqd_wakeup_us),
            ("driver_prep_us", self.driver_prep_us),
            ("dma_us_per_kib", self.dma_us_per_kib),
            ("irq_us", self.irq_us),
            ("wakeup_us", self.wakeup_us),
        ];
        for (name, v) in costs {
            if !v.is_finite() || v < 0.0 {
                return Err(SettingError::Invalid {
                    key: format!("host.{name}"),
                    value: v.to_string(),
                    expected: "a non-negative number of µs",
                });
            }
        }
        for (name, v) in [
            ("reference_freq_mhz", self.reference_freq_mhz),
            ("cpu_freq_mhz", self.cpu_freq_mhz),
        ] {
            if !v.is_finite() || v <= 0.0 {
                return Err(SettingError::Invalid {
                    key: format!("host.{name}"),
                    value: v.to_string(),
                    expected: "a positive clock in MHz",
                });
            }
        }
        if self.page_cache_mib == 0 {
            return Err(SettingError::Invalid {
                key: "host.page_cache_mib".into(),
                value: "0".into(),
                expected: "at least 1 MiB",
            });
        }
        Ok(())
    }

    /// Resolves the costs to nanoseconds at the configured CPU clock.
    pub fn resolve(&self) -> HostCosts {
        let scale = self.reference_freq_mhz / self.cpu_freq_mhz;
        let ns = |us: f64| us_to_ns(us * scale);
        HostCosts {
            syscall: ns(self.syscall_us),
            copy_per_kib: self.copy_us_per_kib * scale * 1000.0,
            block_submit: ns(self.block_submit_us),
            mmcqd_wakeup: ns(self.mmcqd_wakeup_us),
            driver_prep: ns(self.driver_prep_us),
            dma_per_kib: self.dma_us_per_kib * scale * 1000.0,
            irq: ns(self.irq_us),
            wakeup: ns(self.wakeup_us),
        }
    }
}

/// [`HostConfig`] resolved to nanoseconds at the simulated CPU clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostCosts {
    /// Per system call, ns.
    pub syscall: Ns,
    /// Page-cache copy, ns per KiB.
    pub copy_per_kib: f64,
    /// Per bio submitted, ns.
    pub block_submit: Ns,
    /// Waking mmcqd, ns.
    pub mmcqd_wakeup: Ns,
    /// Driver setup per request, ns.
    pub driver_prep: Ns,
    /// DMA mapping, ns per KiB.
    pub dma_per_kib: f64,
    /// Interrupt + completion, ns.
    pub irq: Ns,
    /// Waking the waiting thread, ns.
    pub wakeup: Ns,
}

impl HostCosts {
    /// Copy cost of `bytes` between page cache and user space, ns.
    pub fn copy(&self, bytes: u64) -> Ns {
        (self.copy_per_kib * bytes as f64 / 1024.0).round() as Ns
    }

    /// Driver preparation of a request of `sectors` sectors (setup + DMA
    /// mapping), ns.
    pub fn prep(&self, sectors: u32) -> Ns {
        self.driver_prep + (self.dma_per_kib * sectors as f64 / 2.0).round() as Ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_the_cpu_clock_doubles_every_cost() {
        let base = HostConfig::default().resolve();
        let slow = HostConfig {
            cpu_freq_mhz: 600.0,
            ..HostConfig::default()
        }
        .resolve();
        assert_eq!(slow.syscall, 2 * base.syscall);
        assert_eq!(slow.prep(8), 2 * base.prep(8));
        assert_eq!(base.syscall, 20_000);
    }

    #[test]
    fn negative_costs_are_rejected_by_name() {
        let c = HostConfig {
            irq_us: -1.0,
            ..HostConfig::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "host.irq_us = -1: expected a non-negative number of µs"
        );
    }
}
