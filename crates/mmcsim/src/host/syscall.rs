//! The system calls the host serves for application threads, and the
//! flags a file is opened with. File descriptors are per task; paths are
//! absolute (`/data/data/pkg/databases/app.db`).

/// A file descriptor number (the first `open` of a task returns 3).
pub type Fd = u32;

/// A system call issued by an application thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Syscall {
    /// `open(path, flags)` (`creat` is `O_CREAT | O_TRUNC | O_WRONLY`);
    /// returns the new descriptor.
    Open {
        /// Absolute path.
        path: String,
        /// Flags.
        flags: OpenFlags,
    },
    /// `close(fd)`.
    Close {
        /// Descriptor.
        fd: Fd,
    },
    /// `read(fd, buf, bytes)` at the descriptor's offset, which advances.
    Read {
        /// Descriptor.
        fd: Fd,
        /// Bytes to read.
        bytes: u64,
    },
    /// `write(fd, buf, bytes)` at the descriptor's offset (the end of the
    /// file with `O_APPEND`), which advances.
    Write {
        /// Descriptor.
        fd: Fd,
        /// Bytes to write.
        bytes: u64,
    },
    /// `pread(fd, buf, bytes, offset)`.
    Pread {
        /// Descriptor.
        fd: Fd,
        /// Byte offset within the file.
        offset: u64,
        /// Bytes to read.
        bytes: u64,
    },
    /// `pwrite(fd, buf, bytes, offset)`.
    Pwrite {
        /// Descriptor.
        fd: Fd,
        /// Byte offset within the file.
        offset: u64,
        /// Bytes to write.
        bytes: u64,
    },
    /// `lseek(fd, offset, whence)`; returns the new offset.
    Lseek {
        /// Descriptor.
        fd: Fd,
        /// Offset, bytes (relative to `whence`).
        offset: i64,
        /// Origin.
        whence: Whence,
    },
    /// `fsync(fd)`.
    Fsync {
        /// Descriptor.
        fd: Fd,
    },
    /// `fdatasync(fd)`.
    Fdatasync {
        /// Descriptor.
        fd: Fd,
    },
    /// `ftruncate(fd, len)`.
    Ftruncate {
        /// Descriptor.
        fd: Fd,
        /// New size, bytes.
        len: u64,
    },
    /// `unlink(path)` of a file (a directory: EISDIR).
    Unlink {
        /// Absolute path.
        path: String,
    },
    /// `rmdir(path)` of an empty directory (a file: ENOTDIR; entries:
    /// ENOTEMPTY).
    Rmdir {
        /// Absolute path.
        path: String,
    },
    /// `rename(from, to)`.
    Rename {
        /// Absolute path of the existing name.
        from: String,
        /// Absolute path of the new name (replaced if it exists).
        to: String,
    },
    /// `mkdir(path)`.
    Mkdir {
        /// Absolute path.
        path: String,
    },
    /// `sync()`: write back everything, commit, flush.
    Sync,
    /// `stat(path)` (also `lstat` and `access(path, F_OK)`: no symbolic
    /// links or permissions are modelled): a look-up in the cached
    /// namespace; ENOENT or ENOTDIR for a missing path.
    Stat {
        /// Absolute path.
        path: String,
    },
    /// `mknod(path, S_IFREG | mode, 0)`: creates an empty regular file
    /// without opening it (EEXIST if the name exists). The FUSE daemon
    /// makes it for FUSE_MKNOD.
    Mknod {
        /// Absolute path.
        path: String,
    },
    /// `truncate(path, len)`: `ftruncate` by name. The FUSE daemon makes
    /// it for FUSE_SETATTR.
    Truncate {
        /// Absolute path.
        path: String,
        /// New size, bytes.
        len: u64,
    },
    /// Reading directory `path` to its end: `opendir`, `getdents64`,
    /// `closedir` — three system calls on the cached directory. The FUSE
    /// daemon's case-insensitive name search makes it for a name that
    /// `access` did not find.
    Readdir {
        /// Absolute path.
        path: String,
    },
}

