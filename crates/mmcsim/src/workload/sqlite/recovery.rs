//! SQLite's open after a power cut (`simctl crash`): the database, its
//! rollback journal or its write-ahead log read back from the card the way
//! SQLite reads them, then a check per transaction.
//!
//! While a campaign records ([`CrashLog`]), the connection notes every
//! write it issues with what it puts in the file ([`Tag`]: a journal
//! header, record or zeroed header, a database page of a version, a WAL
//! header or frame), each `fdatasync` with when it was issued and when it
//! returned, the journal's creation, truncation and unlink, and per
//! transaction its pages and its commit point. After the cut each 4 KiB
//! page of a file reads back through [`FileMedia`] as the newest write bio
//! the card holds (or none, or torn); a byte range then holds the newest
//! write issued before that bio, or mixed content when its pages disagree.
//!
//! Recovery [src: sqlite.org/atomiccommit.html §4 "Rollback", §5; sqlite.org
//! /fileformat2.html §4.1 "Hot journals", §4.3-4.4 WAL format and recovery;
//! `pager.c` `pager_playback`]:
//! * rollback journal (DELETE, TRUNCATE, PERSIST): a journal that exists
//!   and is not empty with a valid header (a PERSIST header zeroed at
//!   commit is not valid) is hot: its records are copied back over the
//!   database in order, stopping at the first record that is not this
//!   transaction's (its checksum uses the header's nonce: a stale or torn
//!   record fails), up to the header's record count (0 before `syncJournal`
//!   wrote it, all records with `synchronous = OFF`, whose header says
//!   0xFFFFFFFF), and the database is truncated to its size before the
//!   transaction;
//! * WAL: from a valid header, frames are read in order while each is of
//!   that header's generation (salt) and at its index (the checksum chain);
//!   a torn or stale frame ends the log, and only frames up to the last
//!   commit frame before it apply.
//!
//! The check: a transaction is committed at its commit point (rollback:
//! the journal's unlink, truncation or zeroed header issued; WAL: its
//! commit frame written; journal OFF: its last database page written) and
//! promised durable when an `fdatasync` issued after that point returned
//! (for DELETE and TRUNCATE the next transaction's journal sync, which
//! makes ext4 commit the unlink or truncation). Then
//! * `committed_lost`: promised durable, and a page of it reads an older
//!   version;
//! * `uncommitted_visible`: a page of it reads its version although it had
//!   not reached its commit point, or it is only partly applied;
//! * `corrupt_pages`: database pages torn or mixing writes after recovery.
//!
//! Simplifications: the journal's creation, truncation, unlink and first
//! append count as on the media once an `fdatasync` issued after them
//! returned, and not before (ext4 commits them with the next journal
//! commit an fsync forces); a file page remapped by a truncation reads
//! from its newest location; the database's own size changes (auto-vacuum)
//! are not replayed.

use super::btree::Pgno;
use super::pager::{
    Content, SqlFile, JOURNAL_HEADER_BYTES, WAL_FRAME_HEADER_BYTES, WAL_HEADER_BYTES,
};
use super::JournalMode;
use crate::types::Ns;
use serde::Serialize;
use std::collections::BTreeMap;

/// Bytes of a host page (the unit a write bio carries per logical page).
const HOST_PAGE_BYTES: u64 = 4096;

/// The window of a file never truncated to zero nor unlinked.
const ALWAYS: (Ns, Ns) = (0, Ns::MAX);

/// What a 4 KiB page of a file holds after the cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilePage {
    /// No write bio of it is on the card (nothing the log knows of).
    Unwritten,
    /// The card holds the write bio submitted at this instant, ns.
    Written(Ns),
    /// Unreadable: torn program, paired-page victim, interrupted erase or
    /// another page's data.
    Torn,
}

/// The files after the cut, as SQLite's open reads them.
pub trait FileMedia {
    /// Page `page` (4 KiB) of the file at `path` as written from `since`
    /// (its creation or truncation, ns) until `until` (its next
    /// truncation or unlink, which did not reach the media).
    fn page(&self, path: &str, since: Ns, until: Ns, page: u64) -> FilePage;
}

