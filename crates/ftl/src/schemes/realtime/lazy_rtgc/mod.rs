//! Lazy-RTGC, real-time lazy garbage collection over a page map in RAM
//! (001_ca7ecce2bd5249b9.txt, Sections 3-4).
//!
//! - **Space** (Section 3.1, Theorem 4.3, Eq. 9-11): the logical space is limited
//!   to sigma of the physical (default: the largest the chip allows, from
//!   [`ftlab_bounds::lazy_rtgc`]), so a greedy victim holds at most `U(lambda)`
//!   valid pages, few enough that the free pages its erase returns pay for the
//!   writes that host its partial tasks.
//! - **Trigger** (Algorithm 1, Eq. 13): nothing is collected on a die while at
//!   least `rho_th` of its pages are free ("only one free block" on the paper's
//!   chips, Section 6.1). Below it, the greedy victim's collection is split into partial tasks:
//!   each copies at most alpha valid pages (Eq. 7) or erases the victim (the last
//!   task), so each fits in one erase time (Property 4.1).
//! - **Schedule** (Algorithm 1, Theorem 4.2): exactly one partial task runs after
//!   each host write, after the write is acknowledged; none after a read or trim.
//!   A task is not part of its write's response but occupies the die, so the next
//!   command may wait for it: any page command completes within
//!   `U(R_T) = max{t_rdpg, t_er + t_wrpg}` ([`RealTime::service_bound`](crate::RealTime::service_bound), with channel
//!   transfer) of its dispatch, provided nothing else is queued before it on its
//!   die (queue depth 1, single-page requests: the paper's task model) and no
//!   other die's transfer holds its channel (the paper's one chip; with dies
//!   sharing a channel, add a transfer per other die of the channel).
//! - **Idle time** (Section 3.2, option `idle_gc`): idle gaps run the pending
//!   partial tasks and erase closed blocks with no valid page, on every die.
//!
//! Deviations, and why:
//! - Tasks are generated lazily, one at a time: a task copies the next at most
//!   alpha pages of the victim still valid when it runs. Pages the host overwrote
//!   meanwhile are skipped, so a collection takes at most `ceil(lambda / alpha) + 1`
//!   tasks (Eq. 8), never more.
//! - alpha counts channel transfers unless copies are copybacks (one plane per
//!   die), so alpha copies always fit in one erase on ftlab's timelines.
//! - The paper's model is one chip; ftlab collects each die on its own. Every die
//!   counts its free pages, and a write on die d is followed by at most one task
//!   of die d's collection, whose victim is the greedy one among die d's closed
//!   blocks and whose copies go to die d's open block. Host writes are striped
//!   over idle dies whether or not collections run, so every die takes writes in
//!   parallel, as 000 Eq. 25 assumes for WAO-GC. The argument of Algorithm 1 and
//!   Eq. 13 then holds per die: a collection of die d consumes at most `U + N - 1`
//!   of die d's pages, which the threshold keeps free, so copies never leave
//!   the die and a command waits for at most one task of its own die.
//!   Theorem 4.3's victim bound needs each die's valid pages to be at most
//!   `U(lambda)` times its closed blocks: a host write takes only a die it keeps
//!   within that quota (the `dies` module), and the reserve is kept per die (see
//!   [`LazyRtgcPlan::new`]). While the quotas have room a write takes the first
//!   idle die; once the logical pages in use fill them (the logical space is
//!   their sum whenever `sigma pi` is whole), a write goes to the die of its old
//!   copy, which spreads writes as their pages were first spread. With one die
//!   this is the paper's algorithm.
//! - The logical space also leaves out the blocks that may be free or open on a
//!   die when its victim is picked (see [`LazyRtgcPlan::new`]): 0.872 instead of
//!   0.875 on a 256-block Spansion SLC device.
//!
//! The collector also runs WAO-GC ([`crate::schemes::realtime::waogc`]): the same partial tasks with
//! its own plan (a logical space `lambda`, a trigger on free blocks, Eq. 25's
//! bound), given to the collector as a `Setup`.

