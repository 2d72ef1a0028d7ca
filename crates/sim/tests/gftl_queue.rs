//! GFTL's write queue over time (002 Section IV-D, Figures 6 and 8): the
//! gauges the report carries, under the worst-case arrival sequence of IV-D,
//! under a load that never rewrites a page, and under a rewrite burst.
#![allow(clippy::unwrap_used)]

use ftlab_sim::config::RunConfig;
use ftlab_sim::{run, Report};

/// One die of 256 blocks of 16 pages of the 002 Table I chip, a negligible
/// bus, `factor` times the paper's write-queue length
/// (`ftl.write_queue_factor`), one page every 2.5 ms (>= L(p) = 2,425 us),
/// queue depth 1; `workload` is the `[workload.generator]` table's body.
fn report_with(factor: f64, workload: &str) -> Report {
    let text = format!(
        "seed = 1\n[device]\nchip = \"samsung-slc-128mb-large-block\"\nblocks_per_plane = 256\n\
         pages_per_block = 16\ntiming = {{ read_ns = 25000, read_oob_ns = 25000, program_ns = 300000, \
         erase_ns = 2000000, channel_mb_per_s = 1000000 }}\n[ftl]\nkind = \"gftl\"\nwrite_queue_factor = {factor:?}\n\
         [host]\nqueue_depth = 1\nmode = \"open\"\n[metrics]\ninterval_ms = 2.5\n[workload.generator]\n\
         kind = \"sequential\"\narrival = {{ kind = \"fixed\", interval_ns = 2500000 }}\n{workload}"
    );
    run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).unwrap()
}

/// [`report_with`] ftlab's default queue, twice the paper's length.
fn report(workload: &str) -> Report {
    report_with(2.0, workload)
}

/// Logical pages of the device of [`report`] (its `N pi`).
fn logical_pages() -> u64 {
    report("requests = 1\n").logical_pages
}

/// The gauge `name` after request `k` (0-based): with one request per
/// 2.5 ms interval, interval `k` holds the value after request `k`.
fn at(r: &Report, name: &str, k: u64) -> f64 {
    r.throughput.gauges[name][k as usize]
}

#[test]
fn the_worst_case_sequence_grows_the_queue_ever_slower_and_within_l() {
    let n_pi = logical_pages();
    let n = n_pi / 16;
    // Round-robin over the N logical blocks (stride = pages per block): the
    // first N pi writes fill every block, each later one goes to the queue.
    let r = report(&format!("requests = {}\nstride = 16\n", n_pi + 8 * n));
    let names: Vec<&str> = r.throughput.gauges.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "forced_steps",
            "gc_queue_jobs",
            "write_queue_high_water_pages",
            "write_queue_limit_pages",
            "write_queue_live_pages",
            "write_queue_pages"
        ]
    );
    assert_eq!(at(&r, "write_queue_pages", n_pi - 1), 0.0, "nothing queued while the blocks fill");
    // Figure 6's pending writes: N - N / kappa more in the first N requests
    // after the blocks are full, N - 3N / kappa in the third N.
    let live = |k: u64| at(&r, "write_queue_live_pages", n_pi - 1 + k);
    let grown = |from: u64| live(from + n) - live(from);
    let (first, third) = (grown(0), grown(2 * n));
    assert!(first >= 0.75 * n as f64, "first N requests grew the queue by {first} pages (N = {n})");
    assert!(third < 0.7 * first, "growth slows: {first} then {third} pages per N requests");
    let l = r.ftl_gauges["write_queue_limit_pages"];
    let high = r.ftl_gauges["write_queue_high_water_pages"];
    assert!(high <= l, "high water {high} pages, 2 L = {l}");
    let series = &r.throughput.gauges["write_queue_pages"];
    assert!(series.iter().all(|&q| q <= high), "no sample above the high water");
    assert_eq!(r.ftl_gauges["forced_steps"], 0.0, "the worst case of IV-D never fills the queue");
    assert_eq!(r.bound_violations, Some(0));
    // But its pages outgrow the paper's L (half this limit): dead queue pages
    // wait for the rest of their block, and erasing it takes a step.
    assert!(high > 0.5 * l, "high water {high} pages, the paper's L = {}", 0.5 * l);

    // With the paper's L the queue fills: cleaning steps are forced before
    // writes, and those writes exceed the bound.
    let n_pi = report_with(1.0, "requests = 1\n").logical_pages;
    let n = n_pi / 16;
    let r = report_with(1.0, &format!("requests = {}\nstride = 16\n", n_pi + 32 * n));
    assert!(r.ftl_gauges["forced_steps"] > 0.0, "{:?}", r.ftl_gauges);
    assert!(r.bound_violations.unwrap() > 0);
    assert!(r.ftl_gauges["write_queue_high_water_pages"] >= r.ftl_gauges["write_queue_limit_pages"]);
}

#[test]
fn a_load_that_never_rewrites_leaves_the_queue_empty_and_a_rewrite_burst_fills_it() {
    let n_pi = logical_pages();
    // One sequential pass: every write goes to its own block, none to the queue.
    let quiet = report(&format!("requests = {n_pi}\n"));
    for name in ["write_queue_pages", "write_queue_live_pages", "gc_queue_jobs"] {
        let s = &quiet.throughput.gauges[name];
        assert_eq!(s.len() as u64, n_pi, "{name}: one interval per request");
        assert!(s.iter().all(|&v| v == 0.0), "{name}: {:?}", &s[..8]);
    }
    // A second pass rewrites every full block: the queue takes each write.
    let burst = report(&format!("requests = {}\n", n_pi + n_pi / 4));
    let q = &burst.throughput.gauges["write_queue_pages"];
    assert_eq!(q[n_pi as usize - 1], 0.0);
    assert!(q[(n_pi + 16) as usize] >= 17.0, "the rewrites are queued: {:?}", &q[n_pi as usize..][..20]);
    assert!(burst.ftl_gauges["write_queue_live_pages"] > 0.0);
    assert!(burst.ftl_gauges["gc_queue_jobs"] > 0.0);
}
