//! Dirty pages and the writeback decisions of Linux 3.x
//! (`fs/fs-writeback.c`, `mm/page-writeback.c`), as state and queries the
//! host core drives.
//!
//! * Buffered writes call [`PageCache::write_begin`] and then
//!   [`PageCache::mark_dirty`]. A page only partly covered by the write whose
//!   data is not in the cache must be read first (read-modify-write, as
//!   `block_write_begin` does): `write_begin` submits a single-page,
//!   synchronous read for it through the same [`ReadPlan`] mechanism as reads
//!   and returns [`ReadStep::WaitFor`]. Pages past the end of the file need no
//!   read (the kernel zero-fills them); the file grows to cover the write.
//! * Writeback is per file (inode): a file records when it went from clean
//!   to dirty (`dirtied_when`); the flusher wakes every
//!   `dirty_writeback_centisecs` and writes back files dirty for longer than
//!   `dirty_expire_centisecs` ([`PageCache::files_to_write`]), or every dirty
//!   file while dirty pages exceed the background threshold. Each file is
//!   written in ascending runs from its `writeback_index`
//!   ([`PageCache::take_dirty_run`], cyclic like `write_cache_pages`).
//! * Writers are throttled while dirty + writeback pages exceed the
//!   `dirty_ratio` threshold ([`PageCache::over_dirty_limit`]).
//!
//! Simplifications: the ratios apply to the page cache's capacity (the
//! "dirtyable memory"); throttling is a yes/no test rather than 3.x's
//! rate-limited `balance_dirty_pages` pauses.

use serde::{Deserialize, Serialize};

use super::page_cache::{
    FileId, PageCache, ReadPlan, ReadStep, DIRTY, INFLIGHT, PRESENT, REFERENCED, UPTODATE,
    WRITEBACK,
};
use crate::types::{Ns, PAGE_BYTES};

/// Nanoseconds per centisecond (the unit of the `dirty_*_centisecs` sysctls).
const NS_PER_CENTISEC: Ns = 10_000_000;

/// Writeback tunables, by their `/proc/sys/vm/` names and units; defaults are
/// Linux 3.x's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WritebackParams {
    /// Flusher wake-up period, centiseconds (`vm.dirty_writeback_centisecs`,
    /// default 500 = 5 s). 0 disables periodic writeback.
    pub dirty_writeback_centisecs: u32,
    /// Age after which dirty data is written back by the periodic flusher,
    /// centiseconds (`vm.dirty_expire_centisecs`, default 3000 = 30 s).
    pub dirty_expire_centisecs: u32,
    /// Dirty pages, in percent of the cache capacity, above which background
    /// writeback starts (`vm.dirty_background_ratio`, default 10 %).
    pub dirty_background_ratio: u32,
    /// Dirty + writeback pages, in percent of the cache capacity, above which
    /// writers are throttled (`vm.dirty_ratio`, default 20 %).
    pub dirty_ratio: u32,
}

impl Default for WritebackParams {
    fn default() -> Self {
        WritebackParams {
            dirty_writeback_centisecs: 500,
            dirty_expire_centisecs: 3000,
            dirty_background_ratio: 10,
            dirty_ratio: 20,
        }
    }
}

impl WritebackParams {
    /// Flusher period in nanoseconds (0 = periodic writeback disabled).
    pub fn writeback_interval_ns(&self) -> Ns {
        Ns::from(self.dirty_writeback_centisecs) * NS_PER_CENTISEC
    }

    /// Dirty age, in nanoseconds, after which a file is written back.
    pub fn expire_ns(&self) -> Ns {
        Ns::from(self.dirty_expire_centisecs) * NS_PER_CENTISEC
    }

    /// Throttling threshold in pages for a cache of `capacity_pages`:
    /// `dirty_ratio` % of it.
    pub fn dirty_thresh(&self, capacity_pages: u64) -> u64 {
        capacity_pages.saturating_mul(u64::from(self.dirty_ratio.min(100))) / 100
    }

    /// Background-writeback threshold in pages: `dirty_background_ratio` % of
    /// the capacity, or half the throttling threshold if that is not lower
    /// (as `global_dirty_limits` does).
    pub fn background_thresh(&self, capacity_pages: u64) -> u64 {
        let bg =
            capacity_pages.saturating_mul(u64::from(self.dirty_background_ratio.min(100))) / 100;
        let dirty = self.dirty_thresh(capacity_pages);
        if bg >= dirty {
            dirty / 2
        } else {
            bg
        }
    }

