//! End-to-end: the blk-mq path (eMMC 5.1 CMDQ driver) and the mq
//! schedulers, through the real `simctl` binary.

use crate::common::*;

const SCEN: &str = "configs/scenarios/rand16-128m.toml";
const CMDQ: &str = "device.profile=../devices/generic-emmc51-cmdq.toml";

fn iops(r: &serde_json::Value) -> f64 {
    r["workload"]["throughput"]["iops"]
        .as_f64()
        .or_else(|| r["throughput"]["iops"].as_f64())
        .expect("IOPS in the report")
}

#[test]
fn mq_deadline_on_cmdq_completes_and_beats_the_legacy_path() {
    let tmp = scratch("blkmq-mq-deadline");
    let out = simctl_ok(&["run", SCEN, "--scheduler", "mq-deadline", "--set", CMDQ]);
    assert!(out.contains("calls 8000"), "{out}");
    let mq = report(
        &["run", SCEN, "--scheduler", "mq-deadline", "--set", CMDQ],
        &tmp,
    );
    assert_eq!(mq["driver"]["mode"], "cmdq");
    assert_eq!(mq["driver"]["cmdq_depth"], 31);
    let legacy = report(&["run", SCEN, "--scheduler", "deadline"], &tmp);
    assert!(
        legacy["driver"].get("mode").is_none(),
        "legacy report unchanged"
    );
    let (a, b) = (iops(&mq), iops(&legacy));
    assert!(a > b * 1.1, "CMDQ {a} IOPS vs legacy {b}");
}

#[test]
fn every_mq_scheduler_runs_the_cmdq_path_to_completion() {
    for s in ["mq-deadline", "kyber", "bfq-mq", "none"] {
        let out = simctl_ok(&["run", SCEN, "--scheduler", s, "--set", CMDQ]);
        assert!(out.contains("calls 8000"), "{s}: {out}");
    }
}

#[test]
fn driver_mode_and_depth_are_validated() {
    let err = simctl_err(&["run", SCEN, "--set", "driver.mode=cmdq"]);
    assert!(err.contains("[cmdq]"), "{err}");
    let err = simctl_err(&["run", SCEN, "--set", CMDQ, "--set", "driver.cmdq_depth=32"]);
    assert!(err.contains("1..=31"), "{err}");
    // Legacy forced on a CMDQ card, and a legacy elevator on CMDQ: both run.
    let out = simctl_ok(&[
        "run",
        SCEN,
        "--set",
        CMDQ,
        "--set",
        "driver.mode=legacy",
        "--scheduler",
        "mq-deadline",
    ]);
    assert!(out.contains("calls 8000"), "{out}");
    let out = simctl_ok(&[
        "run",
        SCEN,
        "--set",
        CMDQ,
        "--set",
        "driver.cmdq_depth=4",
        "--scheduler",
        "cfq",
    ]);
    assert!(out.contains("calls 8000"), "{out}");
}
