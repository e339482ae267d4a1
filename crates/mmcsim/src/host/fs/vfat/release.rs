//! The `flush` mount option at the last close of a written file
//! (`fat_file_release`, Linux 2.6.35-3.4): `fat_flush_inodes` starts
//! writeback of the file's data (`filemap_fdatawrite`, WB_SYNC_ALL:
//! WRITE_SYNC bios) and of the block device's dirty buffers
//! (`filemap_flush`: the FAT and directory entries, async WRITE bios),
//! without waiting for them; then the closing task sleeps in
//! `congestion_wait(BLK_RW_ASYNC, HZ/10)` until a request completes
//! (`clear_bdi_congested` wakes the waiters) or HZ/10 passes. The
//! writeback runs in the closing task, its submission cost on its core.
//! [src: Linux fs/fat/file.c `fat_file_release`, fs/fat/inode.c
//! `fat_flush_inodes`, mm/backing-dev.c `congestion_wait`.]

use std::collections::BTreeMap;

use super::Vfat;
use crate::block::request::{Bio, Submitter};
use crate::host::fs::{FsEvent, FsyncPlan, Kernel, PageRun};
use crate::host::page_cache::FileId;
use crate::types::{Ns, Op, NS_PER_S};

/// The closes in progress.
#[derive(Debug, Default)]
pub(super) struct Release {
    /// Inode whose last close asked for the flush.
    pending: Option<u32>,
    /// Closing tasks asleep in `congestion_wait`, with the sequence
    /// number of their sleep (a timer of an earlier sleep is stale).
    waiting: Vec<(u32, u32)>,
    /// Sleeps so far.
    seq: u32,
    /// Bios each closing task prepared, submitted after its cost.
    bios: BTreeMap<u32, Vec<Bio>>,
}

impl Vfat {
    /// The last close of `ino`: with `flush`, a written file's writeback
    /// is due before the call returns.
    pub(super) fn release(&mut self, ino: u32) {
        let flush = self.cfg.flush.unwrap_or(false);
        let written = std::mem::replace(&mut self.inode_mut(ino).written, false);
        if flush && written {
            self.release.pending = Some(ino);
        }
    }

    /// `fat_flush_inodes` + `congestion_wait` for task `t` at `now`, if
    /// its close asked for them.
    pub(super) fn release_sync(
        &mut self,
        t: u32,
        now: Ns,
        k: &mut dyn Kernel,
    ) -> Option<FsyncPlan> {
        let ino = self.release.pending.take()?;
        self.stats.close_flushes += 1;
        let pid = self.inode(ino).pid;
        let template = Bio {
            op: Op::Write,
            sector: 0,
            sectors: 0,
            sync: true,
            fua: false,
            secure: false,
            prio: false,
            pid,
            thread: t,
            ioprio: Default::default(),
            // Each bio gets its own page-I/O record (`page_write_bios`).
            submitter: Submitter::PageIo(0),
        };
        let mut bios = Vec::new();
        let data = self.inode(ino).mapping;
        self.start_writeback(data, template, &mut bios, k);
        let meta = Bio {
            sync: false,
            ..template
        };
        self.start_writeback(self.bdev, meta, &mut bios, k);
        let n = bios.len() as u32;
        if n > 0 {
            let at = k.submit_cost(t, now, n);
            self.release.bios.insert(t, bios);
            k.at(at, FsEvent::Submit { thread: t });
        }
        // congestion_wait(BLK_RW_ASYNC, HZ/10): HZ/10 whole ticks.
        let hz = NS_PER_S / self.tick;
        self.release.seq = self.release.seq.wrapping_add(1);
        let seq = self.release.seq;
        k.at(
            now + hz / 10 * self.tick,
            FsEvent::Timer((seq as u64) << 32 | t as u64),
        );
        self.release.waiting.push((t, seq));
        Some(FsyncPlan::Wait)
    }

    /// Takes every dirty page of mapping `m` for writeback and builds its
    /// bios from `template`.
    fn start_writeback(
        &mut self,
        m: FileId,
        template: Bio,
        bios: &mut Vec<Bio>,
        k: &mut dyn Kernel,
    ) {
        let max = (k.max_bio_sectors() / 8).max(1);
        let mut runs: Vec<PageRun> = Vec::new();
        while let Some((first, pages)) = k.cache().take_dirty_run(m, max) {
            self.map_pages(m, first, pages as u64, &mut runs);
            if m == self.bdev {
                self.bdev_taken(first, pages);
            }
            k.page_write_bios(m, &runs, template, bios);
        }
    }

    /// The block device's pages taken for writeback leave the FAT's
    /// dirty list.
    fn bdev_taken(&mut self, first: u64, pages: u32) {
        for p in first..first + pages as u64 {
            self.fat_dirty.remove(&p);
        }
    }

    /// A closing task's bios reach the block layer.
    pub(super) fn release_submit(&mut self, now: Ns, t: u32, k: &mut dyn Kernel) {
        if let Some(mut bios) = self.release.bios.remove(&t) {
            k.submit_plugged(now, t, &mut bios);
        }
    }

    /// A request completed: `congestion_wait` sleepers wake.
    pub(super) fn release_progress(&mut self, now: Ns, k: &mut dyn Kernel) {
        for (t, _) in std::mem::take(&mut self.release.waiting) {
            k.wake_task(t, now);
        }
    }

    /// HZ/10 passed for the sleep `tag` (sequence number and task).
    pub(super) fn release_timeout(&mut self, now: Ns, tag: u64, k: &mut dyn Kernel) {
        let (seq, t) = ((tag >> 32) as u32, tag as u32);
        if let Some(i) = self.release.waiting.iter().position(|&w| w == (t, seq)) {
            self.release.waiting.remove(i);
            k.wake_task(t, now);
        }
    }
}
