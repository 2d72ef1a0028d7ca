//! Telomere (`000_ffe2fafb22bcad8e.txt`, Sections 3-5): data placed by expiry time
//! so that garbage collection is only the erase of a block whose data has all
//! expired.
//!
//! - **Page mapping** over the whole logical space; every block carries a *stamp*,
//!   the latest expiry of the data written into it (Section 3).
//! - **Task blocks.** At format the configured task set is admitted on this device
//!   by `ftlab_bounds::telomere::admit_with` (storage Eq. 5-16, throughput Eq.
//!   17-20, then die by die with the stripes as placed,
//!   `ftlab_bounds::telomere::stripes`: Eq. 18 spreads a write over every chip, a
//!   stripe puts `ceil(w / g)` pages on each of its `g`); each admitted writing task (SiP, Section 4.1) or each SharP partition
//!   (Algorithm 1, Section 4.2) is a *group* that may hold at most its `H_g` blocks.
//!   A group's pages are striped by logical address over `g` dies (its widest
//!   task's granularity), the groups' stripes laid round robin from die 0. Task `i` is the stream `Hint::stream == Some(i)`; a write's
//!   expiry is `Hint::expiry`, or, when the host gives none, Eq. 3-4
//!   (`floor(t / T^w) T^w + (l^w + 1) T^w`).
//! - **GC is an erase.** A closed group block is erased once its stamp has passed
//!   or all its pages are overwritten or trimmed: after each write's
//!   acknowledgement (`erases_per_write`, the GC job of Eq. 19), in idle time, and
//!   when a group at its quota needs a block. Task blocks are never copied.
//! - **Default pool.** Writes without a stream (the conformance suite, traces), of
//!   an unknown or refused stream, of a group that has used its whole quota (the
//!   workload wrote faster than admitted), or whose expiry is further away than
//!   its group's longest lifetime `max (l^w + 1) T^w` (it kept data longer than
//!   admitted) go to a shared pool with greedy GC, like [`crate::schemes::page::pagemap`]. Its
//!   copies count as GC; expired pages are dropped rather than copied. The pool
//!   never uses the blocks reserved for groups: its GC keeps `gc_free_blocks` plus
//!   the groups' unused quota free. The logical space is what the pool alone can
//!   hold (every logical page may be written without a hint), so reservations
//!   shrink it by their blocks. With `pool_dies = n` (0: every die) the pool
//!   writes and copies on dies `0 .. n` and keeps at most `n` open blocks, so its
//!   slack is `gc_free_blocks + n + 1` blocks and the groups get the rest. Groups
//!   take free blocks on those dies too; when none of them has one, the pool
//!   opens its block on the other die with the most free blocks, still never
//!   holding more than `n` open blocks: the slack counts open blocks, not where
//!   they are, and the free-block count its GC keeps is device-wide, so the
//!   accounting holds wherever the blocks are.
//! - **Block summaries** (module `summary`): two pages of each group block hold its
//!   group (a header after its first data page) and its stamp (a trailer, its
//!   last page), programmed after the write's acknowledgement. Admission sizes
//!   the groups with `P - 2` data pages a block.
//! - **Task space.** After the logical space come `sum w (l^w + 1)` pages for the
//!   admitted tasks' data ([`RealTime::stream_pages`](crate::RealTime::stream_pages); the simulator places periodic
//!   tasks there): only a write of an admitted task's stream may use them
//!   ([`FtlError::Reserved`] otherwise). [`RealTime::admission`](crate::RealTime::admission) gives each configured
//!   task's verdict and, if refused, the test and the amount.
//! - **Wear leveling** (Section 6.2, `free_order`): a group or the pool opens the
//!   free block of its die that comes first in the free-block queue (`fifo`, no
//!   wear leveling), the one with the lowest RBER by the wear model of Eq. 27
//!   (`rber`, RBER balancing), or, with health binning (`health-bin`, Pletka &
//!   Tomic, SYSTOR '16), the one whose RBER rank matches the heat of the stream:
//!   the hottest data goes to the healthiest free block, the coldest to the least
//!   healthy. Telomere knows how hot each group is at format: a group whose
//!   blocks are filled and expire sooner (shorter data lifetime plus time to fill
//!   a block) is erased more often, so it gets a healthier block; the pool,
//!   holding data of every lifetime, takes the middle. Deviations: Pletka & Tomic
//!   bin blocks into health classes and streams by measured update frequency;
//!   here a stream's heat is its rank by configured residence, and the bins are
//!   the `streams` (groups + 1) healthiest free blocks of the die, hottest stream
//!   in the healthiest ([`BlockAllocator::next_page_binned`]): the other free
//!   blocks stay idle, because a cold group that always took the least healthy of
//!   all free blocks would erase that block once per residence, more often than
//!   the idle blocks rotate.
//! - **Expired data** is not readable: a read of a page whose expiry has passed is
//!   [`FtlError::Expired`], whether or not its block was erased yet.
//!
//! Deviations, and why: the paper assumes every write belongs to an admitted task;
//! the pool makes this a general FTL. Admission charges `t_r` and `t_w` with the
//! channel transfer of a page (the simulator does). The paper does not say how
//! Telomere survives a power cut; here the medium's OOB holds no expiry (nor the
//! writer's stream), so recovery ([`Telomere::recover`]) knows expiry per block,
//! from the summaries, not per page: a recovered page expires at its block's
//! stamp, never earlier than its own expiry but possibly later (a page that
//! expired before the cut reads as [`FtlError::Expired`] if its block's stamp
//! passed too, else its last value until the stamp). A group block left open by
//! the cut (no trailer) is stamped with the time of recovery plus its group's
//! longest lifetime, an upper bound of every expiry in it. A block whose header
//! the cut lost (cut between a block's first page and its header) and every pool
//! block come back to the pool with data that never expires until overwritten;
//! so does pool data written with an expiry. A logical page whose block was
//! erased before the cut reads as never written, and an older copy of a logical
//! page whose newer copy expired and was erased may come back, expiring with its
//! own block. The summaries cost two pages of each group block and one program
//! each (purpose `checkpoint`).

