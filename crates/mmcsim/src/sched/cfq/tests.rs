//! CFQ behaviour (reference §4 item 6), driven through a [`BlockLayer`]
//! with a fake clock and a fake driver: fetch → activate → complete after a
//! fixed service time, one request executing at a time, `slots` requests in
//! the driver at most.

use std::collections::VecDeque;

use super::*;
use crate::sched::testutil::{BlockLayer, QueueParams};
use mmcsim_elevator::types::{IoPrio, NS_PER_MS};
use mmcsim_elevator::{Request, Submitter};

const MS: Ns = NS_PER_MS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Sequential sync reads, one outstanding, `think` after each
    /// completion.
    Reader,
    /// Async writes kept `depth` outstanding (non-contiguous).
    Writer { depth: u32 },
}

#[derive(Clone, Debug)]
struct Proc {
    pid: u32,
    kind: Kind,
    ioprio: IoPrio,
    sector: u64,
    sectors: u32,
    think: Ns,
    next_at: Option<Ns>,
    stop_at: Ns,
    outstanding: u32,
}

/// One dispatch to the driver.
#[derive(Clone, Copy, Debug)]
struct Ev {
    at: Ns,
    done: Ns,
    pid: u32,
    op: Op,
    sector: u64,
    /// Sync requests in the driver when this one was fetched.
    sync_in_driver: u32,
}

struct Sim {
    b: BlockLayer,
    now: Ns,
    svc: Ns,
    slots: usize,
    inflight: VecDeque<(RqId, Ns)>,
    procs: Vec<Proc>,
    log: Vec<Ev>,
    /// (completion time, pid, timer armed after it).
    completions: Vec<(Ns, u32, Option<Ns>)>,
}

fn cfq_layer(hz: u32, nonrot: bool, hw_tag: &str) -> BlockLayer {
    let sp = SchedParams { hz, nonrot };
    let mut c = Cfq::new(&sp);
    c.set_tunable("hw_tag", hw_tag).unwrap();
    BlockLayer::new(QueueParams::default(), Box::new(c), sp)
}

impl Sim {
    fn new(slots: usize, svc: Ns, hw_tag: &str) -> Sim {
        Sim {
            b: cfq_layer(1000, true, hw_tag),
            now: 0,
            svc,
            slots,
            inflight: VecDeque::new(),
            procs: Vec::new(),
            log: Vec::new(),
            completions: Vec::new(),
        }
    }

    fn reader(&mut self, pid: u32, sector: u64, kib: u32, think: Ns) -> &mut Proc {
        self.procs.push(Proc {
            pid,
            kind: Kind::Reader,
            ioprio: IoPrio::NORM,
            sector,
            sectors: kib * 2,
            think,
            next_at: Some(0),
            stop_at: Ns::MAX,
            outstanding: 0,
        });
        self.procs.last_mut().unwrap()
    }

    fn writer(&mut self, pid: u32, sector: u64, depth: u32) -> &mut Proc {
        self.procs.push(Proc {
            pid,
            kind: Kind::Writer { depth },
            ioprio: IoPrio::NORM,
            sector,
            sectors: 8,
            think: 0,
            next_at: Some(0),
            stop_at: Ns::MAX,
            outstanding: 0,
        });
        self.procs.last_mut().unwrap()
    }

    fn submit(&mut self, i: usize) {
        let p = &mut self.procs[i];
        let op = match p.kind {
            Kind::Reader => Op::Read,
            Kind::Writer { .. } => Op::Write,
        };
        let bio = Bio {
            op,
            sector: p.sector,
            sectors: p.sectors,
            sync: op == Op::Read,
            fua: false,
            secure: false,
            prio: false,
            pid: p.pid,
            thread: i as u32,
            ioprio: p.ioprio,
            submitter: Submitter::Call(i as u32),
        };
        p.outstanding += 1;
        p.sector += match p.kind {
            Kind::Reader => p.sectors as u64,
            Kind::Writer { .. } => 2 * p.sectors as u64,
        };
        self.b.submit_bio(self.now, bio, false);
    }

