//! A legacy write command the host can stop part-way (HPI, msm-3.4
//! `mmc_stop_request`).
//!
//! [`Emmc::execute`] books a whole command at its issue time. A write the
//! driver may have to stop for an urgent read is instead executed one
//! 4 KiB piece (LPN) at a time, as its data crosses the bus:
//! [`Emmc::begin_stoppable_write`] runs the command phase and translation
//! and plans the first transfer; [`Emmc::step_write`], called when that
//! transfer ends, buffers the piece (programming a full stripe page, as the
//! one-shot path does) and plans the next. Each planned transfer waits for
//! buffer space exactly as the one-shot path does, so a write that is never
//! stopped leaves the card in the same state at the same times.
//!
//! [`Emmc::stop_write`] at time `t` (the host controller stops the transfer,
//! then CMD12 STOP_TRANSMISSION and `mmc_interrupt_hpi`'s CMD13): the
//! pieces whose transfer ended by `t` are on the card — written, versioned
//! by the oracle and counted — and the rest never arrive. The HPI that
//! interrupts the card's NAND programs is charged (`hpi_us`) by the next
//! read when it finds the dies busy, as for any HPI read.

use super::host_interface::{DeviceCommand, Sequence};
use super::Emmc;
use crate::types::{Ns, SECTORS_PER_PAGE};

/// Commands on the CMD line when the host stops a write: CMD12
/// STOP_TRANSMISSION, then the CMD13 SEND_STATUS with which
/// `mmc_interrupt_hpi` checks for the programming state [src: msm-3.4
/// drivers/mmc/core/core.c `mmc_stop_request`, `mmc_interrupt_hpi`].
pub const STOP_COMMANDS: u32 = 2;

/// Where a stoppable write stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// The next 4 KiB transfer ends at this time, ns: call
    /// [`Emmc::step_write`] then.
    Next(Ns),
    /// The command completed (data on the card, committed if it had to be,
    /// status polled) at this time, ns.
    Done(Ns),
}

/// A stoppable write whose data phase is under way.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenWrite {
    cmd: DeviceCommand,
    seq: Sequence,
    /// When the driver issued it, ns.
    issued: Ns,
    /// Next LPN to arrive, and one past the last.
    next: u32,
    end: u32,
    /// End of the last transfer that arrived (or of the translation), ns.
    bus_t: Ns,
    /// End of the transfer of `next`, ns.
    due: Ns,
}

impl Emmc {
    /// Issues write `cmd` (legacy, not reliable) at `start` ns as a
    /// stoppable command; see the module doc. A command with no LPN in the
    /// user capacity runs in one shot.
    pub fn begin_stoppable_write(&mut self, start: Ns, cmd: &DeviceCommand) -> WriteStep {
        debug_assert!(self.open.is_none(), "one legacy command at a time");
        let (first, end) = self.lpn_range(cmd.sector, cmd.sectors as u64);
        if first == end {
            return WriteStep::Done(self.execute(start, cmd));
        }
        self.stop_bkops(start);
        let seq = self.hi.decode(cmd);
        let t0 = self.hi.begin_legacy(start);
        self.wbuf.retire(t0);
        self.tl.forget_before(t0);
        let t = self.front(t0, &seq, cmd.sector);
        self.c.reliable_writes += cmd.fua as u64;
        let bus_t = self.translate(t, first, end, true);
        let due = self.plan_transfer(bus_t, first, cmd);
        self.open = Some(OpenWrite {
            cmd: *cmd,
            seq,
            issued: start,
            next: first,
            end,
            bus_t,
            due,
        });
        WriteStep::Next(due)
    }

    /// When the transfer of `lpn` would end if it starts after `bus_t`
    /// (once the buffer has room for it), ns.
    fn plan_transfer(&self, bus_t: Ns, lpn: u32, cmd: &DeviceCommand) -> Ns {
        self.wbuf.space_at(bus_t) + self.lpn_data_ns(lpn, cmd)
    }

    /// The transfer planned last has ended (`now` is the time
    /// [`WriteStep::Next`] gave): its piece is buffered; plans the next
    /// one, or completes the command after the last.
    pub fn step_write(&mut self, now: Ns) -> WriteStep {
        let Some(mut o) = self.open else {
            panic!("mmcsim device: simulator bug: step_write with no write under way");
        };
        debug_assert_eq!(now, o.due, "step_write called off its planned time");
        o.bus_t = self.write_lpn(o.bus_t, o.next, &o.cmd);
        o.next += 1;
        if o.next < o.end {
            o.due = self.plan_transfer(o.bus_t, o.next, &o.cmd);
            self.open = Some(o);
            return WriteStep::Next(o.due);
        }
        self.open = None;
        let end = self.commit(o.bus_t, self.must_commit(&o.cmd));
        self.check_after_command(o.issued, &o.cmd);
        if let Some(p) = self.power.as_deref_mut() {
            p.end_command(end);
        }
        let end = end + self.hi.status_polls_ns(&o.seq);
        self.hi.end_legacy(end);
        WriteStep::Done(end)
    }

    /// True while a stoppable write still has data to receive (the host
    /// controller's `get_xfer_remain` > 0).
    pub fn write_data_remaining(&self) -> bool {
        self.open.is_some()
    }

