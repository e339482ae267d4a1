//! The pager and the Unix VFS of SQLite 3.7.x (`pager.c`, `wal.c`,
//! `os_unix.c`): the system calls one transaction makes on the database,
//! its rollback journal or write-ahead log, and the directory, per journal
//! mode and `synchronous` level (reference android-workloads.md §3-§4).
//!
//! Rollback journal (DELETE, TRUNCATE, PERSIST), one auto-committed
//! transaction: the journal is opened with `O_CREAT` (it is closed when
//! the lock is released, so every transaction reopens it); its header (one
//! 512-byte sector, `JOURNAL_HDR_SZ`) and a record per original page (4-byte
//! page number, the page, 4-byte checksum: three writes) are written;
//! `syncJournal` reads the 8 bytes after the journal, syncs (FULL), writes
//! the record count into the header and syncs again; the first sync of a
//! journal opened with `O_CREAT` also syncs its directory (`UNIXFILE_DIRSYNC`:
//! open, fdatasync, close); the database pages are written in page order,
//! the file is truncated when auto-vacuum shrank it, and synced; then the
//! journal is finalized: DELETE closes and unlinks it, TRUNCATE truncates
//! it to 0 bytes (3.7.x does not sync that), PERSIST overwrites its first
//! 28 bytes with zeros and syncs (`zeroJournalHdr`), then trims it to
//! `journal_size_limit`. Syncs are `fdatasync` (Linux, reference §3).
//!
//! WAL: frames (24-byte header + page: two writes) are appended to `-wal`
//! (page 1 is not rewritten per commit); the commit syncs the log when
//! `synchronous = FULL`; when the log holds `wal_autocheckpoint` frames the
//! checkpoint syncs the log, copies the newest frame of every page into
//! the database (read from the log, written in page order), truncates the
//! database to its size and syncs it; the next writer restarts the log at
//! its start, trimming a log larger than `journal_size_limit`. The `-shm`
//! index is memory-mapped and never synced, so it makes no system call.
//!
//! Not modelled (no I/O): `access()`/`fstat()` of the hot-journal check
//! and the `fcntl` locks.

use super::btree::Pgno;
use super::{JournalMode, SqliteConfig, Synchronous};
use crate::host::{Access, Fd, OpenFlags, Syscall};
use std::collections::BTreeMap;

/// Size of a rollback-journal header: one sector (512 bytes with
/// `SQLITE_POWERSAFE_OVERWRITE`, 3.7.x).
pub const JOURNAL_HEADER_BYTES: u64 = 512;
/// Bytes of the magic + record count rewritten by `syncJournal`.
const NREC_BYTES: u64 = 12;
/// Bytes `zeroJournalHdr` zeroes (PERSIST).
const ZERO_HEADER_BYTES: u64 = 28;
/// Bytes of a WAL header.
pub const WAL_HEADER_BYTES: u64 = 32;
/// Bytes of a WAL frame header.
pub const WAL_FRAME_HEADER_BYTES: u64 = 24;

/// Which file a call goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlFile {
    /// The database file.
    Db,
    /// The rollback journal (`-journal`).
    Journal,
    /// The write-ahead log (`-wal`).
    Wal,
    /// The database's directory (the journal's directory sync).
    Dir,
}

impl SqlFile {
    /// Index of the file in per-file tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What a write puts in its file, as SQLite's recovery reads it back
/// (the power-loss check, [`super::recovery`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Not a write, or nothing recovery reads.
    None,
    /// A rollback journal header (magic, nRec 0 — or 0xFFFFFFFF with
    /// `synchronous = OFF`, salt, the database's size before the
    /// transaction: `orig_pages`).
    JournalHeader {
        /// Database pages before the transaction.
        orig_pages: Pgno,
    },
    /// The header's magic and record count written by `syncJournal`.
    JournalNrec {
        /// Records in the journal.
        nrec: u32,
        /// Database pages before the transaction.
        orig_pages: Pgno,
    },
    /// The header zeroed at a PERSIST commit (`zeroJournalHdr`).
    JournalZero,
    /// Record `index` of the journal: the original content of `pgno`.
    JournalRecord {
        /// Record index (0-based).
        index: u32,
        /// Database page journaled.
        pgno: Pgno,
    },
    /// Database page `pgno`.
    DbPage {
        /// Page number.
        pgno: Pgno,
    },
    /// The WAL header of log generation `generation` (its salt).
    WalHeader {
        /// Restarts of the log so far (the salt changes per restart).
        generation: u32,
    },
    /// WAL frame `index` of generation `generation`, holding `pgno`;
    /// `commit`: the transaction's last frame (the commit frame).
    WalFrame {
        /// Log generation.
        generation: u32,
        /// Frame index (0-based).
        index: u32,
        /// Database page.
        pgno: Pgno,
        /// A commit frame.
        commit: bool,
    },
}

