//! Reclaim groups and reclaim units of several erase blocks: the placement
//! [`super::Fdp`] uses when it has more than one reclaim group or reclaim
//! units larger than a block (with one of each it keeps a block a unit and
//! places as [`crate::alloc::BlockAllocator`] does).
//!
//! - A **reclaim group** is `dies / reclaim_groups` consecutive dies; a write
//!   whose placement identifier names the group is programmed on them only,
//!   and garbage collection in the group copies into the group.
//! - A **reclaim unit** is `reclaim_unit_blocks` erase blocks: the blocks at
//!   one index of that many consecutive dies of its group (a superblock, so
//!   a unit's blocks follow from its number and need no record on the
//!   medium). A group's dies fall into `dies per group / reclaim_unit_blocks`
//!   *slots*, each with its own units. A handle keeps one open unit in each
//!   slot of each group; a write goes to the die of the group free soonest,
//!   into the open unit of that die's slot, on that die's block of the unit
//!   (or another block of the unit with room).
//! - **Garbage collection** picks whole units, greedily inside the group (the
//!   unit with the fewest valid pages), copies their valid pages and erases
//!   every block of the unit; the unit is free again.
//! - **Recovery**: a unit whose blocks are all erased is free; any other is
//!   closed, and counted as *not fully written* if one of its good blocks has
//!   room left.

use std::collections::VecDeque;

use ftlab_nand::{BlockId, DieId, Geometry, Ppa, SimTime};

use crate::victim::{GreedyPicker, PlanePickers, VictimPicker};
use crate::{FtlError, Io};

/// The shape of the units: groups, slots, dies, blocks.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub groups: u32,
    /// Dies of a group.
    pub group_dies: u32,
    /// Blocks (dies) of a unit.
    pub unit_blocks: u32,
    /// Slots of a group (`group_dies / unit_blocks`).
    pub slots: u32,
    /// Blocks of a die.
    pub die_blocks: u32,
    pub pages_per_block: u32,
}

impl Shape {
    pub fn new(g: &Geometry, groups: u32, unit_blocks: u32) -> Self {
        let group_dies = g.dies() / groups.max(1);
        Shape {
            groups,
            group_dies,
            unit_blocks,
            slots: group_dies / unit_blocks.max(1),
            die_blocks: g.planes_per_die * g.blocks_per_plane,
            pages_per_block: g.pages_per_block,
        }
    }

    /// Units of the device.
    pub fn units(&self) -> u32 {
        self.groups * self.slots * self.die_blocks
    }

    /// The group of `die`.
    #[inline]
    pub fn group_of_die(&self, die: DieId) -> u32 {
        die.0 / self.group_dies
    }

    /// The slot (group-wide) of `die`: `group * slots + slot`.
    #[inline]
    fn slot_of_die(&self, die: DieId) -> u32 {
        die.0 / self.unit_blocks
    }

    /// The unit `block` belongs to.
    #[inline]
    pub fn unit_of(&self, block: BlockId) -> u32 {
        let die = block.0 / self.die_blocks;
        (die / self.unit_blocks) * self.die_blocks + block.0 % self.die_blocks
    }

    /// The group of `unit`.
    #[inline]
    pub fn group_of_unit(&self, unit: u32) -> u32 {
        unit / (self.slots * self.die_blocks)
    }

    /// The group-wide slot of `unit`.
    #[inline]
    fn slot_of_unit(&self, unit: u32) -> u32 {
        unit / self.die_blocks
    }

    /// The blocks of `unit`, in die order.
    pub fn blocks(&self, unit: u32) -> impl Iterator<Item = BlockId> + use<> {
        let first_die = (unit / self.die_blocks) * self.unit_blocks;
        let (index, die_blocks) = (unit % self.die_blocks, self.die_blocks);
        (first_die..first_die + self.unit_blocks).map(move |d| BlockId(d * die_blocks + index))
    }

    /// The dies of `group`.
    pub fn dies(&self, group: u32) -> std::ops::Range<u32> {
        group * self.group_dies..(group + 1) * self.group_dies
    }
}

/// The valid pages of every block and the candidate units: a
/// [`VictimPicker`] over blocks for [`crate::pagecore::PageCore`], whose
/// counts add up by unit, and whose candidates are whole units picked inside
/// one group.
#[derive(Debug, Clone)]
pub(super) struct UnitBooks {
    shape: Shape,
    block_valid: Vec<u32>,
    /// Valid pages of each group.
    group_valid: Vec<u64>,
    units: PlanePickers<GreedyPicker>,
}

impl UnitBooks {
    pub fn new(shape: Shape) -> Self {
        let blocks = shape.units() * shape.unit_blocks;
        UnitBooks {
            shape,
            block_valid: vec![0; blocks as usize],
            group_valid: vec![0; shape.groups as usize],
            units: PlanePickers::per_plane(
                shape.groups,
                shape.slots * shape.die_blocks,
                shape.unit_blocks * shape.pages_per_block,
            ),
        }
    }

