//! Linux 3.x on-demand read-ahead (`mm/readahead.c`), as specified in
//! reference io-schedulers.md §1.3.
//!
//! The window is `(start, size, async_size)` in pages; the page at
//! `start + size - async_size` carries the PG_readahead marker, and a read
//! that reaches it triggers the next (asynchronous) window. This module holds
//! the per-open-file state and the pure decision logic; the page cache
//! ([`super::page_cache`]) applies the decision (allocates pages, sets the
//! marker, builds the I/O).

use serde::{Deserialize, Serialize};

/// Per-open-file read-ahead state, like the kernel's `struct file_ra_state`.
///
/// Owned by whoever holds the open file (each thread's file handle) and passed
/// to [`super::PageCache::read_step`]. All fields are in 4 KiB pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaState {
    /// First page of the current read-ahead window.
    pub start: u64,
    /// Number of pages in the current window.
    pub size: u64,
    /// Number of pages at the tail of the window left for asynchronous
    /// read-ahead: the marker sits at `start + size - async_size`.
    pub async_size: u64,
    /// Page of the last page read by the previous `read()` (the kernel keeps
    /// this in bytes; only the page matters here). `u64::MAX` (the kernel's
    /// `-1`) when nothing has been read yet.
    pub prev_pos: u64,
}

impl Default for RaState {
    /// The state of a freshly opened file (`file_ra_state_init`): empty window,
    /// `prev_pos` = −1.
    fn default() -> Self {
        RaState {
            start: 0,
            size: 0,
            async_size: 0,
            prev_pos: u64::MAX,
        }
    }
}

impl RaState {
    /// Same as [`RaState::default`]: the state of a freshly opened file.
    pub fn new() -> RaState {
        RaState::default()
    }
}

/// What [`ondemand`] decided to read: `nr` pages from `start`, with the
/// PG_readahead marker on the page at index `nr - lookahead` of the run (if
/// `lookahead > 0` and that page is newly allocated), exactly the arguments of
/// `__do_page_cache_readahead(mapping, filp, start, nr, lookahead)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaDecision {
    /// First page to read.
    pub start: u64,
    /// Number of pages to read.
    pub nr: u64,
    /// Pages at the tail that are read-ahead for the next trigger (marker).
    pub lookahead: u64,
}

