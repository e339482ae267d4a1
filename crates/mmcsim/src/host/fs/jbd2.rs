//! JBD2's bookkeeping (fs/jbd2 of Linux 3.x): the circular log, the
//! running and the committing transaction, and the checkpoint lists. It
//! decides *what* a commit writes and where; the host's journal thread
//! (`kjournald2`) submits it and drives the commit's waits.
//!
//! * Buffers modified by file-system operations join the running
//!   transaction ([`Journal::add`]); a buffer is journaled once per
//!   transaction, in the order it first joined (`t_buffers`).
//! * A commit ([`Journal::start_commit`], `jbd2_journal_commit_transaction`)
//!   turns the running transaction into the committing one and lays its
//!   log out from the head: descriptor blocks (508 tags each: 4096-byte
//!   block − 12-byte header − 16-byte UUID, 8-byte tags), one copy of each
//!   buffer, and a commit block ([`CommitPlan`]).
//! * When the commit block is durable ([`Journal::finish_commit`]) the
//!   buffers move to the transaction's checkpoint list (a buffer sits on
//!   the list of the newest transaction that logged it); their home
//!   locations are then written by writeback or by a checkpoint, and each
//!   home write completion ([`Journal::written_home`]) lets the log tail
//!   advance past transactions with nothing left to checkpoint.
//! * The log is `journal_blocks` long; block 0 is the journal superblock,
//!   the log wraps from its last block to block 1.

use std::collections::{BTreeMap, BTreeSet};

use crate::host::page_cache::FileId;
use crate::types::Ns;

/// Tags per descriptor block: (4096 − 12 − 16) / 8 (`journal_tag_bytes`
/// without 64bit and csum v2, the first tag followed by the 16-byte UUID).
pub const TAGS_PER_DESCRIPTOR: usize = 508;

/// A buffer a transaction logs: a metadata block of the block-device
/// mapping, or (`data=journal`) a data page of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Buf {
    /// File-system block `blk` (its home location).
    Meta(u64),
    /// Page `page` of the file with mapping `file`, whose home is block
    /// `blk`.
    Data {
        /// Page-cache mapping.
        file: FileId,
        /// Page index.
        page: u64,
        /// Home block.
        blk: u64,
    },
}

impl Buf {
    /// Home block of the buffer.
    pub fn home(&self) -> u64 {
        match *self {
            Buf::Meta(b) => b,
            Buf::Data { blk, .. } => blk,
        }
    }
}

/// A transaction: the buffers it logs and the inodes whose data it orders.
#[derive(Clone, Debug, Default)]
pub struct Transaction {
    /// Transaction id (`t_tid`).
    pub tid: u64,
    /// Buffers in the order they joined.
    pub bufs: Vec<Buf>,
    /// The same, for membership tests.
    set: BTreeSet<Buf>,
    /// Mappings of inodes with data ordered before this commit
    /// (`t_inode_list`, data=ordered).
    pub ordered: BTreeSet<FileId>,
    /// When its first buffer joined, ns (`t_start`; the commit timer runs
    /// from here).
    pub started: Option<Ns>,
    /// Blocks freed by it, reusable once it commits.
    pub freed: Vec<(u64, u64)>,
}

impl Transaction {
    /// True when nothing would be logged or released by committing it.
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty() && self.freed.is_empty() && self.ordered.is_empty()
    }
}

/// What one log block of a commit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogBlock {
    /// A descriptor block (`JBD2_DESCRIPTOR_BLOCK`).
    Descriptor,
    /// The journaled copy of a buffer.
    Copy(Buf),
    /// The commit block (`JBD2_COMMIT_BLOCK`).
    Commit,
}

/// Where a commit's blocks go: `(file-system block, what)` in log order
/// (the commit block last).
#[derive(Clone, Debug, Default)]
pub struct CommitPlan {
    /// Transaction being committed.
    pub tid: u64,
    /// Log blocks in write order.
    pub blocks: Vec<(u64, LogBlock)>,
}

/// Journal counters for the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Jbd2Stats {
    /// Transactions committed.
    pub commits: u64,
    /// Commits started by the `commit=` timer.
    pub periodic_commits: u64,
    /// Log blocks written (descriptors, copies, commit blocks).
    pub log_blocks: u64,
    /// Descriptor blocks written.
    pub descriptor_blocks: u64,
    /// Times the log wrapped from its end to its start.
    pub wraps: u64,
    /// Checkpoints forced by lack of log space.
    pub checkpoints: u64,
}

/// A committed transaction's remaining checkpoint work.
#[derive(Clone, Copy, Debug)]
struct CpTxn {
    /// Its first log block (offset in the journal).
    start: u64,
    /// Buffers not yet written home.
    count: u64,
}

