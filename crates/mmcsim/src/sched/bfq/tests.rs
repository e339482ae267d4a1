//! BFQ behaviour (reference §5.6), driven through a `BlockLayer` by a fake
//! driver and fake processes on a fake clock.

use super::*;
use crate::sched::testutil::{BlockLayer, QueueParams};
use mmcsim_elevator::types::{Op, NS_PER_MS, NS_PER_US};
use mmcsim_elevator::{Request, Submitter};

/// One process issuing fixed-size I/O.
#[derive(Clone, Debug)]
struct Proc {
    pid: u32,
    ioprio: IoPrio,
    op: Op,
    sync: bool,
    size: u32,
    /// Gap added after each request (0 = sequential).
    gap: u64,
    /// Random sectors (seeky) instead of sequential.
    seeky: bool,
    rng: u64,
    next: u64,
    depth: u32,
    outstanding: u32,
    start: Ns,
    stop: Ns,
    next_submit: Ns,
}

impl Proc {
    fn reader(pid: u32, base: u64) -> Proc {
        Proc {
            pid,
            ioprio: IoPrio::NORM,
            op: Op::Read,
            sync: true,
            size: 128,
            gap: 0,
            seeky: false,
            rng: (pid as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) + 1,
            next: base,
            depth: 1,
            outstanding: 0,
            start: 0,
            stop: Ns::MAX,
            next_submit: 0,
        }
    }

    fn sector(&mut self) -> u64 {
        if self.seeky {
            self.rng = self
                .rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.rng >> 33) % (1 << 24)) & !7
        } else {
            let s = self.next;
            self.next += self.size as u64 + self.gap;
            s
        }
    }

    fn ready(&self, now: Ns) -> bool {
        now >= self.start && now < self.stop && self.outstanding < self.depth
    }
}

/// A completed request as the harness saw it.
#[derive(Clone, Copy, Debug)]
struct Done {
    pid: u32,
    sectors: u32,
    at: Ns,
}

struct Sim {
    b: BlockLayer,
    now: Ns,
    /// (completion time, request) in the driver.
    driver: Vec<(Ns, RqId)>,
    slots: usize,
    device_free: Ns,
    device_pos: u64,
    procs: Vec<Proc>,
    done: Vec<Done>,
    trace: BfqTrace,
    /// Largest number of async requests in the driver while a sync process
    /// was active, and at any time.
    max_async_with_sync: usize,
    max_async: usize,
    /// Largest number of requests in the driver at once.
    max_in_driver: usize,
    /// An async request was fetched while a sync one was in the driver.
    async_over_sync: bool,
    sync_active_until: Ns,
}

fn params() -> SchedParams {
    SchedParams {
        hz: 1000,
        nonrot: true,
    }
}

impl Sim {
    fn new(procs: Vec<Proc>, tunables: &[(&str, &str)]) -> Sim {
        Self::with(params(), 2, procs, tunables)
    }

    fn with(sp: SchedParams, slots: usize, procs: Vec<Proc>, tunables: &[(&str, &str)]) -> Sim {
        let trace: BfqTrace = Arc::new(Mutex::new(Vec::new()));
        let mut e = Bfq::new(&sp).with_trace(trace.clone());
        e.set_tunable("low_latency", "0").unwrap();
        e.set_tunable("hw_tag", "0").unwrap();
        for (k, v) in tunables {
            e.set_tunable(k, v).unwrap();
        }
        let b = BlockLayer::new(QueueParams::default(), Box::new(e), sp);
        Sim {
            b,
            now: 0,
            driver: Vec::new(),
            slots,
            device_free: 0,
            device_pos: 0,
            procs,
            done: Vec::new(),
            trace,
            max_async_with_sync: 0,
            max_async: 0,
            max_in_driver: 0,
            async_over_sync: false,
            sync_active_until: 0,
        }
    }

    /// Device time: 100 µs + 2 µs/sector, + 400 µs when not contiguous.
    fn service(&mut self, r: &Request) -> Ns {
        let mut t = 100 * NS_PER_US + 2 * NS_PER_US * r.sectors as u64;
        if r.sector != self.device_pos {
            t += 400 * NS_PER_US;
        }
        self.device_pos = r.end();
        t
    }

