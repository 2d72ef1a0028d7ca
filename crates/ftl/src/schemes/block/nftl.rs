//! NFTL: block mapping with a primary and a replacement block per logical block,
//! the non-real-time baseline of GFTL's Figures 2, 9 and 10
//! (002_7b0ca1838a2bd7a1.txt, Section II, after Ban's US patent 5,937,425).
//!
//! A logical page `lpn` belongs to logical block `lpn / pi`. Its first writes go to
//! the block's *primary* physical block; once the primary is full, writes go to a
//! *replacement* block; when both are full, a *fold* merges the newest copy of each
//! page into a new primary and erases the old two. When the free blocks run out, the
//! logical block whose replacement was opened first is folded (garbage collection).
//! Folds run inside the write that needs them, so a write's time varies by orders of
//! magnitude: that is the behaviour 002 sets GFTL against.
//!
//! ftlab's medium programs the pages of a block strictly in order, so the primary
//! and replacement blocks are both written sequentially with the logical page in
//! the OOB area (the MLC-friendly form of NFTL the paper points to in Section
//! IV-A); a read searches the replacement block's OOB areas backwards, then the
//! primary's, and reads the first copy it finds. RAM holds the two block numbers
//! and write pointers per logical block and one bit per logical page (written and
//! not trimmed; the paper's NFTL has no trim, the suite requires one).
//!
//! The block-mapping primitives (OOB searches, the recovery scan, the OOB tag
//! bits) are shared with GFTL (the `blockmap` module). Pages a fold copies carry
//! the merge bit in the OOB's tag ([`ftlab_nand::Oob::tag`]), the last one also
//! the end bit, so a fold torn by a power cut is recognised and dropped (its
//! sources are erased only after it completes); the OOB's logical-page field
//! holds the logical page alone, all 32 bits of it.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::{BlockId, Geometry, NandError, PageKind, Payload, Ppa};

use crate::blockmap::{
    self, interleaved_good_blocks, reclaim_into, scan_device, search_block, tag, BlockScan, Present,
};
use crate::flash::retry_program;
use crate::{check_lpn, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

const NONE: u32 = u32::MAX;

/// Configuration of [`Nftl`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NftlConfig {
    /// Fraction of the good blocks not exported as logical blocks (they hold
    /// replacement blocks). Default 0.16: the extra space GFTL needs on average
    /// (002 Section IX), so the two compare on equal devices. At least two blocks
    /// are always kept (one replacement, one fold target).
    pub over_provisioning: f64,
}

impl Default for NftlConfig {
    fn default() -> Self {
        NftlConfig { over_provisioning: 0.16 }
    }
}

impl NftlConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("nftl", self.over_provisioning)
    }

    /// Logical blocks on a device with `good` usable blocks.
    fn logical_blocks(&self, good: u32) -> Result<u32, FtlError> {
        blockmap::logical_blocks("nftl", good, self.over_provisioning, 2)
    }
}

impl FtlBuilder for NftlConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        let mut f = Nftl::empty(*self, io)?;
        f.free = interleaved_good_blocks(io).collect();
        Ok(Box::new(f))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Nftl::recover(*self, io)?))
    }
}

/// The NFTL.
#[derive(Debug)]
pub struct Nftl {
    geometry: Geometry,
    logical_blocks: u32,
    /// Per logical block: primary and replacement block (`NONE` if absent) and
    /// their write pointers.
    primary: Vec<u32>,
    replacement: Vec<u32>,
    primary_next: Vec<u16>,
    replacement_next: Vec<u16>,
    present: Present,
    free: VecDeque<BlockId>,
    /// Logical blocks with a replacement block, oldest first: the fold victims.
    with_replacement: VecDeque<u32>,
}

impl Nftl {
    fn empty(config: NftlConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        if g.pages_per_block > u32::from(u16::MAX) {
            return Err(FtlError::config("device.pages_per_block", "nftl needs at most 65535 pages per block"));
        }
        let good = interleaved_good_blocks(io).count() as u32;
        let n = config.logical_blocks(good)?;
        let pages = blockmap::logical_pages("nftl", n, g.pages_per_block)?;
        Ok(Nftl {
            geometry: g,
            logical_blocks: n,
            primary: vec![NONE; n as usize],
            replacement: vec![NONE; n as usize],
            primary_next: vec![0; n as usize],
            replacement_next: vec![0; n as usize],
            present: Present::new(pages),
            free: VecDeque::new(),
            with_replacement: VecDeque::new(),
        })
    }

