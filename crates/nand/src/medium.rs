//! The strict medium: erase before program, in-order programming inside a block,
//! bad blocks refused, OOB metadata written with every page, erase counts, power
//! cuts that tear in-flight operations.
//!
//! Memory per physical page (token store): 2 bytes of contents (a data page's
//! version, [`crate::store::TokenStore`]), 4 bytes of OOB logical page, 4 bytes
//! of OOB sequence number relative to the block's base with the kind (bits
//! 0-1) and the scheme's tag (bits 2-7, [`Oob::tag`]) — 10 bytes
//! ([`crate::oob`]). Page state is
//! not stored per page: pages below a block's write pointer are programmed, the
//! rest erased, and the few pages torn by a power cut sit in a small set.
//!
//! Every operation a power cut may still touch is kept in an in-flight log. A
//! program's record is just its page: undoing it moves the block's write pointer
//! back, and the page's old contents and OOB are never readable again — unless
//! the erase before it is undone as well. So a program saves what the page held
//! only while an erase of its block is itself in the log.

use std::collections::{HashSet, VecDeque};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::commands::Commands;
use crate::error::NandError;
use crate::faults::{Faults, Injector, Op};
use crate::geometry::{BlockId, DieId, Geometry, Layout, Ppa};
pub use crate::oob::{Oob, PageKind};
use crate::oob::{OobTable, RawRecord};
use crate::store::{AnyStore, PageStore, Payload, StoreKind};
use crate::time::SimTime;
use crate::timeline::{Issue, Span, Timelines};
use crate::timing::Timing;
use crate::wear::{WearConfig, WearModel};

/// Configuration of a medium.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    pub geometry: Geometry,
    pub timing: Timing,
    /// Fraction of blocks that are factory-bad, drawn from the seed. Default 0.
    #[serde(default)]
    pub bad_block_rate: f64,
    #[serde(default)]
    pub wear: WearConfig,
    #[serde(default)]
    pub store: StoreKind,
    /// Seed of the medium's own draws (bad blocks, wear parameters, faults).
    #[serde(default)]
    pub seed: u64,
    /// Program and erase failures to inject ([`Faults`]). Default: none; left out
    /// of the serialized config when none.
    #[serde(default, skip_serializing_if = "Faults::is_none")]
    pub faults: Faults,
    /// The chip's advanced commands ([`crate::commands`]). Default: none; left
    /// out of the serialized config when none.
    #[serde(default, skip_serializing_if = "Commands::is_none")]
    pub commands: Commands,
}

/// Whether a block can be used, and why not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Health {
    #[default]
    Good,
    /// Marked bad at the factory: never readable, never used.
    FactoryBad,
    /// A program failed on it: the page at the write pointer is unreadable, the
    /// pages below it still read, nothing more is programmed or erased.
    ProgramFailed,
    /// An erase failed on it: nothing on it reads, nothing is programmed or erased.
    EraseFailed,
}

