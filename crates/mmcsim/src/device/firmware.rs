//! The controller firmware: the handler of each operation, which runs a
//! command from the host interface through the caches and the FTL and books
//! the NAND work on the timelines.
//!
//! * Read: mapping-cache lookup, then per LPN the write buffer, the read
//!   buffer or a NAND sense; each 4 KiB goes out on the bus as soon as it is
//!   ready. A read continuing a stream the read buffer follows
//!   (`[read_buffer] stream_direction`) prefetches the NAND pages next in
//!   the stream's direction into the read buffer in the background.
//! * Write: mapping-cache lookup (dirty), then per LPN write-buffer space
//!   and the transfer; a full stripe page is programmed in the background
//!   (with any foreground GC first). A FUA write on a volatile buffer waits
//!   until its data is on NAND.
//! * Discard (CMD38 with the DISCARD, TRIM or ERASE argument):
//!   mapping-cache lookup (dirty), then TRIM of every LPN; an ERASE then
//!   erases every block left without valid data. A following CMD6
//!   SANITIZE_START collects every block holding invalid data (the card
//!   stays busy until done).
//! * Flush: on a volatile buffer, programs the pending entries (padding the
//!   stripe page) and waits for every program in flight.
//! * Packed write (eMMC 4.5): one command phase and firmware cost, the
//!   packed header block, then every entry's data as a write; entries that
//!   must be durable share page programs.
//! * Packed read (eMMC 4.5, `[features] packed_read`): the header write,
//!   then every entry's translation and NAND senses started at once (dies
//!   in parallel), and the entries streamed on the bus in header order as
//!   each becomes ready.

use super::cache::Stream;
use super::config::{FlushMetadata, WriteAck};
use super::ftl::Placement;
use super::host_interface::{
    legacy_commands, DeviceCommand, EraseArg, Sequence, PACKED_HEADER_BLOCKS,
};
use super::nand::{Geometry, NandOp};
use super::Emmc;
use crate::types::{us_to_ns, Ns, Op, SECTORS_PER_PAGE};

/// Counters kept by the firmware (the caches and the FTL keep their own).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counters {
    /// 4 KiB slots the host wrote.
    pub host_slots_written: u64,
    /// 4 KiB slots the host read.
    pub host_slots_read: u64,
    /// NAND senses of host data on a read-buffer miss.
    pub data_nand_reads: u64,
    /// NAND senses of read-buffer prefetch.
    pub prefetch_nand_reads: u64,
    /// Host LPN reads served from the write buffer.
    pub write_buffer_read_hits: u64,
    /// Host LPN reads of unmapped pages.
    pub unmapped_reads: u64,
    /// Commands charged the reverse-seek calibration knob.
    pub reverse_penalties: u64,
    /// Reads that interrupted busy NAND work with an HPI.
    pub hpi_interrupts: u64,
    /// Write commands the host stopped part-way (CMD12 + HPI) for an
    /// urgent request.
    pub hpi_stopped_writes: u64,
    /// 512-byte sectors the card had accepted of the stopped writes.
    pub hpi_stopped_sectors: u64,
    /// BKOPS started by the host (CMD6 BKOPS_START).
    pub bkops_runs: u64,
    /// Victims collected by BKOPS (counted in `gc_runs` too).
    pub bkops_gc_runs: u64,
    /// Packed write commands executed.
    pub packed_commands: u64,
    /// Packed read commands executed.
    pub packed_read_commands: u64,
    /// Read requests carried by the packed read commands.
    pub packed_read_requests: u64,
    /// Reliable (FUA) write commands executed.
    pub reliable_writes: u64,
    /// FLUSH_CACHE commands executed.
    pub flush_commands: u64,
    /// Map pages FLUSH_CACHE commands programmed (`[map_cache] on_flush`).
    pub flush_metadata_pages: u64,
    /// CMD38 commands executed, by argument: DISCARD, TRIM, ERASE.
    pub erase_commands: [u64; 3],
    /// Blocks (stripes) erased by ERASE commands, left without valid data.
    pub erase_blocks_erased: u64,
    /// SANITIZE_START commands executed.
    pub sanitize_commands: u64,
    /// Blocks (stripes) collected by SANITIZE.
    pub sanitize_blocks: u64,
    /// Card busy time of SANITIZE, from its start to its last NAND
    /// operation, ns.
    pub sanitize_ns: u64,
    /// Secure discards sent as plain discards (card without SANITIZE).
    pub secure_as_plain: u64,
    /// Idle-time GC steps the card ran (`[gc] idle_gc_after_ms`).
    pub idle_gc_steps: u64,
}

