//! The `[fs]` section of a scenario: which file system the host mounts and
//! its mount options, by the names `mount(8)`, `mke2fs(8)` and
//! `newfs_msdos(8)` use. Without the section the host keeps files as raw
//! contiguous extents.

use crate::error::SettingError;
use serde::{Deserialize, Deserializer, Serialize};

/// File system type (`fs.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    /// ext4 with 3.x-era behaviour (Android 4.x kernels).
    Ext4,
    /// FAT32 through the Linux 2.6.35-3.4 `vfat` driver, as vold mounted
    /// and formatted Android's `/sdcard` ([`crate::host::fs::vfat`]).
    Vfat,
    /// FUSE over a lower file system, served by Android's sdcard daemon
    /// (`fs.lower`, `fs.daemon_threads`; [`super::fuse`]).
    Fuse,
}

impl FsType {
    /// The name `fs.type` takes (`mount -t`).
    pub fn name(self) -> &'static str {
        match self {
            FsType::Ext4 => "ext4",
            FsType::Vfat => "vfat",
            FsType::Fuse => "fuse",
        }
    }
}

/// Whether the file system has a journal (`fs.journal`; `^has_journal`
/// when off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JournalSwitch {
    /// JBD2 journal (the default of `mke2fs -t ext4` and `make_ext4fs`).
    On,
    /// No journal: metadata is written in place by writeback.
    Off,
}

/// Data journaling mode (`data=` mount option).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Data of newly allocated blocks is written before the transaction
    /// that allocates them commits (the default; Android's fstabs).
    Ordered,
    /// Data is not ordered against the journal.
    Writeback,
    /// Data blocks are journaled like metadata (implies `nodelalloc`).
    Journal,
}

/// Access-time policy (`noatime`, `relatime`, `strictatime`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AtimeMode {
    /// Reads never update atime (Android's `/data` fstabs).
    Noatime,
    /// atime is updated when older than mtime/ctime or than 24 h (the
    /// kernel default since 2.6.30).
    Relatime,
    /// Every read updates atime (when the clock tick changed).
    Strictatime,
}