/// The journal.
#[derive(Clone, Debug)]
pub struct Journal {
    /// First block (journal superblock), file-system block number.
    first: u64,
    /// Length including the superblock, blocks.
    len: u64,
    /// Next log block to write (offset from `first`, in `1..len`).
    head: u64,
    /// Running transaction.
    running: Transaction,
    /// Committing transaction and its first log block.
    committing: Option<(Transaction, u64)>,
    /// Highest committed tid.
    committed: u64,
    /// Highest tid a commit was asked for.
    requested: u64,
    /// Buffer → tid of the checkpoint list it is on.
    cp_of: BTreeMap<Buf, u64>,
    /// tid → checkpoint state, oldest first.
    cp: BTreeMap<u64, CpTxn>,
    /// Buffers over which the running transaction is committed early
    /// (`j_max_transaction_buffers` = journal length / 4).
    max_transaction_buffers: usize,
    /// Counters.
    pub stats: Jbd2Stats,
}

impl Journal {
    /// A clean, empty journal of `len` blocks from block `first`; the first
    /// running transaction has tid 1.
    pub fn new(first: u64, len: u64) -> Journal {
        Journal {
            first,
            len,
            head: 1,
            running: Transaction {
                tid: 1,
                ..Transaction::default()
            },
            committing: None,
            committed: 0,
            requested: 0,
            cp_of: BTreeMap::new(),
            cp: BTreeMap::new(),
            max_transaction_buffers: (len / 4) as usize,
            stats: Jbd2Stats::default(),
        }
    }

    /// Its state in words, for the stall report.
    pub fn describe(&self) -> String {
        format!(
            "journal of {} blocks: running tid {} ({} buffers, needs {} log blocks, {} free), committing {:?}, committed {}, requested {}, {} transaction(s) to checkpoint",
            self.len,
            self.running.tid,
            self.running.bufs.len(),
            self.blocks_needed(),
            self.free_blocks(),
            self.committing_tid(),
            self.committed,
            self.requested,
            self.cp.len()
        )
    }

    /// The journal superblock's block.
    pub fn superblock(&self) -> u64 {
        self.first
    }

    /// The running transaction's id.
    pub fn running_tid(&self) -> u64 {
        self.running.tid
    }

    /// The running transaction.
    pub fn running(&self) -> &Transaction {
        &self.running
    }

    /// The committing transaction's id, if a commit is in progress.
    pub fn committing_tid(&self) -> Option<u64> {
        self.committing.as_ref().map(|c| c.0.tid)
    }

    /// The committing transaction.
    pub fn committing(&self) -> Option<&Transaction> {
        self.committing.as_ref().map(|c| &c.0)
    }

    /// Highest committed tid.
    pub fn committed_tid(&self) -> u64 {
        self.committed
    }

    /// Adds `buf` to the running transaction at `now`
    /// (`jbd2_journal_get_write_access` + `jbd2_journal_dirty_metadata`).
    /// Returns the running tid and whether the buffer was new to it.
    pub fn add(&mut self, buf: Buf, now: Ns) -> (u64, bool) {
        let t = &mut self.running;
        t.started.get_or_insert(now);
        let new = t.set.insert(buf);
        if new {
            t.bufs.push(buf);
        }
        (t.tid, new)
    }

    /// Orders the data of mapping `file` before the running transaction's
    /// commit (`jbd2_journal_file_inode`); returns the running tid.
    pub fn file_inode(&mut self, file: FileId, now: Ns) -> u64 {
        self.running.started.get_or_insert(now);
        self.running.ordered.insert(file);
        self.running.tid
    }

    /// Records blocks freed by the running transaction.
    pub fn defer_free(&mut self, start: u64, len: u64, now: Ns) -> u64 {
        self.running.started.get_or_insert(now);
        self.running.freed.push((start, len));
        self.running.tid
    }

    /// Whether the running transaction should commit now because it is
    /// large (`j_max_transaction_buffers`).
    pub fn running_is_full(&self) -> bool {
        self.running.bufs.len() >= self.max_transaction_buffers
    }

    /// Asks for the commit of `tid` (`jbd2_log_start_commit`); returns
    /// true when the caller must wait for it (not yet committed).
    pub fn request(&mut self, tid: u64) -> bool {
        if tid <= self.committed {
            return false;
        }
        self.requested = self.requested.max(tid);
        true
    }

    /// Whether a commit should start now: none in progress and the running
    /// transaction was asked for.
    pub fn should_start(&self) -> bool {
        self.committing.is_none() && self.requested >= self.running.tid
    }

