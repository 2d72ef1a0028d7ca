//! MQSim's write cache in front of any FTL: the "advanced" data cache manager
//! of MQSim (CMU SAFARI, `src/ssd/Data_Cache_Manager_Flash_Advanced.cpp` at
//! 7ec40e3) in its `WRITE_CACHE` mode, so a configuration brought across from
//! MQSim keeps the response times its cache gives.
//!
//! What it does, in MQSim's order:
//!
//! 1. **Back pressure.** A host write is taken into the cache page by page
//!    while the write-backs in flight hold fewer than `writeback_limit_sectors`
//!    sectors of 512 bytes (MQSim: planes x sectors per page,
//!    `SSD_Device.cpp:339`); otherwise it waits until enough of them finish,
//!    first come first served (`Data_Cache_Manager_Flash_Advanced.cpp:281-283`,
//!    `:471-479`).
//! 2. **A slot.** A page not in the cache takes a slot; a full cache evicts its
//!    least recently written slot, and an evicted page not yet written back is
//!    read out of DRAM and then written to flash (`:296-305`, `:337-345`).
//! 3. **Hot or cold.** A page the request's stream has not written since the
//!    hot-data window last began (MQSim's bloom filter, cleared every second,
//!    `:318-324`, `:348-352`) is cold: it is written back to flash at once. A
//!    hot page stays in DRAM, dirty, until it is evicted.
//! 4. **The DRAM copy.** The request's bytes go into DRAM as one access on the
//!    cache's one DRAM channel, which serves accesses in turn; the host is
//!    acknowledged when that access ends (`:327-335`, `:516-531`). An access
//!    takes MQSim's time (`Data_Cache_Manager_Base.h:66-76`,
//!    [`DramTiming::access_ns`]). A write held at the limit books its access
//!    for when it gets in, and an access asked for before then (a read hit)
//!    fits in before it if the gap holds it, else goes after it (MQSim would
//!    serve it first; the held write's acknowledgement is settled already).
//!    Where the dispatcher holds writes ([`Ftl::write_room_at`]) nothing is
//!    booked ahead.
//! 5. **Leaving.** A page whose write-back has finished leaves the cache,
//!    unless it was written again meanwhile (`:453-460`).
//! 6. **Reads.** A host read of a page in the cache is one DRAM access of the
//!    page; any other goes to the FTL.
//! 7. **Write-backs wait for their chip.** A write-back joins a queue of its
//!    die and is issued when that die falls free, one at a time, so a host
//!    read arriving meanwhile waits only for the operation under way there:
//!    MQSim's cache hands write-back transactions to the transaction
//!    scheduler, which gives an idle chip a waiting read before a write
//!    (`TSU_Base.h:95-97`). A write taken in while the write-backs hold the
//!    limit (1.) waits in the cache, first come first served, and its
//!    write-back joins its die's queue only when a write-back finishes and
//!    the limit allows. A dispatcher that holds writes until the cache has
//!    room ([`Ftl::write_room_at`]; `[[flow]]`s dispatched per die, as the
//!    MQSim import sets) hands the cache each page only then, so no write
//!    waits in the cache. Otherwise when the host is acknowledged for such a
//!    write is worked out when it arrives (ftlab settles a command's
//!    completion when it is issued): the queues run forward as if no read came, each
//!    write-back taking a page transfer and a program, plus how much later
//!    than so estimated the last such write got in (reads that came). The
//!    queues and the flash work follow what does happen, not the estimate.
//!    This needs an FTL
//!    that tells the die a page's write goes to ([`crate::Placement::write_die`]:
//!    the page map's `gc_model = "mqsim"`); over any other, or with
//!    [`DataCacheParams::queue_writebacks`] off, a write-back is issued at
//!    once, reserved on its die behind the earlier ones, and a read waits for
//!    all of them.
//!
//! Where it differs from MQSim: a flush writes every dirty page back (MQSim
//! has no flush); a cached page's write-back queued and not yet issued
//! writes the page's newest data, so a page written again meanwhile is
//! written once, where MQSim's write-back carries the data it was made with
//! and the newer data stays dirty; the cache's unit
//! is the FTL's unit, and a request that covers part of one moves the bytes
//! [`Hint::bytes`] gives.
//!
//! Durability is [`Durability::OnFlush`]: a power cut loses what only DRAM
//! holds; [`Ftl::flush`] writes every dirty page back and completes when every
//! write-back is durable. Set through `[device.data_cache]`; the import of an
//! MQSim configuration sets it from `Caching_Mechanism=ADVANCED` with
//! `WRITE_CACHE` flows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};

use ftlab_nand::{DieId, Payload, SimTime};

use crate::layer::{Layer, Layered};
use crate::{check_lpn, Durability, Extension, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn};

/// Bytes of a sector, MQSim's unit of back pressure and of a request's size.
pub const SECTOR_BYTES: u64 = 512;

/// The cache's DRAM (MQSim's `Data_Cache_DRAM_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DramTiming {
    /// Bytes of a DRAM row (`Data_Cache_DRAM_Row_Size`).
    pub row_bytes: u32,
    /// Transfers a second, millions (`Data_Cache_DRAM_Data_Rate`).
    pub mt_per_s: u32,
    /// Bytes a burst carries (`Data_Cache_DRAM_Data_Busrt_Size`).
    pub burst_bytes: u32,
    /// Row to column delay, ns (`Data_Cache_DRAM_tRCD`).
    pub trcd_ns: u64,
    /// Column latency, ns (`Data_Cache_DRAM_tCL`).
    pub tcl_ns: u64,
    /// Row precharge, ns (`Data_Cache_DRAM_tRP`).
    pub trp_ns: u64,
}

impl Default for DramTiming {
    /// MQSim's defaults (`Device_Parameter_Set.cpp:15-20`).
    fn default() -> Self {
        DramTiming { row_bytes: 8192, mt_per_s: 800, burst_bytes: 4, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 }
    }
}

