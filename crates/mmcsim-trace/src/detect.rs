//! Format detection and the one-stop [`open`].
//!
//! [`detect`] sniffs the first lines (after gunzip) in this confidence
//! order: the fio version line; MMC ftrace events; block ftrace events (an
//! ftrace file with both is read as `mmc-ftrace`, the level nearer the
//! device; the first 20,000 lines are searched for events); a Pixel 6a or
//! native CSV header; a BIOTracer line (8 fields: four integers, four
//! decimal times); a blkparse event line; MSR CSV (7 fields, `Read`/
//! `Write`); SPC CSV; then the 5-column ASCII simulators: DiskSim when a
//! time has a decimal point or the last field is not 0/1 — refused when
//! the file name says SSDSim (`ssdsim`, `.ascii`), so SSDSim nanoseconds
//! are never read as DiskSim milliseconds — otherwise SSDSim when the name
//! says so, DiskSim when it mentions `disksim`, else MQSim. The integer
//! layouts of MQSim, SSDSim and integer-timed DiskSim are
//! indistinguishable by content: force the format ([`OpenOptions::format`])
//! when the name does not tell.

use std::path::Path;
use std::sync::Arc;

use super::common::{parse_dev, parse_ftrace_line, split_csv, split_ws, Filtered, Lines, Source};
use super::{native_csv, TimeUnit, TraceReader};
use crate::error::{Error, Result, UnknownChoice};

/// A trace format this library reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// The project's own CSV ([`super::native_csv`]).
    Native,
    /// Linux ftrace MMC events ([`super::ftrace_mmc`]).
    MmcFtrace,
    /// Linux ftrace block events ([`super::ftrace_block`]).
    BlockFtrace,
    /// blkparse default text output ([`super::blkparse`]).
    Blkparse,
    /// fio iolog v2/v3 ([`super::fio`]).
    FioIolog,
    /// MSR Cambridge CSV ([`super::msr`]).
    Msr,
    /// SPC / UMass CSV ([`super::spc`]).
    Spc,
    /// DiskSim ASCII ([`super::disksim`]).
    DiskSim,
    /// MQSim ASCII ([`super::mqsim`]).
    MqSim,
    /// SSDSim ASCII ([`super::ssdsim`]).
    SsdSim,
    /// Pixel 6a mobile block I/O CSV ([`super::pixel6a`]).
    Pixel6a,
    /// BIOTracer per-request eMMC log ([`super::biotracer`]).
    Biotracer,
}

/// Name, description and example line of a format, for listings.
#[derive(Clone, Copy, Debug)]
pub struct FormatInfo {
    /// The format.
    pub format: Format,
    /// Stable CLI name.
    pub name: &'static str,
    /// One-line description (fields, units).
    pub description: &'static str,
    /// One example line.
    pub example: &'static str,
}

