//! Workloads: what produces submissions for the host and block layer.
//!
//! Contract: trace readers ([`trace`]) stream records in time order, one at a
//! time, without memory growing with trace length; every parse error names
//! the file, the 1-based line and the field, and says what was expected.

pub mod synthetic;
pub mod trace;
