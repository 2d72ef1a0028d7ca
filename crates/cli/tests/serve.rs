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
    // Values that hung the server, made every command fail or spun a thread:
    // refused, naming the flag and the range.
    for (flag, value) in [
        ("--pace", "1e300"),
        ("--pace", "1e-300"),
        ("--stats-interval", "1e-9"),
        ("--handshake-timeout", "0"),
        ("--idle-timeout", "nan"),
        ("--max-connections", "0"),
        ("--connection-mib", "1"),
    ] {
        ftlab()
            .args(["serve", "--listen", "unix:/tmp/x.sock", flag, value])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(flag).and(predicate::str::contains("give")));
    }
    // A misspelt export name in --image: not silently the main export's file.
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/x.sock", "--export", "dftl=dftl", "--image", "dtfl=/tmp/d.img"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no export is named `dtfl`"));
    // The raw zoned device is no block device: refused, naming the host FTL.
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/x.sock", "--export", "z=zns"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("zoned device").and(predicate::str::contains("zns-host")));
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

/// The stats file is rewritten when a client leaves, not only every
/// --stats-interval: read right after a client's session, it has its writes.
#[test]
fn the_stats_file_has_a_clients_writes_once_it_has_left() {
    use ftlab_server::proto::*;
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("s.sock");
    let stats = dir.path().join("stats.json");
    let mut child = ftlab()
        .args(["serve", "--chip", "small-slc", "--blocks-per-plane", "16"])
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--stats")
        .arg(&stats)
        .args(["--stats-interval", "3600"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the socket", || socket.exists());
    wait_for("the stats file", || stats.exists());
    let writes = |stats: &std::path::Path| {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap();
        v["exports"][0]["writes"].as_u64().unwrap()
    };
    assert_eq!(writes(&stats), 0);
    let mut s = nbd_connect(&socket);
    for i in 0..4u64 {
        assert_eq!(nbd_call(&mut s, CMD_WRITE, i * 4096, 4096, &[7u8; 4096]).0, 0);
    }
    let mut m = Vec::new();
    RequestHeader { flags: 0, kind: CMD_DISC, cookie: 2, offset: 0, len: 0 }.write(&mut m).unwrap();
    s.write_all(&m).unwrap();
    drop(s);
    // An hour's interval: only the client's leaving can rewrite the file.
    wait_for("the client's writes in the stats file", || writes(&stats) == 4);
    signal(&child, "-TERM");
    assert!(child.wait().unwrap().success());
}

/// A client in transmission with the default export (NBD_OPT_EXPORT_NAME "").
fn nbd_connect(socket: &std::path::Path) -> UnixStream {
    use ftlab_server::proto::*;
    let mut s = UnixStream::connect(socket).unwrap();
    let mut greeting = [0u8; 18];
    s.read_exact(&mut greeting).unwrap();
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    s.write_all(&IHAVEOPT.to_be_bytes()).unwrap();
    s.write_all(&OPT_EXPORT_NAME.to_be_bytes()).unwrap();
    s.write_all(&0u32.to_be_bytes()).unwrap();
    let mut size_and_flags = [0u8; 10];
    s.read_exact(&mut size_and_flags).unwrap();
    s
}

/// One request and its simple reply: the error and a read's bytes.
fn nbd_call(s: &mut UnixStream, kind: u16, offset: u64, len: u32, data: &[u8]) -> (u32, Vec<u8>) {
    use ftlab_server::proto::*;
    let mut m = Vec::new();
    RequestHeader { flags: 0, kind, cookie: 1, offset, len }.write(&mut m).unwrap();
    m.extend_from_slice(data);
    s.write_all(&m).unwrap();
    assert_eq!(read_u32(s).unwrap(), SIMPLE_REPLY_MAGIC);
    let error = read_u32(s).unwrap();
    assert_eq!(read_u64(s).unwrap(), 1);
    let mut out = vec![0; if kind == CMD_READ && error == 0 { len as usize } else { 0 }];
    s.read_exact(&mut out).unwrap();
    (error, out)
}

fn signal(child: &std::process::Child, sig: &str) {
    assert!(Command::new("kill").arg(sig).arg(child.id().to_string()).status().unwrap().success());
}

/// Starts `ftlab serve` on a write-back-buffered pagemap kept in `image`.
fn serve_with_image(dir: &std::path::Path, image: &std::path::Path) -> (std::process::Child, std::path::PathBuf) {
    let socket = dir.join("s.sock");
    let config = dir.join("dev.toml");
    std::fs::write(
        &config,
        "[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\nwrite_buffer_pages = 8\n[ftl]\nkind = \"pagemap\"\n",
    )
    .unwrap();
    // A server before this one may have left its socket behind: the socket
    // to wait for is this server's.
    let _ = std::fs::remove_file(&socket);
    let child = ftlab()
        .arg("serve")
        .arg(&config)
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .arg("--image")
        .arg(image)
        .arg("--stats")
        .arg(dir.join("stats.json"))
        .args(["--stats-interval", "0.05"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the socket", || socket.exists());
    (child, socket)
}

/// Written through NBD, SIGUSR1 cuts the power (the writes were acknowledged,
/// some from the write-back buffer: what the cut keeps is the FTL's contract),
/// SIGTERM saves the image; a new server opens it and reads back every write
/// acknowledged after the cut.
#[test]
fn an_image_keeps_the_device_across_restarts_and_sigusr1_cuts_the_power() {
    use ftlab_server::proto::*;
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("dev.img");
    let page = |i: u8| vec![i.wrapping_mul(37).wrapping_add(1); 4096];

    let (child, socket) = serve_with_image(dir.path(), &image);
    let mut s = nbd_connect(&socket);
    assert_eq!(nbd_call(&mut s, CMD_WRITE, 0, 4096, &page(0)).0, 0);
    assert_eq!(nbd_call(&mut s, CMD_FLUSH, 0, 0, &[]).0, 0);
    signal(&child, "-USR1");
    // The cut happens on the signal's thread: wait until the stats file counts it.
    let stats = dir.path().join("stats.json");
    wait_for("the power cut", || {
        std::fs::read_to_string(&stats)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v["exports"][0]["power_cuts"] == 1)
    });
    for i in 1..20u8 {
        assert_eq!(nbd_call(&mut s, CMD_WRITE, u64::from(i) * 4096, 4096, &page(i)).0, 0);
    }
    assert_eq!(nbd_call(&mut s, CMD_READ, 0, 4096, &[]).1, page(0));
    drop(s);
    signal(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("power cut at") && stderr.contains("on demand"), "{stderr}");
    assert!(stderr.contains("saved to"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exports"][0]["power_cuts"], 1);
    assert!(image.exists() && !dir.path().join("dev.img.tmp").exists());

    let (child, socket) = serve_with_image(dir.path(), &image);
    let mut s = nbd_connect(&socket);
    for i in 0..20u8 {
        assert_eq!(nbd_call(&mut s, CMD_READ, u64::from(i) * 4096, 4096, &[]).1, page(i), "page {i}");
    }
    drop(s);
    signal(&child, "-TERM");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("opened from"), "{stderr}");
}

#[test]
fn images_are_one_per_export_and_a_foreign_image_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("x.img");
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/ftlab-image-x.sock", "--export", "d=dftl"])
        .arg("--image")
        .arg(&image)
        .arg("--image")
        .arg(&image)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has an image already"));
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/ftlab-image-x.sock", "--export", "d=dftl"])
        .arg("--image")
        .arg(&image)
        .arg("--image")
        .arg(format!("d={}", image.display()))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a file of its own"));
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/ftlab-image-x.sock", "--image", "/nonexistent-dir/x.img"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent-dir does not exist"));
    std::fs::write(&image, b"not an image").unwrap();
    ftlab()
        .args(["serve", "--listen", "unix:/tmp/ftlab-image-x.sock"])
        .arg("--image")
        .arg(&image)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("x.img").and(predicate::str::contains("not an ftlab device image")));
}

