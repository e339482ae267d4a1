//! Scripted threads: a fixed list of system calls parsed from a
//! scenario's `[[scripts]]` entry (see [`super::spec::ScriptSpec`]),
//! replayed in order. Calls on "the current descriptor" name the
//! descriptor of the most recent successful `open` still open.

use super::job_error::TimeError;
use crate::error::{Error, Result, SettingError};
use crate::host::fs::ext4::S_MAXBYTES;
use crate::host::syscall::OpenFlagsError;
use crate::host::MAX_RW_COUNT;
use crate::host::{Access, Fd, OpenFlags, Syscall, Whence};
use crate::types::Ns;

/// Descriptor placeholder: the thread's current descriptor.
pub const CURRENT_FD: Fd = Fd::MAX;

/// One step of a script.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptStep {
    /// A system call (descriptor [`CURRENT_FD`] = the current one).
    Call(Syscall),
    /// Think time before the next call, ns.
    Sleep(Ns),
}

/// Why one call of a script is unusable.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    /// A blank call.
    #[error("empty call")]
    Empty,
    /// An argument the call needs is missing.
    #[error("missing {what}")]
    Missing {
        /// The argument, e.g. `byte count`.
        what: &'static str,
    },
    /// An argument that is not a number of its kind.
    #[error("`{text}` is not a valid {what}")]
    NotANumber {
        /// The text given.
        text: String,
        /// The argument, e.g. `offset`.
        what: &'static str,
    },
    /// A relative path.
    #[error("path `{path}` must be absolute")]
    RelativePath {
        /// The path given.
        path: String,
    },
    /// Unusable open flags.
    #[error(transparent)]
    Flags(#[from] OpenFlagsError),
    /// A whence other than SET, CUR or END.
    #[error("whence `{whence}`: expected SET, CUR or END")]
    Whence {
        /// The text given.
        whence: String,
    },
    /// A sleep the clock cannot hold.
    #[error("sleep: {0}")]
    Sleep(TimeError),
    /// A call mmcsim does not know.
    #[error("unknown call `{call}`; expected open, creat, close, read, write, pread, pwrite, lseek, fsync, fdatasync, ftruncate, unlink, rmdir, mkdir, rename, stat, sync or sleep")]
    Unknown {
        /// The call given (lower case).
        call: String,
    },
    /// Words after the call's arguments.
    #[error("unexpected `{extra}` after the call")]
    Extra {
        /// The first extra word.
        extra: String,
    },
    /// A file end beyond [`MAX_FILE_BYTES`] but below `s_maxbytes`.
    #[error("{what} {end} is beyond the largest file mmcsim models ({MAX_FILE_BYTES} bytes, 256 GiB; Linux's ext4 limit s_maxbytes is {S_MAXBYTES})")]
    BeyondModel {
        /// `offset + byte count`, `length` or `offset`.
        what: &'static str,
        /// The end reached, bytes.
        end: u64,
    },
}

/// Argument `what` of a call, parsed.
fn num<T: std::str::FromStr>(s: Option<&str>, what: &'static str) -> Result<T, CallError> {
    let s = s.ok_or(CallError::Missing { what })?;
    s.parse().map_err(|_| CallError::NotANumber {
        text: s.to_string(),
        what,
    })
}

/// A path argument: present and absolute.
fn path(w: Option<&str>) -> Result<String, CallError> {
    let p = w.ok_or(CallError::Missing { what: "path" })?;
    if !p.starts_with('/') {
        return Err(CallError::RelativePath {
            path: p.to_string(),
        });
    }
    Ok(p.to_string())
}

/// Nothing after the call's arguments.
fn extra(w: Option<&str>) -> Result<(), CallError> {
    match w {
        Some(extra) => Err(CallError::Extra {
            extra: extra.to_string(),
        }),
        None => Ok(()),
    }
}

