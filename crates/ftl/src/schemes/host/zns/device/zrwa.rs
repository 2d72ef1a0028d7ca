//! The Zone Random Write Areas of [`ZnsDevice`]: their pages in the
//! device's RAM, the commits that program them into their zones, and the
//! journal that makes them durable at a flush (see the module documentation
//! of [`super`], "Zone Random Write Area").
//!
//! The journal is two regions, each laid out as a zone (the last two of the
//! layout), written in order. An entry is a ZRWA page (kind data, tag
//! [`ENTRY`], naming its logical page); a drop record (kind meta, tag
//! [`DROP`], naming the zone) says that the zone's entries before it are
//! dead (its ZRWA was discarded by a reset or an offline); a snapshot
//! marker (kind meta, tag [`SNAPSHOT`]) closes a compaction. When the
//! active region is full, the other is erased and every ZRWA page in RAM
//! written to it, then the marker: the region with the newest marker (or
//! the first, if neither has one) is the active one, and the other holds
//! nothing the active one lacks, so erasing it loses nothing. Recovery
//! reads both: for each logical page the newest entry after its zone's last
//! drop record, kept if it is at or past its zone's recovered write pointer.

use std::collections::BTreeMap;

use ftlab_nand::{NandError, PageKind, Payload, SimTime, StoreKind};

use super::ZnsDevice;
use crate::{FtlError, Io, Purpose, ZoneState};

/// The OOB tag of a journal entry (a ZRWA page).
const ENTRY: u8 = 1;
/// The OOB tag of a drop record.
const DROP: u8 = 2;
/// The OOB tag of a compaction's closing marker.
const SNAPSHOT: u8 = 3;

/// A page in a ZRWA: its data, and whether the journal holds it.
#[derive(Debug, Clone)]
pub(super) struct Buffered {
    pub(super) data: Payload,
    pub(super) journaled: bool,
}

/// The ZRWA pages of every zone (offset in the zone to page) and the
/// journal's place.
#[derive(Debug, Clone)]
pub(super) struct ZrwaStore {
    pub(super) pages: Vec<BTreeMap<u32, Buffered>>,
    /// The layout zones of the two journal regions.
    regions: [u32; 2],
    /// The region appended to.
    active: usize,
    /// Its next page.
    next: u32,
    /// Pages a region holds.
    region_pages: u32,
    /// Zones the journal may hold entries of since their last drop record.
    journaled: Vec<bool>,
    /// When the last journal program finished: a compaction's erase starts
    /// after it, and a flush completes no earlier.
    done: SimTime,
}

impl ZrwaStore {
    pub(super) fn new(zones: u32, regions: [u32; 2], region_pages: u32) -> Self {
        ZrwaStore {
            pages: vec![BTreeMap::new(); zones as usize],
            regions,
            active: 0,
            next: 0,
            region_pages,
            journaled: vec![false; zones as usize],
            done: SimTime::ZERO,
        }
    }

    /// The layout zones of the journal regions.
    pub(super) fn regions(&self) -> [u32; 2] {
        self.regions
    }

    /// ZRWA pages in RAM, and those not yet in the journal.
    pub(super) fn counts(&self) -> (usize, usize) {
        let all = self.pages.iter().map(BTreeMap::len).sum();
        let dirty = self.pages.iter().flat_map(|p| p.values()).filter(|b| !b.journaled).count();
        (all, dirty)
    }
}

/// A page of zeros as the medium stores it (a hole committed from a ZRWA,
/// a marker).
pub(super) fn zero_page(io: &Io) -> Payload {
    match io.store_kind() {
        StoreKind::Bytes => Payload::Bytes(vec![0; io.geometry().page_size as usize].into()),
        _ => Payload::Token(0),
    }
}

impl ZnsDevice {
    /// Puts `data` at page `i` of zone `z`'s ZRWA (in RAM, no flash
    /// operation).
    pub(super) fn zrwa_put(&mut self, z: u32, i: u32, data: Payload) {
        if let Some(store) = self.zrwa.as_mut() {
            store.pages[z as usize].insert(i, Buffered { data, journaled: false });
        }
    }

    /// Page `i` of zone `z`'s ZRWA, if it holds one.
    pub(super) fn zrwa_get(&self, z: u32, i: u32) -> Option<Payload> {
        self.zrwa.as_ref()?.pages[z as usize].get(&i).map(|b| b.data.clone())
    }

    /// The highest page of zone `z`'s ZRWA written, plus one (0: none).
    pub(super) fn zrwa_end(&self, z: u32) -> u32 {
        self.zrwa.as_ref().and_then(|s| s.pages[z as usize].keys().next_back().map(|&i| i + 1)).unwrap_or(0)
    }

