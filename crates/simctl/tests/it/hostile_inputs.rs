//! Hostile and unusual inputs through the real `simctl` binary (issue 11):
//! every case ends in a correct result or a located error with a non-zero
//! exit, never a silent empty or wrong answer, a hang or a panic.
#![cfg(unix)]

#[path = "hostile/configs.rs"]
mod configs;
#[path = "hostile/outputs.rs"]
mod outputs;
#[path = "hostile/scripts.rs"]
mod scripts;

use crate::common::{report, root, scratch, simctl, simctl_err, simctl_ok};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs simctl from the repository root with `input` fed to its stdin by
/// a separate thread (so `/dev/stdin` is a pipe, not a file).
fn simctl_stdin(args: &[&str], input: Vec<u8>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simctl"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simctl runs");
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // simctl may stop reading early (an error): a broken pipe is fine.
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("simctl runs");
    feeder.join().unwrap();
    out
}

/// Runs simctl with `args`, where `{fifo}` stands for a FIFO that a
/// thread fills with `input`.
fn simctl_fifo(dir: &Path, args: &[&str], input: Vec<u8>) -> Output {
    let fifo = dir.join("trace.fifo");
    let _ = std::fs::remove_file(&fifo);
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(ok.success(), "mkfifo");
    let f = fifo.clone();
    let writer = std::thread::spawn(move || {
        // Blocks until simctl opens the FIFO for reading.
        if let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(&f) {
            let _ = w.write_all(&input);
        }
    });
    let path = fifo.to_str().unwrap().to_string();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "{fifo}" { path.as_str() } else { a })
        .collect();
    let out = simctl(&args);
    // If simctl never opened the FIFO, open it here so the writer ends.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let _r = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(0o4000) // O_NONBLOCK
            .open(&fifo);
        writer.join().unwrap();
    }
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "simctl failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

fn mqsim() -> Vec<u8> {
    std::fs::read(root().join("traces/mqsim.trace")).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A scenario of one random-read job on a 16 MiB file with `extra` keys.
fn job_scenario(dir: &Path, name: &str, extra: &str) -> PathBuf {
    write(
        dir,
        name,
        &format!(
            "name = \"t\"\n[[files]]\nname = \"f\"\nsize_mib = 16\n[[jobs]]\nname = \"j\"\nfile = \"f\"\nop = \"read\"\npattern = \"random\"\nrequest_bytes = 4096\n{extra}\n"
        ),
    )
}

// ---- 1. Non-seekable input -------------------------------------------

#[test]
fn replay_from_a_pipe_reads_every_record() {
    let want = report(&["replay", "traces/mqsim.trace"], &scratch("hostile_pipe"));
    let want = &want["requests"]["count"];
    assert!(want.as_u64().unwrap() > 0);
    for format in [Some("mqsim"), None] {
        let mut args = vec!["replay", "/dev/stdin", "--json", "-", "--quiet"];
        if let Some(f) = format {
            args.extend(["--format", f]);
        }
        let r = json(&simctl_stdin(&args, mqsim()));
        assert_eq!(&r["requests"]["count"], want, "{format:?}");
        assert_eq!(r["trace"]["format"], "mqsim");
    }
}

#[test]
fn replay_inspect_and_convert_from_a_fifo() {
    let dir = scratch("hostile_fifo");
    let o = simctl_fifo(
        &dir,
        &["replay", "{fifo}", "--format", "mqsim", "--json", "-", "-q"],
        mqsim(),
    );
    assert_eq!(json(&o)["trace"]["records"], 3);
    let o = simctl_fifo(&dir, &["replay", "{fifo}", "--json", "-", "-q"], mqsim());
    assert_eq!(json(&o)["requests"]["count"], 3);
    let o = simctl_fifo(&dir, &["trace", "inspect", "{fifo}", "--json"], mqsim());
    let i = json(&o);
    assert_eq!(i["requests"], 3);
    assert_eq!(i["format"], "mqsim");
    let o = simctl_fifo(&dir, &["trace", "convert", "{fifo}"], mqsim());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 4, "header + 3 records");
    assert!(stderr(&o).contains("converted 3 records"));
    // Compact fit needs two passes: the spooled copy gives it both.
    let o = simctl_stdin(
        &[
            "replay",
            "/dev/stdin",
            "--fit",
            "compact",
            "--json",
            "-",
            "-q",
        ],
        mqsim(),
    );
    assert_eq!(json(&o)["requests"]["count"], 3);
}

