//! The system calls the host serves for application threads, and the
//! flags a thread's file was opened with.

/// A system call issued by an application thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syscall {
    /// `pread(fd, buf, bytes, offset)`.
    Read {
        /// Byte offset within the file.
        offset: u64,
        /// Bytes to read.
        bytes: u64,
    },
    /// `pwrite(fd, buf, bytes, offset)`.
    Write {
        /// Byte offset within the file.
        offset: u64,
        /// Bytes to write.
        bytes: u64,
    },
    /// `fsync(fd)`.
    Fsync,
}

/// How a thread's file is open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenFlags {
    /// `O_DIRECT`: data bypasses the page cache.
    pub direct: bool,
    /// `O_SYNC` / `O_DSYNC`: a write returns once its data is on the device
    /// (then a cache flush).
    pub sync: bool,
}