/// `lseek` origins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whence {
    /// SEEK_SET.
    Set,
    /// SEEK_CUR.
    Cur,
    /// SEEK_END.
    End,
}

/// The access mode of an open file (`O_ACCMODE` of the flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    /// `O_RDONLY` (Linux's mode when none is given: its value is 0).
    ReadOnly,
    /// `O_WRONLY`.
    WriteOnly,
    /// `O_RDWR` (the default of the descriptors jobs and programs open).
    #[default]
    ReadWrite,
}

impl Access {
    /// Whether `read()` is allowed (`FMODE_READ`).
    pub fn reads(self) -> bool {
        self != Access::WriteOnly
    }

    /// Whether `write()` and `ftruncate()` are allowed (`FMODE_WRITE`).
    pub fn writes(self) -> bool {
        self != Access::ReadOnly
    }
}

/// How a file is open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenFlags {
    /// Access mode: a write on a read-only descriptor fails with EBADF,
    /// as does a read on a write-only one.
    pub access: Access,
    /// `O_DIRECT`: data bypasses the page cache.
    pub direct: bool,
    /// `O_SYNC`: a write returns once its data and the inode are durable
    /// (fsync semantics after each write).
    pub sync: bool,
    /// `O_DSYNC`: a write returns once its data and what is needed to read
    /// it back are durable (fdatasync semantics after each write).
    pub dsync: bool,
    /// `O_CREAT`: create the file if missing.
    pub creat: bool,
    /// `O_EXCL` (with `O_CREAT`): fail if it exists.
    pub excl: bool,
    /// `O_TRUNC`: truncate to 0 bytes.
    pub trunc: bool,
    /// `O_APPEND`: every write goes to the end of the file.
    pub append: bool,
}

/// Why a script's open flags are unusable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenFlagsError {
    /// Two access modes.
    #[error("{first} and {second}: give one access mode (O_RDONLY, O_WRONLY or O_RDWR)")]
    TwoModes {
        /// The first mode given.
        first: String,
        /// The second.
        second: String,
    },
    /// A flag mmcsim does not know.
    #[error("unknown open flag `{flag}`; expected O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECT, O_SYNC, O_DSYNC")]
    Unknown {
        /// The flag given (upper case).
        flag: String,
    },
}

impl OpenFlags {
    /// Parses `|`-separated flag names (`O_CREAT|O_TRUNC|O_SYNC`) with at
    /// most one access mode `O_RDONLY`, `O_WRONLY`, `O_RDWR`; without one
    /// the mode is `O_RDONLY`, as in Linux (its value is 0).
    pub fn parse(text: &str) -> Result<OpenFlags, OpenFlagsError> {
        let mut f = OpenFlags {
            access: Access::ReadOnly,
            ..OpenFlags::default()
        };
        let mut mode: Option<&str> = None;
        for name in text.split('|').map(str::trim).filter(|s| !s.is_empty()) {
            let upper = name.to_ascii_uppercase();
            let access = match upper.as_str() {
                "O_RDONLY" => Some(Access::ReadOnly),
                "O_WRONLY" => Some(Access::WriteOnly),
                "O_RDWR" => Some(Access::ReadWrite),
                _ => None,
            };
            if let Some(a) = access {
                if let Some(m) = mode {
                    return Err(OpenFlagsError::TwoModes {
                        first: m.to_string(),
                        second: name.to_string(),
                    });
                }
                mode = Some(name);
                f.access = a;
                continue;
            }
            match upper.as_str() {
                "O_DIRECT" => f.direct = true,
                "O_SYNC" => f.sync = true,
                "O_DSYNC" => f.dsync = true,
                "O_CREAT" => f.creat = true,
                "O_EXCL" => f.excl = true,
                "O_TRUNC" => f.trunc = true,
                "O_APPEND" => f.append = true,
                other => {
                    return Err(OpenFlagsError::Unknown {
                        flag: other.to_string(),
                    })
                }
            }
        }
        Ok(f)
    }

    /// Whether writes are synchronous (`O_SYNC` or `O_DSYNC`).
    pub fn any_sync(&self) -> bool {
        self.sync || self.dsync
    }
}
