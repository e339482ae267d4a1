//! Running a sweep's cells: in parallel (rayon), skipping finished ones,
//! sharing preconditioned devices between cells that precondition the
//! same device, and writing each report atomically. A crash grid's cell
//! runs its power-cut campaign on the shared device ([`super::crash`]).

use super::cell::Cell;
use super::crash::CrashGrid;
use super::layout::{cell_path, read_complete};
use crate::output::write_file;
use indicatif::{ProgressBar, ProgressStyle};
use mmcsim::config::Scenario;
use mmcsim::sched::Registry;
use mmcsim::sim::{PreparedDevice, RunOptions, Simulation};
use std::collections::{BTreeMap, VecDeque};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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

/// Where a group's preconditioned device stands.
enum DeviceState<D> {
    /// No worker has started building it.
    Unbuilt,
    /// A worker is building it; cells of the group wait for it.
    Building,
    /// Built; shared by the group's cells in flight.
    Ready(Arc<D>),
    /// Building failed; every cell of the group fails with this reason.
    Failed(String),
    /// The group's last cell has finished; the device is dropped.
    Dropped,
}

/// The cells sharing one preconditioned device.
struct Group<T, D> {
    /// Cells not yet started, in cell order.
    cells: VecDeque<T>,
    /// Cells started and not yet finished.
    in_flight: usize,
    device: DeviceState<D>,
}

/// What a worker takes from the dispatcher.
enum Task<T, D> {
    /// Run this cell of group `.0` on the group's built device (or fail
    /// it with the reason the device could not be built).
    Run(usize, T, Result<Arc<D>, String>),
    /// Build group `.0`'s device, then run this cell on it.
    BuildThenRun(usize, T),
}

/// Hands cells to workers so that a worker never waits for a device
/// another worker is building while other work exists: it prefers a cell
/// whose device is built (keeping few devices in memory), then starts a
/// device nobody builds yet, and waits only when every remaining cell
/// needs a device under construction. A device is dropped when the last
/// cell of its group finishes, so memory holds only the devices of
/// groups in flight (at most one per worker beyond those in use).
struct Dispatcher<T, D> {
    groups: Mutex<Vec<Group<T, D>>>,
    changed: Condvar,
    built: AtomicUsize,
}

impl<T, D> Dispatcher<T, D> {
    /// A dispatcher over `pending` (cell, device key), grouped by device
    /// key in key order, each group's cells in the order given.
    fn new(pending: impl IntoIterator<Item = (T, String)>) -> Dispatcher<T, D> {
        let mut by_key: BTreeMap<String, VecDeque<T>> = BTreeMap::new();
        for (cell, key) in pending {
            by_key.entry(key).or_default().push_back(cell);
        }
        let groups = by_key
            .into_values()
            .map(|cells| Group {
                cells,
                in_flight: 0,
                device: DeviceState::Unbuilt,
            })
            .collect();
        Dispatcher {
            groups: Mutex::new(groups),
            changed: Condvar::new(),
            built: AtomicUsize::new(0),
        }
    }

    /// The next task, or `None` when no cell is left to start.
    fn next(&self) -> Option<Task<T, D>> {
        let mut groups = self.groups.lock().expect("dispatcher lock");
        loop {
            let ready = groups.iter().position(|g| {
                !g.cells.is_empty()
                    && matches!(g.device, DeviceState::Ready(_) | DeviceState::Failed(_))
            });
            if let Some(i) = ready {
                let g = &mut groups[i];
                let cell = g.cells.pop_front().expect("non-empty group");
                g.in_flight += 1;
                let device = match &g.device {
                    DeviceState::Ready(d) => Ok(d.clone()),
                    DeviceState::Failed(e) => Err(e.clone()),
                    _ => unreachable!("selected as built"),
                };
                return Some(Task::Run(i, cell, device));
            }
            let unbuilt = groups
                .iter()
                .position(|g| !g.cells.is_empty() && matches!(g.device, DeviceState::Unbuilt));
            if let Some(i) = unbuilt {
                let g = &mut groups[i];
                let cell = g.cells.pop_front().expect("non-empty group");
                g.in_flight += 1;
                g.device = DeviceState::Building;
                return Some(Task::BuildThenRun(i, cell));
            }
            if groups.iter().all(|g| g.cells.is_empty()) {
                return None;
            }
            groups = self.changed.wait(groups).expect("dispatcher lock");
        }
    }

