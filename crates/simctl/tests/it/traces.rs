//! Real trace formats end to end through `simctl`: formats, inspect,
//! convert, replay of every bundled sample and of the public traces in
//! ../shared/traces (when present), recorded latency, per-process stats.

use crate::common::*;

#[test]
fn trace_formats_lists_every_reader_with_an_example() {
    let out = simctl_ok(&["trace", "formats"]);
    for f in [
        "native",
        "mmc-ftrace",
        "block-ftrace",
        "blkparse",
        "blktrace-bin",
        "fio-iolog",
        "msr",
        "spc",
        "disksim",
        "mqsim",
        "ssdsim",
        "pixel6a",
        "biotracer",
    ] {
        assert!(out.lines().any(|l| l.starts_with(f)), "{f} missing:\n{out}");
    }
    assert_eq!(out.matches("e.g. ").count(), 13);
}

#[test]
fn every_bundled_sample_replays_with_the_options_it_needs() {
    let tmp = scratch("samples");
    let cases: &[(&str, &[&str], u64)] = &[
        ("traces/biotracer.txt", &[], 8),
        ("traces/blkparse.txt", &[], 4),
        ("traces/mmcblk0.blktrace.0", &[], 4),
        ("traces/block-ftrace.txt", &[], 4),
        ("traces/disksim.trace", &[], 4),
        ("traces/fio-v2.log", &[], 4),
        ("traces/fio-v3.log", &[], 3),
        ("traces/mmc-ftrace-3x.txt", &[], 5),
        ("traces/mmc-ftrace.txt", &["--all-devices"], 0),
        ("traces/mqsim.trace", &[], 3),
        ("traces/msr.csv", &["--fit", "wrap"], 0),
        ("traces/native-extended.csv", &["--device-id", "0"], 0),
        ("traces/pixel6a.csv.gz", &["--fit", "compact"], 0),
        ("traces/spc.csv", &["--all-devices"], 0),
        ("traces/ssdsim.ascii", &[], 3),
    ];
    for (file, opts, expected) in cases {
        let mut args = vec!["replay", file];
        args.extend_from_slice(opts);
        let r = report(&args, &tmp);
        let n = r["requests"]["count"].as_u64().unwrap();
        assert!(n > 0, "{file}: nothing replayed");
        if *expected > 0 {
            assert_eq!(n, *expected, "{file}");
        }
        assert_eq!(
            r["trace"]["records"].as_u64().unwrap(),
            n,
            "{file}: every record completed"
        );
    }
}

#[test]
fn completions_recorded_in_a_trace_are_reported_beside_the_simulated_latency() {
    let tmp = scratch("recorded");
    let r = report(&["replay", "traces/blkparse.txt"], &tmp);
    let rec = &r["trace"]["recorded_latency_us"];
    assert!(rec["mean"].as_f64().unwrap() > 0.0, "{rec}");
    assert!(r["latency_us"]["mean"].as_f64().unwrap() > 0.0);
    assert_eq!(r["trace"]["format"], "blkparse");
}

#[test]
fn inspect_and_convert_agree_with_the_original() {
    let tmp = scratch("convert");
    let js = simctl_ok(&["trace", "inspect", "traces/sample.csv", "--json"]);
    let i: serde_json::Value = serde_json::from_str(&js).unwrap();
    assert_eq!(i["requests"], 1470);
    assert_eq!(
        i["read"]["count"].as_u64().unwrap()
            + i["write"]["count"].as_u64().unwrap()
            + i["discard"]["count"].as_u64().unwrap()
            + i["flush"]["count"].as_u64().unwrap(),
        1470
    );
    assert!(i["processes"].as_array().unwrap().len() >= 5);
    let sf = i["sequential_fraction"].as_f64().unwrap();
    assert!(sf > 0.0 && sf < 1.0);
    let text = simctl_ok(&["trace", "inspect", "traces/sample.csv"]);
    assert!(text.contains("sequential fraction") && text.contains("com.google.android.youtube"));

    for src in [
        "traces/blkparse.txt",
        "traces/mmc-ftrace-3x.txt",
        "traces/sample.csv",
    ] {
        let out = tmp.join("out.csv");
        simctl_ok(&[
            "trace",
            "convert",
            src,
            "--to",
            "csv",
            "-o",
            out.to_str().unwrap(),
        ]);
        let a: serde_json::Value =
            serde_json::from_str(&simctl_ok(&["trace", "inspect", src, "--json"])).unwrap();
        let b: serde_json::Value = serde_json::from_str(&simctl_ok(&[
            "trace",
            "inspect",
            out.to_str().unwrap(),
            "--json",
        ]))
        .unwrap();
        for k in [
            "requests",
            "read",
            "write",
            "discard",
            "flush",
            "min_sector",
            "end_sector",
            "sequential_fraction",
        ] {
            assert_eq!(a[k], b[k], "{src}: {k} differs after conversion");
        }
        assert_eq!(b["format"], "native-csv");
    }
    let e = simctl_err(&["trace", "convert", "traces/sample.csv", "--to", "parquet"]);
    assert!(e.contains("csv"), "{e}");
}

