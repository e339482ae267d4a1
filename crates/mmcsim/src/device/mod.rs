//! The eMMC device model: bus, controller (firmware cost, mapping cache,
//! read buffer with stream prefetch, write buffer), page-level FTL with
//! greedy GC and dynamic wear leveling, and the NAND array.
//!
//! Contract:
//! * [`Emmc::execute`] applies one command to the device state at its start
//!   time (ns, when the driver issues it on the bus) and returns its
//!   completion time (ns). It never looks at the wall clock and keeps no
//!   event queue: every resource (the bus, each NAND channel, each die) has
//!   a "next free at" timeline, and background work — read prefetch,
//!   write-buffer programs, garbage collection, map write-back — occupies
//!   those timelines past the returned time, delaying later commands.
//!   Commands may be issued with overlapping times (command queueing); each
//!   reserves the resources it needs in issue order.
//! * [`Emmc::execute`] is the legacy (and direct-command) path: the card
//!   holds the bus from the command until its completion, one command at a
//!   time. [`Emmc::execute_queued`] is the eMMC 5.1 command-queue path: the
//!   task is queued on the CMD line (CMD44 + CMD45, serialised on a CMD-line
//!   timeline), its NAND work is scheduled on the die/channel timelines at
//!   once, and its data phase (CMD46/CMD47 + the transfer) occupies the DAT
//!   bus only for the transfer, in the earliest free gap once its data is
//!   ready. Completions therefore come back out of order: a read whose die
//!   is free finishes before an earlier read queued behind a busy die. No
//!   CMD13 polling after queued writes (the queue reports completion).
//! * Addresses are 512-byte sectors; the FTL maps 4 KiB logical pages (LPN
//!   = sector / 8). A command touching part of an LPN is charged as the whole
//!   LPN inside the device; sectors beyond [`Emmc::capacity_sectors`] are
//!   ignored by the FTL (the driver never issues them).
//! * Increasing addresses are cheaper than decreasing ones only through the
//!   mechanisms (map-cache forward prefetch, read-buffer stream prefetch);
//!   the optional `reverse_seek_penalty_us` calibration knob (default 0) is
//!   counted separately in the statistics.
//! * Untimed paths ([`Emmc::precondition`], [`Emmc::write_untimed`]) run the
//!   same FTL code and drop the NAND timing.
//! * [`Emmc::check_integrity`] proves, with a per-LPN version oracle, that
//!   every LPN reads its newest data and every valid slot is mapped once.

mod bus;
pub mod config;
pub mod ftl;
mod map_cache;
pub mod nand;
mod precondition;
mod read_buffer;
mod stats;
mod write_buffer;

pub use config::{CmdqConfig, DeviceConfig, Precondition};
pub use precondition::PreconditionSummary;
pub use stats::{DeviceStats, EraseCountStats};

use crate::error::Result;
use crate::types::{us_to_ns, Ns, Op, SECTORS_PER_PAGE};
use bus::Bus;
use ftl::PageFtl;
use map_cache::MapCache;
use nand::{Geometry, NandOp, NandTimelines};
use read_buffer::ReadBuffer;
use write_buffer::WriteBuffer;

/// L2P entries (4 bytes each) in one 4 KiB map page: 4 MiB of LBA space.
pub const ENTRIES_PER_MAP_PAGE: u32 = 1024;

/// One command as the driver issues it to the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCommand {
    /// Read, write, discard or flush.
    pub op: Op,
    /// First 512-byte sector (ignored for flush).
    pub sector: u64,
    /// Length in 512-byte sectors (0 for flush).
    pub sectors: u32,
    /// Forced unit access / reliable write: the write completes only when its
    /// data is safe on NAND.
    pub fua: bool,
}

/// Counters kept by the controller (the FTL keeps its own).
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    host_slots_written: u64,
    host_slots_read: u64,
    data_nand_reads: u64,
    map_nand_reads: u64,
    map_pages_loaded: u64,
    map_writebacks: u64,
    prefetch_nand_reads: u64,
    write_buffer_read_hits: u64,
    unmapped_reads: u64,
    reverse_penalties: u64,
}

