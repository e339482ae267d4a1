use super::*;
use crate::device::config::LogAssociativity;
use crate::device::ftl::block_manager::tests::geo;

/// 2 dies × 2 planes × 16 superblocks × 8 pages × 8 KiB: 64 LPNs per
/// logical block.
fn tiny(policy: VictimPolicy, static_wl: bool) -> HybridMapping {
    tiny_with(policy, static_wl, LogAssociativity::Full, None)
}

/// As [`tiny`], with log associativity `k` and incremental merging of
/// `budget` stripe pages per host stripe page.
fn tiny_with(
    policy: VictimPolicy,
    static_wl: bool,
    k: LogAssociativity,
    budget: Option<u32>,
) -> HybridMapping {
    HybridMapping::new(
        geo(16, 8),
        &FtlConfig {
            mapping: MappingScheme::Hybrid,
            over_provisioning: 0.3,
            atomic_write: false,
            atomic_commit_map_pages: 1,
            hybrid: Some(crate::device::config::HybridConfig {
                random_log_blocks: 2,
                sequential_log_blocks: 1,
                log_associativity: k,
            }),
            dftl: None,
        },
        &GcConfig {
            policy,
            start_below_free_blocks_per_die: 4,
            stop_at_free_blocks_per_die: 6,
            background: false,
            bkops_target_free_blocks_per_die: None,
            copy_budget_pages: budget,
            idle_gc_after_ms: None,
            pause_bound_ms: None,
            waf_bound: None,
        },
        &WearLevelingConfig {
            dynamic: true,
            static_wl,
            static_threshold_erases: Some(4),
        },
    )
}

struct Host {
    ver: u32,
    expected: Vec<u32>,
    ops: Vec<NandOp>,
}

impl Host {
    fn new(f: &HybridMapping) -> Host {
        Host {
            ver: 0,
            expected: vec![0; f.user_lpns() as usize],
            ops: Vec::new(),
        }
    }
    fn put(&mut self, f: &mut HybridMapping, lpns: &[u32]) -> Placement {
        let e: Vec<_> = lpns
            .iter()
            .map(|&l| {
                self.ver += 1;
                self.expected[l as usize] = self.ver;
                (l, self.ver)
            })
            .collect();
        self.ops.clear();
        f.write(&e, &mut self.ops)
    }
}

#[test]
fn a_sequentially_rewritten_logical_block_is_switch_merged_for_one_erase() {
    let mut f = tiny(VictimPolicy::Fifo, false);
    assert_eq!((f.user_lpns(), f.unit_slots), (11 * 64, 64));
    let mut h = Host::new(&f);
    for pass in 0..2 {
        for base in (0..64).step_by(4) {
            h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
        }
        assert_eq!(f.stats().merges_switch, pass + 1);
    }
    let s = f.stats();
    assert_eq!(
        (s.merges_partial, s.merges_full, s.gc_slots_moved),
        (0, 0, 0)
    );
    // The second switch erased the first data block (2 dies × 1 stripe).
    assert_eq!(s.nand_erases, 2);
    f.check(&[], &h.expected).unwrap();
    // Dies alternate position by position.
    assert_eq!(h.put(&mut f, &[64, 65, 66, 67]).die, 0);
    assert_eq!(h.put(&mut f, &[68, 69, 70, 71]).die, 1);
}

#[test]
fn an_interrupted_sequential_log_is_partial_merged_and_a_reordered_one_fully() {
    let mut f = tiny(VictimPolicy::Fifo, false);
    let mut h = Host::new(&f);
    for base in (0..64).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    // Half of logical block 0 again, then a new sequential stream.
    for base in (0..32).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    h.put(&mut f, &[64, 65, 66, 67]);
    let s = f.stats();
    assert_eq!(s.merges_partial, 1);
    assert_eq!(s.gc_slots_moved, 32, "the second half copied in");
    // Logical block 1 sequential, then offset 2 rewritten at random.
    for base in (68..96).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    h.put(&mut f, &[66]);
    h.put(&mut f, &[128, 129, 130, 131]);
    assert_eq!(f.stats().merges_full, 1);
    f.check(&[], &h.expected).unwrap();
}