const INFO: [FormatInfo; 12] = [
    FormatInfo { format: Format::Native, name: "native", description: "mmcsim CSV: header naming time_s|ms|us|ns, op (R/W/D/F), sector, sectors; optional pid, process, sync, done_<unit>, device, flags", example: "time_us,pid,process,op,sector,sectors,sync / 15.5,1203,com.android.chrome,W,90112,8,1" },
    FormatInfo { format: Format::MmcFtrace, name: "mmc-ftrace", description: "ftrace text with mmc_request_start/done (≥4.8) or 3.x mmc_blk_rw_start/end, erase, op and vendor events; s", example: "mmcqd/0-95 [000] ...1 1543.210977: mmc_blk_rw_start: cmd=18,addr=0x001c4a08,size=0x00000040" },
    FormatInfo { format: Format::BlockFtrace, name: "block-ftrace", description: "ftrace text with block_rq_issue / block_rq_complete; s; sectors", example: "mmcqd/0-95 [001] d..2 96.114020: block_rq_issue: 179,0 WS 0 () 5521408 + 8 [mmcqd/0]" },
    FormatInfo { format: Format::Blkparse, name: "blkparse", description: "blkparse default text: D = issue, C = completion; s.ns; sectors; process names", example: "179,0    0      201    12.304580331    95  D  WS 5521408 + 8 [mmcqd/0]" },
    FormatInfo { format: Format::FioIolog, name: "fio-iolog", description: "fio iolog v2 (no times) or v3 (µs timestamps); bytes", example: "410 /dev/block/mmcblk0p23 write 1073741824 4096" },
    FormatInfo { format: Format::Msr, name: "msr", description: "MSR Cambridge CSV: FILETIME (100 ns), host, disk, Read/Write, offset and size in bytes, response time", example: "128166381104021338,src1,2,Write,1073741824,4096,1523" },
    FormatInfo { format: Format::Spc, name: "spc", description: "SPC / UMass CSV: ASU, LBA (512 B), size in bytes, R/W, time in s, optional fields", example: "0,662144,8192,W,12.503990" },
    FormatInfo { format: Format::DiskSim, name: "disksim", description: "DiskSim ASCII: time ms (float), device, block, blocks, hex flags (bit 0 = read)", example: "12.750000\t0\t2097160\t8\t1" },
    FormatInfo { format: Format::MqSim, name: "mqsim", description: "MQSim ASCII: time ns (integer), device, sector, sectors, 1 = read / 0 = write", example: "1250000 0 2097160 8 1" },
    FormatInfo { format: Format::SsdSim, name: "ssdsim", description: "SSDSim ASCII: time ns, device, sector, sectors, 1 = read / 0 = write", example: "26214000 0 303574 7 0" },
    FormatInfo { format: Format::Pixel6a, name: "pixel6a", description: "Pixel 6a CSV (MobileBlockIOTraces, gzip): proces,device,rw_flag,sector,size(sectors),timestamp(s)", example: "loop40-2757,8388608,R,206567552,8,653406.907265" },
    FormatInfo { format: Format::Biotracer, name: "biotracer", description: "BIOTracer eMMC log (Nexus 5, IISWC 2015): sector, sectors (8k+1 read as 8k: the driver's extra sector), bytes, flags (bit 0 write, bit 2 no wait), generate / fetch / submit / finish times in s", example: "4220896\t\t8\t\t4096\t\t5\t\t1398406382.756832267\t\t1398406382.757233725\t\t1398406382.757241486\t\t1398406382.757950028" },
];

impl Format {
    /// Every format, in listing order.
    pub const ALL: [Format; INFO.len()] = {
        let mut all = [Format::Native; INFO.len()];
        let mut i = 0;
        while i < INFO.len() {
            all[i] = INFO[i].format;
            i += 1;
        }
        all
    };