impl DramTiming {
    /// One access of `bytes`, ns, as MQSim's `estimate_dram_access_time`
    /// computes it, truncations included: within a row, tRCD + tCL + one burst
    /// time (1 / rate) per `2 x burst_bytes` bytes; beyond a row, a row's time
    /// plus tRP per two rows, then tRCD + tCL and the bytes past the last whole
    /// row divided (not multiplied) by the burst time, as MQSim has it.
    pub fn access_ns(&self, bytes: u64) -> u64 {
        let burst_ns = 1e9 / (f64::from(self.mt_per_s) * 1e6);
        let (row, burst) = (u64::from(self.row_bytes), u64::from(self.burst_bytes));
        if bytes <= row {
            self.trcd_ns + self.tcl_ns + ((bytes / burst / 2) as f64 * burst_ns) as u64
        } else {
            let per_row =
                self.trcd_ns + self.tcl_ns + ((row / burst / 2) as f64 * burst_ns + self.trp_ns as f64) as u64;
            (per_row as f64 * (bytes / row / 2) as f64) as u64
                + self.trcd_ns
                + self.tcl_ns
                + ((bytes % row) as f64 / (burst as f64 * burst_ns)) as u64
        }
    }
}

/// The cache's settings (`[device.data_cache]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataCacheParams {
    /// Slots: pages the cache holds (MQSim: `Data_Cache_Capacity` / page size).
    pub pages: u32,
    /// The DRAM.
    pub dram: DramTiming,
    /// Sectors the write-backs in flight may hold before host writes wait;
    /// `None`: planes x sectors per page, MQSim's.
    pub writeback_limit_sectors: Option<u64>,
    /// How long a page stays hot after its stream writes it, ns (MQSim: 1 s).
    pub hot_window_ns: u64,
    /// Write-backs wait in a queue of their die (see the module docs, 7.);
    /// off: each is issued at once.
    pub queue_writebacks: bool,
}

impl DataCacheParams {
    /// A cache of `pages` slots with MQSim's other defaults.
    pub fn new(pages: u32) -> Self {
        DataCacheParams {
            pages,
            dram: DramTiming::default(),
            writeback_limit_sectors: None,
            hot_window_ns: 1_000_000_000,
            queue_writebacks: true,
        }
    }

    /// The first setting out of range, naming its key.
    pub fn check(&self) -> Result<(), FtlError> {
        let key = |k: &str, why: String| Err(FtlError::config(format!("device.data_cache.{k}"), why));
        if self.pages == 0 {
            return key(
                "pages",
                "device.data_cache.pages = 0 is no cache: give at least 1 page, or leave [device.data_cache] out"
                    .into(),
            );
        }
        let d = &self.dram;
        for (k, v) in
            [("dram_row_bytes", d.row_bytes), ("dram_mt_per_s", d.mt_per_s), ("dram_burst_bytes", d.burst_bytes)]
        {
            if v == 0 {
                return key(k, format!("device.data_cache.{k} must be at least 1, got 0"));
            }
        }
        if d.mt_per_s > 1_000_000 {
            return key(
                "dram_mt_per_s",
                format!("device.data_cache.dram_mt_per_s must be at most 1,000,000, got {}", d.mt_per_s),
            );
        }
        for (k, v) in [("dram_trcd_ns", d.trcd_ns), ("dram_tcl_ns", d.tcl_ns), ("dram_trp_ns", d.trp_ns)] {
            if v > 1_000_000_000 {
                return key(k, format!("device.data_cache.{k} must be at most 1 s (1,000,000,000 ns), got {v}"));
            }
        }
        if self.writeback_limit_sectors == Some(0) {
            return key(
                "writeback_limit_sectors",
                "device.data_cache.writeback_limit_sectors = 0 would hold every write back: give at least 1, or leave \
                 it out for planes x sectors per page"
                    .into(),
            );
        }
        if self.hot_window_ns == 0 {
            return key("hot_window_ms", "device.data_cache.hot_window_ms must be more than 0".into());
        }
        Ok(())
    }
}

/// Builds a [`DataCache`] over the FTL `inner` builds.
#[derive(Debug)]
pub struct DataCacheBuilder {
    /// The FTL behind the cache.
    pub inner: Box<dyn FtlBuilder + Send + Sync>,
    /// The cache's settings.
    pub params: DataCacheParams,
}

impl FtlBuilder for DataCacheBuilder {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Layered(DataCache::new(self.inner.format(io)?, self.params.clone(), io)?)))
    }

    /// The cache was in DRAM: it comes back empty over the recovered FTL.
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(Layered(DataCache::new(self.inner.recover(io)?, self.params.clone(), io)?)))
    }
}

/// One cached page.
#[derive(Debug)]
struct Slot {
    data: Payload,
    hint: Hint,
    /// Not yet written back (or written again since).
    dirty: bool,
    /// Its place in the LRU order.
    stamp: u64,
    /// Sectors it holds.
    sectors: u64,
    /// When its write-back finishes and it leaves the cache.
    leaves_at: Option<SimTime>,
    /// Which slot of the page this is: a page evicted and written again gets
    /// a new one, and a write-back queued for the old one is not the new
    /// one's.
    generation: u64,
}

/// Buffers [`DataCache::estimate_admission`] reuses from call to call.
#[derive(Debug, Default)]
struct Scratch {
    free: Vec<SimTime>,
    queues: Vec<VecDeque<(SimTime, u64, u32)>>,
    flight: BinaryHeap<Reverse<(SimTime, u64)>>,
    /// Dies whose queue here is not empty.
    active: Vec<usize>,
    /// When each die with a queue here may issue next, by time (an entry is
    /// stale when the die's time has moved since; it is then skipped).
    next: BinaryHeap<Reverse<(SimTime, usize)>>,
    /// The cache's [`DataCache::version`] the state here was built from, the
    /// waiting writes it has admitted, and where it stopped.
    version: Option<u64>,
    /// Waiting writes admitted in the simulation, counted as
    /// [`DataCache::admitted`] counts them; resumed passes since the last
    /// full one (a full pass every 32 keeps the estimate near the queues).
    gated_used: u64,
    resumes: u32,
    depth: u64,
    t: SimTime,
}

/// A write-back waiting in the cache or in its die's queue.
#[derive(Debug)]
struct Queued {
    lpn: u32,
    /// Its die, and its plane there.
    die: usize,
    plane: u32,
    /// When it joined its die's queue: it is issued no earlier.
    at: SimTime,
    /// Sectors it holds of the back pressure.
    sectors: u64,
    /// For a write taken in at the limit: when it was estimated to get in,
    /// before the lag was added (see [`DataCache::admit`]).
    estimate: SimTime,
    /// An evicted page's data and hint (the page left the cache); `None`: a
    /// cached page, written back with its data at the time of issue if it is
    /// still dirty then and still the same slot (`generation`).
    evicted: Option<(Payload, Hint)>,
    generation: u64,
    /// The page offset its page would have in its block were pages placed
    /// when they join their die's queue, as MQSim places them (pairing at
    /// any page, [`ftlab_nand::Commands::multi_plane_any_page`]); set by
    /// [`DataCache::enqueue`].
    offset: u32,
    /// The pages its plane had given reads when it was placed
    /// ([`crate::Placement::pages_taken_by_reads`]).
    taken: u64,
}