/// SQLite's durability and atomicity after the cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SqliteCrash {
    /// Committed transactions missing after recovery (an `fdatasync`
    /// after their commit point had returned).
    pub committed_lost: u64,
    /// Transactions visible although uncommitted at the cut, or only
    /// partly applied.
    pub uncommitted_visible: u64,
    /// Database pages torn or of mixed versions after recovery.
    pub corrupt_pages: u64,
    /// Hot rollback journals rolled back.
    pub journals_rolled_back: u64,
    /// WAL frames applied at open (up to the last valid commit frame).
    pub wal_frames_recovered: u64,
}

impl SqliteCrash {
    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &SqliteCrash) {
        self.committed_lost += o.committed_lost;
        self.uncommitted_visible += o.uncommitted_visible;
        self.corrupt_pages += o.corrupt_pages;
        self.journals_rolled_back += o.journals_rolled_back;
        self.wal_frames_recovered += o.wal_frames_recovered;
    }
}

/// What a write puts in its file, with the transaction and versions
/// resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// A journal header of transaction `tx`; `nrec`: its record count
    /// (`None`: 0xFFFFFFFF, all records, `synchronous = OFF`).
    JournalHeader {
        /// Transaction.
        tx: u64,
        /// Database pages before it.
        orig_pages: Pgno,
        /// Record count.
        nrec: Option<u32>,
    },
    /// A zeroed journal header.
    JournalZero,
    /// Record `index` of transaction `tx`: page `pgno` at version `prior`.
    JournalRecord {
        /// Transaction.
        tx: u64,
        /// Record index.
        index: u32,
        /// Page.
        pgno: Pgno,
        /// Version saved (the transaction that last wrote it; 0: none).
        prior: u64,
    },
    /// Database page `pgno` at `version`.
    Db {
        /// Page.
        pgno: Pgno,
        /// Version.
        version: u64,
    },
    /// WAL header of `generation`.
    WalHeader {
        /// Generation.
        generation: u32,
    },
    /// WAL frame.
    WalFrame {
        /// Generation.
        generation: u32,
        /// Index.
        index: u32,
        /// Page.
        pgno: Pgno,
        /// Version.
        version: u64,
        /// Commit frame.
        commit: bool,
    },
}

/// One write as issued.
#[derive(Clone, Copy, Debug)]
struct Write {
    at: Ns,
    since: Ns,
    off: u64,
    len: u64,
    tag: Tag,
}

/// A change of the journal file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JournalOp {
    /// Created (empty) at this instant.
    Create(Ns),
    /// First write since creation or truncation: not empty.
    Extend,
    /// Truncated to 0 bytes.
    Empty,
    /// Unlinked.
    Unlink,
}

/// A transaction as issued.
#[derive(Clone, Debug, Default)]
struct Tx {
    id: u64,
    pages: Vec<Pgno>,
    commit_at: Option<Ns>,
}

/// What a connection records for its recovery after a cut.
#[derive(Clone, Debug)]
pub struct CrashLog {
    mode: JournalMode,
    page_size: u64,
    /// By [`SqlFile::index`] (Db, Journal, Wal).
    writes: [Vec<Write>; 3],
    /// Per (file index, 4 KiB page): indices into `writes`.
    by_page: BTreeMap<(usize, u64), Vec<usize>>,
    journal_ops: Vec<(Ns, JournalOp)>,
    journal_since: Ns,
    journal_exists: bool,
    journal_empty: bool,
    /// `(issued, returned)` of each fdatasync that returned.
    syncs: Vec<(Ns, Ns)>,
    sync_issued: Option<Ns>,
    txs: Vec<Tx>,
    versions: BTreeMap<Pgno, u64>,
    /// Tags of the statement's steps.
    tags: Vec<Option<Tag>>,
}

