//! The Nexus 5 against its own BIOTracer log (issue 31): the excerpt in
//! ../shared/traces replayed with `--phone nexus5` gives recorded and
//! simulated device-service medians side by side, foreground GC pauses
//! within the profile's stated bound, and the same report twice.

use crate::common::*;

const EXCERPT: &str = "nexus5-biotracer-excerpt.txt";

fn excerpt_report(test: &str, tmp: &std::path::Path, extra: &[&str]) -> Option<serde_json::Value> {
    let trace = shared_trace(test, EXCERPT)?;
    let t = trace.to_str().unwrap().to_string();
    // As written: the profile models the 32 GB part the log came from.
    let mut args = vec!["replay", t.as_str(), "--phone", "nexus5"];
    args.extend_from_slice(extra);
    Some(report(&args, tmp))
}

#[test]
fn the_excerpt_on_the_nexus5_compares_recorded_and_simulated_device_service() {
    let test = "nexus5 recorded vs simulated";
    let tmp = scratch("nexus5-rvs");
    let Some(r) = excerpt_report(test, &tmp, &[]) else {
        return;
    };
    assert_eq!(r["trace"]["format"], "biotracer");
    assert_eq!(r["requests"]["count"].as_u64(), Some(200));
    let rows = r["trace"]["recorded_vs_simulated"].as_array().unwrap();
    let classes: Vec<&str> = rows
        .iter()
        .map(|x| x["size_class"].as_str().unwrap())
        .collect();
    assert_eq!(
        classes,
        ["4KiB", "8-16KiB", "17-64KiB"],
        "every write class of the excerpt"
    );
    for row in rows {
        assert_eq!(row["direction"], "write");
        let rec = row["recorded_p50_us"].as_f64().unwrap();
        let sim = row["simulated_p50_us"].as_f64().unwrap();
        assert!(rec > 0.0 && sim > 0.0, "{row}");
    }
    let n: u64 = rows.iter().map(|x| x["requests"].as_u64().unwrap()).sum();
    assert_eq!(n, 200, "every record compared once");
}

#[test]
fn no_foreground_gc_pause_of_the_nexus5_passes_its_stated_bound() {
    let test = "nexus5 gc pause bound";
    let tmp = scratch("nexus5-gc");
    let Some(r) = excerpt_report(test, &tmp, &[]) else {
        return;
    };
    let gc = &r["device"]["gc"];
    let bound = gc["bound_us"].as_f64().expect("the profile states a bound");
    assert!(
        gc["pauses"].as_u64().unwrap() > 0,
        "steady state: GC runs: {gc}"
    );
    assert!(gc["pause_us"]["max"].as_f64().unwrap() <= bound, "{gc}");
    assert_eq!(gc["over_bound"].as_u64(), Some(0));
    assert_eq!(
        gc["emergencies"].as_u64(),
        Some(0),
        "incremental GC kept pace"
    );
    assert!(r["device"].get("warnings").is_none(), "{}", r["device"]);
}

#[test]
fn the_nexus5_replay_is_deterministic() {
    let test = "nexus5 determinism";
    let a = scratch("nexus5-det-a");
    let b = scratch("nexus5-det-b");
    let (Some(x), Some(y)) = (excerpt_report(test, &a, &[]), excerpt_report(test, &b, &[])) else {
        return;
    };
    assert_eq!(x["device"], y["device"]);
    assert_eq!(x["trace"], y["trace"]);
    assert_eq!(x["latency_us"], y["latency_us"]);
}

/// The write acknowledgement point moves write service: acknowledged once
/// programmed, a 4 KiB write waits for its page program.
#[test]
fn acknowledging_writes_once_programmed_lengthens_small_write_service() {
    let test = "nexus5 write_ack";
    let tmp = scratch("nexus5-ack");
    let Some(t) = excerpt_report(test, &tmp, &[]) else {
        return;
    };
    let Some(p) = excerpt_report(
        test,
        &tmp,
        &["--set", "device.write_buffer.write_ack=program"],
    ) else {
        return;
    };
    let p50 = |r: &serde_json::Value| {
        r["trace"]["recorded_vs_simulated"][0]["simulated_p50_us"]
            .as_f64()
            .unwrap()
    };
    assert!(
        p50(&p) > 5.0 * p50(&t),
        "program {} vs transfer {}",
        p50(&p),
        p50(&t)
    );
}

/// The log addresses sector 49,592,391 (23.6 GiB): the 32 GB part the
/// profile models holds it without any remapping; the 16 GB part (2 dies)
/// refuses it with a located error instead of wrapping it.
#[test]
fn the_excerpt_replays_as_written_on_the_32_gb_part() {
    let test = "nexus5 capacity";
    let tmp = scratch("nexus5-capacity");
    let Some(r) = excerpt_report(test, &tmp, &[]) else {
        return;
    };
    assert_eq!(r["trace"]["remapped"].as_u64(), Some(0), "{}", r["trace"]);
    assert!(r["trace"]["highest_sector"].as_u64().unwrap() > 49_592_391);
    let Some(trace) = shared_trace(test, EXCERPT) else {
        return;
    };
    let e = simctl_err(&[
        "replay",
        trace.to_str().unwrap(),
        "--phone",
        "nexus5",
        "--set",
        "device.nand.dies_per_channel=2",
    ]);
    assert!(e.contains("nexus5-biotracer-excerpt.txt:2"), "{e}");
    assert!(e.contains("sector 49592391") && e.contains("--fit"), "{e}");
}