mod config;
mod dies;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use config::{
    channel_share_ns, chip_params, gc_tasks, gc_transfers, logical_space, task_bounds, valid_bound,
};
pub use config::{LazyRtgcConfig, LazyRtgcPlan, Trigger};

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, Payload, Ppa, SimTime};
use serde::Serialize;

use self::dies::DieBooks;
use crate::alloc::{Allocation, BlockAllocator};
use crate::pagecore::PageCore;
use crate::{Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

impl FtlBuilder for LazyRtgcConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(LazyRtgc::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(LazyRtgc::recover(*self, io)?))
    }
}

/// A die's collection in progress: the victim and how far its pages were scanned.
#[derive(Debug, Clone, Copy)]
struct Collection {
    victim: BlockId,
    /// First page of the victim not yet looked at.
    next: u32,
    /// Partial tasks run so far.
    tasks: u32,
}

/// Counts of what garbage collection did on the whole device (for tests and
/// reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GcStats {
    /// Victims collected (erased).
    pub collections: u64,
    /// Partial tasks run.
    pub tasks: u64,
    /// Tasks run in idle time.
    pub idle_tasks: u64,
    /// Most valid pages a victim held when picked.
    pub max_victim_valid: u32,
    /// Most pages one task copied.
    pub max_task_copies: u32,
    /// Most tasks one collection took.
    pub max_tasks_per_collection: u32,
}

/// What a collector runs as: Lazy-RTGC from a [`LazyRtgcConfig`], or a scheme
/// built on its partial tasks (WAO-GC) with its own plan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup {
    /// The scheme's name ([`Ftl::name`]).
    pub name: &'static str,
    /// Whether idle time runs pending tasks and erases blocks with no valid page.
    pub idle_gc: bool,
    /// What the scheme comes to on the device.
    pub plan: LazyRtgcPlan,
}

impl LazyRtgcConfig {
    fn setup(&self, io: &Io) -> Result<Setup, FtlError> {
        let plan = LazyRtgcPlan::new(self, io, good_blocks(io))?;
        let name = if self.idle_gc { "lazy-rtgc-idle" } else { "lazy-rtgc" };
        Ok(Setup { name, idle_gc: self.idle_gc, plan })
    }
}

