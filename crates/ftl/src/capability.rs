//! What a scheme offers beyond the block commands of [`Ftl`](crate::Ftl): promises and
//! hints read through [`Ftl::capabilities`](crate::Ftl::capabilities) ([`Capabilities`]: [`RealTime`],
//! [`Placement`]) and the command sets reached through [`Ftl::extension`](crate::Ftl::extension)
//! ([`Extension`]: a solid-state cache's [`SolidStateCache`], a Nameless-Write
//! device's [`Nameless`], a zoned device's [`Zoned`]). They live here, beside the trait, so that the
//! device, the wrappers ([`crate::Layered`]) and FTLs in other crates use them
//! without naming a scheme; the schemes implement them
//! ([`crate::schemes::host::ssc`], [`crate::schemes::host::nameless`], the
//! real-time schemes of [`crate::schemes::realtime`]).

use serde::{Deserialize, Serialize};

use ftlab_nand::{DieId, Payload, SimTime};

use crate::{FtlError, Hint, Io, Lpn, StreamVerdict};

/// What an FTL offers beyond the block commands, reached in one call
/// ([`Ftl::capabilities`](crate::Ftl::capabilities)) so that a wrapper hands on all of it or none.
#[derive(Clone, Copy, Default)]
pub struct Capabilities<'a> {
    /// The scheme's real-time guarantees and admission control ([`RealTime`]).
    pub realtime: Option<&'a dyn RealTime>,
    /// Where the scheme's page commands land ([`Placement`]): per-die dispatch
    /// uses it.
    pub placement: Option<&'a dyn Placement>,
}

impl Capabilities<'_> {
    /// No capability: a scheme that promises nothing and cannot tell where its
    /// commands land.
    pub const NONE: Capabilities<'static> = Capabilities { realtime: None, placement: None };
}

impl std::fmt::Debug for Capabilities<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capabilities")
            .field("realtime", &self.realtime.map(|r| r.service_bound()))
            .field("placement", &self.placement.is_some())
            .finish()
    }
}

