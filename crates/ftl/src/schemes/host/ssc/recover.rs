//! Rebuilding the SSC from the medium after a power cut (per-write OOB logging,
//! 003 Section 3.3.2): every programmed page's OOB is read; for each disk block
//! the newest data page wins, unless a record newer than it says the block was
//! evicted (or that page is clean). Also the invariants checked against the
//! medium.

use std::collections::BTreeMap;

use ftlab_nand::{BlockId, PageKind, Ppa};

use super::core::{Ssc, CLEAN_BIT, KEY_MASK, REC_BIT};
use super::table::{flag, NONE};
use super::SscConfig;
use crate::{Flash, FtlError, Io};

impl Ssc {
    /// Rebuilds an SSC from the medium. Blocks whose erase was torn are erased
    /// again; on each die the partly written block with the newest page is
    /// reopened, other partly written blocks are closed. A block that went bad
    /// in service is never freed nor reopened: its readable pages count, and it
    /// is closed so that garbage collection moves its live pages off.
    /// With `consistency = "log"` the map comes from the latest checkpoint
    /// and the log after it instead (see `ssc/log.rs`).
    pub fn recover(config: SscConfig, io: &mut Io) -> Result<Self, FtlError> {
        if config.consistency == super::Consistency::Log {
            return Ssc::recover_log(config, io);
        }
        let mut s = Ssc::empty(config, io)?;
        let slots = s.table.slots();
        let mut data_seq = vec![0u64; slots];
        let mut rec_seq = vec![0u64; slots];
        let table = &mut s.table;
        let owner = &mut s.owner;
        let scan = crate::scan::scan_each(io, |ppa, oob| {
            let record = match oob.kind {
                PageKind::Data => false,
                PageKind::Meta => true,
                _ => return Ok(()),
            };
            let k = oob.lpn & KEY_MASK;
            let clean = oob.lpn & CLEAN_BIT != 0;
            let i = table.find_or_insert(k).ok_or_else(|| {
                FtlError::Recovery(format!("more disk blocks on the flash than the block table holds at {ppa:?}"))
            })?;
            let e = table.get_mut(i);
            if record {
                owner[ppa.0 as usize] = k | REC_BIT;
                if oob.seq > rec_seq[i] {
                    rec_seq[i] = oob.seq;
                    e.rec = ppa.0;
                    e.set(flag::REC_CLEAN, clean);
                }
            } else {
                owner[ppa.0 as usize] = k;
                e.copies += 1;
                if oob.seq > data_seq[i] {
                    data_seq[i] = oob.seq;
                    e.newest = ppa.0;
                    e.set(flag::FLASH_CLEAN, clean);
                }
            }
            Ok(())
        })?;
        for &b in &scan.free {
            s.alloc.release(b);
        }
        // Decide each block's state; records older than the newest data page,
        // and records of blocks with no data page left, say nothing.
        let mut gone = Vec::new();
        for i in 0..slots {
            let Some(e) = s.table.occupied_mut(i) else {
                continue;
            };
            if e.copies == 0 {
                gone.push(e.key);
                continue;
            }
            let applies = e.rec != NONE && rec_seq[i] > data_seq[i];
            if !applies {
                e.rec = NONE;
                e.set(flag::REC_CLEAN, false);
            }
            if applies && !e.has(flag::REC_CLEAN) {
                e.mapped = NONE;
                e.newest = NONE;
            } else {
                e.mapped = e.newest;
                let dirty = !applies && !e.has(flag::FLASH_CLEAN);
                e.set(flag::DIRTY, dirty);
            }
        }
        for k in gone {
            if let Some(i) = s.table.find(k) {
                s.table.remove(i);
            }
        }
        let live: Vec<(u32, bool, bool, u32)> =
            s.table.iter().map(|e| (e.mapped, e.must_copy(), e.has(flag::DIRTY), e.rec)).collect();
        for (mapped, must_copy, dirty, rec) in live {
            if mapped != NONE {
                s.count_live(mapped, must_copy);
                s.cached += 1;
                if dirty {
                    s.dirty += 1;
                }
            }
            if rec != NONE {
                s.count_live(rec, true);
            }
        }
        for b in scan.closed {
            s.by_valid.insert(b);
            s.by_dirty.insert(b);
        }
        for (b, next) in scan.open {
            s.alloc.reopen(0, b, next);
        }
        Ok(s)
    }

    fn count_live(&mut self, ppa: u32, must_copy: bool) {
        let b = self.layout.block_of(Ppa(ppa));
        self.by_valid.inc(b);
        if must_copy {
            self.by_dirty.inc(b);
        }
    }
}

