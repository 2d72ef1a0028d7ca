//! Block allocator: free blocks per die, one open (active) block per die and
//! stream, full blocks handed back to the caller (which registers them with a
//! victim picker). Free blocks are handed out first-in first-out
//! ([`BlockAllocator::next_page`]), lowest rank first
//! ([`BlockAllocator::next_page_by`], e.g. by RBER, [`FreeOrder::Rber`]) or by
//! the heat of the data to be written ([`BlockAllocator::next_page_binned`],
//! [`FreeOrder::HealthBin`]).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::{BlockId, DieId, Geometry, Ppa};

/// Which free block of a die a new open block is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreeOrder {
    /// The free block released earliest (first in, first out; no wear leveling).
    #[default]
    Fifo,
    /// The free block with the lowest RBER by the wear model, ties broken first
    /// in, first out: RBER balancing, 000_ffe2fafb22bcad8e.txt Section 6.2 ("the
    /// free blocks queue is sorted by the RBER of the blocks").
    Rber,
    /// Health binning (000 Section 6.2 after Pletka & Tomic, SYSTOR '16): the
    /// hottest data goes to the healthiest (lowest-RBER) free block, colder data
    /// to less healthy ones among the few healthiest. The caller says how hot the
    /// data of a stream is ([`BlockAllocator::next_page_binned`]); FTLs that do
    /// not separate data by heat cannot use it.
    HealthBin,
}

#[derive(Debug, Clone, Copy)]
struct OpenBlock {
    block: BlockId,
    next_page: u32,
}

/// A page handed out by [`BlockAllocator::next_page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    /// The page to program.
    pub ppa: Ppa,
    /// The block that this page filled, if it was its last page.
    pub filled: Option<BlockId>,
}

/// Free, open and (implicitly) full blocks of a device.
#[derive(Debug, Clone)]
pub struct BlockAllocator {
    geometry: Geometry,
    free: Vec<VecDeque<BlockId>>,
    /// `open[stream * dies + die]`.
    open: Vec<Option<OpenBlock>>,
    streams: u32,
    free_count: u32,
    cursor: u32,
}

impl BlockAllocator {
    /// An allocator with no free block (fill it with [`BlockAllocator::release`]
    /// and [`BlockAllocator::reopen`]) and `streams` open blocks per die.
    pub fn empty(geometry: &Geometry, streams: u32) -> Self {
        let dies = geometry.dies();
        BlockAllocator {
            geometry: *geometry,
            free: vec![VecDeque::new(); dies as usize],
            open: vec![None; (dies * streams.max(1)) as usize],
            streams: streams.max(1),
            free_count: 0,
            cursor: 0,
        }
    }

    /// An allocator over a freshly formatted device: every good block free.
    pub fn formatted(geometry: &Geometry, streams: u32, is_bad: impl Fn(BlockId) -> bool) -> Self {
        let mut a = Self::empty(geometry, streams);
        for b in (0..geometry.total_blocks()).map(BlockId) {
            if !is_bad(b) {
                a.release(b);
            }
        }
        a
    }

    /// An allocator whose pools are planes instead of dies, with no free block
    /// (fill it with [`BlockAllocator::release`]): every `die` argument of its
    /// methods names a plane, numbered die by die (`die * planes_per_die +
    /// plane`, the order of the block numbers), and [`BlockAllocator::next_die`]
    /// runs over planes.
    pub fn per_plane(geometry: &Geometry, streams: u32) -> Self {
        Self::empty(&Self::planes_as_dies(geometry), streams)
    }

    /// As [`BlockAllocator::per_plane`], over a freshly formatted device: every
    /// good block free.
    pub fn formatted_per_plane(geometry: &Geometry, streams: u32, is_bad: impl Fn(BlockId) -> bool) -> Self {
        Self::formatted(&Self::planes_as_dies(geometry), streams, is_bad)
    }

    /// `geometry` with each plane counted as a die of one plane: the same block
    /// and page numbers, grouped by plane.
    fn planes_as_dies(geometry: &Geometry) -> Geometry {
        Geometry { dies_per_way: geometry.dies_per_way * geometry.planes_per_die, planes_per_die: 1, ..*geometry }
    }

