//! The array at the instant of a power cut, the recovered mapping, and the
//! classification of every logical page against the integrity oracle and
//! the acknowledgements the host received.

use super::super::config::DeviceConfig;
use super::super::ftl::UNMAPPED;
use super::super::nand::Geometry;
use super::config::{PairedPages, RelWrGranularity, TornProgram};
use super::recovery::{self, slot_of};
use super::tracker::{Logged, Tracker, WriteRec, ERASED, PADDING};
use crate::types::{us_to_ns, Ns, SECTORS_PER_PAGE};
use serde::Serialize;

/// `(lpn, version)` records (per slot, or a list).
type Records = Vec<(u32, u32)>;

/// Slot marker: torn by an interrupted program.
const TORN: u32 = u32::MAX - 2;
/// Slot marker: a lower page corrupted by its interrupted upper page.
const PAIRED: u32 = u32::MAX - 3;
/// Slot marker: in a block whose erase was interrupted.
const BAD_ERASE: u32 = u32::MAX - 4;

/// A durability acknowledgement the host received: at `at` ns a call
/// (fsync, fdatasync, an O_SYNC write, sync) returned, having written
/// sectors `[sector, sector + sectors)`: the application now counts on
/// that data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurableAck {
    /// When the call returned, ns.
    pub at: Ns,
    /// First 512-byte sector written.
    pub sector: u64,
    /// 512-byte sectors written.
    pub sectors: u64,
}

/// What a logical page reads after the cut and the recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readback {
    /// Its data at this version (0 = never written: reads as unmapped).
    Version(u32),
    /// Uncorrectable: the page it maps to was torn by an interrupted
    /// program, or lies in a block whose erase was interrupted.
    Torn,
    /// Uncorrectable: its lower (LSB) page was corrupted by the
    /// interrupted program of the upper (MSB) page of its word line.
    PairedVictim,
    /// Another logical page's data (or padding): a flying write.
    Flying,
}

/// Per-cut numbers of the crash report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CutOutcome {
    /// The instant of the cut, ns of simulated time.
    pub at_ns: Ns,
    /// A NAND program of an upper (MSB) page was interrupted.
    pub msb_program_cut: bool,
    /// NAND programs interrupted (stripe pages).
    pub programs_interrupted: u32,
    /// Erases interrupted (blocks left unreadable until erased again).
    pub erases_interrupted: u32,
    /// 4 KiB logical pages written since the start of the run, or
    /// otherwise affected, that read back their newest version.
    pub newest_pages: u64,
    /// Logical pages reading an older version than the newest the card
    /// received (the cache's content lost, programs that never ran).
    pub older_pages: u64,
    /// Logical pages reading uncorrectable data (torn programs,
    /// interrupted erases).
    pub torn_pages: u64,
    /// Logical pages lost to paired-page corruption.
    pub paired_page_victims: u64,
    /// Logical pages reading another page's data.
    pub flying_writes: u64,
    /// Logical pages whose data the host was told is durable (an fsync or
    /// O_SYNC write returned, a FUA write or a FLUSH_CACHE completed).
    pub acked_pages: u64,
    /// Of those, pages that read back anything older than the
    /// acknowledged version: acknowledged writes lost.
    pub acked_writes_lost: u64,
    /// Of the acknowledged writes lost, those lost to paired pages.
    pub acked_lost_to_paired_pages: u64,
    /// Stripe pages the FTL's mount scanned.
    pub scanned_pages: u64,
    /// The FTL's mount time (map read + scan), ms.
    pub recovery_ms: f64,
}

/// The card after a cut and its recovery: the numbers, and what each
/// logical page reads (for the host's own recovery checks).
#[derive(Clone, Debug)]
pub struct CutState {
    /// The numbers.
    pub outcome: CutOutcome,
    readback: Vec<Readback>,
    /// Host writes as the card received them, ordered by LPN, then
    /// arrival.
    writes: Vec<WriteRec>,
}

impl CutState {
    /// What `lpn` reads after recovery.
    pub fn readback(&self, lpn: u32) -> Readback {
        self.readback
            .get(lpn as usize)
            .copied()
            .unwrap_or(Readback::Version(0))
    }

