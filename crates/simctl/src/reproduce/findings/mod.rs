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

pub use androbench_motog::nine_scheduler_means;

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

/// Why finding 1 is judged with the clock pinned.
const PINNED_1: &str = "The paper explains the ratio by read-ahead and the device's read buffer, neither of which depends on the CPU clock; but the two patterns load the CPU differently, so a governor settles at different clocks for them and would add its own factor to the ratio. Pinned, the ratio is the mechanism's; the free-clock ratio beside it shows what the governor adds on the phone as configured.";

/// Why findings 2-4 (address order) are judged with the clock pinned.
const PINNED_ORDER: &str = "The claim is about the order of addresses reaching the device. With the governor free, the runs compared settle at different clocks (e.g. noop and deadline, or sorted and shuffled, at different mean MHz), and a host-bound run's speed follows its clock; pinned, only the order differs. The free-clock result beside it is the governor's contribution.";

/// Why finding 5 is judged with the clock pinned.
const PINNED_5: &str = "The index compares schedulers run separately, each of which a free governor may settle at its own clock; the paper attributes deadline's fairness to its read_expire deadlines, a scheduler mechanism. Pinned, only the scheduler differs; the free-clock indices beside it show the governor's contribution.";

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
/// deadline's with its request log: findings 3, 4 and 5 share them.
fn rand16_runs(registry: &mmcsim::sched::Registry) -> Vec<super::runner::RunSpec> {
    registry
        .names()
        .into_iter()
        .map(|n| {
            let run = super::runner::RunSpec::new(
                "rand16-128m.toml",
                &[("scheduler.name", n.to_string())],
            )
            .on_benchmark_fs();
            // Finding 4 reads deadline's request log only; the others'
            // logs would only fill memory (one per seed and clock).
            if n == "deadline" {
                run.logged()
            } else {
                run
            }
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
