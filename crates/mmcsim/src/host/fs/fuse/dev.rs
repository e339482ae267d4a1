//! The FUSE connection as `fs/fuse/dev.c` keeps it: requests wait on the
//! pending list in order (`queue_request`) until a daemon thread blocked
//! in `read(/dev/fuse)` takes the oldest (`fuse_dev_read`); a thread that
//! finds the list empty sleeps there. Whichever idle thread is first takes
//! the next request (sdcard: "Whichever thread happens to read() the next
//! request first wins", AOSP commit 6249b90); here the lowest-numbered idle
//! thread, so runs are deterministic.

use std::collections::VecDeque;

use super::super::Upcall;
use super::report::Opcodes;
use crate::types::Ns;

/// Requests served, by opcode, and what serving them cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DevStats {
    /// Requests taken, by opcode (the report's `fs.fuse.requests`).
    pub requests: Opcodes,
    /// Payload bytes copied through /dev/fuse (write data in, read data
    /// out).
    pub bytes_copied: u64,
    /// Time daemon threads spent on requests (from taking one to its
    /// reply), summed over threads, ns.
    pub busy_ns: u64,
    /// Time requests waited on the pending list for a daemon thread,
    /// summed, ns.
    pub queue_wait_ns: u64,
    /// Most requests waiting on the pending list at once.
    pub max_pending: u64,
}

/// The connection: its pending list and which daemon threads are idle.
#[derive(Clone, Debug)]
pub struct Dev {
    pending: VecDeque<Upcall>,
    /// Per daemon thread: busy with a request.
    busy: Vec<bool>,
    /// Counters.
    pub stats: DevStats,
}

impl Dev {
    /// A connection served by `threads` daemon threads, all idle.
    pub fn new(threads: u32) -> Dev {
        Dev {
            pending: VecDeque::new(),
            busy: vec![false; threads as usize],
            stats: DevStats::default(),
        }
    }

    /// Queues `req` at `now`; an idle thread (the lowest-numbered) takes it
    /// at once.
    pub fn send(&mut self, req: Upcall, now: Ns) -> Option<(u32, Upcall)> {
        match self.busy.iter().position(|b| !b) {
            Some(i) => {
                self.busy[i] = true;
                Some((i as u32, self.take(req, now)))
            }
            None => {
                self.pending.push_back(req);
                self.stats.max_pending = self.stats.max_pending.max(self.pending.len() as u64);
                None
            }
        }
    }

    /// Thread `i` replied at `now` after `busy` ns, `bytes` copied; it
    /// takes the oldest pending request, or goes idle.
    pub fn replied(&mut self, i: u32, now: Ns, busy: Ns, bytes: u64) -> Option<Upcall> {
        self.stats.busy_ns += busy;
        self.stats.bytes_copied += bytes;
        match self.pending.pop_front() {
            Some(req) => Some(self.take(req, now)),
            None => {
                self.busy[i as usize] = false;
                None
            }
        }
    }

    /// A thread takes `req` at `now`: counted by opcode and queue wait.
    fn take(&mut self, req: Upcall, now: Ns) -> Upcall {
        self.stats.queue_wait_ns += now.saturating_sub(req.queued);
        *self.stats.requests.counter(req.op) += 1;
        req
    }

    /// Requests taken so far.
    pub fn requests(&self) -> u64 {
        self.stats.requests.total()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::fs::UpcallOp;

    fn read(sender: u32, queued: Ns) -> Upcall {
        Upcall {
            op: UpcallOp::Fsync { datasync: true },
            ino: 12,
            sender,
            fd: 3,
            queued,
        }
    }

    #[test]
    fn one_thread_serves_requests_one_at_a_time_in_order() {
        let mut d = Dev::new(1);
        assert_eq!(
            d.send(read(0, 0), 0).map(|(i, r)| (i, r.sender)),
            Some((0, 0))
        );
        assert!(d.send(read(1, 10), 10).is_none());
        assert!(d.send(read(2, 20), 20).is_none());
        assert_eq!(d.replied(0, 100, 100, 0).map(|r| r.sender), Some(1));
        assert_eq!(d.replied(0, 200, 100, 0).map(|r| r.sender), Some(2));
        assert!(d.replied(0, 300, 100, 0).is_none());
        assert_eq!(d.stats.queue_wait_ns, 90 + 180);
        assert_eq!(d.stats.max_pending, 2);
        assert_eq!(d.requests(), 3);
    }

    #[test]
    fn two_threads_take_two_requests_at_once() {
        let mut d = Dev::new(2);
        assert_eq!(d.send(read(0, 0), 0).map(|(i, _)| i), Some(0));
        assert_eq!(d.send(read(1, 0), 0).map(|(i, _)| i), Some(1));
        assert!(d.send(read(2, 0), 0).is_none());
        assert_eq!(d.replied(1, 50, 50, 0).map(|r| r.sender), Some(2));
    }
}