/// The command set an FTL speaks beside the block commands ([`Ftl::extension`](crate::Ftl::extension)).
pub enum Extension<'a> {
    /// Block commands only.
    None,
    /// The cache commands of a solid-state cache ([`SolidStateCache`], e.g.
    /// [`ssc`](crate::schemes::host::ssc)).
    Cache(&'a mut dyn SolidStateCache),
    /// The commands of a Nameless-Write device ([`Nameless`], e.g. [`nameless`](crate::schemes::host::nameless)).
    Nameless(&'a mut dyn Nameless),
    /// The zone commands of a zoned device ([`Zoned`], e.g. [`zns`](crate::schemes::host::zns)).
    Zoned(&'a mut dyn Zoned),
    /// The commands of an FTL whose flash commands wait in per-die queues
    /// until a dispatcher has the dies take them ([`DieQueues`], e.g. the
    /// page map's `gc_queue`).
    Queued(&'a mut dyn DieQueues),
}

impl std::fmt::Debug for Extension<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Extension<'_> {
    /// The extension's name, e.g. for an error that says which one a command needs.
    pub fn name(&self) -> &'static str {
        match self {
            Extension::None => "none",
            Extension::Cache(_) => "cache",
            Extension::Nameless(_) => "nameless",
            Extension::Zoned(_) => "zoned",
            Extension::Queued(_) => "queued",
        }
    }
}

/// An FTL that moves data when a command or its garbage collection decides
/// to, but books the time of the flash commands later, from per-die queues,
/// as each die falls free, with a controller's priorities and multi-plane
/// pairing (the page map's `gc_queue`, modelling MQSim's transaction
/// scheduler). Off until a dispatcher that plays the queues turns it on
/// ([`DieQueues::set_queueing`]); off, the FTL times every command when it
/// is issued, as any other.
///
/// A host write whose program the FTL queued completes when the program's
/// time is booked: the FTL counts it on the command's [`Io`]
/// ([`Io::queue_host`]) and reports its finish under the command's number
/// ([`Io::set_token`]) from [`DieQueues::take_played`].
pub trait DieQueues {
    /// Turns queueing on or off. Turning it off with work still queued is
    /// refused ([`FtlError::BadCommand`]): play it first.
    fn set_queueing(&mut self, on: bool) -> Result<(), FtlError>;
    /// Commands queued and not yet played, on all dies.
    fn queued(&self) -> usize;
    /// When the earliest die with work queued falls free ([`SimTime::MAX`]:
    /// nothing is queued), at or after `now`.
    fn next_play(&self, flash: &crate::Flash, now: SimTime) -> SimTime;
    /// Whether host reads for `die` must wait (until its queue has played
    /// what holds them): a die whose garbage collection is queued takes it
    /// first.
    fn holds_reads(&self, die: DieId) -> bool;
    /// Has every die with work queued that is free at [`Io::now`] take its
    /// next command (and, where its rules allow, commands of its other planes
    /// with it), until no such die is left.
    fn play(&mut self, io: &mut Io) -> Result<(), FtlError>;
    /// Moves into `out` the queued host programs played since the last call:
    /// each command's number ([`Io::set_token`]) and the program's finish.
    fn take_played(&mut self, out: &mut Vec<(u64, SimTime)>);
}

/// A capability of the real-time schemes (001, 002, 000): the guarantee they
/// promise and, for those that admit tasks, the verdicts and the task space.
/// Reached through [`Ftl::capabilities`](crate::Ftl::capabilities).
pub trait RealTime {
    /// The worst-case service time the scheme promises for one page command
    /// (see the simulator's definition of service), if it promises one on this
    /// chip and configuration; the simulator counts the commands that exceed it.
    fn service_bound(&self) -> Option<SimTime>;
    /// The verdict of the FTL's admission control on each task of the set it was
    /// configured with, in the set's order (e.g. Telomere). `None`: no admission
    /// control; every stream is served as best it can.
    fn admission(&self) -> Option<Vec<StreamVerdict>> {
        None
    }
    /// Logical pages after [`Ftl::logical_pages`](crate::Ftl::logical_pages) that hold admitted tasks' data:
    /// only writes whose [`Hint::stream`] is an admitted task may use them; reads
    /// and trims reach them too. 0 (the default) without reservations.
    fn stream_pages(&self) -> u32 {
        0
    }
}

/// A capability of schemes that know where a page command will land without a
/// flash operation; the simulator's per-die dispatch holds a command until its
/// die is free. Reached through [`Ftl::capabilities`](crate::Ftl::capabilities). Both answers are hints, asked
/// again before the command is issued.
pub trait Placement {
    /// The die a read of `lpn` would touch now (e.g. from a mapping table in
    /// RAM); `None` when the page is not on the flash or the FTL cannot tell.
    fn die_of(&self, lpn: Lpn) -> Option<DieId>;
    /// The plane of its die and the page offset in its block a read of
    /// `lpn` would read now, when the FTL can tell from RAM (a page map's
    /// table; for a page never written that the page map's
    /// `unwritten_reads = "flash"` maps when its read is prepared, the offset
    /// it took); `None` (the default) otherwise. A dispatcher that queues
    /// reads at their dies uses it to take the reads of other planes at the
    /// same page offset with the one it issues, as one multi-plane read.
    fn read_slot(&self, _lpn: Lpn) -> Option<(u32, u32)> {
        None
    }
    /// The die a write of `lpn` with `hint` would be programmed on if issued now,
    /// when the FTL places it by a rule of its own rather than on whichever die
    /// is free (e.g. a task's stripe); `None` (the default) when it takes a free
    /// die.
    fn write_die(&self, _lpn: Lpn, _hint: &Hint) -> Option<DieId> {
        None
    }
    /// The plane of its die (0 to planes a die - 1) a write of `lpn` with
    /// `hint` would be programmed on, when the FTL places it by a static rule
    /// (the page map's `gc_model = "mqsim"`); `None` (the default) otherwise.
    /// A layer that queues writes for a die uses it to program pages of
    /// different planes together.
    fn write_plane(&self, _lpn: Lpn, _hint: &Hint) -> Option<u32> {
        None
    }
    /// The page offset in its block a write of `lpn` with `hint` would be
    /// programmed at if issued now (the next page of its plane's open block;
    /// 0 when a block is to be opened; moved on by the pages
    /// [`Placement::pages_taken_by_reads`] counts), when the FTL places it by a static
    /// rule; `None` (the default) otherwise. A layer that queues writes for
    /// a die uses it to pair them as MQSim's scheduler does.
    fn write_offset(&self, _lpn: Lpn, _hint: &Hint) -> Option<u32> {
        None
    }
    /// Pages of the plane a write of `lpn` with `hint` goes to that the FTL
    /// has taken for reads so far, counted wrapping (the page map's
    /// `unwritten_reads = "flash"`, which maps a page it reads unwritten as
    /// MQSim does); 0 (the default) for an FTL that takes none. A layer that
    /// queues writes for a die adds those taken since a queued write was
    /// placed to the offset of the next one behind it.
    fn pages_taken_by_reads(&self, _lpn: Lpn, _hint: &Hint) -> u64 {
        0
    }
}

/// Most blocks one [`SolidStateCache::exists`] call may ask about.
pub const MAX_EXISTS: u64 = 1 << 20;

/// The cache commands of a solid-state cache (FlashTier, 003 Section 2.2),
/// reached through [`crate::Ftl::extension`] ([`crate::Extension::Cache`]). Blocks are disk block numbers, each one
/// flash page of data; see the [module documentation](crate::schemes::host::ssc) for the result of
/// odd input and the durability contract.
pub trait SolidStateCache {
    /// Caches `data` as the clean contents of `block` (the disk holds the same
    /// data). A dirty copy of the block is replaced, and the block becomes clean.
    fn write_clean(&mut self, io: &mut Io, block: u64, data: Payload) -> Result<(), FtlError>;
    /// Caches `data` as the dirty contents of `block` (newer than the disk).
    /// Refused with [`FtlError::DeviceFull`] when the cache already holds its
    /// capacity of dirty blocks.
    fn write_dirty(&mut self, io: &mut Io, block: u64, data: Payload) -> Result<(), FtlError>;
    /// The cached contents of `block`, or `Ok(None)` on a miss (never cached,
    /// evicted, or evicted silently when clean). A miss touches no flash; the
    /// prototype returned it as a distinguished data pattern over the data path
    /// (003 Section 3.2), a transfer the host side may charge.
    fn read(&mut self, io: &mut Io, block: u64) -> Result<Option<Payload>, FtlError>;
    /// Removes `block` from the cache; a no-op when it is absent. Durable once a
    /// later flush completes.
    fn evict(&mut self, io: &mut Io, block: u64) -> Result<(), FtlError>;
    /// Marks a dirty `block` clean (the host wrote it back to the disk); a no-op
    /// when it is absent or clean. Durable once a later flush completes.
    fn clean(&mut self, io: &mut Io, block: u64) -> Result<(), FtlError>;
    /// Which of the `count` blocks from `first` are dirty, in order. At most
    /// [`MAX_EXISTS`] blocks; a longer range is refused. Answered from the map
    /// in RAM, with no flash operation.
    fn exists(&mut self, io: &mut Io, first: u64, count: u64) -> Result<Vec<bool>, FtlError>;
    /// Makes every earlier evict and clean durable (writes are durable when
    /// acknowledged). The same as [`crate::Ftl::flush`].
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError>;
    /// Clean blocks garbage collection has evicted silently so far.
    fn evictions(&self) -> u64;
    /// Blocks cached now (clean and dirty).
    fn cached_blocks(&self) -> u64;
    /// Dirty blocks cached now.
    fn dirty_blocks(&self) -> u64;
    /// The most dirty blocks the cache holds (with silent eviction off, the most
    /// blocks it holds).
    fn capacity(&self) -> u64;
}

/// A physical address handed to the host: the physical page number in the low
/// 32 bits, the erase count of its block at the write in the high 32 bits (see
/// the [module documentation](crate::schemes::host::nameless), "Addresses").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PhysAddr(pub u64);

impl PhysAddr {
    /// The address of page `ppa` in a block erased `generation` times.
    pub fn new(ppa: ftlab_nand::Ppa, generation: u32) -> Self {
        PhysAddr(u64::from(generation) << 32 | u64::from(ppa.0))
    }
    /// The physical page.
    pub fn ppa(self) -> ftlab_nand::Ppa {
        ftlab_nand::Ppa(self.0 as u32)
    }
    /// The erase count of the page's block when it was written.
    pub fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Display for PhysAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x} (page {}, generation {})", self.0, self.ppa().0, self.generation())
    }
}

