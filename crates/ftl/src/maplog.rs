//! Map persistence of the hybrid-mapped schemes ([`crate::bast`], [`crate::fast`],
//! [`crate::janus`]): maps kept in non-volatile RAM (no map I/O, the simulation
//! setting of 004 Section 6) or written to flash with a checkpoint and a
//! roll-forward log (the Linux MTD setting of 004 Section 6, after LFS).
//!
//! In flash mode ([`MapPersistence::Flash`]) every map update (a logical page
//! placed out of place, a block taken or erased, and with a page-mapped data area
//! every page copy) is one dirty entry in an in-RAM buffer; a full buffer
//! ([`ENTRY_BYTES`] bytes per entry) is programmed as one [`PageKind::Map`] page
//! with purpose [`Purpose::Map`], and a flush programs a partial one. The map
//! pages go to a ring of blocks reserved at format ([`MapLog::ring_blocks`]): a
//! checkpoint (the whole map, a fixed [`MapLog::checkpoint_pages`] pages, also
//! purpose map) is written when the ring could no longer hold another checkpoint
//! after the next log page; once it is written, the ring blocks before the one it
//! starts in hold only superseded pages and are erased (purpose map). The ring
//! holds three checkpoints' worth of pages (and two blocks), so the log between
//! two checkpoints is at least as long as a checkpoint.
//!
//! What is simplified: the map pages carry no entries (a token, or zero bytes),
//! and recovery does not use them to shorten its scan. Recovery reads every map
//! page still on the medium (the latest checkpoint and the log after it, and any
//! superseded page whose erase the power cut overtook) with purpose map, as a
//! recovery from checkpoint and roll-forward would, then rebuilds the maps from
//! the full OOB scan of the `hybrid` module (correct whatever the map pages
//! say), erases the old ring and writes a fresh checkpoint into a new one.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::{BlockId, Geometry, PageKind, Payload, StoreKind};

use crate::blockmap;

use crate::hybrid::{is_bad, program_failed, NONE};
use crate::{FtlError, Io, Purpose};

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

/// Bytes of one logged map entry (a key and a location).
pub const ENTRY_BYTES: u32 = 8;
/// Bytes of one checkpointed entry (a location; the key is its position).
const CHECKPOINT_ENTRY_BYTES: u64 = 4;

/// How a scheme's maps persist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Persistence {
    pub mode: MapPersistence,
    /// The data blocks are page-mapped too (every page copy updates the map).
    pub page_mapped: bool,
}

/// The ring's size and a checkpoint's pages for `name` on `good` good blocks.
pub(crate) fn map_area(
    name: &str,
    g: &Geometry,
    good: u32,
    over_provisioning: f64,
    min_spare: u32,
    p: Persistence,
) -> Result<(u32, u32), FtlError> {
    if p.mode == MapPersistence::Nvram {
        return Ok((0, 0));
    }
    let lblocks = blockmap::logical_blocks(name, good, over_provisioning, min_spare)?;
    let ppb = u64::from(g.pages_per_block);
    let entries = if p.page_mapped {
        u64::from(lblocks) * ppb
    } else {
        // The block map, and a page map of the spare blocks.
        u64::from(lblocks) + u64::from(good - lblocks) * ppb
    };
    let pages = MapLog::checkpoint_pages(g, entries);
    Ok((MapLog::ring_blocks(g, pages), pages))
}

/// The map log of a hybrid-mapped scheme in flash mode.
#[derive(Debug, Clone)]
pub(crate) struct MapLog {
    ppb: u32,
    /// Entries per map page.
    per_page: u32,
    /// Pages of one checkpoint.
    checkpoint_pages: u32,
    /// Dirty entries not yet on flash.
    pending: u32,
    /// Ring blocks written, oldest first; the last is being written.
    live: VecDeque<u32>,
    /// Ring blocks erased.
    spare: Vec<u32>,
    /// The ring block the latest complete checkpoint starts in.
    checkpoint_block: Option<u32>,
    bytes: bool,
}

impl MapLog {
    /// Pages of a checkpoint of `entries` map entries.
    pub fn checkpoint_pages(g: &Geometry, entries: u64) -> u32 {
        (entries * CHECKPOINT_ENTRY_BYTES).div_ceil(u64::from(g.page_size)).max(1) as u32
    }

    /// Ring blocks for checkpoints of `checkpoint_pages` pages.
    pub fn ring_blocks(g: &Geometry, checkpoint_pages: u32) -> u32 {
        (3 * checkpoint_pages).div_ceil(g.pages_per_block) + 2
    }

