//! deadline (legacy, single queue): ascending-sector batches per direction,
//! FIFO deadlines checked only at batch boundaries, reads preferred
//! (reference io-schedulers.md §3).
//!
//! Per direction (READ = 0, WRITE = 1; discards count as writes) a sector
//! tree and a FIFO whose deadline (`fifo_time`) is `jiffies + expire`.
//! Dispatch (§3.3):
//! 1. `rq` = `next_rq[WRITE]`, else `next_rq[READ]`; if it exists and
//!    `batching < fifo_batch`, dispatch it — no expiry check.
//! 2. Else pick a direction: with reads queued, WRITE if writes are queued
//!    and `starved++ >= writes_starved` (the increment happens even when the
//!    test fails), else READ; with only writes, WRITE. WRITE resets
//!    `starved`.
//! 3. Take the FIFO head if it has expired or `next_rq[dir]` is empty, else
//!    `next_rq[dir]`; `batching = 0`.
//! 4. `batching++`; clear both `next_rq`, set `next_rq[dir]` to the sector
//!    successor; append to the dispatch list's tail.
//!
//! Tunables are held in jiffies at the queue's `hz` and shown in ms, like
//! sysfs; expiry compares jiffies.

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{Ns, NS_PER_S};
use mmcsim_elevator::{
    Bio, Elevator, FifoList, MergeKind, RqId, SchedCtx, SchedParams, SectorTree, TunableError,
    TunableInfo, TunableValue,
};

const READ: usize = 0;
const WRITE: usize = 1;

/// Tunables of deadline, in kernel units (jiffies for the expiries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlineTunables {
    /// `read_expire`, jiffies (default `HZ/2` = 500 ms).
    pub read_expire: u64,
    /// `write_expire`, jiffies (default `5*HZ` = 5000 ms).
    pub write_expire: u64,
    /// `writes_starved`: read batches a write backlog may be passed over
    /// (default 2).
    pub writes_starved: u32,
    /// `front_merges`: look up front merges in the sector tree (default
    /// true).
    pub front_merges: bool,
    /// `fifo_batch`: requests per batch (default 16).
    pub fifo_batch: u32,
}

impl DeadlineTunables {
    /// The kernel defaults at tick rate `hz`.
    pub fn defaults(hz: u32) -> Self {
        let hz = hz as u64;
        DeadlineTunables {
            read_expire: hz / 2,
            write_expire: 5 * hz,
            writes_starved: 2,
            front_merges: true,
            fifo_batch: 16,
        }
    }
}

/// The deadline elevator (`deadline-iosched.c`, 3.4/3.10).
#[derive(Clone, Debug)]
pub struct Deadline {
    params: SchedParams,
    tun: DeadlineTunables,
    /// `sort_list[dir]`: requests by start sector.
    sort_list: [SectorTree; 2],
    /// `fifo_list[dir]`: requests by arrival; `fifo_time` = deadline.
    fifo_list: [FifoList; 2],
    /// `next_rq[dir]`: the next request in sector order for the batch.
    next_rq: [Option<RqId>; 2],
    /// `batching`: requests dispatched in the current batch.
    batching: u32,
    /// `starved`: read batches chosen while writes were waiting.
    starved: u32,
}

impl Deadline {
    /// A new deadline scheduler with the kernel defaults at `params.hz`.
    pub fn new(params: &SchedParams) -> Self {
        Deadline {
            params: *params,
            tun: DeadlineTunables::defaults(params.hz),
            sort_list: [
                SectorTree::with_capacity(256),
                SectorTree::with_capacity(256),
            ],
            fifo_list: [FifoList::with_capacity(256), FifoList::with_capacity(256)],
            next_rq: [None; 2],
            batching: 0,
            starved: 0,
        }
    }

    /// Current tunables (kernel units).
    pub fn tunables_raw(&self) -> DeadlineTunables {
        self.tun
    }

    /// `batching` and `starved` counters, for tests and traces.
    pub fn counters(&self) -> (u32, u32) {
        (self.batching, self.starved)
    }

