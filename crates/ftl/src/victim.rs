//! Victim pickers for garbage collection.
//!
//! [`GreedyPicker`] keeps the valid-page count of every block and the closed
//! blocks (candidates) in buckets by valid count, doubly linked, so updating a
//! count and taking the block with the fewest valid pages are O(1) (amortised:
//! the minimum pointer only walks up when its bucket empties). Within a bucket
//! blocks leave in the order they entered. [`GreedyPicker::pick_cost_benefit`]
//! chooses instead by the cost-benefit score of LFS (Rosenblum and Ousterhout):
//! `(1 - u) * age / (1 + u)`, `u` the valid fraction, `age` the time since the
//! block was last written.

use serde::{Deserialize, Serialize};

use ftlab_nand::geometry::Divisor;
use ftlab_nand::{BlockId, SimTime};

use crate::{FtlError, Io};

const NIL: u32 = u32::MAX;

/// How a GC victim is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimPolicy {
    /// Fewest valid pages.
    #[default]
    Greedy,
    /// Highest LFS cost-benefit score.
    CostBenefit,
}

/// How an FTL chooses garbage-collection victims: a picker keeps every block's
/// valid-page count and the candidate (closed) blocks, and picks one. FTLs are
/// generic over it (static dispatch: the calls are on the write path), so a new
/// policy is a new implementation, not a new arm matched inside each FTL.
pub trait VictimPicker: std::fmt::Debug + Send {
    /// A picker for `blocks` blocks of `pages_per_block` pages, all with no valid
    /// page and none a candidate.
    fn new(blocks: u32, pages_per_block: u32) -> Self
    where
        Self: Sized;
    /// Valid pages of `block`.
    fn valid(&self, block: BlockId) -> u32;
    /// A page of `block` was written at `now` and is valid.
    fn written(&mut self, block: BlockId, now: SimTime);
    /// One fewer valid page in `block`.
    fn dec(&mut self, block: BlockId);
    /// Makes `block` a candidate (it is closed: no more pages will be written).
    fn insert(&mut self, block: BlockId);
    /// Removes `block` from the candidates.
    fn remove(&mut self, block: BlockId);
    /// Sets the valid count of a non-candidate block (e.g. zero after an erase).
    fn set_valid(&mut self, block: BlockId, valid: u32);
    /// The victim at `now`, without removing it from the candidates.
    fn pick(&mut self, now: SimTime) -> Option<BlockId>;
    /// RAM used, in bytes.
    fn ram_bytes(&self) -> u64;
}

/// Greedy: the candidate with the fewest valid pages (ties: the one that became
/// a candidate first).
impl VictimPicker for GreedyPicker {
    fn new(blocks: u32, pages_per_block: u32) -> Self {
        GreedyPicker::new(blocks, pages_per_block)
    }
    #[inline]
    fn valid(&self, block: BlockId) -> u32 {
        GreedyPicker::valid(self, block)
    }
    #[inline]
    fn written(&mut self, block: BlockId, _now: SimTime) {
        self.inc(block);
    }
    #[inline]
    fn dec(&mut self, block: BlockId) {
        GreedyPicker::dec(self, block);
    }
    #[inline]
    fn insert(&mut self, block: BlockId) {
        GreedyPicker::insert(self, block);
    }
    #[inline]
    fn remove(&mut self, block: BlockId) {
        GreedyPicker::remove(self, block);
    }
    #[inline]
    fn set_valid(&mut self, block: BlockId, valid: u32) {
        GreedyPicker::set_valid(self, block, valid);
    }
    #[inline]
    fn pick(&mut self, _now: SimTime) -> Option<BlockId> {
        self.peek_min()
    }
    fn ram_bytes(&self) -> u64 {
        GreedyPicker::ram_bytes(self)
    }
}

