//! The solid-state cache (SSC) of FlashTier, as 003_9b28d6a0046a8156.txt
//! describes it (Section 2.2, the interface; Section 3.3.2, the prototype's FTL):
//! a device built to be a cache in front of a disk.
//!
//! # Interface ([`SolidStateCache`])
//!
//! Six commands over disk block numbers, one block being one flash page of data:
//! `write_clean`, `write_dirty`, `read` (a miss is `Ok(None)`, a benign result),
//! `evict`, `clean` (dirty to clean once the host wrote the block back to the
//! disk) and `exists` (which blocks of a range are dirty), plus `flush`. The
//! address space is unified and sparse: the host addresses the cache by disk
//! block, and the device maps each cached block to a flash page through a
//! statically sized hash table with closed hashing and linear probing (the
//! prototype's table, Section 3.3.2 "Address mappings"; its RAM is part of
//! [`crate::Ftl::ram_bytes`]).
//!
//! Results of odd input, all defined (and tested in `tests/ssc.rs`):
//!
//! - **Block numbers.** The API takes 64-bit disk blocks, but a page's OOB
//!   record on ftlab's medium holds 32 bits of logical address
//!   ([`ftlab_nand::Oob::lpn`]), and the SSC spends one of them on the page's
//!   dirty/clean flag, which per-write OOB logging needs. So disk blocks must be
//!   below [`MAX_BLOCKS`] = 2^31 (8 TiB of 4 KiB blocks; 75 GB of data is 19.7 M
//!   blocks). A command on a larger block is refused with
//!   [`FtlError::BadCommand`] (kind invalid), naming the block and the limit.
//! - **`exists` on a huge range.** At most [`MAX_EXISTS`] blocks per call
//!   (one bool each); a longer range, or one whose end overflows, is refused with
//!   [`FtlError::BadCommand`] naming the limit, and allocates nothing. Blocks of
//!   the range at or beyond [`MAX_BLOCKS`] are reported not dirty (they cannot be
//!   cached).
//! - **`write_clean` of a dirty block** overwrites it, and the block becomes
//!   clean with the new data. A cache manager writes a block clean only when the
//!   disk holds exactly that data (FlashCache's write-through path, a read miss
//!   filled from the disk, a write sent to the disk by selective caching and
//!   also cached); the data on the disk is then newer than the dirty copy, so the
//!   dirty copy must not survive, and refusing would cost the host an `evict`
//!   and a second write for the same result.
//! - **`evict` of an absent block** is a no-op (`Ok`), as is **`clean` of an
//!   absent or already clean block**: the device may have evicted a clean block
//!   silently, so the host cannot know which blocks are present; `exists` tells
//!   it which are dirty.
//! - **A full cache.** At most [`Ssc::capacity`] blocks may be dirty (with
//!   silent eviction off, at most that many cached at all); a write that would
//!   go beyond is refused with [`FtlError::DeviceFull`] (kind no space), naming
//!   the capacity and the fix (clean or evict blocks). Clean blocks beyond it
//!   are evicted silently by garbage collection.
//!
//! # Silent eviction (Section 3.3.2, "Free-space management")
//!
//! Garbage collection picks a victim erase block, copies its dirty pages and
//! drops its clean ones (unmapped: a later read misses). [`Eviction`] sets how
//! aggressively clean data goes: `off` copies clean pages too (a plain SSD),
//! `valid` picks the victim with the fewest valid pages and drops its clean
//! ones (the prototype), `dirty` picks the victim with the fewest pages it
//! must copy, so clean data is evicted first. One exception keeps the
//! contract below: a clean page is copied, not dropped, while an older copy of
//! its block is still on the flash (recovery would find that older data); the
//! victim choice counts such pages as pages to copy. Silent evictions are
//! counted ([`SolidStateCache::evictions`]); GC copies and erases are counted by
//! the framework ([`crate::Counters`]: data copies under [`crate::Purpose::Gc`],
//! records under [`crate::Purpose::Map`]).
//!
//! # Consistency and durability: per-write OOB logging (the default)
//!
//! This is the original FlashTier design (Section 3.3.2, "Consistency and
//! durability": mapping changes logged in each page's OOB): a data page's OOB
//! holds its disk block, whether it was written dirty or clean, and the medium's
//! sequence number; recovery scans every OOB and the newest copy of each block
//! wins. `evict` and `clean` change only the map in RAM; the next `flush` makes
//! them durable by programming one *record* page per changed block (kind
//! [`ftlab_nand::PageKind::Meta`], OOB logical page = the block, bit 31 set for
//! a clean record): a record newer than the block's newest data page says the
//! block is evicted (or that page is clean). A record is kept (moved by garbage
//! collection) while a data page of its block older than it is still on the
//! flash, and its erase waits for the erase of that block's last data page; an
//! erase that takes the newest page of a block (a silent eviction) waits for
//! the erases issued before it, which took the block's older copies. A
//! flush completes once every flash operation issued before it has finished
//! (records, garbage collection's copies and erases). Garbage collection also
//! writes an evict record itself before it erases the newest (stale) page of an
//! evicted block whose older copies remain.
//!
//! The prototype's design (a log of map changes written out as log pages,
//! checkpoints of the whole map on flush, when idle and after a number of log
//! pages, recovery from the latest checkpoint and the log after it) is the
//! other configuration, `consistency = "log"`; its design, where it follows
//! and departs from 003 and its weaker contract (writes too are durable only
//! at a flush) are in `ssc/log.rs`. Its metadata pages hold real bytes, on either
//! page store (the token store keeps the bytes of the pages an FTL
//! programs with bytes).
//!
//! The contract of OOB logging after a power cut and
//! [`crate::FtlBuilder::recover`]:
//!
//! - an acknowledged write (dirty or clean) is durable at its acknowledgement,
//!   as with every ftlab FTL ([`crate::Durability::OnAck`]): a dirty block
//!   acknowledged before the cut (so also every one dirty at the last completed
//!   flush) is still there and still dirty, unless a later `evict`/`clean`/
//!   write of it took effect;
//! - an `evict` or `clean` is durable once a `flush` issued after it has
//!   completed; before that it may or may not survive the cut;
//! - a clean block may be gone (a miss), but a block never reads back data
//!   older than its last acknowledged write: garbage collection never drops the
//!   newest copy of a block while an older copy is still on the flash without
//!   first programming an evict record (it copies a clean page instead, or
//!   writes the record before erasing a stale newest page).
//!
//! Formally: if a block's commands are `c1..cn`, and `cm` is the last one made
//! durable by the time of the cut (a write by its acknowledgement, an evict or
//! clean by a completed flush after it), the block recovers as it was after
//! some `ck` with `k >= m`, or, if that state is clean, absent.
//!
//! # Faults
//!
//! The SSC follows the crate's fault contract ([`crate`], "Fault contract").
//! A program that fails (a host write, a GC copy, a record) retires its block
//! ([`crate::alloc::BlockAllocator::retire`]) and is retried on another block
//! ([`Io::program_placed`], [`Io::copy_placed`]); a command whose write cannot
//! be placed fails with an I/O or no-space error and changes nothing in the
//! map (a failed write leaves the old data). The retired block stays readable
//! and becomes a GC candidate: its cached pages and live records are copied
//! off (a clean page is not evicted silently there: it would stay on the
//! flash, and a cleaned page would come back dirty after a cut), and it is
//! never erased nor freed,
//! so its pages keep counting as copies of their disk blocks (an evicted
//! block's stale page there keeps its evict record live). A failed erase
//! retires the victim, which then holds nothing readable. A flush that fails
//! leaves its blocks pending for the next one. Recovery never frees nor
//! reopens a grown-bad block; it closes one with readable pages.
//!
//! # RAM
//!
//! The table has a power of two of at least 4/3 slots per physical page (an
//! entry lives while its block has a page on the flash), 24 bytes each; beside
//! it a 4-byte owner per physical page and the two per-block victim pickers,
//! all in [`crate::Ftl::ram_bytes`]. On 8 GiB of 4 KiB pages that is about
//! 96 MiB of table.
//!
//! # The block interface
//!
//! The SSC is also a plain [`crate::Ftl`], so the simulator can run it like any
//! other FTL: logical page `l` is disk block `l`, `write` is `write_dirty` (a
//! block written through the block interface is never evicted silently, so the
//! normal conformance suite holds), `trim` is `evict`, `read` is `read`, and
//! [`crate::Ftl::logical_pages`] is the cache capacity in blocks.

