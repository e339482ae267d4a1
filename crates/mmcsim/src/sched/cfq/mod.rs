//! CFQ — Completely Fair Queueing, as in Linux 3.4 `cfq-iosched.c`
//! (reference io-schedulers.md §4), single cgroup (the root group, weight
//! 1000).
//!
//! * One sync queue per process (`Request::pid`); async queues shared per
//!   (class, level), one for the IDLE class. Each queue has a sector tree, a
//!   FIFO, `next_rq`, slice bookkeeping, a 32-request seek history and (sync
//!   queues) the process's think time.
//! * Busy queues sit on service trees [BE, RT] × [ASYNC, SYNC_NOIDLE, SYNC]
//!   plus one IDLE tree, ordered by `rb_key`; per-level trees keyed by the
//!   next request's sector find close cooperators.
//! * Dispatch selects a queue (`cfq_select_queue`, steps 1–9 of §4.3),
//!   checks the dispatch limits (`cfq_may_dispatch`) and takes the FIFO
//!   head (if expired, once per slice) or `next_rq`. Idling uses the
//!   scheduler timer.
//!
//! All times are kept in jiffies at the queue's `hz`, like the kernel
//! (HZ=1000 ⇒ 1 jiffy = 1 ms); the idle timer fires at the first nanosecond
//! of its jiffy.
//!
//! Modelling notes (simplifications relative to the kernel):
//! * A sync write is treated as `REQ_NOIDLE` (the kernel's `WRITE_SYNC`);
//!   the bio carries no separate NOIDLE flag.
//! * Tasks never exit (the simulator has no exit notification), so queues
//!   persist for their pid; the process think time (`cic->ttime`) lives in
//!   its sync queue and starts with it.
//! * Cooperating queues are switched to but never merged into one shared
//!   queue (`cfq_setup_merge` / `cfq_merge_cfqqs` are not modelled). The
//!   close-cooperator lookup checks the exact hit, then the nearer and the
//!   farther sector neighbour (the kernel's rb-tree parent walk visits the
//!   same two neighbours, in tree-shape order).
//! * Group vdisktime is not modelled (one group); its saved workload
//!   context, dispatched count and think time are.
//! * A request–request merge across two queues (possible only for plug
//!   flush merges) inherits the older FIFO time but keeps its FIFO position.
//! * `rq_in_driver` is counted by the scheduler from `activate` to
//!   `completed` (so `hw_tag` samples see the depth before the completion,
//!   as in the kernel).
//! * sysfs stores clamp out-of-range values; here they are rejected with
//!   the accepted range, like the other schedulers of the simulator.
//!
//! Simulator switches: `hw_tag` (−1 detect, 0/1 forced) and
//! `nonrot_slice_idle_zero` (the oneplus variant).

mod queue;

impl Cfq {
    /// A tunable kept in jiffies, shown in ms.
    fn ms_info(&self, name: &'static str, v: u64, dv: u64, help: &'static str) -> TunableInfo {
        TunableInfo {
            name,
            value: self.fmt_ms(v),
            default: self.fmt_ms(dv),
            unit: "ms",
            help,
        }
    }

    /// The tunables of dispatch and the FIFOs, in sysfs order.
    fn dispatch_tunables(&self) -> Vec<TunableInfo> {
        let d = CfqTunables::defaults(self.params.hz);
        let t = &self.tun;
        let ms = |name, v, dv, help| self.ms_info(name, v, dv, help);
        vec![
            num(
                "quantum",
                t.quantum as u64,
                d.quantum as u64,
                "requests",
                "dispatch depth; a queue is throttled at quantum/2 in flight",
            ),
            ms(
                "fifo_expire_sync",
                t.fifo_expire[1],
                d.fifo_expire[1],
                "sync request age before it is served out of order (HZ/8)",
            ),
            ms(
                "fifo_expire_async",
                t.fifo_expire[0],
                d.fifo_expire[0],
                "async request age before it is served out of order (HZ/4)",
            ),
            num(
                "back_seek_max",
                t.back_seek_max,
                d.back_seek_max,
                "KiB",
                "longest backward seek the elevator accepts",
            ),
            num(
                "back_seek_penalty",
                t.back_seek_penalty,
                d.back_seek_penalty,
                "factor",
                "cost multiplier of a backward seek",
            ),
        ]
    }

    /// The tunables of slices, idling and latency, in sysfs order.
    fn slice_tunables(&self) -> Vec<TunableInfo> {
        let d = CfqTunables::defaults(self.params.hz);
        let t = &self.tun;
        let ms = |name, v, dv, help| self.ms_info(name, v, dv, help);
        vec![
            ms(
                "slice_sync",
                t.slice[1],
                d.slice[1],
                "base time slice of a sync queue (HZ/10)",
            ),
            ms(
                "slice_async",
                t.slice[0],
                d.slice[0],
                "base time slice of an async queue (HZ/25)",
            ),
            num(
                "slice_async_rq",
                t.slice_async_rq as u64,
                d.slice_async_rq as u64,
                "requests",
                "async dispatches per slice: 2*slice_async_rq*(8-level)",
            ),
            ms(
                "slice_idle",
                t.slice_idle,
                self.default_slice_idle(),
                "idle wait for a sync queue's next request (HZ/125, at least 1 jiffy)",
            ),
            ms(
                "group_idle",
                t.group_idle,
                d.group_idle,
                "idle wait for the group's next request (HZ/125, at least 1 jiffy)",
            ),
            num(
                "low_latency",
                t.low_latency as u64,
                d.low_latency as u64,
                "bool",
                "scale slices down so all queues fit target_latency",
            ),
            ms(
                "target_latency",
                t.target_latency,
                d.target_latency,
                "latency target for low_latency slice scaling (3*HZ/10)",
            ),
            TunableInfo {
                name: "hw_tag",
                value: t.hw_tag.to_string(),
                default: d.hw_tag.to_string(),
                unit: "-1|0|1",
                help: "simulator: -1 detect queuing like the kernel; 0/1 force it (on non-rotational queues 0 allows idling, 1 forbids it; rotational queues idle either way)",
            },
            num(
                "nonrot_slice_idle_zero",
                t.nonrot_slice_idle_zero as u64,
                d.nonrot_slice_idle_zero as u64,
                "bool",
                "simulator: 1 = oneplus tree (slice_idle 0 on non-rotational queues), 0 = samsung_jf (keeps HZ/125)",
            ),
        ]
    }
}

/// A tunable shown as a number in `unit`.
fn num(name: &'static str, v: u64, dv: u64, unit: &'static str, help: &'static str) -> TunableInfo {
    TunableInfo {
        name,
        value: v.to_string(),
        default: dv.to_string(),
        unit,
        help,
    }
}

#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::collections::BTreeMap;

pub use queue::{choose_req, Cand, CfqQueue, SeekRule, Ttime};
use queue::{
    sample_valid, tree_index, ServiceTree, ASYNC_WL, BE_WL, IDLE_TREE, IDLE_WL, NONE, RT_WL,
    SYNC_NOIDLE_WL, SYNC_WL,
};

