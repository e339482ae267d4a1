//! The host CPU and the latency split, end to end through `simctl`: the
//! split adds up for every kind of call, the host profiles load, and the
//! Galaxy S II-style sync-write app shows the governor and IPI mechanisms.

use crate::common;
use crate::common::{assert_verdict, report, scratch, shown};
use serde_json::Value;

const PARTS: [&str; 6] = [
    "platform",
    "syscall_fs",
    "block_queue",
    "driver",
    "device",
    "irq_wakeup",
];

/// The six parts add up to the exact mean (`total`), which matches the
/// histogram's mean within its precision.
fn assert_split_adds_up(r: &Value, what: &str) {
    let b = &r["breakdown_us"];
    let sum: f64 = PARTS.iter().map(|p| b[p].as_f64().unwrap()).sum();
    let total = b["total"].as_f64().unwrap();
    assert!((sum - total).abs() < 1e-6 * total.max(1.0), "{what}: {b}");
    let mean = r["latency_us"]["mean"].as_f64().unwrap();
    assert!(
        (total - mean).abs() <= 0.002 * mean,
        "{what}: split total {total} vs latency mean {mean}"
    );
    let dev = b["device"].as_f64().unwrap();
    let not_device = b["not_device"].as_f64().unwrap();
    assert!(
        (not_device + dev - total).abs() < 1e-6 * total.max(1.0),
        "{what}"
    );
    // The block layer's part is its CPU work plus the queue wait, and the
    // shares (host path, queue wait, driver, device, wake-up) add up to 1.
    let f = |k: &str| b[k].as_f64().unwrap();
    assert!(
        (f("block_submit") + f("queue_wait") - f("block_queue")).abs() < 1e-6 * total.max(1.0),
        "{what}: {b}"
    );
    let shares: f64 = ["host_path", "queue_wait", "driver", "device", "irq_wakeup"]
        .iter()
        .map(|k| b["shares"][k].as_f64().unwrap())
        .sum();
    if total > 0.0 {
        assert!((shares - 1.0).abs() < 1e-9, "{what}: {b}");
    }
}

#[test]
fn the_split_adds_up_for_every_kind_of_call() {
    let tmp = scratch("cpu-split");
    // Buffered reads with read-ahead.
    let r = report(&["run", "configs/scenarios/seq-read-4k.toml"], &tmp);
    assert_split_adds_up(&r, "buffered read with read-ahead");
    // Buffered writes, fsync, O_DIRECT + O_SYNC, partial-page writes and
    // sequential reads in one run.
    let r = report(
        &[
            "run",
            "crates/simctl/tests/golden/scenarios/writes-mix.toml",
        ],
        &tmp,
    );
    assert!(r["requests"]["fsyncs"].as_u64().unwrap() > 0);
    assert_split_adds_up(&r, "writes-mix (fsync, O_DIRECT, buffered)");
    // O_SYNC buffered writes + flush on a profile with a platform layer.
    let r = report(
        &[
            "run",
            "configs/scenarios/sync-write-app.toml",
            "--set",
            "jobs.0.requests=200",
        ],
        &tmp,
    );
    assert_split_adds_up(&r, "O_SYNC write + flush");
    assert!(r["breakdown_us"]["platform"].as_f64().unwrap() > 0.0);
    // O_DIRECT reads alone, and trace records.
    let r = report(
        &[
            "run",
            "configs/scenarios/rand-read-4k.toml",
            "--set",
            "jobs.0.direct=true",
        ],
        &tmp,
    );
    assert_split_adds_up(&r, "O_DIRECT read");
    let r = report(&["replay", "traces/sample.csv"], &tmp);
    assert_split_adds_up(&r, "trace records");
}

/// Runs the sync-write app at `bytes` per call with `hogs` background hogs.
fn sync_app(bytes: u64, hogs: u32) -> Value {
    let tmp = scratch(&format!("cpu-sync-{bytes}-{hogs}"));
    report(
        &[
            "run",
            "configs/scenarios/sync-write-app.toml",
            "--set",
            &format!("jobs.0.request_bytes={bytes}"),
            "--set",
            &format!("host.background_cpu_hogs={hogs}"),
            "--set",
            "jobs.0.requests=600",
        ],
        &tmp,
    )
}

fn f(v: &Value, path: &[&str]) -> f64 {
    path.iter().fold(v, |v, k| &v[k]).as_f64().unwrap()
}

#[test]
fn a_cpu_hog_raises_the_clock_and_sends_completions_across_cores() {
    let idle = sync_app(16384, 0);
    let hog = sync_app(16384, 1);
    assert_eq!(idle["host"]["governor"], "ondemand");
    // Mechanism 1: ondemand sees the hog's 100 % load and runs the shared
    // clock at the top; alone, the I/O-bound app leaves it at the bottom.
    assert_eq!(f(&idle, &["host", "cpu", "mean_freq_mhz"]), 200.0);
    assert_eq!(f(&hog, &["host", "cpu", "mean_freq_mhz"]), 1200.0);
    // Mechanism 2: the hog takes CPU0 (the IRQ core), the app goes to CPU1,
    // so every completion interrupt wakes mmcqd there with an IPI: the
    // write's and the flush's, and each CMD13 poll's after the write.
    assert_eq!(idle["host"]["cpu"]["ipis"], 0);
    let calls = hog["requests"]["count"].as_u64().unwrap();
    let polls = hog["device_response_us"]["status_polls"].as_u64().unwrap();
    assert_eq!(
        polls, calls,
        "one CMD13 finds the card ready after each write"
    );
    assert_eq!(
        hog["host"]["cpu"]["ipis"].as_u64().unwrap(),
        2 * calls + polls
    );
    assert_eq!(hog["host"]["cpu"]["cores"][0]["hogs"], 1);
    assert_eq!(hog["host"]["cpu"]["cores"][1]["threads"], 1);
    // The app's writes get faster; its host software time shrinks.
    let lat = |r: &Value| f(r, &["write", "latency_us", "mean"]);
    assert!(lat(&hog) < lat(&idle));
    assert!(f(&hog, &["breakdown_us", "not_device"]) < f(&idle, &["breakdown_us", "not_device"]));
}