use serde::{Deserialize, Serialize};

use crate::{FtlError, Io};

mod core;
mod log;
mod metalog;
mod recover;
mod table;

pub use self::core::Ssc;
pub use crate::capability::{SolidStateCache, MAX_EXISTS};

/// Disk blocks the SSC can address: the OOB's 32-bit logical page less the
/// dirty/clean flag bit.
pub const MAX_BLOCKS: u64 = 1 << 31;

/// How aggressively garbage collection evicts clean data (003 Section 3.3.2,
/// "Free-space management").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Eviction {
    /// No silent eviction: clean pages are copied like dirty ones (an SSD's GC).
    Off,
    /// The victim is the block with the fewest valid pages (the prototype's
    /// choice); its clean pages are dropped, its dirty pages copied. The default.
    #[default]
    Valid,
    /// The victim is the block with the fewest pages to copy (dirty pages,
    /// live records, clean pages with an older copy on the flash): clean data
    /// is evicted before any block with more dirty data is collected.
    Dirty,
}

/// How the SSC keeps its map consistent and durable across a power cut (003
/// Section 3.3.2, "Consistency and durability"); see the [module
/// documentation](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consistency {
    /// Per-write OOB logging (FlashTier's design): each data page's OOB holds
    /// its disk block and clean/dirty kind, records make evicts and cleans
    /// durable at a flush, and recovery scans every OOB. Writes are durable
    /// when acknowledged. The default.
    #[default]
    Oob,
    /// The OpenSSD prototype's design: map changes go to a log in RAM, written
    /// out as log pages, and the whole map is checkpointed on flush, when
    /// idle and after a number of log pages; recovery loads the latest
    /// complete checkpoint and replays the log after it. Data pages carry no
    /// disk block in their OOB. Writes, evicts and cleans are durable once a
    /// flush after them completes.
    Log,
}

