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
//! creation: the hot path does not allocate.

use crate::types::Ns;
use std::collections::VecDeque;

/// The write buffer's state.
#[derive(Clone, Debug)]
pub struct WriteBuffer {
    capacity_slots: usize,
    stripe_slots: usize,
    pending: Vec<(u32, u32)>,
    inflight: VecDeque<(Ns, u32)>,
    resident: Vec<u16>,
    stalls: u64,
}

impl WriteBuffer {
    /// An empty buffer of `capacity_slots` 4 KiB entries for `lpns` logical
    /// pages, programming `stripe_slots` entries at a time.
    pub fn new(capacity_slots: u32, stripe_slots: u32, lpns: u32) -> WriteBuffer {
        WriteBuffer {
            capacity_slots: capacity_slots as usize,
            stripe_slots: stripe_slots as usize,
            pending: Vec::with_capacity(stripe_slots as usize),
            inflight: VecDeque::with_capacity(capacity_slots as usize),
            resident: vec![0; lpns as usize],
            stalls: 0,
        }
    }
    /// Entries waiting for a full stripe page, oldest first.
    pub fn pending(&self) -> &[(u32, u32)] {
        &self.pending
    }
    /// True when `lpn`'s data is held in the buffer (pending or in flight).
    pub fn holds(&self, lpn: u32) -> bool {
        self.resident[lpn as usize] > 0
    }
    /// Releases the space of programs that ended by `now`.
    pub fn retire(&mut self, now: Ns) {
        while let Some(&(end, lpn)) = self.inflight.front() {
            if end > now {
                break;
            }
            self.inflight.pop_front();
            self.resident[lpn as usize] -= 1;
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
            self.resident[lpn as usize] -= 1;
            t2 = t2.max(end);
        }
        if t2 > t {
            self.stalls += 1;
        }
        t2
    }
    /// Adds host data; returns true when a full stripe page is pending.
    pub fn push(&mut self, lpn: u32, version: u32) -> bool {
        self.pending.push((lpn, version));
        self.resident[lpn as usize] += 1;
        self.pending.len() >= self.stripe_slots
    }
    /// Moves the pending entries into `out` (cleared first) for programming;
    /// with `end = Some(t)` they stay resident until `t` (timed path), with
    /// `None` they leave the buffer at once (untimed path).
    pub fn take_pending(&mut self, out: &mut Vec<(u32, u32)>, end: Option<Ns>) {
        out.clear();
        out.extend_from_slice(&self.pending);
        self.pending.clear();
        for &(lpn, _) in out.iter() {
            match end {
                Some(_) => {}
                None => self.resident[lpn as usize] -= 1,
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
        if self.resident[lpn as usize] == 0 {
            return;
        }
        let before = self.pending.len();
        self.pending.retain(|e| e.0 != lpn);
        let dropped = before - self.pending.len();
        self.resident[lpn as usize] -= dropped as u16;
    }
    /// Forgets every in-flight program (timelines reset to 0).
    pub fn clear_inflight(&mut self) {
        while let Some((_, lpn)) = self.inflight.pop_front() {
            self.resident[lpn as usize] -= 1;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
