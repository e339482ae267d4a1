//! SIO — Simple I/O scheduler (Miguel Boton, v0.2; reference
//! io-schedulers.md §6).
//!
//! Four unsorted FIFOs, `fifo[sync][dir]`, each request with a soft
//! deadline (`fifo_time` = jiffies + expire of its FIFO). Dispatch (§6.3):
//! 1. If `batched > fifo_batch`: `batched = 0` and take the first expired
//!    head (`time_after(jiffies, deadline)`), checking async write, async
//!    read, sync write, sync read in that order. The check therefore runs
//!    once every `fifo_batch + 1` dispatches (and the reset happens even
//!    when the queue is empty, like the kernel).
//! 2. Otherwise the direction is WRITE if `starved > writes_starved`, else
//!    READ; take the head of the first non-empty of `sync[dir]`, `async[dir]`,
//!    `sync[!dir]`, `async[!dir]`.
//! 3. `batched++`; a write resets `starved`, a read increments it (even when
//!    no write waits). Tail append to the dispatch list (§1.5).
//!
//! Merging: no front-merge hook; `former`/`latter` are FIFO neighbours (the
//! block layer merges them only if contiguous); `merge_requests` keeps the
//! earlier FIFO position and deadline.

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{Ns, NS_PER_S};
use mmcsim_elevator::{
    Elevator, FifoList, RqId, SchedCtx, SchedParams, TunableError, TunableInfo, TunableValue,
};

const READ: usize = 0;
const WRITE: usize = 1;
const ASYNC: usize = 0;
const SYNC: usize = 1;

/// Tunables of SIO in kernel units (jiffies for the expiries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SioTunables {
    /// `sync_read_expire`, jiffies (HZ/2 = 500 ms).
    pub sync_read_expire: u64,
    /// `sync_write_expire`, jiffies (2·HZ = 2000 ms).
    pub sync_write_expire: u64,
    /// `async_read_expire`, jiffies (4·HZ = 4000 ms).
    pub async_read_expire: u64,
    /// `async_write_expire`, jiffies (16·HZ = 16000 ms).
    pub async_write_expire: u64,
    /// `writes_starved` (2; 0 gives the samsung_jf R,W alternation).
    pub writes_starved: u32,
    /// `fifo_batch` (8, Android CM/Lineage trees).
    pub fifo_batch: u32,
}

impl SioTunables {
    /// Defaults at tick rate `hz`.
    pub fn defaults(hz: u32) -> Self {
        let hz = hz as u64;
        SioTunables {
            sync_read_expire: hz / 2,
            sync_write_expire: 2 * hz,
            async_read_expire: 4 * hz,
            async_write_expire: 16 * hz,
            writes_starved: 2,
            fifo_batch: 8,
        }
    }

    /// `fifo_expire[sync][dir]`.
    fn expire(&self, sync: usize, dir: usize) -> u64 {
        match (sync, dir) {
            (SYNC, READ) => self.sync_read_expire,
            (SYNC, _) => self.sync_write_expire,
            (_, READ) => self.async_read_expire,
            _ => self.async_write_expire,
        }
    }
}

/// The SIO elevator (`sio-iosched.c`).
#[derive(Clone, Debug)]
pub struct Sio {
    params: SchedParams,
    tun: SioTunables,
    /// `fifo_list[sync][dir]`.
    fifo: [[FifoList; 2]; 2],
    batched: u32,
    starved: u32,
}

/// First nanosecond of jiffy `j` at `hz`.
fn jiffy_start_ns(hz: u32, j: u64) -> Ns {
    ((j as u128 * NS_PER_S as u128).div_ceil(hz as u128)) as Ns
}

impl Sio {
    /// A new SIO with the defaults at `params.hz`.
    pub fn new(params: &SchedParams) -> Self {
        let f = || FifoList::with_capacity(256);
        Sio {
            params: *params,
            tun: SioTunables::defaults(params.hz),
            fifo: [[f(), f()], [f(), f()]],
            batched: 0,
            starved: 0,
        }
    }

    /// Current tunables (kernel units).
    pub fn tunables_raw(&self) -> SioTunables {
        self.tun
    }

    /// `(batched, starved)`, for tests and traces.
    pub fn counters(&self) -> (u32, u32) {
        (self.batched, self.starved)
    }

