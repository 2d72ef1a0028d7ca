//! The cached mapping table's hit and miss counts (001 Figure 8(a)) in the
//! report: they cover the measured window only, one lookup per host page.
#![allow(clippy::unwrap_used)]

use ftlab_sim::config::RunConfig;
use ftlab_sim::{run, Report};

fn report(text: &str) -> Report {
    run(&RunConfig::from_toml(text, "test").unwrap(), &mut |_| {}).unwrap()
}

/// A small device, filled and overwritten once before measuring (both do
/// lookups that must not count), then `workload`.
fn run_with(kind: &str, workload: &str) -> Report {
    report(&format!(
        "seed = 3\n[device]\nblocks_per_plane = 64\npages_per_block = 32\n\
         [precondition]\nfill = true\nrandom_overwrites = 1.0\n\
         [ftl]\nkind = \"{kind}\"\n{cmt}[workload.generator]\n{workload}",
        cmt = if kind == "lazy-rtgc" { "" } else { "cmt_entries = 64\n" }
    ))
}

#[test]
fn cmt_hits_and_misses_count_the_measured_host_pages() {
    for kind in ["lazy-rtgc-ondemand", "dftl"] {
        let r = run_with(kind, "kind = \"uniform\"\nrequests = 4000\nread_fraction = 0.5\n");
        let g = &r.ftl_gauges;
        let (hits, misses) = (g["cmt_hits"], g["cmt_misses"]);
        assert_eq!(hits + misses, (r.host_pages_read + r.host_pages_written) as f64, "{kind}: {g:?}");
        assert_eq!(g["cmt_hit_ratio"], hits / (hits + misses));
        // Uniform over a space many times the CMT: the hit ratio is about the
        // CMT's share of the logical space.
        let share = 64.0 / r.logical_pages as f64;
        assert!((g["cmt_hit_ratio"] - share).abs() < 0.5 * share, "{kind}: {g:?}, share {share}");

        // Nearly every request in 32 pages: hits after the first touch.
        let hot = 32.0 / r.logical_pages as f64;
        let r = run_with(
            kind,
            &format!(
                "kind = \"hotcold\"\naccess_fraction = 0.999\nspace_fraction = {hot}\nrequests = 4000\nread_fraction = 0.5\n"
            ),
        );
        assert!(r.ftl_gauges["cmt_hit_ratio"] > 0.97, "{kind}: {:?}", r.ftl_gauges);
    }
}

#[test]
fn schemes_without_a_cmt_report_no_hit_ratio() {
    let r = run_with("lazy-rtgc", "kind = \"uniform\"\nrequests = 100\n");
    assert!(!r.ftl_gauges.contains_key("cmt_hit_ratio"));
}
