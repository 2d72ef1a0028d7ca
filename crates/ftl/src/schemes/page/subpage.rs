//! Sub-page mapping: a page-level map of logical units smaller than the flash
//! page, written through a merge buffer — the "optimized" FTL of the OpenSSD
//! Jasmine board (003_9b28d6a0046a8156.txt Sections 2-3.1: 32 KB virtual pages,
//! a 4 KB mapping unit, and a merge buffer in controller RAM that collects 4 KB
//! writes into full virtual pages), against the board's baseline whose 4 KB
//! write is a read-modify-write of the whole 32 KB page (`pagemap` on the same
//! chip).
//!
//! - **Units.** The logical page of this FTL is `unit_bytes` (config
//!   `ftl.unit_bytes`, default 4096; it must divide the flash page, and the k =
//!   page_size / unit_bytes slot records must fit the page's OOB, see
//!   [`ftlab_nand::medium::packed`]). [`Ftl::unit_bytes`] tells the host side,
//!   so a 4 KB write to it needs no read-modify-write.
//! - **Merge buffer.** Writes are acknowledged once they are in the open page
//!   in controller RAM (k units); a full open page is programmed as one packed
//!   page ([`Io::program_packed`]), full pages striped round-robin over the dies
//!   (skipping busy ones when an idle one exists). A rewrite of a unit still in
//!   the open page replaces it there.
//! - **Durability** is [`Durability::OnFlush`]: a power cut loses the open
//!   page. [`Ftl::flush`] programs the partly filled open page (the rest of the
//!   page padded) and completes once every page programmed before it has
//!   finished.
//! - **Garbage collection** is greedy: before a page is programmed, while at
//!   most `gc_free_blocks` blocks are free, the closed block with the fewest
//!   valid units is collected. Each of its pages' records is read (an OOB read);
//!   a page with valid units is read once and its valid units are repacked, k to
//!   a page, into new pages on the victim's die (a last partial page is padded
//!   before the victim is erased, so no valid unit is ever only in RAM).
//! - **Trim** drops the unit's mapping (and its copy in the open page).
//! - **Recovery** scans every page's slot records ([`crate::scan::scan_each_slots`]):
//!   for each unit the record with the newest sequence number wins, and among
//!   the slots of one page the later slot.
//! - **RAM**: one 4-byte map entry per logical unit, the open page (k units
//!   and their numbers), the victim picker's per-block counts and the
//!   allocator.
//!
//! Physical units are numbered `ppa * k + slot`; the map holds `u32::MAX` for
//! a unit that is not mapped.
//!
//! # Request-queue packing: the Nameless-Write prototype's data path
//!
//! With `packing = "request-queue"` (the FTL kind `nameless-split`) there is
//! no merge buffer. This is how the host-side FTL of 003's Nameless-Write
//! prototype places data (Section 3.4, the split FTL): "for each write request
//! queue, the FTL finds a new flash virtual page and assigns physical
//! addresses in the virtual page to the I/Os in the request queue in a
//! sequential order", and it never shares a virtual page between two request
//! queues. Here a request queue is one host request: its units (the
//! [`Hint::more`] chain) are packed k to a page, each page a fresh one, a last
//! partial page padded, and the request completes when its pages are
//! programmed ([`Durability::OnAck`]). Garbage collection is the same
//! (read into RAM, repacked into new pages, no copyback), as the prototype's
//! ("it reads the valid pages into host DRAM, erases the block, and then
//! writes the data to a new physical block"). The map is the file system's
//! record of the physical addresses, kept up to date by the migration
//! up-calls that in the prototype are function calls; what the device-side
//! design adds (addresses returned to the host, migration records in the OOB)
//! is [`crate::schemes::host::nameless`].

use serde::{Deserialize, Serialize};

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, NandError, PageKind, Payload, Ppa, SimTime, StoreKind};

use crate::alloc::BlockAllocator;
use crate::victim::{GreedyPicker, VictimPicker};
use crate::{check_lpn, Durability, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};

/// A unit not mapped.
const NONE: u32 = u32::MAX;

/// Configuration of [`SubPage`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SubPageConfig {
    /// Bytes of the mapping unit, the FTL's logical page: must divide the
    /// flash page. Default 4096 (003's 4 KB unit).
    pub unit_bytes: u32,
    /// Fraction of the good physical units hidden from the host, in [0, 1).
    /// Default 0.10.
    pub over_provisioning: f64,
    /// Garbage collection runs before a page is programmed while the free
    /// blocks are at most this many (at least 1). Default 2.
    pub gc_free_blocks: u32,
    /// How host units are packed into pages. Default `merge-buffer`.
    pub packing: Packing,
}

