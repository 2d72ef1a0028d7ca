//! GFTL: guaranteed service times by partial block cleaning
//! (002_7b0ca1838a2bd7a1.txt, Sections IV, VI and VII).
//!
//! - **Block mapping** (Section IV): logical block `lpn / pi` maps 1:1 to a
//!   physical block, written sequentially from page 0 with the logical page in the
//!   OOB area; the block map keeps the block and its write pointer (the paper's
//!   index field).
//! - **Write queue** (IV-A): writes to a full block (or to the block being
//!   cleaned) go to one central write queue: a chain of blocks with a write-queue
//!   map from logical page to its newest queued copy. A queue block none of whose
//!   pages the map points to is put in the GC queue, to be erased in one step.
//! - **Reads** (IV-B): the write-queue map first, else the mapped block's OOB
//!   areas backwards from its write pointer: at most `pi t_rdoob + t_rdpg`.
//! - **Partial block cleaning** (IV-C, `clean`): full blocks join the GC queue
//!   (first in, first out); the block at its head is cleaned by a state machine of
//!   read, write and erase steps, each no longer than one erase, one step after
//!   each host read or write. The newest copy of each page is read (queue first,
//!   then the block's OOB backwards), written to a free block, the map switched,
//!   the old block erased.
//! - **Write-queue length** (IV-D): `L = N (kappa + 1) / 2` pages over `N`
//!   logical blocks, from [`ftlab_bounds::gftl`] with the channel transfer
//!   included; the `ceil(L / pi)` queue blocks and one cleaning target are hidden
//!   from the host, so `logical_pages = N pi` for the largest `N` that fits.
//! - **Soft real time** (VII): `clean_threshold` (VII-A) and `gc_queue =
//!   "priority"` (VII-B), the presets `gftl-threshold` and `gftl-priority`.
//! - **Startup after a power cut** (VI, `recover`): every OOB area is scanned.
//!
//! Deviations, each because ftlab's durability contract demands it: Algorithm 1
//! buffers a write to the block being read or erased in RAM only; here it also
//! goes to the write queue on flash (the RAM buffer is updated too, so the
//! cleaning copies the newest data), so an acknowledged write survives a power
//! cut. Queue pages carry a queue bit in the OOB's tag
//! ([`ftlab_nand::Oob::tag`]), and the pages a cleaning copies a merge bit (the
//! last one also an end bit), so the startup scan can tell queue blocks from
//! data blocks and a torn cleaning from a finished one; the OOB searches, the
//! scan and the tag bits are the block-mapping unit's (the `blockmap` module,
//! shared with NFTL). Trim (absent from the paper) clears a bit per logical
//! page and drops the page's queue entry. Choices the paper leaves open: a queue block with no live
//! page is erased ahead of the data blocks in the GC queue (one step, a whole
//! block back); the cleaning copies whole page operations per step, and `kappa`
//! for `L` is the larger of the paper's and this packing's worst case; on a
//! device of several dies a step is skipped when the command completed before
//! the previous step (see `after_request`).
//!
//! The bound ([`RealTime::service_bound`](crate::RealTime::service_bound)) is Table III's `L(p) = t_er + max{U(e_r),
//! U(e_w)}` with transfer times: the cleaning step the previous command left on the
//! die, then this command's own page operation. It holds for page commands issued
//! no faster than that period (the paper's task model). When the write queue is
//! out of pages (a workload beyond the worst case of IV-D), extra cleaning steps
//! run before the write, which then exceeds the bound; it never loses data.

mod clean;
mod recover;

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use ftlab_bounds::ChipParams;
use ftlab_nand::{BlockId, Geometry, PageKind, Payload, Ppa, SimTime};

use crate::blockmap::{self, interleaved_good_blocks, search_block, tag, Present};
use crate::flash::retry_program;
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

use clean::Cleaning;

const NONE: u32 = u32::MAX;

/// Order in which the GC queue is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcQueueOrder {
    /// First in, first out (Section IV-C).
    Fifo,
    /// The dirtiest block first (Section VII-B): queue blocks (all pages dead,
    /// one erase) before data blocks, data blocks by pages reclaimed.
    Priority,
}

