//! Measurement helpers for the report: latency histograms (HDR, recorded in
//! nanoseconds, summarised in microseconds) and fairness indices.
//!
//! Contract: everything here is deterministic and allocation-light; values go
//! in as simulated nanoseconds ([`crate::types::Ns`]) and come out in the units
//! each summary field names.

pub mod device_times;
pub mod fairness;
pub mod histogram;
pub mod report;
pub mod request_log;
pub mod thread_io;

pub use device_times::DeviceTimes;
pub use fairness::jain;
pub use histogram::{LatencyDistribution, LatencyHistogram, LatencySummary};