use mmcsim_elevator::tunable::UINT_MAX;
use mmcsim_elevator::types::{IoClass, IoPrio, Ns, Op, NS_PER_S};
use mmcsim_elevator::{
    Bio, Elevator, MayQueue, MergeKind, RqId, SchedCtx, SchedParams, TunableError, TunableInfo,
    TunableValue,
};

/// `CFQ_HW_QUEUE_MIN`.
const HW_QUEUE_MIN: u32 = 5;
/// The texts the `hw_tag` tunable accepts: -1 detect, 0 off, 1 on.
const HW_TAG_CHOICES: [(&str, i32); 3] = [("-1", -1), ("0", 0), ("1", 1)];
/// `CFQQ_CLOSE_THR`: sectors within which a request counts as close.
const CLOSE_THR: u64 = 8 * 1024;
/// `CFQQ_SEEK_THR` (rotational).
const SEEK_THR: u64 = 8 * 100;
/// `CFQQ_SECT_THR_NONROT`: on non-rotational queues a request smaller than
/// this counts as a seek.
const SECT_THR_NONROT: u64 = 2 * 32;
/// `CFQ_MIN_TT`: shortest workload slice, jiffies.
const MIN_TT: u64 = 2;
/// `PAGE_CACHE_SIZE` in sectors.
const PAGE_SECTORS: u32 = 8;

/// `time_before(a, b)` on jiffies (wrapping, like `unsigned long`).
fn tb(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// `time_after(a, b)`.
fn ta(a: u64, b: u64) -> bool {
    tb(b, a)
}

/// Tunables of CFQ in kernel units (jiffies for times) plus the simulator
/// switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfqTunables {
    /// `quantum`: dispatch depth; a queue is throttled at `quantum/2`.
    pub quantum: u32,
    /// `fifo_expire_async`, `fifo_expire_sync` (jiffies), by `[sync]`.
    pub fifo_expire: [u64; 2],
    /// `back_seek_max`, KiB.
    pub back_seek_max: u64,
    /// `back_seek_penalty`.
    pub back_seek_penalty: u64,
    /// `slice_async`, `slice_sync` (jiffies), by `[sync]`.
    pub slice: [u64; 2],
    /// `slice_async_rq`.
    pub slice_async_rq: u32,
    /// `slice_idle`, jiffies.
    pub slice_idle: u64,
    /// `group_idle`, jiffies.
    pub group_idle: u64,
    /// `low_latency`.
    pub low_latency: bool,
    /// `target_latency`, jiffies.
    pub target_latency: u64,
    /// Simulator: `hw_tag` −1 = detect (kernel), 0/1 = forced.
    pub hw_tag: i32,
    /// Simulator: oneplus variant, `slice_idle` = 0 on non-rotational
    /// queues.
    pub nonrot_slice_idle_zero: bool,
}

impl CfqTunables {
    /// The kernel defaults at tick rate `hz` (module init clamps
    /// `slice_async`, `slice_idle` and `group_idle` to at least 1 jiffy).
    pub fn defaults(hz: u32) -> Self {
        let hz = hz as u64;
        CfqTunables {
            quantum: 8,
            fifo_expire: [hz / 4, hz / 8],
            back_seek_max: 16 * 1024,
            back_seek_penalty: 2,
            slice: [(hz / 25).max(1), hz / 10],
            slice_async_rq: 2,
            slice_idle: (hz / 125).max(1),
            group_idle: (hz / 125).max(1),
            low_latency: true,
            target_latency: hz * 3 / 10,
            hw_tag: -1,
            nonrot_slice_idle_zero: false,
        }
    }
}

/// The CFQ elevator.
pub struct Cfq {
    params: SchedParams,
    tun: CfqTunables,
    /// Current jiffies, refreshed at each hook.
    j: u64,
    queues: Vec<CfqQueue>,
    /// Sync queue of each pid.
    sync_map: BTreeMap<u32, u32>,
    /// Async queues `[RT, BE][level]` (`async_cfqq`).
    async_q: [[u32; 8]; 2],
    /// The IDLE-class async queue.
    async_idle: u32,
    /// Service trees: `prio * 3 + type` for BE/RT, then IDLE.
    trees: [ServiceTree; 7],
    /// Close-cooperator trees by level: `(next_rq sector, queue)`.
    prio_trees: [Vec<(u64, u32)>; 8],
    // --- the root group ---
    /// `nr_cfqq`: busy queues of the group.
    nr_cfqq: u32,
    /// `busy_queues_avg[wl_prio]`.
    busy_queues_avg: [u32; 3],
    saved_wl_slice: u64,
    saved_wl_type: usize,
    saved_wl_prio: usize,
    /// Requests of the group in flight.
    grp_dispatched: u32,
    grp_ttime: Ttime,
    // --- cfq_data ---
    serving_prio: usize,
    serving_type: usize,
    workload_expires: u64,
    busy_queues: u32,
    busy_sync_queues: u32,
    rq_in_driver: u32,
    rq_in_flight: [u32; 2],
    rq_queued: u32,
    hw_tag: i32,
    hw_tag_est_depth: u32,
    hw_tag_samples: u32,
    active: Option<u32>,
    /// `active_cic`: pid of the first request dispatched in this slice.
    active_cic: Option<u32>,
    last_position: u64,
    last_delayed_sync: u64,
    /// `must_alloc_slice` of the active queue (set from `may_queue`).
    must_alloc_given: Cell<bool>,
    /// A forced drain is in progress.
    forcing: bool,
}

impl Cfq {
    /// A new CFQ scheduler with the kernel defaults at `params.hz`.
    pub fn new(params: &SchedParams) -> Self {
        let tun = CfqTunables::defaults(params.hz);
        Cfq {
            params: *params,
            tun,
            j: 0,
            queues: Vec::with_capacity(64),
            sync_map: BTreeMap::new(),
            async_q: [[NONE; 8]; 2],
            async_idle: NONE,
            trees: std::array::from_fn(|_| ServiceTree::new()),
            prio_trees: std::array::from_fn(|_| Vec::with_capacity(32)),
            nr_cfqq: 0,
            busy_queues_avg: [0; 3],
            saved_wl_slice: 0,
            saved_wl_type: ASYNC_WL,
            saved_wl_prio: BE_WL,
            grp_dispatched: 0,
            grp_ttime: Ttime::new(0),
            serving_prio: BE_WL,
            serving_type: ASYNC_WL,
            workload_expires: 0,
            busy_queues: 0,
            busy_sync_queues: 0,
            rq_in_driver: 0,
            rq_in_flight: [0; 2],
            rq_queued: 0,
            hw_tag: -1,
            hw_tag_est_depth: 0,
            hw_tag_samples: 0,
            active: None,
            active_cic: None,
            last_position: 0,
            last_delayed_sync: 0u64.wrapping_sub(params.hz as u64),
            must_alloc_given: Cell::new(false),
            forcing: false,
        }
    }

    /// Current tunables (kernel units).
    pub fn tunables_raw(&self) -> CfqTunables {
        self.tun
    }

    /// The detected `hw_tag` (−1 undecided, 0 no queuing, 1 queuing).
    pub fn hw_tag_detected(&self) -> i32 {
        self.hw_tag
    }