/// Configuration of [`Gftl`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GftlConfig {
    /// Section VII-A: a new block cleaning starts only while the write queue holds
    /// more than this fraction of its length `L = N (kappa + 1) / 2` (the one queue
    /// of that length). 0 (the default) is GFTL proper: clean whenever the GC queue
    /// is not empty. In [0, 1).
    pub clean_threshold: f64,
    /// Order of the GC queue (default `fifo`).
    pub gc_queue: GcQueueOrder,
    /// Multiplies the write-queue length `L` of Section IV-D (default 2; 1 is the
    /// paper's length). `L = N (kappa + 1) / 2` is proved for writes that visit
    /// the logical blocks round-robin; under random overwrites and rewrite passes
    /// a queue block can keep a few live pages long after most of it is dead, the
    /// queue fills and extra cleaning steps are forced (bound violations); 2
    /// removed every violation in experiments/lazy-rtgc and experiments/gftl.
    /// Larger values hide more blocks from the host.
    pub write_queue_factor: f64,
}

impl Default for GftlConfig {
    fn default() -> Self {
        GftlConfig { clean_threshold: 0.0, gc_queue: GcQueueOrder::Fifo, write_queue_factor: 2.0 }
    }
}

impl GftlConfig {
    /// Named configurations: `gftl`, `gftl-threshold` (80% threshold, as in
    /// Section VII-A's experiment), `gftl-priority`.
    pub fn preset(name: &str) -> Option<GftlConfig> {
        let d = GftlConfig::default();
        match name {
            "gftl" => Some(d),
            "gftl-threshold" => Some(GftlConfig { clean_threshold: 0.8, ..d }),
            "gftl-priority" => Some(GftlConfig { gc_queue: GcQueueOrder::Priority, ..d }),
            _ => None,
        }
    }

    /// Names accepted by [`GftlConfig::preset`], with one line each.
    pub const PRESETS: [(&'static str, &'static str); 3] = [
        ("gftl", "GFTL: block map, central write queue, partial block cleaning, one step per request (002)"),
        ("gftl-threshold", "GFTL cleaning only above 80% of the write-queue length (002 Section VII-A)"),
        ("gftl-priority", "GFTL with the dirtiest block first in the GC queue (002 Section VII-B)"),
    ];

    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(0.0..1.0).contains(&self.clean_threshold) {
            return Err(FtlError::config(
                "ftl.clean_threshold",
                format!("gftl.clean_threshold must be in [0, 1), got {}", self.clean_threshold),
            ));
        }
        if !(self.write_queue_factor >= 1.0 && self.write_queue_factor <= 64.0) {
            return Err(FtlError::config(
                "ftl.write_queue_factor",
                format!("gftl.write_queue_factor must be in [1, 64], got {}", self.write_queue_factor),
            ));
        }
        Ok(())
    }
}

impl FtlBuilder for GftlConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        let mut g = Gftl::empty(*self, io)?;
        g.free = interleaved_good_blocks(io).collect();
        Ok(Box::new(g))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Gftl::recover(*self, io)?))
    }
}

/// Page-operation times with the channel transfer, in ns: what a step is budgeted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Costs {
    pub rdpg: u64,
    pub rdoob: u64,
    pub wrpg: u64,
    pub er: u64,
}

/// The sizes GFTL derives from the chip (Section IV-C, IV-D).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GftlSizing {
    /// Steps per block cleaning used for `L`: the larger of the bounds crate's
    /// `alpha + beta + 1` and this implementation's worst case (whole page
    /// operations per step can need a step more than the paper's ratio).
    pub kappa: u32,
    /// Logical (data) blocks `N`.
    pub logical_blocks: u32,
    /// Write-queue length `L` in pages.
    pub write_queue_pages: u64,
    /// Blocks reserved for the write queue, `ceil(L / pi)` (at least 2).
    pub write_queue_blocks: u32,
    /// Worst-case service time of one page command, ns.
    pub bound_ns: u64,
}

/// A GC-queue entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Job {
    /// Clean logical block `lb`.
    Data(u32),
    /// Erase a queue block with no live page.
    Queue(BlockId),
}

