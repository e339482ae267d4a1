//! Which address directions a controller's stream detection follows: the
//! firmware behaviour behind the map-page prefetch (`[map_cache]
//! prefetch_direction`) and the read-buffer stream prefetch
//! (`[read_buffer] stream_direction`).
//!
//! Reference (shared/reference/emmc-parameters.md §6 items 2 and 3): a
//! controller that detects a *forward* stream senses ahead, and "forward
//! streams can prefetch the next map page, backward streams cannot". That
//! forward-only behaviour is [`Direction::Forward`]; `Both` is a firmware
//! that tracks the stream's sign and prefetches behind a descending one
//! too; `None` is a firmware without prefetch. No public measurement of
//! 2012–2014 phone eMMC tells which one a part has (§6 "Evidence status"),
//! so a profile names its choice and its source.

use serde::{Deserialize, Serialize};

/// Which streams a prefetcher follows.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Only ascending streams: prefetch the following pages (§6 items 2–3).
    #[default]
    Forward,
    /// Ascending and descending streams: prefetch in the stream's
    /// direction (the following pages, or the preceding ones).
    Both,
    /// No prefetch.
    None,
}

/// The sign of a detected stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Addresses increase: prefetch what follows.
    Ascending,
    /// Addresses decrease: prefetch what precedes.
    Descending,
}

impl Direction {
    /// The name used in device profiles.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Both => "both",
            Direction::None => "none",
        }
    }

    /// Whether a prefetcher following this direction acts on `stream`.
    pub fn follows(self, stream: Stream) -> bool {
        match self {
            Direction::Forward => stream == Stream::Ascending,
            Direction::Both => true,
            Direction::None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_follows_its_streams() {
        use Stream::*;
        assert!(Direction::Forward.follows(Ascending) && !Direction::Forward.follows(Descending));
        assert!(Direction::Both.follows(Ascending) && Direction::Both.follows(Descending));
        assert!(!Direction::None.follows(Ascending) && !Direction::None.follows(Descending));
    }
}
