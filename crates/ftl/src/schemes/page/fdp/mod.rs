//! An NVMe Flexible Data Placement device (TP4146, NVMe 2.0 base specification
//! Section 8.1.10): a page-mapped device FTL whose host writes carry a
//! placement identifier, the industrial heir of 003's split of placement
//! between host and device. The device keeps its page map and its garbage
//! collection; the host only says which writes belong together.
//!
//! - **Reclaim units and handles.** A reclaim unit is an erase block; a
//!   reclaim unit handle (`handles` of them, default 8) has its own open
//!   reclaim unit on each die, so data written through different handles
//!   never shares a block. A write's placement identifier is its hint's
//!   stream ([`crate::Hint::stream`], the NVMe streams directive FDP
//!   succeeds); a write without one uses handle 0 (the default handle), and
//!   one past the last handle is refused (Invalid Placement Handle).
//! - **Reclaim groups and unit size** (`reclaim_groups`,
//!   `reclaim_unit_blocks`; default one group over the device and a block a
//!   unit). With more than one group the dies are split into that many
//!   groups of consecutive dies, and a placement identifier names a group
//!   and a handle in it: identifier `group * handles + handle` (as NVMe's
//!   placement identifier carries the reclaim group in its upper bits); a
//!   write without one goes to handle 0 of the group with the most free
//!   reclaim units. A reclaim unit of several blocks is a superblock: the
//!   blocks at one index of `reclaim_unit_blocks` consecutive dies of its
//!   group, opened, filled and collected whole (`units`). Each handle's
//!   statistics are then kept per placement identifier (per handle of each
//!   group).
//! - **Isolation** (`isolation`). `"initially"` (the default; FDP's initially
//!   isolated handles): garbage collection copies every victim's live pages
//!   into one shared stream, so data of different handles may meet there;
//!   `"persistently"`: each handle's live pages are copied into that
//!   handle's own garbage-collection stream, so they never meet.
//! - **Garbage collection**: greedy, whole victim before a write, while at
//!   most `gc_free_blocks` blocks are free (as `pagemap`); with reclaim
//!   groups or units of several blocks, whole reclaim units inside the
//!   write's group, while at most `gc_free_blocks` units of the group are
//!   free, the copies staying in the group.
//! - **Statistics** (FDP Statistics log page: host and media bytes written,
//!   counted here in pages): `fdp_host_pages` and `fdp_media_pages` in total,
//!   and per handle (curves `fdp_host_pages_by_handle`,
//!   `fdp_media_pages_by_handle`, a page copied counted to the handle that
//!   wrote it), so WAF per handle is media over host. **Events**: the counters
//!   `fdp_events_media_reallocated` (pages garbage collection moved) and
//!   `fdp_events_ru_not_fully_written` (reclaim units closed with room left
//!   by a power cut), and the FDP event log (`log`: each event with its
//!   type, placement identifier, group, time and pages moved, the newest
//!   [`MAX_EVENTS`], as the curves `fdp_event_*`). FLUSH writes the
//!   statistics and the log to the medium, and recovery restores them from
//!   the newest record: they persist across power cuts as of the last FLUSH.
//! - **Recovery**: the OOB scan of `pagemap` (the newest copy wins); each
//!   page's OOB tag holds its placement identifier, so per-handle placement
//!   and counting survive a cut. Units of several blocks left part-written
//!   are closed (each an event: reclaim unit not fully written), not
//!   reopened.

mod log;
mod units;

pub use self::log::{Event, EventType, MAX_EVENTS};

use serde::{Deserialize, Serialize};

use ftlab_nand::{BlockId, Geometry, Oob, Payload, Ppa};

use crate::alloc::BlockAllocator;
use crate::pagecore::PageCore;
use crate::victim::{GreedyPicker, VictimPicker};
use crate::{Flash, Ftl, FtlError, Hint, Io, Lpn, Purpose};

use self::log::{EventLog, STATS_MARK};
use self::units::{Shape, UnitBooks, Units};

/// How garbage collection keeps the handles' data apart ([`FdpConfig::isolation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Copies of all handles share one stream.
    Initially,
    /// Each handle's copies have a stream of their own.
    Persistently,
}

/// Configuration of [`Fdp`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FdpConfig {
    /// Fraction of the good pages held back from the host, in [0, 1).
    /// Default 0.10.
    pub over_provisioning: f64,
    /// Garbage collection runs before a write while at most this many
    /// blocks are free (at least 1). Default 2.
    pub gc_free_blocks: u32,
    /// Reclaim unit handles, 1 to 32. Default 8.
    pub handles: u32,
    /// Default `"initially"`.
    pub isolation: Isolation,
    /// Reclaim groups, each an equal share of the dies (the dies a multiple
    /// of it); `handles` a group, at most 32 handles in all. Default 1.
    pub reclaim_groups: u32,
    /// Erase blocks of a reclaim unit, one on each of that many consecutive
    /// dies of its group (the group's dies a multiple of it). Default 1.
    pub reclaim_unit_blocks: u32,
}

impl Default for FdpConfig {
    fn default() -> Self {
        FdpConfig {
            over_provisioning: 0.10,
            gc_free_blocks: 2,
            handles: 8,
            isolation: Isolation::Initially,
            reclaim_groups: 1,
            reclaim_unit_blocks: 1,
        }
    }
}

/// Most handles: a page's handle is its OOB tag, and a handle's copies need
/// a stream of their own when persistently isolated.
const MAX_HANDLES: u32 = 32;

