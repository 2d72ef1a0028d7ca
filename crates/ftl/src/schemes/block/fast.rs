//! FAST: fully associative sector translation (Lee et al. 2007), as
//! 004_15edfc19ad848aee.txt describes it (Sections 2 and 3.1, the vFTL of
//! Figure 1, and the FAST of Figure 7).
//!
//! Data blocks hold their logical block's pages in place (block mapping). The
//! spare blocks but two (the merge target, and one a power cut may take back: see
//! [`FastConfig::over_provisioning`]) are log blocks with page mapping:
//!
//! - one *sequential* log block: a write to the first page of a logical block
//!   starts it (merging the previous one), and the following pages of that
//!   logical block, written in order, are appended to it. It is reclaimed by a
//!   *switch merge* (it holds the whole logical block: it becomes the data block,
//!   the old data block is erased) or a *partial merge* (the rest of the pages
//!   are copied into it, then the same) when another logical block starts a
//!   sequential run or when its own logical block is written out of order;
//! - *random* log blocks, fully associative: every other write is appended to
//!   the newest of them. When they are all full and the pool is spent, the oldest
//!   is reclaimed by a *full merge* of every logical block with a valid page in
//!   it: each such logical block's newest pages are copied in place into a free
//!   block that becomes its data block, and its old data block is erased; log
//!   blocks left without valid pages are erased.
//!
//! Merges run inside the write that needs them. Maps are kept in non-volatile RAM
//! as in 004's simulation setting (no map I/O; recovery scans the OOB areas)
//! or on flash (`ftl.map_persistence = "flash"`: recovery replays the
//! checkpoint and the map log and rolls forward, see the `maplog` module); then, in
//! the `hybrid` module, a torn merge (or a sequential log block) is completed as a
//! partial merge, and every other block in use becomes a random log block, oldest
//! first.
//!
//! Faults: a log block whose program fails counts as full and the write is
//! retried (the sequential log block is then merged, the random writes go to a
//! new random log block); a block gone bad is never switched in as a data block
//! (a full merge instead), a partial merge whose log block goes bad becomes a
//! full merge, a full merge whose target goes bad starts over in another free
//! block, and a log block gone bad is retired once its pages are merged out.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::Payload;

use crate::flash::{program_failed, retry_program};
use crate::hybrid::{is_bad, Core, NONE};
use crate::maplog::{MapPersistence, Persistence};
pub use crate::schemes::block::bast::MergeCounts;
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// Configuration of [`Fast`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastConfig {
    /// Fraction of the good blocks not exported (the log blocks and the merge
    /// target). Default 0.03, the over-provisioning of 004's Figure 7. At least
    /// four blocks are spare (the sequential log block, a random log block and
    /// two kept free).
    pub over_provisioning: f64,
    /// Where the maps persist (`ftl.map_persistence`): `"nvram"` (the default:
    /// no map I/O, 004's simulation setting) or `"flash"` (a map log with
    /// checkpoints whose I/O counts as map operations, 004's Linux MTD setting;
    /// see the `maplog` module).
    pub map_persistence: MapPersistence,
}

impl Default for FastConfig {
    fn default() -> Self {
        FastConfig { over_provisioning: 0.03, map_persistence: MapPersistence::Nvram }
    }
}

impl FastConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("fast", self.over_provisioning)?;
        Ok(())
    }
}

/// Spare blocks at least: the sequential log block, a random log block and
/// [`RESERVE`].
const MIN_SPARE: u32 = 4;
/// Free blocks kept besides the log blocks: the merge target, and one for a
/// block whose erase a power cut overtook (its trimmed pages come back and it is
/// a log block again until merged).
const RESERVE: usize = 2;

impl FastConfig {
    fn persistence(&self) -> Persistence {
        Persistence { mode: self.map_persistence, page_mapped: false }
    }
}

impl FtlBuilder for FastConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        let core = Core::format_with("fast", io, self.over_provisioning, MIN_SPARE, self.persistence())?;
        let good = core.free.len();
        Ok(Box::new(Fast::with_core(core, good)))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        Ok(Box::new(Fast::recover(*self, io)?))
    }
}

/// The FAST FTL.
#[derive(Debug)]
pub struct Fast {
    core: Core,
    /// The sequential log block (`NONE`: none) and its logical block.
    seq: u32,
    seq_lb: u32,
    /// Random log blocks, oldest first; the last is written.
    random: VecDeque<u32>,
    /// Log blocks the pool holds (sequential and random).
    max_logs: usize,
    merges: MergeCounts,
}

impl Fast {
    fn with_core(core: Core, good: usize) -> Self {
        let spare = good.saturating_sub(core.lblocks as usize);
        Fast {
            core,
            seq: NONE,
            seq_lb: NONE,
            random: VecDeque::new(),
            max_logs: spare.max(MIN_SPARE as usize) - RESERVE,
            merges: MergeCounts::default(),
        }
    }

