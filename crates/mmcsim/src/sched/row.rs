//! ROW — Read Over Write (CodeAurora/Qualcomm, the 2012–2014 Linux
//! Foundation version of msm8974 trees; reference io-schedulers.md §7).
//!
//! Seven FIFOs in three classes, served round-robin with per-queue quanta:
//! HIGH_READ, HIGH_SWRITE | REG_READ, REG_SWRITE, REG_WRITE | LOW_READ,
//! LOW_SWRITE. Queue of a request (`row_get_queue_prio`): class from its
//! ioprio (RT → HIGH, IDLE → LOW, NONE/BE → REG); reads to the class's read
//! queue, sync writes to its sync-write queue, and every async write to
//! REG_WRITE.
//!
//! Dispatch (§7.3): a pending urgent request first; then the class
//! (`row_get_ioprio_class_to_serve`): HIGH if any HIGH queue has requests
//! (cancelling idling) unless REG or LOW is over its starvation limit; with
//! the idle timer pending nothing; an unforced HIGH read queue with
//! `begin_idling` starts the idle timer; REG queues in order, idling on an
//! empty REG_READ with `begin_idling` *even if REG writes wait*; else LOW.
//! As in the kernel, an empty scheduler also goes through the idling checks
//! (so an empty queue can arm the timer). Within the class the first queue
//! with requests below its quantum is served; if none, the cycle restarts
//! (queues below quantum are marked unserved, counters reset, one rescan).
//! Requests go through dispatch-sort (§1.5).
//!
//! Idling (`rd_idle_data`, `rd_idle_data_freq`) is on HIGH_READ and
//! REG_READ only. In this version the idle timer is an hrtimer and the
//! times are kept in milliseconds (not jiffies), so HZ does not change them.
//!
//! Urgent (at most one pending or in flight): a read entering an empty
//! HIGH_READ when the last served class was not HIGH, or entering an
//! unserved HIGH_READ / REG_READ; it is marked REQ_URGENT
//! ([`Request::urgent`]). `row_urgent_pending` ([`Elevator::is_urgent`])
//! reports it while no urgent request is in the driver, so the block layer
//! notifies the driver, which may stop the write it has in flight (HPI,
//! msm-3.4 `mmc_urgent_request`) and give the write back:
//! `row_reinsert_req` ([`Elevator::reinsert_request`]) puts it at the head
//! of the queue it was dispatched from, as if never dispatched (a
//! re-inserted urgent request, which the kernel WARNs about, becomes the
//! pending urgent one again).
//!
//! [`Request::urgent`]: mmcsim_elevator::Request::urgent
//!
//! Merging: generic hash and one-hit cache only (no sector tree, so
//! `former`/`latter` find nothing).

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{IoClass, Ns, NS_PER_MS};
use mmcsim_elevator::{
    Elevator, FifoList, RqId, SchedCtx, SchedParams, TunableError, TunableInfo, TunableValue,
};

/// Queue indices (`enum row_queue_prio`).
pub const HIGH_READ: usize = 0;
/// RT sync writes.
pub const HIGH_SWRITE: usize = 1;
/// BE reads.
pub const REG_READ: usize = 2;
/// BE sync writes.
pub const REG_SWRITE: usize = 3;
/// Every async write.
pub const REG_WRITE: usize = 4;
/// IDLE reads.
pub const LOW_READ: usize = 5;
/// IDLE sync writes.
pub const LOW_SWRITE: usize = 6;
const NQ: usize = 7;
const REG_IDX: usize = 2;
const LOW_IDX: usize = 5;

/// `row_queues_def[].idling_enabled`.
const IDLING: [bool; NQ] = [true, false, true, false, false, false, false];
/// `row_queues_def[].is_urgent`.
const URGENT: [bool; NQ] = [true, false, true, false, false, false, false];

/// Served class (`last_served_ioprio_class` / class to serve).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    None,
    High,
    Reg,
    Low,
}

/// Tunables of ROW (quanta in requests per cycle, idle times in ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowTunables {
    /// `disp_quantum` per queue, in queue order.
    pub quantum: [u32; NQ],
    /// `rd_idle_data`: idle time, ms (10).
    pub rd_idle_data: u64,
    /// `rd_idle_data_freq`: inserts closer than this enable idling, ms (25).
    pub rd_idle_data_freq: u64,
    /// `reg_starv_limit`: HIGH dispatches a waiting REG class tolerates.
    pub reg_starv_limit: u32,
    /// `low_starv_limit`: HIGH/REG dispatches a waiting LOW class tolerates.
    pub low_starv_limit: u32,
}

