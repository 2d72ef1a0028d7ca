//! [`ZnsDevice`]: the zones on the medium, the block and zone commands, and
//! recovery (see the module documentation of [`super`]).

use ftlab_nand::{BlockId, Geometry, NandError, PageKind, Payload, Ppa, SimTime};

mod zrwa;

use self::zrwa::{zero_page, ZrwaStore};
use super::zones::{Write, Zones};
use super::{ZnsConfig, ZoneMapping};
use crate::capability::{PageMeta, ZoneAction, ZoneDescriptor, ZoneError, ZoneState, ZoneStatus, Zoned, ZrwaLimits};
use crate::{Extension, Ftl, FtlError, Hint, Io, Lpn, Purpose};

/// The logical page a zone's offline marker names in its OOB (kind meta):
/// no data page names it (logical pages are below the zones' pages).
const OFFLINE_MARK: u32 = u32::MAX;

/// Where each zone's pages are.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    geometry: Geometry,
    /// Zone `z`'s blocks are `blocks[z * per_zone..(z + 1) * per_zone]`.
    blocks: Vec<BlockId>,
    per_zone: u32,
    mapping: ZoneMapping,
}

impl Layout {
    fn new(g: Geometry, config: &ZnsConfig) -> Result<Self, FtlError> {
        let dies = g.dies();
        let per_die = g.planes_per_die * g.blocks_per_plane;
        let k = if config.zone_blocks == 0 { dies } else { config.zone_blocks };
        let zones = match config.zone_mapping {
            ZoneMapping::Striped => (dies * per_die) / k,
            ZoneMapping::Die => dies * (per_die / k),
        };
        if zones == 0 {
            return Err(FtlError::config(
                "ftl.zone_blocks",
                format!(
                    "zns.zone_blocks = {k} leaves no zone on this device ({dies} dies of {per_die} blocks{}): give \
                     fewer blocks a zone",
                    if config.zone_mapping == ZoneMapping::Die { ", a zone on one die" } else { "" }
                ),
            ));
        }
        let block = |die: u32, q: u32| {
            BlockId(die * per_die + (q % g.planes_per_die) * g.blocks_per_plane + q / g.planes_per_die)
        };
        let mut blocks = Vec::with_capacity((zones * k) as usize);
        for z in 0..zones {
            for j in 0..k {
                blocks.push(match config.zone_mapping {
                    ZoneMapping::Striped => {
                        let s = z * k + j;
                        block(s % dies, s / dies)
                    }
                    ZoneMapping::Die => block(z % dies, (z / dies) * k + j),
                });
            }
        }
        Ok(Layout { geometry: g, blocks, per_zone: k, mapping: config.zone_mapping })
    }

    pub(super) fn zones(&self) -> u32 {
        self.blocks.len() as u32 / self.per_zone
    }

    pub(super) fn zone_size(&self) -> u32 {
        self.per_zone * self.geometry.pages_per_block
    }

    pub(super) fn blocks(&self, z: u32) -> &[BlockId] {
        let k = self.per_zone as usize;
        &self.blocks[z as usize * k..(z as usize + 1) * k]
    }

    /// The page of zone `z` at page `i` of the zone.
    pub(super) fn page(&self, z: u32, i: u32) -> Ppa {
        let (j, offset) = match self.mapping {
            ZoneMapping::Striped => (i % self.per_zone, i / self.per_zone),
            ZoneMapping::Die => (i / self.geometry.pages_per_block, i % self.geometry.pages_per_block),
        };
        self.geometry.ppa(self.blocks(z)[j as usize], offset)
    }
}

/// A zoned device (see [`super`]).
#[derive(Debug)]
pub struct ZnsDevice {
    pub(super) layout: Layout,
    pub(super) zones: Zones,
    pub(super) capacity: u32,
    max_open: u32,
    max_active: u32,
    /// Per zone, when its last write was acknowledged: the next one is
    /// acknowledged no earlier.
    pub(super) acked: Vec<SimTime>,
    /// The ZRWA limits, if the device has ZRWAs.
    rules: Option<ZrwaLimits>,
    /// The ZRWAs' pages and their journal, if the device has ZRWAs.
    zrwa: Option<ZrwaStore>,
    /// What the commands' flash operations count as: the host's, unless a
    /// host FTL on the device runs its garbage collection through it
    /// ([`ZnsDevice::as_purpose`]).
    purpose: Purpose,
}

