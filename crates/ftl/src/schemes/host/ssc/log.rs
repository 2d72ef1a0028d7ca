//! The SSC's map log and checkpoints (`consistency = "log"`), after the
//! OpenSSD prototype of 003_9b28d6a0046a8156.txt (Section 3.3.2, "Consistency
//! and durability"): "The FTL maintains a log of changes to the page map in
//! SRAM. After each erase block fills, the FTL writes out the metadata to its
//! last page"; checkpoints of the whole map are written on flush and when
//! idle, and "the FTL restores the page map from the checkpoint and log after a
//! restart".
//!
//! # What ftlab does
//!
//! - **The log.** Every map change (a write maps a block to a page, dirty or
//!   clean; a clean; an evict; a garbage-collection copy; a silent eviction)
//!   appends an 8-byte record to a buffer in RAM. The buffer is written out as
//!   a *log page* when it fills a page, once per `pages_per_block - 1` data
//!   pages programmed (the prototype's one log page per erase block), before
//!   every garbage-collection erase, on flush and before a checkpoint.
//! - **Where.** Log and checkpoint pages go to their own blocks (a second
//!   allocator stream, on one die at a time), not to the last page of each
//!   data block, and not to a fixed area: a metadata block is erased once a
//!   newer complete checkpoint makes everything in it stale (the paper's "moving
//!   the checkpoints around"). Recovery tells them apart by the OOB page kind
//!   ([`PageKind::Meta`]); data pages carry no disk block in their OOB
//!   (logical page 0), so recovery cannot depend on one.
//! - **Checkpoints.** The whole map (every cached block: disk block, page,
//!   dirty) in as many pages as it takes, on flush (when the map changed since
//!   the last one), when the device is idle ([`crate::Ftl::background`]) with at
//!   least one log page since the last one, and after
//!   [`super::SscConfig::log_pages_per_checkpoint`] log pages.
//! - **Order.** Metadata programs are serialized (each starts after the
//!   previous one finished), and each starts after every data program issued
//!   before it finished, so a durable record never names a page that is not; a
//!   garbage-collection erase starts after every log page before it finished,
//!   and the log holds a record moving or dropping every page of the victim, so
//!   the durable map never names an erased page; old metadata blocks are erased
//!   only after the checkpoint that makes them stale finished.
//! - **Recovery.** One OOB read per written block (its first readable page
//!   says metadata or data), then every page of the metadata blocks; no data
//!   page is read. The latest checkpoint whose pages are all readable, then
//!   the log pages after it, in sequence order, each naming the one before it
//!   (a log page that does not follow on, e.g. left after a torn one, is
//!   skipped). Every mapped page must be a written page of a data block.
//!
//! The contract differs from OOB logging's: writes, evicts and cleans are
//! durable once a flush after them completes (the prototype's: "this approach
//! does not provide the immediate durability of OOB writes"); every dirty block
//! acknowledged before the last completed flush is still there and dirty
//! (unless a later command took effect); a clean block may be gone, never
//! wrong.
//!
//! The log in RAM and its page format are `super::metalog`'s.

use ftlab_nand::{BlockId, DieId, NandError, PageKind, Ppa, SimTime};

use super::core::Ssc;
use super::metalog::{checkpoint_pages, record, DIRTY_BIT, MAGIC, META_STREAM};
use super::table::{flag, NONE};
use super::SscConfig;
use crate::alloc::Allocation;
use crate::maplog::page::{self as meta, MetaPage};
use crate::{FtlError, Io, Purpose};

impl Ssc {
    /// Appends the record of block `key` now at page `ppa` (dirty or clean).
    pub(super) fn log_map(&mut self, key: u32, ppa: u32, dirty: bool) {
        if let Some(l) = self.log.as_mut() {
            l.buf.push(record(key, ppa, dirty));
            l.changed = true;
        }
    }

    /// Appends the record of block `key` evicted.
    pub(super) fn log_evict(&mut self, key: u32) {
        self.log_map(key, NONE, false);
    }