    /// `hw_tag` as the idling rules see it: the forced value, else the
    /// detected one.
    fn hw_tag(&self) -> i32 {
        if self.tun.hw_tag >= 0 {
            self.tun.hw_tag
        } else {
            self.hw_tag
        }
    }

    /// `blk_queue_nonrot(q) && cfqd->hw_tag`: −1 counts as true.
    fn nonrot_queuing(&self) -> bool {
        self.params.nonrot && self.hw_tag() != 0
    }

    fn tick(&mut self, ctx: &SchedCtx) {
        self.j = self.params.jiffies(ctx.now);
    }

    /// First nanosecond of jiffy `j`.
    fn jiffy_ns(&self, j: u64) -> Ns {
        ((j as u128 * NS_PER_S as u128).div_ceil(self.params.hz as u128)) as Ns
    }

    fn qi_of(ctx: &SchedCtx, rq: RqId) -> u32 {
        ctx.rq(rq).elv_priv[0] as u32
    }

    fn q(&self, qi: u32) -> &CfqQueue {
        &self.queues[qi as usize]
    }

    fn qm(&mut self, qi: u32) -> &mut CfqQueue {
        &mut self.queues[qi as usize]
    }

    // ------------------------------------------------------------------
    // Queue lookup and creation.

    fn async_slot(&self, prio: IoPrio) -> u32 {
        match prio.class {
            IoClass::Rt => self.async_q[0][prio.level.min(7) as usize],
            IoClass::Be => self.async_q[1][prio.level.min(7) as usize],
            IoClass::Idle => self.async_idle,
        }
    }

    /// The queue a bio of `pid` would go to, without creating it
    /// (`cic_to_cfqq`).
    fn lookup_queue(&self, pid: u32, sync: bool, prio: IoPrio) -> Option<u32> {
        let qi = if sync {
            self.sync_map.get(&pid).copied().unwrap_or(NONE)
        } else {
            self.async_slot(prio)
        };
        (qi != NONE).then_some(qi)
    }

    /// `cfq_get_queue`: finds or creates the queue of a request.
    fn get_queue(&mut self, pid: u32, sync: bool, prio: IoPrio) -> u32 {
        if let Some(qi) = self.lookup_queue(pid, sync, prio) {
            if sync {
                // cfq_init_prio_data after an ioprio change.
                let q = self.qm(qi);
                let level = if prio.class == IoClass::Idle {
                    7
                } else {
                    prio.level.min(7)
                };
                if q.class != prio.class || q.level != level {
                    q.set_prio(prio.class, prio.level);
                    q.org_level = q.level;
                }
            }
            return qi;
        }
        let qi = self.queues.len() as u32;
        let q = CfqQueue::new(
            if sync { pid } else { u32::MAX },
            sync,
            prio.class,
            prio.level.min(7),
            self.j,
        );
        self.queues.push(q);
        if sync {
            self.sync_map.insert(pid, qi);
        } else {
            match prio.class {
                IoClass::Rt => self.async_q[0][prio.level.min(7) as usize] = qi,
                IoClass::Be => self.async_q[1][prio.level.min(7) as usize] = qi,
                IoClass::Idle => self.async_idle = qi,
            }
        }
        qi
    }

    // ------------------------------------------------------------------
    // Slices and workloads.

    /// `cfq_prio_slice`: base + base/5 × (4 − level).
    fn prio_slice(&self, sync: bool, level: u8) -> u64 {
        let base = self.tun.slice[sync as usize] as i64;
        (base + base / 5 * (4 - level as i64)).max(0) as u64
    }

    fn busy_wl(&self, wl: usize) -> u32 {
        if wl == IDLE_WL {
            return self.trees[IDLE_TREE].count() as u32;
        }
        (0..3)
            .map(|t| self.trees[tree_index(wl, t)].count() as u32)
            .sum()
    }

    fn busy_async(&self) -> u32 {
        (self.trees[tree_index(RT_WL, ASYNC_WL)].count()
            + self.trees[tree_index(BE_WL, ASYNC_WL)].count()) as u32
    }

    /// `cfq_group_get_avg_queues`: decaying average of busy queues of the
    /// class (RT or not).
    fn avg_queues(&mut self, rt: bool) -> u32 {
        let wl = if rt { RT_WL } else { BE_WL };
        let busy = self.busy_wl(wl);
        let avg = self.busy_queues_avg[wl];
        let (mn, mx) = (avg.min(busy), avg.max(busy));
        self.busy_queues_avg[wl] = (3 * mx + mn + 2) / 4;
        self.busy_queues_avg[wl]
    }

    /// `cfq_group_slice`: the root group gets the whole target latency.
    fn group_slice(&self) -> u64 {
        self.tun.target_latency
    }

    /// `cfq_scaled_cfqq_slice`: the priority slice, scaled down under
    /// `low_latency` so all interested queues fit the target latency.
    fn scaled_slice(&mut self, qi: u32) -> u64 {
        let (sync, level, rt) = {
            let q = self.q(qi);
            (q.f.sync, q.level, q.class_rt())
        };
        let mut slice = self.prio_slice(sync, level);
        if self.tun.low_latency {
            let iq = self.avg_queues(rt) as u64;
            let sync_slice = self.tun.slice[1];
            let expect_latency = sync_slice * iq;
            let group_slice = self.group_slice();
            if expect_latency > group_slice {
                let base_low_slice = 2 * self.tun.slice_idle;
                let low_slice = slice.min(base_low_slice * slice / sync_slice.max(1));
                slice = (slice * group_slice / expect_latency).max(low_slice);
            }
        }
        slice
    }

    /// `cfq_set_prio_slice`: the slice starts now.
    fn set_prio_slice(&mut self, qi: u32) {
        let slice = self.scaled_slice(qi);
        let j = self.j;
        let q = self.qm(qi);
        q.slice_start = j;
        q.slice_end = j + slice;
        q.allocated_slice = slice;
    }

    /// `cfq_slice_used`.
    fn slice_used(&self, qi: u32) -> bool {
        let q = self.q(qi);
        !(q.f.slice_new || tb(self.j, q.slice_end))
    }

    /// `cfq_slice_used_soon`.
    fn slice_used_soon(&self, qi: u32) -> bool {
        let q = self.q(qi);
        q.f.slice_new
            || ta(
                self.j + self.tun.slice_idle * q.dispatched as u64,
                q.slice_end,
            )
    }

    /// `cfq_prio_to_maxrq`: async dispatches per slice.
    fn prio_to_maxrq(&self, qi: u32) -> u32 {
        2 * self.tun.slice_async_rq * (8 - self.q(qi).level as u32)
    }

    /// `cfq_choose_wl`: the workload type whose leftmost queue has the
    /// lowest `rb_key`.
    fn choose_wl(&self, prio: usize) -> usize {
        let mut best = SYNC_NOIDLE_WL;
        let mut lowest: Option<i64> = None;
        for ty in 0..=SYNC_WL {
            if let Some(&(key, _)) = self.trees[tree_index(prio, ty)].entries.first() {
                if lowest.is_none_or(|l| key < l) {
                    lowest = Some(key);
                    best = ty;
                }
            }
        }
        best
    }

