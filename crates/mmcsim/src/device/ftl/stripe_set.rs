//! An ordered set of `(key, stripe)` pairs over a fixed range of stripes,
//! that never allocates after construction.
//!
//! The page FTL keeps, per die, its free stripes ordered by wear and its
//! full stripes ordered by valid slots, and asks for the smallest. A
//! `BTreeSet` did that but allocated and freed tree nodes on every
//! invalidation (remove + insert with the new valid count), so the write
//! path allocated per request. This is an indexed binary min-heap: the
//! pairs in a preallocated array plus each stripe's position in it, so a
//! key change, insert, removal or pop is O(log n) and allocation-free.
//!
//! A stripe is in the set at most once, so the pairs are totally ordered
//! and the smallest is unique: [`StripeSet::first`] returns exactly what
//! `BTreeSet::first` returned, and simulations stay byte-identical.

/// Marks a stripe that is not in the set.
const ABSENT: u32 = u32::MAX;

/// A set of `(key, stripe)` pairs, stripes in `base..base + len`, each at
/// most once, ordered by `(key, stripe)`.
#[derive(Debug)]
pub(super) struct StripeSet {
    /// First stripe of the range.
    base: u32,
    /// Binary min-heap of the pairs; capacity = the range's length.
    heap: Vec<(u32, u32)>,
    /// Per stripe of the range: its index in `heap`, or [`ABSENT`].
    pos: Vec<u32>,
}

impl Clone for StripeSet {
    /// A copy with the same preallocated capacity (a derived clone would
    /// shrink the heap to its length and allocate again as it refills).
    fn clone(&self) -> Self {
        let mut heap = Vec::with_capacity(self.pos.len());
        heap.extend_from_slice(&self.heap);
        StripeSet {
            base: self.base,
            heap,
            pos: self.pos.clone(),
        }
    }
}

impl StripeSet {
    /// An empty set for stripes `base..base + count`.
    pub fn new(base: u32, count: u32) -> StripeSet {
        StripeSet {
            base,
            heap: Vec::with_capacity(count as usize),
            pos: vec![ABSENT; count as usize],
        }
    }

    /// Pairs in the set.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The smallest pair.
    pub fn first(&self) -> Option<&(u32, u32)> {
        self.heap.first()
    }

    /// True when exactly `pair` is in the set.
    pub fn contains(&self, pair: &(u32, u32)) -> bool {
        match self.slot(pair.1) {
            Some(i) => self.heap[i] == *pair,
            None => false,
        }
    }

    /// Adds `pair`; false when it is already there. Panics (a simulator
    /// bug) when its stripe is outside the range or already in the set
    /// under another key.
    pub fn insert(&mut self, pair: (u32, u32)) -> bool {
        if let Some(i) = self.slot(pair.1) {
            assert!(
                self.heap[i] == pair,
                "mmcsim device: simulator bug: stripe {} is in the set twice",
                pair.1
            );
            return false;
        }
        let i = self.heap.len();
        self.heap.push(pair);
        let p = self.index(pair.1);
        self.pos[p] = i as u32;
        self.sift_up(i);
        true
    }

    /// Removes `pair`; false when it is not in the set.
    pub fn remove(&mut self, pair: &(u32, u32)) -> bool {
        match self.slot(pair.1) {
            Some(i) if self.heap[i] == *pair => {
                self.remove_at(i);
                true
            }
            _ => false,
        }
    }

    /// Removes and returns the smallest pair.
    pub fn pop_first(&mut self) -> Option<(u32, u32)> {
        if self.heap.is_empty() {
            None
        } else {
            Some(self.remove_at(0))
        }
    }

    /// Every pair, in no particular order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &(u32, u32)> + '_ {
        self.heap.iter()
    }

    fn index(&self, stripe: u32) -> usize {
        let i = stripe.wrapping_sub(self.base) as usize;
        assert!(
            i < self.pos.len(),
            "mmcsim device: simulator bug: stripe {stripe} outside the set's range"
        );
        i
    }

    fn slot(&self, stripe: u32) -> Option<usize> {
        match self.pos[self.index(stripe)] {
            ABSENT => None,
            p => Some(p as usize),
        }
    }

    fn remove_at(&mut self, i: usize) -> (u32, u32) {
        let last = self.heap.len() - 1;
        self.swap(i, last);
        let pair = self.heap.pop().expect("non-empty");
        let p = self.index(pair.1);
        self.pos[p] = ABSENT;
        if i < self.heap.len() {
            self.sift_down(i);
            self.sift_up(i);
        }
        pair
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        let (pa, pb) = (self.index(self.heap[a].1), self.index(self.heap[b].1));
        self.pos[pa] = a as u32;
        self.pos[pb] = b as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i] >= self.heap[parent] {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.heap[l] < self.heap[m] {
                m = l;
            }
            if r < n && self.heap[r] < self.heap[m] {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StripeSet;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Any sequence of operations gives what a `BTreeSet` gives.
        #[test]
        fn behaves_like_a_btreeset(ops in proptest::collection::vec((0u8..4, 0u32..6, 10u32..42), 1..400)) {
            let mut s = StripeSet::new(10, 32);
            let mut b: BTreeSet<(u32, u32)> = BTreeSet::new();
            for (op, key, stripe) in ops {
                match op {
                    0 => {
                        // Insert only stripes not yet present (the FTL's use).
                        if !b.iter().any(|&(_, sb)| sb == stripe) {
                            prop_assert_eq!(s.insert((key, stripe)), b.insert((key, stripe)));
                        }
                    }
                    1 => prop_assert_eq!(s.remove(&(key, stripe)), b.remove(&(key, stripe))),
                    2 => prop_assert_eq!(s.pop_first(), b.pop_first()),
                    _ => {
                        // Re-key an entry, as an invalidation does.
                        if let Some(&(k, sb)) = b.iter().find(|&&(_, sb)| sb == stripe) {
                            prop_assert!(s.remove(&(k, sb)) && b.remove(&(k, sb)));
                            prop_assert_eq!(s.insert((key, sb)), b.insert((key, sb)));
                        }
                    }
                }
                prop_assert_eq!(s.first(), b.first());
                prop_assert_eq!(s.len(), b.len());
                prop_assert_eq!(s.contains(&(key, stripe)), b.contains(&(key, stripe)));
            }
            let mut all: Vec<_> = s.clone().iter().copied().collect();
            all.sort_unstable();
            prop_assert_eq!(all, b.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_clone_keeps_its_capacity() {
        let mut s = StripeSet::new(0, 64);
        s.insert((3, 1));
        let c = s.clone();
        assert_eq!(c.heap.capacity(), 64);
        assert_eq!(c.first(), Some(&(3, 1)));
    }
}
