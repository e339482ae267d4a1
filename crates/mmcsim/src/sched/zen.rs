//! zen (Brandon Berhent, v1.0; reference io-schedulers.md §9).
//!
//! FCFS over two FIFOs with soft deadlines checked every other dispatch.
//! **As shipped the FIFO index is the data direction**: reads use slot 0
//! (named ASYNC, `async_expire` 2 s), writes slot 1 (named SYNC,
//! `sync_expire` 250 ms), and the normal path serves slot 1 first — writes
//! before reads. `index_by_sync` = 1 indexes by `rq_is_sync` instead (later,
//! mostly blk-mq forks): sync requests in slot 1, served first.
//!
//! Dispatch (§9.3):
//! 1. If `batching > fifo_batch`: `batching = 0` and check the FIFO heads
//!    (expired = `time_after(jiffies, deadline)`). One expired → take it.
//!    Both expired → slot 1 if slot 0's deadline is later, else *nothing*
//!    (as shipped; the normal path then takes slot 1's head anyway, so an
//!    expired slot-0 request never beats an expired slot-1 request).
//!    `both_expired_fix` = 1 takes the earlier deadline instead (slot 0 if
//!    strictly earlier).
//! 2. Otherwise the head of slot 1, else the head of slot 0.
//! 3. `batching++`; tail append.
//!
//! An expire of 0 makes the kernel drop requests silently; it is rejected.
//! Merging: generic only (no request–request merges).

use mmcsim_elevator::tunable::INT_MAX;
use mmcsim_elevator::types::{Ns, NS_PER_S};
use mmcsim_elevator::{
    Elevator, FifoList, RqId, SchedCtx, SchedParams, TunableError, TunableInfo, TunableValue,
};

const ASYNC: usize = 0;
const SYNC: usize = 1;

/// Tunables of zen (expiries in jiffies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZenTunables {
    /// `sync_expire`: deadline of slot 1, jiffies (HZ/4 = 250 ms).
    pub sync_expire: u64,
    /// `async_expire`: deadline of slot 0, jiffies (2·HZ = 2000 ms).
    pub async_expire: u64,
    /// `fifo_batch` (1): deadlines are checked when `batching` exceeds it.
    pub fifo_batch: u32,
    /// Quirk switch: false (as shipped) = slot by data direction.
    pub index_by_sync: bool,
    /// Quirk switch: false (as shipped) = both heads expired and slot 0's
    /// deadline not later → the check returns nothing.
    pub both_expired_fix: bool,
}

impl ZenTunables {
    /// Defaults at tick rate `hz`.
    pub fn defaults(hz: u32) -> Self {
        let hz = hz as u64;
        ZenTunables {
            sync_expire: hz / 4,
            async_expire: 2 * hz,
            fifo_batch: 1,
            index_by_sync: false,
            both_expired_fix: false,
        }
    }
}

/// The zen elevator (`zen-iosched.c`).
#[derive(Clone, Debug)]
pub struct Zen {
    params: SchedParams,
    tun: ZenTunables,
    fifo: [FifoList; 2],
    batching: u32,
}

/// `elv_priv[0]`: the slot the request was queued in.
const P_SLOT: usize = 0;

fn jiffy_start_ns(hz: u32, j: u64) -> Ns {
    ((j as u128 * NS_PER_S as u128).div_ceil(hz as u128)) as Ns
}

impl Zen {
    /// A new zen with the defaults at `params.hz`.
    pub fn new(params: &SchedParams) -> Self {
        Zen {
            params: *params,
            tun: ZenTunables::defaults(params.hz),
            fifo: [FifoList::with_capacity(256), FifoList::with_capacity(256)],
            batching: 0,
        }
    }

    /// Current tunables (kernel units).
    pub fn tunables_raw(&self) -> ZenTunables {
        self.tun
    }

    /// The head of `slot` if expired, with its deadline in jiffies.
    fn expired(&self, ctx: &SchedCtx, slot: usize) -> Option<(RqId, u64)> {
        let rq = self.fifo[slot].front()?;
        let dl = self.params.jiffies(ctx.rq(rq).fifo_time);
        (self.params.jiffies(ctx.now) > dl).then_some((rq, dl))
    }

    /// `zen_check_fifo`.
    fn check_fifo(&self, ctx: &SchedCtx) -> Option<RqId> {
        match (self.expired(ctx, SYNC), self.expired(ctx, ASYNC)) {
            (Some((s, sdl)), Some((a, adl))) => {
                if adl > sdl {
                    Some(s)
                } else if self.tun.both_expired_fix {
                    Some(if adl < sdl { a } else { s })
                } else {
                    None
                }
            }
            (Some((s, _)), None) => Some(s),
            (None, Some((a, _))) => Some(a),
            (None, None) => None,
        }
    }

    fn fmt_ms(&self, j: u64) -> String {
        self.params.jiffies_to_ms(j).to_string()
    }
}

impl Elevator for Zen {
    fn name(&self) -> &str {
        "zen"
    }