impl Health {
    #[inline]
    fn grown_bad(self) -> bool {
        matches!(self, Health::ProgramFailed | Health::EraseFailed)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct BlockState {
    /// Next page to program; pages below it are programmed.
    write_ptr: u32,
    erase_count: u32,
    health: Health,
    /// An erase was cut by a power loss: every page is unreadable until re-erased.
    torn_erase: bool,
    /// Some page of the block is in the torn set.
    has_torn_pages: bool,
    /// Erases of the block in the in-flight log (a power cut may still undo them).
    erases_in_flight: u32,
    /// Sequence number of the block's first program since its erase: its
    /// pages' OOB records hold theirs relative to it ([`crate::oob`]).
    seq_base: u64,
}

/// An operation whose effect a power cut may still tear or undo.
#[derive(Debug)]
struct InFlight {
    span: Span,
    op: Undo,
}

#[derive(Debug)]
enum Undo {
    /// A program of `ppa` into a block with no erase in flight: undone, the page
    /// is erased again and what it held before can never be read.
    Program { ppa: Ppa },
    /// A program into a block whose erase is in flight; restoring puts back what
    /// the slot held before, readable again if that erase is undone too.
    ProgramOver(Box<SavedPage>),
    /// An erase (failed or not); restoring puts back the block's state before
    /// the erase.
    Erase(Box<SavedBlock>),
    /// A program that failed, leaving `block` grown-bad; undone, the block is
    /// good again.
    FailedProgram { block: BlockId },
}

#[derive(Debug)]
struct SavedPage {
    ppa: Ppa,
    old: Payload,
    /// The page's OOB record, relative to the base of the erase undone with it.
    old_oob: RawRecord,
    /// The page's packed slots entry before the program ([`packed`]).
    old_slots: Option<Box<packed::Slots>>,
}

#[derive(Debug)]
struct SavedBlock {
    block: BlockId,
    old: BlockState,
    torn_pages: Vec<u32>,
}

/// The flash medium.
#[derive(Debug)]
pub struct Nand {
    geometry: Geometry,
    layout: Layout,
    timing: Timing,
    store: AnyStore,
    oob: OobTable,
    blocks: Vec<BlockState>,
    torn: HashSet<u32>,
    timelines: Timelines,
    next_seq: u64,
    in_flight: VecDeque<InFlight>,
    wear: WearModel,
    faults: Injector,
    /// Slot records and token payloads of packed pages ([`packed`]).
    slots: packed::SlotTable,
    /// Host reads that suspended a program or an erase ([`crate::commands`]).
    suspensions: u64,
    /// Whether the power may be cut ([`Nand::set_power_cuts`]): then every
    /// operation a cut could still tear or undo is kept in `in_flight`.
    power_cuts: bool,
}

/// RAM of the medium model by part ([`Nand::memory`]), in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MediumMemory {
    /// OOB records: each page's logical page (4 bytes) and sequence number,
    /// kind and tag (4 bytes, [`crate::oob`]), and the slot records of packed
    /// pages.
    pub oob: u64,
    /// Page contents ([`crate::PageStore::ram_bytes`]): 2 bytes a page for
    /// tokens.
    pub store: u64,
    /// Per-block state (write pointer, erase count, health), the wear model's
    /// per-block parameters, the torn-page set, the in-flight log and the
    /// die and channel timelines.
    pub blocks: u64,
}

/// A program the medium did not carry out ([`Nand::try_program`]).
#[derive(Debug)]
pub struct ProgramFailure {
    /// Why.
    pub error: NandError,
    /// The data, handed back when it did not reach the page.
    pub data: Option<Payload>,
}

/// A consistency error in a `NandConfig`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NandConfigError {
    #[error(transparent)]
    Geometry(#[from] crate::error::GeometryError),
    #[error(transparent)]
    Timing(#[from] crate::error::TimingError),
    #[error("{0}")]
    Invalid(String),
}

impl Nand {
    /// A freshly formatted medium: every block erased, factory-bad blocks drawn.
    pub fn new(config: &NandConfig) -> Result<Self, NandConfigError> {
        let g = config.geometry;
        g.validate()?;
        if !(0.0..0.5).contains(&config.bad_block_rate) {
            return Err(NandConfigError::Invalid(format!(
                "bad_block_rate must be in [0, 0.5), got {}",
                config.bad_block_rate
            )));
        }
        config.wear.validate().map_err(NandConfigError::Invalid)?;
        config.faults.validate().map_err(NandConfigError::Invalid)?;
        config.timing.validate()?;
        config.commands.validate().map_err(NandConfigError::Invalid)?;
        let pages = g.total_pages();
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let mut blocks = vec![BlockState::default(); g.total_blocks() as usize];
        if config.bad_block_rate > 0.0 {
            for b in &mut blocks {
                if rng.gen_bool(config.bad_block_rate) {
                    b.health = Health::FactoryBad;
                }
            }
        }
        let wear = WearModel::new(&config.wear, g.total_blocks(), &mut rng);
        let mut timelines = Timelines::new(&g, &config.timing);
        timelines.set_commands(config.commands);
        Ok(Nand {
            geometry: g,
            layout: Layout::new(&g),
            timing: config.timing,
            store: AnyStore::new(config.store, pages, g.page_size),
            oob: OobTable::new(pages),
            blocks,
            torn: HashSet::new(),
            timelines,
            next_seq: 1,
            in_flight: VecDeque::new(),
            wear,
            faults: Injector::new(&config.faults, config.seed),
            slots: packed::SlotTable::new(),
            suspensions: 0,
            power_cuts: true,
        })
    }

    /// Whether the power may be cut on this medium (the default): then each
    /// operation is logged until it finishes, with what an undo needs (the
    /// page a program overwrote while its block's erase could still be
    /// undone, the block an erase wiped). A caller that never cuts the power
    /// (the replay engine) turns it off and saves the log's cost, with the
    /// same results; [`Nand::power_cut`] is then refused.
    pub fn set_power_cuts(&mut self, on: bool) {
        self.power_cuts = on;
        if !on {
            self.in_flight.clear();
            self.blocks.iter_mut().for_each(|b| b.erases_in_flight = 0);
        }
    }

    /// Whether the power may be cut ([`Nand::set_power_cuts`]).
    pub fn power_cuts(&self) -> bool {
        self.power_cuts
    }

    /// The device shape.
    #[inline]
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    /// The device's address arithmetic, divisors precomputed.
    #[inline]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The chip timing.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }
    /// Whether `block` is a factory-bad block (never usable; the capacity an FTL
    /// exports is counted without them). Blocks that go bad in service are
    /// [`Nand::is_grown_bad`].
    #[inline]
    pub fn is_bad(&self, block: BlockId) -> bool {
        self.blocks[block.0 as usize].health == Health::FactoryBad
    }
    /// Whether `block` went bad in service: a program or an erase on it failed.
    /// It takes no program and no erase; the pages programmed on it before a
    /// program failure still read.
    #[inline]
    pub fn is_grown_bad(&self, block: BlockId) -> bool {
        self.blocks[block.0 as usize].health.grown_bad()
    }
    /// Arms a countdown: the `n`th program (or copyback) from now fails, 1 being
    /// the next; 0 disarms it. Replaces the countdown of [`Faults::fail_program`].
    pub fn fail_program_in(&mut self, n: u64) {
        self.faults.arm(Op::Program, n);
    }
    /// Arms a countdown: the `n`th erase from now fails, 1 being the next; 0
    /// disarms it. Replaces the countdown of [`Faults::fail_erase`].
    pub fn fail_erase_in(&mut self, n: u64) {
        self.faults.arm(Op::Erase, n);
    }
    /// Erase count of `block`.
    #[inline]
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.blocks[block.0 as usize].erase_count
    }
    /// Number of programmed pages of `block` (its write pointer).
    #[inline]
    pub fn programmed_pages(&self, block: BlockId) -> u32 {
        self.blocks[block.0 as usize].write_ptr
    }
    /// RBER of `block` by the wear model (Eq. 27 of 000).
    pub fn rber(&self, block: BlockId) -> f64 {
        self.wear.rber(block, self.erase_count(block))
    }
    /// The wear model.
    pub fn wear(&self) -> &WearModel {
        &self.wear
    }
    /// When `die` is next free.
    #[inline]
    pub fn die_free_at(&self, die: DieId) -> SimTime {
        self.timelines.die_free_at(die)
    }
    /// When the channel of `die` is next idle at or after `now`
    /// ([`crate::timeline::Timelines::channel_idle_at`]).
    #[inline]
    pub fn channel_idle_at(&self, die: DieId, now: SimTime) -> SimTime {
        self.timelines.channel_idle_at(die, now)
    }
    /// The slot of `die`'s busy-until: its own, or its chip's with serial dies
    /// ([`crate::timeline::Timelines::die_slot`]).
    #[inline]
    pub fn die_slot(&self, die: DieId) -> usize {
        self.timelines.die_slot(die)
    }
    /// When a host read on `die` would start without waiting behind another
    /// read, issued at or after `now` ([`crate::timeline::Timelines::read_free_at`]).
    #[inline]
    pub fn read_free_at(&self, die: DieId, now: SimTime) -> SimTime {
        self.timelines.read_free_at(die, now)
    }
    /// The die free soonest.
    pub fn soonest_free_die(&self) -> DieId {
        self.timelines.soonest_free_die()
    }
    /// The first die from `start` (wrapping) free by `now`, else the die free
    /// soonest.
    #[inline]
    pub fn free_die_from(&self, start: DieId, now: SimTime) -> DieId {
        self.timelines.free_die_from(start, now)
    }
    /// What the page store keeps: tokens or bytes.
    pub fn store_kind(&self) -> StoreKind {
        match self.store {
            AnyStore::Token(_) => StoreKind::Token,
            AnyStore::Bytes(_) => StoreKind::Bytes,
        }
    }

    /// RAM the medium model holds, by part, from the allocated capacity of
    /// each structure ([`MediumMemory`]).
    pub fn memory(&self) -> MediumMemory {
        let per = |len: usize, each: usize| (len * each) as u64;
        MediumMemory {
            oob: self.oob.ram_bytes() + self.slots_ram_bytes(),
            store: self.store.ram_bytes(),
            blocks: per(self.blocks.capacity(), std::mem::size_of::<BlockState>())
                + self.wear.ram_bytes()
                + per(self.torn.capacity(), std::mem::size_of::<u32>())
                + per(self.in_flight.capacity(), std::mem::size_of::<InFlight>())
                + self.timelines.ram_bytes(),
        }
    }

    /// RAM the medium model uses, in bytes (page contents, OOB, block states).
    pub fn ram_bytes(&self) -> u64 {
        let pages = u64::from(self.geometry.total_pages());
        self.store.ram_bytes()
            + self.slots_ram_bytes()
            + pages * 8
            + self.blocks.len() as u64 * std::mem::size_of::<BlockState>() as u64
            + self.geometry.total_blocks() as u64 * 8
    }

    #[inline]
    fn check_ppa(&self, ppa: Ppa) -> Result<BlockId, NandError> {
        if ppa.0 >= self.layout.total_pages() {
            return Err(NandError::OutOfRange(ppa));
        }
        let block = self.layout.block_of(ppa);
        if self.blocks[block.0 as usize].health == Health::FactoryBad {
            return Err(NandError::BadBlock(block));
        }
        Ok(block)
    }

    /// The block of `ppa` if the page can be read. The common case (a written
    /// page of a block with nothing torn) is a few compares inlined into every
    /// read; the rest is [`Nand::check_readable_slow`].
    #[inline(always)]
    fn check_readable(&self, ppa: Ppa) -> Result<BlockId, NandError> {
        let block = self.check_ppa(ppa)?;
        let b = &self.blocks[block.0 as usize];
        if b.torn_erase || b.has_torn_pages || ppa.0 - self.layout.ppa(block, 0).0 >= b.write_ptr {
            return self.check_readable_slow(ppa, block);
        }
        Ok(block)
    }

    #[cold]
    #[inline(never)]
    fn check_readable_slow(&self, ppa: Ppa, block: BlockId) -> Result<BlockId, NandError> {
        let b = &self.blocks[block.0 as usize];
        if b.torn_erase || (b.has_torn_pages && self.torn.contains(&ppa.0)) {
            return Err(NandError::Uncorrectable(ppa));
        }
        let page = ppa.0 - self.layout.ppa(block, 0).0;
        if page >= b.write_ptr {
            if page == b.write_ptr && b.health == Health::ProgramFailed {
                return Err(NandError::Uncorrectable(ppa));
            }
            return Err(NandError::NotProgrammed(ppa));
        }
        Ok(block)
    }

    /// The OOB record of `ppa`, a page of `block`.
    #[inline(always)]
    fn oob_at(&self, ppa: Ppa, block: BlockId) -> Oob {
        self.oob.get(ppa.0, self.blocks[block.0 as usize].seq_base)
    }

    /// The sequence number of `ppa`'s OOB record.
    #[inline]
    pub(crate) fn seq_at(&self, ppa: Ppa) -> u64 {
        self.oob.seq(ppa.0, self.blocks[self.layout.block_of(ppa).0 as usize].seq_base)
    }

    /// Forgets in-flight records of operations finished by `now`: a power cut can
    /// no longer touch them.
    #[inline]
    pub fn retire(&mut self, now: SimTime) {
        self.timelines.retire(now);
        while let Some(f) = self.in_flight.front() {
            if f.span.finish > now {
                break;
            }
            if let Undo::Erase(e) = &f.op {
                self.blocks[e.block.0 as usize].erases_in_flight -= 1;
            }
            self.in_flight.pop_front();
        }
    }

    /// Refuses an operation on `die` that could end past [`SimTime::LATEST`]: one
    /// issued, or queued behind a die busy, past it.
    #[inline]
    fn check_time(&self, die: DieId, at: Issue) -> Result<DieId, NandError> {
        let busy = self.timelines.die_free_at(die);
        let at = at.at;
        if at.max(busy) > SimTime::LATEST {
            return Err(NandError::TimeLimit { at, busy });
        }
        Ok(die)
    }

    /// A performance hint with no effect on the medium: starts loading what
    /// a read or copy of `ppa` will look up (its OOB record, its stored
    /// token, its block's state) into the CPU cache, so that a caller that
    /// knows its next pages ahead (a read-back of every logical page, a
    /// victim's valid pages) overlaps the memory latency of several. An
    /// address out of range is ignored.
    #[inline]
    pub fn prefetch(&self, ppa: Ppa) {
        if ppa.0 < self.geometry.total_pages() {
            self.oob.prefetch(ppa.0);
            self.store.prefetch(ppa.0);
            prefetch_index::prefetch_index(&self.blocks, self.layout.block_of(ppa).0 as usize);
        }
    }

    /// Reads page `ppa` (data and OOB), issued at `at`. Always inlined: the
    /// replay's hot path must not depend on how many callers it has.
    #[inline(always)]
    pub fn read(&mut self, ppa: Ppa, at: impl Into<Issue>) -> Result<(Payload, Oob, Span), NandError> {
        let at: Issue = at.into();
        let block = self.check_readable(ppa)?;
        self.check_time(self.layout.die_of_block(block), at)?;
        let span = self.timelines.read(self.layout.die_of_block(block), at);
        if at.host {
            self.after_read();
        }
        let oob = self.oob_at(ppa, block);
        Ok((self.store.read(ppa.0, oob.lpn), oob, span))
    }

    /// The time of a page read on `die` issued at `at`, with no page read: the
    /// die senses a page and the channel carries a page out, as a device that
    /// answers a read of a page no write reached by reading flash (a page
    /// it maps only when read, as MQSim does) spends. Nothing is read or
    /// changed on the medium; the die and channel timelines advance. `die` is a
    /// die of this device.
    pub fn read_time(&mut self, die: DieId, at: impl Into<Issue>) -> Result<Span, NandError> {
        let at: Issue = at.into();
        let die = self.check_time(die, at)?;
        let span = self.timelines.read(die, at);
        if at.host {
            self.after_read();
        }
        Ok(span)
    }

    /// As [`Nand::read_time`], with a transfer out of `bytes` instead of the
    /// whole page and its OOB (a translation read of a cached mapping table
    /// that fetches one sector of its translation page).
    pub fn read_time_bytes(&mut self, die: DieId, at: impl Into<Issue>, bytes: u32) -> Result<Span, NandError> {
        let at: Issue = at.into();
        let die = self.check_time(die, at)?;
        let span = self.timelines.read_sized(die, at, self.timing.transfer(bytes));
        if at.host {
            self.after_read();
        }
        Ok(span)
    }

    /// Spends a page program's time on `die`, issued at `at`, and programs
    /// nothing: the transfer in and the array time of a page whose content
    /// is not kept (a translation page of a cached mapping table whose map
    /// stays whole in RAM). No page is taken and nothing survives it.
    pub fn program_time(&mut self, die: DieId, at: impl Into<Issue>) -> Result<Span, NandError> {
        let at: Issue = at.into();
        let die = self.check_time(die, at)?;
        Ok(self.timelines.program(die, at))
    }

    /// Reads only the OOB of `ppa`, issued at `at`. An erased page's OOB reads as
    /// `None`.
    pub fn read_oob(&mut self, ppa: Ppa, at: impl Into<Issue>) -> Result<(Option<Oob>, Span), NandError> {
        let at: Issue = at.into();
        let oob = match self.check_readable(ppa) {
            Ok(block) => Some(self.oob_at(ppa, block)),
            Err(NandError::NotProgrammed(_)) => None,
            Err(e) => return Err(e),
        };
        let die = self.check_time(self.layout.die_of(ppa), at)?;
        let span = self.timelines.read_oob(die, at);
        if at.host {
            self.after_read();
        }
        Ok((oob, span))
    }

    #[inline]
    fn check_programmable(&self, ppa: Ppa) -> Result<BlockId, NandError> {
        let block = self.check_ppa(ppa)?;
        let b = &self.blocks[block.0 as usize];
        if b.health.grown_bad() {
            return Err(NandError::GrownBad(block));
        }
        if b.torn_erase {
            return Err(NandError::TornBlock(block));
        }
        let page = ppa.0 - self.layout.ppa(block, 0).0;
        if page < b.write_ptr {
            return Err(NandError::AlreadyProgrammed { ppa });
        }
        if page > b.write_ptr {
            return Err(NandError::OutOfOrder { ppa, expected: b.write_ptr });
        }
        Ok(block)
    }

    #[inline(always)]
    fn commit_program(&mut self, ppa: Ppa, block: BlockId, lpn: u32, kind: PageKind, tag: u8, span: Span) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let packed = Oob::pack(seq, kind, tag);
        let b = &mut self.blocks[block.0 as usize];
        if b.write_ptr == 0 {
            b.seq_base = seq;
        }
        b.write_ptr += 1;
        let base = b.seq_base;
        if !self.power_cuts {
            self.oob.set(ppa.0, base, lpn, packed);
            return seq;
        }
        let op = if b.erases_in_flight == 0 {
            self.oob.set(ppa.0, base, lpn, packed);
            Undo::Program { ppa }
        } else {
            self.program_over(ppa, base, lpn, packed)
        };
        self.in_flight.push_back(InFlight { span, op });
        seq
    }

