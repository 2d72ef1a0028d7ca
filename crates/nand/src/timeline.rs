//! Resource timelines: when each die and each channel is next free.
//!
//! An operation issued at `at` starts when its resources are free and returns its
//! `(start, finish)`. Read = array time on the die, then transfer on the channel
//! (the die's page register stays occupied until the transfer is done); program =
//! transfer on the channel into the die's register, then array time on the die;
//! erase = die only; copyback = read and program inside the die, no channel.
//!
//! A die is busy until its last operation finishes. A channel is a calendar of
//! the transfers reserved on it: a transfer takes the earliest gap long enough
//! for it at or after the time it may start, so a transfer reserved for later
//! (the second program of a chain, a read's transfer after its array time) does
//! not hold up another die's transfer that fits before it, as on a real bus.
//! Transfers that finished by the time of the latest [`Timelines::retire`] are
//! forgotten; at most [`CALENDAR`] are kept a channel, the oldest dropped first.
//!
//! An operation is issued for the host or not ([`Issue::host`]); its transfers
//! carry the tag, and each operation reports how long its own transfer waited
//! behind host transfers reserved before it ([`Span::queued`]): the share of its
//! wait for the channel that is queueing behind other host commands rather than
//! service.

use std::collections::VecDeque;

use crate::commands::Commands;
use crate::geometry::{DieId, Divisor, Geometry};
use crate::time::SimTime;
use crate::timing::Timing;

/// Transfers kept a channel (see the module documentation): far more than a
/// channel's dies have in flight at once.
const CALENDAR: usize = 256;

/// A channel transfer of the host's (not garbage collection's or the map's).
const HOST: u8 = 1;
/// A channel transfer that moves a read's data out of its die.
const DATA_OUT: u8 = 2;

/// Busy-until per die, reserved transfers per channel.
#[derive(Debug, Clone)]
pub struct Timelines {
    /// Busy-until per die, or per chip with serial dies ([`Timelines::slot`]).
    die_busy: Vec<SimTime>,
    /// Dies of the device.
    dies: usize,
    /// Dies a chip (way).
    dies_per_way: usize,
    /// Whether the dies of a chip share one busy-until (`Commands::serial_dies`).
    serial: bool,
    /// Per channel, reserved transfers `[start, finish)` and what each is
    /// ([`HOST`], [`DATA_OUT`]), disjoint, by start (so by finish too).
    channel: Vec<VecDeque<(SimTime, SimTime, u8)>>,
    dies_per_channel: Divisor,
    read: SimTime,
    read_oob: SimTime,
    program: SimTime,
    erase: SimTime,
    page_transfer: SimTime,
    oob_transfer: SimTime,
    /// Bytes of a page's data and of its spare area, and the chip's timing:
    /// with sector transfers a host operation's transfer is sized by its
    /// bytes ([`Issue::bytes`]).
    page_bytes: u32,
    oob_bytes: u32,
    timing: Timing,
    /// The advanced commands in use ([`crate::commands`]).
    commands: Commands,
    /// Whether cache program or suspension is on: then the per-die state
    /// below is kept (empty otherwise).
    timed: bool,
    /// Per die, with cache program: when the cache register takes the next
    /// program's data (the array start of the last program; else the die's
    /// last finish).
    cache_free: Vec<SimTime>,
    /// Per die: the last operation reserved on it, if an erase, for
    /// suspension.
    long: Vec<LongOp>,
    /// The last suspension a read made, for the medium ([`Timelines::take_suspension`]).
    suspension: Option<Suspended>,
    /// The instant of the last [`Timelines::retire`] if no transfer was
    /// reserved since: retiring at it again would find nothing to forget
    /// (a read-back's millions of commands all run at one instant).
    retired: Option<SimTime>,
    /// Whether host reads pass queued programs and erases
    /// (`Commands::reads_first`): then `queue` is kept.
    reads_first: bool,
    /// Per die slot, with reads first: the operations reserved on it that had
    /// not finished at the last look, `[start, finish)` as the reads that
    /// passed them moved them, and whether each is a read (reads are not
    /// passed).
    queue: Vec<VecDeque<(SimTime, SimTime, bool)>>,
    /// Operations take no time and reserve nothing ([`Timelines::set_dry`]).
    dry: bool,
}

/// The last erase reserved on a die, if nothing was reserved after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LongOp {
    kind: LongKind,
    /// Its array phase `[start, finish)`; `finish` moves later with each
    /// suspension.
    start: SimTime,
    finish: SimTime,
    /// The finish of the last read that suspended it (zero: none).
    reads_end: SimTime,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum LongKind {
    #[default]
    None,
    Erase,
}

/// An erase on `die` a host read suspended: it finishes at `to`
/// instead of `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suspended {
    pub die: DieId,
    pub from: SimTime,
    pub to: SimTime,
}

/// When an operation started and when it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: SimTime,
    pub finish: SimTime,
    /// How long its channel transfer waited behind host transfers reserved
    /// before it (zero for operations without a transfer, and for every
    /// operation when no host transfer was in its way).
    pub queued: SimTime,
    /// The die it ran on.
    pub die: DieId,
}

/// When an operation is issued and whether it is the host's (a read or write
/// the host asked for, as opposed to garbage collection, map or wear-leveling
/// work). A bare [`SimTime`] is an issue that is not the host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issue {
    pub at: SimTime,
    pub host: bool,
    /// Bytes of the page the host request moves, for a host read or program
    /// of part of a page; 0: the whole page. Only sector transfers
    /// ([`Commands::sector_transfers`]) read it.
    pub bytes: u32,
    /// For a host read a dispatcher held until its die could take it: when
    /// the die became free for it, at or before `at` (it then waited for the
    /// channel to carry its command). With reads first it passes the
    /// programs and erases that started since, which could not have started
    /// on a die the channel kept from taking any command.
    pub since: Option<SimTime>,
}

impl Issue {
    /// Issued at `at`, the host's or not, moving the whole page.
    #[inline]
    pub fn new(at: SimTime, host: bool) -> Self {
        Issue { at, host, bytes: 0, since: None }
    }
}

impl From<SimTime> for Issue {
    #[inline]
    fn from(at: SimTime) -> Self {
        Issue::new(at, false)
    }
}

impl Timelines {
    /// RAM of the timelines, in bytes (allocated capacity).
    pub fn ram_bytes(&self) -> u64 {
        // A transfer's entry and a queued operation's are the same size.
        let reserved: usize = self.channel.iter().map(VecDeque::capacity).sum::<usize>()
            + self.queue.iter().map(VecDeque::capacity).sum::<usize>();
        let reserved = reserved * std::mem::size_of::<(SimTime, SimTime, bool)>();
        (self.die_busy.capacity() * std::mem::size_of::<SimTime>()
            + self.cache_free.capacity() * std::mem::size_of::<SimTime>()
            + self.long.capacity() * std::mem::size_of::<LongOp>()
            + (self.channel.capacity() + self.queue.capacity())
                * std::mem::size_of::<VecDeque<(SimTime, SimTime, bool)>>()
            + reserved) as u64
    }

