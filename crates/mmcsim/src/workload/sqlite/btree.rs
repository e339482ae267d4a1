//! The B-tree page model of one rowid table (SQLite `btree.c`, file
//! format §1.6 of the SQLite documentation): which database pages a
//! statement reads and modifies, leaf splits on append (`balance_quick`),
//! sibling redistribution after deletes (`balance_nonroot`), interior
//! levels, and the page allocator of a full auto-vacuum database (pointer
//! map pages, relocation and truncation at commit, `autoVacuumCommit`).
//!
//! Rows are kept by rowid only (their content is not modelled): the
//! table's leaves hold sorted rowids, interior levels are filled left to
//! right, the parent of child `c` is interior page `c / fanout` of the
//! level above (append-only trees built by `balance_quick` look like
//! this; after deletes the mapping is an approximation).

/// A database page number (1-based, as SQLite numbers them).
pub type Pgno = u32;

/// Bytes of the database header on page 1.
const DB_HEADER_BYTES: u32 = 100;
/// Bytes of a leaf page header (`btree.c`: 8 for leaves).
const LEAF_HEADER_BYTES: u32 = 8;
/// Bytes of an interior page header (12: the right-child pointer).
const INTERIOR_HEADER_BYTES: u32 = 12;
/// Bytes of a cell pointer in the cell-pointer array.
const CELL_POINTER_BYTES: u32 = 2;

/// Bytes of a SQLite varint holding `v` (1-9).
pub fn varint_len(v: u64) -> u32 {
    let mut n = 1;
    let mut x = v >> 7;
    while x > 0 && n < 9 {
        n += 1;
        x >>= 7;
    }
    n
}

/// Bytes a table-leaf cell of `payload` bytes and rowid `rowid` occupies
/// (payload-size varint + rowid varint + payload + its cell pointer).
pub fn leaf_cell_bytes(payload: u32, rowid: u64) -> u32 {
    CELL_POINTER_BYTES + varint_len(u64::from(payload)) + varint_len(rowid) + payload
}

/// The largest payload a table leaf keeps on the page (`maxLocal` =
/// usable size − 35); bigger rows spill to overflow pages, which the
/// model does not have.
pub fn max_local_payload(page_size: u32) -> u32 {
    page_size - 35
}

/// One table leaf.
#[derive(Clone, Debug)]
struct Leaf {
    pgno: Pgno,
    /// Rowids on the page, ascending.
    rows: Vec<u64>,
}

/// What a B-tree operation did to the database's pages.
#[derive(Clone, Debug, Default)]
pub struct Touch {
    /// Pages read (in order, duplicates allowed).
    pub read: Vec<Pgno>,
    /// Pages modified (journaled and written at commit).
    pub write: Vec<Pgno>,
    /// Pages the operation freed.
    pub freed: u32,
}

impl Touch {
    fn w(&mut self, p: Pgno) {
        if !self.write.contains(&p) {
            self.write.push(p);
        }
    }
}

/// The table and the pages of its database file.
#[derive(Clone, Debug)]
pub struct Table {
    page_size: u32,
    row_bytes: u32,
    /// Root page of the table (fixed, like SQLite's).
    root: Pgno,
    leaves: Vec<Leaf>,
    /// Interior levels, bottom first; the top level is the root alone
    /// when the tree has interior pages. Empty: the root is a leaf.
    interior: Vec<Vec<Pgno>>,
    /// Pages of the database file.
    pages: Pgno,
    /// Full auto-vacuum (pointer-map pages, truncation at commit).
    auto_vacuum: bool,
    /// Next rowid (AUTOINCREMENT: never reused).
    next_rowid: u64,
}

impl Table {
    /// A freshly created database: page 1 (schema), page 2 (pointer map,
    /// with auto-vacuum), then `schema_pages` root pages of other tables,
    /// then the table's root, an empty leaf.
    pub fn new(page_size: u32, row_bytes: u32, auto_vacuum: bool, schema_pages: u32) -> Table {
        let first = 2 + auto_vacuum as u32 + schema_pages;
        Table {
            page_size,
            row_bytes,
            root: first,
            leaves: vec![Leaf {
                pgno: first,
                rows: Vec::new(),
            }],
            interior: Vec::new(),
            pages: first,
            auto_vacuum,
            next_rowid: 1,
        }
    }