    /// `choose_service_tree`: class, workload type and workload slice.
    fn choose_service_tree(&mut self) {
        let original = self.serving_prio;
        if self.busy_wl(RT_WL) > 0 {
            self.serving_prio = RT_WL;
        } else if self.busy_wl(BE_WL) > 0 {
            self.serving_prio = BE_WL;
        } else {
            self.serving_prio = IDLE_WL;
            self.workload_expires = self.j + 1;
            return;
        }
        if original == self.serving_prio {
            let count = self.trees[tree_index(self.serving_prio, self.serving_type)].count();
            if count > 0 && !ta(self.j, self.workload_expires) {
                return;
            }
        }
        self.serving_type = self.choose_wl(self.serving_prio);
        let count = self.trees[tree_index(self.serving_prio, self.serving_type)].count() as u64;
        let group_slice = self.group_slice();
        let denom = self.busy_queues_avg[self.serving_prio].max(self.busy_wl(self.serving_prio));
        let mut slice = group_slice * count / (denom.max(1) as u64);
        if self.serving_type == ASYNC_WL {
            let tmp = self.tun.target_latency * self.busy_async() as u64
                / (self.busy_queues.max(1) as u64);
            slice = slice.min(tmp);
            slice = slice * self.tun.slice[0] / self.tun.slice[1].max(1);
        } else {
            slice = slice.max(2 * self.tun.slice_idle);
        }
        slice = slice.max(MIN_TT);
        self.workload_expires = self.j + slice;
    }

    /// `cfq_choose_cfqg`: restore the group's saved workload, then choose
    /// the service tree.
    fn choose_cfqg(&mut self) {
        if self.saved_wl_slice > 0 {
            self.workload_expires = self.j + self.saved_wl_slice;
            self.serving_type = self.saved_wl_type;
            self.serving_prio = self.saved_wl_prio;
        } else {
            self.workload_expires = self.j.wrapping_sub(1);
        }
        self.choose_service_tree();
    }

    // ------------------------------------------------------------------
    // Service trees and the busy list.

    /// `cfq_service_tree_add`.
    fn service_tree_add(&mut self, qi: u32, add_front: bool) {
        let j = self.j as i64;
        let (st, idle, sync, level, resid) = {
            let q = self.q(qi);
            (
                tree_index(q.wl_prio(), q.wl_type()),
                q.class_idle(),
                q.f.sync,
                q.level,
                q.slice_resid,
            )
        };
        let rb_key = if idle {
            let delay = (self.params.hz / 5) as i64; // CFQ_IDLE_DELAY
            match self.trees[st].entries.last() {
                Some(&(key, last)) if last != qi => delay + key,
                _ => delay + j,
            }
        } else if !add_front {
            let offset = (self.nr_cfqq as i64 - 1)
                * (self.prio_slice(true, 0) as i64 - self.prio_slice(sync, level) as i64);
            self.qm(qi).slice_resid = 0;
            offset + j - resid
        } else {
            let hz = self.params.hz as i64;
            -hz + self.trees[st].entries.first().map_or(j, |e| e.0)
        };
        let mut new = true;
        if let Some(old) = self.q(qi).st {
            new = false;
            if rb_key == self.q(qi).rb_key && old == st {
                return;
            }
            let key = self.q(qi).rb_key;
            self.trees[old].remove(key, qi);
            self.qm(qi).st = None;
        }
        self.trees[st].insert(rb_key, qi);
        let q = self.qm(qi);
        q.rb_key = rb_key;
        q.st = Some(st);
        if add_front || !new {
            return;
        }
        self.nr_cfqq += 1;
    }

    fn prio_tree_remove(&mut self, qi: u32) {
        if let Some(root) = self.qm(qi).p_root.take() {
            let t = &mut self.prio_trees[root];
            if let Some(i) = t.iter().position(|e| e.1 == qi) {
                t.remove(i);
            }
        }
    }

    /// `cfq_prio_tree_add`: (re)insert under the next request's sector; a
    /// queue whose sector is already present stays out.
    fn prio_tree_add(&mut self, ctx: &SchedCtx, qi: u32) {
        self.prio_tree_remove(qi);
        let q = self.q(qi);
        if q.class_idle() {
            return;
        }
        let Some(next) = q.next_rq else {
            return;
        };
        let key = ctx.rq(next).sector;
        let root = q.org_level as usize;
        let t = &mut self.prio_trees[root];
        let pos = t.partition_point(|e| e.0 < key);
        if t.get(pos).is_some_and(|e| e.0 == key) {
            return;
        }
        t.insert(pos, (key, qi));
        self.qm(qi).p_root = Some(root);
    }

    /// `cfq_resort_rr_list`.
    fn resort_rr_list(&mut self, ctx: &SchedCtx, qi: u32) {
        if self.q(qi).f.on_rr {
            self.service_tree_add(qi, false);
            self.prio_tree_add(ctx, qi);
        }
    }

    /// `cfq_add_cfqq_rr`.
    fn add_cfqq_rr(&mut self, ctx: &SchedCtx, qi: u32) {
        let q = self.qm(qi);
        q.f.on_rr = true;
        let sync = q.f.sync;
        self.busy_queues += 1;
        if sync {
            self.busy_sync_queues += 1;
        }
        self.resort_rr_list(ctx, qi);
    }

    /// `cfq_del_cfqq_rr`.
    fn del_cfqq_rr(&mut self, qi: u32) {
        self.qm(qi).f.on_rr = false;
        if let Some(st) = self.qm(qi).st.take() {
            let key = self.q(qi).rb_key;
            self.trees[st].remove(key, qi);
        }
        self.prio_tree_remove(qi);
        // cfq_group_notify_queue_del
        self.nr_cfqq -= 1;
        if self.nr_cfqq == 0 {
            self.saved_wl_slice = 0;
        }
        self.busy_queues -= 1;
        if self.q(qi).f.sync {
            self.busy_sync_queues -= 1;
        }
    }

    // ------------------------------------------------------------------
    // Requests in a queue.

    fn cand(ctx: &SchedCtx, rq: Option<RqId>) -> Option<Cand> {
        rq.map(|id| {
            let r = ctx.rq(id);
            Cand {
                id,
                sector: r.sector,
                sync: r.sync,
                prio: r.prio,
            }
        })
    }

    fn seek_rule(&self) -> SeekRule {
        SeekRule {
            back_max_kib: self.tun.back_seek_max,
            penalty: self.tun.back_seek_penalty,
        }
    }

    /// `cfq_find_next_rq`: the better of `last`'s sector neighbours (the
    /// successor wrapping to the first request).
    fn find_next_rq(&self, ctx: &SchedCtx, qi: u32, last: RqId) -> Option<RqId> {
        let q = self.q(qi);
        let prev = q.sort.predecessor(last);
        let next = q
            .sort
            .successor(last)
            .or_else(|| q.sort.first().filter(|&f| f != last));
        choose_req(
            self.seek_rule(),
            Self::cand(ctx, next),
            Self::cand(ctx, prev),
            ctx.rq(last).sector,
        )
        .map(|c| c.id)
    }

