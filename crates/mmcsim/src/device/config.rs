//! Device configuration: the TOML schema of a device profile
//! (`configs/devices/*.toml`) and its validation.
//!
//! Every field name carries its unit (`_us`, `_kib`, `_mhz`, ...). Values and
//! their sources are documented in the profile files, not here; this module
//! only says what each field means and which range is accepted.

use super::cache::Direction;
use super::ftl::{self, MappingScheme, VictimPolicy};
pub use super::power_loss::PowerLossConfig;
use crate::error::{Error, Result, SettingError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A complete eMMC device profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Human-readable profile name, echoed in reports.
    pub name: String,
    /// The host ↔ device bus (MMC interface).
    pub bus: BusConfig,
    /// Controller firmware costs.
    pub controller: ControllerConfig,
    /// NAND array geometry and timing.
    pub nand: NandConfig,
    /// Flash translation layer.
    pub ftl: FtlConfig,
    /// Garbage collection.
    pub gc: GcConfig,
    /// Wear leveling.
    pub wear_leveling: WearLevelingConfig,
    /// Mapping-table cache in controller SRAM.
    pub map_cache: MapCacheConfig,
    /// Controller read buffer and sequential-stream prefetch.
    pub read_buffer: ReadBufferConfig,
    /// Controller write buffer (eMMC 4.5 cache or power-protected buffer).
    pub write_buffer: WriteBufferConfig,
    /// Calibration knobs that are not mechanisms; reported as such.
    #[serde(default)]
    pub calibration: CalibrationConfig,
    /// What the profile's values were fitted to (`[fit] targets`, written
    /// by `simctl calibrate --out`): kept with the profile, never read by
    /// the simulation; `simctl reproduce` labels a phone's verdicts from it.
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub fit: Option<toml::Value>,
    /// eMMC 5.1 command queueing; absent = the card has no command queue
    /// (legacy one-command-at-a-time operation only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdq: Option<CmdqConfig>,
    /// Optional eMMC 4.41+ host-visible features (HPI); every one off by
    /// default, and the section is absent from reports when all are off.
    #[serde(default, skip_serializing_if = "FeaturesConfig::is_off")]
    pub features: FeaturesConfig,
    /// What the card does when power fails (`[power_loss]`; `simctl
    /// crash`); absent from reports when every key has its default.
    #[serde(default, skip_serializing_if = "PowerLossConfig::is_default")]
    pub power_loss: PowerLossConfig,
}

/// Optional eMMC features the driver may use (all off by default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeaturesConfig {
    /// High Priority Interrupt (eMMC 4.41, EXT_CSD HPI_FEATURES / HPI_MGMT):
    /// a read finding the card busy with NAND programs or background work
    /// interrupts it (Linux `mmc_interrupt_hpi`: CMD13, then CMD12 with the
    /// HPI bit or CMD13 HPI); the card stops at the end of the NAND
    /// operation in flight, serves the read, then resumes the interrupted
    /// work. With it the legacy driver can also stop a write command on the
    /// bus for a read the scheduler marks urgent (ROW), when the host can
    /// stop a transfer (`driver.stop_request`, msm-3.4 `mmc_stop_request`);
    /// the stopped write is given back to the scheduler whole. Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hpi: bool,
    /// Cost of one HPI, in µs: the status + HPI command exchange and the
    /// firmware's stop, before the wait for the NAND operation in flight
    /// (which is modelled). Absent = [`FeaturesConfig::DEFAULT_HPI_US`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpi_us: Option<f64>,
    /// eMMC 4.5 packed writes (EXT_CSD PACKED_COMMAND): the legacy driver
    /// packs consecutive queued writes (Linux 3.x `mmc_blk_prep_packed_list`)
    /// into one CMD23 (packed flag) + CMD25 with a packed header block.
    /// Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub packed: bool,
    /// Most writes in one pack (EXT_CSD MAX_PACKED_WRITES, byte 500), in
    /// commands; absent = [`FeaturesConfig::DEFAULT_MAX_PACKED_WRITES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_packed_writes: Option<u32>,
    /// eMMC 4.5 packed reads, a what-if (default false): the legacy driver
    /// packs consecutive queued reads into one packed read — CMD23 with the
    /// PACKED flag and a block count of 1, CMD25 writing the packed header
    /// (R/W = read, each entry's CMD23 argument and CMD18 address), then
    /// CMD23 with the total block count and CMD18 reading every entry's
    /// data back to back. The card knows every address once the header
    /// arrives, so it senses all entries at once on their dies. Opt-in
    /// because no Linux driver of the era issued packed reads: mainline
    /// 3.7+ defines `MMC_CAP2_PACKED_RD`, but `mmc_blk_prep_packed_list`
    /// packs writes only (as recalled, not re-read).
    #[serde(default, skip_serializing_if = "is_false")]
    pub packed_read: bool,
    /// Most reads in one packed read (EXT_CSD MAX_PACKED_READS, byte 501),
    /// in commands; absent = [`FeaturesConfig::DEFAULT_MAX_PACKED_READS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_packed_reads: Option<u32>,
    /// Reliable write (CMD23 argument bit 31, REL_WR): how the driver
    /// makes a FUA write durable. true = the card supports it, so Linux
    /// advertises FUA (`mmc_blk_alloc_req` sets REQ_FUA when the card has
    /// EXT_CSD WR_REL_PARAM EN_REL_WR or REL_WR_SEC_C) and a FUA write goes
    /// as a reliable write, complete once its data is programmed. false =
    /// no FUA on the queue: the block layer's flush sequencing
    /// (blk-flush.c, POSTFLUSH) sends the write as a plain write followed
    /// by a cache flush (CMD6 FLUSH_CACHE) before the request completes.
    /// Absent = true [spec: reliable write is part of eMMC from 4.3 on].
    /// When present, the report counts `device.reliable_writes` and
    /// `device.flush_commands`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reliable_write: Option<bool>,
    /// REL_WR_SEC_C (EXT_CSD\[222\]) of a card with legacy reliable write
    /// (eMMC 4.3: WR_REL_PARAM EN_REL_WR = 0), in 512-byte sectors: Linux's
    /// `mmc_apply_rel_rw` sends a reliable write as commands of exactly
    /// this many sectors when aligned to it, else of one sector, each a
    /// command of its own. Absent = enhanced reliable write (eMMC 4.41+:
    /// any length and alignment in one command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rel_wr_sec_c: Option<u32>,
    /// The card's eMMC version (EXT_CSD_REV), one of `"4.3"`, `"4.4"`,
    /// `"4.41"`, `"4.5"`, `"5.0"`, `"5.1"`: the erase-class capabilities
    /// below default from it. Absent = the capabilities default to a card
    /// that takes DISCARD and TRIM but no SANITIZE (the erase model before
    /// the version was stated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emmc_version: Option<String>,
    /// CMD38 DISCARD argument (0x3) supported (eMMC 4.5: Linux
    /// `mmc_can_discard`, set for EXT_CSD_REV ≥ 6): a discard unmaps the
    /// pages without the card having to erase them. Absent = from
    /// `emmc_version` (≥ 4.5), or true when no version is stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard: Option<bool>,
    /// CMD38 TRIM argument (0x1) supported (eMMC 4.41: EXT_CSD
    /// SEC_FEATURE_SUPPORT bit SEC_GB_CL_EN, Linux `mmc_can_trim`): the
    /// discard of a card without DISCARD. Absent = from `emmc_version`
    /// (≥ 4.41), or true when no version is stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<bool>,
    /// SANITIZE supported (eMMC 4.5: SEC_FEATURE_SUPPORT bit SEC_SANITIZE,
    /// Linux `mmc_can_sanitize`): a secure discard unmaps its range, then
    /// CMD6 SANITIZE_START makes the card physically remove every piece of
    /// unmapped data (it is busy until done). Absent = from `emmc_version`
    /// (≥ 4.5), or false when no version is stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanitize: Option<bool>,
    /// Erase group size, in KiB (EXT_CSD HC_ERASE_GRP_SIZE × 512 KiB on a
    /// high-capacity card): the unit an ERASE (CMD38 argument 0x0) is
    /// widened to by the driver (`mmc_erase` trims the range to whole
    /// groups) and the alignment `mmc_erase_group_aligned` checks. Absent =
    /// one NAND erase stripe (`planes_per_die × pages_per_block ×
    /// page_kib`), the card's physical erase unit \[est\].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_group_kib: Option<u32>,
}

