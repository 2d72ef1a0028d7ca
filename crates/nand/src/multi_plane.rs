//! Multi-plane program, read and erase, and the commands switch
//! ([`crate::commands`]).
//!
//! A multi-plane operation names one page (or block) in each of up to
//! `planes_per_die` planes of one die. The medium refuses it, naming the two
//! addresses and the rule, when the commands are off, when the addresses are
//! on different dies or share a plane, when the pages are at different page
//! offsets of their blocks, or (with `multi_plane_same_block`) when the blocks
//! are at different offsets in their planes. Each page is otherwise checked
//! as a single-plane operation would be; a program failure strikes each page
//! on its own (the die reports a status per plane), so some pages of a
//! multi-plane program may fail while the others are programmed.

use super::{Nand, ProgramFailure};
use crate::commands::Commands;
use crate::error::NandError;
use crate::faults::Op;
use crate::geometry::{BlockId, DieId, Ppa};
use crate::medium::{Oob, PageKind};
use crate::store::{PageStore, Payload};
use crate::timeline::{Issue, Span};

/// One page of a multi-plane program: where, its logical page and kind, and
/// its data.
#[derive(Debug)]
pub struct PlanePage {
    pub ppa: Ppa,
    pub lpn: u32,
    pub kind: PageKind,
    pub data: Payload,
    /// Bytes of the page a host request moves ([`crate::Issue::bytes`]); 0:
    /// the whole page.
    pub bytes: u32,
}

impl Nand {
    /// While on, operations move data at once and take no time on any die
    /// or channel ([`crate::timeline::Timelines::set_dry`]): an FTL that moves data
    /// when it decides to and books the time of its commands later, as its
    /// dies fall free, runs them so and then books that time with
    /// [`Nand::reserve_read`], [`Nand::reserve_program`] and
    /// [`Nand::reserve_erase`]. Off by default.
    pub fn set_untimed(&mut self, on: bool) {
        self.timelines.set_dry(on);
    }

    /// Whether operations take no time ([`Nand::set_untimed`]).
    pub fn untimed(&self) -> bool {
        self.timelines.dry()
    }

    /// Books on `die`, from `at`, the time of a read of `pages` pages of
    /// distinct planes (one multi-plane read when more than one), touching
    /// no page: the time of a read whose data moved already.
    pub fn reserve_read(&mut self, die: DieId, at: impl Into<Issue>, pages: u32) -> Result<Span, NandError> {
        let at = at.into();
        let die = self.check_time(die, at)?;
        Ok(if pages <= 1 { self.timelines.read(die, at) } else { self.timelines.read_multi(die, at, pages) })
    }

    /// Books on `die`, from `at`, the time of a program of one page a plane,
    /// `bytes` each moves (one multi-plane program when more than one),
    /// touching no page.
    pub fn reserve_program(&mut self, die: DieId, at: impl Into<Issue>, bytes: &[u32]) -> Result<Span, NandError> {
        let at = at.into();
        let die = self.check_time(die, at)?;
        Ok(if bytes.len() <= 1 {
            self.timelines.program(die, Issue { bytes: bytes.first().copied().unwrap_or(0), ..at })
        } else {
            self.timelines.program_multi(die, at, bytes)
        })
    }

    /// Books on `die`, from `at`, the time of a copyback (a page read and
    /// programmed inside its plane; one a plane as one multi-plane
    /// copyback), touching no page.
    pub fn reserve_copyback(&mut self, die: DieId, at: impl Into<Issue>) -> Result<Span, NandError> {
        let at = at.into();
        let die = self.check_time(die, at)?;
        Ok(self.timelines.copyback(die, at))
    }

    /// Books on `die`, from `at`, the time of an erase (of one block a plane
    /// as one multi-plane erase), touching no block.
    pub fn reserve_erase(&mut self, die: DieId, at: impl Into<Issue>) -> Result<Span, NandError> {
        let at = at.into();
        let die = self.check_time(die, at)?;
        Ok(self.timelines.erase(die, at))
    }

    /// The advanced commands in use.
    pub fn commands(&self) -> &Commands {
        self.timelines.commands()
    }

    /// Host reads that suspended a program or an erase so far.
    #[inline]
    pub fn suspensions(&self) -> u64 {
        self.suspensions
    }

    /// After a read: if it suspended a program or an erase, that operation's
    /// pages are durable only at its new finish.
    #[inline]
    pub(crate) fn after_read(&mut self) {
        if let Some(s) = self.timelines.take_suspension() {
            self.suspensions += 1;
            self.extend_in_flight(s.die, s.from, s.to);
        }
    }

