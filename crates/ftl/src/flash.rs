//! The flash as an FTL sees it: the medium plus the framework's counters, and the
//! per-command [`Io`] handle that is an FTL's only road to it.

use serde::Serialize;

use ftlab_nand::{
    BlockId, DieId, Geometry, Issue, Nand, NandError, Oob, PageKind, Payload, Ppa, ProgramFailure, SimTime, Span,
    StoreKind,
};

use crate::read_buffer::ReadBuffer;
use crate::FtlError;

/// How many pages [`Io::program_placed`] and [`Io::copy_placed`] try before
/// they give up on a write whose programs keep failing: each failure retires a
/// block, so a bound keeps a medium failing every program from draining the
/// device into grown-bad blocks within one command.
pub const PROGRAM_ATTEMPTS: u32 = 8;

/// Whether `e` is a program that failed (its block has gone bad).
pub fn program_failed(e: &FtlError) -> bool {
    matches!(e, FtlError::Nand(NandError::ProgramFailed { .. }))
}

/// The retry after a failed program that a scheme placing its own pages does
/// (where [`Io::program_placed`] does not fit): runs `attempt` on `state` until
/// it succeeds, fails otherwise than by a failed program, or has failed by one
/// [`PROGRAM_ATTEMPTS`] times, and returns what the last attempt returned.
/// After each failed program but the last, `failed` is told the page that
/// failed, to mark its block (full, or retired) so that the next attempt lands
/// elsewhere; an attempt that leaves the block counted full itself passes a
/// `failed` that does nothing.
#[inline]
pub fn retry_program<S: ?Sized, T>(
    state: &mut S,
    mut attempt: impl FnMut(&mut S) -> Result<T, FtlError>,
    mut failed: impl FnMut(&mut S, Ppa),
) -> Result<T, FtlError> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        match attempt(state) {
            Err(FtlError::Nand(NandError::ProgramFailed { ppa })) if attempts < PROGRAM_ATTEMPTS => failed(state, ppa),
            r => return r,
        }
    }
}

/// Why a flash operation was issued. Every operation is tagged, so write
/// amplification, valid-page copies and erase counts are computed by the framework
/// the same way for every FTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Serving a host read or write.
    Host = 0,
    /// Garbage collection (valid-page copies and victim erases).
    Gc = 1,
    /// Mapping-table traffic (translation pages).
    Map = 2,
    /// Wear leveling.
    WearLeveling = 3,
    /// Checkpoints of FTL state.
    Checkpoint = 4,
    /// Rebuilding state after a power cut.
    Recovery = 5,
}

impl Purpose {
    /// Every purpose, in index order.
    pub const ALL: [Purpose; 6] =
        [Purpose::Host, Purpose::Gc, Purpose::Map, Purpose::WearLeveling, Purpose::Checkpoint, Purpose::Recovery];
}

/// A count per [`Purpose`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerPurpose(pub [u64; 6]);

impl PerPurpose {
    /// The count for `p`.
    #[inline]
    pub fn get(&self, p: Purpose) -> u64 {
        self.0[p as usize]
    }
    #[inline]
    fn bump(&mut self, p: Purpose) {
        self.0[p as usize] += 1;
    }
    #[inline]
    fn add(&mut self, p: Purpose, n: u64) {
        self.0[p as usize] += n;
    }
    /// The sum over every purpose.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

impl Serialize for PerPurpose {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(6))?;
        for p in Purpose::ALL {
            let name = match p {
                Purpose::Host => "host",
                Purpose::Gc => "gc",
                Purpose::Map => "map",
                Purpose::WearLeveling => "wear_leveling",
                Purpose::Checkpoint => "checkpoint",
                Purpose::Recovery => "recovery",
            };
            m.serialize_entry(name, &self.get(p))?;
        }
        m.end()
    }
}

/// Flash operation counters, by purpose. A copyback counts as one read and one
/// program (and once more in `copybacks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub reads: PerPurpose,
    pub oob_reads: PerPurpose,
    pub programs: PerPurpose,
    pub erases: PerPurpose,
    pub copybacks: PerPurpose,
    /// Multi-plane commands (each also counted per page or block above).
    pub multi_plane: PerPurpose,
    /// Host reads that suspended a program or an erase ([`ftlab_nand::commands`]).
    pub suspensions: u64,
    /// Nanoseconds the dies were occupied by operations of each purpose,
    /// summed over the dies: each successful operation from its start on its
    /// die's timeline (the array for reads, erases and copybacks, the
    /// channel transfer for programs) to its finish. A die runs one operation
    /// at a time, so this is at most the dies times the elapsed time; the rest
    /// is idle. Failed operations (fault injection) are not counted. With
    /// cache program (`device.commands.cache_program`) a program's transfer
    /// may overlap the array time of the program before it on the die, and
    /// that overlap counts for both; a multi-plane operation counts once; a
    /// read that suspended an erase counts its time and the suspension, the
    /// erase its own time.
    pub die_ns: PerPurpose,
}

impl Counters {
    /// Write amplification: flash page programs of every purpose per host page
    /// program; `None` before the first host write.
    pub fn waf(&self) -> Option<f64> {
        let host = self.programs.get(Purpose::Host);
        (host > 0).then(|| self.programs.total() as f64 / host as f64)
    }
    /// Valid pages copied by garbage collection and wear leveling.
    pub fn page_copies(&self) -> u64 {
        self.programs.get(Purpose::Gc) + self.programs.get(Purpose::WearLeveling)
    }
}

/// The medium with the framework's bookkeeping.
#[derive(Debug)]
pub struct Flash {
    nand: Nand,
    counters: Counters,
    /// Per block: the latest finish of a program that superseded one of its pages
    /// ([`Io::supersede`], and every copy). The block is not erased before it, so
    /// an old copy is never destroyed before its replacement is durable.
    erase_barrier: Vec<SimTime>,
    use_copyback: bool,
    /// Per die: the finish of the latest host operation ([`Purpose::Host`]) on
    /// it. What a command waits for before it is queueing behind other host
    /// commands, not service ([`Io::queued_behind`]).
    host_end: Vec<SimTime>,
    /// A block that went bad under the last program a command tried before it
    /// gave up ([`PROGRAM_ATTEMPTS`]): the next [`Io::program_placed`] or
    /// [`Io::copy_placed`] has the FTL retire it first.
    unretired: Option<BlockId>,
    /// The read buffer in device DRAM, if any ([`crate::read_buffer`]).
    read_buffer: Option<ReadBuffer>,
    /// Page reads take no time ([`Flash::set_untimed_reads`]).
    untimed_reads: bool,
    /// The last timed host read, a multi-plane read once others joined it:
    /// its pages on the medium, how many pages it reads (with those of pages
    /// never written, [`Io::read_time`]) and its span; what a read marked to
    /// join ([`Io::set_joins_read`]) joins.
    read_group: Vec<Ppa>,
    read_members: u32,
    read_lead: Option<Span>,
}

