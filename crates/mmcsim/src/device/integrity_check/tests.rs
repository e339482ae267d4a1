//! The per-command integrity check: silent on a correct FTL under GC, trims
//! and flushes, at a cost proportional to what each command touched; exact
//! on a corrupted one (the test-only [`Corruption`] hook).

use super::super::ftl::Corruption;
use super::super::host_interface::legacy_commands;
use super::super::*;
use super::*;
use crate::engine::component_rng;
use rand::Rng;

/// The generic profile shrunk to 512 MiB raw, so GC runs soon.
fn small() -> DeviceConfig {
    let mut c = DeviceConfig::from_toml_str(
        include_str!("../../../../../configs/devices/generic-emmc.toml"),
        "generic-emmc.toml",
    )
    .unwrap();
    c.nand.blocks_per_plane = 128;
    c
}

fn cmd(op: Op, sector: u64, sectors: u32) -> DeviceCommand {
    DeviceCommand {
        op,
        sector,
        sectors,
        fua: false,
        commands: legacy_commands(op, true),
    }
}

/// Runs `c` when the device is idle after `*now`; returns the violation it
/// raised, if any.
fn run(d: &mut Emmc, now: &mut Ns, c: DeviceCommand) -> Option<Violation> {
    *now = d.execute(*now, &c);
    d.take_integrity_violation()
}

/// A device with LPNs `0..64` written and flushed, the check running.
fn written() -> (Emmc, Ns) {
    let mut d = Emmc::new(&small()).unwrap();
    let mut now = 0;
    assert_eq!(run(&mut d, &mut now, cmd(Op::Write, 0, 64 * 8)), None);
    assert_eq!(run(&mut d, &mut now, cmd(Op::Flush, 0, 0)), None);
    d.start_integrity_check().unwrap();
    (d, now)
}

#[test]
fn a_correct_ftl_passes_under_gc_trims_and_flushes_at_a_cost_per_command() {
    let mut d = Emmc::new(&small()).unwrap();
    d.precondition(
        &Precondition {
            fill_fraction: 0.9,
            steady_state: true,
            max_overwrite_factor: 0.5,
        },
        1,
    );
    d.start_integrity_check().unwrap();
    let before = d.stats();
    let lpns = d.capacity_sectors() / 8;
    let mut rng = component_rng(3, "integrity");
    let (mut now, mut own_lpns) = (0, 0u64);
    for i in 0..3000 {
        let op = match rng.random_range(0..20) {
            0 => Op::Flush,
            1 => Op::Discard,
            2..=5 => Op::Read,
            _ => Op::Write,
        };
        let pages = rng.random_range(1..=16u64);
        let lpn = rng.random_range(0..lpns - pages);
        let c = match op {
            Op::Flush => cmd(op, 0, 0),
            _ => {
                own_lpns += pages;
                cmd(op, lpn * 8, pages as u32 * 8)
            }
        };
        assert_eq!(run(&mut d, &mut now, c), None, "command {i}");
    }
    let s = d.stats();
    assert!(s.gc_runs > before.gc_runs, "GC ran while checked: {s:?}");
    let cost = d.finish_integrity_check(now).unwrap().unwrap();
    assert_eq!(cost.checked_commands, 3000);
    assert_eq!((cost.full_checks, cost.violations), (2, 0));
    // Each LPN programmed (host data or a GC move) is touched at most twice
    // (handed to the FTL, remapped); each remap touches two slots, and an
    // erase its stripe's slots — nothing scales with the device.
    let programmed = s.nand_slots_programmed - before.nand_slots_programmed;
    let erases = s.nand_erases - before.nand_erases;
    let stripe_slots = d.geo.slots_per_block() as u64 * d.geo.planes as u64;
    assert!(cost.checked_pages >= own_lpns / 2, "{cost:?}");
    assert!(
        cost.checked_pages <= own_lpns + 2 * programmed,
        "{cost:?}, own {own_lpns}, programmed {programmed}"
    );
    assert!(
        cost.checked_slots <= 2 * (programmed + own_lpns) + erases * stripe_slots,
        "{cost:?}, programmed {programmed}, erases {erases}"
    );
}

