//! Page-cache operations a file system needs beyond buffered reads and
//! writeback: installing pages without I/O (blocks a file system creates
//! or knows the contents of, like `sb_getblk` + `set_buffer_uptodate`),
//! cancelling a page's dirty state (`clear_page_dirty_for_io` without the
//! I/O, as jbd2 takes a checkpointed buffer back into a transaction),
//! truncating a mapping (`truncate_inode_pages`), and per-file writeback
//! counts (what `filemap_fdatawait` sleeps on).

use super::page_cache::{FileId, PageCache, DIRTY, PRESENT, REFERENCED, UPTODATE, WRITEBACK};
use crate::types::Ns;

impl PageCache {
    /// Makes page `page` of `file` resident and uptodate without reading it
    /// (the file grows to hold it). A page already resident is only
    /// referenced.
    pub fn install_uptodate(&mut self, file: FileId, page: u64) {
        self.extend_file(file, page + 1);
        if self.flags(file, page) & PRESENT == 0 {
            self.make_room(1);
            self.insert_page(file, page, UPTODATE | REFERENCED);
        } else {
            self.files[file as usize].flags[page as usize] |= REFERENCED;
        }
    }

    /// Clears the dirty state of page `page` of `file` without writing it
    /// (its contents will reach the device another way). Returns whether it
    /// was dirty.
    pub fn cancel_dirty(&mut self, file: FileId, page: u64) -> bool {
        let f = &mut self.files[file as usize];
        let Some(fl) = f.flags.get_mut(page as usize) else {
            return false;
        };
        if *fl & DIRTY == 0 {
            return false;
        }
        *fl &= !DIRTY;
        f.nr_dirty -= 1;
        if f.nr_dirty == 0 {
            f.dirtied_when = None;
        }
        self.nr_dirty -= 1;
        true
    }

    /// Pages of `file` under writeback now.
    pub fn file_writeback_pages(&self, file: FileId) -> u64 {
        self.files[file as usize].nr_writeback
    }

    /// Whether any page of `file` in `[first, first + pages)` is dirty.
    pub fn range_dirty(&self, file: FileId, first: u64, pages: u64) -> bool {
        let f = &self.files[file as usize];
        let end = first.saturating_add(pages).min(f.flags.len() as u64);
        (first..end).any(|p| f.flags[p as usize] & DIRTY != 0)
    }

    /// Truncates `file` to `pages` pages: pages at or beyond it leave the
    /// cache (dirty ones are dropped unwritten; a page under writeback
    /// finishes its I/O but its completion no longer finds it). Growing is
    /// [`PageCache::extend_file`].
    pub fn truncate(&mut self, file: FileId, pages: u64) {
        let f = &mut self.files[file as usize];
        let len = f.flags.len() as u64;
        if pages >= len {
            return;
        }
        let mut dropped = 0u64;
        for p in pages..len {
            let fl = f.flags[p as usize];
            if fl & DIRTY != 0 {
                f.nr_dirty -= 1;
                self.nr_dirty -= 1;
            }
            if fl & WRITEBACK != 0 {
                f.nr_writeback -= 1;
                self.nr_writeback -= 1;
            }
            if fl & PRESENT != 0 {
                dropped += 1;
            }
        }
        f.flags.truncate(pages as usize);
        if f.nr_dirty == 0 {
            f.dirtied_when = None;
        }
        f.writeback_index = f.writeback_index.min(pages);
        if dropped > 0 {
            self.drop_from_clock(file, pages, dropped);
        }
    }

    /// When `file` went dirty, for callers deciding whether to write it.
    pub fn file_dirtied_when(&self, file: FileId) -> Option<Ns> {
        self.files[file as usize].dirtied_when
    }
}

impl PageCache {
    /// Takes page `page` of `file` for writeback if it is dirty and not
    /// already under writeback (`write_dirty_buffer` of one buffer):
    /// returns whether it did.
    pub fn take_dirty_page(&mut self, file: FileId, page: u64) -> bool {
        let f = &mut self.files[file as usize];
        let Some(fl) = f.flags.get_mut(page as usize) else {
            return false;
        };
        if *fl & DIRTY == 0 || *fl & WRITEBACK != 0 {
            return false;
        }
        *fl = (*fl & !DIRTY) | WRITEBACK;
        f.nr_dirty -= 1;
        if f.nr_dirty == 0 {
            f.dirtied_when = None;
        }
        f.nr_writeback += 1;
        self.nr_dirty -= 1;
        self.nr_writeback += 1;
        self.stats.pages_written += 1;
        true
    }

    /// Whether page `page` of `file` is dirty or under writeback.
    pub fn is_dirty_or_writeback(&self, file: FileId, page: u64) -> bool {
        self.flags(file, page) & (DIRTY | WRITEBACK) != 0
    }
}