mod config;
mod heat;
mod recover;
mod summary;
#[cfg(test)]
mod tests;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, PageKind, Payload, Ppa, SimTime};

pub use config::{Group, Placement, Plan, TaskConfig, TelomereConfig};

use crate::alloc::{Allocation, BlockAllocator, FreeOrder};
use crate::mapping::{PageTable, ValidMap};
use crate::victim::GreedyPicker;
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// Expiry of data that never expires.
const NEVER: u64 = u64::MAX;
/// Allocator stream of the default pool; group `k` is stream `k + 1`.
const POOL: u32 = 0;

impl TelomereConfig {
    /// The registry's build of policy `policy` under the name `kind`: `params`
    /// over the defaults, with the task set `tasks` when given (refused tasks
    /// are then reported, not an error, unless `params` sets
    /// `strict_admission`; a `tasks` key in `params` replaces the set).
    fn registered(
        kind: &str,
        policy: Placement,
        params: &toml::Table,
        tasks: Option<&[crate::entry::PeriodicTask]>,
    ) -> Result<crate::entry::Builder, FtlError> {
        let base = TelomereConfig { policy, ..Default::default() };
        let base = match tasks {
            Some(tasks) => TelomereConfig { tasks: tasks.to_vec(), strict_admission: false, ..base },
            None => base,
        };
        crate::entry::configured(kind, base, params, TelomereConfig::validate)
    }
}

impl FtlBuilder for TelomereConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Telomere::format(self.clone(), io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Telomere::recover(self.clone(), io)?))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    Open,
    Closed,
}

