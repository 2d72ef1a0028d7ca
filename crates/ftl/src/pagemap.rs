//! Pure page mapping: a full logical-to-physical table in RAM, writes appended to
//! one open block per die and striped round-robin over the dies (skipping busy
//! dies when an idle one exists), greedy (or
//! cost-benefit) garbage collection when free blocks run low, trim, and recovery
//! by scanning every page's OOB (the newest sequence number wins).
//!
//! The page-mapped schemes of the papers are configurations of it
//! ([`PageMapConfig::preset`]):
//!
//! - `pure-page-level` — the Pure-Page-Level scheme of 001_ca7ecce2bd5249b9.txt
//!   (Section 6.1, after Ban 1995): the whole physical space mapped, one extra swap
//!   block holding valid-page copies, GC only when no free page is left:
//!   `over_provisioning = 0`, `gc_free_blocks = 1`, greedy victims. ftlab also
//!   keeps one open block per die and one block of slack (see
//!   [`PageMapConfig::logical_pages`]); on a one-die device that is the paper's
//!   configuration plus one block.
//! - `pagemap` — the page-map FTL of 000_ffe2fafb22bcad8e.txt (Sections 6.4 and 7,
//!   the non-real-time baseline of Figures 10, 13 and 14): over-provisioning
//!   lambda = 0.10, first-in first-out free-block queue (no wear leveling), greedy
//!   victims, GC when the free blocks fall to 2. Its wear-leveled variant of
//!   Section 6.4 (Figure 10, RBER balancing) is `free_order = "rber"`: a new open
//!   block is the free block of its die with the lowest RBER (Eq. 27).
//! - `ppm-ftl` — the PPM-FTL of 004_15edfc19ad848aee.txt (Section 5, Figure 6):
//!   3% of the blocks over-provisioned (the paper sweeps 3% to 20%; set
//!   `over_provisioning`), greedy victims. The paper fills the device sequentially
//!   before measuring; that is the simulator's preconditioning, not an FTL setting.

use serde::{Deserialize, Serialize};

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, Geometry, PageKind, Payload, Ppa, SimTime};

use crate::alloc::{Allocation, BlockAllocator, FreeOrder};
use crate::mapping::{PageTable, ValidMap};
use crate::victim::{CostBenefitPicker, GreedyPicker, VictimPicker, VictimPolicy};
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// Configuration of [`PageMap`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageMapConfig {
    /// Fraction of the good physical pages hidden from the host, in [0, 1).
    /// 0 (the default) exports the largest logical space the scheme allows.
    pub over_provisioning: f64,
    /// Garbage collection runs before a write while the free blocks are at most
    /// this many (at least 1: the block GC copies into). Default 1.
    pub gc_free_blocks: u32,
    /// How victims are chosen. Default greedy.
    pub victim: VictimPolicy,
    /// In idle time, collect garbage until this many blocks are free (0 = never,
    /// the default).
    pub background_gc_free_blocks: u32,
    /// Which free block a new open block is: `fifo` (the default, no wear
    /// leveling) or `rber` (the lowest RBER first, 000 Section 6.4).
    pub free_order: FreeOrder,
}

impl Default for PageMapConfig {
    fn default() -> Self {
        PageMapConfig {
            over_provisioning: 0.0,
            gc_free_blocks: 1,
            victim: VictimPolicy::Greedy,
            background_gc_free_blocks: 0,
            free_order: FreeOrder::Fifo,
        }
    }
}

impl PageMapConfig {
    /// Named configurations: `pure-page-level`, `pagemap`, `ppm-ftl` (see the
    /// module documentation).
    pub fn preset(name: &str) -> Option<PageMapConfig> {
        let d = PageMapConfig::default();
        match name {
            "pure-page-level" => Some(d),
            "pagemap" => Some(PageMapConfig { over_provisioning: 0.10, gc_free_blocks: 2, ..d }),
            "ppm-ftl" => Some(PageMapConfig { over_provisioning: 0.03, gc_free_blocks: 2, ..d }),
            _ => None,
        }
    }

