//! Simulator speed: replay a 100,000-request random 4 KiB read/write trace
//! under deadline on the generic eMMC profile, reported as simulated
//! requests per wall-clock second (criterion "elements").
//!
//! Run with `cargo bench --bench replay`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mmcsim::config::Scenario;
use mmcsim::engine::component_rng;
use mmcsim::sim::{RunOptions, Simulation};
use rand::Rng;
use std::io::Write;
use std::path::PathBuf;

const REQUESTS: u64 = 100_000;

/// Writes the benchmark trace once: 70 % reads, 30 % writes, 4 KiB at
/// random 4 KiB-aligned sectors of the first 4 GiB, one every 2 ms.
fn trace() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rand-rw-100k.csv");
    let mut rng = component_rng(42, "bench-trace");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, "time_us,op,sector,sectors,pid").unwrap();
    for i in 0..REQUESTS {
        let op = if rng.random_range(0..10) < 7 { 'R' } else { 'W' };
        let page: u64 = rng.random_range(0..(1u64 << 20));
        writeln!(out, "{},{},{},8,{}", i * 2000, op, page * 8, 100 + i % 4).unwrap();
    }
    out.flush().unwrap();
    path
}

fn replay(c: &mut Criterion) {
    let path = trace();
    let sets = vec![
        ("scheduler.name".to_string(), "deadline".to_string()),
        ("precondition.fill_fraction".to_string(), "0.5".to_string()),
    ];
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(REQUESTS));
    g.bench_function("rand-4k-rw-100k-deadline", |b| {
        b.iter_batched(
            || Simulation::new(Scenario::for_trace(&path, &sets).unwrap()).unwrap(),
            |sim| {
                let r = sim.run(RunOptions::default()).unwrap();
                assert_eq!(r.workload.requests.count, REQUESTS);
                r
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, replay);
criterion_main!(benches);
