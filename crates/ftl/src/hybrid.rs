//! The machinery the hybrid-mapped schemes share ([`crate::schemes::block::bast`], [`crate::schemes::block::fast`],
//! [`crate::schemes::block::janus`]): data blocks holding a logical block's pages in place (page
//! `k` of logical block `lb` at page `k` of its data block), blocks written as
//! logs, merges, and recovery from an OOB scan.
//!
//! The medium programs the pages of a block strictly in order, so a merge target
//! (a data block being rebuilt) takes a padding page ([`PageKind::Meta`], no
//! logical page) at every offset before its last valid page that has no valid
//! page to copy; in steady state (every logical page written) there are none.
//!
//! Every page's OOB carries its logical page and the device-wide sequence number;
//! a copy is always newer than its source and a block is never erased before the
//! copies of its valid pages are durable ([`Io::supersede`]), so after a power cut
//! the copy of each logical page with the newest sequence number is its latest
//! value. [`Core::recover`] rebuilds the page locations that way, erases blocks
//! without a valid page, completes a torn merge (the newest block holding a
//! logical block's pages in place, partly written, gets the rest of them) and
//! names each logical block's data block; each scheme then gives the remaining
//! blocks their roles.
//!
//! Faults (the crate's fault contract): a block whose program fails counts as
//! full (its write pointer is moved to its end, so no page of it is handed out
//! again) and keeps its role until the scheme moves its valid pages off; it never
//! becomes a data block by a switch or partial merge; a merge whose target goes
//! bad starts over in another free block ([`Core::fill_new`]); [`Core::erase`]
//! retires a block gone bad (or whose erase fails) instead of freeing it; and
//! [`Core::recover`] never frees, reopens or names as a data block a block gone
//! bad.
//!
//! Maps are kept in non-volatile RAM or written to flash ([`MapPersistence`],
//! the `maplog` module): in flash mode the core logs a record for every page
//! programmed or copied (consecutive in-place copies as one run), every
//! padding page, every block erased and every logical page trimmed, and
//! programs the map pages from [`Core::write`], [`Core::erase`] and
//! [`Core::flush_maps`]; [`Core::recover`] then starts from the latest
//! checkpoint and the log after it and rolls forward over what was written
//! since (`hybrid::replay`) instead of scanning every page. The ring of map
//! blocks is reserved before the over-provisioning is taken from the rest.
//!
//! The location of every logical page is kept in RAM (so a read costs one flash
//! read, as the schemes' page maps of their log blocks give); each scheme reports
//! the RAM its own structures need (block map, page map of its log blocks).

use std::collections::VecDeque;

use ftlab_nand::{BlockId, Geometry, NandError, PageKind, Payload, Ppa};

use crate::blockmap::{self, interleaved_good_blocks};
use crate::flash::{program_failed, retry_program};
use crate::maplog::{checkpoint_records, map_area, page, MapLog, MapPersistence, Persistence, MAGIC};
use crate::{Flash, FtlError, Io, Purpose};
use replay::{Order, RecoveryReads};

pub(crate) mod replay;

pub const NONE: u32 = blockmap::NO_PAGE;

/// Whether `block` went bad in service: it takes no program and no erase; its
/// programmed pages still read.
pub fn is_bad(io: &Io, block: u32) -> bool {
    io.is_grown_bad(BlockId(block))
}

/// Makes the operations issued next wait for every one issued so far: merges
/// run one after another, so a power cut tears at most one.
pub fn fence(io: &mut Io) {
    let t = io.last_finish();
    io.start_after(t);
}

