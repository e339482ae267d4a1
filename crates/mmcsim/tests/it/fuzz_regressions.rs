//! Crashes the fuzz targets in `fuzz/` found, reproduced through the
//! library: each input that once panicked must now be refused with an
//! error or run to completion. The inputs live in `fuzz/regressions/`.

use mmcsim::config::Scenario;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use std::path::{Path, PathBuf};

fn regression(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(path)
}

/// The scenario of the `state_file` fuzz target
/// (`fuzz/regressions/state_file/scenario.toml`, shared with it) for
/// `mapping`.
fn state_scenario(mapping: &str) -> Scenario {
    let text = include_str!("../../../../fuzz/regressions/state_file/scenario.toml")
        .replace("MAPPING", mapping);
    Scenario::from_toml(&text, "fuzz.toml", PathBuf::new(), &[]).expect("scenario")
}

/// `state` with its profile hash replaced by `key`'s: the saved states
/// here hold the fuzzer's payload, which does not depend on the profile's
/// defaults, but the header's hash does (any new profile key changes it).
fn rekeyed(state: &[u8], key: &str) -> Vec<u8> {
    let mut out = state.to_vec();
    if out.len() >= 44 {
        out[36..44].copy_from_slice(&mmcsim::device::state::fnv1a(key.as_bytes()).to_le_bytes());
    }
    out
}

/// Loads the saved state `file` into `mapping`'s device and runs the
/// scenario from it: an error is fine, a panic is not. Returns why the
/// state was refused (`None`: it loaded, and the run returned).
///
/// Debug builds (the tests) also check a loaded state against the version
/// oracle, which may refuse a corrupted state that release builds (and the
/// fuzz targets) accepted; so the tests check the reason as well.
fn load_and_run(mapping: &str, file: &str) -> Option<String> {
    let sc = state_scenario(mapping);
    let path = regression(file);
    let bytes = std::fs::read(&path).expect("regression input");
    let bytes = rekeyed(&bytes, &PreparedDevice::key(&sc).expect("key"));
    match PreparedDevice::load_state(&sc, &bytes, &path) {
        Err(e) => Some(e.to_string()),
        Ok(device) => {
            let registry = mmcsim::sched::builtin();
            let _ = Simulation::with_owned_device(sc, &registry, device)
                .and_then(|s| s.run(RunOptions::default()));
            None
        }
    }
}

/// A DFTL state whose checksum is right but whose write point is ahead of
/// its block's programmed pages (page 6 of a block with 1 page programmed):
/// prewriting the file programmed page 6 and the NAND model panicked
/// ("program of page 6 but the next programmable page is 1").
#[test]
fn a_write_point_ahead_of_its_blocks_is_refused() {
    let e = load_and_run("dftl", "state_file/dftl-write-point-ahead.state");
    let e = e.expect("the state is refused");
    assert!(
        e.contains("write point") && e.contains("pages programmed"),
        "{e}"
    );
}

/// Runs scenario `file` of `fuzz/regressions/` on a thread; returns its
/// outcome as text, or `None` if it has not finished within `secs`
/// seconds (the thread is left running).
fn run_within(file: &str, secs: u64) -> Option<String> {
    let sc = Scenario::load(&regression(file), &[]).expect("scenario");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = Simulation::new(sc).and_then(|s| {
            s.run(RunOptions {
                allow_empty: true,
                ..RunOptions::default()
            })
        });
        let _ = tx.send(match r {
            Ok(r) => format!("{} requests", r.workload.requests.count),
            Err(e) => format!("error: {e}"),
        });
    });
    rx.recv_timeout(std::time::Duration::from_secs(secs)).ok()
}

/// `dirty_writeback_centisecs = 0` disables periodic writeback; the
/// flusher re-armed its tick at the same instant for ever and the run
/// never finished (found by `scenario_fs` as a timeout).
#[test]
fn periodic_writeback_off_finishes() {
    let r = run_within("scenario_fs/writeback-zero.toml", 120);
    let r = r.expect("the run finishes");
    assert!(!r.starts_with("error"), "{r}");
}

/// SQLite jobs filling a 4 MiB ext4 without a journal: writeback found no
/// block for pages a write() had dirtied and panicked ("file system full
/// at writeback", found by `scenario_fs`). Space is now reserved when
/// write() dirties a page (delayed allocation), so the write fails with
/// ENOSPC instead and the run completes.
#[test]
fn a_full_file_system_fails_the_write_not_the_writeback() {
    let r = run_within("scenario_fs/enospc-at-writeback.toml", 120);
    let r = r.expect("the run finishes without a panic");
    assert!(!r.starts_with("error"), "{r}");
}

/// SQLite in TRUNCATE mode on ext4 with data=journal: the journal file's
/// pages were journaled, truncated and written again at other blocks, and
/// their old buffers never left the checkpoint list. The checkpoint waited
/// for them for ever, two fdatasync calls waited for the commit behind it,
/// and only periodic timers ran until the clock's limit (found by
/// `scenario_fs` as a timeout). A truncated buffer now leaves the
/// checkpoint list (`journal_unmap_buffer`), the run completes, and its
/// report shows the forced checkpoints it needed.
#[test]
fn a_truncated_journaled_page_leaves_the_checkpoint_list() {
    let sc = Scenario::load(
        &regression("scenario_fs/journal-truncate-checkpoint.toml"),
        &[],
    )
    .expect("scenario");
    let r = Simulation::new(sc)
        .and_then(|s| s.run(RunOptions::default()))
        .expect("the run completes");
    let Some(mmcsim::host::fs::FsReport::Ext4(fs)) = r.fs else {
        panic!("an ext4 report");
    };
    assert!(fs.stats.checkpoints > 0, "{:?}", fs.stats);
    assert!(fs.stats.data_blocks_journaled > 0, "{:?}", fs.stats);
    // Simulated time stays that of 11 small transactions, not the clock's
    // limit.
    let t = r.workload.simulated_time_s;
    assert!(t < 60.0, "{t}");
}
