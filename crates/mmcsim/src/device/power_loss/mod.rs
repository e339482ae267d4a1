//! Power loss: what the card holds when its supply fails, how its FTL
//! recovers, and which acknowledged writes survive (`simctl crash`,
//! `run --power-cut`).
//!
//! Contract:
//! * [`Emmc::start_power_tracking`] (before the measured run) starts the
//!   tracker (module `tracker`): from then on every NAND program, erase and SLC-log
//!   program is recorded with the window of its array operation and the
//!   `(lpn, version)` of each slot, every host write with when it arrived
//!   and when its command completed, and every FLUSH_CACHE.
//! * [`Emmc::power_cut`] at instant `t` ns replays that record as the
//!   array would have lived it (module [`cut`]): operations ending by `t +
//!   capacitor_us` completed; the one running then on each die was
//!   interrupted (a torn page, an MLC upper-page program also corrupting
//!   its paired lower page, an erase leaving its block unreadable); later
//!   ones never ran; a volatile cache's content is gone. The FTL then
//!   rebuilds its mapping as its class does (module `recovery`: the last
//!   persisted map plus a scan of the pages programmed since), and every
//!   logical page is classified against the integrity oracle: newest,
//!   older, torn, paired-page victim or another page's data (a flying
//!   write). The host's durability acknowledgements (fsync / O_SYNC
//!   returns, given as sector ranges) and the card's own (a FUA write or a
//!   FLUSH_CACHE completed) give each page's acknowledged version; an
//!   acknowledged write is lost when its page reads back anything older.
//! * Each behaviour is a `[power_loss]` profile key ([`PowerLossConfig`]).

pub mod config;
pub mod cut;
mod recovery;
pub(crate) mod tracker;

pub use config::{PairedPages, PowerLossConfig, RelWrGranularity, TornProgram};
pub use cut::{CutOutcome, CutState, DurableAck, Readback};

use super::Emmc;
use crate::types::us_to_ns;

impl Emmc {
    /// Starts recording what the power-loss model needs (module doc);
    /// call once, before the measured run. Takes over the mapping's
    /// translation journal, so it does not combine with the per-command
    /// integrity check.
    pub fn start_power_tracking(&mut self) {
        let n = &self.cfg.nand;
        let t = (
            us_to_ns(n.t_prog_lower_us),
            us_to_ns(n.t_prog_upper_us),
            us_to_ns(n.t_bers_us),
        );
        let expected = self.oracle.expected().to_vec();
        self.power = Some(Box::new(tracker::Tracker::new(
            self.geo,
            self.ftl.as_mut(),
            &expected,
            t,
        )));
    }

    /// True while the power-loss record runs.
    pub fn power_tracking(&self) -> bool {
        self.power.is_some()
    }

    /// The card's state after power fails at `t` ns and it recovers
    /// (module doc); `acks` are the host's durability acknowledgements.
    /// `None` when [`Emmc::start_power_tracking`] was not called.
    pub fn power_cut(&self, t: crate::types::Ns, acks: &[DurableAck]) -> Option<CutState> {
        let tr = self.power.as_deref()?;
        Some(cut::cut(tr, &self.cfg, t, acks))
    }
}
