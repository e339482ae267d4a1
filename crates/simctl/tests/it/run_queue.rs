//! CPU contention, idle exit and JNI crossings, end to end through
//! `simctl`: CPU-bound threads share a core's run queue (16 threads on one
//! core take about 16 times as long as one, on four cores about 4 times),
//! work arriving on an idle core pays the cpuidle exit latency, the
//! platform layer is paid once per SQLite statement, and bad idle tables
//! are located errors.

use crate::common::*;
use serde_json::Value;

const CPU_BOUND: &str = "configs/scenarios/cpu-bound-writes.toml";

/// The CPU-bound scenario with `threads` threads on `cores` cores, plus
/// `sets`.
fn cpu_bound(threads: u32, cores: u32, sets: &[&str]) -> Value {
    let tmp = scratch(&format!("rq-{threads}-{cores}-{}", sets.len()));
    let t = format!("jobs.0.threads={threads}");
    let c = format!("host.cores={cores}");
    let mut args = vec!["run", CPU_BOUND, "--set", &t, "--set", &c];
    for s in sets {
        args.extend(["--set", s]);
    }
    report(&args, &tmp)
}

fn secs(r: &Value) -> f64 {
    r["simulated_time_s"].as_f64().unwrap()
}

fn cpu<'a>(r: &'a Value, key: &str) -> &'a Value {
    &r["host"]["cpu"][key]
}

#[test]
fn sixteen_cpu_bound_threads_take_sixteen_times_as_long_on_one_core_and_four_on_four() {
    let one = cpu_bound(1, 1, &[]);
    let sixteen = cpu_bound(16, 1, &[]);
    let on_four = cpu_bound(16, 4, &[]);
    let ratio = secs(&sixteen) / secs(&one);
    let ratio4 = secs(&on_four) / secs(&one);
    println!(
        "1 thread {:.4} s, 16 on 1 core {:.4} s ({ratio:.2}x), 16 on 4 cores {:.4} s ({ratio4:.2}x)",
        secs(&one),
        secs(&sixteen),
        secs(&on_four)
    );
    assert!((ratio / 16.0 - 1.0).abs() <= 0.10, "16 on 1 core: {ratio}x");
    assert!(
        (ratio4 / 4.0 - 1.0).abs() <= 0.10,
        "16 on 4 cores: {ratio4}x"
    );
    // Alone, a thread never waits; sixteen wait for each other, about 15
    // bursts' worth on one core and 3 on four.
    assert_eq!(cpu(&one, "run_queue_wait_us")["mean"], 0.0);
    let wait1 = cpu(&sixteen, "run_queue_wait_us")["mean"].as_f64().unwrap();
    let wait4 = cpu(&on_four, "run_queue_wait_us")["mean"].as_f64().unwrap();
    assert!(wait1 > 0.0 && wait4 > 0.0, "{wait1} {wait4}");
    assert!(
        (wait1 / wait4 / 5.0 - 1.0).abs() < 0.1,
        "{wait1} vs {wait4}"
    );
    // Placement spreads the sixteen four to a core, and the fair turns
    // keep their throughput equal.
    let threads: Vec<u64> = cpu(&on_four, "cores")
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [4, 4, 4, 4]);
    let jain = sixteen["fairness"]["jain"].as_f64().unwrap();
    assert!(jain > 0.99, "Jain's index over the threads' IOPS: {jain}");
}