/// The GFTL.
#[derive(Debug)]
pub struct Gftl {
    config: GftlConfig,
    geometry: Geometry,
    costs: Costs,
    sizing: GftlSizing,
    /// Block map: physical block and write pointer per logical block.
    map: Vec<u32>,
    index: Vec<u16>,
    present: Present,
    /// Write-queue map: logical page to its newest queued copy.
    wq_map: BTreeMap<u32, Ppa>,
    /// Queued pages per logical block.
    wq_count: Vec<u16>,
    /// Per physical block: write-queue map entries pointing into it.
    wq_live: Vec<u32>,
    is_queue: Vec<bool>,
    /// Open queue block (the tail) and its next page.
    wq_open: Option<(BlockId, u32)>,
    /// Queue blocks not yet erased (open, full, awaiting erase).
    wq_blocks: u32,
    free: VecDeque<BlockId>,
    gcq: VecDeque<Job>,
    in_gcq: Vec<bool>,
    /// The block cleaning in progress.
    cleaning: Option<Box<Cleaning>>,
    /// Largest write-queue occupancy seen, in pages (Figure 8).
    wq_high_water: u64,
    /// Cleaning steps run before a write because the queue was full.
    forced_steps: u64,
    /// When the last step's operations finish, and steps skipped because a
    /// command completed before that.
    step_busy_until: SimTime,
    skipped_steps: u64,
}

/// GFTL's sizes for a device of `good` usable blocks with `costs` per operation.
pub(crate) fn sizing(config: &GftlConfig, g: &Geometry, good: u32, costs: Costs) -> Result<GftlSizing, FtlError> {
    let pi = g.pages_per_block;
    let chip = ChipParams::from_ns(costs.rdpg, costs.wrpg, costs.rdoob, costs.er, pi)
        .map_err(|e| FtlError::config("device.timing", format!("gftl: {e}")))?;
    let b = ftlab_bounds::gftl(&chip).map_err(|e| FtlError::config("device.timing", format!("gftl: {e}")))?;
    // This implementation's worst case: a read phase of at most pi page reads and
    // pi OOB reads, packed whole into steps (each closed step holds more than
    // t_er - t_rdpg), and pi programs, floor(t_er / t_wrpg) per step.
    let p = u64::from(pi);
    let alpha = (p * (costs.rdpg + costs.rdoob)) / (costs.er - costs.rdpg).max(1) + 1;
    let beta = p.div_ceil(costs.er / costs.wrpg);
    let kappa = u64::from(b.steps.kappa).max(alpha + beta + 1);
    let length = |n: u64| ((n * (kappa + 1)).div_ceil(2) as f64 * config.write_queue_factor).ceil() as u64;
    let queue_blocks = |n: u64| length(n).div_ceil(p).max(2);
    let good = u64::from(good);
    let mut n = (good.saturating_sub(1) as f64
        / (1.0 + (kappa + 1) as f64 * config.write_queue_factor / (2 * p) as f64)) as u64
        + 1;
    while n > 0 && n + queue_blocks(n) + 1 > good {
        n -= 1;
    }
    if n == 0 {
        return Err(FtlError::config("device", format!("the device is too small for gftl: {good} good blocks")));
    }
    if pi > u32::from(u16::MAX) {
        return Err(FtlError::config("device.pages_per_block", "gftl needs at most 65535 pages per block"));
    }
    blockmap::logical_pages("gftl", n as u32, pi)?;
    let read = p * costs.rdoob + costs.rdpg;
    Ok(GftlSizing {
        kappa: kappa as u32,
        logical_blocks: n as u32,
        write_queue_pages: length(n),
        write_queue_blocks: queue_blocks(n) as u32,
        bound_ns: costs.er + read.max(costs.wrpg),
    })
}

impl Gftl {
    fn empty(config: GftlConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let t = *io.timing();
        let page = t.transfer(g.page_size + g.oob_size).as_ns();
        let costs = Costs {
            rdpg: t.read_ns + page,
            rdoob: t.read_oob_ns + t.transfer(g.oob_size).as_ns(),
            wrpg: t.program_ns + page,
            er: t.erase_ns,
        };
        let good = interleaved_good_blocks(io).count() as u32;
        let sizing = sizing(&config, &g, good, costs)?;
        let n = sizing.logical_blocks as usize;
        let blocks = g.total_blocks() as usize;
        Ok(Gftl {
            config,
            geometry: g,
            costs,
            sizing,
            map: vec![NONE; n],
            index: vec![0; n],
            present: Present::new(sizing.logical_blocks * g.pages_per_block),
            wq_map: BTreeMap::new(),
            wq_count: vec![0; n],
            wq_live: vec![0; blocks],
            is_queue: vec![false; blocks],
            wq_open: None,
            wq_blocks: 0,
            free: VecDeque::new(),
            gcq: VecDeque::new(),
            in_gcq: vec![false; n],
            cleaning: None,
            wq_high_water: 0,
            forced_steps: 0,
            step_busy_until: SimTime::ZERO,
            skipped_steps: 0,
        })
    }

