//! Janus-FTL (004_15edfc19ad848aee.txt Sections 3-5): a page-mapping area (PMA)
//! and a block-mapping area (BMA) whose sizes follow the workload, between block
//! mapping and page mapping.
//!
//! - **BMA.** A logical block in the BMA has a data block holding its pages in
//!   place. A write to its first page opens a *sequential log block* for it
//!   (Section 5); the following pages, written in order, are appended. A full
//!   sequential log block is *switched* in (it becomes the data block, the old
//!   one is erased); one reclaimed early (the pool of `sequential_log_blocks` is
//!   spent) holding at least half the block gets a *partial merge* (the rest is
//!   copied into it from the data block), a shorter one a *migration* (its pages
//!   are copied to the PMA, it is erased, and its logical block is fused).
//! - **Fusion** (Section 3.2). Any other write to a BMA block (a random pattern)
//!   fuses it: the logical block joins the PMA, its data block and sequential log
//!   block become PMA blocks (their unused pages serve the PMA's writes), and the
//!   write goes to the PMA.
//! - **`sequential_log = "all"`** (Section 5 read literally: "if a write is
//!   requested to a sector in the BMA, Janus-FTL allocates a sequential log
//!   block"). Every write to a BMA block goes to its sequential log block,
//!   whose pages are page-mapped; the decision waits for the log block's
//!   reclaim (full, or the pool spent): pages in place get the switch merge,
//!   partial merge or migration above, any other pattern fuses the logical
//!   block with its data block and log block, whose unused pages then serve
//!   the PMA's writes. Not the default: `experiments/janus/README.md` shows
//!   what it costs.
//! - **PMA.** Page mapping over the over-provisioned blocks and the fused blocks'
//!   space. Writes go to the active log block; when it is full and only two
//!   empty blocks are left (Janus-FTL keeps at least two at all times), garbage
//!   collection copies the valid pages of the PMA block with the fewest into an
//!   empty block, which becomes the active log block, and erases the victim.
//! - **Defusion** (Section 3.2). When more logical blocks are fused than the
//!   target, the least recently written one is copied back in place into an empty
//!   block, which becomes its data block in the BMA; PMA blocks left without
//!   valid pages are erased, and empty blocks are made again by collecting PMA
//!   blocks into the active log block's free pages.
//! - **Adaptation** (Sections 4.2 and 5). A ghost LRU stack over the logical
//!   blocks records the stack distance of every write that reaches the PMA
//!   or breaks its log block's pages in place (the sequential references are
//!   filtered out), which gives the PMA's hit rate for
//!   every number of fused blocks. Every `N_D` writes (`adaptation_period`, by
//!   default the number of data blocks) the target number of fused blocks moves
//!   halfway toward the one minimizing Eq. 4 ([`ftlab_bounds::janus`]), with
//!   `u_d = N_F / (N_O + N_F)` and `u` from Eq. 5. `janus-fix` keeps the target at
//!   the fixed utilization `utilization` (Figure 7's Janus(Fix), default 0.75).
//!   `defusion_refill_cost = false` leaves Eq. 3's last term out of the cost
//!   minimized (see [`JanusConfig::defusion_refill_cost`] and
//!   `experiments/janus/README.md`).
//!
//! `N_O`, the PMA's over-provisioned blocks, are the spare blocks less the two
//! kept empty and the sequential log blocks. Maps are kept in non-volatile RAM as in 004's
//! simulation setting (no map I/O; recovery scans the OOB areas) or on flash
//! (`ftl.map_persistence = "flash"`: recovery replays the checkpoint and the
//! map log and rolls forward, see the `maplog` module). Then, in
//! the `hybrid` module, a torn merge or an in-place sequential log block is
//! completed as a partial merge, a logical block whose valid pages all lie in its
//! data block is in the BMA, every other one is fused, and the blocks holding
//! their pages are the PMA.
//!
//! Faults: a block whose program fails counts as full and the write is retried
//! (a PMA write in the next open block; a write to a sequential log block gone
//! bad fuses its logical block, and the bad block joins the PMA, whose garbage
//! collection moves its pages off and retires it). Copies whose target goes bad
//! go on in another block (garbage collection, a defusion starts over in
//! another empty block); a sequential log block gone bad is never switched in
//! (its pages migrate to the PMA instead), nor is one whose partial merge
//! fails; an erase that fails retires the block.

use std::cmp::Reverse;
use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use ftlab_bounds::janus::{optimal_fused_with, JanusCosts};
use ftlab_nand::Payload;

use crate::flash::{program_failed, retry_program};
use crate::hybrid::{fence, is_bad, Core, NONE};
use crate::maplog::{MapPersistence, Persistence};
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// Configuration of [`Janus`] (`janus` and `janus-fix`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JanusConfig {
    /// Fraction of the good blocks not exported. Default 0.03, the
    /// over-provisioning of 004's Figures 6 and 7. At least five blocks are
    /// spare (two kept empty, a sequential log block, two for the PMA).
    pub over_provisioning: f64,
    /// Whether the target number of fused blocks adapts to the workload (ghost
    /// buffers, `janus`, the default) or stays at [`JanusConfig::utilization`]
    /// (`janus-fix`).
    pub adaptive: bool,
    /// PMA utilization `u_d = N_F / (N_O + N_F)` the target starts at (adaptive)
    /// or stays at (fixed), in [0, 1). Default 0.75, Janus(Fix) of Figure 7.
    pub utilization: f64,
    /// Sequential log blocks at most (Section 5), at least 1. Default 4; fewer on
    /// a device with too few spare blocks.
    pub sequential_log_blocks: u32,
    /// Write requests between adaptation decisions; 0 (the default) is `N_D`,
    /// the number of data blocks, as in Section 5 ("after every N_D write
    /// requests"). A request of several pages counts once (its pages but the
    /// last carry [`Hint::more`]).
    pub adaptation_period: u64,
    /// Whether the adaptation charges a miss Eq. 3's last term, `u N_P C_PW`
    /// (making an empty block again after a defusion). Default true, as in the
    /// paper. In ftlab a defused block's pages mostly sit in its old data
    /// block, which they leave empty, so that term is rarely paid; false
    /// charges a miss `N_P C_CP + C_E` only.
    pub defusion_refill_cost: bool,
    /// Where the maps persist (`ftl.map_persistence`): `"nvram"` (the default:
    /// no map I/O, 004's simulation setting) or `"flash"` (a map log with
    /// checkpoints whose I/O counts as map operations, 004's Linux MTD setting;
    /// see the `maplog` module). As 004 Section 6 says of its implementation,
    /// the flash map is a page map of the BMA and the PMA alike.
    pub map_persistence: MapPersistence,
    /// Whether the ghost buffers' history is halved at every adaptation
    /// decision, so the estimate follows the workload (default true). 004
    /// does not say how its ghost buffers forget; false keeps every access
    /// since the start.
    pub ghost_decay: bool,
    /// Fused-block counts the ghost buffers simulate, at most (the largest PMA
    /// the adaptation may choose); 0 (the default) is every logical block. 004
    /// does not give its ghost buffers' size.
    pub ghost_blocks: u32,
    /// Which writes to a BMA block its sequential log block takes (Section
    /// 5): [`SequentialLog::InOrder`] (the default) or [`SequentialLog::All`]
    /// (004 Section 5 read literally).
    pub sequential_log: SequentialLog,
}

