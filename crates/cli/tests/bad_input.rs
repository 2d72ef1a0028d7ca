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
