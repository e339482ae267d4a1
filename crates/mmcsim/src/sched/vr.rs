//! V(R) (Aaron Carroll, 2007; reference io-schedulers.md §10).
//!
//! Nearest request to the head (the last dispatched start sector), with the
//! reversing direction penalised: `rev_penalty` 1 ≈ SSTF, large ≈ SCAN.
//! Sync/async soft deadlines; no read/write distinction.
//!
//! Data: one global sector tree, FIFOs for async and sync requests
//! (deadline = jiffies + expire; an expire of 0 leaves the request out of
//! its FIFO, as in the kernel), `next_rq` (≥ last), `prev_rq` (< last),
//! `head_dir`, `last_sector`, `nbatched`.
//!
//! Dispatch (§10.3):
//! 1. If `nbatched > fifo_batch`: `nbatched = 0`; an expired FIFO head
//!    (`time_after(jiffies, deadline)`); both expired → the earlier
//!    deadline, async on a tie.
//! 2. Otherwise the only one of `prev`/`next`, or: next_pen = next − last,
//!    prev_pen = last − prev, penalty = `rev_penalty` (INT_MAX if 0);
//!    heading FORWARD next_pen is reduced by the penalty, heading BACKWARD
//!    prev_pen is. `next` if next_pen ≤ prev_pen. The shipped code keeps the
//!    division helper's *remainder* (`x = do_div(x, p)`); the comment
//!    intends the *quotient*: `rev_penalty_quotient` = 1. Note that with the
//!    remainder the forward penalty is always < `rev_penalty`, so the
//!    shipped scheduler behaves close to SCAN for every setting
//!    (`rev_penalty` 1 is exactly SCAN); SSTF needs the quotient.
//! 3. `head_dir` = FORWARD if pos > last else BACKWARD; last = pos; `next`/
//!    `prev` = the dispatched request's tree neighbours; `nbatched++`; tail
//!    append.
//!
//! Merging: front merge via the global tree; `former`/`latter` are sector
//! neighbours; `merge_requests` keeps the earlier FIFO position/deadline.

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{Ns, NS_PER_S};
use mmcsim_elevator::{
    Bio, Elevator, FifoList, MergeKind, RqId, SchedCtx, SchedParams, SectorTree, TunableError,
    TunableInfo, TunableValue,
};

const ASYNC: usize = 0;
const SYNC: usize = 1;

/// Direction of the head's last move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadDir {
    /// Moved to a higher sector.
    Forward,
    /// Moved to a lower or equal sector.
    Backward,
}

/// Tunables of V(R) (expiries in jiffies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VrTunables {
    /// `sync_expire`, jiffies (HZ/2 = 500 ms).
    pub sync_expire: u64,
    /// `async_expire`, jiffies (5·HZ = 5000 ms).
    pub async_expire: u64,
    /// `fifo_batch` (1).
    pub fifo_batch: u32,
    /// `rev_penalty` (10; 0 = INT_MAX).
    pub rev_penalty: u64,
    /// Quirk switch: false (as shipped) = penalty is the remainder.
    pub rev_penalty_quotient: bool,
}

impl VrTunables {
    /// Defaults at tick rate `hz`.
    pub fn defaults(hz: u32) -> Self {
        let hz = hz as u64;
        VrTunables {
            sync_expire: hz / 2,
            async_expire: 5 * hz,
            fifo_batch: 1,
            rev_penalty: 10,
            rev_penalty_quotient: false,
        }
    }
}

/// The V(R) elevator (`vr-iosched.c`).
#[derive(Clone, Debug)]
pub struct Vr {
    params: SchedParams,
    tun: VrTunables,
    sort: SectorTree,
    fifo: [FifoList; 2],
    next_rq: Option<RqId>,
    prev_rq: Option<RqId>,
    nbatched: u32,
    last_sector: u64,
    head_dir: HeadDir,
}

fn jiffy_start_ns(hz: u32, j: u64) -> Ns {
    ((j as u128 * NS_PER_S as u128).div_ceil(hz as u128)) as Ns
}

