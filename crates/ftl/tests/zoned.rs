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

/// ZRWAs of eight pages, flushed in granules of four, three at once.
pub(crate) fn with_zrwa(base: ZnsConfig) -> ZnsConfig {
    ZnsConfig { zrwa_pages: 8, zrwa_flush_granularity: 4, max_zrwa_zones: 3, ..base }
}

#[test]
fn the_zns_device_passes_the_zoned_suite_with_zrwas_striped_and_on_one_die() {
    zoned_suite(&with_zrwa(ZnsConfig::default()), small_geometry());
    let die = ZnsConfig { zone_mapping: ZoneMapping::Die, zone_blocks: 2, ..ZnsConfig::default() };
    zoned_suite(&with_zrwa(die), small_geometry());
}

#[test]
fn the_zns_device_passes_with_zrwas_of_one_page_granules_on_a_bytes_store() {
    let config = ZnsConfig { zrwa_pages: 4, ..ZnsConfig::default() };
    suite::zoned_suite_on_bytes(&config, small_geometry());
}

#[test]
fn the_zns_device_passes_with_limits_and_a_smaller_capacity() {
    let limited = ZnsConfig { max_open_zones: 3, max_active_zones: 5, zone_capacity: 50, ..ZnsConfig::default() };
    zoned_suite(&limited, small_geometry());
}

mod planted {
    //! A zoned device with one planted bug, which the suite must catch.

    use std::collections::HashMap;