/// Good (not factory-bad) blocks of the device behind `io`.
pub(crate) fn good_blocks(io: &Io) -> u32 {
    (0..io.geometry().total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32
}

/// The Lazy-RTGC FTL.
#[derive(Debug)]
pub struct LazyRtgc {
    name: &'static str,
    idle_gc: bool,
    plan: LazyRtgcPlan,
    /// The page-mapped core (one stream).
    core: PageCore,
    geometry: Geometry,
    layout: Layout,
    books: DieBooks,
    /// Phi per die: pages that can still be programmed (free blocks and the rest
    /// of the open block).
    free_pages: Vec<u64>,
    /// Per die, the collection in progress.
    collections: Vec<Option<Collection>>,
    stats: GcStats,
}

impl LazyRtgc {
    fn empty(setup: Setup, io: &Io) -> Self {
        let g = *io.geometry();
        let plan = setup.plan;
        let dies = g.dies() as usize;
        LazyRtgc {
            name: setup.name,
            idle_gc: setup.idle_gc,
            plan,
            core: PageCore::new(g, plan.logical_pages, 1),
            geometry: g,
            layout: Layout::new(&g),
            books: DieBooks::new(&g, |b| !io.is_bad(b), plan.lambda_max, plan.reserve_blocks / g.dies()),
            free_pages: vec![0; dies],
            collections: vec![None; dies],
            stats: GcStats::default(),
        }
    }

    /// Lazy-RTGC on a freshly formatted medium.
    pub fn format(config: LazyRtgcConfig, io: &mut Io) -> Result<Self, FtlError> {
        Self::format_as(config.setup(io)?, io)
    }

    /// Lazy-RTGC rebuilt from the medium (every programmed page's OOB is scanned).
    /// A collection cut short is forgotten; the next write on its die below the
    /// threshold picks a victim afresh.
    pub fn recover(config: LazyRtgcConfig, io: &mut Io) -> Result<Self, FtlError> {
        Self::recover_as(config.setup(io)?, io)
    }

    /// The collector set up as `setup` on a freshly formatted medium.
    pub(crate) fn format_as(setup: Setup, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(setup, io);
        ftl.core.format(io, 1);
        let ppb = u64::from(ftl.geometry.pages_per_block);
        for d in 0..ftl.geometry.dies() {
            ftl.free_pages[d as usize] = u64::from(ftl.core.alloc.free_blocks_in(DieId(d))) * ppb;
        }
        Ok(ftl)
    }

    /// The collector set up as `setup`, rebuilt from the medium.
    pub(crate) fn recover_as(setup: Setup, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(setup, io);
        let scan = ftl.core.recover(io, &mut ftl.books)?;
        let ppb = ftl.geometry.pages_per_block;
        for b in scan.free {
            ftl.core.alloc.release(b);
            ftl.free_pages[ftl.layout.die_of_block(b).0 as usize] += u64::from(ppb);
        }
        for (b, next) in scan.open {
            ftl.core.alloc.reopen(0, b, next);
            ftl.free_pages[ftl.layout.die_of_block(b).0 as usize] += u64::from(ppb - next);
        }
        for b in scan.closed {
            ftl.books.insert(b);
        }
        Ok(ftl)
    }

    /// What the configuration came to on this device.
    pub fn plan(&self) -> LazyRtgcPlan {
        self.plan
    }

    /// What garbage collection has done so far.
    pub fn stats(&self) -> GcStats {
        self.stats
    }

    /// Phi, the pages that can still be programmed on the whole device.
    pub fn free_pages(&self) -> u64 {
        self.free_pages.iter().sum()
    }

    /// Whether a collection is in progress on some die (partial tasks are
    /// pending).
    pub fn collecting(&self) -> bool {
        self.collections.iter().any(Option::is_some)
    }

    /// The victim `die` is collecting, if any.
    pub fn victim_on(&self, die: DieId) -> Option<BlockId> {
        self.collections[die.0 as usize].map(|c| c.victim)
    }

    /// The next page on `die` (or another die when it is out of room, which the
    /// per-die threshold prevents after a clean run); a block that fills up
    /// becomes a victim candidate of its die. First retires `bad`, a block that
    /// went bad under a program ([`Io::program_placed`]): its pages never handed
    /// out are no longer free, and it joins the victim candidates so that a
    /// collection moves its valid pages off (and never erases it).
    #[inline]
    fn place(
        alloc: &mut BlockAllocator,
        books: &mut DieBooks,
        free_pages: &mut [u64],
        layout: &Layout,
        name: &str,
        die: DieId,
        bad: Option<BlockId>,
    ) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            if let Some(left) = alloc.retire(b) {
                free_pages[layout.die_of_block(b).0 as usize] -= u64::from(left);
                books.insert(b);
            }
        }
        let Allocation { ppa, filled } =
            alloc.next_page(0, die).ok_or_else(|| FtlError::DeviceFull(format!("no free page left for {name}")))?;
        free_pages[layout.die_of(ppa).0 as usize] -= 1;
        if let Some(b) = filled {
            books.insert(b);
        }
        Ok(ppa)
    }

    /// Starts collecting `victim` on its die (lines 8-9 of Algorithm 1).
    fn start(&mut self, victim: BlockId) {
        self.books.remove(victim);
        let valid = self.books.valid(victim);
        self.stats.max_victim_valid = self.stats.max_victim_valid.max(valid);
        let die = self.layout.die_of_block(victim);
        self.collections[die.0 as usize] = Some(Collection { victim, next: 0, tasks: 0 });
    }

    /// The greedy victim of `die`, if it has a page to reclaim.
    fn greedy_victim(&mut self, die: DieId) -> Option<BlockId> {
        let v = self.books.greedy(die)?;
        (self.books.valid(v) < self.geometry.pages_per_block).then_some(v)
    }

    /// Runs the next partial task of `die`'s collection: copy the next at most
    /// alpha valid pages of the victim or, when none is left, erase it.
    fn run_task(&mut self, io: &mut Io, die: DieId) -> Result<(), FtlError> {
        let Some(mut c) = self.collections[die.0 as usize].take() else {
            return Ok(());
        };
        let result = self.copy_pages(io, die, &mut c);
        c.tasks += 1;
        self.stats.tasks += 1;
        let copied = match result {
            Ok(copied) => copied,
            Err(e) => {
                self.collections[die.0 as usize] = Some(c);
                return Err(e);
            }
        };
        self.stats.max_task_copies = self.stats.max_task_copies.max(copied);
        if copied > 0 {
            self.collections[die.0 as usize] = Some(c);
            return Ok(());
        }
        debug_assert_eq!(self.books.valid(c.victim), 0, "erasing a victim with valid pages");
        match self.core.reclaim(io, c.victim, Purpose::Gc) {
            Ok(true) => {
                self.free_pages[die.0 as usize] += u64::from(self.geometry.pages_per_block);
            }
            // Gone bad: retired, never used again.
            Ok(false) => {}
            Err(e) => {
                self.collections[die.0 as usize] = Some(c);
                return Err(e);
            }
        }
        self.stats.collections += 1;
        self.stats.max_tasks_per_collection = self.stats.max_tasks_per_collection.max(c.tasks);
        Ok(())
    }

    /// Copies up to alpha still-valid pages of the victim from `c.next` on, to the
    /// open block of its die (copyback where the plane allows); returns how many.
    fn copy_pages(&mut self, io: &mut Io, die: DieId, c: &mut Collection) -> Result<u32, FtlError> {
        let ppb = self.geometry.pages_per_block;
        let mut copied = 0;
        while copied < self.plan.alpha && c.next < ppb {
            let src = self.geometry.ppa(c.victim, c.next);
            if !self.core.valid.get(src) {
                c.next += 1;
                continue;
            }
            let (layout, name, free_pages) = (self.layout, self.name, &mut self.free_pages);
            self.core.move_page(io, &mut self.books, src, |alloc, books, _, bad| {
                Self::place(alloc, books, free_pages, &layout, name, die, bad)
            })?;
            c.next += 1;
            copied += 1;
        }
        Ok(copied)
    }

    /// Whether the plan's trigger calls for a collection on `die`.
    fn triggered(&self, die: DieId) -> bool {
        match self.plan.trigger {
            Trigger::FreePagesBelow(pages) => self.free_pages[die.0 as usize] < u64::from(pages),
            Trigger::FreeBlocksAtMost(blocks) => self.core.alloc.free_blocks_in(die) <= blocks,
        }
    }

    /// Algorithm 1 after a write on `die`: the next pending task of `die`'s
    /// collection, or, with none pending and the trigger met on `die` (fewer than
    /// rho_th free pages), a new collection's first task.
    fn after_write(&mut self, io: &mut Io, die: DieId) -> Result<(), FtlError> {
        if self.collections[die.0 as usize].is_none() && self.triggered(die) {
            match self.greedy_victim(die) {
                Some(v) => self.start(v),
                None => return Ok(()),
            }
        }
        self.run_task(io, die)
    }

    /// Idle time on `die` until `until`: its pending tasks, then collections of
    /// its closed blocks without valid pages. A task started before `until` may
    /// run past it by at most one erase: the next command on the die then waits
    /// for one partial task, as after a write.
    fn idle(&mut self, io: &mut Io, die: DieId, until: SimTime) -> Result<(), FtlError> {
        while io.die_free_at(die) < until {
            if self.collections[die.0 as usize].is_none() {
                match self.books.greedy(die) {
                    Some(v) if self.books.valid(v) == 0 => self.start(v),
                    _ => break,
                }
            }
            self.run_task(io, die)?;
            self.stats.idle_tasks += 1;
        }
        Ok(())
    }
}

