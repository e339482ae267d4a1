//! BIOTracer logs: the per-request eMMC log of Zhou, Pan, Wang and Xie, "I/O
//! Characteristics of Smartphone Applications and Their Implications for
//! eMMC Design" (IISWC 2015), recorded on a Nexus 5 (Android 4.4, Linux 3.4)
//! and published in SNIA IOTTA (`Nexus5_Kernel_BIOTracer_traces`).
//!
//! One request per line, 8 fields separated by whitespace (the published
//! logs use two tabs), as the tool's README describes them:
//! 1. start address, in 512-byte sectors;
//! 2. size, in sectors — "should be times of 8 because basic block size is
//!    4 KB", but the MMC driver adds one sector to some sizes (17 = 16 + 1,
//!    25 = 24 + 1): the **+1 quirk**. A size one more than a multiple of 8
//!    (and above 8) is read as that multiple; the sector is counted
//!    ([`BiotracerParser::quirk_sectors`]). The extra block matches the
//!    512-byte header an eMMC 4.5 packed write carries (the Nexus 5 kernel's
//!    host driver sets `MMC_CAP2_PACKED_WR`) — an interpretation, not stated
//!    by the tool;
//! 3. size in bytes (= sectors × 512, the quirk included; checked);
//! 4. flags: bit 0 = write (else read), bit 2 = the request did not wait in
//!    the queue (it found the queue empty); `0`, `1`, `4` or `5`;
//! 5. generate time: the request was made and queued, s;
//! 6. driver-fetch time: the MMC driver took it off the queue, s;
//! 7. hardware-submit time: the driver issued it to the host controller, s;
//! 8. finish time: the completion callback ran, s.
//!
//! The record's `time_ns` is the generate time; `done_ns` the finish;
//! `fetch_ns` and `device_start_ns` the driver-fetch and hardware-submit
//! times, so a replay can set the recorded device service (hardware submit
//! → finish) beside the simulated one. The four times must not decrease
//! along a line. Records carry no process (BIOTracer logs none).
//!
//! ```text
//! 4220896 ⇥⇥ 8 ⇥⇥ 4096 ⇥⇥ 5 ⇥⇥ 1398406382.756832267 ⇥⇥ 1398406382.757233725 ⇥⇥ 1398406382.757241486 ⇥⇥ 1398406382.757950028
//! ```
//! (`⇥⇥`: two tabs.)

use super::common::{split_ws, Cx, LineParser, Source, TextReader};
use super::{TimeUnit, TraceRecord};
use crate::error::Result;
use crate::format::{Sniff, TraceFormat};
use crate::head::{is_decimal, is_digits, Head};
use crate::TraceReader;
use mmcsim_types::{Ns, Op};

/// The default time unit (seconds, from the log's clock).
pub const DEFAULT_UNIT: TimeUnit = TimeUnit::S;

/// BIOTracer per-request eMMC log, for the registry ([`crate::registry`]).
#[derive(Clone, Copy, Debug)]
pub struct Biotracer;

impl TraceFormat for Biotracer {
    fn name(&self) -> &'static str {
        "biotracer"
    }

    fn description(&self) -> &'static str {
        "BIOTracer eMMC log (Nexus 5, IISWC 2015): sector, sectors (8k+1 read as 8k: the driver's extra sector), bytes, flags (bit 0 write, bit 2 no wait), generate / fetch / submit / finish times in s"
    }

    fn example(&self) -> &'static str {
        "4220896\t\t8\t\t4096\t\t5\t\t1398406382.756832267\t\t1398406382.757233725\t\t1398406382.757241486\t\t1398406382.757950028"
    }

    fn default_time_unit(&self) -> Option<TimeUnit> {
        Some(DEFAULT_UNIT)
    }

    fn sniff(&self, head: &Head) -> Option<Sniff> {
        let (f, n) = head.ws_fields::<9>();
        if !(n == 8 && f[..4].iter().all(|t| is_digits(t)) && f[4..8].iter().all(|t| is_decimal(t)))
        {
            return None;
        }
        Sniff::matched(
            50,
            "the first record has 8 fields: four integers (sector sectors bytes flags) and four decimal times (BIOTracer)",
        )
    }

    fn open(&self, source: &Source, unit: TimeUnit) -> Result<Box<dyn TraceReader>> {
        Ok(Box::new(open(source, unit)?))
    }
}

