//! The host interface: the MMC bus between the driver and the controller —
//! command parsing, CMD-line and DAT-line timing, legacy and command-queue
//! (CMDQ) execution.
//!
//! Contract:
//! * The driver decides which commands the card receives: every
//!   [`DeviceCommand`] carries its CMD-line sequence
//!   ([`DeviceCommand::commands`]), and the host interface charges bus time
//!   for exactly those commands ([`Bus::commands_ns`] per phase). The
//!   sequences the Linux driver sends, as constants of this module:
//!
//!   | request | legacy driver (`mmc_blk_issue_rq`) | CMDQ driver (`mmc_cqe`) |
//!   |---|---|---|
//!   | read | [`READ_MULTIPLE`]: CMD23 + CMD18 | [`QUEUED_READ`]: CMD44 + CMD45, CMD46 |
//!   | write | [`WRITE_MULTIPLE_POLLED`]: CMD23 + CMD25, CMD13 (or [`WRITE_MULTIPLE`] when the profile's `status_poll_after_write` is false) | [`QUEUED_WRITE`]: CMD44 + CMD45, CMD47 |
//!   | discard | [`DISCARD`] (eMMC 4.5), [`TRIM`] (4.41) or [`ERASE`]: CMD35 + CMD36 + CMD38 with the argument the card takes | the same, as a direct command |
//!   | secure discard | [`ERASE_SANITIZE`] / [`TRIM_SANITIZE`]: the erase sequence, then CMD6 SANITIZE_START (eMMC 4.5) | the same, as a direct command |
//!   | flush | [`FLUSH_CACHE`]: CMD6 | the same, as a direct command |
//!   | packed write (eMMC 4.5, `[features] packed`) | CMD23 (PACKED) + CMD25 carrying the packed header block then every entry's data, CMD13 | — |
//!   | packed read (eMMC 4.5, `[features] packed_read`) | CMD23 (PACKED, 1 block) + CMD25 writing the packed header, CMD13; then CMD23 + CMD18 reading every entry | — |
//!
//!   [`legacy_commands`] and [`queued_commands`] pick them by operation.
//! * Phases: the commands before the data (CMD23 + CMD18/CMD25, CMD35 +
//!   CMD36 + CMD38, CMD6) are charged together when the command starts;
//!   CMD13 polls after the command completes; CMD44 + CMD45 on the CMD
//!   line, serialised with other tasks' queueing commands; CMD46/CMD47
//!   immediately before the task's first data transfer.
//! * A legacy command holds the bus from its start until its completion.
//!   A queued task holds the DAT lines only for its transfers, each in the
//!   earliest free gap once its data is ready, so tasks complete out of
//!   order.
//! * A sequence that does not fit its operation ([`Sequence::decode`]) is a
//!   driver bug: debug builds panic with the [`CommandError`]; release
//!   builds charge the commands as sent ([`Sequence::classify`]) and execute
//!   the operation.

mod bus;
mod command;

pub use bus::Bus;
pub use command::{
    legacy_commands, queued_commands, CommandError, DeviceCommand, EraseArg, MmcCommand, Sequence,
    Switch, DISCARD, ERASE, ERASE_SANITIZE, FLUSH_CACHE, PACKED_HEADER_BLOCKS, QUEUED_READ,
    QUEUED_WRITE, READ_MULTIPLE, TRIM, TRIM_SANITIZE, WRITE_MULTIPLE, WRITE_MULTIPLE_POLLED,
};

use super::config::BusConfig;
use crate::types::Ns;

/// The bus state of the host interface: when the CMD and DAT lines are free.
#[derive(Clone, Debug)]
pub struct HostInterface {
    bus: Bus,
    /// The card has a command queue (`[cmdq]`).
    cmdq: bool,
    /// The command being executed is a queued task.
    queued: bool,
    /// End of the last legacy command (it held the bus until then), ns.
    bus_free: Ns,
    /// CMD line free at (task-queueing commands), ns.
    cmd_free: Ns,
    /// DAT-bus reservations of queued data phases, `(start, end)` ns,
    /// sorted and disjoint.
    dat: Vec<(Ns, Ns)>,
    /// Execute-command time still to charge before the first transfer of the
    /// current queued task, ns.
    exec_pending: Ns,
}

impl HostInterface {
    /// An idle interface on bus `bus`; `cmdq` when the card has a command
    /// queue.
    pub fn new(bus: &BusConfig, cmdq: bool) -> HostInterface {
        HostInterface {
            bus: Bus::new(bus),
            cmdq,
            queued: false,
            bus_free: 0,
            cmd_free: 0,
            dat: Vec::with_capacity(64),
            exec_pending: 0,
        }
    }

    /// Parses `cmd`'s command sequence and checks that it fits its
    /// operation and this card (a queued task needs a command queue).
    pub fn check(&self, cmd: &DeviceCommand) -> Result<Sequence, CommandError> {
        let seq = Sequence::decode(cmd)?;
        if seq.queued() && !self.cmdq {
            return Err(CommandError::NoCommandQueue);
        }
        Ok(seq)
    }

