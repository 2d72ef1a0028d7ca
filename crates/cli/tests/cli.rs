//! Runs the `ftlab` binary as a user would.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

/// A trace fixture the repository carries (see their README).
fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../workload/tests/fixtures")).join(name)
}

#[cfg(feature = "real-traces")]
#[path = "../../workload/tests/support/real_traces_dir.rs"]
mod real_traces_dir;

fn stdout_of(args: &[&str]) -> String {
    let out = ftlab().args(args).output().unwrap();
    assert!(out.status.success(), "ftlab {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn json_of(args: &[&str]) -> Value {
    serde_json::from_str(&stdout_of(args)).unwrap()
}

/// Runs and expects failure with `code`; returns stderr, checked to be one clean error.
fn failure(args: &[&str], code: i32) -> String {
    let out = ftlab().args(args).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "ftlab {args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
    stderr
}

#[test]
fn run_with_no_arguments_runs_the_default() {
    ftlab()
        .arg("run")
        .assert()
        .success()
        .stdout(predicate::str::contains("FTL pagemap on chip small-slc, workload skewed-random-write"))
        .stdout(predicate::str::contains("200000 (0 pages read, 200000 written"))
        .stdout(predicate::str::contains("WAF"))
        .stdout(predicate::str::contains("write amplification"))
        .stdout(predicate::str::is_match(r"(?m)^  integrity\s+ok").unwrap());
}

#[test]
fn run_table_shows_response_times_and_erases() {
    ftlab()
        .args(["run", "--requests", "20000", "--chip", "small-slc", "--blocks-per-plane", "64"])
        .assert()
        .success()
        .stdout(predicate::str::contains("20000 (0 pages read, 20000 written"))
        .stdout(predicate::str::is_match(r"write\s+20000\s+\d").unwrap())
        .stdout(predicate::str::contains("erases"))
        .stdout(predicate::str::is_match(r"(?m)^  integrity\s+ok").unwrap())
        .stdout(predicate::str::contains("the default without a config file").not());
}

#[test]
fn json_has_the_stable_fields() {
    let r = json_of(&["run", "--requests", "20000", "--blocks-per-plane", "32", "--format", "json"]);
    for field in [
        "ftl",
        "chip",
        "workload",
        "seed",
        "requests",
        "host_pages_written",
        "flash_pages_programmed",
        "gc_page_copies",
        "erases",
        "waf",
        "read_us",
        "write_us",
        "trim_us",
        "erase_count",
        "space_utilization",
        "logical_pages",
        "physical_pages",
        "ram_bytes",
        "memory",
        "sim_seconds",
        "throughput",
        "flash_ops",
        "integrity",
        "integrity_errors",
        "skipped_lines",
        "address",
    ] {
        assert!(r.get(field).is_some(), "missing {field}");
    }
    assert_eq!(r["integrity"], "ok");
    assert_eq!(r["requests"], 20000);
    assert_eq!(r["ftl"], "pagemap");
    // 32 blocks per plane: the run must garbage-collect, so WAF is above 1.
    assert!(r["waf"].as_f64().unwrap() > 1.0, "{}", r["waf"]);
    assert!(r["write_us"]["p99"].as_f64().unwrap() >= r["write_us"]["p50"].as_f64().unwrap());
    assert!(r["throughput"]["write_pages"].is_array());
}

#[test]
fn csv_is_a_header_and_one_row_of_scalars() {
    let text = stdout_of(&["run", "--requests", "20000", "--format", "csv"]);
    // The provenance's config cell is a quoted multi-line TOML document, so read it as CSV.
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1, "{text}");
    let row = &rows[0];
    assert_eq!(header.len(), row.len());
    let col = |name: &str| &row[header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name}"))];
    assert_eq!(col("waf"), "1.0");
    assert_eq!(col("integrity"), "ok");
    assert_eq!(col("requests"), "20000");
    assert!(col("write_us.p99").parse::<f64>().unwrap() > 0.0);
    assert!(header.iter().any(|h| h == "flash_ops.programs.host"));
    assert!(!header.iter().any(|c| c.starts_with("throughput") || c == "tasks" || c.starts_with("tasks.")));
    assert!(col("provenance.config").contains("[ftl]"), "{}", col("provenance.config"));
    assert_eq!(header.last().map(|h| h.starts_with("provenance.")), Some(true));
}

#[test]
fn same_config_and_seed_give_byte_identical_json() {
    let args = ["run", "--requests", "20000", "--blocks-per-plane", "32", "--seed", "7", "--format", "json"];
    let a = ftlab().args(args).output().unwrap();
    let b = ftlab().args(args).output().unwrap();
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    let mut other = args;
    other[6] = "8";
    let c = ftlab().args(other).output().unwrap();
    assert_ne!(a.stdout, c.stdout, "the seed must change the run");
}

#[test]
fn out_writes_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    ftlab()
        .args(["run", "--requests", "5000", "-f", "json", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["requests"], 5000);
}

#[test]
fn compare_prints_one_row_per_ftl() {
    let text = stdout_of(&["compare", "--ftl", "pagemap,pure-page-level", "--requests", "20000"]);
    let rows: Vec<&str> =
        text.lines().filter(|l| l.starts_with("pagemap ") || l.starts_with("pure-page-level ")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|r| r.trim_end().ends_with("ok")), "{text}");
    assert!(text.contains("WAF"));
    let json = json_of(&["compare", "--ftl", "pagemap,pure-page-level", "--requests", "5000", "-f", "json"]);
    let kinds: Vec<&str> = json.as_array().unwrap().iter().map(|r| r["ftl"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["pagemap", "pure-page-level"]);
}

/// The util column of a comparison table, by FTL.
fn util_column(text: &str, kinds: &[&str]) -> Vec<f64> {
    kinds
        .iter()
        .map(|k| {
            let row = text.lines().find(|l| l.starts_with(&format!("{k} "))).unwrap_or_else(|| panic!("{text}"));
            // ftl WAF write-mean write-p99 write-max read-mean read-p99 erases copies util integrity
            row.split_whitespace().nth(9).unwrap().parse().unwrap()
        })
        .collect()
}