/// The Telomere FTL.
#[derive(Debug)]
pub struct Telomere {
    config: TelomereConfig,
    plan: Plan,
    /// One page command's service bound with a task set ([`RealTime::service_bound`](crate::RealTime::service_bound)).
    bound: SimTime,
    geometry: Geometry,
    layout: Layout,
    table: PageTable,
    valid: ValidMap,
    /// Logical page of each valid physical page (erasing an expired block unmaps
    /// its pages without reading their OOB).
    p2l: Vec<u32>,
    /// Expiry of each logical page's data, ns ([`NEVER`]).
    expiry: Vec<u64>,
    /// Valid counts of every block; candidates are the closed pool blocks.
    picker: GreedyPicker,
    alloc: BlockAllocator,
    state: Vec<State>,
    /// Allocator stream of each open or closed block.
    owner: Vec<u32>,
    /// Latest expiry written into each block.
    stamp: Vec<u64>,
    /// Blocks each group holds (open or closed).
    held: Vec<u32>,
    /// Per die, its closed blocks by the time they become erasable (stamp, or 0
    /// when emptied).
    expiring: Vec<BinaryHeap<Reverse<(u64, u32)>>>,
    /// Writes of a group sent to the pool because the group had used its quota.
    overflow_writes: u64,
    /// Heat of each allocator stream for health binning ([`heat::stream_heat`]).
    heat: Vec<f64>,
    /// Dies the pool writes on (`TelomereConfig::pool_dies`, 0 resolved).
    pool_dies: u32,
    /// Where the pool's choice among its dies starts next, when they are not all.
    pool_cursor: u32,
}

impl Telomere {
    fn empty(config: TelomereConfig, io: &Io) -> Result<Self, FtlError> {
        let plan = config.plan(io)?;
        let g = *io.geometry();
        let n = plan.groups.len();
        let blocks = g.total_blocks() as usize;
        let heat = heat::stream_heat(&plan, &config.tasks, g.pages_per_block.saturating_sub(summary::PAGES));
        Ok(Telomere {
            table: PageTable::new(plan.logical_pages + plan.stream_pages),
            valid: ValidMap::new(g.total_pages()),
            p2l: vec![0; g.total_pages() as usize],
            expiry: vec![NEVER; (plan.logical_pages + plan.stream_pages) as usize],
            picker: GreedyPicker::new(g.total_blocks(), g.pages_per_block),
            alloc: BlockAllocator::empty(&g, n as u32 + 1),
            state: vec![State::Free; blocks],
            owner: vec![POOL; blocks],
            stamp: vec![NEVER; blocks],
            held: vec![0; n],
            expiring: vec![BinaryHeap::new(); g.dies() as usize],
            overflow_writes: 0,
            heat,
            pool_dies: config.pool_die_count(&g),
            pool_cursor: 0,
            layout: Layout::new(&g),
            bound: {
                let t = io.timing();
                let x = t.transfer(g.page_size + g.oob_size).0;
                // A block summary program of each other die on the channel.
                let share = crate::schemes::realtime::lazy_rtgc::channel_share_ns(io, 1);
                SimTime(t.erase_ns + (t.read_ns + x).max(t.program_ns + x) + share)
            },
            geometry: g,
            plan,
            config,
        })
    }

    /// Telomere on a freshly formatted medium: admits the task set and reserves
    /// its blocks (a refused task is an error unless `strict_admission` is off).
    pub fn format(config: TelomereConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        ftl.alloc = BlockAllocator::formatted(&ftl.geometry, ftl.plan.groups.len() as u32 + 1, |b| io.is_bad(b));
        Ok(ftl)
    }

    /// The admission outcome: groups, their quotas and stripes.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Writes of a group that went to the pool because the group was at its quota.
    pub fn overflow_writes(&self) -> u64 {
        self.overflow_writes
    }

    /// Blocks reserved for groups and not held by them: the pool leaves them free.
    fn reserved_free(&self) -> u32 {
        self.plan.groups.iter().zip(&self.held).map(|(g, &h)| g.quota.saturating_sub(h)).sum()
    }

    /// Logical pages a read or trim may reach: the shared space and the tasks'.
    fn addressable(&self) -> u32 {
        self.plan.logical_pages + self.plan.stream_pages
    }

    /// The allocator stream and the expiry of a write.
    fn route(&self, hint: &Hint, now: SimTime) -> (u32, u64) {
        let task = hint.stream.map(|s| s as usize).filter(|&s| s < self.plan.group_of_task.len());
        let expiry = match (hint.expiry, task) {
            (Some(e), _) => e.0,
            (None, Some(s)) if self.plan.periods[s].0 > 0 => {
                // Eq. 3-4: the period's start plus l^w + 1 periods.
                let (t, l) = self.plan.periods[s];
                (now.0 / t * t).saturating_add((l + 1).saturating_mul(t))
            }
            _ => NEVER,
        };
        let stream = task.and_then(|s| self.plan.group_of_task[s]).map_or(POOL, |k| k + 1);
        (stream, expiry)
    }

