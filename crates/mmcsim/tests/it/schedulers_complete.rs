//! Liveness of every scheduler: on small random traces (reads, writes,
//! discards and flushes of any size, several processes, sync and async,
//! bursts and gaps) every request completes under every scheduler and on
//! both drivers — nothing waits forever with the device idle.
//!
//! `PROPTEST_CASES` raises the number of traces (each runs under every
//! scheduler on the legacy and the CMDQ driver).

use mmcsim::config::Scenario;
use mmcsim::sched;
use mmcsim::sim::{RunOptions, Simulation};
use proptest::prelude::*;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

/// One trace record: gap after the previous record (ns), op, sector,
/// sectors, pid, sync flag.
type Rec = (u64, char, u64, u32, u32, bool);

fn record() -> impl Strategy<Value = Rec> {
    (
        prop_oneof![Just(0u64), 0u64..2_000_000],
        prop_oneof![Just('R'), Just('W'), Just('D'), Just('F')],
        prop_oneof![0u64..4096, 0u64..15_000_000],
        prop_oneof![1u32..16, 1u32..2048, 1u32..100_000],
        1u32..6,
        any::<bool>(),
    )
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Writes the records as a native CSV trace; returns its path.
fn write_trace(recs: &[Rec]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mmcsim-liveness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.csv", NEXT.fetch_add(1, Ordering::Relaxed)));
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "time_ns,op,sector,sectors,pid,sync").unwrap();
    let mut t = 0u64;
    for &(gap, op, sector, sectors, pid, sync) in recs {
        t += gap;
        let sectors = if op == 'F' { 0 } else { sectors };
        writeln!(f, "{t},{op},{sector},{sectors},{pid},{}", sync as u8).unwrap();
    }
    path
}

fn run(path: &std::path::Path, scheduler: &str, cmdq: bool) -> Result<u64, String> {
    let mut sets: Vec<(String, String)> = vec![
        ("scheduler.name".into(), scheduler.into()),
        // An unfilled device: the run is about the queue, not the FTL.
        ("precondition.fill_fraction".into(), "0".into()),
        ("precondition.steady_state".into(), "false".into()),
    ];
    if cmdq {
        sets.push((
            "device.profile".into(),
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../configs/devices/generic-emmc51-cmdq.toml"
            )
            .into(),
        ));
    }
    let sc = Scenario::for_trace(path, &sets).map_err(|e| e.to_string())?;
    let report = Simulation::new(sc)
        .map_err(|e| e.to_string())?
        .run(RunOptions::default())
        .map_err(|e| e.to_string())?;
    Ok(report.workload.requests.count)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn every_scheduler_completes_every_request(recs in prop::collection::vec(record(), 1..24)) {
        let path = write_trace(&recs);
        for name in sched::builtin().names() {
            for cmdq in [false, true] {
                let done = run(&path, name, cmdq);
                prop_assert_eq!(
                    done.clone(),
                    Ok(recs.len() as u64),
                    "scheduler {} (cmdq {}) on {}", name, cmdq, path.display()
                );
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn bfq_serves_an_expired_fifo_head_larger_than_its_budget() {
    // The reproducer of the BFQ stall: pid 1's discard is the FIFO head of
    // its sync queue, far larger than the budget sized for its next request
    // in sector order (the read at sector 0).
    let recs: Vec<Rec> = vec![
        (0, 'D', 10_002_301, 89_439, 1, true),
        (0, 'W', 0, 65_535, 2, false),
        (0, 'R', 0, 983, 1, false),
    ];
    let path = write_trace(&recs);
    for name in ["bfq", "bfq-mq"] {
        assert_eq!(run(&path, name, false), Ok(3), "{name}");
    }
}
