//! The commands of the MMC CMD line (JEDEC JESD84-B51 numbering and names)
//! and the sequences the Linux MMC driver sends for each kind of request.
//!
//! A [`DeviceCommand`] carries the CMD-line commands the driver sends for one
//! block request; [`Sequence::decode`] checks them against the request's
//! operation and sorts them into the phases the host interface charges.

use crate::types::Op;
use std::fmt;

/// One command on the CMD line, numbered and named as in JEDEC JESD84-B51
/// (the kernel's `MMC_*` opcodes in `include/linux/mmc/mmc.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmcCommand {
    /// CMD6 SWITCH: writes an EXT_CSD byte ([`Switch`]): FLUSH_CACHE
    /// (EXT_CSD\[32\]), the cache flush of a REQ_FLUSH, or SANITIZE_START
    /// (EXT_CSD\[165\]) after the erase of a secure discard.
    Cmd6(Switch),
    /// CMD13 SEND_STATUS: the status poll after a write (`card_busy_detect`).
    Cmd13,
    /// CMD18 READ_MULTIPLE_BLOCK: the data read.
    Cmd18,
    /// CMD23 SET_BLOCK_COUNT: the block count (and reliable-write flag) of
    /// the following CMD18 / CMD25.
    Cmd23,
    /// CMD25 WRITE_MULTIPLE_BLOCK: the data write.
    Cmd25,
    /// CMD35 ERASE_GROUP_START: first sector of a discard.
    Cmd35,
    /// CMD36 ERASE_GROUP_END: last sector of a discard.
    Cmd36,
    /// CMD38 ERASE with its argument ([`EraseArg`]): starts the erase,
    /// trim or discard of the range CMD35/CMD36 set.
    Cmd38(EraseArg),
    /// CMD44 QUEUED_TASK_PARAMS: direction, tag and block count of a queued
    /// task (eMMC 5.1 command queue).
    Cmd44,
    /// CMD45 QUEUED_TASK_ADDRESS: start sector of a queued task.
    Cmd45,
    /// CMD46 EXECUTE_READ_TASK: starts the data phase of a ready read task.
    Cmd46,
    /// CMD47 EXECUTE_WRITE_TASK: starts the data phase of a ready write task.
    Cmd47,
}

/// The argument of CMD38 ERASE (JESD84-B45 §6.6.9; Linux
/// `include/linux/mmc/core.h` `MMC_ERASE_ARG`, `MMC_TRIM_ARG`,
/// `MMC_DISCARD_ARG`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EraseArg {
    /// 0x0 ERASE: the card erases the whole erase groups of the range
    /// (the driver widens nothing, it trims the range to whole groups).
    Erase,
    /// 0x1 TRIM (eMMC 4.41): the write blocks of the range are unmapped;
    /// the card erases them when it sees fit.
    Trim,
    /// 0x3 DISCARD (eMMC 4.5): like TRIM, but the card need not make the
    /// data unreadable.
    Discard,
}

impl EraseArg {
    /// The 32-bit CMD38 argument.
    pub fn arg(self) -> u32 {
        match self {
            EraseArg::Erase => 0x0,
            EraseArg::Trim => 0x1,
            EraseArg::Discard => 0x3,
        }
    }

    /// Lower-case name, as in reports (`device.erase_commands.<name>`).
    pub fn name(self) -> &'static str {
        match self {
            EraseArg::Erase => "erase",
            EraseArg::Trim => "trim",
            EraseArg::Discard => "discard",
        }
    }
}

/// The EXT_CSD byte a CMD6 SWITCH writes (`include/linux/mmc/mmc.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Switch {
    /// EXT_CSD_FLUSH_CACHE (byte 32) = 1: flush the volatile cache.
    FlushCache,
    /// EXT_CSD_SANITIZE_START (byte 165) = 1: physically remove every
    /// piece of unmapped data (eMMC 4.5).
    SanitizeStart,
}

impl MmcCommand {
    /// The JEDEC command index (the `N` of `CMDN`).
    pub fn index(self) -> u8 {
        match self {
            MmcCommand::Cmd6(_) => 6,
            MmcCommand::Cmd13 => 13,
            MmcCommand::Cmd18 => 18,
            MmcCommand::Cmd23 => 23,
            MmcCommand::Cmd25 => 25,
            MmcCommand::Cmd35 => 35,
            MmcCommand::Cmd36 => 36,
            MmcCommand::Cmd38(_) => 38,
            MmcCommand::Cmd44 => 44,
            MmcCommand::Cmd45 => 45,
            MmcCommand::Cmd46 => 46,
            MmcCommand::Cmd47 => 47,
        }
    }

