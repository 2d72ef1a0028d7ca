//! A hard disk, the backing store behind a cache manager (FlashTier,
//! `003_9b28d6a0046a8156.txt` Section 3.3, the evaluation's Western Digital
//! WD1502FAEX 7200 RPM 1.5 TB disk).
//!
//! # Model
//!
//! The simple disk of Ruemmler & Wilkes ("An introduction to disk drive
//! modeling", IEEE Computer 1994) and DiskSim's simple-disk mode: one request
//! at a time, first come first served; a request's service time is
//! `overhead + seek + rotational wait + transfer`.
//!
//! - **Layout.** 4 KiB blocks are laid out track by track, `blocks_per_track`
//!   per track and `heads` tracks per cylinder; block `b` is on cylinder
//!   `b / (blocks_per_track * heads)`. Zoning is ignored: every track holds the
//!   same number of blocks (the outer zone's, where the data partition of the
//!   evaluation sits).
//! - **Seek** over `d` cylinders (`d > 0`): `a + b * sqrt(d)` below
//!   `long_seek_from` cylinders (arm acceleration dominates), linear
//!   `c + e * d` from there (coast), continuous at the boundary; 0 for `d = 0`.
//!   The curve is fitted through three points a data sheet gives: the
//!   track-to-track seek at `d = 1`, the average seek at a third of the
//!   cylinders (the mean distance of two uniform random cylinders), the full
//!   stroke at all of them.
//! - **Rotation.** The platter turns once every `rotation_ns`, from angle 0 at
//!   time 0, so the rotational wait is computed, not drawn: the head waits
//!   until the target block's slot on the track passes under it. Back-to-back
//!   sequential requests therefore wait no rotation, and random ones wait half
//!   a turn on average.
//! - **Transfer** takes `rotation_ns / blocks_per_track` per block (the media
//!   rate); track and cylinder switches within a request are free.
//! - **Sequential streams.** A request that starts at the block after the
//!   previous request's last, arriving at most one revolution after that one
//!   ends, costs only its transfer (no overhead, seek or rotational wait): the
//!   drive's read-ahead and write merging keep a stream going. Without it,
//!   back-to-back small sequential requests would each lose a revolution to
//!   the controller overhead.
//! - No write-back cache: a write is on the platter when it completes
//!   (FlashCache's write-through and clean paths rely on the disk having the
//!   data at completion).
//!
//! # WD1502FAEX parameters ([`DiskConfig::default`])
//!
//! From the WD Caviar Black data sheet (2879-771386): 7200 RPM, 1.5 TB, 3
//! platters (6 heads), sustained transfer 138 MB/s. Seek times are not on
//! that sheet; typical values of 7200 RPM desktop disks of the time are
//! assumed: track-to-track 0.6 ms, average 8.5 ms, full stroke 17 ms, and a
//! controller overhead of 0.1 ms per request. 138 MB/s at 8.33 ms per turn is
//! 280 blocks of 4 KiB per track; 1.5 TB is then 218,000 cylinders of 6 tracks.
//!
//! Blocks hold 64-bit tokens standing for their data (a block never written
//! holds token 0), so a cache manager's end-to-end integrity check can compare
//! what a read returns with what was written last.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use ftlab_nand::SimTime;

/// The disk's block, bytes.
pub const DISK_BLOCK: u64 = 4096;

