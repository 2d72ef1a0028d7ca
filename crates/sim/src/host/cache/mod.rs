//! Host-side cache managers: a disk behind a flash cache, block by block
//! (FlashTier, `003_9b28d6a0046a8156.txt` Section 3.3, the evaluation's
//! No-Cache, SSD and SSC systems, modelled on Facebook's FlashCache).
//!
//! A [`CacheManager`] takes block requests (4 KiB blocks, 64-bit tokens as
//! data) at a simulated time and returns their completion, sending commands
//! to a [`Disk`] and to a flash [`Device`]:
//!
//! - [`NoCache`]: the disk alone.
//! - [`SsdCache`] (FlashCache over a plain SSD, any FTL): the manager keeps
//!   the map from disk blocks to cache slots (logical pages of the SSD),
//!   chooses victims itself (global LRU, not FlashCache's set-associative
//!   FIFO/LRU: one set of all slots), and in write-back mode persists its
//!   metadata on the SSD synchronously with each dirty write and each clean,
//!   as FlashCache does.
//! - [`SscCache`] (FlashTier's cache manager over the solid-state cache): the
//!   device keeps the map and evicts clean blocks silently; the manager keeps
//!   only its list of dirty blocks, and uses `write-dirty`, `write-clean`,
//!   `clean` and `evict`.
//!
//! Policies shared by both ([`CacheConfig`]):
//!
//! - **Write-back** caches writes dirty; once more than `dirty_threshold_pct`
//!   percent of the cache is dirty, the oldest dirty blocks are written back
//!   to the disk (sorted, adjacent blocks in one request) and marked clean,
//!   in the background: the request that crossed the threshold does not wait
//!   for it, later requests queue behind its disk and flash work.
//!   **Write-through** writes the disk and caches the data clean; the request
//!   completes when both are done.
//! - **Selective caching.** A write that is part of a sequential run of at
//!   least `sequential_blocks` blocks (a run continues while a write starts
//!   where an earlier one of the run ended; the 32 most recent runs are
//!   followed, as FlashCache follows recent streams) goes to the disk only, and any
//!   cached copy of its blocks is dropped (FlashCache's `skip_seq_thresh`).
//!   Reads are always cached: a miss is read from the disk and then written
//!   to the cache clean.
//!
//! Every request's [`Completion`] says when it ends and how the time from its
//! arrival divides between waiting for the disk and waiting for the flash
//! along its critical path.
//!
//! Every manager keeps the data path real: a read returns the tokens the
//! block holds in the cache or on the disk, so the end-to-end integrity check
//! ([`crate::host::flashtier`]) can compare every block with the last token written.

use std::collections::{BTreeMap, HashMap};

use ftlab_ftl::Hint;
use ftlab_nand::{Payload, SimTime};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{Device, DeviceError, PageCommand, PageError, PageOp};
use crate::host::disk::{Disk, DiskError};

pub mod flashcache;
pub mod tier;

pub use flashcache::SsdCache;
pub use tier::SscCache;

/// How writes are cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Writes go to the cache, dirty, and are written back later.
    WriteBack,
    /// Writes go to the disk and to the cache, clean.
    WriteThrough,
}

impl Mode {
    /// `wb` or `wt`.
    pub fn short(self) -> &'static str {
        match self {
            Mode::WriteBack => "wb",
            Mode::WriteThrough => "wt",
        }
    }
}

/// A cache manager's policy. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Write-back or write-through. Default write-back.
    pub mode: Mode,
    /// Write-back starts cleaning above this percent of the cache dirty.
    /// Default 20 (FlashCache's `dirty_thresh_pct`).
    pub dirty_threshold_pct: u32,
    /// Blocks cleaned at once beyond what brings the dirty blocks back to the
    /// threshold. Default 256 (1 MiB).
    pub clean_batch: u64,
    /// A write in a sequential run of at least this many blocks bypasses the
    /// cache; 0 turns selective caching off. Default 16 (64 KiB).
    pub sequential_blocks: u64,
    /// Fault injection for tests: the write-back cleaner marks blocks clean
    /// without writing them to the disk, so data is lost once they leave the
    /// cache (the integrity check must catch it). Default false.
    pub lose_writebacks: bool,
    /// The SSD manager's placement: 0 (the default) replaces by one global
    /// LRU over every slot; N > 0 makes it set-associative as FlashCache
    /// (sets of N slots, 512 in FlashCache; disk block `b` goes to set
    /// `b mod sets`; each set replaces by its own LRU).
    pub set_blocks: u64,
    /// A read miss completes only once its blocks are written to the cache
    /// (FlashCache's READDISK then READFILL before the bio ends). Default
    /// false: the request completes after the disk read and the fill runs
    /// behind it.
    #[serde(skip_serializing_if = "is_false")]
    pub read_fill_sync: bool,
    /// The SSD manager in write-back writes its metadata page only for blocks
    /// that become dirty (FlashCache: "only do cache metadata update on a
    /// non-DIRTY->DIRTY transition"). Default false: after every dirty write.
    #[serde(skip_serializing_if = "is_false")]
    pub metadata_on_dirty_transition: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            mode: Mode::WriteBack,
            dirty_threshold_pct: 20,
            clean_batch: 256,
            sequential_blocks: 16,
            lose_writebacks: false,
            set_blocks: 0,
            read_fill_sync: false,
            metadata_on_dirty_transition: false,
        }
    }
}

