//! Per-process queue state (`bfq_queue`) and per-process I/O context data
//! (`bfq_io_cq`: think time), with the request-choice, seek and think-time
//! rules shared with CFQ (reference §4.3, §5.2).

use std::cell::Cell;

use mmcsim_elevator::{FifoList, IoPrio, RqId, SectorTree};

/// A jiffies value "infinitely" in the past (`bfq_smallest_from_now`).
pub const FAR_PAST: i64 = i64::MIN / 4;
/// `BFQQ_SEEK_THR`: mean seek distance (sectors) above which a queue is
/// seeky.
pub const SEEK_THR: u64 = 8 * 1024;

/// One BFQ queue: a process's sync queue, or an async queue shared per
/// (class, level).
#[derive(Clone, Debug)]
pub struct BfqQueue {
    /// Owning process (sync queues); for async queues the first submitter.
    pub pid: u32,
    /// Sync queue.
    pub sync: bool,
    /// I/O priority at creation.
    pub ioprio: IoPrio,
    /// `orig_weight` = 8 − level.
    pub orig_weight: u64,
    /// Requests by start sector (`sort_list`).
    pub sort: SectorTree,
    /// Requests by arrival (`fifo`).
    pub fifo: FifoList,
    /// `next_rq`.
    pub next_rq: Option<RqId>,
    /// Queued requests `[async, sync]`.
    pub queued: [u32; 2],
    /// Requests dispatched and not completed.
    pub dispatched: u32,
    /// `max_budget`: the budget the feedback assigned, sectors.
    pub max_budget: u64,
    /// `budget_timeout`, jiffies.
    pub budget_timeout: i64,
    /// `last_request_pos`: end of the last request enqueued.
    pub last_request_pos: u64,
    /// Seek-distance statistics.
    pub seek_samples: u64,
    /// Seek-distance statistics.
    pub seek_total: u64,
    /// `seek_mean`, sectors.
    pub seek_mean: u64,
    /// On the busy list (has requests or is in service).
    pub busy: bool,
    /// `wait_request`: idling for this queue's next request.
    pub wait_request: bool,
    /// `must_alloc` (cleared by `may_queue`, which sees `&self`).
    pub must_alloc: Cell<bool>,
    /// `fifo_expire`: the FIFO was checked in this slot.
    pub fifo_expire: bool,
    /// `idle_window`.
    pub idle_window: bool,
    /// `budget_new`: no completion yet in this slot.
    pub budget_new: bool,
    /// `IO_bound`.
    pub io_bound: bool,
    /// `constantly_seeky`.
    pub constantly_seeky: bool,
    /// `in_large_burst`.
    pub in_large_burst: bool,
    /// On the current burst list.
    pub in_burst_list: bool,
    /// `softrt_update`.
    pub softrt_update: bool,
    /// `requests_within_timer`.
    pub requests_within_timer: u32,
    /// `wr_coeff`: 1, or the raising coefficient.
    pub wr_coeff: u64,
    /// `wr_cur_max_time`, jiffies.
    pub wr_cur_max_time: i64,
    /// `last_wr_start_finish`, jiffies.
    pub last_wr_start_finish: i64,
    /// `soft_rt_next_start`, jiffies.
    pub soft_rt_next_start: i64,
    /// `last_idle_bklogged`, jiffies.
    pub last_idle_bklogged: i64,
    /// `service_from_backlogged`, sectors.
    pub service_from_backlogged: u64,
    /// `inject_limit` (bfq-mq): requests of other queues that may be in the
    /// driver while this queue is in service and empty. 0 at creation.
    pub inject_limit: u32,
    /// `last_serv_time_ns` (bfq-mq): baseline total service time of one
    /// request, measured without injection (0 = not sampled).
    pub last_serv_time_ns: u64,
    /// `decrease_time_jif` (bfq-mq), jiffies: last lowering/reset of
    /// `inject_limit`.
    pub decrease_time_jif: i64,
}

impl BfqQueue {
    /// `bfq_init_bfqq`.
    pub fn new(pid: u32, sync: bool, ioprio: IoPrio, max_budget: u64, idle_class: bool) -> Self {
        BfqQueue {
            pid,
            sync,
            ioprio,
            orig_weight: 8 - ioprio.level.min(7) as u64,
            sort: SectorTree::with_capacity(64),
            fifo: FifoList::with_capacity(64),
            next_rq: None,
            queued: [0; 2],
            dispatched: 0,
            max_budget,
            budget_timeout: FAR_PAST,
            last_request_pos: 0,
            seek_samples: 0,
            seek_total: 0,
            seek_mean: 0,
            busy: false,
            wait_request: false,
            must_alloc: Cell::new(false),
            fifo_expire: false,
            idle_window: sync && !idle_class,
            budget_new: false,
            io_bound: true,
            constantly_seeky: false,
            in_large_burst: false,
            in_burst_list: false,
            softrt_update: false,
            requests_within_timer: 0,
            wr_coeff: 1,
            wr_cur_max_time: 0,
            last_wr_start_finish: FAR_PAST,
            soft_rt_next_start: FAR_PAST,
            last_idle_bklogged: 0,
            service_from_backlogged: 0,
            inject_limit: 0,
            last_serv_time_ns: 0,
            decrease_time_jif: 0,
        }
    }

