//! SLC-mode log for durable commits of a partial stripe page.
//!
//! Without it, a FLUSH_CACHE or a reliable (FUA) write that finds less than
//! a stripe page of data in the volatile cache programs that page padded
//! (the padding wastes NAND and the program may land on a slow MSB page).
//! Firmware of 2013+ parts is described as staging such small writes in an
//! SLC-mode region instead (reference emmc-parameters.md §3 "Write buffer":
//! "Some 2013+ parts also stage small writes in an SLC-mode region" (an estimate)):
//! the cached data is programmed, lower pages only, into a few reserved log
//! blocks, which makes it durable; it stays in the cache and goes to its
//! MLC stripe page when that page fills, as it would have without the log.
//! The log is a durability journal, not a mapping: reads of the data are
//! served from the cache, and the FTL never sees the log blocks.
//!
//! Timing: one log program per commit on the next die in turn (data-in of
//! the entries logged, then `t_prog_slc`); a log block holds
//! `pages_per_block / 2` SLC pages (lower pages of an MLC block), and when
//! one is full the die erases the next log block right after the program
//! (in the background: later work on that die waits for it).
//!
//! Simplifications, stated: the log blocks are reserved outside the FTL's
//! block pool (a few blocks per die; the over-provisioning is not reduced)
//! and their erase counts are not part of `erase_count`.

use super::nand::NandTimelines;
use crate::types::Ns;

/// Bytes of one logged 4 KiB entry.
const ENTRY_BYTES: u32 = 4096;

/// The log's position and counters.
#[derive(Clone, Debug)]
pub struct SlcLog {
    /// SLC-mode program time of one log page (a multi-plane stripe), ns.
    t_prog_ns: Ns,
    /// SLC pages per log block (the lower pages of an MLC block).
    pages_per_block: u32,
    /// Die of the next log program.
    next_die: u32,
    /// Log pages programmed in each die's current log block.
    pages_in_block: Vec<u32>,
    /// Counters since the last reset.
    stats: SlcLogStats,
}

/// What the SLC log did (report `device.slc_log`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SlcLogStats {
    /// Log programs (one per durable commit that found unlogged data).
    pub programs: u64,
    /// 4 KiB entries logged.
    pub slots: u64,
    /// Log blocks erased when full.
    pub erases: u64,
}

impl SlcLog {
    /// A log over `dies` dies, programming an SLC page in `t_prog_ns` ns, in
    /// log blocks of MLC blocks of `mlc_pages_per_block` pages.
    pub fn new(dies: u32, mlc_pages_per_block: u32, t_prog_ns: Ns) -> SlcLog {
        SlcLog {
            t_prog_ns,
            pages_per_block: (mlc_pages_per_block / 2).max(1),
            next_die: 0,
            pages_in_block: vec![0; dies as usize],
            stats: SlcLogStats::default(),
        }
    }

    /// Logs `entries` cached 4 KiB entries from `t` on the next die in
    /// turn; returns when they are durable (the program's end), ns.
    pub fn log(&mut self, tl: &mut NandTimelines, t: Ns, entries: usize) -> Ns {
        let die = self.next_die;
        self.next_die = (die + 1) % self.pages_in_block.len() as u32;
        let bytes = entries as u32 * ENTRY_BYTES;
        let end = tl.program_for(t, die, bytes, self.t_prog_ns);
        self.stats.programs += 1;
        self.stats.slots += entries as u64;
        let used = &mut self.pages_in_block[die as usize];
        *used += 1;
        if *used == self.pages_per_block {
            *used = 0;
            tl.erase(end, die);
            self.stats.erases += 1;
        }
        end
    }

    /// Starts over at the first die with empty log blocks (timelines
    /// reset after preconditioning).
    pub fn reset(&mut self) {
        self.next_die = 0;
        self.pages_in_block.iter_mut().for_each(|p| *p = 0);
    }

    /// Counters since the last [`SlcLog::reset_stats`].
    pub fn stats(&self) -> SlcLogStats {
        self.stats
    }

    /// Clears the counters.
    pub fn reset_stats(&mut self) {
        self.stats = SlcLogStats::default();
    }
}
