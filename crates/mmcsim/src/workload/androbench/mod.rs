//! The AndroBench 3.4 and 4.1 suites (reference android-workloads.md §1-§2)
//! as ordered phases of application threads: preparation, sequential
//! read, sequential write, random read, random write, SQLite insert,
//! update and delete, repeated `repetitions` times; phase N+1 starts when
//! every thread of phase N is done. Each metric is computed the way the
//! app computes it: from the time spent inside the timed calls only
//! (v4's random tests: operations of all threads until the first thread
//! finishes, over that wall time), averaged over the repetitions.

mod plan;

use super::action::Action;
use super::sqlite::session::{IoMark, Session, Stmt};
use super::sqlite::{SqlOp, SqliteConfig};
use crate::engine::{component_rng, SimRng};
use crate::host::{Fd, Syscall};
use crate::types::{Ns, NS_PER_S};
use plan::{Kind, Phase, Scripted};
use rand::Rng;
use serde::{Deserialize, Deserializer, Serialize};

/// AndroBench release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum Version {
    /// 3.4 (`com.andromeda.androbench2`, 2012).
    #[serde(rename = "3.4")]
    V3_4,
    /// 4.1 (eight threads, 64 MB per thread).
    #[serde(rename = "4.1")]
    V4_1,
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Version, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum V {
            Text(String),
            Num(f64),
        }
        let text = match V::deserialize(d)? {
            V::Text(t) => t,
            V::Num(n) => format!("{n}"),
        };
        match text.trim() {
            "3.4" => Ok(Version::V3_4),
            "4.1" => Ok(Version::V4_1),
            other => Err(serde::de::Error::custom(format!(
                "androbench.version = {other:?}: expected \"3.4\" or \"4.1\""
            ))),
        }
    }
}

/// The `[androbench]` section: the release, and any of its settings
/// changed from the app's defaults (reference §1-§2 tables).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AndrobenchSpec {
    /// "3.4" or "4.1".
    pub version: Version,
    /// Read-test file (3.4: 32 MiB) or per-thread file (4.1: 64 MiB), MiB.
    #[serde(default)]
    pub file_mib: Option<u64>,
    /// 3.4's write-test file, MiB (2).
    #[serde(default)]
    pub write_file_mib: Option<u64>,
    /// Sequential buffer, KiB (3.4: 256; 4.1: 32768).
    #[serde(default)]
    pub seq_buffer_kib: Option<u64>,
    /// Random buffer, KiB (4).
    #[serde(default)]
    pub rand_buffer_kib: Option<u64>,
    /// 4.1's random operations per thread (2048).
    #[serde(default)]
    pub rand_ops: Option<u64>,
    /// 4.1's threads (8; 1-32).
    #[serde(default)]
    pub threads: Option<u32>,
    /// SQLite statements per test (3.4: 300; 4.1: 1024).
    #[serde(default)]
    pub sqlite_transactions: Option<u64>,
    /// Repetitions averaged (3).
    #[serde(default)]
    pub repetitions: Option<u32>,
    /// Bytes of a SQLite row's record (≈ 100, reference §1).
    #[serde(default)]
    pub row_bytes: Option<u32>,
}

/// The suite's settings, defaults filled in.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Settings {
    /// Release.
    pub version: Version,
    /// Read-test / per-thread file, MiB.
    pub file_mib: u64,
    /// 3.4's write-test file, MiB.
    pub write_file_mib: u64,
    /// Sequential buffer, KiB.
    pub seq_buffer_kib: u64,
    /// Random buffer, KiB.
    pub rand_buffer_kib: u64,
    /// Random operations per thread (3.4: every slot of its file).
    pub rand_ops: u64,
    /// Threads of the random tests.
    pub threads: u32,
    /// SQLite statements per test.
    pub sqlite_transactions: u64,
    /// Repetitions averaged.
    pub repetitions: u32,
    /// SQLite row record, bytes.
    pub row_bytes: u32,
}