/// Which writes to a logical block in the BMA go to its sequential log block
/// (`ftl.sequential_log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SequentialLog {
    /// Every write (004 Section 5: "if a write is requested to a sector in the
    /// BMA, Janus-FTL allocates a sequential log block for the logical
    /// block"). The log block's pages are page-mapped; when it is reclaimed
    /// (full, or the pool is spent) its pattern decides: pages in place get a
    /// switch merge, a partial merge or a migration, any other pattern fuses
    /// the logical block with its data block and log block.
    All,
    /// Only a run written in order from the block's first page; any other
    /// write fuses the logical block at once (the decision is not deferred).
    /// The default: see `experiments/janus/README.md` ("Sequential log
    /// block") for what `All` measures and why it is not the default.
    #[default]
    InOrder,
}

impl Default for JanusConfig {
    fn default() -> Self {
        JanusConfig {
            over_provisioning: 0.03,
            adaptive: true,
            utilization: 0.75,
            sequential_log_blocks: 4,
            adaptation_period: 0,
            defusion_refill_cost: true,
            map_persistence: MapPersistence::Nvram,
            ghost_decay: true,
            ghost_blocks: 0,
            sequential_log: SequentialLog::InOrder,
        }
    }
}

impl JanusConfig {
    /// `janus-fix`: fixed utilization 0.75.
    pub fn fixed() -> Self {
        JanusConfig { adaptive: false, ..Default::default() }
    }

    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("janus", self.over_provisioning)?;
        if !(0.0..1.0).contains(&self.utilization) {
            return Err(FtlError::config(
                "ftl.utilization",
                format!("janus.utilization must be in [0, 1) (the PMA utilization u_d), got {}", self.utilization),
            ));
        }
        if self.sequential_log_blocks == 0 {
            return Err(FtlError::config(
                "ftl.sequential_log_blocks",
                "janus.sequential_log_blocks must be at least 1",
            ));
        }
        Ok(())
    }

    fn persistence(&self) -> Persistence {
        Persistence { mode: self.map_persistence, page_mapped: true }
    }

    fn name(&self) -> &'static str {
        if self.adaptive {
            "janus"
        } else {
            "janus-fix"
        }
    }
}

impl FtlBuilder for JanusConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        let core = Core::format_with(self.name(), io, self.over_provisioning, MIN_SPARE, self.persistence())?;
        let good = core.free.len() as u32;
        Ok(Box::new(Janus::with_core(*self, core, good, io)))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        self.validate()?;
        Ok(Box::new(Janus::recover(*self, io)?))
    }
}

/// Empty blocks kept at all times (Section 3.2).
const MIN_EMPTY: usize = 2;
/// Spare blocks at least: [`MIN_EMPTY`], a sequential log block, two for the PMA.
const MIN_SPARE: u32 = 5;

/// What Janus-FTL did so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JanusStats {
    pub fusions: u64,
    pub defusions: u64,
    pub gcs: u64,
    pub switch_merges: u64,
    pub partial_merges: u64,
    pub migrations: u64,
    /// Sequential log blocks reclaimed holding a pattern other than pages in
    /// place (random writes): fused with their logical block
    /// ([`SequentialLog::All`]).
    pub log_fusions: u64,
    /// Blocks garbage collection chose in the PMA (the full block with the
    /// fewest valid pages), and their valid pages when chosen: the mean
    /// victim utilization `u` of Eq. 5 is `victim_valid_pages / (victims N_P)`.
    pub victims: u64,
    pub victim_valid_pages: u64,
    /// Per adaptation decision: host writes so far, fused blocks, the target and
    /// the optimum of Eq. 4 estimated from the ghost buffers.
    pub decisions: Vec<(u64, u32, u32, u32)>,
}

/// A ghost LRU stack over logical blocks: the stack distance of every access.
#[derive(Debug, Clone)]
struct Ghost {
    stamp: Vec<u32>,
    /// Fenwick tree over stamps: 1 where a stamp is live.
    tree: Vec<u32>,
    next: u32,
    /// Accesses per stack distance (weights: halved at each decision).
    hist: Vec<f64>,
    total: f64,
}

impl Ghost {
    fn new(lblocks: u32) -> Self {
        let cap = 2 * lblocks as usize + 16;
        Ghost {
            stamp: vec![NONE; lblocks as usize],
            tree: vec![0; cap + 1],
            next: 0,
            hist: vec![0.0; lblocks as usize],
            total: 0.0,
        }
    }
    fn add(&mut self, i: u32, v: i32) {
        let mut i = i as usize + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(v);
            i += i & i.wrapping_neg();
        }
    }
    /// Live stamps below `i`.
    fn prefix(&self, i: u32) -> u32 {
        let (mut i, mut s) = (i as usize, 0);
        while i > 0 {
            s += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        s
    }
    fn access(&mut self, lb: u32) {
        let s = self.stamp[lb as usize];
        if s != NONE {
            let d = self.prefix(self.next) - self.prefix(s + 1);
            self.hist[d as usize] += 1.0;
            self.add(s, -1);
            self.stamp[lb as usize] = NONE;
        }
        self.total += 1.0;
        if self.next as usize + 1 >= self.tree.len() {
            self.renumber();
        }
        self.stamp[lb as usize] = self.next;
        self.add(self.next, 1);
        self.next += 1;
    }
    fn renumber(&mut self) {
        let mut live: Vec<(u32, usize)> =
            self.stamp.iter().enumerate().filter(|(_, &s)| s != NONE).map(|(lb, &s)| (s, lb)).collect();
        live.sort_unstable();
        self.tree.iter_mut().for_each(|t| *t = 0);
        self.next = 0;
        for (_, lb) in live {
            self.stamp[lb] = self.next;
            self.add(self.next, 1);
            self.next += 1;
        }
    }
    /// Hit rate of an LRU cache of `n` blocks, for `n` in `0..=max`.
    fn hit_rates(&self, max: u32) -> Vec<f64> {
        let mut v = Vec::with_capacity(max as usize + 1);
        let mut hits = 0.0;
        v.push(0.0);
        for n in 1..=max as usize {
            hits += self.hist.get(n - 1).copied().unwrap_or(0.0);
            v.push(if self.total > 0.0 { hits / self.total } else { 0.0 });
        }
        v
    }
    /// Halves the history, so the estimate follows the workload.
    fn decay(&mut self) {
        self.hist.iter_mut().for_each(|h| *h /= 2.0);
        self.total /= 2.0;
    }
}

