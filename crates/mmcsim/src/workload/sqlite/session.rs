//! A database connection executing statements one system call at a time:
//! the B-tree says which pages a statement touches, the pager which calls
//! that takes; the session hands them to its thread in order, binds the
//! descriptors its opens returned, and counts per statement (block writes
//! and cache flushes the host sent to the device meanwhile, sync calls,
//! wall time) and per file.
//!
//! Between statements the connection's page cache is emptied, as
//! AndroBench's `SQLiteDatabase.releaseMemory()` does (reference §1), so
//! every page a statement needs is read again through `pread` — from the
//! host's page cache when it holds the page.

use super::btree::{Pgno, Table, Touch};
use super::pager::{Pager, SqlFile, Step, UNBOUND_FD};
use super::{AutoVacuum, SqlOp, SqliteConfig};
use crate::host::{Fd, Syscall};
use crate::types::Ns;
use serde::Serialize;

pub use crate::workload::action::IoMark;

/// What a statement is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// Creating the database (schema: `android_metadata`, the table,
    /// `sqlite_sequence`), unmeasured.
    Create,
    /// An SQL statement on key `key` (ignored by INSERT); measured or not.
    Sql {
        /// The operation.
        op: SqlOp,
        /// Row key.
        key: u64,
        /// Counted in the per-transaction statistics.
        measured: bool,
    },
}

/// Calls and bytes of one file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FileCounts {
    /// System calls on the file (for the directory: its open, sync, close).
    pub calls: u64,
    /// write/pwrite calls.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// read/pread calls.
    pub reads: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// fsync/fdatasync calls.
    pub syncs: u64,
    /// open calls.
    pub opens: u64,
    /// ftruncate calls.
    pub truncates: u64,
    /// unlink calls.
    pub unlinks: u64,
}

impl FileCounts {
    /// Adds `o`.
    pub fn add(&mut self, o: &FileCounts) {
        self.calls += o.calls;
        self.writes += o.writes;
        self.bytes_written += o.bytes_written;
        self.reads += o.reads;
        self.bytes_read += o.bytes_read;
        self.syncs += o.syncs;
        self.opens += o.opens;
        self.truncates += o.truncates;
        self.unlinks += o.unlinks;
    }
}

/// Per-operation totals of measured statements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpTotals {
    /// Statements (transactions).
    pub transactions: u64,
    /// Summed wall time of the statements, ns.
    pub time_ns: u128,
    /// 4 KiB blocks written to the device during them.
    pub block_writes: u64,
    /// Cache flushes sent to the device during them.
    pub flushes: u64,
    /// fsync/fdatasync calls they made.
    pub syncs: u64,
}

impl OpTotals {
    /// Adds `o`.
    pub fn add(&mut self, o: &OpTotals) {
        self.transactions += o.transactions;
        self.time_ns += o.time_ns;
        self.block_writes += o.block_writes;
        self.flushes += o.flushes;
        self.syncs += o.syncs;
    }
}

/// Counters of measured statements.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionStats {
    /// By [`SqlOp::index`].
    pub ops: [OpTotals; 4],
    /// By [`SqlFile::index`].
    pub files: [FileCounts; 4],
    /// Calls that failed (returned −errno); a correct model makes none.
    pub failed_calls: u64,
    /// WAL checkpoints run.
    pub checkpoints: u64,
}

/// The statement in progress.
#[derive(Clone, Copy, Debug)]
struct Running {
    stmt: Stmt,
    start: Ns,
    io: IoMark,
    syncs: u64,
}

/// A connection to one database.
#[derive(Clone, Debug)]
pub struct Session {
    path: String,
    table: Table,
    pager: Pager,
    /// Root (only) page of `sqlite_sequence`.
    seq_page: Pgno,
    steps: Vec<Step>,
    next: usize,
    /// Descriptors by [`SqlFile::index`] (`UNBOUND_FD` = not open).
    fds: [Fd; 4],
    /// File of the call in progress, and whether it opens or closes it.
    last: Option<(SqlFile, bool, bool)>,
    /// The call in progress is a `mkdir` (EEXIST is expected).
    last_mkdir: bool,
    running: Option<Running>,
    /// Counters.
    pub stats: SessionStats,
    /// The instant of the call being decided ([`Session::tick`]).
    clock: Ns,
    /// What recovery after a power cut needs, while recorded.
    crash: Option<super::recovery::CrashLog>,
    cfg: SqliteConfig,
}

