//! The matched simulator's cached mapping table for `gc_model = "mqsim"`
//! (`ftl.cmt_entries`; MQSim's `Ideal_Mapping_Table = false`), as MQSim's
//! `Address_Mapping_Unit_Page_Level.cpp` runs it. The whole page map stays in
//! RAM, as it does in MQSim itself (its global mapping table); what is
//! modelled is the flash work of a table that holds only `cmt_entries`
//! entries:
//!
//! - **Lookups.** Every host page read and every page write (a host write,
//!   or a write-back of the data cache) looks its logical page up. A hit
//!   costs nothing and makes the entry most recently used; so does the
//!   write's own lookup of the page's old place (lines 509-580). A
//!   write-back of the data cache looks its page up when it joins its die's
//!   queue ([`crate::Ftl::prepare_write`]), and is issued only once its
//!   translation is in, as MQSim translates a write before it joins its
//!   chip's queue (`Translate_lpa_to_ppa_and_dispatch`, lines 509-580, and
//!   `manage_unsuccessful_translation`); it is not looked up again.
//! - **A miss** reads the page's translation page, translation page `t =
//!   lpn / entries_per_page`, which lives on the plane the allocation scheme
//!   gives logical page `t` (its translation writes are placed like user
//!   writes, line 1200): a page read's sense and one sector over the channel
//!   (line 1640), issued as the host read it serves so that it passes queued
//!   programs with reads first (MQSim's scheduler serves mapping reads
//!   first). The page's read or program waits for it. A miss on a page whose
//!   translation page is already being read waits for that read instead
//!   (lines 1484-1518); one whose translation page is being written back is
//!   served from RAM at once (lines 1520-1546). MQSim stores every
//!   translation page on flash at start (`Store_mapping_table_on_flash_at_start`),
//!   so every other miss reads flash.
//! - **Room.** An entry taken in makes room by dropping the least recently
//!   used; a dirty one is written back with every other dirty entry of its
//!   translation page (lines 1571-1626): a read of the translation page for
//!   the sectors holding the page's cached clean entries (the merge), then a
//!   program of the whole page. Neither delays the command that caused them.
//!   Later misses on that translation page wait for the merge read, and are
//!   served from RAM while the page counts as being written back.
//! - **The program never runs** (`cmt_writes = "never"`, the default): MQSim
//!   queues translation writes in `MappingWriteTRQueue`
//!   (`TSU_OutofOrder.cpp:191`, `TSU_Priority_OutOfOrder.cpp:259`), which its
//!   schedulers never serve (`service_write_transaction` takes the GC and
//!   user write queues only), so a translation page once written back counts
//!   as being written back for the rest of the run, and every later miss on
//!   it is served from RAM: on its root file's scenario 2 (reads only) MQSim
//!   creates 72,233 translation writes and its chips execute no program.
//!   `cmt_writes = "programmed"` programs the page on the same die after the
//!   merge read, and misses read flash again once the program has ended.
//! - **Garbage collection.** A page moved by garbage collection is marked
//!   dirty in the table, taken in (making room) if it was not there
//!   (`Allocate_new_page_for_gc`, lines 757-830).
//!
//! - **Domains** (`ftl.cmt_domains`). MQSim gives each flow an address
//!   mapping domain with its own table and its own translation pages,
//!   numbered from 0 (lines 205-220, 322-338); with `CMT_Sharing_Mode =
//!   SHARED` each flow's table has the whole capacity, as the shared table is
//!   created inside the loop over the flows (line 338). With `cmt_domains =
//!   n` the logical space is cut into n parts as `[[flow]]` runs cut it, each
//!   with its own table of `cmt_entries` entries, and its translation pages
//!   placed like its logical pages from 0.
//!
//! What is not as MQSim: translation programs take the time of a program
//! but no page (MQSim writes them to a translation block of the plane and
//! collects those blocks too);
//! preconditioning leaves the table holding the last pages it wrote, clean
//! (MQSim brings in the pages its workload statistics pick, clean); a slot
//! waiting for its translation read counts as taken in as soon as the read is
//! issued; and a command's place in time is settled when it is issued, so a
//! read a later command finds under way is one issued by an earlier command.

use std::collections::HashMap;

use ftlab_nand::{DieId, SimTime};

use crate::schemes::page::dftl::{Cmt, CmtCounters};
use crate::{FtlError, Io};

/// Bytes of a sector: a translation read moves one (MQSim's
/// `SECTOR_SIZE_IN_BYTE`), the merge read whole sectors.
const SECTOR: u32 = 512;

/// Entries of a translation page by MQSim's rule: a directory entry holds a
/// physical page number and a bit per sector of the page, `ceil((log2(physical
/// pages) + sectors per page) / 8)` bytes (`Address_Mapping_Unit_Page_Level.cpp:326-330`).
pub fn mqsim_entries_per_page(physical_pages: u64, page_size: u32) -> u32 {
    let sectors = page_size / SECTOR;
    let bits = (physical_pages.max(2) as f64).log2() + f64::from(sectors);
    let bytes = (bits / 8.0).ceil().max(1.0) as u32;
    (page_size / bytes).max(1)
}

