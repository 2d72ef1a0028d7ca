//! Partial block cleaning (002 Section IV-C, Algorithm 3, Figure 4): the state
//! machine that cleans one block of the GC queue in read, write and erase steps,
//! each no longer than one erase.
//!
//! - **Read**: the block's pages in the write queue are read, then the block's OOB
//!   areas backwards from its write pointer, reading the page of each logical page
//!   met first (the newest) that the queue did not hold; pages trimmed are left.
//!   The data goes to a RAM buffer of `pi` pages.
//! - **Write**: the buffered pages are programmed to a free block, each tagged as
//!   a merge copy in the OOB, the last one also as the end; then the block map
//!   switches to the new block and the queue entries it absorbed are dropped.
//! - **Erase**: the old block is erased and freed.
//!
//! A step packs whole page operations while their times (with channel transfer)
//! sum to at most `t_er`; an erase is a step of its own. A queue block with no live
//! page is erased in one step. A write to the block being cleaned goes to the write
//! queue and, until its page has been copied, replaces the buffered copy.

use ftlab_nand::{BlockId, NandError, PageKind, Payload, Ppa};

use super::{GcQueueOrder, Gftl, Job, NONE};
use crate::blockmap::tag;
use crate::{FtlError, Io, Purpose};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Read,
    Write,
    Erase,
}

/// The cleaning of one logical block in progress.
#[derive(Debug)]
pub(crate) struct Cleaning {
    pub lb: u32,
    pub phase: Phase,
    /// The block being cleaned and its write pointer at the start.
    pub old: Option<BlockId>,
    /// The block's queued pages at the start, read first.
    plan: Vec<(u32, Ppa)>,
    cursor: usize,
    /// Pages of the old block still to scan (the next is `scan - 1`).
    scan: u32,
    /// Offsets whose newest copy in the old block the scan has met.
    seen: Vec<bool>,
    /// A page the scan found, to read next.
    pending: Option<(u32, Ppa)>,
    /// Per offset: the data to copy and where it was read (or queued).
    buffer: Vec<Option<(Payload, Ppa)>>,
    /// Offsets to program, in order, fixed when the write phase starts.
    order: Vec<u32>,
    written: usize,
    /// `(lpn, source)` of each page programmed.
    copied: Vec<(u32, Ppa)>,
    pub target: Option<BlockId>,
    /// Steps this cleaning took so far.
    pub steps: u32,
}

impl Cleaning {
    /// Whether host writes to `lb` must go to the write queue (the block map has
    /// not switched yet).
    pub fn holds(&self, lb: u32) -> bool {
        self.lb == lb && self.phase != Phase::Erase
    }

    /// A host write of offset `off`, queued at `ppa`: the cleaning copies it
    /// instead of what it buffered, unless the page is already programmed.
    pub fn update(&mut self, off: u32, data: Payload, ppa: Ppa) {
        let not_yet_written = match self.phase {
            Phase::Read => true,
            Phase::Write => self.order[self.written..].contains(&off),
            Phase::Erase => false,
        };
        if not_yet_written {
            self.buffer[off as usize] = Some((data, ppa));
        }
    }

    /// A trim of offset `off` before the write phase drops its buffered copy.
    pub fn forget(&mut self, off: u32) {
        if self.phase == Phase::Read {
            self.buffer[off as usize] = None;
        }
    }
}