    #[cold]
    fn extend_in_flight(&mut self, die: DieId, from: crate::SimTime, to: crate::SimTime) {
        for f in self.in_flight.iter_mut().rev() {
            if f.span.die == die && f.span.finish == from {
                f.span.finish = to;
            }
        }
    }

    /// The die of a multi-plane operation on `blocks` (with the page offset
    /// `page` of each, if a page operation), or why the operation is refused.
    fn check_planes(&self, blocks: &[(BlockId, Ppa)], page: Option<&[u32]>) -> Result<DieId, NandError> {
        let refuse = |a: Ppa, b: Ppa, why: &'static str| NandError::MultiPlane { first: a, other: b, why };
        let g = &self.geometry;
        let Some(&(first, first_ppa)) = blocks.first() else {
            return Err(NandError::MultiPlaneCount { given: 0, planes: g.planes_per_die });
        };
        if !self.commands().multi_plane {
            return Err(NandError::MultiPlaneOff);
        }
        if blocks.len() > g.planes_per_die as usize {
            return Err(NandError::MultiPlaneCount { given: blocks.len(), planes: g.planes_per_die });
        }
        let die = self.layout.die_of_block(first);
        let offset = |b: BlockId| b.0 % g.blocks_per_plane;
        let mut planes = 0u64;
        for (i, &(block, ppa)) in blocks.iter().enumerate() {
            if block.0 >= g.total_blocks() {
                return Err(NandError::BlockOutOfRange(block));
            }
            if self.layout.die_of_block(block) != die {
                return Err(refuse(first_ppa, ppa, "they are on different dies"));
            }
            let plane = self.layout.plane_of_block(block);
            if plane < 64 && planes & (1 << plane) != 0 {
                return Err(refuse(first_ppa, ppa, "they are in the same plane"));
            }
            planes |= 1u64.checked_shl(plane).unwrap_or(0);
            if let Some(pages) = page {
                if pages[i] != pages[0] && !self.commands().multi_plane_any_page {
                    return Err(refuse(first_ppa, ppa, "their pages are at different offsets of their blocks"));
                }
            }
            if self.commands().multi_plane_same_block && offset(block) != offset(first) {
                return Err(refuse(
                    first_ppa,
                    ppa,
                    "their blocks are at different offsets of their planes (commands.multi_plane_same_block)",
                ));
            }
        }
        Ok(die)
    }

    /// Programs one page in each of several planes of one die in one
    /// operation (see the module documentation), issued at `at`. Returns, per
    /// page in order, its sequence number or its failure (the data handed
    /// back), and the operation's span. A refused command (commands off, an
    /// address rule broken, a page not programmable) programs nothing and is
    /// the error.
    #[allow(clippy::type_complexity)]
    pub fn program_multi(
        &mut self,
        pages: Vec<PlanePage>,
        at: impl Into<Issue>,
    ) -> Result<(Vec<Result<u64, Box<ProgramFailure>>>, Span), NandError> {
        let at: Issue = at.into();
        let mut blocks = Vec::with_capacity(pages.len());
        let mut offsets = Vec::with_capacity(pages.len());
        for p in &pages {
            let block = self.check_programmable(p.ppa)?;
            blocks.push((block, p.ppa));
            offsets.push(self.layout.page_in_block(p.ppa));
        }
        let die = self.check_planes(&blocks, Some(&offsets))?;
        self.check_time(die, at)?;
        let bytes: Vec<u32> = pages.iter().map(|p| p.bytes).collect();
        let span = self.timelines.program_multi(die, at, &bytes);
        let mut out = Vec::with_capacity(pages.len());
        for (p, (block, _)) in pages.into_iter().zip(blocks) {
            if self.faults.strikes(Op::Program) {
                self.fail_program(block, span);
                out.push(Err(Box::new(ProgramFailure {
                    error: NandError::ProgramFailed { ppa: p.ppa },
                    data: Some(p.data),
                })));
                continue;
            }
            let seq = self.commit_program(p.ppa, block, p.lpn, p.kind, 0, span);
            match self.store.write(p.ppa.0, p.lpn, p.data) {
                Ok(()) => out.push(Ok(seq)),
                Err(error) => {
                    self.undo_program(p.ppa);
                    out.push(Err(Box::new(ProgramFailure { error, data: None })));
                }
            }
        }
        Ok((out, span))
    }