/// Page locations, valid counts and data blocks of a hybrid-mapped FTL.
#[derive(Debug, Clone)]
pub struct Core {
    pub g: Geometry,
    /// Logical blocks exported.
    pub lblocks: u32,
    /// Per logical page: its physical page, or `NONE`.
    pub loc: Vec<u32>,
    /// Per physical page: the logical page programmed there (`NONE` for erased
    /// pages, padding and unreadable pages).
    pub rev: Vec<u32>,
    /// Per physical block: valid pages.
    pub valid: Vec<u32>,
    /// Per physical block: its write pointer.
    pub next: Vec<u32>,
    /// Per logical block: its data block, or `NONE`.
    pub data: Vec<u32>,
    /// Erased blocks, oldest first.
    pub free: VecDeque<BlockId>,
    /// Whether the medium stores bytes (learnt from the host's payloads), for
    /// padding pages.
    pub bytes: Option<bool>,
    name: &'static str,
    /// The map log in flash mode.
    maps: Option<MapLog>,
    /// How the maps persist.
    persistence: Persistence,
    /// Per physical block: when it was last programmed (a program count), so
    /// a checkpoint lists blocks oldest first.
    stamp: Vec<u64>,
    clock: u64,
    /// What the last recovery read.
    pub recovery: RecoveryReads,
}

impl Core {
    /// An empty core for `name` with `over_provisioning` of the good blocks (at
    /// least `min_spare`) not exported.
    fn new(
        name: &'static str,
        io: &Io,
        over_provisioning: f64,
        min_spare: u32,
        persistence: Persistence,
    ) -> Result<(Self, u32, u32), FtlError> {
        let g = *io.geometry();
        let good = interleaved_good_blocks(io).count() as u32;
        let (ring, checkpoint) = map_area(name, &g, good, persistence)?;
        let lblocks = match good.checked_sub(ring) {
            Some(rest) => blockmap::logical_blocks(name, rest, over_provisioning, min_spare)?,
            None => {
                return Err(FtlError::config(
                    "ftl.map_persistence",
                    format!("{name}: {good} good blocks cannot hold the {ring} map blocks of flash mode"),
                ))
            }
        };
        let pages = blockmap::logical_pages(name, lblocks, g.pages_per_block)?;
        let c = Core {
            g,
            lblocks,
            loc: vec![NONE; pages as usize],
            rev: vec![NONE; g.total_pages() as usize],
            valid: vec![0; g.total_blocks() as usize],
            next: vec![0; g.total_blocks() as usize],
            data: vec![NONE; lblocks as usize],
            free: VecDeque::new(),
            bytes: None,
            name,
            maps: None,
            persistence,
            stamp: vec![0; g.total_blocks() as usize],
            clock: 0,
            recovery: RecoveryReads::default(),
        };
        Ok((c, ring, checkpoint))
    }

    /// A core on a freshly formatted medium.
    #[cfg(test)]
    pub fn format(name: &'static str, io: &Io, over_provisioning: f64, min_spare: u32) -> Result<Self, FtlError> {
        let (mut c, _, _) = Self::new(name, io, over_provisioning, min_spare, Persistence::default())?;
        c.free = interleaved_good_blocks(io).collect();
        Ok(c)
    }

    /// A core on a freshly formatted medium, its maps persisting as `p` says.
    pub fn format_with(
        name: &'static str,
        io: &mut Io,
        over_provisioning: f64,
        min_spare: u32,
        p: Persistence,
    ) -> Result<Self, FtlError> {
        let (mut c, ring, checkpoint) = Self::new(name, io, over_provisioning, min_spare, p)?;
        c.free = interleaved_good_blocks(io).collect();
        c.start_maps(io, ring, checkpoint, 1, 0)?;
        Ok(c)
    }

    /// Takes the ring of map blocks from the free blocks and writes a
    /// checkpoint of the map, its pages numbered from `first_seq`, with
    /// horizon `floor` (no program after it is in the map; flash mode only).
    fn start_maps(
        &mut self,
        io: &mut Io,
        ring: u32,
        checkpoint: u32,
        first_seq: u64,
        floor: u64,
    ) -> Result<(), FtlError> {
        if self.persistence.mode == MapPersistence::Nvram {
            return Ok(());
        }
        let mut blocks = Vec::with_capacity(ring as usize);
        for _ in 0..ring {
            blocks.push(self.take_free()?);
        }
        let records = self.checkpoint_records();
        self.maps =
            Some(MapLog::start(io, blocks, checkpoint, &mut self.next, &mut self.free, &records, floor, first_seq)?);
        Ok(())
    }

