//! The Nameless-Write device: its commands, garbage collection with migration
//! up-calls, and the redirect table (see the module documentation of
//! [`super`] for the design and its contract).

use std::collections::BTreeMap;

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, Payload, Ppa};

use super::{Migration, Nameless, NamelessConfig, PhysAddr, DATA, MOVED, VIRTUAL};
use crate::alloc::{Allocation, BlockAllocator};
use crate::mapping::{PageTable, ValidMap};
use crate::victim::GreedyPicker;
use crate::{check_lpn, Durability, Flash, Ftl, FtlError, Hint, Io, Lpn, Purpose};

/// The device half of the Nameless-Write split FTL (003 Section 3.4): data
/// pages placed by the device and addressed by the host, metadata pages mapped
/// by a small table, migration up-calls with a redirect table until the host
/// acknowledges.
#[derive(Debug)]
pub struct NamelessDevice {
    pub(super) config: NamelessConfig,
    pub(super) geometry: Geometry,
    pub(super) layout: Layout,
    /// Live pages the device holds (data and metadata).
    pub(super) capacity: u32,
    /// The metadata (virtual-write) space.
    pub(super) virtual_pages: u32,
    /// Metadata address to page.
    pub(super) vmap: PageTable,
    /// Per physical page: holds live data or metadata.
    pub(super) valid: ValidMap,
    /// Per physical page: the live page is metadata (a virtual write).
    pub(super) meta: ValidMap,
    /// Valid pages per block; the closed blocks are the GC candidates.
    pub(super) picker: GreedyPicker,
    pub(super) alloc: BlockAllocator,
    /// Live data pages.
    pub(super) data_live: u64,
    /// Pending migrations: the address the host may still hold, to the page
    /// now holding the block and its tag.
    pub(super) redirect: BTreeMap<PhysAddr, (PhysAddr, u32)>,
    /// Up-calls not yet taken by the host.
    pub(super) queue: Vec<Migration>,
    pub(super) migrations: u64,
    /// Blocks static wear leveling moved off and freed.
    pub(super) wear_level_moves: u64,
}

impl NamelessDevice {
    pub(super) fn empty(config: NamelessConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let (capacity, virtual_pages) = config.capacity(&g, good)?;
        Ok(NamelessDevice {
            config,
            geometry: g,
            layout: Layout::new(&g),
            capacity,
            virtual_pages,
            vmap: PageTable::new(virtual_pages),
            valid: ValidMap::new(g.total_pages()),
            meta: ValidMap::new(g.total_pages()),
            picker: GreedyPicker::new(g.total_blocks(), g.pages_per_block),
            alloc: BlockAllocator::empty(&g, 1),
            data_live: 0,
            redirect: BTreeMap::new(),
            queue: Vec::new(),
            migrations: 0,
            wear_level_moves: 0,
        })
    }

    /// A device on a freshly formatted medium.
    pub fn format(config: NamelessConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut d = Self::empty(config, io)?;
        d.alloc = BlockAllocator::formatted(&d.geometry, 1, |b| io.is_bad(b));
        Ok(d)
    }

    /// The metadata (virtual-write) space, in pages.
    pub fn virtual_pages(&self) -> u32 {
        self.virtual_pages
    }

    /// The address of page `ppa` as it is now.
    pub(super) fn addr(&self, io: &Io, ppa: Ppa) -> PhysAddr {
        PhysAddr::new(ppa, io.erase_count(self.layout.block_of(ppa)))
    }

    /// The next page near `die`; a block it fills becomes a GC candidate.
    fn next_page(&mut self, die: DieId) -> Result<Ppa, FtlError> {
        let Allocation { ppa, filled } = self
            .alloc
            .next_page(0, die)
            .ok_or_else(|| FtlError::DeviceFull("no open block has room and no block is free".into()))?;
        if let Some(b) = filled {
            self.picker.insert(b);
        }
        Ok(ppa)
    }