#[test]
fn random_overwrites_fill_the_log_pool_and_force_full_merges_with_integrity() {
    for policy in [
        VictimPolicy::Greedy,
        VictimPolicy::CostBenefit,
        VictimPolicy::Fifo,
    ] {
        let mut f = tiny(policy, false);
        let mut h = Host::new(&f);
        let n = f.user_lpns();
        for base in (0..n).step_by(4) {
            h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
        }
        let mut x: u64 = 99;
        let mut reclaimed = false;
        for _ in 0..3000 {
            let mut l = [0u32; 2];
            for v in &mut l {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = (x % n as u64) as u32;
            }
            if l[0] == l[1] {
                continue;
            }
            let p = h.put(&mut f, &l);
            if p.reclaim_ops > 0 {
                reclaimed = true;
                assert!(
                    matches!(h.ops[p.reclaim_ops], NandOp::Program { die, .. } if die == p.die)
                );
            }
        }
        f.check(&[], &h.expected).unwrap();
        let s = f.stats();
        assert!(reclaimed && s.merges_full > 0, "{policy:?}: {s:?}");
        // Each reclaimed random log block cost a full merge per
        // logical block it touched: far more copies than host data.
        assert!(s.gc_slots_moved > 3 * 2 * 3000 / 2, "{policy:?}: {s:?}");
    }
}

#[test]
fn trim_unmaps_and_merges_skip_trimmed_pages() {
    let mut f = tiny(VictimPolicy::Fifo, false);
    let mut h = Host::new(&f);
    for base in (0..64).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    f.trim(5);
    h.expected[5] = 0;
    assert!(f.lookup(5).is_none());
    f.check(&[], &h.expected).unwrap();
}

/// Writes every logical block sequentially (switch merges), then
/// `n` random 2-LPN writes (xorshift from `seed`) into the random log
/// blocks.
fn filled_then_random(f: &mut HybridMapping, h: &mut Host, n: u32, seed: u64) {
    let lpns = f.user_lpns();
    for base in (0..lpns).step_by(4) {
        h.put(f, &[base, base + 1, base + 2, base + 3]);
    }
    let mut x = seed;
    for _ in 0..n {
        let mut l = [0u32; 2];
        for v in &mut l {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = (x % lpns as u64) as u32;
        }
        if l[0] != l[1] {
            h.put(f, &l);
        }
    }
}

#[test]
fn erase_frees_data_and_log_blocks_left_without_a_valid_page() {
    let mut f = tiny(VictimPolicy::Fifo, false);
    let mut h = Host::new(&f);
    for base in (0..f.user_lpns()).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    // Logical block 1 gets newer copies of two pages in a random log
    // block; logical block 3 stays whole in its data block.
    h.put(&mut f, &[64 + 5, 64 + 9]);
    let (d1, d3) = (f.data[1], f.data[3]);
    let r = f.rand[0].unit;
    let ops_before = h.ops.len();
    // Nothing is empty yet.
    let mut ops = Vec::new();
    assert_eq!(f.erase_unmapped(&mut ops), Some(0));
    assert!(ops.is_empty() && ops_before > 0);
    // Trim every LPN of logical blocks 1 and 3 (ERASE unmaps the erase
    // groups first): their data blocks and the random log block holding
    // only block 1's pages have no valid page left.
    for lpn in (64..128).chain(192..256) {
        f.trim(lpn);
        h.expected[lpn as usize] = 0;
    }
    let erases = f.stats().nand_erases;
    let wear = (f.wear(d1), f.wear(d3), f.wear(r));
    assert_eq!(f.erase_unmapped(&mut ops), Some(3));
    assert_eq!(
        f.stats().nand_erases - erases,
        3 * 2,
        "3 superblocks × 2 dies"
    );
    assert_eq!(
        (f.wear(d1), f.wear(d3), f.wear(r)),
        (wear.0 + 1, wear.1 + 1, wear.2 + 1)
    );
    assert!(ops.iter().all(|o| matches!(o, NandOp::Erase { .. })));
    assert_eq!((f.data[1], f.data[3]), (UNMAPPED, UNMAPPED));
    assert!(f.rand.is_empty() && f.free.contains(&r));
    assert_eq!(f.invalid_slots(), Some(0));
    f.check(&[], &h.expected).unwrap();
    // The device goes on: a random write opens a new log block, a
    // sequential one rebuilds logical block 1.
    h.put(&mut f, &[200, 3]);
    for base in (64..128).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    f.check(&[], &h.expected).unwrap();
}