    /// The sizes derived from the chip.
    pub fn sizing(&self) -> GftlSizing {
        self.sizing
    }

    /// Pages the write queue occupies (its blocks not yet erased).
    pub fn write_queue_pages(&self) -> u64 {
        let open_free = self.wq_open.map_or(0, |(_, next)| self.geometry.pages_per_block - next);
        u64::from(self.wq_blocks) * u64::from(self.geometry.pages_per_block) - u64::from(open_free)
    }

    /// Largest write-queue occupancy so far, in pages.
    pub fn write_queue_high_water(&self) -> u64 {
        self.wq_high_water
    }

    /// Cleaning steps forced before writes because the write queue was full.
    pub fn forced_steps(&self) -> u64 {
        self.forced_steps
    }

    /// Steps skipped because the previous one was still running.
    pub fn skipped_steps(&self) -> u64 {
        self.skipped_steps
    }

    fn ppb(&self) -> u32 {
        self.geometry.pages_per_block
    }

    fn enqueue(&mut self, lb: u32) {
        if !self.in_gcq[lb as usize] {
            self.in_gcq[lb as usize] = true;
            self.gcq.push_back(Job::Data(lb));
        }
    }

    /// Drops the write-queue entry of `lpn`, if any; a queue block left with no
    /// live page joins the GC queue.
    fn drop_queued(&mut self, lpn: u32) -> Option<Ppa> {
        let old = self.wq_map.remove(&lpn)?;
        let lb = (lpn / self.ppb()) as usize;
        self.wq_count[lb] -= 1;
        let b = self.geometry.block_of(old);
        self.wq_live[b.0 as usize] -= 1;
        if self.wq_live[b.0 as usize] == 0 && !matches!(self.wq_open, Some((o, _)) if o == b) {
            // Erasing it is one step and frees a whole queue block: it goes ahead
            // of the data blocks (Section IV-C puts it in the GC queue, and costs it
            // at T_er; at the back of a queue of full blocks that the cleaning keeps
            // re-adding, it would wait a whole sweep while the queue fills).
            self.gcq.push_front(Job::Queue(b));
        }
        Some(old)
    }

    /// Makes sure the write queue can take a page: beyond the worst case of
    /// Section IV-D the queue may be out of blocks; then cleaning steps run until
    /// a queue block is erased.
    fn ensure_queue_room(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let limit = 64 * u64::from(self.sizing.kappa + 2) * self.map.len() as u64 + 1024;
        let mut steps = 0u64;
        while self.wq_open.is_none() && self.wq_blocks >= self.sizing.write_queue_blocks {
            steps += 1;
            if steps > limit || !self.step(io, true)? {
                return Err(FtlError::DeviceFull("the write queue is full and nothing can be cleaned".into()));
            }
            self.forced_steps += 1;
        }
        Ok(())
    }

    /// Appends `lpn` to the write queue (which [`Gftl::ensure_queue_room`] made
    /// room in); returns where it went.
    fn queue_write(&mut self, io: &mut Io, lpn: u32, data: Payload) -> Result<Ppa, FtlError> {
        let (b, next) = match self.wq_open {
            Some(o) => o,
            None => {
                let b = self.free.pop_front().ok_or_else(|| FtlError::DeviceFull("no free block".into()))?;
                self.is_queue[b.0 as usize] = true;
                self.wq_blocks += 1;
                (b, 0)
            }
        };
        let ppa = self.geometry.ppa(b, next);
        io.program_tagged(ppa, lpn, PageKind::Data, tag::QUEUE, data, Purpose::Host)?;
        // The old copy is dropped while `b` is still the open block: if it is in
        // `b` too and was its last live page, `b` must not join the GC queue as
        // dead (it is about to hold the new copy); closing it first would queue
        // an erase of a live block, and a second one once the new copy dies.
        if let Some(old) = self.drop_queued(lpn) {
            io.supersede(old);
        }
        self.wq_open = (next + 1 < self.ppb()).then_some((b, next + 1));
        self.wq_map.insert(lpn, ppa);
        let lb = (lpn / self.ppb()) as usize;
        self.wq_count[lb] += 1;
        // A full block joins the GC queue when a newer page of it waits in the
        // write queue (a block that is only read is never cleaned, 002 VI (iii)).
        self.enqueue(lb as u32);
        self.wq_live[b.0 as usize] += 1;
        self.wq_high_water = self.wq_high_water.max(self.write_queue_pages());
        Ok(ppa)
    }

