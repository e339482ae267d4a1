//! The integrity oracle checked after every device command
//! (`simctl run|replay --check-integrity`), incrementally.
//!
//! [`Emmc::start_integrity_check`] checks the whole FTL once against the
//! version oracle, copies its translations into a *shadow* (LPN → slot and
//! slot → LPN) and starts the mapping's [`MapJournal`]. After each command
//! [`Emmc::execute`] then checks only what the command touched:
//!
//! * the shadow follows the reported changes in order; a slot reported as
//!   the new home of an LPN while another LPN still maps to it is a
//!   violation;
//! * every *touched LPN* — the command's own LPNs, the LPNs whose data was
//!   programmed, and every LPN the FTL remapped (garbage-collection and
//!   wear-leveling moves included) — must be mapped as last reported and
//!   read its newest version: the write buffer's newest pending entry, else
//!   the record of its slot, which must name it (0 = unmapped);
//! * every *touched slot* — the old and new slot of every remapped LPN and
//!   every slot of an erased block — must hold valid data exactly when an
//!   LPN is mapped to it, and then that LPN's.
//!
//! So the cost per command is proportional to the pages it touched, GC
//! moves and erases included, not to the device size. A check that fails
//! stops the run with the command index, its simulated start time and the
//! LPN/slot at fault; [`Emmc::finish_integrity_check`] checks the whole FTL
//! once more at the end. The check only reads: the simulation's numbers are
//! the same with and without it.

use super::ftl::{IntegrityError, MapChange, Mapping, UNMAPPED};
use super::nand::{Geometry, NandOp};
use super::{DeviceError, Emmc};
use crate::types::{Ns, Op};
use serde::Serialize;

/// What the integrity check cost, for the report (`integrity` section).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct IntegrityStats {
    /// Device commands checked.
    pub checked_commands: u64,
    /// Logical pages checked (each command's own LPNs, the LPNs it
    /// programmed, and those the FTL remapped for it, GC moves included;
    /// counted once per command).
    pub checked_pages: u64,
    /// Physical slots checked (the old and new slot of every remapped LPN
    /// and every slot of an erased block; counted once per command).
    pub checked_slots: u64,
    /// Checks of the whole FTL (at the start and at the end of the run).
    pub full_checks: u64,
    /// Violations found (the first one stops the run, so a finished run
    /// reports 0).
    pub violations: u64,
}

/// When a violated check ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckPoint {
    /// The full check when the integrity check started (before the run).
    Start,
    /// After a device command.
    Command {
        /// 1-based index of the command among those checked.
        index: u64,
        /// Simulated time the driver issued it, ns.
        issued_ns: Ns,
        /// Its operation.
        op: Op,
        /// Its first 512-byte sector.
        sector: u64,
        /// Its length in 512-byte sectors.
        sectors: u32,
    },
    /// The full check at the end of the run, at this simulated time (ns).
    End(Ns),
}

impl std::fmt::Display for CheckPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            CheckPoint::Start => write!(f, "at the start of the run"),
            CheckPoint::Command {
                index,
                issued_ns,
                op,
                sector,
                sectors,
            } => write!(
                f,
                "after device command {index} ({op:?}, {sectors} sectors at sector {sector}, issued at {issued_ns} ns simulated)"
            ),
            CheckPoint::End(t) => write!(f, "at the end of the run ({t} ns simulated)"),
        }
    }
}

/// A failed integrity check: where it ran and what broke.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("integrity violation {at}: {error}")]
pub struct Violation {
    /// When the check ran.
    pub at: CheckPoint,
    /// The broken invariant, with the LPN or slot and what was expected.
    pub error: IntegrityError,
}

/// The state of a running check: the shadow translations and scratch lists.
#[derive(Clone, Debug)]
pub(super) struct IntegrityChecker {
    /// Per LPN: its slot as last reported ([`UNMAPPED`] = none).
    l2p: Vec<u32>,
    /// Per slot: the LPN last reported mapped to it ([`UNMAPPED`] = none).
    owner: Vec<u32>,
    /// Scratch: changes drained from the journal.
    changes: Vec<MapChange>,
    /// LPNs touched by the current command.
    lpns: Vec<u32>,
    /// Slots touched by the current command.
    slots: Vec<u32>,
    stats: IntegrityStats,
    /// The first violation, until the simulation takes it.
    violation: Option<Violation>,
}

impl IntegrityChecker {
    /// A checker whose shadow copies `ftl`'s translations (`slots` = the
    /// array's physical slots).
    fn new(ftl: &dyn Mapping, slots: u32) -> Result<IntegrityChecker, IntegrityError> {
        let lpns = ftl.user_lpns();
        let mut c = IntegrityChecker {
            l2p: vec![UNMAPPED; lpns as usize],
            owner: vec![UNMAPPED; slots as usize],
            changes: Vec::new(),
            lpns: Vec::new(),
            slots: Vec::new(),
            stats: IntegrityStats::default(),
            violation: None,
        };
        for lpn in 0..lpns {
            if let Some(slot) = ftl.lookup(lpn) {
                c.map(lpn, slot)?;
            }
        }
        c.lpns.clear();
        c.slots.clear();
        Ok(c)
    }