/// An eMMC device: state plus resource timelines.
#[derive(Clone, Debug)]
pub struct Emmc {
    cfg: DeviceConfig,
    geo: Geometry,
    ftl: PageFtl,
    tl: NandTimelines,
    bus: Bus,
    map: MapCache,
    rbuf: ReadBuffer,
    wbuf: WriteBuffer,
    ops: Vec<NandOp>,
    stripe_tmp: Vec<(u32, u32)>,
    expected: Vec<u32>,
    next_version: u32,
    fw_ns: Ns,
    reverse_penalty_ns: Ns,
    bus_free: Ns,
    last_lpn: Option<u32>,
    last_sector: Option<u64>,
    map_pages: u32,
    maps_per_sense: u32,
    map_prefetch: u32,
    /// Deferred map prefetch: `(die, translation page, bytes, own map page
    /// ready, die free mark)`.
    map_pf: Vec<(u32, u32, u32, Ns, Option<Ns>)>,
    /// The command being executed came through the command queue.
    queued: bool,
    /// CMD line free at (queued-task commands), ns.
    cmd_free: Ns,
    /// DAT-bus reservations of queued data phases, `(start, end)` ns,
    /// sorted and disjoint.
    dat: Vec<(Ns, Ns)>,
    /// Execute-command time still to charge before the first transfer of the
    /// current queued command, ns.
    exec_pending: Ns,
    c: Counters,
}

impl Emmc {
    /// Builds a fresh (erased, empty) device from a validated profile.
    pub fn new(cfg: &DeviceConfig) -> Result<Emmc> {
        cfg.validate("device profile")?;
        let geo = Geometry::new(&cfg.nand);
        let ftl = PageFtl::new(
            geo,
            cfg.ftl.over_provisioning,
            cfg.gc.start_below_free_blocks_per_die,
            cfg.gc.stop_at_free_blocks_per_die,
            cfg.wear_leveling.dynamic,
        );
        let lpns = ftl.user_lpns();
        Ok(Emmc {
            geo,
            tl: NandTimelines::new(&cfg.nand),
            bus: Bus::new(&cfg.bus),
            map: MapCache::new(cfg.map_cache.entries),
            rbuf: ReadBuffer::new(cfg.read_buffer.pages),
            wbuf: WriteBuffer::new(cfg.write_buffer.size_kib / 4, geo.stripe_slots(), lpns),
            ops: Vec::with_capacity(4096),
            stripe_tmp: Vec::with_capacity(geo.stripe_slots() as usize),
            expected: vec![0; lpns as usize],
            next_version: 1,
            fw_ns: us_to_ns(cfg.controller.fw_cmd_us),
            reverse_penalty_ns: us_to_ns(cfg.calibration.reverse_seek_penalty_us),
            bus_free: 0,
            last_lpn: None,
            last_sector: None,
            map_pages: lpns.div_ceil(ENTRIES_PER_MAP_PAGE),
            maps_per_sense: geo.stripe_slots(),
            map_prefetch: cfg
                .map_cache
                .prefetch_map_pages
                .min(cfg.map_cache.entries - 1),
            map_pf: Vec::with_capacity(8),
            queued: false,
            cmd_free: 0,
            dat: Vec::with_capacity(64),
            exec_pending: 0,
            c: Counters::default(),
            ftl,
            cfg: cfg.clone(),
        })
    }

    /// The profile this device was built from.
    pub fn config(&self) -> &DeviceConfig {
        &self.cfg
    }

    /// User-visible capacity in 512-byte sectors (raw × (1 − over-provisioning)).
    pub fn capacity_sectors(&self) -> u64 {
        self.ftl.user_lpns() as u64 * SECTORS_PER_PAGE
    }

    /// Starts `cmd` at `start` ns (the moment the driver issues it on the bus); returns its completion time in ns.
    pub fn execute(&mut self, start: Ns, cmd: &DeviceCommand) -> Ns {
        let dat_end = self.dat.last().map_or(0, |d| d.1);
        let t0 = start.max(self.bus_free).max(dat_end);
        self.queued = false;
        self.wbuf.retire(t0);
        self.tl.forget_before(t0);
        let end = match cmd.op {
            Op::Read => self.do_read(t0, cmd),
            Op::Write => self.do_write(t0, cmd),
            Op::Discard => self.do_discard(t0, cmd),
            Op::Flush => self.do_flush(t0),
        };
        self.bus_free = end;
        end
    }

    /// True when the profile has a command queue (`[cmdq]`).
    pub fn supports_cmdq(&self) -> bool {
        self.cfg.cmdq.is_some()
    }

