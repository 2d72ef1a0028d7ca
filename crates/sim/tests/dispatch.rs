//! Per-die earliest-deadline-first dispatch (`host.dispatch = "per-die-edf"`)
//! against dispatch by request.
#![allow(clippy::unwrap_used)]

use ftlab_ftl::pagemap::PageMapConfig;
use ftlab_ftl::{Flash, Ftl, FtlBuilder, FtlError, Hint, Io, Lpn, Purpose};
use ftlab_nand::{DieId, Nand, Payload, SimTime};
use ftlab_sim::config::{Dispatch, Host, RunConfig};
use ftlab_sim::source::Request;
use ftlab_sim::{run, Engine, Report, SimError};
use ftlab_workload::Op;

fn config(text: &str) -> RunConfig {
    RunConfig::from_toml(text, "test").unwrap()
}

fn run_with(text: &str, dispatch: &str) -> Report {
    let r =
        run(&config(&format!("{text}\n[host]\nqueue_depth = 8\ndispatch = \"{dispatch}\"\n")), &mut |_| {}).unwrap();
    assert_eq!(r.integrity, "ok", "{dispatch}");
    r
}

/// Two writers of several pages per period and a reader with a short period on
/// the four dies of small-slc, eight requests outstanding, no GC in the run.
const MIXED: &str = "seed = 5\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n\
    [ftl]\nkind = \"pagemap\"\nover_provisioning = 0.25\n[precondition]\nfill = true\n\
    [workload]\nduration_ms = 200\n\
    [[workload.task]]\nname = \"w\"\nwrite_pages = 16\nwrite_period_us = 4000\nlifetime_us = 100000\n\
    [[workload.task]]\nname = \"w2\"\nwrite_pages = 8\nwrite_period_us = 3000\nlifetime_us = 100000\n\
    [[workload.task]]\nname = \"r\"\nread_pages = 1\nread_period_us = 500\n";

#[test]
fn per_die_edf_serves_an_urgent_read_task_better_with_one_operation_of_blocking() {
    let by_request = run_with(MIXED, "request");
    let per_die = run_with(MIXED, "per-die-edf");
    for r in [&by_request, &per_die] {
        eprintln!(
            "{:?}: read max {} us, write max {} us, tasks {:?}, max read block {:?} us",
            r.max_read_block_us.map(|_| "per-die-edf"),
            r.read_us.max,
            r.write_us.max,
            r.tasks.iter().map(|t| (&t.name, t.jobs, t.deadline_misses, t.worst_response_us)).collect::<Vec<_>>(),
            r.max_read_block_us
        );
        assert_eq!(r.erases, 0, "no GC: a GC pass is one more non-preemptive chain of operations");
        assert!(r.host_pages_read > 0 && r.flash_ops.reads.get(Purpose::Host) == r.host_pages_read);
    }
    // The same jobs ran.
    let jobs = |r: &Report| r.tasks.iter().map(|t| t.jobs).collect::<Vec<_>>();
    assert_eq!(jobs(&by_request), jobs(&per_die));
    assert_eq!(by_request.requests, per_die.requests);
    let reader = |r: &Report| r.tasks[2].clone();
    let (a, b) = (reader(&by_request), reader(&per_die));
    assert!(b.deadline_misses <= a.deadline_misses, "{b:?} vs {a:?}");
    assert!(b.worst_response_us < a.worst_response_us, "{b:?} vs {a:?}");
    assert!(a.deadline_misses > 0, "the scenario must hurt the reader under dispatch by request: {a:?}");
    // A ready read waits at most for the operation its die is running: here a
    // program, and never more than an erase.
    assert_eq!(by_request.max_read_block_us, None, "reported with per-die dispatch only");
    let block = per_die.max_read_block_us.unwrap();
    let t = ftlab_nand::presets::preset("small-slc").unwrap().timing;
    assert!(block > 0.0 && block <= t.erase_ns as f64 / 1e3, "{block}");
}

#[test]
fn per_die_edf_is_deterministic_and_keeps_integrity() {
    let text = "seed = 9\n[device]\nblocks_per_plane = 64\n[precondition]\nfill = true\n\
                [workload]\npreset = \"zipf-mixed\"\nmax_requests = 20000\n";
    let a = run_with(text, "per-die-edf");
    let b = run_with(text, "per-die-edf");
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_eq!(a.requests, 20_000);
    let c = run_with(&text.replace("seed = 9", "seed = 10"), "per-die-edf");
    assert_ne!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&c).unwrap(), "the seed must matter");
    // Closed loop too, with GC running.
    let closed = "seed = 2\n[device]\nblocks_per_plane = 32\n[precondition]\nfill = true\n\
                  [workload.generator]\nkind = \"uniform\"\nread_fraction = 0.5\nrequests = 20000\n";
    let x = run_with(closed, "per-die-edf");
    let y = run_with(closed, "per-die-edf");
    assert_eq!(serde_json::to_string(&x).unwrap(), serde_json::to_string(&y).unwrap());
    assert!(x.erases > 0 && x.requests == 20_000);
}

