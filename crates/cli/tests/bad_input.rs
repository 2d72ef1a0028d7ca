//! Bad input gets one clear error naming the input and the fix, or a report that
//! says what went wrong: never a panic, never silent numbers.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

/// Runs and expects failure with `code`; returns stderr, checked to be one clean error.
fn failure(args: &[&str], code: i32) -> String {
    let out = ftlab().args(args).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "ftlab {args:?}: {stderr}");
    assert!(stderr.starts_with("error: ") && stderr.lines().count() == 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn a_timing_beyond_an_hour_is_refused_naming_the_key() {
    let timing = "device.timing={read_ns=25000, read_oob_ns=25000, program_ns=9223372036854775807, \
                  erase_ns=1500000, channel_mb_per_s=40}";
    let e = failure(&["run", "-q", "--requests", "100", "--set", timing], 2);
    assert!(
        e.contains("device.timing.program_ns = 9223372036854775807 ns") && e.contains("at most 3600000000000 ns"),
        "{e}"
    );
    let e = failure(
        &["run", "-q", "--requests", "100", "--set", &timing.replace("program_ns=9223372036854775807", "program_ns=0")],
        2,
    );
    assert!(e.contains("device.timing.program_ns is 0"), "{e}");
}

#[test]
fn more_requests_than_a_generator_issues_is_refused_before_time_zero() {
    let e = failure(&["run", "--workload", "uniform-random-write", "--requests", "4000000"], 2);
    assert!(
        e.contains("workload.max_requests (--requests) = 4000000 is more than the 1000000 requests")
            && e.contains("uniform-random-write"),
        "{e}"
    );
    let generator = "workload.generator={kind=\"uniform\", requests=500}";
    let e = failure(&["run", "--set", generator, "--requests", "501"], 2);
    assert!(e.contains("more than the 500 requests the workload.generator (uniform)"), "{e}");
    // Without --requests, a short generator runs whole (the default cap does not apply).
    let out = ftlab().args(["run", "-q", "-f", "json", "--set", generator]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["requests"], 500);
}

#[test]
fn random_overwrites_are_bounded() {
    let e = failure(&["run", "--random-overwrites", "1e9"], 2);
    assert!(
        e.contains("precondition.random_overwrites = 1000000000 logical spaces") && e.contains("at most 100"),
        "{e}"
    );
}

/// A trace whose third request, its timestamp scaled by `--time-scale`, arrives
/// beyond the clock: the run stops there, mid-way.
fn far_future_trace(dir: &std::path::Path) -> String {
    let p = dir.join("far.trace");
    std::fs::write(&p, "0 0 100 8 0\n1000 0 200 8 0\n1500000 0 100 8 0\n").unwrap();
    p.to_str().unwrap().to_owned()
}

#[test]
fn a_run_stopped_mid_way_by_an_error_still_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let trace = far_future_trace(dir.path());
    let args = ["run", "-q", "--trace", &trace, "--trace-format", "mqsim", "--time-scale", "1e13"];
    let out = ftlab().args(args).args(["-f", "json"]).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains("far.trace:3: arrival"), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = r["error"].as_str().unwrap();
    assert!(error.contains("beyond") && stderr.contains(error), "{error}");
    // The engine reads a request ahead of serving the one before it (it needs
    // the next arrival), so the error stops the run after the first request.
    assert_eq!(r["requests"], 1, "the request before the bad line's predecessor completed");
    let out = ftlab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.lines().any(|l| l.trim_start().starts_with("error") && l.contains("far.trace:3")), "{table}");
    // A run that completes says so: `error` is null.
    let ok = ftlab().args(["run", "-q", "--trace", &trace, "--trace-format", "mqsim", "-f", "json"]).output().unwrap();
    assert!(ok.status.success());
    let r: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert!(r["error"].is_null(), "{}", r["error"]);
}

