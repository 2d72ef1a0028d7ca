//! End-to-end replay benchmarks: trace parsing, engine, FTL, GC and metrics
//! together. Throughput is host requests per second; after each benchmark the
//! flash operations per second of the last run are printed too.
//!
//! - `mqsim_compare`: the workload of `experiments/mqsim-compare` (1,000,000 8 KiB
//!   requests: a sequential fill of 400,000 pages, then 600,000 uniform random
//!   overwrites, one per millisecond) on the 4 GiB MLC device of that experiment,
//!   read from an MQSim-format trace file.
//! - `pagemap_16GiB_random_4k`: pagemap on a 16 GiB device, 2,000,000 uniform
//!   random 4 KiB writes after preconditioning (sequential fill and one random
//!   overwrite of the logical space, not timed).
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ftlab_sim::{run, RunConfig, Simulation};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn mqsim_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("mqsim-compare.trace");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(20261122);
    let mut t = 0u64;
    for i in 0..1_000_000u64 {
        let page = if i < 400_000 { i } else { rng.gen_range(0..400_000u64) };
        writeln!(f, "{t} 0 {} 16 0", page * 16).unwrap();
        t += 1_000_000;
    }
    path
}

fn flash_ops(r: &ftlab_sim::Report) -> u64 {
    r.flash_pages_read + r.flash_pages_programmed + r.erases + r.flash_ops.oob_reads.total()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let trace = mqsim_trace(dir.path());
    let config_text = include_str!("../../../experiments/mqsim-compare/ftlab.toml");
    let mut mq = RunConfig::from_toml(config_text, "ftlab.toml").unwrap();
    mq.workload.trace = Some(trace);

    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(1_000_000));
    let mut last = None;
    g.bench_function("mqsim_compare", |b| {
        b.iter(|| last = Some(run(&mq, &mut |_| {}).unwrap()));
    });
    if let Some(r) = &last {
        let t = Instant::now();
        run(&mq, &mut |_| {}).unwrap();
        let s = t.elapsed().as_secs_f64();
        eprintln!(
            "mqsim_compare: {:.0} host requests/s, {:.0} flash operations/s (one run of {s:.3} s); WAF {:.3}, erases {}",
            1e6 / s,
            flash_ops(r) as f64 / s,
            r.waf.unwrap_or(0.0),
            r.erases
        );
    }

    let big = RunConfig::from_toml(
        include_str!("../../../experiments/mqsim-compare/pagemap-16gib.toml"),
        "pagemap-16gib.toml",
    )
    .unwrap();
    g.throughput(Throughput::Elements(2_000_000));
    let mut last = None;
    g.bench_function("pagemap_16GiB_random_4k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut sim = Simulation::new(&big).unwrap();
                sim.precondition(&mut |_| {}).unwrap();
                let t = Instant::now();
                let r = sim.measure(&mut |_| {}).unwrap();
                total += t.elapsed();
                last = Some((r, t.elapsed()));
            }
            total
        });
    });
    if let Some((r, d)) = &last {
        let s = d.as_secs_f64();
        eprintln!(
            "pagemap_16GiB_random_4k: {:.0} host requests/s, {:.0} flash operations/s (last run {s:.3} s); WAF {:.3}",
            2e6 / s,
            flash_ops(r) as f64 / s,
            r.waf.unwrap_or(0.0)
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
