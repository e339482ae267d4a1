//! fio options that shape the I/O pattern and timing, through the simctl
//! binary and fio's JSON output (`simctl run JOB.fio
//! --output-format=json`): each option's effect as a storage person
//! would check it on a real fio run, located errors for the options
//! mmcsim refuses, and the output's keys as fio parsing scripts read
//! them.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Runs `job` with `--output-format=json` (plus `extra` arguments) and
/// parses standard output.
fn fio_json(dir: &Path, name: &str, job: &str, extra: &[&str]) -> Value {
    let p = write(dir, name, job);
    let mut a = vec!["run", p.as_str(), "--output-format=json"];
    a.extend(extra);
    serde_json::from_str(&simctl_ok(&a)).expect("fio JSON on stdout")
}

/// Rows of a `--log` CSV: (submit ns, sector, sectors, thread).
fn log_rows(log: &Path) -> Vec<(u64, u64, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (s, sec, n, t) = (
        col("submit_ns"),
        col("sector"),
        col("sectors"),
        col("thread"),
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |i: usize| f[i].parse::<u64>().unwrap();
            (num(s), num(sec), num(n), num(t))
        })
        .collect()
}

fn total_ios(j: &Value, dir: &str) -> u64 {
    j[dir]["total_ios"].as_u64().unwrap()
}

#[test]
fn number_ios_stops_the_job_after_that_many_ios() {
    let tmp = scratch("fio_number_ios");
    let out = fio_json(
        &tmp,
        "n.fio",
        "[n]\nfilename=f\nsize=16m\ndirect=1\nrw=randread\nnumber_ios=100\n",
        &[],
    );
    assert_eq!(total_ios(&out["jobs"][0], "read"), 100);
}

#[test]
fn io_size_beyond_size_goes_round_the_region_again() {
    let tmp = scratch("fio_io_size");
    let out = fio_json(
        &tmp,
        "i.fio",
        "[i]\nfilename=f\nsize=1m\nio_size=3m\ndirect=1\nrw=read\n",
        &[],
    );
    let r = &out["jobs"][0]["read"];
    assert_eq!(r["io_bytes"].as_u64(), Some(3 << 20));
    assert_eq!(total_ios(&out["jobs"][0], "read"), 768);
}

#[test]
fn bssplit_gives_each_size_its_share_of_the_ios() {
    let tmp = scratch("fio_bssplit");
    let log = tmp.join("b.csv");
    let ls = log.to_str().unwrap();
    fio_json(
        &tmp,
        "b.fio",
        "[b]\nfilename=f\nsize=16m\ndirect=1\nrw=read\nbssplit=4k/50:64k/50\n",
        &["--log", ls],
    );
    let rows = log_rows(&log);
    let small = rows.iter().filter(|r| r.2 == 8).count() as f64;
    let big = rows.iter().filter(|r| r.2 == 128).count() as f64;
    assert_eq!(small + big, rows.len() as f64, "only 4 KiB and 64 KiB I/Os");
    let share = small / (small + big);
    assert!((0.4..0.6).contains(&share), "4 KiB share {share}");
}

/// Share of the accesses taken by the hottest 10 % of a 16 MiB file's
/// 4 KiB blocks.
fn hot_share(tmp: &Path, dist: &str) -> f64 {
    let log = tmp.join(format!("{dist}.csv").replace(':', "_"));
    let ls = log.to_str().unwrap();
    let job = format!(
        "[z]\nfilename=f\nsize=16m\ndirect=1\nrw=randread\nnorandommap\nrandom_distribution={dist}\nnumber_ios=4000\n"
    );
    fio_json(tmp, "z.fio", &job, &["--log", ls]);
    let mut counts = std::collections::HashMap::new();
    for r in log_rows(&log) {
        *counts.entry(r.1).or_insert(0u64) += 1;
    }
    let mut v: Vec<u64> = counts.into_values().collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    let hot = (16 << 20) / 4096 / 10;
    v.iter().take(hot).sum::<u64>() as f64 / v.iter().sum::<u64>() as f64
}