    /// Names accepted by [`PageMapConfig::preset`], with one line each.
    pub const PRESETS: [(&'static str, &'static str); 3] = [
        ("pure-page-level", "page mapping, whole space mapped, one swap block, GC when no free page is left (001)"),
        ("pagemap", "page mapping, 10% over-provisioning, greedy GC, FIFO free blocks (000)"),
        ("ppm-ftl", "pure page mapping with 3% over-provisioned blocks (004)"),
    ];

    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(0.0..1.0).contains(&self.over_provisioning) {
            return Err(FtlError::config(
                "ftl.over_provisioning",
                format!("pagemap.over_provisioning must be in [0, 1), got {}", self.over_provisioning),
            ));
        }
        if self.gc_free_blocks == 0 {
            return Err(FtlError::config(
                "ftl.gc_free_blocks",
                "pagemap.gc_free_blocks must be at least 1 (GC needs a free block to copy into)",
            ));
        }
        if self.free_order == FreeOrder::HealthBin {
            return Err(FtlError::config(
                "ftl.free_order",
                "pagemap.free_order = \"health-bin\" needs data separated by heat, which pagemap does not do \
                 (000 Section 6.2); use \"fifo\" or \"rber\"",
            ));
        }
        Ok(())
    }

    /// Logical pages exported on a device with `good_blocks` usable blocks. The
    /// highest utilization allowed keeps `gc_free_blocks` free, one open block per
    /// die, and one more block, so that the closed blocks always hold at least a
    /// block's worth of reclaimable pages and greedy GC always makes progress.
    pub fn logical_pages(&self, geometry: &Geometry, good_blocks: u32) -> Result<u32, FtlError> {
        let ppb = u64::from(geometry.pages_per_block);
        let slack = u64::from(self.gc_free_blocks) + u64::from(geometry.dies()) + 1;
        let max = u64::from(good_blocks).saturating_sub(slack) * ppb;
        let wanted = ((u64::from(good_blocks) * ppb) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        let logical = wanted.min(max);
        if logical == 0 {
            return Err(FtlError::config("device", format!(
                "the device is too small for pagemap: {good_blocks} good blocks, {slack} needed as GC reserve and open blocks"
            )));
        }
        Ok(logical as u32)
    }
}

/// The victim picker a configuration chooses is a type parameter of the page
/// map, not a branch taken on every write.
impl FtlBuilder for PageMapConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(match self.victim {
            VictimPolicy::Greedy => Box::new(PageMap::<GreedyPicker>::format(*self, io)?),
            VictimPolicy::CostBenefit => Box::new(PageMap::<CostBenefitPicker>::format(*self, io)?),
        })
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(match self.victim {
            VictimPolicy::Greedy => Box::new(PageMap::<GreedyPicker>::recover(*self, io)?),
            VictimPolicy::CostBenefit => Box::new(PageMap::<CostBenefitPicker>::recover(*self, io)?),
        })
    }
}

/// The page-mapped FTL, choosing its victims with `P`.
#[derive(Debug)]
pub struct PageMap<P: VictimPicker = GreedyPicker> {
    config: PageMapConfig,
    geometry: Geometry,
    layout: Layout,
    logical_pages: u32,
    table: PageTable,
    valid: ValidMap,
    picker: P,
    alloc: BlockAllocator,
    /// Scratch lists of one GC pass: the victim's valid pages, and the logical
    /// page and new location of each one moved.
    sources: Vec<Ppa>,
    lpns: Vec<u32>,
    dsts: Vec<Ppa>,
}

impl<P: VictimPicker> PageMap<P> {
    fn empty(config: PageMapConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let logical_pages = config.logical_pages(&g, good)?;
        Ok(PageMap {
            config,
            geometry: g,
            layout: Layout::new(&g),
            logical_pages,
            table: PageTable::new(logical_pages),
            valid: ValidMap::new(g.total_pages()),
            picker: P::new(g.total_blocks(), g.pages_per_block),
            alloc: BlockAllocator::empty(&g, 1),
            sources: Vec::new(),
            lpns: Vec::new(),
            dsts: Vec::new(),
        })
    }

