//! `simctl check`: regressions against a baseline fail CI.

use crate::common::*;

fn check(args: &[&str]) -> (i32, String, String) {
    let mut a = vec!["check"];
    a.extend_from_slice(args);
    simctl_code(&a)
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

/// Runs simctl from the repository root and returns (exit code, stdout,
/// stderr).
fn simctl_code(args: &[&str]) -> (i32, String, String) {
    let out = simctl(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Reads a JSON file.
fn read_json(p: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Writes `v` as JSON to `dir/name` and returns the path as a string.
fn write_json(dir: &std::path::Path, name: &str, v: &serde_json::Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn the_report_records_what_it_ran_by_digests_independent_of_paths() {
    let tmp = scratch("check_identity");
    let run = |args: &[&str]| report(args, &tmp)["run"]["identity"].clone();
    let base = run(&["replay", "traces/sample.csv"]);
    for k in ["workload", "device", "host", "scheduler"] {
        let d = base[k].as_str().unwrap();
        assert!(
            d.starts_with("fnv1a64:") && d.len() == 24,
            "{k}: {d} is not an FNV-1a 64 digest"
        );
    }
    assert_eq!(base["seed"], 1);
    assert_eq!(base["schema"], "mmcsim-report/2");
    assert_eq!(base["mmcsim_version"], env!("CARGO_PKG_VERSION"));
    // The trace counts by content: a copy elsewhere is the same workload.
    let copy = tmp.join("copy.csv");
    std::fs::copy(root().join("traces/sample.csv"), &copy).unwrap();
    assert_eq!(run(&["replay", copy.to_str().unwrap()]), base);
    // Each input moves its own digest only.
    let changed = |args: &[&str]| {
        let id = run(args);
        ["workload", "device", "host", "scheduler", "seed"]
            .into_iter()
            .filter(|k| id[k] != base[k])
            .collect::<Vec<_>>()
    };
    let fifo = [
        "replay",
        "traces/sample.csv",
        "--set",
        "iosched.fifo_batch=1",
    ];
    assert_eq!(changed(&fifo), ["scheduler"]);
    let seed = ["replay", "traces/sample.csv", "--seed", "7"];
    assert_eq!(changed(&seed), ["seed"]);
    let dev = [
        "replay",
        "traces/sample.csv",
        "--device",
        "configs/devices/motog-2013-emmc.toml",
    ];
    assert_eq!(changed(&dev), ["device"]);
    let host = ["replay", "traces/sample.csv", "--set", "host.irq_us=11"];
    assert_eq!(changed(&host), ["host"]);
    let speed = ["replay", "traces/sample.csv", "--set", "trace.speed=2"];
    assert_eq!(changed(&speed), ["workload"]);
}

#[test]
fn a_baseline_of_another_workload_is_refused_with_exit_2_unless_allowed() {
    let tmp = scratch("check_workload");
    let now = tmp.join("seq.json");
    let now = now.to_str().unwrap();
    simctl_ok(&[
        "run",
        "configs/scenarios/seq-read-4k.toml",
        "-q",
        "--json",
        now,
    ]);
    let base = "configs/baselines/rand16-128m-deadline.json";
    let (code, out, err) = check(&[now, "--baseline", base]);
    assert_eq!(code, 2, "{out}{err}");
    for s in [
        "workload",
        "seq-read-4k",
        "rand16-128m",
        "--allow-mismatch",
        base,
    ] {
        assert!(err.contains(s), "missing {s}: {err}");
    }
    assert!(!out.contains("passed"), "{out}");
    // Allowed, it is checked and the much faster run reported as improved.
    let (code, out, err) = check(&[now, "--baseline", base, "--allow-mismatch"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("note: workload: report seq-read-4k"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("throughput.iops") && l.ends_with("improved")),
        "{out}"
    );
}

#[test]
fn a_baseline_edited_to_another_device_host_schema_or_without_identity_is_refused() {
    let tmp = scratch("check_edited");
    let now = tmp.join("now.json");
    let now_s = now.to_str().unwrap();
    simctl_ok(&["replay", "traces/sample.csv", "-q", "--json", now_s]);
    let doc = read_json(&now);
    for (key, value, refused) in [
        ("device", "fnv1a64:0000000000000001", true),
        ("host", "fnv1a64:0000000000000002", true),
        ("schema", "mmcsim-report/0", true),
        ("mmcsim_version", "0.0.1", false),
        ("seed", "9", false),
    ] {
        let mut b = doc.clone();
        b["run"]["identity"][key] = value.into();
        let base = write_json(&tmp, &format!("{key}.json"), &b);
        let (code, out, err) = check(&[now_s, "--baseline", &base]);
        if refused {
            assert_eq!(code, 2, "{key}: {out}{err}");
            assert!(err.contains(&format!("{key}: ")), "{key}: {err}");
            assert!(err.contains(value), "{key}: {err}");
            let (code, out, _) = check(&[now_s, "--baseline", &base, "--allow-mismatch"]);
            assert_eq!(code, 0, "{key}: {out}");
            assert!(out.contains(&format!("note: {key}: ")), "{key}: {out}");
        } else {
            // What a check is for: noted, then checked.
            assert_eq!(code, 0, "{key}: {out}{err}");
            assert!(out.contains(&format!("note: {key}: ")), "{key}: {out}");
        }
    }
    let mut b = doc.clone();
    b["run"].as_object_mut().unwrap().remove("identity");
    let base = write_json(&tmp, "old.json", &b);
    let (code, _, err) = check(&[now_s, "--baseline", &base]);
    assert_eq!(code, 2);
    assert!(err.contains("no `run.identity`"), "{err}");
    // A report of the previous schema (whose `host_software` counted queue
    // waits as host time) is refused with what changed.
    let mut b = doc.clone();
    b["schema"] = "mmcsim-report/1".into();
    let base = write_json(&tmp, "schema1.json", &b);
    let (code, _, err) = check(&[now_s, "--baseline", &base]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("older report format") && err.contains("not_device"),
        "{err}"
    );
}

#[test]
fn a_5_percent_iops_regression_fails_and_a_30_percent_improvement_is_reported() {
    let tmp = scratch("check_iops");
    let now = tmp.join("now.json");
    let now_s = now.to_str().unwrap();
    simctl_ok(&["replay", "traces/sample.csv", "-q", "--json", now_s]);
    let doc = read_json(&now);
    let iops = doc["throughput"]["iops"].as_f64().unwrap();
    // Now is 5 % below the baseline.
    let mut b = doc.clone();
    b["throughput"]["iops"] = (iops / 0.95).into();
    let base = write_json(&tmp, "higher.json", &b);
    let (code, out, _) = check(&[now_s, "--baseline", &base]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("throughput.iops") && l.ends_with("REGRESSED")),
        "{out}"
    );
    assert!(out.contains("check FAILED: 1 of"), "{out}");
    // Now is 30 % above the baseline: reported, not failed...
    let mut b = doc.clone();
    b["throughput"]["iops"] = (iops / 1.3).into();
    let base = write_json(&tmp, "lower.json", &b);
    let (code, out, _) = check(&[now_s, "--baseline", &base]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.contains("throughput.iops")
            && l.contains("+30.0%")
            && l.ends_with("improved")),
        "{out}"
    );
    assert!(out.contains("improved beyond tolerance"), "{out}");
    // ... unless asked to.
    let (code, out, _) = check(&[now_s, "--baseline", &base, "--fail-on-improvement"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("--fail-on-improvement"), "{out}");
}

#[test]
fn help_states_every_default_tolerance() {
    let (code, out, _) = simctl_code(&["check", "--help"]);
    assert_eq!(code, 0);
    let help = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for m in [
        "throughput.iops",
        "throughput.mb_per_s",
        "read.iops",
        "write.iops",
        "latency_us.mean",
        "latency_us.p99",
        "latency_us.p999",
        "read.latency_us.p99",
        "write.latency_us.p99",
        "fairness.jain",
        "device.waf",
        "--allow-mismatch",
        "--fail-on-improvement",
    ] {
        assert!(help.contains(m), "--help does not state {m}: {help}");
    }
    for pct in ["3 %", "10 %", "15 %", "25 %", "2 %", "5 %"] {
        assert!(help.contains(pct), "{pct}: {help}");
    }
}

/// The `run:` commands of a GitHub Actions workflow (folded `run: >`
/// blocks joined into one line each).
fn workflow_commands(yaml: &str) -> Vec<String> {
    let mut cmds = Vec::new();
    let mut lines = yaml.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim_start().trim_start_matches("- ").trim() != "run: >" {
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        let mut cmd = Vec::new();
        while let Some(next) = lines.peek() {
            if next.trim().is_empty() || next.len() - next.trim_start().len() <= indent {
                break;
            }
            cmd.push(lines.next().unwrap().trim());
        }
        cmds.push(cmd.join(" "));
    }
    cmds
}

#[test]
fn the_ci_workflow_passes_deadline_and_fails_a_regressed_scheduler() {
    let tmp = scratch("check_workflow");
    let yaml =
        std::fs::read_to_string(root().join(".github/workflows/scheduler-regression.yml")).unwrap();
    let cmds = workflow_commands(&yaml);
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    let run_all = |scheduler: &str| -> Vec<i32> {
        cmds.iter()
            .map(|c| {
                let c = c
                    .replace("--scheduler deadline", &format!("--scheduler {scheduler}"))
                    .replace("report.json", tmp.join("report.json").to_str().unwrap());
                let rest = c
                    .strip_prefix("cargo run --release -p simctl -- ")
                    .unwrap_or_else(|| panic!("not a simctl command: {c}"));
                let args: Vec<&str> = rest.split_whitespace().collect();
                simctl_code(&args).0
            })
            .collect()
    };
    assert_eq!(run_all("deadline"), [0, 0], "the committed baseline passes");
    // A deliberately regressed scheduler: CFQ's time slices keep most of
    // the 16 readers waiting (p99 +460 %, Jain -6 %).
    assert_eq!(
        run_all("cfq"),
        [0, 1],
        "a regressed scheduler fails the job"
    );
}
