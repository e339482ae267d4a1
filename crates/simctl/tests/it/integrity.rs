//! `--check-integrity` through the real `simctl` binary: a bundled scenario
//! and a public trace pass the per-command FTL integrity check, and the
//! report is the same as without it plus the `integrity` section.

use crate::common::{report, scratch, shared_trace, simctl_ok};
use serde_json::Value;

/// Runs `args` with and without `--check-integrity`; asserts the reports
/// agree except for the `integrity` section, which is returned.
fn same_numbers_plus_integrity(args: &[&str], name: &str) -> Value {
    let tmp = scratch(name);
    let plain = report(args, &tmp);
    assert!(
        plain.get("integrity").is_none(),
        "no section without the option"
    );
    let mut checked_args = args.to_vec();
    checked_args.push("--check-integrity");
    let mut checked = report(&checked_args, &tmp);
    let integrity = checked
        .as_object_mut()
        .unwrap()
        .remove("integrity")
        .expect("integrity section");
    assert_eq!(checked, plain, "the check changed the simulation's numbers");
    assert_eq!(integrity["violations"], 0);
    assert_eq!(integrity["full_checks"], 2);
    let commands = integrity["checked_commands"].as_u64().unwrap();
    assert!(commands > 0, "{integrity}");
    assert!(integrity["checked_pages"].as_u64().unwrap() >= commands);
    integrity
}

#[test]
fn a_bundled_scenario_passes_with_unchanged_numbers() {
    let args = [
        "run",
        "configs/scenarios/rand16-128m.toml",
        "--set",
        "precondition.max_overwrite_factor=0.2",
    ];
    same_numbers_plus_integrity(&args, "integrity-scenario");
    let mut text_args = args.to_vec();
    text_args.push("--check-integrity");
    let text = simctl_ok(&text_args);
    assert!(
        text.lines()
            .any(|l| l.starts_with("integrity: checked after each of ")
                && l.ends_with(", 0 violations")),
        "{text}"
    );
}

#[test]
fn a_public_trace_with_writes_passes_and_gc_moves_are_checked() {
    let Some(trace) = shared_trace("integrity of a public trace", "mqsim-tpcc-small.trace") else {
        return;
    };
    let t = trace.to_str().unwrap();
    let args = [
        "replay",
        t,
        "--format",
        "mqsim",
        "--all-devices",
        "--fit",
        "wrap",
    ];
    let integrity = same_numbers_plus_integrity(&args, "integrity-trace");
    // Writes: the FTL remapped pages, whose slots were checked too.
    assert!(
        integrity["checked_slots"].as_u64().unwrap() > 0,
        "{integrity}"
    );
}
