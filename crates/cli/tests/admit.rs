//! Runs `ftlab admit` as a user would.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use serde_json::Value;

/// Table 3 of `000_ffe2fafb22bcad8e.txt` (periods in ms), striped over 16 chips.
const TABLE_3: &str = r#"
granularity = 16
[[task]]
name = "tau0"
read_pages = 16
read_period_ms = 20
write_pages = 16
write_period_ms = 80
lifetime_ms = 20000
[[task]]
name = "tau1"
read_pages = 8
read_period_ms = 20
write_pages = 16
write_period_ms = 40
lifetime_periods = 33
[[task]]
name = "tau2"
read_pages = 16
read_period_ms = 20
write_pages = 16
write_period_ms = 40
lifetime_periods = 330
[[task]]
name = "tau3"
write_pages = 16
write_period_ms = 40
lifetime_periods = 990
[[task]]
name = "tau4"
write_pages = 11
write_period_ms = 40
lifetime_periods = 1980
[[task]]
name = "tau5"
write_pages = 5
write_period_ms = 40
lifetime_periods = 1980
"#;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

fn table3_file(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("table3.toml");
    std::fs::write(&path, TABLE_3).unwrap();
    path.display().to_string()
}

fn json(args: &[&str]) -> Value {
    let out = ftlab().args(args).output().unwrap();
    assert!(out.status.success(), "ftlab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs and expects exit status 2 with one `error:` line; returns it.
fn usage_error(args: &[&str]) -> String {
    let out = ftlab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "ftlab {args:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: "), "{err}");
    err
}

fn refused(v: &Value) -> Vec<(String, String)> {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["admitted"] == false)
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t["refused_by"].as_str().unwrap().to_owned()))
        .collect()
}

#[test]
fn table_3_sip_and_sharp_as_in_section_6_3() {
    let dir = tempfile::tempdir().unwrap();
    let file = table3_file(&dir);
    let sip = json(&["admit", &file, "--chip", "cosmos-openssd", "--policy", "sip", "--format", "json"]);
    assert_eq!(refused(&sip), [("tau5".to_owned(), "storage".to_owned())]);
    assert_eq!(sip["tasks"][5]["excess"], 32.0);
    assert_eq!((sip["storage_needed"].as_u64(), sip["storage_available"].as_f64()), (Some(304), Some(336.0)));
    assert_eq!(sip["storage_unit"], "blocks");

    let sharp = json(&["admit", &file, "--chip", "cosmos-openssd", "--format", "json"]);
    assert_eq!(sharp["policy"], "sharp");
    assert_eq!((sharp["admitted"].as_u64(), sharp["refused"].as_u64()), (Some(6), Some(0)));
    assert_eq!(sharp["storage_needed"], 320);
    assert_eq!(sharp["partitions"][2], serde_json::json!(["tau4", "tau5"]));
    for key in ["device", "lambda", "waf", "throughput_load"] {
        assert!(sharp.get(key).is_some(), "{key}");
    }
    for key in ["name", "admitted", "refused_by", "storage_needed", "throughput_load", "excess"] {
        assert!(sharp["tasks"][0].get(key).is_some(), "{key}");
    }
}