    /// The next page near `die`, after retiring `bad`, a block that went bad
    /// under a program ([`Io::program_placed`]): it becomes a GC candidate, so
    /// its live pages are moved off, and it is never erased nor freed.
    fn place(&mut self, die: DieId, bad: Option<BlockId>) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            if self.alloc.retire(b).is_some() {
                self.picker.insert(b);
            }
        }
        self.next_page(die)
    }

    /// Marks `ppa` live (`meta`: a metadata page).
    pub(super) fn live(&mut self, ppa: Ppa, meta: bool) {
        self.valid.set(ppa);
        if meta {
            self.meta.set(ppa);
        }
        self.picker.inc(self.layout.block_of(ppa));
    }

    /// Marks `ppa`, live, dead.
    fn dead(&mut self, ppa: Ppa) {
        self.valid.clear(ppa);
        self.meta.clear(ppa);
        self.picker.dec(self.layout.block_of(ppa));
    }

    /// Reclaims one victim block: its live pages are moved (data pages with a
    /// migration each), then it is erased. Returns false if no candidate has a
    /// reclaimable page.
    fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.picker.peek_min() else {
            return Ok(false);
        };
        let ppb = self.geometry.pages_per_block;
        if self.picker.valid(victim) >= ppb {
            return Ok(false);
        }
        self.picker.remove(victim);
        let die = self.layout.die_of_block(victim);
        let generation = io.erase_count(victim);
        let sources: Vec<Ppa> = self.valid.iter_set(self.geometry.ppa(victim, 0), ppb).collect();
        for src in sources {
            if let Err(e) = self.move_page(io, src, generation, die) {
                // The pages moved so far stay moved; the rest keep the victim
                // a candidate.
                self.picker.insert(victim);
                return Err(e);
            }
        }
        if io.reclaim(victim, Purpose::Gc)? {
            self.alloc.release(victim);
        }
        if self.config.wear_leveling_delta > 0 {
            self.level_wear(io)?;
        }
        Ok(true)
    }

    /// Static wear leveling (`wear_leveling_delta`): moves the live pages of
    /// the least-erased block holding any off it when the most-erased good
    /// block is more than the delta ahead, then frees it. Only while more
    /// blocks are free than garbage collection keeps, so the moves never eat
    /// its reserve.
    fn level_wear(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.alloc.free_blocks() <= self.config.gc_free_blocks {
            return Ok(());
        }
        let blocks = self.geometry.total_blocks();
        let good = (0..blocks).map(BlockId).filter(|&b| !io.is_bad(b));
        let Some(most) = good.clone().map(|b| io.erase_count(b)).max() else {
            return Ok(());
        };
        let cold = good
            .filter(|&b| self.picker.contains(b) && self.picker.valid(b) > 0)
            .min_by_key(|&b| (io.erase_count(b), b.0));
        let Some(cold) = cold else {
            return Ok(());
        };
        let generation = io.erase_count(cold);
        if most - generation <= self.config.wear_leveling_delta {
            return Ok(());
        }
        self.picker.remove(cold);
        let die = self.layout.die_of_block(cold);
        let ppb = self.geometry.pages_per_block;
        let sources: Vec<Ppa> = self.valid.iter_set(self.geometry.ppa(cold, 0), ppb).collect();
        for src in sources {
            if let Err(e) = self.move_page(io, src, generation, die) {
                self.picker.insert(cold);
                return Err(e);
            }
        }
        self.wear_level_moves += 1;
        if io.reclaim(cold, Purpose::WearLeveling)? {
            self.alloc.release(cold);
        }
        Ok(())
    }

    /// Moves the live page `src` (of a block erased `generation` times) to a
    /// page near `die`. A data page's copy records the move in its OOB
    /// ([`MOVED`]) and queues a migration; a chain of pending moves is
    /// redirected to the new page.
    fn move_page(&mut self, io: &mut Io, src: Ppa, generation: u32, die: DieId) -> Result<(), FtlError> {
        if self.meta.get(src) {
            // A metadata page's OOB says the same after the move: a copy
            // (copyback inside a plane).
            let (dst, oob) = io.copy_placed(src, Purpose::Gc, |_, bad| self.place(die, bad))?;
            self.dead(src);
            self.live(dst, true);
            let moved = self.vmap.relocate(oob.lpn as usize, src, dst);
            debug_assert!(moved, "metadata page {} left {src:?} during GC", oob.lpn);
            return Ok(());
        }
        // A data page's copy carries the record of the move in its OOB, so it
        // is read and programmed again (a copyback would keep the source's OOB).
        let (data, oob) = io.read(src, Purpose::Gc)?;
        let (dst, _) = io.program_placed(oob.lpn, MOVED, data, Purpose::Gc, |_, bad| self.place(die, bad))?;
        io.supersede(src);
        self.dead(src);
        self.live(dst, false);
        let old = PhysAddr::new(src, generation);
        let new = self.addr(io, dst);
        for target in self.redirect.values_mut() {
            if target.0.ppa() == src {
                target.0 = new;
            }
        }
        self.redirect.insert(old, (new, oob.lpn));
        self.queue.push(Migration { old: Some(old), new, tag: oob.lpn, moved: true });
        self.migrations += 1;
        Ok(())
    }

    /// Collects garbage while at most `free_blocks` blocks are free (at most one
    /// pass per block of the device, then the caller's allocation decides).
    fn collect_until(&mut self, io: &mut Io, free_blocks: u32) -> Result<(), FtlError> {
        let passes = self.geometry.total_blocks();
        crate::victim::collect_while(self, io, passes, |s| s.alloc.free_blocks() <= free_blocks, Self::collect_one)
    }

    /// The page holding the data block the host addresses as `addr` (through
    /// the redirect of a pending migration), or the error naming it.
    fn resolve(&self, io: &Io, addr: PhysAddr, what: &str) -> Result<Ppa, FtlError> {
        let pages = self.geometry.total_pages();
        if addr.ppa().0 >= pages {
            return Err(FtlError::BadCommand(format!(
                "{what} of physical address {addr}: beyond the device's {pages} pages; use an address a nameless \
                 write or a migration returned"
            )));
        }
        if let Some(&(new, _)) = self.redirect.get(&addr) {
            return Ok(new.ppa());
        }
        let ppa = addr.ppa();
        let now = io.erase_count(self.layout.block_of(ppa));
        if addr.generation() != now {
            return Err(FtlError::BadCommand(format!(
                "{what} of physical address {addr}: its block was erased since (generation {now} now); the data \
                 moved (apply the migrations from take_migrations, or the replay after a power cut) or was freed"
            )));
        }
        if !self.valid.get(ppa) || self.meta.get(ppa) {
            return Err(FtlError::BadCommand(format!(
                "{what} of physical address {addr}: the page holds no live data block (never written by a nameless \
                 write, or freed); use an address a nameless write or a migration returned"
            )));
        }
        Ok(ppa)
    }

    /// Programs a host page (`tag` or metadata address in the OOB), after
    /// garbage collection if free blocks are low.
    fn host_program(&mut self, io: &mut Io, lpn: u32, meta: bool, data: Payload) -> Result<Ppa, FtlError> {
        let target = self.config.gc_free_blocks;
        io.independent(|io| self.collect_until(io, target))?;
        let die = io.free_die_from(self.alloc.next_die());
        let kind = if meta { VIRTUAL } else { DATA };
        let (ppa, _) = io.program_placed(lpn, kind, data, Purpose::Host, |_, bad| self.place(die, bad))?;
        Ok(ppa)
    }

    /// The most live data pages.
    fn data_capacity_pages(&self) -> u64 {
        u64::from(self.capacity - self.virtual_pages)
    }
}

