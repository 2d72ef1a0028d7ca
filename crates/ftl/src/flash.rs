//! The flash as an FTL sees it: the medium plus the framework's counters, and the
//! per-command [`Io`] handle that is an FTL's only road to it.

use serde::Serialize;

use ftlab_nand::{BlockId, DieId, Geometry, Nand, NandError, Oob, PageKind, Payload, Ppa, SimTime};

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
    /// Latest finish of every program issued: an erase never starts before it, so
    /// a victim is only erased once the copies of its valid pages are durable.
    program_horizon: SimTime,
    use_copyback: bool,
}

impl Flash {
    /// Wraps a medium.
    pub fn new(nand: Nand) -> Self {
        Flash { nand, counters: Counters::default(), program_horizon: SimTime::ZERO, use_copyback: true }
    }
    /// Whether GC moves inside one plane use copyback (default true).
    pub fn set_copyback(&mut self, on: bool) {
        self.use_copyback = on;
    }
    /// A handle for one command issued at `now`.
    #[inline]
    pub fn io(&mut self, now: SimTime) -> Io<'_> {
        self.nand.retire(now);
        Io { flash: self, now, ready: now, done: now, acked: None }
    }
    /// The medium.
    pub fn nand(&self) -> &Nand {
        &self.nand
    }
    /// Counters so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// Zeroes the counters (e.g. at the end of preconditioning).
    pub fn reset_counters(&mut self) {
        self.counters = Counters::default();
    }
    /// Cuts power at `t`: see [`Nand::power_cut`]. Whatever an FTL kept in RAM is
    /// gone with it; rebuild the FTL with its builder's `recover`.
    pub fn power_cut(&mut self, t: SimTime) {
        self.nand.power_cut(t);
        self.program_horizon = self.program_horizon.min(t);
    }
}

/// One command's road to the flash. It carries `now`, tags every operation with
/// its purpose, and records when the host is acknowledged.
///
/// Operations of one command are issued at `now`; a read's data is needed by what
/// follows, so every operation issued after a read starts no earlier than that
/// read's finish. Programs and erases do not hold later operations back. An erase
/// starts no earlier than the finish of every program issued before it.
#[derive(Debug)]
pub struct Io<'a> {
    flash: &'a mut Flash,
    now: SimTime,
    ready: SimTime,
    done: SimTime,
    acked: Option<SimTime>,
}

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
    /// Whether `block` is a bad block (read from the factory marks; free).
    #[inline]
    pub fn is_bad(&self, block: BlockId) -> bool {
        self.flash.nand.is_bad(block)
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
    /// RBER of `block` by the wear model.
    pub fn rber(&self, block: BlockId) -> f64 {
        self.flash.nand.rber(block)
    }

    #[inline]
    fn after_read(&mut self, finish: SimTime) {
        self.ready = self.ready.max(finish);
        self.done = self.done.max(finish);
    }
    #[inline]
    fn after_program(&mut self, finish: SimTime) {
        self.done = self.done.max(finish);
        self.flash.program_horizon = self.flash.program_horizon.max(finish);
    }

    /// Reads a page and its OOB.
    #[inline]
    pub fn read(&mut self, ppa: Ppa, purpose: Purpose) -> Result<(Payload, Oob), NandError> {
        let (data, oob, span) = self.flash.nand.read(ppa, self.ready)?;
        self.flash.counters.reads.bump(purpose);
        self.after_read(span.finish);
        Ok((data, oob))
    }

    /// Reads a page's OOB only; an erased page gives `None`.
    pub fn read_oob(&mut self, ppa: Ppa, purpose: Purpose) -> Result<Option<Oob>, NandError> {
        let (oob, span) = self.flash.nand.read_oob(ppa, self.ready)?;
        self.flash.counters.oob_reads.bump(purpose);
        self.after_read(span.finish);
        Ok(oob)
    }

    /// Programs a page with its OOB; returns the sequence number written.
    #[inline]
    pub fn program(
        &mut self,
        ppa: Ppa,
        lpn: u32,
        kind: PageKind,
        data: Payload,
        purpose: Purpose,
    ) -> Result<u64, NandError> {
        let (seq, span) = self.flash.nand.program(ppa, lpn, kind, data, self.ready)?;
        self.flash.counters.programs.bump(purpose);
        self.after_program(span.finish);
        Ok(seq)
    }

    /// Moves the page at `from` to the erased page `to`: a copyback when both are
    /// in one plane (and copyback is on), otherwise a read then a program. Returns
    /// the source's OOB.
    #[inline]
    pub fn copy(&mut self, from: Ppa, to: Ppa, purpose: Purpose) -> Result<Oob, NandError> {
        let l = self.flash.nand.layout();
        if self.flash.use_copyback && l.same_plane(l.block_of(from), l.block_of(to)) {
            let (oob, _, span) = self.flash.nand.copyback(from, to, self.ready)?;
            let c = &mut self.flash.counters;
            c.reads.bump(purpose);
            c.programs.bump(purpose);
            c.copybacks.bump(purpose);
            self.after_program(span.finish);
            // A later move of the same data must not overtake this one.
            self.ready = self.ready.max(span.finish);
            return Ok(oob);
        }
        let (data, oob) = self.read(from, purpose)?;
        self.program(to, oob.lpn, oob.kind, data, purpose)?;
        Ok(oob)
    }

    /// Erases a block.
    #[inline]
    pub fn erase(&mut self, block: BlockId, purpose: Purpose) -> Result<(), NandError> {
        let at = self.ready.max(self.flash.program_horizon);
        let span = self.flash.nand.erase(block, at)?;
        self.flash.counters.erases.bump(purpose);
        self.done = self.done.max(span.finish);
        Ok(())
    }

    /// Acknowledges the host now: the command completes when every operation
    /// issued so far has finished. Work issued afterwards (e.g. a GC step) still
    /// occupies the flash but is not part of this command's response time.
    #[inline]
    pub fn ack(&mut self) {
        self.acked = Some(self.done);
    }

    /// When the host sees the command complete: the acknowledgement if there was
    /// one, otherwise the finish of the command's last operation.
    #[inline]
    pub fn completion(&self) -> SimTime {
        self.acked.unwrap_or(self.done)
    }

    /// The finish of the last operation issued so far.
    #[inline]
    pub fn last_finish(&self) -> SimTime {
        self.done
    }
}
