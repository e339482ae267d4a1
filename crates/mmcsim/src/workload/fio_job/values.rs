//! Values of options: integers, sizes with fio's suffixes, times.

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
pub(super) fn count(v: &str, min: u64, max: u64) -> std::result::Result<u64, String> {
    int(v)
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("expected an integer {min}..={max}"))
}

pub(super) fn positive(n: u64) -> std::result::Result<u64, String> {
    if n == 0 {
        Err("expected a size > 0".into())
    } else {
        Ok(n)
    }
}

/// A size in bytes with fio's suffixes at `kb_base=1024`: `k`/`kb`,
/// `m`/`mb`, ... are powers of 1024, `kib`, `mib`, ... powers of 1000.
pub fn size(v: &str) -> std::result::Result<u64, String> {
    let expected = || {
        format!("expected a size in bytes with an optional k/m/g/t/p suffix (base 1024), e.g. 4k; got '{v}'")
    };
    let t = v.trim().to_ascii_lowercase();
    if t.ends_with('%') {
        return Err(
            "a percentage of the file is not modelled; give a size in bytes (e.g. 64m)".into(),
        );
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
        .ok_or_else(|| {
            format!("{v}: expected at most {MAX_BYTES} bytes (2^50, 1 PiB), the limit of a size, offset or block size")
        })
}

/// A time in µs: a number with an optional `us`/`usec`, `ms`/`msec`,
/// `s`/`sec`, `m`/`min`, `h` or `d` suffix; without one, `default_us` µs
/// per unit.
pub(super) fn time_us(v: &str, default_us: f64) -> std::result::Result<f64, String> {
    let t = v.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!(
            "expected a whole time with an optional unit (us, ms, s, m, h, d), e.g. 30s; got '{v}'"
        )
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
            return Err(format!(
                "unknown time unit '{suffix}': expected us, ms, s, m, h or d"
            ))
        }
    };
    Ok(n as f64 * unit)
}