impl Nameless for NamelessDevice {
    fn nameless_write(&mut self, io: &mut Io, tag: u32, data: Payload) -> Result<PhysAddr, FtlError> {
        let cap = self.data_capacity_pages();
        if self.data_live >= cap {
            return Err(FtlError::DeviceFull(format!(
                "nameless write of tag {tag}: the device holds its capacity of {cap} data pages; free some"
            )));
        }
        let ppa = self.host_program(io, tag, false, data)?;
        self.live(ppa, false);
        self.data_live += 1;
        io.ack();
        Ok(self.addr(io, ppa))
    }

    fn virtual_write(&mut self, io: &mut Io, lba: u32, data: Payload) -> Result<(), FtlError> {
        let l = check_lpn(Lpn(lba), self.virtual_pages)?;
        let ppa = self.host_program(io, lba, true, data)?;
        // Garbage collection may have moved the old copy: read the map after.
        if let Some(old) = self.vmap.set(l, ppa) {
            io.supersede(old);
            self.dead(old);
        }
        self.live(ppa, true);
        io.ack();
        Ok(())
    }

    fn virtual_read(&mut self, io: &mut Io, lba: u32) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(Lpn(lba), self.virtual_pages)?;
        let Some(ppa) = self.vmap.get(l) else {
            return Ok(None);
        };
        Ok(Some(io.read(ppa, Purpose::Host)?.0))
    }

    fn physical_read(&mut self, io: &mut Io, addr: PhysAddr) -> Result<Payload, FtlError> {
        let ppa = self.resolve(io, addr, "physical read")?;
        Ok(io.read(ppa, Purpose::Host)?.0)
    }

    fn free(&mut self, io: &mut Io, addr: PhysAddr) -> Result<(), FtlError> {
        let ppa = self.resolve(io, addr, "free")?;
        self.dead(ppa);
        self.data_live -= 1;
        self.redirect.retain(|_, target| target.0.ppa() != ppa);
        Ok(())
    }

    fn take_migrations(&mut self) -> Vec<Migration> {
        std::mem::take(&mut self.queue)
    }

    fn ack_migration(&mut self, m: &Migration) {
        if let Some(old) = m.old {
            self.redirect.remove(&old);
        }
    }

    fn pending_migrations(&self) -> u64 {
        self.redirect.len() as u64
    }

    fn migrations(&self) -> u64 {
        self.migrations
    }

    fn data_pages(&self) -> u64 {
        self.data_live
    }

    fn data_capacity(&self) -> u64 {
        self.data_capacity_pages()
    }

    fn virtual_pages(&self) -> u32 {
        self.virtual_pages
    }
}

