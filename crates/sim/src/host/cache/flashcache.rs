//! FlashCache over a plain SSD (the SSD system of FlashTier's evaluation,
//! `003_9b28d6a0046a8156.txt` Section 3.3: "unmodified FlashCache software in
//! either write-through (WT) or write-back (WB) mode running on the optimized
//! baseline SSD").
//!
//! The SSD's logical pages are cache slots. The manager maps disk blocks to
//! slots, replaces the least recently used block when no slot is free
//! (writing it back first if dirty; the SSD is never told that the slot's old
//! data is dead, so its garbage collection keeps copying it until the slot is
//! overwritten): over all slots by default, or, with
//! [`CacheConfig::set_blocks`] N, within the block's set as FlashCache does
//! (set-associative: `slots / N` sets of N consecutive slots, disk block `b`
//! in set `b mod sets`, the slots after the last whole set unused; FlashCache
//! also keeps runs of consecutive disk blocks in one set, which ftlab does
//! not). In write-back mode it keeps its metadata on the SSD: one
//! 16-byte record per slot, 256 to a 4 KiB metadata page after the slots,
//! written synchronously after the data of a dirty write (a request completes
//! once its data and metadata pages are written) and after a write-back marks
//! blocks clean. That is FlashCache's persistence of dirty blocks, the "extra
//! synchronous metadata writes from host to SSD" of the paper's varmail
//! discussion. Write-through keeps no metadata on the flash (its cache is
//! not persistent).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use ftlab_nand::SimTime;

use super::{
    page_read, page_write, runs, write_run_back, CacheConfig, CacheError, CacheManager, CacheStats, Completion,
    DirtyList, Mode, SequentialDetector,
};
use crate::device::Device;
use crate::host::disk::Disk;

/// Slot records per metadata page (16 bytes each in 4 KiB).
const RECORDS_PER_PAGE: u64 = 256;

/// A cached block.
#[derive(Debug, Clone, Copy)]
struct Entry {
    slot: u64,
    /// Its place in the LRU order.
    stamp: u64,
}

/// FlashCache over an SSD; see the [module documentation](self).
#[derive(Debug)]
pub struct SsdCache {
    config: CacheConfig,
    disk: Disk,
    dev: Device,
    /// Data slots; metadata pages follow them.
    slots: u64,
    map: HashMap<u64, Entry>,
    /// Per set (one set for global LRU): stamp -> block, oldest first.
    lru: Vec<BTreeMap<u64, u64>>,
    next_stamp: u64,
    /// Per set: its free slots.
    free: Vec<Vec<u64>>,
    dirty: DirtyList,
    seq: SequentialDetector,
    stats: CacheStats,
    meta_token: u64,
}

impl SsdCache {
    /// The manager over `disk` and the SSD `dev` (any FTL, token store).
    pub fn new(config: CacheConfig, disk: Disk, dev: Device) -> Result<SsdCache, CacheError> {
        config.validate()?;
        let pages = dev.logical_pages();
        // Write-back keeps ceil(slots / 256) metadata pages after the slots.
        let slots = match config.mode {
            Mode::WriteBack => pages * RECORDS_PER_PAGE / (RECORDS_PER_PAGE + 1),
            Mode::WriteThrough => pages,
        };
        if slots == 0 {
            return Err(CacheError::Config(format!("the SSD's {pages} logical pages leave no cache slot")));
        }
        let per_set = if config.set_blocks == 0 { slots } else { config.set_blocks };
        if per_set > slots {
            return Err(CacheError::Config(format!(
                "cache.set_blocks = {per_set} is more than the SSD's {slots} cache slots: use fewer blocks per set, \
                 or 0 for one global LRU"
            )));
        }
        let sets = slots / per_set;
        Ok(SsdCache {
            config,
            disk,
            dev,
            slots,
            map: HashMap::new(),
            lru: vec![BTreeMap::new(); sets as usize],
            next_stamp: 0,
            free: (0..sets).map(|s| (s * per_set..(s + 1) * per_set).rev().collect()).collect(),
            dirty: DirtyList::default(),
            seq: SequentialDetector::default(),
            stats: CacheStats::default(),
            meta_token: 0,
        })
    }