impl Vr {
    /// A new V(R) with the defaults at `params.hz`.
    pub fn new(params: &SchedParams) -> Self {
        Vr {
            params: *params,
            tun: VrTunables::defaults(params.hz),
            sort: SectorTree::with_capacity(256),
            fifo: [FifoList::with_capacity(256), FifoList::with_capacity(256)],
            next_rq: None,
            prev_rq: None,
            nbatched: 0,
            last_sector: 0,
            head_dir: HeadDir::Forward,
        }
    }

    /// Current tunables (kernel units).
    pub fn tunables_raw(&self) -> VrTunables {
        self.tun
    }

    /// `(last_sector, head_dir)`.
    pub fn head(&self) -> (u64, HeadDir) {
        (self.last_sector, self.head_dir)
    }

    /// `vr_add_rq_rb`.
    fn add_rq_rb(&mut self, ctx: &SchedCtx, rq: RqId) {
        let pos = ctx.rq(rq).sector;
        self.sort.insert(pos, rq);
        if pos >= self.last_sector {
            if self.next_rq.is_none_or(|n| ctx.rq(n).sector > pos) {
                self.next_rq = Some(rq);
            }
        } else if self.prev_rq.is_none_or(|p| ctx.rq(p).sector < pos) {
            self.prev_rq = Some(rq);
        }
    }

    /// `vr_del_rq_rb`.
    fn del_rq_rb(&mut self, rq: RqId) {
        if self.next_rq == Some(rq) {
            self.next_rq = self.sort.successor(rq);
        } else if self.prev_rq == Some(rq) {
            self.prev_rq = self.sort.predecessor(rq);
        }
        self.sort.remove(rq);
    }

    fn expired(&self, ctx: &SchedCtx, k: usize) -> Option<(RqId, u64)> {
        let rq = self.fifo[k].front()?;
        let dl = self.params.jiffies(ctx.rq(rq).fifo_time);
        (self.params.jiffies(ctx.now) > dl).then_some((rq, dl))
    }

    /// `vr_check_fifo`.
    fn check_fifo(&self, ctx: &SchedCtx) -> Option<RqId> {
        match (self.expired(ctx, SYNC), self.expired(ctx, ASYNC)) {
            (Some((s, sdl)), Some((a, adl))) => Some(if adl > sdl { s } else { a }),
            (Some((s, _)), None) => Some(s),
            (None, a) => a.map(|(a, _)| a),
        }
    }

    fn reduce(&self, pen: u64, penalty: u64) -> u64 {
        if self.tun.rev_penalty_quotient {
            pen / penalty
        } else {
            pen % penalty
        }
    }

    /// `vr_choose_request`.
    fn choose(&self, ctx: &SchedCtx) -> Option<RqId> {
        let (next, prev) = match (self.next_rq, self.prev_rq) {
            (n, None) => return n,
            (None, p) => return p,
            (Some(n), Some(p)) => (n, p),
        };
        let penalty = if self.tun.rev_penalty == 0 {
            INT_MAX
        } else {
            self.tun.rev_penalty
        };
        let mut next_pen = ctx.rq(next).sector.saturating_sub(self.last_sector);
        let mut prev_pen = self.last_sector.saturating_sub(ctx.rq(prev).sector);
        match self.head_dir {
            HeadDir::Forward => next_pen = self.reduce(next_pen, penalty),
            HeadDir::Backward => prev_pen = self.reduce(prev_pen, penalty),
        }
        Some(if next_pen <= prev_pen { next } else { prev })
    }

    fn fmt_ms(&self, j: u64) -> String {
        self.params.jiffies_to_ms(j).to_string()
    }
}

impl Elevator for Vr {
    fn name(&self) -> &str {
        "vr"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        self.add_rq_rb(ctx, rq);
        let k = ctx.rq(rq).sync as usize;
        let expire = if k == SYNC {
            self.tun.sync_expire
        } else {
            self.tun.async_expire
        };
        if expire != 0 {
            let dl = self.params.jiffies(ctx.now) + expire;
            ctx.set_fifo_time(rq, jiffy_start_ns(self.params.hz, dl));
            self.fifo[k].push_back(rq);
        }
    }

