//! ext4 + JBD2 through the `simctl` binary: what a storage engineer sees
//! in a block trace of an Android phone's `/data` (reference
//! android-workloads.md §4.2), asserted on the request log's sectors, ops
//! and order, and on the report's `fs` section.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// One row of the request log.
#[derive(Debug, Clone)]
struct Row {
    submit: u64,
    complete: u64,
    sector: u64,
    sectors: u64,
    op: String,
    thread: u64,
}

/// Runs scenario text `toml` (with `extra` arguments) and returns the
/// report and the request log.
fn run(name: &str, toml: &str, extra: &[&str]) -> (Value, Vec<Row>) {
    let tmp = scratch(name);
    let sc = tmp.join("scenario.toml");
    std::fs::write(&sc, toml).unwrap();
    let log = tmp.join("log.csv");
    let mut args = vec!["run", sc.to_str().unwrap(), "--log", log.to_str().unwrap()];
    args.extend_from_slice(extra);
    let r = report(&args, &tmp);
    (r, read_log(&log))
}

fn read_log(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                submit: f[0].parse().unwrap(),
                complete: f[3].parse().unwrap(),
                sector: f[4].parse().unwrap(),
                sectors: f[5].parse().unwrap(),
                op: f[6].to_string(),
                thread: f[7].parse().unwrap(),
            }
        })
        .collect()
}

/// The journal's log area in sectors: `[first log block, end)`.
fn journal_area(r: &Value) -> (u64, u64) {
    let first = r["fs"]["journal_first_block"].as_u64().unwrap();
    let len = r["fs"]["journal_blocks"].as_u64().unwrap();
    ((first + 1) * 8, (first + len) * 8)
}

fn in_journal(r: &Value, row: &Row) -> bool {
    let (s, e) = journal_area(r);
    row.op.starts_with('W') && row.sector >= s && row.sector < e
}

fn fs_stat(r: &Value, k: &str) -> u64 {
    r["fs"][k]
        .as_u64()
        .unwrap_or_else(|| panic!("fs.{k} in {}", r["fs"]))
}

const HEAD: &str = r#"
seed = 1
[precondition]
fill_fraction = 0.0
[fs]
type = "ext4"
partition_size_mib = 512
"#;

fn scenario(fs_extra: &str, files: &str, calls: &[&str]) -> String {
    let calls: Vec<String> = calls.iter().map(|c| format!("  \"{c}\",")).collect();
    format!(
        "name = \"t\"\n{HEAD}{fs_extra}\n{files}\n[[scripts]]\nname = \"app\"\ncalls = [\n{}\n]\n",
        calls.join("\n")
    )
}

/// An app creating a file, appending 4 KiB and calling fsync().
const APPEND_FSYNC: &[&str] = &[
    "mkdir /data",
    "creat /data/log",
    "write 4096",
    "fsync",
    "close",
];

/// The commit block of an fsync's JBD2 transaction is a FUA write; how it
/// reaches the card depends on the card's reliable-write support: one
/// reliable write (enhanced, eMMC 4.41+), a plain write followed by
/// FLUSH_CACHE (no reliable write: blk-flush's post-flush), or eight
/// 1-sector reliable writes (legacy eMMC 4.3 with REL_WR_SEC_C = 1,
/// Linux `mmc_apply_rel_rw`), each slower than the one before.
#[test]
fn the_fua_commit_block_follows_the_cards_reliable_write_support() {
    let sc = scenario("", "", APPEND_FSYNC);
    let fua_path = |name: &str, set: &str| {
        let (r, rows) = run(name, &sc, &["--set", set]);
        let commit = rows.last().unwrap();
        assert_eq!(commit.op, "WF", "{rows:#?}");
        let dev = |k: &str| r["device"][k].as_u64().unwrap();
        let fsync_us = commit.complete - commit.submit;
        (dev("reliable_writes"), dev("flush_commands"), fsync_us)
    };
    let enhanced = fua_path("ext4-relwr-enhanced", "device.features.reliable_write=true");
    let none = fua_path("ext4-relwr-none", "device.features.reliable_write=false");
    let legacy = fua_path("ext4-relwr-legacy", "device.features.rel_wr_sec_c=1");
    // (reliable writes, FLUSH_CACHE commands): the pre-flush is one flush
    assert_eq!((enhanced.0, enhanced.1), (1, 1));
    assert_eq!((none.0, none.1), (0, 2), "post-flush after the plain write");
    assert_eq!(
        (legacy.0, legacy.1),
        (8, 1),
        "one reliable write per sector"
    );
    assert!(
        enhanced.2 < none.2 && none.2 < legacy.2,
        "commit block: enhanced {} ns, post-flush {} ns, legacy {} ns",
        enhanced.2,
        none.2,
        legacy.2
    );
}

