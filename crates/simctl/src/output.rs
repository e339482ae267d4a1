//! Standard output and output files for every command.
//!
//! All of a command's output goes through one [`Stdout`], so that no write
//! can panic: a write error names standard output, and a closed pipe
//! (`simctl trace convert trace.csv | head -1`) is recognised by
//! [`is_closed_pipe`] and ends the command quietly with exit code 0, as a
//! Unix filter does. Every output file goes through one [`Output`],
//! opened when the command starts and completed when its content is.

use anyhow::Context;
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

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

/// Most symbolic links followed from an output path to its target (the
/// kernel's own limit).
const MAX_LINKS: usize = 40;

/// An input or output problem found before any work is done (exit code
/// 2): a file that cannot be read or written, or that is not what it
/// should be.
#[derive(Debug)]
pub struct Unusable(pub String);

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unusable {}

/// An [`Unusable`] error with message `msg`.
pub fn unusable(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Unusable(msg.into()))
}

/// `e` as an [`Unusable`] error (its whole chain in one message), for
/// errors that can only come from a bad input file.
pub fn as_unusable(e: anyhow::Error) -> anyhow::Error {
    if is_unusable(&e) {
        e
    } else {
        unusable(format!("{e:#}"))
    }
}

/// True when `e` (or one of its causes) is [`Unusable`].
pub fn is_unusable(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Unusable>())
}

/// True when `e` says the input or the command line is unusable (exit
/// code 2), not that a run failed (exit code 1): an [`Unusable`] error, or
/// a library error about an input file, its format or a setting
/// ([`mmcsim::Error::is_input_error`], and a trace reader's input error,
/// [`trace::Error::is_input_error`]; the `RequestLog`, `Device` and
/// `Output` errors and a chosen device with no record are failed runs).
///
/// [`trace::Error::is_input_error`]: mmcsim::workload::trace::Error::is_input_error
pub fn is_usage_error(e: &anyhow::Error) -> bool {
    use mmcsim::workload::trace::Error as TraceError;
    use mmcsim::Error as E;
    is_unusable(e)
        || e.chain().any(|c| {
            let lib = c.downcast_ref::<E>().is_some_and(E::is_input_error);
            let trace = match c.downcast_ref::<E>() {
                Some(E::Trace(t)) => Some(t),
                _ => c.downcast_ref::<TraceError>(),
            };
            lib || trace.is_some_and(TraceError::is_input_error)
        })
}

/// One output file, resolved and opened before the work that fills it,
/// then written whole ([`Output::write`]) or streamed ([`Output::stream`]).
///
/// * `-` is standard output.
/// * A regular file, or a path that does not exist yet, is written to a
///   temporary file in its folder that replaces it when the output is
///   complete: a failed run leaves it as it was. A symbolic link is
///   followed to its target (even a dangling one), which is replaced; the
///   link stays a link.
/// * Anything else (a character or block device such as `/dev/null`, a
///   FIFO, a socket, `/dev/stdout`) is opened for writing as it is, neither
///   created nor truncated nor replaced, and written in place.
///
/// A path that cannot be written (a missing or read-only folder, a
/// directory, no permission) is an [`Unusable`] error from
/// [`Output::open`].
pub struct Output {
    /// The option and path as given, for messages (`--json out.json`).
    name: String,
    sink: Sink,
    /// Permissions of a replaced file, when not those of a plain create.
    mode: Option<u32>,
}

/// Where an [`Output`]'s bytes go.
enum Sink {
    Stdout,
    /// A temporary file beside `dest`, renamed over it on completion.
    Replace {
        tmp: tempfile::NamedTempFile,
        dest: PathBuf,
    },
    /// A special file, written as it is.
    InPlace(std::fs::File),
}

