//! The eMMC device model, as a controller pipeline:
//!
//! ```text
//! host interface ─► controller firmware ─► caches ───────────────► FTL ──────────────────► NAND
//! (bus timing,       (command handlers,    (mapping cache,          (mapping scheme,        (per-die and per-channel
//!  command parsing,   firmware cost)        read buffer + prefetch,  block manager, GC,      timelines, program order,
//!  legacy / CMDQ)                           write buffer)            wear leveling)          erase counts)
//! ```
//!
//! Contract:
//! * [`Emmc::execute`] applies one [`DeviceCommand`] — a request with the
//!   CMD-line commands the driver chose for it — at its start time (ns, when
//!   the driver issues it) and returns its completion time (ns). The
//!   [`host_interface`] parses the commands and charges the bus; the
//!   firmware runs the operation through the [`cache`]s and the [`ftl`]; the
//!   [`nand`] timelines time the resulting NAND work. Nothing reads the wall
//!   clock and there is no event queue: every resource (CMD line, DAT bus,
//!   each NAND channel, each die) has a "next free at" timeline, and
//!   background work — read prefetch, write-buffer programs, garbage
//!   collection, map write-back — occupies those timelines past the
//!   returned time, delaying later commands. Commands reserve resources in
//!   issue order; a queued task (CMDQ) may overlap others and complete out of
//!   order.
//! * Addresses are 512-byte sectors; the FTL maps 4 KiB logical pages (LPN
//!   = sector / 8). A command touching part of an LPN is charged as the whole
//!   LPN inside the device; sectors beyond [`Emmc::capacity_sectors`] are
//!   ignored by the FTL (the driver never issues them).
//! * Increasing addresses are cheaper than decreasing ones only through the
//!   mechanisms (map-cache prefetch, read-buffer stream prefetch, each
//!   following the directions its profile names: `[map_cache]
//!   prefetch_direction`, `[read_buffer] stream_direction`);
//!   the optional `reverse_seek_penalty_us` calibration knob (default 0) is
//!   counted separately in the statistics.
//! * Untimed paths ([`Emmc::precondition`], [`Emmc::write_untimed`],
//!   [`Emmc::trim_untimed`]) run the same FTL code and drop the NAND timing.
//! * [`Emmc::save_state`] / [`Emmc::load_state`] write and restore a
//!   preconditioned device as a compact versioned file (module `state`).
//! * A legacy write the host may stop for an urgent read (HPI) runs one
//!   4 KiB transfer at a time instead ([`Emmc::begin_stoppable_write`],
//!   [`Emmc::step_write`], [`Emmc::stop_write`]; module `stop`): stopped,
//!   only the pieces that crossed the bus are on the card.
//! * [`Emmc::check_integrity`] proves, with a per-LPN version oracle, that
//!   every LPN reads its newest data and every valid slot is mapped once;
//!   [`Emmc::start_integrity_check`] makes [`Emmc::execute`] prove it after
//!   every command for what the command touched (`--check-integrity`).

pub mod cache;
pub mod config;
mod error;
mod firmware;
pub mod ftl;
pub mod host_interface;
mod integrity_check;
pub mod nand;
mod oracle;
pub mod power_loss;
mod precondition;
mod slc_log;
pub mod state;
mod stats;
mod stop;
pub mod warm;

pub use cache::ENTRIES_PER_MAP_PAGE;
pub use config::{CmdqConfig, DeviceConfig, FeaturesConfig, FuaPath, Precondition};
pub use error::DeviceError;
pub use host_interface::{DeviceCommand, EraseArg, MmcCommand};
pub use integrity_check::{CheckPoint, IntegrityStats, Violation};
pub use precondition::PreconditionSummary;
pub use state::{StateError, FORMAT_VERSION as STATE_FORMAT_VERSION};
pub use stats::{
    DeviceStats, EraseCommandStats, EraseCountStats, FlushLatency, FlushStats, GcPauseStats,
    MergeStats, PauseSummary,
};
pub use stop::{WriteStep, STOP_COMMANDS};

use crate::error::Result;
use crate::types::{us_to_ns, Ns, Op, SECTORS_PER_PAGE};
use cache::{MapCache, ReadBuffer, WriteBuffer};
use firmware::Counters;
use ftl::{DftlMapping, HybridMapping, Mapping, MappingScheme, PageMapping};
use host_interface::HostInterface;
use nand::{Geometry, NandOp, NandTimelines};
use oracle::VersionOracle;

