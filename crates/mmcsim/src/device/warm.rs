//! Warming the simulator's own CPU caches: a performance hint, not a
//! modelled mechanism.
//!
//! Contract: the stages above may tell the device which sectors a coming
//! command touches ([`super::Emmc::warm`]) as soon as they know it (trace
//! replay when it reads a record, the driver when it fetches a request).
//! The device then asks the host CPU running the simulation to prefetch
//! the cache lines of its large per-page tables (the L2P table, the
//! integrity oracle: megabytes, read at random by a random
//! workload), so the command's own lookups find them in cache instead of
//! stalling on memory. Nothing simulated changes: no state, time or
//! counter reads or writes differently, and the reports are byte-identical
//! with or without the hints.

/// Asks the CPU to bring the cache line holding `x` into its caches
/// (x86-64 `PREFETCHT0`); a no-op on other architectures. It never
/// faults and has no effect a program can observe other than speed.
#[inline]
pub fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `x` is a valid reference, and PREFETCHT0 only hints the
    // cache hierarchy: it reads nothing into a register, writes nothing and
    // cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
