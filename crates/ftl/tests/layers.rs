#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every registered scheme in every layer (a write buffer, a layer that
//! changes nothing): what the scheme offers survives the wrapping. Its
//! real-time guarantee and task admission, its placement, its gauges, curves
//! and memory; a scheme with a command set of its own (a cache, a Nameless
//! device) is refused by the write buffer with an error naming the key, never
//! wrapped with its commands dropped.

use ftlab_ftl::buffer::WriteBufferBuilder;
use ftlab_ftl::conformance::{nand_config, registered, small_geometry};
use ftlab_ftl::data_cache::{DataCacheBuilder, DataCacheParams};
use ftlab_ftl::layer::{Layer, Layered};
use ftlab_ftl::registry::{self, Builder};
use ftlab_ftl::{Durability, Extension, Flash, Ftl, FtlBuilder, FtlError, Io};
use ftlab_nand::{Geometry, Nand, SimTime};

/// A layer that takes no command of its own: the layered FTL must be the
/// scheme in every respect.
#[derive(Debug)]
struct Transparent(Box<dyn Ftl>);

impl Layer for Transparent {
    type Inner = dyn Ftl;
    fn inner(&self) -> &(dyn Ftl + 'static) {
        &*self.0
    }
    fn inner_mut(&mut self) -> &mut (dyn Ftl + 'static) {
        &mut *self.0
    }
}

fn builder(kind: &str) -> Builder {
    registered(kind).unwrap().0
}

fn format(builder: &dyn FtlBuilder, geometry: Geometry) -> Result<(Flash, Box<dyn Ftl>), FtlError> {
    let mut flash = Flash::new(Nand::new(&nand_config(geometry, 0.0, 7)).unwrap());
    let ftl = {
        let mut io: Io = flash.io(SimTime::ZERO);
        builder.format(&mut io)?
    };
    Ok((flash, ftl))
}

/// The scheme `kind` formatted on the first device it fits.
fn scheme(kind: &str) -> (Geometry, Box<dyn Ftl>) {
    let (b, geometry) = registered(kind).unwrap();
    (geometry, format(&*b, geometry).unwrap().1)
}

/// What a wrapped FTL must still show of the scheme inside.
#[derive(Debug, PartialEq)]
struct Offer {
    name: &'static str,
    logical_pages: u32,
    unit_bytes: Option<u32>,
    bound: Option<SimTime>,
    admission: Option<Vec<ftlab_ftl::StreamVerdict>>,
    stream_pages: Option<u32>,
    placement: bool,
    extension: &'static str,
    gauges: Vec<&'static str>,
    curves: Vec<&'static str>,
    map_bytes: u64,
    valid_bytes: u64,
}

fn offer(ftl: &mut dyn Ftl) -> Offer {
    let caps = ftl.capabilities();
    let memory = ftl.memory();
    Offer {
        name: ftl.name(),
        logical_pages: ftl.logical_pages(),
        unit_bytes: ftl.unit_bytes(),
        bound: caps.realtime.and_then(|r| r.service_bound()),
        admission: caps.realtime.and_then(|r| r.admission()),
        stream_pages: caps.realtime.map(|r| r.stream_pages()),
        placement: caps.placement.is_some(),
        extension: ftl.extension().name(),
        gauges: ftl.gauges().into_iter().map(|g| g.0).collect(),
        curves: ftl.curves().into_iter().map(|c| c.0).collect(),
        map_bytes: memory.map,
        valid_bytes: memory.valid,
    }
}

/// What the scheme offers behind the data cache, without the cache's own
/// gauges (added after the scheme's).
fn offer_cached(ftl: &mut dyn Ftl) -> Offer {
    let mut o = offer(ftl);
    o.gauges.retain(|g| !g.starts_with("data_cache_"));
    o
}