    /// The undo record of a program over a page whose block's erase is still in
    /// flight: what the page held, which an undone erase brings back. Out of
    /// line: the common program ([`Undo::Program`]) stays small.
    #[cold]
    #[inline(never)]
    fn program_over(&mut self, ppa: Ppa, base: u64, lpn: u32, packed: u64) -> Undo {
        let old_oob = self.oob.raw(ppa.0);
        let old = self.store.read(ppa.0, self.oob.lpn(ppa.0));
        self.oob.set(ppa.0, base, lpn, packed);
        Undo::ProgramOver(Box::new(SavedPage { ppa, old, old_oob, old_slots: self.saved_slots(ppa) }))
    }

    /// Programs `ppa` with `data` and its OOB (tag 0), issued at `at`. Returns the
    /// sequence number written and the operation's span.
    #[inline]
    pub fn program(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        data: Payload,
        at: impl Into<Issue>,
    ) -> Result<(u64, Span), NandError> {
        self.try_program_tagged(ppa, lpn, kind, 0, data, at).map_err(|f| f.error)
    }

    /// As [`Nand::program`], with `tag` ([`Oob::tag`]) in the OOB; a tag above
    /// [`Oob::MAX_TAG`] is refused ([`NandError::TagOutOfRange`]) and the page
    /// stays erased.
    #[inline]
    pub fn program_tagged(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        tag: u8,
        data: Payload,
        at: impl Into<Issue>,
    ) -> Result<(u64, Span), NandError> {
        self.try_program_tagged(ppa, lpn, kind, tag, data, at).map_err(|f| f.error)
    }

