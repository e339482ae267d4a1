//! Offset distributions of random jobs (fio's `random_distribution`):
//! which block of a region a random I/O addresses. Uniform draws are the
//! offset generator's own; this module holds the skewed ones, each drawn
//! as fio's `lib/zipf.c` and `lib/gauss.c` draw them, over `nranges`
//! blocks, from the job thread's seeded stream:
//!
//! * **zipf:θ** — the rank `k` of a Zipf(θ) law by Gray et al.'s
//!   approximation (zeta(n, θ) summed over at most 10⁷ terms, as fio
//!   caps it), then scattered over the region by fio's multiplicative
//!   hash (`k × 0x61C8864680B583EB`) plus an offset (random, or
//!   `center × nranges`), modulo `nranges`. The hottest blocks are thus
//!   spread over the file, not packed at its start.
//! * **pareto:h** — rank `(nranges − 1) × u^(ln h / ln(1 − h))`, hashed
//!   and offset the same way.
//! * **normal:σ** — the mean of 12 uniform draws over `0..=nranges`,
//!   displaced by a uniform deviation of width `σ %` of the region, hashed
//!   and offset by `(center − 0.5) × nranges`.
//! * **zoned** / **zoned_abs** — a zone chosen by its access percentage,
//!   then a uniform block within it (zones by percent of the region or by
//!   absolute bytes).
//!
//! [src: fio `lib/zipf.c` (zipf_init, zipf_next, pareto_next),
//! `lib/gauss.c` (gauss_init, gauss_next), `io_u.c`
//! (__get_next_rand_offset_zoned, _zoned_abs), `hash.h`
//! (GOLDEN_RATIO_64)]. fio draws from its Tausworthe generator; mmcsim
//! uses the thread's portable seeded stream, so the blocks differ from a
//! real fio run's while the distribution is the same.

use crate::engine::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// fio's hash multiplier (`GOLDEN_RATIO_64`, `hash.h`).
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// Terms of zeta(n, θ) fio sums at most (`ZIPF_MAX_GEN`, `lib/zipf.c`).
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// Uniform draws averaged per normal sample (`GAUSS_ITERS`, `lib/gauss.c`).
const GAUSS_ITERS: u64 = 12;

/// One zone of a zoned distribution: `access_percent` of the random I/Os
/// fall uniformly in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    /// Percent of the random I/Os addressing this zone, 0..=100.
    pub access_percent: u32,
    /// Size of the zone: percent of the region (`zoned`) ...
    #[serde(default)]
    pub size_percent: Option<u32>,
    /// ... or bytes (`zoned_abs`).
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

/// How a random job picks blocks (fio `random_distribution`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Distribution {
    /// Every block equally likely (fio `random`, the default).
    #[default]
    Uniform,
    /// Zipf with exponent `theta` (> 0, ≠ 1); `center` 0..=1 places the
    /// hottest block (default: a random place).
    Zipf {
        /// The Zipf exponent θ.
        theta: f64,
        /// Where the distribution starts, as a fraction of the region.
        #[serde(default)]
        center: Option<f64>,
    },
    /// Pareto with power `h` (0 < h < 1).
    Pareto {
        /// The Pareto power h.
        h: f64,
        /// Where the distribution starts, as a fraction of the region.
        #[serde(default)]
        center: Option<f64>,
    },
    /// Normal around the region's middle (or `center`), deviation
    /// `dev_percent` (0 ≤ σ < 100) percent of the region.
    Normal {
        /// Deviation, percent of the region.
        dev_percent: f64,
        /// Centre as a fraction of the region (default 0.5).
        #[serde(default)]
        center: Option<f64>,
    },
    /// Zones of the region with their share of the I/O; the zones'
    /// `access_percent` add up to 100, each zone gives `size_percent`
    /// (`zoned`) or `size_bytes` (`zoned_abs`).
    Zoned {
        /// The zones, from the start of the region.
        zones: Vec<Zone>,
    },
}

