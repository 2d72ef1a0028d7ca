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
//! The state machine, its limits and its errors are [`zones`]'s (every
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

use serde::{Deserialize, Serialize};

use crate::{FtlError, Io};

mod device;
mod log;
mod zones;
mod zrwa;

pub use self::device::ZnsDevice;
pub use self::log::{ZnsHost, ZnsHostConfig};
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
    summary: "the NVMe ZNS device itself, no host FTL: zones written at their write pointers or appended to, opened, closed, finished, reset and reported through zone commands (Python's Device: zones, zone_append, zone_write, zone_manage); refused as a block device by replays and block front ends (use zns-host for those)",
    paper: "NVMe ZNS 1.1 Section 2.1.1 (the zone state machine), on the strict medium",
    admits_tasks: false,
    bounds: false,
    build: |p, _| crate::entry::configured("zns", ZnsConfig::default(), p, ZnsConfig::validate),
}];