    fn submit_ready(&mut self) {
        for i in 0..self.procs.len() {
            while self.procs[i].ready(self.now) && self.procs[i].next_submit <= self.now {
                let p = &mut self.procs[i];
                let sector = p.sector();
                p.outstanding += 1;
                let bio = Bio {
                    op: p.op,
                    sector,
                    sectors: p.size,
                    sync: p.sync,
                    fua: false,
                    secure: false,
                    prio: false,
                    pid: p.pid,
                    thread: i as u32,
                    ioprio: p.ioprio,
                    submitter: Submitter::Call(0),
                };
                self.b.submit_bio(self.now, bio, false);
            }
        }
    }

    fn pump(&mut self) {
        while self.driver.len() < self.slots {
            let Some(rq) = self.b.fetch(self.now) else {
                break;
            };
            self.b.activate(self.now, rq);
            let r = self.b.request(rq).clone();
            let sync_in = self.driver.iter().any(|&(_, d)| self.b.request(d).sync);
            if !r.sync && sync_in {
                self.async_over_sync = true;
            }
            let svc = self.service(&r);
            let end = self.device_free.max(self.now) + svc;
            self.device_free = end;
            self.driver.push((end, rq));
            let asyncs = self
                .driver
                .iter()
                .filter(|&&(_, d)| !self.b.request(d).sync)
                .count();
            self.max_async = self.max_async.max(asyncs);
            self.max_in_driver = self.max_in_driver.max(self.driver.len());
            if self.now < self.sync_active_until {
                self.max_async_with_sync = self.max_async_with_sync.max(asyncs);
            }
        }
    }

    fn run_until(&mut self, end: Ns) {
        loop {
            self.submit_ready();
            self.pump();
            let mut next = Ns::MAX;
            for &(t, _) in &self.driver {
                next = next.min(t);
            }
            if let Some(t) = self.b.timer() {
                next = next.min(t);
            }
            for p in &self.procs {
                if p.outstanding < p.depth && p.stop > self.now {
                    next = next.min(p.next_submit.max(p.start));
                }
            }
            if next > end {
                self.now = end;
                return;
            }
            self.now = next.max(self.now);
            if self.b.timer().is_some_and(|t| t <= self.now) {
                self.b.on_timer(self.now);
            }
            let mut i = 0;
            while i < self.driver.len() {
                if self.driver[i].0 <= self.now {
                    let (_, rq) = self.driver.remove(i);
                    let r = self.b.request(rq).clone();
                    let mut bios = Vec::new();
                    self.b.complete(self.now, rq, &mut bios);
                    let p = self.procs.iter_mut().find(|p| p.pid == r.pid).unwrap();
                    p.outstanding -= bios.len() as u32;
                    p.next_submit = self.now;
                    self.done.push(Done {
                        pid: r.pid,
                        sectors: r.sectors,
                        at: self.now,
                    });
                } else {
                    i += 1;
                }
            }
        }
    }

    fn served(&self, pid: u32, from: Ns, to: Ns) -> u64 {
        self.done
            .iter()
            .filter(|d| d.pid == pid && d.at >= from && d.at < to)
            .map(|d| d.sectors as u64)
            .sum()
    }

    fn expiries(&self) -> Vec<BfqEvent> {
        self.trace
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, BfqEvent::Expire { .. }))
            .copied()
            .collect()
    }
}

fn exp(e: &BfqEvent) -> (Ns, u32, ExpireReason, u64, u64, u64, u64) {
    match *e {
        BfqEvent::Expire {
            at,
            pid,
            reason,
            service,
            charged,
            budget,
            new_max_budget,
            ..
        } => (at, pid, reason, service, charged, budget, new_max_budget),
        _ => unreachable!(),
    }
}

#[test]
fn registry_builds_bfq() {
    let e = crate::sched::builtin().create("bfq", &params()).unwrap();
    assert_eq!(e.name(), "bfq");
    assert!(e.dispatch_sort());
}

