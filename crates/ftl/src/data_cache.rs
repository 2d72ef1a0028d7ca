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
//!    [`DramTiming::access_ns`]).
//! 5. **Leaving.** A page whose write-back has finished leaves the cache,
//!    unless it was written again meanwhile (`:453-460`).
//! 6. **Reads.** A host read of a page in the cache is one DRAM access of the
//!    page; any other goes to the FTL.
//!
//! Where it differs from MQSim: a page written again while its write-back is
//! in flight stays dirty and is written back when evicted or flushed (MQSim
//! keeps it marked as written back and drops the newer data on eviction); a
//! flush writes every dirty page back (MQSim has no flush); the cache's unit
//! is the FTL's unit, and a request that covers part of one moves the bytes
//! [`Hint::bytes`] gives.
//!
//! Durability is [`Durability::OnFlush`]: a power cut loses what only DRAM
//! holds; [`Ftl::flush`] writes every dirty page back and completes when every
//! write-back is durable. Set through `[device.data_cache]`; the import of an
//! MQSim configuration sets it from `Caching_Mechanism=ADVANCED` with
//! `WRITE_CACHE` flows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use ftlab_nand::{Payload, SimTime};

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
}

impl DataCacheParams {
    /// A cache of `pages` slots with MQSim's other defaults.
    pub fn new(pages: u32) -> Self {
        DataCacheParams {
            pages,
            dram: DramTiming::default(),
            writeback_limit_sectors: None,
            hot_window_ns: 1_000_000_000,
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
    /// When the DRAM channel is next free.
    dram_free: SimTime,
    /// Bytes of the request being taken in, copied with its last page.
    request_bytes: u64,
    /// When every write-back issued so far is durable.
    written_back_until: SimTime,
    stats: DataCacheStats,
}

impl DataCache {
    /// A cache over `inner` (errors name `device.data_cache.*`).
    pub fn new(mut inner: Box<dyn Ftl>, params: DataCacheParams, io: &Io) -> Result<Self, FtlError> {
        params.check()?;
        let extension = inner.extension().name();
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
            dram_free: SimTime::ZERO,
            request_bytes: 0,
            written_back_until: SimTime::ZERO,
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

    /// One DRAM access of `bytes` starting no earlier than `at`: when it ends.
    fn dram(&mut self, at: SimTime, bytes: u64) -> SimTime {
        let end = SimTime(at.0.max(self.dram_free.0) + self.params.dram.access_ns(bytes));
        self.dram_free = end;
        end
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
        self.inner.write(io, Lpn(lpn), data, &hint)?;
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
        let out = self.dram(t, slot.sectors * SECTOR_BYTES);
        let hint = Hint { more: false, bytes: 0, ..slot.hint };
        let finish = io.independent(|io| {
            io.start_after(out);
            self.inner.write(io, Lpn(lpn), slot.data.clone(), &hint).map(|()| io.last_finish())
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
        self.retire(io.now());
        match self.slots.get(&lpn.0) {
            Some(slot) => {
                let data = slot.data.clone();
                let end = self.dram(io.now(), self.page_bytes);
                io.complete_after(end);
                self.stats.read_hits += 1;
                Ok(Some(data))
            }
            None => self.inner.read(io, lpn),
        }
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        let now = io.now();
        let t = self.accept(now);
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
                self.slots.insert(lpn.0, Slot { data, hint: *hint, dirty: true, stamp, sectors, leaves_at: None });
            }
        }
        self.lru.insert(stamp, lpn.0);
        if cold {
            self.hot.entry(stream).or_default().insert(lpn.0);
            self.write_back(io, lpn.0)?;
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
            let end = self.dram(t, bytes);
            io.ack_at(end);
        }
        Ok(())
    }

    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        check_lpn(lpn, self.inner.addressable_pages())?;
        self.retire(io.now());
        if let Some(slot) = self.slots.remove(&lpn.0) {
            self.lru.remove(&slot.stamp);
        }
        self.inner.trim(io, lpn)
    }

    /// Writes every dirty page back, in logical-page order, and completes once
    /// every write-back issued so far is durable.
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.retire(io.now());
        let mut dirty: Vec<u32> = self.slots.iter().filter(|(_, s)| s.dirty).map(|(&l, _)| l).collect();
        dirty.sort_unstable();
        for lpn in dirty {
            self.write_back(io, lpn)?;
            self.stats.flushed += 1;
        }
        self.inner.flush(io)?;
        io.complete_after(self.written_back_until);
        Ok(())
    }

    fn durability(&self) -> Durability {
        Durability::OnFlush
    }

    /// The slots' pages and their bookkeeping.
    fn own_ram_bytes(&self) -> u64 {
        u64::from(self.params.pages) * (self.page_bytes + 64)
    }

    fn holds(&self, lpn: Lpn) -> bool {
        self.slots.contains_key(&lpn.0)
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
