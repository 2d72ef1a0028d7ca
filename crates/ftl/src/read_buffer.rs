//! A read buffer in device DRAM between the flash and the host (003 Section
//! 2.2, "Read Performance").
//!
//! A host read of a flash page brings the whole page into the buffer; a later
//! host read of the same page (or of another logical unit packed in it, for an
//! FTL whose units are smaller than the page), while it is still buffered, is
//! served from DRAM without touching the flash. A read of one unit of a page
//! that is not buffered replies as soon as that unit has crossed the channel,
//! not once the whole page has (003's second read optimization); the page
//! still occupies the die and channel until all of it is in. Pages leave the buffer least recently used
//! first, and a page whose block has been erased since it was buffered is
//! never served from it (its entry remembers the block's erase count). Only
//! host reads use it: garbage collection, map and recovery reads go to the
//! flash as before. A power cut empties it.
//!
//! Copies out of the buffer take DRAM time when a rate is set
//! (`device.dram_mb_per_s`): a read served through the buffer completes after
//! its bytes are copied, one copy at a time. That copy is the delay 003 blames
//! for sequential reads running 30% slower with the buffer on; without a rate
//! copies are free.
//!
//! Set through the device configuration (`device.read_buffer_pages`); it sits
//! under any FTL, which sees only faster reads.

use std::collections::{BTreeMap, HashMap};

use ftlab_nand::{Oob, Payload, Ppa, SimTime};

use crate::dram::Dram;
use crate::FtlError;

/// A buffered page's slots: bytes and record of each, in slot order.
type Slots = Vec<(Payload, Oob)>;

/// A buffer of flash pages (see the module docs).
#[derive(Debug, Clone)]
pub struct ReadBuffer {
    capacity: usize,
    /// Buffered page -> (its block's erase count then, last use, its slots'
    /// bytes and records as read: one for a page of one record).
    pages: HashMap<u32, (u32, u64, Slots)>,
    /// Last use -> page, oldest first.
    lru: BTreeMap<u64, u32>,
    tick: u64,
    /// Copies out of the buffer.
    dram: Dram,
    hits: u64,
    misses: u64,
    /// Pages are held for the request that read them only
    /// ([`ReadBuffer::stage_only`]).
    stage_only: bool,
}

impl ReadBuffer {
    /// A buffer of `pages` flash pages (at least 1) whose copies take
    /// `ps_per_byte` picoseconds a byte; errors name `device.read_buffer_pages`.
    pub fn new(pages: u32, ps_per_byte: u64) -> Result<Self, FtlError> {
        if pages == 0 {
            return Err(FtlError::config(
                "device.read_buffer_pages",
                "device.read_buffer_pages = 0 is no buffer: leave it out, or give it at least 1 page",
            ));
        }
        Ok(ReadBuffer {
            capacity: pages as usize,
            pages: HashMap::new(),
            lru: BTreeMap::new(),
            tick: 0,
            dram: Dram::new(ps_per_byte),
            hits: 0,
            misses: 0,
            stage_only: false,
        })
    }

    /// Holds pages for the host request that read them only: each request
    /// starts with an empty buffer ([`ReadBuffer::request_start`]), so the
    /// units of one page that one request asks for come from one flash read,
    /// and no later request is served from DRAM. This is a buffer that stages
    /// pages on their way to the host, the one 003 Section 2.2 describes; the
    /// default keeps pages, least recently used out, and serves later requests
    /// from them.
    pub fn stage_only(mut self, on: bool) -> Self {
        self.stage_only = on;
        self
    }

    /// A host request starts: a staging buffer forgets the pages it held.
    #[inline]
    pub fn request_start(&mut self) {
        if self.stage_only && !self.pages.is_empty() {
            self.pages.clear();
            self.lru.clear();
        }
    }