#[test]
fn host_share_falls_as_the_write_grows_from_16_kib() {
    let s16 = f(&sync_app(16384, 0), &["breakdown_us", "not_device_share"]);
    let s64 = f(&sync_app(65536, 0), &["breakdown_us", "not_device_share"]);
    assert!(s64 < s16, "16 KiB {s16}, 64 KiB {s64}");
}

/// The Galaxy S II study's bands (issue 9), on the scenario's 2011-class
/// eMMC 4.41 (the Galaxy S II profile): host software ≥ 80 % of a 16 KiB
/// write's latency and falling with size, one hog cutting latency by
/// 10-25 % and raising the device response time (D→C) by 3-10 %. The
/// model follows the cited costs and kernel defaults; when written it gave
/// host software 83 / 68 / 27 % at 4 / 16 / 64 KiB (falling, as
/// published, but 68 % is not ≥ 80 %), latency -16 % (inside the band)
/// and D→C +34 %, not 3-10 %: at 1200 MHz the next write reaches the card
/// before its one-stripe-page power-protected buffer has drained the
/// previous program, so every write waits for it
/// (`device.write_buffer_stalls` 999 → 1999 of 2000), a larger effect than
/// the 1 µs + 5 µs IPI. The numbers as they stand are a committed verdict.
#[test]
fn galaxy_s2_bands_as_measured() {
    let shares: Vec<f64> = [4096, 16384, 65536]
        .iter()
        .map(|&b| f(&sync_app(b, 0), &["breakdown_us", "not_device_share"]))
        .collect();
    let (idle, hog) = (sync_app(16384, 0), sync_app(16384, 1));
    let lat = |r: &Value| f(r, &["write", "latency_us", "mean"]);
    let d2c = |r: &Value| f(r, &["device_response_us", "mean"]);
    let lat_change = lat(&hog) / lat(&idle) - 1.0;
    let d2c_change = d2c(&hog) / d2c(&idle) - 1.0;
    let bands = [
        shares[1] >= 0.80,
        shares[0] > shares[1] && shares[1] > shares[2],
        (-0.25..=-0.10).contains(&lat_change),
        (0.03..=0.10).contains(&d2c_change),
    ];
    assert_verdict(
        "cpu-galaxy-s2-bands",
        &format!(
            "finding: host software >= 80 % of a 16 KiB O_SYNC write and falling with size; one CPU hog cuts latency 10-25 % and raises D->C 3-10 %\n\
             measured: host share {:.1} / {:.1} / {:.1} % at 4 / 16 / 64 KiB; with a hog: latency {:+.1} %, D->C {:+.1} %\n\
             bands: share >= 80 % {}, falling {}, latency {}, D->C {}\n\
             verdict: {}\n",
            shares[0] * 100.0,
            shares[1] * 100.0,
            shares[2] * 100.0,
            lat_change * 100.0,
            d2c_change * 100.0,
            shown(bands[0]),
            shown(bands[1]),
            shown(bands[2]),
            shown(bands[3]),
            shown(bands.iter().all(|&b| b))
        ),
    );
}

#[test]
fn host_profiles_load_and_keys_override_them() {
    let tmp = scratch("cpu-profiles");
    let r = report(
        &[
            "run",
            "configs/scenarios/sync-write-app.toml",
            "--set",
            "jobs.0.requests=50",
            "--set",
            "host.profile=../hosts/snapdragon400.toml",
        ],
        &tmp,
    );
    assert_eq!(r["host"]["governor"], "interactive");
    assert_eq!(r["host"]["cores"], 4);
    assert_split_adds_up(&r, "snapdragon400");
    let r = report(
        &[
            "run",
            "configs/scenarios/sync-write-app.toml",
            "--set",
            "jobs.0.requests=50",
            "--set",
            "host.governor=userspace",
            "--set",
            "host.cpu_freq_mhz=800",
        ],
        &tmp,
    );
    assert_eq!(f(&r, &["host", "cpu", "mean_freq_mhz"]), 800.0);
    assert_eq!(r["host"]["cores"], 2, "the rest of the profile stays");
    let e = common::simctl_err(&[
        "run",
        "configs/scenarios/sync-write-app.toml",
        "--set",
        "host.governor=turbo",
    ]);
    assert!(e.contains("governor"), "{e}");
    let e = common::simctl_err(&[
        "run",
        "configs/scenarios/sync-write-app.toml",
        "--set",
        "jobs.3.request_bytes=1",
    ]);
    assert!(e.contains("1 job(s)"), "{e}");
}
