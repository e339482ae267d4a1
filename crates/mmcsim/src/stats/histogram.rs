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
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

/// Summary of a latency distribution, every field in **microseconds**.
///
/// An empty histogram summarises to all zeros.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
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

    /// Number of latencies recorded above `ns` (to the histogram's
    /// precision: values equivalent to `ns` count as not above).
    pub fn count_above(&self, ns: Ns) -> u64 {
        if self.hist.is_empty() || self.hist.max() <= ns {
            return 0;
        }
        self.hist.len() - self.hist.count_between(0, ns)
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

    /// Smallest recorded latency, ns (0 when empty).
    pub fn min_ns(&self) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.min()
        }
    }

    /// Largest recorded latency, ns (0 when empty).
    pub fn max_ns(&self) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.max()
        }
    }

    /// Mean latency, ns (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        self.hist.mean()
    }

    /// Standard deviation of the latencies, ns (0 when empty).
    pub fn stddev_ns(&self) -> f64 {
        self.hist.stdev()
    }

    /// The latency at percentile `p` (0..=100), ns: the highest value
    /// equivalent to the first bucket where the running count reaches
    /// `p` percent of the calls (0 when empty).
    pub fn percentile_ns(&self, p: f64) -> u64 {
        self.hist.value_at_percentile(p)
    }

    /// Number of latencies below `ns` (to the histogram's precision).
    pub fn count_below(&self, ns: Ns) -> u64 {
        if ns == 0 || self.hist.is_empty() {
            return 0;
        }
        self.hist.count_between(0, ns - 1)
    }

    /// The recorded buckets, ascending: (highest value equivalent to the
    /// bucket in ns, latencies in it).
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// Mean, percentiles and maximum in microseconds (zeros when empty).
    ///
    /// One pass over the recorded buckets gives every field, with exactly
    /// the numbers of hdrhistogram's own `mean` and `value_at_quantile`
    /// (each of which would scan the buckets again): a quantile `q` is the
    /// highest value equivalent to the first bucket at which the running
    /// count reaches `max(1, ceil(q × count))`; the mean sums each bucket's
    /// median-equivalent value × count / total in bucket order.
    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        let total = self.hist.len();
        let targets = SUMMARY_QUANTILES.map(|q| ((q * total as f64).ceil() as u64).max(1));
        let mut at = [0u64; SUMMARY_QUANTILES.len()];
        let mut found = 0;
        let mut running = 0u64;
        let mut mean = 0.0f64;
        for v in self.hist.iter_recorded() {
            let value = v.value_iterated_to();
            let count = v.count_at_value();
            mean += self.hist.median_equivalent(value) as f64 * count as f64 / total as f64;
            running += count;
            while found < at.len() && running >= targets[found] {
                at[found] = value;
                found += 1;
            }
        }
        let us = |ns: u64| ns as f64 / 1_000.0;
        LatencySummary {
            mean: mean / 1_000.0,
            p50: us(at[0]),
            p90: us(at[1]),
            p99: us(at[2]),
            p999: us(at[3]),
            max: us(self.hist.max()),
        }
    }
}

/// The whole distribution of a latency histogram, for a CDF drawn from
/// every recorded value rather than from a few percentiles (the report's
/// `latency_histogram`): the buckets hdrhistogram recorded, each as its
/// highest equivalent value in ns and its count, ascending.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LatencyDistribution {
    /// Unit of the bucket values: always `ns`.
    pub unit: &'static str,
    /// Significant decimal digits of the histogram (3: a bucket spans at
    /// most 0.1 % of its value).
    pub significant_digits: u8,
    /// `[value_ns, count]` per recorded bucket, ascending (one JSON line).
    #[schemars(with = "Vec<(u64, u64)>")]
    pub buckets: Buckets,
}

/// Recorded buckets `(highest equivalent value in ns, count)`, written as
/// one JSON line `[[v,c],...]` (a pretty-printed report keeps its other
/// keys one per line; thousands of pairs would not be readable there).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Buckets(pub Vec<(u64, u64)>);

impl Serialize for Buckets {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use std::fmt::Write;
        let mut text = String::with_capacity(2 + self.0.len() * 16);
        text.push('[');
        for (i, (v, c)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(text, "{sep}[{v},{c}]");
        }
        text.push(']');
        serde_json::value::RawValue::from_string(text)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

impl LatencyHistogram {
    /// The whole distribution ([`LatencyDistribution`]).
    pub fn distribution(&self) -> LatencyDistribution {
        LatencyDistribution {
            unit: "ns",
            significant_digits: SIGFIG,
            buckets: Buckets(self.buckets()),
        }
    }
}

/// The quantiles of [`LatencySummary`], ascending: p50, p90, p99, p99.9.
const SUMMARY_QUANTILES: [f64; 4] = [0.50, 0.90, 0.99, 0.999];

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

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

    /// The one-pass summary gives hdrhistogram's own numbers (its `mean`
    /// and `value_at_quantile`, each a separate scan) on random
    /// distributions: narrow and wide, few and many samples, with ties.
    #[test]
    fn one_pass_summary_matches_hdrhistogram_quantile_rule() {
        let mut rng = crate::engine::component_rng(1, "histogram summary test");
        let mut next = move || rng.random::<u64>();
        for case in 0..200u64 {
            let mut h = LatencyHistogram::new();
            let n = 1 + next() % [3, 50, 1000, 20_000][(case % 4) as usize];
            let span = 1u64 << (4 + next() % 40);
            for _ in 0..n {
                h.record(next() % span);
            }
            let hist = &h.hist;
            let us = |ns: u64| ns as f64 / 1_000.0;
            let expected = LatencySummary {
                mean: hist.mean() / 1_000.0,
                p50: us(hist.value_at_quantile(0.50)),
                p90: us(hist.value_at_quantile(0.90)),
                p99: us(hist.value_at_quantile(0.99)),
                p999: us(hist.value_at_quantile(0.999)),
                max: us(hist.max()),
            };
            let got = h.summary();
            assert_eq!(got.mean.to_bits(), expected.mean.to_bits(), "case {case}");
            assert_eq!(got, expected, "case {case}: {n} samples below {span} ns");
        }
    }

    #[test]
    fn summary_serializes_with_field_names() {
        let json = serde_json::to_string(&LatencySummary::default()).unwrap();
        for f in ["mean", "p50", "p90", "p99", "p999", "max"] {
            assert!(json.contains(&format!("\"{f}\"")), "{json}");
        }
    }
}
