//! End-to-end tests of the `simctl` binary: the README's commands, the
//! report schema, the request log, determinism and bad input.

use crate::common::*;

#[test]
fn replay_of_the_bundled_sample_reports_every_documented_metric() {
    let tmp = scratch("replay_sample");
    let r = report(&["replay", "traces/sample.csv"], &tmp);
    assert_eq!(r["schema"], "mmcsim-report/2");
    let n = r["requests"]["count"].as_u64().unwrap();
    assert!(n > 100, "sample has hundreds of requests, got {n}");
    for path in [
        "/throughput/iops",
        "/throughput/mb_per_s",
        "/latency_us/mean",
        "/latency_us/p50",
        "/latency_us/p90",
        "/latency_us/p99",
        "/latency_us/p999",
        "/latency_us/max",
        "/read/latency_us/p99",
        "/write/latency_us/p99",
        "/fairness/jain",
        "/breakdown_us/platform",
        "/breakdown_us/syscall_fs",
        "/breakdown_us/block_queue",
        "/breakdown_us/driver",
        "/breakdown_us/device",
        "/breakdown_us/irq_wakeup",
        "/breakdown_us/not_device_share",
        "/breakdown_us/queue_wait",
        "/breakdown_us/shares/host_path",
        "/device_response_us/mean",
        "/host/cpu/mean_freq_mhz",
        "/host/cpu/ipis",
        "/device/waf",
        "/device/gc_runs",
        "/device/gc_pages_moved",
        "/device/read_buffer_hit_rate",
        "/device/map_cache_hit_rate",
        "/device/erase_count/min",
        "/device/erase_count/mean",
        "/device/erase_count/max",
    ] {
        assert!(
            r.pointer(path).is_some_and(|v| v.is_number()),
            "missing {path}"
        );
    }
    let threads = r["threads"].as_array().unwrap();
    assert!(threads.len() > 1, "the sample has several processes");
    let per_thread: u64 = threads
        .iter()
        .map(|t| t["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(per_thread, n, "every request belongs to one process");
    for t in threads {
        assert!(t["latency_us"]["p99"].is_number() && t["iops"].is_number() && t["id"].is_number());
    }
    let lat = &r["latency_us"];
    assert!(
        lat["p50"].as_f64() <= lat["p99"].as_f64() && lat["p99"].as_f64() <= lat["max"].as_f64()
    );
    assert!(r["throughput"]["iops"].as_f64().unwrap() > 0.0);
}

#[test]
fn same_seed_gives_byte_identical_reports_and_another_seed_differs() {
    let tmp = scratch("determinism");
    let run = |seed: &str, name: &str| {
        let p = tmp.join(name);
        simctl_ok(&[
            "run",
            "configs/scenarios/rand-read-4k.toml",
            "--seed",
            seed,
            "--quiet",
            "--json",
            p.to_str().unwrap(),
        ]);
        std::fs::read(&p).unwrap()
    };
    let a = run("7", "a.json");
    let b = run("7", "b.json");
    assert!(a == b, "same seed must give identical JSON");
    let c = run("8", "c.json");
    assert!(a != c, "a different seed draws different random offsets");
    let t = tmp.join("t1.json");
    let u = tmp.join("t2.json");
    for p in [&t, &u] {
        simctl_ok(&[
            "replay",
            "traces/sample.csv",
            "--quiet",
            "--json",
            p.to_str().unwrap(),
        ]);
    }
    assert!(std::fs::read(&t).unwrap() == std::fs::read(&u).unwrap());
}

/// One row of the request log (`--log`).
#[derive(Debug, serde::Deserialize)]
struct LogRow {
    submit_ns: u64,
    dispatch_ns: u64,
    device_start_ns: u64,
    complete_ns: u64,
    op: String,
}

#[test]
fn request_log_has_one_row_per_device_request_with_ordered_times() {
    let tmp = scratch("log");
    let log = tmp.join("log.csv");
    let r = report(
        &[
            "replay",
            "traces/sample.csv",
            "--log",
            log.to_str().unwrap(),
        ],
        &tmp,
    );
    let mut csv = csv::Reader::from_path(&log).unwrap();
    assert_eq!(
        csv.headers().unwrap(),
        vec![
            "submit_ns",
            "dispatch_ns",
            "device_start_ns",
            "complete_ns",
            "sector",
            "sectors",
            "op",
            "thread"
        ]
    );
    let mut rows = 0u64;
    for row in csv.deserialize() {
        let l: LogRow = row.unwrap();
        assert!(
            l.submit_ns <= l.dispatch_ns
                && l.dispatch_ns <= l.device_start_ns
                && l.device_start_ns < l.complete_ns,
            "times ordered: {l:?}"
        );
        assert!(["R", "W", "D", "F"].contains(&l.op.as_str()));
        rows += 1;
    }
    let reqs = r["block"]["requests_allocated"].as_u64().unwrap()
        - r["block"]["request_merges"].as_u64().unwrap();
    assert_eq!(rows, reqs, "one row per request that reached the device");
}

#[test]
fn schedulers_lists_noop_and_deadline_with_tunables_units_and_defaults() {
    let out = simctl_ok(&["schedulers"]);
    assert!(out.contains("noop"));
    assert!(out.contains("deadline"));
    for t in [
        "read_expire",
        "write_expire",
        "writes_starved",
        "front_merges",
        "fifo_batch",
    ] {
        assert!(out.contains(t), "missing tunable {t}:\n{out}");
    }
    let js: serde_json::Value =
        serde_json::from_str(&simctl_ok(&["schedulers", "--json", "--hz", "100"])).unwrap();
    let dl = js
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "deadline")
        .unwrap();
    let re = dl["tunables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_expire")
        .unwrap();
    assert_eq!(re["default"], "500");
    assert_eq!(re["unit"], "ms");
}

#[test]
fn tunables_and_queue_attributes_are_set_by_sysfs_name() {
    let tmp = scratch("tunables");
    let r = report(
        &[
            "replay",
            "traces/sample.csv",
            "--set",
            "iosched.fifo_batch=4",
            "--set",
            "queue.max_sectors_kb=64",
        ],
        &tmp,
    );
    let fb = r["scheduler"]["tunables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "fifo_batch")
        .unwrap();
    assert_eq!(fb["value"], "4");
    assert_eq!(r["queue"]["max_sectors_kb"], 64);
}

#[test]
fn bad_input_gets_a_clear_error_and_a_nonzero_exit() {
    let tmp = scratch("bad_input");
    let write = |name: &str, text: &str| {
        let p = tmp.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // Missing file.
    let e = simctl_err(&["replay", "no/such/trace.csv"]);
    assert!(e.contains("no/such/trace.csv"), "{e}");
    // Malformed line: file, line and field named.
    let p = write(
        "bad_num.csv",
        "time_us,op,sector,sectors\n0,R,8,8\n10,R,abc,8\n",
    );
    let e = simctl_err(&["replay", &p]);
    assert!(e.contains("bad_num.csv:3") && e.contains("sector"), "{e}");
    // Unknown column: the valid ones listed.
    let p = write(
        "bad_col.csv",
        "time_us,op,sector,sectors,colour\n0,R,8,8,red\n",
    );
    let e = simctl_err(&["replay", &p]);
    assert!(e.contains("colour") && e.contains("pid"), "{e}");
    // Decreasing timestamp.
    let p = write(
        "bad_time.csv",
        "time_us,op,sector,sectors\n10,R,8,8\n5,R,16,8\n",
    );
    let e = simctl_err(&["replay", &p]);
    assert!(e.contains("bad_time.csv:3"), "{e}");
    // Sector beyond the device's capacity.
    let p = write(
        "bad_cap.csv",
        "time_us,op,sector,sectors\n0,R,99999999999,8\n",
    );
    let e = simctl_err(&["replay", &p]);
    assert!(e.contains("bad_cap.csv:2") && e.contains("capacity"), "{e}");
    // Unknown scheduler: the valid ones listed.
    let e = simctl_err(&["replay", "traces/sample.csv", "--scheduler", "elevatorx"]);
    assert!(
        e.contains("elevatorx") && e.contains("deadline") && e.contains("noop"),
        "{e}"
    );
    // Unknown tunable: the valid ones listed.
    let e = simctl_err(&["replay", "traces/sample.csv", "--set", "iosched.quantum=4"]);
    assert!(e.contains("quantum") && e.contains("fifo_batch"), "{e}");
    // Out-of-range tunable.
    let e = simctl_err(&[
        "replay",
        "traces/sample.csv",
        "--set",
        "iosched.fifo_batch=abc",
    ]);
    assert!(e.contains("fifo_batch"), "{e}");
    // Unknown device key.
    let e = simctl_err(&[
        "replay",
        "traces/sample.csv",
        "--set",
        "device.nand.warp_speed=9",
    ]);
    assert!(e.contains("warp_speed"), "{e}");
    // Unknown scenario key.
    let p = write("bad.toml", "name='x'\nbogus_key=1\n");
    let e = simctl_err(&["run", &p]);
    assert!(e.contains("bogus_key"), "{e}");
}

#[test]
fn closed_choices_are_checked_by_the_parser_which_lists_the_values() {
    for (flag, bad, values) in [
        ("--mode", "bogus", &["timed", "closed"][..]),
        ("--fit", "squeeze", &["error", "wrap", "compact"][..]),
        ("--time-unit", "fortnight", &["ns", "us", "ms", "s"][..]),
        (
            "--format",
            "parquet",
            &["native", "blkparse", "pixel6a"][..],
        ),
    ] {
        let out = simctl(&["replay", "traces/sample.csv", flag, bad]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {bad}: {e}");
        assert!(e.contains(&format!("invalid value '{bad}'")), "{e}");
        for v in values {
            assert!(e.contains(v), "{flag}: {v} not listed in {e}");
        }
    }
    // --help lists them too.
    let help = simctl_ok(&["replay", "--help"]);
    for v in ["timed", "closed", "compact", "mmc-ftrace", "100ns"] {
        assert!(help.contains(v), "{v} not in --help");
    }
    // Names are case-insensitive and aliases are accepted.
    let tmp = scratch("choice_alias");
    let r = report(
        &[
            "replay",
            "traces/sample.csv",
            "--format",
            "CSV",
            "--mode",
            "closed",
        ],
        &tmp,
    );
    assert_eq!(r["trace"]["format"], "native-csv");
    assert_eq!(r["trace"]["mode"], "closed");
}

#[test]
fn completions_print_a_script_for_each_shell() {
    let bash = simctl_ok(&["completions", "bash"]);
    assert!(
        bash.contains("_simctl()") && bash.contains("complete "),
        "{bash}"
    );
    // Subcommands and closed choices are completed.
    assert!(bash.contains("replay") && bash.contains("timed closed"));
    let zsh = simctl_ok(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef simctl"), "{zsh}");
    let fish = simctl_ok(&["completions", "fish"]);
    assert!(fish.contains("complete -c simctl"), "{fish}");
    let e = simctl_err(&["completions", "tcsh"]);
    assert!(
        e.contains("bash") && e.contains("zsh") && e.contains("fish"),
        "{e}"
    );
}

#[test]
fn man_prints_a_roff_page_or_writes_one_per_command() {
    let page = simctl_ok(&["man"]);
    assert!(page.contains(".TH simctl 1"), "{page}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS"] {
        assert!(page.contains(section), "{section} missing");
    }
    assert!(page.contains("simctl\\-replay(1)"), "{page}");
    let dir = scratch("man");
    simctl_ok(&["man", "--dir", dir.to_str().unwrap()]);
    for name in ["simctl.1", "simctl-replay.1", "simctl-trace-convert.1"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.contains(".TH "), "{name}");
    }
    let convert = std::fs::read_to_string(dir.join("simctl-trace-convert.1")).unwrap();
    assert!(convert.contains("\\-\\-to"), "{convert}");
}

#[test]
fn a_closed_stdout_pipe_ends_quietly_with_exit_0() {
    use std::process::{Command, Stdio};
    for args in [
        &["trace", "convert", "traces/sample.csv"][..],
        &["replay", "traces/sample.csv", "--json", "-"][..],
        &["completions", "bash"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_simctl"))
            .args(args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end at once, as `| head -0` would: the output
        // (tens of KiB) cannot fit the pipe before the first write fails.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} printed: {err}");
    }
    // Reading a first line and then closing, as `| head -1` does.
    let mut child = Command::new(env!("CARGO_BIN_EXE_simctl"))
        .args(["trace", "convert", "traces/sample.csv"])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
        r.read_line(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("error"));
    assert!(first.starts_with("time_ns,op,sector,sectors"), "{first}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_a_clear_error_not_a_panic() {
    use std::process::{Command, Stdio};
    for args in [
        &["trace", "convert", "traces/sample.csv"][..],
        &["schedulers"][..],
        &["trace", "formats"][..],
        &["man"][..],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_simctl"))
            .args(args)
            .current_dir(root())
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: writing to standard output: ")
                && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Runs simctl from `dir` with `input` on standard input.
fn simctl_piped(dir: &std::path::Path, args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_simctl"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn replay_and_run_read_standard_input_from_any_directory() {
    let anywhere = std::env::temp_dir();
    let trace = std::fs::read(root().join("traces/sample.csv")).unwrap();
    let out = simctl_piped(&anywhere, &["replay", "-", "-q", "--json", "-"], &trace);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let piped: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Named `-`, never by a temporary file; the same run as from the file.
    assert_eq!(piped["run"]["trace"], "-");
    assert_eq!(piped["trace"]["path"], "-");
    let tmp = scratch("cli_stdin");
    let file = report(&["replay", "traces/sample.csv"], &tmp);
    assert_eq!(piped["run"]["identity"], file["run"]["identity"]);
    assert_eq!(piped["throughput"], file["throughput"]);
    // An fio job file on standard input.
    let job = std::fs::read(root().join("configs/fio/randread-4k.fio")).unwrap();
    let out = simctl_piped(&anywhere, &["run", "-", "-q", "--json", "-"], &job);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A bad scenario on standard input is unusable input named `-`.
    let out = simctl_piped(&anywhere, &["run", "-"], b"x = \n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-: TOML parse error"));
}