/// Cost-benefit (LFS): the candidate with the highest `(1 - u) * age / (1 + u)`,
/// `age` the time since the block was last written ([`GreedyPicker::pick_cost_benefit`]).
#[derive(Debug, Clone)]
pub struct CostBenefitPicker {
    counts: GreedyPicker,
    /// When each block was last written.
    modified: Vec<SimTime>,
    pages_per_block: u32,
}

impl VictimPicker for CostBenefitPicker {
    fn new(blocks: u32, pages_per_block: u32) -> Self {
        CostBenefitPicker {
            counts: GreedyPicker::new(blocks, pages_per_block),
            modified: vec![SimTime::ZERO; blocks as usize],
            pages_per_block,
        }
    }
    #[inline]
    fn valid(&self, block: BlockId) -> u32 {
        self.counts.valid(block)
    }
    #[inline]
    fn written(&mut self, block: BlockId, now: SimTime) {
        self.counts.inc(block);
        self.modified[block.0 as usize] = now;
    }
    #[inline]
    fn dec(&mut self, block: BlockId) {
        self.counts.dec(block);
    }
    fn insert(&mut self, block: BlockId) {
        self.counts.insert(block);
    }
    fn remove(&mut self, block: BlockId) {
        self.counts.remove(block);
    }
    fn set_valid(&mut self, block: BlockId, valid: u32) {
        self.counts.set_valid(block, valid);
    }
    fn pick(&mut self, now: SimTime) -> Option<BlockId> {
        self.counts.pick_cost_benefit(&self.modified, now, self.pages_per_block)
    }
    fn ram_bytes(&self) -> u64 {
        self.counts.ram_bytes() + self.modified.len() as u64 * 8
    }
}

/// One picker per plane, for garbage collection that chooses its victims inside
/// one plane ([`PlanePickers::pick_in`]); block numbers are the device's, the
/// blocks of a plane consecutive (as [`ftlab_nand::Geometry`] numbers them).
/// As a [`VictimPicker`] over the whole device, it picks among the planes'
/// victims the one with the fewest valid pages (ties: the lowest plane).
#[derive(Debug, Clone)]
pub struct PlanePickers<P> {
    planes: Vec<P>,
    blocks_per_plane: Divisor,
}

impl<P: VictimPicker> PlanePickers<P> {
    /// Pickers for `planes` planes of `blocks_per_plane` blocks of
    /// `pages_per_block` pages.
    pub fn per_plane(planes: u32, blocks_per_plane: u32, pages_per_block: u32) -> Self {
        PlanePickers {
            planes: (0..planes.max(1)).map(|_| P::new(blocks_per_plane, pages_per_block)).collect(),
            blocks_per_plane: Divisor::new(blocks_per_plane.max(1)),
        }
    }

    /// The picker of `block`'s plane, and the block's number inside it.
    #[inline]
    fn locate(&mut self, block: BlockId) -> (&mut P, BlockId) {
        let plane = self.blocks_per_plane.div(block.0) as usize;
        (&mut self.planes[plane], BlockId(self.blocks_per_plane.rem(block.0)))
    }

    /// The victim of `plane` at `now`, without removing it from the candidates.
    #[inline]
    pub fn pick_in(&mut self, plane: u32, now: SimTime) -> Option<BlockId> {
        let first = plane * self.blocks_per_plane.get();
        self.planes[plane as usize].pick(now).map(|b| BlockId(first + b.0))
    }
}