impl AndrobenchSpec {
    /// The settings with the release's defaults; errors name the key.
    pub fn settings(&self, sqlite: &SqliteConfig) -> Result<Settings, crate::error::SettingError> {
        let v4 = self.version == Version::V4_1;
        let s = Settings {
            version: self.version,
            file_mib: self.file_mib.unwrap_or(if v4 { 64 } else { 32 }),
            write_file_mib: self.write_file_mib.unwrap_or(2),
            seq_buffer_kib: self.seq_buffer_kib.unwrap_or(if v4 { 32768 } else { 256 }),
            rand_buffer_kib: self.rand_buffer_kib.unwrap_or(4),
            rand_ops: 0,
            threads: self.threads.unwrap_or(if v4 { 8 } else { 1 }),
            sqlite_transactions: self
                .sqlite_transactions
                .unwrap_or(if v4 { 1024 } else { 300 }),
            repetitions: self.repetitions.unwrap_or(3),
            row_bytes: self.row_bytes.unwrap_or(100),
        };
        let bad = |k: &str, value: String, want: &str| Err(invalid(k, value, want.to_string()));
        if s.file_mib == 0 || s.file_mib > 4096 {
            return bad("file_mib", s.file_mib.to_string(), "1..=4096 MiB");
        }
        if s.write_file_mib == 0 || s.write_file_mib > 4096 {
            return bad(
                "write_file_mib",
                s.write_file_mib.to_string(),
                "1..=4096 MiB",
            );
        }
        if s.seq_buffer_kib == 0
            || s.seq_buffer_kib % 4 != 0
            || s.seq_buffer_kib > s.file_mib * 1024
        {
            return bad(
                "seq_buffer_kib",
                s.seq_buffer_kib.to_string(),
                "a multiple of 4 KiB no larger than the file",
            );
        }
        if s.rand_buffer_kib == 0
            || s.rand_buffer_kib % 4 != 0
            || s.rand_buffer_kib > s.write_file_mib.min(s.file_mib) * 1024
        {
            return bad(
                "rand_buffer_kib",
                s.rand_buffer_kib.to_string(),
                "a multiple of 4 KiB no larger than the files",
            );
        }
        if !(1..=32).contains(&s.threads) || (!v4 && s.threads != 1) {
            return bad(
                "threads",
                s.threads.to_string(),
                if v4 {
                    "1..=32"
                } else {
                    "1 (3.4 is single-threaded)"
                },
            );
        }
        if s.sqlite_transactions == 0 {
            return bad("sqlite_transactions", "0".into(), "at least 1");
        }
        if !(1..=100).contains(&s.repetitions) {
            return bad("repetitions", s.repetitions.to_string(), "1..=100");
        }
        let max = super::sqlite::btree::max_local_payload(sqlite.page_size);
        if s.row_bytes == 0 || s.row_bytes > max {
            return bad(
                "row_bytes",
                s.row_bytes.to_string(),
                &format!("1..={max} bytes"),
            );
        }
        let rand_ops = self.rand_ops(&s)?;
        Ok(Settings { rand_ops, ..s })
    }

    /// The random tests' operations per run: the release's default (or
    /// the value given, 4.1 only), at most one per slot of the file.
    fn rand_ops(&self, s: &Settings) -> Result<u64, crate::error::SettingError> {
        let bad = |value: String, want: String| Err(invalid("rand_ops", value, want));
        let slots = s.file_mib * 1024 / s.rand_buffer_kib;
        let rand_ops = if s.version == Version::V4_1 {
            self.rand_ops.unwrap_or(2048)
        } else {
            if let Some(given) = self.rand_ops {
                return bad(
                    given.to_string(),
                    "nothing for 3.4 (it visits every slot of its files)".into(),
                );
            }
            slots
        };
        if rand_ops == 0 || rand_ops > slots {
            return bad(
                rand_ops.to_string(),
                format!("1..={slots} (distinct slots of the file)"),
            );
        }
        Ok(rand_ops)
    }
}

/// Timed work of one test in one repetition.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Acc {
    /// Summed time inside the timed calls (statements for SQLite), ns.
    timed_ns: u128,
    /// Bytes the timed calls moved.
    bytes: u64,
    /// Timed operations (reads, writes, statements).
    ops: u64,
    /// 4.1 random tests: wall time to the first finisher, ns, and the
    /// operations all threads completed by then.
    first_finish_ns: Option<Ns>,
    ops_at_finish: u64,
}

