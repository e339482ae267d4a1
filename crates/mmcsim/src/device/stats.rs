//! The device's statistics snapshot, as it appears in the report.

use super::ftl::MappingScheme;
use super::Emmc;
use serde::Serialize;

/// Erase-count distribution over all blocks.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EraseCountStats {
    /// Least erased block.
    pub min: u32,
    /// Mean erase count.
    pub mean: f64,
    /// Most erased block.
    pub max: u32,
    /// Population standard deviation.
    pub stddev: f64,
}

/// Merges of the hybrid log-block mapping (see [`super::ftl::HybridMapping`]).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MergeStats {
    /// Switch merges: a complete sequential log block became the data block.
    pub switch: u64,
    /// Partial merges: the rest of a sequential log block copied in.
    pub partial: u64,
    /// Full merges: a logical block's valid pages copied to a new block.
    pub full: u64,
}

/// FLUSH_CACHE as the card served it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FlushStats {
    /// FLUSH_CACHE commands executed (the host's flushes, plus the
    /// POSTFLUSH of FUA writes on a card without reliable write).
    pub count: u64,
    /// Dirty map pages the flushes programmed (`[map_cache] on_flush =
    /// "program_dirty"`; 0 with `"keep"` or a power-protected buffer).
    pub metadata_pages: u64,
    /// Service time of a flush, from its command to the card ready, µs.
    pub latency_us: FlushLatency,
}

/// Service-time summary of the flushes, µs (0 without flushes).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FlushLatency {
    /// Mean, µs.
    pub mean: f64,
    /// Median, µs.
    pub p50: f64,
    /// 99th percentile, µs.
    pub p99: f64,
}

/// Foreground GC pauses (`device.gc`): how long stripe-page programs
/// waited for the reclaim work (GC victims, hybrid merges) run before them.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct GcPauseStats {
    /// Programs that waited for reclaim work.
    pub pauses: u64,
    /// The pause distribution, µs (zeros without pauses).
    pub pause_us: PauseSummary,
    /// The bound the profile states (`[gc] pause_bound_ms`), µs; absent
    /// when it states none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_us: Option<f64>,
    /// Pauses above the stated bound.
    pub over_bound: u64,
    /// Emergency sessions: incremental GC fell behind and whole victims
    /// were collected at once (`[gc] copy_budget_pages`).
    pub emergencies: u64,
    /// Idle-time GC steps the card ran (`[gc] idle_gc_after_ms`).
    pub idle_steps: u64,
}

/// Median, 99th percentile and maximum of the GC pauses, µs.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PauseSummary {
    /// Median, µs.
    pub p50: f64,
    /// 99th percentile, µs.
    pub p99: f64,
    /// Longest, µs.
    pub max: f64,
}