    /// The newest version of `lpn` whose data had reached the card by `t`
    /// ns (0 = none written since the start of the run).
    pub fn version_arrived_by(&self, lpn: u32, t: Ns) -> u32 {
        let w = self.writes_of(lpn);
        w.iter()
            .rev()
            .find(|r| r.arrived <= t)
            .map_or(0, |r| r.version)
    }

    /// The newest version of `lpn` whose write command had completed by `t`
    /// ns (0 = none since the start of the run).
    pub fn version_done_by(&self, lpn: u32, t: Ns) -> u32 {
        self.writes_of(lpn)
            .iter()
            .filter(|r| r.done <= t)
            .map(|r| r.version)
            .max()
            .unwrap_or(0)
    }

    /// True when `lpn` reads back a version at least `v` (or `v` is 0).
    pub fn holds_at_least(&self, lpn: u32, v: u32) -> bool {
        v == 0 || matches!(self.readback(lpn), Readback::Version(x) if x >= v)
    }

    fn writes_of(&self, lpn: u32) -> &[WriteRec] {
        let a = self.writes.partition_point(|r| r.lpn < lpn);
        let b = self.writes.partition_point(|r| r.lpn <= lpn);
        &self.writes[a..b]
    }
}

/// The cut at `t` ns: replays the record, recovers, classifies.
pub(super) fn cut(tr: &Tracker, cfg: &DeviceConfig, t: Ns, acks: &[DurableAck]) -> CutState {
    let pl = &cfg.power_loss;
    let te = t + us_to_ns(pl.capacitor_us);
    let mut out = CutOutcome {
        at_ns: t,
        ..CutOutcome::default()
    };
    let (phys, logged) = replay(tr, cfg, te, &mut out);
    let rebuilt = recovery::rebuild(tr, &phys, te, cfg.ftl.mapping);
    out.scanned_pages = rebuilt.scanned_pages;
    let n = &cfg.nand;
    let dies = n.channels * n.dies_per_channel;
    let xfer = (4096.0 * 1000.0 / n.channel_mt_per_s).round() as Ns;
    out.recovery_ms = recovery::mount_ms(&rebuilt, us_to_ns(n.t_r_us), xfer, dies);
    let mut writes: Vec<WriteRec> = tr
        .writes
        .iter()
        .filter(|w| w.arrived <= t)
        .copied()
        .collect();
    let mut readback = read_back(&rebuilt.l2p, &phys);
    // What survives besides the array: the SLC log's durable commits, a
    // protected (or power-protected) cache's content.
    let cache_kept = !cfg.write_buffer.volatile || !pl.cache_lost;
    let kept = logged.iter().copied().chain(
        writes
            .iter()
            .filter(|_| cache_kept)
            .map(|w| (w.lpn, w.version)),
    );
    for (lpn, v) in kept {
        let r = &mut readback[lpn as usize];
        if !matches!(*r, Readback::Version(x) if x >= v) {
            *r = Readback::Version(v);
        }
    }
    reliable_writes(&writes, t, pl.reliable_write_granularity, &mut readback);
    writes.sort_by_key(|w| (w.lpn, w.arrived));
    if cfg.ftl.atomic_write {
        discard_uncommitted(tr, &writes, t, &mut readback);
    }
    let expected = expected_at(tr, &writes);
    classify(&readback, &expected, &writes, &mut out);
    let acked = acked_versions(tr, &writes, t, acks);
    for (lpn, v) in acked {
        out.acked_pages += 1;
        match readback[lpn as usize] {
            Readback::Version(x) if x >= v => {}
            r => {
                out.acked_writes_lost += 1;
                out.acked_lost_to_paired_pages += u64::from(r == Readback::PairedVictim);
            }
        }
    }
    CutState {
        outcome: out,
        readback,
        writes,
    }
}

