//! End-to-end through the real `simctl` binary: eMMC internals of the
//! 2010–2014 era — the hybrid (FAST log-block) mapping's random-write
//! collapse on a full device, with its merges in the report.

mod common;
use common::*;
use std::path::Path;

/// One direct-I/O writer on a 256 MiB file of a device preconditioned to
/// 90 % full and GC steady state.
fn writer(dir: &Path, pattern: &str, request_bytes: u32, requests: u32) -> String {
    let profile = root().join("configs/devices/generic-emmc.toml");
    let text = format!(
        r#"name = "depth-{pattern}"
seed = 3
[device]
profile = "{}"
[precondition]
fill_fraction = 0.9
[[files]]
name = "f"
size_mib = 256
[[jobs]]
name = "w"
file = "f"
op = "write"
pattern = "{pattern}"
request_bytes = {request_bytes}
direct = true
requests = {requests}
"#,
        profile.display()
    );
    let path = dir.join(format!("{pattern}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The generic profile with the hybrid mapping, shrunk to 256 superblocks
/// (2 GiB raw; 8 MiB logical blocks) so preconditioning stays quick.
const HYBRID: [&str; 4] = [
    "--set",
    "device.ftl.mapping=hybrid",
    "--set",
    "device.nand.blocks_per_plane=256",
];

fn run(dir: &Path, scenario: &str) -> serde_json::Value {
    let mut a = vec!["run", scenario];
    a.extend(HYBRID);
    report(&a, dir)
}

/// Sequential 64 KiB writes are switch-merged a logical block at a time;
/// random 4 KiB writes fill the 7 random log blocks, and each reclaimed log
/// block costs a full merge (8 MiB copied) of every logical block it
/// touched: the random-write collapse of 2012-era managed flash
/// (emmc-parameters.md §3, §5 "0.2–1 MB/s" random against "8–20 MB/s"
/// sequential writes for a Nexus 7 2012-like part).
#[test]
fn hybrid_mapping_collapses_on_random_writes_and_reports_its_merges() {
    let tmp = scratch("device-depth-hybrid");
    let seq = run(&tmp, &writer(&tmp, "sequential", 65536, 2000));
    let rnd = run(&tmp, &writer(&tmp, "random", 4096, 30000));
    let mb = |r: &serde_json::Value| r["write"]["mb_per_s"].as_f64().unwrap();
    let merges = |r: &serde_json::Value, k: &str| r["device"]["merges"][k].as_u64().unwrap();
    let (s, r) = (mb(&seq), mb(&rnd));
    eprintln!(
        "hybrid: sequential 64 KiB {s:.2} MB/s (switch merges {}), random 4 KiB {r:.3} MB/s (full merges {}, WAF {:.2})",
        merges(&seq, "switch"),
        merges(&rnd, "full"),
        rnd["device"]["waf"]
    );
    assert!(s >= 10.0 * r, "sequential {s} MB/s vs random {r} MB/s");
    assert!(merges(&seq, "switch") > 0 && merges(&seq, "full") == 0);
    assert!(merges(&rnd, "full") > 0);
    assert!(rnd["device"]["waf"].as_f64().unwrap() > 5.0);
    assert_eq!(rnd["precondition"]["steady_reached"], true);
}