impl CrashLog {
    /// An empty log of a connection in `mode` with pages of `page_size`.
    pub fn new(mode: JournalMode, page_size: u32) -> CrashLog {
        CrashLog {
            mode,
            page_size: u64::from(page_size),
            writes: Default::default(),
            by_page: BTreeMap::new(),
            journal_ops: Vec::new(),
            journal_since: 0,
            journal_exists: false,
            journal_empty: true,
            syncs: Vec::new(),
            sync_issued: None,
            txs: Vec::new(),
            versions: BTreeMap::new(),
            tags: Vec::new(),
        }
    }

    fn rollback_mode(&self) -> bool {
        matches!(
            self.mode,
            JournalMode::Delete | JournalMode::Truncate | JournalMode::Persist
        )
    }

    /// A statement's steps were planned (their contents in `contents`):
    /// a transaction begins when it writes pages; resolves each write's
    /// tag.
    pub fn plan(&mut self, contents: &[Content]) {
        let wal = self.mode == JournalMode::Wal;
        let mut pages: Vec<Pgno> = contents
            .iter()
            .filter_map(|c| match *c {
                Content::DbPage { pgno } if !wal => Some(pgno),
                Content::WalFrame { pgno, .. } if wal => Some(pgno),
                _ => None,
            })
            .collect();
        pages.sort_unstable();
        pages.dedup();
        let tx = self.txs.len() as u64 + 1;
        let prior = self.versions.clone();
        if !pages.is_empty() {
            for &p in &pages {
                self.versions.insert(p, tx);
            }
            self.txs.push(Tx {
                id: tx,
                pages,
                commit_at: None,
            });
        }
        let version = |m: &BTreeMap<Pgno, u64>, p: Pgno| m.get(&p).copied().unwrap_or(0);
        let sync_off_header = |orig_pages| Tag::JournalHeader {
            tx,
            orig_pages,
            nrec: None,
        };
        self.tags = contents
            .iter()
            .map(|c| match *c {
                Content::None => None,
                Content::JournalHeader { orig_pages } => Some(sync_off_header(orig_pages)),
                Content::JournalNrec { nrec, orig_pages } => Some(Tag::JournalHeader {
                    tx,
                    orig_pages,
                    nrec: Some(nrec),
                }),
                Content::JournalZero => Some(Tag::JournalZero),
                Content::JournalRecord { index, pgno } => Some(Tag::JournalRecord {
                    tx,
                    index,
                    pgno,
                    prior: version(&prior, pgno),
                }),
                Content::DbPage { pgno } => Some(Tag::Db {
                    pgno,
                    version: version(&self.versions, pgno),
                }),
                Content::WalHeader { generation } => Some(Tag::WalHeader { generation }),
                Content::WalFrame {
                    generation,
                    index,
                    pgno,
                    commit,
                } => Some(Tag::WalFrame {
                    generation,
                    index,
                    pgno,
                    version: tx,
                    commit,
                }),
            })
            .collect();
    }

    /// A header written while `synchronous != OFF` holds nRec 0 until
    /// `syncJournal` rewrites it.
    pub fn header_synced(&mut self, synced: bool) {
        if synced {
            for t in self.tags.iter_mut().flatten() {
                if let Tag::JournalHeader { nrec: n @ None, .. } = t {
                    *n = Some(0);
                }
            }
        }
    }

    fn commit_point(&mut self, now: Ns) {
        if let Some(t) = self.txs.last_mut() {
            t.commit_at = Some(now);
        }
    }

