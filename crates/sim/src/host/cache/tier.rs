//! FlashTier's cache manager over the solid-state cache
//! (`003_9b28d6a0046a8156.txt` Sections 2.2 and 3.3: "a version of FlashCache
//! modified to use FlashTier's caching policies").
//!
//! The device keeps the map from disk blocks to flash and evicts clean
//! blocks silently, so the manager keeps no map and chooses no victims: a
//! read asks the cache and goes to the disk on a miss (then `write-clean`s
//! the block); write-back `write-dirty`s and keeps only the list of dirty
//! blocks, which its cleaner writes back to the disk and `clean`s;
//! write-through writes the disk and `write-clean`s; a sequential write
//! bypasses the cache and `evict`s the blocks. An `fsync` is the SSC's
//! `flush` in both modes (which makes evicts and cleans durable). After a
//! power cut, [`SscCache::recover`] rebuilds the dirty list with `exists`.
//!
//! A block is marked `clean` when the cleaner has handed its data to the
//! disk (the disk applies data in submission order), before the disk write's
//! simulated completion: the cleaner runs in the background and nothing
//! waits for the clean, which touches no flash.

use ftlab_ftl::ssc::MAX_EXISTS;
use ftlab_nand::{Payload, SimTime};

use super::{
    runs, write_run_back, CacheConfig, CacheError, CacheManager, CacheStats, Completion, DirtyList, Mode,
    SequentialDetector,
};
use crate::device::{Device, DeviceError};
use crate::host::disk::Disk;
use crate::host::ssc::{is_full, SscCommand, SscReply};

/// FlashTier's manager over an SSC; see the [module documentation](self).
#[derive(Debug)]
pub struct SscCache {
    config: CacheConfig,
    disk: Disk,
    dev: Device,
    capacity: u64,
    dirty: DirtyList,
    seq: SequentialDetector,
    stats: CacheStats,
}

impl SscCache {
    /// The manager over `disk` and the solid-state cache `dev` (FTL `ssc`).
    pub fn new(config: CacheConfig, disk: Disk, mut dev: Device) -> Result<SscCache, CacheError> {
        config.validate()?;
        let state = dev.ssc_state().ok_or_else(|| {
            CacheError::Config(format!("the SSC manager needs ftl kind `ssc`, got `{}`", dev.ftl().name()))
        })?;
        Ok(SscCache {
            config,
            disk,
            dev,
            capacity: state.capacity,
            dirty: DirtyList::default(),
            seq: SequentialDetector::default(),
            stats: CacheStats::default(),
        })
    }

    /// A manager for a recovered SSC: the dirty list is rebuilt with `exists`
    /// over the disk blocks `0..blocks`, at `at`.
    pub fn recover(
        config: CacheConfig,
        disk: Disk,
        dev: Device,
        blocks: u64,
        at: SimTime,
    ) -> Result<SscCache, CacheError> {
        let mut m = SscCache::new(config, disk, dev)?;
        let mut first = 0;
        while first < blocks {
            let count = MAX_EXISTS.min(blocks - first);
            if let SscReply::Dirty(flags) = m.dev.ssc(at, SscCommand::Exists { first, count })?.reply {
                for (b, dirty) in (first..).zip(flags) {
                    if dirty {
                        m.dirty.insert(b);
                    }
                }
            }
            first += count;
        }
        Ok(m)
    }

    /// The disk and the device, for a power cut and [`SscCache::recover`].
    pub fn into_parts(self) -> (Disk, Device) {
        (self.disk, self.dev)
    }

    /// Dirty blocks the manager knows of.
    pub fn dirty_blocks(&self) -> u64 {
        self.dirty.len()
    }

    fn cmd(&mut self, at: u64, cmd: SscCommand) -> Result<(u64, SscReply), DeviceError> {
        self.dev.ssc(SimTime(at), cmd).map(|d| (d.completed.0, d.reply))
    }