    /// Rebuilds the block map from an OOB scan: per logical block, a fold target
    /// without its last copy is dropped, blocks older than the newest complete fold
    /// are stale, and of the rest the older is the primary, the newer the
    /// replacement; more than two (a fold the cut undid, and a write after it
    /// into a new replacement that it kept) are folded together on the spot.
    pub fn recover(config: NftlConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut f = Self::empty(config, io)?;
        let ppb = f.geometry.pages_per_block;
        let (used, erased) = scan_device(io)?;
        f.free.extend(erased);
        let mut per_block: Vec<Vec<BlockScan>> = vec![Vec::new(); f.logical_blocks as usize];
        for s in used {
            let lb = s.first().lpn / ppb;
            if s.incomplete_merge() || lb >= f.logical_blocks || s.first_tagged(tag::QUEUE) {
                reclaim_into(io, s.block, &mut f.free)?;
            } else {
                per_block[lb as usize].push(s);
            }
        }
        let mut replaced = Vec::new();
        let mut unfolded: Vec<(u32, Vec<(u32, u16)>)> = Vec::new();
        for (lb, mut v) in per_block.into_iter().enumerate() {
            v.sort_by_key(BlockScan::first_seq);
            let keep_from = v.iter().rposition(BlockScan::complete_merge).unwrap_or(0);
            for s in v.drain(..keep_from) {
                reclaim_into(io, s.block, &mut f.free)?;
            }
            for s in &v {
                for p in &s.pages {
                    f.present.set(p.lpn as usize, true);
                }
            }
            if v.len() > 2 {
                // More blocks than a primary and a replacement: a fold whose
                // target the cut undid while a later write into a new replacement
                // survived. Every one may hold a newest copy: they are folded
                // together below, the newest first.
                unfolded.push((lb as u32, v.iter().rev().map(|s| (s.block.0, s.programmed as u16)).collect()));
                continue;
            }
            let mut it = v.into_iter();
            if let Some(p) = it.next() {
                f.primary[lb] = p.block.0;
                f.primary_next[lb] = p.programmed as u16;
            }
            if let Some(r) = it.next() {
                replaced.push((r.first_seq(), lb as u32));
                f.replacement[lb] = r.block.0;
                f.replacement_next[lb] = r.programmed as u16;
            }
        }
        replaced.sort_unstable();
        f.with_replacement = replaced.into_iter().map(|(_, lb)| lb).collect();
        for (lb, blocks) in unfolded {
            f.fold_blocks(io, lb, &blocks, Purpose::Recovery)?;
        }
        Ok(f)
    }

    /// A free block; folds victims first while only the fold reserve is left.
    fn allocate(&mut self, io: &mut Io) -> Result<BlockId, FtlError> {
        while self.free.len() <= 1 {
            let victim = self
                .with_replacement
                .front()
                .copied()
                .ok_or_else(|| FtlError::DeviceFull("no replacement block to fold".into()))?;
            self.fold(io, victim)?;
        }
        self.free.pop_front().ok_or_else(|| FtlError::DeviceFull("no free block".into()))
    }

    /// Merges the newest copy of every page of logical block `lb` into a new
    /// primary and erases the old primary and replacement.
    fn fold(&mut self, io: &mut Io, lb: u32) -> Result<(), FtlError> {
        let i = lb as usize;
        let blocks = [(self.replacement[i], self.replacement_next[i]), (self.primary[i], self.primary_next[i])];
        self.fold_blocks(io, lb, &blocks, Purpose::Gc)
    }

