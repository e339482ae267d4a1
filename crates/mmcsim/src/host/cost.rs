//! The host's CPU costs. The per-layer cost model, the host profile and the
//! CPU they run on live in [`crate::platform`] (the driver and the block
//! layer charge CPU time too); this module keeps the host's names for them.

pub use crate::platform::{HostConfig, LayerCosts as HostCosts};
