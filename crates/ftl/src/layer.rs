//! FTLs wrapped around another FTL: a write buffer in device RAM
//! ([`crate::buffer`]), FSR's limit on the logical space ([`crate::schemes::realtime::fsr`]).
//!
//! A [`Layer`] takes the commands it changes and leaves the rest to the FTL
//! inside it; [`Layered`] makes it an [`Ftl`] that hands on everything else of
//! the inner scheme: its capabilities (real-time guarantee and admission,
//! placement), its extended command set, prefetch hints, gauges, curves,
//! counters, invariants and memory (plus the layer's own). Every hook of
//! [`Layer`] forwards by default, so a wrapper cannot drop what the scheme
//! inside offers by forgetting a method; a layer that changes one (a buffer
//! that holds pages in RAM answers for their placement) overrides that hook on
//! purpose. The test `tests/layers.rs` wraps every registered scheme in every
//! layer and checks that each capability, bound and task admission survives.

use ftlab_nand::{DieId, Payload, SimTime};

use crate::{
    Capabilities, Durability, Extension, Flash, Ftl, FtlError, FtlMemory, Hint, Io, Lpn, Placement, Prefetch, RealTime,
};

/// An FTL around another (see the module docs). Every hook forwards to the
/// inner FTL unless the layer overrides it.
pub trait Layer: Send + std::fmt::Debug {
    /// The FTL inside.
    type Inner: Ftl + ?Sized;
    /// The FTL inside.
    fn inner(&self) -> &Self::Inner;
    /// The FTL inside.
    fn inner_mut(&mut self) -> &mut Self::Inner;
    /// The name the device reports: the inner scheme's unless the layer is a
    /// scheme of its own (FSR).
    fn name(&self) -> &'static str {
        self.inner().name()
    }
    /// Reads a logical page.
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.inner_mut().read(io, lpn)
    }
    /// Writes a logical page.
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        self.inner_mut().write(io, lpn, data, hint)
    }
    /// Discards a logical page.
    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        self.inner_mut().trim(io, lpn)
    }
    /// Makes every earlier write durable.
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.inner_mut().flush(io)
    }
    /// Idle time until `until`.
    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        self.inner_mut().background(io, until)
    }
    /// The work a write needs before its program ([`Ftl::prepare_write`]).
    fn prepare_write(&mut self, io: &mut Io, lpn: Lpn) -> Result<SimTime, FtlError> {
        self.inner_mut().prepare_write(io, lpn)
    }
    /// The work a read needs before its flash read ([`Ftl::prepare_read`]).
    fn prepare_read(&mut self, io: &mut Io, lpn: Lpn) -> Result<SimTime, FtlError> {
        self.inner_mut().prepare_read(io, lpn)
    }
    /// When the layered device next takes a write without holding it back
    /// ([`Ftl::write_room_at`]): the inner FTL's, unless the layer takes
    /// writes itself (then never held back, unless the layer says otherwise).
    fn write_room_at(&mut self, io: &mut Io) -> Result<Option<SimTime>, FtlError> {
        if self.takes_writes() {
            return Ok(None);
        }
        self.inner_mut().write_room_at(io)
    }
    /// When acknowledged writes become durable.
    fn durability(&self) -> Durability {
        self.inner().durability()
    }
    /// RAM the layer adds to the inner FTL's, in bytes (reported under
    /// [`FtlMemory::other`]).
    fn own_ram_bytes(&self) -> u64 {
        0
    }
    /// The real-time guarantee of the layered device: the inner scheme's,
    /// unless the layer is a real-time scheme of its own (FSR).
    fn realtime(&self) -> Option<&dyn RealTime> {
        self.inner().capabilities().realtime
    }
    /// Whether the layer holds logical page `lpn` in RAM now (a write buffer):
    /// a read of it touches no die.
    fn holds(&self, _lpn: Lpn) -> bool {
        false
    }
    /// Whether host writes land in the layer's RAM rather than on a die.
    fn takes_writes(&self) -> bool {
        false
    }
    /// The layer's own gauges, reported after the inner scheme's.
    fn own_gauges(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Zeroes the layer's own counters (with the inner scheme's, when the
    /// measured phase starts).
    fn reset_own_counters(&mut self) {}
}

/// A [`Layer`] as an [`Ftl`]: the layer's commands, the inner scheme's
/// everything else (see the module docs).
#[derive(Debug)]
pub struct Layered<L>(pub L);