/// One system call of a transaction; its descriptor is bound when issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// File the call is about.
    pub file: SqlFile,
    /// The call (descriptor fields are placeholders).
    pub call: Syscall,
    /// What a write puts in the file ([`Content::None`] otherwise).
    pub content: Content,
}

/// Placeholder descriptor in a [`Step`]'s call.
pub const UNBOUND_FD: Fd = 0;

/// The pager of one database connection.
#[derive(Clone, Debug)]
pub struct Pager {
    cfg: SqliteConfig,
    db: String,
    journal: String,
    wal: String,
    dir: String,
    /// The database file is open.
    db_open: bool,
    /// Pages of the database file on disk.
    db_file_pages: Pgno,
    /// Bytes of the rollback journal on disk.
    journal_bytes: u64,
    /// The log is open.
    wal_open: bool,
    /// The log's directory was synced since the log was created.
    wal_dir_synced: bool,
    /// Frames in the log since its (re)start.
    wal_frames: u64,
    /// Bytes of the log file.
    wal_bytes: u64,
    /// Newest frame (0-based) of each page in the log.
    wal_pages: BTreeMap<Pgno, u64>,
    /// Database pages as of the last commit (WAL: the log's view).
    wal_db_pages: Pgno,
    /// A checkpoint copied every frame: the next writer restarts the log.
    wal_restart: bool,
    /// Checkpoints run.
    pub checkpoints: u64,
    /// WAL generations started (headers written).
    wal_generation: u32,
}

fn call(file: SqlFile, call: Syscall) -> Step {
    Step {
        file,
        call,
        content: Content::None,
    }
}

impl Pager {
    /// The pager of database `db` (an absolute path) with `cfg`.
    pub fn new(db: &str, cfg: SqliteConfig) -> Pager {
        let dir = match db.rfind('/') {
            Some(0) | None => "/".to_string(),
            Some(i) => db[..i].to_string(),
        };
        Pager {
            cfg,
            db: db.to_string(),
            journal: format!("{db}-journal"),
            wal: format!("{db}-wal"),
            dir,
            db_open: false,
            db_file_pages: 0,
            journal_bytes: 0,
            wal_open: false,
            wal_dir_synced: false,
            wal_frames: 0,
            wal_bytes: 0,
            wal_pages: BTreeMap::new(),
            wal_db_pages: 0,
            wal_restart: false,
            checkpoints: 0,
            wal_generation: 0,
        }
    }

    fn ps(&self) -> u64 {
        u64::from(self.cfg.page_size)
    }

    fn sync(&self, file: SqlFile) -> Step {
        call(file, Syscall::Fdatasync { fd: UNBOUND_FD })
    }

    fn pwrite(&self, file: SqlFile, offset: u64, bytes: u64, content: Content) -> Step {
        Step {
            content,
            ..call(
                file,
                Syscall::Pwrite {
                    fd: UNBOUND_FD,
                    offset,
                    bytes,
                },
            )
        }
    }

    fn pread(&self, file: SqlFile, offset: u64, bytes: u64) -> Step {
        call(
            file,
            Syscall::Pread {
                fd: UNBOUND_FD,
                offset,
                bytes,
            },
        )
    }

    fn open(&self, file: SqlFile, path: &str, creat: bool) -> Step {
        call(
            file,
            Syscall::Open {
                path: path.to_string(),
                flags: OpenFlags {
                    // osOpenDirectory opens O_RDONLY; the files O_RDWR.
                    access: if file == SqlFile::Dir {
                        Access::ReadOnly
                    } else {
                        Access::ReadWrite
                    },
                    creat,
                    ..OpenFlags::default()
                },
            },
        )
    }

    fn close(&self, file: SqlFile) -> Step {
        call(file, Syscall::Close { fd: UNBOUND_FD })
    }