    /// A page map on a freshly formatted medium.
    pub fn format(config: PageMapConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        ftl.alloc = BlockAllocator::formatted(&ftl.geometry, 1, |b| io.is_bad(b));
        Ok(ftl)
    }

    /// Rebuilds a page map from the medium: reads every programmed page's OOB;
    /// for each logical page the copy with the newest sequence number wins. Blocks
    /// whose erase was torn are erased again; on each die the partly written block
    /// with the newest data is reopened, other partly written blocks are closed
    /// (GC reclaims their unwritten pages).
    pub fn recover(config: PageMapConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let scan = crate::scan::scan(io, &mut ftl.table)?;
        for b in scan.free {
            ftl.alloc.release(b);
        }
        for (_, ppa) in ftl.table.iter() {
            ftl.valid.set(ppa);
            ftl.picker.written(ftl.layout.block_of(ppa), SimTime::ZERO);
        }
        for b in scan.closed {
            ftl.picker.insert(b);
        }
        for (b, next) in scan.open {
            ftl.alloc.reopen(0, b, next);
        }
        Ok(ftl)
    }

    /// Hands out the next page on `die` (or another die when it is out of room),
    /// registering a block that fills up as a GC candidate.
    #[inline]
    fn next_page(&mut self, io: &Io, die: ftlab_nand::DieId) -> Result<Ppa, FtlError> {
        let next = match self.config.free_order {
            FreeOrder::Fifo => self.alloc.next_page(0, die),
            // `validate` refuses health binning: one stream has no heat to bin by.
            FreeOrder::Rber | FreeOrder::HealthBin => self.alloc.next_page_by(0, die, |b| io.rber(b)),
        };
        let Allocation { ppa, filled } =
            next.ok_or_else(|| FtlError::DeviceFull("no open block has room and no block is free".into()))?;
        if let Some(b) = filled {
            self.picker.insert(b);
        }
        Ok(ppa)
    }

    /// The next page on `die` ([`PageMap::next_page`]), after retiring `bad`, a
    /// block that went bad under a program ([`Io::program_placed`]): it leaves
    /// the open blocks for the GC candidates, whose collection moves its valid
    /// pages off and never erases it.
    #[inline]
    fn place(&mut self, io: &Io, die: ftlab_nand::DieId, bad: Option<BlockId>) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            self.retire(b);
        }
        self.next_page(io, die)
    }

    #[cold]
    fn retire(&mut self, b: BlockId) {
        if self.alloc.retire(b).is_some() {
            self.picker.insert(b);
        }
    }

    /// Records that `lpn`, which was at `old`, now lives at `ppa`, invalidating
    /// its previous copy.
    #[inline]
    fn remap(&mut self, lpn: usize, old: Option<Ppa>, ppa: Ppa, now: SimTime) {
        self.table.replace(lpn, old, ppa);
        if let Some(old) = old {
            self.valid.clear(old);
            self.picker.dec(self.layout.block_of(old));
        }
        self.valid.set(ppa);
        self.picker.written(self.layout.block_of(ppa), now);
    }

    fn pick_victim(&mut self, now: SimTime) -> Option<BlockId> {
        self.picker.pick(now)
    }

    /// Reclaims one victim block. Returns false if no candidate has a reclaimable
    /// page.
    fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.pick_victim(io.now()) else {
            return Ok(false);
        };
        let ppb = self.geometry.pages_per_block;
        if self.picker.valid(victim) >= ppb {
            return Ok(false);
        }
        self.picker.remove(victim);
        let die = self.layout.die_of_block(victim);
        let first = self.geometry.ppa(victim, 0);
        // Move the valid pages, then update the table in one pass: its entries are
        // scattered in RAM, and a tight loop of independent loads lets the cache
        // misses overlap (a store miss per copy would hold back every later store).
        let mut sources = std::mem::take(&mut self.sources);
        let mut lpns = std::mem::take(&mut self.lpns);
        sources.clear();
        lpns.clear();
        sources.extend(self.valid.iter_set(first, ppb));
        let result = self.move_pages(io, &sources, die, &mut lpns);
        let moved = lpns.len();
        let dsts = &self.dsts;
        for (i, &lpn) in lpns.iter().enumerate() {
            let hit = self.table.relocate(lpn as usize, sources[i], dsts[i]);
            debug_assert!(hit, "lpn {lpn} left {:?} during GC", sources[i]);
        }
        if moved == sources.len() {
            self.valid.clear_range(first, ppb);
            self.picker.set_valid(victim, 0);
        } else {
            // A failed move leaves the rest of the victim valid and a candidate.
            for &src in &sources[..moved] {
                self.valid.clear(src);
                self.picker.dec(victim);
            }
            self.picker.insert(victim);
        }
        self.sources = sources;
        self.lpns = lpns;
        result?;
        if io.reclaim(victim, Purpose::Gc)? {
            self.alloc.release(victim);
        }
        Ok(true)
    }

    /// Copies each of `sources` to a new page near `die`, recording the logical
    /// page of each one moved in `lpns` and its new location in `self.dsts`; stops
    /// at the first failure.
    fn move_pages(
        &mut self,
        io: &mut Io,
        sources: &[Ppa],
        die: ftlab_nand::DieId,
        lpns: &mut Vec<u32>,
    ) -> Result<(), FtlError> {
        self.dsts.clear();
        let now = io.now();
        for &src in sources {
            let (dst, oob) = io.copy_placed(src, Purpose::Gc, |io, bad| self.place(io, die, bad))?;
            debug_assert_eq!(self.table.get(oob.lpn as usize), Some(src));
            self.valid.set(dst);
            self.picker.written(self.layout.block_of(dst), now);
            lpns.push(oob.lpn);
            self.dsts.push(dst);
        }
        Ok(())
    }

    /// Collects garbage while at most `free_blocks` blocks are free; returns
    /// whether any page moved.
    #[inline]
    fn collect_until(&mut self, io: &mut Io, free_blocks: u32) -> Result<bool, FtlError> {
        let mut collected = false;
        while self.alloc.free_blocks() <= free_blocks {
            collected = true;
            if !self.collect_one(io)? {
                break;
            }
        }
        Ok(collected)
    }
}

