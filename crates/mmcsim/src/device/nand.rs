//! The NAND array: geometry and addressing, per-block program order and
//! erase counts, and the timing of NAND operations on die and channel
//! timelines — the last stage of the controller pipeline.
//!
//! Addressing: dies are numbered `channel * dies_per_channel + die`; a block
//! id is `(die * planes + plane) * blocks_per_plane + block`; a NAND page id
//! is `block_id * pages_per_block + page`; a *slot* (physical 4 KiB unit, the
//! FTL's "ppn") is `page_id * slots_per_page + offset`.
//!
//! Timing: one operation per die at a time (the die timeline), dies run in
//! parallel, data transfers are serialised per channel. A read holds the die
//! through sense (tR) and data-out; a program holds the channel for data-in
//! and the die for data-in + tPROG. A multi-plane operation on a die's
//! stripe (one block per plane, same page offset) costs one tR / tPROG.
//!
//! MLC page pairing: page `k` of a block is a *lower* (LSB, fast) page when
//! `k` is even and an *upper* (MSB, slow) page when `k` is odd, i.e. word
//! line `w` holds pages `2w` and `2w + 1`. (Real parts interleave pairs
//! across neighbouring word lines; the simple pairing keeps the same 1:1 mix
//! of fast and slow programs.)

use super::config::NandConfig;
use crate::types::{us_to_ns, Ns};
use std::collections::VecDeque;

/// Transfer sizes, in 4 KiB units from 0, whose channel time
/// [`NandTimelines`] keeps precomputed (every size a NAND operation of the
/// shipped profiles moves: a map page, a page, a stripe page, a deferred
/// map-page data-out); other sizes are computed when asked.
const XFER_TABLE_UNITS: usize = 65;

/// Channel transfer time of `bytes` at `mt_per_s` megatransfers (bytes)
/// per second, rounded to the nearest ns.
fn xfer_formula(mt_per_s: f64, bytes: u32) -> Ns {
    (bytes as f64 * 1000.0 / mt_per_s).round() as Ns
}

/// Array geometry, with the derived counts the FTL uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Channels.
    pub channels: u32,
    /// Dies per channel.
    pub dies_per_channel: u32,
    /// Planes per die.
    pub planes: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// 4 KiB slots per NAND page (`page_kib / 4`).
    pub slots_per_page: u32,
}

