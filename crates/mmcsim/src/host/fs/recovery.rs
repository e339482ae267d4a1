//! A file system's own recovery after a power cut (`simctl crash`): what
//! the host asks of the card's state after the cut, and what the
//! file system's mount-time recovery and consistency check found.
//!
//! The host never sees the device: the simulation hands it the card's
//! recovered state behind [`MediaAfterCut`], page by page.

use crate::types::Ns;
use serde::Serialize;

/// What a 4 KiB logical page of the card holds after the cut, relative to
/// one write the host submitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Data the card received after the write was submitted (that write,
    /// or a later one): the write is durable.
    Since,
    /// Data from before the write: the write never became durable.
    Before,
    /// Unreadable or another page's data (torn program, paired-page
    /// victim, interrupted erase, flying write).
    Unreadable,
}

/// The card's content after a cut and the FTL's recovery.
pub trait MediaAfterCut {
    /// What logical page `lpn` holds relative to a write of it the host
    /// submitted at `submitted` ns.
    fn page(&self, lpn: u32, submitted: Ns) -> PageState;
}

/// What the file system's recovery found after one cut (zero when the
/// file system models no recovery, or no file system is mounted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FsRecovery {
    /// Journal transactions replayed at mount (their commit block was
    /// durable and every earlier one replayed).
    pub transactions_replayed: u64,
    /// Log blocks a replayed transaction copied home although the card
    /// did not hold them (older data or unreadable): garbage metadata
    /// written over its home location (a commit block durable before its
    /// log body: barrier=0).
    pub replayed_bad_log_blocks: u64,
    /// Transactions neither replayed nor fully written home whose
    /// metadata is partly on the media (some home blocks new, some old):
    /// bitmaps, inodes and directory blocks from different transactions.
    pub partial_transactions: u64,
    /// Metadata home blocks unreadable after the cut and not rewritten by
    /// a replay.
    pub torn_metadata_blocks: u64,
    /// data=ordered: data blocks a replayed transaction's inodes point at
    /// that the card does not hold (stale or unreadable data exposed in a
    /// committed file).
    pub stale_data_blocks: u64,
    /// Transactions whose commit had returned (an fsync could have
    /// returned on it) lost: not replayed and not written home.
    pub committed_transactions_lost: u64,
}

impl FsRecovery {
    /// Inconsistencies an fsck would report: bad replayed log blocks,
    /// partial transactions, torn metadata, stale data exposed.
    pub fn inconsistencies(&self) -> u64 {
        self.replayed_bad_log_blocks
            + self.partial_transactions
            + self.torn_metadata_blocks
            + self.stale_data_blocks
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &FsRecovery) {
        self.transactions_replayed += o.transactions_replayed;
        self.replayed_bad_log_blocks += o.replayed_bad_log_blocks;
        self.partial_transactions += o.partial_transactions;
        self.torn_metadata_blocks += o.torn_metadata_blocks;
        self.stale_data_blocks += o.stale_data_blocks;
        self.committed_transactions_lost += o.committed_transactions_lost;
    }
}