const PREPARED: &str = "[[files]]\nname = \"data/db\"\nsize_mib = 1\n";

#[test]
fn an_fsync_after_an_appending_write_commits_a_jbd2_transaction() {
    let sc = scenario("", "", APPEND_FSYNC);
    let (r, rows) = run("ext4-append-fsync", &sc, &[]);
    // data, journal body (descriptor + metadata copies), flush, FUA commit
    assert_eq!(rows.len(), 4, "{rows:#?}");
    let (data, body, flush, commit) = (&rows[0], &rows[1], &rows[2], &rows[3]);
    assert_eq!((data.op.as_str(), data.sectors, data.thread), ("W", 8, 0));
    assert!(!in_journal(&r, data));
    // the journal body starts at the first log block, one descriptor plus
    // one 4 KiB copy per modified metadata block, written sequentially
    let (log_start, _) = journal_area(&r);
    assert_eq!(body.op, "W");
    assert_eq!(body.sector, log_start);
    let copies = body.sectors / 8 - 1;
    assert!((3..=10).contains(&copies), "{copies} metadata blocks");
    assert_eq!(flush.op, "F");
    assert_eq!(commit.op, "WF", "the commit block is written with FUA");
    assert_eq!(commit.sector, body.sector + body.sectors);
    assert_eq!(commit.sectors, 8);
    // each step waits for the previous one
    assert!(body.submit >= data.complete);
    assert!(flush.submit >= body.complete);
    assert!(commit.submit >= flush.complete);
    // the journal thread wrote it, not the app
    assert_ne!(body.thread, 0);
    assert_eq!(fs_stat(&r, "journal_commits"), 1);
    assert_eq!(fs_stat(&r, "journal_blocks_written"), copies + 2);
    assert_eq!(fs_stat(&r, "fua_writes_issued"), 1);
    assert_eq!(fs_stat(&r, "flushes_issued"), 1);
    assert_eq!(fs_stat(&r, "syncs_committed"), 1);
    assert_eq!(r["requests"]["fsyncs"], 1);
    assert_eq!(r["requests"]["metadata_calls"], 3);
}

#[test]
fn fdatasync_after_an_in_place_overwrite_is_the_data_and_one_flush() {
    let sc = scenario(
        "",
        PREPARED,
        &["open /data/db O_RDWR", "pwrite 8192 4096", "fdatasync"],
    );
    let (r, rows) = run("ext4-overwrite-fdatasync", &sc, &[]);
    // before the commit timer (5 s) nothing but the data and one flush
    let early: Vec<&Row> = rows.iter().filter(|w| w.submit < 1_000_000_000).collect();
    assert_eq!(early.len(), 2, "{early:#?}");
    assert_eq!((early[0].op.as_str(), early[0].sectors), ("W", 8));
    assert_eq!(early[1].op, "F");
    assert!(!early.iter().any(|w| in_journal(&r, w)));
    assert_eq!(fs_stat(&r, "syncs_flush_only"), 1);
    assert_eq!(fs_stat(&r, "syncs_committed"), 0);
    // the mtime change still commits, by the periodic timer
    assert_eq!(fs_stat(&r, "periodic_commits"), 1);
    let first_journal = rows.iter().find(|w| in_journal(&r, w)).unwrap();
    assert!(first_journal.submit >= 5_000_000_000);
}

