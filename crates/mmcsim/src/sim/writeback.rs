//! The writeback flusher (`flush-179:0`): a kernel thread that writes
//! dirty pages back asynchronously, every `dirty_writeback_centisecs` for
//! files dirty longer than `dirty_expire_centisecs`, and at once while
//! dirty pages exceed the background threshold. Its bios carry the
//! flusher's own pid, not the application's, and are async; it backs off
//! while writes are congested. Throttled writers wake when dirty + writeback
//! pages fall below the `dirty_ratio` threshold.

use super::{Event, Simulation, NO_CALL, PAGE_IO};
use crate::block::request::Bio;
use crate::types::{IoPrio, Ns, Op, SECTORS_PER_PAGE};

/// Pid the flusher's bios are charged to.
pub const FLUSHER_PID: u32 = 1;
/// Pages one flusher pass writes per file before moving on
/// (`MAX_WRITEBACK_PAGES`, 4 MiB).
const MAX_WRITEBACK_PAGES: u64 = 1024;

impl Simulation {
    /// Wakes the flusher now (background writeback or a throttled writer).
    pub(super) fn flusher_kick(&mut self, now: Ns) {
        if !self.flusher_kicked {
            self.flusher_kicked = true;
            self.q.push(now, Event::FlusherTick);
        }
    }

    /// A flusher pass: periodic (kupdate) selection of expired files, or
    /// every dirty file while over the background threshold.
    pub(super) fn flusher_tick(&mut self, now: Ns) {
        let periodic = !self.flusher_kicked;
        self.flusher_kicked = false;
        let wb = self.sc.writeback;
        let background = self.cache.over_background_thresh(&wb) || !self.throttled.is_empty();
        let older_than = if background { 0 } else { wb.expire_ns() };
        let mut files = std::mem::take(&mut self.wb_files);
        self.cache.files_to_write(now, older_than, &mut files);
        let max_pages = self.max_bio_sectors / SECTORS_PER_PAGE as u32;
        let mut submitted = 0u64;
        let flusher = self.flusher_thread;
        self.block.start_plug(flusher);
        'files: for &f in &files {
            let first_sector = self.files[self.file_of_cache(f)].first_sector;
            let mut written = 0;
            while written < MAX_WRITEBACK_PAGES {
                if self.block.congested(false) {
                    // Back off: a write completion will kick us again.
                    self.flusher_waiting = true;
                    break 'files;
                }
                let Some((first, pages)) = self.cache.take_dirty_run(f, max_pages) else {
                    break;
                };
                let bio = Bio {
                    op: Op::Write,
                    sector: first_sector + first * SECTORS_PER_PAGE,
                    sectors: pages * SECTORS_PER_PAGE as u32,
                    sync: false,
                    fua: false,
                    prio: false,
                    pid: FLUSHER_PID,
                    thread: flusher,
                    ioprio: IoPrio::NORM,
                    owner: PAGE_IO | NO_CALL,
                };
                self.block.submit_bio(now, bio, true);
                written += pages as u64;
                submitted += pages as u64;
            }
        }
        self.block.finish_plug(now, flusher);
        self.wb_files = files;
        if submitted > 0 {
            self.after_block_change(now);
        }
        if periodic && self.workload_running() {
            self.q
                .push(now + wb.writeback_interval_ns(), Event::FlusherTick);
        }
    }

    /// A writeback bio finished: clean its pages and wake throttled
    /// writers once below the limit.
    pub(super) fn writeback_done(&mut self, now: Ns, file: usize, first: u64, pages: u32) {
        let fid = self.files[file].cache;
        self.cache.complete_write(fid, first, pages);
        if !self.throttled.is_empty() && !self.cache.over_dirty_limit(&self.sc.writeback) {
            for t in std::mem::take(&mut self.throttled) {
                self.q.push(now + self.costs.wakeup, Event::ThreadDone(t));
            }
        }
        if self.flusher_waiting && !self.block.congested(false) {
            self.flusher_waiting = false;
            self.flusher_kick(now);
        } else if !self.throttled.is_empty() && self.cache.writeback_pages() == 0 {
            self.flusher_kick(now);
        }
    }

    /// True while a thread or the trace may still issue work.
    pub(super) fn workload_running(&self) -> bool {
        self.active_threads > 0 || self.trace.as_ref().is_some_and(|t| t.has_next())
    }

    fn file_of_cache(&self, fid: crate::host::FileId) -> usize {
        self.files
            .iter()
            .position(|f| f.cache == fid)
            .expect("flusher file exists")
    }
}
