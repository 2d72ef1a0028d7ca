//! The SSC FTL: the commands, garbage collection with silent eviction, and the
//! records that make evicts and cleans durable (see the module documentation of
//! [`super`] for the design and its contract).

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, PageKind, Payload, Ppa, SimTime, StoreKind};

use super::metalog::MetaLog;
use super::table::{flag, BlockTable, Entry, NONE};
use super::{key, Consistency, Eviction, SolidStateCache, SscConfig, MAX_BLOCKS, MAX_EXISTS};
use crate::alloc::{Allocation, BlockAllocator};
use crate::victim::GreedyPicker;
use crate::{check_lpn, Durability, Flash, Ftl, FtlError, Hint, Io, Lpn, Purpose};

/// OOB logical page bit of a data page written clean, or of a clean record.
pub(super) const CLEAN_BIT: u32 = 1 << 31;
/// [`Ssc::owner`] bit of a record page.
pub(super) const REC_BIT: u32 = 1 << 31;
/// The disk block in an OOB logical page or an owner word.
pub(super) const KEY_MASK: u32 = !(1 << 31);

/// The solid-state cache FTL (FlashTier, 003 Sections 2.2 and 3.3.2): page
/// mapping of disk blocks through a static hash table, garbage collection with
/// silent eviction, per-write OOB logging or a map log with checkpoints.
#[derive(Debug)]
pub struct Ssc {
    pub(super) config: SscConfig,
    pub(super) geometry: Geometry,
    pub(super) layout: Layout,
    pub(super) capacity: u32,
    pub(super) table: BlockTable,
    /// Per physical page: the disk block its data page holds, with [`REC_BIT`]
    /// for a record page; [`NONE`] for an erased or unreadable page. It lets GC
    /// count a block's copies down when it erases their pages.
    pub(super) owner: Vec<u32>,
    /// Per block: cached data pages and live records.
    pub(super) by_valid: GreedyPicker,
    /// Per block: the pages GC must copy, dirty data pages and live records.
    pub(super) by_dirty: GreedyPicker,
    pub(super) alloc: BlockAllocator,
    pub(super) cached: u64,
    pub(super) dirty: u64,
    pub(super) evictions: u64,
    /// Per block: the latest finish of an erase that made a record in it dead
    /// (the last data page of its disk block went): the block is not erased
    /// before, so a cut never finds the stale data without its record.
    pub(super) erase_after: Vec<SimTime>,
    /// The latest finish of a garbage-collection erase so far: an erase that
    /// takes the newest page of a disk block (a silent eviction, or the stale
    /// newest page of an evicted block) starts no earlier, so the older copies
    /// the table counted as erased are erased by then.
    pub(super) erases_done: SimTime,
    /// The latest finish of a flash operation issued so far (records, GC
    /// copies and erases): a flush completes no earlier, so every evict and
    /// clean before it is durable when it does, whether by a record or by the
    /// erase of the block's last page.
    pub(super) settled: SimTime,
    /// Blocks with an evict or clean the next flush makes durable, in command
    /// order (a block may appear twice; the second time it has nothing left).
    pub(super) pending: Vec<u32>,
    /// The map log and checkpoints (`consistency = "log"`); `None` with OOB
    /// logging. In log mode a data page's OOB holds no disk block, no record
    /// pages are written, and a block's entry lives while it is cached (its
    /// stale pages are unowned at once), so `copies` is 1 outside a collection.
    pub(super) log: Option<MetaLog>,
}

impl Ssc {
    pub(super) fn empty(config: SscConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let capacity = config.capacity(&g, good)?;
        let log = (config.consistency == Consistency::Log).then(|| MetaLog::new(&config, &g));
        Ok(Ssc {
            config,
            geometry: g,
            layout: Layout::new(&g),
            capacity,
            table: BlockTable::new(g.total_pages()),
            owner: vec![NONE; g.total_pages() as usize],
            by_valid: GreedyPicker::new(g.total_blocks(), g.pages_per_block),
            by_dirty: GreedyPicker::new(g.total_blocks(), g.pages_per_block),
            alloc: BlockAllocator::empty(&g, Self::streams(&config)),
            cached: 0,
            dirty: 0,
            evictions: 0,
            erase_after: vec![SimTime::ZERO; g.total_blocks() as usize],
            erases_done: SimTime::ZERO,
            settled: SimTime::ZERO,
            pending: Vec::new(),
            log,
        })
    }

