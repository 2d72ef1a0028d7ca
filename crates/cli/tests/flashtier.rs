//! `ftlab flashtier`: FlashTier's SSC evaluation (003 Section 3.3) at CI size.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use predicates::prelude::*;

#[test]
fn writes_the_csv_and_the_plots() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("ftlab")
        .unwrap()
        .args(["flashtier", "--scale", "ci", "--ops", "3000", "--warmup", "2000", "-o"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("ssc-wb"));
    let csv = std::fs::read_to_string(dir.path().join("flashtier.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 15, "{csv}");
    assert!(lines[0].starts_with("workload,system,warmup_ops,ops,sim_s,ops_per_s,normalized_ops"));
    // No-Cache is its own baseline; every run passed the integrity check.
    assert!(lines[1].starts_with("fileserver,no-cache,2000,3000,"));
    assert!(lines[1].split(',').nth(6) == Some("1.0000"), "{}", lines[1]);
    for l in &lines[1..] {
        let cells: Vec<&str> = l.split(',').collect();
        assert_eq!(cells[19], "0", "integrity errors in {l}");
    }
    // waits.csv: each system's mean response split into disk and flash wait.
    let waits = std::fs::read_to_string(dir.path().join("waits.csv")).unwrap();
    let lines: Vec<&str> = waits.lines().collect();
    assert_eq!(lines[0], "workload,system,mean_latency_us,disk_wait_us,flash_wait_us,flash_share");
    assert_eq!(lines.len(), 1 + 15, "{waits}");
    for l in &lines[1..] {
        let cells: Vec<&str> = l.split(',').collect();
        let num = |i: usize| cells[i].parse::<f64>().unwrap();
        assert!((num(3) + num(4) - num(2)).abs() <= 1e-3 * num(2).max(1.0), "disk + flash is not the mean: {l}");
        if cells[1] == "no-cache" {
            assert_eq!(num(4), 0.0, "No-Cache waits for no flash: {l}");
        }
    }
    // The figures redraw from the CSV alone, byte for byte (--replot), and a
    // CSV that is not flashtier.csv is refused by name.
    let again = dir.path().join("again");
    Command::cargo_bin("ftlab")
        .unwrap()
        .args(["flashtier", "--replot"])
        .arg(dir.path().join("flashtier.csv"))
        .arg("-o")
        .arg(&again)
        .assert()
        .success();
    for f in ["throughput.svg", "latency.svg", "erases.svg"] {
        let (a, b) = (std::fs::read(dir.path().join(f)).unwrap(), std::fs::read(again.join(f)).unwrap());
        assert!(a == b && a.starts_with(b"<svg"), "{f} differs when redrawn");
    }
    Command::cargo_bin("ftlab")
        .unwrap()
        .args(["flashtier", "--replot"])
        .arg(dir.path().join("waits.csv"))
        .arg("-o")
        .arg(&again)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("waits.csv").and(predicate::str::contains("not a flashtier.csv")));
    for svg in ["throughput.svg", "latency.svg", "erases.svg"] {
        assert!(std::fs::read_to_string(dir.path().join(svg)).unwrap().contains("<svg"));
    }
}

/// `--ssc-consistency log`: ssc-metadata.csv has the SSC rows with their log
/// and checkpoint programs and a recovery that kept every dirty block.
#[test]
fn the_ssc_log_mode_writes_its_metadata() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("ftlab")
        .unwrap()
        .args(["flashtier", "--scale", "ci", "--ops", "3000", "--warmup", "2000", "--workloads", "varmail"])
        .args(["--ssc-consistency", "log", "-o"])
        .arg(dir.path())
        .assert()
        .success();
    let csv = std::fs::read_to_string(dir.path().join("ssc-metadata.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 2, "{csv}");
    assert!(lines[0].starts_with("workload,system,consistency,host_programs,map_programs,checkpoint_programs"));
    for l in &lines[1..] {
        let cells: Vec<&str> = l.split(',').collect();
        assert_eq!(cells[2], "log", "{l}");
        assert!(cells[4].parse::<u64>().unwrap() > 0 && cells[5].parse::<u64>().unwrap() > 0, "{l}");
        assert_eq!(cells[10], cells[11], "dirty blocks before the cut and after recovery: {l}");
    }
}

#[test]
fn refuses_a_bad_scale_and_an_unknown_workload() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, value) in [("--scale", "huge"), ("--workloads", "mailserver"), ("--ssc-consistency", "sometimes")] {
        Command::cargo_bin("ftlab")
            .unwrap()
            .args(["flashtier", flag, value, "-o"])
            .arg(dir.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(value));
    }
}