/// Device counters since the last [`Emmc::reset_stats`] (erase counts are
/// lifetime values). Slots are 4 KiB units.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DeviceStats {
    /// Write amplification: NAND slots programmed (host data, GC moves,
    /// padding and SLC-log copies) ÷ host slots written; 0 when nothing
    /// was written.
    pub waf: f64,
    /// Victim blocks collected by GC.
    pub gc_runs: u64,
    /// Valid slots moved by GC.
    pub gc_pages_moved: u64,
    /// Fraction of mapped-LPN reads found in the read buffer (0..1).
    pub read_buffer_hit_rate: f64,
    /// Fraction of map-page lookups found in the mapping cache (0..1); with
    /// DFTL, of entry lookups found in the cached mapping table.
    pub map_cache_hit_rate: f64,
    /// Erase counts over all blocks.
    pub erase_count: EraseCountStats,
    /// 4 KiB slots the host wrote.
    pub host_slots_written: u64,
    /// 4 KiB slots the host read.
    pub host_slots_read: u64,
    /// 4 KiB slots programmed on NAND.
    pub nand_slots_programmed: u64,
    /// Slots programmed as padding of partial stripe pages.
    pub padding_slots: u64,
    /// All NAND senses: data, map, prefetch and GC.
    pub nand_reads: u64,
    /// NAND senses for host data on a read-buffer miss.
    pub data_nand_reads: u64,
    /// NAND senses for map pages.
    pub map_nand_reads: u64,
    /// NAND senses issued by read-buffer prefetch.
    pub prefetched_pages: u64,
    /// NAND senses issued by GC (and static wear leveling).
    pub gc_nand_reads: u64,
    /// NAND programs: stripe pages and map-page write-backs.
    pub nand_programs: u64,
    /// Block erases.
    pub nand_erases: u64,
    /// Map-page lookups that hit (DFTL: cached-mapping-table hits).
    pub map_cache_hits: u64,
    /// Map-page lookups that missed (DFTL: cached-mapping-table misses).
    pub map_cache_misses: u64,
    /// Map pages read from NAND (misses plus forward prefetch; DFTL:
    /// translation pages read).
    pub map_pages_loaded: u64,
    /// Dirty map pages programmed back on eviction (DFTL: translation pages
    /// written back).
    pub map_pages_written_back: u64,
    /// Read-buffer hits.
    pub read_buffer_hits: u64,
    /// Read-buffer misses.
    pub read_buffer_misses: u64,
    /// Host LPN reads served from the write buffer.
    pub write_buffer_read_hits: u64,
    /// Host LPN reads of unmapped (never written or trimmed) pages.
    pub unmapped_reads: u64,
    /// Writes that waited for write-buffer space.
    pub write_buffer_stalls: u64,
    /// Commands charged the `reverse_seek_penalty_us` calibration knob.
    pub reverse_seek_penalties: u64,
    /// Busy time of each die, in ns.
    pub die_busy_ns: Vec<u64>,
    /// Reads that interrupted busy NAND work with an HPI; absent unless the
    /// profile enables `[features] hpi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hpi_interrupts: Option<u64>,
    /// Write commands the host stopped part-way (CMD12 + HPI) to serve an
    /// urgent read (msm-3.4 stop flow); absent unless `[features] hpi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hpi_stopped_writes: Option<u64>,
    /// Bytes of those stopped writes the card had accepted before the stop
    /// (written to it, and sent again when the driver re-issues the
    /// re-inserted request); absent unless `[features] hpi`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hpi_stopped_write_bytes: Option<u64>,
    /// BKOPS started by the host; absent unless `[gc] background`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bkops_runs: Option<u64>,
    /// Victims collected by BKOPS (included in `gc_runs`; foreground
    /// victims are `gc_runs − bkops_gc_runs`); absent unless `[gc]
    /// background`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bkops_gc_runs: Option<u64>,
    /// Packed write commands; absent unless `[features] packed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed_commands: Option<u64>,
    /// Packed read commands (eMMC 4.5 packed read, a what-if: no Linux
    /// driver of the era issued them); absent unless `[features]
    /// packed_read`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed_read_commands: Option<u64>,
    /// Read requests those packed read commands carried (each an entry of
    /// a packed header); absent unless `[features] packed_read`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed_read_requests: Option<u64>,
    /// Reliable writes executed (FUA writes sent with CMD23's REL_WR bit;
    /// a legacy card's request counts once per command); absent unless the
    /// profile sets `[features] reliable_write` or `rel_wr_sec_c`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reliable_writes: Option<u64>,
    /// FLUSH_CACHE commands executed: the host's flushes, plus one after
    /// each FUA write when the card has no reliable write; absent unless
    /// the profile sets `[features] reliable_write` or `rel_wr_sec_c`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_commands: Option<u64>,
    /// FLUSH_CACHE commands, the map pages they programmed and their
    /// service times.
    pub flush: FlushStats,
    /// Hybrid mapping merges; absent for the other mapping schemes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merges: Option<MergeStats>,
    /// Erase-class commands executed, by kind; absent unless the profile
    /// names an erase capability in `[features]` (`emmc_version`,
    /// `discard`, `trim`, `sanitize`, `erase_group_kib`) or a secure
    /// discard was sent as a plain one. So are the three fields below.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erase_commands: Option<EraseCommandStats>,
    /// Blocks (stripes of `planes_per_die` blocks) an ERASE erased because
    /// it left them without valid data (counted in `nand_erases` too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erase_blocks_erased: Option<u64>,
    /// Blocks (stripes) SANITIZE collected: valid data moved, then erased
    /// (counted in `gc_runs` and `nand_erases` too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sanitize_blocks: Option<u64>,
    /// Time the card was busy with SANITIZE, summed over the commands:
    /// from SANITIZE_START to its last NAND operation, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sanitize_ns: Option<u64>,
    /// What the SLC-mode log of durable commits did; absent unless
    /// `[write_buffer] slc_log`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc_log: Option<super::slc_log::SlcLogStats>,
    /// Foreground GC pauses and their stated bound.
    pub gc: GcPauseStats,
    /// Bounds the profile states that the run passed (`[gc]
    /// pause_bound_ms`, `[gc] waf_bound`), one sentence each; absent when
    /// none was passed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Erase-class commands by kind (`device.erase_commands`).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EraseCommandStats {
    /// CMD38 with the DISCARD argument (0x3).
    pub discard: u64,
    /// CMD38 with the TRIM argument (0x1).
    pub trim: u64,
    /// CMD38 with the ERASE argument (0x0).
    pub erase: u64,
    /// CMD6 SANITIZE_START.
    pub sanitize: u64,
    /// Secure discards the driver sent as plain discards: the card has no
    /// SANITIZE, and eMMC 4.4/4.41 SECURE_ERASE / SECURE_TRIM is not
    /// modelled.
    pub secure_as_plain: u64,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Whether the erase-class counters are reported.
