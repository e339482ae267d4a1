//! The bus commands the driver sends for a request (mmc/card/block.c,
//! `mmc_blk_issue_rw_rq` and friends): a data request is CMD23
//! SET_BLOCK_COUNT + CMD18 READ_MULTIPLE_BLOCK or CMD25
//! WRITE_MULTIPLE_BLOCK (reliable write flagged in CMD23's argument for
//! FUA); the CMD13 SEND_STATUS polling after a write is not part of the
//! data command: the driver sends each CMD13 as a request of its own
//! (module `busy_poll`); a discard is the erase sequence CMD35 + CMD36 + CMD38 with the argument
//! the card takes ([`erase`]), a secure discard on an eMMC 4.5 card adds
//! CMD6 SANITIZE_START; a flush is CMD6 SWITCH to FLUSH_CACHE. On the CMDQ driver a data request becomes a
//! queued task (CMD44 + CMD45, executed by CMD46/CMD47, no CMD13: the
//! queue reports completion); flush and discard stay direct commands.

use super::DriverRequest;
use crate::device::config::FeaturesConfig;
use crate::device::host_interface::{
    MmcCommand, DISCARD, ERASE, ERASE_SANITIZE, FLUSH_CACHE, QUEUED_READ, QUEUED_WRITE,
    READ_MULTIPLE, TRIM, TRIM_SANITIZE, WRITE_MULTIPLE,
};
use crate::device::DeviceCommand;
use crate::types::Op;

/// The legacy (non-queued) command of `r`: a write is CMD23 + CMD25 alone
/// (its CMD13 polls are requests of their own). A discard here is the
/// eMMC 4.5 DISCARD sequence; the driver sends discards through [`erase`],
/// which picks the argument the card takes.
pub fn legacy(r: &DriverRequest) -> DeviceCommand {
    let commands: &'static [MmcCommand] = match r.op {
        Op::Read => READ_MULTIPLE,
        Op::Write => WRITE_MULTIPLE,
        Op::Discard => DISCARD,
        Op::Flush => FLUSH_CACHE,
    };
    device_command(r, commands)
}

/// The command of `r` on the command-queue path: a data request is queued
/// as a task; flush and discard go as direct commands (the driver issues
/// them with the queue empty).
pub fn queued(r: &DriverRequest) -> DeviceCommand {
    match r.op {
        Op::Read => device_command(r, QUEUED_READ),
        Op::Write => device_command(r, QUEUED_WRITE),
        Op::Discard | Op::Flush => legacy(r),
    }
}