/// A migration up-call (Table 3, "migration-callback"): the data block named
/// `tag` moved to `new`. `old` is the address it had, or `None` for a replay
/// after a power cut (the device no longer knows it; the host finds the block
/// by its tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub old: Option<PhysAddr>,
    pub new: PhysAddr,
    pub tag: u32,
    /// Whether the page is a moved copy (its OOB records the move); in a
    /// replay, `false` is a data page never moved, reported for the host's
    /// check (see the module documentation).
    pub moved: bool,
}

/// The Nameless-Write commands (003 Section 3.4, Table 3), reached through
/// [`crate::Ftl::extension`] ([`crate::Extension::Nameless`]). See the [module documentation](crate::schemes::host::nameless) for the
/// results of odd input and the contract after a power cut.
pub trait Nameless {
    /// Writes a data block with no logical address; returns the address the
    /// device chose. `tag` names the block to the host (kept in the OOB).
    fn nameless_write(&mut self, io: &mut Io, tag: u32, data: Payload) -> Result<PhysAddr, FtlError>;
    /// Writes a metadata block at logical address `lba`.
    fn virtual_write(&mut self, io: &mut Io, lba: u32, data: Payload) -> Result<(), FtlError>;
    /// Reads a metadata block; `None` if it was never written.
    fn virtual_read(&mut self, io: &mut Io, lba: u32) -> Result<Option<Payload>, FtlError>;
    /// Reads a data block by its address (redirected while a migration of it
    /// is pending).
    fn physical_read(&mut self, io: &mut Io, addr: PhysAddr) -> Result<Payload, FtlError>;
    /// Frees a data block by its address.
    fn free(&mut self, io: &mut Io, addr: PhysAddr) -> Result<(), FtlError>;
    /// The migrations queued since the last call, oldest first.
    fn take_migrations(&mut self) -> Vec<Migration>;
    /// The host recorded migration `m`: its redirect is dropped. A no-op when
    /// it is not pending (a replay, already acknowledged, or freed).
    fn ack_migration(&mut self, m: &Migration);
    /// Migrations recorded and not yet acknowledged.
    fn pending_migrations(&self) -> u64;
    /// Data pages moved by garbage collection so far (each one a migration).
    fn migrations(&self) -> u64;
    /// Live data pages.
    fn data_pages(&self) -> u64;
    /// The most live data pages the device holds.
    fn data_capacity(&self) -> u64;
    /// Metadata addresses (the virtual-write space).
    fn virtual_pages(&self) -> u32;
}

