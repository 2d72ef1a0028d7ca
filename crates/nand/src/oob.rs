//! A page's OOB metadata: its logical page, sequence number, kind and the
//! scheme's tag, and how the medium packs the last three into one `u64` per
//! page (`seq << 8 | tag << 2 | kind`): the kind takes two bits, the tag the
//! six above them, so the tag costs no memory.

use serde::{Deserialize, Serialize};

use crate::error::NandError;

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