    /// Parses `cmd`'s command sequence for execution. An inconsistent one is
    /// a driver bug: debug builds panic; release builds charge the commands
    /// as sent, queued-task commands on a card without a queue as direct
    /// commands.
    pub fn decode(&self, cmd: &DeviceCommand) -> Sequence {
        if let Some(seq) = Sequence::data_request(cmd) {
            if !seq.queued() || self.cmdq {
                return seq;
            }
        }
        match self.check(cmd) {
            Ok(seq) => seq,
            Err(e) => {
                debug_assert!(false, "MMC driver bug: {e}");
                let mut seq = Sequence::classify(cmd.commands);
                if seq.queued() && !self.cmdq {
                    seq.direct += seq.queue_task + seq.execute;
                    seq.queue_task = 0;
                    seq.execute = 0;
                }
                seq
            }
        }
    }

    /// Starts a legacy command issued at `start`: it waits for the previous
    /// legacy command and for every queued data phase. Returns the time the
    /// command goes on the bus, ns.
    pub fn begin_legacy(&mut self, start: Ns) -> Ns {
        let dat_end = self.dat.last().map_or(0, |d| d.1);
        self.queued = false;
        start.max(self.bus_free).max(dat_end)
    }

    /// Ends the legacy command: the bus is free again at `end` ns.
    pub fn end_legacy(&mut self, end: Ns) {
        self.bus_free = end;
    }

    /// Starts a queued task issued at `start` (nondecreasing across calls);
    /// returns the time it may use the CMD line, ns.
    pub fn begin_queued(&mut self, start: Ns) -> Ns {
        // Reservations that ended cannot matter to this or later tasks.
        let keep = self.dat.partition_point(|d| d.1 <= start);
        self.dat.drain(..keep);
        self.queued = true;
        start.max(self.bus_free)
    }

    /// Ends the queued task's bookkeeping (its reservations stay).
    pub fn end_queued(&mut self) {
        self.queued = false;
    }

    /// Charges the commands sent before the data phase, from `t0`; returns
    /// the time the controller has the command, ns. A queued task's
    /// CMD44 + CMD45 wait for the CMD line; its execute command is charged
    /// with its first transfer ([`HostInterface::xfer`]).
    pub fn command_phase(&mut self, t0: Ns, seq: &Sequence) -> Ns {
        if self.queued {
            let on_cmd = t0.max(self.cmd_free) + self.bus.commands_ns(seq.queue_task);
            self.cmd_free = on_cmd;
            self.exec_pending = self.bus.commands_ns(seq.execute);
            on_cmd
        } else {
            t0 + self.bus.commands_ns(seq.direct)
        }
    }

    /// Time of the CMD13 polls after a legacy command completes, ns (a
    /// queued task reports completion through the queue status).
    pub fn status_polls_ns(&self, seq: &Sequence) -> Ns {
        if self.queued || seq.status_polls == 0 {
            0
        } else {
            self.bus.commands_ns(seq.status_polls)
        }
    }

    /// Time of `n` commands with their responses on the CMD line, ns.
    pub fn commands_ns(&self, n: u32) -> Ns {
        self.bus.commands_ns(n)
    }

    /// Transfer time of `sectors` 512-byte blocks on the DAT lines, ns.
    pub fn data_ns(&self, sectors: u64) -> Ns {
        self.bus.data_ns(sectors)
    }

    /// One data transfer of `dur` ns that may start at `ready`: a legacy
    /// command holds the bus already (`ready + dur`); a queued task takes the
    /// earliest DAT-bus gap at or after `ready`, the first one preceded by
    /// its execute command. Returns the end of the transfer, ns.
    #[inline]
    pub fn xfer(&mut self, ready: Ns, dur: Ns) -> Ns {
        if !self.queued {
            return ready + dur;
        }
        self.xfer_queued(ready, dur)
    }

    /// [`HostInterface::xfer`] of a queued task.
    #[inline(never)]
    fn xfer_queued(&mut self, ready: Ns, dur: Ns) -> Ns {
        let dur = dur + std::mem::take(&mut self.exec_pending);
        let mut s = ready.max(self.bus_free);
        let mut i = self.dat.partition_point(|d| d.1 <= s);
        while i < self.dat.len() && self.dat[i].0 < s + dur {
            s = s.max(self.dat[i].1);
            i += 1;
        }
        self.dat.insert(i, (s, s + dur));
        s + dur
    }

    /// Makes the bus idle at time 0.
    pub fn reset(&mut self) {
        self.bus_free = 0;
        self.cmd_free = 0;
        self.dat.clear();
    }

    /// DAT-bus reservations of queued data phases, `(start, end)` ns.
    #[cfg(test)]
    pub fn dat_reservations(&self) -> &[(Ns, Ns)] {
        &self.dat
    }
}