#[test]
fn a_sweep_row_of_a_stopped_run_has_its_numbers_and_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let trace = far_future_trace(dir.path());
    let sweep = dir.path().join("sweep.toml");
    let text = format!(
        "[base.workload]\ntrace = {trace:?}\ntrace_format = \"mqsim\"\n[grid]\n\"host.time_scale\" = [1.0, 1e13]\n"
    );
    std::fs::write(&sweep, text).unwrap();
    let out = ftlab().args(["sweep", sweep.to_str().unwrap(), "-q", "--format", "jsonl", "-j", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let mut rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    rows.sort_by_key(|r| r["run"].as_u64());
    assert!(rows[0]["error"].is_null() && rows[0]["requests"] == 3, "{}", rows[0]);
    assert!(rows[1]["error"].as_str().unwrap().contains("far.trace:3: arrival"), "{}", rows[1]);
    assert_eq!(rows[1]["requests"], 1, "{}", rows[1]);
}

#[test]
fn times_past_the_latest_simulated_time_are_refused() {
    let task = "workload.task=[{name=\"cam\", write_period_us=1e300, write_pages=1}]";
    let e = failure(&["run", "--set", task], 2);
    assert!(e.contains("task `cam`: write_period_us = 1e300 is past the latest simulated time"), "{e}");
    let task = "workload.task=[{name=\"cam\", write_period_us=1000.0, write_pages=1}]";
    let e = failure(&["run", "--set", task, "--set", "workload.duration_ms=1e300"], 2);
    assert!(e.contains("workload.duration_ms = 1e300 is past the latest simulated time"), "{e}");
}

#[test]
fn zero_requests_is_refused() {
    let e = failure(&["run", "--requests", "0"], 2);
    assert!(e.contains("workload.max_requests (--requests) = 0 runs nothing"), "{e}");
}

#[test]
fn janus_model_refuses_an_impossible_device_or_curve() {
    let e = failure(&["janus-model", "--blocks", "10", "--over-provisioned", "10"], 2);
    assert!(e.contains("--over-provisioned") && e.contains("--blocks"), "{e}");
    let e = failure(&["janus-model", "--locality", "0"], 2);
    assert!(e.contains("--locality"), "{e}");
}

/// Runs `ftlab ARGS` under an address-space limit of `kib` KiB (`ulimit -v`),
/// returning its exit code and stderr.
fn under_ulimit(kib: u64, args: &str) -> (Option<i32>, String) {
    let bin = assert_cmd::cargo::cargo_bin("ftlab");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" {args}"))
        .arg(bin)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn a_device_too_large_for_memory_is_refused_before_allocating() {
    // 2 TiB of 4 KiB pages needs about 8 GiB of tables: it aborted with
    // "memory allocation failed" under a limit, exit 134.
    let (code, e) = under_ulimit(3_000_000, "run -q --capacity-gib 2048 --requests 10");
    assert_eq!(code, Some(2), "{e}");
    assert!(
        e.starts_with("error: ")
            && e.contains("536870912 physical pages")
            && e.contains("8.0 GiB")
            && e.contains("ulimit -v")
            && e.contains("choose a smaller device.capacity_gib"),
        "{e}"
    );
    let (code, e) = under_ulimit(3_000_000, "run -q --blocks-per-plane 2000000 --requests 10");
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("choose a smaller device.blocks_per_plane"), "{e}");
    // A device that fits runs under the same limit.
    let (code, e) = under_ulimit(3_000_000, "run -q --capacity-gib 4 --requests 10");
    assert_eq!(code, Some(0), "{e}");
}

#[test]
fn values_outside_what_the_model_means_are_refused() {
    let e = failure(&["run", "-q", "--requests", "10", "--set", "metrics.interval_ms=1e-9"], 2);
    assert!(e.contains("metrics.interval_ms must be from 0.000001 (1 ns)"), "{e}");
    // A buffer larger than the device never wrote to flash: 0 s, 0.0 IOPS.
    let e = failure(&["run", "-q", "--requests", "1000", "--set", "device.write_buffer_pages=100000"], 2);
    assert!(e.contains("device.write_buffer_pages = 100000 is more than the 58982 logical pages"), "{e}");
    // Saturated every time at 3.7e9 s (a panic in a debug build).
    let e = failure(&["run", "-q", "--requests", "10", "--set", "device.host_mb_per_s=1e-300"], 2);
    assert!(e.contains("device.host_mb_per_s") && e.contains("from 0.001 to 1,000,000"), "{e}");
    let e = failure(&["bounds", "--chip", "small-slc", "--pages-per-block", "4294967295"], 2);
    assert!(e.contains("pages_per_block (pi) is 4294967295") && e.contains("at most 65536"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ft");
    let e = failure(&["flashtier", "--ops", "0", "--out", out.to_str().unwrap()], 2);
    assert!(e.contains("--ops 0 measures nothing"), "{e}");
    assert!(!out.exists(), "nothing written");
    // A hang: 10^9 grid steps.
    let e = failure(&["schedulability", "--sets", "1", "--step", "1e-9", "--tasks", "2"], 2);
    assert!(e.contains("more than the 10000") && e.contains("at least 0.0001"), "{e}");
    // A negative number reaches the check that names the key, not clap's
    // "unexpected argument".
    let e = failure(&["run", "--capacity-gib", "-1"], 2);
    assert!(e.contains("device.capacity_gib must be positive, got -1"), "{e}");
}

/// A file that is not there is a bad input with the same exit status (2)
/// whatever it was meant to be, and the message says which input it was.
#[test]
fn a_missing_input_file_exits_2_naming_it() {
    let e = failure(&["run", "-q", "--trace", "/nonexistent/t.csv", "--trace-format", "msr"], 2);
    assert!(e.contains("cannot read trace /nonexistent/t.csv"), "{e}");
    let e = failure(&["trace", "stats", "/nonexistent/t.csv", "--trace-format", "msr"], 2);
    assert!(e.contains("cannot read trace /nonexistent/t.csv"), "{e}");
    for args in [&["run", "/nonexistent/c.toml"][..], &["sweep", "/nonexistent/s.toml", "-o", "/dev/null"][..]] {
        let e = failure(args, 2);
        assert!(e.contains("cannot read") && e.contains("/nonexistent/"), "{e}");
    }
}
