//! Recorded against simulated per-request timings, distribution against
//! distribution (`trace.validation`): for each direction and size class,
//! the count, p50, p90, p99 and max of what the trace recorded and of what
//! the simulation gave the same records, and the two-sample
//! Kolmogorov–Smirnov statistic D (the largest vertical distance between
//! the two CDFs) with its critical value at the 5 % level.
//!
//! Two times are compared, each only where the trace records it:
//! - **device service**: recorded hardware submit → finish (BIOTracer's
//!   7th and 8th columns); simulated, the driver issuing the record's
//!   command on the bus → the device completing it (`DeviceTimes::start` →
//!   `DeviceTimes::done`, CMD13 polling included);
//! - **total latency**: recorded generate → finish (BIOTracer's 5th and 8th
//!   columns; a completion time in other formats); simulated, the record's
//!   submission by the replay stage (its trace time) → its last bio's
//!   completion event reaching the replay stage.
//!
//! Distributions are HDR histograms (3 significant digits); D is computed
//! on their buckets, which both sides share, so it is exact up to the
//! 0.1 % bucket width.

use crate::stats::histogram::{Buckets, LatencyHistogram};
use crate::types::Ns;
use serde::Serialize;

/// The request-size classes of the comparison, by bytes: up to 4 KiB,
/// 8-16 KiB, 17-64 KiB, above 64 KiB (the classes the Nexus 5 log was
/// first compared in, issue 31).
pub const SIZE_CLASSES: [&str; 4] = ["4KiB", "8-16KiB", "17-64KiB", ">64KiB"];

/// `c(α)` of the two-sample Kolmogorov–Smirnov test at α = 0.05:
/// `sqrt(−ln(α/2) / 2)` = 1.358 (Smirnov's asymptotic distribution; e.g.
/// Press et al., *Numerical Recipes*, 3rd ed., §14.3.3) [src: Smirnov 1948,
/// "Table for estimating the goodness of fit of empirical distributions",
/// Ann. Math. Stat. 19(2)]. Asymptotic: for a few dozen records per side
/// it is approximate.
pub const KS_C_05: f64 = 1.358_1;

/// One side (recorded or simulated) of a comparison row.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SideSummary {
    /// Requests of this direction and class, count.
    pub count: u64,
    /// Median, µs.
    pub p50_us: f64,
    /// 90th percentile, µs.
    pub p90_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Largest value, µs.
    pub max_us: f64,
    /// The whole distribution, `[value_ns, count]` per HDR bucket,
    /// ascending (one JSON line): what `simctl plot --kind cdf` draws.
    #[schemars(with = "Vec<(u64, u64)>")]
    pub buckets_ns: Buckets,
}

impl SideSummary {
    fn of(h: &LatencyHistogram) -> SideSummary {
        let s = h.summary();
        SideSummary {
            count: h.count(),
            p50_us: s.p50,
            p90_us: s.p90,
            p99_us: s.p99,
            max_us: s.max,
            buckets_ns: Buckets(h.buckets()),
        }
    }
}

/// One direction and size class: recorded beside simulated.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ValidationRow {
    /// `read` or `write`.
    pub direction: &'static str,
    /// One of `4KiB`, `8-16KiB`, `17-64KiB`, `>64KiB`.
    pub size_class: &'static str,
    /// What the trace recorded.
    pub recorded: SideSummary,
    /// What the simulation gave the same records.
    pub simulated: SideSummary,
    /// Two-sample Kolmogorov–Smirnov D: the largest distance between the
    /// recorded and simulated CDFs, in [0, 1].
    pub ks_d: f64,
    /// D's critical value at the 5 % level for these counts,
    /// `1.358 · sqrt((n + m) / (n · m))` (asymptotic).
    pub ks_critical_05: f64,
    /// `ks_d > ks_critical_05`: the distributions differ at the 5 % level.
    pub differs_05: bool,
}

/// The report's `trace.validation`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Validation {
    /// Device service: recorded hardware submit → finish; simulated, the
    /// command issued on the bus → the device done. Empty when the trace
    /// records no hardware-submit time.
    pub device_service: Vec<ValidationRow>,
    /// Total latency: recorded generate → finish; simulated, the record
    /// submitted by the replay stage → its completion reaching it.
    pub total_latency: Vec<ValidationRow>,
}

/// Recorded and simulated histograms of one time, by `[read, write][class]`.
#[derive(Clone, Debug, Default)]
pub struct Pairs {
    hist: [[(LatencyHistogram, LatencyHistogram); 4]; 2],
}

impl Pairs {
    /// Notes one record: direction `dir` (0 read, 1 write), class `class`
    /// (index into [`SIZE_CLASSES`]), `recorded` and `simulated` ns.
    pub fn record(&mut self, dir: usize, class: usize, recorded: Ns, simulated: Ns) {
        let (r, s) = &mut self.hist[dir][class];
        r.record(recorded);
        s.record(simulated);
    }