    /// Step `index` of the statement (`call` on `file`) is issued at `now`.
    pub fn issued(&mut self, index: usize, file: SqlFile, call: &crate::host::Syscall, now: Ns) {
        use crate::host::Syscall as S;
        let tag = self.tags.get(index).copied().flatten();
        match call {
            S::Pwrite { offset, bytes, .. } => {
                let Some(tag) = tag else { return };
                let fi = file.index();
                if file == SqlFile::Journal && self.journal_empty {
                    self.journal_empty = false;
                    self.journal_ops.push((now, JournalOp::Extend));
                }
                let since = if file == SqlFile::Journal {
                    self.journal_since
                } else {
                    0
                };
                let i = self.writes[fi].len();
                self.writes[fi].push(Write {
                    at: now,
                    since,
                    off: *offset,
                    len: *bytes,
                    tag,
                });
                let (first, last) = (
                    offset / HOST_PAGE_BYTES,
                    (offset + bytes.max(&1) - 1) / HOST_PAGE_BYTES,
                );
                for p in first..=last {
                    self.by_page.entry((fi, p)).or_default().push(i);
                }
                let commit = match tag {
                    Tag::JournalZero => true,
                    Tag::WalFrame { commit, .. } => commit,
                    Tag::Db { .. } => matches!(self.mode, JournalMode::Off | JournalMode::Memory),
                    _ => false,
                };
                if commit {
                    self.commit_point(now);
                }
            }
            S::Open { flags, .. }
                if file == SqlFile::Journal && flags.creat && !self.journal_exists =>
            {
                self.journal_exists = true;
                self.journal_empty = true;
                self.journal_since = now;
                self.journal_ops.push((now, JournalOp::Create(now)));
            }
            S::Unlink { .. } if file == SqlFile::Journal => {
                self.journal_exists = false;
                self.journal_ops.push((now, JournalOp::Unlink));
                self.commit_point(now);
            }
            S::Ftruncate { len: 0, .. } if file == SqlFile::Journal => {
                self.journal_empty = true;
                self.journal_since = now;
                self.journal_ops.push((now, JournalOp::Empty));
                self.commit_point(now);
            }
            S::Fdatasync { .. } | S::Fsync { .. } => self.sync_issued = Some(now),
            _ => {}
        }
    }

    /// The call issued last returned at `now`.
    pub fn returned(&mut self, now: Ns) {
        if let Some(i) = self.sync_issued.take() {
            self.syncs.push((i, now));
        }
    }

    /// An fdatasync issued at or after `at` had returned.
    fn synced_after(&self, at: Ns) -> bool {
        self.syncs.last().is_some_and(|&(i, _)| i >= at)
    }

    /// The content of bytes `[off, off + len)` of `file` (created at
    /// `since`) after the cut: `Ok(None)` nothing recorded, `Err(())` torn
    /// or mixed.
    fn read(
        &self,
        media: &dyn FileMedia,
        path: &str,
        file: SqlFile,
        (since, until): (Ns, Ns),
        off: u64,
        len: u64,
    ) -> Result<Option<Tag>, ()> {
        let fi = file.index();
        let mut out: Option<Option<Tag>> = None;
        for p in off / HOST_PAGE_BYTES..=(off + len - 1) / HOST_PAGE_BYTES {
            let limit = match media.page(path, since, until, p) {
                FilePage::Torn => return Err(()),
                FilePage::Unwritten => None,
                FilePage::Written(t) => Some(t),
            };
            let (lo, hi) = (
                off.max(p * HOST_PAGE_BYTES),
                (off + len).min((p + 1) * HOST_PAGE_BYTES),
            );
            let tag = limit.and_then(|t| {
                self.by_page.get(&(fi, p)).and_then(|ix| {
                    ix.iter()
                        .rev()
                        .map(|&i| &self.writes[fi][i])
                        .find(|w| w.since == since && w.at <= t && w.off < hi && w.off + w.len > lo)
                        .map(|w| w.tag)
                })
            });
            match out {
                None => out = Some(tag),
                Some(prev) if prev != tag => return Err(()),
                _ => {}
            }
        }
        Ok(out.flatten())
    }

    /// The journal after the cut: `Some((since, until))` when it exists
    /// and is not empty, written from `since` (creation or truncation)
    /// until `until` (the next truncation or unlink, not durable).
    fn journal_after_cut(&self) -> Option<(Ns, Ns)> {
        let mut state: Option<(Ns, bool)> = None;
        let mut until = Ns::MAX;
        for &(at, op) in &self.journal_ops {
            if !self.synced_after(at) {
                if op != JournalOp::Extend {
                    until = at;
                    break;
                }
                continue;
            }
            state = match op {
                JournalOp::Create(s) => Some((s, false)),
                JournalOp::Extend => state.map(|(s, _)| (s, true)),
                JournalOp::Empty => state.map(|_| (at, false)),
                JournalOp::Unlink => None,
            };
        }
        state.filter(|&(_, full)| full).map(|(s, _)| (s, until))
    }