/// Section 6.3: WAO-GC refuses tau3-tau5 on the board. With the preset's
/// assumed 3.8 ms erase only tau5 is refused (storage); the paper's verdict
/// needs t_e in (6.37, 8.07] ms (Eq. 20 with Eq. 25), which `--erase-us` tests.
#[test]
fn waogc_on_table_3_follows_the_erase_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = table3_file(&dir);
    let waogc = |extra: &[&str]| {
        json(&[&["admit", &file, "--chip", "cosmos-openssd", "--policy", "waogc", "-f", "json"], extra].concat())
    };
    assert_eq!(refused(&waogc(&[])), [("tau5".to_owned(), "storage".to_owned())]);
    let paper: Vec<(String, String)> =
        ["tau3", "tau4", "tau5"].iter().map(|t| ((*t).to_owned(), "throughput".to_owned())).collect();
    for (us, verdict) in [("6360", false), ("6370", true), ("7000", true), ("8060", true), ("8080", false)] {
        assert_eq!(refused(&waogc(&["--erase-us", us])) == paper, verdict, "t_e {us} us");
    }
    let out = ftlab()
        .args(["admit", &file, "--chip", "cosmos-openssd", "--policy", "waogc", "--erase-us", "7000"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("t_e 7000 us"), "{text}");
    for bad in ["0", "nan", "1e12"] {
        let err = usage_error(&["admit", &file, "--chip", "cosmos-openssd", "--erase-us", bad]);
        assert!(err.contains("--erase-us must be a positive erase time"), "{err}");
    }
    // With the only times the paper prints (its 1 TB SSD: t_r 0.2, t_w 0.7, t_e
    // 2.7 ms) WAO-GC admits all six; the overrides reach the test.
    let ssd_times = waogc(&["--read-us", "200", "--program-us", "700", "--erase-us", "2700"]);
    assert!(refused(&ssd_times).is_empty(), "{ssd_times}");
    let slow_reads = waogc(&["--read-us", "3000", "--erase-us", "5000"]);
    // At t_e 5 ms and the preset's t_r, t_w only tau5 is refused; a read or a
    // program of 3 ms refuses tau2 (reads) or tau4 (programs) as well.
    assert_eq!(refused(&waogc(&["--erase-us", "5000"])), [("tau5".to_owned(), "throughput".to_owned())]);
    assert!(refused(&slow_reads).iter().any(|(t, _)| t == "tau2"), "t_r is applied: {slow_reads}");
    let slow_programs = waogc(&["--program-us", "3000", "--erase-us", "5000"]);
    assert!(refused(&slow_programs).iter().any(|(t, _)| t == "tau4"), "t_w is applied: {slow_programs}");
    for (flag, what) in [("--read-us", "read"), ("--program-us", "program")] {
        let err = usage_error(&["admit", &file, "--chip", "cosmos-openssd", flag, "0"]);
        assert!(err.contains(&format!("{flag} must be a positive {what} time")), "{err}");
    }
}

#[test]
fn table_output_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let file = table3_file(&dir);
    let out = dir.path().join("out.txt");
    ftlab()
        .args(["admit", &file, "--chip", "cosmos-openssd", "--policy", "sip", "--over-provisioning", "0.1"])
        .args(["--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("lambda 0.9000"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("tau4") && l.contains("refused") && l.contains("storage")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("tau5") && l.contains("admitted")), "{text}");
    assert!(text.contains("admitted 5 of 6; storage 256 of 302.4 blocks"), "{text}");

    let big = json(&["admit", &file, "--chip", "cosmos-openssd", "--blocks", "10000", "--policy", "sip", "-f", "json"]);
    assert_eq!(big["refused"], 0);
    let wao = json(&["admit", &file, "--chip", "cosmos-openssd", "--policy", "waogc", "-f", "json"]);
    assert_eq!(wao["storage_unit"], "pages");
    assert_eq!(wao["lambda"], 255.0 * 2.0 / (3.0 * 256.0));
    let ml = json(&[
        "admit",
        &file,
        "--chip",
        "cosmos-openssd",
        "--policy",
        "multilog",
        "--over-provisioning",
        "0.3",
        "--multilog-workload",
        "zipf",
        "-f",
        "json",
    ]);
    assert_eq!(ml["waf"], 1.5);
}

#[test]
fn generated_sets_are_reproducible() {
    let args = ["admit", "--generate", "30", "--storage-util", "0.5", "--throughput-util", "0.4", "--seed", "9"];
    let a = json(&[&args[..], &["--chip", "telomere-1tb-ssd", "--over-provisioning", "0.1", "-f", "json"]].concat());
    let b = json(&[&args[..], &["--chip", "telomere-1tb-ssd", "--over-provisioning", "0.1", "-f", "json"]].concat());
    assert_eq!(a, b);
    assert_eq!(a["tasks"].as_array().unwrap().len(), 30);
    assert_eq!(a["tasks"][0]["name"], "tau00");
    let waogc = json(&[&args[..], &["--chip", "telomere-1tb-ssd", "--policy", "waogc", "-f", "json"]].concat());
    assert_eq!(waogc["lambda"], 381.0 / 512.0);
}

#[test]
fn bad_input_exits_2_with_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let file = table3_file(&dir);
    let err = usage_error(&["admit", &file, "--chip", "nope"]);
    assert!(err.contains("unknown chip `nope`") && err.contains("cosmos-openssd"), "{err}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[task]]\nname = \"cam\"\nwrite_pages = 4\nlifetime_ms = 100\n").unwrap();
    let err = usage_error(&["admit", bad.to_str().unwrap(), "--chip", "cosmos-openssd"]);
    assert_eq!(err, "error: task `cam`: write_period_ms is missing: give the period in milliseconds\n");
    let err = usage_error(&["admit", "/no/such/file.toml", "--chip", "cosmos-openssd"]);
    assert!(err.contains("cannot read /no/such/file.toml"), "{err}");
    let err = usage_error(&["admit", &file, "--chip", "cosmos-openssd", "--policy", "multilog"]);
    assert!(err.contains("alpha >= 0.10"), "{err}");
    let err = usage_error(&["admit", &file, "--chip", "cosmos-openssd", "--over-provisioning", "1.5"]);
    assert!(err.contains("over_provisioning is 1.5"), "{err}");
    let err = usage_error(&["admit", "--generate", "5", "--storage-util", "0.5", "--chip", "cosmos-openssd"]);
    assert!(err.contains("--throughput-util"), "{err}");
    let err = usage_error(&[
        "admit",
        "--generate",
        "5",
        "--storage-util=-1",
        "--throughput-util",
        "0.5",
        "--chip",
        "cosmos-openssd",
    ]);
    assert!(err.contains("storage utilization is -1"), "{err}");
    usage_error(&["admit", &file, "--generate", "5", "--chip", "cosmos-openssd"]);
}