/// `[ftl] atomic_write` (X-FTL): the mount discards the pages of the
/// transaction open at the cut — every write that arrived after the last
/// FLUSH_CACHE (the commit command) completed by `t` was issued, except
/// FUA writes, which commit themselves — so each of its LPNs reads the
/// version committed before (kept valid until the commit). `writes` are
/// sorted by LPN, then arrival.
fn discard_uncommitted(tr: &Tracker, writes: &[WriteRec], t: Ns, rb: &mut [Readback]) {
    let committed_by = tr
        .flushes
        .iter()
        .filter(|f| f.1 <= t)
        .map(|f| f.0)
        .max()
        .unwrap_or(0);
    let mut i = 0;
    while i < writes.len() {
        let lpn = writes[i].lpn;
        let j = i + writes[i..].partition_point(|w| w.lpn == lpn);
        let of = &writes[i..j];
        let committed = |w: &&WriteRec| w.arrived <= committed_by || (w.fua && w.done <= t);
        if of.iter().any(|w| !committed(&w)) {
            let v = of
                .iter()
                .filter(committed)
                .map(|w| w.version)
                .max()
                .unwrap_or(tr.base_expected[lpn as usize]);
            // Older data (a commit the firmware did not honour) and a
            // paired-page victim stay as they are.
            match rb[lpn as usize] {
                Readback::Version(x) if x <= v => {}
                Readback::PairedVictim => {}
                _ => rb[lpn as usize] = Readback::Version(v),
            }
        }
        i = j;
    }
}

/// The array as it is at `te` ns (the end of the hold-up): per slot its
/// content or a damage marker; and the SLC-log records made durable.
fn replay(tr: &Tracker, cfg: &DeviceConfig, te: Ns, out: &mut CutOutcome) -> (Records, Records) {
    let pl = &cfg.power_loss;
    let g = tr.geo;
    let n = g.stripe_slots();
    let mut phys = tr.base.clone();
    let mut logged = Vec::new();
    for op in &tr.ops {
        match *op {
            Logged::Program {
                blk,
                page,
                start,
                end,
                first,
            } if start < te => {
                let contents = &tr.contents[first as usize..(first + n) as usize];
                let done = if end <= te {
                    n
                } else {
                    out.programs_interrupted += 1;
                    let upper = Geometry::is_upper_page(page);
                    out.msb_program_cut |= upper;
                    if let (Some(lower), PairedPages::WordLine) =
                        (Geometry::paired_lower_page(page), pl.paired_pages)
                    {
                        for i in 0..n {
                            let ls = slot_of(tr, blk, lower, i) as usize;
                            if phys[ls].0 < PADDING {
                                phys[ls] = (PAIRED, 0);
                            }
                        }
                    }
                    match pl.torn_program {
                        TornProgram::Unreadable => 0,
                        TornProgram::Shorn => {
                            let f = (te - start) as f64 / (end - start).max(1) as f64;
                            ((f * n as f64).floor() as u32).min(n)
                        }
                    }
                };
                for i in 0..n {
                    let s = slot_of(tr, blk, page, i) as usize;
                    phys[s] = if i < done {
                        contents[i as usize]
                    } else {
                        (TORN, 0)
                    };
                }
            }
            Logged::Erase { blk, start, end } if start < te => {
                let mark = if end <= te {
                    (ERASED, 0)
                } else {
                    out.erases_interrupted += 1;
                    (BAD_ERASE, 0)
                };
                let spb = g.slots_per_block();
                let first = (blk * spb) as usize;
                phys[first..first + spb as usize].fill(mark);
            }
            Logged::SlcLog {
                start,
                end,
                first,
                n: k,
            } if start < te => {
                if end <= te {
                    logged.extend_from_slice(&tr.contents[first as usize..(first + k) as usize]);
                } else {
                    out.programs_interrupted += 1;
                }
            }
            _ => {}
        }
    }
    (phys, logged)
}

/// What every LPN reads through the rebuilt map `l2p` on the array `phys`.
fn read_back(l2p: &[u32], phys: &[(u32, u32)]) -> Vec<Readback> {
    l2p.iter()
        .enumerate()
        .map(|(lpn, &slot)| {
            if slot == UNMAPPED {
                return Readback::Version(0);
            }
            match phys[slot as usize] {
                (l, v) if l as usize == lpn => Readback::Version(v),
                (ERASED, _) => Readback::Version(0),
                (TORN | BAD_ERASE, _) => Readback::Torn,
                (PAIRED, _) => Readback::PairedVictim,
                _ => Readback::Flying,
            }
        })
        .collect()
}

