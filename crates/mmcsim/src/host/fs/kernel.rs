//! What the host core lends a file system while one of its methods runs:
//! the page cache, page I/O registered as the host's own (so completions
//! clean pages and wake sleepers), bio submission as a kernel thread on
//! the host CPU, timers, and waking a task that sleeps in the file system.
//! A file system never names the host core's types; it sees only this.

use super::{FileId, FsEvent, PageRun};
use crate::block::request::Bio;
use crate::host::page_cache::PageCache;
use crate::stats::DeviceTimes;
use crate::types::Ns;

/// The host kernel as a file system sees it.
pub trait Kernel {
    /// The page cache.
    fn cache(&mut self) -> &mut PageCache;

    /// Largest bio, 512-byte sectors (`max_sectors_kb` × 2).
    fn max_bio_sectors(&self) -> u32;

    /// Write bios for `runs` of mapping `m` — pages already taken for
    /// writeback and mapped — built from `template` (submitter, flags) and
    /// appended to `bios`; their completions go through the page cache
    /// like the flusher's. Returns how many.
    fn page_write_bios(
        &mut self,
        m: FileId,
        runs: &[PageRun],
        template: Bio,
        bios: &mut Vec<Bio>,
    ) -> u32;

    /// Kernel thread `thread` spends the block-layer submission cost of
    /// `n` bios on its core from `at`; returns when it is done, ns.
    fn submit_cost(&mut self, thread: u32, at: Ns, n: u32) -> Ns;

    /// Kernel thread `thread`'s `bios` enter the block layer under one
    /// plug at `now` (the vector is drained).
    fn submit_plugged(&mut self, now: Ns, thread: u32, bios: &mut Vec<Bio>);

    /// Schedules `ev` for the file system at `time`, ns.
    fn at(&mut self, time: Ns, ev: FsEvent);

    /// Task `t`, asleep in the file system, is woken at `now` and goes on
    /// with its call (wake-up cost charged to it).
    fn wake_task(&mut self, t: u32, now: Ns);

    /// Task `t`'s call waited, until `now`, on a request that ran at
    /// `times` (the latency split follows the critical request).
    fn call_waited(&mut self, t: u32, times: DeviceTimes, now: Ns);
}
