//! The fast paths: a plain line read in place in the input buffer.

use super::fields::{plain_decimal_time, plain_uint, trim_blanks};
use super::{NativeCsvReader, MAX_COLUMNS};
use crate::TraceRecord;
use mmcsim_types::Op;

/// A line split by the fast path of [`NativeCsvReader::next_record`].
struct SplitLine<'a> {
    /// The line, without its line break.
    line: &'a [u8],
    /// The value of each field of 1 to 19 digits alone.
    values: [u64; MAX_COLUMNS],
    /// Where each field is in `line` (untrimmed).
    spans: [(usize, usize); MAX_COLUMNS],
    /// Bit `i`: field `i` is not 1 to 19 digits alone.
    special: u32,
}

impl<'a> SplitLine<'a> {
    /// Whether field `i` is 1 to 19 digits alone (its value in `values`).
    #[inline(always)]
    fn plain(&self, i: usize) -> bool {
        self.special & (1 << i) == 0
    }

    /// Field `i`, trimmed.
    #[inline(always)]
    fn field(&self, i: usize) -> &'a [u8] {
        let (start, end) = self.spans[i];
        trim_blanks(&self.line[start..end])
    }

    /// Field `i` as a number: `Some(None)` when empty, `Some(Some(v))` for
    /// 1 to 19 digits, `None` for anything else.
    #[inline(always)]
    fn number(&self, i: usize) -> Option<Option<u64>> {
        if self.plain(i) {
            return Some(Some(self.values[i]));
        }
        let f = self.field(i);
        if f.is_empty() {
            Some(None)
        } else {
            plain_uint(f).map(Some)
        }
    }

    /// Field `i` as an optional 32-bit id, as [`SplitLine::number`].
    #[inline(always)]
    fn id(&self, i: usize) -> Option<Option<u32>> {
        match self.number(i)? {
            Some(v) => Some(Some(u32::try_from(v).ok()?)),
            None => Some(None),
        }
    }
}

/// What a column holds, for [`NativeCsvReader::quick_record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Role {
    Time,
    Op,
    Sector,
    Sectors,
    Pid,
    Sync,
    Done,
    Device,
}

/// The number of [`Role`]s.
pub(super) const ROLES: usize = 8;

/// `10^i` for `i` in `0..=19` (all that fit a `u64`).
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// The value of the 0 to 19 digits at `text[at..]`, how many there are
/// and the byte after them, read eight bytes at a time. `None` when fewer
/// than eight bytes remain where it reads, or for more than 19 digits.
#[inline(always)]
fn digits_at(text: &[u8], at: usize) -> Option<(u64, usize, u8)> {
    let word = u64::from_le_bytes(*text.get(at..)?.first_chunk::<8>()?);
    let x = word ^ ZEROS;
    let marks = non_digits(x);
    if marks == 0 {
        return long_digits(text, at);
    }
    let len = marks.trailing_zeros() as usize / 8;
    Some((swar_digits(x, len), len, (word >> (8 * len)) as u8))
}