/// How [`SubPage`] packs host units into flash pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Packing {
    /// A one-page merge buffer in controller RAM: units are acknowledged in
    /// RAM and a full page is programmed (Jasmine's optimized FTL).
    #[default]
    MergeBuffer,
    /// Each host request's units in fresh pages of their own, acknowledged
    /// once programmed (the Nameless-Write prototype's host FTL; see the
    /// [module documentation](self)).
    RequestQueue,
}

impl Default for SubPageConfig {
    fn default() -> Self {
        SubPageConfig { unit_bytes: 4096, over_provisioning: 0.10, gc_free_blocks: 2, packing: Packing::MergeBuffer }
    }
}

impl SubPageConfig {
    /// Checks the fields that need no device; errors name the key.
    pub fn validate(&self) -> Result<(), FtlError> {
        if self.unit_bytes == 0 {
            return Err(FtlError::config(
                "ftl.unit_bytes",
                "subpage.unit_bytes = 0: give the mapping unit in bytes, a divisor of the flash page size (e.g. 4096)",
            ));
        }
        crate::config::over_provisioning("subpage", self.over_provisioning)?;
        crate::config::gc_free_blocks("subpage", self.gc_free_blocks, crate::config::GC_NEEDS_A_FREE_BLOCK)?;
        Ok(())
    }

    /// Write streams: one, or with request-queue packing two (host pages and
    /// garbage collection's repacked pages in blocks of their own).
    pub fn streams(&self) -> u32 {
        match self.packing {
            Packing::MergeBuffer => 1,
            Packing::RequestQueue => 2,
        }
    }

    /// Slots per flash page on `io`'s medium: `unit_bytes` must divide the page
    /// and the slot records fit the OOB.
    pub fn slots(&self, io: &Io) -> Result<u32, FtlError> {
        let page = io.geometry().page_size;
        let k = io.slots_per_page(self.unit_bytes).map_err(|e| {
            let fix = match e {
                NandError::SlotSize { .. } => format!("use a divisor of the flash page size {page}"),
                _ => "use a larger unit (fewer slots per page)".to_owned(),
            };
            FtlError::config("ftl.unit_bytes", format!("subpage.unit_bytes = {}: {e}; {fix}", self.unit_bytes))
        })?;
        let units = u64::from(io.geometry().total_pages()) * u64::from(k);
        if units >= u64::from(NONE) {
            return Err(FtlError::config(
                "ftl.unit_bytes",
                format!(
                    "subpage.unit_bytes = {}: the device has {units} units, more than the 2^32 - 1 a map entry \
                     addresses; use a larger unit or a smaller device",
                    self.unit_bytes
                ),
            ));
        }
        Ok(k)
    }

    /// Logical units exported with `good_blocks` usable blocks of `k` units a
    /// page: the over-provisioned share hidden, and at most what leaves
    /// `gc_free_blocks` free, one open block per die and one more block (so the
    /// closed blocks always hold a block's worth of reclaimable units).
    pub fn logical_units(&self, geometry: &Geometry, good_blocks: u32, k: u32) -> Result<u32, FtlError> {
        let per_block = u64::from(geometry.pages_per_block) * u64::from(k);
        let open = u64::from(geometry.dies()) * u64::from(self.streams());
        let slack = u64::from(self.gc_free_blocks) + open + 1;
        let max = u64::from(good_blocks).saturating_sub(slack) * per_block;
        let wanted = ((u64::from(good_blocks) * per_block) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        let logical = wanted.min(max).min(u64::from(u32::MAX - 1));
        if logical == 0 {
            return Err(FtlError::config(
                "device",
                format!(
                    "the device is too small for subpage: {good_blocks} good blocks, {slack} needed as GC reserve \
                     and open blocks"
                ),
            ));
        }
        Ok(logical as u32)
    }
}

impl FtlBuilder for SubPageConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        let mut ftl = SubPage::empty(*self, io)?;
        let g = ftl.geometry;
        for b in (0..g.total_blocks()).map(BlockId) {
            if !io.is_bad(b) {
                ftl.alloc.release(b);
            }
        }
        Ok(Box::new(ftl))
    }

    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(SubPage::recover(*self, io)?))
    }
}

