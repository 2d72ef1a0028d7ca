//! A RocksDB-like log-structured merge tree on a block device (`kind = "lsm"`).
//!
//! What it models, one user operation at a time:
//!
//! - **Puts** go to a write-ahead log: one page appended at the log's head in a
//!   circular region of `wal_pages` at the start of the space, recycled (overwritten
//!   in place, never trimmed) once the memtable it logged is flushed, as RocksDB's
//!   `recycle_log_file_num`.
//! - **Memtable flush**: every `sst_pages` puts the memtable is written as one SST
//!   file of `sst_pages` pages to L0 (so the memtable is as large as a file).
//! - **Leveled compaction**: when L0 holds `l0_files` files they are merged with all
//!   of L1 (L0 files overlap the whole key range) into L1. Level `Li` (i >= 1) has a
//!   target of `base_files x size_ratio^(i-1)` files; while a level exceeds its
//!   target, the deepest such level is compacted: its next file in key order (a
//!   round-robin cursor in key space, RocksDB's `kRoundRobin`) is merged with the
//!   files of `Li+1` that overlap it, and the output replaces them in `Li+1`. The
//!   files of a level split the key space evenly, so a file of `Li` overlaps about
//!   `|Li+1| / |Li| + 1` files below. A compaction reads its input files, writes its
//!   output files, then deletes its inputs (trims). Intermediate levels keep every
//!   version (output = input files); the deepest level holds the data set and is
//!   capped at its target: once full, a compaction into it writes no more files than
//!   it removes from it (the newer keys replace older versions), so the tree stops
//!   growing.
//! - **Files** are extents of `sst_pages` pages in slots after the log; a new file
//!   takes the lowest free slot (first fit; all files have one size, so the space
//!   never fragments).
//! - **Point reads** (`read_fraction` of the operations): one page of an SST file
//!   drawn uniformly over the live files, so a level is read in proportion to its
//!   size and deeper levels are read more often, as in a real tree whose lookups
//!   mostly end in the largest level. Before the first flush a read is served by
//!   the memtable and issues nothing.
//!
//! Requests of a flush or compaction arrive with the operation that triggered them.
//! Each request's [`HostRequest::device`] is its **lifetime label**: 0 for the log,
//! 1 for L0, `i + 1` for `Li` (labels `0..=levels + 1`). The simulator passes it on
//! as the write's stream (`Hint::stream`), the placement handle of an FDP device,
//! which then needs `levels + 2` handles (`ftl.handles`, 8 by default).
//!
//! The random draws are the point reads and the arrival gaps: without either,
//! the stream is the same for every seed.
//!
//! The space must hold the tree at its fullest (log, every level at its bound, and
//! a compaction's output written before its inputs are deleted); `build` refuses a
//! smaller one and says which fields to shrink.

use std::collections::{BTreeSet, VecDeque};

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::dist::{Arrival, Clock};
use super::invalid;
use crate::{HostRequest, Op, TraceError};

/// Parameters of [`GeneratorSpec::Lsm`](super::GeneratorSpec::Lsm). Every field has
/// the default written on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LsmSpec {
    /// User operations (puts and point reads), > 0 (default 200,000).
    pub operations: u64,
    /// Probability that an operation is a point read (default 0).
    pub read_fraction: f64,
    /// Pages of an SST file and of the memtable, > 0 (default 64).
    pub sst_pages: u64,
    /// Pages of the circular write-ahead log, >= `sst_pages` (default 128).
    pub wal_pages: u64,
    /// L0 files that trigger an L0 -> L1 compaction, > 0 (default 4).
    pub l0_files: u64,
    /// Target of L1 in files, > 0 (default: `l0_files`, RocksDB's advice of an L1
    /// as large as L0).
    pub base_files: Option<u64>,
    /// Growth of each level's target over the one above, >= 2 (default 10).
    pub size_ratio: u64,
    /// Levels below L0 (L1 to L`levels`), 1 to 16 (default 3).
    pub levels: u32,
    /// Arrival process of the user operations (default closed loop).
    pub arrival: Arrival,
}

