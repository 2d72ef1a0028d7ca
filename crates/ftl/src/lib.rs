//! ftlab's flash translation layers.
//!
//! An FTL implements [`Ftl`]: page-granular reads, writes, trims and flushes of
//! logical pages, each given an [`Io`] handle that is its only road to the flash.
//! `Io` carries the command's `now`, tags every flash operation with its
//! [`Purpose`], and records when the host is acknowledged, so write amplification,
//! valid-page copies, erase counts and response times are counted by the framework
//! the same way for every scheme. FTLs never compute times themselves.
//!
//! An FTL is built by an [`FtlBuilder`], either on a freshly formatted medium
//! ([`FtlBuilder::format`]) or from whatever a power cut left on it
//! ([`FtlBuilder::recover`]).
//!
//! # Durability contract
//!
//! A write is durable once it is acknowledged (its command's
//! [`Io::completion`] has passed): after a power cut at any later time and
//! `recover`, reading its logical page returns that value or the value of a later
//! write. Writes not yet acknowledged at the cut may or may not survive; a logical
//! page never reads back a value that was never written to it. An FTL that keeps a
//! volatile write cache says so in [`Ftl::durability`]; then only [`Ftl::flush`]
//! makes everything written before it durable. A trim is advisory: after a power
//! cut, a trimmed page reads back either nothing or a value written before the trim.
//!
//! # Fault contract
//!
//! The medium may fail a program or an erase ([`ftlab_nand::faults`]); the block
//! it happened on has gone bad. On a failed program every FTL either retires the
//! block and carries on — programs the data on another block, lets garbage
//! collection move the block's valid pages off, and never programs, erases or
//! frees it again — or fails the command with an error of kind
//! [`ErrorKind::Io`] (or [`ErrorKind::NoSpace`] once the blocks gone bad have
//! eaten the spare space the scheme needs). Either way an acknowledged write is
//! never lost, and a failed write leaves its logical page holding what it held
//! before or the new value, nothing else. A failed erase retires the block: it
//! never returns to the free blocks. The shared units do the work:
//! [`Io::program_placed`] and [`Io::copy_placed`] retry a failed program on a
//! page of another block after the FTL retires the bad one
//! ([`alloc::BlockAllocator::retire`]), [`flash::retry_program`] retries an
//! operation of a scheme that places its own pages (NFTL, GFTL, RFTL and the
//! hybrid core of BAST, FAST and Janus-FTL) after it marks the bad block,
//! [`Io::reclaim`] erases a victim only if
//! it is still good, and the recovery scans never free or reopen a block gone
//! bad. What each scheme does:
//!
//! - pagemap (and FSR), Lazy-RTGC, WAO-GC, MultiLog, Telomere, DFTL and
//!   on-demand Lazy-RTGC retire the block and carry on (Telomere retires a group
//!   block whose summary page failed without its summary, as a power cut would
//!   leave it; DFTL and on-demand Lazy-RTGC, whose translation blocks are a fixed
//!   set, report no space once those are used up, and still serve reads);
//! - NFTL and GFTL count the block as full (later writes go to the replacement
//!   block or the write queue), retry the write, and retire the block when its
//!   logical block is folded or cleaned; a fold or cleaning whose target goes bad
//!   starts over in another free block;
//! - the nameless-write device retires the block and carries on, as pagemap
//!   does; a data page moved off it is a migration like any other;
//! - the SSC retires the block and carries on, for data pages, GC copies and
//!   its flush records alike; a retired block is never erased, so its stale
//!   pages stay counted as copies of their disk blocks (their evict records
//!   stay live), and a flush that fails leaves its blocks pending;
//! - RFTL counts the block as full and retries the write in the logical block's
//!   next block; it has no spare block, so once a replacement block has gone bad
//!   its logical block refuses writes (no space) and keeps its data readable.
//! - BAST, FAST and Janus-FTL (the shared hybrid core) count the block as full
//!   and retry the write (in a new log block after a merge, the next random log
//!   block or the PMA's next open block); a block gone bad is never switched in
//!   as a data block, a partial merge into one becomes a full merge (Janus-FTL:
//!   a migration to the PMA), a merge or defusion whose target goes bad starts
//!   over in another free block, and the bad block is retired once its pages
//!   are merged or collected off.
//!
//! # Schemes
//!
//! In [`schemes`], grouped by family; each is named in the [`registry`].
//!
//! Page-mapped ([`schemes::page`]):
//!
//! - [`pagemap`]: pure page mapping (also the
//!   Pure-Page-Level scheme of 001, the Pagemap of 000 and the PPM-FTL of 004,
//!   as configurations).
//! - [`dftl`](schemes::page::dftl): DFTL (Gupta et al. 2009, via 001 Section
//!   5): demand-based page mapping, a cached mapping table over translation
//!   pages on flash.
//! - [`subpage`](schemes::page::subpage): sub-page mapping (003 Sections 2-3.1,
//!   the Jasmine board's optimized FTL): a map of units smaller than the flash
//!   page (4 KB of a 32 KB page), collected in a merge buffer and programmed k
//!   to a page, greedy GC that repacks the valid units of partly valid pages.
//! - [`multilog`](schemes::page::multilog): MultiLog-Oracle (Stoica and
//!   Ailamaki 2013, via 000 Section 6.1.4): page mapping with one log per
//!   update-frequency set (powers of 2).
//!
//! Block- and hybrid-mapped ([`schemes::block`]):
//!
//! - [`nftl`](schemes::block::nftl): NFTL (002's baseline: block mapping,
//!   primary and replacement blocks, folds).
//! - [`bast`](schemes::block::bast): BAST (Kim et al. 2002, via 004 Section 2):
//!   one log block per data block, switch, partial and full merges.
//! - [`fast`](schemes::block::fast): FAST (Lee et al. 2007, via 004 Sections
//!   2-3.1): a sequential log block and fully associative random log blocks,
//!   switch, partial and full merges.
//! - [`janus`](schemes::block::janus): Janus-FTL (004 Sections 3-5): a
//!   page-mapping and a block-mapping area resized by fusion and defusion toward
//!   the optimum of the cost model, estimated with ghost buffers (`janus`), or
//!   at a fixed utilization (`janus-fix`).
//!
//! Real-time ([`schemes::realtime`]):
//!
//! - [`gftl`](schemes::realtime::gftl): GFTL (002: block mapping, write queue,
//!   partial block cleaning, soft real-time variants).
//! - [`rftl`](schemes::realtime::rftl): RFTL (Qin et al. 2012, via 001): three
//!   blocks per logical block, partial collection inside them after writes only.
//! - [`fsr`](schemes::realtime::fsr): FSR (Chang et al. 2004, via 001): page
//!   mapping with the logical space limited to sigma, GC as in Pure-Page-Level
//!   (a configuration of [`pagemap`]).
//! - [`lazy_rtgc`](schemes::realtime::lazy_rtgc): Lazy-RTGC (001 Sections 3-4):
//!   page mapping, partial GC tasks of at most one erase time, one after each
//!   write, below the free-page threshold.
//! - [`lazy_rtgc_ondemand`](schemes::realtime::lazy_rtgc_ondemand): On-demand
//!   Lazy-RTGC (001 Section 5): Lazy-RTGC over DFTL, partial data GC,
//!   translation GC and write-back tasks.
//! - [`waogc`](schemes::realtime::waogc): WAO-GC (Zhang et al. 2015, via 000
//!   Sections 6.1.5 and 6.2): Lazy-RTGC's partial steps with the logical space
//!   `lambda`, GC delayed until free blocks fall to a threshold, copies in the
//!   host's open block.
//! - [`telomere`](schemes::realtime::telomere): Telomere (000 Sections 3-4):
//!   data placed by expiry time in blocks reserved per task (SiP) or per
//!   partition of tasks (SharP), GC an erase.
//!
//! Devices with a host interface of their own ([`schemes::host`]):
//!
//! - [`ssc`]: the solid-state cache of FlashTier (003
//!   Sections 2.2 and 3.3.2): a cache device addressed by disk block
//!   ([`SolidStateCache`]), silent eviction of clean data in garbage
//!   collection, per-write OOB logging.
//! - [`nameless`]: the Nameless-Write device of 003
//!   (Section 3.4, Table 3): the host addresses data by physical address
//!   ([`Nameless`]), the device maps only metadata, and garbage collection's
//!   moves reach the host as migration up-calls, recorded in the OOB and
//!   replayed after a power cut.
//!
//! Shared units the schemes compose, all public so that an FTL in another
//! crate composes them too: [`alloc::BlockAllocator`],
//! [`victim::GreedyPicker`] and the other [`victim`] pickers,
//! [`mapping::PageTable`], the page-mapped core ([`pagecore`]), the recovery
//! scan of the page-mapped schemes ([`scan`]), the block-mapping unit of NFTL
//! and GFTL ([`blockmap`]: OOB searches, recovery scan and the OOB tag bits
//! they own), the hybrid core of BAST, FAST and Janus-FTL ([`hybrid`]) with
//! its map persistence ([`maplog`]), the retry after a failed program
//! ([`flash::retry_program`]), the checks of shared config keys ([`config`]),
//! and the capability traits ([`capability`]).

