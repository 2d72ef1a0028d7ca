//! Runs a TOML config and prints the report as JSON: `cargo run --release -p
//! ftlab-sim --example replay -- CONFIG.toml`. (The `ftlab` binary is the
//! front end; this is the minimal library use.)
#![allow(clippy::unwrap_used)]
fn main() {
    let path = std::env::args().nth(1).expect("usage: replay CONFIG.toml");
    let config = ftlab_sim::RunConfig::from_file(std::path::Path::new(&path)).unwrap();
    let t = std::time::Instant::now();
    match ftlab_sim::run(&config, &mut |_| {}) {
        Ok(r) => {
            eprintln!("wall {:.3} s", t.elapsed().as_secs_f64());
            println!("requests {} waf {:?} erases {} gc_copies {} integrity {} read {:?} write {:?} util {:.3} sim {:.3}s late {}", r.requests, r.waf, r.erases, r.gc_page_copies, r.integrity, r.read_us, r.write_us, r.space_utilization, r.sim_seconds, r.late_requests);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
