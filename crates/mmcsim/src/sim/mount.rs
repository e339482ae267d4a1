//! Making and populating the scenario's file system before the run
//! (unmeasured): the partition from `[fs]`, `mkfs`, then each `[[files]]`
//! entry created with its directories and its blocks allocated, as a
//! benchmark's preparation phase leaves them — committed and written home.

use crate::config::{FsConfig, Scenario};
use crate::error::{Error, Result};
use crate::host::fs::ext4::inode::Kind;
use crate::host::fs::ext4::Ext4;
use crate::host::PageCache;
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
) -> Result<Ext4> {
    let first = fs.partition_offset_mib * 2048;
    let end = match fs.partition_size_mib {
        Some(s) => first + s * 2048,
        None => capacity,
    };
    if first >= capacity || end > capacity {
        return Err(Error::config(format!(
            "fs: the partition [{} MiB, {} MiB) does not fit the device's {} MiB",
            first / 2048,
            end / 2048,
            capacity / 2048
        )));
    }
    let blocks = (end - first) / SECTORS_PER_PAGE;
    // Timestamps have the resolution of one kernel tick (HZ).
    let tick = NS_PER_S / sc.scheduler.hz as u64;
    let mut ext4 =
        Ext4::mkfs(fs, first, blocks, tick, cache).map_err(|e| Error::config(e.to_string()))?;
    for f in &sc.files {
        let comps = path_components(&f.name);
        let bad = |e: crate::host::fs::ext4::Errno| {
            Error::config(format!(
                "file `{}`: cannot create it in the file system (errno {})",
                f.name,
                e.code()
            ))
        };
        let (name, dirs) = comps
            .split_last()
            .ok_or_else(|| Error::config(format!("file `{}`: empty path", f.name)))?;
        let mut dir = ext4.lookup(&[]).map_err(bad)?;
        for (i, d) in dirs.iter().enumerate() {
            dir = match ext4.lookup(&comps[..=i]) {
                Ok(ino) => ino,
                Err(_) => ext4.create(dir, d, Kind::Dir, 0, cache, 0).map_err(bad)?,
            };
        }
        let ino = ext4
            .create(dir, name, Kind::File, 0, cache, 0)
            .map_err(bad)?;
        let pages = f.size_mib * 256;
        if pages > 0 {
            ext4.alloc_blocks(ino, 0, pages, 0, cache, 0).map_err(bad)?;
            let i = ext4.inode_mut(ino);
            i.size = pages * 4096;
            i.disksize = pages * 4096;
            let m = i.mapping;
            cache.extend_file(m, pages);
        }
    }
    ext4.finish_mount();
    Ok(ext4)
}
