//! Standard output for every command.
//!
//! All of a command's output goes through one [`Stdout`], so that no write
//! can panic: a write error names standard output, and a closed pipe
//! (`simctl trace convert trace.csv | head -1`) is recognised by
//! [`is_closed_pipe`] and ends the command quietly with exit code 0, as a
//! Unix filter does.

use anyhow::Context;
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::Path;

/// Buffered standard output whose errors say they came from it.
pub struct Stdout {
    out: BufWriter<io::Stdout>,
}

impl Stdout {
    /// The process's standard output, buffered.
    pub fn new() -> Stdout {
        Stdout {
            out: BufWriter::new(io::stdout()),
        }
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Stdout::new()
    }
}

/// Names standard output in an error, keeping its kind (a closed pipe
/// stays [`ErrorKind::BrokenPipe`]).
fn named(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing to standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf).map_err(named)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf).map_err(named)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush().map_err(named)
    }
}

/// True when `e` (or one of its causes) is a write to a pipe whose reader
/// has gone.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::BrokenPipe)
    })
}

/// A temporary file in the folder of `p` (so renaming it over `p` is
/// atomic), named `.<name>.XXXXXX<suffix>`, deleted unless persisted.
/// The suffix lets writers that pick a format by extension (PNG) write
/// into it.
pub fn temp_beside(p: &Path, suffix: &str) -> io::Result<tempfile::NamedTempFile> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = p.file_name().map_or_else(
        || ".simctl".into(),
        |n| format!(".{}.", n.to_string_lossy()),
    );
    let mut b = tempfile::Builder::new();
    b.prefix(&name).suffix(suffix);
    // The mode a plain create would give (0666 less the umask), not the
    // private 0600 of temporary files.
    #[cfg(unix)]
    b.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    b.tempfile_in(dir)
}

/// Writes `bytes` to `p` through a temporary file renamed over it: a
/// failed write leaves `p` as it was.
pub fn write_atomic(p: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let writing = || format!("writing {}", p.display());
    let mut tmp = temp_beside(p, ".tmp").with_context(writing)?;
    tmp.write_all(bytes).with_context(writing)?;
    tmp.persist(p).map_err(|e| e.error).with_context(writing)?;
    Ok(())
}

/// Lets `write` fill a temporary file beside `p` (given its path, which
/// ends in `suffix`) and renames it over `p` when `write` succeeds.
pub fn write_atomic_with(
    p: &Path,
    suffix: &str,
    write: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let writing = || format!("writing {}", p.display());
    let tmp = temp_beside(p, suffix).with_context(writing)?;
    write(tmp.path())?;
    tmp.persist(p).map_err(|e| e.error).with_context(writing)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_recognised_through_context_and_library_errors() {
        let pipe = named(io::Error::from(ErrorKind::BrokenPipe));
        assert_eq!(pipe.kind(), ErrorKind::BrokenPipe);
        assert!(pipe.to_string().starts_with("writing to standard output: "));
        let lib = mmcsim::Error::Output { source: pipe };
        let e = anyhow::Error::new(lib).context("converting");
        assert!(is_closed_pipe(&e));
        let full = anyhow::Error::new(named(io::Error::from_raw_os_error(28)));
        assert!(!is_closed_pipe(&full));
    }
}