#[test]
fn zipf_concentrates_accesses_on_few_blocks_and_uniform_does_not() {
    let tmp = scratch("fio_zipf");
    let zipf = hot_share(&tmp, "zipf:1.2");
    let uniform = hot_share(&tmp, "random");
    assert!(zipf > 0.75, "zipf:1.2: hottest 10 % of blocks take {zipf}");
    assert!(
        uniform < 0.35,
        "uniform: hottest 10 % of blocks take {uniform}"
    );
}

#[test]
fn rate_iops_holds_the_job_to_its_rate() {
    let tmp = scratch("fio_rate_iops");
    let out = fio_json(
        &tmp,
        "r.fio",
        "[r]\nfilename=f\nsize=16m\ndirect=1\nrw=randread\nrate_iops=100\nruntime=2\ntime_based\n",
        &[],
    );
    let r = &out["jobs"][0]["read"];
    let n = r["total_ios"].as_u64().unwrap();
    assert!((190..=210).contains(&n), "{n} I/Os in 2 s at 100 IOPS");
    let iops = r["iops"].as_f64().unwrap();
    assert!((95.0..=105.0).contains(&iops), "{iops} IOPS");
}

#[test]
fn rate_per_direction_caps_reads_and_writes_apart() {
    let tmp = scratch("fio_rate_dir");
    let out = fio_json(
        &tmp,
        "p.fio",
        "[p]\nfilename=f\nsize=16m\nrw=randrw\nrate=1m,256k\nruntime=1\ntime_based\n",
        &[],
    );
    let j = &out["jobs"][0];
    let kib = |d: &str| j[d]["io_kbytes"].as_u64().unwrap();
    assert!(
        (900..=1100).contains(&kib("read")),
        "reads {} KiB",
        kib("read")
    );
    assert!(
        (200..=300).contains(&kib("write")),
        "writes {} KiB",
        kib("write")
    );
}

#[test]
fn loops_repeat_the_whole_job_with_its_end_fsync() {
    let tmp = scratch("fio_loops");
    let job = |loops: u32| {
        format!("[l]\nfilename=f\nsize=1m\ndirect=1\nrw=write\nend_fsync=1\nloops={loops}\n")
    };
    let one = fio_json(&tmp, "l1.fio", &job(1), &[]);
    let three = fio_json(&tmp, "l3.fio", &job(3), &[]);
    let (a, b) = (&one["jobs"][0], &three["jobs"][0]);
    assert_eq!(total_ios(b, "write"), 3 * total_ios(a, "write"));
    assert_eq!(
        b["sync"]["total_ios"].as_u64(),
        Some(3),
        "one fsync per pass"
    );
}

#[test]
fn offset_increment_gives_each_clone_its_own_region() {
    let tmp = scratch("fio_offset_inc");
    let log = tmp.join("o.csv");
    let ls = log.to_str().unwrap();
    let out = fio_json(
        &tmp,
        "o.fio",
        "[o]\nfilename=f\nsize=1m\ndirect=1\nrw=read\nnumjobs=4\noffset_increment=1m\n",
        &["--log", ls],
    );
    assert_eq!(
        out["jobs"].as_array().unwrap().len(),
        4,
        "one entry per clone"
    );
    let mut ranges = std::collections::BTreeMap::new();
    for (_, sector, n, t) in log_rows(&log) {
        let e = ranges.entry(t).or_insert((u64::MAX, 0));
        e.0 = e.0.min(sector);
        e.1 = e.1.max(sector + n);
    }
    let r: Vec<(u64, u64)> = ranges.into_values().collect();
    assert_eq!(r.len(), 4);
    for w in r.windows(2) {
        assert!(w[0].1 <= w[1].0, "clone regions overlap: {r:?}");
        assert_eq!(w[0].1 - w[0].0, 2048, "each clone reads its 1 MiB");
    }
}

#[test]
fn nrfiles_spreads_the_io_and_fsync_on_close_syncs_each_file() {
    let tmp = scratch("fio_nrfiles");
    let out = fio_json(
        &tmp,
        "m.fio",
        "[m]\nsize=1m\ndirect=1\nrw=write\nnrfiles=4\nfile_service_type=roundrobin\nfsync_on_close=1\n",
        &[],
    );
    let j = &out["jobs"][0];
    assert_eq!(total_ios(j, "write"), 256, "size is shared by the files");
    assert_eq!(
        j["sync"]["total_ios"].as_u64(),
        Some(8),
        "fio's end-of-job fsync and the one at close, per file"
    );
}