/// eMMC versions accepted in `[features] emmc_version`, oldest first.
pub const EMMC_VERSIONS: [&str; 6] = ["4.3", "4.4", "4.41", "4.5", "5.0", "5.1"];

/// How the driver makes a FUA write durable (see
/// [`FeaturesConfig::reliable_write`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuaPath {
    /// Enhanced reliable write: the whole request in one reliable write.
    ReliableWrite,
    /// Legacy reliable write: commands of REL_WR_SEC_C sectors (this many)
    /// when aligned, else of one sector.
    LegacyReliableWrite(u32),
    /// No reliable write: a plain write, then FLUSH_CACHE.
    PostFlush,
}

impl FeaturesConfig {
    /// Default HPI cost, in µs [est: two command/response exchanges of a
    /// few µs each plus firmware stop; EXT_CSD OUT_OF_INTERRUPT_TIME only
    /// bounds it, in 10 ms units].
    pub const DEFAULT_HPI_US: f64 = 50.0;

    /// True when every feature is off (section left out of reports).
    pub fn is_off(&self) -> bool {
        *self == FeaturesConfig::default()
    }

    /// Default MAX_PACKED_WRITES, in commands [est: the value is
    /// card-specific; 8 keeps a pack of 64 KiB requests at 512 KiB, the
    /// write buffer's size].
    pub const DEFAULT_MAX_PACKED_WRITES: u32 = 8;

    /// MAX_PACKED_WRITES in effect, in commands.
    pub fn max_packed(&self) -> u32 {
        self.max_packed_writes
            .unwrap_or(Self::DEFAULT_MAX_PACKED_WRITES)
    }

    /// Default MAX_PACKED_READS, in commands [est: card-specific like
    /// MAX_PACKED_WRITES; the same default as
    /// [`FeaturesConfig::DEFAULT_MAX_PACKED_WRITES`]].
    pub const DEFAULT_MAX_PACKED_READS: u32 = Self::DEFAULT_MAX_PACKED_WRITES;

    /// MAX_PACKED_READS in effect, in commands.
    pub fn max_packed_reads(&self) -> u32 {
        self.max_packed_reads
            .unwrap_or(Self::DEFAULT_MAX_PACKED_READS)
    }

    /// The HPI cost in effect, in µs.
    pub fn hpi_cost_us(&self) -> f64 {
        self.hpi_us.unwrap_or(Self::DEFAULT_HPI_US)
    }

    /// True when the profile names its reliable-write support (the report
    /// then counts reliable writes and flush commands).
    pub fn sets_fua_path(&self) -> bool {
        self.reliable_write.is_some() || self.rel_wr_sec_c.is_some()
    }

    /// Rank of the stated eMMC version in [`EMMC_VERSIONS`], if any.
    fn version_rank(&self) -> Option<usize> {
        let v = self.emmc_version.as_deref()?;
        EMMC_VERSIONS.iter().position(|&k| k == v)
    }

    /// Whether the stated version is at least `v`; `None` without one.
    fn version_at_least(&self, v: &str) -> Option<bool> {
        let min = EMMC_VERSIONS.iter().position(|&k| k == v)?;
        Some(self.version_rank()? >= min)
    }

    /// The card takes CMD38 DISCARD (`mmc_can_discard`).
    pub fn can_discard(&self) -> bool {
        self.discard
            .or_else(|| self.version_at_least("4.5"))
            .unwrap_or(true)
    }

    /// The card takes CMD38 TRIM (`mmc_can_trim`).
    pub fn can_trim(&self) -> bool {
        self.trim
            .or_else(|| self.version_at_least("4.41"))
            .unwrap_or(true)
    }

    /// The card takes SANITIZE (`mmc_can_sanitize`).
    pub fn can_sanitize(&self) -> bool {
        self.sanitize
            .or_else(|| self.version_at_least("4.5"))
            .unwrap_or(false)
    }

    /// True when the profile names an erase-class capability (the report
    /// then counts `device.erase_commands`).
    pub fn sets_erase(&self) -> bool {
        self.emmc_version.is_some()
            || self.discard.is_some()
            || self.trim.is_some()
            || self.sanitize.is_some()
            || self.erase_group_kib.is_some()
    }

    /// How a FUA write is made durable on this card.
    pub fn fua_path(&self) -> FuaPath {
        match (self.reliable_write.unwrap_or(true), self.rel_wr_sec_c) {
            (false, _) => FuaPath::PostFlush,
            (true, Some(n)) => FuaPath::LegacyReliableWrite(n),
            (true, None) => FuaPath::ReliableWrite,
        }
    }
}

/// eMMC 5.1 command queueing (CMDQ) capabilities and command costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CmdqConfig {
    /// Queue depth the card reports (EXT_CSD CMDQ_DEPTH + 1), in tasks,
    /// 2..=32. The host keeps one slot for direct commands, so the driver
    /// uses `depth − 1` tags.
    pub depth: u32,
    /// Commands on the CMD line to queue one task, in commands: 2 (CMD44
    /// QUEUED_TASK_PARAMS and CMD45 QUEUED_TASK_ADDRESS). The driver sends
    /// them (see `device::host_interface`); the profile echoes the protocol
    /// and accepts only 2.
    #[serde(default = "default_queue_task_commands")]
    pub queue_task_commands: u32,
    /// Commands on the CMD line to start a ready task's data phase, in
    /// commands: 1 (CMD46 EXECUTE_READ_TASK or CMD47 EXECUTE_WRITE_TASK).
    /// Sent by the driver; only 1 is accepted.
    #[serde(default = "default_execute_commands")]
    pub execute_commands: u32,
}

fn default_queue_task_commands() -> u32 {
    2
}
fn default_execute_commands() -> u32 {
    1
}

/// The MMC bus: mode, clock, width and per-command overhead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BusConfig {
    /// Bus mode name for reports, e.g. `"HS52"`, `"DDR52"`, `"HS200"`.
    pub mode: String,
    /// Bus clock in MHz.
    pub clock_mhz: f64,
    /// Data lines: 1, 4 or 8.
    pub width_bits: u32,
    /// Double data rate (data on both clock edges).
    pub ddr: bool,
    /// Clock cycles one command + response costs on the 1-bit CMD line
    /// (48-bit command, NCR turnaround, 48-bit R1 response, NRC gap), in bits.
    pub cmd_response_bits: u32,
    /// Whether the host polls CMD13 SEND_STATUS after each write (Linux
    /// does): the driver then ends a legacy write's command sequence with
    /// CMD13, which the host interface charges.
    pub status_poll_after_write: bool,
}

/// Controller firmware costs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Firmware time to decode and set up one command, in µs.
    pub fw_cmd_us: f64,
}

/// NAND array geometry and timing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Independent NAND channels (buses between controller and dies).
    pub channels: u32,
    /// Dies on each channel.
    pub dies_per_channel: u32,
    /// Planes per die (multi-plane operations act on all of them at once).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// NAND page size in KiB (a multiple of 4: the FTL maps 4 KiB units).
    pub page_kib: u32,
    /// Page read (array sense) time tR of a lower (LSB) MLC page, in µs;
    /// also the sense time of mapping-table pages.
    pub t_r_us: f64,
    /// Sense time of an upper (MSB) MLC page, in µs; absent = `t_r_us`
    /// (no LSB/MSB difference).
    #[serde(default)]
    pub t_r_upper_us: Option<f64>,
    /// Program time of a lower (LSB, fast) MLC page, in µs.
    pub t_prog_lower_us: f64,
    /// Program time of an upper (MSB, slow) MLC page, in µs.
    pub t_prog_upper_us: f64,
    /// Block erase time tBERS, in µs.
    pub t_bers_us: f64,
    /// Channel transfer rate in mega-transfers per second (8-bit channel:
    /// one byte per transfer).
    pub channel_mt_per_s: f64,
}

