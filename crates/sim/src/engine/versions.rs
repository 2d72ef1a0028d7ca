//! The engine's model of what each logical page holds: a version per page,
//! what the integrity check expects a read to return.
//!
//! A page's version counts the writes and trims of that page alone: a write
//! makes it odd (the next odd number), a trim of written data makes it even
//! (the next even number), 0 is a page never written. Data is expected iff
//! the version is odd, and every write of a page gets a version no earlier
//! write of it had, trims included: so a read that returns any older copy of
//! the page (a stale read, a lost write) or another page's data returns a
//! token unlike the one expected, until one page has taken 2^31 writes (the
//! token keeps 32 bits of version).
//!
//! Memory: 2 bytes a page for the low 16 bits; the high bits of the few pages
//! written more than 32,767 times are in a side table.

use std::collections::HashMap;

use ftlab_nand::HugeArray;

/// Versions of every logical page (see the module doc).
#[derive(Debug)]
pub(crate) struct Versions {
    low: HugeArray<u16>,
    high: HashMap<u32, u16>,
}

impl Versions {
    /// Versions for `pages` pages, none written.
    pub(crate) fn new(pages: u64) -> Self {
        Versions { low: HugeArray::filled(pages as usize, 0), high: HashMap::new() }
    }

    /// The version of `lpn`.
    #[inline(always)]
    pub(crate) fn get(&self, lpn: u64) -> u32 {
        let low = u32::from(self.low[lpn as usize]);
        if self.high.is_empty() {
            return low;
        }
        low | self.high.get(&(lpn as u32)).map_or(0, |&h| u32::from(h) << 16)
    }

    /// Starts loading `lpn`'s version into the CPU cache.
    #[inline(always)]
    pub(crate) fn prefetch(&self, lpn: u64) {
        prefetch_index::prefetch_index(&self.low, lpn as usize);
    }

    #[inline(always)]
    fn set(&mut self, lpn: u64, v: u32) {
        self.low[lpn as usize] = v as u16;
        if v >> 16 != 0 {
            self.high.insert(lpn as u32, (v >> 16) as u16);
        }
    }

    /// The version the next write of `lpn` takes (odd, above every earlier
    /// one); [`Versions::written`] records it once the write is done.
    #[inline(always)]
    pub(crate) fn next_write(&self, lpn: u64) -> u32 {
        let v = self.get(lpn);
        // Past 2^32 - 1 the token's 32 bits would repeat an earlier version.
        (v | 1).wrapping_add(2 * (v & 1))
    }

    /// Records a write of `lpn` with `version` ([`Versions::next_write`]).
    #[inline(always)]
    pub(crate) fn written(&mut self, lpn: u64, version: u32) {
        self.set(lpn, version);
    }

    /// Records a trim of `lpn`: no data expected.
    #[inline]
    pub(crate) fn trimmed(&mut self, lpn: u64) {
        let v = self.get(lpn);
        self.set(lpn, v.wrapping_add(v & 1));
    }

    /// RAM, bytes (allocated capacity).
    pub(crate) fn ram_bytes(&self) -> u64 {
        self.low.bytes() + (self.high.capacity() * (std::mem::size_of::<(u32, u16)>() + 1)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_of_a_page_gets_a_new_odd_version_and_a_trim_an_even_one() {
        let mut v = Versions::new(3);
        let mut seen = std::collections::HashSet::new();
        for step in 0..70_000u32 {
            if step % 1000 == 999 {
                v.trimmed(1);
                assert_eq!(v.get(1) % 2, 0, "a trimmed page expects nothing");
                continue;
            }
            let w = v.next_write(1);
            assert!(w % 2 == 1 && seen.insert(w), "write {step}: version {w} odd and new");
            v.written(1, w);
            assert_eq!(v.get(1), w);
        }
        assert!(v.get(1) > 1 << 16, "past 16 bits, through the side table: {}", v.get(1));
        assert_eq!((v.get(0), v.get(2)), (0, 0), "other pages untouched");
        v.trimmed(0);
        assert_eq!(v.get(0), 0, "trimming a page never written leaves it unwritten");
        assert_eq!(v.next_write(0), 1);
    }
}
