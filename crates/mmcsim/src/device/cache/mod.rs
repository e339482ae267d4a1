//! The controller's SRAM caches between the host interface and the FTL.
//!
//! * [`MapCache`]: the mapping-table pages (L2P) in SRAM, least recently
//!   used out; a miss costs a NAND read before the data access, a dirty
//!   eviction a NAND program.
//! * [`ReadBuffer`]: the last NAND pages sensed, by demand or by
//!   stream prefetch; a read of a buffered page costs no NAND time.
//! * [`Direction`]: which address directions the map-page and read-buffer
//!   prefetchers follow (a profile parameter each).
//! * [`WriteBuffer`]: host data waiting for a full stripe page, then in
//!   flight until its program ends; reads of buffered data are served from
//!   it and a write that finds it full waits.
//!
//! The mapping cache books its own map-page reads and write-backs on the
//! NAND timelines; the buffers keep state only and the controller firmware
//! charges the NAND time their hits and misses imply.

mod direction;
mod map_cache;
mod read_buffer;
mod write_buffer;

pub use direction::{Direction, Stream};
pub use map_cache::{MapCache, ENTRIES_PER_MAP_PAGE};
pub use read_buffer::ReadBuffer;
pub use write_buffer::WriteBuffer;
