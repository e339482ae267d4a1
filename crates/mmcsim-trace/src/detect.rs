//! Format detection and the one-stop [`open`].
//!
//! [`detect`] reads the head of a trace once ([`Head`]: 64 lines, or up to
//! 20,000 of ftrace text while looking for events) and lets every
//! registered format ([`crate::registry`]) judge it; the most confident
//! verdict wins ([`crate::Sniff::confidence`]). With the bundled formats
//! the order is: the fio version line; MMC ftrace events; block ftrace
//! events (an ftrace file with both is read as `mmc-ftrace`, the level
//! nearer the device); a Pixel 6a or native CSV header; a BIOTracer line
//! (8 fields: four integers, four decimal times); a blkparse event line;
//! MSR CSV (7 fields, `Read`/`Write`); SPC CSV; then the 5-column ASCII
//! simulators, told apart by content and file name ([`crate::ascii5`]:
//! force the format with [`OpenOptions::format`] when the name does not
//! tell).

use std::path::Path;
use std::sync::Arc;

use crate::common::{show, Filtered, Source};
use crate::error::{Error, Result};
use crate::format::{Format, Sniff};
use crate::head::Head;
use crate::{TimeUnit, TraceReader};

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

/// Detects the format of `source`.
pub fn detect_source(source: &Source) -> Result<Format> {
    detect_explained(source).map(|(f, _)| f)
}

/// Detects the format of `source` and says why it was chosen (for
/// `simctl trace inspect`): every registered format judges the head, and
/// the most confident verdict wins (the registry's order breaks ties).
pub fn detect_explained(source: &Source) -> Result<(Format, String)> {
    detect_among(source, Format::all())
}

/// As [`detect_explained`], trying only `formats` (for example the
/// registry's with a tool's own formats added); messages list their names.
pub fn detect_among(source: &Source, formats: &[Format]) -> Result<(Format, String)> {
    let names = || {
        let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
        names.join(", ")
    };
    let source = &crate::blktrace_bin::resolve(source);
    let Some(head) = Head::read(source, formats)? else {
        return Err(undetectable(
            source.path(),
            format!(
                "empty trace: cannot detect its format (known formats: {})",
                names()
            ),
        ));
    };
    let mut best: Option<(Format, Sniff)> = None;
    for &f in formats {
        if let Some(s) = f.def().sniff(&head) {
            if best
                .as_ref()
                .is_none_or(|(_, b)| s.confidence > b.confidence)
            {
                best = Some((f, s));
            }
        }
    }
    match best {
        Some((f, s)) => s.verdict.map(|why| (f, why)),
        None if head.is_binary() => Err(crate::binary::error(source.path(), head.raw())),
        None => Err(undetectable(
            source.path(),
            format!(
                "cannot detect the trace format from `{}`: it matches none of {}; force one with a format option",
                show(head.first()),
                names()
            ),
        )),
    }
}

/// The error for a trace at `path` whose format cannot be told.
fn undetectable(path: &Path, message: String) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        line: 1,
        field: "format".into(),
        message,
    }
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
    let source = &crate::blktrace_bin::resolve(source);
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

    fn detected(text: &str, name: &str) -> Result<&'static str> {
        detect_bytes(text.as_bytes(), name).map(Format::name)
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
            assert_eq!(ok.unwrap(), "ssdsim", "{name}");
        }
        let dis = detected("26214000 0 303574 7 3\n", "x.trace");
        assert_eq!(dis.unwrap(), "disksim");
        let dis = detected("26214000 0 303574 7 0\n", "disksim.ascii");
        assert_eq!(dis.unwrap(), "disksim", "the name's disksim wins");
        let mq = detected("26214000 0 303574 7 0\n", "ssdsim-vs-disksim.txt");
        assert_eq!(mq.unwrap(), "mqsim", "both names: content decides");
        let dis = detected("12.5 0 303574 7 3\n", "disksim-run.ascii");
        assert_eq!(dis.unwrap(), "disksim");
    }
}
