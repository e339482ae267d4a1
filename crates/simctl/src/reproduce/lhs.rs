//! Seeded Latin hypercube sampling of a profile's `[uncertain]` ranges, the
//! sampler behind `reproduce --ensemble M` (issue 27, item 3).
//!
//! Each numeric dimension is cut into `M` equal strata; every stratum is hit
//! exactly once per dimension, at a uniformly drawn point inside it, and the
//! strata are paired across dimensions by an independent seeded shuffle per
//! dimension (McKay, Beckman and Conover, Technometrics 1979). The generator
//! is SplitMix64 (Steele, Lea and Flood, OOPSLA 2014), written out here so the
//! sample is portable: the same seed gives the same points on every platform
//! and every build, independent of any crate's version.

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment, with
/// the Stafford "mix13" finaliser. Portable and seedable.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 uniformly distributed bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform double in `[0, 1)` from the top 53 bits.
    pub(crate) fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform index in `0..n` (`n > 0`), by rejection so there is no
    /// modulo bias.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

/// A Latin hypercube of `points` rows over `dims` dimensions, in unit
/// coordinates: `result[row][dim]` lies in stratum `k` of dimension `dim`,
/// i.e. in `[k / points, (k + 1) / points)`, and each stratum of each
/// dimension appears in exactly one row. Deterministic per `seed`.
pub(crate) fn latin_hypercube(points: usize, dims: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64::new(seed);
    let mut rows = vec![Vec::with_capacity(dims); points];
    for _ in 0..dims {
        let mut strata: Vec<usize> = (0..points).collect();
        // Fisher-Yates shuffle pairs strata with rows independently per dim.
        for i in (1..points).rev() {
            let j = rng.below(i + 1);
            strata.swap(i, j);
        }
        for (row, stratum) in rows.iter_mut().zip(strata) {
            row.push((stratum as f64 + rng.next_unit()) / points as f64);
        }
    }
    rows
}

/// Maps a unit coordinate onto the closed range `[lo, hi]` (same unit as the
/// range). Integer-valued keys round the result to the nearest integer, which
/// stays inside the range because both ends are integers.
pub(crate) fn scale(unit: f64, lo: f64, hi: f64, integer: bool) -> f64 {
    let v = lo + unit * (hi - lo);
    if integer {
        v.round().clamp(lo, hi)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stratum_is_hit_once_per_dimension() {
        let m = 32;
        let sample = latin_hypercube(m, 5, 7);
        assert_eq!(sample.len(), m);
        for dim in 0..5 {
            let mut hit = vec![0; m];
            for row in &sample {
                let u = row[dim];
                assert!((0.0..1.0).contains(&u), "unit coordinate {u} out of [0,1)");
                hit[(u * m as f64) as usize] += 1;
            }
            assert!(hit.iter().all(|&h| h == 1), "dim {dim}: strata {hit:?}");
        }
    }

    #[test]
    fn same_seed_same_sample_other_seed_other_sample() {
        assert_eq!(latin_hypercube(8, 3, 42), latin_hypercube(8, 3, 42));
        assert_ne!(latin_hypercube(8, 3, 42), latin_hypercube(8, 3, 43));
    }

    #[test]
    fn scaled_points_stay_within_bounds() {
        for row in latin_hypercube(16, 2, 1) {
            let entries = scale(row[0], 8.0, 64.0, true);
            assert!((8.0..=64.0).contains(&entries) && entries.fract() == 0.0);
            let kib = scale(row[1], 16.0, 32.0, false);
            assert!((16.0..=32.0).contains(&kib));
        }
    }

    #[test]
    fn splitmix_matches_the_reference_stream() {
        // First output for seed 0 of the reference C implementation.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }
}
