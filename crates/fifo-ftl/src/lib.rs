//! A log-structured FTL with first-in first-out cleaning: pages are written at
//! the heads of per-die logs, and when free blocks run low the oldest full block
//! is cleaned (its valid pages copied forward, then erased), whatever it holds —
//! the circular log of early log-structured file systems, and the simplest
//! cleaning policy an FTL can have (greedy picks the block with the fewest valid
//! pages instead, see `ftlab_ftl::pagemap`).
//!
//! It lives in its own crate on purpose: it is written only against
//! `ftlab-ftl`'s public interface (the [`Ftl`] trait, the [`Io`] handle and the
//! shared units: page table, valid map, block allocator, recovery scan), joins
//! the conformance suite with one line (`tests/conformance.rs`), and registers
//! with ftlab's registry where it is defined (`FIFO`, in
//! `ftlab_ftl::registry::PLUGINS`), so that `ftlab run --ftl fifo`, sweeps and
//! Python run it, as an FTL of any other crate would.

use std::collections::VecDeque;

use ftlab_ftl::alloc::{Allocation, BlockAllocator};
use ftlab_ftl::mapping::{PageTable, ValidMap};
use ftlab_ftl::registry::{configured, Scheme};
use ftlab_ftl::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};
use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, PageKind, Payload, Ppa};

/// The configuration: how much of the flash is kept back (`[ftl]` keys of a
/// run with `kind = "fifo"`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FifoConfig {
    /// Fraction of the good pages (beyond one free block a die for cleaning)
    /// not exported; in (0, 1). Default 0.2.
    pub over_provisioning: f64,
}

impl Default for FifoConfig {
    fn default() -> Self {
        FifoConfig { over_provisioning: 0.2 }
    }
}

/// The FTL.
#[derive(Debug)]
pub struct FifoFtl {
    geometry: Geometry,
    layout: Layout,
    logical_pages: u32,
    table: PageTable,
    valid: ValidMap,
    alloc: BlockAllocator,
    /// Full blocks, oldest first: the cleaning order.
    full: VecDeque<BlockId>,
}

/// ftlab's registry entry: with this crate linked, `ftlab run --ftl fifo`,
/// sweeps and Python build it like any scheme of `ftlab-ftl`.
#[linkme::distributed_slice(ftlab_ftl::registry::PLUGINS)]
static FIFO: Scheme = Scheme {
    name: "fifo",
    summary: "log-structured, first-in first-out cleaning of the oldest full block (an FTL outside ftlab-ftl)",
    paper: "none: the example of an FTL in another crate",
    admits_tasks: false,
    bounds: false,
    build: |p, _| configured("fifo", FifoConfig::default(), p, FifoConfig::validate),
};

impl FifoConfig {
    /// Checks the fields; errors name the key.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(self.over_provisioning > 0.0 && self.over_provisioning < 1.0) {
            return Err(FtlError::config(
                "ftl.over_provisioning",
                format!("fifo: over_provisioning must be in (0, 1), got {}", self.over_provisioning),
            ));
        }
        Ok(())
    }
}

