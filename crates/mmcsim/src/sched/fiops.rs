//! FIOPS — Fair IOPS scheduler (Shaohua Li; reference io-schedulers.md
//! §8).
//!
//! One `ioc` per process (`Request::pid`; sync and async I/O together): a
//! FIFO (dispatch order), a sector tree (merging only), `vios` and
//! `in_flight`. Per class (RT, BE, IDLE) a service tree ordered by vios
//! (equal vios go right, after the existing ones) with a monotonic
//! `min_vios`. No idling, no slices. Dispatch (§8.3), one request per call:
//! 1. The highest non-empty class and its lowest-vios ioc.
//! 2. Head async, a sync request in flight (dispatched, not completed), and
//!    the ioc alone on its tree: nothing.
//! 3. Head async with other iocs on the tree: walk right to the first ioc
//!    whose head is sync. As shipped, when none is found the walk's last
//!    (rightmost) ioc is used (`rightmost_fallback` = 1); 0 keeps the
//!    lowest-vios ioc instead.
//! 4. Dispatch that ioc's FIFO head (tail append) at cost v = 1024,
//!    × write_scale/read_scale for a write, × async_scale/sync_scale for
//!    async, then v += v·(level − 4)/5 (C integer arithmetic, truncated).
//! 5. vios += v; the ioc is re-sorted (or leaves the tree when it has
//!    nothing queued); min_vios = max(min_vios, lowest vios).
//!
//! An ioc (re)joining its tree with nothing in flight gets vios =
//! max(min_vios, own vios). Merging: front merge within the submitter's
//! ioc; `allow_merge` requires the submitter's ioc; `former`/`latter` are
//! sector neighbours in the request's ioc.

use mmcsim_elevator::{
    Bio, Elevator, FifoList, IoClass, MergeKind, Request, RqId, SchedCtx, SchedParams, SectorTree,
    TunableError, TunableInfo, TunableValue,
};

/// `VIOS_SCALE`: the cost of one request before scaling.
pub const VIOS_SCALE: i64 = 1 << 10;
/// `VIOS_PRIO_SCALE`.
const VIOS_PRIO_SCALE: i64 = 5;
/// `IOPRIO_NORM`.
const IOPRIO_NORM: i64 = 4;
/// Service trees by `wl_type`: IDLE, BE, RT.
const IDLE_WL: usize = 0;
const BE_WL: usize = 1;
const RT_WL: usize = 2;

/// Tunables of FIOPS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FiopsTunables {
    /// `read_scale` (1).
    pub read_scale: u32,
    /// `write_scale` (1).
    pub write_scale: u32,
    /// `sync_scale` (2).
    pub sync_scale: u32,
    /// `async_scale` (5).
    pub async_scale: u32,
    /// Quirk switch: true (as shipped) = an async head with no sync ioc to
    /// its right falls back to the rightmost ioc.
    pub rightmost_fallback: bool,
}

impl Default for FiopsTunables {
    fn default() -> Self {
        FiopsTunables {
            read_scale: 1,
            write_scale: 1,
            sync_scale: 2,
            async_scale: 5,
            rightmost_fallback: true,
        }
    }
}

#[derive(Clone, Debug)]
struct Ioc {
    fifo: FifoList,
    sort: SectorTree,
    vios: u64,
    in_flight: u32,
    /// `fiops_ioc_on_rr`.
    on_rr: bool,
    /// Service tree the ioc is linked in (None = `RB_EMPTY_NODE`).
    tree: Option<usize>,
    /// `wl_type` from the last inserted request's class.
    wl: usize,
    /// `ioprio` level.
    level: u8,
}

#[derive(Clone, Debug, Default)]
struct ServiceTree {
    /// Key = vios, id = ioc index.
    tree: SectorTree,
    min_vios: u64,
}

/// The FIOPS elevator (`fiops-iosched.c`).
#[derive(Clone, Debug)]
pub struct Fiops {
    tun: FiopsTunables,
    iocs: Vec<Ioc>,
    /// `(pid, ioc index)` sorted by pid.
    by_pid: Vec<(u32, u32)>,
    trees: [ServiceTree; 3],
    busy_queues: u32,
    /// Dispatched, not completed `[async, sync]`.
    in_flight: [u32; 2],
    queued: u32,
}

/// `elv_priv[0]`: the request's ioc index.
const P_IOC: usize = 0;

impl Fiops {
    /// A new FIOPS (its tunables do not depend on `hz`).
    pub fn new(_params: &SchedParams) -> Self {
        Fiops {
            tun: FiopsTunables::default(),
            iocs: Vec::with_capacity(64),
            by_pid: Vec::with_capacity(64),
            trees: Default::default(),
            busy_queues: 0,
            in_flight: [0; 2],
            queued: 0,
        }
    }

