//! Running simulations that start from the same preconditioned device:
//! preconditioning a phone-sized part to steady state costs more than most
//! runs that follow it, and a sweep's cells or `reproduce`'s runs on one
//! profile and seed all precondition the same device (the device profile
//! with its overrides, `[precondition]` and the seed:
//! [`PreparedDevice::key`]). Each such group builds its device once and
//! every run of the group starts from a clone of it, which gives the same
//! report as preconditioning again ([`Simulation::with_prepared_device`]).
//!
//! [`Simulation::with_prepared_device`]: mmcsim::sim::Simulation::with_prepared_device

use mmcsim::sim::PreparedDevice;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// A group's device, or why it could not be built.
pub(crate) type Device = Result<Arc<PreparedDevice>, String>;

/// What [`run`] did: each item's result, in the order of the items, and
/// how many distinct devices were preconditioned.
pub(crate) struct Shared<R> {
    /// The results, in the order of the items given.
    pub results: Vec<R>,
    /// Distinct preconditioned devices built.
    pub devices_prepared: usize,
}

/// Runs `work` over `items` (each with its device's preparation key) on
/// `jobs` workers (default: one per core). The first item of a key's
/// group to start builds the device with `prepare` (a panic there is the
/// group's error, not a crash); every item of the group then runs on it.
/// The results come back in the order of `items`, whatever the scheduling.
pub(crate) fn run<T: Send, R: Send>(
    items: Vec<(T, String)>,
    jobs: Option<usize>,
    prepare: impl Fn(&T) -> Result<PreparedDevice, String> + Sync,
    work: impl Fn(T, Device) -> R + Sync,
) -> anyhow::Result<Shared<R>> {
    let total = items.len();
    let dispatcher: Dispatcher<(usize, T), PreparedDevice> = Dispatcher::new(
        items
            .into_iter()
            .enumerate()
            .map(|(i, (t, key))| ((i, t), key)),
    );
    let results: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(total));
    let worker = || {
        while let Some(task) = dispatcher.next() {
            let (group, (index, item), device) = match task {
                Task::Run(g, item, device) => (g, item, device),
                Task::BuildThenRun(g, item) => {
                    let device = prepare_caught(&prepare, &item.1);
                    dispatcher.device_built(g, &device);
                    (g, item, device)
                }
            };
            let r = work(item, device);
            dispatcher.finished(group);
            results.lock().expect("results lock").push((index, r));
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
    Ok(Shared {
        results: results.into_iter().map(|(_, r)| r).collect(),
        devices_prepared: dispatcher.built.load(Ordering::Relaxed),
    })
}

/// `prepare(item)`, a panic turned into the group's error.
fn prepare_caught<T>(
    prepare: &(impl Fn(&T) -> Result<PreparedDevice, String> + Sync),
    item: &T,
) -> Device {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| prepare(item).map(Arc::new)))
        .unwrap_or_else(|p| {
            Err(format!(
                "the simulator panicked preconditioning the device: {}",
                panic_message(&*p)
            ))
        })
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
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
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
