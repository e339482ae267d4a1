//! File systems the host can mount, behind one interface.
//!
//! * [`FileSystem`]: what the host core (system calls, descriptors, page
//!   cache, read-ahead, writeback, the flusher) asks of a mounted file
//!   system — its namespace, the mapping of file pages to device blocks
//!   and their allocation, what a write dirties, what `fsync` must write
//!   and flush, its kernel threads and timers, and its report section.
//! * [`Kernel`]: what the host core lends a file system while it runs —
//!   the page cache, bio submission as a kernel thread, timers, waking a
//!   task that sleeps in it.
//! * [`mkfs`] and [`min_blocks`]: the registry, one `match` on
//!   [`FsType`] per question; a new file system adds its line there.
//! * [`config`]: the scenario's `[fs]` section.
//! * [`ext4`]: ext4 with 3.x behaviour — layout, allocation, inodes,
//!   directories, metadata buffers — and its journal thread.
//! * [`jbd2`]: the journal's log, transactions and checkpoint lists.
//! * [`vfat`]: FAT32 with the Linux 2.6.35-3.4 `vfat` driver's behaviour,
//!   as vold formatted and mounted Android's `/sdcard`.
//! * [`fuse`]: FUSE over a lower file system, served by Android's sdcard
//!   daemon; its file I/O is forwarded ([`Forwarding`], [`Upcall`]) to
//!   daemon threads the host runs as user-space tasks.
//!
//! Without `[fs]` the host keeps files as raw contiguous extents
//! ([`crate::host::files`]), with no metadata at all; that layout is not a
//! file system and stays outside this interface
//! ([`crate::host::Mount::Raw`]).

pub mod config;
pub mod ext4;
pub mod fuse;
pub mod jbd2;
mod kernel;
pub mod mkfs_error;
pub mod recovery;
pub mod vfat;

use serde::Serialize;

use super::page_cache::{FileId, PageCache};
use super::syscall::OpenFlags;
use crate::stats::DeviceTimes;
use crate::types::Ns;

pub use super::errno::Errno;
pub use config::{AtimeMode, DataMode, FsConfig, FsType, JournalSwitch};
pub use kernel::Kernel;

/// An inode number of the mounted file system (its own numbering).
pub type Ino = u32;

/// A mapped or unmapped run of a file's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRun {
    /// First page.
    pub page: u64,
    /// Pages.
    pub pages: u64,
    /// First device sector, or `None` for a hole (reads as zeros).
    pub sector: Option<u64>,
}

/// An event a file system scheduled for itself through
/// [`Kernel::at`]; the host hands it back to [`FileSystem::event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsEvent {
    /// The bios kernel thread `thread` prepared reach the block layer
    /// (after its submission cost).
    Submit {
        /// The thread's index.
        thread: u32,
    },
    /// A timer the file system armed, with its own tag (ext4: the
    /// `commit=` timer of a transaction id).
    Timer(u64),
}

/// What `fsync`/`fdatasync` must still do once the file's data pages are
/// written and waited for (`filemap_write_and_wait`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsyncPlan {
    /// The task sleeps until the file system wakes it
    /// ([`Kernel::wake_task`]) — ext4: the JBD2 commit of the inode's
    /// transaction, whose commit sends the cache flush; the call returns
    /// when woken.
    Wait,
    /// Write these dirty pages of the metadata mapping in place (inode,
    /// directory, allocation blocks), wait, then the cache flush
    /// ([`FileSystem::sync_flush`]).
    InPlace {
        /// The mapping holding them (the block device).
        mapping: FileId,
        /// Its pages (file-system blocks) to write when dirty.
        blocks: Vec<u64>,
    },
    /// Nothing left to write: only the cache flush
    /// ([`FileSystem::sync_flush`]).
    Flush,
}

/// The report's `fs` section, per file-system type. It serialises as the
/// section of the mounted type alone (no tag), so an ext4 report reads as
/// it always has.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FsReport {
    /// ext4 + JBD2.
    Ext4(ext4::report::Ext4Report),
    /// FAT32 (vfat).
    Vfat(vfat::report::VfatReport),
    /// FUSE: the lower file system's section with a `fuse` key.
    Fuse(fuse::report::FuseReport),
}

