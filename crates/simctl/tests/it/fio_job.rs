//! fio job files as a workload (`simctl run JOB.fio`): the same report as
//! the equivalent scenario TOML, deterministic, located errors for bad job
//! files, and asynchronous submission (libaio/io_uring) keeping `iodepth`
//! direct I/Os in flight.

use crate::common::*;
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn json_text(args: &[&str], dir: &Path, out: &str) -> String {
    let p = dir.join(out);
    let mut a = args.to_vec();
    let ps = p.to_str().unwrap().to_string();
    a.extend(["--json", &ps, "-q"]);
    simctl_ok(&a);
    std::fs::read_to_string(&p).unwrap()
}

const RANDREAD_TOML: &str = r#"
name = "randread-4k"
[[files]]
name = "fio-test"
size_mib = 64
[[jobs]]
name = "randread-4k"
file = "fio-test"
op = "read"
pattern = "sequential"
order = "shuffled"
request_bytes = 4096
region_bytes = 67108864
requests = 16384
direct = true
ioengine = "libaio"
iodepth = 8
"#;

#[test]
fn the_bundled_randread_job_file_reports_exactly_as_its_scenario_toml() {
    let tmp = scratch("fio_equiv_randread");
    let toml = write(&tmp, "randread-4k.toml", RANDREAD_TOML);
    let a = json_text(&["run", "configs/fio/randread-4k.fio"], &tmp, "a.json");
    let b = json_text(&["run", &toml], &tmp, "b.json");
    assert_eq!(a, b, "the job file and its scenario differ");
}

const MIXED_FIO: &str = "\
; clones with their own files, a mix, ramp, think time and priorities
[global]
size=8m
bs=8k
randseed=42
group_reporting
description=equivalence test

[mix]
rw=randrw
rwmixwrite=25
numjobs=2
fdatasync=16
thinktime=50
ramp_time=100ms
runtime=1
time_based
nice=5
prioclass=2
prio=3

[seqw]
stonewall
rw=write:8k
direct=1
filename=/data/seq.dat
offset=1m
size=2m
";

const MIXED_TOML: &str = r#"
name = "mixed"
seed = 42
[[files]]
name = "mix.0.0"
size_mib = 8
[[files]]
name = "mix.1.0"
size_mib = 8
[[files]]
name = "data/seq.dat"
size_mib = 3
[[jobs]]
name = "mix"
file = "mix.0.0"
op = "readwrite"
rwmix_read = 75
pattern = "sequential"
order = "shuffled"
request_bytes = 8192
region_bytes = 8388608
duration_ms = 1100.0
ramp_ms = 100.0
think_time_us = 50.0
fdatasync_every = 16
nice = 5
ioprio_class = "be"
ioprio_level = 3
[[jobs]]
name = "mix"
file = "mix.1.0"
op = "readwrite"
rwmix_read = 75
pattern = "sequential"
order = "shuffled"
request_bytes = 8192
region_bytes = 8388608
duration_ms = 1100.0
ramp_ms = 100.0
think_time_us = 50.0
fdatasync_every = 16
nice = 5
ioprio_class = "be"
ioprio_level = 3
[[jobs]]
name = "seqw"
file = "data/seq.dat"
op = "write"
pattern = "strided"
stride_bytes = 16384
request_bytes = 8192
region_offset_bytes = 1048576
region_bytes = 2097152
requests = 256
direct = true
start_ms = 1100.0
"#;

#[test]
fn a_mixed_job_file_reports_exactly_as_its_scenario_toml_and_is_deterministic() {
    let tmp = scratch("fio_equiv_mixed");
    let fio = write(&tmp, "mixed.fio", MIXED_FIO);
    let toml = write(&tmp, "mixed.toml", MIXED_TOML);
    let a = json_text(&["run", &fio], &tmp, "a.json");
    let again = json_text(&["run", &fio], &tmp, "again.json");
    let b = json_text(&["run", &toml], &tmp, "b.json");
    assert_eq!(a, again, "two runs of one job file differ");
    assert_eq!(a, b, "the job file and its scenario differ");
    let r: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(r["requests"]["reads"].as_u64().unwrap() > 0);
    assert!(r["requests"]["fdatasyncs"].as_u64().unwrap() > 0);
}

