//! Reading the files simctl reads whole — reports, baselines,
//! comparisons, sweep manifests and cells, plot inputs, saved device
//! states — with a size limit checked while reading: a path naming
//! something endless or huge (`/dev/zero`, a trace given for a report) is
//! an [`Unusable`](crate::output::Unusable) error naming the file and the
//! limit, never an unbounded allocation.
//!
//! Configuration files (scenarios, profiles, grids, targets) are read by
//! [`mmcsim::textfile::read_config`] with its own limit.

use crate::output::unusable;
use anyhow::Result;
use mmcsim::config::Scenario;
use std::io::Read;
use std::path::Path;

/// Largest JSON document read: a report, a comparison, a baseline, a
/// sweep manifest, cell or shard record (64 MiB; a report is a few
/// hundred KiB, a comparison of every scheduler a few MiB).
pub const MAX_JSON_BYTES: u64 = 64 << 20;

/// Largest `plot` input (256 MiB: a request log from `--log` is one row of
/// about 60 bytes per request, so some 4 million requests).
pub const MAX_PLOT_INPUT_BYTES: u64 = 256 << 20;

/// Bytes of a saved device state's header (magic, version, geometry,
/// profile hash, payload length, checksum).
const STATE_HEADER_BYTES: usize = 60;

/// Where the header states the payload length.
const STATE_LENGTH_AT: usize = 44;

/// Most payload bytes a saved state may hold per 4 KiB slot of the
/// device's NAND (every mapping stores a few 32-bit words per slot: about
/// 8 bytes for the page mapping; the bound leaves room for DFTL's
/// translation copies), plus [`STATE_FIXED_BYTES`].
pub const STATE_BYTES_PER_SLOT: u64 = 32;

/// The part of a saved state's bound that does not grow with the device
/// (1 MiB).
pub const STATE_FIXED_BYTES: u64 = 1 << 20;

/// `n` bytes in MiB or GiB, for messages.
fn size(n: u64) -> String {
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else {
        format!("{:.0} MiB", n as f64 / (1 << 20) as f64)
    }
}

