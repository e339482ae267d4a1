//! SQLite above ext4: SQL-level operations of an application thread turned
//! into the system calls SQLite 3.7.x makes for them (reference
//! android-workloads.md §3-§4), issued through the host like any other
//! thread's calls, so every journal write, page write and sync flows
//! through the page cache, ext4 and JBD2.
//!
//! * [`btree`]: which pages a statement reads and modifies (B-tree of one
//!   rowid table, leaf splits, auto-vacuum).
//! * [`pager`]: the calls of one transaction per journal mode and
//!   `synchronous` level.
//! * [`job`]: a `[[sqlite_jobs]]` entry as a thread.
//! * [`session`]: a connection executing statements one call at a time,
//!   with per-transaction and per-file counters.
//!
//! * [`platform`]: the framework's settings per Android release, which
//!   fill the `[sqlite]` keys a scenario leaves out.
//!
//! Scenario: a `[sqlite]` section ([`SqliteConfig`], defaults of Android
//! 4.1-5.1's framework) and `[[sqlite_jobs]]` ([`SqliteJobSpec`]).

pub mod btree;
pub mod job;
pub mod pager;
pub mod platform;
pub mod recovery;
pub mod report;
pub mod session;

use serde::{Deserialize, Serialize};

/// `PRAGMA journal_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    /// Rollback journal created and unlinked per transaction.
    Delete,
    /// Rollback journal truncated to 0 bytes at the end of a transaction
    /// (Android 3.0-4.0's framework).
    Truncate,
    /// Rollback journal kept; its header zeroed at the end (Android
    /// 4.1-5.1's `db_default_journal_mode`).
    Persist,
    /// Write-ahead log with auto-checkpoint.
    Wal,
    /// Rollback journal in memory (no crash atomicity).
    Memory,
    /// No journal (no crash atomicity).
    Off,
}

/// `PRAGMA synchronous`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    /// Sync the journal twice (around the record count) and the database
    /// (Android's `db_default_sync_mode`, `db_wal_sync_mode`).
    Full,
    /// Sync the journal once and the database; WAL syncs at checkpoints
    /// only.
    Normal,
    /// No sync.
    Off,
}

/// `PRAGMA auto_vacuum`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AutoVacuum {
    /// Free pages go to the free list; the file never shrinks.
    None,
    /// Pointer-map pages; the file is truncated at commit
    /// (`SQLITE_DEFAULT_AUTOVACUUM=1` of Android's build).
    Full,
}

/// The `[sqlite]` section: how the application's databases are opened.
/// Defaults: Android 4.1-5.1's framework (`config.xml`, see [`platform`]);
/// a scenario's `android_version` replaces the keys it leaves out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SqliteConfig {
    /// Journal mode. Default PERSIST: AOSP's `db_default_journal_mode` of
    /// Android 4.1-5.1.
    pub journal_mode: JournalMode,
    /// `synchronous`. Default FULL (`db_default_sync_mode`).
    pub synchronous: Synchronous,
    /// Page size, bytes (512-65536, a power of two). Default 4096: the
    /// block size of `/data`, which Android sets (reference §3).
    pub page_size: u32,
    /// WAL auto-checkpoint, frames (0 = never). Default 100 (Android
    /// 4.1-5.1's `db_wal_autocheckpoint`; SQLite's own
    /// `SQLITE_DEFAULT_WAL_AUTOCHECKPOINT` is 1000).
    pub wal_autocheckpoint: u32,
    /// `journal_size_limit`, bytes (−1 = none): a PERSIST journal or a
    /// restarted WAL larger than this is truncated to it. Default 524288
    /// (Android 4.1 `db_journal_size_limit`).
    pub journal_size_limit: i64,
    /// Auto-vacuum. Default full (`SQLITE_DEFAULT_AUTOVACUUM=1`).
    pub auto_vacuum: AutoVacuum,
}

impl Default for SqliteConfig {
    fn default() -> Self {
        SqliteConfig {
            journal_mode: JournalMode::Persist,
            synchronous: Synchronous::Full,
            page_size: 4096,
            wal_autocheckpoint: 100,
            journal_size_limit: 524_288,
            auto_vacuum: AutoVacuum::Full,
        }
    }
}

impl SqliteConfig {
    /// Checks what serde cannot; errors name the key.
    pub fn validate(&self) -> Result<(), crate::error::SettingError> {
        if !(512..=65536).contains(&self.page_size) || !self.page_size.is_power_of_two() {
            return Err(crate::error::SettingError::invalid(
                "sqlite.page_size",
                self.page_size,
                "a power of two from 512 to 65536 bytes",
            ));
        }
        if self.journal_size_limit < -1 {
            return Err(crate::error::SettingError::invalid(
                "sqlite.journal_size_limit",
                self.journal_size_limit,
                "-1 (no limit) or a size in bytes",
            ));
        }
        Ok(())
    }
}

/// An SQL operation of a SQLite job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SqlOp {
    /// `INSERT` of a new row (rowid AUTOINCREMENT), one transaction.
    Insert,
    /// `UPDATE … WHERE col = k` (no index: a full scan), one transaction.
    Update,
    /// `DELETE … WHERE col = k` (a full scan), one transaction.
    Delete,
    /// `SELECT … WHERE col = k` (a full scan, read only).
    Select,
}