    /// First nanosecond of jiffy `j` (so `jiffies(t) >= j` ⇔ `t >= result`).
    fn jiffy_start_ns(&self, j: u64) -> Ns {
        match j.checked_mul(NS_PER_S) {
            // Exact in u64 when the product fits: the same quotient.
            Some(p) => p.div_ceil(self.params.hz as u64),
            None => ((j as u128 * NS_PER_S as u128).div_ceil(self.params.hz as u128)) as Ns,
        }
    }

    /// `deadline_check_fifo`: has the FIFO head of `dir` expired
    /// (`time_after_eq(jiffies, fifo_time)`)?
    fn fifo_expired(&self, ctx: &SchedCtx, dir: usize) -> bool {
        match self.fifo_list[dir].front() {
            Some(rq) => self.params.jiffies(ctx.now) >= self.params.jiffies(ctx.rq(rq).fifo_time),
            None => false,
        }
    }

    /// `deadline_remove_request`: out of the FIFO and the tree; `next_rq`
    /// moves on to the sector successor if it pointed here.
    fn remove_request(&mut self, rq: RqId, dir: usize) {
        self.fifo_list[dir].remove(rq);
        if self.next_rq[dir] == Some(rq) {
            self.next_rq[dir] = self.sort_list[dir].successor(rq);
        }
        self.sort_list[dir].remove(rq);
    }

    /// Deadline's dispatch with something queued (or a batch to continue):
    /// steps 1–4 of `deadline_dispatch_requests`.
    #[inline(never)]
    fn dispatch_queued(&mut self, ctx: &mut SchedCtx) -> Option<RqId> {
        let reads = !self.fifo_list[READ].is_empty();
        let writes = !self.fifo_list[WRITE].is_empty();
        // 1. Continue the batch, without looking at deadlines.
        let cont = self.next_rq[WRITE].or(self.next_rq[READ]);
        let rq = match cont {
            Some(rq) if self.batching < self.tun.fifo_batch => rq,
            _ => {
                // 2. Choose a direction.
                let dir =
                    choose_direction(reads, writes, &mut self.starved, self.tun.writes_starved)?;
                // 3. FIFO head if expired or no sweep position, else sweep on.
                let rq = match self.next_rq[dir] {
                    Some(next) if !self.fifo_expired(ctx, dir) => next,
                    _ => self.fifo_list[dir].front().expect("non-empty fifo"),
                };
                self.batching = 0;
                rq
            }
        };
        // 4. deadline_move_request.
        let dir = ctx.rq(rq).dir();
        self.batching += 1;
        self.next_rq = [None; 2];
        // deadline_remove_request: its `next_rq` check cannot fire here
        // (`next_rq` was just cleared), so this is successor + removal.
        self.fifo_list[dir].remove(rq);
        self.next_rq[dir] = self.sort_list[dir].remove_next(rq);
        Some(rq)
    }

    fn fmt_ms(&self, j: u64) -> String {
        self.params.jiffies_to_ms(j).to_string()
    }
}

impl Elevator for Deadline {
    fn name(&self) -> &str {
        "deadline"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let dir = ctx.rq(rq).dir();
        let sector = ctx.rq(rq).sector;
        self.sort_list[dir].insert(sector, rq);
        let expire = if dir == READ {
            self.tun.read_expire
        } else {
            self.tun.write_expire
        };
        let deadline = self.params.jiffies(ctx.now) + expire;
        ctx.set_fifo_time(rq, self.jiffy_start_ns(deadline));
        self.fifo_list[dir].push_back(rq);
    }

