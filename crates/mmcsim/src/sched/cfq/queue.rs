//! CFQ's per-queue state (`struct cfq_queue`), think-time statistics
//! (`struct cfq_ttime`), service trees (`struct cfq_rb_root`) and the
//! request choice (`cfq_choose_req`).

use mmcsim_elevator::{FifoList, IoClass, RqId, SectorTree};

/// "No queue" marker in index tables.
pub(super) const NONE: u32 = u32::MAX;

/// Workload priority classes (`enum wl_prio_t`): index of the busy-queue
/// averages and of the service-tree rows.
pub(super) const BE_WL: usize = 0;
/// Real-time workload.
pub(super) const RT_WL: usize = 1;
/// Idle-class workload (a single tree).
pub(super) const IDLE_WL: usize = 2;

/// Workload types (`enum wl_type_t`).
pub(super) const ASYNC_WL: usize = 0;
/// Sync queues without an idle window.
pub(super) const SYNC_NOIDLE_WL: usize = 1;
/// Sync queues with an idle window.
pub(super) const SYNC_WL: usize = 2;

/// Index of the IDLE service tree in [`super::Cfq`]'s tree table; the six
/// others are `prio * 3 + type`.
pub(super) const IDLE_TREE: usize = 6;

/// Index of the service tree for workload `prio` and type `ty`
/// (`service_tree_for`).
pub(super) fn tree_index(prio: usize, ty: usize) -> usize {
    if prio == IDLE_WL {
        IDLE_TREE
    } else {
        prio * 3 + ty
    }
}

/// `sample_valid`: more than 80 (decayed) samples.
pub(super) fn sample_valid(samples: u64) -> bool {
    samples > 80
}

/// Think-time statistics (`struct cfq_ttime`), in jiffies, with the
/// kernel's fixed-point decay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ttime {
    /// Jiffies of the last completion (`last_end_request`).
    pub last_end_request: u64,
    /// Decayed sum of think times ×256.
    pub total: u64,
    /// Decayed sample count ×256.
    pub samples: u64,
    /// Mean think time, jiffies.
    pub mean: u64,
}

impl Ttime {
    /// Fresh statistics whose clock starts at jiffy `now`.
    pub fn new(now: u64) -> Self {
        Ttime {
            last_end_request: now,
            ..Ttime::default()
        }
    }

    /// `__cfq_update_io_thinktime`: one arrival at jiffy `now`; the think
    /// time is capped at `2 * slice_idle`.
    pub fn update(&mut self, now: u64, slice_idle: u64) {
        let elapsed = now.wrapping_sub(self.last_end_request).min(2 * slice_idle);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed) / 8;
        self.mean = (self.total + 128) / self.samples;
    }

    /// `cfq_io_thinktime_big`: valid samples and a mean above `slice`.
    pub fn big(&self, slice: u64) -> bool {
        sample_valid(self.samples) && self.mean > slice
    }
}

/// Queue flags (`enum cfqq_state_flags`) that the simulator uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// On a service tree, counted busy (`on_rr`).
    pub on_rr: bool,
    /// Idling for this queue's next request (`wait_request`).
    pub wait_request: bool,
    /// A request arrived while idling: dispatch it (`must_dispatch`).
    pub must_dispatch: bool,
    /// The FIFO was checked in this slice (`fifo_expire`).
    pub fifo_expire: bool,
    /// Idle for the next request when empty (`idle_window`).
    pub idle_window: bool,
    /// Slice not started yet: starts at the first completion (`slice_new`).
    pub slice_new: bool,
    /// Sync queue (`sync`).
    pub sync: bool,
    /// Had ≥ 4 requests queued (`deep`).
    pub deep: bool,
    /// Waiting for the group to get busy at slice end (`wait_busy`).
    pub wait_busy: bool,
}

