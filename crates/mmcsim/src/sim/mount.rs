//! Making and populating the scenario's file system before the run
//! (unmeasured): the partition from `[fs]`, `mkfs` of its type (the
//! registry, [`crate::host::fs::mkfs`]), then each `[[files]]` entry
//! created with its directories and its blocks allocated, as a
//! benchmark's preparation phase leaves them — committed and written home.

use crate::config::{FsConfig, Scenario};
use crate::error::{Error, Result};
use crate::host::fs::{self, FileSystem};
use crate::host::{Errno, PageCache};
use crate::types::{NS_PER_S, SECTORS_PER_PAGE};

/// The components of a scenario file name as a path under `/`.
pub(super) fn path_components(name: &str) -> Vec<&str> {
    name.split('/').filter(|c| !c.is_empty()).collect()
}

/// Makes the file system of `fs` on a device of `capacity` sectors and
/// creates the scenario's files in it.
pub(super) fn mkfs_and_populate(
    sc: &Scenario,
    fs: &FsConfig,
    capacity: u64,
    cache: &mut PageCache,
) -> Result<Box<dyn FileSystem>> {
    let first = fs.partition_offset_mib * 2048;
    let end = match fs.partition_size_mib {
        Some(s) => first + s * 2048,
        None => capacity,
    };
    if first >= capacity || end > capacity {
        return Err(Error::PartitionTooLarge {
            start_mib: first / 2048,
            end_mib: end / 2048,
            capacity_mib: capacity / 2048,
        });
    }
    let blocks = (end - first) / SECTORS_PER_PAGE;
    // Timestamps have the resolution of one kernel tick (HZ).
    let tick = NS_PER_S / sc.scheduler.hz as u64;
    // FUSE's daemon threads default per the phone's Android release.
    let mut fs = fs.clone();
    if fs.fs_type == fs::FsType::Fuse && fs.daemon_threads.is_none() {
        let version = sc.android_version.as_deref();
        fs.daemon_threads = Some(fs::fuse::params::default_daemon_threads(version));
    }
    let mut mounted = fs::mkfs(&fs, first, blocks, tick, cache)?;
    for f in &sc.files {
        let comps = path_components(&f.name);
        let bad = |errno: Option<i64>| Error::PopulateFile {
            name: f.name.clone(),
            errno,
        };
        if comps.is_empty() {
            return Err(bad(None));
        }
        mounted
            .populate(&comps, f.size_mib * 256, cache)
            .map_err(|e: Errno| bad(Some(e.code())))?;
    }
    mounted.finish_mount();
    Ok(mounted)
}
