//! `simctl` from a directory outside the repository: the phones,
//! scenarios and profiles bundled in the binary are found by name, listed
//! by `simctl phones` / `simctl scenarios`, and files on disk still
//! override them.

use crate::common::*;
use std::process::Command;

/// A fresh directory outside the repository (so no parent has
/// `configs/`), with its own cache folder for the bundled tree.
fn outside(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("mmcsim-anywhere-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    assert!(
        d.ancestors().all(|a| !a.join("configs/phones").is_dir()),
        "{} has a configs/ above it",
        d.display()
    );
    d
}

fn simctl_at(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_simctl"))
        .args(args)
        .current_dir(dir)
        .env("MMCSIM_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("simctl runs")
}

#[test]
fn bundled_phones_and_scenarios_are_listed_from_anywhere() {
    let d = outside("list");
    let out = simctl_at(&d, &["phones", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let phones: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = phones
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for want in [
        "galaxy-s2",
        "motog-2013",
        "nexus-s",
        "nexus5",
        "nexus7-2012",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let nexus_s = &phones.as_array().unwrap()[names.iter().position(|n| *n == "nexus-s").unwrap()];
    assert_eq!(nexus_s["benchmark_fs"], "vfat");
    assert_eq!(nexus_s["source"], "bundled");

    let out = simctl_at(&d, &["scenarios"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("androbench-3.4") && text.contains("randread-4k"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_bundled_scenario_runs_on_a_bundled_phone_from_anywhere() {
    let d = outside("run");
    let out = simctl_at(
        &d,
        &[
            "run",
            "rand-read-4k",
            "--phone",
            "nexus-s",
            "--quiet",
            "--json",
            "r.json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(
        r["scheduler"]["name"], "cfq",
        "the Nexus S's stock elevator"
    );
    assert!(r["throughput"]["iops"].as_f64().unwrap() > 0.0);
    // The same from the repository gives the same numbers.
    let here = report(
        &[
            "run",
            "configs/scenarios/rand-read-4k.toml",
            "--phone",
            "nexus-s",
        ],
        &scratch("anywhere_run"),
    );
    assert_eq!(r["throughput"], here["throughput"]);
    assert_eq!(r["latency_us"], here["latency_us"]);

    let out = simctl_at(&d, &["run", "no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("simctl scenarios"), "{err}");
    let out = simctl_at(&d, &["run", "rand-read-4k", "--phone", "pixel-99"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("motog-2013"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_file_on_disk_overrides_the_bundled_one() {
    let d = outside("override");
    std::fs::create_dir_all(d.join("configs/scenarios")).unwrap();
    let text = std::fs::read_to_string(root().join("configs/scenarios/rand-read-4k.toml"))
        .unwrap()
        .replace("requests = 1000", "requests = 10");
    assert!(text.contains("requests = 10\n"));
    std::fs::write(d.join("configs/scenarios/rand-read-4k.toml"), text).unwrap();
    // The scenario names its device profile relative to itself: a tree on
    // disk holds what it refers to.
    std::fs::create_dir_all(d.join("configs/devices")).unwrap();
    std::fs::copy(
        root().join("configs/devices/generic-emmc.toml"),
        d.join("configs/devices/generic-emmc.toml"),
    )
    .unwrap();
    let out = simctl_at(&d, &["run", "rand-read-4k", "--quiet", "--json", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["requests"]["count"], 10);
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs the installed `bin` from `dir` with `args` (and `input` on standard
/// input), asserting success; returns standard output.
fn installed(bin: &std::path::Path, dir: &std::path::Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write as _;
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("MMCSIM_CACHE_DIR", dir.join("cache"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the installed simctl starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(
        out.status.success(),
        "installed simctl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `cargo install --path crates/simctl --root DIR`, as the README's install
/// section says, gives a `simctl` that runs the bundled AndroBench on a
/// bundled phone from outside the repository, lists the bundled phones and
/// scenarios, and replays a trace from standard input. A release build of
/// the package, so it runs only when `MMCSIM_CI` is set (`.ci/run` sets
/// it); otherwise it says SKIPPED. It builds in the workspace's own
/// `target/release`, as `cargo build --release` does, so it reuses what
/// is there: `.ci/run` has built the Python package's release build there
/// (the simctl library and everything below it), and on a developer's
/// clone the README's first command has built simctl itself.
#[test]
fn cargo_install_gives_a_simctl_that_runs_from_anywhere() {
    let test = "cargo_install_gives_a_simctl_that_runs_from_anywhere";
    if !in_ci() {
        say_skipped(
            test,
            &format!("runs `cargo install --path crates/simctl` (a release build of minutes); set {CI_ENV} to run it, as .ci/run does"),
        );
        return;
    }
    let d = outside("install");
    let prefix = d.join("prefix");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let out = Command::new(cargo)
        .args(["install", "--offline", "--path", "crates/simctl", "--root"])
        .arg(&prefix)
        .arg("--target-dir")
        .arg(&target)
        .current_dir(root())
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo install failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = prefix.join("bin/simctl");
    let phones = installed(&bin, &d, &["phones"], b"");
    assert!(
        phones.contains("motog-2013") && phones.contains("nexus-s"),
        "{phones}"
    );
    let scenarios = installed(&bin, &d, &["scenarios"], b"");
    assert!(scenarios.contains("androbench-3.4"), "{scenarios}");
    let ab = installed(
        &bin,
        &d,
        &[
            "run",
            "androbench-3.4",
            "--phone",
            "motog-2013",
            "--quiet",
            "--json",
            "-",
        ],
        b"",
    );
    let ab: serde_json::Value = serde_json::from_str(&ab).unwrap();
    assert!(ab["androbench"]["seq_read_mb_s"].as_f64().unwrap() > 0.0);
    let trace = std::fs::read(root().join("traces/sample.csv")).unwrap();
    let replay = installed(&bin, &d, &["replay", "-", "--quiet", "--json", "-"], &trace);
    let replay: serde_json::Value = serde_json::from_str(&replay).unwrap();
    assert!(replay["requests"]["count"].as_u64().unwrap() > 1000);
    let _ = std::fs::remove_dir_all(&d);
}