    /// As [`Nand::program`], but a program refused or failed before the data
    /// reached the page hands the data back ([`ProgramFailure::data`]), so the
    /// caller can program it elsewhere. An injected failure
    /// ([`NandError::ProgramFailed`]) takes the program's time and leaves the
    /// block grown-bad (see [`crate::faults`]).
    #[inline]
    pub fn try_program(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        data: Payload,
        at: impl Into<Issue>,
    ) -> Result<(u64, Span), Box<ProgramFailure>> {
        self.try_program_tagged(ppa, lpn, kind, 0, data, at)
    }

    /// As [`Nand::try_program`], with `tag` in the OOB (see
    /// [`Nand::program_tagged`]).
    #[inline]
    pub fn try_program_tagged(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        tag: u8,
        data: Payload,
        at: impl Into<Issue>,
    ) -> Result<(u64, Span), Box<ProgramFailure>> {
        let at: Issue = at.into();
        if let Err(error) = Oob::check_tag(tag) {
            return Err(Box::new(ProgramFailure { error, data: Some(data) }));
        }
        let checked = self
            .check_programmable(ppa)
            .and_then(|block| Ok((block, self.check_time(self.layout.die_of_block(block), at)?)));
        let (block, die) = match checked {
            Ok(bd) => bd,
            Err(error) => return Err(Box::new(ProgramFailure { error, data: Some(data) })),
        };
        let span = self.timelines.program(die, at);
        if self.faults.strikes(Op::Program) {
            self.fail_program(block, span);
            return Err(Box::new(ProgramFailure { error: NandError::ProgramFailed { ppa }, data: Some(data) }));
        }
        let seq = self.commit_program(ppa, block, lpn, kind, tag, span);
        if let Err(error) = self.store.write(ppa.0, lpn, data) {
            self.undo_program(ppa);
            return Err(Box::new(ProgramFailure { error, data: None }));
        }
        Ok((seq, span))
    }