    /// Writes `lpn` to the next page of its logical block `lb`'s block.
    fn block_write(&mut self, io: &mut Io, lb: usize, lpn: u32, data: Payload) -> Result<(), FtlError> {
        if self.map[lb] == NONE {
            // 1:1 mapping: a free block is always there (Section IV-A).
            self.map[lb] = self.free.pop_front().ok_or_else(|| FtlError::DeviceFull("no free block".into()))?.0;
            self.index[lb] = 0;
        }
        let ppa = self.geometry.ppa(BlockId(self.map[lb]), u32::from(self.index[lb]));
        io.program(ppa, lpn, PageKind::Data, data, Purpose::Host)?;
        self.index[lb] += 1;
        if let Some(old) = self.drop_queued(lpn) {
            io.supersede(old);
        }
        Ok(())
    }

    /// Retires `block`, which went bad under a host program: a logical block's
    /// block counts as full (later writes go to the write queue, and its cleaning
    /// moves its pages off and never erases it); the write queue's open block is
    /// closed (erased, that is retired, once none of its pages is live).
    fn retire(&mut self, block: BlockId) {
        let ppb = self.ppb() as u16;
        for (lb, b) in self.map.iter().enumerate() {
            if *b == block.0 {
                self.index[lb] = ppb;
            }
        }
        if matches!(self.wq_open, Some((o, _)) if o == block) {
            self.wq_open = None;
            if self.wq_live[block.0 as usize] == 0 {
                self.gcq.push_front(Job::Queue(block));
            }
        }
    }

    /// One try at writing `lpn`: to its block, or to the write queue when the
    /// block is full or being cleaned; then a cleaning step.
    fn write_once(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        let lb = l / self.ppb() as usize;
        let off = l as u32 % self.ppb();
        let cleaning = |s: &Self| s.cleaning.as_deref().is_some_and(|c| c.holds(lb as u32));
        if cleaning(self) || (self.map[lb] != NONE && u32::from(self.index[lb]) == self.ppb()) {
            self.ensure_queue_room(io)?;
        }
        if cleaning(self) {
            // The block is being cleaned: queue the write, and let the cleaning copy
            // the new data if it has not copied this page yet (Algorithm 1, 5-9).
            let ppa = self.queue_write(io, lpn.0, data.clone())?;
            if let Some(c) = self.cleaning.as_deref_mut() {
                c.update(off, data, ppa);
            }
        } else if self.map[lb] == NONE || u32::from(self.index[lb]) < self.ppb() {
            self.block_write(io, lb, lpn.0, data)?;
        } else {
            self.queue_write(io, lpn.0, data)?;
        }
        self.present.set(l, true);
        self.after_request(io)
    }

    /// One partial-cleaning step after a host command, unless the threshold of
    /// Section VII-A holds cleaning back.
    ///
    /// On a device of several dies a command may complete on one die while the
    /// previous step still runs on another; a step issued then would queue behind
    /// it and the next command could wait for both. The step is then skipped (the
    /// commands came faster than `L(p)`, outside the paper's model; the write queue
    /// absorbs the difference). On one die a command always waits for the previous
    /// step, so no step is ever skipped.
    fn after_request(&mut self, io: &mut Io) -> Result<(), FtlError> {
        io.ack();
        if io.completion() < self.step_busy_until {
            self.skipped_steps += 1;
            return Ok(());
        }
        if self.step(io, false)? {
            self.step_busy_until = io.last_finish();
        }
        Ok(())
    }
}

