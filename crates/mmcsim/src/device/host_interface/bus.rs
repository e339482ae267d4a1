//! The MMC bus: command/response time on the CMD line and data transfer on
//! the DAT lines, derived from clock, width and DDR.
//!
//! Per 512-byte block the DAT lines carry a start bit, the data, a CRC16 per
//! line (16 clocks; in DDR mode the rising- and falling-edge CRCs interleave
//! over the same 16 clocks) and an end bit [spec, JESD84 bus timing]. At
//! DDR52 × 8 that is 256 + 16 + 2 = 274 clocks = 5.27 µs per block, 42 µs
//! per 4 KiB — matching the ≈ 39 µs of emmc-parameters.md §1.1.
//!
//! A command with its response costs `cmd_response_bits` clocks of the 1-bit
//! CMD line; which commands a request needs is the driver's choice
//! [spec, emmc-parameters.md §1.2] (see the sequences in `command.rs`).

use crate::device::config::BusConfig;
use crate::types::Ns;

/// Clocks of start + end bit around each block on the DAT lines.
const START_END_CLOCKS: u64 = 2;
/// Clocks of the CRC16 after each block (per line; DDR interleaves both).
const CRC_CLOCKS: u64 = 16;

/// Bus timing derived from a [`BusConfig`].
#[derive(Clone, Debug)]
pub struct Bus {
    ps_per_clock: u64,
    block_clocks: u64,
    cmd_clocks: u64,
}

impl Bus {
    /// Timing of a bus configuration.
    pub fn new(c: &BusConfig) -> Bus {
        let bits_per_clock = c.width_bits as u64 * if c.ddr { 2 } else { 1 };
        Bus {
            ps_per_clock: (1e6 / c.clock_mhz).round() as u64,
            block_clocks: 512 * 8 / bits_per_clock + CRC_CLOCKS + START_END_CLOCKS,
            cmd_clocks: c.cmd_response_bits as u64,
        }
    }
    fn clocks_ns(&self, clocks: u64) -> Ns {
        (clocks * self.ps_per_clock).div_ceil(1000)
    }
    /// Time of `n` back-to-back commands with their responses on the CMD
    /// line, in ns (rounded up once for the group).
    pub fn commands_ns(&self, n: u32) -> Ns {
        self.clocks_ns(self.cmd_clocks * n as u64)
    }
    /// Data transfer time of `sectors` 512-byte blocks, in ns.
    pub fn data_ns(&self, sectors: u64) -> Ns {
        self.clocks_ns(self.block_clocks * sectors)
    }
    /// Payload rate of long transfers, in MB/s (10^6 bytes per second).
    #[cfg(test)]
    pub fn payload_mb_per_s(&self) -> f64 {
        512.0 * 1e3 / self.data_ns(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddr52_8bit_moves_4k_in_about_40_us() {
        let b = Bus::new(&BusConfig {
            mode: "DDR52".into(),
            clock_mhz: 52.0,
            width_bits: 8,
            ddr: true,
            cmd_response_bits: 136,
            status_poll_after_write: true,
        });
        let t = b.data_ns(8);
        assert!((40_000..44_000).contains(&t), "{t}");
        assert!(b.payload_mb_per_s() > 90.0 && b.payload_mb_per_s() < 104.0);
        assert!(b.commands_ns(2) < 6_000);
    }
}
