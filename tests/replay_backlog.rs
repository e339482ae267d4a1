//! Timed replay of a trace that arrives faster than the eMMC serves it
//! holds a bounded number of records, whatever the trace length: records
//! that arrive while their process sleeps in `get_request` (`nr_requests`
//! full) wait in the trace feed, at most `BACKLOG_RECORDS` of them in
//! memory, and the rest are read from the trace only when the block layer
//! admits one. Checked on operation counts (records held, deferred), not
//! on wall time or RSS.

use mmcsim::config::Scenario;
use mmcsim::sim::{RunOptions, Simulation};
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
/// counters and the requests completed.
fn replay(path: &PathBuf) -> (Backlog, u64) {
    let sets: Vec<(String, String)> = [
        ("device.profile", "configs/devices/generic-emmc.toml"),
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
    (trace.backlog, report.workload.requests.count)
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
