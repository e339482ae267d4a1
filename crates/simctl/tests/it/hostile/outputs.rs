//! Outputs that are not plain files, and inputs that must be refused
//! (issue 24): a device, FIFO or symbolic link named as an output is
//! written as what it is; an unwritable output is an error before the run;
//! endless or foreign inputs are located errors with exit code 2.

use super::{s, stderr, write};
use crate::common::{root, scratch, simctl, simctl_err, simctl_ok};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// True when the tests run as root (needed for `mknod`; root also ignores
/// folder permissions).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A character device like `/dev/null` (1, 3) or `/dev/full` (1, 7) at
/// `dir/name`, or `None` when it cannot be made (not root).
fn char_device(dir: &Path, name: &str, minor: &str) -> Option<PathBuf> {
    let p = dir.join(name);
    let ok = Command::new("mknod")
        .arg(&p)
        .args(["c", "1", minor])
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(p)
}

fn is_char_device(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

/// A FIFO at `dir/name` and a thread reading it to the end.
fn fifo_reader(dir: &Path, name: &str) -> (PathBuf, std::thread::JoinHandle<Vec<u8>>) {
    let p = dir.join(name);
    let ok = Command::new("mkfifo").arg(&p).status().unwrap();
    assert!(ok.success(), "mkfifo");
    let f = p.clone();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        // Blocks until simctl opens the FIFO for writing.
        std::fs::File::open(&f)
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        got
    });
    (p, reader)
}

/// Ends a reader simctl never wrote to: opening the FIFO for writing
/// (non-blocking) releases a reader still waiting in its open.
fn release(fifo: &Path) {
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(0o4000) // O_NONBLOCK
        .open(fifo);
}