    /// The next page of `stream` on (or near) `die`, recording a block it opens.
    fn take_page(&mut self, io: &Io, stream: u32, die: DieId) -> Result<Allocation, FtlError> {
        let next = match self.config.free_order {
            FreeOrder::Fifo => self.alloc.next_page(stream, die),
            FreeOrder::Rber => self.alloc.next_page_by(stream, die, |b| io.rber(b)),
            FreeOrder::HealthBin => {
                let heat = self.heat.get(stream as usize).copied().unwrap_or(heat::POOL_HEAT);
                self.alloc.next_page_binned(stream, die, |b| io.rber(b), heat, self.heat.len() as u32)
            }
        };
        let a = next.ok_or_else(|| FtlError::DeviceFull("no open block has room and no block is free".into()))?;
        if self.layout.page_in_block(a.ppa) == 0 {
            let b = self.layout.block_of(a.ppa).0 as usize;
            self.state[b] = State::Open;
            self.owner[b] = stream;
            self.stamp[b] = 0;
            if stream != POOL {
                self.held[stream as usize - 1] += 1;
            }
        }
        Ok(a)
    }

    /// Stamps the block of a page just written with `expiry`, and closes it if the
    /// page was its last.
    fn note_written(&mut self, a: Allocation, expiry: u64) {
        let b = self.layout.block_of(a.ppa);
        let s = &mut self.stamp[b.0 as usize];
        *s = (*s).max(expiry);
        if let Some(b) = a.filled {
            self.close(b);
        }
    }

    /// Closes the block `b`: a pool block becomes a GC candidate; every block is
    /// queued to be erased when its stamp passes.
    fn close(&mut self, b: BlockId) {
        let i = b.0 as usize;
        self.state[i] = State::Closed;
        if self.owner[i] == POOL {
            self.picker.insert(b);
        }
        self.note_closed(b);
    }

    /// Retires `b`, a block that went bad under a program ([`Io::program_placed`]):
    /// it is closed, so no page of it is handed out again; a pool block's valid
    /// pages are moved off by GC, a group block's expire with their stamp; then
    /// [`Io::reclaim`] refuses it and it is never used again.
    pub(super) fn retire(&mut self, b: BlockId) {
        self.alloc.retire(b);
        if self.state[b.0 as usize] == State::Open {
            self.close(b);
        }
    }

    /// A page of `stream`'s open block on `die` ([`Telomere::take_page`]), after
    /// retiring `bad` ([`Telomere::retire`]); the allocation is kept in `taken`.
    fn place(
        &mut self,
        io: &Io,
        stream: u32,
        die: DieId,
        bad: Option<BlockId>,
        taken: &mut Option<Allocation>,
    ) -> Result<Ppa, FtlError> {
        if let Some(b) = bad {
            self.retire(b);
        }
        let a = self.take_page(io, stream, die)?;
        *taken = Some(a);
        Ok(a.ppa)
    }

    /// Queues the closed block `b` to be erased when its stamp passes, or now if
    /// it is a group's and holds no valid page.
    pub(super) fn note_closed(&mut self, b: BlockId) {
        let i = b.0 as usize;
        if self.stamp[i] != NEVER {
            self.expire_at(self.stamp[i], b);
        }
        if self.owner[i] != POOL && self.picker.valid(b) == 0 {
            self.expire_at(0, b);
        }
    }

    /// Queues `b` to be erasable from `due` on.
    #[inline]
    fn expire_at(&mut self, due: u64, b: BlockId) {
        self.expiring[self.layout.die_of_block(b).0 as usize].push(Reverse((due, b.0)));
    }

    /// `lpn` no longer lives at `old`.
    fn invalidate(&mut self, old: Ppa) {
        self.valid.clear(old);
        let b = self.layout.block_of(old);
        self.picker.dec(b);
        let i = b.0 as usize;
        if self.state[i] == State::Closed && self.owner[i] != POOL && self.picker.valid(b) == 0 {
            self.expire_at(0, b);
        }
    }

    fn map(&mut self, lpn: usize, ppa: Ppa) {
        self.valid.set(ppa);
        self.p2l[ppa.0 as usize] = lpn as u32;
        self.picker.inc(self.layout.block_of(ppa));
    }

