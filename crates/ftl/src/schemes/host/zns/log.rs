//! `zns-host`: a host FTL over the zoned device, log-structured as dm-zoned
//! and F2FS's zoned mode are, so that block workloads run on a ZNS device
//! unchanged. The host keeps the page map in its RAM; the device keeps none.
//!
//! - **Writes** append to the host's open zone, with the logical page in the
//!   page's metadata ([`Zoned::append`]); the page's old copy becomes invalid.
//!   A full zone is closed for writes and a free (empty) one opened. With
//!   `streams` above 1 the host keeps an open zone a stream and a write goes
//!   to the zone of its hint's stream ([`Hint::stream`] modulo `streams`;
//!   none: stream 0), so data a placement policy tells apart is kept in
//!   zones apart, as an FDP device keeps it in reclaim units apart.
//! - **Garbage collection on the host**, before a write, while no more than
//!   `gc_free_zones` zones are free: the zone with the fewest valid pages
//!   (greedy; ties to the lower zone) among the written ones has its valid
//!   pages read and appended to the host's garbage-collection zone, then is
//!   reset once every copy is programmed (a cut between keeps both copies,
//!   the newer wins). With streams, each stream has a zone of its own for
//!   copies too, and a victim's pages go to its stream's (the stream a zone
//!   was opened for), so garbage collection does not mix what the streams
//!   keep apart. Its reads, copies and erases count as garbage
//!   collection's, so the report's WAF is the host's and the device's
//!   together (the device itself adds none).
//! - **SepBIT's classes for copies** (`gc_placement = "sepbit"`; the
//!   default `"stream"` is the above): garbage collection's copies go to
//!   four copy zones of their own, SepBIT's classes 3 to 6 (Wang et al.,
//!   FAST '22; the rules, the clock and ℓ are [`super::sepbit`]'s): a page
//!   from a victim that was a *class-1* zone to class 3, any other by its
//!   age since its last host write against ℓ, the mean lifetime of the
//!   class-1 zones reclaimed last: class 4 below 4ℓ, 5 below 16ℓ, 6 from
//!   16ℓ. Host writes keep their stream's zone (SepBIT's classes 1 and 2
//!   are the placement policy's: with `placement = { policy = "lifetime" }`
//!   this is SepBIT end to end). A class-1 zone is one opened for any
//!   stream but 0: the `lifetime` policy gives stream 0 to the pages of
//!   unknown or longest inferred lifetime (SepBIT's class 2) and the
//!   others to the shorter-lived. With one stream there is no class 1:
//!   every victim's copies go by age, and ℓ is measured on the reclaimed
//!   zones of host writes. The zone report's `zone_stream_by_zone` gives a
//!   copy zone `streams + k` for class `3 + k`.
//! - **Recovery**: the device's zones come back from the medium; the host
//!   reads every written page's metadata and keeps, for each logical page,
//!   the copy written last. The zones left closed (at most the ones it had
//!   open) take its writes and copies again, stream by stream in zone order
//!   (which stream a zone was is not kept on the medium: every zone written
//!   before the cut counts as stream 0's; with SepBIT's classes, the
//!   pages' ages and ℓ restart too, see [`super::sepbit`]).
//! - **Faults**: a write whose program fails (its zone turns read-only) is
//!   retried in a fresh zone; a read-only zone is collected like any other
//!   but not reset, and never written again.
//! - **Capacity**: the zones' capacity less `over_provisioning`, and at most
//!   what leaves `gc_free_zones`, the open zones (two a stream: its writes'
//!   and its copies'; with SepBIT's classes one a stream and four for the
//!   copies) and one more free.
//!
//! Trims drop the host's mapping (they are not durable, as elsewhere).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use ftlab_nand::Payload;

use super::sepbit::{GcClasses, GC_CLASSES};
use super::{ZnsConfig, ZnsDevice};
use crate::capability::{ZoneAction, ZoneState, Zoned};
use crate::{Ftl, FtlError, Hint, Io, Lpn, Purpose};

const NONE: u32 = u32::MAX;

/// Most streams (open zones for host writes) of [`ZnsHostConfig::streams`].
pub const MAX_STREAMS: u32 = 64;