/// A disk's parameters. Every field has a documented default: the WD1502FAEX
/// (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DiskConfig {
    /// Blocks of 4 KiB on the disk. Default 366,210,937 (1.5 TB).
    pub blocks: u64,
    /// One revolution, ns. Default 8,333,333 (7200 RPM).
    pub rotation_ns: u64,
    /// 4 KiB blocks per track. Default 280 (138 MB/s at 7200 RPM).
    pub blocks_per_track: u64,
    /// Tracks per cylinder (recording surfaces). Default 6.
    pub heads: u64,
    /// Seek over one cylinder, ns. Default 600,000.
    pub track_to_track_ns: u64,
    /// Seek over a third of the cylinders, ns. Default 8,500,000.
    pub average_seek_ns: u64,
    /// Seek over all cylinders, ns. Default 17,000,000.
    pub full_stroke_ns: u64,
    /// Controller overhead per request, ns. Default 100,000.
    pub overhead_ns: u64,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            blocks: 1_500_000_000_000 / DISK_BLOCK,
            rotation_ns: 60_000_000_000 / 7200,
            blocks_per_track: 280,
            heads: 6,
            track_to_track_ns: 600_000,
            average_seek_ns: 8_500_000,
            full_stroke_ns: 17_000_000,
            overhead_ns: 100_000,
        }
    }
}

/// Why a disk configuration or request was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DiskError {
    /// A configuration field out of range.
    #[error("disk.{field}: {problem}")]
    Config { field: &'static str, problem: String },
    /// A request beyond the disk, or of no blocks.
    #[error("disk request of {len} blocks at block {block} is outside the disk's {blocks} blocks (or empty)")]
    OutOfRange { block: u64, len: u64, blocks: u64 },
}

impl DiskConfig {
    /// Checks the fields; errors name the field and the fix.
    pub fn validate(&self) -> Result<(), DiskError> {
        let bad = |field, problem: &str| Err(DiskError::Config { field, problem: problem.into() });
        if self.blocks == 0 {
            return bad("blocks", "must be at least 1");
        }
        if self.blocks_per_track == 0 || self.heads == 0 {
            return bad("blocks_per_track", "blocks_per_track and heads must be at least 1");
        }
        if self.rotation_ns < self.blocks_per_track {
            return bad("rotation_ns", "must be at least blocks_per_track ns (a block takes at least 1 ns)");
        }
        if !(self.track_to_track_ns <= self.average_seek_ns && self.average_seek_ns <= self.full_stroke_ns) {
            return bad(
                "average_seek_ns",
                "seek times must grow: track_to_track_ns <= average_seek_ns <= full_stroke_ns",
            );
        }
        Ok(())
    }

    /// Cylinders on the disk.
    pub fn cylinders(&self) -> u64 {
        self.blocks.div_ceil(self.blocks_per_track * self.heads)
    }

    /// The seek time over `d` cylinders, ns: 0, then `a + b sqrt(d)`, then
    /// linear (see the [module documentation](self)). Monotone in `d`.
    pub fn seek_ns(&self, d: u64) -> u64 {
        if d == 0 {
            return 0;
        }
        let n = self.cylinders().max(3);
        let third = n / 3;
        if d < third {
            // a + b sqrt(d) through (1, t2t) and (third, avg); sqrt in fixed
            // point (x1000) so the curve is integer arithmetic throughout.
            let s = |x: u64| (u128::from(x) * 1_000_000).isqrt();
            let span = u128::from(self.average_seek_ns - self.track_to_track_ns);
            let rise = span * (s(d) - 1000) / (s(third) - 1000).max(1);
            self.track_to_track_ns + rise as u64
        } else {
            let span = u128::from(self.full_stroke_ns - self.average_seek_ns);
            let rise = span * u128::from(d.min(n) - third) / u128::from((n - third).max(1));
            self.average_seek_ns + rise as u64
        }
    }

    fn cylinder(&self, block: u64) -> u64 {
        block / (self.blocks_per_track * self.heads)
    }

    /// The per-block transfer time, ns.
    fn block_ns(&self) -> u64 {
        self.rotation_ns / self.blocks_per_track
    }
}

/// Counters of a disk since it was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DiskCounters {
    pub reads: u64,
    pub writes: u64,
    pub blocks_read: u64,
    pub blocks_written: u64,
    /// Time spent seeking, ns.
    pub seek_ns: u64,
    /// Time spent waiting for rotation, ns.
    pub rotation_ns: u64,
    /// Time the disk was busy, ns.
    pub busy_ns: u64,
}

