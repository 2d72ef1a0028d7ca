//! The [`Io`] operations on packed pages ([`ftlab_nand::medium::packed`]): a
//! page programmed with several logical units, one OOB record per slot, and
//! the reads of its slots. Counted by purpose like every operation: one
//! program or read per flash page.

use ftlab_nand::{BlockId, NandError, Oob, PageKind, Payload, Ppa, SimTime, Span};

use super::{Io, Purpose};
use crate::read_buffer::ReadBuffer;
use crate::FtlError;

impl Io<'_> {
    /// How many slots of `unit_bytes` a flash page holds ([`ftlab_nand::Nand::slots_per_page`]).
    pub fn slots_per_page(&self, unit_bytes: u32) -> Result<u32, NandError> {
        self.flash.nand.slots_per_page(unit_bytes)
    }

    /// Programs a packed page: `slots` (logical unit, payload of `unit_bytes`)
    /// in one page program, each slot with its own OOB record
    /// ([`ftlab_nand::medium::packed`]). Counted as one program of `purpose`
    /// (WAF and copies count flash pages, as for every FTL). Returns the
    /// sequence number the slots share; a failed program
    /// ([`NandError::ProgramFailed`]) is counted and takes its time.
    pub fn program_packed(
        &mut self,
        ppa: Ppa,
        kind: PageKind,
        slots: &[(u32, Payload)],
        unit_bytes: u32,
        purpose: Purpose,
    ) -> Result<u64, NandError> {
        match self.flash.nand.program_packed(ppa, kind, slots, unit_bytes, self.issue(purpose)) {
            Ok((seq, span)) => {
                self.flash.counters.programs.bump(purpose);
                self.after_program(span, purpose);
                Ok(seq)
            }
            Err(e) => {
                if matches!(e, NandError::ProgramFailed { .. }) {
                    self.flash.counters.programs.bump(purpose);
                    self.failed_on(self.flash.nand.layout().die_of(ppa), purpose);
                }
                Err(e)
            }
        }
    }

    /// As [`Io::program_packed`], on a page `place` hands out, retried on
    /// another block after a program failure as [`Io::program_placed`] does.
    pub fn program_packed_placed(
        &mut self,
        kind: PageKind,
        slots: &[(u32, Payload)],
        unit_bytes: u32,
        purpose: Purpose,
        mut place: impl FnMut(&mut Self, Option<BlockId>) -> Result<Ppa, FtlError>,
    ) -> Result<(Ppa, u64), FtlError> {
        let mut retire = self.flash.unretired.take();
        loop {
            let ppa = place(self, retire)?;
            match self.program_packed(ppa, kind, slots, unit_bytes, purpose) {
                Ok(seq) => return Ok((ppa, seq)),
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

    /// Reads slot `slot` of a page: its payload and its record (the slot's
    /// logical unit in [`Oob::lpn`]). Counted as a page read of `purpose` and
    /// costs one (the whole page crosses the channel). A page of one record has
    /// one slot.
    pub fn read_slot(&mut self, ppa: Ppa, slot: u32, purpose: Purpose) -> Result<(Payload, Oob), NandError> {
        if purpose == Purpose::Host && self.flash.read_buffer.is_some() {
            if let Some(mut buffer) = self.flash.read_buffer.take() {
                let r = self.read_slot_buffered(&mut buffer, ppa, slot);
                self.flash.read_buffer = Some(buffer);
                return r;
            }
        }
        let (data, oob, span) = self.flash.nand.read_slot(ppa, slot, self.issue(purpose))?;
        self.flash.counters.reads.bump(purpose);
        self.after_read(span, purpose);
        Ok((data, oob))
    }

    /// A host read of slot `slot` through the read buffer
    /// ([`crate::read_buffer`]): from DRAM if the page is buffered; else the
    /// whole page is read into the buffer and the command may go on once the
    /// slots up to `slot` have crossed the channel (the rest of the page keeps
    /// the die and channel busy). Either way the slot's bytes are then copied
    /// out of the buffer.
    #[cold]
    fn read_slot_buffered(
        &mut self,
        buffer: &mut ReadBuffer,
        ppa: Ppa,
        slot: u32,
    ) -> Result<(Payload, Oob), NandError> {
        let erases = self.flash.nand.erase_count(self.flash.nand.layout().block_of(ppa));
        let page = u64::from(self.flash.nand.geometry().page_size);
        let (data, oob, count, from) = match buffer.lookup(ppa, erases, slot) {
            Some((data, oob, count)) => (data, oob, count, self.ready),
            None => {
                let (slots, span) = self.flash.nand.read_slots(ppa, self.issue(Purpose::Host))?;
                self.flash.counters.reads.bump(Purpose::Host);
                let count = slots.len() as u32;
                let Some((data, oob)) = slots.get(slot as usize).cloned() else {
                    return Err(NandError::NoSuchSlot { ppa, slot, slots: count });
                };
                // The slots after `slot` are still on the channel when it is in.
                let rate = u64::from(self.flash.nand.timing().channel_mb_per_s).max(1);
                let after = page / u64::from(count) * u64::from(count - 1 - slot);
                let early = SimTime(span.finish.0.saturating_sub(after * 1000 / rate).max(span.start.0));
                self.after_read(Span { finish: early, ..span }, Purpose::Host);
                // The die stays occupied until the last slot is out.
                self.flash.counters.die_ns.add(Purpose::Host, span.finish.0 - early.0);
                self.done = self.done.max(span.finish);
                buffer.insert(ppa, erases, slots);
                (data, oob, count, early)
            }
        };
        self.copied_out(buffer, from, page / u64::from(count));
        Ok((data, oob))
    }

    /// Reads every slot of a page (payload and record, in slot order) in one
    /// page read of `purpose`: what garbage collection moving a packed page's
    /// valid units issues. A page of one record has one slot.
    pub fn read_slots(&mut self, ppa: Ppa, purpose: Purpose) -> Result<Vec<(Payload, Oob)>, NandError> {
        let (slots, span) = self.flash.nand.read_slots(ppa, self.issue(purpose))?;
        self.flash.counters.reads.bump(purpose);
        self.after_read(span, purpose);
        Ok(slots)
    }

    /// Reads a page's OOB with every slot's record (one for a page of one
    /// record); an erased page gives `None`. Counted as an OOB read.
    pub fn read_slot_oobs(&mut self, ppa: Ppa, purpose: Purpose) -> Result<Option<Vec<Oob>>, NandError> {
        let (oobs, span) = self.flash.nand.read_slot_oobs(ppa, self.issue(purpose))?;
        self.flash.counters.oob_reads.bump(purpose);
        self.after_read(span, purpose);
        Ok(oobs)
    }
}