use ftlab_nand::{NandError, Payload, SimTime};
use thiserror::Error;

pub mod alloc;
pub mod blockmap;
pub mod buffer;
pub mod capability;
pub mod config;
#[cfg(feature = "testing")]
pub mod conformance;
#[cfg(feature = "testing")]
pub mod conformance_fdp;
#[cfg(feature = "testing")]
pub mod conformance_zoned;
pub mod data_cache;
pub mod dram;
pub mod entry;
pub mod flash;
pub mod hybrid;
pub mod layer;
pub mod maplog;
pub mod mapping;
pub mod pagecore;
pub mod read_buffer;
pub mod registry;
pub mod scan;
pub mod schemes;
#[cfg(test)]
mod testing;
pub mod victim;

pub use capability::{
    Capabilities, DieQueues, Extension, Nameless, PageMeta, Placement, RealTime, SolidStateCache, ZoneAction,
    ZoneDescriptor, ZoneError, ZoneState, ZoneStatus, Zoned, ZrwaLimits,
};
pub use flash::{Counters, Flash, Io, PerPurpose, Purpose};
pub use layer::{Layer, Layered};
// The scheme paths that documentation outside this crate names (the FIFO
// example's, the experiments' notes and their users) stay at the crate root.
#[doc(no_inline)]
pub use schemes::host::{nameless, ssc, zns};
#[doc(no_inline)]
pub use schemes::page::pagemap;

