//! The fast paths: a plain line read in place in the input buffer.

use super::fields::{plain_decimal_time, plain_uint, trim_blanks};
use super::{NativeCsvReader, MAX_COLUMNS};
use crate::TraceRecord;
use mmcsim_types::{Ns, Op};

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
    /// Splits the line at the start of `text` into exactly `ncols` fields
    /// (filling a [`SplitLine`] made with `special` 0)
    /// in one pass, reading each field of 1 to 19 digits alone (most are)
    /// into `values`; any other field (one with blanks, a CR before the
    /// line break, letters, quotes) is marked in `special`, to be read
    /// from its span. With the line's length with its `\n`; `None` when
    /// the line does not end in `text`, has another number of fields, or
    /// is longer than [`crate::common::MAX_LINE_BYTES`].
    #[inline(always)]
    fn split(&mut self, text: &'a [u8], ncols: usize) -> Option<usize> {
        if ncols > MAX_COLUMNS {
            return None; // not from a valid header
        }
        let split = self;
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
        Some(at)
    }

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
        let mut split = SplitLine {
            line: &[],
            values: [0; MAX_COLUMNS],
            spans: [(0, 0); MAX_COLUMNS],
            special: 0,
        };
        let at = split.split(text, self.ncols)?;
        let split = &split;
        let c = &self.cols;
        let (time_ns, time_text) = self.fast_time(split)?;
        let op = match split.field(c.op) {
            &[letter] => op_letter(letter)?,
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
        let o = self.fast_optional(split, time_ns)?;
        let rec = TraceRecord {
            line: 0,
            time_ns,
            op,
            sector,
            sectors,
            pid: o.pid,
            process: o.process,
            sync: o.sync,
            done_ns: o.done_ns,
            fetch_ns: None,
            device_start_ns: None,
            device: o.device,
            flags: o.flags,
        };
        Some((rec, time_text, at))
    }

    /// The time of a split line in ns, not before the previous record's,
    /// with its text unless it is a whole number without leading zeros.
    #[inline(always)]
    fn fast_time<'a>(&self, split: &SplitLine<'a>) -> Option<(Ns, Option<&'a [u8]>)> {
        let c = self.cols.time;
        let (time_ns, time_text) = if split.plain(c) {
            let (start, end) = split.spans[c];
            let integer = end - start == 1 || split.line[start] != b'0';
            (
                split.values[c].checked_mul(self.time_scale)?,
                (!integer).then(|| split.field(c)),
            )
        } else {
            let f = split.field(c);
            (plain_decimal_time(f, self.time_digits)?, Some(f))
        };
        if self.prev_time.is_some_and(|(prev, _)| time_ns < prev) {
            return None;
        }
        Some((time_ns, time_text))
    }

    /// The optional fields of a split line issued at `time_ns`; `None`
    /// when one is not in its plain form or is invalid.
    #[inline(always)]
    fn fast_optional(&self, split: &SplitLine<'_>, time_ns: Ns) -> Option<Optional> {
        let c = &self.cols;
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
        Some(Optional {
            pid,
            process,
            sync,
            done_ns,
            device,
            flags,
        })
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
        let mut q = QuickFields {
            values: [0; ROLES],
            lens: [0; ROLES],
            op: Op::Read,
        };
        let at = self.quick_fields(text, &mut q)?;
        let (time_len, time) = q.get(Role::Time);
        // Empty, or a leading zero (its text is then kept: not read here).
        if time_len == 0 || time < POW10[usize::from(time_len - 1)] && time_len > 1 {
            return None;
        }
        let [sector, sectors, pid, device] =
            [Role::Sector, Role::Sectors, Role::Pid, Role::Device].map(|r| q.values[r as usize]);
        // An absent or empty field's value is 0: one test refuses a count,
        // a pid or a device id beyond 32 bits.
        if at > crate::common::MAX_LINE_BYTES
            || q.lens[Role::Sector as usize] == 0
            || q.lens[Role::Sectors as usize] == 0
            || (sectors | pid | device) > u64::from(u32::MAX)
        {
            return None;
        }
        let time_ns = time.checked_mul(self.time_scale)?;
        if self.prev_time.is_some_and(|(prev, _)| time_ns < prev) {
            return None;
        }
        let (sector, sectors) = if q.op == Op::Flush {
            (0, 0)
        } else {
            if sectors == 0 {
                return None;
            }
            sector.checked_add(sectors)?;
            (sector, sectors as u32)
        };
        let (sync, done_ns, device) = if self.quick_extra {
            self.quick_extras(&q, time_ns)?
        } else {
            (None, None, None)
        };
        let rec = TraceRecord {
            line: 0,
            time_ns,
            op: q.op,
            sector,
            sectors,
            pid: q.id(Role::Pid),
            process: None,
            sync,
            done_ns,
            fetch_ns: None,
            device_start_ns: None,
            device,
            flags: 0,
        };
        Some((rec, at))
    }

    /// The fields of the line at the start of `text` by role into `q`
    /// (made empty), read eight bytes at a time; the line's length with
    /// its `\n`, or `None` for
    /// a line with another number of fields or a field not in the
    /// plainest form.
    #[inline(always)]
    fn quick_fields(&self, text: &[u8], q: &mut QuickFields) -> Option<usize> {
        let roles = &self.roles[..self.quick_cols];
        let mut at = 0;
        let mut fields = roles.iter();
        loop {
            let role = *fields.next()?; // more fields than columns
            let stop = if role == Role::Op {
                q.op = op_letter(*text.get(at)?)?;
                at += 1;
                *text.get(at)?
            } else {
                let (value, digits, stop) = digits_at(text, at)?;
                at += digits;
                q.values[role as usize] = value;
                q.lens[role as usize] = digits as u8;
                stop
            };
            at += 1;
            match stop {
                b',' => {}
                b'\n' if fields.len() == 0 => return Some(at),
                _ => return None, // too few fields, or not a plain field
            }
        }
    }

    /// The sync, completion and device fields of a quick line issued at
    /// `time_ns`; `None` when one is invalid (the general path words the
    /// error).
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn quick_extras(
        &self,
        q: &QuickFields,
        time_ns: Ns,
    ) -> Option<(Option<bool>, Option<Ns>, Option<u32>)> {
        let sync = match q.get(Role::Sync) {
            (0, _) => None,
            (1, v) if v <= 1 => Some(v == 1),
            _ => return None,
        };
        let done_ns = match q.get(Role::Done) {
            (0, _) => None,
            (_, v) => Some(v.checked_mul(self.done_scale)?).filter(|&d| d >= time_ns),
        };
        if q.get(Role::Done).0 != 0 && done_ns.is_none() {
            return None; // before the issue: the general path words the error
        }
        Some((sync, done_ns, q.id(Role::Device)))
    }
}