#[test]
fn a_silent_l2p_corruption_stops_the_first_command_touching_the_lpn() {
    let (mut d, mut now) = written();
    let slot5 = d.ftl.lookup(5).unwrap();
    assert!(d.ftl.corrupt(Corruption::L2p {
        lpn: 3,
        slot: slot5,
        reported: false
    }));
    // A command elsewhere does not look at LPN 3.
    assert_eq!(run(&mut d, &mut now, cmd(Op::Read, 7 * 8, 8)), None);
    let issued = now;
    let v = run(&mut d, &mut now, cmd(Op::Read, 2 * 8, 16)).expect("violation");
    assert_eq!(
        v,
        Violation {
            at: CheckPoint::Command {
                index: 2,
                issued_ns: issued,
                op: Op::Read,
                sector: 16,
                sectors: 16
            },
            error: IntegrityError::ReverseMismatch {
                lpn: 3,
                slot: slot5,
                p2l: 5
            }
        }
    );
    let text = DeviceError::from(v).to_string();
    assert!(
        text.contains("after device command 2 (Read, 16 sectors at sector 16, issued at")
            && text.contains(&format!("lpn 3 maps to slot {slot5} whose p2l is 5")),
        "{text}"
    );
    // The run is stopped: the violation is reported once, nothing after it.
    assert_eq!(run(&mut d, &mut now, cmd(Op::Read, 3 * 8, 8)), None);
    assert_eq!(d.integrity_stats().unwrap().violations, 1);
}

#[test]
fn a_reported_double_mapping_stops_the_next_command_wherever_it_goes() {
    let (mut d, mut now) = written();
    let slot5 = d.ftl.lookup(5).unwrap();
    d.ftl.corrupt(Corruption::L2p {
        lpn: 3,
        slot: slot5,
        reported: true,
    });
    let v = run(&mut d, &mut now, cmd(Op::Read, 60 * 8, 8)).expect("violation");
    assert_eq!(
        v.error,
        IntegrityError::DoubleMapped {
            slot: slot5,
            lpn: 3,
            holder: 5
        }
    );
}

#[test]
fn stale_data_and_a_mapping_to_invalidated_data_are_caught() {
    let (mut d, mut now) = written();
    let slot9 = d.ftl.lookup(9).unwrap();
    let (_, ver) = d.ftl.slot_record(slot9).unwrap();
    d.ftl.corrupt(Corruption::Version {
        slot: slot9,
        version: ver - 1,
    });
    let v = run(&mut d, &mut now, cmd(Op::Read, 9 * 8, 8)).expect("violation");
    assert_eq!(
        v.error,
        IntegrityError::StaleData {
            lpn: 9,
            got: ver - 1,
            want: ver
        }
    );

    // LPN 10 silently pointed at LPN 9's slot, which a later write of LPN 9
    // invalidates: reading LPN 10 finds no data where it maps.
    let (mut d, mut now) = written();
    let slot9 = d.ftl.lookup(9).unwrap();
    d.ftl.corrupt(Corruption::L2p {
        lpn: 10,
        slot: slot9,
        reported: false,
    });
    assert_eq!(run(&mut d, &mut now, cmd(Op::Write, 9 * 8, 8)), None);
    assert_eq!(run(&mut d, &mut now, cmd(Op::Flush, 0, 0)), None);
    let v = run(&mut d, &mut now, cmd(Op::Read, 10 * 8, 8)).expect("violation");
    assert_eq!(
        v.error,
        IntegrityError::Unbacked {
            lpn: 10,
            slot: slot9
        }
    );
}

#[test]
fn the_full_checks_bracket_the_run() {
    let (mut d, now) = written();
    let slot5 = d.ftl.lookup(5).unwrap();
    d.ftl.corrupt(Corruption::L2p {
        lpn: 3,
        slot: slot5,
        reported: false,
    });
    // No command touched LPN 3: the full check at the end finds it.
    let e = d.finish_integrity_check(now).unwrap_err();
    assert!(
        matches!(e, DeviceError::Violation(Violation { at: CheckPoint::End(t), .. }) if t == now),
        "{e}"
    );
    // A device already corrupt is refused at the start.
    let mut d = Emmc::new(&small()).unwrap();
    let mut t = 0;
    d.execute(t, &cmd(Op::Write, 0, 64));
    t += 1;
    d.execute(t, &cmd(Op::Flush, 0, 0));
    let slot0 = d.ftl.lookup(0).unwrap();
    d.ftl.corrupt(Corruption::Version {
        slot: slot0,
        version: 999,
    });
    let e = d.start_integrity_check().unwrap_err();
    assert!(
        matches!(
            e,
            DeviceError::Violation(Violation {
                at: CheckPoint::Start,
                ..
            })
        ),
        "{e}"
    );
}
