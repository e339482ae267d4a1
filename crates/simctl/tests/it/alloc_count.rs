//! No allocation per event: once a simulation is warmed up, running twice
//! the requests costs no more allocations than running the requests once
//! (plus a small constant), counted by a global allocator that wraps
//! [`System`].
//!
//! The file holds a single test, so nothing else allocates in the process
//! while it counts.

use mmcsim::config::Scenario;
use mmcsim::sim::{RunOptions, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// [`System`], counting every allocation and reallocation.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A closed-loop random 4 KiB workload: 4 threads issuing `requests`
/// random 4 KiB `op`s each (`direct` or through the page cache) on a
/// device 90 % full, so writes run GC.
fn scenario(requests: u64, op: &str, direct: bool) -> Scenario {
    let text = format!(
        r#"
name = "alloc-count"
seed = 7

[device]
profile = "../configs/devices/generic-emmc.toml"

[scheduler]
name = "deadline"

[precondition]
fill_fraction = 0.9
steady_state = false

[[files]]
name = "data"
size_mib = 64

[[jobs]]
name = "random"
file = "data"
op = "{op}"
pattern = "random"
request_bytes = 4096
direct = {direct}
threads = 4
requests = {requests}
"#
    );
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests");
    Scenario::from_toml(&text, "alloc-count", base, &[]).expect("scenario parses")
}

/// Allocations made while running (not building) the simulation.
fn run_allocs(requests: u64, op: &str, direct: bool) -> u64 {
    let sim = Simulation::new(scenario(requests, op, direct)).expect("builds");
    let before = ALLOCS.load(Ordering::Relaxed);
    let report = sim.run(RunOptions::default()).expect("runs");
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(report.workload.requests.count, 4 * requests);
    after - before
}

#[test]
fn allocations_do_not_grow_with_events() {
    const N: u64 = 5_000;
    for (op, direct) in [
        ("read", true),
        ("write", true),
        ("read", false),
        ("write", false),
    ] {
        let once = run_allocs(N, op, direct);
        let twice = run_allocs(2 * N, op, direct);
        let op = if direct {
            format!("direct {op}")
        } else {
            format!("buffered {op}")
        };
        eprintln!(
            "{op}: {N} requests/thread: {once} allocations; {}: {twice}",
            2 * N
        );
        // Steady state allocates nothing per request: doubling the
        // requests (20,000 more, with device writes running GC through the
        // FTL's preallocated free and victim sets) may add only a small
        // constant (amortised growth of a few buffers), far below one
        // allocation per 300 requests.
        let slack = 64;
        assert!(
            twice <= once + slack,
            "{op}: {} requests allocate {twice} times, {N} requests {once} times: the hot path allocates per event",
            2 * N
        );
    }
}
