//! Rate limiting of a job thread (fio's `rate` and `rate_iops`, with its
//! default `rate_process=linear`): the next I/O of a direction may be
//! issued no earlier than the time at which the bytes (or I/Os) already
//! issued in that direction would have taken at the rate, counted from
//! the thread's start. A thread ahead of its rate sleeps until then; a
//! thread behind it (after a think time or a slow I/O) issues at once and
//! so catches up, as fio does unless `rate_ignore_thinktime` is set. A
//! mixed job ahead of its rate in the drawn direction takes the other
//! direction if that one is behind, else sleeps until the sooner of the
//! two. [src: fio `backend.c` usec_for_io, `io_u.c` rate_ddir]

use crate::types::Ns;

/// Nanoseconds per second.
const NS_PER_S: u128 = 1_000_000_000;

/// The rate limits of one thread and what it has issued.
#[derive(Clone, Debug, Default)]
pub struct RateLimit {
    /// Bytes per second per direction (read, write); `rate` wins over
    /// `rate_iops` where both are set, as in fio.
    bytes_per_s: [Option<u64>; 2],
    /// I/Os per second per direction (read, write).
    iops: [Option<u64>; 2],
    /// Bytes issued per direction.
    bytes: [u64; 2],
    /// I/Os issued per direction.
    ios: [u64; 2],
    /// When the thread started, ns.
    start: Ns,
}

/// A direction's index: 0 read, 1 write.
pub fn dir(read: bool) -> usize {
    usize::from(!read)
}

impl RateLimit {
    /// Limits of `bytes_per_s` and `iops` (read, write) from `start` ns;
    /// `None` when no direction is limited.
    pub fn new(bytes_per_s: [Option<u64>; 2], iops: [Option<u64>; 2], start: Ns) -> Option<Self> {
        let limited = bytes_per_s
            .iter()
            .chain(&iops)
            .any(|r| r.is_some_and(|r| r > 0));
        limited.then_some(RateLimit {
            bytes_per_s,
            iops,
            bytes: [0; 2],
            ios: [0; 2],
            start,
        })
    }

    /// The earliest time the next I/O of direction `d` may be issued, ns.
    pub fn due(&self, d: usize) -> Ns {
        let after = match (self.bytes_per_s[d], self.iops[d]) {
            (Some(bps), _) if bps > 0 => u128::from(self.bytes[d]) * NS_PER_S / u128::from(bps),
            (_, Some(iops)) if iops > 0 => u128::from(self.ios[d]) * NS_PER_S / u128::from(iops),
            _ => 0,
        };
        self.start
            .saturating_add(after.min(u128::from(Ns::MAX)) as Ns)
    }

    /// The direction to issue at `now` and when: `d` if it is due, else
    /// the other direction if `other` is allowed (a mixed job) and due,
    /// else whichever is due sooner (fio's `rate_ddir`).
    pub fn choose(&self, now: Ns, d: usize, other: bool) -> (usize, Ns) {
        let mine = self.due(d);
        if mine <= now || !other {
            return (d, mine.max(now));
        }
        let o = 1 - d;
        let theirs = self.due(o);
        if theirs <= now {
            (o, now)
        } else if mine <= theirs {
            (d, mine)
        } else {
            (o, theirs)
        }
    }

    /// Notes an I/O of `bytes` issued in direction `d`.
    pub fn issued(&mut self, d: usize, bytes: u64) {
        self.bytes[d] += bytes;
        self.ios[d] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iops_space_ios_evenly_from_the_start() {
        let mut r = RateLimit::new([None, None], [Some(100), None], 1_000).unwrap();
        assert_eq!(r.due(0), 1_000);
        r.issued(0, 4096);
        assert_eq!(r.due(0), 1_000 + 10_000_000);
        assert_eq!(r.due(1), 1_000, "writes are not limited");
    }

    #[test]
    fn bytes_win_over_iops_and_a_mix_switches_to_the_due_direction() {
        let mut r = RateLimit::new([Some(1 << 20), Some(1 << 20)], [Some(1), None], 0).unwrap();
        r.issued(0, 1 << 20);
        assert_eq!(r.due(0), 1_000_000_000);
        assert_eq!(r.choose(5, 0, true), (1, 5));
        assert_eq!(r.choose(5, 0, false), (0, 1_000_000_000));
        assert!(RateLimit::new([None, Some(0)], [None, None], 0).is_none());
    }
}