/// A logical page number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lpn(pub u32);

/// What the host may tell an FTL about a write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hint {
    /// Stream (task, file) the write belongs to.
    pub stream: Option<u32>,
    /// Time after which the data is no longer needed.
    pub expiry: Option<SimTime>,
    /// Deadline of the request the write is part of.
    pub deadline: Option<SimTime>,
    /// More units of the same host request follow this one (the request's
    /// units come in order, the last with `more` false). An FTL that places a
    /// request's units together (the Nameless-Write prototype's host FTL,
    /// [`subpage`](schemes::page::subpage) with `packing = "request-queue"`) waits for the last one;
    /// every other FTL ignores it.
    pub more: bool,
    /// Bytes of the unit the host request carries, for a request that covers
    /// part of a page; 0: the whole unit. Only a layer that times its work by
    /// the bytes moved reads it (the data cache, [`crate::data_cache`]); the
    /// unit itself is always written whole.
    pub bytes: u32,
}

/// Admission control's verdict on one task (stream) ([`RealTime::admission`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamVerdict {
    /// The task's name.
    pub name: String,
    /// Whether its writes are guaranteed.
    pub admitted: bool,
    /// Why it was refused: the test that failed and by how much.
    pub reason: Option<String>,
}

/// When acknowledged writes become durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Every acknowledged write is durable.
    OnAck,
    /// The FTL caches writes in RAM; `flush` makes them durable.
    OnFlush,
}