fn erase_reported(d: &Emmc) -> bool {
    d.cfg.features.sets_erase() || d.c.secure_as_plain > 0
}

/// The GC pause section and the warnings of passed bounds.
fn gc_pauses(d: &Emmc, waf: f64) -> (GcPauseStats, Vec<String>) {
    let l = d.gc_pause.summary();
    let bound_us = d.cfg.gc.pause_bound_ms.map(|ms| ms * 1000.0);
    let over = bound_us.map_or(0, |b| d.gc_pause.count_above((b * 1000.0) as u64));
    let mut warnings = Vec::new();
    if let Some(b) = bound_us.filter(|_| over > 0) {
        warnings.push(format!(
            "{over} foreground GC pauses exceeded the profile's bound of {:.1} ms (longest {:.1} ms)",
            b / 1000.0,
            l.max / 1000.0
        ));
    }
    if let Some(w) = d.cfg.gc.waf_bound.filter(|&w| waf > w) {
        warnings.push(format!(
            "write amplification {waf:.2} passed the profile's bound of {w:.2}"
        ));
    }
    let gc = GcPauseStats {
        pauses: d.gc_pause.count(),
        pause_us: PauseSummary {
            p50: l.p50,
            p99: l.p99,
            max: l.max,
        },
        bound_us,
        over_bound: over,
        emergencies: d.ftl.gc_emergencies(),
        idle_steps: d.c.idle_gc_steps,
    };
    (gc, warnings)
}

/// Wear spread over the erase blocks: min, mean, max and population
/// standard deviation of the per-block erase counts.
fn erase_count_stats(ec: &[u32]) -> EraseCountStats {
    let n = ec.len().max(1) as f64;
    let mean = ec.iter().map(|&e| e as f64).sum::<f64>() / n;
    let var = ec.iter().map(|&e| (e as f64 - mean).powi(2)).sum::<f64>() / n;
    EraseCountStats {
        min: ec.iter().copied().min().unwrap_or(0),
        mean,
        max: ec.iter().copied().max().unwrap_or(0),
        stddev: var.sqrt(),
    }
}

/// CMD6 FLUSH_CACHE commands: count, metadata pages and latency (us).
fn flush_stats(d: &Emmc) -> FlushStats {
    let l = d.flush_latency.summary();
    FlushStats {
        count: d.c.flush_commands,
        metadata_pages: d.c.flush_metadata_pages,
        latency_us: FlushLatency {
            mean: l.mean,
            p50: l.p50,
            p99: l.p99,
        },
    }
}