#[test]
fn compare_keeps_every_ftl_at_the_same_spare_space_unless_told_otherwise() {
    let kinds = ["pagemap", "dftl", "nftl"];
    let args = ["compare", "--ftl", "pagemap,dftl,nftl", "--requests", "20000"];
    let fair = stdout_of(&args);
    assert!(
        fair.contains("every FTL keeps its data in the same") && fair.contains("(the space nftl exports"),
        "{fair}"
    );
    assert_eq!(util_column(&fair, &kinds), [84.0, 84.0, 84.0], "{fair}");
    let own = stdout_of(&[&args[..], &["--own-space"]].concat());
    assert!(own.contains("WAF measures spare space"), "{own}");
    assert_eq!(util_column(&own, &kinds), [90.0, 98.8, 84.0], "{own}");
    // The JSON carries what each ran with: nftl's space, for all.
    let json = json_of(&[&args[..], &["-f", "json"]].concat());
    let exported: Vec<u64> = json.as_array().unwrap().iter().map(|r| r["logical_pages"].as_u64().unwrap()).collect();
    assert!(exported[0] > exported[2] && exported[1] > exported[0], "{exported:?}");
    // A space one FTL cannot hold names it.
    let e = failure(&[&args[..], &["--set", "host.logical_pages=58000"]].concat(), 2);
    assert!(e.contains("--ftl nftl") && e.contains("host.logical_pages"), "{e}");
}

#[test]
fn a_block_erased_past_its_rated_cycles_is_a_warning() {
    let args = ["compare", "--ftl", "pagemap,nftl", "--requests", "100000", "--set", "device.wear.endurance_cycles=5"];
    let out = ftlab().args(args).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("warning: nftl: a block was erased") && text.contains("rated 5 cycles"), "{text}");
    // Not in JSON: on stderr.
    let out = ftlab().args([&args[..], &["-f", "json"]].concat()).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stderr).unwrap().contains("past the chip's rated 5 cycles"));
    // Within the rating: no warning.
    let text = stdout_of(&["compare", "--ftl", "pagemap,nftl", "--requests", "100000"]);
    assert!(!text.contains("warning"), "{text}");
    let text = stdout_of(&["run", "--requests", "100000", "--set", "device.wear.endurance_cycles=1"]);
    assert!(text.contains("warning: pagemap: a block was erased"), "{text}");
}

#[test]
fn compare_names_an_unknown_ftl_before_running() {
    let e = failure(&["compare", "--ftl", "pagemap,nosuch", "--requests", "5000"], 2);
    assert!(e.contains("nosuch") && e.contains("pure-page-level"), "{e}");
}

fn sweep_file(dir: &Path, grid: &str) -> PathBuf {
    let p = dir.join("sweep.toml");
    let text = format!("[base]\nseed = 2\n[base.workload]\nmax_requests = 5000\n\n[grid]\n{grid}");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn sweep_writes_a_row_per_grid_point() {
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(
        dir.path(),
        "\"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]\n\"device.over_provisioning\" = [0.07, 0.1]\n",
    );
    let out = dir.path().join("rows.csv");
    ftlab().arg("sweep").arg(&file).arg("--out").arg(&out).assert().success();
    let mut reader = csv::Reader::from_path(&out).unwrap();
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"));
    let (run, kind, op, waf, integrity, error) =
        (col("run"), col("ftl.kind"), col("device.over_provisioning"), col("waf"), col("integrity"), col("error"));
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 4);
    let mut seen: Vec<(String, String, String)> =
        rows.iter().map(|r| (r[run].to_owned(), r[kind].to_owned(), r[op].to_owned())).collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("0", "pagemap", "0.07"),
            ("1", "pure-page-level", "0.07"),
            ("2", "pagemap", "0.1"),
            ("3", "pure-page-level", "0.1")
        ]
        .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()))
    );
    for r in &rows {
        assert_eq!(&r[integrity], "ok");
        assert_eq!(&r[error], "");
        assert!(r[waf].parse::<f64>().unwrap() >= 1.0);
    }
}

#[test]
fn sweep_writes_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(dir.path(), "seed = [1, 2, 3]\n");
    let text = stdout_of(&["sweep", file.to_str().unwrap(), "--format", "jsonl", "--quiet"]);
    let rows: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    let mut seeds: Vec<u64> = rows.iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    seeds.sort_unstable();
    assert_eq!(seeds, [1, 2, 3]);
    assert!(rows.iter().all(|r| r["integrity"] == "ok" && r["error"].is_null() && r["requests"] == 5000));
}

#[test]
fn sweep_validates_every_point_before_running_any() {
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(dir.path(), "\"ftl.kind\" = [\"pagemap\", \"nosuch\"]\n\"device.chip\" = [\"small-slc\"]\n");
    let out = dir.path().join("rows.csv");
    let e = failure(&["sweep", file.to_str().unwrap(), "--out", out.to_str().unwrap()], 2);
    assert!(e.contains("grid point 1 of 2") && e.contains("ftl.kind = \"nosuch\""), "{e}");
    assert!(!out.exists(), "nothing may be written before every point is valid");
}

#[test]
fn presets_list_every_group() {
    let text = stdout_of(&["presets"]);
    for name in ["small-slc", "pagemap", "pure-page-level", "skewed-random-write", "msr", "ssdsim"] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    let formats = stdout_of(&["presets", "formats"]);
    assert!(formats.contains("msr") && !formats.contains("small-slc"));
    // The same lists as JSON, a {name, summary} per entry, as many as the table's lines.
    let all: serde_json::Value = serde_json::from_str(&stdout_of(&["presets", "-f", "json"])).unwrap();
    let entries: usize =
        ["chips", "ftls", "workloads", "formats"].iter().map(|g| all[g].as_array().unwrap().len()).sum();
    assert_eq!(entries, text.lines().filter(|l| l.starts_with("  ")).count(), "{all}");
    assert!(all["ftls"].as_array().unwrap().iter().any(|f| f["name"] == "pure-page-level" && f["summary"].is_string()));
    let one: serde_json::Value = serde_json::from_str(&stdout_of(&["presets", "chips", "--format", "json"])).unwrap();
    assert_eq!(one.as_object().unwrap().keys().collect::<Vec<_>>(), ["chips"]);
}

