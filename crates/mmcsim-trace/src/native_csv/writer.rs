//! Writing records as native CSV.

use std::io::Write;

use crate::error::{Error, Result};
use crate::{TraceReader, TraceRecord};
use mmcsim_types::Op;

/// Writes records as native CSV with the columns
/// `time_ns,op,sector,sectors,pid,process,sync,done_ns,device,flags`
/// (unset optional fields are left empty; process names are quoted when
/// needed, control characters become spaces, and an empty name reads back
/// as no name).
///
/// Written by hand rather than with the `csv` crate's writer: the reader
/// trims unquoted fields, so a name with leading or trailing blanks must be
/// quoted, and that writer quotes a field only for delimiters, quotes and
/// line breaks.
#[derive(Debug)]
pub struct NativeCsvWriter<W: Write> {
    out: W,
    line: String,
}

/// The header [`NativeCsvWriter`] writes.
pub const NATIVE_HEADER: &str = "time_ns,op,sector,sectors,pid,process,sync,done_ns,device,flags";

impl<W: Write> NativeCsvWriter<W> {
    /// A writer on `out`; writes the header row.
    pub fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(NATIVE_HEADER.as_bytes())?;
        out.write_all(b"\n")?;
        Ok(NativeCsvWriter {
            out,
            line: String::new(),
        })
    }

    /// Writes one record; `process` is the name of `rec.process`.
    pub fn write(&mut self, rec: &TraceRecord, process: Option<&str>) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let l = &mut self.line;
        l.clear();
        let _ = write!(l, "{},{},", rec.time_ns, rec.op.code());
        if rec.op != Op::Flush {
            let _ = write!(l, "{},{}", rec.sector, rec.sectors);
        } else {
            l.push(',');
        }
        l.push(',');
        if let Some(p) = rec.pid {
            let _ = write!(l, "{p}");
        }
        l.push(',');
        if let Some(name) = process.filter(|_| rec.process.is_some()) {
            let clean: String = name
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            if clean.contains([',', '"']) || clean.trim() != clean {
                l.push('"');
                l.push_str(&clean.replace('"', "\"\""));
                l.push('"');
            } else {
                l.push_str(&clean);
            }
        }
        l.push(',');
        if let Some(s) = rec.sync {
            l.push(if s { '1' } else { '0' });
        }
        l.push(',');
        if let Some(d) = rec.done_ns {
            let _ = write!(l, "{d}");
        }
        l.push(',');
        if let Some(d) = rec.device {
            let _ = write!(l, "{d}");
        }
        l.push(',');
        for (bit, letter) in TraceRecord::FLAG_LETTERS {
            if rec.flags & bit != 0 {
                l.push(letter);
            }
        }
        l.push('\n');
        self.out.write_all(l.as_bytes())
    }

    /// Flushes and returns the output.
    pub fn into_inner(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Streams every record of `reader` to `out` as native CSV (see
/// [`NativeCsvWriter`]), stopping at the first error; returns the number of
/// records written. A failed write is an [`Error::Output`].
pub fn write_native_csv<W: Write>(reader: &mut dyn TraceReader, out: W) -> Result<u64> {
    let io = |source| Error::Output { source };
    let mut w = NativeCsvWriter::new(out).map_err(io)?;
    let mut n = 0;
    while let Some(rec) = reader.next_record() {
        let rec = rec?;
        let name = rec.process.map(|p| reader.process_name(p));
        w.write(&rec, name).map_err(io)?;
        n += 1;
    }
    w.into_inner().map_err(io)?;
    Ok(n)
}