impl Geometry {
    /// Geometry of a NAND configuration.
    pub fn new(n: &NandConfig) -> Geometry {
        Geometry {
            channels: n.channels,
            dies_per_channel: n.dies_per_channel,
            planes: n.planes_per_die,
            blocks_per_plane: n.blocks_per_plane,
            pages_per_block: n.pages_per_block,
            slots_per_page: n.page_kib / 4,
        }
    }
    /// Total dies.
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }
    /// Total erase blocks.
    pub fn blocks(&self) -> u32 {
        self.dies() * self.planes * self.blocks_per_plane
    }
    /// Erase blocks per die.
    pub fn blocks_per_die(&self) -> u32 {
        self.planes * self.blocks_per_plane
    }
    /// 4 KiB slots per block.
    pub fn slots_per_block(&self) -> u32 {
        self.pages_per_block * self.slots_per_page
    }
    /// Total 4 KiB slots.
    pub fn slots(&self) -> u32 {
        self.blocks() * self.slots_per_block()
    }
    /// 4 KiB slots in one stripe page (one page on every plane of a die).
    pub fn stripe_slots(&self) -> u32 {
        self.planes * self.slots_per_page
    }
    /// NAND page size in bytes.
    pub fn page_bytes(&self) -> u32 {
        self.slots_per_page * 4096
    }
    /// Block id of `block` on `plane` of `die`.
    pub fn block_id(&self, die: u32, plane: u32, block: u32) -> u32 {
        (die * self.planes + plane) * self.blocks_per_plane + block
    }
    /// Die holding a block.
    pub fn block_die(&self, blk: u32) -> u32 {
        blk / (self.planes * self.blocks_per_plane)
    }
    /// Plane (within its die) holding a block.
    pub fn block_plane(&self, blk: u32) -> u32 {
        (blk / self.blocks_per_plane) % self.planes
    }
    /// Channel a die sits on.
    pub fn die_channel(&self, die: u32) -> u32 {
        die / self.dies_per_channel
    }
    /// Slot number of offset `s` in page `page` of block `blk`.
    pub fn slot(&self, blk: u32, page: u32, s: u32) -> u32 {
        (blk * self.pages_per_block + page) * self.slots_per_page + s
    }
    /// Block holding a slot.
    pub fn slot_block(&self, slot: u32) -> u32 {
        slot / self.slots_per_block()
    }
    /// Global NAND page id holding a slot.
    pub fn slot_page_id(&self, slot: u32) -> u32 {
        slot / self.slots_per_page
    }
    /// Page index within its block of a slot.
    pub fn slot_page(&self, slot: u32) -> u32 {
        (slot / self.slots_per_page) % self.pages_per_block
    }
    /// Die holding a slot.
    pub fn slot_die(&self, slot: u32) -> u32 {
        self.block_die(self.slot_block(slot))
    }
    /// True when page `page` of a block is an upper (slow) MLC page.
    pub fn is_upper_page(page: u32) -> bool {
        page % 2 == 1
    }
    /// The lower (LSB) page sharing a word line with upper (MSB) page
    /// `page`, `None` for a lower page: page `2w + 1` pairs with `2w`
    /// (the pairing in the module doc). An interrupted MSB program
    /// disturbs the cells its LSB page already holds.
    pub fn paired_lower_page(page: u32) -> Option<u32> {
        Geometry::is_upper_page(page).then(|| page - 1)
    }
}

/// Violation of a NAND rule: a simulator bug, never a user error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NandViolation {
    /// A page programmed out of order or twice without an erase.
    #[error(
        "block {blk}: program of page {page} but the next programmable page is {next} \
         (pages are programmed once per erase, in ascending order)"
    )]
    ProgramOrder {
        /// Block id.
        blk: u32,
        /// Page offset programmed.
        page: u32,
        /// The block's next programmable page.
        next: u32,
    },
}

/// Per-block NAND state: the next page that may be programmed and the erase
/// count. Enforces in-order, once-per-erase page programming.
#[derive(Clone, Debug)]
pub struct NandArray {
    geo: Geometry,
    next_page: Vec<u32>,
    erase_count: Vec<u32>,
}

impl NandArray {
    /// A fresh (all erased, never cycled) array.
    pub fn new(geo: Geometry) -> NandArray {
        let n = geo.blocks() as usize;
        NandArray {
            geo,
            next_page: vec![0; n],
            erase_count: vec![0; n],
        }
    }
    /// Records the program of `page` in `blk`; it must be the block's next
    /// unprogrammed page.
    pub fn program(&mut self, blk: u32, page: u32) -> Result<(), NandViolation> {
        let next = &mut self.next_page[blk as usize];
        if page != *next || page >= self.geo.pages_per_block {
            return Err(NandViolation::ProgramOrder {
                blk,
                page,
                next: *next,
            });
        }
        *next += 1;
        Ok(())
    }
    /// Erases a block: all pages programmable again, erase count + 1.
    pub fn erase(&mut self, blk: u32) {
        self.next_page[blk as usize] = 0;
        self.erase_count[blk as usize] += 1;
    }
    /// Pages of `blk` programmed since its last erase.
    pub fn programmed_pages(&self, blk: u32) -> u32 {
        self.next_page[blk as usize]
    }
    /// Erase count of `blk`.
    pub fn erase_count(&self, blk: u32) -> u32 {
        self.erase_count[blk as usize]
    }
    /// Erase counts of all blocks.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    /// Per block: pages programmed since the last erase, and the erase
    /// count (saved device state).
    pub(crate) fn state_mut(&mut self) -> (&mut [u32], &mut [u32]) {
        (&mut self.next_page, &mut self.erase_count)
    }
}