    /// Erases up to `max` closed blocks that are erasable at `now` (stamp passed or
    /// no valid page), on `die` or, with `None`, on any die (soonest due first):
    /// Telomere's whole garbage collection. Returns how many.
    fn reclaim_expired(&mut self, io: &mut Io, now: u64, max: u32, die: Option<DieId>) -> Result<u32, FtlError> {
        let mut n = 0;
        while n < max {
            let d = match die {
                Some(d) => d.0 as usize,
                None => match (0..self.expiring.len())
                    .min_by_key(|&d| self.expiring[d].peek().map_or(u64::MAX, |r| r.0 .0))
                {
                    Some(d) => d,
                    None => break,
                },
            };
            let Some(&Reverse((due, b))) = self.expiring[d].peek() else { break };
            if due > now {
                break;
            }
            self.expiring[d].pop();
            let block = BlockId(b);
            if !self.erasable(block, now) {
                continue; // stale entry: reused, or rewritten since
            }
            self.erase_expired(io, block, Purpose::Gc)?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether `block` is closed and its stamp has passed or it holds no valid page.
    fn erasable(&self, block: BlockId, now: u64) -> bool {
        let i = block.0 as usize;
        self.state[i] == State::Closed && (self.picker.valid(block) == 0 || self.stamp[i] <= now)
    }

    /// Erases an erasable block, unmapping its (expired) pages.
    fn erase_expired(&mut self, io: &mut Io, block: BlockId, purpose: Purpose) -> Result<(), FtlError> {
        let erased = io.reclaim(block, purpose)?;
        if self.picker.contains(block) {
            self.picker.remove(block);
        }
        let first = self.geometry.ppa(block, 0);
        let expired: Vec<Ppa> = self.valid.iter_set(first, self.geometry.pages_per_block).collect();
        for ppa in expired {
            let lpn = self.p2l[ppa.0 as usize] as usize;
            debug_assert!(self.expiry[lpn] <= io.now().0, "erasing unexpired lpn {lpn}");
            self.table.unmap(lpn);
        }
        self.valid.clear_range(first, self.geometry.pages_per_block);
        self.picker.set_valid(block, 0);
        self.release(block, erased);
        Ok(())
    }

    /// Returns an erased block to the free lists; one that went bad (`erased`
    /// false) leaves every list, retired.
    fn release(&mut self, block: BlockId, erased: bool) {
        let i = block.0 as usize;
        if self.picker.contains(block) {
            self.picker.remove(block);
        }
        if self.owner[i] != POOL && self.state[i] != State::Free {
            self.held[self.owner[i] as usize - 1] -= 1;
        }
        self.state[i] = State::Free;
        self.owner[i] = POOL;
        self.stamp[i] = NEVER;
        if erased {
            self.alloc.release(block);
        }
    }

    /// Pool GC: reclaims one pool block, copying its unexpired valid pages and
    /// dropping its expired ones. False if no candidate has a reclaimable page.
    fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let ppb = self.geometry.pages_per_block;
        let Some(victim) = self.picker.peek_min() else { return Ok(false) };
        if self.picker.valid(victim) >= ppb {
            return Ok(false);
        }
        self.picker.remove(victim);
        let now = io.now().0;
        let victim_die = self.layout.die_of_block(victim);
        let first = self.geometry.ppa(victim, 0);
        let sources: Vec<Ppa> = self.valid.iter_set(first, ppb).collect();
        for src in sources {
            let lpn = self.p2l[src.0 as usize] as usize;
            if self.expiry[lpn] <= now {
                self.table.unmap(lpn);
                self.invalidate(src);
                continue;
            }
            let die = self.pool_die(io, Some(victim_die));
            let mut taken = None;
            let moved = io.copy_placed(src, Purpose::Gc, |io, bad| self.place(io, POOL, die, bad, &mut taken));
            let a = match moved.and_then(|_| taken.ok_or_else(|| FtlError::DeviceFull("no page taken".into()))) {
                Ok(a) => a,
                Err(e) => {
                    self.picker.insert(victim);
                    return Err(e);
                }
            };
            self.table.replace(lpn, Some(src), a.ppa);
            self.invalidate(src);
            self.map(lpn, a.ppa);
            self.note_written(a, self.expiry[lpn]);
        }
        let erased = io.reclaim(victim, Purpose::Gc)?;
        self.release(victim, erased);
        Ok(true)
    }

    /// The die of the pool's next page; `near` (a GC victim's die, for copyback) if
    /// the pool may use it. With every die a pool die: `near`, else the first die
    /// idle now from the round-robin cursor. Otherwise among the pool's dies that
    /// have room in the pool's open block or, while the pool has fewer open blocks
    /// than dies, a free block: `near`, else the first idle one from a rotating
    /// start, else the one free soonest; if none has, the pool spills: its open
    /// block on another die, else the other die with the most free blocks. So the
    /// pool never has more than `pool_dies` open blocks, which is what its slack
    /// counts ([`TelomereConfig::pool_slack`]).
    fn pool_die(&mut self, io: &Io, near: Option<DieId>) -> DieId {
        let dies = self.geometry.dies();
        if self.pool_dies >= dies {
            return near.unwrap_or_else(|| io.free_die_from(self.alloc.next_die()));
        }
        let open = (0..dies).filter(|&d| self.alloc.open_room(POOL, DieId(d)) > 0).count() as u32;
        let usable = |s: &Self, d: DieId| {
            s.alloc.open_room(POOL, d) > 0 || (open < s.pool_dies && s.alloc.free_blocks_in(d) > 0)
        };
        if let Some(d) = near.filter(|&d| d.0 < self.pool_dies && usable(self, d)) {
            return d;
        }
        let start = self.pool_cursor;
        self.pool_cursor = (start + 1) % self.pool_dies;
        let mut soonest: Option<DieId> = None;
        for i in 0..self.pool_dies {
            let d = DieId((start + i) % self.pool_dies);
            if !usable(self, d) {
                continue;
            }
            if io.die_free_at(d) <= io.now() {
                return d;
            }
            if soonest.is_none_or(|b| io.die_free_at(d) < io.die_free_at(b)) {
                soonest = Some(d);
            }
        }
        soonest
            .or_else(|| {
                (self.pool_dies..dies)
                    .map(DieId)
                    .filter(|&d| usable(self, d))
                    .max_by_key(|&d| (self.alloc.open_room(POOL, d) > 0, self.alloc.free_blocks_in(d)))
            })
            .unwrap_or(DieId(0))
    }

    /// Pool GC before a write: while the free blocks not reserved for groups are at
    /// most `gc_free_blocks`, erase expired blocks, then collect greedily.
    fn collect_pool(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let low = |s: &Self| s.alloc.free_blocks() <= s.config.gc_free_blocks.saturating_add(s.reserved_free());
        if low(self) {
            self.reclaim_expired(io, io.now().0, u32::MAX, None)?;
        }
        while low(self) {
            if !self.collect_one(io)? {
                break;
            }
        }
        Ok(())
    }

    /// The die logical page `lpn` of group allocator stream `stream` goes to;
    /// `None` (the pool) if the group has used its whole quota and none of its
    /// blocks has expired.
    fn group_die(&mut self, io: &mut Io, stream: u32, lpn: Lpn) -> Result<Option<DieId>, FtlError> {
        let k = stream as usize - 1;
        let quota = self.plan.groups[k].quota;
        let die = self.stripe_die(k, lpn);
        if self.alloc.open_room(stream, die) == 0 && self.held[k] >= quota {
            let now = io.now().0;
            io.independent(|io| self.reclaim_expired(io, now, u32::MAX, None))?;
            if self.held[k] >= quota {
                return Ok(None);
            }
        }
        Ok(Some(die))
    }
}

impl Telomere {
    /// The die of logical page `lpn` of group `k`: striped by address over the
    /// group's `width` dies from `first_die`. A task writes its pages at
    /// consecutive addresses, so each job puts at most `ceil(w / width)` pages on
    /// a die and its freshest `r` pages lie at most `ceil(r / width)` to a die
    /// (the per-chip loads admission checks); and the die of a
    /// write waiting to be issued does not change ([`Placement::write_die`]).
    #[inline]
    fn stripe_die(&self, k: usize, lpn: Lpn) -> DieId {
        let g = &self.plan.groups[k];
        DieId((g.first_die + lpn.0 % g.width) % self.geometry.dies())
    }
}

impl Ftl for Telomere {
    fn name(&self) -> &'static str {
        match self.config.policy {
            Placement::Sip => "telomere-sip",
            Placement::Sharp => "telomere-sharp",
        }
    }

