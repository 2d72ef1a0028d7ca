//! The page-mapped core: what every page-mapped scheme is made of, written once.
//!
//! A page-mapped FTL keeps a logical-to-physical table ([`PageTable`]), a
//! validity bit per physical page ([`ValidMap`]), a block allocator with open
//! blocks per stream ([`BlockAllocator`]), and per-block books of valid pages
//! that its victim choice reads ([`BlockBooks`]: a [`VictimPicker`] in
//! [`crate::schemes::page::pagemap`] (and FSR over it), MultiLog's per-set logs, Lazy-RTGC's
//! per-die books (and WAO-GC, built on its partial tasks)). What the schemes
//! differ in is *when* they collect (a free-block threshold, a per-die page
//! threshold with partial tasks), *which* victim they take, and *where* a page
//! goes (a die, a frequency set); what they share is the mechanics, here:
//!
//! - [`PageCore::write_placed`]: a host write programmed on a page the scheme
//!   places, the old copy superseded and invalidated, the table updated;
//! - [`PageCore::move_page`]: one valid page moved by garbage collection (the
//!   step of every GC loop: whole victims in MultiLog, `alpha` pages per partial
//!   task in Lazy-RTGC, unexpired pages in Telomere);
//! - [`PageCore::evacuate`]: a whole victim's valid pages moved in one pass, with
//!   the table updated in a second tight loop (its entries are scattered in RAM;
//!   independent loads let the cache misses overlap), for the schemes that pick
//!   with a [`VictimPicker`];
//! - [`PageCore::reclaim`], [`PageCore::trim`], [`PageCore::read`],
//!   [`PageCore::recover`] (the OOB scan and the valid map and books rebuilt from
//!   it), RAM and the invariant check.
//!
//! Telomere ([`crate::schemes::realtime::telomere`]) keeps its own state: its garbage collection
//! is driven by data lifetimes (a block is erased whole when the newest expiry
//! written into it passes; pool GC drops expired pages instead of moving them),
//! which needs a physical-to-logical map and per-block stamps, owners and
//! task-group quotas at every step, so its moves are not this core's.
//!
//! A scheme hands the core a *place* function: `place(alloc, books, io, bad)`
//! hands out the next page for the data at hand; after a failed program
//! ([`Io::program_placed`], [`Io::copy_placed`]) it is called with the block
//! that went bad, which the scheme retires ([`BlockAllocator::retire`]) and
//! makes a GC candidate in its books.

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, Geometry, PageKind, Payload, Ppa, SimTime};

use crate::alloc::BlockAllocator;
use crate::mapping::{PageTable, ValidMap};
use crate::scan::Scan;
use crate::victim::VictimPicker;
use crate::{check_lpn, Flash, FtlError, Io, Lpn, Prefetch, Purpose};

/// Per-block counts of valid pages that a scheme's victim choice reads.
pub trait BlockBooks {
    /// A page of `block` became valid at `now` (written or moved there).
    fn page_valid(&mut self, block: BlockId, now: SimTime);
    /// A page of `block` became invalid because garbage collection moved it.
    fn page_invalid(&mut self, block: BlockId);
    /// A page of `block` became invalid because the host overwrote or trimmed
    /// it (MultiLog counts these apart, as updates of the block's set).
    fn page_dropped(&mut self, block: BlockId) {
        self.page_invalid(block);
    }
}

impl<P: VictimPicker> BlockBooks for P {
    #[inline]
    fn page_valid(&mut self, block: BlockId, now: SimTime) {
        self.written(block, now);
    }
    #[inline]
    fn page_invalid(&mut self, block: BlockId) {
        self.dec(block);
    }
}

/// The table, valid map and allocator of a page-mapped scheme, with the
/// mechanics they share (see the module documentation).
#[derive(Debug)]
pub struct PageCore {
    /// The device's shape.
    pub geometry: Geometry,
    /// Its address arithmetic.
    pub layout: Layout,
    /// Pages the host may address.
    pub logical_pages: u32,
    /// Where each logical page is.
    pub table: PageTable,
    /// Which physical pages hold a current copy.
    pub valid: ValidMap,
    /// Free, open and retired blocks.
    pub alloc: BlockAllocator,
    /// Scratch lists of [`PageCore::evacuate`]: the victim's valid pages, and
    /// the logical page and new location of each one moved.
    sources: Vec<Ppa>,
    lpns: Vec<u32>,
    dsts: Vec<Ppa>,
}