#[test]
fn sanitize_merges_every_log_block_and_leaves_no_invalid_page() {
    for policy in [VictimPolicy::Fifo, VictimPolicy::Greedy] {
        let mut f = tiny(policy, false);
        let mut h = Host::new(&f);
        filled_then_random(&mut f, &mut h, 100, 5);
        // Half a sequential rewrite of logical block 2 (a sequential
        // log block in progress), then scattered trims in place.
        for base in (128..160).step_by(4) {
            h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
        }
        for lpn in (300..f.user_lpns()).step_by(7) {
            f.trim(lpn);
            h.expected[lpn as usize] = 0;
        }
        assert!(f.seq.is_some() && !f.rand.is_empty());
        assert!(f.invalid_slots().unwrap() > 0);
        let before = f.stats();
        let mut ops = Vec::new();
        let n = f.sanitize(&mut ops).unwrap();
        let s = f.stats();
        assert!(n > 0 && s.nand_erases > before.nand_erases, "{policy:?}");
        assert_eq!(s.merges_partial, before.merges_partial + 1, "{policy:?}");
        assert!(s.merges_full > before.merges_full, "{policy:?}");
        assert_eq!(f.invalid_slots(), Some(0), "{policy:?}");
        assert!(f.seq.is_none() && f.rand.is_empty(), "{policy:?}");
        // Every logical block is whole in its data block.
        for lpn in 0..f.user_lpns() {
            if let Some(slot) = f.lookup(lpn) {
                assert_eq!(f.role[f.unit_of(slot) as usize], Role::Data(lpn / 64));
            }
        }
        f.check(&[], &h.expected).unwrap();
        ops.clear();
        assert_eq!(f.sanitize(&mut ops), Some(0), "{policy:?}");
        assert!(ops.is_empty(), "{policy:?}");
        // The device goes on.
        filled_then_random(&mut f, &mut h, 200, 11);
        f.check(&[], &h.expected).unwrap();
    }
}

#[test]
fn background_merges_empty_the_full_random_log_blocks_ahead_of_host_writes() {
    let mut f = tiny(VictimPolicy::Fifo, false);
    let mut h = Host::new(&f);
    // Fill the random pool (2 log blocks of 16 positions) without a
    // reclaim: 24 random stripe pages.
    for base in (0..f.user_lpns()).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    for k in 0..24 {
        h.put(&mut f, &[(k * 29) % 700, 701]);
    }
    assert_eq!(f.stats().merges_full, 0);
    // 16 superblocks − 11 logical blocks = 5 spare, 1 reserved for the
    // sequential log block, 2 holding random log blocks (one full): 2
    // free, × 2 planes.
    assert_eq!((f.rand.len(), f.seq.is_none()), (2, true));
    assert_eq!(f.min_free_blocks_per_die(), Some(4));
    // A target of 3 spare superblocks (at most one random log block
    // open): the full log block is reclaimed.
    let target = 3 * f.geo.planes;
    let mut ops = Vec::new();
    let mut steps = 0;
    while f.background_collect(target, &mut ops).is_some() {
        steps += 1;
        f.check(&[], &h.expected).unwrap();
    }
    assert!(steps > 0 && f.stats().merges_full > 0);
    assert_eq!(f.min_free_blocks_per_die(), Some(target));
    assert!(ops.iter().any(|o| matches!(o, NandOp::Erase { .. })));
    // At the target, nothing more is done.
    ops.clear();
    assert_eq!(f.background_collect(target, &mut ops), None);
    assert!(ops.is_empty());
    // The host's next random writes fill the emptied room without a
    // merge.
    let merges = f.stats().merges_full;
    for k in 0..20 {
        let p = h.put(&mut f, &[(k * 31) % 700, 702]);
        assert_eq!(p.reclaim_ops, 0);
    }
    assert_eq!(f.stats().merges_full, merges);
    f.check(&[], &h.expected).unwrap();
}