/// Why an offset distribution's parameters are unusable (the checks of
/// fio's `options.c`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DistributionError {
    /// zipf θ not finite, not positive, or 1.
    #[error("zipf theta = {theta}: expected a finite θ > 0 other than 1.0")]
    ZipfTheta {
        /// The θ given.
        theta: f64,
    },
    /// pareto h outside (0, 1).
    #[error("pareto h = {h}: expected 0 < h < 1")]
    ParetoH {
        /// The h given.
        h: f64,
    },
    /// normal σ outside [0, 100).
    #[error("normal deviation = {dev_percent}: expected 0 ≤ σ < 100 (percent of the region)")]
    NormalDeviation {
        /// The σ given, percent of the region.
        dev_percent: f64,
    },
    /// A centre outside 0..=1.
    #[error("{kind} center: expected 0..=1")]
    Center {
        /// `zipf`, `pareto` or `normal`.
        kind: &'static str,
    },
    /// No zone, or more than 256.
    #[error("zoned: expected 1 to 256 zones")]
    ZoneCount,
    /// Access percentages that do not add up to 100.
    #[error("zoned: the zones' access percentages add up to {sum}: expected 100")]
    ZoneAccess {
        /// Their sum.
        sum: u32,
    },
    /// Zones sized partly in percent and partly in bytes.
    #[error("zoned: give every zone a size_percent, or every zone a size_bytes")]
    ZoneSizeKinds,
    /// Zone sizes above 100 % of the region.
    #[error("zoned: the zones' sizes add up to {sum} % of the region: expected at most 100")]
    ZoneSizes {
        /// Their sum, percent.
        sum: u32,
    },
    /// A zone of size 0.
    #[error("zoned: a zone of size 0 cannot hold an I/O")]
    EmptyZone,
    /// Absolute zones larger than the job's region.
    #[error(
        "zoned_abs: the zones add up to {total} bytes, more than the {region_bytes}-byte region"
    )]
    ZonesBeyondRegion {
        /// Their sum, bytes.
        total: u64,
        /// The region, bytes.
        region_bytes: u64,
    },
}

impl Distribution {
    /// Checks the parameters fio checks (`options.c`): zipf θ positive
    /// and not 1, pareto 0 < h < 1, normal 0 ≤ σ < 100, centre 0..=1,
    /// zones whose accesses add up to 100 and whose sizes are all percent
    /// or all bytes (percentages at most 100 in all).
    pub fn check(&self) -> Result<(), DistributionError> {
        let center = |kind, c: &Option<f64>| match c {
            Some(c) if !(0.0..=1.0).contains(c) => Err(DistributionError::Center { kind }),
            _ => Ok(()),
        };
        match self {
            Distribution::Uniform => Ok(()),
            Distribution::Zipf { theta, center: c } => {
                if !(theta.is_finite() && *theta > 0.0 && *theta != 1.0) {
                    return Err(DistributionError::ZipfTheta { theta: *theta });
                }
                center("zipf", c)
            }
            Distribution::Pareto { h, center: c } => {
                if !(*h > 0.0 && *h < 1.0) {
                    return Err(DistributionError::ParetoH { h: *h });
                }
                center("pareto", c)
            }
            Distribution::Normal {
                dev_percent,
                center: c,
            } => {
                if !(*dev_percent >= 0.0 && *dev_percent < 100.0) {
                    return Err(DistributionError::NormalDeviation {
                        dev_percent: *dev_percent,
                    });
                }
                center("normal", c)
            }
            Distribution::Zoned { zones } => check_zones(zones),
        }
    }

    /// True for every distribution but the uniform one.
    pub fn is_skewed(&self) -> bool {
        *self != Distribution::Uniform
    }
}

fn check_zones(zones: &[Zone]) -> Result<(), DistributionError> {
    if zones.is_empty() || zones.len() > 256 {
        return Err(DistributionError::ZoneCount);
    }
    let access: u32 = zones.iter().map(|z| z.access_percent).sum();
    if access != 100 {
        return Err(DistributionError::ZoneAccess { sum: access });
    }
    let by_percent = zones
        .iter()
        .all(|z| z.size_percent.is_some() && z.size_bytes.is_none());
    let by_bytes = zones
        .iter()
        .all(|z| z.size_bytes.is_some() && z.size_percent.is_none());
    if !(by_percent || by_bytes) {
        return Err(DistributionError::ZoneSizeKinds);
    }
    if by_percent {
        let size: u32 = zones.iter().filter_map(|z| z.size_percent).sum();
        if size > 100 {
            return Err(DistributionError::ZoneSizes { sum: size });
        }
    }
    if zones
        .iter()
        .any(|z| z.size_percent == Some(0) || z.size_bytes == Some(0))
    {
        return Err(DistributionError::EmptyZone);
    }
    Ok(())
}