#[test]
fn fsync_after_an_in_place_overwrite_commits_the_mtime_change() {
    let sc = scenario(
        "",
        PREPARED,
        &["open /data/db O_RDWR", "pwrite 8192 4096", "fsync"],
    );
    let (r, rows) = run("ext4-overwrite-fsync", &sc, &[]);
    assert_eq!(fs_stat(&r, "syncs_committed"), 1);
    // data, then the inode-table block (descriptor + 1 copy), flush, commit
    let ops: Vec<&str> = rows.iter().map(|w| w.op.as_str()).collect();
    assert_eq!(ops, ["W", "W", "F", "WF"], "{rows:#?}");
    assert_eq!(rows[1].sectors, 16);
    assert!(in_journal(&r, &rows[1]));
}

#[test]
fn with_the_journal_off_metadata_is_written_in_place_and_nothing_goes_to_a_journal() {
    let sc = scenario("journal = \"off\"", "", APPEND_FSYNC);
    let (r, rows) = run("ext4-nojournal", &sc, &[]);
    assert_eq!(fs_stat(&r, "journal_blocks"), 0);
    assert_eq!(fs_stat(&r, "journal_blocks_written"), 0);
    assert_eq!(fs_stat(&r, "journal_commits"), 0);
    assert!(fs_stat(&r, "metadata_blocks_written_in_place") >= 2);
    // data, the inode block and the directory's blocks in place, one flush
    assert_eq!(rows.first().unwrap().op, "W");
    assert_eq!(rows.last().unwrap().op, "F");
    assert!(!rows.iter().any(|w| w.op == "WF"));
    assert_eq!(rows.iter().filter(|w| w.op == "F").count(), 1);
}

#[test]
fn reads_dirty_no_inode_with_noatime_but_do_with_strictatime() {
    let calls = [
        "open /data/db O_RDONLY",
        "pread 0 4096",
        "sleep 20000",
        "pread 4096 4096",
        "sleep 20000",
        "pread 8192 4096",
    ];
    let (noatime, rows_no) = run(
        "ext4-noatime",
        &scenario("atime = \"noatime\"", PREPARED, &calls),
        &[],
    );
    let (strict, rows_strict) = run(
        "ext4-strictatime",
        &scenario("atime = \"strictatime\"", PREPARED, &calls),
        &[],
    );
    assert_eq!(fs_stat(&noatime, "atime_updates"), 0);
    assert_eq!(fs_stat(&noatime, "journal_commits"), 0);
    assert!(!rows_no.iter().any(|w| w.op.starts_with('W')));
    assert_eq!(fs_stat(&strict, "atime_updates"), 3);
    // the dirtied inode block is committed by the timer
    assert_eq!(fs_stat(&strict, "journal_commits"), 1);
    assert!(rows_strict.iter().any(|w| in_journal(&strict, w)));
    // relatime: only the first read after the file was modified
    let (rel, _) = run(
        "ext4-relatime",
        &scenario("atime = \"relatime\"", PREPARED, &calls),
        &[],
    );
    assert_eq!(fs_stat(&rel, "atime_updates"), 1);
}

#[test]
fn nodelalloc_allocates_at_write_and_delalloc_at_writeback() {
    // Two appends to one file, then fsync: with delayed allocation both
    // pages get one 2-block extent at writeback (one allocation); without
    // it each write allocates its block.
    let calls = [
        "creat /log",
        "write 4096",
        "sleep 1000",
        "write 4096",
        "fsync",
    ];
    let (da, rows_da) = run("ext4-delalloc", &scenario("", "", &calls), &[]);
    let (nd, _) = run(
        "ext4-nodelalloc",
        &scenario("delalloc = false", "", &calls),
        &[],
    );
    assert_eq!(fs_stat(&da, "blocks_allocated"), 2);
    assert_eq!(fs_stat(&da, "allocations"), 1);
    assert_eq!(fs_stat(&nd, "blocks_allocated"), 2);
    assert_eq!(fs_stat(&nd, "allocations"), 2);
    // delalloc: the two pages are one 8 KiB data write
    assert_eq!((rows_da[0].op.as_str(), rows_da[0].sectors), ("W", 16));
    // --set reaches the section
    let (nd2, _) = run(
        "ext4-nodelalloc-set",
        &scenario("", "", &calls),
        &["--set", "fs.delalloc=false"],
    );
    assert_eq!(fs_stat(&nd2, "allocations"), 2);
}

