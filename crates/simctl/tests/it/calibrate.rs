//! `simctl calibrate` through the binary: it recovers a parameter from
//! targets a run with that parameter produced (a device parameter alone,
//! or device and host parameters of a phone jointly), its output is
//! reproducible, and bad targets, parameters and bounds give located
//! errors.

use crate::common::*;
use std::path::{Path, PathBuf};

const SCENARIO: &str = "crates/simctl/tests/calibrate/small-rand-read.toml";

/// The IOPS of the small scenario with `t_r_us` on the generic profile.
fn iops_with_t_r(t_r_us: f64, tmp: &Path) -> f64 {
    let set = format!("device.nand.t_r_us={t_r_us}");
    let r = report(&["run", SCENARIO, "--set", &set], tmp);
    r["throughput"]["iops"].as_f64().unwrap()
}

/// A targets file in `tmp` with one IOPS target.
fn targets(tmp: &Path, body: &str) -> PathBuf {
    let p = tmp.join("targets.toml");
    std::fs::write(&p, body).unwrap();
    p
}

fn scenario_abs() -> String {
    root().join(SCENARIO).display().to_string()
}

fn calibrate(t: &Path, out: &Path, extra: &[&str]) -> String {
    calibrate_iters(t, out, "20", extra)
}

/// `calibrate` with at most `iters` Nelder–Mead iterations.
fn calibrate_iters(t: &Path, out: &Path, iters: &str, extra: &[&str]) -> String {
    let (t, o) = (t.to_str().unwrap(), out.to_str().unwrap());
    let mut a = vec![
        "calibrate",
        "configs/devices/generic-emmc.toml",
        "--targets",
        t,
        "--param",
        "device.nand.t_r_us=20:200",
        "--max-iters",
        iters,
        "--out",
        o,
    ];
    a.extend_from_slice(extra);
    simctl_ok(&a)
}

#[test]
fn recovers_the_read_time_that_produced_the_targets_and_writes_a_usable_profile() {
    let tmp = scratch("calibrate_recover");
    let measured = iops_with_t_r(50.0, &tmp);
    let t = targets(
        &tmp,
        &format!(
            "note = \"from a run with t_r_us = 50\"\n[[targets]]\nname = \"iops\"\nscenario = {:?}\nmetric = \"throughput.iops\"\nvalue = {measured}\n",
            scenario_abs()
        ),
    );
    let out = tmp.join("fitted.toml");
    let table = calibrate(&t, &out, &[]);
    assert!(table.contains("device.nand.t_r_us"), "{table}");
    let text = std::fs::read_to_string(&out).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let fitted = doc["nand"]["t_r_us"].as_float().unwrap();
    assert!((fitted - 50.0).abs() <= 1.0, "fitted t_r_us = {fitted}");
    // Comments of the input survive; the record names the fit.
    assert!(text.contains("# µs, lower (LSB) page"), "{text}");
    let rec = &doc["calibration"]["record"];
    assert!(rec["command"]
        .as_str()
        .unwrap()
        .starts_with("simctl calibrate "));
    let row = &rec["targets"].as_array().unwrap()[0];
    assert_eq!(row["measured"].as_float(), Some(measured));
    assert!(
        row["relative_error"].as_float().unwrap().abs() < 0.01,
        "{row}"
    );
    // The calibrated profile runs, and reproduces the recorded value.
    let r = report(&["run", SCENARIO, "--device", out.to_str().unwrap()], &tmp);
    assert_eq!(
        r["throughput"]["iops"].as_f64(),
        row["achieved"].as_float(),
        "the record's achieved value is the profile's"
    );
}

#[test]
fn the_same_inputs_give_a_byte_identical_profile_whatever_the_thread_count() {
    let tmp = scratch("calibrate_repro");
    let t = targets(
        &tmp,
        &format!(
            "[[targets]]\nscenario = {:?}\nmetric = \"latency_us.mean\"\nband = [150.0, 200.0]\nschedulers = [\"noop\", \"deadline\"]\n[[targets]]\nscenario = {:?}\nmetric = \"throughput.mb_per_s\"\nvalue = 12.0\nweight = 0.5\n",
            scenario_abs(),
            scenario_abs()
        ),
    );
    let a = tmp.join("a.toml");
    let b = tmp.join("b.toml");
    let ta = calibrate(&t, &a, &["--jobs", "1"]);
    calibrate(&t, &b, &["--jobs", "2"]);
    // The command is recorded with the output path, which differs: compare
    // everything else.
    let strip = |p: &Path| {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("command = "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&a), strip(&b));
    assert!(ta.contains("(noop)") && ta.contains("(deadline)"), "{ta}");
    // And a second run into the same path is byte-identical, command included.
    let first = std::fs::read(&a).unwrap();
    calibrate(&t, &a, &["--jobs", "2"]);
    assert_eq!(first, std::fs::read(&a).unwrap());
}