    /// Writes dirty `blocks` (sorted) back to the disk from the end of `at`
    /// and cleans them: when the disk writes end.
    fn write_back(&mut self, at: Completion, blocks: &[u64]) -> Result<Completion, CacheError> {
        let mut done = at;
        let issue = at.done.0;
        for (first, len) in runs(blocks) {
            let mut tokens = Vec::with_capacity(len as usize);
            let mut read = issue;
            for b in first..first + len {
                let (r, reply) = self.cmd(issue, SscCommand::Read { block: b })?;
                read = read.max(r);
                // A dirty block is never evicted silently: a miss is the
                // device breaking its contract, never papered over.
                match reply {
                    SscReply::Read(Some(Payload::Token(t))) => tokens.push(t),
                    _ => return Err(CacheError::DirtyMiss { block: b }),
                }
            }
            let written = write_run_back(&mut self.disk, self.config.lose_writebacks, at.flash(read), first, &tokens)?;
            done = done.or_later(written);
            for b in first..first + len {
                self.cmd(issue, SscCommand::Clean { block: b })?;
                self.dirty.remove(b);
            }
        }
        self.stats.cleaned_blocks += blocks.len() as u64;
        Ok(done)
    }

    /// Starts cleaning at the end of `at` when too many blocks are dirty (or
    /// `force` blocks more); returns when the disk writes end.
    fn clean_some(&mut self, at: Completion, force: u64) -> Result<Completion, CacheError> {
        let limit = self.config.dirty_limit(self.capacity);
        let n = self.dirty.len().saturating_sub(limit) + force;
        if n == 0 {
            return Ok(at);
        }
        let blocks = self.dirty.take_oldest(n + self.config.clean_batch);
        self.write_back(at, &blocks)
    }

    /// Writes `token` dirty at the end of `at`; a cache full of dirty blocks
    /// is cleaned first.
    fn write_dirty(&mut self, at: Completion, block: u64, token: u64) -> Result<Completion, CacheError> {
        match self.cmd(at.done.0, SscCommand::WriteDirty { block, data: Payload::Token(token) }) {
            Ok((done, _)) => Ok(at.flash(done)),
            Err(e) if is_full(&e) => {
                let ready = self.clean_some(at, 1)?;
                Ok(ready
                    .flash(self.cmd(ready.done.0, SscCommand::WriteDirty { block, data: Payload::Token(token) })?.0))
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl CacheManager for SscCache {
    fn read(&mut self, at: SimTime, block: u64, len: u64) -> Result<(Completion, Vec<u64>), CacheError> {
        let start = Completion::at(at.0);
        let at = at.0;
        let mut done = start;
        let mut out = vec![0; len as usize];
        let mut misses = Vec::new();
        for (i, b) in (block..block + len).enumerate() {
            match self.cmd(at, SscCommand::Read { block: b })? {
                (r, SscReply::Read(Some(Payload::Token(t)))) => {
                    done = done.or_later(start.flash(r));
                    out[i] = t;
                    self.stats.hits += 1;
                }
                _ => misses.push(b),
            }
        }
        self.stats.read_blocks += len;
        for (first, n) in runs(&misses) {
            let (r, tokens) = self.disk.read(SimTime(at), first, n)?;
            let read = start.disk(r.0);
            done = done.or_later(read);
            for (b, t) in (first..).zip(tokens) {
                out[(b - block) as usize] = t;
                let (filled, _) = self.cmd(r.0, SscCommand::WriteClean { block: b, data: Payload::Token(t) })?;
                if self.config.read_fill_sync {
                    done = done.or_later(read.flash(filled));
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
                self.cmd(at.0, SscCommand::Evict { block: b })?;
                self.dirty.remove(b);
            }
            return Ok(Completion::at(at.0).disk(self.disk.write(at, block, tokens)?.0));
        }
        let start = Completion::at(at.0);
        let at = at.0;
        let mut done = start;
        match self.config.mode {
            Mode::WriteThrough => {
                done = start.disk(self.disk.write(SimTime(at), block, tokens)?.0);
                for (b, &t) in (block..).zip(tokens) {
                    let cached = self.cmd(at, SscCommand::WriteClean { block: b, data: Payload::Token(t) })?.0;
                    done = done.or_later(start.flash(cached));
                }
            }
            Mode::WriteBack => {
                for (b, &t) in (block..).zip(tokens) {
                    done = done.or_later(self.write_dirty(start, b, t)?);
                    self.dirty.insert(b);
                }
                self.clean_some(start, 0)?;
            }
        }
        Ok(done)
    }

    fn fsync(&mut self, at: SimTime) -> Result<Completion, CacheError> {
        Ok(Completion::at(at.0).flash(self.cmd(at.0, SscCommand::Flush)?.0))
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
