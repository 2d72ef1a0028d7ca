//! Map persistence of the hybrid-mapped schemes ([`crate::schemes::block::bast`], [`crate::schemes::block::fast`],
//! [`crate::schemes::block::janus`]): maps kept in non-volatile RAM (no map I/O, the simulation
//! setting of 004 Section 6) or written to flash with a checkpoint and a
//! roll-forward log (the Linux MTD setting of 004 Section 6, after LFS).
//!
//! In flash mode ([`MapPersistence::Flash`]) every change to the page map is
//! an 8-byte record ([`ENTRY_BYTES`]) in a buffer in RAM: a data page
//! programmed or copied (its physical and logical page), a padding page, a
//! block erased, a logical page trimmed; consecutive pages copied in place
//! (a merge) share one run record. A full buffer is programmed as one
//! [`PageKind::Map`] page with purpose [`Purpose::Map`], and a flush programs
//! a partial one. Each map page starts, after the shared header of
//! `page`, with the *horizon*: the sequence number (the OOB's) of the
//! newest program whose record it or a page before it holds, such that every
//! program with a later sequence number is in no map page yet. A map page is
//! programmed after every data program issued before it finished, so a
//! durable record never names a page that is not. Map pages are bytes on
//! either store (a token store keeps them beside its tokens, so a device
//! image of a token store cannot hold them: saving one says so).
//!
//! The map pages go to a ring of blocks reserved at format
//! (`MapLog::ring_blocks`): a checkpoint (the whole map: for every block
//! holding valid pages, its number and the logical page of each of its pages,
//! 4 bytes each, `NONE` where the page is not valid; blocks in the order they
//! were last written) is written when the ring could no longer hold the
//! largest checkpoint (`MapLog::checkpoint_pages`, every good block full)
//! after the next log page, and at format and after recovery; once it is
//! written, the ring blocks before the one it starts in hold only superseded
//! pages and are erased (purpose map). The ring holds three of the largest
//! checkpoints (and two blocks), so the log between two checkpoints is at
//! least as long as one.
//!
//! Recovery (`crate::hybrid`'s `replay` module, which rebuilds the hybrid
//! core from what this module wrote): the latest complete checkpoint, the log
//! pages after it, then a roll-forward over the pages programmed after the
//! horizon, found from the end of each written block by their sequence
//! numbers; a torn checkpoint falls back to the one before.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::{BlockId, Geometry, PageKind, SimTime};

use crate::blockmap::NO_PAGE as NONE;
use crate::flash::program_failed;
use crate::{FtlError, Io, Purpose};
use page::{Magic, MetaPage};

pub(crate) mod page;
#[cfg(test)]
mod recovery_tests;

/// Where a hybrid-mapped scheme keeps its maps (`ftl.map_persistence`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MapPersistence {
    /// In non-volatile RAM: no map I/O (the default, 004's simulation setting).
    #[default]
    Nvram,
    /// On flash: a map log with checkpoints, counted as map operations (004's
    /// Linux MTD setting).
    Flash,
}

/// Bytes of one logged map record.
pub const ENTRY_BYTES: u32 = page::RECORD as u32;

/// The magics of the hybrid schemes' map pages.
pub(crate) const MAGIC: Magic = Magic { log: *b"HYML", checkpoint: *b"HYMC" };

/// Record tags (the low word of a record; a physical page otherwise).
pub(crate) mod tag {
    /// A block erased (high word: the block).
    pub const ERASE: u32 = u32::MAX;
    /// A logical page trimmed (high word: the logical page).
    pub const TRIM: u32 = u32::MAX - 1;
    /// The program before repeated (high word: times), each on the next
    /// physical page with the next logical page (padding stays padding).
    pub const RUN: u32 = u32::MAX - 2;
    /// Physical pages must stay below every tag.
    pub const FIRST: u32 = RUN;
}

pub(crate) fn record(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | (u64::from(hi) << 32)
}

/// How a scheme's maps persist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Persistence {
    pub mode: MapPersistence,
    /// The data blocks are page-mapped too (Janus: every page copy moves a page).
    pub page_mapped: bool,
}

