//! Driver settings: which driver runs the queue and its depth.

use crate::error::SettingError;
use serde::{Deserialize, Serialize};

/// Which MMC driver runs the queue.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Idle time after which the legacy driver checks BKOPS_STATUS and
    /// starts BKOPS on a card with `[gc] background`, in ms; absent =
    /// [`DriverConfig::DEFAULT_BKOPS_IDLE_MS`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bkops_idle_ms: Option<u32>,
    /// The host controller can stop a data transfer in flight
    /// (`MMC_CAP2_STOP_REQUEST`, `host->ops->stop_request`). With a card
    /// that has HPI (`[features] hpi`), the legacy driver then registers for
    /// urgent-request notifications and stops a write on the bus when the
    /// scheduler marks a read urgent (msm-3.4 `mmc_urgent_request`). Absent
    /// = [`DriverConfig::DEFAULT_STOP_REQUEST`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_request: Option<bool>,
    /// The host controller raises a write's transfer-complete interrupt
    /// only once the card releases its busy signal on DAT0 (hardware busy
    /// detection). SDHCI hosts do: the SD Host Controller specification
    /// sets Transfer Complete of a write at the falling edge of DAT Line
    /// Active, after the busy ends. Without it the interrupt comes at the
    /// end of the data phase and the legacy driver's CMD13 polling
    /// (`mmc_blk_err_check`) spans the card's programming. Absent =
    /// [`DriverConfig::DEFAULT_WAIT_WHILE_BUSY`]. Only a write the card
    /// must make durable (reliable write on a volatile cache, cache off)
    /// keeps it busy after its data in this model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_while_busy: Option<bool>,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            driver_slots: 2,
            mode: DriverMode::Auto,
            cmdq_depth: None,
            bkops_idle_ms: None,
            stop_request: None,
            wait_while_busy: None,
        }
    }
}

impl DriverConfig {
    /// Default BKOPS idle time, in ms [src: msm-3.4 kernel
    /// include/linux/mmc/card.h `MMC_IDLE_BKOPS_TIME_MS` = 200, the delay of
    /// the `mmc_start_idle_time_bkops` delayed work].
    pub const DEFAULT_BKOPS_IDLE_MS: u32 = 200;

    /// Default host stop capability: true [src: msm-3.4
    /// drivers/mmc/host/sdhci-msm.c `sdhci_msm_probe` sets
    /// `MMC_CAP2_STOP_REQUEST` on every SDHC of the Qualcomm hosts, e.g. the
    /// Moto G's msm8226 SDC1].
    pub const DEFAULT_STOP_REQUEST: bool = true;

    /// Default hardware busy detection on writes: false, the Galaxy S II
    /// study's Samsung MSHCI (a DesignWare mobile storage host), whose
    /// completion interrupt the study timed before Linux 3.x polled CMD13
    /// until the card left PRG [uncertain: from the study's description of
    /// its measurement point (issue 25); the SDHCI hosts of the Nexus S,
    /// Nexus 7 and Moto G wait for the busy (true), per the SD Host
    /// Controller specification's Transfer Complete].
    pub const DEFAULT_WAIT_WHILE_BUSY: bool = false;

    /// Hardware busy detection on writes in effect.
    pub fn wait_while_busy(&self) -> bool {
        self.wait_while_busy
            .unwrap_or(Self::DEFAULT_WAIT_WHILE_BUSY)
    }

    /// The host stop capability in effect.
    pub fn stop_request(&self) -> bool {
        self.stop_request.unwrap_or(Self::DEFAULT_STOP_REQUEST)
    }

    /// The BKOPS idle time in effect, in ms.
    pub fn bkops_idle(&self) -> u32 {
        self.bkops_idle_ms.unwrap_or(Self::DEFAULT_BKOPS_IDLE_MS)
    }

    /// Checks `driver_slots`: 1 (no pipelining) or 2 (one executing + one
    /// prepared).
    pub fn validate_slots(&self) -> Result<(), crate::error::SettingError> {
        if !(1..=2).contains(&self.driver_slots) {
            return Err(crate::error::SettingError::Invalid {
                key: "driver.driver_slots".into(),
                value: self.driver_slots.to_string(),
                expected: "1 (no pipelining) or 2 (one executing + one prepared)".into(),
            });
        }
        Ok(())
    }

    /// Resolves the driver against the device's command queue depth
    /// (`None` = the card has no command queue): `Ok(None)` = legacy,
    /// `Ok(Some(tags))` = CMDQ with `tags` tags. Errors say what to change.
    pub fn resolve(&self, card_depth: Option<u32>) -> Result<Option<u32>, SettingError> {
        let cmdq = match (self.mode, card_depth) {
            (DriverMode::Legacy, _) => false,
            (DriverMode::Auto, d) => d.is_some(),
            (DriverMode::Cmdq, Some(_)) => true,
            (DriverMode::Cmdq, None) => {
                return Err(SettingError::Conflict {
                    key: "driver.mode".into(),
                    value: "\"cmdq\"".into(),
                    why: "the device profile has no [cmdq] section (eMMC 5.1 command queueing); use a CMDQ profile such as configs/devices/generic-emmc51-cmdq.toml or driver.mode = \"legacy\"".into(),
                })
            }
        };
        if !cmdq {
            if let Some(t) = self.cmdq_depth {
                return Err(SettingError::Conflict {
                    key: "driver.cmdq_depth".into(),
                    value: t.to_string(),
                    why: format!(
                        "the run uses the legacy driver ({}), which has no command queue; remove cmdq_depth, or use a CMDQ profile (e.g. configs/devices/generic-emmc51-cmdq.toml) with driver.mode = \"cmdq\" or \"auto\"",
                        if self.mode == DriverMode::Legacy {
                            "driver.mode = \"legacy\""
                        } else {
                            "the device profile has no [cmdq] section"
                        }
                    ),
                });
            }
            return Ok(None);
        }
        let max = card_depth.unwrap_or(2) - 1;
        let tags = self.cmdq_depth.unwrap_or(max);
        if tags == 0 || tags > max {
            return Err(SettingError::Invalid {
                key: "driver.cmdq_depth".into(),
                value: tags.to_string(),
                expected: format!(
                    "1..={max} (the card's queue depth − 1; one slot is kept for direct commands)"
                )
                .into(),
            });
        }
        Ok(Some(tags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(cmdq
            .resolve(None)
            .unwrap_err()
            .to_string()
            .contains("[cmdq]"));
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
            assert!(c
                .resolve(Some(32))
                .unwrap_err()
                .to_string()
                .contains("1..=31"));
        }
    }
}