    /// The whole map as checkpoint records: the blocks with valid pages,
    /// oldest written first, each with its valid pages' logical pages.
    fn checkpoint_records(&self) -> Vec<u64> {
        let mut blocks: Vec<u32> = (0..self.g.total_blocks()).filter(|&b| self.valid[b as usize] > 0).collect();
        blocks.sort_unstable_by_key(|&b| (self.stamp[b as usize], b));
        checkpoint_records(&blocks, self.ppb(), |b, k| {
            let p = self.ppa(b, k).0;
            let r = self.rev[p as usize];
            if r != NONE && self.loc[r as usize] == p {
                r
            } else {
                NONE
            }
        })
    }

    /// Notes a program at `to` (of `lpn`, `NONE` for padding), with its
    /// sequence number when known.
    fn programmed(&mut self, io: &Io, to: Ppa, lpn: u32, seq: Option<u64>) {
        self.clock += 1;
        let b = self.block_of(to.0) as usize;
        self.stamp[b] = self.clock;
        if let Some(m) = &mut self.maps {
            m.program(to.0, lpn, seq, io.last_finish());
        }
    }

    /// Programs the full map pages pending, checkpointing when the ring is
    /// short of room (flash mode); with `all`, the last partial one too.
    fn log_maps_with(&mut self, io: &mut Io, all: bool) -> Result<(), FtlError> {
        let Some(mut m) = self.maps.take() else { return Ok(()) };
        let mut r = Ok(());
        while r.is_ok() && (m.full() || (all && m.pending())) {
            r = if m.room_for_log_page(&self.next) {
                m.log_page(io, &mut self.next, &mut self.free)
            } else {
                let records = self.checkpoint_records();
                m.checkpoint(io, &records, &mut self.next, &mut self.free)
            };
        }
        self.maps = Some(m);
        r
    }

    /// Programs the full map pages pending (flash mode).
    fn log_maps(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.log_maps_with(io, false)
    }

