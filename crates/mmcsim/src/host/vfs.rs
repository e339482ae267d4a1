//! The VFS view of the mounted files: either the raw extent layout (files
//! as contiguous device extents, no metadata) or a file system behind
//! [`FileSystem`], and what the host asks of both — path look-up, sizes,
//! the largest file, and the mapping of file pages to device sectors.

use super::errno::Errno;
use super::files::{Files, RAW_MAX_BYTES};
use super::fs::{FileSystem, PageRun};
use super::page_cache::FileId;
use super::task::Node;
use crate::types::SECTORS_PER_PAGE;

/// What is mounted.
pub enum Mount {
    /// Files as raw contiguous extents (no `[fs]` section).
    Raw(Files),
    /// A file system (`[fs]`), built by [`super::fs::mkfs`].
    Fs(Box<dyn FileSystem>),
}

/// Splits an absolute path into its components (`.` dropped; `..` is not
/// supported).
pub fn components(path: &str) -> Result<Vec<&str>, Errno> {
    if !path.starts_with('/') {
        return Err(Errno::Inval);
    }
    let mut out = Vec::new();
    for c in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
        if c == ".." {
            return Err(Errno::Inval);
        }
        out.push(c);
    }
    Ok(out)
}

impl Mount {
    /// The file system, if one is mounted.
    pub fn fs(&self) -> Option<&dyn FileSystem> {
        match self {
            Mount::Fs(fs) => Some(fs.as_ref()),
            Mount::Raw(_) => None,
        }
    }

    /// The file system, mutably.
    pub fn fs_mut(&mut self) -> Option<&mut (dyn FileSystem + 'static)> {
        match self {
            Mount::Fs(fs) => Some(fs.as_mut()),
            Mount::Raw(_) => None,
        }
    }

    /// Looks up an existing regular file: its node and mapping.
    pub fn lookup(&self, path: &str) -> Result<(Node, FileId), Errno> {
        match self {
            Mount::Raw(files) => {
                let name = path.trim_start_matches('/');
                let i = files
                    .all()
                    .iter()
                    .position(|f| f.name == name)
                    .ok_or(Errno::NoEnt)?;
                Ok((Node::Raw(i), files.get(i).cache))
            }
            Mount::Fs(fs) => {
                let ino = fs.lookup(&components(path)?)?;
                Ok((Node::Inode(ino), fs.mapping(ino)))
            }
        }
    }

    /// Looks up any existing node (a file or a directory; the raw
    /// layout's root and files): `stat`.
    pub fn lookup_any(&self, path: &str) -> Result<Node, Errno> {
        match self {
            Mount::Raw(_) if components(path)?.is_empty() => Ok(Node::Raw(usize::MAX)),
            Mount::Raw(_) => self.lookup(path).map(|(n, _)| n),
            Mount::Fs(fs) => Ok(Node::Inode(fs.lookup(&components(path)?)?)),
        }
    }

    /// Size of a file, bytes.
    pub fn size(&self, node: Node) -> u64 {
        match (self, node) {
            (Mount::Raw(files), Node::Raw(i)) => files.get(i).pages * 4096,
            (Mount::Fs(fs), Node::Inode(ino)) => fs.size(ino),
            _ => unreachable!("node of another mount"),
        }
    }

    /// The largest file, bytes (`s_maxbytes`): seeks and truncates beyond
    /// it fail.
    pub fn max_bytes(&self) -> u64 {
        match self {
            Mount::Raw(_) => RAW_MAX_BYTES,
            Mount::Fs(fs) => fs.max_bytes(),
        }
    }

    /// Maps pages `[first, first + pages)` of mapping `m` to device runs
    /// (holes as `None`), into `out` (cleared first).
    pub fn map_pages(&self, m: FileId, first: u64, pages: u64, out: &mut Vec<PageRun>) {
        match self {
            Mount::Raw(files) => {
                out.clear();
                let f = files.get(files.index_of_cache(m));
                out.push(PageRun {
                    page: first,
                    pages,
                    sector: Some(f.first_sector + first * SECTORS_PER_PAGE),
                });
            }
            Mount::Fs(fs) => fs.map_pages(m, first, pages, out),
        }
    }
}