    /// Copyback: moves page `from` to the erased page `to` inside one plane without
    /// using the channel, issued at `at`. The OOB (logical page, kind and tag)
    /// travels with the data, with a new sequence number. Returns the source's OOB (the controller sees it in the
    /// page register), the new sequence number and the span.
    #[inline]
    pub fn copyback(&mut self, from: Ppa, to: Ppa, at: impl Into<Issue>) -> Result<(Oob, u64, Span), NandError> {
        let at: Issue = at.into();
        let fb = self.check_readable(from)?;
        let tb = self.check_programmable(to)?;
        if !self.layout.same_plane(fb, tb) {
            return Err(NandError::CopybackAcrossPlanes { from, to });
        }
        let oob = self.oob_at(from, fb);
        let die = self.check_time(self.layout.die_of_block(tb), at)?;
        let span = self.timelines.copyback(die, at);
        if self.faults.strikes(Op::Program) {
            self.fail_program(tb, span);
            return Err(NandError::ProgramFailed { ppa: to });
        }
        let seq = self.commit_program(to, tb, oob.lpn, oob.kind, oob.tag, span);
        self.store.copy(from.0, to.0);
        self.copy_slots(from, to, seq);
        Ok((oob, seq, span))
    }

    /// Erases `block`, issued at `at`.
    #[inline]
    pub fn erase(&mut self, block: BlockId, at: impl Into<Issue>) -> Result<Span, NandError> {
        let at: Issue = at.into();
        self.check_erasable(block)?;
        let die = self.check_time(self.layout.die_of_block(block), at)?;
        let span = self.timelines.erase(die, at);
        self.commit_erase(block, span)?;
        Ok(span)
    }