    /// Slot `slot` of the buffered copy of `ppa` (in a block erased
    /// `erase_count` times) and the page's slot count, if buffered; a hit
    /// becomes the most recently used page.
    pub fn lookup(&mut self, ppa: Ppa, erase_count: u32, slot: u32) -> Option<(Payload, Oob, u32)> {
        let tick = self.tick;
        match self.pages.get_mut(&ppa.0) {
            Some((erases, used, slots)) if *erases == erase_count && (slot as usize) < slots.len() => {
                self.lru.remove(used);
                *used = tick;
                self.lru.insert(tick, ppa.0);
                self.tick += 1;
                self.hits += 1;
                let (data, oob) = &slots[slot as usize];
                Some((data.clone(), *oob, slots.len() as u32))
            }
            _ => {
                self.misses += 1;
                None
            }
        }
    }

    /// Buffers `ppa` as read (its `slots`, from a block erased `erase_count`
    /// times), evicting the least recently used page if full.
    pub fn insert(&mut self, ppa: Ppa, erase_count: u32, slots: Vec<(Payload, Oob)>) {
        if let Some((_, used, _)) = self.pages.remove(&ppa.0) {
            self.lru.remove(&used);
        } else if self.pages.len() >= self.capacity {
            if let Some((_, old)) = self.lru.pop_first() {
                self.pages.remove(&old);
            }
        }
        self.pages.insert(ppa.0, (erase_count, self.tick, slots));
        self.lru.insert(self.tick, ppa.0);
        self.tick += 1;
    }

    /// A copy of `bytes` out of the buffer, starting no earlier than `at` and
    /// the previous copy: when it ends.
    pub fn copy(&mut self, at: SimTime, bytes: u64) -> SimTime {
        self.dram.copy(at, bytes).unwrap_or(at)
    }

    /// Empties the buffer (a power cut); the DRAM is idle from `t`.
    pub fn clear(&mut self, t: SimTime) {
        self.pages.clear();
        self.lru.clear();
        self.dram.reset(t);
    }

    /// Host reads served from the buffer, and host reads that went to the flash.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// DRAM the buffer takes: its pages of `page_size` bytes and their entries.
    pub fn ram_bytes(&self, page_size: u64) -> u64 {
        self.capacity as u64 * (page_size + 24)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn least_recently_used_pages_leave_first_and_erased_blocks_miss() {
        let oob = Oob::new(0, 0, ftlab_nand::PageKind::Data);
        let mut b = ReadBuffer::new(2, 0).unwrap();
        let put = |b: &mut ReadBuffer, p: u32, e: u32| b.insert(Ppa(p), e, vec![(Payload::Token(u64::from(p)), oob)]);
        assert!(b.lookup(Ppa(1), 0, 0).is_none());
        put(&mut b, 1, 0);
        put(&mut b, 2, 0);
        assert_eq!(b.lookup(Ppa(1), 0, 0), Some((Payload::Token(1), oob, 1))); // 1 is now the most recent
        assert!(b.lookup(Ppa(1), 0, 1).is_none(), "a slot the page does not have");
        put(&mut b, 3, 0); // evicts 2
        assert!(b.lookup(Ppa(2), 0, 0).is_none());
        assert!(b.lookup(Ppa(1), 0, 0).is_some());
        assert!(b.lookup(Ppa(3), 0, 0).is_some());
        // Block of page 3 erased since: never served from the buffer.
        assert!(b.lookup(Ppa(3), 1, 0).is_none());
        assert_eq!(b.hits_and_misses(), (3, 4));
        b.clear(SimTime::ZERO);
        assert!(b.lookup(Ppa(1), 0, 0).is_none());
    }

    #[test]
    fn copies_run_one_at_a_time() {
        let mut b = ReadBuffer::new(4, 10_000).unwrap(); // 10,000 ps a byte: 100 MB/s
        assert_eq!(b.copy(SimTime(0), 4096), SimTime(40_960));
        assert_eq!(b.copy(SimTime(0), 4096), SimTime(81_920));
        assert_eq!(b.copy(SimTime(100_000), 1000), SimTime(110_000));
        assert!(ReadBuffer::new(0, 0).unwrap_err().to_string().contains("device.read_buffer_pages"));
    }
}