/// The optional fields of a record, as the fast path reads them.
struct Optional {
    pid: Option<u32>,
    process: Option<u32>,
    sync: Option<bool>,
    done_ns: Option<Ns>,
    device: Option<u32>,
    flags: u8,
}

/// The fields of a quick line, by [`Role`].
struct QuickFields {
    /// Each field's value (0 for an empty or absent field).
    values: [u64; ROLES],
    /// Each field's digit count (0: empty or absent).
    lens: [u8; ROLES],
    /// The op letter's operation.
    op: Op,
}

impl QuickFields {
    /// The digit count and value of the field of `role`.
    #[inline(always)]
    fn get(&self, role: Role) -> (u8, u64) {
        (self.lens[role as usize], self.values[role as usize])
    }

    /// The field of `role` as an optional 32-bit id (checked to fit).
    #[inline(always)]
    fn id(&self, role: Role) -> Option<u32> {
        (self.lens[role as usize] > 0).then_some(self.values[role as usize] as u32)
    }
}

/// The operation of an op letter (`R`, `W`, `D`, `F`, either case).
#[inline(always)]
fn op_letter(b: u8) -> Option<Op> {
    match b {
        b'R' | b'r' => Some(Op::Read),
        b'W' | b'w' => Some(Op::Write),
        b'D' | b'd' => Some(Op::Discard),
        b'F' | b'f' => Some(Op::Flush),
        _ => None,
    }
}
