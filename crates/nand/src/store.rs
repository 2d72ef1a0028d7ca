//! Page contents. A [`PageStore`] holds what each physical page carries: a 64-bit
//! token per page by default (kept in 2 bytes a page for a data page, enough to
//! prove data integrity), or the full page bytes for an emulated device.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::NandError;
use crate::huge::HugeArray;

/// The data of one logical page as it travels between host, FTL and medium.
#[derive(Clone, PartialEq, Eq)]
pub enum Payload {
    /// A 64-bit token standing for the page's contents.
    Token(u64),
    /// The page's bytes (exactly one page long). Shared, never changed in
    /// place: a read, a copyback or a garbage-collection move of a page hands
    /// on the same bytes instead of copying them.
    Bytes(Arc<[u8]>),
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Payload::Token(t) => write!(f, "Token({t:#x})"),
            Payload::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
        }
    }
}

/// Which [`PageStore`] a device uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    /// 64-bit tokens (the default).
    #[default]
    Token,
    /// Full page bytes.
    Bytes,
}

/// Storage for page contents, indexed by physical page. Each call names the
/// logical page in the page's OOB record: a store may keep less of a token
/// that repeats it.
pub trait PageStore: fmt::Debug + Send {
    /// Stores `data` as the contents of `page`, whose OOB holds `lpn`.
    fn write(&mut self, page: u32, lpn: u32, data: Payload) -> Result<(), NandError>;
    /// The contents of `page`, whose OOB holds `lpn` (the `lpn` it was written
    /// with).
    fn read(&self, page: u32, lpn: u32) -> Payload;
    /// Copies the contents of `from` to `to` (copyback and GC moves: the OOB's
    /// logical page travels with them).
    fn copy(&mut self, from: u32, to: u32);
    /// Bytes of contents per page.
    fn bytes_per_page(&self) -> usize;
    /// RAM the contents take now, in bytes.
    fn ram_bytes(&self) -> u64;
}

/// A `u64` token per page in 2 bytes, and the bytes of the few pages
/// programmed with bytes.
///
/// A data page's token is `lpn << 32 | version` (the engine's), and its logical
/// page is in the page's OOB: the store keeps the version alone, in a `u16`,
/// when the token's high half is the OOB's logical page and the version is
/// below [`OTHER`]. Any other token (an FTL's own, or a version past 65,534)
/// is kept whole in a side table, the page's `u16` saying so; so every token
/// reads back exactly as written, and memory is 2 bytes a page plus the pages
/// that hold such tokens.
///
/// A device that keeps tokens for data still holds real bytes where an FTL
/// writes its own metadata as bytes (e.g. the solid-state cache's map log and
/// checkpoints, which its recovery reads back): such a page's bytes are kept
/// beside the tokens, until a token is programmed there again. Bytes must be
/// exactly one page long. A page that holds bytes cannot be saved in a device
/// image of a token store (the image keeps one token per page).
#[derive(Debug)]
pub struct TokenStore {
    /// The version of each page's token, or [`OTHER`]: the token is in `other`.
    versions: HugeArray<u16>,
    other: SideTable,
    page_size: usize,
    bytes: BTreeMap<u32, Arc<[u8]>>,
}

/// The [`TokenStore`]'s side table, hashed with fixed keys: its capacity after
/// removals depends on where entries landed, and it is reported
/// (`memory.store_bytes`), so a per-process random seed would make a run's
/// report differ from one process to the next.
type SideTable = HashMap<u32, u64, BuildHasherDefault<DefaultHasher>>;

/// A [`TokenStore`] page's version that says its token is in the side table.
pub const OTHER: u16 = u16::MAX;

impl TokenStore {
    /// A store for `pages` pages, all zero, taking bytes `page_size` long.
    pub fn new(pages: u32, page_size: u32) -> Self {
        TokenStore {
            versions: HugeArray::zeroed(pages as usize),
            other: SideTable::default(),
            page_size: page_size as usize,
            bytes: BTreeMap::new(),
        }
    }