#[test]
fn trace_stats_summarise_a_trace() {
    let trace = fixture("msr.csv");
    let json = json_of(&["trace", "stats", trace.to_str().unwrap(), "--trace-format", "msr", "-f", "json"]);
    assert_eq!(
        (json["requests"].as_u64(), json["reads"].as_u64(), json["writes"].as_u64()),
        (Some(4), Some(2), Some(2))
    );
    assert_eq!(json["total_bytes"], 4096 + 16_384 + 512 + 65_536);
    let table = stdout_of(&["trace", "stats", trace.to_str().unwrap(), "--trace-format", "msr"]);
    assert!(table.contains("requests       4\n") && table.contains("arrivals       0 .. 1002393000 ns"), "{table}");
}

/// Runs `trace` in `format` (at most `limit` requests) and checks every read
/// returned the data last written; returns the JSON report.
fn replay_with_integrity_ok(trace: &Path, format: &str, limit: Option<&str>) -> Value {
    let name = trace.display();
    let mut args = vec!["run", "--quiet", "--trace", trace.to_str().unwrap(), "--trace-format", format];
    args.extend(["--address", "modulo", "--format", "json"]);
    if let Some(n) = limit {
        args.extend(["--requests", n]);
    }
    let r = json_of(&args);
    assert_eq!(r["integrity"], "ok", "{name}");
    assert_eq!(r["skipped_lines"], 0, "{name}");
    assert!(r["workload"].as_str().unwrap().contains(format), "{name}");
    r
}

/// Every fixture, in its format, replays every request it holds.
#[test]
fn every_trace_format_replays_with_integrity_ok() {
    let cases = [
        ("umass_header.csv", "umass", 4),
        ("msr.csv", "msr", 4),
        ("systor.csv", "systor", 3),
        ("blkparse.txt", "blkparse", 3),
        ("disksim.trace", "disksim", 4),
        ("mqsim.trace.gz", "mqsim", 3),
        ("ssdsim.ascii", "ssdsim", 3),
    ];
    for (file, format, requests) in cases {
        let r = replay_with_integrity_ok(&fixture(file), format, None);
        assert_eq!(r["requests"], requests, "{file}");
    }
}

/// Every real trace (see `real_traces_dir`), in its format, replays with every
/// read returning the data last written.
#[cfg(feature = "real-traces")]
#[test]
fn every_real_trace_replays_with_integrity_ok() {
    let cases: [(&str, &str, Option<&str>); 8] = [
        ("umass_financial1_head.ssdsim.ascii", "ssdsim", None),
        ("umass_websearch_wsrch-small.mqsim.trace", "mqsim", None),
        ("ms_tpcc-small.mqsim.trace", "mqsim", None),
        ("msr_cambridge_hm0_sample.csv", "msr", None),
        ("systor17_traces_sample.csv", "systor", None),
        ("hadoop_blkparse_blktrace.txt", "blkparse", None),
        ("disksim_ssd-postmark-aligned2.trace", "disksim", None),
        ("disksim_ssd-iozone-aligned2-100K.trace", "disksim", Some("20000")),
    ];
    for (file, format, limit) in cases {
        let r = replay_with_integrity_ok(&real_traces_dir::real_traces_dir().join(file), format, limit);
        assert!(r["requests"].as_u64().unwrap() > 0, "{file}");
        if let Some(n) = limit {
            assert_eq!(r["requests"].as_u64().unwrap(), n.parse::<u64>().unwrap(), "{file}");
        }
    }
}

#[test]
fn compact_addressing_replays_a_trace() {
    let path = fixture("msr.csv");
    let r = json_of(&[
        "run",
        "--trace",
        path.to_str().unwrap(),
        "--trace-format",
        "msr",
        "--address",
        "compact",
        "-f",
        "json",
    ]);
    assert_eq!(r["integrity"], "ok");
    // Compaction may split a request whose pages are not contiguous once compacted.
    assert!(r["requests"].as_u64().unwrap() >= 4, "{}", r["requests"]);
    let address = r["address"].as_str().unwrap();
    assert!(address.contains("compact") && address.contains("requests in 4"), "{address}");
}

fn bad_trace(dir: &Path) -> PathBuf {
    let p = dir.join("bad.trace");
    std::fs::write(&p, "0 0 100 8 0\n1000 0 200 8 1\n2000 0 abc 8 0\n3000 0 300 8 0\n").unwrap();
    p
}

#[test]
fn a_malformed_trace_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = bad_trace(dir.path());
    let e = failure(&["run", "--trace", p.to_str().unwrap(), "--trace-format", "mqsim"], 1);
    assert!(e.contains("bad.trace:3:") && e.contains("abc"), "{e}");
    let e = failure(&["trace", "stats", p.to_str().unwrap(), "--trace-format", "mqsim"], 1);
    assert!(e.contains("bad.trace:3:"), "{e}");
    // Skipping bad lines replays the rest and counts the skipped one.
    let r =
        json_of(&["run", "--trace", p.to_str().unwrap(), "--trace-format", "mqsim", "--skip-bad-lines", "-f", "json"]);
    assert_eq!(r["skipped_lines"], 1);
    assert_eq!(r["requests"], 3);
}

#[test]
fn a_trace_that_yields_no_request_is_an_error_not_an_empty_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("hm0.csv");
    std::fs::write(&csv, "1000,hm,0,Write,0,4096,1\n1010,hm,0,Read,0,4096,1\n").unwrap();
    let e = failure(&["run", "--trace", csv.to_str().unwrap(), "--trace-format", "blkparse"], 1);
    assert!(e.contains("hm0.csv: no request in 2 lines read as blkparse") && e.contains("--trace-format"), "{e}");
    let empty = dir.path().join("empty.trace");
    std::fs::write(&empty, "").unwrap();
    let e = failure(&["run", "--trace", empty.to_str().unwrap(), "--trace-format", "mqsim"], 1);
    assert!(e.contains("empty.trace: no request in 0 lines"), "{e}");
    let e = failure(&["trace", "stats", empty.to_str().unwrap(), "--trace-format", "mqsim"], 1);
    assert!(e.contains("empty.trace: no request"), "{e}");
}