    /// All resources free at time zero.
    pub fn new(geometry: &Geometry, timing: &Timing) -> Self {
        Timelines {
            die_busy: vec![SimTime::ZERO; geometry.dies() as usize],
            dies: geometry.dies() as usize,
            dies_per_way: geometry.dies_per_way.max(1) as usize,
            serial: false,
            channel: vec![VecDeque::new(); geometry.channels as usize],
            dies_per_channel: Divisor::new(geometry.ways_per_channel * geometry.dies_per_way),
            read: SimTime(timing.read_ns),
            read_oob: SimTime(timing.read_oob_ns),
            program: SimTime(timing.program_ns),
            erase: SimTime(timing.erase_ns),
            page_transfer: timing.transfer(geometry.page_size + geometry.oob_size),
            oob_transfer: timing.transfer(geometry.oob_size.max(1)),
            page_bytes: geometry.page_size,
            oob_bytes: geometry.oob_size,
            timing: *timing,
            commands: Commands::default(),
            timed: false,
            cache_free: Vec::new(),
            long: Vec::new(),
            suspension: None,
            retired: None,
            reads_first: false,
            queue: Vec::new(),
            dry: false,
        }
    }

    /// While on, every operation finishes the instant it is issued and
    /// reserves no die or channel time: for an FTL that moves data now and
    /// books the time its commands take later, as its dies fall free
    /// ([`crate::Nand::set_untimed`]). Off by default.
    pub fn set_dry(&mut self, on: bool) {
        self.dry = on;
    }

    /// Whether operations take no time ([`Timelines::set_dry`]).
    #[inline]
    pub fn dry(&self) -> bool {
        self.dry
    }

    /// The span of an operation issued at `at` while dry.
    #[cold]
    fn instant(die: DieId, at: Issue) -> Span {
        Span { start: at.at, finish: at.at, queued: SimTime::ZERO, die }
    }

    /// Uses `commands` from now on (see [`crate::commands`]).
    pub fn set_commands(&mut self, commands: Commands) {
        self.commands = commands;
        self.timed = commands.changes_timing();
        self.serial = commands.serial_dies && self.dies_per_way > 1;
        let slots = if self.serial { self.dies / self.dies_per_way } else { self.dies };
        self.die_busy = vec![self.die_busy.iter().copied().max().unwrap_or_default(); slots];
        self.reads_first = commands.reads_first && !self.timed;
        let spare = if commands.sector_transfers { 0 } else { self.oob_bytes };
        self.page_transfer = self.timing.transfer(self.page_bytes + spare);
        self.queue = if self.reads_first { vec![VecDeque::new(); slots] } else { Vec::new() };
        let dies = self.dies;
        if self.timed {
            self.cache_free = vec![self.die_busy.iter().copied().max().unwrap_or_default(); dies];
            self.long = vec![LongOp::default(); dies];
        } else {
            self.cache_free = Vec::new();
            self.long = Vec::new();
        }
    }

    /// The advanced commands in use.
    pub fn commands(&self) -> &Commands {
        &self.commands
    }

    /// Books `[start, finish)` on die `d`'s slot as its last operation.
    #[inline]
    fn busy(&mut self, d: usize, start: SimTime, finish: SimTime, read: bool) {
        let slot = self.slot(d);
        self.die_busy[slot] = finish;
        if self.reads_first {
            self.book(slot, start, finish, read);
        }
    }

    /// Keeps an operation in its slot's queue (reads first).
    #[cold]
    #[inline(never)]
    fn book(&mut self, slot: usize, start: SimTime, finish: SimTime, read: bool) {
        let q = &mut self.queue[slot];
        if q.len() == CALENDAR {
            q.pop_front();
        }
        q.push_back((start, finish, read));
    }

    /// A host read on `die` issued at `at` with reads first: after the
    /// operation under way at `at`, ahead of the programs and erases that have
    /// not started; those (in this queue) and the die's later work move later
    /// by the time it takes. It does not pass the reads queued there, but
    /// takes a gap before one that holds it: a read reserved late (its
    /// command waited for a translation read on another die) leaves the die
    /// idle until then, and a scheduler that serves whatever is ready uses
    /// that time.
    #[cold]
    #[inline(never)]
    fn read_first(&mut self, die: DieId, at: Issue, array: SimTime, xfer: SimTime) -> Span {
        let d = die.0 as usize;
        let slot = self.slot(d);
        let c = self.channel(die);
        let q = &mut self.queue[slot];
        while q.front().is_some_and(|o| o.1 <= at.at) {
            q.pop_front();
        }
        // After every operation started before `at` (one due to start at
        // `at` has not: the read goes first); then, while a read is queued at
        // or after the place, the gap before the next operation must hold it
        // whole, or it goes past that operation.
        let pass = at.since.map_or(at.at, |s| s.min(at.at));
        let mut i = q.partition_point(|o| o.0 < pass);
        let last_read = q.iter().rposition(|o| o.2);
        while last_read.is_some_and(|r| r >= i) {
            let start = if i == 0 { at.at } else { at.at.max(q[i - 1].1) };
            if start + array + xfer <= q[i].0 {
                break;
            }
            i += 1;
        }
        let start = if i == 0 { at.at } else { at.at.max(q[i - 1].1) };
        let (t, queued) = self.transfer(c, start + array, xfer, at.host, true);
        let finish = t + xfer;
        self.move_later(slot, i, finish);
        let q = &mut self.queue[slot];
        if q.len() == CALENDAR {
            q.pop_front();
            i = i.saturating_sub(1);
        }
        q.insert(i, (start, finish, true));
        Span { start, finish, queued, die }
    }

    /// With reads first: the operations of `slot`'s queue from the `i`-th on,
    /// and the die's later work, move later so that they start no earlier
    /// than `finish`; with none from there, the die is busy until `finish` at
    /// least.
    fn move_later(&mut self, slot: usize, i: usize, finish: SimTime) {
        let q = &mut self.queue[slot];
        if let Some(&(next, _, _)) = q.get(i) {
            if finish > next {
                let delta = finish - next;
                for o in q.iter_mut().skip(i) {
                    o.0 += delta;
                    o.1 += delta;
                }
                self.die_busy[slot] += delta;
            }
        } else {
            self.die_busy[slot] = self.die_busy[slot].max(finish);
        }
    }

    /// The suspension the last read made, if it made one (cleared).
    #[inline]
    pub fn take_suspension(&mut self) -> Option<Suspended> {
        self.suspension.take()
    }

    /// Books an operation other than a program or an erase on `d` (with cache
    /// program or suspension on).
    #[inline]
    fn booked_other(&mut self, d: usize, finish: SimTime) {
        self.cache_free[d] = finish;
        self.long[d] = LongOp::default();
    }