    /// `cfq_add_rq_rb`.
    fn add_rq_rb(&mut self, ctx: &SchedCtx, rq: RqId) {
        let qi = Self::qi_of(ctx, rq);
        let (sync, sector) = (ctx.rq(rq).sync, ctx.rq(rq).sector);
        let q = self.qm(qi);
        q.queued[sync as usize] += 1;
        q.sort.insert(sector, rq);
        if !q.f.on_rr {
            self.add_cfqq_rr(ctx, qi);
        }
        let prev = self.q(qi).next_rq;
        let next = choose_req(
            self.seek_rule(),
            Self::cand(ctx, prev),
            Self::cand(ctx, Some(rq)),
            self.last_position,
        )
        .map(|c| c.id);
        self.qm(qi).next_rq = next;
        if prev != next {
            self.prio_tree_add(ctx, qi);
        }
    }

    /// `cfq_del_rq_rb`.
    fn del_rq_rb(&mut self, ctx: &SchedCtx, rq: RqId) {
        let qi = Self::qi_of(ctx, rq);
        let sync = ctx.rq(rq).sync as usize;
        let q = self.qm(qi);
        q.queued[sync] -= 1;
        q.sort.remove(rq);
        if q.f.on_rr && q.empty() {
            self.prio_tree_remove(qi);
        }
    }

    /// `cfq_remove_request`.
    fn remove_request(&mut self, ctx: &SchedCtx, rq: RqId) {
        let qi = Self::qi_of(ctx, rq);
        if self.q(qi).next_rq == Some(rq) {
            let n = self.find_next_rq(ctx, qi, rq);
            self.qm(qi).next_rq = n;
        }
        self.qm(qi).fifo.remove(rq);
        self.del_rq_rb(ctx, rq);
        self.rq_queued -= 1;
        if ctx.rq(rq).prio {
            let q = self.qm(qi);
            q.prio_pending = q.prio_pending.saturating_sub(1);
        }
    }

    /// `cfq_dispatch_insert`: the request leaves the scheduler.
    fn dispatch_insert(&mut self, ctx: &SchedCtx, rq: RqId) {
        let qi = Self::qi_of(ctx, rq);
        let n = self.find_next_rq(ctx, qi, rq);
        self.qm(qi).next_rq = n;
        self.remove_request(ctx, rq);
        let q = self.qm(qi);
        q.dispatched += 1;
        let sync = q.f.sync as usize;
        self.grp_dispatched += 1;
        self.rq_in_flight[sync] += 1;
    }

    // ------------------------------------------------------------------
    // Idling.

    /// Think time of the active io context (`active_cic->ttime`): the
    /// process's sync queue, or no samples.
    fn cic_ttime(&self) -> Option<Ttime> {
        let pid = self.active_cic?;
        Some(
            self.sync_map
                .get(&pid)
                .map_or(Ttime::default(), |&qi| self.q(qi).ttime),
        )
    }

    /// `cfq_should_idle`.
    fn should_idle(&self, qi: u32) -> bool {
        let q = self.q(qi);
        let Some(st) = q.st else {
            return false;
        };
        if self.tun.slice_idle == 0 || q.class_idle() {
            return false;
        }
        if q.f.idle_window && !self.nonrot_queuing() {
            return true;
        }
        let tree = &self.trees[st];
        tree.count() == 1 && q.f.sync && !tree.ttime.big(self.tun.slice_idle)
    }

    /// `cfq_arm_slice_timer`.
    fn arm_slice_timer(&mut self, ctx: &mut SchedCtx) {
        let Some(qi) = self.active else {
            return;
        };
        if self.nonrot_queuing() {
            return;
        }
        let mut group_idle = 0;
        if !self.should_idle(qi) {
            if self.tun.group_idle > 0 {
                group_idle = self.tun.group_idle;
            } else {
                return;
            }
        }
        if self.q(qi).dispatched > 0 {
            return;
        }
        let Some(tt) = self.cic_ttime() else {
            return;
        };
        let left = self.q(qi).slice_end.wrapping_sub(self.j);
        if sample_valid(tt.samples) && left < tt.mean {
            return;
        }
        if group_idle > 0 && self.nr_cfqq > 1 {
            return;
        }
        self.qm(qi).f.wait_request = true;
        let sl = if group_idle > 0 {
            group_idle
        } else {
            self.tun.slice_idle
        };
        ctx.set_timer(self.jiffy_ns(self.j + sl));
    }

    /// `cfq_should_wait_busy`.
    fn should_wait_busy(&self, qi: u32) -> bool {
        let q = self.q(qi);
        if !q.empty() || self.nr_cfqq > 1 || self.grp_ttime.big(self.tun.group_idle) {
            return false;
        }
        if self.slice_used(qi) {
            return true;
        }
        let left = q.slice_end.wrapping_sub(self.j);
        if let Some(tt) = self.cic_ttime() {
            if sample_valid(tt.samples) && left < tt.mean {
                return true;
            }
        }
        left == 1
    }

    /// `cfq_close_cooperator`: a sync, non-seeky queue of the same class
    /// whose next request is within 8192 sectors of the head.
    fn close_cooperator(&self, ctx: &SchedCtx, cur: u32) -> Option<u32> {
        let c = self.q(cur);
        if c.class_idle() || !c.f.sync || c.seeky() || self.nr_cfqq == 1 {
            return None;
        }
        let found = self.queue_close(ctx, cur)?;
        let f = self.q(found);
        if !f.f.sync || f.seeky() || f.class_rt() != c.class_rt() {
            return None;
        }
        Some(found)
    }

    /// `cfqq_close`: the exact hit at the head position, else the nearer
    /// then the farther sector neighbour in the level's tree, if close.
    fn queue_close(&self, ctx: &SchedCtx, cur: u32) -> Option<u32> {
        let t = &self.prio_trees[self.q(cur).org_level as usize];
        if t.is_empty() {
            return None;
        }
        let sector = self.last_position;
        let pos = t.partition_point(|e| e.0 < sector);
        if let Some(&(k, qi)) = t.get(pos) {
            if k == sector && qi != cur {
                return Some(qi);
            }
        }
        let floor = pos.checked_sub(1).map(|i| t[i]);
        let ceil = t.get(pos).copied();
        let mut cands = [floor, ceil];
        if let (Some(f), Some(c)) = (floor, ceil) {
            if c.0 - sector < sector - f.0 {
                cands = [ceil, floor];
            }
        }
        cands.into_iter().flatten().find_map(|(_, qi)| {
            let next = self.q(qi).next_rq?;
            (qi != cur && ctx.rq(next).sector.abs_diff(sector) <= CLOSE_THR).then_some(qi)
        })
    }

    // ------------------------------------------------------------------
    // Active queue.

    /// `__cfq_set_active_queue`.
    fn set_active_queue(&mut self, ctx: &mut SchedCtx, qi: Option<u32>) -> Option<u32> {
        if let Some(qi) = qi {
            let q = self.qm(qi);
            q.slice_start = 0;
            q.allocated_slice = 0;
            q.slice_end = 0;
            q.slice_dispatch = 0;
            q.f.wait_request = false;
            q.f.must_dispatch = false;
            q.f.fifo_expire = false;
            q.f.slice_new = true;
            self.must_alloc_given.set(false);
            ctx.cancel_timer();
        }
        self.active = qi;
        qi
    }

