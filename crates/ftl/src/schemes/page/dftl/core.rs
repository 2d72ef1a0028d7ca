//! The mechanism DFTL and on-demand Lazy-RTGC share: data and translation block
//! pools, the cached mapping table, the global translation directory, host
//! programs, valid-page moves and translation-page write-backs. The policies (when
//! to collect, how to make room in the CMT) live in the schemes.

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, NandError, PageKind, Payload, Ppa};

use super::cmt::Cmt;
use crate::alloc::{Allocation, BlockAllocator};
use crate::mapping::{PageTable, ValidMap};
use crate::victim::GreedyPicker;
use crate::{Flash, FtlError, Io, Purpose};

pub(crate) const NONE: u32 = u32::MAX;
/// Bytes of one mapping entry in a translation page (001 Section 5.2).
pub(crate) const ENTRY_BYTES: u32 = 4;
/// Translation blocks beyond those the translation pages need: the open block, the
/// last free block translation GC copies into, and room for a batch of
/// write-backs (DFTL's data GC may update up to a block's worth of pages).
const TRANSLATION_SLACK_BLOCKS: u32 = 4;

/// How a CMT miss makes room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evict {
    /// DFTL: evict least recently used entries, writing a dirty one's translation
    /// page back first (with every other dirty entry of that page).
    WriteBack,
    /// On-demand Lazy-RTGC: drop clean entries only; dirty ones wait for a
    /// write-back task, the table overflowing its budget meanwhile.
    CleanOnly,
}

/// Both pools' state. Fields are the schemes' to read; changes go through methods.
#[derive(Debug)]
pub(crate) struct DemandMap {
    pub geometry: Geometry,
    pub layout: Layout,
    pub logical_pages: u32,
    pub entries_per_tpage: u32,
    pub tpages: u32,
    /// Per block: whether it belongs to the translation pool.
    pub translation: Vec<bool>,
    /// Global translation directory: where each translation page is.
    pub gtd: Vec<u32>,
    /// What the translation pages on flash say. The token medium cannot hold a
    /// translation page's entries, so the simulation keeps them here: flash
    /// contents, not FTL RAM (not in `ram_bytes`). It changes only when a
    /// translation page is programmed.
    pub on_flash: PageTable,
    pub cmt: Cmt,
    pub valid: ValidMap,
    pub data_picker: GreedyPicker,
    pub tpicker: GreedyPicker,
    pub data_alloc: BlockAllocator,
    pub t_alloc: BlockAllocator,
    pub t_die: DieId,
    /// Erased pages ready to program in each pool (free blocks and open blocks).
    pub data_free_pages: u64,
    pub t_free_pages: u64,
    /// Whether the medium stores page bytes (translation pages then carry their
    /// entries); learnt from the first translation-page program.
    bytes_medium: bool,
}

