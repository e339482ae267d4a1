//! Judging a claim over seeds: the mean of the per-seed values of the
//! quantity a finding judges, a 95 % confidence interval from Student's t
//! distribution over those values, and a verdict that says on which side of
//! the claim's threshold the whole interval lies.
//!
//! PASS needs the interval entirely on the paper's side, FAIL entirely on
//! the other; an interval that straddles the threshold (a lead inside the
//! seed noise) is UNRESOLVED. One seed gives no interval, so it never
//! resolves a claim.

use std::fmt;

/// Two-sided 95 % quantiles of Student's t distribution, t(0.975, df) for
/// df = 1..=30 [src: NIST/SEMATECH e-Handbook of Statistical Methods,
/// §1.3.6.7.2, "Critical values of the Student's t distribution"].
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The normal quantile z(0.975), the limit of t(0.975, df).
const Z_975: f64 = 1.959_964;

/// t(0.975, df): the table up to 30 degrees of freedom, beyond it the
/// expansion z + (z³ + z) / (4 df) + (5z⁵ + 16z³ + 3z) / (96 df²) (within
/// 0.0002 of the exact value from df = 31 on) [src: Abramowitz & Stegun
/// 26.7.5].
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T_975[df - 1],
        _ => {
            let (z, d) = (Z_975, df as f64);
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// The mean of per-seed values and its 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Mean over the seeds, in the quantity's unit.
    pub mean: f64,
    /// Lower end of the 95 % interval (mean − t·s/√n).
    pub lo: f64,
    /// Upper end of the 95 % interval (mean + t·s/√n).
    pub hi: f64,
    /// Number of seeds.
    pub n: usize,
}

impl Interval {
    /// The Student-t 95 % interval of the mean of `values` (sample
    /// standard deviation, n − 1 degrees of freedom). One value gives an
    /// unbounded interval; a non-finite value gives NaN ends.
    pub fn of(values: &[f64]) -> Interval {
        let n = values.len();
        if n == 0 || values.iter().any(|v| !v.is_finite()) {
            return Interval {
                mean: f64::NAN,
                lo: f64::NAN,
                hi: f64::NAN,
                n,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Interval {
                mean,
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                n,
            };
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t_975(n - 1) * (var / n as f64).sqrt();
        Interval {
            mean,
            lo: mean - half,
            hi: mean + half,
            n,
        }
    }
}

/// The paper's side of a claim's threshold, in the quantity's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    /// The claim holds above the threshold.
    Above(f64),
    /// The claim holds below the threshold.
    Below(f64),
    /// The claim holds inside the band `[low, high]`.
    Within(f64, f64),
}

/// A verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// The interval lies on the paper's side.
    Pass,
    /// The interval straddles the threshold (or there is none).
    Unresolved,
    /// The interval lies entirely on the other side.
    Fail,
}

impl Outcome {
    /// `PASS`, `UNRESOLVED` or `FAIL`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Unresolved => "UNRESOLVED",
            Outcome::Fail => "FAIL",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Judges interval `i` against `side`.
pub fn judge(side: Side, i: &Interval) -> Outcome {
    // NaN ends (a seed without the quantity) or an empty interval.
    if i.lo.partial_cmp(&i.hi).is_none_or(|o| o.is_gt()) {
        return Outcome::Unresolved;
    }
    match side {
        Side::Above(t) if i.lo > t => Outcome::Pass,
        Side::Above(t) if i.hi <= t => Outcome::Fail,
        Side::Below(t) if i.hi < t => Outcome::Pass,
        Side::Below(t) if i.lo >= t => Outcome::Fail,
        Side::Within(a, b) if a <= i.lo && i.hi <= b => Outcome::Pass,
        Side::Within(a, b) if i.hi < a || i.lo > b => Outcome::Fail,
        _ => Outcome::Unresolved,
    }
}

/// A number as the verdict lines print it: four significant digits
/// (`inf`, `-inf`, `NaN` as such).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_students_t_over_the_seeds() {
        // 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303, half = 4.303/√3.
        let i = Interval::of(&[1.0, 2.0, 3.0]);
        assert_eq!(i.mean, 2.0);
        assert!((i.hi - 2.0 - 4.303 / 3f64.sqrt()).abs() < 1e-12, "{i:?}");
        assert!((i.lo - (2.0 - 4.303 / 3f64.sqrt())).abs() < 1e-12);
        // Identical seeds: no spread, the interval is the point.
        let i = Interval::of(&[1.5; 5]);
        assert_eq!((i.lo, i.hi), (1.5, 1.5));
        // t(0.975, 31) = 2.0395, t(0.975, 1000) = 1.9623.
        assert!((t_975(31) - 2.0395).abs() < 2e-4, "{}", t_975(31));
        assert!((t_975(1000) - 1.9623).abs() < 2e-4, "{}", t_975(1000));
    }

    /// A lead that every seed shows but that the seeds scatter around
    /// zero as much as it is large does not pass: it is UNRESOLVED, and
    /// only a lead clear of the noise passes.
    #[test]
    fn a_lead_inside_the_seed_noise_is_unresolved_not_pass() {
        let lead = [0.01, 0.39, 0.19, -0.25, 0.30];
        let i = Interval::of(&lead);
        assert!(i.mean > 0.0 && i.lo < 0.0, "{i:?}");
        assert_eq!(judge(Side::Above(0.0), &i), Outcome::Unresolved);
        let clear = [2.1, 2.5, 1.9, 2.3, 2.2];
        assert_eq!(
            judge(Side::Above(0.0), &Interval::of(&clear)),
            Outcome::Pass
        );
        let behind = [-2.1, -2.5, -1.9, -2.3, -2.2];
        assert_eq!(
            judge(Side::Above(0.0), &Interval::of(&behind)),
            Outcome::Fail
        );
        // No effect at all (every seed exactly at the threshold) fails a
        // strict claim.
        assert_eq!(
            judge(Side::Above(1.0), &Interval::of(&[1.0, 1.0])),
            Outcome::Fail
        );
    }

    #[test]
    fn bands_and_single_seeds() {
        let i = Interval::of(&[0.2, 0.21, 0.19]);
        assert_eq!(judge(Side::Within(0.1, 0.4), &i), Outcome::Pass);
        assert_eq!(judge(Side::Within(0.3, 0.4), &i), Outcome::Fail);
        assert_eq!(judge(Side::Within(0.2, 0.4), &i), Outcome::Unresolved);
        assert_eq!(judge(Side::Below(0.5), &i), Outcome::Pass);
        // One seed has no interval: never resolved.
        let one = Interval::of(&[9.0]);
        assert_eq!((one.lo, one.hi), (f64::NEG_INFINITY, f64::INFINITY));
        assert_eq!(judge(Side::Above(3.0), &one), Outcome::Unresolved);
        // A quantity a seed cannot give (no sample) is unresolved.
        let nan = Interval::of(&[1.0, f64::NAN]);
        assert_eq!(judge(Side::Above(0.0), &nan), Outcome::Unresolved);
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        let t: Vec<String> = [8.5012, 0.99971, -27.98, 1383.2, 0.0, f64::INFINITY]
            .into_iter()
            .map(num)
            .collect();
        assert_eq!(t, ["8.501", "0.9997", "-27.98", "1383", "0", "inf"]);
    }
}
