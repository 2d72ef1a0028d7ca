//! End-to-end tests of the simulator through its library API.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;

use ftlab_ftl::pagemap::PageMapConfig;
use ftlab_ftl::{Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};
use ftlab_nand::{Nand, PageKind, Payload, Ppa, SimTime};
use ftlab_sim::config::{Host, RunConfig};
use ftlab_sim::metrics::Content;
use ftlab_sim::source::Request;
use ftlab_sim::{run, Engine, SimError};
use ftlab_workload::Op;

/// The trace fixtures the repository carries (see their README).
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../workload/tests/fixtures/");

fn config(text: &str) -> RunConfig {
    RunConfig::from_toml(text, "test").unwrap()
}

/// Replays the first `requests` requests of `trace` on a filled device (so reads
/// find data) and checks the run: every request served, data intact.
fn replays_with_integrity(trace: &Path, format: &str, requests: u64) {
    let name = trace.display();
    let mut c =
        config(&format!("[workload]\ntrace = \"{name}\"\ntrace_format = \"{format}\"\nmax_requests = {requests}\n"));
    c.precondition.fill = true;
    let r = run(&c, &mut |_| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(r.integrity, "ok", "{name}");
    assert_eq!(r.requests, requests, "{name}");
    assert!(r.host_pages_read + r.host_pages_written > 0, "{name}");
    assert!(r.address.is_some(), "{name}");
    if r.host_pages_read > 0 {
        assert!(r.read_us.mean > 0.0, "{name}: reads of filled pages take time");
    }
}

#[test]
fn every_trace_format_replays_with_integrity() {
    let fixtures = [
        ("umass_header.csv", "umass", 4),
        ("msr.csv", "msr", 4),
        ("systor.csv", "systor", 3),
        ("blkparse.txt", "blkparse", 3),
        ("blkparse.txt", "blkparse-dispatch", 1),
        ("disksim.trace", "disksim", 4),
        ("mqsim.trace", "mqsim", 3),
        ("mqsim.trace.gz", "mqsim", 3),
        ("ssdsim.ascii", "ssdsim", 3),
    ];
    for (file, format, requests) in fixtures {
        replays_with_integrity(&Path::new(FIXTURES).join(file), format, requests);
    }
}

#[cfg(feature = "real-traces")]
#[path = "../../workload/tests/support/real_traces_dir.rs"]
mod real_traces_dir;

#[cfg(feature = "real-traces")]
#[test]
fn every_real_trace_replays_with_integrity() {
    let traces = [
        ("umass_financial1_head.ssdsim.ascii", "ssdsim", 10_000),
        ("umass_websearch_wsrch-small.mqsim.trace", "mqsim", 24_783),
        ("ms_tpcc-small.mqsim.trace", "mqsim", 6_999),
        ("msr_cambridge_hm0_sample.csv", "msr", 1_000),
        ("systor17_traces_sample.csv", "systor", 999),
        ("hadoop_blkparse_blktrace.txt", "blkparse", 15_524),
        ("disksim_ssd-postmark-aligned2.trace", "disksim", 20_000),
        ("disksim_ssd-iozone-aligned2-100K.trace", "disksim", 5_000),
    ];
    for (file, format, requests) in traces {
        replays_with_integrity(&real_traces_dir::real_traces_dir().join(file), format, requests);
    }
}

#[test]
fn same_config_and_seed_same_report() {
    let text = "seed = 9\n[device]\nblocks_per_plane = 64\n[workload]\npreset = \"zipf-mixed\"\nmax_requests = 30000\n";
    let a = serde_json::to_string(&run(&config(text), &mut |_| {}).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&config(text), &mut |_| {}).unwrap()).unwrap();
    assert_eq!(a, b);
    let other = text.replace("seed = 9", "seed = 10");
    let c = serde_json::to_string(&run(&config(&other), &mut |_| {}).unwrap()).unwrap();
    assert_ne!(a, c, "the seed must matter");
}

