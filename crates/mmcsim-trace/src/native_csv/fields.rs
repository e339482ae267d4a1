//! Splitting a line into fields and parsing a field, with the reasons
//! a field is refused.

use mmcsim_types::Ns;

/// Why a line or a field of the native CSV was rejected; the reader puts
/// it in an [`Error::Parse`] naming the file, line and field.
#[derive(Debug, thiserror::Error)]
pub(super) enum FieldError {
    /// A quoted field lacks its closing quote on its line.
    #[error("unterminated quoted field: expected a closing `\"`")]
    UnterminatedQuote,
    /// Something other than a comma follows a closing quote.
    #[error("text after a closing quote: expected `,`")]
    TextAfterQuote,
    /// The field is not of the expected form.
    #[error("expected {expected}, found `{found}`")]
    Expected {
        /// What the field should hold.
        expected: &'static str,
        /// The field's text.
        found: String,
    },
    /// A whole number too large for the field.
    #[error("expected {expected}, found `{found}` (out of range)")]
    OutOfRange {
        /// What the field should hold.
        expected: &'static str,
        /// The field's text.
        found: String,
    },
    /// A time beyond 2^64 ns.
    #[error("time `{0}` is too large (more than 2^64 ns)")]
    TimeTooLarge(String),
}

/// Splits one line (without its terminator) at commas into `fields` /
/// `ends`, trimming each field and removing `"` quoting.
///
/// Hand-rolled rather than the `csv` crate: this format is line-oriented
/// (a quoted field may not span lines, so an error names one line and
/// reading goes on with the next) and trims blanks around quoted fields,
/// which the crate does not; and on the benchmark's lines the crate with
/// trimming split about 3 M lines/s against about 8 M for this loop.
pub(super) fn split_fields(
    line: &[u8],
    fields: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> std::result::Result<(), FieldError> {
    fields.clear();
    ends.clear();
    let mut rest = line;
    loop {
        let t = rest.trim_ascii_start();
        if let Some(q) = t.strip_prefix(b"\"") {
            let mut i = 0;
            loop {
                match q.get(i) {
                    None => return Err(FieldError::UnterminatedQuote),
                    Some(b'"') if q.get(i + 1) == Some(&b'"') => {
                        fields.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&b) => {
                        fields.push(b);
                        i += 1;
                    }
                }
            }
            let after = q[i..].trim_ascii_start();
            match after.first() {
                None => {
                    ends.push(fields.len());
                    return Ok(());
                }
                Some(b',') => {
                    ends.push(fields.len());
                    rest = &after[1..];
                }
                Some(_) => return Err(FieldError::TextAfterQuote),
            }
        } else {
            let (field, next) = match t.iter().position(|&b| b == b',') {
                Some(p) => (&t[..p], Some(&t[p + 1..])),
                None => (t, None),
            };
            fields.extend_from_slice(field.trim_ascii_end());
            ends.push(fields.len());
            match next {
                Some(n) => rest = n,
                None => return Ok(()),
            }
        }
    }
}

/// The value of `b` when it is 1 to 19 ASCII digits (then exactly what
/// [`parse_uint`] gives); `None` sends the field through the checked path,
/// which also words the errors.
pub(super) fn plain_uint(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

/// [`parse_time`] of a time without a decimal point, in a unit `10^digits`
/// ns wide: the same whole nanoseconds, or `None` for anything else
/// (fractions, bad text, overflow), which takes the checked path.
pub(super) fn plain_time(b: &[u8], digits: u32) -> Option<Ns> {
    plain_uint(b)?.checked_mul(10u64.checked_pow(digits)?)
}

/// [`parse_time`] of a time of ASCII digits with at most one `.`, for the
/// fast path: the same whole nanoseconds, or `None` for anything else
/// (which the checked path then reads and, if bad, words).
pub(super) fn plain_decimal_time(b: &[u8], digits: u32) -> Option<Ns> {
    if let Some(t) = plain_time(b, digits) {
        return Some(t);
    }
    if b.iter().any(|&c| !c.is_ascii_digit() && c != b'.') {
        return None;
    }
    parse_time(std::str::from_utf8(b).ok()?, digits).ok()
}

/// `b` without the ASCII white space around it, as [`slice::trim_ascii`]
/// (the fast path looks at the end bytes first: fields rarely have any).
#[inline(always)]
pub(super) fn trim_blanks(b: &[u8]) -> &[u8] {
    match (b.first(), b.last()) {
        (Some(&first), Some(&last)) if first <= b' ' || last <= b' ' => b.trim_ascii(),
        _ => b,
    }
}

/// Parses an unsigned integer, describing `expected` on failure.
pub(super) fn parse_uint<T: std::str::FromStr>(
    text: &str,
    expected: &'static str,
) -> std::result::Result<T, FieldError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(FieldError::Expected {
            expected,
            found: text.to_string(),
        });
    }
    text.parse::<T>().map_err(|_| FieldError::OutOfRange {
        expected,
        found: text.to_string(),
    })
}

/// Parses a non-negative decimal time in a unit `10^digits` ns wide into
/// whole nanoseconds, exactly, rounding half up at the first dropped digit.
/// `digits` = 0 (ns) accepts integers only.
pub(super) fn parse_time(text: &str, digits: u32) -> std::result::Result<Ns, FieldError> {
    let expected = if digits == 0 {
        "a non-negative integer number of nanoseconds"
    } else {
        "a non-negative decimal number"
    };
    let bad = || FieldError::Expected {
        expected,
        found: text.to_string(),
    };
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => {
            if digits == 0 {
                return Err(bad());
            }
            (i, f)
        }
        None => (text, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !all_digits(int) || !all_digits(frac) {
        return Err(bad());
    }
    let too_big = || FieldError::TimeTooLarge(text.to_string());
    let mut ns: u64 = 0;
    for b in int.bytes() {
        ns = ns
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_big)?;
    }
    let fb = frac.as_bytes();
    for k in 0..digits as usize {
        let d = fb.get(k).map_or(0, |b| u64::from(b - b'0'));
        ns = ns
            .checked_mul(10)
            .and_then(|v| v.checked_add(d))
            .ok_or_else(too_big)?;
    }
    if fb.get(digits as usize).is_some_and(|&b| b >= b'5') {
        ns = ns.checked_add(1).ok_or_else(too_big)?;
    }
    Ok(ns)
}