#[test]
fn two_sequential_readers_alternate_one_budget_per_slot() {
    let procs = vec![Proc::reader(1, 0), Proc::reader(2, 50_000_000)];
    let mut s = Sim::new(procs, &[]);
    s.run_until(400 * NS_PER_MS);
    let ex = s.expiries();
    assert!(ex.len() >= 6, "{ex:?}");
    let got: Vec<_> = ex.iter().take(6).map(exp).collect();
    for (i, &(_, pid, reason, service, charged, budget, new_mb)) in got.iter().enumerate() {
        assert_eq!(pid, 1 + (i as u32 % 2), "slots alternate: {got:?}");
        assert_eq!(reason, ExpireReason::BudgetExhausted, "{got:?}");
        // ⅔·16384 for new queues, then ×4 capped at 16384.
        let want = if i < 2 { 10922 } else { 16384 };
        assert_eq!(budget, want, "{got:?}");
        assert_eq!(new_mb, 16384);
        // One budget per slot: the next 128-sector request did not fit.
        assert!(service > budget - 128 && service <= budget, "{got:?}");
        // As shipped, the "slow" test is inverted: a fast queue with more
        // than max_budget/8 is charged its whole budget (the 42-sector
        // remainder here).
        assert_eq!(charged, budget);
    }
    // Dispatches within a slot all belong to the in-service reader: the
    // completion log is made of runs of ~85 then ~128 requests.
    let mut runs: Vec<(u32, usize)> = Vec::new();
    for d in &s.done {
        match runs.last_mut() {
            Some((p, n)) if *p == d.pid => *n += 1,
            _ => runs.push((d.pid, 1)),
        }
    }
    assert_eq!(runs[0], (1, 85));
    assert_eq!(runs[1], (2, 85));
    assert_eq!(runs[2], (1, 128));
    assert_eq!(runs[3], (2, 128));
}

#[test]
fn seeky_reader_expires_on_budget_timeout_charged_full_budget() {
    let mut p = Proc::reader(1, 0);
    p.seeky = true;
    p.size = 8;
    let mut s = Sim::new(vec![p], &[]);
    s.run_until(300 * NS_PER_MS);
    let ex = s.expiries();
    let (at, pid, reason, service, charged, budget, new_mb) = exp(&ex[0]);
    assert_eq!((pid, reason), (1, ExpireReason::BudgetTimeout));
    // Budget timeout set at the first completion (616 µs: 100 + 16 + 400 +
    // 100 µs... of the first request) + 125 ms.
    let first = s.done[0].at;
    let deadline = (first / NS_PER_MS + 125) * NS_PER_MS;
    assert!(
        at >= deadline && at < deadline + 2 * NS_PER_MS,
        "{at} vs {deadline}"
    );
    assert_eq!(budget, 10922);
    assert!(service < budget / 3, "{service}");
    assert_eq!(charged, budget, "charged the full budget");
    assert_eq!(new_mb, 16384, "BUDGET_TIMEOUT doubles the budget (capped)");
}

#[test]
fn be_levels_zero_and_seven_share_eight_to_one() {
    let mut a = Proc::reader(1, 0);
    a.ioprio = IoPrio {
        class: IoClass::Be,
        level: 0,
    };
    let mut b = Proc::reader(2, 50_000_000);
    b.ioprio = IoPrio {
        class: IoClass::Be,
        level: 7,
    };
    let mut s = Sim::new(vec![a, b], &[]);
    let end = 20_000 * NS_PER_MS;
    s.run_until(end);
    let (x, y) = (s.served(1, 0, end), s.served(2, 0, end));
    let ratio = x as f64 / y as f64;
    assert!((7.5..8.5).contains(&ratio), "{x} / {y} = {ratio}");
}

#[test]
fn async_writer_waits_for_sync_and_keeps_four_in_flight() {
    let reader = Proc {
        stop: 1000 * NS_PER_MS,
        ..Proc::reader(1, 0)
    };
    let writer = Proc {
        op: Op::Write,
        sync: false,
        size: 64,
        gap: 64,
        depth: 48,
        ..Proc::reader(2, 40_000_000)
    };
    let mut s = Sim::with(params(), 31, vec![reader, writer], &[]);
    s.sync_active_until = 1000 * NS_PER_MS;
    s.run_until(2000 * NS_PER_MS);
    assert!(
        !s.async_over_sync,
        "async fetched while a sync read was in flight"
    );
    assert_eq!(
        s.max_async_with_sync, 4,
        "max_budget_async_rq while others are busy"
    );
    assert!(s.served(2, 0, 1000 * NS_PER_MS) > 0);
    // Alone, the async queue may have up to 4 × 4 = 16 in flight.
    assert_eq!(s.max_async, 16);
}

