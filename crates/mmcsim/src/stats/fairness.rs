//! Fairness indices over per-thread (or per-process) results.

/// Jain's fairness index of `values`: (Σx)² / (n · Σx²), dimensionless.
///
/// It is 1.0 when every value is equal and 1/n when a single one of the n
/// values is non-zero. By convention an empty input, or one whose values are
/// all zero (nobody got anything, so nobody got less than the others), gives
/// 1.0. Values are expected to be non-negative and finite (throughputs,
/// inverse latencies, ...).
pub fn jain(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 1.0;
    }
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|x| x * x).sum();
    if sum_sq == 0.0 {
        return 1.0;
    }
    (sum * sum) / (values.len() as f64 * sum_sq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn equal_values_are_perfectly_fair() {
        assert!(close(jain(&[3.0, 3.0, 3.0, 3.0]), 1.0));
        assert!(close(jain(&[7.5]), 1.0));
    }

    #[test]
    fn one_of_n_nonzero_gives_one_over_n() {
        assert!(close(jain(&[5.0, 0.0, 0.0, 0.0]), 0.25));
        assert!(close(jain(&[0.0, 2.0]), 0.5));
    }

    #[test]
    fn known_mixed_value() {
        // (1+2+3)^2 / (3 * (1+4+9)) = 36/42
        assert!(close(jain(&[1.0, 2.0, 3.0]), 36.0 / 42.0));
    }

    #[test]
    fn empty_and_all_zero_are_one() {
        assert!(close(jain(&[]), 1.0));
        assert!(close(jain(&[0.0, 0.0, 0.0]), 1.0));
    }
}
