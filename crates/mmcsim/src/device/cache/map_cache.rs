//! Mapping cache: the map pages (4 KiB, 1,024 4-byte L2P entries = 4 MiB of
//! LBA space each) the controller holds in SRAM, least recently used out.
//!
//! Contract: phone eMMC has no DRAM, so only a few map pages fit
//! (`[map_cache] entries`). [`MapCache::lookup`] makes the map pages of a
//! command's LPN range resident and returns when they are: a hit costs
//! nothing; a miss reads the map page from NAND (one sense + 4 KiB out on
//! the die holding it) and the command waits for that read only; a dirty
//! page evicted to make room is programmed back in the background. On a
//! miss of an access whose direction `[map_cache] prefetch_direction`
//! follows (ascending: first LPN above the previous command's; descending:
//! below it) the next `prefetch_map_pages` map pages in that direction are
//! loaded too, after the command's own NAND reads
//! ([`MapCache::issue_prefetch`]). The first access after a reset counts
//! as ascending.
//!
//! Layout on NAND: consecutive map pages are kept in *translation pages* of
//! one multi-plane stripe page (planes × page_kib / 4 map pages), spread
//! round-robin over the dies, so map pages of one translation page are
//! sensed together.

use super::{Direction, Stream};
use crate::device::nand::NandTimelines;
use crate::types::Ns;

/// L2P entries (4 bytes each) in one 4 KiB map page: 4 MiB of LBA space.
pub const ENTRIES_PER_MAP_PAGE: u32 = 1024;

/// The mapping cache and the controller's policy for loading, prefetching
/// and writing back map pages.
#[derive(Clone, Debug)]
pub struct MapCache {
    lru: MapLru,
    /// Map pages covering the user LPNs.
    pages: u32,
    /// Map pages per translation page (one stripe page).
    per_sense: u32,
    /// Dies the translation pages are spread over.
    dies: u32,
    /// Map pages loaded after a miss the prefetcher follows.
    prefetch: u32,
    /// Which access directions the prefetcher follows.
    direction: Direction,
    /// Deferred map prefetch: `(die, translation page, bytes, own map page
    /// ready, die free mark)`.
    deferred: Vec<(u32, u32, u32, Ns, Option<Ns>)>,
    /// First LPN of the previous lookup (direction detection).
    last_lpn: Option<u32>,
    nand_reads: u64,
    pages_loaded: u64,
    writebacks: u64,
    /// Reused list of the map pages a flush persists.
    scratch: Vec<u32>,
}

impl MapCache {
    /// An empty cache of `entries` map pages for `lpns` logical pages, with
    /// translation pages of `per_sense` map pages over `dies` dies, loading
    /// `prefetch` more map pages (at most `entries − 1`) after a miss whose
    /// direction `direction` follows.
    pub fn new(
        entries: u32,
        prefetch: u32,
        direction: Direction,
        lpns: u32,
        per_sense: u32,
        dies: u32,
    ) -> MapCache {
        let pages = lpns.div_ceil(ENTRIES_PER_MAP_PAGE);
        MapCache {
            lru: MapLru::new(entries, pages),
            pages,
            per_sense,
            dies,
            prefetch: prefetch.min(entries - 1),
            direction,
            deferred: Vec::with_capacity(8),
            scratch: Vec::new(),
            last_lpn: None,
            nand_reads: 0,
            pages_loaded: 0,
            writebacks: 0,
        }
    }

    /// Map page holding `lpn`'s entry.
    pub fn map_page(lpn: u32) -> u32 {
        lpn / ENTRIES_PER_MAP_PAGE
    }

    /// True when the map page holding `lpn`'s entry is cached.
    pub fn holds_entry_of(&self, lpn: u32) -> bool {
        self.lru.contains(Self::map_page(lpn))
    }

    /// Die storing map page `m`.
    fn die_of(&self, m: u32) -> u32 {
        (m / self.per_sense) % self.dies
    }

