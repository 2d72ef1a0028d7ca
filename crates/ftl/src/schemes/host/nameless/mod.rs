//! The Nameless-Write device of 003_9b28d6a0046a8156.txt (Section 3.4, Table 3;
//! the design of Nameless Writes it prototypes): the device half of a split
//! FTL, where the file system keeps the physical address of each data block in
//! its own metadata and the device keeps a map only for the file system's
//! metadata.
//!
//! # Interface ([`Nameless`], Table 3)
//!
//! - `nameless_write(tag, data)`: the device chooses the page (appended to an
//!   open block, striped over the dies like [`crate::schemes::page::pagemap`]) and returns its
//!   [`PhysAddr`]. `tag` is the host-visible identity of the data block (e.g.
//!   its inode and block offset); it goes into the page's OOB, so recovery and
//!   migration up-calls can name the block to the host.
//! - `virtual_write(lba, data)` / `virtual_read(lba)`: metadata at a logical
//!   address, mapped by the device in a small page table of
//!   [`NamelessDevice::virtual_pages`] entries.
//! - `physical_read(addr)`: reads a data block by the address the host holds.
//! - `free(addr)`: the host no longer needs a data block (trim by address).
//! - migration up-calls: [`Nameless::take_migrations`] drains the queue of
//!   [`Migration`]s, [`Nameless::ack_migration`] acknowledges one.
//!
//! Odd input has a typed result, never a panic: a physical read or free of an
//! address beyond the device, never written, freed, or whose block was erased
//! since is refused with [`FtlError::BadCommand`] (kind invalid) naming the
//! address and what to do; a virtual address beyond the metadata space is
//! [`FtlError::LpnOutOfRange`]; a nameless write beyond the data capacity is
//! [`FtlError::DeviceFull`] naming the capacity; acknowledging a migration that
//! is not pending (already acknowledged, or its page freed) is a no-op.
//!
//! # Addresses
//!
//! A [`PhysAddr`] is the page's physical page number with, in its high 32 bits,
//! the erase count of its block when the page was programmed: the address of a
//! page whose block was erased and written again is a different address, so a
//! stale address held by the host is detected, never read as another block's
//! data.
//!
//! # Migrations (Section 3.4: "migration-callback")
//!
//! Garbage collection moves the live pages of a victim block, and so does
//! static wear leveling (`wear_leveling_delta`, off by default), which moves a
//! cold block's pages when the most-worn block is more than the delta ahead of
//! it. For a data page it records a [`Migration`]
//! `(old, new, tag)` and queues it for the host. 003 does not say whether the
//! old page stays valid or the device redirects (its prototype's host-side FTL
//! calls the file system synchronously, so the question does not arise
//! there); this device **redirects**, as the Nameless Writes design 003
//! prototypes (its reference \[33\]) does with a small remap table, as far as
//! ftlab's authors read it. Until the host acknowledges, the remap table sends
//! physical reads and frees of the old address to the new page; the victim block is erased at once (its space is not held back by
//! a slow host), and a later page at the old place has a new generation, so
//! the old address stays unambiguous. A chain of moves before an
//! acknowledgement redirects the first address to the latest page. The host
//! updates its metadata (a virtual write) and then acknowledges. The table
//! lives in RAM and is counted in [`crate::Ftl::ram_bytes`]; it grows while
//! the host does not acknowledge.
//!
//! # Consistency and the crash race
//!
//! The paper names the race: a crash after a page moved but before the file
//! system recorded its new address loses the data. The design it cites avoids
//! it by writing a record of the move into the OOB atomically with the data;
//! the prototype could not. ftlab's medium has an OOB, so this device does it:
//!
//! - a nameless data page's OOB holds its tag, kind [`PageKind::Data`];
//! - a moved data page's OOB holds its tag with kind [`PageKind::Map`] ("moved
//!   data"), programmed with the data in one operation (so garbage collection
//!   reads and programs a data page; a copyback would keep the source's OOB.
//!   Metadata pages move by copy, copyback inside a plane);
//! - a virtual (metadata) page's OOB holds its logical address, kind
//!   [`PageKind::Meta`].
//!
//! Recovery ([`crate::FtlBuilder::recover`]) scans every OOB. For each logical
//! address and each tag the copy with the newest sequence number is live (a
//! moved copy is newer than its source, and a block is never erased before
//! the copies of its live pages are durable). The redirect table is gone, so
//! the device then **replays** an up-call for every live data page, with
//! `old = None`: for a moved page this is the un-acknowledged (or
//! acknowledged: the device does not log acknowledgements) migration of the
//! crash race; for any data page it is the file-system check the host needs,
//! since frees are not durable either. The host sets the address of the block
//! named by the tag to `new` (a no-op when it already holds it), frees a page
//! whose tag its metadata no longer names, and acknowledges. With the replay
//! drained, every data block the host's recovered metadata names reads back,
//! at the address the host holds, the data last acknowledged for it or data
//! written after it.
//!
//! What the host must do for this to hold (ftlab's host model,
//! `nameless::host`, does): give every data block one tag and keep it when it
//! writes a new version of the block; free the old version's address right
//! after the nameless write of the new one returns (otherwise garbage
//! collection may move the old version after the new one was written, and
//! after a cut the moved copy, newer on the flash, would be taken for the
//! block's data).
//!
//! # Faults
//!
//! The device follows the crate's fault contract ([`crate`], "Fault
//! contract"), as [`crate::schemes::page::pagemap`] does: a program that fails (a nameless or
//! virtual write, a GC copy) retires its block and is retried on another
//! ([`Io::program_placed`]); a write that cannot be placed fails with an I/O
//! or no-space error and changes nothing; a block gone bad becomes a GC
//! candidate whose live pages are moved off (with their migrations) and is
//! never erased nor freed; a failed erase retires the victim.
//!
//! # RAM (Table 4)
//!
//! The device keeps the virtual-write map (4 bytes per metadata page), two bits
//! per physical page (valid, and metadata or data: what GC and free need), the
//! per-block valid counts and free lists, and the redirect table while
//! migrations are pending; no map of the data pages. A page-mapped FTL keeps 4
//! bytes per logical page and one valid bit per physical page.
//!
//! # The block interface
//!
//! The device is also a plain [`crate::Ftl`], through the virtual-write path:
//! logical page `l` is metadata address `l`, `write` is `virtual_write`, `read`
//! is `virtual_read`, `trim` drops the mapping, and
//! [`crate::Ftl::logical_pages`] is the metadata space. So the block
//! conformance suite runs on it (on the metadata space; `tests/nameless.rs`
//! checks the data path).