    /// The JEDEC command name, e.g. `"READ_MULTIPLE_BLOCK"`.
    pub fn name(self) -> &'static str {
        match self {
            MmcCommand::Cmd6(_) => "SWITCH",
            MmcCommand::Cmd13 => "SEND_STATUS",
            MmcCommand::Cmd18 => "READ_MULTIPLE_BLOCK",
            MmcCommand::Cmd23 => "SET_BLOCK_COUNT",
            MmcCommand::Cmd25 => "WRITE_MULTIPLE_BLOCK",
            MmcCommand::Cmd35 => "ERASE_GROUP_START",
            MmcCommand::Cmd36 => "ERASE_GROUP_END",
            MmcCommand::Cmd38(_) => "ERASE",
            MmcCommand::Cmd44 => "QUEUED_TASK_PARAMS",
            MmcCommand::Cmd45 => "QUEUED_TASK_ADDRESS",
            MmcCommand::Cmd46 => "EXECUTE_READ_TASK",
            MmcCommand::Cmd47 => "EXECUTE_WRITE_TASK",
        }
    }
}

impl fmt::Display for MmcCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CMD{} {}", self.index(), self.name())?;
        match self {
            MmcCommand::Cmd38(a) => write!(f, " arg=0x{:x} ({})", a.arg(), a.name()),
            MmcCommand::Cmd6(Switch::FlushCache) => write!(f, " FLUSH_CACHE"),
            MmcCommand::Cmd6(Switch::SanitizeStart) => write!(f, " SANITIZE_START"),
            _ => Ok(()),
        }
    }
}

use MmcCommand::*;

/// 512-byte blocks of the packed command header on the bus: one, for a
/// card with 512-byte sectors [spec: JESD84-B45 packed commands — the
/// header is the first block of a packed write's CMD25 and the only block
/// of a packed read's header CMD25; a 4 KiB-sector card would send 8, not
/// modelled].
pub const PACKED_HEADER_BLOCKS: u64 = 1;

/// Legacy data read: CMD23 SET_BLOCK_COUNT + CMD18 READ_MULTIPLE_BLOCK.
pub const READ_MULTIPLE: &[MmcCommand] = &[Cmd23, Cmd18];
/// Legacy data write without a status poll: CMD23 + CMD25
/// WRITE_MULTIPLE_BLOCK (a host that does not poll CMD13).
pub const WRITE_MULTIPLE: &[MmcCommand] = &[Cmd23, Cmd25];
/// Legacy data write as Linux sends it: CMD23 + CMD25, then CMD13
/// SEND_STATUS once the card is done.
pub const WRITE_MULTIPLE_POLLED: &[MmcCommand] = &[Cmd23, Cmd25, Cmd13];
/// Discard on an eMMC 4.5 card: CMD35 ERASE_GROUP_START + CMD36
/// ERASE_GROUP_END + CMD38 ERASE with the DISCARD argument.
pub const DISCARD: &[MmcCommand] = &[Cmd35, Cmd36, Cmd38(EraseArg::Discard)];
/// Discard on a card with TRIM but no DISCARD (eMMC 4.41): the erase
/// sequence with the TRIM argument.
pub const TRIM: &[MmcCommand] = &[Cmd35, Cmd36, Cmd38(EraseArg::Trim)];
/// Discard on a card with neither (or the erase-group-aligned part of a
/// secure discard): the erase sequence with the ERASE argument.
pub const ERASE: &[MmcCommand] = &[Cmd35, Cmd36, Cmd38(EraseArg::Erase)];
/// Secure discard on an eMMC 4.5 card whose range is erase-group aligned:
/// ERASE, then CMD6 SWITCH to SANITIZE_START.
pub const ERASE_SANITIZE: &[MmcCommand] = &[
    Cmd35,
    Cmd36,
    Cmd38(EraseArg::Erase),
    Cmd6(Switch::SanitizeStart),
];
/// Secure discard on an eMMC 4.5 card, range not aligned: TRIM, then
/// SANITIZE_START.
pub const TRIM_SANITIZE: &[MmcCommand] = &[
    Cmd35,
    Cmd36,
    Cmd38(EraseArg::Trim),
    Cmd6(Switch::SanitizeStart),
];
/// Cache flush: CMD6 SWITCH to EXT_CSD FLUSH_CACHE.
pub const FLUSH_CACHE: &[MmcCommand] = &[Cmd6(Switch::FlushCache)];
/// Queued read task: CMD44 QUEUED_TASK_PARAMS + CMD45 QUEUED_TASK_ADDRESS,
/// then CMD46 EXECUTE_READ_TASK before the data phase.
pub const QUEUED_READ: &[MmcCommand] = &[Cmd44, Cmd45, Cmd46];
/// Queued write task: CMD44 + CMD45, then CMD47 EXECUTE_WRITE_TASK before
/// the data phase (no CMD13: the queue reports completion).
pub const QUEUED_WRITE: &[MmcCommand] = &[Cmd44, Cmd45, Cmd47];

