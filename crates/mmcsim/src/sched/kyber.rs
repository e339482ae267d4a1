//! kyber: token-based latency control for blk-mq (reference
//! io-schedulers.md §11; mainline `kyber-iosched.c`).
//!
//! * Four scheduling domains by operation: READ, WRITE, DISCARD, OTHER
//!   (flushes bypass the scheduler, so OTHER is normally empty). Each keeps
//!   a FIFO and a token pool whose depth starts at its maximum, 256 / 128 /
//!   64 / 16; a request needs a token to be dispatched and holds it until
//!   it completes.
//! * Dispatch is round-robin over the domains, up to 16 / 8 / 1 / 1
//!   requests in a row (`kyber_batch_size`); a domain with no request or no
//!   free token passes the turn on.
//! * Async requests may hold at most 75 % of the scheduler tags
//!   (`KYBER_ASYNC_PERCENT` of `nr_requests` = 96), through `may_queue`.
//! * Latency: on each completion a total-latency sample (arrival →
//!   completion) and an I/O-latency sample (dispatch to the driver →
//!   completion) go into the domain's histograms of 8 buckets of ¼ of its
//!   target (`read_lat_nsec` 2 ms, `write_lat_nsec` 10 ms, discard 5 s,
//!   other 0 = unused), and the timer is pulled in to at most `HZ/10`
//!   ahead. When it fires, a domain's percentile is computed once it has
//!   500 samples or 1 s has passed since its first sample (else it keeps
//!   accumulating). If any of READ / WRITE / DISCARD has its p90 I/O latency
//!   in a bucket ≥ 4 (over target), every domain with a p99 total latency
//!   (fresh, or remembered from an earlier window) is resized to
//!   depth·(bucket + 1)/4; otherwise only domains whose own p99 bucket is
//!   ≥ 4 are (so they grow). Depth stays in [1, max].

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{Ns, Op, NS_PER_S};
use mmcsim_elevator::{
    Bio, Elevator, FifoList, MayQueue, RqId, SchedCtx, SchedParams, TunableError, TunableInfo,
    TunableValue,
};

/// Domains.
pub const READ: usize = 0;
/// Write domain.
pub const WRITE: usize = 1;
/// Discard domain.
pub const DISCARD: usize = 2;
/// Everything else.
pub const OTHER: usize = 3;
/// `kyber_depth`: maximum (and initial) tokens per domain.
pub const MAX_DEPTH: [u32; 4] = [256, 128, 64, 16];
/// `kyber_batch_size`: requests in a row per domain.
pub const BATCH: [u32; 4] = [16, 8, 1, 1];
/// `KYBER_ASYNC_PERCENT`.
pub const ASYNC_PERCENT: u64 = 75;
/// `KYBER_LATENCY_BUCKETS`.
pub const BUCKETS: usize = 8;
/// `KYBER_GOOD_BUCKETS`: buckets at or below the target.
pub const GOOD_BUCKETS: usize = 4;
/// Samples that trigger a percentile computation.
pub const MIN_SAMPLES: u64 = 500;
const TOTAL: usize = 0;
const IO: usize = 1;

fn domain_of(op: Op) -> usize {
    match op {
        Op::Read => READ,
        Op::Write => WRITE,
        Op::Discard => DISCARD,
        _ => OTHER,
    }
}

/// The kyber scheduler.
#[derive(Clone, Debug)]
pub struct Kyber {
    params: SchedParams,
    /// Latency targets, ns (`read_lat_nsec`, `write_lat_nsec`, discard 5 s,
    /// other 0).
    target: [u64; 4],
    fifo: [FifoList; 4],
    depth: [u32; 4],
    inflight: [u32; 4],
    cur_domain: usize,
    batching: u32,
    /// `[domain][TOTAL | IO][bucket]`.
    hist: [[[u64; BUCKETS]; 2]; 4],
    /// `latency_timeout[domain]`: jiffies, 0 = unset.
    latency_timeout: [u64; 4],
    domain_p99: [i32; 4],
    /// Scheduler tags for the async limit (`nr_requests`).
    sched_tags: u64,
    async_held: u64,
    /// Depth changes, for tests and traces: `(time, domain, new depth)`.
    pub resizes: Vec<(Ns, usize, u32)>,
}