// ---- stacked file systems served in user space (FUSE) -----------------

/// A name a forwarded namespace request refers to: the first `depth`
/// components of path argument `arg` of the sending task's call (0: its
/// path, or rename's source; 1: rename's target). FUSE sends the parent's
/// node id and the last of these components; the daemon turns them back
/// into a lower path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRef {
    /// Which path argument of the call.
    pub arg: u8,
    /// How many of its components.
    pub depth: u32,
}

/// What a forwarded request asks the user-space server to do: the FUSE
/// opcodes a 3.x kernel sends for the VFS calls mmcsim models
/// (`include/linux/fuse.h`; sent from `fs/fuse/dir.c` and
/// `fs/fuse/file.c` of Linux 3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpcallOp {
    /// FUSE_READ: pages `[first_page, first_page + pages)` of the upper
    /// mapping `mapping`; the reply fills them.
    Read {
        /// The upper (FUSE inode's) page-cache mapping.
        mapping: FileId,
        /// First page.
        first_page: u64,
        /// Pages (at most the mount's `max_read`).
        pages: u64,
    },
    /// FUSE_WRITE of `bytes` at byte `offset` (write-through: the daemon
    /// `pwrite`s them to the lower file).
    Write {
        /// Byte offset in the file.
        offset: u64,
        /// Bytes (at most the mount's `max_write`).
        bytes: u64,
    },
    /// FUSE_FSYNC (`fsync_flags & 1`: fdatasync).
    Fsync {
        /// fdatasync rather than fsync.
        datasync: bool,
    },
    /// FUSE_LOOKUP of a name in its parent directory: a path component
    /// the dentry cache does not hold, or holds past its `entry_valid`
    /// (`fuse_lookup`, `fuse_dentry_revalidate`).
    Lookup {
        /// The name (its parent is the component before it).
        name: NodeRef,
    },
    /// FUSE_GETATTR of node `ino` (the request's inode) whose attributes
    /// are past their `attr_valid`, asked by the permission check of a
    /// `default_permissions` mount or by `stat` (`fuse_permission`,
    /// `fuse_update_attributes`).
    Getattr,
    /// FUSE_CREATE (atomic create + open, `fuse_create_open`). sdcard does
    /// not implement it: the reply is ENOSYS, after which the kernel sets
    /// `no_create` and falls back to FUSE_MKNOD + FUSE_OPEN.
    Create {
        /// The new name.
        name: NodeRef,
    },
    /// FUSE_MKNOD of a regular file (`fuse_mknod` via `fuse_create`).
    Mknod {
        /// The new name.
        name: NodeRef,
    },
    /// FUSE_MKDIR (`fuse_mkdir`).
    Mkdir {
        /// The new name.
        name: NodeRef,
    },
    /// FUSE_UNLINK, or FUSE_RMDIR when `rmdir` (`fuse_unlink`,
    /// `fuse_rmdir`).
    Unlink {
        /// The name to remove.
        name: NodeRef,
        /// FUSE_RMDIR.
        rmdir: bool,
    },
    /// FUSE_RENAME of the call's path 0 to its path 1 (`fuse_rename`).
    Rename,
    /// FUSE_OPEN of node `ino` with the open flags less O_CREAT and O_EXCL
    /// (O_TRUNC is kept: sdcard asks for `FUSE_ATOMIC_O_TRUNC`;
    /// `fuse_send_open`).
    Open {
        /// The flags the daemon opens the lower file with.
        flags: OpenFlags,
    },
    /// FUSE_FLUSH, sent by every `close` of a regular file (`fuse_flush`);
    /// the caller waits for it.
    Flush,
    /// FUSE_RELEASE when the last reference to an open file goes
    /// (`fuse_release_common`); queued in the background, the closing
    /// task does not wait. The request's `fd` is the host's token for the
    /// daemon's handle.
    Release,
    /// FUSE_SETATTR with FATTR_SIZE (`ftruncate`, `fuse_do_setattr`; an
    /// O_TRUNC open sends none with `FUSE_ATOMIC_O_TRUNC`).
    Setattr {
        /// The new size, bytes.
        size: u64,
    },
}