/// A skewed distribution ready to draw block indices in `0..nranges`.
#[derive(Clone, Debug)]
pub enum Sampler {
    /// Zipf: fio's precomputed constants.
    Zipf {
        /// Blocks.
        n: u64,
        /// θ.
        theta: f64,
        /// zeta(n, θ) (at most 10⁷ terms).
        zetan: f64,
        /// zeta(2, θ).
        zeta2: f64,
        /// Offset added before the modulo.
        off: u64,
    },
    /// Pareto.
    Pareto {
        /// Blocks.
        n: u64,
        /// ln h / ln(1 − h).
        pow: f64,
        /// Offset added before the modulo.
        off: u64,
    },
    /// Normal.
    Normal {
        /// Blocks.
        n: u64,
        /// Width of the deviation, blocks.
        stddev: u64,
        /// Offset added before the modulo.
        off: u64,
    },
    /// Zones: per percent 1..=100, the zone's first block and block count.
    Zoned {
        /// Indexed by the drawn percent − 1: (first block, blocks).
        by_percent: Vec<(u64, u64)>,
    },
}

impl Sampler {
    /// The sampler of `d` over `nranges` blocks of `block_bytes` (≥ 1
    /// block); `rng` draws the random offset as fio's init does. `None`
    /// for the uniform distribution, or zones that exceed the region
    /// (refused by [`Distribution::check_region`]).
    pub fn new(d: &Distribution, nranges: u64, block_bytes: u64, rng: &mut SimRng) -> Option<Self> {
        let n = nranges.max(1);
        let off = |c: &Option<f64>, rng: &mut SimRng| match c {
            Some(c) => (n as f64 * c) as u64,
            None => rng.random::<u32>() as u64,
        };
        Some(match d {
            Distribution::Uniform => return None,
            Distribution::Zipf { theta, center } => {
                let zetan = (0..n.min(ZIPF_MAX_GEN))
                    .map(|i| (1.0 / (i + 1) as f64).powf(*theta))
                    .sum();
                Sampler::Zipf {
                    n,
                    theta: *theta,
                    zetan,
                    zeta2: 1.0 + 0.5f64.powf(*theta),
                    off: off(center, rng),
                }
            }
            Distribution::Pareto { h, center } => Sampler::Pareto {
                n,
                pow: h.ln() / (1.0 - h).ln(),
                off: off(center, rng),
            },
            Distribution::Normal {
                dev_percent,
                center,
            } => {
                let stddev = if *dev_percent == 0.0 {
                    0
                } else {
                    ((n as f64 * dev_percent / 100.0).ceil() as u64).min(n / 2)
                };
                let c = center.unwrap_or(0.5);
                Sampler::Normal {
                    n,
                    stddev,
                    off: (n as f64 * (c - 0.5)).rem_euclid(n as f64) as u64,
                }
            }
            Distribution::Zoned { zones } => {
                let mut by_percent = Vec::with_capacity(100);
                let mut first = 0u64;
                for z in zones {
                    let blocks = match (z.size_percent, z.size_bytes) {
                        (Some(p), _) => n * u64::from(p) / 100,
                        (_, Some(b)) => b / block_bytes.max(1),
                        _ => 0,
                    };
                    if first + blocks > n {
                        return None;
                    }
                    for _ in 0..z.access_percent {
                        by_percent.push((first, blocks.max(1)));
                    }
                    first += blocks;
                }
                Sampler::Zoned { by_percent }
            }
        })
    }

