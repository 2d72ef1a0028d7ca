//! Rebuilding the Nameless-Write device after a power cut, and the replay of
//! the migrations the host may not have recorded (003 Section 3.4, the crash
//! race; see the module documentation of [`super`]).

use std::collections::HashMap;

use ftlab_nand::{BlockId, Ppa};

use super::{Migration, NamelessConfig, NamelessDevice, DATA, MOVED, VIRTUAL};
use crate::{Flash, FtlError, Io};

impl NamelessDevice {
    /// Rebuilds the device from the medium: every OOB is read; for each
    /// metadata address and each tag the copy with the newest sequence number
    /// is live. Then one up-call per live data page is queued, with no old
    /// address (a replay): the migrations the host may not have recorded,
    /// and the pages it needs to check its metadata against.
    pub fn recover(config: NamelessConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut d = Self::empty(config, io)?;
        let vp = d.virtual_pages as usize;
        let mut vnewest = vec![0u64; vp];
        // Per tag: the newest copy's sequence number, page and whether it is a
        // moved copy. Transient: recovery's scan of the tags the host holds.
        let mut tags: HashMap<u32, (u64, Ppa, bool)> = HashMap::new();
        let vmap = &mut d.vmap;
        let scan = crate::scan::scan_each(io, |ppa, oob| {
            match oob.kind {
                VIRTUAL => {
                    let l = oob.lpn as usize;
                    if l < vp && oob.seq > vnewest[l] {
                        vnewest[l] = oob.seq;
                        vmap.set(l, ppa);
                    }
                }
                DATA | MOVED => {
                    let e = tags.entry(oob.lpn).or_insert((0, ppa, false));
                    if oob.seq > e.0 {
                        *e = (oob.seq, ppa, oob.kind == MOVED);
                    }
                }
                _ => {}
            }
            Ok(())
        })?;
        let metas: Vec<Ppa> = d.vmap.iter().map(|(_, p)| p).collect();
        for ppa in metas {
            d.live(ppa, true);
        }
        let mut data: Vec<(Ppa, u32, bool)> =
            tags.into_iter().map(|(tag, (_, ppa, moved))| (ppa, tag, moved)).collect();
        data.sort_unstable();
        for (ppa, tag, moved) in data {
            d.live(ppa, false);
            d.data_live += 1;
            let new = d.addr(io, ppa);
            d.queue.push(Migration { old: None, new, tag, moved });
        }
        for b in scan.free {
            d.alloc.release(b);
        }
        for b in scan.closed {
            d.picker.insert(b);
        }
        for (b, next) in scan.open {
            d.alloc.reopen(0, b, next);
        }
        Ok(d)
    }
}

/// The device's invariants against the medium: per block, the valid count is
/// the number of live pages; every live page is programmed, with the OOB kind
/// its role says; the metadata map points at live metadata pages; the live
/// data pages are counted; every redirect leads to a live data page with its
/// tag.
pub(super) fn check(d: &NamelessDevice, flash: &Flash) -> Result<(), String> {
    let g = &d.geometry;
    let nand = flash.nand();
    let mut data = 0u64;
    for b in (0..g.total_blocks()).map(BlockId) {
        let first = g.ppa(b, 0);
        let live = d.valid.count(first, g.pages_per_block);
        if live != d.picker.valid(b) {
            return Err(format!("block {b:?}: {live} live pages, the picker counts {}", d.picker.valid(b)));
        }
        for ppa in d.valid.iter_set(first, g.pages_per_block) {
            let Some(oob) = nand.peek_oob(ppa) else {
                return Err(format!("live page {ppa:?} is not programmed"));
            };
            let meta = d.meta.get(ppa);
            if meta != (oob.kind == VIRTUAL) || (!meta && !matches!(oob.kind, DATA | MOVED)) {
                return Err(format!("live page {ppa:?}: metadata bit {meta}, OOB kind {:?}", oob.kind));
            }
            if !meta {
                data += 1;
            }
        }
    }
    if data != d.data_live {
        return Err(format!("{data} live data pages, the device counts {}", d.data_live));
    }
    for (l, ppa) in d.vmap.iter() {
        if !d.valid.get(ppa) || !d.meta.get(ppa) || nand.peek_oob(ppa).map(|o| o.lpn) != Some(l as u32) {
            return Err(format!("metadata address {l} maps to {ppa:?}, not a live page of it"));
        }
    }
    for (old, &(new, tag)) in &d.redirect {
        let ppa = new.ppa();
        if !d.valid.get(ppa) || d.meta.get(ppa) || nand.peek_oob(ppa).map(|o| o.lpn) != Some(tag) {
            return Err(format!("the redirect of {old} leads to {new}, not a live data page of tag {tag}"));
        }
    }
    Ok(())
}