/// Errors of an FTL.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum FtlError {
    #[error("logical page {lpn} is beyond the logical space of {logical_pages} pages")]
    LpnOutOfRange { lpn: u32, logical_pages: u32 },
    #[error("the device is full: no free block can be reclaimed ({0})")]
    DeviceFull(String),
    #[error("invalid FTL configuration: {0}")]
    Config(ConfigError),
    #[error("recovery failed: {0}")]
    Recovery(String),
    #[error("{0} is not supported by this FTL")]
    Unsupported(&'static str),
    #[error("flash operation failed: {0}")]
    Nand(#[from] NandError),
    #[error(
        "logical page {lpn} is reserved for admitted tasks' data (pages from {logical_pages} on): write it with \
         the stream of an admitted task, or use pages below {logical_pages}"
    )]
    Reserved { lpn: u32, logical_pages: u32 },
    #[error(
        "logical page {lpn} expired at {expired_at_us} us: its data's lifetime is over and it is no longer readable"
    )]
    Expired { lpn: u32, expired_at_us: f64 },
    /// A command whose arguments are outside what the scheme defines (e.g. a
    /// solid-state cache's disk block beyond its address space); the message
    /// names the input and the fix.
    #[error("{0}")]
    BadCommand(String),
    /// A zone command the zone state machine refused ([`ZoneError`]: the
    /// zone, its NVMe status, and the fix).
    #[error("{0}")]
    Zone(ZoneError),
}

/// A configuration that cannot be built, found before anything runs: the key
/// path that is wrong, as a run configuration file and `--set` spell it
/// (`ftl.gc_free_blocks`, `device.blocks_per_plane`, `workload.tasks[2]`), and
/// what is wrong with it and how to fix it. Front ends show the key beside the
/// message (Python's `ConfigError.key`); a problem of the device as a whole (too
/// small for the scheme) names `device`. The message itself is `problem`, which
/// names the setting in words a person reads (`pagemap.gc_free_blocks must be
/// at least 1 ...`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{problem}")]
pub struct ConfigError {
    /// The key path of the bad setting.
    pub key: String,
    /// What is wrong and the fix, as a sentence for people that names the
    /// setting itself (the message shown is this alone).
    pub problem: String,
}

impl ConfigError {
    /// The error for `key` with `problem`.
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> Self {
        ConfigError { key: key.into(), problem: problem.into() }
    }
}

impl FtlError {
    /// A configuration error for `key` with `problem` ([`ConfigError`]).
    pub fn config(key: impl Into<String>, problem: impl Into<String>) -> Self {
        FtlError::Config(ConfigError::new(key, problem))
    }
}

/// What kind of failure an error is, for front ends that must map it: a block
/// device server to an errno, Python to an exception class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The command or configuration is not valid as given (`EINVAL`).
    Invalid,
    /// No space is left to serve it (`ENOSPC`).
    NoSpace,
    /// The scheme does not support it (`ENOTSUP`).
    Unsupported,
    /// The medium or the FTL's state failed it (`EIO`).
    Io,
}

impl ErrorKind {
    /// The Linux errno a block device reports for it.
    pub fn errno(self) -> i32 {
        match self {
            ErrorKind::Invalid => 22,
            ErrorKind::NoSpace => 28,
            ErrorKind::Unsupported => 95,
            ErrorKind::Io => 5,
        }
    }
}

