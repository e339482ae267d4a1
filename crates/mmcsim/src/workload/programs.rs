//! The report sections of workload programs, gathered over every program
//! of a run (the registry that builds them from a scenario is
//! `sim::programs`, where the scenario is known).

use super::androbench::{AndrobenchReport, Suite};
use super::program::Program;
use super::sqlite::report::SqliteReport;
use super::sqlite::SqliteConfig;

/// The `sqlite` report of every program with a SQLite connection, under
/// `config`; `None` when no program has one.
pub fn sqlite_report(programs: &[Box<dyn Program>], config: &SqliteConfig) -> Option<SqliteReport> {
    let stats: Vec<_> = programs.iter().filter_map(|p| p.sqlite_stats()).collect();
    (!stats.is_empty()).then(|| SqliteReport::new(config, stats))
}

/// The `androbench` report, when the suite ran.
pub fn androbench_report(programs: &[Box<dyn Program>]) -> Option<AndrobenchReport> {
    programs
        .iter()
        .find_map(|p| p.as_any().downcast_ref::<Suite>())
        .map(Suite::report)
}
