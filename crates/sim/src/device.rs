//! The simulated SSD, taken one host command at a time.
//!
//! A [`Device`] owns the medium ([`Flash`]), the FTL on it and the host
//! interface. A caller [`submit`](Device::submit)s a [`Command`] at a simulated
//! time, then collects [`Completion`]s with [`step`](Device::step) or
//! [`step_until`](Device::step_until), in order of completion time:
//!
//! ```
//! use ftlab_sim::device::{Command, Device};
//! use ftlab_sim::RunConfig;
//! use ftlab_nand::SimTime;
//!
//! let config = RunConfig::from_toml(
//!     "[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n[ftl]\nkind = \"pagemap\"\n",
//!     "example",
//! )
//! .unwrap();
//! let mut dev = Device::open(&config).unwrap();
//! // 1 KiB at byte 3072: a partial-page write, merged into the page with its
//! // old (here: zero) bytes.
//! dev.submit(SimTime::ZERO, Command::write(3072, vec![7; 1024])).unwrap();
//! let written = dev.step().unwrap();
//! assert!(written.result.is_ok());
//! dev.submit(written.completed, Command::read(2048, 4096)).unwrap();
//! let read = dev.step().unwrap();
//! let data = read.result.unwrap().data.unwrap();
//! assert_eq!(&data[..1024], &[0; 1024][..]);
//! assert_eq!(&data[1024..2048], &[7; 1024][..]);
//! assert_eq!(dev.counters().rmw_pages, 1);
//! ```
//!
//! **When a command runs.** A command is served when it is submitted: its page
//! commands go to the FTL at the submission time (the pages of one command
//! proceed in parallel on different dies), and the flash work it needs is
//! reserved on the die and channel timelines. Its completion is delivered when
//! the clock reaches it. A command is never served before the clock: submitting
//! at a time before the clock is an error, never a command served in the past.
//!
//! **Addresses and data.** Offsets and lengths are bytes, multiples of the
//! 512-byte [`SECTOR`]. Pages here are the FTL's logical pages: flash pages,
//! or the smaller mapping unit of an FTL that maps sub-page units
//! ([`Ftl::unit_bytes`], e.g. 4 KiB units of 32 KiB flash pages). A write
//! smaller than a logical page merges its bytes into the page: the page is read (its old bytes, or zeroes if it was never
//! written) and rewritten, and the command counts a read-modify-write
//! ([`DeviceCounters::rmw_pages`]). A page never written or trimmed reads as
//! zeroes. Data needs a byte page store (`device.store = "bytes"`, which
//! [`Device::open`] sets); it is sparse, so a device's memory grows with the
//! pages written, not with its size.
//!
//! **Durability.** What an acknowledged write survives is the FTL's contract
//! ([`Durability`]): with [`Durability::OnAck`] every completed write survives a
//! power cut; with [`Durability::OnFlush`] only writes completed before a
//! completed [`Command::Flush`], or written with FUA, do. [`Device::cut_power`]
//! cuts the power at a time, [`Device::recover`] rebuilds the FTL from the
//! medium. [`Device::save_image`] saves the medium to a file after a clean
//! power-off and [`Device::open_image`] opens it again ([`crate::image`]).
//!
//! Replay drivers (trace, generator, periodic tasks) sit on top: they decide
//! when each command is submitted ([`crate::Engine`] hands page commands
//! straight to [`Device::page`], the primitive every host command is made of).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use thiserror::Error;

use ftlab_ftl::{Durability, ErrorKind, Flash, Ftl, FtlBuilder, FtlError, Hint, Lpn};
use ftlab_nand::{DieId, Payload, SimTime};

use crate::host_link::HostLink;
use crate::metrics::{Latency, LatencySummary};

/// The host's addressing unit, bytes.
pub const SECTOR: u64 = 512;

/// A host command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// Reads `len` bytes at byte `offset`.
    Read { offset: u64, len: u64 },
    /// Writes `data` at byte `offset`; with `fua` it completes only once durable.
    Write { offset: u64, data: Vec<u8>, fua: bool },
    /// Discards `len` bytes at byte `offset`: pages it covers whole read as zeroes
    /// afterwards if the FTL supports trim; a trim is advisory, so an FTL without
    /// it keeps the data, parts of pages are left alone, and after a power cut a
    /// trimmed page may read back data it held before.
    Trim { offset: u64, len: u64 },
    /// Writes zeroes over `len` bytes at byte `offset`. `may_trim` says the
    /// host allows the pages to be trimmed instead (NBD's write-zeroes without
    /// NO_HOLE); zero pages are written all the same, because a trim is not
    /// durable in ftlab's FTLs (after a power cut a trimmed page may read back
    /// older data), and zeroes must stay zeroes.
    WriteZeroes { offset: u64, len: u64, fua: bool, may_trim: bool },
    /// Makes every write completed before it durable.
    Flush,
}

impl Command {
    /// A read of `len` bytes at `offset`.
    pub fn read(offset: u64, len: u64) -> Self {
        Command::Read { offset, len }
    }

    /// A write of `data` at `offset`, without FUA.
    pub fn write(offset: u64, data: Vec<u8>) -> Self {
        Command::Write { offset, data, fua: false }
    }

