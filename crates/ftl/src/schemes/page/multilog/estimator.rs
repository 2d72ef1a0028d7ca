//! Update-interval estimators of [`super::MultiLog`]: which frequency set a write
//! belongs to.
//!
//! Intervals are counted in host page writes, the unit in which Stoica and
//! Ailamaki define a page's update frequency (its share of the write stream, via
//! 000_ffe2fafb22bcad8e.txt Section 6.1.4), so the set boundaries do not depend on
//! how fast the host writes. A time interval (an expiry hint, a configured base in
//! microseconds) is converted at the host write rate measured over the last
//! window of `logical_pages / 16` (at least 64) writes.

use serde::{Deserialize, Serialize};

use ftlab_nand::SimTime;

use crate::Hint;

/// How a write's update interval is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Estimator {
    /// MultiLog-Oracle: the interval is `Hint::expiry - now`, the time until the
    /// data is rewritten or dropped. Writes without an expiry use `online`.
    #[default]
    Oracle,
    /// The interval since the page's previous write (never written: coldest set).
    Online,
}

/// `last` of a page never written (since format or recovery).
const NEVER: u32 = u32::MAX;
/// Stamps wrap modulo this (`NEVER` is never a stamp).
const WRAP: u64 = u32::MAX as u64;

/// Per-page last-write stamps on a clock of host page writes, the measured host
/// write rate, and the set boundaries.
#[derive(Debug, Clone)]
pub(super) struct IntervalClock {
    kind: Estimator,
    logs: u32,
    /// The base in host page writes when no time base applies: set `k >= 1`
    /// starts at `base * 2^k`.
    base_writes: f64,
    /// The configured base in nanoseconds, if any.
    base_ns: Option<f64>,
    /// Host page writes so far.
    clock: u64,
    /// Clock (modulo [`WRAP`]) of each page's last write, or [`NEVER`].
    last: Vec<u32>,
    /// Start (time, clock) of the current rate window.
    window: Option<(SimTime, u64)>,
    /// Host writes per rate window.
    window_writes: u64,
    /// Nanoseconds per host page write over the last completed window.
    ns_per_write: Option<f64>,
}

impl IntervalClock {
    /// A clock for `logical_pages` pages split into `logs` sets. Set `k >= 1`
    /// starts at `base * 2^k`; `base_us > 0` is the base in microseconds, 0 picks
    /// the automatic base, `logical_pages / 2^(logs - 2)` host page writes, which
    /// starts the coldest set at twice the interval of uniform random writes.
    pub(super) fn new(kind: Estimator, logs: u32, logical_pages: u32, base_us: f64) -> Self {
        let n = f64::from(logical_pages);
        let base_writes = (n / 2f64.powi(logs as i32 - 2)).max(1.0);
        IntervalClock {
            kind,
            logs,
            base_writes,
            base_ns: (base_us > 0.0).then_some(base_us * 1e3),
            clock: 0,
            last: vec![NEVER; logical_pages as usize],
            window: None,
            window_writes: u64::from(logical_pages / 16).max(64),
            ns_per_write: None,
        }
    }

    /// After recovery: pages that hold data count as written now (their last
    /// write time is lost), the others as never written.
    pub(super) fn recovered(&mut self, mapped: impl Iterator<Item = usize>) {
        for l in mapped {
            self.last[l] = 0;
        }
    }

    /// The set of a host write of page `lpn` at `now` (0 the hottest, `logs - 1`
    /// the coldest); records the write.
    pub(super) fn set_of_write(&mut self, lpn: usize, now: SimTime, hint: &Hint) -> u32 {
        self.observe_rate(now);
        let rate = self.ns_per_write(now);
        let interval = match (self.kind, hint.expiry, rate) {
            (Estimator::Oracle, Some(expiry), Some(r)) => Some(expiry.saturating_sub(now).as_ns() as f64 / r),
            _ => self.since_last_write(lpn),
        };
        self.last[lpn] = (self.clock % WRAP) as u32;
        self.clock += 1;
        match interval {
            Some(i) => self.classify(i, rate),
            None => self.logs - 1,
        }
    }

    /// Host page writes since `lpn` was last written (modulo 2^32 - 1), `None` if
    /// never.
    fn since_last_write(&self, lpn: usize) -> Option<f64> {
        let last = self.last[lpn];
        (last != NEVER).then(|| ((self.clock % WRAP + WRAP - u64::from(last)) % WRAP) as f64)
    }