    /// The directory sync of a file created with `O_CREAT`
    /// (`UNIXFILE_DIRSYNC`: `osOpenDirectory`, `full_fsync`, close).
    fn dir_sync(&self, out: &mut Vec<Step>) {
        out.push(self.open(SqlFile::Dir, &self.dir, false));
        out.push(self.sync(SqlFile::Dir));
        out.push(self.close(SqlFile::Dir));
    }

    /// The calls of one statement that reads pages `read` and, as one
    /// auto-committed transaction, modifies pages `write` of a database
    /// that has `db_pages` pages afterwards; appended to `out`.
    pub fn transaction(
        &mut self,
        read: &[Pgno],
        write: &[Pgno],
        db_pages: Pgno,
        out: &mut Vec<Step>,
    ) {
        let wal = self.cfg.journal_mode == JournalMode::Wal;
        if !self.db_open {
            out.push(self.open(SqlFile::Db, &self.db, true));
            self.db_open = true;
        }
        if wal && !self.wal_open {
            out.push(self.open(SqlFile::Wal, &self.wal, true));
            self.wal_open = true;
        }
        // hasHotJournal: a PERSIST journal that is not empty is opened
        // and its first byte read (zero = not hot).
        if self.cfg.journal_mode == JournalMode::Persist && self.journal_bytes > 0 {
            out.push(self.open(SqlFile::Journal, &self.journal, false));
            out.push(self.pread(SqlFile::Journal, 0, 1));
            out.push(self.close(SqlFile::Journal));
        }
        // Pages read into the (emptied) page cache: page 1 first
        // (lockBtree), each page once.
        let mut seen: Vec<Pgno> = Vec::with_capacity(read.len() + 1);
        for &p in std::iter::once(&1).chain(read) {
            if seen.contains(&p) || p > self.visible_pages() {
                continue;
            }
            seen.push(p);
            match self.wal_pages.get(&p) {
                Some(&f) if wal => out.push(self.pread(
                    SqlFile::Wal,
                    self.frame_offset(f) + WAL_FRAME_HEADER_BYTES,
                    self.ps(),
                )),
                _ => out.push(self.pread(SqlFile::Db, u64::from(p - 1) * self.ps(), self.ps())),
            }
        }
        if write.is_empty() {
            return;
        }
        let mut pages: Vec<Pgno> = write.to_vec();
        if !wal && !pages.contains(&1) {
            // pager_incr_changecounter.
            pages.push(1);
        }
        pages.sort_unstable();
        pages.dedup();
        match self.cfg.journal_mode {
            JournalMode::Delete | JournalMode::Truncate | JournalMode::Persist => {
                self.rollback_commit(&pages, db_pages, out)
            }
            JournalMode::Memory | JournalMode::Off => self.write_db(&pages, db_pages, out),
            JournalMode::Wal => self.wal_commit(&pages, db_pages, out),
        }
    }

    /// Pages a reader sees.
    fn visible_pages(&self) -> Pgno {
        if self.cfg.journal_mode == JournalMode::Wal {
            self.wal_db_pages.max(self.db_file_pages)
        } else {
            self.db_file_pages
        }
    }

    /// Writes `pages` into the database file, truncates it to `db_pages`
    /// when it shrank, and syncs it (unless `synchronous = OFF`).
    fn write_db(&mut self, pages: &[Pgno], db_pages: Pgno, out: &mut Vec<Step>) {
        let ps = self.ps();
        for &p in pages {
            out.push(self.pwrite(
                SqlFile::Db,
                u64::from(p - 1) * ps,
                ps,
                Content::DbPage { pgno: p },
            ));
        }
        if db_pages < self.db_file_pages {
            out.push(call(
                SqlFile::Db,
                Syscall::Ftruncate {
                    fd: UNBOUND_FD,
                    len: u64::from(db_pages) * ps,
                },
            ));
        }
        self.db_file_pages = db_pages;
        if self.cfg.synchronous != Synchronous::Off {
            out.push(self.sync(SqlFile::Db));
        }
    }

