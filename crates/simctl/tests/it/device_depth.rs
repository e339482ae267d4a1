//! End-to-end through the real `simctl` binary: eMMC internals of the
//! 2010–2014 era — the hybrid (FAST log-block) mapping's random-write
//! collapse on a full device, with its merges in the report.

use crate::common::*;
use std::path::{Path, PathBuf};

/// One direct-I/O writer on a 256 MiB file of a device preconditioned to
/// 90 % full and GC steady state.
fn writer(dir: &Path, pattern: &str, request_bytes: u32, requests: u32) -> String {
    writer_on(dir, pattern, request_bytes, requests, 256)
}

/// One direct-I/O writer on a `file_mib` file of a device preconditioned
/// to 90 % full and GC steady state.
fn writer_on(
    dir: &Path,
    pattern: &str,
    request_bytes: u32,
    requests: u32,
    file_mib: u32,
) -> String {
    let profile = root().join("configs/devices/generic-emmc.toml");
    let text = format!(
        r#"name = "depth-{pattern}"
seed = 3
[device]
profile = "{}"
[precondition]
fill_fraction = 0.9
[[files]]
name = "f"
size_mib = {file_mib}
[[jobs]]
name = "w"
file = "f"
op = "write"
pattern = "{pattern}"
request_bytes = {request_bytes}
direct = true
requests = {requests}
"#,
        profile.display()
    );
    let path = dir.join(format!("{pattern}-{file_mib}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The generic profile with the hybrid mapping, shrunk to 256 superblocks
/// (2 GiB raw; 8 MiB logical blocks) so preconditioning stays quick.
const HYBRID: [&str; 4] = [
    "--set",
    "device.ftl.mapping=hybrid",
    "--set",
    "device.nand.blocks_per_plane=256",
];

fn run(dir: &Path, scenario: &str) -> serde_json::Value {
    let mut a = vec!["run", scenario];
    a.extend(HYBRID);
    report(&a, dir)
}

/// Runs `scenario` on the 2 GiB array (256 blocks per plane) without and
/// then with the feature switch `set` (`KEY=true`): `(off, on)` reports.
fn off_and_on(dir: &Path, scenario: &str, set: &str) -> (serde_json::Value, serde_json::Value) {
    let mut a = vec!["run", scenario, "--set", "device.nand.blocks_per_plane=256"];
    let off = report(&a, dir);
    a.extend(["--set", set]);
    (off, report(&a, dir))
}

/// Sequential 64 KiB writes are switch-merged a logical block at a time;
/// random 4 KiB writes over most of the full device (a 1.5 GiB file, 192
/// logical blocks of 8 MiB) fill the 7 random log blocks, and a reclaimed
/// log block costs a full merge (8 MiB copied) of every logical block it
/// holds pages of — all 192, which also empties the other log blocks of
/// their pages — so the WAF is about 1 + 192 merged blocks per 7 log blocks
/// written = 28: the random-write collapse of 2012-era managed flash
/// (emmc-parameters.md §3, §5 "0.2–1 MB/s" random against "8–20 MB/s"
/// sequential writes for a Nexus 7 2012-like part).
#[test]
fn hybrid_mapping_collapses_on_random_writes_and_reports_its_merges() {
    let tmp = scratch("device-depth-hybrid");
    let seq = run(&tmp, &writer(&tmp, "sequential", 65536, 2000));
    let rnd = run(&tmp, &writer_on(&tmp, "random", 4096, 30000, 1536));
    let mb = |r: &serde_json::Value| r["write"]["mb_per_s"].as_f64().unwrap();
    let merges = |r: &serde_json::Value, k: &str| r["device"]["merges"][k].as_u64().unwrap();
    let (s, r) = (mb(&seq), mb(&rnd));
    eprintln!(
        "hybrid: sequential 64 KiB {s:.2} MB/s (switch merges {}), random 4 KiB {r:.3} MB/s (full merges {}, WAF {:.2})",
        merges(&seq, "switch"),
        merges(&rnd, "full"),
        rnd["device"]["waf"]
    );
    assert!(s >= 10.0 * r, "sequential {s} MB/s vs random {r} MB/s");
    assert!(merges(&seq, "switch") > 0 && merges(&seq, "full") == 0);
    assert!(merges(&rnd, "full") > 0);
    let waf = rnd["device"]["waf"].as_f64().unwrap();
    assert!((20.0..35.0).contains(&waf), "WAF {waf}, about 28 expected");
    assert_eq!(rnd["precondition"]["steady_reached"], true);
}

/// A hybrid FTL's state renews itself every time its random log pool has
/// been reclaimed and refilled, so preconditioning measures its WAF over
/// windows of the pool (7 random log blocks × 2,048 slots = 14,336 LPNs)
/// rather than of 1/16 of the filled range: it settles within a few pool
/// cycles, at the collapse's WAF, instead of overwriting a quarter of the
/// device through full merges.
#[test]
fn hybrid_preconditioning_settles_over_windows_of_its_random_log_pool() {
    let tmp = scratch("device-depth-hybrid-precondition");
    let r = run(&tmp, &writer(&tmp, "random", 4096, 100));
    let p = &r["precondition"];
    let pool = 7 * 2048;
    let overwritten = p["pages_overwritten"].as_u64().unwrap();
    eprintln!("hybrid precondition: {p}");
    assert_eq!(p["steady_reached"], true);
    assert_eq!(overwritten % pool, 0, "whole windows of the pool");
    assert!(
        (3 * pool..=8 * pool).contains(&overwritten),
        "{overwritten} overwrites: 3-8 pool windows expected"
    );
    assert!(
        p["final_waf"].as_f64().unwrap() > 5.0,
        "full merges dominate"
    );
}

/// A direct sequential writer of `request_kib` requests (200 MiB in all)
/// and a direct random 4 KiB reader (one read every 5 ms) on one 256 MiB
/// file.
fn writer_and_reader(dir: &Path, request_kib: u32) -> String {
    let profile = root().join("configs/devices/generic-emmc.toml");
    let text = format!(
        r#"name = "depth-hpi"
seed = 5
[device]
profile = "{}"
[precondition]
fill_fraction = 0.5
steady_state = false
[[files]]
name = "f"
size_mib = 256
[[jobs]]
name = "w"
file = "f"
op = "write"
pattern = "sequential"
request_bytes = {}
direct = true
requests = {}
[[jobs]]
name = "r"
file = "f"
op = "read"
pattern = "random"
request_bytes = 4096
direct = true
requests = 300
think_time_us = 5000
"#,
        profile.display(),
        request_kib * 1024,
        200 * 1024 / request_kib,
    );
    let path = dir.join(format!("hpi-{request_kib}.toml"));
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Read latency without and with HPI under a writer of `request_kib`
/// requests: `(mean_off, mean_on)` in µs.
fn hpi_read_latency(request_kib: u32) -> (f64, f64) {
    let tmp = scratch(&format!("device-depth-hpi-{request_kib}"));
    let scenario = writer_and_reader(&tmp, request_kib);
    let (off, on) = off_and_on(&tmp, &scenario, "device.features.hpi=true");
    let lat = |r: &serde_json::Value, k: &str| r["read"]["latency_us"][k].as_f64().unwrap();
    eprintln!(
        "read latency under {request_kib} KiB writes: no HPI mean {:.0} µs p99 {:.0} µs; HPI mean {:.0} µs p99 {:.0} µs ({} HPIs); write MB/s {:.2} vs {:.2}",
        lat(&off, "mean"),
        lat(&off, "p99"),
        lat(&on, "mean"),
        lat(&on, "p99"),
        on["device"]["hpi_interrupts"],
        off["write"]["mb_per_s"].as_f64().unwrap(),
        on["write"]["mb_per_s"].as_f64().unwrap(),
    );
    assert!(off["device"].get("hpi_interrupts").is_none());
    assert!(off["device_profile"].get("features").is_none());
    assert!(on["device"]["hpi_interrupts"].as_u64().unwrap() > 0);
    (lat(&off, "mean"), lat(&on, "mean"))
}

/// HPI (eMMC 4.41): a read arriving while the card programs the write
/// buffer interrupts the programs at the NAND operation in flight, so a
/// read between 64 KiB writes waits for the write command on the bus and
/// one NAND program instead of the buffer's drain.
#[test]
fn hpi_lowers_read_latency_between_64k_writes() {
    let (off, on) = hpi_read_latency(64);
    assert!(on < 0.7 * off, "HPI {on} µs vs {off} µs");
}

/// The writer-and-reader scenario with 512 KiB writes and the reader in
/// the RT class, under ROW with read idling off (`rd_idle_data_freq` 0:
/// otherwise reads 5 ms apart keep ROW idling and starve the writer, and
/// no write is on the bus when a read comes): every read enters an empty
/// HIGH_READ after a write was served, so ROW marks it urgent.
fn urgent_reads_under_512k_writes(dir: &Path) -> String {
    let path = writer_and_reader(dir, 512);
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace(
        "think_time_us = 5000\n",
        "think_time_us = 5000\nioprio_class = \"rt\"\n",
    );
    assert!(text.contains("ioprio_class"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `scenario` under ROW (no read idling) on the 2 GiB array with the
/// extra `--set`s `sets` and then the extra arguments `flags`.
fn row_run(dir: &Path, scenario: &str, sets: &[&str], flags: &[&str]) -> serde_json::Value {
    let mut a = vec![
        "run",
        scenario,
        "--scheduler",
        "row",
        "--set",
        "iosched.rd_idle_data_freq=0",
        "--set",
        "device.nand.blocks_per_plane=256",
    ];
    for s in sets {
        a.extend(["--set", s]);
    }
    a.extend(flags);
    report(&a, dir)
}

/// HPI of a write on the bus (msm-3.4 urgent-request flow): with 512 KiB
/// writes a read waits in the legacy driver behind the write command itself
/// (≈ 20 ms, stalled on write-buffer space), which the read-path HPI cannot
/// shorten. ROW marks the read urgent, the block layer notifies the driver,
/// and `mmcqd` stops the write (host stop, CMD12, HPI), re-inserts it whole
/// and serves the read. Measured: mean 22.0 ms without HPI, 21.5 ms with
/// HPI but a host that cannot stop a transfer, 1.7 ms with the stop (every
/// one of the 300 reads stopped a write).
#[test]
fn hpi_lowers_read_latency_under_512k_writes() {
    let tmp = scratch("device-depth-hpi-stop");
    let scenario = urgent_reads_under_512k_writes(&tmp);
    let off = row_run(&tmp, &scenario, &[], &[]);
    let no_stop = row_run(
        &tmp,
        &scenario,
        &["device.features.hpi=true", "driver.stop_request=false"],
        &[],
    );
    let on = row_run(&tmp, &scenario, &["device.features.hpi=true"], &[]);
    let lat = |r: &serde_json::Value| r["read"]["latency_us"]["mean"].as_f64().unwrap();
    let stops = |r: &serde_json::Value| r["device"]["hpi_stopped_writes"].as_u64().unwrap();
    eprintln!(
        "read mean under 512 KiB writes (ROW, RT reader): no HPI {:.0} µs, HPI without stop {:.0} µs, HPI with stop {:.0} µs ({} writes stopped, {} bytes re-sent); write MB/s {:.2} / {:.2} / {:.2}",
        lat(&off),
        lat(&no_stop),
        lat(&on),
        stops(&on),
        on["device"]["hpi_stopped_write_bytes"],
        off["write"]["mb_per_s"].as_f64().unwrap(),
        no_stop["write"]["mb_per_s"].as_f64().unwrap(),
        on["write"]["mb_per_s"].as_f64().unwrap(),
    );
    assert!(off["device"].get("hpi_stopped_writes").is_none());
    assert_eq!(stops(&no_stop), 0, "a host without stop_request waits");
    assert!(
        lat(&no_stop) > 0.8 * lat(&off),
        "the read-path HPI alone does not help"
    );
    assert!(stops(&on) > 0);
    assert!(
        lat(&on) < 0.2 * lat(&off),
        "stop {} µs vs {} µs",
        lat(&on),
        lat(&off)
    );
}

/// A stopped write is re-inserted whole (msm-3.4 `mmc_blk_reinsert_req`
/// for a request that is not packed), so the sectors the card had
/// accepted before the stop are sent again: every byte the application
/// wrote reaches the card, the newest data of every page reads back
/// (`--check-integrity`), and the card receives exactly the application's
/// bytes plus the accepted prefixes of the stopped writes.
#[test]
fn a_stopped_write_is_written_whole_in_the_end() {
    let tmp = scratch("device-depth-hpi-stop-integrity");
    let scenario = urgent_reads_under_512k_writes(&tmp);
    let r = row_run(
        &tmp,
        &scenario,
        &["device.features.hpi=true"],
        &["--check-integrity"],
    );
    assert_eq!(r["integrity"]["violations"], 0, "{}", r["integrity"]);
    let app_bytes = 200u64 << 20;
    assert_eq!(r["write"]["count"], 400);
    let stopped = r["device"]["hpi_stopped_writes"].as_u64().unwrap();
    let resent = r["device"]["hpi_stopped_write_bytes"].as_u64().unwrap();
    let host = r["device"]["host_slots_written"].as_u64().unwrap() * 4096;
    eprintln!("{stopped} writes stopped; card received {host} bytes for {app_bytes} written");
    assert!(stopped > 0 && resent > 0);
    assert_eq!(host, app_bytes + resent);
}

/// Only a scheduler that marks requests urgent (ROW) makes the driver stop
/// a write: under noop and deadline nothing is stopped, and running writes
/// one transfer at a time (as a host that may stop them does) changes no
/// result against the one-shot path of a host that cannot stop.
#[test]
fn without_urgent_requests_nothing_is_stopped_and_nothing_changes() {
    let tmp = scratch("device-depth-hpi-no-urgent");
    let scenario = writer_and_reader(&tmp, 512);
    for sched in ["noop", "deadline"] {
        let run = |stop: &str| {
            report(
                &[
                    "run",
                    &scenario,
                    "--scheduler",
                    sched,
                    "--set",
                    "device.nand.blocks_per_plane=256",
                    "--set",
                    "device.features.hpi=true",
                    "--set",
                    stop,
                ],
                &tmp,
            )
        };
        let may_stop = run("driver.stop_request=true");
        let cannot = run("driver.stop_request=false");
        assert_eq!(may_stop["device"]["hpi_stopped_writes"], 0, "{sched}");
        for k in ["read", "write", "device"] {
            assert_eq!(may_stop[k], cannot[k], "{sched}: {k}");
        }
    }
}

/// Random 256 KiB direct writes on a generic device filled to 90 %, with
/// `think_us` of idle time after each (the gaps BKOPS works in), written
/// as scenario `file` in `tmp`.
fn bkops_scenario(tmp: &Path, file: &str, think_us: u64) -> PathBuf {
    let profile = root().join("configs/devices/generic-emmc.toml");
    let text = format!(
        r#"name = "depth-bkops"
seed = 3
[device]
profile = "{}"
[precondition]
fill_fraction = 0.9
[[files]]
name = "f"
size_mib = 256
[[jobs]]
name = "w"
file = "f"
op = "write"
pattern = "random"
request_bytes = 262144
direct = true
requests = 300
think_time_us = {think_us}
"#,
        profile.display()
    );
    let path = tmp.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

/// BKOPS (eMMC 4.41) through the legacy driver: random 256 KiB direct
/// writes on a full device with 400 ms of think time after each; the
/// driver's idle check (200 ms) starts BKOPS in every gap, so GC victims
/// move from the foreground into the gaps.
#[test]
fn bkops_in_idle_gaps_lowers_foreground_gc_through_the_driver() {
    let tmp = scratch("device-depth-bkops");
    let path = bkops_scenario(&tmp, "bkops.toml", 400_000);
    let (off, on) = off_and_on(&tmp, path.to_str().unwrap(), "device.gc.background=true");
    let gc = |r: &serde_json::Value| r["device"]["gc_runs"].as_u64().unwrap();
    let bg = on["device"]["bkops_gc_runs"].as_u64().unwrap();
    let lat = |r: &serde_json::Value| r["write"]["latency_us"]["p99"].as_f64().unwrap();
    eprintln!(
        "foreground GC victims: no BKOPS {}, BKOPS {} ({} BKOPS, {bg} background victims); write p99 {:.0} vs {:.0} µs",
        gc(&off),
        gc(&on) - bg,
        on["device"]["bkops_runs"],
        lat(&off),
        lat(&on)
    );
    assert!(off["device"].get("bkops_runs").is_none());
    assert!(on["device"]["bkops_runs"].as_u64().unwrap() > 0 && bg > 0);
    assert!(gc(&on) - bg < gc(&off) / 2);
}

/// BKOPS on the log-block (FAST) and demand-cached (DFTL) mappings: the
/// same random 256 KiB direct writes with 2 s of think time after each
/// (a full-merge step of 8 MiB fits the gap). DFTL collects victims as the
/// page mapping does (its default target); the hybrid FTL reclaims its
/// random log blocks a full merge per step once the free pool — spare
/// superblocks (here 256 − 238 = 18) neither reserved for the sequential
/// log block nor holding a random one — falls below a target of 22 blocks
/// per die = 2 planes × (18 − 1 sequential − 6 random log blocks). Foreground reclaim (GC victims or merges not run by
/// BKOPS) drops to under half; the hybrid write that had to wait for a
/// whole log block's merges no longer does.
#[test]
fn bkops_in_idle_gaps_lowers_foreground_merges_and_gc_on_hybrid_and_dftl() {
    let tmp = scratch("device-depth-bkops-hybrid-dftl");
    let path = bkops_scenario(&tmp, "bkops-ftl.toml", 2_000_000);
    let scenario = path.to_str().unwrap();
    for (mapping, bkops) in [
        (
            "hybrid",
            &[
                "device.gc.background=true",
                "device.gc.bkops_target_free_blocks_per_die=22",
            ][..],
        ),
        ("dftl", &["device.gc.background=true"][..]),
    ] {
        let set = format!("device.ftl.mapping=\"{mapping}\"");
        let mut a = vec![
            "run",
            scenario,
            "--set",
            "device.nand.blocks_per_plane=256",
            "--set",
            &set,
        ];
        let off = report(&a, &tmp);
        for k in bkops {
            a.extend(["--set", k]);
        }
        let on = report(&a, &tmp);
        let gc = |r: &serde_json::Value| r["device"]["gc_runs"].as_u64().unwrap();
        let bg = on["device"]["bkops_gc_runs"].as_u64().unwrap();
        let max = |r: &serde_json::Value| r["write"]["latency_us"]["max"].as_f64().unwrap();
        eprintln!(
            "{mapping}: foreground reclaim: no BKOPS {}, BKOPS {} ({} BKOPS, {bg} background steps); merges {} vs {}; write max {:.0} vs {:.0} µs",
            gc(&off),
            gc(&on) - bg,
            on["device"]["bkops_runs"],
            off["device"]["merges"],
            on["device"]["merges"],
            max(&off),
            max(&on)
        );
        assert!(off["device"].get("bkops_runs").is_none());
        assert!(
            on["device"]["bkops_runs"].as_u64().unwrap() > 0 && bg > 0,
            "{mapping}"
        );
        assert!(gc(&on) - bg < gc(&off) / 2, "{mapping}");
        if mapping == "hybrid" {
            let full = |r: &serde_json::Value| r["device"]["merges"]["full"].as_u64().unwrap();
            assert!(full(&off) > 0, "random writes force full merges");
            assert!(
                max(&on) < max(&off) / 10.0,
                "no write waits for a log block's merges"
            );
        }
    }
}

/// Packed writes (eMMC 4.5) on a card whose cache is off (CACHE_CTRL = 0):
/// four direct sequential 4 KiB writer threads keep writes queued and the
/// legacy driver packs them. Unpacked, each 4 KiB write must be programmed
/// before its command completes, one (mostly empty) 16 KiB page program
/// each; a pack arrives whole, so its four entries share one page program.
/// With the cache on, sustained writes are bound by NAND programs either
/// way and packing saves only per-command overhead. The writers run on
/// four cores, one each, so their submissions after a completion reach
/// the queue together; on one core they take turns, and `mmcqd` (woken
/// by the first) fetches before the last has submitted.
#[test]
fn packed_writes_raise_sequential_write_throughput() {
    let tmp = scratch("device-depth-packed");
    let profile = root().join("configs/devices/generic-emmc.toml");
    let text = format!(
        r#"name = "depth-packed"
seed = 3
[device]
profile = "{}"
[precondition]
fill_fraction = 0.3
steady_state = false
[device.write_buffer]
enabled = false
[host]
cores = 4
[[files]]
name = "f"
size_mib = 256
[[jobs]]
name = "w"
file = "f"
op = "write"
pattern = "sequential"
request_bytes = 4096
direct = true
threads = 4
requests = 400
"#,
        profile.display()
    );
    let path = tmp.join("packed.toml");
    std::fs::write(&path, text).unwrap();
    let (off, on) = off_and_on(&tmp, path.to_str().unwrap(), "device.features.packed=true");
    let mb = |r: &serde_json::Value| r["write"]["mb_per_s"].as_f64().unwrap();
    eprintln!(
        "4 KiB sequential writes, 4 threads, cache off: unpacked {:.2} MB/s, packed {:.2} MB/s ({} packed commands; {} vs {} NAND programs)",
        mb(&off),
        mb(&on),
        on["device"]["packed_commands"],
        off["device"]["nand_programs"],
        on["device"]["nand_programs"]
    );
    let programs = |r: &serde_json::Value| r["device"]["nand_programs"].as_u64().unwrap();
    assert!(off["device"].get("packed_commands").is_none());
    assert!(on["device"]["packed_commands"].as_u64().unwrap() > 0);
    assert!(
        programs(&on) * 2 < programs(&off),
        "entries share page programs"
    );
    assert!(mb(&on) > 1.5 * mb(&off));
}

/// A native CSV trace (`time_us,op,sector,sectors,flags`) of `rows` in
/// `dir`, one record per millisecond; returns its path.
fn erase_trace(dir: &Path, name: &str, rows: &[(char, u64, u32, &str)]) -> String {
    let mut text = String::from("time_us,op,sector,sectors,flags\n");
    for (i, (op, sector, sectors, flags)) in rows.iter().enumerate() {
        text += &format!("{},{op},{sector},{sectors},{flags}\n", i * 1000);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Replays `trace` closed loop (each record after the previous one
/// completes) on an empty generic profile of 256 blocks per plane (2 GiB
/// raw; 4 MiB erase groups = one stripe of 2 planes × 256 pages × 8 KiB)
/// with `[features] emmc_version = version`, plus `extra` arguments.
fn erase_run(dir: &Path, trace: &str, version: &str, extra: &[&str]) -> serde_json::Value {
    let v = format!("device.features.emmc_version=\"{version}\"");
    let mut a = vec![
        "replay",
        trace,
        "--mode",
        "closed",
        "--set",
        "precondition.fill_fraction=0",
        "--set",
        "device.nand.blocks_per_plane=256",
        "--set",
        &v,
    ];
    a.extend(extra);
    report(&a, dir)
}

/// 16 MiB written sequentially in 512 KiB requests from sector 0.
fn fill_16_mib() -> Vec<(char, u64, u32, &'static str)> {
    (0..32).map(|i| ('W', i * 1024, 1024, "")).collect()
}

fn erase_kind(r: &serde_json::Value, kind: &str) -> u64 {
    r["device"]["erase_commands"][kind].as_u64().unwrap()
}

fn dev_u64(r: &serde_json::Value, key: &str) -> u64 {
    r["device"][key].as_u64().unwrap()
}

/// Linux 3.4 `mmc_blk_issue_discard_rq` picks the CMD38 argument from
/// the card: DISCARD on eMMC 4.5, TRIM on 4.41. Either way the card only
/// unmaps: the 512 KiB read of the discarded range afterwards finds 128
/// unmapped 4 KiB pages, and no block is erased.
#[test]
fn a_discard_is_cmd38_discard_on_4_5_and_trim_on_4_41_and_leaves_the_pages_unmapped() {
    let tmp = scratch("device-depth-discard");
    let mut rows = fill_16_mib();
    rows.extend([('D', 0, 16384, ""), ('R', 0, 1024, "")]);
    let trace = erase_trace(&tmp, "discard.csv", &rows);
    for (version, kind, other) in [("4.5", "discard", "trim"), ("4.41", "trim", "discard")] {
        let r = erase_run(&tmp, &trace, version, &[]);
        assert_eq!(erase_kind(&r, kind), 1, "{version}");
        assert_eq!(erase_kind(&r, other), 0, "{version}");
        assert_eq!(erase_kind(&r, "erase"), 0, "{version}");
        assert_eq!(dev_u64(&r, "unmapped_reads"), 128, "{version}");
        assert_eq!(dev_u64(&r, "nand_erases"), 0, "{version}");
        assert_eq!(dev_u64(&r, "erase_blocks_erased"), 0, "{version}");
    }
}

/// A card with neither DISCARD nor TRIM (eMMC 4.3) gets CMD38 ERASE,
/// which `mmc_erase` shrinks to whole 4 MiB erase groups. Sequential data
/// is striped over the 2 dies a 16 KiB stripe page at a time, so the
/// first stripe of each die holds exactly the first 8 MiB: erasing those
/// two groups leaves both stripes without valid data and the card erases
/// them (2 NAND erases). A 500 KiB discard inside one group holds no
/// whole group: the driver sends no command at all.
#[test]
fn an_erase_of_whole_groups_erases_the_blocks_it_empties() {
    let tmp = scratch("device-depth-erase");
    let mut rows = fill_16_mib();
    rows.extend([
        ('F', 0, 0, ""),
        ('D', 0, 16384, ""),
        ('D', 20000, 1000, ""),
        ('R', 0, 1024, ""),
    ]);
    let trace = erase_trace(&tmp, "erase.csv", &rows);
    let r = erase_run(&tmp, &trace, "4.3", &["--check-integrity"]);
    assert_eq!(erase_kind(&r, "erase"), 1);
    assert_eq!(erase_kind(&r, "discard") + erase_kind(&r, "trim"), 0);
    assert_eq!(dev_u64(&r, "erase_blocks_erased"), 2);
    assert_eq!(dev_u64(&r, "nand_erases"), 2);
    assert_eq!(dev_u64(&r, "gc_runs"), 0);
    assert_eq!(dev_u64(&r, "unmapped_reads"), 128);
}

/// A secure discard (native CSV flag `E`, BLKSECDISCARD) on an eMMC 4.5
/// card: ERASE of its aligned 4 MiB, then CMD6 SANITIZE_START. Random
/// 4 KiB overwrites first left invalid data in many blocks; SANITIZE
/// collects every one of them, so a second secure discard of the same
/// (already unmapped) range finds nothing to collect. The card is busy at
/// least one block erase (tBERS 3.5 ms) per collected block on each of
/// the 2 dies, and `--check-integrity` proves no valid data was lost.
#[test]
fn a_secure_discard_on_a_4_5_card_sanitizes_every_block_holding_invalid_data() {
    let tmp = scratch("device-depth-sanitize");
    let mut rows = fill_16_mib();
    let mut x: u64 = 7;
    for _ in 0..600 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rows.push(('W', (x >> 33) % 4096 * 8, 8, ""));
    }
    rows.extend([('F', 0, 0, ""), ('D', 8192, 8192, "E")]);
    let once = erase_trace(&tmp, "once.csv", &rows);
    rows.extend([('D', 8192, 8192, "E"), ('R', 8192, 1024, "")]);
    let twice = erase_trace(&tmp, "twice.csv", &rows);
    let a = erase_run(&tmp, &once, "4.5", &["--check-integrity"]);
    let b = erase_run(&tmp, &twice, "4.5", &["--check-integrity"]);
    assert_eq!(erase_kind(&a, "erase"), 1);
    assert_eq!(erase_kind(&a, "sanitize"), 1);
    assert_eq!(erase_kind(&a, "discard"), 0);
    let blocks = dev_u64(&a, "sanitize_blocks");
    assert!(blocks >= 4, "sanitize collected {blocks} blocks");
    let t_bers_ns = 3_500_000;
    assert!(
        dev_u64(&a, "sanitize_ns") >= blocks / 2 * t_bers_ns,
        "{} ns for {blocks} blocks",
        dev_u64(&a, "sanitize_ns")
    );
    assert_eq!(erase_kind(&b, "sanitize"), 2);
    assert_eq!(
        dev_u64(&b, "sanitize_blocks"),
        blocks,
        "nothing invalid was left"
    );
    assert_eq!(dev_u64(&b, "unmapped_reads"), 128);
}

/// ERASE and SANITIZE on the log-block (FAST) and demand-cached (DFTL)
/// mappings. A logical block of the hybrid mapping is one 8 MiB superblock
/// (2 dies × 2 planes × 256 pages × 8 KiB), so erasing the first two
/// 4 MiB groups of 4.3 card's sequentially written 16 MiB leaves logical
/// block 0's data block without a valid page: the card erases it (one
/// superblock, one erase per die). With DFTL the same range is erased
/// along with translation pages its discards left stale. A secure discard
/// on a 4.5 card then sanitizes: the hybrid card merges every log block the
/// random overwrites filled, so a second one finds nothing left; DFTL's
/// discards of the range rewrite translation pages, so its second finds
/// only those. Either way the discarded range reads unmapped, and
/// `--check-integrity` finds every other page at its newest version after
/// each command.
#[test]
fn erase_and_sanitize_run_on_the_hybrid_and_dftl_mappings() {
    let tmp = scratch("device-depth-erase-hybrid-dftl");
    let mut rows = fill_16_mib();
    rows.extend([('F', 0, 0, ""), ('D', 0, 16384, ""), ('R', 0, 1024, "")]);
    let erase = erase_trace(&tmp, "erase.csv", &rows);
    let mut rows = fill_16_mib();
    let mut x: u64 = 7;
    for _ in 0..600 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rows.push(('W', (x >> 33) % 4096 * 8, 8, ""));
    }
    rows.extend([('F', 0, 0, ""), ('D', 8192, 8192, "E")]);
    let once = erase_trace(&tmp, "once.csv", &rows);
    rows.extend([('D', 8192, 8192, "E"), ('R', 8192, 1024, "")]);
    let twice = erase_trace(&tmp, "twice.csv", &rows);
    for mapping in ["hybrid", "dftl"] {
        let set = format!("device.ftl.mapping=\"{mapping}\"");
        let checked = ["--set", &set, "--check-integrity"];
        let e = erase_run(&tmp, &erase, "4.3", &checked);
        assert_eq!(erase_kind(&e, "erase"), 1, "{mapping}");
        assert_eq!(dev_u64(&e, "unmapped_reads"), 128, "{mapping}");
        let erased = dev_u64(&e, "erase_blocks_erased");
        if mapping == "hybrid" {
            assert_eq!((erased, dev_u64(&e, "nand_erases")), (1, 2));
        } else {
            assert!(erased >= 2, "{mapping}: {erased}");
        }
        let a = erase_run(&tmp, &once, "4.5", &checked);
        let b = erase_run(&tmp, &twice, "4.5", &checked);
        for r in [&e, &a, &b] {
            assert_eq!(r["integrity"]["violations"], 0, "{mapping}");
        }
        assert_eq!(erase_kind(&a, "sanitize"), 1, "{mapping}");
        assert_eq!(erase_kind(&b, "sanitize"), 2, "{mapping}");
        let blocks = dev_u64(&a, "sanitize_blocks");
        assert!(blocks >= 2, "{mapping}: sanitize collected {blocks} blocks");
        if mapping == "hybrid" {
            let merges =
                |r: &serde_json::Value, k: &str| r["device"]["merges"][k].as_u64().unwrap();
            assert!(merges(&a, "full") > 0);
            assert_eq!(
                dev_u64(&b, "sanitize_blocks"),
                blocks,
                "nothing invalid was left"
            );
            assert_eq!(merges(&b, "full"), merges(&a, "full"));
        } else {
            assert!(dev_u64(&b, "sanitize_blocks") >= blocks);
        }
        assert_eq!(dev_u64(&b, "unmapped_reads"), 128, "{mapping}");
    }
}

/// The same secure discard on an eMMC 4.41 card (no SANITIZE; its
/// SECURE_TRIM is not modelled) goes as a plain TRIM, and the report
/// says so.
#[test]
fn a_secure_discard_without_sanitize_is_reported_as_sent_plain() {
    let tmp = scratch("device-depth-secure-plain");
    let mut rows = fill_16_mib();
    rows.push(('D', 8192, 8192, "E"));
    let trace = erase_trace(&tmp, "plain.csv", &rows);
    let r = erase_run(&tmp, &trace, "4.41", &[]);
    assert_eq!(erase_kind(&r, "trim"), 1);
    assert_eq!(erase_kind(&r, "sanitize"), 0);
    assert_eq!(erase_kind(&r, "secure_as_plain"), 1);
}

/// Erase-class capabilities contradicting the stated version, or an
/// unknown version, are refused naming the key.
#[test]
fn erase_capabilities_contradicting_the_emmc_version_are_refused() {
    let tmp = scratch("device-depth-erase-errors");
    let trace = erase_trace(&tmp, "e.csv", &[('W', 0, 8, "")]);
    let cases: [(&[&str], &[&str]); 2] = [
        (
            &[
                "device.features.emmc_version=\"4.41\"",
                "device.features.sanitize=true",
            ],
            &["[features] sanitize", "4.5"],
        ),
        (
            &["device.features.emmc_version=\"4.6\""],
            &["[features] emmc_version", "4.41"],
        ),
    ];
    for (sets, wanted) in cases {
        let mut a = vec!["replay", trace.as_str()];
        for &k in sets {
            a.extend(["--set", k]);
        }
        let e = simctl_err(&a);
        assert!(wanted.iter().all(|w| e.contains(w)), "{e}");
    }
}

/// An app's 4 KiB O_SYNC writes on the generic eMMC 4.5 (volatile cache):
/// each write's FLUSH_CACHE finds a quarter of a stripe page cached.
/// Without the SLC log the card programs that page padded (three padding
/// slots per write, WAF ≈ 4 + GC); with `[write_buffer] slc_log` it makes
/// the entry durable with one SLC-mode program and programs the MLC page
/// only when full, so the device time per write and the WAF fall and no
/// padding is written.
#[test]
fn the_slc_log_serves_small_synchronous_writes_without_padding() {
    let dir = scratch("slc-log");
    let run = |slc: &str| {
        let slc = format!("device.write_buffer.slc_log={slc}");
        let a = [
            "run",
            "configs/scenarios/sync-write-app.toml",
            "--device",
            "configs/devices/generic-emmc.toml",
            "--set",
            "jobs.0.request_bytes=4096",
            "--set",
            "jobs.0.requests=400",
            "--set",
            slc.as_str(),
        ];
        report(&a, &dir)
    };
    let (off, on) = (run("false"), run("true"));
    let dev = |r: &serde_json::Value| r["breakdown_us"]["device"].as_f64().unwrap();
    let waf = |r: &serde_json::Value| r["device"]["waf"].as_f64().unwrap();
    println!(
        "device µs per write {:.0} -> {:.0}, WAF {:.2} -> {:.2}, log {}",
        dev(&off),
        dev(&on),
        waf(&off),
        waf(&on),
        on["device"]["slc_log"]
    );
    assert!(off["device"].get("slc_log").is_none());
    assert!(off["device"]["padding_slots"].as_u64().unwrap() >= 3 * 300);
    assert!(on["device"]["padding_slots"].as_u64().unwrap() < 10);
    let log = &on["device"]["slc_log"];
    assert!(log["programs"].as_u64().unwrap() >= 300, "{log}");
    assert!(dev(&on) < 0.7 * dev(&off));
    assert!(waf(&on) < 0.5 * waf(&off));
    // the log's copies count in the WAF: above 1 + 3/4 per write
    assert!(waf(&on) >= 1.5, "{}", waf(&on));
}

/// Packed reads (eMMC 4.5, a what-if no Linux driver of the era used): 16
/// random 4 KiB readers keep reads queued, and with `[features]
/// packed_read` the legacy driver packs them. A pack pays one command
/// overhead, one `mmcqd` preparation round and one completion for up to
/// MAX_PACKED_READS reads, and the card senses its entries on both dies at
/// once; the reads themselves (NAND senses) stay the same. Off (the
/// default), the report has no packed-read keys (the golden reports are
/// unchanged); a card stated as eMMC 4.41 refuses the feature with a
/// located error.
#[test]
fn packed_reads_raise_random_read_iops() {
    let tmp = scratch("device-depth-packed-read");
    let scenario = "configs/scenarios/rand16-128m.toml";
    let off = report(&["run", scenario], &tmp);
    let on = report(
        &["run", scenario, "--set", "device.features.packed_read=true"],
        &tmp,
    );
    let iops = |r: &serde_json::Value| r["read"]["iops"].as_f64().unwrap();
    let dev = |r: &serde_json::Value, k: &str| r["device"][k].as_u64().unwrap();
    eprintln!(
        "16 random 4 KiB readers: {:.0} IOPS unpacked, {:.0} IOPS packed ({} packed reads carrying {} requests; {} vs {} data NAND reads)",
        iops(&off),
        iops(&on),
        on["device"]["packed_read_commands"],
        on["device"]["packed_read_requests"],
        dev(&off, "data_nand_reads"),
        dev(&on, "data_nand_reads"),
    );
    assert!(off["device"].get("packed_read_commands").is_none());
    assert!(off["device"].get("packed_read_requests").is_none());
    let packs = dev(&on, "packed_read_commands");
    let carried = dev(&on, "packed_read_requests");
    assert!(
        packs > 0 && carried >= 2 * packs,
        "{packs} packs, {carried}"
    );
    assert!(carried <= on["read"]["count"].as_u64().unwrap());
    assert!(
        on["device"].get("packed_commands").is_none(),
        "packed writes stay off"
    );
    assert!(iops(&on) > 1.2 * iops(&off));
    // The same reads reach NAND, give or take read-buffer hits from the
    // different order (within 5 %).
    let (a, b) = (dev(&off, "data_nand_reads"), dev(&on, "data_nand_reads"));
    assert!(a.abs_diff(b) * 20 < a, "{a} vs {b}");
    // With HPI on (stop-request flow), packed reads still run.
    let hpi = report(
        &[
            "run",
            scenario,
            "--set",
            "device.features.packed_read=true",
            "--set",
            "device.features.hpi=true",
        ],
        &tmp,
    );
    assert!(dev(&hpi, "packed_read_commands") > 0);
    let e = simctl_err(&[
        "run",
        scenario,
        "--set",
        "device.features.packed_read=true",
        "--set",
        "device.features.emmc_version=\"4.41\"",
    ]);
    assert!(
        e.contains("[features] packed_read") && e.contains("4.41"),
        "{e}"
    );
    // The CMDQ driver never packs: the feature would change nothing
    // there, so it is an error naming the key (issue 24).
    let e = simctl_err(&[
        "run",
        scenario,
        "--scheduler",
        "mq-deadline",
        "--set",
        "device.profile=../devices/generic-emmc51-cmdq.toml",
        "--set",
        "device.features.packed_read=true",
    ]);
    assert!(
        e.contains("generic-emmc51-cmdq.toml: [features] packed_read: true, but the run uses the CMDQ driver"),
        "{e}"
    );
}

/// Packed reads beside the HPI stop flow: eight urgent (RT) random readers
/// under 512 KiB writes on ROW with `[features] hpi` and `packed_read`.
/// Reads queued together are packed; a write on the bus is still stopped
/// for an urgent read and re-inserted whole (a packed read is never
/// stopped), every page reads its newest data (`--check-integrity`) and
/// the card receives exactly the application's bytes plus the resent
/// prefixes of the stopped writes.
#[test]
fn packed_reads_keep_the_hpi_stop_flow_working() {
    let tmp = scratch("device-depth-packed-read-hpi");
    let scenario = urgent_reads_under_512k_writes(&tmp);
    let text = std::fs::read_to_string(&scenario).unwrap();
    let text = text.replace("requests = 300\n", "requests = 300\nthreads = 8\n");
    assert!(text.contains("threads = 8"));
    std::fs::write(&scenario, text).unwrap();
    let r = row_run(
        &tmp,
        &scenario,
        &[
            "device.features.hpi=true",
            "device.features.packed_read=true",
        ],
        &["--check-integrity"],
    );
    let dev = |k: &str| r["device"][k].as_u64().unwrap();
    eprintln!(
        "{} packed reads carrying {} requests; {} writes stopped; read mean {} µs",
        dev("packed_read_commands"),
        dev("packed_read_requests"),
        dev("hpi_stopped_writes"),
        r["read"]["latency_us"]["mean"]
    );
    assert_eq!(r["integrity"]["violations"], 0, "{}", r["integrity"]);
    assert_eq!(r["read"]["count"], 2400);
    assert!(dev("packed_read_commands") > 0);
    assert!(dev("hpi_stopped_writes") > 0);
    let host = dev("host_slots_written") * 4096;
    assert_eq!(host, (200u64 << 20) + dev("hpi_stopped_write_bytes"));
}