    /// Every format with its name, description and example.
    pub fn all() -> &'static [FormatInfo] {
        &INFO
    }

    fn info(self) -> &'static FormatInfo {
        &INFO[INFO.iter().position(|i| i.format == self).unwrap_or(0)]
    }

    /// Stable CLI name (`native`, `mmc-ftrace`, ...).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Other (lower-case) names accepted for the format.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::Native => &["native-csv", "csv"],
            Format::FioIolog => &["fio"],
            Format::MmcFtrace => &["ftrace-mmc", "mmc"],
            Format::BlockFtrace => &["ftrace-block", "ftrace"],
            _ => &[],
        }
    }

    /// One-line description.
    pub fn description(self) -> &'static str {
        self.info().description
    }

    /// One example line.
    pub fn example(self) -> &'static str {
        self.info().example
    }

    /// The time unit the format's timestamps are read in unless overridden
    /// (`None` for the native CSV, whose header names the unit).
    pub fn default_time_unit(self) -> Option<TimeUnit> {
        Some(match self {
            Format::Native => return None,
            Format::MmcFtrace => super::ftrace_mmc::DEFAULT_UNIT,
            Format::BlockFtrace => super::ftrace_block::DEFAULT_UNIT,
            Format::Blkparse => super::blkparse::DEFAULT_UNIT,
            Format::FioIolog => super::fio::DEFAULT_UNIT,
            Format::Msr => super::msr::DEFAULT_UNIT,
            Format::Spc => super::spc::DEFAULT_UNIT,
            Format::DiskSim => super::disksim::DEFAULT_UNIT,
            Format::MqSim => super::mqsim::DEFAULT_UNIT,
            Format::SsdSim => super::ssdsim::DEFAULT_UNIT,
            Format::Pixel6a => super::pixel6a::DEFAULT_UNIT,
            Format::Biotracer => super::biotracer::DEFAULT_UNIT,
        })
    }

    /// Opens `source` with this format's reader, without filtering; `unit`
    /// overrides the default time unit (ignored by the native CSV).
    pub fn open_source(
        self,
        source: &Source,
        unit: Option<TimeUnit>,
    ) -> Result<Box<dyn TraceReader>> {
        let u = unit.or(self.default_time_unit()).unwrap_or(TimeUnit::Ns);
        Ok(match self {
            Format::Native => Box::new(native_csv::NativeCsvReader::from_reader(
                source.open()?,
                source.path(),
            )?),
            Format::MmcFtrace => Box::new(super::ftrace_mmc::open(source, u)?),
            Format::BlockFtrace => Box::new(super::ftrace_block::open(source, u)?),
            Format::Blkparse => Box::new(super::blkparse::open(source, u)?),
            Format::FioIolog => Box::new(super::fio::open(source, u)?),
            Format::Msr => Box::new(super::msr::open(source, u)?),
            Format::Spc => Box::new(super::spc::open(source, u)?),
            Format::DiskSim => Box::new(super::disksim::open(source, u)?),
            Format::MqSim => Box::new(super::mqsim::open(source, u)?),
            Format::SsdSim => Box::new(super::ssdsim::open(source, u)?),
            Format::Pixel6a => Box::new(super::pixel6a::open(source, u)?),
            Format::Biotracer => Box::new(super::biotracer::open(source, u)?),
        })
    }

    fn names() -> String {
        INFO.iter().map(|i| i.name).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = UnknownChoice;
    /// A format by its name or an alias, in any case.
    fn from_str(s: &str) -> std::result::Result<Format, UnknownChoice> {
        let l = s.to_ascii_lowercase();
        Format::ALL
            .into_iter()
            .find(|f| f.name() == l || f.aliases().contains(&l.as_str()))
            .ok_or_else(|| UnknownChoice {
                what: "trace format",
                found: s.to_string(),
                expected: Format::names(),
            })
    }
}

/// Written as its name (`blkparse`), read from its name or an alias.
impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Format {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The command-line values: every format by its name, aliases accepted.
#[cfg(feature = "clap")]
impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &Format::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).aliases(self.aliases().iter().copied()))
    }
}

/// How [`open`] reads a trace.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// Force a format instead of detecting it.
    pub format: Option<Format>,
    /// Read timestamps in this unit instead of the format's default.
    pub time_unit: Option<TimeUnit>,
    /// Keep only the records of this device id (records without a device
    /// id are kept).
    pub device_id: Option<u32>,
    /// Read every device of a multi-device trace. Without it (and without
    /// `device_id`), a trace with records on more than one device is refused
    /// at the first record of a second device (an error naming its line and
    /// both ids; the trace is not read twice to find them all).
    pub all_devices: bool,
    /// Subtract the first record's time from every time (the subtracted
    /// value stays available as [`TraceReader::first_time_ns`]).
    pub rebase: bool,
}

/// Detects the format of the trace at `path` (gzip or not).
pub fn detect(path: impl AsRef<Path>) -> Result<Format> {
    detect_source(&Source::File(path.as_ref().to_path_buf()))
}