#[test]
fn bad_targets_parameters_and_bounds_are_reported_where_they_are() {
    let tmp = scratch("calibrate_errors");
    let out = tmp.join("out.toml");
    let o = out.to_str().unwrap();
    let sc = scenario_abs();
    let bad_target = |body: String, expect: &[&str]| {
        let t = targets(&tmp, &body);
        let err = simctl_err(&[
            "calibrate",
            "configs/devices/generic-emmc.toml",
            "--targets",
            t.to_str().unwrap(),
            "--param",
            "device.nand.t_r_us=20:200",
            "--out",
            o,
        ]);
        for e in expect {
            assert!(err.contains(e), "expected `{e}` in: {err}");
        }
    };
    bad_target(
        format!("[[targets]]\nname = \"x\"\nscenario = {sc:?}\nmetric = \"throughput.iops\"\n"),
        &["targets.toml: targets[0] (x)", "add value = X or band"],
    );
    bad_target(
        format!("[[targets]]\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = 1.0\n[[targets]]\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nband = [9.0, 3.0]\n"),
        &["targets[1]", "band = [9, 3]", "low <= high"],
    );
    bad_target(
        format!("[[targets]]\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = 1.0\nschedulers = [\"nope\"]\n"),
        &["targets[0]", "unknown scheduler `nope`"],
    );
    bad_target(
        "[[targets]]\nscenario = \"missing.toml\"\nmetric = \"throughput.iops\"\nvalue = 1.0\n"
            .into(),
        &["targets[0]", "\"missing.toml\": no such file"],
    );
    bad_target(
        format!("[[targets]]\nname = \"m\"\nscenario = {sc:?}\nmetric = \"throughput.iopz\"\nvalue = 1.0\n"),
        &["target `m`", "`iopz` not found in `throughput`", "keys there: iops"],
    );
    bad_target(
        format!("[[targets]]\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = 1.0\nwieght = 2\n"),
        &["targets.toml", "wieght"],
    );
    let t = targets(
        &tmp,
        &format!("[[targets]]\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = 1000.0\n"),
    );
    let ts = t.to_str().unwrap();
    let bad_param = |p: &str, expect: &str| {
        let err = simctl_err(&[
            "calibrate",
            "configs/devices/generic-emmc.toml",
            "--targets",
            ts,
            "--param",
            p,
            "--out",
            o,
        ]);
        assert!(
            err.contains(expect),
            "--param {p}: expected `{expect}` in: {err}"
        );
    };
    bad_param("device.nand.t_rr_us=20:200", "no key `t_rr_us` in [nand]");
    bad_param("device.nand.t_r_us=200:20", "expected 0 < LOW < HIGH");
    bad_param("device.nand.t_r_us=0:20", "expected 0 < LOW < HIGH");
    bad_param(
        "device.nand.t_r_us=100:200",
        "value 64 lies outside the bounds 100:200",
    );
    bad_param("device.nand.t_r_us", "expected KEY=LOW:HIGH");
    bad_param("host.syscall_us=1:100", "fitting one needs a phone");
    bad_param("seed=1:100", "not a profile key");
    bad_param("device.bus.mode=1:2", "not a number");
    // The output may not overwrite an input.
    let err = simctl_err(&[
        "calibrate",
        "configs/devices/generic-emmc.toml",
        "--targets",
        ts,
        "--param",
        "device.nand.t_r_us=20:200",
        "--out",
        "configs/devices/generic-emmc.toml",
    ]);
    assert!(err.contains("refusing to overwrite an input"), "{err}");
    assert!(!out.exists(), "no output after a failed calibration");
}

