//! A slab: objects stored in a vector and named by a `u32` index that is
//! reused after removal.

/// Fixed-identity storage for simulation objects (requests, bios, ops).
///
/// Ids are dense `u32` indices; a removed slot goes on a free list and its id
/// is handed out again, so storage stops growing at the high-water mark.
#[derive(Debug, Clone)]
pub struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl<T> Slab<T> {
    /// An empty slab with room for `cap` objects before it grows.
    pub fn with_capacity(cap: usize) -> Self {
        Slab {
            slots: Vec::with_capacity(cap),
            free: Vec::with_capacity(cap),
            len: 0,
        }
    }

    /// Stores `value` and returns its id.
    #[inline]
    pub fn insert(&mut self, value: T) -> u32 {
        self.len += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = Some(value);
            id
        } else {
            self.slots.push(Some(value));
            (self.slots.len() - 1) as u32
        }
    }

    /// Removes and returns the object `id`. Panics if `id` is not live: that
    /// is a simulator bug, never an input error.
    #[inline]
    pub fn remove(&mut self, id: u32) -> T {
        let v = self.slots[id as usize]
            .take()
            .expect("slab: removing a dead id");
        self.free.push(id);
        self.len -= 1;
        v
    }

    /// The object `id`, if live.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&T> {
        self.slots.get(id as usize).and_then(|s| s.as_ref())
    }

    /// The object `id`, mutably, if live.
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        self.slots.get_mut(id as usize).and_then(|s| s.as_mut())
    }

    /// Number of live objects.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no object is live.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// One more than the largest id ever handed out: the size for side
    /// tables indexed by id.
    pub fn id_bound(&self) -> usize {
        self.slots.len()
    }
}

impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, id: u32) -> &T {
        self.get(id).expect("slab: dead id")
    }
}

impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut T {
        self.get_mut(id).expect("slab: dead id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_reused_after_removal() {
        let mut s = Slab::with_capacity(4);
        let a = s.insert("a");
        let b = s.insert("b");
        assert_eq!(s.remove(a), "a");
        let c = s.insert("c");
        assert_eq!(c, a, "freed id is handed out again");
        assert_eq!(s[b], "b");
        assert_eq!(s.len(), 2);
        assert_eq!(s.id_bound(), 2);
    }
}
