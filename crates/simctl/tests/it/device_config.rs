//! End-to-end: device-profile choices and limits through the real `simctl`
//! binary — over-provisioning too small for garbage collection, mapping
//! schemes, GC victim policies and static wear leveling.

use crate::common::*;

const WRITES: &str = "crates/simctl/tests/golden/scenarios/writes-mix.toml";
const READS: &str = "configs/scenarios/rand16-128m.toml";
/// The generic profile with 64-page blocks: GC needs more spare space,
/// since a victim must have a whole stripe page (4 of 256 slots) invalid.
const SMALL_BLOCKS: [&str; 4] = [
    "--set",
    "device.nand.pages_per_block=64",
    "--set",
    "device.nand.blocks_per_plane=4096",
];

fn run(scenario: &str, sets: &[&str]) -> Vec<String> {
    let mut a = vec!["run".to_string(), scenario.to_string()];
    a.extend(SMALL_BLOCKS.iter().map(|s| s.to_string()));
    for s in sets {
        a.push("--set".into());
        a.push(s.to_string());
    }
    a
}

fn refs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

/// Over-provisioning 0.005 passed the old spare-block check but left GC
/// without a victim worth collecting on every die: the FTL panicked ("no
/// die has a free block for host data"). It is now a located configuration
/// error stating the minimum, and the minimum runs.
#[test]
fn over_provisioning_below_what_gc_needs_is_a_located_error_naming_the_minimum() {
    for scenario in [WRITES, READS] {
        let a = run(scenario, &["device.ftl.over_provisioning=0.005"]);
        let out = simctl(&refs(&a));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "a configuration error: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains("[ftl] over_provisioning: 0.005")
                && err.contains("use over_provisioning ≥ 0.0123"),
            "{err}"
        );
    }
    let a = run(
        WRITES,
        &[
            "device.ftl.over_provisioning=0.0123",
            "precondition.fill_fraction=1.0",
        ],
    );
    let out = simctl_ok(&refs(&a));
    assert!(out.contains("GC runs"), "{out}");
}

#[test]
fn every_mapping_scheme_runs_and_unknown_schemes_list_the_choices() {
    let tmp = scratch("device-config-mappings");
    for scheme in ["hybrid", "dftl"] {
        let set = format!("device.ftl.mapping={scheme}");
        let a = run(READS, &[&set]);
        let r = report(&refs(&a), &tmp);
        assert_eq!(r["device_profile"]["ftl"]["mapping"], scheme);
        assert_eq!(r["device"]["merges"].is_object(), scheme == "hybrid");
    }
    let err = simctl_err(&["run", READS, "--set", "device.ftl.mapping=block"]);
    assert!(err.contains("page") && err.contains("dftl"), "{err}");
    let err = simctl_err(&[
        "run",
        READS,
        "--set",
        "device.ftl.hybrid.random_log_blocks=4",
    ]);
    assert!(
        err.contains("[ftl.hybrid]") && err.contains("mapping = \"hybrid\""),
        "{err}"
    );
}

#[test]
fn every_gc_policy_and_static_wear_leveling_run_and_unknown_policies_list_the_choices() {
    let tmp = scratch("device-config-policies");
    let mut waf = Vec::new();
    for policy in ["greedy", "cost-benefit", "fifo"] {
        let set = format!("device.gc.policy={policy}");
        let r = report(&["run", WRITES, "--set", &set], &tmp);
        assert_eq!(r["device_profile"]["gc"]["policy"], policy);
        assert!(r["device"]["gc_runs"].as_u64().unwrap() > 0, "{policy}");
        waf.push(r["device"]["waf"].as_f64().unwrap());
    }
    assert!(waf.iter().all(|&w| w >= 1.0), "{waf:?}");
    let r = report(
        &[
            "run",
            WRITES,
            "--set",
            "device.wear_leveling.static=true",
            "--set",
            "device.wear_leveling.static_threshold_erases=2",
        ],
        &tmp,
    );
    assert_eq!(r["device_profile"]["wear_leveling"]["static"], true);
    let err = simctl_err(&["run", READS, "--set", "device.gc.policy=lru"]);
    assert!(
        err.contains("greedy") && err.contains("cost-benefit") && err.contains("fifo"),
        "{err}"
    );
    let err = simctl_err(&[
        "run",
        READS,
        "--set",
        "device.wear_leveling.static_threshold_erases=8",
    ]);
    assert!(err.contains("unless static = true"), "{err}");
}

/// A device setting of the wrong type or an unknown device key given with
/// `--set` is named by its key path, with the profile it was merged into
/// and where such settings come from; the message carries no line number
/// of a merged text that exists in no file. An error in the profile file
/// itself (no settings merged) still points at its line.
#[test]
fn a_bad_device_setting_is_named_by_its_key() {
    let e = simctl_err(&["run", READS, "--set", "device.nand.t_r_us=abc"]);
    assert!(
        e.contains("generic-emmc.toml with the scenario's [device] settings and --set device.*")
            && e.contains("expected f64")
            && e.contains("nand.t_r_us"),
        "{e}"
    );
    assert!(!e.contains("line"), "{e}");
    let e = simctl_err(&["run", READS, "--set", "device.write_buffer.slc_log=yes"]);
    assert!(
        e.contains("write_buffer.slc_log") && e.contains("boolean"),
        "{e}"
    );
    let e = simctl_err(&["run", READS, "--set", "device.nand.bogus=1"]);
    assert!(
        e.contains("unknown field `bogus`") && e.contains("in `nand`"),
        "{e}"
    );

    let tmp = scratch("device-config-bad-file");
    let bad = tmp.join("bad.toml");
    let text = std::fs::read_to_string(root().join("configs/devices/generic-emmc.toml"))
        .unwrap()
        .replace("t_r_us = 64.0", "t_r_us = \"sixty\"");
    assert!(
        text.contains("\"sixty\""),
        "the profile's t_r_us line changed"
    );
    std::fs::write(&bad, text).unwrap();
    let e = simctl_err(&["run", READS, "--device", bad.to_str().unwrap()]);
    assert!(e.contains("bad.toml") && e.contains("line"), "{e}");
}
