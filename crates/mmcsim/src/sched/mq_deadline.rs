//! mq-deadline: deadline for blk-mq, per I/O priority class (Linux 5.14+;
//! reference io-schedulers.md §11 and §3).
//!
//! Each class RT / BE / IDLE has its own §3 state (a sector tree and a FIFO
//! per direction, `next_rq`); `batching`, `starved` and `last_dir` are
//! shared, as in the kernel's `deadline_data`. Dispatch, asked whenever a
//! hardware tag is free:
//! 1. Priority aging: for BE then IDLE, run §3's choice in that class; the
//!    chosen request goes out only if it arrived more than
//!    `prio_aging_expire` ago.
//! 2. Otherwise classes are strict: RT, then BE, then IDLE; a class with
//!    requests queued *or in flight* (`dd_queued`: inserted − completed)
//!    stops the search even if it dispatched nothing.
//! 3. Within a class, §3: continue the batch (`next_rq[last_dir]` while
//!    `batching < fifo_batch`), else pick a direction (reads preferred,
//!    writes after `writes_starved` read choices), take the FIFO head if
//!    expired or no sweep position, reset `batching`.
//!
//! `async_depth` limits the requests async I/O may hold (allocation to
//! completion) through `may_queue`; default `nr_requests` (128, the queue
//! default: the scheduler is not told the queue's actual value).
//! Expiries are in jiffies at the queue's `hz`, shown in ms.

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{IoClass, Ns, NS_PER_S};
use mmcsim_elevator::{
    Bio, Elevator, FifoList, MayQueue, MergeKind, RqId, SchedCtx, SchedParams, SectorTree,
    TunableError, TunableInfo, TunableValue,
};

const READ: usize = 0;
const WRITE: usize = 1;
/// `BLKDEV_MAX_RQ`: default `nr_requests`, the default `async_depth`.
pub const DEFAULT_NR_REQUESTS: u64 = 128;

/// Tunables of mq-deadline (jiffies for times).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MqDeadlineTunables {
    /// `read_expire`, jiffies (HZ/2 = 500 ms).
    pub read_expire: u64,
    /// `write_expire`, jiffies (5·HZ = 5000 ms).
    pub write_expire: u64,
    /// `writes_starved` (2).
    pub writes_starved: u32,
    /// `front_merges` (1).
    pub front_merges: bool,
    /// `fifo_batch` (16).
    pub fifo_batch: u32,
    /// `async_depth`, requests (nr_requests = 128).
    pub async_depth: u64,
    /// `prio_aging_expire`, jiffies (10·HZ = 10 s).
    pub prio_aging_expire: u64,
}

impl MqDeadlineTunables {
    /// Kernel defaults at `hz`.
    pub fn defaults(hz: u32) -> Self {
        let hz = hz as u64;
        MqDeadlineTunables {
            read_expire: hz / 2,
            write_expire: 5 * hz,
            writes_starved: 2,
            front_merges: true,
            fifo_batch: 16,
            async_depth: DEFAULT_NR_REQUESTS,
            prio_aging_expire: 10 * hz,
        }
    }
}

/// Per-class state (`dd_per_prio`).
#[derive(Clone, Debug)]
struct PerPrio {
    sort_list: [SectorTree; 2],
    fifo_list: [FifoList; 2],
    next_rq: [Option<RqId>; 2],
    /// Inserted − completed (`dd_queued`).
    queued: u32,
}

impl PerPrio {
    fn new() -> Self {
        PerPrio {
            sort_list: [SectorTree::with_capacity(64), SectorTree::with_capacity(64)],
            fifo_list: [FifoList::with_capacity(64), FifoList::with_capacity(64)],
            next_rq: [None; 2],
            queued: 0,
        }
    }
    fn has_requests(&self) -> bool {
        !self.fifo_list[READ].is_empty() || !self.fifo_list[WRITE].is_empty()
    }
}

fn prio_index(c: IoClass) -> usize {
    match c {
        IoClass::Rt => 0,
        IoClass::Be => 1,
        IoClass::Idle => 2,
    }
}

/// The mq-deadline scheduler.
#[derive(Clone, Debug)]
pub struct MqDeadline {
    params: SchedParams,
    tun: MqDeadlineTunables,
    per_prio: [PerPrio; 3],
    batching: u32,
    starved: u32,
    last_dir: usize,
    /// Async requests held (added, not completed).
    async_held: u64,
}