/// A trace whose 202nd line fails the run after 200 good records.
fn late_trace(dir: &Path) -> PathBuf {
    let mut t = String::from("time_ns,op,sector,sectors\n");
    for i in 0..200 {
        t.push_str(&format!("{},W,{},8\n", i * 1000, i * 8));
    }
    t.push_str("18446744073709551000,R,0,8\n");
    write(dir, "late.csv", &t)
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn a_character_device_output_stays_a_device() {
    let dir = scratch("outputs_chardev");
    let nodes: Option<Vec<PathBuf>> = ["json", "csv", "log", "state"]
        .iter()
        .map(|n| char_device(&dir, n, "3"))
        .collect();
    let Some(nodes) = nodes else {
        eprintln!("SKIPPED a_character_device_output_stays_a_device: mknod needs root");
        return;
    };
    let [json, csv, log, state] = [0, 1, 2, 3].map(|i| s(&nodes[i]).to_string());
    simctl_ok(&[
        "replay",
        "traces/sample.csv",
        "-q",
        "--json",
        &json,
        "--csv",
        &csv,
        "--log",
        &log,
        "--save-state",
        &state,
    ]);
    simctl_ok(&["trace", "convert", "traces/sample.csv", "-o", &json]);
    for n in &nodes {
        assert!(is_char_device(n), "{} was replaced", n.display());
    }
    // Written in place: a device that refuses the bytes is an error.
    let full = char_device(&dir, "full", "7").unwrap();
    let e = simctl_err(&["replay", "traces/sample.csv", "-q", "--json", s(&full)]);
    assert!(e.contains("--json") && e.contains("No space left"), "{e}");
    assert!(is_char_device(&full));
}

#[test]
fn a_fifo_output_gets_the_whole_report_and_log() {
    let dir = scratch("outputs_fifo");
    let (json, json_reader) = fifo_reader(&dir, "json.fifo");
    let (log, log_reader) = fifo_reader(&dir, "log.fifo");
    let o = simctl(&[
        "replay",
        "traces/sample.csv",
        "-q",
        "--json",
        s(&json),
        "--log",
        s(&log),
    ]);
    release(&json);
    release(&log);
    assert!(o.status.success(), "{}", stderr(&o));
    let (got_json, got_log) = (json_reader.join().unwrap(), log_reader.join().unwrap());
    for f in [&json, &log] {
        assert!(std::fs::symlink_metadata(f).unwrap().file_type().is_fifo());
    }
    // The readers got exactly what regular files get.
    let (rj, rl) = (dir.join("r.json"), dir.join("r.log"));
    let args = [
        "replay",
        "traces/sample.csv",
        "-q",
        "--json",
        s(&rj),
        "--log",
        s(&rl),
    ];
    simctl_ok(&args);
    assert_eq!(got_json, std::fs::read(&rj).unwrap(), "the whole report");
    assert_eq!(got_log, std::fs::read(&rl).unwrap(), "the whole log");
    let report: serde_json::Value = serde_json::from_slice(&got_json).unwrap();
    assert_eq!(report["schema"], "mmcsim-report/2");
    // `/dev/stdout` (a link to a pipe here) is written in place.
    let o = simctl(&["replay", "traces/sample.csv", "-q", "--json", "/dev/stdout"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, got_json, "the report on standard output");
    // A converted trace streams into a FIFO too.
    let (conv, conv_reader) = fifo_reader(&dir, "conv.fifo");
    simctl_ok(&["trace", "convert", "traces/sample.csv", "-o", s(&conv)]);
    release(&conv);
    let rc = dir.join("r.csv");
    simctl_ok(&["trace", "convert", "traces/sample.csv", "-o", s(&rc)]);
    assert_eq!(conv_reader.join().unwrap(), std::fs::read(&rc).unwrap());
}

#[test]
fn a_symlinked_output_writes_its_target_and_stays_a_link() {
    let dir = scratch("outputs_symlink");
    let target = write(&dir, "target.json", "old\n");
    let link = dir.join("link.json");
    std::os::unix::fs::symlink("target.json", &link).unwrap();
    let dangling = dir.join("dangling.csv");
    std::os::unix::fs::symlink("sub/made.csv", &dangling).unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    simctl_ok(&[
        "replay",
        "traces/sample.csv",
        "-q",
        "--json",
        s(&link),
        "--csv",
        s(&dangling),
    ]);
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("mmcsim-report/2"), "the target was written");
    let csv = std::fs::read_to_string(dir.join("sub/made.csv")).unwrap();
    assert!(csv.starts_with("run,scenario,scheduler"), "{csv}");
    for l in [&link, &dangling] {
        let m = std::fs::symlink_metadata(l).unwrap();
        assert!(m.file_type().is_symlink(), "{} stays a link", l.display());
    }
    // An output whose link leads to an input is still refused.
    let t = dir.join("t.csv");
    std::fs::copy(root().join("traces/sample.csv"), &t).unwrap();
    std::os::unix::fs::symlink("t.csv", dir.join("t-link.csv")).unwrap();
    let e = simctl_err(&["replay", s(&t), "--json", s(&dir.join("t-link.csv"))]);
    assert!(e.contains("is the trace the run reads"), "{e}");
    // Two options whose links lead to one file are refused.
    let e = simctl_err(&[
        "replay",
        "traces/sample.csv",
        "--json",
        s(&link),
        "--log",
        s(&target),
    ]);
    assert!(e.contains("--json and --log"), "{e}");
}

/// Runs simctl as user `nobody` when root can (`setpriv`), else `None`.
fn as_nobody(args: &[&str]) -> Option<Output> {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_simctl"))
        .args(args)
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| !String::from_utf8_lossy(&o.stderr).contains("setpriv:"))
}

#[test]
fn an_unwritable_output_is_refused_before_the_run() {
    let dir = scratch("outputs_unwritable");
    // The late trace fails the run at line 202: an output error instead
    // shows that outputs were opened first.
    let t = late_trace(&dir);
    for (out, msg) in [
        (dir.join("missing/x.json"), "does not exist"),
        (dir.clone(), "is a directory"),
    ] {
        let o = simctl(&["replay", s(&t), "--json", s(&out)]);
        let e = stderr(&o);
        assert_eq!(code(&o), Some(2), "{e}");
        assert!(e.contains("--json") && e.contains(msg), "{e}");
        assert!(!e.contains("late.csv:202"), "the run did not start: {e}");
    }
    // An output folder that cannot be made: before any cell runs.
    let grid = write(
        &dir,
        "grid.toml",
        &format!("schedulers = [\"noop\"]\nworkloads = [\"{}\"]\n", s(&t)),
    );
    let o = simctl(&["sweep", s(&grid), "--out", s(&t.join("out"))]);
    let e = stderr(&o);
    assert_eq!(code(&o), Some(2), "{e}");
    assert!(
        e.contains("--out") && e.contains("cannot create the folder"),
        "{e}"
    );
    let ro = dir.join("read-only");
    std::fs::create_dir(&ro).unwrap();
    let perms = std::os::unix::fs::PermissionsExt::from_mode(0o555);
    std::fs::set_permissions(&ro, perms).unwrap();
    let out = ro.join("x.json");
    let args = ["replay", s(&t), "-q", "--json", s(&out)];
    let o = if is_root() {
        as_nobody(&args)
    } else {
        Some(simctl(&args))
    };
    match o {
        Some(o) => {
            let e = stderr(&o);
            assert_eq!(code(&o), Some(2), "{e}");
            assert!(
                e.contains("--json") && e.contains("ermission denied"),
                "{e}"
            );
            assert!(!e.contains("late.csv:202"), "the run did not start: {e}");
        }
        None => eprintln!("SKIPPED the unprivileged case: running as root without setpriv"),
    }
    if is_root() {
        // Root may write into the folder: the run starts, and fails.
        let e = simctl_err(&args);
        assert!(e.contains("late.csv:202"), "{e}");
    }
    assert!(!out.exists());
}