impl<P: VictimPicker> VictimPicker for PlanePickers<P> {
    /// One plane of all `blocks`.
    fn new(blocks: u32, pages_per_block: u32) -> Self {
        Self::per_plane(1, blocks, pages_per_block)
    }
    #[inline]
    fn valid(&self, block: BlockId) -> u32 {
        let plane = self.blocks_per_plane.div(block.0) as usize;
        self.planes[plane].valid(BlockId(self.blocks_per_plane.rem(block.0)))
    }
    #[inline]
    fn written(&mut self, block: BlockId, now: SimTime) {
        let (p, b) = self.locate(block);
        p.written(b, now);
    }
    #[inline]
    fn dec(&mut self, block: BlockId) {
        let (p, b) = self.locate(block);
        p.dec(b);
    }
    fn insert(&mut self, block: BlockId) {
        let (p, b) = self.locate(block);
        p.insert(b);
    }
    fn remove(&mut self, block: BlockId) {
        let (p, b) = self.locate(block);
        p.remove(b);
    }
    fn set_valid(&mut self, block: BlockId, valid: u32) {
        let (p, b) = self.locate(block);
        p.set_valid(b, valid);
    }
    fn pick(&mut self, now: SimTime) -> Option<BlockId> {
        let mut best: Option<BlockId> = None;
        for plane in 0..self.planes.len() as u32 {
            if let Some(b) = self.pick_in(plane, now) {
                if best.is_none_or(|c| self.valid(b) < self.valid(c)) {
                    best = Some(b);
                }
            }
        }
        best
    }
    fn ram_bytes(&self) -> u64 {
        self.planes.iter().map(P::ram_bytes).sum()
    }
}

/// Valid-page counts of every block, and the candidate blocks by count.
#[derive(Debug, Clone)]
pub struct GreedyPicker {
    valid: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    member: Vec<bool>,
    head: Vec<u32>,
    tail: Vec<u32>,
    min: usize,
    len: u32,
}

impl GreedyPicker {
    /// A picker for `blocks` blocks of `pages_per_block` pages, all with no valid
    /// page and none a candidate.
    pub fn new(blocks: u32, pages_per_block: u32) -> Self {
        let n = blocks as usize;
        let buckets = pages_per_block as usize + 1;
        GreedyPicker {
            valid: vec![0; n],
            prev: vec![NIL; n],
            next: vec![NIL; n],
            member: vec![false; n],
            head: vec![NIL; buckets],
            tail: vec![NIL; buckets],
            min: buckets,
            len: 0,
        }
    }

    /// Valid pages of `block`.
    #[inline]
    pub fn valid(&self, block: BlockId) -> u32 {
        self.valid[block.0 as usize]
    }

    /// Number of candidates.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether there is no candidate.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `block` is a candidate.
    pub fn contains(&self, block: BlockId) -> bool {
        self.member[block.0 as usize]
    }

    fn link(&mut self, b: u32) {
        let v = self.valid[b as usize] as usize;
        let t = self.tail[v];
        self.prev[b as usize] = t;
        self.next[b as usize] = NIL;
        if t == NIL {
            self.head[v] = b;
        } else {
            self.next[t as usize] = b;
        }
        self.tail[v] = b;
        if v < self.min {
            self.min = v;
        }
    }

