//! The journal of translation changes a mapping reports for the incremental
//! integrity check (`--check-integrity`).
//!
//! A mapping that keeps one records every change of an LPN's translation —
//! host data programmed, data moved by garbage collection or wear leveling,
//! a trim — in the order it made them; the device drains the journal after
//! each command and checks only what changed (see
//! [`crate::device::Emmc::start_integrity_check`]). Recording is off until
//! the check starts, so a run without it pays one branch per change.

/// One change of a logical page's translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapChange {
    /// `lpn` now maps to physical slot `slot`; the slot it had before (if
    /// any) no longer holds it.
    Map {
        /// Logical page.
        lpn: u32,
        /// Its new physical slot.
        slot: u32,
    },
    /// `lpn` is unmapped (trimmed); the slot it had no longer holds it.
    Unmap {
        /// Logical page.
        lpn: u32,
    },
}

/// The changes recorded since the journal was last drained, oldest first.
#[derive(Clone, Debug, Default)]
pub struct MapJournal {
    recording: bool,
    changes: Vec<MapChange>,
}

impl MapJournal {
    /// Starts recording (forgetting anything recorded before).
    pub fn start(&mut self) {
        self.recording = true;
        self.changes.clear();
    }

    /// True once [`MapJournal::start`] was called.
    pub fn is_recording(&self) -> bool {
        self.recording
    }

    /// Records `change` if recording.
    #[inline]
    pub fn record(&mut self, change: MapChange) {
        if self.recording {
            self.changes.push(change);
        }
    }

    /// Moves the recorded changes, oldest first, to the end of `out`.
    pub fn drain_into(&mut self, out: &mut Vec<MapChange>) {
        out.append(&mut self.changes);
    }

    /// Test-only: suspends or resumes recording (to corrupt a mapping
    /// without reporting it).
    #[cfg(test)]
    pub(crate) fn set_recording(&mut self, on: bool) {
        self.recording = on;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_once_started_and_drains_in_order() {
        let mut j = MapJournal::default();
        j.record(MapChange::Unmap { lpn: 1 });
        let mut out = Vec::new();
        j.drain_into(&mut out);
        assert!(out.is_empty() && !j.is_recording());
        j.start();
        j.record(MapChange::Map { lpn: 2, slot: 9 });
        j.record(MapChange::Unmap { lpn: 2 });
        j.drain_into(&mut out);
        assert_eq!(
            out,
            [
                MapChange::Map { lpn: 2, slot: 9 },
                MapChange::Unmap { lpn: 2 }
            ]
        );
        j.drain_into(&mut out);
        assert_eq!(out.len(), 2, "drained once");
    }
}