/// A thread's progress through its phase script.
#[derive(Clone, Debug, Default)]
struct ThreadRun {
    calls: Vec<Scripted>,
    next: usize,
    /// Its open descriptor.
    fd: Fd,
    /// Issue time of the timed call in progress.
    timed_since: Option<Ns>,
    /// The call in progress is an open.
    opening: bool,
    /// Done with the phase.
    idle: bool,
}

/// The AndroBench suite: its phases, threads and metrics.
#[derive(Debug)]
pub struct Suite {
    settings: Settings,
    seed: u64,
    phases: Vec<Phase>,
    phase: usize,
    phase_start: Ns,
    threads: Vec<ThreadRun>,
    ready: Vec<u32>,
    /// The SQLite connection (thread 0).
    session: Session,
    /// SQLite statements left in the phase, reversed.
    stmts: Vec<Stmt>,
    stmt_busy: bool,
    /// The database exists.
    created: bool,
    /// The statement in progress creates the database (untimed).
    last_create: bool,
    /// First rowid of the current repetition's rows.
    first_rowid: u64,
    /// By [`Kind::index`] × repetition.
    acc: Vec<[Acc; plan::MEASURED]>,
    done: bool,
    /// The call [`Suite::next`] just returned crosses from the app into
    /// native code: every Java file call, the first call of a statement.
    crossing: bool,
}

/// The app's data directory (`/data/data/<package>`).
const APP_DIR: &str = "/data/data/com.andromeda.androbench2";

impl Suite {
    /// The suite with `settings`; SQLite on `sqlite`; random offsets
    /// from streams of `seed`.
    pub fn new(settings: Settings, sqlite: &SqliteConfig, seed: u64) -> Suite {
        let phases = plan::phases(&settings);
        let db = format!("{APP_DIR}/databases/testing_sqlite.db");
        let n = settings.threads.max(1) as usize;
        let mut s = Suite {
            session: Session::new(&db, sqlite, settings.row_bytes),
            acc: vec![[Acc::default(); plan::MEASURED]; settings.repetitions as usize],
            settings,
            seed,
            phases,
            phase: 0,
            phase_start: 0,
            threads: vec![ThreadRun::default(); n],
            ready: Vec::new(),
            stmts: Vec::new(),
            stmt_busy: false,
            created: false,
            last_create: false,
            first_rowid: 1,
            done: false,
            crossing: false,
        };
        s.enter_phase(0, 0);
        s
    }

    /// The threads: the app's main thread, then the 4.1 workers.
    pub fn threads(&self) -> Vec<(String, u32)> {
        (0..self.threads.len() as u32)
            .map(|i| {
                let name = if i == 0 {
                    "androbench".to_string()
                } else {
                    format!("androbench-worker{i}")
                };
                (name, 9000 + i)
            })
            .collect()
    }

    /// True when every phase ran.
    pub fn finished(&self) -> bool {
        self.done
    }

    /// True when the call [`Suite::next`] just returned crosses from the
    /// app into native code (a Java file call, or the first call of a
    /// SQLite statement).
    pub fn crossing(&self) -> bool {
        self.crossing
    }

