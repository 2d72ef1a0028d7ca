//! Runs a TOML config's preconditioning, then times its measured run alone
//! (what the `replay` benchmark times), `runs` times: `cargo run --release -p
//! ftlab-sim --example measure -- CONFIG.toml [runs]`. For profiling the
//! measured phase, e.g. `perf record -D <ms of preconditioning>`.

fn main() {
    if let Err(e) = measure() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn measure() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: measure CONFIG.toml [runs]")?;
    let runs: usize = match args.next() {
        None => 1,
        Some(s) => s.parse().map_err(|_| format!("runs: expected a count, got `{s}`"))?,
    };
    let config = ftlab_sim::RunConfig::from_file(std::path::Path::new(&path))?;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let mut sim = ftlab_sim::Simulation::new(&config)?;
        sim.precondition(&mut |_| {})?;
        let pre = t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let r = sim.measure(&mut |_| {})?;
        let s = t.elapsed().as_secs_f64();
        let ops = r.flash_pages_read + r.flash_pages_programmed + r.erases + r.flash_ops.oob_reads.total();
        println!(
            "precondition {pre:.3} s, measured {s:.3} s: {:.0} flash operations/s; WAF {:?}, erases {}",
            ops as f64 / s,
            r.waf,
            r.erases
        );
    }
    Ok(())
}