#[test]
fn a_wake_up_on_an_idle_core_pays_the_exit_latency() {
    // One thread sleeping 500 µs between its calls: each call after the
    // first wakes an idle core from a 10 µs state.
    let states =
        r#"host.cpuidle_states=[{name="WFI",exit_latency_us=10.0,target_residency_us=1.0}]"#;
    let plain = cpu_bound(1, 1, &["jobs.0.think_time_us=500"]);
    let idle = cpu_bound(1, 1, &["jobs.0.think_time_us=500", states]);
    assert_eq!(cpu(&plain, "idle_exits"), 0);
    let exits = cpu(&idle, "idle_exits").as_u64().unwrap();
    assert_eq!(exits, 999, "every call but the first");
    assert_eq!(cpu(&idle, "idle_exit_us_total").as_f64().unwrap(), 9990.0);
    let longer = (secs(&idle) - secs(&plain)) * 1e6;
    assert!((longer - 9990.0).abs() < 1.0, "{longer} µs longer");
    // Back-to-back calls never let the core idle.
    let busy = cpu_bound(1, 1, &[states]);
    assert_eq!(cpu(&busy, "idle_exits"), 0);
}

#[test]
fn the_platform_layer_is_paid_once_per_sqlite_statement() {
    let tmp = scratch("rq-jni");
    let sc = tmp.join("scenario.toml");
    std::fs::write(
        &sc,
        r#"name = "jni"
seed = 3
[device]
profile = "../../../configs/devices/generic-emmc.toml"
[host]
profile = "../../../configs/hosts/snapdragon400.toml"
governor = "performance"
[fs]
type = "ext4"
atime = "noatime"
partition_size_mib = 1024
[[sqlite_jobs]]
name = "contacts"
op = "insert"
transactions = 200
"#,
    )
    .unwrap();
    let r = report(&["run", sc.to_str().unwrap()], &tmp);
    let calls = r["requests"]["count"].as_f64().unwrap();
    let platform_total = r["breakdown_us"]["platform"].as_f64().unwrap() * calls;
    // CREATE TABLE and 200 INSERTs, 20 µs at 1200 MHz each, run at the
    // table's top of 1190.4 MHz; the ~30 VFS calls of each pay nothing.
    let statements = 201.0;
    let per_statement = platform_total / statements;
    let want = 20.0 * 1200.0 / 1190.4;
    assert!(
        (per_statement - want).abs() < 0.01,
        "{per_statement} µs of platform layer per statement"
    );
    assert!(calls / statements > 20.0, "{calls} calls");
}

#[test]
fn same_inputs_give_byte_identical_reports() {
    let tmp = scratch("rq-determinism");
    let run = |name: &str| {
        let out = tmp.join(name);
        simctl_ok(&[
            "run",
            CPU_BOUND,
            "--set",
            "jobs.0.threads=16",
            "--set",
            "host.cores=2",
            "--set",
            r#"host.cpuidle_states=[{name="WFI",exit_latency_us=1.0,target_residency_us=1.0},{name="PC",exit_latency_us=95.0,target_residency_us=130.0}]"#,
            "--set",
            "jobs.0.think_time_us=200",
            "--json",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        std::fs::read(out).unwrap()
    };
    assert_eq!(run("a.json"), run("b.json"));
}

#[test]
fn bad_idle_tables_are_located_errors() {
    for (value, want) in [
        (
            r#"[{name="WFI",exit_latency_us=-1.0,target_residency_us=1.0}]"#,
            "host.cpuidle_states[0].exit_latency_us = -1: expected a number of µs",
        ),
        (
            r#"[{name="WFI",exit_latency_us=1.0,target_residency_us=100.0},{name="PC",exit_latency_us=95.0,target_residency_us=50.0}]"#,
            "host.cpuidle_states[1]: \"PC\" (exit",
        ),
        (
            r#"[{name="",exit_latency_us=1.0,target_residency_us=1.0}]"#,
            "host.cpuidle_states[0].name is empty",
        ),
        (
            r#"[{name="WFI",exit_latency=1.0,target_residency_us=1.0}]"#,
            "exit_latency",
        ),
    ] {
        let set = format!("host.cpuidle_states={value}");
        let err = simctl_err(&["run", CPU_BOUND, "--set", &set]);
        assert!(err.contains(want), "{value}: {err}");
        assert!(err.contains("cpu-bound-writes.toml"), "{err}");
    }
}
