//! The logs of [`super::MultiLog`]: which set every block holds, a greedy picker
//! per log, and the bookkeeping that chooses which log to clean.
//!
//! The choice of victim is described in the module documentation of
//! [`super`]: a block with no valid page if there is one, else (with balancing)
//! the least valid block of the log whose spare `S_k` exceeds its
//! `sqrt(w_k V_k)` share of the total the most, else the least valid block of
//! all logs.

use ftlab_nand::BlockId;

use crate::victim::GreedyPicker;

/// Blocks, valid pages and recent host writes per log.
#[derive(Debug, Clone)]
pub(super) struct Logs {
    ppb: u32,
    balance: bool,
    /// The set (log) of every block: the one it was last opened for.
    block_set: Vec<u8>,
    /// Valid counts and closed blocks, one picker per log (a block's counts live
    /// in its log's picker).
    pickers: Vec<GreedyPicker>,
    /// Valid pages per log.
    valid: Vec<u64>,
    /// Closed blocks (candidates) per log, and the valid pages in them.
    closed: Vec<u64>,
    closed_valid: Vec<u64>,
    /// Host updates (overwrites and trims) of pages in each log, halved every
    /// `decay_every` updates.
    updates: Vec<f64>,
    since_decay: u64,
    decay_every: u64,
}

/// GC moves count as plain decrements, host overwrites and trims as updates of
/// the block's set (the online estimator's weights).
impl crate::pagecore::BlockBooks for Logs {
    #[inline]
    fn page_valid(&mut self, block: BlockId, _now: ftlab_nand::SimTime) {
        self.inc(block);
    }
    #[inline]
    fn page_invalid(&mut self, block: BlockId) {
        self.dec(block);
    }
    #[inline]
    fn page_dropped(&mut self, block: BlockId) {
        self.updated(block);
    }
}

impl Logs {
    /// `logs` empty logs over `total_blocks` blocks of `ppb` pages, every block
    /// nominally in the coldest set.
    pub(super) fn new(logs: u32, total_blocks: u32, ppb: u32, decay_every: u64, balance: bool) -> Self {
        let n = logs as usize;
        Logs {
            ppb,
            balance,
            block_set: vec![(logs - 1) as u8; total_blocks as usize],
            pickers: (0..n).map(|_| GreedyPicker::new(total_blocks, ppb)).collect(),
            valid: vec![0; n],
            closed: vec![0; n],
            closed_valid: vec![0; n],
            updates: vec![0.0; n],
            since_decay: 0,
            decay_every: decay_every.max(1),
        }
    }

    /// The set of `block`.
    #[inline]
    pub(super) fn set_of(&self, block: BlockId) -> u32 {
        u32::from(self.block_set[block.0 as usize])
    }

    /// `block`, erased, is now an open block of `set`'s log.
    pub(super) fn opened(&mut self, block: BlockId, set: u32) {
        self.block_set[block.0 as usize] = set as u8;
    }

    /// `block` is full: a GC candidate.
    pub(super) fn closed(&mut self, block: BlockId) {
        let k = self.set_of(block) as usize;
        if !self.pickers[k].contains(block) {
            self.pickers[k].insert(block);
            self.closed[k] += 1;
            self.closed_valid[k] += u64::from(self.pickers[k].valid(block));
        }
    }

    /// One more valid page in `block`.
    #[inline]
    pub(super) fn inc(&mut self, block: BlockId) {
        let k = self.set_of(block) as usize;
        if self.pickers[k].contains(block) {
            self.closed_valid[k] += 1;
        }
        self.pickers[k].inc(block);
        self.valid[k] += 1;
    }

    /// One fewer valid page in `block`.
    #[inline]
    pub(super) fn dec(&mut self, block: BlockId) {
        let k = self.set_of(block) as usize;
        if self.pickers[k].contains(block) {
            self.closed_valid[k] -= 1;
        }
        self.pickers[k].dec(block);
        self.valid[k] -= 1;
    }

    /// Valid pages of `block`.
    pub(super) fn valid(&self, block: BlockId) -> u32 {
        self.pickers[self.set_of(block) as usize].valid(block)
    }

    /// The host overwrote or trimmed a page of `block`: one fewer valid page, and
    /// one more update of the pages of its log.
    #[inline]
    pub(super) fn updated(&mut self, block: BlockId) {
        self.dec(block);
        let k = self.set_of(block) as usize;
        self.updates[k] += 1.0;
        self.since_decay += 1;
        if self.since_decay >= self.decay_every {
            self.since_decay = 0;
            self.updates.iter_mut().for_each(|w| *w *= 0.5);
        }
    }