impl Queued {
    /// A cached page's write-back of `sectors` sectors to `(die, plane)`,
    /// joining its die's queue at `at` (estimated then too), its slot's
    /// `generation`.
    fn new(lpn: u32, (die, plane): (usize, u32), at: SimTime, sectors: u64, generation: u64) -> Self {
        Queued { lpn, die, plane, at, sectors, estimate: at, evicted: None, generation, offset: 0, taken: 0 }
    }
}

/// What the cache did ([`DataCache::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DataCacheStats {
    /// Pages written back to flash at once (cold).
    pub writebacks: u64,
    /// Pages written into the cache that stayed in DRAM (hot).
    pub hot_writes: u64,
    /// Dirty pages written back on eviction.
    pub evictions: u64,
    /// Dirty pages written back by a flush.
    pub flushed: u64,
    /// Host reads served from DRAM.
    pub read_hits: u64,
    /// Write-backs that waited in their die's queue for it to fall free.
    pub queued_writebacks: u64,
    /// Their total wait there, ns.
    pub queued_ns: u64,
    /// Host writes that waited for write-backs to finish (back pressure).
    pub held_writes: u64,
    /// Their total wait, ns.
    pub held_ns: u64,
}

/// MQSim's write cache over `inner` (see the module docs).
#[derive(Debug)]
pub struct DataCache {
    inner: Box<dyn Ftl>,
    params: DataCacheParams,
    limit: u64,
    page_sectors: u64,
    page_bytes: u64,
    slots: HashMap<u32, Slot>,
    /// Slots by stamp, least recently written first.
    lru: BTreeMap<u64, u32>,
    next_stamp: u64,
    /// Pages each stream wrote since the hot window began.
    hot: HashMap<u32, HashSet<u32>>,
    next_reset: SimTime,
    /// Write-backs in flight: (finish, page, sectors).
    in_flight: BinaryHeap<Reverse<(SimTime, u32, u64)>>,
    /// Sectors they hold.
    depth: u64,
    /// No write is taken in before this (the waiting ones go first).
    accept_floor: SimTime,
    /// The DRAM channel's accesses to come, start to end (ns), none
    /// overlapping: a write held at the limit has its access booked for when
    /// it gets in, and an access asked for earlier fits before it.
    dram_busy: BTreeMap<u64, u64>,
    /// Bytes of the request being taken in, copied with its last page.
    request_bytes: u64,
    /// When every write-back issued so far is durable.
    written_back_until: SimTime,
    /// Per die, the write-backs waiting for it (with queued write-backs).
    queues: Vec<VecDeque<Queued>>,
    /// How many wait there in all.
    queued: usize,
    /// The dies whose queue is not empty.
    nonempty: Vec<usize>,
    /// No queued write-back is issued and none finishes before this (a
    /// lower bound: dies only fall free later): [`DataCache::pump`] up to an
    /// earlier time has nothing to do (a read-back's millions of reads).
    wake: SimTime,
    /// Bumped by every change the estimate's simulation does not foresee:
    /// a write-back queued without waiting, an eviction, a trim, a flush, a
    /// read through to the FTL (die time); the write-backs it foresaw being
    /// issued, finishing and admitted do not. Its state is good while this
    /// stands.
    version: u64,
    /// Writes that waited in the cache and were let in, since the start.
    admitted: u64,
    scratch: Scratch,
    /// Write-backs of writes taken in at the limit, waiting in the cache for
    /// room, first come first served; not counted in `depth` yet.
    gated: VecDeque<Queued>,
    /// Queued write-backs are on: the FTL tells a write's die.
    lazy: bool,
    /// Pages evicted whose write-back waits in a queue: their newest data
    /// (reads find it there) and how many such write-backs wait.
    departing: HashMap<u32, (Payload, u32)>,
    /// The chip has multi-plane programs, and planes a die.
    multi_plane: bool,
    planes: usize,
    /// Queued write-backs are paired as MQSim's scheduler pairs them (any
    /// page, [`ftlab_nand::Commands::multi_plane_any_page`]), and the pages a
    /// block holds.
    pair_any: bool,
    pages_per_block: u32,
    /// A page transfer and a program: a queued write-back's estimated time.
    writeback_ns: SimTime,
    /// Dies sharing one busy time (a chip's, with serial dies), for the estimate.
    dies_per_slot: usize,
    /// How much later than estimated the last write waiting in the cache
    /// got in: added to the next estimates.
    lag: SimTime,
    stats: DataCacheStats,
}

