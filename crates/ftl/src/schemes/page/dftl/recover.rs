//! Rebuilding DFTL's state after a power cut.
//!
//! 1. The global translation directory: every translation block's OOB is scanned;
//!    for each translation page the version with the newest sequence number wins.
//! 2. Every data block's OOB is scanned. A data page older than the translation
//!    page covering it is what that translation page maps (every version of a
//!    translation page holds every mapping made before it: write-backs and
//!    translation GC merge all the page's dirty CMT entries), so the newest such
//!    copy is the translation page's entry. A data page newer than its translation
//!    page was acknowledged with its mapping only in the CMT: the newest such copy
//!    of each logical page is replayed into the CMT as a dirty entry, which is
//!    what the CMT held before the cut, so nothing acknowledged is lost.
//!
//! The token medium does not hold a translation page's entries, so step 2 derives
//! them from the data pages older than the translation page (the same entries, as
//! argued above) instead of reading them; the translation page reads are not
//! charged.

use ftlab_nand::{BlockId, NandError, Oob, PageKind, Ppa};

use super::core::DemandMap;
use crate::{FtlError, Io, Purpose};

/// What a scan found in one block.
enum Found {
    /// Nothing readable: erased, or a torn erase (erased again).
    Free,
    /// Partly written: the newest sequence number and the next page.
    Partial(u64, u32),
    Full,
    /// Gone bad with nothing readable on it: never used again.
    Retired,
}

fn scan(io: &mut Io, b: BlockId, pages: &mut Vec<(Ppa, Oob)>) -> Result<Found, FtlError> {
    let g = *io.geometry();
    let programmed = io.programmed_pages(b);
    let grown_bad = io.is_grown_bad(b);
    if programmed == 0 {
        return Ok(if grown_bad { Found::Retired } else { Found::Free });
    }
    let (mut readable, mut newest) = (0, 0);
    pages.clear();
    for page in 0..programmed {
        let ppa = g.ppa(b, page);
        match io.read_oob(ppa, Purpose::Recovery) {
            Ok(Some(oob)) => {
                readable += 1;
                newest = newest.max(oob.seq);
                pages.push((ppa, oob));
            }
            Ok(None) | Err(NandError::Uncorrectable(_)) => {}
            Err(e) => return Err(FtlError::Recovery(format!("scanning {ppa:?}: {e}"))),
        }
    }
    if readable == 0 {
        return Ok(if io.reclaim(b, Purpose::Recovery)? { Found::Free } else { Found::Retired });
    }
    // A block gone bad is never reopened: closed, it is collected and retired.
    Ok(if grown_bad {
        Found::Full
    } else if programmed < g.pages_per_block {
        Found::Partial(newest, programmed)
    } else {
        Found::Full
    })
}

impl DemandMap {
    /// Rebuilds both pools from the medium (see the module documentation).
    pub fn recover(
        io: &mut Io,
        cmt_entries: u32,
        lambda_t: u32,
        logical: impl Fn(u32) -> u64,
    ) -> Result<Self, FtlError> {
        let mut m = Self::empty(io, cmt_entries, lambda_t, logical)?;
        let g = m.geometry;
        let blocks: Vec<BlockId> = (0..g.total_blocks()).map(BlockId).filter(|&b| !io.is_bad(b)).collect();
        let mut pages = Vec::new();
        let mut closed = Vec::new();
        let mut data_open: Vec<Option<(u64, BlockId, u32)>> = vec![None; g.dies() as usize];
        let mut t_open: Option<(u64, BlockId, u32)> = None;
        // Newest version of each translation page.
        let mut tseq = vec![0u64; m.tpages as usize];
        // Newest data copy of each logical page older / newer than its translation page.
        let mut older = vec![0u64; m.logical_pages as usize];
        let mut newer: Vec<(u64, u32)> = vec![(0, 0); m.logical_pages as usize];
        for pass_translation in [true, false] {
            let pool: Vec<BlockId> =
                blocks.iter().copied().filter(|b| m.translation[b.0 as usize] == pass_translation).collect();
            for b in pool {
                let open = if pass_translation { &mut t_open } else { &mut data_open[g.die_of_block(b).0 as usize] };
                match scan(io, b, &mut pages)? {
                    Found::Free => m.release(b),
                    Found::Retired => {}
                    Found::Full => closed.push(b),
                    Found::Partial(seq, next) => match *open {
                        Some((s, _, _)) if s > seq => closed.push(b),
                        prev => {
                            if let Some((_, other, _)) = prev {
                                closed.push(other);
                            }
                            *open = Some((seq, b, next));
                        }
                    },
                }
                for &(ppa, oob) in &pages {
                    let l = oob.lpn as usize;
                    if pass_translation && oob.kind == PageKind::Map && l < tseq.len() && oob.seq > tseq[l] {
                        tseq[l] = oob.seq;
                        m.gtd[l] = ppa.0;
                    } else if !pass_translation && oob.kind == PageKind::Data && l < older.len() {
                        let t = l / m.entries_per_tpage as usize;
                        if oob.seq < tseq[t] {
                            if oob.seq > older[l] {
                                older[l] = oob.seq;
                                m.on_flash.set(l, ppa);
                            }
                        } else if oob.seq > newer[l].0 {
                            newer[l] = (oob.seq, ppa.0);
                        }
                    }
                }
                pages.clear();
            }
        }
        for (lpn, &(seq, ppa)) in newer.iter().enumerate() {
            if seq > 0 {
                m.cmt.set_dirty(lpn as u32, Some(Ppa(ppa)));
            }
        }
        for lpn in 0..m.logical_pages {
            if let Some(ppa) = m.current(lpn) {
                m.mark_valid(ppa);
            }
        }
        for t in 0..m.tpages as usize {
            if m.gtd[t] != super::core::NONE {
                m.mark_valid(Ppa(m.gtd[t]));
            }
        }
        for b in closed {
            if m.translation[b.0 as usize] {
                m.tpicker.insert(b);
            } else {
                m.data_picker.insert(b);
            }
        }
        let ppb = u64::from(g.pages_per_block);
        for (_, b, next) in data_open.into_iter().flatten() {
            m.data_alloc.reopen(0, b, next);
            m.data_free_pages += ppb - u64::from(next);
        }
        if let Some((_, b, next)) = t_open {
            m.t_alloc.reopen(0, b, next);
            m.t_free_pages += ppb - u64::from(next);
            m.t_die = g.die_of_block(b);
        } else {
            m.t_die = m.fullest_translation_die();
        }
        Ok(m)
    }
}
