//! Controller read buffer: the last N NAND pages sensed (demand or prefetch),
//! each with the time its data is in SRAM, and stream detection.
//!
//! Contract: the buffer only remembers pages and when they are ready; the
//! firmware senses on a miss, inserts what it sensed, and asks
//! [`ReadBuffer::note_read`] whether to prefetch, and in which direction.
//! Entries are never stale:
//! the firmware drops the pages of every erased block.
//!
//! A 4 KiB read inside a page already buffered hits in either direction.
//! An ascending stream is a read starting where the previous one ended; a
//! descending stream is a read ending where the previous one started.
//! `[read_buffer] stream_direction` names the streams the controller
//! follows by sensing the next pages in the stream's direction: with
//! `"forward"` (§6 item 2 of the parameter reference) ascending streams
//! hit at page boundaries too while descending ones miss there.
//! Entries are keyed by global NAND page id and dropped when their block is
//! erased. Capacity is small (tens of pages): linear scan, FIFO replacement,
//! with a per-bucket count of the buffered pages (bucket = page id modulo
//! `BUCKETS`) so a lookup of a page not buffered skips the scan.

use super::{Direction, Stream};

/// Buckets of the membership counts (a power of two).
const BUCKETS: usize = 64;

/// Bucket of page id `page`.
fn bucket(page: u32) -> usize {
    page as usize % BUCKETS
}

/// Buffered NAND pages.
#[derive(Clone, Debug)]
pub struct ReadBuffer {
    capacity: usize,
    /// Which streams the controller prefetches for.
    direction: Direction,
    /// `(page_id, ready_at_ns)`, oldest first.
    entries: std::collections::VecDeque<(u32, u64)>,
    /// Per bucket: buffered pages in it.
    in_bucket: [u32; BUCKETS],
    /// `(start, end)` sectors of the previous read.
    last: Option<(u64, u64)>,
    hits: u64,
    misses: u64,
    prefetched: u64,
}

