//! The report's `fs` section of a FUSE mount: the lower file system's
//! section as it always reads, plus a `fuse` key with the connection's
//! counters.

use serde::Serialize;

use super::super::{FsReport, UpcallOp};

/// `fs` of a FUSE mount.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FuseReport {
    /// The lower file system's section (its keys at the top level).
    #[serde(flatten)]
    pub lower: LowerReport,
    /// `fs.fuse`.
    pub fuse: FuseSection,
}

/// The lower file system's section: a disk file system's (FUSE does not
/// stack on FUSE, which keeps the type finite).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
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
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
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

/// Requests by FUSE opcode (`fs.fuse.requests`), each counted when a
/// daemon thread takes it (the connection's own counters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Opcodes {
    /// FUSE_READ.
    pub read: u64,
    /// FUSE_WRITE.
    pub write: u64,
    /// FUSE_FSYNC.
    pub fsync: u64,
    /// FUSE_LOOKUP.
    pub lookup: u64,
    /// FUSE_GETATTR.
    pub getattr: u64,
    /// FUSE_CREATE (answered ENOSYS by sdcard, once per mount).
    pub create: u64,
    /// FUSE_MKNOD.
    pub mknod: u64,
    /// FUSE_MKDIR.
    pub mkdir: u64,
    /// FUSE_UNLINK.
    pub unlink: u64,
    /// FUSE_RMDIR.
    pub rmdir: u64,
    /// FUSE_RENAME.
    pub rename: u64,
    /// FUSE_OPEN.
    pub open: u64,
    /// FUSE_FLUSH.
    pub flush: u64,
    /// FUSE_RELEASE.
    pub release: u64,
    /// FUSE_SETATTR.
    pub setattr: u64,
}

impl Opcodes {
    /// The counter of `op`'s opcode.
    pub(super) fn counter(&mut self, op: UpcallOp) -> &mut u64 {
        match op {
            UpcallOp::Read { .. } => &mut self.read,
            UpcallOp::Write { .. } => &mut self.write,
            UpcallOp::Fsync { .. } => &mut self.fsync,
            UpcallOp::Lookup { .. } => &mut self.lookup,
            UpcallOp::Getattr => &mut self.getattr,
            UpcallOp::Create { .. } => &mut self.create,
            UpcallOp::Mknod { .. } => &mut self.mknod,
            UpcallOp::Mkdir { .. } => &mut self.mkdir,
            UpcallOp::Unlink { rmdir: false, .. } => &mut self.unlink,
            UpcallOp::Unlink { rmdir: true, .. } => &mut self.rmdir,
            UpcallOp::Rename => &mut self.rename,
            UpcallOp::Open { .. } => &mut self.open,
            UpcallOp::Flush => &mut self.flush,
            UpcallOp::Release => &mut self.release,
            UpcallOp::Setattr { .. } => &mut self.setattr,
        }
    }

    /// Requests of every opcode.
    pub fn total(&self) -> u64 {
        self.read
            + self.write
            + self.fsync
            + self.lookup
            + self.getattr
            + self.create
            + self.mknod
            + self.mkdir
            + self.unlink
            + self.rmdir
            + self.rename
            + self.open
            + self.flush
            + self.release
            + self.setattr
    }
}

/// A mean, µs (0 when nothing was counted).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WaitMean {
    /// Mean, µs.
    pub mean: f64,
}
