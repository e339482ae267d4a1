#![no_main]
//! Arbitrary bytes as a `--load-state` file against a small (4 MiB raw)
//! device with each mapping scheme (page, hybrid, DFTL), then a short run
//! from the loaded state, as `simctl run --load-state FILE` does; no input
//! may panic: a state the reader refuses is an error.
//!
//! The case is structure-aware: the bytes are the whole file, or a
//! payload the target wraps in a valid header (magic, version, geometry,
//! profile hash, length and checksum of the payload), or edits (byte
//! writes, 32-bit writes, cuts, insertions) of a real saved state of the
//! same device with its header recomputed; so the fuzzer gets past the
//! checksum into the payload (summary, version oracle, mapping state).
//!
//! With `MMCSIM_FUZZ_STATE_OUT=FILE` set, each case's state file is also
//! written to FILE (to turn a crash into a test that loads that file).

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use mmcsim::config::Scenario;
use mmcsim::device::state::{fnv1a, FORMAT_VERSION};
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use std::path::Path;
use std::sync::OnceLock;

const HEADER_BYTES: usize = 8 + 4 + 24 + 8 + 8 + 8;

/// The scenario for `mapping` (`fuzz/regressions/state_file/scenario.toml`,
/// shared with the regression test): a 4 MiB raw device, a quarter filled,
/// with a short random write/read job.
fn scenario_text(mapping: &str) -> String {
    include_str!("../regressions/state_file/scenario.toml").replace("MAPPING", mapping)
}

/// A mapping scheme's scenario, its key and a state saved from it.
struct Base {
    scenario: Scenario,
    key: String,
    saved: Vec<u8>,
}

fn bases() -> &'static Vec<Base> {
    static BASES: OnceLock<Vec<Base>> = OnceLock::new();
    BASES.get_or_init(|| {
        ["page", "hybrid", "dftl"]
            .iter()
            .filter_map(|m| {
                let sc = Scenario::from_toml(&scenario_text(m), "fuzz.toml", "".into(), &[])
                    .map_err(|e| eprintln!("state_file: no `{m}` base: {e}"))
                    .ok()?;
                let key = PreparedDevice::key(&sc).ok()?;
                let saved = PreparedDevice::new(&sc).ok()?.save_state().ok()?;
                Some(Base {
                    scenario: sc,
                    key,
                    saved,
                })
            })
            .collect()
    })
}

#[derive(Arbitrary, Debug)]
enum Bytes {
    /// The whole file as given.
    Raw(Vec<u8>),
    /// A payload, wrapped in a valid header.
    Payload(Vec<u8>),
    /// Edits of the saved state's payload, wrapped in a valid header.
    Edited(Vec<Edit>),
    /// Edits of the whole saved file (header included), not fixed up.
    EditedFile(Vec<Edit>),
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Byte {
        at: u32,
        value: u8,
    },
    Word {
        at: u32,
        value: u32,
    },
    /// Sets a 32-bit word to a small or boundary value.
    Boundary {
        at: u32,
        which: u8,
    },
    Cut {
        at: u32,
        len: u16,
    },
    Insert {
        at: u32,
        bytes: Vec<u8>,
    },
    Truncate {
        at: u32,
    },
}

#[derive(Arbitrary, Debug)]
struct Case {
    /// Mapping scheme (modulo the schemes built).
    scheme: u8,
    bytes: Bytes,
    /// Whether a loaded state also runs the scenario's job.
    run: bool,
}

fn apply(buf: &mut Vec<u8>, edits: &[Edit]) {
    for e in edits.iter().take(64) {
        let n = buf.len();
        if n == 0 {
            if let Edit::Insert { bytes, .. } = e {
                buf.extend_from_slice(bytes);
            }
            continue;
        }
        let pos = |at: u32| at as usize % n;
        match e {
            Edit::Byte { at, value } => buf[pos(*at)] = *value,
            Edit::Word { .. } | Edit::Boundary { .. } if n < 4 => {}
            Edit::Word { at, value } => {
                let p = pos(*at).min(n - 4);
                buf[p..p + 4].copy_from_slice(&value.to_le_bytes());
            }
            Edit::Boundary { at, which } => {
                let v: u32 = match which % 8 {
                    0 => 0,
                    1 => 1,
                    2 => 2,
                    3 => u32::MAX,
                    4 => u32::MAX - 1,
                    5 => i32::MAX as u32,
                    6 => 1 << 16,
                    _ => 255,
                };
                let p = pos(*at).min(n - 4);
                buf[p..p + 4].copy_from_slice(&v.to_le_bytes());
            }
            Edit::Cut { at, len } => {
                let p = pos(*at);
                let end = (p + *len as usize).min(n);
                buf.drain(p..end);
            }
            Edit::Insert { at, bytes } => {
                let p = pos(*at);
                buf.splice(p..p, bytes.iter().copied());
            }
            Edit::Truncate { at } => buf.truncate(pos(*at)),
        }
    }
}

/// `payload` behind a header valid for `base`'s device.
fn wrap(base: &Base, payload: &[u8]) -> Vec<u8> {
    let mut out = base.saved[..HEADER_BYTES.min(base.saved.len())].to_vec();
    out.truncate(36);
    out.extend_from_slice(&fnv1a(base.key.as_bytes()).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fuzz_target!(|c: Case| {
    let bases = bases();
    if bases.is_empty() {
        return;
    }
    let base = &bases[c.scheme as usize % bases.len()];
    debug_assert_eq!(&base.saved[8..12], &FORMAT_VERSION.to_le_bytes());
    let file = match &c.bytes {
        Bytes::Raw(b) => b.clone(),
        Bytes::Payload(p) => wrap(base, p),
        Bytes::Edited(edits) => {
            let mut p = base.saved.get(HEADER_BYTES..).unwrap_or_default().to_vec();
            apply(&mut p, edits);
            wrap(base, &p)
        }
        Bytes::EditedFile(edits) => {
            let mut f = base.saved.clone();
            apply(&mut f, edits);
            f
        }
    };
    if let Some(out) = std::env::var_os("MMCSIM_FUZZ_STATE_OUT") {
        // Reproducing a crash: keep the state file the case made.
        let _ = std::fs::write(&out, &file);
        let mut key = out;
        key.push(".key");
        let _ = std::fs::write(key, &base.key);
    }
    let Ok(device) = PreparedDevice::load_state(&base.scenario, &file, Path::new("fuzz.state"))
    else {
        return;
    };
    if c.run {
        let registry = mmcsim::sched::builtin();
        if let Ok(sim) = Simulation::with_owned_device(base.scenario.clone(), &registry, device) {
            let _ = sim.run(RunOptions::default());
        }
    }
});