#[test]
fn new_reader_is_weight_raised_twenty_times_for_about_two_seconds() {
    let old = Proc::reader(1, 0);
    let new = Proc {
        start: 4000 * NS_PER_MS,
        ..Proc::reader(2, 50_000_000)
    };
    // A fixed max_budget of 4096 sectors (~12 ms slots) keeps the slot
    // granularity well below the 1.5 s window; with the auto value
    // (~63k sectors after 32 rate samples) one old-reader slot is already a
    // large part of the window.
    let mut s = Sim::new(
        vec![old, new],
        &[("low_latency", "1"), ("max_budget", "4096")],
    );
    s.run_until(9000 * NS_PER_MS);
    let from = 4000 * NS_PER_MS;
    let (n, o) = (
        s.served(2, from, from + 1500 * NS_PER_MS),
        s.served(1, from, from + 1500 * NS_PER_MS),
    );
    let ratio = n as f64 / o as f64;
    assert!((16.0..24.0).contains(&ratio), "raised: {n} / {o} = {ratio}");
    // Once raising is over, equal weights share about equally.
    let (n, o) = (
        s.served(2, 6500 * NS_PER_MS, 9000 * NS_PER_MS),
        s.served(1, 6500 * NS_PER_MS, 9000 * NS_PER_MS),
    );
    let ratio = n as f64 / o as f64;
    assert!((0.8..1.25).contains(&ratio), "after: {n} / {o} = {ratio}");
}

