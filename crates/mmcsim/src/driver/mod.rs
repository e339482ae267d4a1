//! The MMC driver: the legacy `mmcqd` thread of Linux 3.x, or the eMMC 5.1
//! command-queue (blk-mq) driver ([`cmdq`]).
//!
//! Which one runs is [`DriverConfig::mode`]: `"auto"` (default) picks the
//! CMDQ driver when the device profile has a `[cmdq]` section and the legacy
//! one otherwise; `"legacy"` / `"cmdq"` force it (`"cmdq"` on a profile
//! without `[cmdq]` is a configuration error).
//!
//! Legacy driver:
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

pub mod cmdq;

pub use cmdq::CmdqDriver;

use crate::block::request::RqId;
use crate::types::Ns;
use serde::{Deserialize, Serialize};

/// Which MMC driver runs the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverMode {
    /// CMDQ if the device profile has `[cmdq]`, else legacy.
    #[default]
    Auto,
    /// The legacy `mmcqd` driver: one request on the device at a time.
    Legacy,
    /// The eMMC 5.1 command-queue driver (blk-mq): up to `cmdq_depth`
    /// requests in the device.
    Cmdq,
}

impl DriverMode {
    fn is_auto(&self) -> bool {
        *self == DriverMode::Auto
    }
}

/// Driver settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DriverConfig {
    /// Requests the driver holds at once: 2 = one executing + one prepared
    /// (3.x non-blocking requests), 1 = no pipelining. Reference §1.5
    /// (`driver_slots`, inferred from the pipelining design, §12).
    pub driver_slots: u32,
    /// `"auto"` (default), `"legacy"` or `"cmdq"` (see the module doc).
    #[serde(skip_serializing_if = "DriverMode::is_auto")]
    pub mode: DriverMode,
    /// CMDQ driver tags (requests in the device at once). Default: the
    /// card's queue depth − 1 = 31 for EXT_CSD CMDQ_DEPTH 32 (reference
    /// §1.5: one slot is kept for direct commands); at most that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdq_depth: Option<u32>,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            driver_slots: 2,
            mode: DriverMode::Auto,
            cmdq_depth: None,
        }
    }
}

impl DriverConfig {
    /// Resolves the driver against the device's command queue depth
    /// (`None` = the card has no command queue): `Ok(None)` = legacy,
    /// `Ok(Some(tags))` = CMDQ with `tags` tags. Errors say what to change.
    pub fn resolve(&self, card_depth: Option<u32>) -> Result<Option<u32>, String> {
        let cmdq = match (self.mode, card_depth) {
            (DriverMode::Legacy, _) => false,
            (DriverMode::Auto, d) => d.is_some(),
            (DriverMode::Cmdq, Some(_)) => true,
            (DriverMode::Cmdq, None) => {
                return Err("driver.mode = \"cmdq\": the device profile has no [cmdq] section (eMMC 5.1 command queueing); use a CMDQ profile such as configs/devices/generic-emmc51-cmdq.toml or driver.mode = \"legacy\"".into())
            }
        };
        if !cmdq {
            return Ok(None);
        }
        let max = card_depth.unwrap_or(2) - 1;
        let tags = self.cmdq_depth.unwrap_or(max);
        if tags == 0 || tags > max {
            return Err(format!(
                "driver.cmdq_depth = {tags}: expected 1..={max} (the card's queue depth − 1; one slot is kept for direct commands)"
            ));
        }
        Ok(Some(tags))
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
        let mut d = LegacyDriver::new(&DriverConfig {
            driver_slots: 1,
            ..Default::default()
        });
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

    #[test]
    fn mode_resolution_and_depth_validation() {
        let auto = DriverConfig::default();
        assert_eq!(auto.resolve(None), Ok(None), "generic profile stays legacy");
        assert_eq!(auto.resolve(Some(32)), Ok(Some(31)), "§1.5: 32 − 1 tags");
        let legacy = DriverConfig {
            mode: DriverMode::Legacy,
            ..Default::default()
        };
        assert_eq!(legacy.resolve(Some(32)), Ok(None));
        let cmdq = DriverConfig {
            mode: DriverMode::Cmdq,
            ..Default::default()
        };
        assert!(cmdq.resolve(None).unwrap_err().contains("[cmdq]"));
        let d8 = DriverConfig {
            cmdq_depth: Some(8),
            ..cmdq.clone()
        };
        assert_eq!(d8.resolve(Some(32)), Ok(Some(8)));
        for bad in [0, 32] {
            let c = DriverConfig {
                cmdq_depth: Some(bad),
                ..cmdq.clone()
            };
            assert!(c.resolve(Some(32)).unwrap_err().contains("1..=31"));
        }
    }
}