    /// The command's name, as counters and errors give it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Read { .. } => "read",
            Command::Write { .. } => "write",
            Command::Trim { .. } => "trim",
            Command::WriteZeroes { .. } => "write-zeroes",
            Command::Flush => "flush",
        }
    }

    /// Its byte range (empty for a flush).
    fn range(&self) -> (u64, u64) {
        match self {
            Command::Read { offset, len }
            | Command::Trim { offset, len }
            | Command::WriteZeroes { offset, len, .. } => (*offset, *len),
            Command::Write { offset, data, .. } => (*offset, data.len() as u64),
            Command::Flush => (0, 0),
        }
    }
}

/// The tag of a submitted command, unique in a device's life.
pub type Tag = u64;

/// A command's completion.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The tag [`Device::submit`] returned.
    pub tag: Tag,
    /// The command's name ([`Command::name`]).
    pub command: &'static str,
    /// When it was submitted.
    pub submitted: SimTime,
    /// When it completed (the host is acknowledged).
    pub completed: SimTime,
    /// What it returned.
    pub result: Result<Reply, DeviceError>,
}

impl Completion {
    /// Its response time, ns.
    pub fn latency_ns(&self) -> u64 {
        self.completed.0.saturating_sub(self.submitted.0)
    }
}

/// What a successful command returns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    /// The bytes a read returns.
    pub data: Option<Vec<u8>>,
}