/// The sequence a legacy (non-queued) driver sends for `op`; a write ends
/// with CMD13 when the host polls the status after writes
/// (`status_poll_after_write` of the profile's `[bus]`).
/// A discard is the eMMC 4.5 [`DISCARD`] sequence; the argument a given
/// card takes is the driver's choice (`driver::command::erase`).
pub fn legacy_commands(op: Op, status_poll_after_write: bool) -> &'static [MmcCommand] {
    match op {
        Op::Read => READ_MULTIPLE,
        Op::Write if status_poll_after_write => WRITE_MULTIPLE_POLLED,
        Op::Write => WRITE_MULTIPLE,
        Op::Discard => DISCARD,
        Op::Flush => FLUSH_CACHE,
    }
}

/// The sequence a command-queue driver sends to queue a data request as a
/// task; `None` for flush and discard, which go as direct (legacy)
/// commands with the queue empty.
pub fn queued_commands(op: Op) -> Option<&'static [MmcCommand]> {
    match op {
        Op::Read => Some(QUEUED_READ),
        Op::Write => Some(QUEUED_WRITE),
        Op::Discard | Op::Flush => None,
    }
}

/// One request as the driver issues it to the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCommand {
    /// Read, write, discard or flush.
    pub op: Op,
    /// First 512-byte sector (ignored for flush).
    pub sector: u64,
    /// Length in 512-byte sectors (0 for flush).
    pub sectors: u32,
    /// Forced unit access / reliable write: the write completes only when its
    /// data is safe on NAND.
    pub fua: bool,
    /// The CMD-line commands the driver sends for this request, in order
    /// (one of the sequences of this module); the host interface charges
    /// bus time for each of them.
    pub commands: &'static [MmcCommand],
}

/// A command sequence that does not fit its request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The commands do not form the sequence `op` needs.
    #[error("{op:?} request sent as [{sent}]: expected {expected}")]
    Mismatch {
        /// The request's operation.
        op: Op,
        /// The commands sent, e.g. `"CMD23 SET_BLOCK_COUNT, CMD25 WRITE_MULTIPLE_BLOCK"`.
        sent: String,
        /// The accepted form.
        expected: &'static str,
    },
    /// Queued-task commands were sent to a card without a command queue.
    #[error("queued task (CMD44..CMD47) sent to a card without a command queue (no [cmdq] in the profile)")]
    NoCommandQueue,
}

/// A decoded command sequence: how many commands fall in each phase the
/// host interface charges separately.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sequence {
    /// Commands before the data phase or the action (CMD23 + CMD18/25,
    /// CMD35 + CMD36 + CMD38, CMD6), charged together before the firmware.
    pub direct: u32,
    /// CMD13 status polls after completion (legacy writes).
    pub status_polls: u32,
    /// Task-queueing commands (CMD44 + CMD45) on the shared CMD line.
    pub queue_task: u32,
    /// Execute commands (CMD46/CMD47) charged before the first transfer.
    pub execute: u32,
    /// The CMD38 argument of an erase-class sequence.
    pub erase: Option<EraseArg>,
    /// The sequence ends with CMD6 SANITIZE_START.
    pub sanitize: bool,
}

impl Sequence {
    /// True when the commands queue a task (eMMC 5.1 command queue).
    pub fn queued(&self) -> bool {
        self.queue_task + self.execute > 0
    }

