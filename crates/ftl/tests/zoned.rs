#![allow(clippy::unwrap_used)]
//! The zoned conformance suite on the ZNS device, in both zone mappings and
//! with limits, and on devices with planted bugs it must catch.

use ftlab_ftl::conformance::small_geometry;
use ftlab_ftl::conformance_zoned::{self as suite, zoned_suite};
use ftlab_ftl::zns::{ZnsConfig, ZoneMapping};

#[test]
fn the_zns_device_passes_the_zoned_suite_striped_and_on_one_die() {
    zoned_suite(&ZnsConfig::default(), small_geometry());
    let die = ZnsConfig { zone_mapping: ZoneMapping::Die, zone_blocks: 2, ..ZnsConfig::default() };
    zoned_suite(&die, small_geometry());
}

#[test]
fn the_zns_device_passes_with_limits_and_a_smaller_capacity() {
    let limited = ZnsConfig { max_open_zones: 3, max_active_zones: 5, zone_capacity: 50, ..ZnsConfig::default() };
    zoned_suite(&limited, small_geometry());
}

mod planted {
    //! A zoned device with one planted bug, which the suite must catch.

    use ftlab_ftl::zns::{PageMeta, ZnsConfig, ZnsDevice, ZoneAction, ZoneDescriptor, ZoneState, Zoned};
    use ftlab_ftl::{Extension, Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn};
    use ftlab_nand::{Payload, SimTime};

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Plant {
        /// Two appends to one zone issued at one instant are told the same
        /// page (the device reads the write pointer for both before either
        /// moves it), though the data goes to two pages.
        AppendRace,
        /// After a power cut, every closed zone reports its write pointer at
        /// its start: the write pointers were not recovered.
        LostWritePointers,
    }

    #[derive(Debug)]
    pub struct Builder(pub Plant);

    impl FtlBuilder for Builder {
        fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
            let inner = ZnsDevice::format(ZnsConfig::default(), io)?;
            Ok(Box::new(Device { inner, plant: self.0, recovered: false, last: None }))
        }
        fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
            let inner = ZnsDevice::recover(ZnsConfig::default(), io)?;
            Ok(Box::new(Device { inner, plant: self.0, recovered: true, last: None }))
        }
    }

    #[derive(Debug)]
    struct Device {
        inner: ZnsDevice,
        plant: Plant,
        recovered: bool,
        last: Option<(SimTime, u32, Lpn)>,
    }

    impl Ftl for Device {
        fn name(&self) -> &'static str {
            "planted-zns"
        }
        fn logical_pages(&self) -> u32 {
            self.inner.logical_pages()
        }
        fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
            self.inner.read(io, lpn)
        }
        fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
            self.inner.write(io, lpn, data, hint)
        }
        fn ram_bytes(&self) -> u64 {
            self.inner.ram_bytes()
        }
        fn extension(&mut self) -> Extension<'_> {
            Extension::Zoned(self)
        }
        fn check_invariants(&self, flash: &Flash) -> Result<(), String> {
            self.inner.check_invariants(flash)
        }
    }

    impl Zoned for Device {
        fn zones(&self) -> u32 {
            self.inner.zones()
        }
        fn zone_size(&self) -> u32 {
            self.inner.zone_size()
        }
        fn zone_capacity(&self) -> u32 {
            self.inner.zone_capacity()
        }
        fn max_open(&self) -> u32 {
            self.inner.max_open()
        }
        fn max_active(&self) -> u32 {
            self.inner.max_active()
        }
        fn zone(&self, zone: u32) -> Result<ZoneDescriptor, FtlError> {
            let mut d = self.inner.zone(zone)?;
            if self.plant == Plant::LostWritePointers && self.recovered && d.state == ZoneState::Closed {
                d.write_pointer = d.start;
                d.state = ZoneState::Empty;
            }
            Ok(d)
        }
        fn manage(&mut self, io: &mut Io, zone: u32, action: ZoneAction) -> Result<(), FtlError> {
            self.inner.manage(io, zone, action)
        }
        fn metadata(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<PageMeta>, FtlError> {
            self.inner.metadata(io, lpn)
        }
        fn append(&mut self, io: &mut Io, zone: u32, data: Payload, meta: Option<u32>) -> Result<Lpn, FtlError> {
            let lpn = self.inner.append(io, zone, data, meta)?;
            let told = match self.last {
                Some((t, z, first)) if self.plant == Plant::AppendRace && t == io.now() && z == zone => first,
                _ => lpn,
            };
            self.last = Some((io.now(), zone, told));
            Ok(told)
        }
    }
}