    /// Programs every map record pending (a flush; flash mode).
    pub fn flush_maps(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.log_maps_with(io, true)
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    #[inline]
    pub fn ppb(&self) -> u32 {
        self.g.pages_per_block
    }
    pub fn logical_pages(&self) -> u32 {
        self.lblocks * self.ppb()
    }
    #[inline]
    pub fn block_of(&self, ppa: u32) -> u32 {
        self.g.block_of(Ppa(ppa)).0
    }
    /// Physical block holding the valid copy of `lpn`, or `NONE`.
    #[inline]
    pub fn block_of_lpn(&self, lpn: u32) -> u32 {
        match self.loc[lpn as usize] {
            NONE => NONE,
            p => self.block_of(p),
        }
    }
    fn ppa(&self, block: u32, page: u32) -> Ppa {
        self.g.ppa(BlockId(block), page)
    }

    /// Reads `lpn`'s valid copy.
    pub fn read(&self, io: &mut Io, lpn: u32) -> Result<Option<Payload>, FtlError> {
        match self.loc[lpn as usize] {
            NONE => Ok(None),
            p => Ok(Some(io.read(Ppa(p), Purpose::Host)?.0)),
        }
    }

    /// Forgets `lpn`'s valid copy (a trim).
    pub fn invalidate(&mut self, lpn: u32) {
        let p = self.loc[lpn as usize];
        if p != NONE {
            let b = self.block_of(p) as usize;
            self.valid[b] -= 1;
            self.loc[lpn as usize] = NONE;
            if let Some(m) = &mut self.maps {
                m.trim(lpn);
            }
        }
    }

    /// Takes an erased block.
    pub fn take_free(&mut self) -> Result<u32, FtlError> {
        let b = self
            .free
            .pop_front()
            .map(|b| b.0)
            .ok_or_else(|| FtlError::DeviceFull(format!("{}: no free block", self.name)))?;
        Ok(b)
    }

    fn moved(&mut self, lpn: u32, to: Ppa, block: u32) {
        let old = self.loc[lpn as usize];
        if old != NONE {
            let ob = self.block_of(old) as usize;
            self.valid[ob] -= 1;
        }
        self.loc[lpn as usize] = to.0;
        self.rev[to.0 as usize] = lpn;
        self.valid[block as usize] += 1;
        self.next[block as usize] += 1;
    }

    /// A program on `block` failed with `e`: when the block went bad, it counts as
    /// full, so none of its pages is handed out again.
    fn failed(&mut self, block: u32, e: NandError) -> FtlError {
        if matches!(e, NandError::ProgramFailed { .. }) {
            self.next[block as usize] = self.ppb();
        }
        e.into()
    }

    /// Programs `data` as `lpn` at the next page of `block`.
    pub fn write(
        &mut self,
        io: &mut Io,
        block: u32,
        lpn: u32,
        data: Payload,
        purpose: Purpose,
    ) -> Result<(), FtlError> {
        if purpose == Purpose::Host {
            self.bytes = Some(matches!(data, Payload::Bytes(_)));
        }
        let to = self.ppa(block, self.next[block as usize]);
        let seq = match io.program(to, lpn, PageKind::Data, data, purpose) {
            Ok(seq) => seq,
            Err(e) => return Err(self.failed(block, e)),
        };
        let old = self.loc[lpn as usize];
        if old != NONE {
            io.supersede(Ppa(old));
        }
        self.moved(lpn, to, block);
        self.programmed(io, to, lpn, Some(seq));
        self.log_maps(io)
    }

    /// Copies `lpn`'s valid copy to the next page of `block`.
    pub fn copy(&mut self, io: &mut Io, lpn: u32, block: u32, purpose: Purpose) -> Result<(), FtlError> {
        let from = self.loc[lpn as usize];
        let to = self.ppa(block, self.next[block as usize]);
        if let Err(e) = io.copy(Ppa(from), to, purpose) {
            return Err(self.failed(block, e));
        }
        self.moved(lpn, to, block);
        self.programmed(io, to, lpn, None);
        Ok(())
    }

    /// Programs a padding page at the next page of `block`.
    pub fn pad(&mut self, io: &mut Io, block: u32, purpose: Purpose) -> Result<(), FtlError> {
        let bytes = match self.bytes {
            Some(b) => b,
            None => {
                // Learn the store from any valid page.
                let any = self.loc.iter().copied().find(|&p| p != NONE);
                let b = match any {
                    Some(p) => matches!(io.read(Ppa(p), purpose)?.0, Payload::Bytes(_)),
                    None => false,
                };
                self.bytes = Some(b);
                b
            }
        };
        let data = if bytes { Payload::Bytes(vec![0u8; self.g.page_size as usize].into()) } else { Payload::Token(0) };
        let to = self.ppa(block, self.next[block as usize]);
        let seq = match io.program(to, NONE, PageKind::Meta, data, purpose) {
            Ok(seq) => seq,
            Err(e) => return Err(self.failed(block, e)),
        };
        self.rev[to.0 as usize] = NONE;
        self.next[block as usize] += 1;
        self.programmed(io, to, NONE, Some(seq));
        Ok(())
    }

    /// Erases `block` (it holds no valid page) and returns it to the free list;
    /// a block gone bad (already, or by this erase) is retired instead: never
    /// erased again, never freed ([`Io::reclaim`]).
    pub fn erase(&mut self, io: &mut Io, block: u32, purpose: Purpose) -> Result<(), FtlError> {
        debug_assert_eq!(self.valid[block as usize], 0, "erasing block {block} with valid pages");
        if self.valid[block as usize] != 0 {
            return Err(FtlError::DeviceFull(format!("{}: block {block} still holds valid pages", self.name)));
        }
        let good = io.reclaim(BlockId(block), purpose)?;
        let first = self.ppa(block, 0).0 as usize;
        let ppb = self.ppb() as usize;
        self.rev[first..first + ppb].iter_mut().for_each(|r| *r = NONE);
        if good {
            self.next[block as usize] = 0;
            self.free.push_back(BlockId(block));
        } else {
            self.next[block as usize] = self.ppb();
        }
        if let Some(m) = &mut self.maps {
            m.erase(block);
        }
        self.log_maps(io)
    }

    /// The last offset of logical block `lb` with a valid page.
    pub fn last_valid(&self, lb: u32) -> Option<u32> {
        let base = (lb * self.ppb()) as usize;
        self.loc[base..base + self.ppb() as usize].iter().rposition(|&p| p != NONE).map(|o| o as u32)
    }

    /// Whether the written pages of `block` are `lb`'s pages in place (or padding).
    pub fn in_place(&self, block: u32, lb: u32) -> bool {
        let first = self.ppa(block, 0).0 as usize;
        let base = lb * self.ppb();
        (0..self.next[block as usize] as usize).all(|k| {
            let r = self.rev[first + k];
            r == NONE || r == base + k as u32
        })
    }

    /// Valid pages of `lb` outside `block` at offsets below `upto`.
    pub fn valid_outside_below(&self, lb: u32, block: u32, upto: u32) -> bool {
        (0..upto).any(|k| {
            let b = self.block_of_lpn(lb * self.ppb() + k);
            b != NONE && b != block
        })
    }

    /// Completes `block`, whose written pages are `lb`'s in place, with `lb`'s
    /// valid pages at the following offsets (padding the holes), up to the last
    /// valid one.
    pub fn fill_in_place(&mut self, io: &mut Io, block: u32, lb: u32, purpose: Purpose) -> Result<u32, FtlError> {
        let Some(last) = self.last_valid(lb) else { return Ok(0) };
        let mut copies = 0;
        for k in self.next[block as usize]..=last {
            let lpn = lb * self.ppb() + k;
            if self.loc[lpn as usize] == NONE {
                self.pad(io, block, purpose)?;
            } else {
                self.copy(io, lpn, block, purpose)?;
                copies += 1;
            }
        }
        Ok(copies)
    }

    /// Copies `lb`'s valid pages, wherever they are, in place into a free block
    /// and returns it with the pages copied. When a program fails, the target
    /// has gone bad: the copies start over in another free block (from wherever
    /// the pages are now, the bad target included), up to [`PROGRAM_ATTEMPTS`](crate::flash::PROGRAM_ATTEMPTS)
    /// targets; the bad targets are pushed to `bad` (once the copies are done,
    /// those left without valid pages are retired). On an error, the bad targets
    /// in `bad` may still hold valid pages of `lb`.
    pub fn fill_new(
        &mut self,
        io: &mut Io,
        lb: u32,
        purpose: Purpose,
        bad: &mut Vec<u32>,
    ) -> Result<(u32, u32), FtlError> {
        let (t, copies) = retry_program(
            self,
            |core| {
                let t = core.take_free()?;
                match core.fill_in_place(io, t, lb, purpose) {
                    Ok(copies) => Ok((t, copies)),
                    Err(e) => {
                        if program_failed(&e) {
                            bad.push(t);
                        }
                        Err(e)
                    }
                }
            },
            |_, _| {},
        )?;
        for &b in bad.iter() {
            if self.valid[b as usize] == 0 {
                self.erase(io, b, purpose)?;
            }
        }
        Ok((t, copies))
    }

    /// Full merge of `lb`: its valid pages, wherever they are, copied in place
    /// into a new data block ([`Core::fill_new`]); the old data block is erased.
    /// Other blocks that lost pages are the caller's to reclaim. Returns the
    /// pages copied. On an error the old data block stays `lb`'s.
    pub fn merge(&mut self, io: &mut Io, lb: u32, purpose: Purpose) -> Result<u32, FtlError> {
        let old = self.data[lb as usize];
        let mut copies = 0;
        if self.last_valid(lb).is_some() {
            let (t, c) = self.fill_new(io, lb, purpose, &mut Vec::new())?;
            copies = c;
            self.data[lb as usize] = t;
        } else {
            self.data[lb as usize] = NONE;
        }
        if old != NONE {
            self.erase(io, old, purpose)?;
        }
        fence(io);
        Ok(copies)
    }

    /// Logical blocks with a valid page in `block`, in page order, each once.
    pub fn owners(&self, block: u32) -> Vec<u32> {
        let first = self.ppa(block, 0).0;
        let mut v: Vec<u32> = Vec::new();
        for k in 0..self.next[block as usize] {
            let p = first + k;
            let r = self.rev[p as usize];
            if r != NONE && self.loc[r as usize] == p {
                let lb = r / self.ppb();
                if !v.contains(&lb) {
                    v.push(lb);
                }
            }
        }
        v
    }

    /// Valid logical pages of `block`, in page order.
    pub fn valid_pages(&self, block: u32) -> Vec<u32> {
        let first = self.ppa(block, 0).0;
        (first..first + self.next[block as usize])
            .filter_map(|p| {
                let r = self.rev[p as usize];
                (r != NONE && self.loc[r as usize] == p).then_some(r)
            })
            .collect()
    }

    /// Rebuilds the core from an OOB scan (see the module documentation).
    /// Returns the blocks in use that are no logical block's data block, each
    /// with the newest sequence number it holds, oldest first.
    pub fn recover(
        name: &'static str,
        io: &mut Io,
        over_provisioning: f64,
        min_spare: u32,
        p: Persistence,
    ) -> Result<(Self, Vec<(u64, u32)>), FtlError> {
        let (mut c, ring, checkpoint) = Self::new(name, io, over_provisioning, min_spare, p)?;
        let lpages = c.logical_pages();
        let blocks: Vec<BlockId> = interleaved_good_blocks(io).collect();
        let nblocks = c.g.total_blocks() as usize;
        let mut order = Order { page: vec![0; c.rev.len()], block: vec![0; nblocks], newest: 0 };
        let mut reads = RecoveryReads::default();
        let replayed = match p.mode {
            MapPersistence::Flash => replay::replay(&mut c, io, &blocks, &mut order, &mut reads)?,
            MapPersistence::Nvram => None,
        };
        let newest_map = match replayed {
            Some(n) => n,
            None => {
                reads.full_scan = p.mode == MapPersistence::Flash;
                c.scan(io, &blocks, &mut order, &mut reads)?
            }
        };
        let Order { page: page_seq, block: block_seq, newest: floor } = order;
        for &p in &c.loc {
            if p != NONE {
                let b = c.block_of(p) as usize;
                c.valid[b] += 1;
            }
        }
        let mut used = Vec::new();
        for &b in &blocks {
            if c.valid[b.0 as usize] == 0 {
                if is_bad(io, b.0) {
                    // Retired: never freed, never erased.
                } else if io.programmed_pages(b) > 0 {
                    c.erase(io, b.0, Purpose::Recovery)?;
                } else {
                    c.free.push_back(b);
                }
            } else {
                used.push(b.0);
            }
        }
        // Each logical block's data block: the newest block holding its pages in
        // place; a partly written one (a torn merge) is completed.
        let mut candidate: Vec<(u64, u32)> = vec![(0, NONE); c.lblocks as usize];
        for &b in &used {
            let first = c.ppa(b, 0).0 as usize;
            let Some(lpn) = c.rev[first..first + c.next[b as usize] as usize].iter().copied().find(|&r| r != NONE)
            else {
                continue;
            };
            let lb = lpn / c.ppb();
            if !is_bad(io, b) && c.in_place(b, lb) && block_seq[b as usize] >= candidate[lb as usize].0 {
                candidate[lb as usize] = (block_seq[b as usize], b);
            }
        }
        // A page whose data block got a padding page at its offset after it was
        // written was not valid then (it was trimmed): it stays trimmed.
        for lpn in 0..lpages {
            let p = c.loc[lpn as usize];
            let t = candidate[(lpn / c.ppb()) as usize].1;
            if p == NONE || t == NONE || c.block_of(p) == t {
                continue;
            }
            let k = lpn % c.ppb();
            let at = c.ppa(t, k).0 as usize;
            if k < c.next[t as usize] && c.rev[at] == NONE && page_seq[at] > page_seq[p as usize] {
                c.invalidate(lpn);
            }
        }
        for lb in 0..c.lblocks {
            let (_, b) = candidate[lb as usize];
            if b == NONE {
                continue;
            }
            let upto = c.next[b as usize];
            if upto < c.ppb() && c.last_valid(lb).is_some_and(|l| l >= upto) {
                match c.fill_in_place(io, b, lb, Purpose::Recovery) {
                    Ok(_) => {}
                    // Gone bad: the block is left to the scheme, as a block in
                    // use that is no data block.
                    Err(e) if program_failed(&e) => continue,
                    Err(e) => return Err(e),
                }
            }
            c.data[lb as usize] = b;
        }
        let mut data_of = vec![NONE; c.valid.len()];
        for (lb, &d) in c.data.iter().enumerate() {
            if d != NONE {
                data_of[d as usize] = lb as u32;
            }
        }
        let mut rest = Vec::new();
        for &b in &used {
            if c.valid[b as usize] == 0 {
                if data_of[b as usize] != NONE {
                    c.data[data_of[b as usize] as usize] = NONE;
                }
                c.erase(io, b, Purpose::Recovery)?;
            } else if data_of[b as usize] == NONE {
                rest.push((block_seq[b as usize], b));
            }
        }
        rest.sort_unstable();
        for (b, &s) in block_seq.iter().enumerate() {
            c.stamp[b] = s;
            c.clock = c.clock.max(s);
        }
        c.start_maps(io, ring, checkpoint, newest_map + 1, floor)?;
        c.recovery = reads;
        Ok((c, rest))
    }

    /// Reads the OOB of every programmed page of `blocks` and rebuilds the
    /// page locations from the newest copy of each logical page (see the
    /// module documentation); returns the newest map page's sequence number
    /// (flash mode: map pages are read, purpose map).
    fn scan(
        &mut self,
        io: &mut Io,
        blocks: &[BlockId],
        order: &mut Order,
        reads: &mut RecoveryReads,
    ) -> Result<u64, FtlError> {
        let c = self;
        let name = c.name;
        let lpages = c.logical_pages();
        let mut newest_seq = vec![0u64; lpages as usize];
        let mut newest_map = 0;
        for &b in blocks {
            let programmed = io.programmed_pages(b);
            c.next[b.0 as usize] = programmed;
            for page in 0..programmed {
                let ppa = c.g.ppa(b, page);
                reads.oob_reads += 1;
                match io.read_oob(ppa, Purpose::Recovery) {
                    Ok(Some(oob)) => {
                        if oob.kind == PageKind::Map && c.persistence.mode == MapPersistence::Flash {
                            reads.map_pages += 1;
                            match io.read(ppa, Purpose::Map) {
                                Ok((payload, _)) => {
                                    if let Some(m) = page::decode(MAGIC, &payload) {
                                        newest_map = newest_map.max(m.seq);
                                    }
                                }
                                Err(NandError::Uncorrectable(_)) => {}
                                Err(e) => return Err(FtlError::Recovery(format!("{name}: reading {ppa:?}: {e}"))),
                            }
                            continue;
                        }
                        order.newest = order.newest.max(oob.seq);
                        order.block[b.0 as usize] = order.block[b.0 as usize].max(oob.seq);
                        order.page[ppa.0 as usize] = oob.seq;
                        if oob.kind == PageKind::Data && oob.lpn < lpages {
                            c.rev[ppa.0 as usize] = oob.lpn;
                            if oob.seq >= newest_seq[oob.lpn as usize] {
                                newest_seq[oob.lpn as usize] = oob.seq;
                                c.loc[oob.lpn as usize] = ppa.0;
                            }
                        }
                    }
                    Ok(None) | Err(NandError::Uncorrectable(_)) => {}
                    Err(e) => return Err(FtlError::Recovery(format!("{name}: scanning {ppa:?}: {e}"))),
                }
            }
            if is_bad(io, b.0) {
                // Gone bad: counts as full, never written again.
                c.next[b.0 as usize] = c.ppb();
            }
        }
        Ok(newest_map)
    }

    /// Checks page locations and valid counts against the medium.
    pub fn check(&self, flash: &Flash) -> Result<(), String> {
        let nand = flash.nand();
        let mut valid = vec![0u32; self.valid.len()];
        for (lpn, &p) in self.loc.iter().enumerate() {
            if p == NONE {
                continue;
            }
            valid[self.block_of(p) as usize] += 1;
            match nand.peek_oob(Ppa(p)) {
                Some(oob) if oob.lpn == lpn as u32 && oob.kind == PageKind::Data => {}
                other => return Err(format!("{}: lpn {lpn} mapped to {p}, whose OOB is {other:?}", self.name)),
            }
            if self.rev[p as usize] != lpn as u32 {
                return Err(format!("{}: page {p} holds lpn {lpn} but rev says {}", self.name, self.rev[p as usize]));
            }
        }
        if valid != self.valid {
            return Err(format!("{}: valid counts differ from the page locations", self.name));
        }
        for b in 0..self.g.total_blocks() {
            if nand.is_bad(BlockId(b)) {
                continue;
            }
            if nand.is_grown_bad(BlockId(b)) {
                // Counted full whatever the medium's write pointer.
                if self.next[b as usize] != self.ppb() {
                    return Err(format!("{}: block {b} has gone bad but is not counted full", self.name));
                }
                continue;
            }
            if nand.programmed_pages(BlockId(b)) != self.next[b as usize] {
                return Err(format!(
                    "{}: block {b}: write pointer {}, medium says {}",
                    self.name,
                    self.next[b as usize],
                    nand.programmed_pages(BlockId(b))
                ));
            }
        }
        for &b in &self.free {
            if nand.is_grown_bad(b) {
                return Err(format!("{}: free block {} has gone bad", self.name, b.0));
            }
            if self.next[b.0 as usize] != 0 {
                return Err(format!("{}: free block {} is written", self.name, b.0));
            }
        }
        for (lb, &d) in self.data.iter().enumerate() {
            if d != NONE && !self.in_place(d, lb as u32) {
                return Err(format!("{}: data block {d} of logical block {lb} is not in place", self.name));
            }
        }
        for b in self.maps.iter().flat_map(MapLog::blocks) {
            if self.valid[b as usize] != 0 || self.free.contains(&BlockId(b)) || self.data.contains(&b) {
                return Err(format!("{}: map block {b} is also a data, log or free block", self.name));
            }
        }
        Ok(())
    }

    /// RAM of the block map (a block number per logical block).
    pub fn block_map_bytes(&self) -> u64 {
        u64::from(self.lblocks) * 4 + u64::from(self.g.total_blocks()) * 4
    }
}
