//! Using mmcsim as a library: load a bundled scenario, override a
//! tunable, run it under two schedulers and compare.
//!
//! `cargo run --release --example library`

use mmcsim::config::Scenario;
use mmcsim::sim::{RunOptions, Simulation};
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("configs/scenarios/rand16-128m.toml");
    for scheduler in ["noop", "deadline"] {
        let sets = vec![
            ("scheduler.name".to_string(), scheduler.to_string()),
            // Fewer calls than the scenario, to keep the example quick.
            ("seed".to_string(), "2".to_string()),
        ];
        let scenario = Scenario::load(&path, &sets)?;
        let report = Simulation::new(scenario)?.run(RunOptions::default())?;
        let w = &report.workload;
        println!(
            "{scheduler:>8}: {:>8.0} IOPS, mean {:>7.1} µs, p99 {:>7.1} µs, Jain {:.3}, map-cache hits {:.1}%",
            w.throughput.iops,
            w.latency_us.mean,
            w.latency_us.p99,
            w.fairness.jain,
            report.device.map_cache_hit_rate * 100.0
        );
    }
    Ok(())
}