/// Sectors of a 4 KiB block, the unit BIOTracer's sizes come in.
const BLOCK_SECTORS: u32 = 8;

/// Flag bit: a write (clear: a read).
pub const FLAG_WRITE: u64 = 1;
/// Flag bit: the request did not wait in the queue.
pub const FLAG_NO_WAIT: u64 = 4;

/// The time fields after the flags, in order.
const TIMES: [&str; 4] = ["generate", "fetch", "submit", "finish"];

/// Streaming reader of BIOTracer logs.
pub type BiotracerReader = TextReader<BiotracerParser>;

/// Line parser of BIOTracer logs.
#[derive(Debug, Default)]
pub struct BiotracerParser {
    quirk: u64,
}

/// Opens a BIOTracer log reading times in `unit`.
pub fn open(source: &Source, unit: TimeUnit) -> Result<BiotracerReader> {
    TextReader::new(source, BiotracerParser::default(), unit)
}

/// The size in sectors with the driver's extra sector removed, and whether
/// one was removed: a size of `8k + 1` sectors (k ≥ 1) is `8k`.
pub fn strip_quirk(sectors: u32) -> (u32, bool) {
    if sectors > BLOCK_SECTORS && sectors % BLOCK_SECTORS == 1 {
        (sectors - 1, true)
    } else {
        (sectors, false)
    }
}

impl BiotracerParser {
    /// Sectors removed so far as the driver's +1 quirk (one per quirky
    /// record).
    pub fn quirk_sectors(&self) -> u64 {
        self.quirk
    }
}

impl LineParser for BiotracerParser {
    fn format_name(&self) -> &'static str {
        "biotracer"
    }

    fn parse(&mut self, line: &[u8], cx: &Cx) -> Result<Option<TraceRecord>> {
        let mut f = [&[][..]; 9];
        let n = split_ws(line, &mut f);
        if n != 8 {
            return Err(cx.err(
                "fields",
                format!("expected 8 fields (sector sectors bytes flags generate fetch submit finish), found {n}"),
            ));
        }
        let sector = cx.uint(f[0], "sector")?;
        let raw = cx.u32(f[1], "sectors")?;
        let bytes = cx.uint(f[2], "bytes")?;
        let flags = cx.uint(f[3], "flags")?;
        if raw == 0 {
            return Err(cx.err("sectors", "expected at least 1 sector, found 0"));
        }
        if bytes != u64::from(raw) * 512 {
            return Err(cx.err(
                "bytes",
                format!(
                    "expected {} (the {raw} sectors × 512 B), found {bytes}",
                    u64::from(raw) * 512
                ),
            ));
        }
        if flags & !(FLAG_WRITE | FLAG_NO_WAIT) != 0 {
            return Err(cx.expected(
                "flags",
                "0, 1, 4 or 5 (bit 0 = write, bit 2 = did not wait)",
                f[3],
            ));
        }
        let mut t: [Ns; 4] = [0; 4];
        for (i, name) in TIMES.iter().enumerate() {
            t[i] = cx.time(f[4 + i], name, cx.unit)?;
            if i > 0 && t[i] < t[i - 1] {
                return Err(cx.err(
                    name,
                    format!(
                        "the {name} time is earlier than the {} time on this line; expected generate ≤ fetch ≤ submit ≤ finish",
                        TIMES[i - 1]
                    ),
                ));
            }
        }
        let (sectors, quirk) = strip_quirk(raw);
        if sector.checked_add(u64::from(sectors)).is_none() {
            return Err(cx.err("sector", "sector + sectors overflows a 64-bit address"));
        }
        self.quirk += u64::from(quirk);
        let op = if flags & FLAG_WRITE != 0 {
            Op::Write
        } else {
            Op::Read
        };
        let mut r = TraceRecord::new(cx.line, t[0], op, sector, sectors);
        r.fetch_ns = Some(t[1]);
        r.device_start_ns = Some(t[2]);
        r.done_ns = Some(t[3]);
        Ok(Some(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_more_than_a_multiple_of_eight_loses_its_extra_sector() {
        assert_eq!(strip_quirk(17), (16, true));
        assert_eq!(strip_quirk(73), (72, true));
        assert_eq!(strip_quirk(8), (8, false));
        assert_eq!(strip_quirk(9), (8, true));
        assert_eq!(strip_quirk(1), (1, false));
        assert_eq!(strip_quirk(12), (12, false));
    }
}
