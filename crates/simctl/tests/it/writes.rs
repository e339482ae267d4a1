//! Writes through the whole path: buffered writes and the writeback
//! flusher, fsync and O_SYNC flushes, direct writes, read-modify-write.

use crate::common::*;

const SCENARIO: &str = r#"
name = "writes"
seed = 5
[host]
page_cache_mib = 64
[precondition]
fill_fraction = 0.5
[[files]]
name = "f"
size_mib = 256
[[jobs]]
name = "writer"
file = "f"
op = "write"
pattern = "sequential"
request_bytes = 65536
requests = 1500
[[jobs]]
name = "db"
file = "f"
op = "write"
pattern = "random"
request_bytes = 4096
region_offset_bytes = 134217728
region_bytes = 8388608
requests = 50
fsync_every = 1
[[jobs]]
name = "odirect"
file = "f"
op = "write"
pattern = "random"
request_bytes = 4096
direct = true
sync = true
requests = 40
[[jobs]]
name = "partial"
file = "f"
op = "write"
pattern = "strided"
order = "shuffled"
stride_bytes = 8192
request_bytes = 100
region_offset_bytes = 201326592
region_bytes = 245760
"#;

fn rows(log: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn buffered_writes_reach_the_device_through_the_flusher_and_fsync_flushes() {
    let tmp = scratch("writes");
    let sc = tmp.join("writes.toml");
    std::fs::write(&sc, SCENARIO).unwrap();
    let log = tmp.join("log.csv");
    let r = report(
        &["run", sc.to_str().unwrap(), "--log", log.to_str().unwrap()],
        &tmp,
    );
    assert_eq!(r["requests"]["writes"], 1500 + 50 + 40 + 30);
    assert_eq!(r["requests"]["fsyncs"], 50);
    let rows = rows(&log);
    // One cache flush per fsync() and per O_SYNC direct write.
    let flushes = rows.iter().filter(|r| r[6] == "F").count();
    assert_eq!(flushes, 50 + 40, "fsyncs + O_DIRECT|O_SYNC writes");
    // The 64 KiB buffered writes leave as big background writes issued by
    // the flusher's context (thread index after the 4 job threads).
    let flusher: Vec<&Vec<String>> = rows.iter().filter(|r| r[7] == "4").collect();
    assert!(!flusher.is_empty(), "the flusher wrote back dirty pages");
    assert!(flusher.iter().all(|r| r[6] == "W"));
    let big = flusher
        .iter()
        .filter(|r| r[5].parse::<u32>().unwrap() > 128)
        .count();
    assert!(
        big > flusher.len() / 2,
        "writeback merges pages into large requests"
    );
    // A 100-byte write into an uncached page of the file reads it first
    // (30 distinct pages, 8 KiB apart).
    assert_eq!(r["page_cache"]["rmw_reads"], 30);
    // Threads appear by job name; the flusher is not a workload thread.
    let names: Vec<&str> = r["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["writer", "db", "odirect", "partial"]);
    // Buffered 64 KiB writes return at page-cache speed most of the time,
    // while O_SYNC direct writes wait for the device and a flush.
    let t = r["threads"].as_array().unwrap();
    let p50 = |i: usize| t[i]["latency_us"]["p50"].as_f64().unwrap();
    assert!(
        p50(0) < p50(2),
        "buffered p50 {} µs vs O_SYNC direct p50 {} µs",
        p50(0),
        p50(2)
    );
    assert!(r["device"]["waf"].as_f64().unwrap() >= 1.0);
}

#[test]
fn a_trace_can_be_replayed_from_a_scenario_with_a_speed_factor() {
    let tmp = scratch("trace_scenario");
    let sc = tmp.join("t.toml");
    let sample = root().join("traces/sample.csv");
    std::fs::write(
        &sc,
        format!(
            "name='t'\n[trace]\npath = '{}'\nspeed = 2.0\n",
            sample.display()
        ),
    )
    .unwrap();
    let (lf, ln) = (tmp.join("fast.csv"), tmp.join("normal.csv"));
    let fast = report(
        &["run", sc.to_str().unwrap(), "--log", lf.to_str().unwrap()],
        &tmp,
    );
    let normal = report(
        &["replay", "traces/sample.csv", "--log", ln.to_str().unwrap()],
        &tmp,
    );
    assert_eq!(fast["requests"]["count"], normal["requests"]["count"]);
    assert_eq!(fast["trace"]["speed"], 2.0);
    // The last request arrives at half its recorded (rebased) time.
    let last_submit = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap().parse::<u64>().unwrap())
            .max()
            .unwrap() as f64
    };
    let (f, n) = (last_submit(&lf), last_submit(&ln));
    assert!(
        (f / n - 0.5).abs() < 0.01,
        "twice the speed issues the trace in half the time: {f} vs {n} ns"
    );
}