impl Session {
    /// A connection to database `path` (absolute) with `cfg`; rows of
    /// `row_bytes`. Nothing is created until [`Stmt::Create`] runs.
    pub fn new(path: &str, cfg: &SqliteConfig, row_bytes: u32) -> Session {
        let av = cfg.auto_vacuum == AutoVacuum::Full;
        // Pages 1 (schema), 2 (pointer map), android_metadata,
        // sqlite_sequence, then the table's root.
        let table = Table::new(cfg.page_size, row_bytes, av, 2);
        let seq_page = 3 + av as Pgno;
        Session {
            path: path.to_string(),
            table,
            pager: Pager::new(path, cfg.clone()),
            seq_page,
            steps: Vec::with_capacity(64),
            next: 0,
            fds: [UNBOUND_FD; 4],
            last: None,
            last_mkdir: false,
            running: None,
            stats: SessionStats::default(),
            clock: 0,
            crash: None,
            cfg: cfg.clone(),
        }
    }

    /// Starts recording what SQLite's recovery after a power cut needs.
    pub fn record_crash(&mut self) {
        self.crash = Some(super::recovery::CrashLog::new(
            self.cfg.journal_mode,
            self.cfg.page_size,
        ));
    }

    /// SQLite's open and check after a cut, over the files as the card
    /// holds them (`None` unless recorded).
    pub fn recover(
        &self,
        media: &dyn super::recovery::FileMedia,
    ) -> Option<super::recovery::SqliteCrash> {
        self.crash.as_ref().map(|c| c.recover(media, &self.path))
    }

    /// The current instant, ns (set before each [`Session::next_call`]).
    pub fn tick(&mut self, now: Ns) {
        self.clock = now;
    }

    /// Rows in the table.
    pub fn rows(&self) -> u64 {
        self.table.rows()
    }

    /// Starts statement `stmt` at `now`; `io` are the device counters.
    pub fn begin(&mut self, now: Ns, stmt: Stmt, io: IoMark) {
        self.steps.clear();
        self.next = 0;
        let touch = match stmt {
            Stmt::Create => {
                // mkdir -p of the database's directory (EEXIST is fine).
                let mut dir = String::new();
                let parts: Vec<&str> = self.path.split('/').filter(|s| !s.is_empty()).collect();
                for c in &parts[..parts.len().saturating_sub(1)] {
                    dir.push('/');
                    dir.push_str(c);
                    self.steps.push(Step {
                        file: SqlFile::Dir,
                        call: Syscall::Mkdir { path: dir.clone() },
                        content: super::pager::Content::None,
                    });
                }
                Touch {
                    read: Vec::new(),
                    write: (1..=self.table.pages()).collect(),
                    freed: 0,
                }
            }
            Stmt::Sql { op, key, .. } => match op {
                SqlOp::Insert => {
                    let (_, mut t) = self.table.insert();
                    // AUTOINCREMENT: sqlite_sequence's row is updated.
                    t.read.push(self.seq_page);
                    if !t.write.contains(&self.seq_page) {
                        t.write.push(self.seq_page);
                    }
                    t
                }
                SqlOp::Update => self.table.update(key),
                SqlOp::Delete => self.table.delete(key),
                SqlOp::Select => self.table.select(key),
            },
        };
        let before = self.pager.checkpoints;
        self.pager.transaction(
            &touch.read,
            &touch.write,
            self.table.pages(),
            &mut self.steps,
        );
        self.stats.checkpoints += self.pager.checkpoints - before;
        if let Some(log) = self.crash.as_mut() {
            let contents: Vec<_> = self.steps.iter().map(|s| s.content).collect();
            log.plan(&contents);
            log.header_synced(self.cfg.synchronous != super::Synchronous::Off);
        }
        self.running = Some(Running {
            stmt,
            start: now,
            io,
            syncs: 0,
        });
    }

    fn measured(&self) -> bool {
        matches!(
            self.running,
            Some(Running {
                stmt: Stmt::Sql { measured: true, .. },
                ..
            })
        )
    }