impl Flash {
    /// Wraps a medium.
    pub fn new(nand: Nand) -> Self {
        let blocks = nand.geometry().total_blocks() as usize;
        let dies = nand.geometry().dies() as usize;
        Flash {
            nand,
            counters: Counters::default(),
            erase_barrier: vec![SimTime::ZERO; blocks],
            use_copyback: true,
            host_end: vec![SimTime::ZERO; dies],
            unretired: None,
            read_buffer: None,
            untimed_reads: false,
            read_group: Vec::new(),
            read_members: 0,
            read_lead: None,
        }
    }
    /// Puts `buffer` between the flash and host reads ([`crate::read_buffer`]).
    pub fn set_read_buffer(&mut self, buffer: Option<ReadBuffer>) {
        self.read_buffer = buffer;
    }
    /// The read buffer, if any.
    pub fn read_buffer(&self) -> Option<&ReadBuffer> {
        self.read_buffer.as_ref()
    }

    /// A host request starts (see [`ReadBuffer::request_start`]).
    #[inline]
    pub fn request_start(&mut self) {
        if let Some(b) = self.read_buffer.as_mut() {
            b.request_start();
        }
    }

    /// While on, [`Io::read`] reads pages from the medium without taking any
    /// time on its dies or channels ([`Nand::read_untimed`]; the read buffer,
    /// if any, is still read through, and reads are still counted): for a
    /// read-back after a run, whose timing nothing reports. Off by default.
    pub fn set_untimed_reads(&mut self, on: bool) {
        self.untimed_reads = on;
    }

    /// Whether the power may be cut ([`Nand::set_power_cuts`]; default true).
    pub fn set_power_cuts(&mut self, on: bool) {
        self.nand.set_power_cuts(on);
    }

    /// Whether GC moves inside one plane use copyback (default true).
    pub fn set_copyback(&mut self, on: bool) {
        self.use_copyback = on;
    }
    /// A handle for one command issued at `now`.
    #[inline]
    pub fn io(&mut self, now: SimTime) -> Io<'_> {
        self.nand.retire(now);
        Io {
            flash: self,
            now,
            ready: now,
            done: now,
            host_done: None,
            acked: None,
            last_program: now,
            behind: SimTime::ZERO,
            host_dies: [u32::MAX; HOST_DIES],
            channel_queued: SimTime::ZERO,
            failures: 0,
            update_read: false,
            host_bytes: 0,
            held_since: None,
            paired: false,
            joins: false,
            token: 0,
            queued: 0,
        }
    }
    /// The medium.
    pub fn nand(&self) -> &Nand {
        &self.nand
    }
    /// Counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// A performance hint with no effect on results: starts loading what a
    /// read of `ppa` will look up into the CPU cache ([`Nand::prefetch`]).
    #[inline]
    pub fn prefetch(&self, ppa: Ppa) {
        self.nand.prefetch(ppa);
    }
    /// A performance hint with no effect on results: starts loading what
    /// [`Io::supersede`] of `ppa` will update (its block's erase barrier).
    #[inline]
    pub fn prefetch_supersede(&self, ppa: Ppa) {
        let b = self.nand.layout().block_of(ppa).0 as usize;
        prefetch_index::prefetch_index(&self.erase_barrier, b);
    }
    /// The finish of the latest host operation on `die` ([`Io::queued_behind`]).
    pub fn host_end(&self, die: DieId) -> SimTime {
        self.host_end[die.0 as usize]
    }
    /// Zeroes the counters (e.g. at the end of preconditioning).
    pub fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }
    /// Arms a countdown on the medium: the `n`th program from now fails (see
    /// [`Nand::fail_program_in`]).
    pub fn fail_program_in(&mut self, n: u64) {
        self.nand.fail_program_in(n);
    }
    /// Arms a countdown on the medium: the `n`th erase from now fails (see
    /// [`Nand::fail_erase_in`]).
    pub fn fail_erase_in(&mut self, n: u64) {
        self.nand.fail_erase_in(n);
    }
    /// Cuts power at `t`: see [`Nand::power_cut`]. Whatever an FTL kept in RAM is
    /// gone with it; rebuild the FTL with its builder's `recover`.
    pub fn power_cut(&mut self, t: SimTime) {
        self.nand.power_cut(t);
        // The FTL is rebuilt from the medium, which knows the block is bad.
        self.unretired = None;
        self.erase_barrier.iter_mut().for_each(|b| *b = (*b).min(t));
        self.host_end.iter_mut().for_each(|h| *h = (*h).min(t));
        if let Some(b) = &mut self.read_buffer {
            b.clear(t);
        }
    }
}

/// One command's road to the flash. It carries `now`, tags every operation with
/// its purpose, and records when the host is acknowledged.
///
/// Operations of one command are issued at `now`; a read's data is needed by what
/// follows, so every operation issued after a read starts no earlier than that
/// read's finish (unless the read is inside an [`Io::independent`] chain).
/// Programs, copybacks and erases do not hold later operations back; each die and
/// channel serves its operations in issue order. An erase starts no earlier than
/// the finish of the programs that superseded its pages (see [`Io::supersede`]),
/// so a victim is erased only once the copies of its valid pages are durable.
#[derive(Debug)]
pub struct Io<'a> {
    flash: &'a mut Flash,
    now: SimTime,
    ready: SimTime,
    done: SimTime,
    host_done: Option<SimTime>,
    acked: Option<SimTime>,
    last_program: SimTime,
    /// The latest finish, before this command, of host operations on the dies
    /// its own host operations use ([`Io::queued_behind`]).
    behind: SimTime,
    /// The dies this command's host operations used so far (`u32::MAX`: none).
    host_dies: [u32; HOST_DIES],
    /// How long this command's host transfers waited on their channels behind
    /// other host transfers ([`Io::queued_on_channel`]).
    channel_queued: SimTime,
    /// Programs that failed in this command and were retried elsewhere
    /// ([`Io::program_placed`]).
    failures: u32,
    /// The reads now are the first half of a read-modify-write
    /// ([`Io::update_read`]).
    update_read: bool,
    /// Bytes of the page the host reads or programs now move
    /// ([`Io::set_host_bytes`]); 0: the whole page.
    host_bytes: u32,
    /// When the die of the host reads now became free for them, if a
    /// dispatcher held them ([`Io::set_held_since`]).
    held_since: Option<SimTime>,
    /// The writes now were paired by a scheduler ([`Io::set_paired`]).
    paired: bool,
    /// The host reads now join the last one ([`Io::set_joins_read`]).
    joins: bool,
    /// The dispatcher's number for this command's host pages, for an FTL
    /// that queues their programs ([`Io::set_token`]); 0: none.
    token: u64,
    /// Host programs of this command an FTL queued rather than timed
    /// ([`Io::queued_host`]).
    queued: u32,
}