/// Body records of one map page (its first record is the horizon).
fn body_records(g: &Geometry) -> u64 {
    page::records_per_page(g.page_size).saturating_sub(1) as u64
}

/// The ring's size and the largest checkpoint's pages for `name` on `good`
/// good blocks.
pub(crate) fn map_area(name: &str, g: &Geometry, good: u32, p: Persistence) -> Result<(u32, u32), FtlError> {
    if p.mode == MapPersistence::Nvram {
        return Ok((0, 0));
    }
    if body_records(g) == 0 {
        return Err(FtlError::config(
            "ftl.map_persistence",
            format!("{name}: flash mode needs pages of at least {} bytes, got {}", page::HEADER + 16, g.page_size),
        ));
    }
    if g.total_pages() >= tag::FIRST {
        return Err(FtlError::config(
            "ftl.map_persistence",
            format!("{name}: flash mode supports fewer than {} physical pages, got {}", tag::FIRST, g.total_pages()),
        ));
    }
    let pages = MapLog::checkpoint_pages(g, good);
    Ok((MapLog::ring_blocks(g, pages), pages))
}

/// The map log of a hybrid-mapped scheme in flash mode.
#[derive(Debug, Clone)]
pub(crate) struct MapLog {
    ppb: u32,
    page_size: u32,
    /// Body records per map page.
    per_page: usize,
    /// Pages of the largest checkpoint.
    checkpoint_pages: u32,
    /// Records not yet on flash, oldest first, each with the horizon after it.
    buf: Vec<(u64, u64)>,
    /// The sequence number of the newest program with a known one.
    floor: u64,
    /// The program a run record would repeat next: (physical, logical page).
    run_next: Option<(u32, u32)>,
    /// The log's own page sequence number, next.
    next_seq: u64,
    /// The sequence number of the last log page written (0: none).
    last_log: u64,
    /// Latest finish of a data program: a map page starts after it.
    data_done: SimTime,
    /// Ring blocks written, oldest first; the last is being written.
    live: VecDeque<u32>,
    /// Ring blocks erased.
    spare: Vec<u32>,
}

impl MapLog {
    /// Pages of the largest checkpoint on `good` good blocks: every block
    /// with a valid page, its number and a word per page.
    pub fn checkpoint_pages(g: &Geometry, good: u32) -> u32 {
        let words = u64::from(good) * (u64::from(g.pages_per_block) + 1);
        words.div_ceil(2).div_ceil(body_records(g).max(1)).max(1) as u32
    }

    /// Ring blocks for checkpoints of `checkpoint_pages` pages.
    pub fn ring_blocks(g: &Geometry, checkpoint_pages: u32) -> u32 {
        (3 * checkpoint_pages).div_ceil(g.pages_per_block) + 2
    }