    fn unlink(&mut self, b: u32) {
        let v = self.valid[b as usize] as usize;
        let (p, n) = (self.prev[b as usize], self.next[b as usize]);
        if p == NIL {
            self.head[v] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[v] = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    /// One more valid page in `block`.
    #[inline]
    pub fn inc(&mut self, block: BlockId) {
        let b = block.0;
        if self.member[b as usize] {
            self.unlink(b);
            self.valid[b as usize] += 1;
            self.link(b);
        } else {
            self.valid[b as usize] += 1;
        }
    }

    /// One fewer valid page in `block`.
    #[inline]
    pub fn dec(&mut self, block: BlockId) {
        let b = block.0;
        debug_assert!(self.valid[b as usize] > 0, "valid count of {block:?} underflows");
        if self.member[b as usize] {
            self.unlink(b);
            self.valid[b as usize] -= 1;
            self.link(b);
        } else {
            self.valid[b as usize] -= 1;
        }
    }

    /// Makes `block` a candidate (it is closed: no more pages will be written).
    pub fn insert(&mut self, block: BlockId) {
        if !self.member[block.0 as usize] {
            self.member[block.0 as usize] = true;
            self.len += 1;
            self.link(block.0);
        }
    }

    /// Removes `block` from the candidates.
    pub fn remove(&mut self, block: BlockId) {
        if self.member[block.0 as usize] {
            self.unlink(block.0);
            self.member[block.0 as usize] = false;
            self.len -= 1;
        }
    }

    /// Sets the valid count of a non-candidate block (e.g. zero after an erase).
    pub fn set_valid(&mut self, block: BlockId, valid: u32) {
        debug_assert!(!self.member[block.0 as usize]);
        self.valid[block.0 as usize] = valid;
    }

    /// The candidate with the fewest valid pages, without removing it.
    pub fn peek_min(&mut self) -> Option<BlockId> {
        while self.min < self.head.len() && self.head[self.min] == NIL {
            self.min += 1;
        }
        self.head.get(self.min).filter(|&&b| b != NIL).map(|&b| BlockId(b))
    }

    /// Removes and returns the candidate with the fewest valid pages.
    pub fn pop_min(&mut self) -> Option<BlockId> {
        let b = self.peek_min()?;
        self.remove(b);
        Some(b)
    }

    /// The candidate with the highest LFS cost-benefit score; `modified[b]` is when
    /// block `b` was last written. Ties go to the lowest valid count, then to the
    /// block that became a candidate first. O(candidates).
    pub fn pick_cost_benefit(&self, modified: &[SimTime], now: SimTime, pages_per_block: u32) -> Option<BlockId> {
        let mut best: Option<(f64, BlockId)> = None;
        for head in &self.head {
            let mut b = *head;
            while b != NIL {
                let u = f64::from(self.valid[b as usize]) / f64::from(pages_per_block);
                let age = now.saturating_sub(modified[b as usize]).as_ns() as f64 + 1.0;
                let score = (1.0 - u) * age / (1.0 + u);
                if best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, BlockId(b)));
                }
                b = self.next[b as usize];
            }
        }
        best.map(|(_, b)| b)
    }

    /// RAM used, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        (self.valid.len() * 13 + self.head.len() * 8) as u64
    }
}