impl DemandMap {
    /// Pools sized for this medium: `lambda_t` bounds a translation victim's valid
    /// pages, `logical(data_blocks)` gives the logical pages a data pool of that many
    /// good blocks exports. Nothing is free yet.
    pub fn empty(io: &Io, cmt_entries: u32, lambda_t: u32, logical: impl Fn(u32) -> u64) -> Result<Self, FtlError> {
        let g = *io.geometry();
        let ppb = g.pages_per_block;
        let entries_per_tpage = g.page_size / ENTRY_BYTES;
        if entries_per_tpage == 0 || lambda_t == 0 || lambda_t >= ppb {
            return Err(FtlError::config(
                "ftl.sigma_t",
                format!(
                "translation pages need page_size >= {ENTRY_BYTES} and 0 < lambda_t < pages_per_block (got {lambda_t})"
            ),
            ));
        }
        let mut per_die: Vec<Vec<BlockId>> = (0..g.dies())
            .map(|d| {
                (0..g.blocks_per_die()).rev().map(|i| g.block_of_die(DieId(d), i)).filter(|&b| !io.is_bad(b)).collect()
            })
            .collect();
        let good: u32 = per_die.iter().map(|v| v.len() as u32).sum();
        let tpages_max = logical(good).div_ceil(u64::from(entries_per_tpage));
        let translation_blocks = TRANSLATION_SLACK_BLOCKS + tpages_max.div_ceil(u64::from(lambda_t)) as u32;
        let data_blocks = good.saturating_sub(translation_blocks);
        let logical_pages = u32::try_from(logical(data_blocks)).unwrap_or(u32::MAX);
        if logical_pages == 0 || data_blocks <= g.dies() + 1 {
            return Err(FtlError::config("device", format!(
                "the device is too small for demand-based mapping: {good} good blocks, {translation_blocks} needed for translation pages"
            )));
        }
        // Translation blocks: the last good blocks of each die, round robin.
        let mut translation = vec![false; g.total_blocks() as usize];
        let mut t_alloc = BlockAllocator::empty(&g, 1);
        let mut taken = 0;
        while taken < translation_blocks {
            for list in per_die.iter_mut() {
                if taken < translation_blocks {
                    if let Some(b) = list.first().copied() {
                        list.remove(0);
                        translation[b.0 as usize] = true;
                        t_alloc.release(b);
                        taken += 1;
                    }
                }
            }
        }
        let tpages = (logical_pages).div_ceil(entries_per_tpage);
        Ok(DemandMap {
            geometry: g,
            layout: Layout::new(&g),
            logical_pages,
            entries_per_tpage,
            tpages,
            translation,
            gtd: vec![NONE; tpages as usize],
            on_flash: PageTable::new(logical_pages),
            cmt: Cmt::new(cmt_entries, entries_per_tpage, tpages),
            valid: ValidMap::new(g.total_pages()),
            data_picker: GreedyPicker::new(g.total_blocks(), ppb),
            tpicker: GreedyPicker::new(g.total_blocks(), ppb),
            data_alloc: BlockAllocator::empty(&g, 1),
            t_alloc: BlockAllocator::empty(&g, 1),
            t_die: DieId(0),
            data_free_pages: 0,
            t_free_pages: 0,
            bytes_medium: false,
        })
    }

    /// Pools on a freshly formatted medium: every good block free.
    pub fn format(io: &Io, cmt_entries: u32, lambda_t: u32, logical: impl Fn(u32) -> u64) -> Result<Self, FtlError> {
        let mut m = Self::empty(io, cmt_entries, lambda_t, logical)?;
        for b in (0..m.geometry.total_blocks()).map(BlockId) {
            if !io.is_bad(b) {
                m.release(b);
            }
        }
        m.t_die = m.fullest_translation_die();
        Ok(m)
    }

    /// Returns an erased block to its pool.
    pub fn release(&mut self, b: BlockId) {
        let ppb = u64::from(self.geometry.pages_per_block);
        if self.translation[b.0 as usize] {
            self.t_alloc.release(b);
            self.t_free_pages += ppb;
        } else {
            self.data_alloc.release(b);
            self.data_free_pages += ppb;
        }
    }

    pub fn fullest_translation_die(&self) -> DieId {
        let dies = self.geometry.dies();
        (0..dies).map(DieId).max_by_key(|&d| (self.t_alloc.free_blocks_in(d), dies - d.0)).unwrap_or(DieId(0))
    }

    /// The current mapping of `lpn` (no flash access).
    pub fn current(&self, lpn: u32) -> Option<Ppa> {
        self.cmt.peek(lpn).unwrap_or_else(|| self.on_flash.get(lpn as usize))
    }