    /// The next block index, `0..nranges`.
    pub fn next(&self, rng: &mut SimRng) -> u64 {
        let hash = |v: u64| v.wrapping_mul(GOLDEN_RATIO_64);
        match *self {
            Sampler::Zipf {
                n,
                theta,
                zetan,
                zeta2,
                off,
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u: f64 = rng.random();
                let z = u * zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                hash(val - 1).wrapping_add(off) % n
            }
            Sampler::Pareto { n, pow, off } => {
                let u: f64 = rng.random();
                let k = ((n - 1) as f64 * u.powf(pow)) as u64;
                hash(k).wrapping_add(off) % n
            }
            Sampler::Normal { n, stddev, off } => {
                let sum: u64 = (0..GAUSS_ITERS).map(|_| rng.random_range(0..=n)).sum();
                let mut s = sum.div_ceil(GAUSS_ITERS);
                if stddev > 0 {
                    let u: f64 = rng.random();
                    let mut dev = (stddev as f64 * u) as i64 - (stddev / 2) as i64;
                    while s as i64 + dev >= n as i64 {
                        dev /= 2;
                    }
                    s = (s as i64 + dev).max(0) as u64;
                }
                hash(s).wrapping_add(off) % n
            }
            Sampler::Zoned { ref by_percent } => {
                let (first, blocks) = by_percent[rng.random_range(0..100usize)];
                first + rng.random_range(0..blocks)
            }
        }
    }
}

impl Distribution {
    /// Checks that absolute zones fit a region of `region_bytes`: fio
    /// stops with "zoned_abs sizes exceed file size".
    pub fn check_region(&self, region_bytes: u64) -> Result<(), DistributionError> {
        if let Distribution::Zoned { zones } = self {
            let total: u64 = zones.iter().filter_map(|z| z.size_bytes).sum();
            if total > region_bytes {
                return Err(DistributionError::ZonesBeyondRegion {
                    total,
                    region_bytes,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;

    fn counts(d: &Distribution, n: u64, draws: usize) -> Vec<u64> {
        let mut rng = component_rng(3, "dist");
        let s = Sampler::new(d, n, 4096, &mut rng).unwrap();
        let mut c = vec![0u64; n as usize];
        for _ in 0..draws {
            c[s.next(&mut rng) as usize] += 1;
        }
        c
    }

    /// Share of the draws taken by the hottest `frac` of the blocks.
    fn hot_share(mut c: Vec<u64>, frac: f64) -> f64 {
        let total: u64 = c.iter().sum();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let k = (c.len() as f64 * frac) as usize;
        c[..k].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn zipf_concentrates_and_uniform_does_not_exist_as_a_sampler() {
        let z = counts(
            &Distribution::Zipf {
                theta: 1.2,
                center: None,
            },
            4096,
            100_000,
        );
        assert!(hot_share(z, 0.10) > 0.75);
        let mut rng = component_rng(1, "d");
        assert!(Sampler::new(&Distribution::Uniform, 10, 4096, &mut rng).is_none());
    }

    #[test]
    fn pareto_and_normal_skew_and_stay_in_range() {
        let p = counts(
            &Distribution::Pareto {
                h: 0.9,
                center: None,
            },
            1000,
            50_000,
        );
        assert!(hot_share(p, 0.10) > 0.5);
        let g = counts(
            &Distribution::Normal {
                dev_percent: 5.0,
                center: None,
            },
            1000,
            50_000,
        );
        assert!(hot_share(g, 0.10) > 0.4);
    }

    #[test]
    fn zoned_puts_each_share_in_its_zone() {
        let zones = vec![
            Zone {
                access_percent: 60,
                size_percent: Some(10),
                size_bytes: None,
            },
            Zone {
                access_percent: 40,
                size_percent: Some(90),
                size_bytes: None,
            },
        ];
        let d = Distribution::Zoned { zones };
        d.check().unwrap();
        let c = counts(&d, 1000, 100_000);
        let first: u64 = c[..100].iter().sum();
        assert!((58_000..62_000).contains(&first), "{first}");
    }

    #[test]
    fn checks_refuse_what_fio_refuses() {
        assert!(Distribution::Zipf {
            theta: 1.0,
            center: None
        }
        .check()
        .is_err());
        assert!(Distribution::Pareto {
            h: 1.0,
            center: None
        }
        .check()
        .is_err());
        assert!(Distribution::Normal {
            dev_percent: 100.0,
            center: None
        }
        .check()
        .is_err());
        let bad = Distribution::Zoned {
            zones: vec![Zone {
                access_percent: 50,
                size_percent: Some(10),
                size_bytes: None,
            }],
        };
        assert_eq!(
            bad.check().unwrap_err(),
            DistributionError::ZoneAccess { sum: 50 }
        );
    }
}