impl<L: Layer> Layered<L> {
    /// The layer.
    pub fn layer(&self) -> &L {
        &self.0
    }
}

impl<L: Layer> Ftl for Layered<L> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn logical_pages(&self) -> u32 {
        self.0.inner().logical_pages()
    }
    fn unit_bytes(&self) -> Option<u32> {
        self.0.inner().unit_bytes()
    }
    fn prefetch(&self, flash: &Flash, lpn: Lpn, what: Prefetch) {
        self.0.inner().prefetch(flash, lpn, what);
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.0.read(io, lpn)
    }
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        self.0.write(io, lpn, data, hint)
    }
    fn trim(&mut self, io: &mut Io, lpn: Lpn) -> Result<(), FtlError> {
        self.0.trim(io, lpn)
    }
    fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
        self.0.flush(io)
    }
    fn background(&mut self, io: &mut Io, until: SimTime) -> Result<(), FtlError> {
        self.0.background(io, until)
    }
    fn prepare_write(&mut self, io: &mut Io, lpn: Lpn) -> Result<SimTime, FtlError> {
        self.0.prepare_write(io, lpn)
    }
    /// A page the layer holds is read from RAM: nothing to prepare.
    fn prepare_read(&mut self, io: &mut Io, lpn: Lpn) -> Result<SimTime, FtlError> {
        if self.0.holds(lpn) {
            return Ok(io.now());
        }
        self.0.prepare_read(io, lpn)
    }
    fn write_room_at(&mut self, io: &mut Io) -> Result<Option<SimTime>, FtlError> {
        self.0.write_room_at(io)
    }
    fn durability(&self) -> Durability {
        self.0.durability()
    }
    fn ram_bytes(&self) -> u64 {
        self.0.inner().ram_bytes() + self.0.own_ram_bytes()
    }
    fn memory(&self) -> FtlMemory {
        let inner = self.0.inner().memory();
        FtlMemory { other: inner.other + self.0.own_ram_bytes(), ..inner }
    }
    fn capabilities(&self) -> Capabilities<'_> {
        let inner = self.0.inner().capabilities();
        Capabilities { realtime: self.0.realtime(), placement: inner.placement.map(|_| self as &dyn Placement) }
    }
    fn extension(&mut self) -> Extension<'_> {
        self.0.inner_mut().extension()
    }
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        let mut g = self.0.inner().gauges();
        g.extend(self.0.own_gauges());
        g
    }
    fn reset_counters(&mut self) {
        self.0.inner_mut().reset_counters();
        self.0.reset_own_counters();
    }
    fn curves(&self) -> Vec<(&'static str, Vec<f64>)> {
        self.0.inner().curves()
    }
    fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
        self.0.inner().check_invariants(flash)
    }
}

/// The inner scheme's placement, except for what the layer holds in RAM.
impl<L: Layer> Placement for Layered<L> {
    fn die_of(&self, lpn: Lpn) -> Option<DieId> {
        if self.0.holds(lpn) {
            return None;
        }
        self.0.inner().capabilities().placement?.die_of(lpn)
    }
    fn read_slot(&self, lpn: Lpn) -> Option<(u32, u32)> {
        if self.0.holds(lpn) {
            return None;
        }
        self.0.inner().capabilities().placement?.read_slot(lpn)
    }
    fn write_die(&self, lpn: Lpn, hint: &Hint) -> Option<DieId> {
        if self.0.takes_writes() {
            return None;
        }
        self.0.inner().capabilities().placement?.write_die(lpn, hint)
    }
    fn write_plane(&self, lpn: Lpn, hint: &Hint) -> Option<u32> {
        if self.0.takes_writes() {
            return None;
        }
        self.0.inner().capabilities().placement?.write_plane(lpn, hint)
    }
    fn write_offset(&self, lpn: Lpn, hint: &Hint) -> Option<u32> {
        if self.0.takes_writes() {
            return None;
        }
        self.0.inner().capabilities().placement?.write_offset(lpn, hint)
    }
    fn pages_taken_by_reads(&self, lpn: Lpn, hint: &Hint) -> u64 {
        if self.0.takes_writes() {
            return 0;
        }
        self.0.inner().capabilities().placement.map_or(0, |p| p.pages_taken_by_reads(lpn, hint))
    }
}
