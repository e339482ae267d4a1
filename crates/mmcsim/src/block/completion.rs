//! The way up from the block layer. When the driver ends a request
//! (`blk_end_request`), the block layer frees it and queues, for the event
//! loop to deliver right after the interrupt: a [`Completion::Freed`]
//! (processes waiting for a free request may go on), then one
//! [`Completion::Bio`] per finished bio, in the request's bio order, each
//! naming the bio's [`Submitter`] (`bio_endio` → `bi_end_io`). The finished
//! bios and their device times wait in an [`EndedBios`] queue until their
//! events are delivered. No stage above is called from inside the driver.

use std::collections::VecDeque;

use super::request::{Bio, Submitter};
use crate::stats::DeviceTimes;

/// A completion event of the block stage, for the stages above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// A request was ended and freed (`freed_request`): a process waiting
    /// for a free request may have been admitted.
    Freed,
    /// The next finished bio ([`EndedBios::take`]) goes back to its
    /// submitter.
    Bio(Submitter),
}

/// Finished bios, with the device times of the request that carried them,
/// in the order their [`Completion::Bio`] events were queued.
#[derive(Debug, Default)]
pub struct EndedBios {
    queue: VecDeque<(Bio, DeviceTimes)>,
}

impl EndedBios {
    /// Appends a finished bio.
    pub(super) fn push(&mut self, bio: Bio, times: DeviceTimes) {
        self.queue.push_back((bio, times));
    }

    /// The oldest finished bio not yet delivered, for the
    /// [`Completion::Bio`] event being delivered; `None` when every one has
    /// been (events and bios out of step: a simulator bug).
    pub fn take(&mut self) -> Option<(Bio, DeviceTimes)> {
        self.queue.pop_front()
    }

    /// Finished bios not yet delivered.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// True when every finished bio has been delivered.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
