//! The configurations of an ensemble: each phone's `[uncertain]` entries
//! sampled at `M` points of a seeded Latin hypercube ([`super::super::lhs`]).
//!
//! Every entry is one dimension of the hypercube. A range takes the
//! point's coordinate scaled onto `[lo, hi]` (rounded for an integer key).
//! Alternatives are stratified, not crossed: alternative `j` of `n` takes
//! the coordinates in `[j/n, (j+1)/n)`, so over `M` points each
//! alternative appears `M/n` times (± 1) and the ensemble stays `M` runs
//! per finding and seed.

use super::super::lhs;
use super::super::profile::Profile;
use mmcsim::config::uncertain::{literal, Spread, Uncertain};

/// One configuration of one phone.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Index of the phone in the ensemble's phone list.
    pub phone: usize,
    /// The configuration's number, 1..=M.
    pub configuration: usize,
    /// The sampled value of each of the phone's `[uncertain]` entries, in
    /// their order, as `--set` literals; [`NOT_APPLICABLE`] where the key
    /// does not apply to the sampled FTL scheme (it was not set, so no
    /// value of it was part of the configuration).
    pub values: Vec<String>,
    /// The settings applied: the values whose key applies to the sampled
    /// FTL scheme (`device.ftl.hybrid.*` only with a hybrid mapping,
    /// `device.ftl.dftl.*` only with DFTL).
    pub sets: Vec<(String, String)>,
}

/// The value recorded for a key that does not apply to a configuration
/// (a `device.ftl.hybrid.*` key under a page or DFTL mapping).
pub const NOT_APPLICABLE: &str = "n/a";

/// The hypercube's seed for a phone: FNV-1a (64 bit) of its name, so each
/// phone's sample is fixed by its name alone, whatever else is selected.
pub fn lhs_seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The value of entry `u` at unit coordinate `x`.
fn value(u: &Uncertain, x: f64) -> String {
    match &u.spread {
        Spread::Range { lo, hi, integer } => literal(lhs::scale(x, *lo, *hi, *integer), *integer),
        Spread::Alternatives(a) => {
            let j = ((x * a.len() as f64) as usize).min(a.len() - 1);
            a[j].clone()
        }
    }
}

/// Whether `key` applies under the FTL `mapping` the configuration has
/// (`None`: the mapping is not sampled, so the profile's own applies).
fn applies(key: &str, mapping: Option<&str>) -> bool {
    for scheme in ["hybrid", "dftl"] {
        if key.starts_with(&format!("device.ftl.{scheme}.")) {
            return mapping.is_none_or(|m| m == scheme);
        }
    }
    true
}

/// The `m` configurations of phone `p` (index `phone`).
pub fn members(phone: usize, p: &Profile, m: usize) -> Vec<Member> {
    let dims = p.uncertain.len();
    lhs::latin_hypercube(m, dims, lhs_seed(&p.name))
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let values: Vec<String> = p
                .uncertain
                .iter()
                .zip(&row)
                .map(|(u, &x)| value(u, x))
                .collect();
            let mapping = p
                .uncertain
                .iter()
                .zip(&values)
                .find(|(u, _)| u.key == "device.ftl.mapping")
                .map(|(_, v)| v.as_str());
            let sets = p
                .uncertain
                .iter()
                .zip(&values)
                .filter(|(u, _)| applies(&u.key, mapping))
                .map(|(u, v)| (u.key.clone(), v.clone()))
                .collect();
            let values = p
                .uncertain
                .iter()
                .zip(values.iter())
                .map(|(u, v)| {
                    if applies(&u.key, mapping) {
                        v.clone()
                    } else {
                        NOT_APPLICABLE.to_string()
                    }
                })
                .collect();
            Member {
                phone,
                configuration: i + 1,
                values,
                sets,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phone() -> Profile {
        let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("configs/phones");
        Profile::load(&dir.join("nexus-s.toml")).unwrap()
    }

    #[test]
    fn alternatives_are_stratified_and_ranges_stay_inside() {
        let p = phone();
        let ms = members(0, &p, 12);
        assert_eq!(ms.len(), 12);
        let k = p
            .uncertain
            .iter()
            .position(|u| u.key == "device.ftl.mapping")
            .unwrap();
        for alt in ["hybrid", "page", "dftl"] {
            let n = ms.iter().filter(|m| m.values[k] == alt).count();
            assert_eq!(n, 4, "{alt}: 12 points over 3 alternatives");
        }
        let e = p
            .uncertain
            .iter()
            .position(|u| u.key == "device.map_cache.entries")
            .unwrap();
        for m in &ms {
            let v: i64 = m.values[e].parse().unwrap();
            assert!((8..=64).contains(&v), "{v}");
            // Hybrid-only settings go with the hybrid mapping alone.
            let hybrid_key = m
                .sets
                .iter()
                .any(|(k, _)| k.starts_with("device.ftl.hybrid."));
            assert_eq!(hybrid_key, m.values[k] == "hybrid");
            // ... and the values record `n/a` for them elsewhere.
            let r = p
                .uncertain
                .iter()
                .position(|u| u.key == "device.ftl.hybrid.random_log_blocks")
                .unwrap();
            assert_eq!(m.values[r] == NOT_APPLICABLE, m.values[k] != "hybrid");
        }
        assert_eq!(members(0, &p, 12), ms, "seeded: the same sample");
    }
}
