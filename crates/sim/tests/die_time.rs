//! The dies' time split by purpose (`die_time`, `throughput.die_*_us`; 002
//! Figure 7: a period split into request service, partial garbage
//! collection and idle) and the energy of a run (`[device.energy]`, 002 Table
//! VI), on workloads whose split is known.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::Purpose;
use ftlab_sim::config::RunConfig;
use ftlab_sim::{run, Report};

/// One die of 256 blocks of the 002 Table I chip (25 / 25 / 300 / 2,000 us),
/// a bus of 10^6 MB/s (a 2 KiB page and its 64-byte OOB move in 3 ns, the
/// OOB alone in 1 ns), 002's energies (Section VI), queue depth 1, one
/// request every 2.5 ms; `generator` is the generator's keys.
fn report(ftl: &str, pages_per_block: u32, generator: &str) -> Report {
    let text = format!(
        "seed = 1\n[device]\nchip = \"samsung-slc-128mb-large-block\"\nblocks_per_plane = 256\n\
         pages_per_block = {pages_per_block}\ntiming = {{ read_ns = 25000, read_oob_ns = 25000, program_ns = 300000, \
         erase_ns = 2000000, channel_mb_per_s = 1000000 }}\n\
         energy = {{ read_nj = 825, program_nj = 9900, erase_nj = 66000 }}\n[ftl]\nkind = \"{ftl}\"\n\
         [host]\nqueue_depth = 1\nmode = \"open\"\n[metrics]\ninterval_ms = 25\n[workload.generator]\n\
         arrival = {{ kind = \"fixed\", interval_ns = 2500000 }}\n{generator}"
    );
    run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).unwrap()
}

/// Nanoseconds the die is occupied by each kind of operation on this device.
const READ: u64 = 25_003;
const OOB_READ: u64 = 25_001;
const PROGRAM: u64 = 300_003;
const ERASE: u64 = 2_000_000;
const COPYBACK: u64 = 325_000;

/// The die time of `purpose`'s operations from the report's operation
/// counts: one die, one request at a time, so no operation waits for the
/// channel and each takes exactly its time.
fn expected_ns(r: &Report, p: Purpose) -> u64 {
    let f = &r.flash_ops;
    let cb = f.copybacks.get(p);
    (f.reads.get(p) - cb) * READ
        + (f.programs.get(p) - cb) * PROGRAM
        + cb * COPYBACK
        + f.oob_reads.get(p) * OOB_READ
        + f.erases.get(p) * ERASE
}

fn measured_ns(r: &Report) -> u64 {
    (r.sim_seconds * 1e9).round() as u64
}

#[test]
fn writes_to_a_fresh_device_are_service_and_idle_only() {
    let r = report("pagemap", 32, "kind = \"sequential\"\nrequests = 100\n");
    let d = &r.die_time;
    assert_eq!(d.dies, 1);
    assert_eq!(d.busy_ns.get(Purpose::Host), 100 * PROGRAM);
    assert_eq!(d.busy_ns.total(), 100 * PROGRAM, "no garbage collection on a fresh device");
    // The last request arrives at 247.5 ms and takes one program.
    assert_eq!(measured_ns(&r), 99 * 2_500_000 + PROGRAM);
    assert_eq!(d.idle_ns, measured_ns(&r) - 100 * PROGRAM);
    assert_eq!(d.per_request.service_us, Some(300.003));
    assert_eq!(d.per_request.gc_us, Some(0.0));
    // The series: every interval's die time adds up to the run's.
    let s = &r.throughput;
    let host: f64 = s.die_host_us.iter().sum();
    assert!((host - 100.0 * 300.003).abs() < 1e-6, "{host}");
    assert_eq!(s.die_gc_us.iter().sum::<f64>(), 0.0);
    // 10 requests per 25 ms interval. An interval holds the programs issued
    // up to the first completion in the next one (the request arriving at
    // its end): 11 in the first, 10 in the next.
    assert!((s.die_host_us[0] - 11.0 * 300.003).abs() < 1e-6, "{:?}", &s.die_host_us[..2]);
    assert!((s.die_host_us[1] - 10.0 * 300.003).abs() < 1e-6, "{:?}", &s.die_host_us[..2]);
    assert!((s.die_idle_us[0] - (25_000.0 - 11.0 * 300.003)).abs() < 1e-6, "{:?}", &s.die_idle_us[..2]);
}