impl DataCache {
    /// A cache over `inner` (errors name `device.data_cache.*`).
    pub fn new(mut inner: Box<dyn Ftl>, params: DataCacheParams, io: &Io) -> Result<Self, FtlError> {
        params.check()?;
        let extension = inner.extension().name();
        if extension == "queued" {
            return Err(FtlError::config(
                "device.data_cache",
                format!(
                    "{} with gc_queue books its programs' time only as its dies take them, which the data cache's \
                     write-back estimates cannot follow: leave ftl.gc_queue out with [device.data_cache]",
                    inner.name()
                ),
            ));
        }
        if extension != Extension::None.name() {
            return Err(FtlError::config(
                "device.data_cache",
                format!(
                    "{} speaks {extension} commands, which would pass the data cache by and read around the pages it \
                     holds: leave [device.data_cache] out for it",
                    inner.name()
                ),
            ));
        }
        if u64::from(params.pages) >= u64::from(inner.logical_pages()) {
            return Err(FtlError::config(
                "device.data_cache.pages",
                format!(
                    "device.data_cache.pages = {} is not less than the {} logical pages {} exports: give a smaller cache",
                    params.pages,
                    inner.logical_pages(),
                    inner.name()
                ),
            ));
        }
        let g = io.geometry();
        let page_bytes = u64::from(inner.unit_bytes().unwrap_or(g.page_size));
        let page_sectors = page_bytes.div_ceil(SECTOR_BYTES).max(1);
        let planes = u64::from(g.channels)
            * u64::from(g.ways_per_channel)
            * u64::from(g.dies_per_way)
            * u64::from(g.planes_per_die);
        let limit = params.writeback_limit_sectors.unwrap_or(planes * (u64::from(g.page_size) / SECTOR_BYTES).max(1));
        // Queued write-backs need the die of every page's write: a probe of
        // the FTL's placement (a rule of its own, e.g. a static plane scheme).
        let lazy = params.queue_writebacks
            && inner.capabilities().placement.is_some_and(|p| p.write_die(Lpn(0), &Hint::default()).is_some());
        Ok(DataCache {
            inner,
            params,
            limit,
            page_sectors,
            page_bytes,
            slots: HashMap::new(),
            lru: BTreeMap::new(),
            next_stamp: 0,
            hot: HashMap::new(),
            next_reset: SimTime::ZERO,
            in_flight: BinaryHeap::new(),
            depth: 0,
            accept_floor: SimTime::ZERO,
            dram_busy: BTreeMap::new(),
            request_bytes: 0,
            written_back_until: SimTime::ZERO,
            queues: (0..g.dies()).map(|_| VecDeque::new()).collect(),
            queued: 0,
            nonempty: Vec::new(),
            wake: SimTime::ZERO,
            version: 0,
            admitted: 0,
            scratch: Scratch::default(),
            gated: VecDeque::new(),
            lazy,
            departing: HashMap::new(),
            multi_plane: io.commands().multi_plane,
            planes: g.planes_per_die.max(1) as usize,
            pair_any: lazy && io.commands().multi_plane && io.commands().multi_plane_any_page,
            pages_per_block: g.pages_per_block.max(1),
            writeback_ns: SimTime(
                io.timing().transfer(g.page_size + if io.commands().sector_transfers { 0 } else { g.oob_size }).0
                    + io.timing().program_ns,
            ),
            dies_per_slot: if io.commands().serial_dies { g.dies_per_way.max(1) as usize } else { 1 },
            lag: SimTime::ZERO,
            stats: DataCacheStats::default(),
        })
    }

    /// What the cache did so far.
    pub fn stats(&self) -> DataCacheStats {
        self.stats
    }

    /// Pages in the cache now.
    pub fn cached(&self) -> usize {
        self.slots.len()
    }

    /// Sectors the write-backs in flight may hold before writes wait.
    pub fn writeback_limit(&self) -> u64 {
        self.limit
    }

    /// Ends the write-backs finished by `t`: their sectors leave the back
    /// pressure, and their pages the cache unless written again since.
    fn retire(&mut self, t: SimTime) {
        while let Some(&Reverse((finish, lpn, sectors))) = self.in_flight.peek() {
            if finish > t {
                break;
            }
            self.in_flight.pop();
            self.depth -= sectors;
            if self.slots.get(&lpn).is_some_and(|s| s.leaves_at == Some(finish)) {
                if let Some(slot) = self.slots.remove(&lpn) {
                    self.lru.remove(&slot.stamp);
                }
            }
        }
    }

    /// When a page written at `now` is taken in: once the write-backs in flight
    /// hold fewer sectors than the limit, and no earlier than a write that
    /// waited before it.
    fn accept(&mut self, now: SimTime) -> SimTime {
        let mut t = now.max(self.accept_floor);
        self.retire(t);
        while self.depth >= self.limit {
            let Some(&Reverse((finish, _, _))) = self.in_flight.peek() else { break };
            t = t.max(finish);
            self.retire(t);
        }
        self.accept_floor = t;
        t
    }

    /// The die a write-back of `lpn` queues on, and its plane there (queued
    /// write-backs).
    fn place(&self, lpn: u32, hint: &Hint) -> (usize, u32) {
        let placement = self.inner.capabilities().placement;
        let die = placement.and_then(|p| p.write_die(Lpn(lpn), hint));
        // The plane matters only to multi-plane programs.
        let plane = if self.multi_plane && self.planes > 1 {
            placement.and_then(|p| p.write_plane(Lpn(lpn), hint)).unwrap_or(0)
        } else {
            0
        };
        (die.map_or(0, |d| d.0 as usize).min(self.queues.len().saturating_sub(1)), plane)
    }

    /// Puts `w` in its die's queue; it holds its sectors from now on. With
    /// pairing at any page it takes the next page offset of its plane: after
    /// the last write-back queued for the plane, else the FTL's next page
    /// there. The FTL prepares its write when it joins
    /// ([`Ftl::prepare_write`]: the cached mapping table's translation read),
    /// and it is issued no earlier than the FTL has it ready, behind the
    /// write-backs ready before it, as MQSim's write joins its chip's queue
    /// only once translated.
    fn enqueue(&mut self, io: &mut Io, mut w: Queued) -> Result<(), FtlError> {
        let inner = &mut self.inner;
        let ready = io.detached(w.at, |io| inner.prepare_write(io, Lpn(w.lpn)))?;
        w.at = w.at.max(ready);
        self.depth += w.sectors;
        let d = w.die;
        if self.pair_any {
            // Pages its plane gave reads since the one queued before it was
            // placed come between them.
            let placement = self.inner.capabilities().placement;
            let hint = w.evicted.as_ref().map_or_else(Hint::default, |e| e.1);
            w.taken = placement.map_or(0, |p| p.pages_taken_by_reads(Lpn(w.lpn), &hint));
            w.offset = match self.queues[d].iter().rev().find(|q| q.plane == w.plane) {
                Some(q) => {
                    let between = (w.taken.wrapping_sub(q.taken) % u64::from(self.pages_per_block)) as u32;
                    (q.offset + 1 + between) % self.pages_per_block
                }
                None => placement.and_then(|p| p.write_offset(Lpn(w.lpn), &hint)).unwrap_or(0),
            };
        }
        if self.queues[d].is_empty() {
            self.nonempty.push(d);
        }
        self.wake = self.wake.min(w.at);
        let q = &mut self.queues[d];
        let place = q.len() - q.iter().rev().take_while(|o| o.at > w.at).count();
        q.insert(place, w);
        self.queued += 1;
        Ok(())
    }