#[test]
fn startdelay_delays_the_first_io() {
    let tmp = scratch("fio_startdelay");
    let log = tmp.join("s.csv");
    let ls = log.to_str().unwrap();
    fio_json(
        &tmp,
        "s.fio",
        "[s]\nfilename=f\nsize=1m\ndirect=1\nrw=read\nstartdelay=250ms\n",
        &["--log", ls],
    );
    let first = log_rows(&log).iter().map(|r| r.0).min().unwrap();
    assert!(first >= 250_000_000, "first I/O at {first} ns");
}

#[test]
fn percentage_random_zero_reads_sequentially() {
    let tmp = scratch("fio_perc_random");
    let log = tmp.join("p.csv");
    let ls = log.to_str().unwrap();
    fio_json(
        &tmp,
        "p.fio",
        "[p]\nfilename=f\nsize=1m\ndirect=1\nrw=randread\npercentage_random=0\n",
        &["--log", ls],
    );
    let sectors: Vec<u64> = log_rows(&log).iter().map(|r| r.1).collect();
    assert!(sectors.windows(2).all(|w| w[1] == w[0] + 8), "{sectors:?}");
}

#[test]
fn refused_and_unknown_options_are_located_errors_with_exit_2() {
    let tmp = scratch("fio_refused");
    for (text, want) in [
        (
            "[a]\nsize=1m\nthinktime_blocks=4\n",
            "not modelled by mmcsim (a think time",
        ),
        (
            "[a]\nsize=1m\nzonemode=strided\n",
            "'zonemode' is not modelled",
        ),
        ("[a]\nsize=1m\nwibble=4\n", "'wibble' is not an fio option"),
        ("[a]\nsize=1m\nrate_process=poisson\n", "Poisson"),
        (
            "[a]\nsize=1m\nrw=randread\nrandom_distribution=zipf:1\n",
            "other than 1.0",
        ),
        ("[a]\nsize=1m\nbssplit=4k/60:8k/50\n", "110"),
        ("[a]\nsize=1m\nstartdelay=1-5\n", "range"),
        (
            "[a]\nsize=1m\nrw=read\ncreate_on_open=1\n",
            "create_on_open",
        ),
        ("[a]\nsize=1m\nfilename=x\nnrfiles=3\n", "nrfiles"),
    ] {
        let p = write(&tmp, "bad.fio", text);
        let out = simctl(&["run", &p]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains("bad.fio:"), "{text}: no file:line in {err}");
        assert!(err.contains(want), "{text}: `{want}` missing from {err}");
    }
}

/// The default percentile list of fio (`stat.c`), as its JSON keys.
const PERCENTILES: [&str; 17] = [
    "1.000000",
    "5.000000",
    "10.000000",
    "20.000000",
    "30.000000",
    "40.000000",
    "50.000000",
    "60.000000",
    "70.000000",
    "80.000000",
    "90.000000",
    "95.000000",
    "99.000000",
    "99.500000",
    "99.900000",
    "99.950000",
    "99.990000",
];

