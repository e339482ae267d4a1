//! What the power-loss model records while the run goes: every NAND
//! operation that changes what the array holds (stripe-page programs with
//! the `(lpn, version)` of each slot, erases, SLC-log programs) with the
//! window of its array operation, every host write with when its data
//! arrived and when its command completed, the flushes, and the
//! translation changes with the time of the command that made them. The
//! cut ([`super::cut`]) replays this record up to the instant of the cut.
//!
//! Recording starts once, right before the measured run, from the
//! mapping's state then (everything on NAND is durable at that moment).

use super::super::ftl::{MapChange, Mapping, UNMAPPED};
use super::super::nand::{Geometry, NandOp};
use crate::types::Ns;

/// Content marker of a slot holding nothing readable as data: erased.
pub(super) const ERASED: u32 = UNMAPPED;
/// Content marker: a slot programmed with padding (no LPN).
pub(super) const PADDING: u32 = u32::MAX - 1;

/// One NAND operation that changes the array, in issue order.
#[derive(Clone, Copy, Debug)]
pub(super) enum Logged {
    /// A stripe page programmed: plane-0 block `blk`, page `page`; its
    /// slots' `(lpn, version)` are `contents[first..first + stripe_slots]`.
    Program {
        /// Plane-0 block id.
        blk: u32,
        /// Page offset.
        page: u32,
        /// Start of the array operation (tPROG), ns.
        start: Ns,
        /// End, ns.
        end: Ns,
        /// Index of its first slot record in `contents`.
        first: u32,
    },
    /// A block erased.
    Erase {
        /// Block id.
        blk: u32,
        /// Start of tBERS, ns.
        start: Ns,
        /// End, ns.
        end: Ns,
    },
    /// An SLC-mode log program making `contents[first..first + n]` durable.
    SlcLog {
        /// Start of the array operation, ns.
        start: Ns,
        /// End, ns.
        end: Ns,
        /// Index of its first record in `contents`.
        first: u32,
        /// Records.
        n: u32,
    },
}

/// One host 4 KiB write as the device received it.
#[derive(Clone, Copy, Debug)]
pub(super) struct WriteRec {
    /// Logical page.
    pub lpn: u32,
    /// Its version (the integrity oracle's).
    pub version: u32,
    /// When its data was on the card (end of its bus transfer), ns.
    pub arrived: Ns,
    /// When its command completed (the card acknowledged it), ns;
    /// `Ns::MAX` until known.
    pub done: Ns,
    /// Index of the write command (to group a reliable write's pages).
    pub cmd: u32,
    /// A reliable (FUA) write.
    pub fua: bool,
}

/// A map checkpoint: a FLUSH_CACHE that programmed the dirty map pages.
#[derive(Clone, Copy, Debug)]
pub(super) struct Checkpoint {
    /// When the map programs ended (the checkpoint is durable then), ns.
    pub done: Ns,
    /// Translation changes it covers (a prefix of the record).
    pub changes: u32,
    /// Logged operations issued before it (the recovery scan reads the
    /// pages programmed from here on).
    pub ops: u32,
}

/// The record kept for the power-loss model.
#[derive(Clone, Debug)]
pub(crate) struct Tracker {
    pub(super) geo: Geometry,
    /// Per slot: `(lpn, version)` at the start of recording
    /// ([`ERASED`] when it held no valid data).
    pub(super) base: Vec<(u32, u32)>,
    /// Per LPN: its slot at the start ([`UNMAPPED`] = none).
    pub(super) base_l2p: Vec<u32>,
    /// Per LPN: its newest version at the start (0 = none).
    pub(super) base_expected: Vec<u32>,
    pub(super) ops: Vec<Logged>,
    pub(super) contents: Vec<(u32, u32)>,
    /// Translation changes, oldest first.
    pub(super) changes: Vec<MapChange>,
    pub(super) writes: Vec<WriteRec>,
    /// FLUSH_CACHE commands: (issued, completed), ns.
    pub(super) flushes: Vec<(Ns, Ns)>,
    pub(super) checkpoints: Vec<Checkpoint>,
    /// Index the next write command gets.
    cmd: u32,
    /// First write record of the command being executed.
    cmd_first: usize,
    /// Scratch: the changes of the batch being applied.
    batch: Vec<MapChange>,
    /// Array-operation times: tPROG lower / upper, tBERS, ns.
    pub(super) t_prog: (Ns, Ns),
    t_bers: Ns,
    /// The first erase of a multi-plane erase: (start, end), ns.
    last_erase: (Ns, Ns),
}

