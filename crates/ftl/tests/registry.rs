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

fn kinds() -> Vec<&'static str> {
    registry::schemes().iter().map(|s| s.name).collect()
}

#[test]
fn every_registered_scheme_formats_on_a_suite_device() {
    let failures: Vec<String> = kinds().into_iter().filter_map(|k| registered(k).err()).collect();
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

#[test]
fn every_block_scheme_keeps_flushed_data_behind_a_write_buffer() {
    let mut buffered = 0;
    for kind in kinds() {
        let (builder, geometry) = registered(kind).unwrap();
        let wrapped = WriteBufferBuilder::new(builder, 16);
        let mut flash = ftlab_ftl::Flash::new(ftlab_nand::Nand::new(&suite::nand_config(geometry, 0.0, 1)).unwrap());
        if wrapped.format(&mut flash.io(ftlab_nand::SimTime::ZERO)).is_err() {
            continue; // a scheme with commands of its own: refused (tests/layers.rs)
        }
        eprintln!("conformance behind a write buffer: {kind}");
        suite::full_overwrite(&wrapped, &suite::nand_config(geometry, 0.0, 1), 3);
        suite::power_cut(&wrapped, geometry, 3);
        buffered += 1;
    }
    assert!(buffered + 2 == kinds().len(), "{buffered} of {} schemes ran behind a buffer", kinds().len());
}
