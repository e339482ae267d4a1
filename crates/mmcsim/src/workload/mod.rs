//! Workloads: what produces submissions for the host and block layer.
//!
//! Synthetic jobs ([`jobs`]) and scripted threads ([`script`]) are
//! application threads issuing system calls
//! to the host, as are the threads of programs ([`program`]): SQLite jobs
//! ([`sqlite`]) and the AndroBench suite ([`androbench`]); trace replay ([`replay`]) issues block-level records below
//! the file system, straight to the block stage, and compares recorded with
//! simulated device service where the trace records it ([`service_compare`]).
//!
//! Contract: trace readers ([`trace`]) stream records in time order, one at a
//! time, without memory growing with trace length; every parse error names
//! the file, the 1-based line and the field, and says what was expected.

pub mod action;
pub mod androbench;
pub mod block_sizes;
pub mod distribution;
pub mod fio_job;
pub mod job_error;
pub mod job_io;
pub mod job_rules;
pub mod jobs;
pub mod program;
pub mod programs;
pub mod random_map;
pub mod rate;
pub mod replay;
pub mod script;
pub mod service_compare;
pub mod spec;
pub mod sqlite;
pub mod synthetic;
pub mod validation;

/// The trace readers, format detection and the record type: the
/// [`mmcsim_trace`] crate, which depends on nothing of the simulator.
pub use mmcsim_trace as trace;
