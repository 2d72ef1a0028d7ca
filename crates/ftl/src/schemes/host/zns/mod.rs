//! A zoned device: the NVMe Zoned Namespace command set (ZNS 1.1) on the
//! strict medium, the device half of the split 003's Nameless Writes argued
//! for, as products ship it: the host writes each zone sequentially at its
//! write pointer (or appends and is told where), and frees space by resetting
//! whole zones; the device keeps no page map and does no garbage collection.
//!
//! # Zones on the medium
//!
//! A zone is `zone_blocks` erase blocks (default: one a die) and spans their
//! pages (the zone size); its first `zone_capacity` pages are writable (the
//! capacity; the rest of the zone size is not). Zone `z` covers logical pages
//! `z * zone size` on. `zone_mapping` places a zone's blocks:
//!
//! - `"striped"` (the default): on consecutive dies, page `i` of the zone on
//!   block `i % zone_blocks` at offset `i / zone_blocks`, so consecutive
//!   writes of one zone run on different dies in parallel;
//! - `"die"`: all on one die (zones take the dies in turn), the blocks filled
//!   one after another, so one zone's writes serialise on its die and
//!   different zones' writes run in parallel.
//!
//! A zone with a factory-bad block is offline from the start.
//!
//! # Commands
//!
//! The state machine, its limits and its errors are `zones`'s (every
//! transition and status of ZNS 1.1 Section 2.1.1). A block write
//! ([`crate::Ftl::write`]) must address its zone's write pointer; a zone append
//! ([`Zoned::append`]) writes there and returns the page. A read of a page
//! not written (at or past the write pointer, or past the data of a finished
//! zone) returns no data without touching the flash. Trim is not a zoned
//! command: space is freed by Reset, which erases the zone's blocks. Finish
//! records itself on the medium: a marker page (kind meta) at the write
//! pointer, unless the zone is already at its capacity. So does Offline (of
//! a read-only zone): a marker page naming no logical page, at the next page
//! of the zone's first good block with room.
//!
//! # Durability and power cuts
//!
//! A write is acknowledged when its page is programmed and every earlier
//! write of its zone is acknowledged (writes to a striped zone run on several
//! dies and may finish out of order), so the acknowledged writes of a zone are
//! always a prefix of it. Reset erases the block holding the zone's first page
//! first and the others once that erase ended. Recovery rebuilds every zone
//! from the medium:
//!
//! - a zone whose first block is erased while another holds pages, or whose
//!   first page cannot be read, was being reset (or its first write was
//!   torn: nothing of it was acknowledged either way): the reset is
//!   completed, the zone empty;
//! - otherwise its data is the longest prefix of readable data pages that name
//!   their own logical page; it is full if that prefix is its capacity, or if
//!   anything was programmed past the prefix (a finish marker, a page torn by
//!   the cut, a later write that finished before an earlier one); otherwise
//!   closed (open zones come back closed, as ZNS says of a power cycle), or
//!   empty with no data;
//! - a zone with a block gone bad in service is read-only, or offline if
//!   the last page programmed in one of its good blocks is an offline
//!   marker.
//!
//! What is not kept across a power cut: the difference between explicitly
//! and implicitly opened and closed zones (all closed, as in ZNS), and an
//! offline zone made so by the host when none of its good blocks had room
//! for the marker (it comes back read-only).
//!
//! # Faults
//!
//! A program that fails makes its zone read-only (the write fails with an
//! I/O error; the data before it stays readable); an erase that fails during a
//! reset makes the zone offline.
//!
//! # Zone Random Write Area
//!
//! With `zrwa_pages` set, zones may get a Zone Random Write Area (ZRWA), as
//! the NVMe Zoned Namespace Command Set defines it (TP 4076, "Zone Random
//! Write Area", in ZNS 1.1 and later). What ftlab follows, and from where:
//! the Identify Namespace fields ZRWAS (`zrwa_pages`), ZRWAFG
//! (`zrwa_flush_granularity`) and NUMZRWA (`max_zrwa_zones`) and the Zone
//! Management Send action Flush Explicit ZRWA Range (11h; not 05h, which
//! is Offline) and the Open flag ZRWAA, as libnvme declares them
//! (`nvme_zns_id_ns`, `nvme_zns_send_action`:
//! <https://manpages.ubuntu.com/manpages/mantic/man2/nvme_zns_send_action.2.html>);
//! the behaviour as QEMU's NVMe device implements TP 4076 ("hw/nvme: add
//! support for zoned random write area", K. Jensen, qemu-devel, January 2022:
//! `nvme_check_zone_write`, `nvme_finalize_zoned_write`,
//! `nvme_zoned_zrwa_implicit_flush`, `nvme_zone_mgmt_send_zrwa_flush`,
//! `nvme_open_zone`, `nvme_zrm_finish`, `nvme_zrm_reset`). So:
//!
//! - [`ZoneAction::OpenZrwa`] opens a zone explicitly with a ZRWA: from
//!   empty, closed or open, taking open and active resources as Open does
//!   and one of `max_zrwa_zones` ZRWA resources (else Zone ZRWA Resources
//!   Unavailable, B7h, as also when the write pointer is not a multiple of
//!   the granule). On a device without ZRWAs both ZRWA actions are Invalid
//!   Zone Operation Request (B6h).
//! - A write to a zone with a ZRWA may land anywhere from the write pointer
//!   (WP) to WP + 2 * ZRWAS - 1, and may overwrite pages there; elsewhere it
//!   is Zone Invalid Write (past the capacity, Zone Boundary Error). A write
//!   at WP + ZRWAS or beyond first moves the WP on by the fewest multiples of
//!   ZRWAFG that bring it into the ZRWA (an implicit flush).
//! - [`ZoneAction::FlushZrwa`] `{ upto }` commits the ZRWA below `upto` (the
//!   spec's LBA field is the last block flushed, `upto - 1`): `upto - WP`
//!   must be a multiple of ZRWAFG (else Invalid Field in Command; ftlab
//!   also allows a flush up to the capacity) and at most ZRWAS (else Zone
//!   Boundary Error; QEMU allows one block more). A flush of a zone with no
//!   ZRWA is Invalid Field in Command. A flush opens a closed zone
//!   implicitly, as QEMU's does.
//! - Zone Append to a zone with a ZRWA is Invalid Zone Operation Request.
//! - Close keeps the ZRWA (the zone is closed even with nothing committed);
//!   Finish commits the ZRWA up to its last page written, then finishes;
//!   Reset discards it; both, and Offline and the commit that fills the
//!   capacity, free the ZRWA resource. The zone report's
//!   [`ZoneDescriptor::zrwa`] is the zone attribute ZRWAV.
//! - A read of a page at or past the WP returns the newest data written to
//!   the ZRWA there, or none; a page a flush committed without its being
//!   written (a hole) reads as zeros.
//!
//! On NAND, which cannot overwrite, the ZRWA's pages live in the device's
//! RAM until committed: a commit programs each page from the WP at its place
//! in the zone, as a write does (one host program on the zone's dies, a hole
//! as a page of zeros), and the command that commits (a write that flushes
//! implicitly, a flush, a finish) completes when they are programmed. Writes
//! into the ZRWA touch no flash: they complete at once (RAM speed), after
//! the zone's earlier commands.
//!
//! Durability: a write into a ZRWA is durable once a device flush
//! ([`crate::Ftl::flush`], and so FUA) completes ([`crate::Durability::OnFlush`]
//! for a device with ZRWAs); a commit is durable when acknowledged. A flush
//! writes every ZRWA page not yet journaled to a journal: the last two zones
//! of the layout (so `zrwa_pages` takes them from the zones), used as two
//! regions written in order (kind meta pages for records, kind data pages
//! naming their logical page for entries, both told apart by the OOB tag).
//! Newest entry wins. When the active region is full, the other is erased and
//! every ZRWA page written to it, then a marker making it the active one
//! (so a region never needs compacting while it holds the only copy of a
//! page: its live entries are at most `max_zrwa_zones` ZRWAs, which the
//! configuration checks fit a region). A reset or offline of a zone whose
//! pages the journal may hold first writes a drop record naming the zone,
//! durable before the erase starts. Recovery rebuilds the zones as above,
//! then reads both regions: for each logical page its newest entry newer
//! than its zone's last drop record, kept if at or past the zone's
//! recovered WP. A zone with such pages gets its ZRWA back and comes back
//! closed (as every open zone does after a power cycle), or, if a commit
//! was torn by the cut (the zone full, or read-only after a failed program),
//! keeps them readable past its WP until it is reset. So no flushed page
//! and no acknowledged commit is lost, and the WP never goes back past an
//! acknowledged commit. Not kept: a ZRWA with no journaled page (the zone
//! comes back without one), pages written and not flushed (as any volatile
//! cache), and a ZRWA whose reset was not acknowledged by the cut (the
//! drop record may have made it durable before the erase did). A journal
//! block that fails an erase fails the flush with an I/O error, and a
//! journal on a factory-bad block is refused at format.

