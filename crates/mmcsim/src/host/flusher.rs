//! The writeback flusher (`flush-179:0`): a kernel thread that writes
//! dirty pages back asynchronously, every `dirty_writeback_centisecs` for
//! files dirty longer than `dirty_expire_centisecs`, and at once while
//! dirty pages exceed the background threshold. Its bios carry the
//! flusher's own pid, not the application's, and are async; it backs off
//! while writes are congested. Throttled writers wake when dirty + writeback
//! pages fall below the `dirty_ratio` threshold.

use super::stage::{Below, Host, HostEvent, HostEvents, NO_CALL, PAGE_IO};
use crate::block::request::Bio;
use crate::engine::EventQueue;
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
        let layer = &mut b.block.layer;
        layer.start_plug(flusher);
        'files: for &f in &files {
            let first_sector = self.files.get(self.files.index_of_cache(f)).first_sector;
            let mut written = 0;
            while written < MAX_WRITEBACK_PAGES {
                if layer.congested(false) {
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
                layer.submit_bio(now, bio, true);
                written += pages as u64;
                submitted += pages as u64;
            }
        }
        layer.finish_plug(now, flusher);
        self.wb_files = files;
        if submitted > 0 {
            self.cpu.with(|c| c.submitted_by(flusher));
            b.block.run_queue(now, b.driver, b.q);
        }
        if periodic && workload_running {
            b.q.at(now + wb.writeback_interval_ns(), HostEvent::FlusherTick);
        }
    }

    /// A writeback bio finished: clean its pages and wake throttled
    /// writers once below the limit.
    pub(super) fn writeback_done<E: HostEvents>(
        &mut self,
        now: Ns,
        file: usize,
        first: u64,
        pages: u32,
        b: &mut Below<E>,
    ) {
        let fid = self.files.get(file).cache;
        self.cache.complete_write(fid, first, pages);
        if !self.throttled.is_empty() && !self.cache.over_dirty_limit(&self.wb) {
            for t in std::mem::take(&mut self.throttled) {
                let wake = self.cpu.with(|c| c.wake_thread(t, now));
                b.q.at(now + wake, HostEvent::Return(t));
            }
        }
        if self.flusher_waiting && !b.block.layer.congested(false) {
            self.flusher_waiting = false;
            self.flusher_kick(now, b.q);
        } else if !self.throttled.is_empty() && self.cache.writeback_pages() == 0 {
            self.flusher_kick(now, b.q);
        }
    }
}