    /// Takes a free block of `die` out of circulation (e.g. a block a scheme
    /// holds in reserve); `None` if the die has none.
    pub fn take_free(&mut self, die: DieId) -> Option<BlockId> {
        let block = self.free[die.0 as usize].pop_front()?;
        self.free_count -= 1;
        Some(block)
    }

    /// Returns an erased block to the free list of its die.
    pub fn release(&mut self, block: BlockId) {
        let die = self.geometry.die_of_block(block);
        self.free[die.0 as usize].push_back(block);
        self.free_count += 1;
    }

    /// Makes `block`, whose first `next_page` pages are programmed, the open block
    /// of its die for `stream` (used when recovering).
    pub fn reopen(&mut self, stream: u32, block: BlockId, next_page: u32) {
        let die = self.geometry.die_of_block(block);
        let slot = (stream * self.geometry.dies() + die.0) as usize;
        self.open[slot] = Some(OpenBlock { block, next_page });
    }

    /// Retires `block`, which went bad under a program: if it is an open block it
    /// is closed, so no page of it is handed out again. Returns, if it was open,
    /// how many of its pages were never handed out (now lost); then the caller
    /// registers it as it would a block that filled (with its victim picker), so
    /// garbage collection moves its valid pages off. A block whose last page
    /// failed was registered when it filled.
    pub fn retire(&mut self, block: BlockId) -> Option<u32> {
        let ppb = self.geometry.pages_per_block;
        let mut left = None;
        for slot in &mut self.open {
            if let Some(o) = slot.filter(|o| o.block == block) {
                left = Some(ppb - o.next_page);
                *slot = None;
            }
        }
        left
    }

    /// Free blocks on the whole device.
    #[inline]
    pub fn free_blocks(&self) -> u32 {
        self.free_count
    }

    /// Free blocks on `die`.
    pub fn free_blocks_in(&self, die: DieId) -> u32 {
        self.free[die.0 as usize].len() as u32
    }

    /// The next die in round-robin order (for striping writes).
    #[inline]
    pub fn next_die(&mut self) -> DieId {
        let d = self.cursor;
        self.cursor += 1;
        if self.cursor == self.geometry.dies() {
            self.cursor = 0;
        }
        DieId(d)
    }

    /// Pages left in the open block of `stream` on `die`; 0 when it has none (the
    /// next [`BlockAllocator::next_page`] for them then opens a free block).
    pub fn open_room(&self, stream: u32, die: DieId) -> u32 {
        let slot = (stream.min(self.streams - 1) * self.geometry.dies() + die.0) as usize;
        self.open[slot].map_or(0, |o| self.geometry.pages_per_block - o.next_page)
    }

    /// Whether `block` is an open block of some stream.
    pub fn is_open(&self, block: BlockId) -> bool {
        self.open.iter().flatten().any(|o| o.block == block)
    }

    /// The next page of the open block of `stream` on `die`, opening a free block
    /// of that die when needed; if the die has no open block with room and no free
    /// block, the other dies are tried in order. `None` when the device has no
    /// programmable page left for the stream.
    #[inline]
    pub fn next_page(&mut self, stream: u32, die: DieId) -> Option<Allocation> {
        if let Some(a) = self.next_page_on(stream, die) {
            return Some(a);
        }
        let dies = self.geometry.dies();
        (1..dies).find_map(|i| self.next_page_on(stream, DieId((die.0 + i) % dies)))
    }

    /// The next page of `stream` on `die` (or another die when it is out of
    /// room), after retiring `bad`, a block that went bad under a program
    /// ([`crate::Io::program_placed`]); `closed` is told of each block that
    /// leaves the open ones (retired, or filled): a garbage-collection
    /// candidate. With no room left anywhere, [`FtlError::DeviceFull`](crate::FtlError::DeviceFull).
    pub fn place(
        &mut self,
        stream: u32,
        die: DieId,
        bad: Option<BlockId>,
        mut closed: impl FnMut(BlockId),
    ) -> Result<Ppa, crate::FtlError> {
        if let Some(b) = bad {
            if self.retire(b).is_some() {
                closed(b);
            }
        }
        let Allocation { ppa, filled } = self
            .next_page(stream, die)
            .ok_or_else(|| crate::FtlError::DeviceFull("no open block has room and no block is free".into()))?;
        if let Some(b) = filled {
            closed(b);
        }
        Ok(ppa)
    }