    /// Pages whose token is kept whole in the side table.
    pub fn other_pages(&self) -> u64 {
        self.other.len() as u64
    }

    /// Keeps `token` as `page`'s, whose OOB holds `lpn`.
    #[inline(always)]
    fn put(&mut self, page: u32, lpn: u32, token: u64) {
        if token >> 32 != u64::from(lpn) || token & 0xffff_ffff >= u64::from(OTHER) {
            return self.put_other(page, token);
        }
        let old = std::mem::replace(&mut self.versions[page as usize], token as u16);
        if old == OTHER {
            self.other.remove(&page);
        }
    }

    #[cold]
    #[inline(never)]
    fn put_other(&mut self, page: u32, token: u64) {
        self.versions[page as usize] = OTHER;
        self.other.insert(page, token);
    }

    /// Starts loading `page`'s version into the CPU cache.
    #[inline(always)]
    fn prefetch(&self, page: u32) {
        prefetch_index::prefetch_index(&self.versions, page as usize);
    }

    /// Pages that hold bytes rather than a token.
    pub fn byte_pages(&self) -> u64 {
        self.bytes.len() as u64
    }
}

impl PageStore for TokenStore {
    #[inline(always)]
    fn write(&mut self, page: u32, lpn: u32, data: Payload) -> Result<(), NandError> {
        match data {
            Payload::Token(t) => {
                self.put(page, lpn, t);
                if !self.bytes.is_empty() {
                    self.bytes.remove(&page);
                }
                Ok(())
            }
            Payload::Bytes(b) if b.len() == self.page_size => {
                self.bytes.insert(page, b);
                Ok(())
            }
            Payload::Bytes(_) => Err(NandError::PayloadMismatch("page bytes must be exactly one page long")),
        }
    }
    #[inline]
    fn read(&self, page: u32, lpn: u32) -> Payload {
        if !self.bytes.is_empty() {
            if let Some(b) = self.bytes.get(&page) {
                return Payload::Bytes(b.clone());
            }
        }
        match self.versions[page as usize] {
            OTHER => Payload::Token(self.other.get(&page).copied().unwrap_or(0)),
            v => Payload::Token(u64::from(lpn) << 32 | u64::from(v)),
        }
    }
    #[inline]
    fn copy(&mut self, from: u32, to: u32) {
        let v = self.versions[from as usize];
        if v == OTHER {
            let t = self.other.get(&from).copied().unwrap_or(0);
            self.other.insert(to, t);
        } else if self.versions[to as usize] == OTHER {
            self.other.remove(&to);
        }
        self.versions[to as usize] = v;
        if !self.bytes.is_empty() {
            match self.bytes.get(&from) {
                Some(b) => {
                    let b = b.clone();
                    self.bytes.insert(to, b);
                }
                None => {
                    self.bytes.remove(&to);
                }
            }
        }
    }
    fn bytes_per_page(&self) -> usize {
        8
    }
    fn ram_bytes(&self) -> u64 {
        self.versions.bytes()
            + self.other.capacity() as u64 * (std::mem::size_of::<(u32, u64)>() as u64 + 1)
            + self.bytes.len() as u64 * (self.page_size as u64 + 32)
    }
}

/// Full page bytes, sparse: a page's bytes are allocated when it is first
/// programmed, so memory grows with the physical pages written, not with the
/// device (a 1 TiB device with 1 GiB written holds about 1 GiB of page bytes). A
/// page never programmed reads as zeros. Pages are not freed on erase: an erase
/// in flight can be undone by a power cut, and the block is programmed again.
///
/// Pages are found through a two-level table, not a hash: a table of chunks of
/// [`CHUNK`] consecutive physical pages, each chunk allocated when one of its
/// pages is first programmed. FTLs program the pages of a block in order, so
/// chunks fill up; the table costs 8 bytes per chunk of the device (8 MiB
/// for 1 TiB of 4 KiB pages).
pub struct ByteStore {
    page_size: usize,
    pages: u32,
    chunks: Vec<Option<Box<Chunk>>>,
    /// Pages holding bytes.
    stored: u64,
    /// What a page never programmed reads as.
    zeros: Arc<[u8]>,
}