#[test]
fn preconditioning_is_not_measured() {
    let text = "[device]\nblocks_per_plane = 64\n[precondition]\nfill = true\nrandom_overwrites = 1.0\n\
                [workload.generator]\nkind = \"uniform\"\nrequests = 5000\n";
    let r = run(&config(text), &mut |_| {}).unwrap();
    assert_eq!(r.host_pages_written, 5000);
    assert_eq!(r.flash_ops.programs.get(ftlab_ftl::Purpose::Host), 5000);
    // The device is in steady state: GC runs during the measured writes.
    assert!(r.gc_page_copies > 0 && r.waf.unwrap() > 1.0);
    assert_eq!(r.integrity, "ok");
}

#[test]
fn measuring_can_start_at_the_first_gc() {
    let text = "[device]\nblocks_per_plane = 64\n[precondition]\nstart_at_first_gc = true\n\
                [workload.generator]\nkind = \"uniform\"\nrequests = 60000\n";
    let r = run(&config(text), &mut |_| {}).unwrap();
    assert!(r.requests > 0 && r.requests < 60_000, "{}", r.requests);
    assert!(r.erases > 0);
}

#[test]
fn unaligned_requests_are_read_modify_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.trace");
    let mut f = std::fs::File::create(&path).unwrap();
    // MQSim format: time_ns dev lba_sectors size_sectors op(0 = write).
    writeln!(f, "0 0 0 16 0").unwrap(); // pages 0-1, aligned
    writeln!(f, "1000 0 3 2 0").unwrap(); // inside page 0: read-modify-write
    writeln!(f, "2000 0 6 6 0").unwrap(); // end of page 0 and start of page 1
    writeln!(f, "3000 0 0 16 1").unwrap(); // read both back
    drop(f);
    let c = config(&format!(
        "[workload]\ntrace = \"{}\"\ntrace_format = \"mqsim\"\naddress = \"compact\"\n",
        path.display()
    ));
    let r = run(&c, &mut |_| {}).unwrap();
    assert_eq!(r.rmw_pages, 3);
    assert_eq!(r.host_pages_written, 5);
    assert_eq!(r.integrity, "ok");
}

#[test]
fn malformed_trace_line_is_an_error_with_its_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.trace");
    std::fs::write(&path, "0 0 0 8 0\n100 0 8 8 0\n200 zero 16 8 0\n").unwrap();
    let c = config(&format!("[workload]\ntrace = \"{}\"\ntrace_format = \"mqsim\"\n", path.display()));
    let e = run(&c, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains(":3:"), "{e}");
    let mut c = c;
    c.workload.skip_bad_lines = true;
    let r = run(&c, &mut |_| {}).unwrap();
    assert_eq!((r.skipped_lines, r.requests), (1, 2));
}

#[test]
fn bad_configs_are_errors_naming_the_key() {
    let e = RunConfig::from_toml("[device]\nchannls = 2\n", "x.toml").unwrap_err().to_string();
    assert!(e.contains("channls"), "{e}");
    let e = run(&config("[ftl]\nkind = \"pagemap\"\ngc_treshold = 2\n"), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("gc_treshold"), "{e}");
    let e = run(&config("[device]\nchip = \"nope\"\n"), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("nope") && e.contains("small-slc"), "{e}");
    let e = run(&config("[device]\nchannels = 0\n"), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("channels"), "{e}");
}

/// Configuration errors carry the key path as a field, for front ends that
/// show it apart from the message (Python's `ConfigError.key`).
#[test]
fn config_errors_carry_the_key_path() {
    let key = |text: &str| match run(&config(text), &mut |_| {}) {
        Err(SimError::Config(c)) => c.key,
        Err(e) => panic!("expected a configuration error for {text:?}, got {e}"),
        Ok(_) => panic!("expected a configuration error for {text:?}, got a run"),
    };
    assert_eq!(key("[ftl]\nkind = \"pagemap\"\ngc_free_blocks = 0\n"), "ftl.gc_free_blocks");
    assert_eq!(key("[ftl]\nkind = \"pagemap\"\ngc_treshold = 2\n"), "ftl.gc_treshold");
    assert_eq!(key("[ftl]\nkind = \"nosuch\"\n"), "ftl.kind");
    assert_eq!(key("[device]\nchip = \"nope\"\n"), "device.chip");
    assert_eq!(key("[device]\nchannels = 1\nways = 1\ndies = 1\nplanes = 1\nblocks_per_plane = 2\n"), "device");
    assert_eq!(key("[host]\nqueue_depth = 0\n"), "host.queue_depth");
    assert_eq!(key("[device]\nwrite_buffer_pages = 0\n"), "device.write_buffer_pages");
    let text =
        "[workload]\n[[workload.task]]\nname = \"big\"\nwrite_period_us = 10\nwrite_pages = 64\nlifetime_us = 1e9\n";
    assert_eq!(key(text), "workload.task");
}