impl Default for RowTunables {
    fn default() -> Self {
        RowTunables {
            quantum: [100, 5, 75, 4, 4, 3, 2],
            rd_idle_data: 10,
            rd_idle_data_freq: 25,
            reg_starv_limit: 5000,
            low_starv_limit: 10000,
        }
    }
}

#[derive(Clone, Debug)]
struct RowQueue {
    fifo: FifoList,
    nr_dispatched: u32,
    /// `idle_data.last_insert_time` (None: never; the kernel's zeroed
    /// ktime is seconds before any simulated insert).
    last_insert: Option<Ns>,
    begin_idling: bool,
}

/// The ROW elevator (`row-iosched.c`).
#[derive(Clone, Debug)]
pub struct Row {
    tun: RowTunables,
    q: [RowQueue; NQ],
    /// `nr_reqs[dir]`.
    nr_reqs: [u32; 2],
    /// Bit per queue: `row_mark_rowq_unserved`.
    unserved: u8,
    /// Queue being idled on while the timer is armed.
    idling_queue: Option<usize>,
    pending_urgent: Option<RqId>,
    urgent_in_flight: bool,
    last_served: Class,
    reg_starv: u32,
    low_starv: u32,
    urgent_dispatched: u64,
}

/// `elv_priv[0]`: queue index (REQ_URGENT is [`Request::urgent`]).
///
/// [`Request::urgent`]: mmcsim_elevator::Request::urgent
const P_QUEUE: usize = 0;

impl Row {
    /// A new ROW with the defaults (independent of `hz`).
    pub fn new(_params: &SchedParams) -> Self {
        let q = || RowQueue {
            fifo: FifoList::with_capacity(256),
            nr_dispatched: 0,
            last_insert: None,
            begin_idling: false,
        };
        Row {
            tun: RowTunables::default(),
            q: [q(), q(), q(), q(), q(), q(), q()],
            nr_reqs: [0; 2],
            unserved: 0,
            idling_queue: None,
            pending_urgent: None,
            urgent_in_flight: false,
            last_served: Class::None,
            reg_starv: 0,
            low_starv: 0,
            urgent_dispatched: 0,
        }
    }

    /// Current tunables.
    pub fn tunables_raw(&self) -> RowTunables {
        self.tun
    }

    /// Urgent requests dispatched so far.
    pub fn urgent_dispatched(&self) -> u64 {
        self.urgent_dispatched
    }

    /// `(reg, low)` starvation counters.
    pub fn starvation_counters(&self) -> (u32, u32) {
        (self.reg_starv, self.low_starv)
    }

    /// `row_get_queue_prio`.
    fn queue_prio(ctx: &SchedCtx, rq: RqId) -> usize {
        let r = ctx.rq(rq);
        let read = r.dir() == 0;
        match (r.ioprio.class, read, r.sync) {
            (_, false, false) => REG_WRITE,
            (IoClass::Rt, true, _) => HIGH_READ,
            (IoClass::Rt, false, _) => HIGH_SWRITE,
            (IoClass::Idle, true, _) => LOW_READ,
            (IoClass::Idle, false, _) => LOW_SWRITE,
            (IoClass::Be, true, _) => REG_READ,
            (IoClass::Be, false, _) => REG_SWRITE,
        }
    }

    fn total(&self) -> u32 {
        self.nr_reqs[0] + self.nr_reqs[1]
    }

    fn pending(&self, from: usize, to: usize) -> bool {
        self.q[from..to].iter().any(|q| !q.fifo.is_empty())
    }

    fn cancel_idling(&mut self, ctx: &mut SchedCtx) {
        if ctx.timer().is_some() {
            ctx.cancel_timer();
            self.idling_queue = None;
        }
    }

    /// `row_remove_request`.
    fn remove(&mut self, ctx: &SchedCtx, rq: RqId) {
        let qi = ctx.rq(rq).elv_priv[P_QUEUE] as usize;
        self.q[qi].fifo.remove(rq);
        if self.pending_urgent == Some(rq) {
            self.pending_urgent = None;
        }
        self.nr_reqs[ctx.rq(rq).dir()] -= 1;
    }

