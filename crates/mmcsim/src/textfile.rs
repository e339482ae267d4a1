//! Reading a configuration file (scenario, device or host profile, phone,
//! grid, calibration targets, fio job file) whole, with a size limit
//! checked before the bytes are held: a path that names something endless
//! or huge (`/dev/zero`, a trace given where a profile was meant) is a
//! located error, never an unbounded allocation or a hang. A leading UTF-8
//! byte-order mark is stripped, CR-only line endings are a located error,
//! and [`escape_controls`] keeps control characters out of messages.

use crate::error::{Error, Result, TextProblem};
use std::io::Read;
use std::path::Path;

/// Largest configuration file read, in bytes (16 MiB: the bundled
/// profiles and scenarios are a few KiB, a generated grid or calibration
/// file a few hundred).
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The text of the configuration file at `path`: an I/O error names the
/// path; a file over [`MAX_CONFIG_BYTES`] or not UTF-8 is an error saying
/// so, before more than the limit is read.
pub fn read_config(path: &Path) -> Result<String> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let bad = |problem| Error::ConfigText {
        path: path.to_path_buf(),
        problem,
    };
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(bad(TextProblem::TooLarge {
            limit: MAX_CONFIG_BYTES,
        }));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        bad(TextProblem::NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
        })
    })?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len());
    }
    if let Some(at) = lone_cr(text.as_bytes()) {
        let line = 1 + text.as_bytes()[..at]
            .iter()
            .filter(|&&c| c == b'\n')
            .count() as u64;
        return Err(bad(TextProblem::LoneCr { at, line }));
    }
    Ok(text)
}

/// The conventions every text input follows (a byte-order mark is
/// stripped, CR-only line endings are refused, control characters are
/// escaped in messages), shared with the trace readers.
pub use mmcsim_types::text::{escape_controls, lone_cr, lone_cr_message, BOM};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_limit() {
        let e = read_config(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero") && e.contains("16 MiB"), "{e}");
    }

    #[test]
    fn a_bom_is_stripped_and_cr_only_endings_are_located() {
        let dir = std::env::temp_dir().join(format!("mmcsim-textfile-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bom = dir.join("bom.toml");
        std::fs::write(&bom, "\u{feff}a = 1\r\nb = 2\n").unwrap();
        assert_eq!(read_config(&bom).unwrap(), "a = 1\r\nb = 2\n");
        let cr = dir.join("cr.toml");
        std::fs::write(&cr, "a = 1\nb = 2\rc = 3\r").unwrap();
        let e = read_config(&cr).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: CR-only line endings", cr.display()))
                && e.contains("at byte 11 (line 2)")
                && !e.contains('\r'),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_file_names_its_path_and_binary_is_not_text() {
        let dir = std::env::temp_dir().join(format!("mmcsim-textfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.toml");
        let e = read_config(&missing).unwrap_err().to_string();
        assert!(e.contains("missing.toml"), "{e}");
        let bin = dir.join("bin.toml");
        std::fs::write(&bin, b"a = 1\n\xff\xfe").unwrap();
        let e = read_config(&bin).unwrap_err().to_string();
        assert!(e.contains("not UTF-8") && e.contains("offset 6"), "{e}");
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "a = 1\n").unwrap();
        assert_eq!(read_config(&ok).unwrap(), "a = 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
