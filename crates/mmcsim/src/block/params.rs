//! Queue attributes under `/sys/block/<dev>/queue/`, by their sysfs names.

use serde::{Deserialize, Serialize};

use crate::error::SettingError;
use mmcsim_elevator::TunableInfo;

/// `BLKDEV_MIN_RQ`: the smallest `nr_requests` the kernel accepts.
pub const BLKDEV_MIN_RQ: u32 = 4;

/// Queue parameters (sysfs `queue/` attributes). Every default is the
/// kernel's for an MMC block device of the 3.x era.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QueueParams {
    /// `nr_requests`: requests that may be allocated per direction class
    /// (sync, async), counted from allocation to completion. Unit: requests.
    /// Default 128 (`BLKDEV_MAX_RQ`). Accepted 4..=65536.
    pub nr_requests: u32,
    /// `max_sectors_kb`: largest request a merge may build. Unit: KiB.
    /// Default 512 (`BLK_DEF_MAX_SECTORS` = 1024 sectors). Accepted
    /// 4..=32767.
    pub max_sectors_kb: u32,
    /// `nomerges`: 0 = all merges, 1 = one-hit `last_merge` cache (and plug
    /// merges) only, 2 = no merging. Default 0.
    pub nomerges: u8,
    /// `read_ahead_kb`: maximum read-ahead window, used by the host's page
    /// cache (stored here because it is a queue attribute). Unit: KiB.
    /// Default 128 (`VM_MAX_READAHEAD`). Accepted 0..=65536.
    pub read_ahead_kb: u32,
    /// `rotational`: the queue is a spinning disk. Default false: MMC sets
    /// `QUEUE_FLAG_NONROT`.
    pub rotational: bool,
}

impl Default for QueueParams {
    fn default() -> Self {
        QueueParams {
            nr_requests: 128,
            max_sectors_kb: 512,
            nomerges: 0,
            read_ahead_kb: 128,
            rotational: false,
        }
    }
}

/// Names accepted by [`QueueParams::set`], in `list()` order.
const NAMES: [&str; 5] = [
    "nr_requests",
    "max_sectors_kb",
    "nomerges",
    "read_ahead_kb",
    "rotational",
];

fn parse_range(name: &str, value: &str, min: u64, max: u64) -> Result<u64, SettingError> {
    let v: u64 = value
        .trim()
        .parse()
        .map_err(|_| SettingError::NotAWholeNumber {
            key: format!("queue/{name}"),
            value: value.to_string(),
            min,
            max,
        })?;
    if v < min || v > max {
        return Err(SettingError::OutOfRange {
            key: format!("queue/{name}"),
            value: v,
            min,
            max,
        });
    }
    Ok(v)
}

impl QueueParams {
    /// Largest merged request, in 512-byte sectors (`max_sectors_kb` × 2).
    pub fn max_sectors(&self) -> u64 {
        self.max_sectors_kb as u64 * 2
    }

    /// Checks every field's range (for values loaded from a file).
    pub fn validate(&self) -> Result<(), SettingError> {
        let mut copy = QueueParams::default();
        for info in self.list() {
            copy.set(info.name, &info.value)?;
        }
        Ok(())
    }

    /// Sets attribute `name` (its sysfs name) from sysfs text `value`,
    /// validating the range. An unknown name's error lists the valid ones.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        match name {
            "nr_requests" => {
                self.nr_requests = parse_range(name, value, BLKDEV_MIN_RQ as u64, 65536)? as u32
            }
            "max_sectors_kb" => self.max_sectors_kb = parse_range(name, value, 4, 32767)? as u32,
            "nomerges" => self.nomerges = parse_range(name, value, 0, 2)? as u8,
            "read_ahead_kb" => self.read_ahead_kb = parse_range(name, value, 0, 65536)? as u32,
            "rotational" => self.rotational = parse_range(name, value, 0, 1)? == 1,
            _ => {
                return Err(SettingError::Unknown {
                    kind: "queue attribute",
                    name: name.to_string(),
                    valid: NAMES.join(", "),
                })
            }
        }
        Ok(())
    }

    /// Every attribute with its current value, default and unit, as sysfs
    /// prints them.
    pub fn list(&self) -> Vec<TunableInfo> {
        let d = QueueParams::default();
        vec![
            TunableInfo {
                name: "nr_requests",
                value: self.nr_requests.to_string(),
                default: d.nr_requests.to_string(),
                unit: "requests",
                help: "requests allocatable per sync/async class (BLKDEV_MAX_RQ)",
            },
            TunableInfo {
                name: "max_sectors_kb",
                value: self.max_sectors_kb.to_string(),
                default: d.max_sectors_kb.to_string(),
                unit: "KiB",
                help: "largest request merging may build (BLK_DEF_MAX_SECTORS)",
            },
            TunableInfo {
                name: "nomerges",
                value: self.nomerges.to_string(),
                default: d.nomerges.to_string(),
                unit: "0/1/2",
                help: "0 all merges, 1 one-hit cache only, 2 none",
            },
            TunableInfo {
                name: "read_ahead_kb",
                value: self.read_ahead_kb.to_string(),
                default: d.read_ahead_kb.to_string(),
                unit: "KiB",
                help: "maximum read-ahead window (VM_MAX_READAHEAD)",
            },
            TunableInfo {
                name: "rotational",
                value: (self.rotational as u8).to_string(),
                default: (d.rotational as u8).to_string(),
                unit: "bool",
                help: "spinning disk; 0 for MMC (QUEUE_FLAG_NONROT)",
            },
        ]
    }

    /// `nr_congestion_on`: congested when an allocation finds
    /// count + 1 ≥ this (nr − nr/8 + 1, at most nr; 113 at 128).
    pub fn congestion_on(&self) -> u32 {
        let nr = self.nr_requests;
        (nr - nr / 8 + 1).min(nr)
    }

    /// `nr_congestion_off`: uncongested when a free leaves count below this
    /// (nr − nr/8 − nr/16 − 1, at least 1; 103 at 128).
    pub fn congestion_off(&self) -> u32 {
        let nr = self.nr_requests;
        (nr - nr / 8 - nr / 16).saturating_sub(1).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_validates_and_lists() {
        let mut p = QueueParams::default();
        assert_eq!(p.congestion_on(), 113);
        assert_eq!(p.congestion_off(), 103);
        p.set("nr_requests", "64").unwrap();
        assert_eq!(p.nr_requests, 64);
        assert_eq!(
            p.set("nr_requests", "2").unwrap_err().to_string(),
            "queue/nr_requests: 2 is out of range (expected 4..=65536)"
        );
        assert_eq!(
            p.set("nomerges", "x").unwrap_err().to_string(),
            "queue/nomerges: `x` is not a whole number (expected 0..=2)"
        );
        let e = p.set("scheduler", "noop").unwrap_err();
        assert!(matches!(e, SettingError::Unknown { .. }));
        assert!(e
            .to_string()
            .contains("nr_requests, max_sectors_kb, nomerges, read_ahead_kb, rotational"));
        let l = p.list();
        assert_eq!(l[0].value, "64");
        assert_eq!(l[0].default, "128");
        assert!(p.validate().is_ok());
        let bad: Result<QueueParams, _> = toml::from_str("nr_request = 3");
        assert!(bad.is_err());
        let ok: QueueParams = toml::from_str("nomerges = 2").unwrap();
        assert_eq!(ok.nomerges, 2);
        assert_eq!(ok.nr_requests, 128);
    }
}
