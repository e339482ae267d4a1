//! The CMD13 busy polling of the legacy Linux 3.x driver after a write.
//!
//! Linux 3.0-3.4 `drivers/mmc/card/block.c` `mmc_blk_err_check`, run by
//! `mmcqd` in `mmc_start_req` once the data request's completion interrupt
//! has woken it: for every request that is not a read it loops
//! `get_card_status` (CMD13 SEND_STATUS through `mmc_wait_for_cmd`: a
//! request of its own to the host controller, with its own command setup,
//! command and response on the CMD line, and completion interrupt) while
//! the card is not READY_FOR_DATA or still in the programming state (PRG),
//! with no delay between polls; only then does `mmc_start_req` start the
//! prepared next request, and the polled one is ended. The 3.x loop polls at
//! least once whatever the host can detect (later kernels skip it on a host
//! with `MMC_CAP_WAIT_WHILE_BUSY`).
//!
//! Contract:
//! * `Driver::command_done` schedules a legacy write's transfer-complete
//!   interrupt — at the end of its data phase, or at the end of the card's
//!   busy when the host waits for it (`driver.wait_while_busy`) — and arms
//!   the poll ([`BusyPoll`]).
//! * At each interrupt of the request `Driver::busy_poll_step` sends the
//!   next CMD13 until a response has found the card ready; that response's
//!   interrupt ends the request. Each CMD13 costs `mmcqd` the command setup
//!   of the host profile (`driver_prep_us`: reference §4 "MMC core + host
//!   driver + IRQ: 20–60 µs per command"), the command and its R1 response
//!   on the CMD line (the bus's `cmd_response_bits`), and its interrupt
//!   ([`crate::platform::Cpu::completion_irq`]).
//! * The request's [`DeviceTimes`] keep the transfer-complete time
//!   (`data_done`), the last response (`done`) and the number of polls.

use super::{DeviceTimes, Driver, DriverEvent, DriverEvents, Hw, RqId};
use crate::engine::EventQueue;
use crate::platform::Runner;
use crate::types::Ns;

/// The busy poll of the write on the bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusyPoll {
    /// The polled request (the lead of a packed write).
    pub rq: RqId,
    /// When the card leaves the programming state, ns.
    pub busy_end: Ns,
    /// The last CMD13 response found the card ready: its interrupt ends
    /// the request.
    pub ready: bool,
}

impl BusyPoll {
    /// The poll of `rq`, whose card is busy until `busy_end`.
    pub fn new(rq: RqId, busy_end: Ns) -> BusyPoll {
        BusyPoll {
            rq,
            busy_end,
            ready: false,
        }
    }
}

/// When the card's answer to a CMD13 whose setup starts at `now` and takes
/// `setup` ns, followed by `cmd13` ns on the CMD line, arrives, and whether
/// it reports the card ready (out of PRG) for a card busy until
/// `busy_end`. The card is taken as ready when the exchange ends at or
/// after its busy ends [uncertain: the R1 status reflects the card when the
/// command arrives, up to one exchange (a few µs) earlier].
pub fn status_response(now: Ns, setup: Ns, cmd13: Ns, busy_end: Ns) -> (Ns, bool) {
    let at = now + setup + cmd13;
    (at, at >= busy_end)
}

impl Driver {
    /// The device finished the last command of held request `rq` at
    /// `busy_end` (the card out of its busy): schedules the completion of
    /// its data command — the transfer-complete interrupt — and, for a
    /// legacy write the driver polls (`polled`), arms the CMD13 busy poll.
    pub(super) fn command_done<E: DriverEvents>(
        &mut self,
        rq: RqId,
        busy_end: Ns,
        polled: bool,
        q: &mut EventQueue<E>,
    ) {
        let data_end = if polled {
            self.transfer_complete(busy_end)
        } else {
            busy_end
        };
        let t = &mut self.held[rq as usize].1;
        t.data_done = data_end;
        t.done = data_end;
        if polled {
            if let Hw::Legacy(d) = &mut self.hw {
                d.poll = Some(BusyPoll::new(rq, busy_end));
            }
        }
        q.at(data_end, DriverEvent::DeviceDone(rq));
    }

    /// When the transfer-complete interrupt of the write the device just
    /// ran, busy until `busy_end`, fires: at the end of its data phase, or
    /// at `busy_end` on a host that waits for the busy.
    fn transfer_complete(&self, busy_end: Ns) -> Ns {
        if self.wait_while_busy {
            busy_end
        } else {
            self.device.write_data_end().min(busy_end)
        }
    }

    /// True when a legacy write's data command is followed by CMD13 polls:
    /// the host polls the status after writes (`[bus]
    /// status_poll_after_write`, Linux 3.x does).
    pub(super) fn polls_writes(&self) -> bool {
        self.device.config().bus.status_poll_after_write
    }

