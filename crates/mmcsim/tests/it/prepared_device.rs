//! A simulation started from a [`PreparedDevice`] (preconditioned once,
//! cloned per run) reports exactly what a simulation that preconditions
//! its own device reports, and a device prepared for another profile,
//! fill or seed is refused.

use mmcsim::config::Scenario;
use mmcsim::sched::builtin;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use std::path::PathBuf;

fn scenario(sets: &[(&str, &str)]) -> Scenario {
    let text = r#"
name = "prepared"
seed = 3

[device]
profile = "../../../configs/devices/generic-emmc.toml"

[precondition]
fill_fraction = 0.3
steady_state = true
max_overwrite_factor = 0.5

[[files]]
name = "data"
size_mib = 16

[[jobs]]
name = "mixed"
file = "data"
op = "write"
pattern = "random"
request_bytes = 4096
direct = true
threads = 2
requests = 300
"#;
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Scenario::from_toml(text, "prepared", base, &sets).expect("scenario parses")
}

#[test]
fn a_prepared_device_gives_the_same_report_and_is_reused_across_schedulers() {
    let reg = builtin();
    let prepared = PreparedDevice::new(&scenario(&[])).unwrap();
    assert!(prepared.summary().pages_filled > 0);
    for sched in ["deadline", "noop", "cfq"] {
        let sets = [("scheduler.name", sched)];
        let fresh = Simulation::with_registry(scenario(&sets), &reg)
            .unwrap()
            .run(RunOptions::default())
            .unwrap()
            .to_json();
        let reused = Simulation::with_prepared_device(scenario(&sets), &reg, &prepared)
            .unwrap()
            .run(RunOptions::default())
            .unwrap()
            .to_json();
        assert_eq!(fresh, reused, "{sched}");
    }
}

#[test]
fn a_device_prepared_for_another_seed_fill_or_profile_is_refused() {
    let reg = builtin();
    let prepared = PreparedDevice::new(&scenario(&[])).unwrap();
    for other in [
        ("seed", "4"),
        ("precondition.fill_fraction", "0.4"),
        ("device.map_cache.entries", "16"),
    ] {
        let sc = scenario(&[other]);
        assert_ne!(
            PreparedDevice::key(&sc).unwrap(),
            PreparedDevice::key(&scenario(&[])).unwrap()
        );
        let err = Simulation::with_prepared_device(sc, &reg, &prepared)
            .err()
            .unwrap_or_else(|| panic!("{other:?} accepted"))
            .to_string();
        assert!(err.contains("prepared device"), "{err}");
    }
    // Scheduler and queue settings do not change the device.
    assert_eq!(
        PreparedDevice::key(&scenario(&[
            ("scheduler.name", "noop"),
            ("queue.read_ahead_kb", "0")
        ]))
        .unwrap(),
        PreparedDevice::key(&scenario(&[])).unwrap()
    );
}