#[test]
fn a_gz_trace_that_is_not_compressed_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("plain.trace.gz");
    std::fs::write(&gz, "0 0 0 8 0\n1000 0 8 8 1\n").unwrap();
    for format in ["mqsim", "blkparse"] {
        let e = failure(&["run", "--trace", gz.to_str().unwrap(), "--trace-format", format], 1);
        assert!(e.contains("plain.trace.gz: the name says gzip but the content is not compressed"), "{e}");
    }
}

#[test]
fn an_unknown_config_key_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, "[device]\nchip = \"small-slc\"\nblocks_per_plan = 64\n").unwrap();
    let e = failure(&["run", p.to_str().unwrap()], 2);
    assert!(e.contains("blocks_per_plan") && e.contains("line 3"), "{e}");
    let e = failure(&["run", "--set", "host.queue_dept=4"], 2);
    assert!(e.contains("queue_dept"), "{e}");
    let e = failure(&["run", "--set", "ftl.gc_treshold=3"], 2);
    assert!(e.contains("gc_treshold") && e.contains("gc_free_blocks"), "{e}");
}

#[test]
fn an_unknown_ftl_lists_the_known_ones() {
    let e = failure(&["run", "--ftl", "nosuch"], 2);
    assert!(e.contains("nosuch") && e.contains("pagemap") && e.contains("pure-page-level"), "{e}");
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    ftlab().args(["run", "--no-such-flag"]).assert().code(2);
    ftlab().args(["run", "--requests", "many"]).assert().code(2);
    let e = failure(&["run", "no-such-config.toml"], 2);
    assert!(e.contains("no-such-config.toml"), "{e}");
    ftlab().args(["run", "--help"]).assert().success().stdout(predicate::str::contains("FIELDS.md"));
}

#[test]
fn set_overrides_any_key_and_print_config_round_trips() {
    let printed =
        stdout_of(&["run", "--print-config", "--requests", "5000", "--seed", "9", "--set", "ftl.gc_free_blocks=3"]);
    assert!(printed.contains("gc_free_blocks = 3") && printed.contains("seed = 9"), "{printed}");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, &printed).unwrap();
    let from_file = stdout_of(&["run", p.to_str().unwrap(), "-f", "json"]);
    let from_flags =
        stdout_of(&["run", "--requests", "5000", "--seed", "9", "--set", "ftl.gc_free_blocks=3", "-f", "json"]);
    assert_eq!(from_file, from_flags);
}

#[test]
fn a_trace_in_a_config_file_is_relative_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("msr.csv"), dir.path().join("hm0.csv")).unwrap();
    let p = dir.path().join("c.toml");
    std::fs::write(&p, "[workload]\ntrace = \"hm0.csv\"\ntrace_format = \"msr\"\n").unwrap();
    let r = json_of(&["run", p.to_str().unwrap(), "-f", "json"]);
    assert_eq!(r["requests"], 4);
    assert_eq!(r["integrity"], "ok");
}

/// Every column of the CSV output (and every top-level JSON field) is documented.
#[test]
fn fields_md_documents_every_output_field() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/FIELDS.md")).unwrap();
    let csv = stdout_of(&["run", "--requests", "1000", "-f", "csv"]);
    let header = csv.lines().next().unwrap();
    let json = json_of(&["run", "--requests", "1000", "-f", "json"]);
    let top = json.as_object().unwrap().keys().cloned();
    let missing: Vec<String> =
        header.split(',').map(str::to_owned).chain(top).filter(|f| !doc.contains(&format!("`{f}`"))).collect();
    assert!(missing.is_empty(), "FIELDS.md does not document: {missing:?}");
}

