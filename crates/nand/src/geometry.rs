//! The shape of a flash device and its packed physical addresses.
//!
//! A physical page address ([`Ppa`]) is a dense mixed-radix index
//! `((((((channel * ways + way) * dies + die) * planes + plane) * blocks + block) * pages) + page)`,
//! so all pages of a block are contiguous, all blocks of a die are contiguous, and a
//! die index is `ppa / pages_per_die`. It fits a `u32`: devices of up to 2^32 - 1
//! pages (16 TiB of 4 KiB pages) are supported, and larger ones are refused by
//! [`Geometry::validate`].

use serde::{Deserialize, Serialize};

use crate::error::GeometryError;

/// Physical page address: a dense index over every page of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ppa(pub u32);

/// Physical block index: a dense index over every block of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BlockId(pub u32);

/// Die index: `channel * ways * dies + way * dies + die`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DieId(pub u32);

/// The address of a page broken into its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageAddr {
    pub channel: u32,
    pub way: u32,
    pub die: u32,
    pub plane: u32,
    pub block: u32,
    pub page: u32,
}

/// The shape of a device. Build one, then call [`Geometry::validate`] before use;
/// every constructor in ftlab does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Geometry {
    pub channels: u32,
    pub ways_per_channel: u32,
    pub dies_per_way: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Data bytes per page.
    pub page_size: u32,
    /// Spare (out-of-band) bytes per page.
    pub oob_size: u32,
}

/// Largest page size accepted (1 MiB); real chips have 2 KiB to 32 KiB pages.
const MAX_PAGE_SIZE: u32 = 1 << 20;
/// Largest block accepted (65,536 pages).
const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;

impl Geometry {
    /// Checks every field: zero, overflowing or absurd values are an error that
    /// names the field and says why.
    pub fn validate(&self) -> Result<(), GeometryError> {
        let fields = [
            ("channels", self.channels),
            ("ways_per_channel", self.ways_per_channel),
            ("dies_per_way", self.dies_per_way),
            ("planes_per_die", self.planes_per_die),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
            ("page_size", self.page_size),
        ];
        for (field, v) in fields {
            if v == 0 {
                return Err(GeometryError::Zero { field });
            }
        }
        if self.page_size > MAX_PAGE_SIZE || !self.page_size.is_power_of_two() || self.page_size < 512 {
            return Err(GeometryError::Absurd {
                field: "page_size",
                value: u64::from(self.page_size),
                why: "must be a power of two between 512 bytes and 1 MiB",
            });
        }
        if self.pages_per_block > MAX_PAGES_PER_BLOCK {
            return Err(GeometryError::Absurd {
                field: "pages_per_block",
                value: u64::from(self.pages_per_block),
                why: "must be at most 65536",
            });
        }
        if self.oob_size > self.page_size {
            return Err(GeometryError::Absurd {
                field: "oob_size",
                value: u64::from(self.oob_size),
                why: "the spare area cannot be larger than the page",
            });
        }
        let total = u64::from(self.channels)
            .checked_mul(u64::from(self.ways_per_channel))
            .and_then(|v| v.checked_mul(u64::from(self.dies_per_way)))
            .and_then(|v| v.checked_mul(u64::from(self.planes_per_die)))
            .and_then(|v| v.checked_mul(u64::from(self.blocks_per_plane)))
            .and_then(|v| v.checked_mul(u64::from(self.pages_per_block)));
        match total {
            Some(t) if t < u64::from(u32::MAX) => {}
            _ => return Err(GeometryError::TooManyPages { max: u64::from(u32::MAX) - 1 }),
        }
        Ok(())
    }