    /// The mapping of `lpn` through the CMT: a miss reads its translation page
    /// (a map read) after making room as `evict` says.
    pub fn resolve(&mut self, io: &mut Io, lpn: u32, evict: Evict) -> Result<Option<Ppa>, FtlError> {
        if let Some(v) = self.cmt.lookup(lpn) {
            return Ok(v);
        }
        let mut room = true;
        if evict == Evict::WriteBack {
            while self.cmt.len() >= self.cmt.capacity() {
                match self.evict_one(io) {
                    Ok(()) => {}
                    // No translation page left to write a dirty entry back (blocks
                    // gone bad ate the spare ones): the mapping is served without
                    // caching it, so reads still work.
                    Err(e) if e.kind() == crate::ErrorKind::NoSpace => {
                        room = false;
                        break;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        let t = lpn / self.entries_per_tpage;
        if self.gtd[t as usize] != NONE {
            io.read(Ppa(self.gtd[t as usize]), Purpose::Map)?;
        }
        let v = self.on_flash.get(lpn as usize);
        if !room {
            return Ok(v);
        }
        self.cmt.insert_clean(lpn, v);
        if evict == Evict::CleanOnly {
            self.drop_clean();
        }
        Ok(v)
    }

    /// Drops least recently used clean entries while the CMT is over its budget.
    pub fn drop_clean(&mut self) {
        while self.cmt.len() > self.cmt.capacity() {
            match self.cmt.oldest_clean() {
                Some(l) => self.cmt.remove(l),
                None => break,
            }
        }
    }

    fn evict_one(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some((lpn, dirty)) = self.cmt.oldest() else {
            return Ok(());
        };
        if dirty {
            self.ensure_translation_space(io, 1)?;
            if self.cmt.is_dirty(lpn) {
                self.write_back(io, lpn / self.entries_per_tpage, Purpose::Map)?;
            }
        }
        self.cmt.remove(lpn);
        Ok(())
    }

    /// Foreground translation GC (DFTL): collects translation victims until `n`
    /// pages can be written with a block's worth of pages still free.
    pub fn ensure_translation_space(&mut self, io: &mut Io, n: u64) -> Result<(), FtlError> {
        let ppb = self.geometry.pages_per_block;
        while self.t_free_pages < n + u64::from(ppb) {
            let Some(victim) = self.pick_translation_victim() else {
                break;
            };
            self.copy_tpages(io, victim, ppb)?;
            self.erase(io, victim)?;
        }
        Ok(())
    }

    /// Writes translation page `t` back: reads its current version, merges every
    /// dirty CMT entry of it, programs the new version.
    pub fn write_back(&mut self, io: &mut Io, t: u32, purpose: Purpose) -> Result<(), FtlError> {
        let old = self.gtd[t as usize];
        if old != NONE {
            io.read(Ppa(old), purpose)?;
        }
        self.merge_and_program(io, t, purpose, old)
    }

    fn merge_and_program(&mut self, io: &mut Io, t: u32, purpose: Purpose, old: u32) -> Result<(), FtlError> {
        for (lpn, v) in self.cmt.clean_tpage(t) {
            match v {
                Some(p) => self.on_flash.set(lpn as usize, p),
                None => self.on_flash.unmap(lpn as usize),
            };
        }
        // The page handed out last: kept for the program in bytes when the token
        // was refused (the medium stores bytes), which leaves it erased.
        let mut last = None;
        let mut payload = if self.bytes_medium { self.tpage_bytes(t) } else { Payload::Token(u64::from(t)) };
        let ppa = loop {
            let placed = io.program_placed(t, PageKind::Map, payload, purpose, |_, bad| {
                if let Some(b) = bad {
                    self.retire(b);
                } else if let Some(p) = last {
                    return Ok(p);
                }
                let p = self.next_tpage()?;
                last = Some(p);
                Ok(p)
            });
            match placed {
                Ok((ppa, _)) => break ppa,
                Err(FtlError::Nand(NandError::PayloadMismatch(_))) if !self.bytes_medium => {
                    self.bytes_medium = true;
                    payload = self.tpage_bytes(t);
                }
                Err(e) => return Err(e),
            }
        };
        if old != NONE {
            io.supersede(Ppa(old));
            self.invalidate(Ppa(old));
        }
        self.gtd[t as usize] = ppa.0;
        self.mark_valid(ppa);
        Ok(())
    }

    /// Translation page `t` as bytes: its entries, little-endian, unmapped = !0.
    fn tpage_bytes(&self, t: u32) -> Payload {
        let mut bytes = vec![0xff; self.geometry.page_size as usize];
        let first = t * self.entries_per_tpage;
        let last = (first + self.entries_per_tpage).min(self.logical_pages);
        for (i, lpn) in (first..last).enumerate() {
            let v = self.on_flash.get(lpn as usize).map_or(NONE, |p| p.0);
            bytes[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        Payload::Bytes(bytes.into())
    }

    /// Maps the logical pages of `moves` (logical page, new location) where a GC
    /// pass moved them, without writing their translation pages back (a later
    /// write-back of each page, or recovery from the data pages' OOB, does).
    pub fn map_moves(&mut self, moves: &[(u32, Ppa)]) {
        for &(lpn, dst) in moves {
            self.on_flash.set(lpn as usize, dst);
        }
    }

    /// Merges uncached mapping updates of a GC pass into their translation pages,
    /// one write-back per translation page (DFTL's batch update).
    pub fn write_back_moves(&mut self, io: &mut Io, moves: &mut [(u32, Ppa)]) -> Result<(), FtlError> {
        moves.sort_unstable_by_key(|m| m.0);
        // Every move is mapped before any write-back: one that fails (no
        // translation page left) leaves the rest mapped where their data is.
        self.map_moves(moves);
        let e = self.entries_per_tpage;
        for group in moves.chunk_by(|a, b| a.0 / e == b.0 / e) {
            self.write_back(io, group[0].0 / e, Purpose::Map)?;
        }
        Ok(())
    }

    fn next_tpage(&mut self) -> Result<Ppa, FtlError> {
        let Allocation { ppa, filled } = self
            .t_alloc
            .next_page(0, self.t_die)
            .ok_or_else(|| FtlError::DeviceFull("no free translation page".into()))?;
        self.t_free_pages -= 1;
        if let Some(b) = filled {
            self.tpicker.insert(b);
            self.t_die = self.fullest_translation_die();
        }
        Ok(ppa)
    }

    /// The next data page on `die` (or another die when it is out of room).
    pub fn next_data_page(&mut self, die: DieId) -> Result<Ppa, FtlError> {
        let Allocation { ppa, filled } =
            self.data_alloc.next_page(0, die).ok_or_else(|| FtlError::DeviceFull("no free data page".into()))?;
        self.data_free_pages -= 1;
        if let Some(b) = filled {
            self.data_picker.insert(b);
        }
        Ok(ppa)
    }

    /// Programs a host page for `lpn`, which was at `old`, and records its new
    /// mapping in the CMT (dirty).
    pub fn host_program(&mut self, io: &mut Io, lpn: u32, data: Payload, old: Option<Ppa>) -> Result<(), FtlError> {
        let die = io.free_die_from(self.data_alloc.next_die());
        let (ppa, _) = io.program_placed(lpn, PageKind::Data, data, Purpose::Host, |_, bad| {
            if let Some(b) = bad {
                self.retire(b);
            }
            self.next_data_page(die)
        })?;
        if let Some(old) = old {
            io.supersede(old);
            self.invalidate(old);
        }
        self.mark_valid(ppa);
        self.cmt.set_dirty(lpn, Some(ppa));
        Ok(())
    }

    /// Unmaps `lpn`, which was at `old`.
    pub fn unmap(&mut self, lpn: u32, old: Option<Ppa>) {
        if let Some(old) = old {
            self.invalidate(old);
            self.cmt.set_dirty(lpn, None);
        }
    }

    fn picker_of(&mut self, b: BlockId) -> &mut GreedyPicker {
        if self.translation[b.0 as usize] {
            &mut self.tpicker
        } else {
            &mut self.data_picker
        }
    }

    pub fn invalidate(&mut self, ppa: Ppa) {
        self.valid.clear(ppa);
        let b = self.layout.block_of(ppa);
        self.picker_of(b).dec(b);
    }

    pub fn mark_valid(&mut self, ppa: Ppa) {
        self.valid.set(ppa);
        let b = self.layout.block_of(ppa);
        self.picker_of(b).inc(b);
    }

    /// Valid pages of `b`.
    pub fn valid_in(&self, b: BlockId) -> u32 {
        if self.translation[b.0 as usize] {
            self.tpicker.valid(b)
        } else {
            self.data_picker.valid(b)
        }
    }

    fn take_victim(picker: &mut GreedyPicker, ppb: u32) -> Option<BlockId> {
        let b = picker.peek_min()?;
        (picker.valid(b) < ppb).then(|| {
            picker.remove(b);
            b
        })
    }

    /// The closed data block with the fewest valid pages, taken out of the
    /// candidates; `None` if none has an invalid page.
    pub fn pick_data_victim(&mut self) -> Option<BlockId> {
        Self::take_victim(&mut self.data_picker, self.geometry.pages_per_block)
    }

    /// The closed translation block with the fewest valid pages (see
    /// [`DemandMap::pick_data_victim`]).
    pub fn pick_translation_victim(&mut self) -> Option<BlockId> {
        Self::take_victim(&mut self.tpicker, self.geometry.pages_per_block)
    }

    /// Moves up to `max` valid pages of data block `victim`; a moved page's new
    /// mapping goes to the CMT if the entry is cached or `!batch`, else it is
    /// returned for [`DemandMap::write_back_moves`]. Returns the pages moved.
    pub fn copy_data_pages(
        &mut self,
        io: &mut Io,
        victim: BlockId,
        max: u32,
        batch: bool,
        uncached: &mut Vec<(u32, Ppa)>,
    ) -> Result<u32, FtlError> {
        let ppb = self.geometry.pages_per_block;
        let die = self.layout.die_of_block(victim);
        let sources: Vec<Ppa> = self.valid.iter_set(self.geometry.ppa(victim, 0), ppb).take(max as usize).collect();
        for &src in &sources {
            let (dst, oob) = io.copy_placed(src, Purpose::Gc, |_, bad| {
                if let Some(b) = bad {
                    self.retire(b);
                }
                self.next_data_page(die)
            })?;
            debug_assert_eq!(self.current(oob.lpn), Some(src), "lpn {} left {src:?}", oob.lpn);
            self.invalidate(src);
            self.mark_valid(dst);
            if !self.cmt.update_cached(oob.lpn, dst) {
                if batch {
                    uncached.push((oob.lpn, dst));
                } else {
                    self.cmt.set_dirty(oob.lpn, Some(dst));
                }
            }
        }
        Ok(sources.len() as u32)
    }

    /// Moves up to `max` valid translation pages of translation block `victim`,
    /// merging each one's dirty CMT entries into its new version. Returns the pages
    /// moved.
    pub fn copy_tpages(&mut self, io: &mut Io, victim: BlockId, max: u32) -> Result<u32, FtlError> {
        let ppb = self.geometry.pages_per_block;
        let sources: Vec<Ppa> = self.valid.iter_set(self.geometry.ppa(victim, 0), ppb).take(max as usize).collect();
        for &src in &sources {
            let (_, oob) = io.read(src, Purpose::Gc)?;
            debug_assert_eq!(self.gtd[oob.lpn as usize], src.0);
            self.merge_and_program(io, oob.lpn, Purpose::Gc, src.0)?;
        }
        Ok(sources.len() as u32)
    }

    /// Erases a collected victim (no valid page left) and frees it.
    pub fn erase(&mut self, io: &mut Io, victim: BlockId) -> Result<(), FtlError> {
        debug_assert_eq!(self.valid_in(victim), 0, "erasing {victim:?} with valid pages");
        if io.reclaim(victim, Purpose::Gc)? {
            self.release(victim);
        }
        Ok(())
    }

    /// Retires `b`, a block that went bad under a program
    /// ([`Io::program_placed`]): it leaves its pool's open blocks (its pages
    /// never handed out are no longer free) for the pool's victim candidates, so
    /// that garbage collection moves its valid pages off; [`Io::reclaim`] then
    /// refuses it and it is never used again.
    pub fn retire(&mut self, b: BlockId) {
        let ppb = self.geometry.pages_per_block;
        let (alloc, free, picker) = if self.translation[b.0 as usize] {
            (&mut self.t_alloc, &mut self.t_free_pages, &mut self.tpicker)
        } else {
            (&mut self.data_alloc, &mut self.data_free_pages, &mut self.data_picker)
        };
        if let Some(left) = alloc.retire(b) {
            *free -= u64::from(left.min(ppb));
            picker.insert(b);
        }
        if self.translation[b.0 as usize] {
            self.t_die = self.fullest_translation_die();
        }
    }

    /// RAM for mapping and bookkeeping: the CMT (at its high-water mark), the GTD,
    /// the valid-page bitmap, both pickers and allocators, and the pool map.
    pub fn ram_bytes(&self) -> u64 {
        self.cmt.ram_bytes()
            + self.gtd.len() as u64 * 4
            + self.valid.ram_bytes()
            + self.data_picker.ram_bytes()
            + self.tpicker.ram_bytes()
            + self.data_alloc.ram_bytes()
            + self.t_alloc.ram_bytes()
            + (self.translation.len() as u64).div_ceil(8)
    }

    /// Checks mappings, valid bits, valid counts and the CMT against the medium.
    pub fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        let g = &self.geometry;
        let mut per_block = vec![0u32; g.total_blocks() as usize];
        for lpn in 0..self.logical_pages {
            let Some(ppa) = self.current(lpn) else { continue };
            let b = g.block_of(ppa);
            if !self.valid.get(ppa) || self.translation[b.0 as usize] {
                return Err(format!("lpn {lpn} maps to {ppa:?}: not a valid data page"));
            }
            match flash.nand().peek_oob(ppa) {
                Some(oob) if oob.lpn == lpn && oob.kind == PageKind::Data => {}
                other => return Err(format!("lpn {lpn} maps to {ppa:?}, whose OOB is {other:?}")),
            }
            per_block[b.0 as usize] += 1;
        }
        for (t, &p) in self.gtd.iter().enumerate() {
            if p == NONE {
                continue;
            }
            let ppa = Ppa(p);
            let b = g.block_of(ppa);
            match flash.nand().peek_oob(ppa) {
                Some(oob) if oob.lpn as usize == t && oob.kind == PageKind::Map => {}
                other => return Err(format!("translation page {t} at {ppa:?} has OOB {other:?}")),
            }
            if !self.valid.get(ppa) || !self.translation[b.0 as usize] {
                return Err(format!("translation page {t} at {ppa:?} is not a valid translation page"));
            }
            per_block[b.0 as usize] += 1;
        }
        for b in (0..g.total_blocks()).map(BlockId) {
            let counted = self.valid.count(g.ppa(b, 0), g.pages_per_block);
            let picker = if self.translation[b.0 as usize] { &self.tpicker } else { &self.data_picker };
            if counted != per_block[b.0 as usize] || counted != picker.valid(b) {
                return Err(format!(
                    "block {}: {} mapped pages, {counted} valid bits, picker says {}",
                    b.0,
                    per_block[b.0 as usize],
                    picker.valid(b)
                ));
            }
        }
        for (lpn, v, dirty) in self.cmt.iter() {
            if !dirty && v != self.on_flash.get(lpn as usize) {
                return Err(format!("clean CMT entry of lpn {lpn} differs from its translation page"));
            }
        }
        Ok(())
    }
}