/// A NAND operation emitted by the FTL, timed by [`NandTimelines`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NandOp {
    /// Sense one page (or a multi-plane stripe) and transfer `bytes` out.
    Read {
        /// Die.
        die: u32,
        /// Bytes transferred to the controller.
        bytes: u32,
        /// Upper (slow to sense) MLC page.
        upper: bool,
    },
    /// Transfer `bytes` in and program one stripe page.
    Program {
        /// Die.
        die: u32,
        /// Bytes transferred to the die.
        bytes: u32,
        /// Upper (slow) MLC page.
        upper: bool,
        /// Block id of the stripe's first plane (the other planes' blocks
        /// follow at `blocks_per_plane` apart): where the data lands, for
        /// the power-loss model (module `power_loss`).
        blk: u32,
        /// Page offset in the block.
        page: u32,
    },
    /// Erase one block.
    Erase {
        /// Die.
        die: u32,
        /// Block id (so caches of its pages can be dropped).
        blk: u32,
        /// Part of a multi-plane erase whose first block already paid tBERS.
        multi_plane: bool,
    },
}

/// "Next free at" timelines of every die, reservation lists of every
/// channel, with NAND timing.
///
/// A channel is busy only while it moves data; a transfer takes the earliest
/// gap that fits at or after the moment its die can transfer, so transfers
/// of one die interleave with the (long) array operations of another even
/// when the other die's work was booked first — e.g. two dies collecting
/// garbage at once run in parallel instead of one after the other.
#[derive(Clone, Debug)]
pub struct NandTimelines {
    dies_per_channel: u32,
    t_r: Ns,
    t_r_upper: Ns,
    t_prog_lower: Ns,
    t_prog_upper: Ns,
    t_bers: Ns,
    mt_per_s: f64,
    /// `xfer_formula(mt_per_s, k * 4096)` for `k` below [`XFER_TABLE_UNITS`].
    xfer_table: [Ns; XFER_TABLE_UNITS],
    die_free: Vec<Ns>,
    /// Per channel: transfer reservations `(start, end)`, sorted, disjoint.
    chan: Vec<Vec<(Ns, Ns)>>,
    die_busy: Vec<Ns>,
    /// Per die: end times of the operations booked on it that may still
    /// be running (ascending; the last is `die_free`) — the points where
    /// an HPI can stop the die's work.
    bounds: Vec<VecDeque<Ns>>,
    /// Whether reads may interrupt booked work (HPI); when not, `bounds`
    /// stays empty.
    interruptible: bool,
    /// Per die: end of the last read inserted by [`NandTimelines::preempt_read_page`].
    preempt_end: Vec<Ns>,
    /// While true (an HPI read runs), every read interrupts the die's
    /// booked work ([`NandTimelines::preempt_read_page`]).
    preempting: bool,
    /// Interruptions of the running HPI read: `(stop, die_time)`.
    pauses: Vec<(Ns, Ns)>,
}

