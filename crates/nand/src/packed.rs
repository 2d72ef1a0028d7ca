//! Packed pages: one program that fills a page with up to k = page_size /
//! unit_bytes slots, each carrying its own logical unit in its own OOB record
//! and its own payload of `unit_bytes` (the 4 KB mapping units of a 32 KB page
//! of the OpenSSD Jasmine board, 003_9b28d6a0046a8156.txt Sections 2-3.1).
//!
//! **OOB.** Each slot's record takes [`SLOT_RECORD_BYTES`] bytes, as many as a
//! page's own record (a 4-byte logical number and 8 bytes of sequence number,
//! kind and tag): k records must fit in the geometry's `oob_size`, else
//! [`NandError::SlotRecordsDontFit`]. The slots of one program share its
//! sequence number, kind and tag.
//!
//! **Where the slots live.** The page's own OOB holds slot 0's record, so a
//! scan that reads only [`Nand::read_oob`] sees a page of slot 0's unit. The
//! other records, and in a token store the slots' payloads, are kept in a side
//! table keyed by physical page and stamped with the program's sequence
//! number: an entry is the page's only while the page carries that sequence
//! number. So nothing on the single-record paths looks at the table (a program
//! there costs what it did), an undone program or erase needs no cleanup (the
//! page is unreadable, or carries its old sequence number and thus its old
//! entry), and a page programmed again gets a new sequence number that stale
//! entries never match. A byte store keeps a packed page as its slots' bytes
//! one after another (`unit_bytes` each, padding slots zero), so a packed page
//! costs it nothing more than a page.
//!
//! **Cost.** A packed program costs a page program (the whole page crosses the
//! channel). A slot read costs a page read, array time and the transfer of the
//! whole page: the safe default, as the Jasmine controller's reads are of the
//! whole 32 KB virtual page.

use std::collections::HashMap;

use super::Nand;
use crate::error::NandError;
use crate::faults::Op;
use crate::geometry::Ppa;
use crate::oob::{Oob, PageKind};
use crate::store::{AnyStore, PageStore, Payload};
use crate::timeline::{Issue, Span};

/// Bytes of OOB one slot's record takes: a logical number (4) and sequence
/// number, kind and tag (8), as a page's own record.
pub const SLOT_RECORD_BYTES: u32 = 12;

/// The slots of a packed page beside the page's own OOB (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Slots {
    /// The sequence number of the program that wrote them.
    pub(crate) seq: u64,
    /// Bytes per slot.
    pub(crate) unit: u32,
    /// Each slot's logical unit (slot 0's is also the page's OOB).
    pub(crate) lpns: Box<[u32]>,
    /// Token store: each slot's payload; byte store: `None` (the page's bytes).
    pub(crate) payloads: Option<Box<[Payload]>>,
}

/// The side table of packed pages, by physical page.
pub(crate) type SlotTable = HashMap<u32, Slots>;

impl Nand {
    /// How many slots of `unit_bytes` a page holds, if their OOB records fit
    /// ([`SLOT_RECORD_BYTES`] each in the geometry's `oob_size`).
    pub fn slots_per_page(&self, unit_bytes: u32) -> Result<u32, NandError> {
        let page_size = self.geometry.page_size;
        if unit_bytes == 0 || !page_size.is_multiple_of(unit_bytes) {
            return Err(NandError::SlotSize { unit_bytes, page_size });
        }
        let slots = page_size / unit_bytes;
        let oob_size = self.geometry.oob_size;
        if u64::from(slots) * u64::from(SLOT_RECORD_BYTES) > u64::from(oob_size) {
            return Err(NandError::SlotRecordsDontFit { slots, record_bytes: SLOT_RECORD_BYTES, oob_size });
        }
        Ok(slots)
    }

    /// The slots of `page` if it is a packed page (its entry matches its
    /// sequence number).
    #[inline]
    pub(crate) fn slots_at(&self, page: u32) -> Option<&Slots> {
        if self.slots.is_empty() {
            return None;
        }
        let seq = self.seq_at(crate::geometry::Ppa(page));
        self.slots.get(&page).filter(|s| s.seq == seq)
    }