#[test]
fn every_scheme_keeps_what_it_offers_in_every_layer() {
    let kinds: Vec<&str> = registry::schemes().iter().map(|s| s.name).collect();
    assert!(kinds.len() >= 20, "the registry lists {} schemes", kinds.len());
    let (mut realtime, mut placed, mut extended, mut tasks_written) = (0, 0, 0, 0);
    for kind in kinds {
        let (geometry, mut bare) = scheme(kind);
        let want = offer(&mut *bare);
        realtime += usize::from(want.bound.is_some());
        placed += usize::from(want.placement);

        // A layer that changes nothing is the scheme.
        let mut same = Layered(Transparent(bare));
        assert_eq!(offer(&mut same), want, "{kind} in a transparent layer");
        assert_eq!(same.durability(), same.layer().0.durability(), "{kind}");
        assert_eq!(same.ram_bytes(), same.layer().0.ram_bytes(), "{kind}");

        // The write buffer keeps everything but durability and adds its RAM.
        let buffered = WriteBufferBuilder::new(builder(kind), 8);
        match format(&buffered, geometry) {
            Ok((mut flash, mut ftl)) => {
                assert_eq!(offer(&mut *ftl), want, "{kind} behind a write buffer");
                // The pages reserved for admitted tasks are addressable through it.
                if let Some(pages @ 1..) = want.stream_pages {
                    let mut io = flash.io(SimTime::ZERO);
                    let hint = ftlab_ftl::Hint { stream: Some(0), ..Default::default() };
                    let last = ftlab_ftl::Lpn(want.logical_pages + pages - 1);
                    ftl.write(&mut io, last, ftlab_nand::Payload::Token(9), &hint)
                        .unwrap_or_else(|e| panic!("{kind}: a task's page behind a write buffer: {e}"));
                    tasks_written += 1;
                }
                assert_eq!(ftl.durability(), Durability::OnFlush, "{kind}");
                assert!(ftl.memory().other > same.memory().other, "{kind}: the buffer's RAM is counted");
                // So does MQSim's data cache, and it adds its gauges.
                let cached = DataCacheBuilder { inner: builder(kind), params: DataCacheParams::new(8) };
                let (_, mut ftl) =
                    format(&cached, geometry).unwrap_or_else(|e| panic!("{kind} behind the data cache: {e}"));
                assert_eq!(offer_cached(&mut *ftl), want, "{kind} behind the data cache");
                assert_eq!(ftl.durability(), Durability::OnFlush, "{kind}");
                assert!(ftl.memory().other > same.memory().other, "{kind}: the cache's RAM is counted");
                assert!(ftl.gauges().iter().any(|(n, _)| *n == "data_cache_writebacks"), "{kind}");
            }
            Err(e) => {
                extended += 1;
                // The data cache refuses the same schemes, naming its own key.
                let cached = DataCacheBuilder { inner: builder(kind), params: DataCacheParams::new(8) };
                match format(&cached, geometry) {
                    Err(FtlError::Config(c)) => assert_eq!(c.key, "device.data_cache", "{kind}: {c}"),
                    Err(other) => panic!("{kind}: {other}"),
                    Ok(_) => panic!("{kind}: its own commands would pass the data cache by"),
                }
                assert_ne!(want.extension, Extension::None.name(), "{kind}: a block-command scheme refused: {e}");
                match e {
                    FtlError::Config(c) => assert_eq!(c.key, "device.write_buffer_pages", "{kind}: {c}"),
                    other => panic!("{kind}: {other}"),
                }
            }
        }
    }
    // The loop saw each kind of capability, so its checks were exercised.
    // The schemes with commands of their own: ssc, nameless, zns.
    assert!(realtime >= 6 && placed >= 6 && extended == 3, "{realtime} {placed} {extended}");
    assert_eq!(tasks_written, 2, "telomere-sip and telomere-sharp wrote a task's page");
}

#[test]
fn a_buffered_page_has_no_die_and_the_rest_keep_the_schemes() {
    let b = WriteBufferBuilder::new(builder("lazy-rtgc"), 4);
    let (mut flash, mut ftl) = format(&b, small_geometry()).unwrap();
    let mut io = flash.io(SimTime::ZERO);
    for lpn in 0..6 {
        ftl.write(&mut io, ftlab_ftl::Lpn(lpn), ftlab_nand::Payload::Token(u64::from(lpn) + 1), &Default::default())
            .unwrap();
    }
    let placement = ftl.capabilities().placement.expect("lazy-rtgc places its pages");
    // Six writes into four pages: the first four were drained when the fifth
    // came, so pages 0-3 are on the flash and 4-5 in the buffer.
    for lpn in 0..4 {
        assert!(placement.die_of(ftlab_ftl::Lpn(lpn)).is_some(), "page {lpn} was written out");
    }
    for lpn in 4..6 {
        assert_eq!(placement.die_of(ftlab_ftl::Lpn(lpn)), None, "page {lpn} is in the buffer");
    }
}