/// Entries MQSim's table of `cmt_bytes` bytes holds: each entry a logical and
/// a physical page number and the bit per sector, `ceil((2 log2(physical
/// pages) + sectors per page) / 8)` bytes (line 326).
pub fn mqsim_cmt_entries(cmt_bytes: u64, physical_pages: u64, page_size: u32) -> u64 {
    let sectors = page_size / SECTOR;
    let bits = 2.0 * (physical_pages.max(2) as f64).log2() + f64::from(sectors);
    let bytes = (bits / 8.0).ceil().max(1.0) as u64;
    cmt_bytes / bytes
}

/// The tables and the translation reads and programs under way.
#[derive(Debug)]
pub(super) struct CachedMap {
    /// One table a domain (`ftl.cmt_domains`), over the domain's own page
    /// numbers (its first page is 0).
    tables: Vec<Cmt>,
    /// Logical pages of a domain (the last takes what is left).
    domain_pages: u32,
    /// Translation pages a domain's keys are apart in the maps below (those
    /// of the largest, the last).
    tpages_per_domain: u32,
    /// Entries of each table.
    capacity: u32,
    entries_per_page: u32,
    /// Bytes of one entry in a translation page (which sector holds it).
    entry_bytes: u32,
    /// Translation pages being read (keyed by [`CachedMap::key`]): when the
    /// read ends.
    arriving: HashMap<u32, SimTime>,
    /// Translation pages being written back: when the program ends.
    departing: HashMap<u32, SimTime>,
    /// Pages (the device's page numbers) taken in before their translation
    /// read ended: when it ends.
    waiting: HashMap<u32, SimTime>,
    /// Translation write-backs are programmed (`cmt_writes = "programmed"`);
    /// else only their merge reads run, and a page written back counts as
    /// departing for good.
    programmed: bool,
    /// Entries of the three maps above at which the past is next forgotten
    /// (twice what was left the last time: amortised constant time).
    purge_at: usize,
}

impl CachedMap {
    /// `domains` tables of `capacity` entries each over `logical_pages` pages
    /// cut into that many parts, `entries_per_page` to a translation page of
    /// `page_size` bytes.
    pub(super) fn new(
        capacity: u32,
        entries_per_page: u32,
        logical_pages: u32,
        domains: u32,
        page_size: u32,
        programmed: bool,
    ) -> Self {
        let entries_per_page = entries_per_page.max(1);
        let domains = domains.clamp(1, logical_pages.max(1));
        let domain_pages = (logical_pages / domains).max(1);
        let last = logical_pages.saturating_sub((domains - 1) * domain_pages).max(1);
        let tpages_per_domain = last.div_ceil(entries_per_page);
        let tables = (0..domains)
            .map(|d| {
                let pages = if d + 1 == domains { last } else { domain_pages };
                Cmt::new(capacity, entries_per_page, pages.div_ceil(entries_per_page))
            })
            .collect();
        CachedMap {
            tables,
            domain_pages,
            tpages_per_domain,
            capacity,
            entries_per_page,
            entry_bytes: (page_size / entries_per_page).max(1),
            arriving: HashMap::new(),
            departing: HashMap::new(),
            waiting: HashMap::new(),
            programmed,
            purge_at: 256,
        }
    }

    /// Entries of a translation page.
    pub(super) fn entries_per_page(&self) -> u32 {
        self.entries_per_page
    }

    /// `lpn`'s domain and its page number in it.
    #[inline]
    fn locate(&self, lpn: u32) -> (usize, u32) {
        let d = ((lpn / self.domain_pages) as usize).min(self.tables.len() - 1);
        (d, lpn - d as u32 * self.domain_pages)
    }

    /// The maps' key of translation page `t` of domain `d`.
    #[inline]
    fn key(&self, d: usize, t: u32) -> u32 {
        d as u32 * self.tpages_per_domain + t
    }

    /// The die of translation page `t` of domain `d`.
    fn die(&self, d: usize, t: u32, die_of: &impl Fn(u32, u32) -> DieId) -> DieId {
        die_of(d as u32 * self.domain_pages + t * self.entries_per_page, t)
    }

    /// Looks `lpn` up before a read or a write of it, and does the flash work
    /// a miss takes (see the module documentation); what `io` issues next
    /// waits for the translation read. `die_of` gives the die of a
    /// translation page from the device's page number of its first entry and
    /// its number in its domain.
    pub(super) fn translate(
        &mut self,
        io: &mut Io,
        lpn: u32,
        die_of: impl Fn(u32, u32) -> DieId,
    ) -> Result<(), FtlError> {
        let now = io.now();
        self.forget_past(now);
        let (d, local) = self.locate(lpn);
        if self.tables[d].lookup(local).is_some() {
            if let Some(&end) = self.waiting.get(&lpn) {
                io.start_after(end);
            }
            return Ok(());
        }
        self.make_room(io, d, &die_of)?;
        let t = local / self.entries_per_page;
        let key = self.key(d, t);
        self.tables[d].insert_clean(local, None);
        if let Some(&end) = self.arriving.get(&key).filter(|&&end| end > now) {
            self.waiting.insert(lpn, end);
            io.start_after(end);
        } else if self.departing.get(&key).is_none_or(|&end| end <= now) {
            let end = io.map_read(self.die(d, t, &die_of), SECTOR, true)?;
            self.arriving.insert(key, end);
            self.waiting.insert(lpn, end);
        }
        Ok(())
    }

