//! A `[[sqlite_jobs]]` entry as an application thread: it creates its
//! database, fills the table (unmeasured) when its operation needs rows,
//! then runs its measured statements, each one auto-committed
//! transaction.

use super::session::{IoMark, Session, Stmt};
use super::{SqlOp, SqliteConfig, SqliteJobSpec};
use crate::engine::SimRng;
use crate::types::{us_to_ns, Ns, NS_PER_MS};
use crate::workload::action::Action;
use rand::Rng;

/// One SQLite job's thread.
#[derive(Clone, Debug)]
pub struct SqliteJob {
    /// The job as written.
    pub spec: SqliteJobSpec,
    /// Its connection.
    pub session: Session,
    /// Statements still to run after the current one, in reverse order.
    todo: Vec<Stmt>,
    /// A statement is in progress.
    busy: bool,
    think: Ns,
    done: bool,
    /// The call just returned by [`SqliteJob::next`] is its statement's
    /// first: the app crossed into native code for it (JNI, once per
    /// statement).
    crossing: bool,
}

impl SqliteJob {
    /// The thread of job `spec` (index `i`), keys shuffled with `rng`.
    pub fn new(spec: &SqliteJobSpec, cfg: &SqliteConfig, rng: &mut SimRng) -> SqliteJob {
        let path = spec
            .path
            .clone()
            .unwrap_or_else(|| format!("/data/data/{0}/databases/{0}.db", spec.name));
        let prefill = spec.prefill();
        let mut keys: Vec<u64> = (1..=prefill).collect();
        for i in (1..keys.len()).rev() {
            let j = rng.random_range(0..=i);
            keys.swap(i, j);
        }
        let mut plan = vec![Stmt::Create];
        plan.extend((0..prefill).map(|_| Stmt::Sql {
            op: SqlOp::Insert,
            key: 0,
            measured: false,
        }));
        plan.extend((0..spec.transactions).map(|i| Stmt::Sql {
            op: spec.op,
            key: if keys.is_empty() {
                0
            } else {
                keys[(i % keys.len() as u64) as usize]
            },
            measured: true,
        }));
        plan.reverse();
        SqliteJob {
            spec: spec.clone(),
            session: Session::new(&path, cfg, spec.row_bytes),
            todo: plan,
            busy: false,
            think: us_to_ns(spec.think_time_us),
            done: false,
            crossing: false,
        }
    }

    /// When the thread starts, ns.
    pub fn start_ns(&self) -> Ns {
        (self.spec.start_ms * NS_PER_MS as f64).round() as Ns
    }

    /// True once every statement ran.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// True when the call [`SqliteJob::next`] just returned starts a
    /// statement (the app's one JNI crossing for it).
    pub fn crossing(&self) -> bool {
        self.crossing
    }

    /// The thread's next action at `now`; `ret` is its previous call's
    /// return value.
    pub fn next(&mut self, now: Ns, ret: Option<i64>, io: IoMark) -> Action {
        self.crossing = false;
        self.session.tick(now);
        if self.busy {
            if let Some(c) = self.session.next_call(ret) {
                return Action::Call(c);
            }
            self.session.end(now, io);
            self.busy = false;
            if self.think > 0 && !self.todo.is_empty() {
                return Action::Sleep(self.think);
            }
        }
        let Some(stmt) = self.todo.pop() else {
            self.done = true;
            return Action::Idle;
        };
        self.session.begin(now, stmt, io);
        self.busy = true;
        match self.session.next_call(None) {
            Some(c) => {
                self.crossing = true;
                Action::Call(c)
            }
            None => self.next(now, None, io),
        }
    }
}

impl crate::workload::program::Program for SqliteJob {
    fn threads(&self, index: usize) -> Vec<(String, u32)> {
        vec![(
            self.spec.name.clone(),
            self.spec.pid.unwrap_or(7000 + index as u32),
        )]
    }

    fn start(&mut self, out: &mut Vec<u32>) -> Ns {
        out.push(0);
        self.start_ns()
    }

    fn next(&mut self, now: Ns, _local: u32, ret: Option<i64>, io: IoMark) -> Action {
        SqliteJob::next(self, now, ret, io)
    }

    fn crossing(&self) -> bool {
        SqliteJob::crossing(self)
    }

    fn finished(&self) -> bool {
        SqliteJob::finished(self)
    }

    fn record_crash(&mut self) {
        self.session.record_crash();
    }

    fn sqlite_recover(
        &self,
        media: &dyn super::recovery::FileMedia,
    ) -> Option<super::recovery::SqliteCrash> {
        self.session.recover(media)
    }

    fn sqlite_stats(&self) -> Option<&super::session::SessionStats> {
        Some(&self.session.stats)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