/// `get_init_ra_size`: the first window for a request of `size` pages with a
/// maximum of `max` pages. Rounds `size` up to a power of two `p`; `4p` if
/// `p ≤ max/32`, `2p` if `p ≤ max/4`, else `max`.
pub fn init_size(size: u64, max: u64) -> u64 {
    let p = size.max(1).checked_next_power_of_two().unwrap_or(u64::MAX);
    if p <= max / 32 {
        p * 4
    } else if p <= max / 4 {
        p * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages: `4·cur` if
/// `cur < max/16`, else `2·cur`; at most `max` pages.
pub fn next_size(cur: u64, max: u64) -> u64 {
    let n = if cur < max / 16 {
        cur.saturating_mul(4)
    } else {
        cur.saturating_mul(2)
    };
    n.min(max)
}

/// `ondemand_readahead`: decides the read-ahead for a read of `req_size` pages
/// at page `offset`, updating `ra`.
///
/// * `max`: maximum window in pages (`read_ahead_kb / 4`);
/// * `hit_marker`: called because the read found a PG_readahead page
///   (asynchronous read-ahead) rather than a missing page (synchronous);
/// * `present(p)`: whether page `p` is in the page cache (uptodate or being
///   read), used for the interleaved-marker hole search and the context
///   ("history pages") read-ahead.
///
/// Returns `None` when nothing is to be read.
pub fn ondemand(
    ra: &mut RaState,
    max: u64,
    hit_marker: bool,
    offset: u64,
    req_size: u64,
    present: impl Fn(u64) -> bool,
) -> Option<RaDecision> {
    let req_size = req_size.max(1);
    'readit: {
        // 1. Start of file.
        if offset == 0 {
            break 'readit initial(ra, offset, req_size, max);
        }
        // 2. The expected callback offset: assume sequential, ramp up.
        let end = ra.start.wrapping_add(ra.size);
        if offset == end.wrapping_sub(ra.async_size) || offset == end {
            ra.start = end;
            ra.size = next_size(ra.size, max);
            ra.async_size = ra.size;
            break 'readit;
        }
        // Marker hit without matching state (interleaved reads): the window
        // starts at the first hole after `offset`, at most `max` pages away.
        if hit_marker {
            let mut start = offset + 1;
            while start <= offset + max && present(start) {
                start += 1;
            }
            if start - offset > max {
                return None;
            }
            ra.start = start;
            ra.size = start - offset + req_size; // old async_size + request
            ra.size = next_size(ra.size, max);
            ra.async_size = ra.size;
            break 'readit;
        }
        // 3. Oversize read, or sequential cache miss.
        if req_size > max || offset.wrapping_sub(ra.prev_pos) <= 1 {
            break 'readit initial(ra, offset, req_size, max);
        }
        // 4. Context read-ahead: count the cached history pages before offset.
        let mut count = 0;
        while count < max && count < offset && present(offset - 1 - count) {
            count += 1;
        }
        if count == 0 {
            // Standalone small random read: read as is, keep the state.
            return Some(RaDecision {
                start: offset,
                nr: req_size,
                lookahead: 0,
            });
        }
        if count >= offset {
            count *= 2; // reaches page 0: a long-run stream
        }
        ra.start = offset;
        ra.size = init_size(count + req_size, max);
        ra.async_size = ra.size;
    }
    // Last step in every case: if this read would hit the marker it is about
    // to set, merge the next window into this one now.
    if offset == ra.start && ra.size == ra.async_size {
        ra.async_size = next_size(ra.size, max);
        ra.size += ra.async_size;
    }
    Some(RaDecision {
        start: ra.start,
        nr: ra.size,
        lookahead: ra.async_size,
    })
}

/// The `initial_readahead` label: a fresh window at `offset`.
fn initial(ra: &mut RaState, offset: u64, req_size: u64, max: u64) {
    ra.start = offset;
    ra.size = init_size(req_size, max);
    ra.async_size = if ra.size > req_size {
        ra.size - req_size
    } else {
        ra.size
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_and_next_sizes_for_128k() {
        let max = 32;
        assert_eq!(init_size(1, max), 4);
        assert_eq!(init_size(2, max), 4);
        assert_eq!(init_size(3, max), 8);
        assert_eq!(init_size(8, max), 16);
        assert_eq!(init_size(9, max), 32);
        assert_eq!(init_size(100, max), 32);
        assert_eq!(next_size(1, max), 4);
        assert_eq!(next_size(4, max), 8);
        assert_eq!(next_size(16, max), 32);
        assert_eq!(next_size(32, max), 32);
    }

    #[test]
    fn first_read_at_zero_and_marker_ramp() {
        let mut ra = RaState::default();
        let d = ondemand(&mut ra, 32, false, 0, 1, |_| false).unwrap();
        assert_eq!((d.start, d.nr, d.lookahead), (0, 4, 3));
        let d = ondemand(&mut ra, 32, true, 1, 1, |_| true).unwrap();
        assert_eq!((d.start, d.nr, d.lookahead), (4, 8, 8));
    }

    #[test]
    fn random_read_has_no_window() {
        let mut ra = RaState::default();
        let d = ondemand(&mut ra, 32, false, 500, 1, |_| false).unwrap();
        assert_eq!((d.start, d.nr, d.lookahead), (500, 1, 0));
        assert_eq!(ra, RaState::default());
    }

    #[test]
    fn context_readahead_counts_history() {
        let mut ra = RaState::default();
        // pages 90..100 cached, a new reader starts at 100
        let d = ondemand(&mut ra, 32, false, 100, 1, |p| (90..100).contains(&p)).unwrap();
        // init(10 + 1) = 32 (max), async = 32; last step: + next(32) = 64
        assert_eq!((d.start, d.nr, d.lookahead), (100, 64, 32));
    }

    #[test]
    fn interleaved_marker_hit_starts_after_cached_pages() {
        let mut ra = RaState::default();
        let d = ondemand(&mut ra, 32, true, 40, 1, |p| p < 48).unwrap();
        // start = 48, size = next(8 + 1) = 18
        assert_eq!((d.start, d.nr, d.lookahead), (48, 18, 18));
        // no hole within max pages: nothing
        let mut ra = RaState::default();
        assert_eq!(ondemand(&mut ra, 32, true, 40, 1, |_| true), None);
    }
}
