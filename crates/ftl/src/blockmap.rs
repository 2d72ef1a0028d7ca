//! The block-mapping unit: what the block-mapped schemes ([`crate::schemes::block::nftl`],
//! [`crate::schemes::realtime::gftl`]) share, and the parts of it the hybrid core
//! ([`crate::hybrid`]) uses too.
//!
//! Logical page `lpn` belongs to logical block `lpn / pi` (`pi` pages per
//! block). Blocks are written sequentially from page 0 with the logical page in
//! the OOB and, in the OOB's tag ([`Oob::tag`], bits the scheme owns), what the
//! scheme's recovery must know of the page besides it ([`tag`]): that a merge
//! copied it, that it is a merge's last copy, that it sits in a write queue. So
//! a logical page takes all 32 bits of the OOB's logical-page field (every
//! value below [`NO_PAGE`]).
//!
//! A read finds the newest copy of a page by reading a block's OOB areas
//! backwards ([`search_block`]); after a power cut, recovery reads every OOB
//! area of every good block ([`scan_device`]) and the scheme gives each block
//! its role from what [`BlockScan`] says of it. Blocks are handed out one die
//! after another ([`interleaved_good_blocks`]), so round-robin allocation
//! spreads over the dies.

use std::collections::VecDeque;

use ftlab_nand::{BlockId, DieId, NandError, Oob, PageKind, Ppa};

use crate::{FtlError, Io, Purpose};

/// "No logical page": the one 32-bit value a logical page never takes (the
/// hybrid core's page maps use it for an empty slot).
pub const NO_PAGE: u32 = u32::MAX;

/// Bits of the OOB tag ([`Oob::tag`]) the block-mapped schemes set. Each scheme
/// may add its own among the bits left (up to [`Oob::MAX_TAG`]).
pub mod tag {
    /// A page a merge copied (an NFTL fold, a GFTL block cleaning).
    pub const MERGE: u8 = 1;
    /// The last page a merge copied: the merge is complete.
    pub const END: u8 = 1 << 1;
    /// A page of GFTL's write queue.
    pub const QUEUE: u8 = 1 << 2;
    // Every bit fits in the OOB's tag.
    const _: () = assert!((MERGE | END | QUEUE) as u32 >> ftlab_nand::Oob::TAG_BITS == 0);

    /// The tag of copy `k` of a merge of `n` copies.
    pub fn merge(k: usize, n: usize) -> u8 {
        if k + 1 == n {
            MERGE | END
        } else {
            MERGE
        }
    }
}

/// The good blocks, one from each die in turn (so round-robin allocation spreads
/// over the dies).
pub fn interleaved_good_blocks<'a>(io: &'a Io) -> impl Iterator<Item = BlockId> + 'a {
    let g = *io.geometry();
    (0..g.blocks_per_die())
        .flat_map(move |i| (0..g.dies()).map(move |d| g.block_of_die(DieId(d), i)))
        .filter(|&b| !io.is_bad(b))
}

/// Logical blocks exported by `name` on a device of `good` usable blocks with
/// `over_provisioning` of them (at least `min_spare`) kept back
/// ([`crate::config::over_provisioning`] first).
pub fn logical_blocks(name: &str, good: u32, over_provisioning: f64, min_spare: u32) -> Result<u32, FtlError> {
    crate::config::over_provisioning(name, over_provisioning)?;
    let spare = ((f64::from(good) * over_provisioning).ceil() as u32).max(min_spare);
    match good.checked_sub(spare) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(FtlError::config(
            "device",
            format!(
                "the device is too small for {name}: {good} good blocks, {spare} of them spare \
                 (lower {name}.over_provisioning or use a larger device)"
            ),
        )),
    }
}

/// Logical pages of `blocks` logical blocks of `pi` pages: every one must be
/// below [`NO_PAGE`].
pub fn logical_pages(name: &str, blocks: u32, pi: u32) -> Result<u32, FtlError> {
    let pages = u64::from(blocks) * u64::from(pi);
    if pages >= u64::from(NO_PAGE) {
        return Err(FtlError::config(
            "device",
            format!("{name} supports fewer than {NO_PAGE} logical pages, got {pages}"),
        ));
    }
    Ok(pages as u32)
}

/// One bit per logical page: written and not trimmed.
#[derive(Debug, Clone)]
pub struct Present(Vec<u64>);