/// An eMMC device: the state of every pipeline stage plus its timelines.
#[derive(Clone, Debug)]
pub struct Emmc {
    cfg: DeviceConfig,
    geo: Geometry,
    /// Host interface: bus timing and command parsing.
    hi: HostInterface,
    /// Controller firmware: per-command cost, in ns.
    fw_ns: Ns,
    /// BKOPS running: when its next victim may start, ns.
    bkops: Option<Ns>,
    /// HPI cost, in ns, when the profile enables HPI.
    hpi_ns: Option<Ns>,
    /// Calibration knob charged on a backward start sector, in ns.
    reverse_penalty_ns: Ns,
    /// Start sector of the previous command (reverse-seek knob).
    last_sector: Option<u64>,
    /// Caches.
    map: MapCache,
    rbuf: ReadBuffer,
    wbuf: WriteBuffer,
    /// Flash translation layer.
    ftl: Box<dyn Mapping>,
    /// NAND timelines.
    tl: NandTimelines,
    /// Scratch: NAND operations of the FTL call being timed.
    ops: Vec<NandOp>,
    /// Scratch: the stripe page being programmed.
    stripe_tmp: Vec<(u32, u32)>,
    oracle: VersionOracle,
    /// The per-command integrity check, when running.
    integrity: Option<Box<integrity_check::IntegrityChecker>>,
    /// A stoppable write receiving its data (module `stop`).
    open: Option<stop::OpenWrite>,
    /// The SLC-mode log of durable commits, when `[write_buffer] slc_log`.
    slc: Option<slc_log::SlcLog>,
    /// Scratch of a packed read: each LPN's data-ready time, ns, in header
    /// order.
    packed_ready: Vec<Ns>,
    /// Scratch of a packed read: its entries.
    packed_entries: Vec<firmware::PackedEntry>,
    c: Counters,
    /// Service time of each FLUSH_CACHE, from its command to the card ready.
    flush_latency: crate::stats::LatencyHistogram,
    /// `host_slots_written` at the last atomic-write commit (`[ftl]
    /// atomic_write`): a FLUSH_CACHE with nothing written since commits
    /// nothing.
    atomic_committed: u64,
    /// End of the data phase of the last write command (its last block on
    /// the DAT lines), ns: see [`Emmc::write_data_end`].
    write_data_end: Ns,
    /// Each foreground GC pause: how long a stripe-page program waited for
    /// the reclaim work the FTL ran before it.
    gc_pause: crate::stats::LatencyHistogram,
    /// `[gc] idle_gc_after_ms` in ns.
    idle_gc_after: Option<Ns>,
    /// When the card last became idle (its last command's end), ns.
    idle_since: Option<Ns>,
    /// The power-loss record, when running (module [`power_loss`]).
    power: Option<Box<power_loss::tracker::Tracker>>,
}

impl Emmc {
    /// Builds a fresh (erased, empty) device from a validated profile.
    pub fn new(cfg: &DeviceConfig) -> Result<Emmc> {
        Emmc::build(cfg, false)
    }

    /// As [`Emmc::new`], for a saved state to be loaded into at once with
    /// [`Emmc::load_state`]: the page mapping's L2P table, which loading
    /// writes whole, is not filled first. Unusable until loaded.
    pub(crate) fn to_load(cfg: &DeviceConfig) -> Result<Emmc> {
        Emmc::build(cfg, true)
    }