/// Detects the format of in-memory trace bytes named `name`.
pub fn detect_bytes(bytes: &[u8], name: impl AsRef<Path>) -> Result<Format> {
    detect_source(&Source::Memory(
        Arc::from(bytes),
        name.as_ref().to_path_buf(),
    ))
}

fn is_digits(t: &[u8]) -> bool {
    !t.is_empty() && t.iter().all(u8::is_ascii_digit)
}

fn is_decimal(t: &[u8]) -> bool {
    !t.is_empty()
        && t.iter().all(|b| b.is_ascii_digit() || *b == b'.')
        && t.iter().filter(|&&b| b == b'.').count() <= 1
        && t != b"."
}

/// Detects the format of `source`.
pub fn detect_source(source: &Source) -> Result<Format> {
    detect_explained(source).map(|(f, _)| f)
}

/// Detects the format of `source` and says why it was chosen (for
/// `simctl trace inspect`).
pub fn detect_explained(source: &Source) -> Result<(Format, String)> {
    let path = source.path();
    let mut lines = Lines::new(source.open()?, path);
    let mut first: Option<Vec<u8>> = None;
    let mut sample: Vec<Vec<u8>> = Vec::new();
    let mut ftrace_like = false;
    let (mut mmc, mut block) = (false, false);
    let mut n = 0;
    while let Some(line) = lines.next_line()? {
        n += 1;
        if line.is_empty() {
            continue;
        }
        if first.is_none() {
            first = Some(line.to_vec());
            ftrace_like =
                line.starts_with(b"# tracer") || matches!(parse_ftrace_line(line), Ok(Some(_)));
        }
        if sample.len() < 32 && line[0] != b'#' {
            sample.push(line.to_vec());
        }
        if ftrace_like && line[0] != b'#' {
            if let Ok(Some(ev)) = parse_ftrace_line(line) {
                let e = ev.event;
                if e.starts_with(b"mmc_request_")
                    || e.starts_with(b"mmc_blk_")
                    || e == b"mmc_queue_fetch"
                    || e == b"mmc_block_req_done"
                {
                    mmc = true;
                    break;
                }
                if e == b"block_rq_issue" || e == b"block_rq_complete" {
                    block = true;
                }
            }
        }
        if n >= if ftrace_like { 20_000 } else { 64 } {
            break;
        }
    }
    let Some(first) = first else {
        return Err(Error::Parse {
            path: path.to_path_buf(),
            line: 1,
            field: "format".into(),
            message: format!(
                "empty trace: cannot detect its format (known formats: {})",
                Format::names()
            ),
        });
    };
    if first.starts_with(b"fio version ") {
        return Ok((
            Format::FioIolog,
            "the first line is a fio version line".into(),
        ));
    }
    if mmc {
        return Ok((
            Format::MmcFtrace,
            format!("ftrace text with MMC events within the first {n} lines"),
        ));
    }
    if block {
        return Ok((
            Format::BlockFtrace,
            format!("ftrace text with block_rq_issue/complete events (no MMC events) in the first {n} lines"),
        ));
    }
    let data = sample.first().map(Vec::as_slice).unwrap_or(&first);
    let lower = data.to_ascii_lowercase();
    let mut h = [&[][..]; 16];
    let hn = split_csv(&lower, &mut h).min(16);
    let header = &h[..hn];
    let has = |n: &[u8]| header.contains(&n);
    if (has(b"proces") || has(b"process")) && has(b"rw_flag") {
        return Ok((
            Format::Pixel6a,
            "a header with proces and rw_flag columns".into(),
        ));
    }
    if has(b"op") && (has(b"time_s") || has(b"time_ms") || has(b"time_us") || has(b"time_ns")) {
        return Ok((
            Format::Native,
            "a header with op and time_<unit> columns".into(),
        ));
    }
    let mut f = [&[][..]; 9];
    let nf = split_ws(data, &mut f).min(9);
    if nf == 8 && f[..4].iter().all(|t| is_digits(t)) && f[4..8].iter().all(|t| is_decimal(t)) {
        return Ok((
            Format::Biotracer,
            "the first record has 8 fields: four integers (sector sectors bytes flags) and four decimal times (BIOTracer)".into(),
        ));
    }
    if nf >= 6
        && parse_dev(f[0]).is_some()
        && is_digits(f[1])
        && is_digits(f[2])
        && is_decimal(f[3])
        && is_digits(f[4])
        && f[5].len() <= 2
    {
        return Ok((
            Format::Blkparse,
            "the first record is a blkparse event line (major,minor cpu seq time pid action)"
                .into(),
        ));
    }
    let mut c = [&[][..]; 8];
    let nc = split_csv(data, &mut c);
    if nc == 7
        && is_digits(c[0])
        && (c[3].eq_ignore_ascii_case(b"read") || c[3].eq_ignore_ascii_case(b"write"))
    {
        return Ok((
            Format::Msr,
            "the first record has 7 CSV fields with Read/Write".into(),
        ));
    }
    if nc >= 5
        && is_digits(c[0])
        && is_digits(c[1])
        && is_digits(c[2])
        && matches!(c[3], b"R" | b"r" | b"W" | b"w")
        && is_decimal(c[4])
    {
        return Ok((
            Format::Spc,
            "the first record is CSV ASU,LBA,size,R/W,time".into(),
        ));
    }
    if nf == 5 && is_decimal(f[0]) && is_digits(f[1]) && is_digits(f[2]) && is_digits(f[3]) {
        // The first record alone decides (a malformed later line is then
        // an error of the chosen format at its line, never a silent switch
        // of the whole file to another format).
        return ascii5(path, f[0], f[4]);
    }
    Err(Error::Parse {
        path: path.to_path_buf(),
        line: 1,
        field: "format".into(),
        message: format!(
            "cannot detect the trace format from `{}`: it matches none of {}; force one with a format option",
            super::common::show(&first),
            Format::names()
        ),
    })
}