    /// A map log over the erased `ring` blocks; writes its first checkpoint.
    pub fn start(
        io: &mut Io,
        ring: Vec<u32>,
        checkpoint_pages: u32,
        next: &mut [u32],
        free: &mut VecDeque<BlockId>,
    ) -> Result<Self, FtlError> {
        let g = *io.geometry();
        let mut m = MapLog {
            ppb: g.pages_per_block,
            per_page: (g.page_size / ENTRY_BYTES).max(1),
            checkpoint_pages,
            pending: 0,
            live: VecDeque::new(),
            spare: ring,
            checkpoint_block: None,
            bytes: io.store_kind() == StoreKind::Bytes,
        };
        m.checkpoint(io, next, free)?;
        Ok(m)
    }

    /// Notes `n` dirty map entries.
    #[inline]
    pub fn dirty(&mut self, n: u32) {
        self.pending += n;
    }

    /// Programs a map page for every full buffer of dirty entries.
    pub fn log(&mut self, io: &mut Io, next: &mut [u32], free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        while self.pending >= self.per_page {
            self.pending -= self.per_page;
            self.log_page(io, next, free)?;
        }
        Ok(())
    }

    /// Programs the dirty entries left (a flush or a forced unit access).
    pub fn flush(&mut self, io: &mut Io, next: &mut [u32], free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        self.log(io, next, free)?;
        if self.pending > 0 {
            self.pending = 0;
            self.log_page(io, next, free)?;
        }
        Ok(())
    }

    /// Erased pages left in the ring.
    fn room(&self, next: &[u32]) -> u32 {
        let head = self.live.back().map_or(0, |&b| self.ppb - next[b as usize]);
        head + self.spare.len() as u32 * self.ppb
    }

    fn log_page(&mut self, io: &mut Io, next: &mut [u32], free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        if self.room(next) < self.checkpoint_pages + 1 {
            self.checkpoint(io, next, free)?;
        }
        self.program(io, next, free).map(drop)
    }

    /// Writes the whole map, then erases the ring blocks it supersedes.
    fn checkpoint(&mut self, io: &mut Io, next: &mut [u32], free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        let mut first = None;
        for _ in 0..self.checkpoint_pages {
            let b = self.program(io, next, free)?;
            first.get_or_insert(b);
        }
        // A checkpoint that ran past a failed program may span a replaced
        // block; it starts in the oldest live block it wrote to.
        let Some(first) = first else { return Ok(()) };
        self.checkpoint_block = Some(first);
        while let Some(&old) = self.live.front() {
            if old == first {
                break;
            }
            self.live.pop_front();
            let replaced = is_bad(io, old);
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
    }

    fn replace(&mut self, free: &mut VecDeque<BlockId>) -> Result<(), FtlError> {
        let b = free
            .pop_front()
            .ok_or_else(|| FtlError::DeviceFull("map log: no free block to replace a bad one".into()))?;
        self.spare.push(b.0);
        Ok(())
    }

    /// Programs one map page at the head of the ring; returns its block.
    fn program(&mut self, io: &mut Io, next: &mut [u32], free: &mut VecDeque<BlockId>) -> Result<u32, FtlError> {
        let g = *io.geometry();
        for _ in 0..crate::flash::PROGRAM_ATTEMPTS {
            let head = match self.live.back() {
                Some(&b) if next[b as usize] < self.ppb && !is_bad(io, b) => b,
                _ => {
                    let b = self.spare.pop().ok_or_else(|| FtlError::DeviceFull("map log: the ring is full".into()))?;
                    self.live.push_back(b);
                    b
                }
            };
            let data =
                if self.bytes { Payload::Bytes(vec![0u8; g.page_size as usize].into()) } else { Payload::Token(0) };
            let ppa = g.ppa(BlockId(head), next[head as usize]);
            match io.program(ppa, NONE, PageKind::Map, data, Purpose::Map) {
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bast::BastConfig;
    use crate::conformance::{nand_config, Harness};
    use crate::fast::FastConfig;
    use crate::janus::JanusConfig;
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

    /// Writes every logical page, then rewrites a hot tenth of them three
    /// times, on 512-byte pages (enough map pages to go round the ring), flushes and
    /// cuts power after the last acknowledgement; returns the counters before
    /// the cut and those recovery added (the harness checks every page read
    /// back after the cut against what was acknowledged).
    fn run(builder: &dyn FtlBuilder) -> (crate::Counters, crate::Counters) {
        let g = Geometry { page_size: 512, ..crate::testing::one_die(64, 16) };
        let mut h = Harness::new(builder, &nand_config(g, 0.0, 3));
        let n = h.logical_pages();
        for round in 0..4 {
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