// ---- 2. No silent empties --------------------------------------------

#[test]
fn absent_device_id_lists_the_ids_found() {
    let e = simctl_err(&["replay", "traces/mqsim.trace", "--device-id", "99"]);
    assert!(e.contains("traces/mqsim.trace"), "{e}");
    assert!(e.contains("no record is on device 99"), "{e}");
    assert!(e.contains("records on device 0"), "{e}");
}

#[test]
fn a_device_id_on_a_trace_without_device_ids_is_a_located_error() {
    // traces/sample.csv (native CSV) has no device column: choosing a
    // device must not silently replay every record.
    let e = simctl_err(&["replay", "traces/sample.csv", "--device-id", "99"]);
    assert!(e.contains("traces/sample.csv:"), "{e}");
    assert!(e.contains("field `device`"), "{e}");
    assert!(e.contains("no device field"), "{e}");
}

#[test]
fn header_only_trace_is_an_error_unless_allowed() {
    let dir = scratch("hostile_header_only");
    let t = write(&dir, "h.csv", "time_ns,op,sector,sectors\n");
    let o = simctl(&["replay", s(&t)]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("has no records"), "{e}");
    assert!(e.contains("--allow-empty"), "{e}");
    let r = json(&simctl(&[
        "replay",
        s(&t),
        "--allow-empty",
        "--json",
        "-",
        "-q",
    ]));
    assert_eq!(r["empty"], true);
    assert_eq!(r["requests"]["count"], 0);
    // A normal report has no `empty` key (reports stay as they were).
    let r = report(&["replay", "traces/sample.csv"], &dir);
    assert!(r.get("empty").is_none());
}

#[test]
fn zero_requests_job_is_an_error_unless_allowed() {
    let dir = scratch("hostile_zero_requests");
    let sc = job_scenario(&dir, "zero.toml", "requests = 0");
    let o = simctl(&["run", s(&sc)]);
    assert_eq!(o.status.code(), Some(2), "a scenario asking for nothing");
    let e = stderr(&o);
    assert!(e.contains("job `j`: requests = 0"), "{e}");
    assert!(e.contains("--allow-empty"), "{e}");
    let r = json(&simctl(&[
        "run",
        s(&sc),
        "--allow-empty",
        "--json",
        "-",
        "-q",
    ]));
    assert_eq!(r["empty"], true);
}

#[test]
fn check_against_an_empty_baseline_exits_2() {
    let dir = scratch("hostile_empty_baseline");
    let b = write(&dir, "b.json", "{\"schema\":\"mmcsim-compare/1\"}\n");
    let r = write(
        &dir,
        "r.json",
        "{\"schema\":\"mmcsim-compare/1\",\"reports\":[]}\n",
    );
    report(&["replay", "traces/sample.csv"], &dir);
    let now = dir.join("report.json");
    for (rep, base) in [(&now, &b), (&now, &r)] {
        let o = simctl(&["check", s(rep), "--baseline", s(base)]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(s(base)), "{e}");
        assert!(e.contains("reports"), "{e}");
        assert!(!stdout(&o).contains("passed"));
    }
}

// ---- 3. Time is checked -----------------------------------------------