    /// Threads that may go on now.
    pub fn ready(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.ready);
    }

    fn rng(&self, what: &str) -> SimRng {
        component_rng(self.seed, &format!("androbench.{what}"))
    }

    /// Starts phase `i` at `now`: builds its threads' calls.
    fn enter_phase(&mut self, i: usize, now: Ns) {
        self.phase = i;
        self.phase_start = now;
        let Some(p) = self.phases.get(i).cloned() else {
            self.done = true;
            return;
        };
        if p.kind.is_sqlite() {
            self.plan_sqlite(p.kind, p.rep);
            self.threads[0].idle = false;
            self.ready.push(0);
            return;
        }
        for t in self.threads.iter_mut() {
            t.idle = true;
        }
        let mut rng = self.rng(&format!("rep{}.{:?}", p.rep, p.kind));
        for t in 0..p.threads {
            let calls = plan::calls(&self.settings, p.kind, t, &mut rng);
            self.threads[t as usize] = ThreadRun {
                calls,
                ..ThreadRun::default()
            };
            self.ready.push(t);
        }
    }

    fn plan_sqlite(&mut self, kind: Kind, rep: u32) {
        let n = self.settings.sqlite_transactions;
        let op = match kind {
            Kind::Insert => SqlOp::Insert,
            Kind::Update => SqlOp::Update,
            _ => SqlOp::Delete,
        };
        let mut keys: Vec<u64> = (0..n).collect();
        if op != SqlOp::Insert {
            let mut rng = self.rng(&format!("rep{rep}.{kind:?}"));
            for i in (1..keys.len()).rev() {
                let j = rng.random_range(0..=i);
                keys.swap(i, j);
            }
        }
        if op == SqlOp::Insert {
            self.first_rowid = self.session_next_rowid();
        }
        let base = self.first_rowid;
        self.stmts = keys
            .iter()
            .rev()
            .map(|&k| Stmt::Sql {
                op,
                key: base + k,
                measured: true,
            })
            .collect();
        if !self.created {
            self.created = true;
            self.stmts.push(Stmt::Create);
        }
    }

    fn session_next_rowid(&self) -> u64 {
        self.session_rows_inserted() + 1
    }

    fn session_rows_inserted(&self) -> u64 {
        // Rowids are never reused (AUTOINCREMENT): every earlier
        // repetition inserted `sqlite_transactions` rows.
        let reps_before = self.phases[..self.phase]
            .iter()
            .filter(|p| p.kind == Kind::Insert)
            .count() as u64;
        reps_before * self.settings.sqlite_transactions
    }

    /// Thread `local`'s next action at `now`.
    pub fn next(&mut self, now: Ns, local: u32, ret: Option<i64>, io: IoMark) -> Action {
        self.crossing = false;
        if self.done {
            return Action::Idle;
        }
        let p = self.phases[self.phase];
        let action = if p.kind.is_sqlite() {
            self.sqlite_next(now, p, ret, io)
        } else {
            let a = self.file_next(now, p, local, ret);
            self.crossing = matches!(a, Action::Call(_));
            a
        };
        if action == Action::Idle {
            self.threads[local as usize].idle = true;
            let n = if p.kind.is_sqlite() {
                1
            } else {
                p.threads as usize
            };
            if self.threads[..n].iter().all(|t| t.idle) {
                self.enter_phase(self.phase + 1, now);
            }
        }
        action
    }

    fn acc(&mut self, p: &Phase) -> Option<&mut Acc> {
        let i = p.kind.index()?;
        Some(&mut self.acc[p.rep as usize][i])
    }

    fn sqlite_next(&mut self, now: Ns, p: Phase, ret: Option<i64>, io: IoMark) -> Action {
        self.session.tick(now);
        if self.stmt_busy {
            if let Some(c) = self.session.next_call(ret) {
                return Action::Call(c);
            }
            self.stmt_busy = false;
            let took = self.session.end(now, io);
            if !self.last_create {
                if let Some(a) = self.acc(&p) {
                    a.timed_ns += u128::from(took);
                    a.ops += 1;
                }
            }
        }
        let Some(stmt) = self.stmts.pop() else {
            return Action::Idle;
        };
        self.last_create = stmt == Stmt::Create;
        self.session.begin(now, stmt, io);
        self.stmt_busy = true;
        match self.session.next_call(None) {
            Some(c) => {
                self.crossing = true;
                Action::Call(c)
            }
            None => self.sqlite_next(now, p, None, io),
        }
    }

    /// A file test's thread: accounts the call that returned, then issues
    /// its next scripted call. In 4.1's random tests the first thread to
    /// finish stops the others (they skip to their close).
    fn file_next(&mut self, now: Ns, p: Phase, local: u32, ret: Option<i64>) -> Action {
        let stop_at_first = self.settings.version == Version::V4_1
            && matches!(p.kind, Kind::RandRead | Kind::RandWrite);
        let phase_start = self.phase_start;
        let mut finished_now = false;
        let mut account = None;
        {
            let th = &mut self.threads[local as usize];
            if let Some(ret) = ret {
                if th.opening && ret >= 0 {
                    th.fd = ret as Fd;
                }
                th.opening = false;
                if let Some(since) = th.timed_since.take() {
                    let prev = &th.calls[th.next - 1];
                    account = Some((now - since, prev.op, prev.bytes));
                    if prev.op && !th.calls[th.next..].iter().any(|c| c.op) {
                        finished_now = true;
                    }
                }
            }
        }
        if let Some((took, op, bytes)) = account {
            if let Some(a) = self.acc(&p) {
                a.timed_ns += u128::from(took);
                if op {
                    a.ops += 1;
                    a.bytes += bytes;
                }
                if stop_at_first && finished_now && a.first_finish_ns.is_none() {
                    a.first_finish_ns = Some(now - phase_start);
                    a.ops_at_finish = a.ops;
                }
            }
        }
        let stopped = stop_at_first
            && p.kind
                .index()
                .is_some_and(|i| self.acc[p.rep as usize][i].first_finish_ns.is_some());
        let th = &mut self.threads[local as usize];
        if stopped && th.calls[th.next..].iter().any(|c| c.op) {
            // Skip the remaining operations; close the file.
            th.next = th.calls.len() - 1;
        }
        let Some(s) = th.calls.get(th.next) else {
            return Action::Idle;
        };
        th.next += 1;
        let mut call = s.call.clone();
        crate::workload::script::bind_fd(&mut call, th.fd);
        th.opening = matches!(call, Syscall::Open { .. });
        th.timed_since = s.timed.then_some(now);
        Action::Call(call)
    }

    /// The result screen's numbers: each the mean over the repetitions,
    /// with every repetition's own numbers beside them.
    pub fn report(&self) -> AndrobenchReport {
        let secs = |ns: u128| ns as f64 / NS_PER_S as f64;
        let mb_s = |a: &Acc| {
            if a.timed_ns == 0 {
                0.0
            } else {
                a.bytes as f64 / MIB / secs(a.timed_ns)
            }
        };
        let per_s = |a: &Acc| match a.first_finish_ns {
            Some(w) if w > 0 => a.ops_at_finish as f64 / secs(u128::from(w)),
            _ if a.timed_ns > 0 => a.ops as f64 / secs(a.timed_ns),
            _ => 0.0,
        };
        fn at(r: &[Acc; plan::MEASURED], k: Kind) -> &Acc {
            &r[k.index().expect("a measured test")]
        }
        let runs: Vec<AndrobenchRun> = self
            .acc
            .iter()
            .map(|r| AndrobenchRun {
                seq_read_mb_s: mb_s(at(r, Kind::SeqRead)),
                seq_write_mb_s: mb_s(at(r, Kind::SeqWrite)),
                rand_read_iops: per_s(at(r, Kind::RandRead)),
                rand_write_iops: per_s(at(r, Kind::RandWrite)),
                sqlite_insert_tps: per_s(at(r, Kind::Insert)),
                sqlite_update_tps: per_s(at(r, Kind::Update)),
                sqlite_delete_tps: per_s(at(r, Kind::Delete)),
            })
            .collect();
        let reps = runs.len().max(1) as f64;
        let mean = |f: fn(&AndrobenchRun) -> f64| runs.iter().map(f).sum::<f64>() / reps;
        AndrobenchReport {
            settings: self.settings.clone(),
            mean: AndrobenchRun {
                seq_read_mb_s: mean(|r| r.seq_read_mb_s),
                seq_write_mb_s: mean(|r| r.seq_write_mb_s),
                rand_read_iops: mean(|r| r.rand_read_iops),
                rand_write_iops: mean(|r| r.rand_write_iops),
                sqlite_insert_tps: mean(|r| r.sqlite_insert_tps),
                sqlite_update_tps: mean(|r| r.sqlite_update_tps),
                sqlite_delete_tps: mean(|r| r.sqlite_delete_tps),
            },
            runs,
        }
    }

    /// The SQLite connection's counters.
    pub fn sqlite(&self) -> &Session {
        &self.session
    }
}