impl PageCore {
    /// An empty core for `logical_pages` on `geometry`, with `streams` open
    /// blocks per die and no free block yet (format with
    /// [`BlockAllocator::formatted`], or [`PageCore::recover`]).
    pub fn new(geometry: Geometry, logical_pages: u32, streams: u32) -> Self {
        PageCore {
            geometry,
            layout: Layout::new(&geometry),
            logical_pages,
            table: PageTable::new(logical_pages),
            valid: ValidMap::new(geometry.total_pages()),
            alloc: BlockAllocator::empty(&geometry, streams),
            sources: Vec::new(),
            lpns: Vec::new(),
            dsts: Vec::new(),
        }
    }

    /// Marks every good block free (a freshly formatted medium).
    pub fn format(&mut self, io: &Io, streams: u32) {
        self.alloc = BlockAllocator::formatted(&self.geometry, streams, |b| io.is_bad(b));
    }

    /// The logical page `lpn` checked against the logical space, as an index.
    #[inline]
    pub fn index(&self, lpn: Lpn) -> Result<usize, FtlError> {
        check_lpn(lpn, self.logical_pages)
    }

    /// [`crate::Ftl::prefetch`] for a page-mapped scheme: the table entry, and
    /// for [`Prefetch::Page`] the medium's records of the page it maps to.
    #[inline]
    pub fn prefetch(&self, flash: &Flash, lpn: Lpn, what: Prefetch) {
        match what {
            Prefetch::Map => self.table.prefetch(lpn.0 as usize),
            Prefetch::Page => {
                if let Some(ppa) = self.table.lookup(lpn.0 as usize) {
                    flash.prefetch(ppa);
                }
            }
            Prefetch::Write => {
                if let Some(ppa) = self.table.lookup(lpn.0 as usize) {
                    self.valid.prefetch(ppa);
                    flash.prefetch_supersede(ppa);
                }
            }
        }
    }

    /// Reads logical page `lpn` for the host; `None` if it was never written
    /// (or trimmed).
    #[inline]
    pub fn read(&self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = self.index(lpn)?;
        let Some(ppa) = self.table.get(l) else {
            return Ok(None);
        };
        let (data, _) = io.read(ppa, Purpose::Host)?;
        Ok(Some(data))
    }

    /// Records that logical page `lpn`, which was at `old`, is now at `ppa`:
    /// the old copy is invalid (dropped by the host), the new one valid.
    #[inline(always)]
    pub fn remap<B: BlockBooks>(&mut self, books: &mut B, lpn: usize, old: Option<Ppa>, ppa: Ppa, now: SimTime) {
        self.table.replace(lpn, old, ppa);
        if let Some(old) = old {
            self.valid.clear(old);
            books.page_dropped(self.layout.block_of(old));
        }
        self.valid.set(ppa);
        books.page_valid(self.layout.block_of(ppa), now);
    }