    /// The recorded and simulated histograms of `dir` and `class`.
    pub fn get(&self, dir: usize, class: usize) -> &(LatencyHistogram, LatencyHistogram) {
        &self.hist[dir][class]
    }

    /// The rows with at least one record, reads first, classes in order.
    pub fn rows(&self) -> Vec<ValidationRow> {
        let mut rows = Vec::new();
        for (dir, name) in ["read", "write"].into_iter().enumerate() {
            for (c, class) in SIZE_CLASSES.into_iter().enumerate() {
                let (r, s) = &self.hist[dir][c];
                if r.count() == 0 {
                    continue;
                }
                let d = ks_statistic(&r.buckets(), &s.buckets());
                let crit = ks_critical_05(r.count(), s.count());
                rows.push(ValidationRow {
                    direction: name,
                    size_class: class,
                    recorded: SideSummary::of(r),
                    simulated: SideSummary::of(s),
                    ks_d: d,
                    ks_critical_05: crit,
                    differs_05: d > crit,
                });
            }
        }
        rows
    }
}

/// The two-sample Kolmogorov–Smirnov statistic of two distributions given
/// as `(value, count)` pairs ascending by value: `max |F_a(x) − F_b(x)|`
/// over every value either holds. 0 when either is empty.
pub fn ks_statistic(a: &[(u64, u64)], b: &[(u64, u64)]) -> f64 {
    let (na, nb) = (total(a), total(b));
    if na == 0 || nb == 0 {
        return 0.0;
    }
    let (mut i, mut j, mut ca, mut cb) = (0, 0, 0u64, 0u64);
    let mut d: f64 = 0.0;
    while i < a.len() || j < b.len() {
        let x = match (a.get(i), b.get(j)) {
            (Some(p), Some(q)) => p.0.min(q.0),
            (Some(p), None) => p.0,
            (None, Some(q)) => q.0,
            (None, None) => break,
        };
        while i < a.len() && a[i].0 == x {
            ca += a[i].1;
            i += 1;
        }
        while j < b.len() && b[j].0 == x {
            cb += b[j].1;
            j += 1;
        }
        d = d.max((ca as f64 / na as f64 - cb as f64 / nb as f64).abs());
    }
    d
}

fn total(v: &[(u64, u64)]) -> u64 {
    v.iter().map(|p| p.1).sum()
}

/// The critical value of the two-sample D at the 5 % level for `n` and
/// `m` observations ([`KS_C_05`]); 1 (never exceeded) when either is 0.
pub fn ks_critical_05(n: u64, m: u64) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    let (n, m) = (n as f64, m as f64);
    KS_C_05 * ((n + m) / (n * m)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_distribution_against_itself_has_d_zero() {
        let a = [(10, 3), (20, 1), (400, 7)];
        assert_eq!(ks_statistic(&a, &a), 0.0);
    }

    #[test]
    fn disjoint_distributions_have_d_one() {
        assert_eq!(ks_statistic(&[(1, 5), (2, 5)], &[(3, 1), (9, 2)]), 1.0);
    }

    #[test]
    fn d_is_the_largest_cdf_gap() {
        // a: 1, 2, 3, 4; b: 3, 4, 5, 6 → at x = 2, F_a = 0.5 and F_b = 0.
        let a = [(1, 1), (2, 1), (3, 1), (4, 1)];
        let b = [(3, 1), (4, 1), (5, 1), (6, 1)];
        assert!((ks_statistic(&a, &b) - 0.5).abs() < 1e-12);
        // Ties count on both sides at once.
        assert_eq!(ks_statistic(&[(5, 2)], &[(5, 9)]), 0.0);
    }

    #[test]
    fn the_critical_value_shrinks_with_the_counts() {
        let c = ks_critical_05(100, 100);
        assert!((c - 1.3581 * (0.02f64).sqrt()).abs() < 1e-9);
        assert!(ks_critical_05(1000, 1000) < c);
        assert_eq!(ks_critical_05(0, 5), 1.0);
    }

    #[test]
    fn rows_summarise_both_sides() {
        let mut p = Pairs::default();
        for k in 1..=100u64 {
            p.record(1, 0, k * 1000, k * 1000);
        }
        p.record(0, 2, 50_000, 5_000);
        let rows = p.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].direction, rows[0].size_class),
            ("read", "17-64KiB")
        );
        assert_eq!(rows[0].ks_d, 1.0);
        let w = &rows[1];
        assert_eq!((w.recorded.count, w.simulated.count), (100, 100));
        assert_eq!(w.ks_d, 0.0);
        assert!(!w.differs_05);
        assert!((w.recorded.p50_us - 50.0).abs() < 0.1);
        assert!((w.recorded.max_us - 100.0).abs() < 0.1);
    }
}