/// Cold logical blocks written once, a hot one rewritten; returns the
/// erase-count spread and the stats.
fn hot_cold(static_wl: bool) -> (u32, FtlStats) {
    let mut f = tiny(VictimPolicy::Fifo, static_wl);
    let mut h = Host::new(&f);
    let n = f.user_lpns();
    for base in (0..n).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    for _ in 0..200 {
        for base in (0..64).step_by(4) {
            h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
        }
        h.put(&mut f, &[3]);
        h.put(&mut f, &[7]);
    }
    f.check(&[], &h.expected).unwrap();
    let ec = f.erase_counts();
    (
        ec.iter().max().unwrap() - ec.iter().min().unwrap(),
        f.stats(),
    )
}

#[test]
fn static_wear_leveling_moves_cold_logical_blocks_and_narrows_the_spread() {
    let (without, s) = hot_cold(false);
    assert_eq!(s.wl_migrations, 0);
    let (with, s) = hot_cold(true);
    assert!(s.wl_migrations > 0 && s.wl_slots_moved > 0, "{s:?}");
    assert!(with * 2 < without, "spread with {with}, without {without}");
}

/// Fills every logical block sequentially, then writes `n` stripe pages of
/// `per` random LPNs each (xorshift from `seed`), checking the mapping
/// every `check_every` writes; calls `each` after every write.
fn random_writes(
    f: &mut HybridMapping,
    h: &mut Host,
    n: u32,
    per: usize,
    seed: u64,
    mut each: impl FnMut(&mut HybridMapping, &Host, Placement),
) {
    let lpns = f.user_lpns();
    for base in (0..lpns).step_by(4) {
        h.put(f, &[base, base + 1, base + 2, base + 3]);
    }
    let mut x = seed;
    let mut l = Vec::with_capacity(per);
    for _ in 0..n {
        l.clear();
        while l.len() < per {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % lpns as u64) as u32;
            if !l.contains(&v) {
                l.push(v);
            }
        }
        let p = h.put(f, &l);
        each(f, h, p);
    }
}

#[test]
fn with_k_a_random_log_block_holds_at_most_k_logical_blocks_and_its_reclaim_merges_at_most_k() {
    for k in 1..=4u32 {
        for seed in [3u64, 77, 1234] {
            let mut f = tiny_with(
                VictimPolicy::Greedy,
                false,
                LogAssociativity::Blocks(k),
                None,
            );
            let mut h = Host::new(&f);
            random_writes(&mut f, &mut h, 400, 3, seed, |f, h, _| {
                // check() verifies each log block's logical blocks ≤ K.
                f.check(&[], &h.expected).unwrap();
            });
            assert!(f.stats().merges_full > 0, "K = {k}: the pool turned over");
            // Reclaim every log block of the pool: each costs ≤ K merges.
            let mut ops = Vec::new();
            while !f.rand.is_empty() {
                let before = f.stats().merges_full;
                let held = f.log_associativity(f.rand[0].unit) as u64;
                f.reclaim_rand(0, &mut ops);
                let merged = f.stats().merges_full - before;
                assert!(merged <= u64::from(k), "K = {k}: {merged} merges");
                assert_eq!(merged, held, "one full merge per logical block held");
                f.check(&[], &h.expected).unwrap();
            }
        }
    }
}

