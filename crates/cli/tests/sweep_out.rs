//! `ftlab sweep` beyond its rows: `base` from a file, `[[case]]`s, `[[table]]`
//! files and line plots, and their errors.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use assert_cmd::Command;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

const RUN: &str = "seed = 2\n[device]\nblocks_per_plane = 32\n[metrics]\ninterval_ms = 5\n\
    [workload.generator]\nkind = \"uniform\"\nrequests = 3000\n";

const SWEEP: &str = r#"base = "run.toml"
[[case]]
name = "pm"
set = { "ftl.kind" = "pagemap" }
[[case]]
name = "ppl"
set = { ftl = { kind = "pure-page-level" } }
[grid]
seed = [1, 2]
[[table]]
file = "per-run.csv"
columns = ["ftl=case", "seed", "waf", "integrity"]
[[table]]
file = "series.csv"
each = "throughput"
dialect = "python"
columns = ["ftl=case", "seed", "t_s=throughput.t_s", "throughput.write_pages_per_s"]
[[plot]]
kind = "lines"
file = "write.svg"
each = "throughput"
x = "throughput.t_s"
y = "throughput.write_pages_per_s"
"#;

fn setup(dir: &Path, sweep: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("run.toml"), RUN).unwrap();
    let p = dir.join("s.toml");
    std::fs::write(&p, sweep).unwrap();
    p
}

fn failure(sweep: &Path) -> String {
    let out =
        ftlab().args(["sweep", "-q", sweep.to_str().unwrap(), "-o"]).arg(sweep.with_extension("csv")).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("error: ") && !stderr.contains("panicked"), "{stderr}");
    assert!(!sweep.with_extension("csv").exists(), "nothing may run before the sweep file is valid");
    stderr
}

#[test]
fn cases_run_with_every_grid_point_and_write_tables_and_line_plots_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = setup(dir.path(), SWEEP);
    let outputs = |name: &str| {
        let out = dir.path().join(name);
        ftlab()
            .args(["sweep", "-q", "-j", "2", sweep.to_str().unwrap(), "--out-dir"])
            .arg(&out)
            .arg("-o")
            .arg(out.join("rows.csv"))
            .assert()
            .success();
        // Rows stream out in completion order; the tables and plots are in run order.
        let mut files = ["rows.csv", "per-run.csv", "series.csv", "write.svg"]
            .map(|f| String::from_utf8(std::fs::read(out.join(f)).unwrap()).unwrap());
        let mut rows: Vec<&str> = files[0].lines().collect();
        rows.sort_unstable();
        files[0] = rows.join("\n");
        files
    };
    let first = outputs("a");
    assert!(first == outputs("b"), "a sweep's outputs are the same every time");
    let per_run = &first[1];
    let lines: Vec<&str> = per_run.lines().collect();
    assert_eq!(lines[0], "ftl,seed,waf,integrity");
    assert_eq!(lines.len(), 5, "{per_run}");
    assert!(lines[1].starts_with("pm,1,") && lines[4].starts_with("ppl,2,") && lines[4].ends_with(",ok"), "{per_run}");
    let series = &first[2];
    assert!(series.starts_with("ftl,seed,t_s,throughput.write_pages_per_s\r\npm,1,0.005,"), "{series}");
    assert!(series.lines().count() > 8 && series.contains("\r\nppl,2,"), "{series}");
    let svg = &first[3];
    assert!(svg.contains(">pm<") && svg.contains(">ppl<") && svg.matches("class=\"series\"").count() == 4, "{svg}");
    assert!(first[0].contains("run,case,seed,"), "{}", first[0]);
}

#[test]
fn a_bad_plot_or_table_key_is_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let bad_key = SWEEP.replace("y = \"throughput.write_pages_per_s\"", "y_lable = \"x\"");
    let e = failure(&setup(dir.path(), &bad_key));
    assert!(e.contains("[[plot]] 1") && e.contains("y_lable"), "{e}");
    let missing = SWEEP.replace("y = \"throughput.write_pages_per_s\"", "y = \"throughput.write_pagez\"");
    let e = failure(&setup(dir.path(), &missing));
    assert!(e.contains("plot `write.svg`") && e.contains("throughput.write_pagez"), "{e}");
    assert!(e.contains("throughput.write_pages_per_s"), "the error lists the fields there are: {e}");
    let column = SWEEP.replace("\"seed\", \"waf\"", "\"seed\", \"wafx\"");
    let e = failure(&setup(dir.path(), &column));
    assert!(e.contains("table `per-run.csv`") && e.contains("`wafx`"), "{e}");
    let each = SWEEP.replace("each = \"throughput\"\ndialect", "each = \"thruput\"\ndialect");
    let e = failure(&setup(dir.path(), &each));
    assert!(e.contains("\"thruput\"") && e.contains("rber_cdf"), "{e}");
    let kind = SWEEP.replace("kind = \"lines\"", "kind = \"pie\"");
    let e = failure(&setup(dir.path(), &kind));
    assert!(e.contains("kind = \"pie\""), "{e}");
    let twice = SWEEP.replace("name = \"ppl\"", "name = \"pm\"");
    let e = failure(&setup(dir.path(), &twice));
    assert!(e.contains("`pm`"), "{e}");
    let base = SWEEP.replace("base = \"run.toml\"", "base = \"nosuch.toml\"");
    let e = failure(&setup(dir.path(), &base));
    assert!(e.contains("nosuch.toml"), "{e}");
    let admit = SWEEP.replace(
        "set = { \"ftl.kind\" = \"pagemap\" }",
        "set = { \"ftl.kind\" = \"pagemap\" }\nadmit = { policy = \"waogc\" }",
    );
    let e = failure(&setup(dir.path(), &admit));
    assert!(e.contains("admit") && e.contains("no periodic tasks"), "{e}");
}
