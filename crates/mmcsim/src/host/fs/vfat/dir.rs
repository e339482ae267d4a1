//! FAT directories as the vfat driver fills them: an array of 32-byte
//! slots in the directory's cluster chain. An entry takes one short (8.3)
//! slot, preceded by long-name slots (13 UTF-16 units each) unless the
//! name is a valid upper-case 8.3 name: vold mounts with
//! `shortname=mixed`, which creates short-only entries for upper-case
//! names alone [src: Linux fs/fat/namei_vfat.c `vfat_create_shortname`,
//! `VFAT_SFN_CREATE_WIN95`; AOSP system/vold Fat.cpp mount data].
//! `fat_add_entries` takes the first run of free slots (never used, or
//! deleted: 0xE5) long enough, else extends the directory by a cluster;
//! `fat_remove_entries` marks the slots deleted. Names are looked up
//! without regard to ASCII case, as the vfat dentry operations compare
//! them.

use std::collections::BTreeMap;

/// Long-name characters per slot.
const LFN_CHARS_PER_SLOT: usize = 13;

/// An entry of a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The inode it names.
    pub ino: u32,
    /// Its first slot (the first long-name slot, or the short slot).
    pub first: u64,
    /// Its slots (long-name slots plus the short slot).
    pub slots: u64,
}

impl Entry {
    /// The short (8.3) slot, which holds size, first cluster and times.
    pub fn short_slot(&self) -> u64 {
        self.first + self.slots - 1
    }
}

/// A directory: slot occupancy and the entries by (case-folded) name.
#[derive(Clone, Debug, Default)]
pub struct Dir {
    used: Vec<bool>,
    entries: BTreeMap<String, Entry>,
}

/// Slots an entry named `name` takes under `shortname=mixed`.
pub fn slots_for(name: &str) -> u64 {
    if is_upper_83(name) {
        return 1;
    }
    let units = name.encode_utf16().count();
    (units.div_ceil(LFN_CHARS_PER_SLOT) + 1) as u64
}

/// Whether `name` is a valid 8.3 name in upper case (no long name
/// needed when creating with `shortname=mixed`).
fn is_upper_83(name: &str) -> bool {
    let (base, ext) = match name.split_once('.') {
        Some((b, e)) => (b, e),
        None => (name, ""),
    };
    let ok = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "$%'-_@~`!(){}^#&".contains(c))
    };
    (1..=8).contains(&base.len()) && ext.len() <= 3 && !ext.contains('.') && ok(base) && ok(ext)
}

fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

impl Dir {
    /// A directory whose first `reserved` slots are taken ("." and ".."
    /// of a subdirectory; none in the FAT32 root).
    pub fn new(reserved: u64) -> Dir {
        Dir {
            used: vec![true; reserved as usize],
            entries: BTreeMap::new(),
        }
    }

    /// The entry named `name`.
    pub fn lookup(&self, name: &str) -> Option<Entry> {
        self.entries.get(&key(name)).copied()
    }

    /// Whether it has no entries (besides "." and "..").
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Slots ever used (the extent `fat_add_entries` scans), including
    /// deleted ones.
    pub fn slots_in_use_extent(&self) -> u64 {
        self.used.len() as u64
    }

    /// Where an entry of `n` slots goes: the first run of `n` free slots,
    /// or the free tail at the end extended past it.
    pub fn place(&self, n: u64) -> u64 {
        let mut run = 0u64;
        for (i, &u) in self.used.iter().enumerate() {
            if u {
                run = 0;
            } else {
                run += 1;
                if run == n {
                    return i as u64 + 1 - n;
                }
            }
        }
        self.used.len() as u64 - run
    }

    /// Adds entry `name` for `ino` at slot `first` (from [`Dir::place`]).
    pub fn add(&mut self, name: &str, ino: u32, first: u64, slots: u64) -> Entry {
        let end = (first + slots) as usize;
        if self.used.len() < end {
            self.used.resize(end, false);
        }
        for u in &mut self.used[first as usize..end] {
            *u = true;
        }
        let e = Entry { ino, first, slots };
        self.entries.insert(key(name), e);
        e
    }

    /// Removes entry `name` (its slots become deleted entries).
    pub fn remove(&mut self, name: &str) -> Option<Entry> {
        let e = self.entries.remove(&key(name))?;
        for u in &mut self.used[e.first as usize..(e.first + e.slots) as usize] {
            *u = false;
        }
        Some(e)
    }

    /// The entries, by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_case_names_take_long_name_slots() {
        assert_eq!(slots_for("LOST.DIR"), 1);
        assert_eq!(slots_for("README"), 1);
        assert_eq!(slots_for("log"), 2);
        assert_eq!(slots_for("test.db-journal"), 3);
        assert_eq!(slots_for("ABCDEFGHI"), 2, "9 characters: not 8.3");
    }

    #[test]
    fn deleted_slots_are_reused_by_an_entry_that_fits() {
        let mut d = Dir::new(2);
        let a = d.add("a", 5, d.place(2), 2);
        assert_eq!((a.first, a.short_slot()), (2, 3));
        let b = d.add("b", 6, d.place(2), 2);
        assert_eq!(b.first, 4);
        d.remove("A").unwrap();
        assert_eq!(d.place(3), 6, "the hole of 2 is too small");
        assert_eq!(d.place(2), 2);
        assert!(d.lookup("B").is_some());
    }
}