#[test]
fn a_transaction_commits_commit_s_seconds_after_it_starts() {
    let sc = scenario("commit_s = 2", "", &["creat /log", "write 4096"]);
    let (r, rows) = run("ext4-periodic", &sc, &[]);
    assert_eq!(fs_stat(&r, "periodic_commits"), 1);
    let body = rows.iter().find(|w| in_journal(&r, w)).unwrap();
    assert!(
        body.submit >= 2_000_000_000 && body.submit < 2_100_000_000,
        "{body:?}"
    );
    // with delalloc the data has no blocks yet: the commit carries only
    // the inode's metadata, and no data write precedes it
    assert!(!rows
        .iter()
        .any(|w| w.op == "W" && !in_journal(&r, w) && w.submit < body.submit));
    assert!(rows.iter().any(|w| w.op == "WF"));
}

#[test]
fn journal_async_commit_writes_the_commit_block_with_the_body_then_one_flush() {
    let sc = scenario(
        "journal_async_commit = true",
        "",
        &["creat /log", "write 4096", "fsync"],
    );
    let (r, rows) = run("ext4-async-commit", &sc, &[]);
    let ops: Vec<&str> = rows.iter().map(|w| w.op.as_str()).collect();
    // data; body and commit block merged into one sequential write; flush
    assert_eq!(ops, ["W", "W", "F"], "{rows:#?}");
    assert!(in_journal(&r, &rows[1]));
    assert_eq!(fs_stat(&r, "fua_writes_issued"), 0);
}

#[test]
fn barrier_0_issues_no_flush_and_no_fua() {
    let sc = scenario("barrier = 0", "", &["creat /log", "write 4096", "fsync"]);
    let (r, rows) = run("ext4-nobarrier", &sc, &[]);
    assert!(rows.iter().all(|w| w.op == "W"), "{rows:#?}");
    assert_eq!(fs_stat(&r, "journal_commits"), 1);
}

#[test]
fn the_journal_wraps_and_checkpoints_when_full() {
    let sc = scenario(
        "journal_blocks = 1024",
        "",
        &[
            "mkdir /d",
            "creat /d/f",
            "write 4096",
            "fsync",
            "close",
            "unlink /d/f",
            "creat /d/g",
            "write 4096",
            "fsync",
            "close",
            "unlink /d/g",
        ],
    )
    .replace("calls = [", "repeat = 120\ncalls = [");
    let (r, rows) = run("ext4-wrap", &sc, &[]);
    assert!(fs_stat(&r, "journal_wraps") >= 1);
    assert!(fs_stat(&r, "checkpoints") >= 1);
    // after the wrap a log write lands at the first log block again
    let (start, end) = journal_area(&r);
    let starts: Vec<&Row> = rows
        .iter()
        .filter(|w| w.sector == start && w.op.starts_with('W'))
        .collect();
    assert!(
        starts.len() >= 2,
        "log start written {} times",
        starts.len()
    );
    assert!(rows
        .iter()
        .all(|w| !in_journal(&r, w) || w.sector + w.sectors <= end));
    // checkpoint: metadata written home, then the journal superblock (FUA)
    let jsb = (fs_stat(&r, "journal_first_block")) * 8;
    assert!(rows.iter().any(|w| w.sector == jsb && w.op == "WF"));
    assert!(fs_stat(&r, "metadata_blocks_written_in_place") > 0);
}

#[test]
fn data_journal_logs_the_data_and_writes_it_home_later() {
    let sc = scenario(
        "data = \"journal\"",
        "",
        &["creat /log", "write 8192", "fsync"],
    );
    let (r, rows) = run("ext4-data-journal", &sc, &[]);
    assert_eq!(fs_stat(&r, "data_blocks_journaled"), 2);
    // the first write is the journal body, not the data at home
    assert!(in_journal(&r, &rows[0]), "{rows:#?}");
}

