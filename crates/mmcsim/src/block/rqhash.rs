//! The back-merge hash (`elv_rqhash_*` in block/elevator.c): requests in
//! the scheduler keyed by their end sector, so a bio starting where a
//! request ends finds it in O(1).
//!
//! Like the kernel's `hlist` buckets, a request is added at the head of its
//! bucket (`hash_add` → `hlist_add_head`), so a lookup returns the most
//! recently hashed request with that key first. The links live in tables
//! indexed by request id (the kernel embeds the `hlist_node` in `struct
//! request`), so nothing allocates once the tables cover the ids in use,
//! and removal by id is O(1) through a back link.

use mmcsim_elevator::RqId;

/// Marker link: "no request".
const NIL: u32 = u32::MAX;
/// Marker key: "not hashed".
const ABSENT: u64 = u64::MAX;
/// Fewest buckets: the kernel's `ELV_HASH_BITS` = 6 (64 buckets).
const MIN_BUCKETS: usize = 64;

/// Requests keyed by end sector, with lookup of the newest by key.
#[derive(Clone, Debug)]
pub struct RqHash {
    /// First request of each bucket, or `NIL`.
    heads: Vec<u32>,
    /// Next request in the same bucket, by request id.
    next: Vec<u32>,
    /// Previous request in the same bucket (`NIL` at the head), by id.
    prev: Vec<u32>,
    /// Key each request was hashed under, or `ABSENT`.
    key: Vec<u64>,
    /// Right shift turning a 64-bit product into a bucket index.
    shift: u32,
}

impl RqHash {
    /// An empty hash for request ids below `cap` (more ids grow the
    /// tables), with at least one bucket per request.
    pub fn with_capacity(cap: usize) -> RqHash {
        let buckets = cap.max(MIN_BUCKETS).next_power_of_two();
        RqHash {
            heads: vec![NIL; buckets],
            next: vec![NIL; cap],
            prev: vec![NIL; cap],
            key: vec![ABSENT; cap],
            shift: 64 - buckets.trailing_zeros(),
        }
    }

    /// Bucket of `key` (Fibonacci hashing, as `hash_64`).
    fn bucket(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Hashes `rq` under `key` at the head of its bucket. Panics if `rq` is
    /// already hashed (a simulator bug).
    pub fn insert(&mut self, key: u64, rq: RqId) {
        assert!(key != ABSENT, "rqhash: key u64::MAX is reserved");
        let i = rq as usize;
        if i >= self.key.len() {
            self.next.resize(i + 1, NIL);
            self.prev.resize(i + 1, NIL);
            self.key.resize(i + 1, ABSENT);
        }
        assert!(self.key[i] == ABSENT, "rqhash: request {rq} hashed twice");
        let b = self.bucket(key);
        let head = self.heads[b];
        self.key[i] = key;
        self.next[i] = head;
        self.prev[i] = NIL;
        if head != NIL {
            self.prev[head as usize] = rq;
        }
        self.heads[b] = rq;
    }

    /// Unhashes `rq`; returns false if it was not hashed.
    pub fn remove(&mut self, rq: RqId) -> bool {
        let i = rq as usize;
        let Some(&key) = self.key.get(i) else {
            return false;
        };
        if key == ABSENT {
            return false;
        }
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            let b = self.bucket(key);
            self.heads[b] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        }
        self.key[i] = ABSENT;
        true
    }

    /// Re-hashes `rq` under `key` (`elv_rqhash_reposition`): it becomes the
    /// newest entry of its bucket.
    pub fn reposition(&mut self, rq: RqId, key: u64) {
        self.remove(rq);
        self.insert(key, rq);
    }

    /// The most recently hashed request whose key is `key`
    /// (`elv_rqhash_find`'s walk from the bucket head).
    pub fn find_last(&self, key: u64) -> Option<RqId> {
        let mut at = self.heads[self.bucket(key)];
        while at != NIL {
            if self.key[at as usize] == key {
                return Some(at);
            }
            at = self.next[at as usize];
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmcsim_elevator::SectorTree;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64, RqId),
        Remove(RqId),
        Reposition(RqId, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few keys and ids: equal keys, shared buckets and reused ids.
        prop_oneof![
            (0u64..12, 0u32..80).prop_map(|(k, r)| Op::Insert(k * 4096, r)),
            (0u32..80).prop_map(Op::Remove),
            (0u32..80, 0u64..12).prop_map(|(r, k)| Op::Reposition(r, k * 4096)),
        ]
    }

    proptest! {
        /// Same answers as the ordered index it replaces in the block
        /// layer (newest entry per key), including ids beyond the initial
        /// capacity.
        #[test]
        fn lookups_match_the_sorted_index(ops in proptest::collection::vec(op(), 1..300)) {
            let mut h = RqHash::with_capacity(16);
            let mut t = SectorTree::new();
            for op in ops {
                match op {
                    Op::Insert(k, r) => {
                        if t.contains(r) {
                            continue;
                        }
                        h.insert(k, r);
                        t.insert(k, r);
                    }
                    Op::Remove(r) => prop_assert_eq!(h.remove(r), t.remove(r)),
                    Op::Reposition(r, k) => {
                        h.reposition(r, k);
                        t.reposition(r, k);
                    }
                }
                for k in 0..13u64 {
                    prop_assert_eq!(h.find_last(k * 4096), t.find_last(k * 4096));
                }
            }
        }
    }

    #[test]
    fn the_newest_request_with_a_key_is_found_first() {
        let mut h = RqHash::with_capacity(4);
        h.insert(100, 1);
        h.insert(100, 2);
        h.insert(200, 3);
        assert_eq!(h.find_last(100), Some(2));
        assert!(h.remove(2));
        assert!(!h.remove(2));
        assert_eq!(h.find_last(100), Some(1));
        h.reposition(3, 100);
        assert_eq!((h.find_last(100), h.find_last(200)), (Some(3), None));
    }
}
