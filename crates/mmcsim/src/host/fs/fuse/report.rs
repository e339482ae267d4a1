//! The report's `fs` section of a FUSE mount: the lower file system's
//! section as it always reads, plus a `fuse` key with the connection's
//! counters.

use serde::Serialize;

use super::super::FsReport;

/// `fs` of a FUSE mount.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FuseReport {
    /// The lower file system's section (its keys at the top level).
    #[serde(flatten)]
    pub lower: LowerReport,
    /// `fs.fuse`.
    pub fuse: FuseSection,
}

/// The lower file system's section: a disk file system's (FUSE does not
/// stack on FUSE, which keeps the type finite).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LowerReport {
    /// ext4 + JBD2.
    Ext4(crate::host::fs::ext4::report::Ext4Report),
}

impl LowerReport {
    /// The lower section of a disk file system's report.
    pub fn of(r: FsReport) -> LowerReport {
        match r {
            FsReport::Ext4(e) => LowerReport::Ext4(e),
            FsReport::Fuse(_) | FsReport::Vfat(_) => {
                unreachable!("fs.lower other than ext4 is refused by validation")
            }
        }
    }
}

/// `fs.fuse`: the sdcard daemon's work.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FuseSection {
    /// The lower file system (`"ext4"`).
    pub lower: String,
    /// Daemon request threads.
    pub daemon_threads: u32,
    /// Largest FUSE_READ, KiB.
    pub max_read_kib: u32,
    /// Largest FUSE_WRITE the kernel sends, KiB (`max_write` capped at
    /// `FUSE_MAX_PAGES_PER_REQ` pages).
    pub max_write_kib: u32,
    /// Requests served, by opcode.
    pub requests: Opcodes,
    /// Payload bytes copied through /dev/fuse (write data in, read data
    /// out).
    pub bytes_copied: u64,
    /// Daemon threads' time on requests, summed, µs.
    pub daemon_busy_us: f64,
    /// Time a request waited for a daemon thread, µs.
    pub queue_wait_us: WaitMean,
    /// Most requests waiting for a daemon thread at once.
    pub max_pending: u64,
}

/// Requests by FUSE opcode.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Opcodes {
    /// FUSE_READ.
    pub read: u64,
    /// FUSE_WRITE.
    pub write: u64,
    /// FUSE_FSYNC.
    pub fsync: u64,
}

/// A mean, µs (0 when nothing was counted).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WaitMean {
    /// Mean, µs.
    pub mean: f64,
}