    /// A rollback-journal commit (DELETE, TRUNCATE, PERSIST).
    fn rollback_commit(&mut self, pages: &[Pgno], db_pages: Pgno, out: &mut Vec<Step>) {
        let ps = self.ps();
        let j = SqlFile::Journal;
        let sync = self.cfg.synchronous;
        let orig_pages = self.db_file_pages;
        out.push(self.open(j, &self.journal, true));
        out.push(self.pwrite(
            j,
            0,
            JOURNAL_HEADER_BYTES,
            Content::JournalHeader { orig_pages },
        ));
        // Records of the pages the database had before the transaction.
        let mut off = JOURNAL_HEADER_BYTES;
        let mut nrec = 0u32;
        for &pgno in pages.iter().filter(|&&p| p <= self.db_file_pages) {
            let rec = Content::JournalRecord { index: nrec, pgno };
            out.push(self.pwrite(j, off, 4, rec));
            out.push(self.pwrite(j, off + 4, ps, rec));
            out.push(self.pwrite(j, off + 4 + ps, 4, rec));
            off += ps + 8;
            nrec += 1;
        }
        self.journal_bytes = self.journal_bytes.max(off);
        if sync != Synchronous::Off {
            // syncJournal: a stale header after this one?
            out.push(self.pread(j, off.next_multiple_of(JOURNAL_HEADER_BYTES), 8));
            let mut dir_pending = true;
            if sync == Synchronous::Full {
                out.push(self.sync(j));
                self.dir_sync(out);
                dir_pending = false;
            }
            out.push(self.pwrite(j, 0, NREC_BYTES, Content::JournalNrec { nrec, orig_pages }));
            out.push(self.sync(j));
            if dir_pending {
                self.dir_sync(out);
            }
        }
        self.write_db(pages, db_pages, out);
        match self.cfg.journal_mode {
            JournalMode::Delete => {
                out.push(self.close(j));
                out.push(call(
                    j,
                    Syscall::Unlink {
                        path: self.journal.clone(),
                    },
                ));
                self.journal_bytes = 0;
                return;
            }
            JournalMode::Truncate => {
                out.push(call(
                    j,
                    Syscall::Ftruncate {
                        fd: UNBOUND_FD,
                        len: 0,
                    },
                ));
                self.journal_bytes = 0;
            }
            _ => {
                out.push(self.pwrite(j, 0, ZERO_HEADER_BYTES, Content::JournalZero));
                if sync != Synchronous::Off {
                    out.push(self.sync(j));
                }
                let limit = self.cfg.journal_size_limit;
                if limit >= 0 && self.journal_bytes > limit as u64 {
                    out.push(call(
                        j,
                        Syscall::Ftruncate {
                            fd: UNBOUND_FD,
                            len: limit as u64,
                        },
                    ));
                    self.journal_bytes = limit as u64;
                }
            }
        }
        out.push(self.close(j));
    }

    fn frame_offset(&self, frame: u64) -> u64 {
        WAL_HEADER_BYTES + frame * (WAL_FRAME_HEADER_BYTES + self.ps())
    }

    /// A WAL commit, then the auto-checkpoint when the log is full.
    fn wal_commit(&mut self, pages: &[Pgno], db_pages: Pgno, out: &mut Vec<Step>) {
        let w = SqlFile::Wal;
        let ps = self.ps();
        if self.wal_restart {
            // walRestartLog + walLimitSize.
            self.wal_restart = false;
            self.wal_frames = 0;
            self.wal_pages.clear();
            let limit = self.cfg.journal_size_limit;
            if limit >= 0 && self.wal_bytes > limit as u64 {
                out.push(call(
                    w,
                    Syscall::Ftruncate {
                        fd: UNBOUND_FD,
                        len: limit as u64,
                    },
                ));
                self.wal_bytes = limit as u64;
            }
        }
        if self.wal_frames == 0 {
            self.wal_generation += 1;
            let generation = self.wal_generation;
            out.push(self.pwrite(w, 0, WAL_HEADER_BYTES, Content::WalHeader { generation }));
        }
        for (i, &p) in pages.iter().enumerate() {
            let off = self.frame_offset(self.wal_frames);
            let frame = Content::WalFrame {
                generation: self.wal_generation,
                index: self.wal_frames as u32,
                pgno: p,
                commit: i + 1 == pages.len(),
            };
            out.push(self.pwrite(w, off, WAL_FRAME_HEADER_BYTES, frame));
            out.push(self.pwrite(w, off + WAL_FRAME_HEADER_BYTES, ps, frame));
            self.wal_pages.insert(p, self.wal_frames);
            self.wal_frames += 1;
        }
        self.wal_bytes = self.wal_bytes.max(self.frame_offset(self.wal_frames));
        self.wal_db_pages = db_pages;
        if self.cfg.synchronous == Synchronous::Full {
            out.push(self.sync(w));
            if !self.wal_dir_synced {
                self.dir_sync(out);
                self.wal_dir_synced = true;
            }
        }
        if self.cfg.wal_autocheckpoint > 0
            && self.wal_frames >= u64::from(self.cfg.wal_autocheckpoint)
        {
            self.checkpoint(out);
        }
    }