    /// Looks up the map pages of LPNs `[first, end)` at `t` ns (`dirty` for
    /// writes and trims); returns when every needed map page is in SRAM, ns.
    pub fn lookup(
        &mut self,
        tl: &mut NandTimelines,
        t: Ns,
        first: u32,
        end: u32,
        dirty: bool,
    ) -> Ns {
        let stream = match self.last_lpn {
            None => Some(Stream::Ascending),
            Some(p) if first > p => Some(Stream::Ascending),
            Some(p) if first < p => Some(Stream::Descending),
            Some(_) => None,
        }
        .filter(|s| self.direction.follows(*s));
        self.last_lpn = Some(first);
        let mut ready = t;
        for m in Self::map_page(first)..=Self::map_page(end - 1) {
            let a = self.lru.access(m, dirty);
            if let Some(ev) = a.evicted_dirty {
                self.write_back(tl, t, ev);
            }
            if !a.hit {
                ready = ready.max(self.load(tl, t, m, stream));
            }
        }
        ready
    }

    /// Reads map page `m` from NAND (sense + 4 KiB out); the command waits
    /// only for this. On a followed `stream` the next `prefetch` map pages
    /// in its direction are loaded too: those in the same translation page were sensed together
    /// with `m` and only need their data-out; those in the next translation
    /// page need one more sense. The controller serves the host first: the
    /// extra transfers are deferred to [`Self::issue_prefetch`] (and the die
    /// is sensed again if the data read used it in between).
    fn load(&mut self, tl: &mut NandTimelines, t: Ns, m: u32, stream: Option<Stream>) -> Ns {
        let die = self.die_of(m);
        let (_, own) = tl.read(t, die, 4096);
        self.nand_reads += 1;
        self.pages_loaded += 1;
        let Some(stream) = stream else {
            return own;
        };
        let group = m / self.per_sense;
        for k in 1..=self.prefetch {
            let next = match stream {
                Stream::Ascending => m.checked_add(k).filter(|&mm| mm < self.pages),
                Stream::Descending => m.checked_sub(k),
            };
            let Some(mm) = next else {
                break;
            };
            if self.lru.contains(mm) {
                continue;
            }
            if let Some(ev) = self.lru.prefetch(mm) {
                self.write_back(tl, t, ev);
            }
            let g = mm / self.per_sense;
            // Still in the page register only if nothing used the die since.
            let mark = if g == group { Some(own) } else { None };
            match self.deferred.iter_mut().find(|e| e.1 == g) {
                Some(e) => e.2 += 4096,
                None => self.deferred.push((self.die_of(mm), g, 4096, own, mark)),
            }
            self.pages_loaded += 1;
        }
        own
    }

    /// Issues the deferred data-out (or re-sense) of prefetched map pages;
    /// called once the command's own NAND reads are booked.
    pub fn issue_prefetch(&mut self, tl: &mut NandTimelines) {
        for &(die, _, bytes, own, mark) in &self.deferred {
            if mark.is_some_and(|m| tl.die_free_at(die) == m) {
                tl.data_out(own, die, bytes);
            } else {
                tl.read(own, die, bytes);
                self.nand_reads += 1;
            }
        }
        self.deferred.clear();
    }

    /// Programs dirty evicted map page `m` back to its translation block
    /// (background: occupies the die and channel only).
    fn write_back(&mut self, tl: &mut NandTimelines, t: Ns, m: u32) {
        tl.program(t, self.die_of(m), 4096, false);
        self.writebacks += 1;
    }

