//! Operation latencies of a NAND chip and the named chip presets of the papers.

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// Latencies of one NAND chip. All array times are in nanoseconds; the channel
/// moves `channel_mb_per_s` megabytes (10^6 bytes) per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    /// Page read: cell array to the page register (t_R).
    pub read_ns: u64,
    /// Spare-area (OOB) read: array time of a read that only needs the OOB bytes.
    pub read_oob_ns: u64,
    /// Page program: page register to the cell array (t_PROG).
    pub program_ns: u64,
    /// Block erase (t_BERS).
    pub erase_ns: u64,
    /// Channel (bus) transfer rate in MB/s (10^6 bytes per second).
    pub channel_mb_per_s: u32,
}

impl Timing {
    /// Time to move `bytes` over the channel, rounded up to whole nanoseconds.
    #[inline]
    pub fn transfer(&self, bytes: u32) -> SimTime {
        let mbps = u64::from(self.channel_mb_per_s.max(1));
        SimTime((u64::from(bytes) * 1000).div_ceil(mbps))
    }
}