    /// Commits zone `z`'s ZRWA below page `to` of the zone: programs each
    /// page from the write pointer at its place (a page never written in
    /// the ZRWA as zeros), each a host program on the zone's dies, and moves
    /// the write pointer on. A failed program leaves the zone read-only with
    /// the pages not committed still readable from the ZRWA.
    pub(super) fn commit(&mut self, io: &mut Io, z: u32, to: u32) -> Result<(), FtlError> {
        let start = z * self.layout.zone_size();
        for i in self.zones.written(z)..to {
            let data = self.zrwa.as_mut().and_then(|s| s.pages[z as usize].remove(&i));
            let payload = data.as_ref().map_or_else(|| zero_page(io), |b| b.data.clone());
            if let Err(e) = self.program(io, z, i, PageKind::Data, payload, start + i) {
                if let (Some(b), Some(s)) = (data, self.zrwa.as_mut()) {
                    s.pages[z as usize].insert(i, b);
                }
                return Err(e);
            }
            self.zones.committed(z, 1);
        }
        Ok(())
    }

    /// Discards zone `z`'s ZRWA: its pages leave RAM and, if the journal may
    /// hold any, a drop record makes them dead there before anything else of
    /// the command (a reset's erases) starts.
    pub(super) fn zrwa_discard(&mut self, io: &mut Io, z: u32) -> Result<(), FtlError> {
        let Some(store) = self.zrwa.as_mut() else { return Ok(()) };
        store.pages[z as usize].clear();
        if !store.journaled[z as usize] {
            return Ok(());
        }
        self.journal_room(io, 1)?;
        let zero = zero_page(io);
        self.journal_program(io, z, PageKind::Meta, DROP, zero)?;
        if let Some(store) = self.zrwa.as_mut() {
            store.journaled[z as usize] = false;
        }
        io.start_after(io.last_finish());
        Ok(())
    }

