//! A page's OOB metadata: its logical page, sequence number, kind and the
//! scheme's tag, and how the medium keeps them in 8 bytes a page
//! ([`OobTable`]).
//!
//! Sequence number, tag and kind pack into one `u64` (`seq << 8 | tag << 2 |
//! kind`: the kind takes two bits, the tag the six above them), which is what
//! an image saves. In memory a page keeps its logical page (`u32`) and a `u32`
//! of `offset << 8 | tag << 2 | kind`, the offset being the page's sequence
//! number less its block's base (the sequence number of the block's first
//! program since its erase, kept with the block). A block stays open for fewer
//! than 2^24 - 1 programs of the whole device in any run of ours; a page of one
//! open longer keeps the escape offset [`FAR`] and its packed `u64` in a side
//! table, so every sequence number reads back exactly as it was written.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::error::NandError;
use crate::huge::HugeArray;

/// What a page holds, written in its OOB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum PageKind {
    /// Host data.
    Data = 0,
    /// Mapping (translation) data.
    Map = 1,
    /// A checkpoint of FTL state.
    Checkpoint = 2,
    /// Any other FTL metadata.
    Meta = 3,
}

impl PageKind {
    pub(crate) fn from_bits(b: u64) -> PageKind {
        match b & KIND_MASK {
            0 => PageKind::Data,
            1 => PageKind::Map,
            2 => PageKind::Checkpoint,
            _ => PageKind::Meta,
        }
    }
}

/// Bits of the packed OOB byte that hold the [`PageKind`].
const KIND_MASK: u64 = 0b11;
/// Where the tag starts in the packed OOB byte.
const TAG_SHIFT: u32 = 2;

/// The OOB metadata of a programmed page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Oob {
    /// Logical page (or, for map pages, the translation page number) the page holds.
    pub lpn: u32,
    /// Device-wide program sequence number, strictly increasing in issue order.
    pub seq: u64,
    /// What the page holds.
    pub kind: PageKind,
    /// A few bits the FTL scheme owns (0 to [`Oob::MAX_TAG`]): what its recovery
    /// must know of a page besides its logical page, e.g. that a merge copied
    /// it or that it belongs to a write queue. The medium only stores it, and a
    /// copyback carries it with the page. 0 for schemes that need none.
    pub tag: u8,
}

impl Oob {
    /// Bits in [`Oob::tag`].
    pub const TAG_BITS: u32 = 6;
    /// The largest tag a page can carry; a program with a larger one is refused
    /// ([`NandError::TagOutOfRange`], see [`Oob::check_tag`]).
    pub const MAX_TAG: u8 = (1 << Self::TAG_BITS) - 1;

    /// The OOB of a page holding `lpn` of `kind` with sequence number `seq` and
    /// tag 0.
    pub fn new(lpn: u32, seq: u64, kind: PageKind) -> Self {
        Oob { lpn, seq, kind, tag: 0 }
    }

    /// Sequence number, tag and kind as the medium stores them: `seq << 8 | tag
    /// << 2 | kind`. The caller has checked `tag <= MAX_TAG`.
    #[inline]
    pub(crate) fn pack(seq: u64, kind: PageKind, tag: u8) -> u64 {
        debug_assert!(tag <= Self::MAX_TAG, "OOB tag {tag} out of range");
        (seq << 8) | (u64::from(tag) << TAG_SHIFT) | kind as u64
    }

    #[inline]
    pub(crate) fn unpack(lpn: u32, packed: u64) -> Self {
        Oob { lpn, seq: packed >> 8, kind: PageKind::from_bits(packed), tag: ((packed & 0xff) >> TAG_SHIFT) as u8 }
    }
    /// `tag` if a page can carry it, else [`NandError::TagOutOfRange`].
    pub fn check_tag(tag: u8) -> Result<u8, NandError> {
        if tag > Self::MAX_TAG {
            return Err(NandError::TagOutOfRange { tag });
        }
        Ok(tag)
    }
}

/// The offset that sends a page's record to [`OobTable`]'s side table.
pub(crate) const FAR: u32 = (1 << 24) - 1;

/// The OOB records of every page: logical page and sequence number relative
/// to the block's base (see the module doc).
#[derive(Debug)]
pub(crate) struct OobTable {
    /// Each page's record, logical page and relative sequence number side by
    /// side (one cache line for both).
    recs: HugeArray<Rec>,
    far: HashMap<u32, u64>,
}

/// A page's record in memory.
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Rec {
    lpn: u32,
    /// `offset << 8 | tag << 2 | kind`; offset [`FAR`]: the packed `u64` is in
    /// [`OobTable`]'s side table.
    rel: u32,
}

/// One page's record as the table holds it, whatever base it is relative to
/// (what a program over a page saves, in case a power cut undoes it and the
/// erase before it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawRecord {
    lpn: u32,
    rel: u32,
    far: Option<u64>,
}