impl Ssc {
    /// The SSC's invariants against the medium ([`check`]), for
    /// [`crate::Ftl::check_invariants`].
    pub(super) fn check_against(&self, flash: &Flash) -> Result<(), String> {
        check(self, flash)
    }
}

/// The SSC's invariants against the medium: every cached block's page and every
/// live record hold what the table says, the per-block counts and copies match,
/// and the totals match. In log mode a data page's OOB holds no disk block
/// (logical page 0) and no data page lies in a metadata block.
fn check(s: &Ssc, flash: &Flash) -> Result<(), String> {
    let g = &s.geometry;
    let nand = flash.nand();
    let mut valid = vec![0u32; g.total_blocks() as usize];
    let mut must_copy = vec![0u32; g.total_blocks() as usize];
    let mut copies: BTreeMap<u32, u32> = BTreeMap::new();
    let log = s.log.as_ref();
    for (p, &o) in s.owner.iter().enumerate() {
        if o == NONE {
            continue;
        }
        let oob = nand.peek_oob(Ppa(p as u32)).ok_or_else(|| format!("page {p} has owner {o:#x} but no OOB"))?;
        let want_kind = if o & REC_BIT != 0 { PageKind::Meta } else { PageKind::Data };
        let want_lpn = if log.is_some() { 0 } else { o & KEY_MASK };
        if oob.kind != want_kind || oob.lpn & KEY_MASK != want_lpn {
            return Err(format!("page {p} has owner {o:#x} but its OOB is {oob:?}"));
        }
        if log.is_some_and(|l| l.is_meta(g.block_of(Ppa(p as u32)))) {
            return Err(format!("data page {p} (owner {o:#x}) lies in a metadata block"));
        }
        if o & REC_BIT == 0 {
            *copies.entry(o).or_default() += 1;
        }
    }
    let (mut cached, mut dirty) = (0u64, 0u64);
    for e in s.table.iter() {
        let k = e.key;
        if copies.get(&k).copied().unwrap_or(0) != e.copies || e.copies == 0 {
            return Err(format!(
                "block {k}: {} copies on the flash, the table says {}",
                copies.get(&k).unwrap_or(&0),
                e.copies
            ));
        }
        if e.mapped != NONE {
            let oob = nand.peek_oob(Ppa(e.mapped)).ok_or_else(|| format!("block {k} maps to an erased page"))?;
            let is_dirty = e.has(flag::DIRTY);
            let flash_clean = oob.lpn & CLEAN_BIT != 0;
            let oob_agrees = log.is_some() || (flash_clean == e.has(flag::FLASH_CLEAN) && !(is_dirty && flash_clean));
            if s.owner[e.mapped as usize] != k || !oob_agrees {
                return Err(format!("block {k} maps to page {} whose OOB is {oob:?} (flags {:#x})", e.mapped, e.flags));
            }
            if e.newest != e.mapped {
                return Err(format!("block {k}: newest page {} is not its cached page {}", e.newest, e.mapped));
            }
            let b = g.block_of(Ppa(e.mapped)).0 as usize;
            valid[b] += 1;
            cached += 1;
            if e.must_copy() {
                must_copy[b] += 1;
            }
            if is_dirty {
                dirty += 1;
            }
        }
        if e.rec != NONE {
            if s.owner[e.rec as usize] != k | REC_BIT {
                return Err(format!("block {k}: its record page {} is owned by {:#x}", e.rec, s.owner[e.rec as usize]));
            }
            let b = g.block_of(Ppa(e.rec)).0 as usize;
            valid[b] += 1;
            must_copy[b] += 1;
        }
        if log.is_none() && e.mapped == NONE && e.newest == NONE && !e.covered() && e.copies > 0 {
            return Err(format!("block {k}: evicted, {} copies on the flash, no newest page and no record", e.copies));
        }
    }
    for b in (0..g.total_blocks()).map(BlockId) {
        let i = b.0 as usize;
        if s.by_valid.valid(b) != valid[i] || s.by_dirty.valid(b) != must_copy[i] {
            return Err(format!(
                "block {i}: {} live and {} to copy, the pickers say {} and {}",
                valid[i],
                must_copy[i],
                s.by_valid.valid(b),
                s.by_dirty.valid(b)
            ));
        }
    }
    if cached != s.cached || dirty != s.dirty {
        return Err(format!("{cached} cached and {dirty} dirty blocks, the counters say {} and {}", s.cached, s.dirty));
    }
    Ok(())
}
