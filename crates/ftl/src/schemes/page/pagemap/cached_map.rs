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
//! What is not as MQSim: translation programs take the time of a program
//! but no page (MQSim writes them to a translation block of the plane and
//! collects those blocks too); the table is shared by every flow (MQSim's
//! `CMT_Sharing_Mode = EQUAL_PARTITIONING` gives each flow its own part);
//! preconditioning leaves the table holding the last pages it wrote, clean
//! (MQSim brings in the pages its workload statistics pick, clean); a slot
//! waiting for its translation read counts as taken in as soon as the read is
//! issued; and a command's place in time is settled when it is issued, so a
//! read a later command finds under way is one issued by an earlier command.

use std::collections::HashMap;

use ftlab_nand::{DieId, SimTime};

use crate::schemes::page::dftl::Cmt;
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

/// The table and the translation reads and programs under way.
#[derive(Debug)]
pub(super) struct CachedMap {
    cmt: Cmt,
    capacity: u32,
    entries_per_page: u32,
    /// Bytes of one entry in a translation page (which sector holds it).
    entry_bytes: u32,
    /// Translation pages being read: when the read ends.
    arriving: HashMap<u32, SimTime>,
    /// Translation pages being written back: when the program ends.
    departing: HashMap<u32, SimTime>,
    /// Pages taken in before their translation read ended: when it ends.
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
    /// A table of `capacity` entries over `logical_pages` pages, `entries_per_page`
    /// to a translation page of `page_size` bytes.
    pub(super) fn new(
        capacity: u32,
        entries_per_page: u32,
        logical_pages: u32,
        page_size: u32,
        programmed: bool,
    ) -> Self {
        let entries_per_page = entries_per_page.max(1);
        CachedMap {
            cmt: Cmt::new(capacity, entries_per_page, logical_pages.div_ceil(entries_per_page)),
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

    /// Looks `lpn` up before a read or a write of it, and does the flash work
    /// a miss takes (see the module documentation); what `io` issues next
    /// waits for the translation read. `die_of` gives the die of a
    /// translation page.
    pub(super) fn translate(&mut self, io: &mut Io, lpn: u32, die_of: impl Fn(u32) -> DieId) -> Result<(), FtlError> {
        let now = io.now();
        self.forget_past(now);
        if self.cmt.lookup(lpn).is_some() {
            if let Some(&end) = self.waiting.get(&lpn) {
                io.start_after(end);
            }
            return Ok(());
        }
        self.make_room(io, &die_of)?;
        let t = lpn / self.entries_per_page;
        self.cmt.insert_clean(lpn, None);
        if let Some(&end) = self.arriving.get(&t).filter(|&&end| end > now) {
            self.waiting.insert(lpn, end);
            io.start_after(end);
        } else if self.departing.get(&t).is_none_or(|&end| end <= now) {
            let end = io.map_read(die_of(t), SECTOR, true)?;
            self.arriving.insert(t, end);
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
        if !self.cmt.mark_dirty(lpn) {
            self.cmt.set_dirty(lpn, None);
        }
    }

    /// After garbage collection moved `lpn`: dirty in the table, taken in if
    /// it was not there.
    pub(super) fn moved(&mut self, io: &mut Io, lpn: u32, die_of: impl Fn(u32) -> DieId) -> Result<(), FtlError> {
        if self.cmt.peek(lpn).is_none() {
            self.forget_past(io.now());
            self.make_room(io, &die_of)?;
        }
        self.written(lpn);
        Ok(())
    }

    /// Drops the least recently used entry while the table is full; a dirty
    /// one is written back with its translation page's other dirty entries.
    fn make_room(&mut self, io: &mut Io, die_of: &impl Fn(u32) -> DieId) -> Result<(), FtlError> {
        while self.cmt.len() >= self.capacity {
            let Some((old, dirty)) = self.cmt.oldest() else { break };
            self.cmt.remove(old);
            self.waiting.remove(&old);
            if dirty {
                self.write_back(io, old / self.entries_per_page, die_of(old / self.entries_per_page))?;
            }
        }
        Ok(())
    }

    /// Writes translation page `t` back: the merge read of the sectors
    /// holding its cached clean entries, then the program, on `die`, beside
    /// the command that caused it.
    fn write_back(&mut self, io: &mut Io, t: u32, die: DieId) -> Result<(), FtlError> {
        let first = t * self.entries_per_page;
        let mut sectors: Vec<u32> = self
            .cmt
            .iter_range(first, first.saturating_add(self.entries_per_page))
            .filter(|&(_, dirty)| !dirty)
            .map(|(lpn, _)| (lpn - first) * self.entry_bytes / SECTOR)
            .collect();
        sectors.dedup();
        self.cmt.clean_tpage(t);
        let bytes = sectors.len() as u32 * SECTOR;
        let programmed = self.programmed;
        let (read_end, program_end) = io.independent(|io| -> Result<_, FtlError> {
            let read_end = io.map_read(die, bytes, true)?;
            // Never programmed: departing for good, as the matched
            // simulator's translation pages are once written back.
            let program_end = if programmed { io.map_program(die)? } else { SimTime(u64::MAX) };
            Ok((read_end, program_end))
        })?;
        self.arriving.insert(t, read_end);
        self.departing.insert(t, program_end);
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
        self.cmt.counters().gauges()
    }

    /// At the start of measurement: the counts zeroed, and the table clean
    /// (what preconditioning wrote is on flash, as MQSim's preconditioning
    /// leaves its table).
    pub(super) fn measurement_starts(&mut self) {
        self.cmt.reset_counters();
        while let Some(t) = self.cmt.most_dirty_tpage() {
            self.cmt.clean_tpage(t);
        }
    }

    /// RAM of the table's entries.
    pub(super) fn ram_bytes(&self) -> u64 {
        self.cmt.ram_bytes()
    }
}