impl CacheConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), CacheError> {
        if self.dirty_threshold_pct == 0 || self.dirty_threshold_pct > 100 {
            return Err(CacheError::Config(format!(
                "cache.dirty_threshold_pct must be in 1..=100, got {}",
                self.dirty_threshold_pct
            )));
        }
        Ok(())
    }

    /// Dirty blocks allowed before cleaning, of a cache of `capacity` blocks.
    fn dirty_limit(&self, capacity: u64) -> u64 {
        (capacity * u64::from(self.dirty_threshold_pct) / 100).max(1)
    }
}

/// Why a cache manager failed a request.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CacheError {
    /// A bad configuration.
    #[error("{0}")]
    Config(String),
    /// The disk refused a request.
    #[error("disk: {0}")]
    Disk(#[from] DiskError),
    /// The flash device failed a command.
    #[error("cache device: {0}")]
    Device(#[from] DeviceError),
    /// The solid-state cache missed a block the manager wrote dirty and never
    /// cleaned: the device lost dirty data.
    #[error("the solid-state cache lost dirty block {block} (a read of it missed)")]
    DirtyMiss { block: u64 },
}

/// When a request completes, and how the time from its arrival to then
/// divides between the disk and the flash along its critical path: the chain
/// of commands, each issued when the one before it completed, that ends
/// last. A command's share runs from its issue to its completion, queueing
/// behind other work on the same disk or flash included, so `disk_ns +
/// flash_ns` is the request's response time. Work the request does not wait
/// for (write-back cleaning, a read miss's fill by default) is on no path;
/// a later request that queues behind it pays it as disk or flash time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub done: SimTime,
    /// Time on the path spent on disk commands, ns.
    pub disk_ns: u64,
    /// Time on the path spent on flash commands, ns.
    pub flash_ns: u64,
}

impl Completion {
    /// A request arriving at `at` that has waited for nothing yet.
    pub fn at(at: u64) -> Completion {
        Completion { done: SimTime(at), disk_ns: 0, flash_ns: 0 }
    }
    /// The path continued by a disk command issued at its end that
    /// completes at `done`.
    pub fn disk(self, done: u64) -> Completion {
        let wait = done.saturating_sub(self.done.0);
        Completion { done: SimTime(self.done.0 + wait), disk_ns: self.disk_ns + wait, ..self }
    }
    /// The path continued by a flash command issued at its end that
    /// completes at `done`.
    pub fn flash(self, done: u64) -> Completion {
        let wait = done.saturating_sub(self.done.0);
        Completion { done: SimTime(self.done.0 + wait), flash_ns: self.flash_ns + wait, ..self }
    }
    /// Whichever of two paths from the same arrival ends later (`self` on a
    /// tie).
    pub fn or_later(self, other: Completion) -> Completion {
        if other.done > self.done {
            other
        } else {
            self
        }
    }
}

/// What a cache manager counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CacheStats {
    /// Blocks read by the host.
    pub read_blocks: u64,
    /// Blocks read that the cache held.
    pub hits: u64,
    /// Blocks written by the host.
    pub write_blocks: u64,
    /// Blocks written that bypassed the cache (sequential runs).
    pub bypass_blocks: u64,
    /// Dirty blocks written back to the disk.
    pub cleaned_blocks: u64,
    /// Blocks the manager evicted (the SSD manager's replacement; the SSC's
    /// silent evictions are the device's).
    pub evictions: u64,
    /// Metadata pages the manager wrote to the flash (FlashCache's
    /// write-back metadata).
    pub metadata_writes: u64,
}

