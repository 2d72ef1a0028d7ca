//! The report's `memory`: the RAM of each structure from its allocated size.
#![allow(clippy::unwrap_used)]

use ftlab_sim::metrics::Report;
use ftlab_sim::{run, RunConfig};

fn report(blocks_per_plane: u32, ftl: &str) -> Report {
    let text = format!(
        "[device]\nchip = \"small-slc\"\nblocks_per_plane = {blocks_per_plane}\n[ftl]\nkind = \"{ftl}\"\n\
         [workload.generator]\nkind = \"uniform\"\nrequests = 3000\n"
    );
    run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).unwrap()
}

#[test]
fn memory_is_the_sum_of_the_structures_sizes() {
    let r = report(64, "pagemap");
    let (m, physical, logical) = (r.memory, r.physical_pages, r.logical_pages);
    assert_eq!(m.map_bytes, logical * 4, "one u32 a logical page");
    assert_eq!(m.valid_bytes, physical.div_ceil(64) * 8, "one bit a physical page, in u64 words");
    assert_eq!(m.oob_bytes, physical * 8, "logical page and relative sequence number a page");
    assert_eq!(m.store_bytes, physical * 2, "a data page's version, 16 bits a page");
    assert!(m.engine_bytes >= logical * 2, "16 bits of version a logical page: {}", m.engine_bytes);
    assert!(m.engine_bytes < logical * 3, "no more than the version's 16 bits and small tables: {}", m.engine_bytes);
    assert!(m.blocks_bytes > 0 && m.ftl_other_bytes > 0);
    let sum =
        m.map_bytes + m.valid_bytes + m.ftl_other_bytes + m.oob_bytes + m.store_bytes + m.blocks_bytes + m.engine_bytes;
    assert_eq!(m.total_bytes, sum);
    assert_eq!(m.bytes_per_physical_page, sum as f64 / physical as f64);
}

#[test]
fn memory_grows_with_the_device() {
    let (small, big) = (report(64, "pagemap"), report(128, "pagemap"));
    assert_eq!(big.physical_pages, 2 * small.physical_pages);
    let (s, b) = (small.memory, big.memory);
    for (name, s, b) in [
        ("map", s.map_bytes, b.map_bytes),
        ("oob", s.oob_bytes, b.oob_bytes),
        ("store", s.store_bytes, b.store_bytes),
        ("engine", s.engine_bytes, b.engine_bytes),
        ("blocks", s.blocks_bytes, b.blocks_bytes),
    ] {
        assert!(b > s + s / 2, "{name}: {s} bytes on the small device, {b} on the big one");
    }
    assert!(b.total_bytes > s.total_bytes + s.total_bytes / 2);
}

#[test]
fn a_scheme_without_a_split_reports_its_ram_as_other() {
    let r = report(64, "dftl");
    assert_eq!((r.memory.map_bytes, r.memory.valid_bytes), (0, 0));
    assert_eq!(r.memory.ftl_other_bytes, r.ram_bytes);
}