impl ZnsDevice {
    fn empty(config: ZnsConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let layout = Layout::new(*io.geometry(), &config)?;
        let size = layout.zone_size();
        let capacity = if config.zone_capacity == 0 { size } else { config.zone_capacity };
        if capacity > size {
            return Err(FtlError::config(
                "ftl.zone_capacity",
                format!(
                    "zns.zone_capacity = {capacity} pages is more than the zone size of {size} pages ({} blocks of {} \
                     pages): give at most {size}, or 0 for all of it",
                    layout.per_zone, layout.geometry.pages_per_block
                ),
            ));
        }
        let rules = Self::zrwa_rules(&config, &layout, capacity)?;
        // With ZRWAs, the last two zones of the layout hold their journal.
        let n = layout.zones() - if rules.is_some() { 2 } else { 0 };
        let zones = Zones::with_zrwa(n, capacity, config.max_open_zones, config.max_active_zones, size, rules);
        let zrwa = rules.map(|_| ZrwaStore::new(n, [n, n + 1], size));
        Ok(ZnsDevice {
            layout,
            zones,
            capacity,
            max_open: config.max_open_zones,
            max_active: config.max_active_zones,
            acked: vec![SimTime::ZERO; n as usize],
            rules,
            zrwa,
            purpose: Purpose::Host,
        })
    }

    /// The ZRWA limits `config` gives on `layout`, checked against it.
    fn zrwa_rules(config: &ZnsConfig, layout: &Layout, capacity: u32) -> Result<Option<ZrwaLimits>, FtlError> {
        let size = config.zrwa_pages;
        if size == 0 {
            return Ok(None);
        }
        if size > capacity {
            return Err(FtlError::config(
                "ftl.zrwa_pages",
                format!("zns.zrwa_pages = {size} is more than the zone capacity of {capacity} pages: give at most {capacity}"),
            ));
        }
        if layout.zones() < 3 {
            return Err(FtlError::config(
                "ftl.zrwa_pages",
                format!(
                    "zns.zrwa_pages = {size}: the ZRWA journal takes two zones, and this device has {}; give fewer \
                     blocks a zone (ftl.zone_blocks), or 0 for no ZRWA",
                    layout.zones()
                ),
            ));
        }
        // A journal region (one zone) holds every ZRWA page, its marker and
        // one more entry.
        let room = (layout.zone_size() - 2) / size;
        let max_zones = if config.max_zrwa_zones == 0 { room } else { config.max_zrwa_zones };
        if max_zones == 0 || max_zones > room {
            return Err(FtlError::config(
                "ftl.max_zrwa_zones",
                format!(
                    "zns.max_zrwa_zones = {max_zones} ZRWAs of zrwa_pages = {size} pages do not fit the ZRWA journal \
                     (a zone of {} pages holds {room} of them): give at most {room}, or smaller ZRWAs",
                    layout.zone_size()
                ),
            ));
        }
        Ok(Some(ZrwaLimits { size, flush_granularity: config.zrwa_flush_granularity.max(1), max_zones }))
    }

    /// A device on a freshly formatted medium: every zone empty, those with a
    /// factory-bad block offline.
    pub fn format(config: ZnsConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut dev = Self::empty(config, io)?;
        dev.check_journal(io)?;
        for z in 0..dev.zones.len() {
            if dev.layout.blocks(z).iter().any(|&b| io.is_bad(b)) {
                dev.zones.restore(z, ZoneState::Offline, 0);
            }
        }
        Ok(dev)
    }

    /// The device rebuilt from the medium after a power cut (see [`super`]).
    pub fn recover(config: ZnsConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut dev = Self::empty(config, io)?;
        dev.check_journal(io)?;
        for z in 0..dev.zones.len() {
            let (state, written) = dev.recover_zone(io, z)?;
            dev.zones.restore(z, state, written);
        }
        dev.recover_zrwa(io)?;
        Ok(dev)
    }

    /// Refuses a ZRWA journal on a factory-bad block.
    fn check_journal(&self, io: &Io) -> Result<(), FtlError> {
        let Some(store) = self.zrwa.as_ref() else { return Ok(()) };
        for r in store.regions() {
            if let Some(b) = self.layout.blocks(r).iter().find(|&&b| io.is_bad(b)) {
                return Err(FtlError::config(
                    "ftl.zrwa_pages",
                    format!(
                        "the ZRWA journal (the last two zones) would be on factory-bad block {}: give ftl.zrwa_pages = 0 \
                         on this medium, or another zone layout",
                        b.0
                    ),
                ));
            }
        }
        Ok(())
    }