    /// Allocator streams: data, and with a map log its metadata pages.
    fn streams(config: &SscConfig) -> u32 {
        match config.consistency {
            Consistency::Oob => 1,
            Consistency::Log => 2,
        }
    }

    /// An SSC on a freshly formatted medium.
    pub fn format(config: SscConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ssc = Self::empty(config, io)?;
        ssc.alloc = BlockAllocator::formatted(&ssc.geometry, Self::streams(&config), |b| io.is_bad(b));
        Ok(ssc)
    }

    /// The most dirty blocks (with silent eviction off, the most blocks) the
    /// cache holds.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// One more (`up`) or one fewer live page at `ppa`; `must_copy` for a dirty
    /// page or a record.
    #[inline]
    fn count(&mut self, ppa: u32, must_copy: bool, up: bool) {
        let b = self.layout.block_of(Ppa(ppa));
        if up {
            self.by_valid.inc(b);
            if must_copy {
                self.by_dirty.inc(b);
            }
        } else {
            self.by_valid.dec(b);
            if must_copy {
                self.by_dirty.dec(b);
            }
        }
    }

    /// The next page near `die`; a block it fills becomes a GC candidate.
    fn next_page(&mut self, die: DieId) -> Result<Ppa, FtlError> {
        let Allocation { ppa, filled } = self.alloc.next_page(0, die).ok_or_else(|| {
            FtlError::DeviceFull("no open block has room and no block is free (ssc garbage collection is stuck)".into())
        })?;
        if let Some(b) = filled {
            self.by_valid.insert(b);
            self.by_dirty.insert(b);
        }
        Ok(ppa)
    }

