//! The simulation's event type: one variant per stage, each carrying that
//! stage's own events (small ids, never copies of requests). Stages schedule
//! their events through `From` conversions and never name this type.

use crate::block::{BlockEvent, Completion};
use crate::driver::DriverEvent;
use crate::host::fs::FsEvent;
use crate::host::HostEvent;
use crate::platform::PlatformEvent;
use crate::workload::jobs::JobEvent;
use crate::workload::replay::ReplayEvent;

/// Something that happens at a simulated time, routed to the stage that
/// scheduled it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Synthetic jobs (application threads).
    Job(JobEvent),
    /// Trace replay.
    Replay(ReplayEvent),
    /// The host: system calls, page cache, writeback flusher.
    Host(HostEvent),
    /// The block layer (the scheduler's timer).
    Block(BlockEvent),
    /// A completion climbing from the block layer to the submitter of a
    /// bio (queued by the interrupt, delivered right after it).
    Completion(Completion),
    /// The MMC driver and the device's completions.
    Driver(DriverEvent),
    /// The platform: the cpufreq governor's timer.
    Platform(PlatformEvent),
}

macro_rules! from_stage {
    ($($variant:ident($ty:ty)),*) => {$(
        impl From<$ty> for Event {
            fn from(e: $ty) -> Event {
                Event::$variant(e)
            }
        }
    )*};
}

from_stage!(
    Job(JobEvent),
    Replay(ReplayEvent),
    Host(HostEvent),
    Block(BlockEvent),
    Completion(Completion),
    Driver(DriverEvent),
    Platform(PlatformEvent)
);

impl Event {
    /// How many periodic timers can be pending at once (the flusher's, the
    /// file system's timer — ext4's JBD2 commit timer —, the governor's
    /// sampling timer).
    pub const PERIODIC_TIMERS: usize = 3;

    /// True for a periodic timer's event: one that re-arms itself while
    /// work is left but does no work of its own unless something is
    /// waiting for it.
    pub fn is_periodic_timer(&self) -> bool {
        matches!(
            self,
            Event::Host(HostEvent::FlusherTick | HostEvent::Fs(FsEvent::Timer(_)))
                | Event::Platform(PlatformEvent::GovernorSample)
        )
    }
}