    /// Lets write-backs waiting in the cache join their dies' queues at `t`
    /// while the write-backs there and in flight hold fewer sectors than the
    /// limit.
    fn admit(&mut self, io: &mut Io, t: SimTime) -> Result<(), FtlError> {
        while self.depth < self.limit {
            let Some(mut w) = self.gated.pop_front() else { break };
            // How late it is against the time its write was acknowledged
            // for: the reads that came meanwhile.
            self.lag = t.saturating_sub(w.estimate);
            self.admitted += 1;
            w.at = w.at.max(t);
            self.enqueue(io, w)?;
        }
        Ok(())
    }

    /// Runs the queued write-backs up to `upto`, in time order: each is issued
    /// the moment its die falls free (and no earlier than it joined the
    /// queue), and each that finishes lets the ones waiting in the cache in.
    fn pump(&mut self, io: &mut Io, upto: SimTime) -> Result<(), FtlError> {
        if upto < self.wake {
            return Ok(());
        }
        loop {
            let mut issue: Option<(SimTime, usize)> = None;
            for &d in &self.nonempty {
                if let Some(w) = self.queues[d].front() {
                    let t = w.at.max(io.die_free_at(DieId(d as u32)));
                    if issue.is_none_or(|(n, _)| t < n) {
                        issue = Some((t, d));
                    }
                }
            }
            let finish = self.in_flight.peek().map(|r| r.0 .0);
            match (issue, finish) {
                (_, Some(f)) if f <= upto && issue.is_none_or(|(t, _)| f <= t) => {
                    self.retire(f);
                    self.admit(io, f)?;
                }
                (Some((t, d)), _) if t <= upto => self.issue(io, t, d)?,
                _ => {
                    self.wake = issue.map_or(SimTime(u64::MAX), |i| i.0).min(finish.unwrap_or(SimTime(u64::MAX)));
                    break;
                }
            }
        }
        Ok(())
    }

    /// Issues the write-back at the head of die `d`'s queue at `t`, with, on
    /// a chip with multi-plane programs, the first queued for each other plane
    /// of the die: one program of their pages, as MQSim's scheduler groups a
    /// chip's waiting write transactions for distinct planes
    /// (`TSU_Base.cpp`, `issue_command_to_chip`; the FTL programs together
    /// the pages at one page offset and the rest singly). A write-back whose
    /// page was written back meanwhile or trimmed is dropped.
    fn issue(&mut self, io: &mut Io, t: SimTime, d: usize) -> Result<(), FtlError> {
        let mut picked: Vec<usize> = vec![0];
        if self.pair_any && self.planes > 1 {
            // MQSim's rule: the head, and for each other plane the first
            // ready write-back at the head's page offset, from anywhere in
            // the queue.
            let q = &self.queues[d];
            let mut planes = 1u64 << (q[0].plane % 64);
            for (i, w) in q.iter().enumerate().skip(1) {
                if picked.len() == self.planes {
                    break;
                }
                let bit = 1u64 << (w.plane % 64);
                if w.at <= t && planes & bit == 0 && w.offset == q[0].offset {
                    planes |= bit;
                    picked.push(i);
                }
            }
        } else if self.multi_plane && self.planes > 1 {
            let q = &self.queues[d];
            let mut planes = 1u64 << (q[0].plane % 64);
            for (i, w) in q.iter().enumerate().skip(1) {
                if picked.len() == self.planes || w.at > t {
                    break;
                }
                let bit = 1u64 << (w.plane % 64);
                if planes & bit == 0 {
                    planes |= bit;
                    picked.push(i);
                }
            }
        }
        // What each picked write-back writes, and whether it writes (a slot
        // rewritten or trimmed since it was queued drops it); the cache's
        // slots do not change while the batch is issued.
        let mut batch: Vec<(u32, Payload, Hint, u32)> = Vec::with_capacity(picked.len());
        let mut live = Vec::with_capacity(picked.len());
        let mut released = 0;
        for &i in &picked {
            let w = &self.queues[d][i];
            let page = match &w.evicted {
                Some((data, hint)) => Some((data.clone(), *hint)),
                None => match self.slots.get(&w.lpn) {
                    Some(slot) if slot.dirty && slot.generation == w.generation => {
                        Some((slot.data.clone(), Hint { more: false, bytes: 0, ..slot.hint }))
                    }
                    _ => None,
                },
            };
            live.push(page.is_some());
            match page {
                Some((data, hint)) => batch.push((w.lpn, data, hint, self.moved_bytes(w.sectors))),
                None => released += w.sectors,
            }
        }
        let last = batch.len().saturating_sub(1);
        let inner = &mut self.inner;
        let paired = self.pair_any && batch.len() > 1;
        let finish = io.detached(t, |io| {
            io.set_paired(paired);
            for (k, (lpn, data, hint, bytes)) in batch.iter().enumerate() {
                io.set_host_bytes(*bytes);
                inner.write(io, Lpn(*lpn), data.clone(), &Hint { more: k < last, ..*hint })?;
            }
            Ok::<SimTime, FtlError>(io.completion())
        })?;
        // Issued (or dropped): out of the queue, highest index first.
        for (&i, &written) in picked.iter().zip(&live).rev() {
            let Some(w) = self.queues[d].remove(i) else { continue };
            self.queued -= 1;
            if !written {
                continue;
            }
            if w.evicted.is_some() {
                if let Some(dep) = self.departing.get_mut(&w.lpn) {
                    dep.1 -= 1;
                    if dep.1 == 0 {
                        self.departing.remove(&w.lpn);
                    }
                }
            } else if let Some(slot) = self.slots.get_mut(&w.lpn) {
                slot.dirty = false;
                slot.leaves_at = Some(finish);
            }
            if w.at < t {
                self.stats.queued_writebacks += 1;
                self.stats.queued_ns += t.0 - w.at.0;
            }
            // Its sectors were counted when it joined the queue.
            self.in_flight.push(Reverse((finish, w.lpn, w.sectors)));
        }
        self.written_back_until = self.written_back_until.max(finish);
        if self.queues[d].is_empty() {
            self.nonempty.retain(|&n| n != d);
        }
        if released > 0 {
            self.depth -= released;
            self.admit(io, t)?;
        }
        Ok(())
    }

    /// Drops every write-back of `lpn` waiting in the cache or in its die's
    /// queue (the page was trimmed), and lets waiting ones in at `t`.
    fn cancel(&mut self, io: &mut Io, lpn: u32, t: SimTime) -> Result<(), FtlError> {
        self.version += 1;
        self.departing.remove(&lpn);
        self.gated.retain(|w| w.lpn != lpn);
        let mut released = 0;
        for q in &mut self.queues {
            q.retain(|w| {
                if w.lpn == lpn {
                    released += w.sectors;
                }
                w.lpn != lpn
            });
        }
        self.queued = self.queues.iter().map(VecDeque::len).sum();
        let queues = &self.queues;
        self.nonempty.retain(|&d| !queues[d].is_empty());
        if released > 0 {
            self.depth -= released;
            self.admit(io, t)?;
        }
        Ok(())
    }