    /// `value` is below `limit`, or the out-of-range error naming `what`.
    fn in_range(what: &'static str, value: u32, limit: usize) -> Result<(), IntegrityError> {
        if value as usize >= limit {
            return Err(IntegrityError::OutOfRange {
                what,
                value,
                limit: limit as u32,
            });
        }
        Ok(())
    }

    /// `slot` is a slot of the array.
    fn slot_in_range(&self, slot: u32) -> Result<(), IntegrityError> {
        Self::in_range("slot", slot, self.owner.len())
    }

    /// `lpn` is a logical page of the device.
    fn lpn_in_range(&self, lpn: u32) -> Result<(), IntegrityError> {
        Self::in_range("lpn", lpn, self.l2p.len())
    }

    /// Records in the shadow that `lpn` now maps to `slot`.
    fn map(&mut self, lpn: u32, slot: u32) -> Result<(), IntegrityError> {
        self.unmap(lpn)?;
        self.slot_in_range(slot)?;
        let holder = self.owner[slot as usize];
        if holder != UNMAPPED {
            return Err(IntegrityError::DoubleMapped { slot, lpn, holder });
        }
        self.owner[slot as usize] = lpn;
        self.l2p[lpn as usize] = slot;
        self.slots.push(slot);
        Ok(())
    }

    /// Records in the shadow that `lpn` is unmapped.
    fn unmap(&mut self, lpn: u32) -> Result<(), IntegrityError> {
        self.lpn_in_range(lpn)?;
        let old = std::mem::replace(&mut self.l2p[lpn as usize], UNMAPPED);
        if old != UNMAPPED {
            self.owner[old as usize] = UNMAPPED;
            self.slots.push(old);
        }
        self.lpns.push(lpn);
        Ok(())
    }

    /// Notes a stripe page handed to the FTL: its LPNs, and the slots of
    /// every block erased on the way (in `ops`).
    pub(super) fn note_program(&mut self, entries: &[(u32, u32)], ops: &[NandOp], geo: &Geometry) {
        self.lpns.extend(entries.iter().map(|&(lpn, _)| lpn));
        let spb = geo.slots_per_block();
        for op in ops {
            if let NandOp::Erase { blk, .. } = *op {
                self.slots.extend(blk * spb..(blk + 1) * spb);
            }
        }
    }

    /// Checks what the command just run touched: its own LPNs
    /// `[first, end)` plus what was noted and reported.
    fn check_command(
        &mut self,
        ftl: &mut dyn Mapping,
        pending: &[(u32, u32)],
        expected: &[u32],
        (first, end): (u32, u32),
    ) -> Result<(), IntegrityError> {
        self.lpns.extend(first..end);
        self.changes.clear();
        if let Some(j) = ftl.journal() {
            j.drain_into(&mut self.changes);
        }
        let changes = std::mem::take(&mut self.changes);
        let applied = changes.iter().try_for_each(|&c| match c {
            MapChange::Map { lpn, slot } => self.map(lpn, slot),
            MapChange::Unmap { lpn } => self.unmap(lpn),
        });
        self.changes = changes;
        applied?;
        self.lpns.sort_unstable();
        self.lpns.dedup();
        self.slots.sort_unstable();
        self.slots.dedup();
        self.stats.checked_pages += self.lpns.len() as u64;
        self.stats.checked_slots += self.slots.len() as u64;
        for &lpn in &self.lpns {
            self.check_lpn(ftl, pending, expected, lpn)?;
        }
        for &slot in &self.slots {
            self.check_slot(ftl, slot)?;
        }
        self.lpns.clear();
        self.slots.clear();
        Ok(())
    }

    /// `lpn` is mapped as reported and reads its newest version.
    fn check_lpn(
        &self,
        ftl: &dyn Mapping,
        pending: &[(u32, u32)],
        expected: &[u32],
        lpn: u32,
    ) -> Result<(), IntegrityError> {
        self.lpn_in_range(lpn)?;
        let mapped = ftl.lookup(lpn);
        let got = match pending.iter().rev().find(|e| e.0 == lpn) {
            Some(&(_, ver)) => ver,
            None => match mapped {
                None => 0,
                Some(slot) => {
                    self.slot_in_range(slot)?;
                    match ftl.slot_record(slot) {
                        Some((l, ver)) if l == lpn => ver,
                        Some((p2l, _)) => {
                            return Err(IntegrityError::ReverseMismatch { lpn, slot, p2l })
                        }
                        None => return Err(IntegrityError::Unbacked { lpn, slot }),
                    }
                }
            },
        };
        let want = expected[lpn as usize];
        if got != want {
            return Err(IntegrityError::StaleData { lpn, got, want });
        }
        let reported = self.l2p[lpn as usize];
        let mapped = mapped.unwrap_or(UNMAPPED);
        if mapped != reported {
            return Err(IntegrityError::Unreported {
                lpn,
                mapped,
                reported,
            });
        }
        Ok(())
    }