#[test]
fn request_is_the_default_dispatch() {
    let text = "seed = 4\n[device]\nblocks_per_plane = 32\n[workload]\npreset = \"zipf-mixed\"\nmax_requests = 5000\n";
    let implicit = run(&config(&format!("{text}[host]\nqueue_depth = 8\n")), &mut |_| {}).unwrap();
    let explicit = run_with(text, "request");
    assert_eq!(serde_json::to_string(&implicit).unwrap(), serde_json::to_string(&explicit).unwrap());
    assert!(!serde_json::to_string(&implicit).unwrap().contains("max_read_block_us"));
    let per_die = run_with(text, "per-die-edf");
    assert!(serde_json::to_string(&per_die).unwrap().contains("max_read_block_us"));
    let e = RunConfig::from_toml("[host]\ndispatch = \"per-die\"\n", "t").unwrap_err().to_string();
    assert!(e.contains("per-die-edf"), "{e}");
}

/// The page-mapped schemes name the die a read will touch: the die its page was
/// programmed on, and nothing for a page never written or out of range.
#[test]
fn page_mapped_schemes_name_the_die_of_a_mapped_page() {
    let c = config("[device]\nblocks_per_plane = 16\n");
    for kind in ["pagemap", "lazy-rtgc", "waogc", "multilog", "telomere-sharp"] {
        let mut flash = Flash::new(Nand::new(&c.device.nand_config(1).unwrap()).unwrap());
        let builder = ftlab_ftl::registry::build(kind, &toml::Table::new()).unwrap();
        let mut ftl = builder.format(&mut flash.io(SimTime::ZERO)).unwrap();
        let die_of = |ftl: &dyn Ftl, lpn| ftl.placement().unwrap().die_of(Lpn(lpn));
        assert_eq!(die_of(&*ftl, 3), None, "{kind}: never written");
        for (i, lpn) in [3u32, 4, 5, 6, 7].into_iter().enumerate() {
            ftl.write(&mut flash.io(SimTime(i as u64)), Lpn(lpn), Payload::Token(1), &Hint::default()).unwrap();
        }
        let mut dies_seen = Vec::new();
        for (i, lpn) in [3u32, 4, 5, 6, 7].into_iter().enumerate() {
            // Each read at a time when every die is idle.
            let at = SimTime(1_000_000_000 + i as u64 * 1_000_000);
            let die = die_of(&*ftl, lpn).unwrap();
            ftl.read(&mut flash.io(at), Lpn(lpn)).unwrap();
            let dies = flash.nand().geometry().dies();
            let busy: Vec<u32> = (0..dies).filter(|&d| flash.nand().die_free_at(DieId(d)) > at).collect();
            assert_eq!(busy, [die.0], "{kind}: lpn {lpn}");
            dies_seen.push(die.0);
        }
        dies_seen.sort_unstable();
        dies_seen.dedup();
        assert!(dies_seen.len() > 1, "{kind}: writes are striped over the dies: {dies_seen:?}");
        assert_eq!(die_of(&*ftl, ftl.logical_pages()), None, "{kind}: out of range");
        assert_eq!(die_of(&*ftl, u32::MAX), None, "{kind}: out of range");
    }
}

/// Hides the die of every read from the dispatcher (no placement capability).
#[derive(Debug)]
struct Blind(Box<dyn Ftl>);
impl Ftl for Blind {
    fn name(&self) -> &'static str {
        "blind"
    }
    fn logical_pages(&self) -> u32 {
        self.0.logical_pages()
    }
    fn read(&mut self, io: &mut Io, lpn: Lpn) -> Result<Option<Payload>, FtlError> {
        self.0.read(io, lpn)
    }
    fn write(&mut self, io: &mut Io, lpn: Lpn, data: Payload, hint: &Hint) -> Result<(), FtlError> {
        self.0.write(io, lpn, data, hint)
    }
    fn ram_bytes(&self) -> u64 {
        0
    }
}

const PAGE: u64 = 4096;
/// small-slc: 4224 bytes over 40 MB/s, then 200 us; 25 us, then the transfer.
const PROGRAM_NS: u64 = 105_600 + 200_000;
const READ_NS: u64 = 25_000 + 105_600;