/// Runs `check` and returns its panic message; fails if it did not panic.
fn caught(check: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(check).expect_err("the suite passed a device with a planted bug");
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[test]
fn the_suite_catches_a_planted_append_ordering_bug() {
    let b = planted::Builder(planted::Plant::AppendRace);
    let message = caught(|| suite::appends_in_order(&b, small_geometry()));
    assert!(message.contains("append went to") || message.contains("two appends returned"), "{message}");
}

#[test]
fn the_suite_catches_a_planted_write_pointer_loss() {
    let b = planted::Builder(planted::Plant::LostWritePointers);
    // The plant acts only after a power cut: the checks without one pass.
    suite::state_machine(&b, small_geometry());
    suite::appends_in_order(&b, small_geometry());
    let message = caught(|| suite::power_cuts(&b, small_geometry(), 0));
    assert!(message.contains("after a cut"), "{message}");
}

/// A device with zone 0 written `pages` pages, 1 ms apart; returns the time
/// after the last.
fn written(pages: u32) -> (suite::ZonedHarness<'static>, ftlab_nand::SimTime) {
    static CONFIG: ZnsConfig = ZnsConfig {
        zone_blocks: 0,
        zone_capacity: 0,
        max_open_zones: 0,
        max_active_zones: 0,
        zone_mapping: ZoneMapping::Striped,
    };
    let mut h = suite::ZonedHarness::new(&CONFIG, small_geometry(), 1);
    for _ in 0..pages {
        h.append(0).unwrap();
        h.advance(1_000_000);
    }
    let now = h.now;
    (h, now)
}

#[test]
fn a_cut_during_a_reset_completes_it() {
    use ftlab_ftl::zns::{ZoneAction, ZoneState};
    // Cut amid the first erase (torn), after it (the others under way), and
    // after the reset was acknowledged.
    for after_us in [100, 1_600, 20_000] {
        let (mut h, now) = written(10);
        let acked = h.manage(0, ZoneAction::Reset).unwrap();
        assert!(acked.as_ns() >= now.as_ns() + 3_000_000, "the first block's erase, then the others'");
        h.cut_and_recover(ftlab_nand::SimTime(now.as_ns() + after_us * 1_000));
        assert_eq!((h.state(0), h.written(0), h.read(0).unwrap()), (ZoneState::Empty, 0, None), "cut {after_us} us in");
        let (lpn, token, _) = h.append(0).unwrap();
        assert_eq!((lpn.0, h.read(0).unwrap()), (0, Some(token)));
    }
}

#[test]
fn a_cut_before_a_reset_started_keeps_the_zone() {
    use ftlab_ftl::zns::{ZoneAction, ZoneState};
    let (mut h, now) = written(10);
    h.manage(0, ZoneAction::Reset).unwrap();
    h.cut_and_recover(now);
    assert_eq!((h.state(0), h.written(0)), (ZoneState::Closed, 10));
    assert!(h.read(9).unwrap().is_some());
}

#[test]
fn a_page_torn_at_the_write_pointer_leaves_the_zone_full_with_the_pages_before_it() {
    use ftlab_ftl::zns::ZoneState;
    let (mut h, now) = written(10);
    let (_, _, acked) = h.append(0).unwrap();
    // Cut while the eleventh page is programmed: it is torn, not acknowledged.
    h.cut_and_recover(ftlab_nand::SimTime((now.as_ns() + acked.as_ns()) / 2));
    assert_eq!((h.state(0), h.written(0)), (ZoneState::Full, 10));
    assert_eq!(h.read(10).unwrap(), None);
    assert!(h.read(9).unwrap().is_some());
    // Cut after it was acknowledged: eleven pages, the zone closed.
    let (mut h, _) = written(10);
    let (_, token, acked) = h.append(0).unwrap();
    h.cut_and_recover(acked);
    assert_eq!((h.state(0), h.written(0), h.read(10).unwrap()), (ZoneState::Closed, 11, Some(token)));
}