    /// As [`BlockAllocator::next_page`], on `die` only: `None` when its open
    /// block of `stream` is full and it has no free block.
    #[inline]
    pub fn next_page_in(&mut self, stream: u32, die: DieId) -> Option<Allocation> {
        self.next_page_on(stream, die)
    }

    /// As [`BlockAllocator::next_page`], but a new open block is the free block
    /// of the die with the lowest `rank` (ties: the one released earliest).
    pub fn next_page_by(&mut self, stream: u32, die: DieId, rank: impl Fn(BlockId) -> f64) -> Option<Allocation> {
        if let Some(a) = self.next_page_on_by(stream, die, &rank) {
            return Some(a);
        }
        let dies = self.geometry.dies();
        (1..dies).find_map(|i| self.next_page_on_by(stream, DieId((die.0 + i) % dies), &rank))
    }

    fn next_page_on_by(&mut self, stream: u32, die: DieId, rank: &impl Fn(BlockId) -> f64) -> Option<Allocation> {
        let slot = (stream.min(self.streams - 1) * self.geometry.dies() + die.0) as usize;
        let open = match self.open[slot] {
            Some(o) => o,
            None => {
                let free = &mut self.free[die.0 as usize];
                let mut best: Option<(usize, f64)> = None;
                for (i, &b) in free.iter().enumerate() {
                    let r = rank(b);
                    if best.is_none_or(|(_, br)| r < br) {
                        best = Some((i, r));
                    }
                }
                let block = free.remove(best?.0)?;
                self.free_count -= 1;
                OpenBlock { block, next_page: 0 }
            }
        };
        Some(self.advance(slot, open))
    }

    /// As [`BlockAllocator::next_page_by`], but a new open block is chosen by the
    /// `heat` of the data (in [0, 1], 1 the hottest). The `bins` healthiest free
    /// blocks of the die by `rank` (lowest = healthiest; all of them if fewer) are
    /// the health bins, healthiest first; the data takes bin
    /// `round((1 - heat) (b - 1))` of the `b`, and of the blocks of that rank the
    /// one released earliest. Heat 1 takes the healthiest free block, heat 0 the
    /// least healthy of the bins.
    ///
    /// Why only the healthiest few: a stream of heat 0 re-takes the least healthy
    /// block each time it opens one, so if that were the least healthy of *all*
    /// free blocks, the same worn block would be erased once per residence of the
    /// coldest data, which on a device with many idle free blocks is far more
    /// often than an average block (measured: one block driven to RBER 0.8 while
    /// the median was 9e-3). The blocks beyond the bins stay idle, as with RBER
    /// balancing; callers pass about as many bins as they have heat classes.
    /// Choosing costs O(free blocks of the die), only when a block is opened.
    pub fn next_page_binned(
        &mut self,
        stream: u32,
        die: DieId,
        rank: impl Fn(BlockId) -> f64,
        heat: f64,
        bins: u32,
    ) -> Option<Allocation> {
        let pick = (heat, bins.max(1) as usize);
        if let Some(a) = self.next_page_on_binned(stream, die, &rank, pick) {
            return Some(a);
        }
        let dies = self.geometry.dies();
        (1..dies).find_map(|i| self.next_page_on_binned(stream, DieId((die.0 + i) % dies), &rank, pick))
    }

    fn next_page_on_binned(
        &mut self,
        stream: u32,
        die: DieId,
        rank: &impl Fn(BlockId) -> f64,
        (heat, bins): (f64, usize),
    ) -> Option<Allocation> {
        let slot = (stream.min(self.streams - 1) * self.geometry.dies() + die.0) as usize;
        let open = match self.open[slot] {
            Some(o) => o,
            None => {
                let free = &mut self.free[die.0 as usize];
                if free.is_empty() {
                    return None;
                }
                let mut ranked: Vec<(f64, usize)> = free.iter().enumerate().map(|(i, &b)| (rank(b), i)).collect();
                let cold = if heat.is_nan() { 0.5 } else { 1.0 - heat.clamp(0.0, 1.0) };
                let b = bins.min(ranked.len());
                let nth = ((cold * (b - 1) as f64).round() as usize).min(b - 1);
                let (_, &mut (target, _), _) = ranked.select_nth_unstable_by(nth, |a, b| a.0.total_cmp(&b.0));
                // Among blocks of that rank, the one released earliest.
                let at = ranked.iter().filter(|r| r.0.total_cmp(&target).is_eq()).map(|r| r.1).min()?;
                let block = free.remove(at)?;
                self.free_count -= 1;
                OpenBlock { block, next_page: 0 }
            }
        };
        Some(self.advance(slot, open))
    }

