//! ext4's mount after a power cut: JBD2 journal replay and an fsck-style
//! check of the modelled metadata.
//!
//! While recording ([`Ext4::record_recovery`]), each journal commit leaves
//! a [`TxRecord`]: the logical pages of its log body, of its commit block
//! and of the ordered data written before it, each with the instant the
//! host submitted it, and the home blocks of its metadata. At the cut the
//! record is read against the card ([`MediaAfterCut`]) the way
//! `jbd2_journal_recover` reads the log [src: Linux fs/jbd2/recovery.c,
//! `do_one_pass` PASS_SCAN: transactions are taken in sequence from the
//! tail and the scan ends at the first whose commit block is missing]:
//! a transaction replays when its commit block is durable and every
//! earlier one replayed; replay copies its logged blocks home whatever
//! they hold (no `journal_checksum` modelled: a stale or torn log block
//! becomes garbage metadata). Then the check (e2fsck's view of the
//! modelled metadata):
//! * a transaction that did not replay but whose commit had completed
//!   and whose home blocks are only partly on the media leaves bitmaps,
//!   inodes and directory blocks of different transactions (block bitmap
//!   vs extents, inode bitmap vs directory entries disagree);
//! * a metadata home block unreadable after the cut and not rewritten by
//!   replay;
//! * data=ordered: a replayed transaction's ordered data not on the
//!   media (a committed file exposing stale data; the ordering guarantee
//!   broken by the device, e.g. a volatile cache without barriers).
//!
//! Journal off: nothing is recorded and nothing replays (no check).
//! data=writeback: no ordered data is recorded, so stale data exposure is
//! not counted (a lower bound).

use super::Ext4;
use crate::host::fs::recovery::{FsRecovery, MediaAfterCut, PageState};
use crate::types::{Ns, SECTORS_PER_PAGE};
use std::collections::BTreeSet;

/// One journal transaction as the host wrote it.
#[derive(Clone, Debug, Default)]
pub(super) struct TxRecord {
    tid: u64,
    /// Log body blocks (descriptors and buffer copies): `(lpn, submitted)`.
    log: Vec<(u32, Ns)>,
    /// Its commit block, once submitted.
    commit: Option<(u32, Ns)>,
    /// Ordered data written before the log body.
    ordered: Vec<(u32, Ns)>,
    /// When the commit completed (waiters woken), ns.
    committed_at: Option<Ns>,
    /// Home logical pages of its metadata (and journaled data).
    home: Vec<u32>,
}

/// The transactions recorded, oldest first.
#[derive(Clone, Debug, Default)]
pub(super) struct Jbd2Record {
    txs: Vec<TxRecord>,
}

impl Jbd2Record {
    /// The record of transaction `tid` (made when first seen).
    fn tx(&mut self, tid: u64) -> &mut TxRecord {
        if self.txs.last().is_none_or(|t| t.tid != tid) {
            self.txs.push(TxRecord {
                tid,
                ..TxRecord::default()
            });
        }
        self.txs.last_mut().expect("pushed above")
    }

    /// Log blocks of `tid` submitted at `now`; a transaction whose log
    /// space this reuses was checkpointed before (JBD2 reuses log space
    /// only then) and leaves the record.
    fn log(&mut self, tid: u64, lpns: &[u32], now: Ns) {
        let set: BTreeSet<u32> = lpns.iter().copied().collect();
        self.txs.retain(|t| {
            t.tid == tid
                || !t
                    .log
                    .iter()
                    .chain(t.commit.iter())
                    .any(|(l, _)| set.contains(l))
        });
        self.tx(tid).log.extend(lpns.iter().map(|&l| (l, now)));
    }
}

fn lpn_of(sector: u64) -> u32 {
    (sector / SECTORS_PER_PAGE) as u32
}

impl Ext4 {
    /// Starts the recovery record (journal on only).
    pub(super) fn start_recovery_record(&mut self) {
        if self.journal.is_some() {
            self.recovery = Some(Jbd2Record::default());
        }
    }

    /// The commit of `tid` wrote ordered data at sectors `sectors`.
    pub(super) fn note_ordered(&mut self, tid: u64, sectors: &[(u64, u32)], now: Ns) {
        if let Some(r) = self.recovery.as_mut() {
            let lpns = sectors.iter().flat_map(|&(s, n)| {
                (lpn_of(s)..lpn_of(s + n as u64 + SECTORS_PER_PAGE - 1)).map(move |l| (l, now))
            });
            r.tx(tid).ordered.extend(lpns);
        }
    }

    /// The commit of `tid` wrote log blocks at `sectors` (`with_commit`:
    /// the last is the commit block, async commit).
    pub(super) fn note_log(&mut self, tid: u64, sectors: &[u64], with_commit: bool, now: Ns) {
        let Some(r) = self.recovery.as_mut() else {
            return;
        };
        let mut lpns: Vec<u32> = sectors.iter().map(|&s| lpn_of(s)).collect();
        let commit = if with_commit { lpns.pop() } else { None };
        r.log(tid, &lpns, now);
        if let Some(c) = commit {
            r.tx(tid).commit = Some((c, now));
        }
    }

    /// The commit block of `tid` was submitted at `now`.
    pub(super) fn note_commit_block(&mut self, tid: u64, sector: u64, now: Ns) {
        if let Some(r) = self.recovery.as_mut() {
            r.tx(tid).commit = Some((lpn_of(sector), now));
        }
    }

