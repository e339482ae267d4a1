//! The file allocation table in memory: one entry per cluster (free, the
//! next cluster of a chain, or end of chain) and the allocator of the
//! 2.6.35-3.4 driver, `fat_alloc_clusters`: a linear scan of the FAT from
//! the cluster after the last one allocated (`sbi->prev_free`, read from
//! FSINFO's next-free hint at mount), wrapping at the end, taking the
//! first free entry. Freeing (`fat_free_clusters`) leaves the hint alone.

use super::layout::FIRST_CLUSTER;

/// A FAT entry's value for a free cluster.
const FREE: u32 = 0;
/// End-of-chain mark (`FAT_ENT_EOF`).
pub const EOC: u32 = 0x0fff_ffff;

/// The FAT: entries `0..max_cluster`, the free count and the next-free
/// hint.
#[derive(Clone, Debug)]
pub struct Fat {
    ent: Vec<u32>,
    /// The last cluster allocated (`sbi->prev_free`); the next scan starts
    /// after it.
    prev_free: u32,
    free: u64,
}

impl Fat {
    /// An empty FAT of clusters `2..max_cluster`, the hint before cluster
    /// 2 so that the first allocation (mkfs's root directory) takes it;
    /// allocations after mkfs go on from the last cluster it used, as the
    /// FSINFO next-free hint says at mount.
    pub fn new(max_cluster: u32) -> Fat {
        Fat {
            ent: vec![FREE; max_cluster as usize],
            prev_free: FIRST_CLUSTER - 1,
            free: (max_cluster - FIRST_CLUSTER) as u64,
        }
    }

    /// Free clusters.
    pub fn free_clusters(&self) -> u64 {
        self.free
    }

    /// One past the last cluster.
    pub fn max_cluster(&self) -> u32 {
        self.ent.len() as u32
    }

    /// The entry of cluster `c`.
    pub fn get(&self, c: u32) -> u32 {
        self.ent[c as usize]
    }

    /// Allocates one cluster as the end of a chain (`fat_alloc_clusters`
    /// with `nr_cluster` = 1, as `fat_add_cluster` asks): the first free
    /// entry from the hint on. `None` when the FAT is full.
    pub fn alloc(&mut self) -> Option<u32> {
        if self.free == 0 {
            return None;
        }
        let max = self.max_cluster();
        let mut c = self.prev_free + 1;
        loop {
            if c >= max {
                c = FIRST_CLUSTER;
            }
            if self.ent[c as usize] == FREE {
                self.ent[c as usize] = EOC;
                self.prev_free = c;
                self.free -= 1;
                return Some(c);
            }
            c += 1;
        }
    }

    /// Links cluster `prev` of a chain to `next` (`fat_ent_write`).
    pub fn link(&mut self, prev: u32, next: u32) {
        self.ent[prev as usize] = next;
    }

    /// Marks cluster `c` as the end of its chain.
    pub fn end_at(&mut self, c: u32) {
        self.ent[c as usize] = EOC;
    }

    /// Frees cluster `c`.
    pub fn free(&mut self, c: u32) {
        debug_assert_ne!(self.ent[c as usize], FREE, "double free of cluster {c}");
        self.ent[c as usize] = FREE;
        self.free += 1;
    }

    /// The chain from `start`, following the entries to the end mark.
    pub fn chain(&self, start: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut c = start;
        while c >= FIRST_CLUSTER && c < self.max_cluster() {
            out.push(c);
            c = self.ent[c as usize];
        }
        out
    }

    /// Runs of free clusters, `(first, count)`, ascending.
    pub fn free_runs(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = Vec::new();
        for c in FIRST_CLUSTER..self.max_cluster() {
            if self.ent[c as usize] != FREE {
                continue;
            }
            match out.last_mut() {
                Some((s, n)) if *s + *n == c => *n += 1,
                _ => out.push((c, 1)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_scans_on_from_the_hint_and_wraps() {
        let mut f = Fat::new(10);
        let root = f.alloc().unwrap();
        assert_eq!(root, 2);
        let a: Vec<u32> = (0..3).map(|_| f.alloc().unwrap()).collect();
        assert_eq!(a, [3, 4, 5]);
        f.free(4);
        // the hint stays after 5: a freed cluster is found only on wrap
        assert_eq!(f.alloc(), Some(6));
        assert_eq!(f.alloc(), Some(7));
        assert_eq!(f.alloc(), Some(8));
        assert_eq!(f.alloc(), Some(9));
        assert_eq!(f.alloc(), Some(4), "wraps to the freed cluster");
        assert_eq!(f.alloc(), None);
        f.link(3, 5);
        assert_eq!(f.chain(3), [3, 5]);
    }
}