    /// Whether `block` may be erased.
    #[inline]
    fn check_erasable(&self, block: BlockId) -> Result<(), NandError> {
        if block.0 >= self.geometry.total_blocks() {
            return Err(NandError::BlockOutOfRange(block));
        }
        match self.blocks[block.0 as usize].health {
            Health::Good => Ok(()),
            Health::FactoryBad => Err(NandError::BadBlock(block)),
            Health::ProgramFailed | Health::EraseFailed => Err(NandError::GrownBad(block)),
        }
    }

    /// The effect of an erase of `block` that takes `span` (failed if a
    /// fault strikes).
    #[inline]
    fn commit_erase(&mut self, block: BlockId, span: Span) -> Result<(), NandError> {
        let failed = self.faults.strikes(Op::Erase);
        let b = &mut self.blocks[block.0 as usize];
        let old = *b;
        b.write_ptr = 0;
        b.erase_count += 1;
        b.torn_erase = false;
        b.has_torn_pages = false;
        b.erases_in_flight += u32::from(self.power_cuts);
        let mut torn_pages = Vec::new();
        if old.has_torn_pages {
            let first = self.geometry.ppa(block, 0).0;
            let range = first..first + self.geometry.pages_per_block;
            torn_pages = self.torn.iter().copied().filter(|p| range.contains(p)).collect();
            for p in &torn_pages {
                self.torn.remove(p);
            }
        }
        if self.power_cuts {
            self.in_flight
                .push_back(InFlight { span, op: Undo::Erase(Box::new(SavedBlock { block, old, torn_pages })) });
        }
        if failed {
            // Erased as far as it went: nothing reads; but the block is bad.
            self.blocks[block.0 as usize].health = Health::EraseFailed;
            return Err(NandError::EraseFailed { block });
        }
        Ok(())
    }