    /// `BFQQ_SEEKY`.
    pub fn seeky(&self) -> bool {
        self.seek_mean > SEEK_THR
    }

    /// `bfq_update_io_seektime` for a request starting at `pos`.
    pub fn update_seek(&mut self, pos: u64) {
        let mut sdist = pos.abs_diff(self.last_request_pos);
        if self.seek_samples == 0 {
            sdist = 0;
        } else if self.seek_samples <= 60 {
            sdist = sdist.min(self.seek_mean * 4 + 2 * 1024 * 1024);
        } else {
            sdist = sdist.min(self.seek_mean * 4 + 2 * 1024 * 64);
        }
        self.seek_samples = (7 * self.seek_samples + 256) / 8;
        self.seek_total = (7 * self.seek_total + 256 * sdist) / 8;
        self.seek_mean = (self.seek_total + self.seek_samples / 2) / self.seek_samples;
    }
}

/// `bfq_sample_valid`: more than 80 (decayed) samples.
pub fn sample_valid(samples: u64) -> bool {
    samples > 80
}

/// Per-process data (`bfq_io_cq`): the queues and think time.
#[derive(Clone, Copy, Debug)]
pub struct Bic {
    /// The process's sync queue.
    pub sync_q: Option<u32>,
    /// `ttime.last_end_request`, jiffies.
    pub last_end_request: i64,
    /// Think-time statistics.
    pub ttime_samples: u64,
    /// Think-time statistics.
    pub ttime_total: u64,
    /// `ttime_mean`, jiffies.
    pub ttime_mean: u64,
}

impl Bic {
    /// A new context at jiffies `now`.
    pub fn new(now: i64) -> Self {
        Bic {
            sync_q: None,
            last_end_request: now,
            ttime_samples: 0,
            ttime_total: 0,
            ttime_mean: 0,
        }
    }

    /// `bfq_update_io_thinktime` at jiffies `now`.
    pub fn update_thinktime(&mut self, now: i64, slice_idle: u64) {
        let elapsed = (now - self.last_end_request).max(0) as u64;
        let ttime = elapsed.min(2 * slice_idle);
        self.ttime_samples = (7 * self.ttime_samples + 256) / 8;
        self.ttime_total = (7 * self.ttime_total + 256 * ttime) / 8;
        self.ttime_mean = (self.ttime_total + 128) / self.ttime_samples;
    }
}

/// A candidate for `bfq_choose_req`: (sync, prio, sector).
#[derive(Clone, Copy, Debug)]
pub struct Cand {
    /// Request id.
    pub id: RqId,
    /// `rq_is_sync`.
    pub sync: bool,
    /// REQ_META / REQ_PRIO.
    pub prio: bool,
    /// Start sector.
    pub sector: u64,
}

/// `bfq_choose_req`: which of two requests to serve next from head
/// position `last`: sync over async, META over not, then distance (backward
/// within `back_max` sectors costs `penalty` ×), ties to the higher sector,
/// both far back to the lower.
pub fn choose_req(
    r1: Option<Cand>,
    r2: Option<Cand>,
    last: u64,
    back_max: u64,
    penalty: u64,
) -> Option<Cand> {
    let (a, b) = match (r1, r2) {
        (None, x) => return x,
        (x, None) => return x,
        (Some(a), Some(b)) => (a, b),
    };
    if a.id == b.id {
        return Some(b);
    }
    if a.sync != b.sync {
        return Some(if a.sync { a } else { b });
    }
    if a.prio != b.prio {
        return Some(if a.prio { a } else { b });
    }
    let dist = |s: u64| -> Option<u64> {
        if s >= last {
            Some(s - last)
        } else if s + back_max >= last {
            Some((last - s) * penalty)
        } else {
            None
        }
    };
    Some(match (dist(a.sector), dist(b.sector)) {
        (Some(d1), Some(d2)) => {
            if d1 < d2 {
                a
            } else if d2 < d1 {
                b
            } else if a.sector >= b.sector {
                a
            } else {
                b
            }
        }
        (Some(_), None) => a,
        (None, Some(_)) => b,
        (None, None) => {
            if a.sector <= b.sector {
                a
            } else {
                b
            }
        }
    })
}