    /// A read on `die` issued at `at` with cache program or suspension on: a
    /// host read may suspend the erase under way there.
    #[cold]
    fn read_timed(&mut self, die: DieId, at: Issue, array: SimTime, xfer: SimTime) -> Span {
        let d = die.0 as usize;
        let l = self.long[d];
        let may = l.kind == LongKind::Erase && self.commands.erase_suspension;
        // Suspend only the operation under way, with nothing queued behind it,
        // and only when the read then starts before the operation would finish.
        if at.host && may && l.finish == self.die_busy[self.slot(d)] && l.start <= at.at && at.at < l.finish {
            let base = at.at.max(l.reads_end);
            // Running (not already suspended by an earlier read): suspend it.
            let latency = if at.at >= l.reads_end { SimTime(self.commands.suspend_erase_ns) } else { SimTime::ZERO };
            if base + latency < l.finish {
                let c = self.channel(die);
                let (t, queued) = self.transfer(c, base + latency + array, xfer, at.host, true);
                let finish = t + xfer;
                let to = l.finish + (finish - base);
                self.long[d] = LongOp { finish: to, reads_end: finish, ..l };
                let slot = self.slot(d);
                self.die_busy[slot] = to;
                self.suspension = Some(Suspended { die, from: l.finish, to });
                return Span { start: base, finish, queued, die };
            }
        }
        let span = self.array_then_transfer(die, at, array, xfer);
        self.booked_other(d, span.finish);
        span
    }

    /// A program of `pages` pages (one a plane) on `die` issued at `at`: each
    /// page's transfer in turn, then one array time. With cache program the
    /// first transfer may start while the array programs the die's previous
    /// page.
    #[inline]
    fn program_pages(&mut self, die: DieId, at: Issue, bytes: &[u32]) -> Span {
        if self.dry {
            return Self::instant(die, at);
        }
        let d = die.0 as usize;
        let c = self.channel(die);
        let earliest = if self.timed && self.commands.cache_program {
            at.at.max(self.cache_free[d])
        } else {
            at.at.max(self.die_busy[self.slot(d)])
        };
        let first = self.xfer(at.host, bytes.first().copied().unwrap_or(0));
        let (start, mut queued) = self.transfer(c, earliest, first, at.host, false);
        let mut end = start + first;
        for &b in bytes.iter().skip(1) {
            let xfer = self.xfer(at.host, b);
            let (t, q) = self.transfer(c, end, xfer, at.host, false);
            queued += q;
            end = t + xfer;
        }
        let array = end.max(self.die_busy[self.slot(d)]);
        let finish = array + self.program;
        self.busy(d, start, finish, false);
        if self.timed {
            self.cache_free[d] = if self.commands.cache_program { array } else { finish };
            // Programs are not suspended (see [`crate::commands`]).
            self.long[d] = LongOp::default();
        }
        Span { start, finish, queued, die }
    }

    /// A single-page program with cache program or suspension on.
    #[cold]
    #[inline(never)]
    fn program_timed(&mut self, die: DieId, at: Issue) -> Span {
        self.program_pages(die, at, &[at.bytes])
    }

    /// A multi-plane program on `die` issued at `at` of one page a plane,
    /// `bytes` each moves ([`Issue::bytes`]; one page if empty).
    #[inline]
    pub fn program_multi(&mut self, die: DieId, at: impl Into<Issue>, bytes: &[u32]) -> Span {
        let at = at.into();
        self.program_pages(die, at, if bytes.is_empty() { &[0] } else { bytes })
    }

    /// The channel time of a page's transfer that moves `bytes` of it (0:
    /// the whole page): with sector transfers, a host operation's bytes
    /// alone; otherwise the page with its spare area.
    #[inline]
    fn xfer(&self, host: bool, bytes: u32) -> SimTime {
        if host && bytes != 0 && bytes < self.page_bytes && self.commands.sector_transfers {
            self.timing.transfer(bytes)
        } else {
            self.page_transfer
        }
    }

    /// A multi-plane read of `pages` pages on `die` issued at `at`: one array
    /// time, then each page's transfer in turn. It does not suspend.
    pub fn read_multi(&mut self, die: DieId, at: impl Into<Issue>, pages: u32) -> Span {
        let at = at.into();
        if self.dry {
            return Self::instant(die, at);
        }
        let d = die.0 as usize;
        let c = self.channel(die);
        let start = at.at.max(self.die_busy[self.slot(d)]);
        let mut end = start + self.read;
        let mut queued = SimTime::ZERO;
        for _ in 0..pages.max(1) {
            let (t, q) = self.transfer(c, end, self.page_transfer, at.host, true);
            queued += q;
            end = t + self.page_transfer;
        }
        self.busy(d, start, end, true);
        if self.timed {
            self.booked_other(d, end);
        }
        Span { start, finish: end, queued, die }
    }

    /// A page read on `die` issued at `at` that joins `lead`, the read (or
    /// multi-plane read) reserved last on the die, as one more plane of one
    /// multi-plane read: it shares the lead's array time and moves its data
    /// out after the lead's. Returns the time it adds (from the lead's finish
    /// to its own), or `None`, reserving nothing, when it cannot join: issued
    /// after the lead started, something else reserved on the die's slot
    /// since the lead, or cache program or suspension on.
    pub fn read_join(&mut self, die: DieId, lead: Span, at: Issue) -> Option<Span> {
        if self.dry || self.timed || at.at > lead.start || lead.die != die {
            return None;
        }
        let d = die.0 as usize;
        let slot = self.slot(d);
        // With reads first the lead may sit before programs and erases
        // queued on the die (they move later, as the lead moved them); it
        // must be in that queue with no read after it, which the join would
        // move after it was reserved. Else it must be the die's last work.
        let place = if self.reads_first {
            let q = &self.queue[slot];
            let i = q.iter().rposition(|o| *o == (lead.start, lead.finish, true))?;
            if q.iter().skip(i + 1).any(|o| o.2) {
                return None;
            }
            Some(i)
        } else if self.die_busy[slot] == lead.finish {
            None
        } else {
            return None;
        };
        let c = self.channel(die);
        let xfer = self.xfer(at.host, at.bytes);
        let (t, queued) = self.transfer(c, lead.finish, xfer, at.host, true);
        let finish = t + xfer;
        match place {
            Some(i) => {
                self.queue[slot][i].1 = finish;
                self.move_later(slot, i + 1, finish);
            }
            None => self.die_busy[slot] = finish,
        }
        Some(Span { start: lead.finish, finish, queued, die })
    }

    #[inline]
    fn channel(&self, die: DieId) -> usize {
        self.dies_per_channel.div(die.0) as usize
    }

