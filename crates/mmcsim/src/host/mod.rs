//! The host side of the storage path: the page cache with Linux on-demand
//! read-ahead, and dirty-page tracking for writeback.
//!
//! Contract:
//! * Files are counts of 4 KiB pages identified by [`FileId`]; the host maps
//!   file pages to device sectors itself.
//! * [`PageCache::read_step`] walks a buffered `read()` page by page like
//!   `do_generic_file_read`, returning the I/O to submit and the page to wait
//!   for; the caller completes reads with [`PageCache::complete_read`].
//! * Writes go through [`PageCache::write_begin`] (read-modify-write of
//!   partially covered pages) and [`PageCache::mark_dirty`]; the flusher uses
//!   [`PageCache::files_to_write`], [`PageCache::take_dirty_run`] and
//!   [`PageCache::complete_write`] with [`WritebackParams`].
//! * Everything is deterministic: no wall clock, no hash-map iteration.

pub mod cost;
pub mod page_cache;
pub mod readahead;
pub mod writeback;

pub use page_cache::{FileId, PageCache, PageCacheStats, ReadIo, ReadPlan, ReadStep};
pub use readahead::RaState;
pub use writeback::WritebackParams;