#[test]
fn completions_and_man_page() {
    ftlab().args(["completions", "bash"]).assert().success().stdout(predicate::str::contains("ftlab"));
    // Completions offer the preset names: FTLs, chips, workloads, trace formats,
    // with their summaries where the shell shows them.
    let out = ftlab().args(["completions", "zsh"]).assert().success().get_output().stdout.clone();
    let zsh = String::from_utf8(out).unwrap();
    for name in ["janus", "lazy-rtgc", "cosmos-openssd", "skewed-random-write", "umass", "msr"] {
        assert!(zsh.contains(name), "zsh completions lack {name}");
    }
    assert!(zsh.contains("Janus-FTL (004)"), "zsh completions lack the FTL summaries");
    let out = ftlab().args(["completions", "bash"]).assert().success().get_output().stdout.clone();
    let bash = String::from_utf8(out).unwrap();
    assert!(bash.contains("janus") && bash.contains("cosmos-openssd"), "bash completions lack the preset names");
    // Parsing keeps ftlab's own message for a name that is no preset.
    ftlab()
        .args(["run", "--ftl", "nope", "--requests", "10"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("unknown FTL `nope`").and(predicate::str::contains("invalid value").not()));
    ftlab().arg("man").assert().success().stdout(predicate::str::contains(".TH ftlab"));
    // --out-dir writes a page for every command the top-level page names.
    let dir = tempfile::tempdir().unwrap();
    ftlab().args(["man", "--out-dir"]).arg(dir.path()).assert().success();
    let top = std::fs::read_to_string(dir.path().join("ftlab.1")).unwrap();
    let named: Vec<String> = top
        .split("ftlab\\-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(name, _)| name.replace("\\-", "-")))
        .collect();
    assert!(named.len() >= 15, "{named:?}");
    for name in &named {
        let page = dir.path().join(format!("ftlab-{name}.1"));
        assert!(page.is_file(), "ftlab.1 names ftlab-{name}(1), which was not written");
    }
    assert!(std::fs::read_to_string(dir.path().join("ftlab-trace-stats.1")).unwrap().contains("trace\\-format"));
}

#[test]
fn bounds_reproduce_table_iii_of_001() {
    // (chip, GFTL, Lazy-RTGC) space utilization as printed in 001 Table III.
    let rows = [
        ("spansion-slc-512mb", 0.929, 0.875),
        ("toshiba-slc-512mb", 0.929, 0.886),
        ("samsung-mlc-512mb", 0.688, 0.496),
        ("micron-mlc-16gb", 0.842, 0.747),
        ("toshiba-tlc-2gb", 0.596, 0.497),
    ];
    for (chip, gftl, lazy) in rows {
        let j = json_of(&["bounds", "--chip", chip, "--format", "json"]);
        for key in ["ideal", "fsr", "gftl", "rftl", "lazy_rtgc", "lazy_rtgc_ondemand"] {
            assert!(j[key]["max_response_us"].is_number(), "{chip}: {key}");
        }
        let g = j["gftl"]["space_utilization"].as_f64().unwrap();
        let l = j["lazy_rtgc"]["space_utilization"].as_f64().unwrap();
        assert!((g - gftl).abs() <= 0.001, "{chip}: gftl {g}");
        assert!((l - lazy).abs() <= 0.001, "{chip}: lazy-rtgc {l}");
        assert!((j["rftl"]["space_utilization"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
        assert!(j["lazy_rtgc"]["alpha"].is_number());
    }
    let table = stdout_of(&["bounds", "--chip", "spansion-slc-512mb"]);
    assert!(table.contains("lazy_rtgc") && table.contains("87.50%"), "{table}");
}

/// `ftlab bounds` prints, beside the papers' figures, the bound a run checks
/// and the space the FTL exports, and they are what `ftlab run` reports.
#[test]
fn bounds_print_what_a_run_checks() {
    for chip in ["spansion-slc-512mb", "toshiba-slc-512mb"] {
        let j = json_of(&["bounds", "--chip", chip, "--format", "json"]);
        let rows = j["as_run"].as_array().unwrap();
        for ftl in ["gftl", "lazy-rtgc", "waogc"] {
            let row = rows.iter().find(|r| r["ftl"] == ftl).unwrap();
            let r = json_of(&["run", "--ftl", ftl, "--chip", chip, "--requests", "100", "-f", "json"]);
            assert_eq!(row["bound_us"], r["bound_us"], "{chip} {ftl}");
            assert_eq!(row["space_utilization"], r["space_utilization"], "{chip} {ftl}");
        }
    }
    let table = stdout_of(&["bounds", "--chip", "spansion-slc-512mb"]);
    // The paper's 2200 us, and the 2252.8 us with the page transfer a run checks.
    assert!(table.contains("2200.0") && table.contains("2252.8"), "{table}");
}

#[test]
fn bounds_with_explicit_timing_and_bad_input() {
    // GFTL's read bound of 002 Table V: pi t_rdoob + t_rdpg = 64 x 25 + 25.
    let j = json_of(&[
        "bounds",
        "--read-us",
        "25",
        "--program-us",
        "300",
        "--erase-us",
        "2000",
        "--pages-per-block",
        "64",
        "-f",
        "json",
    ]);
    assert_eq!(j["gftl"]["max_read_us"].as_f64().unwrap(), 1625.0);
    let e = failure(&["bounds", "--chip", "nope"], 2);
    assert!(e.contains("nope") && e.contains("spansion-slc-512mb"), "{e}");
    let e = failure(&["bounds", "--read-us", "25"], 2);
    assert!(e.contains("--chip"), "{e}");
    let e = failure(
        &["bounds", "--read-us", "25", "--program-us", "900", "--erase-us", "100", "--pages-per-block", "64"],
        2,
    );
    assert!(e.contains("erase"), "{e}");
}

#[test]
fn sweep_draws_its_plots() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("s.toml");
    std::fs::write(
        &sweep,
        "[base.device]\nblocks_per_plane = 32\n[base.workload]\nmax_requests = 3000\n\
         [grid]\n\"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]\nseed = [1, 2]\n\
         [[plot]]\nfile = \"waf.svg\"\nx = \"ftl.kind\"\ny = \"waf\"\n",
    )
    .unwrap();
    let out = dir.path().join("rows.csv");
    ftlab().args(["sweep", sweep.to_str().unwrap(), "-o", out.to_str().unwrap(), "-q"]).assert().success();
    let svg = std::fs::read_to_string(dir.path().join("waf.svg")).unwrap();
    assert!(svg.contains("pure-page-level") && svg.contains("<rect"), "{svg}");
    // A plot of a field that does not exist is refused before anything runs.
    std::fs::write(&sweep, "[grid]\nseed = [1]\n[[plot]]\nfile = \"x.svg\"\nx = \"seed\"\ny = \"nope\"\n").unwrap();
    let e = failure(&["sweep", sweep.to_str().unwrap()], 2);
    assert!(e.contains("nope"), "{e}");
}

#[test]
fn report_writes_one_self_contained_page_of_a_run_or_a_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let text = stdout_of(&["run", "--requests", "3000", "--blocks-per-plane", "32", "-f", "json"]);
    std::fs::write(&json, text).unwrap();
    let page = dir.path().join("run.html");
    ftlab().args(["report", json.to_str().unwrap(), "-o", page.to_str().unwrap()]).assert().success();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("id=\"latency-cdf\""), "{html}");
    assert!(!html.contains("https://") && !html.contains("<script") && !html.contains("src="));

    let sweep = sweep_file(dir.path(), "\"ftl.kind\" = [\"pagemap\", \"pure-page-level\"]\n");
    let rows = dir.path().join("rows.csv");
    ftlab().args(["sweep", sweep.to_str().unwrap(), "-o", rows.to_str().unwrap(), "-q"]).assert().success();
    let html = stdout_of(&["report", rows.to_str().unwrap(), "--title", "two FTLs"]);
    assert!(
        html.contains("<h1>two FTLs</h1>") && html.contains("id=\"compare-0\"") && html.contains("pure-page-level")
    );

    std::fs::write(dir.path().join("bad.csv"), "a,b\n1,2\n").unwrap();
    let e = failure(&["report", dir.path().join("bad.csv").to_str().unwrap()], 2);
    assert!(e.contains("bad.csv") && e.contains("ftlab sweep"), "{e}");
}

#[test]
fn janus_model_finds_figure_4s_interior_optimum_and_page_mapping_for_random_writes() {
    // Figure 4's device (the defaults): a strongly local workload has its
    // optimum inside the spectrum, a uniformly random one at page mapping.
    let local = stdout_of(&["janus-model", "--locality", "40"]);
    let best: u32 = local
        .lines()
        .find_map(|l| l.strip_prefix("optimum: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(best > 20 && best < 1004, "{local}");
    let random = stdout_of(&["janus-model"]);
    assert!(random.contains("optimum: 1004 fused blocks"), "{random}");
}

#[test]
fn janus_model_reads_the_ghost_buffer_curve_of_a_janus_run() {
    let dir = tempfile::tempdir().unwrap();
    let run_report = |kind: &str| {
        let config = dir.path().join(format!("{kind}.toml"));
        std::fs::write(
            &config,
            format!(
                "seed = 1\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 64\n[ftl]\nkind = \"{kind}\"\n\
                 [workload.generator]\nkind = \"uniform\"\nrequests = 20000\n[precondition]\nfill = true\n"
            ),
        )
        .unwrap();
        let report = dir.path().join(format!("{kind}.json"));
        stdout_of(&["run", config.to_str().unwrap(), "-f", "json", "-o", report.to_str().unwrap()]);
        report
    };
    let janus = run_report("janus");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&janus).unwrap()).unwrap();
    let curve: Vec<f64> =
        json["ftl_curves"]["ghost_hit_rates"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
    assert_eq!(curve[0], 0.0);
    assert!(curve.windows(2).all(|w| w[0] <= w[1]) && curve.iter().all(|r| (0.0..=1.0).contains(r)), "{curve:?}");
    // Uniform random writes over the device's 246 data blocks: the PMA pays
    // for itself at every size, so the model picks page mapping throughout.
    let model = ["janus-model", "--blocks", "256", "--over-provisioned", "10", "--hit-rates"];
    let out = stdout_of(&[&model[..], &[janus.to_str().unwrap()]].concat());
    assert!(out.contains("optimum: 246 fused blocks"), "{out}");
    // A report of a scheme without the curve is refused, naming the field.
    let pagemap = run_report("pagemap");
    let e = failure(&[&model[..], &[pagemap.to_str().unwrap()]].concat(), 2);
    assert!(e.contains("ftl_curves.ghost_hit_rates") && e.contains("janus"), "{e}");
}

#[test]
fn plot_draws_a_csv_and_names_bad_columns() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "ftl,a_iops,b_iops,name\npagemap,10,20,x\nnameless,30,,y\n").unwrap();
    let svg = dir.path().join("t.svg");
    let (c, s) = (csv.to_str().unwrap(), svg.to_str().unwrap());
    ftlab().args(["plot", c, "--x", "ftl", "--y", "a_iops,b_iops", "--title", "T", "-o", s]).assert().success();
    let text = std::fs::read_to_string(&svg).unwrap();
    // A legend entry per --y column and a group per x value.
    for label in ["a_iops", "b_iops", "pagemap", "nameless", "T"] {
        assert!(text.contains(label), "{label} missing from the SVG");
    }
    let e = failure(&["plot", c, "--x", "ftl", "--y", "nosuch", "-o", s], 2);
    assert!(e.contains("`nosuch` is not a column") && e.contains("a_iops"), "{e}");
    let e = failure(&["plot", c, "--x", "ftl", "--y", "name", "-o", s], 2);
    assert!(e.contains("row 2") && e.contains("not a number"), "{e}");
}

/// An FTL of another crate (`ftlab-fifo-ftl`), registered where it is defined,
/// runs by name, is listed, takes its own keys and refuses unknown ones, and
/// runs in a sweep beside ftlab-ftl's schemes.
#[test]
fn an_ftl_of_another_crate_runs_by_name_and_in_a_sweep() {
    let r = json_of(&["run", "--ftl", "fifo", "--requests", "20000", "--precondition-fill", "-f", "json"]);
    assert_eq!(r["ftl"], "fifo");
    assert_eq!(r["integrity"], "ok");
    assert!(r["gc_page_copies"].as_u64().unwrap() > 0, "the fifo cleaner ran: {}", r["erases"]);
    assert!(stdout_of(&["presets", "ftls"]).contains("fifo"));
    let e = failure(&["run", "--ftl", "fifo", "--set", "ftl.over_provisoning=0.3", "--requests", "10"], 2);
    assert!(e.contains("over_provisoning") && e.contains("over_provisoning"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let file = sweep_file(dir.path(), "\"ftl.kind\" = [\"fifo\", \"pagemap\"]\n");
    let out = dir.path().join("rows.csv");
    ftlab().arg("sweep").arg(&file).arg("--out").arg(&out).assert().success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().filter(|l| l.contains(",fifo,") || l.contains(",fifo\n")).count(), 1, "{text}");
}

#[test]
fn an_output_path_that_cannot_be_written_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder").join("r.json");
    // A run far too long for a test: refused before it starts.
    for args in [
        vec!["run", "--requests", "100000000", "-f", "json", "-o"],
        vec!["sweep", concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments/janus/figure7.toml"), "-o"],
    ] {
        ftlab()
            .args(&args)
            .arg(&missing)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .failure()
            .stderr(predicate::str::contains("no-such-folder").and(predicate::str::contains("does not exist")));
    }
    ftlab()
        .args(["run", "--requests", "100000000", "-o"])
        .arg(dir.path())
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .failure()
        .stderr(predicate::str::contains("it is a folder"));
    // A writable path is left as it was until the run writes it.
    let out = dir.path().join("r.json");
    ftlab().args(["run", "--requests", "1000", "-f", "json", "-o"]).arg(&out).assert().success();
    assert!(std::fs::read_to_string(&out).unwrap().contains("\"waf\""));
}

/// Ctrl-C stops a long run, which writes what it measured marked as partial
/// and exits 130.
#[cfg(unix)]
#[test]
fn ctrl_c_writes_the_partial_report_and_exits_130() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("long.toml");
    // Far more requests than the test waits for (a few million a second).
    std::fs::write(
        &config,
        "[ftl]\nkind = \"pagemap\"\n[workload.generator]\nkind = \"uniform\"\nrequests = 1000000000\nread_fraction = 0.3\n",
    )
    .unwrap();
    let out = dir.path().join("partial.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ftlab"))
        .args(["run", "-q", "-f", "json", "-o"])
        .arg(&out)
        .arg(&config)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let requests = report["requests"].as_u64().unwrap();
    assert!(requests > 0 && requests < 1_000_000_000, "{requests}");
    assert!(report["error"].as_str().unwrap().starts_with("interrupted after"), "{report}");
    assert_eq!(report["integrity"], "not checked: the run was interrupted");
}

