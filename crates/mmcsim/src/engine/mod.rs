//! The discrete-event engine: simulated time, one event queue ordered by
//! `(time, sequence number)`, a slab for objects referred to by id, and the
//! seeded random-number streams.
//!
//! Contract: events pop in non-decreasing time; events at the same time pop in
//! the order they were pushed. Nothing here reads the wall clock.

mod queue;
mod rng;

pub use mmcsim_elevator::Slab;
pub use queue::{EventQueue, MAX_SIM_NS, MAX_SIM_TEXT};
pub use rng::{component_rng, SimRng};
