//! Simulated time: integer nanoseconds, never floating point.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Serialize};

/// A point in (or a span of) simulated time, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time.
    pub const MAX: SimTime = SimTime(u64::MAX);
    /// The latest time a flash operation may start (3 x 2^62 ns, about 438
    /// years). The medium refuses an operation issued, or queued behind a die
    /// busy, past it; no single operation lasts more than
    /// [`Timing::MAX_OPERATION_NS`](crate::Timing::MAX_OPERATION_NS) (three of
    /// them in a row at most), so the 2^62 ns left above it absorb any queue
    /// and the sums the timelines form never saturate.
    pub const LATEST: SimTime = SimTime(3 << 62);

    /// `us` microseconds.
    pub const fn from_us(us: u64) -> SimTime {
        SimTime(us * 1_000)
    }
    /// `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    /// Nanoseconds.
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Microseconds as a float, for reporting only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1_000.0
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub const fn saturating_sub(self, earlier: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(earlier.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, rhs: SimTime) -> SimTime {
        self.saturating_sub(rhs)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} us", self.as_us_f64())
    }
}