/// The format a file name points to among the 5-column ASCII simulators:
/// DiskSim for a name mentioning `disksim`, SSDSim for one mentioning
/// `ssdsim` or ending in `.ascii` (`.gz` aside); `None` when it mentions
/// both or neither.
fn ascii5_by_name(path: &Path) -> Option<Format> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let stem = name.strip_suffix(".gz").unwrap_or(&name);
    let (ssd, disk) = (name.contains("ssdsim"), name.contains("disksim"));
    match (ssd, disk) {
        (true, true) => None,
        (false, true) => Some(Format::DiskSim),
        _ if ssd || stem.ends_with(".ascii") => Some(Format::SsdSim),
        _ => None,
    }
}

/// Decides among DiskSim, SSDSim and MQSim from the first record's `time`
/// and `kind` (5th field) and the file name. Content only DiskSim can
/// have (a fractional time, a type other than 0/1) is DiskSim unless the
/// name says SSDSim: then the two disagree and detection refuses, naming
/// `--format`, rather than read SSDSim nanoseconds as DiskSim
/// milliseconds. Integer times with a 0/1 type follow the name (MQSim
/// when it tells nothing).
fn ascii5(path: &Path, time: &[u8], kind: &[u8]) -> Result<(Format, String)> {
    let float = time.contains(&b'.');
    let binary = kind == b"0" || kind == b"1";
    let layout = "5 whitespace-separated fields (time device sector sectors type)";
    let by_name = ascii5_by_name(path);
    if float || !binary {
        let what = if float {
            format!(
                "a fractional time `{}` (DiskSim ms)",
                super::common::show(time)
            )
        } else {
            format!(
                "type `{}`, not 0/1 (DiskSim hex flags)",
                super::common::show(kind)
            )
        };
        if by_name == Some(Format::SsdSim) {
            return Err(Error::Parse {
                path: path.to_path_buf(),
                line: 1,
                field: "format".into(),
                message: format!(
                    "the file name says SSDSim (it mentions ssdsim or ends in .ascii), but the first record has {what}, which SSDSim (integer ns, type 0/1) does not have: choose with --format ssdsim (times in ns) or --format disksim (times in ms)"
                ),
            });
        }
        return Ok((
            Format::DiskSim,
            format!("the first record has {layout} with {what}"),
        ));
    }
    Ok(match by_name {
        Some(Format::DiskSim) => (
            Format::DiskSim,
            format!("the first record has {layout} with an integer time and the file name mentions disksim"),
        ),
        Some(_) => (
            Format::SsdSim,
            format!("the first record has {layout} with an integer time and a 0/1 type, and the file name mentions ssdsim or ends in .ascii"),
        ),
        None => (
            Format::MqSim,
            format!("the first record has {layout} with an integer time and a 0/1 type (MQSim, SSDSim and integer-timed DiskSim look alike: force --format if it is not MQSim)"),
        ),
    })
}

