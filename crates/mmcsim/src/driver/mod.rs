//! The MMC driver: the legacy `mmcqd` thread of Linux 3.x.
//!
//! Contract (reference io-schedulers.md §1.5, emmc-parameters.md §1.3):
//! one data request executes on the bus at a time; with request pipelining
//! (`driver_slots` = 2) the next request is fetched from the block layer and
//! prepared (command setup, DMA mapping) while the current one runs, and is
//! started once the current one's completion interrupt has been handled.
//! The driver pulls from the block layer only when it has a free slot. When
//! it has nothing to do, `mmcqd` sleeps and a new request must wake it.
//!
//! This module holds the driver's state and decisions; the simulation core
//! turns them into events.

use crate::block::request::RqId;
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Driver settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriverConfig {
    /// Requests the driver holds at once: 2 = one executing + one prepared
    /// (3.x non-blocking requests), 1 = no pipelining. Reference §1.5
    /// (`driver_slots`, inferred from the pipelining design, §12).
    pub driver_slots: u32,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig { driver_slots: 2 }
    }
}

/// State of the legacy MMC driver.
#[derive(Clone, Debug)]
pub struct LegacyDriver {
    slots: u32,
    /// Request on the device (until its completion interrupt is handled).
    pub executing: Option<RqId>,
    /// Request fetched and being (or done being) prepared.
    pub prepared: Option<RqId>,
    /// When the prepared request's preparation ends, ns.
    pub prepared_ready: Ns,
    /// `mmcqd`'s CPU is busy until then, ns.
    pub cpu_free: Ns,
    /// `mmcqd` sleeps: the next request must pay the wake-up.
    pub asleep: bool,
}

impl LegacyDriver {
    /// A driver with `slots` request slots (1 or 2), asleep.
    pub fn new(cfg: &DriverConfig) -> LegacyDriver {
        LegacyDriver {
            slots: cfg.driver_slots.clamp(1, 2),
            executing: None,
            prepared: None,
            prepared_ready: 0,
            cpu_free: 0,
            asleep: true,
        }
    }

    /// Requests currently held (executing + prepared).
    pub fn held(&self) -> u32 {
        self.executing.is_some() as u32 + self.prepared.is_some() as u32
    }

    /// True when the driver may fetch another request now.
    pub fn can_fetch(&self) -> bool {
        self.prepared.is_none() && self.held() < self.slots
    }

    /// True when the prepared request can go to the device at `now`.
    pub fn can_start(&self, now: Ns) -> bool {
        self.executing.is_none() && self.prepared.is_some() && self.prepared_ready <= now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slot_driver_never_prefetches_while_a_request_runs() {
        let mut d = LegacyDriver::new(&DriverConfig { driver_slots: 1 });
        assert!(d.can_fetch());
        d.executing = Some(3);
        assert!(!d.can_fetch());
        let mut d2 = LegacyDriver::new(&DriverConfig::default());
        d2.executing = Some(3);
        assert!(d2.can_fetch(), "pipelining prepares the next request");
        d2.prepared = Some(4);
        d2.prepared_ready = 100;
        assert!(!d2.can_start(200), "waits for the executing request");
        d2.executing = None;
        assert!(!d2.can_start(50) && d2.can_start(100));
    }
}