/// Reliable writes under way at the cut (`writes` arrived by `t`, not
/// completed): the card keeps their old data until the new is safe, so
/// none of their pages reads torn; with `transfer` granularity a write
/// not wholly new rolls back whole.
fn reliable_writes(writes: &[WriteRec], t: Ns, g: RelWrGranularity, rb: &mut [Readback]) {
    let open: Vec<&WriteRec> = writes.iter().filter(|w| w.fua && w.done > t).collect();
    for w in &open {
        let r = &mut rb[w.lpn as usize];
        if matches!(*r, Readback::Torn | Readback::PairedVictim) {
            // The old data, at a version below this write's.
            *r = Readback::Version(w.version - 1);
        }
    }
    if g == RelWrGranularity::Transfer {
        let mut i = 0;
        while i < open.len() {
            let cmd = open[i].cmd;
            let j = i + open[i..].iter().take_while(|w| w.cmd == cmd).count();
            let whole = open[i..j]
                .iter()
                .all(|w| matches!(rb[w.lpn as usize], Readback::Version(x) if x >= w.version));
            if !whole {
                for w in &open[i..j] {
                    if matches!(rb[w.lpn as usize], Readback::Version(x) if x >= w.version) {
                        rb[w.lpn as usize] = Readback::Version(w.version - 1);
                    }
                }
            }
            i = j;
        }
    }
}

/// Per LPN: the newest version the card had received by the cut (`writes`
/// arrived by then, sorted by LPN then arrival).
fn expected_at(tr: &Tracker, writes: &[WriteRec]) -> Vec<u32> {
    let mut e = tr.base_expected.clone();
    for w in writes {
        e[w.lpn as usize] = w.version;
    }
    e
}

/// Counts the classes: every LPN written since the start of the run, and
/// every other LPN that does not read its newest version.
fn classify(rb: &[Readback], expected: &[u32], writes: &[WriteRec], out: &mut CutOutcome) {
    let mut written = vec![false; rb.len()];
    for w in writes {
        written[w.lpn as usize] = true;
    }
    for (lpn, (&r, &e)) in rb.iter().zip(expected).enumerate() {
        if e == 0 {
            continue;
        }
        match r {
            Readback::Version(v) if v >= e => out.newest_pages += u64::from(written[lpn]),
            Readback::Version(_) => out.older_pages += 1,
            Readback::Torn => out.torn_pages += 1,
            Readback::PairedVictim => out.paired_page_victims += 1,
            Readback::Flying => out.flying_writes += 1,
        }
    }
}

/// Per acknowledged LPN, its acknowledged version: the card's own promises
/// (a FUA write completed; a FLUSH_CACHE completed covers every write
/// completed before it was issued) and the host's (`acks`: the newest
/// version written to the range by the time the call returned). Sorted
/// by LPN; `writes` sorted by LPN then arrival.
fn acked_versions(
    tr: &Tracker,
    writes: &[WriteRec],
    t: Ns,
    acks: &[DurableAck],
) -> Vec<(u32, u32)> {
    let flushed = tr.flushes.iter().filter(|f| f.1 <= t).map(|f| f.0).max();
    let mut acked: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
    let mut put = |lpn: u32, v: u32| {
        let e = acked.entry(lpn).or_insert(0);
        *e = (*e).max(v);
    };
    for w in writes.iter().filter(|w| w.done <= t) {
        if w.fua || flushed.is_some_and(|f| w.done <= f) {
            put(w.lpn, w.version);
        }
    }
    let lpns = tr.base_expected.len() as u64;
    for a in acks.iter().filter(|a| a.at <= t) {
        let first = a.sector / SECTORS_PER_PAGE;
        let end = (a.sector + a.sectors).div_ceil(SECTORS_PER_PAGE).min(lpns);
        for lpn in first..end {
            let lpn = lpn as u32;
            let lo = writes.partition_point(|r| r.lpn < lpn);
            let hi = writes.partition_point(|r| r.lpn <= lpn);
            let v = writes[lo..hi]
                .iter()
                .filter(|r| r.done <= a.at)
                .map(|r| r.version)
                .max();
            if let Some(v) = v {
                put(lpn, v);
            }
        }
    }
    acked.into_iter().filter(|&(_, v)| v > 0).collect()
}