fn tasks(write_period_us: f64, pages: u32) -> String {
    format!(
        "[workload]\nduration_ms = 500\n\
         [[workload.task]]\nname = \"camera\"\nwrite_period_us = {write_period_us}\nwrite_pages = {pages}\nlifetime_us = 20000\n\
         read_period_us = 5000\nread_pages = 2\n\
         [[workload.task]]\nname = \"lidar\"\nwrite_period_us = 2000\nwrite_pages = 1\nlifetime_us = 40000\n"
    )
}

#[test]
fn periodic_tasks_meet_deadlines_when_light_and_miss_when_overloaded() {
    let light = run(&config(&tasks(2000.0, 2)), &mut |_| {}).unwrap();
    assert_eq!(light.tasks.len(), 2);
    assert_eq!(light.tasks[0].jobs, 250 + 100);
    assert_eq!(light.tasks[1].jobs, 250);
    assert_eq!(light.deadline_misses, 0);
    assert_eq!(light.integrity, "ok");
    // 64 pages of 200 us every 1 ms on 4 dies cannot keep up.
    let heavy = run(&config(&tasks(1000.0, 64)), &mut |_| {}).unwrap();
    assert!(heavy.tasks[0].deadline_misses > 0);
}

#[test]
fn a_task_set_larger_than_the_device_is_refused() {
    let text =
        "[workload]\n[[workload.task]]\nname = \"big\"\nwrite_period_us = 10\nwrite_pages = 64\nlifetime_us = 1e9\n";
    let e = run(&config(text), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("logical pages"), "{e}");
}

/// An FTL that forgets every tenth write: the integrity check must notice.
#[derive(Debug)]
struct Forgetful(Box<dyn Ftl>, u64);
impl Ftl for Forgetful {
    fn name(&self) -> &'static str {
        "forgetful"
    }
    fn logical_pages(&self) -> u32 {
        self.0.logical_pages()
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.0.read(io, lpn)
    }
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        self.1 += 1;
        if self.1.is_multiple_of(10) {
            return Ok(());
        }
        self.0.write(io, lpn, data, hint)
    }
    fn ram_bytes(&self) -> u64 {
        0
    }
}

#[test]
fn lost_writes_are_reported_as_integrity_errors() {
    let c = config("[device]\nblocks_per_plane = 16\n");
    let nand = Nand::new(&c.device.nand_config(1).unwrap()).unwrap();
    let mut flash = Flash::new(nand);
    let inner = PageMapConfig::default().format(&mut flash.io(SimTime::ZERO)).unwrap();
    let host = Host { queue_depth: 4, closed: true, time_scale: 1.0, idle_threshold_ns: 1_000_000, reorder_window: 16 };
    let mut engine = Engine::new(flash, Box::new(Forgetful(inner, 0)), host, ftlab_nand::StoreKind::Token, None);
    engine.start_measuring(false);
    let reqs: Vec<Result<Request, SimError>> = (0..200u64)
        .map(|i| {
            Ok(Request {
                arrival: 0,
                op: Op::Write,
                offset: i * 4096,
                len: 4096,
                deadline: None,
                task: None,
                expiry: None,
            })
        })
        .collect();
    engine.drive(&mut reqs.into_iter(), 0, false, &mut |_| {}).unwrap();
    let dies = |e: &Engine| {
        let nand = e.device.flash().nand();
        (0..nand.geometry().dies()).map(|d| nand.die_free_at(ftlab_nand::DieId(d))).collect::<Vec<_>>()
    };
    let (busy, reads) = (dies(&engine), engine.device.flash().counters().reads.total());
    assert_eq!(engine.verify_all().unwrap(), 20);
    // The read-back reads every written page and takes no time on the dies.
    assert_eq!(dies(&engine), busy);
    assert_eq!(engine.device.flash().counters().reads.total() - reads, 180);
    // The verdict is typed: page 9 (the tenth write, dropped) was never written.
    let first = engine.measured.first_mismatch.unwrap();
    assert_eq!(first.lpn, 9);
    assert_eq!(first.got, Content::Nothing);
    assert_eq!(first.expected, Content::Version { page: 9, version: 1 });
    assert!(first.to_string().starts_with("logical page 9 read at "), "{first}");
    assert!(first.to_string().ends_with(" returned nothing, expected version 1 of page 9"), "{first}");
}