/// Where garbage collection puts its copies ([`ZnsHostConfig::gc_placement`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcPlacement {
    /// A copy zone a stream: a victim's pages to its stream's.
    Stream,
    /// SepBIT's classes 3 to 6 (see the module documentation).
    Sepbit,
}

/// Configuration of [`ZnsHost`]. Every field has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZnsHostConfig {
    /// Fraction of the zones' capacity held back from the host's logical
    /// space, in [0, 1). Default 0.10.
    pub over_provisioning: f64,
    /// Garbage collection runs before a write while at most this many zones
    /// are free (at least 1). Default 2.
    pub gc_free_zones: u32,
    /// Open zones for host writes, one a stream of the writes' hints (1 to
    /// `MAX_STREAMS`). Default 1: every write to one zone.
    pub streams: u32,
    /// Where garbage collection's copies go: `"stream"` (the default), the
    /// victim's stream's copy zone; `"sepbit"`, SepBIT's four classes by
    /// origin and age (see the module documentation).
    pub gc_placement: GcPlacement,
    /// The zoned device (`[ftl.zns]`): its zones, limits and mapping.
    pub zns: ZnsConfig,
}

impl Default for ZnsHostConfig {
    fn default() -> Self {
        ZnsHostConfig {
            over_provisioning: 0.10,
            gc_free_zones: 2,
            streams: 1,
            gc_placement: GcPlacement::Stream,
            zns: ZnsConfig::default(),
        }
    }
}

impl ZnsHostConfig {
    /// Garbage collection's copy zones: one a stream, or one a SepBIT class.
    fn copy_zones(&self) -> u32 {
        match self.gc_placement {
            GcPlacement::Stream => self.streams,
            GcPlacement::Sepbit => GC_CLASSES,
        }
    }

    /// Zones the host keeps open: a stream's writes' and the copy zones.
    fn open_zones(&self) -> u32 {
        self.streams + self.copy_zones()
    }

    /// Checks the fields that need no device; errors name the field.
    pub fn validate(&self) -> Result<(), FtlError> {
        crate::config::over_provisioning("zns-host", self.over_provisioning)?;
        if self.gc_free_zones == 0 {
            return Err(FtlError::config(
                "ftl.gc_free_zones",
                "zns-host.gc_free_zones must be at least 1: garbage collection needs a free zone to copy into",
            ));
        }
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return Err(FtlError::config(
                "ftl.streams",
                format!(
                    "zns-host.streams must be 1 to {MAX_STREAMS} (an open zone a stream of the writes' hints), got {}",
                    self.streams
                ),
            ));
        }
        let open = self.open_zones();
        for (limit, key) in [
            (self.zns.max_open_zones, "ftl.zns.max_open_zones"),
            (self.zns.max_active_zones, "ftl.zns.max_active_zones"),
        ] {
            if limit != 0 && limit < open {
                let (why, fix) = match self.gc_placement {
                    GcPlacement::Stream => (
                        format!(
                            "two for each of its {} streams: its writes' and garbage collection's copies'",
                            self.streams
                        ),
                        "fewer ftl.streams",
                    ),
                    GcPlacement::Sepbit => (
                        format!(
                            "one for each of its {} streams' writes and {GC_CLASSES} for garbage collection's copies, \
                             ftl.gc_placement = \"sepbit\"'s classes",
                            self.streams
                        ),
                        "fewer ftl.streams, or ftl.gc_placement = \"stream\"",
                    ),
                };
                return Err(FtlError::config(
                    key,
                    format!(
                        "{key} = {limit}: the host FTL keeps {open} zones open ({why}); give at least {open}, or 0 \
                         for no limit, or {fix}"
                    ),
                ));
            }
        }
        self.zns.validate()
    }
}

impl crate::FtlBuilder for ZnsHostConfig {
    fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(ZnsHost::format(*self, io)?))
    }
    fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
        Ok(Box::new(ZnsHost::recover(*self, io)?))
    }
}

