//! The report's `sqlite` section: the settings, per-transaction device
//! work by operation, and per-file system-call counts.

use super::pager::SqlFile;
use super::session::{FileCounts, OpTotals, SessionStats};
use super::{SqlOp, SqliteConfig};
use crate::types::NS_PER_S;
use serde::Serialize;

/// Means per measured transaction of one operation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerTransaction {
    /// Transactions measured.
    pub transactions: u64,
    /// 4 KiB blocks written to the device per transaction (data, journal
    /// files, JBD2 log, metadata written back meanwhile).
    pub block_writes: f64,
    /// Cache flushes sent to the device per transaction.
    pub flushes: f64,
    /// fsync/fdatasync calls per transaction.
    pub syncs: f64,
    /// Transactions per second of statement wall time.
    pub tps: f64,
}

impl PerTransaction {
    fn from(o: &OpTotals) -> PerTransaction {
        let n = o.transactions.max(1) as f64;
        PerTransaction {
            transactions: o.transactions,
            block_writes: o.block_writes as f64 / n,
            flushes: o.flushes as f64 / n,
            syncs: o.syncs as f64 / n,
            tps: if o.time_ns > 0 {
                o.transactions as f64 / (o.time_ns as f64 / NS_PER_S as f64)
            } else {
                0.0
            },
        }
    }
}

/// Per-operation means (`sqlite.per_transaction`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerOp {
    /// INSERT.
    pub insert: PerTransaction,
    /// UPDATE.
    pub update: PerTransaction,
    /// DELETE.
    pub delete: PerTransaction,
    /// SELECT (absent when none ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub select: Option<PerTransaction>,
}

/// System calls per file of the measured statements (`sqlite.files`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerFile {
    /// The database file.
    pub db: FileCounts,
    /// The rollback journal (`-journal`).
    pub journal: FileCounts,
    /// The write-ahead log (`-wal`).
    pub wal: FileCounts,
    /// The databases' directory (journal directory syncs).
    pub dir: FileCounts,
}

/// The `sqlite` section.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SqliteReport {
    /// The journal mode the databases ran in (also in `config`; here so a
    /// reader need not know the layout).
    pub journal_mode: super::JournalMode,
    /// `[sqlite]` as run.
    pub config: SqliteConfig,
    /// Per-transaction means by operation.
    pub per_transaction: PerOp,
    /// Per-file call counts (totals over the measured statements).
    pub files: PerFile,
    /// WAL checkpoints run.
    pub checkpoints: u64,
    /// Calls that failed (−errno); 0 in a correct run.
    pub failed_calls: u64,
}

impl SqliteReport {
    /// The report of every connection's counters `stats` under `config`.
    pub fn new<'a>(
        config: &SqliteConfig,
        stats: impl IntoIterator<Item = &'a SessionStats>,
    ) -> SqliteReport {
        let mut ops = [OpTotals::default(); 4];
        let mut files: [FileCounts; 4] = Default::default();
        let (mut checkpoints, mut failed) = (0, 0);
        for s in stats {
            for (a, b) in ops.iter_mut().zip(&s.ops) {
                a.add(b);
            }
            for (a, b) in files.iter_mut().zip(&s.files) {
                a.add(b);
            }
            checkpoints += s.checkpoints;
            failed += s.failed_calls;
        }
        let op = |o: SqlOp| PerTransaction::from(&ops[o.index()]);
        let f = |x: SqlFile| files[x.index()].clone();
        SqliteReport {
            journal_mode: config.journal_mode,
            config: config.clone(),
            per_transaction: PerOp {
                insert: op(SqlOp::Insert),
                update: op(SqlOp::Update),
                delete: op(SqlOp::Delete),
                select: (ops[SqlOp::Select.index()].transactions > 0).then(|| op(SqlOp::Select)),
            },
            files: PerFile {
                db: f(SqlFile::Db),
                journal: f(SqlFile::Journal),
                wal: f(SqlFile::Wal),
                dir: f(SqlFile::Dir),
            },
            checkpoints,
            failed_calls: failed,
        }
    }
}