/// The sub-page-mapped FTL (see the module docs).
#[derive(Debug)]
pub struct SubPage {
    config: SubPageConfig,
    geometry: Geometry,
    layout: Layout,
    /// Slots (units) per flash page.
    k: u32,
    /// Logical unit -> physical unit (`ppa * k + slot`), [`NONE`] if unmapped.
    map: Vec<u32>,
    /// The open page: units acknowledged but not yet programmed, in write order.
    open: Vec<(u32, Payload)>,
    alloc: BlockAllocator,
    /// Valid units per block, closed blocks as GC candidates.
    picker: GreedyPicker,
    /// The latest finish of a page programmed so far: a flush completes no
    /// earlier.
    programmed_until: SimTime,
}

impl SubPage {
    fn empty(config: SubPageConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let k = config.slots(io)?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let logical = config.logical_units(&g, good, k)?;
        Ok(SubPage {
            config,
            geometry: g,
            layout: Layout::new(&g),
            k,
            map: vec![NONE; logical as usize],
            open: Vec::with_capacity(k as usize),
            alloc: BlockAllocator::empty(&g, config.streams()),
            picker: GreedyPicker::new(g.total_blocks(), g.pages_per_block * k),
            programmed_until: SimTime::ZERO,
        })
    }

    /// Rebuilds the map from the slot records on the medium (the newest
    /// sequence number wins, then the later slot); the open page was in RAM
    /// and is empty.
    pub fn recover(config: SubPageConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let k = ftl.k;
        let mut newest = vec![0u64; ftl.map.len()];
        let map = &mut ftl.map;
        let scan = crate::scan::scan_each_slots(io, |ppa, records| {
            for (slot, r) in records.iter().enumerate() {
                let l = r.lpn as usize;
                // Sequence numbers stay below 2^56 (the OOB packs them so).
                let key = (r.seq << 8) | slot as u64;
                if r.kind == PageKind::Data && l < newest.len() && key > newest[l] {
                    newest[l] = key;
                    map[l] = ppa.0 * k + slot as u32;
                }
            }
            Ok(())
        })?;
        let mut valid = vec![0u32; ftl.geometry.total_blocks() as usize];
        for &pu in ftl.map.iter().filter(|&&pu| pu != NONE) {
            valid[ftl.layout.block_of(Ppa(pu / k)).0 as usize] += 1;
        }
        for (b, v) in valid.into_iter().enumerate() {
            ftl.picker.set_valid(BlockId(b as u32), v);
        }
        for b in scan.free {
            ftl.alloc.release(b);
        }
        for b in scan.closed {
            ftl.picker.insert(b);
        }
        // A die's partly written blocks reopen one a stream (host pages first,
        // then garbage collection's); any more become GC candidates.
        let mut streams_taken = vec![0u32; ftl.geometry.dies() as usize];
        for (b, next) in scan.open {
            let taken = &mut streams_taken[ftl.layout.die_of_block(b).0 as usize];
            if *taken < config.streams() {
                ftl.alloc.reopen(*taken, b, next);
                *taken += 1;
            } else {
                ftl.picker.insert(b);
            }
        }
        Ok(ftl)
    }

    /// Slots per flash page.
    pub fn slots_per_page(&self) -> u32 {
        self.k
    }

    /// Units in the open page now.
    pub fn buffered(&self) -> usize {
        self.open.len()
    }

    /// The page of physical unit `pu` and its slot.
    #[inline]
    fn split(&self, pu: u32) -> (Ppa, u32) {
        (Ppa(pu / self.k), pu % self.k)
    }

    /// The next page on `die` (or another die when it is out of room), after
    /// retiring `bad`, a block that went bad under a program; a block that
    /// fills becomes a GC candidate.
    fn place(
        alloc: &mut BlockAllocator,
        picker: &mut GreedyPicker,
        stream: u32,
        die: DieId,
        bad: Option<BlockId>,
    ) -> Result<Ppa, FtlError> {
        alloc.place(stream, die, bad, |b| picker.insert(b))
    }

