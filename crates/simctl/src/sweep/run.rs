//! Running a sweep's cells: in parallel (rayon), skipping finished ones,
//! sharing preconditioned devices between cells that precondition the
//! same device, and writing each report atomically.

use super::cell::Cell;
use super::layout::{cell_path, read_complete, write_atomic};
use indicatif::{ProgressBar, ProgressStyle};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// What running a set of cells did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Cells simulated now.
    pub ran: usize,
    /// Cells skipped because their report was already complete.
    pub skipped: usize,
    /// Cells that failed, with the reason, in cell order.
    pub failed: Vec<(usize, String)>,
    /// Distinct preconditioned devices built.
    pub devices_prepared: usize,
}

/// One preconditioned device, built by the first cell that needs it.
type DeviceSlot = Arc<OnceLock<Result<Arc<PreparedDevice>, String>>>;

/// Preconditioned devices shared by the cells still to run: a device is
/// built once, by the first cell that needs it (others wait for it), and
/// dropped when the last cell using it has finished, so memory holds only
/// the devices of cells in flight.
struct DeviceCache {
    slots: Mutex<HashMap<String, (usize, DeviceSlot)>>,
    built: Mutex<usize>,
}

impl DeviceCache {
    /// A cache expecting each key of `keys` once per cell using it.
    fn new<'a>(keys: impl Iterator<Item = &'a String>) -> DeviceCache {
        let mut slots: HashMap<String, (usize, DeviceSlot)> = HashMap::new();
        for k in keys {
            slots.entry(k.clone()).or_default().0 += 1;
        }
        DeviceCache {
            slots: Mutex::new(slots),
            built: Mutex::new(0),
        }
    }

    /// The prepared device for `key`, building it from `sc` if no cell has.
    fn get(&self, key: &str, sc: &Scenario) -> Result<Arc<PreparedDevice>, String> {
        let slot = {
            let slots = self.slots.lock().expect("device cache lock");
            slots
                .get(key)
                .map(|(_, s)| s.clone())
                .expect("every key counted")
        };
        slot.get_or_init(|| {
            *self.built.lock().expect("counter lock") += 1;
            PreparedDevice::new(sc)
                .map(Arc::new)
                .map_err(|e| format!("preconditioning the device: {e}"))
        })
        .clone()
    }

    /// A cell using `key` has finished; the last one drops the device.
    fn release(&self, key: &str) {
        let mut slots = self.slots.lock().expect("device cache lock");
        if let Some((n, _)) = slots.get_mut(key) {
            *n -= 1;
            if *n == 0 {
                slots.remove(key);
            }
        }
    }
}

/// The message of a panic payload.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// Runs every cell of `cells` whose report is not complete in `dir`, on
/// `jobs` workers (default: one per core).
pub fn run_cells(
    dir: &Path,
    cells: &[&Cell],
    registry: &Registry,
    jobs: Option<usize>,
) -> anyhow::Result<Outcome> {
    let mut out = Outcome::default();
    // Scenarios of the cells to run (cheap: files parsed, nothing built);
    // one that does not load is a failed cell.
    let mut pending: Vec<(&Cell, Scenario, String)> = Vec::new();
    for &c in cells {
        if read_complete(&cell_path(dir, &c.id)).is_some() {
            out.skipped += 1;
            continue;
        }
        match c
            .scenario()
            .and_then(|sc| Ok((PreparedDevice::key(&sc)?, sc)))
        {
            Ok((key, sc)) => pending.push((c, sc, key)),
            Err(e) => out.failed.push((c.index, format!("{e:#}"))),
        }
    }
    // Cells sharing a device run next to each other.
    pending.sort_by(|a, b| a.2.cmp(&b.2).then(a.0.index.cmp(&b.0.index)));
    let cache = DeviceCache::new(pending.iter().map(|p| &p.2));

    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::new(pending.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells {msg}",
            )
            .expect("valid template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };

    let work = |(c, sc, key): (&Cell, Scenario, String)| -> (usize, Result<(), String>) {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let device = cache.get(&key, &sc)?;
            let report = Simulation::with_prepared_device(sc, registry, &device)
                .and_then(|s| s.run(RunOptions::default()))
                .map_err(|e| e.to_string())?;
            drop(device);
            write_atomic(&cell_path(dir, &c.id), (report.to_json() + "\n").as_bytes())
                .map_err(|e| format!("{e:#}"))
        }))
        .unwrap_or_else(|p| Err(format!("the simulator panicked: {}", panic_message(&*p))));
        cache.release(&key);
        bar.inc(1);
        (c.index, result)
    };
    let results: Vec<(usize, Result<(), String>)> = match jobs {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| anyhow::anyhow!("starting worker threads: {e}"))?
            .install(|| pending.into_par_iter().map(work).collect()),
        None => pending.into_par_iter().map(work).collect(),
    };
    bar.finish_and_clear();
    for (index, r) in results {
        match r {
            Ok(()) => out.ran += 1,
            Err(e) => out.failed.push((index, e)),
        }
    }
    out.failed.sort_by_key(|f| f.0);
    out.devices_prepared = *cache.built.lock().expect("counter lock");
    Ok(out)
}
