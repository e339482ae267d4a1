//! `simctl sweep` and `simctl merge` through the real binary: output
//! byte-identical whatever the workers or sharding, resume, failures,
//! located grid errors, Slurm scripts.

use crate::common::{root, scratch, simctl, simctl_err, simctl_ok, simctl_ok_in};
use std::collections::BTreeMap;
use std::path::Path;

/// The tests' grid: 4 schedulers × 2 device profiles × 2 small workloads
/// × 2 seeds (relative to the repository root, where simctl runs).
const GRID: &str = "crates/simctl/tests/sweep-grid/grid.toml";

/// Every file under `dir`, relative path → bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The unsharded layout of `dir`: sweep.json, results.csv and cells/.
fn layout(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let t = tree(dir);
    let keep = |k: &String| k == "sweep.json" || k == "results.csv" || k.starts_with("cells/");
    t.into_iter().filter(|(k, _)| keep(k)).collect()
}

fn assert_same(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    let ka: Vec<_> = a.keys().collect();
    let kb: Vec<_> = b.keys().collect();
    assert_eq!(ka, kb, "{what}: different files");
    for (k, v) in a {
        assert!(v == &b[k], "{what}: {k} differs");
    }
}

fn sweep(grid: &str, out: &Path, extra: &[&str]) -> String {
    let o = out.display().to_string();
    let mut args = vec!["sweep", grid, "--out", &o];
    args.extend(extra);
    simctl_ok(&args)
}

