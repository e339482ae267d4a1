//! The 5-column ASCII layout DiskSim, MQSim and SSDSim share (`time device
//! sector sectors type`), and how detection tells them apart.
//!
//! Content only DiskSim can have (a fractional time, a type other than
//! 0/1) is DiskSim unless the file name says SSDSim: then the two disagree
//! and detection refuses, naming `--format`, rather than read SSDSim
//! nanoseconds as DiskSim milliseconds. Integer times with a 0/1 type
//! follow the name (MQSim when it tells nothing): the integer layouts of
//! MQSim, SSDSim and integer-timed DiskSim are indistinguishable by
//! content. The first record alone decides (a malformed later line is
//! then an error of the chosen format at its line, never a silent switch
//! of the whole file to another format).

use std::path::Path;

use crate::common::show;
use crate::error::Error;
use crate::format::Sniff;
use crate::head::{is_decimal, is_digits, Head};

/// How sure detection is of a 5-column layout: the least specific of all.
const CONFIDENCE: u8 = 10;

/// One of the simulators writing the 5-column layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ascii5 {
    /// DiskSim: time in ms (may be fractional), hex flags.
    DiskSim,
    /// MQSim: time in ns, 1 = read / 0 = write.
    MqSim,
    /// SSDSim: time in ns, 1 = read / 0 = write.
    SsdSim,
}

/// The verdict of `who` on `head`: `Some` only when the head's first
/// record has the 5-column layout and the decision names `who` (the
/// refusal of DiskSim content under an SSDSim name is SSDSim's verdict).
pub fn sniff(head: &Head, who: Ascii5) -> Option<Sniff> {
    let (f, n) = head.ws_fields::<9>();
    if !(n == 5 && is_decimal(f[0]) && is_digits(f[1]) && is_digits(f[2]) && is_digits(f[3])) {
        return None;
    }
    let (chosen, verdict) = decide(head.path(), f[0], f[4]);
    (chosen == who).then_some(Sniff {
        confidence: CONFIDENCE,
        verdict,
    })
}

/// The format a file name points to: DiskSim for a name mentioning
/// `disksim`, SSDSim for one mentioning `ssdsim` or ending in `.ascii`
/// (`.gz` aside); `None` when it mentions both or neither.
fn by_name(path: &Path) -> Option<Ascii5> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let stem = name.strip_suffix(".gz").unwrap_or(&name);
    let (ssd, disk) = (name.contains("ssdsim"), name.contains("disksim"));
    match (ssd, disk) {
        (true, true) => None,
        (false, true) => Some(Ascii5::DiskSim),
        _ if ssd || stem.ends_with(".ascii") => Some(Ascii5::SsdSim),
        _ => None,
    }
}

const LAYOUT: &str = "5 whitespace-separated fields (time device sector sectors type)";

/// Decides among the three from the first record's `time` and `kind`
/// (5th field) and the file name at `path`.
fn decide(path: &Path, time: &[u8], kind: &[u8]) -> (Ascii5, crate::Result<String>) {
    let float = time.contains(&b'.');
    let binary = kind == b"0" || kind == b"1";
    let name = by_name(path);
    if float || !binary {
        return disksim_only(path, name, time, kind, float);
    }
    match name {
        Some(Ascii5::DiskSim) => (
            Ascii5::DiskSim,
            Ok(format!("the first record has {LAYOUT} with an integer time and the file name mentions disksim")),
        ),
        Some(_) => (
            Ascii5::SsdSim,
            Ok(format!("the first record has {LAYOUT} with an integer time and a 0/1 type, and the file name mentions ssdsim or ends in .ascii")),
        ),
        None => (
            Ascii5::MqSim,
            Ok(format!("the first record has {LAYOUT} with an integer time and a 0/1 type (MQSim, SSDSim and integer-timed DiskSim look alike: force --format if it is not MQSim)")),
        ),
    }
}

/// The verdict on content only DiskSim has (a fractional `time`, or a
/// `kind` other than 0/1): DiskSim, unless the name says SSDSim.
fn disksim_only(
    path: &Path,
    name: Option<Ascii5>,
    time: &[u8],
    kind: &[u8],
    float: bool,
) -> (Ascii5, crate::Result<String>) {
    let what = if float {
        format!("a fractional time `{}` (DiskSim ms)", show(time))
    } else {
        format!("type `{}`, not 0/1 (DiskSim hex flags)", show(kind))
    };
    if name == Some(Ascii5::SsdSim) {
        return (
            Ascii5::SsdSim,
            Err(Error::Parse {
                path: path.to_path_buf(),
                line: 1,
                field: "format".into(),
                message: format!(
                    "the file name says SSDSim (it mentions ssdsim or ends in .ascii), but the first record has {what}, which SSDSim (integer ns, type 0/1) does not have: choose with --format ssdsim (times in ns) or --format disksim (times in ms)"
                ),
            }),
        );
    }
    (
        Ascii5::DiskSim,
        Ok(format!("the first record has {LAYOUT} with {what}")),
    )
}