    /// Programs every dirty cached map page back to its translation block
    /// from `t` (FLUSH_CACHE persisting the mapping); they become clean.
    /// Returns the pages programmed and when the last program ends, ns.
    pub fn persist_dirty(&mut self, tl: &mut NandTimelines, t: Ns) -> (u32, Ns) {
        let mut pages = std::mem::take(&mut self.scratch);
        pages.clear();
        self.lru.take_dirty(&mut pages);
        let mut end = t;
        for &m in &pages {
            end = end.max(tl.program(t, self.die_of(m), 4096, false));
        }
        self.writebacks += pages.len() as u64;
        let n = pages.len() as u32;
        self.scratch = pages;
        (n, end)
    }

    /// Empties the cache and forgets the access direction (dirty pages are
    /// dropped: used after preconditioning, where map writes are not timed).
    pub fn clear(&mut self) {
        self.lru.clear();
        self.deferred.clear();
        self.last_lpn = None;
    }
    /// Lookups of a map page that hit.
    pub fn hits(&self) -> u64 {
        self.lru.hits()
    }
    /// Lookups of a map page that missed.
    pub fn misses(&self) -> u64 {
        self.lru.misses()
    }
    /// NAND senses for map pages (misses and prefetch re-senses).
    pub fn nand_reads(&self) -> u64 {
        self.nand_reads
    }
    /// Map pages read from NAND (misses plus forward prefetch).
    pub fn pages_loaded(&self) -> u64 {
        self.pages_loaded
    }
    /// Dirty map pages programmed back on eviction.
    pub fn writebacks(&self) -> u64 {
        self.writebacks
    }
    /// Clears the counters.
    pub fn reset_stats(&mut self) {
        self.lru.reset_stats();
        self.nand_reads = 0;
        self.pages_loaded = 0;
        self.writebacks = 0;
    }
}

/// Outcome of one map-page access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MapAccess {
    /// The page was cached.
    hit: bool,
    /// A dirty page evicted to make room; it must be programmed back.
    evicted_dirty: Option<u32>,
}

/// No slot / no map page (list end, uncached page).
const NIL: u32 = u32::MAX;

/// One cached map page, linked into the recency list.
#[derive(Clone, Copy, Debug)]
struct MapNode {
    page: u32,
    /// Access clock of the last use (a prefetched page: one below the
    /// access that loaded it).
    last_use: u64,
    dirty: bool,
    prev: u32,
    next: u32,
}

impl MapNode {
    /// Eviction order: least recent use first, ties (prefetched pages of
    /// one access) by the lower map page.
    fn key(&self) -> (u64, u32) {
        (self.last_use, self.page)
    }
}

/// LRU set of cached map pages: a slot per cached page, found through a
/// per-map-page index, on a list kept in eviction order (`(last use, map
/// page)` ascending), so a lookup, a hit and an eviction cost O(1) and a
/// prefetched page's insertion below the newest entries a few steps.
#[derive(Clone, Debug)]
struct MapLru {
    capacity: usize,
    /// Map page → its slot in `nodes`, or `NIL`.
    slot_of: Vec<u32>,
    nodes: Vec<MapNode>,
    /// Slots of `nodes` not in use.
    free: Vec<u32>,
    /// Least recently used slot (evicted first).
    head: u32,
    /// Most recently used slot.
    tail: u32,
    clock: u64,
    hits: u64,
    misses: u64,
}

impl MapLru {
    /// An empty cache of `capacity` map pages, indexing map pages below
    /// `pages` (higher ones grow the index on first use).
    fn new(capacity: u32, pages: u32) -> MapLru {
        let capacity = capacity.max(1) as usize;
        MapLru {
            capacity,
            slot_of: vec![NIL; pages as usize],
            nodes: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
            head: NIL,
            tail: NIL,
            clock: 0,
            hits: 0,
            misses: 0,
        }
    }

    /// The slot of `m`, if cached.
    fn slot(&self, m: u32) -> Option<u32> {
        self.slot_of.get(m as usize).copied().filter(|&s| s != NIL)
    }

    /// True when `m` is cached (no recency update, no statistics).
    fn contains(&self, m: u32) -> bool {
        self.slot(m).is_some()
    }

