//! Per-layer host CPU costs resolved to nanoseconds at one clock frequency.
//!
//! A cost written as µs at `reference_freq_mhz` takes
//! `reference_freq_mhz / f` times as long at frequency `f` (the work is a
//! fixed number of cycles). The arithmetic is the one the static cost model
//! used, so a fixed clock reproduces its values to the nanosecond.

use crate::types::{us_to_ns, Ns};

/// Costs at one frequency, ns (per-KiB costs as fractional ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerCosts {
    /// Platform layer (Dalvik → libcore → JNI) per call, ns.
    pub platform_call: Ns,
    /// Platform layer per KiB of the call's buffer, ns.
    pub platform_per_kib: f64,
    /// System-call entry and exit, ns.
    pub syscall_entry: Ns,
    /// System call + VFS + file system per call, ns.
    pub syscall: Ns,
    /// Page-cache copy, ns per KiB.
    pub copy_per_kib: f64,
    /// Block layer per bio submitted, ns.
    pub block_submit: Ns,
    /// I/O scheduler dispatch hook per request, ns.
    pub sched_dispatch: Ns,
    /// Waking `mmcqd`, ns.
    pub mmcqd_wakeup: Ns,
    /// Driver command setup per request, ns.
    pub driver_prep: Ns,
    /// DMA mapping and cache maintenance, ns per KiB.
    pub dma_per_kib: f64,
    /// Interrupt handling and request completion, ns.
    pub irq: Ns,
    /// Waking the waiting thread, ns.
    pub wakeup: Ns,
    /// Remote wake-up work on the target core after an IPI, ns.
    pub remote_wakeup: Ns,
}

/// The µs-at-reference values a [`LayerCosts`] is resolved from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostsUs {
    /// Platform per call, µs.
    pub platform_call: f64,
    /// Platform per KiB, µs.
    pub platform_per_kib: f64,
    /// System-call entry/exit, µs.
    pub syscall_entry: f64,
    /// System call + VFS + file system, µs.
    pub syscall: f64,
    /// Copy, µs per KiB.
    pub copy_per_kib: f64,
    /// Block layer per bio, µs.
    pub block_submit: f64,
    /// Scheduler dispatch hook, µs.
    pub sched_dispatch: f64,
    /// mmcqd wake-up, µs.
    pub mmcqd_wakeup: f64,
    /// Driver setup, µs.
    pub driver_prep: f64,
    /// DMA, µs per KiB.
    pub dma_per_kib: f64,
    /// IRQ, µs.
    pub irq: f64,
    /// Thread wake-up, µs.
    pub wakeup: f64,
    /// Remote wake-up, µs.
    pub remote_wakeup: f64,
}

impl CostsUs {
    /// Resolves to ns at `freq_mhz` for costs written at `reference_mhz`.
    pub fn at(&self, reference_mhz: f64, freq_mhz: f64) -> LayerCosts {
        let scale = reference_mhz / freq_mhz;
        let ns = |us: f64| us_to_ns(us * scale);
        LayerCosts {
            platform_call: ns(self.platform_call),
            platform_per_kib: self.platform_per_kib * scale * 1000.0,
            syscall_entry: ns(self.syscall_entry),
            syscall: ns(self.syscall),
            copy_per_kib: self.copy_per_kib * scale * 1000.0,
            block_submit: ns(self.block_submit),
            sched_dispatch: ns(self.sched_dispatch),
            mmcqd_wakeup: ns(self.mmcqd_wakeup),
            driver_prep: ns(self.driver_prep),
            dma_per_kib: self.dma_per_kib * scale * 1000.0,
            irq: ns(self.irq),
            wakeup: ns(self.wakeup),
            remote_wakeup: ns(self.remote_wakeup),
        }
    }
}

impl LayerCosts {
    /// Page-cache copy of `bytes`, ns.
    pub fn copy(&self, bytes: u64) -> Ns {
        (self.copy_per_kib * bytes as f64 / 1024.0).round() as Ns
    }

    /// Platform layer for a call moving `bytes`, ns.
    pub fn platform(&self, bytes: u64) -> Ns {
        self.platform_call + (self.platform_per_kib * bytes as f64 / 1024.0).round() as Ns
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
    fn halving_the_clock_doubles_every_cost() {
        let us = CostsUs {
            platform_call: 10.0,
            platform_per_kib: 0.5,
            syscall_entry: 1.0,
            syscall: 20.0,
            copy_per_kib: 1.0,
            block_submit: 10.0,
            sched_dispatch: 2.0,
            mmcqd_wakeup: 15.0,
            driver_prep: 25.0,
            dma_per_kib: 0.1,
            irq: 10.0,
            wakeup: 15.0,
            remote_wakeup: 5.0,
        };
        let base = us.at(1200.0, 1200.0);
        let slow = us.at(1200.0, 600.0);
        assert_eq!(base.syscall, 20_000);
        assert_eq!(slow.syscall, 2 * base.syscall);
        assert_eq!(slow.prep(8), 2 * base.prep(8));
        assert_eq!(slow.platform(4096), 2 * base.platform(4096));
    }
}