    /// `sqlite3WalCheckpoint` (PASSIVE, no concurrent readers).
    fn checkpoint(&mut self, out: &mut Vec<Step>) {
        self.checkpoints += 1;
        let ps = self.ps();
        let sync = self.cfg.synchronous != Synchronous::Off;
        if sync {
            out.push(self.sync(SqlFile::Wal));
        }
        let frames: Vec<(Pgno, u64)> = self.wal_pages.iter().map(|(&p, &f)| (p, f)).collect();
        for (p, f) in frames {
            out.push(self.pread(
                SqlFile::Wal,
                self.frame_offset(f) + WAL_FRAME_HEADER_BYTES,
                ps,
            ));
            out.push(self.pwrite(
                SqlFile::Db,
                u64::from(p - 1) * ps,
                ps,
                Content::DbPage { pgno: p },
            ));
        }
        out.push(call(
            SqlFile::Db,
            Syscall::Ftruncate {
                fd: UNBOUND_FD,
                len: u64::from(self.wal_db_pages) * ps,
            },
        ));
        self.db_file_pages = self.wal_db_pages;
        if sync {
            out.push(self.sync(SqlFile::Db));
        }
        self.wal_restart = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(mode: JournalMode) -> SqliteConfig {
        SqliteConfig {
            journal_mode: mode,
            ..SqliteConfig::default()
        }
    }

    fn syncs(steps: &[Step]) -> usize {
        steps
            .iter()
            .filter(|s| matches!(s.call, Syscall::Fdatasync { .. } | Syscall::Fsync { .. }))
            .count()
    }

    /// An existing 5-page database, one INSERT-like transaction (3 pages).
    fn insert(mode: JournalMode) -> Vec<Step> {
        let mut p = Pager::new("/d/t.db", cfg(mode));
        let mut out = Vec::new();
        p.transaction(&[], &[1, 2, 3, 4, 5], 5, &mut out);
        out.clear();
        p.transaction(&[5, 4], &[5, 4], 5, &mut out);
        out
    }

    #[test]
    fn sync_calls_per_transaction_follow_the_journal_mode() {
        // Reference §4: DELETE 4, TRUNCATE 4, PERSIST 5, WAL/MEMORY/OFF 1.
        assert_eq!(syncs(&insert(JournalMode::Delete)), 4);
        assert_eq!(syncs(&insert(JournalMode::Truncate)), 4);
        assert_eq!(syncs(&insert(JournalMode::Persist)), 5);
        assert_eq!(syncs(&insert(JournalMode::Memory)), 1);
        assert_eq!(syncs(&insert(JournalMode::Off)), 1);
        let wal = insert(JournalMode::Wal);
        assert_eq!(syncs(&wal), 1);
        // Page 1 is not rewritten per WAL commit: 2 frames = 4 writes.
        let writes = wal
            .iter()
            .filter(|s| matches!(s.call, Syscall::Pwrite { .. }))
            .count();
        assert_eq!(writes, 4);
    }

    #[test]
    fn delete_mode_creates_and_unlinks_the_journal_with_a_directory_sync() {
        let steps = insert(JournalMode::Delete);
        assert!(steps.iter().any(|s| s.file == SqlFile::Dir));
        assert!(matches!(steps.last().unwrap().call, Syscall::Unlink { .. }));
        // Three records (page 1, 4, 5) of three writes each + header + nRec.
        let jw = steps
            .iter()
            .filter(|s| s.file == SqlFile::Journal && matches!(s.call, Syscall::Pwrite { .. }))
            .count();
        assert_eq!(jw, 3 * 3 + 2);
    }

    #[test]
    fn the_wal_checkpoints_after_the_autocheckpoint_frames() {
        let mut p = Pager::new(
            "/d/t.db",
            SqliteConfig {
                journal_mode: JournalMode::Wal,
                wal_autocheckpoint: 10,
                ..SqliteConfig::default()
            },
        );
        let mut out = Vec::new();
        for _ in 0..5 {
            p.transaction(&[], &[3, 4], 5, &mut out);
        }
        assert_eq!(p.checkpoints, 1);
        assert!(out
            .iter()
            .any(|s| s.file == SqlFile::Db && matches!(s.call, Syscall::Pwrite { .. })));
    }
}