#[test]
fn sweep_is_identical_across_workers_shards_and_resume() {
    let dir = scratch("sweep-identical");
    let grid = GRID;

    // --jobs 1 and --jobs 2: byte-identical.
    let serial = dir.join("serial");
    let out = sweep(grid, &serial, &["--jobs", "1"]);
    assert!(out.contains("32 cells; ran 32, skipped 0"), "{out}");
    // Devices are preconditioned once per profile and seed, not per cell.
    assert!(out.contains("4 preconditioned device(s)"), "{out}");
    let parallel = dir.join("parallel");
    sweep(grid, &parallel, &["--jobs", "2"]);
    let reference = tree(&serial);
    assert_same(&reference, &tree(&parallel), "--jobs 1 vs --jobs 2");

    // The layout: 32 cells, a CSV with a header and one row per cell.
    let cells = reference.keys().filter(|k| k.starts_with("cells/")).count();
    assert_eq!(cells, 32);
    let csv = String::from_utf8(reference["results.csv"].clone()).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("cell,index,scheduler,workload,phone,device,seed,set_variant,sets,"));
    for col in [
        "iops",
        "mb_per_s",
        "lat_mean_us",
        "lat_p50_us",
        "lat_p99_us",
        "lat_p999_us",
        "jain",
        "waf",
        "gc_runs",
    ] {
        assert!(
            header.split(',').any(|c| c == col),
            "no column {col}: {header}"
        );
    }
    assert_eq!(lines.count(), 32);
    let report: serde_json::Value = serde_json::from_slice(
        reference
            .iter()
            .find(|(k, _)| k.starts_with("cells/"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(report["schema"], "mmcsim-report/2");
    // The CSV's numbers are the report's, digit for digit.
    let row = csv.lines().nth(1).unwrap();
    let fields: Vec<&str> = row.split(',').collect();
    let cols: Vec<&str> = header.split(',').collect();
    let text = String::from_utf8(reference[&format!("cells/{}.json", fields[0])].clone()).unwrap();
    for (name, key) in [("iops", "iops"), ("lat_p99_us", "p99"), ("jain", "jain")] {
        let v = fields[cols.iter().position(|c| *c == name).unwrap()];
        assert!(
            text.contains(&format!("\"{key}\": {v},"))
                || text.contains(&format!("\"{key}\": {v}\n")),
            "{name} = {v} not in the report"
        );
    }

    // Shards 1/3..3/3 merged: the unsharded layout, byte for byte.
    let shards: Vec<_> = (1..=3).map(|i| dir.join(format!("shard{i}"))).collect();
    let mut total = 0;
    for (i, s) in shards.iter().enumerate() {
        let spec = format!("{}/3", i + 1);
        let out = sweep(grid, s, &["--shard", &spec, "--jobs", "2"]);
        let ran: usize = out
            .split("ran ")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        total += ran;
    }
    assert_eq!(total, 32, "the shards together run every cell once");
    let merged = dir.join("merged");
    let args: Vec<String> = ["merge".to_string()]
        .into_iter()
        .chain(shards.iter().map(|s| s.display().to_string()))
        .chain(["--out".to_string(), merged.display().to_string()])
        .collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    simctl_ok(&a);
    assert_same(&reference, &layout(&merged), "shards + merge vs unsharded");

    // Missing and overlapping shards are refused, naming the cells.
    let s = |i: usize| shards[i].display().to_string();
    let bad = dir.join("bad").display().to_string();
    let err = simctl_err(&["merge", &s(0), &s(1), "--out", &bad]);
    assert!(
        err.contains("finished in no input") && err.contains("shard 3/3"),
        "{err}"
    );
    let err = simctl_err(&["merge", &s(0), &s(1), &s(2), &s(0), "--out", &bad]);
    assert!(
        err.contains("overlapping") || err.contains("more than one input"),
        "{err}"
    );
    let unsharded = serial.display().to_string();
    let err = simctl_err(&["merge", &s(0), &unsharded, "--out", &bad]);
    assert!(
        err.contains("more than one input") && err.contains("cell 0000-"),
        "{err}"
    );
    assert!(
        !dir.join("bad/results.csv").exists(),
        "a refused merge writes nothing"
    );

    // Resume: delete one cell; only that cell runs again, the others are
    // untouched, and the result is the same.
    let victim = reference
        .keys()
        .filter(|k| k.starts_with("cells/"))
        .nth(7)
        .unwrap()
        .clone();
    let mtime = |k: &str| {
        std::fs::metadata(parallel.join(k))
            .unwrap()
            .modified()
            .unwrap()
    };
    let other = reference
        .keys()
        .find(|k| k.starts_with("cells/") && **k != victim)
        .unwrap()
        .clone();
    let before = mtime(&other);
    std::fs::remove_file(parallel.join(&victim)).unwrap();
    // A killed run's temporary file is not mistaken for a finished cell.
    let partial = victim.replace("cells/", "cells/.") + ".123.tmp";
    std::fs::write(parallel.join(&partial), b"{\"schema\": \"mmcsim-rep").unwrap();
    let out = sweep(grid, &parallel, &["--jobs", "2"]);
    assert!(out.contains("ran 1, skipped 31"), "{out}");
    assert!(out.contains("1 preconditioned device(s)"), "{out}");
    assert_eq!(mtime(&other), before, "a finished cell was rewritten");
    assert_same(&reference, &tree(&parallel), "resumed vs uninterrupted");

    // A truncated report is not complete: it runs again.
    let cut = &reference[&victim][..100];
    std::fs::write(parallel.join(&victim), cut).unwrap();
    let out = sweep(grid, &parallel, &["--jobs", "2"]);
    assert!(out.contains("ran 1, skipped 31"), "{out}");
    assert_same(&reference, &tree(&parallel), "after a truncated cell");

    // Nothing left: a rerun runs nothing.
    let out = sweep(grid, &parallel, &[]);
    assert!(out.contains("ran 0, skipped 32"), "{out}");

    // Another grid into the same directory is refused.
    std::fs::write(
        dir.join("other.toml"),
        format!(
            "schedulers = [\"noop\"]\nworkloads = [\"{}\"]\n",
            root()
                .join("crates/simctl/tests/sweep-grid/short.csv")
                .display()
        ),
    )
    .unwrap();
    let other_grid = dir.join("other.toml").display().to_string();
    let err = simctl_err(&["sweep", &other_grid, "--out", &unsharded]);
    assert!(err.contains("holds another sweep"), "{err}");
}

#[test]
fn a_failed_cell_is_reported_with_its_coordinates_and_the_others_are_kept() {
    let dir = scratch("sweep-failure");
    let devices = root().join("configs/devices");
    // The command-queue driver needs a profile with [cmdq]: the generic
    // eMMC 4.5 cells fail, the eMMC 5.1 cells run.
    let grid = format!(
        r#"schedulers = ["noop"]
workloads = ["{}"]
devices = ["{}", "{}"]
seeds = [5]
sets = [["driver.mode=cmdq", "precondition.fill_fraction=0.1", "precondition.steady_state=false"]]
"#,
        root().join("traces/sample.csv").display(),
        devices.join("generic-emmc.toml").display(),
        devices.join("generic-emmc51-cmdq.toml").display()
    );
    std::fs::write(dir.join("grid.toml"), grid).unwrap();
    let g = dir.join("grid.toml").display().to_string();
    let out_dir = dir.join("out");
    let o = out_dir.display().to_string();
    let out = simctl(&["sweep", &g, "--out", &o]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cell 0000-")
            && stderr.contains("generic-emmc.toml")
            && stderr.contains("seed=5")
            && stderr.contains("cmdq"),
        "{stderr}"
    );
    assert!(
        stdout.contains("ran 1, skipped 0 already finished, failed 1"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.contains("generic-emmc51-cmdq.toml"));
    // The failed cell is the one rerun next time.
    let out = simctl(&["sweep", &g, "--out", &o]);
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("ran 0, skipped 1 already finished, failed 1"));
}

/// The phone grid: motog-2013 by name and nexus-s by file, each under its
/// own scheduler, × 2 workloads × 2 seeds.
const PHONE_GRID: &str = "crates/simctl/tests/sweep-grid/phones.toml";

/// The preconditioning overrides of the tests' grids.
const HALF_FULL: [&str; 4] = [
    "--set",
    "precondition.fill_fraction=0.5",
    "--set",
    "precondition.max_overwrite_factor=0.3",
];

/// Rows of `results.csv` as column → value maps.
fn rows(csv: &[u8]) -> Vec<BTreeMap<String, String>> {
    let text = String::from_utf8(csv.to_vec()).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

/// What `simctl run|replay WORKLOAD --json` writes with `args`.
fn single_run(dir: &Path, cmd: &str, workload: &str, args: &[&str]) -> Vec<u8> {
    let json = dir.join(format!("single-{}.json", args.join("_").replace('/', "_")));
    let j = json.display().to_string();
    let w = format!("crates/simctl/tests/sweep-grid/{workload}");
    let mut a = vec![cmd, w.as_str(), "--json", &j, "--quiet"];
    a.extend_from_slice(args);
    a.extend_from_slice(&HALF_FULL);
    simctl_ok(&a);
    std::fs::read(&json).unwrap()
}

#[test]
fn phone_cells_run_as_run_phone_does_and_name_the_phone_in_results() {
    let dir = scratch("sweep-phones");
    let serial = dir.join("serial");
    let out = sweep(PHONE_GRID, &serial, &["--jobs", "1"]);
    assert!(out.contains("8 cells; ran 8, skipped 0"), "{out}");
    // One preconditioned device per phone and seed (the workloads share it).
    assert!(out.contains("4 preconditioned device(s)"), "{out}");
    let reference = tree(&serial);
    let parallel = dir.join("parallel");
    sweep(PHONE_GRID, &parallel, &["--jobs", "2"]);
    assert_same(&reference, &tree(&parallel), "--jobs 1 vs --jobs 2");

    // results.csv: the phone is a coordinate; without a schedulers list
    // each phone runs its stock kernel's scheduler, which the row names.
    let rs = rows(&reference["results.csv"]);
    assert_eq!(rs.len(), 8);
    let phones: Vec<&str> = rs.iter().map(|r| r["phone"].as_str()).collect();
    assert_eq!(
        phones,
        ["motog-2013", "motog-2013", "nexus-s", "nexus-s"].repeat(2)
    );
    // A phone cell is exactly `run --phone` with the same seed and
    // settings: same device and host profiles, same default scheduler.
    for (row, cmd, workload, phone) in [
        (&rs[1], "run", "small.toml", "motog-2013"),
        (&rs[6], "replay", "short.csv", "configs/phones/nexus-s.toml"),
    ] {
        let cell = &reference[&format!("cells/{}.json", row["cell"])];
        let single = single_run(
            &dir,
            cmd,
            workload,
            &["--phone", phone, "--seed", &row["seed"]],
        );
        assert!(
            *cell == single,
            "cell {} differs from `{cmd} --phone {phone}`",
            row["cell"]
        );
        let report: serde_json::Value = serde_json::from_slice(cell).unwrap();
        assert_eq!(
            report["scheduler"]["name"].as_str(),
            Some(row["scheduler"].as_str())
        );
    }
    let motog: serde_json::Value =
        serde_json::from_slice(&reference[&format!("cells/{}.json", rs[0]["cell"])]).unwrap();
    assert_eq!(motog["device_profile"]["name"], "motog-2013-emmc");
    assert_ne!(
        rs[0]["scheduler"], rs[2]["scheduler"],
        "each phone's own scheduler"
    );

    // Shards merged and a resumed run give the same bytes.
    let shards: Vec<_> = (1..=2).map(|i| dir.join(format!("shard{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        sweep(PHONE_GRID, s, &["--shard", &format!("{}/2", i + 1)]);
    }
    let merged = dir.join("merged");
    let (m, a, b) = (
        merged.display().to_string(),
        shards[0].display().to_string(),
        shards[1].display().to_string(),
    );
    simctl_ok(&["merge", &a, &b, "--out", &m]);
    assert_same(&reference, &layout(&merged), "shards + merge vs unsharded");
    let victim = format!("cells/{}.json", rs[5]["cell"]);
    std::fs::remove_file(parallel.join(&victim)).unwrap();
    let out = sweep(PHONE_GRID, &parallel, &[]);
    assert!(out.contains("ran 1, skipped 7"), "{out}");
    assert_same(&reference, &tree(&parallel), "resumed vs uninterrupted");

    // With a schedulers list, the list's scheduler replaces the phone's
    // (the phone's tick rate stays), and a devices entry its device.
    let grid = dir.join("listed.toml");
    std::fs::write(
        &grid,
        format!(
            "schedulers = [\"deadline\", \"bfq\"]\nworkloads = [\"{}\"]\nphones = [\"{}\"]\ndevices = [\"{}\"]\nseeds = [3]\nsets = [[\"precondition.fill_fraction=0.5\", \"precondition.max_overwrite_factor=0.3\"]]\n",
            root().join("crates/simctl/tests/sweep-grid/small.toml").display(),
            root().join("configs/phones/motog-2013.toml").display(),
            root().join("configs/devices/generic-emmc.toml").display(),
        ),
    )
    .unwrap();
    let listed = dir.join("listed");
    sweep(&grid.display().to_string(), &listed, &[]);
    let t = tree(&listed);
    let rs = rows(&t["results.csv"]);
    let scheds: Vec<&str> = rs.iter().map(|r| r["scheduler"].as_str()).collect();
    assert_eq!(scheds, ["deadline", "bfq"]);
    assert!(rs.iter().all(|r| r["phone"] == "motog-2013"));
    let cell = &t[&format!("cells/{}.json", rs[0]["cell"])];
    let single = single_run(
        &dir,
        "run",
        "small.toml",
        &[
            "--phone",
            "motog-2013",
            "--device",
            "configs/devices/generic-emmc.toml",
            "--scheduler",
            "deadline",
            "--seed",
            "3",
        ],
    );
    assert!(
        *cell == single,
        "cell differs from `run --phone --device --scheduler`"
    );
    let report: serde_json::Value = serde_json::from_slice(cell).unwrap();
    assert_eq!(report["scheduler"]["name"], "deadline");
    assert_eq!(report["scheduler"]["hz"], 100, "the Moto G kernel's HZ");
    assert_eq!(report["device_profile"]["name"], "generic-emmc");
}

#[test]
fn a_bad_grid_gives_a_located_error() {
    let dir = scratch("sweep-bad-grid");
    let sample = root().join("traces/sample.csv").display().to_string();
    let motog = root()
        .join("configs/phones/motog-2013.toml")
        .display()
        .to_string();
    let cases = [
        (
            format!("schedulers = [\"noop\"]\nworkloads = [\"{sample}\"]\nseed = [1]\n"),
            vec!["grid.toml", "line 3", "unknown field `seed`"],
        ),
        (
            format!("schedulers = [\"noop\", \"deadlin\"]\nworkloads = [\"{sample}\"]\n"),
            vec!["grid.toml:1:23", "unknown scheduler `deadlin`"],
        ),
        (
            "schedulers = [\"noop\"]\nworkloads = [\"nowhere.csv\"]\n".to_string(),
            vec!["grid.toml:2:14", "nowhere.csv", "not found"],
        ),
        (
            format!("schedulers = [\"cfq:slice_idle\"]\nworkloads = [\"{sample}\"]\n"),
            vec!["grid.toml:1:15", "TUNABLE=VALUE"],
        ),
        (
            format!("schedulers = [\"noop\"]\nworkloads = [\"{sample}\"]\nsets = [[], [\"queue.nomerges\"]]\n"),
            vec!["grid.toml:3:14", "KEY=VALUE"],
        ),
        (
            format!("schedulers = [\"noop\"]\nworkloads = [\"{sample}\"]\nseeds = \"1\"\n"),
            vec!["grid.toml", "line 3"],
        ),
        (
            format!("workloads = [\"{sample}\"]\nphones = [\"nokia-3310\"]\n"),
            vec!["grid.toml:2:11", "phones: `nokia-3310`", "nexus-s"],
        ),
        (
            format!("workloads = [\"{sample}\"]\nphones = [\"no/such-phone.toml\"]\n"),
            vec!["grid.toml:2:11", "no/such-phone.toml"],
        ),
        (
            format!("workloads = [\"{sample}\"]\n"),
            vec!["grid.toml", "no `schedulers`", "phones"],
        ),
        (
            format!("schedulers = []\nworkloads = [\"{sample}\"]\nphones = [\"{motog}\"]\n"),
            vec!["grid.toml:1:14", "`schedulers` is empty", "each phone's own"],
        ),
        (
            format!("workloads = [\"{sample}\"]\nphones = [\"{motog}\", \"{motog}\"]\n"),
            vec!["grid.toml:2:", "listed twice"],
        ),
    ];
    for (text, wanted) in cases {
        std::fs::write(dir.join("grid.toml"), &text).unwrap();
        let g = dir.join("grid.toml").display().to_string();
        let o = dir.join("out").display().to_string();
        let err = simctl_err(&["sweep", &g, "--out", &o]);
        for w in wanted {
            assert!(err.contains(w), "`{w}` not in: {err}\nfor grid:\n{text}");
        }
    }
    let err = simctl_err(&["sweep", "no-such-grid.toml", "--out", "target/x"]);
    assert!(err.contains("no-such-grid.toml"), "{err}");
    let g = dir.join("grid.toml").display().to_string();
    let err = simctl_err(&["sweep", &g, "--out", "target/x", "--shard", "4/3"]);
    assert!(err.contains("--shard `4/3`"), "{err}");
}

#[test]
fn slurm_writes_a_job_array_and_a_dependent_merge() {
    let dir = scratch("sweep-slurm-script");
    let grid = GRID;
    let out_dir = dir.join("out");
    let o = out_dir.display().to_string();
    let printed = simctl_ok(&[
        "sweep", grid, "--out", &o, "--slurm", "--shards", "4", "--jobs", "2",
    ]);
    assert!(printed.contains("sbatch --parsable"), "{printed}");
    assert!(printed.contains("--dependency=afterok:"), "{printed}");
    assert!(printed.contains("simctl merge"), "{printed}");
    let script = std::fs::read_to_string(out_dir.join("slurm/sweep.sbatch")).unwrap();
    assert!(script.starts_with("#!/bin/bash\n"));
    assert!(script.contains("#SBATCH --array=0-3\n"), "{script}");
    assert!(script.contains("#SBATCH --cpus-per-task=2\n"), "{script}");
    assert!(script.contains("SLURM_ARRAY_TASK_ID"), "{script}");
    assert!(script.contains("--shard \"${shard}/4\""), "{script}");
    let merge = std::fs::read_to_string(out_dir.join("slurm/merge.sbatch")).unwrap();
    assert!(
        merge.contains(" merge ") && merge.contains("shards/4-of-4"),
        "{merge}"
    );
    let submit = std::fs::read_to_string(out_dir.join("slurm/submit.sh")).unwrap();
    assert!(submit.contains("--dependency=afterok:"), "{submit}");
    assert!(out_dir.join("slurm/logs").is_dir());
    // Nothing ran.
    assert!(!out_dir.join("cells").exists());
    // --shards needs --slurm.
    let err = simctl_err(&["sweep", grid, "--out", &o, "--shards", "4"]);
    assert!(err.contains("--slurm"), "{err}");
}

/// What a cluster requires reaches both scripts: the grid's `[slurm]`
/// table, then `--sbatch-opt` over it; each array task requests the CPUs
/// it runs on; options the scripts own, values an #SBATCH line cannot
/// carry and a CPU count that disagrees with --jobs are refused (exit 2).
#[test]
fn sbatch_options_from_the_grid_and_the_command_line_reach_both_scripts() {
    let dir = scratch("sweep-sbatch-opts");
    let base = root().join("crates/simctl/tests/sweep-grid");
    let grid_text = std::fs::read_to_string(base.join("grid.toml"))
        .unwrap()
        .replace("small.toml", &base.join("small.toml").display().to_string())
        .replace("short.csv", &base.join("short.csv").display().to_string())
        .replace(
            "../../../../configs",
            &root().join("configs").display().to_string(),
        )
        + "\n[slurm]\ntime = \"04:00:00\"\naccount = \"storage-lab\"\nmem = 4000\n";
    let grid = dir.join("grid.toml");
    std::fs::write(&grid, grid_text).unwrap();
    let g = grid.display().to_string();
    let o = dir.join("out").display().to_string();
    // The scripts written for `--slurm EXTRA...` on grid `g`.
    let scripts = |g: &str, extra: &[&str]| {
        let mut args = vec!["sweep", g, "--out", &o, "--slurm"];
        args.extend_from_slice(extra);
        simctl_ok(&args);
        let read = |f: &str| std::fs::read_to_string(dir.join("out/slurm").join(f)).unwrap();
        (read("sweep.sbatch"), read("merge.sbatch"))
    };
    let (script, merge) = scripts(
        &g,
        &[
            "--shards",
            "2",
            "--jobs",
            "3",
            "--sbatch-opt",
            "time=01:30:00",
            "--sbatch-opt",
            "partition=short",
        ],
    );
    for s in [&script, &merge] {
        // The command line wins over the grid; the grid's others stay.
        assert!(s.contains("#SBATCH --time=01:30:00\n"), "{s}");
        assert!(!s.contains("04:00:00"), "{s}");
        assert!(s.contains("#SBATCH --account=storage-lab\n"), "{s}");
        assert!(s.contains("#SBATCH --mem=4000\n"), "{s}");
        assert!(s.contains("#SBATCH --partition=short\n"), "{s}");
        // #SBATCH lines count only before the first command.
        let first_cmd = s.find("set -euo").unwrap();
        assert!(s.rfind("#SBATCH").unwrap() < first_cmd, "{s}");
    }
    assert!(script.contains("#SBATCH --cpus-per-task=3\n"), "{script}");
    assert!(script.contains("SLURM_CPUS_PER_TASK:-3"), "{script}");
    assert!(merge.contains("#SBATCH --cpus-per-task=1\n"), "{merge}");

    // Without --jobs, cpus-per-task decides; without either, 1 CPU.
    let (script, _) = scripts(&g, &["--sbatch-opt", "cpus-per-task=4"]);
    assert!(
        script.contains("#SBATCH --cpus-per-task=4\n") && script.contains(":-4}"),
        "{script}"
    );
    let (script, _) = scripts(GRID, &[]);
    assert!(script.contains("#SBATCH --cpus-per-task=1\n"), "{script}");

    for (opt, says) in [
        ("array=0-3", "set by the scripts"),
        ("dependency=afterok:1", "set by the scripts"),
        ("time=1 2", "without whitespace"),
        ("time", "expected KEY=VALUE"),
        ("Time=1", "not an sbatch long option"),
        ("cpus-per-task=0", "whole number"),
    ] {
        let out = simctl(&["sweep", GRID, "--out", &o, "--slurm", "--sbatch-opt", opt]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opt}: {err}");
        assert!(err.contains(says), "{opt}: {err}");
    }
    let out = simctl(&[
        "sweep",
        GRID,
        "--out",
        &o,
        "--slurm",
        "--jobs",
        "2",
        "--sbatch-opt",
        "cpus-per-task=4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("disagree"));
    // A bad [slurm] table is located in the grid.
    std::fs::write(
        &grid,
        std::fs::read_to_string(&grid).unwrap() + "output = \"x\"\n",
    )
    .unwrap();
    let err = simctl_err(&["sweep", &g, "--out", &o, "--slurm"]);
    assert!(
        err.contains("grid.toml:") && err.contains("[slurm]") && err.contains("`output`"),
        "{err}"
    );
}

/// The README's cluster recipe names the grid without a folder (`simctl
/// sweep grid.toml` from the grid's own directory): its phones resolve
/// from the current directory, as a grid named `./grid.toml` does.
#[test]
fn a_grid_named_without_a_folder_resolves_its_phones_from_the_current_directory() {
    let dir = scratch("sweep-bare-grid-name");
    let phone = root().join("configs/phones/motog-2013.toml");
    let sample = root().join("traces/sample.csv");
    std::fs::write(
        dir.join("grid.toml"),
        format!(
            "workloads = [\"{}\"]\nphones = [\"{}\"]\nseeds = [1]\n",
            sample.display(),
            phone.display()
        ),
    )
    .unwrap();
    simctl_ok_in(
        &dir,
        &[
            "sweep",
            "grid.toml",
            "--out",
            "results",
            "--slurm",
            "--shards",
            "2",
        ],
    );
    let script = std::fs::read_to_string(dir.join("results/slurm/sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-1\n"), "{script}");
}