impl NandTimelines {
    /// Idle timelines for a configuration.
    pub fn new(n: &NandConfig) -> NandTimelines {
        let dies = (n.channels * n.dies_per_channel) as usize;
        NandTimelines {
            dies_per_channel: n.dies_per_channel,
            t_r: us_to_ns(n.t_r_us),
            t_r_upper: us_to_ns(n.t_r_upper_us.unwrap_or(n.t_r_us)),
            t_prog_lower: us_to_ns(n.t_prog_lower_us),
            t_prog_upper: us_to_ns(n.t_prog_upper_us),
            t_bers: us_to_ns(n.t_bers_us),
            mt_per_s: n.channel_mt_per_s,
            xfer_table: std::array::from_fn(|k| xfer_formula(n.channel_mt_per_s, k as u32 * 4096)),
            die_free: vec![0; dies],
            chan: vec![Vec::new(); n.channels as usize],
            die_busy: vec![0; dies],
            bounds: vec![VecDeque::new(); dies],
            interruptible: true,
            preempt_end: vec![0; dies],
            preempting: false,
            pauses: Vec::new(),
        }
    }
    /// Channel transfer time of `bytes`, in ns.
    pub fn xfer_ns(&self, bytes: u32) -> Ns {
        let k = (bytes / 4096) as usize;
        if bytes % 4096 == 0 && k < XFER_TABLE_UNITS {
            self.xfer_table[k]
        } else {
            xfer_formula(self.mt_per_s, bytes)
        }
    }
    /// Sets whether reads may interrupt the dies' booked work (a card
    /// with HPI, [`NandTimelines::begin_preempting`]); on by default. Off,
    /// the operation boundaries an interruption needs are not kept.
    pub fn set_interruptible(&mut self, on: bool) {
        self.interruptible = on;
        if !on {
            self.bounds.iter_mut().for_each(|b| b.clear());
        }
    }
    /// Makes every die and channel idle at time 0.
    pub fn reset(&mut self) {
        self.die_free.iter_mut().for_each(|t| *t = 0);
        self.chan.iter_mut().for_each(|c| c.clear());
        self.bounds.iter_mut().for_each(|b| b.clear());
        self.preempt_end.iter_mut().for_each(|t| *t = 0);
    }
    /// Books the end of an operation on die `d` (the new `die_free`).
    fn book(&mut self, d: usize, end: Ns) {
        self.die_free[d] = end;
        if self.interruptible {
            self.bounds[d].push_back(end);
        }
    }
    /// Forgets channel reservations that ended by `t` (no later operation
    /// is issued before `t`).
    pub fn forget_before(&mut self, t: Ns) {
        for c in &mut self.chan {
            if c.first().is_some_and(|r| r.1 <= t) {
                let keep = c.partition_point(|r| r.1 <= t);
                c.drain(..keep);
            }
        }
        if !self.interruptible {
            return;
        }
        for b in &mut self.bounds {
            while b.front().is_some_and(|&e| e <= t) {
                b.pop_front();
            }
        }
    }
    /// Reserves channel `c` for `dur` ns in the earliest gap at or after
    /// `ready`; returns the start.
    #[inline(always)]
    fn reserve_channel(&mut self, c: usize, ready: Ns, dur: Ns) -> Ns {
        let r = &mut self.chan[c];
        if r.last().is_none_or(|x| x.1 <= ready) {
            // After every reservation (the usual case): where the search
            // of `reserve_channel_gap` ends too.
            r.push((ready, ready + dur));
            return ready;
        }
        Self::reserve_channel_gap(r, ready, dur)
    }
    /// [`NandTimelines::reserve_channel`] in the reservations `r` of a
    /// channel, some of which end after `ready`.
    #[inline(never)]
    fn reserve_channel_gap(r: &mut Vec<(Ns, Ns)>, ready: Ns, dur: Ns) -> Ns {
        let mut s = ready;
        let mut i = r.partition_point(|x| x.1 <= s);
        while i < r.len() && r[i].0 < s + dur {
            s = s.max(r[i].1);
            i += 1;
        }
        r.insert(i, (s, s + dur));
        s
    }
    /// Clears the busy-time counters.
    pub fn reset_busy(&mut self) {
        self.die_busy.iter_mut().for_each(|t| *t = 0);
    }
    /// Busy time of each die since the last reset, in ns.
    pub fn die_busy(&self) -> &[Ns] {
        &self.die_busy
    }
    /// Time die `die` becomes free, in ns.
    pub fn die_free_at(&self, die: u32) -> Ns {
        self.die_free[die as usize]
    }

    /// Reserves a sense of a lower page (or a mapping-table page) of `die`
    /// no earlier than `t`, then the channel for `bytes` of data-out.
    /// Returns `(sense_end, transfer_end)`.
    pub fn read(&mut self, t: Ns, die: u32, bytes: u32) -> (Ns, Ns) {
        self.read_page(t, die, bytes, false)
    }

