//! Mapping cache: the map pages (4 KiB, 1,024 4-byte L2P entries = 4 MiB of
//! LBA space each) the controller holds in SRAM, least recently used out.
//!
//! Phone eMMC has no DRAM, so only a few map pages fit; a miss must read the
//! map page from NAND before the data access. This module keeps only the
//! cache state (which pages, recency, dirtiness); the controller charges the
//! NAND time. Entries are few (tens), so a linear scan is cheapest.

/// Outcome of one map-page access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapAccess {
    /// The page was cached.
    pub hit: bool,
    /// A dirty page evicted to make room; it must be programmed back.
    pub evicted_dirty: Option<u32>,
}

/// LRU cache of map pages.
#[derive(Clone, Debug)]
pub struct MapCache {
    capacity: usize,
    /// `(map_page, last_use, dirty)`.
    entries: Vec<(u32, u64, bool)>,
    clock: u64,
    hits: u64,
    misses: u64,
}

impl MapCache {
    /// An empty cache of `capacity` map pages.
    pub fn new(capacity: u32) -> MapCache {
        MapCache {
            capacity: capacity.max(1) as usize,
            entries: Vec::with_capacity(capacity as usize),
            clock: 0,
            hits: 0,
            misses: 0,
        }
    }

    /// True when `m` is cached (no recency update, no statistics).
    pub fn contains(&self, m: u32) -> bool {
        self.entries.iter().any(|e| e.0 == m)
    }

    /// Looks up `m` for a host access, counting a hit or miss; on a miss the
    /// page is inserted as most recently used. `dirty` marks the page as
    /// modified (writes, trims).
    pub fn access(&mut self, m: u32, dirty: bool) -> MapAccess {
        self.clock += 1;
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == m) {
            e.1 = self.clock;
            e.2 |= dirty;
            self.hits += 1;
            return MapAccess {
                hit: true,
                evicted_dirty: None,
            };
        }
        self.misses += 1;
        MapAccess {
            hit: false,
            evicted_dirty: self.insert(m, dirty),
        }
    }

    /// Inserts a prefetched page `m` as less recent than the page just
    /// accessed (it is wanted later, not now). Returns an evicted dirty page.
    pub fn prefetch(&mut self, m: u32) -> Option<u32> {
        if self.contains(m) {
            return None;
        }
        let ev = self.insert(m, false);
        // Rank just below the current most-recent entry.
        if let Some(e) = self.entries.iter_mut().find(|e| e.0 == m) {
            e.1 = self.clock.saturating_sub(1);
        }
        ev
    }

    fn insert(&mut self, m: u32, dirty: bool) -> Option<u32> {
        let mut evicted = None;
        if self.entries.len() == self.capacity {
            let (i, _) = self
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| (e.1, e.0))
                .expect("capacity >= 1");
            let old = self.entries.swap_remove(i);
            if old.2 {
                evicted = Some(old.0);
            }
        }
        self.entries.push((m, self.clock, dirty));
        evicted
    }

    /// Empties the cache (dirty pages are dropped: used after
    /// preconditioning, where map writes are not timed).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
    /// Host accesses that hit.
    pub fn hits(&self) -> u64 {
        self.hits
    }
    /// Host accesses that missed.
    pub fn misses(&self) -> u64 {
        self.misses
    }
    /// Clears the hit and miss counters.
    pub fn reset_stats(&mut self) {
        self.hits = 0;
        self.misses = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_and_dirty_writeback() {
        let mut c = MapCache::new(2);
        assert!(!c.access(1, true).hit);
        assert!(!c.access(2, false).hit);
        assert!(c.access(1, false).hit);
        // 2 is least recent: evicted clean.
        assert_eq!(c.access(3, false).evicted_dirty, None);
        // 1 is least recent now and dirty.
        assert_eq!(c.access(4, false).evicted_dirty, Some(1));
        assert_eq!((c.hits(), c.misses()), (1, 4));
    }
}