    /// The group of `block`.
    #[inline]
    fn group_of(&self, block: BlockId) -> usize {
        (block.0 / self.shape.die_blocks / self.shape.group_dies) as usize
    }

    /// Of the groups but `except`, the one with the most room: its good
    /// pages (`good_pages`, by group) less its valid pages (ties: the lowest).
    pub fn roomiest_group(&self, good_pages: &[u64], except: Option<u32>) -> Option<u32> {
        (0..self.shape.groups).filter(|&g| Some(g) != except).max_by_key(|&g| {
            (good_pages[g as usize].saturating_sub(self.group_valid[g as usize]), std::cmp::Reverse(g))
        })
    }

    /// Valid pages of `unit`.
    pub fn unit_valid(&self, unit: u32) -> u32 {
        self.units.valid(BlockId(unit))
    }

    /// The unit of `group` with the fewest valid pages, still a candidate.
    pub fn pick_in(&mut self, group: u32, now: SimTime) -> Option<u32> {
        self.units.pick_in(group, now).map(|b| b.0)
    }

    /// `unit` (closed) becomes a candidate.
    pub fn insert_unit(&mut self, unit: u32) {
        self.units.insert(BlockId(unit));
    }

    /// `unit` is no longer a candidate.
    pub fn remove_unit(&mut self, unit: u32) {
        self.units.remove(BlockId(unit));
    }
}

impl VictimPicker for UnitBooks {
    /// Not used: the books need their [`Shape`] ([`UnitBooks::new`]).
    fn new(blocks: u32, pages_per_block: u32) -> Self {
        let shape = Shape { groups: 1, group_dies: 1, unit_blocks: 1, slots: 1, die_blocks: blocks, pages_per_block };
        UnitBooks::new(shape)
    }
    #[inline]
    fn valid(&self, block: BlockId) -> u32 {
        self.block_valid[block.0 as usize]
    }
    #[inline]
    fn written(&mut self, block: BlockId, now: SimTime) {
        self.block_valid[block.0 as usize] += 1;
        let g = self.group_of(block);
        self.group_valid[g] += 1;
        self.units.written(BlockId(self.shape.unit_of(block)), now);
    }
    #[inline]
    fn dec(&mut self, block: BlockId) {
        self.block_valid[block.0 as usize] -= 1;
        let g = self.group_of(block);
        self.group_valid[g] -= 1;
        self.units.dec(BlockId(self.shape.unit_of(block)));
    }
    fn insert(&mut self, block: BlockId) {
        self.units.insert(BlockId(self.shape.unit_of(block)));
    }
    fn remove(&mut self, block: BlockId) {
        self.units.remove(BlockId(self.shape.unit_of(block)));
    }
    fn set_valid(&mut self, block: BlockId, valid: u32) {
        let unit = BlockId(self.shape.unit_of(block));
        let was = std::mem::replace(&mut self.block_valid[block.0 as usize], valid);
        let g = self.group_of(block);
        self.group_valid[g] = self.group_valid[g] - u64::from(was) + u64::from(valid);
        let total = self.units.valid(unit) - was + valid;
        self.units.set_valid(unit, total);
    }
    /// The first block of the unit with the fewest valid pages of any group.
    fn pick(&mut self, now: SimTime) -> Option<BlockId> {
        self.units.pick(now).and_then(|u| self.shape.blocks(u.0).next())
    }
    fn ram_bytes(&self) -> u64 {
        self.block_valid.len() as u64 * 4 + self.group_valid.len() as u64 * 8 + self.units.ram_bytes()
    }
}

/// Free units and each stream's open units.
#[derive(Debug, Clone)]
pub(super) struct Units {
    pub shape: Shape,
    /// Free units of each group-wide slot, oldest freed first.
    free: Vec<VecDeque<u32>>,
    /// The open unit of each stream in each group-wide slot.
    open: Vec<Option<u32>>,
    /// Where the next write without a group starts looking for a free die.
    next_die: u32,
}

impl Units {
    /// No unit free or open (fill with [`Units::release`]).
    pub fn new(shape: Shape, streams: u32) -> Self {
        let slots = (shape.groups * shape.slots) as usize;
        Units { shape, free: vec![VecDeque::new(); slots], open: vec![None; slots * streams as usize], next_die: 0 }
    }

    /// `unit` is free (erased, or good blocks erased and the rest bad).
    pub fn release(&mut self, unit: u32) {
        self.free[self.shape.slot_of_unit(unit) as usize].push_back(unit);
    }

    /// Free units of `group`.
    pub fn free_in(&self, group: u32) -> u32 {
        let s = self.shape.slots as usize;
        let g = group as usize;
        self.free[g * s..(g + 1) * s].iter().map(|f| f.len() as u32).sum()
    }

    /// Good pages of `unit` (its blocks not bad).
    pub fn capacity(&self, io: &Io, unit: u32) -> u32 {
        self.shape.blocks(unit).filter(|&b| !io.is_bad(b) && !io.is_grown_bad(b)).count() as u32
            * self.shape.pages_per_block
    }