    fn pump(&mut self) {
        while self.inflight.len() < self.slots {
            let Some(rq) = self.b.fetch(self.now) else {
                break;
            };
            let sync_in_driver = self
                .inflight
                .iter()
                .filter(|(r, _)| self.b.request(*r).sync)
                .count() as u32;
            self.b.activate(self.now, rq);
            let start = self
                .inflight
                .back()
                .map_or(self.now, |&(_, d)| d.max(self.now));
            let done = start + self.svc;
            self.inflight.push_back((rq, done));
            let r: &Request = self.b.request(rq);
            self.log.push(Ev {
                at: self.now,
                done,
                pid: r.pid,
                op: r.op,
                sector: r.sector,
                sync_in_driver,
            });
        }
    }

    fn run(&mut self, until: Ns) {
        loop {
            self.pump();
            let mut t = Ns::MAX;
            if let Some(&(_, d)) = self.inflight.front() {
                t = t.min(d);
            }
            if let Some(tm) = self.b.timer() {
                t = t.min(tm.max(self.now));
            }
            for p in &self.procs {
                if let Some(n) = p.next_at {
                    t = t.min(n.max(self.now));
                }
            }
            if t > until {
                self.now = until;
                break;
            }
            self.now = t;
            while self.inflight.front().is_some_and(|&(_, d)| d <= t) {
                let (rq, _) = self.inflight.pop_front().unwrap();
                let mut done = Vec::new();
                let pid = self.b.request(rq).pid;
                self.b.complete(t, rq, &mut done);
                self.completions.push((t, pid, self.b.timer()));
                for bio in done {
                    let p = &mut self.procs[bio.thread as usize];
                    p.outstanding = p.outstanding.saturating_sub(1);
                    if t < p.stop_at {
                        p.next_at = Some(t + p.think);
                    }
                }
            }
            if self.b.timer().is_some_and(|tm| tm <= t) {
                self.b.on_timer(t);
            }
            for i in 0..self.procs.len() {
                if self.procs[i].next_at.is_some_and(|n| n <= t) {
                    self.procs[i].next_at = None;
                    match self.procs[i].kind {
                        Kind::Reader => self.submit(i),
                        Kind::Writer { depth } => {
                            for _ in self.procs[i].outstanding..depth {
                                self.submit(i);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Maximal runs of consecutive dispatches of one pid: (pid, first
    /// dispatch, last completion, count).
    fn runs(&self) -> Vec<(u32, Ns, Ns, usize)> {
        let mut out: Vec<(u32, Ns, Ns, usize)> = Vec::new();
        for e in &self.log {
            match out.last_mut() {
                Some(r) if r.0 == e.pid => {
                    r.2 = e.done;
                    r.3 += 1;
                }
                _ => out.push((e.pid, e.at, e.done, 1)),
            }
        }
        out
    }
}

fn ms(t: Ns) -> u64 {
    t / MS
}

#[test]
fn sync_reader_with_think_time_idles_and_starves_the_async_writer_during_its_slice() {
    let mut s = Sim::new(2, MS, "0");
    s.reader(1, 1_000_000, 64, 3 * MS);
    s.writer(2, 5_000_000, 32);
    s.run(1000 * MS);
    let runs = s.runs();
    let reads: Vec<_> = runs.iter().filter(|r| r.0 == 1).collect();
    assert!(reads.len() >= 4, "{runs:?}");
    // Every completed reader slice is a full 100 ms slice: no write gets
    // in while the reader thinks.
    for r in &reads[..reads.len() - 1] {
        let len = ms(r.2 - r.1);
        assert!((99..=104).contains(&len), "reader run {r:?} in {runs:?}");
    }
    // Writes do get served between the reader's slices.
    assert!(runs.iter().any(|r| r.0 == 2));
    // After each read completion inside a slice, the idle timer is armed
    // for slice_idle = 8 ms, and the next read comes 3 ms later.
    let mut armed = 0;
    for &(t, pid, timer) in &s.completions {
        if pid == 1 {
            if let Some(tm) = timer {
                assert_eq!(tm - t, 8 * MS);
                armed += 1;
            }
        }
    }
    assert!(armed > 50, "armed {armed}");
    for w in s.log.windows(2) {
        if w[0].pid == 1 && w[1].pid == 1 {
            assert!(w[1].at - w[0].done <= 8 * MS);
        }
    }
    // No write is fetched while a read is in the driver.
    for e in &s.log {
        if e.op == Op::Write {
            assert_eq!(e.sync_in_driver, 0, "{e:?}");
        }
    }
}

#[test]
fn two_sequential_readers_alternate_100ms_slices() {
    let mut s = Sim::new(2, MS, "0");
    s.reader(1, 1_000_000, 64, 0);
    s.reader(2, 9_000_000, 64, 0);
    s.run(1000 * MS);
    let runs = s.runs();
    assert!(runs.len() >= 8, "{runs:?}");
    for w in runs.windows(2) {
        assert_ne!(w[0].0, w[1].0);
    }
    for r in &runs[..runs.len() - 1] {
        let len = ms(r.2 - r.1);
        assert!((99..=102).contains(&len), "run {r:?} in {runs:?}");
    }
}

#[test]
fn four_readers_get_75ms_slices_under_low_latency() {
    let mut s = Sim::new(2, MS, "0");
    for p in 0..4 {
        s.reader(p + 1, 1_000_000 + 4_000_000 * p as u64, 64, 0);
    }
    s.run(1500 * MS);
    let runs = s.runs();
    // The first slice is set while the busy-queue average is still 3
    // (300 ms / 3 = 100 ms: no scaling); from then on 300·100/400 = 75.
    assert!((99..=102).contains(&ms(runs[0].2 - runs[0].1)), "{runs:?}");
    for r in &runs[2..runs.len() - 1] {
        let len = ms(r.2 - r.1);
        assert!((74..=77).contains(&len), "run {r:?} in {runs:?}");
    }
    // Round robin: each reader once per round.
    for w in runs.windows(4) {
        let mut pids: Vec<u32> = w.iter().map(|r| r.0).collect();
        pids.sort();
        assert_eq!(pids, vec![1, 2, 3, 4], "{runs:?}");
    }
}

#[test]
fn async_queue_expires_after_16_dispatches_when_others_are_busy() {
    let mut s = Sim::new(2, MS, "0");
    s.writer(1, 1_000_000, 64);
    // Another async queue (BE level 5: 2·2·(8−5) = 12 per slice).
    s.writer(2, 9_000_000, 64).ioprio = IoPrio {
        class: IoClass::Be,
        level: 5,
    };
    s.run(400 * MS);
    let runs = s.runs();
    assert!(runs.len() >= 6, "{runs:?}");
    for r in &runs[..runs.len() - 1] {
        let want = if r.0 == 1 { 16 } else { 12 };
        assert_eq!(r.3, want, "{runs:?}");
    }
}

#[test]
fn expired_sync_request_is_served_out_of_order_once_per_slice() {
    let mut s = Sim::new(2, 10 * MS, "0");
    let sub = |s: &mut Sim, sector: u64| {
        let bio = Bio {
            op: Op::Read,
            sector,
            sectors: 128,
            sync: true,
            fua: false,
            secure: false,
            prio: false,
            pid: 1,
            thread: 0,
            ioprio: IoPrio::NORM,
            submitter: Submitter::Call(0),
        };
        s.b.submit_bio(s.now, bio, false);
    };
    s.procs.push(Proc {
        pid: 1,
        kind: Kind::Reader,
        ioprio: IoPrio::NORM,
        sector: 0,
        sectors: 128,
        think: 0,
        next_at: None,
        stop_at: 0,
        outstanding: 0,
    });
    sub(&mut s, 500_000);
    s.pump();
    s.now = MS;
    sub(&mut s, 100_000); // X1: far behind the head
    sub(&mut s, 1_000); // X2: further behind, younger
    for i in 0..40 {
        sub(&mut s, 600_000 + 256 * i);
    }
    s.run(1000 * MS);
    let order: Vec<(u64, u64)> = s.log.iter().map(|e| (ms(e.at), e.sector)).collect();
    let at = |sec: u64| order.iter().position(|o| o.1 == sec).unwrap();
    // Slices: the first starts at the first completion (10 ms) and ends at
    // 110 ms; the second starts at 120 ms (X1 not yet expired at its first
    // dispatch, 110 ms) and ends at 220 ms; the third's first dispatch
    // (220 ms) takes X1, expired since 126 ms; X2, also expired, waits for
    // the fourth slice (330 ms).
    let x1 = at(100_000);
    let x2 = at(1_000);
    assert_eq!(order[x1].0, 220, "{order:?}");
    assert_eq!(order[x2].0, 330, "{order:?}");
    // Between them the sweep goes on in ascending order.
    let between: Vec<u64> = order[x1 + 1..x2].iter().map(|o| o.1).collect();
    assert!(between.windows(2).all(|w| w[0] < w[1]) && between[0] >= 600_000);
    // Without expiry both would wait for the end of the sweep.
    assert!(x2 < order.len() - 1);
}

#[test]
fn priority_levels_get_slices_base_plus_base_fifth_times_four_minus_level() {
    let mut s = Sim::new(2, MS, "0");
    s.reader(1, 1_000_000, 64, 0).ioprio = IoPrio {
        class: IoClass::Be,
        level: 0,
    };
    s.reader(2, 9_000_000, 64, 0).ioprio = IoPrio {
        class: IoClass::Be,
        level: 7,
    };
    s.run(1500 * MS);
    let runs = s.runs();
    assert!(runs.len() >= 6, "{runs:?}");
    for r in &runs[..runs.len() - 1] {
        let len = ms(r.2 - r.1);
        // level 0: 100 + 20·4 = 180 ms; level 7: 100 − 20·3 = 40 ms.
        let want = if r.0 == 1 { 180 } else { 40 };
        assert!((want..=want + 2).contains(&len), "run {r:?} in {runs:?}");
    }
}

#[test]
fn hw_tag_auto_on_depth_two_legacy_queue_settles_to_zero_then_idles() {
    let mut s = Sim::new(2, MS, "-1");
    s.reader(1, 1_000_000, 64, 3 * MS);
    s.writer(2, 5_000_000, 32);
    s.run(2000 * MS);
    let first_arm = s
        .completions
        .iter()
        .position(|c| c.2.is_some())
        .expect("idles once hw_tag is 0");
    // 51 samples under load are needed first; before that hw_tag = −1
    // acts as 1 on a non-rotational queue: no idle timer.
    assert!(first_arm > 51, "{first_arm}");
    // Once decided, the reader idles like with hw_tag forced to 0.
    let armed_after = s.completions[first_arm..]
        .iter()
        .filter(|c| c.1 == 1 && c.2.is_some())
        .count();
    assert!(armed_after > 50);

    // Queue depth 8 (CMDQ-like): the peak depth reaches 5, hw_tag = 1,
    // never idles.
    let mut s = Sim::new(8, MS, "-1");
    s.reader(1, 1_000_000, 64, 3 * MS);
    s.writer(2, 5_000_000, 32);
    s.run(2000 * MS);
    assert!(s.completions.iter().all(|c| c.2.is_none()));

    // Rotational: hw_tag −1 does not disable idling.
    let sp = SchedParams {
        hz: 1000,
        nonrot: false,
    };
    let mut s = Sim::new(2, MS, "-1");
    s.b = BlockLayer::new(QueueParams::default(), Box::new(Cfq::new(&sp)), sp);
    s.reader(1, 1_000_000, 64, 3 * MS);
    s.run(50 * MS);
    assert!(s.completions[0].2.is_some());
}

#[test]
fn backward_seek_within_back_seek_max_is_charged_double() {
    for (fwd, back, first) in [(100_400, 99_900, 100_400), (100_700, 99_900, 99_900)] {
        let mut s = Sim::new(1, 10 * MS, "0");
        let sub = |s: &mut Sim, sector: u64| {
            let bio = Bio {
                op: Op::Read,
                sector,
                sectors: 128,
                sync: true,
                fua: false,
                secure: false,
                prio: false,
                pid: 1,
                thread: 0,
                ioprio: IoPrio::NORM,
                submitter: Submitter::Call(0),
            };
            s.b.submit_bio(s.now, bio, false);
        };
        s.procs.push(Proc {
            pid: 1,
            kind: Kind::Reader,
            ioprio: IoPrio::NORM,
            sector: 0,
            sectors: 128,
            think: 0,
            next_at: None,
            stop_at: 0,
            outstanding: 0,
        });
        sub(&mut s, 100_000); // head ends at 100_128
        s.pump();
        s.now = MS;
        sub(&mut s, fwd); // forward: d = fwd − 100_128
        sub(&mut s, back); // backward: d = 228 × 2 = 456
        s.run(100 * MS);
        assert_eq!(s.log[1].sector, first, "fwd {fwd}");
    }
}

#[test]
fn merges_stay_within_the_submitters_queue() {
    let mut b = cfq_layer(1000, true, "0");
    let bio = |pid: u32, op: Op, sector: u64| Bio {
        op,
        sector,
        sectors: 8,
        sync: op == Op::Read,
        fua: false,
        secure: false,
        prio: false,
        pid,
        thread: pid,
        ioprio: IoPrio::NORM,
        submitter: Submitter::Call(0),
    };
    b.submit_bio(0, bio(1, Op::Read, 0), false);
    b.submit_bio(0, bio(2, Op::Read, 8), false); // other process: no merge
    b.submit_bio(0, bio(1, Op::Read, 16), false);
    assert_eq!(b.stats().back_merges, 0);
    b.submit_bio(0, bio(1, Op::Read, 8 + 1000), false);
    b.submit_bio(0, bio(1, Op::Read, 1000), false); // front merge, own queue
    assert_eq!(b.stats().front_merges, 1);
    // Async writes of two processes share the BE/4 async queue: they merge.
    b.submit_bio(0, bio(3, Op::Write, 5000), false);
    b.submit_bio(0, bio(4, Op::Write, 5008), false);
    assert_eq!(b.stats().back_merges, 1);
    // A sync write never joins an async request.
    let mut w = bio(3, Op::Write, 5016);
    w.sync = true;
    b.submit_bio(0, w, false);
    assert_eq!(b.stats().back_merges, 1);
}

#[test]
fn forced_dispatch_drains_every_queue_and_may_queue_is_must_once_while_idling() {
    use mmcsim_elevator::Slab;
    let sp = SchedParams::default();
    let mut c = Cfq::new(&sp);
    c.set_tunable("hw_tag", "0").unwrap();
    let mut rqs: Slab<Request> = Slab::default();
    let mut timer = None;
    let mk = |pid: u32, op: Op, sector: u64| Bio {
        op,
        sector,
        sectors: 128,
        sync: op == Op::Read,
        fua: false,
        secure: false,
        prio: false,
        pid,
        thread: pid,
        ioprio: IoPrio::NORM,
        submitter: Submitter::Call(0),
    };
    let mut ids = Vec::new();
    for (pid, op, sector) in [
        (1, Op::Read, 1000),
        (2, Op::Read, 50_000),
        (3, Op::Write, 90_000),
        (1, Op::Read, 2000),
    ] {
        let id = rqs.insert(Request::from_bio(&mk(pid, op, sector), 0, 0));
        rqs[id].sync = op == Op::Read;
        let mut ctx = SchedCtx::new(0, &mut rqs, [0; 2], &mut timer);
        c.add_request(&mut ctx, id);
        ids.push(id);
    }
    // Normal dispatch: pid 1's queue, then (still its slice) its second.
    let mut ctx = SchedCtx::new(0, &mut rqs, [0; 2], &mut timer);
    let first = c.dispatch(&mut ctx, false).unwrap();
    assert_eq!(first, ids[0]);
    // Complete it with an empty queue? Not yet: a forced drain takes all
    // the rest, queue by queue.
    let mut got = Vec::new();
    while let Some(rq) = c.dispatch(&mut ctx, true) {
        got.push(rq);
    }
    got.sort();
    assert_eq!(got, vec![ids[1], ids[2], ids[3]]);
    assert!(!c.has_work());

    // Idling on pid 1: its next allocation is Must, once.
    c.activate(&mut ctx, first);
    let mut c2 = Cfq::new(&sp);
    c2.set_tunable("hw_tag", "0").unwrap();
    let id = rqs.insert(Request::from_bio(&mk(7, Op::Read, 0), 0, 0));
    rqs[id].sync = true;
    let mut ctx = SchedCtx::new(0, &mut rqs, [0; 2], &mut timer);
    c2.add_request(&mut ctx, id);
    assert_eq!(c2.dispatch(&mut ctx, false), Some(id));
    c2.activate(&mut ctx, id);
    ctx.now = MS;
    c2.completed(&mut ctx, id);
    assert_eq!(ctx.timer(), Some(9 * MS), "idle timer: 1 ms + slice_idle");
    let b = mk(7, Op::Read, 128);
    assert_eq!(c2.may_queue(&ctx, &b), MayQueue::Must);
    assert_eq!(c2.may_queue(&ctx, &b), MayQueue::May);
    assert_eq!(c2.may_queue(&ctx, &mk(8, Op::Read, 0)), MayQueue::May);
}

#[test]
fn tunables_at_hz_100_and_validation() {
    let sp = SchedParams {
        hz: 100,
        nonrot: true,
    };
    let mut c = Cfq::new(&sp);
    let t = c.tunables_raw();
    assert_eq!(t.slice_idle, 1, "HZ/125 = 0 is clamped to 1 jiffy");
    assert_eq!(t.fifo_expire, [25, 12]);
    assert_eq!(t.slice, [4, 10]);
    let show: Vec<(&str, String)> = c
        .tunables()
        .into_iter()
        .map(|t| (t.name, t.value))
        .collect();
    let get = |n: &str| show.iter().find(|s| s.0 == n).unwrap().1.clone();
    assert_eq!(get("slice_idle"), "10");
    assert_eq!(get("fifo_expire_sync"), "120");
    assert_eq!(get("slice_async"), "40");
    assert_eq!(get("target_latency"), "300");
    assert_eq!(get("group_idle"), "10");
    assert_eq!(get("back_seek_max"), "16384");
    assert_eq!(get("hw_tag"), "-1");
    let names: Vec<&str> = show.iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        vec![
            "quantum",
            "fifo_expire_sync",
            "fifo_expire_async",
            "back_seek_max",
            "back_seek_penalty",
            "slice_sync",
            "slice_async",
            "slice_async_rq",
            "slice_idle",
            "group_idle",
            "low_latency",
            "target_latency",
            "hw_tag",
            "nonrot_slice_idle_zero"
        ]
    );
    // 5 ms at HZ=100 rounds up to one jiffy.
    c.set_tunable("slice_idle", "5").unwrap();
    assert_eq!(c.tunables_raw().slice_idle, 1);
    c.set_tunable("slice_idle", "0").unwrap();
    assert_eq!(c.tunables_raw().slice_idle, 0);
    assert!(matches!(
        c.set_tunable("quantum", "0"),
        Err(TunableError::OutOfRange {
            value: 0,
            min: 1,
            ..
        })
    ));
    assert!(c.set_tunable("slice_sync", "fast").is_err());
    assert!(c.set_tunable("low_latency", "2").is_err());
    assert_eq!(
        c.set_tunable("hw_tag", "2").unwrap_err().to_string(),
        "tunable `hw_tag`: `2` is not -1 (detect), 0 or 1"
    );
    let e = c.set_tunable("slice_idel", "8").unwrap_err().to_string();
    assert!(e.contains("valid: quantum, fifo_expire_sync"), "{e}");
    assert!(e.contains("hw_tag, nonrot_slice_idle_zero"), "{e}");
    // The oneplus variant: slice_idle 0 on a non-rotational queue.
    let mut c = Cfq::new(&SchedParams::default());
    assert_eq!(c.tunables_raw().slice_idle, 8);
    c.set_tunable("nonrot_slice_idle_zero", "1").unwrap();
    assert_eq!(c.tunables_raw().slice_idle, 0);
    c.set_tunable("nonrot_slice_idle_zero", "0").unwrap();
    assert_eq!(c.tunables_raw().slice_idle, 8);
    let mut r = Cfq::new(&SchedParams {
        hz: 1000,
        nonrot: false,
    });
    r.set_tunable("nonrot_slice_idle_zero", "1").unwrap();
    assert_eq!(r.tunables_raw().slice_idle, 8, "rotational keeps it");
}

#[test]
fn rt_reader_preempts_a_be_reader_and_keeps_the_disk_while_busy() {
    let mut s = Sim::new(2, MS, "0");
    s.reader(1, 1_000_000, 64, 0);
    let rt = s.reader(2, 9_000_000, 64, 0);
    rt.ioprio = IoPrio {
        class: IoClass::Rt,
        level: 4,
    };
    rt.next_at = Some(50 * MS);
    rt.stop_at = 400 * MS;
    s.run(600 * MS);
    let first_rt = s.log.iter().find(|e| e.pid == 2).unwrap();
    // Preempts at once: the BE request in flight drains, then RT goes.
    assert!(first_rt.at <= 52 * MS, "{first_rt:?}");
    // BE gets nothing while the RT reader is busy, then resumes.
    assert!(s
        .log
        .iter()
        .filter(|e| e.pid == 1)
        .all(|e| e.at < 51 * MS || e.at >= 400 * MS));
    assert!(s.log.iter().any(|e| e.pid == 1 && e.at >= 400 * MS));
}

#[test]
fn idle_class_reader_runs_only_when_nothing_else_is_busy() {
    let mut s = Sim::new(2, MS, "0");
    let be = s.reader(1, 1_000_000, 64, 0);
    be.stop_at = 300 * MS;
    s.reader(2, 9_000_000, 64, 0).ioprio = IoPrio {
        class: IoClass::Idle,
        level: 7,
    };
    s.run(500 * MS);
    // The IDLE reader's first request, queued at 0, waits for the BE
    // reader to go away.
    let first_idle = s.log.iter().find(|e| e.pid == 2).unwrap();
    assert!(first_idle.at >= 300 * MS, "{first_idle:?}");
    assert!(s.log.iter().filter(|e| e.pid == 2).count() > 50);
}

#[test]
fn hz_100_idle_timer_is_one_jiffy_and_expires_at_the_next_tick() {
    let mut s = Sim::new(2, MS, "0");
    s.b = cfq_layer(100, true, "0");
    s.reader(1, 1_000_000, 64, 3 * MS);
    s.writer(2, 5_000_000, 32);
    s.run(500 * MS);
    // slice_idle is 1 jiffy (10 ms): the timer is set for jiffies + 1, i.e.
    // the next 10 ms tick, however close it is.
    let mut armed = 0;
    for &(t, pid, timer) in &s.completions {
        if let (1, Some(tm)) = (pid, timer) {
            assert_eq!(tm, (t / (10 * MS) + 1) * 10 * MS);
            armed += 1;
        }
    }
    assert!(armed > 20);
    // So a 3 ms think time that spans a tick loses the slice: the writer
    // runs start exactly at ticks (the idle timer expiring the reader), and
    // the reader takes the disk back by preemption 2-3 ms later.
    let runs = s.runs();
    let writes: Vec<_> = runs.iter().filter(|r| r.0 == 2).collect();
    assert!(writes.len() > 20, "{runs:?}");
    for r in writes {
        assert_eq!(r.1 % (10 * MS), 0, "{r:?}");
        assert!(r.3 <= 4, "{r:?}");
    }
}
