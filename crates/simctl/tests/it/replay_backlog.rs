//! Timed replay of a trace that arrives faster than the eMMC serves it
//! holds a bounded number of records, whatever the trace length: records
//! that arrive while their process sleeps in `get_request` (`nr_requests`
//! full) wait in the trace feed, at most `BACKLOG_RECORDS` of them in
//! memory, and the rest are read from the trace only when the block layer
//! admits one. Checked on operation counts (records held, deferred;
//! events, scheduler calls and feed operations per record), not on wall
//! time or RSS.

use mmcsim::block::BlockStats;
use mmcsim::config::Scenario;
use mmcsim::sim::{RunCost, RunOptions, Simulation};
use mmcsim::workload::replay::{Backlog, BACKLOG_RECORDS};
use std::io::Write;
use std::path::PathBuf;

/// Writes a native CSV trace of `n` random 4 KiB records (70 % reads),
/// one every `interval_us`, spread over `pids` processes; returns its path.
fn trace(name: &str, n: u64, interval_us: u64, pids: u32) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "mmcsim-backlog-{}-{name}-{n}.csv",
        std::process::id()
    ));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(f, "time_us,op,sector,sectors,pid").unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let op = if x % 10 < 7 { "R" } else { "W" };
        // 4 KiB-aligned sectors of the first 1 GiB.
        let sector = (x >> 20) % (1 << 18) * 8;
        let pid = 100 + (i % pids as u64) as u32;
        writeln!(f, "{},{op},{sector},8,{pid}", i * interval_us).unwrap();
    }
    f.flush().unwrap();
    path
}

