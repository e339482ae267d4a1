#![no_main]
//! The whole simulator on arbitrary bytes: the bytes decode into a small
//! trace (reads, writes, discards and flushes of any size, several
//! processes, sync and async, FUA and pre-flush writes, bursts and gaps)
//! plus the scheduler (any of the built-in ones), the driver (legacy, or
//! CMDQ on the CMDQ profile), the replay mode and a few device knobs, on a
//! 4 MiB device. The run has the per-command FTL integrity check on; it
//! must succeed and complete every record (nothing stalls, nothing
//! violates the oracle, nothing panics).
//!
//! Layout: byte 0 scheduler, byte 1 driver and device knobs, byte 2
//! precondition fill, then 6 bytes per record (at most 256 records):
//! op/sync/pid/flags, gap, sector (2 bytes), sectors (2 bytes).

use libfuzzer_sys::fuzz_target;
use mmcsim::config::Scenario;
use mmcsim::sim::{RunOptions, Simulation};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

const CMDQ_PROFILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../configs/devices/generic-emmc51-cmdq.toml"
);

/// Most records a case decodes (keeps one execution short).
const MAX_RECORDS: usize = 256;

/// The trace file of this process, rewritten for every case.
fn trace_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mmcsim-fuzz-simulate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir.join("trace.csv")
    })
}

/// Decodes the records into a native CSV trace; returns it and the count.
fn trace(recs: &[u8]) -> (String, u64) {
    let mut csv = String::from("time_ns,op,sector,sectors,pid,sync,flags\n");
    let (mut t, mut n) = (0u64, 0u64);
    for r in recs.chunks_exact(6).take(MAX_RECORDS) {
        let op = ['R', 'W', 'D', 'F'][(r[0] & 3) as usize];
        let sync = (r[0] >> 2) & 1;
        let pid = 1 + ((r[0] >> 3) & 7);
        let flags = match (op, r[0] >> 6) {
            ('W', 1) => "F",
            ('W', 2) => "P",
            ('W', 3) => "FP",
            _ => "",
        };
        // Half the records arrive together; the rest up to ~6 ms later.
        t += match r[1] {
            g @ 0..=127 => g as u64 * 100,
            g => (g as u64 - 127) * 50_000,
        };
        let sector = u16::from_le_bytes([r[2], r[3]]) as u64 * 8 + (r[4] & 7) as u64;
        let len = u16::from_le_bytes([r[4], r[5]]);
        let sectors = match len >> 14 {
            0 | 1 => 1 + (len & 63) as u32,
            2 => 1 + (len & 1023) as u32,
            _ => 1 + (len & 0xfff) as u32, // within the 4 MiB device
        };
        let (sector, sectors) = if op == 'F' { (0, 0) } else { (sector, sectors) };
        let _ = writeln!(csv, "{t},{op},{sector},{sectors},{pid},{sync},{flags}");
        n += 1;
    }
    (csv, n)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 + 6 {
        return;
    }
    let registry = mmcsim::sched::builtin();
    let names = registry.names();
    let scheduler = names[data[0] as usize % names.len()];
    let knobs = data[1];
    let cmdq = knobs & 1 == 1;
    let (csv, records) = trace(&data[3..]);
    let path = trace_path();
    std::fs::write(path, csv).expect("trace written");

    let policy = ["greedy", "cost-benefit", "fifo", "greedy"][((knobs >> 2) & 3) as usize];
    let fill = (data[2] % 8) as f64 / 8.0;
    let mut sets: Vec<(String, String)> = vec![
        ("scheduler.name".into(), scheduler.into()),
        ("trace.fit".into(), "wrap".into()),
        (
            "trace.mode".into(),
            if knobs & 16 == 0 { "timed" } else { "closed" }.into(),
        ),
        // 4 MiB raw: 2 dies x 2 planes x 16 blocks x 16 pages x 8 KiB.
        ("device.nand.blocks_per_plane".into(), "16".into()),
        ("device.nand.pages_per_block".into(), "16".into()),
        ("device.ftl.over_provisioning".into(), "0.4".into()),
        ("device.gc.policy".into(), policy.into()),
        ("device.gc.start_below_free_blocks_per_die".into(), "4".into()),
        ("device.gc.stop_at_free_blocks_per_die".into(), "6".into()),
        (
            "device.write_buffer.volatile".into(),
            (knobs & 2 == 0).to_string(),
        ),
        ("device.wear_leveling.static".into(), (knobs & 32 != 0).to_string()),
        ("precondition.fill_fraction".into(), fill.to_string()),
        ("precondition.steady_state".into(), "false".into()),
        ("host.page_cache_mib".into(), "8".into()),
    ];
    if cmdq {
        sets.push(("device.profile".into(), CMDQ_PROFILE.into()));
    }
    let sc = Scenario::for_trace(path, &sets).unwrap_or_else(|e| panic!("scenario: {e}"));
    let report = Simulation::new(sc)
        .and_then(|s| {
            s.run(RunOptions {
                check_integrity: true,
                ..RunOptions::default()
            })
        })
        .unwrap_or_else(|e| panic!("{scheduler} (cmdq {cmdq}): {e}"));
    assert_eq!(
        report.workload.requests.count, records,
        "{scheduler} (cmdq {cmdq}): every record completes"
    );
    let integrity = report.integrity.expect("integrity section");
    assert_eq!(integrity.violations, 0);
    assert!(integrity.checked_commands > 0);
});