/// The `[fs]` section: file system, mount options and partition geometry.
/// Defaults are `mke2fs -t ext4` / `make_ext4fs` and the 3.x kernel's
/// mount defaults (reference android-workloads.md §4.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FsConfig {
    /// File system type; `"ext4"` is the one modelled.
    #[serde(rename = "type")]
    pub fs_type: FsType,
    /// Journal on (JBD2) or off (`^has_journal`). Default on.
    #[serde(default = "journal_on")]
    pub journal: JournalSwitch,
    /// `data=ordered|writeback|journal`. Default ordered.
    #[serde(default = "data_ordered")]
    pub data: DataMode,
    /// `noatime|relatime|strictatime`. Default relatime (kernel default;
    /// Android mounts `/data` with noatime).
    #[serde(default = "atime_relatime")]
    pub atime: AtimeMode,
    /// `journal_async_commit`: the commit block is written with the
    /// journal body without waiting for it, carries a checksum, and has
    /// no pre-flush; one cache flush follows the commit. Default false.
    #[serde(default)]
    pub journal_async_commit: bool,
    /// Delayed allocation (`delalloc`, default true): blocks are allocated
    /// at writeback; false = `nodelalloc`: allocated at write().
    #[serde(default = "yes")]
    pub delalloc: bool,
    /// `barrier=1` (true, default): commits and fsync issue cache flushes
    /// and FUA writes; `barrier=0`: none. Accepts true/false or 1/0.
    #[serde(default = "yes", deserialize_with = "bool_or_int")]
    pub barrier: bool,
    /// `commit=` seconds: the running transaction commits at most this long
    /// after it started. Default 5 s (`JBD2_DEFAULT_MAX_COMMIT_AGE`).
    #[serde(default = "five")]
    pub commit_s: u32,
    /// Start of the partition on the device, MiB. Default 0.
    #[serde(default)]
    pub partition_offset_mib: u64,
    /// Size of the partition, MiB; absent = to the end of the device.
    #[serde(default)]
    pub partition_size_mib: Option<u64>,
    /// Journal size, 4 KiB blocks; absent = `make_ext4fs`'s
    /// `compute_journal_blocks`: 1/64 of the file system clamped to
    /// 1,024-32,768 blocks (reference §4.1).
    #[serde(default)]
    pub journal_blocks: Option<u32>,
    /// Bytes of file system per inode (`mke2fs -i`, `make_ext4fs`'s
    /// default 16384): sets inodes per group.
    #[serde(default = "bytes_per_inode")]
    pub bytes_per_inode: u32,
    /// FITRIM once before measurement, after the files are made (`fstrim
    /// /data`): every free block run of the file system is discarded on
    /// the device (unmeasured), so data the preconditioning left in free
    /// space is no longer valid to the FTL. Android 4.3 added this as a
    /// periodic idle-maintenance job [src: reference emmc-parameters.md §3
    /// "TRIM"]; without it (default false, as on Android ≤ 4.2) the device
    /// still holds free space as valid data.
    #[serde(default)]
    pub fstrim: bool,
    /// vfat only: cluster size, KiB (`newfs_msdos -c` × 0.5). Absent = 4
    /// KiB, vold's `Fat::format` (`-F 32 -O android -c 8`, Android 2.2-4.4)
    /// [src: AOSP system/vold Fat.cpp; 32 KiB (`-c 64 -A`) from 2014].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_kib: Option<u32>,
    /// vfat only: the `flush` mount option (`fat_file_release` starts
    /// writeback of the file and the FAT at the last writable close, then
    /// sleeps in `congestion_wait(BLK_RW_ASYNC, HZ/10)`). Absent = off:
    /// vold's `Fat::doMount` does not pass it [src: AOSP system/vold
    /// Fat.cpp: `utf8,uid=,gid=,fmask=,dmask=,shortname=mixed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<bool>,
    /// vfat only: `MS_DIRSYNC` (directory entries, the FAT of a directory
    /// and the parent's entry are written synchronously by create, unlink,
    /// rename and mkdir). Absent = on: vold's `Fat::doMount` mounts with
    /// `MS_NODEV | MS_NOSUID | MS_DIRSYNC` [src: AOSP system/vold Fat.cpp].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirsync: Option<bool>,
    // ---- FUSE (`type = "fuse"`) only; see [`super::fuse`] -------------
    /// FUSE: the lower file system the daemon serves from (`"ext4"`, the
    /// default: Android's `/data/media` behind `/sdcard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<FsType>,
    /// FUSE: the sdcard daemon's request threads (`sdcard -t`); absent =
    /// per Android release ([`super::fuse::params::default_daemon_threads`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_threads: Option<u32>,
    /// FUSE: largest FUSE_READ payload, KiB (`max_read` mount option);
    /// absent = 128 (sdcard's `MAX_READ`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_read_kib: Option<u32>,
    /// FUSE: largest FUSE_WRITE payload, KiB (`fuse_init_out.max_write`);
    /// absent = 256 (sdcard's `MAX_WRITE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_write_kib: Option<u32>,
}

fn journal_on() -> JournalSwitch {
    JournalSwitch::On
}
fn data_ordered() -> DataMode {
    DataMode::Ordered
}
fn atime_relatime() -> AtimeMode {
    AtimeMode::Relatime
}
fn yes() -> bool {
    true
}
fn five() -> u32 {
    5
}
fn bytes_per_inode() -> u32 {
    16384
}

/// Accepts a boolean or the mount-option style 0/1.
fn bool_or_int<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum B {
        Bool(bool),
        Int(i64),
    }
    match B::deserialize(d)? {
        B::Bool(b) => Ok(b),
        B::Int(0) => Ok(false),
        B::Int(1) => Ok(true),
        B::Int(n) => Err(serde::de::Error::custom(format!(
            "barrier = {n}: expected 0, 1, true or false"
        ))),
    }
}

impl FsConfig {
    /// Checks the values that serde cannot: the commit interval, the
    /// inode density, and the vfat options. The FUSE keys are the FUSE
    /// model's ([`super::validate`] checks both).
    pub fn validate(&self) -> Result<(), SettingError> {
        self.validate_vfat()?;
        if self.commit_s == 0 || self.commit_s > 3600 {
            return Err(SettingError::Invalid {
                key: "fs.commit_s".into(),
                value: self.commit_s.to_string(),
                expected: "1..=3600 seconds".into(),
            });
        }
        if !(1024..=67_108_864).contains(&self.bytes_per_inode) {
            return Err(SettingError::Invalid {
                key: "fs.bytes_per_inode".into(),
                value: self.bytes_per_inode.to_string(),
                expected: "1024..=67108864 bytes".into(),
            });
        }
        if let Some(j) = self.journal_blocks {
            if j < 1024 {
                return Err(SettingError::Conflict {
                    key: "fs.journal_blocks".into(),
                    value: j.to_string(),
                    why: "JBD2 needs at least 1024 blocks".into(),
                });
            }
        }
        Ok(())
    }