    #[inline]
    fn next_page_on(&mut self, stream: u32, die: DieId) -> Option<Allocation> {
        let slot = (stream.min(self.streams - 1) * self.geometry.dies() + die.0) as usize;
        let open = match self.open[slot] {
            Some(o) => o,
            None => {
                let block = self.free[die.0 as usize].pop_front()?;
                self.free_count -= 1;
                OpenBlock { block, next_page: 0 }
            }
        };
        Some(self.advance(slot, open))
    }

    /// Hands out the next page of `open`, the open block of `slot`.
    #[inline]
    fn advance(&mut self, slot: usize, open: OpenBlock) -> Allocation {
        let ppb = self.geometry.pages_per_block;
        let ppa = self.geometry.ppa(open.block, open.next_page);
        let next_page = open.next_page + 1;
        let filled = if next_page == ppb {
            self.open[slot] = None;
            Some(open.block)
        } else {
            self.open[slot] = Some(OpenBlock { block: open.block, next_page });
            None
        };
        Allocation { ppa, filled }
    }

    /// RAM used, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        (self.geometry.total_blocks() as u64) * 4 + self.open.len() as u64 * 12
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            ways_per_channel: 2,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 2,
            pages_per_block: 2,
            page_size: 4096,
            oob_size: 64,
        }
    }

    #[test]
    fn fills_blocks_in_order_and_reports_full_ones() {
        let g = geo();
        let mut a = BlockAllocator::formatted(&g, 1, |_| false);
        assert_eq!(a.free_blocks(), 4);
        let p0 = a.next_page(0, DieId(0)).unwrap();
        assert_eq!((p0.ppa, p0.filled), (Ppa(0), None));
        assert_eq!(a.free_blocks(), 3);
        let p1 = a.next_page(0, DieId(0)).unwrap();
        assert_eq!((p1.ppa, p1.filled), (Ppa(1), Some(BlockId(0))));
        // Die 1's blocks are 2 and 3.
        let q = a.next_page(0, DieId(1)).unwrap();
        assert_eq!(g.block_of(q.ppa), BlockId(2));
    }

    #[test]
    fn falls_back_to_other_dies_then_runs_out() {
        let g = geo();
        let mut a = BlockAllocator::formatted(&g, 1, |b| b.0 == 1);
        let mut got = Vec::new();
        while let Some(p) = a.next_page(0, DieId(0)) {
            got.push(p.ppa.0);
        }
        // Block 0 on die 0, then die 1's blocks 2 and 3; block 1 is bad.
        assert_eq!(got, vec![0, 1, 4, 5, 6, 7]);
        assert_eq!(a.free_blocks(), 0);
        a.release(BlockId(0));
        assert_eq!(a.free_blocks_in(DieId(0)), 1);
        assert_eq!(a.next_page(0, DieId(1)).unwrap().ppa, Ppa(0));
    }

    #[test]
    fn streams_have_their_own_open_blocks_and_reopen_resumes() {
        let g = geo();
        let mut a = BlockAllocator::formatted(&g, 2, |_| false);
        let h = a.next_page(0, DieId(0)).unwrap();
        let c = a.next_page(1, DieId(0)).unwrap();
        assert_ne!(g.block_of(h.ppa), g.block_of(c.ppa));
        assert!(a.is_open(g.block_of(h.ppa)));
        let mut b = BlockAllocator::empty(&g, 1);
        b.reopen(0, BlockId(3), 1);
        assert_eq!(b.next_page(0, DieId(1)).unwrap(), Allocation { ppa: Ppa(7), filled: Some(BlockId(3)) });
        assert_eq!(b.next_die(), DieId(0));
        assert_eq!(b.next_die(), DieId(1));
        assert_eq!(b.next_die(), DieId(0));
    }

    #[test]
    fn rank_order_opens_the_lowest_ranked_free_block_ties_fifo() {
        let g = Geometry { blocks_per_plane: 4, ..geo() };
        // Die 0 holds blocks 0..4; released in order 0, 1, 2, 3.
        let rber = [3e-3, 1e-3, 1e-3, 2e-3, 0.0, 0.0, 0.0, 0.0];
        let rank = |b: BlockId| rber[b.0 as usize];
        let mut a = BlockAllocator::formatted(&g, 1, |_| false);
        let mut opened = Vec::new();
        for _ in 0..4 {
            let p = a.next_page_by(0, DieId(0), rank).unwrap();
            opened.push(g.block_of(p.ppa).0);
            let q = a.next_page_by(0, DieId(0), rank).unwrap();
            assert_eq!(q.filled, Some(g.block_of(p.ppa)));
        }
        // Lowest RBER first; blocks 1 and 2 tie and go in release order.
        assert_eq!(opened, vec![1, 2, 3, 0]);
        assert_eq!(a.free_blocks_in(DieId(0)), 0);
        // Out of room on die 0: falls back to die 1 (all tied: FIFO).
        assert_eq!(g.block_of(a.next_page_by(0, DieId(0), rank).unwrap().ppa), BlockId(4));
        // FIFO order on the same device opens block 0 first.
        let mut f = BlockAllocator::formatted(&g, 1, |_| false);
        assert_eq!(g.block_of(f.next_page(0, DieId(0)).unwrap().ppa), BlockId(0));
    }

    #[test]
    fn health_bin_gives_hot_data_the_healthiest_and_cold_data_the_least_healthy_block() {
        let g = Geometry { blocks_per_plane: 5, ..geo() };
        // Die 0 holds blocks 0..5, die 1 blocks 5..10.
        let rber = [4e-3, 1e-3, 5e-3, 2e-3, 3e-3, 0.0, 0.0, 0.0, 0.0, 0.0];
        let rank = |b: BlockId| rber[b.0 as usize];
        // By RBER, die 0's free blocks are 1 < 3 < 4 < 0 < 2.
        let open = |heat: f64, bins: u32| {
            let mut a = BlockAllocator::formatted(&g, 1, |_| false);
            g.block_of(a.next_page_binned(0, DieId(0), rank, heat, bins).unwrap().ppa).0
        };
        assert_eq!(open(1.0, 5), 1, "hottest data: lowest RBER");
        assert_eq!(open(0.0, 5), 2, "coldest data: highest RBER");
        assert_eq!(open(0.5, 5), 4, "middle heat: the median RBER");
        assert_eq!(open(0.8, 5), 3);
        assert_eq!(open(0.0, 9), 2, "fewer free blocks than bins");
        // Three bins: the three healthiest blocks; the two worst stay idle.
        assert_eq!((open(1.0, 3), open(0.5, 3), open(0.0, 3)), (1, 3, 4));
        assert_eq!((open(0.0, 1), open(0.0, 0)), (1, 1), "one bin is RBER balancing");
        // Two streams of different heat on one die, each keeps its block open.
        let mut a = BlockAllocator::formatted(&g, 2, |_| false);
        let hot = a.next_page_binned(0, DieId(0), rank, 1.0, 5).unwrap();
        let cold = a.next_page_binned(1, DieId(0), rank, 0.0, 5).unwrap();
        assert_eq!((g.block_of(hot.ppa).0, g.block_of(cold.ppa).0), (1, 2));
        let hot2 = a.next_page_binned(0, DieId(0), rank, 0.0, 5).unwrap();
        assert_eq!(hot2.filled, Some(BlockId(1)), "heat only matters when a block is opened");
        // Next hottest pick among the three left (0, 3, 4): block 3.
        assert_eq!(g.block_of(a.next_page_binned(0, DieId(0), rank, 1.0, 5).unwrap().ppa).0, 3);
        assert_eq!(a.free_blocks_in(DieId(0)), 2);
        // Ties go first in, first out, whatever the heat.
        for heat in [0.0, 1.0] {
            let mut t = BlockAllocator::formatted(&g, 1, |_| false);
            assert_eq!(g.block_of(t.next_page_binned(0, DieId(1), rank, heat, 5).unwrap().ppa).0, 5);
        }
        // A die without free blocks falls back to the next die.
        let mut e = BlockAllocator::formatted(&g, 1, |b| b.0 < 5);
        assert_eq!(g.block_of(e.next_page_binned(0, DieId(0), rank, 1.0, 5).unwrap().ppa).0, 5);
    }
}
