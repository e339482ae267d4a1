//! The host side of the storage path: application threads' system calls
//! ([`Host`], [`Syscall`]) with per-task descriptor tables, the mounted
//! files — raw contiguous extents ([`files`]) or a file system behind the
//! [`fs::FileSystem`] interface (ext4 with its JBD2 journal and journal
//! thread, [`fs`]) — the page cache with Linux on-demand read-ahead,
//! dirty-page tracking and the writeback flusher, and the host CPU costs
//! of each step ([`cost`]). The host core talks to the file system only
//! through that trait, and the file system to the host only through
//! [`fs::Kernel`]. The host submits
//! bios to the block stage below and takes their completions back through
//! [`Host::bio_done`] (the event loop delivers each as an event); a
//! returning call is handed up to the workload. A block-level workload
//! (trace replay) submits through the raw block device ([`blockdev`]).
//!
//! Contract:
//! * Files are page-cache mappings of 4 KiB pages identified by
//!   [`FileId`]; the host maps file pages to device sectors through the
//!   mount ([`Mount::map_pages`]). File-system metadata blocks live in the
//!   cache too, in the block-device mapping (page = block number), like
//!   the kernel's buffer heads.
//! * [`PageCache::read_step`] walks a buffered `read()` page by page like
//!   `do_generic_file_read`, returning the I/O to submit and the page to wait
//!   for; the caller completes reads with [`PageCache::complete_read`].
//! * Writes go through [`PageCache::write_begin`] (read-modify-write of
//!   partially covered pages) and [`PageCache::mark_dirty`]; the flusher uses
//!   [`PageCache::files_to_write`], [`PageCache::take_dirty_run`] and
//!   [`PageCache::complete_write`] with [`WritebackParams`].
//! * Everything is deterministic: no wall clock, no hash-map iteration.

pub mod blockdev;
pub mod call;
pub mod cost;
mod diag;
pub mod durability;
pub mod errno;
pub mod files;
mod flusher;
pub mod fs;
mod fsync;
mod fuse_namei;
mod kernel;
mod namei;
pub mod page_cache;
mod page_ops;
pub mod readahead;
mod server;
mod stage;
pub mod syscall;
pub mod task;
pub mod vfs;
pub mod writeback;

pub use call::Call;
pub use durability::DurableReturn;
pub use errno::Errno;
pub use files::{File, FileSpec, Files};
pub use flusher::FLUSHER_PID;
pub use stage::{Below, Host, HostEvent, HostEvents, MAX_RW_COUNT};
pub use syscall::{Access, Fd, OpenFlags, Syscall, Whence};
pub use task::Task;
pub use vfs::Mount;

pub use page_cache::{FileId, PageCache, PageCacheStats, ReadIo, ReadPlan, ReadStep};
pub use readahead::RaState;
pub use writeback::WritebackParams;
