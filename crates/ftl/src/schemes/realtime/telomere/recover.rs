//! Rebuilding Telomere after a power cut.

use std::collections::HashSet;

use ftlab_nand::BlockId;

use super::{summary, State, Telomere, TelomereConfig, NEVER, POOL};
use crate::alloc::BlockAllocator;
use crate::{FtlError, Io, Purpose};

impl Telomere {
    /// Rebuilds Telomere from the medium after a power cut.
    ///
    /// Every programmed page's OOB is read (the shared scan); for each logical page
    /// the copy with the newest sequence number wins. Blocks whose erase was torn
    /// are erased again. A block with a summary header (module `summary`) goes back to
    /// its group, counted in its quota, with the stamp of its trailer, or, without
    /// one, the time of recovery plus the group's longest lifetime (an upper
    /// bound of every expiry in it); a partly written one is reopened for its
    /// group on its die. Every other block is the pool's, stamped "never"; on
    /// each die one partly written pool block is reopened (at most `pool_dies`),
    /// the others are closed. Each recovered logical page expires with its block:
    /// at the block's stamp. A group holding more blocks than its quota (an erase
    /// the cut undid) has its erasable blocks erased now, then its closed blocks
    /// with the fewest valid pages handed to the pool.
    pub fn recover(config: TelomereConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let g = ftl.geometry;
        let now = io.now().0;
        let groups = ftl.plan.groups.len();
        ftl.alloc = BlockAllocator::empty(&g, groups as u32 + 1);
        let scan = crate::scan::scan(io, &mut ftl.table)?;
        for &b in &scan.free {
            ftl.alloc.release(b);
        }
        let newest: HashSet<BlockId> = scan.open.iter().map(|o| o.0).collect();
        let mut used = scan.closed;
        used.extend(scan.open.iter().map(|o| o.0));
        used.sort_unstable();
        let mut pool_partial = Vec::new();
        for b in used {
            let i = b.0 as usize;
            let programmed = io.programmed_pages(b);
            let die = g.die_of_block(b);
            ftl.state[i] = State::Closed;
            match summary::header(io, &g, b, groups)? {
                None => {
                    ftl.owner[i] = POOL;
                    ftl.stamp[i] = NEVER;
                    if programmed < g.pages_per_block && !io.is_grown_bad(b) {
                        pool_partial.push((!newest.contains(&b), die.0 >= ftl.pool_dies, b, programmed));
                    }
                }
                Some(stream) => {
                    let k = stream as usize - 1;
                    ftl.owner[i] = stream;
                    ftl.held[k] += 1;
                    let bound = now.saturating_add(ftl.plan.groups[k].lifetime_ns);
                    ftl.stamp[i] = summary::trailer(io, &g, b, stream)?.unwrap_or(bound);
                    // Room for a data page and the trailer: the group keeps filling it.
                    if programmed + summary::PAGES <= g.pages_per_block
                        && ftl.alloc.open_room(stream, die) == 0
                        && !io.is_grown_bad(b)
                    {
                        ftl.state[i] = State::Open;
                        ftl.alloc.reopen(stream, b, programmed);
                    }
                }
            }
        }
        // One partly written pool block per die, the newest first, pool dies first.
        pool_partial.sort_unstable();
        let mut reopened = 0;
        for (_, _, b, programmed) in pool_partial {
            let die = g.die_of_block(b);
            if reopened < ftl.pool_dies && ftl.alloc.open_room(POOL, die) == 0 {
                ftl.state[b.0 as usize] = State::Open;
                ftl.alloc.reopen(POOL, b, programmed);
                reopened += 1;
            }
        }
        let mapped: Vec<(usize, ftlab_nand::Ppa)> = ftl.table.iter().collect();
        for (lpn, ppa) in mapped {
            ftl.map(lpn, ppa);
            ftl.expiry[lpn] = ftl.stamp[g.block_of(ppa).0 as usize];
        }
        for b in (0..g.total_blocks()).map(BlockId) {
            let i = b.0 as usize;
            if ftl.state[i] != State::Closed {
                continue;
            }
            if ftl.owner[i] == POOL {
                ftl.picker.insert(b);
            }
            ftl.note_closed(b);
        }
        ftl.fit_quotas(io)?;
        Ok(ftl)
    }

    /// Brings every group back within its quota after recovery: erases its
    /// erasable blocks (soonest due first), then hands its closed blocks with the
    /// fewest valid pages to the pool (their pages keep their stamp).
    fn fit_quotas(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let now = io.now().0;
        for k in 0..self.plan.groups.len() {
            let stream = k as u32 + 1;
            let quota = self.plan.groups[k].quota;
            if self.held[k] <= quota {
                continue;
            }
            let mut closed: Vec<BlockId> = (0..self.geometry.total_blocks())
                .map(BlockId)
                .filter(|b| self.owner[b.0 as usize] == stream && self.state[b.0 as usize] == State::Closed)
                .collect();
            closed.sort_by_key(|&b| {
                let erasable = self.erasable(b, now);
                (!erasable, if erasable { self.stamp[b.0 as usize] } else { u64::from(self.picker.valid(b)) }, b.0)
            });
            for b in closed {
                if self.held[k] <= quota {
                    break;
                }
                if self.erasable(b, now) {
                    self.erase_expired(io, b, Purpose::Recovery)?;
                } else {
                    self.owner[b.0 as usize] = POOL;
                    self.held[k] -= 1;
                    self.picker.insert(b);
                }
            }
        }
        Ok(())
    }
}