    fn add_request(&mut self, ctx: &mut SchedCtx, rq: RqId) {
        let r = ctx.rq(rq);
        let slot = if self.tun.index_by_sync {
            r.sync as usize
        } else {
            r.dir()
        };
        let expire = if slot == SYNC {
            self.tun.sync_expire
        } else {
            self.tun.async_expire
        };
        let deadline = self.params.jiffies(ctx.now) + expire;
        ctx.set_fifo_time(rq, jiffy_start_ns(self.params.hz, deadline));
        ctx.set_elv_priv(rq, P_SLOT, slot as u64);
        self.fifo[slot].push_back(rq);
    }

    fn merge_requests(&mut self, ctx: &mut SchedCtx, rq: RqId, next: RqId) {
        let rs = ctx.rq(rq).elv_priv[P_SLOT] as usize;
        let ns = ctx.rq(next).elv_priv[P_SLOT] as usize;
        if self.fifo[rs].contains(rq)
            && self.fifo[ns].contains(next)
            && self.params.jiffies(ctx.rq(next).fifo_time)
                < self.params.jiffies(ctx.rq(rq).fifo_time)
        {
            self.fifo[rs].remove(rq);
            self.fifo[ns].insert_after(next, rq);
            ctx.set_elv_priv(rq, P_SLOT, ns as u64);
            ctx.set_fifo_time(rq, ctx.rq(next).fifo_time);
        }
        self.fifo[ns].remove(next);
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx, _force: bool) -> Option<RqId> {
        let mut rq = None;
        if self.batching > self.tun.fifo_batch {
            self.batching = 0;
            rq = self.check_fifo(ctx);
        }
        let rq = rq.or_else(|| self.fifo[SYNC].front().or(self.fifo[ASYNC].front()))?;
        let slot = ctx.rq(rq).elv_priv[P_SLOT] as usize;
        self.fifo[slot].remove(rq);
        self.batching += 1;
        Some(rq)
    }

    fn has_work(&self) -> bool {
        !self.fifo[0].is_empty() || !self.fifo[1].is_empty()
    }

    fn tunables(&self) -> Vec<TunableInfo> {
        let d = ZenTunables::defaults(self.params.hz);
        let t = &self.tun;
        vec![
            TunableInfo {
                name: "sync_expire",
                value: self.fmt_ms(t.sync_expire),
                default: self.fmt_ms(d.sync_expire),
                unit: "ms",
                help: "soft deadline of slot 1 (HZ/4): writes as shipped, sync I/O with \
                       index_by_sync; 0 rejected (the kernel drops requests)",
            },
            TunableInfo {
                name: "async_expire",
                value: self.fmt_ms(t.async_expire),
                default: self.fmt_ms(d.async_expire),
                unit: "ms",
                help: "soft deadline of slot 0 (2*HZ): reads as shipped, async I/O with \
                       index_by_sync; 0 rejected",
            },
            TunableInfo {
                name: "fifo_batch",
                value: t.fifo_batch.to_string(),
                default: d.fifo_batch.to_string(),
                unit: "requests",
                help: "deadlines are checked once batching exceeds this (1: every other dispatch)",
            },
            TunableInfo {
                name: "index_by_sync",
                value: (t.index_by_sync as u8).to_string(),
                default: (d.index_by_sync as u8).to_string(),
                unit: "bool",
                help: "quirk switch: 0 (as shipped) = slot by data direction, so writes go \
                       before reads; 1 = slot by rq_is_sync (later forks), sync first",
            },
            TunableInfo {
                name: "both_expired_fix",
                value: (t.both_expired_fix as u8).to_string(),
                default: (d.both_expired_fix as u8).to_string(),
                unit: "bool",
                help: "quirk switch: 0 (as shipped) = with both heads expired the check yields \
                       nothing unless slot 0 expires later, so slot 1 always wins; 1 = take the \
                       earlier deadline",
            },
        ]
    }