    /// Group `i`'s device was built (or failed to build).
    fn device_built(&self, i: usize, device: &Result<Arc<D>, String>) {
        self.built.fetch_add(1, Ordering::Relaxed);
        let mut groups = self.groups.lock().expect("dispatcher lock");
        groups[i].device = match device {
            Ok(d) => DeviceState::Ready(d.clone()),
            Err(e) => DeviceState::Failed(e.clone()),
        };
        self.changed.notify_all();
    }

    /// A cell of group `i` has finished; the group's last drops its device.
    fn finished(&self, i: usize) {
        let mut groups = self.groups.lock().expect("dispatcher lock");
        let g = &mut groups[i];
        g.in_flight -= 1;
        if g.in_flight == 0 && g.cells.is_empty() {
            g.device = DeviceState::Dropped;
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

/// A cell to run: its scenario and its device's preparation key.
type Pending<'a> = (&'a Cell, Scenario, String);

/// The cells of `cells` whose report is not complete in `dir`, with their
/// scenarios (cheap: files parsed, nothing built); complete ones count as
/// skipped and one that does not load as failed, in `out`.
fn pending<'a>(
    dir: &Path,
    cells: &[&'a Cell],
    crash: Option<CrashGrid>,
    out: &mut Outcome,
) -> Vec<Pending<'a>> {
    let mut pending = Vec::new();
    for &c in cells {
        // A report of another cell in this cell's file runs again, as does
        // a crash cell's report without the grid's cuts.
        let done = read_complete(&cell_path(dir, &c.id)).is_some_and(|(_, v)| {
            super::layout::foreign_cell(&c.record(), &v).is_none()
                && crash.is_none_or(|g| g.finished(&v))
        });
        if done {
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
    pending
}

/// A progress bar of `n` cells on a terminal, else a hidden one.
fn progress(n: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(n as u64);
    b.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} cells {msg}",
        )
        .expect("valid template"),
    );
    b
}

/// The device of `task`: shared from its group, or built (and handed to
/// the group's waiting cells) by this one.
fn device_of(
    task: Task<(&Cell, Scenario), PreparedDevice>,
    dispatcher: &Dispatcher<(&Cell, Scenario), PreparedDevice>,
) -> (Scenario, Result<Arc<PreparedDevice>, String>) {
    match task {
        Task::Run(_, (_, sc), device) => (sc, device),
        Task::BuildThenRun(group, (_, sc)) => {
            let device = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                PreparedDevice::new(&sc)
                    .map(Arc::new)
                    .map_err(|e| format!("preconditioning the device: {e}"))
            }))
            .unwrap_or_else(|p| {
                Err(format!(
                    "the simulator panicked preconditioning the device: {}",
                    panic_message(&*p)
                ))
            });
            dispatcher.device_built(group, &device);
            (sc, device)
        }
    }
}

/// Runs one cell's task and writes its report into `dir`; a panic is a
/// failed cell.
fn run_task(
    task: Task<(&Cell, Scenario), PreparedDevice>,
    cell: &Cell,
    dispatcher: &Dispatcher<(&Cell, Scenario), PreparedDevice>,
    crash: Option<CrashGrid>,
    registry: &Registry,
    dir: &Path,
) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (sc, device) = device_of(task, dispatcher);
        let device = device?;
        let report = match crash {
            None => Simulation::with_prepared_device(sc, registry, &device)
                .and_then(|s| s.run(RunOptions::default())),
            Some(g) => g.run(&sc, registry, &device),
        }
        .map_err(|e| e.to_string())?;
        drop(device);
        write_file(
            &cell_path(dir, &cell.id),
            (report.to_json() + "\n").as_bytes(),
        )
        .map_err(|e| format!("{e:#}"))
    }))
    .unwrap_or_else(|p| Err(format!("the simulator panicked: {}", panic_message(&*p))))
}