    /// Number of dies (independent array units).
    #[inline]
    pub fn dies(&self) -> u32 {
        self.channels * self.ways_per_channel * self.dies_per_way
    }
    /// Blocks per die.
    #[inline]
    pub fn blocks_per_die(&self) -> u32 {
        self.planes_per_die * self.blocks_per_plane
    }
    /// Pages per die.
    #[inline]
    pub fn pages_per_die(&self) -> u32 {
        self.blocks_per_die() * self.pages_per_block
    }
    /// Total blocks.
    #[inline]
    pub fn total_blocks(&self) -> u32 {
        self.dies() * self.blocks_per_die()
    }
    /// Total pages.
    #[inline]
    pub fn total_pages(&self) -> u32 {
        self.total_blocks() * self.pages_per_block
    }
    /// Raw capacity in bytes (data area only).
    pub fn capacity_bytes(&self) -> u64 {
        u64::from(self.total_pages()) * u64::from(self.page_size)
    }

    /// Block holding `ppa`.
    #[inline]
    pub fn block_of(&self, ppa: Ppa) -> BlockId {
        BlockId(ppa.0 / self.pages_per_block)
    }
    /// Page index of `ppa` inside its block.
    #[inline]
    pub fn page_in_block(&self, ppa: Ppa) -> u32 {
        ppa.0 % self.pages_per_block
    }
    /// Address of page `page` of `block`.
    #[inline]
    pub fn ppa(&self, block: BlockId, page: u32) -> Ppa {
        Ppa(block.0 * self.pages_per_block + page)
    }
    /// Die holding `block`.
    #[inline]
    pub fn die_of_block(&self, block: BlockId) -> DieId {
        DieId(block.0 / self.blocks_per_die())
    }
    /// Die holding `ppa`.
    #[inline]
    pub fn die_of(&self, ppa: Ppa) -> DieId {
        self.die_of_block(self.block_of(ppa))
    }
    /// Channel of `die`.
    #[inline]
    pub fn channel_of_die(&self, die: DieId) -> u32 {
        die.0 / (self.ways_per_channel * self.dies_per_way)
    }
    /// Plane index (within its die) of `block`.
    #[inline]
    pub fn plane_of_block(&self, block: BlockId) -> u32 {
        (block.0 % self.blocks_per_die()) / self.blocks_per_plane
    }
    /// The `i`-th block of `die`.
    #[inline]
    pub fn block_of_die(&self, die: DieId, i: u32) -> BlockId {
        BlockId(die.0 * self.blocks_per_die() + i)
    }

    /// Packs an address; `None` if any part is out of range.
    pub fn pack(&self, a: PageAddr) -> Option<Ppa> {
        if a.channel >= self.channels
            || a.way >= self.ways_per_channel
            || a.die >= self.dies_per_way
            || a.plane >= self.planes_per_die
            || a.block >= self.blocks_per_plane
            || a.page >= self.pages_per_block
        {
            return None;
        }
        let die = (a.channel * self.ways_per_channel + a.way) * self.dies_per_way + a.die;
        let block = (die * self.planes_per_die + a.plane) * self.blocks_per_plane + a.block;
        Some(Ppa(block * self.pages_per_block + a.page))
    }

    /// Unpacks an address; `None` if `ppa` is beyond the device.
    pub fn unpack(&self, ppa: Ppa) -> Option<PageAddr> {
        if ppa.0 >= self.total_pages() {
            return None;
        }
        let page = ppa.0 % self.pages_per_block;
        let mut rest = ppa.0 / self.pages_per_block;
        let block = rest % self.blocks_per_plane;
        rest /= self.blocks_per_plane;
        let plane = rest % self.planes_per_die;
        rest /= self.planes_per_die;
        let die = rest % self.dies_per_way;
        rest /= self.dies_per_way;
        let way = rest % self.ways_per_channel;
        let channel = rest / self.ways_per_channel;
        Some(PageAddr { channel, way, die, plane, block, page })
    }
}

/// Division of `u32`s by a divisor fixed at run time, without a division
/// instruction: a shift when the divisor is a power of two, otherwise a
/// multiplication by a precomputed 64-bit reciprocal (Lemire, Kaser and Kurz,
/// "Faster remainder by direct computation", 2019), exact for every `u32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divisor {
    d: u32,
    /// `ceil(2^64 / d)`, or 0 when `d` is a power of two.
    m: u64,
    shift: u32,
}

