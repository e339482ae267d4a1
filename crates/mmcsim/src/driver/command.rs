//! The bus commands the driver sends for a request (mmc/card/block.c):
//! a data request is CMD23 SET_BLOCK_COUNT + CMD18 READ_MULTIPLE_BLOCK or
//! CMD25 WRITE_MULTIPLE_BLOCK (reliable write flagged in CMD23's argument
//! for FUA), a discard is the erase sequence CMD35 + CMD36 + CMD38, and a
//! flush is CMD6 SWITCH to FLUSH_CACHE. On the CMDQ driver a data request
//! becomes a queued task (CMD44 + CMD45, executed later by CMD46/CMD47);
//! flush and discard stay direct commands.

use super::DriverRequest;
use crate::device::DeviceCommand;

/// The command sequence of `r` on the legacy (non-queued) path.
pub fn legacy(r: &DriverRequest) -> DeviceCommand {
    DeviceCommand {
        op: r.op,
        sector: r.sector,
        sectors: r.sectors,
        fua: r.fua,
    }
}

/// The command sequence of `r` on the command-queue path (data requests
/// become queued tasks; others are direct commands).
pub fn queued(r: &DriverRequest) -> DeviceCommand {
    legacy(r)
}