    /// Checks the values: ratios are percentages (0-100).
    pub fn validate(&self) -> crate::Result<()> {
        for (name, v) in [
            ("dirty_background_ratio", self.dirty_background_ratio),
            ("dirty_ratio", self.dirty_ratio),
        ] {
            if v > 100 {
                return Err(crate::error::SettingError::Invalid {
                    key: format!("writeback `{name}`"),
                    value: v.to_string(),
                    expected: "a percentage from 0 to 100".into(),
                }
                .into());
            }
        }
        Ok(())
    }
}

impl PageCache {
    /// Prepares a buffered write of `len` bytes at byte offset `pos` of
    /// `file` (`write_begin` for each page of the range).
    ///
    /// Grows the file to cover the write. A page being read is waited for; a
    /// page inside the old file size that the write covers only partly and
    /// that is not cached is read first (read-modify-write: one synchronous
    /// single-page [`super::ReadIo`] in `plan.submit`, cleared first).
    /// Returns [`ReadStep::Done`] when [`PageCache::mark_dirty`] may be
    /// called for the write's pages, else [`ReadStep::WaitFor`] the page to
    /// wait for (call again afterwards with the same arguments).
    pub fn write_begin(
        &mut self,
        file: FileId,
        pos: u64,
        len: u64,
        plan: &mut ReadPlan,
    ) -> ReadStep {
        plan.submit.clear();
        if len == 0 {
            return ReadStep::Done;
        }
        let end_byte = pos.saturating_add(len);
        let first = pos / PAGE_BYTES;
        let last = (end_byte - 1) / PAGE_BYTES;
        let old_pages = self.file_pages(file);
        self.extend_file(file, last + 1);
        for p in first..=last {
            let flags = self.flags(file, p);
            if flags & UPTODATE != 0 {
                continue;
            }
            if flags & INFLIGHT != 0 {
                return ReadStep::WaitFor { page: p };
            }
            let page_start = p * PAGE_BYTES;
            let whole = pos <= page_start && end_byte >= page_start + PAGE_BYTES;
            if whole || p >= old_pages {
                continue; // overwritten entirely, or zero-filled past EOF
            }
            self.make_room(1);
            self.insert_page(file, p, INFLIGHT);
            self.stats.pages_read += 1;
            self.stats.rmw_reads += 1;
            self.push_io(file, p, 1, false, plan);
            return ReadStep::WaitFor { page: p };
        }
        ReadStep::Done
    }

    /// Marks pages `[first, first + pages)` of `file` dirty at time `now` (ns)
    /// after a buffered write: they become resident, uptodate, dirty and
    /// referenced. The file's `dirtied_when` is set to `now` if it was clean.
    /// The file grows if needed. Call [`PageCache::write_begin`] first so that
    /// partly written pages hold valid data.
    pub fn mark_dirty(&mut self, file: FileId, first: u64, pages: u64, now: Ns) {
        let stop = first.saturating_add(pages);
        self.extend_file(file, stop);
        for p in first..stop {
            let flags = self.flags(file, p);
            if flags & PRESENT == 0 {
                self.make_room(1);
                self.insert_page(file, p, UPTODATE | REFERENCED);
            }
            let f = &mut self.files[file as usize];
            let fl = &mut f.flags[p as usize];
            *fl |= UPTODATE | REFERENCED;
            if *fl & DIRTY == 0 {
                *fl |= DIRTY;
                if f.nr_dirty == 0 {
                    f.dirtied_when = Some(now);
                }
                f.nr_dirty += 1;
                self.nr_dirty += 1;
            }
        }
    }

    /// Dirty pages in the whole cache (not counting pages under writeback
    /// that were not redirtied).
    pub fn dirty_pages(&self) -> u64 {
        self.nr_dirty
    }

    /// Pages under writeback in the whole cache.
    pub fn writeback_pages(&self) -> u64 {
        self.nr_writeback
    }

    /// Dirty pages of `file`.
    pub fn file_dirty_pages(&self, file: FileId) -> u64 {
        self.files[file as usize].nr_dirty
    }

    /// When `file` went from clean to dirty (ns), or `None` if it is clean.
    pub fn dirtied_when(&self, file: FileId) -> Option<Ns> {
        self.files[file as usize].dirtied_when
    }

    /// Whether page `page` of `file` is dirty.
    pub fn is_dirty(&self, file: FileId, page: u64) -> bool {
        self.flags(file, page) & DIRTY != 0
    }