#[test]
fn latency_logs_are_one_per_run_and_serve_refuses_one() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("lat.log");
    let log_arg = log.to_str().unwrap();
    let json = json_of(&["run", "--requests", "3000", "--latency-log", log_arg, "-f", "json"]);
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(lines as u64, json["requests"].as_u64().unwrap());
    assert!(json["latency"]["write"]["bins"].as_array().unwrap().len() > 1, "the distribution is in the JSON");
    // CSV leaves the distribution's arrays out.
    let csv = stdout_of(&["run", "--requests", "3000", "-f", "csv"]);
    assert!(!csv.lines().next().unwrap().contains("latency"), "no latency columns in CSV");

    // A comparison gives each FTL its own log, named after it.
    let _ =
        json_of(&["compare", "--ftl", "pagemap,dftl", "--requests", "2000", "--latency-log", log_arg, "-f", "json"]);
    for kind in ["pagemap", "dftl"] {
        let own = dir.path().join(format!("lat.{kind}.log"));
        assert_eq!(std::fs::read_to_string(&own).unwrap().lines().count(), 2000, "{}", own.display());
    }

    let e = failure(&["serve", "--latency-log", log_arg, "--listen", "unix:/nonexistent/sock"], 2);
    assert!(e.contains("metrics.latency_log") && e.contains("not by ftlab serve"), "{e}");
}