#[test]
fn a_failed_run_leaves_existing_outputs_unchanged() {
    let dir = scratch("outputs_failed");
    let t = late_trace(&dir);
    let json = write(&dir, "out.json", "previous report\n");
    let log = write(&dir, "out.log", "previous log\n");
    let state = write(&dir, "out.state", "previous state\n");
    let e = simctl_err(&[
        "replay",
        s(&t),
        "--json",
        s(&json),
        "--log",
        s(&log),
        "--save-state",
        s(&state),
    ]);
    assert!(e.contains("late.csv:202"), "{e}");
    assert_eq!(std::fs::read_to_string(&json).unwrap(), "previous report\n");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "previous log\n");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "previous state\n");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4, "no temporary");
}

#[test]
fn endless_state_report_and_plot_inputs_are_refused_at_their_limits() {
    let o = simctl(&["replay", "traces/sample.csv", "--load-state", "/dev/zero"]);
    let e = stderr(&o);
    assert_eq!(code(&o), Some(2), "{e}");
    assert!(
        e.contains("/dev/zero") && e.contains("not a saved device state"),
        "{e}"
    );
    // A header announcing more than the device's state can be.
    let dir = scratch("outputs_endless");
    let mut header = b"MMCSIMST".to_vec();
    header.extend_from_slice(&3u32.to_le_bytes());
    header.extend_from_slice(&[0; 32]);
    header.extend_from_slice(&(1u64 << 40).to_le_bytes());
    header.extend_from_slice(&[0; 8]);
    let state = dir.join("huge.state");
    std::fs::write(&state, &header).unwrap();
    let o = simctl(&["replay", "traces/sample.csv", "--load-state", s(&state)]);
    let e = stderr(&o);
    assert_eq!(code(&o), Some(2), "{e}");
    assert!(e.contains("announces a 1099511627776-byte payload"), "{e}");
    let report = dir.join("r.json");
    simctl_ok(&["replay", "traces/sample.csv", "-q", "--json", s(&report)]);
    for args in [
        ["check", s(&report), "--baseline", "/dev/zero"],
        ["check", "/dev/zero", "--baseline", s(&report)],
    ] {
        let o = simctl(&args);
        let e = stderr(&o);
        assert_eq!(code(&o), Some(2), "{e}");
        assert!(e.contains("/dev/zero") && e.contains("64 MiB"), "{e}");
    }
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let o = simctl(&["plot", s(&big), "--kind", "cdf", "--out", "x.svg"]);
    let e = stderr(&o);
    assert_eq!(code(&o), Some(2), "{e}");
    assert!(e.contains("big.json") && e.contains("256 MiB"), "{e}");
}