    /// When a write arriving at `now` with write-backs waiting in the cache
    /// or at the limit is taken in: the queues and the cache run forward as
    /// [`DataCache::pump`] would, each write-back taking a page transfer and
    /// a program, as if no read came (see the module docs, 7.).
    fn estimate_admission(&mut self, io: &Io, now: SimTime) -> SimTime {
        // The common case: no write waits before this one, and the first
        // write-back in flight to finish makes room, before any queued one
        // could finish.
        if self.gated.is_empty() {
            if let Some(&Reverse((f, _, sectors))) = self.in_flight.peek() {
                if self.depth - sectors < self.limit {
                    let queued_first = self
                        .nonempty
                        .iter()
                        .filter_map(|&d| self.queues[d].front().map(|w| w.at.max(io.die_free_at(DieId(d as u32)))))
                        .min();
                    if queued_first.is_none_or(|q| f <= q + self.writeback_ns) {
                        return now.max(f);
                    }
                }
            }
        }
        let mut sim = std::mem::take(&mut self.scratch);
        let t = self.simulate(io, now, &mut sim);
        self.scratch = sim;
        t
    }

    /// Runs [`DataCache::estimate_admission`]'s simulation, from the state
    /// the last call left in `sim` if nothing has changed since but writes
    /// joining the wait in the cache (a burst of writes at the limit costs
    /// one pass, not one each), else from the cache's state now.
    fn simulate(&self, io: &Io, now: SimTime, sim: &mut Scratch) -> SimTime {
        let per = self.dies_per_slot;
        let end = self.admitted + self.gated.len() as u64;
        if sim.version == Some(self.version) && sim.resumes < 32 && (self.admitted..=end).contains(&sim.gated_used) {
            let (mut depth, mut t) = (sim.depth, sim.t.max(now));
            let mut gated = self.gated.iter().skip((sim.gated_used - self.admitted) as usize);
            let r = self.run_sim(sim, &mut gated, &mut depth, &mut t);
            sim.gated_used = end;
            sim.resumes += 1;
            (sim.depth, sim.t) = (depth, t);
            return r;
        }
        sim.free.clear();
        sim.free.extend((0..self.queues.len()).step_by(per).map(|d| io.die_free_at(DieId(d as u32))));
        // Per die, the times its waiting write-backs may start.
        sim.queues.resize_with(self.queues.len(), VecDeque::new);
        for &d in &sim.active {
            sim.queues[d].clear();
        }
        sim.active.clear();
        sim.next.clear();
        for &d in &self.nonempty {
            sim.queues[d].extend(self.queues[d].iter().map(|w| (w.at, w.sectors, w.plane)));
            sim.active.push(d);
            if let Some(&(at, _, _)) = sim.queues[d].front() {
                sim.next.push(Reverse((at.max(sim.free[d / per]), d)));
            }
        }
        sim.flight.clear();
        sim.flight.extend(self.in_flight.iter().map(|r| Reverse((r.0 .0, r.0 .2))));
        let mut gated = self.gated.iter();
        let mut depth = self.depth;
        let mut t = now;
        let r = self.run_sim(sim, &mut gated, &mut depth, &mut t);
        sim.version = Some(self.version);
        sim.gated_used = end;
        sim.resumes = 0;
        (sim.depth, sim.t) = (depth, t);
        r
    }

