//! Simulator speed, in simulated requests per wall-clock second (criterion
//! "elements"), on a random 4 KiB 70/30 read/write trace under deadline on
//! the generic eMMC profile preconditioned to GC steady state:
//!
//! * `replay/closed-*`: closed loop (each record issued when the previous
//!   one completes);
//! * `replay/timed-20us-*`: timed at one arrival every 20 µs — more than the
//!   device sustains, so the backlog grows (overloaded open loop);
//! * `precondition/steady-state`: preconditioning alone (fill + random
//!   overwrites until the window WAF settles), elements = LPN writes.
//!
//! The device is preconditioned once and cloned into each iteration's
//! simulation, so the replay benchmarks time the event loop only.
//! Run with `cargo bench --bench replay`; not run by `cargo test`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mmcsim::config::Scenario;
use mmcsim::device::Emmc;
use mmcsim::engine::component_rng;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use rand::Rng;
use std::io::Write;
use std::path::PathBuf;

const REQUESTS: u64 = 200_000;

/// Writes a benchmark trace once: 70 % reads, 30 % writes, 4 KiB at
/// random 4 KiB-aligned sectors of the first 4 GiB, one every
/// `interval_us`, one process.
fn trace(interval_us: u64) -> PathBuf {
    let dir =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rand-rw-200k-{interval_us}us.csv"));
    let mut rng = component_rng(42, "bench-trace");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, "time_us,op,sector,sectors,pid").unwrap();
    for i in 0..REQUESTS {
        let op = if rng.random_range(0..10) < 7 {
            'R'
        } else {
            'W'
        };
        let page: u64 = rng.random_range(0..(1u64 << 20));
        writeln!(out, "{},{},{},8,100", i * interval_us, op, page * 8).unwrap();
    }
    out.flush().unwrap();
    path
}

fn scenario(mode: &str, interval_us: u64) -> Scenario {
    let sets = vec![
        ("scheduler.name".to_string(), "deadline".to_string()),
        ("trace.mode".to_string(), mode.to_string()),
    ];
    Scenario::for_trace(&trace(interval_us), &sets).unwrap()
}

fn replay(c: &mut Criterion) {
    let registry = mmcsim::sched::builtin();
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(REQUESTS));
    for (name, mode, interval) in [
        ("closed-rand-4k-200k-deadline", "closed", 10),
        ("timed-20us-rand-4k-200k-deadline", "timed", 20),
    ] {
        let sc = scenario(mode, interval);
        let device = PreparedDevice::new(&sc).unwrap();
        g.bench_function(name, |b| {
            b.iter_batched(
                || Simulation::with_prepared_device(sc.clone(), &registry, &device).unwrap(),
                |sim| {
                    let r = sim.run(RunOptions::default()).unwrap();
                    assert_eq!(r.workload.requests.count, REQUESTS);
                    r
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

fn precondition(c: &mut Criterion) {
    let sc = scenario("closed", 10);
    let cfg = sc.device_config().unwrap();
    let mut probe = Emmc::new(&cfg).unwrap();
    let s = probe.precondition(&sc.precondition, sc.seed);
    let mut g = c.benchmark_group("precondition");
    g.sample_size(10);
    g.throughput(Throughput::Elements(s.pages_filled + s.pages_overwritten));
    g.bench_function("steady-state", |b| {
        b.iter_batched(
            || Emmc::new(&cfg).unwrap(),
            |mut d| d.precondition(&sc.precondition, sc.seed),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, replay, precondition);
criterion_main!(benches);
