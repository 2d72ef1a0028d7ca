//! Runs `ftlab schedulability` as a user would.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use serde_json::Value;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

#[test]
fn limits_of_section_6_1_on_the_1tb_ssd() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("fig9.svg");
    let out = ftlab()
        .args(["schedulability", "--policy", "sip,sharp,waogc", "--sets", "5", "--step", "0.02", "-f", "json"])
        .arg("--plot")
        .arg(&svg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rows: Value = serde_json::from_slice(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 6, "3 policies x 2 axes");
    let limit = |policy: &str, axis: &str| {
        let r = rows.iter().find(|r| r["policy"] == policy && r["axis"] == axis).unwrap();
        assert_eq!((r["granularity"].as_u64(), r["tasks"].as_u64()), (Some(64), Some(500)));
        r["max_util"].as_f64().unwrap()
    };
    // Section 6.1.5: SiP costs about 19% of lambda = 0.9, SharP about 6%; WAO-GC is
    // capped at 0.74 and refused on throughput near 38%.
    let (sip, sharp) = (limit("sip", "storage"), limit("sharp", "storage"));
    assert!((0.66..=0.76).contains(&sip), "{sip}");
    assert!((0.80..=0.88).contains(&sharp), "{sharp}");
    assert!(limit("waogc", "storage") <= 0.74);
    let wao = limit("waogc", "throughput");
    assert!((0.3..=0.46).contains(&wao), "{wao}");
    assert!(limit("sharp", "throughput") >= 0.83);
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("sharp storage") && svg.contains("waogc throughput"));
}

#[test]
fn csv_rows_per_granularity_and_bad_input() {
    let out = ftlab()
        .args(["schedulability", "--granularity", "1,64", "--axis", "storage", "--sets", "3", "--tasks", "50"])
        .args(["--step", "0.05", "-f", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "policy,axis,granularity,tasks,over_provisioning,max_util,first_failure,failed_by"
    );
    assert_eq!(lines.count(), 4);
    let err = ftlab().args(["schedulability", "--step", "0"]).assert().code(2).get_output().stderr.clone();
    assert!(String::from_utf8(err).unwrap().contains("grid step 0"));
    let err =
        ftlab().args(["schedulability", "--over-provisioning", "1.5"]).assert().code(2).get_output().stderr.clone();
    assert!(String::from_utf8(err).unwrap().contains("over_provisioning is 1.5"));
}

/// `--bandwidth-unit mib` reads Section 6.1.1's MB/s as 2^20 bytes (100 MB/s is
/// 3,200 pages of 32 KiB a second): more pages a millisecond, shorter periods,
/// a lower throughput limit than with 10^6-byte megabytes.
#[test]
fn bandwidth_unit_moves_the_throughput_limit() {
    let limit = |unit: &str| {
        let out = ftlab()
            .args(["schedulability", "--policy", "waogc", "--axis", "throughput", "--sets", "3", "--max", "0.5"])
            .args(["--bandwidth-unit", unit, "-f", "json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let rows: Value = serde_json::from_slice(&out).unwrap();
        rows[0]["max_util"].as_f64().unwrap()
    };
    let (mb, mib) = (limit("mb"), limit("mib"));
    assert!(mib < mb, "mib {mib} vs mb {mb}");
    assert!((0.36..=0.38).contains(&mib), "{mib}");
}