use serde::{Deserialize, Serialize};

use ftlab_nand::{Geometry, PageKind};

use crate::{FtlError, Io};

mod core;
#[cfg(feature = "testing")]
pub mod host;
mod recover;

pub use self::core::NamelessDevice;
pub use crate::capability::{Migration, Nameless, PhysAddr};

/// Configuration of [`NamelessDevice`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NamelessConfig {
    /// Fraction of the good pages held back from the host, in [0, 1). Default
    /// 0.10, as the `pagemap` preset it is compared with.
    pub over_provisioning: f64,
    /// Share of the capacity that is the virtual-write (metadata) space, in
    /// (0, 1). Default 0.05.
    pub virtual_share: f64,
    /// Garbage collection runs before a write while the free blocks are at most
    /// this many (at least 1). Default 2.
    pub gc_free_blocks: u32,
    /// Static wear leveling: after garbage collection erases a block, when the
    /// most-erased good block has been erased more than this many times more
    /// than the least-erased block holding live pages, that cold block's pages
    /// are moved (each data page with a migration up-call, as for GC) and the
    /// block is freed, so its little-worn pages take new writes. 0 (the
    /// default) turns it off.
    pub wear_leveling_delta: u32,
}

impl Default for NamelessConfig {
    fn default() -> Self {
        NamelessConfig { over_provisioning: 0.10, virtual_share: 0.05, gc_free_blocks: 2, wear_leveling_delta: 0 }
    }
}