    /// The next metadata page, after retiring `bad` (a metadata block whose
    /// program failed: it stays listed, is never erased, and its pages are
    /// stale once a newer checkpoint is complete). The page's block is stamped
    /// with `seq`.
    fn meta_place(&mut self, bad: Option<BlockId>, seq: u64) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            self.alloc.retire(b);
        }
        let Some(l) = self.log.as_mut() else {
            return Err(FtlError::Recovery("ssc: no map log in OOB-logging mode".into()));
        };
        let mut die = l.die;
        if self.alloc.open_room(META_STREAM, die) == 0 {
            // A new metadata block: on the die with the most free blocks.
            die = (0..self.geometry.dies())
                .map(DieId)
                .max_by_key(|&d| (self.alloc.free_blocks_in(d), d.0))
                .unwrap_or(die);
        }
        let Allocation { ppa, .. } = self.alloc.next_page(META_STREAM, die).ok_or_else(|| {
            FtlError::DeviceFull("no block is free for the ssc's map log (garbage collection is stuck)".into())
        })?;
        let b = self.layout.block_of(ppa);
        l.die = self.layout.die_of_block(b);
        match l.blocks.iter_mut().find(|(m, _)| *m == b) {
            Some(e) => e.1 = e.1.max(seq),
            None => l.blocks.push((b, seq)),
        }
        Ok(ppa)
    }

    /// Programs metadata page `page`, after every metadata and data program
    /// issued before it has finished.
    fn meta_program(&mut self, io: &mut Io, page: &MetaPage, purpose: Purpose) -> Result<(), FtlError> {
        let Some(l) = self.log.as_ref() else {
            return Ok(());
        };
        io.start_after(l.settled.max(l.data_done));
        let payload = meta::encode(self.geometry.page_size, MAGIC, page);
        let seq = page.seq;
        io.program_placed(0, PageKind::Meta, payload, purpose, |_, bad| self.meta_place(bad, seq))?;
        if let Some(l) = self.log.as_mut() {
            l.settled = l.settled.max(io.last_finish());
        }
        Ok(())
    }

    /// Writes the buffered records out as log pages. On an error the records
    /// not written stay buffered.
    pub(super) fn write_log(&mut self, io: &mut Io) -> Result<(), FtlError> {
        loop {
            let Some(l) = self.log.as_mut() else {
                return Ok(());
            };
            if l.buf.is_empty() {
                return Ok(());
            }
            let n = l.buf.len().min(l.per_page);
            let page = MetaPage {
                checkpoint: false,
                seq: l.next_seq,
                link: l.last_log,
                index: 0,
                total: 0,
                records: l.buf[..n].to_vec(),
            };
            self.meta_program(io, &page, Purpose::Map)?;
            if let Some(l) = self.log.as_mut() {
                l.buf.drain(..n);
                l.last_log = page.seq;
                l.next_seq += 1;
                l.data_since_log = 0;
                l.since_ckpt += 1;
                if l.since_ckpt >= l.every {
                    l.due = true;
                }
            }
        }
    }

    /// After a data page was programmed: writes the log out when its buffer
    /// fills a page or a block's worth of data pages went by since the last
    /// log page (the prototype's log page per erase block).
    pub(super) fn log_after_data(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let ppb = self.geometry.pages_per_block;
        let Some(l) = self.log.as_mut() else {
            return Ok(());
        };
        l.data_done = l.data_done.max(io.last_finish());
        l.data_since_log += 1;
        if l.buf.len() >= l.per_page || l.data_since_log + 1 >= ppb {
            self.write_log(io)?;
        }
        Ok(())
    }

    /// After a garbage-collection copy: the log's pages wait for it.
    pub(super) fn log_copied(&mut self, io: &Io) {
        if let Some(l) = self.log.as_mut() {
            l.data_done = l.data_done.max(io.last_finish());
        }
    }

    /// The finish of the last metadata program and of every data program
    /// before it (ZERO with OOB logging).
    pub(super) fn log_settled(&self) -> SimTime {
        self.log.as_ref().map_or(SimTime::ZERO, |l| l.settled.max(l.data_done))
    }

    /// Before a garbage-collection erase: the records that move or drop the
    /// victim's pages are made durable first, so the durable map never names
    /// an erased page.
    pub(super) fn log_before_erase(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.log.is_none() {
            return Ok(());
        }
        self.write_log(io)?;
        if let Some(l) = self.log.as_ref() {
            io.start_after(l.settled);
        }
        Ok(())
    }

    /// A checkpoint, if one is due by the number of log pages.
    pub(super) fn checkpoint_if_due(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.log.as_ref().is_some_and(|l| l.due) {
            self.checkpoint(io)?;
        }
        Ok(())
    }

    /// Makes every map change so far durable: the log, then a checkpoint of
    /// the whole map if it changed since the latest one (a flush). With
    /// `checkpoint_on_flush` off, the log alone (and a checkpoint only if one
    /// is due by the number of log pages).
    pub(super) fn log_flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if !self.config.checkpoint_on_flush {
            self.write_log(io)?;
            return self.checkpoint_if_due(io);
        }
        if self.log.as_ref().is_some_and(|l| l.changed) {
            self.checkpoint(io)
        } else {
            self.write_log(io)
        }
    }

    /// When idle: a checkpoint if at least one log page went out since the
    /// latest one.
    pub(super) fn log_idle(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.log.as_ref().is_some_and(|l| l.since_ckpt > 0 || l.buf.len() >= l.per_page) {
            self.checkpoint(io)?;
        }
        Ok(())
    }

    /// Writes a checkpoint of the whole map, then erases the metadata blocks
    /// it makes stale.
    fn checkpoint(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some(l) = self.log.as_ref() else {
            return Ok(());
        };
        let per_page = l.per_page;
        // Room for the checkpoint beside garbage collection's own reserve
        // (collection only lowers the number of cached blocks).
        let need = checkpoint_pages(&self.geometry, self.cached as u32).div_ceil(self.geometry.pages_per_block) + 1;
        let target = self.config.gc_free_blocks.saturating_add(need);
        io.independent(|io| self.collect_until(io, target))?;
        self.write_log(io)?;
        let Some(l) = self.log.as_ref() else {
            return Ok(());
        };
        let (start, link) = (l.next_seq, l.last_log);
        let records: Vec<u64> = self
            .table
            .iter()
            .filter(|e| e.mapped != NONE)
            .map(|e| record(e.key, e.mapped, e.has(flag::DIRTY)))
            .collect();
        let total = checkpoint_pages(&self.geometry, records.len() as u32);
        for index in 0..total {
            let from = (index as usize * per_page).min(records.len());
            let to = (from + per_page).min(records.len());
            let page = MetaPage {
                checkpoint: true,
                seq: start + u64::from(index),
                link,
                index,
                total,
                records: records[from..to].to_vec(),
            };
            self.meta_program(io, &page, Purpose::Checkpoint)?;
            // Each page written takes its sequence number for good: a
            // checkpoint cut short leaves pages no later one reuses.
            if let Some(l) = self.log.as_mut() {
                l.next_seq = page.seq + 1;
            }
        }
        let Some(l) = self.log.as_mut() else {
            return Ok(());
        };
        l.since_ckpt = 0;
        l.due = false;
        l.changed = false;
        // Erase the metadata blocks with nothing newer than the checkpoint,
        // once it is durable.
        io.start_after(l.settled);
        let stale: Vec<BlockId> =
            l.blocks.iter().filter(|&&(b, newest)| newest < start && !self.alloc.is_open(b)).map(|&(b, _)| b).collect();
        for b in stale {
            let usable = io.reclaim(b, Purpose::Checkpoint)?;
            if let Some(l) = self.log.as_mut() {
                l.blocks.retain(|&(m, _)| m != b);
            }
            if usable {
                self.alloc.release(b);
            }
        }
        Ok(())
    }

    /// Rebuilds an SSC in log mode from the medium: the latest complete
    /// checkpoint, then the log after it (see the [module documentation](self)).
    /// The medium is not scanned page by page: each written block's first
    /// readable OOB says whether it holds metadata (its pages are then read)
    /// or data (nothing more is read; a data page's OOB names no block).
    /// Blocks with nothing readable (a torn erase) are erased again; partly
    /// written data blocks are closed (garbage collection takes their unwritten
    /// pages back); the partly written metadata block with the newest page is
    /// reopened. A block that went bad in service is never freed nor reopened.
    pub(super) fn recover_log(config: SscConfig, io: &mut Io) -> Result<Ssc, FtlError> {
        let mut s = Ssc::empty(config, io)?;
        let g = s.geometry;
        let mut pages = Vec::new();
        // Metadata blocks with the newest sequence number in each, data blocks.
        let mut blocks: Vec<(BlockId, u64)> = Vec::new();
        let mut data_blocks = Vec::new();
        let mut free = Vec::new();
        let mut newest = 0u64;
        for b in (0..g.total_blocks()).map(BlockId) {
            if io.is_bad(b) {
                continue;
            }
            let programmed = io.programmed_pages(b);
            if programmed == 0 {
                if !io.is_grown_bad(b) {
                    free.push(b);
                }
                continue;
            }
            let mut kind = None;
            for page in 0..programmed {
                let ppa = g.ppa(b, page);
                match io.read_oob(ppa, Purpose::Recovery) {
                    Ok(Some(oob)) => {
                        kind = Some(oob.kind);
                        break;
                    }
                    Ok(None) | Err(NandError::Uncorrectable(_)) => {}
                    Err(e) => return Err(FtlError::Recovery(format!("scanning {ppa:?}: {e}"))),
                }
            }
            match kind {
                None => {
                    if io.reclaim(b, Purpose::Recovery)? {
                        free.push(b);
                    }
                }
                Some(PageKind::Meta) => {
                    let mut top = 0;
                    for page in 0..programmed {
                        let ppa = g.ppa(b, page);
                        let fail = |e| FtlError::Recovery(format!("reading the map log at {ppa:?}: {e}"));
                        let read = match io.read_oob(ppa, Purpose::Recovery) {
                            Ok(Some(_)) => match io.read(ppa, Purpose::Recovery) {
                                Ok((payload, _)) => meta::decode(MAGIC, &payload),
                                Err(NandError::Uncorrectable(_)) => None,
                                Err(e) => return Err(fail(e)),
                            },
                            Ok(None) | Err(NandError::Uncorrectable(_)) => None,
                            Err(e) => return Err(fail(e)),
                        };
                        if let Some(p) = read {
                            top = top.max(p.seq);
                            pages.push(p);
                        }
                    }
                    newest = newest.max(top);
                    blocks.push((b, top));
                }
                Some(_) => data_blocks.push(b),
            }
        }
        // The latest checkpoint with every page readable, and the log after it.
        let sel = meta::select(&mut pages);
        let expected = sel.last_log;
        let apply = |s: &mut Ssc, r: u64| -> Result<(), FtlError> {
            let key = (r as u32) & !DIRTY_BIT;
            let ppa = (r >> 32) as u32;
            if ppa == NONE {
                if let Some(i) = s.table.find(key) {
                    s.table.remove(i);
                }
                return Ok(());
            }
            let i = s.table.find_or_insert(key).ok_or_else(|| {
                FtlError::Recovery(format!("the map log names more disk blocks than the block table holds ({key})"))
            })?;
            let e = s.table.get_mut(i);
            e.mapped = ppa;
            e.newest = ppa;
            e.copies = 1;
            e.set(flag::DIRTY, r as u32 & DIRTY_BIT != 0);
            Ok(())
        };
        for &i in &sel.checkpoint {
            for &r in &pages[i].records {
                apply(&mut s, r)?;
            }
        }
        for &i in &sel.log {
            for &r in &pages[i].records {
                apply(&mut s, r)?;
            }
        }
        let replayed = sel.log.len() as u32;
        // Every mapped page must be a written page of a data block, named once.
        let mut is_data = vec![false; g.total_blocks() as usize];
        for &b in &data_blocks {
            is_data[b.0 as usize] = true;
        }
        let mut gone = Vec::new();
        for e in s.table.iter() {
            let p = e.mapped as usize;
            let written = e.mapped < g.total_pages() && {
                let b = g.block_of(Ppa(e.mapped));
                is_data[b.0 as usize] && g.page_in_block(Ppa(e.mapped)) < io.programmed_pages(b)
            };
            if !written || s.owner[p] != NONE {
                gone.push(e.key);
            } else {
                s.owner[p] = e.key;
            }
        }
        for k in gone {
            if let Some(i) = s.table.find(k) {
                let p = s.table.get(i).mapped as usize;
                if s.owner.get(p) == Some(&k) {
                    s.owner[p] = NONE;
                }
                s.table.remove(i);
            }
        }
        let live: Vec<(u32, bool)> = s.table.iter().map(|e| (e.mapped, e.has(flag::DIRTY))).collect();
        for (mapped, dirty) in live {
            let b = s.layout.block_of(Ppa(mapped));
            s.by_valid.inc(b);
            if dirty {
                s.by_dirty.inc(b);
            }
            s.cached += 1;
            s.dirty += u64::from(dirty);
        }
        for &b in &free {
            s.alloc.release(b);
        }
        for &b in &data_blocks {
            s.by_valid.insert(b);
            s.by_dirty.insert(b);
        }
        // Reopen the partly written metadata block holding the newest page.
        let open = blocks
            .iter()
            .filter(|&&(b, _)| !io.is_grown_bad(b) && io.programmed_pages(b) < g.pages_per_block)
            .max_by_key(|&&(_, top)| top)
            .map(|&(b, _)| b);
        let mut die = None;
        if let Some(b) = open {
            s.alloc.reopen(META_STREAM, b, io.programmed_pages(b));
            die = Some(g.die_of_block(b));
        }
        if let Some(l) = s.log.as_mut() {
            l.next_seq = newest + 1;
            l.last_log = expected;
            l.since_ckpt = replayed;
            l.changed = replayed > 0;
            l.due = replayed >= l.every;
            l.blocks = blocks;
            l.die = die.unwrap_or(DieId(0));
        }
        Ok(s)
    }
}