    /// Room left in `block` for a program.
    #[inline]
    fn room(&self, io: &Io, block: BlockId) -> bool {
        !io.is_bad(block) && !io.is_grown_bad(block) && io.programmed_pages(block) < self.shape.pages_per_block
    }

    /// Whether one of `unit`'s good blocks has room.
    pub fn has_room(&self, io: &Io, unit: u32) -> bool {
        self.shape.blocks(unit).any(|b| self.room(io, b))
    }

    /// Whether `stream` has an open unit with room in `group`.
    pub fn open_room_in(&self, io: &Io, stream: u32, group: u32) -> bool {
        let sh = self.shape;
        (group * sh.slots..(group + 1) * sh.slots).any(|slot| {
            self.open[(stream * sh.groups * sh.slots + slot) as usize].is_some_and(|u| self.has_room(io, u))
        })
    }

    /// Good pages of each group (its blocks not bad).
    pub fn good_pages(&self, io: &Io) -> Vec<u64> {
        let sh = self.shape;
        (0..sh.groups)
            .map(|g| {
                let units = g * sh.slots * sh.die_blocks..(g + 1) * sh.slots * sh.die_blocks;
                units.map(|u| u64::from(self.capacity(io, u))).sum()
            })
            .collect()
    }

    /// The die of `group` free soonest (ties: the first from a rotating
    /// start); with no group, of the whole device.
    pub fn free_die(&mut self, io: &Io, group: Option<u32>) -> DieId {
        let dies = match group {
            Some(g) => self.shape.dies(g),
            None => 0..self.shape.groups * self.shape.group_dies,
        };
        let n = dies.len() as u32;
        let start = self.next_die % n;
        self.next_die = self.next_die.wrapping_add(1);
        let mut best: Option<(SimTime, u32)> = None;
        for k in 0..n {
            let d = dies.start + (start + k) % n;
            let t = io.die_free_at(DieId(d));
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, d));
            }
        }
        DieId(best.map_or(dies.start, |(_, d)| d))
    }

    /// Reopens `unit` (part-written, found at recovery) for `stream`, if
    /// the stream has no open unit in its slot; returns whether it did.
    pub fn reopen(&mut self, stream: u32, unit: u32) -> bool {
        let sh = self.shape;
        let at = (stream * sh.groups * sh.slots + sh.slot_of_unit(unit)) as usize;
        if self.open[at].is_some() {
            return false;
        }
        self.open[at] = Some(unit);
        true
    }

    /// The next page of `stream` near `die` (that die's block of the unit if
    /// it has room): from its open unit in the die's slot, else its open unit
    /// with room in another slot of the group, else a free unit of the die's
    /// slot, else of another slot; with none of these, the open unit with
    /// room of the first of `fallback` that has one. `opened` is told of
    /// each unit opened; `closed` of each unit filled (a
    /// garbage-collection candidate).
    pub fn next_page(
        &mut self,
        io: &Io,
        stream: u32,
        fallback: &[u32],
        die: DieId,
        mut opened: impl FnMut(u32),
        mut closed: impl FnMut(u32),
    ) -> Result<Ppa, FtlError> {
        let sh = self.shape;
        let group = sh.group_of_die(die);
        let own = sh.slot_of_die(die);
        let first = group * sh.slots;
        let tries = [(stream, false), (stream, true)].into_iter().chain(fallback.iter().map(|&f| (f, false)));
        for (stream, take_free) in tries {
            for k in 0..sh.slots {
                let slot = first + (own - first + k) % sh.slots;
                let at = (stream * sh.groups * sh.slots + slot) as usize;
                let unit = match self.open[at] {
                    Some(u) => u,
                    None if take_free => match self.free[slot as usize].pop_front() {
                        Some(u) => {
                            self.open[at] = Some(u);
                            opened(u);
                            u
                        }
                        None => continue,
                    },
                    None => continue,
                };
                let wanted = BlockId(die.0 * sh.die_blocks + unit % sh.die_blocks);
                let block = if slot == own && self.room(io, wanted) {
                    Some(wanted)
                } else {
                    sh.blocks(unit).find(|&b| self.room(io, b))
                };
                let Some(b) = block else {
                    // Its blocks went bad or filled under it.
                    self.open[at] = None;
                    closed(unit);
                    continue;
                };
                let page = io.programmed_pages(b);
                // The unit is full once this page is programmed.
                if page + 1 == sh.pages_per_block && !sh.blocks(unit).any(|o| o != b && self.room(io, o)) {
                    self.open[at] = None;
                    closed(unit);
                }
                return Ok(io.geometry().ppa(b, page));
            }
        }
        Err(FtlError::DeviceFull(format!(
            "reclaim group {group} has no reclaim unit with room: the data written through its placement \
             identifiers fills it; spread the writes over the groups (ftl.reclaim_groups) or give more \
             over-provisioning"
        )))
    }

    /// RAM of the lists, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        let free: usize = self.free.iter().map(|f| f.capacity() * 4).sum();
        (free + self.open.len() * 8) as u64
    }
}
