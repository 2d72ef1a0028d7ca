//! Page-level mapping: a logical-to-physical table (4 bytes a logical page) and a
//! validity bitmap over physical pages (1 bit a page). The reverse direction is
//! the OOB of each page, which garbage collection reads with the data it moves.

use ftlab_nand::geometry::Layout;
use ftlab_nand::{BlockId, DieId, Geometry, HugeArray, PageKind, Ppa};

use crate::victim::VictimPicker;
use crate::Flash;

const UNMAPPED: u32 = u32::MAX;

/// Logical-to-physical page table.
#[derive(Debug, Clone)]
pub struct PageTable {
    l2p: HugeArray<u32>,
    mapped: u32,
}

impl PageTable {
    /// A table of `logical_pages` entries, all unmapped.
    pub fn new(logical_pages: u32) -> Self {
        PageTable { l2p: HugeArray::filled(logical_pages as usize, UNMAPPED), mapped: 0 }
    }
    /// Where logical page `lpn` is.
    #[inline]
    pub fn get(&self, lpn: usize) -> Option<Ppa> {
        let p = self.l2p[lpn];
        (p != UNMAPPED).then_some(Ppa(p))
    }
    /// Starts loading `lpn`'s entry into the CPU cache ([`crate::Ftl::prefetch`]).
    #[inline]
    pub fn prefetch(&self, lpn: usize) {
        prefetch_index::prefetch_index(&self.l2p, lpn);
    }
    /// Where logical page `lpn` is, if it is in range and mapped.
    #[inline]
    pub fn lookup(&self, lpn: usize) -> Option<Ppa> {
        self.l2p.get(lpn).copied().filter(|&p| p != UNMAPPED).map(Ppa)
    }
    /// The die holding logical page `lpn`, if it is in range and mapped (what
    /// [`crate::Placement::die_of`] answers for a page-mapped scheme).
    #[inline]
    pub fn die_of(&self, lpn: crate::Lpn, layout: &Layout) -> Option<DieId> {
        let p = *self.l2p.get(lpn.0 as usize)?;
        (p != UNMAPPED).then(|| layout.die_of(Ppa(p)))
    }
    /// Maps `lpn` to `ppa`; returns the previous location.
    #[inline]
    pub fn set(&mut self, lpn: usize, ppa: Ppa) -> Option<Ppa> {
        let old = std::mem::replace(&mut self.l2p[lpn], ppa.0);
        if old == UNMAPPED {
            self.mapped += 1;
            None
        } else {
            Some(Ppa(old))
        }
    }
    /// Maps `lpn`, known to be at `old`, to `ppa`, without reading the entry.
    #[inline]
    pub fn replace(&mut self, lpn: usize, old: Option<Ppa>, ppa: Ppa) {
        debug_assert_eq!(self.get(lpn), old);
        if old.is_none() {
            self.mapped += 1;
        }
        self.l2p[lpn] = ppa.0;
    }
    /// Moves `lpn` from `from` to `to` (garbage collection); an entry that no
    /// longer points at `from` is left alone. Returns whether it moved.
    #[inline]
    pub fn relocate(&mut self, lpn: usize, from: Ppa, to: Ppa) -> bool {
        let e = &mut self.l2p[lpn];
        let hit = *e == from.0;
        if hit {
            *e = to.0;
        }
        hit
    }
    /// Unmaps `lpn`; returns the previous location.
    #[inline]
    pub fn unmap(&mut self, lpn: usize) -> Option<Ppa> {
        let old = std::mem::replace(&mut self.l2p[lpn], UNMAPPED);
        (old != UNMAPPED).then(|| {
            self.mapped -= 1;
            Ppa(old)
        })
    }
    /// Number of mapped logical pages.
    pub fn mapped(&self) -> u32 {
        self.mapped
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.l2p.len()
    }
    /// Whether the table has no entry.
    pub fn is_empty(&self) -> bool {
        self.l2p.is_empty()
    }
    /// Every mapped `(lpn, ppa)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, Ppa)> + '_ {
        self.l2p.iter().enumerate().filter(|(_, &p)| p != UNMAPPED).map(|(l, &p)| (l, Ppa(p)))
    }
    /// RAM used, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        self.l2p.len() as u64 * 4
    }
    /// Bytes the table holds allocated.
    pub fn capacity_bytes(&self) -> u64 {
        self.l2p.bytes()
    }
}