use serde::{Deserialize, Serialize};

use crate::{FtlError, Io};

mod device;
mod log;
mod sepbit;
mod zones;

pub use self::device::ZnsDevice;
pub use self::log::{GcPlacement, ZnsHost, ZnsHostConfig};
pub use crate::capability::{
    PageMeta, ZoneAction, ZoneDescriptor, ZoneError, ZoneState, ZoneStatus, Zoned, ZrwaLimits,
};

/// How a zone's blocks sit on the dies ([`ZnsConfig::zone_mapping`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZoneMapping {
    /// On consecutive dies, the zone's pages striped over them.
    Striped,
    /// On one die, the blocks filled in turn.
    Die,
}

/// Configuration of [`ZnsDevice`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZnsConfig {
    /// Erase blocks a zone is made of. 0 (the default): one a die.
    pub zone_blocks: u32,
    /// Writable pages of a zone (ZCAP), at most the zone size. 0 (the
    /// default): the whole zone.
    pub zone_capacity: u32,
    /// Most zones open at once. 0 (the default): no limit.
    pub max_open_zones: u32,
    /// Most zones active (open or closed) at once, at least `max_open_zones`.
    /// 0 (the default): no limit.
    pub max_active_zones: u32,
    /// Where a zone's blocks are. Default `"striped"`.
    pub zone_mapping: ZoneMapping,
    /// Pages of a Zone Random Write Area (ZRWAS, TP 4076). 0 (the default):
    /// no ZRWA (Open with ZRWA and ZRWA flushes are refused, and every zone
    /// block is a zone's). Otherwise at most the zone capacity, and the last
    /// two zones of the layout hold the ZRWA journal, not data (see the
    /// module documentation, "Zone Random Write Area").
    pub zrwa_pages: u32,
    /// The ZRWA flush granularity in pages (ZRWAFG): the write pointer of a
    /// zone with a ZRWA moves by multiples of it. Divides `zrwa_pages`.
    /// 0 (the default): one page.
    pub zrwa_flush_granularity: u32,
    /// Most zones with a ZRWA at once (NUMZRWA), at most `max_active_zones`
    /// when that is set. 0 (the default): as many as the journal holds,
    /// (zone size - 1) / `zrwa_pages`.
    pub max_zrwa_zones: u32,
}