impl FtlError {
    /// The kind of failure ([`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            FtlError::LpnOutOfRange { .. }
            | FtlError::Config(_)
            | FtlError::Reserved { .. }
            | FtlError::BadCommand(_) => ErrorKind::Invalid,
            FtlError::DeviceFull(_) => ErrorKind::NoSpace,
            FtlError::Zone(z) => match z.status {
                ZoneStatus::ReadOnly | ZoneStatus::Offline => ErrorKind::Io,
                ZoneStatus::TooManyActive | ZoneStatus::TooManyOpen => ErrorKind::NoSpace,
                _ => ErrorKind::Invalid,
            },
            FtlError::Unsupported(_) => ErrorKind::Unsupported,
            FtlError::Nand(NandError::PayloadMismatch(_) | NandError::TimeLimit { .. }) => ErrorKind::Invalid,
            FtlError::Nand(_) | FtlError::Recovery(_) | FtlError::Expired { .. } => ErrorKind::Io,
        }
    }
}

/// RAM an FTL's structures hold, by part, in bytes ([`Ftl::memory`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FtlMemory {
    /// The logical-to-physical page table.
    pub map: u64,
    /// The bitmap of valid physical pages.
    pub valid: u64,
    /// Everything else: the block allocator, victim picker, caches, logs.
    pub other: u64,
}

/// How soon a logical page named in an [`Ftl::prefetch`] hint is touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefetch {
    /// Soon: start loading the scheme's mapping entry for it.
    Map,
    /// Next, with its mapping entry already loaded (an earlier [`Prefetch::Map`]
    /// hint, or a sequential walk of the logical space): start loading the
    /// medium's records of the page it maps to as well (what a read needs).
    Page,
    /// Next, with its mapping entry already loaded, and to be overwritten:
    /// start loading what superseding its current copy touches (the copy's
    /// valid bit, its block's erase barrier).
    Write,
}