    /// The commit of `tid` completed at `now`; its buffers' home blocks
    /// are `blocks` (file-system block numbers).
    pub(super) fn note_committed(&mut self, tid: u64, blocks: &[u64], now: Ns) {
        let home: Vec<u32> = blocks.iter().map(|&b| lpn_of(self.sector_of(b))).collect();
        if let Some(r) = self.recovery.as_mut() {
            let t = r.tx(tid);
            t.committed_at = Some(now);
            t.home = home;
        }
    }

    /// Replay and check after a cut at `at` (module doc).
    pub(super) fn recover_after_cut(&self, media: &dyn MediaAfterCut, at: Ns) -> FsRecovery {
        let ordered_mode = self.config().data == crate::host::fs::DataMode::Ordered;
        self.recovery
            .as_ref()
            .map(|r| r.check(media, at, ordered_mode))
            .unwrap_or_default()
    }
}

impl Jbd2Record {
    /// Replay and check after a cut at `at` (module doc); `ordered_mode`:
    /// data=ordered.
    fn check(&self, media: &dyn MediaAfterCut, at: Ns, ordered_mode: bool) -> FsRecovery {
        let mut out = FsRecovery::default();
        let r = self;
        let mut replaying = true;
        let mut replayed_home: BTreeSet<u32> = BTreeSet::new();
        for t in &r.txs {
            let durable = |&(l, s): &(u32, Ns)| media.page(l, s) == PageState::Since;
            let commit_on_media = t.commit.as_ref().is_some_and(durable);
            replaying &= commit_on_media;
            if replaying {
                out.transactions_replayed += 1;
                out.replayed_bad_log_blocks += t.log.iter().filter(|x| !durable(x)).count() as u64;
                if ordered_mode {
                    out.stale_data_blocks +=
                        t.ordered.iter().filter(|x| !durable(x)).count() as u64;
                }
                replayed_home.extend(t.home.iter().copied());
                continue;
            }
            let Some(done) = t.committed_at.filter(|&d| d <= at) else {
                continue;
            };
            let home_new = t
                .home
                .iter()
                .filter(|&&l| media.page(l, done) == PageState::Since)
                .count();
            if home_new < t.home.len() {
                out.committed_transactions_lost += 1;
                if home_new > 0 {
                    out.partial_transactions += 1;
                }
            }
        }
        let homes: BTreeSet<u32> = r.txs.iter().flat_map(|t| t.home.iter().copied()).collect();
        out.torn_metadata_blocks = homes
            .iter()
            .filter(|l| !replayed_home.contains(l))
            .filter(|&&l| media.page(l, 0) == PageState::Unreadable)
            .count() as u64;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A medium where each listed page holds data that arrived at the
    /// given instant (unlisted: never written), or is unreadable.
    struct Fake(BTreeMap<u32, Option<Ns>>);

    impl MediaAfterCut for Fake {
        fn page(&self, lpn: u32, submitted: Ns) -> PageState {
            match self.0.get(&lpn) {
                Some(None) => PageState::Unreadable,
                Some(Some(t)) if *t >= submitted => PageState::Since,
                _ => PageState::Before,
            }
        }
    }

    /// Two transactions: log pages 10/11 + commit 12 at t=100 (done 150),
    /// log 13 + commit 14 at t=200 (done 250); homes 1 and 2.
    fn record() -> Jbd2Record {
        let mut r = Jbd2Record::default();
        r.log(1, &[10, 11], 100);
        r.tx(1).commit = Some((12, 100));
        r.tx(1).ordered = vec![(20, 90)];
        r.tx(1).committed_at = Some(150);
        r.tx(1).home = vec![1, 2];
        r.log(2, &[13], 200);
        r.tx(2).commit = Some((14, 200));
        r.tx(2).committed_at = Some(250);
        r.tx(2).home = vec![1, 2];
        r
    }

    #[test]
    fn a_durable_journal_replays_every_committed_transaction_cleanly() {
        let m = Fake([10, 11, 12, 13, 14, 20].map(|l| (l, Some(300))).into());
        let out = record().check(&m, 400, true);
        assert_eq!(out.transactions_replayed, 2);
        assert_eq!(out.inconsistencies(), 0);
        assert_eq!(out.committed_transactions_lost, 0);
    }

    #[test]
    fn a_commit_block_durable_before_its_log_replays_garbage() {
        // barrier=0: the commit block reached the media, a log block and
        // the ordered data did not.
        let m = Fake([(10, Some(300)), (12, Some(300))].into());
        let out = record().check(&m, 400, true);
        assert_eq!(out.transactions_replayed, 1);
        assert_eq!(out.replayed_bad_log_blocks, 1);
        assert_eq!(out.stale_data_blocks, 1);
        // The scan stops at tid 2 (no commit block): committed, lost.
        assert_eq!(out.committed_transactions_lost, 1);
    }

    #[test]
    fn a_lost_commit_with_half_its_metadata_home_is_a_partial_transaction() {
        let m = Fake([(1, Some(300)), (2, None)].into());
        let out = record().check(&m, 400, true);
        assert_eq!(out.transactions_replayed, 0);
        assert_eq!(out.partial_transactions, 2);
        assert_eq!(out.torn_metadata_blocks, 1);
        assert_eq!(out.committed_transactions_lost, 2);
    }

    #[test]
    fn reused_log_space_drops_the_checkpointed_transaction() {
        let mut r = record();
        r.log(3, &[10], 500);
        assert_eq!(r.txs.iter().map(|t| t.tid).collect::<Vec<_>>(), [2, 3]);
    }
}