/// One bit per physical page: set when the page holds the current copy of a
/// logical page.
#[derive(Debug, Clone)]
pub struct ValidMap {
    bits: HugeArray<u64>,
}

impl ValidMap {
    /// All pages invalid.
    pub fn new(pages: u32) -> Self {
        ValidMap { bits: HugeArray::filled((pages as usize).div_ceil(64), 0) }
    }
    /// Whether `ppa` is valid.
    #[inline]
    pub fn get(&self, ppa: Ppa) -> bool {
        self.bits[(ppa.0 / 64) as usize] & (1 << (ppa.0 % 64)) != 0
    }
    /// Marks `ppa` valid.
    #[inline]
    pub fn set(&mut self, ppa: Ppa) {
        self.bits[(ppa.0 / 64) as usize] |= 1 << (ppa.0 % 64);
    }
    /// A performance hint: starts loading `ppa`'s bit into the CPU cache.
    #[inline]
    pub fn prefetch(&self, ppa: Ppa) {
        prefetch_index::prefetch_index(&self.bits, (ppa.0 / 64) as usize);
    }
    /// Marks `ppa` invalid.
    #[inline]
    pub fn clear(&mut self, ppa: Ppa) {
        self.bits[(ppa.0 / 64) as usize] &= !(1 << (ppa.0 % 64));
    }
    /// Valid pages among `first..first + n`.
    pub fn count(&self, first: Ppa, n: u32) -> u32 {
        self.words(first, n).map(|(_, bits)| bits.count_ones()).sum()
    }
    /// The words covering `first..first + n`, each with its first page and
    /// its bits outside the range cleared.
    #[inline]
    fn words(&self, first: Ppa, n: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        let (start, end) = (first.0, first.0 + n);
        ((start / 64)..end.div_ceil(64)).map(move |w| {
            let base = w * 64;
            let mut bits = self.bits[w as usize];
            if base < start {
                bits &= !0u64 << (start - base);
            }
            if base + 64 > end {
                bits &= !0u64 >> (base + 64 - end);
            }
            (base, bits)
        })
    }
    /// Appends the valid pages among `first..first + n` to `out`, in order:
    /// what [`ValidMap::iter_set`] yields, in a plain loop (a victim's pages
    /// are collected this way on every garbage collection).
    #[inline]
    pub fn extend_set(&self, first: Ppa, n: u32, out: &mut Vec<Ppa>) {
        for (base, mut bits) in self.words(first, n) {
            while bits != 0 {
                out.push(Ppa(base + bits.trailing_zeros()));
                bits &= bits - 1;
            }
        }
    }
    /// The valid pages among `first..first + n`, in order, a word at a time.
    pub fn iter_set(&self, first: Ppa, n: u32) -> impl Iterator<Item = Ppa> + '_ {
        self.words(first, n).flat_map(move |(base, mut bits)| {
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let i = bits.trailing_zeros();
                    bits &= bits - 1;
                    Ppa(base + i)
                })
            })
        })
    }
    /// Marks `first..first + n` invalid.
    pub fn clear_range(&mut self, first: Ppa, n: u32) {
        let (start, end) = (first.0, first.0 + n);
        for w in (start / 64)..end.div_ceil(64) {
            let base = w * 64;
            let mut keep = 0u64;
            if base < start {
                keep |= !(!0u64 << (start - base));
            }
            if base + 64 > end {
                keep |= !(!0u64 >> (base + 64 - end));
            }
            self.bits[w as usize] &= keep;
        }
    }
    /// RAM used, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        self.bits.len() as u64 * 8
    }
    /// Bytes the bitmap holds allocated.
    pub fn capacity_bytes(&self) -> u64 {
        self.bits.bytes()
    }
}