/// Physical pages per chunk of a [`ByteStore`]'s table.
pub const CHUNK: usize = 256;

type Chunk = [Option<Arc<[u8]>>; CHUNK];

impl fmt::Debug for ByteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ByteStore")
            .field("page_size", &self.page_size)
            .field("pages", &self.pages)
            .field("stored", &self.stored)
            .finish_non_exhaustive()
    }
}

impl ByteStore {
    /// A store for `pages` pages of `page_size` bytes, all zero.
    pub fn new(pages: u32, page_size: u32) -> Self {
        let chunks = (pages as usize).div_ceil(CHUNK);
        ByteStore {
            page_size: page_size as usize,
            pages,
            // Zeroed memory: the operating system maps the table's pages in
            // as they are first touched.
            chunks: vec![None; chunks],
            stored: 0,
            zeros: vec![0; page_size as usize].into(),
        }
    }

    /// Pages whose bytes are held.
    pub fn stored_pages(&self) -> u64 {
        self.stored
    }

    /// The bytes held for `page`; `None` if it holds none (it reads as zeros).
    pub(crate) fn get(&self, page: u32) -> Option<&[u8]> {
        self.slot(page).map(|b| &b[..])
    }

    #[inline]
    fn slot(&self, page: u32) -> Option<&Arc<[u8]>> {
        let page = page as usize;
        self.chunks[page / CHUNK].as_ref()?[page % CHUNK].as_ref()
    }

    /// Makes `page` hold `bytes` (`None`: nothing, it reads as zeros).
    #[inline]
    fn set(&mut self, page: u32, bytes: Option<Arc<[u8]>>) {
        let page = page as usize;
        let chunk = &mut self.chunks[page / CHUNK];
        let chunk = match (chunk, &bytes) {
            (Some(c), _) => c,
            (None, None) => return,
            (c @ None, Some(_)) => c.insert(Box::new(std::array::from_fn(|_| None))),
        };
        let (had, has) = (chunk[page % CHUNK].is_some(), bytes.is_some());
        chunk[page % CHUNK] = bytes;
        self.stored = self.stored + u64::from(has) - u64::from(had);
    }
}

impl PageStore for ByteStore {
    fn write(&mut self, page: u32, _lpn: u32, data: Payload) -> Result<(), NandError> {
        debug_assert!(page < self.pages);
        match data {
            Payload::Bytes(b) if b.len() == self.page_size => {
                self.set(page, Some(b));
                Ok(())
            }
            Payload::Bytes(_) => Err(NandError::PayloadMismatch("page bytes must be exactly one page long")),
            Payload::Token(_) => Err(NandError::PayloadMismatch("this device stores page bytes, not tokens")),
        }
    }
    fn read(&self, page: u32, _lpn: u32) -> Payload {
        Payload::Bytes(self.slot(page).unwrap_or(&self.zeros).clone())
    }
    fn copy(&mut self, from: u32, to: u32) {
        let b = self.slot(from).cloned();
        self.set(to, b);
    }
    fn bytes_per_page(&self) -> usize {
        self.page_size
    }
    fn ram_bytes(&self) -> u64 {
        // Each held page: its bytes with their two counts (pages that share
        // bytes, copied and not yet rewritten, are counted each time: an
        // upper bound); each chunk allocated; the table.
        let chunks = self.chunks.iter().filter(|c| c.is_some()).count() as u64;
        self.stored * (self.page_size as u64 + 16)
            + chunks * std::mem::size_of::<Chunk>() as u64
            + self.chunks.len() as u64 * 8
    }
}

/// The store of a medium: either kind, dispatched without a virtual call.
#[derive(Debug)]
pub(crate) enum AnyStore {
    Token(TokenStore),
    Bytes(ByteStore),
}

