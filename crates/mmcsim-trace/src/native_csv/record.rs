//! The general path: one record from the fields of a line, every error
//! worded with its line and field.

use super::fields::{parse_time, parse_uint, plain_time, plain_uint};
use super::NativeCsvReader;
use crate::error::Result;
use crate::TraceRecord;
use mmcsim_types::Op;

impl NativeCsvReader {
    pub(super) fn parse_record(&mut self) -> Result<TraceRecord> {
        let line = self.line();
        if self.spans.len() != self.ncols {
            return Err(self.err(
                line,
                "fields",
                format!(
                    "expected {} fields (as in the header at line {}), found {}",
                    self.ncols,
                    self.header_line,
                    self.spans.len()
                ),
            ));
        }
        let c = self.cols;
        let time_name = self.time_name;
        let time_ns = match plain_time(self.get(c.time).unwrap_or_default(), self.time_digits) {
            Some(t) => t,
            None => {
                let time_text = self.field(c.time, time_name, line)?;
                parse_time(time_text, self.time_digits)
                    .map_err(|m| self.err(line, time_name, m.to_string()))?
            }
        };
        if let Some((prev, prev_line)) = self.prev_time {
            if time_ns < prev {
                let time_text = self.field(c.time, time_name, line)?;
                return Err(self.err(
                    line,
                    time_name,
                    format!(
                        "time goes backwards: {time_text} is earlier than {} at line {prev_line}; expected non-decreasing times",
                        self.prev_time_text()
                    ),
                ));
            }
        }
        let op_text = self.field(c.op, "op", line)?;
        let op = Op::from_code(op_text).ok_or_else(|| {
            self.err(
                line,
                "op",
                format!("expected R, W, D or F, found `{op_text}`"),
            )
        })?;
        let flush = op == Op::Flush;
        let sector = match plain_uint(self.get(c.sector).unwrap_or_default()) {
            Some(v) => v,
            None => {
                let sector_text = self.field(c.sector, "sector", line)?;
                if flush && sector_text.is_empty() {
                    0
                } else {
                    parse_uint::<u64>(
                        sector_text,
                        "a sector number (unsigned integer, 512-byte units)",
                    )
                    .map_err(|m| self.err(line, "sector", m.to_string()))?
                }
            }
        };
        let sectors = match plain_uint(self.get(c.sectors).unwrap_or_default())
            .and_then(|v| u32::try_from(v).ok())
        {
            Some(v) => v,
            None => {
                let sectors_text = self.field(c.sectors, "sectors", line)?;
                if flush && sectors_text.is_empty() {
                    0
                } else {
                    parse_uint::<u32>(sectors_text, "a sector count (unsigned 32-bit integer)")
                        .map_err(|m| self.err(line, "sectors", m.to_string()))?
                }
            }
        };
        let (sector, sectors) = if flush { (0, 0) } else { (sector, sectors) };
        if !flush && sectors == 0 {
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
        let plain_pid = c.pid.and_then(|i| {
            plain_uint(self.get(i).unwrap_or_default()).and_then(|v| u32::try_from(v).ok())
        });
        let pid = match c.pid {
            Some(_) if plain_pid.is_some() => plain_pid,
            Some(i) => {
                let t = self.field(i, "pid", line)?;
                if t.is_empty() {
                    None
                } else {
                    Some(
                        parse_uint::<u32>(t, "a process id (unsigned 32-bit integer)")
                            .map_err(|m| self.err(line, "pid", m.to_string()))?,
                    )
                }
            }
            None => None,
        };
        let sync = match c.sync {
            Some(i) => {
                let t = self.field(i, "sync", line)?;
                match t.to_ascii_lowercase().as_str() {
                    "" => None,
                    "1" | "true" => Some(true),
                    "0" | "false" => Some(false),
                    _ => {
                        return Err(self.err(
                            line,
                            "sync",
                            format!("expected 0, 1, true or false, found `{t}`"),
                        ))
                    }
                }
            }
            None => None,
        };
        let process = match c.process {
            Some(i) => {
                let t = self.field(i, "process", line)?;
                if t.is_empty() {
                    None
                } else if let Some(&id) = self.process_ids.get(t) {
                    Some(id)
                } else {
                    let id = u32::try_from(self.processes.len()).map_err(|_| {
                        self.err(line, "process", "too many distinct process names")
                    })?;
                    let name = t.to_string();
                    self.processes.push(name.clone());
                    self.process_ids.insert(name, id);
                    Some(id)
                }
            }
            None => None,
        };
        let done_ns = match c.done {
            Some(i) => {
                let name = self.done_name;
                let t = self.field(i, name, line)?;
                if t.is_empty() {
                    None
                } else {
                    let d = parse_time(t, self.done_digits)
                        .map_err(|m| self.err(line, name, m.to_string()))?;
                    if d < time_ns {
                        let time_text = self.field(c.time, self.time_name, line)?;
                        return Err(self.err(
                            line,
                            name,
                            format!(
                                "{t} is before the issue time {} = {time_text}: a request completes after it is issued (both columns count from the same origin)",
                                self.time_name
                            ),
                        ));
                    }
                    Some(d)
                }
            }
            None => None,
        };
        let device = match c.device {
            Some(i) => {
                let t = self.field(i, "device", line)?;
                if t.is_empty() {
                    None
                } else {
                    Some(
                        parse_uint::<u32>(t, "a device id (unsigned 32-bit integer)")
                            .map_err(|m| self.err(line, "device", m.to_string()))?,
                    )
                }
            }
            None => None,
        };
        let mut flags = 0u8;
        if let Some(i) = c.flags {
            let t = self.field(i, "flags", line)?;
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
        }
        // Only now is the record accepted: remember its time.
        let mut prev_text = std::mem::take(&mut self.prev_time_text);
        prev_text.clear();
        prev_text.extend_from_slice(self.get(c.time).unwrap_or_default());
        self.prev_time_text = prev_text;
        self.prev_time_is_integer = false;
        self.prev_time = Some((time_ns, line));
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
}
