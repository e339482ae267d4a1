//! FUSE over a lower file system, as Android's sdcard daemon served
//! `/sdcard` from `/data/media` on ext4 (Android 4.x, Linux 3.1-3.4).
//!
//! What the sources say, and what the model does with it:
//! * sdcard mounts without `direct_io` (`handle_open` replies
//!   `open_flags = 0`), so app reads go through the FUSE inode's own page
//!   cache with the FUSE mount's read-ahead ([`params::READ_AHEAD_PAGES`]);
//!   a miss sends FUSE_READ requests of at most `max_read`
//!   ([`params::DEFAULT_MAX_READ_KIB`]), synchronously from the reading
//!   thread (sdcard does not set `FUSE_ASYNC_READ`, so `fuse_readpages`
//!   waits for each reply). The daemon answers with `pread64` on its
//!   lower descriptor — the lower file system's page cache, read-ahead and
//!   block I/O — so a page read through FUSE is cached twice.
//! * Writes are write-through (no writeback cache before Linux 3.15):
//!   `fuse_perform_write` sends FUSE_WRITE requests of at most `max_write`
//!   and [`params::MAX_PAGES_PER_REQ`] pages and waits for each; the
//!   daemon `pwrite64`s them into the lower page cache, whose writeback
//!   (and journal) go on as for any lower file. `fsync` sends FUSE_FSYNC,
//!   which the daemon turns into `fsync`/`fdatasync` of the lower file.
//! * O_DIRECT opens fail with EINVAL (`fuse_open_common` in 3.x).
//! * The daemon's threads ([`params::default_daemon_threads`]) take
//!   requests from the connection in order ([`dev`]); each request costs
//!   a wake-up of a sleeping thread, the `read(/dev/fuse)` and reply
//!   `writev` system calls, the payload copies, [`params::REQUEST_NS`],
//!   and the lower system call itself; the reply wakes the sender.
//!
//! * Namespace and descriptor calls are requests too (`namei.rs`): the
//!   path walk's FUSE_LOOKUP (a name the dentry cache does not hold valid)
//!   and FUSE_GETATTR (expired attributes, for the permission checks of
//!   sdcard's `default_permissions` mount), with sdcard's 10 s
//!   `entry_valid`/`attr_valid` ([`dcache`]); FUSE_CREATE once (ENOSYS),
//!   then FUSE_MKNOD + FUSE_OPEN for a new file; FUSE_OPEN; FUSE_FLUSH on
//!   each close and FUSE_RELEASE in the background; FUSE_UNLINK,
//!   FUSE_RMDIR, FUSE_MKDIR, FUSE_RENAME; FUSE_SETATTR for `ftruncate`.
//!   The daemon serves each with its handler's lower system calls
//!   (`sdcard.rs`: `access`, `lstat`, `mknod`, `open`, ... on ext4, with
//!   their metadata and journal work), and the reply carries the lower
//!   call's errno.
//!
//! The upper page cache is not invalidated on open
//! (`invalidate_inode_pages2` without `FOPEN_KEEP_CACHE`), and pages a
//! FUSE_WRITE covers are not kept up to date in it.

pub mod dcache;
pub mod dev;
mod namei;
pub mod params;
pub mod report;
mod sdcard;
mod vfs;

use std::collections::BTreeMap;

use super::config::{FsConfig, FsType};
use super::{DaemonStep, FileSystem, Ino, NsCall, NsStep, Upcall, UpcallOp};
use crate::error::SettingError;
use crate::host::page_cache::{FileId, PageCache};
use crate::types::Ns;

use dcache::Dcache;
use dev::Dev;
use report::{FuseReport, FuseSection, WaitMean};

/// A FUSE mount over a lower file system.
pub struct Fuse {
    lower: Box<dyn FileSystem>,
    lower_type: FsType,
    /// Upper (FUSE inode) mapping of each lower inode opened through FUSE.
    upper: BTreeMap<Ino, FileId>,
    /// The same, by mapping.
    upper_ino: BTreeMap<FileId, Ino>,
    daemon_threads: u32,
    /// Thread index of daemon thread 0.
    first_daemon: u32,
    max_read_kib: u32,
    max_write_kib: u32,
    dev: Dev,
    /// The kernel's dentry and attribute caches, and the daemon's node
    /// paths.
    dcache: Dcache,
    /// Namespace calls in progress, by sending task.
    walks: BTreeMap<u32, namei::Walk>,
    /// FUSE_CREATE was answered ENOSYS (`fc->no_create`).
    no_create: bool,
}

impl Fuse {
    /// The lower file system's configuration: `cfg` with `type = lower`
    /// and no FUSE keys.
    pub fn lower_config(cfg: &FsConfig) -> FsConfig {
        FsConfig {
            fs_type: cfg.lower.unwrap_or(FsType::Ext4),
            lower: None,
            daemon_threads: None,
            max_read_kib: None,
            max_write_kib: None,
            ..cfg.clone()
        }
    }