    fn recover_zone(&self, io: &mut Io, z: u32) -> Result<(ZoneState, u32), FtlError> {
        let blocks = self.layout.blocks(z);
        if blocks.iter().any(|&b| io.is_bad(b)) {
            return Ok((ZoneState::Offline, 0));
        }
        let g = self.layout.geometry;
        let programmed: Vec<u32> = blocks.iter().map(|&b| io.programmed_pages(b)).collect();
        let total: u32 = programmed.iter().sum();
        // The zone's first page unreadable: its first block was torn by a
        // reset's erase (the reset erases it first), or its first write was
        // torn; either way nothing of the zone was acknowledged since.
        let first_torn = programmed[0] > 0
            && !io.is_grown_bad(blocks[0])
            && matches!(io.read_oob(g.ppa(blocks[0], 0), Purpose::Recovery), Err(NandError::Uncorrectable(_)));
        if first_torn || (programmed[0] == 0 && total > 0) {
            // A reset was under way: complete it.
            let mut offline = false;
            for (&b, &c) in blocks.iter().zip(&programmed) {
                if c > 0 && !io.is_grown_bad(b) {
                    offline |= !io.reclaim(b, Purpose::Recovery)?;
                }
            }
            return Ok((if offline { ZoneState::Offline } else { ZoneState::Empty }, 0));
        }
        let mut data = 0;
        while data < self.capacity.min(total) {
            match io.read_oob(self.layout.page(z, data), Purpose::Recovery) {
                Ok(Some(oob)) if oob.kind == PageKind::Data => data += 1,
                Ok(_) | Err(NandError::Uncorrectable(_)) => break,
                Err(e) => return Err(FtlError::Recovery(format!("zone {z}, page {data}: {e}"))),
            }
        }
        let state = if blocks.iter().any(|&b| io.is_grown_bad(b)) {
            if self.offline_marked(io, z)? {
                return Ok((ZoneState::Offline, 0));
            }
            ZoneState::ReadOnly
        } else if data >= self.capacity || total > data {
            ZoneState::Full
        } else if data == 0 {
            ZoneState::Empty
        } else {
            ZoneState::Closed
        };
        Ok((state, data))
    }

    /// Whether zone `z` (read-only: a block gone bad) carries the marker
    /// the host's Offline command programs ([`OFFLINE_MARK`]): the last page
    /// programmed in one of its good blocks.
    fn offline_marked(&self, io: &mut Io, z: u32) -> Result<bool, FtlError> {
        for &b in self.layout.blocks(z) {
            let n = io.programmed_pages(b);
            if n == 0 || io.is_grown_bad(b) {
                continue;
            }
            match io.read_oob(self.layout.geometry.ppa(b, n - 1), Purpose::Recovery) {
                Ok(Some(oob)) if oob.kind == PageKind::Meta && oob.lpn == OFFLINE_MARK => return Ok(true),
                Ok(_) | Err(NandError::Uncorrectable(_)) => {}
                Err(e) => return Err(FtlError::Recovery(format!("zone {z}, block {}: {e}", b.0))),
            }
        }
        Ok(false)
    }

    /// Records on the medium that read-only zone `z` was taken offline: a
    /// marker page ([`OFFLINE_MARK`]) at the next page of its first good
    /// block with room. Returns whether one had room (a zone whose good
    /// blocks are all full goes offline until the next power cut, and comes
    /// back read-only).
    fn mark_offline(&mut self, io: &mut Io, z: u32) -> Result<bool, FtlError> {
        let g = self.layout.geometry;
        let Some(&b) =
            self.layout.blocks(z).iter().find(|&&b| !io.is_grown_bad(b) && io.programmed_pages(b) < g.pages_per_block)
        else {
            return Ok(false);
        };
        let ppa = g.ppa(b, io.programmed_pages(b));
        let marker = zero_page(io);
        io.start_after(self.acked[z as usize]);
        io.program(ppa, OFFLINE_MARK, PageKind::Meta, marker, Purpose::Checkpoint)?;
        self.ack_in_order(io, z);
        Ok(true)
    }

