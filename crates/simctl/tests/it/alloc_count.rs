//! No allocation per event: once a simulation is warmed up, running twice
//! the requests costs no more allocations than running the requests once
//! (plus a small constant), counted by a global allocator that wraps
//! [`System`].
//!
//! The counter is per thread: the simulation runs on the test's thread, and
//! the other tests of this binary allocate on theirs without touching it.

use mmcsim::config::Scenario;
use mmcsim::sim::{RunOptions, Simulation};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// [`System`], counting every allocation and reallocation of the calling
/// thread.
struct Counting;

thread_local! {
    /// Allocations and reallocations made by this thread.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

/// Counts one allocation on the calling thread (not during thread teardown,
/// when the thread-local is gone).
fn count() {
    let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
}

/// Allocations so far on the calling thread.
fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
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
profile = "../../../configs/devices/generic-emmc.toml"

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
    let base = crate::common::data("");
    Scenario::from_toml(&text, "alloc-count", base, &[]).expect("scenario parses")
}

/// Allocations made while running (not building) the simulation.
fn run_allocs(requests: u64, op: &str, direct: bool) -> u64 {
    let sim = Simulation::new(scenario(requests, op, direct)).expect("builds");
    let before = allocs();
    let report = sim.run(RunOptions::default()).expect("runs");
    let after = allocs();
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