impl Ftl for LazyRtgc {
    fn name(&self) -> &'static str {
        self.name
    }

    fn logical_pages(&self) -> u32 {
        self.plan.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.core.read(io, lpn)
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        let l = self.core.index(lpn)?;
        // Striped over idle dies, within the dies' quotas (see `dies`).
        let start = self.core.alloc.next_die();
        let old = self.core.table.get(l);
        let old_die = old.map(|p| self.layout.die_of(p));
        let die = self.books.host_die(io, start, old_die).unwrap_or_else(|| io.free_die_from(start));
        let (layout, name, free_pages) = (self.layout, self.name, &mut self.free_pages);
        let ppa = self.core.write_placed(io, &mut self.books, lpn, old, data, |alloc, books, _, bad| {
            Self::place(alloc, books, free_pages, &layout, name, die, bad)
        })?;
        io.ack();
        self.after_write(io, self.layout.die_of(ppa))
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = self.core.index(lpn)?;
        self.core.trim(&mut self.books, l);
        Ok(())
    }

    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        if !self.idle_gc {
            return Ok(());
        }
        // Each die's tasks are a chain of their own: one die's reads do not hold
        // back another die's tasks.
        for d in 0..self.geometry.dies() {
            io.independent(|io| self.idle(io, DieId(d), until))?;
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.core.ram_bytes()
            + self.books.ram_bytes()
            + self.collections.len() as u64 * (std::mem::size_of::<Option<Collection>>() as u64 + 8)
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        let g = &self.geometry;
        let picker = self.books.device_picker(g);
        self.core.check(&picker, flash)?;
        self.books.check()?;
        for d in (0..g.dies()).map(DieId) {
            let programmable: u64 = (d.0 * g.blocks_per_die()..(d.0 + 1) * g.blocks_per_die())
                .map(BlockId)
                .filter(|&b| !flash.nand().is_bad(b))
                .map(|b| u64::from(g.pages_per_block - flash.nand().programmed_pages(b)))
                .sum();
            let free = self.free_pages[d.0 as usize];
            if free > programmable {
                return Err(format!("die {}: {free} free pages counted, only {programmable} erased", d.0));
            }
            if let Some(c) = self.collections[d.0 as usize] {
                if self.books.contains(c.victim) || self.layout.die_of_block(c.victim) != d {
                    return Err(format!("victim {:?} of die {} is a candidate or on another die", c.victim, d.0));
                }
            }
        }
        Ok(())
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: Some(self), placement: Some(self) }
    }
}