    /// `cfq_get_next_queue`: the leftmost queue of the serving tree.
    fn get_next_queue(&self) -> Option<u32> {
        if self.rq_queued == 0 {
            return None;
        }
        self.trees[tree_index(self.serving_prio, self.serving_type)].first()
    }

    /// `__cfq_slice_expired` of the active queue.
    fn slice_expired(&mut self, ctx: &mut SchedCtx, timed_out: bool) {
        let Some(qi) = self.active else {
            return;
        };
        if self.q(qi).f.wait_request {
            ctx.cancel_timer();
        }
        {
            let q = self.qm(qi);
            q.f.wait_request = false;
            q.f.wait_busy = false;
        }
        if timed_out {
            let resid = if self.q(qi).f.slice_new {
                self.scaled_slice(qi) as i64
            } else {
                self.q(qi).slice_end.wrapping_sub(self.j) as i64
            };
            self.qm(qi).slice_resid = resid;
        }
        // cfq_group_served: save the workload context.
        if ta(self.workload_expires, self.j) {
            self.saved_wl_slice = self.workload_expires.wrapping_sub(self.j);
            self.saved_wl_type = self.serving_type;
            self.saved_wl_prio = self.serving_prio;
        } else {
            self.saved_wl_slice = 0;
        }
        if self.q(qi).f.on_rr && self.q(qi).empty() {
            self.del_cfqq_rr(qi);
        }
        self.resort_rr_list(ctx, qi);
        self.active = None;
        self.active_cic = None;
    }

    /// `cfq_select_queue`: keep the active queue, wait for it, or expire it
    /// and pick the next one (§4.3 steps 1–9).
    fn select_queue(&mut self, ctx: &mut SchedCtx) -> Option<u32> {
        let Some(qi) = self.active else {
            return self.new_queue(ctx, None);
        };
        if self.rq_queued == 0 {
            return None;
        }
        // 1. Waiting for the group to get busy, and it did.
        if self.q(qi).f.wait_busy && !self.q(qi).empty() {
            return self.expire_and_new(ctx, None);
        }
        if self.slice_used(qi) && !self.q(qi).f.must_dispatch {
            // 2. Slice used: wait only for the group's only queue.
            let q = self.q(qi);
            if self.nr_cfqq == 1 && q.empty() && q.dispatched > 0 && self.should_idle(qi) {
                return None;
            }
        } else {
            // 3. Has requests.
            if !self.q(qi).empty() {
                return Some(qi);
            }
            // 4. Close cooperator.
            if let Some(n) = self.close_cooperator(ctx, qi) {
                return self.expire_and_new(ctx, Some(n));
            }
            // 5. Idle timer pending.
            if ctx.timer().is_some() {
                return None;
            }
            // 6. A seeky queue early in its slice loses its idle window.
            let j = self.j;
            let q = self.qm(qi);
            if q.seeky()
                && q.f.idle_window
                && (q.f.slice_new || q.slice_end.wrapping_sub(j) > j.wrapping_sub(q.slice_start))
            {
                q.f.deep = false;
                q.f.idle_window = false;
            }
            // 7. Requests in flight and should idle.
            if self.q(qi).dispatched > 0 && self.should_idle(qi) {
                return None;
            }
        }
        // 8. Group idle.
        if self.tun.group_idle > 0
            && self.nr_cfqq == 1
            && self.grp_dispatched > 0
            && !self.grp_ttime.big(self.tun.group_idle)
        {
            return None;
        }
        // 9. Expire and choose anew.
        self.expire_and_new(ctx, None)
    }

    fn expire_and_new(&mut self, ctx: &mut SchedCtx, new: Option<u32>) -> Option<u32> {
        self.slice_expired(ctx, false);
        self.new_queue(ctx, new)
    }

    fn new_queue(&mut self, ctx: &mut SchedCtx, new: Option<u32>) -> Option<u32> {
        if new.is_none() {
            self.choose_cfqg();
        }
        let qi = new.or_else(|| self.get_next_queue());
        self.set_active_queue(ctx, qi)
    }

    /// `cfq_may_dispatch`: the dispatch limits.
    fn may_dispatch(&self, qi: u32) -> bool {
        let q = self.q(qi);
        if self.should_idle(qi) && self.rq_in_flight[0] > 0 {
            return false;
        }
        if self.rq_in_flight[1] > 0 && !q.f.sync {
            return false;
        }
        let mut max_dispatch = (self.tun.quantum / 2).max(1);
        if q.class_idle() {
            max_dispatch = 1;
        }
        if q.dispatched >= max_dispatch {
            if q.class_idle() {
                return false;
            }
            let promote_sync = q.f.sync && self.busy_sync_queues == 1;
            if self.busy_queues > 1 && self.slice_used_soon(qi) && !promote_sync {
                return false;
            }
            max_dispatch = if self.busy_queues == 1 || promote_sync {
                u32::MAX
            } else {
                self.tun.quantum
            };
        }
        if !q.f.sync && self.tun.low_latency {
            let last_sync = self.j.wrapping_sub(self.last_delayed_sync);
            let mut depth = (last_sync / self.tun.slice[1].max(1)).min(u32::MAX as u64) as u32;
            if depth == 0 && q.dispatched == 0 {
                depth = 1;
            }
            max_dispatch = max_dispatch.min(depth);
        }
        q.dispatched < max_dispatch
    }

    /// `cfq_check_fifo`: the FIFO head if expired; looked at once per slice.
    fn check_fifo(&mut self, ctx: &SchedCtx, qi: u32) -> Option<RqId> {
        let q = self.qm(qi);
        if q.f.fifo_expire {
            return None;
        }
        q.f.fifo_expire = true;
        let head = q.fifo.front()?;
        let expiry = self.params.jiffies(ctx.rq(head).fifo_time);
        (!tb(self.j, expiry)).then_some(head)
    }

    /// `cfq_dispatch_request`.
    fn dispatch_request(&mut self, ctx: &SchedCtx, qi: u32) -> Option<RqId> {
        if !self.may_dispatch(qi) {
            return None;
        }
        let rq = match self.check_fifo(ctx, qi) {
            Some(rq) => rq,
            None => self.q(qi).next_rq?,
        };
        self.dispatch_insert(ctx, rq);
        if self.active_cic.is_none() {
            self.active_cic = Some(ctx.rq(rq).pid);
        }
        Some(rq)
    }

    /// `cfq_forced_dispatch`, one request per call.
    fn forced_dispatch(&mut self, ctx: &mut SchedCtx) -> Option<RqId> {
        if !self.forcing {
            self.forcing = true;
            self.slice_expired(ctx, false);
        }
        loop {
            if let Some(qi) = self.active {
                if let Some(rq) = self.q(qi).next_rq {
                    self.dispatch_insert(ctx, rq);
                    return Some(rq);
                }
                self.slice_expired(ctx, false);
            }
            if self.rq_queued == 0 {
                self.forcing = false;
                return None;
            }
            let next = self.trees.iter().find_map(|t| t.first());
            next?;
            self.set_active_queue(ctx, next);
        }
    }

    // ------------------------------------------------------------------
    // Enqueue path.