#[test]
fn json_output_has_fios_shape_and_consistent_numbers() {
    let out = simctl_ok(&["run", "configs/fio/randread-4k.fio", "--output-format=json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["fio version"].is_string());
    let j = &v["jobs"][0];
    assert_eq!(j["jobname"], "randread-4k");
    for d in ["read", "write", "trim"] {
        for k in [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
        ] {
            assert!(j[d][k].is_number(), "{d}.{k} missing");
        }
        for l in ["slat_ns", "clat_ns", "lat_ns"] {
            for k in ["min", "max", "mean", "stddev", "N"] {
                assert!(j[d][l][k].is_number(), "{d}.{l}.{k} missing");
            }
        }
    }
    let r = &j["read"];
    assert_eq!(r["total_ios"].as_u64(), Some(16384));
    assert_eq!(r["io_bytes"].as_u64(), Some(64 << 20));
    assert_eq!(
        r["bw"].as_u64().unwrap(),
        r["bw_bytes"].as_u64().unwrap() / 1024
    );
    let runtime = r["runtime"].as_f64().unwrap();
    let iops = r["iops"].as_f64().unwrap();
    assert!(
        (iops * runtime / 1000.0 - 16384.0).abs() < 2.0,
        "iops × runtime"
    );
    let p = r["clat_ns"]["percentile"].as_object().unwrap();
    let keys: Vec<&str> = p.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 17);
    for k in PERCENTILES {
        assert!(p.contains_key(k), "percentile {k} missing");
    }
    let (p50, p99) = (
        p["50.000000"].as_u64().unwrap(),
        p["99.000000"].as_u64().unwrap(),
    );
    let (min, max) = (
        r["clat_ns"]["min"].as_u64().unwrap(),
        r["clat_ns"]["max"].as_u64().unwrap(),
    );
    assert!(min <= p50 && p50 <= p99 && p99 <= max);
    assert_eq!(r["slat_ns"]["N"].as_u64(), Some(0), "slat is not modelled");
    assert_eq!(j["write"]["total_ios"].as_u64(), Some(0));
    assert!(
        j["write"]["clat_ns"].get("percentile").is_none(),
        "none without samples"
    );
    let du = &v["disk_util"][0];
    assert_eq!(du["name"], "mmcblk0");
    assert!(du["read_ios"].as_u64().unwrap() > 0);
    assert!((0.0..=100.0).contains(&du["util"].as_f64().unwrap()));
}

#[test]
fn group_reporting_merges_the_clones_and_json_plus_adds_bins() {
    let tmp = scratch("fio_group");
    let job = |g: &str| format!("[g]\nfilename=f\nsize=1m\ndirect=1\nrw=randread\nnumjobs=3\n{g}");
    let apart = fio_json(&tmp, "a.fio", &job(""), &[]);
    let merged = fio_json(&tmp, "m.fio", &job("group_reporting\n"), &[]);
    assert_eq!(apart["jobs"].as_array().unwrap().len(), 3);
    assert_eq!(merged["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(total_ios(&merged["jobs"][0], "read"), 3 * 256);
    let p = write(
        &tmp,
        "plus.fio",
        &job("group_reporting\npercentile_list=50:99.5\n"),
    );
    let plus: Value =
        serde_json::from_str(&simctl_ok(&["run", &p, "--output-format=json+"])).unwrap();
    let clat = &plus["jobs"][0]["read"]["clat_ns"];
    let bins: u64 = clat["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(bins, clat["N"].as_u64().unwrap());
    let keys: Vec<&String> = clat["percentile"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["50.000000", "99.500000"]);
}

#[test]
fn output_format_is_refused_where_it_has_no_jobs_and_checked() {
    let err = simctl_err(&["replay", "traces/sample.csv", "--output-format=json"]);
    assert!(err.contains("no jobs"), "{err}");
    let out = simctl(&["run", "configs/fio/randread-4k.fio", "--output-format=xml"]);
    assert_eq!(out.status.code(), Some(2));
}

mod determinism {
    use super::*;
    use proptest::prelude::*;

    /// A job file from a pool of the options each accepted job may hold.
    fn job_file() -> impl Strategy<Value = String> {
        let opts = prop::collection::vec(
            prop::sample::select(vec![
                "bssplit=4k/30:16k/70",
                "random_distribution=zipf:0.8",
                "random_distribution=pareto:0.7",
                "random_distribution=normal:10",
                "random_distribution=zoned:80/20:20/80",
                "percentage_random=60",
                "rate_iops=500",
                "loops=2",
                "end_fsync=1",
                "nrfiles=2",
                "file_service_type=random:2",
                "number_ios=64",
                "io_size=512k",
                "startdelay=5ms",
                "blockalign=8k",
                "norandommap",
            ]),
            0..5,
        );
        let rw = prop::sample::select(vec!["randread", "randwrite", "randrw", "read", "write"]);
        (rw, opts)
            .prop_map(|(rw, o)| format!("[p]\nsize=1m\ndirect=1\nrw={rw}\n{}\n", o.join("\n")))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]
        #[test]
        fn an_accepted_job_file_reports_the_same_twice(text in job_file()) {
            let tmp = scratch("fio_prop");
            let p = write(&tmp, "p.fio", &text);
            let first = simctl(&["run", &p, "--output-format=json"]);
            prop_assume!(first.status.success());
            let again = simctl_ok(&["run", &p, "--output-format=json"]);
            prop_assert_eq!(String::from_utf8(first.stdout).unwrap(), again);
        }
    }
}