    fn set_tunable(&mut self, name: &str, value: &str) -> Result<(), TunableError> {
        let v = TunableValue::new(name, value);
        let p = &self.params;
        match name {
            "sync_expire" => self.tun.sync_expire = v.ms_as_jiffies(p, 1, INT_MAX)?,
            "async_expire" => self.tun.async_expire = v.ms_as_jiffies(p, 1, INT_MAX)?,
            "fifo_batch" => self.tun.fifo_batch = v.u32(0, INT_MAX)?,
            "index_by_sync" => self.tun.index_by_sync = v.bool()?,
            "both_expired_fix" => self.tun.both_expired_fix = v.bool()?,
            _ => return Err(TunableError::unknown("zen", name, &self.tunables())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::testutil::{bio, drain, layer, params, serve, swrite, Direct};
    use mmcsim_elevator::types::{Op, NS_PER_MS};

    #[test]
    fn writes_first_fifo_within_a_slot() {
        let mut b = layer(1000, |p| Box::new(Zen::new(p)));
        for (op, s) in [
            (Op::Read, 900),
            (Op::Write, 500),
            (Op::Read, 100),
            (Op::Write, 300),
            (Op::Write, 700),
            (Op::Read, 50),
        ] {
            b.submit_bio(0, bio(op, s, 1), false);
        }
        let got: Vec<(Op, u64)> = drain(&mut b, NS_PER_MS)
            .iter()
            .map(|r| (r.op, r.sector))
            .collect();
        assert_eq!(
            got,
            vec![
                (Op::Write, 500),
                (Op::Write, 300),
                (Op::Write, 700),
                (Op::Read, 900),
                (Op::Read, 100),
                (Op::Read, 50)
            ]
        );
    }

    #[test]
    fn index_by_sync_serves_sync_first() {
        let mut b = layer(1000, |p| Box::new(Zen::new(p)));
        b.elevator_mut().set_tunable("index_by_sync", "1").unwrap();
        b.submit_bio(0, bio(Op::Write, 500, 1), false);
        b.submit_bio(0, bio(Op::Read, 900, 2), false);
        b.submit_bio(0, swrite(300, 3), false);
        b.submit_bio(0, bio(Op::Write, 700, 1), false);
        let got: Vec<u64> = drain(&mut b, NS_PER_MS).iter().map(|r| r.sector).collect();
        assert_eq!(got, vec![900, 300, 500, 700]);
    }

    #[test]
    fn expired_read_served_at_next_check_when_no_write_expired() {
        // One fresh write per 10 ms keeps slot 1 busy but never expired.
        let mut b = layer(1000, |p| Box::new(Zen::new(p)));
        b.submit_bio(0, bio(Op::Read, 42, 1), false);
        let mut sent = None;
        for k in 0..400u64 {
            let now = 10 * NS_PER_MS * k;
            b.submit_bio(now, bio(Op::Write, 1_000_000 + 64 * k, 2), false);
            if serve(&mut b, now).unwrap().op == Op::Read {
                sent = Some(k);
                break;
            }
        }
        // Expired from jiffies > 2000 (k = 201); checks run at every other
        // dispatch (k = 2, 4, ...): k = 202.
        assert_eq!(sent, Some(202));
    }

    /// A read at t=0 behind a write stream arriving twice as fast as it is
    /// served (so expired writes pile up); returns when the read left.
    fn read_behind_write_backlog(fix: &str) -> Option<Ns> {
        let mut e = Zen::new(&params(1000));
        e.set_tunable("both_expired_fix", fix).unwrap();
        let mut d = Direct::new();
        let read = d.add(&mut e, 0, bio(Op::Read, 42, 1));
        for k in 0..800u64 {
            let now = 10 * NS_PER_MS * k;
            d.add(&mut e, now, bio(Op::Write, 1_000_000 + 128 * k, 2));
            d.add(&mut e, now, bio(Op::Write, 1_000_064 + 128 * k, 2));
            if d.dispatch(&mut e, now) == Some(read) {
                return Some(now);
            }
        }
        None
    }

    #[test]
    fn sustained_expired_write_backlog_starves_reads() {
        // As shipped: the expired write head always wins.
        assert_eq!(read_behind_write_backlog("0"), None);
        // Fixed: the read goes once the write head's deadline (arrival +
        // 250 ms, arrival ≈ now/2) is later than the read's (2000 ms).
        let t = read_behind_write_backlog("1").unwrap();
        assert!((3500 * NS_PER_MS..3560 * NS_PER_MS).contains(&t), "{t}");
    }

    #[test]
    fn tunables_defaults_and_validation() {
        for hz in [1000, 100] {
            let z = Zen::new(&params(hz));
            let got: Vec<(&str, String)> = z
                .tunables()
                .into_iter()
                .map(|t| (t.name, t.default))
                .collect();
            let want = [
                ("sync_expire", "250"),
                ("async_expire", "2000"),
                ("fifo_batch", "1"),
                ("index_by_sync", "0"),
                ("both_expired_fix", "0"),
            ];
            let want: Vec<(&str, String)> = want.iter().map(|&(n, v)| (n, v.to_string())).collect();
            assert_eq!(got, want, "hz {hz}");
        }
        let mut z = Zen::new(&params(100));
        assert_eq!(z.tunables_raw().sync_expire, 25);
        let e = z.set_tunable("sync_expire", "0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "tunable `sync_expire`: 0 is out of range (expected 1..=2147483647)"
        );
        assert!(z.set_tunable("async_expire", "0").is_err());
        z.set_tunable("sync_expire", "1").unwrap();
        assert_eq!(z.tunables_raw().sync_expire, 1, "1 ms rounds up to a jiffy");
        assert!(z.set_tunable("index_by_sync", "2").is_err());
        let e = z.set_tunable("expire", "1").unwrap_err().to_string();
        assert!(
            e.contains(
                "valid: sync_expire, async_expire, fifo_batch, index_by_sync, both_expired_fix"
            ),
            "{e}"
        );
    }
}
