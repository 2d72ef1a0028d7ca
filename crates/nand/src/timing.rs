//! Operation latencies of a NAND chip and the named chip presets of the papers.

use serde::{Deserialize, Serialize};

use crate::error::TimingError;
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
    /// The longest single array time accepted: one hour of simulated time, far
    /// beyond any chip (a block erase takes milliseconds). A page transfer is at
    /// most about 2 s (pages of at most 1 MiB, at least 1 MB/s).
    pub const MAX_OPERATION_NS: u64 = 3_600_000_000_000;

    /// Checks every field is positive (`read_oob_ns` may be 0) and no array time
    /// exceeds [`Timing::MAX_OPERATION_NS`]; errors name the key.
    pub fn validate(&self) -> Result<(), TimingError> {
        for (field, ns) in [
            ("read_ns", self.read_ns),
            ("read_oob_ns", self.read_oob_ns),
            ("program_ns", self.program_ns),
            ("erase_ns", self.erase_ns),
        ] {
            if ns == 0 && field != "read_oob_ns" {
                return Err(TimingError::Zero { field });
            }
            if ns > Self::MAX_OPERATION_NS {
                return Err(TimingError::TooLong { field, ns, max: Self::MAX_OPERATION_NS });
            }
        }
        if self.channel_mb_per_s == 0 {
            return Err(TimingError::Zero { field: "channel_mb_per_s" });
        }
        Ok(())
    }

    /// Time to move `bytes` over the channel, rounded up to whole nanoseconds.
    #[inline]
    pub fn transfer(&self, bytes: u32) -> SimTime {
        let mbps = u64::from(self.channel_mb_per_s.max(1));
        SimTime((u64::from(bytes) * 1000).div_ceil(mbps))
    }
}