/// Write amplification of `n` uniformly random 1-LPN writes after a
/// sequential fill, counted over the random writes only.
fn random_waf(k: LogAssociativity, seed: u64) -> f64 {
    let mut f = tiny_with(VictimPolicy::Fifo, false, k, None);
    let mut h = Host::new(&f);
    let lpns = f.user_lpns();
    for base in (0..lpns).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    let before = f.stats().programmed_slots;
    let n = 3000;
    let mut x = seed;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        h.put(&mut f, &[(x % lpns as u64) as u32]);
    }
    f.check(&[], &h.expected).unwrap();
    (f.stats().programmed_slots - before) as f64 / f64::from(n)
}

#[test]
fn under_uniform_random_writes_lower_associativity_bounds_the_merge_not_the_waf() {
    // FAST's argument (Lee et al., ACM TECS 2007) against block
    // association: a fully associative log block is filled before it is
    // merged, so under writes spread uniformly over the device full
    // associativity uses the log space best; KAST trades that for a
    // bounded merge (Cho et al., DATE 2009). Lowering K therefore does
    // not lower the average write amplification here.
    for seed in [5u64, 99] {
        let full = random_waf(LogAssociativity::Full, seed);
        let mut last = full;
        for k in [8u32, 4, 2, 1] {
            let w = random_waf(LogAssociativity::Blocks(k), seed);
            assert!(w >= full * 0.95, "K = {k}: WAF {w} vs full {full}");
            assert!(w >= last * 0.9, "K = {k}: WAF {w} vs the larger K's {last}");
            last = w;
        }
    }
}

#[test]
fn a_logical_block_keeps_writing_to_its_log_block_with_k_1() {
    // BAST-like: two logical blocks rewritten alternately share no log
    // block and need no merge until their log blocks fill.
    let mut f = tiny_with(VictimPolicy::Fifo, false, LogAssociativity::Blocks(1), None);
    let mut h = Host::new(&f);
    for base in (0..f.user_lpns()).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    let merges = f.stats().merges_full;
    for i in 0..14 {
        h.put(&mut f, &[3 + i % 5]);
        h.put(&mut f, &[64 + 7 + i % 3]);
    }
    assert_eq!(f.stats().merges_full, merges, "no merge: {:?}", f.stats());
    assert_eq!(f.rand.len(), 2);
    for r in &f.rand {
        assert_eq!(f.log_associativity(r.unit), 1);
    }
    // A stripe page mixing the two is split, one program per log block.
    let programs = f.stats().nand_programs;
    h.put(&mut f, &[4, 64 + 8]);
    assert_eq!(f.stats().nand_programs, programs + 2);
    f.check(&[], &h.expected).unwrap();
}

#[test]
fn incremental_merges_copy_at_most_the_budget_before_each_host_page() {
    for k in [LogAssociativity::Full, LogAssociativity::Blocks(2)] {
        for budget in [1u32, 3] {
            let mut f = tiny_with(VictimPolicy::Greedy, false, k, Some(budget));
            let mut h = Host::new(&f);
            let mut stepped = 0;
            random_writes(&mut f, &mut h, 600, 1, 17, |f, h, p| {
                let copies = h.ops[..p.reclaim_ops]
                    .iter()
                    .filter(|o| matches!(o, NandOp::Program { .. }))
                    .count() as u32;
                if f.emergencies == 0 {
                    assert!(copies <= budget, "{k:?}/{budget}: {copies} copies");
                }
                stepped += u32::from(copies > 0);
                f.check(&[], &h.expected).unwrap();
            });
            assert!(stepped > 0, "{k:?}/{budget}: merges ran in steps");
            assert!(f.stats().merges_full > 0);
            let mut ops = Vec::new();
            f.settle_gc(&mut ops);
            assert!(f.job.is_none() && f.reclaiming.is_none());
            f.check(&[], &h.expected).unwrap();
        }
    }
}

