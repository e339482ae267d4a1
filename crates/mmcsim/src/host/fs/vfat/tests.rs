//! Unit tests of the vfat model.

use super::*;

fn fs(extra: &str, cache: &mut PageCache) -> Vfat {
    let cfg: FsConfig = toml::from_str(&format!("type = \"vfat\"\n{extra}")).unwrap();
    let mut fs = Vfat::mkfs(&cfg, 0, 131_072, 5_000_000, cache).unwrap();
    fs.finish_mount();
    fs
}

#[test]
fn mkfs_gives_the_root_cluster_2_and_lost_dir_cluster_3() {
    let mut cache = PageCache::new(10_000);
    let fs = fs("", &mut cache);
    assert_eq!(fs.inode(ROOT_INO).chain, [2]);
    assert_eq!(fs.chain_of(&["LOST.DIR"]).unwrap(), [3]);
    assert_eq!(fs.layout.cluster_bytes(), 4096);
}

#[test]
fn sequential_writes_take_the_next_clusters_and_dirty_both_fats() {
    let mut cache = PageCache::new(10_000);
    let mut fs = fs("", &mut cache);
    let f = fs
        .create(ROOT_INO, "log", Kind::File, 1, &mut cache, 10)
        .unwrap();
    for i in 0..4 {
        fs.write_end(f, i * 4096, 4096, &mut cache, 20 + i).unwrap();
    }
    assert_eq!(fs.inode(f).chain, [4, 5, 6, 7]);
    assert_eq!(fs.fat.chain(4), [4, 5, 6, 7]);
    let l = *fs.layout();
    let fat0 = Layout::page_of(l.fat_entry_sector(0, 4));
    let fat1 = Layout::page_of(l.fat_entry_sector(1, 4));
    assert!(cache.is_dirty(fs.bdev, fat0) && cache.is_dirty(fs.bdev, fat1));
    assert_eq!(fs.inode(f).dirty, Dirty::Datasync);
    let mut runs = Vec::new();
    fs.map_pages(fs.inode(f).mapping, 0, 4, &mut runs);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].sector, Some(l.cluster_sector(4)));
}

#[test]
fn dirsync_writes_the_new_entry_at_once_and_fsync_the_fat_and_dirent() {
    let mut cache = PageCache::new(10_000);
    let mut fs = fs("", &mut cache);
    fs.create(ROOT_INO, "a", Kind::File, 1, &mut cache, 10)
        .unwrap();
    let root_page = Layout::page_of(fs.layout.cluster_sector(2));
    fs.sync_pages.dedup();
    assert_eq!(
        fs.sync_pages,
        [root_page],
        "slots and nothing else: the root has no entry"
    );
    fs.sync_pages.clear();
    let f = fs.lookup(&["a"]).unwrap();
    fs.write_end(f, 0, 100, &mut cache, 20).unwrap();
    let pages = fs.fsync_pages(f, true);
    let fat0 = Layout::page_of(fs.layout.fat_entry_sector(0, 4));
    let fat1 = Layout::page_of(fs.layout.fat_entry_sector(1, 4));
    assert_eq!(pages, [fat0, fat1, root_page]);
    // overwriting in place changes mtime only: fdatasync writes no dirent
    fs.write_end(f, 0, 100, &mut cache, 30_000_000).unwrap();
    assert!(fs.fsync_pages(f, true).is_empty());
    assert_eq!(fs.fsync_pages(f, false), [root_page]);
}