    /// The host stops the write under way at `now` (see the module doc).
    /// Returns when the stop sequence ends (the bus is free again) and how
    /// many of the command's sectors the card had accepted, from its first
    /// one; `None` when no write is receiving data.
    pub fn stop_write(&mut self, now: Ns) -> Option<(Ns, u32)> {
        let o = self.open.take()?;
        let first_sector = o.cmd.sector;
        let cmd_end = o.cmd.sector + o.cmd.sectors as u64;
        let arrived_end = (o.next as u64 * SECTORS_PER_PAGE).min(cmd_end);
        let accepted = arrived_end.saturating_sub(first_sector) as u32;
        self.c.hpi_stopped_writes += 1;
        self.c.hpi_stopped_sectors += accepted as u64;
        if accepted > 0 {
            let part = DeviceCommand {
                sectors: accepted,
                ..o.cmd
            };
            self.check_after_command(o.issued, &part);
        }
        let end = now + self.hi.commands_ns(STOP_COMMANDS);
        self.hi.end_legacy(end);
        if let Some(p) = self.power.as_deref_mut() {
            // Stopped: the card acknowledged none of it.
            p.end_command(Ns::MAX);
        }
        Some((end, accepted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::host_interface::legacy_commands;
    use crate::device::DeviceConfig;
    use crate::types::Op;

    const GENERIC: &str = include_str!("../../../../configs/devices/generic-emmc.toml");

    /// The generic profile (512 MiB raw) with HPI.
    fn device() -> Emmc {
        let mut c = DeviceConfig::from_toml_str(GENERIC, "generic-emmc.toml").unwrap();
        c.nand.blocks_per_plane = 128;
        c.features.hpi = true;
        Emmc::new(&c).unwrap()
    }

    fn write(sector: u64, sectors: u32) -> DeviceCommand {
        DeviceCommand {
            op: Op::Write,
            sector,
            sectors,
            fua: false,
            commands: legacy_commands(Op::Write, true),
        }
    }

    /// Runs `cmd` stepwise from `start`; stops it before the first
    /// transfer that ends after `stop_at`. Returns the completion (or stop
    /// end) time and, when stopped, the sectors accepted.
    fn drive(
        d: &mut Emmc,
        start: Ns,
        cmd: &DeviceCommand,
        stop_at: Option<Ns>,
    ) -> (Ns, Option<u32>) {
        let mut step = d.begin_stoppable_write(start, cmd);
        loop {
            match step {
                WriteStep::Done(end) => return (end, None),
                WriteStep::Next(at) if stop_at.is_some_and(|s| at > s) => {
                    let (end, accepted) = d.stop_write(stop_at.unwrap()).unwrap();
                    return (end, Some(accepted));
                }
                WriteStep::Next(at) => step = d.step_write(at),
            }
        }
    }

    #[test]
    fn a_write_run_piece_by_piece_matches_the_one_shot_write() {
        let mut once = device();
        let mut stepped = once.clone();
        let (mut a, mut b) = (0, 0);
        // 20 MiB of 512 KiB writes: the buffer fills and the writes stall.
        for i in 0..40u64 {
            let c = write(i * 1024 + 8, 1024);
            a = once.execute(a, &c);
            b = drive(&mut stepped, b, &c, None).0;
            assert_eq!(a, b, "write {i} completes at the same time");
        }
        assert_eq!(once.stats(), stepped.stats());
        assert_eq!(once.oracle.expected(), stepped.oracle.expected());
        stepped.check_integrity().unwrap();
    }

    #[test]
    fn a_stopped_write_leaves_exactly_its_accepted_prefix_on_the_card() {
        let mut d = device();
        let mut t = 0;
        for i in 0..8u64 {
            t = d.execute(t, &write(i * 1024, 1024));
        }
        let before = d.stats().host_slots_written;
        let c = write(100_000, 1024);
        // The end of the 64th 4 KiB transfer, planned on a copy.
        let mut copy = d.clone();
        let mut step = copy.begin_stoppable_write(t, &c);
        for _ in 0..63 {
            let WriteStep::Next(at) = step else {
                panic!("done early")
            };
            step = copy.step_write(at);
        }
        let WriteStep::Next(stop_at) = step else {
            panic!("done early")
        };
        let (end, accepted) = drive(&mut d, t, &c, Some(stop_at));
        let accepted = accepted.expect("stopped");
        assert_eq!(accepted, 64 * 8, "the transfers that ended by the stop");
        assert_eq!(end, stop_at + d.hi.commands_ns(STOP_COMMANDS));
        assert!(!d.write_data_remaining());
        let s = d.stats();
        assert_eq!(s.host_slots_written - before, accepted as u64 / 8);
        assert_eq!(s.hpi_stopped_writes, Some(1));
        assert_eq!(s.hpi_stopped_write_bytes, Some(accepted as u64 * 512));
        let v = d.oracle.expected();
        let (first, last) = (100_000 / 8, (100_000 + 1024) / 8);
        let written = first + accepted / 8;
        assert!(v[first as usize..written as usize].iter().all(|&x| x > 0));
        assert!(v[written as usize..last as usize].iter().all(|&x| x == 0));
        d.check_integrity().unwrap();
        // The driver sends the whole request again: the prefix is
        // rewritten and the rest arrives.
        let (_, stopped) = drive(&mut d, end, &c, None);
        assert!(stopped.is_none());
        assert!(d.oracle.expected()[first as usize..last as usize]
            .iter()
            .all(|&x| x > 0));
        d.check_integrity().unwrap();
    }
}
