//! Device state save/load through the binary: `--save-state` writes the
//! preconditioned device, `--load-state` starts from it, and the report is
//! byte-identical to preconditioning in place; a state of another
//! geometry, profile or seed, or a truncated or corrupted file, is refused
//! with an error naming the file.

use crate::common::*;
use std::path::Path;

/// Runs simctl with `args` plus `--json OUT --quiet`; returns the report
/// bytes.
fn report_bytes(args: &[&str], out: &Path) -> Vec<u8> {
    let mut a = args.to_vec();
    a.extend(["--json", out.to_str().unwrap(), "--quiet"]);
    simctl_ok(&a);
    std::fs::read(out).unwrap()
}

/// Preconditioned in place, saved then loaded: the same report bytes.
fn same_report(name: &str, args: &[&str]) {
    let tmp = scratch(&format!("device_state_{name}"));
    let state = tmp.join("dev.state");
    let s = state.to_str().unwrap();
    let in_place = report_bytes(args, &tmp.join("in-place.json"));
    let saving = report_bytes(
        &[args, &["--save-state", s]].concat(),
        &tmp.join("saving.json"),
    );
    let loaded = report_bytes(
        &[args, &["--load-state", s]].concat(),
        &tmp.join("loaded.json"),
    );
    assert!(in_place == saving, "{name}: saving changed the report");
    assert!(in_place == loaded, "{name}: loading changed the report");
    let leftovers: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn loading_a_saved_state_gives_the_report_of_preconditioning_in_place() {
    same_report("timed", &["replay", "traces/sample.csv"]);
    same_report(
        "closed-cfq",
        &[
            "replay",
            "traces/ssdsim.ascii",
            "--mode",
            "closed",
            "--scheduler",
            "cfq",
        ],
    );
    // A secure discard on an eMMC 4.5 card sanitizes: it collects every
    // block holding invalid data, which a loaded state must know as such
    // (not as padding).
    let tmp = scratch("device_state_sanitize_trace");
    let trace = tmp.join("secure-discard.csv");
    std::fs::write(
        &trace,
        "time_us,op,sector,sectors,flags\n0,D,0,8192,E\n1000,R,0,1024,\n",
    )
    .unwrap();
    let args = [
        "replay",
        trace.to_str().unwrap(),
        "--mode",
        "closed",
        "--set",
        "device.nand.blocks_per_plane=256",
        "--set",
        "device.features.emmc_version=\"4.5\"",
    ];
    same_report("sanitize", &args);
    // The same on the demand-cached (DFTL) and log-block (FAST) mappings:
    // their saved state carries the cached mapping table and translation
    // pages, or the log blocks and written-slot counts, so SANITIZE finds
    // the same stale translation pages and merges the same log blocks.
    for mapping in ["dftl", "hybrid"] {
        let set = format!("device.ftl.mapping=\"{mapping}\"");
        let mut with_mapping = args.to_vec();
        with_mapping.extend(["--set", &set]);
        same_report(&format!("sanitize-{mapping}"), &with_mapping);
    }
    same_report(
        "scenario-cmdq",
        &[
            "run",
            "crates/simctl/tests/golden/scenarios/writes-mix.toml",
            "--set",
            "device.profile=../../../../../configs/devices/generic-emmc51-cmdq.toml",
            "--scheduler",
            "mq-deadline",
        ],
    );
}

#[test]
fn a_state_of_another_device_or_a_damaged_file_is_a_located_error() {
    let tmp = scratch("device_state_errors");
    let state = tmp.join("dev.state");
    let s = state.to_str().unwrap();
    let trace = "traces/sample.csv";
    simctl_ok(&["replay", trace, "--quiet", "--save-state", s]);
    let bytes = std::fs::read(&state).unwrap();
    assert_eq!(&bytes[..8], b"MMCSIMST");

    let load = |args: &[&str], path: &str| -> String {
        simctl_err(&[&["replay", trace, "--quiet", "--load-state", path], args].concat())
    };
    // Another seed: same geometry, other profile hash.
    let e = load(&["--seed", "8"], s);
    assert!(
        e.contains(s) && e.contains("another device profile, [precondition] setting or seed"),
        "{e}"
    );
    // Another geometry.
    let e = load(&["--set", "device.nand.blocks_per_plane=512"], s);
    assert!(
        e.contains(s) && e.contains("blocks per plane = 1024, but this device has 512"),
        "{e}"
    );
    // Truncated.
    let cut = tmp.join("cut.state");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = load(&[], cut.to_str().unwrap());
    assert!(e.contains("cut.state") && e.contains("truncated"), "{e}");
    let e = {
        std::fs::write(&cut, &bytes[..20]).unwrap();
        load(&[], cut.to_str().unwrap())
    };
    assert!(
        e.contains("shorter than the") && e.contains("header"),
        "{e}"
    );
    // One payload byte flipped.
    let mut bad = bytes.clone();
    let at = bad.len() - 1000;
    bad[at] ^= 0x40;
    let flipped = tmp.join("flipped.state");
    std::fs::write(&flipped, &bad).unwrap();
    let e = load(&[], flipped.to_str().unwrap());
    assert!(e.contains("flipped.state") && e.contains("checksum"), "{e}");
    // Another format version.
    let mut old = bytes.clone();
    old[8] = 99;
    std::fs::write(&flipped, &old).unwrap();
    let e = load(&[], flipped.to_str().unwrap());
    assert!(e.contains("format version 99"), "{e}");
    // The previous format (2: before the hybrid and DFTL payloads).
    old[8] = 2;
    std::fs::write(&flipped, &old).unwrap();
    let e = load(&[], flipped.to_str().unwrap());
    assert!(
        e.contains("flipped.state") && e.contains("format version 2; this simctl reads version 3"),
        "{e}"
    );
    // Not a state at all.
    let e = load(&[], trace);
    assert!(e.contains("not a saved device state"), "{e}");
    // Both at once, or saving over an input.
    let e = simctl_err(&["replay", trace, "--save-state", s, "--load-state", s]);
    assert!(
        e.contains("--save-state") && e.contains("--load-state"),
        "{e}"
    );
    let e = simctl_err(&["replay", trace, "--save-state", trace]);
    assert!(e.contains("refusing to overwrite an input"), "{e}");
}
