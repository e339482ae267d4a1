//! Workload programs: threads whose calls are decided as they run — SQLite
//! jobs ([`super::sqlite::job`]) and the AndroBench suite
//! ([`super::androbench`]). The jobs stage creates their host tasks, hands
//! each thread's previous return value in and issues what it asks for.

use super::androbench::Suite;
use super::sqlite::job::SqliteJob;
use super::sqlite::session::IoMark;
use crate::host::Syscall;
use crate::types::Ns;

/// What a program thread does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Issue this system call.
    Call(Syscall),
    /// Sleep this long, ns, then ask again.
    Sleep(Ns),
    /// Nothing for now (its phase is over or it finished); the program
    /// names it in [`Program::ready`] when it may go on.
    Idle,
}

/// A program and its threads.
#[derive(Debug)]
pub enum Program {
    /// A `[[sqlite_jobs]]` entry (one thread).
    Sqlite(Box<SqliteJob>),
    /// The AndroBench suite.
    Androbench(Box<Suite>),
}

impl Program {
    /// Its threads: (name, pid).
    pub fn threads(&self, index: usize) -> Vec<(String, u32)> {
        match self {
            Program::Sqlite(j) => vec![(
                j.spec.name.clone(),
                j.spec.pid.unwrap_or(7000 + index as u32),
            )],
            Program::Androbench(s) => s.threads(),
        }
    }

    /// When the program starts, ns, and which threads run first.
    pub fn start(&mut self, out: &mut Vec<u32>) -> Ns {
        match self {
            Program::Sqlite(j) => {
                out.push(0);
                j.start_ns()
            }
            Program::Androbench(s) => {
                s.ready(out);
                0
            }
        }
    }

    /// Thread `local`'s next action at `now` (`ret`: its previous call's
    /// return value; `io`: the device counters).
    pub fn next(&mut self, now: Ns, local: u32, ret: Option<i64>, io: IoMark) -> Action {
        match self {
            Program::Sqlite(j) => j.next(now, ret, io),
            Program::Androbench(s) => s.next(now, local, ret, io),
        }
    }

    /// True when the call [`Program::next`] just returned crosses from
    /// the app into native code (JNI): every Java file call, but only the
    /// first system call of a SQLite statement.
    pub fn crossing(&self) -> bool {
        match self {
            Program::Sqlite(j) => j.crossing(),
            Program::Androbench(s) => s.crossing(),
        }
    }

    /// Threads that may go on now (a new phase began).
    pub fn ready(&mut self, out: &mut Vec<u32>) {
        if let Program::Androbench(s) = self {
            s.ready(out);
        }
    }

    /// True when no thread will issue anything more.
    pub fn finished(&self) -> bool {
        match self {
            Program::Sqlite(j) => j.finished(),
            Program::Androbench(s) => s.finished(),
        }
    }
}

/// The `sqlite` report of every program with a SQLite connection, under
/// `config`; `None` when no program has one.
pub fn sqlite_report(
    programs: &[Program],
    config: &super::sqlite::SqliteConfig,
) -> Option<super::sqlite::report::SqliteReport> {
    let stats: Vec<&super::sqlite::session::SessionStats> = programs
        .iter()
        .map(|p| match p {
            Program::Sqlite(j) => &j.session.stats,
            Program::Androbench(s) => &s.sqlite().stats,
        })
        .collect();
    (!stats.is_empty()).then(|| super::sqlite::report::SqliteReport::new(config, stats))
}

/// The `androbench` report, when the suite ran.
pub fn androbench_report(programs: &[Program]) -> Option<super::androbench::AndrobenchReport> {
    programs.iter().find_map(|p| match p {
        Program::Androbench(s) => Some(s.report()),
        Program::Sqlite(_) => None,
    })
}