/// Garbage collection's outer loop, shared by the FTLs that collect one victim
/// at a time: `collect_one` runs while `low` says free blocks are short, at
/// most `passes` times (one pass per block of the device bounds a loop whose
/// passes free nothing; the caller's allocation then decides), and stops when
/// it finds no victim (returns false).
pub(crate) fn collect_while<S: ?Sized>(
    s: &mut S,
    io: &mut Io,
    passes: u32,
    low: impl Fn(&S) -> bool,
    mut collect_one: impl FnMut(&mut S, &mut Io) -> Result<bool, FtlError>,
) -> Result<(), FtlError> {
    for _ in 0..passes {
        if !low(s) || !collect_one(s, io)? {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn pops_fewest_valid_first_fifo_on_ties() {
        let mut p = GreedyPicker::new(4, 4);
        for (b, v) in [(0, 3), (1, 1), (2, 1), (3, 4)] {
            for _ in 0..v {
                p.inc(BlockId(b));
            }
            p.insert(BlockId(b));
        }
        assert_eq!(p.pop_min(), Some(BlockId(1)));
        p.dec(BlockId(0));
        p.dec(BlockId(0));
        p.dec(BlockId(0));
        assert_eq!(p.pop_min(), Some(BlockId(0)));
        assert_eq!(p.pop_min(), Some(BlockId(2)));
        assert_eq!(p.pop_min(), Some(BlockId(3)));
        assert_eq!(p.pop_min(), None);
    }

    #[test]
    fn cost_benefit_prefers_old_cold_blocks() {
        let mut p = GreedyPicker::new(2, 4);
        // Block 0: 1 valid, written just now. Block 1: 2 valid, written long ago.
        p.inc(BlockId(0));
        p.inc(BlockId(1));
        p.inc(BlockId(1));
        p.insert(BlockId(0));
        p.insert(BlockId(1));
        let modified = [SimTime::from_ms(1000), SimTime::ZERO];
        let now = SimTime::from_ms(1001);
        assert_eq!(p.pick_cost_benefit(&modified, now, 4), Some(BlockId(1)));
        assert_eq!(p.peek_min(), Some(BlockId(0)));
    }

    #[test]
    fn the_cost_benefit_picker_records_write_times_itself() {
        let mut p = <CostBenefitPicker as VictimPicker>::new(2, 4);
        p.written(BlockId(0), SimTime::from_ms(1000));
        p.written(BlockId(1), SimTime::ZERO);
        p.written(BlockId(1), SimTime::ZERO);
        p.insert(BlockId(0));
        p.insert(BlockId(1));
        assert_eq!(p.pick(SimTime::from_ms(1001)), Some(BlockId(1)));
        let mut g = <GreedyPicker as VictimPicker>::new(2, 4);
        g.written(BlockId(0), SimTime::from_ms(1000));
        g.written(BlockId(1), SimTime::ZERO);
        g.written(BlockId(1), SimTime::ZERO);
        g.insert(BlockId(0));
        g.insert(BlockId(1));
        assert_eq!(g.pick(SimTime::from_ms(1001)), Some(BlockId(0)));
    }

    #[test]
    fn plane_pickers_pick_inside_one_plane() {
        // Two planes of three blocks: blocks 0-2 and 3-5.
        let mut p = PlanePickers::<GreedyPicker>::per_plane(2, 3, 4);
        for (b, v) in [(0, 3), (1, 2), (3, 1), (4, 4), (5, 2)] {
            for _ in 0..v {
                p.written(BlockId(b), SimTime::ZERO);
            }
            p.insert(BlockId(b));
        }
        assert_eq!(p.pick_in(0, SimTime::ZERO), Some(BlockId(1)));
        assert_eq!(p.pick_in(1, SimTime::ZERO), Some(BlockId(3)));
        assert_eq!(p.pick(SimTime::ZERO), Some(BlockId(3)), "the device-wide pick: fewest valid");
        p.remove(BlockId(3));
        p.dec(BlockId(0));
        p.dec(BlockId(0));
        assert_eq!((p.valid(BlockId(0)), p.valid(BlockId(5))), (1, 2));
        assert_eq!(p.pick_in(0, SimTime::ZERO), Some(BlockId(0)));
        assert_eq!(p.pick_in(1, SimTime::ZERO), Some(BlockId(5)));
        assert_eq!(p.pick(SimTime::ZERO), Some(BlockId(0)));
        p.set_valid(BlockId(3), 0);
        assert_eq!(p.valid(BlockId(3)), 0);
    }

    proptest! {
        #[test]
        fn pop_min_matches_a_linear_scan(ops in proptest::collection::vec((0u32..16, 0u8..4), 1..300)) {
            let mut p = GreedyPicker::new(16, 8);
            let mut valid = [0u32; 16];
            let mut member = [false; 16];
            for (b, op) in ops {
                let bi = b as usize;
                match op {
                    0 if valid[bi] < 8 => { p.inc(BlockId(b)); valid[bi] += 1; }
                    1 if valid[bi] > 0 => { p.dec(BlockId(b)); valid[bi] -= 1; }
                    2 => { p.insert(BlockId(b)); member[bi] = true; }
                    3 => {
                        let want = (0..16).filter(|&i| member[i]).map(|i| valid[i]).min();
                        let got = p.pop_min();
                        prop_assert_eq!(got.map(|g| valid[g.0 as usize]), want);
                        if let Some(g) = got { member[g.0 as usize] = false; }
                    }
                    _ => {}
                }
                prop_assert_eq!(p.len() as usize, member.iter().filter(|&&m| m).count());
            }
        }
    }
}
