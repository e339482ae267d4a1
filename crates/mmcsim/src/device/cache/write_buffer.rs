//! Controller write buffer (eMMC 4.5 volatile cache or a power-protected
//! buffer).
//!
//! Contract: the buffer keeps host data until the FTL has programmed it and
//! decides nothing about timing beyond "wait for space"; the firmware
//! programs a full stripe page when [`WriteBuffer::push`] says so, on a
//! flush and on a FUA write to a volatile buffer, and reads buffered LPNs
//! from it ([`WriteBuffer::holds`]).
//!
//! Host data enters as 4 KiB entries `(lpn, version)`. Entries wait in
//! `pending` until a full stripe page has accumulated; the controller then
//! programs them and they stay *in flight* — still occupying buffer space
//! and still readable from SRAM — until the program ends. A write that finds
//! the buffer full waits for the oldest program to end. Storage is fixed at
//! creation: the hot path does not allocate. Which LPNs are resident is
//! counted in a small hash table sized for the buffer (not a count per
//! LPN of the device), so the residency check every read makes stays in
//! the CPU cache.

use crate::types::Ns;
use std::collections::VecDeque;

/// The write buffer's state.
#[derive(Clone, Debug)]
pub struct WriteBuffer {
    capacity_slots: usize,
    stripe_slots: usize,
    pending: Vec<(u32, u32)>,
    inflight: VecDeque<(Ns, u32)>,
    resident: LpnCounts,
    stalls: u64,
    /// Pending entries (a prefix) already durable in the SLC log.
    logged: usize,
}

impl WriteBuffer {
    /// An empty buffer of `capacity_slots` 4 KiB entries for `lpns` logical
    /// pages (every LPN below it may be buffered), programming
    /// `stripe_slots` entries at a time.
    pub fn new(capacity_slots: u32, stripe_slots: u32, lpns: u32) -> WriteBuffer {
        debug_assert!(lpns < u32::MAX, "u32::MAX marks an empty residency slot");
        WriteBuffer {
            capacity_slots: capacity_slots as usize,
            stripe_slots: stripe_slots as usize,
            pending: Vec::with_capacity(stripe_slots as usize),
            inflight: VecDeque::with_capacity(capacity_slots as usize),
            resident: LpnCounts::with_room(capacity_slots.max(stripe_slots) as usize),
            stalls: 0,
            logged: 0,
        }
    }
    /// Entries waiting for a full stripe page, oldest first.
    pub fn pending(&self) -> &[(u32, u32)] {
        &self.pending
    }
    /// Pending entries not yet made durable in the SLC log (all of them
    /// without one).
    pub fn unlogged(&self) -> usize {
        self.pending.len() - self.logged
    }
    /// Records that every pending entry is now durable in the SLC log; it
    /// stays pending until its stripe page is programmed.
    pub fn mark_logged(&mut self) {
        self.logged = self.pending.len();
    }
    /// True when `lpn`'s data is held in the buffer (pending or in flight).
    pub fn holds(&self, lpn: u32) -> bool {
        self.resident.get(lpn) > 0
    }
    /// Releases the space of programs that ended by `now`.
    pub fn retire(&mut self, now: Ns) {
        while let Some(&(end, lpn)) = self.inflight.front() {
            if end > now {
                break;
            }
            self.inflight.pop_front();
            self.resident.remove_one(lpn);
        }
    }
    /// Earliest time ≥ `t` at which one more entry fits; counts a stall when
    /// the writer has to wait.
    pub fn wait_for_space(&mut self, t: Ns) -> Ns {
        self.retire(t);
        let mut t2 = t;
        while self.pending.len() + self.inflight.len() >= self.capacity_slots {
            let Some((end, lpn)) = self.inflight.pop_front() else {
                break;
            };
            self.resident.remove_one(lpn);
            t2 = t2.max(end);
        }
        if t2 > t {
            self.stalls += 1;
        }
        t2
    }
    /// What [`WriteBuffer::wait_for_space`] at `t` would return, without
    /// releasing anything or counting a stall (a transfer planned before
    /// its data arrives).
    pub fn space_at(&self, t: Ns) -> Ns {
        let retired = self.inflight.iter().take_while(|e| e.0 <= t).count();
        let used = self.pending.len() + self.inflight.len() - retired;
        if used < self.capacity_slots {
            return t;
        }
        let need = used + 1 - self.capacity_slots;
        self.inflight
            .iter()
            .skip(retired)
            .take(need)
            .fold(t, |a, e| a.max(e.0))
    }
    /// Adds host data; returns true when a full stripe page is pending.
    pub fn push(&mut self, lpn: u32, version: u32) -> bool {
        self.pending.push((lpn, version));
        self.resident.add_one(lpn);
        self.pending.len() >= self.stripe_slots
    }
    /// Moves the pending entries into `out` (cleared first) for programming;
    /// with `end = Some(t)` they stay resident until `t` (timed path), with
    /// `None` they leave the buffer at once (untimed path).
    pub fn take_pending(&mut self, out: &mut Vec<(u32, u32)>, end: Option<Ns>) {
        out.clear();
        out.extend_from_slice(&self.pending);
        self.pending.clear();
        self.logged = 0;
        for &(lpn, _) in out.iter() {
            match end {
                Some(_) => {}
                None => self.resident.remove_one(lpn),
            }
        }
    }
    /// Records that the entries in `programmed` stay in the buffer until `end`.
    pub fn mark_inflight(&mut self, programmed: &[(u32, u32)], end: Ns) {
        for &(lpn, _) in programmed {
            self.inflight.push_back((end, lpn));
        }
    }
    /// Delays the programs in flight that end after `after` ns by `by` ns
    /// (their die was interrupted by an HPI read).
    pub fn delay_inflight(&mut self, after: Ns, by: Ns) {
        for e in self.inflight.iter_mut().filter(|e| e.0 > after) {
            e.0 += by;
        }
    }

