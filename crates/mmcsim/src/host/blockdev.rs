//! The raw block device (`/dev/block/mmcblk0` opened with O_DIRECT): what
//! the host offers a block-level workload — trace replay — that submits
//! below the page cache and the file system. The workload builds bios
//! ([`Bio`], completed back to its [`Submitter`]) and hands them to the
//! host's [`Below`], which passes them to the block stage; it never holds
//! the block stage or the driver itself.

use super::stage::{Below, HostEvents};
pub use crate::block::request::{Bio, Submitter};
use crate::block::split_bio;

impl<E: HostEvents> Below<'_, E> {
    /// Submits `template` at `now`, unplugged, as bios of at most
    /// `max_sectors` (`blk_queue_split`, using `scratch`); returns how many
    /// bios went down.
    pub fn submit_raw(
        &mut self,
        now: u64,
        template: Bio,
        max_sectors: u32,
        scratch: &mut Vec<Bio>,
    ) -> u32 {
        if !template.op.has_data() || (template.sectors > 0 && template.sectors <= max_sectors) {
            // One bio, the template itself (what `split_bio` would make).
            self.block.submit(now, [template], self.q);
            return 1;
        }
        scratch.clear();
        let n = split_bio(template, max_sectors, scratch);
        self.block.submit(now, scratch.drain(..), self.q);
        n
    }

    /// True while `thread` waits for a free request (`get_request` sleeps
    /// when `nr_requests` are allocated).
    pub fn raw_blocked(&self, thread: u32) -> bool {
        self.block.is_blocked(thread)
    }

    /// A performance hint: the workload's next I/O will likely touch
    /// `sector` (`write`: to write it); it travels down with the next
    /// request the driver fetches.
    pub fn hint(&mut self, sector: u64, write: bool) {
        self.block.hint(sector, write);
    }
}