impl Default for LsmSpec {
    fn default() -> Self {
        LsmSpec {
            operations: 200_000,
            read_fraction: 0.0,
            sst_pages: 64,
            wal_pages: 128,
            l0_files: 4,
            base_files: None,
            size_ratio: 10,
            levels: 3,
            arrival: Arrival::Closed,
        }
    }
}

/// Most levels below L0: labels stay small and targets far from overflow.
const MAX_LEVELS: u32 = 16;

fn lsm_invalid<T>(m: String) -> Result<T, TraceError> {
    invalid(format!("lsm {m}"))
}

impl LsmSpec {
    /// Checks the parameters that do not depend on the space.
    pub fn validate(&self) -> Result<(), TraceError> {
        if self.operations == 0 {
            return lsm_invalid("operations must be > 0, got 0".into());
        }
        super::check_fraction("lsm", "read_fraction", self.read_fraction, false)?;
        for (name, v) in [("sst_pages", self.sst_pages), ("l0_files", self.l0_files)] {
            if v == 0 {
                return lsm_invalid(format!("{name} must be > 0, got 0"));
            }
        }
        if self.base_files == Some(0) {
            return lsm_invalid("base_files must be > 0, got 0".into());
        }
        if self.wal_pages < self.sst_pages {
            return lsm_invalid(format!(
                "wal_pages ({}) must be at least sst_pages ({}): the log holds one memtable",
                self.wal_pages, self.sst_pages
            ));
        }
        if self.size_ratio < 2 {
            return lsm_invalid(format!("size_ratio must be >= 2, got {}", self.size_ratio));
        }
        if !(1..=MAX_LEVELS).contains(&self.levels) {
            return lsm_invalid(format!("levels must be 1 to {MAX_LEVELS}, got {}", self.levels));
        }
        self.targets()?;
        self.arrival.validate()
    }

    /// Target of L1..=L`levels` in files.
    fn targets(&self) -> Result<Vec<u64>, TraceError> {
        let mut t = self.base_files.unwrap_or(self.l0_files);
        let mut out = vec![t];
        for _ in 1..self.levels {
            t = t.checked_mul(self.size_ratio).ok_or_else(|| {
                TraceError::InvalidSpec(format!(
                    "lsm: {} levels with size_ratio {} overflow the file count; give fewer levels",
                    self.levels, self.size_ratio
                ))
            })?;
            out.push(t);
        }
        Ok(out)
    }

    /// The most SST files alive at once: L0 full, L1 at its target plus one L0
    /// compaction's files, each intermediate level one file over its target (the
    /// deepest overfull level is compacted first), the deepest at its target, plus
    /// the outputs of the largest compaction (all of L0 and L1, or one file and the
    /// at most `size_ratio + 1` files it overlaps below: `|Li+1| <= size_ratio x
    /// target` and `|Li| > target` when `Li` is compacted).
    pub(crate) fn peak_files(&self) -> Result<u64, TraceError> {
        let t = self.targets()?;
        let l0 = self.l0_files;
        let last = t.len() - 1;
        let mut sum = Some(l0);
        for (i, &ti) in t.iter().enumerate() {
            let slack = if i == 0 && last > 0 { l0 } else { u64::from(i > 0 && i < last) };
            sum = sum.and_then(|s| s.checked_add(ti)).and_then(|s| s.checked_add(slack));
        }
        let scratch = (l0 + t[0]).max(2 + self.size_ratio);
        sum.and_then(|s| s.checked_add(scratch))
            .ok_or_else(|| TraceError::InvalidSpec("lsm: the tree's size overflows; give fewer levels".into()))
    }