    /// Time the last program in flight ends (`t` if none).
    pub fn drain_time(&self, t: Ns) -> Ns {
        self.inflight.iter().fold(t, |a, e| a.max(e.0))
    }
    /// Drops pending (not yet programmed) entries of `lpn` (discarded).
    pub fn discard(&mut self, lpn: u32) {
        if self.resident.get(lpn) == 0 {
            return;
        }
        let before = self.pending.len();
        let logged_dropped = self.pending[..self.logged]
            .iter()
            .filter(|e| e.0 == lpn)
            .count();
        self.logged -= logged_dropped;
        self.pending.retain(|e| e.0 != lpn);
        let dropped = before - self.pending.len();
        for _ in 0..dropped {
            self.resident.remove_one(lpn);
        }
    }
    /// Forgets every in-flight program (timelines reset to 0).
    pub fn clear_inflight(&mut self) {
        while let Some((_, lpn)) = self.inflight.pop_front() {
            self.resident.remove_one(lpn);
        }
    }
    /// Writes that had to wait for buffer space.
    pub fn stalls(&self) -> u64 {
        self.stalls
    }
    /// Clears the stall counter.
    pub fn reset_stats(&mut self) {
        self.stalls = 0;
    }
}

/// Marks an empty slot of [`LpnCounts`].
const EMPTY: u32 = u32::MAX;

/// How many times each LPN is in the buffer (pending or in flight): an
/// open-addressing hash table (linear probing, backward-shift deletion)
/// kept at most half full; it grows (rarely, amortised) only if the
/// buffer ever holds more entries than it was sized for.
#[derive(Clone, Debug)]
struct LpnCounts {
    /// LPN per slot, or [`EMPTY`].
    keys: Vec<u32>,
    /// Count per slot (≥ 1 where the key is set).
    counts: Vec<u32>,
    /// log2 of the table size.
    bits: u32,
    /// Occupied slots.
    len: usize,
}

impl LpnCounts {
    /// A table for up to `room` distinct LPNs before it must grow.
    fn with_room(room: usize) -> LpnCounts {
        let bits = (2 * room.max(8)).next_power_of_two().trailing_zeros();
        LpnCounts {
            keys: vec![EMPTY; 1 << bits],
            counts: vec![0; 1 << bits],
            bits,
            len: 0,
        }
    }

    fn mask(&self) -> usize {
        (1 << self.bits) - 1
    }