impl crate::RealTime for LazyRtgc {
    fn service_bound(&self) -> Option<SimTime> {
        Some(self.plan.service_bound)
    }
}

impl crate::Placement for LazyRtgc {
    fn die_of(&self, lpn: Lpn) -> Option<ftlab_nand::DieId> {
        self.core.die_of(lpn)
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 2] = [
    crate::entry::Scheme {
        name: "lazy-rtgc",
        summary: "Lazy-RTGC (001): page mapping, sigma from the chip, one partial GC task (<= t_er) after each write",
        paper: "001 Sections 3-4",
        admits_tasks: false,
        bounds: true,
        build: |p, _| crate::entry::configured("lazy-rtgc", LazyRtgcConfig::default(), p, LazyRtgcConfig::validate),
    },
    crate::entry::Scheme {
        name: "lazy-rtgc-idle",
        summary: "Lazy-RTGC with the idle-time optimisation (001 Section 3.2)",
        paper: "001 Section 3.2",
        admits_tasks: false,
        bounds: false,
        build: |p, _| {
            crate::entry::configured(
                "lazy-rtgc-idle",
                LazyRtgcConfig { idle_gc: true, ..LazyRtgcConfig::default() },
                p,
                LazyRtgcConfig::validate,
            )
        },
    },
];
