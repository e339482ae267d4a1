//! A sorted index of requests by sector: the simulator's stand-in for the
//! kernel's `sort_list` red-black trees (`elv_rb_add`, `elv_rb_find`,
//! `elv_rb_former_request`, `elv_rb_latter_request`).
//!
//! Entries are kept in a sorted `Vec` found by binary search: scheduler
//! queues hold at most a few hundred requests, so a shifted insert is cheap
//! and, once the vector has reached its high-water mark, nothing allocates.
//! Equal keys keep insertion order (like `elv_rb_add`, which sends equal keys
//! right). A side table indexed by request id remembers the key each request
//! was inserted under, so a request can be removed or found by id even after
//! its `sector` changed (a front merge moves the start sector before the
//! scheduler is told).

use crate::request::RqId;

/// Marker in the side table: "not in the tree".
const ABSENT: u64 = u64::MAX;

/// A sorted index of `(key, RqId)` with lookup by key and by id.
///
/// The key is normally the request's start sector; the block layer also uses
/// one keyed by end sector as its back-merge hash.
#[derive(Clone, Debug, Default)]
pub struct SectorTree {
    /// Entries sorted by key; equal keys in insertion order.
    entries: Vec<(u64, RqId)>,
    /// Key of each request id in the tree, or `ABSENT`.
    key_of: Vec<u64>,
}

impl SectorTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty tree with room for `cap` requests (ids below `cap`) before
    /// it grows.
    pub fn with_capacity(cap: usize) -> Self {
        SectorTree {
            entries: Vec::with_capacity(cap),
            key_of: vec![ABSENT; cap],
        }
    }

    /// Number of requests in the tree.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the tree holds no request.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// True when request `rq` is in the tree.
    #[inline]
    pub fn contains(&self, rq: RqId) -> bool {
        self.key(rq).is_some()
    }

    /// The key `rq` was inserted under, if it is in the tree.
    #[inline]
    pub fn key(&self, rq: RqId) -> Option<u64> {
        match self.key_of.get(rq as usize) {
            Some(&k) if k != ABSENT => Some(k),
            _ => None,
        }
    }

    /// Inserts `rq` under `key` (after any entries with an equal key).
    /// Panics if `rq` is already in the tree (a simulator bug).
    #[inline]
    pub fn insert(&mut self, key: u64, rq: RqId) {
        assert!(key != ABSENT, "sector_tree: key u64::MAX is reserved");
        let i = rq as usize;
        if i >= self.key_of.len() {
            self.key_of.resize(i + 1, ABSENT);
        }
        assert!(
            self.key_of[i] == ABSENT,
            "sector_tree: request {rq} inserted twice"
        );
        self.key_of[i] = key;
        let pos = self.entries.partition_point(|&(k, _)| k <= key);
        self.entries.insert(pos, (key, rq));
    }

    /// Index of `rq`'s entry in `entries`.
    #[inline]
    fn index_of(&self, rq: RqId) -> Option<usize> {
        let key = self.key(rq)?;
        let lo = self.entries.partition_point(|&(k, _)| k < key);
        self.entries[lo..]
            .iter()
            .take_while(|&&(k, _)| k == key)
            .position(|&(_, id)| id == rq)
            .map(|p| lo + p)
    }

    /// Removes `rq`; returns false if it was not in the tree.
    #[inline]
    pub fn remove(&mut self, rq: RqId) -> bool {
        match self.index_of(rq) {
            Some(i) => {
                self.entries.remove(i);
                self.key_of[rq as usize] = ABSENT;
                true
            }
            None => false,
        }
    }

    /// Removes `rq` and returns the request that followed it in key order
    /// (`successor` then `remove`, with one lookup); `None` if `rq` was
    /// last or not in the tree.
    #[inline]
    pub fn remove_next(&mut self, rq: RqId) -> Option<RqId> {
        let i = self.index_of(rq)?;
        let next = self.entries.get(i + 1).map(|&(_, id)| id);
        self.entries.remove(i);
        self.key_of[rq as usize] = ABSENT;
        next
    }

    /// Moves `rq` to `key` (remove then insert, so it goes after equal
    /// keys). Inserts it if it was absent.
    pub fn reposition(&mut self, rq: RqId, key: u64) {
        self.remove(rq);
        self.insert(key, rq);
    }

    /// The first request (in order) whose key equals `key` (`elv_rb_find`).
    #[inline]
    pub fn find(&self, key: u64) -> Option<RqId> {
        let lo = self.entries.partition_point(|&(k, _)| k < key);
        match self.entries.get(lo) {
            Some(&(k, id)) if k == key => Some(id),
            _ => None,
        }
    }

    /// The last inserted request whose key equals `key` (a hash bucket's
    /// head: the most recently added entry comes first).
    #[inline]
    pub fn find_last(&self, key: u64) -> Option<RqId> {
        let hi = self.entries.partition_point(|&(k, _)| k <= key);
        match hi.checked_sub(1).map(|i| self.entries[i]) {
            Some((k, id)) if k == key => Some(id),
            _ => None,
        }
    }

    /// The first request with key ≥ `key`.
    #[inline]
    pub fn ceiling(&self, key: u64) -> Option<RqId> {
        let lo = self.entries.partition_point(|&(k, _)| k < key);
        self.entries.get(lo).map(|&(_, id)| id)
    }

    /// The last request with key ≤ `key`.
    #[inline]
    pub fn floor(&self, key: u64) -> Option<RqId> {
        let hi = self.entries.partition_point(|&(k, _)| k <= key);
        hi.checked_sub(1).map(|i| self.entries[i].1)
    }

    /// The request after `rq` in key order (`rb_next`), if any.
    #[inline]
    pub fn successor(&self, rq: RqId) -> Option<RqId> {
        let i = self.index_of(rq)?;
        self.entries.get(i + 1).map(|&(_, id)| id)
    }

    /// The request before `rq` in key order (`rb_prev`), if any.
    #[inline]
    pub fn predecessor(&self, rq: RqId) -> Option<RqId> {
        let i = self.index_of(rq)?;
        i.checked_sub(1).map(|j| self.entries[j].1)
    }

    /// The request with the lowest key.
    #[inline]
    pub fn first(&self) -> Option<RqId> {
        self.entries.first().map(|&(_, id)| id)
    }

    /// The request with the highest key.
    #[inline]
    pub fn last(&self) -> Option<RqId> {
        self.entries.last().map(|&(_, id)| id)
    }

    /// All `(key, rq)` entries in ascending key order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, RqId)> + '_ {
        self.entries.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_with_neighbours_and_equal_keys_in_insertion_order() {
        let mut t = SectorTree::new();
        t.insert(100, 1);
        t.insert(50, 2);
        t.insert(100, 3);
        t.insert(200, 4);
        let v: Vec<_> = t.iter().collect();
        assert_eq!(v, vec![(50, 2), (100, 1), (100, 3), (200, 4)]);
        assert_eq!(t.find(100), Some(1));
        assert_eq!(t.find_last(100), Some(3));
        assert_eq!(t.find(101), None);
        assert_eq!(t.successor(1), Some(3));
        assert_eq!(t.successor(3), Some(4));
        assert_eq!(t.successor(4), None);
        assert_eq!(t.predecessor(2), None);
        assert_eq!(t.predecessor(1), Some(2));
        assert_eq!(t.ceiling(101), Some(4));
        assert_eq!(t.floor(99), Some(2));
        assert!(t.remove(1));
        assert!(!t.remove(1));
        assert_eq!(t.find(100), Some(3));
        t.reposition(4, 10);
        assert_eq!(t.first(), Some(4));
        assert_eq!(t.last(), Some(3));
        assert_eq!(t.key(4), Some(10));
        assert_eq!(t.len(), 3);
    }
}