/// A CA and a server certificate for localhost in `dir`, nbdkit's layout.
fn tls_dir(dir: &std::path::Path) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(dir.join("ca-cert.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("server-cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("server-key.pem"), key.serialize_pem()).unwrap();
}

/// What `ftlab serve ARGS` says on stderr up to its "listening on" line;
/// then it is stopped.
fn serve_banner(args: &[&str]) -> String {
    let mut child = ftlab()
        .args(["serve", "--chip", "small-slc", "--blocks-per-plane", "16"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains("ftlab serve: listening on") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0, "ftlab serve {args:?} ended: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    text
}

#[test]
fn tls_flags_and_the_warnings_about_exposure() {
    let dir = tempfile::tempdir().unwrap();
    tls_dir(dir.path());
    let certs = dir.path().to_str().unwrap();
    ftlab()
        .args(["serve", "--tls", "require"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs --tls-certificates DIR"));
    ftlab()
        .args(["serve", "--tls-certificates", "/nonexistent"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/server-cert.pem is missing"));
    ftlab()
        .args(["serve", "--tls-verify-peer"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--tls-certificates"));
    ftlab()
        .args(["serve", "--tls", "off", "--tls-certificates", certs])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("leave one out"));
    // The default listens on loopback: no warning.
    let banner = serve_banner(&["--listen", "tcp:127.0.0.1:0"]);
    assert!(!banner.contains("warning"), "{banner}");
    // Every interface, no TLS: warned.
    let banner = serve_banner(&["--listen", "tcp:0.0.0.0:0"]);
    assert!(banner.contains("warning: listening on every interface") && banner.contains("in the clear"), "{banner}");
    // TLS required but anyone may present no certificate: warned.
    let banner = serve_banner(&["--listen", "tcp:0.0.0.0:0", "--tls-certificates", certs]);
    assert!(banner.contains("TLS required") && banner.contains("add --tls-verify-peer"), "{banner}");
    // TLS and client certificates required: nothing to warn about.
    let banner = serve_banner(&["--listen", "tcp:0.0.0.0:0", "--tls-certificates", certs, "--tls-verify-peer"]);
    assert!(banner.contains("clients must present a certificate") && !banner.contains("warning"), "{banner}");
}
