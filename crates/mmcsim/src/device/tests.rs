//! Device-level behaviour tests on the generic profile and small variants.

use super::*;
use crate::engine::component_rng;
use crate::types::Op;
use host_interface::{legacy_commands, queued_commands, Bus};
use rand::seq::SliceRandom;
use rand::Rng;

const GENERIC: &str = include_str!("../../../../configs/devices/generic-emmc.toml");

fn generic() -> DeviceConfig {
    DeviceConfig::from_toml_str(GENERIC, "generic-emmc.toml").unwrap()
}

/// The generic profile with a map cache at the low end of the reference's
/// "8–64 entries" (§3): 8 map pages (32 MiB of LBA) against the 128 MiB and
/// 1 GiB working sets below, so the order of accesses decides the hits.
/// The generic profile itself (36 entries) holds 128 MiB: these tests show
/// the mechanism, not the default's numbers.
fn small_map_cache() -> DeviceConfig {
    let mut c = generic();
    c.map_cache.entries = 8;
    c
}

/// The generic profile shrunk to 512 MiB raw (GC tests run faster).
fn small() -> DeviceConfig {
    let mut c = generic();
    c.nand.blocks_per_plane = 128;
    c
}

/// A command as the legacy driver sends it (CMD13 after writes).
fn cmd(op: Op, sector: u64, sectors: u32) -> DeviceCommand {
    DeviceCommand {
        op,
        sector,
        sectors,
        fua: false,
        commands: legacy_commands(op, true),
    }
}

/// A data command queued as a CMDQ task.
fn task(op: Op, sector: u64, sectors: u32) -> DeviceCommand {
    DeviceCommand {
        commands: queued_commands(op).unwrap(),
        ..cmd(op, sector, sectors)
    }
}

/// Issues `c` when the device is idle after `*now`; returns its device time.
fn run(d: &mut Emmc, now: &mut Ns, c: DeviceCommand) -> Ns {
    let end = d.execute(*now, &c);
    let lat = end - *now;
    *now = end;
    lat
}

fn read4k(d: &mut Emmc, now: &mut Ns, lpn: u64) -> Ns {
    run(d, now, cmd(Op::Read, lpn * 8, 8))
}

#[test]
fn profile_parses_and_bad_values_name_the_key() {
    let c = generic();
    assert_eq!(c.raw_bytes(), 8 << 30);
    let bad = GENERIC.replace("page_kib = 8 ", "page_kib = 6 ");
    let e = DeviceConfig::from_toml_str(&bad, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.toml") && e.contains("page_kib") && e.contains("multiple of 4"),
        "{e}"
    );
    let bad = GENERIC.replace("channels = 1", "channels = 0");
    let e = DeviceConfig::from_toml_str(&bad, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("channels") && e.contains("nonzero"), "{e}");
    let bad = GENERIC.replace("[controller]", "[controller]\nfw_cmd_ms = 3");
    let e = DeviceConfig::from_toml_str(&bad, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("fw_cmd_ms"), "{e}");
    let p: Precondition = toml::from_str("fill_fraction = 0.5").unwrap();
    assert_eq!(p.max_overwrite_factor, 2.0);
    assert!(p.steady_state);
}

/// Every count that sizes an allocation is refused above its stated limit
/// (naming the key and the limit) before anything is allocated, and
/// products of the geometry never wrap: a value at the limit validates, or
/// fails on another rule, never by overflow.
#[test]
fn sizing_counts_are_refused_above_their_limits_without_wrapping() {
    type Set = fn(&mut DeviceConfig, u32);
    let cases: [(&str, Set, &str); 9] = [
        (
            "[map_cache] entries",
            |c, v| c.map_cache.entries = v,
            "1048576",
        ),
        (
            "[read_buffer] pages",
            |c, v| c.read_buffer.pages = v,
            "4096",
        ),
        (
            "[read_buffer] prefetch_kib",
            |c, v| c.read_buffer.prefetch_kib = v,
            "65536",
        ),
        (
            "[write_buffer] size_kib",
            |c, v| c.write_buffer.size_kib = v,
            "1048576",
        ),
        (
            "[nand] channels × dies_per_channel",
            |c, v| c.nand.channels = v,
            "1024",
        ),
        (
            "[nand] channels × dies_per_channel",
            |c, v| c.nand.dies_per_channel = v,
            "1024",
        ),
        ("[nand]", |c, v| c.nand.blocks_per_plane = v, "268435456"),
        ("[nand]", |c, v| c.nand.pages_per_block = v, "268435456"),
        (
            "[gc] stop_at_free_blocks_per_die",
            |c, v| c.gc.stop_at_free_blocks_per_die = v,
            "2048",
        ),
    ];
    for (key, set, limit) in cases {
        for v in [u32::MAX, u32::MAX - 3, 1 << 31, 1 << 30] {
            let mut c = generic();
            set(&mut c, v);
            let e = c.validate("x.toml").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("x.toml: {key}:")) && e.contains(limit),
                "{key} = {v}: {e}"
            );
        }
    }
    let mut c = generic();
    c.map_cache.entries = config::MAX_MAP_CACHE_ENTRIES;
    c.read_buffer.pages = config::MAX_READ_BUFFER_PAGES;
    c.read_buffer.prefetch_kib = config::MAX_PREFETCH_KIB;
    c.write_buffer.size_kib = config::MAX_WRITE_BUFFER_KIB;
    c.validate("x.toml").unwrap();
    // Six u32 factors overflow u64: the raw size saturates, never wraps.
    let mut c = generic();
    c.nand.channels = u32::MAX;
    c.nand.dies_per_channel = u32::MAX;
    c.nand.blocks_per_plane = u32::MAX;
    c.nand.pages_per_block = u32::MAX;
    assert_eq!(c.raw_bytes(), u64::MAX);
    let mut c = generic();
    c.ftl.mapping = ftl::MappingScheme::Hybrid;
    c.ftl.hybrid = Some(config::HybridConfig {
        random_log_blocks: u32::MAX,
        sequential_log_blocks: 1,
        log_associativity: config::LogAssociativity::Full,
    });
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(
        e.contains("[ftl.hybrid] random_log_blocks: 4294967295"),
        "{e}"
    );
}

