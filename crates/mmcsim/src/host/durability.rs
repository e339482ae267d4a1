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
        self.file_writes = Some(FileWriteLog::default());
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

    /// Which file pages the host wrote to which logical pages, while
    /// recorded (an application's own recovery reads its files through
    /// it after a cut).
    pub fn file_write_log(&self) -> Option<&FileWriteLog> {
        self.file_writes.as_ref()
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

/// The file pages the host wrote while recording: every open of a path
/// (which file it resolved to) and every page a write bio carried, with
/// the 4 KiB logical page of the card it went to and when the bio was
/// submitted. An application's recovery (SQLite's) reads its files after
/// a cut through it.
#[derive(Clone, Debug, Default)]
pub struct FileWriteLog {
    /// `(when, path, file)` of each successful open, in order.
    opens: Vec<(Ns, String, crate::host::FileId)>,
    /// Per `(file, page index)`: `(logical page, submitted ns)` of each
    /// write bio, in submission order.
    pages: std::collections::BTreeMap<(crate::host::FileId, u64), Vec<(u32, Ns)>>,
}

impl FileWriteLog {
    pub(super) fn note_open(&mut self, path: &str, file: crate::host::FileId, now: Ns) {
        self.opens.push((now, path.to_string(), file));
    }

    pub(super) fn note_runs(
        &mut self,
        file: crate::host::FileId,
        runs: &[super::fs::PageRun],
        now: Ns,
    ) {
        for r in runs {
            let Some(sector) = r.sector else { continue };
            for i in 0..r.pages {
                let lpn = (sector / crate::types::SECTORS_PER_PAGE + i) as u32;
                self.pages
                    .entry((file, r.page + i))
                    .or_default()
                    .push((lpn, now));
            }
        }
    }

    /// The file `path` resolved to at its first open at or after `since`
    /// ns (a file created then), or at its last open before.
    pub fn file_of(&self, path: &str, since: Ns) -> Option<crate::host::FileId> {
        let mut named = self.opens.iter().filter(|(_, p, _)| p == path);
        let mut last = None;
        for &(at, _, f) in named.by_ref() {
            if at >= since {
                return Some(f);
            }
            last = Some(f);
        }
        last
    }

    /// The write bios of page `page` of `file` submitted in `[since,
    /// until)` ns: `(logical page, submitted)`, oldest first.
    pub fn page_writes(
        &self,
        file: crate::host::FileId,
        page: u64,
        since: Ns,
        until: Ns,
    ) -> Vec<(u32, Ns)> {
        self.pages
            .get(&(file, page))
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&(_, at)| (since..until).contains(&at))
                    .collect()
            })
            .unwrap_or_default()
    }
}