impl Present {
    pub fn new(n: u32) -> Self {
        Present(vec![0; (n as usize).div_ceil(64)])
    }
    pub fn get(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    pub fn set(&mut self, i: usize, on: bool) {
        if on {
            self.0[i / 64] |= 1 << (i % 64);
        } else {
            self.0[i / 64] &= !(1 << (i % 64));
        }
    }
    pub fn ram_bytes(&self) -> u64 {
        self.0.len() as u64 * 8
    }
}

/// The newest copy of `lpn` among the first `upto` pages of `block`: its OOB areas
/// are read backwards (002 Section IV-B). Torn pages are skipped.
pub fn search_block(
    io: &mut Io,
    block: BlockId,
    upto: u32,
    lpn: u32,
    purpose: Purpose,
) -> Result<Option<Ppa>, FtlError> {
    for page in (0..upto).rev() {
        let ppa = io.geometry().ppa(block, page);
        match io.read_oob(ppa, purpose) {
            Ok(Some(oob)) if oob.lpn == lpn => return Ok(Some(ppa)),
            Ok(_) | Err(NandError::Uncorrectable(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// A readable data page a scan found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScannedPage {
    /// Its page in the block.
    pub page: u32,
    pub lpn: u32,
    pub seq: u64,
    /// The scheme's tag ([`tag`]).
    pub tag: u8,
}

impl ScannedPage {
    fn new(page: u32, oob: &Oob) -> Self {
        ScannedPage { page, lpn: oob.lpn, seq: oob.seq, tag: oob.tag }
    }
}

/// What a scan found in one block: each readable data page, in page order.
#[derive(Debug, Clone)]
pub struct BlockScan {
    pub block: BlockId,
    pub programmed: u32,
    /// Never empty.
    pub pages: Vec<ScannedPage>,
}

impl BlockScan {
    pub fn first(&self) -> &ScannedPage {
        &self.pages[0]
    }
    pub fn first_seq(&self) -> u64 {
        self.pages.first().map_or(0, |p| p.seq)
    }
    pub fn last_seq(&self) -> u64 {
        self.pages.iter().map(|p| p.seq).max().unwrap_or(0)
    }
    /// Whether its first page carries `bits` of the tag.
    pub fn first_tagged(&self, bits: u8) -> bool {
        self.pages.first().is_some_and(|p| p.tag & bits != 0)
    }
    /// A merge target whose last copy is missing.
    pub fn incomplete_merge(&self) -> bool {
        self.first_tagged(tag::MERGE) && !self.complete_merge()
    }
    pub fn complete_merge(&self) -> bool {
        self.pages.iter().any(|p| p.tag & tag::END != 0)
    }
}

/// Reads the OOB of every programmed page of every good block (002 Section VI, the
/// abrupt-shutdown startup). Blocks with no readable page (e.g. a torn erase) are
/// erased again and returned in `erased`, with the blocks never written. A block
/// that went bad in service is never returned as erased; if it holds pages, its
/// scan counts it fully programmed, so it is never written again.
pub fn scan_device(io: &mut Io) -> Result<(Vec<BlockScan>, Vec<BlockId>), FtlError> {
    let blocks: Vec<BlockId> = interleaved_good_blocks(io).collect();
    let (mut used, mut erased) = (Vec::new(), Vec::new());
    for b in blocks {
        let programmed = io.programmed_pages(b);
        let pages = scan_pages(io, b, programmed)?;
        if io.is_grown_bad(b) {
            if !pages.is_empty() {
                used.push(BlockScan { block: b, programmed: io.geometry().pages_per_block, pages });
            }
        } else if pages.is_empty() {
            if (programmed == 0 && io.programmed_pages(b) == 0) || io.reclaim(b, Purpose::Recovery)? {
                erased.push(b);
            }
        } else {
            used.push(BlockScan { block: b, programmed, pages });
        }
    }
    Ok((used, erased))
}

/// Each readable data page of the first `programmed` pages of `b`.
fn scan_pages(io: &mut Io, b: BlockId, programmed: u32) -> Result<Vec<ScannedPage>, FtlError> {
    let mut pages = Vec::new();
    for page in 0..programmed {
        let ppa = io.geometry().ppa(b, page);
        match io.read_oob(ppa, Purpose::Recovery) {
            Ok(Some(oob)) if oob.kind == PageKind::Data => pages.push(ScannedPage::new(page, &oob)),
            Ok(_) | Err(NandError::Uncorrectable(_)) => {}
            Err(e) => return Err(FtlError::Recovery(format!("scanning {ppa:?}: {e}"))),
        }
    }
    Ok(pages)
}

/// Erases `b` and appends it to `free`, unless it has gone bad ([`Io::reclaim`]):
/// then it is retired.
pub fn reclaim_into(io: &mut Io, b: BlockId, free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
    if io.reclaim(b, Purpose::Recovery)? {
        free.push_back(b);
    }
    Ok(())
}

#[cfg(test)]
#[path = "blockmap_tests.rs"]
mod tests;