#[test]
fn truncate_and_unlink_free_clusters_for_reuse_after_the_hint() {
    let mut cache = PageCache::new(10_000);
    let mut fs = fs("", &mut cache);
    let f = fs
        .create(ROOT_INO, "a", Kind::File, 1, &mut cache, 10)
        .unwrap();
    fs.write_end(f, 0, 3 * 4096, &mut cache, 20).unwrap();
    let free = fs.fat.free_clusters();
    fs.truncate_to(f, 4096, &mut cache, 30).unwrap();
    assert_eq!(fs.inode(f).chain, [4]);
    assert_eq!(fs.fat.free_clusters(), free + 2);
    fs.unlink_entry(ROOT_INO, "a", &mut cache, 40).unwrap();
    assert_eq!(fs.fat.free_clusters(), free + 3);
    assert!(fs.lookup(&["a"]).is_err());
    let g = fs
        .create(ROOT_INO, "b", Kind::File, 1, &mut cache, 50)
        .unwrap();
    fs.write_end(g, 0, 4096, &mut cache, 60).unwrap();
    assert_eq!(fs.inode(g).chain, [7], "next-free scan continues after 6");
}

#[test]
fn a_write_past_the_end_fills_the_gap_with_clusters() {
    let mut cache = PageCache::new(10_000);
    let mut fs = fs("cluster_kib = 32", &mut cache);
    let f = fs
        .create(ROOT_INO, "a", Kind::File, 1, &mut cache, 10)
        .unwrap();
    fs.write_end(f, 100_000, 10, &mut cache, 20).unwrap();
    assert_eq!(
        fs.inode(f).chain.len(),
        4,
        "100,010 bytes in 32 KiB clusters"
    );
    let m = fs.inode(f).mapping;
    assert!(cache.is_dirty(m, 0), "the gap is zero filled");
}

mod props {
    use super::*;
    use proptest::prelude::*;
    use proptest::{collection, sample};

    /// One namespace or data operation on file `f % 4`.
    #[derive(Clone, Debug)]
    enum Op {
        Write(u8, u32, u32),
        Truncate(u8, u32),
        Unlink(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (any::<u8>(), 0u32..200_000, 1u32..50_000).prop_map(|(f, p, l)| Op::Write(f, p, l)),
            1 => (any::<u8>(), 0u32..200_000).prop_map(|(f, l)| Op::Truncate(f, l)),
            1 => any::<u8>().prop_map(Op::Unlink),
        ]
    }

    /// Every live inode's chain is the FAT's chain from its first
    /// cluster, no cluster belongs to two chains, the free count is the
    /// rest, and a file holds exactly the clusters its size needs.
    fn check(fs: &Vfat) {
        let mut seen = std::collections::BTreeSet::new();
        for i in fs.inodes.values() {
            if let Some(&first) = i.chain.first() {
                assert_eq!(fs.fat.chain(first), i.chain);
            }
            for &c in &i.chain {
                assert!(seen.insert(c), "cluster {c} in two chains");
            }
            if i.kind == Kind::File {
                let cb = fs.layout.cluster_bytes();
                assert_eq!(i.chain.len() as u64, i.size.div_ceil(cb), "size {}", i.size);
            }
        }
        assert_eq!(
            fs.fat.free_clusters() + seen.len() as u64,
            fs.layout.clusters
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn clusters_never_overlap_and_chains_match_sizes(
            kib in sample::select(vec![4u32, 8, 32]),
            ops in collection::vec(op(), 1..40),
        ) {
            let mut cache = PageCache::new(100_000);
            let mut fs = fs(&format!("cluster_kib = {kib}"), &mut cache);
            let names = ["a", "b", "c", "d"];
            for (n, o) in ops.iter().enumerate() {
                let now = 1_000_000 * n as u64;
                let name = match *o {
                    Op::Write(f, ..) | Op::Truncate(f, _) | Op::Unlink(f) => names[f as usize % 4],
                };
                let ino = match fs.lookup(&[name]) {
                    Ok(i) => i,
                    Err(_) => fs.create(ROOT_INO, name, Kind::File, 1, &mut cache, now).unwrap(),
                };
                match *o {
                    Op::Write(_, p, l) => fs.write_end(ino, p as u64, l as u64, &mut cache, now).unwrap(),
                    Op::Truncate(_, l) => fs.truncate_to(ino, l as u64, &mut cache, now).unwrap(),
                    Op::Unlink(_) => fs.unlink_entry(ROOT_INO, name, &mut cache, now).unwrap(),
                }
                check(&fs);
            }
        }
    }
}