/// The end of a link chain from `p`: the path the kernel would open, and
/// whether a link of the chain points into `/proc` (`/dev/stdout`,
/// `/dev/fd/N`: a file descriptor, written in place).
fn follow_links(p: &Path) -> io::Result<(PathBuf, bool)> {
    let mut cur = p.to_path_buf();
    let mut magic = false;
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&cur)?;
                magic |= to.starts_with("/proc");
                cur = match cur.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok((cur, magic)),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a chain"
    )))
}

/// The folder a temporary file for `p` goes into.
fn folder_of(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A temporary file in `dir` named `.<name>.XXXXXX<suffix>` (`name`
/// from `p`), deleted unless persisted, with the mode a plain create
/// would give (0666 less the umask), not the private 0600 of temporary
/// files.
fn temp_in(dir: &Path, p: &Path, suffix: &str) -> io::Result<tempfile::NamedTempFile> {
    let name = p.file_name().map_or_else(
        || ".simctl.".into(),
        |n| format!(".{}.", n.to_string_lossy()),
    );
    let mut b = tempfile::Builder::new();
    b.prefix(&name).suffix(suffix);
    #[cfg(unix)]
    b.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    b.tempfile_in(dir)
}

impl Output {
    /// Resolves and opens output `path` of option `what` (`--json`; or
    /// empty when the path alone names it): see [`Output`].
    pub fn open(what: &str, path: &Path) -> anyhow::Result<Output> {
        let name = if what.is_empty() {
            path.display().to_string()
        } else {
            format!("{what} {}", path.display())
        };
        let sink = Output::sink(path).map_err(|e| unusable(format!("{name}: {e}")))?;
        Ok(Output {
            name,
            sink,
            mode: None,
        })
    }

    /// The sink of `path`, or why it cannot be written.
    fn sink(path: &Path) -> Result<Sink, String> {
        if path == Path::new("-") {
            return Ok(Sink::Stdout);
        }
        let cannot = |e: io::Error| format!("cannot be written: {e}");
        let (dest, magic) = follow_links(path).map_err(cannot)?;
        let in_place = |p: &Path| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .map(Sink::InPlace)
                .map_err(cannot)
        };
        if magic {
            // A file descriptor (`/dev/stdout`): its link may name a pipe
            // that no path reaches, so the given path is opened.
            return in_place(path);
        }
        match std::fs::metadata(&dest) {
            Ok(m) if m.is_dir() => Err("is a directory, not a file".into()),
            Ok(m) if !m.is_file() => in_place(&dest),
            Ok(m) => {
                // Opened (not truncated) to learn that it may be written.
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&dest)
                    .map_err(cannot)?;
                let tmp = Output::temp_for(&dest)?;
                tmp.as_file()
                    .set_permissions(m.permissions())
                    .map_err(cannot)?;
                Ok(Sink::Replace { tmp, dest })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let tmp = Output::temp_for(&dest)?;
                Ok(Sink::Replace { tmp, dest })
            }
            Err(e) => Err(cannot(e)),
        }
    }

    /// The temporary file that will replace `dest`.
    fn temp_for(dest: &Path) -> Result<tempfile::NamedTempFile, String> {
        let dir = folder_of(dest);
        temp_in(dir, dest, ".tmp").map_err(|e| {
            if dir.is_dir() {
                format!("cannot create a file in {}: {e}", dir.display())
            } else {
                format!("the folder {} does not exist", dir.display())
            }
        })
    }

    /// Gives a replaced file the permissions `mode` (a special file keeps
    /// its own).
    pub fn with_mode(mut self, mode: u32) -> Output {
        self.mode = Some(mode);
        self
    }

    /// True when the output is standard output (`-`).
    pub fn is_stdout(&self) -> bool {
        matches!(self.sink, Sink::Stdout)
    }

    /// The file a regular output replaces (links followed), to refuse
    /// outputs naming one file twice.
    pub fn replaces(&self) -> Option<&Path> {
        match &self.sink {
            Sink::Replace { dest, .. } => Some(dest),
            _ => None,
        }
    }

    /// Writes `bytes` as the whole output (to `stdout` for `-`) and
    /// completes it.
    pub fn write(self, bytes: &[u8], stdout: &mut dyn Write) -> anyhow::Result<()> {
        self.write_pending(bytes, stdout)?.commit()
    }

    /// Writes `bytes` as the whole output (to `stdout` for `-`) and
    /// returns what completes it, for an output that must take its
    /// content only if later work succeeds (a special file has it
    /// already).
    pub fn write_pending(self, bytes: &[u8], stdout: &mut dyn Write) -> anyhow::Result<Pending> {
        let (mut w, pending) = self.stream_to(stdout)?;
        w.write_all(bytes)
            .and_then(|()| w.flush())
            .with_context(|| format!("writing {}", pending.name))?;
        Ok(pending)
    }

    /// A writer of the output (buffered) and what completes it: write,
    /// flush and drop the writer, then [`Pending::commit`].
    pub fn stream(self) -> anyhow::Result<(Box<dyn Write + Send>, Pending)> {
        let pending = Pending {
            name: self.name.clone(),
            rename: None,
            mode: self.mode,
        };
        let (w, pending): (Box<dyn Write + Send>, Pending) = match self.sink {
            Sink::Stdout => (Box::new(BufWriter::new(io::stdout())), pending),
            Sink::InPlace(f) => (Box::new(BufWriter::new(f)), pending),
            Sink::Replace { tmp, dest } => {
                let f = tmp
                    .as_file()
                    .try_clone()
                    .with_context(|| format!("writing {}", pending.name))?;
                let rename = Some((tmp, dest));
                (Box::new(BufWriter::new(f)), Pending { rename, ..pending })
            }
        };
        Ok((w, pending))
    }

    /// As [`Output::stream`], standard output being `stdout`.
    fn stream_to<'a>(
        self,
        stdout: &'a mut dyn Write,
    ) -> anyhow::Result<(Box<dyn Write + 'a>, Pending)> {
        if self.is_stdout() {
            let pending = Pending {
                name: self.name,
                rename: None,
                mode: None,
            };
            return Ok((Box::new(stdout), pending));
        }
        let (w, p) = self.stream()?;
        Ok((w, p))
    }

    /// Lets `write` fill a file at a temporary path ending in `suffix` (for
    /// writers that take a path and pick a format by its extension, as
    /// the PNG encoder does), then writes that file's bytes as the output.
    pub fn write_via(
        self,
        suffix: &str,
        write: impl FnOnce(&Path) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let dir = match &self.sink {
            Sink::Replace { dest, .. } => folder_of(dest).to_path_buf(),
            _ => std::env::temp_dir(),
        };
        let name = self.name.clone();
        let tmp = temp_in(&dir, Path::new("simctl"), suffix)
            .with_context(|| format!("writing {name}"))?;
        write(tmp.path())?;
        let bytes = std::fs::read(tmp.path()).with_context(|| format!("writing {name}"))?;
        self.write(&bytes, &mut io::stdout())
    }
}