    /// `row_dispatch_insert`.
    fn dispatch_insert(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let qi = ctx.rq(rq).elv_priv[P_QUEUE] as usize;
        self.remove(ctx, rq);
        if ctx.rq(rq).urgent {
            self.urgent_in_flight = true;
            self.urgent_dispatched += 1;
        }
        self.q[qi].nr_dispatched += 1;
        self.unserved &= !(1 << qi);
        if qi < REG_IDX {
            self.last_served = Class::High;
            if self.pending(REG_IDX, LOW_IDX) {
                self.reg_starv += 1;
            }
            if self.pending(LOW_IDX, NQ) {
                self.low_starv += 1;
            }
        } else if qi < LOW_IDX {
            self.last_served = Class::Reg;
            self.reg_starv = 0;
            if self.pending(LOW_IDX, NQ) {
                self.low_starv += 1;
            }
        } else {
            self.last_served = Class::Low;
            self.low_starv = 0;
        }
    }

    fn start_idling(&mut self, ctx: &mut SchedCtx, qi: usize) -> Class {
        ctx.set_timer(ctx.now + self.tun.rd_idle_data * NS_PER_MS);
        self.idling_queue = Some(qi);
        Class::None
    }

    fn low_over_limit(&self) -> bool {
        self.pending(LOW_IDX, NQ) && self.low_starv >= self.tun.low_starv_limit
    }

    /// `row_get_ioprio_class_to_serve`.
    fn class_to_serve(&mut self, ctx: &mut SchedCtx, force: bool) -> Class {
        if self.total() != 0 {
            if self.pending(0, REG_IDX) {
                self.cancel_idling(ctx);
                return if self.pending(REG_IDX, LOW_IDX)
                    && self.reg_starv >= self.tun.reg_starv_limit
                {
                    Class::Reg
                } else if self.low_over_limit() {
                    Class::Low
                } else {
                    Class::High
                };
            }
            if ctx.timer().is_some() {
                return Class::None;
            }
        }
        // check_idling
        if !force {
            let high = (0..REG_IDX).find(|&i| self.q[i].begin_idling && IDLING[i]);
            if let Some(i) = high {
                return self.start_idling(ctx, i);
            }
        }
        for (i, &idling) in IDLING.iter().enumerate().take(LOW_IDX).skip(REG_IDX) {
            if self.q[i].fifo.is_empty() {
                if self.q[i].begin_idling && !force && idling {
                    return self.start_idling(ctx, i);
                }
            } else {
                return if self.low_over_limit() {
                    Class::Low
                } else {
                    Class::Reg
                };
            }
        }
        if self.total() != 0 {
            Class::Low
        } else {
            Class::None
        }
    }

    /// `row_get_next_queue`.
    fn next_queue(&mut self, start: usize, end: usize) -> Option<usize> {
        let mut i = start;
        let mut restart = true;
        while i < end {
            let q = &self.q[i];
            if q.fifo.is_empty() || q.nr_dispatched >= self.tun.quantum[i] {
                i += 1;
                if i == end && restart {
                    // row_restart_cycle
                    for j in start..end {
                        if self.q[j].nr_dispatched < self.tun.quantum[j] {
                            self.unserved |= 1 << j;
                        }
                        self.q[j].nr_dispatched = 0;
                    }
                    i = start;
                    restart = false;
                }
            } else {
                return Some(i);
            }
        }
        None
    }
}