/// GFTL under rewrites: partial cleaning steps after the requests (002
/// Section IV). Every purpose's die time is its operations' exact time, and
/// service, cleaning and idle make up the measured time.
#[test]
fn gftl_cleaning_is_counted_as_gc_and_the_split_adds_up() {
    let r = report("gftl", 16, "kind = \"uniform\"\nrequests = 12000\nread_fraction = 0.3\n");
    let d = &r.die_time;
    for p in Purpose::ALL {
        assert_eq!(d.busy_ns.get(p), expected_ns(&r, p), "{p:?}: {:?}", r.flash_ops);
    }
    assert!(d.busy_ns.get(Purpose::Gc) > 0, "GFTL cleaned: {:?}", r.flash_ops);
    assert_eq!(d.busy_ns.total() + d.idle_ns, measured_ns(&r));
    let p = d.per_request;
    let period_us = p.service_us.unwrap() + p.gc_us.unwrap() + p.other_us.unwrap() + p.idle_us.unwrap();
    assert!((period_us * r.requests as f64 - r.sim_seconds * 1e6).abs() < 1e-3, "{p:?}");
    // Per period: at most one program or one read with its OOB search, and
    // at most one cleaning step, the longest an erase (Section IV-B).
    assert!(p.service_us.unwrap() <= 425.1 && p.gc_us.unwrap() <= 2000.0, "{p:?}");
    // The series adds up to the run's totals.
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let gc_us = d.busy_ns.get(Purpose::Gc) as f64 / 1e3;
    assert!((sum(&r.throughput.die_gc_us) - gc_us).abs() < 1e-3 * gc_us.max(1.0));
}

/// Table VI's accounting on a GFTL run: a read access costs the host's page
/// and OOB reads, a write access everything else.
#[test]
fn energy_per_access_follows_the_operations() {
    let r = report("gftl", 16, "kind = \"uniform\"\nrequests = 12000\nread_fraction = 0.3\n");
    let e = r.energy.unwrap();
    let f = &r.flash_ops;
    let host_reads = (f.reads.get(Purpose::Host) + f.oob_reads.get(Purpose::Host)) as f64 * 825.0;
    assert!(f.oob_reads.get(Purpose::Host) > 0, "GFTL reads search the OOB areas");
    let total = (f.reads.total() + f.oob_reads.total()) as f64 * 825.0
        + f.programs.total() as f64 * 9900.0
        + f.erases.total() as f64 * 66000.0;
    assert_eq!(e.total_nj, total);
    assert_eq!(e.host_read_access_nj, Some(host_reads / r.host_pages_read as f64));
    assert_eq!(e.host_write_access_nj, Some((total - host_reads) / r.host_pages_written as f64));
    // Without [device.energy], no energy section.
    let none = report("pagemap", 32, "kind = \"sequential\"\nrequests = 10\n");
    assert!(none.energy.is_some());
    let text = "[workload.generator]\nkind = \"sequential\"\nrequests = 10\n";
    let plain = run(&RunConfig::from_toml(text, "test").unwrap(), &mut |_| {}).unwrap();
    assert!(plain.energy.is_none());
    assert!(serde_json::to_value(&plain).unwrap().get("energy").is_none(), "left out of the JSON");
    assert!(serde_json::to_value(&none).unwrap()["energy"]["host_write_access_nj"].is_number());
}

#[test]
fn a_bad_energy_is_an_error_naming_the_key() {
    for (energy, key) in [
        ("{ read_nj = 825, program_nj = nan, erase_nj = 66000 }", "device.energy.program_nj"),
        ("{ read_nj = -1, program_nj = 9900, erase_nj = 66000 }", "device.energy.read_nj"),
        ("{ read_nj = 825, read_oob_nj = 1e12, program_nj = 9900, erase_nj = 66000 }", "device.energy.read_oob_nj"),
    ] {
        let text = format!("[device]\nenergy = {energy}\n[workload.generator]\nkind = \"sequential\"\nrequests = 10\n");
        let err = run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).unwrap_err().to_string();
        assert!(err.contains(key), "{err}");
    }
    let text = "[device]\nenergy = { read_nj = 825, program_nj = 9900 }\n";
    let err = RunConfig::from_toml(text, "test").unwrap_err().to_string();
    assert!(err.contains("erase_nj"), "a missing energy is named: {err}");
}