/// Runs every cell of `cells` whose report is not complete in `dir`, on
/// `jobs` workers (default: one per core); with `crash`, each cell's
/// power-cut campaign.
pub fn run_cells(
    dir: &Path,
    cells: &[&Cell],
    crash: Option<CrashGrid>,
    registry: &Registry,
    jobs: Option<usize>,
) -> anyhow::Result<Outcome> {
    let mut out = Outcome::default();
    let pending = pending(dir, cells, crash, &mut out);
    let total = pending.len();
    let bar = progress(total);
    let dispatcher: Dispatcher<(&Cell, Scenario), PreparedDevice> =
        Dispatcher::new(pending.into_iter().map(|(c, sc, key)| ((c, sc), key)));
    let results: Mutex<Vec<(usize, Result<(), String>)>> = Mutex::new(Vec::with_capacity(total));
    let worker = || {
        while let Some(task) = dispatcher.next() {
            let (group, cell) = match &task {
                Task::Run(g, (c, _), _) | Task::BuildThenRun(g, (c, _)) => (*g, *c),
            };
            let result = run_task(task, cell, &dispatcher, crash, registry, dir);
            dispatcher.finished(group);
            bar.inc(1);
            results
                .lock()
                .expect("results lock")
                .push((cell.index, result));
        }
    };
    let run_workers = |n: usize| {
        rayon::scope(|s| {
            for _ in 0..n {
                s.spawn(|_| worker());
            }
        })
    };
    match jobs {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| anyhow::anyhow!("starting worker threads: {e}"))?
            .install(|| run_workers(n.max(1))),
        None => run_workers(rayon::current_num_threads()),
    }
    let mut results = results.into_inner().expect("results lock");
    results.sort_by_key(|r| r.0);
    bar.finish_and_clear();
    for (index, r) in results {
        match r {
            Ok(()) => out.ran += 1,
            Err(e) => out.failed.push((index, e)),
        }
    }
    out.failed.sort_by_key(|f| f.0);
    out.devices_prepared = dispatcher.built.load(Ordering::Relaxed);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next_kind(d: &Dispatcher<u32, ()>) -> Option<(usize, u32, bool)> {
        d.next().map(|t| match t {
            Task::Run(g, c, _) => (g, c, false),
            Task::BuildThenRun(g, c) => (g, c, true),
        })
    }

    #[test]
    fn a_worker_starts_another_device_instead_of_waiting_for_one_being_built() {
        let d: Dispatcher<u32, ()> =
            Dispatcher::new([(0, "b"), (1, "a"), (2, "b"), (3, "a")].map(|(c, k)| (c, k.into())));
        // Groups in key order ("a" then "b"), cells in the order given.
        assert_eq!(next_kind(&d), Some((0, 1, true)), "first worker builds a");
        assert_eq!(
            next_kind(&d),
            Some((1, 0, true)),
            "second builds b, not waits for a"
        );
        d.device_built(1, &Ok(Arc::new(())));
        assert_eq!(
            next_kind(&d),
            Some((1, 2, false)),
            "b's next cell runs on b"
        );
        d.device_built(0, &Err("no space".into()));
        match d.next() {
            Some(Task::Run(0, 3, Err(e))) => assert_eq!(e, "no space"),
            _ => panic!("a's cells fail with its build error"),
        }
        for g in [0, 1, 1, 0] {
            d.finished(g);
        }
        assert!(d.next().is_none(), "no cell left");
        let groups = d.groups.lock().unwrap();
        assert!(groups
            .iter()
            .all(|g| matches!(g.device, DeviceState::Dropped)));
        assert_eq!(d.built.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_built_device_is_preferred_so_few_devices_are_alive() {
        let d: Dispatcher<u32, ()> =
            Dispatcher::new([(0, "a"), (1, "a"), (2, "b")].map(|(c, k)| (c, k.into())));
        assert_eq!(next_kind(&d), Some((0, 0, true)));
        d.device_built(0, &Ok(Arc::new(())));
        assert_eq!(
            next_kind(&d),
            Some((0, 1, false)),
            "a's cell before building b"
        );
        d.finished(0);
        d.finished(0);
        assert!(matches!(
            d.groups.lock().unwrap()[0].device,
            DeviceState::Dropped
        ));
        assert_eq!(next_kind(&d), Some((1, 2, true)));
    }
}
