//! Exit codes, the same for every command: 0 success, 1 a run or check
//! failed, 2 unusable input or usage.

use crate::common::*;

/// Runs simctl from the repository root: (exit code, stderr).
fn code(args: &[&str]) -> (i32, String) {
    let out = simctl(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn usage_errors_and_bad_settings_exit_2_naming_what_is_wrong() {
    let t = "traces/sample.csv";
    for (args, says) in [
        (vec!["replay", t, "--no-such-flag"], "--no-such-flag"),
        (
            vec!["replay", t, "--scheduler", "bogus"],
            "unknown scheduler `bogus`",
        ),
        (vec!["replay", t, "--set", "foo"], "expected KEY=VALUE"),
        (
            vec!["replay", t, "--set", "iosched.fifo_batch=x"],
            "fifo_batch",
        ),
        (
            vec!["replay", t, "--set", "queue.nr_requests=-1"],
            "nr_requests",
        ),
        (vec!["replay", t, "--phone", "nophone"], "--phone nophone"),
        (
            vec!["replay", t, "--set", "device.ftl.over_provisioning=0.005"],
            "over_provisioning",
        ),
        (
            vec!["replay", t, "--device", "no/such.toml"],
            "no/such.toml",
        ),
        (vec!["run", "no/such.toml"], "no/such.toml"),
        (
            vec!["compare", t, "--schedulers", "noop", "--set", "foo"],
            "expected KEY=VALUE",
        ),
    ] {
        let (c, err) = code(&args);
        assert_eq!(c, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_failed_run_exits_1() {
    let dir = scratch("exit_failed_run");
    // A header-only trace loads but completes no request.
    let t = dir.join("h.csv");
    std::fs::write(&t, "time_ns,op,sector,sectors\n").unwrap();
    let (c, err) = code(&["replay", t.to_str().unwrap()]);
    assert_eq!(c, 1, "{err}");
    assert!(err.contains("completed no request"), "{err}");
}

#[test]
fn the_input_is_checked_before_the_device_is_built() {
    // A missing trace is refused naming it, with exit code 2. (No
    // wall-clock assertion: timing targets belong in benchmarks.)
    let (c, err) = code(&["replay", "nosuch.csv"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("nosuch.csv"), "{err}");
    let (c, err) = code(&["replay", "traces"]);
    assert_eq!(c, 2, "{err}");
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn a_scenario_given_to_replay_or_a_trace_given_to_run_names_the_right_command() {
    let (c, err) = code(&["replay", "configs/scenarios/rand16-128m.toml"]);
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains("is a scenario")
            && err.contains("simctl run configs/scenarios/rand16-128m.toml"),
        "{err}"
    );
    let (c, err) = code(&["replay", "configs/fio/randread-4k.fio"]);
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains("fio job file") && err.contains("simctl run"),
        "{err}"
    );
    let (c, err) = code(&["run", "traces/sample.csv"]);
    assert_eq!(c, 2, "{err}");
    assert!(
        err.contains("is a trace") && err.contains("simctl replay traces/sample.csv"),
        "{err}"
    );
    assert!(!err.contains("TOML parse error"), "{err}");
}
