//! Workload input that cannot give a trustworthy run is an error naming the input,
//! never a silent number: a trace that yields nothing, times beyond the 64-bit ns
//! clock (in the trace, after time_scale, or after the start offset).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use ftlab_nand::{Nand, SimTime};
use ftlab_sim::config::{Host, RunConfig};
use ftlab_sim::source::Request;
use ftlab_sim::{run, Engine, SimError};
use ftlab_workload::Op;

fn trace(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn run_trace(path: &std::path::Path, format: &str, extra: &str) -> Result<ftlab_sim::Report, SimError> {
    let text = format!("[workload]\ntrace = \"{}\"\ntrace_format = \"{format}\"\n{extra}", path.display());
    run(&RunConfig::from_toml(&text, "test").unwrap(), &mut |_| {}).map_err(cause)
}

/// The error that stopped a run (a run stopped mid-way carries its report too).
fn cause(e: SimError) -> SimError {
    match e {
        SimError::Stopped { error, report } => {
            assert_eq!(report.error.as_deref(), Some(error.to_string().as_str()));
            *error
        }
        e => e,
    }
}

#[test]
fn a_trace_read_in_the_wrong_format_is_an_error_not_an_empty_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = trace(&dir, "hm0.csv", "1000,hm,0,Write,0,4096,1\n1010,hm,0,Read,0,4096,1\n");
    let e = run_trace(&csv, "blkparse", "").unwrap_err();
    assert_eq!(e.kind(), ftlab_ftl::ErrorKind::Invalid, "bad input, not a device failure");
    assert!(matches!(e, SimError::Trace(ftlab_workload::TraceError::NoRequests { lines: 2, .. })), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("hm0.csv") && msg.contains("blkparse") && msg.contains("2 lines"), "{msg}");
    let empty = trace(&dir, "empty.trace", "");
    let msg = run_trace(&empty, "mqsim", "").unwrap_err().to_string();
    assert!(msg.contains("empty.trace: no request in 0 lines"), "{msg}");
    // The same file in its own format replays.
    assert_eq!(run_trace(&csv, "msr", "").unwrap().requests, 2);
}

#[test]
fn a_trace_whose_requests_the_address_mode_drops_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(&dir, "dev0.trace", "0 0 0 8 0\n1000 0 8 8 1\n");
    let e = run_trace(&t, "mqsim", "address = \"device:3\"\n").unwrap_err();
    assert!(matches!(e, SimError::NoRequests { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("dev0.trace") && msg.contains("2 requests") && msg.contains("device:3"), "{msg}");
    assert_eq!(run_trace(&t, "mqsim", "address = \"device:0\"\n").unwrap().requests, 2);
}

#[test]
fn an_arrival_beyond_the_clock_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(&dir, "far.trace", &format!("0 0 0 8 0\n1000 0 8 8 0\n{} 0 16 8 0\n", u64::MAX));
    let e = run_trace(&t, "mqsim", "").unwrap_err();
    assert!(matches!(e, SimError::TimeOverflow { .. }), "{e}");
    assert!(e.to_string().contains("far.trace:3: "), "{e}");
    // Scaling can overflow too: 1.9e18 ns x 10 is beyond 2^64.
    let t = trace(&dir, "scaled.trace", "0 0 0 8 0\n1900000000000000000 0 8 8 0\n");
    let e = run_trace(&t, "mqsim", "[host]\ntime_scale = 10.0\n").unwrap_err();
    assert!(matches!(e, SimError::TimeOverflow { .. }), "{e}");
    assert!(e.to_string().contains("scaled.trace:2: ") && e.to_string().contains("time_scale"), "{e}");
    assert_eq!(run_trace(&t, "mqsim", "[host]\ntime_scale = 1e-9\n").unwrap().requests, 2);
}

#[test]
fn a_time_scale_that_pushes_generated_arrivals_beyond_the_clock_is_an_error() {
    let text = |scale: &str| {
        format!(
            "[host]\ntime_scale = {scale}\n[workload.generator]\nkind = \"uniform\"\nrequests = 3\n\
             arrival = {{ kind = \"fixed\", interval_ns = 1000000 }}\n"
        )
    };
    let e = cause(run(&RunConfig::from_toml(&text("1e14"), "test").unwrap(), &mut |_| {}).unwrap_err());
    assert!(matches!(e, SimError::TimeOverflow { .. }), "{e}");
    assert!(e.to_string().starts_with("generated request: time 1000000 ns x time_scale"), "{e}");
    let r = run(&RunConfig::from_toml(&text("1e3"), "test").unwrap(), &mut |_| {}).unwrap();
    assert_eq!(r.requests, 3);
}

#[test]
fn an_arrival_the_offset_pushes_beyond_the_clock_is_an_error() {
    let config = RunConfig::from_toml("[device]\nblocks_per_plane = 16\n", "test").unwrap();
    let nand = Nand::new(&config.device.nand_config(1).unwrap()).unwrap();
    let mut flash = ftlab_ftl::Flash::new(nand);
    let ftl =
        ftlab_ftl::FtlBuilder::format(&ftlab_ftl::pagemap::PageMapConfig::default(), &mut flash.io(SimTime::ZERO))
            .unwrap();
    let host =
        Host { queue_depth: 1, closed: false, time_scale: 1.0, idle_threshold_ns: 1_000_000, reorder_window: 16 };
    let mut engine = Engine::new(flash, ftl, host, ftlab_nand::StoreKind::Token, None);
    let write = |arrival| {
        Ok(Request { arrival, op: Op::Write, offset: 0, len: 4096, deadline: None, task: None, expiry: None })
    };
    let reqs: Vec<Result<Request, SimError>> = vec![write(u64::MAX - 10)];
    let e = engine.drive(&mut reqs.into_iter(), 100, false, &mut |_| {}).unwrap_err();
    assert!(matches!(e, SimError::TimeOverflow { .. }), "{e}");
    assert!(e.to_string().contains(&(u64::MAX - 10).to_string()), "{e}");
}
