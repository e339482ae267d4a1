//! `simctl check`: regressions against a baseline fail CI.

mod common;
use common::*;
use std::process::Command;

fn check(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_simctl"))
        .arg("check")
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_report_passes_against_itself_and_a_regression_fails_with_a_table() {
    let tmp = scratch("check");
    let now = tmp.join("now.json");
    simctl_ok(&[
        "replay",
        "traces/sample.csv",
        "-q",
        "--json",
        now.to_str().unwrap(),
    ]);
    let (code, out, _) = check(&[now.to_str().unwrap(), "--baseline", now.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("passed"));

    // A baseline 20 % faster and with a 30 % lower p99 than now.
    let mut b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&now).unwrap()).unwrap();
    let iops = b["throughput"]["iops"].as_f64().unwrap();
    b["throughput"]["iops"] = (iops * 1.2).into();
    let p99 = b["latency_us"]["p99"].as_f64().unwrap();
    b["latency_us"]["p99"] = (p99 * 0.7).into();
    let base = tmp.join("base.json");
    std::fs::write(&base, serde_json::to_string(&b).unwrap()).unwrap();
    let (code, out, _) = check(&[now.to_str().unwrap(), "--baseline", base.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    for s in [
        "throughput.iops",
        "latency_us.p99",
        "REGRESSED",
        "baseline",
        "limit",
    ] {
        assert!(out.contains(s), "missing {s}:\n{out}");
    }
    // Unchanged metrics stay ok; better-than-baseline never fails.
    assert!(
        out.lines()
            .any(|l| l.contains("fairness.jain") && l.ends_with("ok")),
        "{out}"
    );
    let (code, _, _) = check(&[base.to_str().unwrap(), "--baseline", now.to_str().unwrap()]);
    assert_eq!(code, 0, "improvements are not regressions");
    // Wider tolerances let it pass.
    let (code, out, _) = check(&[
        now.to_str().unwrap(),
        "--baseline",
        base.to_str().unwrap(),
        "--tolerance",
        "throughput.iops=25",
        "--tolerance",
        "latency_us.p99=50",
    ]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn unusable_input_exits_2() {
    let tmp = scratch("check_bad");
    let now = tmp.join("now.json");
    simctl_ok(&[
        "replay",
        "traces/sample.csv",
        "-q",
        "--json",
        now.to_str().unwrap(),
    ]);
    let (code, _, err) = check(&[now.to_str().unwrap(), "--baseline", "no/such.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such.json"));
    let junk = tmp.join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let (code, _, err) = check(&[now.to_str().unwrap(), "--baseline", junk.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not an mmcsim report"), "{err}");
    let (code, _, err) = check(&[
        now.to_str().unwrap(),
        "--baseline",
        now.to_str().unwrap(),
        "--tolerance",
        "requests.count=5",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("requests.count"), "{err}");
}

#[test]
fn the_committed_ci_baseline_passes_as_the_readme_shows() {
    let tmp = scratch("check_ci");
    let now = tmp.join("now.json");
    simctl_ok(&[
        "run",
        "configs/scenarios/rand16-128m.toml",
        "--scheduler",
        "deadline",
        "-q",
        "--json",
        now.to_str().unwrap(),
    ]);
    let (code, out, err) = check(&[
        now.to_str().unwrap(),
        "--baseline",
        "configs/baselines/rand16-128m-deadline.json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}