impl UpcallOp {
    /// Whether the request belongs to a namespace or descriptor call (its
    /// reply goes to the call's walk), rather than to file I/O.
    pub fn is_namespace(&self) -> bool {
        !matches!(
            self,
            UpcallOp::Read { .. } | UpcallOp::Write { .. } | UpcallOp::Fsync { .. }
        )
    }

    /// Whether the daemon serves it on its handle of the sender's open
    /// file (`fuse_open_out.fh`), rather than by path.
    pub fn uses_handle(&self) -> bool {
        matches!(
            self,
            UpcallOp::Read { .. }
                | UpcallOp::Write { .. }
                | UpcallOp::Fsync { .. }
                | UpcallOp::Release
        )
    }
}

/// A namespace or descriptor call an application makes on a forwarded
/// mount, as the VFS hands it to the stacked file system (paths as
/// components under `/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NsCall {
    /// `open(path, flags)`; done with the inode.
    Open {
        /// Path components.
        path: Vec<String>,
        /// Open flags.
        flags: OpenFlags,
    },
    /// The last `close` of an open file of `ino`.
    Close {
        /// The inode.
        ino: Ino,
    },
    /// `ftruncate` of an open file of `ino` to `len` bytes.
    Truncate {
        /// The inode.
        ino: Ino,
        /// New size, bytes.
        len: u64,
    },
    /// `unlink(path)`, or `rmdir(path)` when `rmdir`.
    Unlink {
        /// Path components.
        path: Vec<String>,
        /// rmdir(2).
        rmdir: bool,
    },
    /// `mkdir(path)`.
    Mkdir {
        /// Path components.
        path: Vec<String>,
    },
    /// `rename(from, to)`.
    Rename {
        /// Source path components.
        from: Vec<String>,
        /// Target path components.
        to: Vec<String>,
    },
    /// `stat(path)`.
    Stat {
        /// Path components.
        path: Vec<String>,
    },
}

/// What a namespace call on a forwarded mount does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NsStep {
    /// Send this request and sleep until its reply.
    Send(Upcall),
    /// The call returns `ret` (an open: the inode; −errno on failure),
    /// after queueing `detach` (FUSE_RELEASE) without waiting for it.
    Done {
        /// Return value, or −errno.
        ret: i64,
        /// A request sent in the background.
        detach: Option<Upcall>,
    },
}

/// The descriptor of a request's handle in a server thread's table: the
/// thread's only open file while it serves the request, so the first
/// number a task's `open` returns (the host checks they agree).
pub const HANDLE_FD: u32 = 3;

/// What a server thread does next for the request it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DaemonStep {
    /// Make this system call on the lower file system (descriptor
    /// [`HANDLE_FD`] is the request's handle).
    Call(super::syscall::Syscall),
    /// Reply with this result (0 or a byte count; −errno).
    Reply(i64),
}

/// One request forwarded to the user-space server: the FUSE request
/// `fuse_request_send` queues on the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Upcall {
    /// What to do.
    pub op: UpcallOp,
    /// The node (the lower file system's inode number, which the FUSE node
    /// shares): the file of a read, write, fsync, open, flush, release or
    /// setattr, the node of a getattr, the source of a rename; 0 for a
    /// request that names a child.
    pub ino: Ino,
    /// The sending task (it sleeps until the reply, but for FUSE_RELEASE).
    pub sender: u32,
    /// The sender's descriptor (an open's: the one it will return): with
    /// `sender` and `ino`, the daemon's file handle (`fuse_open_out.fh`,
    /// one lower descriptor per open). FUSE_RELEASE carries the host's
    /// token for the handle instead.
    pub fd: u32,
    /// When it was queued, ns.
    pub queued: Ns,
}