/// The host FTL and the device under it (see the module documentation).
#[derive(Debug)]
pub struct ZnsHost {
    dev: ZnsDevice,
    config: ZnsHostConfig,
    logical: u32,
    /// Logical page to device page.
    map: Vec<u32>,
    /// Device page to logical page.
    owner: Vec<u32>,
    /// Valid pages per zone.
    valid: Vec<u32>,
    /// Empty zones, the next to open first.
    free: VecDeque<u32>,
    /// The zone each stream's host writes go to, and the one garbage
    /// collection copies its pages to.
    open: Vec<Option<u32>>,
    gc_open: Vec<Option<u32>>,
    /// The stream each zone was last opened for (a SepBIT class's copy
    /// zone: `streams` + the class's index).
    zone_stream: Vec<u32>,
    /// SepBIT's clock, ages and ℓ, with `gc_placement = "sepbit"`.
    classes: Option<GcClasses>,
}

impl ZnsHost {
    fn around(config: ZnsHostConfig, dev: ZnsDevice) -> Result<Self, FtlError> {
        config.validate()?;
        let zones = dev.zones();
        let usable = (0..zones).filter(|&z| dev.zone(z).is_ok_and(|d| d.state != ZoneState::Offline)).count() as u64;
        let cap = u64::from(dev.zone_capacity());
        let reserve = u64::from(config.gc_free_zones) + u64::from(config.open_zones()) + 1;
        let wanted = ((usable * cap) as f64 * (1.0 - config.over_provisioning)).floor() as u64;
        let logical = wanted.min(usable.saturating_sub(reserve) * cap);
        if logical == 0 {
            return Err(FtlError::config(
                "device",
                format!(
                    "the device is too small for zns-host: {usable} usable zones, {reserve} needed as garbage \
                     collection's reserve and open zones; give more blocks, or fewer blocks a zone \
                     (ftl.zns.zone_blocks)"
                ),
            ));
        }
        let pages = dev.logical_pages() as usize;
        Ok(ZnsHost {
            logical: logical as u32,
            map: vec![NONE; logical as usize],
            owner: vec![NONE; pages],
            valid: vec![0; zones as usize],
            free: VecDeque::new(),
            open: vec![None; config.streams as usize],
            gc_open: vec![None; config.copy_zones() as usize],
            zone_stream: vec![0; zones as usize],
            classes: (config.gc_placement == GcPlacement::Sepbit).then(|| GcClasses::new(logical as u32, zones)),
            dev,
            config,
        })
    }

    pub fn format(config: ZnsHostConfig, io: &mut Io) -> Result<Self, FtlError> {
        let dev = ZnsDevice::format(config.zns, io)?;
        let mut host = Self::around(config, dev)?;
        host.free = (0..host.dev.zones()).filter(|&z| host.state(z) == ZoneState::Empty).collect();
        Ok(host)
    }

    /// The host rebuilt after a power cut: the device's zones from the
    /// medium, the map from the pages' metadata (the copy written last
    /// wins), zones left closed finished.
    pub fn recover(config: ZnsHostConfig, io: &mut Io) -> Result<Self, FtlError> {
        let dev = ZnsDevice::recover(config.zns, io)?;
        let mut host = Self::around(config, dev)?;
        let mut newest = vec![0u64; host.logical as usize];
        for z in 0..host.dev.zones() {
            let d = host.dev.zone(z)?;
            for page in d.start..d.write_pointer {
                let Some(m) = host.dev.metadata(io, Lpn(page))? else { continue };
                let l = m.meta as usize;
                if l < newest.len() && m.order >= newest[l] {
                    if host.map[l] != NONE {
                        host.invalidate(host.map[l]);
                    }
                    newest[l] = m.order;
                    host.place(m.meta, page);
                }
            }
            match d.state {
                ZoneState::Empty => host.free.push_back(z),
                // The host had a zone open a stream and one for garbage
                // collection: it writes on in them; any other is finished.
                ZoneState::Closed if host.open.contains(&None) || host.gc_open.contains(&None) => {
                    let slot = host.open.iter_mut().chain(host.gc_open.iter_mut()).find(|o| o.is_none());
                    if let Some(slot) = slot {
                        *slot = Some(z);
                    }
                }
                ZoneState::Closed => {
                    // A finish that fails leaves the zone read-only: collected
                    // all the same.
                    let _ = host.dev.manage(io, z, ZoneAction::Finish);
                }
                _ => {}
            }
        }
        Ok(host)
    }

    fn state(&self, z: u32) -> ZoneState {
        self.dev.zone(z).map_or(ZoneState::Offline, |d| d.state)
    }

