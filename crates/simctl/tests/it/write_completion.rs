//! The write completion point (issue 31 item 1): whether a write is
//! acknowledged before it is durable is the part's firmware parameter
//! `[write_buffer] write_ack` together with the host's CACHE_CTRL
//! (`enabled`). Both routes to "acknowledged once durable" — the firmware
//! programming before it releases busy, or the kernel leaving the cache
//! off — give the same service, slower than acknowledging from the cache
//! in every size class the excerpt has. Tests that need ../shared skip
//! with the reason, as the other ../shared tests do.

use crate::common::*;
use serde_json::Value;

const EXCERPT: &str = "nexus5-biotracer-excerpt.txt";

fn excerpt(test: &str, tmp: &std::path::Path, set: &[&str]) -> Option<Value> {
    let trace = shared_trace(test, EXCERPT)?;
    let t = trace.to_str().unwrap().to_string();
    let mut args = vec!["replay", &t, "--phone", "nexus5"];
    for s in set {
        args.extend(["--set", s]);
    }
    Some(report(&args, tmp))
}

/// `(direction, size class, recorded p50, simulated p50)` per row.
fn rows(r: &Value) -> Vec<(String, String, f64, f64)> {
    r["trace"]["recorded_vs_simulated"]
        .as_array()
        .expect("recorded and simulated medians side by side")
        .iter()
        .map(|x| {
            (
                x["direction"].as_str().unwrap().to_string(),
                x["size_class"].as_str().unwrap().to_string(),
                x["recorded_p50_us"].as_f64().unwrap(),
                x["simulated_p50_us"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_cache_left_off_and_firmware_acking_at_program_complete_writes_alike_and_later() {
    let test = "write completion point";
    let tmp = scratch("write-completion");
    let Some(cached) = excerpt(test, &tmp, &[]) else {
        return;
    };
    let program = excerpt(test, &tmp, &["device.write_buffer.write_ack=program"]).unwrap();
    let off = excerpt(test, &tmp, &["device.write_buffer.enabled=false"]).unwrap();
    let (c, p, o) = (rows(&cached), rows(&program), rows(&off));
    assert!(!c.is_empty());
    assert_eq!(c.len(), p.len());
    assert_eq!(p, o, "cache off = acknowledged once programmed");
    for (a, b) in c.iter().zip(&p) {
        assert_eq!(
            (&a.0, &a.1, a.2),
            (&b.0, &b.1, b.2),
            "same classes, same log"
        );
        assert!(
            b.3 > a.3,
            "{} {}: durable ack {} µs vs cached ack {} µs",
            a.0,
            a.1,
            b.3,
            a.3
        );
    }
    // The shipped profile keeps the defaults (cache on, acknowledged from
    // the cache), which the report leaves out of its echo.
    let wb = &cached["device_profile"]["write_buffer"];
    assert!(wb.get("enabled").is_none(), "{wb}");
    assert!(wb.get("write_ack").is_none(), "{wb}");
    assert_eq!(off["device_profile"]["write_buffer"]["enabled"], false);
    assert_eq!(
        program["device_profile"]["write_buffer"]["write_ack"],
        "program"
    );
}

#[test]
fn an_unknown_write_ack_is_a_located_error() {
    let e = simctl_err(&[
        "run",
        "configs/scenarios/sync-write-app.toml",
        "--phone",
        "nexus5",
        "--set",
        "device.write_buffer.write_ack=durable",
    ]);
    assert!(e.contains("write_ack"), "{e}");
    assert!(e.contains("transfer") && e.contains("program"), "{e}");
}
