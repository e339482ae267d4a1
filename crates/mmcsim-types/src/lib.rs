//! The vocabulary every mmcsim crate shares: simulated time, block
//! operations and I/O priorities (here at the root), a name outside a
//! closed set of choices ([`UnknownChoice`]), and the conventions every
//! text input follows ([`text`]: byte-order mark, line endings, control
//! characters in messages).
//!
//! It depends on no other mmcsim crate: the scheduler API
//! (`mmcsim-elevator`), the trace readers (`mmcsim-trace`) and the
//! simulator (`mmcsim`) all build on it.

#![warn(missing_docs)]

pub mod choice;
pub mod text;

pub use choice::UnknownChoice;

use serde::{Deserialize, Serialize};

/// Simulated time, in nanoseconds since the start of the simulation.
pub type Ns = u64;

/// Nanoseconds per microsecond.
pub const NS_PER_US: Ns = 1_000;
/// Nanoseconds per millisecond.
pub const NS_PER_MS: Ns = 1_000_000;
/// Nanoseconds per second.
pub const NS_PER_S: Ns = 1_000_000_000;

/// Bytes in one sector, the unit of every block-layer and MMC address.
pub const SECTOR_BYTES: u64 = 512;
/// Bytes in one page-cache page (and one FTL logical page).
pub const PAGE_BYTES: u64 = 4096;
/// Sectors in one 4 KiB page.
pub const SECTORS_PER_PAGE: u64 = PAGE_BYTES / SECTOR_BYTES;

/// Converts microseconds given as a float (configuration files) to whole
/// nanoseconds, rounding to nearest.
pub fn us_to_ns(us: f64) -> Ns {
    (us * NS_PER_US as f64).round() as Ns
}

/// The kind of a block request, as recorded in traces (`R`, `W`, `D`, `F`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Op {
    /// Data read.
    Read,
    /// Data write.
    Write,
    /// Discard / TRIM of a sector range: no data moves.
    Discard,
    /// Cache flush (REQ_FLUSH): no data moves, no address.
    Flush,
}

impl Op {
    /// Index of the data direction as the kernel numbers it: READ = 0,
    /// WRITE = 1 (discards count as writes, as `rq_data_dir` does).
    #[inline]
    pub fn dir(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write | Op::Discard | Op::Flush => 1,
        }
    }

    /// The one-letter code used in the native CSV format and the request log.
    pub fn code(self) -> char {
        match self {
            Op::Read => 'R',
            Op::Write => 'W',
            Op::Discard => 'D',
            Op::Flush => 'F',
        }
    }

    /// Parses a one-letter code (`R`, `W`, `D`, `F`, case-insensitive).
    pub fn from_code(s: &str) -> Option<Op> {
        match s {
            "R" | "r" => Some(Op::Read),
            "W" | "w" => Some(Op::Write),
            "D" | "d" => Some(Op::Discard),
            "F" | "f" => Some(Op::Flush),
            _ => None,
        }
    }

    /// True for operations that move data (read or write).
    #[inline]
    pub fn has_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }
}

/// I/O priority class (`IOPRIO_CLASS_*`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum IoClass {
    /// Real time: served before everything else.
    Rt,
    /// Best effort: the default class.
    Be,
    /// Idle: served only when nothing else waits.
    Idle,
}

/// I/O priority: a class and a level 0-7 (0 = highest, `IOPRIO_NORM` = 4).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub struct IoPrio {
    /// Priority class.
    pub class: IoClass,
    /// Level within the class, 0 (highest) to 7 (lowest).
    pub level: u8,
}

impl IoPrio {
    /// `IOPRIO_NORM`: best effort, level 4 (what nice 0 maps to).
    pub const NORM: IoPrio = IoPrio {
        class: IoClass::Be,
        level: 4,
    };

    /// The priority a task gets when it sets none: best effort at level
    /// (nice + 20) / 5, so nice 0 gives 4 and Android background (nice 10)
    /// gives 6 (reference io-schedulers.md §0).
    pub fn from_nice(nice: i32) -> IoPrio {
        let nice = nice.clamp(-20, 19);
        IoPrio {
            class: IoClass::Be,
            level: ((nice + 20) / 5) as u8,
        }
    }
}

impl Default for IoPrio {
    fn default() -> Self {
        IoPrio::NORM
    }
}