impl Elevator for Row {
    fn name(&self) -> &str {
        "row"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let qi = Self::queue_prio(ctx, rq);
        let was_empty = self.q[qi].fifo.is_empty();
        self.q[qi].fifo.push_back(rq);
        self.nr_reqs[ctx.rq(rq).dir()] += 1;
        let now = ctx.now;
        ctx.set_elv_priv(rq, P_QUEUE, qi as u64);
        ctx.set_urgent(rq, false);
        ctx.set_fifo_time(rq, now);
        if IDLING[qi] {
            if self.idling_queue == Some(qi) && ctx.timer().is_some() {
                ctx.cancel_timer();
                self.idling_queue = None;
            }
            let q = &mut self.q[qi];
            q.begin_idling = q
                .last_insert
                .is_some_and(|t| (now - t) / NS_PER_MS < self.tun.rd_idle_data_freq);
            q.last_insert = Some(now);
        }
        if URGENT[qi] && self.pending_urgent.is_none() && !self.urgent_in_flight {
            let urgent = if qi < REG_IDX && self.last_served != Class::High && was_empty {
                true
            } else {
                self.unserved & (1 << qi) != 0
            };
            if urgent {
                ctx.set_urgent(rq, true);
                self.pending_urgent = Some(rq);
            }
        }
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let was_urgent = self.pending_urgent == Some(next);
        self.remove(ctx, next);
        if was_urgent {
            self.pending_urgent = Some(rq);
            ctx.set_urgent(rq, true);
        }
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, force: bool) -> Option<RqId> {
        if force {
            self.cancel_idling(ctx);
        }
        if let Some(rq) = self.pending_urgent {
            self.dispatch_insert(ctx, rq);
            return Some(rq);
        }
        let (start, end) = match self.class_to_serve(ctx, force) {
            Class::None => {
                self.last_served = Class::None;
                return None;
            }
            Class::High => (0, REG_IDX),
            Class::Reg => (REG_IDX, LOW_IDX),
            Class::Low => (LOW_IDX, NQ),
        };
        let qi = self.next_queue(start, end)?;
        let rq = self.q[qi].fifo.front()?;
        self.dispatch_insert(ctx, rq);
        Some(rq)
    }

    fn dispatch_sort(&self) -> bool {
        true
    }

    fn completed(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        if ctx.rq(rq).urgent {
            self.urgent_in_flight = false;
            ctx.set_urgent(rq, false);
        }
    }

    fn is_urgent(&self) -> Option<bool> {
        // row_urgent_pending
        Some(!self.urgent_in_flight && self.pending_urgent.is_some())
    }

    fn reinsert_request(&mut self, ctx: &mut SchedCtx, rq: RqId) -> bool {
        // row_reinsert_req: back at the head of its queue, not re-hashed.
        let qi = ctx.rq(rq).elv_priv[P_QUEUE] as usize;
        self.q[qi].fifo.push_front(rq);
        self.nr_reqs[ctx.rq(rq).dir()] += 1;
        if ctx.rq(rq).urgent && self.urgent_in_flight {
            self.urgent_in_flight = false;
            if let Some(old) = self.pending_urgent.replace(rq) {
                ctx.set_urgent(old, false);
            }
        }
        true
    }

    fn on_timer(&mut self, _ctx: &mut SchedCtx) {
        if let Some(qi) = self.idling_queue.take() {
            self.q[qi].begin_idling = false;
        }
    }