#[test]
fn a_json_report_reruns_itself_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let report = path("r.json");
    ftlab().args(["run", "--requests", "3000", "--seed", "4", "-f", "json", "-o", &report]).assert().success();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let prov = &json["provenance"];
    assert_eq!(prov["command"], "run");
    assert!(prov["config"].as_str().unwrap().contains("seed = 4"), "{prov}");
    assert!(prov.get("stamp").is_none(), "no stamp unless asked: the same run gives the same bytes");

    // Rerun from the file alone, written anew: the same bytes.
    let again = path("again.json");
    let out = ftlab().args(["rerun", &report, "-o", &again]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("reproduced: 1 report, byte for byte"));
    assert_eq!(std::fs::read(&report).unwrap(), std::fs::read(&again).unwrap());

    // A changed result is caught and named.
    let mut tampered = json.clone();
    tampered["waf"] = serde_json::json!(tampered["waf"].as_f64().unwrap() + 1e-12);
    let bad = path("tampered.json");
    std::fs::write(&bad, serde_json::to_string_pretty(&tampered).unwrap()).unwrap();
    let e = failure(&["rerun", &bad], 1);
    assert!(e.contains("not reproduced") && e.contains("waf") && !e.contains("erases"), "{e}");

    // --stamp records when, where and how long; the rerun sets it aside.
    let stamped = path("stamped.json");
    ftlab().args(["run", "--requests", "3000", "-f", "json", "--stamp", "-o", &stamped]).assert().success();
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&stamped).unwrap()).unwrap();
    let stamp = &s["provenance"]["stamp"];
    assert!(stamp["date"].as_str().unwrap().starts_with("20") && stamp["wall_s"].as_f64().unwrap() > 0.0, "{stamp}");
    assert!(stamp["cpu_s"].as_f64().is_some() && stamp["host"].is_string() && stamp["cores"].as_u64().unwrap() >= 1);
    ftlab().args(["rerun", &stamped]).assert().success();

    // A comparison's reports rerun each; a report without provenance is refused.
    let cmp = path("cmp.json");
    ftlab()
        .args(["compare", "--ftl", "pagemap,dftl", "--requests", "2000", "-f", "json", "-o", &cmp])
        .assert()
        .success();
    let out = ftlab().args(["rerun", &cmp]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("reproduced: 2 reports, byte for byte"));
    let mut bare = json.clone();
    bare.as_object_mut().unwrap().remove("provenance");
    std::fs::write(path("bare.json"), bare.to_string()).unwrap();
    let e = failure(&["rerun", &path("bare.json")], 2);
    assert!(e.contains("no `provenance`"), "{e}");
}

