//! Trace replay: rebasing, capacity fitting, closed loop, preconditioning
//! from a trace.

use crate::common::*;
use std::path::PathBuf;

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The request log's rows as `[submit_ns, dispatch_ns, device_start_ns,
/// complete_ns, sector, thread]`.
fn rows(log: &std::path::Path) -> Vec<Vec<u64>> {
    let mut csv = csv::Reader::from_path(log).unwrap();
    let h = csv.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let cols = [
        "submit_ns",
        "dispatch_ns",
        "device_start_ns",
        "complete_ns",
        "sector",
        "thread",
    ]
    .map(col);
    csv.records()
        .map(|r| {
            let r = r.unwrap();
            cols.iter().map(|&i| r[i].parse().unwrap()).collect()
        })
        .collect()
}

#[test]
fn an_absolute_start_time_is_rebased_to_zero_and_reported() {
    let tmp = scratch("rebase");
    let t = write(
        &tmp,
        "abs.csv",
        "time_s,op,sector,sectors\n5.000,R,0,8\n5.010,R,4096,8\n5.020,W,8192,8\n",
    );
    let r = report(&["replay", t.to_str().unwrap()], &tmp);
    assert_eq!(r["trace"]["rebased_from_ns"], 5_000_000_000u64);
    assert_eq!(r["trace"]["records"], 3);
    let span = r["simulated_time_s"].as_f64().unwrap();
    assert!(
        span < 0.1,
        "replay starts at the first record, not at 5 s: {span}"
    );
}

#[test]
fn traces_from_bigger_devices_need_an_explicit_fit() {
    let tmp = scratch("fit");
    // Two regions far apart on a 64 GiB device: at 1 GiB and at 60 GiB.
    let mut csv = String::from("time_us,op,sector,sectors\n");
    for i in 0..50u64 {
        csv.push_str(&format!("{},R,{},8\n", i * 100, 2_097_152 + i * 8));
        csv.push_str(&format!("{},R,{},8\n", i * 100 + 50, 125_829_120 + i * 64));
    }
    let t = write(&tmp, "big.csv", &csv);
    let e = simctl_err(&["replay", t.to_str().unwrap()]);
    // Refused at the first record beyond the device (the trace is read
    // once, so not at the highest).
    assert!(
        e.contains("big.csv:3") && e.contains("--fit wrap") && e.contains("--fit compact"),
        "{e}"
    );
    assert!(
        e.contains("125829127"),
        "names the record's last sector: {e}"
    );

    let log = tmp.join("wrap.csv");
    let w = report(
        &[
            "replay",
            t.to_str().unwrap(),
            "--fit",
            "wrap",
            "--log",
            log.to_str().unwrap(),
        ],
        &tmp,
    );
    assert_eq!(w["trace"]["fit"], "wrap");
    assert_eq!(w["trace"]["remapped"], 50, "only the high region moves");
    assert_eq!(w["requests"]["count"], 100);
    let cap = w["device_profile"].is_object();
    assert!(cap);

    let log = tmp.join("compact.csv");
    let c = report(
        &[
            "replay",
            t.to_str().unwrap(),
            "--fit",
            "compact",
            "--log",
            log.to_str().unwrap(),
        ],
        &tmp,
    );
    assert_eq!(c["trace"]["fit"], "compact");
    // 1 MiB regions touched: one low, two high (the high run spans 3200
    // sectors).
    assert_eq!(c["trace"]["regions"], 3);
    // Packed densely, order and in-region distances preserved.
    let mut sectors: Vec<u64> = rows(&log).iter().map(|r| r[4]).collect();
    sectors.sort();
    sectors.dedup();
    assert_eq!(sectors[0], 0);
    assert_eq!(sectors[1], 8, "distances inside a region are kept");
    assert!(
        sectors.contains(&2048),
        "the next touched region follows at 1 MiB"
    );
    assert!(*sectors.last().unwrap() < 3 * 2048);
}

