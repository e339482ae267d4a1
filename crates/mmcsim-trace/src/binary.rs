//! Telling binary data from text: a text reader given a binary file (a
//! blktrace capture, a compressed file other than gzip, an image) says so,
//! naming the right format when it is recognisable, instead of quoting raw
//! bytes as a malformed first field.
//!
//! The rule, on the first KiB after gunzip: a NUL byte, or more than one
//! byte in 20 (5 %) that text does not have (C0 control characters other
//! than tab, line feed, carriage return, form feed and escape; DEL; bytes
//! of invalid UTF-8). A few Latin-1 letters in a process name stay text.

use std::io::BufRead;
use std::path::Path;

use crate::blktrace_bin;
use crate::error::{Error, Result};
use crate::format::Format;

/// Bytes of a trace's start looked at.
pub const SAMPLE_BYTES: usize = 1024;

/// True when `sample` (a file's first bytes) is binary data by the rule
/// above.
pub fn looks_binary(sample: &[u8]) -> bool {
    let sample = &sample[..sample.len().min(SAMPLE_BYTES)];
    if sample.contains(&0) {
        return true;
    }
    let mut odd = 0usize;
    let mut rest = sample;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                odd += s.bytes().filter(|&b| not_text(b)).count();
                break;
            }
            Err(e) => {
                let (good, after) = rest.split_at(e.valid_up_to());
                odd += good.iter().filter(|&&b| not_text(b)).count();
                match e.error_len() {
                    Some(n) => {
                        odd += n;
                        rest = &after[n..];
                    }
                    None => break, // a character cut by the sample's end
                }
            }
        }
    }
    odd * 20 > sample.len()
}

/// A byte text does not have (a control character other than the usual
/// white space and escape, or DEL).
fn not_text(b: u8) -> bool {
    (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) || b == 0x7f
}

/// What a binary file is, for messages: the hint naming the format when it
/// is recognisable, else the text formats there are.
pub fn hint(sample: &[u8]) -> String {
    if blktrace_bin::magic_endian(sample).is_some() {
        return format!(
            "this is a binary blktrace capture (struct blk_io_trace records, magic {:#x}); use --format {}",
            blktrace_bin::MAGIC,
            blktrace_bin::NAME
        );
    }
    let text: Vec<&str> = Format::all()
        .iter()
        .filter(|f| f.name() != blktrace_bin::NAME)
        .map(|f| f.name())
        .collect();
    format!(
        "binary data (a NUL byte or bytes text does not have in the first KiB), not a text trace: the text formats are {}; the binary one is {} (blktrace's per-CPU files); a compressed file must be gzip",
        text.join(", "),
        blktrace_bin::NAME
    )
}

/// The error for a text reader given the binary file `path`.
pub fn error(path: &Path, sample: &[u8]) -> Error {
    Error::Parse {
        path: path.to_path_buf(),
        line: 1,
        field: "format".into(),
        message: hint(sample),
    }
}

/// Refuses binary input to a text reader: looks at the first bytes `input`
/// buffers (without consuming them) and returns the located error naming
/// the right format.
pub fn refuse(input: &mut dyn BufRead, path: &Path) -> Result<()> {
    let buf = input.fill_buf().map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let sample = &buf[..buf.len().min(SAMPLE_BYTES)];
    if looks_binary(sample) {
        return Err(error(path, sample));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_with_a_few_latin1_letters_stays_text() {
        assert!(!looks_binary(
            b"179,0 0 1 0.000000001 95 D W 8 + 8 [mmcqd/0]\n"
        ));
        let mut latin = b"0,W,8,8,caf".to_vec();
        latin.push(0xe9); // Latin-1 e acute
        latin.extend_from_slice(b" name and a long enough rest of the line\n");
        assert!(!looks_binary(&latin));
        assert!(!looks_binary("µs in UTF-8\n".as_bytes()));
        // A multi-byte character cut by the sample's end.
        let mut cut = vec![b'a'; SAMPLE_BYTES - 1];
        cut.push(0xc2);
        assert!(!looks_binary(&cut));
    }

    #[test]
    fn nul_bytes_and_noise_are_binary() {
        assert!(looks_binary(b"abc\0def"));
        let noise: Vec<u8> = (0..200u32).map(|i| (i * 37 % 256) as u8 | 0x80).collect();
        assert!(looks_binary(&noise));
        let e = hint(&noise);
        assert!(
            e.contains("the text formats are") && e.contains("blkparse"),
            "{e}"
        );
    }
}