    /// Writes every ZRWA page not yet in the journal to it: after this (once
    /// `io`'s operations finished) every page written to a ZRWA survives a
    /// power cut. Completes no earlier than every commit issued before.
    pub(super) fn zrwa_flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some(store) = self.zrwa.as_ref() else { return Ok(()) };
        let (_, dirty) = store.counts();
        let last_commit = self.acked.iter().copied().max().unwrap_or(SimTime::ZERO);
        io.complete_after(last_commit.max(store.done));
        if dirty > 0 {
            if self.journal_room(io, dirty as u32)? {
                // The compaction wrote every page.
            } else {
                let zones = self.zones.len();
                for z in 0..zones {
                    let dirty: Vec<(u32, Payload)> = self.zrwa.as_ref().map_or_else(Vec::new, |s| {
                        s.pages[z as usize]
                            .iter()
                            .filter(|(_, b)| !b.journaled)
                            .map(|(&i, b)| (i, b.data.clone()))
                            .collect()
                    });
                    for (i, data) in dirty {
                        let lpn = z * self.layout.zone_size() + i;
                        self.journal_program(io, lpn, PageKind::Data, ENTRY, data)?;
                        if let Some(s) = self.zrwa.as_mut() {
                            s.journaled[z as usize] = true;
                            if let Some(b) = s.pages[z as usize].get_mut(&i) {
                                b.journaled = true;
                            }
                        }
                    }
                }
            }
        }
        io.complete_after(io.last_finish());
        io.ack();
        Ok(())
    }

    /// Makes room for `pages` more pages in the active region: if it lacks
    /// them, compacts (which journals every ZRWA page). Returns whether it
    /// compacted.
    fn journal_room(&mut self, io: &mut Io, pages: u32) -> Result<bool, FtlError> {
        let Some(store) = self.zrwa.as_ref() else { return Ok(false) };
        if store.next + pages <= store.region_pages {
            return Ok(false);
        }
        self.compact(io)?;
        Ok(true)
    }

    /// Erases the region not in use and writes every ZRWA page to it, then
    /// the marker that makes it the active one.
    fn compact(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some(store) = self.zrwa.as_mut() else { return Ok(()) };
        let target = 1 - store.active;
        let region = store.regions[target];
        io.start_after(store.done);
        let ok = self.as_purpose(Purpose::Checkpoint, |d| d.erase_zone(io, region))?;
        if !ok {
            return Err(FtlError::Nand(NandError::EraseFailed { block: self.layout.blocks(region)[0] }));
        }
        io.start_after(io.last_finish());
        let Some(store) = self.zrwa.as_mut() else { return Ok(()) };
        store.active = target;
        store.next = 0;
        let size = self.layout.zone_size();
        let all: Vec<(u32, u32, Payload)> = store
            .pages
            .iter()
            .enumerate()
            .flat_map(|(z, p)| p.iter().map(move |(&i, b)| (z as u32, i, b.data.clone())))
            .collect();
        for (z, i, data) in all {
            self.journal_program(io, z * size + i, PageKind::Data, ENTRY, data)?;
            if let Some(s) = self.zrwa.as_mut() {
                s.journaled[z as usize] = true;
                if let Some(b) = s.pages[z as usize].get_mut(&i) {
                    b.journaled = true;
                }
            }
        }
        let zero = zero_page(io);
        self.journal_program(io, 0, PageKind::Meta, SNAPSHOT, zero)
    }

    /// Programs the next page of the active region.
    fn journal_program(
        &mut self,
        io: &mut Io,
        lpn: u32,
        kind: PageKind,
        tag: u8,
        data: Payload,
    ) -> Result<(), FtlError> {
        let Some(store) = self.zrwa.as_mut() else { return Ok(()) };
        let ppa = self.layout.page(store.regions[store.active], store.next);
        store.next += 1;
        let r = io.program_tagged(ppa, lpn, kind, tag, data, Purpose::Checkpoint);
        store.done = store.done.max(io.last_finish());
        r.map(drop).map_err(FtlError::from)
    }

    /// Rebuilds the ZRWAs from the journal after the zones were recovered:
    /// each zone with live entries at or past its write pointer gets its ZRWA
    /// back (closed if it was empty or closed; a zone a torn commit left full
    /// keeps them readable past its write pointer until it is reset).
    pub(super) fn recover_zrwa(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let Some(store) = self.zrwa.as_ref() else { return Ok(()) };
        let (regions, region_pages) = (store.regions, store.region_pages);
        let size = self.layout.zone_size();
        let zones = self.zones.len();
        // Newest entry per logical page, newest drop per zone, newest marker
        // per region; pages programmed per region.
        let mut entries: BTreeMap<u32, (u64, ftlab_nand::Ppa)> = BTreeMap::new();
        let mut drops = vec![0u64; zones as usize];
        let mut newest = vec![0u64; zones as usize];
        let mut markers = [0u64; 2];
        let mut programmed = [0u32; 2];
        for (r, &rz) in regions.iter().enumerate() {
            programmed[r] = self.layout.blocks(rz).iter().map(|&b| io.programmed_pages(b)).sum();
            for i in 0..region_pages.min(programmed[r]) {
                let ppa = self.layout.page(rz, i);
                let oob = match io.read_oob(ppa, Purpose::Recovery) {
                    Ok(Some(oob)) => oob,
                    Ok(None) | Err(NandError::Uncorrectable(_)) => continue,
                    Err(e) => return Err(FtlError::Recovery(format!("ZRWA journal, page {i}: {e}"))),
                };
                match (oob.kind, oob.tag) {
                    (PageKind::Data, ENTRY) if oob.lpn / size < zones => {
                        let z = (oob.lpn / size) as usize;
                        newest[z] = newest[z].max(oob.seq);
                        let e = entries.entry(oob.lpn).or_insert((0, ppa));
                        if oob.seq >= e.0 {
                            *e = (oob.seq, ppa);
                        }
                    }
                    (PageKind::Meta, DROP) if oob.lpn < zones => {
                        drops[oob.lpn as usize] = drops[oob.lpn as usize].max(oob.seq);
                    }
                    (PageKind::Meta, SNAPSHOT) => markers[r] = markers[r].max(oob.seq),
                    _ => {}
                }
            }
        }
        let active = usize::from(markers[1] > markers[0]);
        for (lpn, (seq, ppa)) in entries {
            let (z, i) = (lpn / size, lpn % size);
            let state = self.zones.state(z);
            if seq < drops[z as usize]
                || i < self.zones.written(z)
                || i >= self.capacity
                || matches!(state, ZoneState::Offline)
            {
                continue;
            }
            let data = match io.read(ppa, Purpose::Recovery) {
                Ok((data, _)) => data,
                Err(NandError::Uncorrectable(_)) => continue,
                Err(e) => return Err(FtlError::Recovery(format!("ZRWA journal, page of {lpn}: {e}"))),
            };
            if matches!(state, ZoneState::Empty) {
                self.zones.restore(z, ZoneState::Closed, 0);
            }
            self.zones.restore_zrwa(z);
            if let Some(s) = self.zrwa.as_mut() {
                s.pages[z as usize].insert(i, Buffered { data, journaled: true });
            }
        }
        if let Some(s) = self.zrwa.as_mut() {
            s.active = active;
            s.next = programmed[active];
            // A zone with entries after its last drop record (live or below
            // its write pointer) needs one at its next reset.
            for z in 0..zones as usize {
                s.journaled[z] = newest[z] > drops[z];
            }
        }
        Ok(())
    }
}