    /// Runs `f` with the device's flash operations counted under `purpose`
    /// (a host FTL's garbage collection: its copies and resets).
    pub(crate) fn as_purpose<R>(&mut self, purpose: Purpose, f: impl FnOnce(&mut Self) -> R) -> R {
        let before = std::mem::replace(&mut self.purpose, purpose);
        let r = f(self);
        self.purpose = before;
        r
    }

    /// Records that page `lpn` is superseded by the page programmed last in
    /// `io` (a host FTL's newer copy of its data): its zone's reset erases no
    /// block before that program finished ([`Io::supersede`]), so a cut
    /// never keeps the reset and loses the copy.
    pub(crate) fn supersede(&self, io: &mut Io, lpn: u32) {
        let size = self.layout.zone_size();
        io.supersede(self.layout.page(lpn / size, lpn % size));
    }

    fn check_zone(&self, zone: u32) -> Result<(), FtlError> {
        if zone < self.zones.len() {
            return Ok(());
        }
        Err(FtlError::BadCommand(format!(
            "zone {zone} is past the device's {} zones: give a zone from 0 to {}",
            self.zones.len(),
            self.zones.len() - 1
        )))
    }

    fn locate(&self, lpn: Lpn) -> Result<(u32, u32), FtlError> {
        crate::check_lpn(lpn, self.logical_pages())?;
        let size = self.layout.zone_size();
        Ok((lpn.0 / size, lpn.0 % size))
    }

    /// Acknowledges the command in `io` no earlier than zone `z`'s last
    /// acknowledgement, and records it.
    fn ack_in_order(&mut self, io: &mut Io, z: u32) {
        io.ack();
        io.complete_after(io.last_finish().max(self.acked[z as usize]));
        self.acked[z as usize] = io.completion();
    }

    /// Programs page `i` of zone `z` with `kind`: a failure makes the zone
    /// read-only.
    pub(super) fn program(
        &mut self,
        io: &mut Io,
        z: u32,
        i: u32,
        kind: PageKind,
        data: Payload,
        meta: u32,
    ) -> Result<(), FtlError> {
        let ppa = self.layout.page(z, i);
        let purpose = if kind == PageKind::Data { self.purpose } else { Purpose::Checkpoint };
        if let Err(e) = io.program(ppa, meta, kind, data, purpose) {
            self.zones.fail(z);
            return Err(e.into());
        }
        Ok(())
    }

    /// Writes page `i` of zone `z` with its metadata, if the state machine
    /// lets it.
    fn write_at(&mut self, io: &mut Io, z: u32, i: u32, data: Payload, meta: u32) -> Result<(), FtlError> {
        match self.zones.before_write(z, i).map_err(FtlError::Zone)? {
            Write::AtPointer => {
                self.program(io, z, i, PageKind::Data, data, meta)?;
                self.zones.wrote(z);
            }
            Write::Zrwa { flush } => {
                // Past the ZRWA: commit its first pages (an implicit flush),
                // then the page joins it in RAM.
                io.start_after(self.acked[z as usize]);
                let to = self.zones.written(z) + flush;
                self.commit(io, z, to)?;
                self.zrwa_put(z, i, data);
            }
        }
        self.ack_in_order(io, z);
        Ok(())
    }

    /// Erases zone `z`'s written blocks: the one holding its first page
    /// first, the others once that erase ended (see [`super`], durability).
    /// Returns whether every erase succeeded.
    pub(super) fn erase_zone(&mut self, io: &mut Io, z: u32) -> Result<bool, FtlError> {
        let blocks: Vec<BlockId> = self
            .layout
            .blocks(z)
            .iter()
            .copied()
            .filter(|&b| io.programmed_pages(b) > 0 && !io.is_grown_bad(b))
            .collect();
        // No block before every block may be erased: a cut keeps the whole
        // zone or, the first block erased, completes the reset (recovery),
        // and a page a newer copy superseded is never lost before the copy.
        let barrier = blocks.iter().map(|&b| io.erase_barrier(b)).max().unwrap_or(SimTime::ZERO);
        io.start_after(barrier);
        let mut ok = true;
        let mut first = true;
        for b in blocks {
            ok &= io.reclaim(b, self.purpose)?;
            if first {
                io.start_after(io.last_finish());
                first = false;
            }
        }
        Ok(ok)
    }
}