    fn merge_lookup(&mut self, _ctx: &mut SchedCtx, bio: &Bio) -> Option<RqId> {
        self.sort.find(bio.end())
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            self.del_rq_rb(rq);
            self.add_rq_rb(ctx, rq);
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let rk = ctx.rq(rq).sync as usize;
        let nk = ctx.rq(next).sync as usize;
        if self.fifo[rk].contains(rq)
            && self.fifo[nk].contains(next)
            && self.params.jiffies(ctx.rq(next).fifo_time)
                < self.params.jiffies(ctx.rq(rq).fifo_time)
        {
            self.fifo[rk].remove(rq);
            self.fifo[nk].insert_after(next, rq);
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        // rq may now sit in the other class's FIFO; remove `next` by
        // membership rather than by its sync flag.
        if !self.fifo[nk].remove(next) {
            self.fifo[1 - nk].remove(next);
        }
        self.del_rq_rb(next);
    }

    fn former(&self, _ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.sort.predecessor(rq)
    }

    fn latter(&self, _ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.sort.successor(rq)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        let mut rq = None;
        if self.nbatched > self.tun.fifo_batch {
            self.nbatched = 0;
            rq = self.check_fifo(ctx);
        }
        let rq = rq.or_else(|| self.choose(ctx))?;
        // vr_move_request
        let pos = ctx.rq(rq).sector;
        self.head_dir = if pos > self.last_sector {
            HeadDir::Forward
        } else {
            HeadDir::Backward
        };
        self.last_sector = pos;
        self.next_rq = self.sort.successor(rq);
        self.prev_rq = self.sort.predecessor(rq);
        let k = ctx.rq(rq).sync as usize;
        if !self.fifo[k].remove(rq) {
            self.fifo[1 - k].remove(rq);
        }
        self.del_rq_rb(rq);
        self.nbatched += 1;
        Some(rq)
    }

    fn has_work(&self) -> bool {
        !self.sort.is_empty()
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = VrTunables::defaults(self.params.hz);
        let t = &self.tun;
        vec![
            TunableInfo {
                name: "sync_expire",
                value: self.fmt_ms(t.sync_expire),
                default: self.fmt_ms(d.sync_expire),
                unit: "ms",
                help: "soft deadline of a sync request (HZ/2); 0 = no deadline",
            },
            TunableInfo {
                name: "async_expire",
                value: self.fmt_ms(t.async_expire),
                default: self.fmt_ms(d.async_expire),
                unit: "ms",
                help: "soft deadline of an async request (5*HZ); 0 = no deadline",
            },
            TunableInfo {
                name: "fifo_batch",
                value: t.fifo_batch.to_string(),
                default: d.fifo_batch.to_string(),
                unit: "requests",
                help: "deadlines are checked once nbatched exceeds this (1: every other dispatch)",
            },
            TunableInfo {
                name: "rev_penalty",
                value: t.rev_penalty.to_string(),
                default: d.rev_penalty.to_string(),
                unit: "factor",
                help:
                    "penalty on reversing the head direction (1 ~ SSTF, large ~ SCAN; 0 = INT_MAX)",
            },
            TunableInfo {
                name: "rev_penalty_quotient",
                value: (t.rev_penalty_quotient as u8).to_string(),
                default: (d.rev_penalty_quotient as u8).to_string(),
                unit: "bool",
                help: "quirk switch: 0 (as shipped) = the forward distance is reduced to its \
                       remainder mod rev_penalty (near-SCAN); 1 = divided by it, as intended",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        let p = &self.params;
        match name {
            "sync_expire" => self.tun.sync_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "async_expire" => self.tun.async_expire = v.ms_as_jiffies(p, 0, INT_MAX)?,
            "fifo_batch" => self.tun.fifo_batch = v.u32(0, INT_MAX)?,
            "rev_penalty" => self.tun.rev_penalty = v.u64(0, INT_MAX)?,
            "rev_penalty_quotient" => self.tun.rev_penalty_quotient = v.bool()?,
            _ => return Err(TunableError::unknown("vr", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, layer, params, serve, Direct};
    use mmcsim_elevator::types::{Op, NS_PER_MS};

    /// A V(R) whose head sits at 1000 moving forward.
    fn at_1000(quotient: &str) -> (Vr, Direct) {
        let mut e = Vr::new(&params(1000));
        e.set_tunable("rev_penalty_quotient", quotient).unwrap();
        let mut d = Direct::new();
        d.add(&mut e, 0, bio(Op::Read, 1000, 1));
        d.dispatch(&mut e, 0).unwrap();
        assert_eq!(e.head(), (1000, HeadDir::Forward));
        (e, d)
    }

    fn pick(quotient: &str, a: u64, b: u64) -> u64 {
        let (mut e, mut d) = at_1000(quotient);
        d.add(&mut e, 0, bio(Op::Read, a, 1));
        d.add(&mut e, 0, bio(Op::Read, b, 1));
        let rq = d.dispatch(&mut e, 0).unwrap();
        d.rqs[rq].sector
    }

    #[test]
    fn remainder_penalty_as_shipped_and_quotient_flag() {
        // 20 mod 10 = 0 <= 10.
        assert_eq!(pick("0", 1020, 990), 1020);
        // 500 mod 10 = 0 <= 40: the remainder takes the far one.
        assert_eq!(pick("0", 1500, 960), 1500);
        // 500 / 10 = 50 > 40.
        assert_eq!(pick("1", 1500, 960), 960);
        assert_eq!(pick("1", 1020, 990), 1020, "20/10 = 2 <= 10");
    }

    fn order(quotient: &str, set: &[u64]) -> Vec<u64> {
        let (mut e, mut d) = at_1000(quotient);
        e.set_tunable("rev_penalty", "1").unwrap();
        for &s in set {
            d.add(&mut e, 0, bio(Op::Read, s, 1));
        }
        let ids: Vec<RqId> = std::iter::from_fn(|| d.dispatch(&mut e, 0)).collect();
        ids.iter().map(|&rq| d.rqs[rq].sector).collect()
    }

    /// Greedy shortest seek from 1000; ties go forward.
    fn sstf(set: &[u64]) -> Vec<u64> {
        let mut left = set.to_vec();
        let mut head = 1000u64;
        let mut out = Vec::new();
        while !left.is_empty() {
            let i = (0..left.len())
                .min_by_key(|&i| (left[i].abs_diff(head), left[i] < head))
                .unwrap();
            head = left.remove(i);
            out.push(head);
        }
        out
    }

    #[test]
    fn rev_penalty_one_is_sstf_with_the_quotient_and_scan_as_shipped() {
        let set = [1100, 950, 900, 1300, 700, 2000];
        assert_eq!(order("1", &set), vec![950, 900, 1100, 1300, 700, 2000]);
        assert_eq!(order("1", &set), sstf(&set));
        assert_eq!(order("0", &set), vec![1100, 1300, 2000, 950, 900, 700]);
        // A larger static set.
        let mut seed = 11u64;
        let mut set: Vec<u64> = (0..60)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                8 * ((seed >> 40) % 100_000)
            })
            .collect();
        set.sort();
        set.dedup();
        set.retain(|&s| s != 1000);
        assert_eq!(order("1", &set), sstf(&set));
    }

    #[test]
    fn async_request_older_than_5s_taken_within_2_dispatches() {
        let (mut e, mut d) = at_1000("0");
        let old = {
            let mut b = bio(Op::Write, 10, 2);
            b.sync = false;
            d.add(&mut e, 0, b)
        };
        let mut sent = None;
        for k in 0..700u64 {
            let now = 10 * NS_PER_MS * k;
            d.add(&mut e, now, bio(Op::Read, 1000 + 64 * (k + 1), 1));
            if d.dispatch(&mut e, now) == Some(old) {
                sent = Some(k);
                break;
            }
        }
        // Expired once jiffies > 5000: dispatch k = 501 (5010 ms) or the
        // next one.
        let k = sent.unwrap();
        assert!((501..=502).contains(&k), "{k}");
    }

    #[test]
    fn both_expired_takes_the_earlier_deadline_async_on_tie() {
        let mut e = Vr::new(&params(1000));
        e.set_tunable("fifo_batch", "0").unwrap();
        let mut d = Direct::new();
        let async_write = |s| {
            let mut b = bio(Op::Write, s, 2);
            b.sync = false;
            b
        };
        let dummy = d.add(&mut e, 0, bio(Op::Read, 0, 1));
        assert_eq!(d.dispatch(&mut e, 0), Some(dummy)); // nbatched = 1
        let a = d.add(&mut e, 0, async_write(5000)); // deadline 5000
        let s = d.add(&mut e, 4500 * NS_PER_MS, bio(Op::Read, 100, 1)); // 5000
        let a2 = d.add(&mut e, 100 * NS_PER_MS, async_write(50)); // 5100
                                                                  // Tie: async (the seek would have taken 50 or 100).
        assert_eq!(d.dispatch(&mut e, 6000 * NS_PER_MS), Some(a));
        // Sync 5000 before async 5100.
        assert_eq!(d.dispatch(&mut e, 6000 * NS_PER_MS), Some(s));
        assert_eq!(d.dispatch(&mut e, 6000 * NS_PER_MS), Some(a2));
    }

    #[test]
    fn front_merge_via_tree_and_sector_neighbour_merges() {
        let mut b = layer(1000, |p| Box::new(Vr::new(p)));
        b.submit_bio(0, bio(Op::Write, 500, 1), false); // last_merge
        b.submit_bio(0, bio(Op::Write, 100, 1), false);
        b.submit_bio(0, bio(Op::Write, 92, 1), false); // front via tree
        assert_eq!(b.stats().front_merges, 1);
        b.submit_bio(0, bio(Op::Write, 508, 1), false); // back into 500
        b.submit_bio(0, bio(Op::Write, 524, 1), false);
        b.submit_bio(0, bio(Op::Write, 516, 1), false); // back, then latter merge
        assert_eq!(b.stats().request_merges, 1);
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| serve(&mut b, 0))
            .map(|r| (r.sector, r.sectors))
            .collect();
        assert_eq!(got, vec![(92, 16), (500, 32)]);
    }

    #[test]
    fn tunables_defaults_and_validation() {
        for hz in [1000, 100] {
            let v = Vr::new(&params(hz));
            let got: Vec<(&str, String)> = v
                .tunables()
                .into_iter()
                .map(|t| (t.name, t.default))
                .collect();
            let want = [
                ("sync_expire", "500"),
                ("async_expire", "5000"),
                ("fifo_batch", "1"),
                ("rev_penalty", "10"),
                ("rev_penalty_quotient", "0"),
            ];
            let want: Vec<(&str, String)> = want.iter().map(|&(n, v)| (n, v.to_string())).collect();
            assert_eq!(got, want, "hz {hz}");
        }
        let mut v = Vr::new(&params(100));
        assert_eq!(v.tunables_raw().async_expire, 500);
        v.set_tunable("sync_expire", "5").unwrap();
        assert_eq!(v.tunables_raw().sync_expire, 1);
        assert_eq!(v.tunables()[0].value, "10");
        assert!(v.set_tunable("rev_penalty", "-3").is_err());
        assert!(v.set_tunable("rev_penalty_quotient", "yes").is_err());
        let e = v.set_tunable("penalty", "1").unwrap_err().to_string();
        assert!(
            e.contains(
                "valid: sync_expire, async_expire, fifo_batch, rev_penalty, rev_penalty_quotient"
            ),
            "{e}"
        );
    }
}
