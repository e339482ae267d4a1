//! Hostile configuration values and text encodings through the real
//! `simctl` binary (issue 24): every case is a located error (file, line
//! or section, field, what was expected) with exit code 2, or it just
//! works — never an abort, a silent clamp, a wrapped number or a switch of
//! trace format.

use crate::common::{scratch, simctl};
use std::path::{Path, PathBuf};

const SCENARIO: &str = "configs/scenarios/rand-read-4k.toml";
const CMDQ_PROFILE: &str = "configs/devices/generic-emmc51-cmdq.toml";

/// Runs simctl expecting unusable input: exit code 2, no panic or abort;
/// returns stderr.
fn unusable(args: &[&str]) -> String {
    let o = simctl(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "simctl {args:?}: {err}");
    assert!(!err.contains("panicked"), "simctl {args:?}: {err}");
    assert!(
        !err.chars().any(|c| c.is_control() && c != '\n'),
        "a raw control character in {err:?}"
    );
    err
}

/// Runs simctl expecting success; returns stdout.
fn works(args: &[&str]) -> String {
    let o = simctl(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "simctl {args:?}: {err}");
    String::from_utf8(o.stdout).expect("utf-8")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `run SCENARIO --set KEY=VALUE ...` expecting unusable input.
fn set_fails(sets: &[&str]) -> String {
    let mut args = vec!["run", SCENARIO, "-q"];
    for kv in sets {
        args.extend(["--set", kv]);
    }
    unusable(&args)
}

// ---- item 24.1: limits before allocation ------------------------------

#[test]
fn sizing_counts_of_a_device_profile_are_refused_at_their_stated_limits() {
    let profile = "configs/scenarios/../devices/generic-emmc.toml";
    for (set, want) in [
        (
            "device.map_cache.entries=4294967295",
            "[map_cache] entries: 4294967295: expected 1..=1048576 map pages",
        ),
        (
            "device.read_buffer.pages=4294967295",
            "[read_buffer] pages: 4294967295: expected 1..=4096 NAND pages",
        ),
        (
            "device.read_buffer.prefetch_kib=4294967295",
            "[read_buffer] prefetch_kib: 4294967295: expected 0..=65536 KiB",
        ),
        (
            "device.write_buffer.size_kib=4294967292",
            "[write_buffer] size_kib: 4294967292: must be a multiple of 4",
        ),
        (
            "device.nand.channels=4294967295",
            "[nand] channels × dies_per_channel: 4294967295 × 2 = 8589934590 dies: at most 1024",
        ),
        (
            "device.nand.blocks_per_plane=4294967295",
            "at most 268435456 (2^28, 1 TiB raw) are supported",
        ),
        (
            "device.gc.stop_at_free_blocks_per_die=4294967295",
            "[gc] stop_at_free_blocks_per_die: 4294967295: expected at most the blocks per die (planes_per_die × blocks_per_plane = 2048)",
        ),
    ] {
        let e = set_fails(&[set]);
        // The value came from --set, merged over the profile: the error
        // names both.
        let source = format!("{profile} with the scenario's [device] settings and --set device.*: ");
        assert!(e.contains(&source) && e.contains(want), "{set}: {e}");
    }
}

// ---- item 24.3: smaller silent ones -----------------------------------

#[test]
fn a_cpu_clock_outside_the_range_or_above_the_table_is_refused() {
    let e = set_fails(&["host.cpu_freq_mhz=1e308"]);
    assert!(
        e.contains(&format!(
            "{SCENARIO}: host.cpu_freq_mhz = 1e308: expected a clock of 1..=100000 MHz"
        )),
        "{e}"
    );
    // With a frequency table the value was set to the top entry while the
    // report echoed the value given.
    let e = unusable(&[
        "run",
        SCENARIO,
        "--phone",
        "motog-2013",
        "--set",
        "host.cpu_freq_mhz=1200",
        "-q",
    ]);
    assert!(
        e.contains("host.cpu_freq_mhz = 1200.0: above the top of host.freq_table_mhz = [192.0, 300.0, 384.0, 600.0, 787.2, 998.4, 1094.4, 1190.4]")
            && e.contains("expected at most 1190.4 MHz"),
        "{e}"
    );
    for (v, shown) in [("inf", "inf"), ("-inf", "-inf"), ("nan", "NaN")] {
        let e = set_fails(&[&format!("host.cpu_freq_mhz={v}")]);
        assert!(
            e.contains(&format!(
                "{SCENARIO}: host.cpu_freq_mhz = {shown}: expected a clock of 1..=100000 MHz"
            )),
            "{v}: {e}"
        );
    }
    let dir = scratch("hostile_cfg_inf_clock");
    for v in ["inf", "nan", "-inf"] {
        let sc = write(
            &dir,
            "s.toml",
            format!(
                "name = \"t\"\n[host]\ncpu_freq_mhz = {v}\n[[files]]\nname = \"f\"\nsize_mib = 16\n[[jobs]]\nname = \"j\"\nfile = \"f\"\nop = \"read\"\npattern = \"random\"\nrequest_bytes = 4096\nrequests = 10\n"
            )
            .as_bytes(),
        );
        let e = unusable(&["run", s(&sc), "-q"]);
        assert!(
            e.contains(&format!("{}: host.cpu_freq_mhz = ", sc.display()))
                && e.contains("expected a clock of 1..=100000 MHz"),
            "{v}: {e}"
        );
    }
}

#[test]
fn packed_commands_on_a_cmdq_run_are_a_located_error() {
    for key in ["packed", "packed_read"] {
        let set = format!("device.features.{key}=true");
        let e = unusable(&[
            "run",
            SCENARIO,
            "--device",
            CMDQ_PROFILE,
            "--set",
            &set,
            "-q",
        ]);
        assert!(
            e.contains(&format!("generic-emmc51-cmdq.toml: [features] {key}: true, but the run uses the CMDQ driver"))
                && e.contains("driver.mode = \"legacy\""),
            "{e}"
        );
    }
    // The legacy driver on the same card packs.
    works(&[
        "run",
        SCENARIO,
        "--device",
        CMDQ_PROFILE,
        "--set",
        "device.features.packed=true",
        "--set",
        "driver.mode=legacy",
        "-q",
    ]);
}

#[test]
fn a_completion_before_its_issue_is_a_located_error() {
    let dir = scratch("hostile_cfg_done_before_time");
    // Plain integers (the quick path), a decimal time (the general path).
    for (name, rows) in [
        ("q.csv", "0,R,0,8,100\n200,R,8,8,150\n"),
        ("d.csv", "0,R,0,8,100\n200.5,R,8,8,150\n"),
    ] {
        let t = write(
            &dir,
            name,
            format!("time_us,op,sector,sectors,done_us\n{rows}").as_bytes(),
        );
        let e = unusable(&["replay", s(&t), "-q"]);
        assert!(
            e.contains(&format!(
                "{}:3: field `done_us`: 150 is before the issue time time_us = 200",
                t.display()
            )),
            "{e}"
        );
    }
}

// ---- item 24.2: SSDSim is never read as DiskSim -----------------------

#[test]
fn an_ssdsim_file_is_never_read_as_disksim() {
    let dir = scratch("hostile_cfg_ssdsim");
    // Type 3 in the first record: DiskSim hex flags, not SSDSim.
    let t = write(
        &dir,
        "run.ascii",
        b"26214000 0 303574 7 3\n26215000 0 303574 7 0\n",
    );
    let e = unusable(&["replay", s(&t), "-q"]);
    assert!(
        e.contains(&format!(
            "{}:1: field `format`: the file name says SSDSim",
            t.display()
        )) && e.contains("--format ssdsim (times in ns) or --format disksim (times in ms)"),
        "{e}"
    );
    // Forced, the SSDSim reader refuses the type at its line.
    let e = unusable(&["replay", s(&t), "--format", "ssdsim", "-q"]);
    assert!(
        e.contains(&format!(
            "{}:1: field `type`: expected 0 (write) or 1 (read), found `3`",
            t.display()
        )),
        "{e}"
    );
    // A valid SSDSim file: times stay nanoseconds (not read as ms).
    let t = write(
        &dir,
        "ok.ascii",
        b"26214000 0 303574 7 0\n26214500 0 303581 7 1\n",
    );
    let csv = works(&["trace", "convert", s(&t), "--to", "csv"]);
    let times: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(times, ["26214000", "26214500"], "{csv}");
    assert!(csv.starts_with("time_ns,"), "{csv}");
    // A later type-3 record is an SSDSim error at its line.
    let t = write(
        &dir,
        "late.ascii",
        b"26214000 0 303574 7 0\n26214500 0 303581 7 3\n",
    );
    let e = unusable(&["replay", s(&t), "-q"]);
    assert!(
        e.contains(&format!("{}:2: field `type`", t.display())),
        "{e}"
    );
}

// ---- item 24.4: weak messages ------------------------------------------

#[test]
fn a_huge_fio_offset_names_file_line_key_and_limit() {
    let dir = scratch("hostile_cfg_fio_offset");
    let f = write(
        &dir,
        "o.fio",
        b"[global]\nrw=randread\nbs=4k\nsize=16m\n[j]\noffset=18446744073709551615\n",
    );
    let e = unusable(&["run", s(&f), "-q"]);
    assert!(
        e.contains(&format!(
            "{}:6: key 'offset' = '18446744073709551615': ",
            f.display()
        )) && e.contains("expected at most 1125899906842624 bytes (2^50, 1 PiB)"),
        "{e}"
    );
}

#[test]
fn a_utf8_bom_is_stripped_from_every_text_input() {
    let dir = scratch("hostile_cfg_bom");
    let bom = "\u{feff}";
    let fio = write(
        &dir,
        "b.fio",
        format!("{bom}[global]\nrw=randread\nbs=4k\nsize=16m\n[j]\n").as_bytes(),
    );
    works(&["run", s(&fio), "-q"]);
    let plain = std::fs::read_to_string(crate::common::root().join(SCENARIO)).unwrap();
    let plain = plain.replace(
        "../devices/",
        &format!("{}/configs/devices/", crate::common::root().display()),
    );
    let sc = write(&dir, "b.toml", format!("{bom}{plain}").as_bytes());
    works(&["run", s(&sc), "-q"]);
    let csv = write(
        &dir,
        "b.csv",
        format!("{bom}time_us,op,sector,sectors\n0,R,0,8\n").as_bytes(),
    );
    assert!(works(&["trace", "convert", s(&csv), "--to", "csv"]).contains("\n0,R,0,8,"));
    let ascii = write(&dir, "b.ascii", format!("{bom}0 0 8 8 1\n").as_bytes());
    assert!(works(&["trace", "convert", s(&ascii), "--to", "csv"]).contains("\n0,R,8,8,"));
}

#[test]
fn cr_only_line_endings_are_a_located_error_without_raw_control_characters() {
    let dir = scratch("hostile_cfg_cr");
    let fio = write(&dir, "c.fio", b"[global]\rrw=randread\rsize=16m\r[j]\r");
    let e = unusable(&["run", s(&fio), "-q"]);
    assert!(
        e.contains(&format!(
            "{}: CR-only line endings (old Mac) at byte 8 (line 1): convert the file to LF",
            fio.display()
        )),
        "{e}"
    );
    for (name, text) in [
        ("c.csv", &b"time_us,op,sector,sectors\r0,R,0,8\r"[..]),
        ("c.trace", &b"0 0 1 8 1\r5 0 1 8 0\r"[..]),
    ] {
        let t = write(&dir, name, text);
        let e = unusable(&["replay", s(&t), "-q"]);
        assert!(
            e.contains(&format!(
                "{}:1: field `line`: CR-only line endings",
                t.display()
            )),
            "{e}"
        );
    }
    // A control character inside a field is shown escaped.
    let t = write(&dir, "esc.csv", b"time_us,op,sector,sectors\n0,R\x1b,0,8\n");
    let e = unusable(&["replay", s(&t), "-q"]);
    assert!(e.contains("R\\u{1b}"), "{e}");
}