    /// The next page near `die` ([`Ssc::next_page`]), after retiring `bad`, a
    /// block that went bad under a program ([`Io::program_placed`],
    /// [`Io::copy_placed`]): it leaves the open blocks for the victim pickers,
    /// so garbage collection moves its live pages off; it is never programmed,
    /// erased or freed again ([`Io::reclaim`]).
    fn place(&mut self, die: DieId, bad: Option<BlockId>) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            if self.alloc.retire(b).is_some() {
                self.by_valid.insert(b);
                self.by_dirty.insert(b);
            }
        }
        self.next_page(die)
    }

    /// Applies `f` to the entry in slot `i`, keeping the per-block counts and
    /// the totals of its cached page right.
    pub(super) fn update(&mut self, i: usize, f: impl FnOnce(&mut Entry)) {
        let before = *self.table.get(i);
        if before.mapped != NONE {
            self.count(before.mapped, before.must_copy(), false);
            self.cached -= 1;
            if before.has(flag::DIRTY) {
                self.dirty -= 1;
            }
        }
        let e = self.table.get_mut(i);
        f(e);
        let after = *e;
        if after.mapped != NONE {
            self.count(after.mapped, after.must_copy(), true);
            self.cached += 1;
            if after.has(flag::DIRTY) {
                self.dirty += 1;
            }
        }
    }

    /// Forgets the live record of the entry in slot `i`, right after the
    /// program that makes it needless (a newer data page or record of its
    /// block): its block is not erased before that program is durable.
    fn drop_record(&mut self, io: &mut Io, i: usize) {
        let r = self.table.get(i).rec;
        if r != NONE {
            io.supersede(Ppa(r));
            self.forget_record(i);
        }
    }

    fn forget_record(&mut self, i: usize) {
        let r = self.table.get(i).rec;
        if r != NONE {
            self.count(r, true, false);
            let e = self.table.get_mut(i);
            e.rec = NONE;
            e.set(flag::REC_CLEAN, false);
        }
    }

    /// Programs a record of the block in slot `i`: a clean record (its newest
    /// data page is clean) or an evict record (every data page of it is dead).
    /// A failed program retires its block and the record goes elsewhere; when
    /// it cannot be written at all the entry is unchanged.
    fn write_record(&mut self, io: &mut Io, die: DieId, i: usize, clean: bool) -> Result<(), FtlError> {
        let k = self.table.get(i).key;
        let payload = match io.store_kind() {
            StoreKind::Token => Payload::Token(0),
            _ => Payload::Bytes(vec![0u8; self.geometry.page_size as usize].into()),
        };
        let tag = if clean { k | CLEAN_BIT } else { k };
        let (ppa, _) = io.program_placed(tag, PageKind::Meta, payload, Purpose::Map, |_, bad| self.place(die, bad))?;
        self.owner[ppa.0 as usize] = k | REC_BIT;
        self.drop_record(io, i);
        self.count(ppa.0, true, true);
        let e = self.table.get_mut(i);
        e.rec = ppa.0;
        e.set(flag::REC_CLEAN, clean);
        if !clean {
            e.newest = NONE;
        }
        Ok(())
    }

    /// Whether the entry's pending evict (or clean) still needs a record.
    fn record_needed(&self, i: usize, evict: bool) -> bool {
        let e = self.table.get(i);
        if evict {
            e.mapped == NONE && e.copies > 0 && !e.covered()
        } else {
            let clean_on_flash = e.has(flag::FLASH_CLEAN) || (e.rec != NONE && e.has(flag::REC_CLEAN));
            e.mapped != NONE && !e.has(flag::DIRTY) && !clean_on_flash
        }
    }

    /// Queues the block in slot `i` for the next flush, with `f` pending.
    fn make_pending(&mut self, i: usize, f: u8) {
        let e = self.table.get_mut(i);
        let queued = e.has(flag::PENDING_EVICT | flag::PENDING_CLEAN);
        e.set(flag::PENDING_EVICT | flag::PENDING_CLEAN, false);
        e.set(f, true);
        if !queued {
            let k = e.key;
            self.pending.push(k);
        }
    }

    /// The victim of the next collection, if one would reclaim anything.
    fn pick_victim(&mut self) -> Option<BlockId> {
        let ppb = self.geometry.pages_per_block;
        if self.config.eviction == Eviction::Valid || self.config.eviction == Eviction::Off {
            if let Some(v) = self.by_valid.peek_min() {
                let copied =
                    if self.config.eviction == Eviction::Off { self.by_valid.valid(v) } else { self.by_dirty.valid(v) };
                if copied < ppb {
                    return Some(v);
                }
            }
            if self.config.eviction == Eviction::Off {
                return None;
            }
        }
        let v = self.by_dirty.peek_min()?;
        (self.by_dirty.valid(v) < ppb).then_some(v)
    }

    /// Reclaims one victim block: live records and dirty pages are copied,
    /// clean pages dropped (silent eviction) unless eviction is off or an older
    /// copy of the block is still on the flash. Returns false if no block would
    /// reclaim anything.
    ///
    /// A victim that went bad (a program on it failed) is never erased: every
    /// cached page on it is copied off (none is evicted silently), its pages
    /// stay on the flash, readable, so they keep counting as copies of their
    /// blocks (and keep their records live), and the block is never freed.
    /// A failed erase retires the victim too; it leaves nothing readable, so its
    /// pages are gone as after an erase. When a copy cannot be written, the
    /// victim stays a candidate with what is left on it.
    fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.pick_victim() else {
            return Ok(false);
        };
        self.by_valid.remove(victim);
        self.by_dirty.remove(victim);
        let takes_newest = match self.move_off(io, victim) {
            Ok(t) => t,
            Err(e) => {
                self.by_valid.insert(victim);
                self.by_dirty.insert(victim);
                return Err(e);
            }
        };
        let first = self.geometry.ppa(victim, 0).0;
        let end = first + io.programmed_pages(victim);
        self.by_valid.set_valid(victim, 0);
        self.by_dirty.set_valid(victim, 0);
        if io.is_grown_bad(victim) {
            // Retired by a failed program: not erased, its pages stay.
            return Ok(true);
        }
        if let Err(e) = self.log_before_erase(io) {
            // Its pages are moved off; a later collection erases it.
            self.by_valid.insert(victim);
            self.by_dirty.insert(victim);
            return Err(e);
        }
        io.start_after(self.erase_after[victim.0 as usize]);
        if takes_newest && self.log.is_none() {
            io.start_after(self.erases_done);
        }
        let usable = io.reclaim(victim, Purpose::Gc)?;
        self.erase_after[victim.0 as usize] = SimTime::ZERO;
        let erased = io.last_finish();
        self.erases_done = self.erases_done.max(erased);
        for p in first..end {
            let o = std::mem::replace(&mut self.owner[p as usize], NONE);
            if o == NONE || o & REC_BIT != 0 {
                continue;
            }
            let Some(i) = self.table.find(o) else {
                continue;
            };
            self.update(i, |e| {
                e.copies -= 1;
                if e.newest == p {
                    e.newest = NONE;
                }
            });
            let e = *self.table.get(i);
            if e.copies == 0 {
                if e.rec != NONE {
                    let b = self.layout.block_of(Ppa(e.rec)).0 as usize;
                    self.erase_after[b] = self.erase_after[b].max(erased);
                    self.forget_record(i);
                }
                if e.mapped == NONE {
                    self.table.remove(i);
                }
            }
        }
        if usable {
            self.alloc.release(victim);
        }
        Ok(true)
    }

    /// Moves the live pages off `victim` (see [`Ssc::collect_one`]); returns
    /// whether its erase takes the newest page of some disk block.
    fn move_off(&mut self, io: &mut Io, victim: BlockId) -> Result<bool, FtlError> {
        let die = self.layout.die_of_block(victim);
        let first = self.geometry.ppa(victim, 0).0;
        let end = first + io.programmed_pages(victim);
        // A victim gone bad is never erased: a clean page dropped there would
        // stay on the flash, and a cleaned one would come back dirty after a
        // cut, so every cached page is copied off it.
        let off = self.config.eviction == Eviction::Off || io.is_grown_bad(victim);
        let log = self.log.is_some();
        // Whether the erase takes the newest page of some disk block.
        let mut takes_newest = false;
        // Slots of the clean pages evicted silently (no slot moves before the
        // erase: the table only gains or loses entries outside this pass).
        let mut evicted = Vec::new();
        for p in first..end {
            let o = self.owner[p as usize];
            if o == NONE {
                continue;
            }
            let k = o & KEY_MASK;
            let Some(i) = self.table.find(k) else {
                continue;
            };
            let e = *self.table.get(i);
            if o & REC_BIT != 0 {
                if e.rec == p {
                    // A live record keeps saying what it said: no data page of
                    // its block was programmed after it, nor is the copy.
                    let (dst, _) = io.copy_placed(Ppa(p), Purpose::Map, |_, bad| self.place(die, bad))?;
                    self.owner[dst.0 as usize] = o;
                    self.count(p, true, false);
                    self.count(dst.0, true, true);
                    self.table.get_mut(i).rec = dst.0;
                }
                continue;
            }
            if e.mapped == p {
                let dirty = e.has(flag::DIRTY);
                if off || e.must_copy() {
                    let dst = if !log && !dirty && !e.has(flag::FLASH_CLEAN) {
                        // A cleaned page: the copy says clean in its OOB.
                        let (data, _) = io.read(Ppa(p), Purpose::Gc)?;
                        let (dst, _) =
                            io.program_placed(k | CLEAN_BIT, PageKind::Data, data, Purpose::Gc, |_, bad| {
                                self.place(die, bad)
                            })?;
                        io.supersede(Ppa(p));
                        dst
                    } else {
                        io.copy_placed(Ppa(p), Purpose::Gc, |_, bad| self.place(die, bad))?.0
                    };
                    self.owner[dst.0 as usize] = k;
                    self.drop_record(io, i);
                    self.update(i, |e| {
                        e.mapped = dst.0;
                        e.newest = dst.0;
                        e.copies += 1;
                        if !dirty {
                            e.set(flag::FLASH_CLEAN, true);
                        }
                    });
                    if log {
                        self.log_map(k, dst.0, dirty);
                        self.log_copied(io);
                    }
                } else {
                    // Silent eviction: the only copy of a clean block goes with
                    // the erase. Applied once every copy is made: a pass that
                    // fails leaves the victim unerased, and a cleaned page
                    // dropped from the map there would come back dirty.
                    evicted.push(i);
                    takes_newest = true;
                }
            } else if !log && e.newest == p && e.mapped == NONE && !e.covered() {
                if e.copies > 1 {
                    // The newest page of an evicted block, with older copies
                    // left: erasing it would let a recovery find an older one.
                    self.write_record(io, die, i, false)?;
                    io.supersede(Ppa(p));
                } else {
                    takes_newest = true;
                }
            }
        }
        for i in evicted {
            self.update(i, |e| {
                e.mapped = NONE;
                e.set(flag::FLASH_CLEAN | flag::PENDING_CLEAN, false);
            });
            let k = self.table.get(i).key;
            self.log_evict(k);
            self.evictions += 1;
        }
        Ok(takes_newest)
    }

    /// Collects garbage while at most `free_blocks` blocks are free (at most one
    /// pass per block of the device, then the caller's allocation decides).
    pub(super) fn collect_until(&mut self, io: &mut Io, free_blocks: u32) -> Result<(), FtlError> {
        let passes = self.geometry.total_blocks();
        crate::victim::collect_while(self, io, passes, |s| s.alloc.free_blocks() <= free_blocks, Self::collect_one)
    }

    /// Makes the pending evict or clean of disk block `k` durable, writing its
    /// record if one is still needed. On an error the block stays pending.
    fn flush_one(&mut self, io: &mut Io, k: u32) -> Result<(), FtlError> {
        let Some(i) = self.table.find(k) else {
            return Ok(());
        };
        let evict = self.table.get(i).has(flag::PENDING_EVICT);
        if self.record_needed(i, evict) {
            let target = self.config.gc_free_blocks;
            io.independent(|io| self.collect_until(io, target))?;
        }
        // Collection may have moved, evicted or dropped the block.
        let Some(i) = self.table.find(k) else {
            return Ok(());
        };
        if self.record_needed(i, evict) {
            let die = io.free_die_from(self.alloc.next_die());
            self.write_record(io, die, i, !evict)?;
        }
        self.table.get_mut(i).set(flag::PENDING_EVICT | flag::PENDING_CLEAN, false);
        Ok(())
    }

    /// Writes `data` as the contents of `block`, dirty or clean.
    fn put(&mut self, io: &mut Io, block: u64, data: Payload, dirty: bool) -> Result<(), FtlError> {
        let k = key(block)?;
        let (cached, was_dirty) =
            self.table.lookup(k).map_or((false, false), |e| (e.mapped != NONE, e.has(flag::DIRTY)));
        let cap = u64::from(self.capacity);
        if dirty && !was_dirty && self.dirty >= cap {
            return Err(FtlError::DeviceFull(format!(
                "write-dirty of disk block {block}: the cache already holds its capacity of {cap} dirty blocks; \
                 write some back and clean them, or evict them"
            )));
        }
        if self.config.eviction == Eviction::Off && !cached && self.cached >= cap {
            return Err(FtlError::DeviceFull(format!(
                "write of disk block {block}: the cache holds its capacity of {cap} blocks and silent eviction is \
                 off; evict some blocks first, or set eviction"
            )));
        }
        io.independent(|io| self.checkpoint_if_due(io))?;
        let target = self.config.gc_free_blocks;
        io.independent(|io| self.collect_until(io, target))?;
        let die = io.free_die_from(self.alloc.next_die());
        // In log mode the OOB carries no map record.
        let tag = if self.log.is_some() {
            0
        } else if dirty {
            k
        } else {
            k | CLEAN_BIT
        };
        // A failed program retires its block and the write goes elsewhere; if
        // it cannot be written, the block keeps what it held.
        let (ppa, _) = io.program_placed(tag, PageKind::Data, data, Purpose::Host, |_, bad| self.place(die, bad))?;
        self.owner[ppa.0 as usize] = k;
        let i = self
            .table
            .find_or_insert(k)
            .ok_or_else(|| FtlError::DeviceFull(format!("write of disk block {block}: the block table is full")))?;
        let old = self.table.get(i).mapped;
        if old != NONE {
            io.supersede(Ppa(old));
        }
        // In log mode the superseded page is nobody's at once.
        let replaces = self.log.is_some() && old != NONE;
        if replaces {
            self.owner[old as usize] = NONE;
        }
        self.drop_record(io, i);
        self.update(i, |e| {
            e.mapped = ppa.0;
            e.newest = ppa.0;
            if !replaces {
                e.copies += 1;
            }
            e.set(flag::DIRTY, dirty);
            e.set(flag::FLASH_CLEAN, !dirty);
            e.set(flag::PENDING_EVICT | flag::PENDING_CLEAN, false);
        });
        self.log_map(k, ppa.0, dirty);
        io.ack();
        self.settled = self.settled.max(io.last_finish());
        self.log_after_data(io)
    }
}