impl Gftl {
    /// Takes the next job off the GC queue, if cleaning may run (Section VII-A's
    /// threshold unless `forced`).
    pub(super) fn next_job(&mut self, forced: bool) -> Option<Job> {
        let threshold = self.config.clean_threshold;
        if !forced
            && threshold > 0.0
            && (self.write_queue_pages() as f64) <= threshold * self.sizing.write_queue_pages as f64
        {
            return None;
        }
        if forced && !matches!(self.gcq.front(), Some(Job::Queue(_))) {
            if let Some(lb) = self.frees_a_queue_block_soonest() {
                let at = self.gcq.iter().position(|j| *j == Job::Data(lb))?;
                return self.gcq.remove(at);
            }
        }
        match self.config.gc_queue {
            GcQueueOrder::Fifo => self.gcq.pop_front(),
            GcQueueOrder::Priority => {
                let ppb = self.ppb();
                let dirt = |s: &Self, j: &Job| match *j {
                    Job::Queue(_) => 2 * ppb + 1,
                    Job::Data(lb) => {
                        let first = (lb * ppb) as usize;
                        let live = (first..first + ppb as usize).filter(|&l| s.present.get(l)).count() as u32;
                        (u32::from(s.index[lb as usize]) + u32::from(s.wq_count[lb as usize])).saturating_sub(live)
                    }
                };
                let mut best: Option<(usize, u32)> = None;
                for (i, j) in self.gcq.iter().enumerate() {
                    let d = dirt(self, j);
                    if best.is_none_or(|(_, bd)| d > bd) {
                        best = Some((i, d));
                    }
                }
                best.and_then(|(i, _)| self.gcq.remove(i))
            }
        }
    }

    /// With the write queue full: a logical block holding a page of the closed
    /// queue block with the fewest live pages, so that the fewest cleanings erase a
    /// queue block.
    fn frees_a_queue_block_soonest(&self) -> Option<u32> {
        let open = self.wq_open.map(|(b, _)| b.0);
        let block = (0..self.is_queue.len())
            .filter(|&b| self.is_queue[b] && Some(b as u32) != open && self.wq_live[b] > 0)
            .min_by_key(|&b| self.wq_live[b])?;
        let ppb = self.ppb();
        self.wq_map
            .iter()
            .find(|(_, p)| self.geometry.block_of(**p).0 as usize == block)
            .map(|(&lpn, _)| lpn / ppb)
            .filter(|&lb| self.in_gcq[lb as usize])
    }

    fn start(&self, lb: u32) -> Box<Cleaning> {
        let ppb = self.ppb();
        let (old, scan) = match self.map[lb as usize] {
            NONE => (None, 0),
            b => (Some(BlockId(b)), u32::from(self.index[lb as usize])),
        };
        Box::new(Cleaning {
            lb,
            phase: Phase::Read,
            old,
            plan: self.wq_map.range(lb * ppb..(lb + 1) * ppb).map(|(&l, &p)| (l, p)).collect(),
            cursor: 0,
            scan,
            seen: vec![false; ppb as usize],
            pending: None,
            buffer: vec![None; ppb as usize],
            order: Vec::new(),
            written: 0,
            copied: Vec::new(),
            target: None,
            steps: 0,
        })
    }

    /// Runs one step of partial block cleaning (or of a queue-block erase).
    /// Returns false if there was nothing to do.
    pub(crate) fn step(&mut self, io: &mut Io, forced: bool) -> Result<bool, FtlError> {
        if self.cleaning.is_none() {
            match self.next_job(forced) {
                None => return Ok(false),
                Some(Job::Queue(b)) => {
                    // A block gone bad is retired: never erased, never used again.
                    let erased = io.reclaim(b, Purpose::Gc)?;
                    self.is_queue[b.0 as usize] = false;
                    self.wq_blocks -= 1;
                    if erased {
                        self.free.push_back(b);
                    }
                    return Ok(true);
                }
                Some(Job::Data(lb)) => {
                    self.in_gcq[lb as usize] = false;
                    self.cleaning = Some(self.start(lb));
                }
            }
        }
        let Some(mut c) = self.cleaning.take() else { return Ok(false) };
        c.steps += 1;
        let mut used = 0u64;
        let result = self.run_step(io, &mut c, &mut used);
        if result.is_err() && c.phase == Phase::Write {
            // A copy failed (its target went bad): the cleaning is dropped with
            // its target, retired (a cleaning without its end copy is dropped at
            // recovery too); nothing moved yet, so the block is cleaned again
            // from the start, into another free block.
            self.enqueue(c.lb);
            return match result {
                Err(FtlError::Nand(NandError::ProgramFailed { .. })) => Ok(true),
                other => other.map(|()| true),
            };
        }
        if c.phase != Phase::Erase || c.old.is_some() {
            self.cleaning = Some(c);
        }
        result.map(|()| true)
    }