    /// Set `k = floor(log2(interval / base))`, clamped to `[0, logs - 1]`.
    fn classify(&self, interval_writes: f64, ns_per_write: Option<f64>) -> u32 {
        let base = match (self.base_ns, ns_per_write) {
            (Some(ns), Some(r)) => ns / r,
            _ => self.base_writes,
        };
        let ratio = interval_writes / base;
        if ratio < 2.0 || ratio.is_nan() {
            return 0;
        }
        (ratio.log2().floor() as u32).min(self.logs - 1)
    }

    /// Closes the rate window once it holds `window_writes` writes and time has
    /// passed.
    fn observe_rate(&mut self, now: SimTime) {
        match self.window {
            None => self.window = Some((now, self.clock)),
            Some((t0, c0)) => {
                let n = self.clock - c0;
                if n >= self.window_writes && now > t0 {
                    self.ns_per_write = Some((now - t0).as_ns() as f64 / n as f64);
                    self.window = Some((now, self.clock));
                }
            }
        }
    }

    /// Nanoseconds per host page write: the last completed window, else the
    /// current one so far; `None` while no time has passed.
    fn ns_per_write(&self, now: SimTime) -> Option<f64> {
        self.ns_per_write.or_else(|| {
            let (t0, c0) = self.window?;
            (now > t0 && self.clock > c0).then(|| (now - t0).as_ns() as f64 / (self.clock - c0) as f64)
        })
    }

    /// RAM used, in bytes.
    pub(super) fn ram_bytes(&self) -> u64 {
        self.last.len() as u64 * 4 + 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(expiry_ns: u64) -> Hint {
        Hint { expiry: Some(SimTime(expiry_ns)), ..Hint::default() }
    }

    #[test]
    fn online_sets_double_per_set_and_clamp() {
        // 1024 pages, 4 sets: base = 1024 / 4 = 256 writes; set 1 from 512, set 2
        // from 1024, set 3 from 2048.
        let mut c = IntervalClock::new(Estimator::Online, 4, 1024, 0.0);
        assert_eq!(c.set_of_write(0, SimTime::ZERO, &Hint::default()), 3, "never written: coldest");
        let mut sets = Vec::new();
        for gap in [10u64, 511, 512, 1023, 1024, 2047, 2048, 100_000] {
            for i in 1..gap {
                c.set_of_write(1 + (i % 7) as usize, SimTime::ZERO, &Hint::default());
            }
            sets.push(c.set_of_write(0, SimTime::ZERO, &Hint::default()));
        }
        assert_eq!(sets, vec![0, 0, 1, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn oracle_converts_expiry_at_the_measured_rate() {
        // One write every 1000 ns; 1024 pages, 4 sets (base 256 writes = 256 us).
        let mut c = IntervalClock::new(Estimator::Oracle, 4, 1024, 0.0);
        let mut t = 0;
        for i in 0..200 {
            c.set_of_write(i % 100, SimTime(t), &Hint::default());
            t += 1000;
        }
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 100_000)), 0);
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 600_000)), 1);
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 1_500_000)), 2);
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 9_000_000)), 3);
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(0)), 0, "already expired: hottest");
        // Without an expiry the online estimate applies: lpn 5 was just written.
        assert_eq!(c.set_of_write(5, SimTime(t), &Hint::default()), 0);
        // A time base of 1 ms: set 1 from 2 ms, set 3 from 8 ms.
        let mut c = IntervalClock::new(Estimator::Oracle, 4, 1024, 1000.0);
        for i in 0..200 {
            c.set_of_write(i % 100, SimTime(i as u64 * 1000), &Hint::default());
        }
        let t = 200_000;
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 1_900_000)), 0);
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 2_100_000)), 1);
        assert_eq!(c.set_of_write(5, SimTime(t), &hint(t + 8_100_000)), 3);
    }

    #[test]
    fn oracle_without_elapsed_time_falls_back_to_online() {
        let mut c = IntervalClock::new(Estimator::Oracle, 4, 1024, 0.0);
        assert_eq!(c.set_of_write(3, SimTime(5), &hint(10)), 3, "no rate yet, never written");
        assert_eq!(c.set_of_write(3, SimTime(5), &hint(10)), 0, "no rate yet, just written");
    }

    #[test]
    fn recovered_pages_count_as_written_at_recovery() {
        let mut c = IntervalClock::new(Estimator::Online, 4, 1024, 0.0);
        c.recovered([7usize].into_iter());
        assert_eq!(c.set_of_write(7, SimTime::ZERO, &Hint::default()), 0);
        assert_eq!(c.set_of_write(8, SimTime::ZERO, &Hint::default()), 3);
    }
}
