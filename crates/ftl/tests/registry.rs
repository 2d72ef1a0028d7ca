#![allow(clippy::unwrap_used)]
//! The conformance suite over every scheme the registry lists, as the registry
//! builds it (its defaults; a small task set for the schemes that admit tasks),
//! bare and behind a write buffer: a registered scheme cannot go untested.
//! Read-after-write against the model at the highest utilization the scheme
//! allows, power cuts with recovery (nothing acknowledged lost; with the
//! buffer, nothing flushed), determinism and bad addresses refused.

use ftlab_ftl::buffer::WriteBufferBuilder;
use ftlab_ftl::conformance::{self as suite, registered};
use ftlab_ftl::registry;
use ftlab_ftl::FtlBuilder;

/// Whether `kind`, as the registry builds it, is a zoned device (zone
/// commands; a block write lands only at its zone's write pointer).
fn zoned(kind: &str) -> bool {
    let (builder, geometry) = registered(kind).unwrap();
    let mut flash = ftlab_ftl::Flash::new(ftlab_nand::Nand::new(&suite::nand_config(geometry, 0.0, 1)).unwrap());
    builder.format(&mut flash.io(ftlab_nand::SimTime::ZERO)).unwrap().zoned().is_some()
}

/// The block schemes (every one but the zoned devices).
fn kinds() -> Vec<&'static str> {
    registry::schemes().iter().map(|s| s.name).filter(|k| !zoned(k)).collect()
}

#[test]
fn every_registered_zoned_device_passes_the_zoned_suite() {
    let zoned: Vec<&str> = registry::schemes().iter().map(|s| s.name).filter(|k| zoned(k)).collect();
    assert_eq!(zoned, ["zns"]);
    for kind in zoned {
        let (builder, geometry) = registered(kind).unwrap();
        ftlab_ftl::conformance_zoned::zoned_suite(&*builder, geometry);
    }
}

#[test]
fn every_registered_scheme_formats_on_a_suite_device() {
    let failures: Vec<String> = registry::schemes().iter().filter_map(|s| registered(s.name).err()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_registered_scheme_keeps_its_data_through_overwrites_and_power_cuts() {
    for kind in kinds() {
        let (builder, geometry) = registered(kind).unwrap();
        eprintln!("conformance: {kind}");
        suite::full_overwrite(&*builder, &suite::nand_config(geometry, 0.0, 1), 2);
        for seed in 0..2 {
            suite::power_cut(&*builder, geometry, seed);
        }
        suite::deterministic(&*builder, geometry);
        suite::rejects_bad_lpns(&*builder, geometry);
    }
}

/// Every scheme that speaks block commands, wrapped by `wrap` (a layer that
/// acknowledges from RAM and is durable on flush), keeps its flushed data
/// through a full overwrite and power cuts; the two schemes with commands of
/// their own are refused (tests/layers.rs).
fn every_block_scheme_behind(what: &str, wrap: impl Fn(registry::Builder) -> Box<dyn FtlBuilder>) {
    let mut wrapped_runs = 0;
    for kind in kinds() {
        let (builder, geometry) = registered(kind).unwrap();
        let wrapped = wrap(builder);
        let mut flash = ftlab_ftl::Flash::new(ftlab_nand::Nand::new(&suite::nand_config(geometry, 0.0, 1)).unwrap());
        if wrapped.format(&mut flash.io(ftlab_nand::SimTime::ZERO)).is_err() {
            continue;
        }
        eprintln!("conformance behind {what}: {kind}");
        suite::full_overwrite(&*wrapped, &suite::nand_config(geometry, 0.0, 1), 3);
        suite::power_cut(&*wrapped, geometry, 3);
        wrapped_runs += 1;
    }
    assert!(wrapped_runs + 2 == kinds().len(), "{wrapped_runs} of {} schemes ran behind {what}", kinds().len());
}

#[test]
fn every_block_scheme_keeps_flushed_data_behind_a_write_buffer() {
    every_block_scheme_behind("a write buffer", |builder| Box::new(WriteBufferBuilder::new(builder, 16)));
}

#[test]
fn every_block_scheme_keeps_flushed_data_behind_the_data_cache() {
    every_block_scheme_behind("the data cache", |inner| {
        Box::new(ftlab_ftl::data_cache::DataCacheBuilder {
            inner,
            params: ftlab_ftl::data_cache::DataCacheParams::new(16),
        })
    });
}

#[test]
fn a_scheme_marked_bounds_promises_a_bound_and_only_real_time_schemes_are_marked() {
    for scheme in registry::schemes() {
        let (builder, geometry) = registered(scheme.name).unwrap();
        let mut flash = ftlab_ftl::Flash::new(ftlab_nand::Nand::new(&suite::nand_config(geometry, 0.0, 1)).unwrap());
        let ftl = builder.format(&mut flash.io(ftlab_nand::SimTime::ZERO)).unwrap();
        let bound = ftl.capabilities().realtime.and_then(|r| r.service_bound());
        if scheme.bounds {
            assert!(bound.is_some(), "{} is listed by ftlab bounds but promises no bound", scheme.name);
        }
        assert!(!scheme.paper.is_empty() && !scheme.summary.is_empty(), "{}", scheme.name);
    }
}

/// The README's table of FTLs names every scheme of this crate's registry, and
/// nothing else.
#[test]
fn the_readme_lists_every_registered_scheme() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let table = readme.split("\n## FTLs\n").nth(1).unwrap().trim_start().split("\n\n").next().unwrap();
    let mut listed: Vec<String> = table
        .lines()
        .skip(2)
        .flat_map(|row| {
            let first = row.split('|').nth(1).unwrap_or("");
            first.split('`').skip(1).step_by(2).map(str::to_string).collect::<Vec<_>>()
        })
        .collect();
    listed.sort();
    let mut registered: Vec<String> =
        registry::BUILTIN.iter().flat_map(|m| m.iter().map(|s| s.name.to_string())).collect();
    registered.sort();
    assert_eq!(listed, registered, "README.md's FTL table against registry::BUILTIN");
}
