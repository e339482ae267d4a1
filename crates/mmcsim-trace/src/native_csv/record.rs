//! The general path: one record from the fields of a line, every error
//! worded with its line and field.

use super::fields::{parse_time, parse_uint, plain_time, plain_uint};
use super::NativeCsvReader;
use crate::error::Result;
use crate::TraceRecord;
use mmcsim_types::{Ns, Op};

impl NativeCsvReader {
    /// The record of the current line's fields, or the error naming the
    /// first field at fault; fields are checked in column-kind order (time,
    /// op, address, pid, sync, process, completion, device, flags).
    pub(super) fn parse_record(&mut self) -> Result<TraceRecord> {
        let line = self.line();
        self.check_field_count(line)?;
        let time_ns = self.record_time(line)?;
        let op = self.record_op(line)?;
        let (sector, sectors) = self.record_address(line, op)?;
        let pid = self.optional_id(
            self.cols.pid,
            "pid",
            "a process id (unsigned 32-bit integer)",
            line,
        )?;
        let sync = self.record_sync(line)?;
        let process = self.record_process(line)?;
        let done_ns = self.record_done(line, time_ns)?;
        let device = self.optional_id(
            self.cols.device,
            "device",
            "a device id (unsigned 32-bit integer)",
            line,
        )?;
        let flags = self.record_flags(line)?;
        self.accept_time(time_ns, line);
        Ok(TraceRecord {
            line,
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
        })
    }

    /// The line has as many fields as the header.
    fn check_field_count(&self, line: u64) -> Result<()> {
        if self.spans.len() == self.ncols {
            return Ok(());
        }
        Err(self.err(
            line,
            "fields",
            format!(
                "expected {} fields (as in the header at line {}), found {}",
                self.ncols,
                self.header_line,
                self.spans.len()
            ),
        ))
    }

    /// The time field in ns, no earlier than the previous record's.
    fn record_time(&self, line: u64) -> Result<Ns> {
        let (c, name) = (self.cols.time, self.time_name);
        let time_ns = match plain_time(self.get(c).unwrap_or_default(), self.time_digits) {
            Some(t) => t,
            None => parse_time(self.field(c, name, line)?, self.time_digits)
                .map_err(|m| self.err(line, name, m.to_string()))?,
        };
        match self.prev_time {
            Some((prev, prev_line)) if time_ns < prev => {
                let time_text = self.field(c, name, line)?;
                Err(self.err(
                    line,
                    name,
                    format!(
                        "time goes backwards: {time_text} is earlier than {} at line {prev_line}; expected non-decreasing times",
                        self.prev_time_text()
                    ),
                ))
            }
            _ => Ok(time_ns),
        }
    }

    /// The op field.
    fn record_op(&self, line: u64) -> Result<Op> {
        let op_text = self.field(self.cols.op, "op", line)?;
        Op::from_code(op_text).ok_or_else(|| {
            self.err(
                line,
                "op",
                format!("expected R, W, D or F, found `{op_text}`"),
            )
        })
    }

    /// The sector and sector count: (0, 0) for a flush (whose fields may
    /// be empty), at least one sector otherwise, without overflowing.
    fn record_address(&self, line: u64, op: Op) -> Result<(u64, u32)> {
        let flush = op == Op::Flush;
        let sector = self.count_field::<u64>(
            self.cols.sector,
            "sector",
            "a sector number (unsigned integer, 512-byte units)",
            flush,
            line,
        )?;
        let sectors = self.count_field::<u32>(
            self.cols.sectors,
            "sectors",
            "a sector count (unsigned 32-bit integer)",
            flush,
            line,
        )?;
        if flush {
            return Ok((0, 0));
        }
        if sectors == 0 {
            return Err(self.err(
                line,
                "sectors",
                format!(
                    "a {} request must cover at least 1 sector, found 0",
                    op.code()
                ),
            ));
        }
        if sector.checked_add(u64::from(sectors)).is_none() {
            return Err(self.err(
                line,
                "sector",
                "sector + sectors overflows a 64-bit address",
            ));
        }
        Ok((sector, sectors))
    }

    /// Column `i` (`name`) as a whole number of type `T` (`expected`
    /// describes it); empty reads as 0 when `may_be_empty`.
    fn count_field<T: TryFrom<u64> + std::str::FromStr + Default>(
        &self,
        i: usize,
        name: &str,
        expected: &'static str,
        may_be_empty: bool,
        line: u64,
    ) -> Result<T> {
        if let Some(v) =
            plain_uint(self.get(i).unwrap_or_default()).and_then(|v| T::try_from(v).ok())
        {
            return Ok(v);
        }
        let text = self.field(i, name, line)?;
        if may_be_empty && text.is_empty() {
            return Ok(T::default());
        }
        parse_uint::<T>(text, expected).map_err(|m| self.err(line, name, m.to_string()))
    }