    /// Recovery and check after the cut (module doc); `db` is the
    /// database's path.
    pub fn recover(&self, media: &dyn FileMedia, db: &str) -> SqliteCrash {
        let mut out = SqliteCrash::default();
        let ps = self.page_size;
        let pages: std::collections::BTreeSet<Pgno> = self
            .txs
            .iter()
            .flat_map(|t| t.pages.iter().copied())
            .collect();
        // The database file; None = torn or mixed.
        let mut view: BTreeMap<Pgno, Option<u64>> = pages
            .iter()
            .map(|&p| {
                let v = match self.read(media, db, SqlFile::Db, ALWAYS, u64::from(p - 1) * ps, ps) {
                    Ok(Some(Tag::Db { version, .. })) => Some(version),
                    Ok(_) => Some(0),
                    Err(()) => None,
                };
                (p, v)
            })
            .collect();
        if self.rollback_mode() {
            let journal = format!("{db}-journal");
            if let Some(window) = self.journal_after_cut() {
                out.journals_rolled_back += self.rollback(media, &journal, window, &mut view);
            }
        } else if self.mode == JournalMode::Wal {
            out.wal_frames_recovered = self.replay_wal(media, &format!("{db}-wal"), &mut view);
        }
        out.corrupt_pages = view.values().filter(|v| v.is_none()).count() as u64;
        for t in &self.txs {
            let applied = |p: &Pgno| view.get(p).copied().flatten().is_some_and(|v| v >= t.id);
            let full = t.pages.iter().all(applied);
            let own = t
                .pages
                .iter()
                .any(|p| view.get(p).copied().flatten() == Some(t.id));
            let promised = t.commit_at.is_some_and(|c| self.synced_after(c));
            if promised && !full {
                out.committed_lost += 1;
            }
            if own && (!full || t.commit_at.is_none()) {
                out.uncommitted_visible += 1;
            }
        }
        out
    }

    /// Rolls a hot journal back into `view`; 1 when it was hot.
    fn rollback(
        &self,
        media: &dyn FileMedia,
        path: &str,
        since: (Ns, Ns),
        view: &mut BTreeMap<Pgno, Option<u64>>,
    ) -> u64 {
        let j = SqlFile::Journal;
        let Ok(Some(Tag::JournalHeader {
            tx,
            orig_pages,
            nrec,
        })) = self.read(media, path, j, since, 0, JOURNAL_HEADER_BYTES)
        else {
            return 0;
        };
        let rec = self.page_size + 8;
        let n = nrec.unwrap_or(u32::MAX);
        for i in 0..n {
            let off = JOURNAL_HEADER_BYTES + u64::from(i) * rec;
            match self.read(media, path, j, since, off, rec) {
                Ok(Some(Tag::JournalRecord {
                    tx: t,
                    index,
                    pgno,
                    prior,
                })) if t == tx && index == i => {
                    view.insert(pgno, Some(prior));
                }
                _ => break,
            }
        }
        for (_, v) in view.range_mut(orig_pages + 1..) {
            *v = Some(0);
        }
        1
    }