/// A log of pages without garbage collection whose map keeps every copy of a
/// logical page, and whose reads of every fifth logical page return the copy
/// before the newest from the flash (a stale map entry): the integrity check
/// must notice, through the medium's page store.
#[derive(Debug, Default)]
struct StaleLog {
    copies: std::collections::HashMap<u32, Vec<Ppa>>,
    next: u32,
}
impl Ftl for StaleLog {
    fn name(&self) -> &'static str {
        "stale-log"
    }
    fn logical_pages(&self) -> u32 {
        100
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        let Some(copies) = self.copies.get(&lpn.0) else { return Ok(None) };
        let back = usize::from(lpn.0.is_multiple_of(5) && copies.len() > 1);
        Ok(Some(io.read(copies[copies.len() - 1 - back], Purpose::Host)?.0))
    }
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, _hint: &Hint) -> Result<(), FtlError> {
        let ppa = Ppa(self.next);
        io.program(ppa, lpn.0, PageKind::Data, data, Purpose::Host)?;
        self.next += 1;
        self.copies.entry(lpn.0).or_default().push(ppa);
        Ok(())
    }
    fn ram_bytes(&self) -> u64 {
        0
    }
}

#[test]
fn stale_reads_are_reported_as_integrity_errors() {
    let c = config("[device]\nblocks_per_plane = 16\n");
    let nand = Nand::new(&c.device.nand_config(1).unwrap()).unwrap();
    let host = Host { queue_depth: 4, closed: true, time_scale: 1.0, idle_threshold_ns: 1_000_000, reorder_window: 16 };
    let flash = Flash::new(nand);
    let mut engine = Engine::new(flash, Box::<StaleLog>::default(), host, ftlab_nand::StoreKind::Token, None);
    engine.start_measuring(false);
    // Logical pages 0-49 written twice.
    let reqs: Vec<Result<Request, SimError>> = (0..100u64)
        .map(|i| {
            let offset = (i % 50) * 4096;
            Ok(Request { arrival: 0, op: Op::Write, offset, len: 4096, deadline: None, task: None, expiry: None })
        })
        .collect();
    engine.drive(&mut reqs.into_iter(), 0, false, &mut |_| {}).unwrap();
    assert_eq!(engine.verify_all().unwrap(), 10, "pages 0, 5, .., 45 read their first copy");
    let first = engine.measured.first_mismatch.unwrap();
    assert_eq!(first.lpn, 0);
    assert_eq!(
        (first.got, first.expected),
        (Content::Version { page: 0, version: 1 }, Content::Version { page: 0, version: 3 })
    );
}