    /// A failed program on `block`, with the span it took: the block is
    /// grown-bad, unless a power cut undoes the program.
    fn fail_program(&mut self, block: BlockId, span: Span) {
        self.blocks[block.0 as usize].health = Health::ProgramFailed;
        if self.power_cuts {
            self.in_flight.push_back(InFlight { span, op: Undo::FailedProgram { block } });
        }
    }

    /// Undoes the program of `ppa` just committed, whose data the store
    /// refused: the last operation logged, or, with no log, a plain program
    /// (what it overwrote matters only to a power cut).
    fn undo_program(&mut self, ppa: Ppa) {
        match self.in_flight.pop_back() {
            Some(f) if self.power_cuts => self.undo(f.op),
            _ => self.undo(Undo::Program { ppa }),
        }
    }

    fn undo(&mut self, op: Undo) {
        match op {
            Undo::Program { ppa } => {
                self.blocks[self.layout.block_of(ppa).0 as usize].write_ptr -= 1;
            }
            Undo::FailedProgram { block } => {
                self.blocks[block.0 as usize].health = Health::Good;
            }
            Undo::ProgramOver(saved) => {
                let SavedPage { ppa, old, old_oob, old_slots } = *saved;
                self.restore_slots(ppa, old_slots);
                self.oob.restore(ppa.0, old_oob);
                // The slot held `old` before; it is of the store's own kind.
                let _ = self.store.write(ppa.0, self.oob.lpn(ppa.0), old);
                self.blocks[self.layout.block_of(ppa).0 as usize].write_ptr -= 1;
            }
            Undo::Erase(saved) => {
                let SavedBlock { block, old, torn_pages } = *saved;
                let b = &mut self.blocks[block.0 as usize];
                // `old` counted the erases in flight before this one; some of them
                // may have been retired since.
                let in_flight = b.erases_in_flight - 1;
                // A failed erase undone never happened: the block is good again.
                *b = BlockState { erases_in_flight: in_flight, ..old };
                self.torn.extend(torn_pages);
            }
        }
    }