impl Tracker {
    /// Starts recording from `ftl`'s state, `expected` being the oracle's
    /// newest versions; `t` = (tPROG lower, tPROG upper, tBERS) in ns.
    pub(crate) fn new(
        geo: Geometry,
        ftl: &mut dyn Mapping,
        expected: &[u32],
        t: (Ns, Ns, Ns),
    ) -> Tracker {
        let lpns = ftl.user_lpns();
        let mut base = vec![(ERASED, 0); geo.slots() as usize];
        let mut base_l2p = vec![UNMAPPED; lpns as usize];
        for lpn in 0..lpns {
            if let Some(slot) = ftl.lookup(lpn) {
                base_l2p[lpn as usize] = slot;
                base[slot as usize] = (lpn, expected[lpn as usize]);
            }
        }
        if let Some(j) = ftl.journal() {
            j.start();
        }
        Tracker {
            geo,
            base,
            base_l2p,
            base_expected: expected.to_vec(),
            ops: Vec::new(),
            contents: Vec::new(),
            changes: Vec::new(),
            writes: Vec::new(),
            flushes: Vec::new(),
            checkpoints: Vec::new(),
            cmd: 0,
            cmd_first: 0,
            batch: Vec::new(),
            t_prog: (t.0, t.1),
            t_bers: t.2,
            last_erase: (0, 0),
        }
    }

    /// Before the NAND operations of one FTL call are timed: takes the
    /// translation changes the call made from `ftl`'s journal.
    pub(crate) fn begin_batch(&mut self, ftl: &mut dyn Mapping) {
        self.batch.clear();
        if let Some(j) = ftl.journal() {
            j.drain_into(&mut self.batch);
        }
        self.changes.extend_from_slice(&self.batch);
    }

    /// Records NAND operation `op`, timed to end at `end` ns; the content
    /// of a program is read from `ftl` (the slots it holds valid right
    /// after the call that issued it).
    pub(crate) fn note(&mut self, op: &NandOp, end: Ns, ftl: &dyn Mapping) {
        match *op {
            NandOp::Program {
                blk, page, upper, ..
            } => {
                let first = self.contents.len() as u32;
                let g = self.geo;
                for pl in 0..g.planes {
                    let b = blk + pl * g.blocks_per_plane;
                    for s in 0..g.slots_per_page {
                        let slot = g.slot(b, page, s);
                        let rec = ftl.slot_record(slot).unwrap_or_else(|| self.stale(slot));
                        self.contents.push(rec);
                    }
                }
                let t = if upper { self.t_prog.1 } else { self.t_prog.0 };
                self.ops.push(Logged::Program {
                    blk,
                    page,
                    start: end.saturating_sub(t),
                    end,
                    first,
                });
            }
            NandOp::Erase {
                blk, multi_plane, ..
            } => {
                let (start, end) = if multi_plane {
                    self.last_erase
                } else {
                    (end.saturating_sub(self.t_bers), end)
                };
                self.last_erase = (start, end);
                self.ops.push(Logged::Erase { blk, start, end });
            }
            NandOp::Read { .. } => {}
        }
    }

    /// The record of a slot programmed in this batch that holds no valid
    /// data any more (its LPN was moved or overwritten within the same FTL
    /// call): the LPN the batch last mapped there, version unknown (0), or
    /// padding.
    fn stale(&self, slot: u32) -> (u32, u32) {
        self.batch
            .iter()
            .rev()
            .find_map(|c| match *c {
                MapChange::Map { lpn, slot: s } if s == slot => Some((lpn, 0)),
                _ => None,
            })
            .unwrap_or((PADDING, 0))
    }

    /// An SLC-mode log program of `entries`, its array operation ending
    /// at `end` ns after `t_prog_ns`.
    pub(crate) fn note_slc_log(&mut self, entries: &[(u32, u32)], end: Ns, t_prog_ns: Ns) {
        let first = self.contents.len() as u32;
        self.contents.extend_from_slice(entries);
        self.ops.push(Logged::SlcLog {
            start: end.saturating_sub(t_prog_ns),
            end,
            first,
            n: entries.len() as u32,
        });
    }

    /// A host write of `lpn` at `version` whose data arrived at `arrived`
    /// ns, part of the current command (`fua`: a reliable write).
    pub(crate) fn note_write(&mut self, lpn: u32, version: u32, arrived: Ns, fua: bool) {
        self.writes.push(WriteRec {
            lpn,
            version,
            arrived,
            done: Ns::MAX,
            cmd: self.cmd,
            fua,
        });
    }

    /// The current command completed at `done` ns: its writes are
    /// acknowledged then.
    pub(crate) fn end_command(&mut self, done: Ns) {
        for w in &mut self.writes[self.cmd_first..] {
            w.done = done;
        }
        self.cmd_first = self.writes.len();
        self.cmd += 1;
    }

    /// A FLUSH_CACHE issued at `issued` completed at `done` ns;
    /// `checkpoint`: it programmed the dirty map pages (ending then).
    pub(crate) fn note_flush(&mut self, issued: Ns, done: Ns, checkpoint: bool) {
        self.flushes.push((issued, done));
        if checkpoint {
            self.checkpoints.push(Checkpoint {
                done,
                changes: self.changes.len() as u32,
                ops: self.ops.len() as u32,
            });
        }
    }
}