    use ftlab_ftl::zns::{PageMeta, ZnsConfig, ZnsDevice, ZoneAction, ZoneDescriptor, ZoneState, Zoned, ZrwaLimits};
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
        /// A device flush does not reach the ZRWAs: their pages stay in RAM
        /// only, and a power cut loses them though they were flushed.
        FlushSkipsZrwa,
        /// A read of a page in a ZRWA returns the first data written there,
        /// not the newest (an overwrite in the window is lost to reads).
        OldestInZrwa,
    }

    #[derive(Debug)]
    pub struct Builder(pub Plant);

    impl Builder {
        fn config(&self) -> ZnsConfig {
            match self.0 {
                Plant::FlushSkipsZrwa | Plant::OldestInZrwa => super::with_zrwa(ZnsConfig::default()),
                _ => ZnsConfig::default(),
            }
        }
    }

    impl FtlBuilder for Builder {
        fn format(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
            let inner = ZnsDevice::format(self.config(), io)?;
            Ok(Box::new(Device { inner, plant: self.0, recovered: false, last: None, first: HashMap::new() }))
        }
        fn recover(&self, io: &mut Io) -> Result<Box<dyn Ftl>, FtlError> {
            let inner = ZnsDevice::recover(self.config(), io)?;
            Ok(Box::new(Device { inner, plant: self.0, recovered: true, last: None, first: HashMap::new() }))
        }
    }

    #[derive(Debug)]
    struct Device {
        inner: ZnsDevice,
        plant: Plant,
        recovered: bool,
        last: Option<(SimTime, u32, Lpn)>,
        /// The first data written to each page ([`Plant::OldestInZrwa`]).
        first: HashMap<u32, Payload>,
    }

    impl Ftl for Device {
        fn name(&self) -> &'static str {
            "planted-zns"
        }
        fn logical_pages(&self) -> u32 {
            self.inner.logical_pages()
        }
        fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
            let size = self.inner.zone_size();
            let d = self.inner.zone(lpn.0 / size)?;
            if self.plant == Plant::OldestInZrwa && d.zrwa && lpn.0 >= d.write_pointer {
                if let Some(p) = self.first.get(&lpn.0) {
                    return Ok(Some(p.clone()));
                }
            }
            self.inner.read(io, lpn)
        }
        fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
            let kept = data.clone();
            self.inner.write(io, lpn, data, hint)?;
            self.first.entry(lpn.0).or_insert(kept);
            Ok(())
        }
        fn flush(&mut self, io: &mut Io) -> Result<(), FtlError> {
            if self.plant == Plant::FlushSkipsZrwa {
                return Ok(());
            }
            self.inner.flush(io)
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
        fn zrwa(&self) -> Option<ZrwaLimits> {
            self.inner.zrwa()
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
fn the_suite_catches_a_flush_that_leaves_the_zrwas_in_ram() {
    let b = planted::Builder(planted::Plant::FlushSkipsZrwa);
    // Without a power cut the device behaves.
    suite::zrwa::semantics(&b, small_geometry());
    let message = caught(|| suite::zrwa::power_cuts(&b, small_geometry()));
    assert!(message.contains("cut at") && message.contains("durable from"), "{message}");
}

#[test]
fn the_suite_catches_reads_of_a_zrwa_that_miss_overwrites() {
    let b = planted::Builder(planted::Plant::OldestInZrwa);
    let message = caught(|| suite::zrwa::semantics(&b, small_geometry()));
    assert!(message.contains("overwrites in the ZRWA"), "{message}");
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

/// Zones of one block a die, striped, the whole zone writable, no limits.
static STRIPED: ZnsConfig = ZnsConfig {
    zone_blocks: 0,
    zone_capacity: 0,
    max_open_zones: 0,
    max_active_zones: 0,
    zone_mapping: ZoneMapping::Striped,
    zrwa_pages: 0,
    zrwa_flush_granularity: 0,
    max_zrwa_zones: 0,
};

/// A device with zone 0 written `pages` pages, 1 ms apart; returns the time
/// after the last.
fn written(pages: u32) -> (suite::ZonedHarness<'static>, ftlab_nand::SimTime) {
    let mut h = suite::ZonedHarness::new(&STRIPED, small_geometry(), 1);
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

/// A read-only zone the host takes offline stays offline through a power
/// cut: the command programs a marker the recovery finds. Cut before the
/// marker's program finishes, the command was not acknowledged, and the
/// zone comes back read-only with its data readable.
#[test]
fn a_zone_taken_offline_stays_offline_through_a_cut() {
    use ftlab_ftl::zns::{ZoneAction, ZoneState};
    for acknowledged in [true, false] {
        let (mut h, _) = written(10);
        h.flash.fail_program_in(1);
        assert!(h.append(0).is_err(), "an injected program failure fails the write");
        assert_eq!(h.state(0), ZoneState::ReadOnly);
        let before = h.flash.counters().programs.total();
        let issued = h.now;
        let acked = h.manage(0, ZoneAction::Offline).unwrap();
        assert_eq!(h.flash.counters().programs.total(), before + 1, "one marker page");
        assert_eq!(h.state(0), ZoneState::Offline);
        let cut = if acknowledged { acked } else { ftlab_nand::SimTime(issued.as_ns() + 1) };
        h.cut_and_recover(cut);
        if acknowledged {
            assert_eq!(h.state(0), ZoneState::Offline);
            assert!(h.read(0).is_err(), "an offline zone's data cannot be read");
        } else {
            assert_eq!(h.state(0), ZoneState::ReadOnly);
            assert!(h.read(9).unwrap().is_some());
        }
        // Other zones are untouched.
        assert_eq!(h.state(1), ZoneState::Empty);
    }
}

#[path = "zoned/fuzz.rs"]
mod fuzz;

mod host_streams {
    //! The host FTL over ZNS with an open zone a stream: integrity through
    //! power cuts, data a placement tells apart kept apart, bad settings.

    use ftlab_ftl::conformance::{nand_config, power_cut_with_streams, small_geometry};
    use ftlab_ftl::zns::{GcPlacement, ZnsConfig, ZnsHostConfig};
    use ftlab_ftl::{Flash, FtlBuilder, Hint, Lpn};
    use ftlab_nand::{Nand, Payload, SimTime};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn streams(n: u32) -> ZnsHostConfig {
        let zns = ZnsConfig { max_open_zones: 2 * n, max_active_zones: 2 * n + 1, ..ZnsConfig::default() };
        ZnsHostConfig { streams: n, zns, ..ZnsHostConfig::default() }
    }

    #[test]
    fn three_streams_keep_every_acknowledged_write_through_power_cuts() {
        for seed in 0..6 {
            power_cut_with_streams(&streams(3), small_geometry(), seed, 3);
        }
    }

    /// WAF of a fill, then random overwrites of which 90% go to the first
    /// tenth of the space; with `hot_stream` 0 or 1, the hot tenth's writes
    /// carry that stream and the rest the other.
    fn hot_cold_waf(config: &ZnsHostConfig, hot_stream: Option<u32>) -> f64 {
        // 128 zones of four blocks.
        let geometry = ftlab_nand::Geometry { blocks_per_plane: 64, ..small_geometry() };
        let mut flash = Flash::new(Nand::new(&nand_config(geometry, 0.0, 1)).unwrap());
        let mut ftl = config.format(&mut flash.io(SimTime::ZERO)).unwrap();
        let n = ftl.logical_pages();
        let hot = n / 10;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut now = SimTime::ZERO;
        for i in 0..u64::from(n) * 6 {
            let lpn = if i < u64::from(n) {
                i as u32
            } else if rng.gen_bool(0.9) {
                rng.gen_range(0..hot)
            } else {
                rng.gen_range(hot..n)
            };
            let stream = hot_stream.map(|h| if lpn < hot { h } else { 1 - h });
            let mut io = flash.io(now);
            ftl.write(&mut io, Lpn(lpn), Payload::Token(i + 1), &Hint { stream, ..Hint::default() }).unwrap();
            now = io.completion().max(now);
        }
        ftl.check_invariants(&flash).unwrap();
        flash.counters().waf().unwrap()
    }

    #[test]
    fn a_stream_each_for_hot_and_cold_data_copies_less() {
        let apart = hot_cold_waf(&streams(2), Some(0));
        let mixed = hot_cold_waf(&streams(2), None);
        // Measured: 3.656 apart, 5.017 mixed (copies in one zone as well:
        // 4.814 apart).
        assert!(apart < 0.8 * mixed, "WAF {apart:.3} with hot and cold apart, {mixed:.3} mixed");
    }

    /// Copies in SepBIT's classes: every acknowledged write kept through
    /// power cuts (the classes' ages restart), with streams and without.
    #[test]
    fn sepbit_copy_classes_keep_every_acknowledged_write_through_power_cuts() {
        for (n, seed) in [(2, 0), (2, 1), (1, 2), (3, 3)] {
            let zns = ZnsConfig { max_open_zones: n + 4, max_active_zones: n + 5, ..ZnsConfig::default() };
            let config =
                ZnsHostConfig { streams: n, gc_placement: GcPlacement::Sepbit, zns, ..ZnsHostConfig::default() };
            power_cut_with_streams(&config, small_geometry(), seed, n);
        }
    }

    /// With every write on one stream, SepBIT's age classes keep copies of
    /// different ages apart and copy less than one copy zone does.
    /// Measured: 4.837 against 5.017. (With the hot tenth on stream 1,
    /// class 1, they copy more than a copy zone a stream, 4.096 against
    /// 3.656: the cold pages' updates are uniform, so their age says nothing
    /// of their remaining lifetime, and hot pages copied twice leave class 3
    /// for the age classes, among cold ones.)
    #[test]
    fn sepbit_copy_classes_copy_less_than_one_copy_zone_on_hot_and_cold_data() {
        let sepbit = ZnsHostConfig { gc_placement: GcPlacement::Sepbit, ..ZnsHostConfig::default() };
        let (classes, one) = (hot_cold_waf(&sepbit, None), hot_cold_waf(&streams(1), None));
        assert!(classes < 0.98 * one, "WAF {classes:.3} with SepBIT's classes, {one:.3} with one copy zone");
    }

    #[test]
    fn bad_gc_placement_settings_are_config_errors_naming_the_key() {
        let mut flash = Flash::new(Nand::new(&nand_config(small_geometry(), 0.0, 1)).unwrap());
        let sepbit = |n: u32, open: u32| ZnsHostConfig {
            streams: n,
            gc_placement: GcPlacement::Sepbit,
            zns: ZnsConfig { max_open_zones: open, max_active_zones: open, ..ZnsConfig::default() },
            ..ZnsHostConfig::default()
        };
        // Three streams and four classes: seven open zones.
        for (config, key) in [(sepbit(3, 6), "ftl.zns.max_open_zones"), (sepbit(1, 4), "ftl.zns.max_open_zones")] {
            let e = config.format(&mut flash.io(SimTime::ZERO)).err().unwrap();
            let text = format!("{e:?}");
            assert!(text.contains(key) && text.contains("gc_placement"), "{text} should name {key} and the classes");
        }
        assert!(sepbit(3, 7).format(&mut flash.io(SimTime::ZERO)).is_ok());
        let mut params = toml::Table::new();
        params.insert("gc_placement".into(), toml::Value::String("age".into()));
        let e = ftlab_ftl::entry::configured("zns-host", ZnsHostConfig::default(), &params, ZnsHostConfig::validate)
            .err()
            .unwrap();
        let text = format!("{e:?}");
        assert!(text.contains("ftl.gc_placement") && text.contains("sepbit"), "{text}");
    }

    #[test]
    fn bad_stream_settings_are_config_errors_naming_the_key() {
        let mut flash = Flash::new(Nand::new(&nand_config(small_geometry(), 0.0, 1)).unwrap());
        for (config, key) in [
            (ZnsHostConfig { streams: 0, ..ZnsHostConfig::default() }, "ftl.streams"),
            (ZnsHostConfig { streams: 65, ..ZnsHostConfig::default() }, "ftl.streams"),
            (
                ZnsHostConfig { zns: ZnsConfig { max_open_zones: 5, ..streams(3).zns }, ..streams(3) },
                "ftl.zns.max_open_zones",
            ),
        ] {
            let e = config.format(&mut flash.io(SimTime::ZERO)).err().unwrap();
            assert!(format!("{e:?}").contains(key), "{e:?} should name {key}");
        }
    }
}

/// The zoned suite on media that keep every page's bytes: every page of the
/// zoned device written as a page of bytes and read back compared byte for
/// byte, through the state machine, the limits, appends at depth and the
/// power cuts.
#[test]
fn the_zoned_suite_holds_on_a_bytes_store() {
    suite::zoned_suite_on_bytes(&STRIPED, small_geometry());
}

#[test]
fn bad_zrwa_settings_are_config_errors_naming_the_key_and_the_fix() {
    use ftlab_ftl::conformance::nand_config;
    use ftlab_ftl::{Flash, FtlBuilder};
    use ftlab_nand::{Nand, SimTime};
    let mut flash = Flash::new(Nand::new(&nand_config(small_geometry(), 0.0, 1)).unwrap());
    let zrwa = |pages, fg, max| ZnsConfig {
        zrwa_pages: pages,
        zrwa_flush_granularity: fg,
        max_zrwa_zones: max,
        ..ZnsConfig::default()
    };
    for (config, key, fix) in [
        (zrwa(0, 4, 0), "ftl.zrwa_flush_granularity", "give ftl.zrwa_pages"),
        (zrwa(0, 0, 2), "ftl.max_zrwa_zones", "give ftl.zrwa_pages"),
        (zrwa(8, 3, 0), "ftl.zrwa_flush_granularity", "give a divisor"),
        (ZnsConfig { max_active_zones: 2, ..zrwa(8, 4, 3) }, "ftl.max_zrwa_zones", "give at most 2"),
        (ZnsConfig { zone_capacity: 10, ..zrwa(12, 4, 1) }, "ftl.zrwa_pages", "give at most 10"),
        // A zone of 64 pages journals at most (64 - 2) / 8 = 7 ZRWAs of 8.
        (zrwa(8, 4, 8), "ftl.max_zrwa_zones", "give at most 7"),
    ] {
        let e = config.format(&mut flash.io(SimTime::ZERO)).err().unwrap();
        let text = format!("{e:?}");
        assert!(text.contains(key) && text.contains(fix), "{text} should name {key} and say {fix}");
    }
    // The defaults: no ZRWA, every zone a data zone.
    let mut h = suite::ZonedHarness::new(&STRIPED, small_geometry(), 1);
    let zones = h.zoned().zones();
    assert!(h.zoned().zrwa().is_none());
    let config = with_zrwa(STRIPED);
    let mut h = suite::ZonedHarness::new(&config, small_geometry(), 1);
    assert_eq!(h.zoned().zones(), zones - 2, "the ZRWA journal takes two zones");
}

/// A commit whose program fails leaves the zone read-only with the ZRWA's
/// pages still readable, through a power cut (from the journal), until the
/// host takes the zone offline.
#[test]
fn a_failed_commit_leaves_the_zone_read_only_with_its_zrwa_readable() {
    use ftlab_ftl::zns::{ZoneAction, ZoneState};
    let config = with_zrwa(STRIPED);
    let mut h = suite::ZonedHarness::new(&config, small_geometry(), 1);
    h.manage(0, ZoneAction::OpenZrwa).unwrap();
    let tokens: Vec<u64> = (0..8).map(|i| h.write(i).unwrap().0).collect();
    h.flush().unwrap();
    h.advance(10_000_000);
    h.flash.fail_program_in(2);
    assert!(h.manage(0, ZoneAction::FlushZrwa { upto: 4 }).is_err(), "an injected program failure fails the flush");
    assert_eq!((h.state(0), h.written(0)), (ZoneState::ReadOnly, 1));
    let read_all = |h: &mut suite::ZonedHarness<'_>| (0..8).map(|i| h.read(i).unwrap().unwrap()).collect::<Vec<_>>();
    assert_eq!(read_all(&mut h), tokens, "the committed page and the ZRWA's");
    h.advance(10_000_000);
    let t = h.now;
    h.cut_and_recover(t);
    assert_eq!((h.state(0), h.written(0)), (ZoneState::ReadOnly, 1));
    assert!(h.zoned().zone(0).unwrap().zrwa);
    assert_eq!(read_all(&mut h), tokens, "after a power cut");
    h.manage(0, ZoneAction::Offline).unwrap();
    assert!(!h.zoned().zone(0).unwrap().zrwa, "offline frees the ZRWA");
    h.ftl.check_invariants(&h.flash).unwrap();
}