impl Ftl for ZnsDevice {
    fn name(&self) -> &'static str {
        "zns"
    }

    fn logical_pages(&self) -> u32 {
        self.zones.len() * self.layout.zone_size()
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let (z, i) = self.locate(lpn)?;
        if self.zones.state(z) == ZoneState::Offline {
            return Err(FtlError::Zone(ZoneError {
                zone: z,
                status: ZoneStatus::Offline,
                message: "is offline: its data can no longer be read".into(),
            }));
        }
        if i >= self.zones.written(z) {
            // The newest data written to the ZRWA, from the device's RAM.
            return Ok(self.zrwa_get(z, i));
        }
        let (data, _) = io.read(self.layout.page(z, i), self.purpose)?;
        Ok(Some(data))
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        let (z, i) = self.locate(lpn)?;
        self.write_at(io, z, i, data, lpn.0)
    }

    fn trim(&mut self, _io: &mut Io, _lpn: Lpn) -> Result<(), FtlError> {
        Err(FtlError::Unsupported("trim on a zoned device (free space by resetting its zone)"))
    }

    /// With ZRWAs, a write into one is durable once a flush completes; every
    /// other write when acknowledged.
    fn durability(&self) -> crate::Durability {
        if self.rules.is_some() {
            crate::Durability::OnFlush
        } else {
            crate::Durability::OnAck
        }
    }

    /// Makes every page written to a ZRWA durable (the journal); the other
    /// writes are durable when acknowledged.
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.zrwa_flush(io)
    }

    fn ram_bytes(&self) -> u64 {
        // Per zone its state, write pointer and last acknowledgement; per
        // block its address; the ZRWAs' pages.
        let zrwa = self.rules.map_or(0, |r| u64::from(r.max_zones) * u64::from(r.size));
        u64::from(self.zones.len()) * (1 + 4 + 8)
            + self.layout.blocks.len() as u64 * 4
            + zrwa * u64::from(self.layout.geometry.page_size)
    }

    fn extension(&mut self) -> Extension<'_> {
        Extension::Zoned(self)
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let (open, active) = self.zones.counts();
        let full = (0..self.zones.len()).filter(|&z| self.zones.state(z) == ZoneState::Full).count();
        vec![("zones_open", f64::from(open)), ("zones_active", f64::from(active)), ("zones_full", full as f64)]
    }

    /// The zone report at the end of a run: each zone's state
    /// ([`ZoneState::code`]) and the pages written in it.
    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        let zones = 0..self.zones.len();
        let written = |z: u32| self.zone(z).map_or(0.0, |d| f64::from(d.write_pointer - d.start));
        vec![
            ("zone_state_by_zone", zones.clone().map(|z| f64::from(self.zones.state(z).code())).collect()),
            ("zone_written_pages_by_zone", zones.map(written).collect()),
        ]
    }

    fn check_invariants(&self, flash: &crate::Flash) -> Result<(), String> {
        let (mut open, mut active) = (0, 0);
        for z in 0..self.zones.len() {
            let state = self.zones.state(z);
            open += u32::from(state.is_open());
            active += u32::from(state.is_active());
            if state == ZoneState::Offline {
                continue;
            }
            let on_flash: u32 = self.layout.blocks(z).iter().map(|&b| flash.nand().programmed_pages(b)).sum();
            if on_flash < self.zones.written(z) {
                return Err(format!("zone {z}: {} pages written, {on_flash} on the flash", self.zones.written(z)));
            }
            let stray = self.zrwa.as_ref().map_or(0, |s| s.pages[z as usize].range(..self.zones.written(z)).count());
            if stray > 0 || (!self.zones.has_zrwa(z) && self.zrwa_end(z) > 0) {
                return Err(format!("zone {z}: ZRWA pages below its write pointer, or with no ZRWA allocated"));
            }
            if !matches!(state, ZoneState::Full | ZoneState::ReadOnly) && on_flash != self.zones.written(z) {
                return Err(format!(
                    "zone {z} is {state:?} with {} pages written and {on_flash} programmed",
                    self.zones.written(z)
                ));
            }
        }
        let zrwas = (0..self.zones.len()).filter(|&z| self.zones.has_zrwa(z)).count() as u32;
        let most = self.rules.map_or(0, |r| r.max_zones);
        if zrwas != self.zones.zrwa_count() || zrwas > most {
            return Err(format!("{zrwas} zones have a ZRWA, counted {}, at most {most}", self.zones.zrwa_count()));
        }
        if (open, active) != self.zones.counts() {
            return Err(format!("{open} open and {active} active zones, counted {:?}", self.zones.counts()));
        }
        Ok(())
    }
}

