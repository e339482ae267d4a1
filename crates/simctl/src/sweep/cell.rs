//! One cell of a sweep: its coordinates, its stable id, and the scenario
//! it runs.

use crate::compare::Entry;
use anyhow::Result;
use mmcsim::config::Scenario;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One point of the grid.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Position in the cartesian product (0-based).
    pub index: usize,
    /// Stable id: the index and a hash of the coordinates, e.g.
    /// `0005-3fa2c1d0`; the cell's file is `cells/<id>.json`.
    pub id: String,
    /// The scheduler entry, with its own tunables.
    pub scheduler: Entry,
    /// The workload as written in the grid.
    pub workload: String,
    /// The workload file as the simulator opens it (relative to the
    /// current directory, or absolute).
    pub workload_path: PathBuf,
    /// The phone; `None`: the workload's own profiles.
    pub phone: Option<PhoneCell>,
    /// The device profile as written and its absolute path; `None`: the
    /// workload's own device.
    pub device: Option<(String, PathBuf)>,
    /// The seed; `None`: the workload's own.
    pub seed: Option<u64>,
    /// Index of the set variant in the grid's `sets`.
    pub set_variant: usize,
    /// The variant's overrides as written.
    pub sets: Vec<String>,
    /// The variant's overrides, parsed.
    pub set_pairs: Vec<(String, String)>,
    /// Overrides applied first to trace workloads (`trace_sets`).
    pub trace_sets: Vec<(String, String)>,
}

/// A phone of the grid, as its cells apply it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhoneCell {
    /// The phone's name (its file's `name`), the cell's coordinate.
    pub name: String,
    /// The phone's default scheduler.
    pub scheduler: String,
    /// The overrides selecting its device and host profiles and scheduler
    /// ([`mmcsim::config::Phone::sets`]), applied first.
    pub sets: Vec<(String, String)>,
}

impl PhoneCell {
    /// The phone's own scheduler as a scheduler entry (no tunables).
    pub fn own_scheduler(&self) -> Entry {
        Entry {
            label: self.scheduler.clone(),
            scheduler: self.scheduler.clone(),
            tunables: Vec::new(),
        }
    }
}

/// A cell's coordinates as `sweep.json` records them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellRecord {
    /// The cell id.
    pub id: String,
    /// Position in the product.
    pub index: usize,
    /// Scheduler entry as written.
    pub scheduler: String,
    /// Workload as written.
    pub workload: String,
    /// Workload file as opened.
    pub workload_path: String,
    /// Phone name (empty, and left out of `sweep.json`: no phone).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phone: String,
    /// Device profile as written (empty: the workload's own).
    pub device: String,
    /// Seed (absent: the workload's own).
    pub seed: Option<u64>,
    /// Set variant index.
    pub set_variant: usize,
    /// The variant's overrides as written.
    pub sets: Vec<String>,
}

impl CellRecord {
    /// The coordinates in one line, for messages.
    pub fn describe(&self) -> String {
        let own = |s: &str| {
            if s.is_empty() {
                "(workload's)".to_string()
            } else {
                s.to_string()
            }
        };
        let phone = if self.phone.is_empty() {
            String::new()
        } else {
            format!(", phone={}", self.phone)
        };
        format!(
            "cell {} (scheduler={}, workload={}{phone}, device={}, seed={}, sets={:?})",
            self.id,
            self.scheduler,
            self.workload,
            own(&self.device),
            self.seed.map_or(own(""), |s| s.to_string()),
            self.sets
        )
    }
}

/// 64-bit FNV-1a: a small, portable, stable hash (the same on every
/// machine and Rust version, unlike `std`'s `DefaultHasher`).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Cell {
    /// Sets the id from the index (zero-padded to `width`) and a hash of
    /// the coordinates.
    pub fn assign_id(&mut self, width: usize) {
        let r = self.record();
        let key = format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
            r.scheduler,
            r.workload,
            r.device,
            r.seed.map_or(String::new(), |s| s.to_string()),
            r.sets.join("\u{1e}")
        );
        // Grids without phones keep the ids they had before phones existed.
        let key = if r.phone.is_empty() {
            key
        } else {
            format!("{key}\u{1f}phone={}", r.phone)
        };
        self.id = format!("{:0width$}-{:08x}", self.index, fnv1a(key.as_bytes()) >> 32);
    }

    /// The coordinates as recorded in `sweep.json`.
    pub fn record(&self) -> CellRecord {
        CellRecord {
            id: self.id.clone(),
            index: self.index,
            scheduler: self.scheduler.label.clone(),
            workload: self.workload.clone(),
            workload_path: self.workload_path.display().to_string(),
            phone: self
                .phone
                .as_ref()
                .map_or(String::new(), |p| p.name.clone()),
            device: self.device.as_ref().map_or(String::new(), |d| d.0.clone()),
            seed: self.seed,
            set_variant: self.set_variant,
            sets: self.sets.clone(),
        }
    }

    /// The coordinates in one line, for messages.
    pub fn describe(&self) -> String {
        self.record().describe()
    }

    /// True when the workload is a scenario file or an fio job file (else
    /// a trace), as `compare` decides.
    pub fn is_scenario(&self) -> bool {
        crate::compare::is_scenario(&self.workload_path)
    }

    /// The overrides in the order they apply: trace options (traces
    /// only), the phone's profiles and scheduler, device, scheduler and
    /// its tunables, seed, then the set variant (so a variant can override
    /// anything, as `--set` does on the command line; the order of `run
    /// --phone --device --scheduler --seed --set`).
    pub fn overrides(&self) -> Vec<(String, String)> {
        let mut s = Vec::new();
        if !self.is_scenario() {
            s.extend(self.trace_sets.iter().cloned());
        }
        if let Some(p) = &self.phone {
            s.extend(p.sets.iter().cloned());
        }
        if let Some((_, p)) = &self.device {
            s.push(("device.profile".to_string(), p.display().to_string()));
        }
        s.push((
            "scheduler.name".to_string(),
            self.scheduler.scheduler.clone(),
        ));
        for (k, v) in &self.scheduler.tunables {
            s.push((format!("iosched.{k}"), v.clone()));
        }
        if let Some(seed) = self.seed {
            s.push(("seed".to_string(), seed.to_string()));
        }
        s.extend(self.set_pairs.iter().cloned());
        s
    }

    /// The cell's scenario, loaded and validated.
    pub fn scenario(&self) -> Result<Scenario> {
        let sets = self.overrides();
        Ok(if self.is_scenario() {
            crate::commands::load_workload(&self.workload_path, &sets)?
        } else {
            Scenario::for_trace(&self.workload_path, &sets)?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::fnv1a;

    #[test]
    fn fnv1a_matches_the_reference_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