    fn logical_pages(&self) -> u32 {
        self.plan.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(lpn, self.addressable())?;
        let e = self.expiry[l];
        if e <= io.now().0 {
            return Err(FtlError::Expired { lpn: lpn.0, expired_at_us: e as f64 / 1e3 });
        }
        let Some(ppa) = self.table.get(l) else { return Ok(None) };
        let (data, _) = io.read(ppa, Purpose::Host)?;
        Ok(Some(data))
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.addressable())?;
        let (mut stream, expiry) = self.route(hint, io.now());
        if l >= self.plan.logical_pages as usize && stream == POOL {
            return Err(FtlError::Reserved { lpn: lpn.0, logical_pages: self.plan.logical_pages });
        }
        if stream != POOL && expiry > io.now().0.saturating_add(self.plan.groups[stream as usize - 1].lifetime_ns) {
            // Kept longer than its task was admitted for: it would hold the
            // group's blocks past their reservation (and past the lifetime
            // recovery assumes for data in a block without a summary).
            stream = POOL;
            self.overflow_writes += 1;
        }
        io.independent(|io| self.collect_pool(io))?;
        let mut die = None;
        if stream != POOL {
            die = self.group_die(io, stream, lpn)?;
            if die.is_none() {
                stream = POOL;
                self.overflow_writes += 1;
            }
        }
        let die = match die {
            Some(d) => d,
            None => self.pool_die(io, None),
        };
        let old = self.table.get(l);
        let page_size = matches!(data, Payload::Bytes(_)).then_some(self.geometry.page_size);
        let mut taken = None;
        io.program_placed(lpn.0, PageKind::Data, data, Purpose::Host, |io, bad| {
            self.place(io, stream, die, bad, &mut taken)
        })?;
        let a = taken.ok_or_else(|| FtlError::DeviceFull("no page taken".into()))?;
        if let Some(old) = old {
            io.supersede(old);
            self.invalidate(old);
        }
        self.table.replace(l, old, a.ppa);
        self.map(l, a.ppa);
        self.expiry[l] = expiry;
        self.note_written(a, expiry);
        io.ack();
        let mut erases = self.config.erases_per_write;
        if self.write_summary(io, a, stream, page_size)? {
            erases = erases.saturating_sub(1);
        }
        // On the write's own die: the next command there may wait for the erase,
        // which is the one operation it did not choose; another die's next
        // command waits for nothing of this write's.
        let now = io.now().0;
        self.reclaim_expired(io, now, erases, Some(self.layout.die_of(a.ppa)))?;
        Ok(())
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.addressable())?;
        self.expiry[l] = NEVER;
        if let Some(old) = self.table.unmap(l) {
            self.invalidate(old);
        }
        Ok(())
    }

    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        let now = io.now().0;
        while io.last_finish() < until {
            if self.reclaim_expired(io, now, 1, None)? == 0 {
                break;
            }
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        let blocks = self.state.len() as u64;
        self.table.ram_bytes()
            + self.valid.ram_bytes()
            + self.p2l.len() as u64 * 4
            + self.expiry.len() as u64 * 8
            + self.picker.ram_bytes()
            + self.alloc.ram_bytes()
            + blocks * (1 + 4 + 8)
            + self.held.len() as u64 * 8
            + self.expiring.iter().map(|h| h.capacity() as u64 * 12).sum::<u64>()
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        let g = &self.geometry;
        let mut per_block = vec![0u32; g.total_blocks() as usize];
        for (lpn, ppa) in self.table.iter() {
            if !self.valid.get(ppa) || self.p2l[ppa.0 as usize] as usize != lpn {
                return Err(format!("lpn {lpn} maps to {ppa:?}, not valid or not mapped back"));
            }
            match flash.nand().peek_oob(ppa) {
                Some(oob) if oob.lpn as usize == lpn && oob.kind == PageKind::Data => {}
                other => return Err(format!("lpn {lpn} maps to {ppa:?}, whose OOB is {other:?}")),
            }
            let b = g.block_of(ppa).0 as usize;
            if self.expiry[lpn] > self.stamp[b] {
                return Err(format!("lpn {lpn} expires after the stamp of its block {b}"));
            }
            per_block[b] += 1;
        }
        let mut held = vec![0u32; self.held.len()];
        for b in 0..g.total_blocks() {
            let block = BlockId(b);
            let i = b as usize;
            let counted = self.valid.count(g.ppa(block, 0), g.pages_per_block);
            if counted != per_block[i] || counted != self.picker.valid(block) {
                return Err(format!(
                    "block {b}: {} mapped pages, {counted} valid bits, picker says {}",
                    per_block[i],
                    self.picker.valid(block)
                ));
            }
            let candidate = self.state[i] == State::Closed && self.owner[i] == POOL;
            if candidate != self.picker.contains(block) {
                return Err(format!(
                    "block {b}: {:?} of stream {}, GC candidate {}",
                    self.state[i], self.owner[i], !candidate
                ));
            }
            if self.state[i] != State::Free && self.owner[i] != POOL {
                held[self.owner[i] as usize - 1] += 1;
                self.check_summary(flash, block)?;
            }
        }
        let pool_open = (0..g.dies()).filter(|&d| self.alloc.open_room(POOL, DieId(d)) > 0).count() as u32;
        if pool_open > self.pool_dies {
            return Err(format!("the pool has {pool_open} open blocks, more than its {} dies", self.pool_dies));
        }
        for (k, grp) in self.plan.groups.iter().enumerate() {
            if held[k] != self.held[k] || held[k] > grp.quota {
                return Err(format!(
                    "group {k} holds {} blocks, counted {}, quota {}",
                    held[k], self.held[k], grp.quota
                ));
            }
        }
        Ok(())
    }

    fn capabilities(&self) -> crate::Capabilities<'_> {
        crate::Capabilities { realtime: Some(self), placement: Some(self) }
    }
}