/// One CFQ queue (`struct cfq_queue`). Times are jiffies.
#[derive(Clone, Debug)]
pub struct CfqQueue {
    /// Process id for sync queues; `u32::MAX` for shared async queues.
    pub pid: u32,
    /// Priority class.
    pub class: IoClass,
    /// Level 0–7 (`ioprio`; 7 for the IDLE class).
    pub level: u8,
    /// Level the queue was created with (`org_ioprio`): picks the
    /// close-cooperator tree.
    pub org_level: u8,
    /// Flags.
    pub f: Flags,
    /// Position on its service tree (`rb_key`).
    pub rb_key: i64,
    /// The service tree it sits on (`service_tree`), if any.
    pub st: Option<usize>,
    /// Close-cooperator tree (`p_root`) it sits on, if any.
    pub p_root: Option<usize>,
    /// Requests by sector (`sort_list`).
    pub sort: SectorTree,
    /// Requests by arrival (`fifo`); `fifo_time` holds the expiry.
    pub fifo: FifoList,
    /// Next request in the one-way elevator (`next_rq`).
    pub next_rq: Option<RqId>,
    /// Requests queued `[async, sync]`.
    pub queued: [u32; 2],
    /// Requests dispatched and not completed.
    pub dispatched: u32,
    /// Requests dispatched in the current slice (`slice_dispatch`).
    pub slice_dispatch: u32,
    /// Slice start (`slice_start`).
    pub slice_start: u64,
    /// Slice end (`slice_end`).
    pub slice_end: u64,
    /// Slice length set at its start (`allocated_slice`).
    pub allocated_slice: u64,
    /// Slice time carried over (`slice_resid`, may be negative).
    pub slice_resid: i64,
    /// Queued REQ_PRIO requests (`prio_pending`).
    pub prio_pending: u32,
    /// Seek history, one bit per request, newest in bit 0.
    pub seek_history: u32,
    /// End of the last queued request (`last_request_pos`).
    pub last_request_pos: u64,
    /// Think time of the owning process (`cic->ttime`; sync queues only).
    pub ttime: Ttime,
}

impl CfqQueue {
    /// A new queue (`cfq_init_cfqq` + `cfq_init_prio_data`).
    pub fn new(pid: u32, sync: bool, class: IoClass, level: u8, now: u64) -> Self {
        let mut q = CfqQueue {
            pid,
            class,
            level,
            org_level: level,
            f: Flags {
                sync,
                idle_window: sync,
                ..Flags::default()
            },
            rb_key: 0,
            st: None,
            p_root: None,
            sort: SectorTree::new(),
            fifo: FifoList::new(),
            next_rq: None,
            queued: [0; 2],
            dispatched: 0,
            slice_dispatch: 0,
            slice_start: 0,
            slice_end: 0,
            allocated_slice: 0,
            slice_resid: 0,
            prio_pending: 0,
            seek_history: 0,
            last_request_pos: 0,
            ttime: Ttime::new(now),
        };
        q.set_prio(class, level);
        q.org_level = q.level;
        q
    }

    /// `cfq_init_prio_data`: class and level; the IDLE class is level 7 and
    /// loses its idle window.
    pub fn set_prio(&mut self, class: IoClass, level: u8) {
        self.class = class;
        self.level = level.min(7);
        if class == IoClass::Idle {
            self.level = 7;
            self.f.idle_window = false;
        }
    }

    /// `cfqq_prio`.
    pub fn wl_prio(&self) -> usize {
        match self.class {
            IoClass::Idle => IDLE_WL,
            IoClass::Rt => RT_WL,
            IoClass::Be => BE_WL,
        }
    }

    /// `cfqq_type`.
    pub fn wl_type(&self) -> usize {
        if !self.f.sync {
            ASYNC_WL
        } else if !self.f.idle_window {
            SYNC_NOIDLE_WL
        } else {
            SYNC_WL
        }
    }

    /// `CFQQ_SEEKY`: more than 4 of the last 32 requests were seeks.
    pub fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 32 / 8
    }

    /// True for the IDLE class.
    pub fn class_idle(&self) -> bool {
        self.class == IoClass::Idle
    }

    /// True for the RT class.
    pub fn class_rt(&self) -> bool {
        self.class == IoClass::Rt
    }

    /// Nothing queued (`RB_EMPTY_ROOT(&sort_list)`).
    pub fn empty(&self) -> bool {
        self.sort.is_empty()
    }
}

/// A service tree (`struct cfq_rb_root`): queues ordered by `rb_key`, equal
/// keys in insertion order, plus the tree's think time.
#[derive(Clone, Debug)]
pub struct ServiceTree {
    /// `(rb_key, queue)` ascending.
    pub entries: Vec<(i64, u32)>,
    /// Think time of the tree's queues (`ttime`).
    pub ttime: Ttime,
}

impl ServiceTree {
    /// An empty tree.
    pub fn new() -> Self {
        ServiceTree {
            entries: Vec::with_capacity(64),
            ttime: Ttime::new(0),
        }
    }

    /// Number of queues (`count`).
    pub fn count(&self) -> usize {
        self.entries.len()
    }

    /// The leftmost queue (`cfq_rb_first`).
    pub fn first(&self) -> Option<u32> {
        self.entries.first().map(|e| e.1)
    }