impl ReadBuffer {
    /// An empty buffer of `pages` NAND pages, prefetching for the streams
    /// `direction` follows.
    pub fn new(pages: u32, direction: Direction) -> ReadBuffer {
        ReadBuffer {
            capacity: pages.max(1) as usize,
            direction,
            entries: std::collections::VecDeque::with_capacity(pages as usize + 1),
            in_bucket: [0; BUCKETS],
            last: None,
            hits: 0,
            misses: 0,
            prefetched: 0,
        }
    }
    /// Time the buffered page `page` is (or will be) ready, if buffered.
    pub fn find(&self, page: u32) -> Option<u64> {
        if self.in_bucket[bucket(page)] == 0 {
            return None;
        }
        self.entries.iter().find(|e| e.0 == page).map(|e| e.1)
    }
    /// Records a sensed page and the time its data is in the buffer.
    pub fn insert(&mut self, page: u32, ready: u64) {
        if self.in_bucket[bucket(page)] > 0 {
            if let Some(e) = self.entries.iter_mut().find(|e| e.0 == page) {
                e.1 = e.1.min(ready);
                return;
            }
        }
        self.insert_absent(page, ready);
    }
    /// Records a sensed page known not to be buffered ([`ReadBuffer::find`]
    /// said so and nothing was inserted since) and the time its data is in
    /// the buffer: [`ReadBuffer::insert`] without its search.
    pub fn insert_absent(&mut self, page: u32, ready: u64) {
        debug_assert!(self.find(page).is_none(), "page {page} is buffered");
        if self.entries.len() == self.capacity {
            if let Some((old, _)) = self.entries.pop_front() {
                self.in_bucket[bucket(old)] -= 1;
            }
        }
        self.entries.push_back((page, ready));
        self.in_bucket[bucket(page)] += 1;
    }
    /// Drops pages `first..first + n` (an erased block).
    pub fn invalidate_range(&mut self, first: u32, n: u32) {
        let before = self.entries.len();
        self.entries.retain(|e| e.0 < first || e.0 >= first + n);
        if self.entries.len() != before {
            self.recount();
        }
    }
    /// Recomputes the bucket counts from the entries.
    fn recount(&mut self) {
        self.in_bucket = [0; BUCKETS];
        for &(page, _) in &self.entries {
            self.in_bucket[bucket(page)] += 1;
        }
    }
    /// Notes a read of `sector..end`; returns the stream it continues when
    /// the controller prefetches for that stream: ascending (it starts
    /// where the previous read ended) or descending (it ends where the
    /// previous read started).
    pub fn note_read(&mut self, sector: u64, end: u64) -> Option<Stream> {
        let stream = match self.last {
            Some((_, e)) if e == sector => Some(Stream::Ascending),
            Some((s, _)) if s == end => Some(Stream::Descending),
            _ => None,
        };
        self.last = Some((sector, end));
        stream.filter(|s| self.direction.follows(*s))
    }
    /// Counts a demand lookup.
    pub fn count(&mut self, hit: bool) {
        if hit {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
    }
    /// Counts a prefetched page.
    pub fn count_prefetch(&mut self) {
        self.prefetched += 1;
    }
    /// Capacity in pages.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// Empties the buffer and forgets the stream.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.in_bucket = [0; BUCKETS];
        self.last = None;
    }
    /// `(hits, misses, prefetched pages)` since the last reset.
    pub fn counters(&self) -> (u64, u64, u64) {
        (self.hits, self.misses, self.prefetched)
    }
    /// Clears the counters.
    pub fn reset_stats(&mut self) {
        self.hits = 0;
        self.misses = 0;
        self.prefetched = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_replacement_and_stream_detection() {
        let mut b = ReadBuffer::new(2, Direction::Forward);
        b.insert(10, 5);
        b.insert(11, 6);
        b.insert(12, 7);
        assert_eq!(b.find(10), None);
        assert_eq!(b.find(12), Some(7));
        b.invalidate_range(12, 1);
        assert_eq!(b.find(12), None);
        assert_eq!(b.note_read(0, 8), None);
        assert_eq!(b.note_read(8, 16), Some(Stream::Ascending));
        // Descending: ends where the previous read started; not followed.
        assert_eq!(b.note_read(0, 8), None);
    }

    #[test]
    fn bucket_counts_answer_as_a_plain_scan_does() {
        // The buffer against a plain FIFO list scanned on every lookup, over
        // pseudo-random inserts (colliding buckets), finds and erased blocks.
        let mut b = ReadBuffer::new(16, Direction::Forward);
        let mut model: std::collections::VecDeque<(u32, u64)> = Default::default();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for step in 0..20_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let page = ((x >> 33) % 300) as u32;
            match (x >> 20) % 8 {
                0 => {
                    b.invalidate_range(page / 64 * 64, 64);
                    model.retain(|e| e.0 / 64 != page / 64);
                }
                1..=3 => {
                    b.insert(page, step);
                    match model.iter_mut().find(|e| e.0 == page) {
                        Some(e) => e.1 = e.1.min(step),
                        None => {
                            if model.len() == 16 {
                                model.pop_front();
                            }
                            model.push_back((page, step));
                        }
                    }
                }
                _ => {
                    let want = model.iter().find(|e| e.0 == page).map(|e| e.1);
                    assert_eq!(b.find(page), want, "step {step}, page {page}");
                    if want.is_none() && x % 2 == 0 {
                        b.insert_absent(page, step);
                        if model.len() == 16 {
                            model.pop_front();
                        }
                        model.push_back((page, step));
                    }
                }
            }
            assert!(b.entries.iter().eq(model.iter()), "step {step}");
        }
    }

    #[test]
    fn both_directions_follow_descending_streams_and_none_follows_nothing() {
        let mut b = ReadBuffer::new(2, Direction::Both);
        b.note_read(16, 24);
        assert_eq!(b.note_read(8, 16), Some(Stream::Descending));
        assert_eq!(b.note_read(16, 24), Some(Stream::Ascending));
        let mut n = ReadBuffer::new(2, Direction::None);
        n.note_read(0, 8);
        assert_eq!(n.note_read(8, 16), None);
    }
}