impl FdpConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("fdp", self.over_provisioning)?;
        crate::config::gc_free_blocks("fdp", self.gc_free_blocks, crate::config::GC_NEEDS_A_FREE_BLOCK)?;
        if !(1..=MAX_HANDLES).contains(&self.handles) {
            return Err(FtlError::config(
                "ftl.handles",
                format!("fdp.handles = {}: give 1 to {MAX_HANDLES} reclaim unit handles", self.handles),
            ));
        }
        if self.reclaim_groups == 0 || u64::from(self.reclaim_groups) * u64::from(self.handles) > u64::from(MAX_HANDLES)
        {
            return Err(FtlError::config(
                "ftl.reclaim_groups",
                format!(
                    "fdp.reclaim_groups = {} with {} handles a group: give at least 1 group and at most {MAX_HANDLES} \
                     handles in all (groups x handles)",
                    self.reclaim_groups, self.handles
                ),
            ));
        }
        if self.reclaim_unit_blocks == 0 {
            return Err(FtlError::config(
                "ftl.reclaim_unit_blocks",
                "fdp.reclaim_unit_blocks = 0: give the erase blocks of a reclaim unit, at least 1".to_string(),
            ));
        }
        Ok(())
    }

    /// Placement identifiers: a handle of each group.
    fn pids(&self) -> u32 {
        self.handles * self.reclaim_groups
    }

    /// Whether units are placed by [`units`]: more than one group, or units
    /// of several blocks.
    fn by_units(&self) -> bool {
        self.reclaim_groups > 1 || self.reclaim_unit_blocks > 1
    }

    /// The units' shape on `g`; errors name the field that does not divide.
    fn shape(&self, g: &Geometry) -> Result<Shape, FtlError> {
        let dies = g.dies();
        if !dies.is_multiple_of(self.reclaim_groups) {
            return Err(FtlError::config(
                "ftl.reclaim_groups",
                format!(
                    "fdp.reclaim_groups = {} does not divide the device's {dies} dies: give a divisor of {dies}",
                    self.reclaim_groups
                ),
            ));
        }
        let group_dies = dies / self.reclaim_groups;
        if !group_dies.is_multiple_of(self.reclaim_unit_blocks) {
            return Err(FtlError::config(
                "ftl.reclaim_unit_blocks",
                format!(
                    "fdp.reclaim_unit_blocks = {} does not divide a reclaim group's {group_dies} dies (a unit's \
                     blocks are on different dies of its group): give a divisor of {group_dies}",
                    self.reclaim_unit_blocks
                ),
            ));
        }
        Ok(Shape::new(g, self.reclaim_groups, self.reclaim_unit_blocks))
    }

    /// Streams of the block allocator: one a handle for host data, then one
    /// for copies (initially isolated) or one a handle (persistently).
    fn streams(&self) -> u32 {
        self.handles + self.gc_streams()
    }

    fn gc_streams(&self) -> u32 {
        match self.isolation {
            Isolation::Initially => 1,
            Isolation::Persistently => self.handles,
        }
    }

    /// Logical pages on a device with `good_blocks` usable blocks: the good
    /// pages less the over-provisioning, and at most what leaves
    /// `gc_free_blocks`, every stream's open block on every die and one
    /// block of slack.
    /// With units ([`FdpConfig::by_units`]), the slack is that many units
    /// in each group, with every stream's open unit in each slot.
    fn logical_pages(&self, g: &Geometry, good_blocks: u32) -> Result<u32, FtlError> {
        let ppb = u64::from(g.pages_per_block);
        let slack = if self.by_units() {
            let sh = self.shape(g)?;
            let per_group = u64::from(self.gc_free_blocks) + u64::from(self.streams()) * u64::from(sh.slots) + 1;
            per_group * u64::from(sh.groups) * u64::from(sh.unit_blocks)
        } else {
            u64::from(self.gc_free_blocks) + u64::from(self.streams()) * u64::from(g.dies()) + 1
        };
        let max = u64::from(good_blocks).saturating_sub(slack) * ppb;
        let wanted = ((u64::from(good_blocks) * ppb) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        let pages = wanted.min(max);
        if pages == 0 {
            return Err(FtlError::config(
                "device",
                format!(
                    "the device is too small for fdp with {} handles: {good_blocks} good blocks, {slack} needed as GC \
                     reserve and open reclaim units (one a stream a die); give fewer handles (ftl.handles) or more \
                     blocks",
                    self.handles
                ),
            ));
        }
        Ok(pages as u32)
    }
}

impl crate::FtlBuilder for FdpConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Fdp::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Fdp::recover(*self, io)?))
    }
}

/// A block holding copies of several handles (initially isolated).
const MIXED: u8 = u8::MAX;

/// The valid-page books and the victims: blocks, or whole units.
#[derive(Debug)]
enum Books {
    Blocks(GreedyPicker),
    Units(UnitBooks),
}

impl Books {
    /// The unit books (units placed by [`units`]).
    fn units(&mut self) -> &mut UnitBooks {
        match self {
            Books::Units(u) => u,
            Books::Blocks(_) => unreachable!("fdp places by blocks"),
        }
    }
}

impl VictimPicker for Books {
    /// Block books.
    fn new(blocks: u32, pages_per_block: u32) -> Self {
        Books::Blocks(GreedyPicker::new(blocks, pages_per_block))
    }
    #[inline]
    fn valid(&self, block: BlockId) -> u32 {
        match self {
            Books::Blocks(p) => VictimPicker::valid(p, block),
            Books::Units(u) => u.valid(block),
        }
    }
    #[inline]
    fn written(&mut self, block: BlockId, now: ftlab_nand::SimTime) {
        match self {
            Books::Blocks(p) => p.written(block, now),
            Books::Units(u) => u.written(block, now),
        }
    }
    #[inline]
    fn dec(&mut self, block: BlockId) {
        match self {
            Books::Blocks(p) => VictimPicker::dec(p, block),
            Books::Units(u) => u.dec(block),
        }
    }
    fn insert(&mut self, block: BlockId) {
        match self {
            Books::Blocks(p) => VictimPicker::insert(p, block),
            Books::Units(u) => u.insert(block),
        }
    }
    fn remove(&mut self, block: BlockId) {
        match self {
            Books::Blocks(p) => VictimPicker::remove(p, block),
            Books::Units(u) => u.remove(block),
        }
    }
    fn set_valid(&mut self, block: BlockId, valid: u32) {
        match self {
            Books::Blocks(p) => VictimPicker::set_valid(p, block, valid),
            Books::Units(u) => u.set_valid(block, valid),
        }
    }
    fn pick(&mut self, now: ftlab_nand::SimTime) -> Option<BlockId> {
        match self {
            Books::Blocks(p) => VictimPicker::pick(p, now),
            Books::Units(u) => u.pick(now),
        }
    }
    fn ram_bytes(&self) -> u64 {
        match self {
            Books::Blocks(p) => VictimPicker::ram_bytes(p),
            Books::Units(u) => u.ram_bytes(),
        }
    }
}

