//! The generic block layer: bios become requests (merging, plugging,
//! `nr_requests`), the scheduler orders them, and the driver pulls them from
//! the dispatch list.

pub mod request;
