//! The registry of findings, one module each. A finding that needs
//! scenarios this tree does not have yet is not listed.

mod addr_diff;
mod fairness;
mod host_share;
mod schedulers;
mod seq_rand;
mod stride;

use super::finding::Finding;

/// Every finding, in number order.
pub fn all() -> Vec<&'static dyn Finding> {
    vec![
        &seq_rand::SeqRand,
        &stride::Stride,
        &schedulers::Schedulers,
        &addr_diff::AddrDiff,
        &fairness::Fairness,
        &host_share::HostShare,
    ]
}

/// The 16-thread random-read runs under every scheduler of the registry,
/// with their request logs: findings 3, 4 and 5 share them.
fn rand16_runs(registry: &mmcsim::sched::Registry) -> Vec<super::runner::RunSpec> {
    registry
        .names()
        .into_iter()
        .map(|n| {
            super::runner::RunSpec::new("rand16-128m.toml", &[("scheduler.name", n.to_string())])
                .logged()
        })
        .collect()
}

/// The scheduler of each run, in order.
fn scheduler_names(runs: &[&super::runner::RunOutput]) -> Vec<String> {
    runs.iter()
        .map(|r| {
            r.report["scheduler"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}