#[cfg(test)]
mod model_tests {
    //! The tree against a plain model: a vector kept sorted by key with
    //! equal keys in insertion order.
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, RqId),
        Remove(RqId),
        RemoveNext(RqId),
        Reposition(RqId, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few distinct keys and ids, so equal keys and reused ids are common.
        prop_oneof![
            (0u64..24, 0u32..40).prop_map(|(k, r)| Op::Insert(k, r)),
            (0u32..40).prop_map(Op::Remove),
            (0u32..40).prop_map(Op::RemoveNext),
            (0u32..40, 0u64..24).prop_map(|(r, k)| Op::Reposition(r, k)),
        ]
    }

    proptest! {
        #[test]
        fn every_query_matches_a_sorted_vector(ops in proptest::collection::vec(op(), 1..300)) {
            let mut t = SectorTree::with_capacity(8);
            let mut model: Vec<(u64, RqId)> = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(k, r) => {
                        if model.iter().any(|e| e.1 == r) {
                            continue;
                        }
                        t.insert(k, r);
                        let pos = model.partition_point(|e| e.0 <= k);
                        model.insert(pos, (k, r));
                    }
                    Op::Remove(r) => {
                        let at = model.iter().position(|e| e.1 == r);
                        prop_assert_eq!(t.remove(r), at.is_some());
                        if let Some(i) = at {
                            model.remove(i);
                        }
                    }
                    Op::RemoveNext(r) => {
                        let at = model.iter().position(|e| e.1 == r);
                        let next = at.and_then(|i| model.get(i + 1)).map(|e| e.1);
                        prop_assert_eq!(t.remove_next(r), next);
                        if let Some(i) = at {
                            model.remove(i);
                        }
                        prop_assert!(!t.contains(r));
                    }
                    Op::Reposition(r, k) => {
                        t.reposition(r, k);
                        model.retain(|e| e.1 != r);
                        let pos = model.partition_point(|e| e.0 <= k);
                        model.insert(pos, (k, r));
                    }
                }
                prop_assert_eq!(t.iter().collect::<Vec<_>>(), model.clone());
                prop_assert_eq!(t.len(), model.len());
                prop_assert_eq!(t.first(), model.first().map(|e| e.1));
                prop_assert_eq!(t.last(), model.last().map(|e| e.1));
                for k in 0..25u64 {
                    let eq: Vec<RqId> = model.iter().filter(|e| e.0 == k).map(|e| e.1).collect();
                    prop_assert_eq!(t.find(k), eq.first().copied());
                    prop_assert_eq!(t.find_last(k), eq.last().copied());
                    prop_assert_eq!(t.ceiling(k), model.iter().find(|e| e.0 >= k).map(|e| e.1));
                    prop_assert_eq!(t.floor(k), model.iter().rev().find(|e| e.0 <= k).map(|e| e.1));
                }
                for (i, &(k, r)) in model.iter().enumerate() {
                    prop_assert_eq!(t.key(r), Some(k));
                    prop_assert_eq!(t.successor(r), model.get(i + 1).map(|e| e.1));
                    prop_assert_eq!(t.predecessor(r), i.checked_sub(1).map(|j| model[j].1));
                }
            }
        }
    }
}