/// Flash translation layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Mapping scheme: `"page"` (page-level, 4 KiB units), `"hybrid"`
    /// (FAST-style log-block mapping, `[ftl.hybrid]`) or `"dftl"`
    /// (demand-cached page mapping, `[ftl.dftl]`).
    pub mapping: MappingScheme,
    /// Fraction of raw capacity hidden from the host (0 ≤ op < 0.5), at
    /// least what garbage collection needs (see [`DeviceConfig::validate`]).
    pub over_provisioning: f64,
    /// Parameters of the hybrid log-block mapping (only with `mapping =
    /// "hybrid"`; absent = the defaults of [`HybridConfig`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hybrid: Option<HybridConfig>,
    /// Parameters of the demand-cached page mapping (only with `mapping =
    /// "dftl"`; absent = the defaults of [`DftlConfig`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dftl: Option<DftlConfig>,
    /// Atomic multi-page writes, X-FTL style [src: Kang et al., "X-FTL:
    /// Transactional FTL for SQLite Databases", SIGMOD 2013, §3-4]: the
    /// pages written in one transaction become visible together at its
    /// commit; after a power cut the mount discards an uncommitted
    /// transaction's pages (the old copies stay valid until the commit).
    /// The host passes transactions implicitly: the writes between two
    /// FLUSH_CACHE commands form one transaction and FLUSH_CACHE is its
    /// commit command; a FUA write commits itself (module
    /// `device::power_loss`). Page mapping only. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub atomic_write: bool,
    /// With `atomic_write`: map pages the commit programs to persist the
    /// transaction's mapping (X-FTL's X-L2P table), each taking the
    /// lower-page tPROG. Default 1 [uncertain: 1-2; Kang et al. §4.2 write
    /// the X-L2P table at commit, one page for a transaction of a few
    /// pages].
    #[serde(
        default = "default_atomic_commit_map_pages",
        skip_serializing_if = "is_default_atomic_commit_map_pages"
    )]
    pub atomic_commit_map_pages: u32,
}

fn default_atomic_commit_map_pages() -> u32 {
    1
}

fn is_default_atomic_commit_map_pages(n: &u32) -> bool {
    *n == 1
}

impl FtlConfig {
    /// The hybrid parameters in effect (the section or its defaults).
    pub fn hybrid(&self) -> HybridConfig {
        self.hybrid.clone().unwrap_or_default()
    }
    /// The DFTL parameters in effect (the section or its defaults).
    pub fn dftl(&self) -> DftlConfig {
        self.dftl.clone().unwrap_or_default()
    }
}

/// Hybrid log-block mapping in the FAST style (`[ftl.hybrid]`): data blocks
/// mapped per logical block, one sequential log block and a pool of
/// fully-associative random log blocks. The mapping unit is a *superblock*:
/// block `b` of every plane of every die, so a logical block is
/// `dies × planes × pages_per_block × page_kib` of LBA space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HybridConfig {
    /// Random (fully-associative) log blocks open at once, in superblocks;
    /// with the one sequential log block they are the card's open log
    /// blocks. Default 7 (8 open in all: the upper end of "hybrid, 4–8
    /// open" for a Nexus 7 2012-like part, emmc-parameters.md §7 \[est\]).
    #[serde(default = "default_random_log_blocks")]
    pub random_log_blocks: u32,
    /// Sequential log blocks, in superblocks: FAST keeps exactly one (Lee
    /// et al., ACM TECS 2007); only 1 is accepted.
    #[serde(default = "default_sequential_log_blocks")]
    pub sequential_log_blocks: u32,
    /// The most distinct logical blocks one random log block may hold
    /// (K of KAST: Cho, Shin, Eom, "KAST: K-Associative Sector
    /// Translation for NAND Flash Memory in Real-Time Systems", DATE
    /// 2009): `"full"` (default) = FAST's fully associative pool; a number
    /// K ≥ 1 bounds the full merges of reclaiming one random log block by
    /// K (K = 1 is block association, BAST: Kim, Kim, Noh, Min, Cho, "A
    /// space-efficient flash translation layer for CompactFlash systems",
    /// IEEE TCE 48(2), 2002). Absent from the report's profile echo when
    /// full.
    #[serde(default, skip_serializing_if = "LogAssociativity::is_full")]
    pub log_associativity: LogAssociativity,
}

/// Log-block associativity of the hybrid mapping (`[ftl.hybrid]
/// log_associativity`): the string `"full"` or a number of logical blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogAssociativity {
    /// FAST: a random log block holds pages of any number of logical
    /// blocks.
    #[default]
    Full,
    /// KAST: a random log block holds pages of at most this many logical
    /// blocks (≥ 1; validated).
    Blocks(u32),
}

impl LogAssociativity {
    /// True for [`LogAssociativity::Full`].
    pub fn is_full(&self) -> bool {
        *self == LogAssociativity::Full
    }
    /// The bound K, or `None` when full.
    pub fn limit(self) -> Option<u32> {
        match self {
            LogAssociativity::Full => None,
            LogAssociativity::Blocks(k) => Some(k),
        }
    }
}

/// In a report's JSON Schema: `"full"` or a count of logical blocks.
impl schemars::JsonSchema for LogAssociativity {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "LogAssociativity".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "oneOf": [
                {"const": "full"},
                {"type": "integer", "minimum": 1}
            ]
        })
    }
}

impl Serialize for LogAssociativity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            LogAssociativity::Full => s.serialize_str("full"),
            LogAssociativity::Blocks(k) => s.serialize_u32(*k),
        }
    }
}