    /// Looks up `m` for a host access, counting a hit or miss; on a miss the
    /// page is inserted as most recently used. `dirty` marks the page as
    /// modified (writes, trims).
    fn access(&mut self, m: u32, dirty: bool) -> MapAccess {
        self.clock += 1;
        if let Some(s) = self.slot(m) {
            self.unlink(s);
            let n = &mut self.nodes[s as usize];
            n.last_use = self.clock;
            n.dirty |= dirty;
            // The clock just advanced: the newest entry of all.
            self.link_after(self.tail, s);
            self.hits += 1;
            return MapAccess {
                hit: true,
                evicted_dirty: None,
            };
        }
        self.misses += 1;
        let evicted_dirty = self.make_room();
        let s = self.new_node(m, self.clock, dirty);
        self.link_after(self.tail, s);
        MapAccess {
            hit: false,
            evicted_dirty,
        }
    }

    /// Inserts a prefetched page `m` as less recent than the page just
    /// accessed (it is wanted later, not now). Returns an evicted dirty page.
    fn prefetch(&mut self, m: u32) -> Option<u32> {
        if self.contains(m) {
            return None;
        }
        let ev = self.make_room();
        let s = self.new_node(m, self.clock.saturating_sub(1), false);
        // Walk back from the newest past the entries ranked above it (the
        // access just made and other prefetches of it: a few steps).
        let key = self.nodes[s as usize].key();
        let mut after = self.tail;
        while after != NIL && self.nodes[after as usize].key() > key {
            after = self.nodes[after as usize].prev;
        }
        self.link_after(after, s);
        ev
    }

    /// Evicts the least recently used page when the cache is full; returns
    /// it if it was dirty.
    #[inline]
    fn make_room(&mut self) -> Option<u32> {
        if self.len() < self.capacity {
            return None;
        }
        let s = self.head;
        self.unlink(s);
        self.free.push(s);
        let old = self.nodes[s as usize];
        self.slot_of[old.page as usize] = NIL;
        old.dirty.then_some(old.page)
    }

