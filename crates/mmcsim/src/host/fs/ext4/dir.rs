//! Linear ext4 directories: entries packed into 4 KiB directory blocks
//! (`ext4_add_entry` uses the first block with room for the record and
//! appends a block when none has), so adding or removing a name dirties
//! exactly the block that holds it. Small directories such as an app's
//! `databases/` stay linear (no htree) in 3.x.

use std::collections::BTreeMap;

use super::layout::BLOCK_BYTES;

/// Bytes of a directory record for a name of `len` bytes
/// (`EXT4_DIR_REC_LEN`: 8-byte header + name, rounded up to 4).
pub fn rec_len(len: usize) -> u64 {
    (8 + len as u64).div_ceil(4) * 4
}

/// One directory's entries and how full each of its blocks is.
#[derive(Clone, Debug, Default)]
pub struct Dir {
    /// Name → (inode, index of the directory block holding the record).
    entries: BTreeMap<String, (u32, usize)>,
    /// Bytes used in each directory block.
    used: Vec<u64>,
}

impl Dir {
    /// A new directory with one block holding `.` and `..`.
    pub fn new() -> Dir {
        Dir {
            entries: BTreeMap::new(),
            used: vec![rec_len(1) + rec_len(2)],
        }
    }

    /// Directory blocks.
    pub fn blocks(&self) -> usize {
        self.used.len()
    }

    /// The inode named `name`.
    pub fn lookup(&self, name: &str) -> Option<u32> {
        self.entries.get(name).map(|e| e.0)
    }

    /// Names and inodes, in name order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, u32)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.0))
    }

    /// Number of entries (without `.` and `..`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when only `.` and `..` remain.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The directory block an entry for `name` would go to: the first with
    /// room, or `blocks()` when a block must be appended first.
    pub fn slot_for(&self, name: &str) -> usize {
        let need = rec_len(name.len());
        self.used
            .iter()
            .position(|&u| u + need <= BLOCK_BYTES)
            .unwrap_or(self.used.len())
    }

    /// Adds `name` → `ino` in block `slot_for(name)` (appending the block
    /// when it is new); returns the block index.
    pub fn add(&mut self, name: &str, ino: u32) -> usize {
        let b = self.slot_for(name);
        if b == self.used.len() {
            self.used.push(0);
        }
        self.used[b] += rec_len(name.len());
        self.entries.insert(name.to_string(), (ino, b));
        b
    }

    /// Removes `name`; returns its inode and the block that held it.
    pub fn remove(&mut self, name: &str) -> Option<(u32, usize)> {
        let (ino, b) = self.entries.remove(name)?;
        self.used[b] -= rec_len(name.len());
        Some((ino, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_fill_the_first_block_then_a_new_one() {
        let mut d = Dir::new();
        assert_eq!(rec_len(1), 12);
        assert_eq!(rec_len(10), 20);
        // (4096 - 24) / 20 = 203 ten-byte names fit in block 0
        for i in 0..203 {
            assert_eq!(d.add(&format!("file{i:06}"), 100 + i), 0);
        }
        assert_eq!(d.slot_for("file999999"), 1);
        assert_eq!(d.add("file999999", 9), 1);
        assert_eq!(d.blocks(), 2);
        assert_eq!(d.remove("file000005"), Some((105, 0)));
        // the hole in block 0 is reused
        assert_eq!(d.add("fileXXXXXX", 7), 0);
        assert_eq!(d.lookup("fileXXXXXX"), Some(7));
    }
}