    /// The generator over `pages` pages of `page_size` bytes.
    pub(crate) fn build(&self, pages: u64, page_size: u64, rng: ChaCha8Rng) -> Result<Lsm, TraceError> {
        let peak = self.peak_files()?;
        let need = peak.checked_mul(self.sst_pages).and_then(|p| p.checked_add(self.wal_pages));
        if need.is_none_or(|need| need > pages) {
            let need = need.map_or("more than 2^64".into(), |n| n.to_string());
            return lsm_invalid(format!(
                "tree needs up to {need} pages (wal_pages {} + {peak} SST files of sst_pages {}), the space has \
                 {pages}: give fewer levels, a smaller size_ratio, base_files, l0_files or sst_pages, or a larger space",
                self.wal_pages, self.sst_pages
            ));
        }
        if self.sst_pages * page_size > u64::from(u32::MAX) {
            return lsm_invalid(format!(
                "sst_pages ({}) of {page_size} bytes exceeds the 4 GiB request limit; give smaller files",
                self.sst_pages
            ));
        }
        let targets = self.targets()?.into_iter().map(|t| usize::try_from(t).unwrap_or(usize::MAX)).collect();
        Ok(Lsm {
            rng,
            clock: Clock::new(self.arrival),
            page_size,
            sst_pages: self.sst_pages,
            wal_pages: self.wal_pages,
            slots: (pages - self.wal_pages) / self.sst_pages,
            l0_files: usize::try_from(self.l0_files).unwrap_or(usize::MAX),
            targets,
            levels: vec![Vec::new(); self.levels as usize + 1],
            cursors: vec![0; self.levels as usize + 1],
            free: BTreeSet::new(),
            next_slot: 0,
            remaining: self.operations,
            read_fraction: self.read_fraction,
            wal_head: 0,
            memtable: 0,
            pending: VecDeque::new(),
            now: 0,
        })
    }
}

/// The stream of [`LsmSpec`]. `levels[0]` is L0 (oldest first), `levels[i]` is
/// `Li` in key order; a file is its slot number.
#[derive(Debug, Clone)]
pub(crate) struct Lsm {
    rng: ChaCha8Rng,
    clock: Clock,
    page_size: u64,
    sst_pages: u64,
    wal_pages: u64,
    slots: u64,
    l0_files: usize,
    /// Targets of L1.. in files (`targets[i - 1]` for `Li`).
    targets: Vec<usize>,
    levels: Vec<Vec<u64>>,
    /// Per level, the key where its next compaction starts, in units of
    /// 2^-32 of the key space.
    cursors: Vec<u64>,
    free: BTreeSet<u64>,
    next_slot: u64,
    remaining: u64,
    read_fraction: f64,
    wal_head: u64,
    memtable: u64,
    /// (op, first page, pages, label) still to issue.
    pending: VecDeque<super::Labelled>,
    /// Arrival of the current operation.
    now: u64,
}

/// Bits of the key space's cursor positions.
const KEY_BITS: u32 = 32;

/// The label of a file of level `i`.
fn label(level: usize) -> u32 {
    u32::try_from(level).unwrap_or(u32::MAX).saturating_add(1)
}

impl Lsm {
    fn ix(x: u64) -> usize {
        usize::try_from(x).unwrap_or(usize::MAX)
    }

    fn start(&self, slot: u64) -> u64 {
        self.wal_pages + slot * self.sst_pages
    }

    /// The lowest free slot. The space was checked to hold the tree at its peak,
    /// so one is always free.
    fn alloc(&mut self) -> u64 {
        if let Some(s) = self.free.pop_first() {
            return s;
        }
        debug_assert!(self.next_slot < self.slots, "lsm: the peak bound was exceeded");
        self.next_slot += 1;
        self.next_slot - 1
    }

    fn file_io(&mut self, op: Op, slot: u64, level: usize) {
        self.pending.push_back((op, self.start(slot), self.sst_pages, label(level)));
    }

    /// Reads `inputs` (each with its level), writes `outputs` new files to
    /// `level`, then deletes the inputs; returns the new files.
    fn merge(&mut self, inputs: &[(u64, usize)], outputs: usize, level: usize) -> Vec<u64> {
        for &(s, l) in inputs {
            self.file_io(Op::Read, s, l);
        }
        let new: Vec<u64> = (0..outputs).map(|_| self.alloc()).collect();
        for &s in &new {
            self.file_io(Op::Write, s, level);
        }
        for &(s, l) in inputs {
            self.file_io(Op::Trim, s, l);
            self.free.insert(s);
        }
        new
    }