    fn tear_page(&mut self, ppa: Ppa) {
        self.torn.insert(ppa.0);
        self.blocks[self.layout.block_of(ppa).0 as usize].has_torn_pages = true;
    }

    /// Cuts power at `t`. Operations that had not started by `t` never happened;
    /// operations under way at `t` are torn: a torn page reads as uncorrectable and
    /// its OOB is unreadable; a torn erase leaves its whole block unreadable until
    /// erased again. Every resource is idle from `t` on. `t` must not be earlier
    /// than the last time passed to [`Nand::retire`]. A medium whose power
    /// cuts are off ([`Nand::set_power_cuts`]) kept nothing to undo: the call
    /// is a programming error, and callers that take a cut from outside
    /// (`Device::cut_power`) refuse it first.
    pub fn power_cut(&mut self, t: SimTime) {
        assert!(self.power_cuts, "power cut on a medium whose power cuts are off (Nand::set_power_cuts)");
        while let Some(f) = self.in_flight.pop_back() {
            if f.span.start >= t {
                self.undo(f.op);
            } else if f.span.finish > t {
                match f.op {
                    Undo::Program { ppa } => self.tear_page(ppa),
                    Undo::ProgramOver(saved) => self.tear_page(saved.ppa),
                    Undo::Erase(saved) => {
                        let b = &mut self.blocks[saved.block.0 as usize];
                        b.erases_in_flight -= 1;
                        // A failed erase cut in its course stays failed.
                        if b.health != Health::EraseFailed {
                            b.torn_erase = true;
                            b.write_ptr = self.geometry.pages_per_block;
                        }
                    }
                    // A program failure cut in its course stays one.
                    Undo::FailedProgram { .. } => {}
                }
            } else if let Undo::Erase(saved) = &f.op {
                // Finished before the cut: dropped from the log.
                self.blocks[saved.block.0 as usize].erases_in_flight -= 1;
            }
        }
        self.timelines.reset(t);
    }

    /// Reads page `ppa` (data and OOB) as [`Nand::read`] does, with the same
    /// errors, but takes no time on any die or channel: for a read-back
    /// whose timing is not reported (the replay's integrity check after its
    /// run).
    #[inline]
    pub fn read_untimed(&self, ppa: Ppa) -> Result<(Payload, Oob), NandError> {
        let block = self.check_readable(ppa)?;
        let oob = self.oob_at(ppa, block);
        Ok((self.store.read(ppa.0, oob.lpn), oob))
    }

    /// The OOB of `ppa` without timing or counting, for tests and invariant checks;
    /// `None` if the page is erased, torn or in a bad block.
    pub fn peek_oob(&self, ppa: Ppa) -> Option<Oob> {
        self.check_readable(ppa).ok().map(|block| self.oob_at(ppa, block))
    }

    /// Whether `ppa` was torn by a power cut (directly or by a torn erase).
    pub fn is_torn(&self, ppa: Ppa) -> bool {
        let b = &self.blocks[self.geometry.block_of(ppa).0 as usize];
        b.torn_erase || self.torn.contains(&ppa.0)
    }
}

#[path = "image.rs"]
pub mod image;
#[path = "journal.rs"]
pub mod journal;
#[path = "multi_plane.rs"]
pub mod multi_plane;
#[path = "packed.rs"]
pub mod packed;

#[cfg(test)]
#[path = "medium_undo_tests.rs"]
mod undo_tests;
