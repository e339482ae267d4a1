//! What a program thread asks for next ([`Action`]) and the device
//! counters it reads at its own boundaries ([`IoMark`]): the vocabulary
//! shared by [`super::program::Program`] and every program, kept in a
//! leaf so programs and the jobs stage do not import each other.

use crate::host::Syscall;
use crate::types::Ns;

/// What a program thread does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Issue this system call.
    Call(Syscall),
    /// Sleep this long, ns, then ask again.
    Sleep(Ns),
    /// Nothing for now (its phase is over or it finished); the program
    /// names it in [`super::program::Program::ready`] when it may go on.
    Idle,
}

/// Cumulative device-level counters a program reads at its boundaries
/// (SQLite: statement boundaries): 4 KiB blocks written and cache flushes,
/// from the collector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoMark {
    /// 4 KiB blocks written to the device so far.
    pub block_writes: u64,
    /// Cache flushes sent to the device so far.
    pub flushes: u64,
}