    /// The statement's next call, given the return value of the previous
    /// one; `None` when the statement is complete.
    pub fn next_call(&mut self, ret: Option<i64>) -> Option<Syscall> {
        if let (Some(log), Some(_)) = (self.crash.as_mut(), ret) {
            log.returned(self.clock);
        }
        if let (Some((file, opened, closed)), Some(ret)) = (self.last.take(), ret) {
            if ret < 0 && !self.last_mkdir {
                self.stats.failed_calls += 1;
            } else if opened {
                self.fds[file.index()] = ret as Fd;
            } else if closed {
                self.fds[file.index()] = UNBOUND_FD;
            }
        }
        let step = self.steps.get(self.next)?;
        self.next += 1;
        let file = step.file;
        let mut call = step.call.clone();
        let fd = self.fds[file.index()];
        let (mut opened, mut closed) = (false, false);
        let measured = self.measured();
        let c = &mut self.stats.files[file.index()];
        let count = measured && !matches!(call, Syscall::Mkdir { .. });
        if count {
            c.calls += 1;
        }
        match &mut call {
            Syscall::Open { .. } => {
                opened = true;
                c.opens += count as u64;
            }
            Syscall::Close { fd: f } => {
                *f = fd;
                closed = true;
            }
            Syscall::Pwrite { fd: f, bytes, .. } => {
                *f = fd;
                if count {
                    c.writes += 1;
                    c.bytes_written += *bytes;
                }
            }
            Syscall::Pread { fd: f, bytes, .. } => {
                *f = fd;
                if count {
                    c.reads += 1;
                    c.bytes_read += *bytes;
                }
            }
            Syscall::Fdatasync { fd: f } | Syscall::Fsync { fd: f } => {
                *f = fd;
                c.syncs += count as u64;
                if let Some(r) = self.running.as_mut() {
                    r.syncs += 1;
                }
            }
            Syscall::Ftruncate { fd: f, .. } => {
                *f = fd;
                c.truncates += count as u64;
            }
            Syscall::Unlink { .. } => c.unlinks += count as u64,
            _ => {}
        }
        if let Some(log) = self.crash.as_mut() {
            log.issued(self.next - 1, file, &call, self.clock);
        }
        self.last = Some((file, opened, closed));
        self.last_mkdir = matches!(call, Syscall::Mkdir { .. });
        Some(call)
    }

    /// Ends the statement at `now` (device counters `io`); returns its
    /// wall time, ns.
    pub fn end(&mut self, now: Ns, io: IoMark) -> Ns {
        let Some(r) = self.running.take() else {
            return 0;
        };
        let took = now.saturating_sub(r.start);
        if let Stmt::Sql {
            op, measured: true, ..
        } = r.stmt
        {
            let o = &mut self.stats.ops[op.index()];
            o.transactions += 1;
            o.time_ns += u128::from(took);
            o.block_writes += io.block_writes - r.io.block_writes;
            o.flushes += io.flushes - r.io.flushes;
            o.syncs += r.syncs;
        }
        took
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a statement with every call succeeding (opens return fd 3).
    fn run(s: &mut Session, stmt: Stmt) -> Vec<Syscall> {
        s.begin(0, stmt, IoMark::default());
        let mut calls = Vec::new();
        let mut ret = None;
        while let Some(c) = s.next_call(ret) {
            ret = Some(if matches!(c, Syscall::Open { .. }) {
                3
            } else {
                0
            });
            calls.push(c);
        }
        s.end(1_000, IoMark::default());
        calls
    }

    #[test]
    fn an_insert_journals_three_pages_and_binds_descriptors() {
        let truncate = SqliteConfig {
            journal_mode: super::super::JournalMode::Truncate,
            ..SqliteConfig::default()
        };
        let mut s = Session::new("/data/t/t.db", &truncate, 100);
        run(&mut s, Stmt::Create);
        let calls = run(
            &mut s,
            Stmt::Sql {
                op: SqlOp::Insert,
                key: 0,
                measured: true,
            },
        );
        assert!(calls
            .iter()
            .all(|c| !matches!(c, Syscall::Pwrite { fd: 0, .. })));
        let j = &s.stats.files[SqlFile::Journal.index()];
        // Header + nRec + 3 records × 3 writes (page 1, leaf, sequence).
        assert_eq!(j.writes, 11);
        assert_eq!(s.stats.ops[SqlOp::Insert.index()].transactions, 1);
        assert_eq!(s.stats.ops[SqlOp::Insert.index()].syncs, 4);
    }
}