#[test]
fn profile_choices_are_typed_and_serialise_as_their_names() {
    let c = generic();
    assert_eq!(c.ftl.mapping, MappingScheme::Page);
    assert_eq!(c.gc.policy, ftl::VictimPolicy::Greedy);
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        json.contains(r#""mapping":"page""#) && json.contains(r#""policy":"greedy""#),
        "{json}"
    );
    assert!(
        json.contains(r#""wear_leveling":{"dynamic":true}"#),
        "static wear leveling off is not echoed: {json}"
    );
    let cb = GENERIC.replace(r#"policy = "greedy""#, r#"policy = "cost-benefit""#);
    let cb = DeviceConfig::from_toml_str(&cb, "x.toml").unwrap();
    assert_eq!(cb.gc.policy, ftl::VictimPolicy::CostBenefit);
    let on = GENERIC.replace("dynamic = true", "dynamic = true\nstatic = true");
    let on = DeviceConfig::from_toml_str(&on, "x.toml").unwrap();
    assert!(on.wear_leveling.static_wl);
    assert_eq!(on.wear_leveling.static_threshold(), 32);
    assert!(serde_json::to_string(&on)
        .unwrap()
        .contains(r#""static":true"#));
    for scheme in ["hybrid", "dftl"] {
        let t = GENERIC.replace(r#"mapping = "page""#, &format!("mapping = \"{scheme}\""));
        let c = DeviceConfig::from_toml_str(&t, "x.toml").unwrap();
        assert_eq!(c.ftl.mapping.name(), scheme);
        // A section for another scheme is a located error.
        let other = if scheme == "dftl" { "hybrid" } else { "dftl" };
        let t = t.replace("[gc]", &format!("[ftl.{other}]\n\n[gc]"));
        let e = DeviceConfig::from_toml_str(&t, "x.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("x.toml: [ftl.{other}]")) && e.contains("has no effect"),
            "{e}"
        );
    }
    // 1024 superblocks at 7 % OP leave 72 spare: 80 random log blocks do not fit.
    let t = GENERIC.replace(
        r#"mapping = "page""#,
        "mapping = \"hybrid\"\nhybrid = { random_log_blocks = 80 }",
    );
    let e = DeviceConfig::from_toml_str(&t, "x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("[ftl.hybrid] random_log_blocks: 80") && e.contains("72 spare superblocks"),
        "{e}"
    );
    let text = include_str!("../../../../configs/devices/generic-emmc51-cmdq.toml");
    let bad = text.replace("queue_task_commands = 2", "queue_task_commands = 3");
    let e = DeviceConfig::from_toml_str(&bad, "q.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("queue_task_commands") && e.contains("CMD44"),
        "{e}"
    );
}

#[test]
fn the_host_interface_charges_the_commands_the_driver_sends() {
    let c = generic();
    let bus = Bus::new(&c.bus);
    let mut lat = Vec::new();
    for commands in [
        host_interface::WRITE_MULTIPLE,
        host_interface::WRITE_MULTIPLE_POLLED,
    ] {
        let mut d = Emmc::new(&c).unwrap();
        let w = DeviceCommand {
            commands,
            ..cmd(Op::Write, 0, 8)
        };
        lat.push(d.execute(0, &w));
    }
    assert_eq!(lat[1] - lat[0], bus.commands_ns(1), "CMD13 after the write");
    // A flush is CMD6 plus firmware on an empty buffer.
    let mut d = Emmc::new(&c).unwrap();
    let f = d.execute(0, &cmd(Op::Flush, 0, 0));
    assert_eq!(f, bus.commands_ns(1) + us_to_ns(c.controller.fw_cmd_us));
}

#[test]
fn command_sequences_are_checked_against_the_op_and_the_card() {
    let d = Emmc::new(&generic()).unwrap();
    assert!(d.check_command(&cmd(Op::Read, 0, 8)).is_ok());
    let wrong = DeviceCommand {
        commands: host_interface::DISCARD,
        ..cmd(Op::Read, 0, 8)
    };
    let e = d.check_command(&wrong).unwrap_err();
    assert!(matches!(
        e,
        DeviceError::Command(host_interface::CommandError::Mismatch { .. })
    ));
    let e = d.check_command(&task(Op::Read, 0, 8)).unwrap_err();
    assert_eq!(
        e,
        DeviceError::Command(host_interface::CommandError::NoCommandQueue)
    );
    let q = Emmc::new(&cmdq_profile()).unwrap();
    assert!(q.check_command(&task(Op::Write, 0, 8)).is_ok());
    let err: crate::Error = e.into();
    assert!(err.to_string().contains("command queue"), "{err}");
}

#[test]
fn mapped_4k_read_costs_fw_plus_tr_plus_channel_plus_bus() {
    // One sense time for every page, so the sum is exact whichever page
    // (lower or upper) the data landed on; the LSB/MSB split is tested in
    // nand.rs.
    let mut c = generic();
    c.nand.t_r_upper_us = None;
    let mut d = Emmc::new(&c).unwrap();
    d.write_untimed(0, 2048 * 8);
    let bus = Bus::new(&c.bus);
    let tl = NandTimelines::new(&c.nand);
    let front = bus.commands_ns(2) + us_to_ns(c.controller.fw_cmd_us);
    let t_r = us_to_ns(c.nand.t_r_us);
    let data = t_r + tl.xfer_ns(8192) + bus.data_ns(8);
    let mut now = 0;
    // A forward miss first (map page 1, prefetching map pages 2-4), then a
    // backward miss on map page 0 once the dies are idle: only tR + 4 KiB.
    read4k(&mut d, &mut now, 1500);
    now += 1_000_000;
    let miss = read4k(&mut d, &mut now, 0);
    assert_eq!(miss, front + t_r + tl.xfer_ns(4096) + data);
    // Another page of map page 0: hit.
    now += 1_000_000;
    let hit = read4k(&mut d, &mut now, 40);
    assert_eq!(hit, front + data);
    assert!((150_000..250_000).contains(&hit), "{hit}");
    // The other 4 KiB of the same 8 KiB NAND page: read buffer hit.
    let buffered = read4k(&mut d, &mut now, 41);
    assert_eq!(buffered, front + bus.data_ns(8));
    assert_eq!(d.stats().map_cache_misses, 2);
    d.check_integrity().unwrap();
}

fn stream(desc: bool) -> (f64, f64) {
    let mut d = Emmc::new(&generic()).unwrap();
    d.write_untimed(0, 2048 * 8);
    let mut now = 0;
    // Warm the map page so only the read buffer differs.
    read4k(&mut d, &mut now, 1000);
    d.reset_stats();
    let mut total = 0;
    for i in 0..256u64 {
        let lpn = if desc { 511 - i } else { 256 + i };
        total += read4k(&mut d, &mut now, lpn);
    }
    (d.stats().read_buffer_hit_rate, total as f64 / 256.0)
}

#[test]
fn ascending_stream_hits_read_buffer_descending_does_not() {
    let (hit_up, mean_up) = stream(false);
    let (hit_down, mean_down) = stream(true);
    assert!(hit_up > 0.95, "ascending hit rate {hit_up}");
    assert!(
        (0.4..0.6).contains(&hit_down),
        "descending hit rate {hit_down}: only within-page hits"
    );
    assert!(
        mean_up < 0.8 * mean_down,
        "mean ascending {mean_up} ns, descending {mean_down} ns"
    );
}

/// Single 4 KiB reads at the start of each 1 MiB of a 1 GiB file, in the
/// given order; returns the total device time.
fn stride_sweep(order: &[u64]) -> (Ns, f64) {
    let mut d = Emmc::new(&small_map_cache()).unwrap();
    d.write_untimed(0, (1 << 30) / 512);
    let mut now = 0;
    let mut total = 0;
    for &mib in order {
        total += read4k(&mut d, &mut now, mib * 256);
    }
    (total, d.stats().map_cache_hit_rate)
}

#[test]
fn ascending_1mib_stride_sweep_beats_shuffled_and_descending() {
    let up: Vec<u64> = (0..1024).collect();
    let down: Vec<u64> = (0..1024).rev().collect();
    let mut shuffled = up.clone();
    shuffled.shuffle(&mut component_rng(1, "test"));
    let (t_up, h_up) = stride_sweep(&up);
    let (t_down, h_down) = stride_sweep(&down);
    let (t_shuf, h_shuf) = stride_sweep(&shuffled);
    eprintln!("1 MiB stride: up {t_up} ns, shuffled {t_shuf} ns, down {t_down} ns; map hit rates {h_up} {h_shuf} {h_down}");
    assert!(
        t_up < t_shuf && t_up < t_down,
        "up {t_up} shuffled {t_shuf} down {t_down}"
    );
    // A map page covers 4 MiB: 4 reads of the sweep. Descending gets the
    // other 3 of each page; ascending also gets the prefetched next page.
    assert!(
        h_up > h_down && h_shuf < 0.1,
        "map hit rates: up {h_up} shuffled {h_shuf} down {h_down}"
    );
    // Descending still gets the 4 reads per map page, not the prefetch.
    assert!((0.7..0.8).contains(&h_down), "down {h_down}");
}

/// Random 4 KiB reads within the first 128 MiB: requests starting above the
/// previous one are cheaper on average than those below it.
#[test]
fn reads_above_the_previous_address_are_cheaper() {
    let mut d = Emmc::new(&small_map_cache()).unwrap();
    d.write_untimed(0, (128 << 20) / 512);
    let mut rng = component_rng(7, "test");
    let mut now = 0;
    let (mut up, mut nup, mut down, mut ndown) = (0u64, 0u64, 0u64, 0u64);
    let mut prev = 0u64;
    for i in 0..20_000 {
        let lpn = rng.random_range(0..32768u64);
        let lat = read4k(&mut d, &mut now, lpn);
        if i > 0 {
            if lpn > prev {
                up += lat;
                nup += 1;
            } else {
                down += lat;
                ndown += 1;
            }
        }
        prev = lpn;
    }
    let (mu, md) = (up as f64 / nup as f64, down as f64 / ndown as f64);
    eprintln!("random reads in 128 MiB: mean up {mu:.0} ns, down {md:.0} ns");
    // The forward map prefetch serves some upward jumps from SRAM.
    assert!(mu < md, "mean up {mu} ns, down {md} ns");
}

/// 16 outstanding random reads in 128 MiB: dispatching each batch of 16 in
/// ascending order (deadline) beats FIFO order (noop).
#[test]
fn sorted_batches_beat_fifo_for_random_reads_in_128_mib() {
    let mut total = [0u64; 2];
    for (k, sorted) in [false, true].into_iter().enumerate() {
        let mut d = Emmc::new(&small_map_cache()).unwrap();
        d.write_untimed(0, (128 << 20) / 512);
        let mut rng = component_rng(3, "test");
        let mut now = 0;
        for _ in 0..500 {
            let mut batch: Vec<u64> = (0..16).map(|_| rng.random_range(0..32768u64)).collect();
            if sorted {
                batch.sort_unstable();
            }
            for lpn in batch {
                total[k] += read4k(&mut d, &mut now, lpn);
            }
        }
    }
    eprintln!(
        "16-deep batches: fifo {} ns, sorted {} ns",
        total[0], total[1]
    );
    assert!(total[1] < total[0], "fifo {} sorted {}", total[0], total[1]);
}

#[test]
fn trim_makes_pages_read_as_unmapped() {
    let mut d = Emmc::new(&generic()).unwrap();
    d.write_untimed(0, 1024);
    let mut now = 0;
    read4k(&mut d, &mut now, 3);
    run(&mut d, &mut now, cmd(Op::Discard, 0, 1024));
    d.check_integrity().unwrap();
    d.reset_stats();
    let lat = read4k(&mut d, &mut now, 3);
    let s = d.stats();
    assert_eq!(s.unmapped_reads, 1);
    assert_eq!(s.nand_reads, 0);
    assert!(lat < 100_000, "{lat}");
}

#[test]
fn flush_and_fua_wait_for_programs() {
    let mut c = generic();
    // Data durability alone (the map pages' part is the next test).
    c.map_cache.on_flush = config::FlushMetadata::Keep;
    let t_prog = us_to_ns(c.nand.t_prog_lower_us);
    let mut d = Emmc::new(&c).unwrap();
    let mut now = 0;
    let w = run(&mut d, &mut now, cmd(Op::Write, 0, 8));
    assert!(w < 200_000, "a buffered write completes at bus speed: {w}");
    let f = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert!(f >= t_prog, "flush waits for the padded program: {f}");
    assert_eq!(d.stats().padding_slots, 3);
    let mut fua = cmd(Op::Write, 800, 8);
    fua.fua = true;
    let w = run(&mut d, &mut now, fua);
    assert!(w >= t_prog, "FUA write waits for its program: {w}");
    // An empty buffer flushes at command cost.
    let f = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert!(f < 100_000, "{f}");
    d.check_integrity().unwrap();
}

#[test]
fn a_flush_programs_the_dirty_map_pages_and_nothing_when_clean() {
    let c = generic();
    assert_eq!(c.map_cache.on_flush, config::FlushMetadata::ProgramDirty);
    let t_prog = us_to_ns(c.nand.t_prog_lower_us);
    let mut d = Emmc::new(&c).unwrap();
    let mut now = 0;
    // Writes 8 MiB apart: each in its own map page (4 MiB of LBA each).
    for i in 0..3u64 {
        run(&mut d, &mut now, cmd(Op::Write, i * 16_384, 8));
    }
    let f = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    let s = d.stats();
    assert_eq!(s.flush.count, 1);
    assert_eq!(s.flush.metadata_pages, 3, "three dirty map pages");
    assert!(f >= t_prog, "the flush waits for the map programs: {f}");
    // Nothing written since: the map pages are clean, nothing to program.
    let f = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert!(f < 100_000, "a clean flush costs the command only: {f}");
    let s = d.stats();
    assert_eq!((s.flush.count, s.flush.metadata_pages), (2, 3));
    assert!(s.flush.latency_us.p99 >= s.flush.latency_us.p50);
    // A read dirties nothing.
    run(&mut d, &mut now, cmd(Op::Read, 40_000, 8));
    run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert_eq!(d.stats().flush.metadata_pages, 3);
    // The policy "keep" leaves them in SRAM.
    let mut k = c.clone();
    k.map_cache.on_flush = config::FlushMetadata::Keep;
    let mut d = Emmc::new(&k).unwrap();
    let mut now = 0;
    run(&mut d, &mut now, cmd(Op::Write, 0, 8));
    run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert_eq!(d.stats().flush.metadata_pages, 0);
    d.check_integrity().unwrap();
}

/// With the SLC log, a flush of a partial stripe page costs one SLC-mode
/// program and no padding; the logged data stays cached (a second flush
/// logs nothing) and reaches NAND once its stripe page fills, with the
/// log copies counted in the WAF.
#[test]
fn the_slc_log_makes_a_partial_stripe_durable_without_padding() {
    let mut c = generic();
    c.write_buffer.slc_log = true;
    c.write_buffer.t_prog_slc_us = Some(300.0);
    // The data's part alone (map pages are programmed to MLC on a flush).
    c.map_cache.on_flush = config::FlushMetadata::Keep;
    let t_slc = us_to_ns(300.0);
    let t_lower = us_to_ns(c.nand.t_prog_lower_us);
    assert!(t_slc < t_lower);
    let mut d = Emmc::new(&c).unwrap();
    let mut now = 0;
    run(&mut d, &mut now, cmd(Op::Write, 0, 8));
    let f = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert!(f >= t_slc && f < t_lower, "flush = one SLC program: {f}");
    let s = d.stats();
    assert_eq!(s.padding_slots, 0);
    assert_eq!(s.nand_programs, 0, "nothing programmed to MLC yet");
    let log = s.slc_log.unwrap();
    assert_eq!((log.programs, log.slots), (1, 1));
    // Nothing new since: the second flush costs the command only.
    let f2 = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert!(f2 < 100_000, "{f2}");
    assert_eq!(d.stats().slc_log.unwrap().programs, 1);
    // A reliable write logs only itself, and reads come from the cache.
    let mut fua = cmd(Op::Write, 8, 8);
    fua.fua = true;
    let w = run(&mut d, &mut now, fua);
    assert!(w < t_lower, "{w}");
    assert_eq!(d.stats().slc_log.unwrap().slots, 2);
    d.reset_stats();
    read4k(&mut d, &mut now, 0);
    assert_eq!(d.stats().write_buffer_read_hits, 1);
    // Filling the stripe page programs it to MLC as without the log.
    let stripe_sectors = d.geo.stripe_slots() as u64 * 8;
    run(
        &mut d,
        &mut now,
        cmd(Op::Write, 16, (stripe_sectors - 16) as u32),
    );
    let f3 = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    let s = d.stats();
    assert!(f3 >= t_lower, "the full page's MLC program: {f3}");
    assert_eq!(s.padding_slots, 0);
    assert!(s.nand_programs >= 1);
    assert_eq!(s.slc_log.unwrap().slots, 0, "a full page is not logged");
    d.check_integrity().unwrap();
}

/// A log block holds the lower pages of an MLC block; the program that
/// fills it starts the erase of the next log block on that die.
#[test]
fn a_full_slc_log_block_is_erased() {
    let mut c = generic();
    c.write_buffer.slc_log = true;
    let mut d = Emmc::new(&c).unwrap();
    let per_block = (c.nand.pages_per_block / 2) as u64;
    let dies = d.geo.dies() as u64;
    let mut now = 0;
    // Reliable 4 KiB writes each log themselves, except the one that
    // fills a stripe page (programmed to MLC instead).
    let mut i = 0;
    while d.stats().slc_log.unwrap().programs < per_block * dies {
        let log = d.stats().slc_log.unwrap();
        if log.programs < per_block * dies - (dies - 1) {
            assert_eq!(log.erases, 0, "no log block full yet: {log:?}");
        }
        let mut w = cmd(Op::Write, (i % 2) * 8, 8);
        w.fua = true;
        run(&mut d, &mut now, w);
        i += 1;
    }
    let log = d.stats().slc_log.unwrap();
    assert_eq!(log.erases, dies, "one full log block per die");
}

#[test]
fn slc_log_on_a_power_protected_buffer_is_a_located_error() {
    let mut c = generic();
    c.write_buffer.slc_log = true;
    c.write_buffer.volatile = false;
    let e = Emmc::new(&c).unwrap_err().to_string();
    assert!(e.contains("[write_buffer] slc_log"), "{e}");
}

#[test]
fn buffered_data_is_read_from_the_write_buffer() {
    let mut d = Emmc::new(&generic()).unwrap();
    let mut now = 0;
    run(&mut d, &mut now, cmd(Op::Write, 80, 8));
    d.reset_stats();
    read4k(&mut d, &mut now, 10);
    assert_eq!(d.stats().write_buffer_read_hits, 1);
    assert_eq!(d.stats().data_nand_reads, 0);
}

#[test]
fn full_device_runs_foreground_gc_and_some_writes_are_much_slower() {
    let mut d = Emmc::new(&small()).unwrap();
    let p = Precondition {
        fill_fraction: 1.0,
        steady_state: true,
        max_overwrite_factor: 1.0,
    };
    let sum = d.precondition(&p, 1);
    assert!(sum.gc_runs > 0, "{sum:?}");
    d.check_integrity().unwrap();
    let n = d.capacity_sectors() / 8;
    let mut rng = component_rng(5, "test");
    let mut now = 0;
    let mut lats = Vec::new();
    for _ in 0..4000 {
        let lpn = rng.random_range(0..n);
        lats.push(run(&mut d, &mut now, cmd(Op::Write, lpn * 8, 8)));
    }
    lats.sort_unstable();
    let s = d.stats();
    assert!(s.gc_runs > 0 && s.waf > 1.5, "{s:?}");
    let median = lats[lats.len() / 2];
    let max = *lats.last().unwrap();
    assert!(
        max > 50 * median && max > 20_000_000,
        "median {median} max {max}"
    );
    d.check_integrity().unwrap();
}

#[test]
fn erase_counts_stay_close_under_uniform_random_overwrite() {
    let mut d = Emmc::new(&small()).unwrap();
    let p = Precondition {
        fill_fraction: 0.9,
        steady_state: false,
        max_overwrite_factor: 0.0,
    };
    d.precondition(&p, 1);
    let n = d.capacity_sectors() / 8 * 9 / 10;
    let mut rng = component_rng(9, "test");
    for _ in 0..(n * 6) {
        let lpn = rng.random_range(0..n) as u32;
        d.write_lpn_untimed(lpn);
    }
    let e = d.stats().erase_count;
    assert!(e.mean > 3.0, "{e:?}");
    assert!(
        e.stddev < 0.35 * e.mean && (e.max - e.min) as f64 <= 0.8 * e.mean + 3.0,
        "{e:?}"
    );
    d.check_integrity().unwrap();
}

#[test]
fn sequential_read_and_write_throughput_in_the_envelope() {
    let mut d = Emmc::new(&generic()).unwrap();
    d.write_untimed(0, (64 << 20) / 512);
    let mut now = 0;
    let t0 = now;
    for i in 0..128u64 {
        run(&mut d, &mut now, cmd(Op::Read, i * 1024, 1024));
    }
    let read_mb_s = (64 << 20) as f64 / ((now - t0) as f64 / 1e9) / 1e6;
    assert!(
        (60.0..104.0).contains(&read_mb_s),
        "seq read {read_mb_s} MB/s"
    );
    let t0 = now;
    for i in 0..128u64 {
        run(
            &mut d,
            &mut now,
            cmd(Op::Write, (128 << 11) + i * 1024, 1024),
        );
    }
    run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    let write_mb_s = (64 << 20) as f64 / ((now - t0) as f64 / 1e9) / 1e6;
    eprintln!("sequential 512 KiB: read {read_mb_s:.1} MB/s, write {write_mb_s:.1} MB/s");
    assert!(
        (10.0..30.0).contains(&write_mb_s),
        "seq write {write_mb_s} MB/s"
    );
}

#[test]
fn same_inputs_same_results() {
    let go = || {
        let mut d = Emmc::new(&small()).unwrap();
        let s = d.precondition(&Precondition::default(), 4);
        let mut rng = component_rng(2, "test");
        let mut now = 0;
        for _ in 0..500 {
            let op = if rng.random_bool(0.5) {
                Op::Read
            } else {
                Op::Write
            };
            let lpn = rng.random_range(0..d.capacity_sectors() / 8);
            run(&mut d, &mut now, cmd(op, lpn * 8, 8));
        }
        (s, now, serde_json::to_string(&d.stats()).unwrap())
    };
    assert_eq!(go(), go());
}

/// Preconditions the full 8 GiB profile, checks its integrity and prints
/// the key numbers (`cargo test -p mmcsim key_numbers -- --nocapture`).
/// Slow (the whole device): runs when `MMCSIM_CI` is set (`.ci/run` sets
/// it), else says SKIPPED.
#[test]
fn key_numbers() {
    if std::env::var_os("MMCSIM_CI").is_none() {
        eprintln!("SKIPPED key_numbers: preconditions the whole 8 GiB profile (slow); runs when MMCSIM_CI is set, as .ci/run does");
        return;
    }
    let mut d = Emmc::new(&generic()).unwrap();
    let t = std::time::Instant::now();
    let s = d.precondition(&Precondition::default(), 1);
    eprintln!("precondition 8 GiB: {:?} in {:?}", s, t.elapsed());
    d.check_integrity().unwrap();
    let mut now = 0;
    let mut rng = component_rng(1, "k");
    let n = d.capacity_sectors() / 8;
    let mut tot = 0;
    for _ in 0..2000 {
        tot += read4k(&mut d, &mut now, rng.random_range(0..n));
    }
    eprintln!(
        "random 4k read over 8 GiB: mean {} us, {:?}",
        tot / 2000 / 1000,
        d.stats().map_cache_hit_rate
    );
    d.reset_stats();
    let mut tot = 0;
    for _ in 0..2000 {
        tot += run(
            &mut d,
            &mut now,
            cmd(Op::Write, rng.random_range(0..n) * 8, 8),
        );
    }
    let st = d.stats();
    eprintln!(
        "random 4k write: mean {} us, waf {}, gc {}",
        tot / 2000 / 1000,
        st.waf,
        st.gc_runs
    );
}

#[test]
fn load_names_the_file_and_reads_the_shipped_profile() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/devices");
    let c = DeviceConfig::load(dir.join("generic-emmc.toml")).unwrap();
    assert_eq!(c, generic());
    let e = DeviceConfig::load(dir.join("missing.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.toml"), "{e}");
}

#[test]
fn power_protected_buffer_makes_flush_and_fua_cheap() {
    let mut c = generic();
    c.write_buffer.volatile = false;
    let mut d = Emmc::new(&c).unwrap();
    let mut now = 0;
    let mut w = cmd(Op::Write, 0, 8);
    w.fua = true;
    assert!(run(&mut d, &mut now, w) < 200_000);
    assert!(run(&mut d, &mut now, cmd(Op::Flush, 0, 0)) < 100_000);
}

#[test]
fn reverse_seek_knob_is_off_by_default_and_counted_when_on() {
    let mut c = generic();
    let mut d = Emmc::new(&c).unwrap();
    d.write_untimed(0, 4096);
    let mut now = 0;
    read4k(&mut d, &mut now, 100);
    let base = read4k(&mut d, &mut now, 50);
    assert_eq!(d.stats().reverse_seek_penalties, 0);
    c.calibration.reverse_seek_penalty_us = 100.0;
    let mut d = Emmc::new(&c).unwrap();
    d.write_untimed(0, 4096);
    let mut now = 0;
    read4k(&mut d, &mut now, 100);
    let knob = read4k(&mut d, &mut now, 50);
    assert_eq!(knob, base + 100_000);
    assert_eq!(d.stats().reverse_seek_penalties, 1);
}

fn cmdq_profile() -> DeviceConfig {
    let text = include_str!("../../../../configs/devices/generic-emmc51-cmdq.toml");
    DeviceConfig::from_toml_str(text, "generic-emmc51-cmdq").unwrap()
}

#[test]
fn cmdq_reads_on_different_dies_overlap_and_complete_out_of_order() {
    let mut cfg = cmdq_profile();
    assert_eq!(cfg.cmdq.as_ref().unwrap().depth, 32);
    // One die per channel: NAND channel timelines are reserved in issue
    // order (no gap filling), so dies on a shared channel cannot overtake
    // an earlier command's page transfer.
    cfg.nand.channels = 2;
    cfg.nand.dies_per_channel = 1;
    let mut d = Emmc::new(&cfg).unwrap();
    // Lay out data so consecutive stripes land on both dies.
    d.write_untimed(0, 64 * 1024);
    let lpn_die = |d: &Emmc, lpn: u32| d.geo.slot_die(d.ftl.lookup(lpn).unwrap());
    let a = 0u32;
    let b = (1..4096u32)
        .find(|&l| {
            lpn_die(&d, l) != lpn_die(&d, a)
                && l / ENTRIES_PER_MAP_PAGE == 0
                && !(500..530).contains(&l)
        })
        .expect("an LPN on the other die under the same map page");
    // Warm the map page so only data reads remain.
    d.execute(0, &cmd(Op::Read, 4096, 8));
    let t0 = 10_000_000;
    // Keep die(a) busy: a write stripe program, then a read queued on it.
    let die_a = lpn_die(&d, a);
    d.tl.program(t0, die_a, 16 * 1024, true);
    let ra = d.execute(t0, &task(Op::Read, a as u64 * 8, 8));
    let rb = d.execute(t0 + 1_000, &task(Op::Read, b as u64 * 8, 8));
    assert!(
        rb < ra,
        "the later read on the free die completes first: {rb} vs {ra}"
    );
    // Legacy execution of the same pair is strictly serial.
    let mut l = Emmc::new(&cfg).unwrap();
    l.write_untimed(0, 64 * 1024);
    l.execute(0, &cmd(Op::Read, 4096, 8));
    l.tl.program(t0, die_a, 16 * 1024, true);
    let la = l.execute(t0, &cmd(Op::Read, a as u64 * 8, 8));
    let lb = l.execute(t0 + 1_000, &cmd(Op::Read, b as u64 * 8, 8));
    assert!(lb > la && lb > rb);
}

#[test]
fn cmdq_data_phases_never_overlap_on_the_bus() {
    let mut d = Emmc::new(&cmdq_profile()).unwrap();
    d.write_untimed(0, 64 * 1024);
    for i in 0..16u64 {
        d.execute(1_000 * i, &task(Op::Read, i * 4096, 8));
    }
    for w in d.hi.dat_reservations().windows(2) {
        assert!(w[0].1 <= w[1].0, "{:?}", w);
    }
}

/// Mean latency of a 4 KiB read issued right after each of 20 bursts of
/// 512 KiB of sequential writes (the buffer's NAND programs still running),
/// and the HPI count.
fn read_after_write_bursts(hpi: bool) -> (f64, u64) {
    let mut c = small();
    c.features.hpi = hpi;
    let mut d = Emmc::new(&c).unwrap();
    d.write_untimed(0, 64 << 11);
    let mut now = 0;
    let mut total = 0;
    for k in 0..20u64 {
        for i in 0..4u64 {
            run(
                &mut d,
                &mut now,
                cmd(Op::Write, (128 << 11) + (k * 4 + i) * 256, 256),
            );
        }
        total += read4k(&mut d, &mut now, k * 997);
        now += 50_000_000;
    }
    (total as f64 / 20.0, d.stats().hpi_interrupts.unwrap_or(0))
}

#[test]
fn hpi_lowers_read_latency_after_a_write_burst() {
    let (off, n_off) = read_after_write_bursts(false);
    let (on, n_on) = read_after_write_bursts(true);
    eprintln!("read after 512 KiB burst: no HPI {off:.0} ns, HPI {on:.0} ns ({n_on} HPIs)");
    assert_eq!(n_off, 0);
    assert_eq!(n_on, 20);
    assert!(on < off / 2.0, "HPI {on} ns vs {off} ns");
}

#[test]
fn hpi_keeps_the_interrupted_work() {
    // The die time of the interrupted programs is delayed, not lost: the
    // final drain (flush) ends later by at least the reads' die time.
    let flush_end = |hpi: bool| {
        let mut c = small();
        c.features.hpi = hpi;
        let mut d = Emmc::new(&c).unwrap();
        d.write_untimed(0, 64 << 11);
        let mut now = 0;
        for i in 0..4u64 {
            run(&mut d, &mut now, cmd(Op::Write, (128 << 11) + i * 256, 256));
        }
        read4k(&mut d, &mut now, 5);
        run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
        let s = d.stats();
        let busy: u64 = s.die_busy_ns.iter().sum();
        (now, busy, s.nand_programs, s.nand_reads)
    };
    let (e0, b0, p0, r0) = flush_end(false);
    let (e1, b1, p1, r1) = flush_end(true);
    assert_eq!((p0, r0), (p1, r1), "same NAND operations either way");
    // Die time differs only by the read's wait for a channel gap (< one
    // 8 KiB transfer, 41 µs).
    assert!(b0.abs_diff(b1) < 41_000, "die busy {b0} vs {b1} ns");
    assert!(e1 + 100_000 >= e0, "flush {e1} vs {e0}");
}

#[test]
fn hpi_keys_are_validated_and_absent_when_off() {
    let mut c = generic();
    assert!(!serde_json::to_string(&c).unwrap().contains("features"));
    let d = Emmc::new(&c).unwrap();
    assert!(!serde_json::to_string(&d.stats())
        .unwrap()
        .contains("hpi_interrupts"));
    c.features.hpi_us = Some(10.0);
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(e.contains("[features] hpi_us"), "{e}");
    c.features.hpi = true;
    c.features.hpi_us = Some(-1.0);
    assert!(c.validate("x.toml").is_err());
}

#[test]
fn reliable_write_keys_choose_the_fua_path_and_are_validated() {
    let mut c = generic();
    assert_eq!(
        c.features.fua_path(),
        FuaPath::ReliableWrite,
        "absent = enhanced"
    );
    let d = Emmc::new(&c).unwrap();
    let stats = serde_json::to_string(&d.stats()).unwrap();
    assert!(!stats.contains("reliable_writes") && !stats.contains("flush_commands"));
    c.features.reliable_write = Some(false);
    assert_eq!(c.features.fua_path(), FuaPath::PostFlush);
    let d = Emmc::new(&c).unwrap();
    assert!(serde_json::to_string(&d.stats())
        .unwrap()
        .contains("\"flush_commands\":0"));
    c.features.rel_wr_sec_c = Some(8);
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(e.contains("[features] rel_wr_sec_c"), "{e}");
    c.features.reliable_write = None;
    assert_eq!(c.features.fua_path(), FuaPath::LegacyReliableWrite(8));
    c.validate("x.toml").unwrap();
    c.features.rel_wr_sec_c = Some(0);
    assert!(c.validate("x.toml").is_err());
    // A command-queueing card: enhanced reliable write only.
    let mut q = DeviceConfig::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/devices/generic-emmc51-cmdq.toml"
    ))
    .unwrap();
    q.features.reliable_write = Some(false);
    let e = q.validate("q.toml").unwrap_err().to_string();
    assert!(e.contains("[cmdq]") && e.contains("reliable_write"), "{e}");
}

/// Foreground GC victims, BKOPS starts and BKOPS victims over 20 bursts of
/// 500 random 4 KiB writes separated by 2 s idle gaps on a full device;
/// with `bkops` the host starts BKOPS 200 ms into each gap (as the legacy
/// driver's idle check does).
fn bursts_with_idle_gaps(bkops: bool) -> (u64, u64, u64) {
    let mut c = small();
    c.gc.background = true;
    let mut d = Emmc::new(&c).unwrap();
    let p = Precondition {
        fill_fraction: 1.0,
        steady_state: true,
        max_overwrite_factor: 1.0,
    };
    d.precondition(&p, 1);
    let n = d.capacity_sectors() / 8;
    let mut rng = component_rng(9, "test");
    let mut now = 0;
    for _ in 0..20 {
        for _ in 0..500 {
            let lpn = rng.random_range(0..n);
            run(&mut d, &mut now, cmd(Op::Write, lpn * 8, 8));
        }
        if bkops {
            let level = d.bkops_status();
            let started = d.start_bkops(now + 200_000_000);
            assert_eq!(started, level > 0);
        }
        now += 2_000_000_000;
    }
    d.check_integrity().unwrap();
    let s = d.stats();
    let bg = s.bkops_gc_runs.unwrap();
    (s.gc_runs - bg, s.bkops_runs.unwrap(), bg)
}

#[test]
fn bkops_in_idle_gaps_lowers_foreground_gc() {
    let (fg_off, runs_off, bg_off) = bursts_with_idle_gaps(false);
    let (fg_on, runs_on, bg_on) = bursts_with_idle_gaps(true);
    eprintln!(
        "foreground GC victims: no BKOPS {fg_off}; BKOPS {fg_on} ({runs_on} BKOPS, {bg_on} background victims)"
    );
    assert_eq!((runs_off, bg_off), (0, 0));
    assert!(runs_on > 0 && bg_on > 0);
    assert!(fg_on < fg_off / 2, "foreground GC {fg_on} vs {fg_off}");
}

#[test]
fn bkops_status_and_keys_are_absent_when_off() {
    let c = small();
    let mut d = Emmc::new(&c).unwrap();
    assert_eq!(d.bkops_status(), 0);
    assert!(!d.start_bkops(0));
    let j = serde_json::to_string(&d.stats()).unwrap();
    assert!(!j.contains("bkops"), "{j}");
    let mut bad = c.clone();
    bad.gc.bkops_target_free_blocks_per_die = Some(20);
    let e = bad.validate("x.toml").unwrap_err().to_string();
    assert!(e.contains("[gc] bkops_target_free_blocks_per_die"), "{e}");
}

#[test]
fn cache_off_writes_complete_when_programmed() {
    let mut c = generic();
    let t_prog = us_to_ns(c.nand.t_prog_lower_us);
    assert!(!serde_json::to_string(&c).unwrap().contains("enabled"));
    c.write_buffer.enabled = false;
    let mut d = Emmc::new(&c).unwrap();
    let mut now = 0;
    let w = run(&mut d, &mut now, cmd(Op::Write, 0, 8));
    assert!(w >= t_prog, "a write waits for its program: {w}");
    assert_eq!(d.stats().padding_slots, 3, "its stripe page is padded");
    // Nothing is left to flush.
    let f = run(&mut d, &mut now, cmd(Op::Flush, 0, 0));
    assert!(f < 100_000, "{f}");
    d.check_integrity().unwrap();
}

#[test]
fn a_packed_write_saves_the_per_command_overhead() {
    let mut c = generic();
    c.features.packed = true;
    let writes: Vec<_> = (0..4u64).map(|i| cmd(Op::Write, i * 32, 32)).collect();
    let mut d = Emmc::new(&c).unwrap();
    let mut now = 0;
    for w in &writes {
        run(&mut d, &mut now, *w);
    }
    let separate = now;
    let mut d = Emmc::new(&c).unwrap();
    let packed = d.execute_packed(0, &writes);
    eprintln!("4 × 16 KiB: separate {separate} ns, packed {packed} ns");
    assert!(packed < separate, "packed {packed} vs {separate}");
    assert_eq!(d.stats().packed_commands, Some(1));
    assert_eq!(d.stats().host_slots_written, 16);
    d.check_integrity().unwrap();
}

/// Dies in the packed-read test array: 4 channels × 1 die, so no two test
/// dies share a NAND channel.
const PACKED_READ_DIES: u32 = 4;

/// The generic profile with [`PACKED_READ_DIES`] dies (one per channel),
/// shrunk to 128 blocks per plane, with packed reads on.
fn packed_read_profile() -> DeviceConfig {
    let mut c = small();
    c.nand.channels = PACKED_READ_DIES;
    c.nand.dies_per_channel = 1;
    c.features.packed_read = true;
    c
}

/// A device of [`packed_read_profile`] whose first map page's LPNs
/// (4 MiB) are on NAND, and `n` of those LPNs picked in a seeded random
/// order, each on its own NAND page: on `n` different dies, or all on die
/// 0 when `one_die`.
fn packed_read_setup(n: usize, one_die: bool) -> (Emmc, Vec<u64>) {
    let mut d = Emmc::new(&packed_read_profile()).unwrap();
    let lpns = ENTRIES_PER_MAP_PAGE;
    d.write_untimed(0, lpns as u64 * SECTORS_PER_PAGE);
    let mut order: Vec<u32> = (0..lpns).collect();
    order.shuffle(&mut component_rng(7, "packed-read-test"));
    let (mut picked, mut pages, mut dies) = (Vec::new(), Vec::new(), Vec::new());
    for lpn in order {
        let slot = d.ftl.lookup(lpn).expect("written LPN is mapped");
        let (page, die) = (d.geo.slot_page_id(slot), d.geo.slot_die(slot));
        let die_ok = if one_die {
            die == 0
        } else {
            !dies.contains(&die)
        };
        if die_ok && !pages.contains(&page) {
            picked.push(lpn as u64);
            pages.push(page);
            dies.push(die);
        }
        if picked.len() == n {
            break;
        }
    }
    assert_eq!(picked.len(), n, "the test region holds {n} suitable LPNs");
    (d, picked)
}

/// Runs the 4 KiB reads of `lpns` on clones of `d`: one by one (each
/// issued when the previous completes) and as one packed read from 0.
/// Returns `(separate_ns, packed_ns)` and the two devices after.
fn separate_and_packed(d: &Emmc, lpns: &[u64]) -> ((Ns, Ns), (Emmc, Emmc)) {
    let reads: Vec<_> = lpns.iter().map(|&l| cmd(Op::Read, l * 8, 8)).collect();
    let (mut one, mut packed) = (d.clone(), d.clone());
    let mut now = 0;
    for r in &reads {
        run(&mut one, &mut now, *r);
    }
    let p = packed.execute_packed(0, &reads);
    ((now, p), (one, packed))
}

#[test]
fn a_packed_read_overlaps_the_senses_of_different_dies() {
    let n = PACKED_READ_DIES as usize;
    let (d, lpns) = packed_read_setup(n, false);
    let ((separate, packed), (one, pk)) = separate_and_packed(&d, &lpns);
    let c = d.config();
    let fw = us_to_ns(c.controller.fw_cmd_us);
    let t_r = us_to_ns(c.nand.t_r_us);
    eprintln!("{n} × 4 KiB on {n} dies: one by one {separate} ns, packed {packed} ns");
    // Each read after the first saves its command overhead (firmware
    // cost) and its sense, which overlaps the first one's on another die.
    let saved = (n as Ns - 1) * (fw + t_r);
    assert!(
        packed + saved < separate,
        "packed {packed} + {saved} vs one by one {separate}"
    );
    let (s1, s2) = (one.stats(), pk.stats());
    assert_eq!(s2.packed_read_commands, Some(1));
    assert_eq!(s2.packed_read_requests, Some(n as u64));
    assert_eq!(s2.packed_commands, None, "no packed write on this card");
    assert_eq!(s1.packed_read_commands, Some(0));
    assert_eq!(s2.data_nand_reads, n as u64, "one sense per entry");
    assert_eq!(
        (s1.data_nand_reads, s1.nand_reads, s1.host_slots_read),
        (s2.data_nand_reads, s2.nand_reads, s2.host_slots_read),
        "the same data path"
    );
    pk.check_integrity().unwrap();
}

#[test]
fn a_packed_read_on_one_die_saves_overhead_but_not_senses() {
    let n = PACKED_READ_DIES as usize;
    let (d, lpns) = packed_read_setup(n, true);
    let ((separate, packed), (one, pk)) = separate_and_packed(&d, &lpns);
    let (dm, lm) = packed_read_setup(n, false);
    let ((_, packed_dies), _) = separate_and_packed(&dm, &lm);
    let c = d.config();
    let fw = us_to_ns(c.controller.fw_cmd_us);
    let t_r = us_to_ns(c.nand.t_r_us);
    eprintln!(
        "{n} × 4 KiB on one die: one by one {separate} ns, packed {packed} ns ({packed_dies} ns on {n} dies)"
    );
    assert!(
        packed + (n as Ns - 1) * fw < separate,
        "the per-command overhead is saved: packed {packed} vs {separate}"
    );
    // The die senses the entries one after another.
    assert!(packed >= n as Ns * t_r, "{packed}");
    assert!(
        packed >= packed_dies + (n as Ns - 1) * t_r / 2,
        "one die {packed} vs {n} dies {packed_dies}"
    );
    assert_eq!(one.stats().data_nand_reads, pk.stats().data_nand_reads);
}

#[test]
fn packed_read_is_validated_against_the_card() {
    let mut c = generic();
    c.features.max_packed_reads = Some(4);
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(
        e.contains("x.toml") && e.contains("max_packed_reads"),
        "{e}"
    );
    c.features.packed_read = true;
    c.validate("x.toml").unwrap();
    assert_eq!(c.features.max_packed_reads(), 4);
    c.features.max_packed_reads = None;
    assert_eq!(
        c.features.max_packed_reads(),
        FeaturesConfig::DEFAULT_MAX_PACKED_WRITES
    );
    c.features.emmc_version = Some("4.41".into());
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(
        e.contains("[features] packed_read") && e.contains("4.41"),
        "{e}"
    );
    c.features.emmc_version = Some("4.5".into());
    c.validate("x.toml").unwrap();
    let j = serde_json::to_string(&Emmc::new(&generic()).unwrap().stats()).unwrap();
    assert!(!j.contains("packed_read"), "absent when off: {j}");
    // A 512-byte packed header has 63 entry slots, for reads and writes.
    c.features.max_packed_reads = Some(63);
    c.validate("x.toml").unwrap();
    c.features.max_packed_reads = Some(64);
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(
        e.contains("max_packed_reads") && e.contains("2..=63"),
        "{e}"
    );
    c.features.max_packed_reads = None;
    c.features.packed = true;
    c.features.max_packed_writes = Some(64);
    let e = c.validate("x.toml").unwrap_err().to_string();
    assert!(
        e.contains("max_packed_writes") && e.contains("2..=63"),
        "{e}"
    );
}

/// Random 4 KiB writes in bursts with BKOPS started in the idle gaps,
/// then the device's integrity checked; returns its statistics.
fn bursts_after(d: &mut Emmc, seed: u64) -> DeviceStats {
    let n = d.capacity_sectors() / 8;
    let mut rng = component_rng(seed, "test");
    let mut now = 0;
    for _ in 0..5 {
        for _ in 0..300 {
            let lpn = rng.random_range(0..n);
            run(d, &mut now, cmd(Op::Write, lpn * 8, 8));
        }
        d.start_bkops(now + 200_000_000);
        now += 2_000_000_000;
    }
    d.check_integrity().unwrap();
    d.stats()
}

/// The hybrid and DFTL mappings save their whole state: a device loaded
/// from a state (log blocks, written-slot counts; translation pages and
/// the cached mapping table) runs the same workload, BKOPS included, to
/// the same statistics as the device preconditioned in place.
#[test]
fn hybrid_and_dftl_states_load_to_the_device_preconditioned_in_place() {
    for scheme in [MappingScheme::Hybrid, MappingScheme::Dftl] {
        let mut c = small();
        c.ftl.mapping = scheme;
        c.gc.background = true;
        if scheme == MappingScheme::Hybrid {
            // 2 planes × (9 spare superblocks − 1 sequential − 6 random
            // log blocks kept open).
            c.gc.bkops_target_free_blocks_per_die = Some(2 * (9 - 1 - 6));
        }
        c.validate("x.toml").unwrap();
        let p = Precondition {
            fill_fraction: 1.0,
            steady_state: true,
            max_overwrite_factor: 1.0,
        };
        let mut a = Emmc::new(&c).unwrap();
        let summary = a.precondition(&p, 1);
        let bytes = a.save_state(&summary, "k").unwrap();
        let mut b = Emmc::new(&c).unwrap();
        assert_eq!(b.load_state(&bytes, "k").unwrap(), summary);
        let (sa, sb) = (bursts_after(&mut a, 4), bursts_after(&mut b, 4));
        assert_eq!(sa, sb, "{scheme:?}");
        assert!(sa.bkops_gc_runs.unwrap() > 0, "{scheme:?}: {sa:?}");
    }
}

/// BKOPS on the hybrid mapping needs a target inside its free pool's
/// range (planes × spare superblocks neither reserved for the sequential
/// log block nor holding a random one: here 2 × (9 − 1 − 7) = 2 with every
/// random log block open, to 2 × (9 − 1) = 16 with none); the
/// page-mapping default (2 × stop) would mean something else, so it is not
/// assumed.
#[test]
fn a_hybrid_bkops_target_must_lie_in_its_free_pool_range() {
    let mut c = small();
    c.ftl.mapping = MappingScheme::Hybrid;
    c.gc.background = true;
    for t in [None, Some(2), Some(17)] {
        c.gc.bkops_target_free_blocks_per_die = t;
        let e = c.validate("x.toml").unwrap_err().to_string();
        assert!(
            e.contains("[gc] bkops_target_free_blocks_per_die")
                && e.contains("above 2 and at most 16"),
            "{t:?}: {e}"
        );
    }
    for t in [3, 16] {
        c.gc.bkops_target_free_blocks_per_die = Some(t);
        c.validate("x.toml").unwrap();
    }
}

/// The cache-warming hints are the simulator's, not the card's: warming
/// any sector (mapped, unmapped, beyond the capacity) before each command,
/// for reads and writes, on every mapping scheme, leaves every latency,
/// every counter and the saved state exactly as without them.
#[test]
fn warming_hints_change_nothing_simulated() {
    for scheme in [
        MappingScheme::Page,
        MappingScheme::Hybrid,
        MappingScheme::Dftl,
    ] {
        let mut c = small();
        c.ftl.mapping = scheme;
        c.validate("x.toml").unwrap();
        let p = Precondition {
            fill_fraction: 0.5,
            steady_state: false,
            max_overwrite_factor: 1.0,
        };
        let mut a = Emmc::new(&c).unwrap();
        let summary = a.precondition(&p, 1);
        let mut b = a.clone();
        let sectors = a.capacity_sectors();
        let mut rng = component_rng(7, "warm");
        let (mut ta, mut tb) = (0, 0);
        for _ in 0..2_000 {
            let op = if rng.random_bool(0.3) {
                Op::Write
            } else {
                Op::Read
            };
            let sector = rng.random_range(0..sectors / 8) * 8;
            b.warm(sector, op == Op::Write);
            b.warm(sectors + sector, true);
            b.warm(u64::MAX - 7, op == Op::Read);
            assert_eq!(
                run(&mut a, &mut ta, cmd(op, sector, 8)),
                run(&mut b, &mut tb, cmd(op, sector, 8)),
                "{scheme:?}"
            );
        }
        assert_eq!(
            run(&mut a, &mut ta, cmd(Op::Flush, 0, 0)),
            run(&mut b, &mut tb, cmd(Op::Flush, 0, 0))
        );
        assert_eq!(a.stats(), b.stats(), "{scheme:?}");
        assert_eq!(
            a.save_state(&summary, "k").unwrap(),
            b.save_state(&summary, "k").unwrap(),
            "{scheme:?}"
        );
    }
}