/// A stacked file system whose file I/O is forwarded as requests to a
/// user-space server's threads (FUSE: Android's sdcard daemon). The file
/// system keeps the connection's queue, its limits and its counters; the
/// host runs the server threads as tasks that make ordinary system calls
/// on the lower file system's files (its own page cache, read-ahead and
/// block I/O), and brings the replies back.
pub trait Forwarding {
    /// Whether page-cache mapping `m` is an upper (forwarded) file's.
    fn forwards(&self, m: FileId) -> bool;

    /// The lower file's page-cache mapping of inode `ino` (what the
    /// daemon's descriptor reads and writes).
    fn lower_mapping(&self, ino: Ino) -> FileId;

    /// Read-ahead window of the upper mapping, 4 KiB pages.
    fn read_ahead_pages(&self) -> u64;

    /// Largest FUSE_READ, 4 KiB pages.
    fn max_read_pages(&self) -> u64;

    /// Largest FUSE_WRITE, bytes.
    fn max_write_bytes(&self) -> u64;

    /// Server CPU per request besides its system calls and copies, ns.
    fn request_ns(&self) -> Ns;

    /// Number of server threads.
    fn servers(&self) -> u32;

    /// Thread index of server thread `i` (`0..servers()`).
    fn server_thread(&self, i: u32) -> u32;

    /// Pid of the server process.
    fn server_pid(&self) -> u32;

    /// Queues `req` at `now`; returns the idle server thread (index) that
    /// takes it at once, with the request, if one is idle.
    fn send(&mut self, req: Upcall, now: Ns) -> Option<(u32, Upcall)>;

    /// Server thread `i` replied at `now` after `busy` ns on its request,
    /// copying `bytes` of payload in and out of the kernel; returns its
    /// next request (it reads /dev/fuse again), or `None` (it sleeps).
    fn replied(&mut self, i: u32, now: Ns, busy: Ns, bytes: u64) -> Option<Upcall>;

    /// Task `sender` starts namespace call `call` at `now` (`fd`: the
    /// descriptor it concerns, or that an open will return): its first
    /// request, or its result when the kernel's caches answer it.
    fn ns_begin(&mut self, sender: u32, fd: u32, call: NsCall, now: Ns) -> NsStep;

    /// The reply `ret` (0 or −errno) to task `sender`'s namespace request
    /// came back at `now`: its next request, or the call's result.
    fn ns_replied(&mut self, sender: u32, ret: i64, now: Ns) -> NsStep;

    /// What server thread serving `req` does next, given the results of
    /// the lower system calls it has made for it so far, in order.
    fn daemon_step(&self, req: &Upcall, rets: &[i64]) -> DaemonStep;
}

/// The VFS's `may_open` checks for opening an existing inode with
/// `flags`: `EEXIST` for `O_CREAT | O_EXCL`, `EISDIR` for a directory
/// opened for writing (`O_TRUNC` and `O_CREAT` ask for write access).
/// Returns whether `O_TRUNC` must empty it (it holds `size` bytes).
pub fn may_open(flags: OpenFlags, is_dir: bool, size: u64) -> Result<bool, Errno> {
    if flags.creat && flags.excl {
        return Err(Errno::Exist);
    }
    if is_dir && (flags.access.writes() || flags.trunc || flags.creat) {
        return Err(Errno::IsDir);
    }
    Ok(flags.trunc && size > 0)
}