    /// Reserves a transfer of `len` on channel `c` in the earliest gap at or
    /// after `earliest`, tagged `host` and `out` (a read's data out of the
    /// die); returns its start and how long it waited behind host transfers.
    #[inline(always)]
    fn transfer(&mut self, c: usize, earliest: SimTime, len: SimTime, host: bool, out: bool) -> (SimTime, SimTime) {
        self.retired = None;
        let kind = if host { HOST } else { 0 } | if out { DATA_OUT } else { 0 };
        let cal = &mut self.channel[c];
        if cal.back().is_none_or(|r| r.1 <= earliest) {
            // After everything reserved: the common case.
            if cal.len() == CALENDAR {
                cal.pop_front();
            }
            cal.push_back((earliest, earliest + len, kind));
            return (earliest, SimTime::ZERO);
        }
        let mut t = earliest;
        let mut queued = SimTime::ZERO;
        // The first transfer that finishes after `t`, then the first gap. The
        // host transfers passed on the way, with the gaps before them too short
        // to use, are what it queued behind.
        let mut i = cal.partition_point(|r| r.1 <= t);
        while i < cal.len() && cal[i].0 < t + len {
            if cal[i].2 & HOST != 0 {
                queued += cal[i].1 - t;
            }
            t = cal[i].1;
            i += 1;
        }
        if cal.len() == CALENDAR {
            cal.pop_front();
            i = i.saturating_sub(1);
        }
        cal.insert(i, (t, t + len, kind));
        (t, queued)
    }

    #[inline]
    fn array_then_transfer(&mut self, die: DieId, at: Issue, array: SimTime, xfer: SimTime) -> Span {
        let d = die.0 as usize;
        let c = self.channel(die);
        let start = at.at.max(self.die_busy[self.slot(d)]);
        let (t, queued) = self.transfer(c, start + array, xfer, at.host, true);
        let finish = t + xfer;
        self.busy(d, start, finish, true);
        Span { start, finish, queued, die }
    }

    /// A page read on `die` issued at `at`.
    #[inline]
    pub fn read(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let at = at.into();
        self.read_sized(die, at, self.xfer(at.host, at.bytes))
    }

    /// A page read on `die` issued at `at` whose transfer out takes `xfer`
    /// (part of a page: a translation read of a cached mapping table moves
    /// one sector).
    #[inline]
    pub fn read_sized(&mut self, die: DieId, at: Issue, xfer: SimTime) -> Span {
        if self.dry {
            return Self::instant(die, at);
        }
        if self.timed {
            return self.read_timed(die, at, self.read, xfer);
        }
        if self.reads_first && at.host {
            return self.read_first(die, at, self.read, xfer);
        }
        self.array_then_transfer(die, at, self.read, xfer)
    }

    /// A spare-area read on `die` issued at `at`.
    #[inline]
    pub fn read_oob(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        if self.dry {
            return Self::instant(die, at.into());
        }
        if self.timed {
            return self.read_timed(die, at.into(), self.read_oob, self.oob_transfer);
        }
        self.array_then_transfer(die, at.into(), self.read_oob, self.oob_transfer)
    }

    /// A page program on `die` issued at `at`.
    #[inline]
    pub fn program(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let at = at.into();
        if self.dry {
            return Self::instant(die, at);
        }
        if self.timed {
            return self.program_timed(die, at);
        }
        let d = die.0 as usize;
        let c = self.channel(die);
        let xfer = self.xfer(at.host, at.bytes);
        let (start, queued) = self.transfer(c, at.at.max(self.die_busy[self.slot(d)]), xfer, at.host, false);
        let finish = start + xfer + self.program;
        self.busy(d, start, finish, false);
        Span { start, finish, queued, die }
    }

    /// A block erase on `die` issued at `at`.
    #[inline]
    pub fn erase(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let at = at.into();
        if self.dry {
            return Self::instant(die, at);
        }
        let d = die.0 as usize;
        let start = at.at.max(self.die_busy[self.slot(d)]);
        let finish = start + self.erase;
        self.busy(d, start, finish, false);
        if self.timed {
            self.cache_free[d] = finish;
            self.long[d] = LongOp { kind: LongKind::Erase, start, finish, reads_end: SimTime::ZERO };
        }
        Span { start, finish, queued: SimTime::ZERO, die }
    }

    /// A multi-plane erase on `die` issued at `at`: one erase time.
    #[inline]
    pub fn erase_multi(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        self.erase(die, at)
    }

    /// A copyback (internal read then program) on `die` issued at `at`.
    #[inline]
    pub fn copyback(&mut self, die: DieId, at: impl Into<Issue>) -> Span {
        let at = at.into();
        if self.dry {
            return Self::instant(die, at);
        }
        let d = die.0 as usize;
        let start = at.at.max(self.die_busy[self.slot(d)]);
        let finish = start + self.read + self.program;
        self.busy(d, start, finish, false);
        if self.timed {
            self.booked_other(d, finish);
        }
        Span { start, finish, queued: SimTime::ZERO, die }
    }

    /// When `die` is next free.
    #[inline]
    pub fn die_free_at(&self, die: DieId) -> SimTime {
        self.die_busy[self.slot(die.0 as usize)]
    }

    /// When the channel of `die` is next idle at or after `now` for a
    /// command: after the transfer under way at `now` (started before it) and
    /// the reads' data transfers reserved from then back to back (dies that
    /// finished reading wait for the channel and move their data first), or
    /// `now` itself. A controller sends a command over the channel, so a
    /// dispatcher that holds commands issues one only then, ahead of a program's
    /// transfer reserved to start at that instant.
    pub fn channel_idle_at(&self, die: DieId, now: SimTime) -> SimTime {
        let cal = &self.channel[self.channel(die)];
        let mut i = cal.partition_point(|r| r.1 <= now);
        let mut t = now;
        while i < cal.len() && cal[i].0 <= t && cal[i].2 & DATA_OUT != 0 {
            t = cal[i].1;
            i += 1;
        }
        t
    }

    /// The slot of `die`'s busy-until: its own index, or with serial dies
    /// (`Commands::serial_dies`) its chip's, shared by the chip's dies. A
    /// dispatcher that holds commands until their die is free keeps one queue
    /// per slot.
    #[inline]
    pub fn die_slot(&self, die: DieId) -> usize {
        self.slot(die.0 as usize)
    }

    /// When a host read issued on `die` at or after `now` would start without
    /// waiting behind another read: with reads first
    /// (`Commands::reads_first`), the end of the operation under way at `now`
    /// and of every read reserved there (a read passes queued programs and
    /// erases, not reads); otherwise when the die is next free. A dispatcher
    /// that holds reads until their die can start them asks this.
    pub fn read_free_at(&self, die: DieId, now: SimTime) -> SimTime {
        let slot = self.slot(die.0 as usize);
        if !self.reads_first {
            return self.die_busy[slot];
        }
        let mut t = now;
        for &(start, finish, read) in &self.queue[slot] {
            if finish > now && (read || start < now) {
                t = t.max(finish);
            }
        }
        t
    }

    /// The die that is free soonest (lowest index on ties).
    pub fn soonest_free_die(&self) -> DieId {
        let mut best = 0;
        for i in 0..self.dies {
            if self.die_busy[self.slot(i)] < self.die_busy[self.slot(best)] {
                best = i;
            }
        }
        DieId(best as u32)
    }