/// The FDP device (see the module documentation).
#[derive(Debug)]
pub struct Fdp {
    config: FdpConfig,
    core: PageCore,
    picker: Books,
    /// Free and open units, with reclaim groups or units of several blocks.
    units: Option<Units>,
    /// The placement identifier whose data each block holds ([`MIXED`]:
    /// copies of several).
    block_handle: Vec<u8>,
    /// The placement identifier that last wrote each logical page.
    page_handle: Vec<u8>,
    host_pages: Vec<u64>,
    media_pages: Vec<u64>,
    media_reallocated: u64,
    ru_not_fully_written: u64,
    /// Host pages written outside the group their identifier names.
    outside_group: u64,
    /// Good pages of each group, at format or recovery.
    group_pages: Vec<u64>,
    /// The FDP event log.
    events: EventLog,
    /// Where the newest statistics record is on the medium.
    stats_at: Option<Ppa>,
    /// Whether the statistics or the log changed since that record.
    dirty: bool,
}

impl Fdp {
    fn empty(config: FdpConfig, io: &Io) -> Result<Self, FtlError> {
        config.validate()?;
        let g = *io.geometry();
        let good = (0..g.total_blocks()).filter(|&b| !io.is_bad(BlockId(b))).count() as u32;
        let logical = config.logical_pages(&g, good)?;
        let handles = config.pids() as usize;
        let (picker, units) = if config.by_units() {
            let shape = config.shape(&g)?;
            (Books::Units(UnitBooks::new(shape)), Some(Units::new(shape, config.streams())))
        } else {
            (Books::Blocks(GreedyPicker::new(g.total_blocks(), g.pages_per_block)), None)
        };
        Ok(Fdp {
            core: PageCore::new(g, logical, config.streams()),
            picker,
            units,
            block_handle: vec![0; g.total_blocks() as usize],
            page_handle: vec![0; logical as usize],
            host_pages: vec![0; handles],
            media_pages: vec![0; handles],
            media_reallocated: 0,
            ru_not_fully_written: 0,
            outside_group: 0,
            group_pages: Vec::new(),
            events: EventLog::default(),
            stats_at: None,
            dirty: false,
            config,
        })
    }

    /// A device on a freshly formatted medium.
    pub fn format(config: FdpConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        match &mut ftl.units {
            Some(units) => {
                for u in 0..units.shape.units() {
                    if units.capacity(io, u) > 0 {
                        units.release(u);
                    }
                }
                ftl.group_pages = units.good_pages(io);
            }
            None => ftl.core.format(io, config.streams()),
        }
        Ok(ftl)
    }

    /// The device rebuilt from the medium: the newest copy of each logical
    /// page wins, its OOB tag giving its handle; each die's partly written
    /// block with the newest data is reopened for its handle, the others are
    /// closed (an FDP event: reclaim unit not fully written).
    pub fn recover(config: FdpConfig, io: &mut Io) -> Result<Self, FtlError> {
        let mut ftl = Self::empty(config, io)?;
        let mut newest = vec![0u64; ftl.core.logical_pages as usize];
        let (table, page_handle, block_handle) = (&mut ftl.core.table, &mut ftl.page_handle, &mut ftl.block_handle);
        let layout = ftl.core.layout;
        let mut records: Vec<(u64, Ppa)> = Vec::new();
        let mut seen = vec![false; block_handle.len()];
        let scan = crate::scan::scan_each(io, |ppa: Ppa, oob: &Oob| {
            if oob.kind == ftlab_nand::PageKind::Meta && oob.lpn == STATS_MARK {
                records.push((oob.seq, ppa));
                return Ok(());
            }
            let l = oob.lpn as usize;
            if oob.kind == ftlab_nand::PageKind::Data && l < newest.len() && oob.seq > newest[l] {
                newest[l] = oob.seq;
                table.set(l, ppa);
                page_handle[l] = oob.tag;
            }
            let b = layout.block_of(ppa).0 as usize;
            block_handle[b] = if !seen[b] || block_handle[b] == oob.tag { oob.tag } else { MIXED };
            seen[b] = true;
            Ok(())
        })?;
        ftl.restore(io, records);
        ftl.core.rebuild_valid(&mut ftl.picker);
        if let Some(units) = &mut ftl.units {
            ftl.group_pages = units.good_pages(io);
            // A unit is free if none of its blocks holds a page. A unit
            // written in part is reopened for the stream of its pages' handle
            // (copies of several: garbage collection's), unless that stream
            // has one in its slot already; the others are closed, each an
            // event: reclaim unit not fully written.
            let books = ftl.picker.units();
            let handles = ftl.config.handles;
            for u in 0..units.shape.units() {
                if units.capacity(io, u) == 0 {
                    continue;
                }
                if units.shape.blocks(u).all(|b| io.programmed_pages(b) == 0) {
                    units.release(u);
                    continue;
                }
                if units.has_room(io, u) {
                    let block_handle = &ftl.block_handle;
                    let tag = units
                        .shape
                        .blocks(u)
                        .filter(|&b| io.programmed_pages(b) > 0)
                        .map(|b| block_handle[b.0 as usize])
                        .try_fold(None, |seen: Option<u8>, t| match seen {
                            Some(s) if s != t => Err(()),
                            _ => Ok(Some(t)),
                        });
                    let group = units.shape.group_of_unit(u);
                    let stream = match tag {
                        Ok(Some(t)) if t == MIXED => Some(handles),
                        // Not a page written outside its group.
                        Ok(Some(t)) if u32::from(t) / handles == group => Some(u32::from(t) % handles),
                        _ => None,
                    };
                    if stream.is_some_and(|s| units.reopen(s, u)) {
                        continue;
                    }
                    ftl.ru_not_fully_written += 1;
                    let pid = tag.ok().flatten().filter(|&t| t != MIXED).map(u32::from);
                    ftl.events.log(EventType::RuNotFullyWritten, pid, group, 0, io.now());
                    ftl.dirty = true;
                }
                books.insert_unit(u);
            }
            return Ok(ftl);
        }
        for b in scan.free {
            ftl.core.alloc.release(b);
        }
        for b in scan.closed {
            if io.programmed_pages(b) < ftl.core.geometry.pages_per_block && !io.is_grown_bad(b) {
                ftl.ru_not_fully_written += 1;
                let h = ftl.block_handle[b.0 as usize];
                let pid = (h != MIXED).then_some(u32::from(h));
                ftl.events.log(EventType::RuNotFullyWritten, pid, 0, 0, io.now());
                ftl.dirty = true;
            }
            ftl.picker.insert(b);
        }
        for (b, next) in scan.open {
            let h = ftl.block_handle[b.0 as usize];
            let stream =
                if h == MIXED || u32::from(h) >= ftl.config.handles { ftl.config.handles } else { u32::from(h) };
            ftl.core.alloc.reopen(stream, b, next);
        }
        Ok(ftl)
    }