    /// The simulation's loop: admits the waiting writes of `gated` as room
    /// frees, and returns the time the next write gets in.
    fn run_sim<'a>(
        &self,
        sim: &mut Scratch,
        gated: &mut impl Iterator<Item = &'a Queued>,
        depth: &mut u64,
        t: &mut SimTime,
    ) -> SimTime {
        let per = self.dies_per_slot;
        loop {
            // Admit what the room allows; once every earlier write is in, the
            // new one is.
            while *depth < self.limit {
                match gated.next() {
                    Some(w) => {
                        *depth += w.sectors;
                        let d = w.die;
                        let at = w.at.max(*t);
                        if sim.queues[d].is_empty() {
                            if !sim.active.contains(&d) {
                                sim.active.push(d);
                            }
                            sim.next.push(Reverse((at.max(sim.free[d / per]), d)));
                        }
                        sim.queues[d].push_back((at, w.sectors, w.plane));
                    }
                    None => return *t,
                }
            }
            // The die that may issue first (stale entries dropped).
            let mut issue: Option<(SimTime, usize)> = None;
            while let Some(&Reverse((s, d))) = sim.next.peek() {
                let now_key = sim.queues[d].front().map(|&(at, _, _)| at.max(sim.free[d / per]));
                if now_key == Some(s) {
                    issue = Some((s, d));
                    break;
                }
                sim.next.pop();
            }
            let finish = sim.flight.peek().map(|r| r.0 .0);
            match (issue, finish) {
                (_, Some(f)) if issue.is_none_or(|(s, _)| f <= s) => {
                    if let Some(Reverse((f, sectors))) = sim.flight.pop() {
                        *depth -= sectors;
                        *t = (*t).max(f);
                    }
                }
                (Some((s, d)), _) => {
                    // The head, and with multi-plane programs the first of
                    // each other plane, in one program.
                    let f = s + self.writeback_ns;
                    sim.free[d / per] = f;
                    let q = &mut sim.queues[d];
                    let mut planes = 0u64;
                    let mut i = 0;
                    let mut taken = 0;
                    while i < q.len() && taken < if self.multi_plane { self.planes } else { 1 } {
                        let (at, sectors, plane) = q[i];
                        let bit = 1u64 << (plane % 64);
                        if (taken == 0 || at <= s) && planes & bit == 0 {
                            planes |= bit;
                            taken += 1;
                            sim.flight.push(Reverse((f, sectors)));
                            q.remove(i);
                        } else {
                            i += 1;
                        }
                    }
                    // The dies sharing the slot have a new time.
                    let slot = d / per;
                    for e in slot * per..(slot * per + per).min(sim.queues.len()) {
                        if let Some(&(at, _, _)) = sim.queues[e].front() {
                            sim.next.push(Reverse((at.max(sim.free[slot]), e)));
                        }
                    }
                }
                // Nothing left to wait for.
                _ => return *t,
            }
        }
    }

    /// One DRAM access of `bytes` asked for at `now`, starting no earlier than
    /// `at`: in the first gap of the channel's calendar that holds it (MQSim
    /// serves its DRAM's accesses in the order they are asked for,
    /// `Data_Cache_Manager_Flash_Advanced.cpp:516-531`; a write held at the
    /// back-pressure limit asks for its access only when it gets in, so an
    /// access asked for meanwhile goes first). Returns when it ends.
    fn dram(&mut self, now: SimTime, at: SimTime, bytes: u64) -> SimTime {
        // Accesses over by now are forgotten (every later one starts no
        // earlier than its own `now`).
        while let Some(entry) = self.dram_busy.first_entry() {
            if *entry.get() > now.0 {
                break;
            }
            entry.remove();
        }
        let len = self.params.dram.access_ns(bytes);
        let mut start = at.0;
        if let Some((_, &end)) = self.dram_busy.range(..=start).next_back() {
            start = start.max(end);
        }
        while let Some((&b, &e)) = self.dram_busy.range(start..).next() {
            if b >= start + len {
                break;
            }
            start = e;
        }
        if len > 0 {
            self.dram_busy.insert(start, start + len);
        }
        SimTime(start + len)
    }

    /// The bytes a write-back of `sectors` sectors moves to its page
    /// ([`Io::set_host_bytes`]; 0: the whole page).
    fn moved_bytes(&self, sectors: u64) -> u32 {
        if sectors >= self.page_sectors {
            0
        } else {
            (sectors * SECTOR_BYTES) as u32
        }
    }

    fn stamp(&mut self) -> u64 {
        self.next_stamp += 1;
        self.next_stamp
    }

    /// Writes cached page `lpn` to the FTL now (its operations issued as `io`
    /// stands) and counts it in flight until its program finishes.
    fn write_back(&mut self, io: &mut Io, lpn: u32) -> Result<(), FtlError> {
        let Some(slot) = self.slots.get(&lpn) else { return Ok(()) };
        let (data, hint, sectors) = (slot.data.clone(), Hint { more: false, bytes: 0, ..slot.hint }, slot.sectors);
        let own = io.host_bytes();
        io.set_host_bytes(self.moved_bytes(sectors));
        let written = self.inner.write(io, Lpn(lpn), data, &hint);
        io.set_host_bytes(own);
        written?;
        let finish = io.completion();
        if let Some(slot) = self.slots.get_mut(&lpn) {
            slot.dirty = false;
            slot.leaves_at = Some(finish);
        }
        self.track(finish, lpn, sectors);
        Ok(())
    }

    fn track(&mut self, finish: SimTime, lpn: u32, sectors: u64) {
        self.in_flight.push(Reverse((finish, lpn, sectors)));
        self.depth += sectors;
        self.written_back_until = self.written_back_until.max(finish);
    }

    /// Makes room for one page at `t`: the least recently written page leaves,
    /// and if it is dirty it is read out of DRAM and written back (a chain the
    /// write that evicted it does not wait for).
    fn evict(&mut self, io: &mut Io, t: SimTime) -> Result<(), FtlError> {
        let Some((_, lpn)) = self.lru.pop_first() else { return Ok(()) };
        let Some(slot) = self.slots.remove(&lpn) else { return Ok(()) };
        if !slot.dirty {
            return Ok(());
        }
        let out = self.dram(io.now(), t, slot.sectors * SECTOR_BYTES);
        let hint = Hint { more: false, bytes: 0, ..slot.hint };
        if self.lazy {
            self.stats.evictions += 1;
            self.version += 1;
            let (die, plane) = self.place(lpn, &hint);
            let dep = self.departing.entry(lpn).or_insert((slot.data.clone(), 0));
            dep.0 = slot.data.clone();
            dep.1 += 1;
            self.enqueue(
                io,
                Queued {
                    evicted: Some((slot.data, hint)),
                    ..Queued::new(lpn, (die, plane), out, slot.sectors, slot.generation)
                },
            )?;
            return Ok(());
        }
        let bytes = self.moved_bytes(slot.sectors);
        let finish = io.independent(|io| {
            io.start_after(out);
            let own = io.host_bytes();
            io.set_host_bytes(bytes);
            let written = self.inner.write(io, Lpn(lpn), slot.data.clone(), &hint).map(|()| io.last_finish());
            io.set_host_bytes(own);
            written
        });
        let finish = match finish {
            Ok(f) => f,
            Err(e) => {
                // Not written: the page stays cached and dirty.
                let stamp = self.stamp();
                self.lru.insert(stamp, lpn);
                self.slots.insert(lpn, Slot { stamp, ..slot });
                return Err(e);
            }
        };
        self.stats.evictions += 1;
        self.track(finish, lpn, slot.sectors);
        Ok(())
    }
}

impl Layer for DataCache {
    type Inner = dyn Ftl;

    fn inner(&self) -> &(dyn Ftl + 'static) {
        &*self.inner
    }