impl Ftl for Gftl {
    fn name(&self) -> &'static str {
        "gftl"
    }
    fn logical_pages(&self) -> u32 {
        self.sizing.logical_blocks * self.ppb()
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        let mut got = None;
        if self.present.get(l) {
            let at = match self.wq_map.get(&lpn.0) {
                Some(&ppa) => Some(ppa),
                None => {
                    let lb = l / self.ppb() as usize;
                    match self.map[lb] {
                        NONE => None,
                        b => search_block(io, BlockId(b), u32::from(self.index[lb]), lpn.0, Purpose::Host)?,
                    }
                }
            };
            if let Some(ppa) = at {
                got = Some(io.read(ppa, Purpose::Host)?.0);
            }
        }
        self.after_request(io)?;
        Ok(got)
    }

    /// Writes `lpn`; when the program fails, the block it went bad in is retired
    /// (`Gftl::retire`) and the write is tried again, up to [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS)
    /// times.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        retry_program(self, |s| s.write_once(io, lpn, data.clone()), |s, ppa| s.retire(s.geometry.block_of(ppa)))
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        self.present.set(l, false);
        // A queued copy of a trimmed page would pin its queue block: no cleaning
        // copies a trimmed page.
        self.drop_queued(lpn.0);
        if let Some(c) = self.cleaning.as_deref_mut() {
            if c.holds((l as u32) / self.geometry.pages_per_block) {
                c.forget(l as u32 % self.geometry.pages_per_block);
            }
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        // Section VI's sizes: 8 bytes per block-map entry and 16 per write-queue
        // map entry (for the full length L); the GC queue; one bit per logical
        // page; per-block queue bookkeeping; and the cleaning's page buffer of
        // pi pages (Algorithm 1's block buffer).
        let g = &self.geometry;
        self.map.len() as u64 * 8
            + self.sizing.write_queue_pages * 16
            + (self.map.len() as u64 + u64::from(self.sizing.write_queue_blocks)) * 4
            + self.present.ram_bytes()
            + u64::from(g.total_blocks()) * 5
            + u64::from(g.pages_per_block) * u64::from(g.page_size)
    }

    /// The write queue of Section IV-D (002 Figures 6 and 8): `write_queue_pages`
    /// (pages it occupies: its blocks not yet erased, less the open block's
    /// unwritten pages; what `L` bounds), `write_queue_live_pages` (logical pages
    /// whose newest copy waits in it), `write_queue_high_water_pages` (the largest
    /// `write_queue_pages` since the FTL was formatted or recovered; the time series
    /// keeps each interval's last value, so a peak inside an interval shows here
    /// only), `write_queue_limit_pages` (`L` as sized, `ftl.write_queue_factor`
    /// included), `gc_queue_jobs` (blocks waiting in the GC queue) and
    /// `forced_steps` (cumulative cleaning steps run before a write because the
    /// queue was full).
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("write_queue_pages", self.write_queue_pages() as f64),
            ("write_queue_live_pages", self.wq_map.len() as f64),
            ("write_queue_high_water_pages", self.wq_high_water as f64),
            ("write_queue_limit_pages", self.sizing.write_queue_pages as f64),
            ("gc_queue_jobs", self.gcq.len() as f64),
            ("forced_steps", self.forced_steps as f64),
        ]
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        recover::check(self, flash)
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: Some(self), placement: None }
    }
}

impl crate::RealTime for Gftl {
    fn service_bound(&self) -> Option<SimTime> {
        Some(SimTime(self.sizing.bound_ns))
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 3] = [
    crate::entry::Scheme {
        name: "gftl",
        summary: GftlConfig::PRESETS[0].1,
        paper: "002 Sections III-IV",
        admits_tasks: false,
        bounds: true,
        build: |p, _| crate::entry::configured("gftl", GftlConfig::default(), p, GftlConfig::validate),
    },
    crate::entry::Scheme {
        name: "gftl-threshold",
        summary: GftlConfig::PRESETS[1].1,
        paper: "002 Section IV-E (soft real-time variant)",
        admits_tasks: false,
        bounds: false,
        build: |p, _| {
            crate::entry::configured(
                "gftl-threshold",
                GftlConfig::preset("gftl-threshold").unwrap_or_default(),
                p,
                GftlConfig::validate,
            )
        },
    },
    crate::entry::Scheme {
        name: "gftl-priority",
        summary: GftlConfig::PRESETS[2].1,
        paper: "002 Section IV-E (soft real-time variant)",
        admits_tasks: false,
        bounds: false,
        build: |p, _| {
            crate::entry::configured(
                "gftl-priority",
                GftlConfig::preset("gftl-priority").unwrap_or_default(),
                p,
                GftlConfig::validate,
            )
        },
    },
];

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ftlab_nand::{Nand, NandConfig, StoreKind, Timing, WearConfig};

    /// A one-die device of 40 blocks of 16 pages, the suite's timing.
    pub(crate) fn device(config: GftlConfig) -> (Flash, Gftl) {
        device_sized(config, 20)
    }