    /// Where die `d`'s busy-until is kept: its own, or its chip's with serial
    /// dies.
    #[inline(always)]
    fn slot(&self, d: usize) -> usize {
        if self.serial {
            d / self.dies_per_way
        } else {
            d
        }
    }

    /// The first die, scanning from `start` in index order and wrapping, that is
    /// free by `now`; if none is, the die free soonest (the first such in scan
    /// order).
    pub fn free_die_from(&self, start: DieId, now: SimTime) -> DieId {
        let n = self.dies;
        let first = start.0 as usize % n;
        let mut best = first;
        for k in 0..n {
            // `(first + k) % n` without a division per die.
            let i = if first + k < n { first + k } else { first + k - n };
            let t = self.die_busy[self.slot(i)];
            if t <= now {
                return DieId(i as u32);
            }
            if t < self.die_busy[self.slot(best)] {
                best = i;
            }
        }
        DieId(best as u32)
    }

    /// Forgets the transfers finished by `now`: no operation is issued before
    /// `now` any more.
    #[inline]
    pub fn retire(&mut self, now: SimTime) {
        if self.retired == Some(now) {
            return;
        }
        self.retired = Some(now);
        for cal in &mut self.channel {
            while cal.front().is_some_and(|r| r.1 <= now) {
                cal.pop_front();
            }
        }
    }