impl DiskCounters {
    /// What was counted since `before` (an earlier snapshot).
    pub fn since(&self, before: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: self.reads - before.reads,
            writes: self.writes - before.writes,
            blocks_read: self.blocks_read - before.blocks_read,
            blocks_written: self.blocks_written - before.blocks_written,
            seek_ns: self.seek_ns - before.seek_ns,
            rotation_ns: self.rotation_ns - before.rotation_ns,
            busy_ns: self.busy_ns - before.busy_ns,
        }
    }
}

/// The disk: the model of the [module documentation](self), a FIFO queue
/// (requests are served in the order they are submitted, each from the later of
/// its arrival and the end of the one before), and the data.
#[derive(Debug, Clone)]
pub struct Disk {
    config: DiskConfig,
    /// When the last request submitted ends, ns.
    busy_until: u64,
    /// The cylinder the head is on.
    cylinder: u64,
    /// The block after the last request's.
    next_block: u64,
    data: HashMap<u64, u64>,
    counters: DiskCounters,
}

impl Disk {
    /// A disk with `config` (validated), head on cylinder 0, every block
    /// holding token 0.
    pub fn new(config: DiskConfig) -> Result<Disk, DiskError> {
        config.validate()?;
        Ok(Disk {
            config,
            busy_until: 0,
            cylinder: 0,
            next_block: u64::MAX,
            data: HashMap::new(),
            counters: DiskCounters::default(),
        })
    }

    /// Its configuration.
    pub fn config(&self) -> &DiskConfig {
        &self.config
    }

    /// Its counters.
    pub fn counters(&self) -> DiskCounters {
        self.counters
    }

    /// When the last request submitted ends.
    pub fn busy_until(&self) -> SimTime {
        SimTime(self.busy_until)
    }

    /// Reads `len` blocks from `block`, arriving at `at`: the completion and
    /// the tokens.
    pub fn read(&mut self, at: SimTime, block: u64, len: u64) -> Result<(SimTime, Vec<u64>), DiskError> {
        let done = self.serve(at, block, len)?;
        self.counters.reads += 1;
        self.counters.blocks_read += len;
        Ok((done, (block..block + len).map(|b| self.peek(b)).collect()))
    }

    /// Writes `tokens` from `block`, arriving at `at`: the completion.
    pub fn write(&mut self, at: SimTime, block: u64, tokens: &[u64]) -> Result<SimTime, DiskError> {
        let len = tokens.len() as u64;
        let done = self.serve(at, block, len)?;
        self.counters.writes += 1;
        self.counters.blocks_written += len;
        for (b, t) in (block..).zip(tokens) {
            self.data.insert(b, *t);
        }
        Ok(done)
    }

    /// What `block` holds, without an access (for checks).
    pub fn peek(&self, block: u64) -> u64 {
        self.data.get(&block).copied().unwrap_or(0)
    }

    /// Serves one request of `len` blocks from `block` arriving at `at`.
    fn serve(&mut self, at: SimTime, block: u64, len: u64) -> Result<SimTime, DiskError> {
        let c = &self.config;
        if len == 0 || block.checked_add(len).is_none_or(|end| end > c.blocks) {
            return Err(DiskError::OutOfRange { block, len, blocks: c.blocks });
        }
        let start = at.0.max(self.busy_until);
        if block == self.next_block && at.0 <= self.busy_until + c.rotation_ns {
            // The drive's read-ahead or write merging keeps a sequential
            // stream going: no overhead, no seek, no lost revolution.
            let done = start + len * c.block_ns();
            return Ok(self.finish(start, done, block, len));
        }
        let target = c.cylinder(block);
        let seek = c.seek_ns(target.abs_diff(self.cylinder));
        let positioned = start + c.overhead_ns + seek;
        // The slot under the head at `positioned`, and the wait for the target's.
        let bns = c.block_ns();
        let turn = bns * c.blocks_per_track;
        let phase = positioned % turn;
        let slot_at = (block % c.blocks_per_track) * bns;
        let wait = (slot_at + turn - phase) % turn;
        let done = positioned + wait + len * bns;
        self.counters.seek_ns += seek;
        self.counters.rotation_ns += wait;
        Ok(self.finish(start, done, block, len))
    }