    fn is_last(&self, level: usize) -> bool {
        level + 1 == self.levels.len()
    }

    /// Output files of a merge of `inputs` into `level`, where `kept` files of
    /// `level` stay untouched: all of them, except that the deepest level stays
    /// within its target.
    fn outputs(&self, level: usize, inputs: usize, kept: usize) -> usize {
        if self.is_last(level) {
            inputs.min(self.targets[level - 1].saturating_sub(kept))
        } else {
            inputs
        }
    }

    fn compact_l0(&mut self) {
        let l0 = std::mem::take(&mut self.levels[0]);
        let l1 = std::mem::take(&mut self.levels[1]);
        let inputs: Vec<(u64, usize)> = l0.iter().map(|&s| (s, 0)).chain(l1.iter().map(|&s| (s, 1))).collect();
        let out = self.outputs(1, inputs.len(), 0);
        self.levels[1] = self.merge(&inputs, out, 1);
    }

    /// Merges the file of `Li` (i >= 1) at its cursor into the files of `Li+1`
    /// it overlaps, and moves the cursor past it.
    fn compact(&mut self, i: usize) {
        let (upper, lower) = (self.levels[i].len() as u64, self.levels[i + 1].len() as u64);
        // File j of a level of m files holds the keys [j/m, (j + 1)/m).
        let idx = u64::try_from((u128::from(self.cursors[i]) * u128::from(upper)) >> KEY_BITS).unwrap_or(0);
        let at = idx * lower / upper;
        let k = ((idx + 1) * lower).div_ceil(upper) - at;
        self.cursors[i] = if idx + 1 == upper { 0 } else { ((idx + 1) << KEY_BITS).div_ceil(upper) };
        let (idx, at, k) = (Self::ix(idx), Self::ix(at), Self::ix(k));
        let file = self.levels[i].remove(idx);
        let inputs: Vec<(u64, usize)> =
            std::iter::once((file, i)).chain(self.levels[i + 1][at..at + k].iter().map(|&s| (s, i + 1))).collect();
        let out = self.outputs(i + 1, inputs.len(), self.levels[i + 1].len() - k);
        let new = self.merge(&inputs, out, i + 1);
        self.levels[i + 1].splice(at..at + k, new);
    }

    fn flush(&mut self) {
        let slot = self.alloc();
        self.file_io(Op::Write, slot, 0);
        self.levels[0].push(slot);
        if self.levels[0].len() < self.l0_files {
            return;
        }
        self.compact_l0();
        let last = self.levels.len() - 1;
        while let Some(i) = (1..last).rev().find(|&i| self.levels[i].len() > self.targets[i - 1]) {
            self.compact(i);
        }
    }

    fn operation(&mut self) {
        if self.rng.gen::<f64>() < self.read_fraction {
            let live: usize = self.levels.iter().map(Vec::len).sum();
            if live == 0 {
                return;
            }
            let mut j = usize::try_from(self.rng.gen_range(0..live as u64)).unwrap_or(0);
            let page = self.rng.gen_range(0..self.sst_pages);
            for (l, files) in self.levels.iter().enumerate() {
                if j < files.len() {
                    self.pending.push_back((Op::Read, self.start(files[j]) + page, 1, label(l)));
                    return;
                }
                j -= files.len();
            }
            return;
        }
        self.pending.push_back((Op::Write, self.wal_head, 1, 0));
        self.wal_head = (self.wal_head + 1) % self.wal_pages;
        self.memtable += 1;
        if self.memtable == self.sst_pages {
            self.memtable = 0;
            self.flush();
        }
    }
}

impl Iterator for Lsm {
    type Item = HostRequest;

    fn next(&mut self) -> Option<HostRequest> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Some(super::labelled_request(r, self.now, self.page_size));
            }
            if self.remaining == 0 {
                return None;
            }
            self.remaining -= 1;
            self.now = self.clock.tick(&mut self.rng);
            self.operation();
        }
    }
}