/// The Janus-FTL.
#[derive(Debug)]
pub struct Janus {
    core: Core,
    cfg: JanusConfig,
    name: &'static str,
    fused: Vec<bool>,
    n_fused: u32,
    /// Fused logical blocks by last write (oldest first).
    lru: BTreeMap<u64, u32>,
    stamp: Vec<u64>,
    clock: u64,
    /// Per physical block: in the PMA.
    pma: Vec<bool>,
    /// PMA blocks with unused pages; the first is the active log block.
    open: VecDeque<u32>,
    /// Per logical block: its sequential log block, or `NONE`.
    seq: Vec<u32>,
    seq_order: VecDeque<u32>,
    /// Per logical block: whether its sequential log block holds its pages in
    /// place so far.
    ordered: Vec<bool>,
    max_seq: usize,
    /// `N_O`: the PMA's over-provisioned blocks.
    n_o: u32,
    /// Fused blocks aimed at.
    target: u32,
    ghost: Ghost,
    costs: JanusCosts,
    period: u64,
    host_writes: u64,
    /// Host write requests so far (a request's last page counted).
    write_requests: u64,
    /// The optimum of Eq. 4 at the last decision, and the ghost buffers' hit
    /// rate at the target then chosen.
    optimum: u32,
    hit_rate: f64,
    /// The ghost buffers' hit-rate curve at the last decision (at 0, 1, 2,
    /// ... fused blocks); empty before the first.
    rates: Vec<f64>,
    stats: JanusStats,
}

impl Janus {
    fn with_core(cfg: JanusConfig, core: Core, good: u32, io: &Io) -> Self {
        let lblocks = core.lblocks;
        let spare = good.saturating_sub(lblocks).max(MIN_SPARE);
        let max_seq = (cfg.sequential_log_blocks).min(spare - MIN_EMPTY as u32 - 2).max(1);
        let n_o = spare - MIN_EMPTY as u32 - max_seq;
        let t = io.timing();
        let costs = JanusCosts {
            pages_per_block: core.ppb(),
            erase_ns: t.erase_ns as f64,
            copy_ns: (t.read_ns + t.program_ns) as f64,
            program_ns: t.program_ns as f64,
        };
        let target = ((cfg.utilization / (1.0 - cfg.utilization)) * f64::from(n_o)).round() as u32;
        let nblocks = core.valid.len();
        Janus {
            name: cfg.name(),
            cfg,
            fused: vec![false; lblocks as usize],
            n_fused: 0,
            lru: BTreeMap::new(),
            stamp: vec![0; lblocks as usize],
            clock: 0,
            pma: vec![false; nblocks],
            open: VecDeque::new(),
            seq: vec![NONE; lblocks as usize],
            seq_order: VecDeque::new(),
            ordered: vec![false; lblocks as usize],
            max_seq: max_seq as usize,
            n_o,
            target: target.min(lblocks),
            ghost: Ghost::new(lblocks),
            costs,
            period: if cfg.adaptation_period == 0 { u64::from(lblocks) } else { cfg.adaptation_period },
            host_writes: 0,
            write_requests: 0,
            optimum: target.min(lblocks),
            hit_rate: 0.0,
            rates: Vec::new(),
            stats: JanusStats::default(),
            core,
        }
    }

    /// Rebuilds Janus-FTL from an OOB scan.
    pub fn recover(cfg: JanusConfig, io: &mut Io) -> Result<Self, FtlError> {
        let (core, rest) = Core::recover(cfg.name(), io, cfg.over_provisioning, MIN_SPARE, cfg.persistence())?;
        let good = (core.free.len() + core.data.iter().filter(|&&d| d != NONE).count() + rest.len()) as u32;
        let mut f = Self::with_core(cfg, core, good, io);
        let ppb = f.core.ppb();
        for lpn in 0..f.core.logical_pages() {
            let b = f.core.block_of_lpn(lpn);
            let lb = lpn / ppb;
            if b != NONE && b != f.core.data[lb as usize] {
                f.fused[lb as usize] = true;
            }
        }
        for lb in 0..f.core.lblocks {
            if f.fused[lb as usize] {
                f.n_fused += 1;
                f.touch(lb);
                let d = f.core.data[lb as usize];
                if d != NONE {
                    f.core.data[lb as usize] = NONE;
                    f.join_pma(d);
                }
            }
        }
        for (_, b) in rest {
            f.join_pma(b);
        }
        f.ensure_empties(io, MIN_EMPTY)?;
        Ok(f)
    }

    /// What the last recovery read (flash mode; see the `maplog` module).
    #[cfg(test)]
    pub(crate) fn recovery(&self) -> crate::hybrid::replay::RecoveryReads {
        self.core.recovery
    }

    /// What Janus-FTL did so far.
    pub fn stats(&self) -> &JanusStats {
        &self.stats
    }
    /// Logical blocks fused into the PMA now.
    pub fn fused_blocks(&self) -> u32 {
        self.n_fused
    }
    /// Fused blocks aimed at.
    pub fn target_fused(&self) -> u32 {
        self.target
    }

    fn join_pma(&mut self, b: u32) {
        self.pma[b as usize] = true;
        if self.core.next[b as usize] < self.core.ppb() && !self.open.contains(&b) {
            self.open.push_back(b);
        }
    }

    fn leave_pma(&mut self, b: u32) {
        self.pma[b as usize] = false;
        self.open.retain(|&x| x != b);
    }

    fn touch(&mut self, lb: u32) {
        if self.clock > 0 {
            self.lru.remove(&self.stamp[lb as usize]);
        }
        self.clock += 1;
        self.stamp[lb as usize] = self.clock;
        self.lru.insert(self.clock, lb);
    }

    /// The active log block of the PMA, collecting garbage when only the empty
    /// blocks Janus-FTL keeps are left.
    fn active(&mut self, io: &mut Io) -> Result<u32, FtlError> {
        for _ in 0..=self.core.valid.len() {
            while let Some(&b) = self.open.front() {
                if self.core.next[b as usize] < self.core.ppb() {
                    return Ok(b);
                }
                self.open.pop_front();
            }
            if self.core.free.len() > MIN_EMPTY {
                let b = self.core.take_free()?;
                self.pma[b as usize] = true;
                self.open.push_back(b);
                continue;
            }
            // No PMA block is open here: a block written in part is one a
            // failed copy left (see `ensure_empties`).
            let victim = self
                .victim()
                .or_else(|| self.partial_victim())
                .ok_or_else(|| FtlError::DeviceFull(format!("{}: no block to collect in the PMA", self.name)))?;
            self.gc(io, victim)?;
        }
        Err(FtlError::DeviceFull(format!("{}: no page in the page-mapping area", self.name)))
    }

    /// The full PMA block with the fewest valid pages.
    fn victim(&self) -> Option<u32> {
        let ppb = self.core.ppb();
        (0..self.pma.len() as u32)
            .filter(|&b| self.pma[b as usize] && self.core.next[b as usize] == ppb)
            .min_by_key(|&b| (self.core.valid[b as usize], b))
    }

    /// The PMA block written in part with the fewest valid pages (the most
    /// pages written on a tie): a fused data block or sequential log block,
    /// or a log block not filled yet. Fusions bring blocks written in part
    /// into the PMA, and the host's overwrites and trims may leave them with
    /// no valid page before any PMA block is full.
    fn partial_victim(&self) -> Option<u32> {
        let ppb = self.core.ppb();
        (0..self.pma.len() as u32)
            .filter(|&b| self.pma[b as usize] && (1..ppb).contains(&self.core.next[b as usize]))
            .min_by_key(|&b| (self.core.valid[b as usize], Reverse(self.core.next[b as usize]), b))
    }

    /// Counts `victim` as chosen by garbage collection, with its valid pages now.
    fn count_victim(&mut self, victim: u32) {
        self.stats.victims += 1;
        self.stats.victim_valid_pages += u64::from(self.core.valid[victim as usize]);
    }