    /// Queues data command `cmd` (read or write) at `start` ns through the
    /// eMMC 5.1 command queue and returns its completion time, ns. Other
    /// queued commands may be in the device at the same time; see the
    /// module contract. Flush and discard are direct commands: they go
    /// through [`Emmc::execute`] (the driver issues them with the queue
    /// empty). Calls must come in nondecreasing `start` order.
    pub fn execute_queued(&mut self, start: Ns, cmd: &DeviceCommand) -> Ns {
        if !cmd.op.has_data() || self.cfg.cmdq.is_none() {
            return self.execute(start, cmd);
        }
        // Reservations that ended cannot matter to this or later commands.
        let keep = self.dat.partition_point(|d| d.1 <= start);
        self.dat.drain(..keep);
        let t0 = start.max(self.bus_free);
        self.wbuf.retire(t0);
        self.tl.forget_before(t0);
        self.queued = true;
        let end = match cmd.op {
            Op::Read => self.do_read(t0, cmd),
            _ => self.do_write(t0, cmd),
        };
        self.queued = false;
        end
    }

    /// One data transfer of `dur` ns that may start at `ready`: legacy
    /// commands hold the bus already (`ready + dur`); queued ones take the
    /// earliest DAT-bus gap at or after `ready`, the first one preceded by
    /// its execute command. Returns the end of the transfer.
    fn xfer(&mut self, ready: Ns, dur: Ns) -> Ns {
        if !self.queued {
            return ready + dur;
        }
        let dur = dur + std::mem::take(&mut self.exec_pending);
        let mut s = ready.max(self.bus_free);
        let mut i = self.dat.partition_point(|d| d.1 <= s);
        while i < self.dat.len() && self.dat[i].0 < s + dur {
            s = s.max(self.dat[i].1);
            i += 1;
        }
        self.dat.insert(i, (s, s + dur));
        s + dur
    }

    /// CMD13 after a write: legacy only (a queued task reports completion
    /// through the queue status).
    fn status_poll(&self) -> Ns {
        if self.queued {
            0
        } else {
            self.bus.status_poll_ns()
        }
    }

    /// LPN range `[first, end)` of a command, clipped to the user capacity.
    fn lpn_range(&self, sector: u64, sectors: u32) -> (u32, u32) {
        let n = self.ftl.user_lpns() as u64;
        let first = (sector / SECTORS_PER_PAGE).min(n);
        let end = (sector + sectors as u64).div_ceil(SECTORS_PER_PAGE).min(n);
        (first as u32, end.max(first) as u32)
    }

    /// Sectors of `[sector, sector + sectors)` falling in `lpn`.
    fn sectors_in(lpn: u32, sector: u64, sectors: u32) -> u64 {
        let a = (lpn as u64 * SECTORS_PER_PAGE).max(sector);
        let b = ((lpn as u64 + 1) * SECTORS_PER_PAGE).min(sector + sectors as u64);
        b.saturating_sub(a)
    }

    /// Command/response time, firmware, and the calibration knob.
    fn front(&mut self, t0: Ns, commands: u32, sector: u64) -> Ns {
        let mut t = match (&self.cfg.cmdq, self.queued) {
            (Some(q), true) => {
                // CMD44 + CMD45 on the (shared) CMD line, then firmware; the
                // execute command is charged before the first transfer.
                let on_cmd = t0.max(self.cmd_free) + self.bus.commands_ns(q.queue_task_commands);
                self.cmd_free = on_cmd;
                self.exec_pending = self.bus.commands_ns(q.execute_commands);
                on_cmd + self.fw_ns
            }
            _ => t0 + self.bus.commands_ns(commands) + self.fw_ns,
        };
        if self.reverse_penalty_ns > 0 && self.last_sector.is_some_and(|p| sector < p) {
            t += self.reverse_penalty_ns;
            self.c.reverse_penalties += 1;
        }
        self.last_sector = Some(sector);
        t
    }

    /// Die storing map page `m`: map pages are kept in translation pages of
    /// `maps_per_sense` consecutive map pages (one multi-plane stripe page),
    /// spread round-robin over dies.
    fn map_die(&self, m: u32) -> u32 {
        (m / self.maps_per_sense) % self.geo.dies()
    }