impl<P: VictimPicker + 'static> Ftl for PageMap<P> {
    fn name(&self) -> &'static str {
        "pagemap"
    }

    fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(lpn, self.logical_pages)?;
        let Some(ppa) = self.table.get(l) else {
            return Ok(None);
        };
        let (data, _) = io.read(ppa, Purpose::Host)?;
        Ok(Some(data))
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages)?;
        // The table entry is most likely a cache miss: load it first, so that the
        // allocation and the program below, which do not depend on it, overlap
        // with the load. Garbage collection may move the page; then load it again.
        let mut old = self.table.get(l);
        let free_target = self.config.gc_free_blocks;
        if io.independent(|io| self.collect_until(io, free_target))? {
            old = self.table.get(l);
        }
        // Stripe over the dies, skipping dies busy (e.g. with a GC pass) when an
        // idle one exists.
        let die = io.free_die_from(self.alloc.next_die());
        let (ppa, _) =
            io.program_placed(lpn.0, PageKind::Data, data, Purpose::Host, |io, bad| self.place(io, die, bad))?;
        if let Some(old) = old {
            io.supersede(old);
        }
        self.remap(l, old, ppa, io.now());
        io.ack();
        Ok(())
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages)?;
        if let Some(old) = self.table.unmap(l) {
            self.valid.clear(old);
            self.picker.dec(self.layout.block_of(old));
        }
        Ok(())
    }

    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        while self.alloc.free_blocks() < self.config.background_gc_free_blocks && io.last_finish() < until {
            if !self.collect_one(io)? {
                break;
            }
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.table.ram_bytes() + self.valid.ram_bytes() + self.picker.ram_bytes() + self.alloc.ram_bytes()
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        crate::mapping::check_page_map(&self.geometry, &self.table, &self.valid, &self.picker, flash)
    }

    fn placement(&self) -> Option<&dyn crate::Placement> {
        Some(self)
    }
}

impl<P: VictimPicker> crate::Placement for PageMap<P> {
    fn die_of(&self, lpn: Lpn) -> Option<ftlab_nand::DieId> {
        self.table.die_of(lpn, &self.layout)
    }
}