impl FifoFtl {
    /// An FTL over the medium behind `io`, with no block assigned yet.
    fn empty(config: &FifoConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).map(BlockId).filter(|&b| !io.is_bad(b)).count() as u32;
        // One free block a die is kept for cleaning.
        let usable = good.saturating_sub(g.dies());
        let logical_pages = (f64::from(usable * g.pages_per_block) * (1.0 - config.over_provisioning)) as u32;
        if logical_pages == 0 {
            return Err(FtlError::config("device", format!("fifo: {good} good blocks leave no logical space")));
        }
        Ok(FifoFtl {
            geometry: g,
            layout: Layout::new(&g),
            logical_pages,
            table: PageTable::new(logical_pages),
            valid: ValidMap::new(g.total_pages()),
            alloc: BlockAllocator::empty(&g, 1),
            full: VecDeque::new(),
        })
    }

    /// The next page of the log on `die` (or another die's when it is out of
    /// room); a block it fills joins the cleaning queue.
    fn next_page(&mut self, die: DieId) -> Result<Ppa, FtlError> {
        let Allocation { ppa, filled } = self
            .alloc
            .next_page(0, die)
            .ok_or_else(|| FtlError::DeviceFull("fifo: no open block has room and no block is free".into()))?;
        if let Some(b) = filled {
            self.full.push_back(b);
        }
        Ok(ppa)
    }

    /// The next page of the log on `die` ([`FifoFtl::next_page`]), after retiring
    /// `bad`, a block that went bad under a program ([`Io::program_placed`]): it
    /// leaves the log heads for the cleaning queue, which moves its valid pages
    /// off.
    fn place(&mut self, die: DieId, bad: Option<BlockId>) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            if self.alloc.retire(b).is_some() {
                self.full.push_back(b);
            }
        }
        self.next_page(die)
    }

    /// Cleans the oldest full block that has an invalid page; returns false if
    /// every full block is wholly valid.
    fn clean_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let ppb = self.geometry.pages_per_block;
        for _ in 0..self.full.len() {
            let Some(victim) = self.full.pop_front() else { break };
            let first = self.geometry.ppa(victim, 0);
            if self.valid.count(first, ppb) == ppb {
                // Nothing to reclaim: it goes to the back of the queue.
                self.full.push_back(victim);
                continue;
            }
            let die = self.layout.die_of_block(victim);
            let sources: Vec<Ppa> = self.valid.iter_set(first, ppb).collect();
            for src in sources {
                let moved = io.copy_placed(src, Purpose::Gc, |_, bad| self.place(die, bad));
                let (dst, oob) = match moved {
                    Ok(m) => m,
                    Err(e) => {
                        // The pages not moved stay valid in the victim, cleaned first next time.
                        self.full.push_front(victim);
                        return Err(e);
                    }
                };
                self.table.relocate(oob.lpn as usize, src, dst);
                self.valid.clear(src);
                self.valid.set(dst);
            }
            // A block gone bad is retired: never erased, never used again.
            if io.reclaim(victim, Purpose::Gc)? {
                self.alloc.release(victim);
            }
            return Ok(true);
        }
        Ok(false)
    }

    fn invalidate(&mut self, old: Option<Ppa>) {
        if let Some(old) = old {
            self.valid.clear(old);
        }
    }
}

impl FtlBuilder for FifoConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        let mut ftl = FifoFtl::empty(self, io)?;
        ftl.alloc = BlockAllocator::formatted(&ftl.geometry, 1, |b| io.is_bad(b));
        Ok(Box::new(ftl))
    }

    /// Rebuilds the map from the pages' OOB (the newest copy of each logical page
    /// wins); the full blocks are queued in block order, the order they were
    /// written in being lost with the RAM.
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        let mut ftl = FifoFtl::empty(self, io)?;
        let scan = ftlab_ftl::scan::scan(io, &mut ftl.table)?;
        for b in scan.free {
            ftl.alloc.release(b);
        }
        for (_, ppa) in ftl.table.iter() {
            ftl.valid.set(ppa);
        }
        ftl.full.extend(scan.closed);
        for (b, next) in scan.open {
            ftl.alloc.reopen(0, b, next);
        }
        Ok(Box::new(ftl))
    }
}

impl Ftl for FifoFtl {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(lpn, self.logical_pages)?;
        let Some(ppa) = self.table.get(l) else { return Ok(None) };
        Ok(Some(io.read(ppa, Purpose::Host)?.0))
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages)?;
        while self.alloc.free_blocks() <= self.geometry.dies() {
            if !io.independent(|io| self.clean_one(io))? {
                break;
            }
        }
        let die = io.free_die_from(self.alloc.next_die());
        let (ppa, _) = io.program_placed(lpn.0, PageKind::Data, data, Purpose::Host, |_, bad| self.place(die, bad))?;
        let old = self.table.get(l);
        if let Some(old) = old {
            io.supersede(old);
        }
        self.table.replace(l, old, ppa);
        self.invalidate(old);
        self.valid.set(ppa);
        io.ack();
        Ok(())
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages)?;
        let old = self.table.unmap(l);
        self.invalidate(old);
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.table.ram_bytes() + self.valid.ram_bytes() + self.alloc.ram_bytes() + self.full.len() as u64 * 4
    }

    /// Valid pages are exactly the mapped ones, each holding its logical page.
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        for (lpn, ppa) in self.table.iter() {
            if !self.valid.get(ppa) {
                return Err(format!("logical page {lpn} maps to {ppa:?}, which is not marked valid"));
            }
            match flash.nand().peek_oob(ppa) {
                Some(oob) if oob.lpn as usize == lpn => {}
                other => return Err(format!("logical page {lpn} maps to {ppa:?} whose OOB is {other:?}")),
            }
        }
        let valid: u32 = (0..self.geometry.total_blocks())
            .map(|b| self.valid.count(self.geometry.ppa(BlockId(b), 0), self.geometry.pages_per_block))
            .sum();
        if valid != self.table.mapped() {
            return Err(format!("{valid} valid pages for {} mapped logical pages", self.table.mapped()));
        }
        Ok(())
    }
}