    /// A map log over the erased `ring` blocks; writes the checkpoint
    /// `records` (see [`checkpoint_records`]) with horizon `floor`, its pages
    /// numbered from `first_seq` on.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        io: &mut Io,
        ring: Vec<u32>,
        checkpoint_pages: u32,
        next: &mut [u32],
        free: &mut VecDeque<BlockId>,
        records: &[u64],
        floor: u64,
        first_seq: u64,
    ) -> Result<Self, FtlError> {
        let g = *io.geometry();
        let mut m = MapLog {
            ppb: g.pages_per_block,
            page_size: g.page_size,
            per_page: body_records(&g).max(1) as usize,
            checkpoint_pages,
            buf: Vec::new(),
            floor,
            run_next: None,
            next_seq: first_seq.max(1),
            last_log: 0,
            data_done: io.last_finish(),
            live: VecDeque::new(),
            spare: ring,
        };
        m.checkpoint(io, records, next, free)?;
        Ok(m)
    }

    fn push(&mut self, r: u64) {
        self.buf.push((r, self.floor));
    }

    /// Records `lpn` (`NONE`: padding) programmed at `ppa`, with sequence
    /// number `seq` when known (a copy's is not), finishing at `done`.
    pub fn program(&mut self, ppa: u32, lpn: u32, seq: Option<u64>, done: SimTime) {
        if let Some(s) = seq {
            self.floor = self.floor.max(s);
        }
        self.data_done = self.data_done.max(done);
        let step = |l: u32| if l == NONE { NONE } else { l + 1 };
        let extends = self.run_next == Some((ppa, lpn));
        let floor = self.floor;
        match self.buf.last_mut() {
            Some((r, h)) if extends && (*r as u32) == tag::RUN => {
                *r += 1 << 32;
                *h = floor;
            }
            Some(_) if extends => self.push(record(tag::RUN, 1)),
            _ => self.push(record(ppa, lpn)),
        }
        self.run_next = Some((ppa + 1, step(lpn)));
    }

    /// Records `block` erased.
    pub fn erase(&mut self, block: u32) {
        self.run_next = None;
        self.push(record(tag::ERASE, block));
    }

    /// Records `lpn` trimmed.
    pub fn trim(&mut self, lpn: u32) {
        self.run_next = None;
        self.push(record(tag::TRIM, lpn));
    }

    /// Whether a full map page is pending.
    pub fn full(&self) -> bool {
        self.buf.len() >= self.per_page
    }

    /// Whether any record is pending.
    pub fn pending(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Whether the ring could hold the largest checkpoint after one more page.
    pub fn room_for_log_page(&self, next: &[u32]) -> bool {
        self.room(next) > self.checkpoint_pages
    }

    /// Erased pages left in the ring.
    fn room(&self, next: &[u32]) -> u32 {
        let head = self.live.back().map_or(0, |&b| self.ppb - next[b as usize]);
        head + self.spare.len() as u32 * self.ppb
    }

    /// Programs one log page of the records pending (at most a page's worth).
    pub fn log_page(&mut self, io: &mut Io, next: &mut [u32], free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        let n = self.buf.len().min(self.per_page);
        let horizon = self.buf[..n].last().map_or(self.floor, |&(_, h)| h);
        let mut records = Vec::with_capacity(n + 1);
        records.push(horizon);
        records.extend(self.buf[..n].iter().map(|&(r, _)| r));
        let page = MetaPage { checkpoint: false, seq: self.next_seq, link: self.last_log, index: 0, total: 0, records };
        self.program_page(io, &page, next, free)?;
        self.buf.drain(..n);
        if self.buf.is_empty() {
            self.run_next = None;
        }
        self.last_log = page.seq;
        self.next_seq += 1;
        Ok(())
    }

    /// Writes the checkpoint `records` (the whole map, [`checkpoint_records`])
    /// with the horizon of every program so far, drops the records pending
    /// (the checkpoint holds them), then erases the ring blocks it supersedes.
    pub fn checkpoint(
        &mut self,
        io: &mut Io,
        records: &[u64],
        next: &mut [u32],
        free: &mut VecDeque<BlockId>,
    ) -> Result<(), FtlError> {
        let total = records.len().div_ceil(self.per_page).max(1);
        if total > self.checkpoint_pages as usize {
            return Err(FtlError::DeviceFull(format!(
                "map log: a checkpoint of {total} pages is larger than the {} the ring was sized for",
                self.checkpoint_pages
            )));
        }
        let mut first = None;
        let mut done = SimTime::ZERO;
        for index in 0..total {
            let body =
                &records[(index * self.per_page).min(records.len())..((index + 1) * self.per_page).min(records.len())];
            let mut r = Vec::with_capacity(body.len() + 1);
            r.push(self.floor);
            r.extend_from_slice(body);
            let page = MetaPage {
                checkpoint: true,
                seq: self.next_seq,
                link: self.last_log,
                index: index as u32,
                total: total as u32,
                records: r,
            };
            let b = self.program_page(io, &page, next, free)?;
            done = done.max(io.last_finish());
            // Each page written takes its sequence number for good: a
            // checkpoint cut short leaves pages no later one reuses.
            self.next_seq += 1;
            first.get_or_insert(b);
        }
        self.buf.clear();
        self.run_next = None;
        // A checkpoint that ran past a failed program may span a replaced
        // block; it starts in the oldest live block it wrote to.
        let Some(first) = first else { return Ok(()) };
        // The blocks it supersedes are erased once it is durable.
        io.independent(|io| {
            io.start_after(done);
            while let Some(&old) = self.live.front() {
                if old == first {
                    break;
                }
                self.live.pop_front();
                let replaced = io.is_grown_bad(BlockId(old));
                if io.reclaim(BlockId(old), Purpose::Map)? {
                    next[old as usize] = 0;
                    self.spare.push(old);
                } else {
                    // Retired; one that went bad under a program was replaced then.
                    next[old as usize] = self.ppb;
                    if !replaced {
                        self.replace(free)?;
                    }
                }
            }
            Ok(())
        })
    }

    fn replace(&mut self, free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        let b = free
            .pop_front()
            .ok_or_else(|| FtlError::DeviceFull("map log: no free block to replace a bad one".into()))?;
        self.spare.push(b.0);
        Ok(())
    }

    /// Programs `page` at the head of the ring, after every data program
    /// issued so far finished; returns its block.
    fn program_page(
        &mut self,
        io: &mut Io,
        page: &MetaPage,
        next: &mut [u32],
        free: &mut VecDeque<BlockId>,
    ) -> Result<u32, FtlError> {
        let g = *io.geometry();
        for _ in 0..crate::flash::PROGRAM_ATTEMPTS {
            let head = match self.live.back() {
                Some(&b) if next[b as usize] < self.ppb && !io.is_grown_bad(BlockId(b)) => b,
                _ => {
                    let b = self.spare.pop().ok_or_else(|| FtlError::DeviceFull("map log: the ring is full".into()))?;
                    self.live.push_back(b);
                    b
                }
            };
            let data = page::encode(self.page_size, MAGIC, page);
            let ppa = g.ppa(BlockId(head), next[head as usize]);
            let after = self.data_done;
            let done = io.independent(|io| {
                io.start_after(after);
                io.program(ppa, NONE, PageKind::Map, data, Purpose::Map)
            });
            match done {
                Ok(_) => {
                    next[head as usize] += 1;
                    return Ok(head);
                }
                Err(e) => {
                    let e = FtlError::from(e);
                    if !program_failed(&e) {
                        return Err(e);
                    }
                    // Gone bad: counted full, left in the ring until a
                    // checkpoint retires it, and replaced now.
                    next[head as usize] = self.ppb;
                    self.replace(free)?;
                }
            }
        }
        Err(FtlError::DeviceFull("map log: programs keep failing".into()))
    }

    /// Blocks the ring holds (written or erased).
    pub fn blocks(&self) -> impl Iterator<Item = u32> + '_ {
        self.live.iter().chain(self.spare.iter()).copied()
    }
}