/// RBER balancing (000 Section 6.4, Figure 10): on a small, low-endurance device
/// with a skewed workload, opening the lowest-RBER free block first evens out the
/// RBER compared with the FIFO free-block queue. GC keeps 12 blocks free so that
/// the policy has a choice (with 2 free blocks the orders barely differ).
#[test]
fn rber_free_order_evens_out_wear() {
    let text = |order: &str| {
        format!(
            "seed = 3\n[device]\nblocks_per_plane = 64\n[device.wear]\nendurance_cycles = 20\n\
             [ftl]\nkind = \"pagemap\"\nover_provisioning = 0.1\ngc_free_blocks = 12\nfree_order = \"{order}\"\n\
             [precondition]\nfill = true\n\
             [workload.generator]\nkind = \"hotcold\"\naccess_fraction = 0.9\nspace_fraction = 0.1\nrequests = 60000\n"
        )
    };
    let fifo = run(&config(&text("fifo")), &mut |_| {}).unwrap();
    let rber = run(&config(&text("rber")), &mut |_| {}).unwrap();
    for (name, r) in [("fifo", &fifo), ("rber", &rber)] {
        eprintln!(
            "{name}: rber mean {:.3e} p50 {:.3e} p99 {:.3e} max {:.3e}, retired {:.3}, erases mean {:.2} std {:.2} min {} max {}, waf {:?}",
            r.rber.mean, r.rber.p50, r.rber.p99, r.rber.max, r.retired_fraction,
            r.erase_count.mean, r.erase_count.std, r.erase_count.min, r.erase_count.max, r.waf
        );
        assert_eq!(r.integrity, "ok");
    }
    // Same traffic: the policy only changes which free block is opened.
    assert_eq!(fifo.erases, rber.erases);
    assert!(rber.rber.max < fifo.rber.max, "max {} vs {}", rber.rber.max, fifo.rber.max);
    assert!(rber.rber.p99 < fifo.rber.p99, "p99 {} vs {}", rber.rber.p99, fifo.rber.p99);
}

/// Telomere admits the workload's task set itself: a refused task issues nothing
/// and is reported with the reason; the admitted ones run with no copy and no miss.
#[test]
fn telomere_runs_only_the_tasks_it_admits() {
    let set = "[workload]\nduration_ms = 3000\n\
         [[workload.task]]\nname = \"camera\"\nwrite_period_us = 10000\nwrite_pages = 4\nlifetime_us = 200000\n\
         read_period_us = 20000\nread_pages = 4\nread_start_us = 1000000\ngranularity = 2\n\
         [[workload.task]]\nname = \"lidar\"\nwrite_period_us = 20000\nwrite_pages = 2\nlifetime_us = 400000\n\
         [[workload.task]]\nname = \"hoard\"\nwrite_period_us = 10000\nwrite_pages = 64\nlifetime_us = 2e7\n";
    let r = run(&config(&format!("[ftl]\nkind = \"telomere-sharp\"\n{set}")), &mut |_| {}).unwrap();
    let verdicts: Vec<(&str, bool, u64)> = r.tasks.iter().map(|t| (t.name.as_str(), t.admitted, t.jobs)).collect();
    assert_eq!(verdicts, [("camera", true, 300 + 100), ("lidar", true, 150), ("hoard", false, 0)], "{:?}", r.tasks);
    assert_eq!(r.tasks_refused, 1);
    assert!(r.tasks[2].refused_by.as_deref().unwrap().starts_with("storage"), "{:?}", r.tasks[2]);
    assert_eq!(r.deadline_misses, 0);
    // No command waited behind more than one erase it did not choose.
    assert!(r.bound_us.is_some());
    assert_eq!(r.bound_violations, Some(0));
    assert_eq!(r.gc_page_copies, 0, "no valid-page copy");
    assert!(r.flash_ops.erases.get(ftlab_ftl::Purpose::Gc) > 0, "expired blocks are erased");
    assert_eq!((r.integrity.as_str(), r.expired_reads), ("ok", 0));
    // The page-map FTL has no admission control: every task runs.
    let p = run(&config(&format!("[ftl]\nkind = \"pagemap\"\n{}", set.replace("2e7", "5e4"))), &mut |_| {}).unwrap();
    assert_eq!((p.tasks_refused, p.tasks[2].jobs), (0, 300));
}