/// Device and host parameters of a phone are fitted together: targets from
/// a Moto G run with tR = 50 µs (device) and a 20 µs system call (host)
/// pin both — device time per request moves with tR only, the system-call
/// layer's time with `syscall_us` only — and the two calibrated profiles,
/// used together, reproduce the recorded values.
#[test]
fn fits_a_phones_device_and_host_parameters_jointly_into_two_profiles() {
    let tmp = scratch("calibrate_joint");
    let truth = report(
        &[
            "run",
            SCENARIO,
            "--phone",
            "motog-2013",
            "--set",
            "device.nand.t_r_us=50",
            "--set",
            "host.syscall_us=20",
        ],
        &tmp,
    );
    let (dev_us, sys_us) = (
        truth["breakdown_us"]["device"].as_f64().unwrap(),
        truth["breakdown_us"]["syscall_fs"].as_f64().unwrap(),
    );
    let t = targets(
        &tmp,
        &format!(
            "[[targets]]\nname = \"device\"\nscenario = {sc:?}\nmetric = \"breakdown_us.device\"\nvalue = {dev_us}\n[[targets]]\nname = \"syscall\"\nscenario = {sc:?}\nmetric = \"breakdown_us.syscall_fs\"\nvalue = {sys_us}\n",
            sc = scenario_abs()
        ),
    );
    let (dev, host) = (tmp.join("dev.toml"), tmp.join("host.toml"));
    let table = simctl_ok(&[
        "calibrate",
        "configs/phones/motog-2013.toml",
        "--targets",
        t.to_str().unwrap(),
        "--param",
        "device.nand.t_r_us=20:200",
        "--param",
        "host.syscall_us=5:80",
        "--max-iters",
        "30",
        "--out",
        dev.to_str().unwrap(),
        "--host-out",
        host.to_str().unwrap(),
    ]);
    assert!(
        table.contains("device profile") && table.contains("host profile"),
        "{table}"
    );
    let read =
        |p: &Path| -> toml::Table { toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let (d, h) = (read(&dev), read(&host));
    let t_r = d["nand"]["t_r_us"].as_float().unwrap();
    let sys = h["syscall_us"].as_float().unwrap();
    assert!((t_r - 50.0).abs() <= 1.0, "fitted t_r_us = {t_r}");
    assert!((sys - 20.0).abs() <= 0.5, "fitted syscall_us = {sys}");
    // Each file carries the same record of the whole fit, and only its own
    // values changed.
    for doc in [&d, &h] {
        let keys: Vec<&str> = doc["calibration"]["record"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["key"].as_str().unwrap())
            .collect();
        assert_eq!(keys, ["device.nand.t_r_us", "host.syscall_us"]);
    }
    assert_eq!(d["calibration"]["record"], h["calibration"]["record"]);
    assert!(h.get("nand").is_none() && d.get("syscall_us").is_none());
    // Used together (the phone, its fitted device, its fitted host), they
    // reproduce the recorded values.
    let r = report(
        &[
            "run",
            SCENARIO,
            "--phone",
            "motog-2013",
            "--device",
            dev.to_str().unwrap(),
            "--set",
            &format!("host.profile={}", host.display()),
        ],
        &tmp,
    );
    let rows = d["calibration"]["record"]["targets"].as_array().unwrap();
    assert_eq!(
        r["breakdown_us"]["device"].as_f64(),
        rows[0]["achieved"].as_float()
    );
    assert_eq!(
        r["breakdown_us"]["syscall_fs"].as_f64(),
        rows[1]["achieved"].as_float()
    );
    // An output without parameters of its kind, or one overwriting an
    // input, is refused.
    let refused = |out: [&str; 2]| {
        simctl_err(&[
            "calibrate",
            "configs/phones/motog-2013.toml",
            "--targets",
            t.to_str().unwrap(),
            "--param",
            "host.syscall_us=5:80",
            out[0],
            out[1],
        ])
    };
    let err = refused(["--out", dev.to_str().unwrap()]);
    assert!(
        err.contains("--out") && err.contains("no device.* parameter"),
        "{err}"
    );
    let err = refused(["--host-out", "configs/hosts/snapdragon400.toml"]);
    assert!(err.contains("refusing to overwrite an input"), "{err}");
}

/// A target with `weight = 0` is held out: run and recorded with its
/// error (`held_out = true`, "(held out)" in the printed fit), but it does
/// not steer the search — a contradicting held-out measurement leaves the
/// fit where the fitted target puts it. A file of held-out targets only is
/// a located error.
#[test]
fn held_out_targets_are_recorded_but_not_fitted() {
    let tmp = scratch("calibrate_held_out");
    let measured = iops_with_t_r(50.0, &tmp);
    let t = targets(
        &tmp,
        &format!(
            "[[targets]]\nname = \"fitted\"\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = {measured}\n[[targets]]\nname = \"validation\"\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = {v}\nweight = 0\n",
            sc = scenario_abs(),
            v = measured * 3.0
        ),
    );
    let out = tmp.join("fitted.toml");
    let table = calibrate(&t, &out, &[]);
    assert!(table.contains("(held out)"), "{table}");
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let fitted = doc["nand"]["t_r_us"].as_float().unwrap();
    assert!((fitted - 50.0).abs() <= 1.0, "fitted t_r_us = {fitted}");
    let rows = doc["calibration"]["record"]["targets"].as_array().unwrap();
    assert_eq!(rows[0].get("held_out"), None);
    assert_eq!(rows[1]["held_out"].as_bool(), Some(true));
    let err = rows[1]["relative_error"].as_float().unwrap();
    assert!((err + 2.0 / 3.0).abs() < 0.02, "validation error {err}");

    let only = targets(
        &tmp,
        &format!(
            "[[targets]]\nscenario = {:?}\nmetric = \"throughput.iops\"\nvalue = 100.0\nweight = 0\n",
            scenario_abs()
        ),
    );
    let e = simctl_err(&[
        "calibrate",
        "configs/devices/generic-emmc.toml",
        "--targets",
        only.to_str().unwrap(),
        "--param",
        "device.nand.t_r_us=20:200",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(e.contains("nothing to fit"), "{e}");
}

/// The printed fit says how the search ended: a simplex whose objective
/// values all agree has converged; `--max-iters` cutting the search short
/// is said, since more iterations may still lower the objective.
#[test]
fn the_fit_says_whether_the_search_converged_or_hit_max_iters() {
    let tmp = scratch("calibrate_termination");
    // One IOPS target of the small scenario, given by `goal`.
    let iops_target = |goal: &str| {
        targets(
            &tmp,
            &format!(
                "[[targets]]\nscenario = {:?}\nmetric = \"throughput.iops\"\n{goal}\n",
                scenario_abs()
            ),
        )
    };
    // Every point of the box meets the band: the objective is 0 at every
    // vertex, so the simplex has converged at once.
    let t = iops_target("band = [1.0, 1.0e9]");
    let table = calibrate(&t, &tmp.join("band.toml"), &[]);
    assert!(table.contains("search: converged"), "{table}");
    // A point target after one iteration: cut short.
    let t = iops_target(&format!("value = {}", iops_with_t_r(50.0, &tmp)));
    let table = calibrate_iters(&t, &tmp.join("short.toml"), "1", &[]);
    assert!(
        table.contains("search: stopped by --max-iters 1 before the simplex converged"),
        "{table}"
    );
}

/// A published measurement table's metric as a target: each run under one
/// of the table's schedulers is compared with that scheduler's measured
/// mean, and the output profile records `[fit] targets` with the metric's
/// name (`TABLE:METRIC`), as does a band target that says which published
/// metric it is taken from (`measures`); a held-out target is not recorded.
#[test]
fn a_measurement_target_is_fitted_and_recorded_in_the_profiles_fit_targets() {
    let tmp = scratch("calibrate_measurement");
    let androbench = root().join("configs/scenarios/androbench-3.4.toml");
    let t = targets(
        &tmp,
        &format!(
            "[[targets]]\nscenario = {a:?}\nmeasurement = \"motog-2013-androbench34:rand_read_iops\"\nschedulers = [\"noop\", \"cfq\"]\n\
             [[targets]]\nscenario = {a:?}\nmetric = \"androbench.seq_read_mb_s\"\nband = [53.0, 63.0]\nschedulers = [\"noop\"]\nmeasures = \"motog-2013-androbench34:seq_read_mb_s\"\n\
             [[targets]]\nscenario = {a:?}\nmetric = \"androbench.seq_write_mb_s\"\nband = [12.0, 16.0]\nschedulers = [\"noop\"]\nmeasures = \"motog-2013-androbench34:seq_write_mb_s\"\nweight = 0\n",
            a = androbench.display().to_string()
        ),
    );
    let out = tmp.join("motog-fitted.toml");
    let table = simctl_ok(&[
        "calibrate",
        "configs/phones/motog-2013.toml",
        "--targets",
        t.to_str().unwrap(),
        "--param",
        "device.nand.t_r_us=25:250",
        "--max-iters",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        table.contains("[fit] targets: motog-2013-androbench34:rand_read_iops, motog-2013-androbench34:seq_read_mb_s\n"),
        "{table}"
    );
    // The blog's noop and cfq means are the measured values.
    assert!(
        table.contains("1329.92") && table.contains("1322.95"),
        "{table}"
    );
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let fit: Vec<&str> = doc["fit"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        fit,
        [
            "motog-2013-androbench34:rand_read_iops",
            "motog-2013-androbench34:seq_read_mb_s"
        ]
    );
    let rows = doc["calibration"]["record"]["targets"].as_array().unwrap();
    assert_eq!(rows[0]["scheduler"].as_str(), Some("noop"));
    assert_eq!(rows[0]["measured"].as_float(), Some(1329.92));
    assert_eq!(rows[1]["measured"].as_float(), Some(1322.95));
    // The calibrated device profile is usable as it is.
    let set = format!("device.profile={}", out.display());
    simctl_ok(&["run", SCENARIO, "--set", &set, "--json", "-"]);
}

/// A finding's claim as a target (hinge on each of its checks) is recorded
/// as `finding-N`; unknown tables, metrics and findings, and a target that
/// mixes kinds, are located errors with exit status 2.
#[test]
fn finding_targets_are_recorded_and_bad_measurement_or_finding_targets_exit_2() {
    let tmp = scratch("calibrate_finding");
    let t = targets(&tmp, "[[targets]]\nfinding = \"finding-1\"\n");
    let out = tmp.join("fitted.toml");
    let table = calibrate_iters(&t, &out, "1", &[]);
    assert!(table.contains("[fit] targets: finding-1\n"), "{table}");
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["fit"]["targets"][0].as_str(), Some("finding-1"));
    // Finding 1 holds on the generic profile: the hinge is 0.
    let rows = doc["calibration"]["record"]["targets"].as_array().unwrap();
    assert_eq!(rows[0]["achieved"].as_float(), Some(0.0), "{rows:?}");

    let sc = scenario_abs();
    let o = out.to_str().unwrap();
    let cases = [
        (
            "[[targets]]\nfinding = \"finding-99\"\n".to_string(),
            "targets[0]: finding = \"finding-99\": unknown finding `finding-99` (known: finding-1",
        ),
        (
            format!("[[targets]]\nname = \"t\"\nscenario = {sc:?}\nmeasurement = \"galaxy-s2-blog:iops\"\n"),
            "targets[0] (t): measurement = \"galaxy-s2-blog:iops\": unknown measurement table `galaxy-s2-blog` (known: motog-2013-androbench34",
        ),
        (
            format!("[[targets]]\nscenario = {sc:?}\nmeasurement = \"motog-2013-androbench34:iops\"\n"),
            "has no metric `iops` (metrics: seq_read_mb_s",
        ),
        (
            format!("[[targets]]\nscenario = {sc:?}\nmeasurement = \"motog-2013-androbench34:rand_read_iops\"\nvalue = 3.0\n"),
            "remove `value`",
        ),
        (
            format!("[[targets]]\nscenario = {sc:?}\nmeasurement = \"motog-2013-androbench34:rand_read_iops\"\nschedulers = [\"mq-deadline\"]\n"),
            "scheduler `mq-deadline` is not in measurement table `motog-2013-androbench34`",
        ),
        (
            format!("[[targets]]\nscenario = {sc:?}\nmetric = \"throughput.iops\"\nvalue = 1.0\nmeasures = \"motog-2013-androbench34:nope\"\n"),
            "measures = \"motog-2013-androbench34:nope\"",
        ),
        (
            "[[targets]]\nfinding = \"finding-7\"\n".to_string(),
            "finding-7 is about motog-2013 only",
        ),
    ];
    for (body, expect) in cases {
        let t = targets(&tmp, &body);
        let o = simctl(&[
            "calibrate",
            "configs/devices/generic-emmc.toml",
            "--targets",
            t.to_str().unwrap(),
            "--param",
            "device.nand.t_r_us=20:200",
            "--out",
            o,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{body}: {err}");
        assert!(err.contains(expect), "expected `{expect}` in: {err}");
    }
}
