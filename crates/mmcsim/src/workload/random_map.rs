//! fio's random map for I/Os of several sizes: a bit per block of the
//! smallest size; a random I/O starts at the drawn block or, when that one
//! was already used this pass, at the next unused block (wrapping to the
//! start of the region), and covers only unused blocks, so an I/O that
//! would overlap a used block is shortened to the unused ones before it.
//! When every block is used the map clears and a new pass begins.
//! [src: fio `io_u.c` __get_next_rand_offset, mark_random_map;
//! `lib/axmap.c` axmap_next_free]

/// Which blocks of a region this pass has used.
#[derive(Clone, Debug)]
pub struct RandomMap {
    bits: Vec<u64>,
    blocks: u64,
    used: u64,
}

impl RandomMap {
    /// A map of `blocks` unused blocks (at least 1).
    pub fn new(blocks: u64) -> RandomMap {
        let blocks = blocks.max(1);
        RandomMap {
            bits: vec![0; blocks.div_ceil(64) as usize],
            blocks,
            used: 0,
        }
    }

    fn is_used(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] >> (b % 64) & 1 == 1
    }

    /// The first unused block at or after `b`, wrapping to 0; a full map
    /// starts a new pass first.
    pub fn free_from(&mut self, b: u64) -> u64 {
        if self.used == self.blocks {
            self.bits.fill(0);
            self.used = 0;
        }
        let mut i = b % self.blocks;
        while self.is_used(i) {
            let w = self.bits[(i / 64) as usize];
            let rest = !w >> (i % 64);
            i = if rest != 0 {
                i + u64::from(rest.trailing_zeros())
            } else {
                (i / 64 + 1) * 64
            };
            if i >= self.blocks {
                i = 0;
            }
        }
        i
    }

    /// Marks up to `n` blocks from `b` used, stopping at a used one or the
    /// end of the region; returns how many it marked (≥ 1 when `b` is
    /// unused).
    pub fn mark(&mut self, b: u64, n: u64) -> u64 {
        let mut k = 0;
        while k < n && b + k < self.blocks && !self.is_used(b + k) {
            let i = b + k;
            self.bits[(i / 64) as usize] |= 1 << (i % 64);
            k += 1;
        }
        self.used += k;
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn used_blocks_are_skipped_and_a_full_map_starts_over() {
        let mut m = RandomMap::new(130);
        assert_eq!(m.mark(0, 2), 2);
        assert_eq!(m.free_from(0), 2);
        assert_eq!(m.mark(3, 200), 127, "stops at the end of the region");
        assert_eq!(m.mark(1, 2), 0, "block 1 is used");
        assert_eq!(m.free_from(129), 2, "wraps to the first unused block");
        assert_eq!(m.mark(2, 1), 1);
        assert_eq!(m.free_from(77), 77, "a full map clears");
    }
}
