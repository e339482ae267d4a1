//! The I/O schedulers ("elevators") the simulator ships, each a faithful
//! model of its kernel source (reference io-schedulers.md), one file or
//! folder per scheduler.
//!
//! They implement [`Elevator`] from [`mmcsim_elevator`] — the scheduler API
//! beneath both them and the block layer, whose crate documentation states
//! the contract — and import nothing else of the simulator. [`builtin`]
//! registers them all in a [`Registry`]; the API's main types are
//! re-exported here for convenience.

pub mod bfq;
pub mod bfq_mq;
pub mod cfq;
pub mod deadline;
pub mod fiops;
pub mod kyber;
pub mod mq_deadline;
pub mod none;
pub mod noop;
pub mod row;
pub mod sio;
#[cfg(test)]
mod testutil;
pub mod vr;
pub mod zen;

pub use deadline::Deadline;
pub use fiops::Fiops;
pub use noop::Noop;
pub use row::Row;
pub use sio::Sio;
pub use vr::Vr;
pub use zen::Zen;

pub use mmcsim_elevator::{
    Elevator, Factory, FifoList, MayQueue, MergeKind, Registry, SchedCtx, SchedParams, SectorTree,
    TunableError, TunableInfo, UnknownScheduler,
};

/// A registry holding every built-in scheduler, in the order
/// `simctl schedulers` lists them.
pub fn builtin() -> Registry {
    let mut r = Registry::new();
    r.register(
        "noop",
        "one FIFO, merging only",
        Box::new(|p| Box::new(noop::Noop::new(p))),
    );
    r.register(
        "deadline",
        "ascending-sector batches per direction with FIFO deadlines, reads preferred",
        Box::new(|p| Box::new(deadline::Deadline::new(p))),
    );
    r.register(
        "sio",
        "simple I/O: four unsorted FIFOs (sync/async x read/write) with soft deadlines",
        Box::new(|p| Box::new(sio::Sio::new(p))),
    );
    r.register(
        "row",
        "read over write: seven FIFOs in three priority classes, round-robin quanta, read idling",
        Box::new(|p| Box::new(row::Row::new(p))),
    );
    r.register(
        "fiops",
        "fair IOPS: per-process queues served by lowest virtual I/O count, no idling",
        Box::new(|p| Box::new(fiops::Fiops::new(p))),
    );
    r.register(
        "zen",
        "FCFS over two FIFOs with soft deadlines; as shipped, writes before reads",
        Box::new(|p| Box::new(zen::Zen::new(p))),
    );
    r.register(
        "vr",
        "V(R): nearest request to the head with a reversal penalty, sync/async deadlines",
        Box::new(|p| Box::new(vr::Vr::new(p))),
    );
    r.register(
        "bfq",
        "BFQ v7r8: per-process queues served in sector budgets by B-WF2Q+, weight raising",
        Box::new(|p| Box::new(bfq::Bfq::new(p))),
    );
    r.register(
        "cfq",
        "completely fair queueing: per-process sync time slices, idling, shared async queues",
        Box::new(|p| Box::new(cfq::Cfq::new(p))),
    );
    r.register(
        "mq-deadline",
        "blk-mq deadline: section 3 per priority class RT/BE/IDLE, strict classes with prio aging",
        Box::new(|p| Box::new(mq_deadline::MqDeadline::new(p))),
    );
    r.register(
        "kyber",
        "blk-mq kyber: token pools per domain (read/write/discard/other) resized to meet latency targets",
        Box::new(|p| Box::new(kyber::Kyber::new(p))),
    );
    r.register(
        "bfq-mq",
        "blk-mq BFQ: BFQ with weights (8 - level) x 10, wr_coeff 30, one budget timeout",
        Box::new(|p| Box::new(bfq_mq::new(p))),
    );
    r.register(
        "none",
        "blk-mq none: FIFO pass-through, merging only via the generic paths",
        Box::new(|p| Box::new(none::NoneSched::new(p))),
    );
    r
}
