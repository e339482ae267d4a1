//! The I/O scheduler ("elevator") API of mmcsim: everything a scheduler
//! author needs, and nothing of the simulator around it.
//!
//! It sits beneath both the block layer and the schedulers, as `struct
//! request` and `elevator_ops` sit beneath both in Linux, and imports no
//! other part of the simulator. It holds:
//!
//! * the hooks: the [`Elevator`] trait (`add_request`, `dispatch`, the merge
//!   hooks, `completed`, `on_timer`, ...), called with a [`SchedCtx`], and
//!   [`SchedParams`], what a scheduler is created with;
//! * the request view: [`Bio`] and [`Request`] with their ids ([`RqId`],
//!   [`BioId`]) and the [`Slab`] requests live in;
//! * the building blocks kernel schedulers use: [`SectorTree`] (the
//!   `sort_list` red-black tree) and [`FifoList`] (a `list_head` FIFO);
//! * tunables by their sysfs name, value and unit ([`tunable`]);
//! * the [`Registry`] that creates a scheduler by name;
//! * the vocabulary every layer shares ([`types`]).
//!
//! Contract:
//! * The block layer owns every [`Request`]; a scheduler holds request ids
//!   and reads the requests through [`SchedCtx::rq`]; it writes only the
//!   fields it owns, through [`SchedCtx::set_fifo_time`],
//!   [`SchedCtx::set_elv_priv`] and [`SchedCtx::set_urgent`]. It never
//!   sees the device.
//! * `add_request` hands a request to the scheduler; `dispatch` takes one
//!   back out (and forgets it). A request absorbed by a merge leaves through
//!   `merge_requests`.
//! * Time is simulated nanoseconds ([`Ns`]) and comes only from
//!   [`SchedCtx::now`]; a scheduler that wants to be called back later
//!   (idling, expiry) arms its one timer with [`SchedCtx::set_timer`]; the
//!   block layer calls [`Elevator::on_timer`] then and runs the queue.
//!   Kernels keep times in jiffies: [`SchedParams`] converts at the queue's
//!   `HZ`.
//! * Tunables are set by their sysfs names (`queue/iosched/<name>`), in
//!   sysfs units (milliseconds for times), and validated; an invalid value
//!   is a [`TunableError`] naming the tunable and what it accepts.

#![warn(missing_docs)]

pub mod ctx;
pub mod elevator;
pub mod fifo_list;
pub mod params;
pub mod registry;
pub mod request;
pub mod sector_tree;
pub mod slab;
pub mod tunable;

/// The vocabulary every layer shares (time, operations, priorities),
/// defined in [`mmcsim_types`] beneath every crate of the simulator.
pub use mmcsim_types as types;

pub use ctx::SchedCtx;
pub use elevator::{Elevator, MayQueue, MergeKind};
pub use fifo_list::FifoList;
pub use params::SchedParams;
pub use registry::{Factory, Registry, UnknownScheduler};
pub use request::{Bio, BioId, Request, RqId, Submitter, NIL};
pub use sector_tree::SectorTree;
pub use slab::Slab;
pub use tunable::{TunableError, TunableInfo, TunableValue};
pub use types::{IoClass, IoPrio, Ns, Op};