    fn zone_of(&self, page: u32) -> u32 {
        page / self.dev.zone_size()
    }

    fn place(&mut self, lpn: u32, page: u32) {
        self.map[lpn as usize] = page;
        self.owner[page as usize] = lpn;
        let z = self.zone_of(page) as usize;
        self.valid[z] += 1;
    }

    fn invalidate(&mut self, page: u32) {
        self.owner[page as usize] = NONE;
        let z = self.zone_of(page) as usize;
        self.valid[z] -= 1;
    }

    /// Appends `data` for `lpn` to garbage collection's copy zone `stream`
    /// (`gc`: the stream's, or the SepBIT class's) or to stream `stream`'s
    /// (opening a free one when it has none or it filled), counted as
    /// garbage collection's or the host's; a failed program (the zone
    /// turned read-only) is retried once in a fresh zone. Returns the
    /// device page.
    fn append(&mut self, io: &mut Io, gc: bool, stream: usize, lpn: u32, data: Payload) -> Result<u32, FtlError> {
        let purpose = if gc { Purpose::Gc } else { Purpose::Host };
        let mut retried = false;
        loop {
            let slot = if gc { self.gc_open[stream] } else { self.open[stream] };
            let writable = |z: u32| {
                matches!(
                    self.state(z),
                    ZoneState::Empty | ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened | ZoneState::Closed
                )
            };
            let zone = match slot.filter(|&z| writable(z)) {
                Some(z) => z,
                None => {
                    let z = self.free.pop_front().ok_or_else(|| {
                        FtlError::DeviceFull(format!(
                            "zns-host: no free zone for {}",
                            if gc { "a copy" } else { "a write" }
                        ))
                    })?;
                    if let Some(classes) = &mut self.classes {
                        classes.opened(z);
                    }
                    z
                }
            };
            if gc {
                self.gc_open[stream] = Some(zone);
            } else {
                self.open[stream] = Some(zone);
            }
            self.zone_stream[zone as usize] = match (&self.classes, gc) {
                (Some(_), true) => self.config.streams + stream as u32,
                _ => stream as u32,
            };
            match self.dev.as_purpose(purpose, |d| d.append(io, zone, data.clone(), Some(lpn))) {
                Ok(page) => return Ok(page.0),
                Err(_) if !retried && self.state(zone) == ZoneState::ReadOnly => retried = true,
                Err(e) => return Err(e),
            }
        }
    }

    /// Collects one zone, if any is worth it: its valid pages copied, then
    /// reset. Returns whether one was collected.
    fn collect(&mut self, io: &mut Io) -> Result<bool, FtlError> {
        let cap = self.dev.zone_capacity();
        let victim = (0..self.dev.zones())
            .filter(|&z| !self.open.contains(&Some(z)) && !self.gc_open.contains(&Some(z)))
            .filter(|&z| match self.state(z) {
                ZoneState::Full => true,
                ZoneState::ReadOnly => self.valid[z as usize] > 0,
                _ => false,
            })
            .min_by_key(|&z| (self.valid[z as usize], z));
        let Some(victim) = victim.filter(|&z| self.valid[z as usize] < cap || self.state(z) == ZoneState::ReadOnly)
        else {
            return Ok(false);
        };
        self.collect_zone(io, victim)?;
        Ok(true)
    }