impl OobTable {
    /// Records for `pages` pages, each of logical page `u32::MAX`.
    pub(crate) fn new(pages: u32) -> Self {
        OobTable { recs: HugeArray::filled(pages as usize, Rec { lpn: u32::MAX, rel: 0 }), far: HashMap::new() }
    }

    /// The logical page of `page`.
    #[inline(always)]
    pub(crate) fn lpn(&self, page: u32) -> u32 {
        self.recs[page as usize].lpn
    }

    /// Starts loading `page`'s record into the CPU cache ([`crate::Nand::prefetch`]).
    #[inline(always)]
    pub(crate) fn prefetch(&self, page: u32) {
        prefetch_index::prefetch_index(&self.recs, page as usize);
    }

    /// `seq << 8 | tag << 2 | kind` of `page`, whose block's base is `base`.
    #[inline(always)]
    pub(crate) fn seqkind(&self, page: u32, base: u64) -> u64 {
        let rel = self.recs[page as usize].rel;
        if rel >> 8 == FAR {
            return self.far_seqkind(page);
        }
        ((base + u64::from(rel >> 8)) << 8) | u64::from(rel & 0xff)
    }

    #[cold]
    #[inline(never)]
    fn far_seqkind(&self, page: u32) -> u64 {
        self.far.get(&page).copied().unwrap_or(0)
    }

    /// The sequence number of `page`, whose block's base is `base`.
    #[inline]
    pub(crate) fn seq(&self, page: u32, base: u64) -> u64 {
        self.seqkind(page, base) >> 8
    }

    /// The record of `page`, whose block's base is `base`.
    #[inline(always)]
    pub(crate) fn get(&self, page: u32, base: u64) -> Oob {
        let Rec { lpn, rel } = self.recs[page as usize];
        if rel >> 8 == FAR {
            return Oob::unpack(lpn, self.far_seqkind(page));
        }
        Oob::unpack(lpn, ((base + u64::from(rel >> 8)) << 8) | u64::from(rel & 0xff))
    }

    /// Sets the record of `page` to `lpn` and `seqkind` (`seq << 8 | tag << 2 |
    /// kind`), its block's base being `base`.
    #[inline(always)]
    pub(crate) fn set(&mut self, page: u32, base: u64, lpn: u32, seqkind: u64) {
        let offset = (seqkind >> 8).wrapping_sub(base);
        if offset >= u64::from(FAR) {
            return self.set_far(page, lpn, seqkind);
        }
        let rec = &mut self.recs[page as usize];
        let old = std::mem::replace(rec, Rec { lpn, rel: (offset as u32) << 8 | (seqkind & 0xff) as u32 });
        if old.rel >> 8 == FAR {
            self.far.remove(&page);
        }
    }

    #[cold]
    #[inline(never)]
    fn set_far(&mut self, page: u32, lpn: u32, seqkind: u64) {
        self.far.insert(page, seqkind);
        self.recs[page as usize] = Rec { lpn, rel: FAR << 8 };
    }

    /// The record of `page` as held.
    pub(crate) fn raw(&self, page: u32) -> RawRecord {
        let Rec { lpn, rel } = self.recs[page as usize];
        let far = if rel >> 8 == FAR { self.far.get(&page).copied() } else { None };
        RawRecord { lpn, rel, far }
    }

    /// Puts back a record saved by [`OobTable::raw`].
    pub(crate) fn restore(&mut self, page: u32, raw: RawRecord) {
        self.recs[page as usize] = Rec { lpn: raw.lpn, rel: raw.rel };
        match raw.far {
            Some(sk) => {
                self.far.insert(page, sk);
            }
            None => {
                self.far.remove(&page);
            }
        }
    }

    /// RAM the records take, bytes: 8 a page and the side table's entries.
    pub(crate) fn ram_bytes(&self) -> u64 {
        self.recs.bytes() + (self.far.capacity() * (std::mem::size_of::<(u32, u64)>() + 1)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_exactly_near_and_far_from_the_base() {
        let mut t = OobTable::new(4);
        let base = 1000;
        for (page, seq) in [(0, 1000u64), (1, 1000 + u64::from(FAR) - 1), (2, 1000 + u64::from(FAR)), (3, 7)] {
            let sk = Oob::pack(seq, PageKind::Map, 0b10_1101);
            t.set(page, base, 40 + page, sk);
            assert_eq!(t.get(page, base), Oob { lpn: 40 + page, seq, kind: PageKind::Map, tag: 0b10_1101 });
        }
        // Pages 2 (too far above) and 3 (below the base) are in the side table.
        assert_eq!(t.far.len(), 2);
        // A record saved and put back survives a program over it.
        let saved = t.raw(2);
        t.set(2, 5, 1, Oob::pack(6, PageKind::Data, 0));
        assert!(!t.far.contains_key(&2), "a near record drops the far one");
        assert_eq!(t.get(2, 5).seq, 6);
        t.restore(2, saved);
        assert_eq!(t.get(2, base).seq, 1000 + u64::from(FAR));
    }
}
