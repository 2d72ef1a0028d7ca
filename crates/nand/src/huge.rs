//! Large fixed-length tables of plain values (a device's per-page records, a
//! scheme's page table) in memory the kernel may back with huge pages.
//!
//! A replay looks its tables up at random: the 16 GiB benchmark device keeps
//! about 80 MB of them (OOB records, page tokens, page table, valid bits,
//! the engine's versions), and with 4 KiB pages nearly every lookup misses
//! the TLB as well as the cache. A table is an anonymous mapping. On Linux
//! one made by [`HugeArray::filled`] of at least
//! [`HugeArray::HUGE_THRESHOLD`] bytes is advised `MADV_HUGEPAGE`, so 2 MiB
//! pages cover it where transparent huge pages are enabled ("always" or
//! "madvise"): filling it touches every page anyway, so this costs no memory.
//! One made by [`HugeArray::zeroed`] is not advised: its pages become
//! resident only when first written, as a zeroed `Vec`'s do, so a table the
//! run touches only in part (the tokens of pages never programmed) costs
//! only what it touches. The contents and every result are the same either
//! way: only the speed differs. As for a `Vec`, running out of memory aborts.

use std::alloc::Layout;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;

/// A fixed-length array of `T` (see the module doc). It dereferences to a
/// slice.
pub struct HugeArray<T: Pod> {
    /// An anonymous mapping of exactly `len * size_of::<T>()` bytes.
    map: memmap2::MmapMut,
    /// Whether it was made by [`HugeArray::filled`] (a clone is made alike).
    huge: bool,
    _t: PhantomData<T>,
}

impl<T: Pod> HugeArray<T> {
    /// Tables of at least this many bytes (2 MiB, one huge page) are advised
    /// to use huge pages.
    pub const HUGE_THRESHOLD: usize = 2 << 20;

    /// `len` copies of `value`, every page written now and advised huge
    /// (see the module doc).
    pub fn filled(len: usize, value: T) -> Self {
        let mut table = Self::map(len, true);
        table.fill(value);
        table
    }

    /// `len` zeros, each page resident once first written (see the module
    /// doc).
    pub fn zeroed(len: usize) -> Self {
        Self::map(len, false)
    }

    /// An anonymous mapping of `len` zeros, advised huge if `huge` and large
    /// enough.
    fn map(len: usize, huge: bool) -> Self {
        let layout = Layout::array::<T>(len).unwrap_or_else(|_| capacity_overflow());
        let Ok(mut map) = memmap2::MmapMut::map_anon(layout.size()) else { std::alloc::handle_alloc_error(layout) };
        #[cfg(target_os = "linux")]
        if huge && layout.size() >= Self::HUGE_THRESHOLD {
            // Only a hint: without it the table works the same, on 4 KiB pages.
            let _ = map.advise(memmap2::Advice::HugePage);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        // A mapping starts on a page boundary, which suits any `T`.
        if bytemuck::try_cast_slice_mut::<u8, T>(&mut map).is_err() {
            std::alloc::handle_alloc_error(layout)
        }
        HugeArray { map, huge, _t: PhantomData }
    }

    /// The bytes the table holds.
    pub fn bytes(&self) -> u64 {
        self.map.len() as u64
    }
}

#[cold]
fn capacity_overflow() -> ! {
    panic!("capacity overflow")
}

impl<T: Pod> Deref for HugeArray<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        bytemuck::cast_slice(&self.map)
    }
}

impl<T: Pod> DerefMut for HugeArray<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(&mut self.map)
    }
}

impl<T: Pod> AsRef<[T]> for HugeArray<T> {
    #[inline(always)]
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T: Pod> Clone for HugeArray<T> {
    fn clone(&self) -> Self {
        let mut copy = Self::map(self.len(), self.huge);
        copy.copy_from_slice(self);
        copy
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for HugeArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HugeArray").field("len", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_holds_its_value_at_every_size() {
        let small = HugeArray::filled(1000, 7u32);
        assert_eq!(small.len(), 1000);
        assert_eq!(small.bytes(), 4000);
        assert!(small.iter().all(|&v| v == 7));
        let large = HugeArray::filled(1 << 20, u32::MAX);
        assert_eq!(large.len(), 1 << 20);
        assert_eq!(large.bytes(), 4 << 20);
        assert!(large.iter().all(|&v| v == u32::MAX));
        let zeros = HugeArray::<u16>::zeroed(3 << 19);
        assert_eq!(zeros.len(), 3 << 19);
        assert!(zeros.iter().all(|&v| v == 0));
        let mut written = zeros.clone();
        written[5] = 9;
        assert_eq!((zeros[5], written[5]), (0, 9));
        let empty = HugeArray::filled(0, 1u64);
        assert!(empty.is_empty());
        assert!(empty.clone().is_empty());
    }

    /// The kB of `table`'s mapping that `/proc/self/smaps` says are on
    /// transparent huge pages.
    #[cfg(target_os = "linux")]
    fn huge_kb<T: Pod>(table: &HugeArray<T>) -> u64 {
        let start = table.as_ptr() as usize;
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
            if let Some((a, b)) = range.filter(|_| !line.ends_with(':') && line.contains(' ')) {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                    inside = a <= start && start < b;
                    continue;
                }
            }
            if let Some(kb) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
                return kb.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            }
        }
        0
    }

    /// Where the system offers transparent huge pages, a filled table is on
    /// them and a zeroed one is not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_filled_table_is_on_huge_pages_where_the_system_offers_them() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        if !(mode.contains("[always]") || mode.contains("[madvise]")) {
            eprintln!("transparent huge pages not offered here ({}): nothing to check", mode.trim());
            return;
        }
        let filled = HugeArray::filled(4 << 20, 1u32);
        assert!(huge_kb(&filled) >= 2048, "a 16 MiB filled table has no huge page");
        if mode.contains("[madvise]") {
            let mut zeroed = HugeArray::<u32>::zeroed(4 << 20);
            zeroed.fill(1);
            assert_eq!(huge_kb(&zeroed), 0, "a zeroed table was advised huge");
        }
    }

    #[test]
    fn a_mapped_table_reads_back_what_was_written_and_clones_it() {
        let mut t = HugeArray::filled(1 << 19, [u32::MAX, 0u32]);
        for i in (0..t.len()).step_by(997) {
            t[i] = [i as u32, !(i as u32)];
        }
        let c = t.clone();
        t[0] = [1, 1];
        for i in 0..t.len() {
            let want = if i % 997 == 0 { [i as u32, !(i as u32)] } else { [u32::MAX, 0] };
            assert_eq!(c[i], want, "entry {i}");
        }
        assert_eq!(t[0], [1, 1]);
    }
}
