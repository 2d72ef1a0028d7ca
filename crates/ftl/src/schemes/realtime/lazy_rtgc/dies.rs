//! The collector's per-die bookkeeping: valid-page counts and greedy victims per
//! die, and which die a host write may take.
//!
//! Each die is collected on its own (see the module documentation of
//! [`super`]): its victim is the greedy one among its own closed blocks, and the
//! bound on that victim's valid pages (001 Theorem 4.3: the greedy victim holds at
//! most the average of the closed blocks) is argued per die. It holds when the
//! die's valid pages are at most `U(lambda)` times the closed blocks the die has
//! when it is triggered, `good_d - reserve` (the reserve per die: the free blocks
//! the trigger leaves and one open block). [`DieBooks::cap`] is that quota; a host
//! write only takes a die whose quota it does not exceed. The quotas sum to at
//! least the logical space ([`super::LazyRtgcPlan::new`]), so some die always
//! has room: the die of the page's old copy if it is within its quota, otherwise
//! a die below its quota.

use ftlab_nand::{BlockId, DieId, Geometry, SimTime};

use crate::victim::GreedyPicker;
use crate::Io;

/// Valid pages and greedy victim candidates per die.
#[derive(Debug)]
pub(super) struct DieBooks {
    blocks_per_die: u32,
    /// One picker per die, over the die's blocks by their index within the die.
    pickers: Vec<GreedyPicker>,
    /// Valid pages per die.
    valid: Vec<u64>,
    /// Per die, the most valid pages it may hold: `U(lambda) (good_d - reserve)`.
    cap: Vec<u64>,
}

impl crate::pagecore::BlockBooks for DieBooks {
    #[inline]
    fn page_valid(&mut self, block: BlockId, _now: ftlab_nand::SimTime) {
        self.inc(block);
    }
    #[inline]
    fn page_invalid(&mut self, block: BlockId) {
        self.dec(block);
    }
}

impl DieBooks {
    /// No valid page and no candidate; each die of `geometry` may hold
    /// `lambda_max` valid pages per good block beyond `reserve` of them.
    pub fn new(geometry: &Geometry, good: impl Fn(BlockId) -> bool, lambda_max: u32, reserve: u32) -> Self {
        let bpd = geometry.blocks_per_die();
        let cap = (0..geometry.dies())
            .map(|d| {
                let good = (d * bpd..(d + 1) * bpd).filter(|&b| good(BlockId(b))).count() as u64;
                u64::from(lambda_max) * good.saturating_sub(u64::from(reserve))
            })
            .collect();
        DieBooks {
            blocks_per_die: bpd,
            pickers: (0..geometry.dies()).map(|_| GreedyPicker::new(bpd, geometry.pages_per_block)).collect(),
            valid: vec![0; geometry.dies() as usize],
            cap,
        }
    }

    #[inline]
    fn split(&self, block: BlockId) -> (usize, BlockId) {
        ((block.0 / self.blocks_per_die) as usize, BlockId(block.0 % self.blocks_per_die))
    }

    /// Valid pages of `block`.
    #[inline]
    pub fn valid(&self, block: BlockId) -> u32 {
        let (d, b) = self.split(block);
        self.pickers[d].valid(b)
    }

    /// Valid pages on `die`.
    #[cfg(test)]
    pub fn valid_on(&self, die: DieId) -> u64 {
        self.valid[die.0 as usize]
    }

    /// The most valid pages `die` may hold.
    #[cfg(test)]
    pub fn cap(&self, die: DieId) -> u64 {
        self.cap[die.0 as usize]
    }

    /// One more valid page in `block`.
    #[inline]
    pub fn inc(&mut self, block: BlockId) {
        let (d, b) = self.split(block);
        self.pickers[d].inc(b);
        self.valid[d] += 1;
    }

    /// One fewer valid page in `block`.
    #[inline]
    pub fn dec(&mut self, block: BlockId) {
        let (d, b) = self.split(block);
        self.pickers[d].dec(b);
        self.valid[d] -= 1;
    }

    /// Makes the closed `block` a victim candidate of its die.
    pub fn insert(&mut self, block: BlockId) {
        let (d, b) = self.split(block);
        self.pickers[d].insert(b);
    }

    /// Removes `block` from its die's candidates.
    pub fn remove(&mut self, block: BlockId) {
        let (d, b) = self.split(block);
        self.pickers[d].remove(b);
    }

    /// Whether `block` is a candidate.
    pub fn contains(&self, block: BlockId) -> bool {
        let (d, b) = self.split(block);
        self.pickers[d].contains(b)
    }

    /// The candidate of `die` with the fewest valid pages (ties: the one closed
    /// first).
    pub fn greedy(&mut self, die: DieId) -> Option<BlockId> {
        let b = self.pickers[die.0 as usize].peek_min()?;
        Some(BlockId(die.0 * self.blocks_per_die + b.0))
    }

    /// The die for a host write whose old copy is on `old` (if any): scanning
    /// from `start` and wrapping, the first die idle at the command's `now`
    /// among those the write keeps within their quota, else the one of them
    /// free soonest (first in scan order), as [`Io::free_die_from`] over those
    /// dies. `None` if no die has room in its quota (not after a clean run, see
    /// the module documentation).
    pub fn host_die(&self, io: &Io, start: DieId, old: Option<DieId>) -> Option<DieId> {
        let dies = self.valid.len() as u32;
        let mut best: Option<(SimTime, DieId)> = None;
        for k in 0..dies {
            let d = DieId((start.0 + k) % dies);
            let grows = u64::from(old != Some(d));
            if self.valid[d.0 as usize] + grows > self.cap[d.0 as usize] {
                continue;
            }
            let t = io.die_free_at(d);
            if t <= io.now() {
                return Some(d);
            }
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, d));
            }
        }
        best.map(|(_, d)| d)
    }

    /// Every block's valid count as one device-wide picker (for
    /// [`crate::mapping::check_page_map`]).
    pub fn device_picker(&self, geometry: &Geometry) -> GreedyPicker {
        let mut p = GreedyPicker::new(geometry.total_blocks(), geometry.pages_per_block);
        for b in (0..geometry.total_blocks()).map(BlockId) {
            p.set_valid(b, self.valid(b));
        }
        p
    }

    /// Checks the per-die totals against the per-block counts.
    pub fn check(&self) -> Result<(), String> {
        for (d, p) in self.pickers.iter().enumerate() {
            let sum: u64 = (0..self.blocks_per_die).map(|b| u64::from(p.valid(BlockId(b)))).sum();
            if sum != self.valid[d] {
                return Err(format!("die {d}: {} valid pages counted, its blocks hold {sum}", self.valid[d]));
            }
        }
        Ok(())
    }

    /// RAM used, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        self.pickers.iter().map(GreedyPicker::ram_bytes).sum::<u64>() + self.valid.len() as u64 * 16
    }
}