    /// Programs `ppa` with `slots` (logical unit, payload), each `unit_bytes`
    /// long, issued at `at`: one page program. Returns the sequence number
    /// the slots share and the span. The slots' data stays the caller's on any
    /// error. Refused, with the page left erased: a unit that does not divide
    /// the page or whose records do not fit the OOB, no slot or more than the
    /// page holds, a payload of the wrong length or kind for the store, and
    /// everything [`Nand::program`] refuses. An injected program failure takes
    /// the program's time and leaves the block grown-bad.
    pub fn program_packed(
        &mut self,
        ppa: Ppa,
        kind: PageKind,
        slots: &[(u32, Payload)],
        unit_bytes: u32,
        at: impl Into<Issue>,
    ) -> Result<(u64, Span), NandError> {
        let at: Issue = at.into();
        let max = self.slots_per_page(unit_bytes)?;
        if slots.is_empty() || slots.len() > max as usize {
            return Err(NandError::SlotCount { given: slots.len(), max });
        }
        let page_data = self.page_of_slots(slots, unit_bytes)?;
        let block = self.check_programmable(ppa)?;
        let die = self.check_time(self.layout.die_of_block(block), at)?;
        let span = self.timelines.program(die, at);
        if self.faults.strikes(Op::Program) {
            self.fail_program(block, span);
            return Err(NandError::ProgramFailed { ppa });
        }
        let seq = self.commit_program(ppa, block, slots[0].0, kind, 0, span);
        let payloads = match self.store {
            AnyStore::Token(_) => Some(slots.iter().map(|(_, p)| p.clone()).collect()),
            AnyStore::Bytes(_) => None,
        };
        let lpns = slots.iter().map(|(l, _)| *l).collect();
        self.slots.insert(ppa.0, Slots { seq, unit: unit_bytes, lpns, payloads });
        if let Err(e) = self.store.write(ppa.0, slots[0].0, page_data) {
            self.undo_program(ppa);
            return Err(e);
        }
        Ok((seq, span))
    }

    /// What the page store keeps for a packed page: in a byte store the slots'
    /// bytes one after another; in a token store slot 0's token (the slots
    /// themselves are in the side table).
    fn page_of_slots(&self, slots: &[(u32, Payload)], unit: u32) -> Result<Payload, NandError> {
        match self.store {
            AnyStore::Token(_) => {
                for (_, p) in slots {
                    if let Payload::Bytes(b) = p {
                        if b.len() != unit as usize {
                            return Err(NandError::PayloadMismatch("slot bytes must be exactly one unit long"));
                        }
                    }
                }
                Ok(match &slots[0].1 {
                    Payload::Token(t) => Payload::Token(*t),
                    Payload::Bytes(_) => Payload::Token(0),
                })
            }
            AnyStore::Bytes(_) => {
                let mut page = vec![0u8; self.geometry.page_size as usize];
                for (i, (_, p)) in slots.iter().enumerate() {
                    match p {
                        Payload::Bytes(b) if b.len() == unit as usize => {
                            page[i * unit as usize..(i + 1) * unit as usize].copy_from_slice(b);
                        }
                        Payload::Bytes(_) => {
                            return Err(NandError::PayloadMismatch("slot bytes must be exactly one unit long"))
                        }
                        Payload::Token(_) => {
                            return Err(NandError::PayloadMismatch("this device stores page bytes, not tokens"))
                        }
                    }
                }
                Ok(Payload::Bytes(page.into()))
            }
        }
    }

    /// Reads slot `slot` of page `ppa`, issued at `at`: its payload and its
    /// record (the slot's logical unit, the program's sequence number, kind and
    /// tag). Costs a page read. A page programmed with one record has one
    /// slot, the whole page.
    pub fn read_slot(&mut self, ppa: Ppa, slot: u32, at: impl Into<Issue>) -> Result<(Payload, Oob, Span), NandError> {
        let at: Issue = at.into();
        let block = self.check_readable(ppa)?;
        let count = self.slots_at(ppa.0).map_or(1, |s| s.lpns.len() as u32);
        if slot >= count {
            return Err(NandError::NoSuchSlot { ppa, slot, slots: count });
        }
        self.check_time(self.layout.die_of_block(block), at)?;
        let span = self.timelines.read(self.layout.die_of_block(block), at);
        if at.host {
            self.after_read();
        }
        let oob = self.oob_at(ppa, block);
        let Some(s) = self.slots_at(ppa.0) else {
            return Ok((self.store.read(ppa.0, oob.lpn), oob, span));
        };
        let oob = Oob { lpn: s.lpns[slot as usize], ..oob };
        let data = match &s.payloads {
            Some(p) => p[slot as usize].clone(),
            None => match self.store.read(ppa.0, oob.lpn) {
                Payload::Bytes(b) => {
                    let u = s.unit as usize;
                    Payload::Bytes(b[slot as usize * u..(slot as usize + 1) * u].into())
                }
                t @ Payload::Token(_) => t,
            },
        };
        Ok((data, oob, span))
    }