/// A flash translation layer.
pub trait Ftl: Send + std::fmt::Debug {
    /// The scheme's name, e.g. `"pagemap"`.
    fn name(&self) -> &'static str;
    /// Number of logical pages the FTL exports.
    fn logical_pages(&self) -> u32;
    /// Bytes of the FTL's logical page (its mapping unit) when that is smaller
    /// than a flash page (sub-page mapping, [`subpage`](schemes::page::subpage)); `None` (the
    /// default): one flash page. The host side (the device's partial-page
    /// merges, the replay engine's requests, capacities) counts logical pages
    /// of this size, and the payloads an FTL reads and writes are this long.
    fn unit_bytes(&self) -> Option<u32> {
        None
    }
    /// A performance hint with no effect on results: the host will soon touch
    /// logical page `lpn` ([`Prefetch`] says how soon). A scheme whose lookups
    /// miss the CPU cache (a page table of millions of entries) starts loading
    /// them, so that the replay overlaps their memory latency with the work
    /// before. It must not change any state; a `lpn` out of range is ignored.
    /// The default does nothing.
    fn prefetch(&self, _flash: &Flash, _lpn: Lpn, _what: Prefetch) {}
    /// Reads a logical page; `None` if it was never written (or was trimmed).
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError>;
    /// Writes a logical page.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError>;
    /// Discards a logical page.
    fn trim(&mut self, _io: &mut Io, _lpn: Lpn) -> Result<(), FtlError> {
        Err(FtlError::Unsupported("trim"))
    }
    /// Makes every earlier write durable (see the durability contract).
    fn flush(&mut self, _io: &mut Io) -> Result<(), FtlError> {
        Ok(())
    }
    /// Idle time until `until`: the FTL may do background work.
    fn background(&mut self, _io: &mut Io, _until: SimTime) -> Result<(), FtlError> {
        Ok(())
    }
    /// Does at `io`'s time the work a write of `lpn` needs before its
    /// program can be issued, for a layer that queues writes and issues them
    /// later (the data cache's write-backs): the page map's model of MQSim's
    /// cached mapping table reads the page's translation there, as MQSim
    /// translates a write before it joins its chip's queue. Returns when the
    /// write may be issued; the write itself then does not look the page up
    /// again. The default does nothing and returns `io`'s time.
    fn prepare_write(&mut self, io: &mut Io, _lpn: Lpn) -> Result<SimTime, FtlError> {
        Ok(io.now())
    }
    /// Does at `io`'s time the work a read of `lpn` needs before its flash
    /// read can be issued, for a dispatcher that holds reads until their die
    /// is free: the page map's model of MQSim's cached mapping table reads
    /// the page's translation there, as MQSim translates a read before it
    /// joins its chip's queue. Returns when the read may be issued; the read
    /// itself then does not look the page up again. The default does nothing
    /// and returns `io`'s time.
    fn prepare_read(&mut self, io: &mut Io, _lpn: Lpn) -> Result<SimTime, FtlError> {
        Ok(io.now())
    }
    /// When the FTL next takes a host write without holding it back, for a
    /// dispatcher that holds writes until then, as MQSim's write cache holds
    /// a write while the write-backs in flight fill its back-pressure limit
    /// (the data cache, [`data_cache`]). `None` (the default): the FTL never
    /// holds writes back, take them at any time; `Some(t)` at or before
    /// `io`'s time: one is taken now; after it: ask again then (the limit may
    /// still be full). It may issue, at `io`'s time, work that was due by
    /// then (queued write-backs).
    fn write_room_at(&mut self, _io: &mut Io) -> Result<Option<SimTime>, FtlError> {
        Ok(None)
    }
    /// When acknowledged writes become durable.
    fn durability(&self) -> Durability {
        Durability::OnAck
    }
    /// RAM the FTL uses for mapping and bookkeeping, in bytes.
    fn ram_bytes(&self) -> u64;
    /// The RAM the FTL's structures hold, by part ([`FtlMemory`]), from their
    /// allocated capacity. The default puts all of [`Ftl::ram_bytes`] under
    /// `other`: schemes that keep a page table and a valid bitmap say so.
    fn memory(&self) -> FtlMemory {
        FtlMemory { map: 0, valid: 0, other: self.ram_bytes() }
    }
    /// What the scheme offers beyond the block commands and its promises,
    /// together ([`Capabilities`]): its real-time guarantee and admission, and
    /// where its page commands land. The default offers none: right for a
    /// scheme without them. An FTL wrapped around another is a [`Layer`], whose
    /// [`Layered`] adapter hands on the inner scheme's capabilities, so no
    /// wrapper can drop one by forgetting to forward it.
    fn capabilities(&self) -> Capabilities<'_> {
        Capabilities::NONE
    }
    /// The command set the scheme speaks beside the block commands, if any
    /// ([`Extension`]): a solid-state cache's or a Nameless-Write device's.
    fn extension(&mut self) -> Extension<'_> {
        Extension::None
    }
    /// Named gauges of the scheme's internal state now (e.g. Janus-FTL's fused
    /// blocks and the target its adaptation aims at), with stable names, the
    /// same names in the same order on every call. The simulator samples them
    /// at every request completion into the report's time series
    /// (`throughput.gauges`) and reports their final values (`ftl_gauges`).
    /// Empty (the default) for schemes without: their reports carry neither.
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Zeroes the event counts behind the scheme's gauges that count over the
    /// measured window (e.g. the cached mapping table's `cmt_hits` and
    /// `cmt_misses` of [`dftl`](schemes::page::dftl) and [`lazy_rtgc_ondemand`](schemes::realtime::lazy_rtgc_ondemand)): the simulator
    /// calls it when measurement starts, when it resets the flash counters.
    /// Gauges of state are left alone. The default does nothing: Janus-FTL's
    /// `gc_victims` and Nameless's `migrations` count over the whole run.
    fn reset_counters(&mut self) {}
    /// Named curves of the scheme's internal state now (e.g. Janus-FTL's
    /// ghost-buffer estimate of the page-mapping area's hit rate at 0, 1, 2,
    /// ... fused blocks), reported at the end of a run (`ftl_curves`). Empty
    /// (the default) for schemes without: their reports leave it out.
    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        Vec::new()
    }
    /// Checks the FTL's internal invariants against the medium (used by tests):
    /// e.g. valid pages equal mapped logical pages.
    fn check_invariants(&self, _flash: &Flash) -> Result<(), String> {
        Ok(())
    }
}