    /// The placement identifier of a write with `hint`, if it has one.
    fn handle(&self, hint: &Hint) -> Result<Option<u32>, FtlError> {
        let pids = self.config.pids();
        match hint.stream {
            None => Ok(None),
            Some(h) if h < pids => Ok(Some(h)),
            Some(h) => Err(FtlError::BadCommand(format!(
                "a write with placement handle {h}, and the device has {pids} ({} handles (ftl.handles) in each of \
                 {} reclaim groups (ftl.reclaim_groups)): give handles 0 to {}, or configure more",
                self.config.handles,
                self.config.reclaim_groups,
                pids - 1
            ))),
        }
    }

    /// Books a victim's `moved` pages (an event: Media Reallocated, if any
    /// moved); with `holds_record`, the victim holds the newest statistics
    /// record, written again before the victim is erased.
    fn reallocated(
        &mut self,
        io: &mut Io,
        pid: Option<u32>,
        group: u32,
        moved: usize,
        holds_record: bool,
    ) -> Result<(), FtlError> {
        self.media_reallocated += moved as u64;
        if moved > 0 {
            self.events.log(EventType::MediaReallocated, pid, group, moved, io.now());
        }
        self.dirty = true;
        if holds_record {
            self.persist(io)?;
        }
        Ok(())
    }

    /// Writes the statistics and the event log to the medium (one meta
    /// page, in garbage collection's stream).
    fn persist(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let stats = log::Stats {
            host_pages: self.host_pages.clone(),
            media_pages: self.media_pages.clone(),
            media_reallocated: self.media_reallocated,
            ru_not_fully_written: self.ru_not_fully_written,
            outside_group: self.outside_group,
        };
        let payload = log::encode(io.geometry().page_size, &stats, &self.events);
        let stream = self.config.handles;
        let tag = match self.config.isolation {
            Isolation::Initially => MIXED,
            Isolation::Persistently => 0,
        };
        let kind = ftlab_nand::PageKind::Meta;
        let (ppa, _) = match &mut self.units {
            Some(units) => {
                let die = units.free_die(io, None);
                let (block_handle, picker) = (&mut self.block_handle, &mut self.picker);
                io.program_placed(STATS_MARK, kind, payload, Purpose::Checkpoint, |io, _bad| {
                    unit_page(units, io, picker, block_handle, (stream, &[]), die, tag)
                })?
            }
            None => {
                let die = io.free_die_from(self.core.alloc.next_die());
                let (alloc, picker, block_handle, g) =
                    (&mut self.core.alloc, &mut self.picker, &mut self.block_handle, self.core.geometry);
                io.program_placed(STATS_MARK, kind, payload, Purpose::Checkpoint, |_io, bad| {
                    Self::place(alloc, picker, block_handle, &g, stream, tag, die, bad)
                })?
            }
        };
        self.stats_at = Some(ppa);
        self.dirty = false;
        Ok(())
    }

    /// The statistics and the event log of the newest readable record of
    /// `records` (sequence number, page), found by the recovery scan.
    fn restore(&mut self, io: &mut Io, mut records: Vec<(u64, Ppa)>) {
        records.sort_unstable_by_key(|&(seq, _)| std::cmp::Reverse(seq));
        for (_, ppa) in records {
            let Ok((payload, _)) = io.read(ppa, Purpose::Recovery) else { continue };
            let Some((stats, events)) = log::decode(&payload, self.config.pids() as usize) else { continue };
            self.host_pages = stats.host_pages;
            self.media_pages = stats.media_pages;
            self.media_reallocated = stats.media_reallocated;
            self.ru_not_fully_written = stats.ru_not_fully_written;
            self.outside_group = stats.outside_group;
            self.events = events;
            self.stats_at = Some(ppa);
            return;
        }
    }

    /// The FDP event log, oldest first, and how many older events it dropped.
    pub fn events(&self) -> (impl Iterator<Item = &Event>, u64) {
        (self.events.events.iter(), self.events.dropped)
    }

