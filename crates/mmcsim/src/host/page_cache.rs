//! The page cache: per-file page-state arrays, CLOCK eviction, and the
//! resumable buffered-read walk that drives read-ahead.

use std::collections::VecDeque;

use serde::Serialize;

use super::readahead::{ondemand, RaDecision, RaState};

/// Identifier of a file in a [`PageCache`] (index in the order files were
/// added).
pub type FileId = u32;

/// Page is in the cache with valid data (`PG_uptodate`).
pub(super) const UPTODATE: u8 = 1 << 0;
/// Page is in the cache and a read of it is in flight (`PG_locked` for I/O).
pub(super) const INFLIGHT: u8 = 1 << 1;
/// Read-ahead marker (`PG_readahead`).
pub(super) const READAHEAD: u8 = 1 << 2;
/// Page holds data not yet written back (`PG_dirty`).
pub(super) const DIRTY: u8 = 1 << 3;
/// Page is being written back (`PG_writeback`).
pub(super) const WRITEBACK: u8 = 1 << 4;
/// Page was accessed since the CLOCK hand last passed (`PG_referenced`).
pub(super) const REFERENCED: u8 = 1 << 5;
/// A read returned `WaitFor` on this page and has not resumed yet (so the
/// resumed look-up is not counted twice in the statistics).
pub(super) const WAITER: u8 = 1 << 6;
/// Either bit means the page is resident.
pub(super) const PRESENT: u8 = UPTODATE | INFLIGHT;
/// Pages with any of these bits cannot be evicted (a waiting reader holds a
/// reference to its page, as the kernel's `page_cache_get` does).
pub(super) const PINNED: u8 = INFLIGHT | DIRTY | WRITEBACK | WAITER;

/// The I/O a [`PageCache::read_step`] or [`PageCache::write_begin`] call asks
/// the caller to submit.
///
/// `submit` is a reusable buffer: each call clears it first, then appends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadPlan {
    /// Reads to submit, in ascending page order per trigger.
    pub submit: Vec<ReadIo>,
}

/// One contiguous read of file pages to submit to the block layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReadIo {
    /// File the pages belong to.
    pub file: FileId,
    /// First page (4 KiB units from the start of the file).
    pub first_page: u64,
    /// Number of pages (at most the read-ahead maximum, and at least 1).
    pub pages: u32,
    /// True for asynchronous read-ahead (triggered by a PG_readahead marker:
    /// nobody waits for it yet); false for a synchronous (demanded) read,
    /// including the read-ahead pages of a synchronous window.
    pub readahead: bool,
}

/// Outcome of one [`PageCache::read_step`] (or [`PageCache::write_begin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadStep {
    /// Every page of the range is uptodate; the read (or write) can proceed.
    Done,
    /// `page` is not uptodate: sleep until its read completes, then call again
    /// starting from `page`.
    WaitFor {
        /// The page (4 KiB units) to wait for.
        page: u64,
    },
}

/// Page-cache counters, all in pages or events since creation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PageCacheStats {
    /// Capacity in 4 KiB pages.
    pub capacity_pages: u64,
    /// Pages resident now (uptodate or being read).
    pub resident_pages: u64,
    /// Dirty pages now.
    pub dirty_pages: u64,
    /// Pages under writeback now.
    pub writeback_pages: u64,
    /// Page look-ups by reads that found the page resident (a resumed read's
    /// re-look-up of the page it waited for is not counted).
    pub hits: u64,
    /// Page look-ups by reads that found the page absent.
    pub misses: u64,
    /// Times a read had to wait for a page being read.
    pub waits: u64,
    /// Pages submitted for reading (demanded, read-ahead and read-modify-write).
    pub pages_read: u64,
    /// Submitted pages beyond the end of the `read()` that triggered them.
    pub readahead_pages: u64,
    /// Synchronous read-ahead triggers (page misses).
    pub sync_readaheads: u64,
    /// Asynchronous read-ahead triggers (PG_readahead hits that were not
    /// skipped for congestion).
    pub async_readaheads: u64,
    /// PG_readahead hits skipped because reads were congested.
    pub congested_skips: u64,
    /// Pages evicted by CLOCK.
    pub evictions: u64,
    /// Pages read before a partial-page write (read-modify-write).
    pub rmw_reads: u64,
    /// Pages taken for writeback.
    pub pages_written: u64,
}

