//! `simctl compare`: schedulers side by side, the seed papers' Fig. 3 and
//! Fig. 7 ordering, charts, and parallel runs identical to serial ones.

use crate::common::*;

fn iops(c: &serde_json::Value, label: &str) -> f64 {
    c["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == label)
        .unwrap_or_else(|| panic!("no report for {label}"))["report"]["throughput"]["iops"]
        .as_f64()
        .unwrap()
}

/// With 16 readers in 128 MiB and a map cache at the reference's low end
/// (8 map pages = 32 MiB, smaller than the region), deadline's ascending
/// batches keep more map-cache hits than noop's and cfq's order. (The
/// generic profile's 36 entries hold the whole region, and the three are
/// then level: see crates/simctl/tests/it/seed_findings.rs.)
#[test]
fn with_16_readers_and_a_small_map_cache_deadline_beats_cfq_and_noop_and_jain_is_reported() {
    let tmp = scratch("compare_rand16");
    let json = tmp.join("c.json");
    let plot = tmp.join("chart");
    let out = simctl_ok(&[
        "compare",
        "configs/scenarios/rand16-128m.toml",
        "--schedulers",
        "noop,deadline,cfq",
        "--set",
        "device.map_cache.entries=8",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    for s in ["noop", "deadline", "cfq", "IOPS", "p99.9", "Jain"] {
        assert!(out.contains(s), "table lacks {s}:\n{out}");
    }
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(c["schema"], "mmcsim-compare/1");
    let (d, n, q) = (iops(&c, "deadline"), iops(&c, "noop"), iops(&c, "cfq"));
    assert!(
        d > n && d > q,
        "deadline {d:.0} vs noop {n:.0} vs cfq {q:.0} IOPS"
    );
    for r in c["reports"].as_array().unwrap() {
        assert_eq!(r["report"]["requests"]["count"], 8000, "{}", r["label"]);
        let j = r["report"]["fairness"]["jain"].as_f64().unwrap();
        assert!(j > 0.0 && j <= 1.0);
        assert_eq!(r["report"]["scheduler"]["name"], r["label"]);
    }
    let png = std::fs::read(plot.with_extension("png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = std::fs::read_to_string(plot.with_extension("svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("deadline"));
}

#[test]
fn parallel_comparison_is_byte_identical_to_a_serial_one_and_entries_carry_tunables() {
    let tmp = scratch("compare_parallel");
    let run = |jobs: &str, name: &str| {
        let p = tmp.join(name);
        simctl_ok(&[
            "compare",
            "traces/sample.csv",
            "--schedulers",
            "deadline,deadline:fifo_batch=1,sio,vr",
            "--jobs",
            jobs,
            "--quiet",
            "--json",
            p.to_str().unwrap(),
        ]);
        std::fs::read(p).unwrap()
    };
    let serial = run("1", "serial.json");
    let parallel = run("2", "parallel.json");
    assert!(serial == parallel, "parallel output differs from serial");
    let c: serde_json::Value = serde_json::from_slice(&serial).unwrap();
    let r = &c["reports"][1]["report"];
    let fb = r["scheduler"]["tunables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "fifo_batch")
        .unwrap();
    assert_eq!(
        fb["value"], "1",
        "the entry's own tunable applies to it only"
    );
    let fb0 = c["reports"][0]["report"]["scheduler"]["tunables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "fifo_batch")
        .unwrap()
        .clone();
    assert_eq!(fb0["value"], "16");
}

#[test]
fn compare_rejects_unknown_schedulers_and_bad_tunables_before_running() {
    let e = simctl_err(&[
        "compare",
        "traces/sample.csv",
        "--schedulers",
        "deadline,elevatorx",
    ]);
    assert!(e.contains("elevatorx") && e.contains("cfq"), "{e}");
    let e = simctl_err(&["compare", "traces/sample.csv", "--schedulers", "cfq:warp=9"]);
    assert!(e.contains("warp") && e.contains("slice_idle"), "{e}");
}

#[test]
fn compare_accepts_only_the_options_it_honours() {
    // One scheduler per entry comes from --schedulers, and a request log is
    // per run: the parser refuses both options.
    for (flag, value) in [("--scheduler", "x"), ("--log", "log.csv")] {
        let out = simctl(&["compare", "traces/sample.csv", flag, value]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {e}");
        assert!(
            e.contains(&format!("unexpected argument '{flag}'")),
            "{flag}: {e}"
        );
    }
    // Trace options apply to a trace workload, not to a scenario.
    let e = simctl_err(&[
        "compare",
        "configs/scenarios/seq-read-4k.toml",
        "--mode",
        "closed",
        "--time-unit",
        "ms",
    ]);
    assert!(
        e.contains("--time-unit, --mode only apply to a trace workload"),
        "{e}"
    );
}