    /// The vfat keys: only with `type = "vfat"`, and a cluster size the
    /// model maps (4-64 KiB, a power of two).
    fn validate_vfat(&self) -> Result<(), SettingError> {
        if self.fs_type != FsType::Vfat {
            for (key, given) in [
                ("cluster_kib", self.cluster_kib.is_some()),
                ("flush", self.flush.is_some()),
                ("dirsync", self.dirsync.is_some()),
            ] {
                if given {
                    return Err(SettingError::Misplaced {
                        key: format!("fs.{key}"),
                        rule: "is a vfat option: set fs.type = \"vfat\" or remove it",
                    });
                }
            }
            return Ok(());
        }
        if self.fstrim {
            return Err(SettingError::Conflict {
                key: "fs.fstrim".into(),
                value: "true".into(),
                why: "the vfat driver of Linux 2.6.35-3.4 has no FITRIM ioctl; remove it".into(),
            });
        }
        if let Some(c) = self.cluster_kib {
            if !(4..=64).contains(&c) || !c.is_power_of_two() {
                return Err(SettingError::Invalid {
                    key: "fs.cluster_kib".into(),
                    value: c.to_string(),
                    expected: "4, 8, 16, 32 or 64 KiB (newfs_msdos -c 8..128; clusters smaller than a 4 KiB page are not modelled)".into(),
                });
            }
        }
        Ok(())
    }

    /// Whether file data is journaled (`data=journal`).
    pub fn journals_data(&self) -> bool {
        self.journal == JournalSwitch::On && self.data == DataMode::Journal
    }

    /// Whether blocks are allocated at writeback: `delalloc`, unless
    /// `data=journal` (which ext4 mounts as `nodelalloc`).
    pub fn delayed_allocation(&self) -> bool {
        self.delalloc && !self.journals_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_kernel_mount_defaults() {
        let c: FsConfig = toml::from_str("type = \"ext4\"").unwrap();
        assert_eq!(c.journal, JournalSwitch::On);
        assert_eq!(c.data, DataMode::Ordered);
        assert_eq!(c.atime, AtimeMode::Relatime);
        assert!(c.delalloc && c.barrier && !c.journal_async_commit);
        assert_eq!(c.commit_s, 5);
        c.validate().unwrap();
    }

    #[test]
    fn fuse_keys_are_checked_with_their_names() {
        // The FUSE keys are the FUSE model's: `host::fs::validate` checks them.
        let check = |c: &FsConfig| crate::host::fs::validate(c);
        let ok: FsConfig = toml::from_str("type = \"fuse\"\ndaemon_threads = 2").unwrap();
        check(&ok).unwrap();
        let e = |t: &str| {
            check(&toml::from_str::<FsConfig>(t).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(e("type = \"fuse\"\ndaemon_threads = 0").contains("fs.daemon_threads = 0"));
        assert!(e("type = \"fuse\"\nlower = \"fuse\"").contains("fs.lower"));
        assert!(e("type = \"fuse\"\nmax_read_kib = 6").contains("fs.max_read_kib = 6"));
        assert!(e("type = \"fuse\"\nmax_write_kib = 0").contains("fs.max_write_kib = 0"));
        assert!(e("type = \"ext4\"\ndaemon_threads = 1").contains("type = \"fuse\""));
        assert!(toml::from_str::<FsConfig>("type = \"fuse\"\nlower = \"ntfs\"").is_err());
    }

    #[test]
    fn barrier_takes_mount_option_numbers_and_unknown_keys_fail() {
        let c: FsConfig = toml::from_str("type = \"ext4\"\nbarrier = 0").unwrap();
        assert!(!c.barrier);
        assert!(toml::from_str::<FsConfig>("type = \"ext4\"\nbarrier = 2").is_err());
        assert!(toml::from_str::<FsConfig>("type = \"ext4\"\nnoatime = true").is_err());
        assert!(toml::from_str::<FsConfig>("type = \"ext3\"").is_err());
    }

    #[test]
    fn vfat_options_belong_to_vfat_and_take_page_sized_clusters() {
        let c: FsConfig = toml::from_str("type = \"vfat\"\ncluster_kib = 32").unwrap();
        c.validate().unwrap();
        let c: FsConfig = toml::from_str("type = \"vfat\"\ncluster_kib = 2").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("fs.cluster_kib = 2"), "{e}");
        let c: FsConfig = toml::from_str("type = \"ext4\"\nflush = true").unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("fs.flush is a vfat option"), "{e}");
    }
}