impl CacheStats {
    /// What was counted since `before` (an earlier snapshot).
    pub fn since(&self, before: &CacheStats) -> CacheStats {
        CacheStats {
            read_blocks: self.read_blocks - before.read_blocks,
            hits: self.hits - before.hits,
            write_blocks: self.write_blocks - before.write_blocks,
            bypass_blocks: self.bypass_blocks - before.bypass_blocks,
            cleaned_blocks: self.cleaned_blocks - before.cleaned_blocks,
            evictions: self.evictions - before.evictions,
            metadata_writes: self.metadata_writes - before.metadata_writes,
        }
    }
}

/// A cache manager: block requests in, completions out.
pub trait CacheManager: std::fmt::Debug {
    /// Reads `len` blocks from `block`, arriving at `at`: completion and tokens.
    fn read(&mut self, at: SimTime, block: u64, len: u64) -> Result<(Completion, Vec<u64>), CacheError>;
    /// Writes `tokens` from `block`, arriving at `at`: the completion.
    fn write(&mut self, at: SimTime, block: u64, tokens: &[u64]) -> Result<Completion, CacheError>;
    /// An fsync arriving at `at`: the completion once what was written is
    /// durable (in the cache or on the disk).
    fn fsync(&mut self, at: SimTime) -> Result<Completion, CacheError>;
    /// Its counters.
    fn stats(&self) -> CacheStats;
    /// The disk.
    fn disk(&self) -> &Disk;
    /// The flash device, if any.
    fn device(&self) -> Option<&Device>;
    /// The flash device, mutably (power cuts in tests).
    fn device_mut(&mut self) -> Option<&mut Device>;
}

/// The disk alone (the paper's No-Cache system).
#[derive(Debug)]
pub struct NoCache {
    disk: Disk,
    stats: CacheStats,
}

impl NoCache {
    /// The manager over `disk`.
    pub fn new(disk: Disk) -> NoCache {
        NoCache { disk, stats: CacheStats::default() }
    }
}

impl CacheManager for NoCache {
    fn read(&mut self, at: SimTime, block: u64, len: u64) -> Result<(Completion, Vec<u64>), CacheError> {
        self.stats.read_blocks += len;
        let (done, tokens) = self.disk.read(at, block, len)?;
        Ok((Completion::at(at.0).disk(done.0), tokens))
    }
    fn write(&mut self, at: SimTime, block: u64, tokens: &[u64]) -> Result<Completion, CacheError> {
        self.stats.write_blocks += tokens.len() as u64;
        Ok(Completion::at(at.0).disk(self.disk.write(at, block, tokens)?.0))
    }
    fn fsync(&mut self, at: SimTime) -> Result<Completion, CacheError> {
        Ok(Completion::at(at.0))
    }
    fn stats(&self) -> CacheStats {
        self.stats
    }
    fn disk(&self) -> &Disk {
        &self.disk
    }
    fn device(&self) -> Option<&Device> {
        None
    }
    fn device_mut(&mut self) -> Option<&mut Device> {
        None
    }
}

/// Streams [`SequentialDetector`] follows at once.
const STREAMS: usize = 32;

/// Detects sequential write runs for selective caching, as FlashCache does:
/// it follows the [`STREAMS`] most recent streams (where each ended, how long
/// its run is), so interleaved sequential writers are each recognised.
#[derive(Debug, Clone, Default)]
struct SequentialDetector {
    /// `(end, run, last use)` per stream.
    streams: Vec<(u64, u64, u64)>,
    uses: u64,
}

impl SequentialDetector {
    /// Records a write; whether it belongs to a sequential run of at least
    /// `threshold` blocks (never with a threshold of 0).
    fn write(&mut self, block: u64, len: u64, threshold: u64) -> bool {
        self.uses += 1;
        let run = match self.streams.iter_mut().find(|s| s.0 == block) {
            Some(s) => {
                *s = (block + len, s.1 + len, self.uses);
                s.1
            }
            None => {
                let fresh = (block + len, len, self.uses);
                if self.streams.len() < STREAMS {
                    self.streams.push(fresh);
                } else if let Some(s) = self.streams.iter_mut().min_by_key(|s| s.2) {
                    *s = fresh;
                }
                len
            }
        };
        threshold > 0 && run >= threshold
    }
}

/// Dirty blocks in the order they became dirty, the write-back cleaner's
/// queue.
#[derive(Debug, Clone, Default)]
struct DirtyList {
    since: HashMap<u64, u64>,
    order: BTreeMap<u64, u64>,
    next: u64,
}