impl Kyber {
    /// A new kyber with the mainline defaults.
    pub fn new(params: &SchedParams) -> Self {
        Kyber {
            params: *params,
            target: [2_000_000, 10_000_000, 5 * NS_PER_S, 0],
            fifo: std::array::from_fn(|_| FifoList::with_capacity(64)),
            depth: MAX_DEPTH,
            inflight: [0; 4],
            cur_domain: READ,
            batching: 0,
            hist: [[[0; BUCKETS]; 2]; 4],
            latency_timeout: [0; 4],
            domain_p99: [-1; 4],
            sched_tags: 128,
            async_held: 0,
            resizes: Vec::new(),
        }
    }

    /// Current token depth of each domain.
    pub fn depths(&self) -> [u32; 4] {
        self.depth
    }

    /// Async requests allowed (75 % of the scheduler tags).
    pub fn async_depth(&self) -> u64 {
        (self.sched_tags * ASYNC_PERCENT / 100).max(1)
    }

    fn jiffy_start_ns(&self, j: u64) -> Ns {
        ((j as u128 * NS_PER_S as u128).div_ceil(self.params.hz as u128)) as Ns
    }

    fn add_sample(&mut self, d: usize, kind: usize, latency: Ns) {
        let target = self.target[d];
        if target == 0 {
            return;
        }
        let div = (target >> 2).max(1);
        let b = if latency == 0 {
            0
        } else {
            (((latency - 1) / div) as usize).min(BUCKETS - 1)
        };
        self.hist[d][kind][b] += 1;
    }

    /// `calculate_percentile`: the bucket holding percentile `pct` of the
    /// domain's histogram, or −1 when there are too few samples yet; a
    /// computed histogram is cleared.
    fn percentile(&mut self, now: Ns, d: usize, kind: usize, pct: u64) -> i32 {
        let samples: u64 = self.hist[d][kind].iter().sum();
        if samples == 0 {
            return -1;
        }
        let j = self.params.jiffies(now);
        if self.latency_timeout[d] == 0 {
            self.latency_timeout[d] = (j + self.params.hz as u64).max(1);
        }
        if samples < MIN_SAMPLES && j < self.latency_timeout[d] {
            return -1;
        }
        self.latency_timeout[d] = 0;
        let mut left = (samples * pct).div_ceil(100);
        let mut bucket = 0;
        while bucket < BUCKETS - 1 {
            if self.hist[d][kind][bucket] >= left {
                break;
            }
            left -= self.hist[d][kind][bucket];
            bucket += 1;
        }
        self.hist[d][kind] = [0; BUCKETS];
        bucket as i32
    }

    /// `kyber_timer_fn`.
    fn timer_fn(&mut self, now: Ns) {
        let mut bad = false;
        for d in [READ, WRITE, DISCARD] {
            if self.percentile(now, d, IO, 90) >= GOOD_BUCKETS as i32 {
                bad = true;
            }
        }
        for d in [READ, WRITE, DISCARD] {
            let mut p99 = self.percentile(now, d, TOTAL, 99);
            if bad {
                if p99 < 0 {
                    p99 = self.domain_p99[d];
                }
                self.domain_p99[d] = -1;
            } else if p99 >= 0 {
                self.domain_p99[d] = p99;
            }
            if p99 < 0 {
                continue;
            }
            if bad || p99 >= GOOD_BUCKETS as i32 {
                let depth = (self.depth[d] as u64 * (p99 as u64 + 1)) >> 2;
                let depth = depth.clamp(1, MAX_DEPTH[d] as u64) as u32;
                if depth != self.depth[d] {
                    self.depth[d] = depth;
                    self.resizes.push((now, d, depth));
                }
            }
        }
    }

    /// `kyber_dispatch_cur_domain`: the head of the current domain if it
    /// has a request and a free token.
    fn dispatch_cur(&mut self) -> Option<RqId> {
        let d = self.cur_domain;
        let rq = self.fifo[d].front()?;
        if self.inflight[d] >= self.depth[d] {
            return None;
        }
        self.fifo[d].pop_front();
        self.inflight[d] += 1;
        self.batching += 1;
        Some(rq)
    }
}

impl Elevator for Kyber {
    fn name(&self) -> &str {
        "kyber"
    }

