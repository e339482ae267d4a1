//! Test helpers shared by the scheduler tests: a `BlockLayer` driven by a
//! fake clock, a tiny driver model (`Rig`) with a fixed service time, a
//! number of driver slots and the scheduler timer, and `Direct`, which
//! drives a scheduler without the block layer.
//!
//! This bench is the one place under `sched/` that reaches the block layer:
//! scheduler tests run requests through the real merge and dispatch paths.

pub(crate) use crate::block::{BlockLayer, QueueParams};
use mmcsim_elevator::types::{IoClass, IoPrio, Ns, Op};
use mmcsim_elevator::{Bio, Elevator, Request, RqId, SchedCtx, SchedParams, Slab, Submitter};

/// A block layer at tick rate `hz` with scheduler `make(params)`.
pub(crate) fn layer(hz: u32, make: impl Fn(&SchedParams) -> Box<dyn Elevator>) -> BlockLayer {
    let sp = SchedParams { hz, nonrot: true };
    BlockLayer::new(QueueParams::default(), make(&sp), sp)
}

/// A scheduler-only `SchedParams` at `hz`.
pub(crate) fn params(hz: u32) -> SchedParams {
    SchedParams { hz, nonrot: true }
}

/// An 8-sector bio of `pid` (thread = pid); reads are sync, writes async.
pub(crate) fn bio(op: Op, sector: u64, pid: u32) -> Bio {
    Bio {
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
    }
}

/// A sync write bio.
pub(crate) fn swrite(sector: u64, pid: u32) -> Bio {
    Bio {
        sync: true,
        ..bio(Op::Write, sector, pid)
    }
}

/// `b` with priority `class` / `level`.
pub(crate) fn with_prio(b: Bio, class: IoClass, level: u8) -> Bio {
    Bio {
        ioprio: IoPrio { class, level },
        ..b
    }
}

/// Fetches, activates and completes one request; returns a copy of it.
pub(crate) fn serve(b: &mut BlockLayer, now: Ns) -> Option<Request> {
    let rq = b.fetch(now)?;
    b.activate(now, rq);
    let r = b.request(rq).clone();
    let mut done = Vec::new();
    b.complete(now, rq, &mut done);
    Some(r)
}

/// Serves everything at `now`; returns the requests in dispatch order.
pub(crate) fn drain(b: &mut BlockLayer, now: Ns) -> Vec<Request> {
    std::iter::from_fn(|| serve(b, now)).collect()
}

/// One request the rig's driver took: when, and a copy of it.
#[derive(Clone, Debug)]
pub(crate) struct Taken {
    pub at: Ns,
    pub rq: Request,
}

/// A driver with `slots` requests in flight, each taking `service` ns,
/// honouring the scheduler's timer.
pub(crate) struct Rig {
    pub b: BlockLayer,
    pub now: Ns,
    pub slots: usize,
    pub service: Ns,
    busy: Vec<(Ns, RqId)>,
    pub log: Vec<Taken>,
}

impl Rig {
    pub(crate) fn new(b: BlockLayer, slots: usize, service: Ns) -> Rig {
        Rig {
            b,
            now: 0,
            slots,
            service,
            busy: Vec::new(),
            log: Vec::new(),
        }
    }

    /// Submits `bio` now and runs the queue.
    pub(crate) fn submit(&mut self, bio: Bio) {
        self.b.submit_bio(self.now, bio, false);
        self.pump();
    }

    /// The driver pulls while it has a free slot.
    pub(crate) fn pump(&mut self) {
        while self.busy.len() < self.slots {
            let Some(rq) = self.b.fetch(self.now) else {
                break;
            };
            self.b.activate(self.now, rq);
            self.log.push(Taken {
                at: self.now,
                rq: self.b.request(rq).clone(),
            });
            self.busy.push((self.now + self.service, rq));
        }
    }

    /// Processes the next event (completions or the timer) at or before
    /// `limit`; returns the requests completed then (empty for a timer).
    /// `None` when nothing happens up to `limit` (the clock moves there).
    /// The queue is run after each event.
    pub(crate) fn step(&mut self, limit: Ns) -> Option<Vec<Request>> {
        let next_done = self.busy.iter().map(|&(t, _)| t).min();
        let next = match (next_done, self.b.timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let next = next.filter(|&t| t <= limit);
        let Some(t) = next else {
            self.now = self.now.max(limit);
            self.pump();
            return None;
        };
        self.now = self.now.max(t);
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.busy.len() {
            if self.busy[i].0 <= t {
                let (_, rq) = self.busy.remove(i);
                out.push(self.b.request(rq).clone());
                let mut done = Vec::new();
                self.b.complete(t, rq, &mut done);
            } else {
                i += 1;
            }
        }
        if out.is_empty() && self.b.timer().is_some_and(|x| x <= t) {
            self.b.on_timer(t);
        }
        self.pump();
        Some(out)
    }

    /// Runs every event up to `limit`.
    pub(crate) fn run_until(&mut self, limit: Ns) {
        while self.step(limit).is_some() {}
    }
}

/// Drives a scheduler directly, without the block layer: for requests the
/// block layer cannot produce (an async read) and for cost checks.
pub(crate) struct Direct {
    pub rqs: Slab<Request>,
    pub timer: Option<Ns>,
    pub in_driver: [u32; 2],
    next_bio: u32,
}

impl Direct {
    pub(crate) fn new() -> Direct {
        Direct {
            rqs: Slab::with_capacity(64),
            timer: None,
            in_driver: [0; 2],
            next_bio: 0,
        }
    }

    /// A scheduler context at `now`.
    pub(crate) fn ctx(&mut self, now: Ns) -> SchedCtx<'_> {
        SchedCtx::new(now, &mut self.rqs, self.in_driver, &mut self.timer)
    }

    /// A request made from `bio` (its `sync` flag kept as given), added.
    pub(crate) fn add(&mut self, e: &mut dyn Elevator, now: Ns, bio: Bio) -> RqId {
        let rq = self.rqs.insert(Request::from_bio(&bio, self.next_bio, now));
        self.next_bio += 1;
        e.add_request(&mut self.ctx(now), rq);
        rq
    }

    /// Dispatches one request.
    pub(crate) fn dispatch(&mut self, e: &mut dyn Elevator, now: Ns) -> Option<RqId> {
        e.dispatch(&mut self.ctx(now), false)
    }
}