    /// Merges the newest copy of every page of logical block `lb` found in
    /// `blocks` (block, write pointer; newest first, `NONE` skipped) into a new
    /// primary and erases them.
    fn fold_blocks(&mut self, io: &mut Io, lb: u32, blocks: &[(u32, u16)], purpose: Purpose) -> Result<(), FtlError> {
        let ppb = self.geometry.pages_per_block;
        let i = lb as usize;
        let mut newest: Vec<Option<Ppa>> = vec![None; ppb as usize];
        let mut olds = Vec::new();
        for &(blk, next) in blocks {
            if blk == NONE {
                continue;
            }
            olds.push(BlockId(blk));
            for page in (0..u32::from(next)).rev() {
                let ppa = self.geometry.ppa(BlockId(blk), page);
                match io.read_oob(ppa, purpose) {
                    Ok(Some(oob)) => {
                        let lpn = oob.lpn;
                        let slot = &mut newest[(lpn % ppb) as usize];
                        if slot.is_none() && self.present.get(lpn as usize) {
                            *slot = Some(ppa);
                        }
                    }
                    Ok(None) | Err(NandError::Uncorrectable(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        let sources: Vec<Ppa> = newest.into_iter().flatten().collect();
        let target = if sources.is_empty() { None } else { Some(self.fold_into(io, &sources, purpose)?) };
        if target.is_some() {
            // A fold torn before its last copy is dropped at recovery, so no source
            // block is erased before the last copy is durable.
            for &b in &olds {
                io.supersede(self.geometry.ppa(b, 0));
            }
        }
        for b in olds {
            // A block gone bad is retired: never erased, never used again.
            if io.reclaim(b, purpose)? {
                self.free.push_back(b);
            }
        }
        self.primary[i] = target.map_or(NONE, |t| t.0);
        self.primary_next[i] = sources.len() as u16;
        self.replacement[i] = NONE;
        self.replacement_next[i] = 0;
        self.with_replacement.retain(|&x| x != lb);
        Ok(())
    }

    /// Copies `sources` into a free block, the last copy flagged as the end of the
    /// fold; returns the block. When a program fails, the block it went bad in is
    /// retired (a fold without its end is dropped at recovery) and the copies start
    /// over in another free block, up to [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) blocks.
    fn fold_into(&mut self, io: &mut Io, sources: &[Ppa], purpose: Purpose) -> Result<BlockId, FtlError> {
        retry_program(
            self,
            |s| {
                let t = s.free.pop_front().ok_or_else(|| FtlError::DeviceFull("no block to fold into".into()))?;
                for (k, &src) in sources.iter().enumerate() {
                    let (data, oob) = io.read(src, purpose)?;
                    let ppa = s.geometry.ppa(t, k as u32);
                    let merge = tag::merge(k, sources.len());
                    io.program_tagged(ppa, oob.lpn, PageKind::Data, merge, data, purpose)?;
                    io.supersede(src);
                }
                Ok(t)
            },
            |_, _| {},
        )
    }

    /// One try at writing `lpn`: into its primary block, else its replacement
    /// block (folding first when both are full).
    fn write_once(&mut self, io: &mut Io, lpn: Lpn, data: Payload) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        let ppb = self.geometry.pages_per_block as u16;
        let i = l / ppb as usize;
        if let Some(page) = self.primary_slot(io, i)? {
            return self.program(io, self.primary[i], page, lpn.0, data);
        }
        if self.replacement[i] != NONE && self.replacement_next[i] == ppb {
            self.fold(io, i as u32)?;
            if let Some(page) = self.primary_slot(io, i)? {
                return self.program(io, self.primary[i], page, lpn.0, data);
            }
        }
        if self.replacement[i] == NONE {
            self.replacement[i] = self.allocate(io)?.0;
            self.replacement_next[i] = 0;
            self.with_replacement.push_back(i as u32);
        }
        let page = self.replacement_next[i];
        self.replacement_next[i] += 1;
        self.program(io, self.replacement[i], page, lpn.0, data)
    }

    /// Counts `block`, which went bad under a program, as full in the logical
    /// block it belongs to: no page of it is written again, and the next fold
    /// of that logical block moves its pages off and retires it.
    fn retire(&mut self, block: BlockId) {
        let ppb = self.geometry.pages_per_block as u16;
        for i in 0..self.logical_blocks as usize {
            if self.primary[i] == block.0 {
                self.primary_next[i] = ppb;
            }
            if self.replacement[i] == block.0 {
                self.replacement_next[i] = ppb;
            }
        }
    }
    /// The next page of logical block `i`'s primary block (opening one if it has
    /// none), or `None` when the primary is full.
    fn primary_slot(&mut self, io: &mut Io, i: usize) -> Result<Option<u16>, FtlError> {
        if self.primary[i] == NONE {
            self.primary[i] = self.allocate(io)?.0;
            self.primary_next[i] = 0;
        }
        let page = self.primary_next[i];
        if page == self.geometry.pages_per_block as u16 {
            return Ok(None);
        }
        self.primary_next[i] += 1;
        Ok(Some(page))
    }

    fn program(&mut self, io: &mut Io, block: u32, page: u16, lpn: u32, data: Payload) -> Result<(), FtlError> {
        let ppa = self.geometry.ppa(BlockId(block), u32::from(page));
        io.program(ppa, lpn, PageKind::Data, data, Purpose::Host)?;
        self.present.set(lpn as usize, true);
        Ok(())
    }
}

impl Ftl for Nftl {
    fn name(&self) -> &'static str {
        "nftl"
    }
    fn logical_pages(&self) -> u32 {
        self.logical_blocks * self.geometry.pages_per_block
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        if !self.present.get(l) {
            return Ok(None);
        }
        let i = l / self.geometry.pages_per_block as usize;
        for (blk, next) in [(self.replacement[i], self.replacement_next[i]), (self.primary[i], self.primary_next[i])] {
            if blk == NONE {
                continue;
            }
            if let Some(ppa) = search_block(io, BlockId(blk), u32::from(next), lpn.0, Purpose::Host)? {
                return Ok(Some(io.read(ppa, Purpose::Host)?.0));
            }
        }
        Ok(None)
    }

    /// Writes `lpn`; when the program fails, the block it went bad in counts as
    /// full (never written again; the next fold of its logical block moves its
    /// pages off and retires it) and the write is tried again, up to
    /// [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS) times.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        retry_program(self, |s| s.write_once(io, lpn, data.clone()), |s, ppa| s.retire(s.geometry.block_of(ppa)))
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        self.present.set(l, false);
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        // Two block numbers and two write pointers per logical block, the present
        // bits, the free list and the fold queue.
        u64::from(self.logical_blocks) * 12
            + self.present.ram_bytes()
            + u64::from(self.geometry.total_blocks()) * 4
            + self.with_replacement.len() as u64 * 4
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        let g = &self.geometry;
        let nand = flash.nand();
        let mut owner = vec![NONE; g.total_blocks() as usize];
        for lb in 0..self.logical_blocks as usize {
            for (blk, next) in
                [(self.primary[lb], self.primary_next[lb]), (self.replacement[lb], self.replacement_next[lb])]
            {
                if blk == NONE {
                    continue;
                }
                if owner[blk as usize] != NONE {
                    return Err(format!("block {blk} belongs to logical blocks {} and {lb}", owner[blk as usize]));
                }
                owner[blk as usize] = lb as u32;
                // A block gone bad counts as full.
                let full = nand.is_grown_bad(BlockId(blk)) && u32::from(next) == g.pages_per_block;
                if nand.programmed_pages(BlockId(blk)) != u32::from(next) && !full {
                    return Err(format!(
                        "block {blk}: write pointer {next}, medium says {}",
                        nand.programmed_pages(BlockId(blk))
                    ));
                }
                for page in 0..u32::from(next) {
                    if let Some(oob) = nand.peek_oob(g.ppa(BlockId(blk), page)) {
                        if oob.lpn / g.pages_per_block != lb as u32 || oob.tag & tag::QUEUE != 0 {
                            return Err(format!("block {blk} of logical block {lb} holds {oob:?}"));
                        }
                    }
                }
            }
            if self.primary[lb] == NONE && self.replacement[lb] != NONE {
                return Err(format!("logical block {lb} has a replacement but no primary"));
            }
        }
        for &b in &self.free {
            if owner[b.0 as usize] != NONE || nand.programmed_pages(b) != 0 {
                return Err(format!("free block {} is in use", b.0));
            }
        }
        Ok(())
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "nftl",
    summary: "NFTL (002 Section II): primary and replacement block per logical block, fold when both are full",
    paper: "002 Section II",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("nftl", NftlConfig::default(), p, NftlConfig::validate),
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ftlab_nand::SimTime;

    fn flash() -> Flash {
        let geometry = Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 64,
        };
        crate::testing::flash(geometry, 1)
    }

    #[test]
    fn replacement_then_fold_when_both_are_full() {
        let mut fl = flash();
        let cfg = NftlConfig { over_provisioning: 0.25 };
        let mut f = { Nftl::empty(cfg, &fl.io(SimTime::ZERO)).unwrap() };
        f.free = interleaved_good_blocks(&fl.io(SimTime::ZERO)).collect();
        let mut t = 0u64;
        let mut w = |f: &mut Nftl, fl: &mut Flash, lpn: u32| {
            t += 10_000_000;
            let mut io = fl.io(SimTime(t));
            f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + t), &Hint::default()).unwrap();
        };
        for _ in 0..2 {
            for lpn in 0..4 {
                w(&mut f, &mut fl, lpn);
            }
        }
        // Primary and replacement of logical block 0 are full; no fold yet.
        assert_eq!(fl.counters().erases.total(), 0);
        assert!(f.replacement[0] != NONE && f.replacement_next[0] == 4);
        w(&mut f, &mut fl, 1);
        // The fold copied the four newest pages, erased two blocks, and the write
        // went to a new replacement block.
        assert_eq!(fl.counters().erases.get(Purpose::Gc), 2);
        assert_eq!(fl.counters().programs.get(Purpose::Gc), 4);
        assert_eq!(f.replacement_next[0], 1);
        f.check_invariants(&fl).unwrap();
        // The fold's copies: each logical page in full beside the merge tag, the
        // last copy's tag ending the fold.
        let g = *fl.nand().geometry();
        let oobs: Vec<_> = (0..4).map(|k| fl.nand().peek_oob(g.ppa(BlockId(f.primary[0]), k)).unwrap()).collect();
        assert_eq!(
            oobs.iter().map(|o| (o.lpn, o.tag)).collect::<Vec<_>>(),
            [(0, tag::MERGE), (1, tag::MERGE), (2, tag::MERGE), (3, tag::MERGE | tag::END)]
        );
        let mut io = fl.io(SimTime(1_000_000_000));
        let got = f.read(&mut io, Lpn(1)).unwrap();
        assert_eq!(got, Some(Payload::Token(1 + 90_000_000)));
    }