    /// Looks up the map pages of `[first, end)` at `t`; returns when every
    /// needed map page is in SRAM.
    fn map_lookup(&mut self, t: Ns, first: u32, end: u32, dirty: bool) -> Ns {
        let forward = self.last_lpn.is_none_or(|p| first > p);
        self.last_lpn = Some(first);
        let mut ready = t;
        for m in first / ENTRIES_PER_MAP_PAGE..=(end - 1) / ENTRIES_PER_MAP_PAGE {
            let a = self.map.access(m, dirty);
            if let Some(ev) = a.evicted_dirty {
                self.map_writeback(t, ev);
            }
            if !a.hit {
                ready = ready.max(self.map_load(t, m, forward));
            }
        }
        ready
    }

    /// Reads map page `m` from NAND (sense + 4 KiB out); the command waits
    /// only for this. On a forward access the next `prefetch_map_pages` map
    /// pages are loaded too: consecutive map pages share a translation
    /// stripe page (planes × page_kib / 4 map pages), so those in the same
    /// stripe page were sensed together with `m` and only need their
    /// data-out; those in the next translation page need one more sense. The
    /// controller serves the host first: the extra transfers are issued by
    /// [`Self::issue_map_prefetch`] after the command's own NAND reads (and
    /// the die is sensed again if the data read used it in between).
    fn map_load(&mut self, t: Ns, m: u32, forward: bool) -> Ns {
        let die = self.map_die(m);
        let (_, own) = self.tl.read(t, die, 4096);
        self.c.map_nand_reads += 1;
        self.c.map_pages_loaded += 1;
        if !forward {
            return own;
        }
        let group = m / self.maps_per_sense;
        for k in 1..=self.map_prefetch {
            let mm = m + k;
            if mm >= self.map_pages {
                break;
            }
            if self.map.contains(mm) {
                continue;
            }
            if let Some(ev) = self.map.prefetch(mm) {
                self.map_writeback(t, ev);
            }
            let g = mm / self.maps_per_sense;
            // Still in the page register only if nothing used the die since.
            let mark = if g == group { Some(own) } else { None };
            match self.map_pf.iter_mut().find(|e| e.1 == g) {
                Some(e) => e.2 += 4096,
                None => self.map_pf.push((self.map_die(mm), g, 4096, own, mark)),
            }
            self.c.map_pages_loaded += 1;
        }
        own
    }

    /// Issues the deferred data-out (or re-sense) of prefetched map pages.
    fn issue_map_prefetch(&mut self) {
        for i in 0..self.map_pf.len() {
            let (die, _, bytes, own, mark) = self.map_pf[i];
            if mark.is_some_and(|m| self.tl.die_free_at(die) == m) {
                self.tl.data_out(own, die, bytes);
            } else {
                self.tl.read(own, die, bytes);
                self.c.map_nand_reads += 1;
            }
        }
        self.map_pf.clear();
    }

    /// Programs a dirty evicted map page back to its translation block
    /// (background: occupies the die and channel only).
    fn map_writeback(&mut self, t: Ns, m: u32) {
        self.tl.program(t, self.map_die(m), 4096, false);
        self.c.map_writebacks += 1;
    }

