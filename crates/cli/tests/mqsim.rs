//! `ftlab mqsim`: MQSim's XML files run end to end, written configs run again
//! with `ftlab run`, bad files refused with one clear error.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/tests/data/mqsim").join(p)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn mqsim_scenarios_run_with_flow_tables_and_warnings() {
    let (ssd, workload) = (data("ssdconfig.xml"), data("workload.xml"));
    let dir = tempfile::tempdir().unwrap();
    let out = ftlab()
        .args(["mqsim", "-q", "--ssd", s(&ssd), "--workload", s(&workload), "--scenario", "1"])
        .args(["--blocks-per-plane", "32", "--requests", "2000", "--slowdown", "--out-dir", s(dir.path())])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("scenario 1: the 2 alone runs for the flows' slowdowns took"), "{stderr}");
    assert!(stdout.contains("slowdown") && stdout.contains("flow-1") && stdout.contains("flow-2"), "{stdout}");
    assert!(stdout.contains("not modelled"), "{stdout}");
    assert!(stderr.contains("warning: scenario 1: not modelled: Ideal_Mapping_Table=false"), "{stderr}");
    // The written config runs again as an ftlab config, to the same flows.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("scenario-1.json")).unwrap()).unwrap();
    let again = ftlab().args(["run", "-q", "-f", "json", s(&dir.path().join("scenario-1.toml"))]).output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(json["flows"], again["flows"]);
    assert_eq!(json["flows"][0]["requests"], 2000);
    assert!(json["flows"][1]["slowdown"].as_f64().unwrap() > 0.0);
    assert!(json["unsupported"].as_array().unwrap().len() >= 5);
    // Without --slowdown: no alone runs, no slowdowns, the same shared run.
    let plain = ftlab()
        .args(["mqsim", "-q", "-f", "json", "--ssd", s(&ssd), "--workload", s(&workload), "--scenario", "1"])
        .args(["--blocks-per-plane", "32", "--requests", "2000"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(plain.stderr).unwrap();
    assert!(plain.status.success() && !stderr.contains("alone runs"), "{stderr}");
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(plain[0]["flows"][1]["slowdown"].is_null(), "{}", plain[0]["flows"]);
    assert_eq!(plain[0]["flows"][0]["response_us"], json["flows"][0]["response_us"]);
}

#[test]
fn bad_mqsim_input_is_one_clear_error() {
    let fail = |args: &[&str]| {
        let out = ftlab().args(args).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        stderr
    };
    let (ssd, workload) = (data("ssdconfig.xml"), data("workload.xml"));
    let e = fail(&["mqsim", "--ssd", s(&workload), "--workload", s(&ssd)]);
    assert!(e.contains("error: ") && e.contains("not <Execution_Parameter_Set>"), "{e}");
    let e = fail(&["mqsim", "--ssd", s(&ssd), "--workload", s(&workload), "--scenario", "4"]);
    assert!(e.contains("--scenario 4") && e.contains("scenarios 1 to 3"), "{e}");
    let broken = data("fast18/backend-contention/workload-backend-contention-flow-1.xml");
    let e = fail(&["mqsim", "--ssd", s(&ssd), "--workload", s(&broken)]);
    assert!(e.contains("flow-1.xml:69") && e.contains("merge-conflict markers"), "{e}");
}

/// What MQSim serves by the sector and ftlab by the page is counted per flow,
/// by name, in the table and the JSON (MQSim's tpcc trace: unaligned
/// addresses, partial writes, reads of data never written).
#[test]
fn mqsim_runs_list_what_is_served_by_the_page_per_flow() {
    let (ssd, workload) = (data("ssdconfig.xml"), data("workload.xml"));
    let run = |format: &str| {
        let out = ftlab()
            .args(["mqsim", "-q", "-f", format, "--ssd", s(&ssd), "--workload", s(&workload), "--scenario", "3"])
            .args(["--blocks-per-plane", "32", "--requests", "3000"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let table = run("table");
    let line = table.lines().find(|l| l.trim_start().starts_with("flow-1:")).unwrap_or_else(|| panic!("{table}"));
    for what in ["requests not page-aligned", "pages written in part", "page reads of data never written"] {
        assert!(line.contains(what), "{line}");
    }
    assert!(!table.contains("alone mean"), "no alone runs without --slowdown: {table}");
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let f = &json[0]["flows"][0];
    let n = |k: &str| f[k].as_u64().unwrap();
    assert!(n("unaligned_requests") > 1000 && n("unaligned_requests") < n("requests"), "{f}");
    assert!(n("partial_page_writes") > 0 && n("unwritten_page_reads") > 0, "{f}");
}
