//! Block requests and bios: what the block layer queues and the scheduler
//! sees. They are defined with the scheduler API in [`mmcsim_elevator`], so
//! schedulers and the block layer share them without importing each other.

pub use mmcsim_elevator::request::{Bio, BioId, Request, RqId, Submitter, NIL};