    fn blk_mq(&self) -> bool {
        true
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let r = ctx.rq(rq);
        if !r.sync {
            self.async_held += 1;
        }
        // elv_priv[1] = 1 + domain once dispatched (holds a token).
        let d = domain_of(r.op);
        ctx.set_elv_priv(rq, 0, 0);
        ctx.set_elv_priv(rq, 1, 0);
        self.fifo[d].push_back(rq);
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, _rq: RqId, next: RqId) {
        if !ctx.rq(next).sync {
            self.async_held = self.async_held.saturating_sub(1);
        }
        self.fifo[domain_of(ctx.rq(next).op)].remove(next);
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        let mut got = None;
        if self.batching < BATCH[self.cur_domain] {
            got = self.dispatch_cur();
        }
        if got.is_none() {
            for _ in 0..4 {
                self.cur_domain = (self.cur_domain + 1) % 4;
                self.batching = 0;
                got = self.dispatch_cur();
                if got.is_some() {
                    break;
                }
            }
        }
        let rq = got?;
        let d = domain_of(ctx.rq(rq).op);
        ctx.set_elv_priv(rq, 1, 1 + d as u64);
        Some(rq)
    }

    fn activate(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        // io_start_time_ns: the request enters the driver.
        ctx.set_elv_priv(rq, 0, ctx.now);
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let r = ctx.rq(rq);
        let (start, io_start, tok) = (r.start_ns, r.elv_priv[0], r.elv_priv[1]);
        if !r.sync {
            self.async_held = self.async_held.saturating_sub(1);
        }
        if tok == 0 {
            return;
        }
        let d = (tok - 1) as usize;
        self.inflight[d] = self.inflight[d].saturating_sub(1);
        let now = ctx.now;
        self.add_sample(d, TOTAL, now.saturating_sub(start));
        self.add_sample(d, IO, now.saturating_sub(io_start));
        // timer_reduce(jiffies + HZ/10).
        let at =
            self.jiffy_start_ns(self.params.jiffies(now) + (self.params.hz as u64 / 10).max(1));
        match ctx.timer() {
            Some(t) if t <= at => {}
            _ => ctx.set_timer(at),
        }
    }

    fn on_timer(&mut self, ctx: &mut SchedCtx) {
        self.timer_fn(ctx.now);
    }

    fn may_queue(&self, _ctx: &SchedCtx, bio: &Bio) -> MayQueue {
        if !bio.sync && bio.op != Op::Read && self.async_held >= self.async_depth() {
            MayQueue::No
        } else {
            MayQueue::May
        }
    }