    /// Every resource free from `t` on (after a power cut).
    pub fn reset(&mut self, t: SimTime) {
        self.die_busy.iter_mut().for_each(|b| *b = t);
        self.cache_free.iter_mut().for_each(|b| *b = t);
        self.long.iter_mut().for_each(|l| *l = LongOp::default());
        self.suspension = None;
        self.retired = None;
        self.queue.iter_mut().for_each(VecDeque::clear);
        for cal in &mut self.channel {
            cal.clear();
            cal.push_back((SimTime::ZERO, t, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One channel of two ways of `dies_per_way` dies, one plane each, 4 KiB
    /// pages at 4096 MB/s (a 1000 ns transfer).
    fn timelines(dies_per_way: u32) -> Timelines {
        Timelines::new(&Geometry { dies_per_way, ..geometry() }, &timing())
    }

    /// One channel of two ways of one die, one plane each, 4 KiB pages
    /// without a spare area.
    fn geometry() -> Geometry {
        Geometry {
            channels: 1,
            ways_per_channel: 2,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 0,
        }
    }

    /// 4096 MB/s: a 4 KiB page crosses the channel in 1000 ns.
    fn timing() -> Timing {
        Timing {
            read_ns: 25_000,
            read_oob_ns: 10_000,
            program_ns: 200_000,
            erase_ns: 1_500_000,
            channel_mb_per_s: 4096,
        }
    }

    fn setup() -> Timelines {
        timelines(1)
    }

    /// Two chips of two dies on one channel.
    fn two_chips(serial: bool) -> Timelines {
        let mut tl = timelines(2);
        tl.set_commands(Commands { serial_dies: serial, ..Commands::default() });
        tl
    }

    #[test]
    fn sector_transfers_size_a_host_transfer_by_its_bytes_and_drop_the_spare_area() {
        // 4 KiB pages with a 512-byte spare area, two planes a die, at 4096
        // MB/s: 1,000 ns for the data, 125 ns for the spare area.
        let g = Geometry { oob_size: 512, planes_per_die: 2, ..geometry() };
        let t = timing();
        let part = |host: bool| Issue { at: SimTime(0), host, bytes: 1024, since: None };
        // Off: every page transfer moves the page and its spare area, whatever
        // the bytes asked for.
        let mut off = Timelines::new(&g, &t);
        assert_eq!(off.read(DieId(0), part(true)).finish, SimTime(25_000 + 1_125));
        assert_eq!(off.program(DieId(1), part(true)).finish, SimTime(1_125 + 200_000));
        // On: a host operation moves its bytes; any other, or a host one of
        // the whole page (0), the page without its spare area.
        let mut on = Timelines::new(&g, &t);
        on.set_commands(Commands { sector_transfers: true, ..Commands::default() });
        assert_eq!(on.read(DieId(0), part(true)).finish, SimTime(25_000 + 250));
        assert_eq!(on.program(DieId(1), part(true)).finish, SimTime(250 + 200_000));
        let mut on = Timelines::new(&g, &t);
        on.set_commands(Commands { sector_transfers: true, ..Commands::default() });
        assert_eq!(on.read(DieId(0), part(false)).finish, SimTime(25_000 + 1_000));
        assert_eq!(on.read(DieId(1), Issue::new(SimTime(0), true)).finish, SimTime(25_000 + 1_000 + 1_000));
        // A multi-plane program moves each page's own bytes.
        let mut on = Timelines::new(&g, &t);
        on.set_commands(Commands { sector_transfers: true, multi_plane: true, ..Commands::default() });
        assert_eq!(on.program_multi(DieId(0), part(true), &[1024, 0]).finish, SimTime(250 + 1_000 + 200_000));
    }

    #[test]
    fn with_reads_first_a_host_read_passes_the_programs_queued_on_its_die() {
        // Three programs queued on die 0 (transfer 1,000 ns + 200,000 ns each),
        // a host read issued during the first.
        let mut fifo = setup();
        let mut first = setup();
        first.set_commands(Commands { reads_first: true, ..Commands::default() });
        for tl in [&mut fifo, &mut first] {
            for _ in 0..3 {
                tl.program(DieId(0), SimTime::ZERO);
            }
            assert_eq!(tl.die_free_at(DieId(0)), SimTime(603_000));
        }
        // In issue order the read waits for all three: 603,000 + 25,000 + 1,000.
        let r = fifo.read(DieId(0), host(50_000));
        assert_eq!((r.start, r.finish), (SimTime(603_000), SimTime(629_000)));
        assert_eq!(fifo.die_free_at(DieId(0)), SimTime(629_000));
        // Reads first: only the program under way (finishing at 201,000), and
        // the die's later work moves later by the read's 26,000 ns.
        let r = first.read(DieId(0), host(50_000));
        assert_eq!((r.start, r.finish), (SimTime(201_000), SimTime(227_000)));
        assert_eq!(first.die_free_at(DieId(0)), SimTime(629_000));
        // A second read queues behind the first (reads keep their order), not
        // behind the programs.
        let r2 = first.read(DieId(0), host(60_000));
        assert_eq!((r2.start, r2.finish), (SimTime(227_000), SimTime(253_000)));
        assert_eq!(first.die_free_at(DieId(0)), SimTime(655_000));
        // A read that is not the host's (garbage collection) waits for all.
        let gc = first.read(DieId(0), SimTime(70_000));
        assert_eq!(gc.start, SimTime(655_000));
        // A host read issued once the queued programs have started passes none.
        let late = first.read(DieId(0), host(700_000));
        assert_eq!(late.start, SimTime(700_000));
    }

    #[test]
    fn a_held_read_knows_when_its_die_and_channel_can_take_it() {
        // Three programs queued on die 0 from 0 (201,000 ns each).
        let mut first = setup();
        first.set_commands(Commands { reads_first: true, ..Commands::default() });
        let mut fifo = setup();
        for tl in [&mut first, &mut fifo] {
            for _ in 0..3 {
                tl.program(DieId(0), SimTime::ZERO);
            }
        }
        // In issue order a read waits for the die's last operation; with
        // reads first, for the one under way only.
        assert_eq!(fifo.read_free_at(DieId(0), SimTime(50_000)), SimTime(603_000));
        assert_eq!(first.read_free_at(DieId(0), SimTime(50_000)), SimTime(201_000));
        assert_eq!(first.read_free_at(DieId(1), SimTime(50_000)), SimTime(50_000), "an idle die");
        // Issued at the instant the next program would start, the read goes
        // first; a read reserved there then holds the die for the next one.
        let r = first.read(DieId(0), host(201_000));
        assert_eq!((r.start, r.finish), (SimTime(201_000), SimTime(227_000)));
        assert_eq!(first.read_free_at(DieId(0), SimTime(201_000)), SimTime(227_000));
        // The channel: the programs' transfers do not hold a command back
        // (ftlab reserves them ahead of their chip taking them); a read's
        // data transfer under way does, and so do those waiting behind it.
        assert_eq!(first.channel_idle_at(DieId(1), SimTime(201_500)), SimTime(201_500));
        assert_eq!(first.channel_idle_at(DieId(1), SimTime(226_500)), SimTime(227_000));
        // A read held while the channel was busy, its die free for it since
        // 227,000, passes the program that started there (at 227,000, 1 us
        // before the read could be given), which moves later.
        let mut held = first.clone();
        let r = held.read(DieId(0), Issue { since: Some(SimTime(227_000)), ..host(228_000) });
        assert_eq!((r.start, r.finish), (SimTime(228_000), SimTime(254_000)));
        assert_eq!(held.die_free_at(DieId(0)), SimTime(629_000 + 27_000));
        let r = first.read(DieId(0), host(228_000));
        assert_eq!(r.start, SimTime(428_000), "not held: after the program under way");
        let mut tl = setup();
        tl.read(DieId(0), SimTime::ZERO);
        tl.read(DieId(1), SimTime::ZERO);
        // Both sensed by 25,000; die 1's transfer waits for die 0's.
        assert_eq!(tl.channel_idle_at(DieId(0), SimTime(25_000)), SimTime(27_000));
        assert_eq!(tl.channel_idle_at(DieId(0), SimTime(24_999)), SimTime(24_999));
        assert_eq!(tl.channel_idle_at(DieId(0), SimTime(27_000)), SimTime(27_000));
    }

    #[test]
    fn reads_first_on_serial_dies_passes_the_chips_queued_work_and_erases() {
        let mut tl = two_chips(true);
        tl.set_commands(Commands { serial_dies: true, reads_first: true, ..Commands::default() });
        tl.program(DieId(0), SimTime::ZERO);
        tl.erase(DieId(1), SimTime::ZERO);
        tl.program(DieId(0), SimTime::ZERO);
        // Die 1's read waits for die 0's program under way (the chip's), then
        // runs before the erase and the second program.
        let r = tl.read(DieId(1), host(10_000));
        assert_eq!((r.start, r.finish), (SimTime(201_000), SimTime(227_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(201_000 + 1_500_000 + 201_000 + 26_000));
        // The other chip is not touched.
        assert_eq!(tl.die_free_at(DieId(2)), SimTime::ZERO);
    }

    #[test]
    fn with_reads_first_a_read_reserved_late_leaves_a_gap_that_host_reads_use() {
        // A host read reserved for 500,000 (its command waited elsewhere
        // first): the die is idle before it.
        let mut fifo = setup();
        let mut first = setup();
        first.set_commands(Commands { reads_first: true, ..Commands::default() });
        for tl in [&mut fifo, &mut first] {
            let late = tl.read(DieId(0), host(500_000));
            assert_eq!((late.start, late.finish), (SimTime(500_000), SimTime(526_000)));
        }
        // In issue order a read at 10,000 waits for it; with reads first it
        // takes the gap before it (it does not pass the read: it fits whole).
        assert_eq!(fifo.read(DieId(0), host(10_000)).start, SimTime(526_000));
        let r = first.read(DieId(0), host(10_000));
        assert_eq!((r.start, r.finish), (SimTime(10_000), SimTime(36_000)));
        // A read that does not fit whole before the late read goes after
        // it, not in front of it.
        let r2 = first.read(DieId(0), host(480_000));
        assert_eq!(r2.start, SimTime(526_000), "after the late read");
        // Programs keep issue order on their die (a program placed before
        // earlier work could land before its block's erase): after all.
        let p = first.program(DieId(0), SimTime(40_000));
        assert_eq!(p.start, SimTime(552_000));
        assert_eq!(first.die_free_at(DieId(0)), SimTime(753_000));
    }

    #[test]
    fn reads_first_is_refused_with_cache_program_or_suspension() {
        for c in [
            Commands { reads_first: true, cache_program: true, ..Commands::default() },
            Commands { reads_first: true, erase_suspension: true, ..Commands::default() },
        ] {
            let e = c.validate().unwrap_err();
            assert!(e.contains("commands.reads_first does not combine"), "{e}");
        }
        assert!(Commands { reads_first: true, serial_dies: true, ..Commands::default() }.validate().is_ok());
    }

    #[test]
    fn serial_dies_share_their_chip_and_chips_still_overlap() {
        // Interleaved: die 1 programs while die 0 does (one transfer apart).
        let mut tl = two_chips(false);
        let a = tl.program(DieId(0), SimTime::ZERO);
        let b = tl.program(DieId(1), SimTime::ZERO);
        assert_eq!((a.finish, b.finish), (SimTime(201_000), SimTime(202_000)));
        // Serial: die 1 waits for its chip's die 0; die 2 (the other chip)
        // does not.
        let mut tl = two_chips(true);
        let a = tl.program(DieId(0), SimTime::ZERO);
        let b = tl.program(DieId(1), SimTime::ZERO);
        let c = tl.program(DieId(2), SimTime::ZERO);
        assert_eq!((a.finish, b.finish, c.finish), (SimTime(201_000), SimTime(402_000), SimTime(202_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(402_000), "the chip is busy, so is each of its dies");
        assert_eq!(tl.soonest_free_die(), DieId(2));
        assert_eq!(tl.free_die_from(DieId(0), SimTime(300_000)), DieId(2));
        let e = tl.erase(DieId(3), SimTime::ZERO);
        assert_eq!(e.start, SimTime(202_000));
    }

    #[test]
    fn read_is_array_then_transfer() {
        let mut tl = setup();
        let s = tl.read(DieId(0), SimTime(100));
        assert_eq!(
            s,
            Span { start: SimTime(100), finish: SimTime(100 + 25_000 + 1000), queued: SimTime::ZERO, die: DieId(0) }
        );
    }

    #[test]
    fn program_is_transfer_then_array_and_frees_the_channel_early() {
        let mut tl = setup();
        let a = tl.program(DieId(0), SimTime(0));
        assert_eq!(a.finish, SimTime(1000 + 200_000));
        // The other die on the same channel only waits for the transfer.
        let b = tl.program(DieId(1), SimTime(0));
        assert_eq!(b.start, SimTime(1000));
        // The same die waits for the array.
        let c = tl.program(DieId(0), SimTime(0));
        assert_eq!(c.start, a.finish);
    }

    #[test]
    fn a_transfer_reserved_for_later_does_not_hold_the_channel_before_it() {
        let mut tl = setup();
        // Die 0: a program, then a second one chained after it (its transfer at
        // 201-202 us).
        let a = tl.program(DieId(0), SimTime(0));
        let b = tl.program(DieId(0), a.finish);
        assert_eq!(b.start, a.finish);
        // Die 1's program at 0 fits in the gap before that transfer.
        let c = tl.program(DieId(1), SimTime(0));
        assert_eq!(c.start, SimTime(1000));
        assert_eq!(c.finish, SimTime(202_000));
        // A read on die 1: array time, then a transfer that would overlap die 0's
        // second one, so it goes right after it.
        let r = tl.read(DieId(1), SimTime(176_000));
        assert_eq!(r.start, c.finish);
        assert_eq!(r.finish, SimTime(202_000 + 25_000 + 1000));
        let mut tl = setup();
        let a = tl.program(DieId(0), SimTime(0));
        tl.program(DieId(0), a.finish);
        let r = tl.read(DieId(1), SimTime(176_000));
        assert_eq!(r.finish, SimTime(202_000 + 1000), "array until 201 us, the channel busy until 202 us");
        // Nothing overlaps on the channel.
        let cal = &tl.channel[0];
        assert!(cal.iter().zip(cal.iter().skip(1)).all(|(a, b)| a.1 <= b.0), "{cal:?}");
        tl.retire(SimTime(202_000));
        assert_eq!(tl.channel[0], [(SimTime(202_000), SimTime(203_000), DATA_OUT)]);
    }

    #[test]
    fn retiring_again_at_the_same_instant_forgets_what_was_reserved_since() {
        let mut tl = setup();
        tl.program(DieId(0), SimTime(0));
        tl.retire(SimTime(5000));
        assert!(tl.channel[0].is_empty());
        // Nothing reserved since: a second retire at the instant changes nothing.
        tl.retire(SimTime(5000));
        assert!(tl.channel[0].is_empty());
        // A transfer reserved since, finished by then (issued earlier, as a
        // command of another die may be), is forgotten by the next retire at
        // the same instant.
        tl.program(DieId(1), SimTime(0));
        assert_eq!(tl.channel[0].len(), 1);
        tl.retire(SimTime(5000));
        assert!(tl.channel[0].is_empty(), "{:?}", tl.channel[0]);
        // And after a reset.
        tl.reset(SimTime(3000));
        tl.retire(SimTime(5000));
        assert!(tl.channel[0].is_empty(), "{:?}", tl.channel[0]);
    }

    #[test]
    fn a_transfer_reports_its_wait_behind_host_transfers_only() {
        let host = |at| Issue::new(SimTime(at), true);
        let mut tl = setup();
        // Die 0: a host program (transfer 0-1 us), then garbage collection's
        // program chained after it (transfer 201-202 us).
        let a = tl.program(DieId(0), host(0));
        assert_eq!(a.queued, SimTime::ZERO);
        tl.program(DieId(0), a.finish);
        // A read on die 1 whose transfer would overlap the GC transfer waits
        // for it, and that is not queueing.
        let r = tl.read(DieId(1), host(176_000));
        assert_eq!((r.finish, r.queued), (SimTime(203_000), SimTime::ZERO));
        // Die 1's host program at 0 waits 1 us behind the host transfer.
        let mut tl = setup();
        tl.program(DieId(0), host(0));
        let b = tl.program(DieId(1), host(0));
        assert_eq!((b.start, b.queued), (SimTime(1000), SimTime(1000)));
        // Behind a transfer that is not the host's, it does not count.
        let mut tl = setup();
        tl.program(DieId(0), SimTime(0));
        let b = tl.program(DieId(1), host(0));
        assert_eq!((b.start, b.queued), (SimTime(1000), SimTime::ZERO));
        // Behind a host transfer it partly overlaps, it queued for the rest.
        let mut tl = setup();
        tl.read(DieId(0), host(0));
        let r = tl.read(DieId(1), host(0));
        assert_eq!((r.finish, r.queued), (SimTime(25_000 + 2000), SimTime(1000)));
        // A gap too short for it before a host transfer is queueing too.
        let mut tl = setup();
        tl.program(DieId(0), host(500));
        let b = tl.program(DieId(1), host(0));
        assert_eq!((b.start, b.queued), (SimTime(1500), SimTime(1500)));
    }

    #[test]
    fn erase_and_copyback_use_only_the_die() {
        let mut tl = setup();
        let e = tl.erase(DieId(0), SimTime(0));
        assert_eq!(e.finish, SimTime(1_500_000));
        let r = tl.read(DieId(1), SimTime(0));
        assert_eq!(r.start, SimTime(0), "a busy die does not hold the channel");
        let cb = tl.copyback(DieId(0), SimTime(0));
        assert_eq!(cb.start, e.finish);
        assert_eq!(cb.finish, e.finish + SimTime(225_000));
        assert_eq!(tl.soonest_free_die(), DieId(1));
        // Die 1 is busy with the read until 26 us; die 0 much longer.
        assert_eq!(tl.free_die_from(DieId(0), SimTime(0)), DieId(1));
        assert_eq!(tl.free_die_from(DieId(1), SimTime(30_000)), DieId(1));
        tl.erase(DieId(1), SimTime(0));
        assert_eq!(tl.free_die_from(DieId(0), SimTime(30_000)), DieId(1), "the die free soonest");
    }

    fn with(commands: Commands) -> Timelines {
        let mut tl = setup();
        tl.set_commands(commands);
        tl
    }

    fn host(at: u64) -> Issue {
        Issue::new(SimTime(at), true)
    }

    #[test]
    fn cache_program_overlaps_the_next_transfer_with_the_array_time() {
        // Without: transfer then array, one after the other.
        let mut tl = setup();
        tl.program(DieId(0), SimTime(0));
        assert_eq!(tl.program(DieId(0), SimTime(0)).finish, SimTime(2 * 201_000));
        // With: the second transfer (1-2 us) runs while the array programs the
        // first page; the second array time starts when the first ends.
        let mut tl = with(Commands { cache_program: true, ..Commands::default() });
        let a = tl.program(DieId(0), SimTime(0));
        assert_eq!(a.finish, SimTime(201_000));
        let b = tl.program(DieId(0), SimTime(0));
        assert_eq!((b.start, b.finish), (SimTime(1000), SimTime(401_000)));
        // A read still waits for the die.
        assert_eq!(tl.read(DieId(0), SimTime(0)).start, SimTime(401_000));
        // After a read the cache register is free only when the read is done.
        let c = tl.program(DieId(0), SimTime(0));
        assert_eq!(c.start, SimTime(401_000 + 26_000));
    }

    #[test]
    fn a_host_read_suspends_an_erase_and_the_erase_finishes_later() {
        let commands = Commands { erase_suspension: true, suspend_erase_ns: 10_000, ..Commands::default() };
        let mut tl = with(commands);
        tl.erase(DieId(0), SimTime(0));
        // Suspended at 100 us (10 us to suspend), sensed, moved out by 136 us.
        let r = tl.read(DieId(0), host(100_000));
        assert_eq!((r.start, r.finish), (SimTime(100_000), SimTime(136_000)));
        assert_eq!(
            tl.take_suspension(),
            Some(Suspended { die: DieId(0), from: SimTime(1_500_000), to: SimTime(1_536_000) })
        );
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(1_536_000));
        // A read while the erase is still suspended queues behind the first,
        // without another suspension.
        let r2 = tl.read(DieId(0), host(120_000));
        assert_eq!((r2.start, r2.finish), (SimTime(136_000), SimTime(162_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(1_562_000));
        // Once resumed, another read suspends it again.
        let r3 = tl.read(DieId(0), host(500_000));
        assert_eq!(r3.finish, SimTime(536_000));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(1_598_000));
        assert!(tl.take_suspension().is_some());
        // Near its end the erase is not worth suspending.
        let r4 = tl.read(DieId(0), host(1_590_000));
        assert_eq!(r4.start, SimTime(1_598_000));
        assert_eq!(tl.take_suspension(), None);
    }

    #[test]
    fn only_host_reads_suspend_and_only_an_erase() {
        let erase_only = Commands { erase_suspension: true, suspend_erase_ns: 10_000, ..Commands::default() };
        // A read of garbage collection waits out the erase.
        let mut tl = with(erase_only);
        tl.erase(DieId(0), SimTime(0));
        assert_eq!(tl.read(DieId(0), SimTime(100_000)).start, SimTime(1_500_000));
        // A program is never suspended.
        let mut tl = with(erase_only);
        tl.program(DieId(0), SimTime(0));
        assert_eq!(tl.read(DieId(0), host(100_000)).start, SimTime(201_000));
        // Nor an erase with something queued behind it.
        let mut tl = with(erase_only);
        tl.erase(DieId(0), SimTime(0));
        tl.program(DieId(0), SimTime(0));
        assert_eq!(tl.read(DieId(0), host(100_000)).start, SimTime(1_701_000));
        // Without suspension the same read waits.
        let mut tl = setup();
        tl.erase(DieId(0), SimTime(0));
        assert_eq!(tl.read(DieId(0), host(100_000)).start, SimTime(1_500_000));
    }

    #[test]
    fn multi_plane_operations_share_one_array_time() {
        let mut tl = setup();
        let p = tl.program_multi(DieId(0), SimTime(0), &[0, 0]);
        assert_eq!((p.start, p.finish), (SimTime(0), SimTime(2000 + 200_000)));
        let r = tl.read_multi(DieId(0), SimTime(0), 2);
        assert_eq!((r.start, r.finish), (p.finish, p.finish + SimTime(25_000 + 2000)));
        let e = tl.erase_multi(DieId(0), SimTime(0));
        assert_eq!(e.finish, r.finish + SimTime(1_500_000));
        // Die 1 on the same channel waits for both of die 0's transfers.
        let mut tl = setup();
        tl.program_multi(DieId(0), SimTime(0), &[0, 0]);
        assert_eq!(tl.program(DieId(1), SimTime(0)).start, SimTime(2000));
    }

    #[test]
    fn a_read_that_joins_the_last_read_shares_its_array_time() {
        // Read 25,000 ns, transfer 1,000 ns: a joined read adds its transfer
        // only, as a two-plane read does.
        let mut tl = setup();
        let lead = tl.read(DieId(0), host(0));
        assert_eq!((lead.start, lead.finish), (SimTime(0), SimTime(26_000)));
        let j = tl.read_join(DieId(0), lead, host(0)).unwrap();
        assert_eq!((j.start, j.finish), (SimTime(26_000), SimTime(27_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(27_000));
        let mut multi = setup();
        assert_eq!(multi.read_multi(DieId(0), host(0), 2).finish, j.finish);
        // Not after something else on the die, not issued after the lead
        // started, not on another die.
        let mut tl = setup();
        let lead = tl.read(DieId(0), host(0));
        tl.program(DieId(0), SimTime(0));
        assert_eq!(tl.read_join(DieId(0), lead, host(0)), None);
        let mut tl = setup();
        let lead = tl.read(DieId(0), host(0));
        assert_eq!(tl.read_join(DieId(0), lead, host(1)), None);
        assert_eq!(tl.read_join(DieId(1), lead, host(0)), None);
        assert_eq!(tl.die_free_at(DieId(0)), lead.finish);
    }

    #[test]
    fn with_reads_first_a_joined_read_moves_the_programs_it_passed_by_its_transfer() {
        let mut tl = setup();
        tl.set_commands(Commands { reads_first: true, ..Commands::default() });
        for _ in 0..2 {
            tl.program(DieId(0), SimTime::ZERO);
        }
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(402_000));
        // The read passes the second program; the join adds 1,000 ns to it
        // and to the program behind it.
        let lead = tl.read(DieId(0), host(50_000));
        assert_eq!((lead.start, lead.finish), (SimTime(201_000), SimTime(227_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(428_000));
        let j = tl.read_join(DieId(0), lead, host(50_000)).unwrap();
        assert_eq!((j.start, j.finish), (SimTime(227_000), SimTime(228_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(429_000));
        // A second join extends the grown read.
        let grown = Span { finish: j.finish, ..lead };
        assert_eq!(tl.read_join(DieId(0), grown, host(50_000)).map(|s| s.finish), Some(SimTime(229_000)));
        assert_eq!(tl.die_free_at(DieId(0)), SimTime(430_000));
        // The read as first reserved is gone from the queue: it joins no more.
        assert_eq!(tl.read_join(DieId(0), lead, host(50_000)), None);
        // Nor does a read with a read reserved after it (a garbage-collection
        // read behind it, or a read it took a gap before): that read's time
        // was given when it was reserved.
        let mut tl = setup();
        tl.set_commands(Commands { reads_first: true, ..Commands::default() });
        let lead = tl.read(DieId(0), host(0));
        tl.read(DieId(0), SimTime(0));
        assert_eq!(tl.read_join(DieId(0), lead, host(0)), None);
        let mut tl = setup();
        tl.set_commands(Commands { reads_first: true, ..Commands::default() });
        let late = tl.read(DieId(0), host(26_500));
        let lead = tl.read(DieId(0), host(0));
        assert!(lead.finish <= late.start, "the lead took the gap before the late read");
        assert_eq!(tl.read_join(DieId(0), lead, host(0)), None);
    }
}