/// What completes a streamed [`Output`]: the rename of a replaced file.
pub struct Pending {
    name: String,
    rename: Option<(tempfile::NamedTempFile, PathBuf)>,
    mode: Option<u32>,
}

impl Pending {
    /// Completes the output (its writer must have been flushed and
    /// dropped): a replaced file takes the written content.
    pub fn commit(self) -> anyhow::Result<()> {
        let Some((tmp, dest)) = self.rename else {
            return Ok(());
        };
        let writing = || format!("writing {}", self.name);
        #[cfg(unix)]
        if let Some(mode) = self.mode {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
                .with_context(writing)?;
        }
        tmp.persist(&dest)
            .map_err(|e| e.error)
            .with_context(writing)?;
        Ok(())
    }
}

/// Creates the output folder `dir` (and its parents) of option `what`
/// before any work; failing is an [`Unusable`] error naming both.
pub fn create_dir(what: &str, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        unusable(format!(
            "{what} {}: cannot create the folder: {e}",
            dir.display()
        ))
    })
}

/// Writes `bytes` to the file `path` (named by its path in messages), as
/// [`Output`] does.
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    Output::open("", path)?.write(bytes, &mut io::stdout())
}
/// Opens the outputs of `list` (option, path if given) in order, before
/// any work: two options naming one file (the same path, or paths whose
/// links lead to one file) are refused first.
pub fn open_all(list: &[(&str, Option<&Path>)]) -> anyhow::Result<Vec<Option<Output>>> {
    let clash = |f1: &str, f2: &str, p: &Path| {
        unusable(format!(
            "{f1} and {f2} both name {}: choose two different files",
            p.display()
        ))
    };
    for (i, (f1, p1)) in list.iter().enumerate() {
        for (f2, p2) in &list[i + 1..] {
            if let (Some(a), Some(b)) = (p1, p2) {
                if a == b {
                    return Err(clash(f1, f2, a));
                }
            }
        }
    }
    let mut opened: Vec<Option<Output>> = Vec::with_capacity(list.len());
    for (i, (flag, p)) in list.iter().enumerate() {
        let o = p.map(|p| Output::open(flag, p)).transpose()?;
        if let Some(dest) = o.as_ref().and_then(Output::replaces) {
            let same = opened.iter().position(|x| {
                x.as_ref()
                    .and_then(Output::replaces)
                    .is_some_and(|d| d == dest)
            });
            if let (Some(j), Some(p)) = (same, p) {
                return Err(clash(list[j].0, &format!("{flag} (through a link)"), p));
            }
        }
        debug_assert_eq!(opened.len(), i);
        opened.push(o);
    }
    Ok(opened)
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

    /// A fresh scratch folder for one test.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("simctl-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_to_their_target_even_a_dangling_one() {
        let d = scratch("links");
        std::os::unix::fs::symlink("sub/target.json", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let (end, magic) = follow_links(&d.join("b")).unwrap();
        assert_eq!(end, d.join("sub/target.json"));
        assert!(!magic);
        Output::open("--json", &d.join("b"))
            .unwrap()
            .write(b"{}\n", &mut io::sink())
            .unwrap();
        assert_eq!(std::fs::read(d.join("sub/target.json")).unwrap(), b"{}\n");
        assert!(std::fs::symlink_metadata(d.join("b"))
            .unwrap()
            .file_type()
            .is_symlink());
        std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
        let e = Output::open("--json", &d.join("loop")).err().unwrap();
        assert!(e.to_string().contains("symbolic links"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn unwritable_paths_and_clashes_are_refused_when_opened() {
        let d = scratch("refused");
        let e = Output::open("--csv", &d).err().unwrap();
        assert!(
            is_unusable(&e) && e.to_string().contains("is a directory"),
            "{e}"
        );
        let e = Output::open("--csv", &d.join("no/x.csv")).err().unwrap();
        assert!(e.to_string().contains("does not exist"), "{e}");
        std::os::unix::fs::symlink("x.json", d.join("l")).unwrap();
        let (x, l) = (d.join("x.json"), d.join("l"));
        let e = open_all(&[("--json", Some(&x)), ("--csv", Some(&l))])
            .err()
            .unwrap();
        assert!(e.to_string().contains("--json and --csv"), "{e}");
        let e = open_all(&[("--json", Some(&x)), ("--log", Some(&x))])
            .err()
            .unwrap();
        assert!(e.to_string().contains("both name"), "{e}");
        // Nothing was left behind by the refused opens.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_stream_leaves_the_file_as_it_was() {
        let d = scratch("failed");
        let f = d.join("out.csv");
        std::fs::write(&f, "old\n").unwrap();
        let (mut w, done) = Output::open("--log", &f).unwrap().stream().unwrap();
        w.write_all(b"new\n").unwrap();
        drop(w);
        drop(done);
        assert_eq!(std::fs::read(&f).unwrap(), b"old\n");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            1,
            "no temporary file"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
