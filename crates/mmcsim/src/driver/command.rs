//! The bus commands the driver sends for a request (mmc/card/block.c,
//! `mmc_blk_issue_rw_rq` and friends): a data request is CMD23
//! SET_BLOCK_COUNT + CMD18 READ_MULTIPLE_BLOCK or CMD25
//! WRITE_MULTIPLE_BLOCK (reliable write flagged in CMD23's argument for
//! FUA), a write followed by CMD13 SEND_STATUS polling until the card is
//! out of programming when the host polls (`status_poll_after_write`); a
//! discard is the erase sequence CMD35 + CMD36 + CMD38; a flush is CMD6
//! SWITCH to FLUSH_CACHE. On the CMDQ driver a data request becomes a
//! queued task (CMD44 + CMD45, executed by CMD46/CMD47, no CMD13: the
//! queue reports completion); flush and discard stay direct commands.

use super::DriverRequest;
use crate::device::host_interface::{
    MmcCommand, DISCARD, FLUSH_CACHE, QUEUED_READ, QUEUED_WRITE, READ_MULTIPLE, WRITE_MULTIPLE,
    WRITE_MULTIPLE_POLLED,
};
use crate::device::DeviceCommand;
use crate::types::Op;

/// The legacy (non-queued) command of `r`; `poll` = CMD13 after writes.
pub fn legacy(r: &DriverRequest, poll: bool) -> DeviceCommand {
    let commands: &'static [MmcCommand] = match r.op {
        Op::Read => READ_MULTIPLE,
        Op::Write if poll => WRITE_MULTIPLE_POLLED,
        Op::Write => WRITE_MULTIPLE,
        Op::Discard => DISCARD,
        Op::Flush => FLUSH_CACHE,
    };
    device_command(r, commands)
}

/// The command of `r` on the command-queue path: a data request is queued
/// as a task; flush and discard go as direct commands (the driver issues
/// them with the queue empty).
pub fn queued(r: &DriverRequest, poll: bool) -> DeviceCommand {
    match r.op {
        Op::Read => device_command(r, QUEUED_READ),
        Op::Write => device_command(r, QUEUED_WRITE),
        Op::Discard | Op::Flush => legacy(r, poll),
    }
}

/// Sectors in the next command of a legacy reliable write starting at
/// `sector` with `left` sectors to go on a card whose REL_WR_SEC_C is
/// `rel_sectors` (Linux `mmc_apply_rel_rw`): one sector when unaligned or
/// shorter than REL_WR_SEC_C, else exactly REL_WR_SEC_C.
pub fn legacy_reliable_sectors(sector: u64, left: u64, rel_sectors: u32) -> u32 {
    let rel = rel_sectors.max(1) as u64;
    if sector % rel != 0 || left < rel {
        1
    } else {
        rel as u32
    }
}

fn device_command(r: &DriverRequest, commands: &'static [MmcCommand]) -> DeviceCommand {
    DeviceCommand {
        op: r.op,
        sector: r.sector,
        sectors: r.sectors,
        fua: r.fua,
        commands,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::host_interface::MmcCommand::*;

    fn rq(op: Op) -> DriverRequest {
        DriverRequest {
            id: 0,
            op,
            sector: 8,
            sectors: 8,
            fua: false,
            urgent: false,
        }
    }

    #[test]
    fn legacy_requests_become_the_kernel_command_sequences() {
        assert_eq!(legacy(&rq(Op::Read), true).commands, &[Cmd23, Cmd18]);
        assert_eq!(
            legacy(&rq(Op::Write), true).commands,
            &[Cmd23, Cmd25, Cmd13]
        );
        assert_eq!(legacy(&rq(Op::Write), false).commands, &[Cmd23, Cmd25]);
        assert_eq!(
            legacy(&rq(Op::Discard), true).commands,
            &[Cmd35, Cmd36, Cmd38]
        );
        assert_eq!(legacy(&rq(Op::Flush), true).commands, &[Cmd6]);
    }

    #[test]
    fn legacy_reliable_writes_go_in_rel_wr_sec_c_units_or_single_sectors() {
        // REL_WR_SEC_C = 8: an aligned 4 KiB block goes whole; a write
        // starting off the 8-sector grid goes a sector at a time until
        // aligned; a tail shorter than 8 sectors goes a sector at a time.
        assert_eq!(legacy_reliable_sectors(16, 8, 8), 8);
        assert_eq!(legacy_reliable_sectors(16, 24, 8), 8);
        assert_eq!(legacy_reliable_sectors(17, 24, 8), 1);
        assert_eq!(legacy_reliable_sectors(24, 3, 8), 1);
        // REL_WR_SEC_C = 1 (the common legacy value): always one sector.
        assert_eq!(legacy_reliable_sectors(16, 8, 1), 1);
    }

    #[test]
    fn cmdq_queues_data_as_tasks_and_sends_flush_and_discard_direct() {
        assert_eq!(queued(&rq(Op::Read), true).commands, &[Cmd44, Cmd45, Cmd46]);
        assert_eq!(
            queued(&rq(Op::Write), true).commands,
            &[Cmd44, Cmd45, Cmd47]
        );
        assert_eq!(queued(&rq(Op::Flush), true).commands, &[Cmd6]);
        assert_eq!(
            queued(&rq(Op::Discard), false).commands,
            &[Cmd35, Cmd36, Cmd38]
        );
    }
}