impl AnyStore {
    /// The store of `kind` for `pages` pages of `page_size` bytes.
    pub(crate) fn new(kind: StoreKind, pages: u32, page_size: u32) -> Self {
        match kind {
            StoreKind::Token => AnyStore::Token(TokenStore::new(pages, page_size)),
            StoreKind::Bytes => AnyStore::Bytes(ByteStore::new(pages, page_size)),
        }
    }

    /// Makes `page` hold nothing (a byte page reads as zeros; a token page is
    /// always written whole, so nothing to do).
    pub(crate) fn clear(&mut self, page: u32) {
        if let AnyStore::Bytes(s) = self {
            s.set(page, None);
        }
    }

    /// Starts loading what a read of `page` needs into the CPU cache (tokens
    /// only: a byte page is a pointer chase).
    #[inline(always)]
    pub(crate) fn prefetch(&self, page: u32) {
        if let AnyStore::Token(s) = self {
            s.prefetch(page);
        }
    }
}

impl PageStore for AnyStore {
    #[inline(always)]
    fn write(&mut self, page: u32, lpn: u32, data: Payload) -> Result<(), NandError> {
        match self {
            AnyStore::Token(s) => s.write(page, lpn, data),
            AnyStore::Bytes(s) => s.write(page, lpn, data),
        }
    }
    #[inline]
    fn read(&self, page: u32, lpn: u32) -> Payload {
        match self {
            AnyStore::Token(s) => s.read(page, lpn),
            AnyStore::Bytes(s) => s.read(page, lpn),
        }
    }
    #[inline]
    fn copy(&mut self, from: u32, to: u32) {
        match self {
            AnyStore::Token(s) => s.copy(from, to),
            AnyStore::Bytes(s) => s.copy(from, to),
        }
    }
    fn bytes_per_page(&self) -> usize {
        match self {
            AnyStore::Token(s) => s.bytes_per_page(),
            AnyStore::Bytes(s) => s.bytes_per_page(),
        }
    }
    fn ram_bytes(&self) -> u64 {
        match self {
            AnyStore::Token(s) => s.ram_bytes(),
            AnyStore::Bytes(s) => s.ram_bytes(),
        }
    }
}