    fn do_read(&mut self, t0: Ns, cmd: &DeviceCommand) -> Ns {
        let t = self.front(t0, 2, cmd.sector);
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors);
        if first == end {
            return self.xfer(t, self.bus.data_ns(cmd.sectors as u64));
        }
        let t_map = self.map_lookup(t, first, end, false);
        let stream = self
            .rbuf
            .note_read(cmd.sector, cmd.sector + cmd.sectors as u64);
        let page_bytes = self.geo.page_bytes();
        let mut bus_t = t_map;
        for lpn in first..end {
            let ready = if self.wbuf.holds(lpn) {
                self.c.write_buffer_read_hits += 1;
                t_map
            } else if let Some(slot) = self.ftl.lookup(lpn) {
                let page = self.geo.slot_page_id(slot);
                match self.rbuf.find(page) {
                    Some(r) => {
                        self.rbuf.count(true);
                        r.max(t_map)
                    }
                    None => {
                        self.rbuf.count(false);
                        let upper = Geometry::is_upper_page(self.geo.slot_page(slot));
                        let die = self.geo.slot_die(slot);
                        let (_, e) = self.tl.read_page(t_map, die, page_bytes, upper);
                        self.c.data_nand_reads += 1;
                        self.rbuf.insert(page, e);
                        e
                    }
                }
            } else {
                self.c.unmapped_reads += 1;
                t_map
            };
            let d = self
                .bus
                .data_ns(Self::sectors_in(lpn, cmd.sector, cmd.sectors));
            bus_t = self.xfer(bus_t.max(ready), d);
        }
        self.c.host_slots_read += (end - first) as u64;
        self.issue_map_prefetch();
        if stream && self.cfg.read_buffer.prefetch_kib > 0 {
            self.prefetch_after(t_map, end);
        }
        bus_t
    }

    /// Senses the NAND pages holding the LPNs after a forward stream into the
    /// read buffer, in the background (at most `pages - 1` new pages so the
    /// demand data stays). Stops at a map page that is not cached.
    fn prefetch_after(&mut self, t: Ns, from: u32) {
        let n = self.cfg.read_buffer.prefetch_kib / 4;
        let to = from.saturating_add(n).min(self.ftl.user_lpns());
        let mut budget = self.rbuf.capacity().saturating_sub(1);
        let page_bytes = self.geo.page_bytes();
        for lpn in from..to {
            if budget == 0 || !self.map.contains(lpn / ENTRIES_PER_MAP_PAGE) {
                break;
            }
            if self.wbuf.holds(lpn) {
                continue;
            }
            let Some(slot) = self.ftl.lookup(lpn) else {
                continue;
            };
            let page = self.geo.slot_page_id(slot);
            if self.rbuf.find(page).is_some() {
                continue;
            }
            let upper = Geometry::is_upper_page(self.geo.slot_page(slot));
            let (_, e) = self
                .tl
                .read_page(t, self.geo.slot_die(slot), page_bytes, upper);
            self.rbuf.insert(page, e);
            self.rbuf.count_prefetch();
            self.c.prefetch_nand_reads += 1;
            budget -= 1;
        }
    }

    fn do_write(&mut self, t0: Ns, cmd: &DeviceCommand) -> Ns {
        let t = self.front(t0, 2, cmd.sector);
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors);
        if first == end {
            return self.xfer(t, self.bus.data_ns(cmd.sectors as u64)) + self.status_poll();
        }
        let t_map = self.map_lookup(t, first, end, true);
        self.issue_map_prefetch();
        let mut bus_t = t_map;
        for lpn in first..end {
            bus_t = self.wbuf.wait_for_space(bus_t);
            let d = self
                .bus
                .data_ns(Self::sectors_in(lpn, cmd.sector, cmd.sectors));
            bus_t = self.xfer(bus_t, d);
            let v = self.new_version(lpn);
            self.c.host_slots_written += 1;
            if self.wbuf.push(lpn, v) {
                self.program_pending(bus_t);
            }
        }
        let mut done = bus_t;
        if cmd.fua && self.cfg.write_buffer.volatile {
            if !self.wbuf.pending().is_empty() {
                self.program_pending(bus_t);
            }
            done = self.wbuf.drain_time(bus_t);
        }
        done + self.status_poll()
    }

    fn do_discard(&mut self, t0: Ns, cmd: &DeviceCommand) -> Ns {
        let t = self.front(t0, 3, cmd.sector);
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors);
        if first == end {
            return t;
        }
        let t_map = self.map_lookup(t, first, end, true);
        self.issue_map_prefetch();
        for lpn in first..end {
            self.wbuf.discard(lpn);
            self.ftl.trim(lpn);
            self.expected[lpn as usize] = 0;
        }
        t_map
    }

    fn do_flush(&mut self, t0: Ns) -> Ns {
        let t = t0 + self.bus.commands_ns(1) + self.fw_ns;
        if !self.cfg.write_buffer.volatile {
            return t;
        }
        if !self.wbuf.pending().is_empty() {
            self.program_pending(t);
        }
        self.wbuf.drain_time(t)
    }

    fn new_version(&mut self, lpn: u32) -> u32 {
        let v = self.next_version;
        self.next_version = self
            .next_version
            .checked_add(1)
            .expect("oracle version overflow");
        self.expected[lpn as usize] = v;
        v
    }

    /// Programs the pending write-buffer entries (padding a partial stripe)
    /// starting at `t`, with any foreground GC first; returns the end.
    fn program_pending(&mut self, t: Ns) -> Ns {
        self.wbuf.take_pending(&mut self.stripe_tmp, Some(t));
        self.ops.clear();
        self.ftl.write_stripe(&self.stripe_tmp, &mut self.ops);
        let mut end = t;
        let ppb = self.geo.pages_per_block;
        for op in &self.ops {
            end = end.max(self.tl.apply(t, op));
            if let NandOp::Erase { blk, .. } = *op {
                self.rbuf.invalidate_range(blk * ppb, ppb);
            }
        }
        self.wbuf.mark_inflight(&self.stripe_tmp, end);
        end
    }

    /// Untimed program of the pending entries (padding a partial stripe).
    fn program_pending_untimed(&mut self) {
        self.wbuf.take_pending(&mut self.stripe_tmp, None);
        self.ops.clear();
        self.ftl.write_stripe(&self.stripe_tmp, &mut self.ops);
        let ppb = self.geo.pages_per_block;
        for op in &self.ops {
            if let NandOp::Erase { blk, .. } = *op {
                self.rbuf.invalidate_range(blk * ppb, ppb);
            }
        }
    }

    /// Untimed host write of one LPN.
    fn write_lpn_untimed(&mut self, lpn: u32) {
        let v = self.new_version(lpn);
        if self.wbuf.push(lpn, v) {
            self.program_pending_untimed();
        }
    }

    /// Unmeasured, untimed: sequential fill to a fraction then random overwrites until GC is in steady state (window WAF stable) or max_overwrite_factor; resets timelines and stats afterwards.
    pub fn precondition(&mut self, p: &Precondition, seed: u64) -> PreconditionSummary {
        precondition::run(self, p, seed)
    }

    /// Unmeasured, untimed sequential write of a sector range (lays out a file's data before a run).
    ///
    /// The data ends on NAND (a partial last stripe page is padded); the
    /// statistics and timelines are left untouched.
    pub fn write_untimed(&mut self, sector: u64, sectors: u64) {
        let saved = *self.ftl.stats();
        let n = self.ftl.user_lpns() as u64;
        let first = (sector / SECTORS_PER_PAGE).min(n) as u32;
        let end = (sector + sectors).div_ceil(SECTORS_PER_PAGE).min(n) as u32;
        for lpn in first..end {
            self.write_lpn_untimed(lpn);
        }
        if !self.wbuf.pending().is_empty() {
            self.program_pending_untimed();
        }
        self.ftl.restore_stats(saved);
    }

    /// Unmeasured, untimed TRIM of a sector range (replaying a
    /// preconditioning trace's discards); statistics and timelines are left
    /// untouched.
    pub fn trim_untimed(&mut self, sector: u64, sectors: u64) {
        let n = self.ftl.user_lpns() as u64;
        let first = (sector / SECTORS_PER_PAGE).min(n) as u32;
        let end = (sector + sectors).div_ceil(SECTORS_PER_PAGE).min(n) as u32;
        let saved = *self.ftl.stats();
        for lpn in first..end {
            self.wbuf.discard(lpn);
            self.ftl.trim(lpn);
            self.expected[lpn as usize] = 0;
        }
        self.ftl.restore_stats(saved);
    }

    /// Makes every resource idle at time 0 and forgets controller caches
    /// (used after preconditioning: a measurement starts cold).
    fn reset_timelines(&mut self) {
        self.tl.reset();
        self.wbuf.clear_inflight();
        self.rbuf.clear();
        self.map.clear();
        self.bus_free = 0;
        self.cmd_free = 0;
        self.dat.clear();
        self.last_lpn = None;
        self.last_sector = None;
    }

    /// A snapshot of the counters and wear statistics.
    pub fn stats(&self) -> DeviceStats {
        stats::collect(self)
    }

    /// Clears every counter (wear, mapping and data are kept).
    pub fn reset_stats(&mut self) {
        self.c = Counters::default();
        self.ftl.reset_stats();
        self.map.reset_stats();
        self.rbuf.reset_stats();
        self.wbuf.reset_stats();
        self.tl.reset_busy();
    }

    /// Checks the FTL against the version oracle (see [`ftl::PageFtl::check`]).
    pub fn check_integrity(&self) -> std::result::Result<(), String> {
        self.ftl.check(self.wbuf.pending(), &self.expected)
    }
}

#[cfg(test)]
mod tests;
