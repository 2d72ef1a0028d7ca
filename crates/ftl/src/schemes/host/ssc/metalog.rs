//! The SSC's map log in RAM ([`MetaLog`]) and the format of its pages: the
//! part of the log the cache (`super::core`) holds; writing, checkpointing
//! and replaying it are `super::log`'s, above the cache.
//!
//! # Page format
//!
//! The shared metadata page of `crate::maplog::page` (magics `SSCL` for log
//! pages and `SSCC` for checkpoints), with 8-byte records: disk block (31
//! bits) with the dirty flag in bit 31, then the page (u32; all ones for an
//! evict).

use ftlab_nand::{BlockId, DieId, Geometry, SimTime};

use super::SscConfig;
use crate::maplog::page::{self as meta, Magic};
pub(super) use crate::maplog::page::{HEADER, RECORD};

/// The allocator stream of metadata pages.
pub(super) const META_STREAM: u32 = 1;
pub(super) const MAGIC: Magic = Magic { log: *b"SSCL", checkpoint: *b"SSCC" };
pub(super) const DIRTY_BIT: u32 = 1 << 31;

/// Records one metadata page holds.
pub(super) fn records_per_page(g: &Geometry) -> usize {
    meta::records_per_page(g.page_size)
}

/// Pages of a checkpoint of `entries` cached blocks (at least one).
pub(super) fn checkpoint_pages(g: &Geometry, entries: u32) -> u32 {
    (entries as usize).div_ceil(records_per_page(g).max(1)).max(1) as u32
}

/// A record: disk block `key`, dirty or clean, at page `ppa` (`NONE`: evicted).
pub(super) fn record(key: u32, ppa: u32, dirty: bool) -> u64 {
    u64::from(key | if dirty { DIRTY_BIT } else { 0 }) | (u64::from(ppa) << 32)
}

/// The map log in RAM and where its pages went.
#[derive(Debug, Clone)]
pub(super) struct MetaLog {
    /// Records not yet on the flash, oldest first.
    pub(super) buf: Vec<u64>,
    pub(super) per_page: usize,
    /// Sequence number of the next metadata page.
    pub(super) next_seq: u64,
    /// Sequence number of the last log page written (0: none).
    pub(super) last_log: u64,
    /// Finish of the last metadata program.
    pub(super) settled: SimTime,
    /// Latest finish of a data program (host write or GC copy).
    pub(super) data_done: SimTime,
    /// Log pages since the latest checkpoint.
    pub(super) since_ckpt: u32,
    /// A checkpoint is due (after `every` log pages); taken at the next write.
    pub(super) due: bool,
    pub(super) every: u32,
    /// Data pages programmed since the last log page.
    pub(super) data_since_log: u32,
    /// Whether the map changed since the latest checkpoint.
    pub(super) changed: bool,
    /// Blocks holding metadata pages, with the newest sequence number in each.
    pub(super) blocks: Vec<(BlockId, u64)>,
    /// The die whose open metadata block takes the next page.
    pub(super) die: DieId,
}

impl MetaLog {
    pub(super) fn new(config: &SscConfig, g: &Geometry) -> Self {
        MetaLog {
            buf: Vec::new(),
            per_page: records_per_page(g).max(1),
            next_seq: 1,
            last_log: 0,
            settled: SimTime::ZERO,
            data_done: SimTime::ZERO,
            since_ckpt: 0,
            due: false,
            every: config.log_pages_per_checkpoint(g),
            data_since_log: 0,
            changed: false,
            blocks: Vec::new(),
            die: DieId(0),
        }
    }

    pub(super) fn ram_bytes(&self) -> u64 {
        self.buf.capacity() as u64 * 8 + self.blocks.capacity() as u64 * 16
    }

    /// Whether `b` holds metadata pages.
    pub(super) fn is_meta(&self, b: BlockId) -> bool {
        self.blocks.iter().any(|&(m, _)| m == b)
    }
}
