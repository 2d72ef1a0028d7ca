//! `ftlab serve`: usage errors, and a server that starts, answers a client,
//! keeps its stats file and prints its counters when SIGTERM stops it.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;
use predicates::prelude::*;

fn ftlab() -> Command {
    Command::cargo_bin("ftlab").unwrap()
}

#[test]
fn bad_addresses_and_exports_are_usage_errors() {
    ftlab()
        .args(["serve", "--listen", "localhost:10809"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unix:PATH"));
    ftlab()
        .args(["serve", "--listen", "unix:/nonexistent/x.sock", "--export", "noequals"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("NAME=KIND"));
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/x.sock", "--export", "pagemap=dftl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("two exports are named `pagemap`"));
    ftlab().args(["serve", "--listen", "unix:/tmp/x.sock", "--pace", "0"]).assert().code(2);
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/x.sock", "--export", "x=no-such-ftl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no-such-ftl"));
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(30), "{what} did not happen");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serves_until_sigterm_then_prints_its_counters() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("s.sock");
    let stats = dir.path().join("stats.json");
    let child = ftlab()
        .args(["serve", "--chip", "small-slc", "--blocks-per-plane", "16", "--export", "other=dftl"])
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--stats")
        .arg(&stats)
        .args(["--stats-interval", "0.05"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the socket", || socket.exists());

    // The greeting, then NBD_OPT_ABORT, acknowledged.
    let mut s = UnixStream::connect(&socket).unwrap();
    let mut greeting = [0u8; 18];
    s.read_exact(&mut greeting).unwrap();
    assert_eq!(&greeting[..16], b"NBDMAGICIHAVEOPT");
    s.write_all(&3u32.to_be_bytes()).unwrap();
    s.write_all(b"IHAVEOPT").unwrap();
    s.write_all(&[0, 0, 0, 2, 0, 0, 0, 0]).unwrap();
    let mut reply = [0u8; 20];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(&reply[8..16], &[0, 0, 0, 2, 0, 0, 0, 1], "NBD_REP_ACK to NBD_OPT_ABORT");

    wait_for("the stats file", || stats.exists());
    let live: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(live["exports"][0]["name"], "pagemap");
    assert_eq!(live["exports"][1]["ftl"], "dftl");
    assert!(live["exports"][0]["free_blocks"].as_u64().unwrap() > 0);

    let status = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exports"].as_array().unwrap().len(), 2);
    assert_eq!(report["exports"][0]["errors"], 0);
    assert!(report["exports"][0]["waf"].is_null(), "nothing written: no write amplification");
    assert!(!socket.exists(), "the socket file is removed on exit");
}