    /// `cfq_update_io_seektime`.
    fn update_seek(&mut self, qi: u32, sector: u64, sectors: u32) {
        let nonrot = self.params.nonrot;
        let q = self.qm(qi);
        let sdist = if q.last_request_pos != 0 {
            q.last_request_pos.abs_diff(sector)
        } else {
            0
        };
        q.seek_history <<= 1;
        let seek = if nonrot {
            (sectors as u64) < SECT_THR_NONROT
        } else {
            sdist > SEEK_THR
        };
        q.seek_history |= seek as u32;
    }

    /// `cfq_update_idle_window`.
    fn update_idle_window(&mut self, ctx: &SchedCtx, qi: u32) {
        let slice_idle = self.tun.slice_idle;
        let q = self.qm(qi);
        if !q.f.sync || q.class_idle() {
            return;
        }
        let mut enable = q.f.idle_window;
        if q.queued[0] + q.queued[1] >= 4 {
            q.f.deep = true;
        }
        // REQ_NOIDLE: a sync write (WRITE_SYNC).
        let noidle = q.next_rq.is_some_and(|r| ctx.rq(r).op != Op::Read);
        if noidle || slice_idle == 0 || (!q.f.deep && q.seeky()) {
            enable = false;
        } else if sample_valid(q.ttime.samples) {
            enable = q.ttime.mean <= slice_idle;
        }
        q.f.idle_window = enable;
    }

    /// `cfq_should_preempt`: may the new request's queue `nq` take over
    /// from the active queue?
    fn should_preempt(&self, ctx: &SchedCtx, nq: u32, rq: RqId) -> bool {
        let Some(aq) = self.active else {
            return false;
        };
        let (n, a, r) = (self.q(nq), self.q(aq), ctx.rq(rq));
        if n.class_idle() {
            return false;
        }
        if a.class_idle() {
            return true;
        }
        if a.class_rt() && !n.class_rt() {
            return false;
        }
        if r.sync && !a.f.sync {
            return true;
        }
        // (same group: always, with the root group only)
        if self.slice_used(aq) {
            return true;
        }
        if self.serving_type == SYNC_NOIDLE_WL
            && n.wl_type() == SYNC_NOIDLE_WL
            && n.st.is_some_and(|st| self.trees[st].count() == 2)
            && a.empty()
        {
            return true;
        }
        if r.prio && a.prio_pending == 0 {
            return true;
        }
        if n.class_rt() && !a.class_rt() {
            return true;
        }
        if a.empty() && !self.should_idle(aq) {
            return true;
        }
        if self.active_cic.is_none() || !a.f.wait_request {
            return false;
        }
        r.sector.abs_diff(self.last_position) <= CLOSE_THR
    }

    /// `cfq_preempt_queue`: the new queue goes first with a fresh slice.
    fn preempt_queue(&mut self, ctx: &mut SchedCtx, qi: u32) {
        let old_type = self.active.map(|a| self.q(a).wl_type());
        self.slice_expired(ctx, true);
        if old_type != Some(self.q(qi).wl_type()) {
            self.saved_wl_slice = 0;
        }
        self.service_tree_add(qi, true);
        let q = self.qm(qi);
        q.slice_end = 0;
        q.f.slice_new = true;
    }

    /// `cfq_rq_enqueued`.
    fn rq_enqueued(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let qi = Self::qi_of(ctx, rq);
        let (prio, sector, sectors) = {
            let r = ctx.rq(rq);
            (r.prio, r.sector, r.sectors)
        };
        self.rq_queued += 1;
        if prio {
            self.qm(qi).prio_pending += 1;
        }
        // cfq_update_io_thinktime
        let (j, si, gi) = (self.j, self.tun.slice_idle, self.tun.group_idle);
        if self.q(qi).f.sync {
            self.qm(qi).ttime.update(j, si);
            if let Some(st) = self.q(qi).st {
                self.trees[st].ttime.update(j, si);
            }
        }
        self.grp_ttime.update(j, gi);
        self.update_seek(qi, sector, sectors);
        self.update_idle_window(ctx, qi);
        self.qm(qi).last_request_pos = sector + sectors as u64;

        if self.active == Some(qi) {
            if self.q(qi).f.wait_request {
                if sectors > PAGE_SECTORS || self.busy_queues > 1 {
                    ctx.cancel_timer();
                    self.qm(qi).f.wait_request = false;
                } else {
                    self.qm(qi).f.must_dispatch = true;
                }
            }
        } else if self.should_preempt(ctx, qi, rq) {
            self.preempt_queue(ctx, qi);
        }
    }

    /// `cfq_update_hw_tag`, sampled at each completion.
    fn update_hw_tag(&mut self) {
        self.hw_tag_est_depth = self.hw_tag_est_depth.max(self.rq_in_driver);
        if self.hw_tag == 1 {
            return;
        }
        if self.rq_queued <= HW_QUEUE_MIN && self.rq_in_driver <= HW_QUEUE_MIN {
            return;
        }
        if let Some(a) = self.active {
            let q = self.q(a);
            if q.f.idle_window
                && q.dispatched + q.queued[0] + q.queued[1] < HW_QUEUE_MIN
                && self.rq_in_driver < HW_QUEUE_MIN
            {
                return;
            }
        }
        let s = self.hw_tag_samples;
        self.hw_tag_samples += 1;
        if s < 50 {
            return;
        }
        self.hw_tag = if self.hw_tag_est_depth >= HW_QUEUE_MIN {
            1
        } else {
            0
        };
    }

    fn fmt_ms(&self, j: u64) -> String {
        self.params.jiffies_to_ms(j).to_string()
    }

    /// `slice_idle` default: 0 on non-rotational queues in the oneplus
    /// variant, else `HZ/125` (at least 1).
    fn default_slice_idle(&self) -> u64 {
        if self.tun.nonrot_slice_idle_zero && self.params.nonrot {
            0
        } else {
            CfqTunables::defaults(self.params.hz).slice_idle
        }
    }
}

impl Elevator for Cfq {
    fn name(&self) -> &str {
        "cfq"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        self.tick(ctx);
        let (pid, sync, prio) = {
            let r = ctx.rq(rq);
            (r.pid, r.sync, r.ioprio)
        };
        let qi = self.get_queue(pid, sync, prio);
        ctx.set_elv_priv(rq, 0, qi as u64);
        let expiry = self.j + self.tun.fifo_expire[sync as usize];
        ctx.set_fifo_time(rq, self.jiffy_ns(expiry));
        self.qm(qi).fifo.push_back(rq);
        self.add_rq_rb(ctx, rq);
        self.rq_enqueued(ctx, rq);
    }

    fn merge_lookup(&mut self, _ctx: &mut SchedCtx, bio: &Bio) -> Option<RqId> {
        let sync = bio.sync || bio.op == Op::Read;
        let qi = self.lookup_queue(bio.pid, sync, bio.ioprio)?;
        self.q(qi).sort.find(bio.end())
    }

    fn allow_merge(&self, ctx: &SchedCtx, rq: RqId, bio: &Bio) -> bool {
        let sync = bio.sync || bio.op == Op::Read;
        if sync && !ctx.rq(rq).sync {
            return false;
        }
        self.lookup_queue(bio.pid, sync, bio.ioprio) == Some(Self::qi_of(ctx, rq))
    }