    /// Replays the log into `view`; returns the frames applied.
    fn replay_wal(
        &self,
        media: &dyn FileMedia,
        path: &str,
        view: &mut BTreeMap<Pgno, Option<u64>>,
    ) -> u64 {
        let w = SqlFile::Wal;
        let Ok(Some(Tag::WalHeader { generation })) =
            self.read(media, path, w, ALWAYS, 0, WAL_HEADER_BYTES)
        else {
            return 0;
        };
        let frame = WAL_FRAME_HEADER_BYTES + self.page_size;
        let mut frames: Vec<(Pgno, u64)> = Vec::new();
        let mut valid = 0;
        for i in 0u32.. {
            let off = WAL_HEADER_BYTES + u64::from(i) * frame;
            match self.read(media, path, w, ALWAYS, off, frame) {
                Ok(Some(Tag::WalFrame {
                    generation: g,
                    index,
                    pgno,
                    version,
                    commit,
                })) if g == generation && index == i => {
                    frames.push((pgno, version));
                    if commit {
                        valid = frames.len();
                    }
                }
                _ => break,
            }
        }
        for &(p, v) in &frames[..valid] {
            view.insert(p, Some(v));
        }
        valid as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::sqlite::pager::Pager;
    use crate::workload::sqlite::{SqliteConfig, Synchronous};

    /// Every page written by a bio submitted at or before `durable` is on
    /// the card; later ones are not (a volatile cache lost them).
    struct UpTo(Ns);

    impl FileMedia for UpTo {
        fn page(&self, _: &str, _: Ns, _: Ns, _: u64) -> FilePage {
            FilePage::Written(self.0)
        }
    }

    /// Issues the steps of `txs` statements 10 ns apart, every call
    /// returning, but the last `unissued` steps of the last (the cut).
    fn run_cut(
        mode: JournalMode,
        sync: Synchronous,
        txs: usize,
        unissued: usize,
    ) -> (CrashLog, Vec<Ns>) {
        let cfg = SqliteConfig {
            journal_mode: mode,
            synchronous: sync,
            ..SqliteConfig::default()
        };
        let mut pager = Pager::new("/d/t.db", cfg.clone());
        let mut log = CrashLog::new(mode, cfg.page_size);
        let mut now = 0;
        let mut ends = Vec::new();
        for k in 0..txs {
            let mut steps = Vec::new();
            let w: Vec<Pgno> = if k == 0 { vec![1, 2, 3] } else { vec![2, 3] };
            pager.transaction(&[], &w, 3, &mut steps);
            let contents: Vec<Content> = steps.iter().map(|s| s.content).collect();
            log.plan(&contents);
            log.header_synced(sync != Synchronous::Off);
            let n = if k + 1 == txs {
                steps.len() - unissued
            } else {
                steps.len()
            };
            for (i, s) in steps.iter().take(n).enumerate() {
                now += 10;
                log.issued(i, s.file, &s.call, now);
                now += 10;
                log.returned(now);
            }
            ends.push(now);
        }
        (log, ends)
    }

    fn run(mode: JournalMode, sync: Synchronous, txs: usize) -> (CrashLog, Vec<Ns>) {
        run_cut(mode, sync, txs, 0)
    }

    #[test]
    fn every_mode_is_consistent_when_all_it_wrote_is_durable() {
        for mode in [
            JournalMode::Delete,
            JournalMode::Truncate,
            JournalMode::Persist,
            JournalMode::Wal,
        ] {
            let (log, ends) = run(mode, Synchronous::Full, 4);
            let out = log.recover(&UpTo(*ends.last().unwrap()), "/d/t.db");
            assert_eq!(out.committed_lost, 0, "{mode:?}");
            assert_eq!(out.uncommitted_visible, 0, "{mode:?}");
            assert_eq!(out.corrupt_pages, 0, "{mode:?}");
        }
    }

    #[test]
    fn a_cut_mid_transaction_rolls_the_hot_journal_back() {
        // The third transaction's database pages are written and synced,
        // its header not yet zeroed (zero, sync, close not issued).
        let (log, ends) = run_cut(JournalMode::Persist, Synchronous::Full, 3, 3);
        let out = log.recover(&UpTo(ends[2]), "/d/t.db");
        assert_eq!(out.journals_rolled_back, 1);
        assert_eq!(out.uncommitted_visible, 0);
        assert_eq!(out.committed_lost, 0);
    }

    #[test]
    fn journal_off_shows_a_partly_applied_transaction() {
        let (log, ends) = run(JournalMode::Off, Synchronous::Full, 3);
        // Page 2 of the third transaction written, page 3 not.
        struct Half(Ns);
        impl FileMedia for Half {
            fn page(&self, _: &str, _: Ns, _: Ns, p: u64) -> FilePage {
                FilePage::Written(if p == 2 { self.0 - 100 } else { self.0 })
            }
        }
        let out = log.recover(&Half(ends[2]), "/d/t.db");
        assert_eq!(out.uncommitted_visible, 1, "{out:?}");
    }
}