#[test]
fn ext4_runs_are_deterministic() {
    let sc = scenario(
        "",
        PREPARED,
        &[
            "open /data/db O_RDWR",
            "pwrite 0 4096",
            "fsync",
            "creat /data/x",
            "write 100",
            "fdatasync",
            "rename /data/x /data/y",
            "sync",
        ],
    );
    let a = run("ext4-det-a", &sc, &[]).0;
    let b = run("ext4-det-b", &sc, &[]).0;
    assert_eq!(a, b);
    assert_eq!(a["requests"]["syncs"], 1);
}

#[test]
fn bad_fs_settings_are_located_errors() {
    let tmp = scratch("ext4-bad");
    let sc = tmp.join("s.toml");
    std::fs::write(&sc, scenario("journal = \"maybe\"", "", &["sync"])).unwrap();
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(err.contains("journal") && err.contains("on"), "{err}");
    std::fs::write(&sc, scenario("", "", &["wrte 1"])).unwrap();
    let err = simctl_err(&["run", sc.to_str().unwrap()]);
    assert!(err.contains("calls[0]"), "{err}");
    std::fs::write(&sc, scenario("", "", &["sync"])).unwrap();
    let err = simctl_err(&["run", sc.to_str().unwrap(), "--set", "fs.atime=sometimes"]);
    assert!(err.contains("atime"), "{err}");
}

#[test]
fn trace_fua_and_preflush_flags_reach_the_device() {
    let tmp = scratch("trace-flags");
    let t = tmp.join("t.csv");
    std::fs::write(
        &t,
        "time_us,op,sector,sectors,pid,process,sync,done_us,device,flags\n\
         0,W,2048,8,12,app,1,,0,F\n\
         5000,W,4096,8,12,app,1,,0,PF\n\
         10000,W,8192,8,12,app,1,,0,\n",
    )
    .unwrap();
    let log = tmp.join("log.csv");
    let r = report(
        &[
            "replay",
            t.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
        ],
        &tmp,
    );
    assert_eq!(r["requests"]["writes"], 3);
    let rows = read_log(&log);
    let ops: Vec<(&str, u64)> = rows.iter().map(|w| (w.op.as_str(), w.sector)).collect();
    assert_eq!(ops, [("WF", 2048), ("F", 0), ("WF", 4096), ("W", 8192)]);
    // the pre-flushed write waits for its flush
    assert!(rows[2].submit >= rows[1].complete);
}

#[test]
fn an_fsyncs_wait_for_the_commit_is_split_along_the_commits_requests() {
    // write + fsync: the call waits for its data write, then for the JBD2
    // commit (body, flush, FUA commit block). Each of those requests is on
    // the call's critical path, so their device time is `device`, not
    // interrupt + wake-up, and the parts still add up to the latency.
    let sc = scenario("", "", APPEND_FSYNC);
    let (r, rows) = run("ext4-fsync-split", &sc, &[]);
    assert_eq!(rows.len(), 4, "{rows:#?}");
    // device service of the four requests, from the log, µs
    let service_us: f64 = rows
        .iter()
        .map(|row| (row.complete - row.submit) as f64 / 1000.0)
        .sum();
    let b = &r["breakdown_us"];
    let part = |k: &str| b[k].as_f64().unwrap_or_else(|| panic!("{k} in {b}"));
    let layers = [
        "platform",
        "syscall_fs",
        "block_queue",
        "driver",
        "device",
        "irq_wakeup",
    ];
    let sum: f64 = layers.iter().map(|k| part(k)).sum();
    let total = part("total");
    assert!((sum - total).abs() < 1e-6 * total, "{sum} vs {total}");
    // means over the script's calls: the fsync carries the commit's waits
    let calls = r["requests"]["count"].as_f64().unwrap();
    let device_us = part("device") * calls;
    assert!(
        device_us >= 0.8 * service_us && device_us <= service_us,
        "device {device_us} µs of {service_us} µs of request service: {b}"
    );
    assert!(part("irq_wakeup") < part("device"), "{b}");
}
