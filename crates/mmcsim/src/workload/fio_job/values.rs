//! Values of options: integers, sizes with fio's suffixes, times.

use super::option_error::OptionError;
use super::MAX_BYTES;

/// An integer, decimal or `0x` hexadecimal.
pub(super) fn int(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// An integer in `min..=max`.
pub(super) fn count(v: &str, min: u64, max: u64) -> Result<u64, OptionError> {
    int(v)
        .filter(|n| (min..=max).contains(n))
        .ok_or(OptionError::IntRange { min, max })
}

/// A size that must not be 0.
pub(super) fn positive(n: u64) -> Result<u64, OptionError> {
    if n == 0 {
        Err(OptionError::ZeroSize)
    } else {
        Ok(n)
    }
}

/// A size in bytes with fio's suffixes at `kb_base=1024`: `k`/`kb`,
/// `m`/`mb`, ... are powers of 1024, `kib`, `mib`, ... powers of 1000.
pub fn size(v: &str) -> Result<u64, OptionError> {
    let expected = || OptionError::Size {
        value: v.to_string(),
    };
    let t = v.trim().to_ascii_lowercase();
    if t.ends_with('%') {
        return Err(OptionError::Percentage);
    }
    // A hexadecimal number (`0x...`) takes no suffix.
    let (num, suffix) = if t.starts_with("0x") {
        (t.as_str(), "")
    } else {
        t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()))
    };
    let n = int(num).ok_or_else(expected)?;
    let pow = |base: u64, e: u32| base.checked_pow(e);
    let mult = match suffix {
        "" | "b" => Some(1),
        "k" | "kb" => pow(1024, 1),
        "m" | "mb" => pow(1024, 2),
        "g" | "gb" => pow(1024, 3),
        "t" | "tb" => pow(1024, 4),
        "p" | "pb" => pow(1024, 5),
        "kib" => pow(1000, 1),
        "mib" => pow(1000, 2),
        "gib" => pow(1000, 3),
        "tib" => pow(1000, 4),
        "pib" => pow(1000, 5),
        _ => None,
    }
    .ok_or_else(expected)?;
    n.checked_mul(mult)
        .filter(|&b| b <= MAX_BYTES)
        .ok_or_else(|| OptionError::SizeLimit {
            value: v.to_string(),
        })
}

/// A time in µs: a number with an optional `us`/`usec`, `ms`/`msec`,
/// `s`/`sec`, `m`/`min`, `h` or `d` suffix; without one, `default_us` µs
/// per unit.
pub(super) fn time_us(v: &str, default_us: f64) -> Result<f64, OptionError> {
    let t = v.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| OptionError::Time {
        value: v.to_string(),
    })?;
    let unit = match suffix {
        "" => default_us,
        "us" | "usec" => 1.0,
        "ms" | "msec" => 1e3,
        "s" | "sec" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        "d" => 86400e6,
        _ => {
            return Err(OptionError::TimeUnit {
                suffix: suffix.to_string(),
            })
        }
    };
    Ok(n as f64 * unit)
}
