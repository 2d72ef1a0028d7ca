//! What one client, or many, may hold of the server: bytes pinned by requests
//! (a flood of large reads that are never collected), connections, a
//! handshake never finished, an idle session; and the unix socket's file
//! (owner-only, left alone when another server has taken its path). In a
//! process of its own: the flood test measures this process's memory.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ftlab_server::proto::*;
use ftlab_server::{Export, ExportOptions, Limits, Listen, Listener, Server};
use ftlab_sim::device::Device;
use ftlab_sim::RunConfig;

fn device() -> Device {
    let toml = "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n[ftl]\nkind = \"pagemap\"\n";
    Device::open(&RunConfig::from_toml(toml, "test").unwrap()).unwrap()
}

struct Running {
    server: Arc<Server>,
    socket: PathBuf,
    thread: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.stop();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn start(limits: Limits) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nbd.sock");
    let export = Export::new("pm", device(), ExportOptions::default());
    let server = Arc::new(Server::new(vec![export]).unwrap().with_limits(limits));
    let listener = Listener::bind(&Listen::Unix(socket.clone())).unwrap();
    let s = server.clone();
    let thread = std::thread::spawn(move || s.serve(&listener).unwrap());
    Running { server, socket, thread: Some(thread), _dir: dir }
}

fn read_n<const N: usize>(s: &mut UnixStream) -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    s.read_exact(&mut b).map(|()| b)
}

/// Connects and reads the greeting; `None` if the server closed at once.
fn greet(socket: &Path) -> Option<UnixStream> {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let magic = read_n::<8>(&mut s).ok()?;
    assert_eq!(u64::from_be_bytes(magic), NBDMAGIC);
    read_n::<10>(&mut s).unwrap();
    s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
    Some(s)
}

/// Greeting, then EXPORT_NAME of the default export: in transmission.
fn transmitting(socket: &Path) -> UnixStream {
    let mut s = greet(socket).unwrap();
    let mut m = IHAVEOPT.to_be_bytes().to_vec();
    m.extend_from_slice(&OPT_EXPORT_NAME.to_be_bytes());
    m.extend_from_slice(&0u32.to_be_bytes());
    s.write_all(&m).unwrap();
    read_n::<10>(&mut s).unwrap(); // size and flags
    s
}

/// Whether the server has closed `s` (end of stream or reset).
fn closed(s: &mut UnixStream) -> bool {
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}

/// Resident memory of this process, bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4096
}

#[test]
fn a_flood_of_reads_never_collected_pins_at_most_the_connection_budget() {
    let limit = 64 << 20;
    let r = start(Limits { connection_bytes: limit, ..Limits::default() });
    let mut s = transmitting(&r.socket);
    let (reads, len) = (400u64, 8u32 << 20);
    let before = rss();
    // 400 reads of 8 MiB (3.2 GB if each pinned its buffer), 11 KB of requests,
    // sent without reading a single reply.
    let mut m = Vec::new();
    for cookie in 0..reads {
        RequestHeader { flags: 0, kind: CMD_READ, cookie, offset: 0, len }.write(&mut m).unwrap();
    }
    s.write_all(&m).unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut peak = 0;
    while Instant::now() < deadline {
        peak = peak.max(r.server.bytes_pinned());
        std::thread::sleep(Duration::from_millis(10));
    }
    let grown = rss().saturating_sub(before);
    // Pinned: up to the budget plus the request that crossed it.
    assert!(peak > limit / 2 && peak <= limit + u64::from(len) + 4096, "peak {peak}");
    assert!(grown < 1 << 30, "the server grew by {grown} bytes under the flood");
    // Every reply comes once the client reads: backpressure, not loss.
    for _ in 0..reads {
        let head = read_n::<16>(&mut s).unwrap();
        assert_eq!(u32::from_be_bytes(head[4..8].try_into().unwrap()), 0, "read error");
        let mut data = vec![0u8; len as usize];
        s.read_exact(&mut data).unwrap();
    }
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.server.bytes_pinned() != 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(r.server.bytes_pinned(), 0, "everything pinned is released with the connection");
}

#[test]
fn connections_past_the_limit_are_closed_and_the_others_served() {
    let r = start(Limits { max_connections: 2, ..Limits::default() });
    let a = greet(&r.socket).unwrap();
    let b = greet(&r.socket).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(greet(&r.socket).is_none(), "a third connection is closed at once");
    assert_eq!(r.server.connections(), (2, 1));
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut c = None;
    while c.is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        c = greet(&r.socket);
    }
    assert!(c.is_some(), "a place freed is taken again");
    drop(b);
}

#[test]
fn a_handshake_never_finished_and_an_idle_session_time_out() {
    let r = start(Limits {
        handshake_timeout: Duration::from_millis(200),
        idle_timeout: Some(Duration::from_millis(300)),
        ..Limits::default()
    });
    // Half a handshake: the greeting read, then silence.
    let mut half = greet(&r.socket).unwrap();
    half.write_all(&IHAVEOPT.to_be_bytes()[..3]).unwrap();
    let mut idle = transmitting(&r.socket);
    std::thread::sleep(Duration::from_millis(900));
    assert!(closed(&mut half), "the half handshake is closed");
    assert!(closed(&mut idle), "the idle session is closed");
    assert_eq!(r.server.connections().0, 0);
    // The server serves on.
    let mut s = transmitting(&r.socket);
    let mut m = Vec::new();
    RequestHeader { flags: 0, kind: CMD_READ, cookie: 5, offset: 0, len: 4096 }.write(&mut m).unwrap();
    s.write_all(&m).unwrap();
    let head = read_n::<16>(&mut s).unwrap();
    assert_eq!(u64::from_be_bytes(head[8..16].try_into().unwrap()), 5);
}

#[test]
fn the_socket_file_is_the_owner_s_and_left_alone_once_another_server_took_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sock");
    let first = Listener::bind(&Listen::Unix(path.clone())).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    // Another server replaces the path (say, after this one was thought dead).
    std::fs::remove_file(&path).unwrap();
    let second = Listener::bind(&Listen::Unix(path.clone())).unwrap();
    drop(first);
    assert!(path.exists(), "the first server's exit removed the second's socket");
    drop(second);
    assert!(!path.exists());
}
