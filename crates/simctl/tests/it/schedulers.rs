//! Every scheduler runs every bundled workload to completion, and
//! deadline keeps its promise to reads.

use crate::common::*;

#[test]
fn every_scheduler_completes_every_bundled_workload_without_losing_a_request() {
    let tmp = scratch("all_schedulers");
    let workloads = [
        ("configs/scenarios/seq-read-4k.toml", 1000),
        ("configs/scenarios/rand-read-4k.toml", 1000),
        ("configs/scenarios/sorted-stride.toml", 1024),
        ("configs/scenarios/shuffled-stride.toml", 1024),
        ("configs/scenarios/rand16-128m.toml", 8000),
        ("traces/sample.csv", 1470),
    ];
    let names: Vec<String> = {
        let js: serde_json::Value =
            serde_json::from_str(&simctl_ok(&["schedulers", "--json"])).unwrap();
        js.as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(names.len() >= 9, "{names:?}");
    for (w, expected) in workloads {
        let json = tmp.join("c.json");
        simctl_ok(&[
            "compare",
            w,
            "--schedulers",
            "all",
            "--set",
            "precondition.steady_state=false",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ]);
        let c: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let reports = c["reports"].as_array().unwrap();
        assert_eq!(reports.len(), names.len());
        for r in reports {
            let n = r["report"]["requests"]["count"].as_u64().unwrap();
            assert_eq!(
                n, expected,
                "{w} under {}: {n} of {expected} completed",
                r["label"]
            );
            let per_thread: u64 = r["report"]["threads"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["requests"].as_u64().unwrap())
                .sum();
            assert_eq!(per_thread, expected);
        }
    }
}

#[test]
fn deadline_serves_every_read_within_read_expire_plus_one_write_batch_under_a_write_flood() {
    let tmp = scratch("deadline_bound");
    // 400 async writes of 256 KiB queued in the first 40 ms (far more than
    // the device absorbs quickly) and a 4 KiB read every 5 ms for 2 s.
    let mut csv = String::from("time_us,op,sector,sectors,pid,sync\n");
    let mut events: Vec<(u64, String)> = Vec::new();
    for i in 0..400u64 {
        events.push((i * 100, format!("W,{},512,200,0", 2_000_000 + i * 512)));
    }
    for i in 0..400u64 {
        events.push((
            i * 5000 + 50,
            format!("R,{},8,300,1", (i * 7919 % 100_000) * 8),
        ));
    }
    events.sort_by_key(|e| e.0);
    for (t, rest) in events {
        csv.push_str(&format!("{t},{rest}\n"));
    }
    let trace = tmp.join("flood.csv");
    std::fs::write(&trace, csv).unwrap();
    let log = tmp.join("log.csv");
    simctl_ok(&[
        "replay",
        trace.to_str().unwrap(),
        "--scheduler",
        "deadline",
        "-q",
        "--log",
        log.to_str().unwrap(),
    ]);
    let mut max_read_wait = 0u64;
    let mut max_write_service = 0u64;
    for l in std::fs::read_to_string(&log).unwrap().lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (submit, dispatch, start, done): (u64, u64, u64, u64) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        if f[6] == "R" {
            max_read_wait = max_read_wait.max(dispatch - submit);
        } else {
            max_write_service = max_write_service.max(done - start);
        }
    }
    // read_expire (500 ms) is checked at batch boundaries: at worst a read
    // also waits for one write batch of fifo_batch (16) requests.
    let bound = 500_000_000 + 16 * max_write_service;
    assert!(
        max_read_wait <= bound,
        "a read waited {max_read_wait} ns > {bound} ns"
    );
}

#[test]
fn io_priority_flows_from_the_job_into_cfq_and_bfq_and_idling_decides_whether_it_matters() {
    let tmp = scratch("prio");
    let sc = tmp.join("prio.toml");
    std::fs::write(
        &sc,
        r#"
name = "prio"
[precondition]
steady_state = false
[[files]]
name = "f"
size_mib = 512
[[jobs]]
name = "high"
file = "f"
op = "read"
pattern = "random"
request_bytes = 65536
direct = true
duration_ms = 3000
nice = -20            # BE level (nice + 20) / 5 = 0
[[jobs]]
name = "low"
file = "f"
op = "read"
pattern = "random"
request_bytes = 65536
direct = true
duration_ms = 3000
ioprio_class = "be"
ioprio_level = 7
"#,
    )
    .unwrap();
    let json = tmp.join("c.json");
    simctl_ok(&[
        "compare",
        sc.to_str().unwrap(),
        "--schedulers",
        "cfq:hw_tag=0,cfq,bfq:hw_tag=0,deadline",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let share = |i: usize| {
        let t = c["reports"][i]["report"]["threads"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(t[0]["name"], "high");
        t[0]["requests"].as_f64().unwrap() / t[1]["requests"].as_f64().unwrap()
    };
    // CFQ idling (hw_tag forced 0): slices of 180 ms vs 40 ms.
    let cfq_idle = share(0);
    assert!(
        cfq_idle > 3.0 && cfq_idle < 6.0,
        "cfq, idling: {cfq_idle:.2}"
    );
    // Default hw_tag on legacy eMMC with two readers never settles to 0:
    // CFQ does not idle and the two readers alternate.
    let cfq_auto = share(1);
    assert!(
        (cfq_auto - 1.0).abs() < 0.05,
        "cfq, auto hw_tag: {cfq_auto:.2}"
    );
    // BFQ weights 8 vs 1.
    assert!(share(2) > 3.0, "bfq: {:.2}", share(2));
    // deadline ignores priorities.
    assert!((share(3) - 1.0).abs() < 0.05, "deadline: {:.2}", share(3));
}
