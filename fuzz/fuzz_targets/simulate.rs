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
//! The case is structure-aware (derived with `arbitrary`): the knobs, then
//! a list of records (at most 1,024), so libFuzzer's mutations change
//! whole records and a case reaches hundreds of them.

use libfuzzer_sys::arbitrary::{self, Arbitrary};
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
const MAX_RECORDS: usize = 1024;

/// The trace file of this process, rewritten for every case.
fn trace_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mmcsim-fuzz-simulate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir.join("trace.csv")
    })
}

/// The knobs of a case.
#[derive(Arbitrary, Debug)]
struct Case {
    /// Index into the built-in schedulers (modulo their count).
    scheduler: u8,
    /// The CMDQ profile (else the generic eMMC 4.5 one, legacy driver).
    cmdq: bool,
    /// A volatile write buffer (else power-loss protected).
    volatile: bool,
    /// GC victim policy.
    policy: Policy,
    /// Closed-loop replay (else timed).
    closed: bool,
    /// Static wear leveling on.
    static_wl: bool,
    /// Precondition fill, in eighths of the user capacity (modulo 8).
    fill: u8,
    records: Vec<Rec>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Policy {
    Greedy,
    CostBenefit,
    Fifo,
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq)]
enum Kind {
    Read,
    Write,
    Discard,
    Flush,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Flags {
    None,
    Fua,
    PreFlush,
    Both,
}

/// A request size: mostly small, sometimes up to 2 MiB (4,096 sectors).
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Len {
    Small(u8),
    Medium(u16),
    Large(u16),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Rec {
    kind: Kind,
    sync: bool,
    /// pid 1 + (pid % 8).
    pid: u8,
    flags: Flags,
    /// 0..=127: gap of g x 100 ns (bursts); above: up to ~6 ms.
    gap: u8,
    /// 4 KiB page, and sector within it (low 3 bits).
    page: u16,
    sub: u8,
    len: Len,
}

/// The records as a native CSV trace; returns it and the count.
fn trace(recs: &[Rec]) -> (String, u64) {
    let mut csv = String::from("time_ns,op,sector,sectors,pid,sync,flags\n");
    let (mut t, mut n) = (0u64, 0u64);
    for r in recs.iter().take(MAX_RECORDS) {
        let op = match r.kind {
            Kind::Read => 'R',
            Kind::Write => 'W',
            Kind::Discard => 'D',
            Kind::Flush => 'F',
        };
        let flags = match (r.kind, r.flags) {
            (Kind::Write, Flags::Fua) => "F",
            (Kind::Write, Flags::PreFlush) => "P",
            (Kind::Write, Flags::Both) => "FP",
            _ => "",
        };
        t += match r.gap {
            g @ 0..=127 => g as u64 * 100,
            g => (g as u64 - 127) * 50_000,
        };
        let sector = r.page as u64 * 8 + (r.sub & 7) as u64;
        let sectors = match r.len {
            Len::Small(l) => 1 + (l & 63) as u32,
            Len::Medium(l) => 1 + (l & 1023) as u32,
            Len::Large(l) => 1 + (l & 0xfff) as u32, // within the 4 MiB device
        };
        let (sector, sectors) = if op == 'F' { (0, 0) } else { (sector, sectors) };
        let pid = 1 + (r.pid & 7);
        let sync = r.sync as u8;
        let _ = writeln!(csv, "{t},{op},{sector},{sectors},{pid},{sync},{flags}");
        n += 1;
    }
    (csv, n)
}

fuzz_target!(|c: Case| {
    if c.records.is_empty() {
        return;
    }
    let registry = mmcsim::sched::builtin();
    let names = registry.names();
    let scheduler = names[c.scheduler as usize % names.len()];
    let cmdq = c.cmdq;
    let (csv, records) = trace(&c.records);
    let path = trace_path();
    std::fs::write(path, csv).expect("trace written");

    let policy = match c.policy {
        Policy::Greedy => "greedy",
        Policy::CostBenefit => "cost-benefit",
        Policy::Fifo => "fifo",
    };
    let fill = (c.fill % 8) as f64 / 8.0;
    let mut sets: Vec<(String, String)> = vec![
        ("scheduler.name".into(), scheduler.into()),
        ("trace.fit".into(), "wrap".into()),
        (
            "trace.mode".into(),
            if c.closed { "closed" } else { "timed" }.into(),
        ),
        // 4 MiB raw: 2 dies x 2 planes x 16 blocks x 16 pages x 8 KiB.
        ("device.nand.blocks_per_plane".into(), "16".into()),
        ("device.nand.pages_per_block".into(), "16".into()),
        ("device.ftl.over_provisioning".into(), "0.4".into()),
        ("device.gc.policy".into(), policy.into()),
        (
            "device.gc.start_below_free_blocks_per_die".into(),
            "4".into(),
        ),
        ("device.gc.stop_at_free_blocks_per_die".into(), "6".into()),
        (
            "device.write_buffer.volatile".into(),
            c.volatile.to_string(),
        ),
        (
            "device.wear_leveling.static".into(),
            c.static_wl.to_string(),
        ),
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