/// Configuration of [`Ssc`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SscConfig {
    /// Fraction of the good flash held back from the cache's capacity, in
    /// [0, 1): bad blocks, records, and room that delays garbage collection.
    /// Default 0.07, the prototype's 7% (003 Section 3.3.2).
    pub reserve: f64,
    /// Garbage collection runs before a write while the free blocks are at most
    /// this many (at least 1). Default 2.
    pub gc_free_blocks: u32,
    /// Silent eviction policy. Default `valid`.
    pub eviction: Eviction,
    /// How the map survives a power cut: `oob` (per-write OOB logging) or
    /// `log` (map log and checkpoints, the prototype's). Default `oob`.
    pub consistency: Consistency,
    /// With `consistency = "log"`: a checkpoint is written after this many log
    /// pages since the last one (besides on flush and when idle). 0, the
    /// default, means as many log pages as a checkpoint of a full cache takes
    /// (at least 8), so the log never costs more than twice the checkpoints.
    pub checkpoint_log_pages: u32,
    /// With `consistency = "log"`: whether a flush writes a checkpoint of the
    /// whole map when the map changed since the last one (the prototype's "we
    /// trigger a checkpoint as part of flush"), or only the log (FlashTier's
    /// design: checkpoints on their own schedule, here after
    /// `checkpoint_log_pages` log pages and when idle). Default true.
    pub checkpoint_on_flush: bool,
}

impl Default for SscConfig {
    fn default() -> Self {
        SscConfig {
            reserve: 0.07,
            gc_free_blocks: 2,
            eviction: Eviction::Valid,
            consistency: Consistency::Oob,
            checkpoint_log_pages: 0,
            checkpoint_on_flush: true,
        }
    }
}