impl DirtyList {
    fn len(&self) -> u64 {
        self.since.len() as u64
    }
    fn contains(&self, block: u64) -> bool {
        self.since.contains_key(&block)
    }
    /// Marks `block` dirty (keeping its age if it already is).
    fn insert(&mut self, block: u64) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.since.entry(block) {
            e.insert(self.next);
            self.order.insert(self.next, block);
            self.next += 1;
        }
    }
    fn remove(&mut self, block: u64) -> bool {
        match self.since.remove(&block) {
            Some(t) => {
                self.order.remove(&t);
                true
            }
            None => false,
        }
    }
    /// The `n` blocks dirty the longest, removed from the list, sorted by
    /// block number.
    fn take_oldest(&mut self, n: u64) -> Vec<u64> {
        let mut out = Vec::new();
        while (out.len() as u64) < n {
            let Some((_, b)) = self.order.pop_first() else { break };
            self.since.remove(&b);
            out.push(b);
        }
        out.sort_unstable();
        out
    }
}

/// Reads logical page `lpn` of `dev` at `at` (a token store): completion and
/// token (0 for a page never written).
fn page_read(dev: &mut Device, at: u64, lpn: u64) -> Result<(u64, u64), DeviceError> {
    let c = PageCommand { lpn, at, ready: at, arrival: at, held: None, since: None, op: PageOp::Read, bytes: 0 };
    let d = dev.page(c).map_err(|e| page_error(dev, "read", at, lpn, e))?;
    match d.read {
        Some(Ok(Some(Payload::Token(t)))) => Ok((d.done, t)),
        Some(Err(source)) => Err(DeviceError::Ftl { command: "read", lpn, source }),
        _ => Ok((d.done, 0)),
    }
}

/// Writes `token` to logical page `lpn` of `dev` at `at`: the completion.
fn page_write(dev: &mut Device, at: u64, lpn: u64, token: u64) -> Result<u64, DeviceError> {
    let op = PageOp::Write { data: Payload::Token(token), hint: Hint::default(), rmw: false };
    let c = PageCommand { lpn, at, ready: at, arrival: at, held: None, since: None, op, bytes: 0 };
    dev.page(c).map(|d| d.done).map_err(|e| page_error(dev, "write", at, lpn, e))
}

fn page_error(dev: &Device, command: &'static str, at: u64, lpn: u64, e: PageError) -> DeviceError {
    match e {
        PageError::Early => DeviceError::InThePast { command, at, clock: dev.now().0 },
        PageError::Ftl(source) => DeviceError::Ftl { command, lpn, source },
    }
}

/// Writes a run of dirty blocks from `first` back to `disk` once their flash
/// reads end (`read`): the completion. With `lose` (fault injection,
/// [`CacheConfig::lose_writebacks`]) nothing reaches the disk.
fn write_run_back(
    disk: &mut Disk,
    lose: bool,
    read: Completion,
    first: u64,
    tokens: &[u64],
) -> Result<Completion, DiskError> {
    if lose {
        return Ok(read);
    }
    Ok(read.disk(disk.write(read.done, first, tokens)?.0))
}

/// Splits sorted `blocks` into runs of adjacent blocks `(first, len)`.
fn runs(blocks: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &b in blocks {
        match out.last_mut() {
            Some((first, len)) if *first + *len == b => *len += 1,
            _ => out.push((b, 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_runs() {
        let mut d = SequentialDetector::default();
        assert!(!d.write(100, 4, 16));
        assert!(!d.write(104, 8, 16));
        assert!(d.write(112, 4, 16));
        assert!(!d.write(500, 4, 16));
        // The first stream is still followed.
        assert!(d.write(116, 1, 16));
        assert!(d.write(0, 32, 16));
        assert!(!d.write(32, 32, 0));
        assert_eq!(runs(&[1, 2, 3, 7, 9, 10]), vec![(1, 3), (7, 1), (9, 2)]);
    }

    #[test]
    fn a_completion_splits_its_critical_path() {
        let start = Completion::at(100);
        // A disk read (100 -> 400), then a flash write issued at its end
        // (400 -> 450): 300 ns disk, 50 ns flash.
        let chain = start.disk(400).flash(450);
        assert_eq!((chain.done, chain.disk_ns, chain.flash_ns), (SimTime(450), 300, 50));
        // A flash read from the arrival (100 -> 180) in parallel: the chain
        // ends later, so the request's split is the chain's.
        let hit = start.flash(180);
        assert_eq!(hit.or_later(chain), chain);
        assert_eq!(chain.or_later(hit), chain);
        // A command that completed before the path's end adds nothing.
        assert_eq!(chain.disk(420), chain);
        // Ties keep the first path.
        let other = start.flash(450);
        assert_eq!(chain.or_later(other), chain);
        assert_eq!(other.or_later(chain), other);
    }
}
