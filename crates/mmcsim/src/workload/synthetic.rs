//! Offset generators for synthetic jobs: sequential, random and strided
//! access, visited in ascending, descending or shuffled order; random
//! jobs may draw from a skewed distribution ([`super::distribution`]),
//! mix in sequential calls (`random_percent`) and use per-call sizes
//! ([`super::block_sizes`], with fio's random map,
//! [`super::random_map`]).

use super::block_sizes::BlockSizes;
use super::distribution::Sampler;
use super::random_map::RandomMap;
use super::spec::{JobSpec, Order, Pattern};
use crate::engine::SimRng;
use rand::Rng;

/// Produces a job thread's call offsets (bytes within its file).
#[derive(Clone, Debug)]
pub struct OffsetGen {
    pattern: Pattern,
    order: Order,
    region_start: u64,
    /// Number of slots (sequential, strided) or of aligned positions
    /// (random).
    slots: u64,
    /// Bytes between slots.
    step: u64,
    perm: Vec<u32>,
    next: u64,
    /// What a job beyond fixed sizes and uniform offsets needs.
    ext: Option<Box<Extended>>,
}

/// State of a generator with per-call sizes, a skewed distribution or a
/// share of sequential calls.
#[derive(Clone, Debug)]
struct Extended {
    /// Bytes of the region.
    region: u64,
    /// Alignment of random offsets, bytes.
    align: u64,
    /// The skewed distribution's sampler over the aligned positions.
    sampler: Option<Sampler>,
    /// fio's random map over blocks of `align` bytes (uniform random
    /// offsets of several sizes, each block once per pass).
    map: Option<RandomMap>,
    /// Percent of calls drawing a random offset (random jobs).
    random_percent: u32,
    /// True for a random job (else sequential with per-call sizes).
    random: bool,
    /// End of the previous call, bytes from the region's start.
    cursor: u64,
}

impl OffsetGen {
    /// A generator for one thread of `job` over a file of `file_bytes`;
    /// `rng` shuffles and draws random offsets.
    pub fn new(job: &JobSpec, file_bytes: u64, rng: &mut SimRng) -> OffsetGen {
        let region = job
            .region_bytes
            .unwrap_or(file_bytes - job.region_offset_bytes);
        let (step, slots) = match job.pattern {
            Pattern::Sequential => (job.request_bytes, region / job.request_bytes),
            Pattern::Strided => {
                let s = job.stride_bytes.unwrap_or(job.request_bytes);
                (s, (region - job.request_bytes) / s + 1)
            }
            Pattern::Random => {
                let a = job.align_bytes.unwrap_or(job.request_bytes);
                (a, (region - job.request_bytes) / a + 1)
            }
        };
        let mut perm = Vec::new();
        if job.pattern != Pattern::Random && job.order == Order::Shuffled {
            perm = (0..slots as u32).collect();
            // Fisher-Yates with the thread's seeded stream.
            for i in (1..perm.len()).rev() {
                let j = rng.random_range(0..=i);
                perm.swap(i, j);
            }
        }
        let ext = Extended::new(job, region, rng).map(Box::new);
        OffsetGen {
            pattern: job.pattern,
            order: job.order,
            region_start: job.region_offset_bytes,
            slots: slots.max(1),
            step,
            perm,
            next: 0,
            ext,
        }
    }

    /// The next call's byte offset within the file and its size, drawn
    /// from `sizes`.
    pub fn next_io(&mut self, rng: &mut SimRng, sizes: &BlockSizes) -> (u64, u64) {
        let Some(mut x) = self.ext.take() else {
            return (self.next_offset(rng), sizes.min());
        };
        let (off, len) = x.next(self, rng, sizes);
        self.ext = Some(x);
        (self.region_start + off, len)
    }

    /// A generator that is never asked for offsets (scripted threads).
    pub fn placeholder(_rng: &mut SimRng) -> OffsetGen {
        OffsetGen {
            pattern: Pattern::Sequential,
            order: Order::Ascending,
            region_start: 0,
            slots: 1,
            step: 0,
            perm: Vec::new(),
            next: 0,
            ext: None,
        }
    }

    /// Calls in one pass over the offsets (sequential and strided), or the
    /// number of distinct aligned positions (random).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The next call's byte offset within the file.
    pub fn next_offset(&mut self, rng: &mut SimRng) -> u64 {
        let i = self.next;
        self.next += 1;
        let slot = match self.pattern {
            Pattern::Random => rng.random_range(0..self.slots),
            _ => {
                let k = i % self.slots;
                match self.order {
                    Order::Ascending => k,
                    Order::Descending => self.slots - 1 - k,
                    Order::Shuffled => self.perm[k as usize] as u64,
                }
            }
        };
        self.region_start + slot * self.step
    }
}

