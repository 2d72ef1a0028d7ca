//! Janus-FTL in the simulator: its gauges in the report, and the workloads
//! that reproduce 004's figures (a trace replayed several times, phased
//! generators).
#![allow(clippy::unwrap_used)]

use ftlab_sim::config::RunConfig;
use ftlab_sim::{run, Report, SimError};

/// The trace fixtures the repository carries (see their README).
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../workload/tests/fixtures/");

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

#[test]
fn a_trace_replays_repeat_times_back_to_back() {
    let trace = format!("{FIXTURES}ssdsim.ascii");
    let base = format!("[precondition]\nfill = true\n[workload]\ntrace = \"{trace}\"\ntrace_format = \"ssdsim\"\n");
    let once = report(&base);
    let thrice = report(&format!("{base}repeat = 3\n"));
    assert_eq!(thrice.requests, 3 * once.requests);
    assert_eq!(thrice.host_pages_written, 3 * once.host_pages_written);
    assert_eq!(thrice.host_pages_read, 3 * once.host_pages_read);
    assert_eq!(thrice.integrity, "ok");
    assert!(thrice.workload.ends_with(" x 3"), "{}", thrice.workload);
    assert!(!once.workload.contains(" x "), "{}", once.workload);
    // The passes follow each other in time (open loop, the trace's timestamps).
    assert!(thrice.sim_seconds > 2.5 * once.sim_seconds, "{} vs {}", thrice.sim_seconds, once.sim_seconds);

    let err = |text: &str| match RunConfig::from_toml(text, "t").and_then(|c| run(&c, &mut |_| {})) {
        Err(SimError::Config(c)) => (c.key.clone(), c.to_string()),
        other => panic!("expected a config error, got {other:?}"),
    };
    let (key, msg) = err(&format!("{base}repeat = 0\n"));
    assert_eq!(key, "workload.repeat", "{msg}");
    let (key, msg) = err("[workload]\npreset = \"postmark\"\nrepeat = 2\n");
    assert_eq!(key, "workload.trace", "{msg}");
    assert!(msg.contains("workload.repeat"), "{msg}");
}
