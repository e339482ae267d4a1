//! The registry of workload programs: each kind names the scenario
//! section it comes from and builds its programs (the workload stage's
//! [`Program`]s) from the scenario. A new program is its model in
//! `workload/` implementing [`Program`], plus one line in [`REGISTRY`].

use crate::config::Scenario;
use crate::engine::component_rng;
use crate::workload::androbench::Suite;
use crate::workload::program::Program;
use crate::workload::sqlite::job::SqliteJob;

/// One kind of program.
pub struct ProgramKind {
    /// The scenario section it comes from (`[[sqlite_jobs]]`, `[androbench]`).
    pub section: &'static str,
    /// Its programs in `sc` (none when the section is absent).
    pub build: fn(sc: &Scenario) -> Vec<Box<dyn Program>>,
}

/// Every kind, in the order their threads follow the job and script
/// threads.
pub const REGISTRY: &[ProgramKind] = &[
    ProgramKind {
        section: "sqlite_jobs",
        build: sqlite_jobs,
    },
    ProgramKind {
        section: "androbench",
        build: androbench,
    },
];

/// Every program of `sc`, kind by kind in [`REGISTRY`] order.
pub fn build_all(sc: &Scenario) -> Vec<Box<dyn Program>> {
    REGISTRY.iter().flat_map(|k| (k.build)(sc)).collect()
}

/// One thread per `[[sqlite_jobs]]` entry, its keys shuffled by its own
/// seeded stream.
fn sqlite_jobs(sc: &Scenario) -> Vec<Box<dyn Program>> {
    sc.sqlite_jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let mut rng = component_rng(sc.seed, &format!("sqlite_job{i}"));
            Box::new(SqliteJob::new(j, &sc.sqlite, &mut rng)) as Box<dyn Program>
        })
        .collect()
}

/// The AndroBench suite, when `[androbench]` is present.
fn androbench(sc: &Scenario) -> Vec<Box<dyn Program>> {
    sc.androbench
        .iter()
        .map(|a| {
            let settings = a.settings(&sc.sqlite).expect("validated with the scenario");
            Box::new(Suite::new(settings, &sc.sqlite, sc.seed)) as Box<dyn Program>
        })
        .collect()
}