    /// Books a request served from `start` to `done`.
    fn finish(&mut self, start: u64, done: u64, block: u64, len: u64) -> SimTime {
        self.counters.busy_ns += done - start;
        self.busy_until = done;
        self.cylinder = self.config.cylinder(block + len - 1);
        self.next_block = block + len;
        SimTime(done)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn seek_curve_passes_its_three_points_and_is_monotone() {
        let c = DiskConfig::default();
        let n = c.cylinders();
        assert_eq!(n, 217_983);
        assert_eq!(c.seek_ns(0), 0);
        assert_eq!(c.seek_ns(1), 600_000);
        assert_eq!(c.seek_ns(n / 3), 8_500_000);
        assert_eq!(c.seek_ns(n), 17_000_000);
        for d in 0..n {
            assert!(c.seek_ns(d + 1) >= c.seek_ns(d), "seek not monotone at {d}");
        }
    }

    #[test]
    fn sequential_is_much_faster_than_random() {
        let mut seq = Disk::new(DiskConfig::default()).unwrap();
        let mut t = SimTime::ZERO;
        for i in 0..1000 {
            t = seq.write(t, 1_000_000 + i, &[i]).unwrap();
        }
        let seq_ns = t.0;
        let mut rnd = Disk::new(DiskConfig::default()).unwrap();
        let mut t = SimTime::ZERO;
        let mut x: u64 = 12345;
        for i in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            t = rnd.write(t, (x >> 20) % 18_000_000, &[i]).unwrap();
        }
        // 1000 random 4 KiB writes over 75 GB: about 100 IOPS (8-12 ms each);
        // sequential ones stream at the media rate plus the overhead.
        assert!(t.0 > 8 * seq_ns, "random {} ns vs sequential {seq_ns} ns", t.0);
        assert!(t.0 / 1000 > 5_000_000 && t.0 / 1000 < 15_000_000, "random mean {} ns", t.0 / 1000);
        // A long request streams at 138 MB/s once positioned, and so does a
        // sequential request right behind it.
        let mut d = Disk::new(DiskConfig::default()).unwrap();
        let (first, _) = d.read(SimTime::ZERO, 0, 2800).unwrap();
        let (second, _) = d.read(first, 2800, 2800).unwrap();
        let mb_s = 2800 * DISK_BLOCK * 1000 / (second.0 - first.0);
        assert!((135..=140).contains(&mb_s), "{mb_s} MB/s");
        assert!(first.0 > second.0 - first.0, "the first request pays positioning");
    }

    #[test]
    fn fifo_queue_and_data() {
        let mut d = Disk::new(DiskConfig::default()).unwrap();
        let a = d.write(SimTime::ZERO, 5, &[7, 8]).unwrap();
        // Submitted at time 0 too, it waits for the first.
        let (b, data) = d.read(SimTime::ZERO, 5, 3).unwrap();
        assert!(b > a);
        assert_eq!(data, vec![7, 8, 0]);
        assert_eq!(d.counters().writes, 1);
        assert!(d.read(SimTime::ZERO, d.config().blocks - 1, 2).is_err());
        assert!(d.read(SimTime::ZERO, 0, 0).is_err());
        assert!(Disk::new(DiskConfig { blocks: 0, ..DiskConfig::default() }).is_err());
    }

    #[test]
    fn deterministic() {
        let run = || {
            let mut d = Disk::new(DiskConfig::default()).unwrap();
            let mut t = SimTime::ZERO;
            for i in 0..100u64 {
                t = d.write(t, (i * 7919) % 100_000, &[i]).unwrap();
            }
            (t, d.counters())
        };
        assert_eq!(run(), run());
    }
}
