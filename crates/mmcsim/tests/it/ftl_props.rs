//! Property tests of the eMMC device model's FTL on a tiny geometry (few
//! blocks, so GC and wear leveling run constantly): after any sequence of
//! writes, trims, reads and flushes, every LPN reads its newest version,
//! every valid slot is mapped exactly once, valid + invalid + free slots are
//! conserved, pages are programmed in order (the NAND model panics
//! otherwise), and dynamic wear leveling keeps erase counts together; and at
//! the smallest over-provisioning the profile validation accepts, GC never
//! runs out of victims. The same command mixes run on the hybrid (FAST
//! log-block) and DFTL mappings: every LPN still reads its newest version,
//! and DFTL's translation (cached entry or translation page) always names
//! the slot holding it.

use mmcsim::device::host_interface::{legacy_commands, FLUSH_CACHE, WRITE_MULTIPLE_POLLED};
use mmcsim::device::{DeviceCommand, DeviceConfig, Emmc, Precondition};
use mmcsim::Op;
use proptest::prelude::*;

/// 1 channel × 2 dies × 2 planes × 12 blocks × 4 pages × 8 KiB = 1.5 MiB raw.
const TINY: &str = r#"
name = "tiny"
[bus]
mode = "DDR52"
clock_mhz = 52.0
width_bits = 8
ddr = true
cmd_response_bits = 136
status_poll_after_write = true
[controller]
fw_cmd_us = 30.0
[nand]
channels = 1
dies_per_channel = 2
planes_per_die = 2
blocks_per_plane = 12
pages_per_block = 4
page_kib = 8
t_r_us = 75.0
t_prog_lower_us = 850.0
t_prog_upper_us = 2300.0
t_bers_us = 3500.0
channel_mt_per_s = 200.0
[ftl]
mapping = "page"
over_provisioning = 0.4
[gc]
policy = "greedy"
start_below_free_blocks_per_die = 4
stop_at_free_blocks_per_die = 4
[wear_leveling]
dynamic = true
[map_cache]
entries = 2
prefetch_map_pages = 1
[read_buffer]
pages = 4
prefetch_kib = 16
[write_buffer]
size_kib = 32
volatile = true
"#;

#[derive(Clone, Debug)]
enum Step {
    Write { lpn: u32, n: u32, fua: bool },
    Read { lpn: u32, n: u32 },
    Trim { lpn: u32, n: u32 },
    Flush,
}

fn step(lpns: u32) -> impl Strategy<Value = Step> {
    // Half of the addresses fall in a hot eighth of the space, so GC finds
    // victims of mixed validity.
    let lpn = prop_oneof![0..lpns, 0..lpns / 8];
    prop_oneof![
        6 => (lpn.clone(), 1..8u32, any::<bool>()).prop_map(|(lpn, n, fua)| Step::Write { lpn, n, fua }),
        2 => (lpn.clone(), 1..8u32).prop_map(|(lpn, n)| Step::Read { lpn, n }),
        1 => (lpn, 1..16u32).prop_map(|(lpn, n)| Step::Trim { lpn, n }),
        1 => Just(Step::Flush),
    ]
}

fn command(s: &Step) -> DeviceCommand {
    let (op, lpn, n, fua) = match *s {
        Step::Write { lpn, n, fua } => (Op::Write, lpn, n, fua),
        Step::Read { lpn, n } => (Op::Read, lpn, n, false),
        Step::Trim { lpn, n } => (Op::Discard, lpn, n, false),
        Step::Flush => (Op::Flush, 0, 0, false),
    };
    DeviceCommand {
        op,
        sector: lpn as u64 * 8,
        sectors: n * 8,
        fua,
        commands: legacy_commands(op, true),
    }
}

/// TINY with 64 blocks of 16 pages per plane and the smallest
/// over-provisioning the profile validation accepts (about 0.078: GC must
/// always find a victim with a whole stripe page invalid).
fn lean() -> Emmc {
    let text = TINY
        .replace("blocks_per_plane = 12", "blocks_per_plane = 64")
        .replace("pages_per_block = 4", "pages_per_block = 16");
    let accepted = (700..800).find_map(|permille_tenths| {
        let op = permille_tenths as f64 / 10_000.0;
        let t = text.replace(
            "over_provisioning = 0.4",
            &format!("over_provisioning = {op}"),
        );
        DeviceConfig::from_toml_str(&t, "lean").ok()
    });
    let cfg = accepted.expect("a minimum over-provisioning below 0.08");
    assert!(
        cfg.ftl.over_provisioning > 0.075,
        "{}",
        cfg.ftl.over_provisioning
    );
    Emmc::new(&cfg).unwrap()
}

/// Executes `steps` back to back, checking time order and integrity after
/// each; `label` names the mapping in a failure.
fn run_checked(d: &mut Emmc, steps: &[Step], label: &str) -> Result<(), TestCaseError> {
    let mut now = 0;
    for (i, s) in steps.iter().enumerate() {
        let end = d.execute(now, &command(s));
        prop_assert!(end >= now, "time went backwards at step {}", i);
        now = end;
        if let Err(e) = d.check_integrity() {
            return Err(TestCaseError::fail(format!("{label} step {i} {s:?}: {e}")));
        }
    }
    Ok(())
}