    /// Takes the next victim out of the candidates (see the module
    /// documentation); `None` if no candidate has a reclaimable page.
    pub(super) fn take_victim(&mut self) -> Option<BlockId> {
        let ppb = self.ppb;
        let mins: Vec<Option<(BlockId, u32)>> =
            self.pickers.iter_mut().map(|p| p.peek_min().map(|b| (b, p.valid(b))).filter(|&(_, v)| v < ppb)).collect();
        let least = mins.iter().flatten().min_by_key(|&&(_, v)| v).copied();
        let victim = match least {
            Some((b, v)) if v > 0 && self.balance => self.most_over_share(&mins).unwrap_or(b),
            other => other?.0,
        };
        let k = self.set_of(victim) as usize;
        self.pickers[k].remove(victim);
        self.closed[k] -= 1;
        self.closed_valid[k] -= u64::from(self.pickers[k].valid(victim));
        Some(victim)
    }

    /// The least valid candidate of the log whose spare exceeds its
    /// `sqrt(w_k V_k)` share of the total the most, among logs with a candidate.
    fn most_over_share(&self, mins: &[Option<(BlockId, u32)>]) -> Option<BlockId> {
        let ppb = u64::from(self.ppb);
        let spare: Vec<f64> = self.closed.iter().zip(&self.closed_valid).map(|(&b, &v)| (b * ppb - v) as f64).collect();
        let weight: Vec<f64> = self.updates.iter().zip(&self.valid).map(|(&w, &v)| (w * v as f64).sqrt()).collect();
        let (total_spare, total_weight) = (spare.iter().sum::<f64>(), weight.iter().sum::<f64>());
        if total_weight <= 0.0 {
            return None;
        }
        let mut best: Option<(f64, BlockId)> = None;
        for (k, m) in mins.iter().enumerate() {
            if let Some((b, _)) = *m {
                let excess = spare[k] - total_spare * weight[k] / total_weight;
                if best.is_none_or(|(e, _)| excess > e) {
                    best = Some((excess, b));
                }
            }
        }
        best.map(|(_, b)| b)
    }

    /// Puts `block`, whose collection failed, back among the candidates.
    pub(super) fn restore(&mut self, block: BlockId) {
        self.closed(block);
    }

    /// One picker with every block's valid count (for the invariant check).
    pub(super) fn merged(&self) -> GreedyPicker {
        let blocks = self.block_set.len() as u32;
        let mut p = GreedyPicker::new(blocks, self.ppb);
        for b in (0..blocks).map(BlockId) {
            for _ in 0..self.valid(b) {
                p.inc(b);
            }
        }
        p
    }

    /// Checks the per-log totals against the blocks.
    pub(super) fn check(&self) -> Result<(), String> {
        let logs = self.pickers.len();
        let (mut valid, mut closed, mut closed_valid) = (vec![0u64; logs], vec![0u64; logs], vec![0u64; logs]);
        for (b, &k) in self.block_set.iter().enumerate() {
            let (k, b) = (k as usize, BlockId(b as u32));
            if k >= logs {
                return Err(format!("block {} is in set {k}, beyond the {logs} logs", b.0));
            }
            let v = u64::from(self.pickers[k].valid(b));
            valid[k] += v;
            if self.pickers[k].contains(b) {
                closed[k] += 1;
                closed_valid[k] += v;
            }
            if let Some(other) =
                (0..logs).find(|&j| j != k && self.pickers[j].valid(b) + u32::from(self.pickers[j].contains(b)) > 0)
            {
                return Err(format!("block {} of set {k} has valid pages or candidacy in log {other}", b.0));
            }
        }
        if (&valid, &closed, &closed_valid) != (&self.valid, &self.closed, &self.closed_valid) {
            return Err(format!(
                "per log: valid {:?}, closed {:?}, valid in closed {:?}; counted {valid:?}, {closed:?}, {closed_valid:?}",
                self.valid, self.closed, self.closed_valid
            ));
        }
        Ok(())
    }

    /// RAM used, in bytes.
    pub(super) fn ram_bytes(&self) -> u64 {
        self.block_set.len() as u64
            + self.pickers.iter().map(GreedyPicker::ram_bytes).sum::<u64>()
            + self.pickers.len() as u64 * 24
    }
}