/// The erase-class command of discard `r` on a card with features `f`
/// and an erase group of `group` sectors, or `None` when the driver sends
/// nothing. Linux 3.x `mmc_blk_issue_discard_rq`: the DISCARD argument if
/// the card can discard (eMMC 4.5), else TRIM if it can trim (4.41), else
/// ERASE, which `mmc_erase` shrinks to the whole erase groups inside the
/// range (nothing left: no command, the request completes).
/// `mmc_blk_issue_secdiscard_rq` on a card that can sanitize: ERASE if
/// the range is erase-group aligned (`mmc_erase_group_aligned`), else
/// TRIM, then CMD6 SANITIZE_START (the eMMC 4.5 branch of the mainline
/// kernels that followed 3.4, recalled, not re-read; 3.4 itself sent
/// SANITIZE_START alone, leaving the range mapped, and later kernels moved
/// sanitize to its own request). A secure discard on a card without SANITIZE (eMMC 4.4/4.41
/// SECURE_ERASE / SECURE_TRIM) is not modelled: it goes as a plain discard
/// and the device counts it (`device.erase_commands.secure_as_plain`).
pub fn erase(r: &DriverRequest, f: &FeaturesConfig, group: u64) -> Option<DeviceCommand> {
    let group = group.max(1);
    let aligned = r.sector % group == 0 && r.sectors as u64 % group == 0;
    let commands = if r.secure && f.can_sanitize() {
        if aligned {
            ERASE_SANITIZE
        } else {
            TRIM_SANITIZE
        }
    } else if f.can_discard() {
        DISCARD
    } else if f.can_trim() {
        TRIM
    } else {
        ERASE
    };
    let mut cmd = device_command(r, commands);
    if commands == ERASE {
        // `mmc_erase`: start rounded up, length down, to whole groups.
        let start = r.sector.div_ceil(group) * group;
        let end = (r.sector + r.sectors as u64) / group * group;
        if end <= start {
            return None;
        }
        cmd.sector = start;
        cmd.sectors = (end - start) as u32;
    }
    Some(cmd)
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
            secure: false,
            hint: None,
        }
    }

    #[test]
    fn legacy_requests_become_the_kernel_command_sequences() {
        assert_eq!(legacy(&rq(Op::Read)).commands, &[Cmd23, Cmd18]);
        // The CMD13 polls after a write are requests of their own.
        assert_eq!(legacy(&rq(Op::Write)).commands, &[Cmd23, Cmd25]);
        assert_eq!(legacy(&rq(Op::Discard)).commands, DISCARD);
        assert_eq!(legacy(&rq(Op::Flush)).commands, FLUSH_CACHE);
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
        assert_eq!(queued(&rq(Op::Read)).commands, &[Cmd44, Cmd45, Cmd46]);
        assert_eq!(queued(&rq(Op::Write)).commands, &[Cmd44, Cmd45, Cmd47]);
        assert_eq!(queued(&rq(Op::Flush)).commands, FLUSH_CACHE);
        assert_eq!(queued(&rq(Op::Discard)).commands, DISCARD);
    }

    fn card(version: &str) -> FeaturesConfig {
        FeaturesConfig {
            emmc_version: Some(version.to_string()),
            ..FeaturesConfig::default()
        }
    }

    fn discard(sector: u64, sectors: u32, secure: bool) -> DriverRequest {
        DriverRequest {
            sector,
            sectors,
            secure,
            ..rq(Op::Discard)
        }
    }

    #[test]
    fn a_discard_takes_the_argument_of_the_cards_era() {
        let d = discard(8, 8, false);
        assert_eq!(erase(&d, &card("4.5"), 1024).unwrap().commands, DISCARD);
        assert_eq!(erase(&d, &card("4.41"), 1024).unwrap().commands, TRIM);
        // No version: the erase model before versions were stated.
        let none = FeaturesConfig::default();
        assert_eq!(erase(&d, &none, 1024).unwrap().commands, DISCARD);
        let old = card("4.3");
        let c = |s, n| erase(&discard(s, n, false), &old, 1024);
        // ERASE keeps only the whole groups inside the range.
        assert!(c(8, 8).is_none());
        assert!(c(100, 1900).is_none());
        let e = c(100, 3000).unwrap();
        assert_eq!(e.commands, ERASE);
        assert_eq!((e.sector, e.sectors), (1024, 2048));
        let e = c(2048, 1024).unwrap();
        assert_eq!((e.sector, e.sectors), (2048, 1024));
    }

    #[test]
    fn a_secure_discard_on_a_4_5_card_erases_or_trims_then_sanitizes() {
        let f = card("4.5");
        let aligned = erase(&discard(2048, 1024, true), &f, 1024).unwrap();
        assert_eq!(aligned.commands, ERASE_SANITIZE);
        assert_eq!((aligned.sector, aligned.sectors), (2048, 1024));
        let partial = erase(&discard(2048, 8, true), &f, 1024).unwrap();
        assert_eq!(partial.commands, TRIM_SANITIZE);
        assert_eq!((partial.sector, partial.sectors), (2048, 8));
        // Without SANITIZE (4.41): sent as a plain discard.
        assert_eq!(
            erase(&discard(2048, 1024, true), &card("4.41"), 1024)
                .unwrap()
                .commands,
            TRIM
        );
    }
}
