//! Wear leveling and runs until retirement (000 Section 6.2, Figure 10): Telomere
//! with the FIFO free-block queue, RBER balancing and health binning on a small,
//! low-endurance device, run until 2% of the blocks reach the retirement RBER.
#![allow(clippy::unwrap_used)]

use ftlab_sim::{run, Report, RunConfig};

/// 256 blocks of 16 pages on 4 dies, rated for 20 cycles (a typical block
/// retires near 35); four periodic tasks striped over every die whose data lives
/// 20 ms to 4 s, all admitted by Telomere SiP; the run ends when 2% of the blocks
/// are worn out.
fn text(kind: &str, free_order: &str, stop: &str) -> String {
    format!(
        "seed = 3\n[device]\nblocks_per_plane = 64\npages_per_block = 16\n[device.wear]\nendurance_cycles = 20\n\
         [ftl]\nkind = \"{kind}\"\nfree_order = \"{free_order}\"\n\
         [workload]\nduration_ms = 100000000.0\n{stop}\n\
         [[workload.task]]\nname = \"hot\"\nwrite_period_us = 5000.0\nwrite_pages = 8\nlifetime_us = 20000.0\ngranularity = 4\n\
         [[workload.task]]\nname = \"warm\"\nwrite_period_us = 10000.0\nwrite_pages = 4\nlifetime_us = 100000.0\ngranularity = 4\n\
         [[workload.task]]\nname = \"cool\"\nwrite_period_us = 20000.0\nwrite_pages = 4\nlifetime_us = 400000.0\ngranularity = 4\n\
         [[workload.task]]\nname = \"cold\"\nwrite_period_us = 40000.0\nwrite_pages = 4\nlifetime_us = 4000000.0\ngranularity = 4\n"
    )
}

fn run_text(text: &str) -> Report {
    run(&RunConfig::from_toml(text, "test").unwrap(), &mut |_| {}).unwrap()
}

fn until_retired(kind: &str, free_order: &str) -> Report {
    run_text(&text(kind, free_order, "stop_at_retired_fraction = 0.02"))
}

/// Figure 10's comparison for Telomere: RBER balancing and health binning end
/// with the blocks' RBER closer together (a higher median, a lower 99th
/// percentile and maximum) than the FIFO queue, and the device takes more host
/// writes before 2% of its blocks are worn out.
#[test]
fn telomere_wear_leveling_evens_out_rber_until_retirement() {
    let fifo = until_retired("telomere-sip", "fifo");
    let rber = until_retired("telomere-sip", "rber");
    let hb = until_retired("telomere-sip", "health-bin");
    for (name, r) in [("fifo", &fifo), ("rber", &rber), ("health-bin", &hb)] {
        eprintln!(
            "{name}: rber p50 {:.3e} p99 {:.3e} max {:.3e}, retired {:.4}, host pages {}, erases mean {:.2} std {:.2}",
            r.rber.p50,
            r.rber.p99,
            r.rber.max,
            r.retired_fraction,
            r.host_pages_written,
            r.erase_count.mean,
            r.erase_count.std
        );
        assert_eq!(r.integrity, "ok", "{name}");
        assert_eq!(r.tasks_refused, 0, "{name}");
        assert_eq!(r.deadline_misses, 0, "{name}");
        assert!(r.stopped_at_retired_fraction, "{name}");
        assert!(r.retired_fraction >= 0.02, "{name}: {}", r.retired_fraction);
        // Telomere never copies task data: every erase is of expired blocks.
        assert_eq!(r.gc_page_copies, 0, "{name}");
    }
    for (name, r) in [("rber", &rber), ("health-bin", &hb)] {
        assert!(r.rber.p99 < fifo.rber.p99, "{name}: p99 {} vs fifo {}", r.rber.p99, fifo.rber.p99);
        assert!(r.rber.max < fifo.rber.max, "{name}: max {} vs fifo {}", r.rber.max, fifo.rber.max);
        assert!(r.rber.p50 > 1.5 * fifo.rber.p50, "{name}: p50 {} vs fifo {}", r.rber.p50, fifo.rber.p50);
        assert!(
            r.host_pages_written as f64 > 1.2 * fifo.host_pages_written as f64,
            "{name}: {} host pages before retirement vs fifo {}",
            r.host_pages_written,
            fifo.host_pages_written
        );
    }
    // The CDF agrees with the percentiles: half the blocks are at or below the
    // median, fewer below it.
    for r in [&fifo, &rber, &hb] {
        let cdf = &r.rber_cdf;
        assert_eq!(cdf.len(), 40);
        assert!((cdf[0][0] - 1e-5).abs() < 1e-12 && (cdf[39][0] - 1e-1).abs() < 1e-9);
        assert!(cdf.windows(2).all(|w| w[0][0] < w[1][0] && w[0][1] <= w[1][1]));
        let at = |x: f64| cdf.iter().rev().find(|p| p[0] <= x).map_or(0.0, |p| p[1]);
        let above = cdf.iter().find(|p| p[0] >= r.rber.p50).unwrap()[1];
        assert!(above >= 0.5, "{above}");
        assert!(at(r.rber.p50 * 0.999) < 0.5);
        assert_eq!(cdf[39][1], 1.0, "every block is below RBER 0.1");
    }
    // The FIFO queue leaves a quarter of the blocks below 3e-3 at the end; the
    // balanced orders leave none (Figure 10: their CDF rises late and steeply).
    let below = |r: &Report| r.rber_cdf.iter().rev().find(|p| p[0] <= 3e-3).unwrap()[1];
    assert!(below(&fifo) > 0.2, "{}", below(&fifo));
    assert!(below(&rber) < 0.02 && below(&hb) < 0.02, "{} {}", below(&rber), below(&hb));
}

