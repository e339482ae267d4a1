//! Per-I/O block sizes of a job (fio's `bssplit`): each I/O's size is
//! drawn by weight, as fio's `get_next_buflen` draws it — the sizes sorted
//! ascending, a uniform draw over 0..100 walked through their cumulative
//! percentages, skipping a size that would run past the end of the
//! region (then the next size is tried; when none fits, the draw is
//! repeated) [src: fio `io_u.c` get_next_buflen, `options.c`
//! bssplit_ddir (sorting)].

use crate::engine::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// One entry of a block-size split: `percent` of the I/Os are `bytes`
/// long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Bytes per I/O.
    pub bytes: u64,
    /// Percent of the I/Os, 0..=100.
    pub percent: u32,
}

/// The sizes one direction of a job draws from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockSizes {
    /// Every I/O is this many bytes.
    Fixed(u64),
    /// Drawn by weight, ascending by size, percentages adding to 100.
    Split(Vec<SizeWeight>),
}

/// Why a block-size split (`bssplit`) is unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BssplitError {
    /// More than fio's 64 entries.
    #[error("bssplit: at most 64 block sizes")]
    TooMany,
    /// An entry of 0 bytes.
    #[error("bssplit: a block size must be at least 1 byte")]
    ZeroBytes,
    /// Percentages that do not add up to 100.
    #[error("bssplit: the percentages add up to {sum}: expected 100")]
    PercentSum {
        /// Their sum.
        sum: u32,
    },
}

impl BlockSizes {
    /// The sizes of `split` (fixed `bytes` when it is empty).
    pub fn new(bytes: u64, split: &[SizeWeight]) -> BlockSizes {
        if split.is_empty() {
            return BlockSizes::Fixed(bytes);
        }
        let mut v: Vec<SizeWeight> = split.iter().copied().filter(|s| s.percent > 0).collect();
        v.sort_by_key(|s| s.bytes);
        match v.as_slice() {
            [] => BlockSizes::Fixed(bytes),
            [only] => BlockSizes::Fixed(only.bytes),
            _ => BlockSizes::Split(v),
        }
    }

    /// Checks a split: sizes ≥ 1 byte, percentages adding up to 100, at
    /// most 64 entries (fio's limit).
    pub fn check(split: &[SizeWeight]) -> Result<(), BssplitError> {
        if split.is_empty() {
            return Ok(());
        }
        if split.len() > 64 {
            return Err(BssplitError::TooMany);
        }
        if split.iter().any(|s| s.bytes == 0) {
            return Err(BssplitError::ZeroBytes);
        }
        let sum: u32 = split.iter().map(|s| s.percent).sum();
        if sum != 100 {
            return Err(BssplitError::PercentSum { sum });
        }
        Ok(())
    }

    /// The smallest size.
    pub fn min(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Split(v) => v[0].bytes,
        }
    }

    /// The largest size.
    pub fn max(&self) -> u64 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Split(v) => v[v.len() - 1].bytes,
        }
    }

    /// True when every size is a multiple of `unit` bytes.
    pub fn all_multiple_of(&self, unit: u64) -> bool {
        match self {
            BlockSizes::Fixed(b) => b % unit == 0,
            BlockSizes::Split(v) => v.iter().all(|s| s.bytes % unit == 0),
        }
    }

    /// True when every I/O has one size.
    pub fn is_fixed(&self) -> bool {
        matches!(self, BlockSizes::Fixed(_))
    }

    /// The next I/O's size when at most `room` bytes remain before the
    /// end of the region, or `None` when not even the smallest fits.
    pub fn pick(&self, room: u64, rng: &mut SimRng) -> Option<u64> {
        let v = match self {
            BlockSizes::Fixed(b) => return (*b <= room).then_some(*b),
            BlockSizes::Split(v) => v,
        };
        if v[0].bytes > room {
            return None;
        }
        loop {
            let r = rng.random_range(0..100u32);
            let mut cum = 0;
            for s in v {
                cum += s.percent;
                if r < cum && s.bytes <= room {
                    return Some(s.bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;

    #[test]
    fn a_split_draws_each_size_by_its_weight_and_only_sizes_that_fit() {
        let s = BlockSizes::new(
            0,
            &[
                SizeWeight {
                    bytes: 65536,
                    percent: 50,
                },
                SizeWeight {
                    bytes: 4096,
                    percent: 50,
                },
            ],
        );
        assert_eq!((s.min(), s.max()), (4096, 65536));
        let mut rng = component_rng(5, "bs");
        let small = (0..10_000)
            .filter(|_| s.pick(1 << 20, &mut rng) == Some(4096))
            .count();
        assert!((4700..5300).contains(&small), "{small}");
        assert_eq!(s.pick(8192, &mut rng), Some(4096));
        assert_eq!(s.pick(100, &mut rng), None);
    }

    #[test]
    fn percentages_must_add_up_to_100() {
        let e = BlockSizes::check(&[SizeWeight {
            bytes: 4096,
            percent: 60,
        }])
        .unwrap_err();
        assert_eq!(e, BssplitError::PercentSum { sum: 60 });
        assert_eq!(
            e.to_string(),
            "bssplit: the percentages add up to 60: expected 100"
        );
    }
}
