//! The FUSE mount's parameters, with their sources: the sdcard daemon's
//! request limits and thread count (AOSP `system/core/sdcard/sdcard.c`),
//! the kernel side of Linux 3.1-3.4 (`fs/fuse/file.c`, `fs/fuse/inode.c`),
//! and the daemon's per-request CPU cost.

use super::super::config::{FsConfig, FsType};
use crate::error::SettingError;
use crate::types::Ns;

/// `FUSE_MAX_PAGES_PER_REQ`: pages one FUSE_READ/FUSE_WRITE carries in
/// Linux 3.1-3.4 (`fs/fuse/fuse_i.h`), 4 KiB pages. `fuse_readpages`
/// sends a request when it holds this many pages, and
/// `fuse_fill_write_pages` stops at it [src: linux-3.4 fs/fuse/file.c].
pub const MAX_PAGES_PER_REQ: u64 = 32;

/// The FUSE mount's read-ahead window, 4 KiB pages: `fuse_bdi_init` sets
/// `ra_pages = VM_MAX_READAHEAD * 1024 / PAGE_CACHE_SIZE` (128 KiB) and
/// `process_init_reply` keeps the smaller of that and the daemon's
/// `max_readahead`, which sdcard echoes from the kernel's
/// [src: linux-3.4 fs/fuse/inode.c; sdcard.c `handle_init`].
pub const READ_AHEAD_PAGES: u64 = 32;

/// sdcard's `MAX_READ`, KiB: its per-thread read buffer; a larger
/// FUSE_READ is EINVAL [src: AOSP system/core sdcard/sdcard.c,
/// android-4.2_r1..5.1; 4.1's `char buffer[128 * 1024]` in the FUSE_READ
/// case]. sdcard mounts without a `max_read=` option, so the kernel's
/// limit is `FUSE_MAX_PAGES_PER_REQ` pages, the same 128 KiB.
pub const DEFAULT_MAX_READ_KIB: u32 = 128;

/// sdcard's `MAX_WRITE`, KiB, sent as `fuse_init_out.max_write` with
/// `FUSE_BIG_WRITES` [src: sdcard.c `handle_init`, android-4.1.1_r1..5.1].
/// A 3.x kernel still stops a request at `FUSE_MAX_PAGES_PER_REQ` pages.
pub const DEFAULT_MAX_WRITE_KIB: u32 = 256;

/// sdcard's `DEFAULT_NUM_THREADS` (`-t` overrides it), from AOSP commit
/// 6249b90 "Make sdcard daemon multi-threaded" (May 2012), first shipped
/// in android-4.2_r1 (absent from android-4.1.1_r1 and 4.1.2_r1, present
/// through 5.1) [src: AOSP platform/system/core history].
pub const MULTI_THREADED_DEFAULT: u32 = 2;

/// Largest `daemon_threads` accepted (a sanity bound; sdcard takes any
/// positive `-t`).
pub const MAX_DAEMON_THREADS: u32 = 64;

/// Daemon CPU per request besides its system calls and copies, ns: the
/// dispatch in `handle_fuse_request`, the node-table lock and handle look-up,
/// and the kernel's request set-up and queueing (`fuse_get_req`,
/// `queue_request`, `request_end`) [uncertain: 2-10 us at ~1 GHz; Vangoor
/// et al., "To FUSE or Not to FUSE", FAST'17, measure the FUSE
/// round trip as several microseconds per request on a 2.8 GHz Xeon].
pub const REQUEST_NS: Ns = 5_000;

/// `entry_valid` of sdcard's entry replies (LOOKUP, MKNOD, MKDIR), ns: a
/// dentry the reply made stays valid 10 s, after which a path walk
/// through it sends FUSE_LOOKUP again [src: AOSP system/core
/// sdcard/sdcard.c `fuse_reply_entry`, `out.entry_valid = 10` (seconds),
/// android-4.1.2_r1, 4.2_r1 and 4.4_r1; linux-3.4 fs/fuse/dir.c
/// `fuse_dentry_revalidate`].
pub const ENTRY_VALID_NS: Ns = 10_000_000_000;