    fn has_work(&self) -> bool {
        self.fifo.iter().any(|f| !f.is_empty())
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        vec![
            TunableInfo {
                name: "read_lat_nsec",
                value: self.target[READ].to_string(),
                default: "2000000".into(),
                unit: "ns",
                help: "target p90 latency of reads",
            },
            TunableInfo {
                name: "write_lat_nsec",
                value: self.target[WRITE].to_string(),
                default: "10000000".into(),
                unit: "ns",
                help: "target p90 latency of writes",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        match name {
            "read_lat_nsec" => self.target[READ] = v.u64(1, INT_MAX * 1000)?,
            "write_lat_nsec" => self.target[WRITE] = v.u64(1, INT_MAX * 1000)?,
            _ => return Err(TunableError::unknown("kyber", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, layer, swrite, BlockLayer};
    use mmcsim_elevator::types::NS_PER_MS;

    fn mk() -> BlockLayer {
        layer(1000, |p| Box::new(Kyber::new(p)))
    }

    fn kyber(b: &BlockLayer) -> &Kyber {
        // The block layer owns the scheduler as a trait object; `Any` is a
        // supertrait of `Elevator`, so the tests downcast it safely.
        let e: &dyn std::any::Any = b.elevator();
        e.downcast_ref::<Kyber>().expect("the scheduler is kyber")
    }

    fn kyber_mut(b: &mut BlockLayer) -> &mut Kyber {
        let e: &mut dyn std::any::Any = b.elevator_mut();
        e.downcast_mut::<Kyber>().expect("the scheduler is kyber")
    }

    #[test]
    fn a_domain_dispatches_no_more_than_its_tokens() {
        let mut b = mk();
        kyber_mut(&mut b).depth[READ] = 3;
        for i in 0..6u64 {
            b.submit_bio(0, bio(Op::Read, i * 100, 1), false);
        }
        let mut taken = Vec::new();
        while let Some(rq) = b.fetch(0) {
            b.activate(0, rq);
            taken.push(rq);
        }
        assert_eq!(taken.len(), 3, "three read tokens");
        let mut done = Vec::new();
        b.complete(NS_PER_MS, taken[1], &mut done);
        assert!(
            b.fetch(NS_PER_MS).is_some(),
            "a freed token admits one more"
        );
        assert!(b.fetch(NS_PER_MS).is_none());
    }

    #[test]
    fn round_robin_reads_16_then_writes_8() {
        let mut b = mk();
        for i in 0..20u64 {
            b.submit_bio(0, bio(Op::Read, 1_000_000 + i * 100, 1), false);
            b.submit_bio(0, swrite(i * 100, 2), false);
        }
        let mut dirs = Vec::new();
        while let Some(rq) = b.fetch(0) {
            dirs.push(b.request(rq).dir());
            b.activate(0, rq);
        }
        assert!(dirs[..16].iter().all(|&d| d == 0));
        assert!(dirs[16..24].iter().all(|&d| d == 1));
        assert!(dirs[24..28].iter().all(|&d| d == 0));
    }

    #[test]
    fn async_requests_hold_at_most_75_percent_of_tags() {
        let mut b = mk();
        for i in 0..100u64 {
            b.submit_bio(0, bio(Op::Write, i * 100, 9), false);
        }
        assert_eq!(b.allocated(false), 96);
        assert_eq!(kyber(&b).async_depth(), 96);
    }

    /// Feeds `n` completed requests of `op` with total and I/O latency `lat`.
    fn feed(b: &mut BlockLayer, t: &mut Ns, op: Op, n: u32, lat: Ns) {
        feed_q(b, t, op, n, 0, lat);
    }

    /// Feeds `n` requests of `op` that wait `queue` in the scheduler, then
    /// take `io` in the driver.
    fn feed_q(b: &mut BlockLayer, t: &mut Ns, op: Op, n: u32, queue: Ns, io: Ns) {
        for i in 0..n {
            let x = if op == Op::Read {
                bio(Op::Read, (i as u64) * 100, 1)
            } else {
                swrite((i as u64) * 100, 2)
            };
            b.submit_bio(*t, x, false);
            let rq = b.fetch(*t + queue).unwrap();
            b.activate(*t + queue, rq);
            let mut done = Vec::new();
            b.complete(*t + queue + io, rq, &mut done);
        }
        *t += queue + io;
    }

    #[test]
    fn read_latency_over_target_shrinks_other_domains_and_they_grow_back() {
        let mut b = mk();
        let mut t = 0;
        // Reads at 3 ms (over the 2 ms target: bucket 5); writes at 1 ms
        // (bucket 0 of the 10 ms target).
        feed(&mut b, &mut t, Op::Read, 500, 3 * NS_PER_MS);
        feed(&mut b, &mut t, Op::Write, 500, NS_PER_MS);
        let at = b.timer().expect("timer armed by completions");
        assert!(at <= t + 100 * NS_PER_MS);
        b.on_timer(at);
        let k = kyber(&b);
        assert_eq!(k.depths()[WRITE], 128 / 4, "write depth × (0 + 1)/4");
        assert_eq!(
            k.depths()[READ],
            256,
            "read p99 bucket 5: × 6/4, capped at max"
        );
        // Device latency fine now; writes wait 25 ms in the queue (total
        // p99 in bucket 7): only writes are resized, and grow × 8/4.
        t = at;
        feed(&mut b, &mut t, Op::Read, 500, NS_PER_MS / 2);
        feed_q(&mut b, &mut t, Op::Write, 500, 25 * NS_PER_MS, NS_PER_MS);
        let at = b.timer().unwrap();
        b.on_timer(at);
        assert_eq!(kyber(&b).depths()[WRITE], 64);
        assert_eq!(kyber(&b).depths()[READ], 256, "good read p99: unchanged");
    }

    #[test]
    fn percentile_waits_for_500_samples_or_one_second() {
        let mut b = mk();
        let mut t = 0;
        feed(&mut b, &mut t, Op::Write, 10, NS_PER_MS);
        feed(&mut b, &mut t, Op::Read, 10, 3 * NS_PER_MS);
        let at = b.timer().unwrap();
        b.on_timer(at);
        assert_eq!(kyber(&b).depths(), MAX_DEPTH, "too few samples yet");
        assert_eq!(kyber(&b).hist[READ][IO].iter().sum::<u64>(), 10, "kept");
        b.on_timer(at + 1100 * NS_PER_MS);
        assert_eq!(
            kyber(&b).hist[READ][IO].iter().sum::<u64>(),
            0,
            "1 s passed: computed (and cleared)"
        );
        assert!(Kyber::new(&Default::default()).resizes.is_empty());
    }
}