/// A zone's state: the zone state machine of the NVMe Zoned Namespace Command
/// Set (ZNS 1.1, Section 2.1.1: ZSE, ZSIO, ZSEO, ZSC, ZSF, ZSRO, ZSO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneState {
    /// Nothing written; the write pointer at the zone's start.
    Empty,
    /// Opened by a write or an append.
    ImplicitlyOpened,
    /// Opened by the host's Open command.
    ExplicitlyOpened,
    /// Written in part, not open: it holds an active resource, no open one.
    Closed,
    /// Written to its capacity, or finished: no write until a reset.
    Full,
    /// Readable, not writable (a media failure); only Offline leaves it.
    ReadOnly,
    /// Neither readable nor writable, for good.
    Offline,
}

impl ZoneState {
    /// The zone state's number in a zone report's curve
    /// (`zone_state_by_zone`): 0 empty, 1 implicitly opened, 2 explicitly
    /// opened, 3 closed, 4 full, 5 read-only, 6 offline.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The zone state whose [`ZoneState::code`] is `code`, if any.
    pub fn from_code(code: u8) -> Option<ZoneState> {
        use ZoneState::*;
        [Empty, ImplicitlyOpened, ExplicitlyOpened, Closed, Full, ReadOnly, Offline].get(usize::from(code)).copied()
    }