    /// Programs `units` (at most k) as one packed page on `die` for `purpose`
    /// and maps them there; the copies they replace are superseded. With
    /// request-queue packing, garbage collection writes to a stream of its
    /// own: its full repacked pages never share a block with the host's
    /// sparse ones, so a victim's repacking never rewrites the same mix (a
    /// block of seven full pages and one host page would repack into eight
    /// pages again, and garbage collection would free nothing).
    fn program_units(
        &mut self,
        io: &mut Io,
        units: &[(u32, Payload)],
        die: DieId,
        purpose: Purpose,
    ) -> Result<(), FtlError> {
        let stream = if purpose == Purpose::Host { 0 } else { self.config.streams() - 1 };
        let (alloc, picker) = (&mut self.alloc, &mut self.picker);
        let (ppa, _) = io.program_packed_placed(PageKind::Data, units, self.config.unit_bytes, purpose, |_, bad| {
            Self::place(alloc, picker, stream, die, bad)
        })?;
        let block = self.layout.block_of(ppa);
        let now = io.now();
        for (slot, (lpn, _)) in units.iter().enumerate() {
            let old = std::mem::replace(&mut self.map[*lpn as usize], ppa.0 * self.k + slot as u32);
            if old != NONE {
                let (old_ppa, _) = self.split(old);
                self.picker.dec(self.layout.block_of(old_ppa));
                io.supersede(old_ppa);
            }
            self.picker.written(block, now);
        }
        self.programmed_until = self.programmed_until.max(io.last_finish());
        Ok(())
    }

    /// Programs the open page (full, or partly filled on a flush), after
    /// garbage collection if free blocks run low. On an error the open page
    /// keeps its units.
    fn program_open(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let target = self.config.gc_free_blocks;
        io.independent(|io| self.collect_until(io, target))?;
        let units = std::mem::take(&mut self.open);
        let die = io.free_die_from(self.alloc.next_die());
        match self.program_units(io, &units, die, Purpose::Host) {
            Ok(()) => {
                self.open = units;
                self.open.clear();
                Ok(())
            }
            Err(e) => {
                self.open = units;
                Err(e)
            }
        }
    }

    /// Collects victims while at most `free_blocks` blocks are free (at most
    /// one pass per block of the device; then the caller's allocation decides).
    fn collect_until(&mut self, io: &mut Io, free_blocks: u32) -> Result<(), FtlError> {
        let passes = self.geometry.total_blocks();
        crate::victim::collect_while(self, io, passes, |s| s.alloc.free_blocks() <= free_blocks, Self::collect_one)
    }

    /// Collects the closed block with the fewest valid units: its valid units,
    /// found by their records, are repacked k to a page on its die, then it is
    /// erased. Returns false when no candidate has a reclaimable unit.
    pub fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.picker.peek_min() else {
            return Ok(false);
        };
        if self.picker.valid(victim) >= self.geometry.pages_per_block * self.k {
            return Ok(false);
        }
        self.picker.remove(victim);
        let die = self.layout.die_of_block(victim);
        let mut batch: Vec<(u32, Payload)> = Vec::with_capacity(self.k as usize);
        for page in 0..io.programmed_pages(victim) {
            let ppa = self.geometry.ppa(victim, page);
            let records = match io.read_slot_oobs(ppa, Purpose::Gc) {
                Ok(Some(r)) => r,
                Ok(None) | Err(NandError::Uncorrectable(_)) => continue,
                Err(e) => return Err(e.into()),
            };
            let base = ppa.0 * self.k;
            let live: Vec<usize> = (0..records.len())
                .filter(|&s| {
                    let r = &records[s];
                    r.kind == PageKind::Data && self.map.get(r.lpn as usize) == Some(&(base + s as u32))
                })
                .collect();
            if live.is_empty() {
                continue;
            }
            let slots = io.read_slots(ppa, Purpose::Gc)?;
            for s in live {
                let (data, oob) = &slots[s];
                batch.push((oob.lpn, data.clone()));
                if batch.len() == self.k as usize {
                    self.program_units(io, &batch, die, Purpose::Gc)?;
                    batch.clear();
                }
            }
        }
        if !batch.is_empty() {
            self.program_units(io, &batch, die, Purpose::Gc)?;
        }
        if io.reclaim(victim, Purpose::Gc)? {
            self.picker.set_valid(victim, 0);
            self.alloc.release(victim);
        }
        Ok(true)
    }

    /// Checks a payload the host hands in: bytes exactly one unit long; bytes
    /// (not a token) on a device that stores bytes.
    fn check_payload(&self, io: &Io, data: &Payload) -> Result<(), FtlError> {
        match data {
            Payload::Bytes(b) if b.len() != self.config.unit_bytes as usize => {
                Err(FtlError::Nand(NandError::PayloadMismatch("unit bytes must be exactly ftl.unit_bytes long")))
            }
            Payload::Token(_) if io.store_kind() == StoreKind::Bytes => {
                Err(FtlError::Nand(NandError::PayloadMismatch("this device stores page bytes, not tokens")))
            }
            _ => Ok(()),
        }
    }
}