    /// Home slot of `lpn` (Fibonacci hashing: sequential LPNs spread).
    fn home(&self, lpn: u32) -> usize {
        ((lpn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// The slot holding `lpn`, or the empty slot where it would go.
    fn find(&self, lpn: u32) -> usize {
        let mask = self.mask();
        let mut i = self.home(lpn);
        while self.keys[i] != lpn && self.keys[i] != EMPTY {
            i = (i + 1) & mask;
        }
        i
    }

    /// Times `lpn` is in the buffer.
    fn get(&self, lpn: u32) -> u32 {
        let i = self.find(lpn);
        if self.keys[i] == lpn {
            self.counts[i]
        } else {
            0
        }
    }

    /// One more entry of `lpn`.
    fn add_one(&mut self, lpn: u32) {
        let i = self.find(lpn);
        if self.keys[i] == lpn {
            self.counts[i] += 1;
            return;
        }
        if 2 * (self.len + 1) > self.keys.len() {
            self.grow();
            return self.add_one(lpn);
        }
        self.keys[i] = lpn;
        self.counts[i] = 1;
        self.len += 1;
    }

    /// One entry of `lpn` left the buffer.
    fn remove_one(&mut self, lpn: u32) {
        let mut i = self.find(lpn);
        debug_assert_eq!(self.keys[i], lpn, "LPN {lpn} is not in the buffer");
        if self.keys[i] != lpn {
            return;
        }
        self.counts[i] -= 1;
        if self.counts[i] > 0 {
            return;
        }
        // Backward-shift deletion: pull later entries of the probe run
        // into the hole unless that would put them before their home.
        let mask = self.mask();
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let k = self.keys[j];
            if k == EMPTY {
                break;
            }
            let home = self.home(k);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.keys[i] = k;
                self.counts[i] = self.counts[j];
                i = j;
            }
        }
        self.keys[i] = EMPTY;
        self.counts[i] = 0;
        self.len -= 1;
    }

    /// Doubles the table, reinserting every entry.
    fn grow(&mut self) {
        let keys = std::mem::take(&mut self.keys);
        let counts = std::mem::take(&mut self.counts);
        self.bits += 1;
        self.keys = vec![EMPTY; 1 << self.bits];
        self.counts = vec![0; 1 << self.bits];
        for (k, c) in keys.into_iter().zip(counts) {
            if k != EMPTY {
                let i = self.find(k);
                self.keys[i] = k;
                self.counts[i] = c;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn full_buffer_waits_for_the_oldest_program() {
        let mut w = WriteBuffer::new(4, 2, 16);
        let mut out = Vec::new();
        assert!(!w.push(1, 1));
        assert!(w.push(2, 2));
        w.take_pending(&mut out, Some(100));
        w.mark_inflight(&out, 100);
        assert!(w.holds(1));
        assert_eq!(w.wait_for_space(10), 10);
        w.push(3, 3);
        w.push(4, 4);
        w.take_pending(&mut out, Some(200));
        w.mark_inflight(&out, 200);
        // Full: 4 in flight; the next entry waits for the first program.
        assert_eq!(w.wait_for_space(20), 100);
        assert_eq!(w.stalls(), 1);
        assert!(!w.holds(1));
        assert_eq!(w.drain_time(0), 200);
    }

    /// The residency table counts like a count per LPN would, through
    /// random adds and removes that collide, wrap the table and grow it.
    #[test]
    fn residency_table_counts_like_a_per_lpn_array() {
        let mut rng = crate::engine::component_rng(1, "residency test");
        let mut next = move || rng.random::<u64>();
        for case in 0..50u64 {
            let lpns = 4 + next() % 300;
            let mut t = LpnCounts::with_room(1 + (case % 6) as usize);
            let mut want = vec![0u32; lpns as usize];
            let mut present: Vec<u32> = Vec::new();
            for step in 0..3000 {
                if next() % 2 == 0 || present.is_empty() {
                    let lpn = (next() % lpns) as u32;
                    t.add_one(lpn);
                    want[lpn as usize] += 1;
                    present.push(lpn);
                } else {
                    let lpn = present.swap_remove((next() % present.len() as u64) as usize);
                    t.remove_one(lpn);
                    want[lpn as usize] -= 1;
                }
                let probe = (next() % lpns) as u32;
                assert_eq!(
                    t.get(probe),
                    want[probe as usize],
                    "case {case} step {step}"
                );
            }
            for (lpn, &n) in want.iter().enumerate() {
                assert_eq!(t.get(lpn as u32), n, "case {case}");
            }
            assert_eq!(t.len, want.iter().filter(|&&n| n > 0).count());
        }
    }
}