/// Shorthands for the parts of [`Ftl::capabilities`] and [`Ftl::extension`].
impl dyn Ftl + '_ {
    /// The scheme's real-time guarantees and admission control, if it has any.
    pub fn realtime(&self) -> Option<&dyn RealTime> {
        self.capabilities().realtime
    }
    /// Logical pages a command may address: [`Ftl::logical_pages`] and the
    /// pages reserved for admitted tasks ([`RealTime::stream_pages`]).
    pub fn addressable_pages(&self) -> u32 {
        self.logical_pages().saturating_add(self.realtime().map_or(0, RealTime::stream_pages))
    }
    /// Where the scheme's page commands land, if it can tell.
    pub fn placement(&self) -> Option<&dyn Placement> {
        self.capabilities().placement
    }
    /// The cache commands, if the scheme is a solid-state cache.
    pub fn ssc(&mut self) -> Option<&mut dyn SolidStateCache> {
        match self.extension() {
            Extension::Cache(c) => Some(c),
            _ => None,
        }
    }
    /// The Nameless-Write commands, if the scheme is a Nameless-Write device.
    pub fn nameless(&mut self) -> Option<&mut dyn Nameless> {
        match self.extension() {
            Extension::Nameless(n) => Some(n),
            _ => None,
        }
    }
    /// The per-die queues of an FTL that books its flash commands' time as
    /// its dies fall free ([`DieQueues`]), if it has them.
    pub fn die_queues(&mut self) -> Option<&mut dyn DieQueues> {
        match self.extension() {
            Extension::Queued(q) => Some(q),
            _ => None,
        }
    }
    /// The zone commands, if the scheme is a zoned device.
    pub fn zoned(&mut self) -> Option<&mut dyn Zoned> {
        match self.extension() {
            Extension::Zoned(z) => Some(z),
            _ => None,
        }
    }
}

/// The scheme's bound, if it has the real-time capability and promises one.
pub fn service_bound(ftl: &dyn Ftl) -> Option<SimTime> {
    ftl.realtime().and_then(RealTime::service_bound)
}

/// Builds an FTL on a medium.
pub trait FtlBuilder: std::fmt::Debug {
    /// An FTL on a freshly formatted (all erased) medium.
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError>;
    /// An FTL rebuilt from what is on the medium, after a power cut.
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError>;
}

/// `lpn` as an index into a logical space of `logical_pages` pages, or
/// [`FtlError::LpnOutOfRange`].
#[inline]
pub fn check_lpn(lpn: Lpn, logical_pages: u32) -> Result<usize, FtlError> {
    if lpn.0 < logical_pages {
        Ok(lpn.0 as usize)
    } else {
        Err(FtlError::LpnOutOfRange { lpn: lpn.0, logical_pages })
    }
}

#[cfg(test)]
mod error_kinds {
    use super::*;

    #[test]
    fn errors_map_to_the_errno_a_block_device_reports() {
        let cases = [
            (FtlError::LpnOutOfRange { lpn: 9, logical_pages: 8 }, 22),
            (FtlError::DeviceFull("no victim".into()), 28),
            (FtlError::Unsupported("trim"), 95),
            (FtlError::Nand(NandError::Uncorrectable(ftlab_nand::Ppa(3))), 5),
            (FtlError::Nand(NandError::PayloadMismatch("bytes, not tokens")), 22),
            (FtlError::Recovery("no summary".into()), 5),
            (FtlError::Reserved { lpn: 9, logical_pages: 8 }, 22),
            (FtlError::Nand(NandError::ProgramFailed { ppa: ftlab_nand::Ppa(3) }), 5),
            (FtlError::Nand(NandError::EraseFailed { block: ftlab_nand::BlockId(3) }), 5),
            (FtlError::Nand(NandError::GrownBad(ftlab_nand::BlockId(3))), 5),
            (FtlError::BadCommand("exists of 2^40 blocks".into()), 22),
        ];
        for (e, errno) in cases {
            assert_eq!(e.kind().errno(), errno, "{e}");
        }
    }
}