    /// Collects the unit of `group` with the fewest valid pages; returns
    /// false if no unit of the group has a page to reclaim.
    fn collect_unit(&mut self, io: &mut Io, group: u32) -> Result<bool, FtlError> {
        let Some(units) = &mut self.units else { return Ok(false) };
        let books = self.picker.units();
        // The unit with the fewest valid pages that has a page to reclaim: a
        // unit whose blocks went bad may be full of valid pages with fewer
        // than the others; such units are passed over.
        let mut passed = Vec::new();
        let victim = loop {
            let Some(u) = books.pick_in(group, io.now()) else { break None };
            if books.unit_valid(u) < units.capacity(io, u) {
                break Some(u);
            }
            books.remove_unit(u);
            passed.push(u);
        };
        for &u in &passed {
            books.insert_unit(u);
        }
        let Some(victim) = victim else { return Ok(false) };
        books.remove_unit(victim);
        let shape = units.shape;
        let first = shape.blocks(victim).next().map_or(0, |b| b.0 as usize);
        // With no unit of its own to copy into (its last free ones lost to a
        // power cut), garbage collection copies into an open unit of the
        // host streams it may share: the victim's handle's (persistently
        // isolated), any (initially).
        let handles = self.config.handles;
        let (stream, tag, fallback) = match self.config.isolation {
            Isolation::Initially => (handles, MIXED, (0..handles).collect::<Vec<u32>>()),
            Isolation::Persistently => {
                let pid = self.block_handle[first];
                (handles + u32::from(pid) % handles, pid, vec![u32::from(pid) % handles])
            }
        };
        let mut moved = 0;
        for b in shape.blocks(victim) {
            if io.programmed_pages(b) == 0 {
                continue;
            }
            let die = ftlab_nand::DieId(b.0 / shape.die_blocks);
            let block_handle = &mut self.block_handle;
            self.core.evacuate(io, &mut self.picker, b, |_alloc, books, io, _bad| {
                unit_page(units, io, books, block_handle, (stream, &fallback), die, tag)
            })?;
            for &lpn in self.core.moved() {
                self.media_pages[self.page_handle[lpn as usize] as usize] += 1;
            }
            moved += self.core.moved().len();
        }
        let pid = (self.block_handle[first] != MIXED).then_some(u32::from(self.block_handle[first]));
        let layout = self.core.layout;
        let holds_record = self.stats_at.is_some_and(|p| shape.blocks(victim).any(|b| layout.block_of(p) == b));
        self.reallocated(io, pid, group, moved, holds_record)?;
        let Some(units) = &mut self.units else { unreachable!("fdp places by units") };
        for b in shape.blocks(victim) {
            if io.programmed_pages(b) > 0 {
                self.core.reclaim(io, b, Purpose::Gc)?;
            }
        }
        if units.capacity(io, victim) > 0 {
            units.release(victim);
        }
        Ok(true)
    }

