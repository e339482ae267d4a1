//! The host's durability acknowledgements, for the power-loss model
//! (`simctl crash`): when a call that promises durability returns —
//! `fsync`, `fdatasync`, `sync`, a write on an `O_SYNC`/`O_DSYNC`
//! descriptor — the application counts on the data that call wrote. The
//! host records, off by default, each such return with the sector ranges
//! of the write bios the call itself waited for; the simulation compares
//! them with what the card still holds after a cut.
//!
//! With recording on, the file system also records what its own
//! recovery needs ([`super::fs::FileSystem::record_recovery`]).
//!
//! Covered: the data bios of the call (its writeback, an O_SYNC write's
//! data, a direct write). Not covered: pages the flusher had already
//! written before the call (the call does not wait for them again), and
//! the file system's own metadata and journal (checked by the file
//! system's recovery instead): so the count is a lower bound.

use super::stage::Host;
use crate::stats::report::CallKind;
use crate::types::Ns;

/// One durability acknowledgement: at `at` ns a call returned having
/// written `sectors` 512-byte sectors from `sector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurableReturn {
    /// When the call returned, ns.
    pub at: Ns,
    /// First sector of the device.
    pub sector: u64,
    /// Sectors.
    pub sectors: u64,
}

impl Host {
    /// Starts recording durability acknowledgements (off by default).
    pub fn record_durability(&mut self) {
        self.durable = Some(Vec::new());
        if let Some(fs) = self.mount.fs_mut() {
            fs.record_recovery();
        }
    }

    /// The file system's mount-time recovery and check after a power cut
    /// at `at` ns over the card's recovered content (zero without a
    /// file system).
    pub fn fs_recovery(
        &self,
        media: &dyn super::fs::recovery::MediaAfterCut,
        at: Ns,
    ) -> super::fs::recovery::FsRecovery {
        self.mount
            .fs()
            .map(|fs| fs.recover(media, at))
            .unwrap_or_default()
    }

    /// The durability acknowledgements recorded so far, in return order.
    pub fn durability_acks(&self) -> &[DurableReturn] {
        self.durable.as_deref().unwrap_or(&[])
    }

    /// A write bio of call `call` (sectors `[sector, sector + sectors)`)
    /// completed: remembered while recording.
    pub(super) fn note_call_write(&mut self, call: u32, sector: u64, sectors: u64) {
        if self.durable.is_some() {
            if let Some(c) = self.calls.get_mut(call) {
                c.wrote.push((sector, sectors));
            }
        }
    }

    /// Call `c` of task `t` returns successfully at `now`: when it
    /// promises durability, its writes are acknowledged.
    pub(super) fn note_return(&mut self, now: Ns, t: u32, c: &super::Call) {
        let Some(acks) = self.durable.as_mut() else {
            return;
        };
        let task = &self.tasks[t as usize];
        let durable = match c.kind {
            CallKind::Fsync | CallKind::Fdatasync | CallKind::Sync => true,
            CallKind::Write => task.file(task.fd).is_some_and(|f| f.flags.any_sync()),
            _ => false,
        };
        if durable {
            acks.extend(c.wrote.iter().map(|&(sector, sectors)| DurableReturn {
                at: now,
                sector,
                sectors,
            }));
        }
    }
}