    #[test]
    fn a_cut_at_the_ack_of_a_write_that_folded_its_block_loses_nothing() {
        // Four dies, blocks taken one from each in turn: the primary and the
        // replacement are read on two dies, the fold's copies queue on a third, and
        // the write after them goes to a new replacement block on the fourth: it
        // is acknowledged before the fold's last copy is durable.
        let geometry = Geometry {
            channels: 2,
            ways_per_channel: 1,
            dies_per_way: 2,
            planes_per_die: 1,
            blocks_per_plane: 3,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 64,
        };
        let mut fl = crate::testing::flash(geometry, 1);
        let cfg = NftlConfig { over_provisioning: 0.25 };
        let mut f = Nftl::empty(cfg, &fl.io(SimTime::ZERO)).unwrap();
        f.free = interleaved_good_blocks(&fl.io(SimTime::ZERO)).collect();
        let mut t = 0u64;
        let mut w = |f: &mut Nftl, fl: &mut Flash, lpn: u32| {
            t += 10_000_000;
            let mut io = fl.io(SimTime(t));
            f.write(&mut io, Lpn(lpn), Payload::Token(u64::from(lpn) + t), &Hint::default()).unwrap();
            io.completion()
        };
        // Pages 1-3 only in the primary; the replacement full of page 0.
        for lpn in [0, 1, 2, 3, 0, 0, 0, 0] {
            w(&mut f, &mut fl, lpn);
        }
        // Both are full: this write folds logical block 0 into a full target and
        // goes to a new replacement block.
        let ack = w(&mut f, &mut fl, 3);
        assert_eq!(fl.counters().programs.get(Purpose::Gc), 4);
        assert!(fl.nand().peek_oob(geometry.ppa(BlockId(f.primary[0]), 3)).is_some());
        fl.power_cut(ack);
        let mut f = Nftl::recover(cfg, &mut fl.io(ack)).unwrap();
        f.check_invariants(&fl).unwrap();
        let mut io = fl.io(SimTime(1_000_000_000));
        let want = [80_000_000, 20_000_000, 30_000_000, 90_000_000];
        for (lpn, &at) in want.iter().enumerate() {
            let got = f.read(&mut io, Lpn(lpn as u32)).unwrap();
            assert_eq!(got, Some(Payload::Token(lpn as u64 + at)), "lpn {lpn}");
        }
    }
}