impl SolidStateCache for Ssc {
    fn write_clean(&mut self, io: &mut Io, block: u64, data: Payload) -> Result<(), FtlError> {
        self.put(io, block, data, false)
    }

    fn write_dirty(&mut self, io: &mut Io, block: u64, data: Payload) -> Result<(), FtlError> {
        self.put(io, block, data, true)
    }

    fn read(&mut self, io: &mut Io, block: u64) -> Result<Option<Payload>, FtlError> {
        let k = key(block)?;
        match self.table.lookup(k) {
            Some(e) if e.mapped != NONE => {
                let (data, _) = io.read(Ppa(e.mapped), Purpose::Host)?;
                Ok(Some(data))
            }
            _ => Ok(None),
        }
    }

    fn evict(&mut self, _io: &mut Io, block: u64) -> Result<(), FtlError> {
        let k = key(block)?;
        let Some(i) = self.table.find(k) else {
            return Ok(());
        };
        let e = *self.table.get(i);
        if e.mapped == NONE {
            return Ok(());
        }
        self.update(i, |e| {
            e.mapped = NONE;
            e.set(flag::DIRTY | flag::FLASH_CLEAN, false);
        });
        if self.log.is_some() {
            // The page is nobody's; the entry goes with it, unless a failed
            // collection left a copy of the block to be erased.
            self.owner[e.mapped as usize] = NONE;
            let entry = self.table.get_mut(i);
            entry.copies -= 1;
            entry.newest = NONE;
            if entry.copies == 0 {
                self.table.remove(i);
            }
            self.log_evict(k);
        } else {
            self.make_pending(i, flag::PENDING_EVICT);
        }
        Ok(())
    }