/// Dies whose earlier host work a command's host operations are measured
/// against ([`Io::queued_behind`]): a page command's host operations touch one
/// or two (a read-modify-write); beyond this many, later dies are not compared.
const HOST_DIES: usize = 4;

impl Io<'_> {
    /// The time the command was issued.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// The device shape.
    #[inline]
    pub fn geometry(&self) -> &Geometry {
        self.flash.nand.geometry()
    }
    /// The chip's latencies (for design-time bounds; FTLs never compute times).
    #[inline]
    pub fn timing(&self) -> &ftlab_nand::Timing {
        self.flash.nand.timing()
    }
    /// Whether moves inside one plane use copyback (see [`Flash::set_copyback`]).
    #[inline]
    pub fn copyback_enabled(&self) -> bool {
        self.flash.use_copyback
    }
    /// How the medium stores page contents (tokens or bytes): what payload an
    /// FTL's own metadata pages must carry.
    #[inline]
    pub fn store_kind(&self) -> StoreKind {
        self.flash.nand.store_kind()
    }
    /// Whether `block` is a bad block (read from the factory marks; free).
    #[inline]
    pub fn is_bad(&self, block: BlockId) -> bool {
        self.flash.nand.is_bad(block)
    }
    /// Whether `block` went bad in service (a program or erase on it failed):
    /// it takes no program and no erase, and is never used again; its programmed
    /// pages still read, so they can be moved off.
    #[inline]
    pub fn is_grown_bad(&self, block: BlockId) -> bool {
        self.flash.nand.is_grown_bad(block)
    }
    /// Erase count of `block`.
    #[inline]
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.flash.nand.erase_count(block)
    }
    /// Programmed pages of `block` (its write pointer, as a scan would find it).
    #[inline]
    pub fn programmed_pages(&self, block: BlockId) -> u32 {
        self.flash.nand.programmed_pages(block)
    }
    /// When `die` is next free.
    #[inline]
    pub fn die_free_at(&self, die: DieId) -> SimTime {
        self.flash.nand.die_free_at(die)
    }
    /// The die free soonest.
    pub fn soonest_free_die(&self) -> DieId {
        self.flash.nand.soonest_free_die()
    }
    /// The first die from `start` (wrapping) that is idle at `now`, else the die
    /// free soonest: where a write placed freely waits least.
    #[inline]
    pub fn free_die_from(&self, start: DieId) -> DieId {
        self.flash.nand.free_die_from(start, self.now)
    }
    /// RBER of `block` by the wear model.
    pub fn rber(&self, block: BlockId) -> f64 {
        self.flash.nand.rber(block)
    }

    /// Where the next operation for `purpose` is issued.
    #[inline]
    fn issue(&self, purpose: Purpose) -> Issue {
        let host = purpose == Purpose::Host;
        if host {
            Issue { at: self.ready, host, bytes: self.host_bytes, since: self.held_since }
        } else {
            Issue::new(self.ready, false)
        }
    }
    #[inline]
    fn finished(&mut self, span: Span, purpose: Purpose) {
        self.flash.counters.die_ns.add(purpose, span.finish.0 - span.start.0);
        self.done = self.done.max(span.finish);
        if purpose == Purpose::Host {
            self.host_done = Some(self.host_done.map_or(span.finish, |h| h.max(span.finish)));
            self.host_on(span.die, span.finish);
            self.channel_queued += span.queued;
        }
    }
    #[inline]
    fn after_read(&mut self, span: Span, purpose: Purpose) {
        self.ready = self.ready.max(span.finish);
        self.finished(span, purpose);
    }
    #[inline]
    fn after_program(&mut self, span: Span, purpose: Purpose) {
        self.finished(span, purpose);
        self.last_program = span.finish;
    }
    /// Records a host operation of this command on `die` finishing at `finish`.
    #[inline]
    fn host_on(&mut self, die: DieId, finish: SimTime) {
        let end = &mut self.flash.host_end[die.0 as usize];
        if let Some(slot) = self.host_dies.iter_mut().find(|d| **d == die.0 || **d == u32::MAX) {
            if *slot == u32::MAX {
                // First host operation of this command on `die`: what the
                // earlier host commands left there is queueing.
                self.behind = self.behind.max(*end);
                *slot = die.0;
            }
        }
        *end = (*end).max(finish);
    }

    /// The latest finish, before this command, of host operations (of earlier
    /// commands) on the dies this command's host operations used: until then
    /// the command was queued behind other host commands; what it waited for
    /// after that (garbage collection, map or wear-leveling work on its die) is
    /// part of its service. Zero if it used no die for the host.
    #[inline]
    pub fn queued_behind(&self) -> SimTime {
        self.behind
    }

    /// How long this command's host operations' channel transfers waited
    /// behind host transfers of other commands: queueing, not service, like
    /// [`Io::queued_behind`] on the die.
    #[inline]
    pub fn queued_on_channel(&self) -> SimTime {
        self.channel_queued
    }

    /// Runs `chain` as a chain of operations the rest of the command does not
    /// wait for: reads inside it hold back later operations inside it, but not
    /// the operations issued after it returns (e.g. a GC pass before a host
    /// write: the host program does not wait for the pass's reads; it only
    /// waits where the die timelines make it).
    pub fn independent<R>(&mut self, chain: impl FnOnce(&mut Self) -> R) -> R {
        let ready = self.ready;
        let r = chain(self);
        self.ready = ready;
        r
    }

    /// Runs `chain` as a command of its own issued at `at`, which may be
    /// earlier than [`Io::now`]: work a layer queued in the device and that the
    /// device started the moment its die fell free, found out only when the
    /// next command arrives (the data cache's write-backs,
    /// [`crate::data_cache`]). Nothing of it counts toward this command's
    /// completion, acknowledgement or queueing; `at` should be no earlier than
    /// the commands issued before this one.
    pub fn detached<R>(&mut self, at: SimTime, chain: impl FnOnce(&mut Io<'_>) -> R) -> R {
        let mut io = Io {
            flash: &mut *self.flash,
            now: at,
            ready: at,
            done: at,
            host_done: None,
            acked: None,
            last_program: at,
            behind: SimTime::ZERO,
            host_dies: [u32::MAX; HOST_DIES],
            channel_queued: SimTime::ZERO,
            failures: 0,
            update_read: false,
            host_bytes: 0,
            held_since: None,
            paired: false,
            joins: false,
            token: 0,
            queued: 0,
        };
        chain(&mut io)
    }

    /// Reads a page and its OOB. A host read goes through the read buffer if
    /// there is one ([`crate::read_buffer`]).
    #[inline]
    pub fn read(&mut self, ppa: Ppa, purpose: Purpose) -> Result<(Payload, Oob), NandError> {
        if purpose == Purpose::Host && self.flash.read_buffer.is_some() {
            if let Some(mut buffer) = self.flash.read_buffer.take() {
                let r = self.read_buffered(&mut buffer, ppa);
                self.flash.read_buffer = Some(buffer);
                return r;
            }
        }
        if self.flash.untimed_reads {
            let read = self.flash.nand.read_untimed(ppa)?;
            self.flash.counters.reads.bump(purpose);
            return Ok(read);
        }
        if purpose == Purpose::Host && self.joins {
            if let Some(read) = self.read_joined(ppa)? {
                return Ok(read);
            }
        }
        let suspensions = self.flash.nand.suspensions();
        let (data, oob, span) = self.flash.nand.read(ppa, self.issue(purpose))?;
        self.flash.counters.reads.bump(purpose);
        self.flash.counters.suspensions += self.flash.nand.suspensions() - suspensions;
        if purpose == Purpose::Host {
            self.lead_read(Some(ppa), span);
        }
        self.after_read(span, purpose);
        Ok((data, oob))
    }

    /// Notes a host read (of `ppa`, or of a page never written) as the read
    /// later ones may join.
    #[inline]
    fn lead_read(&mut self, ppa: Option<Ppa>, span: Span) {
        self.flash.read_group.clear();
        self.flash.read_group.extend(ppa);
        self.flash.read_members = 1;
        self.flash.read_lead = Some(span);
    }

    /// The multi-plane read a host read may join now: its span, if this
    /// command's reads join ([`Io::set_joins_read`]) and it has room for
    /// another plane.
    #[inline]
    fn joinable(&self) -> Option<Span> {
        let planes = self.flash.nand.geometry().planes_per_die;
        self.flash.read_lead.filter(|_| self.joins && self.flash.read_members < planes)
    }

    /// Notes a read that joined the last one, adding `span`.
    fn joined(&mut self, ppa: Option<Ppa>, span: Span) {
        if self.flash.read_members == 1 {
            self.flash.counters.multi_plane.bump(Purpose::Host);
        }
        self.flash.read_group.extend(ppa);
        self.flash.read_members += 1;
        if let Some(lead) = &mut self.flash.read_lead {
            lead.finish = span.finish;
        }
        self.flash.counters.reads.bump(Purpose::Host);
        self.after_read(span, Purpose::Host);
    }

    /// A host read of `ppa` as one more plane of the last host read's
    /// multi-plane read, if the medium takes it as one
    /// ([`ftlab_nand::Nand::read_join`]); `None`, with nothing done, if not.
    #[cold]
    fn read_joined(&mut self, ppa: Ppa) -> Result<Option<(Payload, Oob)>, NandError> {
        let Some(lead) = self.joinable() else { return Ok(None) };
        let issue = self.issue(Purpose::Host);
        let Some((data, oob, span)) = self.flash.nand.read_join(&self.flash.read_group, lead, ppa, issue)? else {
            return Ok(None);
        };
        self.joined(Some(ppa), span);
        Ok(Some((data, oob)))
    }

    /// Spends a page read's time on `die` for a read of a page no write reached,
    /// as a device that reads flash for it does ([`ftlab_nand::Nand::read_time`]):
    /// the die senses, the channel carries the page out, and the read is
    /// counted under `purpose`; no data comes back.
    pub fn read_time(&mut self, die: DieId, purpose: Purpose) -> Result<(), NandError> {
        if self.flash.untimed_reads {
            self.flash.counters.reads.bump(purpose);
            return Ok(());
        }
        if purpose == Purpose::Host {
            if let Some(lead) = self.joinable() {
                if let Some(span) = self.flash.nand.read_time_join(die, lead, self.issue(purpose))? {
                    self.joined(None, span);
                    return Ok(());
                }
            }
        }
        let span = self.flash.nand.read_time(die, self.issue(purpose))?;
        self.flash.counters.reads.bump(purpose);
        if purpose == Purpose::Host {
            self.lead_read(None, span);
        }
        self.after_read(span, purpose);
        Ok(())
    }

    /// A translation read of a cached mapping table that keeps its whole map
    /// in RAM and models only the time ([`crate::schemes::page::pagemap::plane_gc`]):
    /// a page read's sense on `die` and a transfer out of `bytes`, counted
    /// as a map read. `first`: issued as the host read it serves, so that
    /// with reads first ([`ftlab_nand::Commands::reads_first`]) it passes the
    /// programs and erases queued there. What follows in this command waits
    /// for it. Returns when the read ends.
    pub fn map_read(&mut self, die: DieId, bytes: u32, first: bool) -> Result<SimTime, NandError> {
        if self.flash.untimed_reads {
            self.flash.counters.reads.bump(Purpose::Map);
            return Ok(self.ready);
        }
        let span = self.flash.nand.read_time_bytes(die, Issue::new(self.ready, first), bytes)?;
        self.flash.counters.reads.bump(Purpose::Map);
        self.after_read(span, Purpose::Map);
        Ok(span.finish)
    }

    /// A translation-page program of such a table: a page program's time on
    /// `die`, counted as a map program, with no page taken (the content is
    /// the map in RAM). Returns when the program ends.
    pub fn map_program(&mut self, die: DieId) -> Result<SimTime, NandError> {
        let span = self.flash.nand.program_time(die, self.issue(Purpose::Map))?;
        self.flash.counters.programs.bump(Purpose::Map);
        self.after_program(span, Purpose::Map);
        Ok(span.finish)
    }

    /// A host read through the read buffer: from DRAM if the page is there,
    /// else from the flash into the buffer; either way the page's bytes are
    /// then copied out of the buffer.
    #[cold]
    fn read_buffered(&mut self, buffer: &mut ReadBuffer, ppa: Ppa) -> Result<(Payload, Oob), NandError> {
        let erases = self.flash.nand.erase_count(self.flash.nand.layout().block_of(ppa));
        let bytes = u64::from(self.flash.nand.geometry().page_size);
        let (data, oob, from) = match buffer.lookup(ppa, erases, 0) {
            Some((data, oob, _)) => (data, oob, self.ready),
            None => {
                let (data, oob, span) = self.flash.nand.read(ppa, self.issue(Purpose::Host))?;
                self.flash.counters.reads.bump(Purpose::Host);
                self.after_read(span, Purpose::Host);
                buffer.insert(ppa, erases, vec![(data.clone(), oob)]);
                (data, oob, span.finish)
            }
        };
        self.copied_out(buffer, from, bytes);
        Ok((data, oob))
    }

    /// A host read's `bytes` copied out of the read buffer from `from`: what
    /// follows, and the command, wait for the copy's end.
    fn copied_out(&mut self, buffer: &mut ReadBuffer, from: SimTime, bytes: u64) {
        let end = buffer.copy(from, bytes);
        self.ready = self.ready.max(end);
        self.complete_after(end);
        self.done = self.done.max(end);
    }

    /// The chip's advanced commands ([`ftlab_nand::commands`]).
    #[inline]
    pub fn commands(&self) -> &ftlab_nand::Commands {
        self.flash.nand.commands()
    }

    /// Programs one page in each of several planes of one die in one
    /// multi-plane operation ([`Nand::program_multi`]). Returns per page its
    /// sequence number or its failure (a failed page's data handed back: the
    /// FTL retires the block and programs it elsewhere); a command the medium
    /// refuses programs nothing and is the error. Every page counts as a
    /// program, the command once in [`Counters::multi_plane`].
    #[allow(clippy::type_complexity)]
    pub fn program_multi(
        &mut self,
        pages: Vec<ftlab_nand::PlanePage>,
        purpose: Purpose,
    ) -> Result<Vec<Result<u64, Box<ProgramFailure>>>, NandError> {
        let n = pages.len() as u64;
        let (out, span) = self.flash.nand.program_multi(pages, self.issue(purpose))?;
        let c = &mut self.flash.counters;
        c.programs.0[purpose as usize] += n;
        c.multi_plane.bump(purpose);
        self.after_program(span, purpose);
        Ok(out)
    }

    /// Reads one page in each of several planes of one die in one
    /// multi-plane operation ([`Nand::read_multi`]): data and OOB per page.
    pub fn read_multi(&mut self, ppas: &[Ppa], purpose: Purpose) -> Result<Vec<(Payload, Oob)>, NandError> {
        let (out, span) = self.flash.nand.read_multi(ppas, self.issue(purpose))?;
        let c = &mut self.flash.counters;
        c.reads.0[purpose as usize] += ppas.len() as u64;
        c.multi_plane.bump(purpose);
        self.after_read(span, purpose);
        Ok(out)
    }

    /// Erases one block in each of several planes of one die in one
    /// multi-plane operation ([`Nand::erase_multi`]), no earlier than any of
    /// their erase barriers ([`Io::supersede`]); per block, whether it erased
    /// (else it has gone bad: retire it).
    pub fn erase_multi(&mut self, blocks: &[BlockId], purpose: Purpose) -> Result<Vec<bool>, NandError> {
        let at = blocks.iter().fold(self.ready, |t, b| t.max(self.flash.erase_barrier[b.0 as usize]));
        let (out, span) = self.flash.nand.erase_multi(blocks, Issue::new(at, purpose == Purpose::Host))?;
        let c = &mut self.flash.counters;
        c.erases.0[purpose as usize] += blocks.len() as u64;
        c.multi_plane.bump(purpose);
        self.finished(span, purpose);
        Ok(out.into_iter().map(|r| r.is_ok()).collect())
    }

    /// Reads a page's OOB only; an erased page gives `None`.
    pub fn read_oob(&mut self, ppa: Ppa, purpose: Purpose) -> Result<Option<Oob>, NandError> {
        let (oob, span) = self.flash.nand.read_oob(ppa, self.issue(purpose))?;
        self.flash.counters.oob_reads.bump(purpose);
        self.after_read(span, purpose);
        Ok(oob)
    }

    /// Programs a page with its OOB (tag 0); returns the sequence number written.
    #[inline]
    pub fn program(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        data: Payload,
        purpose: Purpose,
    ) -> Result<u64, NandError> {
        self.try_program_tagged(ppa, lpn, kind, 0, data, purpose).map_err(|f| f.error)
    }

    /// As [`Io::program`], with the scheme's `tag` in the OOB ([`Oob::tag`]; at
    /// most [`Oob::MAX_TAG`], else [`NandError::TagOutOfRange`] and nothing is
    /// programmed).
    #[inline]
    pub fn program_tagged(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        tag: u8,
        data: Payload,
        purpose: Purpose,
    ) -> Result<u64, NandError> {
        self.try_program_tagged(ppa, lpn, kind, tag, data, purpose).map_err(|f| f.error)
    }

    /// As [`Io::program`], but a program that did not reach the page hands its
    /// data back. A failed program ([`NandError::ProgramFailed`]) is counted and
    /// takes its time like any other.
    #[inline]
    pub fn try_program(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        data: Payload,
        purpose: Purpose,
    ) -> Result<u64, Box<ProgramFailure>> {
        self.try_program_tagged(ppa, lpn, kind, 0, data, purpose)
    }

    /// As [`Io::try_program`], with the scheme's `tag` in the OOB.
    #[inline]
    pub fn try_program_tagged(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        tag: u8,
        data: Payload,
        purpose: Purpose,
    ) -> Result<u64, Box<ProgramFailure>> {
        match self.flash.nand.try_program_tagged(ppa, lpn, kind, tag, data, self.issue(purpose)) {
            Ok((seq, span)) => {
                self.flash.counters.programs.bump(purpose);
                self.after_program(span, purpose);
                Ok(seq)
            }
            Err(f) => {
                if matches!(f.error, NandError::ProgramFailed { .. }) {
                    self.flash.counters.programs.bump(purpose);
                    self.failed_on(self.flash.nand.layout().die_of(ppa), purpose);
                }
                Err(f)
            }
        }
    }

    /// Accounts for an operation on `die` that failed: it ran until the die is
    /// next free (it was the last operation issued there).
    fn failed_on(&mut self, die: DieId, purpose: Purpose) {
        let finish = self.flash.nand.die_free_at(die);
        self.done = self.done.max(finish);
        if purpose == Purpose::Host {
            self.host_done = Some(self.host_done.map_or(finish, |h| h.max(finish)));
            self.host_on(die, finish);
        }
    }

    /// Programs `data` on a page `place` hands out, and when a program fails
    /// there, on the next one: the shared way an FTL retires a block that goes
    /// bad under a write and carries on. `place(io, None)` hands out a page;
    /// after a failed program, `place(io, Some(block))` is called with the block
    /// that went bad: the FTL retires it (never hands out its pages again, lets
    /// garbage collection move its valid pages off, and never erases it, see
    /// [`Io::reclaim`]) and hands out a page of another block. Returns the page
    /// programmed and its sequence number; after [`PROGRAM_ATTEMPTS`] failed
    /// programs, the last failure.
    #[inline]
    pub fn program_placed(
        &mut self,
        lpn: u32,
        kind: PageKind,
        data: Payload,
        purpose: Purpose,
        place: impl FnMut(&mut Self, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<(Ppa, u64), FtlError> {
        self.program_placed_tagged(lpn, kind, 0, data, purpose, place)
    }

    /// As [`Io::program_placed`], with the scheme's `tag` in the OOB
    /// ([`Io::program_tagged`]).
    pub fn program_placed_tagged(
        &mut self,
        lpn: u32,
        kind: PageKind,
        tag: u8,
        data: Payload,
        purpose: Purpose,
        mut place: impl FnMut(&mut Self, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<(Ppa, u64), FtlError> {
        let mut data = data;
        let mut retire = self.flash.unretired.take();
        loop {
            let ppa = place(self, retire)?;
            match self.try_program_tagged(ppa, lpn, kind, tag, data, purpose) {
                Ok(seq) => return Ok((ppa, seq)),
                Err(f) => match *f {
                    ProgramFailure { error: NandError::ProgramFailed { ppa }, data: Some(back) } => {
                        retire = Some(self.flash.nand.layout().block_of(ppa));
                        if !self.retry_after_failure(retire) {
                            return Err(NandError::ProgramFailed { ppa }.into());
                        }
                        data = back;
                    }
                    f => return Err(f.error.into()),
                },
            }
        }
    }

    /// After a failed program in `bad`: whether this command may retry it
    /// ([`PROGRAM_ATTEMPTS`]); if not, `bad` is left for the next placed program
    /// to retire.
    fn retry_after_failure(&mut self, bad: Option<BlockId>) -> bool {
        self.failures += 1;
        if self.failures < PROGRAM_ATTEMPTS {
            return true;
        }
        self.flash.unretired = bad;
        false
    }

    /// As [`Io::copy`], to a page `place` hands out, and when the program fails
    /// there, to the next one (see [`Io::program_placed`]; the source is
    /// untouched by a failed copy). Returns the page copied to and the source's
    /// OOB.
    #[inline]
    pub fn copy_placed(
        &mut self,
        from: Ppa,
        purpose: Purpose,
        mut place: impl FnMut(&mut Self, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<(Ppa, Oob), FtlError> {
        let mut retire = self.flash.unretired.take();
        loop {
            let to = place(self, retire)?;
            match self.copy(from, to, purpose) {
                Ok(oob) => return Ok((to, oob)),
                Err(NandError::ProgramFailed { ppa }) => {
                    retire = Some(self.flash.nand.layout().block_of(ppa));
                    if !self.retry_after_failure(retire) {
                        return Err(NandError::ProgramFailed { ppa }.into());
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Moves the page at `from` to the erased page `to`: a copyback when both are
    /// in one plane (and copyback is on), otherwise a read then a program; either
    /// way the copy's OOB has the source's logical page, kind and tag. Returns
    /// the source's OOB. A packed page's slots travel with a copyback only:
    /// FTLs that pack pages move units with [`Io::read_slot`] and
    /// [`Io::program_packed`].
    #[inline]
    pub fn copy(&mut self, from: Ppa, to: Ppa, purpose: Purpose) -> Result<Oob, NandError> {
        let l = self.flash.nand.layout();
        if self.flash.use_copyback && l.same_plane(l.block_of(from), l.block_of(to)) {
            let (oob, _, span) = match self.flash.nand.copyback(from, to, self.issue(purpose)) {
                Ok(done) => done,
                Err(e) => {
                    if matches!(e, NandError::ProgramFailed { .. }) {
                        self.flash.counters.programs.bump(purpose);
                        self.failed_on(self.flash.nand.layout().die_of(to), purpose);
                    }
                    return Err(e);
                }
            };
            let c = &mut self.flash.counters;
            c.reads.bump(purpose);
            c.programs.bump(purpose);
            c.copybacks.bump(purpose);
            self.after_program(span, purpose);
            self.supersede(from);
            return Ok(oob);
        }
        let (data, oob) = self.read(from, purpose)?;
        self.program_tagged(to, oob.lpn, oob.kind, oob.tag, data, purpose)?;
        self.supersede(from);
        Ok(oob)
    }

    /// Records that the page at `old` is superseded by the program issued last
    /// (its new copy): the block of `old` is not erased before that program
    /// finishes. Every FTL calls it when it remaps a logical page away from a page
    /// that stays on the flash; [`Io::copy`] does it itself.
    #[inline]
    pub fn supersede(&mut self, old: Ppa) {
        let b = self.flash.nand.layout().block_of(old).0 as usize;
        let barrier = &mut self.flash.erase_barrier[b];
        *barrier = (*barrier).max(self.last_program);
    }

    /// When `block` may be erased at the earliest: the newest program that
    /// superseded a page of it ([`Io::supersede`]) finished.
    #[inline]
    pub fn erase_barrier(&self, block: BlockId) -> SimTime {
        self.flash.erase_barrier[block.0 as usize]
    }

    /// Erases a block. A failed erase ([`NandError::EraseFailed`]) is counted and
    /// takes its time like any other.
    #[inline]
    pub fn erase(&mut self, block: BlockId, purpose: Purpose) -> Result<(), NandError> {
        let at = self.ready.max(self.flash.erase_barrier[block.0 as usize]);
        let span = match self.flash.nand.erase(block, Issue::new(at, purpose == Purpose::Host)) {
            Ok(span) => span,
            Err(e) => {
                if matches!(e, NandError::EraseFailed { .. }) {
                    self.flash.counters.erases.bump(purpose);
                    self.failed_on(self.flash.nand.layout().die_of_block(block), purpose);
                }
                return Err(e);
            }
        };
        self.flash.counters.erases.bump(purpose);
        self.finished(span, purpose);
        Ok(())
    }

    /// Erases `block` so that it can be used again: `true` when it may go back to
    /// the free blocks, `false` when it has gone bad (it already was, or this
    /// erase failed): then it is retired, never released, never used again. The
    /// shared way an FTL survives erase failures.
    #[inline]
    pub fn reclaim(&mut self, block: BlockId, purpose: Purpose) -> Result<bool, NandError> {
        if self.flash.nand.is_grown_bad(block) {
            return Ok(false);
        }
        match self.erase(block, purpose) {
            Ok(()) => Ok(true),
            Err(NandError::EraseFailed { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Acknowledges the host: the command completes when every operation issued
    /// so far for the host (purpose [`Purpose::Host`], and what they waited for)
    /// has finished, or now if there was none. Work issued afterwards (e.g. a GC
    /// step) still occupies the flash but is not part of the response time.
    #[inline]
    pub fn ack(&mut self) {
        self.acked = Some(self.host_done.unwrap_or(self.ready));
    }

    /// Whether the reads issued now read the rest of a page a host write
    /// covers in part (a read-modify-write's read), as the device sets around
    /// it: an FTL that charges a flash read for a page never written (the
    /// page map's `unwritten_reads = "flash"`) charges none here, as there is
    /// nothing to keep.
    #[inline]
    pub fn update_read(&self) -> bool {
        self.update_read
    }

    /// Whether page reads take no time ([`Flash::set_untimed_reads`]: the
    /// run's final read-back of every page, whose timing is not reported).
    #[inline]
    pub fn untimed_reads(&self) -> bool {
        self.flash.untimed_reads
    }

    /// Marks the reads issued from now on as a read-modify-write's read, or
    /// not ([`Io::update_read`]).
    #[inline]
    pub fn set_update_read(&mut self, on: bool) {
        self.update_read = on;
    }

    /// Sets how many bytes of its page the host reads and programs issued
    /// from now on move (0, the default: the whole page): the part of a page
    /// a request covers, or the part a read-modify-write reads. Only a chip
    /// with sector transfers times them by it
    /// ([`ftlab_nand::Commands::sector_transfers`]).
    #[inline]
    pub fn set_host_bytes(&mut self, bytes: u32) {
        self.host_bytes = bytes;
    }

    /// Marks the host reads issued from now on as held by a dispatcher until
    /// their die could take them, free for them since `since`
    /// ([`ftlab_nand::Issue::since`]); `None`, the default: not held.
    #[inline]
    pub fn set_held_since(&mut self, since: Option<SimTime>) {
        self.held_since = since;
    }

    /// The bytes of [`Io::set_host_bytes`].
    #[inline]
    pub fn host_bytes(&self) -> u32 {
        self.host_bytes
    }

    /// Marks the writes issued from now on (one command's pages, the last
    /// without [`crate::Hint::more`]) as paired by a scheduler for distinct
    /// planes of one die, or not: an FTL that programs a command's pages on
    /// distinct planes together does so whatever their page offsets when
    /// the chip allows it ([`ftlab_nand::Commands::multi_plane_any_page`]).
    #[inline]
    pub fn set_paired(&mut self, on: bool) {
        self.paired = on;
    }

    /// Marks the host reads issued from now on as further planes of the last
    /// host read (a dispatcher found them queued for its die, in other planes
    /// at its page offset, as MQSim's transaction scheduler groups them): each
    /// joins that read as one multi-plane read where the medium takes it as
    /// one ([`ftlab_nand::Nand::read_join`]: same die, another plane, the
    /// same page offset, nothing else on the die since), and is an ordinary
    /// read otherwise. Off by default.
    #[inline]
    pub fn set_joins_read(&mut self, on: bool) {
        self.joins = on;
    }

    /// Whether the writes now were paired by a scheduler ([`Io::set_paired`]).
    #[inline]
    pub fn paired(&self) -> bool {
        self.paired
    }

    /// Acknowledges the host at `t` exactly, whatever the command's flash work
    /// so far: a cache that takes the data into DRAM answers when the DRAM
    /// copy ends, while the flash write it issued for the data runs on
    /// ([`crate::data_cache`]).
    #[inline]
    pub fn ack_at(&mut self, t: SimTime) {
        self.acked = Some(t);
    }

    /// Makes the command complete no earlier than `t`, as if a host operation
    /// finished then: e.g. a flush waits for earlier writes still in flight.
    #[inline]
    pub fn complete_after(&mut self, t: SimTime) {
        self.host_done = Some(self.host_done.map_or(t, |h| h.max(t)));
        if let Some(a) = &mut self.acked {
            *a = (*a).max(t);
        }
    }

    /// When the host sees the command complete: the acknowledgement if there was
    /// one; otherwise the finish of the command's host operations; otherwise
    /// (a command served without touching the flash for the host, such as a read
    /// of an unwritten page or a write absorbed by a cache) the finish of every
    /// operation it issued.
    #[inline]
    pub fn completion(&self) -> SimTime {
        self.acked.or(self.host_done).unwrap_or(self.done)
    }

    /// The finish of the last operation issued so far.
    #[inline]
    pub fn last_finish(&self) -> SimTime {
        self.done
    }

    /// Numbers this command's host pages `token` (non-zero) for an FTL that
    /// queues the programs of host writes and books their time later, as
    /// their dies fall free ([`crate::DieQueues`]): it reports each such
    /// program's finish under this number.
    #[inline]
    pub fn set_token(&mut self, token: u64) {
        self.token = token;
    }

    /// The number of this command's host pages ([`Io::set_token`]; 0: none).
    #[inline]
    pub fn token(&self) -> u64 {
        self.token
    }

    /// An FTL queued a host program of this command instead of timing it:
    /// the command completes when that program's time is booked.
    #[inline]
    pub fn queue_host(&mut self) {
        self.queued += 1;
    }

    /// Host programs of this command an FTL queued ([`Io::queue_host`]).
    #[inline]
    pub fn queued_host(&self) -> u32 {
        self.queued
    }

    /// Runs `chain` with every flash operation in it moving its data at once
    /// and taking no time on any die or channel ([`Nand::set_untimed`]): the
    /// FTL books their time later ([`Io::reserve_read`],
    /// [`Io::reserve_program`], [`Io::reserve_erase`]). Operations are counted
    /// as usual.
    pub fn untimed<R>(&mut self, chain: impl FnOnce(&mut Self) -> R) -> R {
        let was = self.flash.nand.untimed();
        self.flash.nand.set_untimed(true);
        let r = chain(self);
        self.flash.nand.set_untimed(was);
        r
    }

    /// Books on `die`, from now, the time of a read of `pages` pages of
    /// distinct planes (one multi-plane read when more than one) whose data
    /// moved already, for `purpose`.
    pub fn reserve_read(&mut self, die: DieId, pages: u32, purpose: Purpose) -> Result<Span, NandError> {
        let span = self.flash.nand.reserve_read(die, self.issue(purpose), pages)?;
        if pages > 1 {
            self.flash.counters.multi_plane.bump(purpose);
        }
        self.finished(span, purpose);
        Ok(span)
    }

    /// Books on `die`, from now, the time of a program of one page a plane,
    /// `bytes` each moves (0: the whole page), whose data is on the medium
    /// already, for `purpose`.
    pub fn reserve_program(&mut self, die: DieId, bytes: &[u32], purpose: Purpose) -> Result<Span, NandError> {
        let span = self.flash.nand.reserve_program(die, self.issue(purpose), bytes)?;
        if bytes.len() > 1 {
            self.flash.counters.multi_plane.bump(purpose);
        }
        self.after_program(span, purpose);
        Ok(span)
    }

    /// Books on `die`, from now, the time of a copyback of `pages` pages of
    /// distinct planes (one multi-plane copyback when more than one) whose
    /// data moved already, for `purpose`.
    pub fn reserve_copyback(&mut self, die: DieId, pages: u32, purpose: Purpose) -> Result<Span, NandError> {
        let span = self.flash.nand.reserve_copyback(die, self.issue(purpose))?;
        if pages > 1 {
            self.flash.counters.multi_plane.bump(purpose);
        }
        self.after_program(span, purpose);
        Ok(span)
    }

    /// Books on `die`, from now, the time of an erase of `blocks` blocks of
    /// distinct planes (one multi-plane erase when more than one) already
    /// carried out, for `purpose`.
    pub fn reserve_erase(&mut self, die: DieId, blocks: u32, purpose: Purpose) -> Result<Span, NandError> {
        let span = self.flash.nand.reserve_erase(die, self.issue(purpose))?;
        if blocks > 1 {
            self.flash.counters.multi_plane.bump(purpose);
        }
        self.finished(span, purpose);
        Ok(span)
    }

    /// Makes the operations issued after this call start no earlier than `t`, as
    /// if they waited for a read finishing then. An FTL uses it as a fence: e.g.
    /// host writes that spend the space an earlier command's garbage-collection
    /// step reclaimed wait for that step (its [`Io::last_finish`]), so a power cut
    /// never keeps the writes but loses the step.
    #[inline]
    pub fn start_after(&mut self, t: SimTime) {
        self.ready = self.ready.max(t);
    }
}

#[path = "flash_packed.rs"]
mod packed;

#[cfg(test)]
mod fault_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn flash() -> Flash {
        let g = Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 1,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 64,
        };
        crate::testing::flash(g, 1)
    }

    #[test]
    fn a_failed_program_is_retried_on_another_block_after_the_bad_one_is_retired() {
        let mut f = flash();
        let g = *f.nand().geometry();
        f.fail_program_in(1);
        let mut io = f.io(SimTime::ZERO);
        let mut retired = Vec::new();
        let mut next = 0;
        let (ppa, _) = io
            .program_placed(7, PageKind::Data, Payload::Token(70), Purpose::Host, |_, bad| {
                retired.extend(bad);
                next += 1;
                Ok(g.ppa(BlockId(next), 0))
            })
            .unwrap();
        assert_eq!((ppa, retired), (g.ppa(BlockId(2), 0), vec![BlockId(1)]));
        // The failed program took its time before the retry, and both count.
        assert!(io.completion().0 >= 2 * 200_000);
        assert!(io.is_grown_bad(BlockId(1)));
        // The bad block is never erased for reuse.
        assert!(!io.reclaim(BlockId(1), Purpose::Gc).unwrap());
        assert_eq!(f.counters().programs.get(Purpose::Host), 2);
        assert_eq!(f.counters().erases.total(), 0);
        assert_eq!(f.nand().peek_oob(g.ppa(BlockId(2), 0)).map(|o| o.lpn), Some(7));
    }

    #[test]
    fn a_failed_copy_is_retried_and_a_failed_erase_retires_the_block() {
        let mut f = flash();
        let g = *f.nand().geometry();
        let src = g.ppa(BlockId(0), 0);
        f.io(SimTime::ZERO).program(src, 3, PageKind::Data, Payload::Token(30), Purpose::Host).unwrap();
        f.fail_program_in(1);
        let mut io = f.io(SimTime::ZERO);
        let mut next = 0;
        let (dst, oob) = io
            .copy_placed(src, Purpose::Gc, |_, _| {
                next += 1;
                Ok(g.ppa(BlockId(next), 0))
            })
            .unwrap();
        assert_eq!((dst, oob.lpn), (g.ppa(BlockId(2), 0), 3));
        assert_eq!(io.read(dst, Purpose::Gc).unwrap().0, Payload::Token(30));
        f.fail_erase_in(1);
        let mut io = f.io(SimTime::ZERO);
        assert!(!io.reclaim(BlockId(0), Purpose::Gc).unwrap());
        assert!(io.is_grown_bad(BlockId(0)));
        assert!(io.reclaim(BlockId(3), Purpose::Gc).unwrap());
        assert_eq!(f.counters().erases.get(Purpose::Gc), 2);
    }

    #[test]
    fn a_copy_keeps_the_tag_with_or_without_copyback() {
        for copyback in [false, true] {
            let mut f = flash();
            f.set_copyback(copyback);
            let g = *f.nand().geometry();
            let (src, dst) = (g.ppa(BlockId(0), 0), g.ppa(BlockId(1), 0));
            let mut io = f.io(SimTime::ZERO);
            io.program_tagged(src, u32::MAX - 1, PageKind::Data, 0b10_0101, Payload::Token(5), Purpose::Host).unwrap();
            io.copy(src, dst, Purpose::Gc).unwrap();
            let oob = f.nand().peek_oob(dst).unwrap();
            assert_eq!((oob.lpn, oob.kind, oob.tag), (u32::MAX - 1, PageKind::Data, 0b10_0101), "copyback {copyback}");
            assert_eq!(f.counters().copybacks.total(), u64::from(copyback));
        }
    }

    #[test]
    fn retries_stop_after_program_attempts() {
        let mut f = flash();
        let g = *f.nand().geometry();
        let mut io = f.io(SimTime::ZERO);
        let mut calls = 0;
        let err = io
            .program_placed(1, PageKind::Data, Payload::Token(1), Purpose::Host, |io, _| {
                calls += 1;
                // Every program fails.
                io.flash.nand.fail_program_in(1);
                Ok(g.ppa(BlockId(calls), 0))
            })
            .unwrap_err();
        assert!(matches!(err, FtlError::Nand(NandError::ProgramFailed { .. })), "{err}");
        assert_eq!(calls, PROGRAM_ATTEMPTS);
        // The block of the last failure is retired by the next placed program.
        let mut retired = None;
        io.program_placed(2, PageKind::Data, Payload::Token(2), Purpose::Host, |_, bad| {
            retired = bad;
            Ok(g.ppa(BlockId(15), 0))
        })
        .unwrap();
        assert_eq!(retired, Some(BlockId(PROGRAM_ATTEMPTS)));
    }
}