#[test]
fn job_times_beyond_the_clock_are_located_errors() {
    let dir = scratch("hostile_job_times");
    for (extra, field) in [
        ("requests = 3\nthink_time_us = 1e17", "think_time_us = "),
        ("requests = 3\nstart_ms = 1e300", "start_ms = "),
        ("duration_ms = 1e200", "duration_ms = "),
    ] {
        let sc = job_scenario(&dir, "t.toml", extra);
        let e = simctl_err(&["run", s(&sc)]);
        assert!(e.contains("t.toml"), "{e}");
        assert!(e.contains(&format!("job `j`: {field}")), "{e}");
        assert!(
            e.contains("exceeds the simulated clock's limit of 2^62 ns"),
            "{e}"
        );
    }
    // Each think time fits, their sum does not: an error, not a wrap.
    let sc = job_scenario(&dir, "sum.toml", "requests = 3000\nthink_time_us = 4e12");
    let e = simctl_err(&["run", s(&sc)]);
    assert!(e.contains("time overflows the simulated clock"), "{e}");
}

#[test]
fn trace_times_beyond_the_clock_are_located_errors() {
    let dir = scratch("hostile_trace_times");
    let t = write(
        &dir,
        "big.csv",
        "time_ns,op,sector,sectors,pid\n0,R,0,8,1\n18446744073709551000,R,8,8,1\n",
    );
    for mode in ["timed", "closed"] {
        let e = simctl_err(&["replay", s(&t), "--mode", mode]);
        assert!(e.contains("big.csv:3: field `time`"), "{e}");
        assert!(
            e.contains("time overflows the simulated clock at line 3"),
            "{e}"
        );
    }
    let e = simctl_err(&["replay", "traces/sample.csv", "--speed", "1e-10"]);
    assert!(e.contains("trace.speed = 0.0000000001"), "{e}");
    assert!(
        e.contains("expected a time scale from 0.000001 to 1000000"),
        "{e}"
    );
    // In range, but the scaled times pass the limit: located.
    let t = write(
        &dir,
        "long.csv",
        "time_s,op,sector,sectors\n0,R,0,8\n10000000,R,8,8\n",
    );
    let e = simctl_err(&["replay", s(&t), "--speed", "0.000001"]);
    assert!(e.contains("long.csv:3"), "{e}");
    assert!(e.contains("at speed 0.000001"), "{e}");
}

// ---- 4. Up-front limits ------------------------------------------------

#[test]
fn a_billion_threads_are_refused_before_allocation() {
    let dir = scratch("hostile_threads");
    let sc = job_scenario(&dir, "thr.toml", "requests = 1\nthreads = 1000000000");
    let e = simctl_err(&["run", s(&sc)]);
    assert!(e.contains("1000000000 threads"), "{e}");
    assert!(e.contains("at most 4096"), "{e}");
}

