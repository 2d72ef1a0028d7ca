//! Block summaries: what a group block tells recovery about itself.
//!
//! The medium's OOB holds a page's logical page, sequence number and kind, not
//! its expiry or the stream that wrote it. So each block of a group keeps two
//! pages of kind [`PageKind::Meta`] (programmed with purpose
//! [`Purpose::Checkpoint`]), like the block summaries real FTLs keep:
//!
//! - the **header**, page 1, programmed right after the block's first data page:
//!   OOB logical page `HEADER | stream` (the group's allocator stream), data the
//!   time it was written;
//! - the **trailer**, page `P - 1`, programmed right after the block's last data
//!   page (`P - 2`): OOB logical page `TRAILER | stream`, data the block's stamp
//!   (the latest expiry written into it), the page that closes the block.
//!
//! A group block holds `P - 2` data pages, and admission sizes the groups with
//! that many ([`super::TelomereConfig::plan`]). Both pages are programmed after the
//! write's acknowledgement, and that write then issues one erase less
//! (`erases_per_write`), so a later command still waits for at most one
//! operation it did not choose (the service bound). The data is a token, or on a
//! byte medium a page whose first 8 bytes are the value, little-endian.
//!
//! Recovery ([`super::Telomere::recover`]) gives a block with a header back to
//! its group, with the trailer's stamp, or, without a trailer (the block was open
//! or its trailer was cut), the time of recovery plus the group's longest
//! lifetime ([`super::Group::lifetime_ns`]), which no page of the group written
//! before the cut outlives. Pool blocks carry no summary.

use ftlab_nand::{BlockId, Geometry, NandError, Oob, PageKind, Payload, Ppa};

use super::{Telomere, POOL};
use crate::alloc::Allocation;
use crate::{FtlError, Io, Purpose};

/// Pages of a group block that hold its summary, not data.
pub(super) const PAGES: u32 = 2;
/// The header's page in its block.
const HEADER_PAGE: u32 = 1;
const HEADER: u32 = 1 << 30;
const TRAILER: u32 = 1 << 31;

/// A summary page's value as the medium's payload.
fn payload(value: u64, page_size: Option<u32>) -> Payload {
    match page_size {
        None => Payload::Token(value),
        Some(size) => {
            let mut bytes = vec![0u8; size as usize];
            bytes[..8].copy_from_slice(&value.to_le_bytes());
            Payload::Bytes(bytes.into())
        }
    }
}

/// The value a summary page holds.
fn value(p: &Payload) -> Option<u64> {
    match p {
        Payload::Token(v) => Some(*v),
        Payload::Bytes(b) => b.get(..8).and_then(|s| s.try_into().ok()).map(u64::from_le_bytes),
    }
}

/// The stream a summary page of `tag` (`HEADER` or `TRAILER`) names, if `oob` is
/// one and the stream is a group's (`1 ..= groups`).
fn stream_of(oob: &Oob, tag: u32, groups: usize) -> Option<u32> {
    let stream = oob.lpn & !(HEADER | TRAILER);
    (oob.kind == PageKind::Meta && oob.lpn & (HEADER | TRAILER) == tag && (1..=groups as u32).contains(&stream))
        .then_some(stream)
}

/// The group stream named by the header of `block`, if it has a readable one.
pub(super) fn header(io: &mut Io, g: &Geometry, block: BlockId, groups: usize) -> Result<Option<u32>, FtlError> {
    if io.programmed_pages(block) <= HEADER_PAGE {
        return Ok(None);
    }
    let ppa = g.ppa(block, HEADER_PAGE);
    match io.read_oob(ppa, Purpose::Recovery) {
        Ok(oob) => Ok(oob.and_then(|o| stream_of(&o, HEADER, groups))),
        Err(NandError::Uncorrectable(_)) => Ok(None),
        Err(e) => Err(FtlError::Recovery(format!("reading the summary header at {ppa:?}: {e}"))),
    }
}

/// The stamp in the trailer of `block`, if it has a readable one of `stream`.
pub(super) fn trailer(io: &mut Io, g: &Geometry, block: BlockId, stream: u32) -> Result<Option<u64>, FtlError> {
    let last = g.pages_per_block - 1;
    if io.programmed_pages(block) <= last {
        return Ok(None);
    }
    let ppa: Ppa = g.ppa(block, last);
    match io.read(ppa, Purpose::Recovery) {
        Ok((data, oob)) if oob.kind == PageKind::Meta && oob.lpn == TRAILER | stream => Ok(value(&data)),
        Ok(_) | Err(NandError::Uncorrectable(_)) => Ok(None),
        Err(e) => Err(FtlError::Recovery(format!("reading the summary trailer at {ppa:?}: {e}"))),
    }
}

impl Telomere {
    /// After a write's acknowledgement: programs the header of the group block
    /// whose first data page `a` was, or the trailer of the one whose last data
    /// page it was (closing it). `page_size`: the medium stores page bytes, of this
    /// size. Returns whether it programmed a page.
    pub(super) fn write_summary(
        &mut self,
        io: &mut Io,
        a: Allocation,
        stream: u32,
        page_size: Option<u32>,
    ) -> Result<bool, FtlError> {
        let page = self.layout.page_in_block(a.ppa);
        let closing = page + PAGES == self.geometry.pages_per_block;
        if stream == POOL || (page != 0 && !closing) {
            return Ok(false);
        }
        let block = self.layout.block_of(a.ppa);
        let next = self
            .alloc
            .next_page(stream, self.layout.die_of_block(block))
            .filter(|m| self.layout.block_of(m.ppa) == block)
            .ok_or_else(|| FtlError::DeviceFull(format!("group block {} has no page for its summary", block.0)))?;
        let (tag, v) = if closing { (TRAILER, self.stamp[block.0 as usize]) } else { (HEADER, io.now().0) };
        match io.program(next.ppa, tag | stream, PageKind::Meta, payload(v, page_size), Purpose::Checkpoint) {
            Ok(_) => {}
            // The block went bad: retired without its summary, like a block a
            // power cut left without one (recovery bounds its stamp).
            Err(NandError::ProgramFailed { .. }) => {
                self.retire(block);
                return Ok(false);
            }
            Err(e) => return Err(e.into()),
        }
        self.note_written(next, 0);
        Ok(true)
    }

    /// Checks the summary pages of a group block against the medium: its header,
    /// and its trailer once the block is fully programmed.
    pub(super) fn check_summary(&self, flash: &crate::Flash, block: BlockId) -> Result<(), String> {
        let g = &self.geometry;
        let stream = self.owner[block.0 as usize];
        let programmed = flash.nand().programmed_pages(block);
        let groups = self.plan.groups.len();
        let oob = |page: u32| flash.nand().peek_oob(g.ppa(block, page));
        let header = oob(HEADER_PAGE).and_then(|o| stream_of(&o, HEADER, groups));
        if programmed > HEADER_PAGE && header != Some(stream) {
            return Err(format!("group block {} of stream {stream}: header {:?}", block.0, oob(HEADER_PAGE)));
        }
        let last = g.pages_per_block - 1;
        if programmed > last && oob(last).is_some_and(|o| stream_of(&o, TRAILER, groups) != Some(stream)) {
            return Err(format!("group block {} of stream {stream}: last page {:?}", block.0, oob(last)));
        }
        Ok(())
    }
}