#[test]
fn malformed_samples_of_every_format_fail_with_file_line_and_field() {
    for f in std::fs::read_dir(root().join("traces/bad")).unwrap() {
        let p = f.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        // MQSim, SSDSim and integer-timed DiskSim lines look alike: name
        // the format for those (detection alone may pick a sibling).
        let mut args = vec!["trace", "inspect", p.to_str().unwrap()];
        for f in ["mqsim", "ssdsim", "disksim"] {
            if name.starts_with(f) {
                args.extend(["--format", f]);
            }
        }
        let e = simctl_err(&args);
        assert!(e.contains(&name), "{name}: {e}");
        assert!(e.contains("field") || e.contains("detect"), "{name}: {e}");
    }
}

#[test]
fn public_traces_from_other_tools_replay_end_to_end() {
    let tmp = scratch("public");
    let cases: &[(&str, &[&str], u64)] = &[
        (
            "mqsim-tpcc-small.trace",
            &["--all-devices", "--fit", "wrap"],
            6999,
        ),
        (
            "mqsim-wsrch-small.trace",
            &["--all-devices", "--fit", "wrap"],
            24_783,
        ),
        (
            "ssdsim-example.ascii",
            &["--all-devices", "--fit", "wrap"],
            10_000,
        ),
        (
            "disksim-ascii.trace",
            &["--device-id", "0", "--fit", "wrap"],
            8062,
        ),
        (
            "disksim-ssd-postmark-aligned2.trace",
            &["--fit", "wrap", "--speed", "4"],
            62_257,
        ),
        ("wiscsee-blkparse-output.txt", &[], 673),
    ];
    for (name, opts, expected) in cases {
        let Some(p) = shared_trace("public traces replay", name) else {
            continue;
        };
        let mut args = vec!["replay", p.to_str().unwrap()];
        args.extend_from_slice(opts);
        let r = report(&args, &tmp);
        assert_eq!(
            r["requests"]["count"].as_u64().unwrap(),
            *expected,
            "{name}"
        );
    }
}