    /// Programs the host's `data` for logical page `lpn` (index `l`, known to
    /// be at `old`) on a page `place` hands out, supersedes the old copy and
    /// remaps it. Returns the new page.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn write_placed<B: BlockBooks>(
        &mut self,
        io: &mut Io,
        books: &mut B,
        lpn: Lpn,
        old: Option<Ppa>,
        data: Payload,
        place: impl FnMut(&mut BlockAllocator, &mut B, &Io, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<Ppa, FtlError> {
        self.write_placed_tagged(io, books, lpn, old, data, 0, place)
    }

    /// As [`PageCore::write_placed`], with the scheme's `tag` in the page's
    /// OOB (a copy keeps it).
    #[allow(clippy::too_many_arguments)]
    pub fn write_placed_tagged<B: BlockBooks>(
        &mut self,
        io: &mut Io,
        books: &mut B,
        lpn: Lpn,
        old: Option<Ppa>,
        data: Payload,
        tag: u8,
        mut place: impl FnMut(&mut BlockAllocator, &mut B, &Io, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<Ppa, FtlError> {
        let alloc = &mut self.alloc;
        let (ppa, _) = io.program_placed_tagged(lpn.0, PageKind::Data, tag, data, Purpose::Host, |io, bad| {
            place(alloc, books, io, bad)
        })?;
        if let Some(old) = old {
            io.supersede(old);
        }
        self.remap(books, lpn.0 as usize, old, ppa, io.now());
        Ok(ppa)
    }

    /// Programs `pages` (host data, one page on each of several planes of
    /// one die) by one multi-plane program ([`Io::program_multi`]); each page
    /// programmed supersedes its logical page's old copy and is remapped.
    /// Returns the pages whose program failed, each with the page it failed
    /// on and its data back: the caller retires that block and writes the
    /// page elsewhere (its logical page still maps to its old copy).
    pub fn program_multi_host<B: BlockBooks>(
        &mut self,
        io: &mut Io,
        books: &mut B,
        pages: Vec<ftlab_nand::PlanePage>,
    ) -> Result<Vec<(Lpn, Ppa, Payload)>, FtlError> {
        let placed: Vec<(u32, Ppa)> = pages.iter().map(|p| (p.lpn, p.ppa)).collect();
        let results = io.program_multi(pages, Purpose::Host)?;
        let now = io.now();
        let mut failed = Vec::new();
        for ((lpn, ppa), result) in placed.into_iter().zip(results) {
            match result {
                Ok(_) => {
                    let old = self.table.get(lpn as usize);
                    if let Some(old) = old {
                        io.supersede(old);
                    }
                    self.remap(books, lpn as usize, old, ppa, now);
                }
                Err(failure) => {
                    let ftlab_nand::ProgramFailure { error, data } = *failure;
                    let Some(data) = data else { return Err(error.into()) };
                    failed.push((Lpn(lpn), ppa, data));
                }
            }
        }
        Ok(failed)
    }

    /// Unmaps logical page index `l`; its copy, if any, is invalid. Returns
    /// where it was.
    #[inline]
    pub fn trim<B: BlockBooks>(&mut self, books: &mut B, l: usize) -> Option<Ppa> {
        let old = self.table.unmap(l)?;
        self.valid.clear(old);
        books.page_dropped(self.layout.block_of(old));
        Some(old)
    }

    /// Moves the valid page `src` (garbage collection) to a page `place` hands
    /// out: the table, the valid map and the books follow. Returns the new page
    /// and the logical page moved.
    #[inline]
    pub fn move_page<B: BlockBooks>(
        &mut self,
        io: &mut Io,
        books: &mut B,
        src: Ppa,
        mut place: impl FnMut(&mut BlockAllocator, &mut B, &Io, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<(Ppa, u32), FtlError> {
        let now = io.now();
        let alloc = &mut self.alloc;
        let (dst, oob) = io.copy_placed(src, Purpose::Gc, |io, bad| place(alloc, books, io, bad))?;
        let hit = self.table.relocate(oob.lpn as usize, src, dst);
        debug_assert!(hit, "lpn {} left {src:?} during GC", oob.lpn);
        self.valid.clear(src);
        books.page_invalid(self.layout.block_of(src));
        self.valid.set(dst);
        books.page_valid(self.layout.block_of(dst), now);
        Ok((dst, oob.lpn))
    }

    /// Moves every valid page of `victim` (already taken out of `picker`'s
    /// candidates) to pages `place` hands out, then updates the table in one
    /// pass. If a move fails, the pages not moved stay valid in the victim,
    /// which is a candidate again, and the error is returned; the victim is
    /// not reclaimed here ([`PageCore::reclaim`]).
    pub fn evacuate<P: VictimPicker>(
        &mut self,
        io: &mut Io,
        picker: &mut P,
        victim: BlockId,
        mut place: impl FnMut(&mut BlockAllocator, &mut P, &Io, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<(), FtlError> {
        let ppb = self.geometry.pages_per_block;
        let first = self.geometry.ppa(victim, 0);
        let mut sources = std::mem::take(&mut self.sources);
        let mut lpns = std::mem::take(&mut self.lpns);
        let mut dsts = std::mem::take(&mut self.dsts);
        sources.clear();
        lpns.clear();
        dsts.clear();
        self.valid.extend_set(first, ppb, &mut sources);
        let now = io.now();
        let mut result = Ok(());
        for &src in &sources {
            let alloc = &mut self.alloc;
            match io.copy_placed(src, Purpose::Gc, |io, bad| place(alloc, picker, io, bad)) {
                Ok((dst, oob)) => {
                    debug_assert_eq!(self.table.get(oob.lpn as usize), Some(src));
                    // Its table entry, updated below once every page has moved,
                    // is a random load: start it now, under the copies that follow.
                    self.table.prefetch(oob.lpn as usize);
                    self.valid.set(dst);
                    picker.written(self.layout.block_of(dst), now);
                    lpns.push(oob.lpn);
                    dsts.push(dst);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let moved = lpns.len();
        for (i, &lpn) in lpns.iter().enumerate() {
            let hit = self.table.relocate(lpn as usize, sources[i], dsts[i]);
            debug_assert!(hit, "lpn {lpn} left {:?} during GC", sources[i]);
        }
        if moved == sources.len() {
            self.valid.clear_range(first, ppb);
            picker.set_valid(victim, 0);
        } else {
            // A failed move leaves the rest of the victim valid and a candidate.
            for &src in &sources[..moved] {
                self.valid.clear(src);
                picker.dec(victim);
            }
            picker.insert(victim);
        }
        self.sources = sources;
        self.lpns = lpns;
        self.dsts = dsts;
        result
    }

    /// The logical pages the last [`PageCore::evacuate`] moved.
    #[inline]
    pub fn moved(&self) -> &[u32] {
        &self.lpns
    }

    /// The pages the last [`PageCore::evacuate`] moved, where they were, in
    /// the order it moved them.
    #[inline]
    pub fn moved_from(&self) -> &[Ppa] {
        &self.sources[..self.lpns.len()]
    }

    /// Erases `victim` (no valid page left) and frees it; a block that went
    /// bad is retired instead ([`Io::reclaim`]). Returns whether it was freed.
    #[inline]
    pub fn reclaim(&mut self, io: &mut Io, victim: BlockId, purpose: Purpose) -> Result<bool, FtlError> {
        let freed = io.reclaim(victim, purpose)?;
        if freed {
            self.alloc.release(victim);
        }
        Ok(freed)
    }

    /// Rebuilds the table from the medium by the OOB scan ([`crate::scan`]:
    /// for each logical page the newest copy wins), then the valid map and
    /// `books` from the table (each page valid at time zero). The scan's free,
    /// open and closed blocks are returned for the scheme to place.
    pub fn recover<B: BlockBooks>(&mut self, io: &mut Io, books: &mut B) -> Result<Scan, FtlError> {
        let scan = self.recover_table(io)?;
        self.rebuild_valid(books);
        Ok(scan)
    }

    /// The first half of [`PageCore::recover`]: the table from the OOB scan.
    pub fn recover_table(&mut self, io: &mut Io) -> Result<Scan, FtlError> {
        crate::scan::scan(io, &mut self.table)
    }

    /// The second half of [`PageCore::recover`]: the valid map and `books`
    /// from the table, each page valid at time zero.
    pub fn rebuild_valid<B: BlockBooks>(&mut self, books: &mut B) {
        for (_, ppa) in self.table.iter() {
            self.valid.set(ppa);
            books.page_valid(self.layout.block_of(ppa), SimTime::ZERO);
        }
    }

    /// RAM of the table, the valid map and the allocator, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        self.table.ram_bytes() + self.valid.ram_bytes() + self.alloc.ram_bytes()
    }

    /// [`crate::FtlMemory`] of the table, the valid map, the allocator and
    /// `picker`, from their allocated capacity.
    pub fn memory(&self, picker: &dyn VictimPicker) -> crate::FtlMemory {
        crate::FtlMemory {
            map: self.table.capacity_bytes(),
            valid: self.valid.capacity_bytes(),
            other: self.alloc.ram_bytes() + picker.ram_bytes(),
        }
    }

    /// The table, valid map and `picker` agree with each other and the medium
    /// ([`crate::mapping::check_page_map`]).
    pub fn check(&self, picker: &dyn VictimPicker, flash: &Flash) -> Result<(), String> {
        crate::mapping::check_page_map(&self.geometry, &self.table, &self.valid, picker, flash)
    }

    /// The die holding `lpn`, if mapped ([`crate::Placement::die_of`]).
    #[inline]
    pub fn die_of(&self, lpn: Lpn) -> Option<ftlab_nand::DieId> {
        self.table.die_of(lpn, &self.layout)
    }

    /// The plane of its die and the page offset in its block of `lpn`, if
    /// mapped ([`crate::Placement::read_slot`]).
    #[inline]
    pub fn read_slot(&self, lpn: Lpn) -> Option<(u32, u32)> {
        let ppa = self.table.lookup(lpn.0 as usize)?;
        Some((self.layout.plane_of_block(self.layout.block_of(ppa)), self.layout.page_in_block(ppa)))
    }
}
