//! Workload programs: threads whose calls are decided as they run (SQLite
//! jobs, the AndroBench suite, and any program added through
//! [`super::programs`]). The jobs stage creates their host tasks, hands
//! each thread's previous return value in and issues what it asks for.

pub use super::action::{Action, IoMark};
use super::sqlite::session::SessionStats;
use crate::types::Ns;

/// A program and its threads. Implementations live beside their model
/// (`sqlite/job.rs`, `androbench/`); a new one registers a builder in
/// `sim::programs::REGISTRY`.
pub trait Program: std::fmt::Debug {
    /// Its threads: (name, pid); `index` is its position among the
    /// scenario's programs.
    fn threads(&self, index: usize) -> Vec<(String, u32)>;

    /// When the program starts, ns, and (into `out`) which of its threads
    /// run first.
    fn start(&mut self, out: &mut Vec<u32>) -> Ns;

    /// Thread `local`'s next action at `now` (`ret`: its previous call's
    /// return value; `io`: the device counters).
    fn next(&mut self, now: Ns, local: u32, ret: Option<i64>, io: IoMark) -> Action;

    /// True when the call [`Program::next`] just returned crosses from the
    /// app into native code (JNI): every Java file call, but only the first
    /// system call of a SQLite statement.
    fn crossing(&self) -> bool;

    /// Threads that may go on now (a new phase began); none by default.
    fn ready(&mut self, _out: &mut Vec<u32>) {}

    /// True when no thread will issue anything more.
    fn finished(&self) -> bool;

    /// Starts recording what its own recovery after a power cut needs
    /// (nothing by default).
    fn record_crash(&mut self) {}

    /// Its SQLite connection's open and check after a power cut, over the
    /// files as the card holds them (`None`: no SQLite connection).
    fn sqlite_recover(
        &self,
        _media: &dyn super::sqlite::recovery::FileMedia,
    ) -> Option<super::sqlite::recovery::SqliteCrash> {
        None
    }

    /// The statistics of its SQLite connection, if it has one (the
    /// report's `sqlite` section sums them).
    fn sqlite_stats(&self) -> Option<&SessionStats> {
        None
    }

    /// The program as [`std::any::Any`], for the report section of its own
    /// kind ([`super::programs`]).
    fn as_any(&self) -> &dyn std::any::Any;
}