impl<'de> Deserialize<'de> for LogAssociativity {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = LogAssociativity;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"full\" or a number of logical blocks ≥ 1")
            }
            fn visit_str<E: serde::de::Error>(
                self,
                v: &str,
            ) -> std::result::Result<Self::Value, E> {
                match v {
                    "full" => Ok(LogAssociativity::Full),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Self::Value, E> {
                u32::try_from(v)
                    .map(LogAssociativity::Blocks)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Self::Value, E> {
                u32::try_from(v)
                    .map(LogAssociativity::Blocks)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

fn default_random_log_blocks() -> u32 {
    7
}
fn default_sequential_log_blocks() -> u32 {
    1
}

impl Default for HybridConfig {
    fn default() -> Self {
        HybridConfig {
            random_log_blocks: default_random_log_blocks(),
            sequential_log_blocks: default_sequential_log_blocks(),
            log_associativity: LogAssociativity::Full,
        }
    }
}

/// Demand-cached page mapping, DFTL style (`[ftl.dftl]`; Gupta, Kim and
/// Urgaonkar, ASPLOS 2009): the page-level table lives in translation pages
/// on NAND, located by a global translation directory in SRAM; a cached
/// mapping table (CMT) holds recently used entries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DftlConfig {
    /// Entries (4 bytes each) the cached mapping table holds, LRU. Default
    /// 8192 = 32 KiB of SRAM: the same SRAM as the generic profile's 8
    /// cached map pages (emmc-parameters.md §3 "mapping cache 8–64
    /// entries" of 4 KiB map pages; "tens to a few hundred KB" of SRAM) \[est\].
    #[serde(default = "default_cmt_entries")]
    pub cmt_entries: u32,
}

fn default_cmt_entries() -> u32 {
    8192
}

impl Default for DftlConfig {
    fn default() -> Self {
        DftlConfig {
            cmt_entries: default_cmt_entries(),
        }
    }
}

/// Garbage collection. Thresholds count blocks; GC works on stripes (one
/// block per plane of a die), so one victim frees `planes_per_die` blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GcConfig {
    /// Victim selection: `"greedy"` (fewest valid slots), `"cost-benefit"`
    /// or `"fifo"`.
    pub policy: VictimPolicy,
    /// Foreground GC starts on a die when its free blocks fall below this.
    pub start_below_free_blocks_per_die: u32,
    /// A GC session stops once the die has at least this many free blocks.
    pub stop_at_free_blocks_per_die: u32,
    /// Background GC through eMMC 4.41 BKOPS (BKOPS_EN): the card reports
    /// BKOPS_STATUS from its free-block level and collects victims while
    /// the host lets it (driver: idle for `bkops_idle_ms`). Page mapping
    /// only. Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub background: bool,
    /// BKOPS collects until every die has this many free blocks; absent =
    /// 2 × `stop_at_free_blocks_per_die`. Only with `background = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bkops_target_free_blocks_per_die: Option<u32>,
    /// Incremental (preemptible) foreground GC, page mapping only: once a
    /// die is below `start_below_free_blocks_per_die`, each host stripe-page
    /// program is preceded by one step of collection that copies at least
    /// this many stripe pages of valid data from the victim in progress
    /// (more when the victim's valid share needs it to keep pace: valid ÷
    /// invalid stripe pages, rounded up), instead of whole victims at
    /// once; the victim is erased when its last page is copied. Whole
    /// victims are still collected when fewer than two free stripes
    /// remain (counted in `device.gc.emergencies`). With `mapping =
    /// "hybrid"` the same budget makes merges incremental (SanDisk's
    /// "phased garbage collection": a part of a merge within each write
    /// command's timeout): a random log block is reclaimed from the moment
    /// the pool fills, and each host stripe-page program is preceded by a
    /// step copying this many stripe pages of the merge in progress; a
    /// merge still needed at once is counted as an emergency (see
    /// `device/ftl/hybrid/merge.rs`). Absent = whole victims (merges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_budget_pages: Option<u32>,
    /// Idle-time background GC inside the card: after the card has been
    /// idle this long, ms, it collects in steps of `copy_budget_pages`
    /// until the next command arrives (the step in flight completes) or
    /// every die holds one stripe of free blocks more than
    /// `start_below_free_blocks_per_die` (hybrid mapping: until the merge
    /// in progress is done and the random log pool has a free place).
    /// Absent = no idle collection by the card itself (host BKOPS, `[gc]
    /// background`, is separate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_gc_after_ms: Option<f64>,
    /// The longest foreground GC pause the profile states, ms: the report
    /// gives the pause distribution (`device.gc.pause_us`) and warns when
    /// a pause exceeds this. Absent = no bound stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_bound_ms: Option<f64>,
    /// The write amplification the profile states as its bound: the
    /// report warns when a run's WAF passes it. Absent = no bound stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waf_bound: Option<f64>,
}

impl GcConfig {
    /// The BKOPS target in effect, in free blocks per die.
    pub fn bkops_target(&self) -> u32 {
        self.bkops_target_free_blocks_per_die
            .unwrap_or(2 * self.stop_at_free_blocks_per_die)
    }
}

/// Wear leveling.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WearLevelingConfig {
    /// Dynamic wear leveling: allocate the least-worn free stripe (one block
    /// per plane) of the die. When false, the lowest-numbered free stripe.
    pub dynamic: bool,
    /// Static wear leveling: after a GC session, move the data of the
    /// die's least-worn full stripe once the die's erase-count spread
    /// exceeds `static_threshold_erases`. Default false.
    #[serde(rename = "static", default, skip_serializing_if = "is_false")]
    pub static_wl: bool,
    /// Erase-count spread (most-worn stripe − least-worn full stripe of a
    /// die) above which static wear leveling moves cold data, in erases;
    /// absent = 32. Only with `static = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_threshold_erases: Option<u32>,
}

/// Entries a packed command's 512-byte header holds: 8-byte slots (CMD23
/// argument + CMD18/CMD25 argument), the first taken by the version, R/W
/// flag and entry count, so 512 / 8 − 1 = 63 [spec, JESD84-B45 packed
/// command header for 512-byte sectors; a 4 KiB-sector card's header is a
/// 4 KiB block, not modelled].
pub const MAX_PACKED_ENTRIES: u32 = 63;

/// Most 4 KiB slots in the raw NAND array (channels × dies × planes ×
/// blocks × pages × page size / 4 KiB): 2^28, 1 TiB raw. The FTL's tables
/// take about 16 bytes per slot (4 GiB at the limit, twice that with
/// `--check-integrity`).
pub const MAX_SLOTS: u64 = 1 << 28;

/// Most dies in the array (`channels × dies_per_channel`), in dies.
pub const MAX_DIES: u32 = 1024;

/// Most map pages the mapping-table cache holds (`[map_cache] entries`),
/// in map pages: 2^20, enough for the whole table of a 4 TiB device.
pub const MAX_MAP_CACHE_ENTRIES: u32 = 1 << 20;

/// Most NAND pages the read buffer holds (`[read_buffer] pages`), in pages
/// (its lookup is linear in them).
pub const MAX_READ_BUFFER_PAGES: u32 = 4096;

/// Largest read-buffer stream prefetch (`[read_buffer] prefetch_kib`), in
/// KiB (64 MiB).
pub const MAX_PREFETCH_KIB: u32 = 65_536;

/// Largest write buffer (`[write_buffer] size_kib`), in KiB (1 GiB).
pub const MAX_WRITE_BUFFER_KIB: u32 = 1 << 20;

fn is_false(b: &bool) -> bool {
    !*b
}

impl WearLevelingConfig {
    /// Default static wear-leveling threshold, in erases.
    pub const DEFAULT_STATIC_THRESHOLD_ERASES: u32 = 32;

    /// The static wear-leveling threshold in effect, in erases.
    pub fn static_threshold(&self) -> u32 {
        self.static_threshold_erases
            .unwrap_or(Self::DEFAULT_STATIC_THRESHOLD_ERASES)
    }
}

/// Mapping-table cache held in controller SRAM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MapCacheConfig {
    /// Map pages cached (each 4 KiB = 1,024 4-byte entries = 4 MiB of LBA).
    pub entries: u32,
    /// Extra map pages loaded after a missed one, next in the access's
    /// direction, when `prefetch_direction` follows that direction.
    pub prefetch_map_pages: u32,
    /// Access directions the map-page prefetch follows: `"forward"`
    /// (ascending accesses only), `"both"` or `"none"` (default forward).
    #[serde(default)]
    pub prefetch_direction: Direction,
    /// What a FLUSH_CACHE does with the dirty map pages in SRAM (a volatile
    /// cache only): `"program_dirty"` (default) programs every one back to
    /// NAND before the flush completes — "FLUSH command requires for FTL to
    /// write its metadata" (AOSP device/google/crosshatch commit e02e4813,
    /// where skipping flushes tripled random-write speed) — or `"keep"`
    /// leaves them in SRAM until evicted. Which the 2010-2013 eMMC parts
    /// did is not in the sources at hand \[uncertain: keep | program_dirty\].
    #[serde(default)]
    pub on_flush: FlushMetadata,
}

/// The firmware's policy for dirty mapping metadata at FLUSH_CACHE.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FlushMetadata {
    /// Dirty map pages stay in SRAM (programmed when evicted).
    Keep,
    /// Dirty map pages are programmed before the flush completes.
    #[default]
    ProgramDirty,
}

/// Controller read buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadBufferConfig {
    /// NAND pages (of `page_kib`) the buffer holds.
    pub pages: u32,
    /// Data prefetched ahead of a detected stream the buffer follows, in
    /// KiB (0 = off).
    pub prefetch_kib: u32,
    /// Streams the read buffer follows: `"forward"` (ascending only),
    /// `"both"` (ascending and descending) or `"none"` (default forward).
    #[serde(default)]
    pub stream_direction: Direction,
}