/// Per-file state.
#[derive(Clone, Debug, Default)]
pub(super) struct File {
    /// One flag byte per page.
    pub(super) flags: Vec<u8>,
    /// Dirty pages of this file.
    pub(super) nr_dirty: u64,
    /// Time (ns) the file went from clean to dirty (`inode->dirtied_when`).
    pub(super) dirtied_when: Option<u64>,
    /// Where the next writeback pass starts (`mapping->writeback_index`).
    pub(super) writeback_index: u64,
    /// Pages of this file under writeback (`PAGECACHE_TAG_WRITEBACK`).
    pub(super) nr_writeback: u64,
}

/// A page cache of 4 KiB pages over files, with CLOCK (second-chance)
/// eviction of clean, idle pages and Linux 3.x on-demand read-ahead.
#[derive(Clone, Debug)]
pub struct PageCache {
    pub(super) files: Vec<File>,
    capacity: u64,
    resident: u64,
    /// CLOCK ring: every resident page exactly once; the hand is the front.
    clock: VecDeque<(FileId, u64)>,
    pub(super) nr_dirty: u64,
    pub(super) nr_writeback: u64,
    pub(super) stats: PageCacheStats,
}

impl PageCache {
    /// An empty cache holding at most `capacity_pages` 4 KiB pages (it may
    /// exceed this only while every resident page is in flight, dirty or under
    /// writeback, as the kernel would have to wait for reclaim).
    pub fn new(capacity_pages: u64) -> PageCache {
        PageCache {
            files: Vec::new(),
            capacity: capacity_pages,
            resident: 0,
            clock: VecDeque::new(),
            nr_dirty: 0,
            nr_writeback: 0,
            stats: PageCacheStats::default(),
        }
    }

    /// Adds a file of `pages` 4 KiB pages, none of them cached, and returns
    /// its id.
    pub fn add_file(&mut self, pages: u64) -> FileId {
        let id = FileId::try_from(self.files.len()).expect("fewer than 2^32 files");
        self.files.push(File {
            flags: vec![0; pages as usize],
            ..File::default()
        });
        id
    }

    /// Grows `file` to at least `pages` pages (new pages are not cached).
    /// Never shrinks.
    pub fn extend_file(&mut self, file: FileId, pages: u64) {
        let f = &mut self.files[file as usize];
        if (f.flags.len() as u64) < pages {
            f.flags.resize(pages as usize, 0);
        }
    }

    /// Size of `file` in pages.
    pub fn file_pages(&self, file: FileId) -> u64 {
        self.files[file as usize].flags.len() as u64
    }

    /// Capacity in pages.
    pub fn capacity_pages(&self) -> u64 {
        self.capacity
    }

    /// Pages resident now (uptodate or being read).
    pub fn resident_pages(&self) -> u64 {
        self.resident
    }

    /// Whether page `page` of `file` is cached with valid data.
    pub fn is_uptodate(&self, file: FileId, page: u64) -> bool {
        self.flags(file, page) & UPTODATE != 0
    }

    /// Whether page `page` of `file` is resident (uptodate or being read).
    pub fn is_present(&self, file: FileId, page: u64) -> bool {
        self.flags(file, page) & PRESENT != 0
    }

    /// Whether page `page` of `file` carries the PG_readahead marker.
    pub fn has_readahead_marker(&self, file: FileId, page: u64) -> bool {
        self.flags(file, page) & READAHEAD != 0
    }

    /// Counters and current occupancy.
    pub fn stats(&self) -> PageCacheStats {
        PageCacheStats {
            capacity_pages: self.capacity,
            resident_pages: self.resident,
            dirty_pages: self.nr_dirty,
            writeback_pages: self.nr_writeback,
            ..self.stats
        }
    }