impl NamelessConfig {
    /// Checks the fields; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("nameless", self.over_provisioning)?;
        if !(self.virtual_share > 0.0 && self.virtual_share < 1.0) {
            return Err(FtlError::config(
                "ftl.virtual_share",
                format!("nameless.virtual_share must be in (0, 1), got {}", self.virtual_share),
            ));
        }
        crate::config::gc_free_blocks("nameless", self.gc_free_blocks, crate::config::GC_NEEDS_A_FREE_BLOCK)?;
        Ok(())
    }

    /// The live pages (data and metadata) on a device with `good_blocks`
    /// usable blocks, and the metadata space among them: as
    /// [`crate::schemes::page::pagemap::PageMapConfig::logical_pages`], the good pages less
    /// the over-provisioning, and at most what leaves `gc_free_blocks`, one
    /// open block per die and one block of slack.
    pub fn capacity(&self, geometry: &Geometry, good_blocks: u32) -> Result<(u32, u32), FtlError> {
        let ppb = u64::from(geometry.pages_per_block);
        let slack = u64::from(self.gc_free_blocks) + u64::from(geometry.dies()) + 1;
        let max = u64::from(good_blocks).saturating_sub(slack) * ppb;
        let wanted = ((u64::from(good_blocks) * ppb) as f64 * (1.0 - self.over_provisioning)).floor() as u64;
        let cap = wanted.min(max);
        let virt = ((cap as f64 * self.virtual_share).floor() as u64).max(1);
        if cap <= virt {
            return Err(FtlError::config(
                "device",
                format!(
                "the device is too small for nameless: {good_blocks} good blocks, {slack} needed as GC reserve and \
                 open blocks"
            ),
            ));
        }
        Ok((cap as u32, virt as u32))
    }
}

impl crate::FtlBuilder for NamelessConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn crate::Ftl>, FtlError> {
        Ok(Box::new(NamelessDevice::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn crate::Ftl>, FtlError> {
        Ok(Box::new(NamelessDevice::recover(*self, io)?))
    }
}

/// The OOB kind of a nameless data page as written by the host.
pub(crate) const DATA: PageKind = PageKind::Data;
/// The OOB kind of a moved data page: the record of the move.
pub(crate) const MOVED: PageKind = PageKind::Map;
/// The OOB kind of a virtual (metadata) page.
pub(crate) const VIRTUAL: PageKind = PageKind::Meta;

/// The registry's entries for this module's schemes ([`crate::registry`]).
pub const SCHEMES: [crate::entry::Scheme; 1] = [
    crate::entry::Scheme {
        name: "nameless",
        summary: "Nameless Writes (003 Section 3.4): device-chosen physical addresses for data, a map for metadata only, migration up-calls recorded in the OOB; block commands use the metadata space",
        paper: "003 Section 3.4, Table 3",
        admits_tasks: false,
        bounds: false,
        build: |p, _| crate::entry::configured("nameless", NamelessConfig::default(), p, NamelessConfig::validate),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_packs_page_and_generation() {
        let a = PhysAddr::new(ftlab_nand::Ppa(77), 5);
        assert_eq!((a.ppa(), a.generation()), (ftlab_nand::Ppa(77), 5));
        assert_eq!(a.0, 5 << 32 | 77);
        assert!(a.to_string().contains("page 77") && a.to_string().contains("generation 5"));
    }

    #[test]
    fn config_errors_name_the_field_and_capacity_splits_the_space() {
        let c = NamelessConfig::default();
        assert!(c.validate().is_ok());
        for (bad, field) in [
            (NamelessConfig { over_provisioning: 1.0, ..c }, "over_provisioning"),
            (NamelessConfig { virtual_share: 0.0, ..c }, "virtual_share"),
            (NamelessConfig { virtual_share: 1.0, ..c }, "virtual_share"),
            (NamelessConfig { gc_free_blocks: 0, ..c }, "gc_free_blocks"),
        ] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
        let g = Geometry {
            channels: 1,
            ways_per_channel: 1,
            dies_per_way: 2,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_size: 4096,
            oob_size: 128,
        };
        // 32 blocks: 10% over-provisioning wants 230 pages; 2 GC blocks, 2 open
        // blocks and 1 of slack leave 27 blocks, 216 pages; 5% of them metadata.
        assert_eq!(c.capacity(&g, 32).ok(), Some((216, 10)));
        assert!(c.capacity(&g, 5).is_err());
    }
}