    /// Pages of the database file.
    pub fn pages(&self) -> Pgno {
        self.pages
    }

    /// Rows in the table.
    pub fn rows(&self) -> u64 {
        self.leaves.iter().map(|l| l.rows.len() as u64).sum()
    }

    /// Leaf pages of the table.
    pub fn leaf_pages(&self) -> usize {
        self.leaves.len()
    }

    /// The rowid the next INSERT gets.
    pub fn next_rowid(&self) -> u64 {
        self.next_rowid
    }

    fn usable_leaf(&self, pgno: Pgno) -> u32 {
        self.page_size - LEAF_HEADER_BYTES - if pgno == 1 { DB_HEADER_BYTES } else { 0 }
    }

    fn leaf_used(&self, leaf: &Leaf) -> u32 {
        leaf.rows
            .iter()
            .map(|&r| leaf_cell_bytes(self.row_bytes, r))
            .sum()
    }

    /// Children an interior page holds (cells + the right child).
    fn fanout(&self) -> usize {
        let cell = CELL_POINTER_BYTES + 4 + varint_len(self.next_rowid.max(1));
        ((self.page_size - INTERIOR_HEADER_BYTES) / cell) as usize + 1
    }

    /// The pointer-map page holding the entry of page `p` (auto-vacuum):
    /// page 2, then one every `usable / 5 + 1` pages.
    pub fn ptrmap_page(&self, p: Pgno) -> Option<Pgno> {
        if !self.auto_vacuum || p < 3 {
            return None;
        }
        let per = self.page_size / 5 + 1;
        Some(((p - 2) / per) * per + 2)
    }

    /// Allocates a page at the end of the file (skipping pointer-map
    /// pages), recording its pointer-map entry in `t`.
    fn allocate(&mut self, t: &mut Touch) -> Pgno {
        self.pages += 1;
        if self.ptrmap_page(self.pages) == Some(self.pages) {
            t.w(self.pages);
            self.pages += 1;
        }
        let p = self.pages;
        if let Some(m) = self.ptrmap_page(p) {
            t.w(m);
        }
        t.w(p);
        p
    }

    /// The path of pages from the root to leaf `i` (root first).
    fn path(&self, leaf: usize) -> Vec<Pgno> {
        let mut out = Vec::with_capacity(self.interior.len() + 1);
        let mut idx = leaf;
        let fan = self.fanout();
        let mut ups = Vec::new();
        for level in &self.interior {
            idx /= fan;
            ups.push(level[idx.min(level.len() - 1)]);
        }
        out.extend(ups.iter().rev());
        out.push(self.leaves[leaf].pgno);
        out
    }

    /// The interior page that is the parent of child `child` of level
    /// `level` (0 = leaves).
    fn parent(&self, level: usize, child: usize) -> Option<Pgno> {
        let up = self.interior.get(level)?;
        let i = child / self.fanout();
        Some(up[i.min(up.len() - 1)])
    }

    /// INSERT of the next rowid: appended to the rightmost leaf; when it
    /// does not fit, `balance_quick` puts it on a new leaf and adds a
    /// divider to the parent (splitting interior pages and deepening the
    /// tree at the root as needed).
    pub fn insert(&mut self) -> (u64, Touch) {
        let mut t = Touch::default();
        let rowid = self.next_rowid;
        self.next_rowid += 1;
        let last = self.leaves.len() - 1;
        t.read.extend(self.path(last));
        let cell = leaf_cell_bytes(self.row_bytes, rowid);
        let pgno = self.leaves[last].pgno;
        t.w(pgno);
        if self.leaf_used(&self.leaves[last]) + cell <= self.usable_leaf(pgno) {
            self.leaves[last].rows.push(rowid);
            return (rowid, t);
        }
        if self.interior.is_empty() {
            // balance_deeper: the root's cells move to a new child page;
            // the root becomes an interior page over it.
            let child = self.allocate(&mut t);
            self.leaves[last].pgno = child;
            self.interior.push(vec![self.root]);
            t.w(self.root);
        }
        let new = self.allocate(&mut t);
        self.leaves.push(Leaf {
            pgno: new,
            rows: vec![rowid],
        });
        self.add_child(0, &mut t);
        (rowid, t)
    }

