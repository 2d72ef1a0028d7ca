//! Rebuilding a page map from the medium after a power cut, shared by the
//! page-mapped schemes: every programmed page's OOB is read, and for each logical
//! page the copy with the newest sequence number wins (a GC copy of a page is
//! newer than its source, and the source block is never erased before the copy is
//! durable). A block that went bad in service is never free nor reopened: its
//! readable pages count, and it is closed so that garbage collection moves them
//! off (and [`Io::reclaim`] then retires it).

use ftlab_nand::{BlockId, NandError, Oob, PageKind, Ppa};

use crate::mapping::PageTable;
use crate::{FtlError, Io, Purpose};

/// What a scan of the medium found, besides the page table.
#[derive(Debug, Default)]
pub struct Scan {
    /// Erased blocks (including blocks erased again because nothing in them was
    /// readable, e.g. after a torn erase).
    pub free: Vec<BlockId>,
    /// Per die, at most one partly written block to keep writing, with its write
    /// pointer: the one holding the newest page.
    pub open: Vec<(BlockId, u32)>,
    /// Full blocks, and partly written blocks that are not reopened (their
    /// unwritten pages come back when they are collected).
    pub closed: Vec<BlockId>,
}

/// Scans every good block, filling `table` (entries beyond its length are
/// ignored).
pub fn scan(io: &mut Io, table: &mut PageTable) -> Result<Scan, FtlError> {
    let mut newest = vec![0u64; table.len()];
    scan_each(io, |ppa, oob| {
        let lpn = oob.lpn as usize;
        if oob.kind == PageKind::Data && lpn < newest.len() && oob.seq > newest[lpn] {
            newest[lpn] = oob.seq;
            table.set(lpn, ppa);
        }
        Ok(())
    })
}

/// Scans every good block as [`scan`] does, handing each readable page's OOB
/// to `visit` (in block order, pages in program order) instead of filling a
/// page table: for schemes whose OOB says more than a logical page (e.g. the
/// nameless-write device's tags and moved-data records, the solid-state
/// cache's disk blocks and records). An error from `visit` ends the scan.
pub fn scan_each(io: &mut Io, visit: impl FnMut(Ppa, &Oob) -> Result<(), FtlError>) -> Result<Scan, FtlError> {
    scan_with(io, |io, ppa| io.read_oob(ppa, Purpose::Recovery), |o| o.seq, visit)
}

/// Scans every good block as [`scan_each`] does, handing `visit` every slot's
/// record of each readable page ([`Io::read_slot_oobs`]: one OOB read a page;
/// one record for a page of one record): for schemes that pack several
/// logical units in a page ([`crate::schemes::page::subpage`]).
pub fn scan_each_slots(
    io: &mut Io,
    visit: impl FnMut(Ppa, &Vec<Oob>) -> Result<(), FtlError>,
) -> Result<Scan, FtlError> {
    scan_with(io, |io, ppa| io.read_slot_oobs(ppa, Purpose::Recovery), |o| o[0].seq, visit)
}

/// The scan itself: `read` reads a page's records (`None`: erased), `seq`
/// gives their sequence number.
fn scan_with<R>(
    io: &mut Io,
    mut read: impl FnMut(&mut Io, Ppa) -> Result<Option<R>, NandError>,
    seq: impl Fn(&R) -> u64,
    mut visit: impl FnMut(Ppa, &R) -> Result<(), FtlError>,
) -> Result<Scan, FtlError> {
    let g = *io.geometry();
    let mut partial: Vec<Option<(u64, BlockId, u32)>> = vec![None; g.dies() as usize];
    let mut out = Scan::default();
    for b in (0..g.total_blocks()).map(BlockId) {
        if io.is_bad(b) {
            continue;
        }
        let programmed = io.programmed_pages(b);
        let grown_bad = io.is_grown_bad(b);
        if programmed == 0 {
            if !grown_bad {
                out.free.push(b);
            }
            continue;
        }
        let mut readable = 0;
        let mut block_newest = 0;
        for page in 0..programmed {
            let ppa = g.ppa(b, page);
            match read(io, ppa) {
                Ok(Some(oob)) => {
                    readable += 1;
                    block_newest = block_newest.max(seq(&oob));
                    visit(ppa, &oob)?;
                }
                Ok(None) | Err(NandError::Uncorrectable(_)) => {}
                Err(e) => return Err(FtlError::Recovery(format!("scanning {ppa:?}: {e}"))),
            }
        }
        if readable == 0 {
            if io.reclaim(b, Purpose::Recovery)? {
                out.free.push(b);
            }
        } else if grown_bad {
            out.closed.push(b);
        } else if programmed < g.pages_per_block {
            let die = g.die_of_block(b).0 as usize;
            match partial[die] {
                Some((seq, _, _)) if seq > block_newest => out.closed.push(b),
                prev => {
                    if let Some((_, other, _)) = prev {
                        out.closed.push(other);
                    }
                    partial[die] = Some((block_newest, b, programmed));
                }
            }
        } else {
            out.closed.push(b);
        }
    }
    out.open = partial.into_iter().flatten().map(|(_, b, next)| (b, next)).collect();
    Ok(out)
}