    /// Like [`NandTimelines::read`], for a lower (`upper` = false) or an
    /// upper (MSB, slower to sense) MLC page.
    /// While an HPI read runs ([`NandTimelines::begin_preempting`]) the
    /// read interrupts the die's booked work instead.
    pub fn read_page(&mut self, t: Ns, die: u32, bytes: u32, upper: bool) -> (Ns, Ns) {
        if self.preempting {
            let (s, e, pause) = self.preempt_read_page(t, die, bytes, upper);
            self.pauses.extend(pause);
            return (s, e);
        }
        self.book_read(t, die, bytes, upper)
    }

    /// Starts an HPI read: until [`NandTimelines::end_preempting`], reads
    /// interrupt the dies' booked work.
    pub fn begin_preempting(&mut self) {
        assert!(
            self.interruptible,
            "mmcsim device: simulator bug: HPI read on timelines set uninterruptible"
        );
        self.preempting = true;
        self.pauses.clear();
    }

    /// Stops interrupting (the HPI read's background part follows) but
    /// keeps its interruptions for [`NandTimelines::end_preempting`].
    pub fn preempting_off(&mut self) {
        self.preempting = false;
    }

    /// Ends an HPI read; returns its interruptions `(stop, die_time)`.
    pub fn end_preempting(&mut self) -> &[(Ns, Ns)] {
        self.preempting = false;
        &self.pauses
    }

    /// A read booked after the die's work.
    fn book_read(&mut self, t: Ns, die: u32, bytes: u32, upper: bool) -> (Ns, Ns) {
        let d = die as usize;
        let c = (die / self.dies_per_channel) as usize;
        let start = t.max(self.die_free[d]);
        let sensed = start + if upper { self.t_r_upper } else { self.t_r };
        let dur = self.xfer_ns(bytes);
        let x0 = self.reserve_channel(c, sensed, dur);
        let x1 = x0 + dur;
        self.book(d, x1);
        self.die_busy[d] += x1 - start;
        (sensed, x1)
    }

    /// Transfers `bytes` more out of a die whose page register already holds
    /// them (the rest of a multi-page sense), no earlier than `t`.
    pub fn data_out(&mut self, t: Ns, die: u32, bytes: u32) -> Ns {
        let d = die as usize;
        let c = (die / self.dies_per_channel) as usize;
        let dur = self.xfer_ns(bytes);
        let x0 = self.reserve_channel(c, t.max(self.die_free[d]), dur);
        let x1 = x0 + dur;
        self.book(d, x1);
        self.die_busy[d] += x1 - x0;
        x1
    }

    /// Reserves data-in of `bytes` and a program; returns the program's end.
    pub fn program(&mut self, t: Ns, die: u32, bytes: u32, upper: bool) -> Ns {
        let t_prog = if upper {
            self.t_prog_upper
        } else {
            self.t_prog_lower
        };
        self.program_for(t, die, bytes, t_prog)
    }

    /// Reserves data-in of `bytes` and a program lasting `t_prog` ns (an
    /// SLC-mode program); returns the program's end.
    pub fn program_for(&mut self, t: Ns, die: u32, bytes: u32, t_prog: Ns) -> Ns {
        let d = die as usize;
        let c = (die / self.dies_per_channel) as usize;
        let dur = self.xfer_ns(bytes);
        let x0 = self.reserve_channel(c, t.max(self.die_free[d]), dur);
        let x1 = x0 + dur;
        let end = x1 + t_prog;
        self.book(d, end);
        self.die_busy[d] += end - x0;
        end
    }

    /// Reserves a block erase; returns its end.
    pub fn erase(&mut self, t: Ns, die: u32) -> Ns {
        let d = die as usize;
        let start = t.max(self.die_free[d]);
        let end = start + self.t_bers;
        self.book(d, end);
        self.die_busy[d] += end - start;
        end
    }