#[test]
fn an_endless_configuration_file_is_refused_at_its_size_limit() {
    // A profile, phone or scenario path naming a device that never ends
    // must be refused after 16 MiB, not read until memory runs out.
    for args in [
        vec!["run", "/dev/zero"],
        vec![
            "replay",
            "traces/sample.csv",
            "--set",
            "device.profile=/dev/zero",
        ],
        vec![
            "replay",
            "traces/sample.csv",
            "--set",
            "host.profile=/dev/zero",
        ],
        vec!["replay", "traces/sample.csv", "--phone", "/dev/zero"],
    ] {
        let e = simctl_err(&args);
        assert!(
            e.contains("/dev/zero") && e.contains("16 MiB"),
            "{args:?}: {e}"
        );
        assert!(
            e.contains("limit for a configuration file"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn too_many_traced_processes_is_a_located_error() {
    let dir = scratch("hostile_pids");
    let mut t = String::from("time_ns,op,sector,sectors,pid\n");
    for pid in 0..4097 {
        t.push_str(&format!("{pid},R,{},8,{pid}\n", pid * 8));
    }
    let t = write(&dir, "pids.csv", &t);
    let e = simctl_err(&["replay", s(&t)]);
    assert!(e.contains("pids.csv:4098: field `pid`"), "{e}");
    assert!(e.contains("at most 4096"), "{e}");
}

#[test]
fn lines_over_one_mib_are_errors_naming_the_line() {
    let dir = scratch("hostile_long_line");
    let long = "9".repeat(2 << 20);
    let t = write(&dir, "long.trace", &format!("1250000 0 8 8 1\n{long}\n"));
    let e = simctl_err(&["trace", "inspect", s(&t), "--format", "mqsim"]);
    assert!(e.contains("long.trace:2: field `line`"), "{e}");
    assert!(e.contains("longer than 1048576 bytes"), "{e}");
    let t = write(
        &dir,
        "long.csv",
        &format!("time_ns,op,sector,sectors\n0,R,0,8\n{long}\n"),
    );
    let e = simctl_err(&["replay", s(&t)]);
    assert!(e.contains("long.csv:3: field `line`"), "{e}");
}

#[test]
fn compact_fit_costs_the_runs_not_the_span() {
    // 60 requests of 2^32 - 1 sectors each far apart: millions of regions
    // (used to need > 2 GB); now a few runs, refused for the device size.
    let dir = scratch("hostile_compact");
    let mut t = String::from("time_ns,op,sector,sectors\n");
    for i in 0..60u64 {
        t.push_str(&format!("{i},W,{},4294967295\n", i << 40));
    }
    let t = write(&dir, "huge.csv", &t);
    let e = simctl_err(&["replay", s(&t), "--fit", "compact"]);
    assert!(e.contains("even when compacted"), "{e}");
}

// ---- 5. The other cases -----------------------------------------------

#[test]
fn seeds_up_to_u64_max_are_echoed() {
    for args in [
        vec!["--seed", "18446744073709551615"],
        vec!["--set", "seed=9223372036854775808"],
    ] {
        let mut a = vec!["replay", "traces/sample.csv", "--json", "-", "-q"];
        a.extend(args.iter().copied());
        let r = json(&simctl(&a));
        let want: u64 = args[1].trim_start_matches("seed=").parse().unwrap();
        assert_eq!(r["run"]["seed"].as_u64(), Some(want));
    }
    let e = simctl_err(&["replay", "traces/sample.csv", "--set", "seed=-1"]);
    assert!(e.contains("seed"), "{e}");
}

#[test]
fn random_jobs_with_a_duration_run_for_the_duration() {
    let dir = scratch("hostile_duration");
    // 16 MiB / 4 KiB = 4096 slots; the job must not stop after them.
    let sc = job_scenario(&dir, "dur.toml", "duration_ms = 1000.0");
    let r = report(&["run", s(&sc)], &dir);
    let t = r["simulated_time_s"].as_f64().unwrap();
    assert!((1.0..1.01).contains(&t), "ran {t} s");
    assert!(r["requests"]["count"].as_u64().unwrap() > 4096);
}

#[test]
fn a_malformed_line_in_the_sniffed_window_is_an_error_of_the_detected_format() {
    let dir = scratch("hostile_sniff");
    let t = write(
        &dir,
        "m.trace",
        "1250000 0 2097160 8 1\n1263500 0 4456448 32 7\n1263500 0 8 8 1\n",
    );
    let e = simctl_err(&["replay", s(&t)]);
    assert!(e.contains("m.trace:2: field `type`"), "{e}");
    assert!(e.contains("0 (write) or 1 (read)"), "{e}");
    let ok = write(&dir, "ok.trace", "1250000 0 2097160 8 1\n1263500 0 8 8 1\n");
    let i = simctl_ok(&["trace", "inspect", s(&ok)]);
    assert!(i.contains("(mqsim, times in ns)"), "{i}");
    assert!(i.contains("format detected: the first record has 5"), "{i}");
    let i = simctl_ok(&["trace", "inspect", s(&ok), "--format", "ssdsim"]);
    assert!(i.contains("format forced with --format ssdsim"), "{i}");
}

#[test]
fn a_failed_run_leaves_no_partial_outputs() {
    let dir = scratch("hostile_partial");
    let mut t = String::from("time_ns,op,sector,sectors\n");
    for i in 0..200 {
        t.push_str(&format!("{},W,{},8\n", i * 1000, i * 8));
    }
    t.push_str("18446744073709551000,R,0,8\n");
    let t = write(&dir, "late.csv", &t);
    let log = dir.join("out.log");
    let js = dir.join("out.json");
    let e = simctl_err(&["replay", s(&t), "--log", s(&log), "--json", s(&js)]);
    assert!(e.contains("late.csv:202"), "{e}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(left, vec!["late.csv".to_string()], "left behind: {left:?}");
    // A good run writes both (and no temporary file stays).
    simctl_ok(&[
        "replay",
        "traces/sample.csv",
        "--log",
        s(&log),
        "--json",
        s(&js),
        "-q",
    ]);
    assert!(std::fs::read_to_string(&log).unwrap().lines().count() > 1);
    assert!(std::fs::read_to_string(&js)
        .unwrap()
        .contains("mmcsim-report/2"));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
}

#[test]
fn outputs_naming_an_input_are_refused_before_writing() {
    let dir = scratch("hostile_overwrite");
    let t = dir.join("t.csv");
    std::fs::copy(root().join("traces/sample.csv"), &t).unwrap();
    let before = std::fs::read(&t).unwrap();
    let e = simctl_err(&["replay", s(&t), "--log", s(&t)]);
    assert!(e.contains("--log"), "{e}");
    assert!(e.contains("is the trace the run reads"), "{e}");
    let e = simctl_err(&["replay", s(&t), "--json", s(&t)]);
    assert!(e.contains("--json"), "{e}");
    assert_eq!(std::fs::read(&t).unwrap(), before, "the trace is intact");
    let sc = job_scenario(&dir, "sc.toml", "requests = 10");
    let sc_before = std::fs::read(&sc).unwrap();
    let e = simctl_err(&["run", s(&sc), "--json", s(&sc)]);
    assert!(e.contains("is the scenario the run reads"), "{e}");
    assert_eq!(std::fs::read(&sc).unwrap(), sc_before);
    let e = simctl_err(&["trace", "convert", s(&t), "--output", s(&t)]);
    assert!(e.contains("is the trace being converted"), "{e}");
    assert_eq!(std::fs::read(&t).unwrap(), before);
}

#[test]
fn cmdq_depth_on_a_legacy_driver_is_an_error() {
    let e = simctl_err(&[
        "replay",
        "traces/sample.csv",
        "--set",
        "driver.cmdq_depth=8",
    ]);
    assert!(e.contains("driver.cmdq_depth = 8"), "{e}");
    assert!(e.contains("legacy driver"), "{e}");
}

#[test]
fn one_process_burst_completes() {
    let dir = scratch("hostile_burst");
    let n = 50_000;
    let mut t = String::with_capacity(n * 24);
    t.push_str("time_ns,op,sector,sectors,pid\n");
    for i in 0..n {
        t.push_str(&format!("0,R,{},8,1\n", (i * 8) % 4_000_000));
    }
    let t = write(&dir, "burst.csv", &t);
    let r = report(&["replay", s(&t)], &dir);
    assert_eq!(r["requests"]["count"].as_u64(), Some(n as u64));
}

#[test]
fn shuffled_orders_are_bounded_before_allocation() {
    let dir = scratch("hostile_shuffled");
    let sc = write(
        &dir,
        "sh.toml",
        "name = \"t\"\n[[files]]\nname = \"f\"\nsize_mib = 16\n[[jobs]]\nname = \"j\"\nfile = \"f\"\nop = \"read\"\npattern = \"sequential\"\norder = \"shuffled\"\nrequest_bytes = 1\nthreads = 4\n",
    );
    let e = simctl_err(&["run", s(&sc)]);
    assert!(e.contains("sh.toml: job `j`: order = \"shuffled\""), "{e}");
    assert!(e.contains("at most 33554432"), "{e}");
}