/// Builds the store of `kind` for `pages` pages of `page_size` bytes.
pub fn new_store(kind: StoreKind, pages: u32, page_size: u32) -> Box<dyn PageStore> {
    match kind {
        StoreKind::Token => Box::new(TokenStore::new(pages, page_size)),
        StoreKind::Bytes => Box::new(ByteStore::new(pages, page_size)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_store_roundtrip_bytes_and_length_check() {
        let mut s = TokenStore::new(4, 16);
        s.write(2, 0, Payload::Token(7)).unwrap();
        s.copy(2, 3);
        assert_eq!(s.read(3, 0), Payload::Token(7));
        assert!(s.write(1, 0, Payload::Bytes(vec![0; 8].into())).is_err());
        // A page programmed with bytes holds them (an FTL's metadata), until a
        // token is programmed there again; copies carry them.
        let meta: Arc<[u8]> = (0..16u8).collect();
        s.write(1, 0, Payload::Bytes(meta.clone())).unwrap();
        s.copy(1, 0);
        assert_eq!(
            (s.read(1, 0), s.read(0, 0), s.byte_pages()),
            (Payload::Bytes(meta.clone()), Payload::Bytes(meta), 2)
        );
        s.write(1, 0, Payload::Token(9)).unwrap();
        s.copy(3, 0);
        assert_eq!((s.read(1, 0), s.read(0, 0), s.byte_pages()), (Payload::Token(9), Payload::Token(7), 0));
    }

    #[test]
    fn token_store_keeps_every_token_exactly_in_two_bytes_or_the_side_table() {
        let mut s = TokenStore::new(4, 16);
        let cases = [
            (0, 5, 5 << 32 | 1),                      // a data page: its version alone
            (1, 5, 5 << 32 | (u64::from(OTHER) - 1)), // the largest version kept in 2 bytes
            (2, 5, 5 << 32 | u64::from(OTHER)),       // a version too large: whole
            (3, 5, 6 << 32 | 1),                      // another logical page than the OOB's: whole
        ];
        for (page, lpn, token) in cases {
            s.write(page, lpn, Payload::Token(token)).unwrap();
        }
        for (page, lpn, token) in cases {
            assert_eq!(s.read(page, lpn), Payload::Token(token), "page {page}");
        }
        assert_eq!(s.other_pages(), 2);
        // Copies carry either form; a page rewritten in 2 bytes leaves the side table.
        s.copy(2, 0);
        s.copy(1, 3);
        assert_eq!(
            (s.read(0, 5), s.read(3, 5)),
            (Payload::Token(5 << 32 | u64::from(OTHER)), Payload::Token(5 << 32 | (u64::from(OTHER) - 1)))
        );
        s.write(2, 5, Payload::Token(5 << 32 | 3)).unwrap();
        assert_eq!((s.read(2, 5), s.other_pages()), (Payload::Token(5 << 32 | 3), 1));
        assert_eq!(s.ram_bytes(), 4 * 2 + s.other.capacity() as u64 * 17);
    }

    /// The side table's RAM is reported (`memory.store_bytes`), so it must not
    /// depend on a per-process hash seed: two stores given the same writes, with
    /// pages entering and leaving the side table (tombstones), report the same
    /// bytes.
    #[test]
    fn side_table_ram_is_the_same_for_the_same_writes() {
        let run = || {
            let mut s = TokenStore::new(1 << 16, 4096);
            for round in 0..40u64 {
                for page in (0..4000u32).map(|i| (i * 7919 + round as u32 * 131) % (1 << 16)) {
                    // A token the 2-byte form cannot hold goes to the side
                    // table; the next round's small token takes it out again.
                    let token = if (u64::from(page) + round) % 3 == 0 { 1 << 40 | round } else { round };
                    s.write(page, 0, Payload::Token(token)).unwrap();
                }
            }
            s.ram_bytes()
        };
        let first = run();
        for _ in 0..8 {
            assert_eq!(run(), first);
        }
    }

    #[test]
    fn byte_store_roundtrip_and_length_check() {
        let mut s = ByteStore::new(4, 512);
        let data: Arc<[u8]> = (0..512u32).map(|i| i as u8).collect();
        s.write(1, 0, Payload::Bytes(data.clone())).unwrap();
        s.copy(1, 0);
        assert_eq!(s.read(0, 0), Payload::Bytes(data));
        assert!(s.write(1, 0, Payload::Bytes(vec![0; 8].into())).is_err());
        assert!(s.write(1, 0, Payload::Token(1)).is_err());
    }

    #[test]
    fn byte_store_holds_only_the_pages_written() {
        // A terabyte's worth of 4 KiB pages, two written.
        let mut s = ByteStore::new(1 << 28, 4096);
        let table = (1 << 28) / CHUNK as u64 * 8;
        assert_eq!((s.stored_pages(), s.ram_bytes()), (0, table));
        assert_eq!(s.read(12345, 0), Payload::Bytes(vec![0; 4096].into()), "never written: zeros");
        s.write(7, 0, Payload::Bytes(vec![7; 4096].into())).unwrap();
        s.copy(7, (1 << 28) - 1);
        assert_eq!(s.read((1 << 28) - 1, 0), Payload::Bytes(vec![7; 4096].into()));
        assert_eq!(s.stored_pages(), 2);
        let chunks = 2 * std::mem::size_of::<Chunk>() as u64;
        assert_eq!(s.ram_bytes(), table + chunks + 2 * (4096 + 16));
        // Copying a page never written leaves zeros behind.
        s.copy(12345, 7);
        assert_eq!(s.read(7, 0), Payload::Bytes(vec![0; 4096].into()));
    }
}
