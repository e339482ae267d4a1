//! What a scheduler is created with: the queue's tick rate and rotational
//! flag, and the jiffies arithmetic kernels do with them.

use crate::types::{Ns, NS_PER_S};

/// Facts about the queue and platform a scheduler is created with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedParams {
    /// Kernel tick rate `HZ`: tunables are held in jiffies, so integer
    /// division by `HZ` changes defaults (e.g. `HZ/125` = 0 at HZ=100).
    pub hz: u32,
    /// The queue is flagged non-rotational (`QUEUE_FLAG_NONROT`); true for
    /// MMC.
    pub nonrot: bool,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            hz: 1000,
            nonrot: true,
        }
    }
}

impl SchedParams {
    /// Converts a jiffies count to nanoseconds at this `hz`.
    #[inline]
    pub fn jiffies_to_ns(&self, j: u64) -> Ns {
        j * NS_PER_S / self.hz as u64
    }

    /// `msecs_to_jiffies`: milliseconds to jiffies, rounding up.
    #[inline]
    pub fn ms_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1000)
    }

    /// `jiffies_to_msecs`: jiffies to milliseconds, rounding up.
    #[inline]
    pub fn jiffies_to_ms(&self, j: u64) -> u64 {
        (j * 1000).div_ceil(self.hz as u64)
    }

    /// The jiffies counter at simulated time `now` (ns).
    #[inline]
    pub fn jiffies(&self, now: Ns) -> u64 {
        match now.checked_mul(self.hz as u64) {
            // Exact in u64 when the product fits: the same quotient.
            Some(p) => p / NS_PER_S,
            None => ((now as u128 * self.hz as u128) / NS_PER_S as u128) as u64,
        }
    }
}