impl SscConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if !(0.0..1.0).contains(&self.reserve) {
            return Err(FtlError::config(
                "ftl.reserve",
                format!("ssc.reserve must be in [0, 1), got {}", self.reserve),
            ));
        }
        crate::config::gc_free_blocks("ssc", self.gc_free_blocks, crate::config::GC_NEEDS_A_FREE_BLOCK)?;
        if self.consistency == Consistency::Log && self.gc_free_blocks < 2 {
            return Err(FtlError::config(
                "ftl.gc_free_blocks",
                "ssc.gc_free_blocks must be at least 2 with consistency = \"log\" (a collection may open a block \
                 for its copies and one for the log page it writes before its erase)",
            ));
        }
        if self.consistency == Consistency::Oob && self.checkpoint_log_pages != 0 {
            return Err(FtlError::config(
                "ftl.checkpoint_log_pages",
                "ssc.checkpoint_log_pages applies to consistency = \"log\" only; drop it or set consistency",
            ));
        }
        Ok(())
    }

    /// With `consistency = "log"`: log pages between checkpoints on a device
    /// of `geometry` (see [`SscConfig::checkpoint_log_pages`]).
    pub fn log_pages_per_checkpoint(&self, geometry: &ftlab_nand::Geometry) -> u32 {
        if self.checkpoint_log_pages > 0 {
            return self.checkpoint_log_pages;
        }
        metalog::checkpoint_pages(geometry, geometry.total_pages().min(MAX_BLOCKS as u32)).max(8)
    }

    /// Blocks held back for the map log and checkpoints (0 with OOB logging):
    /// two checkpoints of a full cache (the old one stays until the new one is
    /// complete), the log between them with some slack, the open metadata
    /// block, and one partly written block per die that a recovery may leave.
    fn meta_blocks(&self, geometry: &ftlab_nand::Geometry) -> Result<u64, FtlError> {
        if self.consistency == Consistency::Oob {
            return Ok(0);
        }
        if (geometry.page_size as usize) < metalog::HEADER + 2 * metalog::RECORD {
            return Err(FtlError::config(
                "ftl.consistency",
                format!(
                    "ssc consistency = \"log\" needs pages of at least {} bytes for its log, got {}",
                    metalog::HEADER + 2 * metalog::RECORD,
                    geometry.page_size
                ),
            ));
        }
        let ckpt = u64::from(metalog::checkpoint_pages(geometry, geometry.total_pages().min(MAX_BLOCKS as u32)));
        let pages = 2 * ckpt + u64::from(self.log_pages_per_checkpoint(geometry)) + 8;
        Ok(pages.div_ceil(u64::from(geometry.pages_per_block)) + 2 + u64::from(geometry.dies()))
    }

    /// The cache capacity in blocks on a device with `good_blocks` usable
    /// blocks: the good pages less the reserve, and at most what leaves
    /// `gc_free_blocks`, one open block per die and one more block of slack, so
    /// that garbage collection always reclaims something when every cached page
    /// is dirty.
    pub fn capacity(&self, geometry: &ftlab_nand::Geometry, good_blocks: u32) -> Result<u32, FtlError> {
        let ppb = u64::from(geometry.pages_per_block);
        let slack = u64::from(self.gc_free_blocks) + u64::from(geometry.dies()) + 1 + self.meta_blocks(geometry)?;
        let max = u64::from(good_blocks).saturating_sub(slack) * ppb;
        let wanted = ((u64::from(good_blocks) * ppb) as f64 * (1.0 - self.reserve)).floor() as u64;
        let cap = wanted.min(max).min(MAX_BLOCKS);
        if cap == 0 {
            return Err(FtlError::config("device", format!(
                "the device is too small for ssc: {good_blocks} good blocks, {slack} needed as GC reserve, open blocks and map log"
            )));
        }
        Ok(cap as u32)
    }
}

impl crate::FtlBuilder for SscConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn crate::Ftl>, FtlError> {
        Ok(Box::new(Ssc::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn crate::Ftl>, FtlError> {
        Ok(Box::new(Ssc::recover(*self, io)?))
    }
}

/// `block` as the SSC's 31-bit key, or the error naming it.
pub(crate) fn key(block: u64) -> Result<u32, FtlError> {
    if block < MAX_BLOCKS {
        Ok(block as u32)
    } else {
        Err(FtlError::BadCommand(format!(
            "disk block {block} is beyond the {MAX_BLOCKS} blocks the SSC addresses (its OOB holds 31 bits of block \
             number): use blocks below {MAX_BLOCKS}"
        )))
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [
    crate::entry::Scheme {
        name: "ssc",
        summary: "FlashTier SSC (003): cache commands by disk block, hash-table map, silent eviction of clean data, OOB logging; 7% reserve",
        paper: "003 Sections 2.2, 3.3.2",
        admits_tasks: false,
        bounds: false,
        build: |p, _| crate::entry::configured("ssc", SscConfig::default(), p, SscConfig::validate),
    },
];
