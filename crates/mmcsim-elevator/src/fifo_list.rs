//! An intrusive doubly-linked FIFO of requests, keyed by [`RqId`]: the
//! simulator's `list_head` for scheduler FIFOs (`fifo_list`, noop's queue).
//!
//! Links live in a side table indexed by request id, sized to the slab's id
//! bound and grown only at a new high-water mark, so push, remove and front
//! are O(1) and allocate nothing in steady state.

use crate::request::{RqId, NIL};

/// Link of one request: previous and next ids, and membership.
#[derive(Clone, Copy, Debug)]
struct Link {
    prev: RqId,
    next: RqId,
    linked: bool,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
    linked: false,
};

/// A FIFO of request ids with O(1) push, removal from anywhere, and
/// neighbour lookup. A request is in at most one position of one list.
#[derive(Clone, Debug)]
pub struct FifoList {
    head: RqId,
    tail: RqId,
    len: usize,
    links: Vec<Link>,
}

impl Default for FifoList {
    fn default() -> Self {
        FifoList::new()
    }
}

impl FifoList {
    /// An empty list.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty list whose side table has room for ids below `cap`.
    pub fn with_capacity(cap: usize) -> Self {
        FifoList {
            head: NIL,
            tail: NIL,
            len: 0,
            links: vec![UNLINKED; cap],
        }
    }

    #[inline]
    fn grow(&mut self, rq: RqId) {
        let i = rq as usize;
        if i >= self.links.len() {
            self.links.resize(i + 1, UNLINKED);
        }
    }

    /// Number of requests in the list.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the list is empty (`list_empty`).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when `rq` is in the list.
    #[inline]
    pub fn contains(&self, rq: RqId) -> bool {
        self.links.get(rq as usize).is_some_and(|l| l.linked)
    }

    /// The oldest request (head), if any.
    #[inline]
    pub fn front(&self) -> Option<RqId> {
        (self.head != NIL).then_some(self.head)
    }

    /// The newest request (tail), if any.
    #[inline]
    pub fn back(&self) -> Option<RqId> {
        (self.tail != NIL).then_some(self.tail)
    }

    /// The request after `rq` (towards the tail), if any.
    #[inline]
    pub fn next(&self, rq: RqId) -> Option<RqId> {
        let l = self.links.get(rq as usize)?;
        (l.linked && l.next != NIL).then_some(l.next)
    }

    /// The request before `rq` (towards the head), if any.
    #[inline]
    pub fn prev(&self, rq: RqId) -> Option<RqId> {
        let l = self.links.get(rq as usize)?;
        (l.linked && l.prev != NIL).then_some(l.prev)
    }

    /// Appends `rq` at the tail (`list_add_tail`). Panics if already linked.
    #[inline]
    pub fn push_back(&mut self, rq: RqId) {
        let tail = self.tail;
        self.link_between(rq, tail, NIL);
    }

    /// Inserts `rq` at the head (`list_add`). Panics if already linked.
    #[inline]
    pub fn push_front(&mut self, rq: RqId) {
        let head = self.head;
        self.link_between(rq, NIL, head);
    }

    /// Inserts `rq` right after `anchor` (`list_add(rq, anchor)`).
    /// Panics if `anchor` is not linked or `rq` is.
    pub fn insert_after(&mut self, anchor: RqId, rq: RqId) {
        assert!(
            self.contains(anchor),
            "fifo_list: anchor {anchor} not linked"
        );
        let next = self.links[anchor as usize].next;
        self.link_between(rq, anchor, next);
    }

    /// Inserts `rq` right before `anchor`.
    /// Panics if `anchor` is not linked or `rq` is.
    pub fn insert_before(&mut self, anchor: RqId, rq: RqId) {
        assert!(
            self.contains(anchor),
            "fifo_list: anchor {anchor} not linked"
        );
        let prev = self.links[anchor as usize].prev;
        self.link_between(rq, prev, anchor);
    }

    #[inline]
    fn link_between(&mut self, rq: RqId, prev: RqId, next: RqId) {
        self.grow(rq);
        assert!(
            !self.links[rq as usize].linked,
            "fifo_list: request {rq} linked twice"
        );
        self.links[rq as usize] = Link {
            prev,
            next,
            linked: true,
        };
        if prev == NIL {
            self.head = rq;
        } else {
            self.links[prev as usize].next = rq;
        }
        if next == NIL {
            self.tail = rq;
        } else {
            self.links[next as usize].prev = rq;
        }
        self.len += 1;
    }

    /// Unlinks `rq` (`list_del_init`); returns false if it was not linked.
    #[inline]
    pub fn remove(&mut self, rq: RqId) -> bool {
        if !self.contains(rq) {
            return false;
        }
        let Link { prev, next, .. } = self.links[rq as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.links[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.links[next as usize].prev = prev;
        }
        self.links[rq as usize] = UNLINKED;
        self.len -= 1;
        true
    }

    /// Removes and returns the head.
    #[inline]
    pub fn pop_front(&mut self) -> Option<RqId> {
        let h = self.front()?;
        self.remove(h);
        Some(h)
    }

    /// Iterates from head to tail.
    pub fn iter(&self) -> impl Iterator<Item = RqId> + '_ {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let id = cur;
            cur = self.links[id as usize].next;
            Some(id)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_remove_insert_and_order() {
        let mut f = FifoList::new();
        for id in [5, 2, 9] {
            f.push_back(id);
        }
        assert_eq!(f.iter().collect::<Vec<_>>(), vec![5, 2, 9]);
        assert!(f.remove(2));
        assert!(!f.remove(2));
        assert_eq!(f.next(5), Some(9));
        assert_eq!(f.prev(9), Some(5));
        f.insert_after(5, 7);
        f.push_front(1);
        f.insert_before(1, 0);
        assert_eq!(f.iter().collect::<Vec<_>>(), vec![0, 1, 5, 7, 9]);
        assert_eq!(f.pop_front(), Some(0));
        assert_eq!(f.front(), Some(1));
        assert_eq!(f.back(), Some(9));
        assert_eq!(f.len(), 4);
        for id in [1, 5, 7, 9] {
            f.remove(id);
        }
        assert!(f.is_empty());
        assert_eq!(f.front(), None);
    }
}