    /// Current tunables.
    pub fn tunables_raw(&self) -> FiopsTunables {
        self.tun
    }

    /// `fiops_scaled_vios` for a request of this kind at ioprio `level`.
    pub fn scaled_vios(&self, write: bool, sync: bool, level: u8) -> u64 {
        let t = &self.tun;
        let mut v = VIOS_SCALE;
        if write {
            v = v * t.write_scale as i64 / t.read_scale as i64;
        }
        if !sync {
            v = v * t.async_scale as i64 / t.sync_scale as i64;
        }
        v += v * (level as i64 - IOPRIO_NORM) / VIOS_PRIO_SCALE;
        v.max(0) as u64
    }

    /// The vios of process `pid`'s ioc, if it has one.
    pub fn vios(&self, pid: u32) -> Option<u64> {
        self.lookup(pid).map(|i| self.iocs[i].vios)
    }

    /// `min_vios` of a class's service tree.
    pub fn min_vios(&self, class: IoClass) -> u64 {
        self.trees[wl_type(class)].min_vios
    }

    fn lookup(&self, pid: u32) -> Option<usize> {
        self.by_pid
            .binary_search_by_key(&pid, |&(p, _)| p)
            .ok()
            .map(|i| self.by_pid[i].1 as usize)
    }

    fn lookup_or_create(&mut self, pid: u32) -> usize {
        match self.by_pid.binary_search_by_key(&pid, |&(p, _)| p) {
            Ok(i) => self.by_pid[i].1 as usize,
            Err(pos) => {
                let idx = self.iocs.len();
                self.iocs.push(Ioc {
                    fifo: FifoList::new(),
                    sort: SectorTree::new(),
                    vios: 0,
                    in_flight: 0,
                    on_rr: false,
                    tree: None,
                    wl: BE_WL,
                    level: IOPRIO_NORM as u8,
                });
                self.by_pid.insert(pos, (pid, idx as u32));
                idx
            }
        }
    }

    fn ioc_of(r: &Request) -> usize {
        r.elv_priv[P_IOC] as usize
    }

    /// `fiops_update_min_vios`.
    fn update_min_vios(&mut self, st: usize) {
        if let Some(first) = self.trees[st].tree.first() {
            let v = self.iocs[first as usize].vios;
            let t = &mut self.trees[st];
            t.min_vios = t.min_vios.max(v);
        }
    }

    /// `fiops_service_tree_add`.
    fn service_tree_add(&mut self, i: usize) {
        let st = self.iocs[i].wl;
        let ioc = &self.iocs[i];
        let vios = match ioc.tree {
            None if ioc.in_flight > 0 => ioc.vios,
            None => self.trees[st].min_vios.max(ioc.vios),
            Some(old) => {
                let v = ioc.vios;
                self.trees[old].tree.remove(i as u32);
                v
            }
        };
        self.trees[st].tree.insert(vios, i as u32);
        self.iocs[i].tree = Some(st);
        self.iocs[i].vios = vios;
        self.update_min_vios(st);
    }

    /// `fiops_del_ioc_from_rr`.
    fn del_from_rr(&mut self, i: usize) {
        self.iocs[i].on_rr = false;
        if let Some(st) = self.iocs[i].tree.take() {
            self.trees[st].tree.remove(i as u32);
        }
        self.busy_queues -= 1;
    }

    /// `fiops_remove_request`.
    fn remove_request(&mut self, i: usize, rq: RqId) {
        self.iocs[i].fifo.remove(rq);
        self.iocs[i].sort.remove(rq);
        self.queued -= 1;
    }

    /// `fiops_select_ioc`.
    fn select_ioc(&self, ctx: &SchedCtx) -> Option<usize> {
        let st = [RT_WL, BE_WL, IDLE_WL]
            .into_iter()
            .find(|&w| !self.trees[w].tree.is_empty())?;
        let tree = &self.trees[st].tree;
        let head_sync = |i: u32| {
            let rq = self.iocs[i as usize]
                .fifo
                .front()
                .expect("ioc on tree has requests");
            ctx.rq(rq).sync
        };
        let mut ioc = tree.first()?;
        if !head_sync(ioc) && self.in_flight[1] != 0 && tree.len() == 1 {
            return None;
        }
        if !head_sync(ioc) && tree.len() > 1 {
            let mut tmp = tree.successor(ioc);
            let mut sync_ioc = None;
            let mut found = false;
            while let Some(t) = tmp {
                sync_ioc = Some(t);
                if head_sync(t) {
                    found = true;
                    break;
                }
                tmp = tree.successor(t);
            }
            if let Some(s) = sync_ioc {
                if found || self.tun.rightmost_fallback {
                    ioc = s;
                }
            }
        }
        Some(ioc as usize)
    }
}