    /// Garbage collection in `group` while at most `gc_free_blocks` of its
    /// units are free.
    fn collect_in(&mut self, io: &mut Io, group: u32) -> Result<(), FtlError> {
        let free_target = self.config.gc_free_blocks;
        io.independent(|io| -> Result<(), FtlError> {
            while self.units.as_ref().is_some_and(|u| u.free_in(group) <= free_target) {
                if !self.collect_unit(io, group)? {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Writes `lpn` through a unit: the group of its placement identifier
    /// (none: handle 0 of the group with the most room: good pages less
    /// valid ones). If the write needs a new unit and garbage collection left
    /// the group no more than its reserve of `gc_free_blocks` free units (the
    /// host wrote more through the group's identifiers than it holds), the
    /// page goes to the other group with the most room, counted in
    /// `fdp_pages_outside_group`.
    fn write_by_units(&mut self, io: &mut Io, lpn: Lpn, data: Payload, pid: Option<u32>) -> Result<u32, FtlError> {
        let l = self.core.index(lpn)?;
        let handles = self.config.handles;
        let mut group = match pid {
            Some(p) => p / handles,
            None => self.picker.units().roomiest_group(&self.group_pages, None).unwrap_or(0),
        };
        let pid = pid.unwrap_or(group * handles);
        let (stream, tag) = (pid % handles, pid as u8);
        self.collect_in(io, group)?;
        let Some(units) = &self.units else { unreachable!("fdp places by blocks") };
        // The group's last free units are garbage collection's: a host write
        // that needs a new unit where collection gained none goes elsewhere.
        if !units.open_room_in(io, stream, group) && units.free_in(group) <= self.config.gc_free_blocks {
            if let Some(other) = self.picker.units().roomiest_group(&self.group_pages, Some(group)) {
                group = other;
                self.outside_group += 1;
                self.collect_in(io, group)?;
            }
        }
        let Some(units) = &mut self.units else { unreachable!("fdp places by blocks") };
        let old = self.core.table.get(l);
        let die = units.free_die(io, Some(group));
        let block_handle = &mut self.block_handle;
        self.core.write_placed_tagged(io, &mut self.picker, lpn, old, data, tag, |_alloc, books, io, _bad| {
            unit_page(units, io, books, block_handle, (stream, &[]), die, tag)
        })?;
        Ok(pid)
    }

    /// The next page of `stream` on `die`, after retiring `bad`; a block
    /// opened is recorded as holding `handle`'s data.
    #[allow(clippy::too_many_arguments)]
    fn place(
        alloc: &mut BlockAllocator,
        picker: &mut Books,
        block_handle: &mut [u8],
        g: &Geometry,
        stream: u32,
        handle: u8,
        die: ftlab_nand::DieId,
        bad: Option<BlockId>,
    ) -> Result<Ppa, FtlError> {
        let ppa = alloc.place(stream, die, bad, |b| picker.insert(b))?;
        block_handle[g.block_of(ppa).0 as usize] = handle;
        Ok(ppa)
    }

    /// Collects one victim; returns false if no block has a page to reclaim.
    fn collect_one(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let Some(victim) = self.picker.pick(io.now()) else { return Ok(false) };
        if self.picker.valid(victim) >= self.core.geometry.pages_per_block {
            return Ok(false);
        }
        self.picker.remove(victim);
        let die = self.core.layout.die_of_block(victim);
        let (stream, handle) = match self.config.isolation {
            Isolation::Initially => (self.config.handles, MIXED),
            Isolation::Persistently => {
                let h = self.block_handle[victim.0 as usize];
                (self.config.handles + u32::from(h), h)
            }
        };
        let (block_handle, g) = (&mut self.block_handle, self.core.geometry);
        self.core.evacuate(io, &mut self.picker, victim, |alloc, picker, _io, bad| {
            Self::place(alloc, picker, block_handle, &g, stream, handle, die, bad)
        })?;
        for &lpn in self.core.moved() {
            self.media_pages[self.page_handle[lpn as usize] as usize] += 1;
        }
        let pid = (handle != MIXED).then_some(u32::from(handle));
        let holds_record = self.stats_at.is_some_and(|p| self.core.layout.block_of(p) == victim);
        self.reallocated(io, pid, 0, self.core.moved().len(), holds_record)?;
        self.core.reclaim(io, victim, Purpose::Gc)?;
        Ok(true)
    }
}

impl Ftl for Fdp {
    fn name(&self) -> &'static str {
        "fdp"
    }

    fn logical_pages(&self) -> u32 {
        self.core.logical_pages
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.core.read(io, lpn)
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        let l = self.core.index(lpn)?;
        let pid = match self.handle(hint) {
            Ok(pid) => pid,
            Err(e) => {
                self.events.log(EventType::InvalidPlacementIdentifier, hint.stream, 0, 0, io.now());
                self.dirty = true;
                return Err(e);
            }
        };
        self.dirty = true;
        if self.units.is_some() {
            let h = self.write_by_units(io, lpn, data, pid)?;
            self.page_handle[l] = h as u8;
            self.host_pages[h as usize] += 1;
            self.media_pages[h as usize] += 1;
            io.ack();
            return Ok(());
        }
        let h = pid.unwrap_or(0);
        let free_target = self.config.gc_free_blocks;
        io.independent(|io| -> Result<(), FtlError> {
            while self.core.alloc.free_blocks() <= free_target {
                if !self.collect_one(io)? {
                    break;
                }
            }
            Ok(())
        })?;
        let old = self.core.table.get(l);
        let die = io.free_die_from(self.core.alloc.next_die());
        let (block_handle, g) = (&mut self.block_handle, self.core.geometry);
        self.core.write_placed_tagged(io, &mut self.picker, lpn, old, data, h as u8, |alloc, picker, _io, bad| {
            Self::place(alloc, picker, block_handle, &g, h, h as u8, die, bad)
        })?;
        self.page_handle[l] = h as u8;
        self.host_pages[h as usize] += 1;
        self.media_pages[h as usize] += 1;
        io.ack();
        Ok(())
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = self.core.index(lpn)?;
        self.core.trim(&mut self.picker, l);
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        self.core.ram_bytes()
            + self.picker.ram_bytes()
            + (self.block_handle.len() + self.page_handle.len()) as u64
            + self.units.as_ref().map_or(0, Units::ram_bytes)
    }

    fn memory(&self) -> crate::FtlMemory {
        let mut m = self.core.memory(&self.picker);
        m.other +=
            (self.block_handle.len() + self.page_handle.len()) as u64 + self.units.as_ref().map_or(0, Units::ram_bytes);
        m
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut g = vec![
            ("fdp_host_pages", self.host_pages.iter().sum::<u64>() as f64),
            ("fdp_media_pages", self.media_pages.iter().sum::<u64>() as f64),
            ("fdp_events_media_reallocated", self.media_reallocated as f64),
            ("fdp_events_ru_not_fully_written", self.ru_not_fully_written as f64),
        ];
        if self.units.is_some() {
            g.push(("fdp_pages_outside_group", self.outside_group as f64));
        }
        // Per handle, so that a report follows each handle's WAF over time.
        for (h, (&host, &media)) in self.host_pages.iter().zip(&self.media_pages).enumerate() {
            g.push((HOST_PAGES_BY_HANDLE[h], host as f64));
            g.push((MEDIA_PAGES_BY_HANDLE[h], media as f64));
        }
        g
    }

    fn reset_counters(&mut self) {
        self.host_pages.iter_mut().for_each(|c| *c = 0);
        self.media_pages.iter_mut().for_each(|c| *c = 0);
        self.media_reallocated = 0;
        self.outside_group = 0;
    }

    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        vec![
            ("fdp_host_pages_by_handle", self.host_pages.iter().map(|&c| c as f64).collect()),
            ("fdp_media_pages_by_handle", self.media_pages.iter().map(|&c| c as f64).collect()),
        ]
        .into_iter()
        .chain(self.events.curves())
        .collect()
    }

    /// Writes are durable when acknowledged; FLUSH also writes the FDP
    /// statistics and event log to the medium, if they changed.
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        if self.dirty {
            self.persist(io)?;
        }
        Ok(())
    }

    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.core.check(&self.picker, flash)
    }
}

/// The next page of `stream` (else of the `fallback` streams' open units)
/// near `die` ([`Units::next_page`]): a unit opened is recorded as holding
/// `tag`'s data, a unit filled becomes a victim candidate in `books`.
fn unit_page(
    units: &mut Units,
    io: &Io,
    books: &mut Books,
    block_handle: &mut [u8],
    (stream, fallback): (u32, &[u32]),
    die: ftlab_nand::DieId,
    tag: u8,
) -> Result<Ppa, FtlError> {
    let shape = units.shape;
    units.next_page(
        io,
        stream,
        fallback,
        die,
        |u| shape.blocks(u).for_each(|o| block_handle[o.0 as usize] = tag),
        |u| books.units().insert_unit(u),
    )
}

/// The gauges of each handle's host pages (`fdp_host_pages_h<handle>`), as
/// [`Fdp`]'s total `fdp_host_pages`.
const HOST_PAGES_BY_HANDLE: [&str; MAX_HANDLES as usize] = [
    "fdp_host_pages_h0",
    "fdp_host_pages_h1",
    "fdp_host_pages_h2",
    "fdp_host_pages_h3",
    "fdp_host_pages_h4",
    "fdp_host_pages_h5",
    "fdp_host_pages_h6",
    "fdp_host_pages_h7",
    "fdp_host_pages_h8",
    "fdp_host_pages_h9",
    "fdp_host_pages_h10",
    "fdp_host_pages_h11",
    "fdp_host_pages_h12",
    "fdp_host_pages_h13",
    "fdp_host_pages_h14",
    "fdp_host_pages_h15",
    "fdp_host_pages_h16",
    "fdp_host_pages_h17",
    "fdp_host_pages_h18",
    "fdp_host_pages_h19",
    "fdp_host_pages_h20",
    "fdp_host_pages_h21",
    "fdp_host_pages_h22",
    "fdp_host_pages_h23",
    "fdp_host_pages_h24",
    "fdp_host_pages_h25",
    "fdp_host_pages_h26",
    "fdp_host_pages_h27",
    "fdp_host_pages_h28",
    "fdp_host_pages_h29",
    "fdp_host_pages_h30",
    "fdp_host_pages_h31",
];
/// The gauges of each handle's media pages (`fdp_media_pages_h<handle>`).
const MEDIA_PAGES_BY_HANDLE: [&str; MAX_HANDLES as usize] = [
    "fdp_media_pages_h0",
    "fdp_media_pages_h1",
    "fdp_media_pages_h2",
    "fdp_media_pages_h3",
    "fdp_media_pages_h4",
    "fdp_media_pages_h5",
    "fdp_media_pages_h6",
    "fdp_media_pages_h7",
    "fdp_media_pages_h8",
    "fdp_media_pages_h9",
    "fdp_media_pages_h10",
    "fdp_media_pages_h11",
    "fdp_media_pages_h12",
    "fdp_media_pages_h13",
    "fdp_media_pages_h14",
    "fdp_media_pages_h15",
    "fdp_media_pages_h16",
    "fdp_media_pages_h17",
    "fdp_media_pages_h18",
    "fdp_media_pages_h19",
    "fdp_media_pages_h20",
    "fdp_media_pages_h21",
    "fdp_media_pages_h22",
    "fdp_media_pages_h23",
    "fdp_media_pages_h24",
    "fdp_media_pages_h25",
    "fdp_media_pages_h26",
    "fdp_media_pages_h27",
    "fdp_media_pages_h28",
    "fdp_media_pages_h29",
    "fdp_media_pages_h30",
    "fdp_media_pages_h31",
];

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [crate::entry::Scheme {
    name: "fdp",
    summary: "an NVMe Flexible Data Placement device: page mapping with device GC, reclaim unit handles chosen by each write's placement identifier (its stream), initially or persistently isolated copies, FDP statistics and events per handle",
    paper: "NVMe TP4146 Flexible Data Placement (the placement half of 003's host-device split, as products ship it)",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("fdp", FdpConfig::default(), p, FdpConfig::validate),
}];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use ftlab_nand::SimTime;