    /// Cache slots (blocks the cache holds at most).
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The set of disk block `block`.
    fn set_of(&self, block: u64) -> usize {
        (block % self.lru.len() as u64) as usize
    }

    fn touch(&mut self, block: u64) {
        let set = self.set_of(block);
        if let Some(e) = self.map.get_mut(&block) {
            self.lru[set].remove(&e.stamp);
            e.stamp = self.next_stamp;
            self.lru[set].insert(self.next_stamp, block);
            self.next_stamp += 1;
        }
    }

    /// Drops `block` from the cache (its slot becomes free).
    fn drop_block(&mut self, block: u64) {
        let set = self.set_of(block);
        if let Some(e) = self.map.remove(&block) {
            self.lru[set].remove(&e.stamp);
            self.dirty.remove(block);
            self.free[set].push(e.slot);
        }
    }

    /// The slot of `block`, allocating one at the end of `at` (evicting the
    /// least recently used block, written back first if dirty): the slot and
    /// when it is free.
    fn slot_for(&mut self, at: Completion, block: u64) -> Result<(u64, Completion), CacheError> {
        if let Some(e) = self.map.get(&block) {
            let slot = e.slot;
            self.touch(block);
            return Ok((slot, at));
        }
        let mut ready = at;
        let set = self.set_of(block);
        if self.free[set].is_empty() {
            let Some((_, victim)) = self.lru[set].first_key_value().map(|(&s, &b)| (s, b)) else {
                return Err(CacheError::Config("cache of no slots".into()));
            };
            if self.dirty.contains(victim) {
                ready = self.write_back(at, &[victim])?;
            }
            self.drop_block(victim);
            self.stats.evictions += 1;
        }
        let slot = self.free[set].pop().unwrap_or_default();
        self.map.insert(block, Entry { slot, stamp: self.next_stamp });
        self.lru[set].insert(self.next_stamp, block);
        self.next_stamp += 1;
        Ok((slot, ready))
    }

    /// Writes the metadata pages of `slots` at the end of `at`: the completion.
    fn write_metadata(&mut self, at: Completion, slots: impl Iterator<Item = u64>) -> Result<Completion, CacheError> {
        let pages: BTreeSet<u64> = slots.map(|s| self.slots + s / RECORDS_PER_PAGE).collect();
        let mut done = at.done.0;
        for p in pages {
            self.meta_token += 1;
            done = done.max(page_write(&mut self.dev, at.done.0, p, self.meta_token)?);
            self.stats.metadata_writes += 1;
        }
        Ok(at.flash(done))
    }

    /// Writes dirty `blocks` (sorted, all cached) back to the disk from the
    /// end of `at` and marks them clean (metadata after the disk writes): the
    /// completion.
    fn write_back(&mut self, at: Completion, blocks: &[u64]) -> Result<Completion, CacheError> {
        let mut done = at;
        for (first, len) in runs(blocks) {
            let mut tokens = Vec::with_capacity(len as usize);
            let mut read = at.done.0;
            for b in first..first + len {
                let slot = self.map.get(&b).map(|e| e.slot).unwrap_or_default();
                let (r, t) = page_read(&mut self.dev, at.done.0, slot)?;
                read = read.max(r);
                tokens.push(t);
            }
            let written = write_run_back(&mut self.disk, self.config.lose_writebacks, at.flash(read), first, &tokens)?;
            done = done.or_later(written);
        }
        for &b in blocks {
            self.dirty.remove(b);
        }
        self.stats.cleaned_blocks += blocks.len() as u64;
        let slots: Vec<u64> = blocks.iter().filter_map(|b| self.map.get(b).map(|e| e.slot)).collect();
        self.write_metadata(done, slots.into_iter())
    }