/// The invariants of a page-mapped FTL against the medium: every mapped logical
/// page is marked valid and its page's OOB names it, and each block's valid bits,
/// mapped pages and the picker's valid count agree.
pub fn check_page_map(
    geometry: &Geometry,
    table: &PageTable,
    valid: &ValidMap,
    picker: &dyn VictimPicker,
    flash: &Flash,
) -> Result<(), String> {
    let g = geometry;
    let mut per_block = vec![0u32; g.total_blocks() as usize];
    for (lpn, ppa) in table.iter() {
        if !valid.get(ppa) {
            return Err(format!("lpn {lpn} maps to {ppa:?}, which is not marked valid"));
        }
        match flash.nand().peek_oob(ppa) {
            Some(oob) if oob.lpn as usize == lpn && oob.kind == PageKind::Data => {}
            other => return Err(format!("lpn {lpn} maps to {ppa:?}, whose OOB is {other:?}")),
        }
        per_block[g.block_of(ppa).0 as usize] += 1;
    }
    for b in (0..g.total_blocks()).map(BlockId) {
        let counted = valid.count(g.ppa(b, 0), g.pages_per_block);
        if counted != per_block[b.0 as usize] || counted != picker.valid(b) {
            return Err(format!(
                "block {}: {} mapped pages, {counted} valid bits, picker says {}",
                b.0,
                per_block[b.0 as usize],
                picker.valid(b)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn table_matches_a_hashmap(ops in proptest::collection::vec((0usize..32, proptest::option::of(0u32..1000)), 1..200)) {
            let mut t = PageTable::new(32);
            let mut m: HashMap<usize, u32> = HashMap::new();
            for (lpn, op) in ops {
                match op {
                    Some(p) => prop_assert_eq!(t.set(lpn, Ppa(p)).map(|x| x.0), m.insert(lpn, p)),
                    None => prop_assert_eq!(t.unmap(lpn).map(|x| x.0), m.remove(&lpn)),
                }
                prop_assert_eq!(t.mapped() as usize, m.len());
            }
            for l in 0..32 {
                prop_assert_eq!(t.get(l).map(|x| x.0), m.get(&l).copied());
            }
        }
    }

    #[test]
    fn valid_map_sets_and_counts() {
        let mut v = ValidMap::new(130);
        v.set(Ppa(0));
        v.set(Ppa(64));
        v.set(Ppa(129));
        v.clear(Ppa(64));
        assert!(v.get(Ppa(0)) && !v.get(Ppa(64)) && v.get(Ppa(129)));
        assert_eq!(v.count(Ppa(0), 130), 2);
        assert_eq!(v.count(Ppa(1), 128), 0);
        assert_eq!(v.iter_set(Ppa(0), 130).collect::<Vec<_>>(), vec![Ppa(0), Ppa(129)]);
        v.set(Ppa(70));
        v.clear_range(Ppa(0), 128);
        assert_eq!(v.iter_set(Ppa(0), 130).collect::<Vec<_>>(), vec![Ppa(129)]);
    }

    proptest! {
        #[test]
        fn clear_range_clears_exactly_the_range(first in 0u32..200, n in 0u32..200) {
            let mut v = ValidMap::new(400);
            for p in 0..400 {
                v.set(Ppa(p));
            }
            v.clear_range(Ppa(first), n);
            for p in 0..400 {
                prop_assert_eq!(v.get(Ppa(p)), !(first..first + n).contains(&p), "page {}", p);
            }
        }
    }

    proptest! {
        #[test]
        fn set_pages_and_counts_agree_with_the_bits(
            pages in proptest::collection::btree_set(0u32..400, 0..200),
            first in 0u32..300,
            n in 0u32..100,
        ) {
            let mut v = ValidMap::new(400);
            for &p in &pages {
                v.set(Ppa(p));
            }
            let want: Vec<Ppa> = pages.iter().copied().filter(|p| (first..first + n).contains(p)).map(Ppa).collect();
            prop_assert_eq!(v.iter_set(Ppa(first), n).collect::<Vec<_>>(), want.clone());
            let mut got = vec![Ppa(u32::MAX)];
            v.extend_set(Ppa(first), n, &mut got);
            prop_assert_eq!(&got[1..], &want[..]);
            prop_assert_eq!(v.count(Ppa(first), n) as usize, want.len());
        }
    }
}
