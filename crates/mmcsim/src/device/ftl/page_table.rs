//! The page-level logical-to-physical (L2P) table: one entry per 4 KiB
//! logical page, holding the physical slot of its newest data.
//!
//! Contract: the table only records translations. Placing data is the
//! block manager's job; [`PageTable::write`] joins the two — program a
//! stripe page at a write point, then point each LPN at its new slot and
//! invalidate the slot it replaces. Every change is also offered to the
//! table's [`MapJournal`] (recorded only while the integrity check runs).

use super::block_manager::{BlockManager, Stream, StripePage};
use super::integrity_journal::{MapChange, MapJournal};
use super::{FtlStats, UNMAPPED};
use crate::device::nand::NandOp;
use crate::device::state::{StateError, StateReader};

/// L2P entries of every user LPN.
#[derive(Clone, Debug)]
pub struct PageTable {
    l2p: Vec<u32>,
    /// Logical pages covered (`l2p.len()` except in a table built by
    /// [`PageTable::unfilled`] before its state is loaded).
    lpns: u32,
    journal: MapJournal,
}

impl PageTable {
    /// A table of `lpns` logical pages, none mapped.
    pub fn new(lpns: u32) -> PageTable {
        PageTable {
            l2p: vec![UNMAPPED; lpns as usize],
            lpns,
            journal: MapJournal::default(),
        }
    }

    /// A table of `lpns` logical pages with room for them but no entries
    /// yet: only to restore a saved state into with
    /// [`PageTable::load_state`], which writes every entry (so none is
    /// filled first only to be overwritten).
    pub(super) fn unfilled(lpns: u32) -> PageTable {
        PageTable {
            l2p: Vec::with_capacity(lpns as usize),
            lpns,
            journal: MapJournal::default(),
        }
    }

    /// Logical pages the table covers.
    pub fn lpns(&self) -> u32 {
        self.lpns
    }

    /// Physical slot holding `lpn`, if mapped.
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        match self.l2p[lpn as usize] {
            UNMAPPED => None,
            s => Some(s),
        }
    }

    /// Prefetches the host-CPU cache line of `lpn`'s entry (a simulator
    /// performance hint, see [`crate::device::warm`]).
    #[inline]
    pub fn warm(&self, lpn: u32) {
        if let Some(e) = self.l2p.get(lpn as usize) {
            crate::device::warm::prefetch(e);
        }
    }

    /// Maps `lpn` to `slot`; returns the slot it replaces, if any.
    pub fn update(&mut self, lpn: u32, slot: u32) -> Option<u32> {
        self.journal.record(MapChange::Map { lpn, slot });
        let old = std::mem::replace(&mut self.l2p[lpn as usize], slot);
        (old != UNMAPPED).then_some(old)
    }

    /// Unmaps `lpn`; returns the slot it had, if any.
    pub fn trim(&mut self, lpn: u32) -> Option<u32> {
        self.journal.record(MapChange::Unmap { lpn });
        let old = std::mem::replace(&mut self.l2p[lpn as usize], UNMAPPED);
        (old != UNMAPPED).then_some(old)
    }

    /// Every entry, by LPN ([`UNMAPPED`] = none): a saved device state.
    pub fn entries(&self) -> &[u32] {
        &self.l2p
    }

    /// Replaces every entry with the saved table read from `r`.
    pub(super) fn load_state(&mut self, r: &mut StateReader<'_>) -> Result<(), StateError> {
        r.u32s_replace("the L2P table", self.lpns as usize, &mut self.l2p)
    }

    /// The journal of translation changes (for the integrity check).
    pub fn journal_mut(&mut self) -> &mut MapJournal {
        &mut self.journal
    }

    /// Number of mapped LPNs (a scan: for checks, not the hot path).
    pub fn mapped(&self) -> u64 {
        self.l2p.iter().filter(|&&s| s != UNMAPPED).count() as u64
    }

    /// Programs `entries` (`(lpn, version)`, at most a stripe page; the rest
    /// is padding) at `die`'s `stream` write point, then maps each LPN to
    /// its new slot and invalidates the slot it replaces.
    pub fn write(
        &mut self,
        blocks: &mut BlockManager,
        die: u32,
        stream: Stream,
        entries: &[(u32, u32)],
        stats: &mut FtlStats,
        ops: &mut Vec<NandOp>,
    ) -> StripePage {
        let at = blocks.program(die, stream, entries, stats, ops);
        for (i, &(lpn, _)) in entries.iter().enumerate() {
            if let Some(old) = self.update(lpn, blocks.slot_of(at, i as u32)) {
                blocks.invalidate(old);
            }
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_and_trim_return_the_replaced_slot() {
        let mut t = PageTable::new(4);
        assert_eq!(t.lookup(2), None);
        assert_eq!(t.update(2, 10), None);
        assert_eq!(t.update(2, 11), Some(10));
        assert_eq!(t.lookup(2), Some(11));
        assert_eq!(t.mapped(), 1);
        assert_eq!(t.trim(2), Some(11));
        assert_eq!(t.trim(2), None);
        assert_eq!(t.mapped(), 0);
    }
}