impl crate::RealTime for Telomere {
    fn stream_pages(&self) -> u32 {
        self.plan.stream_pages
    }

    fn admission(&self) -> Option<Vec<crate::StreamVerdict>> {
        (!self.config.tasks.is_empty()).then(|| self.plan.verdicts.clone())
    }

    /// With a task set: a page command waits for at most one erase it did not
    /// choose (an expired block's, after the previous write's acknowledgement;
    /// a write that programs a block summary then erases nothing, and the
    /// summary's program is shorter than an erase) before its own read or
    /// program, `t_e + max(t_r, t_w)` with the channel transfer (Section 5's
    /// non-preemptive erase of Eq. 20), plus one block-summary transfer of each
    /// other die on its channel. Holds while the
    /// tasks stay within their admission (no pool copies) and the host queue
    /// holds one request at a time per die. Without tasks, no promise.
    fn service_bound(&self) -> Option<SimTime> {
        (!self.config.tasks.is_empty()).then_some(self.bound)
    }
}

impl crate::Placement for Telomere {
    fn die_of(&self, lpn: Lpn) -> Option<ftlab_nand::DieId> {
        self.table.die_of(lpn, &self.layout)
    }

    /// An admitted task's write goes to its address's die in its group's stripe
    /// (a write the group cannot take goes to the pool, on a die the pool picks).
    fn write_die(&self, lpn: Lpn, hint: &Hint) -> Option<ftlab_nand::DieId> {
        let k = (*self.plan.group_of_task.get(hint.stream? as usize)?)?;
        Some(self.stripe_die(k as usize, lpn))
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 2] = [
    crate::entry::Scheme {
        name: "telomere-sip",
        summary:
            "Telomere SiP (000): blocks reserved per admitted task, placed by expiry, GC only erases expired blocks",
        paper: "000 Sections 3-4",
        admits_tasks: true,
        bounds: false,
        build: |p, tasks| TelomereConfig::registered("telomere-sip", Placement::Sip, p, tasks),
    },
    crate::entry::Scheme {
        name: "telomere-sharp",
        summary: "Telomere SharP (000): blocks shared by Algorithm 1's task partitions, GC only erases expired blocks",
        paper: "000 Sections 3-4",
        admits_tasks: true,
        bounds: false,
        build: |p, tasks| TelomereConfig::registered("telomere-sharp", Placement::Sharp, p, tasks),
    },
];