    /// Starts cleaning at `at` when too many blocks are dirty; nothing waits
    /// for it.
    fn maybe_clean(&mut self, at: u64) -> Result<(), CacheError> {
        let limit = self.config.dirty_limit(self.slots);
        if self.dirty.len() > limit {
            let n = self.dirty.len() - limit + self.config.clean_batch;
            let blocks = self.dirty.take_oldest(n);
            self.write_back(Completion::at(at), &blocks)?;
        }
        Ok(())
    }
}

impl CacheManager for SsdCache {
    fn read(&mut self, at: SimTime, block: u64, len: u64) -> Result<(Completion, Vec<u64>), CacheError> {
        let start = Completion::at(at.0);
        let at = at.0;
        let mut done = start;
        let mut out = vec![0; len as usize];
        let mut misses = Vec::new();
        for (i, b) in (block..block + len).enumerate() {
            if let Some(e) = self.map.get(&b) {
                let (r, t) = page_read(&mut self.dev, at, e.slot)?;
                self.touch(b);
                done = done.or_later(start.flash(r));
                out[i] = t;
                self.stats.hits += 1;
            } else {
                misses.push(b);
            }
        }
        self.stats.read_blocks += len;
        for (first, n) in runs(&misses) {
            let (r, tokens) = self.disk.read(SimTime(at), first, n)?;
            let read = start.disk(r.0);
            done = done.or_later(read);
            // Fill the cache clean after the disk read; the request does not wait.
            for (b, t) in (first..).zip(tokens) {
                out[(b - block) as usize] = t;
                let (slot, ready) = self.slot_for(read, b)?;
                let filled = ready.flash(page_write(&mut self.dev, ready.done.0, slot, t)?);
                if self.config.read_fill_sync {
                    done = done.or_later(filled);
                }
            }
        }
        Ok((done, out))
    }

    fn write(&mut self, at: SimTime, block: u64, tokens: &[u64]) -> Result<Completion, CacheError> {
        let len = tokens.len() as u64;
        self.stats.write_blocks += len;
        if self.seq.write(block, len, self.config.sequential_blocks) {
            self.stats.bypass_blocks += len;
            for b in block..block + len {
                self.drop_block(b);
            }
            return Ok(Completion::at(at.0).disk(self.disk.write(at, block, tokens)?.0));
        }
        let start = Completion::at(at.0);
        let at = at.0;
        let mut done = start;
        if self.config.mode == Mode::WriteThrough {
            done = start.disk(self.disk.write(SimTime(at), block, tokens)?.0);
        }
        let mut slots = Vec::new();
        for (b, &t) in (block..).zip(tokens) {
            let (slot, ready) = self.slot_for(start, b)?;
            done = done.or_later(ready.flash(page_write(&mut self.dev, ready.done.0, slot, t)?));
            if self.config.mode == Mode::WriteBack {
                if !(self.config.metadata_on_dirty_transition && self.dirty.contains(b)) {
                    slots.push(slot);
                }
                self.dirty.insert(b);
            }
        }
        if self.config.mode == Mode::WriteBack && !slots.is_empty() {
            done = self.write_metadata(done, slots.into_iter())?;
            self.maybe_clean(at)?;
        }
        Ok(done)
    }

    fn fsync(&mut self, at: SimTime) -> Result<Completion, CacheError> {
        let start = Completion::at(at.0);
        match self.config.mode {
            Mode::WriteBack => Ok(start.flash(self.dev.flush(at.0)?)),
            Mode::WriteThrough => Ok(start),
        }
    }

    fn stats(&self) -> CacheStats {
        self.stats
    }
    fn disk(&self) -> &Disk {
        &self.disk
    }
    fn device(&self) -> Option<&Device> {
        Some(&self.dev)
    }
    fn device_mut(&mut self) -> Option<&mut Device> {
        Some(&mut self.dev)
    }
}