impl MqDeadline {
    /// A new mq-deadline with the defaults at `params.hz`.
    pub fn new(params: &SchedParams) -> Self {
        MqDeadline {
            params: *params,
            tun: MqDeadlineTunables::defaults(params.hz),
            per_prio: [PerPrio::new(), PerPrio::new(), PerPrio::new()],
            batching: 0,
            starved: 0,
            last_dir: READ,
            async_held: 0,
        }
    }

    fn jiffy_start_ns(&self, j: u64) -> Ns {
        ((j as u128 * NS_PER_S as u128).div_ceil(self.params.hz as u128)) as Ns
    }

    fn prio_of(ctx: &SchedCtx, rq: RqId) -> usize {
        prio_index(ctx.rq(rq).ioprio.class)
    }

    fn remove_request(&mut self, p: usize, rq: RqId, dir: usize) {
        let pp = &mut self.per_prio[p];
        pp.fifo_list[dir].remove(rq);
        if pp.next_rq[dir] == Some(rq) {
            pp.next_rq[dir] = pp.sort_list[dir].successor(rq);
        }
        pp.sort_list[dir].remove(rq);
    }

    fn fifo_expired(&self, ctx: &SchedCtx, p: usize, dir: usize) -> bool {
        match self.per_prio[p].fifo_list[dir].front() {
            Some(rq) => self.params.jiffies(ctx.now) >= self.params.jiffies(ctx.rq(rq).fifo_time),
            None => false,
        }
    }

    /// `__dd_dispatch_request`: §3 in class `p`; the request goes out only
    /// if it arrived at or before `latest_start` (ns).
    fn dispatch_in(&mut self, ctx: &mut SchedCtx, p: usize, latest_start: Ns) -> Option<RqId> {
        let pp = &self.per_prio[p];
        let cont = pp.next_rq[self.last_dir];
        let rq = match cont {
            Some(rq) if self.batching < self.tun.fifo_batch => rq,
            _ => {
                let reads = !pp.fifo_list[READ].is_empty();
                let writes = !pp.fifo_list[WRITE].is_empty();
                let dir = super::deadline::choose_direction(
                    reads,
                    writes,
                    &mut self.starved,
                    self.tun.writes_starved,
                )?;
                let pp = &self.per_prio[p];
                let rq = match pp.next_rq[dir] {
                    Some(next) if !self.fifo_expired(ctx, p, dir) => next,
                    _ => pp.fifo_list[dir].front().expect("non-empty fifo"),
                };
                self.last_dir = dir;
                self.batching = 0;
                rq
            }
        };
        if ctx.rq(rq).start_ns > latest_start {
            return None;
        }
        let dir = ctx.rq(rq).dir();
        self.batching += 1;
        let pp = &mut self.per_prio[p];
        pp.next_rq = [None; 2];
        pp.next_rq[dir] = pp.sort_list[dir].successor(rq);
        self.remove_request(p, rq, dir);
        Some(rq)
    }

    fn fmt_ms(&self, j: u64) -> String {
        self.params.jiffies_to_ms(j).to_string()
    }
}

impl Elevator for MqDeadline {
    fn name(&self) -> &str {
        "mq-deadline"
    }

    fn blk_mq(&self) -> bool {
        true
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let p = Self::prio_of(ctx, rq);
        let dir = ctx.rq(rq).dir();
        let sector = ctx.rq(rq).sector;
        if !ctx.rq(rq).sync {
            self.async_held += 1;
        }
        let expire = if dir == READ {
            self.tun.read_expire
        } else {
            self.tun.write_expire
        };
        let deadline = self.params.jiffies(ctx.now) + expire;
        ctx.set_fifo_time(rq, self.jiffy_start_ns(deadline));
        let pp = &mut self.per_prio[p];
        pp.sort_list[dir].insert(sector, rq);
        pp.fifo_list[dir].push_back(rq);
        pp.queued += 1;
    }

