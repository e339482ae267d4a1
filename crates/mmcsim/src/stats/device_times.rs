//! When a request ran on the device: the times the driver records for
//! each request and that travel back up the stack with its completion
//! (the host's latency split, the report's device time). A leaf type:
//! every stage may name it.

use crate::types::Ns;

/// When a request ran on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceTimes {
    /// The driver fetched it from the queue (`blk_fetch_request`), ns.
    pub fetch: Ns,
    /// The driver issued it on the bus, ns.
    pub start: Ns,
    /// Its data command completed: the host controller's
    /// transfer-complete interrupt fired, ns. Equal to `done` unless the
    /// driver polled CMD13 after it.
    pub data_done: Ns,
    /// The device completed it, ns: the response of the CMD13 that found
    /// the card ready after a polled write, else `data_done`.
    pub done: Ns,
    /// CMD13 SEND_STATUS polls the driver sent for it.
    pub status_polls: u32,
}

impl DeviceTimes {
    /// Device time of its data command, from issue to the
    /// transfer-complete interrupt, ns.
    pub fn data_cmd(&self) -> Ns {
        self.data_done.saturating_sub(self.start)
    }

    /// Device time of the busy polling after the data command, ns.
    pub fn busy_poll(&self) -> Ns {
        self.done.saturating_sub(self.data_done)
    }
}
