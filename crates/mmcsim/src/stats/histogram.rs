//! Latency histogram: an HDR histogram of nanosecond latencies with a
//! microsecond summary for the report.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::types::Ns;

/// Significant decimal digits kept by the histogram (relative error ≤ 0.1 %).
const SIGFIG: u8 = 3;

/// A latency distribution, recorded in nanoseconds.
///
/// Backed by `hdrhistogram::Histogram<u64>` with 3 significant digits and
/// auto-resize, so any `u64` nanosecond value can be recorded.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

/// Summary of a latency distribution, every field in **microseconds**.
///
/// An empty histogram summarises to all zeros.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Mean latency, µs.
    pub mean: f64,
    /// Median (50th percentile), µs.
    pub p50: f64,
    /// 90th percentile, µs.
    pub p90: f64,
    /// 99th percentile, µs.
    pub p99: f64,
    /// 99.9th percentile, µs.
    pub p999: f64,
    /// Largest recorded latency, µs.
    pub max: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> LatencyHistogram {
        let mut hist = Histogram::<u64>::new(SIGFIG).expect("3 significant digits is valid");
        hist.auto(true);
        LatencyHistogram { hist }
    }

    /// Records one latency of `ns` nanoseconds.
    pub fn record(&mut self, ns: Ns) {
        if self.hist.record(ns).is_err() {
            // Only reachable if resizing is impossible; clamp rather than lose it.
            self.hist.saturating_record(ns);
        }
    }

    /// Number of latencies recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Adds every latency recorded in `other` to this histogram.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                self.hist
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Mean, percentiles and maximum in microseconds (zeros when empty).
    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| ns as f64 / 1_000.0;
        LatencySummary {
            mean: self.hist.mean() / 1_000.0,
            p50: us(self.hist.value_at_quantile(0.50)),
            p90: us(self.hist.value_at_quantile(0.90)),
            p99: us(self.hist.value_at_quantile(0.99)),
            p999: us(self.hist.value_at_quantile(0.999)),
            max: us(self.hist.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= b.abs() * rel + 1e-9
    }

    #[test]
    fn empty_is_zeros() {
        let h = LatencyHistogram::new();
        assert_eq!(h.count(), 0);
        assert_eq!(h.summary(), LatencySummary::default());
    }

    #[test]
    fn summary_is_in_microseconds() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * 1_000); // 1 µs .. 1000 µs
        }
        assert_eq!(h.count(), 1000);
        let s = h.summary();
        assert!(within(s.mean, 500.5, 0.002), "{s:?}");
        assert!(within(s.p50, 500.0, 0.002), "{s:?}");
        assert!(within(s.p90, 900.0, 0.002), "{s:?}");
        assert!(within(s.p99, 990.0, 0.002), "{s:?}");
        assert!(within(s.p999, 999.0, 0.002), "{s:?}");
        assert!(within(s.max, 1000.0, 0.002), "{s:?}");
    }

    #[test]
    fn records_large_values_and_merges() {
        let mut a = LatencyHistogram::new();
        a.record(3_600_000_000_000); // one hour
        let mut b = LatencyHistogram::new();
        b.record(0);
        b.record(2_000);
        a.merge(&b);
        assert_eq!(a.count(), 3);
        let s = a.summary();
        assert!(within(s.max, 3_600_000_000.0, 0.001), "{s:?}");
        assert!(within(s.p50, 2.0, 0.001), "{s:?}");
    }

    #[test]
    fn summary_serializes_with_field_names() {
        let json = serde_json::to_string(&LatencySummary::default()).unwrap();
        for f in ["mean", "p50", "p90", "p99", "p999", "max"] {
            assert!(json.contains(&format!("\"{f}\"")), "{json}");
        }
    }
}