    fn inner_mut(&mut self) -> &mut (dyn Ftl + 'static) {
        &mut *self.inner
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        if self.lazy {
            self.pump(io, io.now())?;
        } else {
            self.retire(io.now());
        }
        // A page in a slot, or evicted with its write-back still waiting,
        // is read from DRAM.
        let cached = match self.slots.get(&lpn.0) {
            Some(slot) => Some(slot.data.clone()),
            None if !self.departing.is_empty() => self.departing.get(&lpn.0).map(|d| d.0.clone()),
            None => None,
        };
        match cached {
            Some(data) => {
                let end = self.dram(io.now(), io.now(), self.page_bytes);
                io.complete_after(end);
                self.stats.read_hits += 1;
                Ok(Some(data))
            }
            None => {
                // It takes die time the estimate must see.
                self.version += 1;
                self.inner.read(io, lpn)
            }
        }
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        let now = io.now();
        let mut gate = false;
        let mut estimate = now;
        let t = if self.lazy {
            self.pump(io, now)?;
            gate = !self.gated.is_empty() || self.depth >= self.limit;
            let t = now.max(self.accept_floor);
            if !gate {
                // Room now: the back end has caught up, and a lag measured
                // in an earlier burst says nothing about the next.
                self.lag = SimTime::ZERO;
            }
            estimate = if gate { self.estimate_admission(io, now) } else { t };
            let t = if gate { t.max(estimate + self.lag) } else { t };
            self.accept_floor = t;
            t
        } else {
            self.accept(now)
        };
        if t > now {
            self.stats.held_writes += 1;
            self.stats.held_ns += t.0 - now.0;
        }
        io.start_after(t);
        let sectors = if hint.bytes == 0 {
            self.page_sectors
        } else {
            u64::from(hint.bytes).div_ceil(SECTOR_BYTES).min(self.page_sectors)
        };
        let stream = hint.stream.unwrap_or(0);
        let cold = !self.hot.get(&stream).is_some_and(|h| h.contains(&lpn.0));
        let stamp = self.stamp();
        match self.slots.get_mut(&lpn.0) {
            Some(slot) => {
                self.lru.remove(&slot.stamp);
                slot.data = data;
                slot.hint = *hint;
                slot.dirty = true;
                slot.stamp = stamp;
                slot.sectors = slot.sectors.max(sectors);
                slot.leaves_at = None;
            }
            None => {
                if self.slots.len() >= self.params.pages as usize {
                    self.evict(io, t)?;
                }
                let generation = stamp;
                self.slots.insert(
                    lpn.0,
                    Slot { data, hint: *hint, dirty: true, stamp, sectors, leaves_at: None, generation },
                );
            }
        }
        self.lru.insert(stamp, lpn.0);
        if cold {
            self.hot.entry(stream).or_default().insert(lpn.0);
            if self.lazy {
                let (die, plane) = self.place(lpn.0, hint);
                let generation = self.slots.get(&lpn.0).map_or(0, |s| s.generation);
                let w = Queued { estimate, ..Queued::new(lpn.0, (die, plane), t, sectors, generation) };
                if gate {
                    self.gated.push_back(w);
                } else {
                    self.version += 1;
                    self.enqueue(io, w)?;
                    self.pump(io, now)?;
                }
            } else {
                self.write_back(io, lpn.0)?;
            }
            self.stats.writebacks += 1;
        } else {
            self.stats.hot_writes += 1;
        }
        if t > self.next_reset {
            if let Some(h) = self.hot.get_mut(&stream) {
                h.clear();
            }
            self.next_reset = SimTime(t.0 + self.params.hot_window_ns);
        }
        self.request_bytes += sectors * SECTOR_BYTES;
        if hint.more {
            io.ack_at(t);
        } else {
            let bytes = std::mem::take(&mut self.request_bytes);
            let end = self.dram(now, t, bytes);
            io.ack_at(end);
        }
        Ok(())
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        if self.lazy {
            self.pump(io, io.now())?;
        } else {
            self.retire(io.now());
        }
        if let Some(slot) = self.slots.remove(&lpn.0) {
            self.lru.remove(&slot.stamp);
        }
        if self.lazy {
            self.cancel(io, lpn.0, io.now())?;
        }
        self.inner.trim(io, lpn)
    }

    /// Writes every dirty page back, in logical-page order, and completes once
    /// every write-back issued so far is durable.
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        let end = SimTime(u64::MAX);
        self.version += 1;
        if self.lazy {
            // Every write-back waiting runs, each when its die falls free.
            self.pump(io, end)?;
        } else {
            self.retire(io.now());
        }
        let mut dirty: Vec<u32> = self.slots.iter().filter(|(_, s)| s.dirty).map(|(&l, _)| l).collect();
        dirty.sort_unstable();
        for lpn in dirty {
            if self.lazy {
                let Some(slot) = self.slots.get(&lpn) else { continue };
                let (hint, sectors, generation) = (slot.hint, slot.sectors, slot.generation);
                let (die, plane) = self.place(lpn, &hint);
                self.enqueue(io, Queued::new(lpn, (die, plane), io.now(), sectors, generation))?;
            } else {
                self.write_back(io, lpn)?;
            }
            self.stats.flushed += 1;
        }
        if self.lazy {
            self.pump(io, end)?;
        }
        self.inner.flush(io)?;
        io.complete_after(self.written_back_until);
        Ok(())
    }

    /// Idle time: the queued write-backs run up to `until`, then the FTL's
    /// own background work.
    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        if self.lazy {
            self.pump(io, until)?;
        }
        self.inner.background(io, until)
    }

    /// Room for a write: once the write-backs in flight and queued hold fewer
    /// sectors than the limit and no write waits in the cache before it; else
    /// ask again when a write-back is next issued or finishes.
    fn write_room_at(&mut self, io: &mut Io) -> Result<Option<SimTime>, FtlError> {
        let now = io.now();
        if !self.lazy {
            self.retire(now);
            let next = if self.depth < self.limit { now } else { self.in_flight.peek().map_or(now, |r| r.0 .0) };
            return Ok(Some(next.max(self.accept_floor)));
        }
        self.pump(io, now)?;
        if self.gated.is_empty() && self.depth < self.limit {
            return Ok(Some(now.max(self.accept_floor)));
        }
        Ok(Some(self.wake.max(now)))
    }

    fn durability(&self) -> Durability {
        Durability::OnFlush
    }

    /// The slots' pages and their bookkeeping.
    fn own_ram_bytes(&self) -> u64 {
        u64::from(self.params.pages) * (self.page_bytes + 64)
    }

    fn holds(&self, lpn: Lpn) -> bool {
        self.slots.contains_key(&lpn.0) || self.departing.contains_key(&lpn.0)
    }

    fn takes_writes(&self) -> bool {
        true
    }

    fn own_gauges(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("data_cache_writebacks", s.writebacks as f64),
            ("data_cache_hot_writes", s.hot_writes as f64),
            ("data_cache_evictions", s.evictions as f64),
            ("data_cache_flushed", s.flushed as f64),
            ("data_cache_read_hits", s.read_hits as f64),
            ("data_cache_waiting_writebacks", (self.gated.len() + self.queued) as f64),
            ("data_cache_queued_writebacks", s.queued_writebacks as f64),
            ("data_cache_queued_ms", s.queued_ns as f64 / 1e6),
            ("data_cache_held_writes", s.held_writes as f64),
            ("data_cache_held_ms", s.held_ns as f64 / 1e6),
        ]
    }

    fn reset_own_counters(&mut self) {
        self.stats = DataCacheStats::default();
    }
}

#[cfg(test)]
#[path = "data_cache_tests.rs"]
mod tests;