impl Default for ZnsConfig {
    fn default() -> Self {
        ZnsConfig {
            zone_blocks: 0,
            zone_capacity: 0,
            max_open_zones: 0,
            max_active_zones: 0,
            zone_mapping: ZoneMapping::Striped,
            zrwa_pages: 0,
            zrwa_flush_granularity: 0,
            max_zrwa_zones: 0,
        }
    }
}

impl ZnsConfig {
    /// Checks the fields that need no device; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        if self.max_active_zones != 0 && self.max_open_zones > self.max_active_zones {
            return Err(FtlError::config(
                "ftl.max_open_zones",
                format!(
                    "zns.max_open_zones = {} is more than max_active_zones = {}: an open zone is active; give at most \
                     {} open zones, or more active ones",
                    self.max_open_zones, self.max_active_zones, self.max_active_zones
                ),
            ));
        }
        if self.zrwa_pages == 0 {
            for (value, key) in [
                (self.zrwa_flush_granularity, "ftl.zrwa_flush_granularity"),
                (self.max_zrwa_zones, "ftl.max_zrwa_zones"),
            ] {
                if value != 0 {
                    return Err(FtlError::config(
                        key,
                        format!(
                            "{key} = {value} with no ZRWA (ftl.zrwa_pages = 0): give ftl.zrwa_pages, the pages of a \
                             zone random write area, or leave {key} at 0"
                        ),
                    ));
                }
            }
            return Ok(());
        }
        let fg = self.zrwa_flush_granularity.max(1);
        if !self.zrwa_pages.is_multiple_of(fg) {
            return Err(FtlError::config(
                "ftl.zrwa_flush_granularity",
                format!(
                    "zns.zrwa_flush_granularity = {fg} pages does not divide zrwa_pages = {}: give a divisor of it \
                     (ZRWAFG divides ZRWAS)",
                    self.zrwa_pages
                ),
            ));
        }
        if self.max_active_zones != 0 && self.max_zrwa_zones > self.max_active_zones {
            return Err(FtlError::config(
                "ftl.max_zrwa_zones",
                format!(
                    "zns.max_zrwa_zones = {} is more than max_active_zones = {}: a zone with a ZRWA is active; give \
                     at most {}",
                    self.max_zrwa_zones, self.max_active_zones, self.max_active_zones
                ),
            ));
        }
        Ok(())
    }
}

impl crate::FtlBuilder for ZnsConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn crate::Ftl>, FtlError> {
        Ok(Box::new(ZnsDevice::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn crate::Ftl>, FtlError> {
        Ok(Box::new(ZnsDevice::recover(*self, io)?))
    }
}

/// The registry's entries for this module's schemes ([`crate::registry`]):
/// the host FTL over the zoned device (the zoned device itself speaks zone
/// commands, which the block front ends do not yet drive).
pub const SCHEMES: [crate::entry::Scheme; 2] = [crate::entry::Scheme {
    name: "zns-host",
    summary: "a log-structured host FTL (page map and greedy garbage collection on the host, as dm-zoned) over an NVMe ZNS device: zone appends with the logical page as metadata, zone resets, no device GC",
    paper: "NVMe ZNS 1.1 (the host-device split of 003 Section 3, as products ship it)",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("zns-host", ZnsHostConfig::default(), p, ZnsHostConfig::validate),
}, crate::entry::Scheme {
    name: "zns",
    summary: "the NVMe ZNS device itself, no host FTL: zones written at their write pointers or appended to, opened, closed, finished, reset and reported through zone commands (Python's Device: zones, zone_append, zone_write, zone_manage), with optional Zone Random Write Areas (zrwa_pages: open-zrwa, writes anywhere in the window, flush-zrwa); refused as a block device by replays and block front ends (use zns-host for those)",
    paper: "NVMe ZNS 1.1 Section 2.1.1 (the zone state machine), on the strict medium",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("zns", ZnsConfig::default(), p, ZnsConfig::validate),
}];