    /// Whether an operation of `cost` still fits in this step.
    fn fits(&self, used: u64, cost: u64) -> bool {
        used == 0 || used + cost <= self.costs.er
    }

    fn run_step(&mut self, io: &mut Io, c: &mut Cleaning, used: &mut u64) -> Result<(), FtlError> {
        let ppb = self.ppb();
        let base = c.lb * ppb;
        while c.phase == Phase::Read {
            if let Some(&(lpn, ppa)) = c.plan.get(c.cursor) {
                let off = (lpn % ppb) as usize;
                if self.wq_map.get(&lpn) != Some(&ppa) || c.buffer[off].is_some() || !self.present.get(lpn as usize) {
                    c.cursor += 1;
                    continue;
                }
                if !self.fits(*used, self.costs.rdpg) {
                    return Ok(());
                }
                let (data, _) = io.read(ppa, Purpose::Gc)?;
                *used += self.costs.rdpg;
                c.buffer[off] = Some((data, ppa));
                c.cursor += 1;
            } else if let Some((off, ppa)) = c.pending {
                if c.buffer[off as usize].is_some() || !self.present.get((base + off) as usize) {
                    c.pending = None;
                    continue;
                }
                if !self.fits(*used, self.costs.rdpg) {
                    return Ok(());
                }
                let (data, _) = io.read(ppa, Purpose::Gc)?;
                *used += self.costs.rdpg;
                c.buffer[off as usize] = Some((data, ppa));
                c.pending = None;
            } else if c.scan > 0 && self.wanted(c) {
                if !self.fits(*used, self.costs.rdoob) {
                    return Ok(());
                }
                let (Some(old), page) = (c.old, c.scan - 1) else { unreachable!("scan without a block") };
                let ppa = self.geometry.ppa(old, page);
                *used += self.costs.rdoob;
                c.scan -= 1;
                match io.read_oob(ppa, Purpose::Gc) {
                    Ok(Some(oob)) => {
                        let off = oob.lpn % ppb;
                        if !std::mem::replace(&mut c.seen[off as usize], true) {
                            c.pending = Some((off, ppa));
                        }
                    }
                    Ok(None) | Err(NandError::Uncorrectable(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            } else {
                c.order = (0..ppb).filter(|&o| c.buffer[o as usize].is_some()).collect();
                if !c.order.is_empty() {
                    let t = self.free.pop_front().ok_or_else(|| FtlError::DeviceFull("no cleaning target".into()))?;
                    c.target = Some(t);
                }
                c.phase = Phase::Write;
                if *used > 0 {
                    return Ok(());
                }
            }
        }
        while c.phase == Phase::Write {
            if c.written == c.order.len() {
                self.switch(c);
                if *used > 0 {
                    return Ok(());
                }
                break;
            }
            if !self.fits(*used, self.costs.wrpg) {
                return Ok(());
            }
            let off = c.order[c.written];
            let Some((data, src)) = c.buffer[off as usize].take() else { unreachable!("ordered pages are buffered") };
            let merge = tag::merge(c.written, c.order.len());
            let (Some(t), lpn) = (c.target, base + off) else { unreachable!("a target is taken for a write phase") };
            let ppa = self.geometry.ppa(t, c.written as u32);
            io.program_tagged(ppa, lpn, PageKind::Data, merge, data, Purpose::Gc)?;
            io.supersede(src);
            *used += self.costs.wrpg;
            c.copied.push((lpn, src));
            c.written += 1;
            if merge & tag::END != 0 {
                // A cleaning torn before its end copy is dropped at recovery: no
                // source (old block or queue block) is erased before that copy is
                // durable.
                for &(_, src) in &c.copied {
                    io.supersede(src);
                }
                if let Some(old) = c.old {
                    io.supersede(self.geometry.ppa(old, 0));
                }
            }
        }
        if let Some(old) = c.old.take() {
            // A block gone bad is retired: never erased, never used again.
            if io.reclaim(old, Purpose::Gc)? {
                self.free.push_back(old);
            }
        }
        Ok(())
    }

    /// Whether the scan of the old block may still find a page to copy.
    fn wanted(&self, c: &Cleaning) -> bool {
        let base = (c.lb * self.ppb()) as usize;
        (0..self.ppb() as usize).any(|o| !c.seen[o] && c.buffer[o].is_none() && self.present.get(base + o))
    }

    /// The end of the write phase: the block map switches to the new block; queue
    /// entries it absorbed are dropped; the block rejoins the GC queue if newer
    /// pages of it wait in the queue.
    fn switch(&mut self, c: &mut Cleaning) {
        let lb = c.lb as usize;
        self.map[lb] = c.target.map_or(NONE, |t| t.0);
        self.index[lb] = c.written as u16;
        for &(lpn, src) in &c.copied {
            if self.wq_map.get(&lpn) == Some(&src) {
                self.drop_queued(lpn);
            }
        }
        if self.wq_count[lb] > 0 {
            self.enqueue(c.lb);
        }
        c.phase = Phase::Erase;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::tests::{device, device_sized, write};
    use super::*;
    use crate::Ftl;

    #[test]
    fn every_step_fits_in_an_erase_and_a_cleaning_takes_at_most_kappa_steps() {
        let (mut flash, mut g) = device_sized(super::super::GftlConfig::default(), 200);
        let n = g.logical_pages();
        let blocks = n / 16;
        let mut t = 0;
        let mut max_steps = 0;
        // Section IV-D's worst case: writes to logical blocks 0, 1, ..., N - 1, 0, ...
        for i in 0..4 * n {
            let lpn = (i % blocks) * 16 + (i / blocks) % 16;
            let before = g.cleaning.as_ref().map(|c| (c.lb, c.steps));
            let gc_before = flash.counters().programs.get(Purpose::Gc);
            let (start, finish) = write(&mut flash, &mut g, &mut t, lpn);
            // The host program and one step: within the bound.
            assert!(finish.0 - start.0 <= g.sizing.bound_ns, "command took {} ns", finish.0 - start.0);
            let copied = flash.counters().programs.get(Purpose::Gc) - gc_before;
            assert!(copied <= g.costs.er / g.costs.wrpg, "{copied} programs in one step");
            if let Some((lb, s)) = before {
                if g.cleaning.as_ref().is_none_or(|c| c.lb != lb) {
                    max_steps = max_steps.max(s + 1);
                }
            }
        }
        assert!(max_steps >= 3, "cleanings ran ({max_steps} steps)");
        assert!(max_steps <= g.sizing.kappa, "{max_steps} steps > kappa = {}", g.sizing.kappa);
        assert_eq!(g.forced_steps(), 0, "the worst case of Section IV-D stays within L");
        assert!(g.write_queue_high_water() <= g.sizing.write_queue_pages);
        g.check_invariants(&flash).unwrap();
    }

    #[test]
    fn a_full_write_queue_forces_steps_but_loses_nothing() {
        // Random overwrites on a tiny device fragment the queue beyond L.
        let (mut flash, mut g) = device(super::super::GftlConfig { write_queue_factor: 1.0, ..Default::default() });
        let n = g.logical_pages();
        let mut t = 0;
        let mut x = 7u64;
        let mut last = vec![None; n as usize];
        for _ in 0..6 * n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = ((x >> 33) % u64::from(n)) as u32;
            write(&mut flash, &mut g, &mut t, lpn);
            last[lpn as usize] = Some(u64::from(lpn) << 32 | t);
        }
        assert!(g.forced_steps() > 0);
        g.check_invariants(&flash).unwrap();
        for lpn in 0..n {
            t += 10_000_000;
            let mut io = flash.io(ftlab_nand::SimTime(t));
            let got = g.read(&mut io, crate::Lpn(lpn)).unwrap();
            assert_eq!(got, last[lpn as usize].map(Payload::Token), "lpn {lpn}");
        }
    }
}
