//! The seed papers' findings, reproduced on the generic eMMC profile
//! through the `simctl` binary.

use crate::common::*;

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
    assert!(
        seq["page_cache"]["hits"].as_u64().unwrap() > 900,
        "{}",
        seq["page_cache"]
    );
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
        sorted["device"]["map_cache_hit_rate"].as_f64()
            > shuffled["device"]["map_cache_hit_rate"].as_f64()
    );
}

/// With the sourced profile (36 map pages = 144 MiB of LBA, §3's midpoint)
/// the 128 MiB region's 32 map pages all stay cached, so the dispatch
/// order no longer changes the device's work: deadline and noop end within
/// 1 % of each other. Measured when the "CHOSEN FOR SEED EFFECTS" values
/// were replaced: deadline 4,238 IOPS, noop 4,240 IOPS, map-cache hit
/// rate 0.997 / 0.996.
#[test]
fn with_16_threads_in_128_mib_the_sourced_map_cache_holds_the_region_and_order_barely_matters() {
    let tmp = scratch("rand16_sourced");
    let dl = run(
        "configs/scenarios/rand16-128m.toml",
        &["--scheduler", "deadline"],
        &tmp,
    );
    let noop = run(
        "configs/scenarios/rand16-128m.toml",
        &["--scheduler", "noop"],
        &tmp,
    );
    assert_eq!(dl["requests"]["count"], noop["requests"]["count"]);
    assert_eq!(dl["threads"].as_array().unwrap().len(), 16);
    let j = dl["fairness"]["jain"].as_f64().unwrap();
    assert!(j > 0.0 && j <= 1.0);
    let (d, n) = (
        dl["throughput"]["iops"].as_f64().unwrap(),
        noop["throughput"]["iops"].as_f64().unwrap(),
    );
    assert!(
        (d - n).abs() < 0.01 * n,
        "deadline {d:.0} vs noop {n:.0} IOPS"
    );
    for r in [&dl, &noop] {
        let h = r["device"]["map_cache_hit_rate"].as_f64().unwrap();
        assert!(h > 0.99, "map-cache hit rate {h}");
    }
}

/// The mechanism behind the seed finding, as a what-if: with a map cache
/// smaller than the region (8 entries, the low end of §3's 8–64, not the
/// profile's value) deadline's ascending batches hit the map cache more
/// than noop's arrival order and deadline serves more IOPS (3,719 vs 3,484
/// when written).
#[test]
fn with_a_map_cache_smaller_than_the_region_deadline_beats_noop_through_map_cache_hits() {
    let tmp = scratch("rand16_small_map");
    let small = ["--set", "device.map_cache.entries=8"];
    let mut a = vec!["--scheduler", "deadline"];
    a.extend(small);
    let dl = run("configs/scenarios/rand16-128m.toml", &a, &tmp);
    let mut b = vec!["--scheduler", "noop"];
    b.extend(small);
    let noop = run("configs/scenarios/rand16-128m.toml", &b, &tmp);
    let (d, n) = (
        dl["throughput"]["iops"].as_f64().unwrap(),
        noop["throughput"]["iops"].as_f64().unwrap(),
    );
    assert!(d > n, "deadline {d:.0} IOPS should beat noop {n:.0} IOPS");
    let hit = |r: &serde_json::Value| r["device"]["map_cache_hit_rate"].as_f64().unwrap();
    assert!(hit(&dl) > hit(&noop), "{} vs {}", hit(&dl), hit(&noop));
}

/// The seed papers' finding as first asserted (deadline ahead of noop, and
/// ascending requests served faster than descending ones, on the generic
/// profile), with its numbers as they stand asserted against the committed
/// verdicts under `crates/simctl/tests/golden/verdicts/`. It held only
/// with the map-cache values picked for it (8 entries, 3-page prefetch);
/// with the sourced values (36 entries, 1-page prefetch) the run gave deadline 4,238 vs noop 4,240 IOPS, and in
/// deadline's request log 7,160 ascending requests average 243 µs of device
/// time against 236 µs for 302 descending ones (noop: 254 µs up, 227 µs
/// down, the same with both prefetchers off, so not a direction
/// mechanism).
#[test]
fn with_16_threads_deadline_vs_noop_and_ascending_vs_descending_as_measured() {
    let tmp = scratch("rand16");
    let log = tmp.join("deadline.csv");
    let dl = run(
        "configs/scenarios/rand16-128m.toml",
        &["--scheduler", "deadline", "--log", log.to_str().unwrap()],
        &tmp,
    );
    let noop = run(
        "configs/scenarios/rand16-128m.toml",
        &["--scheduler", "noop"],
        &tmp,
    );
    let (d, n) = (
        dl["throughput"]["iops"].as_f64().unwrap(),
        noop["throughput"]["iops"].as_f64().unwrap(),
    );
    let (nup, mu, ndown, md) = direction_split(&log);
    assert!(
        nup > 50 && ndown > 10,
        "both directions occur: {nup} up, {ndown} down"
    );
    assert_verdict(
        "seed-generic-rand16-deadline-vs-noop",
        &format!(
            "finding: with 16 random readers in 128 MiB, deadline serves more IOPS than noop\n\
             profile: generic (sourced map-cache values: 36 entries, 1-page prefetch)\n\
             measured: deadline {d:.1}, noop {n:.1} IOPS\n\
             verdict: {}\n",
            shown(d > n)
        ),
    );
    assert_verdict(
        "seed-generic-rand16-ascending-faster",
        &format!(
            "finding: in deadline's log of the 16-reader run, requests above the previous one's address take less device time\n\
             profile: generic (sourced map-cache values: 36 entries, 1-page prefetch)\n\
             measured: ascending {:.1} µs ({nup} requests), descending {:.1} µs ({ndown}) mean device time\n\
             verdict: {}\n",
            mu / 1e3,
            md / 1e3,
            shown(mu < md)
        ),
    );
}
