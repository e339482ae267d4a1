//! bfq-mq: the blk-mq BFQ (reference io-schedulers.md §11), built from the
//! BFQ v7r8 code in [`super::bfq`] with the mq constants
//! ([`BfqVariant::MQ`]):
//! weight = (8 − level)·10 (BE default 40); `wr_coeff` 30; one
//! `timeout_sync` (125 ms) for every queue (no `timeout_async`);
//! `slice_idle` 8 ms (also as `slice_idle_us`); async charge factor 3; a
//! burst is large at 8 queues activated within 180 ms; `strict_guarantees`
//! 0, `low_latency` 1, `max_budget` 0 (auto).
//!
//! I/O injection while idling and `strict_guarantees` are modelled after
//! mainline `block/bfq-iosched.c` (see `bfq/inject.rs` for the rules and
//! the approximations); v7r8 has neither.

pub use super::bfq::{Bfq, BfqVariant};
use mmcsim_elevator::SchedParams;

/// A bfq-mq scheduler with its defaults at `params.hz`.
pub fn new(params: &SchedParams) -> Bfq {
    Bfq::with_variant(params, BfqVariant::MQ)
}