/// `b'0'` in each byte.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The high bit of each byte of `x` (bytes minus `b'0'`) that is not a
/// digit, and maybe of bytes after one: a byte above 9 gets its high bit
/// set (a carry out of it only reaches bytes after it), so the lowest
/// marked byte is the first non-digit.
#[inline(always)]
fn non_digits(x: u64) -> u64 {
    (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080
}

/// [`digits_at`] for a field of eight digits or more.
#[cold]
#[inline(never)]
fn long_digits(text: &[u8], at: usize) -> Option<(u64, usize, u8)> {
    let mut value = 0u64;
    let mut digits = 0;
    loop {
        let word = u64::from_le_bytes(*text.get(at + digits..)?.first_chunk::<8>()?);
        let x = word ^ ZEROS;
        let len = non_digits(x).trailing_zeros() as usize / 8;
        let part = if len == 8 {
            eight_digits(x)
        } else {
            swar_digits(x, len)
        };
        value = value.wrapping_mul(POW10[len]).wrapping_add(part);
        digits += len;
        if len < 8 {
            // More than 19 digits are not plain.
            return (digits <= 19).then_some((value, digits, (word >> (8 * len)) as u8));
        }
        if digits > 16 {
            return None;
        }
    }
}

/// The value of the first `len` (0 to 7) bytes of `x` (little-endian),
/// each a digit 0 to 9.
#[inline(always)]
fn swar_digits(x: u64, len: usize) -> u64 {
    // The digits to the top bytes (leading zeros below; none for 0).
    eight_digits((x << 8) << (56 - 8 * len))
}

/// The value of the eight bytes of `x` (little-endian), each a digit 0 to
/// 9: pairs, quads and the eight combined.
#[inline(always)]
fn eight_digits(x: u64) -> u64 {
    let v = (x & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561) >> 8;
    let v = (v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001) >> 32
}

impl NativeCsvReader {
    /// The record of the line at the start of `text` (which must not
    /// start with white space or `#`; the record's `line` is left 0), the
    /// text of its time field unless that is a whole number without
    /// leading zeros, and the line's length with its `\n`, when the line
    /// ends in `text` and every field is in its plain form and the record
    /// is valid: the same record [`NativeCsvReader::parse_record`] makes of
    /// it, without its copies and UTF-8 checks. `None` for anything else
    /// (quotes, an unknown process name, a field needing the checked
    /// parsers, any error, no line end in `text`), which the general path
    /// then reads, changing nothing here.
    #[allow(clippy::type_complexity)]
    pub(super) fn fast_record<'a>(
        &self,
        text: &'a [u8],
    ) -> Option<(TraceRecord, Option<&'a [u8]>, usize)> {
        // One pass splits the line at commas and reads each field that is
        // 1 to 19 digits alone (most are) into `values`; any other field
        // (one with blanks, a CR before the line break, letters, quotes)
        // is marked in `special` and read below from its span.
        let ncols = self.ncols;
        if ncols > MAX_COLUMNS {
            return None; // not from a valid header
        }
        let mut split = SplitLine {
            line: &[],
            values: [0; MAX_COLUMNS],
            spans: [(0, 0); MAX_COLUMNS],
            special: 0,
        };
        let mut at = 0;
        let mut n = 0;
        loop {
            if n == ncols {
                return None; // more fields than columns
            }
            let start = at;
            let mut value = 0u64;
            let mut stop = *text.get(at)?;
            while stop.wrapping_sub(b'0') <= 9 {
                // 19 digits cannot overflow; more are not plain.
                value = value
                    .wrapping_mul(10)
                    .wrapping_add(u64::from(stop.wrapping_sub(b'0')));
                at += 1;
                stop = *text.get(at)?;
            }
            // 1 to 19 digits: `digits - 1` (wrapping) below 19.
            let digits = at - start;
            if (stop != b',' && stop != b'\n') || digits.wrapping_sub(1) >= 19 {
                while stop != b',' && stop != b'\n' {
                    at += 1;
                    stop = *text.get(at)?;
                }
                split.special |= 1 << n;
            }
            split.values[n] = value;
            split.spans[n] = (start, at);
            n += 1;
            at += 1;
            if stop == b'\n' {
                break;
            }
        }
        if n != ncols || at > crate::common::MAX_LINE_BYTES {
            return None;
        }
        split.line = &text[..at - 1];
        let split = &split;
        let c = &self.cols;
        let (time_ns, time_text) = if split.plain(c.time) {
            let (start, end) = split.spans[c.time];
            let integer = end - start == 1 || split.line[start] != b'0';
            (
                split.values[c.time].checked_mul(self.time_scale)?,
                (!integer).then(|| split.field(c.time)),
            )
        } else {
            let f = split.field(c.time);
            (plain_decimal_time(f, self.time_digits)?, Some(f))
        };
        if self.prev_time.is_some_and(|(prev, _)| time_ns < prev) {
            return None;
        }
        let op = match split.field(c.op) {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            b"D" | b"d" => Op::Discard,
            b"F" | b"f" => Op::Flush,
            _ => return None,
        };
        // `None`: the field is empty (allowed for a flush only).
        let sector = split.number(c.sector)?;
        let sectors = match split.number(c.sectors)? {
            Some(v) => Some(u32::try_from(v).ok()?),
            None => None,
        };
        let (sector, sectors) = if op == Op::Flush {
            (0, 0)
        } else {
            (sector?, sectors?)
        };
        if (op != Op::Flush && sectors == 0) || sector.checked_add(u64::from(sectors)).is_none() {
            return None;
        }
        let pid = match c.pid {
            Some(i) => split.id(i)?,
            None => None,
        };
        let process = match c.process.map(|i| split.field(i)) {
            Some(f) if !f.is_empty() => {
                if f.contains(&b'"') {
                    return None;
                }
                Some(*self.process_ids.get(std::str::from_utf8(f).ok()?)?)
            }
            _ => None,
        };
        let sync = match c.sync.map(|i| split.field(i)) {
            None | Some(b"") => None,
            Some(b"1") => Some(true),
            Some(b"0") => Some(false),
            Some(t) if t.eq_ignore_ascii_case(b"true") => Some(true),
            Some(t) if t.eq_ignore_ascii_case(b"false") => Some(false),
            Some(_) => return None,
        };
        let done_ns = match c.done {
            Some(i) if split.plain(i) => Some(split.values[i].checked_mul(self.done_scale)?),
            Some(i) if !split.field(i).is_empty() => {
                Some(plain_decimal_time(split.field(i), self.done_digits)?)
            }
            _ => None,
        };
        if done_ns.is_some_and(|d| d < time_ns) {
            return None; // the general path words the error
        }
        let device = match c.device {
            Some(i) => split.id(i)?,
            None => None,
        };
        let mut flags = 0u8;
        for &b in c.flags.map(|i| split.field(i)).unwrap_or_default() {
            let (bit, _) = TraceRecord::FLAG_LETTERS
                .iter()
                .find(|(_, l)| b.is_ascii() && *l == char::from(b))?;
            flags |= bit;
        }
        Some((
            TraceRecord {
                line: 0,
                time_ns,
                op,
                sector,
                sectors,
                pid,
                process,
                sync,
                done_ns,
                fetch_ns: None,
                device_start_ns: None,
                device,
                flags,
            },
            time_text,
            at,
        ))
    }

    /// The record of the line at the start of `text` when that line is in
    /// the plainest form: the header planned a quick path
    /// ([`NativeCsvReader::plan_quick_path`]), the line ends in `text` with
    /// `\n` (no CR), each field is exactly 1 to 19 digits (the op field:
    /// one of the op letters; `pid`, `sync`, `done_*` and `device` may be
    /// empty), the time has no leading zero, and the record is valid. Then
    /// it is the record [`NativeCsvReader::fast_record`] makes of it
    /// (the record's `line` left 0, the time field's text a whole number
    /// without leading zeros), with the line's length with its `\n`.
    /// `None` for anything else, which the other paths then read.
    #[inline]
    pub(super) fn quick_record(&self, text: &[u8]) -> Option<(TraceRecord, usize)> {
        let roles = &self.roles[..self.quick_cols];
        // Each field's value and digit count, by role (0 digits: empty or
        // absent).
        let mut values = [0u64; ROLES];
        let mut lens = [0u8; ROLES];
        let mut op = Op::Read;
        let mut at = 0;
        let mut fields = roles.iter();
        loop {
            let role = *fields.next()?; // more fields than columns
            let stop = if role == Role::Op {
                op = match *text.get(at)? {
                    b'R' | b'r' => Op::Read,
                    b'W' | b'w' => Op::Write,
                    b'D' | b'd' => Op::Discard,
                    b'F' | b'f' => Op::Flush,
                    _ => return None,
                };
                at += 1;
                *text.get(at)?
            } else {
                let (value, digits, stop) = digits_at(text, at)?;
                at += digits;
                values[role as usize] = value;
                lens[role as usize] = digits as u8;
                stop
            };
            at += 1;
            match stop {
                b',' => {}
                b'\n' if fields.len() == 0 => break,
                _ => return None, // too few fields, or not a plain field
            }
        }
        let get = |role: Role| (lens[role as usize], values[role as usize]);
        let (time_len, time) = get(Role::Time);
        // Empty, or a leading zero (its text is then kept: not read here).
        if time_len == 0 || time < POW10[usize::from(time_len - 1)] && time_len > 1 {
            return None;
        }
        let [sector, sectors, pid, device] =
            [Role::Sector, Role::Sectors, Role::Pid, Role::Device].map(|r| values[r as usize]);
        // An absent or empty field's value is 0: one test refuses a count,
        // a pid or a device id beyond 32 bits.
        if at > crate::common::MAX_LINE_BYTES
            || lens[Role::Sector as usize] == 0
            || lens[Role::Sectors as usize] == 0
            || (sectors | pid | device) > u64::from(u32::MAX)
        {
            return None;
        }
        let time_ns = time.checked_mul(self.time_scale)?;
        if self.prev_time.is_some_and(|(prev, _)| time_ns < prev) {
            return None;
        }
        let (sector, sectors) = if op == Op::Flush {
            (0, 0)
        } else {
            if sectors == 0 {
                return None;
            }
            sector.checked_add(sectors)?;
            (sector, sectors as u32)
        };
        let id = |role: Role, v: u64| (lens[role as usize] > 0).then_some(v as u32);
        let pid = id(Role::Pid, pid);
        let (sync, done_ns, device) = if self.quick_extra {
            let sync = match get(Role::Sync) {
                (0, _) => None,
                (1, v) if v <= 1 => Some(v == 1),
                _ => return None,
            };
            let done_ns = match get(Role::Done) {
                (0, _) => None,
                (_, v) => Some(v.checked_mul(self.done_scale)?).filter(|&d| d >= time_ns),
            };
            if get(Role::Done).0 != 0 && done_ns.is_none() {
                return None; // before the issue: the general path words the error
            }
            (sync, done_ns, id(Role::Device, device))
        } else {
            (None, None, None)
        };
        Some((
            TraceRecord {
                line: 0,
                time_ns,
                op,
                sector,
                sectors,
                pid,
                process: None,
                sync,
                done_ns,
                fetch_ns: None,
                device_start_ns: None,
                device,
                flags: 0,
            },
            at,
        ))
    }
}