    /// [`Emmc::new`]; with `to_load`, [`Emmc::to_load`].
    fn build(cfg: &DeviceConfig, to_load: bool) -> Result<Emmc> {
        cfg.validate("device profile")?;
        let geo = Geometry::new(&cfg.nand);
        let (f, g, wl) = (&cfg.ftl, &cfg.gc, &cfg.wear_leveling);
        let ftl: Box<dyn Mapping> = match cfg.ftl.mapping {
            MappingScheme::Page if to_load => Box::new(PageMapping::to_load(geo, f, g, wl)),
            MappingScheme::Page => Box::new(PageMapping::new(geo, f, g, wl)),
            MappingScheme::Hybrid => Box::new(HybridMapping::new(
                geo,
                &cfg.ftl,
                &cfg.gc,
                &cfg.wear_leveling,
            )),
            MappingScheme::Dftl => {
                Box::new(DftlMapping::new(geo, &cfg.ftl, &cfg.gc, &cfg.wear_leveling))
            }
        };
        let lpns = ftl.user_lpns();
        Ok(Emmc {
            geo,
            hi: HostInterface::new(&cfg.bus, cfg.cmdq.is_some()),
            fw_ns: us_to_ns(cfg.controller.fw_cmd_us),
            bkops: None,
            hpi_ns: cfg
                .features
                .hpi
                .then(|| us_to_ns(cfg.features.hpi_cost_us())),
            reverse_penalty_ns: us_to_ns(cfg.calibration.reverse_seek_penalty_us),
            last_sector: None,
            map: MapCache::new(
                cfg.map_cache.entries,
                cfg.map_cache.prefetch_map_pages,
                cfg.map_cache.prefetch_direction,
                lpns,
                geo.stripe_slots(),
                geo.dies(),
            ),
            rbuf: ReadBuffer::new(cfg.read_buffer.pages, cfg.read_buffer.stream_direction),
            wbuf: WriteBuffer::new(cfg.write_buffer.size_kib / 4, geo.stripe_slots(), lpns),
            tl: {
                let mut tl = NandTimelines::new(&cfg.nand);
                tl.set_interruptible(cfg.features.hpi);
                tl
            },
            ops: Vec::with_capacity(4096),
            stripe_tmp: Vec::with_capacity(geo.stripe_slots() as usize),
            oracle: VersionOracle::new(lpns),
            integrity: None,
            open: None,
            slc: cfg.write_buffer.slc_log.then(|| {
                slc_log::SlcLog::new(
                    geo.dies(),
                    geo.pages_per_block,
                    us_to_ns(cfg.write_buffer.slc_program_us(cfg.nand.t_prog_lower_us)),
                )
            }),
            packed_ready: Vec::new(),
            packed_entries: Vec::new(),
            c: Counters::default(),
            flush_latency: crate::stats::LatencyHistogram::new(),
            atomic_committed: 0,
            write_data_end: 0,
            gc_pause: crate::stats::LatencyHistogram::new(),
            idle_gc_after: cfg.gc.idle_gc_after_ms.map(|ms| us_to_ns(ms * 1000.0)),
            idle_since: None,
            power: None,
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

    /// True when the profile has a command queue (`[cmdq]`).
    pub fn supports_cmdq(&self) -> bool {
        self.cfg.cmdq.is_some()
    }

    /// Starts `cmd` at `start` ns (the moment the driver issues it) and
    /// returns its completion time in ns.
    ///
    /// Direct (legacy) commands hold the bus from their start until their
    /// completion, one at a time, after every queued data phase. A queued
    /// task (CMD44 + CMD45 ...) is queued on the CMD line, its NAND work is
    /// scheduled at once and its data phase takes the earliest free DAT-bus
    /// gap; queued tasks must come in nondecreasing `start` order. See
    /// [`host_interface`] for the command sequences.
    pub fn execute(&mut self, start: Ns, cmd: &DeviceCommand) -> Ns {
        self.stop_bkops(start);
        self.before_command(start);
        let seq = self.hi.decode(cmd);
        let t0 = if seq.queued() {
            self.hi.begin_queued(start)
        } else {
            self.hi.begin_legacy(start)
        };
        self.wbuf.retire(t0);
        self.tl.forget_before(t0);
        let end = self.run_command(t0, cmd, &seq);
        self.check_after_command(start, cmd);
        if let Some(p) = self.power.as_deref_mut() {
            p.end_command(end);
        }
        let end = if seq.queued() {
            self.hi.end_queued();
            end
        } else {
            let end = end + self.hi.status_polls_ns(&seq);
            self.hi.end_legacy(end);
            end
        };
        self.note_idle_from(end);
        end
    }

    /// Before a command arriving at `start`: the idle-time GC the card ran
    /// in the gap since its last command ([`Emmc::idle_collect`]).
    fn before_command(&mut self, start: Ns) {
        if let Some(since) = self.idle_since.take() {
            if start > since {
                self.idle_collect(since, start);
            }
        }
    }

    /// The card is idle from `end` unless a later command already ends
    /// after it (queued tasks).
    fn note_idle_from(&mut self, end: Ns) {
        if self.idle_gc_after.is_some() {
            self.idle_since = Some(self.idle_since.map_or(end, |s| s.max(end)));
        }
    }

    /// When the data phase of the last write command ended (its last block
    /// and CRC status on the DAT lines), ns. A write the card must make
    /// durable (reliable write on a volatile cache, or the cache off) keeps
    /// the card busy in the programming state (PRG) after that until the
    /// completion time [`Emmc::execute`] returned; otherwise the two are
    /// equal. A host controller whose transfer-complete interrupt does not
    /// wait for the busy signal raises it here, and the driver polls CMD13
    /// SEND_STATUS until the card leaves PRG.
    pub fn write_data_end(&self) -> Ns {
        self.write_data_end
    }

    /// Notes a secure discard the driver sends as a plain discard because
    /// the card has no SANITIZE (reported in `device.erase_commands`).
    pub fn count_secure_discard_as_plain(&mut self) {
        self.c.secure_as_plain += 1;
    }

    /// BKOPS_STATUS (EXT_CSD 246) urgency, 0..=3, from the fewest free
    /// blocks on any die: 0 at or above the BKOPS target, then 1, 2, 3 as
    /// the deficit covers up to a third, two thirds, or more of the gap
    /// between the target and the foreground-GC threshold [est: JEDEC names
    /// the levels "none / not critical / performance impacted / critical"
    /// without thresholds]. Always 0 without `[gc] background`.
    pub fn bkops_status(&self) -> u8 {
        if !self.cfg.gc.background {
            return 0;
        }
        let Some(free) = self.ftl.min_free_blocks_per_die() else {
            return 0;
        };
        let target = self.cfg.gc.bkops_target();
        let start = self.cfg.gc.start_below_free_blocks_per_die;
        if free >= target {
            return 0;
        }
        let gap = target.saturating_sub(start).max(1);
        let deficit = target - free;
        if 3 * deficit <= gap {
            1
        } else if 3 * deficit <= 2 * gap {
            2
        } else {
            3
        }
    }

    /// CMD6 BKOPS_START at `now` ns: the card starts collecting victims in
    /// the background (after its firmware cost `fw_cmd_us`) until it
    /// reaches its target or the next command stops it. Returns false (and
    /// does nothing) when BKOPS is off, already running, or not needed
    /// (status 0).
    pub fn start_bkops(&mut self, now: Ns) -> bool {
        if !self.cfg.gc.background || self.bkops.is_some() || self.bkops_status() == 0 {
            return false;
        }
        self.c.bkops_runs += 1;
        self.bkops = Some(now + self.fw_ns);
        true
    }

    /// True while BKOPS runs.
    pub fn bkops_running(&self) -> bool {
        self.bkops.is_some()
    }

    /// A command arriving at `t` stops BKOPS: the victims that started
    /// before `t` are booked (one victim after another on its die's
    /// timeline), the one in progress at `t` completes — later commands
    /// wait for it, or an HPI read interrupts it at a NAND-operation
    /// boundary — and no further victim starts.
    fn stop_bkops(&mut self, t: Ns) {
        let Some(mut next) = self.bkops.take() else {
            return;
        };
        let target = self.cfg.gc.bkops_target();
        while next < t {
            self.ops.clear();
            if self.ftl.background_collect(target, &mut self.ops).is_none() {
                break;
            }
            self.c.bkops_gc_runs += 1;
            next = self.apply_serial(next);
        }
    }

    /// Starts a packed command at `start` ns carrying the legacy data
    /// commands `cmds` (at least one, all writes or all reads, each as
    /// [`Emmc::execute`] would take it); returns when the whole pack
    /// completes, ns.
    ///
    /// * Writes (eMMC 4.5 packed write): CMD23 with the PACKED flag +
    ///   CMD25 whose first block is the packed header, then CMD13 as for
    ///   one write.
    /// * Reads (eMMC 4.5 packed read, [`FeaturesConfig::packed_read`]):
    ///   CMD23 with the PACKED flag and a block count of 1 + CMD25 writing
    ///   the packed header, then CMD23 with the total block count + CMD18
    ///   reading every entry's data back to back (module `firmware`,
    ///   `read_packed`).
    pub fn execute_packed(&mut self, start: Ns, cmds: &[DeviceCommand]) -> Ns {
        let op = cmds.first().map(|c| c.op);
        assert!(
            matches!(op, Some(Op::Write | Op::Read)) && cmds.iter().all(|c| Some(c.op) == op),
            "mmcsim device: simulator bug: a packed command carries writes only or reads only"
        );
        self.stop_bkops(start);
        self.before_command(start);
        let seq = self.hi.decode(&cmds[0]);
        let t0 = self.hi.begin_legacy(start);
        self.wbuf.retire(t0);
        self.tl.forget_before(t0);
        let end = if op == Some(Op::Read) {
            self.read_packed(t0, cmds, &seq)
        } else {
            self.write_packed(t0, cmds, &seq)
        };
        for c in cmds {
            self.check_after_command(start, c);
        }
        if let Some(p) = self.power.as_deref_mut() {
            p.end_command(end);
        }
        let end = end + self.hi.status_polls_ns(&seq);
        self.hi.end_legacy(end);
        self.note_idle_from(end);
        if op == Some(Op::Read) {
            self.c.packed_read_commands += 1;
            self.c.packed_read_requests += cmds.len() as u64;
        } else {
            self.c.packed_commands += 1;
        }
        end
    }

    /// Checks that `cmd`'s command sequence fits its operation and this card
    /// — what [`Emmc::execute`] asserts in debug builds; for drivers' tests.
    pub fn check_command(&self, cmd: &DeviceCommand) -> std::result::Result<(), DeviceError> {
        self.hi.check(cmd).map(|_| ()).map_err(DeviceError::from)
    }

    /// Simulator performance hint (module [`warm`]): a command will soon
    /// touch the 4 KiB logical page holding `sector`; prefetch the
    /// host-CPU cache lines its translation reads, and for a `write` the
    /// oracle record it updates. Call it as early as the sector is known.
    /// No simulated effect: nothing in the device changes.
    pub fn warm(&self, sector: u64, write: bool) {
        let (first, end) = self.lpn_range(sector, 1);
        if first < end {
            self.ftl.warm(first);
            if write {
                self.oracle.warm(first);
            }
        }
    }

    /// LPN range `[first, end)` of a sector range, clipped to the user
    /// capacity.
    fn lpn_range(&self, sector: u64, sectors: u64) -> (u32, u32) {
        let n = self.ftl.user_lpns() as u64;
        let first = (sector / SECTORS_PER_PAGE).min(n);
        let end = (sector + sectors).div_ceil(SECTORS_PER_PAGE).min(n);
        (first as u32, end.max(first) as u32)
    }

    /// Unmeasured, untimed: sequential fill to a fraction then random overwrites until GC is in steady state (window WAF stable) or max_overwrite_factor; resets timelines and stats afterwards.
    pub fn precondition(&mut self, p: &Precondition, seed: u64) -> PreconditionSummary {
        precondition::run(self, p, seed)
    }

    /// The saved state of this freshly preconditioned device (see
    /// module `state`): `summary` is what its preconditioning did and `key`
    /// what the state depends on (profile, overrides, `[precondition]`,
    /// seed), stored as a hash that loading checks.
    pub fn save_state(
        &self,
        summary: &PreconditionSummary,
        key: &str,
    ) -> Result<Vec<u8>, StateError> {
        state::save(self, summary, key)
    }

    /// Replaces preconditioning: restores a state [`Emmc::save_state`]
    /// wrote into this freshly built device, after checking its format
    /// version, geometry, `key` hash, length and checksum (and, once
    /// restored, the FTL's integrity); returns the preconditioning summary.
    pub fn load_state(
        &mut self,
        bytes: &[u8],
        key: &str,
    ) -> Result<PreconditionSummary, StateError> {
        state::load(self, bytes, key)
    }

    /// Unmeasured, untimed sequential write of a sector range (lays out a file's data before a run).
    ///
    /// The data ends on NAND (a partial last stripe page is padded); the
    /// statistics and timelines are left untouched.
    pub fn write_untimed(&mut self, sector: u64, sectors: u64) {
        let saved = self.ftl.stats();
        let (first, end) = self.lpn_range(sector, sectors);
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
        let (first, end) = self.lpn_range(sector, sectors);
        let saved = self.ftl.stats();
        for lpn in first..end {
            self.trim_lpn(lpn);
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
        self.hi.reset();
        self.last_sector = None;
        self.bkops = None;
        self.open = None;
        self.idle_since = None;
        if let Some(l) = self.slc.as_mut() {
            l.reset();
        }
    }

    /// A snapshot of the counters and wear statistics.
    pub fn stats(&self) -> DeviceStats {
        stats::collect(self)
    }

    /// Clears every counter (wear, mapping and data are kept).
    pub fn reset_stats(&mut self) {
        self.c = Counters::default();
        self.flush_latency = crate::stats::LatencyHistogram::new();
        self.gc_pause = crate::stats::LatencyHistogram::new();
        self.ftl.reset_stats();
        self.map.reset_stats();
        self.rbuf.reset_stats();
        self.wbuf.reset_stats();
        self.tl.reset_busy();
        if let Some(l) = self.slc.as_mut() {
            l.reset_stats();
        }
    }

    /// Checks the FTL against the version oracle: every LPN reads its newest
    /// data, every valid slot is mapped once, and the block accounting adds
    /// up.
    pub fn check_integrity(&self) -> std::result::Result<(), DeviceError> {
        self.ftl
            .check(self.wbuf.pending(), self.oracle.expected())
            .map_err(DeviceError::from)
    }
}

#[cfg(test)]
mod tests;

impl Clone for Box<dyn Mapping> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}