    /// An optional 32-bit id column (`pid`, `device`): `None` when absent
    /// or empty; `expected` describes the id for an error.
    fn optional_id(
        &self,
        col: Option<usize>,
        name: &str,
        expected: &'static str,
        line: u64,
    ) -> Result<Option<u32>> {
        let Some(i) = col else {
            return Ok(None);
        };
        if let Some(v) =
            plain_uint(self.get(i).unwrap_or_default()).and_then(|v| u32::try_from(v).ok())
        {
            return Ok(Some(v));
        }
        let t = self.field(i, name, line)?;
        if t.is_empty() {
            return Ok(None);
        }
        parse_uint::<u32>(t, expected)
            .map(Some)
            .map_err(|m| self.err(line, name, m.to_string()))
    }

    /// The optional sync field: `0`/`1`/`true`/`false`, empty for unknown.
    fn record_sync(&self, line: u64) -> Result<Option<bool>> {
        let Some(i) = self.cols.sync else {
            return Ok(None);
        };
        let t = self.field(i, "sync", line)?;
        match t.to_ascii_lowercase().as_str() {
            "" => Ok(None),
            "1" | "true" => Ok(Some(true)),
            "0" | "false" => Ok(Some(false)),
            _ => Err(self.err(
                line,
                "sync",
                format!("expected 0, 1, true or false, found `{t}`"),
            )),
        }
    }

    /// The optional process name, interned (a new name gets the next id).
    fn record_process(&mut self, line: u64) -> Result<Option<u32>> {
        let Some(i) = self.cols.process else {
            return Ok(None);
        };
        let t = self.field(i, "process", line)?;
        if t.is_empty() {
            return Ok(None);
        }
        if let Some(&id) = self.process_ids.get(t) {
            return Ok(Some(id));
        }
        let id = u32::try_from(self.processes.len())
            .map_err(|_| self.err(line, "process", "too many distinct process names"))?;
        let name = t.to_string();
        self.processes.push(name.clone());
        self.process_ids.insert(name, id);
        Ok(Some(id))
    }

    /// The optional completion time in ns, not before the issue time.
    fn record_done(&self, line: u64, time_ns: Ns) -> Result<Option<Ns>> {
        let Some(i) = self.cols.done else {
            return Ok(None);
        };
        let name = self.done_name;
        let t = self.field(i, name, line)?;
        if t.is_empty() {
            return Ok(None);
        }
        let d = parse_time(t, self.done_digits).map_err(|m| self.err(line, name, m.to_string()))?;
        if d < time_ns {
            let time_text = self.field(self.cols.time, self.time_name, line)?;
            return Err(self.err(
                line,
                name,
                format!(
                    "{t} is before the issue time {} = {time_text}: a request completes after it is issued (both columns count from the same origin)",
                    self.time_name
                ),
            ));
        }
        Ok(Some(d))
    }

    /// The optional flags field: letters of [`TraceRecord::FLAG_LETTERS`].
    fn record_flags(&self, line: u64) -> Result<u8> {
        let Some(i) = self.cols.flags else {
            return Ok(0);
        };
        let t = self.field(i, "flags", line)?;
        let mut flags = 0u8;
        for ch in t.chars() {
            match TraceRecord::FLAG_LETTERS.iter().find(|(_, l)| *l == ch) {
                Some((bit, _)) => flags |= bit,
                None => {
                    return Err(self.err(
                        line,
                        "flags",
                        format!(
                            "unknown flag `{ch}` in `{t}`: expected letters from F, P, M, A, E, X"
                        ),
                    ))
                }
            }
        }
        Ok(flags)
    }

    /// Remembers the accepted record's time (ns and text) for the
    /// backwards check of the next one.
    fn accept_time(&mut self, time_ns: Ns, line: u64) {
        let mut prev_text = std::mem::take(&mut self.prev_time_text);
        prev_text.clear();
        prev_text.extend_from_slice(self.get(self.cols.time).unwrap_or_default());
        self.prev_time_text = prev_text;
        self.prev_time_is_integer = false;
        self.prev_time = Some((time_ns, line));
    }
}