/// Reads at most `limit` bytes of `path` (`what` it is, for messages);
/// more is an error: a regular file by its size, before reading; anything
/// else (a device, a FIFO) by reading one byte past the limit.
pub fn read_limited(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>> {
    let too_big = || {
        unusable(format!(
            "{}: larger than {limit} bytes ({}), the limit for a {what}: not a {what}?",
            path.display(),
            size(limit)
        ))
    };
    let file = std::fs::File::open(path)
        .map_err(|e| unusable(format!("{}: cannot read the {what}: {e}", path.display())))?;
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > limit)
    {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unusable(format!("{}: reading the {what}: {e}", path.display())))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// The text of `path` as [`read_limited`] reads it; not UTF-8 is an error.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String> {
    let bytes = read_limited(path, what, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        unusable(format!(
            "{}: not UTF-8 text (invalid byte at offset {}): not a {what}",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The JSON document at `path` (`what` it is), at most
/// [`MAX_JSON_BYTES`].
pub fn read_json_text(path: &Path, what: &str) -> Result<String> {
    read_text(path, what, MAX_JSON_BYTES)
}

/// The most bytes a saved state of `sc`'s device may have: the header and
/// [`STATE_BYTES_PER_SLOT`] per 4 KiB slot of its NAND plus
/// [`STATE_FIXED_BYTES`].
pub fn state_limit(sc: &Scenario) -> Result<u64> {
    let geo = mmcsim::device::nand::Geometry::new(&sc.device_config()?.nand);
    let slots = u64::from(geo.blocks())
        .saturating_mul(u64::from(geo.pages_per_block))
        .saturating_mul(u64::from(geo.slots_per_page));
    Ok(slots
        .saturating_mul(STATE_BYTES_PER_SLOT)
        .saturating_add(STATE_FIXED_BYTES))
}

/// The saved device state at `path` (`--load-state`) for `sc`'s device:
/// the header first, then as many payload bytes as it announces (and one
/// more, to find a longer file), refusing an announced length beyond what
/// a state of this device can be ([`state_limit`]). What is read is
/// checked by [`mmcsim::sim::PreparedDevice::load_state`].
pub fn read_state(path: &Path, sc: &Scenario) -> Result<Vec<u8>> {
    let at = |e: std::io::Error| unusable(format!("--load-state {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(at)?;
    let mut r = std::io::BufReader::new(file);
    let mut bytes = Vec::with_capacity(STATE_HEADER_BYTES);
    (&mut r)
        .take(STATE_HEADER_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(at)?;
    if bytes.len() < STATE_HEADER_BYTES || !bytes.starts_with(b"MMCSIMST") {
        // Too short or not a state: the loader says which.
        return Ok(bytes);
    }
    let len = u64::from_le_bytes(
        bytes[STATE_LENGTH_AT..STATE_LENGTH_AT + 8]
            .try_into()
            .expect("8 bytes"),
    );
    let limit = state_limit(sc)?;
    if len > limit {
        return Err(unusable(format!(
            "--load-state {}: the header announces a {len}-byte payload, but a state of this device is at most {limit} bytes ({STATE_BYTES_PER_SLOT} per 4 KiB slot of its NAND and {} more): corrupted, or not a state of this device",
            path.display(),
            size(STATE_FIXED_BYTES)
        )));
    }
    r.take(len + 1).read_to_end(&mut bytes).map_err(at)?;
    Ok(bytes)
}

/// True when `head` (the start of a file) reads as TOML: its first line
/// that is neither blank nor a comment is a `[table]` header or a
/// `key = value` line.
fn looks_like_toml(head: &str) -> bool {
    let Some(line) = head
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    let key = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"'))
    };
    if let Some(t) = line.strip_prefix('[') {
        return key(t.trim_end_matches(']').trim_matches(['[', ']']));
    }
    line.split_once('=').is_some_and(|(k, _)| key(k.trim()))
}

/// Opens the trace `path` of `simctl replay` and checks its start before
/// anything is built: a path that cannot be read, a folder, a scenario or
/// an fio job file (which `simctl run` takes) is an
/// [`Unusable`](crate::output::Unusable) error saying so. `-` (standard
/// input) is not checked here.
pub fn check_trace(path: &Path) -> Result<()> {
    if path == Path::new("-") {
        return Ok(());
    }
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| unusable(format!("{shown}: {e}")))?;
    if meta.is_dir() {
        return Err(unusable(format!(
            "{shown}: is a directory; expected a trace file"
        )));
    }
    // A pipe or a device is read once, by the trace reader: not sniffed.
    if !meta.is_file() {
        return Ok(());
    }
    let mut f = std::fs::File::open(path).map_err(|e| unusable(format!("{shown}: {e}")))?;
    let mut head = Vec::new();
    f.by_ref()
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| unusable(format!("{shown}: {e}")))?;
    let text = String::from_utf8_lossy(&head);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let what = if mmcsim::workload::fio_job::is_job_file(path, &text) {
        Some("an fio job file")
    } else if ext == "toml" || looks_like_toml(&text) {
        Some("a scenario (TOML)")
    } else {
        None
    };
    match what {
        Some(w) => Err(unusable(format!(
            "{shown}: this is {w}, not a trace: run it with `simctl run {shown}`"
        ))),
        None => Ok(()),
    }
}

/// The error of `simctl run` for workload `path` that failed to load with
/// `e`: when `path` is a trace, a message saying to replay it instead.
pub fn not_a_scenario(path: &Path, e: anyhow::Error) -> anyhow::Error {
    // Only a regular file is looked at again: a pipe, FIFO or device was
    // read once already (and may be endless, like /dev/zero).
    if path == Path::new("-") || !path.is_file() {
        return e;
    }
    let is_toml = mmcsim::textfile::read_config(path).is_ok_and(|t| looks_like_toml(&t));
    match mmcsim::workload::trace::detect::detect(path) {
        Ok(format) if !is_toml => unusable(format!(
            "{}: this is a trace ({}), not a scenario: replay it with `simctl replay {}`",
            path.display(),
            format.name(),
            path.display()
        )),
        _ => e,
    }
}

/// Standard input, read whole as the text of a scenario or fio job file
/// (`simctl run -`), at most the size of a configuration file.
pub fn stdin_text() -> Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unusable(format!("-: reading standard input: {e}")))?;
    if bytes.len() as u64 > MAX_STDIN_CONFIG_BYTES {
        return Err(unusable(format!(
            "-: standard input is larger than {MAX_STDIN_CONFIG_BYTES} bytes, the limit for a configuration file"
        )));
    }
    String::from_utf8(bytes).map_err(|_| unusable("-: standard input is not UTF-8 text"))
}

/// Largest scenario read from standard input (16 MiB, as from a file).
const MAX_STDIN_CONFIG_BYTES: u64 = 16 << 20;

/// For trace `path` `-`: standard input copied to a temporary file (which
/// the trace readers open like any file, and which is removed when
/// dropped); `None` for any other path.
pub fn stdin_trace(path: &Path) -> Result<Option<tempfile::NamedTempFile>> {
    if path != Path::new("-") {
        return Ok(None);
    }
    let mut f = tempfile::Builder::new()
        .prefix("simctl-stdin-")
        .tempfile()
        .map_err(|e| unusable(format!("-: a temporary file for standard input: {e}")))?;
    std::io::copy(&mut std::io::stdin().lock(), f.as_file_mut())
        .map_err(|e| unusable(format!("-: reading standard input: {e}")))?;
    Ok(Some(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_input_is_refused_at_its_limit() {
        let e = read_limited(Path::new("/dev/zero"), "report", 1000).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("/dev/zero") && m.contains("1000 bytes"), "{m}");
        assert!(crate::output::is_unusable(&e));
        assert_eq!(size(MAX_PLOT_INPUT_BYTES), "256 MiB");
        assert_eq!(size(MAX_JSON_BYTES), "64 MiB");
        assert_eq!(size(1 << 30), "1 GiB");
    }
}