/// Controller write buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteBufferConfig {
    /// Buffer size in KiB (a multiple of 4, at least one full stripe page).
    pub size_kib: u32,
    /// True: eMMC 4.5 volatile cache (data is safe only after a flush or FUA).
    /// False: power-protected buffer (data is safe once buffered).
    pub volatile: bool,
    /// eMMC 4.5 CACHE_CTRL (EXT_CSD 33) bit 0, set by the host (Linux 3.x
    /// `mmc_init_card` turns the cache on when CACHE_SIZE ≠ 0). False: the
    /// cache is off — every write completes once its data is programmed
    /// (a partial stripe page padded) and the driver issues no
    /// FLUSH_CACHE. Default true.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub enabled: bool,
    /// When the firmware acknowledges a plain write (ends its busy) with
    /// the cache on: `"transfer"` (default) once its data is in the buffer
    /// — the eMMC 4.5 volatile cache as JEDEC describes it, durable only
    /// after FLUSH_CACHE or a reliable write — or `"program"` once its data
    /// is programmed (a partial stripe page padded, or logged when
    /// `slc_log`): firmware that uses the buffer only to gather a command's
    /// data and commits every write before acknowledging it, so the host
    /// sees write-through behaviour whatever CACHE_CTRL says. Which one a
    /// given part did is rarely documented; profiles declare it.
    #[serde(default, skip_serializing_if = "WriteAck::is_transfer")]
    pub write_ack: WriteAck,
    /// SLC-mode log (`device::slc_log`): a FLUSH_CACHE, a reliable write or
    /// (cache off) any write that finds less than a stripe page cached
    /// makes it durable by an SLC-mode program into reserved log blocks
    /// instead of programming the MLC page padded; the data reaches its
    /// MLC page when the page fills. Reference §3 "Write buffer": "some
    /// 2013+ parts also stage small writes in an SLC-mode region" (an estimate).
    /// Default false (no profile source states it for a given part).
    #[serde(default, skip_serializing_if = "is_false")]
    pub slc_log: bool,
    /// Program time of one SLC-mode log page, µs; absent = `[nand]
    /// t_prog_lower_us` (SLC mode programs the lower page only) (an estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_prog_slc_us: Option<f64>,
}

/// When the firmware acknowledges a plain write with the cache on
/// ([`WriteBufferConfig::write_ack`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WriteAck {
    /// Once the data is in the buffer.
    #[default]
    Transfer,
    /// Once the data is programmed.
    Program,
}

impl WriteAck {
    /// True for the default (left out of reports).
    pub fn is_transfer(&self) -> bool {
        *self == WriteAck::Transfer
    }
}

impl WriteBufferConfig {
    /// The SLC log's page program time, µs, for NAND lower-page program
    /// time `t_prog_lower_us`.
    pub fn slc_program_us(&self, t_prog_lower_us: f64) -> f64 {
        self.t_prog_slc_us.unwrap_or(t_prog_lower_us)
    }
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Calibration knobs: not mechanisms, reported separately.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalibrationConfig {
    /// Extra firmware time charged when a command's start sector is below the
    /// previous command's, in µs. Default 0: the asymmetry comes from the
    /// mapping cache and read buffer.
    #[serde(default)]
    pub reverse_seek_penalty_us: f64,
    /// How the profile's values were fitted (`[calibration.record]`,
    /// written by `simctl calibrate`): kept with the profile, never read by
    /// the simulation.
    #[serde(default, skip_serializing)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub record: Option<toml::Value>,
}

/// How a scenario prepares the device before measuring (unmeasured, untimed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Precondition {
    /// Fraction of the user capacity written sequentially first (0..=1).
    /// Default 0.8 (a phone that is 80 % full).
    #[serde(default = "default_fill_fraction")]
    pub fill_fraction: f64,
    /// Then overwrite random 4 KiB pages of the filled range until GC reaches
    /// a steady state. Default true.
    #[serde(default = "default_steady_state")]
    pub steady_state: bool,
    /// Upper bound of the random overwrites, as a multiple of the filled
    /// pages. Default 2.0.
    #[serde(default = "default_max_overwrite_factor")]
    pub max_overwrite_factor: f64,
}

fn default_fill_fraction() -> f64 {
    0.8
}
fn default_steady_state() -> bool {
    true
}
fn default_max_overwrite_factor() -> f64 {
    2.0
}

impl Default for Precondition {
    fn default() -> Self {
        Precondition {
            fill_fraction: default_fill_fraction(),
            steady_state: default_steady_state(),
            max_overwrite_factor: default_max_overwrite_factor(),
        }
    }
}

impl Precondition {
    /// Checks ranges; `source` names the file for the message.
    pub fn validate(&self, source: &str) -> Result<()> {
        if !(0.0..=1.0).contains(&self.fill_fraction) {
            return Err(Error::setting(
                source,
                SettingError::Invalid {
                    key: "precondition fill_fraction".into(),
                    value: self.fill_fraction.to_string(),
                    expected: "a fraction in 0..=1".into(),
                },
            ));
        }
        if !(self.max_overwrite_factor >= 0.0 && self.max_overwrite_factor <= 100.0) {
            return Err(Error::setting(
                source,
                SettingError::Invalid {
                    key: "precondition max_overwrite_factor".into(),
                    value: self.max_overwrite_factor.to_string(),
                    expected: "0..=100".into(),
                },
            ));
        }
        Ok(())
    }
}

impl DeviceConfig {
    /// Parses and validates a profile from TOML text; `source_name` (usually
    /// the file name) prefixes every error message.
    pub fn from_toml_str(text: &str, source_name: &str) -> Result<DeviceConfig> {
        let cfg: DeviceConfig = toml::from_str(text)
            .map_err(|e| Error::toml(format!("{source_name}: invalid device profile"), e))?;
        cfg.validate(source_name)?;
        Ok(cfg)
    }