    fn clean(&mut self, _io: &mut Io, block: u64) -> Result<(), FtlError> {
        let k = key(block)?;
        let Some(i) = self.table.find(k) else {
            return Ok(());
        };
        let e = *self.table.get(i);
        if e.mapped == NONE || !e.has(flag::DIRTY) {
            return Ok(());
        }
        self.update(i, |e| e.set(flag::DIRTY, false));
        if self.log.is_some() {
            self.log_map(k, e.mapped, false);
        } else {
            self.make_pending(i, flag::PENDING_CLEAN);
        }
        Ok(())
    }

    fn exists(&mut self, _io: &mut Io, first: u64, count: u64) -> Result<Vec<bool>, FtlError> {
        if count > MAX_EXISTS || first.checked_add(count).is_none() {
            return Err(FtlError::BadCommand(format!(
                "exists of {count} blocks from disk block {first}: at most {MAX_EXISTS} blocks per call, within \
                 the 64-bit block space; split the range"
            )));
        }
        Ok((first..first + count)
            .map(|b| {
                b < MAX_BLOCKS && self.table.lookup(b as u32).is_some_and(|e| e.mapped != NONE && e.has(flag::DIRTY))
            })
            .collect())
    }

    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.log.is_some() {
            self.log_flush(io)?;
            let end = io.last_finish().max(self.settled).max(self.log_settled());
            io.complete_after(end);
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        for (n, &k) in pending.iter().enumerate() {
            if let Err(e) = self.flush_one(io, k) {
                // The flush did not complete: the blocks not yet recorded stay
                // pending for the next one.
                self.pending.extend_from_slice(&pending[n..]);
                return Err(e);
            }
        }
        let end = io.last_finish().max(self.settled);
        io.complete_after(end);
        Ok(())
    }

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn cached_blocks(&self) -> u64 {
        self.cached
    }

