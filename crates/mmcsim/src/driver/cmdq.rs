//! The eMMC 5.1 command-queue driver (blk-mq; Qualcomm 3.10/3.18 CMDQ,
//! reference io-schedulers.md §1.5).
//!
//! Contract: the hardware queue has `tags` tags (default 31 = EXT_CSD
//! CMDQ_DEPTH 32 − 1, one slot being kept for direct commands). The driver
//! asks the block layer (and so the scheduler) for a request whenever a tag
//! is free; each request costs host driver time (command setup + DMA mapping,
//! [`crate::platform::Cpu::prep`]) on the driver's CPU, serially, and is then queued
//! on the device, which may hold up to `tags` tasks and completes them out
//! of order; every completion raises its own interrupt. Flush and discard
//! are direct commands (DCMD): one waits until the queue is empty and
//! nothing else is issued while it runs.
//!
//! This module holds the driver's state, its decisions and its steps.

use super::RqId;
use super::{Driver, DriverEvents, Hw, RequestQueue};
use crate::engine::EventQueue;
use crate::types::Ns;

/// State of the CMDQ driver.
#[derive(Clone, Debug)]
pub struct CmdqDriver {
    tags: u32,
    /// Requests queued on the device (each holds a tag), in issue order.
    pub in_flight: Vec<RqId>,
    /// A request fetched and being prepared (it holds a tag), with the time
    /// its preparation ends and whether it is a direct command.
    pub prepared: Option<(RqId, Ns, bool)>,
    /// A direct command (flush, discard) is on the device.
    pub dcmd_active: bool,
    /// The driver's CPU is busy preparing until then, ns.
    pub cpu_free: Ns,
    /// Nothing to do: the hardware queue is not running.
    pub asleep: bool,
    /// Largest number of requests ever on the device at once.
    pub max_in_flight: u32,
}

impl CmdqDriver {
    /// A driver with `tags` tags (at least 1), idle.
    pub fn new(tags: u32) -> CmdqDriver {
        CmdqDriver {
            tags: tags.max(1),
            in_flight: Vec::with_capacity(tags as usize),
            prepared: None,
            dcmd_active: false,
            cpu_free: 0,
            asleep: true,
            max_in_flight: 0,
        }
    }

    /// Tags of the hardware queue.
    pub fn tags(&self) -> u32 {
        self.tags
    }

    /// Requests holding a tag (on the device or being prepared).
    pub fn held(&self) -> u32 {
        self.in_flight.len() as u32 + self.prepared.is_some() as u32
    }

    /// True when a tag is free and nothing blocks fetching another request
    /// (a prepared request waiting, or a direct command running).
    pub fn can_fetch(&self) -> bool {
        self.prepared.is_none() && !self.dcmd_active && self.held() < self.tags
    }

    /// True when the prepared request can go to the device at `now`: its
    /// preparation is done and, for a direct command, the queue is empty.
    pub fn can_issue(&self, now: Ns) -> bool {
        match self.prepared {
            Some((_, ready, dcmd)) => {
                ready <= now && !self.dcmd_active && (!dcmd || self.in_flight.is_empty())
            }
            None => false,
        }
    }

    /// Moves the prepared request onto the device; returns it.
    pub fn issue(&mut self) -> RqId {
        let (rq, _, dcmd) = self.prepared.take().expect("a prepared request");
        self.in_flight.push(rq);
        self.dcmd_active = dcmd;
        self.max_in_flight = self.max_in_flight.max(self.in_flight.len() as u32);
        rq
    }

    /// The device finished `rq` (its interrupt is being handled): frees its
    /// tag.
    pub fn complete(&mut self, rq: RqId) {
        let i = self
            .in_flight
            .iter()
            .position(|&r| r == rq)
            .expect("completion of a request on the device");
        self.in_flight.remove(i);
        if self.in_flight.is_empty() {
            self.dcmd_active = false;
        }
    }
}

impl Driver {
    fn cmdq(&mut self) -> &mut CmdqDriver {
        match &mut self.hw {
            Hw::Cmdq(d) => d,
            Hw::Legacy(_) => unreachable!("CMDQ step on the legacy driver"),
        }
    }

    /// Runs the hardware queue: issues the prepared request when it may
    /// go, then fetches and prepares another while a tag is free.
    pub(super) fn cmdq_run<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        let d = self.cmdq();
        if d.asleep {
            return;
        }
        if d.can_issue(now) {
            let rq = d.issue();
            self.issue(now, rq, true, q);
        }
        let d = self.cmdq();
        if let Some((_, ready, _)) = d.prepared {
            // Preparing, or a direct command waiting for the queue to
            // drain (a completion runs the driver again).
            if ready > now {
                self.kick_at(ready, q);
            }
        } else if d.can_fetch() {
            if d.cpu_free > now {
                let at = d.cpu_free;
                self.kick_at(at, q);
            } else {
                match up.fetch(now) {
                    Some(r) => {
                        let dcmd = !r.op.has_data();
                        let prep = self.hold(now, r);
                        let d = self.cmdq();
                        d.prepared = Some((r.id, now + prep, dcmd));
                        d.cpu_free = now + prep;
                        self.kick_at(now + prep, q);
                    }
                    None => {
                        let d = self.cmdq();
                        if d.held() == 0 {
                            d.asleep = true;
                        }
                    }
                }
            }
        }
        up.dispatch_tried(q);
    }

    /// Completion interrupt of `rq` (out of order): frees its tag and ends
    /// the request; [`Driver::cmdq_ended`] goes on once its completions
    /// have been delivered.
    pub(super) fn cmdq_irq<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        rq: RqId,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        self.cmdq().complete(rq);
        self.end(now, rq, up, q);
    }

    /// The ended request's completions have been delivered: runs the
    /// queue, then the hardware queue.
    pub(super) fn cmdq_ended<E: DriverEvents, Q: RequestQueue<E>>(
        &mut self,
        now: Ns,
        up: &mut Q,
        q: &mut EventQueue<E>,
    ) {
        self.run_queue(now, up, q);
        if !self.cmdq().asleep {
            self.cmdq_run(now, up, q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_bound_requests_and_completions_free_them_in_any_order() {
        let mut d = CmdqDriver::new(2);
        d.prepared = Some((1, 10, false));
        assert!(!d.can_fetch() && !d.can_issue(5) && d.can_issue(10));
        d.issue();
        d.prepared = Some((2, 20, false));
        d.issue();
        assert_eq!(d.held(), 2);
        assert!(!d.can_fetch(), "both tags in use");
        d.complete(2); // out of order
        assert_eq!(d.in_flight, vec![1]);
        assert!(d.can_fetch());
        assert_eq!(d.max_in_flight, 2);
    }

    #[test]
    fn direct_command_waits_for_an_empty_queue_and_runs_alone() {
        let mut d = CmdqDriver::new(31);
        d.prepared = Some((1, 0, false));
        d.issue();
        d.prepared = Some((2, 0, true));
        assert!(!d.can_issue(100), "flush waits for the queue to drain");
        d.complete(1);
        assert!(d.can_issue(100));
        d.issue();
        assert!(d.dcmd_active && !d.can_fetch());
        d.complete(2);
        assert!(!d.dcmd_active && d.can_fetch());
    }
}