#[test]
fn incremental_sequential_merges_keep_the_newest_data_under_mixed_writes() {
    let mut f = tiny_with(
        VictimPolicy::Fifo,
        false,
        LogAssociativity::Blocks(2),
        Some(2),
    );
    let mut h = Host::new(&f);
    let n = f.user_lpns();
    for base in (0..n).step_by(4) {
        h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
    }
    let mut x: u64 = 42;
    for round in 0..40u32 {
        // Half of a logical block sequentially (a partial merge when the
        // next stream starts), in odd rounds an out-of-order rewrite of it
        // (a full merge instead), and scattered random pages.
        let lbn = round % (n / 64);
        for base in (lbn * 64..lbn * 64 + 32).step_by(4) {
            h.put(&mut f, &[base, base + 1, base + 2, base + 3]);
            f.check(&[], &h.expected).unwrap();
        }
        if round % 2 == 1 {
            h.put(&mut f, &[lbn * 64 + 1]);
        }
        for _ in 0..6 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            h.put(&mut f, &[(x % n as u64) as u32]);
            f.check(&[], &h.expected).unwrap();
        }
    }
    let s = f.stats();
    assert!(s.merges_partial > 0 && s.merges_full > 0, "{s:?}");
    let mut ops = Vec::new();
    f.settle_gc(&mut ops);
    f.check(&[], &h.expected).unwrap();
}

#[test]
fn idle_time_merging_reclaims_the_full_log_blocks_of_a_full_pool_ahead_of_the_host() {
    let mut f = tiny_with(
        VictimPolicy::Fifo,
        false,
        LogAssociativity::Blocks(2),
        Some(2),
    );
    let mut h = Host::new(&f);
    random_writes(&mut f, &mut h, 0, 1, 8, |_, _, _| {});
    // Logical blocks 1-3 rewritten a stripe page at a time, last offset
    // first: random log blocks filled to the last page.
    for lbn in 1..4 {
        for k in (0..16).rev() {
            let b = lbn * 64 + k * 4;
            h.put(&mut f, &[b, b + 1, b + 2, b + 3]);
        }
    }
    let positions = f.positions();
    assert!(f.rand.iter().any(|r| r.next == positions));
    let mut ops = Vec::new();
    let mut steps = 0;
    while f.idle_collect(0, 2, &mut ops).is_some() {
        steps += 1;
        f.check(&[], &h.expected).unwrap();
        assert!(steps < 10_000);
    }
    assert!(steps > 0);
    assert!(f.job.is_none() && f.reclaiming.is_none());
    assert!(
        (f.rand.len() as u32) < f.rand_max || f.rand.iter().all(|r| r.next < positions),
        "a free place in the pool, or only log blocks still taking writes"
    );
}

#[test]
fn a_full_pool_of_log_blocks_still_taking_writes_is_not_merged_ahead() {
    let mut f = tiny_with(
        VictimPolicy::Greedy,
        false,
        LogAssociativity::Blocks(1),
        Some(2),
    );
    let mut h = Host::new(&f);
    random_writes(&mut f, &mut h, 0, 1, 8, |_, _, _| {});
    f.reset_stats();
    // Two logical blocks, one random log block each (K = 1): the pool is
    // full, but both log blocks have free pages.
    for round in 0..6u32 {
        for lbn in [1u32, 2] {
            let b = lbn * 64 + 60 - round * 4;
            let p = h.put(&mut f, &[b, b + 1, b + 2, b + 3]);
            assert_eq!(p.reclaim_ops, 0, "round {round}, logical block {lbn}");
        }
    }
    assert_eq!(f.rand.len() as u32, f.rand_max);
    assert!(f.reclaiming.is_none() && f.job.is_none());
    assert_eq!(f.stats().merges_full, 0);
    f.check(&[], &h.expected).unwrap();
}