impl SqlOp {
    /// All operations, in report order.
    pub const ALL: [SqlOp; 4] = [SqlOp::Insert, SqlOp::Update, SqlOp::Delete, SqlOp::Select];

    /// Index in per-operation tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A SQLite job (`[[sqlite_jobs]]`): one thread with its own database
/// (a table like AndroBench's `testing`, no index besides the rowid)
/// running `transactions` auto-committed statements of one kind. Update,
/// delete and select jobs first fill the table with `rows` INSERTs
/// (unmeasured); their keys are a seeded shuffle of the rows.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqliteJobSpec {
    /// Name (the thread's process name).
    pub name: String,
    /// insert, update, delete or select.
    pub op: SqlOp,
    /// Statements measured (each its own transaction).
    pub transactions: u64,
    /// Bytes of a row's record (payload), default 100 (AndroBench's row,
    /// reference §1).
    #[serde(default = "row_bytes")]
    pub row_bytes: u32,
    /// Rows inserted before the measured statements (update, delete,
    /// select); default `transactions`.
    #[serde(default)]
    pub rows: Option<u64>,
    /// Absolute path of the database (its directory must exist or be a
    /// `[[files]]` entry's); default `/data/data/<name>/databases/<name>.db`
    /// (created).
    #[serde(default)]
    pub path: Option<String>,
    /// Pause between statements, µs.
    #[serde(default)]
    pub think_time_us: f64,
    /// When the thread starts, ms.
    #[serde(default)]
    pub start_ms: f64,
    /// Process id (default 7000 + index).
    #[serde(default)]
    pub pid: Option<u32>,
}

fn row_bytes() -> u32 {
    100
}

impl SqliteJobSpec {
    /// Rows the table holds before the measured statements.
    pub fn prefill(&self) -> u64 {
        match self.op {
            SqlOp::Insert => 0,
            _ => self.rows.unwrap_or(self.transactions),
        }
    }

    /// Checks the job against `cfg`; errors name the job and the key.
    pub fn validate(&self, cfg: &SqliteConfig) -> Result<(), SqliteJobError> {
        self.rules(cfg).map_err(|rule| SqliteJobError {
            job: self.name.clone(),
            rule,
        })
    }

    /// [`SqliteJobSpec::validate`]'s rules.
    fn rules(&self, cfg: &SqliteConfig) -> Result<(), SqliteJobRule> {
        if self.transactions == 0 {
            return Err(SqliteJobRule::Zero {
                field: "transactions",
            });
        }
        let max = btree::max_local_payload(cfg.page_size);
        if self.row_bytes == 0 || self.row_bytes > max {
            return Err(SqliteJobRule::RowBytes {
                row_bytes: self.row_bytes,
                max,
                page_size: cfg.page_size,
            });
        }
        if self.op == SqlOp::Delete && self.transactions > self.prefill() {
            return Err(SqliteJobRule::DeletesBeyondRows {
                deletes: self.transactions,
                rows: self.prefill(),
            });
        }
        if self.op != SqlOp::Insert && self.prefill() == 0 {
            return Err(SqliteJobRule::Zero { field: "rows" });
        }
        if let Some(p) = &self.path {
            if !p.starts_with('/') || p.ends_with('/') {
                return Err(SqliteJobRule::Path { path: p.clone() });
            }
        }
        crate::workload::spec::checked_time_ns("think_time_us", self.think_time_us, 1e3)?;
        crate::workload::spec::checked_time_ns("start_ms", self.start_ms, 1e6)?;
        Ok(())
    }
}

/// A SQLite job whose settings break a rule: the job and the rule.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("sqlite job `{job}`: {rule}")]
pub struct SqliteJobError {
    /// The job's name.
    pub job: String,
    /// The rule broken.
    pub rule: SqliteJobRule,
}

/// The rule a SQLite job breaks, with the values at fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SqliteJobRule {
    /// A count that must be at least 1 is 0.
    #[error("{field} must be at least 1")]
    Zero {
        /// `transactions` or `rows`.
        field: &'static str,
    },
    /// A row that would spill to overflow pages (not modelled).
    #[error("row_bytes = {row_bytes}: expected 1..={max} (rows that spill to overflow pages are not modelled at page_size {page_size})")]
    RowBytes {
        /// The row size given, bytes.
        row_bytes: u32,
        /// The largest local payload at this page size, bytes.
        max: u32,
        /// The database page size, bytes.
        page_size: u32,
    },
    /// More deletes than rows.
    #[error("{deletes} deletes of {rows} rows: rows must be at least transactions")]
    DeletesBeyondRows {
        /// Transactions (one delete each).
        deletes: u64,
        /// Rows filled first.
        rows: u64,
    },
    /// A database path that is not an absolute file path.
    #[error("path `{path}`: expected an absolute file path")]
    Path {
        /// The path given.
        path: String,
    },
    /// A time the clock cannot hold.
    #[error(transparent)]
    Time(#[from] crate::workload::job_error::TimeError),
}