    fn dirty_blocks(&self) -> u64 {
        self.dirty
    }

    fn capacity(&self) -> u64 {
        u64::from(self.capacity)
    }
}

impl Ftl for Ssc {
    fn name(&self) -> &'static str {
        "ssc"
    }

    fn logical_pages(&self) -> u32 {
        self.capacity
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.capacity)?;
        SolidStateCache::read(self, io, u64::from(lpn.0))
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.capacity)?;
        self.put(io, u64::from(lpn.0), data, true)
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.capacity)?;
        self.evict(io, u64::from(lpn.0))
    }

    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        SolidStateCache::flush(self, io)
    }

    fn durability(&self) -> Durability {
        if self.log.is_some() {
            Durability::OnFlush
        } else {
            Durability::OnAck
        }
    }

    fn background(&mut self, io: &mut Io, _until: SimTime) -> Result<(), FtlError> {
        self.log_idle(io)
    }

    fn ram_bytes(&self) -> u64 {
        self.table.ram_bytes()
            + self.owner.len() as u64 * 4
            + self.by_valid.ram_bytes()
            + self.by_dirty.ram_bytes()
            + self.alloc.ram_bytes()
            + self.pending.capacity() as u64 * 4
            + self.log.as_ref().map_or(0, MetaLog::ram_bytes)
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.check_against(flash)
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: None, placement: Some(self) }
    }

    fn extension(&mut self) -> crate::Extension<'_> {
        crate::Extension::Cache(self)
    }
}

impl crate::Placement for Ssc {
    /// The die of disk block `lpn`'s cached page (the block interface's
    /// logical page is the disk block).
    fn die_of(&self, lpn: Lpn) -> Option<DieId> {
        let e = self.table.lookup(lpn.0 & KEY_MASK).filter(|e| e.key == lpn.0 && e.mapped != NONE)?;
        Some(self.layout.die_of_block(self.layout.block_of(Ppa(e.mapped))))
    }
}