    /// Makes the lower file system (through the registry) and mounts FUSE
    /// over it with `cfg`'s daemon.
    pub fn mount(
        cfg: &FsConfig,
        part_sector: u64,
        blocks: u64,
        tick_ns: Ns,
        cache: &mut PageCache,
    ) -> Result<Fuse, SettingError> {
        let lower_cfg = Fuse::lower_config(cfg);
        let lower = super::mkfs(&lower_cfg, part_sector, blocks, tick_ns, cache)?;
        let threads = cfg
            .daemon_threads
            .unwrap_or_else(|| params::default_daemon_threads(None));
        let mut dcache = Dcache::default();
        if let Ok(root) = lower.lookup(&[]) {
            dcache.know(root, &[]);
        }
        Ok(Fuse {
            lower,
            lower_type: lower_cfg.fs_type,
            upper: BTreeMap::new(),
            upper_ino: BTreeMap::new(),
            daemon_threads: threads,
            first_daemon: 0,
            max_read_kib: cfg.max_read_kib.unwrap_or(params::DEFAULT_MAX_READ_KIB),
            max_write_kib: cfg.max_write_kib.unwrap_or(params::DEFAULT_MAX_WRITE_KIB),
            dev: Dev::new(threads),
            dcache,
            walks: BTreeMap::new(),
            no_create: false,
        })
    }

    /// The upper mapping of `ino`, made on first use (sized like the file).
    fn upper_of(&mut self, ino: Ino, cache: &mut PageCache) -> FileId {
        if let Some(&m) = self.upper.get(&ino) {
            return m;
        }
        let m = cache.add_file(self.lower.size(ino).div_ceil(4096));
        self.upper.insert(ino, m);
        self.upper_ino.insert(m, ino);
        m
    }

    /// Largest FUSE_WRITE the kernel sends, KiB: `max_write`, at most
    /// [`params::MAX_PAGES_PER_REQ`] pages.
    fn write_kib(&self) -> u32 {
        self.max_write_kib
            .min((params::MAX_PAGES_PER_REQ * 4) as u32)
    }

    /// The report's `fs` section.
    fn fuse_report(&self) -> FuseReport {
        let s = &self.dev.stats;
        let n = self.dev.requests();
        let mean = if n == 0 {
            0.0
        } else {
            s.queue_wait_ns as f64 / n as f64 / 1e3
        };
        FuseReport {
            lower: report::LowerReport::of(self.lower.report()),
            fuse: FuseSection {
                lower: match self.lower_type {
                    FsType::Ext4 => "ext4".into(),
                    FsType::Fuse => "fuse".into(),
                    FsType::Vfat => "vfat".into(),
                },
                daemon_threads: self.daemon_threads,
                max_read_kib: self.max_read_kib,
                max_write_kib: self.write_kib(),
                requests: s.requests.clone(),
                bytes_copied: s.bytes_copied,
                daemon_busy_us: s.busy_ns as f64 / 1e3,
                queue_wait_us: WaitMean { mean },
                max_pending: s.max_pending,
            },
        }
    }
}

impl super::Forwarding for Fuse {
    fn forwards(&self, m: FileId) -> bool {
        self.upper_ino.contains_key(&m)
    }

    fn lower_mapping(&self, ino: Ino) -> FileId {
        self.lower.mapping(ino)
    }

    fn read_ahead_pages(&self) -> u64 {
        params::READ_AHEAD_PAGES
    }

    fn max_read_pages(&self) -> u64 {
        (self.max_read_kib / 4) as u64
    }

    fn max_write_bytes(&self) -> u64 {
        self.write_kib() as u64 * 1024
    }

    fn request_ns(&self) -> Ns {
        params::REQUEST_NS
    }

    fn servers(&self) -> u32 {
        self.daemon_threads
    }

    fn server_thread(&self, i: u32) -> u32 {
        self.first_daemon + i
    }

    fn server_pid(&self) -> u32 {
        params::DAEMON_PID
    }

    fn send(&mut self, req: Upcall, now: Ns) -> Option<(u32, Upcall)> {
        if let UpcallOp::Write { .. } = req.op {
            // fuse_perform_write ends with fuse_invalidate_attr.
            self.dcache.invalidate_attr(req.ino);
        }
        self.dev.send(req, now)
    }

    fn replied(&mut self, i: u32, now: Ns, busy: Ns, bytes: u64) -> Option<Upcall> {
        self.dev.replied(i, now, busy, bytes)
    }

    fn ns_begin(&mut self, sender: u32, fd: u32, call: NsCall, now: Ns) -> NsStep {
        self.walk_begin(sender, fd, call, now)
    }

    fn ns_replied(&mut self, sender: u32, ret: i64, now: Ns) -> NsStep {
        self.walk_reply(sender, ret, now)
    }

    fn daemon_step(&self, req: &Upcall, rets: &[i64]) -> DaemonStep {
        self.sdcard_step(req, rets)
    }
}