impl Ftl for SubPage {
    fn name(&self) -> &'static str {
        match self.config.packing {
            Packing::MergeBuffer => "subpage",
            Packing::RequestQueue => "nameless-split",
        }
    }

    fn logical_pages(&self) -> u32 {
        self.map.len() as u32
    }

    fn unit_bytes(&self) -> Option<u32> {
        Some(self.config.unit_bytes)
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        if let Some((_, data)) = self.open.iter().rev().find(|(u, _)| *u == lpn.0) {
            return Ok(Some(data.clone()));
        }
        let pu = self.map[l];
        if pu == NONE {
            return Ok(None);
        }
        let (ppa, slot) = self.split(pu);
        let (data, _) = io.read_slot(ppa, slot, Purpose::Host)?;
        Ok(Some(data))
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.logical_pages())?;
        self.check_payload(io, &data)?;
        match self.open.iter_mut().find(|(u, _)| *u == lpn.0) {
            Some(slot) => slot.1 = data,
            None => self.open.push((lpn.0, data)),
        }
        match self.config.packing {
            Packing::MergeBuffer => {
                // In the merge buffer: acknowledged (durable only after a flush).
                io.ack();
                if self.open.len() == self.k as usize {
                    self.program_open(io)?;
                }
            }
            // The request's units go to pages of their own once it is all in
            // (or a page is full); it completes when they are programmed.
            Packing::RequestQueue => {
                if !hint.more || self.open.len() == self.k as usize {
                    self.program_open(io)?;
                }
            }
        }
        Ok(())
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = check_lpn(lpn, self.logical_pages())?;
        self.open.retain(|(u, _)| *u != lpn.0);
        let old = std::mem::replace(&mut self.map[l], NONE);
        if old != NONE {
            let (ppa, _) = self.split(old);
            self.picker.dec(self.layout.block_of(ppa));
        }
        Ok(())
    }

    /// Programs the partly filled open page (padded) and completes once every
    /// page programmed so far has finished.
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if !self.open.is_empty() {
            self.program_open(io)?;
        }
        io.complete_after(self.programmed_until);
        Ok(())
    }

    fn durability(&self) -> Durability {
        match self.config.packing {
            Packing::MergeBuffer => Durability::OnFlush,
            Packing::RequestQueue => Durability::OnAck,
        }
    }

    /// With request-queue packing this is the host FTL's memory (the
    /// prototype's device firmware keeps none); the open page then holds only
    /// the units of the request being placed.
    fn ram_bytes(&self) -> u64 {
        let open = u64::from(self.k) * (u64::from(self.config.unit_bytes) + 4);
        self.map.len() as u64 * 4 + open + self.picker.ram_bytes() + self.alloc.ram_bytes()
    }

    /// Every block's valid count is the number of map entries in it, and no
    /// entry points past its block's write pointer.
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        let mut valid = vec![0u32; self.geometry.total_blocks() as usize];
        for (l, &pu) in self.map.iter().enumerate().filter(|(_, &pu)| pu != NONE) {
            let (ppa, _) = self.split(pu);
            let b = self.layout.block_of(ppa);
            let page = ppa.0 - self.geometry.ppa(b, 0).0;
            if page >= flash.nand().programmed_pages(b) {
                return Err(format!("unit {l} maps to {ppa:?}, which is not programmed"));
            }
            valid[b.0 as usize] += 1;
        }
        for (b, &v) in valid.iter().enumerate() {
            let counted = self.picker.valid(BlockId(b as u32));
            if counted != v {
                return Err(format!("block {b}: {v} units map to it, the picker counts {counted}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "subpage_tests.rs"]
mod tests;

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 2] = [
    crate::entry::Scheme {
        name: "subpage",
        summary: "sub-page mapping (003 Jasmine's optimized FTL): 4 KB units of larger pages via a merge buffer, greedy GC repacking valid units; ftl.unit_bytes",
        paper: "003 Sections 2-3.1",
        admits_tasks: false,
        bounds: false,
        build: |p, _| crate::entry::configured("subpage", SubPageConfig::default(), p, SubPageConfig::validate),
    },
    crate::entry::Scheme {
        name: "nameless-split",
        summary: "the Nameless-Write prototype's host FTL (003 Section 3.4): each request's 4 KB units packed into fresh virtual pages of their own, no merge buffer, GC through host RAM (subpage, request-queue packing)",
        paper: "003 Section 3.4, Figure 8",
        admits_tasks: false,
        bounds: false,
        build: |p, _| crate::entry::configured("nameless-split", SubPageConfig { packing: Packing::RequestQueue, ..SubPageConfig::default() }, p, SubPageConfig::validate),
    },
];
