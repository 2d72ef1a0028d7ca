//! The SSC's map from disk block to flash page: a statically sized hash table
//! with closed hashing and linear probing, as the OpenSSD prototype of
//! 003_9b28d6a0046a8156.txt (Section 3.3.2, "Address mappings": a table allocated
//! at device boot, a lightweight hash of modulo operations and bit-wise
//! rotations, conflicts resolved by linear probing). Deletion shifts the
//! following entries of the probe run back (no tombstones), so a lookup never
//! walks past an empty slot.
//!
//! An entry lives while its disk block is cached or still has a page (current
//! or stale) on the flash; there are never more entries than physical pages, and
//! the table has at least 4/3 slots per physical page (load at most 3/4).

/// No physical page.
pub(super) const NONE: u32 = u32::MAX;
/// The key of an empty slot (disk blocks are below 2^31).
const EMPTY: u32 = u32::MAX;

/// Flags of an entry.
pub(super) mod flag {
    /// The cached copy is dirty.
    pub const DIRTY: u8 = 1;
    /// The OOB of the cached copy says clean (it was written clean, or a GC copy
    /// of a cleaned page).
    pub const FLASH_CLEAN: u8 = 2;
    /// The live record of the block is a clean record (else an evict record).
    pub const REC_CLEAN: u8 = 4;
    /// An evict since the last flush must be made durable by the next flush.
    pub const PENDING_EVICT: u8 = 8;
    /// A clean since the last flush must be made durable by the next flush.
    pub const PENDING_CLEAN: u8 = 16;
}

/// One disk block's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    /// The disk block ([`EMPTY`] for an empty slot).
    pub key: u32,
    /// Where the cached copy is, or [`NONE`] when the block is not cached.
    pub mapped: u32,
    /// The newest data page of the block on the flash (valid or stale), which a
    /// recovery would find, or [`NONE`] when there is none or a live evict record
    /// makes every data page of the block dead for recovery.
    pub newest: u32,
    /// The block's live record page (see [`super::Ssc`]), or [`NONE`].
    pub rec: u32,
    /// Data pages of the block on the flash, valid or stale.
    pub copies: u32,
    /// [`flag`]s.
    pub flags: u8,
}

impl Entry {
    const VACANT: Entry = Entry { key: EMPTY, mapped: NONE, newest: NONE, rec: NONE, copies: 0, flags: 0 };

    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn set(&mut self, f: u8, on: bool) {
        if on {
            self.flags |= f;
        } else {
            self.flags &= !f;
        }
    }
    /// Whether garbage collection must copy the cached page rather than drop
    /// it: it is dirty, or an older copy of the block is still on the flash
    /// (dropping the newest would let a recovery find the older one).
    #[inline]
    pub fn must_copy(&self) -> bool {
        self.has(flag::DIRTY) || self.copies > 1
    }
    /// Whether a live evict record makes every data page of the block dead for
    /// recovery.
    #[inline]
    pub fn covered(&self) -> bool {
        self.rec != NONE && !self.has(flag::REC_CLEAN)
    }
}

/// The table.
#[derive(Debug, Clone)]
pub(super) struct BlockTable {
    slots: Vec<Entry>,
    mask: usize,
    len: usize,
}

impl BlockTable {
    /// A table for at most `entries` entries: a power of two of at least
    /// `entries * 4 / 3` slots.
    pub fn new(entries: u32) -> Self {
        let want = (u64::from(entries) * 4).div_ceil(3).max(8);
        let n = want.next_power_of_two() as usize;
        BlockTable { slots: vec![Entry::VACANT; n], mask: n - 1, len: 0 }
    }

    /// The home slot of `key`: a multiply-rotate mix, reduced modulo the size.
    #[inline]
    fn home(&self, key: u32) -> usize {
        let x = u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (x.rotate_left(29) ^ x) as usize & self.mask
    }

    /// The slot holding `key`.
    #[inline]
    pub fn find(&self, key: u32) -> Option<usize> {
        let mut i = self.home(key);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The slot holding `key`, inserting a fresh entry if there is none; `None`
    /// when the table is full (more entries than it was sized for).
    pub fn find_or_insert(&mut self, key: u32) -> Option<usize> {
        let mut i = self.home(key);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return Some(i);
            }
            if k == EMPTY {
                if (self.len + 1) * 4 > self.slots.len() * 3 {
                    return None;
                }
                self.slots[i] = Entry { key, ..Entry::VACANT };
                self.len += 1;
                return Some(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Removes the entry in slot `i`, shifting later entries of its probe run
    /// back so that every lookup still finds them.
    pub fn remove(&mut self, mut i: usize) {
        debug_assert!(self.slots[i].key != EMPTY);
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].key;
            if k == EMPTY {
                break;
            }
            let h = self.home(k);
            // The entry at j may move to i if its home is not in (i, j] cyclically.
            let stays = if i <= j { i < h && h <= j } else { i < h || h <= j };
            if !stays {
                self.slots[i] = self.slots[j];
                i = j;
            }
        }
        self.slots[i] = Entry::VACANT;
    }

    #[inline]
    pub fn get(&self, i: usize) -> &Entry {
        &self.slots[i]
    }
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut Entry {
        &mut self.slots[i]
    }

    /// The entry in slot `i`, if the slot is occupied.
    #[inline]
    pub fn occupied_mut(&mut self, i: usize) -> Option<&mut Entry> {
        self.slots.get_mut(i).filter(|e| e.key != EMPTY)
    }

    /// The entry of `key`, if any.
    #[inline]
    pub fn lookup(&self, key: u32) -> Option<&Entry> {
        self.find(key).map(|i| &self.slots[i])
    }

    /// Entries in slot order (deterministic for one history of operations).
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.slots.iter().filter(|e| e.key != EMPTY)
    }

    /// Number of slots (for the recovery's side arrays, indexed by slot).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// RAM of the table, in bytes.
    pub fn ram_bytes(&self) -> u64 {
        (self.slots.len() * std::mem::size_of::<Entry>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #[test]
        fn table_matches_a_map(ops in proptest::collection::vec((0u32..64, any::<bool>()), 1..400)) {
            let mut t = BlockTable::new(40);
            let mut m: BTreeMap<u32, u32> = BTreeMap::new();
            for (n, (key, insert)) in ops.into_iter().enumerate() {
                // Keys spread over the 31-bit space, colliding often in 64 slots.
                let key = key.wrapping_mul(0x0100_0193) & 0x7fff_ffff;
                if insert {
                    if m.len() < 40 || m.contains_key(&key) {
                        let i = t.find_or_insert(key).unwrap();
                        t.get_mut(i).copies = n as u32;
                        m.insert(key, n as u32);
                    }
                } else if let Some(i) = t.find(key) {
                    t.remove(i);
                    prop_assert!(m.remove(&key).is_some());
                } else {
                    prop_assert!(!m.contains_key(&key));
                }
                for (k, v) in &m {
                    prop_assert_eq!(t.lookup(*k).map(|e| e.copies), Some(*v));
                }
                prop_assert_eq!(t.iter().count(), m.len());
            }
        }
    }

    #[test]
    fn full_table_refuses_more_entries() {
        let mut t = BlockTable::new(6);
        let slots = t.slots();
        let mut inserted = 0;
        for k in 0..slots as u32 {
            if t.find_or_insert(k).is_some() {
                inserted += 1;
            }
        }
        assert!(inserted >= 6 && inserted < slots, "{inserted} of {slots}");
    }
}