    /// Log blocks free for new transactions.
    pub fn free_blocks(&self) -> u64 {
        let log = self.len - 1;
        log - self.used_blocks()
    }

    /// Log blocks between the tail and the head.
    fn used_blocks(&self) -> u64 {
        let log = self.len - 1;
        let tail = self.tail();
        (self.head + log - tail) % log
    }

    /// The oldest log block still needed: the oldest transaction with
    /// buffers not yet written home, else the committing one, else the
    /// head.
    pub fn tail(&self) -> u64 {
        if let Some((_, c)) = self.cp.iter().next() {
            return c.start;
        }
        self.committing.as_ref().map_or(self.head, |c| c.1)
    }

    /// Log blocks the running transaction needs to commit (descriptors +
    /// copies + commit block).
    pub fn blocks_needed(&self) -> u64 {
        let n = self.running.bufs.len();
        (n + n.div_ceil(TAGS_PER_DESCRIPTOR) + 1) as u64
    }

    /// The buffers of the oldest transaction on the checkpoint lists
    /// (`jbd2_log_do_checkpoint` writes these home), or `None` when nothing
    /// is left to checkpoint.
    pub fn oldest_checkpoint(&self) -> Option<(u64, Vec<Buf>)> {
        let (&tid, _) = self.cp.iter().next()?;
        let bufs = self
            .cp_of
            .iter()
            .filter(|(_, &t)| t == tid)
            .map(|(b, _)| *b)
            .collect();
        Some((tid, bufs))
    }

    /// Starts committing the running transaction (a new one starts
    /// running): returns its plan. The caller has made room
    /// ([`Journal::free_blocks`] ≥ [`Journal::blocks_needed`]).
    pub fn start_commit(&mut self) -> CommitPlan {
        let next = Transaction {
            tid: self.running.tid + 1,
            ..Transaction::default()
        };
        let t = std::mem::replace(&mut self.running, next);
        let start = self.head;
        let mut plan = CommitPlan {
            tid: t.tid,
            blocks: Vec::with_capacity(t.bufs.len() + 2),
        };
        for chunk in t.bufs.chunks(TAGS_PER_DESCRIPTOR) {
            let b = self.next_log_block();
            plan.blocks.push((b, LogBlock::Descriptor));
            self.stats.descriptor_blocks += 1;
            for &buf in chunk {
                let b = self.next_log_block();
                plan.blocks.push((b, LogBlock::Copy(buf)));
            }
        }
        let b = self.next_log_block();
        plan.blocks.push((b, LogBlock::Commit));
        self.stats.log_blocks += plan.blocks.len() as u64;
        self.committing = Some((t, start));
        plan
    }

    fn next_log_block(&mut self) -> u64 {
        let b = self.first + self.head;
        self.head += 1;
        if self.head == self.len {
            self.head = 1;
            self.stats.wraps += 1;
        }
        b
    }

    /// The commit block of the committing transaction is durable: its
    /// buffers go on its checkpoint list (leaving older lists). Returns the
    /// transaction (its buffers must now be dirtied for writeback to their
    /// home, its freed blocks released).
    pub fn finish_commit(&mut self) -> Transaction {
        let (t, start) = self.committing.take().expect("a commit is in progress");
        self.committed = t.tid;
        self.stats.commits += 1;
        let mut count = 0;
        for &b in &t.bufs {
            if let Some(old) = self.cp_of.insert(b, t.tid) {
                self.drop_cp(old);
            }
            count += 1;
        }
        if count > 0 {
            self.cp.insert(t.tid, CpTxn { start, count });
        }
        t
    }

    fn drop_cp(&mut self, tid: u64) {
        let c = self.cp.get_mut(&tid).expect("checkpoint list exists");
        c.count -= 1;
        if c.count == 0 {
            self.cp.remove(&tid);
        }
    }

    /// Page `page` and those after it of mapping `file` were truncated
    /// away (data=journal): their buffers waiting only for checkpoint
    /// leave the lists, as `journal_unmap_buffer` removes a truncated
    /// buffer that is on a checkpoint list only; their home blocks are
    /// freed, so nothing is to be written home. Returns how many left.
    pub fn forget_truncated(&mut self, file: FileId, page: u64) -> usize {
        let gone: Vec<Buf> = self
            .cp_of
            .range(Buf::Data { file, page, blk: 0 }..)
            .map(|(b, _)| *b)
            .take_while(|b| matches!(b, Buf::Data { file: f, .. } if *f == file))
            .collect();
        for b in &gone {
            self.written_home(b);
        }
        gone.len()
    }