/// `host.logical_pages`: the workload and the preconditioning fill stay in
/// the first pages, so the flash keeps less data and collects less; a limit
/// past what the FTL exports names the key.
#[test]
fn the_host_can_use_part_of_the_logical_space() {
    let text = |limit: &str| {
        format!(
            "seed = 2\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"pagemap\"\n\
             over_provisioning = 0.05\n[host]\n{limit}\n[precondition]\nfill = true\n\
             [workload.generator]\nkind = \"uniform\"\nrequests = 40000\nread_fraction = 0.0\n"
        )
    };
    let all = ftlab_sim::run(&ftlab_sim::RunConfig::from_toml(&text(""), "test").unwrap(), &mut |_| {}).unwrap();
    let half_pages = all.logical_pages / 2;
    let half = ftlab_sim::run(
        &ftlab_sim::RunConfig::from_toml(&text(&format!("logical_pages = {half_pages}")), "test").unwrap(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((all.integrity.as_str(), half.integrity.as_str()), ("ok", "ok"));
    assert_eq!(half.logical_pages, all.logical_pages, "the FTL still exports all of it");
    let waf = |r: &ftlab_sim::Report| r.flash_pages_programmed as f64 / r.host_pages_written as f64;
    assert!(waf(&all) > 2.0 * waf(&half), "{} against {}", waf(&all), waf(&half));
    let too_many = text(&format!("logical_pages = {}", all.logical_pages + 1));
    match ftlab_sim::run(&ftlab_sim::RunConfig::from_toml(&too_many, "test").unwrap(), &mut |_| {}) {
        Err(ftlab_sim::SimError::Config(c)) => assert_eq!(c.key, "host.logical_pages"),
        other => panic!("{other:?}"),
    }
}

/// A progress bar's ETA needs the run's length before it starts: the fill,
/// the random overwrites and the workload's requests, or a trace's lines;
/// every progress report carries it, and the run dispatches exactly that many.
#[test]
fn a_run_knows_how_many_requests_it_will_dispatch() {
    let text = "seed = 2\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"pagemap\"\n\
                [precondition]\nfill = true\nrandom_overwrites = 0.5\n\
                [workload.generator]\nkind = \"uniform\"\nrequests = 3000\nread_fraction = 0.5\n";
    let config = ftlab_sim::RunConfig::from_toml(text, "test").unwrap();
    let sim = ftlab_sim::Simulation::new(&config).unwrap();
    let pages = sim.logical_pages();
    let expected = sim.expected_requests().unwrap();
    assert_eq!(expected, pages + pages / 2 + 3000);
    let (mut seen, mut last) = (None, 0);
    ftlab_sim::run(&config, &mut |p| {
        seen = p.expected;
        last = p.requests;
    })
    .unwrap();
    assert_eq!(seen, Some(expected));
    assert!(last <= expected && last + 4096 > expected, "{last} of {expected}");
    // A trace's lines, capped by max_requests.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace");
    std::fs::write(&trace, "0 0 0 8 0\n1000 0 8 8 0\n2000 0 16 8 1\n").unwrap();
    let text = format!(
        "seed = 2\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"pagemap\"\n\
         [workload]\ntrace = {:?}\ntrace_format = \"mqsim\"\n",
        trace.display().to_string()
    );
    let config = ftlab_sim::RunConfig::from_toml(&text, "test").unwrap();
    assert_eq!(ftlab_sim::Simulation::new(&config).unwrap().expected_requests(), Some(3));
}

#[test]
fn the_report_carries_whole_distributions_and_the_latency_log_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lat.log");
    // A filled device under mixed reads and writes: GC makes a tail.
    let text = format!(
        "[device]\nblocks_per_plane = 64\n[precondition]\nfill = true\n[metrics]\nlatency_log = \"{}\"\n\
         [workload]\npreset = \"zipf-mixed\"\nmax_requests = 20000\n",
        log.display()
    );
    let r = run(&config(&text), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok");
    for (name, d, s) in [("read", &r.latency.read, &r.read_us), ("write", &r.latency.write, &r.write_us)] {
        assert!(s.count > 0, "{name}");
        assert_eq!(d.bins.iter().map(|b| b[1]).sum::<u64>(), s.count, "{name}: every response in a bucket");
        assert_eq!(d.bins.last().unwrap()[0] as f64 / 1e3, s.max, "{name}: the last edge is the max");
        assert_eq!(d.percentiles.len(), 17, "{name}: fio's list");
        assert!(d.percentiles.windows(2).all(|w| w[0][1] <= w[1][1]), "{name}: percentiles never fall");
        assert!(d.bins.len() > 10, "{name}: a distribution, not a summary: {} buckets", d.bins.len());
    }
    assert!(r.latency.trim.bins.is_empty() && r.latency.trim.percentiles.is_empty(), "no trims, no distribution");

    // The log: one fio-layout line per measured request (the fill is not
    // measured), whose latencies are the report's.
    let text_log = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Vec<u64>> = text_log.lines().map(|l| l.split(", ").map(|f| f.parse().unwrap()).collect()).collect();
    assert_eq!(lines.len() as u64, r.requests);
    assert!(lines.iter().all(|l| l.len() == 6 && l[2] <= 1 && l[5] == 0), "fio's six columns");
    let reads: Vec<&Vec<u64>> = lines.iter().filter(|l| l[2] == 0).collect();
    assert_eq!(reads.len() as u64, r.read_us.count);
    let read_sum: u64 = reads.iter().map(|l| l[1]).sum();
    assert!((read_sum as f64 / reads.len() as f64 / 1e3 - r.read_us.mean).abs() < 1e-6, "the exact mean");
    let max_write = lines.iter().filter(|l| l[2] == 1).map(|l| l[1]).max().unwrap();
    assert_eq!(max_write as f64 / 1e3, r.write_us.max);
    assert!(lines.iter().all(|l| l[4] % 512 == 0 && l[3] > 0), "offsets and sizes of the requests");
    assert!(lines.last().unwrap()[0] as f64 <= r.sim_seconds * 1e3 + 1.0, "times since measuring started");

    // A log that cannot be created is an error naming the key, before the run.
    let bad = text.replace(&log.display().to_string(), &dir.path().join("missing/lat.log").display().to_string());
    let e = run(&config(&bad), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("metrics.latency_log") && e.contains("missing/lat.log"), "{e}");
}

#[test]
fn a_tagged_path_numbers_one_runs_log() {
    use ftlab_sim::config::tagged_path;
    assert_eq!(tagged_path(Path::new("out/lat.log"), "7"), Path::new("out/lat.7.log"));
    assert_eq!(tagged_path(Path::new("lat"), "dftl"), Path::new("lat.dftl"));
}

#[test]
fn a_compressed_trace_replay_estimates_its_length_as_it_goes() {
    use std::io::Write as _;
    // 60,000 requests at scattered addresses, gzip-compressed: its lines are
    // not counted up front, so the length is estimated from the share of
    // the file read.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.trace.gz");
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&trace).unwrap(), flate2::Compression::fast());
    let mut x = 12345u64;
    for i in 0..60_000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // 1 ms apart: the device keeps up, so the file is read as the
        // replay goes (a device falling behind pulls it all in at once).
        writeln!(gz, "{} 0 {} 8 {}", i * 1_000_000, (x >> 33) % 100_000 * 8, (x >> 20) & 1).unwrap();
    }
    gz.finish().unwrap();
    let text = format!(
        "seed = 2\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[workload]\ntrace = {:?}\n\
         trace_format = \"mqsim\"\n",
        trace.display().to_string()
    );
    let config = config(&text);
    assert_eq!(ftlab_sim::Simulation::new(&config).unwrap().expected_requests(), None, "not counted up front");
    let mut seen = Vec::new();
    let r = run(&config, &mut |p| seen.push((p.requests, p.expected))).unwrap();
    assert_eq!(r.requests, 60_000);
    assert!(seen.len() >= 10, "{}", seen.len());
    assert!(seen.iter().all(|(_, e)| e.is_some()), "an estimate at every step");
    let off = |e: Option<u64>| (e.unwrap() as f64 - 60_000.0).abs() / 60_000.0;
    let (first, half, last) = (seen[0], seen[seen.len() / 2], seen[seen.len() - 1]);
    assert!(first.1.unwrap() < 60_000, "an estimate, made before the file is read: {first:?}");
    assert!(off(half.1) < 0.25, "half way: {half:?}");
    assert!(off(last.1) < 0.05, "near the end: {last:?}");
    // Capped by max_requests.
    let capped = format!("{text}max_requests = 20000\n");
    let mut last = None;
    run(&self::config(&capped), &mut |p| last = p.expected).unwrap();
    assert!(last.unwrap() <= 20_000, "{last:?}");
}