    /// Inserts `q` at `key`, after equal keys.
    pub fn insert(&mut self, key: i64, q: u32) {
        let pos = self.entries.partition_point(|&(k, _)| k <= key);
        self.entries.insert(pos, (key, q));
    }

    /// Removes `q` (inserted at `key`).
    pub fn remove(&mut self, key: i64, q: u32) {
        let lo = self.entries.partition_point(|&(k, _)| k < key);
        let i = self.entries[lo..]
            .iter()
            .position(|&(_, id)| id == q)
            .map(|p| lo + p)
            .expect("cfq: queue not on its service tree");
        self.entries.remove(i);
    }
}

/// Tunables that [`choose_req`] needs.
#[derive(Clone, Copy, Debug)]
pub struct SeekRule {
    /// `back_seek_max`, KiB.
    pub back_max_kib: u64,
    /// `back_seek_penalty`.
    pub penalty: u64,
}

/// What [`choose_req`] knows of a candidate request.
#[derive(Clone, Copy, Debug)]
pub struct Cand {
    /// Request id.
    pub id: RqId,
    /// Start sector.
    pub sector: u64,
    /// Sync request.
    pub sync: bool,
    /// REQ_PRIO.
    pub prio: bool,
}

/// `cfq_choose_req`: the better of two candidates to serve next from head
/// position `last`: sync over async, then REQ_PRIO, then seek distance
/// (forward d costs d, backward within `back_seek_max` costs d × penalty,
/// further back loses; ties take the higher sector; both far back: the
/// lower sector).
pub fn choose_req(rule: SeekRule, r1: Option<Cand>, r2: Option<Cand>, last: u64) -> Option<Cand> {
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
    let back_max = rule.back_max_kib * 2;
    let dist = |s: u64| -> Option<u64> {
        if s >= last {
            Some(s - last)
        } else if s + back_max >= last {
            Some((last - s) * rule.penalty)
        } else {
            None
        }
    };
    let pick = match (dist(a.sector), dist(b.sector)) {
        (Some(d1), Some(d2)) => {
            if d1 < d2 || (d1 == d2 && a.sector >= b.sector) {
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
    };
    Some(pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: RqId, sector: u64) -> Option<Cand> {
        Some(Cand {
            id,
            sector,
            sync: true,
            prio: false,
        })
    }

    const RULE: SeekRule = SeekRule {
        back_max_kib: 16384,
        penalty: 2,
    };

    #[test]
    fn backward_seek_costs_double_within_back_seek_max() {
        // Head at 10_000: forward 10_150 (d 150) vs backward 9_900 (d 100 ×
        // 2 = 200): forward wins.
        assert_eq!(
            choose_req(RULE, c(1, 10_150), c(2, 9_900), 10_000)
                .unwrap()
                .id,
            1
        );
        // Forward 10_250 (250) vs backward 9_900 (200): backward wins.
        assert_eq!(
            choose_req(RULE, c(1, 10_250), c(2, 9_900), 10_000)
                .unwrap()
                .id,
            2
        );
        // Tie (200 vs 100×2): the higher sector.
        assert_eq!(
            choose_req(RULE, c(1, 9_900), c(2, 10_200), 10_000)
                .unwrap()
                .id,
            2
        );
        // Beyond back_seek_max (32768 sectors back): always loses.
        assert_eq!(
            choose_req(RULE, c(1, 1_000_000), c(2, 100_000 - 32_769), 100_000)
                .unwrap()
                .id,
            1
        );
        // Both far back: the lower sector.
        assert_eq!(
            choose_req(RULE, c(1, 500), c(2, 100), 1_000_000)
                .unwrap()
                .id,
            2
        );
        // Sync beats async, PRIO beats plain, whatever the distance.
        let mut a = c(1, 10_001).unwrap();
        a.sync = false;
        assert_eq!(choose_req(RULE, Some(a), c(2, 1), 10_000).unwrap().id, 2);
        let mut p = c(3, 1).unwrap();
        p.prio = true;
        assert_eq!(
            choose_req(RULE, c(1, 10_001), Some(p), 10_000).unwrap().id,
            3
        );
    }

    #[test]
    fn think_time_fixed_point() {
        let mut t = Ttime::new(0);
        t.update(3, 8);
        assert_eq!((t.samples, t.total, t.mean), (32, 96, 7));
        for i in 1..100 {
            t.last_end_request = 10 * i;
            t.update(10 * i + 3, 8);
        }
        assert!(sample_valid(t.samples));
        assert_eq!(t.mean, 3);
        // Capped at 2 × slice_idle.
        let mut u = Ttime::new(0);
        u.update(1000, 8);
        assert_eq!(u.total, 256 * 16 / 8);
    }
}