fn wl_type(class: IoClass) -> usize {
    match class {
        IoClass::Rt => RT_WL,
        IoClass::Be => BE_WL,
        IoClass::Idle => IDLE_WL,
    }
}

impl Elevator for Fiops {
    fn name(&self) -> &str {
        "fiops"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let (pid, prio, sector, now) = {
            let r = ctx.rq(rq);
            (r.pid, r.ioprio, r.sector, ctx.now)
        };
        let i = self.lookup_or_create(pid);
        // fiops_init_prio_data
        self.iocs[i].wl = wl_type(prio.class);
        self.iocs[i].level = prio.level;
        ctx.set_elv_priv(rq, P_IOC, i as u64);
        ctx.set_fifo_time(rq, now);
        self.iocs[i].fifo.push_back(rq);
        self.iocs[i].sort.insert(sector, rq);
        self.queued += 1;
        if !self.iocs[i].on_rr {
            self.iocs[i].on_rr = true;
            self.busy_queues += 1;
            self.service_tree_add(i);
        }
    }

    fn merge_lookup(&mut self, _ctx: &mut SchedCtx, bio: &Bio) -> Option<RqId> {
        let i = self.lookup(bio.pid)?;
        self.iocs[i].sort.find(bio.end())
    }

    fn allow_merge(&self, ctx: &SchedCtx, rq: RqId, bio: &Bio) -> bool {
        self.lookup(bio.pid) == Some(Self::ioc_of(ctx.rq(rq)))
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            let r = ctx.rq(rq);
            let i = Self::ioc_of(r);
            self.iocs[i].sort.reposition(rq, r.sector);
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let ri = Self::ioc_of(ctx.rq(rq));
        let ni = Self::ioc_of(ctx.rq(next));
        if self.iocs[ri].fifo.contains(rq)
            && self.iocs[ni].fifo.contains(next)
            && ctx.rq(next).fifo_time < ctx.rq(rq).fifo_time
        {
            self.iocs[ri].fifo.remove(rq);
            self.iocs[ni].fifo.insert_after(next, rq);
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        self.remove_request(ni, next);
        if self.iocs[ni].on_rr && self.iocs[ni].sort.is_empty() {
            self.del_from_rr(ni);
        }
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.iocs[Self::ioc_of(ctx.rq(rq))].sort.predecessor(rq)
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.iocs[Self::ioc_of(ctx.rq(rq))].sort.successor(rq)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        if self.busy_queues == 0 {
            return None;
        }
        let i = self.select_ioc(ctx)?;
        let rq = self.iocs[i].fifo.front()?;
        self.remove_request(i, rq);
        let r = ctx.rq(rq);
        let (sync, write) = (r.sync, r.dir() == 1);
        self.in_flight[sync as usize] += 1;
        self.iocs[i].in_flight += 1;
        // fiops_charge_vios
        let v = self.scaled_vios(write, sync, self.iocs[i].level);
        let st = self.iocs[i].tree.expect("dispatching ioc is on a tree");
        self.iocs[i].vios += v;
        if self.iocs[i].sort.is_empty() {
            self.del_from_rr(i);
        } else {
            self.service_tree_add(i);
        }
        self.update_min_vios(st);
        Some(rq)
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let r = ctx.rq(rq);
        let i = Self::ioc_of(r);
        let s = r.sync as usize;
        self.in_flight[s] = self.in_flight[s].saturating_sub(1);
        self.iocs[i].in_flight = self.iocs[i].in_flight.saturating_sub(1);
        // When nothing is in flight the kernel kicks dispatch; the block
        // layer runs the queue after every completion anyway.
    }

    fn has_work(&self) -> bool {
        self.queued != 0
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = FiopsTunables::default();
        let t = &self.tun;
        let scale = |name, v: u32, dv: u32, help| TunableInfo {
            name,
            value: v.to_string(),
            default: dv.to_string(),
            unit: "factor",
            help,
        };
        vec![
            scale(
                "read_scale",
                t.read_scale,
                d.read_scale,
                "cost divisor of a write (write cost x write_scale/read_scale), 1-100",
            ),
            scale(
                "write_scale",
                t.write_scale,
                d.write_scale,
                "cost multiplier of a write, 1-100",
            ),
            scale(
                "sync_scale",
                t.sync_scale,
                d.sync_scale,
                "cost divisor of async I/O (async cost x async_scale/sync_scale), 1-100",
            ),
            scale(
                "async_scale",
                t.async_scale,
                d.async_scale,
                "cost multiplier of async I/O, 1-100",
            ),
            TunableInfo {
                name: "rightmost_fallback",
                value: (t.rightmost_fallback as u8).to_string(),
                default: (d.rightmost_fallback as u8).to_string(),
                unit: "bool",
                help: "quirk switch: 1 (as shipped) = an async head with no sync ioc to its right \
                       dispatches from the rightmost (highest-vios) ioc; 0 = keep the lowest-vios ioc",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        match name {
            "read_scale" => self.tun.read_scale = v.u32(1, 100)?,
            "write_scale" => self.tun.write_scale = v.u32(1, 100)?,
            "sync_scale" => self.tun.sync_scale = v.u32(1, 100)?,
            "async_scale" => self.tun.async_scale = v.u32(1, 100)?,
            "rightmost_fallback" => self.tun.rightmost_fallback = v.bool()?,
            _ => return Err(TunableError::unknown("fiops", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, layer, params, serve, with_prio, Direct};
    use mmcsim_elevator::types::Op;

    fn pid_of(d: &Direct, rq: RqId) -> u32 {
        d.rqs[rq].pid
    }

    /// A reproducible "random" sector sequence.
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) % 10_000_000
    }

    #[test]
    fn cost_table() {
        let f = Fiops::new(&params(1000));
        assert_eq!(f.scaled_vios(false, true, 4), 1024);
        assert_eq!(f.scaled_vios(true, true, 4), 1024);
        assert_eq!(f.scaled_vios(true, false, 4), 2560);
        assert_eq!(f.scaled_vios(false, true, 0), 205);
        assert_eq!(f.scaled_vios(false, true, 7), 1638);
        assert_eq!(f.scaled_vios(false, true, 6), 1433);
        assert_eq!(f.scaled_vios(true, false, 0), 512);
        // Charged at dispatch.
        let mut e = Fiops::new(&params(1000));
        let mut d = Direct::new();
        d.add(&mut e, 0, with_prio(bio(Op::Read, 0, 1), IoClass::Be, 0));
        d.add(&mut e, 0, bio(Op::Write, 800, 2));
        let r = d.dispatch(&mut e, 0).unwrap();
        e.completed(&mut d.ctx(0), r);
        d.dispatch(&mut e, 0).unwrap();
        assert_eq!((e.vios(1), e.vios(2)), (Some(205), Some(2560)));
    }

    #[test]
    fn two_sync_readers_same_level_get_equal_counts_whatever_the_size() {
        let mut e = Fiops::new(&params(1000));
        let mut d = Direct::new();
        let mut seed = 7;
        for _ in 0..200 {
            d.add(&mut e, 0, bio(Op::Read, lcg(&mut seed), 1));
            let mut big = bio(Op::Read, lcg(&mut seed), 2);
            big.sectors = 512;
            d.add(&mut e, 0, big);
        }
        let mut n = [0u32; 3];
        for _ in 0..200 {
            let rq = d.dispatch(&mut e, 0).unwrap();
            n[pid_of(&d, rq) as usize] += 1;
        }
        assert_eq!((n[1], n[2]), (100, 100));
    }

    #[test]
    fn levels_zero_and_seven_about_eight_to_one() {
        let mut e = Fiops::new(&params(1000));
        let mut d = Direct::new();
        for i in 0..1000 {
            d.add(
                &mut e,
                0,
                with_prio(bio(Op::Read, 64 * i, 1), IoClass::Be, 0),
            );
            d.add(
                &mut e,
                0,
                with_prio(bio(Op::Read, (1 << 30) | (64 * i), 2), IoClass::Be, 7),
            );
        }
        let mut n = [0u32; 3];
        for _ in 0..900 {
            let rq = d.dispatch(&mut e, 0).unwrap();
            n[pid_of(&d, rq) as usize] += 1;
        }
        let ratio = n[1] as f64 / n[2] as f64;
        assert!((7.5..8.5).contains(&ratio), "{n:?}");
    }

    #[test]
    fn async_writer_only_when_reader_idle_and_no_sync_in_flight() {
        let mut e = Fiops::new(&params(1000));
        let mut d = Direct::new();
        for i in 0..10 {
            d.add(&mut e, 0, bio(Op::Write, 1_000_000 + 64 * i, 9));
        }
        let r1 = d.add(&mut e, 0, bio(Op::Read, 0, 1));
        // The writer is leftmost (equal vios, older), but its head is
        // async: the reader's sync head preempts.
        assert_eq!(d.dispatch(&mut e, 0), Some(r1));
        // Reader empty, its read in flight: the lone async writer waits.
        assert_eq!(d.dispatch(&mut e, 0), None);
        e.completed(&mut d.ctx(0), r1);
        let w = d.dispatch(&mut e, 0).unwrap();
        assert_eq!(pid_of(&d, w), 9);
        assert_eq!(e.vios(9), Some(2560));
        // The reader rejoins at max(min_vios, own) = 2560 (right of the
        // writer), yet is served first.
        let r2 = d.add(&mut e, 0, bio(Op::Read, 64, 1));
        assert_eq!(e.vios(1), Some(2560));
        assert_eq!(d.dispatch(&mut e, 0), Some(r2));
        assert_eq!(d.dispatch(&mut e, 0), None);
        // An async write in flight does not hold the writer back.
        e.completed(&mut d.ctx(0), r2);
        for _ in 0..2 {
            let w = d.dispatch(&mut e, 0).unwrap();
            assert_eq!(pid_of(&d, w), 9);
        }
    }

    #[test]
    fn two_async_only_iocs() {
        let run = |fallback: &str| {
            let mut e = Fiops::new(&params(1000));
            e.set_tunable("rightmost_fallback", fallback).unwrap();
            let mut d = Direct::new();
            for i in 0..30 {
                d.add(&mut e, 0, bio(Op::Write, 64 * i, 8));
                d.add(&mut e, 0, bio(Op::Write, (1 << 30) | (64 * i), 9));
            }
            (0..20)
                .map(|_| {
                    let rq = d.dispatch(&mut e, 0).unwrap();
                    pid_of(&d, rq)
                })
                .collect::<Vec<u32>>()
        };
        // Fixed: 1:1, alternating.
        let fixed = run("0");
        assert_eq!(fixed.iter().filter(|&&p| p == 8).count(), 10);
        assert_eq!(fixed[..4], [8, 9, 8, 9]);
        // As shipped: with no sync head anywhere the walk ends on the
        // rightmost ioc, which stays rightmost after being charged: it
        // takes every dispatch until it runs dry.
        assert_eq!(run("1"), vec![9; 20]);
    }

    #[test]
    fn front_merge_and_allow_merge_only_within_the_submitters_ioc() {
        let mut b = layer(1000, |p| Box::new(Fiops::new(p)));
        b.submit_bio(0, bio(Op::Write, 100, 1), false); // last_merge
        b.submit_bio(0, bio(Op::Write, 500, 1), false);
        b.submit_bio(0, bio(Op::Write, 492, 2), false); // other pid: no merge
                                                        // Ends at 492, but that request is pid 2's: pid 1's tree has none.
        b.submit_bio(0, bio(Op::Write, 484, 1), false);
        assert_eq!(b.stats().front_merges, 0);
        // pid 2's own lookup finds its 492.
        b.submit_bio(0, bio(Op::Write, 484, 2), false);
        assert_eq!(b.stats().front_merges, 1);
        b.submit_bio(0, bio(Op::Write, 108, 2), false); // back merge vetoed
        assert_eq!(b.stats().back_merges, 0);
        let n = std::iter::from_fn(|| serve(&mut b, 0)).count();
        assert_eq!(n, 5);
    }

    #[test]
    fn tunables_defaults_and_validation() {
        for hz in [1000, 100] {
            let f = Fiops::new(&params(hz));
            let got: Vec<(&str, String)> = f
                .tunables()
                .into_iter()
                .map(|t| (t.name, t.default))
                .collect();
            let want = [
                ("read_scale", "1"),
                ("write_scale", "1"),
                ("sync_scale", "2"),
                ("async_scale", "5"),
                ("rightmost_fallback", "1"),
            ];
            let want: Vec<(&str, String)> = want.iter().map(|&(n, v)| (n, v.to_string())).collect();
            assert_eq!(got, want);
        }
        let mut f = Fiops::new(&params(1000));
        assert!(f.set_tunable("read_scale", "0").is_err());
        assert!(f.set_tunable("async_scale", "101").is_err());
        f.set_tunable("write_scale", "3").unwrap();
        assert_eq!(f.scaled_vios(true, true, 4), 3072);
        let e = f.set_tunable("slice_idle", "0").unwrap_err().to_string();
        assert!(
            e.contains(
                "valid: read_scale, write_scale, sync_scale, async_scale, rightmost_fallback"
            ),
            "{e}"
        );
    }
}
