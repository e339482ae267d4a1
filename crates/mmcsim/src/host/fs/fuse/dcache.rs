//! What the FUSE kernel caches of the daemon's answers, and the daemon's
//! own node table.
//!
//! * Dentries: a LOOKUP, MKNOD or MKDIR reply makes the name valid for
//!   `entry_valid` ([`params::ENTRY_VALID_NS`]); past it the next path
//!   walk through the name sends FUSE_LOOKUP again
//!   (`fuse_dentry_revalidate`). sdcard answers a missing name with
//!   ENOENT, which leaves a negative dentry with no timeout, so a missing
//!   name is looked up every time [src: linux-3.4 fs/fuse/dir.c
//!   `fuse_lookup`: `fuse_invalidate_entry_cache` when the reply is not
//!   valid]. Unlink, rmdir and rename drop or move names.
//! * Attributes: an entry or attribute reply makes a node's attributes
//!   valid for `attr_valid` ([`params::ATTR_VALID_NS`]); create, mkdir,
//!   unlink, rename, a write and an O_TRUNC open invalidate them
//!   (`fuse_invalidate_attr`). The root's start invalid (`fuse_iget` of
//!   the root with no timeout).
//! * Node paths: sdcard keeps a tree of the nodes the kernel knows and
//!   rebuilds a node's lower path from it for every request that names a
//!   node (`lookup_node_and_path_by_id_locked`); renames move subtrees.
//!
//! Neither cache is ever shrunk (no memory pressure is modelled, so no
//! FUSE_FORGET is sent). Times are ns of simulated time; a jiffy's
//! rounding is ignored.

use std::collections::BTreeMap;

use super::super::Ino;
use super::params;
use crate::types::Ns;

/// The dentry and attribute caches with their expiry times, and the
/// daemon's node paths.
#[derive(Clone, Debug, Default)]
pub struct Dcache {
    /// Positive dentries by path (components joined by `/`): when their
    /// entry validity ends, ns.
    entries: BTreeMap<String, Ns>,
    /// When each node's attributes stop being valid, ns (absent: invalid).
    attrs: BTreeMap<Ino, Ns>,
    /// The lower path of each node the daemon knows.
    paths: BTreeMap<Ino, Vec<String>>,
}

fn key(path: &[String]) -> String {
    path.join("/")
}

/// Whether `k` is `prefix` or below it.
fn under(k: &str, prefix: &str) -> bool {
    k == prefix || (k.starts_with(prefix) && k.as_bytes().get(prefix.len()) == Some(&b'/'))
}

impl Dcache {
    /// Whether the dentry of `path` is cached and valid at `now`.
    pub fn entry_fresh(&self, path: &[String], now: Ns) -> bool {
        self.entries.get(&key(path)).is_some_and(|&t| t >= now)
    }

    /// A reply named `path` as node `ino` at `now`: its dentry and
    /// attributes are valid from now on, and the daemon knows its path.
    pub fn entry_reply(&mut self, path: &[String], ino: Ino, now: Ns) {
        self.entries.insert(key(path), now + params::ENTRY_VALID_NS);
        self.attr_reply(ino, now);
        self.paths.insert(ino, path.to_vec());
    }

    /// `path` and every name below it are gone.
    pub fn drop_entries(&mut self, path: &[String]) {
        let k = key(path);
        self.entries.retain(|e, _| !under(e, &k));
    }

    /// `from` and the names below it moved to `to` (`d_move`, keeping
    /// their timeouts); what `to` named is gone. The daemon's node paths
    /// move with them.
    pub fn rename(&mut self, from: &[String], to: &[String]) {
        self.drop_entries(to);
        let (f, t) = (key(from), key(to));
        let moved: Vec<(String, Ns)> = self
            .entries
            .iter()
            .filter(|(e, _)| under(e, &f))
            .map(|(e, &v)| (format!("{t}{}", &e[f.len()..]), v))
            .collect();
        self.entries.retain(|e, _| !under(e, &f));
        self.entries.extend(moved);
        for p in self.paths.values_mut() {
            if p.len() >= from.len() && p[..from.len()] == *from {
                let rest = p.split_off(from.len());
                *p = to.iter().cloned().chain(rest).collect();
            }
        }
    }

    /// Whether node `ino`'s attributes are valid at `now`.
    pub fn attr_fresh(&self, ino: Ino, now: Ns) -> bool {
        self.attrs.get(&ino).is_some_and(|&t| t >= now)
    }

    /// A reply carried node `ino`'s attributes at `now`.
    pub fn attr_reply(&mut self, ino: Ino, now: Ns) {
        self.attrs.insert(ino, now + params::ATTR_VALID_NS);
    }

    /// Node `ino`'s attributes are stale (`fuse_invalidate_attr`).
    pub fn invalidate_attr(&mut self, ino: Ino) {
        self.attrs.remove(&ino);
    }

    /// The daemon learns node `ino`'s path without a reply (a file made
    /// before the mount, which the process already holds open).
    pub fn know(&mut self, ino: Ino, path: &[String]) {
        self.paths.entry(ino).or_insert_with(|| path.to_vec());
    }

    /// The lower path the daemon keeps for node `ino`.
    pub fn path(&self, ino: Ino) -> Option<&[String]> {
        self.paths.get(&ino).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        s.split('/')
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn entries_expire_after_entry_valid_and_attributes_after_attr_valid() {
        let mut d = Dcache::default();
        d.entry_reply(&p("sdcard/f"), 12, 1_000);
        assert!(d.entry_fresh(&p("sdcard/f"), 1_000 + params::ENTRY_VALID_NS));
        assert!(!d.entry_fresh(&p("sdcard/f"), 1_001 + params::ENTRY_VALID_NS));
        assert!(d.attr_fresh(12, 1_000 + params::ATTR_VALID_NS));
        assert!(!d.attr_fresh(12, 1_001 + params::ATTR_VALID_NS));
        d.invalidate_attr(12);
        assert!(!d.attr_fresh(12, 1_000));
        assert!(!d.attr_fresh(2, 0), "the root starts invalid");
    }

    #[test]
    fn rename_moves_a_subtree_and_its_node_paths() {
        let mut d = Dcache::default();
        d.entry_reply(&p("a"), 2, 0);
        d.entry_reply(&p("a/x"), 3, 0);
        d.entry_reply(&p("ab"), 4, 0);
        d.entry_reply(&p("b"), 5, 0);
        d.rename(&p("a"), &p("b"));
        assert!(!d.entry_fresh(&p("a"), 0) && !d.entry_fresh(&p("a/x"), 0));
        assert!(d.entry_fresh(&p("b/x"), 0) && d.entry_fresh(&p("ab"), 0));
        assert_eq!(d.path(3), Some(&p("b/x")[..]));
        assert_eq!(d.path(4), Some(&p("ab")[..]));
        d.drop_entries(&p("b"));
        assert!(!d.entry_fresh(&p("b/x"), 0) && d.entry_fresh(&p("ab"), 0));
    }
}