    fn merge_lookup(&mut self, _ctx: &mut SchedCtx, bio: &Bio) -> Option<RqId> {
        if !self.tun.front_merges {
            return None;
        }
        self.per_prio[prio_index(bio.ioprio.class)].sort_list[bio.op.dir()].find(bio.end())
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            let p = Self::prio_of(ctx, rq);
            let dir = ctx.rq(rq).dir();
            let sector = ctx.rq(rq).sector;
            self.per_prio[p].sort_list[dir].reposition(rq, sector);
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let (p, dir) = (Self::prio_of(ctx, next), ctx.rq(next).dir());
        let (rp, rdir) = (Self::prio_of(ctx, rq), ctx.rq(rq).dir());
        if p == rp
            && self.per_prio[rp].fifo_list[rdir].contains(rq)
            && self.per_prio[p].fifo_list[dir].contains(next)
            && self.params.jiffies(ctx.rq(next).fifo_time)
                < self.params.jiffies(ctx.rq(rq).fifo_time)
        {
            self.per_prio[rp].fifo_list[rdir].remove(rq);
            self.per_prio[p].fifo_list[dir].insert_after(next, rq);
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        if !ctx.rq(next).sync {
            self.async_held = self.async_held.saturating_sub(1);
        }
        self.per_prio[p].queued = self.per_prio[p].queued.saturating_sub(1);
        self.remove_request(p, next, dir);
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.per_prio[Self::prio_of(ctx, rq)].sort_list[ctx.rq(rq).dir()].predecessor(rq)
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.per_prio[Self::prio_of(ctx, rq)].sort_list[ctx.rq(rq).dir()].successor(rq)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        // 1. Aged lower-class requests first.
        if self.tun.prio_aging_expire > 0 {
            let age = self.params.jiffies_to_ns(self.tun.prio_aging_expire);
            if let Some(latest) = ctx.now.checked_sub(age) {
                for p in 1..3 {
                    if self.per_prio[p].has_requests() {
                        if let Some(rq) = self.dispatch_in(ctx, p, latest) {
                            return Some(rq);
                        }
                    }
                }
            }
        }
        // 2. Strict classes.
        for p in 0..3 {
            if let Some(rq) = self.dispatch_in(ctx, p, ctx.now) {
                return Some(rq);
            }
            if self.per_prio[p].queued > 0 {
                break;
            }
        }
        None
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let p = Self::prio_of(ctx, rq);
        self.per_prio[p].queued = self.per_prio[p].queued.saturating_sub(1);
        if !ctx.rq(rq).sync {
            self.async_held = self.async_held.saturating_sub(1);
        }
    }

    fn may_queue(&self, _ctx: &SchedCtx, bio: &Bio) -> MayQueue {
        if !bio.sync && self.async_held >= self.tun.async_depth {
            MayQueue::No
        } else {
            MayQueue::May
        }
    }

    fn has_work(&self) -> bool {
        self.per_prio.iter().any(|p| p.has_requests())
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = MqDeadlineTunables::defaults(self.params.hz);
        let t = &self.tun;
        vec![
            TunableInfo {
                name: "read_expire",
                value: self.fmt_ms(t.read_expire),
                default: self.fmt_ms(d.read_expire),
                unit: "ms",
                help: "deadline of a read, from its arrival (HZ/2)",
            },
            TunableInfo {
                name: "write_expire",
                value: self.fmt_ms(t.write_expire),
                default: self.fmt_ms(d.write_expire),
                unit: "ms",
                help: "deadline of a write, from its arrival (5*HZ)",
            },
            TunableInfo {
                name: "writes_starved",
                value: t.writes_starved.to_string(),
                default: d.writes_starved.to_string(),
                unit: "batches",
                help: "read batches that may pass over waiting writes",
            },
            TunableInfo {
                name: "front_merges",
                value: (t.front_merges as u8).to_string(),
                default: (d.front_merges as u8).to_string(),
                unit: "bool",
                help: "look up front merges in the sector tree",
            },
            TunableInfo {
                name: "fifo_batch",
                value: t.fifo_batch.to_string(),
                default: d.fifo_batch.to_string(),
                unit: "requests",
                help: "requests dispatched per batch before deadlines are checked",
            },
            TunableInfo {
                name: "async_depth",
                value: t.async_depth.to_string(),
                default: d.async_depth.to_string(),
                unit: "requests",
                help: "requests async I/O may hold (nr_requests)",
            },
            TunableInfo {
                name: "prio_aging_expire",
                value: self.fmt_ms(t.prio_aging_expire),
                default: self.fmt_ms(d.prio_aging_expire),
                unit: "ms",
                help: "a lower-class request older than this goes before higher classes (10*HZ)",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        let p = &self.params;
        match name {
            "read_expire" => self.tun.read_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "write_expire" => self.tun.write_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "prio_aging_expire" => self.tun.prio_aging_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "writes_starved" => self.tun.writes_starved = v.u32(0, INT_MAX)?,
            "front_merges" => self.tun.front_merges = v.bool()?,
            "fifo_batch" => self.tun.fifo_batch = v.u32(1, INT_MAX)?,
            "async_depth" => self.tun.async_depth = v.u64(1, INT_MAX)?,
            _ => return Err(TunableError::unknown("mq-deadline", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, drain, layer, serve, swrite, with_prio, BlockLayer};
    use mmcsim_elevator::types::{Op, NS_PER_MS};

    fn mk() -> BlockLayer {
        layer(1000, |p| Box::new(MqDeadline::new(p)))
    }

    #[test]
    fn classes_are_strict_rt_then_be_then_idle() {
        let mut b = mk();
        b.submit_bio(0, with_prio(bio(Op::Read, 100, 1), IoClass::Idle, 4), false);
        b.submit_bio(0, with_prio(bio(Op::Read, 200, 2), IoClass::Be, 4), false);
        b.submit_bio(0, with_prio(bio(Op::Read, 300, 3), IoClass::Rt, 4), false);
        b.submit_bio(0, with_prio(bio(Op::Read, 50, 2), IoClass::Be, 4), false);
        let order: Vec<u64> = drain(&mut b, NS_PER_MS).iter().map(|r| r.sector).collect();
        // BE: a new batch starts at the oldest request (200), then sweeps.
        assert_eq!(order, vec![300, 200, 50, 100]);
    }

    #[test]
    fn lower_class_waits_while_higher_class_is_in_flight() {
        let mut b = mk();
        b.submit_bio(0, with_prio(bio(Op::Read, 300, 3), IoClass::Rt, 0), false);
        b.submit_bio(0, with_prio(bio(Op::Read, 100, 1), IoClass::Be, 4), false);
        let rt = b.fetch(0).unwrap();
        b.activate(0, rt);
        assert_eq!(b.fetch(0), None, "RT in flight holds BE back");
        let mut done = Vec::new();
        b.complete(1, rt, &mut done);
        assert_eq!(serve(&mut b, 2).unwrap().sector, 100);
    }

    #[test]
    fn prio_aging_lets_an_old_idle_request_pass_rt() {
        let mut b = mk();
        b.submit_bio(0, with_prio(bio(Op::Read, 100, 1), IoClass::Idle, 7), false);
        let t = 10_001 * NS_PER_MS;
        b.submit_bio(t, with_prio(bio(Op::Read, 300, 3), IoClass::Rt, 0), false);
        let order: Vec<u64> = drain(&mut b, t).iter().map(|r| r.sector).collect();
        assert_eq!(order, vec![100, 300], "aged > 10 s goes first");
        // Not yet aged: strict.
        let mut b = mk();
        b.submit_bio(0, with_prio(bio(Op::Read, 100, 1), IoClass::Idle, 7), false);
        let t = 9_000 * NS_PER_MS;
        b.submit_bio(t, with_prio(bio(Op::Read, 300, 3), IoClass::Rt, 0), false);
        let order: Vec<u64> = drain(&mut b, t).iter().map(|r| r.sector).collect();
        assert_eq!(order, vec![300, 100]);
    }

    #[test]
    fn batches_like_deadline_reads_twice_then_writes() {
        let mut b = mk();
        // 40 reads and 40 writes, all BE, distinct far-apart sectors.
        for i in 0..40u64 {
            b.submit_bio(0, bio(Op::Read, 1_000_000 + i * 64, 1), false);
            b.submit_bio(0, swrite(i * 64, 2), false);
        }
        let dirs: Vec<usize> = drain(&mut b, NS_PER_MS).iter().map(|r| r.dir()).collect();
        let mut runs = Vec::new();
        for d in dirs {
            match runs.last_mut() {
                Some((x, n)) if *x == d => *n += 1,
                _ => runs.push((d, 1)),
            }
        }
        assert_eq!(runs[0], (READ, 32), "two read batches of 16");
        assert_eq!(runs[1], (WRITE, 16), "then a write batch");
        assert_eq!(runs[2], (READ, 8));
    }

    #[test]
    fn async_depth_limits_async_allocations() {
        let mut b = mk();
        b.elevator_mut().set_tunable("async_depth", "2").unwrap();
        for i in 0..4u64 {
            b.submit_bio(0, bio(Op::Write, i * 100, 9), false);
        }
        assert_eq!(b.allocated(false), 2, "two async requests allowed");
        let n = drain(&mut b, 1).len();
        assert_eq!(n, 4, "the others are admitted as tags free");
        assert!(b
            .elevator()
            .tunables()
            .iter()
            .any(|t| t.name == "prio_aging_expire" && t.default == "10000"));
    }
}