/// `attr_valid` of sdcard's entry and attribute replies (LOOKUP, MKNOD,
/// MKDIR, GETATTR, SETATTR), ns: past it, the permission check of a
/// `default_permissions` mount (sdcard mounts with it) and `stat` send
/// FUSE_GETATTR [src: sdcard.c `fuse_reply_entry` and `fuse_reply_attr`,
/// `out.attr_valid = 10`, android-4.1.2_r1..4.4_r1; mount options
/// "default_permissions,allow_other"; linux-3.4 fs/fuse/dir.c
/// `fuse_permission`, `fuse_update_attributes`].
pub const ATTR_VALID_NS: Ns = 10_000_000_000;

/// Pid of the sdcard daemon's threads (bios it submits are charged to it).
pub const DAEMON_PID: u32 = 2;

/// The daemon's request threads for `android_version` when `fs.daemon_threads`
/// is absent: 1 before Android 4.2 (one thread reads /dev/fuse in
/// `handle_fuse_requests`, android-4.1.2_r1), [`MULTI_THREADED_DEFAULT`]
/// from 4.2 on; 1 when the release is unknown (the single-threaded
/// daemon the Nexus 7 (2012) shipped with, Android 4.1).
pub fn default_daemon_threads(android_version: Option<&str>) -> u32 {
    let Some(v) = android_version else { return 1 };
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    if (major, minor) >= (4, 2) {
        MULTI_THREADED_DEFAULT
    } else {
        1
    }
}

/// Checks the FUSE keys of `[fs]`: only with `type = "fuse"`, a lower file
/// system that is not FUSE, 1..=[`MAX_DAEMON_THREADS`] threads, and
/// request sizes in whole pages up to the kernel's per-request limit
/// (read) or sdcard's buffer (write).
pub fn validate(c: &FsConfig) -> Result<(), SettingError> {
    if c.fs_type != FsType::Fuse {
        let set = [
            ("lower", c.lower.is_some()),
            ("daemon_threads", c.daemon_threads.is_some()),
            ("max_read_kib", c.max_read_kib.is_some()),
            ("max_write_kib", c.max_write_kib.is_some()),
        ];
        if let Some((k, _)) = set.iter().find(|(_, s)| *s) {
            return Err(SettingError::Misplaced {
                key: format!("fs.{k}"),
                rule: "is a FUSE setting; it needs type = \"fuse\"",
            });
        }
        return Ok(());
    }
    match c.lower {
        Some(FsType::Fuse) => {
            return Err(SettingError::Invalid {
                key: "fs.lower".into(),
                value: "\"fuse\"".into(),
                expected: "a disk file system (\"ext4\")".into(),
            })
        }
        // Android's sdcard daemon served /data/media on ext4; a FAT card
        // behind FUSE (later releases' external storage) is not modelled.
        Some(FsType::Vfat) => {
            return Err(SettingError::Conflict {
                key: "fs.lower".into(),
                value: "\"vfat\"".into(),
                why: "FUSE is modelled over ext4 only (Android's sdcard daemon serving /data/media); expected \"ext4\"".into(),
            })
        }
        _ => {}
    }
    if let Some(n) = c.daemon_threads {
        if !(1..=MAX_DAEMON_THREADS).contains(&n) {
            return Err(SettingError::Invalid {
                key: "fs.daemon_threads".into(),
                value: n.to_string(),
                expected: format!("1..={MAX_DAEMON_THREADS} threads (sdcard -t)").into(),
            });
        }
    }
    let max_req = (MAX_PAGES_PER_REQ * 4) as u32;
    if let Some(k) = c.max_read_kib {
        if k == 0 || k % 4 != 0 || k > max_req {
            return Err(SettingError::Invalid {
                key: "fs.max_read_kib".into(),
                value: k.to_string(),
                expected: format!(
                    "a multiple of 4 from 4 to {max_req} KiB (FUSE_MAX_PAGES_PER_REQ pages)"
                )
                .into(),
            });
        }
    }
    if let Some(k) = c.max_write_kib {
        if k == 0 || k % 4 != 0 || k > 1024 {
            return Err(SettingError::Invalid {
                key: "fs.max_write_kib".into(),
                value: k.to_string(),
                expected: "a multiple of 4 from 4 to 1024 KiB".into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_became_multi_threaded_in_4_2() {
        assert_eq!(default_daemon_threads(Some("4.1.2")), 1);
        assert_eq!(default_daemon_threads(Some("4.2")), 2);
        assert_eq!(default_daemon_threads(Some("4.4")), 2);
        assert_eq!(default_daemon_threads(None), 1);
    }
}