/// One entry of a packed read being executed: its LPN range `[first,
/// end)`, when its translation was known (ns) and the read-buffer stream it
/// continued.
pub(super) type PackedEntry = (u32, u32, Ns, Option<Stream>);

/// Index of `a` in [`Counters::erase_commands`].
pub(super) fn erase_index(a: EraseArg) -> usize {
    match a {
        EraseArg::Discard => 0,
        EraseArg::Trim => 1,
        EraseArg::Erase => 2,
    }
}

/// Sectors of `[sector, sector + sectors)` falling in `lpn`.
fn sectors_in(lpn: u32, sector: u64, sectors: u32) -> u64 {
    let a = (lpn as u64 * SECTORS_PER_PAGE).max(sector);
    let b = ((lpn as u64 + 1) * SECTORS_PER_PAGE).min(sector + sectors as u64);
    b.saturating_sub(a)
}

impl Emmc {
    /// Runs `cmd` (decoded as `seq`) from `t0` ns, when the host interface
    /// has it; returns when its last transfer (or its wait) ends, ns.
    pub(super) fn run_command(&mut self, t0: Ns, cmd: &DeviceCommand, seq: &Sequence) -> Ns {
        match cmd.op {
            Op::Read => self.read(t0, cmd, seq),
            Op::Write => self.write(t0, cmd, seq),
            Op::Discard => self.discard(t0, cmd, seq),
            Op::Flush => self.flush(t0, seq),
        }
    }

    /// Command phase on the bus, firmware, and the calibration knob.
    pub(super) fn front(&mut self, t0: Ns, seq: &Sequence, sector: u64) -> Ns {
        let mut t = self.hi.command_phase(t0, seq) + self.fw_ns;
        if self.reverse_penalty_ns > 0 && self.last_sector.is_some_and(|p| sector < p) {
            t += self.reverse_penalty_ns;
            self.c.reverse_penalties += 1;
        }
        self.last_sector = Some(sector);
        t
    }

    fn read(&mut self, t0: Ns, cmd: &DeviceCommand, seq: &Sequence) -> Ns {
        let (t0, hpi) = self.hpi_before_read(t0, seq);
        let end = self.read_data(t0, cmd, seq);
        self.hpi_after_read(hpi);
        end
    }

    /// HPI (legacy bus only) before a read issued at `t0`: when the card
    /// is busy with NAND work (buffer programs, GC, background operations)
    /// the host interrupts it first (`mmc_interrupt_hpi`) and the read's
    /// senses stop the dies at their next operation boundary. Returns when
    /// the read may start, ns, and whether it interrupts.
    fn hpi_before_read(&mut self, t0: Ns, seq: &Sequence) -> (Ns, bool) {
        let hpi = self.hpi_ns.is_some_and(|_| !seq.queued())
            && (0..self.geo.dies()).any(|d| self.tl.die_free_at(d) > t0);
        let t0 = match self.hpi_ns {
            Some(h) if hpi => {
                self.c.hpi_interrupts += 1;
                t0 + h
            }
            _ => t0,
        };
        if hpi {
            self.tl.begin_preempting();
        }
        (t0, hpi)
    }

    /// Ends an interrupting read ([`Emmc::hpi_before_read`]): the buffer
    /// programs it stopped finish later.
    fn hpi_after_read(&mut self, hpi: bool) {
        if hpi {
            for &(stop, by) in self.tl.end_preempting() {
                self.wbuf.delay_inflight(stop, by);
            }
        }
    }