/// A mounted file system, as the host core sees it.
///
/// The host holds it as `Box<dyn FileSystem>`: the set of file systems is
/// open (ext4, VFAT; FUSE to come), a stacked one (FUSE over ext4)
/// holds its lower file system the same way, and one virtual call per
/// system-call step costs nothing next to the simulation's own work — so
/// a trait object rather than an enum the host core would have to extend.
///
/// Units: offsets and sizes in bytes, pages and blocks of 4 KiB, times in
/// ns. Inode numbers ([`Ino`]) are the file system's own; page-cache
/// mappings ([`FileId`]) are the host's, created by the file system in
/// the [`PageCache`] it is given.
///
/// Where a stacked file system goes: FUSE (Android's sdcard daemon over
/// ext4) implements this trait around a `Box<dyn FileSystem>` lower file
/// system. Its daemon threads are kernel threads like JBD2's
/// ([`FileSystem::threads`]), it schedules their work through
/// [`Kernel::at`] / [`FileSystem::event`], submits with
/// [`Kernel::submit_plugged`] and completes with [`FileSystem::bio_done`];
/// a call that must wait for the daemon sleeps the way an `fsync` waits
/// for a commit ([`FsyncPlan::Wait`], [`Kernel::wake_task`]). The per-call
/// routing and cost decision (request, context switch, copy,
/// `max_read`/`max_write` splitting) is the hook that stacking adds to the
/// data and namespace methods below.
pub trait FileSystem {
    // ---- mount time (unmeasured) --------------------------------------

    /// Creates regular file `path` (components under `/`) with its missing
    /// directories and `pages` pages of allocated blocks, as a benchmark's
    /// preparation leaves it (committed, written home); returns its inode.
    fn populate(&mut self, path: &[&str], pages: u64, cache: &mut PageCache) -> Result<Ino, Errno>;

    /// Ends mount-time set-up: metadata changes from now on are dirtied
    /// (and journaled), and the counters start.
    fn finish_mount(&mut self);

    /// Every region mkfs and set-up wrote, as `(first sector, sectors)`,
    /// with the data of the inodes `with_data` selects.
    fn written_extents(&self, with_data: &dyn Fn(Ino) -> bool) -> Vec<(u64, u64)>;

    /// FITRIM of every free block: the `(first sector, sectors)` to
    /// discard.
    fn fstrim(&mut self) -> Vec<(u64, u64)>;

    /// The report's `fs` section.
    fn report(&self) -> FsReport;

    // ---- power loss (`simctl crash`) ----------------------------------

    /// Starts recording what mount-time recovery after a power cut needs
    /// (off by default; a file system without recovery ignores it).
    fn record_recovery(&mut self) {}

    /// Mount after a power cut at `at` ns: the file system's recovery and
    /// consistency check over the card's recovered content `media`.
    fn recover(&self, media: &dyn recovery::MediaAfterCut, at: Ns) -> recovery::FsRecovery {
        let _ = (media, at);
        recovery::FsRecovery::default()
    }

    /// Its internal state in words (threads, journal), for the report of
    /// a stalled run; empty when there is nothing to say.
    fn describe(&self) -> String {
        String::new()
    }

    /// Kernel threads the file system runs (ext4: its journal thread when
    /// it has a journal).
    fn threads(&self) -> u32;

    /// The host numbers the file system's kernel threads from `first`
    /// (their bios carry these thread indices).
    fn set_first_thread(&mut self, first: u32);

    // ---- namespace -----------------------------------------------------

    /// The largest file, bytes (`s_maxbytes`): a write at or past it is
    /// EFBIG, and so is a truncate or seek beyond it.
    fn max_bytes(&self) -> u64;

    /// The inode at `path` (components under `/`).
    fn lookup(&self, path: &[&str]) -> Result<Ino, Errno>;

    /// The page-cache mapping of `ino`'s data.
    fn mapping(&self, ino: Ino) -> FileId;

    /// Size of `ino`, bytes (`i_size`).
    fn size(&self, ino: Ino) -> u64;

    /// Whether `ino` is a directory.
    fn is_dir(&self, ino: Ino) -> bool;

