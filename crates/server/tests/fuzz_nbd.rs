//! Fuzzing the NBD server with hostile byte streams over several connections
//! at once: random bytes, and streams built from protocol pieces (greetings
//! with any flags, options of any code, length and data, GO and EXPORT_NAME
//! of any name, requests of any command, flags, offset and length, with or
//! without their payloads, disconnects) cut anywhere. Whatever arrives, the
//! server must not panic, must end every connection (nothing left open or
//! pinned once the clients are gone), and must go on serving a well-behaved
//! client, whose writes read back.
//!
//! For a long run outside CI: `FTLAB_FUZZ_CASES=2000 cargo test --release -p
//! ftlab-server --test fuzz_nbd`; proptest keeps failures in
//! `fuzz_nbd.proptest-regressions` and replays them in every later run.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ftlab_server::proto::*;
use ftlab_server::{Export, ExportOptions, Limits, Listen, Listener, Server};
use ftlab_sim::device::Device;
use ftlab_sim::RunConfig;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("FTLAB_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(16)
}

/// One piece of a client's stream.
#[derive(Debug, Clone)]
enum Piece {
    Bytes(Vec<u8>),
    ClientFlags(u32),
    Option { code: u32, data: Vec<u8>, claimed: Option<u32> },
    Go { name: Vec<u8>, infos: Vec<u16> },
    ExportName(Vec<u8>),
    Request { kind: u16, flags: u16, offset: u64, len: u32, payload: Option<Vec<u8>> },
}

fn name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        Just(b"pm".to_vec()),
        Just(b"d".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..40),
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(Piece::Bytes),
        prop_oneof![Just(3u32), Just(1), any::<u32>()].prop_map(Piece::ClientFlags),
        (
            prop_oneof![0u32..12, any::<u32>()],
            proptest::collection::vec(any::<u8>(), 0..48),
            proptest::option::of(prop_oneof![0u32..64, any::<u32>()])
        )
            .prop_map(|(code, data, claimed)| Piece::Option { code, data, claimed }),
        (name(), proptest::collection::vec(0u16..6, 0..4)).prop_map(|(name, infos)| Piece::Go { name, infos }),
        name().prop_map(Piece::ExportName),
        request(),
    ]
}

fn request() -> impl Strategy<Value = Piece> {
    let size = 1u64 << 20;
    (
        // The data commands mostly; a disconnect, an unknown command, any code now and then.
        prop_oneof![
            12 => proptest::sample::select(vec![CMD_READ, CMD_WRITE, CMD_FLUSH, CMD_TRIM, CMD_WRITE_ZEROES]),
            1 => Just(CMD_DISC),
            1 => any::<u16>()
        ],
        prop_oneof![6 => Just(0u16), 2 => Just(CMD_FLAG_FUA), 1 => 0u16..4, 1 => any::<u16>()],
        prop_oneof![3 => (0u64..256).prop_map(|s| s * 512), 1 => 0u64..size, 1 => any::<u64>()],
        prop_oneof![3 => (1u32..17).prop_map(|s| s * 512), 1 => 0u32..9000, 1 => any::<u32>()],
        prop_oneof![9 => Just(true), 1 => Just(false)],
        any::<u8>(),
    )
        .prop_map(move |(kind, flags, offset, len, send, fill)| {
            // A write's payload as long as it claims (up to 8 KiB), or none.
            let payload = (kind == CMD_WRITE && send && len <= 8192).then(|| vec![fill; len as usize]);
            Piece::Request { kind, flags, offset, len, payload }
        })
}

fn encode(pieces: &[Piece]) -> Vec<u8> {
    let mut m = Vec::new();
    for p in pieces {
        match p {
            Piece::Bytes(b) => m.extend_from_slice(b),
            Piece::ClientFlags(f) => m.extend_from_slice(&f.to_be_bytes()),
            Piece::Option { code, data, claimed } => {
                m.extend_from_slice(&IHAVEOPT.to_be_bytes());
                m.extend_from_slice(&code.to_be_bytes());
                m.extend_from_slice(&claimed.unwrap_or(data.len() as u32).to_be_bytes());
                m.extend_from_slice(data);
            }
            Piece::Go { name, infos } => {
                m.extend_from_slice(&IHAVEOPT.to_be_bytes());
                m.extend_from_slice(&OPT_GO.to_be_bytes());
                m.extend_from_slice(&((4 + name.len() + 2 + 2 * infos.len()) as u32).to_be_bytes());
                m.extend_from_slice(&(name.len() as u32).to_be_bytes());
                m.extend_from_slice(name);
                m.extend_from_slice(&(infos.len() as u16).to_be_bytes());
                for i in infos {
                    m.extend_from_slice(&i.to_be_bytes());
                }
            }
            Piece::ExportName(name) => {
                m.extend_from_slice(&IHAVEOPT.to_be_bytes());
                m.extend_from_slice(&OPT_EXPORT_NAME.to_be_bytes());
                m.extend_from_slice(&(name.len() as u32).to_be_bytes());
                m.extend_from_slice(name);
            }
            Piece::Request { kind, flags, offset, len, payload } => {
                RequestHeader { flags: *flags, kind: *kind, cookie: 9, offset: *offset, len: *len }
                    .write(&mut m)
                    .unwrap();
                if let Some(p) = payload {
                    m.extend_from_slice(p);
                }
            }
        }
    }
    m
}