fn tiny() -> Emmc {
    Emmc::new(&DeviceConfig::from_toml_str(TINY, "tiny").unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn ftl_keeps_integrity_under_any_command_mix(
        steps in proptest::collection::vec(step(230), 1..400),
        precondition in any::<bool>(),
    ) {
        let mut d = tiny();
        let lpns = (d.capacity_sectors() / 8) as u32;
        prop_assert_eq!(lpns, 230);
        if precondition {
            d.precondition(&Precondition { fill_fraction: 0.9, steady_state: true, max_overwrite_factor: 3.0 }, 1);
            prop_assert!(d.check_integrity().is_ok());
        }
        run_checked(&mut d, &steps, "page")?;
        let st = d.stats();
        // Below 1 is possible: buffered data may be trimmed before programming.
        prop_assert!(st.waf.is_finite() && st.waf >= 0.0, "waf {}", st.waf);
        let ec = st.erase_count;
        prop_assert!(
            (ec.max - ec.min) as f64 <= 2.0 * ec.mean + 4.0,
            "erase counts spread {}..{} around mean {}", ec.min, ec.max, ec.mean
        );
    }

    #[test]
    fn sustained_random_overwrites_keep_integrity_and_wear_even(seed in 0u64..1000) {
        let mut d = tiny();
        d.precondition(&Precondition { fill_fraction: 1.0, steady_state: true, max_overwrite_factor: 20.0 }, seed);
        prop_assert!(d.check_integrity().is_ok());
        let mut now = 0;
        let lpns = d.capacity_sectors() / 8;
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = (x >> 33) % lpns;
            now = d.execute(now, &DeviceCommand { op: Op::Write, sector: lpn * 8, sectors: 8, fua: false, commands: WRITE_MULTIPLE_POLLED });
        }
        now = d.execute(now, &DeviceCommand { op: Op::Flush, sector: 0, sectors: 0, fua: false, commands: FLUSH_CACHE });
        prop_assert!(now > 0);
        prop_assert!(d.check_integrity().is_ok());
        let st = d.stats();
        prop_assert!(st.gc_runs > 0);
        let ec = st.erase_count;
        prop_assert!(ec.mean > 10.0);
        // Dynamic WL (least-worn free stripe) with only 24 stripes cannot
        // level tightly; it must keep every block cycling, within about the
        // mean of each other.
        prop_assert!((ec.max - ec.min) as f64 <= ec.mean + 4.0, "{:?}", ec);
        prop_assert!(ec.min > 0, "{:?}", ec);
    }
}

proptest! {
    // Each case preconditions a 4 MiB array at 4x overwrites: fewer cases.
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_smallest_accepted_over_provisioning_never_leaves_gc_without_a_victim(seed in 0u64..1000) {
        let mut d = lean();
        d.precondition(&Precondition { fill_fraction: 1.0, steady_state: true, max_overwrite_factor: 4.0 }, seed);
        let lpns = d.capacity_sectors() / 8;
        let mut now = 0;
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(7);
        for _ in 0..4000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = (x >> 33) % lpns;
            now = d.execute(now, &DeviceCommand { op: Op::Write, sector: lpn * 8, sectors: 8, fua: false, commands: WRITE_MULTIPLE_POLLED });
        }
        prop_assert!(d.stats().gc_runs > 0);
        prop_assert!(d.check_integrity().is_ok());
    }
}

/// TINY with another mapping scheme: hybrid with 2 random log blocks (12
/// superblocks, 7 logical blocks of 32 LPNs), or DFTL with an 8-entry
/// cached mapping table.
fn tiny_with(scheme: &str) -> Emmc {
    let section = match scheme {
        "hybrid" => "mapping = \"hybrid\"\nhybrid = { random_log_blocks = 2 }",
        _ => "mapping = \"dftl\"\ndftl = { cmt_entries = 8 }",
    };
    let text = TINY.replace("mapping = \"page\"", section);
    Emmc::new(&DeviceConfig::from_toml_str(&text, scheme).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hybrid_and_dftl_keep_integrity_under_any_command_mix(
        steps in proptest::collection::vec(step(224), 1..400),
        hybrid in any::<bool>(),
        precondition in any::<bool>(),
    ) {
        let scheme = if hybrid { "hybrid" } else { "dftl" };
        let mut d = tiny_with(scheme);
        let lpns = (d.capacity_sectors() / 8) as u32;
        prop_assert!(lpns >= 224, "{} lpns", lpns);
        if precondition {
            d.precondition(&Precondition { fill_fraction: 0.9, steady_state: true, max_overwrite_factor: 3.0 }, 1);
            if let Err(e) = d.check_integrity() {
                return Err(TestCaseError::fail(format!("{scheme} after preconditioning: {e}")));
            }
        }
        run_checked(&mut d, &steps, scheme)?;
    }
}