/// The app's MB (file sizes are in units of 2^20 bytes).
const MIB: f64 = 1_048_576.0;

/// The report's `androbench` section: the settings, the seven numbers of
/// the app's result screen (each the mean over the repetitions) and every
/// repetition's own numbers.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AndrobenchReport {
    /// The settings as run.
    pub settings: Settings,
    /// The result screen: the mean of each number over the repetitions.
    #[serde(flatten)]
    pub mean: AndrobenchRun,
    /// The same seven numbers for each repetition, in run order (the app
    /// shows only their mean; the first run after preconditioning can
    /// differ, e.g. when its writes meet GC that later runs do not).
    pub runs: Vec<AndrobenchRun>,
}

/// A line of the result screen: label, mean, unit, and the repetition's
/// own value.
type ScreenLine = (&'static str, f64, &'static str, fn(&AndrobenchRun) -> f64);

/// The seven numbers of the result screen, of one repetition or their mean.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AndrobenchRun {
    /// Sequential read, MB/s.
    pub seq_read_mb_s: f64,
    /// Sequential write, MB/s.
    pub seq_write_mb_s: f64,
    /// Random read, IOPS.
    pub rand_read_iops: f64,
    /// Random write, IOPS.
    pub rand_write_iops: f64,
    /// SQLite insert, transactions/s.
    pub sqlite_insert_tps: f64,
    /// SQLite update, transactions/s.
    pub sqlite_update_tps: f64,
    /// SQLite delete, transactions/s.
    pub sqlite_delete_tps: f64,
}