    fn slot(ctx: &SchedCtx, rq: RqId) -> (usize, usize) {
        let r = ctx.rq(rq);
        (r.sync as usize, r.dir())
    }

    /// `sio_expired_request`: the head of `fifo[sync][dir]` if
    /// `time_after(jiffies, fifo_time)`.
    fn expired(&self, ctx: &SchedCtx, sync: usize, dir: usize) -> Option<RqId> {
        let rq = self.fifo[sync][dir].front()?;
        (self.params.jiffies(ctx.now) > self.params.jiffies(ctx.rq(rq).fifo_time)).then_some(rq)
    }

    fn fmt_ms(&self, j: u64) -> String {
        self.params.jiffies_to_ms(j).to_string()
    }
}

impl Elevator for Sio {
    fn name(&self) -> &str {
        "sio"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let (sync, dir) = Self::slot(ctx, rq);
        let deadline = self.params.jiffies(ctx.now) + self.tun.expire(sync, dir);
        ctx.set_fifo_time(rq, jiffy_start_ns(self.params.hz, deadline));
        self.fifo[sync][dir].push_back(rq);
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let (rs, rd) = Self::slot(ctx, rq);
        let (ns, nd) = Self::slot(ctx, next);
        if self.fifo[rs][rd].contains(rq)
            && self.fifo[ns][nd].contains(next)
            && self.params.jiffies(ctx.rq(next).fifo_time)
                < self.params.jiffies(ctx.rq(rq).fifo_time)
        {
            self.fifo[rs][rd].remove(rq);
            self.fifo[ns][nd].insert_after(next, rq);
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        self.fifo[ns][nd].remove(next);
    }

    fn former(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        let (s, d) = Self::slot(ctx, rq);
        self.fifo[s][d].prev(rq)
    }

    fn latter(&self, ctx: &SchedCtx, rq: RqId) -> Option<RqId> {
        let (s, d) = Self::slot(ctx, rq);
        self.fifo[s][d].next(rq)
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        let mut rq = None;
        // 1. Expired requests after a batch (async before sync, writes
        //    before reads).
        if self.batched > self.tun.fifo_batch {
            self.batched = 0;
            rq = [(ASYNC, WRITE), (ASYNC, READ), (SYNC, WRITE), (SYNC, READ)]
                .into_iter()
                .find_map(|(s, d)| self.expired(ctx, s, d));
        }
        // 2. Reads before writes unless writes are starved; sync before
        //    async.
        let rq = match rq {
            Some(rq) => rq,
            None => {
                let dir = if self.starved > self.tun.writes_starved {
                    WRITE
                } else {
                    READ
                };
                [(SYNC, dir), (ASYNC, dir), (SYNC, 1 - dir), (ASYNC, 1 - dir)]
                    .into_iter()
                    .find_map(|(s, d)| self.fifo[s][d].front())?
            }
        };
        // 3. sio_dispatch_request.
        let (s, d) = Self::slot(ctx, rq);
        self.fifo[s][d].remove(rq);
        self.batched += 1;
        if d == WRITE {
            self.starved = 0;
        } else {
            self.starved += 1;
        }
        Some(rq)
    }

    fn has_work(&self) -> bool {
        self.fifo.iter().flatten().any(|f| !f.is_empty())
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = SioTunables::defaults(self.params.hz);
        let t = &self.tun;
        let ms = |name, v, dv, help| TunableInfo {
            name,
            value: self.fmt_ms(v),
            default: self.fmt_ms(dv),
            unit: "ms",
            help,
        };
        vec![
            ms(
                "sync_read_expire",
                t.sync_read_expire,
                d.sync_read_expire,
                "soft deadline of a sync read (HZ/2)",
            ),
            ms(
                "sync_write_expire",
                t.sync_write_expire,
                d.sync_write_expire,
                "soft deadline of a sync write (2*HZ)",
            ),
            ms(
                "async_read_expire",
                t.async_read_expire,
                d.async_read_expire,
                "soft deadline of an async read (4*HZ)",
            ),
            ms(
                "async_write_expire",
                t.async_write_expire,
                d.async_write_expire,
                "soft deadline of an async write (16*HZ)",
            ),
            TunableInfo {
                name: "writes_starved",
                value: t.writes_starved.to_string(),
                default: d.writes_starved.to_string(),
                unit: "dispatches",
                help: "reads dispatched while writes wait before writes win: 2 (CM/Lineage) gives \
                       R,R,R,W; 0 (samsung_jf, and trees that never copy the tunable) gives R,W; \
                       upstream v0.2 uses 4",
            },
            TunableInfo {
                name: "fifo_batch",
                value: t.fifo_batch.to_string(),
                default: d.fifo_batch.to_string(),
                unit: "requests",
                help: "deadlines are checked once every fifo_batch+1 dispatches (8; upstream 1)",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        let ms = |p: &SchedParams| v.ms_as_jiffies(p, 0, INT_MAX);
        match name {
            "sync_read_expire" => self.tun.sync_read_expire = ms(&self.params)?,
            "sync_write_expire" => self.tun.sync_write_expire = ms(&self.params)?,
            "async_read_expire" => self.tun.async_read_expire = ms(&self.params)?,
            "async_write_expire" => self.tun.async_write_expire = ms(&self.params)?,
            "writes_starved" => self.tun.writes_starved = v.u32(0, INT_MAX)?,
            "fifo_batch" => self.tun.fifo_batch = v.u32(0, INT_MAX)?,
            _ => return Err(TunableError::unknown("sio", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, drain, layer, params, serve, swrite, BlockLayer, Direct};
    use mmcsim_elevator::types::{Op, NS_PER_MS};
    use mmcsim_elevator::Request;

    fn sio(hz: u32) -> BlockLayer {
        layer(hz, |p| Box::new(Sio::new(p)))
    }

    fn ops(v: &[Request]) -> String {
        v.iter()
            .map(|r| if r.op == Op::Read { 'R' } else { 'W' })
            .collect()
    }

    #[test]
    fn writes_starved_two_gives_r_r_r_w() {
        let mut b = sio(1000);
        for i in 0..12 {
            b.submit_bio(0, bio(Op::Write, 1_000_000 + 64 * i, 1), false);
            b.submit_bio(0, bio(Op::Read, 2_000_000 + 64 * i, 2), false);
        }
        let got = drain(&mut b, NS_PER_MS);
        assert_eq!(ops(&got[..16]), "RRRWRRRWRRRWRRRW");
        // Reads gone: the rest are writes.
        assert_eq!(ops(&got[16..]), "WWWWWWWW");
    }

    #[test]
    fn writes_starved_zero_alternates() {
        let mut b = sio(1000);
        b.elevator_mut().set_tunable("writes_starved", "0").unwrap();
        for i in 0..6 {
            b.submit_bio(0, bio(Op::Write, 1_000_000 + 64 * i, 1), false);
            b.submit_bio(0, bio(Op::Read, 2_000_000 + 64 * i, 2), false);
        }
        assert_eq!(ops(&drain(&mut b, NS_PER_MS)), "RWRWRWRWRWRW");
    }

    #[test]
    fn sync_read_before_older_async_read_and_fifo_order_not_sector_order() {
        // The block layer makes every read sync, so drive SIO directly.
        let mut e = Sio::new(&params(1000));
        let mut d = Direct::new();
        let mut ar = bio(Op::Read, 500, 1);
        ar.sync = false;
        let old_async = d.add(&mut e, 0, ar);
        let s1 = d.add(&mut e, NS_PER_MS, bio(Op::Read, 900, 2));
        let s2 = d.add(&mut e, NS_PER_MS, bio(Op::Read, 100, 2));
        let order: Vec<RqId> = std::iter::from_fn(|| d.dispatch(&mut e, NS_PER_MS)).collect();
        // Sync reads first, in arrival order (900 before 100: never sorted).
        assert_eq!(order, vec![s1, s2, old_async]);

        // Same through the block layer with writes: sync before async.
        let mut b = sio(1000);
        b.submit_bio(0, bio(Op::Write, 900, 1), false); // async write, older
        b.submit_bio(NS_PER_MS, swrite(100, 2), false);
        b.submit_bio(NS_PER_MS, swrite(50, 2), false);
        let got = drain(&mut b, 2 * NS_PER_MS);
        let v: Vec<(u64, bool)> = got.iter().map(|r| (r.sector, r.sync)).collect();
        assert_eq!(v, vec![(100, true), (50, true), (900, false)]);
    }

    #[test]
    fn expired_async_write_goes_ahead_of_sync_reads_at_the_check() {
        // writes_starved huge: only the expiry check lets the write out.
        let mut b = sio(1000);
        b.elevator_mut()
            .set_tunable("writes_starved", "1000000")
            .unwrap();
        b.submit_bio(0, bio(Op::Write, 7, 1), false);
        let mut sent = None;
        for k in 0..400u64 {
            let now = 100 * NS_PER_MS * k;
            b.submit_bio(now, bio(Op::Read, 1_000_000 + 64 * k, 2), false);
            b.submit_bio(now, bio(Op::Read, 3_000_000 + 64 * k, 2), false);
            let r = serve(&mut b, now).unwrap();
            if r.op == Op::Write {
                sent = Some(k);
                break;
            }
        }
        // Expired once jiffies > 16000, i.e. from dispatch 161 (16.1 s);
        // checks run at dispatches 9, 18, 27, ... (0-based k = 9n + 9),
        // ahead of the pending sync reads: k = 162.
        assert_eq!(sent, Some(162));
    }

    #[test]
    fn expiry_check_runs_once_every_fifo_batch_plus_one_dispatches() {
        let mut b = sio(1000);
        b.elevator_mut().set_tunable("fifo_batch", "3").unwrap();
        b.elevator_mut()
            .set_tunable("writes_starved", "1000000")
            .unwrap();
        // Expired async writes at t=0; a read backlog.
        for i in 0..4 {
            b.submit_bio(0, bio(Op::Write, 10 + 64 * i, 1), false);
        }
        for i in 0..12 {
            b.submit_bio(0, bio(Op::Read, 1_000_000 + 64 * i, 2), false);
        }
        let got = drain(&mut b, 20 * NS_PER_MS * 1000);
        // Checks at the 5th, 9th, 13th dispatch (every fifo_batch+1 = 4).
        assert_eq!(ops(&got), "RRRRWRRRWRRRWRRW");
    }

    #[test]
    fn fifo_neighbours_merge_only_if_contiguous() {
        let mut b = sio(1000);
        b.submit_bio(0, bio(Op::Write, 0, 1), false); // A, last_merge
        b.submit_bio(0, bio(Op::Write, 16, 1), false); // B: FIFO next of A
        b.submit_bio(0, bio(Op::Write, 8, 1), false); // back into A, A+B merge
        assert_eq!(b.stats().request_merges, 1);
        let r = serve(&mut b, 0).unwrap();
        assert_eq!((r.sector, r.sectors), (0, 24));

        let mut b = sio(1000);
        b.submit_bio(0, bio(Op::Write, 0, 1), false);
        b.submit_bio(0, bio(Op::Write, 500, 1), false);
        b.submit_bio(0, bio(Op::Write, 16, 1), false);
        b.submit_bio(0, bio(Op::Write, 8, 1), false); // A's FIFO next is 500
        assert_eq!(b.stats().request_merges, 0);
        // No front-merge hook: a bio ending at 500 makes a new request.
        b.submit_bio(0, bio(Op::Write, 492, 1), false);
        assert_eq!(b.stats().front_merges, 0);
    }

    #[test]
    fn tunables_defaults_at_hz_1000_and_100_and_validation() {
        for hz in [1000, 100] {
            let s = Sio::new(&params(hz));
            let t: Vec<(&str, String)> = s
                .tunables()
                .into_iter()
                .map(|t| (t.name, t.default))
                .collect();
            let want = [
                ("sync_read_expire", "500"),
                ("sync_write_expire", "2000"),
                ("async_read_expire", "4000"),
                ("async_write_expire", "16000"),
                ("writes_starved", "2"),
                ("fifo_batch", "8"),
            ];
            let want: Vec<(&str, String)> = want.iter().map(|&(n, v)| (n, v.to_string())).collect();
            assert_eq!(t, want, "hz {hz}");
        }
        let mut s = Sio::new(&params(100));
        assert_eq!(s.tunables_raw().sync_read_expire, 50);
        s.set_tunable("sync_read_expire", "15").unwrap();
        assert_eq!(s.tunables_raw().sync_read_expire, 2);
        assert_eq!(s.tunables()[0].value, "20");
        assert!(s.set_tunable("fifo_batch", "-1").is_err());
        assert!(s.set_tunable("writes_starved", "x").is_err());
        let e = s.set_tunable("read_expire", "1").unwrap_err().to_string();
        assert!(
            e.contains("valid: sync_read_expire, sync_write_expire, async_read_expire, async_write_expire, writes_starved, fifo_batch"),
            "{e}"
        );
    }
}