impl Divisor {
    /// A divisor `d` (at least 1).
    pub fn new(d: u32) -> Self {
        assert!(d > 0, "division by zero");
        if d.is_power_of_two() {
            Divisor { d, m: 0, shift: d.trailing_zeros() }
        } else {
            Divisor { d, m: u64::MAX / u64::from(d) + 1, shift: 0 }
        }
    }
    /// The divisor.
    #[inline]
    pub fn get(&self) -> u32 {
        self.d
    }
    /// `n / d`.
    #[inline]
    pub fn div(&self, n: u32) -> u32 {
        if self.m == 0 {
            n >> self.shift
        } else {
            ((u128::from(self.m) * u128::from(n)) >> 64) as u32
        }
    }
    /// `n % d`.
    #[inline]
    pub fn rem(&self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
}

/// The address arithmetic of a [`Geometry`] with its divisors precomputed: the
/// same answers as the `Geometry` methods of the same names, for hot paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pages_per_block: Divisor,
    blocks_per_die: Divisor,
    blocks_per_plane: Divisor,
    dies_per_channel: Divisor,
    total_pages: u32,
    total_blocks: u32,
}

impl Layout {
    /// The layout of a validated `geometry`.
    pub fn new(geometry: &Geometry) -> Self {
        Layout {
            pages_per_block: Divisor::new(geometry.pages_per_block),
            blocks_per_die: Divisor::new(geometry.blocks_per_die()),
            blocks_per_plane: Divisor::new(geometry.blocks_per_plane),
            dies_per_channel: Divisor::new(geometry.ways_per_channel * geometry.dies_per_way),
            total_pages: geometry.total_pages(),
            total_blocks: geometry.total_blocks(),
        }
    }
    /// Pages per block.
    #[inline]
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block.get()
    }
    /// Total pages.
    #[inline]
    pub fn total_pages(&self) -> u32 {
        self.total_pages
    }
    /// Total blocks.
    #[inline]
    pub fn total_blocks(&self) -> u32 {
        self.total_blocks
    }
    /// Block holding `ppa`.
    #[inline]
    pub fn block_of(&self, ppa: Ppa) -> BlockId {
        BlockId(self.pages_per_block.div(ppa.0))
    }
    /// Page index of `ppa` inside its block.
    #[inline]
    pub fn page_in_block(&self, ppa: Ppa) -> u32 {
        self.pages_per_block.rem(ppa.0)
    }
    /// Address of page `page` of `block`.
    #[inline]
    pub fn ppa(&self, block: BlockId, page: u32) -> Ppa {
        Ppa(block.0 * self.pages_per_block.get() + page)
    }
    /// Die holding `block`.
    #[inline]
    pub fn die_of_block(&self, block: BlockId) -> DieId {
        DieId(self.blocks_per_die.div(block.0))
    }
    /// Die holding `ppa`.
    #[inline]
    pub fn die_of(&self, ppa: Ppa) -> DieId {
        self.die_of_block(self.block_of(ppa))
    }
    /// Channel of `die`.
    #[inline]
    pub fn channel_of_die(&self, die: DieId) -> u32 {
        self.dies_per_channel.div(die.0)
    }
    /// Plane index (within its die) of `block`.
    #[inline]
    pub fn plane_of_block(&self, block: BlockId) -> u32 {
        self.blocks_per_plane.div(self.blocks_per_die.rem(block.0))
    }
    /// Whether blocks `a` and `b` are in one plane of one die.
    #[inline]
    pub fn same_plane(&self, a: BlockId, b: BlockId) -> bool {
        // Blocks of a plane are contiguous: one plane is one run of block indices.
        self.blocks_per_plane.div(a.0) == self.blocks_per_plane.div(b.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn small() -> Geometry {
        Geometry {
            channels: 2,
            ways_per_channel: 3,
            dies_per_way: 2,
            planes_per_die: 2,
            blocks_per_plane: 5,
            pages_per_block: 7,
            page_size: 4096,
            oob_size: 128,
        }
    }

    #[test]
    fn zero_field_is_named() {
        let mut g = small();
        g.ways_per_channel = 0;
        let e = g.validate().unwrap_err();
        assert!(e.to_string().contains("ways_per_channel"), "{e}");
    }

    #[test]
    fn absurd_and_overflowing_values_are_refused() {
        let mut g = small();
        g.page_size = 3000;
        assert!(g.validate().unwrap_err().to_string().contains("page_size"));
        let mut g = small();
        g.blocks_per_plane = u32::MAX;
        assert!(matches!(g.validate(), Err(GeometryError::TooManyPages { .. })));
        let mut g = small();
        g.oob_size = 8192;
        assert!(g.validate().unwrap_err().to_string().contains("oob_size"));
        assert!(small().validate().is_ok());
    }

    proptest! {
        #[test]
        fn pack_unpack_roundtrip(ppa in 0u32..(2 * 3 * 2 * 2 * 5 * 7)) {
            let g = small();
            let a = g.unpack(Ppa(ppa)).unwrap();
            prop_assert_eq!(g.pack(a), Some(Ppa(ppa)));
            let die = DieId((a.channel * g.ways_per_channel + a.way) * g.dies_per_way + a.die);
            prop_assert_eq!(g.die_of(Ppa(ppa)), die);
            prop_assert_eq!(g.channel_of_die(die), a.channel);
            prop_assert_eq!(g.plane_of_block(g.block_of(Ppa(ppa))), a.plane);
            prop_assert_eq!(g.page_in_block(Ppa(ppa)), a.page);
        }
    }

    proptest! {
        #[test]
        fn divisor_matches_division(d in 1u32..=u32::MAX, n in any::<u32>()) {
            let v = Divisor::new(d);
            prop_assert_eq!(v.div(n), n / d);
            prop_assert_eq!(v.rem(n), n % d);
        }

        #[test]
        fn layout_matches_geometry(ppa in 0u32..(2 * 3 * 2 * 2 * 5 * 7), other in 0u32..(2 * 3 * 2 * 2 * 5)) {
            let g = small();
            let l = Layout::new(&g);
            let p = Ppa(ppa);
            let b = g.block_of(p);
            prop_assert_eq!(l.block_of(p), b);
            prop_assert_eq!(l.page_in_block(p), g.page_in_block(p));
            prop_assert_eq!(l.ppa(b, 3), g.ppa(b, 3));
            prop_assert_eq!(l.die_of(p), g.die_of(p));
            prop_assert_eq!(l.die_of_block(b), g.die_of_block(b));
            prop_assert_eq!(l.plane_of_block(b), g.plane_of_block(b));
            prop_assert_eq!(l.channel_of_die(g.die_of(p)), g.channel_of_die(g.die_of(p)));
            let o = BlockId(other);
            let same = g.die_of_block(b) == g.die_of_block(o) && g.plane_of_block(b) == g.plane_of_block(o);
            prop_assert_eq!(l.same_plane(b, o), same);
        }
    }

    #[test]
    fn divisor_edge_cases() {
        for d in [1u32, 2, 3, 5, 7, 255, 256, 1000, 1 << 31, u32::MAX - 1, u32::MAX] {
            let v = Divisor::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(v.div(n), n / d, "{n} / {d}");
                assert_eq!(v.rem(n), n % d, "{n} % {d}");
            }
        }
    }

    #[test]
    fn out_of_range_parts_do_not_pack() {
        let g = small();
        let a = PageAddr { channel: 2, way: 0, die: 0, plane: 0, block: 0, page: 0 };
        assert_eq!(g.pack(a), None);
        assert_eq!(g.unpack(Ppa(g.total_pages())), None);
    }
}