    /// A read that interrupts the die's booked work (HPI): when die `die`
    /// is busy at `t`, the sense starts at the end of the operation in
    /// flight (or of the read inserted before it) instead of after all the
    /// booked work, and every operation booked after that point is delayed
    /// by the read's die time, so the interrupted work loses no time and is
    /// not counted twice. Returns `(sense_end, transfer_end, pause)` with
    /// `pause` = `Some((stop, die_time))` when work was interrupted.
    ///
    /// Simplification: the channel reservations of the delayed programs
    /// keep their booked times (the read's data-out takes a free channel
    /// gap), so channel occupancy is conserved but not re-ordered.
    pub fn preempt_read_page(
        &mut self,
        t: Ns,
        die: u32,
        bytes: u32,
        upper: bool,
    ) -> (Ns, Ns, Option<(Ns, Ns)>) {
        debug_assert!(self.interruptible, "HPI read on uninterruptible timelines");
        let d = die as usize;
        let from = t.max(self.preempt_end[d]);
        if self.die_free[d] <= from {
            let (s, e) = self.book_read(t, die, bytes, upper);
            return (s, e, None);
        }
        let b = &self.bounds[d];
        let i = b.partition_point(|&e| e < from);
        let stop = b.get(i).copied().unwrap_or(self.die_free[d]);
        let c = (die / self.dies_per_channel) as usize;
        let sensed = stop + if upper { self.t_r_upper } else { self.t_r };
        let dur = self.xfer_ns(bytes);
        let x0 = self.reserve_channel(c, sensed, dur);
        let x1 = x0 + dur;
        let occ = x1 - stop;
        let b = &mut self.bounds[d];
        for e in b.iter_mut().skip(i + 1) {
            *e += occ;
        }
        b.insert(i + 1, x1);
        self.die_free[d] += occ;
        self.die_busy[d] += occ;
        self.preempt_end[d] = x1;
        (sensed, x1, Some((stop, occ)))
    }

