//! The cached mapping table (CMT) of DFTL (Gupta et al. 2009, as 001 Section 5.1
//! describes it): a bounded set of page-mapping entries in RAM, each clean (equal
//! to its translation page on flash) or dirty (newer), kept in least-recently-used
//! order. Dirty entries are counted per translation page, so a write-back can take
//! every dirty entry of one translation page at once (DFTL's batching) and the
//! translation page with the most dirty entries is found in O(log n).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use ftlab_nand::Ppa;

const UNMAPPED: u32 = u32::MAX;

/// RAM of one cached entry: logical page, physical page and its LRU stamp.
pub const CMT_ENTRY_BYTES: u64 = 16;

#[derive(Debug, Clone, Copy)]
struct Entry {
    ppa: u32,
    dirty: bool,
    stamp: u64,
}

fn enc(p: Option<Ppa>) -> u32 {
    p.map_or(UNMAPPED, |p| p.0)
}

fn dec(p: u32) -> Option<Ppa> {
    (p != UNMAPPED).then_some(Ppa(p))
}

/// Cached mapping entries, in LRU order, with dirty counts per translation page.
#[derive(Debug, Clone)]
pub struct Cmt {
    capacity: u32,
    entries_per_tpage: u32,
    map: BTreeMap<u32, Entry>,
    /// LRU order of the clean and of the dirty entries: stamp -> logical page.
    clean: BTreeMap<u64, u32>,
    dirty: BTreeMap<u64, u32>,
    clock: u64,
    dirty_per_tpage: Vec<u32>,
    by_dirt: BTreeSet<(u32, Reverse<u32>)>,
    high_water: u32,
    /// Host lookups ([`Cmt::lookup`]) since [`Cmt::reset_counters`].
    counters: CmtCounters,
}

/// Lookups of the cached mapping table: a hit finds the entry cached, a miss
/// must fetch it from its translation page (001 Figure 8(a)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CmtCounters {
    pub hits: u64,
    pub misses: u64,
}

impl CmtCounters {
    /// Hits over lookups; 0 before the first lookup.
    pub fn hit_ratio(&self) -> f64 {
        let lookups = self.hits + self.misses;
        if lookups == 0 {
            0.0
        } else {
            self.hits as f64 / lookups as f64
        }
    }

    /// The gauges of a CMT: `cmt_hits`, `cmt_misses` and `cmt_hit_ratio`.
    pub fn gauges(&self) -> Vec<(&'static str, f64)> {
        vec![("cmt_hits", self.hits as f64), ("cmt_misses", self.misses as f64), ("cmt_hit_ratio", self.hit_ratio())]
    }
}