    /// The same with `blocks_per_plane` blocks in each of the two planes.
    pub(crate) fn device_sized(config: GftlConfig, blocks_per_plane: u32) -> (Flash, Gftl) {
        let geometry = Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 1,
            planes_per_die: 2,
            blocks_per_plane,
            pages_per_block: 16,
            page_size: 4096,
            oob_size: 128,
        };
        let timing = Timing {
            read_ns: 25_000,
            read_oob_ns: 25_000,
            program_ns: 200_000,
            erase_ns: 1_500_000,
            channel_mb_per_s: 200,
        };
        let c = NandConfig {
            geometry,
            timing,
            bad_block_rate: 0.0,
            wear: WearConfig::default(),
            store: StoreKind::Token,
            seed: 1,
            faults: Default::default(),
            commands: Default::default(),
        };
        let mut flash = Flash::new(Nand::new(&c).unwrap());
        let mut g = {
            let io = flash.io(SimTime::ZERO);
            Gftl::empty(config, &io).unwrap()
        };
        g.free = interleaved_good_blocks(&flash.io(SimTime::ZERO)).collect();
        (flash, g)
    }

    /// Writes `lpn` one bound period after the last command; returns the command's
    /// issue time and the finish of everything it issued.
    pub(crate) fn write(flash: &mut Flash, g: &mut Gftl, t: &mut u64, lpn: u32) -> (SimTime, SimTime) {
        *t += g.sizing.bound_ns;
        let mut io = flash.io(SimTime(*t));
        g.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) << 32 | *t), &Hint::default()).unwrap();
        (SimTime(*t), io.last_finish())
    }

    #[test]
    fn sizing_follows_section_iv_d() {
        let (_, g) = device(GftlConfig { write_queue_factor: 1.0, ..GftlConfig::default() });
        let s = g.sizing();
        // t_rdpg' = 46.12 us, t_rdoob' = 25.64 us, t_wrpg' = 221.12 us, t_er = 1500 us,
        // pi = 16: alpha = ceil((31 * 25.64 + 16 * 46.12) / 1500) = 2,
        // beta = ceil(16 * 221.12 / 1500) = 3, kappa = 6.
        assert_eq!(s.kappa, 6);
        // 40 blocks: N + ceil(ceil(7N / 2) / 16) + 1 <= 40 gives N = 32 (Q = 7).
        assert_eq!((s.logical_blocks, s.write_queue_pages, s.write_queue_blocks), (32, 112, 7));
        assert_eq!(s.bound_ns, 1_500_000 + 16 * 25_640 + 46_120);
        assert_eq!(g.logical_pages(), 32 * 16);
    }

    #[test]
    fn the_logical_space_is_not_capped_at_2_pow_29_pages() {
        // 2^20 blocks of 1024 pages: over 2^29 logical pages, which flag bits in
        // the OOB's logical page once forbade; the flags are in the OOB tag now.
        let g = Geometry { blocks_per_plane: 1 << 20, pages_per_block: 1024, ..crate::testing::one_die(1, 1) };
        let costs = Costs { rdpg: 46_120, rdoob: 25_640, wrpg: 221_120, er: 1_500_000 };
        let s = sizing(&GftlConfig::default(), &g, 1 << 20, costs).unwrap();
        assert!(u64::from(s.logical_blocks) * 1024 > 1 << 29, "{s:?}");
        let e = sizing(&GftlConfig::default(), &Geometry { pages_per_block: 1 << 16, ..g }, 1 << 20, costs);
        assert!(matches!(e, Err(FtlError::Config(c)) if c.key == "device.pages_per_block"));
    }

    #[test]
    fn queue_and_cleaning_pages_keep_the_logical_page_and_tag_apart() {
        let (mut flash, mut g) = device(GftlConfig::default());
        let mut t = 0;
        for lpn in 0..16 {
            write(&mut flash, &mut g, &mut t, lpn);
        }
        write(&mut flash, &mut g, &mut t, 3);
        let queued = g.wq_map[&3];
        let oob = flash.nand().peek_oob(queued).unwrap();
        assert_eq!((oob.lpn, oob.tag), (3, tag::QUEUE));
        // Run the cleaning of block 0 to its end: its copies carry the merge
        // tag, the last one the end tag, beside their own logical pages.
        while g.cleaning.is_some() || !g.gcq.is_empty() {
            t += g.sizing.bound_ns;
            let mut io = flash.io(SimTime(t));
            g.read(&mut io, Lpn(20)).unwrap();
        }
        let target = BlockId(g.map[0]);
        let oobs: Vec<_> =
            (0..16).map(|k| flash.nand().peek_oob(flash.nand().geometry().ppa(target, k)).unwrap()).collect();
        assert_eq!(oobs.iter().map(|o| o.lpn).collect::<Vec<_>>(), (0..16).collect::<Vec<_>>());
        assert!(oobs[..15].iter().all(|o| o.tag == tag::MERGE) && oobs[15].tag == tag::MERGE | tag::END, "{oobs:?}");
        g.check_invariants(&flash).unwrap();
    }

    #[test]
    fn writes_fill_blocks_then_the_queue_and_reads_find_the_newest() {
        let (mut flash, mut g) = device(GftlConfig::default());
        let mut t = 0;
        for lpn in 0..16 {
            write(&mut flash, &mut g, &mut t, lpn);
        }
        // Block 0 is full but nothing of it waits: it is not cleaned.
        assert!(g.cleaning.is_none() && g.gcq.is_empty());
        write(&mut flash, &mut g, &mut t, 3);
        assert!(g.wq_map.contains_key(&3), "a write to a full (or cleaning) block goes to the queue");
        assert!(g.cleaning.is_some() || !g.gcq.is_empty(), "a queued page puts its block in the GC queue");
        t += 10_000_000;
        let mut io = flash.io(SimTime(t));
        let got = g.read(&mut io, Lpn(3)).unwrap();
        assert_eq!(got, Some(Payload::Token(3 << 32 | (17 * g.sizing.bound_ns))));
        g.check_invariants(&flash).unwrap();
    }

    #[test]
    fn rewriting_one_queued_page_never_queues_a_live_block_for_erase() {
        // Each rewrite of lpn 3 supersedes the previous queued copy, often in the
        // same queue block; the one that fills that block must not leave it
        // behind as dead.
        let (mut flash, mut g) = device(GftlConfig::default());
        let mut t = 0;
        for lpn in 0..16 {
            write(&mut flash, &mut g, &mut t, lpn);
        }
        for _ in 0..200 {
            write(&mut flash, &mut g, &mut t, 3);
            g.check_invariants(&flash).unwrap();
        }
        t += 10_000_000;
        let mut io = flash.io(SimTime(t));
        assert_eq!(g.read(&mut io, Lpn(3)).unwrap(), Some(Payload::Token(3 << 32 | (216 * g.sizing.bound_ns))));
    }

    #[test]
    fn a_read_scans_at_most_the_block_and_meets_the_bound() {
        let (mut flash, mut g) = device(GftlConfig::default());
        let mut t = 0;
        for lpn in 16..32 {
            write(&mut flash, &mut g, &mut t, lpn);
        }
        for _ in 0..50 {
            t += g.sizing.bound_ns;
            let mut io = flash.io(SimTime(t));
            // The oldest page of a full block: pi OOB reads and a page read.
            let before = io.completion();
            g.read(&mut io, Lpn(16)).unwrap().unwrap();
            assert!(io.completion().0 - before.0 <= g.sizing.bound_ns);
        }
        assert!(flash.counters().oob_reads.get(Purpose::Host) <= 50 * 16);
    }

    #[test]
    fn threshold_defers_cleaning_and_priority_takes_dead_queue_blocks_first() {
        let cfg = GftlConfig::preset("gftl-threshold").unwrap();
        let (mut flash, mut g) = device(cfg);
        let mut t = 0;
        for lpn in 0..g.logical_pages() {
            write(&mut flash, &mut g, &mut t, lpn);
        }
        assert_eq!(flash.counters().erases.total(), 0, "no cleaning below the threshold");
        let n = g.logical_pages();
        for i in 0..200 {
            write(&mut flash, &mut g, &mut t, (i * 5) % n);
        }
        assert!(flash.counters().erases.total() > 0);
        g.check_invariants(&flash).unwrap();

        let (_, mut g) = device(GftlConfig::preset("gftl-priority").unwrap());
        g.gcq.extend([Job::Data(0), Job::Queue(BlockId(5)), Job::Data(1)]);
        assert_eq!(g.next_job(false), Some(Job::Queue(BlockId(5))));
    }
}
