//! Recovery of a hybrid core's page map in flash mode: checkpoint, log
//! replay and roll-forward (004 Section 6, after LFS), from what
//! [`crate::maplog`] wrote.
//!
//! 1. **Find the map pages.** For every written good block, the OOB of its
//!    last readable page (read backwards from the medium's write pointer,
//!    skipping torn pages). A map page there makes it a ring block: every
//!    page of it is read (purpose map). Nothing else of the block is read yet.
//! 2. **Replay.** The latest complete checkpoint ([`crate::maplog::page::select`]; a
//!    torn one falls back to the one before), then the log pages after it in
//!    order. This gives each page's logical page (or padding) in program
//!    order, and the *horizon* of the last page replayed: every program with a
//!    later OOB sequence number is in no replayed page.
//! 3. **Roll forward.** A block whose last readable page is not newer than
//!    the horizon is as the map says (one OOB read). Otherwise its OOBs are
//!    read backwards while they are newer than the horizon: those pages were
//!    programmed after the last logged change and are applied, in sequence
//!    order, after everything replayed. A block all of whose pages are newer
//!    was erased and written again since: what the map said of it is dropped.
//!    What the map says of pages past the write pointer or torn is dropped
//!    too, and a logical page left mapped to such a page is unmapped.
//!
//! The cost ([`RecoveryReads`]): one OOB read per written block, every page of
//! the ring blocks, and one OOB read per page written after the horizon,
//! against one OOB read per written page for the full scan.

use ftlab_nand::{BlockId, NandError, Oob, PageKind};

use super::{is_bad, Core, NONE};
use crate::maplog::page::{self, MetaPage};
use crate::maplog::{tag, MAGIC};
use crate::{FtlError, Io, Purpose};

/// What a flash-mode recovery read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryReads {
    /// OOB reads (purpose recovery).
    pub oob_reads: u64,
    /// Map pages read (purpose map).
    pub map_pages: u64,
    /// Pages rolled forward (programmed after the horizon).
    pub rolled_forward: u64,
    /// Whether no complete checkpoint was found and the full OOB scan ran.
    pub full_scan: bool,
}

/// Per-page sequence numbers recovery orders pages by (replay order for the
/// pages the map names, after them the OOB's order), and the newest per block.
pub(crate) struct Order {
    pub page: Vec<u64>,
    pub block: Vec<u64>,
    /// The newest OOB sequence number of a data page known to be in the map.
    pub newest: u64,
}

fn corrupt(name: &str, what: String) -> FtlError {
    FtlError::Recovery(format!("{name}: the map log is inconsistent: {what}"))
}

/// The last readable page of the first `n` pages of `b`, by OOB reads backwards.
fn last_readable(io: &mut Io, b: BlockId, n: u32, reads: &mut RecoveryReads) -> Result<Option<(u32, Oob)>, FtlError> {
    for k in (0..n).rev() {
        let ppa = io.geometry().ppa(b, k);
        reads.oob_reads += 1;
        match io.read_oob(ppa, Purpose::Recovery) {
            Ok(Some(oob)) => return Ok(Some((k, oob))),
            Ok(None) | Err(NandError::Uncorrectable(_)) => {}
            Err(e) => return Err(FtlError::Recovery(format!("scanning {ppa:?}: {e}"))),
        }
    }
    Ok(None)
}