#[test]
fn a_writer_whose_data_lives_no_period_is_refused_at_validation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zero.toml");
    std::fs::write(&file, "[[task]]\nname = \"log\"\nwrite_pages = 4\nwrite_period_ms = 10\nlifetime_periods = 0\n")
        .unwrap();
    let err = usage_error(&["admit", file.to_str().unwrap(), "--chip", "cosmos-openssd"]);
    assert!(
        err.starts_with("error: task `log`: lifetime_periods is 0") && err.contains("lifetime_periods >= 1"),
        "{err}"
    );
}

#[test]
fn a_generated_set_too_large_is_refused_before_it_is_drawn() {
    let err = usage_error(&[
        "admit",
        "--generate",
        "1000000000",
        "--storage-util",
        "0.5",
        "--throughput-util",
        "0.5",
        "--chip",
        "cosmos-openssd",
    ]);
    assert!(err.contains("number of tasks is 1000000000: give at most 10000 tasks"), "{err}");
}

#[test]
fn long_help_documents_the_json_fields() {
    let out = ftlab().args(["admit", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for field in ["storage_unit", "storage_available", "refused_by", "excess", "partitions", "lifetime_periods"] {
        assert!(help.contains(field), "{field} missing from --help");
    }
}

/// `--per-chip`: three tasks striped over 2 of small-slc's 4 chips pass Eq. 20;
/// laid round robin, the third shares chips 0-1 with the first and overloads
/// them, so the chip test refuses it (JSON `refused_by` "chip", `chip` 0), as
/// the telomere FTLs would.
#[test]
fn per_chip_refuses_a_stripe_that_overloads_its_chips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("narrow.toml");
    let task = |n: &str| {
        format!(
            "[[task]]\nname = \"{n}\"\nwrite_pages = 16\nwrite_period_ms = 6\nlifetime_periods = 10\ngranularity = 2\n"
        )
    };
    std::fs::write(&path, [task("a"), task("b"), task("c")].concat()).unwrap();
    let path = path.display().to_string();
    let paper = json(&["admit", &path, "--chip", "small-slc", "--policy", "sip", "-f", "json"]);
    assert_eq!(paper["admitted"], 3, "{paper}");
    assert!(paper["chip_check"].is_null());
    let placed = json(&["admit", &path, "--chip", "small-slc", "--policy", "sip", "--per-chip", "-f", "json"]);
    assert_eq!(placed["admitted"], 2, "{placed}");
    let c = &placed["tasks"][2];
    assert_eq!((c["refused_by"].as_str(), c["chip"].as_u64()), (Some("chip"), Some(0)), "{c}");
    assert!(c["excess"].as_f64().unwrap() > 0.0);
    assert!(placed["chip_check"]["channel_wait_ns"].as_u64().unwrap() > 0);
    let out = ftlab().args(["admit", &path, "--chip", "small-slc", "--policy", "sip", "--per-chip"]).output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.lines().any(|l| l.starts_with("c ") && l.contains("chip") && l.contains("(chip 0)")), "{table}");
}