    fn merge_lookup(&mut self, _ctx: &mut SchedCtx, bio: &Bio) -> Option<RqId> {
        if !self.tun.front_merges {
            return None;
        }
        self.sort_list[bio.op.dir()].find(bio.end())
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            let dir = ctx.rq(rq).dir();
            let sector = ctx.rq(rq).sector;
            self.sort_list[dir].reposition(rq, sector);
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let dir = ctx.rq(next).dir();
        let rdir = ctx.rq(rq).dir();
        if self.fifo_list[rdir].contains(rq)
            && self.fifo_list[dir].contains(next)
            && self.params.jiffies(ctx.rq(next).fifo_time)
                < self.params.jiffies(ctx.rq(rq).fifo_time)
        {
            // list_move(rq, next): rq takes next's place and deadline.
            self.fifo_list[rdir].remove(rq);
            self.fifo_list[dir].insert_after(next, rq);
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        self.remove_request(next, dir);
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.sort_list[ctx.rq(rq).dir()].predecessor(rq)
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.sort_list[ctx.rq(rq).dir()].successor(rq)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        if self.fifo_list[READ].is_empty()
            && self.fifo_list[WRITE].is_empty()
            && self.next_rq == [None; 2]
        {
            // Nothing queued and no batch to continue: step 2 would answer
            // `None` without touching `starved`.
            return None;
        }
        self.dispatch_queued(ctx)
    }

    fn none_is_stable(&self) -> bool {
        // `None` only when nothing is queued (no idling, no state change).
        true
    }

    fn has_work(&self) -> bool {
        !self.fifo_list[READ].is_empty() || !self.fifo_list[WRITE].is_empty()
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = DeadlineTunables::defaults(self.params.hz);
        vec![
            TunableInfo {
                name: "read_expire",
                value: self.fmt_ms(self.tun.read_expire),
                default: self.fmt_ms(d.read_expire),
                unit: "ms",
                help: "deadline of a read, from its arrival (HZ/2)",
            },
            TunableInfo {
                name: "write_expire",
                value: self.fmt_ms(self.tun.write_expire),
                default: self.fmt_ms(d.write_expire),
                unit: "ms",
                help: "deadline of a write, from its arrival (5*HZ)",
            },
            TunableInfo {
                name: "writes_starved",
                value: self.tun.writes_starved.to_string(),
                default: d.writes_starved.to_string(),
                unit: "batches",
                help: "read batches that may pass over waiting writes",
            },
            TunableInfo {
                name: "front_merges",
                value: (self.tun.front_merges as u8).to_string(),
                default: (d.front_merges as u8).to_string(),
                unit: "bool",
                help: "look up front merges in the sector tree",
            },
            TunableInfo {
                name: "fifo_batch",
                value: self.tun.fifo_batch.to_string(),
                default: d.fifo_batch.to_string(),
                unit: "requests",
                help: "requests dispatched per batch before deadlines are checked",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        let p = &self.params;
        match name {
            "read_expire" => self.tun.read_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "write_expire" => self.tun.write_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "writes_starved" => self.tun.writes_starved = v.u32(0, INT_MAX)?,
            "front_merges" => self.tun.front_merges = v.bool()?,
            "fifo_batch" => self.tun.fifo_batch = v.u32(0, INT_MAX)?,
            _ => return Err(TunableError::unknown("deadline", name, &self.tunables())),
        }
        Ok(())
    }
}

/// Step 2 of deadline's dispatch, shared with mq-deadline: the direction
/// of the next batch. Reads win unless writes are queued and
/// `starved++ >= writes_starved` (the increment happens whenever writes are
/// queued, true or not); choosing WRITE resets `starved`. `None` when
/// nothing is queued.
pub(crate) fn choose_direction(
    reads: bool,
    writes: bool,
    starved: &mut u32,
    writes_starved: u32,
) -> Option<usize> {
    if reads {
        let starve = writes && {
            let s = *starved;
            *starved += 1;
            s >= writes_starved
        };
        if !starve {
            return Some(READ);
        }
    } else if !writes {
        return None;
    }
    *starved = 0;
    Some(WRITE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{BlockLayer, QueueParams};
    use mmcsim_elevator::types::{IoPrio, Op, NS_PER_MS};
    use mmcsim_elevator::{Request, Submitter};

    fn layer_hz(hz: u32) -> BlockLayer {
        let sp = SchedParams { hz, nonrot: true };
        BlockLayer::new(QueueParams::default(), Box::new(Deadline::new(&sp)), sp)
    }

    fn submit(b: &mut BlockLayer, now: Ns, op: Op, sector: u64) {
        let bio = Bio {
            op,
            sector,
            sectors: 8,
            sync: op == Op::Read,
            fua: false,
            secure: false,
            prio: false,
            pid: 1,
            thread: 0,
            ioprio: IoPrio::NORM,
            submitter: Submitter::Call(0),
        };
        b.submit_bio(now, bio, false);
    }

    fn serve(b: &mut BlockLayer, now: Ns) -> Option<Request> {
        let rq = b.fetch(now)?;
        b.activate(now, rq);
        let r = b.request(rq).clone();
        let mut done = Vec::new();
        b.complete(now, rq, &mut done);
        Some(r)
    }

    /// Runs of consecutive dispatches in one direction: (op, sectors).
    fn batches(b: &mut BlockLayer, now: Ns) -> Vec<(Op, Vec<u64>)> {
        let mut out: Vec<(Op, Vec<u64>)> = Vec::new();
        while let Some(r) = serve(b, now) {
            match out.last_mut() {
                Some((op, v)) if *op == r.op => v.push(r.sector),
                _ => out.push((r.op, vec![r.sector])),
            }
        }
        out
    }

    /// `reads` ascending reads and `writes` ascending writes, all at t = 0,
    /// far apart (no merging).
    fn backlog(b: &mut BlockLayer, reads: u64, writes: u64) {
        for i in 0..writes {
            submit(b, 0, Op::Write, 1_000_000 + 64 * i);
        }
        for i in 0..reads {
            submit(b, 0, Op::Read, 2_000_000 + 64 * i);
        }
    }

    fn runs(got: &[(Op, Vec<u64>)]) -> Vec<(Op, usize)> {
        got.iter().map(|(o, v)| (*o, v.len())).collect()
    }

    #[test]
    fn read_read_write_batches_of_sixteen_in_ascending_order() {
        let mut b = layer_hz(1000);
        backlog(&mut b, 64, 64);
        let got = batches(&mut b, NS_PER_MS);
        // Read batch, read batch, write batch (16 each), repeating; once the
        // reads are gone the writes finish.
        assert_eq!(
            runs(&got),
            vec![
                (Op::Read, 32),
                (Op::Write, 16),
                (Op::Read, 32),
                (Op::Write, 48)
            ]
        );
        for (_, v) in &got {
            assert!(v.windows(2).all(|p| p[0] < p[1]), "ascending: {v:?}");
        }
    }

    #[test]
    fn write_batch_begins_with_the_oldest_write_not_the_lowest_sector() {
        let mut b = layer_hz(1000);
        for i in 0..40 {
            submit(&mut b, 0, Op::Read, 2_000_000 + 64 * i);
        }
        submit(&mut b, 0, Op::Write, 5000);
        submit(&mut b, NS_PER_MS, Op::Write, 100);
        submit(&mut b, 2 * NS_PER_MS, Op::Write, 3000);
        let got = batches(&mut b, 3 * NS_PER_MS);
        assert_eq!(
            got[0],
            (Op::Read, (0..32).map(|i| 2_000_000 + 64 * i).collect())
        );
        // The oldest write (5000) has no sector successor: a one-request
        // batch; the next write batch starts at the then-oldest write (100)
        // and sweeps up (3000).
        assert_eq!(got[1], (Op::Write, vec![5000]));
        assert_eq!(got[2].0, Op::Read);
        assert_eq!(got[3], (Op::Write, vec![100, 3000]));
    }

    #[test]
    fn read_behind_the_sweep_waits_for_the_wrap() {
        let mut b = layer_hz(1000);
        for i in 0..10 {
            submit(&mut b, 0, Op::Read, 10_000 + 64 * i);
        }
        submit(&mut b, NS_PER_MS, Op::Read, 0);
        let got = batches(&mut b, 2 * NS_PER_MS);
        let mut want: Vec<u64> = (0..10).map(|i| 10_000 + 64 * i).collect();
        want.push(0);
        assert_eq!(got, vec![(Op::Read, want)]);
    }

    #[test]
    fn expired_read_goes_out_at_the_next_batch_boundary_not_mid_batch() {
        let mut b = layer_hz(1000);
        for i in 0..20 {
            submit(&mut b, 0, Op::Read, 10_000 + 64 * i);
        }
        // Behind the sweep; deadline 1 ms + 500 ms = 501 ms.
        submit(&mut b, NS_PER_MS, Op::Read, 0);
        // One dispatch per 10 ms; each dispatch brings a new read ahead of
        // the sweep, so the sweep never wraps.
        let mut k = 0u64;
        let sent_at = loop {
            let now = 10 * NS_PER_MS * k;
            let r = serve(&mut b, now).unwrap();
            submit(&mut b, now, Op::Read, 1_000_000 + 64 * k);
            if r.sector == 0 {
                break k;
            }
            k += 1;
            assert!(k < 200);
        };
        // Expired from 510 ms (dispatch 51, mid-batch); batches start at
        // dispatches 0, 16, 32, 48, 64: it leaves at 64 (640 ms).
        assert_eq!(sent_at, 64);
    }

    #[test]
    fn fifo_batch_and_writes_starved_change_the_pattern() {
        let mut b = layer_hz(1000);
        b.elevator_mut().set_tunable("fifo_batch", "4").unwrap();
        b.elevator_mut().set_tunable("writes_starved", "1").unwrap();
        backlog(&mut b, 16, 16);
        let got = batches(&mut b, NS_PER_MS);
        let want: Vec<(Op, usize)> = (0..4)
            .flat_map(|_| [(Op::Read, 4), (Op::Write, 4)])
            .collect();
        assert_eq!(runs(&got), want);

        let mut b = layer_hz(1000);
        b.elevator_mut().set_tunable("writes_starved", "0").unwrap();
        backlog(&mut b, 32, 32);
        let got = batches(&mut b, NS_PER_MS);
        // writes_starved 0: `starved++ >= 0` always holds, so writes win
        // every choice while any are queued.
        assert_eq!(runs(&got), vec![(Op::Write, 32), (Op::Read, 32)]);
    }

    #[test]
    fn merge_requests_keeps_the_earlier_fifo_position_and_deadline() {
        let mut b = layer_hz(1000);
        submit(&mut b, 0, Op::Write, 16); // B: oldest, last_merge
        submit(&mut b, NS_PER_MS, Op::Write, 500); // C
        submit(&mut b, 2 * NS_PER_MS, Op::Write, 0); // A
        submit(&mut b, 3 * NS_PER_MS, Op::Write, 8); // front into B, A absorbs B
        assert_eq!(b.stats().request_merges, 1);
        let first = serve(&mut b, 4 * NS_PER_MS).unwrap();
        assert_eq!((first.sector, first.sectors), (0, 24));
        assert_eq!(first.fifo_time, 5000 * NS_PER_MS, "B's deadline: 0 + 5 s");
        assert_eq!(serve(&mut b, 4 * NS_PER_MS).unwrap().sector, 500);
    }

    #[test]
    fn tunables_in_ms_with_hz_rounding() {
        let sp = SchedParams {
            hz: 100,
            nonrot: true,
        };
        let mut d = Deadline::new(&sp);
        assert_eq!(d.tunables_raw().read_expire, 50, "HZ/2 jiffies");
        let t = d.tunables();
        assert_eq!((t[0].name, t[0].value.as_str()), ("read_expire", "500"));
        assert_eq!(t[1].value, "5000");
        // 125 ms at HZ=100 is 12.5 jiffies: msecs_to_jiffies rounds up to
        // 13, shown as 130 ms.
        d.set_tunable("read_expire", "125").unwrap();
        assert_eq!(d.tunables_raw().read_expire, 13);
        assert_eq!(d.tunables()[0].value, "130");
        assert_eq!(d.tunables()[0].default, "500");
        d.set_tunable("write_expire", "1").unwrap();
        assert_eq!(d.tunables()[1].value, "10", "1 ms is one 10 ms jiffy");

        let mut d = Deadline::new(&SchedParams::default());
        d.set_tunable("read_expire", "125").unwrap();
        assert_eq!(d.tunables()[0].value, "125");
        let d300 = Deadline::new(&SchedParams {
            hz: 300,
            nonrot: true,
        });
        assert_eq!(d300.tunables()[0].value, "500");
    }

    #[test]
    fn expiry_is_checked_in_jiffies_at_hz_100() {
        // read_expire 500 ms = 50 jiffies; a read at 5 ms (jiffy 0) expires
        // at jiffy 50 = 500 ms, not 505 ms.
        let mut b = layer_hz(100);
        b.elevator_mut().set_tunable("fifo_batch", "1").unwrap();
        submit(&mut b, 0, Op::Read, 10_000);
        submit(&mut b, 0, Op::Read, 20_000);
        submit(&mut b, 5 * NS_PER_MS, Op::Read, 0);
        assert_eq!(serve(&mut b, 6 * NS_PER_MS).unwrap().sector, 10_000);
        // At 499 ms, not expired: the sweep goes on (to 20_000)...
        assert_eq!(serve(&mut b, 499 * NS_PER_MS).unwrap().sector, 20_000);
        let mut b = layer_hz(100);
        b.elevator_mut().set_tunable("fifo_batch", "1").unwrap();
        submit(&mut b, 0, Op::Read, 10_000);
        submit(&mut b, 0, Op::Read, 20_000);
        submit(&mut b, 5 * NS_PER_MS, Op::Read, 0);
        assert_eq!(serve(&mut b, 6 * NS_PER_MS).unwrap().sector, 10_000);
        // ... but at 500 ms the FIFO head (20_000, from t=0) has expired too,
        // so the head is taken: still 20_000. Drop it and look at the late
        // read: it is the head now and expired at jiffy 50.
        assert_eq!(serve(&mut b, 500 * NS_PER_MS).unwrap().sector, 20_000);
        submit(&mut b, 500 * NS_PER_MS, Op::Read, 30_000);
        assert_eq!(serve(&mut b, 500 * NS_PER_MS).unwrap().sector, 0);
    }

    #[test]
    fn invalid_values_and_unknown_names_are_rejected() {
        let mut d = Deadline::new(&SchedParams::default());
        let e = d.set_tunable("fifo_batch", "many").unwrap_err().to_string();
        assert!(
            e.contains("fifo_batch") && e.contains("whole number"),
            "{e}"
        );
        assert!(d.set_tunable("front_merges", "2").is_err());
        assert!(d.set_tunable("read_expire", "-1").is_err());
        assert!(d.set_tunable("writes_starved", "4294967296").is_err());
        let e = d.set_tunable("read_expiry", "5").unwrap_err().to_string();
        assert!(
            e.contains(
                "valid: read_expire, write_expire, writes_starved, front_merges, fifo_batch"
            ),
            "{e}"
        );
        assert_eq!(d.tunables_raw(), DeadlineTunables::defaults(1000));
        d.set_tunable("front_merges", "0").unwrap();
        assert!(!d.tunables_raw().front_merges);
    }

    #[test]
    fn front_merges_zero_disables_the_tree_lookup() {
        let mut b = layer_hz(1000);
        b.elevator_mut().set_tunable("front_merges", "0").unwrap();
        submit(&mut b, 0, Op::Write, 100);
        submit(&mut b, 0, Op::Write, 500);
        submit(&mut b, 0, Op::Write, 492);
        assert_eq!(b.stats().front_merges, 0);
    }
}