/// A CSV row carries its provenance (the whole configuration in
/// `provenance.config`), so `ftlab rerun` reruns it from the row alone.
#[test]
fn a_csv_row_reruns_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let cmp = path("cmp.csv");
    ftlab()
        .args(["compare", "--ftl", "pagemap,dftl", "--requests", "2000", "--seed", "5", "-f", "csv", "-o", &cmp])
        .assert()
        .success();
    let text = std::fs::read_to_string(&cmp).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    for column in ["provenance.command", "provenance.ftlab", "provenance.git_revision", "provenance.config"] {
        assert!(header.iter().any(|h| h == column), "{column} missing: {header:?}");
    }
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let config = header.iter().position(|h| h == "provenance.config").unwrap();
    assert!(rows[1][config].contains("kind = \"dftl\"") && rows[1][config].contains("seed = 5"), "{:?}", &rows[1]);
    let again = path("again.csv");
    let out = ftlab().args(["rerun", &cmp, "-o", &again]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("reproduced: 2 rows"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
    // A changed cell is caught and named, with its row.
    let erases = header.iter().position(|h| h == "erases").unwrap();
    let mut w = csv::Writer::from_path(path("bad.csv")).unwrap();
    w.write_record(&header).unwrap();
    for (i, row) in rows.iter().enumerate() {
        let mut cells: Vec<String> = row.iter().map(str::to_owned).collect();
        if i == 1 {
            cells[erases] = (cells[erases].parse::<u64>().unwrap() + 1).to_string();
        }
        w.write_record(&cells).unwrap();
    }
    w.flush().unwrap();
    let e = failure(&["rerun", &path("bad.csv")], 1);
    assert!(e.contains("row 2: erases") && !e.contains("row 1"), "{e}");
    // A CSV without the column (rows written before there was one) is refused, saying why.
    std::fs::write(path("old.csv"), "run,seed,waf\n0,1,1.0\n").unwrap();
    let e = failure(&["rerun", &path("old.csv")], 2);
    assert!(e.contains("no `provenance.config` column"), "{e}");
}

#[test]
fn a_sweep_row_reruns_itself() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    std::fs::write(
        path("s.toml"),
        "[base.device]\nchip = \"small-slc\"\nblocks_per_plane = 32\n[base.workload.generator]\nkind = \"uniform\"\n\
         requests = 3000\n[grid]\n\"ftl.kind\" = [\"pagemap\", \"dftl\"]\nseed = [1, 2]\n",
    )
    .unwrap();
    let rows = path("rows.csv");
    ftlab().args(["sweep", "--quiet", &path("s.toml"), "-o", &rows]).assert().success();
    let out = ftlab().args(["rerun", "-q", &rows]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("reproduced: 4 rows"));
    // Each row has its own configuration; a changed report cell is caught.
    let mut reader = csv::Reader::from_path(&rows).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(header.last().map(String::as_str), Some("error"));
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let at = |n: &str| header.iter().position(|h| h == n).unwrap();
    let (kind, config) = (at("ftl.kind"), at("provenance.config"));
    for r in &records {
        assert!(r[config].contains(&format!("kind = \"{}\"", &r[kind])), "{:?}", r);
    }
    let mut w = csv::Writer::from_path(path("bad.csv")).unwrap();
    w.write_record(&header).unwrap();
    for (i, row) in records.iter().enumerate() {
        let mut cells: Vec<String> = row.iter().map(str::to_owned).collect();
        if i == 2 {
            cells[at("write_us.max")] = "1.5".into();
        }
        w.write_record(&cells).unwrap();
    }
    w.flush().unwrap();
    let e = failure(&["rerun", "-q", &path("bad.csv")], 1);
    assert!(e.contains("row 3: write_us.max"), "{e}");
}

#[test]
fn a_rerun_finds_a_relative_trace_from_another_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("msr.csv"), dir.path().join("hm0.csv")).unwrap();
    let args = ["run", "--set", "workload.trace=hm0.csv", "--set", "workload.trace_format=msr", "-f", "json", "-o"];
    ftlab().current_dir(dir.path()).args(args).arg("r.json").assert().success();
    let report = dir.path().join("r.json");
    let out = ftlab().args(["rerun", report.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `ftlab zones` on the JSON reports of a zoned device's host FTL and of an
/// FDP device: the zone report and the per-handle statistics, as CSV rows
/// that agree with the run (every page written is in some zone; the handles'
/// host pages are the run's host pages), and a clear error for a report of
/// another FTL.
#[test]
fn zones_prints_the_zone_report_and_the_fdp_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let base = "seed = 1\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 72\n[precondition]\nfill = true\n\
                [metrics]\nslowdown = false\n[workload]\nmax_requests = 20000\n[workload.generator]\nkind = \"uniform\"\nrequests = 20000\n";
    let run = |ftl: &str| {
        let config = dir.path().join(format!("{ftl}.toml"));
        std::fs::write(&config, format!("{base}[ftl]\nkind = \"{ftl}\"\n")).unwrap();
        let report = dir.path().join(format!("{ftl}.json"));
        stdout_of(&["run", "-q", config.to_str().unwrap(), "-f", "json", "-o", report.to_str().unwrap()]);
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        (report, json)
    };
    let (report, json) = run("zns-host");
    let csv = stdout_of(&["zones", report.to_str().unwrap(), "-f", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("zone,state,written_pages,valid_pages,stream"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), json["ftl_curves"]["zone_state_by_zone"].as_array().unwrap().len());
    let valid: u64 = rows.iter().map(|r| r[3].parse::<u64>().unwrap()).sum();
    assert_eq!(valid, json["logical_pages"].as_u64().unwrap(), "every logical page valid in one zone after the fill");
    assert!(rows.iter().any(|r| r[1] == "full") && rows.iter().all(|r| r[2].parse::<u64>().is_ok()));
    let table = stdout_of(&["zones", report.to_str().unwrap()]);
    assert!(table.starts_with("zone") && table.contains("full"), "{table}");

    let (report, json) = run("fdp");
    let rows: Value = serde_json::from_str(&stdout_of(&["zones", report.to_str().unwrap(), "-f", "json"])).unwrap();
    let host: u64 = rows.as_array().unwrap().iter().map(|r| r["host_pages"].as_u64().unwrap()).sum();
    assert_eq!(host, json["host_pages_written"].as_u64().unwrap());
    // Its event log: the fill's and the run's garbage collections, the
    // newest of them, each a media reallocation that moved pages.
    let events: Value =
        serde_json::from_str(&stdout_of(&["zones", report.to_str().unwrap(), "--events", "-f", "json"])).unwrap();
    let events = events.as_array().unwrap();
    assert_eq!(events.len(), json["ftl_curves"]["fdp_event_type"].as_array().unwrap().len());
    assert!(!events.is_empty(), "garbage collection ran and no event was logged");
    assert!(events.iter().all(|e| e["name"] == "media reallocated" && e["pages_moved"].as_u64().unwrap() > 0));

    let (report, _) = run("pagemap");
    let e = failure(&["zones", report.to_str().unwrap()], 2);
    assert!(e.contains("pagemap") && e.contains("zns-host") && e.contains("fdp"), "{e}");
    let e = failure(&["zones", report.to_str().unwrap(), "--events"], 2);
    assert!(e.contains("pagemap") && e.contains("no FDP event log"), "{e}");
    let e = failure(&["zones", dir.path().join("missing.json").to_str().unwrap()], 2);
    assert!(e.contains("missing.json"), "{e}");
}