    /// The read's foreground part (translation and data), then its
    /// read-buffer prefetch.
    fn read_data(&mut self, t0: Ns, cmd: &DeviceCommand, seq: &Sequence) -> Ns {
        let t = self.front(t0, seq, cmd.sector);
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors as u64);
        if first == end {
            return self.hi.xfer(t, self.hi.data_ns(cmd.sectors as u64));
        }
        let t_map = self.translate(t, first, end, false);
        let stream = self
            .rbuf
            .note_read(cmd.sector, cmd.sector + cmd.sectors as u64);
        let mut bus_t = t_map;
        for lpn in first..end {
            let ready = self.sense_lpn(lpn, t_map);
            let d = self.hi.data_ns(sectors_in(lpn, cmd.sector, cmd.sectors));
            bus_t = self.hi.xfer(bus_t.max(ready), d);
        }
        self.c.host_slots_read += (end - first) as u64;
        // Background prefetch does not interrupt anything.
        self.tl.preempting_off();
        if !self.ftl.owns_translation() {
            self.map.issue_prefetch(&mut self.tl);
        }
        self.read_ahead(t_map, first, end, stream);
        bus_t
    }

    /// When the data of host-read LPN `lpn`, whose translation is known at
    /// `t_map`, is ready in the controller, ns: at once from the write
    /// buffer, from the read buffer, or after a NAND sense and data-out
    /// (counted as a data NAND read); unmapped LPNs read at once.
    fn sense_lpn(&mut self, lpn: u32, t_map: Ns) -> Ns {
        if self.wbuf.holds(lpn) {
            self.c.write_buffer_read_hits += 1;
            return t_map;
        }
        let (Some(slot), t_map) = self.resolve(lpn, t_map) else {
            self.c.unmapped_reads += 1;
            return t_map;
        };
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
                let (_, e) = self.tl.read_page(t_map, die, self.geo.page_bytes(), upper);
                self.c.data_nand_reads += 1;
                self.rbuf.insert_absent(page, e);
                e
            }
        }
    }

    /// The read-buffer stream prefetch after a host read of LPNs `[first,
    /// end)` that continued `stream`, from `t_map` (the read's translation
    /// time).
    fn read_ahead(&mut self, t_map: Ns, first: u32, end: u32, stream: Option<Stream>) {
        let n = self.cfg.read_buffer.prefetch_kib / 4;
        match stream {
            _ if n == 0 => {}
            None => {}
            Some(Stream::Ascending) => {
                let to = end.saturating_add(n).min(self.ftl.user_lpns());
                self.prefetch(t_map, end..to);
            }
            Some(Stream::Descending) => {
                self.prefetch(t_map, (first.saturating_sub(n)..first).rev())
            }
        }
    }

    /// A packed read (eMMC 4.5 packed command, `[features] packed_read`)
    /// carrying the read commands `cmds` (their `seq` is CMD23 + CMD18):
    ///
    /// 1. The header: CMD23 (PACKED flag, block count 1) + CMD25, one
    ///    command phase and firmware cost, the 512-byte packed header on
    ///    the bus, and the CMD13 polls the host sends after a write (the
    ///    profile's `status_poll_after_write`) — costed as the packed write
    ///    costs its header.
    /// 2. Once the header is in, the firmware knows every entry's address
    ///    and starts them all at once: per entry, in header order, the
    ///    translation a normal read does (map cache, DFTL translation),
    ///    then per LPN the write buffer, the read buffer or a NAND sense on
    ///    its die plus the channel transfer. Entries on different dies
    ///    overlap their tR; entries on one die queue on its timeline.
    /// 3. CMD23 (total block count) + CMD18, then the bus streams the
    ///    entries in header order, each 4 KiB as soon as it is ready.
    /// 4. In the background, as after separate reads: the deferred
    ///    map-page prefetch, then each entry's read-buffer stream prefetch.
    ///
    /// Returns when the last entry's data has crossed the bus, ns.
    pub(super) fn read_packed(&mut self, t0: Ns, cmds: &[DeviceCommand], seq: &Sequence) -> Ns {
        let (t0, hpi) = self.hpi_before_read(t0, seq);
        let header = Sequence::classify(legacy_commands(
            Op::Write,
            self.cfg.bus.status_poll_after_write,
        ));
        let t = self.front(t0, &header, cmds[0].sector);
        let t = self.hi.xfer(t, self.hi.data_ns(PACKED_HEADER_BLOCKS));
        let t_hdr = t + self.hi.status_polls_ns(&header);
        let mut ready = std::mem::take(&mut self.packed_ready);
        let mut entries = std::mem::take(&mut self.packed_entries);
        ready.clear();
        entries.clear();
        for c in cmds {
            let (first, end) = self.lpn_range(c.sector, c.sectors as u64);
            if first == end {
                entries.push((first, end, t_hdr, None));
                continue;
            }
            let t_map = self.translate(t_hdr, first, end, false);
            let stream = self.rbuf.note_read(c.sector, c.sector + c.sectors as u64);
            for lpn in first..end {
                ready.push(self.sense_lpn(lpn, t_map));
            }
            self.c.host_slots_read += (end - first) as u64;
            entries.push((first, end, t_map, stream));
        }
        let mut bus_t = self.hi.command_phase(t_hdr, seq);
        let mut next = ready.iter();
        for (c, &(first, end, _, _)) in cmds.iter().zip(&entries) {
            if first == end {
                bus_t = self.hi.xfer(bus_t, self.hi.data_ns(c.sectors as u64));
                continue;
            }
            for lpn in first..end {
                let r = next.next().copied().unwrap_or(bus_t);
                let d = self.hi.data_ns(sectors_in(lpn, c.sector, c.sectors));
                bus_t = self.hi.xfer(bus_t.max(r), d);
            }
        }
        self.tl.preempting_off();
        if !self.ftl.owns_translation() {
            self.map.issue_prefetch(&mut self.tl);
        }
        for &(first, end, t_map, stream) in &entries {
            if first < end {
                self.read_ahead(t_map, first, end, stream);
            }
        }
        self.packed_ready = ready;
        self.packed_entries = entries;
        self.hpi_after_read(hpi);
        bus_t
    }

    /// Translation of LPNs `[first, end)` from `t`: through the map-page
    /// cache (`dirty` for writes and discards; a write or discard also
    /// issues the cache's forward prefetch at once), or free when the
    /// mapping scheme keeps its own translation state in SRAM
    /// ([`super::ftl::Mapping::owns_translation`]). Returns when the
    /// translation is known, ns.
    pub(super) fn translate(&mut self, t: Ns, first: u32, end: u32, dirty: bool) -> Ns {
        if self.ftl.owns_translation() {
            return t;
        }
        let t_map = self.map.lookup(&mut self.tl, t, first, end, dirty);
        if dirty {
            self.map.issue_prefetch(&mut self.tl);
        }
        t_map
    }

    /// Senses the NAND pages holding `lpns` (next in a stream's direction)
    /// into the read buffer, in the background (at most `pages - 1` new
    /// pages so the demand data stays). Stops at a map page that is not
    /// cached.
    fn prefetch(&mut self, t: Ns, lpns: impl Iterator<Item = u32>) {
        let mut budget = self.rbuf.capacity().saturating_sub(1);
        let page_bytes = self.geo.page_bytes();
        for lpn in lpns {
            if budget == 0 || !(self.ftl.owns_translation() || self.map.holds_entry_of(lpn)) {
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
            self.rbuf.insert_absent(page, e);
            self.rbuf.count_prefetch();
            self.c.prefetch_nand_reads += 1;
            budget -= 1;
        }
    }

    fn write(&mut self, t0: Ns, cmd: &DeviceCommand, seq: &Sequence) -> Ns {
        let t = self.front(t0, seq, cmd.sector);
        self.c.reliable_writes += cmd.fua as u64;
        self.write_body(t, cmd)
    }

    /// A packed write (eMMC 4.5 packed command, one CMD23 + CMD25 carrying
    /// `cmds`): one command phase and firmware cost, one 512-byte packed
    /// header block on the bus, then every entry's data. The card holds the
    /// whole pack before it must commit any of it, so on a card whose cache
    /// is off (or for FUA entries) the entries share page programs: four
    /// 4 KiB entries fill one 16 KiB page where four separate commands
    /// would each program a page of their own. Returns when the last
    /// entry's data is on the card (or, when the pack must be durable,
    /// programmed), ns.
    pub(super) fn write_packed(&mut self, t0: Ns, cmds: &[DeviceCommand], seq: &Sequence) -> Ns {
        let mut t = self.front(t0, seq, cmds[0].sector);
        t = self.hi.xfer(t, self.hi.data_ns(PACKED_HEADER_BLOCKS));
        for c in cmds {
            t = self.write_data(t, c);
        }
        let durable = cmds.iter().any(|c| self.must_commit(c));
        self.commit(t, durable)
    }

    /// A write's work after its command phase, from `t` ns.
    fn write_body(&mut self, t: Ns, cmd: &DeviceCommand) -> Ns {
        let bus_t = self.write_data(t, cmd);
        self.commit(bus_t, self.must_commit(cmd))
    }

    /// Whether `cmd` completes only once programmed: FUA (reliable write)
    /// on a volatile cache (unless `[power_loss] fua_honoured = false`),
    /// any write with the cache turned off
    /// (CACHE_CTRL = 0), or any write on firmware that acknowledges writes
    /// once programmed (`[write_buffer] write_ack = "program"`).
    pub(super) fn must_commit(&self, cmd: &DeviceCommand) -> bool {
        let wb = &self.cfg.write_buffer;
        let fua = cmd.fua && self.cfg.power_loss.fua_honoured;
        (fua && wb.volatile) || !wb.enabled || wb.write_ack == WriteAck::Program
    }

    /// Moves a write's data over the bus into the write buffer from `t`
    /// (programming full stripes as they fill); returns when the last
    /// sector is on the card, ns.
    fn write_data(&mut self, t: Ns, cmd: &DeviceCommand) -> Ns {
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors as u64);
        if first == end {
            return self.hi.xfer(t, self.hi.data_ns(cmd.sectors as u64));
        }
        let t_map = self.translate(t, first, end, true);
        let mut bus_t = t_map;
        for lpn in first..end {
            bus_t = self.write_lpn(bus_t, lpn, cmd);
        }
        bus_t
    }

    /// One 4 KiB piece of write `cmd` (LPN `lpn`) after the previous one
    /// ended at `bus_t`: waits for buffer space, moves the data over the
    /// bus, buffers it (programming a full stripe page); returns when its
    /// transfer ends, ns.
    pub(super) fn write_lpn(&mut self, bus_t: Ns, lpn: u32, cmd: &DeviceCommand) -> Ns {
        if self.starts_aligned_group(lpn, cmd) {
            self.program_pending(bus_t);
        }
        let bus_t = self.wbuf.wait_for_space(bus_t);
        let bus_t = self.hi.xfer(bus_t, self.lpn_data_ns(lpn, cmd));
        let v = self.oracle.write(lpn);
        self.c.host_slots_written += 1;
        if let Some(p) = self.power.as_deref_mut() {
            p.note_write(lpn, v, bus_t, cmd.fua);
        }
        if self.wbuf.push(lpn, v) {
            self.program_pending(bus_t);
        }
        bus_t
    }

    /// True when `lpn` begins an aligned group of logical pages (one stripe
    /// page's worth) that write `cmd` covers whole, on a mapping that keeps
    /// data in place ([`super::ftl::Mapping::in_place`]), while entries of
    /// other writes are pending: the pending partial stripe page is then
    /// programmed first (padded), so the sequential data fills stripe pages
    /// that match its in-place positions and can go to the sequential log
    /// block (a block-mapped FTL places a page's data at its logical offset,
    /// so the controller cannot put one aligned group across two pages)
    /// [est: the mechanism follows from in-place placement; no source
    /// describes the buffer of a 2010-2012 part].
    fn starts_aligned_group(&self, lpn: u32, cmd: &DeviceCommand) -> bool {
        let ss = self.geo.stripe_slots();
        if self.wbuf.pending().is_empty() || lpn % ss != 0 || !self.ftl.in_place() {
            return false;
        }
        let (_, end) = self.lpn_range(cmd.sector, cmd.sectors as u64);
        lpn + ss <= end
    }

    /// Bus time of the sectors of `cmd` that fall in `lpn`, ns.
    pub(super) fn lpn_data_ns(&self, lpn: u32, cmd: &DeviceCommand) -> Ns {
        self.hi.data_ns(sectors_in(lpn, cmd.sector, cmd.sectors))
    }

    /// When a write whose data arrived by `bus_t` completes, ns: then, or
    /// when everything buffered is programmed if it must be `durable`.
    pub(super) fn commit(&mut self, bus_t: Ns, durable: bool) -> Ns {
        self.write_data_end = bus_t;
        if !durable {
            return bus_t;
        }
        self.make_durable(bus_t)
    }

    /// Makes everything cached durable from `t` (a FLUSH_CACHE, a reliable
    /// write, a write with the cache off): the pending partial stripe page
    /// is programmed padded, or with the SLC log logged (only the entries
    /// not logged yet); then every program in flight must end. Returns
    /// when all of it is durable, ns.
    fn make_durable(&mut self, t: Ns) -> Ns {
        let mut end = t;
        match self.slc.as_mut() {
            Some(log) => {
                let n = self.wbuf.unlogged();
                if n > 0 {
                    end = log.log(&mut self.tl, t, n);
                    if let Some(p) = self.power.as_deref_mut() {
                        let pending = self.wbuf.pending();
                        let t_slc = us_to_ns(
                            self.cfg
                                .write_buffer
                                .slc_program_us(self.cfg.nand.t_prog_lower_us),
                        );
                        p.note_slc_log(&pending[pending.len() - n..], end, t_slc);
                    }
                    self.wbuf.mark_logged();
                }
            }
            None => {
                if !self.wbuf.pending().is_empty() {
                    self.program_pending(t);
                }
            }
        }
        self.wbuf.drain_time(end)
    }

    /// An erase-class command: the range's LPNs unmapped (DISCARD, TRIM
    /// and ERASE alike), then for ERASE the erase of the blocks left
    /// without valid data, then SANITIZE if the sequence ends with it.
    fn discard(&mut self, t0: Ns, cmd: &DeviceCommand, seq: &Sequence) -> Ns {
        let t = self.front(t0, seq, cmd.sector);
        if let Some(a) = seq.erase {
            self.c.erase_commands[erase_index(a)] += 1;
        }
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors as u64);
        let mut done = t;
        if first < end {
            done = self.translate(t, first, end, true);
            for lpn in first..end {
                self.wbuf.discard(lpn);
                self.ops.clear();
                self.ftl.discard(lpn, &mut self.ops);
                self.oracle.trim(lpn);
                done = self.apply_serial(done);
            }
        }
        if seq.erase == Some(EraseArg::Erase) {
            self.ops.clear();
            let n = self.ftl.erase_unmapped(&mut self.ops).unwrap_or_else(|| {
                panic!("mmcsim device: simulator bug: ERASE on a mapping without it (profile validation should have refused)")
            });
            self.c.erase_blocks_erased += n as u64;
            done = self.apply_parallel(done);
        }
        if seq.sanitize {
            self.c.sanitize_commands += 1;
            let start = done + self.fw_ns;
            self.ops.clear();
            let n = self.ftl.sanitize(&mut self.ops).unwrap_or_else(|| {
                panic!("mmcsim device: simulator bug: SANITIZE on a mapping without it (profile validation should have refused)")
            });
            self.c.sanitize_blocks += n as u64;
            done = self.apply_parallel(start);
            self.c.sanitize_ns += done - start;
        }
        done
    }

    /// Times `self.ops` all issued at `t` (each die runs its own in
    /// order, dies in parallel: background programs, GC, erases); returns
    /// when the last ends, ns.
    fn apply_parallel(&mut self, t: Ns) -> Ns {
        self.power_batch();
        let mut end = t;
        let ppb = self.geo.pages_per_block;
        for op in &self.ops {
            let e = self.tl.apply(t, op);
            if let Some(p) = self.power.as_deref_mut() {
                p.note(op, e, self.ftl.as_ref());
            }
            end = end.max(e);
            if let NandOp::Erase { blk, .. } = *op {
                self.rbuf.invalidate_range(blk * ppb, ppb);
            }
        }
        end
    }

    /// Before timing `self.ops`: the power-loss record takes the
    /// translation changes of the FTL call that issued them.
    fn power_batch(&mut self) {
        if let Some(p) = self.power.as_deref_mut() {
            p.begin_batch(self.ftl.as_mut());
        }
    }

    /// The slot of `lpn` for a host read from `t` (the mapping scheme's own
    /// translation work, if any, timed first) and when it is known, ns.
    fn resolve(&mut self, lpn: u32, t: Ns) -> (Option<u32>, Ns) {
        if !self.ftl.owns_translation() {
            return (self.ftl.lookup(lpn), t);
        }
        self.ops.clear();
        let slot = self.ftl.translate(lpn, &mut self.ops);
        (slot, self.apply_serial(t))
    }

    /// Times `self.ops` one after another from `t` (each waits for the one
    /// before: translation work a command depends on); returns the end, ns.
    pub(super) fn apply_serial(&mut self, mut t: Ns) -> Ns {
        self.power_batch();
        let ppb = self.geo.pages_per_block;
        for op in &self.ops {
            t = self.tl.apply(t, op);
            if let Some(p) = self.power.as_deref_mut() {
                p.note(op, t, self.ftl.as_ref());
            }
            if let NandOp::Erase { blk, .. } = *op {
                self.rbuf.invalidate_range(blk * ppb, ppb);
            }
        }
        t
    }

    /// FLUSH_CACHE: with a volatile cache, the buffered data made durable,
    /// then (policy `program_dirty`) the dirty map pages programmed; the
    /// card is busy until both are. Its service time is recorded.
    fn flush(&mut self, t0: Ns, seq: &Sequence) -> Ns {
        self.c.flush_commands += 1;
        let t = self.hi.command_phase(t0, seq) + self.fw_ns;
        // A power-protected buffer, or a cache the host left off
        // (CACHE_CTRL): nothing volatile to make durable.
        // Firmware that does not honour FLUSH_CACHE acknowledges it at
        // once (`[power_loss] flush_honoured = false`).
        let wb = &self.cfg.write_buffer;
        let honoured = self.cfg.power_loss.flush_honoured;
        // X-FTL's commit (`[ftl] atomic_write`), when the transaction holds
        // pages: its mapping is made durable by the commit record (the
        // X-L2P table, `atomic_commit_map_pages` programs) instead of by
        // programming the dirty L2P pages, which stay in SRAM until evicted
        // (Kang et al., SIGMOD 2013: the L2P is updated from X-L2P after
        // commit) — the record replaces the plain part's map write at
        // FLUSH_CACHE, it is not added to it.
        let open_tx = self.c.host_slots_written > self.atomic_committed;
        let commit = self.cfg.ftl.atomic_write && open_tx;
        let mut checkpoint = false;
        let done = if wb.volatile && wb.enabled && honoured {
            let data = self.make_durable(t);
            match self.cfg.map_cache.on_flush {
                _ if commit => data,
                FlushMetadata::Keep => data,
                FlushMetadata::ProgramDirty => {
                    let (pages, end) = self.map.persist_dirty(&mut self.tl, data);
                    self.c.flush_metadata_pages += u64::from(pages);
                    checkpoint = true;
                    end
                }
            }
        } else {
            t
        };
        let done = if commit {
            self.atomic_committed = self.c.host_slots_written;
            checkpoint = true;
            let prog = crate::types::us_to_ns(self.cfg.nand.t_prog_lower_us);
            done + u64::from(self.cfg.ftl.atomic_commit_map_pages) * prog
        } else {
            done
        };
        if let Some(p) = self.power.as_deref_mut() {
            p.note_flush(t0, done, checkpoint);
        }
        self.flush_latency.record(done - t0);
        done
    }

    /// TRIM of one LPN: buffered data dropped, mapping removed.
    pub(super) fn trim_lpn(&mut self, lpn: u32) {
        self.wbuf.discard(lpn);
        self.ftl.trim(lpn);
        self.oracle.trim(lpn);
    }

    /// Programs the pending write-buffer entries (padding a partial stripe)
    /// starting at `t`, with any foreground GC first; returns the end.
    fn program_pending(&mut self, t: Ns) -> Ns {
        self.wbuf.take_pending(&mut self.stripe_tmp, Some(t));
        let p = self.write_stripe();
        let end = if p.reclaim_ops > 0 {
            self.apply_with_gc_pause(t, p)
        } else {
            self.apply_parallel(t)
        };
        self.wbuf.mark_inflight(&self.stripe_tmp, end);
        end
    }

    /// Times `self.ops` as [`Emmc::apply_parallel`] does, noting the
    /// foreground GC pause of `p`'s reclaim work: from when its die could
    /// start it (`t`, or later when the die is busy) to the end of the last
    /// reclaim operation — the time the stripe page's program waits for GC.
    fn apply_with_gc_pause(&mut self, t: Ns, p: Placement) -> Ns {
        let start = t.max(self.tl.die_free_at(p.die));
        self.power_batch();
        let mut gc_end = start;
        let mut end = t;
        let ppb = self.geo.pages_per_block;
        for (i, op) in self.ops.iter().enumerate() {
            let e = self.tl.apply(t, op);
            if let Some(pw) = self.power.as_deref_mut() {
                pw.note(op, e, self.ftl.as_ref());
            }
            if i < p.reclaim_ops {
                gc_end = gc_end.max(e);
            }
            end = end.max(e);
            if let NandOp::Erase { blk, .. } = *op {
                self.rbuf.invalidate_range(blk * ppb, ppb);
            }
        }
        self.gc_pause.record(gc_end - start);
        end
    }

    /// Hands the taken stripe page (`stripe_tmp`) to the FTL, its NAND work
    /// into `ops`, and notes it for the integrity check if that runs;
    /// returns where the FTL placed it and how much reclaim work came first.
    fn write_stripe(&mut self) -> Placement {
        self.ops.clear();
        let p = self.ftl.write(&self.stripe_tmp, &mut self.ops);
        if let Some(c) = self.integrity.as_deref_mut() {
            c.note_program(&self.stripe_tmp, &self.ops, &self.geo);
        }
        p
    }

    /// Idle-time GC inside the card (`[gc] idle_gc_after_ms`): when a
    /// command arrives at `t` after the card has been idle since `since`
    /// for longer than the profile's idle time, the card has collected in
    /// steps of `copy_budget_pages` from the end of that idle time, one
    /// step after another, until a step would start at or after `t` (the
    /// step in flight then completes: the command waits for it) or no die
    /// needs it: every die holds one stripe more than the foreground
    /// threshold (`start_below_free_blocks_per_die + planes_per_die` free
    /// blocks) [est: the card collects ahead only what foreground GC
    /// would soon need, so idle collection adds no copies of its own].
    pub(super) fn idle_collect(&mut self, since: Ns, t: Ns) {
        let (Some(after), Some(budget)) = (self.idle_gc_after, self.cfg.gc.copy_budget_pages)
        else {
            return;
        };
        let mut next = since + after;
        let target = self.cfg.gc.start_below_free_blocks_per_die + self.geo.planes;
        while next < t {
            self.ops.clear();
            if self
                .ftl
                .idle_collect(target, budget, &mut self.ops)
                .is_none()
            {
                break;
            }
            self.c.idle_gc_steps += 1;
            next = self.apply_serial(next);
        }
    }

    /// Untimed program of the pending entries (padding a partial stripe).
    pub(super) fn program_pending_untimed(&mut self) {
        self.wbuf.take_pending(&mut self.stripe_tmp, None);
        let _ = self.write_stripe();
        let ppb = self.geo.pages_per_block;
        for op in &self.ops {
            if let NandOp::Erase { blk, .. } = *op {
                self.rbuf.invalidate_range(blk * ppb, ppb);
            }
        }
    }

    /// Untimed host write of one LPN.
    pub(super) fn write_lpn_untimed(&mut self, lpn: u32) {
        let v = self.oracle.write(lpn);
        if self.wbuf.push(lpn, v) {
            self.program_pending_untimed();
        }
    }
}