    /// Reads one page in each of several planes of one die in one operation,
    /// issued at `at`: the pages' data and OOB in order, and the span.
    #[allow(clippy::type_complexity)]
    pub fn read_multi(&mut self, ppas: &[Ppa], at: impl Into<Issue>) -> Result<(Vec<(Payload, Oob)>, Span), NandError> {
        let at: Issue = at.into();
        let mut blocks = Vec::with_capacity(ppas.len());
        let mut offsets = Vec::with_capacity(ppas.len());
        for &ppa in ppas {
            blocks.push((self.check_readable(ppa)?, ppa));
            offsets.push(self.layout.page_in_block(ppa));
        }
        let die = self.check_planes(&blocks, Some(&offsets))?;
        self.check_time(die, at)?;
        let span = self.timelines.read_multi(die, at, ppas.len() as u32);
        let out = ppas
            .iter()
            .zip(&blocks)
            .map(|(&p, &(block, _))| {
                let oob = self.oob_at(p, block);
                (self.store.read(p.0, oob.lpn), oob)
            })
            .collect();
        Ok((out, span))
    }

    /// Reads `ppa` as one more plane of the multi-plane read whose span is
    /// `lead` and whose pages read so far are `group` (those of them on the
    /// medium; a read of a page never written takes a plane too, known only
    /// to the caller), issued at `at`: the page's data and OOB, and the time
    /// it adds ([`Timelines::read_join`](crate::timeline::Timelines::read_join)).
    /// `Ok(None)`, with nothing read or reserved, when the pages together
    /// would not make a multi-plane read (multi-plane commands off, the same
    /// plane twice, another die, different page offsets without
    /// [`Commands::multi_plane_any_page`]) or the die did something else
    /// since; a page that cannot be read at all is the error a read gives.
    #[allow(clippy::type_complexity)]
    pub fn read_join(
        &mut self,
        group: &[Ppa],
        lead: Span,
        ppa: Ppa,
        at: impl Into<Issue>,
    ) -> Result<Option<(Payload, Oob, Span)>, NandError> {
        let at: Issue = at.into();
        let block = self.check_readable(ppa)?;
        let die = self.layout.die_of_block(block);
        self.check_time(die, at)?;
        if !self.commands().multi_plane || lead.die != die {
            return Ok(None);
        }
        let mut blocks = Vec::with_capacity(group.len() + 1);
        let mut offsets = Vec::with_capacity(group.len() + 1);
        for &p in group.iter().chain([&ppa]) {
            blocks.push((self.layout.block_of(p), p));
            offsets.push(self.layout.page_in_block(p));
        }
        if self.check_planes(&blocks, Some(&offsets)).is_err() {
            return Ok(None);
        }
        let Some(span) = self.timelines.read_join(die, lead, at) else { return Ok(None) };
        let oob = self.oob_at(ppa, block);
        Ok(Some((self.store.read(ppa.0, oob.lpn), oob, span)))
    }

    /// [`Nand::read_time`] as one more plane of the multi-plane read whose
    /// span is `lead` (see [`Nand::read_join`]): the time it adds, or `None`
    /// with nothing reserved.
    pub fn read_time_join(&mut self, die: DieId, lead: Span, at: impl Into<Issue>) -> Result<Option<Span>, NandError> {
        let at: Issue = at.into();
        let die = self.check_time(die, at)?;
        if !self.commands().multi_plane {
            return Ok(None);
        }
        Ok(self.timelines.read_join(die, lead, at))
    }

    /// Erases one block in each of several planes of one die in one
    /// operation, issued at `at`. Returns, per block in order, whether its
    /// erase succeeded (an injected failure strikes each block on its own), and
    /// the span. A refused command erases nothing and is the error.
    pub fn erase_multi(
        &mut self,
        blocks: &[BlockId],
        at: impl Into<Issue>,
    ) -> Result<(Vec<Result<(), NandError>>, Span), NandError> {
        let at: Issue = at.into();
        let g = self.geometry;
        let addressed: Vec<(BlockId, Ppa)> =
            blocks.iter().map(|&b| (b, if b.0 < g.total_blocks() { g.ppa(b, 0) } else { Ppa(u32::MAX) })).collect();
        let die = self.check_planes(&addressed, None)?;
        for &b in blocks {
            self.check_erasable(b)?;
        }
        self.check_time(die, at)?;
        let span = self.timelines.erase_multi(die, at);
        let out = blocks.iter().map(|&b| self.commit_erase(b, span)).collect();
        Ok((out, span))
    }
}