#[test]
fn hw_tag_detection_legacy_mmc_zero_cmdq_one() {
    let hw = |slots: usize| {
        let procs = (1..=4)
            .map(|i| Proc {
                depth: 8,
                gap: 8, // no merging: 8 separate requests each
                ..Proc::reader(i, i as u64 * 10_000_000)
            })
            .collect();
        let mut s = Sim::with(params(), slots, procs, &[("hw_tag", "-1")]);
        s.run_until(500 * NS_PER_MS);
        let ev = s.trace.lock().unwrap().clone();
        ev.iter()
            .filter_map(|e| match e {
                BfqEvent::HwTag { value, .. } => Some(*value),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(hw(2).first(), Some(&0), "pipelined mmcqd: peak 2 in driver");
    assert_eq!(hw(31), vec![1], "CMDQ: peak > 4, then sticky");
}

#[test]
fn merges_stay_within_the_submitters_queue() {
    let sp = params();
    let mut b = BlockLayer::new(QueueParams::default(), Box::new(Bfq::new(&sp)), sp);
    let rd = |pid: u32, sector: u64| Bio {
        op: Op::Read,
        sector,
        sectors: 8,
        sync: true,
        fua: false,
        secure: false,
        prio: false,
        pid,
        thread: pid,
        ioprio: IoPrio::NORM,
        submitter: Submitter::Call(0),
    };
    b.submit_bio(0, rd(1, 100), false);
    b.submit_bio(0, rd(2, 108), false); // contiguous, other process
    b.submit_bio(0, rd(1, 92), false); // front merge into pid 1's request
    b.submit_bio(0, rd(1, 108), false); // back merge: pid 1's own queue
    let st = b.stats();
    assert_eq!((st.front_merges, st.back_merges), (1, 1));
    // A sync bio never joins an async request.
    let wr = Bio {
        op: Op::Write,
        sync: false,
        ..rd(3, 1000)
    };
    b.submit_bio(0, wr, false);
    b.submit_bio(
        0,
        Bio {
            sector: 1008,
            sync: true,
            ..wr
        },
        false,
    );
    assert_eq!(b.stats().back_merges, 1);
}

#[test]
fn idle_class_queue_expires_after_each_dispatch_when_others_are_busy() {
    let mut idle = Proc::reader(1, 0);
    idle.ioprio = IoPrio {
        class: IoClass::Idle,
        level: 7,
    };
    let be = Proc::reader(2, 50_000_000);
    let mut s = Sim::new(vec![idle, be], &[]);
    s.run_until(1000 * NS_PER_MS);
    let ex = s.expiries();
    let idle_slots: Vec<_> = ex.iter().map(exp).filter(|e| e.1 == 1).collect();
    assert!(!idle_slots.is_empty());
    for e in &idle_slots {
        assert_eq!((e.2, e.3), (ExpireReason::BudgetExhausted, 128), "{e:?}");
    }
    // Served only after waiting HZ/5 each time: about 5 per second.
    assert!((4..=6).contains(&idle_slots.len()), "{}", idle_slots.len());
}

#[test]
fn tunables_in_ms_at_hz_100_and_validation() {
    let sp = SchedParams {
        hz: 100,
        nonrot: true,
    };
    let mut e = Bfq::new(&sp);
    let t = e.tunables_raw();
    assert_eq!(t.timeout, [4, 12], "HZ/25, HZ/8 jiffies");
    assert_eq!(t.slice_idle, 1, "HZ/125 = 0 clamps to one jiffy");
    assert_eq!(t.fifo_expire, [25, 12]);
    let show = |e: &Bfq, n: &str| {
        e.tunables()
            .into_iter()
            .find(|t| t.name == n)
            .unwrap()
            .value
    };
    assert_eq!(show(&e, "timeout_sync"), "120");
    assert_eq!(show(&e, "timeout_async"), "40");
    assert_eq!(show(&e, "slice_idle"), "10");
    assert_eq!(show(&e, "fifo_expire_sync"), "120");
    assert_eq!(show(&e, "fifo_expire_async"), "250");
    assert_eq!(show(&e, "wr_rt_max_time"), "300");
    assert_eq!(show(&e, "wr_min_idle_time"), "2000");
    assert_eq!(show(&e, "max_budget"), "0");
    assert_eq!(show(&e, "back_seek_max"), "16384");
    e.set_tunable("slice_idle", "15").unwrap();
    assert_eq!(
        e.tunables_raw().slice_idle,
        2,
        "15 ms rounds up to 2 jiffies"
    );
    assert_eq!(show(&e, "slice_idle"), "20");
    let d = Bfq::new(&params());
    assert_eq!(show(&d, "timeout_sync"), "125");
    assert_eq!(show(&d, "slice_idle"), "8");
    assert_eq!(show(&d, "timeout_async"), "40");

    assert!(e.set_tunable("max_budget_async_rq", "0").is_err());
    assert!(e.set_tunable("timeout_sync", "0").is_err());
    assert!(e.set_tunable("low_latency", "2").is_err());
    assert!(e.set_tunable("hw_tag", "2").is_err());
    assert!(e.set_tunable("wr_coeff", "x").is_err());
    assert!(e.set_tunable("back_seek_penalty", "0").is_err());
    let err = e.set_tunable("quantum", "4").unwrap_err().to_string();
    assert!(
        err.contains("valid: fifo_expire_sync, fifo_expire_async, back_seek_max"),
        "{err}"
    );
    assert!(err.contains("wr_max_softrt_rate, hw_tag"), "{err}");
    e.set_tunable("max_budget", "4096").unwrap();
    assert_eq!(show(&e, "max_budget"), "4096");
}

impl Sim {
    /// As [`Sim::new`], with the blk-mq BFQ constants.
    fn new_mq(procs: Vec<Proc>) -> Sim {
        let mut s = Self::new(procs, &[]);
        let sp = params();
        let mut e = Bfq::with_variant(&sp, BfqVariant::MQ).with_trace(s.trace.clone());
        e.set_tunable("low_latency", "0").unwrap();
        e.set_tunable("hw_tag", "0").unwrap();
        s.b = BlockLayer::new(QueueParams::default(), Box::new(e), sp);
        s
    }
}

#[test]
fn bfq_mq_weights_are_ten_per_level_and_share_eight_to_one() {
    let sp = params();
    let mut e = Bfq::with_variant(&sp, BfqVariant::MQ);
    let q0 = e.get_queue(
        0,
        1,
        true,
        IoPrio {
            class: IoClass::Be,
            level: 0,
        },
    );
    let q7 = e.get_queue(
        0,
        2,
        true,
        IoPrio {
            class: IoClass::Be,
            level: 7,
        },
    );
    let q4 = e.get_queue(0, 3, true, IoPrio::NORM);
    assert_eq!(e.queues[q0 as usize].orig_weight, 80);
    assert_eq!(e.queues[q7 as usize].orig_weight, 10);
    assert_eq!(e.queues[q4 as usize].orig_weight, 40, "BE default 40");
    let mut a = Proc::reader(1, 0);
    a.ioprio = IoPrio {
        class: IoClass::Be,
        level: 0,
    };
    let mut b = Proc::reader(2, 50_000_000);
    b.ioprio = IoPrio {
        class: IoClass::Be,
        level: 7,
    };
    let mut s = Sim::new_mq(vec![a, b]);
    let end = 20_000 * NS_PER_MS;
    s.run_until(end);
    let (x, y) = (s.served(1, 0, end), s.served(2, 0, end));
    let ratio = x as f64 / y as f64;
    assert!((7.5..8.5).contains(&ratio), "{x} / {y} = {ratio}");
}

#[test]
fn bfq_mq_defaults_differ_from_v7r8_as_section_11_says() {
    let sp = params();
    let e = Bfq::with_variant(&sp, BfqVariant::MQ);
    assert_eq!(e.name(), "bfq-mq");
    assert!(e.blk_mq());
    let t = e.tunables();
    let get = |n: &str| t.iter().find(|x| x.name == n).map(|x| x.default.clone());
    assert_eq!(get("wr_coeff").as_deref(), Some("30"));
    assert_eq!(get("timeout_sync").as_deref(), Some("125"));
    assert_eq!(get("timeout_async"), None, "one timeout");
    assert_eq!(get("slice_idle").as_deref(), Some("8"));
    assert_eq!(get("slice_idle_us").as_deref(), Some("8000"));
    assert_eq!(get("strict_guarantees").as_deref(), Some("0"));
    assert_eq!(get("low_latency").as_deref(), Some("1"));
    assert_eq!(get("max_budget").as_deref(), Some("0"));
    assert_eq!(BfqVariant::MQ.async_charge_factor, 3);
    assert_eq!(
        (
            BfqVariant::MQ.large_burst_thresh,
            BfqVariant::MQ.burst_interval_ms
        ),
        (8, 180)
    );
    let mut e = e;
    e.set_tunable("slice_idle_us", "2500").unwrap();
    assert_eq!(e.tun.slice_idle, 3, "rounded up to jiffies");
    assert!(e.set_tunable("timeout_async", "40").is_err());
    // v7r8 unchanged.
    let v = Bfq::new(&sp);
    assert_eq!(v.name(), "bfq");
    assert!(v
        .tunables()
        .iter()
        .any(|x| x.name == "wr_coeff" && x.default == "20"));
}

impl Sim {
    /// bfq-mq on a `slots`-deep driver, low_latency 0, with `tunables`.
    fn mq_with(slots: usize, procs: Vec<Proc>, tunables: &[(&str, &str)]) -> Sim {
        let mut s = Self::with(params(), slots, procs, &[]);
        let sp = params();
        let mut e = Bfq::with_variant(&sp, BfqVariant::MQ).with_trace(s.trace.clone());
        e.set_tunable("low_latency", "0").unwrap();
        for (k, v) in tunables {
            e.set_tunable(k, v).unwrap();
        }
        s.b = BlockLayer::new(QueueParams::default(), Box::new(e), sp);
        s
    }

    fn idles(&self) -> usize {
        self.trace
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, BfqEvent::Idle { .. }))
            .count()
    }
}

#[test]
fn bfq_mq_strict_guarantees_idles_and_serves_one_request_at_a_time_on_cmdq() {
    let run = |strict: &str| {
        let mut a = Proc::reader(1, 0);
        a.depth = 4;
        let mut b = Proc::reader(2, 50_000_000);
        b.depth = 4;
        let mut s = Sim::mq_with(
            31,
            vec![a, b],
            &[("hw_tag", "1"), ("strict_guarantees", strict)],
        );
        s.run_until(2_000 * NS_PER_MS);
        (
            s.idles(),
            s.max_in_driver,
            s.served(1, 0, 2_000 * NS_PER_MS),
        )
    };
    // Non-rotational, hw_tag 1, equal weights: no idling, and a new request
    // is dispatched while others are still in the (deep) driver (adjacent
    // reads merge, so the depth stays at 2).
    let (idles0, depth0, served0) = run("0");
    assert_eq!(idles0, 0);
    assert_eq!(depth0, 2);
    // strict: idles whenever the in-service queue empties, one request in
    // the driver at a time.
    let (idles1, depth1, served1) = run("1");
    assert!(idles1 > 100, "idled {idles1} times");
    assert_eq!(depth1, 1);
    assert!(served0 > 0 && served1 > 0);
    // Tunable semantics: enabling raises slice_idle to >= 8 ms.
    let sp = params();
    let mut e = Bfq::with_variant(&sp, BfqVariant::MQ);
    e.set_tunable("slice_idle", "2").unwrap();
    e.set_tunable("strict_guarantees", "1").unwrap();
    assert_eq!(e.tun.slice_idle, 8);
    assert!(e.strict());
    // v7r8 does not have the tunable.
    assert!(Bfq::new(&sp).set_tunable("strict_guarantees", "1").is_err());
}

/// A (BE 0) reads 8 sectors every 2 ms, each taking 1 ms; B (BE 7) has
/// four requests queued from the start. Returns (ms, pid) per dispatch up
/// to 14 ms and A's inject limit.
fn inject_scenario(variant: BfqVariant) -> (Vec<(u64, u32)>, u32, usize) {
    use crate::sched::testutil::{bio, with_prio, Direct};
    let sp = params();
    let trace: BfqTrace = Arc::new(Mutex::new(Vec::new()));
    let mut e = Bfq::with_variant(&sp, variant).with_trace(trace.clone());
    e.set_tunable("low_latency", "0").unwrap();
    e.set_tunable("hw_tag", "1").unwrap();
    let mut d = Direct::new();
    let ms = NS_PER_MS;
    let a = |i: u64| with_prio(bio(Op::Read, i * 8, 1), IoClass::Be, 0);
    let mut log = Vec::new();
    // Requests in the driver: (completion time, id).
    let mut driver: Vec<(Ns, RqId)> = Vec::new();
    let mut pump = |e: &mut Bfq, d: &mut Direct, now: Ns, driver: &mut Vec<(Ns, RqId)>| {
        while let Some(rq) = d.dispatch(e, now) {
            e.activate(&mut d.ctx(now), rq);
            let pid = d.rqs[rq].pid;
            log.push((now / ms, pid));
            // A's requests take 1 ms, B's 1.5 ms.
            driver.push((now + if pid == 1 { ms } else { 3 * ms / 2 }, rq));
        }
    };
    d.add(&mut e, 0, a(0));
    for i in 0..4 {
        d.add(
            &mut e,
            0,
            with_prio(bio(Op::Read, 1_000_000 + i * 8, 2), IoClass::Be, 7),
        );
    }
    let mut next_a = 1;
    let mut t = 0;
    pump(&mut e, &mut d, t, &mut driver);
    // Event loop on a 0.5 ms grid up to 14 ms.
    while t < 14 * ms {
        t += ms / 2;
        driver.sort();
        while let Some(&(at, rq)) = driver.first() {
            if at > t {
                break;
            }
            driver.remove(0);
            e.completed(&mut d.ctx(t), rq);
        }
        if t % (2 * ms) == 0 {
            d.add(&mut e, t, a(next_a));
            next_a += 1;
        }
        pump(&mut e, &mut d, t, &mut driver);
    }
    let qa = e.bics[&1].sync_q.unwrap();
    let idles = trace
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, BfqEvent::Idle { .. }))
        .count();
    (log, e.queues[qa as usize].inject_limit, idles)
}