    /// Level `level` (0 = leaves) gained a child at its end: its parent
    /// gets a divider cell; a full parent level grows a page.
    fn add_child(&mut self, level: usize, t: &mut Touch) {
        let fan = self.fanout();
        let children = if level == 0 {
            self.leaves.len()
        } else {
            self.interior[level - 1].len()
        };
        let needed = children.div_ceil(fan);
        let up = level; // index of the parent level in `interior`
        if needed <= self.interior[up].len() {
            t.w(self.parent(level, children - 1).expect("has a parent"));
            return;
        }
        if up + 1 == self.interior.len() {
            // The root is full: deepen (its cells move to a new page).
            let moved = self.allocate(t);
            self.interior[up][0] = moved;
            self.interior.push(vec![self.root]);
            t.w(self.root);
        }
        let new = self.allocate(t);
        self.interior[up].push(new);
        self.add_child(up + 1, t);
    }

    /// Finds the leaf holding `rowid` by a full scan (no index: every
    /// page of the table is read), as `UPDATE/DELETE … WHERE col = k`.
    fn scan(&self, rowid: u64, t: &mut Touch) -> Option<usize> {
        t.read.extend(self.interior.iter().rev().flatten());
        t.read.extend(self.leaves.iter().map(|l| l.pgno));
        self.leaves.iter().position(|l| l.rows.contains(&rowid))
    }

    /// UPDATE of row `rowid` in place (same size): a full scan, then its
    /// leaf is modified. None when no row matches.
    pub fn update(&mut self, rowid: u64) -> Touch {
        let mut t = Touch::default();
        if let Some(i) = self.scan(rowid, &mut t) {
            t.w(self.leaves[i].pgno);
        }
        t
    }

    /// A read-only full scan (SELECT … WHERE on an unindexed column).
    pub fn select(&self, rowid: u64) -> Touch {
        let mut t = Touch::default();
        let _ = self.scan(rowid, &mut t);
        t
    }

    /// DELETE of row `rowid`: a full scan, the row removed from its leaf;
    /// a leaf left less than a third full is balanced with its siblings
    /// (`balance_nonroot`: up to three siblings redistributed over as few
    /// pages as hold them; emptied pages freed).
    pub fn delete(&mut self, rowid: u64) -> Touch {
        let mut t = Touch::default();
        let Some(i) = self.scan(rowid, &mut t) else {
            return t;
        };
        let leaf = &mut self.leaves[i];
        leaf.rows.retain(|&r| r != rowid);
        t.w(leaf.pgno);
        if self.interior.is_empty() {
            return t;
        }
        let pgno = self.leaves[i].pgno;
        let usable = self.usable_leaf(pgno);
        if self.leaf_used(&self.leaves[i]) * 3 >= usable {
            return t;
        }
        // Siblings: a window of up to 3 around i (balance_nonroot's nOld).
        let n = self.leaves.len();
        let lo = i.saturating_sub(1).min(n.saturating_sub(3));
        let hi = (lo + 3).min(n);
        if hi - lo < 2 {
            return self.collapse_root(t);
        }
        let parent = self.parent(0, i).expect("leaves have a parent");
        t.w(parent);
        let rows: Vec<u64> = self.leaves[lo..hi]
            .iter()
            .flat_map(|l| l.rows.iter().copied())
            .collect();
        let total: u32 = rows
            .iter()
            .map(|&r| leaf_cell_bytes(self.row_bytes, r))
            .sum();
        let cap = self.page_size - LEAF_HEADER_BYTES;
        let keep = (total.div_ceil(cap) as usize).max(1);
        let old: Vec<Pgno> = self.leaves[lo..hi].iter().map(|l| l.pgno).collect();
        for p in &old {
            t.w(*p);
        }
        let per = rows.len().div_ceil(keep);
        let mut new: Vec<Leaf> = rows
            .chunks(per.max(1))
            .zip(&old)
            .map(|(c, &p)| Leaf {
                pgno: p,
                rows: c.to_vec(),
            })
            .collect();
        if new.is_empty() {
            new.push(Leaf {
                pgno: old[0],
                rows: Vec::new(),
            });
        }
        let kept = new.len();
        t.freed += (old.len() - kept) as u32;
        self.leaves.splice(lo..hi, new);
        self.free_pages(&old[kept..], &mut t);
        if self.leaves.len() == 1 {
            return self.collapse_root(t);
        }
        t
    }