/// The checkpoint of a map: for each block in `blocks` (oldest written
/// first), its number and, per page, `pages(block)`'s logical page or `NONE`;
/// two 4-byte words to a record (a last odd word is followed by `NONE`).
pub(crate) fn checkpoint_records(blocks: &[u32], ppb: u32, mut page: impl FnMut(u32, u32) -> u32) -> Vec<u64> {
    let mut words = Vec::with_capacity(blocks.len() * (ppb as usize + 1));
    for &b in blocks {
        words.push(b);
        words.extend((0..ppb).map(|k| page(b, k)));
    }
    words.chunks(2).map(|w| record(w[0], w.get(1).copied().unwrap_or(NONE))).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::conformance::{nand_config, Harness};
    use crate::schemes::block::bast::BastConfig;
    use crate::schemes::block::fast::FastConfig;
    use crate::schemes::block::janus::JanusConfig;
    use crate::FtlBuilder;
    use ftlab_nand::SimTime;

    fn schemes(mode: MapPersistence) -> Vec<(&'static str, Box<dyn FtlBuilder>)> {
        vec![
            ("bast", Box::new(BastConfig { over_provisioning: 0.1, map_persistence: mode })),
            ("fast", Box::new(FastConfig { over_provisioning: 0.1, map_persistence: mode })),
            (
                "janus",
                Box::new(JanusConfig { over_provisioning: 0.1, map_persistence: mode, ..JanusConfig::default() }),
            ),
            (
                "janus-fix",
                Box::new(JanusConfig { over_provisioning: 0.1, map_persistence: mode, ..JanusConfig::fixed() }),
            ),
        ]
    }

    /// Writes every logical page, then rewrites a hot tenth of them seven
    /// times, on 512-byte pages (enough map pages to go round the ring), flushes and
    /// cuts power after the last acknowledgement; returns the counters before
    /// the cut and those recovery added (the harness checks every page read
    /// back after the cut against what was acknowledged).
    fn run(builder: &dyn FtlBuilder) -> (crate::Counters, crate::Counters) {
        let g = Geometry { page_size: 512, ..crate::testing::one_die(64, 16) };
        let mut h = Harness::new(builder, &nand_config(g, 0.0, 3));
        let n = h.logical_pages();
        for round in 0..8 {
            for i in 0..n {
                let lpn = if round == 0 { i } else { (i * 7) % (n / 10) };
                h.write(lpn).unwrap();
            }
        }
        h.flush().unwrap();
        let before = *h.flash.counters();
        let t = SimTime(*h.completions.last().unwrap()).max(h.now);
        h.cut_and_recover(t);
        h.check_all();
        let after = *h.flash.counters();
        let mut added = crate::Counters::default();
        for p in Purpose::ALL {
            added.reads.0[p as usize] = after.reads.get(p) - before.reads.get(p);
            added.programs.0[p as usize] = after.programs.get(p) - before.programs.get(p);
        }
        (before, added)
    }

    #[test]
    fn flash_mode_costs_map_operations_and_nvram_mode_none() {
        for (name, b) in schemes(MapPersistence::Flash) {
            let (c, recovery) = run(&*b);
            let host = c.programs.get(Purpose::Host);
            // Every host page is a map entry: at least one map page per 64.
            let per_page = u64::from(512 / ENTRY_BYTES);
            assert!(c.programs.get(Purpose::Map) > host / per_page, "{name}: {c:?}");
            assert!(c.erases.get(Purpose::Map) > 0, "{name}: no map block reclaimed: {c:?}");
            // Recovery reads the checkpoint and the log after it, and checkpoints.
            assert!(recovery.reads.get(Purpose::Map) > 0, "{name}: recovery read no map page: {recovery:?}");
            assert!(recovery.programs.get(Purpose::Map) > 0, "{name}: recovery wrote no checkpoint");
        }
        for (name, b) in schemes(MapPersistence::Nvram) {
            let (c, recovery) = run(&*b);
            let map = c.reads.get(Purpose::Map) + c.programs.get(Purpose::Map) + c.erases.get(Purpose::Map);
            assert_eq!(map, 0, "{name}: {c:?}");
            assert_eq!(recovery.reads.get(Purpose::Map) + recovery.programs.get(Purpose::Map), 0, "{name}");
        }
    }

    #[test]
    fn a_flush_programs_the_entries_left() {
        let b = BastConfig { over_provisioning: 0.1, map_persistence: MapPersistence::Flash };
        let mut h = Harness::new(&b, &nand_config(crate::testing::one_die(64, 16), 0.0, 3));
        h.write(5).unwrap();
        let before = h.flash.counters().programs.get(Purpose::Map);
        h.flush().unwrap();
        assert_eq!(h.flash.counters().programs.get(Purpose::Map), before + 1);
        h.flush().unwrap();
        assert_eq!(h.flash.counters().programs.get(Purpose::Map), before + 1, "nothing left to flush");
    }

    #[test]
    fn bad_value_names_the_key() {
        let mut p = toml::Table::new();
        p.insert("map_persistence".into(), toml::Value::String("disk".into()));
        for kind in ["bast", "fast", "janus", "janus-fix"] {
            let e = crate::registry::build(kind, &p).unwrap_err();
            assert!(matches!(e, FtlError::Config(ref c) if c.key == "ftl.map_persistence"), "{kind}: {e}");
            assert!(e.to_string().contains("ftl.map_persistence"), "{kind}: {e}");
        }
    }
}
