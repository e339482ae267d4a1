//! Conventions every text input (configuration files and traces) follows:
//! a leading UTF-8 byte-order mark is stripped, CR-only line endings are a
//! located error, and [`escape_controls`] keeps control characters out of
//! messages.

/// The UTF-8 byte-order mark some Windows editors put first in a file:
/// stripped from the start of every text input (configuration files and
/// traces), so it never becomes part of a key or a field.
pub const BOM: &str = "\u{feff}";

/// Byte offset of the first carriage return not followed by a line feed
/// (old Mac OS line endings, which no reader accepts), if any.
pub fn lone_cr(b: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\r', b).find(|&i| b.get(i + 1) != Some(&b'\n'))
}

/// The message for a lone carriage return at byte `at` of `b` (the bytes
/// from the start of the file, or of the line when `b` is one line):
/// where it is, and what to do.
pub fn lone_cr_message(b: &[u8], at: usize) -> String {
    let line = 1 + memchr::memchr_iter(b'\n', &b[..at]).count();
    lone_cr_text(at, line as u64)
}

/// The message of a lone CR at byte `at`, on 1-based line `line`.
pub fn lone_cr_text(at: usize, line: u64) -> String {
    format!(
        "CR-only line endings (old Mac) at byte {at} (line {line}): convert the file to LF line endings (e.g. `tr '\\r' '\\n'`); LF and CRLF are read"
    )
}

/// `s` with every control character but the line feed (and a byte-order
/// mark) escaped — `\r`, `\t`, `\u{1b}`, `\u{feff}` — so a message never
/// prints one raw; line feeds are kept (multi-line TOML parser messages).
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if needs_escape(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n') || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_lone_crs_located() {
        assert_eq!(
            escape_controls("k\u{feff}\r\x1b\t"),
            "k\\u{feff}\\r\\u{1b}\\t"
        );
        assert_eq!(escape_controls("plain µs"), "plain µs");
        assert_eq!(lone_cr(b"a\r\nb\rc"), Some(4));
        assert_eq!(lone_cr(b"a\r\n"), None);
        assert!(lone_cr_message(b"a\nb\rc", 3).contains("at byte 3 (line 2)"));
    }
}
