//! The `[power_loss]` section of a device profile: what the card does when
//! its supply fails (`simctl crash`, `run --power-cut`).

use crate::error::{Error, Result, SettingError};
use serde::{Deserialize, Serialize};

/// How the card behaves at a power cut. Every field has a default, and the
/// section is left out of reports when all are at their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PowerLossConfig {
    /// The volatile cache's content (eMMC 4.5 cache: data acknowledged but
    /// not yet programmed) is lost at the cut. Default true: the cache is
    /// SRAM without hold-up [spec: JESD84-B45 §6.6.31 "Cache": data in the
    /// cache is not guaranteed to be written to the non-volatile storage
    /// until FLUSH_CACHE or a reliable write]. False models a part that
    /// dumps its cache on power loss. A power-protected buffer
    /// (`[write_buffer] volatile = false`) never loses its content.
    #[serde(default = "yes")]
    pub cache_lost: bool,
    /// What a NAND program interrupted by the cut leaves in its page:
    /// `"unreadable"` (default: the partly charged cells fail ECC; Zheng et
    /// al., FAST 2013, "bit corruption") or `"shorn"` (the first part of
    /// the stripe page, in proportion to the tPROG elapsed, reads back new,
    /// the rest unreadable: Zheng et al.'s "shorn writes") [uncertain:
    /// unreadable | shorn].
    #[serde(default)]
    pub torn_program: TornProgram,
    /// MLC paired pages: `"word_line"` (default) — an interrupted program
    /// of an upper (MSB) page corrupts the lower (LSB) page of its word
    /// line, programmed earlier and possibly acknowledged long ago (the
    /// pairing of [`crate::device::nand::Geometry::paired_lower_page`])
    /// [src: Grupp et al., "Characterizing flash memory", MICRO 2009: MLC
    /// pages sharing a word line; Zheng et al. FAST 2013 corruption of
    /// data written before the fault]; `"none"` — the firmware backs up the
    /// LSB page before programming its MSB page, or the part is SLC.
    #[serde(default)]
    pub paired_pages: PairedPages,
    /// Power-loss protection (hold-up capacitors), µs: the NAND keeps
    /// running for this long after the cut, so the operations already
    /// booked that finish within it complete; the one running at its end is
    /// interrupted. Default 0 (no protection, phone eMMC) [uncertain:
    /// 0–100000 µs; enterprise SSDs hold up tens of ms].
    #[serde(default)]
    pub capacitor_us: f64,
    /// What a reliable write (CMD23 REL_WR, what Linux sends for FUA)
    /// keeps atomic when cut: `"sector"` — each 512-byte sector holds old
    /// or new data (EXT_CSD WR_REL_PARAM EN_REL_WR = 1, the enhanced
    /// definition of eMMC 4.41+), or `"transfer"` — the whole transfer is
    /// old or new (the legacy definition, in units of REL_WR_SEC_C)
    /// [spec: JESD84-B45 §6.6.9 "Reliable Write"; which one a part
    /// implements is its EXT_CSD; default sector]. Either way an
    /// interrupted reliable write leaves no torn data: the old data stays.
    #[serde(default)]
    pub reliable_write_granularity: RelWrGranularity,
    /// The firmware honours FLUSH_CACHE (programs the cache before
    /// completing it). Default true; false models firmware that
    /// acknowledges a flush at once (Zheng et al. FAST 2013: devices
    /// losing data they had acknowledged as flushed).
    #[serde(default = "yes")]
    pub flush_honoured: bool,
    /// The firmware honours FUA / reliable write on its volatile cache (the
    /// write completes once programmed). Default true; false: a FUA write
    /// completes once cached.
    #[serde(default = "yes")]
    pub fua_honoured: bool,
}

fn yes() -> bool {
    true
}

impl Default for PowerLossConfig {
    fn default() -> Self {
        PowerLossConfig {
            cache_lost: true,
            torn_program: TornProgram::default(),
            paired_pages: PairedPages::default(),
            capacitor_us: 0.0,
            reliable_write_granularity: RelWrGranularity::default(),
            flush_honoured: true,
            fua_honoured: true,
        }
    }
}

impl PowerLossConfig {
    /// True when every field has its default (the section is then left
    /// out of reports).
    pub fn is_default(&self) -> bool {
        *self == PowerLossConfig::default()
    }

    /// Checks ranges; `src` names the profile.
    pub fn validate(&self, src: &str) -> Result<()> {
        if !(self.capacitor_us.is_finite() && (0.0..=1.0e7).contains(&self.capacitor_us)) {
            return Err(Error::setting(
                src,
                SettingError::Invalid {
                    key: "power_loss.capacitor_us".into(),
                    value: self.capacitor_us.to_string(),
                    expected: "µs in 0..=10000000".into(),
                },
            ));
        }
        Ok(())
    }
}

/// What an interrupted program leaves ([`PowerLossConfig::torn_program`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TornProgram {
    /// The whole stripe page fails ECC.
    #[default]
    Unreadable,
    /// A prefix in proportion to the tPROG elapsed reads new data.
    Shorn,
}

/// MLC paired-page exposure ([`PowerLossConfig::paired_pages`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PairedPages {
    /// An interrupted upper-page program corrupts the lower page of its
    /// word line.
    #[default]
    WordLine,
    /// Lower pages are protected (backed up) or the part is SLC.
    None,
}

/// Atomicity unit of a reliable write
/// ([`PowerLossConfig::reliable_write_granularity`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RelWrGranularity {
    /// Each sector is old or new.
    #[default]
    Sector,
    /// The whole transfer is old or new.
    Transfer,
}