    /// Garbage collection in the PMA (Section 3.2): the valid pages of
    /// `victim` (a PMA block) go to an empty block, which becomes the active
    /// log block; the victim is erased.
    fn gc(&mut self, io: &mut Io, victim: u32) -> Result<(), FtlError> {
        self.count_victim(victim);
        if self.core.valid[victim as usize] > 0 {
            if self.core.valid[victim as usize] == self.core.ppb() {
                return Err(FtlError::DeviceFull(format!("{}: the page-mapping area is full", self.name)));
            }
            let pages = self.core.valid_pages(victim);
            let mut copied = 0;
            retry_program(
                self,
                |s| {
                    // An empty block for the copies; after a failed program the
                    // target went bad (it counts as full): go on in another.
                    let e = s.core.take_free()?;
                    s.pma[e as usize] = true;
                    s.open.push_front(e);
                    for &lpn in &pages[copied..] {
                        s.core.copy(io, lpn, e, Purpose::Gc)?;
                        copied += 1;
                    }
                    Ok(())
                },
                |_, _| {},
            )?;
        }
        self.core.erase(io, victim, Purpose::Gc)?;
        self.leave_pma(victim);
        self.stats.gcs += 1;
        fence(io);
        Ok(())
    }

    /// Makes `n` empty blocks: PMA blocks are collected into the free pages of
    /// the PMA's open blocks (Figure 3(d)), or into an empty block when they do
    /// not fit. The victim is the full PMA block with the fewest valid pages;
    /// when no PMA block is full, the one written in part with the fewest
    /// ([`Janus::partial_victim`]); when the PMA has no written block,
    /// sequential log blocks are reclaimed.
    fn ensure_empties(&mut self, io: &mut Io, n: usize) -> Result<(), FtlError> {
        let ppb = self.core.ppb();
        let mut rounds = 0;
        while self.core.free.len() < n {
            rounds += 1;
            if rounds > 4 * self.core.valid.len() {
                return Err(FtlError::DeviceFull(format!("{}: cannot make {n} empty blocks", self.name)));
            }
            let Some(victim) = self.victim().or_else(|| self.partial_victim()) else {
                if let Some(&lb) = self.seq_order.front() {
                    self.reclaim_seq(io, lb)?;
                    continue;
                }
                return Err(FtlError::DeviceFull(format!("{}: no block to collect", self.name)));
            };
            let v = self.core.valid[victim as usize];
            // The victim's own free pages (it may be open) take none of its copies.
            let room: u32 = self.open.iter().filter(|&&b| b != victim).map(|&b| ppb - self.core.next[b as usize]).sum();
            if v <= room {
                self.count_victim(victim);
            }
            if v == 0 {
                self.core.erase(io, victim, Purpose::Gc)?;
                self.leave_pma(victim);
            } else if v <= room {
                self.open.retain(|&b| b != victim);
                let mut failed = false;
                for lpn in self.core.valid_pages(victim) {
                    let to = self.active(io)?;
                    match self.core.copy(io, lpn, to, Purpose::Gc) {
                        Ok(()) => {}
                        // The open block went bad (it counts as full): look
                        // again at the victims and the room left.
                        Err(e) if program_failed(&e) => {
                            failed = true;
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                }
                if failed {
                    continue;
                }
                self.core.erase(io, victim, Purpose::Gc)?;
                self.leave_pma(victim);
                self.stats.gcs += 1;
                fence(io);
            } else if !self.core.free.is_empty() {
                self.gc(io, victim)?;
            } else {
                return Err(FtlError::DeviceFull(format!("{}: no empty block to collect into", self.name)));
            }
        }
        Ok(())
    }

    /// Erases those of `blocks` that are PMA blocks left without valid pages.
    fn release_empty_pma(&mut self, io: &mut Io, blocks: &[u32]) -> Result<(), FtlError> {
        for &b in blocks {
            if self.pma[b as usize] && self.core.valid[b as usize] == 0 && self.core.next[b as usize] > 0 {
                self.core.erase(io, b, Purpose::Gc)?;
                self.leave_pma(b);
            }
        }
        Ok(())
    }

    /// Fusion: `lb` joins the PMA with its data block and sequential log block;
    /// least recently written blocks are defused while too many are fused.
    fn fuse(&mut self, io: &mut Io, lb: u32) -> Result<(), FtlError> {
        self.fused[lb as usize] = true;
        self.n_fused += 1;
        self.touch(lb);
        let d = self.core.data[lb as usize];
        if d != NONE {
            self.core.data[lb as usize] = NONE;
            self.join_pma(d);
        }
        let l = self.seq[lb as usize];
        if l != NONE {
            self.seq[lb as usize] = NONE;
            self.seq_order.retain(|&x| x != lb);
            self.join_pma(l);
        }
        self.stats.fusions += 1;
        while self.n_fused > self.target.max(1) {
            let Some(victim) = self.lru.values().copied().find(|&x| x != lb) else { break };
            self.defuse(io, victim)?;
        }
        Ok(())
    }

    /// Defusion: `lb`'s pages are copied in place into an empty block, its data
    /// block in the BMA.
    fn defuse(&mut self, io: &mut Io, lb: u32) -> Result<(), FtlError> {
        self.fused[lb as usize] = false;
        self.n_fused -= 1;
        self.lru.remove(&self.stamp[lb as usize]);
        self.stats.defusions += 1;
        if self.core.last_valid(lb).is_none() {
            return Ok(());
        }
        self.ensure_empties(io, MIN_EMPTY)?;
        let ppb = self.core.ppb();
        let mut sources: Vec<u32> =
            (lb * ppb..(lb + 1) * ppb).map(|l| self.core.block_of_lpn(l)).filter(|&b| b != NONE).collect();
        sources.sort_unstable();
        sources.dedup();
        let mut bad = Vec::new();
        match self.core.fill_new(io, lb, Purpose::Gc, &mut bad) {
            Ok((t, _)) => self.core.data[lb as usize] = t,
            Err(e) => {
                // `lb` stays fused; the targets gone bad join the PMA with the
                // pages copied into them.
                for b in bad {
                    self.join_pma(b);
                }
                self.fused[lb as usize] = true;
                self.n_fused += 1;
                self.touch(lb);
                return Err(e);
            }
        }
        self.release_empty_pma(io, &sources)?;
        fence(io);
        self.ensure_empties(io, MIN_EMPTY)
    }

    /// Reclaims `lb`'s sequential log block: its pages in place get a switch
    /// merge, a partial merge or a migration; any other pattern (random
    /// writes, [`SequentialLog::All`]) fuses `lb` with its data block and log
    /// block, whose unused pages then serve the PMA's writes.
    fn reclaim_seq(&mut self, io: &mut Io, lb: u32) -> Result<(), FtlError> {
        let l = self.seq[lb as usize];
        if l != NONE && !self.core.in_place(l, lb) {
            self.stats.log_fusions += 1;
            return self.fuse(io, lb);
        }
        self.seq[lb as usize] = NONE;
        self.seq_order.retain(|&x| x != lb);
        if l == NONE {
            return Ok(());
        }
        // A block gone bad is never switched in: its pages migrate.
        let bad = is_bad(io, l);
        let c = &mut self.core;
        let run = c.next[l as usize];
        let d = c.data[lb as usize];
        if !bad && (c.last_valid(lb).is_none_or(|last| last < run) || run == c.ppb()) {
            c.data[lb as usize] = l;
            if d != NONE {
                c.erase(io, d, Purpose::Gc)?;
            }
            self.stats.switch_merges += 1;
            fence(io);
            return Ok(());
        }
        if !bad && 2 * run >= c.ppb() {
            match c.fill_in_place(io, l, lb, Purpose::Gc) {
                Ok(_) => {
                    c.data[lb as usize] = l;
                    if d != NONE {
                        c.erase(io, d, Purpose::Gc)?;
                    }
                    self.stats.partial_merges += 1;
                    fence(io);
                    return Ok(());
                }
                // The log block went bad: its pages migrate.
                Err(e) if program_failed(&e) => {}
                Err(e) => return Err(e),
            }
        }
        // Migration: the short run moves to the PMA and the block is erased.
        self.stats.migrations += 1;
        if let Err(e) = self.fuse(io, lb) {
            self.join_pma(l);
            return Err(e);
        }
        self.leave_pma(l);
        for lpn in self.core.valid_pages(l) {
            if let Err(e) = self.copy_to_pma(io, lpn) {
                // What is left of the run stays in the PMA.
                self.join_pma(l);
                return Err(e);
            }
        }
        self.core.erase(io, l, Purpose::Gc)?;
        fence(io);
        Ok(())
    }

    /// Copies `lpn` to the PMA's active log block; when the program fails there,
    /// that block counts as full and the copy goes to the next one, up to
    /// [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) tries.
    fn copy_to_pma(&mut self, io: &mut Io, lpn: u32) -> Result<(), FtlError> {
        retry_program(
            self,
            |s| {
                let to = s.active(io)?;
                s.core.copy(io, lpn, to, Purpose::Gc)
            },
            |_, _| {},
        )
    }

    /// Opens a sequential log block for `lb`.
    fn open_seq(&mut self, io: &mut Io, lb: u32) -> Result<u32, FtlError> {
        while self.seq_order.len() >= self.max_seq {
            let Some(&old) = self.seq_order.front() else { break };
            self.reclaim_seq(io, old)?;
        }
        self.ensure_empties(io, MIN_EMPTY + 1)?;
        let l = self.core.take_free()?;
        self.seq[lb as usize] = l;
        self.seq_order.push_back(lb);
        self.ordered[lb as usize] = true;
        Ok(l)
    }

    /// Every `period` writes: the target moves halfway toward the optimum of
    /// Eq. 4 for the ghost buffers' hit-rate curve.
    fn adapt(&mut self) {
        let max = match self.cfg.ghost_blocks {
            0 => self.core.lblocks,
            g => g.min(self.core.lblocks),
        };
        let rates = self.ghost.hit_rates(max);
        let refill = self.cfg.defusion_refill_cost;
        let (best, _) = optimal_fused_with(&self.costs, self.n_o, max, |n| rates[n as usize], refill);
        if self.cfg.adaptive && self.ghost.total > 0.0 {
            let t = self.target;
            self.target = if best > t { t + (best - t).div_ceil(2) } else { t - (t - best).div_ceil(2) };
        }
        self.optimum = best;
        self.hit_rate = rates.get(self.target as usize).copied().unwrap_or(0.0);
        self.rates = rates;
        self.stats.decisions.push((self.host_writes, self.n_fused, self.target, best));
        if self.cfg.ghost_decay {
            self.ghost.decay();
        }
    }
    /// One try at writing `lpn`: to its sequential log block, else (fusing a
    /// BMA block first) to the PMA.
    fn write_once(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<(), FtlError> {
        if self.core.free.len() < MIN_EMPTY {
            // Blocks gone bad (a failed erase, a copy target) took empty blocks
            // Janus-FTL keeps: made again first.
            self.ensure_empties(io, MIN_EMPTY)?;
        }
        let ppb = self.core.ppb();
        let (lb, off) = (lpn.0 / ppb, lpn.0 % ppb);
        if !self.fused[lb as usize] && self.cfg.sequential_log == SequentialLog::All {
            let mut l = self.seq[lb as usize];
            if l != NONE && self.core.next[l as usize] >= ppb {
                // Full: a block gone bad counts as full.
                self.reclaim_seq(io, lb)?;
                l = NONE;
            }
            if !self.fused[lb as usize] {
                if l == NONE {
                    l = self.open_seq(io, lb)?;
                }
                // Writes keeping the log block's pages in place are the
                // sequential references the ghost buffers filter out.
                let ordered = self.ordered[lb as usize] && self.core.next[l as usize] == off;
                self.ordered[lb as usize] = ordered;
                if !ordered {
                    self.ghost.access(lb);
                }
                self.core.write(io, l, lpn.0, data, Purpose::Host)?;
                if self.core.next[l as usize] == ppb {
                    self.reclaim_seq(io, lb)?;
                }
                return Ok(());
            }
            // Fused by the reclaim of its full log block: to the PMA.
            self.ghost.access(lb);
        } else if !self.fused[lb as usize] {
            let l = self.seq[lb as usize];
            if l != NONE && self.core.next[l as usize] == off {
                self.core.write(io, l, lpn.0, data, Purpose::Host)?;
                if self.core.next[l as usize] == ppb {
                    self.reclaim_seq(io, lb)?;
                }
                return Ok(());
            }
            if l == NONE && off == 0 {
                let l = self.open_seq(io, lb)?;
                return self.core.write(io, l, lpn.0, data, Purpose::Host);
            }
            self.ghost.access(lb);
            self.fuse(io, lb)?;
        } else {
            self.ghost.access(lb);
            self.touch(lb);
            // Gradual deflation toward a lowered target.
            if self.n_fused > self.target.max(1) {
                if let Some(victim) = self.lru.values().copied().find(|&x| x != lb) {
                    self.defuse(io, victim)?;
                }
            }
        }
        let b = self.active(io)?;
        self.core.write(io, b, lpn.0, data, Purpose::Host)
    }
}

impl Ftl for Janus {
    fn name(&self) -> &'static str {
        self.name
    }
    fn logical_pages(&self) -> u32 {
        self.core.logical_pages()
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.core.read(io, lpn.0)
    }
    /// Writes `lpn` (see the module documentation); when the program fails, the
    /// block counts as full and the write is tried again, up to
    /// [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) times.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.host_writes += 1;
        // Section 5: a decision after every N_D write *requests*; a request's
        // pages but the last say more follow.
        if !hint.more {
            self.write_requests += 1;
            if self.write_requests.is_multiple_of(self.period) {
                self.adapt();
            }
        }
        retry_program(self, |s| s.write_once(io, lpn, data.clone()), |_, _| {})
    }
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.core.flush_maps(io)
    }
    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.core.invalidate(lpn.0);
        Ok(())
    }
    fn ram_bytes(&self) -> u64 {
        // The block map, the page map of the PMA's pages, the LRU list and the
        // ghost stack.
        let pma_blocks = u64::from(self.n_o) + u64::from(self.n_fused);
        self.core.block_map_bytes() + pma_blocks * u64::from(self.core.ppb()) * 4 + u64::from(self.core.lblocks) * 16
    }
    /// `fused_blocks` (`N_F`), `target_fused_blocks` and `optimum_fused_blocks`
    /// (the optimum of Eq. 4 estimated at the last adaptation decision; the
    /// target moves halfway toward it), `pma_utilization` (`u_d = N_F / (N_O +
    /// N_F)`), `ghost_hit_rate` (the ghost buffers' estimate, at the last
    /// decision, of the PMA's hit rate at the target chosen), and
    /// `gc_victims` and `gc_victim_valid_pages` (cumulative, see
    /// [`JanusStats::victims`]).
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let n_f = f64::from(self.n_fused);
        vec![
            ("fused_blocks", n_f),
            ("target_fused_blocks", f64::from(self.target)),
            ("optimum_fused_blocks", f64::from(self.optimum)),
            ("pma_utilization", n_f / (f64::from(self.n_o) + n_f).max(1.0)),
            ("ghost_hit_rate", self.hit_rate),
            ("gc_victims", self.stats.victims as f64),
            ("gc_victim_valid_pages", self.stats.victim_valid_pages as f64),
        ]
    }
    /// `ghost_hit_rates`: the curve the last adaptation decision used, for
    /// `ftlab janus-model --hit-rates` (left out before the first decision).
    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        if self.rates.is_empty() {
            return Vec::new();
        }
        // Summed in floating point, the last rates may pass 1 by a rounding error.
        vec![("ghost_hit_rates", self.rates.iter().map(|r| r.min(1.0)).collect())]
    }
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.core.check(flash)?;
        let ppb = self.core.ppb();
        let name = self.name;
        if self.n_fused as usize != self.fused.iter().filter(|&&f| f).count() || self.lru.len() != self.n_fused as usize
        {
            return Err(format!("{name}: fused count, flags and LRU list differ"));
        }
        for lpn in 0..self.core.logical_pages() {
            let b = self.core.block_of_lpn(lpn);
            let lb = (lpn / ppb) as usize;
            if b == NONE {
                continue;
            }
            if self.fused[lb] {
                if !self.pma[b as usize] {
                    return Err(format!("{name}: lpn {lpn} of fused block {lb} is in block {b}, not in the PMA"));
                }
            } else if b != self.core.data[lb] && b != self.seq[lb] {
                return Err(format!("{name}: lpn {lpn} of BMA block {lb} is in block {b}"));
            }
        }
        for lb in 0..self.core.lblocks as usize {
            if self.fused[lb] && (self.core.data[lb] != NONE || self.seq[lb] != NONE) {
                return Err(format!("{name}: fused block {lb} has a data or sequential log block"));
            }
            for b in [self.core.data[lb], self.seq[lb]] {
                if b != NONE && self.pma[b as usize] {
                    return Err(format!("{name}: block {b} of BMA block {lb} is in the PMA"));
                }
            }
        }
        // Blocks gone bad may take empty blocks until the next write makes them
        // again (or finds the device full).
        let grown_bad = (0..self.core.g.total_blocks()).any(|b| flash.nand().is_grown_bad(ftlab_nand::BlockId(b)));
        if self.core.free.len() < MIN_EMPTY && !grown_bad {
            return Err(format!("{name}: {} empty blocks, fewer than {MIN_EMPTY}", self.core.free.len()));
        }
        Ok(())
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 2] = [
    crate::entry::Scheme {
        name: "janus",
        summary: "Janus-FTL (004): page- and block-mapping areas, fusion / defusion, PMA sized by ghost buffers",
        paper: "004 Sections 3-5",
        admits_tasks: false,
        bounds: false,
        build: |p, _| crate::entry::configured("janus", JanusConfig::default(), p, JanusConfig::validate),
    },
    crate::entry::Scheme {
        name: "janus-fix",
        summary: "Janus-FTL with the PMA at a fixed utilization u_d = 0.75 (004 Figure 7's Janus(Fix))",
        paper: "004 Section 6.2 (Janus(Fix))",
        admits_tasks: false,
        bounds: false,
        build: |p, _| crate::entry::configured("janus-fix", JanusConfig::fixed(), p, JanusConfig::validate),
    },
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::schemes::page::pagemap::PageMapConfig;
    use crate::testing::TIMING;
    use ftlab_nand::{Geometry, SimTime};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// One die, 256 blocks of 32 pages.
    fn geometry() -> Geometry {
        crate::testing::one_die(256, 32)
    }

    /// Flash time of the operations counted so far, by the chip's times.
    fn flash_time_ns(fl: &Flash) -> u64 {
        let c = fl.counters();
        c.reads.total() * TIMING.read_ns + c.programs.total() * TIMING.program_ns + c.erases.total() * TIMING.erase_ns
    }

    struct Run {
        fl: Flash,
        ftl: Box<dyn Ftl>,
        t: u64,
    }

    impl Run {
        fn new(builder: &dyn FtlBuilder) -> Self {
            let mut fl = crate::testing::flash(geometry(), 3);
            let ftl = builder.format(&mut fl.io(SimTime::ZERO)).unwrap();
            Run { fl, ftl, t: 0 }
        }
        fn write(&mut self, lpn: u32) {
            self.t += 1_000_000;
            let mut io = self.fl.io(SimTime(self.t));
            self.ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + self.t), &Hint::default()).unwrap();
            self.t = self.t.max(io.last_finish().0);
        }
        fn fill(&mut self, pages: u32) {
            for lpn in 0..pages {
                self.write(lpn);
            }
            self.fl.reset_counters();
        }
    }

    /// An OLTP-like write stream: most writes to a small hot set of logical
    /// blocks, the rest anywhere, every page chosen at random.
    fn oltp(rng: &mut ChaCha8Rng, pages: u32, ppb: u32) -> u32 {
        let hot_blocks = 12;
        if rng.gen_bool(0.9) {
            rng.gen_range(0..hot_blocks * ppb)
        } else {
            rng.gen_range(0..pages)
        }
    }

    #[test]
    fn beats_page_mapping_with_the_same_over_provisioning_on_oltp() {
        let ppm = PageMapConfig { over_provisioning: 0.03, ..PageMapConfig::preset("ppm-ftl").unwrap() };
        let janus = JanusConfig::default();
        let mut a = Run::new(&ppm);
        let mut b = Run::new(&janus);
        let pages = a.ftl.logical_pages().min(b.ftl.logical_pages());
        a.fill(pages);
        b.fill(pages);
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let stream: Vec<u32> = (0..6 * pages).map(|_| oltp(&mut rng, pages, 32)).collect();
        for &lpn in &stream {
            a.write(lpn);
            b.write(lpn);
        }
        let (ta, tb) = (flash_time_ns(&a.fl), flash_time_ns(&b.fl));
        let (ca, cb) = (a.fl.counters().page_copies(), b.fl.counters().page_copies());
        eprintln!("{pages} pages, {} writes: ppm {ta} ns {ca} copies; janus {tb} ns {cb} copies", stream.len());
        assert!(tb * 10 < ta * 8, "janus {tb} ns vs page mapping {ta} ns");
        a.ftl.check_invariants(&a.fl).unwrap();
        b.ftl.check_invariants(&b.fl).unwrap();
    }

    #[test]
    fn the_pma_grows_under_random_writes_and_shrinks_under_sequential_ones() {
        let mut fl = crate::testing::flash(geometry(), 3);
        // 8% over-provisioning: N_O = 15 blocks for the PMA, near Figure 4's 20.
        let cfg = JanusConfig { over_provisioning: 0.08, ..JanusConfig::default() };
        let core = Core::format("janus", &fl.io(SimTime::ZERO), cfg.over_provisioning, MIN_SPARE).unwrap();
        let good = core.free.len() as u32;
        let mut f = Janus::with_core(cfg, core, good, &fl.io(SimTime::ZERO));
        let pages = f.logical_pages();
        let mut t = 0u64;
        let mut w = |f: &mut Janus, fl: &mut Flash, lpn: u32| {
            t += 1_000_000;
            let mut io = fl.io(SimTime(t));
            f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + t), &Hint::default()).unwrap();
            t = t.max(io.last_finish().0);
        };
        for lpn in 0..pages {
            w(&mut f, &mut fl, lpn);
        }
        let start = f.target_fused();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..4 * pages {
            let lpn = rng.gen_range(0..pages);
            w(&mut f, &mut fl, lpn);
        }
        let (random_target, random_fused) = (f.target_fused(), f.fused_blocks());
        for _ in 0..4 {
            for lpn in 0..pages {
                w(&mut f, &mut fl, lpn);
            }
        }
        let (seq_target, seq_fused) = (f.target_fused(), f.fused_blocks());
        eprintln!(
            "start {start}; random: target {random_target} fused {random_fused}; sequential: target {seq_target} fused {seq_fused}; {:?}",
            JanusStats { decisions: Vec::new(), ..f.stats().clone() }
        );
        assert!(random_target > start && random_fused > start, "random writes grow the PMA");
        assert!(seq_target < random_target / 2 && seq_fused < random_fused / 2, "sequential writes shrink it");
        f.check_invariants(&fl).unwrap();
    }

    /// Section 5: an adaptation decision after every `N_D` write *requests*.
    /// Requests of four pages (the first three carrying `more`) count once
    /// each: 400 pages in 100 requests with a period of 25 make 4 decisions,
    /// not 16 (counting pages).
    #[test]
    fn the_adaptation_period_counts_write_requests_not_pages() {
        let mut fl = crate::testing::flash(geometry(), 3);
        let cfg = JanusConfig { over_provisioning: 0.08, adaptation_period: 25, ..JanusConfig::default() };
        let core = Core::format("janus", &fl.io(SimTime::ZERO), cfg.over_provisioning, MIN_SPARE).unwrap();
        let good = core.free.len() as u32;
        let mut f = Janus::with_core(cfg, core, good, &fl.io(SimTime::ZERO));
        let mut t = 0u64;
        for lpn in 0..400u32 {
            t += 1_000_000;
            let mut io = fl.io(SimTime(t));
            let hint = Hint { more: lpn % 4 != 3, ..Hint::default() };
            f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn)), &hint).unwrap();
            t = t.max(io.last_finish().0);
        }
        let at: Vec<u64> = f.stats().decisions.iter().map(|d| d.0).collect();
        assert_eq!(at, [100, 200, 300, 400], "decisions at these host page writes");
        f.check_invariants(&fl).unwrap();
    }

    /// Fusions bring data blocks written in part into the PMA; once their
    /// pages are trimmed, no PMA block may be full while defusions take the
    /// empty blocks. Making the empty blocks Janus-FTL keeps must then collect
    /// a PMA block written in part (here one with no valid page) instead of
    /// finding the device full (the `janus_flash_maps_one_die` conformance
    /// case).
    #[test]
    fn empty_blocks_are_made_when_no_pma_block_is_full() {
        // 12 blocks of 8 pages: 7 logical blocks, 5 spare (two kept empty, one
        // sequential log block, N_O = 2); the fixed target starts at 6.
        let mut fl = crate::testing::flash(crate::testing::one_die(12, 8), 3);
        let cfg =
            JanusConfig { over_provisioning: 0.0, sequential_log: SequentialLog::InOrder, ..JanusConfig::fixed() };
        let core = Core::format("janus-fix", &fl.io(SimTime::ZERO), cfg.over_provisioning, MIN_SPARE).unwrap();
        let good = core.free.len() as u32;
        let mut f = Janus::with_core(cfg, core, good, &fl.io(SimTime::ZERO));
        assert_eq!((f.core.lblocks, f.n_o, f.max_seq, f.target), (7, 2, 1, 6));
        let mut t = 0u64;
        let w = |f: &mut Janus, fl: &mut Flash, t: &mut u64, lpn: u32| {
            *t += 1_000_000;
            let mut io = fl.io(SimTime(*t));
            f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + *t), &Hint::default()).unwrap();
            *t = (*t).max(io.last_finish().0);
        };
        // Page 0 of every logical block: six data blocks (switch merges) and
        // the sequential log block of logical block 6 hold one page each.
        for lb in 0..7 {
            w(&mut f, &mut fl, &mut t, lb * 8);
        }
        // Page 4 of logical blocks 0-5 fuses them (their data blocks join the
        // PMA) and goes to the active log block, logical block 0's old data
        // block; trimming page 0 of logical blocks 1-5 leaves their old data
        // blocks in the PMA, written in part, without a valid page.
        for lb in 0..6 {
            w(&mut f, &mut fl, &mut t, lb * 8 + 4);
        }
        for lb in 1..6 {
            f.trim(&mut fl.io(SimTime(t)), Lpn(lb * 8)).unwrap();
        }
        assert_eq!((f.fused_blocks(), f.core.free.len()), (6, 5));
        assert_eq!(f.victim(), None, "no PMA block is full");
        // A lower target: the next fusion (logical block 6, a write out of
        // sequence) defuses five blocks, each into an empty block, while
        // logical block 0's old data block keeps valid pages.
        f.target = 2;
        w(&mut f, &mut fl, &mut t, 6 * 8 + 3);
        assert_eq!((f.fused_blocks(), f.stats().defusions), (2, 5));
        assert!(f.core.free.len() >= MIN_EMPTY);
        f.check_invariants(&fl).unwrap();
        for lpn in 0..f.logical_pages() {
            let expected = lpn % 8 == 4 && lpn < 48 || lpn == 0 || lpn == 48 || lpn == 51;
            assert_eq!(f.read(&mut fl.io(SimTime(t)), Lpn(lpn)).unwrap().is_some(), expected, "lpn {lpn}");
        }
    }

    /// A fixed-target Janus-FTL on 12 blocks of 8 pages: 7 logical blocks and
    /// 5 spare (two kept empty, `max_seq` sequential log blocks), with a
    /// writer and a reader.
    struct Small {
        f: Janus,
        fl: Flash,
        t: u64,
    }
    fn small(cfg: JanusConfig) -> Small {
        let mut fl = crate::testing::flash(crate::testing::one_die(12, 8), 3);
        let core = Core::format(cfg.name(), &fl.io(SimTime::ZERO), cfg.over_provisioning, MIN_SPARE).unwrap();
        let good = core.free.len() as u32;
        let f = Janus::with_core(cfg, core, good, &fl.io(SimTime::ZERO));
        Small { f, fl, t: 0 }
    }
    impl Small {
        fn put(&mut self, lpn: u32) {
            self.t += 1_000_000;
            let mut io = self.fl.io(SimTime(self.t));
            self.f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn)), &Hint::default()).unwrap();
            self.t = self.t.max(io.last_finish().0);
        }
        fn get(&mut self, lpn: u32) -> Option<Payload> {
            self.f.read(&mut self.fl.io(SimTime(self.t)), Lpn(lpn)).unwrap()
        }
    }

    #[test]
    fn random_writes_to_a_bma_block_wait_in_its_log_block_and_fuse_when_it_is_reclaimed() {
        let mut s =
            small(JanusConfig { over_provisioning: 0.0, sequential_log: SequentialLog::All, ..JanusConfig::fixed() });
        assert_eq!((s.f.core.lblocks, s.f.max_seq), (7, 1));
        // Out of order: both land in logical block 2's sequential log block,
        // which decides nothing yet.
        s.put(2 * 8 + 5);
        s.put(2 * 8 + 3);
        let l = s.f.seq[2];
        assert_ne!(l, NONE);
        assert_eq!((s.f.fused_blocks(), s.f.stats().fusions, s.f.core.next[l as usize]), (0, 0, 2));
        assert_eq!(s.f.core.block_of_lpn(2 * 8 + 5), l);
        s.f.check_invariants(&s.fl).unwrap();
        // Six more (an overwrite among them) fill it: reclaimed, its pattern
        // is random, so logical block 2 is fused and the log block is a PMA
        // block.
        for off in [0, 1, 5, 6, 7, 2] {
            s.put(2 * 8 + off);
        }
        assert_eq!((s.f.fused_blocks(), s.f.stats().log_fusions, s.f.stats().switch_merges), (1, 1, 0));
        assert!(s.f.fused[2] && s.f.pma[l as usize] && s.f.seq[2] == NONE);
        s.f.check_invariants(&s.fl).unwrap();
        for off in [0, 1, 2, 3, 5, 6, 7] {
            assert_eq!(s.get(2 * 8 + off), Some(Payload::Token(u64::from(2 * 8 + off))), "page {off}");
        }
        assert_eq!(s.get(2 * 8 + 4), None);
    }

    #[test]
    fn a_spent_pool_fuses_a_random_log_block_whose_unused_pages_serve_the_pma() {
        let mut s =
            small(JanusConfig { over_provisioning: 0.0, sequential_log: SequentialLog::All, ..JanusConfig::fixed() });
        s.put(8 + 6);
        let l = s.f.seq[1];
        // Another logical block's write needs the only log block: block 1's,
        // holding page 6 at position 0, is fused, and its seven unused pages
        // are open in the PMA.
        s.put(3 * 8 + 1);
        assert!(s.f.fused[1] && s.f.pma[l as usize]);
        assert!(s.f.open.contains(&l));
        assert_eq!(s.f.stats().log_fusions, 1);
        // The next write to logical block 1 goes to the PMA's active log block.
        s.put(8 + 2);
        assert_eq!(s.f.core.block_of_lpn(8 + 2), s.f.open[0]);
        s.f.check_invariants(&s.fl).unwrap();
        assert_eq!(s.get(8 + 6), Some(Payload::Token(14)));
    }

    #[test]
    fn pages_in_order_are_switched_in_and_the_in_order_ablation_fuses_at_once() {
        let mut s =
            small(JanusConfig { over_provisioning: 0.0, sequential_log: SequentialLog::All, ..JanusConfig::fixed() });
        for off in 0..8 {
            s.put(4 * 8 + off);
        }
        assert_eq!((s.f.stats().switch_merges, s.f.fused_blocks()), (1, 0));
        assert_ne!(s.f.core.data[4], NONE);
        // In order from page 0 again, then the pool is spent while half the
        // block is written: a partial merge.
        for off in 0..4 {
            s.put(4 * 8 + off);
        }
        s.put(0);
        assert_eq!((s.f.stats().partial_merges, s.f.stats().log_fusions, s.f.fused_blocks()), (1, 0, 0));
        s.f.check_invariants(&s.fl).unwrap();

        let cfg =
            JanusConfig { over_provisioning: 0.0, sequential_log: SequentialLog::InOrder, ..JanusConfig::fixed() };
        let mut s = small(cfg);
        s.put(2 * 8 + 5);
        assert_eq!((s.f.fused_blocks(), s.f.stats().fusions, s.f.seq[2]), (1, 1, NONE));
    }

    #[test]
    fn a_power_cut_with_pages_out_of_place_in_a_log_block_loses_nothing() {
        for cut_after in 1..8u32 {
            let mut s = small(JanusConfig {
                over_provisioning: 0.0,
                sequential_log: SequentialLog::All,
                ..JanusConfig::fixed()
            });
            for off in 0..8 {
                s.put(5 * 8 + off);
            }
            let offs = [3, 0, 1, 7, 3, 6, 2];
            for &off in &offs[..cut_after as usize] {
                s.put(5 * 8 + off);
            }
            assert_eq!(s.f.fused_blocks(), 0);
            let t = SimTime(s.t);
            s.fl.power_cut(t);
            s.f = Janus::recover(f_cfg(), &mut s.fl.io(t)).unwrap();
            s.f.check_invariants(&s.fl).unwrap();
            for off in 0..8 {
                assert_eq!(s.get(5 * 8 + off), Some(Payload::Token(u64::from(5 * 8 + off))));
            }
            // Out of place: the logical block comes back fused; one page in
            // place (page 3 at position 0 is not) would be a partial merge.
            assert!(s.f.fused[5], "after {cut_after} writes");
        }
    }
    fn f_cfg() -> JanusConfig {
        JanusConfig { over_provisioning: 0.0, sequential_log: SequentialLog::All, ..JanusConfig::fixed() }
    }

    #[test]
    fn registered_with_defaults_and_bad_config_names_the_key() {
        for kind in ["janus", "janus-fix", "fast", "bast"] {
            assert!(crate::registry::scheme(kind).is_some(), "{kind}");
            assert!(crate::registry::build(kind, &toml::Table::new()).is_ok(), "{kind}");
        }
        assert!(!JanusConfig::fixed().adaptive && JanusConfig::fixed().utilization == 0.75);
        let bad = |kind: &str, key: &str, v: toml::Value| {
            let mut p = toml::Table::new();
            p.insert(key.into(), v);
            crate::registry::build(kind, &p).unwrap_err().to_string()
        };
        let e = bad("janus-fix", "utilization", toml::Value::Float(1.0));
        assert!(e.contains("janus.utilization"), "{e}");
        let e = bad("janus", "sequential_log_blocks", toml::Value::Integer(0));
        assert!(e.contains("janus.sequential_log_blocks"), "{e}");
        let e = bad("fast", "over_provisioning", toml::Value::Float(-0.1));
        assert!(e.contains("fast.over_provisioning"), "{e}");
        // A device with too few blocks for the spare ones is a configuration error.
        let mut fl = crate::testing::flash(Geometry { blocks_per_plane: 5, ..geometry() }, 1);
        let e = JanusConfig::default().format(&mut fl.io(SimTime::ZERO)).unwrap_err();
        assert!(matches!(e, FtlError::Config(ref c) if c.problem.contains("too small for janus")), "{e}");
    }
}