/// Dispatched by request, one at a time, the run stops before the first request
/// after the target is reached, never earlier: the same run cut one request
/// short has fewer worn-out blocks, cut at the same request it reports the same
/// wear. Deterministic. (Dispatched per die, the requests already in the device
/// when the target is reached are finished.)
#[test]
fn the_run_stops_at_the_retired_fraction_and_not_before() {
    const BY_REQUEST: &str = "\n[host]\ndispatch = \"request\"\nqueue_depth = 1\n";
    let until_retired =
        |kind: &str, order: &str| run_text(&(text(kind, order, "stop_at_retired_fraction = 0.02") + BY_REQUEST));
    let run_text = |t: String| run_text(&(t + BY_REQUEST));
    let stopped = until_retired("telomere-sip", "health-bin");
    assert!(stopped.stopped_at_retired_fraction);
    assert!(stopped.retired_fraction >= 0.02);
    let n = stopped.requests;
    let cap = |n: u64| {
        run_text(text("telomere-sip", "health-bin", &format!("max_requests = {n}\nstop_at_retired_fraction = 1.0")))
    };
    let short = cap(n - 1);
    assert!(!short.stopped_at_retired_fraction);
    assert!(short.retired_fraction < 0.02, "{} after {} requests", short.retired_fraction, n - 1);
    let same = cap(n);
    assert_eq!((same.requests, same.retired_fraction, same.rber), (n, stopped.retired_fraction, stopped.rber));
    assert!(!same.stopped_at_retired_fraction, "the workload's cap came first");
    let again = until_retired("telomere-sip", "health-bin");
    assert_eq!(serde_json::to_string(&again).unwrap(), serde_json::to_string(&stopped).unwrap());
    // Without the key the same run goes on past the target.
    let on = run_text(text("telomere-sip", "health-bin", &format!("max_requests = {}", n + 2000)));
    assert!(!on.stopped_at_retired_fraction && on.retired_fraction > stopped.retired_fraction);
}

#[test]
fn stop_fraction_and_health_bin_are_validated() {
    for bad in ["0.0", "1.5", "-0.1"] {
        let c = RunConfig::from_toml(&text("telomere-sip", "fifo", &format!("stop_at_retired_fraction = {bad}")), "t")
            .unwrap();
        let e = ftlab_sim::validate(&c).unwrap_err().to_string();
        assert!(e.contains("workload.stop_at_retired_fraction"), "{e}");
    }
    let c = RunConfig::from_toml(&text("pagemap", "health-bin", ""), "t").unwrap();
    let e = ftlab_sim::validate(&c).unwrap_err().to_string();
    assert!(e.contains("health-bin"), "{e}");
}
