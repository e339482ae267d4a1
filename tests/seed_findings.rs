//! The seed papers' findings, reproduced on the generic eMMC profile
//! through the `simctl` binary.

mod common;
use common::*;

fn run(scenario: &str, extra: &[&str], tmp: &std::path::Path) -> serde_json::Value {
    let mut args = vec!["run", scenario];
    args.extend_from_slice(extra);
    report(&args, tmp)
}

#[test]
fn sequential_4k_reads_reach_at_least_three_times_the_iops_of_random_ones() {
    let tmp = scratch("seq_vs_rand");
    let seq = run("configs/scenarios/seq-read-4k.toml", &[], &tmp);
    let rnd = run("configs/scenarios/rand-read-4k.toml", &[], &tmp);
    let (s, r) = (
        seq["throughput"]["iops"].as_f64().unwrap(),
        rnd["throughput"]["iops"].as_f64().unwrap(),
    );
    assert_eq!(seq["requests"]["reads"], 1000);
    assert_eq!(rnd["requests"]["reads"], 1000);
    assert!(s >= 3.0 * r, "sequential {s:.0} IOPS vs random {r:.0} IOPS");
    // The mechanism: read-ahead makes most sequential calls page-cache hits.
    assert!(seq["page_cache"]["hits"].as_u64().unwrap() > 900, "{}", seq["page_cache"]);
}

#[test]
fn sorted_strided_reads_finish_faster_than_shuffled_ones() {
    let tmp = scratch("sorted_vs_shuffled");
    let sorted = run("configs/scenarios/sorted-stride.toml", &[], &tmp);
    let shuffled = run("configs/scenarios/shuffled-stride.toml", &[], &tmp);
    assert_eq!(sorted["requests"]["reads"], 1024);
    assert_eq!(shuffled["requests"]["reads"], 1024);
    let (a, b) = (
        sorted["simulated_time_s"].as_f64().unwrap(),
        shuffled["simulated_time_s"].as_f64().unwrap(),
    );
    assert!(a < b, "sorted {a:.4} s should beat shuffled {b:.4} s");
    // The mechanism: the mapping cache hits more in ascending order.
    assert!(
        sorted["device"]["map_cache_hit_rate"].as_f64() > shuffled["device"]["map_cache_hit_rate"].as_f64()
    );
}

#[test]
fn with_16_threads_deadline_beats_noop_and_ascending_requests_are_served_faster() {
    let tmp = scratch("rand16");
    let log = tmp.join("deadline.csv");
    let dl = run(
        "configs/scenarios/rand16-128m.toml",
        &["--scheduler", "deadline", "--log", log.to_str().unwrap()],
        &tmp,
    );
    let noop = run("configs/scenarios/rand16-128m.toml", &["--scheduler", "noop"], &tmp);
    let (d, n) = (
        dl["throughput"]["iops"].as_f64().unwrap(),
        noop["throughput"]["iops"].as_f64().unwrap(),
    );
    assert_eq!(dl["requests"]["count"], noop["requests"]["count"]);
    assert_eq!(dl["threads"].as_array().unwrap().len(), 16);
    assert!(d > n, "deadline {d:.0} IOPS should beat noop {n:.0} IOPS");
    let j = dl["fairness"]["jain"].as_f64().unwrap();
    assert!(j > 0.0 && j <= 1.0);

    // Address difference vs. device time, from the request log.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut rows: Vec<(u64, u64, u64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].parse().unwrap(), f[3].parse().unwrap(), f[4].parse().unwrap())
        })
        .collect();
    rows.sort_by_key(|r| r.0); // dispatch order = device start order
    let (mut up, mut nup, mut down, mut ndown) = (0u64, 0u64, 0u64, 0u64);
    for w in rows.windows(2) {
        let dev = w[1].1 - w[1].0;
        if w[1].2 > w[0].2 {
            up += dev;
            nup += 1;
        } else if w[1].2 < w[0].2 {
            down += dev;
            ndown += 1;
        }
    }
    assert!(nup > 50 && ndown > 10, "both directions occur: {nup} up, {ndown} down");
    let (mu, md) = (up as f64 / nup as f64, down as f64 / ndown as f64);
    assert!(mu < md, "ascending mean device time {mu:.0} ns vs descending {md:.0} ns");
}
