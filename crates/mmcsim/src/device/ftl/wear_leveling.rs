//! Wear leveling.
//!
//! * Dynamic (`[wear_leveling] dynamic`): a write point takes the least-worn
//!   free stripe of its die — done by the block manager's allocation
//!   ([`super::block_manager`]). It levels only the blocks that cycle: a
//!   stripe holding cold (never rewritten) data stays full and stops aging.
//! * Static (`[wear_leveling] static`): the hook below, consulted by garbage
//!   collection after each session on a die. When the die's erase-count
//!   spread — its most-worn stripe minus its least-worn *full* stripe —
//!   exceeds `static_threshold_erases`, the least-worn full stripe's (cold)
//!   data is moved to the die's cold write point — which takes the most-worn
//!   free stripe — and the stripe erased, so dynamic allocation puts it back
//!   into service for hot data (cold-block
//!   migration, as in Chang, Hsieh and Kuo, "Endurance enhancement of
//!   flash-memory storage systems: an efficient static wear leveling
//!   design", DAC 2007). At most one stripe moves per GC session.

use super::block_manager::BlockManager;

/// Static wear-leveling policy: off, or on with a spread threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticWearLeveling {
    /// Erase-count spread (max − min, in erases) above which cold data
    /// moves; `None` = static wear leveling off.
    threshold: Option<u32>,
}

impl StaticWearLeveling {
    /// Static wear leveling off: the hook never names a stripe.
    pub fn off() -> StaticWearLeveling {
        StaticWearLeveling { threshold: None }
    }

    /// Static wear leveling moving cold data once a die's erase-count spread
    /// exceeds `threshold_erases`.
    pub fn with_threshold(threshold_erases: u32) -> StaticWearLeveling {
        StaticWearLeveling {
            threshold: Some(threshold_erases),
        }
    }

    /// The spread threshold in erases, `None` when static wear leveling is
    /// off.
    pub fn threshold(&self) -> Option<u32> {
        self.threshold
    }

    /// The hook: the full stripe of `die` whose cold data should move now,
    /// if any (the least-worn full stripe, ties to the lowest number, when
    /// the spread exceeds the threshold).
    pub fn cold_stripe(&self, die: u32, blocks: &BlockManager) -> Option<u32> {
        let threshold = self.threshold?;
        let (least, sb) = blocks
            .full_stripes(die)
            .map(|(_, sb)| (blocks.erase_count(sb), sb))
            .min()?;
        let n = blocks.stripes_per_die();
        let most = (die * n..(die + 1) * n)
            .map(|sb| blocks.erase_count(sb))
            .max()
            .unwrap_or(0);
        (most - least > threshold).then_some(sb)
    }
}
