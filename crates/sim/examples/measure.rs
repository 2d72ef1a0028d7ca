//! Runs a TOML config's preconditioning, then times its measured run alone
//! (what the `replay` benchmark times), `runs` times: `cargo run --release -p
//! ftlab-sim --example measure -- CONFIG.toml [runs]`. For profiling the
//! measured phase, e.g. `perf record -D <ms of preconditioning>`.
#![allow(clippy::unwrap_used)]
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: measure CONFIG.toml [runs]");
    let runs: usize = args.next().map_or(1, |s| s.parse().expect("runs: a count"));
    let config = ftlab_sim::RunConfig::from_file(std::path::Path::new(&path)).unwrap();
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let mut sim = ftlab_sim::Simulation::new(&config).unwrap();
        sim.precondition(&mut |_| {}).unwrap();
        let pre = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let r = sim.measure(&mut |_| {}).unwrap();
        let s = t.elapsed().as_secs_f64();
        let ops = r.flash_pages_read + r.flash_pages_programmed + r.erases + r.flash_ops.oob_reads.total();
        println!(
            "precondition {pre:.3} s, measured {s:.3} s: {:.0} flash operations/s; WAF {:?}, erases {}",
            ops as f64 / s,
            r.waf,
            r.erases
        );
    }
}