    fn has_work(&self) -> bool {
        self.total() != 0
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = RowTunables::default();
        let t = &self.tun;
        let quantum = |name, i: usize, help| TunableInfo {
            name,
            value: t.quantum[i].to_string(),
            default: d.quantum[i].to_string(),
            unit: "requests",
            help,
        };
        vec![
            quantum("hp_read_quantum", HIGH_READ, "RT reads per cycle"),
            quantum("hp_swrite_quantum", HIGH_SWRITE, "RT sync writes per cycle"),
            quantum("rp_read_quantum", REG_READ, "BE reads per cycle"),
            quantum("rp_swrite_quantum", REG_SWRITE, "BE sync writes per cycle"),
            quantum("rp_write_quantum", REG_WRITE, "async writes per cycle"),
            quantum("lp_read_quantum", LOW_READ, "IDLE reads per cycle"),
            quantum(
                "lp_swrite_quantum",
                LOW_SWRITE,
                "IDLE sync writes per cycle",
            ),
            TunableInfo {
                name: "rd_idle_data",
                value: t.rd_idle_data.to_string(),
                default: d.rd_idle_data.to_string(),
                unit: "ms",
                help: "idle time on an emptied HIGH_READ/REG_READ queue (hrtimer, not jiffies)",
            },
            TunableInfo {
                name: "rd_idle_data_freq",
                value: t.rd_idle_data_freq.to_string(),
                default: d.rd_idle_data_freq.to_string(),
                unit: "ms",
                help: "reads inserted closer together than this enable idling (0 disables)",
            },
            TunableInfo {
                name: "reg_starv_limit",
                value: t.reg_starv_limit.to_string(),
                default: d.reg_starv_limit.to_string(),
                unit: "dispatches",
                help: "HIGH dispatches while REG waits before REG is served",
            },
            TunableInfo {
                name: "low_starv_limit",
                value: t.low_starv_limit.to_string(),
                default: d.low_starv_limit.to_string(),
                unit: "dispatches",
                help: "HIGH/REG dispatches while LOW waits before LOW is served",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        let qi = match name {
            "hp_read_quantum" => Some(HIGH_READ),
            "hp_swrite_quantum" => Some(HIGH_SWRITE),
            "rp_read_quantum" => Some(REG_READ),
            "rp_swrite_quantum" => Some(REG_SWRITE),
            "rp_write_quantum" => Some(REG_WRITE),
            "lp_read_quantum" => Some(LOW_READ),
            "lp_swrite_quantum" => Some(LOW_SWRITE),
            _ => None,
        };
        if let Some(qi) = qi {
            self.tun.quantum[qi] = v.u32(1, INT_MAX)?;
            return Ok(());
        }
        match name {
            "rd_idle_data" => self.tun.rd_idle_data = v.u64(0, INT_MAX)?,
            "rd_idle_data_freq" => self.tun.rd_idle_data_freq = v.u64(0, INT_MAX)?,
            "reg_starv_limit" => self.tun.reg_starv_limit = v.u32(0, INT_MAX)?,
            "low_starv_limit" => self.tun.low_starv_limit = v.u32(0, INT_MAX)?,
            _ => return Err(TunableError::unknown("row", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, layer, params, swrite, with_prio, Direct, Rig};
    use mmcsim_elevator::types::Op;

    fn queue_of(d: &Direct, rq: RqId) -> usize {
        d.rqs[rq].elv_priv[P_QUEUE] as usize
    }

    #[test]
    fn queue_mapping_by_class_and_sync() {
        let mut e = Row::new(&params(1000));
        let mut d = Direct::new();
        let cases = [
            (with_prio(bio(Op::Read, 0, 1), IoClass::Rt, 0), HIGH_READ),
            (with_prio(swrite(100, 1), IoClass::Rt, 0), HIGH_SWRITE),
            (with_prio(bio(Op::Write, 200, 1), IoClass::Rt, 0), REG_WRITE),
            (bio(Op::Read, 300, 1), REG_READ),
            (swrite(400, 1), REG_SWRITE),
            (bio(Op::Write, 500, 1), REG_WRITE),
            (with_prio(bio(Op::Read, 600, 1), IoClass::Idle, 7), LOW_READ),
            (with_prio(swrite(700, 1), IoClass::Idle, 7), LOW_SWRITE),
            (
                with_prio(bio(Op::Write, 800, 1), IoClass::Idle, 7),
                REG_WRITE,
            ),
        ];
        for (b, want) in cases {
            let rq = d.add(&mut e, 0, b);
            assert_eq!(queue_of(&d, rq), want, "{b:?}");
        }
        assert!(e.dispatch_sort());
    }

    #[test]
    fn backlogged_cycle_is_75_reads_4_sync_writes_4_async_writes() {
        let mut e = Row::new(&params(1000));
        let mut d = Direct::new();
        for i in 0..300 {
            d.add(&mut e, 0, bio(Op::Read, 1_000_000 + 64 * i, 1));
        }
        for i in 0..20 {
            d.add(&mut e, 0, swrite(2_000_000 + 64 * i, 2));
            d.add(&mut e, 0, bio(Op::Write, 3_000_000 + 64 * i, 3));
        }
        let mut runs: Vec<(usize, u32)> = Vec::new();
        for _ in 0..3 * 83 {
            let rq = d.dispatch(&mut e, 0).unwrap();
            let qi = queue_of(&d, rq);
            match runs.last_mut() {
                Some((q, n)) if *q == qi => *n += 1,
                _ => runs.push((qi, 1)),
            }
        }
        let cycle = [(REG_READ, 75), (REG_SWRITE, 4), (REG_WRITE, 4)];
        let want: Vec<(usize, u32)> = cycle.iter().cycle().take(9).copied().collect();
        assert_eq!(runs, want);
        assert_eq!(d.timer, None);
    }

    /// For each read (after the first): the gap to the next dispatch if
    /// that is a write.
    fn gaps_after_reads(freq: &str) -> Vec<Option<Ns>> {
        let mut b = layer(1000, |p| Box::new(Row::new(p)));
        b.elevator_mut()
            .set_tunable("rd_idle_data_freq", freq)
            .unwrap();
        let mut rig = Rig::new(b, 2, NS_PER_MS);
        for i in 0..100 {
            rig.submit(bio(Op::Write, 5_000_000 + 64 * i, 9));
        }
        for k in 0..8u64 {
            rig.run_until(15 * NS_PER_MS * k);
            rig.submit(bio(Op::Read, 1_000_000 + 64 * k, 1));
        }
        rig.run_until(130 * NS_PER_MS);
        let log = &rig.log;
        let reads = log.iter().enumerate().filter(|(_, t)| t.rq.op == Op::Read);
        // The first read has no earlier insert: no idling after it.
        reads
            .skip(1)
            .map(|(i, t)| {
                let n = log.get(i + 1)?;
                (n.rq.op == Op::Write).then(|| n.at - t.at)
            })
            .collect()
    }

    #[test]
    fn reads_every_15ms_idle_10ms_before_writes() {
        assert_eq!(gaps_after_reads("25"), vec![Some(10 * NS_PER_MS); 7]);
        // Idling off (freq 0): the next write goes out at once (until the
        // write backlog runs dry).
        let g = gaps_after_reads("0");
        assert!(
            g[..2].iter().all(|g| g.is_some_and(|g| g < 2 * NS_PER_MS)),
            "{g:?}"
        );
    }

    /// `row_urgent_pending` reports the urgent read while none is in the
    /// driver; `row_reinsert_req` puts a stopped write back at the head of
    /// the queue it came from, so it goes next after the urgent read.
    #[test]
    fn an_urgent_read_is_reported_and_a_stopped_write_goes_back_to_its_queue_head() {
        let mut e = Row::new(&params(1000));
        let mut d = Direct::new();
        let ms = NS_PER_MS;
        let w1 = d.add(&mut e, 0, swrite(2_000_000, 1024));
        let w2 = d.add(&mut e, 0, swrite(2_001_024, 1024));
        assert_eq!(e.is_urgent(), Some(false));
        assert_eq!(d.dispatch(&mut e, 0), Some(w1));
        let r = d.add(&mut e, ms, with_prio(bio(Op::Read, 9, 8), IoClass::Rt, 0));
        assert!(d.rqs[r].urgent, "RT read into an empty HIGH_READ after REG");
        assert_eq!(e.is_urgent(), Some(true));
        assert!(e.reinsert_request(&mut d.ctx(ms), w1));
        assert_eq!(queue_of(&d, w1), REG_SWRITE);
        assert_eq!(d.dispatch(&mut e, ms), Some(r));
        assert_eq!(e.is_urgent(), Some(false), "the urgent read is in flight");
        e.completed(&mut d.ctx(2 * ms), r);
        assert_eq!(d.dispatch(&mut e, 2 * ms), Some(w1));
        assert_eq!(d.dispatch(&mut e, 2 * ms), Some(w2));
    }

    #[test]
    fn reads_exhausted_early_make_the_next_read_urgent() {
        let mut e = Row::new(&params(1000));
        let mut d = Direct::new();
        let ms = NS_PER_MS;
        d.add(&mut e, 0, bio(Op::Read, 1_000_000, 1));
        for i in 0..20 {
            d.add(&mut e, 50 * ms, swrite(2_000_000 + 64 * i, 2));
            d.add(&mut e, 50 * ms, bio(Op::Write, 3_000_000 + 64 * i, 3));
        }
        // 100 ms after the first: no idling.
        d.add(&mut e, 100 * ms, bio(Op::Read, 1_000_064, 1));
        let mut q = || {
            let rq = d.dispatch(&mut e, 100 * ms).unwrap();
            queue_of(&d, rq)
        };
        let first: Vec<usize> = (0..12).map(|_| q()).collect();
        // 2 reads, 4 + 4 writes, cycle restart (REG_READ unserved: 2 < 75),
        // then 2 of the next cycle's sync writes.
        let mut want = vec![REG_READ; 2];
        want.extend([REG_SWRITE; 4]);
        want.extend([REG_WRITE; 4]);
        want.extend([REG_SWRITE; 2]);
        assert_eq!(first, want);
        assert_eq!(e.unserved & (1 << REG_READ), 1 << REG_READ);
        let r3 = d.add(&mut e, 200 * ms, bio(Op::Read, 1_000_128, 1));
        assert!(d.rqs[r3].urgent);
        assert_eq!(d.dispatch(&mut e, 200 * ms), Some(r3));
        assert_eq!(e.urgent_dispatched(), 1);
        // The remaining write quanta follow.
        let rest: Vec<usize> = (0..6)
            .map(|_| {
                let rq = d.dispatch(&mut e, 200 * ms).unwrap();
                queue_of(&d, rq)
            })
            .collect();
        assert_eq!(
            rest,
            vec![REG_SWRITE, REG_SWRITE, REG_WRITE, REG_WRITE, REG_WRITE, REG_WRITE]
        );
        // An RT read entering an empty HIGH_READ after a REG dispatch is
        // urgent too, but only once the previous urgent one completed.
        let rt = d.add(
            &mut e,
            200 * ms,
            with_prio(bio(Op::Read, 9, 4), IoClass::Rt, 0),
        );
        assert!(!d.rqs[rt].urgent, "urgent still in flight");
        e.completed(&mut d.ctx(200 * ms), r3);
        assert_eq!(d.dispatch(&mut e, 200 * ms), Some(rt));
        let rt2 = d.add(
            &mut e,
            300 * ms,
            with_prio(bio(Op::Read, 99, 4), IoClass::Rt, 0),
        );
        assert!(!d.rqs[rt2].urgent, "last served was HIGH");
    }

    #[test]
    fn be_read_behind_saturating_rt_reader_waits_5000_high_dispatches() {
        let mut e = Row::new(&params(1000));
        let mut d = Direct::new();
        let rt = |s| with_prio(bio(Op::Read, s, 1), IoClass::Rt, 0);
        for i in 0..3000 {
            d.add(&mut e, 0, rt(1_000_000 + 64 * i));
        }
        let be = d.add(&mut e, 0, bio(Op::Read, 42, 2));
        for i in 3000..6000 {
            d.add(&mut e, 0, rt(1_000_000 + 64 * i));
        }
        let mut n = 0;
        loop {
            let rq = d.dispatch(&mut e, 0).unwrap();
            if rq == be {
                break;
            }
            assert_eq!(queue_of(&d, rq), HIGH_READ);
            n += 1;
        }
        assert_eq!(n, 5000);
        assert_eq!(e.starvation_counters().0, 0);
        // Then HIGH again.
        let rq = d.dispatch(&mut e, 0).unwrap();
        assert_eq!(queue_of(&d, rq), HIGH_READ);
    }

    #[test]
    fn tunables_defaults_and_validation() {
        for hz in [1000, 100] {
            let r = Row::new(&params(hz));
            let got: Vec<(&str, String)> = r
                .tunables()
                .into_iter()
                .map(|t| (t.name, t.default))
                .collect();
            let want = [
                ("hp_read_quantum", "100"),
                ("hp_swrite_quantum", "5"),
                ("rp_read_quantum", "75"),
                ("rp_swrite_quantum", "4"),
                ("rp_write_quantum", "4"),
                ("lp_read_quantum", "3"),
                ("lp_swrite_quantum", "2"),
                ("rd_idle_data", "10"),
                ("rd_idle_data_freq", "25"),
                ("reg_starv_limit", "5000"),
                ("low_starv_limit", "10000"),
            ];
            let want: Vec<(&str, String)> = want.iter().map(|&(n, v)| (n, v.to_string())).collect();
            assert_eq!(got, want, "hz {hz}");
        }
        let mut r = Row::new(&params(100));
        assert!(r.set_tunable("rp_read_quantum", "0").is_err());
        assert!(r.set_tunable("rd_idle_data", "ten").is_err());
        r.set_tunable("rd_idle_data", "5").unwrap();
        assert_eq!(r.tunables_raw().rd_idle_data, 5, "ms, not jiffies");
        r.set_tunable("rp_write_quantum", "7").unwrap();
        assert_eq!(r.tunables_raw().quantum[REG_WRITE], 7);
        let e = r.set_tunable("quantum", "1").unwrap_err().to_string();
        assert!(
            e.contains("valid: hp_read_quantum, hp_swrite_quantum"),
            "{e}"
        );
    }
}
