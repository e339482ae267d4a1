//! Files as contiguous extents of the device, each with its page-cache
//! mapping: the host's (minimal) file system layout.

use super::page_cache::{FileId, PageCache};
use crate::error::{Error, FileLayoutProblem, Result};
use crate::types::{PAGE_BYTES, SECTORS_PER_PAGE};

/// The largest file offset the raw layout accepts in `lseek` and
/// `ftruncate`, bytes. The layout has no superblock and so no
/// `s_maxbytes` of its own; it keeps the limit of ext4 with 4 KiB blocks
/// (2^32 − 1 blocks, fs/ext4/super.c `ext4_max_size`) that these calls
/// have always checked, so a raw run behaves as before.
pub const RAW_MAX_BYTES: u64 = ((1u64 << 32) - 1) * PAGE_BYTES;

/// A file laid out on the device.
#[derive(Clone, Debug)]
pub struct File {
    /// Its name in the scenario.
    pub name: String,
    /// First 512-byte sector of its extent.
    pub first_sector: u64,
    /// Length in 4 KiB pages.
    pub pages: u64,
    /// Its page-cache mapping.
    pub cache: FileId,
}

/// A file to lay out: name, size and optional position, MiB.
#[derive(Clone, Debug)]
pub struct FileSpec {
    /// Name.
    pub name: String,
    /// Size, MiB.
    pub size_mib: u64,
    /// Offset on the device, MiB (default: after the previous file).
    pub offset_mib: Option<u64>,
}

/// The files of a run.
#[derive(Clone, Debug, Default)]
pub struct Files {
    files: Vec<File>,
}

impl Files {
    /// Lays out `specs` on a device of `capacity` sectors, registering each
    /// with `cache`; files must fit and must not overlap.
    pub fn layout(specs: &[FileSpec], capacity: u64, cache: &mut PageCache) -> Result<Files> {
        let mut files: Vec<File> = Vec::new();
        let mut next_mib = 0u64;
        for f in specs {
            let start_mib = f.offset_mib.unwrap_or(next_mib);
            next_mib = start_mib + f.size_mib;
            let first_sector = start_mib * 2048;
            let end = first_sector + f.size_mib * 2048;
            if end > capacity {
                return Err(Error::FileLayout {
                    name: f.name.clone(),
                    problem: FileLayoutProblem::BeyondDevice {
                        end_mib: next_mib,
                        capacity_mib: capacity / 2048,
                    },
                });
            }
            if let Some(o) = files.iter().find(|o| {
                first_sector < o.first_sector + o.pages * SECTORS_PER_PAGE && o.first_sector < end
            }) {
                return Err(Error::FileLayout {
                    name: f.name.clone(),
                    problem: FileLayoutProblem::Overlaps {
                        other: o.name.clone(),
                    },
                });
            }
            let pages = f.size_mib * (1 << 20) / PAGE_BYTES;
            files.push(File {
                name: f.name.clone(),
                first_sector,
                pages,
                cache: cache.add_file(pages),
            });
        }
        Ok(Files { files })
    }

    /// Every file, in layout order.
    pub fn all(&self) -> &[File] {
        &self.files
    }

    /// The file named `name`.
    pub fn by_name(&self, name: &str) -> Option<&File> {
        self.files.iter().find(|f| f.name == name)
    }

    /// Index of the file holding `sector`.
    pub fn index_of_sector(&self, sector: u64) -> usize {
        self.files
            .iter()
            .position(|f| {
                sector >= f.first_sector && sector < f.first_sector + f.pages * SECTORS_PER_PAGE
            })
            .expect("page-cache bio outside every file")
    }

    /// Index of the file with page-cache mapping `fid`.
    pub fn index_of_cache(&self, fid: FileId) -> usize {
        self.files
            .iter()
            .position(|f| f.cache == fid)
            .expect("flusher file exists")
    }

    /// File number `i`.
    pub fn get(&self, i: usize) -> &File {
        &self.files[i]
    }
}
