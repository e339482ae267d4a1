//! The VFS view of the mounted files: either the raw extent layout (files
//! as contiguous device extents, no metadata) or an ext4 file system, and
//! what the host asks of both — path look-up and the mapping of file pages
//! to device sectors.

use super::files::Files;
use super::fs::ext4::{Errno, Ext4, PageRun};
use super::page_cache::FileId;
use super::task::Node;
use crate::types::SECTORS_PER_PAGE;

/// What is mounted.
pub enum Mount {
    /// Files as raw contiguous extents (no `[fs]` section).
    Raw(Files),
    /// An ext4 file system.
    Ext4(Box<Ext4>),
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
    /// The ext4 file system, if mounted.
    pub fn ext4(&self) -> Option<&Ext4> {
        match self {
            Mount::Ext4(e) => Some(e),
            Mount::Raw(_) => None,
        }
    }

    /// The ext4 file system, mutably.
    pub fn ext4_mut(&mut self) -> Option<&mut Ext4> {
        match self {
            Mount::Ext4(e) => Some(e),
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
            Mount::Ext4(fs) => {
                let ino = fs.lookup(&components(path)?)?;
                Ok((Node::Ext4(ino), fs.inode(ino).mapping))
            }
        }
    }

    /// Size of a file, bytes.
    pub fn size(&self, node: Node) -> u64 {
        match (self, node) {
            (Mount::Raw(files), Node::Raw(i)) => files.get(i).pages * 4096,
            (Mount::Ext4(fs), Node::Ext4(ino)) => fs.inode(ino).size,
            _ => unreachable!("node of another mount"),
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
            Mount::Ext4(fs) => fs.map_pages(m, first, pages, out),
        }
    }
}