#[test]
fn check_refuses_empty_runs() {
    let dir = scratch("outputs_check_empty");
    let empty = write(&dir, "empty.csv", "time_ns,op,sector,sectors\n");
    let (e1, e2, real) = (dir.join("e1.json"), dir.join("e2.json"), dir.join("r.json"));
    for out in [&e1, &e2] {
        simctl_ok(&["replay", s(&empty), "--allow-empty", "-q", "--json", s(out)]);
    }
    simctl_ok(&["replay", "traces/sample.csv", "-q", "--json", s(&real)]);
    for (rep, base, named) in [(&e1, &e2, &e1), (&real, &e1, &e1), (&e1, &real, &e1)] {
        let o = simctl(&["check", s(rep), "--baseline", s(base)]);
        let e = stderr(&o);
        assert_eq!(code(&o), Some(2), "{e}");
        assert!(e.contains(s(named)) && e.contains("empty run"), "{e}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("passed"));
    }
}

#[test]
fn merge_refuses_a_cell_file_holding_another_cells_report() {
    let dir = scratch("outputs_merge_foreign");
    let sample = root().join("traces/sample.csv");
    let grid = write(
        &dir,
        "grid.toml",
        &format!(
            "schedulers = [\"noop\", \"deadline\"]\nworkloads = [\"{}\"]\nseeds = [1, 2]\n",
            sample.display()
        ),
    );
    let shards: Vec<PathBuf> = (1..=2).map(|i| dir.join(format!("s{i}"))).collect();
    for (i, d) in shards.iter().enumerate() {
        let spec = format!("{}/2", i + 1);
        simctl_ok(&["sweep", s(&grid), "--out", s(d), "--shard", &spec]);
    }
    let cells = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d.join("cells"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let (one, two) = (cells(&shards[0]), cells(&shards[1]));
    // Cell 0 (noop, seed 1) and cell 2 (deadline, seed 1) are in shard 1;
    // cell 1 (noop, seed 2) in shard 2.
    for (from, msg) in [(&one[1], "scheduler `deadline`"), (&two[0], "seed = 2")] {
        let bytes = std::fs::read(&one[0]).unwrap();
        std::fs::copy(from, &one[0]).unwrap();
        let out = dir.join("merged");
        let o = simctl(&["merge", s(&shards[0]), s(&shards[1]), "--out", s(&out)]);
        let e = stderr(&o);
        assert_eq!(code(&o), Some(2), "{e}");
        assert!(
            e.contains(s(&one[0])) && e.contains("is not the report of"),
            "{e}"
        );
        assert!(e.contains(msg), "{e}");
        std::fs::write(&one[0], bytes).unwrap();
    }
    simctl_ok(&[
        "merge",
        s(&shards[0]),
        s(&shards[1]),
        "--out",
        s(&dir.join("ok")),
    ]);
}

#[test]
fn zero_slurm_shards_and_unknown_log_ops_are_refused() {
    let dir = scratch("outputs_small");
    let sample = root().join("traces/sample.csv");
    let grid = write(
        &dir,
        "grid.toml",
        &format!(
            "schedulers = [\"noop\"]\nworkloads = [\"{}\"]\n",
            s(&sample)
        ),
    );
    let out = dir.join("slurm");
    let o = simctl(&[
        "sweep",
        s(&grid),
        "--out",
        s(&out),
        "--slurm",
        "--shards",
        "0",
    ]);
    assert_eq!(code(&o), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--shards"), "{}", stderr(&o));
    assert!(!out.exists(), "no scripts written");
    let log = dir.join("log.csv");
    simctl_ok(&["replay", "traces/sample.csv", "-q", "--log", s(&log)]);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut f: Vec<&str> = lines[2].split(',').collect();
    f[6] = "Q";
    lines[2] = f.join(",");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let svg = dir.join("t.svg");
    let o = simctl(&["plot", s(&log), "--kind", "timeline", "--out", s(&svg)]);
    let e = stderr(&o);
    assert_eq!(code(&o), Some(2), "{e}");
    assert!(
        e.contains("log.csv:3: field `op` = `Q`: expected one of R, W, D, F, WF"),
        "{e}"
    );
    assert!(!svg.exists());
}

#[test]
fn sweep_runs_an_fio_job_file_and_a_bad_set_names_its_argument() {
    let dir = scratch("outputs_sweep_fio");
    let fio = write(
        &dir,
        "small.fio",
        "[global]\nioengine=psync\nbs=4k\nfilename=f\nsize=1m\n[r]\nrw=randread\nruntime=1ms\n",
    );
    let grid = write(
        &dir,
        "grid.toml",
        &format!("schedulers = [\"noop\"]\nworkloads = [\"{}\"]\n", s(&fio)),
    );
    let out = simctl_ok(&["sweep", s(&grid), "--out", s(&dir.join("out"))]);
    assert!(out.contains("ran 1,") && out.contains("failed 0"), "{out}");
    let e = simctl_err(&[
        "run",
        "configs/scenarios/rand-read-4k.toml",
        "--set",
        "host.cpu_freq_mhz=inf",
    ]);
    assert!(
        e.contains("--set host.cpu_freq_mhz=inf (not a finite number)"),
        "{e}"
    );
}