    /// Cached pages.
    fn len(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// A slot holding page `m` (not yet linked).
    #[inline]
    fn new_node(&mut self, m: u32, last_use: u64, dirty: bool) -> u32 {
        let node = MapNode {
            page: m,
            last_use,
            dirty,
            prev: NIL,
            next: NIL,
        };
        let s = match self.free.pop() {
            Some(s) => {
                self.nodes[s as usize] = node;
                s
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        if m as usize >= self.slot_of.len() {
            self.slot_of.resize(m as usize + 1, NIL);
        }
        self.slot_of[m as usize] = s;
        s
    }

    /// Links slot `s` right after slot `after` (`NIL`: at the head).
    fn link_after(&mut self, after: u32, s: u32) {
        let next = if after == NIL {
            self.head
        } else {
            self.nodes[after as usize].next
        };
        self.nodes[s as usize].prev = after;
        self.nodes[s as usize].next = next;
        if after == NIL {
            self.head = s;
        } else {
            self.nodes[after as usize].next = s;
        }
        if next == NIL {
            self.tail = s;
        } else {
            self.nodes[next as usize].prev = s;
        }
    }

    /// Takes slot `s` off the list.
    fn unlink(&mut self, s: u32) {
        let MapNode { prev, next, .. } = self.nodes[s as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }

    /// Appends the dirty cached pages to `out` in eviction order and marks
    /// them clean.
    fn take_dirty(&mut self, out: &mut Vec<u32>) {
        let mut s = self.head;
        while s != NIL {
            let n = &mut self.nodes[s as usize];
            if n.dirty {
                n.dirty = false;
                out.push(n.page);
            }
            s = n.next;
        }
    }

    /// Empties the cache (dirty pages are dropped: used after
    /// preconditioning, where map writes are not timed).
    fn clear(&mut self) {
        for n in &self.nodes {
            if let Some(s) = self.slot_of.get_mut(n.page as usize) {
                *s = NIL;
            }
        }
        self.nodes.clear();
        self.free.clear();
        self.head = NIL;
        self.tail = NIL;
    }
    /// Host accesses that hit.
    fn hits(&self) -> u64 {
        self.hits
    }
    /// Host accesses that missed.
    fn misses(&self) -> u64 {
        self.misses
    }
    /// Clears the hit and miss counters.
    fn reset_stats(&mut self) {
        self.hits = 0;
        self.misses = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn lru_eviction_and_dirty_writeback() {
        let mut c = MapLru::new(2, 0);
        assert!(!c.access(1, true).hit);
        assert!(!c.access(2, false).hit);
        assert!(c.access(1, false).hit);
        // 2 is least recent: evicted clean.
        assert_eq!(c.access(3, false).evicted_dirty, None);
        // 1 is least recent now and dirty.
        assert_eq!(c.access(4, false).evicted_dirty, Some(1));
        assert_eq!((c.hits(), c.misses()), (1, 4));
    }

    /// The eviction rule as first written: a vector scanned for the page and
    /// for the least `(last use, map page)` entry.
    struct ScanLru {
        capacity: usize,
        entries: Vec<(u32, u64, bool)>,
        clock: u64,
    }

    impl ScanLru {
        fn insert(&mut self, m: u32, dirty: bool) -> Option<u32> {
            let mut evicted = None;
            if self.entries.len() == self.capacity {
                let (i, _) = (self.entries.iter().enumerate())
                    .min_by_key(|(_, e)| (e.1, e.0))
                    .unwrap();
                let old = self.entries.swap_remove(i);
                evicted = old.2.then_some(old.0);
            }
            self.entries.push((m, self.clock, dirty));
            evicted
        }
        fn access(&mut self, m: u32, dirty: bool) -> MapAccess {
            self.clock += 1;
            if let Some(e) = self.entries.iter_mut().find(|e| e.0 == m) {
                e.1 = self.clock;
                e.2 |= dirty;
                return MapAccess {
                    hit: true,
                    evicted_dirty: None,
                };
            }
            MapAccess {
                hit: false,
                evicted_dirty: self.insert(m, dirty),
            }
        }
        fn prefetch(&mut self, m: u32) -> Option<u32> {
            if self.entries.iter().any(|e| e.0 == m) {
                return None;
            }
            let ev = self.insert(m, false);
            let clock = self.clock.saturating_sub(1);
            self.entries.iter_mut().find(|e| e.0 == m).unwrap().1 = clock;
            ev
        }
    }

    /// The indexed LRU evicts exactly what a full scan for the least
    /// recently used entry evicts, hits and dirty write-backs included, on
    /// random mixes of accesses (clean and dirty) and prefetches.
    #[test]
    fn indexed_lru_evicts_like_a_full_scan() {
        let mut rng = crate::engine::component_rng(1, "map lru test");
        let mut next = move || rng.random::<u64>();
        for case in 0..100u64 {
            let capacity = 1 + (case % 9) as u32;
            let pages = 2 + (next() % 40) as u32;
            let mut a = MapLru::new(capacity, pages / 2);
            let mut b = ScanLru {
                capacity: capacity as usize,
                entries: Vec::new(),
                clock: 0,
            };
            for step in 0..2000 {
                let m = (next() % pages as u64) as u32;
                if next() % 3 == 0 {
                    assert_eq!(a.prefetch(m), b.prefetch(m), "case {case} step {step}");
                } else {
                    let dirty = next() % 2 == 0;
                    assert_eq!(
                        a.access(m, dirty),
                        b.access(m, dirty),
                        "case {case} step {step}"
                    );
                }
                if step % 500 == 499 {
                    a.clear();
                    b.entries.clear();
                }
                assert_eq!(a.len(), b.entries.len());
            }
        }
    }
}