/// Why a host command failed. Each has a kind ([`DeviceError::kind`]) that a
/// block-device server maps to an errno and Python to an exception class.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// An offset or length that is not a whole number of sectors.
    #[error("{command}: {what} {value} is not a multiple of the {SECTOR}-byte sector; align it to {SECTOR} bytes")]
    Misaligned { command: &'static str, what: &'static str, value: u64 },
    /// A command with no bytes.
    #[error("{command} of 0 bytes: give a length of at least one {SECTOR}-byte sector")]
    Empty { command: &'static str },
    /// A range beyond the device's capacity.
    #[error("{command} of {len} bytes at byte {offset} runs past the device's {capacity} bytes")]
    OutOfRange { command: &'static str, offset: u64, len: u64, capacity: u64 },
    /// A command submitted before the clock.
    #[error("{command} submitted at {at} ns, before the device's clock at {clock} ns: submit at or after the clock")]
    InThePast { command: &'static str, at: u64, clock: u64 },
    /// Data commands on a device that keeps tokens, not bytes.
    #[error("{command} needs page bytes, but the device keeps tokens: set device.store = \"bytes\"")]
    NoBytes { command: &'static str },
    /// The device has no power ([`Device::cut_power`]) until [`Device::recover`].
    #[error("{command}: the device is powered off; recover it first")]
    PoweredOff { command: &'static str },
    /// The power was cut before the command completed: whether its data survived
    /// is the FTL's durability contract.
    #[error("{command}: the power was cut at {cut_at} ns, before it completed")]
    PowerCut { command: &'static str, cut_at: u64 },
    /// A power cut on a device built without power cuts (the replay
    /// engine's, [`ftlab_nand::Nand::set_power_cuts`]).
    #[error("power cut: this device was built without power cuts (a replay's device); open one with Device::open")]
    NoPowerCuts,
    /// The FTL failed a page command.
    #[error("{command} of logical page {lpn} failed: {source}")]
    Ftl {
        command: &'static str,
        lpn: u64,
        #[source]
        source: FtlError,
    },
    /// A zone command on a device that is not zoned.
    #[error("{command}: the device is not zoned (its FTL has no zone commands): configure ftl.kind = \"zns\"")]
    NotZoned { command: &'static str },
    /// A zone command the zoned device failed (its NVMe status in `source`).
    #[error("{command} of zone {zone} failed: {source}")]
    Zone {
        command: &'static str,
        zone: u32,
        #[source]
        source: FtlError,
    },
}

impl DeviceError {
    /// The kind of failure: bad commands are [`ErrorKind::Invalid`]; an FTL
    /// failure keeps the FTL's kind; a lost power is [`ErrorKind::Io`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            DeviceError::Misaligned { .. }
            | DeviceError::Empty { .. }
            | DeviceError::OutOfRange { .. }
            | DeviceError::InThePast { .. } => ErrorKind::Invalid,
            DeviceError::NoBytes { .. } | DeviceError::NoPowerCuts | DeviceError::NotZoned { .. } => {
                ErrorKind::Unsupported
            }
            DeviceError::Zone { source, .. } => source.kind(),
            DeviceError::PoweredOff { .. } | DeviceError::PowerCut { .. } => ErrorKind::Io,
            DeviceError::Ftl { source, .. } => source.kind(),
        }
    }
}

/// One page command, as a host command or a replay driver issues it to the FTL.
#[derive(Debug)]
pub struct PageCommand<'a> {
    /// The logical page.
    pub lpn: u64,
    /// When it is issued, ns.
    pub at: u64,
    /// When it became ready (at or before `at`), ns: its service time starts
    /// there at the earliest.
    pub ready: u64,
    /// When its request arrived, ns: it may not be issued before.
    pub arrival: u64,
    /// The die a dispatcher held it for, if any.
    pub held: Option<usize>,
    /// For a read held for its die: when the die became free for it, ns,
    /// at or before `at` ([`ftlab_nand::Issue::since`]).
    pub since: Option<u64>,
    /// What it does.
    pub op: PageOp<'a>,
    /// Bytes of the page a read moves to the host, for a request that covers
    /// part of it; 0: the whole page. A write's are its hint's
    /// ([`Hint::bytes`]). Only a chip with sector transfers times the flash
    /// transfers by them ([`ftlab_nand::Commands::sector_transfers`]).
    pub bytes: u32,
}

/// What a page command does.
#[derive(Debug)]
pub enum PageOp<'a> {
    /// Reads the page.
    Read,
    /// Reads the page as one more plane of the host read issued just before
    /// it, as one multi-plane read where the medium takes it as one
    /// ([`ftlab_ftl::Io::set_joins_read`]); else as [`PageOp::Read`].
    ReadJoined,
    /// Writes `data`; with `rmw` the page is read first (a read-modify-write
    /// whose read is returned).
    Write { data: Payload, hint: Hint, rmw: bool },
    /// Merges `bytes` into the page at byte `at` (the page is read first, zeroes
    /// if never written) and writes it back.
    Merge { at: usize, bytes: &'a [u8], hint: Hint },
    /// Trims the page.
    Trim,
}

/// What a page command did.
#[derive(Debug)]
pub struct PageDone {
    /// When it completed, ns.
    pub done: u64,
    /// Its service time, ns: from the later of its readiness and the end of the
    /// last host operation of another command on its die, to its completion, less
    /// its wait on the channel behind other host transfers.
    pub service_ns: u64,
    /// What a read, or the read of a read-modify-write, returned.
    pub read: Option<Result<Option<Payload>, FtlError>>,
    /// Whether a trim was carried out (an FTL without trim keeps the data).
    pub trimmed: bool,
    /// The number its host programs were queued under, and how many were,
    /// when an FTL with per-die queues turned on ([`ftlab_ftl::DieQueues`])
    /// queued them: it completes when they are played
    /// ([`Device::play_queued`]), not at `done`.
    pub queued: Option<(u64, u32)>,
}

/// Why a page command was not carried out.
#[derive(Debug)]
pub enum PageError {
    /// It would start before its arrival or the clock: a defect of the driver.
    Early,
    /// The FTL failed it.
    Ftl(FtlError),
}

/// Host-side counters of a device since it was opened.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct DeviceCounters {
    /// Simulated time, ns: the latest completion delivered or clock reached.
    pub now_ns: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub write_zeroes: u64,
    pub flushes: u64,
    /// Commands that failed.
    pub errors: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Pages written in part, merged with their old bytes (logical pages: the
    /// FTL's unit, [`Device::page_size`]).
    pub rmw_pages: u64,
    /// Flash pages programmed for the host (an FTL that maps sub-page units
    /// packs several logical pages into one).
    pub host_pages_written: u64,
    pub flash_pages_programmed: u64,
    pub gc_page_copies: u64,
    pub erases: u64,
    /// Write amplification: flash programs per host page written.
    pub waf: Option<f64>,
    pub read_us: LatencySummary,
    pub write_us: LatencySummary,
    pub flush_us: LatencySummary,
}

/// Per-command response times.
#[derive(Debug, Default)]
struct HostStats {
    reads: u64,
    writes: u64,
    trims: u64,
    write_zeroes: u64,
    flushes: u64,
    errors: u64,
    bytes_read: u64,
    bytes_written: u64,
    rmw_pages: u64,
    read: Latency,
    write: Latency,
    flush: Latency,
}

/// The simulated SSD: medium, FTL and host interface.
pub struct Device {
    pub(crate) flash: Flash,
    pub(crate) ftl: Box<dyn Ftl>,
    builder: Option<Box<dyn FtlBuilder + Send + Sync>>,
    page_size: u64,
    logical_pages: u64,
    /// The logical space and the FTL's task space after it.
    addressable: u64,
    /// No command starts before it, ns.
    pub(crate) clock: u64,
    next_tag: Tag,
    /// Completions not yet delivered, by `(completion, tag)`.
    pending: BinaryHeap<Reverse<(u64, Tag)>>,
    finished: BTreeMap<Tag, Completion>,
    /// When the power was cut, while it is off.
    pub(crate) off_since: Option<u64>,
    stats: HostStats,
    /// What a device image records of the FTL ([`crate::image`]); empty for a
    /// device built by [`Device::new`], whose FTL no configuration names.
    pub(crate) label: String,
    /// The host link and controller, if modelled ([`crate::host_link`]).
    pub(crate) host_link: Option<HostLink>,
    /// The number the next page command's queued host programs are reported
    /// under ([`PageDone::queued`]).
    next_token: u64,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ftl", &self.ftl.name())
            .field("clock", &self.clock)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl Device {
    /// A device over `flash`, with `ftl` formatted on it; `builder` (the one that
    /// formatted it) rebuilds it after a power cut.
    pub fn new(flash: Flash, ftl: Box<dyn Ftl>, builder: Option<Box<dyn FtlBuilder + Send + Sync>>) -> Self {
        let page_size = u64::from(ftl.unit_bytes().unwrap_or(flash.nand().geometry().page_size));
        let logical_pages = u64::from(ftl.logical_pages());
        let addressable = logical_pages + u64::from(ftl.realtime().map_or(0, |r| r.stream_pages()));
        Device {
            flash,
            ftl,
            builder,
            page_size,
            logical_pages,
            addressable,
            clock: 0,
            next_tag: 0,
            pending: BinaryHeap::new(),
            finished: BTreeMap::new(),
            off_since: None,
            stats: HostStats::default(),
            label: String::new(),
            host_link: None,
            next_token: 1,
        }
    }

    /// Models the host link and controller with `link` ([`crate::host_link`];
    /// `None`: commands reach the FTL at dispatch and complete with their flash
    /// work).
    pub fn set_host_link(&mut self, link: Option<HostLink>) {
        self.host_link = link;
    }

    /// The medium.
    pub fn flash(&self) -> &Flash {
        &self.flash
    }

    /// The FTL.
    pub fn ftl(&self) -> &dyn Ftl {
        &*self.ftl
    }

    /// Bytes the host can address.
    pub fn capacity(&self) -> u64 {
        self.logical_pages * self.page_size
    }

    /// The FTL's logical page size, bytes (the preferred I/O size): the flash
    /// page, or the FTL's smaller mapping unit ([`Ftl::unit_bytes`]). Writes of
    /// less than it are merged into it (read-modify-write); logical pages and
    /// capacity count it.
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    /// Logical pages the FTL exports.
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    /// Logical pages including the FTL's task space.
    pub fn addressable_pages(&self) -> u64 {
        self.addressable
    }

    /// The clock: no command is served before it, ns.
    pub fn now(&self) -> SimTime {
        SimTime(self.clock)
    }

    /// Commands submitted whose completion was not delivered yet.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// When the next completion [`Device::step`] would deliver is due, without
    /// delivering it; `None` if nothing is in flight. A driver that paces
    /// replies to the wall clock sleeps until then.
    pub fn next_completion(&self) -> Option<SimTime> {
        self.pending.peek().map(|Reverse((t, _))| SimTime(*t))
    }

    /// Does at `at` the work a read of `lpn` needs before its flash read
    /// ([`Ftl::prepare_read`]); returns when the read may be issued, ns.
    pub fn prepare_read(&mut self, lpn: u64, at: u64) -> Result<u64, FtlError> {
        let mut io = self.flash.io(SimTime(at));
        let ready = self.ftl.prepare_read(&mut io, Lpn(lpn as u32))?;
        Ok(ready.0.max(at))
    }

    /// Turns the FTL's per-die queues on or off ([`ftlab_ftl::DieQueues`]);
    /// returns whether it has them.
    pub fn set_queueing(&mut self, on: bool) -> Result<bool, FtlError> {
        match self.ftl.die_queues() {
            Some(q) => q.set_queueing(on).map(|()| true),
            None => Ok(false),
        }
    }

    /// Commands waiting in the FTL's per-die queues.
    pub fn queued(&mut self) -> usize {
        self.ftl.die_queues().map_or(0, |q| q.queued())
    }

    /// Whether host reads for die `die` wait for the FTL's per-die queue
    /// ([`ftlab_ftl::DieQueues::holds_reads`]).
    pub fn holds_reads(&mut self, die: usize) -> bool {
        self.ftl.die_queues().is_some_and(|q| q.holds_reads(DieId(die as u32)))
    }

    /// When the FTL's per-die queues next have a die take a command, at or
    /// after `now` (`u64::MAX`: nothing queued).
    pub fn next_play(&mut self, now: u64) -> u64 {
        let flash = &self.flash;
        self.ftl.die_queues().map_or(u64::MAX, |q| q.next_play(flash, SimTime(now)).0)
    }

    /// Has the dies free at `at` take their queued commands
    /// ([`ftlab_ftl::DieQueues::play`]); appends to `out` each host program
    /// played: the number its page command was queued under
    /// ([`PageDone::queued`]) and its finish, ns.
    pub fn play_queued(&mut self, at: u64, out: &mut Vec<(u64, u64)>) -> Result<(), FtlError> {
        let Some(q) = self.ftl.die_queues() else { return Ok(()) };
        let mut io = self.flash.io(SimTime(at));
        q.play(&mut io)?;
        let mut played = Vec::new();
        q.take_played(&mut played);
        out.extend(played.into_iter().map(|(t, f)| (t, f.0)));
        Ok(())
    }

    /// When the FTL next takes a host write without holding it back
    /// ([`ftlab_ftl::Ftl::write_room_at`]), asked at `at`; `None`: at any time.
    pub fn write_room(&mut self, at: u64) -> Result<Option<u64>, FtlError> {
        let mut io = self.flash.io(SimTime(at));
        Ok(self.ftl.write_room_at(&mut io)?.map(|t| t.0.max(at)))
    }

    /// Carries out page command `cmd` now, through the FTL; the primitive every
    /// host command and every replay driver is made of. Fails with
    /// [`PageError::Early`] if it would start before its arrival or before the
    /// clock.
    ///
    /// Its service time runs from the later of its readiness and the end of the
    /// last host operation (of another command) on the dies its own host
    /// operations use, or on the die it was held for (a command may end up doing
    /// nothing on the die it waited for, e.g. a read of data that expired
    /// meanwhile), to its completion, less the time its host transfers waited on
    /// the channel behind other host transfers: waiting behind other host
    /// commands is queueing; waiting behind garbage-collection, map or
    /// wear-leveling work is service.
    #[inline(always)]
    pub fn page(&mut self, cmd: PageCommand<'_>) -> Result<PageDone, PageError> {
        let PageCommand { lpn, at, ready, arrival, held, since, op, bytes: read_bytes } = cmd;
        if at < arrival || at < self.clock {
            return Err(PageError::Early);
        }
        let held_behind = held.map_or(0, |d| self.flash.host_end(DieId(d as u32)).0);
        let page_size = self.page_size as u32;
        let mut io = self.flash.io(SimTime(at));
        io.set_token(self.next_token);
        let l = Lpn(lpn as u32);
        let mut read = None;
        let mut trimmed = false;
        match op {
            PageOp::Read | PageOp::ReadJoined => {
                io.set_host_bytes(read_bytes);
                io.set_held_since(since.map(SimTime));
                io.set_joins_read(matches!(op, PageOp::ReadJoined));
                read = Some(self.ftl.read(&mut io, l));
            }
            PageOp::Write { data, hint, rmw } => {
                if rmw {
                    // Read-modify-write: the untouched part of the page must survive.
                    io.set_update_read(true);
                    io.set_host_bytes(rest_of_page(page_size, hint.bytes));
                    let old = self.ftl.read(&mut io, l);
                    io.set_update_read(false);
                    read = Some(Ok(old.map_err(PageError::Ftl)?));
                }
                io.set_host_bytes(hint.bytes);
                self.ftl.write(&mut io, l, data, &hint).map_err(PageError::Ftl)?;
            }
            PageOp::Merge { at: from, bytes, hint } => {
                io.set_update_read(true);
                io.set_host_bytes(rest_of_page(page_size, bytes.len() as u32));
                let old = self.ftl.read(&mut io, l);
                io.set_update_read(false);
                io.set_host_bytes(bytes.len() as u32);
                let old = old.map_err(PageError::Ftl)?;
                let mut page = match &old {
                    Some(Payload::Bytes(b)) => b.to_vec(),
                    _ => vec![0; self.page_size as usize],
                };
                page[from..from + bytes.len()].copy_from_slice(bytes);
                self.ftl.write(&mut io, l, Payload::Bytes(page.into()), &hint).map_err(PageError::Ftl)?;
                read = Some(Ok(old));
            }
            PageOp::Trim => match self.ftl.trim(&mut io, l) {
                Ok(()) => trimmed = true,
                // Trim is advisory: the data stays.
                Err(FtlError::Unsupported(_)) => {}
                Err(e) => return Err(PageError::Ftl(e)),
            },
        }
        let done = io.completion().0;
        let from = ready.max(io.queued_behind().0).max(held_behind);
        let service_ns = done.saturating_sub(from).saturating_sub(io.queued_on_channel().0);
        let queued = (io.queued_host() > 0).then(|| {
            self.next_token += 1;
            (self.next_token - 1, io.queued_host())
        });
        Ok(PageDone { done, service_ns, read, trimmed, queued })
    }

    /// Submits `cmd` at `at` (at or after the clock, which moves to `at`) and
    /// serves it; returns its tag. Its completion is delivered by
    /// [`Device::step`] or [`Device::step_until`]. A command that cannot be
    /// served (bad range, a failing FTL) is submitted all the same and completes
    /// with its error; only a time before the clock is refused here.
    pub fn submit(&mut self, at: SimTime, cmd: Command) -> Result<Tag, DeviceError> {
        if at.0 < self.clock {
            return Err(DeviceError::InThePast { command: cmd.name(), at: at.0, clock: self.clock });
        }
        self.clock = at.0;
        let tag = self.next_tag;
        self.next_tag += 1;
        let command = cmd.name();
        let (completed, result) = match self.serve(at.0, cmd) {
            Ok((done, reply)) => (done, Ok(reply)),
            Err((done, e)) => (done, Err(e)),
        };
        self.account(command, at.0, completed, &result);
        self.pending.push(Reverse((completed, tag)));
        self.finished.insert(tag, Completion { tag, command, submitted: at, completed: SimTime(completed), result });
        Ok(tag)
    }

    /// Submits `cmd` at the clock and runs the clock to its completion, which it
    /// returns (completions of other commands due by then stay to be collected).
    pub fn execute(&mut self, cmd: Command) -> Completion {
        let at = self.now();
        // Submitting at the clock cannot be refused.
        let tag = self.submit(at, cmd).unwrap_or_default();
        self.wait(tag).unwrap_or_else(|| unreachable!("a submitted command has a completion"))
    }

    /// Runs the clock to the completion of command `tag` (if later) and
    /// returns it; completions of other commands, due before it or not, stay
    /// to be collected by [`Device::step`]. `None` if `tag` is not in flight
    /// (never submitted, or its completion was delivered).
    pub fn wait(&mut self, tag: Tag) -> Option<Completion> {
        let c = self.finished.remove(&tag)?;
        self.clock = self.clock.max(c.completed.0);
        self.pending.retain(|r| r.0 .1 != tag);
        Some(c)
    }

    /// The next completion in time order (ties by submission), moving the clock
    /// to it; `None` if nothing is in flight.
    pub fn step(&mut self) -> Option<Completion> {
        let Reverse((t, tag)) = self.pending.pop()?;
        self.clock = self.clock.max(t);
        self.finished.remove(&tag)
    }

    /// Every completion at or before `t`, in time order, moving the clock to `t`
    /// (or keeping it, if later).
    pub fn step_until(&mut self, t: SimTime) -> Vec<Completion> {
        let mut out = Vec::new();
        while let Some(Reverse((c, _))) = self.pending.peek() {
            if *c > t.0 {
                break;
            }
            out.extend(self.step());
        }
        self.clock = self.clock.max(t.0);
        out
    }

    /// Counters since the device was opened.
    pub fn counters(&self) -> DeviceCounters {
        let s = &self.stats;
        let c = self.flash.counters();
        DeviceCounters {
            now_ns: self.clock,
            reads: s.reads,
            writes: s.writes,
            trims: s.trims,
            write_zeroes: s.write_zeroes,
            flushes: s.flushes,
            errors: s.errors,
            bytes_read: s.bytes_read,
            bytes_written: s.bytes_written,
            rmw_pages: s.rmw_pages,
            host_pages_written: c.programs.get(ftlab_ftl::Purpose::Host),
            flash_pages_programmed: c.programs.total(),
            gc_page_copies: c.page_copies(),
            erases: c.erases.total(),
            waf: c.waf(),
            read_us: s.read.summary(),
            write_us: s.write.summary(),
            flush_us: s.flush.summary(),
        }
    }

    /// Whether the FTL is a zoned device (`ftl.kind = "zns"`), which takes
    /// the zone commands below; block commands reach it too, and a write
    /// anywhere but at its zone's write pointer fails as ZNS says.
    pub fn is_zoned(&mut self) -> bool {
        self.ftl.zoned().is_some()
    }

    /// Checks a zone command at `at`: powered, not before the clock, on a
    /// zoned device. Zone commands run at once (their flash work after what
    /// was submitted before), and the clock moves to their completion.
    fn zone_start(&mut self, command: &'static str, at: SimTime) -> Result<(), DeviceError> {
        if self.off_since.is_some() {
            return Err(DeviceError::PoweredOff { command });
        }
        if at.0 < self.clock {
            return Err(DeviceError::InThePast { command, at: at.0, clock: self.clock });
        }
        if self.ftl.zoned().is_none() {
            return Err(DeviceError::NotZoned { command });
        }
        self.clock = at.0;
        Ok(())
    }

    /// Report Zones: every zone's start, capacity, write pointer and state
    /// (logical pages of [`Device::page_size`] bytes).
    pub fn zone_report(&mut self) -> Result<Vec<ftlab_ftl::ZoneDescriptor>, DeviceError> {
        let command = "zone report";
        let zoned = self.ftl.zoned().ok_or(DeviceError::NotZoned { command })?;
        (0..zoned.zones())
            .map(|z| zoned.zone(z).map_err(|source| DeviceError::Zone { command, zone: z, source }))
            .collect()
    }

    /// Zone Append of `data` (whole pages) to `zone` at `at`: the pages go to
    /// the zone's write pointer, one after another. Returns the first page's
    /// byte offset and when the append completed (its last page acknowledged).
    /// A page that fails ends the append with its error; the pages before it
    /// stay written.
    pub fn zone_append(&mut self, at: SimTime, zone: u32, data: &[u8]) -> Result<(u64, SimTime), DeviceError> {
        let command = "zone append";
        if data.is_empty() {
            return Err(DeviceError::Empty { command });
        }
        if !(data.len() as u64).is_multiple_of(self.page_size) {
            return Err(DeviceError::Misaligned { command, what: "length", value: data.len() as u64 });
        }
        if self.flash.nand().store_kind() != ftlab_nand::StoreKind::Bytes {
            return Err(DeviceError::NoBytes { command });
        }
        self.zone_start(command, at)?;
        let mut io = self.flash.io(at);
        let mut first = None;
        let Some(zoned) = self.ftl.zoned() else { return Err(DeviceError::NotZoned { command }) };
        for page in data.chunks(self.page_size as usize) {
            let lpn = zoned
                .append(&mut io, zone, Payload::Bytes(page.to_vec().into()), None)
                .map_err(|source| DeviceError::Zone { command, zone, source })?;
            first.get_or_insert(lpn.0);
        }
        let done = io.completion().max(at);
        self.clock = self.clock.max(done.0);
        Ok((u64::from(first.unwrap_or(0)) * self.page_size, done))
    }

    /// Zone Management Send: `action` on `zone` at `at`. Returns when it
    /// completed.
    pub fn zone_manage(
        &mut self,
        at: SimTime,
        zone: u32,
        action: ftlab_ftl::ZoneAction,
    ) -> Result<SimTime, DeviceError> {
        let command = "zone management";
        self.zone_start(command, at)?;
        let mut io = self.flash.io(at);
        let Some(zoned) = self.ftl.zoned() else { return Err(DeviceError::NotZoned { command }) };
        zoned.manage(&mut io, zone, action).map_err(|source| DeviceError::Zone { command, zone, source })?;
        let done = io.completion().max(at);
        self.clock = self.clock.max(done.0);
        Ok(done)
    }

    /// Cuts the power at `at` (at or after the clock): flash operations running
    /// then are torn, later ones never happen, and commands not completed by then
    /// complete with [`DeviceError::PowerCut`]. Commands are refused until
    /// [`Device::recover`].
    pub fn cut_power(&mut self, at: SimTime) -> Result<(), DeviceError> {
        if at.0 < self.clock {
            return Err(DeviceError::InThePast { command: "power cut", at: at.0, clock: self.clock });
        }
        if !self.flash.nand().power_cuts() {
            return Err(DeviceError::NoPowerCuts);
        }
        self.flash.power_cut(at);
        if let Some(link) = self.host_link.as_mut() {
            link.reset(at.0);
        }
        self.clock = at.0;
        for Reverse((t, tag)) in self.pending.iter() {
            if *t > at.0 {
                if let Some(c) = self.finished.get_mut(tag) {
                    c.result = Err(DeviceError::PowerCut { command: c.command, cut_at: at.0 });
                    c.completed = at;
                }
            }
        }
        let pending = std::mem::take(&mut self.pending);
        self.pending = pending.into_iter().map(|Reverse((t, tag))| Reverse((t.min(at.0), tag))).collect();
        self.off_since = Some(at.0);
        Ok(())
    }

    /// Powers the device back on and rebuilds the FTL from the medium (its
    /// recovery scan takes simulated time; the clock moves past it).
    pub fn recover(&mut self) -> Result<(), DeviceError> {
        let fail = |source| DeviceError::Ftl { command: "recover", lpn: 0, source };
        let builder = self
            .builder
            .as_ref()
            .ok_or(fail(FtlError::Unsupported("recovery of a device opened without its FTL builder")))?;
        let mut io = self.flash.io(SimTime(self.clock));
        self.ftl = builder.recover(&mut io).map_err(fail)?;
        self.clock = self.clock.max(io.last_finish().0);
        self.off_since = None;
        Ok(())
    }

    /// Counts a finished command.
    fn account(&mut self, command: &'static str, at: u64, done: u64, result: &Result<Reply, DeviceError>) {
        let s = &mut self.stats;
        let latency = done.saturating_sub(at);
        if result.is_err() {
            s.errors += 1;
            return;
        }
        match command {
            "read" => {
                s.reads += 1;
                s.read.record(latency);
            }
            "write" => {
                s.writes += 1;
                s.write.record(latency);
            }
            "write-zeroes" => {
                s.write_zeroes += 1;
                s.write.record(latency);
            }
            "trim" => s.trims += 1,
            _ => {
                s.flushes += 1;
                s.flush.record(latency);
            }
        }
    }

    /// Checks a command's range: whole sectors, not empty, within the capacity.
    fn check_range(&self, cmd: &Command) -> Result<(), DeviceError> {
        let command = cmd.name();
        let (offset, len) = cmd.range();
        if let Command::Flush = cmd {
            return Ok(());
        }
        if offset % SECTOR != 0 {
            return Err(DeviceError::Misaligned { command, what: "offset", value: offset });
        }
        if len % SECTOR != 0 {
            return Err(DeviceError::Misaligned { command, what: "length", value: len });
        }
        if len == 0 {
            return Err(DeviceError::Empty { command });
        }
        let capacity = self.capacity();
        if offset.checked_add(len).is_none_or(|end| end > capacity) {
            return Err(DeviceError::OutOfRange { command, offset, len, capacity });
        }
        if !matches!(cmd, Command::Trim { .. }) && self.flash.nand().store_kind() != ftlab_nand::StoreKind::Bytes {
            return Err(DeviceError::NoBytes { command });
        }
        Ok(())
    }

    /// Serves `cmd` at `at`: its completion time and reply, or when and why it
    /// failed.
    fn serve(&mut self, at: u64, cmd: Command) -> Result<(u64, Reply), (u64, DeviceError)> {
        let command = cmd.name();
        if self.off_since.is_some() {
            return Err((at, DeviceError::PoweredOff { command }));
        }
        self.check_range(&cmd).map_err(|e| (at, e))?;
        self.flash.request_start();
        let ps = self.page_size;
        let (offset, len) = cmd.range();
        // The controller's firmware time and, for a write, its data crossing
        // the link come before the flash work.
        let at = match self.host_link.as_mut() {
            Some(link) => link.start(at, if matches!(cmd, Command::Write { .. }) { len } else { 0 }),
            None => at,
        };
        let mut done = at;
        let fail = |lpn: u64, e: PageError| match e {
            PageError::Ftl(source) => DeviceError::Ftl { command, lpn, source },
            PageError::Early => unreachable!("host commands are served at the clock"),
        };
        let mut reply = Reply::default();
        match cmd {
            Command::Flush => {
                done = self.flush(at).map_err(|e| (at, e))?;
            }
            Command::Read { .. } => {
                let mut out = vec![0u8; len as usize];
                for (lpn, in_page, out_at, n) in pieces(offset, len, ps) {
                    let bytes = if n as u64 == ps { 0 } else { n as u32 };
                    let c = PageCommand {
                        lpn,
                        at,
                        ready: done,
                        arrival: at,
                        held: None,
                        since: None,
                        op: PageOp::Read,
                        bytes,
                    };
                    let d = self.page(c).map_err(|e| (at, fail(lpn, e)))?;
                    done = done.max(d.done);
                    match d.read {
                        Some(Ok(Some(Payload::Bytes(b)))) => {
                            out[out_at..out_at + n].copy_from_slice(&b[in_page..in_page + n]);
                        }
                        Some(Err(e)) => return Err((done, fail(lpn, PageError::Ftl(e)))),
                        _ => {}
                    }
                }
                self.stats.bytes_read += len;
                reply.data = Some(out);
                if let Some(link) = self.host_link.as_mut() {
                    done = link.finish(done, len);
                }
            }
            Command::Write { ref data, fua, .. } => {
                done = self.write_bytes(at, offset, len, data, false).map_err(|(lpn, e)| (at, fail(lpn, e)))?;
                self.stats.bytes_written += len;
                if fua {
                    done = self.flush(done).map_err(|e| (done, e))?;
                }
            }
            Command::WriteZeroes { fua, .. } => {
                let zeroes = vec![0u8; len.min(ps) as usize];
                done = self.write_bytes(at, offset, len, &zeroes, true).map_err(|(lpn, e)| (at, fail(lpn, e)))?;
                if fua {
                    done = self.flush(done).map_err(|e| (done, e))?;
                }
            }
            Command::Trim { .. } => {
                for (lpn, _, _, n) in pieces(offset, len, ps) {
                    if n as u64 == ps {
                        let c = PageCommand {
                            lpn,
                            at,
                            ready: done,
                            arrival: at,
                            held: None,
                            since: None,
                            op: PageOp::Trim,
                            bytes: 0,
                        };
                        let d = self.page(c).map_err(|e| (at, fail(lpn, e)))?;
                        done = done.max(d.done);
                    }
                }
            }
        }
        Ok((done, reply))
    }

    /// Writes `len` bytes at `offset` page by page from `at` (whole pages as they
    /// are, parts merged): the bytes of `data`, or with `zeroes` zeroes (`data`
    /// is then one page of them). Returns the completion, or the page and error
    /// that stopped it.
    fn write_bytes(
        &mut self,
        at: u64,
        offset: u64,
        len: u64,
        data: &[u8],
        zeroes: bool,
    ) -> Result<u64, (u64, PageError)> {
        let ps = self.page_size;
        let mut done = at;
        let last = (offset + len - 1) / ps;
        for (lpn, in_page, src, n) in pieces(offset, len, ps) {
            let bytes = if zeroes { &data[..n] } else { &data[src..src + n] };
            // The command's pages come in order: all but the last say more follow.
            let hint = Hint { more: lpn < last, ..Hint::default() };
            let op = if n as u64 == ps {
                PageOp::Write { data: Payload::Bytes(bytes.into()), hint, rmw: false }
            } else {
                self.stats.rmw_pages += 1;
                PageOp::Merge { at: in_page, bytes, hint }
            };
            let c = PageCommand { lpn, at, ready: done, arrival: at, held: None, since: None, op, bytes: 0 };
            let d = self.page(c).map_err(|e| (lpn, e))?;
            done = done.max(d.done);
        }
        Ok(done)
    }

    /// Flushes the FTL at `at`; its completion. Does not move the clock (the
    /// cache managers of [`crate::host::cache`] call it like [`Device::page`]).
    pub(crate) fn flush(&mut self, at: u64) -> Result<u64, DeviceError> {
        let mut io = self.flash.io(SimTime(at));
        self.ftl.flush(&mut io).map_err(|source| DeviceError::Ftl { command: "flush", lpn: 0, source })?;
        Ok(io.completion().0.max(at))
    }

    /// The FTL's durability contract.
    pub fn durability(&self) -> Durability {
        self.ftl.durability()
    }
}

/// The pages a byte range touches: `(lpn, byte in the page, byte in the range,
/// bytes)`.
fn pieces(offset: u64, len: u64, page_size: u64) -> impl Iterator<Item = (u64, usize, usize, usize)> {
    let end = offset + len;
    let first = offset / page_size;
    let last = (end - 1) / page_size;
    (first..=last).map(move |lpn| {
        let from = (lpn * page_size).max(offset);
        let to = ((lpn + 1) * page_size).min(end);
        (lpn, (from - lpn * page_size) as usize, (from - offset) as usize, (to - from) as usize)
    })
}

/// The bytes of a page of `page_size` a read-modify-write reads when the
/// host writes `covered` of them (0: the whole page).
#[inline]
fn rest_of_page(page_size: u32, covered: u32) -> u32 {
    if covered == 0 {
        0
    } else {
        page_size.saturating_sub(covered)
    }
}