    /// One leaf left under an interior root: its cells move up into the
    /// root (`balance_deeper` in reverse) and the leaf is freed.
    fn collapse_root(&mut self, mut t: Touch) -> Touch {
        if self.leaves.len() != 1 || self.interior.is_empty() {
            return t;
        }
        let old = self.leaves[0].pgno;
        let interior: Vec<Pgno> = self
            .interior
            .iter()
            .flatten()
            .copied()
            .filter(|&p| p != self.root)
            .collect();
        self.leaves[0].pgno = self.root;
        self.interior.clear();
        t.w(self.root);
        let mut gone = vec![old];
        gone.extend(interior);
        t.freed += gone.len() as u32;
        self.free_pages(&gone, &mut t);
        t
    }

    /// Frees `gone` pages: with full auto-vacuum, the last pages of the
    /// file move into the holes (each move rewrites the page at its new
    /// place, its parent's pointer and the pointer map) and the file
    /// shrinks (`autoVacuumCommit`); without it they join the free list
    /// (page 1's header).
    fn free_pages(&mut self, gone: &[Pgno], t: &mut Touch) {
        t.w(1);
        if !self.auto_vacuum {
            return;
        }
        let mut holes: Vec<Pgno> = gone.to_vec();
        holes.sort_unstable();
        for _ in 0..gone.len() {
            // Drop trailing holes and pointer-map pages.
            while self.pages > self.root {
                if let Some(k) = holes.iter().position(|&h| h == self.pages) {
                    holes.remove(k);
                    self.pages -= 1;
                } else if self.ptrmap_page(self.pages) == Some(self.pages) {
                    self.pages -= 1;
                } else {
                    break;
                }
            }
            let Some(hole) = holes.first().copied() else {
                break;
            };
            holes.remove(0);
            let last = self.pages;
            self.relocate(last, hole, t);
            self.pages -= 1;
        }
        t.write.retain(|&p| p <= self.pages);
    }

    /// Moves page `from` to `to`, recording the pages the move rewrites.
    fn relocate(&mut self, from: Pgno, to: Pgno, t: &mut Touch) {
        t.w(to);
        if let Some(m) = self.ptrmap_page(to) {
            t.w(m);
        }
        if let Some(i) = self.leaves.iter().position(|l| l.pgno == from) {
            self.leaves[i].pgno = to;
            if let Some(p) = self.parent(0, i) {
                t.w(p);
            }
            return;
        }
        for lv in 0..self.interior.len() {
            if let Some(i) = self.interior[lv].iter().position(|&p| p == from) {
                self.interior[lv][i] = to;
                if let Some(p) = self.parent(lv + 1, i) {
                    t.w(p);
                }
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_fill_leaves_then_split_with_a_new_page_parent_and_ptrmap() {
        let mut t = Table::new(4096, 100, true, 2);
        assert_eq!(t.pages(), 5);
        let mut splits = 0;
        for _ in 0..1024 {
            let (_, touch) = t.insert();
            if touch.write.len() > 1 {
                splits += 1;
                // A split grows the file and writes the pointer map.
                assert!(touch.write.contains(&2), "{touch:?}");
            }
        }
        // 105-byte cells: 38 per 4 KiB leaf.
        assert_eq!(t.leaf_pages(), 1024usize.div_ceil(38));
        assert_eq!(splits, t.leaf_pages() - 1);
        assert_eq!(t.rows(), 1024);
    }

    #[test]
    fn updates_scan_every_page_and_write_one_leaf() {
        let mut t = Table::new(4096, 100, true, 2);
        for _ in 0..100 {
            t.insert();
        }
        let touch = t.update(50);
        assert_eq!(touch.read.len(), 1 + t.leaf_pages());
        assert_eq!(touch.write.len(), 1);
    }

    #[test]
    fn deleting_everything_shrinks_the_auto_vacuum_file_back() {
        let mut t = Table::new(4096, 100, true, 2);
        for _ in 0..1024 {
            t.insert();
        }
        let grown = t.pages();
        let mut freed = 0;
        // A deterministic scatter of deletes.
        for k in 0..1024u64 {
            freed += t.delete((k * 389) % 1024 + 1).freed;
        }
        assert_eq!(t.rows(), 0);
        assert_eq!(t.leaf_pages(), 1);
        assert_eq!(t.pages(), 5);
        assert_eq!(freed, grown - 5);
    }
}