    pub(super) fn flags(&self, file: FileId, page: u64) -> u8 {
        self.files[file as usize]
            .flags
            .get(page as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Walks pages `[pos, end)` of `file` for a buffered `read()`, as the
    /// kernel's `do_generic_file_read` loop does.
    ///
    /// At a missing page it runs synchronous read-ahead (falling back to a
    /// single-page read); at a page carrying PG_readahead it clears the marker
    /// and runs asynchronous read-ahead unless `reads_congested`. Pages chosen
    /// for reading are marked in flight and their I/O appended to
    /// `plan.submit` (cleared first) as contiguous runs of at most
    /// `ra_max_pages` pages. Returns [`ReadStep::Done`] when every page of the
    /// range is uptodate, or [`ReadStep::WaitFor`] for the first page that is
    /// not: the caller sleeps until it completes and calls again from that
    /// page with the same `end`.
    ///
    /// `ra_max_pages` is `read_ahead_kb / 4` (0 disables read-ahead). `ra` is
    /// the open file's state; `ra.prev_pos` is set to the last page read when
    /// the walk finishes (`Done`). Pages at or beyond the end of the file are
    /// ignored.
    #[allow(clippy::too_many_arguments)]
    pub fn read_step(
        &mut self,
        file: FileId,
        ra: &mut RaState,
        pos: u64,
        end: u64,
        ra_max_pages: u32,
        reads_congested: bool,
        plan: &mut ReadPlan,
    ) -> ReadStep {
        plan.submit.clear();
        let end = end.min(self.file_pages(file));
        let max = u64::from(ra_max_pages);
        let mut index = pos;
        while index < end {
            let mut counted = false;
            let mut flags = self.flags(file, index);
            if flags & PRESENT == 0 {
                self.stats.misses += 1;
                counted = true;
                if max > 0 {
                    // page_cache_sync_readahead
                    self.stats.sync_readaheads += 1;
                    let cache = &*self;
                    let d = ondemand(ra, max, false, index, end - index, |p| {
                        cache.is_present(file, p)
                    });
                    if let Some(d) = d {
                        self.submit_readahead(file, d, false, end, max, plan);
                    }
                }
                if self.flags(file, index) & PRESENT == 0 {
                    // no_cached_page: read just this page.
                    let one = RaDecision {
                        start: index,
                        nr: 1,
                        lookahead: 0,
                    };
                    self.submit_readahead(file, one, false, end, max.max(1), plan);
                }
                flags = self.flags(file, index);
            }
            if flags & READAHEAD != 0 {
                // page_cache_async_readahead: the marker is cleared first,
                // even when congestion then skips the read-ahead.
                self.files[file as usize].flags[index as usize] &= !READAHEAD;
                if reads_congested {
                    self.stats.congested_skips += 1;
                } else if max > 0 {
                    self.stats.async_readaheads += 1;
                    let cache = &*self;
                    let d = ondemand(ra, max, true, index, end - index, |p| {
                        cache.is_present(file, p)
                    });
                    if let Some(d) = d {
                        self.submit_readahead(file, d, true, end, max, plan);
                    }
                }
            }
            if self.flags(file, index) & PRESENT == 0 {
                // Evicted to make room for the asynchronous window (only
                // possible when the cache is tiny): look it up again.
                continue;
            }
            let f = &mut self.files[file as usize].flags[index as usize];
            if *f & WAITER != 0 {
                *f &= !WAITER;
                counted = true;
            }
            if *f & UPTODATE == 0 {
                *f |= WAITER;
                if !counted {
                    self.stats.hits += 1;
                }
                self.stats.waits += 1;
                return ReadStep::WaitFor { page: index };
            }
            *f |= REFERENCED;
            if !counted {
                self.stats.hits += 1;
            }
            index += 1;
        }
        if end > pos {
            ra.prev_pos = end - 1;
        }
        ReadStep::Done
    }

    /// `__do_page_cache_readahead`: allocates the missing pages of the
    /// decision's range (within the file), marks them in flight, sets the
    /// marker, and appends contiguous runs of at most `max` pages to `plan`.
    fn submit_readahead(
        &mut self,
        file: FileId,
        d: RaDecision,
        is_async: bool,
        read_end: u64,
        max: u64,
        plan: &mut ReadPlan,
    ) {
        let file_pages = self.file_pages(file);
        let stop = d.start.saturating_add(d.nr).min(file_pages);
        let marker = if d.lookahead > 0 && d.lookahead <= d.nr {
            Some(d.start + d.nr - d.lookahead)
        } else {
            None
        };
        let max = max.clamp(1, u64::from(u32::MAX));
        let mut run: Option<(u64, u64)> = None; // (first, pages)
        let mut p = d.start;
        while p < stop {
            if self.flags(file, p) & PRESENT != 0 {
                if let Some((first, n)) = run.take() {
                    self.push_io(file, first, n, is_async, plan);
                }
                p += 1;
                continue;
            }
            self.make_room(1);
            let mut fl = INFLIGHT;
            if Some(p) == marker {
                fl |= READAHEAD;
            }
            self.insert_page(file, p, fl);
            self.stats.pages_read += 1;
            if p >= read_end {
                self.stats.readahead_pages += 1;
            }
            run = match run {
                Some((first, n)) if n < max => Some((first, n + 1)),
                Some((first, n)) => {
                    self.push_io(file, first, n, is_async, plan);
                    Some((p, 1))
                }
                None => Some((p, 1)),
            };
            p += 1;
        }
        if let Some((first, n)) = run {
            self.push_io(file, first, n, is_async, plan);
        }
    }

    pub(super) fn push_io(
        &mut self,
        file: FileId,
        first: u64,
        pages: u64,
        readahead: bool,
        plan: &mut ReadPlan,
    ) {
        plan.submit.push(ReadIo {
            file,
            first_page: first,
            pages: pages as u32,
            readahead,
        });
    }

    /// Makes a non-resident page resident with `flags`, entering it in the
    /// CLOCK ring.
    pub(super) fn insert_page(&mut self, file: FileId, page: u64, flags: u8) {
        let f = &mut self.files[file as usize].flags[page as usize];
        debug_assert_eq!(*f & PRESENT, 0);
        *f = flags;
        self.resident += 1;
        self.clock.push_back((file, page));
    }

    /// Removes the `dropped` resident pages of `file` at or beyond page
    /// `from` from the CLOCK ring (after a truncate).
    pub(super) fn drop_from_clock(&mut self, file: FileId, from: u64, dropped: u64) {
        self.clock.retain(|&(f, p)| f != file || p < from);
        self.resident -= dropped;
    }

    /// Evicts clean, idle pages until `extra` more pages fit in the capacity
    /// (or nothing more can be evicted).
    pub(super) fn make_room(&mut self, extra: u64) {
        while self.resident + extra > self.capacity {
            if !self.evict_one() {
                break;
            }
        }
    }

    /// CLOCK: advances the hand, giving referenced pages a second chance and
    /// skipping pages in flight, dirty or under writeback. Returns false when
    /// no page is evictable.
    fn evict_one(&mut self) -> bool {
        // Two full turns: the first may only clear referenced bits.
        let mut budget = self.clock.len() * 2 + 1;
        while budget > 0 {
            budget -= 1;
            let Some((file, page)) = self.clock.pop_front() else {
                return false;
            };
            let f = &mut self.files[file as usize].flags[page as usize];
            if *f & PINNED != 0 {
                self.clock.push_back((file, page));
            } else if *f & REFERENCED != 0 {
                *f &= !REFERENCED;
                self.clock.push_back((file, page));
            } else {
                *f = 0;
                self.resident -= 1;
                self.stats.evictions += 1;
                return true;
            }
        }
        false
    }

    /// Marks pages `[first_page, first_page + pages)` of `file` uptodate: their
    /// read completed. Pages not in flight are left alone.
    pub fn complete_read(&mut self, file: FileId, first_page: u64, pages: u32) {
        let flags = &mut self.files[file as usize].flags;
        let stop = (first_page.saturating_add(u64::from(pages))).min(flags.len() as u64);
        for p in first_page..stop {
            let f = &mut flags[p as usize];
            if *f & INFLIGHT != 0 {
                *f = (*f & !INFLIGHT) | UPTODATE;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader thread: issues `read()`s of `[pos, end)` pages, completing
    /// every outstanding I/O whenever it has to wait. Logs each submitted I/O
    /// with the page the read was at when it was submitted.
    struct Sim {
        pc: PageCache,
        file: FileId,
        ra: RaState,
        max: u32,
        congested: bool,
        plan: ReadPlan,
        outstanding: Vec<ReadIo>,
        log: Vec<(u64, ReadIo)>,
    }

    impl Sim {
        fn new(capacity: u64, file_pages: u64, max: u32) -> Sim {
            let mut pc = PageCache::new(capacity);
            let file = pc.add_file(file_pages);
            Sim {
                pc,
                file,
                ra: RaState::default(),
                max,
                congested: false,
                plan: ReadPlan::default(),
                outstanding: Vec::new(),
                log: Vec::new(),
            }
        }

        fn read(&mut self, pos: u64, end: u64) {
            let mut at = pos;
            loop {
                let step = self.pc.read_step(
                    self.file,
                    &mut self.ra,
                    at,
                    end,
                    self.max,
                    self.congested,
                    &mut self.plan,
                );
                for io in &self.plan.submit {
                    self.log.push((at, *io));
                    self.outstanding.push(*io);
                }
                match step {
                    ReadStep::Done => return,
                    ReadStep::WaitFor { page } => {
                        assert!(
                            self.pc.is_present(self.file, page),
                            "waits on a page being read"
                        );
                        for io in self.outstanding.drain(..) {
                            self.pc.complete_read(io.file, io.first_page, io.pages);
                        }
                        at = page;
                    }
                }
            }
        }

        /// Submitted windows as (trigger page, first, pages, async).
        fn windows(&self) -> Vec<(u64, u64, u32, bool)> {
            self.log
                .iter()
                .map(|(at, io)| (*at, io.first_page, io.pages, io.readahead))
                .collect()
        }
    }

    #[test]
    fn sequential_4k_reads_ramp_the_window() {
        let mut s = Sim::new(10_000, 1_000, 32);
        for p in 0..130 {
            s.read(p, p + 1);
        }
        assert_eq!(
            s.windows(),
            vec![
                (0, 0, 4, false),
                (1, 4, 8, true),
                (4, 12, 16, true),
                (12, 28, 32, true),
                (28, 60, 32, true),
                (60, 92, 32, true),
                (92, 124, 32, true),
                (124, 156, 32, true),
            ]
        );
        // each async window was triggered at its PG_readahead marker
        let st = s.pc.stats();
        assert_eq!(st.misses, 1);
        assert_eq!(st.async_readaheads, 7);
        assert_eq!(st.pages_read, 188);
        assert_eq!(st.hits, 129);
        assert_eq!(s.ra.prev_pos, 129);
    }

    #[test]
    fn marker_sits_at_start_plus_size_minus_async() {
        let mut s = Sim::new(10_000, 1_000, 32);
        s.read(0, 1);
        assert!(s.pc.has_readahead_marker(s.file, 1));
        assert_eq!((s.ra.start, s.ra.size, s.ra.async_size), (0, 4, 3));
        s.read(1, 2);
        assert!(!s.pc.has_readahead_marker(s.file, 1));
        assert!(s.pc.has_readahead_marker(s.file, 4));
    }

    #[test]
    fn read_ahead_kb_256_doubles_the_max_window() {
        let mut s = Sim::new(10_000, 1_000, 64);
        for p in 0..200 {
            s.read(p, p + 1);
        }
        let w: Vec<_> = s.windows().iter().map(|w| (w.1, w.2)).collect();
        assert_eq!(
            &w[..7],
            &[
                (0, 4),
                (4, 8),
                (12, 16),
                (28, 32),
                (60, 64),
                (124, 64),
                (188, 64)
            ]
        );
    }

    #[test]
    fn random_single_page_reads_have_no_window() {
        let mut s = Sim::new(10_000, 100_000, 32);
        let pages = [5000u64, 17, 90_001, 3, 42_000, 777];
        for &p in &pages {
            s.read(p, p + 1);
        }
        let expect: Vec<_> = pages.iter().map(|&p| (p, p, 1, false)).collect();
        assert_eq!(s.windows(), expect);
        assert_eq!(s.pc.stats().readahead_pages, 0);
        assert_eq!(s.ra.size, 0);
    }

    #[test]
    fn strided_read_after_page_zero_reads_one_page() {
        let mut s = Sim::new(10_000, 10_000, 32);
        s.read(0, 1);
        s.read(256, 257); // 1 MiB further
        s.read(512, 513);
        assert_eq!(
            s.windows(),
            vec![(0, 0, 4, false), (256, 256, 1, false), (512, 512, 1, false)]
        );
    }

    #[test]
    fn sequential_miss_after_previous_page_starts_a_window() {
        let mut s = Sim::new(10_000, 10_000, 32);
        s.read(300, 301); // random: one page
        s.read(301, 302); // off - prev == 1: initial window
        assert_eq!(
            s.windows(),
            vec![(300, 300, 1, false), (301, 301, 4, false)]
        );
    }

    #[test]
    fn congested_reads_skip_async_readahead() {
        let mut s = Sim::new(10_000, 1_000, 32);
        s.congested = true;
        for p in 0..64 {
            s.read(p, p + 1);
        }
        assert!(
            s.log.iter().all(|(_, io)| !io.readahead),
            "{:?}",
            s.windows()
        );
        // every I/O was issued at a miss, as a window starting at that page
        // (a 64-page window leaves as two 32-page I/Os)
        assert_eq!(
            s.windows(),
            vec![
                (0, 0, 4, false),
                (4, 4, 24, false),
                (28, 28, 32, false),
                (28, 60, 32, false),
            ]
        );
        let st = s.pc.stats();
        assert!(st.congested_skips > 0);
        assert_eq!(st.async_readaheads, 0);
    }

    #[test]
    fn large_read_is_split_into_max_sized_ios_and_waits_on_first_page() {
        let mut s = Sim::new(10_000, 1_000, 32);
        let step =
            s.pc.read_step(s.file, &mut s.ra, 0, 64, 32, false, &mut s.plan);
        assert_eq!(step, ReadStep::WaitFor { page: 0 });
        let runs: Vec<_> = s
            .plan
            .submit
            .iter()
            .map(|io| (io.first_page, io.pages))
            .collect();
        assert_eq!(runs, vec![(0, 32), (32, 32)]);
        // prev_pos only moves when the read is done
        assert_eq!(s.ra.prev_pos, u64::MAX);
        s.pc.complete_read(s.file, 0, 32);
        // resuming from page 0: the pages up to 32 are ready; 32 is the marker
        let step =
            s.pc.read_step(s.file, &mut s.ra, 0, 64, 32, false, &mut s.plan);
        assert_eq!(step, ReadStep::WaitFor { page: 32 });
        assert_eq!(s.plan.submit.len(), 1);
        assert_eq!(
            (s.plan.submit[0].first_page, s.plan.submit[0].pages),
            (64, 32)
        );
        assert!(s.plan.submit[0].readahead);
        s.pc.complete_read(s.file, 32, 64);
        let step =
            s.pc.read_step(s.file, &mut s.ra, 32, 64, 32, false, &mut s.plan);
        assert_eq!(step, ReadStep::Done);
        assert!(s.plan.submit.is_empty());
        assert_eq!(s.ra.prev_pos, 63);
    }

    #[test]
    fn second_read_of_cached_pages_submits_nothing() {
        let mut s = Sim::new(10_000, 1_000, 32);
        s.read(0, 8);
        let n = s.log.len();
        let before = s.pc.stats();
        let mut ra2 = RaState::default();
        let step =
            s.pc.read_step(s.file, &mut ra2, 0, 8, 32, false, &mut s.plan);
        assert_eq!(step, ReadStep::Done);
        assert!(s.plan.submit.is_empty());
        assert_eq!(s.log.len(), n);
        assert_eq!(s.pc.stats().hits, before.hits + 8);
        assert_eq!(s.pc.stats().misses, before.misses);
    }

    #[test]
    fn reads_stop_at_end_of_file() {
        let mut s = Sim::new(10_000, 10, 32);
        s.read(0, 50);
        assert_eq!(s.windows(), vec![(0, 0, 10, false)]);
        assert_eq!(s.pc.resident_pages(), 10);
    }

    #[test]
    fn zero_read_ahead_reads_the_demanded_page_only() {
        let mut s = Sim::new(10_000, 100, 0);
        s.read(0, 1);
        s.read(1, 2);
        assert_eq!(s.windows(), vec![(0, 0, 1, false), (1, 1, 1, false)]);
    }

    #[test]
    fn eviction_keeps_capacity() {
        let mut s = Sim::new(16, 100_000, 32);
        for i in 0..200u64 {
            let p = (i * 7919) % 100_000 + 1;
            s.read(p, p + 1);
            assert!(s.pc.resident_pages() <= 16);
        }
        let st = s.pc.stats();
        assert_eq!(st.resident_pages, 16);
        assert_eq!(st.evictions, 200 - 16);
        // a sequential stream with windows (at most 32 + 32 pages in flight)
        let mut s = Sim::new(64, 100_000, 32);
        for p in 0..500 {
            s.read(p, p + 1);
            assert!(s.pc.resident_pages() <= 64);
        }
        assert!(s.pc.stats().evictions > 400);
    }

    #[test]
    fn clock_gives_referenced_pages_a_second_chance() {
        let mut pc = PageCache::new(3);
        let f = pc.add_file(100);
        let mut ra = RaState::default();
        let mut plan = ReadPlan::default();
        fn read(pc: &mut PageCache, f: FileId, p: u64) {
            let mut plan = ReadPlan::default();
            let mut ra1 = RaState::default();
            let step = pc.read_step(f, &mut ra1, p, p + 1, 0, false, &mut plan);
            if let ReadStep::WaitFor { page } = step {
                pc.complete_read(f, page, 1);
                let step = pc.read_step(f, &mut ra1, p, p + 1, 0, false, &mut plan);
                assert_eq!(step, ReadStep::Done);
            }
        }
        read(&mut pc, f, 10);
        read(&mut pc, f, 20);
        read(&mut pc, f, 30);
        // all referenced: the hand clears 10, 20, 30 then evicts 10
        read(&mut pc, f, 40);
        assert!(!pc.is_present(f, 10));
        // 20 and 30 lost their bit; touch 20 again, then 50 evicts 30
        assert_eq!(
            pc.read_step(f, &mut ra, 20, 21, 0, false, &mut plan),
            ReadStep::Done
        );
        read(&mut pc, f, 50);
        assert!(pc.is_present(f, 20));
        assert!(!pc.is_present(f, 30));
        assert!(pc.is_present(f, 40));
    }

    /// A single-page read with read-ahead off, completed at once.
    fn read_now(pc: &mut PageCache, f: FileId, p: u64) {
        let mut plan = ReadPlan::default();
        let mut ra = RaState::default();
        if let ReadStep::WaitFor { page } = pc.read_step(f, &mut ra, p, p + 1, 0, false, &mut plan)
        {
            pc.complete_read(f, page, 1);
            let step = pc.read_step(f, &mut ra, p, p + 1, 0, false, &mut plan);
            assert_eq!(step, ReadStep::Done);
        }
    }

    #[test]
    fn a_waiting_reader_pins_its_page() {
        let mut pc = PageCache::new(2);
        let f = pc.add_file(100);
        let mut plan = ReadPlan::default();
        let mut ra = RaState::default();
        let step = pc.read_step(f, &mut ra, 7, 8, 0, false, &mut plan);
        assert_eq!(step, ReadStep::WaitFor { page: 7 });
        pc.complete_read(f, 7, 1);
        // before the reader resumes, other reads churn the cache
        for p in 20..30 {
            read_now(&mut pc, f, p);
        }
        assert!(pc.is_uptodate(f, 7));
        let hits = pc.stats().hits;
        assert_eq!(
            pc.read_step(f, &mut ra, 7, 8, 0, false, &mut plan),
            ReadStep::Done
        );
        assert!(plan.submit.is_empty());
        assert_eq!(
            pc.stats().hits,
            hits,
            "the resumed look-up is not a second hit"
        );
        read_now(&mut pc, f, 40);
        read_now(&mut pc, f, 41);
        assert!(!pc.is_present(f, 7));
    }

    #[test]
    fn eviction_never_takes_in_flight_or_dirty_pages() {
        let mut pc = PageCache::new(8);
        let f = pc.add_file(1_000);
        let mut plan = ReadPlan::default();
        // dirty pages 500..504
        pc.mark_dirty(f, 500, 4, 0);
        // an uncompleted large read fills beyond capacity with in-flight pages
        let mut ra = RaState::default();
        let step = pc.read_step(f, &mut ra, 0, 16, 32, false, &mut plan);
        assert_eq!(step, ReadStep::WaitFor { page: 0 });
        let inflight: u64 = plan.submit.iter().map(|io| u64::from(io.pages)).sum();
        assert!(inflight >= 16);
        assert_eq!(pc.resident_pages(), inflight + 4); // over capacity: nothing evictable
        for p in 0..inflight {
            assert!(pc.is_present(f, p));
        }
        // complete the reads; more reads now evict clean pages only
        pc.complete_read(f, 0, inflight as u32);
        assert_eq!(
            pc.read_step(f, &mut ra, 0, 16, 32, false, &mut plan),
            ReadStep::Done
        );
        for p in 900..950 {
            read_now(&mut pc, f, p);
        }
        assert!(pc.resident_pages() <= 8);
        for p in 500..504 {
            assert!(pc.is_dirty(f, p) && pc.is_uptodate(f, p));
        }
        // under writeback: still pinned
        let run = pc.take_dirty_run(f, 32).unwrap();
        assert_eq!(run, (500, 4));
        for p in 950..990 {
            read_now(&mut pc, f, p);
        }
        for p in 500..504 {
            assert!(pc.is_present(f, p));
        }
        pc.complete_write(f, 500, 4);
        for p in 990..1000 {
            read_now(&mut pc, f, p);
        }
        assert!((500..504).any(|p| !pc.is_present(f, p)));
    }

    #[test]
    fn context_readahead_for_a_new_reader_of_a_cached_stream() {
        let mut s = Sim::new(10_000, 1_000, 32);
        for p in 0..20 {
            s.read(p, p + 1);
        }
        // a second open file continues where the cached history ends
        let mut ra = RaState::default();
        let n = s.log.len();
        let first_absent = (0..1_000).find(|&p| !s.pc.is_present(s.file, p)).unwrap();
        let step = s.pc.read_step(
            s.file,
            &mut ra,
            first_absent,
            first_absent + 1,
            32,
            false,
            &mut s.plan,
        );
        assert_eq!(step, ReadStep::WaitFor { page: first_absent });
        assert_eq!(s.log.len(), n);
        // history counted back up to max pages (32), init(32+1) = 32, plus
        // the merged next window = 64
        let total: u32 = s.plan.submit.iter().map(|io| io.pages).sum();
        assert_eq!(total, 64);
        assert_eq!((ra.start, ra.size, ra.async_size), (first_absent, 64, 32));
    }
}
