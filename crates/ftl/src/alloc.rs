//! Block allocator: free blocks per die, one open (active) block per die and
//! stream, full blocks handed back to the caller (which registers them with a
//! victim picker). Free blocks are handed out first-in first-out
//! ([`BlockAllocator::next_page`]) or lowest rank first
//! ([`BlockAllocator::next_page_by`], e.g. by RBER, [`FreeOrder::Rber`]).

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
    /// in, first out: RBER balancing, 000_ffe2fafb22bcad8e.txt Section 6.4 ("the
    /// free blocks queue is sorted by the RBER of the blocks").
    Rber,
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
}