impl Zoned for ZnsDevice {
    fn zones(&self) -> u32 {
        self.zones.len()
    }

    fn zone_size(&self) -> u32 {
        self.layout.zone_size()
    }

    fn zone_capacity(&self) -> u32 {
        self.capacity
    }

    fn max_open(&self) -> u32 {
        self.max_open
    }

    fn max_active(&self) -> u32 {
        self.max_active
    }

    fn zrwa(&self) -> Option<ZrwaLimits> {
        self.rules
    }

    fn zone(&self, zone: u32) -> Result<ZoneDescriptor, FtlError> {
        self.check_zone(zone)?;
        let start = zone * self.layout.zone_size();
        Ok(ZoneDescriptor {
            start,
            capacity: self.capacity,
            write_pointer: start + self.zones.written(zone),
            state: self.zones.state(zone),
            zrwa: self.zones.has_zrwa(zone),
        })
    }

    fn manage(&mut self, io: &mut Io, zone: u32, action: ZoneAction) -> Result<(), FtlError> {
        self.check_zone(zone)?;
        if !self.zones.check(zone, action).map_err(FtlError::Zone)? {
            return Ok(());
        }
        match action {
            ZoneAction::Finish => {
                // The ZRWA's pages are committed first (a finish flushes it).
                io.start_after(self.acked[zone as usize]);
                let end = self.zrwa_end(zone);
                self.commit(io, zone, end)?;
                let written = self.zones.written(zone);
                if written < self.capacity && self.zones.state(zone) != ZoneState::Full {
                    // The marker's content matches the page store (bytes or tokens).
                    let marker = zero_page(io);
                    self.program(io, zone, written, PageKind::Meta, marker, 0)?;
                }
                self.ack_in_order(io, zone);
            }
            ZoneAction::FlushZrwa { upto } => {
                let pages = self.zones.before_flush(zone, upto).map_err(FtlError::Zone)?;
                io.start_after(self.acked[zone as usize]);
                let to = self.zones.written(zone) + pages;
                self.commit(io, zone, to)?;
                self.ack_in_order(io, zone);
            }
            ZoneAction::Reset => {
                io.start_after(self.acked[zone as usize]);
                self.zrwa_discard(io, zone)?;
                if !self.erase_zone(io, zone)? {
                    self.zones.restore(zone, ZoneState::Offline, 0);
                    return Err(FtlError::Zone(ZoneError {
                        zone,
                        status: ZoneStatus::Offline,
                        message: "an erase of its blocks failed during the reset: the zone is offline".into(),
                    }));
                }
                self.ack_in_order(io, zone);
            }
            ZoneAction::Offline => {
                self.zrwa_discard(io, zone)?;
                self.mark_offline(io, zone)?;
            }
            ZoneAction::Open | ZoneAction::OpenZrwa | ZoneAction::Close => {}
        }
        self.zones.apply(zone, action).map_err(FtlError::Zone)
    }

    fn append(&mut self, io: &mut Io, zone: u32, data: Payload, meta: Option<u32>) -> Result<Lpn, FtlError> {
        self.check_zone(zone)?;
        if self.zones.has_zrwa(zone) && !matches!(self.zones.state(zone), ZoneState::ReadOnly | ZoneState::Offline) {
            return Err(FtlError::Zone(ZoneError {
                zone,
                status: ZoneStatus::InvalidZoneOperation,
                message: "has a ZRWA, which takes block writes, not zone appends: write in the ZRWA, or finish or \
                          reset the zone first"
                    .into(),
            }));
        }
        let i = self.zones.written(zone);
        let lpn = zone * self.layout.zone_size() + i;
        self.write_at(io, zone, i, data, meta.unwrap_or(lpn))?;
        Ok(Lpn(lpn))
    }

    fn metadata(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<PageMeta>, FtlError> {
        let (z, i) = self.locate(lpn)?;
        if self.zones.state(z) == ZoneState::Offline || i >= self.zones.written(z) {
            return Ok(None);
        }
        let oob = io.read_oob(self.layout.page(z, i), Purpose::Recovery)?;
        Ok(oob.map(|o| PageMeta { meta: o.lpn, order: o.seq }))
    }
}