    /// Whether transaction `tid` still has buffers to checkpoint.
    pub fn has_checkpoint(&self, tid: u64) -> bool {
        self.cp.contains_key(&tid)
    }

    /// Counts a commit started by the `commit=` timer.
    pub fn note_periodic(&mut self) {
        self.stats.periodic_commits += 1;
    }

    /// Counts a checkpoint forced by lack of log space.
    pub fn note_checkpoint(&mut self) {
        self.stats.checkpoints += 1;
    }

    /// Whether `buf` waits on a checkpoint list.
    pub fn on_checkpoint(&self, buf: &Buf) -> bool {
        self.cp_of.contains_key(buf)
    }

    /// `buf`'s home location was written: it leaves its checkpoint list,
    /// and the tail may advance.
    pub fn written_home(&mut self, buf: &Buf) {
        if let Some(tid) = self.cp_of.remove(buf) {
            self.drop_cp(tid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data page truncated away after its transaction committed leaves
    /// the checkpoint list with its old home (and its transaction's list
    /// empties); other files' buffers stay.
    #[test]
    fn truncated_data_buffers_leave_the_checkpoint_list() {
        let mut j = Journal::new(5000, 1024);
        for page in 0..3 {
            j.add(
                Buf::Data {
                    file: 7,
                    page,
                    blk: 100 + page,
                },
                0,
            );
        }
        j.add(
            Buf::Data {
                file: 8,
                page: 0,
                blk: 200,
            },
            0,
        );
        j.add(Buf::Meta(10), 0);
        assert!(j.request(1));
        let _ = j.start_commit();
        let t = j.finish_commit();
        assert_eq!(t.bufs.len(), 5);
        assert!(j.has_checkpoint(1));
        assert_eq!(j.forget_truncated(7, 1), 2);
        assert!(j.on_checkpoint(&Buf::Data {
            file: 7,
            page: 0,
            blk: 100
        }));
        assert!(!j.on_checkpoint(&Buf::Data {
            file: 7,
            page: 2,
            blk: 102
        }));
        assert!(j.on_checkpoint(&Buf::Data {
            file: 8,
            page: 0,
            blk: 200
        }));
        assert_eq!(j.forget_truncated(7, 0), 1);
        assert_eq!(j.forget_truncated(8, 0), 1);
        j.written_home(&Buf::Meta(10));
        assert!(!j.has_checkpoint(1));
        assert!(j.oldest_checkpoint().is_none());
    }

    #[test]
    fn a_commit_writes_descriptor_copies_then_commit_block_sequentially() {
        let mut j = Journal::new(5000, 1024);
        j.add(Buf::Meta(10), 0);
        j.add(Buf::Meta(20), 0);
        assert_eq!(j.add(Buf::Meta(10), 1), (1, false));
        assert!(j.request(1));
        assert!(j.should_start());
        assert_eq!(j.blocks_needed(), 4);
        let p = j.start_commit();
        assert_eq!(
            p.blocks,
            vec![
                (5001, LogBlock::Descriptor),
                (5002, LogBlock::Copy(Buf::Meta(10))),
                (5003, LogBlock::Copy(Buf::Meta(20))),
                (5004, LogBlock::Commit)
            ]
        );
        assert_eq!(j.running_tid(), 2);
        assert_eq!(j.free_blocks(), 1023 - 4);
        j.finish_commit();
        assert_eq!(j.committed_tid(), 1);
        assert!(!j.request(1));
        // the tail stays until both buffers are home
        assert_eq!(j.tail(), 1);
        j.written_home(&Buf::Meta(10));
        assert_eq!(j.tail(), 1);
        j.written_home(&Buf::Meta(20));
        assert_eq!(j.tail(), 5);
        assert_eq!(j.free_blocks(), 1023);
    }

    #[test]
    fn a_buffer_relogged_moves_to_the_newer_checkpoint_list_and_the_log_wraps() {
        let mut j = Journal::new(0, 8);
        j.add(Buf::Meta(1), 0);
        j.request(1);
        j.start_commit();
        j.finish_commit();
        j.add(Buf::Meta(1), 0);
        j.request(2);
        let p = j.start_commit();
        j.finish_commit();
        // tid 1's list emptied when tid 2 relogged the block: tail moved
        assert_eq!(j.tail(), 4);
        assert_eq!(p.blocks.last().unwrap().0, 6);
        j.written_home(&Buf::Meta(1));
        j.add(Buf::Meta(2), 0);
        j.request(3);
        let p = j.start_commit();
        assert_eq!(
            p.blocks.iter().map(|b| b.0).collect::<Vec<_>>(),
            vec![7, 1, 2]
        );
        assert_eq!(j.stats.wraps, 1);
    }
}