    /// Collects zone `victim`: its valid pages copied, then reset (unless
    /// read-only).
    fn collect_zone(&mut self, io: &mut Io, victim: u32) -> Result<(), FtlError> {
        let group = self.zone_stream[victim as usize];
        let stream = (group % self.config.streams) as usize;
        // SepBIT: a class-1 victim (a zone of a stream but 0) sends its pages
        // to class 3 and its lifetime to ℓ; with one stream, the host
        // writes' zones give ℓ.
        let from_class1 = group < self.config.streams && group != 0;
        if let Some(classes) = &mut self.classes {
            if from_class1 || (self.config.streams == 1 && group == 0) {
                classes.reclaimed_class1(victim);
            }
        }
        let start = victim * self.dev.zone_size();
        for page in start..start + self.dev.zone_size() {
            let lpn = self.owner[page as usize];
            if lpn == NONE {
                continue;
            }
            let data = self
                .dev
                .as_purpose(Purpose::Gc, |d| d.read(io, Lpn(page)))?
                .ok_or_else(|| FtlError::Recovery(format!("zns-host: page {page} is mapped but reads nothing")))?;
            let slot = self.classes.as_ref().map_or(stream, |c| c.class(from_class1, lpn) as usize);
            let to = self.append(io, true, slot, lpn, data)?;
            self.dev.supersede(io, page);
            self.invalidate(page);
            self.place(lpn, to);
        }
        if self.state(victim) == ZoneState::ReadOnly {
            return Ok(());
        }
        // The reset erases no block before the copies of its pages are
        // programmed (their erase barriers, set as each was copied): a cut
        // never keeps the reset and loses a copy.
        self.dev.as_purpose(Purpose::Gc, |d| d.manage(io, victim, ZoneAction::Reset))?;
        if self.state(victim) == ZoneState::Empty {
            self.free.push_back(victim);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;

impl Ftl for ZnsHost {
    fn name(&self) -> &'static str {
        "zns-host"
    }

    fn logical_pages(&self) -> u32 {
        self.logical
    }

    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let l = crate::check_lpn(lpn, self.logical)?;
        match self.map[l] {
            NONE => Ok(None),
            page => self.dev.read(io, Lpn(page)),
        }
    }

    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        let l = crate::check_lpn(lpn, self.logical)?;
        io.independent(|io| -> Result<(), FtlError> {
            while self.free.len() <= self.config.gc_free_zones as usize {
                if !self.collect(io)? {
                    break;
                }
            }
            Ok(())
        })?;
        let stream = hint.stream.map_or(0, |s| (s % self.config.streams) as usize);
        let page = self.append(io, false, stream, lpn.0, data)?;
        if self.map[l] != NONE {
            self.dev.supersede(io, self.map[l]);
            self.invalidate(self.map[l]);
        }
        self.place(lpn.0, page);
        if let Some(classes) = &mut self.classes {
            classes.host_write(lpn.0);
        }
        Ok(())
    }

    fn trim(&mut self, _io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        let l = crate::check_lpn(lpn, self.logical)?;
        if self.map[l] != NONE {
            self.invalidate(self.map[l]);
            self.map[l] = NONE;
        }
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        (self.map.len() as u64 + self.owner.len() as u64 + self.valid.len() as u64) * 4
            + self.dev.ram_bytes()
            + self.classes.as_ref().map_or(0, GcClasses::ram_bytes)
    }

    fn memory(&self) -> crate::FtlMemory {
        crate::FtlMemory {
            map: self.map.len() as u64 * 4,
            valid: self.owner.len() as u64 * 4,
            other: self.valid.len() as u64 * 4
                + self.dev.ram_bytes()
                + self.classes.as_ref().map_or(0, GcClasses::ram_bytes),
        }
    }

    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut g = self.dev.gauges();
        g.push(("zones_free", self.free.len() as f64));
        // SepBIT's ℓ in host pages (0 until measured).
        if let Some(classes) = &self.classes {
            g.push(("sepbit_threshold_pages", classes.threshold().unwrap_or(0.0)));
        }
        g
    }

    /// The device's zone report, with the host's valid pages and the stream
    /// of each zone.
    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        let mut c = self.dev.curves();
        c.push(("zone_valid_pages_by_zone", self.valid.iter().map(|&v| f64::from(v)).collect()));
        c.push(("zone_stream_by_zone", self.zone_stream.iter().map(|&s| f64::from(s)).collect()));
        c
    }

    fn check_invariants(&self, flash: &crate::Flash) -> Result<(), String> {
        self.dev.check_invariants(flash)?;
        for (l, &page) in self.map.iter().enumerate() {
            if page != NONE && self.owner[page as usize] != l as u32 {
                return Err(format!(
                    "logical page {l} maps to device page {page}, owned by {}",
                    self.owner[page as usize]
                ));
            }
        }
        let mut valid = vec![0u32; self.valid.len()];
        for (page, &l) in self.owner.iter().enumerate() {
            if l != NONE {
                valid[self.zone_of(page as u32) as usize] += 1;
            }
        }
        if valid != self.valid {
            return Err("the valid counts per zone disagree with the map".into());
        }
        Ok(())
    }
}