    /// Its name as reports and configs spell it: `empty`,
    /// `implicitly-opened`, `explicitly-opened`, `closed`, `full`,
    /// `read-only`, `offline`.
    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "empty",
            ZoneState::ImplicitlyOpened => "implicitly-opened",
            ZoneState::ExplicitlyOpened => "explicitly-opened",
            ZoneState::Closed => "closed",
            ZoneState::Full => "full",
            ZoneState::ReadOnly => "read-only",
            ZoneState::Offline => "offline",
        }
    }

    /// Whether the zone holds one of the open resources (`max_open`).
    pub fn is_open(self) -> bool {
        matches!(self, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened)
    }
    /// Whether the zone holds one of the active resources (`max_active`):
    /// open or closed.
    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

/// One zone as a zone report gives it (ZNS 1.1, Zone Descriptor), in logical
/// pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneDescriptor {
    /// The zone's first logical page (ZSLBA).
    pub start: u32,
    /// Pages that can be written (ZCAP): at most the zone size; the pages
    /// between it and the next zone's start are not writable.
    pub capacity: u32,
    /// The next page a write must address (the write pointer): `start` plus
    /// the pages written; for a full, read-only or offline zone, `start` plus
    /// the pages that hold data (the NVMe write pointer is not valid there).
    pub write_pointer: u32,
    /// Its state.
    pub state: ZoneState,
    /// Whether a Zone Random Write Area is allocated to it (the zone
    /// attribute ZRWAV).
    pub zrwa: bool,
}

/// A zoned device's Zone Random Write Area limits (TP 4076, Identify
/// Namespace: ZRWAS, ZRWAFG, NUMZRWA), in logical pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZrwaLimits {
    /// Pages of a ZRWA (ZRWAS): a zone with one takes writes anywhere in the
    /// ZRWAS pages from its write pointer, overwrites among them.
    pub size: u32,
    /// The flush granularity (ZRWAFG): the write pointer moves by multiples
    /// of it. Divides `size`.
    pub flush_granularity: u32,
    /// Most zones with a ZRWA at once (NUMZRWA).
    pub max_zones: u32,
}

/// The zone status codes of ZNS 1.1 (Figure 39: Zoned Namespace Command Set
/// status values) a zone command fails with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZoneStatus {
    /// Zone Boundary Error (B8h): a write past the zone's capacity, or across
    /// its end.
    Boundary,
    /// Zone Is Full (B9h).
    Full,
    /// Zone Is Read Only (BAh).
    ReadOnly,
    /// Zone Is Offline (BBh).
    Offline,
    /// Zone Invalid Write (BCh): a write not at the write pointer.
    InvalidWrite,
    /// Too Many Active Zones (BDh).
    TooManyActive,
    /// Too Many Open Zones (BEh).
    TooManyOpen,
    /// Zone Invalid State Transition (BFh): a management action the zone's
    /// state does not allow.
    InvalidTransition,
    /// Invalid Zone Operation Request (B6h): a Zone Random Write Area command
    /// on a device without ZRWAs, or a zone append to a zone with a ZRWA.
    InvalidZoneOperation,
    /// Zone ZRWA Resources Unavailable (B7h): every ZRWA resource is taken,
    /// or the write pointer is not a multiple of the flush granularity.
    ZrwaUnavailable,
    /// Invalid Field in Command (02h, a generic status): an explicit ZRWA
    /// flush of a zone with no ZRWA, or of a length that is not a multiple
    /// of the flush granularity.
    InvalidField,
}

impl ZoneStatus {
    /// The NVMe status code.
    pub fn code(self) -> u8 {
        match self {
            ZoneStatus::Boundary => 0xB8,
            ZoneStatus::Full => 0xB9,
            ZoneStatus::ReadOnly => 0xBA,
            ZoneStatus::Offline => 0xBB,
            ZoneStatus::InvalidWrite => 0xBC,
            ZoneStatus::TooManyActive => 0xBD,
            ZoneStatus::TooManyOpen => 0xBE,
            ZoneStatus::InvalidTransition => 0xBF,
            ZoneStatus::InvalidZoneOperation => 0xB6,
            ZoneStatus::ZrwaUnavailable => 0xB7,
            ZoneStatus::InvalidField => 0x02,
        }
    }
}

/// A zone command refused by the zone state machine: the zone, the NVMe
/// status and a message that names the zone, its state and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("zone {zone}: {message}")]
pub struct ZoneError {
    /// The zone's number (its first logical page over the zone size).
    pub zone: u32,
    /// The NVMe status.
    pub status: ZoneStatus,
    /// What was refused and why, with the fix.
    pub message: String,
}

