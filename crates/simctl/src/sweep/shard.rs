//! `--shard I/N`: a deterministic slice of a sweep's cells.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Shard `index` (1-based) of `count`: the cells whose index modulo
/// `count` is `index - 1`, so shards are interleaved and balanced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// Which shard, 1..=count.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` (1 ≤ I ≤ N).
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || {
            anyhow::anyhow!(
                "--shard `{text}`: expected I/N with 1 ≤ I ≤ N, e.g. --shard 2/8 (shard 2 of 8)"
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index == 0 || index > count {
            bail!(bad());
        }
        Ok(Shard { index, count })
    }

    /// True when cell `cell_index` belongs to this shard.
    pub fn owns(&self, cell_index: usize) -> bool {
        cell_index % self.count == self.index - 1
    }

    /// The shard that owns cell `cell_index` among `count` shards.
    pub fn of(cell_index: usize, count: usize) -> Shard {
        Shard {
            index: cell_index % count + 1,
            count,
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_partition_the_cells() {
        let shards: Vec<Shard> = (1..=3)
            .map(|i| Shard::parse(&format!("{i}/3")).unwrap())
            .collect();
        for cell in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.owns(cell)).count(), 1);
            assert!(Shard::of(cell, 3).owns(cell));
        }
        for bad in ["0/3", "4/3", "1/0", "1", "a/b", "1/3/4"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
