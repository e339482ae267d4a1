//! The head of a trace as format detection sees it: the first lines (after
//! gunzip), read once for every registered format to judge
//! ([`crate::format::TraceFormat::sniff`]).
//!
//! The first KiB is kept raw as well (a binary format recognises its
//! magic there); when it is binary data no line is read.
//!
//! How much is read: 64 lines, or, when the first line is ftrace text (a
//! `# tracer` header or an event line), up to 20,000 lines while looking
//! for the events some format claims, stopping at the first decisive one.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::common::{parse_ftrace_line, split_csv, split_ws, Lines, Source};
use crate::error::Result;
use crate::format::{Format, FtraceEvent};

/// Lines read from a trace that is not ftrace text.
const PLAIN_LINES: u64 = 64;
/// Lines searched for events in ftrace text (events of interest may follow
/// a long run of others).
const FTRACE_LINES: u64 = 20_000;
/// Lines kept as a sample (non-blank lines not starting with `#`).
const SAMPLE_LINES: usize = 32;

/// The first lines of a trace, for detection.
#[derive(Debug)]
pub struct Head {
    path: PathBuf,
    /// The first bytes (at most [`crate::binary::SAMPLE_BYTES`]), raw.
    raw: Vec<u8>,
    first: Vec<u8>,
    sample: Vec<Vec<u8>>,
    lines: u64,
    ftrace: bool,
    /// Per format (by name), the number of lines read when its first
    /// ftrace event was met.
    events: Vec<(&'static str, u64)>,
}

impl Head {
    /// Reads the head of `source`, noting the ftrace events `formats`
    /// claim; `Ok(None)` for a trace with no non-blank line.
    pub fn read(source: &Source, formats: &[Format]) -> Result<Option<Head>> {
        let mut raw = Vec::new();
        source
            .open()?
            .take(crate::binary::SAMPLE_BYTES as u64)
            .read_to_end(&mut raw)
            .map_err(|e| crate::Error::Io {
                path: source.path().to_path_buf(),
                source: e,
            })?;
        let binary = crate::binary::looks_binary(&raw);
        let mut lines = Lines::new(source.open()?, source.path());
        let mut head = Head {
            path: source.path().to_path_buf(),
            raw,
            first: Vec::new(),
            sample: Vec::new(),
            lines: 0,
            ftrace: false,
            events: Vec::new(),
        };
        if binary {
            // Binary data: no lines to judge, only the raw bytes.
            return Ok((!head.raw.is_empty()).then_some(head));
        }
        let mut seen_first = false;
        while let Some(line) = lines.next_line()? {
            head.lines += 1;
            if line.is_empty() {
                continue;
            }
            if !seen_first {
                seen_first = true;
                head.first = line.to_vec();
                head.ftrace =
                    line.starts_with(b"# tracer") || matches!(parse_ftrace_line(line), Ok(Some(_)));
            }
            if head.sample.len() < SAMPLE_LINES && line[0] != b'#' {
                head.sample.push(line.to_vec());
            }
            if head.ftrace && line[0] != b'#' && head.note_events(line, formats) {
                break;
            }
            let limit = if head.ftrace {
                FTRACE_LINES
            } else {
                PLAIN_LINES
            };
            if head.lines >= limit {
                break;
            }
        }
        Ok(seen_first.then_some(head))
    }

    /// Notes the formats claiming the event of ftrace `line`; true when a
    /// claim is decisive (scanning stops).
    fn note_events(&mut self, line: &[u8], formats: &[Format]) -> bool {
        let Ok(Some(ev)) = parse_ftrace_line(line) else {
            return false;
        };
        for f in formats {
            let Some(claim) = f.def().ftrace_event(ev.event) else {
                continue;
            };
            if !self.events.iter().any(|(n, _)| *n == f.name()) {
                self.events.push((f.name(), self.lines));
            }
            if claim == FtraceEvent::Decisive {
                return true;
            }
        }
        false
    }

    /// The first bytes of the trace (after gunzip), at most
    /// [`crate::binary::SAMPLE_BYTES`]: what a binary format recognises.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// True when the first bytes are binary data
    /// ([`crate::binary::looks_binary`]): no line was read.
    pub fn is_binary(&self) -> bool {
        crate::binary::looks_binary(&self.raw)
    }

    /// The trace (as named in messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first non-blank line (possibly a `#` comment).
    pub fn first(&self) -> &[u8] {
        &self.first
    }

    /// The first data line: the first non-blank line not starting with
    /// `#` (the first line if every line read starts with `#`).
    pub fn data(&self) -> &[u8] {
        self.sample.first().map_or(&self.first, Vec::as_slice)
    }

    /// The fields of [`Head::data`] split at commas and trimmed (at most
    /// `N` kept) and how many there are.
    pub fn csv_fields<const N: usize>(&self) -> ([&[u8]; N], usize) {
        let mut f = [&[][..]; N];
        let n = split_csv(self.data(), &mut f);
        (f, n)
    }

    /// The fields of [`Head::data`] split at blanks (at most `N` kept) and
    /// how many there are.
    pub fn ws_fields<const N: usize>(&self) -> ([&[u8]; N], usize) {
        let mut f = [&[][..]; N];
        let n = split_ws(self.data(), &mut f);
        (f, n)
    }

    /// True when one of the first 16 comma-separated fields of
    /// [`Head::data`] (a header row), trimmed, is `name` in any case.
    pub fn has_column(&self, name: &[u8]) -> bool {
        let (f, n) = self.csv_fields::<16>();
        f[..n.min(16)].iter().any(|c| c.eq_ignore_ascii_case(name))
    }

    /// Lines read (blank ones included).
    pub fn lines_read(&self) -> u64 {
        self.lines
    }

    /// True when the first line is ftrace text.
    pub fn is_ftrace(&self) -> bool {
        self.ftrace
    }

    /// Lines read when the first ftrace event `format` claims was met, if
    /// one was.
    pub fn ftrace_events_of(&self, format: &str) -> Option<u64> {
        self.events
            .iter()
            .find(|(n, _)| *n == format)
            .map(|&(_, at)| at)
    }
}

/// True for a non-empty run of ASCII digits.
pub fn is_digits(t: &[u8]) -> bool {
    !t.is_empty() && t.iter().all(u8::is_ascii_digit)
}

/// True for ASCII digits with at most one `.` (not `.` alone).
pub fn is_decimal(t: &[u8]) -> bool {
    !t.is_empty()
        && t.iter().all(|b| b.is_ascii_digit() || *b == b'.')
        && t.iter().filter(|&&b| b == b'.').count() <= 1
        && t != b"."
}