    /// Rebuilds FAST from an OOB scan.
    pub fn recover(config: FastConfig, io: &mut Io) -> Result<Self, FtlError> {
        let (core, rest) = Core::recover("fast", io, config.over_provisioning, MIN_SPARE, config.persistence())?;
        let good = core.free.len() + core.data.iter().filter(|&&d| d != NONE).count() + rest.len();
        let mut f = Self::with_core(core, good);
        f.random = rest.into_iter().map(|(_, b)| b).collect();
        // Blocks whose erase the cut overtook may hold trimmed pages again: merge
        // the oldest log blocks back into the pool.
        while f.logs() > f.max_logs && !f.random.is_empty() {
            if !f.compact(io)? {
                f.merge_oldest_random(io)?;
            }
        }
        Ok(f)
    }

    /// Moves the valid pages of the random log block with the fewest into the
    /// free pages of the newest one, if they fit, and erases it.
    fn compact(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(&back) = self.random.back() else { return Ok(false) };
        let room = self.core.ppb() - self.core.next[back as usize];
        let Some(&victim) =
            self.random.iter().filter(|&&b| b != back).min_by_key(|&&b| (self.core.valid[b as usize], b))
        else {
            return Ok(false);
        };
        if self.core.valid[victim as usize] > room {
            return Ok(false);
        }
        for lpn in self.core.valid_pages(victim) {
            match self.core.copy(io, lpn, back, Purpose::Recovery) {
                Ok(()) => {}
                // The newest log block went bad: merge instead.
                Err(e) if program_failed(&e) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        self.core.erase(io, victim, Purpose::Recovery)?;
        self.random.retain(|&b| b != victim);
        Ok(true)
    }

    /// What the last recovery read (flash mode; see the `maplog` module).
    #[cfg(test)]
    pub(crate) fn recovery(&self) -> crate::hybrid::replay::RecoveryReads {
        self.core.recovery
    }

    /// Merges done so far.
    pub fn merges(&self) -> MergeCounts {
        self.merges
    }

    fn logs(&self) -> usize {
        self.random.len() + usize::from(self.seq != NONE)
    }

    /// Erases the random log blocks left without valid pages.
    fn sweep(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let mut kept = VecDeque::with_capacity(self.random.len());
        while let Some(b) = self.random.pop_front() {
            if self.core.valid[b as usize] == 0 {
                self.core.erase(io, b, Purpose::Gc)?;
            } else {
                kept.push_back(b);
            }
        }
        self.random = kept;
        crate::hybrid::fence(io);
        if self.seq != NONE && self.core.valid[self.seq as usize] == 0 {
            self.core.erase(io, self.seq, Purpose::Gc)?;
            self.seq = NONE;
            self.seq_lb = NONE;
        }
        Ok(())
    }

    /// Reclaims the sequential log block: a switch or partial merge (a full merge
    /// if a newer copy of one of its pages is elsewhere).
    fn merge_seq(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let (l, lb) = (self.seq, self.seq_lb);
        if l == NONE {
            return Ok(());
        }
        let c = &mut self.core;
        let upto = c.next[l as usize];
        let data = c.data[lb as usize];
        if !is_bad(io, l) && c.in_place(l, lb) && !c.valid_outside_below(lb, l, upto) {
            let switch = c.last_valid(lb).is_none_or(|last| last < upto);
            match c.fill_in_place(io, l, lb, Purpose::Gc) {
                Ok(_) => {
                    c.data[lb as usize] = l;
                    if data != NONE {
                        c.erase(io, data, Purpose::Gc)?;
                    }
                    if switch {
                        self.merges.switch += 1;
                    } else {
                        self.merges.partial += 1;
                    }
                    self.seq = NONE;
                    self.seq_lb = NONE;
                    crate::hybrid::fence(io);
                    return self.sweep(io);
                }
                // The log block went bad: a full merge instead.
                Err(e) if program_failed(&e) => {}
                Err(e) => return Err(e),
            }
        }
        self.core.merge(io, lb, Purpose::Gc)?;
        self.merges.full += 1;
        self.sweep(io)
    }

    /// Full merge of the oldest random log block.
    fn merge_oldest_random(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some(&victim) = self.random.front() else { return Ok(()) };
        for lb in self.core.owners(victim) {
            self.core.merge(io, lb, Purpose::Gc)?;
            self.merges.full += 1;
        }
        self.sweep(io)
    }

    /// Reclaims log blocks while the pool is spent or only the merge target is
    /// free.
    fn make_room(&mut self, io: &mut Io) -> Result<(), FtlError> {
        while self.logs() >= self.max_logs || self.core.free.len() <= RESERVE {
            if !self.random.is_empty() {
                self.merge_oldest_random(io)?;
            } else if self.seq != NONE {
                self.merge_seq(io)?;
            } else {
                return Err(FtlError::DeviceFull("fast: no log block to reclaim".into()));
            }
        }
        Ok(())
    }

    /// The random log block to append to.
    fn random_block(&mut self, io: &mut Io) -> Result<u32, FtlError> {
        if let Some(&b) = self.random.back() {
            if self.core.next[b as usize] < self.core.ppb() {
                return Ok(b);
            }
        }
        self.make_room(io)?;
        let b = self.core.take_free()?;
        self.random.push_back(b);
        Ok(b)
    }
    /// One try at writing `lpn`: to the sequential log block (starting one at
    /// a logical block's first page), else to the newest random log block.
    fn write_once(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<(), FtlError> {
        let ppb = self.core.ppb();
        let (lb, off) = (lpn.0 / ppb, lpn.0 % ppb);
        if off == 0 {
            self.merge_seq(io)?;
            self.make_room(io)?;
            self.seq = self.core.take_free()?;
            self.seq_lb = lb;
            return self.core.write(io, self.seq, lpn.0, data, Purpose::Host);
        }
        if self.seq != NONE && self.seq_lb == lb {
            if self.core.next[self.seq as usize] == off {
                return self.core.write(io, self.seq, lpn.0, data, Purpose::Host);
            }
            self.merge_seq(io)?;
        }
        let b = self.random_block(io)?;
        self.core.write(io, b, lpn.0, data, Purpose::Host)
    }
}

impl Ftl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }
    fn logical_pages(&self) -> u32 {
        self.core.logical_pages()
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.core.read(io, lpn.0)
    }
    /// Writes `lpn` (see the module documentation); when the program fails, the
    /// log block counts as full and the write is tried again, up to
    /// [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) times.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        retry_program(self, |s| s.write_once(io, lpn, data.clone()), |_, _| {})
    }
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.core.flush_maps(io)
    }
    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.core.invalidate(lpn.0);
        Ok(())
    }
    fn ram_bytes(&self) -> u64 {
        // The block map and a page map of every log block.
        self.core.block_map_bytes() + self.max_logs as u64 * u64::from(self.core.ppb()) * 4
    }
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.core.check(flash)?;
        if self.logs() > self.max_logs {
            return Err(format!("fast: {} log blocks, the pool holds {}", self.logs(), self.max_logs));
        }
        for &b in self.random.iter().chain((self.seq != NONE).then_some(&self.seq)) {
            if self.core.data.contains(&b) {
                return Err(format!("fast: log block {b} is also a data block"));
            }
        }
        if self.seq != NONE && !self.core.in_place(self.seq, self.seq_lb) {
            return Err(format!("fast: sequential log block {} is not in place", self.seq));
        }
        Ok(())
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "fast",
    summary: "FAST (Lee 2007, via 004): a sequential and fully associative random log blocks, three merges",
    paper: "004 Sections 2-3.1 (Lee et al. 2007)",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("fast", FastConfig::default(), p, FastConfig::validate),
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ftlab_nand::{Geometry, SimTime};

    fn geometry() -> Geometry {
        crate::testing::one_die(16, 4)
    }

    fn write(f: &mut Fast, fl: &mut Flash, t: &mut u64, lpn: u32) {
        *t += 10_000_000;
        let mut io = fl.io(SimTime(*t));
        f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + *t), &Hint::default()).unwrap();
    }

    #[test]
    fn sequential_runs_switch_random_writes_share_log_blocks() {
        let mut fl = crate::testing::flash(geometry(), 1);
        let core = Core::format("fast", &fl.io(SimTime::ZERO), 0.3, MIN_SPARE).unwrap();
        let mut f = Fast::with_core(core, 16);
        assert_eq!(f.max_logs, 3);
        let mut t = 0;
        // Two sequential runs: the second one's first page switches the first.
        for lpn in 0..8 {
            write(&mut f, &mut fl, &mut t, lpn);
        }
        assert_eq!(f.merges(), MergeCounts { switch: 1, partial: 0, full: 0 });
        // Half a run, then a run elsewhere: a partial merge copies pages 2 and 3
        // from the data block into the sequential log block.
        write(&mut f, &mut fl, &mut t, 0);
        write(&mut f, &mut fl, &mut t, 1);
        write(&mut f, &mut fl, &mut t, 8);
        assert_eq!(f.merges(), MergeCounts { switch: 2, partial: 1, full: 0 });
        assert_eq!(fl.counters().programs.get(Purpose::Gc), 2);
        // Random writes to three logical blocks share one random log block.
        for lpn in [5, 10, 2, 6] {
            write(&mut f, &mut fl, &mut t, lpn);
        }
        assert_eq!(f.random.len(), 1);
        assert_eq!(f.core.owners(f.random[0]), vec![1, 2, 0]);
        // Filling the pool forces a full merge of every logical block in the
        // oldest random log block.
        for lpn in [3, 7, 9, 11, 3, 7, 9, 11] {
            write(&mut f, &mut fl, &mut t, lpn);
        }
        assert_eq!((f.random.len(), f.merges().full), (3, 0));
        write(&mut f, &mut fl, &mut t, 3);
        assert_eq!(f.merges().full, 3, "{:?}", f.merges());
        // The three logical blocks were all the data: every random log block was
        // merged out and erased; the write went to a new one.
        assert_eq!(f.random.len(), 1);
        assert_eq!(f.core.valid_pages(f.random[0]), vec![3]);
        f.check_invariants(&fl).unwrap();
        for lpn in 0..12 {
            let mut io = fl.io(SimTime(t + 1_000_000_000));
            assert!(f.read(&mut io, Lpn(lpn)).unwrap().is_some(), "lpn {lpn}");
        }
    }
}