    /// `open(path, flags)` by process `pid` at `now`: looks the file up,
    /// creating (`O_CREAT`) or truncating (`O_TRUNC`) it, and counts the
    /// opener (EEXIST, EISDIR, ENOENT, ENOSPC as Linux returns them).
    fn open(
        &mut self,
        path: &[&str],
        flags: OpenFlags,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<Ino, Errno>;

    /// Counts an opener of `ino` without any metadata change (a descriptor
    /// the process held before the run).
    fn hold(&mut self, ino: Ino);

    /// The last `close` of an opener of `ino`: an unlinked inode with no
    /// opener left is freed.
    fn close(&mut self, ino: Ino, cache: &mut PageCache, now: Ns);

    /// `ftruncate(ino, len)`.
    fn truncate(&mut self, ino: Ino, len: u64, cache: &mut PageCache, now: Ns)
        -> Result<(), Errno>;

    /// `unlink(path)`, or `rmdir(path)` when `rmdir` (EISDIR / ENOTDIR for
    /// the wrong kind, ENOTEMPTY).
    fn unlink(
        &mut self,
        path: &[&str],
        rmdir: bool,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno>;

    /// `rename(from, to)` by process `pid`.
    fn rename(
        &mut self,
        from: &[&str],
        to: &[&str],
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno>;

    /// `mkdir(path)` by process `pid`.
    fn mkdir(
        &mut self,
        path: &[&str],
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno>;

    // ---- data: mapping, allocation, what a write dirties ---------------

    /// Maps pages `[first, first + pages)` of mapping `m` (a file's, or
    /// the metadata mapping's) to device runs, holes as `None`, into `out`
    /// (cleared first). No allocation.
    fn map_pages(&self, m: FileId, first: u64, pages: u64, out: &mut Vec<PageRun>);

    /// Pages `[first, first + pages)` of `m`, taken for writeback by
    /// process `pid`'s I/O, get their blocks (delayed allocation happens
    /// here) and the metadata that follows; their runs go into `out`.
    #[allow(clippy::too_many_arguments)]
    fn writepages(
        &mut self,
        m: FileId,
        first: u64,
        pages: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
        out: &mut Vec<PageRun>,
    );

    /// Of a write of `len` bytes at `pos` to `ino`, the bytes the file
    /// system has room for (0: ENOSPC); `buffered` = through the cache.
    fn writable_bytes(
        &self,
        ino: Ino,
        pos: u64,
        len: u64,
        buffered: bool,
        cache: &PageCache,
    ) -> u64;

    /// A buffered write of `[pos, pos + len)` to `ino` is in the cache
    /// (`write_end`): size, times, allocation or reservation, and the
    /// metadata this dirties. Returns whether the host must mark the
    /// pages dirty for writeback (false when the file system took them,
    /// as data=journal does).
    #[allow(clippy::too_many_arguments)]
    fn write_end(
        &mut self,
        ino: Ino,
        pos: u64,
        len: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<bool, Errno>;

    /// An O_DIRECT write of `[pos, pos + len)` to `ino`: its holes get
    /// blocks and the size grows.
    #[allow(clippy::too_many_arguments)]
    fn direct_write(
        &mut self,
        ino: Ino,
        pos: u64,
        len: u64,
        pid: u32,
        cache: &mut PageCache,
        now: Ns,
    ) -> Result<(), Errno>;

    /// A read of `ino` finished at `now` (atime, by the mount's policy).
    fn read_done(&mut self, ino: Ino, cache: &mut PageCache, now: Ns);

    /// Pages `[first, first + pages)` of mapping `m` reached the device;
    /// the last request of that write ran at `times`.
    fn pages_written(&mut self, m: FileId, first: u64, pages: u32, times: DeviceTimes);

    // ---- durability ------------------------------------------------------

    /// The metadata mapping (the block device's buffers), which `sync()`
    /// writes after the files' data.
    fn metadata_mapping(&self) -> Option<FileId>;

    /// `fsync`/`fdatasync` (`datasync`) of `ino` by task `task` at `now`,
    /// after its data is written and waited for: what remains. On
    /// [`FsyncPlan::Wait`] the file system has taken the task and wakes it
    /// through `k`.
    fn fsync(
        &mut self,
        ino: Ino,
        datasync: bool,
        task: u32,
        now: Ns,
        k: &mut dyn Kernel,
    ) -> FsyncPlan;

    /// `sync()`'s file-system step after the data (`sync_fs`): returns
    /// true when task `task` must sleep until the file system wakes it.
    fn sync_fs(&mut self, task: u32, now: Ns, k: &mut dyn Kernel) -> bool;

    /// Whether a sync ends with a cache flush (REQ_FLUSH; ext4:
    /// `barrier=1`); counts it when it does.
    fn sync_flush(&mut self) -> bool;

    /// What the namespace call task `t` just made successfully at `now`
    /// (open/creat, close, ftruncate, unlink, rename, mkdir) must still
    /// write or wait for before it returns. `None` (the default, ext4):
    /// its metadata stays cached. `InPlace`: these metadata blocks are
    /// written and waited for, with no cache flush after them (vfat's
    /// `MS_DIRSYNC`: `sync_dirty_buffer` of directory entries). `Wait`:
    /// the task sleeps until the file system wakes it (vfat's `flush` on
    /// the last close). `Flush`: a cache flush.
    fn namei_sync(&mut self, t: u32, now: Ns, k: &mut dyn Kernel) -> Option<FsyncPlan> {
        let _ = (t, now, k);
        None
    }

    // ---- kernel threads and periodic work --------------------------------

    /// Called after any step that may have changed metadata: arms the file
    /// system's periodic work (ext4: the `commit=` timer of the running
    /// transaction) and starts what is due (a commit of a full
    /// transaction).
    fn changed(&mut self, now: Ns, k: &mut dyn Kernel);

    /// Page writeback completed somewhere: work waiting for it may go on
    /// (ext4: a commit's ordered-data wait, a checkpoint).
    fn writeback_progress(&mut self, now: Ns, k: &mut dyn Kernel);

    /// One of the file system's own events.
    fn event(&mut self, now: Ns, ev: FsEvent, k: &mut dyn Kernel);

    /// One of the file system's own bios (`Submitter::Fs`) completed on the
    /// request that ran at `times`.
    fn bio_done(&mut self, now: Ns, times: DeviceTimes, k: &mut dyn Kernel);

    // ---- forwarding (stacked file systems served in user space) ----------

    /// The forwarding side of a stacked file system served by a user-space
    /// daemon (FUSE); `None` (the default) for a disk file system.
    fn forwarding(&self) -> Option<&dyn Forwarding> {
        None
    }

    /// The same, mutably.
    fn forwarding_mut(&mut self) -> Option<&mut dyn Forwarding> {
        None
    }
}

/// Makes and mounts the file system of `cfg` on `blocks` 4 KiB blocks
/// from sector `part_sector`; `tick_ns` is the kernel tick (timestamp
/// resolution). The registry: one line per file-system type.
pub fn mkfs(
    cfg: &FsConfig,
    part_sector: u64,
    blocks: u64,
    tick_ns: Ns,
    cache: &mut PageCache,
) -> Result<Box<dyn FileSystem>, crate::error::SettingError> {
    Ok(match cfg.fs_type {
        FsType::Ext4 => Box::new(ext4::Ext4::mkfs(cfg, part_sector, blocks, tick_ns, cache)?),
        FsType::Vfat => Box::new(vfat::Vfat::mkfs(cfg, part_sector, blocks, tick_ns, cache)?),
        FsType::Fuse => Box::new(fuse::Fuse::mount(cfg, part_sector, blocks, tick_ns, cache)?),
    })
}

/// Checks `[fs]`: its own keys ([`FsConfig::validate`]), then the FUSE
/// keys, which the FUSE model owns ([`fuse::params::validate`]).
pub fn validate(cfg: &FsConfig) -> Result<(), crate::error::SettingError> {
    cfg.validate()?;
    fuse::params::validate(cfg)
}

/// The fewest 4 KiB blocks [`mkfs`] can make a file system of with `cfg`.
pub fn min_blocks(cfg: &FsConfig) -> u64 {
    match cfg.fs_type {
        FsType::Ext4 => ext4::Ext4::min_blocks(cfg),
        FsType::Vfat => vfat::Vfat::min_blocks(cfg),
        FsType::Fuse => min_blocks(&fuse::Fuse::lower_config(cfg)),
    }
}
