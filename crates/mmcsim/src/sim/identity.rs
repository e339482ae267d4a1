//! What a run ran, as digests a regression check compares
//! (`run.identity` of the report).
//!
//! Every digest is FNV-1a 64 (offset basis 0xcbf29ce484222325, prime
//! 0x100000001b3) of a canonical JSON text, written `fnv1a64:` and 16
//! lower-case hex digits. The JSON is built through `serde_json::Value`,
//! whose objects keep their keys sorted, so the text does not depend on
//! field order; it holds no absolute path and no time, so the same run
//! gives the same identity on any machine and in any directory.

use crate::config::Scenario;
use crate::device::DeviceConfig;
use crate::sched::TunableInfo;
use serde::Serialize;
use serde_json::Value;

/// The digests of what a run ran.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct RunIdentity {
    /// The workload: the scenario after overrides, less its name, seed,
    /// device, host, queue, driver, writeback, scheduler and
    /// preconditioning, with every trace file replaced by the digest of
    /// its content.
    pub workload: String,
    /// The device as used: the profile with overrides and the
    /// preconditioning.
    pub device: String,
    /// The host as used: the host settings (profile merged), queue
    /// attributes, driver and writeback settings.
    pub host: String,
    /// The scheduler: name, `HZ` and the value of every tunable.
    pub scheduler: String,
    /// Seed of every random stream.
    pub seed: u64,
    /// Version of mmcsim.
    pub mmcsim_version: &'static str,
    /// Schema of the report.
    pub schema: &'static str,
}

/// FNV-1a 64 of `bytes`, as `fnv1a64:` and 16 hex digits.
pub fn fnv1a64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// The digest of `v`'s canonical JSON text (sorted keys).
fn digest(v: &impl Serialize) -> String {
    let value = serde_json::to_value(v).unwrap_or(Value::Null);
    fnv1a64(value.to_string().as_bytes())
}

/// The digest of the content of the regular file at `path`. A pipe or a
/// device was read once by the run and cannot be read again: it counts by
/// its name (so is the error text of a file that cannot be read).
fn file_digest(path: &std::path::Path) -> String {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return fnv1a64(format!("not a regular file: {}", path.display()).as_bytes());
    }
    match std::fs::read(path) {
        Ok(bytes) => fnv1a64(&bytes),
        Err(e) => fnv1a64(e.to_string().as_bytes()),
    }
}

/// The identity of a run of `sc` on `device` under scheduler `name`
/// (`hz`, `tunables`).
pub(super) fn identity(
    sc: &Scenario,
    device: &DeviceConfig,
    name: &str,
    tunables: &[TunableInfo],
    schema: &'static str,
) -> RunIdentity {
    let mut workload = serde_json::to_value(sc).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut workload {
        for k in [
            "name",
            "description",
            "seed",
            "device",
            "host",
            "queue",
            "driver",
            "writeback",
            "scheduler",
            "precondition",
        ] {
            m.remove(k);
        }
        if let (Some(Value::Object(t)), Some(spec)) = (m.get_mut("trace"), &sc.trace) {
            t.insert("path".into(), file_digest(&sc.resolve(&spec.path)).into());
            if let Some(p) = &spec.precondition {
                t.insert("precondition".into(), file_digest(&sc.resolve(p)).into());
            }
        }
    }
    let mut host = sc.host.clone();
    host.profile = None;
    let values: Vec<(&str, &str)> = tunables
        .iter()
        .map(|t| (t.name, t.value.as_str()))
        .collect();
    RunIdentity {
        workload: fnv1a64(workload.to_string().as_bytes()),
        device: digest(&(device, &sc.precondition)),
        host: digest(&(&host, &sc.queue, &sc.driver, &sc.writeback)),
        scheduler: digest(&(name, sc.scheduler.hz, values)),
        seed: sc.seed,
        mmcsim_version: env!("CARGO_PKG_VERSION"),
        schema,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), "fnv1a64:cbf29ce484222325");
        assert_eq!(fnv1a64(b"a"), "fnv1a64:af63dc4c8601ec8c");
        assert_eq!(fnv1a64(b"foobar"), "fnv1a64:85944171f73967e8");
    }
}