fn request(arrival: u64, op: Op, lpn: u64, deadline: u64, task: u32) -> Result<Request, SimError> {
    Ok(Request {
        arrival,
        op,
        offset: lpn * PAGE,
        len: PAGE as u32,
        deadline: Some(deadline),
        task: Some(task),
        expiry: None,
    })
}

/// One die: three one-page writes (deadline 10 ms) arrive at 0, a read of a
/// written page (deadline `read_deadline`) 1 us later, eight requests
/// outstanding. Returns the engine after the run and the read's response (ns).
fn one_die(dispatch: Dispatch, read_deadline: u64, blind: bool) -> (Engine, u64) {
    let c = config("[device]\nchannels = 1\nways = 1\nblocks_per_plane = 16\n");
    let mut flash = Flash::new(Nand::new(&c.device.nand_config(1).unwrap()).unwrap());
    let pagemap = PageMapConfig::default().format(&mut flash.io(SimTime::ZERO)).unwrap();
    let ftl: Box<dyn Ftl> = if blind { Box::new(Blind(pagemap)) } else { pagemap };
    let host = Host { queue_depth: 8, closed: false, time_scale: 1.0, idle_threshold_ns: u64::MAX, reorder_window: 16 };
    let mut engine = Engine::new(flash, ftl, host, ftlab_nand::StoreKind::Token, None);
    let fill = vec![request(0, Op::Write, 100, 0, 0)];
    engine.drive_closed(&mut fill.into_iter(), host, &mut |_| {}).unwrap();
    engine.set_dispatch(dispatch);
    engine.set_tasks(vec!["writer".into(), "reader".into()]);
    engine.start_measuring(false);
    let start = engine.busy_until();
    let reqs = vec![
        request(0, Op::Write, 1, 10_000_000, 0),
        request(0, Op::Write, 2, 10_000_000, 0),
        request(0, Op::Write, 3, 10_000_000, 0),
        request(1_000, Op::Read, 100, read_deadline, 1),
    ];
    engine.drive(&mut reqs.into_iter(), start, true, &mut |_| {}).unwrap();
    assert_eq!(engine.verify_all().unwrap(), 0);
    let m = &engine.measured;
    assert_eq!((m.pages_written, m.pages_read), (3, 1));
    let read = (m.read.summary().max * 1e3).round() as u64;
    (engine, read)
}

#[test]
fn a_read_waits_for_the_program_its_die_is_running_not_for_the_queued_ones() {
    // By request the three programs are reserved on the die before the read
    // arrives, and it waits for all of them.
    let (by_request, read) = one_die(Dispatch::Request, 1_000_000, false);
    assert_eq!(read, 3 * PROGRAM_NS + READ_NS - 1_000);
    assert_eq!(by_request.measured.tasks[1].deadline_misses, 1);
    assert_eq!(by_request.measured.max_read_block_ns, None);
    // Per die, only the first program is running when the read becomes ready;
    // the read's deadline is earlier than the other writes', so it goes next.
    let (per_die, read) = one_die(Dispatch::PerDieEdf, 1_000_000, false);
    assert_eq!(read, PROGRAM_NS + READ_NS - 1_000);
    assert_eq!(per_die.measured.tasks[1].deadline_misses, 0);
    assert_eq!(per_die.measured.max_read_block_ns, Some(PROGRAM_NS - 1_000));
    // The writes complete one program after another either way.
    assert_eq!((per_die.measured.write.summary().max * 1e3).round() as u64, 3 * PROGRAM_NS + READ_NS);
}

#[test]
fn per_die_order_is_by_deadline_not_by_operation() {
    // A read whose deadline is later than the queued writes' waits for them.
    let (engine, read) = one_die(Dispatch::PerDieEdf, 20_000_000, false);
    assert_eq!(read, 3 * PROGRAM_NS + READ_NS - 1_000);
    // It was blocked only by the program running when it became ready; the
    // other two were chosen ahead of it by deadline.
    assert_eq!(engine.measured.max_read_block_ns, Some(PROGRAM_NS - 1_000));
}

#[test]
fn a_read_whose_die_is_unknown_is_issued_at_once() {
    // Issued when ready, it queues on the die behind the one program reserved
    // there (writes are issued only to free dies), and no blocking is reported.
    let (engine, read) = one_die(Dispatch::PerDieEdf, 1_000_000, true);
    assert_eq!(read, PROGRAM_NS + READ_NS - 1_000);
    assert_eq!(engine.measured.max_read_block_ns, None);
}