    /// Times one FTL operation issued at `t`; returns its end.
    pub fn apply(&mut self, t: Ns, op: &NandOp) -> Ns {
        match *op {
            NandOp::Read { die, bytes, upper } => self.read_page(t, die, bytes, upper).1,
            NandOp::Program {
                die, bytes, upper, ..
            } => self.program(t, die, bytes, upper),
            NandOp::Erase {
                multi_plane: true, ..
            } => t,
            NandOp::Erase { die, .. } => self.erase(t, die),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> NandConfig {
        NandConfig {
            channels: 1,
            dies_per_channel: 2,
            planes_per_die: 2,
            blocks_per_plane: 4,
            pages_per_block: 8,
            page_kib: 8,
            t_r_us: 75.0,
            t_r_upper_us: None,
            t_prog_lower_us: 850.0,
            t_prog_upper_us: 2300.0,
            t_bers_us: 3500.0,
            channel_mt_per_s: 200.0,
        }
    }

    #[test]
    fn upper_mlc_pages_take_longer_to_sense_than_lower_ones() {
        let mut c = cfg();
        c.t_r_upper_us = Some(100.0);
        let mut tl = NandTimelines::new(&c);
        let (lower, _) = tl.read_page(0, 0, 8192, false);
        let (upper, _) = tl.read_page(0, 1, 8192, true);
        assert_eq!(lower, us_to_ns(75.0));
        assert_eq!(upper, us_to_ns(100.0));
        // Without t_r_upper_us both kinds sense in t_r_us.
        let mut same = NandTimelines::new(&cfg());
        assert_eq!(same.read_page(0, 1, 8192, true).0, us_to_ns(75.0));
        // A GC read of an upper page goes through the same timing.
        let mut tl = NandTimelines::new(&c);
        let end = tl.apply(
            0,
            &NandOp::Read {
                die: 0,
                bytes: 0,
                upper: true,
            },
        );
        assert_eq!(end, us_to_ns(100.0));
    }

    #[test]
    fn precomputed_transfer_times_are_the_formula() {
        for mt in [200.0, 252.8, 166.0, 400.0, 333.3] {
            let mut c = cfg();
            c.channel_mt_per_s = mt;
            let tl = NandTimelines::new(&c);
            for bytes in (0..XFER_TABLE_UNITS as u32 + 4)
                .map(|k| k * 4096)
                .chain([1, 512, 4095, 4097, 6144])
            {
                assert_eq!(
                    tl.xfer_ns(bytes),
                    xfer_formula(mt, bytes),
                    "{mt} MT/s, {bytes} B"
                );
            }
        }
    }

    #[test]
    fn pages_must_be_programmed_in_order_once_per_erase() {
        let geo = Geometry::new(&cfg());
        let mut a = NandArray::new(geo);
        assert!(a.program(3, 0).is_ok());
        assert!(a.program(3, 2).is_err(), "skipping a page is a violation");
        assert!(
            a.program(3, 0).is_err(),
            "reprogramming a page is a violation"
        );
        assert!(a.program(3, 1).is_ok());
        a.erase(3);
        assert_eq!(a.erase_count(3), 1);
        assert!(
            a.program(3, 0).is_ok(),
            "after an erase page 0 is programmable"
        );
    }

    #[test]
    fn addressing_round_trips() {
        let geo = Geometry::new(&cfg());
        let blk = geo.block_id(1, 1, 3);
        assert_eq!(geo.block_die(blk), 1);
        assert_eq!(geo.block_plane(blk), 1);
        let slot = geo.slot(blk, 5, 1);
        assert_eq!(geo.slot_block(slot), blk);
        assert_eq!(geo.slot_page(slot), 5);
        assert_eq!(geo.slot_die(slot), 1);
        assert_eq!(geo.stripe_slots(), 4);
    }

    #[test]
    fn dies_overlap_but_share_the_channel() {
        let mut tl = NandTimelines::new(&cfg());
        let x = tl.xfer_ns(8192);
        assert_eq!(x, 40_960);
        let (_, a) = tl.read(0, 0, 8192);
        let (_, b) = tl.read(0, 1, 8192);
        assert_eq!(a, 75_000 + x);
        // Both senses overlap; the second transfer waits for the channel.
        assert_eq!(b, 75_000 + 2 * x);
        // The same die serialises.
        let (_, c) = tl.read(0, 0, 8192);
        assert_eq!(c, a + 75_000 + x);
        let p = tl.program(0, 1, 16384, true);
        assert!(p >= b + tl.xfer_ns(16384) + 2_300_000);
    }

    #[test]
    fn a_die_uses_channel_gaps_left_by_work_booked_ahead_on_another_die() {
        let mut tl = NandTimelines::new(&cfg());
        let x = tl.xfer_ns(16384);
        // Die 0: a foreground-GC-like session booked at t = 0, 100 programs
        // (≈ 166 ms of die time) with the channel idle during each tPROG.
        let mut e0 = 0;
        for k in 0..100 {
            e0 = tl.program(0, 0, 16384, k % 2 == 1);
        }
        assert!(e0 > 150_000_000);
        // Die 1's work issued afterwards at t = 0 interleaves its transfers
        // into those gaps: it runs in parallel, not after die 0's session.
        let p = tl.program(0, 1, 16384, false);
        assert!(p <= 2 * x + 850_000, "die 1 program ends at {p} ns");
        let (_, r) = tl.read(p, 1, 16384);
        assert!(r <= p + 75_000 + 2 * x, "die 1 read ends at {r} ns");
        let mut e1 = r;
        for k in 0..100 {
            e1 = tl.program(0, 1, 16384, k % 2 == 1);
        }
        assert!(
            e1 < e0 + 2_000_000,
            "die 1 session ends at {e1}, die 0 at {e0}"
        );
        // Channel reservations never overlap.
        let c = &tl.chan[0];
        assert_eq!(c.len(), 202);
        assert!(c.windows(2).all(|w| w[0].1 <= w[1].0));
        assert!(c.iter().all(|r| r.1 - r.0 == x));
        tl.forget_before(e0);
        assert!(tl.chan[0].is_empty());
    }
}
