//! The registry of findings, one module each. A finding that needs
//! scenarios this tree does not have yet is not listed.

mod addr_diff;
mod androbench_motog;
mod fairness;
mod host_share;
mod journaling;
mod schedulers;
mod seq_rand;
mod stride;

use super::finding::Finding;
use super::runner::RunOutput;

/// Every finding, in number order.
pub fn all() -> Vec<&'static dyn Finding> {
    vec![
        &seq_rand::SeqRand,
        &stride::Stride,
        &schedulers::Schedulers,
        &addr_diff::AddrDiff,
        &fairness::Fairness,
        &host_share::HostShare,
        &androbench_motog::AndrobenchMotoG,
        &journaling::Journaling,
    ]
}

/// Mapping-cache sizes the probes of findings 2-4 try, in map pages of
/// 4 KiB (4 MiB of logical space each): reference §3 gives "8–64 entries"
/// [est]; 32 is the 128 MiB region of the 16-reader runs, 36 the generic
/// profile's midpoint.
const MAP_CACHE_ENTRIES: &[&str] = &["8", "16", "24", "32", "64"];

/// The range [`MAP_CACHE_ENTRIES`] spans, and its source.
const MAP_CACHE_RANGE: &str = "8–64 map pages of 4 KiB in controller SRAM (emmc-parameters.md §3, an estimate); the generic profile takes the midpoint, 36";

/// The AndroBench 3.4 scenario (findings 7 and 8).
const ANDROBENCH: &str = "androbench-3.4.toml";
/// The AndroBench metrics in the app's order, report keys under
/// `androbench`.
const ANDROBENCH_METRICS: [&str; 7] = [
    "seq_read_mb_s",
    "seq_write_mb_s",
    "rand_read_iops",
    "rand_write_iops",
    "sqlite_insert_tps",
    "sqlite_update_tps",
    "sqlite_delete_tps",
];

/// The 16-thread random-read runs under every scheduler of the registry,
/// with their request logs: findings 3, 4 and 5 share them.
fn rand16_runs(registry: &mmcsim::sched::Registry) -> Vec<super::runner::RunSpec> {
    registry
        .names()
        .into_iter()
        .map(|n| {
            super::runner::RunSpec::new("rand16-128m.toml", &[("scheduler.name", n.to_string())])
                .logged()
                .on_benchmark_fs()
        })
        .collect()
}

/// The scheduler of a run.
fn scheduler_of(r: &RunOutput) -> &str {
    r.report["scheduler"]["name"].as_str().unwrap_or("?")
}

/// The scheduler of each run and the number at report `key` of each, in
/// run order.
fn per_scheduler(runs: &[&RunOutput], key: &str) -> anyhow::Result<(Vec<String>, Vec<f64>)> {
    let names = runs.iter().map(|r| scheduler_of(r).to_string()).collect();
    let values = runs
        .iter()
        .map(|r| super::finding::num(r, key))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((names, values))
}

/// The run under scheduler `name`.
fn run_under<'a>(runs: &[&'a RunOutput], name: &str) -> anyhow::Result<&'a RunOutput> {
    use anyhow::Context;
    runs.iter()
        .find(|r| scheduler_of(r) == name)
        .copied()
        .with_context(|| format!("no run under `{name}`"))
}

/// The value of scheduler `name` in `values` (one per run, in the order of
/// `names`).
fn of_scheduler(names: &[String], values: &[f64], name: &str) -> anyhow::Result<f64> {
    use anyhow::Context;
    names
        .iter()
        .position(|n| n == name)
        .map(|i| values[i])
        .with_context(|| format!("no run under `{name}`"))
}