#[test]
fn the_pixel6a_telegram_trace_replays_under_every_scheduler_with_per_process_stats() {
    let test = "pixel6a telegram under every scheduler";
    let Some(exec) = shared_trace(test, "pixel6a-telegram_exec.csv.gz") else {
        return;
    };
    let Some(pre) = shared_trace(test, "pixel6a-telegram_precond.csv.gz") else {
        return;
    };
    let tmp = scratch("telegram");
    let json = tmp.join("c.json");
    simctl_ok(&[
        "compare",
        exec.to_str().unwrap(),
        "--schedulers",
        "all",
        "--fit",
        "compact",
        "--precondition",
        pre.to_str().unwrap(),
        "--set",
        "precondition.steady_state=false",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reports = c["reports"].as_array().unwrap();
    assert!(reports.len() >= 13);
    for r in reports {
        let rep = &r["report"];
        assert_eq!(rep["requests"]["count"], 251_879, "{}", r["label"]);
        assert_eq!(rep["trace"]["precondition"]["writes"], 5320);
        let threads = rep["threads"].as_array().unwrap();
        assert!(threads.len() > 50, "per-process statistics");
        // comm is truncated to 15 characters: org.telegram.messenger.
        assert!(
            threads.iter().any(|t| t["name"] == "egram.messenger"),
            "process names come from the trace"
        );
        let total: u64 = threads
            .iter()
            .map(|t| t["requests"].as_u64().unwrap())
            .sum();
        assert_eq!(total, 251_879);
    }
}

/// One device or all of them: asking for both is refused (on the command
/// line and in a scenario's `[trace]`), never settled silently.
#[test]
fn device_id_and_all_devices_together_are_refused() {
    let err = simctl_err(&[
        "replay",
        "traces/native-extended.csv",
        "--all-devices",
        "--device-id",
        "1",
    ]);
    assert!(
        err.contains("--all-devices") && err.contains("--device-id"),
        "{err}"
    );
    let dir = scratch("trace-device-id-and-all");
    let sc = dir.join("both.toml");
    std::fs::write(
        &sc,
        format!(
            "name = \"both\"\n[trace]\npath = \"{}\"\ndevice_id = 1\nall_devices = true\n",
            root().join("traces/native-extended.csv").display()
        ),
    )
    .unwrap();
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(
        err.contains("trace.device_id = 1 and trace.all_devices = true"),
        "{err}"
    );
}

fn json_of(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&simctl_ok(args)).unwrap()
}

/// A scenario names a trace's device as blkparse prints it (`"179,0"`), as
/// `--device-id 179,0` does; a malformed one is refused at its line.
#[test]
fn a_scenario_names_the_device_as_maj_min() {
    let dir = scratch("trace-device-id-maj-min");
    let scenario = |id: &str| {
        let sc = dir.join("dev.toml");
        std::fs::write(
            &sc,
            format!(
                "name = \"dev\"\n[trace]\npath = \"{}\"\ndevice_id = {id}\n",
                root().join("traces/blkparse.txt").display()
            ),
        )
        .unwrap();
        sc
    };
    let by_toml = json_of(&[
        "run",
        scenario("\"179,0\"").to_str().unwrap(),
        "-q",
        "--json",
        "-",
    ]);
    let by_flag = json_of(&[
        "replay",
        "traces/blkparse.txt",
        "--device-id",
        "179,0",
        "-q",
        "--json",
        "-",
    ]);
    assert_eq!(by_toml["requests"], by_flag["requests"]);
    assert!(by_toml["requests"]["count"].as_u64().unwrap() > 0);
    // the same device as a number (179 << 20)
    let by_number = json_of(&[
        "run",
        scenario("187695104").to_str().unwrap(),
        "-q",
        "--json",
        "-",
    ]);
    assert_eq!(by_number["requests"], by_flag["requests"]);
    let err = simctl_err(&["run", scenario("\"179;0\"").to_str().unwrap()]);
    assert!(err.contains("dev.toml") && err.contains("MAJ,MIN"), "{err}");
    let err = simctl_err(&["run", scenario("\"4096,0\"").to_str().unwrap()]);
    assert!(err.contains("major below 4096"), "{err}");
}

/// `trace.format` and `trace.time_unit` are typed scenario settings: an
/// alias is read, an unknown name is refused listing the valid ones.
#[test]
fn formats_and_time_units_are_typed_in_a_scenario() {
    use mmcsim::config::Scenario;
    use mmcsim::workload::trace::{Format, TimeUnit};
    use std::path::Path;
    let sets = |f: &str, u: &str| {
        vec![
            ("trace.format".to_string(), f.to_string()),
            ("trace.time_unit".to_string(), u.to_string()),
        ]
    };
    let sc = Scenario::for_trace(Path::new("t.txt"), &sets("fio", "100ns")).unwrap();
    let t = sc.trace.unwrap();
    assert_eq!(
        (t.format, t.time_unit),
        (
            Some("fio-iolog".parse::<Format>().unwrap()),
            Some(TimeUnit::Ticks100Ns)
        )
    );
    let e = Scenario::for_trace(Path::new("t.txt"), &sets("parquet", "s"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown trace format `parquet`") && e.contains("mmc-ftrace"),
        "{e}"
    );
    let e = Scenario::for_trace(Path::new("t.txt"), &sets("spc", "fortnight"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown time unit `fortnight`: expected one of ps, ns, 100ns, us, ms, s"),
        "{e}"
    );
}