impl AndrobenchReport {
    /// The app's result screen, as text; with more than one repetition,
    /// each line also lists the repetitions' own numbers in run order.
    pub fn screen(&self) -> String {
        let v = match self.settings.version {
            Version::V3_4 => "3.4",
            Version::V4_1 => "4.1",
        };
        let lines: [ScreenLine; 7] = [
            ("Sequential Read", self.mean.seq_read_mb_s, "MB/s", |r| {
                r.seq_read_mb_s
            }),
            ("Sequential Write", self.mean.seq_write_mb_s, "MB/s", |r| {
                r.seq_write_mb_s
            }),
            ("Random Read", self.mean.rand_read_iops, "IOPS", |r| {
                r.rand_read_iops
            }),
            ("Random Write", self.mean.rand_write_iops, "IOPS", |r| {
                r.rand_write_iops
            }),
            ("SQLite Insert", self.mean.sqlite_insert_tps, "TPS", |r| {
                r.sqlite_insert_tps
            }),
            ("SQLite Update", self.mean.sqlite_update_tps, "TPS", |r| {
                r.sqlite_update_tps
            }),
            ("SQLite Delete", self.mean.sqlite_delete_tps, "TPS", |r| {
                r.sqlite_delete_tps
            }),
        ];
        let mut out = format!(
            "AndroBench {v} results (mean of {} runs)\n",
            self.settings.repetitions
        );
        for (name, value, unit, per_run) in lines {
            out.push_str(&format!("  {name:<17} {value:>10.2} {unit}"));
            if self.runs.len() > 1 {
                let each: Vec<String> = self
                    .runs
                    .iter()
                    .map(|r| format!("{:.2}", per_run(r)))
                    .collect();
                let pad = 5 - unit.len();
                out.push_str(&format!("{:pad$}  (runs: {})", "", each.join(", ")));
            }
            out.push('\n');
        }
        out
    }
}

impl super::program::Program for Suite {
    fn threads(&self, _index: usize) -> Vec<(String, u32)> {
        Suite::threads(self)
    }

    fn start(&mut self, out: &mut Vec<u32>) -> Ns {
        Suite::ready(self, out);
        0
    }

    fn next(&mut self, now: Ns, local: u32, ret: Option<i64>, io: IoMark) -> Action {
        Suite::next(self, now, local, ret, io)
    }

    fn crossing(&self) -> bool {
        Suite::crossing(self)
    }

    fn ready(&mut self, out: &mut Vec<u32>) {
        Suite::ready(self, out);
    }

    fn finished(&self) -> bool {
        Suite::finished(self)
    }

    fn sqlite_stats(&self) -> Option<&super::sqlite::session::SessionStats> {
        Some(&self.sqlite().stats)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `androbench.{key} = {value}: expected {want}`.
fn invalid(key: &str, value: String, want: String) -> crate::error::SettingError {
    crate::error::SettingError::invalid(format!("androbench.{key}"), value, want)
}