impl Ftl for NamelessDevice {
    fn name(&self) -> &'static str {
        "nameless"
    }

    fn logical_pages(&self) -> u32 {
        self.virtual_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.virtual_read(io, lpn.0)
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        self.virtual_write(io, lpn.0, data)
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.virtual_pages)?;
        if let Some(old) = self.vmap.unmap(l) {
            self.dead(old);
        }
        Ok(())
    }

    fn durability(&self) -> Durability {
        Durability::OnAck
    }

    fn ram_bytes(&self) -> u64 {
        // A redirect entry: two addresses and a tag; an up-call: two optional
        // addresses, a tag and a flag.
        self.vmap.ram_bytes()
            + self.valid.ram_bytes()
            + self.meta.ram_bytes()
            + self.picker.ram_bytes()
            + self.alloc.ram_bytes()
            + self.redirect.len() as u64 * 20
            + self.queue.capacity() as u64 * std::mem::size_of::<Migration>() as u64
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        super::recover::check(self, flash)
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![("migrations", self.migrations as f64), ("wear_level_moves", self.wear_level_moves as f64)]
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: None, placement: Some(self) }
    }

    fn extension(&mut self) -> crate::Extension<'_> {
        crate::Extension::Nameless(self)
    }
}

impl crate::Placement for NamelessDevice {
    /// The die of metadata address `lpn` (the block interface's logical page).
    fn die_of(&self, lpn: Lpn) -> Option<DieId> {
        self.vmap.die_of(lpn, &self.layout)
    }
}