impl Extended {
    /// The extension `job` needs over a region of `region` bytes, if any.
    fn new(job: &JobSpec, region: u64, rng: &mut SimRng) -> Option<Extended> {
        let sizes = [job.block_sizes(true), job.block_sizes(false)];
        let variable = sizes.iter().any(|s| !s.is_fixed()) || sizes[0] != sizes[1];
        let random = job.random_offsets();
        let skewed = job.distribution.is_skewed();
        if !variable && !skewed && job.random_percent.is_none_or(|p| p == 100) {
            return None;
        }
        let min = sizes[0].min().min(sizes[1].min());
        let align = job.align_bytes.unwrap_or(min).max(1);
        let positions = (region.saturating_sub(min)) / align + 1;
        let sampler = if random {
            Sampler::new(&job.distribution, positions, align, rng)
        } else {
            None
        };
        let map = (random && sampler.is_none() && variable && job.pattern != Pattern::Random)
            .then(|| RandomMap::new(region / align));
        Some(Extended {
            region,
            align,
            sampler,
            map,
            random_percent: job.random_percent.unwrap_or(100),
            random,
            cursor: 0,
        })
    }

    /// The next call's offset within the region and its size.
    fn next(&mut self, base: &mut OffsetGen, rng: &mut SimRng, sizes: &BlockSizes) -> (u64, u64) {
        let sequential = !self.random
            || (self.random_percent < 100 && rng.random_range(1..=100u32) > self.random_percent);
        let mut off = if sequential && self.cursor + sizes.min() <= self.region {
            self.cursor
        } else if sequential && !self.random {
            0
        } else {
            self.random_offset(base, rng, sizes)
        };
        let len = match sizes.pick(self.region - off, rng) {
            Some(l) => l,
            None => {
                off = 0;
                sizes.min()
            }
        };
        let len = match &mut self.map {
            Some(m) if !sequential => {
                let b = off / self.align;
                len.min(m.mark(b, len.div_ceil(self.align)).max(1) * self.align)
            }
            _ => len,
        };
        self.cursor = off + len;
        (off, len)
    }

    /// A random offset within the region (aligned), where at least the
    /// smallest size fits.
    fn random_offset(&mut self, base: &mut OffsetGen, rng: &mut SimRng, sizes: &BlockSizes) -> u64 {
        let positions = self.region.saturating_sub(sizes.min()) / self.align + 1;
        if let Some(s) = &self.sampler {
            return s.next(rng).min(positions - 1) * self.align;
        }
        if let Some(m) = &mut self.map {
            let b = rng.random_range(0..positions);
            let b = m.free_from(b);
            return (b * self.align).min((positions - 1) * self.align);
        }
        if base.pattern == Pattern::Random {
            return rng.random_range(0..positions) * self.align;
        }
        base.next_offset(rng) - base.region_start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::component_rng;

    fn job(pattern: Pattern, order: Order) -> JobSpec {
        toml::from_str::<JobSpec>(&format!(
            "name='j'\nfile='f'\nop='read'\npattern='{}'\norder='{}'\nrequest_bytes=1\nstride_bytes=1048576\nrequests=4",
            match pattern {
                Pattern::Sequential => "sequential",
                Pattern::Random => "random",
                Pattern::Strided => "strided",
            },
            match order {
                Order::Ascending => "ascending",
                Order::Descending => "descending",
                Order::Shuffled => "shuffled",
            }
        ))
        .unwrap()
    }

    #[test]
    fn strided_orders_visit_every_mib_once() {
        let mut rng = component_rng(1, "t");
        let mut asc = OffsetGen::new(&job(Pattern::Strided, Order::Ascending), 4 << 20, &mut rng);
        let a: Vec<u64> = (0..4).map(|_| asc.next_offset(&mut rng)).collect();
        assert_eq!(a, vec![0, 1 << 20, 2 << 20, 3 << 20]);
        let mut sh = OffsetGen::new(&job(Pattern::Strided, Order::Shuffled), 4 << 20, &mut rng);
        let mut s: Vec<u64> = (0..4).map(|_| sh.next_offset(&mut rng)).collect();
        assert_ne!(
            s, a,
            "a shuffle of 4 is unlikely to be the identity with this seed"
        );
        s.sort();
        assert_eq!(s, a);
        let mut de = OffsetGen::new(&job(Pattern::Strided, Order::Descending), 4 << 20, &mut rng);
        assert_eq!(de.next_offset(&mut rng), 3 << 20);
    }

    #[test]
    fn random_offsets_stay_in_region_and_aligned() {
        let mut j = job(Pattern::Random, Order::Ascending);
        j.request_bytes = 4096;
        j.region_bytes = Some(128 << 20);
        let mut rng = component_rng(2, "t");
        let mut g = OffsetGen::new(&j, 1 << 30, &mut rng);
        for _ in 0..1000 {
            let o = g.next_offset(&mut rng);
            assert!(o + 4096 <= 128 << 20 && o % 4096 == 0);
        }
    }
}