/// Opens the trace at `path` (gzip or not) per `opts`: detects the format
/// unless forced, refuses a multi-device trace unless a device is chosen or
/// all are allowed, and applies device filtering and rebasing.
pub fn open(path: impl AsRef<Path>, opts: &OpenOptions) -> Result<Box<dyn TraceReader>> {
    open_source(&Source::File(path.as_ref().to_path_buf()), opts)
}

/// As [`open`], for trace bytes in memory named `name` in messages.
pub fn open_bytes(
    bytes: &[u8],
    name: impl AsRef<Path>,
    opts: &OpenOptions,
) -> Result<Box<dyn TraceReader>> {
    open_source(
        &Source::Memory(Arc::from(bytes), name.as_ref().to_path_buf()),
        opts,
    )
}

/// As [`open`], for any [`Source`].
pub fn open_source(source: &Source, opts: &OpenOptions) -> Result<Box<dyn TraceReader>> {
    let format = match opts.format {
        Some(f) => f,
        None => detect_source(source)?,
    };
    let r = format.open_source(source, opts.time_unit)?;
    let mut f = Filtered::new(r, opts.device_id, opts.rebase);
    if opts.device_id.is_none() && !opts.all_devices {
        f.refuse_second_device();
    }
    Ok(Box::new(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected(text: &str, name: &str) -> Result<Format> {
        detect_bytes(text.as_bytes(), name)
    }

    /// An SSDSim file (by its name) is never read as DiskSim: DiskSim-only
    /// content there is refused, naming `--format`; the same content under
    /// a neutral name is DiskSim, and SSDSim content stays SSDSim.
    #[test]
    fn an_ssdsim_name_never_becomes_disksim() {
        for name in ["x.ascii", "x.ascii.gz", "ssdsim-run.txt", "X.ASCII"] {
            for first in ["26214000 0 303574 7 3", "12.5 0 303574 7 0"] {
                let e = detected(&format!("{first}\n"), name)
                    .unwrap_err()
                    .to_string();
                assert!(
                    e.starts_with(&format!("{name}:1: field `format`:"))
                        && e.contains("--format ssdsim")
                        && e.contains("--format disksim"),
                    "{name} {first}: {e}"
                );
            }
            let ok = detected("26214000 0 303574 7 0\n1 0 1 1 3\n", name);
            assert_eq!(ok.unwrap(), Format::SsdSim, "{name}");
        }
        let dis = detected("26214000 0 303574 7 3\n", "x.trace");
        assert_eq!(dis.unwrap(), Format::DiskSim);
        let dis = detected("26214000 0 303574 7 0\n", "disksim.ascii");
        assert_eq!(dis.unwrap(), Format::DiskSim, "the name's disksim wins");
        let mq = detected("26214000 0 303574 7 0\n", "ssdsim-vs-disksim.txt");
        assert_eq!(mq.unwrap(), Format::MqSim, "both names: content decides");
        let dis = detected("12.5 0 303574 7 3\n", "disksim-run.ascii");
        assert_eq!(dis.unwrap(), Format::DiskSim);
    }
}