#[test]
fn bad_job_files_give_errors_naming_file_line_key_and_expectation() {
    let tmp = scratch("fio_errors");
    let cases: &[(&str, &[&str])] = &[
        (
            "[global]\nsize=1m\n[a]\nrw=read\nverify=md5\n",
            &[":5:", "key 'verify' is not modelled by mmcsim"],
        ),
        (
            "[a]\nrw=read\nbs=4x\nsize=1m\n",
            &[":3:", "'bs'", "4x", "k/m/g"],
        ),
        ("[a]\nrw=sideways\nsize=1m\n", &[":2:", "'rw'", "randread"]),
        ("[a]\nrw=randread:4\nsize=1m\n", &[":2:", "':N' suffix"]),
        ("[a]\nrw=read\n", &[":1:", "job `a`", "size"]),
        ("[a]\nsize=1m\niodepth=0\n", &[":3:", "'iodepth'", "1..="]),
        (
            "[a]\nsize=1m\nioengine=mmap\n",
            &[":3:", "'ioengine'", "libaio"],
        ),
        ("[a]\nsize=1m\nrandrepeat=0\n", &[":3:", "deterministic"]),
        ("[a]\nsize=10%\n", &[":2:", "percentage"]),
        ("[a]\nsize=1m\nruntime=5x\n", &[":3:", "'runtime'", "unit"]),
        ("[a]\nsize=1m\ntime_based\n", &[":1:", "runtime"]),
        ("rw=read\n[a]\n", &[":1:", "before any section"]),
        ("[global]\nsize=1m\n", &["no job section"]),
        (
            "[a]\nsize=1m\n[b]\nstonewall\nsize=1m\n",
            &[":4:", "stonewall"],
        ),
        (
            "[a]\nrw=rw\nbsrange=4k-8k\nsize=1m\n",
            &[":3:", "'bsrange'", "bssplit"],
        ),
        (
            "[a]\nsize=1m\nioengine=io_uring\niodepth=4\n",
            &["job `a`", "io-wq"],
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let name = format!("bad{i}.fio");
        let p = write(&tmp, &name, text);
        let err = simctl_err(&["run", &p]);
        assert!(
            err.contains(&name),
            "case {i}: error does not name the file: {err}"
        );
        for w in *want {
            assert!(err.contains(w), "case {i}: `{w}` missing from: {err}");
        }
    }
}

fn iops_and_depth(r: &serde_json::Value) -> (f64, u64) {
    (
        r["throughput"]["iops"].as_f64().unwrap(),
        r["block"]["max_queued"].as_u64().unwrap(),
    )
}

#[test]
fn libaio_at_depth_8_beats_depth_1_and_queues_several_requests() {
    let tmp = scratch("fio_depth");
    let f = "configs/fio/randread-4k.fio";
    let deep = report(&["run", f], &tmp);
    let shallow = report(&["run", f, "--set", "jobs.0.iodepth=1"], &tmp);
    let (d_iops, d_depth) = iops_and_depth(&deep);
    let (s_iops, s_depth) = iops_and_depth(&shallow);
    assert!(
        d_iops > s_iops * 1.1,
        "depth 8 {d_iops} vs depth 1 {s_iops}"
    );
    assert!(
        d_depth > 1,
        "the block layer never held more than one request"
    );
    assert_eq!(s_depth, 1);
    assert_eq!(deep["requests"]["reads"], 16384);
}

#[test]
fn synchronous_engines_and_buffered_libaio_keep_one_io_in_flight() {
    let tmp = scratch("fio_sync_depth");
    let job = |engine: &str, direct: u32, depth: u32| {
        format!("[j]\nrw=randread\nbs=4k\nsize=4m\nfilename=f\nioengine={engine}\ndirect={direct}\niodepth={depth}\n")
    };
    for (engine, direct) in [("psync", 1), ("sync", 1), ("pvsync", 1), ("libaio", 0)] {
        let deep = write(&tmp, "deep.fio", &job(engine, direct, 16));
        let one = write(&tmp, "deep1.fio", &job(engine, direct, 1));
        let a = report(&["run", &deep], &tmp);
        let b = report(&["run", &one], &tmp);
        assert_eq!(a["throughput"], b["throughput"], "{engine} direct={direct}");
        assert_eq!(a["block"], b["block"], "{engine} direct={direct}");
    }
}

#[test]
fn a_job_file_is_recognised_by_content_and_runs_under_compare() {
    let tmp = scratch("fio_detect");
    let p = write(
        &tmp,
        "job.ini",
        "[global]\nsize=2m\n[seq]\nrw=read\nbs=64k\nfilename=data\n",
    );
    let r = report(&["run", &p], &tmp);
    assert_eq!(r["run"]["name"], "job");
    assert_eq!(r["requests"]["reads"], 32);
    let c = simctl_ok(&[
        "compare",
        &p,
        "--schedulers",
        "noop,deadline",
        "-q",
        "--json",
        "-",
    ]);
    let c: serde_json::Value = serde_json::from_str(&c).unwrap();
    assert_eq!(c["reports"].as_array().unwrap().len(), 2);
}

#[test]
fn ramp_time_is_left_out_of_the_statistics() {
    let tmp = scratch("fio_ramp");
    let job = |ramp: &str| {
        format!("[j]\nrw=randread\nnorandommap\ndirect=1\nbs=4k\nsize=4m\nfilename=f\nruntime=300ms\ntime_based\n{ramp}\n")
    };
    let plain = report(&["run", &write(&tmp, "a.fio", &job(""))], &tmp);
    let ramped = report(
        &["run", &write(&tmp, "b.fio", &job("ramp_time=300ms"))],
        &tmp,
    );
    let (n0, n1) = (
        plain["requests"]["count"].as_u64().unwrap(),
        ramped["requests"]["count"].as_u64().unwrap(),
    );
    // Twice the run time, half of it ramp: about as many calls counted
    // (direct I/O: no cache warms up during the ramp).
    assert!(n1 * 10 < n0 * 12 && n1 * 10 > n0 * 8, "{n0} vs {n1}");
}