/// Replays `path` timed on the generic profile (half full, no steady
/// state, to keep the test short) under deadline; returns the backlog
/// counters, the requests completed and what the run cost the simulator
/// (its operation counts, and the block layer's).
fn replay_costed(path: &PathBuf) -> (Backlog, u64, RunCost, BlockStats) {
    let profile = crate::common::root().join("configs/devices/generic-emmc.toml");
    let sets: Vec<(String, String)> = [
        ("device.profile", profile.to_str().unwrap()),
        ("scheduler.name", "deadline"),
        ("precondition.fill_fraction", "0.5"),
        ("precondition.steady_state", "false"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let sc = Scenario::for_trace(path, &sets).expect("scenario");
    let report = Simulation::new(sc)
        .expect("builds")
        .run(RunOptions::default())
        .expect("runs");
    std::fs::remove_file(path).ok();
    let trace = report.trace.expect("a trace report");
    (
        trace.backlog,
        report.workload.requests.count,
        report.cost,
        report.block,
    )
}

/// [`replay_costed`] without the cost.
fn replay(path: &PathBuf) -> (Backlog, u64) {
    let (b, n, _, _) = replay_costed(path);
    (b, n)
}

#[test]
fn an_overloaded_trace_twice_as_long_costs_at_most_twice_as_much() {
    // One record every 2 µs (~40× what the device serves), 1 and 3
    // processes: doubling the records may cost at most 2.2× the events,
    // the scheduler calls, the held-bio resubmissions and the feed's
    // operations. A feed or block layer that rescanned its backlog on
    // every admission would grow with the square of the length.
    for pids in [1, 3] {
        let n = 4 * BACKLOG_RECORDS as u64;
        let (b1, d1, c1, k1) = replay_costed(&trace(&format!("cost1-{pids}"), n, 2, pids));
        let (b2, d2, c2, k2) = replay_costed(&trace(&format!("cost2-{pids}"), 2 * n, 2, pids));
        assert_eq!((d1, d2), (n, 2 * n), "every record completes");
        assert!(
            b1.deferred > n / 2 && b2.deferred > n,
            "the trace outran the device"
        );
        for (what, short, long) in [
            ("events", c1.events, c2.events),
            ("scheduler calls", k1.elevator_calls, k2.elevator_calls),
            ("feed operations", c1.feed_ops, c2.feed_ops),
            (
                "held-bio resubmissions",
                k1.held_resubmits,
                k2.held_resubmits,
            ),
        ] {
            assert!(
                short > 0 || what == "held-bio resubmissions",
                "{what}: none counted"
            );
            assert!(
                long * 10 <= short * 22,
                "{pids} pids: {what} grew {short} -> {long} for twice the records (more than 2.2x)"
            );
        }
        // Every record costs the feed at least its placement.
        assert!(c1.feed_ops >= n && c2.feed_ops >= 2 * n, "{c1:?} {c2:?}");
        // Each request takes at least one scheduler add and one dispatch.
        assert!(k1.elevator_calls >= 2 * n, "{k1:?}");
    }
}

#[test]
fn an_overloaded_trace_holds_a_bounded_backlog_whatever_its_length() {
    // One record every 2 µs: ~40× what the device serves.
    for pids in [1, 3] {
        let n = 3 * BACKLOG_RECORDS as u64;
        let (short, done_short) = replay(&trace(&format!("short{pids}"), n, 2, pids));
        let (long, done_long) = replay(&trace(&format!("long{pids}"), 2 * n, 2, pids));
        assert_eq!(
            (done_short, done_long),
            (n, 2 * n),
            "every record completes"
        );
        for (b, len) in [(short, n), (long, 2 * n)] {
            assert!(
                b.max_held <= BACKLOG_RECORDS as u64 + 1,
                "{pids} pids, {len} records: {} held at once, more than the bound {BACKLOG_RECORDS} + 1",
                b.max_held
            );
            // Most records waited: the trace really outran the device.
            assert!(
                b.deferred > len / 2,
                "{pids} pids, {len} records: only {} deferred",
                b.deferred
            );
        }
        assert_eq!(
            short.max_held, long.max_held,
            "{pids} pids: the records held do not grow with the trace"
        );
        // The longer trace falls further behind: its records wait longer.
        assert!(long.max_wait_ns > short.max_wait_ns);
    }
}

#[test]
fn a_trace_the_device_keeps_up_with_holds_nothing() {
    // One record every 5 ms: the device is idle between them.
    let (b, done) = replay(&trace("light", 2_000, 5_000, 2));
    assert_eq!(done, 2_000);
    assert_eq!(b, Backlog::default(), "no record waited for a request");
}

/// Through the binary: the report says how far a replay fell behind its
/// trace (`trace.backlog`, and a line of the table), and leaves the section
/// out when every record was issued at its arrival.
#[test]
fn the_report_says_how_far_the_replay_fell_behind() {
    let exe = env!("CARGO_BIN_EXE_simctl");
    let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let dir = std::env::temp_dir().join(format!("mmcsim-backlog-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let heavy = trace("report-heavy", 6_000, 2, 1);
    let light = trace("report-light", 200, 5_000, 1);
    let run = |t: &PathBuf, name: &str| {
        let json = dir.join(format!("{name}.json"));
        let out = std::process::Command::new(exe)
            .current_dir(root)
            .args(["replay", t.to_str().unwrap(), "--scheduler", "deadline"])
            .args(["--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        (r, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (r, table) = run(&heavy, "heavy");
    let b = &r["trace"]["backlog"];
    let deferred = b["records_deferred"].as_u64().unwrap();
    let held = b["max_records_held"].as_u64().unwrap();
    assert!(deferred > 1_000, "{b}");
    assert!((1..=BACKLOG_RECORDS as u64 + 1).contains(&held), "{b}");
    assert!(b["max_wait_ns"].as_u64().unwrap() > 1_000_000, "{b}");
    assert!(table.contains("replay fell behind the trace"), "{table}");
    let (r, table) = run(&light, "light");
    assert!(r["trace"].get("backlog").is_none(), "{}", r["trace"]);
    assert!(!table.contains("fell behind"), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(heavy).ok();
    std::fs::remove_file(light).ok();
}