/// A stream that starts as a real client's would (the flags, GO `pm`) and
/// then goes wrong, or one that is hostile from the first byte.
fn stream() -> impl Strategy<Value = Vec<Piece>> {
    let pieces = || proptest::collection::vec(piece(), 0..12);
    prop_oneof![
        pieces(),
        (prop_oneof![Just(b"pm".to_vec()), Just(b"d".to_vec())], proptest::collection::vec(request(), 0..24), pieces())
            .prop_map(|(name, requests, tail)| {
                let mut v = vec![Piece::ClientFlags(3), Piece::Go { name, infos: vec![3] }];
                v.extend(requests);
                v.extend(tail);
                v
            }),
    ]
}

struct Running {
    server: Arc<Server>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.stop();
        if let Some(t) = self.thread.take() {
            // A panic in the server (a connection thread's included) fails here.
            t.join().unwrap();
        }
    }
}

fn device(kind: &str) -> Device {
    let toml = format!("seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n[ftl]\nkind = \"{kind}\"\n");
    Device::open(&RunConfig::from_toml(&toml, "fuzz").unwrap()).unwrap()
}

/// Sends `bytes` on a new connection, reading (and dropping) whatever the
/// server answers until it closes or a second passes after the last byte.
fn hostile(socket: &Path, bytes: &[u8]) {
    let Ok(mut s) = UnixStream::connect(socket) else { return };
    s.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let mut r = s.try_clone().unwrap();
    let drain = std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        let mut quiet = 0;
        while quiet < 10 {
            match r.read(&mut buf) {
                Ok(0) => return,
                Ok(_) => quiet = 0,
                Err(_) => quiet += 1,
            }
        }
    });
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    drain.join().unwrap();
}

/// A well-behaved client: GO `pm`, a write, a read of it, a disconnect.
fn well_behaved(socket: &Path, fill: u8) {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut greeting = [0u8; 18];
    s.read_exact(&mut greeting).unwrap();
    let mut m = encode(&[Piece::ClientFlags(3), Piece::ExportName(b"pm".to_vec())]);
    s.write_all(&m).unwrap();
    let mut export = [0u8; 10];
    s.read_exact(&mut export).unwrap();
    m.clear();
    let data = vec![fill; 4096];
    RequestHeader { flags: 0, kind: CMD_WRITE, cookie: 1, offset: 8192, len: 4096 }.write(&mut m).unwrap();
    m.extend_from_slice(&data);
    RequestHeader { flags: 0, kind: CMD_READ, cookie: 2, offset: 8192, len: 4096 }.write(&mut m).unwrap();
    s.write_all(&m).unwrap();
    let mut reply = [0u8; 16];
    s.read_exact(&mut reply).unwrap();
    assert_eq!((read_u32(&mut &reply[4..8]).unwrap(), read_u64(&mut &reply[8..]).unwrap()), (0, 1), "the write");
    s.read_exact(&mut reply).unwrap();
    assert_eq!((read_u32(&mut &reply[4..8]).unwrap(), read_u64(&mut &reply[8..]).unwrap()), (0, 2), "the read");
    let mut back = vec![0u8; 4096];
    s.read_exact(&mut back).unwrap();
    assert_eq!(back, data, "a well-behaved client reads back its write");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn hostile_streams_on_several_connections_never_break_the_server(
        streams in proptest::collection::vec(stream(), 1..5),
        fill in any::<u8>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("f.sock");
        let exports = vec![
            Export::new("pm", device("pagemap"), ExportOptions::default()),
            Export::new("d", device("dftl"), ExportOptions { cut_after: Some(5), ..ExportOptions::default() }),
        ];
        let limits = Limits { handshake_timeout: Duration::from_secs(2), ..Limits::default() };
        let server = Arc::new(Server::new(exports).unwrap().with_limits(limits));
        let listener = Listener::bind(&Listen::Unix(socket.clone())).unwrap();
        let s = server.clone();
        let running = Running { server: server.clone(), thread: Some(std::thread::spawn(move || s.serve(&listener).unwrap())) };
        let clients: Vec<_> = streams
            .iter()
            .map(|pieces| {
                let (socket, bytes) = (socket.clone(), encode(pieces));
                std::thread::spawn(move || hostile(&socket, &bytes))
            })
            .collect();
        for c in clients {
            c.join().unwrap();
        }
        well_behaved(&socket, fill);
        // Every hostile connection ends (a half-sent write's payload or a
        // half handshake waits for at most the timeouts), and nothing stays pinned.
        let deadline = Instant::now() + Duration::from_secs(10);
        while (server.connections().0 > 0 || server.bytes_pinned() > 0) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        prop_assert_eq!(server.connections().0, 0, "connections left open");
        prop_assert_eq!(server.bytes_pinned(), 0, "bytes left pinned");
        drop(running);
    }
}
