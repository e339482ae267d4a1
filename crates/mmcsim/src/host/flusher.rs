//! The writeback flusher (`flush-179:0`): a kernel thread that writes
//! dirty pages back asynchronously, every `dirty_writeback_centisecs` for
//! files dirty longer than `dirty_expire_centisecs`, and at once while
//! dirty pages exceed the background threshold. Its bios carry the
//! flusher's own pid, not the application's, and are async; it backs off
//! while writes are congested. Throttled writers wake when dirty + writeback
//! pages fall below the `dirty_ratio` threshold.

use super::page_cache::FileId;
use super::stage::{Below, Host, HostEvent, HostEvents, Notify};
use crate::block::request::{Bio, Submitter};
use crate::engine::EventQueue;
use crate::stats::DeviceTimes;
use crate::types::{IoPrio, Ns, Op, SECTORS_PER_PAGE};

/// Pid the flusher's bios are charged to.
pub const FLUSHER_PID: u32 = 1;
/// Pages one flusher pass writes per file before moving on
/// (`MAX_WRITEBACK_PAGES`, 4 MiB).
const MAX_WRITEBACK_PAGES: u64 = 1024;

impl Host {
    /// Wakes the flusher now (background writeback or a throttled writer).
    pub(super) fn flusher_kick<E: HostEvents>(&mut self, now: Ns, q: &mut EventQueue<E>) {
        if !self.flusher_kicked {
            self.flusher_kicked = true;
            q.at(now, HostEvent::FlusherTick);
        }
    }

    /// A flusher pass: periodic (kupdate) selection of expired files, or
    /// every dirty file while over the background threshold. The periodic
    /// pass re-arms itself while `workload_running`.
    pub(super) fn flusher_tick<E: HostEvents>(
        &mut self,
        now: Ns,
        workload_running: bool,
        b: &mut Below<E>,
    ) {
        let periodic = !self.flusher_kicked;
        self.flusher_kicked = false;
        let wb = self.wb;
        let background = self.cache.over_background_thresh(&wb) || !self.throttled.is_empty();
        let older_than = if background { 0 } else { wb.expire_ns() };
        let mut files = std::mem::take(&mut self.wb_files);
        self.cache.files_to_write(now, older_than, &mut files);
        let max_pages = self.max_bio_sectors / SECTORS_PER_PAGE as u32;
        let mut submitted = 0u64;
        let flusher = self.flusher_thread;
        let template = Bio {
            op: Op::Write,
            sector: 0,
            sectors: 0,
            sync: false,
            fua: false,
            secure: false,
            prio: false,
            pid: FLUSHER_PID,
            thread: flusher,
            ioprio: IoPrio::NORM,
            // Each bio gets its own page-I/O record (`write_bios`).
            submitter: Submitter::PageIo(0),
        };
        let mut bios = Vec::new();
        b.block.start_plug(flusher);
        'files: for &f in &files {
            let mut written = 0;
            while written < MAX_WRITEBACK_PAGES {
                if b.block.congested(false) {
                    // Back off: a write completion will kick us again.
                    self.flusher_waiting = true;
                    break 'files;
                }
                let Some((first, pages)) = self.cache.take_dirty_run(f, max_pages) else {
                    break;
                };
                bios.clear();
                self.write_bios(now, f, first, pages, template, Notify::None, &mut bios);
                for bio in bios.drain(..) {
                    b.block.submit_bio_plugged(now, bio);
                }
                written += pages as u64;
                submitted += pages as u64;
            }
        }
        b.block.finish_plug(now, flusher);
        self.wb_files = files;
        if submitted > 0 {
            self.cpu.with(|c| c.submitted_by(flusher));
            b.block.run_queue(now, b.q);
        }
        if periodic && workload_running && wb.writeback_interval_ns() > 0 {
            b.q.at(now + wb.writeback_interval_ns(), HostEvent::FlusherTick);
        }
        // Delayed allocation at writeback changed metadata.
        self.after_fs_change(now, b);
    }

    /// A writeback bio finished on the request that ran at `times`: clean
    /// its pages, tell the file system they are home, and wake throttled
    /// writers once below the limit.
    pub(super) fn writeback_done<E: HostEvents>(
        &mut self,
        now: Ns,
        fid: FileId,
        first: u64,
        pages: u32,
        times: DeviceTimes,
        b: &mut Below<E>,
    ) {
        self.cache.complete_write(fid, first, pages);
        if let Some(fs) = self.mount.fs_mut() {
            fs.pages_written(fid, first, pages, times);
        }
        if !self.throttled.is_empty() && !self.cache.over_dirty_limit(&self.wb) {
            for t in std::mem::take(&mut self.throttled) {
                let wake = self.cpu.with(|c| c.wake_thread(t, now));
                b.q.at(now + wake, HostEvent::Return(t));
            }
        }
        if self.flusher_waiting && !b.block.congested(false) {
            self.flusher_waiting = false;
            self.flusher_kick(now, b.q);
        } else if !self.throttled.is_empty() && self.cache.writeback_pages() == 0 {
            self.flusher_kick(now, b.q);
        }
        if !self.wb_waiters.is_empty() {
            self.wake_drained(now, fid, b);
        }
        self.with_fs(b, |fs, k| fs.writeback_progress(now, k));
    }
}
