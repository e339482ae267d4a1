//! The integrity oracle: the newest version the host wrote to every LPN.
//!
//! Every 4 KiB the host writes carries a fresh version number down the
//! pipeline (write buffer → FTL → the slot it lands in); the oracle keeps
//! the version each LPN must read back (0 = never written or trimmed), so
//! [`super::Emmc::check_integrity`] can prove the FTL returns the newest data.

/// Expected version of every LPN.
#[derive(Clone, Debug)]
pub struct VersionOracle {
    expected: Vec<u32>,
    next: u32,
}

impl VersionOracle {
    /// An oracle of `lpns` logical pages, none written.
    pub fn new(lpns: u32) -> VersionOracle {
        VersionOracle {
            expected: vec![0; lpns as usize],
            next: 1,
        }
    }

    /// Prefetches the host-CPU cache line of `lpn`'s expected version,
    /// which a write of `lpn` records (a simulator performance hint, see
    /// [`crate::device::warm`]).
    #[inline]
    pub fn warm(&self, lpn: u32) {
        if let Some(e) = self.expected.get(lpn as usize) {
            crate::device::warm::prefetch(e);
        }
    }

    /// A fresh version for a host write of `lpn`, recorded as its newest.
    pub fn write(&mut self, lpn: u32) -> u32 {
        let v = self.next;
        self.next = self.next.checked_add(1).expect("oracle version overflow");
        self.expected[lpn as usize] = v;
        v
    }

    /// Records that `lpn` was trimmed: it must read as unmapped.
    pub fn trim(&mut self, lpn: u32) {
        self.expected[lpn as usize] = 0;
    }

    /// The newest version of every LPN (0 = never written or trimmed).
    pub fn expected(&self) -> &[u32] {
        &self.expected
    }

    /// The version the next write gets (saved device state).
    pub fn next_version(&self) -> u32 {
        self.next
    }

    /// Restores a saved oracle: the next version, and the expected versions
    /// filled in by `fill` (saved device state).
    pub fn restore<E>(
        &mut self,
        next: u32,
        fill: impl FnOnce(&mut [u32]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.next = next;
        fill(&mut self.expected)
    }
}