    /// Reads every slot of page `ppa` in one page read issued at `at` (what a
    /// garbage collector moving a page's valid units does): each slot's payload
    /// with its record, in slot order; one slot for a page of one record.
    #[allow(clippy::type_complexity)]
    pub fn read_slots(&mut self, ppa: Ppa, at: impl Into<Issue>) -> Result<(Vec<(Payload, Oob)>, Span), NandError> {
        let (page, oob, span) = self.read(ppa, at)?;
        let Some(s) = self.slots_at(ppa.0) else {
            return Ok((vec![(page, oob)], span));
        };
        let u = s.unit as usize;
        let out = s
            .lpns
            .iter()
            .enumerate()
            .map(|(i, &lpn)| {
                let data = match (&s.payloads, &page) {
                    (Some(p), _) => p[i].clone(),
                    (None, Payload::Bytes(b)) => Payload::Bytes(b[i * u..(i + 1) * u].into()),
                    (None, t) => t.clone(),
                };
                (data, Oob { lpn, ..oob })
            })
            .collect();
        Ok((out, span))
    }

    /// Reads the OOB of `ppa` with every slot's record, issued at `at`: one
    /// record for a page programmed with one, `None` for an erased page. Costs
    /// an OOB read (the records are all in the OOB).
    pub fn read_slot_oobs(&mut self, ppa: Ppa, at: impl Into<Issue>) -> Result<(Option<Vec<Oob>>, Span), NandError> {
        let (oob, span) = self.read_oob(ppa, at)?;
        Ok((oob.map(|o| self.records_of(ppa, o)), span))
    }

    /// The records of `ppa`, whose own OOB is `oob`.
    fn records_of(&self, ppa: Ppa, oob: Oob) -> Vec<Oob> {
        match self.slots_at(ppa.0) {
            Some(s) => s.lpns.iter().map(|&lpn| Oob { lpn, ..oob }).collect(),
            None => vec![oob],
        }
    }

    /// Every slot's record of `ppa` without timing, for tests and invariant
    /// checks; `None` if the page is erased, torn or in a bad block.
    pub fn peek_slot_oobs(&self, ppa: Ppa) -> Option<Vec<Oob>> {
        self.peek_oob(ppa).map(|o| self.records_of(ppa, o))
    }

    /// After a copyback from `from` to `to` programmed with `seq`: a packed
    /// source's slots travel with it.
    #[inline]
    pub(crate) fn copy_slots(&mut self, from: Ppa, to: Ppa, seq: u64) {
        if let Some(s) = self.slots_at(from.0) {
            let s = Slots { seq, ..s.clone() };
            self.slots.insert(to.0, s);
        }
    }

    /// RAM the side table takes, bytes (an estimate: entry, records, payloads).
    pub(crate) fn slots_ram_bytes(&self) -> u64 {
        self.slots
            .values()
            .map(|s| {
                64 + s.lpns.len() as u64 * 4
                    + s.payloads.as_ref().map_or(0, |p| p.len() as u64 * std::mem::size_of::<Payload>() as u64)
            })
            .sum()
    }

    /// Saves the entry of `ppa` before a program over it while its block's
    /// erase is in flight (the erase may be undone, and the page with it).
    #[inline]
    pub(crate) fn saved_slots(&self, ppa: Ppa) -> Option<Box<Slots>> {
        if self.slots.is_empty() {
            return None;
        }
        self.slots.get(&ppa.0).cloned().map(Box::new)
    }

    /// Puts back an entry saved by [`Nand::saved_slots`].
    pub(crate) fn restore_slots(&mut self, ppa: Ppa, saved: Option<Box<Slots>>) {
        if let Some(s) = saved {
            self.slots.insert(ppa.0, *s);
        }
    }
}
