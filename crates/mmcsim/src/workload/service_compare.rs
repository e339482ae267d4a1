//! Recorded against simulated device service, for traces that record when
//! each request reached the hardware and when it finished (BIOTracer's
//! hardware-submit and finish times): per direction and size class, the
//! median service the trace recorded beside the one the simulated device
//! gave the same record (its command issued on the bus → the device done;
//! `driver::DeviceTimes` `start` → `done`). The JSON section is
//! `trace.recorded_vs_simulated`; the whole distributions, and total
//! latency, are `trace.validation` (module [`super::validation`]).

use crate::types::{Ns, Op, SECTOR_BYTES};
use crate::workload::validation::{Pairs, Validation};
use serde::Serialize;

pub use crate::workload::validation::SIZE_CLASSES;

/// The class index of a request of `bytes`.
pub fn size_class(bytes: u64) -> usize {
    match bytes {
        0..=4096 => 0,
        4097..=16384 => 1,
        16385..=65536 => 2,
        _ => 3,
    }
}

/// One row: a direction and size class with both medians.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ServiceRow {
    /// `read` or `write`.
    pub direction: &'static str,
    /// One of [`SIZE_CLASSES`].
    pub size_class: &'static str,
    /// Records of this direction and class that completed.
    pub requests: u64,
    /// Median recorded device service (hardware submit → finish), µs.
    pub recorded_p50_us: f64,
    /// Median simulated device service (command on the bus → done), µs.
    pub simulated_p50_us: f64,
    /// Simulated ÷ recorded median (0 when the recorded median is 0).
    pub simulated_over_recorded: f64,
}

/// Recorded and simulated device service and total latency by direction
/// and class, paired record by record.
#[derive(Clone, Debug, Default)]
pub struct ServiceComparison {
    service: Pairs,
    total: Pairs,
}

/// What the trace recorded of one record, kept by the replay stage from
/// its submission to its completion (by call id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The record's operation.
    pub op: Op,
    /// Its length, sectors.
    pub sectors: u32,
    /// Recorded device service (hardware submit → finish), ns, if the
    /// trace records a hardware-submit time.
    pub service: Option<Ns>,
    /// Recorded total latency (generate → finish), ns.
    pub total: Ns,
}

impl ServiceComparison {
    /// Notes a completed record `rec` whose simulated device service was
    /// `service` ns and total latency `total` ns. Discards and flushes are
    /// not compared.
    pub fn record(&mut self, rec: Recorded, service: Ns, total: Ns) {
        let dir = match rec.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Discard | Op::Flush => return,
        };
        let c = size_class(u64::from(rec.sectors) * SECTOR_BYTES);
        if let Some(s) = rec.service {
            self.service.record(dir, c, s, service);
        }
        self.total.record(dir, c, rec.total, total);
    }

    /// The device-service medians side by side, reads first, classes in
    /// order; `None` when no device service was compared.
    pub fn rows(&self) -> Option<Vec<ServiceRow>> {
        let mut rows = Vec::new();
        for (dir, name) in ["read", "write"].into_iter().enumerate() {
            for (c, class) in SIZE_CLASSES.into_iter().enumerate() {
                let (r, s) = self.service.get(dir, c);
                if r.count() == 0 {
                    continue;
                }
                let (rp, sp) = (r.summary().p50, s.summary().p50);
                rows.push(ServiceRow {
                    direction: name,
                    size_class: class,
                    requests: r.count(),
                    recorded_p50_us: rp,
                    simulated_p50_us: sp,
                    simulated_over_recorded: if rp > 0.0 { sp / rp } else { 0.0 },
                });
            }
        }
        (!rows.is_empty()).then_some(rows)
    }

    /// The report's `trace.validation`; `None` when no record carried a
    /// recorded completion.
    pub fn validation(&self) -> Option<Validation> {
        let total = self.total.rows();
        (!total.is_empty()).then(|| Validation {
            device_service: self.service.rows(),
            total_latency: total,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_split_at_4_16_and_64_kib() {
        assert_eq!(size_class(512), 0);
        assert_eq!(size_class(4096), 0);
        assert_eq!(size_class(8192), 1);
        assert_eq!(size_class(16384), 1);
        assert_eq!(size_class(20480), 2);
        assert_eq!(size_class(65536), 2);
        assert_eq!(size_class(65536 + 4096), 3);
    }

    #[test]
    fn rows_pair_the_medians_of_each_direction_and_class() {
        let mut c = ServiceComparison::default();
        assert!(c.rows().is_none());
        let rec = |op, sectors, service, total| Recorded {
            op,
            sectors,
            service: Some(service),
            total,
        };
        c.record(rec(Op::Write, 8, 700_000, 800_000), 80_000, 90_000);
        c.record(rec(Op::Write, 8, 702_000, 800_000), 90_000, 95_000);
        c.record(rec(Op::Read, 32, 400_000, 500_000), 420_000, 430_000);
        c.record(rec(Op::Flush, 0, 1, 1), 1, 1);
        let rows = c.rows().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].direction, rows[0].size_class), ("read", "8-16KiB"));
        assert_eq!((rows[1].direction, rows[1].requests), ("write", 2));
        assert!((rows[1].recorded_p50_us - 700.0).abs() < 1.0);
        assert!((rows[1].simulated_p50_us - 80.0).abs() < 0.1);
        let v = c.validation().unwrap();
        assert_eq!(v.device_service.len(), 2);
        assert_eq!(v.total_latency[1].recorded.count, 2);
        assert_eq!(v.total_latency[1].simulated.count, 2);
    }
}