    /// `slot` holds valid data exactly when an LPN maps to it, and then
    /// that LPN's.
    fn check_slot(&self, ftl: &dyn Mapping, slot: u32) -> Result<(), IntegrityError> {
        self.slot_in_range(slot)?;
        let owner = self.owner[slot as usize];
        match ftl.slot_record(slot) {
            None if owner == UNMAPPED => Ok(()),
            None => Err(IntegrityError::Unbacked { lpn: owner, slot }),
            Some((lpn, _)) if owner == UNMAPPED => Err(IntegrityError::Orphan { slot, lpn }),
            Some((lpn, _)) if lpn != owner => Err(IntegrityError::SlotOwner {
                slot,
                holds: lpn,
                mapped_by: owner,
            }),
            Some((lpn, _)) if ftl.lookup(lpn) != Some(slot) => {
                Err(IntegrityError::Orphan { slot, lpn })
            }
            Some(_) => Ok(()),
        }
    }
}

impl Emmc {
    /// Starts checking the FTL after every command (`--check-integrity`):
    /// checks the whole FTL once, then records its changes. An error when
    /// the full check fails or the mapping scheme does not report its
    /// changes.
    pub fn start_integrity_check(&mut self) -> Result<(), DeviceError> {
        let Some(journal) = self.ftl.journal() else {
            return Err(DeviceError::IntegrityUnsupported(self.ftl.scheme().name()));
        };
        journal.start();
        let at_start = |error| Violation {
            at: CheckPoint::Start,
            error,
        };
        self.ftl
            .check(self.wbuf.pending(), self.oracle.expected())
            .map_err(at_start)?;
        let mut checker = IntegrityChecker::new(&*self.ftl, self.geo.slots()).map_err(at_start)?;
        checker.stats.full_checks = 1;
        self.integrity = Some(Box::new(checker));
        Ok(())
    }

    /// Checks what command `cmd` (issued at `issued` ns) touched, if the
    /// check runs; the first violation is kept for
    /// [`Emmc::take_integrity_violation`] and ends the per-command checks
    /// (the state after it is not trustworthy).
    pub(super) fn check_after_command(&mut self, issued: Ns, cmd: &super::DeviceCommand) {
        if self.integrity.is_none() {
            return;
        }
        let range = match cmd.op {
            Op::Flush => (0, 0),
            _ => self.lpn_range(cmd.sector, cmd.sectors as u64),
        };
        let Some(c) = self.integrity.as_deref_mut() else {
            return;
        };
        if c.stats.violations > 0 {
            return;
        }
        c.stats.checked_commands += 1;
        let r = c.check_command(
            &mut *self.ftl,
            self.wbuf.pending(),
            self.oracle.expected(),
            range,
        );
        if let Err(error) = r {
            c.stats.violations += 1;
            c.violation = Some(Violation {
                at: CheckPoint::Command {
                    index: c.stats.checked_commands,
                    issued_ns: issued,
                    op: cmd.op,
                    sector: cmd.sector,
                    sectors: cmd.sectors,
                },
                error,
            });
        }
    }

    /// The first violation the per-command check found, once.
    pub fn take_integrity_violation(&mut self) -> Option<Violation> {
        self.integrity.as_deref_mut()?.violation.take()
    }

    /// Ends the check at simulated time `now` (ns) with a check of the whole
    /// FTL; returns what the check cost (`None` when it was not running).
    pub fn finish_integrity_check(
        &mut self,
        now: Ns,
    ) -> Result<Option<IntegrityStats>, DeviceError> {
        let Some(c) = self.integrity.as_deref_mut() else {
            return Ok(None);
        };
        if let Some(v) = c.violation.take() {
            return Err(v.into());
        }
        if c.stats.violations > 0 {
            return Ok(Some(c.stats));
        }
        c.stats.full_checks += 1;
        if let Err(error) = self.ftl.check(self.wbuf.pending(), self.oracle.expected()) {
            c.stats.violations += 1;
            return Err(Violation {
                at: CheckPoint::End(now),
                error,
            }
            .into());
        }
        Ok(Some(c.stats))
    }

    /// What the integrity check has cost so far (`None` when it is not
    /// running).
    pub fn integrity_stats(&self) -> Option<IntegrityStats> {
        self.integrity.as_deref().map(|c| c.stats)
    }
}

#[cfg(test)]
mod tests;