    /// Whether page `page` of `file` is under writeback.
    pub fn is_under_writeback(&self, file: FileId, page: u64) -> bool {
        self.flags(file, page) & WRITEBACK != 0
    }

    /// Background writeback should run: dirty pages exceed
    /// [`WritebackParams::background_thresh`].
    pub fn over_background_thresh(&self, params: &WritebackParams) -> bool {
        self.nr_dirty > params.background_thresh(self.capacity_pages())
    }

    /// Writers must be throttled: dirty + writeback pages exceed
    /// [`WritebackParams::dirty_thresh`].
    pub fn over_dirty_limit(&self, params: &WritebackParams) -> bool {
        self.nr_dirty + self.nr_writeback > params.dirty_thresh(self.capacity_pages())
    }

    /// Fills `out` (cleared first) with the dirty files whose `dirtied_when`
    /// is at least `older_than_ns` before `now` (both ns), oldest first, ties
    /// by file id. `older_than_ns` = [`WritebackParams::expire_ns`] gives the
    /// periodic (kupdate) selection; 0 gives every dirty file (background
    /// writeback, sync).
    pub fn files_to_write(&self, now: Ns, older_than_ns: Ns, out: &mut Vec<FileId>) {
        out.clear();
        out.extend(
            self.files
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    f.dirtied_when
                        .is_some_and(|t| now >= t && now - t >= older_than_ns)
                })
                .map(|(i, _)| i as FileId),
        );
        out.sort_by_key(|&i| (self.files[i as usize].dirtied_when, i));
    }

    /// Takes the next run of at most `max_pages` contiguous dirty pages of
    /// `file` not already under writeback, searching upwards from the file's
    /// writeback index and wrapping to page 0 once. The pages become clean
    /// and under writeback; the index moves past the run. Returns
    /// `(first_page, pages)`, or `None` if nothing is left to write.
    pub fn take_dirty_run(&mut self, file: FileId, max_pages: u32) -> Option<(u64, u32)> {
        if max_pages == 0 {
            return None;
        }
        let f = &mut self.files[file as usize];
        if f.nr_dirty == 0 {
            return None;
        }
        let n = f.flags.len() as u64;
        let takeable = |fl: u8| fl & DIRTY != 0 && fl & WRITEBACK == 0;
        let from = f.writeback_index.min(n);
        let first = (from..n)
            .chain(0..from)
            .find(|&p| takeable(f.flags[p as usize]))?;
        let mut pages = 0u32;
        while pages < max_pages {
            let p = first + u64::from(pages);
            if p >= n || !takeable(f.flags[p as usize]) {
                break;
            }
            let fl = &mut f.flags[p as usize];
            *fl = (*fl & !DIRTY) | WRITEBACK;
            pages += 1;
        }
        f.nr_dirty -= u64::from(pages);
        if f.nr_dirty == 0 {
            f.dirtied_when = None;
        }
        f.writeback_index = first + u64::from(pages);
        f.nr_writeback += u64::from(pages);
        self.nr_dirty -= u64::from(pages);
        self.nr_writeback += u64::from(pages);
        self.stats.pages_written += u64::from(pages);
        Some((first, pages))
    }

    /// The write of pages `[first, first + pages)` of `file` completed: they
    /// leave writeback (a page redirtied meanwhile stays dirty) and become
    /// evictable if clean.
    pub fn complete_write(&mut self, file: FileId, first: u64, pages: u32) {
        let f = &mut self.files[file as usize];
        let stop = first
            .saturating_add(u64::from(pages))
            .min(f.flags.len() as u64);
        for p in first..stop {
            let fl = &mut f.flags[p as usize];
            if *fl & WRITEBACK != 0 {
                *fl &= !WRITEBACK;
                f.nr_writeback -= 1;
                self.nr_writeback -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::RaState;
    use crate::types::NS_PER_S;

    #[test]
    fn defaults_are_linux_3x() {
        let p = WritebackParams::default();
        assert_eq!(p.dirty_writeback_centisecs, 500);
        assert_eq!(p.dirty_expire_centisecs, 3000);
        assert_eq!(p.dirty_background_ratio, 10);
        assert_eq!(p.dirty_ratio, 20);
        assert_eq!(p.writeback_interval_ns(), 5 * NS_PER_S);
        assert_eq!(p.expire_ns(), 30 * NS_PER_S);
        assert_eq!(p.background_thresh(1000), 100);
        assert_eq!(p.dirty_thresh(1000), 200);
        p.validate().unwrap();
    }

    #[test]
    fn params_deserialize_by_sysctl_name_and_reject_unknown() {
        let p: WritebackParams =
            toml::from_str("dirty_ratio = 40\ndirty_expire_centisecs = 1000").unwrap();
        assert_eq!(p.dirty_ratio, 40);
        assert_eq!(p.dirty_expire_centisecs, 1000);
        assert_eq!(p.dirty_background_ratio, 10);
        assert!(toml::from_str::<WritebackParams>("dirty_rate = 4").is_err());
        let bad = WritebackParams {
            dirty_ratio: 120,
            ..WritebackParams::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("dirty_ratio"));
    }

    #[test]
    fn background_thresh_is_capped_below_dirty_thresh() {
        let p = WritebackParams {
            dirty_background_ratio: 30,
            dirty_ratio: 20,
            ..WritebackParams::default()
        };
        assert_eq!(p.background_thresh(1000), 100);
    }

    #[test]
    fn mark_dirty_sets_dirtied_when_once() {
        let mut pc = PageCache::new(100);
        let f = pc.add_file(10);
        assert_eq!(pc.dirtied_when(f), None);
        pc.mark_dirty(f, 2, 3, 1_000);
        pc.mark_dirty(f, 3, 3, 2_000); // pages 3, 4 already dirty
        assert_eq!(pc.dirtied_when(f), Some(1_000));
        assert_eq!(pc.dirty_pages(), 4);
        assert_eq!(pc.file_dirty_pages(f), 4);
        assert!(pc.is_dirty(f, 5) && pc.is_uptodate(f, 5));
        assert_eq!(pc.resident_pages(), 4);
    }

    #[test]
    fn files_to_write_selects_expired_files_oldest_first() {
        let p = WritebackParams::default();
        let mut pc = PageCache::new(1000);
        let a = pc.add_file(10);
        let b = pc.add_file(10);
        let c = pc.add_file(10);
        let d = pc.add_file(10);
        pc.mark_dirty(c, 0, 1, NS_PER_S);
        pc.mark_dirty(a, 0, 1, 2 * NS_PER_S);
        pc.mark_dirty(b, 0, 1, 2 * NS_PER_S);
        pc.mark_dirty(d, 0, 1, 20 * NS_PER_S);
        let mut out = vec![99];
        pc.files_to_write(31 * NS_PER_S, p.expire_ns(), &mut out);
        assert_eq!(out, vec![c]);
        pc.files_to_write(32 * NS_PER_S, p.expire_ns(), &mut out);
        assert_eq!(out, vec![c, a, b]);
        pc.files_to_write(5 * NS_PER_S, 0, &mut out);
        assert_eq!(out, vec![c, a, b]); // d is dirtied in the future
        pc.files_to_write(20 * NS_PER_S, 0, &mut out);
        assert_eq!(out, vec![c, a, b, d]);
    }

    #[test]
    fn take_dirty_run_walks_ascending_from_writeback_index_and_wraps() {
        let mut pc = PageCache::new(1000);
        let f = pc.add_file(100);
        pc.mark_dirty(f, 10, 5, 0);
        pc.mark_dirty(f, 50, 3, 0);
        assert_eq!(pc.take_dirty_run(f, 4), Some((10, 4)));
        assert!(pc.is_under_writeback(f, 10) && !pc.is_dirty(f, 10));
        assert_eq!(pc.dirty_pages(), 4);
        assert_eq!(pc.writeback_pages(), 4);
        // newly dirtied page behind the index is taken after wrapping
        pc.mark_dirty(f, 2, 1, 5);
        assert_eq!(pc.take_dirty_run(f, 4), Some((14, 1)));
        assert_eq!(pc.take_dirty_run(f, 4), Some((50, 3)));
        assert_eq!(pc.take_dirty_run(f, 4), Some((2, 1)));
        assert_eq!(pc.take_dirty_run(f, 4), None);
        assert_eq!(pc.dirtied_when(f), None);
        assert_eq!(pc.writeback_pages(), 9);
        assert_eq!(pc.stats().pages_written, 9);
        pc.complete_write(f, 10, 5);
        pc.complete_write(f, 50, 3);
        pc.complete_write(f, 2, 1);
        assert_eq!(pc.writeback_pages(), 0);
        assert!(pc.is_uptodate(f, 10) && !pc.is_under_writeback(f, 10));
    }

    #[test]
    fn redirtied_page_under_writeback_stays_dirty_and_is_not_taken_twice() {
        let mut pc = PageCache::new(1000);
        let f = pc.add_file(10);
        pc.mark_dirty(f, 0, 2, 0);
        assert_eq!(pc.take_dirty_run(f, 8), Some((0, 2)));
        pc.mark_dirty(f, 1, 1, 7);
        assert_eq!(pc.dirtied_when(f), Some(7));
        assert_eq!(pc.take_dirty_run(f, 8), None); // page 1 still under writeback
        pc.complete_write(f, 0, 2);
        assert!(pc.is_dirty(f, 1));
        assert_eq!(pc.take_dirty_run(f, 8), Some((1, 1)));
    }

    #[test]
    fn thresholds_trigger_background_writeback_and_throttling() {
        let p = WritebackParams::default();
        let mut pc = PageCache::new(1000);
        let f = pc.add_file(1000);
        pc.mark_dirty(f, 0, 100, 0);
        assert!(!pc.over_background_thresh(&p));
        pc.mark_dirty(f, 100, 1, 0);
        assert!(pc.over_background_thresh(&p));
        assert!(!pc.over_dirty_limit(&p));
        pc.mark_dirty(f, 101, 100, 0);
        assert!(pc.over_dirty_limit(&p)); // 201 > 200
                                          // pages under writeback still count against the throttle
        while pc.take_dirty_run(f, 64).is_some() {}
        assert!(!pc.over_background_thresh(&p));
        assert!(pc.over_dirty_limit(&p));
        pc.complete_write(f, 0, 201);
        assert!(!pc.over_dirty_limit(&p));
    }

    #[test]
    fn partial_write_to_uncached_page_reads_it_first() {
        let mut pc = PageCache::new(1000);
        let f = pc.add_file(10);
        let mut plan = ReadPlan::default();
        // 100 bytes in the middle of page 3: read-modify-write
        let step = pc.write_begin(f, 3 * 4096 + 10, 100, &mut plan);
        assert_eq!(step, ReadStep::WaitFor { page: 3 });
        assert_eq!(plan.submit.len(), 1);
        let io = plan.submit[0];
        assert_eq!((io.first_page, io.pages, io.readahead), (3, 1, false));
        // asking again while the read is in flight: wait, no new I/O
        assert_eq!(
            pc.write_begin(f, 3 * 4096 + 10, 100, &mut plan),
            ReadStep::WaitFor { page: 3 }
        );
        assert!(plan.submit.is_empty());
        pc.complete_read(f, 3, 1);
        assert_eq!(
            pc.write_begin(f, 3 * 4096 + 10, 100, &mut plan),
            ReadStep::Done
        );
        pc.mark_dirty(f, 3, 1, 0);
        assert!(pc.is_dirty(f, 3));
        assert_eq!(pc.stats().rmw_reads, 1);
    }

    #[test]
    fn whole_page_and_append_writes_need_no_read() {
        let mut pc = PageCache::new(1000);
        let f = pc.add_file(4);
        let mut plan = ReadPlan::default();
        // pages 1..3 fully covered
        assert_eq!(pc.write_begin(f, 4096, 3 * 4096, &mut plan), ReadStep::Done);
        assert!(plan.submit.is_empty());
        // partial write past EOF: zero-filled, file grows
        assert_eq!(
            pc.write_begin(f, 6 * 4096 + 5, 10, &mut plan),
            ReadStep::Done
        );
        assert!(plan.submit.is_empty());
        assert_eq!(pc.file_pages(f), 7);
        // head and tail partial inside the file: head is read first, then tail
        let step = pc.write_begin(f, 100, 2 * 4096, &mut plan);
        assert_eq!(step, ReadStep::WaitFor { page: 0 });
        pc.complete_read(f, 0, 1);
        let step = pc.write_begin(f, 100, 2 * 4096, &mut plan);
        assert_eq!(step, ReadStep::WaitFor { page: 2 });
        pc.complete_read(f, 2, 1);
        assert_eq!(pc.write_begin(f, 100, 2 * 4096, &mut plan), ReadStep::Done);
    }

    #[test]
    fn cached_page_partial_write_needs_no_read() {
        let mut pc = PageCache::new(1000);
        let f = pc.add_file(10);
        let mut plan = ReadPlan::default();
        let mut ra = RaState::default();
        if let ReadStep::WaitFor { .. } = pc.read_step(f, &mut ra, 5, 6, 0, false, &mut plan) {
            pc.complete_read(f, 5, 1);
        }
        assert_eq!(
            pc.write_begin(f, 5 * 4096 + 1, 1, &mut plan),
            ReadStep::Done
        );
        assert!(plan.submit.is_empty());
    }
}
