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

use super::fifo_list::FifoList;
use super::sector_tree::SectorTree;
use super::{Elevator, MergeKind, SchedCtx, SchedParams, TunableInfo, TunableValue};
use crate::block::request::{Bio, RqId};
use crate::types::{Ns, NS_PER_S};

const READ: usize = 0;
const WRITE: usize = 1;
/// Largest value sysfs accepts for the integer tunables (`INT_MAX`).
const INT_MAX: u64 = i32::MAX as u64;

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
            sort_list: [SectorTree::with_capacity(256), SectorTree::with_capacity(256)],
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
        ((j as u128 * NS_PER_S as u128).div_ceil(self.params.hz as u128)) as Ns
    }

    /// `deadline_check_fifo`: has the FIFO head of `dir` expired
    /// (`time_after_eq(jiffies, fifo_time)`)?
    fn fifo_expired(&self, ctx: &SchedCtx, dir: usize) -> bool {
        match self.fifo_list[dir].front() {
            Some(rq) => {
                self.params.jiffies(ctx.now) >= self.params.jiffies(ctx.rq(rq).fifo_time)
            }
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
        ctx.rqs[rq].fifo_time = self.jiffy_start_ns(deadline);
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
            ctx.rqs[rq].fifo_time = ctx.rq(next).fifo_time;
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
        let reads = !self.fifo_list[READ].is_empty();
        let writes = !self.fifo_list[WRITE].is_empty();

        // 1. Continue the batch, without looking at deadlines.
        let cont = self.next_rq[WRITE].or(self.next_rq[READ]);
        let rq = match cont {
            Some(rq) if self.batching < self.tun.fifo_batch => rq,
            _ => {
                // 2. Choose a direction.
                let dir = if reads {
                    // `writes && starved++ >= writes_starved`: the increment
                    // happens whenever writes are queued, true or not.
                    let starve = writes && {
                        let s = self.starved;
                        self.starved += 1;
                        s >= self.tun.writes_starved
                    };
                    if starve {
                        self.starved = 0;
                        WRITE
                    } else {
                        READ
                    }
                } else if writes {
                    self.starved = 0;
                    WRITE
                } else {
                    return None;
                };
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
        self.next_rq[dir] = self.sort_list[dir].successor(rq);
        self.remove_request(rq, dir);
        Some(rq)
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

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "read_expire" => {
                let ms = TunableValue::parse_u64(name, value, 0, INT_MAX)?;
                self.tun.read_expire = self.params.ms_to_jiffies(ms);
            }
            "write_expire" => {
                let ms = TunableValue::parse_u64(name, value, 0, INT_MAX)?;
                self.tun.write_expire = self.params.ms_to_jiffies(ms);
            }
            "writes_starved" => {
                self.tun.writes_starved = TunableValue::parse_u64(name, value, 0, INT_MAX)? as u32;
            }
            "front_merges" => {
                self.tun.front_merges = TunableValue::parse_bool(name, value)?;
            }
            "fifo_batch" => {
                self.tun.fifo_batch = TunableValue::parse_u64(name, value, 0, INT_MAX)? as u32;
            }
            _ => return Err(TunableValue::unknown("deadline", name, &self.tunables())),
        }
        Ok(())
    }
}
