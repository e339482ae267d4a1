//! `simctl` from a directory outside the repository: the phones,
//! scenarios and profiles bundled in the binary are found by name, listed
//! by `simctl phones` / `simctl scenarios`, and files on disk still
//! override them.

mod common;
use common::*;
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