pub(super) fn collect(d: &Emmc) -> DeviceStats {
    let f = d.ftl.stats();
    let waf = ratio(
        f.programmed_slots + d.slc.as_ref().map_or(0, |l| l.stats().slots),
        d.c.host_slots_written,
    );
    let (gc, warnings) = gc_pauses(d, waf);
    let (rb_hits, rb_misses, prefetched) = d.rbuf.counters();
    // The DFTL's cached mapping table stands in for the map-page cache.
    let (map_hits, map_misses) = (d.map.hits() + f.cmt_hits, d.map.misses() + f.cmt_misses);
    DeviceStats {
        waf,
        gc_runs: f.gc_runs,
        gc_pages_moved: f.gc_slots_moved,
        read_buffer_hit_rate: ratio(rb_hits, rb_hits + rb_misses),
        map_cache_hit_rate: ratio(map_hits, map_hits + map_misses),
        erase_count: erase_count_stats(d.ftl.erase_counts()),
        host_slots_written: d.c.host_slots_written,
        host_slots_read: d.c.host_slots_read,
        nand_slots_programmed: f.programmed_slots,
        padding_slots: f.padding_slots,
        nand_reads: d.c.data_nand_reads
            + d.map.nand_reads()
            + d.c.prefetch_nand_reads
            + f.nand_reads
            + f.translation_reads,
        data_nand_reads: d.c.data_nand_reads,
        map_nand_reads: d.map.nand_reads() + f.translation_reads,
        prefetched_pages: prefetched,
        gc_nand_reads: f.nand_reads,
        nand_programs: f.nand_programs + d.map.writebacks(),
        nand_erases: f.nand_erases,
        map_cache_hits: map_hits,
        map_cache_misses: map_misses,
        map_pages_loaded: d.map.pages_loaded() + f.translation_reads,
        map_pages_written_back: d.map.writebacks() + f.translation_writes,
        read_buffer_hits: rb_hits,
        read_buffer_misses: rb_misses,
        write_buffer_read_hits: d.c.write_buffer_read_hits,
        unmapped_reads: d.c.unmapped_reads,
        write_buffer_stalls: d.wbuf.stalls(),
        reverse_seek_penalties: d.c.reverse_penalties,
        die_busy_ns: d.tl.die_busy().to_vec(),
        hpi_interrupts: d.cfg.features.hpi.then_some(d.c.hpi_interrupts),
        hpi_stopped_writes: d.cfg.features.hpi.then_some(d.c.hpi_stopped_writes),
        hpi_stopped_write_bytes: d.cfg.features.hpi.then_some(d.c.hpi_stopped_sectors * 512),
        packed_commands: d.cfg.features.packed.then_some(d.c.packed_commands),
        packed_read_commands: d
            .cfg
            .features
            .packed_read
            .then_some(d.c.packed_read_commands),
        packed_read_requests: d
            .cfg
            .features
            .packed_read
            .then_some(d.c.packed_read_requests),
        reliable_writes: d
            .cfg
            .features
            .sets_fua_path()
            .then_some(d.c.reliable_writes),
        flush_commands: d.cfg.features.sets_fua_path().then_some(d.c.flush_commands),
        flush: flush_stats(d),
        bkops_runs: d.cfg.gc.background.then_some(d.c.bkops_runs),
        bkops_gc_runs: d.cfg.gc.background.then_some(d.c.bkops_gc_runs),
        erase_commands: erase_reported(d).then_some(EraseCommandStats {
            discard: d.c.erase_commands[0],
            trim: d.c.erase_commands[1],
            erase: d.c.erase_commands[2],
            sanitize: d.c.sanitize_commands,
            secure_as_plain: d.c.secure_as_plain,
        }),
        erase_blocks_erased: erase_reported(d).then_some(d.c.erase_blocks_erased),
        sanitize_blocks: erase_reported(d).then_some(d.c.sanitize_blocks),
        sanitize_ns: erase_reported(d).then_some(d.c.sanitize_ns),
        merges: (d.ftl.scheme() == MappingScheme::Hybrid).then_some(MergeStats {
            switch: f.merges_switch,
            partial: f.merges_partial,
            full: f.merges_full,
        }),
        slc_log: d.slc.as_ref().map(|l| l.stats()),
        gc,
        warnings,
    }
}