/// Rebuilds `c`'s page locations, reverse map and write pointers from the
/// map log and a roll-forward over `blocks` (the good blocks). Returns the
/// newest map page's sequence number, or `None` when the medium holds no
/// complete checkpoint (the caller scans the device).
pub(crate) fn replay(
    c: &mut Core,
    io: &mut Io,
    blocks: &[BlockId],
    order: &mut Order,
    reads: &mut RecoveryReads,
) -> Result<Option<u64>, FtlError> {
    let g = c.g;
    let ppb = g.pages_per_block;
    let name = c.name();
    let lpages = c.logical_pages();
    let mut pages: Vec<MetaPage> = Vec::new();
    let mut ends = Vec::new();
    let mut unwritten = Vec::new();
    for &b in blocks {
        let n = io.programmed_pages(b);
        c.next[b.0 as usize] = if is_bad(io, b.0) { ppb } else { n };
        if n == 0 {
            unwritten.push(b.0);
            continue;
        }
        let last = last_readable(io, b, n, reads)?;
        if !matches!(last, Some((_, oob)) if oob.kind == PageKind::Map) {
            ends.push((b.0, n, last));
            continue;
        }
        unwritten.push(b.0);
        for k in 0..n {
            let ppa = g.ppa(b, k);
            reads.map_pages += 1;
            match io.read(ppa, Purpose::Map) {
                Ok((payload, _)) => pages.extend(page::decode(MAGIC, &payload)),
                Err(NandError::Uncorrectable(_)) => {}
                Err(e) => return Err(FtlError::Recovery(format!("{name}: reading the map log at {ppa:?}: {e}"))),
            }
        }
    }
    let sel = page::select(&mut pages);
    if sel.checkpoint.is_empty() {
        return Ok(None);
    }
    // Replay, in program order.
    let mut clock = 0u64;
    let mut horizon = 0u64;
    let mut program = |c: &mut Core, order: &mut Order, ppa: u32, lpn: u32| -> Result<(), FtlError> {
        if ppa >= g.total_pages() || (lpn != NONE && lpn >= lpages) {
            return Err(corrupt(name, format!("page {ppa} holding logical page {lpn}")));
        }
        clock += 1;
        c.rev[ppa as usize] = lpn;
        order.page[ppa as usize] = clock;
        if lpn != NONE {
            c.loc[lpn as usize] = ppa;
        }
        Ok(())
    };
    // The checkpoint: a block number, then a word per page.
    let mut at: Option<(u32, u32)> = None; // block, next page
    for &i in &sel.checkpoint {
        let Some((&h, body)) = pages[i].records.split_first() else { continue };
        horizon = h;
        for w in body.iter().flat_map(|&r| [r as u32, (r >> 32) as u32]) {
            match at {
                Some((b, k)) => {
                    if w != NONE {
                        program(c, order, g.ppa(BlockId(b), k).0, w)?;
                    }
                    at = (k + 1 < ppb).then_some((b, k + 1));
                }
                None if w == NONE => {}
                None if w >= g.total_blocks() => return Err(corrupt(name, format!("block {w} in the checkpoint"))),
                None => at = Some((w, 0)),
            }
        }
    }
    let mut last = (NONE, NONE);
    for &i in &sel.log {
        let Some((&h, body)) = pages[i].records.split_first() else { continue };
        horizon = h;
        for &r in body {
            let (lo, hi) = (r as u32, (r >> 32) as u32);
            match lo {
                tag::ERASE if hi < g.total_blocks() => {
                    let first = g.ppa(BlockId(hi), 0).0 as usize;
                    c.rev[first..first + ppb as usize].iter_mut().for_each(|r| *r = NONE);
                    order.page[first..first + ppb as usize].iter_mut().for_each(|s| *s = 0);
                }
                tag::TRIM if hi < lpages => c.loc[hi as usize] = NONE,
                tag::RUN if last.0 != NONE => {
                    for _ in 0..hi {
                        last = (last.0 + 1, if last.1 == NONE { NONE } else { last.1 + 1 });
                        program(c, order, last.0, last.1)?;
                    }
                }
                tag::ERASE | tag::TRIM | tag::RUN => return Err(corrupt(name, format!("record {r:#x}"))),
                _ => {
                    program(c, order, lo, hi)?;
                    last = (lo, hi);
                }
            }
        }
    }
    // Roll forward.
    let forget = |c: &mut Core, order: &mut Order, b: u32, from: u32, to: u32| {
        for k in from..to {
            let p = g.ppa(BlockId(b), k).0 as usize;
            c.rev[p] = NONE;
            order.page[p] = 0;
        }
    };
    for &b in &unwritten {
        forget(c, order, b, 0, ppb);
    }
    let mut forward: Vec<(u64, u32, Oob)> = Vec::new();
    for (b, n, last) in ends {
        forget(c, order, b, n, ppb);
        let Some((k, oob)) = last else {
            forget(c, order, b, 0, n);
            continue;
        };
        forget(c, order, b, k + 1, n);
        if oob.seq <= horizon {
            continue;
        }
        forward.push((oob.seq, g.ppa(BlockId(b), k).0, oob));
        let mut reached = false;
        for j in (0..k).rev() {
            let ppa = g.ppa(BlockId(b), j);
            reads.oob_reads += 1;
            match io.read_oob(ppa, Purpose::Recovery) {
                Ok(Some(o)) if o.seq <= horizon => {
                    reached = true;
                    break;
                }
                Ok(Some(o)) => forward.push((o.seq, ppa.0, o)),
                Ok(None) | Err(NandError::Uncorrectable(_)) => forget(c, order, b, j, j + 1),
                Err(e) => return Err(FtlError::Recovery(format!("{name}: rolling forward at {ppa:?}: {e}"))),
            }
        }
        if !reached {
            // Erased and written again after the horizon.
            forget(c, order, b, 0, k + 1);
        }
    }
    forward.sort_unstable_by_key(|&(seq, _, _)| seq);
    order.newest = forward.last().map_or(horizon, |&(seq, _, _)| seq.max(horizon));
    reads.rolled_forward = forward.len() as u64;
    for (seq, p, oob) in forward {
        let data = oob.kind == PageKind::Data && oob.lpn < lpages;
        c.rev[p as usize] = if data { oob.lpn } else { NONE };
        order.page[p as usize] = clock + (seq - horizon);
        if data {
            c.loc[oob.lpn as usize] = p;
        }
    }
    // A logical page the map left on a page that is gone is unmapped.
    for lpn in 0..lpages {
        let p = c.loc[lpn as usize];
        if p != NONE && c.rev[p as usize] != lpn {
            c.loc[lpn as usize] = NONE;
        }
    }
    for (p, &s) in order.page.iter().enumerate() {
        let b = g.block_of(ftlab_nand::Ppa(p as u32)).0 as usize;
        order.block[b] = order.block[b].max(s);
    }
    Ok(Some(sel.newest))
}