    fn merged(&mut self, ctx: &mut SchedCtx, rq: RqId, kind: MergeKind) {
        if kind == MergeKind::Front {
            self.tick(ctx);
            // cfq_reposition_rq_rb
            let qi = Self::qi_of(ctx, rq);
            let sync = ctx.rq(rq).sync as usize;
            let q = self.qm(qi);
            q.sort.remove(rq);
            q.queued[sync] -= 1;
            self.add_rq_rb(ctx, rq);
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        self.tick(ctx);
        let (qr, qn) = (Self::qi_of(ctx, rq), Self::qi_of(ctx, next));
        let older = tb(
            self.params.jiffies(ctx.rq(next).fifo_time),
            self.params.jiffies(ctx.rq(rq).fifo_time),
        );
        if older && self.q(qr).fifo.contains(rq) && self.q(qn).fifo.contains(next) {
            if qr == qn {
                let q = self.qm(qr);
                q.fifo.remove(rq);
                q.fifo.insert_after(next, rq);
            }
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        if self.q(qr).next_rq == Some(next) {
            self.qm(qr).next_rq = Some(rq);
        }
        self.remove_request(ctx, next);
        let q = self.q(qn);
        if q.f.on_rr && q.empty() && self.active != Some(qn) {
            self.del_cfqq_rr(qn);
        }
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.q(Self::qi_of(ctx, rq)).sort.predecessor(rq)
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        self.q(Self::qi_of(ctx, rq)).sort.successor(rq)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, force: bool) -> Option<RqId> {
        self.tick(ctx);
        if force {
            return self.forced_dispatch(ctx);
        }
        self.forcing = false;
        if self.busy_queues == 0 {
            return None;
        }
        let qi = self.select_queue(ctx)?;
        let rq = self.dispatch_request(ctx, qi)?;
        let q = self.qm(qi);
        q.slice_dispatch += 1;
        q.f.must_dispatch = false;
        let (sync, idle, sd) = (q.f.sync, q.class_idle(), q.slice_dispatch);
        if self.busy_queues > 1 && ((!sync && sd >= self.prio_to_maxrq(qi)) || idle) {
            self.qm(qi).slice_end = self.j + 1;
            self.slice_expired(ctx, false);
        }
        Some(rq)
    }

    fn dispatch_sort(&self) -> bool {
        true
    }

    fn activate(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        self.rq_in_driver += 1;
        self.last_position = ctx.rq(rq).end();
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        self.tick(ctx);
        let j = self.j;
        let qi = Self::qi_of(ctx, rq);
        self.update_hw_tag();
        self.rq_in_driver = self.rq_in_driver.saturating_sub(1);
        let sync_q = {
            let q = self.qm(qi);
            q.dispatched = q.dispatched.saturating_sub(1);
            q.f.sync
        };
        self.grp_dispatched = self.grp_dispatched.saturating_sub(1);
        let f = &mut self.rq_in_flight[sync_q as usize];
        *f = f.saturating_sub(1);
        let r = ctx.rq(rq);
        if r.sync {
            self.qm(qi).ttime.last_end_request = j;
            let q = self.q(qi);
            let st = match (q.f.on_rr, q.st) {
                (true, Some(st)) => st,
                _ => tree_index(q.wl_prio(), q.wl_type()),
            };
            self.trees[st].ttime.last_end_request = j;
            let start = self.params.jiffies(r.start_ns);
            if !ta(start + self.tun.fifo_expire[1], j) {
                self.last_delayed_sync = j;
            }
        }
        self.grp_ttime.last_end_request = j;

        if self.active == Some(qi) {
            let empty = self.q(qi).empty();
            if self.q(qi).f.slice_new {
                self.set_prio_slice(qi);
                self.qm(qi).f.slice_new = false;
            }
            if self.should_wait_busy(qi) {
                let extend = if self.tun.slice_idle > 0 {
                    self.tun.slice_idle
                } else {
                    self.tun.group_idle
                };
                let q = self.qm(qi);
                q.slice_end = j + extend;
                q.f.wait_busy = true;
            }
            if self.slice_used(qi) || self.q(qi).class_idle() {
                self.slice_expired(ctx, true);
            } else if r.sync && empty && self.close_cooperator(ctx, qi).is_none() {
                self.arm_slice_timer(ctx);
            }
        }
    }

    fn may_queue(&self, _ctx: &SchedCtx, bio: &Bio) -> MayQueue {
        let sync = bio.sync || bio.op == Op::Read;
        match self.lookup_queue(bio.pid, sync, bio.ioprio) {
            Some(qi)
                if self.active == Some(qi)
                    && self.q(qi).f.wait_request
                    && !self.must_alloc_given.get() =>
            {
                self.must_alloc_given.set(true);
                MayQueue::Must
            }
            _ => MayQueue::May,
        }
    }

    fn on_timer(&mut self, ctx: &mut SchedCtx) {
        // cfq_idle_slice_timer
        self.tick(ctx);
        if let Some(qi) = self.active {
            if self.q(qi).f.must_dispatch {
                return;
            }
            if !self.slice_used(qi) {
                if self.busy_queues == 0 {
                    return;
                }
                if !self.q(qi).empty() {
                    return;
                }
                self.qm(qi).f.deep = false;
            }
        }
        self.slice_expired(ctx, false);
    }

    fn has_work(&self) -> bool {
        self.rq_queued > 0
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let mut v = self.dispatch_tunables();
        v.extend(self.slice_tunables());
        v
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let p = self.params;
        let v = TunableValue::new(name, value);
        let ms = |min: u64| v.ms_as_jiffies(&p, min, UINT_MAX);
        let n = |min: u64| v.u64(min, UINT_MAX);
        match name {
            "quantum" => self.tun.quantum = v.u32(1, UINT_MAX)?,
            "fifo_expire_sync" => self.tun.fifo_expire[1] = ms(1)?,
            "fifo_expire_async" => self.tun.fifo_expire[0] = ms(1)?,
            "back_seek_max" => self.tun.back_seek_max = n(0)?,
            "back_seek_penalty" => self.tun.back_seek_penalty = n(1)?,
            "slice_sync" => self.tun.slice[1] = ms(1)?,
            "slice_async" => self.tun.slice[0] = ms(1)?,
            "slice_async_rq" => self.tun.slice_async_rq = v.u32(1, UINT_MAX)?,
            "slice_idle" => self.tun.slice_idle = ms(0)?,
            "group_idle" => self.tun.group_idle = ms(0)?,
            "low_latency" => self.tun.low_latency = v.bool()?,
            "target_latency" => self.tun.target_latency = ms(1)?,
            "hw_tag" => self.tun.hw_tag = v.choice(&HW_TAG_CHOICES, "-1 (detect), 0 or 1")?,
            "nonrot_slice_idle_zero" => {
                self.tun.nonrot_slice_idle_zero = v.bool()?;
                self.tun.slice_idle = self.default_slice_idle();
            }
            _ => return Err(TunableError::unknown("cfq", name, &self.tunables())),
        }
        Ok(())
    }
}