    /// Sorts `cmd.commands` into phases and checks that they form the
    /// sequence its operation needs:
    ///
    /// | op | accepted |
    /// |---|---|
    /// | read | `[CMD23] CMD18 CMD13*`, or `CMD44 CMD45 CMD46` |
    /// | write | `[CMD23] CMD25 CMD13*`, or `CMD44 CMD45 CMD47` |
    /// | discard | `CMD35 CMD36 CMD38(arg) [CMD6(SANITIZE_START)] CMD13*` |
    /// | flush | `CMD6(FLUSH_CACHE) CMD13*` |
    ///
    /// On a mismatch the counts are still returned in the error's place by
    /// [`Sequence::classify`], so a caller may charge what was sent.
    pub fn decode(cmd: &DeviceCommand) -> Result<Sequence, CommandError> {
        if let Some(s) = Sequence::data_request(cmd) {
            return Ok(s);
        }
        let c = cmd.commands;
        let ok = match cmd.op {
            Op::Read => legacy_data(c, Cmd18) || c == QUEUED_READ,
            Op::Write => legacy_data(c, Cmd25) || c == QUEUED_WRITE,
            Op::Discard => erase_class(c),
            Op::Flush => c.starts_with(FLUSH_CACHE) && polls_only(&c[FLUSH_CACHE.len()..]),
        };
        if ok {
            return Ok(Sequence::classify(c));
        }
        Err(CommandError::Mismatch {
            op: cmd.op,
            sent: c
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            expected: match cmd.op {
                Op::Read => "[CMD23] CMD18 CMD13* or CMD44 CMD45 CMD46",
                Op::Write => "[CMD23] CMD25 CMD13* or CMD44 CMD45 CMD47",
                Op::Discard => "CMD35 CMD36 CMD38(arg) [CMD6 SANITIZE_START] CMD13*",
                Op::Flush => "CMD6 FLUSH_CACHE CMD13*",
            },
        })
    }

    /// The decoded form of the data-request sequences the drivers send
    /// ([`READ_MULTIPLE`], [`WRITE_MULTIPLE_POLLED`], [`WRITE_MULTIPLE`],
    /// [`QUEUED_READ`], [`QUEUED_WRITE`]) for their operation, without
    /// scanning the commands (what [`Sequence::classify`] makes of them);
    /// `None` for any other sequence.
    pub(super) fn data_request(cmd: &DeviceCommand) -> Option<Sequence> {
        let c = cmd.commands;
        let (direct, status_polls, queue_task, execute) = match cmd.op {
            Op::Read if c == READ_MULTIPLE => (2, 0, 0, 0),
            Op::Read if c == QUEUED_READ => (0, 0, 2, 1),
            Op::Write if c == WRITE_MULTIPLE_POLLED => (2, 1, 0, 0),
            Op::Write if c == WRITE_MULTIPLE => (2, 0, 0, 0),
            Op::Write if c == QUEUED_WRITE => (0, 0, 2, 1),
            _ => return None,
        };
        Some(Sequence {
            direct,
            status_polls,
            queue_task,
            execute,
            erase: None,
            sanitize: false,
        })
    }

    /// Counts the commands of each phase without checking their order.
    pub fn classify(commands: &[MmcCommand]) -> Sequence {
        let mut s = Sequence {
            direct: 0,
            status_polls: 0,
            queue_task: 0,
            execute: 0,
            erase: None,
            sanitize: false,
        };
        for c in commands {
            match *c {
                Cmd38(a) => {
                    s.erase = Some(a);
                    s.direct += 1;
                }
                Cmd6(Switch::SanitizeStart) => {
                    s.sanitize = true;
                    s.direct += 1;
                }
                Cmd13 => s.status_polls += 1,
                Cmd44 | Cmd45 => s.queue_task += 1,
                Cmd46 | Cmd47 => s.execute += 1,
                _ => s.direct += 1,
            }
        }
        s
    }
}

/// `[CMD23] data CMD13*`.
fn legacy_data(c: &[MmcCommand], data: MmcCommand) -> bool {
    let c = c.strip_prefix(&[Cmd23]).unwrap_or(c);
    c.first() == Some(&data) && polls_only(&c[1..])
}

/// `CMD35 CMD36 CMD38(arg) [CMD6(SANITIZE_START)] CMD13*`.
fn erase_class(c: &[MmcCommand]) -> bool {
    let [Cmd35, Cmd36, Cmd38(_), rest @ ..] = c else {
        return false;
    };
    let rest = rest
        .strip_prefix(&[Cmd6(Switch::SanitizeStart)])
        .unwrap_or(rest);
    polls_only(rest)
}