/// Parses one script line.
pub fn parse_step(line: &str) -> Result<ScriptStep, CallError> {
    let mut w = line.split_whitespace();
    let op = w.next().ok_or(CallError::Empty)?.to_ascii_lowercase();
    let fd = CURRENT_FD;
    let sc = match op.as_str() {
        "open" => Syscall::Open {
            path: path(w.next())?,
            flags: OpenFlags::parse(w.next().unwrap_or(""))?,
        },
        "creat" => Syscall::Open {
            path: path(w.next())?,
            flags: OpenFlags {
                access: Access::WriteOnly,
                creat: true,
                trunc: true,
                ..OpenFlags::default()
            },
        },
        "close" => Syscall::Close { fd },
        "read" => Syscall::Read {
            fd,
            bytes: num(w.next(), "byte count")?,
        },
        "write" => Syscall::Write {
            fd,
            bytes: num(w.next(), "byte count")?,
        },
        "pread" => Syscall::Pread {
            fd,
            offset: num(w.next(), "offset")?,
            bytes: num(w.next(), "byte count")?,
        },
        "pwrite" => Syscall::Pwrite {
            fd,
            offset: num(w.next(), "offset")?,
            bytes: num(w.next(), "byte count")?,
        },
        "lseek" => Syscall::Lseek {
            fd,
            offset: num(w.next(), "offset")?,
            whence: match w.next().map(str::to_ascii_uppercase).as_deref() {
                None | Some("SET") | Some("SEEK_SET") => Whence::Set,
                Some("CUR") | Some("SEEK_CUR") => Whence::Cur,
                Some("END") | Some("SEEK_END") => Whence::End,
                Some(o) => {
                    return Err(CallError::Whence {
                        whence: o.to_string(),
                    })
                }
            },
        },
        "fsync" => Syscall::Fsync { fd },
        "fdatasync" => Syscall::Fdatasync { fd },
        "ftruncate" => Syscall::Ftruncate {
            fd,
            len: num(w.next(), "length")?,
        },
        "unlink" => Syscall::Unlink {
            path: path(w.next())?,
        },
        "rmdir" => Syscall::Rmdir {
            path: path(w.next())?,
        },
        "mkdir" => Syscall::Mkdir {
            path: path(w.next())?,
        },
        "stat" => Syscall::Stat {
            path: path(w.next())?,
        },
        "rename" => Syscall::Rename {
            from: path(w.next())?,
            to: path(w.next())?,
        },
        "sync" => Syscall::Sync,
        "sleep" => {
            let us: f64 = num(w.next(), "time in µs")?;
            let ns = super::spec::checked_time_ns("time", us, 1e3).map_err(CallError::Sleep)?;
            extra(w.next())?;
            return Ok(ScriptStep::Sleep(ns));
        }
        other => {
            return Err(CallError::Unknown {
                call: other.to_string(),
            })
        }
    };
    extra(w.next())?;
    check_model_size(&sc)?;
    Ok(ScriptStep::Call(sc))
}

/// The largest file offset a script may reach below `s_maxbytes`, bytes
/// (256 GiB): the page cache keeps a flag byte per page of a file up to
/// its end, so a sparse file of `s_maxbytes` (16 TiB) would need 4 GiB.
/// Offsets from `s_maxbytes` on are allowed: they fail as in Linux (EFBIG,
/// EINVAL) without touching the cache.
pub const MAX_FILE_BYTES: u64 = 1 << 38;

/// Refuses a write end, truncate length or seek offset between [`MAX_FILE_BYTES`] and
/// [`S_MAXBYTES`] (one Linux would serve but mmcsim cannot hold).
fn check_model_size(sc: &Syscall) -> Result<(), CallError> {
    let (what, end) = match *sc {
        Syscall::Pwrite { offset, bytes, .. } => (
            "offset + byte count",
            offset.saturating_add(bytes.min(MAX_RW_COUNT)),
        ),
        Syscall::Ftruncate { len, .. } => ("length", len),
        Syscall::Lseek { offset, .. } => ("offset", offset.unsigned_abs()),
        _ => return Ok(()),
    };
    let start = match *sc {
        Syscall::Pwrite { offset, .. } => offset,
        _ => end,
    };
    if end > MAX_FILE_BYTES && start < S_MAXBYTES {
        return Err(CallError::BeyondModel { what, end });
    }
    Ok(())
}

