//! Offset generators for synthetic jobs: sequential, random and strided
//! access, visited in ascending, descending or shuffled order.

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
        OffsetGen {
            pattern: job.pattern,
            order: job.order,
            region_start: job.region_offset_bytes,
            slots: slots.max(1),
            step,
            perm,
            next: 0,
        }
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