    /// `mmc_blk_err_check` at the interrupt of `rq` at `now`: while no
    /// CMD13 response has found the card ready, `mmcqd` sends the next
    /// CMD13 (its response schedules another interrupt) and this returns
    /// true; false when `rq` is complete (not polled, or found ready).
    pub(super) fn busy_poll_step<E: DriverEvents>(
        &mut self,
        now: Ns,
        rq: RqId,
        q: &mut EventQueue<E>,
    ) -> bool {
        let Hw::Legacy(d) = &mut self.hw else {
            return false;
        };
        let Some(mut p) = d.poll.take() else {
            return false;
        };
        debug_assert_eq!(p.rq, rq, "one legacy request on the bus at a time");
        if p.ready {
            return false;
        }
        let (at, ready) = self.send_status(now, p.busy_end);
        p.ready = ready;
        if let Hw::Legacy(d) = &mut self.hw {
            d.poll = Some(p);
        }
        let t = &mut self.held[rq as usize].1;
        t.done = at;
        t.status_polls += 1;
        q.at(at, DriverEvent::DeviceDone(rq));
        true
    }

    /// `mmcqd` sends one CMD13 at `now` to a card busy until `busy_end`:
    /// charges its command setup; returns when the response arrives and
    /// whether it found the card ready.
    fn send_status(&mut self, now: Ns, busy_end: Ns) -> (Ns, bool) {
        let setup = self.cpu.with(|c| {
            let ns = c.costs().driver_prep;
            c.run(Runner::Mmcqd, now, ns);
            ns
        });
        status_response(now, setup, self.cmd13_ns, busy_end)
    }

    /// The whole poll after a write that is not the request's last command
    /// (a part of a legacy reliable write, the data before a post-flush),
    /// run at once: the data command's interrupt, then CMD13s until one
    /// finds the card ready, each with its interrupt. The card is busy
    /// until `busy_end`; returns when `mmcqd` may send the next command,
    /// ns, and counts the polls in `t`.
    pub(super) fn poll_inline(&mut self, busy_end: Ns, t: &mut DeviceTimes) -> Ns {
        let data_end = self.transfer_complete(busy_end);
        let mut now = data_end + self.cpu.with(|c| c.completion_irq(data_end));
        loop {
            let (at, ready) = self.send_status(now, busy_end);
            t.status_polls += 1;
            now = at + self.cpu.with(|c| c.completion_irq(at));
            if ready {
                return now;
            }
        }
    }

    /// The times of packed write `lead` after its poll, copied to its
    /// members (they shared its command and its polls).
    pub(super) fn share_poll_times(&mut self, lead: RqId, members: &[RqId]) {
        let l = self.held[lead as usize].1;
        for &m in members {
            let t = &mut self.held[m as usize].1;
            t.data_done = l.data_done;
            t.done = l.done;
            t.status_polls = l.status_polls;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CMD13 polls a card busy until `busy_end` takes when the first one is
    /// sent at `first` and each poll takes `interval` ns from one send to the
    /// next (setup, command, interrupt), the exchange itself taking `exchange`
    /// ns of it: at least one (the loop checks before it tests).
    fn polls_needed(first: Ns, interval: Ns, exchange: Ns, busy_end: Ns) -> u64 {
        let ready_from = busy_end.saturating_sub(exchange);
        if first >= ready_from || interval == 0 {
            return 1;
        }
        (ready_from - first).div_ceil(interval) + 1
    }

    #[test]
    fn a_response_reports_ready_only_once_the_busy_has_ended() {
        // Setup 28 µs, CMD13 2.6 µs: the exchange ends at 30.6 µs.
        assert_eq!(status_response(0, 28_000, 2_616, 0), (30_616, true));
        assert_eq!(
            status_response(0, 28_000, 2_616, 30_616),
            (30_616, true),
            "busy ends as the response arrives"
        );
        assert_eq!(status_response(0, 28_000, 2_616, 30_617), (30_616, false));
        assert_eq!(
            status_response(1_000_000, 28_000, 2_616, 500_000),
            (1_030_616, true)
        );
    }

    #[test]
    fn the_loop_polls_once_when_the_card_is_ready_and_until_ready_otherwise() {
        // Interval 42 µs (setup + command + interrupt), exchange 30 µs.
        let (i, x) = (42_000, 30_000);
        assert_eq!(polls_needed(0, i, x, 0), 1, "3.x checks at least once");
        assert_eq!(polls_needed(100_000, i, x, 50_000), 1);
        assert_eq!(
            polls_needed(0, i, x, 30_000),
            1,
            "ready at the first response"
        );
        assert_eq!(polls_needed(0, i, x, 30_001), 2);
        assert_eq!(polls_needed(0, i, x, 72_000), 2);
        assert_eq!(polls_needed(0, i, x, 72_001), 3);
        // A 2 ms program: 48 polls of 42 µs.
        assert_eq!(polls_needed(0, i, x, 2_000_000), 48);
    }

    #[test]
    fn repeated_responses_follow_the_loop_count() {
        // Stepping `status_response` as the driver does agrees with the
        // closed form.
        let (setup, cmd, irq) = (28_000, 2_616, 12_000);
        for busy_end in [0, 30_000, 30_617, 500_000, 2_000_000] {
            let (mut now, mut polls) = (0, 0u64);
            loop {
                let (at, ready) = status_response(now, setup, cmd, busy_end);
                polls += 1;
                now = at + irq;
                if ready {
                    break;
                }
            }
            assert_eq!(
                polls,
                polls_needed(0, setup + cmd + irq, setup + cmd, busy_end),
                "busy until {busy_end}"
            );
        }
    }
}