fn polls_only(c: &[MmcCommand]) -> bool {
    c.iter().all(|&m| m == Cmd13)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(op: Op, commands: &'static [MmcCommand]) -> DeviceCommand {
        DeviceCommand {
            op,
            sector: 0,
            sectors: 8,
            fua: false,
            commands,
        }
    }

    #[test]
    fn driver_sequences_decode_into_todays_phase_counts() {
        let d = |op, c| Sequence::decode(&cmd(op, c)).unwrap();
        let s = d(Op::Read, READ_MULTIPLE);
        assert_eq!((s.direct, s.status_polls, s.queued()), (2, 0, false));
        let s = d(Op::Write, WRITE_MULTIPLE_POLLED);
        assert_eq!((s.direct, s.status_polls), (2, 1));
        assert_eq!(d(Op::Write, WRITE_MULTIPLE).status_polls, 0);
        assert_eq!(d(Op::Discard, DISCARD).direct, 3);
        assert_eq!(d(Op::Discard, DISCARD).erase, Some(EraseArg::Discard));
        assert_eq!(d(Op::Discard, TRIM).erase, Some(EraseArg::Trim));
        let s = d(Op::Discard, ERASE_SANITIZE);
        assert_eq!(
            (s.direct, s.erase, s.sanitize),
            (4, Some(EraseArg::Erase), true)
        );
        assert!(d(Op::Discard, TRIM_SANITIZE).sanitize);
        assert!(!d(Op::Discard, ERASE).sanitize);
        assert_eq!(d(Op::Flush, FLUSH_CACHE).direct, 1);
        for (op, c) in [(Op::Read, QUEUED_READ), (Op::Write, QUEUED_WRITE)] {
            let s = d(op, c);
            assert_eq!((s.direct, s.queue_task, s.execute), (0, 2, 1));
            assert!(s.queued());
        }
        for op in [Op::Read, Op::Write, Op::Discard, Op::Flush] {
            assert!(Sequence::decode(&cmd(op, legacy_commands(op, true))).is_ok());
            if let Some(q) = queued_commands(op) {
                assert!(Sequence::decode(&cmd(op, q)).is_ok());
            }
        }
    }

    #[test]
    fn data_requests_decode_without_a_scan_as_classify_counts_them() {
        for (op, c) in [
            (Op::Read, READ_MULTIPLE),
            (Op::Read, QUEUED_READ),
            (Op::Write, WRITE_MULTIPLE_POLLED),
            (Op::Write, WRITE_MULTIPLE),
            (Op::Write, QUEUED_WRITE),
        ] {
            assert_eq!(
                Sequence::data_request(&cmd(op, c)),
                Some(Sequence::classify(c))
            );
        }
        assert_eq!(Sequence::data_request(&cmd(Op::Read, WRITE_MULTIPLE)), None);
        assert_eq!(Sequence::data_request(&cmd(Op::Write, QUEUED_READ)), None);
        assert_eq!(Sequence::data_request(&cmd(Op::Discard, DISCARD)), None);
        let read_polled: &[MmcCommand] = &[Cmd23, Cmd18, Cmd13];
        assert_eq!(Sequence::data_request(&cmd(Op::Read, read_polled)), None);
    }

    #[test]
    fn a_sequence_that_does_not_fit_its_op_is_a_typed_error() {
        let e = Sequence::decode(&cmd(Op::Read, WRITE_MULTIPLE)).unwrap_err();
        assert!(matches!(e, CommandError::Mismatch { op: Op::Read, .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("CMD25 WRITE_MULTIPLE_BLOCK") && msg.contains("CMD18"),
            "{msg}"
        );
        assert!(Sequence::decode(&cmd(Op::Write, QUEUED_READ)).is_err());
        assert!(Sequence::decode(&cmd(Op::Flush, &[])).is_err());
        let short: &[MmcCommand] = &[Cmd35, Cmd38(EraseArg::Discard)];
        assert!(Sequence::decode(&cmd(Op::Discard, short)).is_err());
        assert!(Sequence::decode(&cmd(Op::Discard, FLUSH_CACHE)).is_err());
        // The counts of what was sent stay available.
        assert_eq!(Sequence::classify(short).direct, 2);
    }
}
