//! Janus-FTL in the simulator: its gauges in the report, and the workloads
//! that reproduce 004's figures (a trace replayed several times, phased
//! generators).
#![allow(clippy::unwrap_used)]

use ftlab_sim::config::RunConfig;
use ftlab_sim::{run, Report};

fn config(text: &str) -> RunConfig {
    RunConfig::from_toml(text, "test").unwrap()
}

fn report(text: &str) -> Report {
    run(&config(text), &mut |_| {}).unwrap()
}

/// A small device (128 blocks of 32 pages) under uniform random writes.
const SMALL: &str = "seed = 3\n[device]\nblocks_per_plane = 128\npages_per_block = 32\n\
                     [precondition]\nfill = true\n[metrics]\ninterval_ms = 100.0\n\
                     [workload]\npreset = \"uniform-random-write\"\nmax_requests = 20000\n";

#[test]
fn janus_reports_its_gauges_over_time_and_other_schemes_none() {
    let r = report(&format!("{SMALL}[ftl]\nkind = \"janus\"\n"));
    let g = &r.throughput.gauges;
    let names: Vec<&str> = g.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "fused_blocks",
            "gc_victim_valid_pages",
            "gc_victims",
            "ghost_hit_rate",
            "optimum_fused_blocks",
            "pma_utilization",
            "target_fused_blocks"
        ]
    );
    for (name, series) in g {
        assert_eq!(series.len(), r.throughput.write_pages.len(), "{name}: one value per interval");
        assert_eq!(series.last(), r.ftl_gauges.get(name), "{name}: the final value is the last sample");
    }
    // Uniform random writes over the whole space: the PMA grows from its
    // initial target toward every block.
    let fused = &g["fused_blocks"];
    assert!(fused.last().unwrap() > &(2.0 * fused[0]), "{fused:?}");
    assert!(r.ftl_gauges["gc_victims"] > 0.0);
    let json = serde_json::to_value(&r).unwrap();
    assert!(json["throughput"]["gauges"]["fused_blocks"].is_array());
    assert!(json["ftl_gauges"]["ghost_hit_rate"].is_number());

    let r = report(&format!("{SMALL}[ftl]\nkind = \"pagemap\"\n"));
    assert!(r.throughput.gauges.is_empty() && r.ftl_gauges.is_empty());
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("ftl_gauges").is_none() && json["throughput"].get("gauges").is_none(), "left out");
}
