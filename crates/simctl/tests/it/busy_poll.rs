//! The legacy driver's CMD13 busy polling after writes (Linux 3.x
//! `mmc_blk_err_check`), seen through `simctl run ... --json -`: the
//! device time splits into the data command and the busy polling
//! (`breakdown_us.device_data_cmd + device_busy_poll = device`), writes
//! are polled and reads are not, a card busy programming is polled until
//! it is ready, and the command-queue driver never polls.

use crate::common::*;

/// 200 synchronous direct 4 KiB random writes (or reads) on the generic
/// eMMC profile with the legacy driver.
fn scenario(op: &str) -> String {
    format!(
        r#"
name = "busy-poll-{op}"
seed = 1
[[files]]
name = "f"
size_mib = 64
[[jobs]]
name = "{op}r"
file = "f"
op = "{op}"
pattern = "random"
request_bytes = 4096
direct = true
sync = true
requests = 200
"#
    )
}

/// Runs `op`'s scenario with `extra` arguments through `--json -`.
fn run(test: &str, op: &str, extra: &[&str]) -> serde_json::Value {
    let dir = scratch(test);
    let path = dir.join(format!("{op}.toml"));
    std::fs::write(&path, scenario(op)).unwrap();
    let p = path.to_str().unwrap();
    let mut args = vec!["run", p];
    args.extend_from_slice(extra);
    args.extend(["--json", "-"]);
    serde_json::from_str(&simctl_ok(&args)).expect("JSON on stdout")
}

fn num(r: &serde_json::Value, path: &str) -> f64 {
    path.split('.')
        .fold(r, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

/// The two parts add up to the device time (both are means of integer
/// nanoseconds, rounded once each).
fn assert_parts_add_up(r: &serde_json::Value) {
    let device = num(r, "breakdown_us.device");
    let sum = num(r, "breakdown_us.device_data_cmd") + num(r, "breakdown_us.device_busy_poll");
    assert!(
        (sum - device).abs() <= 1e-6 * device.max(1.0),
        "data command + busy poll = {sum} µs, device = {device} µs"
    );
}

#[test]
fn writes_on_the_legacy_driver_are_polled_and_reads_are_not() {
    let w = run("busy-poll-writes", "write", &[]);
    assert_parts_add_up(&w);
    let writes = num(&w, "requests.writes");
    assert_eq!(writes, 200.0);
    assert!(num(&w, "breakdown_us.device_busy_poll") > 0.0);
    assert!(num(&w, "device_response_us.busy_poll") > 0.0);
    // The cache takes the data at once: one CMD13 finds the card ready
    // after every write (3.x polls at least once).
    assert_eq!(num(&w, "device_response_us.status_polls"), writes);

    let r = run("busy-poll-reads", "read", &[]);
    assert_parts_add_up(&r);
    assert_eq!(num(&r, "requests.reads"), 200.0);
    assert_eq!(num(&r, "breakdown_us.device_busy_poll"), 0.0);
    assert_eq!(num(&r, "device_response_us.busy_poll"), 0.0);
    assert_eq!(num(&r, "device_response_us.status_polls"), 0.0);
    assert_eq!(
        num(&r, "breakdown_us.device_data_cmd"),
        num(&r, "breakdown_us.device")
    );
}

#[test]
fn a_card_busy_programming_is_polled_until_ready_unless_the_host_waits() {
    // Cache off: every write is programmed before the card leaves PRG.
    let off = ["--set", "device.write_buffer.enabled=false"];
    let polled = run("busy-poll-cache-off", "write", &off);
    assert_parts_add_up(&polled);
    let writes = num(&polled, "requests.writes");
    let polls = num(&polled, "device_response_us.status_polls");
    assert!(
        polls > 5.0 * writes,
        "a NAND program takes many CMD13 round trips: {polls} polls for {writes} writes"
    );
    let (data, busy) = (
        num(&polled, "breakdown_us.device_data_cmd"),
        num(&polled, "breakdown_us.device_busy_poll"),
    );
    assert!(
        busy > data,
        "the program shows as busy polling ({busy} µs), not as the data command ({data} µs)"
    );

    // A host whose interrupt waits for the busy: the program is in the
    // data command and one CMD13 follows.
    let mut waits = off.to_vec();
    waits.extend(["--set", "driver.wait_while_busy=true"]);
    let waited = run("busy-poll-cache-off-wait", "write", &waits);
    assert_parts_add_up(&waited);
    assert_eq!(num(&waited, "device_response_us.status_polls"), writes);
    assert!(num(&waited, "breakdown_us.device_data_cmd") > busy);
    assert!(num(&waited, "breakdown_us.device_busy_poll") < data);
    assert_eq!(
        waited["driver"]["wait_while_busy"],
        serde_json::json!(true),
        "the setting is echoed"
    );
}

#[test]
fn the_command_queue_driver_never_polls() {
    let cmdq = root().join("configs/devices/generic-emmc51-cmdq.toml");
    let w = run(
        "busy-poll-cmdq",
        "write",
        &["--device", cmdq.to_str().unwrap()],
    );
    assert_parts_add_up(&w);
    assert_eq!(num(&w, "breakdown_us.device_busy_poll"), 0.0);
    assert_eq!(num(&w, "device_response_us.status_polls"), 0.0);
}

#[test]
fn the_split_is_deterministic() {
    let off = ["--set", "device.write_buffer.enabled=false"];
    let a = run("busy-poll-det-a", "write", &off);
    let b = run("busy-poll-det-b", "write", &off);
    assert_eq!(a["breakdown_us"], b["breakdown_us"]);
    assert_eq!(a["device_response_us"], b["device_response_us"]);
}
