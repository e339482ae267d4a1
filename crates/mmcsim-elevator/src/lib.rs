//! The bottom of mmcsim: the vocabulary every layer of the storage path
//! shares — simulated time in nanoseconds ([`Ns`]), operations ([`Op`]),
//! I/O priorities ([`IoPrio`]) — the request view ([`Bio`], [`Request`])
//! and the [`Slab`] requests live in.
//!
//! This crate imports no other part of the simulator.

#![warn(missing_docs)]

pub mod request;
pub mod slab;
pub mod types;

pub use request::{Bio, BioId, Request, RqId, NIL};
pub use slab::Slab;
pub use types::{IoClass, IoPrio, Ns, Op};