    /// Reads, parses and validates a profile file.
    pub fn load(path: impl AsRef<Path>) -> Result<DeviceConfig> {
        let path = path.as_ref();
        let text = crate::textfile::read_config(path)?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// Raw NAND capacity in bytes (`u64::MAX` when the product does not
    /// fit, which validation refuses: see [`MAX_SLOTS`]).
    pub fn raw_bytes(&self) -> u64 {
        let n = &self.nand;
        [
            n.channels,
            n.dies_per_channel,
            n.planes_per_die,
            n.blocks_per_plane,
            n.pages_per_block,
            n.page_kib,
            1024,
        ]
        .iter()
        .fold(1u64, |acc, &f| acc.saturating_mul(u64::from(f)))
    }

    /// Checks the NAND geometry: every count nonzero, the page size, the
    /// planes, the dies ([`MAX_DIES`]) and the raw array's 4 KiB slots
    /// ([`MAX_SLOTS`]), each product checked without wrapping, before
    /// anything is sized from them.
    fn check_geometry(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let n = &self.nand;
        for (k, v) in [
            ("channels", n.channels),
            ("dies_per_channel", n.dies_per_channel),
            ("planes_per_die", n.planes_per_die),
            ("blocks_per_plane", n.blocks_per_plane),
            ("pages_per_block", n.pages_per_block),
            ("page_kib", n.page_kib),
        ] {
            if v == 0 {
                return err(&format!("[nand] {k}"), "must be nonzero".into());
            }
        }
        if n.page_kib % 4 != 0 || n.page_kib > 64 {
            return err(
                "[nand] page_kib",
                format!(
                    "{}: the page size must be a multiple of 4 KiB (the FTL's mapping unit), at most 64",
                    n.page_kib
                ),
            );
        }
        if n.planes_per_die > 8 {
            return err(
                "[nand] planes_per_die",
                format!("{}: at most 8", n.planes_per_die),
            );
        }
        let dies = u64::from(n.channels) * u64::from(n.dies_per_channel);
        if dies > u64::from(MAX_DIES) {
            return err(
                "[nand] channels × dies_per_channel",
                format!(
                    "{} × {} = {dies} dies: at most {MAX_DIES} are supported",
                    n.channels, n.dies_per_channel
                ),
            );
        }
        let slots = self.raw_bytes() / 4096;
        if slots > MAX_SLOTS {
            let raw = if self.raw_bytes() == u64::MAX {
                "more than 2^64 bytes".to_string()
            } else {
                format!("{} GiB", self.raw_bytes() >> 30)
            };
            return err(
                "[nand]",
                format!(
                    "channels × dies_per_channel × planes_per_die × blocks_per_plane × pages_per_block × page_kib = {raw} raw, {slots} 4 KiB slots: at most {MAX_SLOTS} (2^28, 1 TiB raw) are supported (the mapping tables take about 16 bytes per slot)"
                ),
            );
        }
        Ok(())
    }

    /// Checks the controller's SRAM structures — map cache, read buffer,
    /// write buffer — against their limits before anything is allocated
    /// from them.
    fn check_buffers(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let e = self.map_cache.entries;
        if !(1..=MAX_MAP_CACHE_ENTRIES).contains(&e) {
            return err(
                "[map_cache] entries",
                format!("{e}: expected 1..={MAX_MAP_CACHE_ENTRIES} map pages (4 KiB each; the limit caches the whole table of a 4 TiB device)"),
            );
        }
        let r = &self.read_buffer;
        if !(1..=MAX_READ_BUFFER_PAGES).contains(&r.pages) {
            return err(
                "[read_buffer] pages",
                format!(
                    "{}: expected 1..={MAX_READ_BUFFER_PAGES} NAND pages",
                    r.pages
                ),
            );
        }
        if r.prefetch_kib > MAX_PREFETCH_KIB {
            return err(
                "[read_buffer] prefetch_kib",
                format!("{}: expected 0..={MAX_PREFETCH_KIB} KiB", r.prefetch_kib),
            );
        }
        let stripe_kib = self.nand.page_kib * self.nand.planes_per_die;
        let w = self.write_buffer.size_kib;
        if w % 4 != 0 || w < stripe_kib || w > MAX_WRITE_BUFFER_KIB {
            return err(
                "[write_buffer] size_kib",
                format!(
                    "{w}: must be a multiple of 4, hold at least one stripe page (planes × page = {stripe_kib} KiB) and be at most {MAX_WRITE_BUFFER_KIB} KiB (1 GiB)"
                ),
            );
        }
        Ok(())
    }

    /// `[ftl] atomic_write` needs the page mapping (X-FTL keeps a
    /// transaction's old and new page copies side by side, which a
    /// block-mapped log or a demand-cached map does not model).
    fn check_atomic_write(&self, src: &str) -> Result<()> {
        let f = &self.ftl;
        if f.atomic_write && f.mapping != MappingScheme::Page {
            return Err(field_error(
                src,
                "[ftl] atomic_write",
                format!(
                    "true needs mapping = \"page\" (X-FTL is a transactional page mapping); this profile has mapping = \"{}\"",
                    match f.mapping {
                        MappingScheme::Page => "page",
                        MappingScheme::Hybrid => "hybrid",
                        MappingScheme::Dftl => "dftl",
                    }
                ),
            ));
        }
        if !(1..=64).contains(&f.atomic_commit_map_pages) {
            return Err(Error::setting(
                src,
                SettingError::Invalid {
                    key: "[ftl] atomic_commit_map_pages".into(),
                    value: f.atomic_commit_map_pages.to_string(),
                    expected: "1 to 64 map pages per commit".into(),
                },
            ));
        }
        Ok(())
    }

    /// Checks ranges and geometry; errors name the file, section and key.
    pub fn validate(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        self.power_loss.validate(src)?;
        let b = &self.bus;
        if !(b.clock_mhz > 0.0 && b.clock_mhz <= 400.0) {
            return err(
                "[bus] clock_mhz",
                format!("{} is outside 0..=400 MHz", b.clock_mhz),
            );
        }
        if ![1, 4, 8].contains(&b.width_bits) {
            return err(
                "[bus] width_bits",
                format!("{}: expected 1, 4 or 8", b.width_bits),
            );
        }
        if b.cmd_response_bits == 0 || b.cmd_response_bits > 1000 {
            return err(
                "[bus] cmd_response_bits",
                format!("{}: expected 1..=1000 bits", b.cmd_response_bits),
            );
        }
        if !(self.controller.fw_cmd_us >= 0.0 && self.controller.fw_cmd_us < 1e6) {
            return err(
                "[controller] fw_cmd_us",
                format!("{}: expected 0..1e6 µs", self.controller.fw_cmd_us),
            );
        }
        self.check_geometry(src)?;
        self.check_buffers(src)?;
        let n = &self.nand;
        for (k, v) in [
            ("t_r_us", n.t_r_us),
            ("t_r_upper_us", n.t_r_upper_us.unwrap_or(n.t_r_us)),
            ("t_prog_lower_us", n.t_prog_lower_us),
            ("t_prog_upper_us", n.t_prog_upper_us),
            ("t_bers_us", n.t_bers_us),
        ] {
            if !(v > 0.0 && v < 1e6) {
                return err(
                    &format!("[nand] {k}"),
                    format!("{v}: expected 0 < µs < 1e6"),
                );
            }
        }
        if !(n.channel_mt_per_s > 0.0 && n.channel_mt_per_s <= 10_000.0) {
            return err(
                "[nand] channel_mt_per_s",
                format!("{}: expected 0 < MT/s <= 10000", n.channel_mt_per_s),
            );
        }
        let op = self.ftl.over_provisioning;
        if !(0.0..0.5).contains(&op) {
            return err(
                "[ftl] over_provisioning",
                format!("{op}: expected 0 <= op < 0.5"),
            );
        }
        self.check_mapping_sections(src)?;
        self.check_atomic_write(src)?;
        self.check_gc_thresholds(src)?;
        if self.ftl.mapping != MappingScheme::Hybrid {
            self.check_victims_exist(src)?;
        }
        self.check_wear_leveling_and_slc_log(src)?;
        self.check_cmdq(src)?;
        self.check_bkops(src)?;
        self.check_gc_bounds(src)?;
        self.check_features(src)?;
        self.validate_erase(src)?;
        let r = self.calibration.reverse_seek_penalty_us;
        if !(0.0..1e6).contains(&r) {
            return err(
                "[calibration] reverse_seek_penalty_us",
                format!("{r}: expected 0 <= µs < 1e6"),
            );
        }
        Ok(())
    }

    /// Checks `[wear_leveling]` (the static threshold only with static
    /// wear leveling) and the write buffer's SLC log and its program time.
    fn check_wear_leveling_and_slc_log(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let wl = &self.wear_leveling;
        if let Some(t) = wl.static_threshold_erases {
            if !wl.static_wl {
                return err(
                    "[wear_leveling] static_threshold_erases",
                    format!("{t}: has no effect unless static = true"),
                );
            }
            if t == 0 {
                return err(
                    "[wear_leveling] static_threshold_erases",
                    "0: expected at least 1 erase".into(),
                );
            }
        }
        let w = &self.write_buffer;
        if w.slc_log && w.enabled && !w.volatile {
            return err(
                "[write_buffer] slc_log",
                "true on a power-protected buffer (volatile = false): its writes are durable once buffered, so nothing is ever logged; set volatile = true (eMMC 4.5 cache) or enabled = false".into(),
            );
        }
        if let Some(v) = w.t_prog_slc_us {
            if !(v > 0.0 && v < 1e6) {
                return err(
                    "[write_buffer] t_prog_slc_us",
                    format!("{v}: expected 0 < µs < 1e6"),
                );
            }
        }
        Ok(())
    }

    /// Checks `[cmdq]`: the queue depth and the command counts the driver
    /// sends.
    fn check_cmdq(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        if let Some(q) = &self.cmdq {
            if !(2..=32).contains(&q.depth) {
                return err(
                    "[cmdq] depth",
                    format!(
                        "{}: expected 2..=32 tasks (EXT_CSD CMDQ_DEPTH + 1; one slot is kept for direct commands)",
                        q.depth
                    ),
                );
            }
            if q.queue_task_commands != 2 {
                return err(
                    "[cmdq] queue_task_commands",
                    format!(
                        "{}: a task is queued with exactly 2 commands (CMD44 QUEUED_TASK_PARAMS + CMD45 QUEUED_TASK_ADDRESS), which the driver sends",
                        q.queue_task_commands
                    ),
                );
            }
            if q.execute_commands != 1 {
                return err(
                    "[cmdq] execute_commands",
                    format!(
                        "{}: a task's data phase starts with exactly 1 command (CMD46 EXECUTE_READ_TASK / CMD47 EXECUTE_WRITE_TASK), which the driver sends",
                        q.execute_commands
                    ),
                );
            }
        }
        Ok(())
    }

    /// Checks incremental and idle GC and the stated bounds.
    fn check_gc_bounds(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let g = &self.gc;
        if let Some(b) = g.copy_budget_pages {
            if b == 0 || b > self.nand.pages_per_block {
                return err(
                    "[gc] copy_budget_pages",
                    format!(
                        "{b}: expected 1..={} stripe pages (a block's pages)",
                        self.nand.pages_per_block
                    ),
                );
            }
        }
        if let Some(ms) = g.idle_gc_after_ms {
            if !(ms.is_finite() && ms >= 0.0) || g.copy_budget_pages.is_none() {
                return err(
                    "[gc] idle_gc_after_ms",
                    format!("{ms}: expected a finite idle time ≥ 0 ms, with copy_budget_pages set"),
                );
            }
        }
        if let Some(ms) = g.pause_bound_ms {
            if !(ms.is_finite() && ms > 0.0) {
                return err(
                    "[gc] pause_bound_ms",
                    format!("{ms}: expected a finite time > 0 ms"),
                );
            }
        }
        if let Some(w) = g.waf_bound {
            if !(w.is_finite() && w >= 1.0) {
                return err(
                    "[gc] waf_bound",
                    format!("{w}: expected a finite write amplification ≥ 1"),
                );
            }
        }
        Ok(())
    }

    /// Checks the BKOPS target against the background switch, the GC stop
    /// threshold and (hybrid mapping) the free pool's range.
    fn check_bkops(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        if self.gc.background && self.ftl.mapping == MappingScheme::Hybrid {
            // The hybrid free pool: planes × spare superblocks neither
            // reserved for the sequential log block nor holding a random
            // one (see `HybridMapping::min_free_blocks_per_die`).
            let units = self.nand.blocks_per_plane;
            let spare = units - ftl::hybrid::logical_blocks(units, self.ftl.over_provisioning);
            let h = self.ftl.hybrid();
            let planes = self.nand.planes_per_die;
            let lo = planes * spare.saturating_sub(h.random_log_blocks + h.sequential_log_blocks);
            let hi = planes * spare.saturating_sub(h.sequential_log_blocks);
            let ok = self
                .gc
                .bkops_target_free_blocks_per_die
                .is_some_and(|t| lo < t && t <= hi);
            if !ok {
                return err(
                    "[gc] bkops_target_free_blocks_per_die",
                    format!(
                        "{}: with mapping = \"hybrid\" BKOPS reclaims random log blocks while the free pool (planes × spare superblocks neither reserved for the sequential log block nor holding a random one) is below this target, and the pool runs from {lo} blocks per die (every random log block open) to {hi} (none): set a target above {lo} and at most {hi}; {planes} × (spare {spare} − 1 sequential − k) keeps at most k random log blocks open",
                        self.gc
                            .bkops_target_free_blocks_per_die
                            .map_or("unset".to_string(), |t| t.to_string())
                    ),
                );
            }
        }
        if let Some(t) = self.gc.bkops_target_free_blocks_per_die {
            if !self.gc.background {
                return err(
                    "[gc] bkops_target_free_blocks_per_die",
                    "set but background = false".to_string(),
                );
            }
            if self.ftl.mapping != MappingScheme::Hybrid
                && (t <= self.gc.stop_at_free_blocks_per_die
                    || t >= self.nand.planes_per_die * self.nand.blocks_per_plane)
            {
                return err(
                    "[gc] bkops_target_free_blocks_per_die",
                    format!(
                        "{t}: expected above stop_at_free_blocks_per_die ({}) and below the blocks per die",
                        self.gc.stop_at_free_blocks_per_die
                    ),
                );
            }
        }
        Ok(())
    }

    /// Checks `[features]`: packed-command limits, the FUA path on a CMDQ
    /// card, REL_WR_SEC_C and the HPI cost.
    fn check_features(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        if let Some(m) = self.features.max_packed_writes {
            if !self.features.packed || !(2..=MAX_PACKED_ENTRIES).contains(&m) {
                return err(
                    "[features] max_packed_writes",
                    format!("{m}: expected 2..={MAX_PACKED_ENTRIES} commands (the entries a 512-byte packed header holds), with packed = true"),
                );
            }
        }
        if let Some(m) = self.features.max_packed_reads {
            if !self.features.packed_read || !(2..=MAX_PACKED_ENTRIES).contains(&m) {
                return err(
                    "[features] max_packed_reads",
                    format!("{m}: expected 2..={MAX_PACKED_ENTRIES} commands (the entries a 512-byte packed header holds), with packed_read = true"),
                );
            }
        }
        if self.cmdq.is_some() && self.features.fua_path() != FuaPath::ReliableWrite {
            return err(
                "[features] reliable_write / rel_wr_sec_c",
                "a command-queueing card ([cmdq], eMMC 5.1) has enhanced reliable write (a task's REL_WR bit in CMD44); a FUA task followed by a queue-draining flush, or legacy reliable write, is not modelled on the CMDQ driver: remove the key".to_string(),
            );
        }
        if let Some(n) = self.features.rel_wr_sec_c {
            if self.features.reliable_write == Some(false) || !(1..=256).contains(&n) {
                return err(
                    "[features] rel_wr_sec_c",
                    format!("{n}: expected 1..=256 sectors, with reliable_write not false"),
                );
            }
        }
        if let Some(h) = self.features.hpi_us {
            if !(h.is_finite() && (0.0..=100_000.0).contains(&h)) {
                return err("[features] hpi_us", format!("{h}: expected 0..=100000 µs"));
            }
            if !self.features.hpi {
                return err(
                    "[features] hpi_us",
                    "set but hpi = false: enable hpi or remove hpi_us".to_string(),
                );
            }
        }
        Ok(())
    }

    /// Checks the GC thresholds against the planes and the blocks per die,
    /// and that over-provisioning leaves GC the spare blocks they need
    /// (page-level mappings). Call after [`Self::check_geometry`].
    fn check_gc_thresholds(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let (n, op) = (&self.nand, self.ftl.over_provisioning);
        let g = &self.gc;
        let p = n.planes_per_die;
        if g.start_below_free_blocks_per_die < 2 * p {
            return err(
                "[gc] start_below_free_blocks_per_die",
                format!(
                    "{}: must be at least 2 × planes_per_die = {} (one block per plane for the host and the GC write point)",
                    g.start_below_free_blocks_per_die,
                    2 * p
                ),
            );
        }
        let blocks_per_die = n.blocks_per_plane * p;
        if g.stop_at_free_blocks_per_die > blocks_per_die {
            return err(
                "[gc] stop_at_free_blocks_per_die",
                format!(
                    "{}: expected at most the blocks per die (planes_per_die × blocks_per_plane = {blocks_per_die})",
                    g.stop_at_free_blocks_per_die
                ),
            );
        }
        if g.stop_at_free_blocks_per_die < g.start_below_free_blocks_per_die {
            return err(
                "[gc] stop_at_free_blocks_per_die",
                format!(
                    "{} is below start_below_free_blocks_per_die = {}",
                    g.stop_at_free_blocks_per_die, g.start_below_free_blocks_per_die
                ),
            );
        }
        let spare = (blocks_per_die as f64 * op).floor() as u32;
        let need = u64::from(g.stop_at_free_blocks_per_die) + 2 * u64::from(p) + 1;
        if self.ftl.mapping == MappingScheme::Hybrid {
            // Merges, not page-level GC, reclaim space: checked above.
        } else if u64::from(spare) < need {
            return err(
                "[ftl] over_provisioning",
                format!(
                    "{op} leaves {spare} spare blocks per die; GC needs at least stop_at_free_blocks_per_die + 2 × planes + 1 = {need}: raise over_provisioning or blocks_per_plane, or lower the GC thresholds"
                ),
            );
        }
        Ok(())
    }

    /// Checks `[features] packed` / `packed_read` against the driver the
    /// run uses (`cmdq_driver`: the CMDQ driver queues tasks). Packed
    /// commands are a legacy-driver mechanism: mainline Linux removed
    /// packed-command support (4.11) before it gained eMMC command queueing
    /// (4.15, cqhci), and queued tasks (CMD44/45) are never packed, so a
    /// packing key on a CMDQ run would be accepted with no effect. `src`
    /// names the profile.
    pub fn check_packing_with_driver(&self, src: &str, cmdq_driver: bool) -> Result<()> {
        let f = &self.features;
        let key = match (f.packed, f.packed_read) {
            _ if !cmdq_driver => return Ok(()),
            (true, _) => "packed",
            (false, true) => "packed_read",
            (false, false) => return Ok(()),
        };
        Err(field_error(src, &format!("[features] {key}"), format!(
            "true, but the run uses the CMDQ driver (the profile has [cmdq] and driver.mode is \"auto\" or \"cmdq\"), and packed commands and command queueing are exclusive on the Linux driver (packing was removed in 4.11, before CMDQ came in 4.15; queued tasks are never packed): remove {key}, or set driver.mode = \"legacy\" to pack on this card"
        )))
    }

    /// Checks the erase-class capabilities of `[features]` against the
    /// stated eMMC version and the mapping scheme.
    fn validate_erase(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let f = &self.features;
        if let Some(v) = f.emmc_version.as_deref() {
            if f.version_rank().is_none() {
                return err(
                    "[features] emmc_version",
                    format!("\"{v}\": expected one of {}", EMMC_VERSIONS.join(", ")),
                );
            }
            let claims = [
                (
                    "packed_read",
                    Some(f.packed_read),
                    "4.5",
                    "the packed command (PACKED_COMMAND)",
                ),
                ("discard", f.discard, "4.5", "DISCARD"),
                ("trim", f.trim, "4.41", "TRIM (SEC_GB_CL_EN)"),
                ("sanitize", f.sanitize, "4.5", "SANITIZE"),
            ];
            for (key, set, since, what) in claims {
                if set == Some(true) && f.version_at_least(since) == Some(false) {
                    return err(
                        &format!("[features] {key}"),
                        format!("true, but {what} exists from eMMC {since} on and emmc_version is \"{v}\""),
                    );
                }
            }
        }
        if f.can_sanitize() && !f.can_trim() {
            return err(
                "[features] sanitize",
                "true, but the card has no TRIM: the driver trims the unaligned part of a secure discard before SANITIZE_START (eMMC 4.5 has both); set trim = true".to_string(),
            );
        }
        if let Some(g) = f.erase_group_kib {
            let raw_kib = self.raw_bytes() / 1024;
            if g == 0 || g % 4 != 0 || g as u64 > raw_kib {
                return err(
                    "[features] erase_group_kib",
                    format!("{g}: expected a positive multiple of 4 KiB, at most the array's {raw_kib} KiB"),
                );
            }
        }
        Ok(())
    }

    /// Erase group of this card, in 512-byte sectors (see
    /// [`FeaturesConfig::erase_group_kib`]).
    pub fn erase_group_sectors(&self) -> u64 {
        let kib = self.features.erase_group_kib.map_or(
            self.nand.planes_per_die as u64
                * self.nand.pages_per_block as u64
                * self.nand.page_kib as u64,
            u64::from,
        );
        kib * 2
    }

    /// Checks the `[ftl.hybrid]` / `[ftl.dftl]` sections: only with their
    /// scheme, in range, and (hybrid) enough spare superblocks for the log
    /// blocks and a merge.
    fn check_mapping_sections(&self, src: &str) -> Result<()> {
        let err = |key: &str, problem: String| Err(field_error(src, key, problem));
        let f = &self.ftl;
        if f.hybrid.is_some() && f.mapping != MappingScheme::Hybrid {
            return err(
                "[ftl.hybrid]",
                format!(
                    "has no effect with mapping = \"{}\": remove it or use mapping = \"hybrid\"",
                    f.mapping.name()
                ),
            );
        }
        if f.dftl.is_some() && f.mapping != MappingScheme::Dftl {
            return err(
                "[ftl.dftl]",
                format!(
                    "has no effect with mapping = \"{}\": remove it or use mapping = \"dftl\"",
                    f.mapping.name()
                ),
            );
        }
        match f.mapping {
            MappingScheme::Page => Ok(()),
            MappingScheme::Hybrid => {
                let h = f.hybrid();
                if h.sequential_log_blocks != 1 {
                    return err(
                        "[ftl.hybrid] sequential_log_blocks",
                        format!(
                            "{}: the FAST scheme keeps exactly 1 sequential log block",
                            h.sequential_log_blocks
                        ),
                    );
                }
                let units = self.nand.blocks_per_plane;
                let lbns = ftl::hybrid::logical_blocks(units, f.over_provisioning);
                // Incremental merging keeps a merge's retired sequential log
                // block until the merge ends while a new one opens: one
                // superblock more.
                let merge = if self.gc.copy_budget_pages.is_some() {
                    2
                } else {
                    1
                };
                let need =
                    u64::from(h.random_log_blocks) + u64::from(h.sequential_log_blocks) + merge;
                if h.random_log_blocks == 0 || u64::from(units - lbns) < need {
                    return err(
                        "[ftl.hybrid] random_log_blocks",
                        format!(
                            "{}: expected at least 1, and the {} spare superblocks (blocks_per_plane {units} − {lbns} logical blocks at over_provisioning {}) must hold the random and sequential log blocks plus {merge} merge superblock(s) = {need}: lower random_log_blocks or raise over_provisioning",
                            h.random_log_blocks,
                            units - lbns,
                            f.over_provisioning
                        ),
                    );
                }
                let capacity = self.nand.dies_per_channel
                    * self.nand.channels
                    * self.nand.pages_per_block
                    * (self.nand.planes_per_die * self.nand.page_kib / 4);
                if let Some(k) = h.log_associativity.limit() {
                    if k == 0 || k > capacity {
                        return err(
                            "[ftl.hybrid] log_associativity",
                            format!(
                                "{k}: expected \"full\" or 1..={capacity} logical blocks (a random log block holds {capacity} 4 KiB pages)"
                            ),
                        );
                    }
                }
                Ok(())
            }
            MappingScheme::Dftl => {
                let c = f.dftl().cmt_entries;
                if c == 0 || c > 1 << 24 {
                    return err(
                        "[ftl.dftl] cmt_entries",
                        format!("{c}: expected 1..=16777216 entries"),
                    );
                }
                Ok(())
            }
        }
    }

    /// Checks that over-provisioning leaves garbage collection a victim
    /// worth collecting on some die whenever the host needs space.
    ///
    /// A die cannot take host data only when its host write point is full,
    /// it has at most one free stripe, and no full stripe holds a whole
    /// stripe page of invalid slots (GC collects only such victims). Such a
    /// die holds at most `(stripe_slots − 1) × stripes_per_die` invalid
    /// slots in full stripes plus two stripes of unwritten or invalid slots
    /// (the GC write point and the free stripe; three with the cold write
    /// point of static wear leveling). When the spare slots exceed that
    /// bound summed over the dies, some die always has room.
    fn check_victims_exist(&self, src: &str) -> Result<()> {
        let n = &self.nand;
        let stripe_slots = (n.planes_per_die * n.page_kib / 4) as u64;
        let stripes = n.blocks_per_plane as u64;
        let ppb = n.pages_per_block as u64;
        let dies = (n.channels * n.dies_per_channel) as u64;
        let slots = self.raw_bytes() / 4096;
        let op = self.ftl.over_provisioning;
        let spare = slots - ftl::user_lpns(slots as u32, op) as u64;
        let open = if self.wear_leveling.static_wl { 3 } else { 2 };
        let per_die = (stripe_slots - 1) * stripes + open * stripe_slots * ppb;
        let need = dies * per_die + 1;
        if spare >= need {
            return Ok(());
        }
        let min_op = (need as f64 / slots as f64 * 1e4).ceil() / 1e4;
        Err(field_error(src, "[ftl] over_provisioning", format!(
            "{op} leaves {spare} spare 4 KiB slots; garbage collection always finds a victim with a whole stripe page invalid only with more than dies × ((slots per stripe page − 1) × stripes per die + {open} × slots per stripe) = {dies} × ({} × {stripes} + {open} × {}) = {} spare slots: use over_provisioning ≥ {min_op} (or more pages per block)",
            stripe_slots - 1,
            stripe_slots * ppb,
            need - 1
        )))
    }
}

/// The error of `key` in the profile `src`: `problem` gives the value and
/// what was expected.
fn field_error(src: &str, key: &str, problem: String) -> Error {
    Error::setting(
        src,
        SettingError::Field {
            key: key.to_string(),
            problem,
        },
    )
}