/// Parses every call of script `name`; errors name the entry.
pub fn parse(name: &str, calls: &[String]) -> Result<Vec<ScriptStep>> {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            parse_step(c).map_err(|problem| {
                Error::setting(
                    format!("script `{name}`"),
                    SettingError::ScriptCall {
                        key: format!("calls[{i}] `{c}`"),
                        problem,
                    },
                )
            })
        })
        .collect()
}

/// Replaces the placeholder descriptor of `sc` with `fd`.
pub fn bind_fd(sc: &mut Syscall, fd: Fd) {
    match sc {
        Syscall::Close { fd: f }
        | Syscall::Read { fd: f, .. }
        | Syscall::Write { fd: f, .. }
        | Syscall::Pread { fd: f, .. }
        | Syscall::Pwrite { fd: f, .. }
        | Syscall::Lseek { fd: f, .. }
        | Syscall::Fsync { fd: f }
        | Syscall::Fdatasync { fd: f }
        | Syscall::Ftruncate { fd: f, .. }
            if *f == CURRENT_FD =>
        {
            *f = fd;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_to_calls_and_errors_name_the_entry() {
        assert_eq!(
            parse_step("open /d/x.db O_CREAT|O_RDWR").unwrap(),
            ScriptStep::Call(Syscall::Open {
                path: "/d/x.db".into(),
                flags: OpenFlags {
                    creat: true,
                    ..OpenFlags::default()
                }
            })
        );
        assert_eq!(
            parse_step("pwrite 4096 512").unwrap(),
            ScriptStep::Call(Syscall::Pwrite {
                fd: CURRENT_FD,
                offset: 4096,
                bytes: 512
            })
        );
        assert_eq!(parse_step("sleep 10").unwrap(), ScriptStep::Sleep(10_000));
        let e = parse("s", &["wrte 1".to_string()]).unwrap_err().to_string();
        assert!(e.contains("calls[0]") && e.contains("unknown call"), "{e}");
        assert!(parse_step("open rel/path").is_err());
        assert!(parse_step("fsync now").is_err());
    }

    #[test]
    fn times_and_sizes_past_their_limits_are_refused_and_modes_follow_linux() {
        let e = parse_step("sleep 1e30").unwrap_err().to_string();
        assert!(e.contains("simulated clock"), "{e}");
        assert!(parse_step("sleep -1").is_err());
        assert!(parse_step("sleep nan").is_err());
        // within s_maxbytes but past what the page cache can hold
        assert!(parse_step("pwrite 1099511627776 4096").is_err());
        assert!(parse_step("ftruncate 1099511627776").is_err());
        // from s_maxbytes on, the call fails at run time as in Linux
        assert!(parse_step("pwrite 17592186040320 1").is_ok());
        assert!(parse_step("ftruncate 100000000000000").is_ok());
        let ScriptStep::Call(Syscall::Open { flags, .. }) = parse_step("open /f").unwrap() else {
            panic!("an open")
        };
        assert_eq!(flags.access, Access::ReadOnly, "O_RDONLY is 0");
        let ScriptStep::Call(Syscall::Open { flags, .. }) = parse_step("creat /f").unwrap() else {
            panic!("an open")
        };
        assert_eq!(flags.access, Access::WriteOnly);
        assert!(parse_step("open /f O_RDONLY|O_RDWR").is_err());
        assert_eq!(
            parse_step("rmdir /d").unwrap(),
            ScriptStep::Call(Syscall::Rmdir { path: "/d".into() })
        );
    }
}
