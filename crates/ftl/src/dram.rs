//! Copies in device DRAM (the write and read buffers) and the rate check every
//! MB/s setting of the device shares.

use ftlab_nand::SimTime;

/// Transfer time per byte, in picoseconds, of a rate of `mb_per_s` (10^6 bytes
/// a second), or the problem with it: the rate must be from 0.001 (1 KB/s: a
/// millisecond a byte, so a 32 MiB transfer still fits the clock) to 1,000,000
/// MB/s. The caller names its key.
pub fn ps_per_byte(mb_per_s: f64) -> Result<u64, String> {
    if mb_per_s.is_finite() && (1e-3..=1e6).contains(&mb_per_s) {
        Ok((1e6 / mb_per_s).round().max(1.0) as u64)
    } else {
        Err(format!("must be a rate in MB/s from 0.001 to 1,000,000, got {mb_per_s}"))
    }
}

/// A DRAM copy engine: copies run one at a time at a fixed rate; with no rate
/// they take no time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dram {
    /// Copy time per byte, ps (0: copies are free).
    ps_per_byte: u64,
    /// When the engine is next free.
    free: SimTime,
}

impl Dram {
    /// Copies of `ps_per_byte` picoseconds a byte (0: free).
    pub fn new(ps_per_byte: u64) -> Self {
        Dram { ps_per_byte, free: SimTime::ZERO }
    }

    /// A copy of `bytes` starting no earlier than `at` and the previous copy:
    /// when it ends; `None` if copies are free.
    #[inline]
    pub fn copy(&mut self, at: SimTime, bytes: u64) -> Option<SimTime> {
        if self.ps_per_byte == 0 {
            return None;
        }
        let end = SimTime(at.0.max(self.free.0) + (bytes * self.ps_per_byte).div_ceil(1000));
        self.free = end;
        Some(end)
    }

    /// Idle from `t` (a power cut).
    pub fn reset(&mut self, t: SimTime) {
        self.free = t;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rates_and_copies() {
        assert_eq!(ps_per_byte(100.0), Ok(10_000));
        assert_eq!(ps_per_byte(0.001), Ok(1_000_000_000));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 2e6, 1e-300, 9e-4] {
            assert!(ps_per_byte(bad).unwrap_err().contains("MB/s"), "{bad}");
        }
        let mut d = Dram::new(10_000); // 100 MB/s
        assert_eq!(d.copy(SimTime(0), 4096), Some(SimTime(40_960)));
        assert_eq!(d.copy(SimTime(0), 4096), Some(SimTime(81_920)));
        assert_eq!(d.copy(SimTime(100_000), 1000), Some(SimTime(110_000)));
        assert_eq!(Dram::default().copy(SimTime(5), 4096), None);
    }
}