/// The zone management actions (ZNS 1.1, Zone Management Send; the two
/// Zone Random Write Area actions of TP 4076).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneAction {
    /// Open: to explicitly opened.
    Open,
    /// Close: an open zone to closed (to empty if nothing was written).
    Close,
    /// Finish: to full, whatever was written.
    Finish,
    /// Reset: to empty, its data gone (its blocks erased).
    Reset,
    /// Offline: a read-only zone to offline.
    Offline,
    /// Open with the Zone Random Write Area Allocation flag (ZRWAA): to
    /// explicitly opened, with a ZRWA allocated (see
    /// [`zns`](crate::schemes::host::zns), "Zone Random Write Area").
    OpenZrwa,
    /// Flush Explicit ZRWA Range (action 11h): commits the zone's ZRWA
    /// below logical page `upto`, which becomes the write pointer. NVMe
    /// names the last logical block flushed, `upto - 1`.
    FlushZrwa {
        /// The logical page (device-wide) the write pointer moves to.
        upto: u32,
    },
}

impl ZoneAction {
    /// Its name as the front ends spell it: `open`, `close`, `finish`,
    /// `reset`, `offline`, `open-zrwa`, `flush-zrwa`.
    pub fn name(self) -> &'static str {
        match self {
            ZoneAction::Open => "open",
            ZoneAction::Close => "close",
            ZoneAction::Finish => "finish",
            ZoneAction::Reset => "reset",
            ZoneAction::Offline => "offline",
            ZoneAction::OpenZrwa => "open-zrwa",
            ZoneAction::FlushZrwa { .. } => "flush-zrwa",
        }
    }
}

/// The commands of a zoned device (NVMe ZNS), reached through
/// [`crate::Ftl::extension`] ([`Extension::Zoned`]). Zones are numbered from 0;
/// zone `z` spans logical pages `z * zone_size()` to `(z + 1) * zone_size() - 1`,
/// of which the first `zone_capacity()` are writable. The block commands of
/// [`crate::Ftl`] are the zoned device's reads and writes: a write must address
/// its zone's write pointer.
pub trait Zoned {
    /// Zones of the device.
    fn zones(&self) -> u32;
    /// Logical pages a zone spans (ZSZE).
    fn zone_size(&self) -> u32;
    /// Writable pages of a zone (ZCAP).
    fn zone_capacity(&self) -> u32;
    /// Most zones open at once (MOR + 1); 0: no limit.
    fn max_open(&self) -> u32;
    /// Most zones active (open or closed) at once (MAR + 1); 0: no limit.
    fn max_active(&self) -> u32;
    /// The device's Zone Random Write Area limits; `None` (the default):
    /// it has no ZRWA, and refuses [`ZoneAction::OpenZrwa`] and
    /// [`ZoneAction::FlushZrwa`].
    fn zrwa(&self) -> Option<ZrwaLimits> {
        None
    }
    /// Zone `zone`'s descriptor, or an error naming the zones there are.
    fn zone(&self, zone: u32) -> Result<ZoneDescriptor, FtlError>;
    /// Runs `action` on `zone` (Zone Management Send).
    fn manage(&mut self, io: &mut Io, zone: u32, action: ZoneAction) -> Result<(), FtlError>;
    /// Zone Append: writes `data` at `zone`'s write pointer and returns the
    /// logical page it was written to. `meta` is the page's metadata (NVMe's
    /// per-block metadata; a host FTL writes its own logical page there); by
    /// default, and for a block write, the page's own logical page.
    fn append(&mut self, io: &mut Io, zone: u32, data: Payload, meta: Option<u32>) -> Result<Lpn, FtlError>;
    /// The metadata of a written page and the order it was written in among
    /// all pages (what a host needs to rebuild its map after a power cut;
    /// the order stands in for a sequence number a host would keep in the
    /// metadata itself); `None` for a page not written. Reads the page's
    /// metadata from the flash.
    fn metadata(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<PageMeta>, FtlError>;
}

/// A written page's metadata ([`Zoned::metadata`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageMeta {
    /// What the writer gave ([`Zoned::append`]).
    pub meta: u32,
    /// The order it was written in: a later write has a larger one.
    pub order: u64,
}