    fn flash() -> Flash {
        crate::testing::flash(
            Geometry {
                channels: 1,
                ways_per_channel: 1,
                dies_per_way: 2,
                planes_per_die: 1,
                blocks_per_plane: 64,
                pages_per_block: 16,
                page_size: 4096,
                oob_size: 64,
            },
            1,
        )
    }

    /// WAF in total and per handle after writes of two handles: handle 0
    /// rewrites a small hot set, handle 1 writes its pages once and never
    /// again, interleaved.
    fn hot_and_cold(config: FdpConfig) -> (f64, Vec<f64>, Box<dyn Ftl>) {
        let mut flash = flash();
        let mut ftl: Box<dyn Ftl> = Box::new(Fdp::format(config, &mut flash.io(SimTime::ZERO)).unwrap());
        let n = ftl.logical_pages();
        let (hot, mut cold) = (n / 8, n / 8);
        let mut now = SimTime::ZERO;
        let mut x = 1u64;
        for i in 0..12 * n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (lpn, stream) = if i % 3 == 0 && cold < n {
                cold += 1;
                (cold - 1, 1)
            } else {
                ((x >> 33) as u32 % hot, 0)
            };
            let mut io = flash.io(now);
            // With one handle both go through it.
            let hint = Hint { stream: Some(stream % config.handles), ..Hint::default() };
            ftl.write(&mut io, Lpn(lpn), Payload::Token(u64::from(i)), &hint).unwrap();
            now = io.completion();
        }
        let gauges: std::collections::HashMap<_, _> = ftl.gauges().into_iter().collect();
        let curves = ftl.curves();
        let per: Vec<f64> = curves[1].1.iter().zip(&curves[0].1).map(|(m, h)| m / h.max(1.0)).collect();
        (gauges["fdp_media_pages"] / gauges["fdp_host_pages"], per, ftl)
    }

    #[test]
    fn separating_hot_and_cold_handles_lowers_the_cold_handles_waf() {
        let (mixed, _, _) = hot_and_cold(FdpConfig { handles: 1, ..FdpConfig::default() });
        let (apart, per, _) =
            hot_and_cold(FdpConfig { handles: 2, isolation: Isolation::Persistently, ..FdpConfig::default() });
        assert!(mixed > 1.2, "one handle mixes them: WAF {mixed}");
        assert!(apart < mixed, "apart {apart}, mixed {mixed}");
        // The cold handle's data, written once into units of its own, is
        // never copied: WAF 1.
        assert_eq!(per[1], 1.0, "{per:?}");
        assert!(per[0] > 1.0, "{per:?}");
    }

    /// Writes of every logical page, over and over, through the placement
    /// identifiers `pid(lpn)` on a device of two reclaim groups (one die
    /// each): the pages written outside their group, and every page read
    /// back.
    fn grouped_writes(pid: impl Fn(u32) -> u32) -> f64 {
        let config = FdpConfig { handles: 2, reclaim_groups: 2, ..FdpConfig::default() };
        let mut flash = flash();
        let mut ftl: Box<dyn Ftl> = Box::new(Fdp::format(config, &mut flash.io(SimTime::ZERO)).unwrap());
        let n = ftl.logical_pages();
        let mut now = SimTime::ZERO;
        let mut x = 3u64;
        let mut last = vec![0u64; n as usize];
        for i in 0..4 * u64::from(n) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = if i < u64::from(n) { i as u32 } else { (x >> 33) as u32 % n };
            let mut io = flash.io(now);
            let hint = Hint { stream: Some(pid(lpn)), ..Hint::default() };
            ftl.write(&mut io, Lpn(lpn), Payload::Token(i + 1), &hint).unwrap();
            last[lpn as usize] = i + 1;
            now = io.completion();
        }
        for (lpn, &t) in last.iter().enumerate() {
            assert_eq!(ftl.read(&mut flash.io(now), Lpn(lpn as u32)).unwrap(), Some(Payload::Token(t)), "lpn {lpn}");
        }
        ftl.check_invariants(&flash).unwrap();
        ftl.gauges().into_iter().find(|(g, _)| *g == "fdp_pages_outside_group").unwrap().1
    }

    #[test]
    fn a_group_written_past_its_room_spills_into_the_other_and_says_so() {
        // Each group holds its half of the pages: none written outside.
        assert_eq!(grouped_writes(|lpn| (lpn % 2) * 2), 0.0);
        // Every page through group 0's handles: more than group 0 holds, so
        // the device puts the rest in group 1, counts them and loses nothing.
        let outside = grouped_writes(|lpn| lpn % 2);
        assert!(outside > 0.0, "{outside}");
    }

    #[test]
    fn a_handle_past_the_last_is_refused_and_changes_nothing() {
        let mut flash = flash();
        let mut ftl =
            Fdp::format(FdpConfig { handles: 2, ..FdpConfig::default() }, &mut flash.io(SimTime::ZERO)).unwrap();
        let hint = Hint { stream: Some(2), ..Hint::default() };
        let e = ftl.write(&mut flash.io(SimTime::ZERO), Lpn(3), Payload::Token(1), &hint).unwrap_err();
        assert!(e.to_string().contains("placement handle 2") && e.to_string().contains("ftl.handles"), "{e}");
        assert_eq!(ftl.read(&mut flash.io(SimTime::ZERO), Lpn(3)).unwrap(), None);
        let bad = FdpConfig { handles: 33, ..FdpConfig::default() }.validate().unwrap_err();
        assert!(bad.to_string().contains("fdp.handles"), "{bad}");
    }

    #[test]
    fn handles_survive_a_power_cut_and_partial_units_are_reported() {
        let config = FdpConfig { handles: 2, isolation: Isolation::Persistently, ..FdpConfig::default() };
        let mut flash = flash();
        let mut ftl: Box<dyn Ftl> = Box::new(Fdp::format(config, &mut flash.io(SimTime::ZERO)).unwrap());
        let n = ftl.logical_pages();
        let mut now = SimTime::ZERO;
        let mut written = std::collections::HashMap::new();
        let write = |ftl: &mut Box<dyn Ftl>, flash: &mut Flash, now: &mut SimTime, lpn: u32, h: u32, v: u64| {
            let mut io = flash.io(*now);
            ftl.write(&mut io, Lpn(lpn), Payload::Token(v), &Hint { stream: Some(h), ..Hint::default() }).unwrap();
            *now = io.completion();
            (lpn, v)
        };
        // Handle 1: the upper half, once; handle 0: the lower half, over and
        // over; then a cut with units of both handles half written.
        for i in 0..3 * n {
            let (lpn, h) = if i % 4 == 0 && n / 2 + i / 4 < n { (n / 2 + i / 4, 1) } else { (i * 7 % (n / 2), 0) };
            let (l, v) = write(&mut ftl, &mut flash, &mut now, lpn, h, u64::from(i) + 1);
            written.insert(l, v);
        }
        flash.power_cut(now);
        let mut ftl: Box<dyn Ftl> = Box::new(Fdp::recover(config, &mut flash.io(now)).unwrap());
        let g: std::collections::HashMap<_, _> = ftl.gauges().into_iter().collect();
        assert!(g["fdp_events_ru_not_fully_written"] > 0.0, "{g:?}");
        for (&lpn, &v) in &written {
            assert_eq!(ftl.read(&mut flash.io(now), Lpn(lpn)).unwrap(), Some(Payload::Token(v)), "lpn {lpn}");
        }
        ftl.reset_counters();
        // Handle 0 on: garbage collection now and then moves the partial
        // units of handle 1 too, into handle 1's own units; each handle's
        // copies are counted to it, and the data stays.
        let mut x = 7u64;
        for i in 0..4 * n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = (x >> 33) as u32 % (n / 2);
            let (l, v) = write(&mut ftl, &mut flash, &mut now, lpn, 0, u64::from(i) + 10 * u64::from(n));
            written.insert(l, v);
        }
        ftl.check_invariants(&flash).unwrap();
        let c = ftl.curves();
        assert!(c[1].1[0] > c[0].1[0], "handle 0's copies: {c:?}");
        assert_eq!(c[0].1[1], 0.0, "handle 1 wrote nothing");
        for (&lpn, &v) in &written {
            assert_eq!(ftl.read(&mut flash.io(now), Lpn(lpn)).unwrap(), Some(Payload::Token(v)), "lpn {lpn}");
        }
    }
}