#[test]
fn closed_loop_issues_a_process_next_request_only_after_its_previous_completes() {
    let tmp = scratch("closed");
    // Two processes whose recorded requests overlap heavily (1 µs apart).
    let mut csv = String::from("time_us,op,sector,sectors,pid\n");
    for i in 0..200u64 {
        csv.push_str(&format!(
            "{},R,{},8,{}\n",
            i,
            (i * 7919 % 50_000) * 8,
            10 + i % 2
        ));
    }
    let t = write(&tmp, "tight.csv", &csv);
    let log = tmp.join("closed.csv");
    let closed = report(
        &[
            "replay",
            t.to_str().unwrap(),
            "--mode",
            "closed",
            "--log",
            log.to_str().unwrap(),
        ],
        &tmp,
    );
    assert_eq!(closed["trace"]["mode"], "closed");
    assert_eq!(closed["requests"]["count"], 200);
    assert_eq!(closed["threads"].as_array().unwrap().len(), 2);
    // Per process: each request is submitted after the previous one's
    // device completion.
    for thread in 0..2u64 {
        let mine: Vec<Vec<u64>> = rows(&log).into_iter().filter(|r| r[5] == thread).collect();
        assert_eq!(mine.len(), 100);
        for w in mine.windows(2) {
            assert!(
                w[1][0] >= w[0][3],
                "thread {thread}: submitted before the previous completed"
            );
        }
    }
    // Timed replay of the same trace queues them all at once instead.
    let timed = report(&["replay", t.to_str().unwrap()], &tmp);
    assert!(
        timed["latency_us"]["mean"].as_f64().unwrap()
            > 5.0 * closed["latency_us"]["mean"].as_f64().unwrap(),
        "open loop piles requests up"
    );
}

#[test]
fn a_preconditioning_trace_is_applied_before_measurement() {
    let tmp = scratch("precond_trace");
    // Data written near the end of the device, beyond the default 80 %
    // fill: without the preconditioning trace these reads find nothing
    // mapped and never touch NAND.
    let base = 15_000_000u64;
    let mut pre = String::from("time_us,op,sector,sectors\n");
    for i in 0..64u64 {
        pre.push_str(&format!("{},W,{},256\n", i * 10, base + i * 256));
    }
    pre.push_str("700,D,15016384,256\n");
    let pre = write(&tmp, "pre.csv", &pre);
    let mut run = String::from("time_us,op,sector,sectors\n");
    for i in 0..64u64 {
        run.push_str(&format!("{},R,{},8\n", i * 1000, base + i * 256));
    }
    let run = write(&tmp, "run.csv", &run);
    let cold = report(&["replay", run.to_str().unwrap()], &tmp);
    let warm = report(
        &[
            "replay",
            run.to_str().unwrap(),
            "--precondition",
            pre.to_str().unwrap(),
        ],
        &tmp,
    );
    assert!(cold["device"]["unmapped_reads"].as_u64().unwrap() > 0);
    assert_eq!(warm["device"]["unmapped_reads"], 0);
    assert_eq!(warm["trace"]["precondition"]["writes"], 64);
    assert_eq!(warm["trace"]["precondition"]["discards"], 1);
    assert!(
        warm["latency_us"]["mean"].as_f64().unwrap() > cold["latency_us"]["mean"].as_f64().unwrap(),
        "mapped data costs NAND reads"
    );
}

#[test]
fn a_bad_record_met_when_a_completion_reads_ahead_stops_the_run_at_its_line() {
    // Closed loop reads a process's next record when its previous one
    // completes: the completion climbs as an event, and the parse error it
    // meets ends the run with the record's location (nothing is parked).
    let tmp = scratch("bad_read_ahead");
    let t = write(
        &tmp,
        "bad.csv",
        "time_ns,op,sector,sectors,pid\n0,R,0,8,1\n1000,R,8,8,1\n2000,Q,16,8,1\n3000,R,24,8,1\n",
    );
    let e = simctl_err(&["replay", t.to_str().unwrap(), "--mode", "closed"]);
    assert!(e.contains("bad.csv:4"), "{e}");
    assert!(e.contains("op"), "{e}");
}