#[test]
fn bfq_mq_injects_other_queues_while_idling_within_the_limit() {
    let (log, limit, idles) = inject_scenario(BfqVariant::MQ);
    // 0–10 ms: A's limit is 0 (no baseline sample yet; sampling starts 10 ms
    // after the queue was created), so B waits although A idles.
    // 10 ms: A's request arrives with the driver empty → baseline 1 ms,
    // limit 1 → at 11 ms one B request is injected.
    // 12 ms: A's request is timed with injection: 1 ms < 1.5 × 1 ms and
    // limit 1 ≤ max in driver (2) → limit 2 → at 13 ms two B requests.
    assert!(idles >= 6, "{idles}");
    assert_eq!(
        log,
        vec![
            (0, 1),
            (2, 1),
            (4, 1),
            (6, 1),
            (8, 1),
            (10, 1),
            (11, 2),
            (12, 1),
            (13, 2),
            (13, 2),
            (14, 1),
        ]
    );
    assert_eq!(limit, 2);
}

#[test]
fn bfq_v7r8_never_injects() {
    let (log, limit, idles) = inject_scenario(BfqVariant::V7R8);
    assert!(idles >= 6, "{idles}");
    assert!(log.iter().all(|&(_, pid)| pid == 1), "{log:?}");
    assert_eq!(log.len(), 8);
    assert_eq!(limit, 0);
}
