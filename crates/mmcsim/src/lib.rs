//! mmcsim: a trace-driven, discrete-event simulator of an Android phone's
//! storage path.
//!
//! A request travels down the stack and its completion back up:
//!
//! ```text
//! workload ─► host (threads, page cache, read-ahead) ─► block layer (merge,
//! plug, nr_requests) ─► scheduler (elevator ops) ─► MMC driver ─► eMMC device
//! (bus, controller, mapping cache, read/write buffers, FTL, GC, NAND)
//! ```
//!
//! Time is simulated nanoseconds ([`types::Ns`]); nothing reads the wall clock.
//! Events are ordered by `(time, sequence number)` ([`engine::EventQueue`]),
//! randomness comes from seeded ChaCha generators, and requests live in a slab
//! and are referred to by id. Same inputs and seed give a byte-identical report.
//!
//! Each layer is one module whose `mod.rs` states its contract.

#![warn(missing_docs)]

pub mod block;
pub mod config;
pub mod device;
pub mod driver;
pub mod engine;
pub mod error;
pub mod host;
pub mod platform;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod textfile;
pub mod workload;

/// Vocabulary types shared by every layer (time, operations, priorities),
/// defined in [`mmcsim_elevator`] beneath the block layer and the schedulers.
pub use mmcsim_elevator::types;

pub use error::{Error, Result};
pub use types::{IoClass, IoPrio, Ns, Op, SECTOR_BYTES};