    /// When `lpn`'s translation is in the table (`now` if it is, or if no
    /// read for it is under way).
    pub(super) fn ready_at(&self, lpn: u32, now: SimTime) -> SimTime {
        self.waiting.get(&lpn).map_or(now, |&end| end.max(now))
    }

    /// Marks `lpn` dirty after its write (it was looked up by
    /// [`CachedMap::translate`]), keeping its place in the LRU order.
    pub(super) fn written(&mut self, lpn: u32) {
        let (d, local) = self.locate(lpn);
        if !self.tables[d].mark_dirty(local) {
            self.tables[d].set_dirty(local, None);
        }
    }

    /// After garbage collection moved `lpn`: dirty in the table, taken in if
    /// it was not there.
    pub(super) fn moved(&mut self, io: &mut Io, lpn: u32, die_of: impl Fn(u32, u32) -> DieId) -> Result<(), FtlError> {
        let (d, local) = self.locate(lpn);
        if self.tables[d].peek(local).is_none() {
            self.forget_past(io.now());
            self.make_room(io, d, &die_of)?;
        }
        self.written(lpn);
        Ok(())
    }

    /// Drops the least recently used entry of domain `d`'s table while it is
    /// full; a dirty one is written back with its translation page's other
    /// dirty entries.
    fn make_room(&mut self, io: &mut Io, d: usize, die_of: &impl Fn(u32, u32) -> DieId) -> Result<(), FtlError> {
        while self.tables[d].len() >= self.capacity {
            let Some((old, dirty)) = self.tables[d].oldest() else { break };
            self.tables[d].remove(old);
            self.waiting.remove(&(d as u32 * self.domain_pages + old));
            if dirty {
                let t = old / self.entries_per_page;
                self.write_back(io, d, t, self.die(d, t, die_of))?;
            }
        }
        Ok(())
    }

    /// Writes translation page `t` of domain `d` back: the merge read of the
    /// sectors holding its cached clean entries, then the program, on `die`,
    /// beside the command that caused it.
    fn write_back(&mut self, io: &mut Io, d: usize, t: u32, die: DieId) -> Result<(), FtlError> {
        let first = t * self.entries_per_page;
        let mut sectors: Vec<u32> = self.tables[d]
            .iter_range(first, first.saturating_add(self.entries_per_page))
            .filter(|&(_, dirty)| !dirty)
            .map(|(lpn, _)| (lpn - first) * self.entry_bytes / SECTOR)
            .collect();
        sectors.dedup();
        self.tables[d].clean_tpage(t);
        let bytes = sectors.len() as u32 * SECTOR;
        let programmed = self.programmed;
        let (read_end, program_end) = io.independent(|io| -> Result<_, FtlError> {
            let read_end = io.map_read(die, bytes, true)?;
            // Never programmed: departing for good, as the matched
            // simulator's translation pages are once written back.
            let program_end = if programmed { io.map_program(die)? } else { SimTime(u64::MAX) };
            Ok((read_end, program_end))
        })?;
        let key = self.key(d, t);
        self.arriving.insert(key, read_end);
        self.departing.insert(key, program_end);
        Ok(())
    }

    /// Forgets the reads and programs that ended by `now` (a command issued
    /// at `now` or later no longer waits for them).
    fn forget_past(&mut self, now: SimTime) {
        if self.arriving.len() + self.departing.len() + self.waiting.len() < self.purge_at {
            return;
        }
        self.arriving.retain(|_, end| *end > now);
        self.departing.retain(|_, end| *end > now);
        self.waiting.retain(|_, end| *end > now);
        self.purge_at = (2 * (self.arriving.len() + self.departing.len() + self.waiting.len())).max(256);
    }

    /// Hit and miss counts as gauges (`cmt_hits`, `cmt_misses`, `cmt_hit_ratio`).
    pub(super) fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut all = CmtCounters::default();
        for c in self.tables.iter().map(Cmt::counters) {
            all.hits += c.hits;
            all.misses += c.misses;
        }
        all.gauges()
    }

    /// At the start of measurement: the counts zeroed, and the table clean
    /// (what preconditioning wrote is on flash, as MQSim's preconditioning
    /// leaves its table).
    pub(super) fn measurement_starts(&mut self) {
        for table in &mut self.tables {
            table.reset_counters();
            while let Some(t) = table.most_dirty_tpage() {
                table.clean_tpage(t);
            }
        }
    }

    /// RAM of the tables' entries.
    pub(super) fn ram_bytes(&self) -> u64 {
        self.tables.iter().map(Cmt::ram_bytes).sum()
    }
}