impl Cmt {
    /// An empty table of nominal `capacity` entries over `tpages` translation pages
    /// of `entries_per_tpage` entries each.
    pub fn new(capacity: u32, entries_per_tpage: u32, tpages: u32) -> Self {
        Cmt {
            capacity,
            entries_per_tpage,
            map: BTreeMap::new(),
            clean: BTreeMap::new(),
            dirty: BTreeMap::new(),
            clock: 0,
            dirty_per_tpage: vec![0; tpages as usize],
            by_dirt: BTreeSet::new(),
            high_water: 0,
            counters: CmtCounters::default(),
        }
    }
    /// Nominal capacity in entries.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
    /// Cached entries.
    pub fn len(&self) -> u32 {
        self.map.len() as u32
    }
    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Dirty entries.
    pub fn dirty_len(&self) -> u32 {
        self.dirty.len() as u32
    }
    /// Most entries ever cached at once.
    pub fn high_water(&self) -> u32 {
        self.high_water
    }
    /// The cached mapping of `lpn` (`Some(None)`: cached as unmapped), without
    /// touching the LRU order.
    pub fn peek(&self, lpn: u32) -> Option<Option<Ppa>> {
        self.map.get(&lpn).map(|e| dec(e.ppa))
    }
    /// Whether `lpn` is cached and dirty.
    pub fn is_dirty(&self, lpn: u32) -> bool {
        self.map.get(&lpn).is_some_and(|e| e.dirty)
    }
    /// The cached mapping of `lpn`, made most recently used; counted as a hit,
    /// or as a miss when it is not cached.
    pub fn lookup(&mut self, lpn: u32) -> Option<Option<Ppa>> {
        let Some(&e) = self.map.get(&lpn) else {
            self.counters.misses += 1;
            return None;
        };
        self.counters.hits += 1;
        self.restamp(lpn, e);
        Some(dec(e.ppa))
    }
    /// Hits and misses of [`Cmt::lookup`] since the last reset.
    pub fn counters(&self) -> CmtCounters {
        self.counters
    }
    /// Zeroes the hit and miss counts (when measurement starts).
    pub fn reset_counters(&mut self) {
        self.counters = CmtCounters::default();
    }
    fn restamp(&mut self, lpn: u32, e: Entry) {
        self.clock += 1;
        let list = if e.dirty { &mut self.dirty } else { &mut self.clean };
        list.remove(&e.stamp);
        list.insert(self.clock, lpn);
        if let Some(x) = self.map.get_mut(&lpn) {
            x.stamp = self.clock;
        }
    }
    fn tpage(&self, lpn: u32) -> usize {
        (lpn / self.entries_per_tpage) as usize
    }
    fn add_dirt(&mut self, lpn: u32, up: bool) {
        let t = self.tpage(lpn);
        let n = self.dirty_per_tpage[t];
        self.by_dirt.remove(&(n, Reverse(t as u32)));
        let n = if up { n + 1 } else { n - 1 };
        self.dirty_per_tpage[t] = n;
        if n > 0 {
            self.by_dirt.insert((n, Reverse(t as u32)));
        }
    }
    /// Caches `lpn` as read from its translation page (it must not be cached).
    pub fn insert_clean(&mut self, lpn: u32, ppa: Option<Ppa>) {
        self.clock += 1;
        let old = self.map.insert(lpn, Entry { ppa: enc(ppa), dirty: false, stamp: self.clock });
        debug_assert!(old.is_none(), "lpn {lpn} cached twice");
        self.clean.insert(self.clock, lpn);
        self.high_water = self.high_water.max(self.len());
    }
    /// Records a new mapping of `lpn` (cached or not), dirty and most recently used.
    pub fn set_dirty(&mut self, lpn: u32, ppa: Option<Ppa>) {
        self.clock += 1;
        let stamp = self.clock;
        match self.map.insert(lpn, Entry { ppa: enc(ppa), dirty: true, stamp }) {
            Some(old) if old.dirty => {
                self.dirty.remove(&old.stamp);
            }
            Some(old) => {
                self.clean.remove(&old.stamp);
                self.add_dirt(lpn, true);
            }
            None => self.add_dirt(lpn, true),
        }
        self.dirty.insert(stamp, lpn);
        self.high_water = self.high_water.max(self.len());
    }
    /// Updates `lpn` to `ppa` if it is cached (marking it dirty, LRU order kept);
    /// returns whether it was cached.
    pub fn update_cached(&mut self, lpn: u32, ppa: Ppa) -> bool {
        let Some(e) = self.map.get_mut(&lpn) else {
            return false;
        };
        e.ppa = ppa.0;
        self.mark_dirty(lpn)
    }
    /// Marks `lpn` dirty if it is cached (LRU order kept); returns whether
    /// it was cached.
    pub fn mark_dirty(&mut self, lpn: u32) -> bool {
        let Some(e) = self.map.get_mut(&lpn) else {
            return false;
        };
        if !e.dirty {
            e.dirty = true;
            let stamp = e.stamp;
            self.clean.remove(&stamp);
            self.dirty.insert(stamp, lpn);
            self.add_dirt(lpn, true);
        }
        true
    }
    /// The cached pages in `first..last`, in logical order, with whether each
    /// is dirty.
    pub fn iter_range(&self, first: u32, last: u32) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.map.range(first..last).map(|(&l, e)| (l, e.dirty))
    }
    /// The least recently used entry and whether it is dirty.
    pub fn oldest(&self) -> Option<(u32, bool)> {
        let c = self.clean.first_key_value();
        let d = self.dirty.first_key_value();
        match (c, d) {
            (Some((cs, &cl)), Some((ds, &dl))) => Some(if cs < ds { (cl, false) } else { (dl, true) }),
            (Some((_, &cl)), None) => Some((cl, false)),
            (None, Some((_, &dl))) => Some((dl, true)),
            (None, None) => None,
        }
    }
    /// The least recently used clean entry.
    pub fn oldest_clean(&self) -> Option<u32> {
        self.clean.first_key_value().map(|(_, &l)| l)
    }
    /// Drops `lpn` from the table (a dirty entry must have been written back).
    pub fn remove(&mut self, lpn: u32) {
        if let Some(e) = self.map.remove(&lpn) {
            if e.dirty {
                self.dirty.remove(&e.stamp);
                self.add_dirt(lpn, false);
            } else {
                self.clean.remove(&e.stamp);
            }
        }
    }
    /// Takes every dirty entry of translation page `tpage`, marking them clean (the
    /// caller writes them to the translation page).
    pub fn clean_tpage(&mut self, tpage: u32) -> Vec<(u32, Option<Ppa>)> {
        if self.dirty_per_tpage[tpage as usize] == 0 {
            return Vec::new();
        }
        let first = tpage * self.entries_per_tpage;
        let last = first.saturating_add(self.entries_per_tpage);
        let mut out = Vec::new();
        for (&lpn, e) in self.map.range_mut(first..last) {
            if e.dirty {
                e.dirty = false;
                self.dirty.remove(&e.stamp);
                self.clean.insert(e.stamp, lpn);
                out.push((lpn, dec(e.ppa)));
            }
        }
        let n = std::mem::take(&mut self.dirty_per_tpage[tpage as usize]);
        self.by_dirt.remove(&(n, Reverse(tpage)));
        out
    }
    /// The translation page with the most dirty entries (lowest number on ties).
    pub fn most_dirty_tpage(&self) -> Option<u32> {
        self.by_dirt.last().map(|&(_, Reverse(t))| t)
    }
    /// Dirty entries of translation page `tpage`.
    pub fn dirty_in(&self, tpage: u32) -> u32 {
        self.dirty_per_tpage[tpage as usize]
    }
    /// Every cached `(lpn, mapping, dirty)`, in logical order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Option<Ppa>, bool)> + '_ {
        self.map.iter().map(|(&l, e)| (l, dec(e.ppa), e.dirty))
    }
    /// RAM used, in bytes: the entries at their high-water mark (at least the
    /// nominal capacity), and the dirty count of every translation page with its
    /// ordering (12 bytes).
    pub fn ram_bytes(&self) -> u64 {
        u64::from(self.capacity.max(self.high_water)) * CMT_ENTRY_BYTES + self.dirty_per_tpage.len() as u64 * 12
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lru_order_spans_clean_and_dirty_entries() {
        let mut c = Cmt::new(4, 4, 3);
        c.insert_clean(1, Some(Ppa(10)));
        c.set_dirty(5, Some(Ppa(50)));
        c.insert_clean(2, None);
        assert_eq!(c.oldest(), Some((1, false)));
        assert_eq!(c.lookup(1), Some(Some(Ppa(10))));
        assert_eq!(c.oldest(), Some((5, true)));
        assert_eq!(c.oldest_clean(), Some(2));
        assert!(c.update_cached(2, Ppa(20)));
        assert!(!c.update_cached(9, Ppa(90)));
        assert_eq!(c.dirty_len(), 2);
        // 2 kept its place in the LRU order when it turned dirty.
        assert_eq!(c.oldest(), Some((5, true)));
        c.remove(5);
        assert_eq!(c.oldest(), Some((2, true)));
    }

    #[test]
    fn write_back_takes_a_translation_page_and_picks_the_dirtiest() {
        let mut c = Cmt::new(8, 4, 3);
        for lpn in [4, 5, 6, 9] {
            c.set_dirty(lpn, Some(Ppa(lpn + 100)));
        }
        c.insert_clean(7, Some(Ppa(7)));
        assert_eq!(c.most_dirty_tpage(), Some(1));
        assert_eq!(c.dirty_in(1), 3);
        let got = c.clean_tpage(1);
        assert_eq!(got, vec![(4, Some(Ppa(104))), (5, Some(Ppa(105))), (6, Some(Ppa(106)))]);
        assert_eq!(c.most_dirty_tpage(), Some(2));
        assert_eq!((c.len(), c.dirty_len()), (5, 1));
        assert!(c.clean_tpage(1).is_empty());
        c.set_dirty(4, None);
        assert_eq!(c.peek(4), Some(None));
        assert_eq!(c.dirty_in(1), 1);
        assert_eq!(c.high_water(), 5);
    }
}
