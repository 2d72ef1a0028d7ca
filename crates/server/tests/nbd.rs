//! The NBD protocol spoken by hand over a unix socket to a server started in
//! this process: negotiation (LIST, INFO, GO, EXPORT_NAME, unsupported
//! options), data commands against a byte model, FUA, errors with their codes,
//! replies out of request order with several requests in flight, a client that
//! leaves mid-request, two exports and two connections, power cuts (after N
//! commands and on demand), a flush that fails after a cut lost unflushed
//! writes, device images kept across a restart and a crash, and locked.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use ftlab_server::proto::*;
use ftlab_server::{Export, ExportOptions, Listen, Listener, Server, MAX_PAYLOAD};
use ftlab_sim::device::Device;
use ftlab_sim::RunConfig;

/// A small device (small-slc, 16 blocks per plane) with FTL `kind`.
fn device(kind: &str) -> Device {
    let toml = format!("seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n[ftl]\nkind = \"{kind}\"\n");
    Device::open(&RunConfig::from_toml(&toml, "test").unwrap()).unwrap()
}

/// A running server; stopped (and joined) when dropped.
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

impl Running {
    /// Stops the server and waits until it has returned: every connection
    /// closed, every command answered.
    fn stop(mut self) -> Arc<Server> {
        self.server.stop();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        self.server.clone()
    }
}

fn start(exports: &[(&str, &str)], options: ExportOptions) -> Running {
    let exports = exports.iter().map(|(name, kind)| Export::new(*name, device(kind), options.clone())).collect();
    start_exports(exports)
}

fn start_exports(exports: Vec<Export>) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nbd.sock");
    let server = Arc::new(Server::new(exports).unwrap());
    let listener = Listener::bind(&Listen::Unix(socket.clone())).unwrap();
    let s = server.clone();
    let thread = std::thread::spawn(move || s.serve(&listener).unwrap());
    Running { server, socket, thread: Some(thread), _dir: dir }
}

/// The client side.
struct Client {
    s: UnixStream,
    /// Read requests in flight: cookie → length.
    reads: HashMap<u64, u32>,
}

impl Client {
    /// Connects and does the greeting with FIXED_NEWSTYLE | NO_ZEROES.
    fn connect(r: &Running) -> Client {
        let mut s = UnixStream::connect(&r.socket).unwrap();
        assert_eq!(read_u64(&mut s).unwrap(), NBDMAGIC);
        assert_eq!(read_u64(&mut s).unwrap(), IHAVEOPT);
        assert_eq!(read_u16(&mut s).unwrap(), FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
        s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
        Client { s, reads: HashMap::new() }
    }

    fn send_option(&mut self, option: u32, data: &[u8]) {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&option.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
    }

    /// Sends an option and collects its replies up to the final one.
    fn option(&mut self, option: u32, data: &[u8]) -> Vec<(u32, Vec<u8>)> {
        self.send_option(option, data);
        let mut replies = Vec::new();
        loop {
            assert_eq!(read_u64(&mut self.s).unwrap(), OPT_REPLY_MAGIC);
            assert_eq!(read_u32(&mut self.s).unwrap(), option);
            let kind = read_u32(&mut self.s).unwrap();
            let mut body = vec![0; read_u32(&mut self.s).unwrap() as usize];
            self.s.read_exact(&mut body).unwrap();
            replies.push((kind, body));
            if kind != REP_SERVER && kind != REP_INFO {
                return replies;
            }
        }
    }

    fn info_data(name: &str, wanted: &[u16]) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&(wanted.len() as u16).to_be_bytes());
        for w in wanted {
            d.extend_from_slice(&w.to_be_bytes());
        }
        d
    }

    /// GO to `name`: the export's size.
    fn go(&mut self, name: &str) -> u64 {
        let replies = self.option(OPT_GO, &Self::info_data(name, &[INFO_BLOCK_SIZE]));
        assert_eq!(replies.last().unwrap().0, REP_ACK, "GO {name}: {replies:?}");
        let export = replies.iter().find(|(_, b)| b[..2] == INFO_EXPORT.to_be_bytes()).unwrap();
        u64::from_be_bytes(export.1[2..10].try_into().unwrap())
    }

    fn request(&mut self, kind: u16, flags: u16, cookie: u64, offset: u64, len: u32, data: &[u8]) {
        let mut m = Vec::new();
        RequestHeader { flags, kind, cookie, offset, len }.write(&mut m).unwrap();
        m.extend_from_slice(data);
        if kind == CMD_READ {
            self.reads.insert(cookie, len);
        }
        self.s.write_all(&m).unwrap();
    }

    /// The next reply: error, cookie, a successful read's data.
    fn reply(&mut self) -> (u32, u64, Vec<u8>) {
        assert_eq!(read_u32(&mut self.s).unwrap(), SIMPLE_REPLY_MAGIC);
        let error = read_u32(&mut self.s).unwrap();
        let cookie = read_u64(&mut self.s).unwrap();
        let len = self.reads.remove(&cookie).unwrap_or(0);
        let mut data = vec![0; if error == 0 { len as usize } else { 0 }];
        self.s.read_exact(&mut data).unwrap();
        (error, cookie, data)
    }

    /// One request, then its reply (which must be for it).
    fn call(&mut self, kind: u16, flags: u16, offset: u64, len: u32, data: &[u8]) -> (u32, Vec<u8>) {
        self.request(kind, flags, 77, offset, len, data);
        let (error, cookie, data) = self.reply();
        assert_eq!(cookie, 77);
        (error, data)
    }

    fn write(&mut self, offset: u64, data: &[u8]) {
        assert_eq!(self.call(CMD_WRITE, 0, offset, data.len() as u32, data).0, 0);
    }

    fn read(&mut self, offset: u64, len: u32) -> Vec<u8> {
        let (error, data) = self.call(CMD_READ, 0, offset, len, &[]);
        assert_eq!(error, 0);
        data
    }

    fn disconnect(mut self) {
        self.request(CMD_DISC, 0, 0, 0, 0, &[]);
        let mut rest = Vec::new();
        // The server closes after a DISC: end of stream, nothing sent.
        self.s.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    }
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_mul(31).wrapping_add((i % 251) as u8)).collect()
}

#[test]
fn negotiation_lists_describes_and_refuses_what_it_does_not_support() {
    let r = start(&[("pm", "pagemap"), ("gftl", "gftl")], ExportOptions::default());
    let mut c = Client::connect(&r);
    let list = c.option(OPT_LIST, &[]);
    assert_eq!(list.len(), 3);
    assert_eq!(list[2].0, REP_ACK);
    let names: Vec<String> =
        list[..2].iter().map(|(_, b)| String::from_utf8_lossy(&b[4..4 + b[3] as usize]).into_owned()).collect();
    assert_eq!(names, ["pm", "gftl"]);
    assert_eq!(c.option(OPT_LIST, b"x")[0].0, REP_ERR_INVALID);

    // INFO: export size and flags, block sizes, name and description.
    let info = c.option(OPT_INFO, &Client::info_data("gftl", &[INFO_BLOCK_SIZE, INFO_NAME, INFO_DESCRIPTION]));
    assert_eq!(info.last().unwrap().0, REP_ACK);
    let item = |kind: u16| info.iter().find(|(t, b)| *t == REP_INFO && b[..2] == kind.to_be_bytes()).unwrap().1.clone();
    let export = item(INFO_EXPORT);
    assert_eq!(u64::from_be_bytes(export[2..10].try_into().unwrap()), r.server.exports()[1].size());
    let flags = u16::from_be_bytes(export[10..12].try_into().unwrap());
    for f in [FLAG_HAS_FLAGS, FLAG_SEND_FLUSH, FLAG_SEND_FUA, FLAG_SEND_TRIM, FLAG_SEND_WRITE_ZEROES] {
        assert_ne!(flags & f, 0, "flag {f:#x} in {flags:#x}");
    }
    let sizes = item(INFO_BLOCK_SIZE);
    let size = |i: usize| u32::from_be_bytes(sizes[2 + 4 * i..6 + 4 * i].try_into().unwrap());
    assert_eq!((size(0), size(1), size(2)), (512, device("gftl").page_size() as u32, MAX_PAYLOAD));
    assert_eq!(&item(INFO_NAME)[2..], b"gftl");
    assert!(String::from_utf8_lossy(&item(INFO_DESCRIPTION)).contains("gftl"));

    // Unknown export, malformed INFO, structured replies and unknown options.
    let unknown = c.option(OPT_GO, &Client::info_data("nope", &[]));
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].0, REP_ERR_UNKNOWN);
    assert!(String::from_utf8_lossy(&unknown[0].1).contains("pm, gftl"));
    assert_eq!(c.option(OPT_INFO, &[0, 0, 0, 9, b'x'])[0].0, REP_ERR_INVALID);
    assert_eq!(c.option(8, &[])[0].0, REP_ERR_UNSUP, "structured replies are refused");
    assert_eq!(c.option(0x1234, b"data")[0].0, REP_ERR_UNSUP);

    // GO with the empty name: the default (first) export.
    assert_eq!(c.go(""), r.server.exports()[0].size());
    c.write(0, &[5; 4096]);
    c.disconnect();

    // ABORT is acknowledged.
    let mut c = Client::connect(&r);
    assert_eq!(c.option(OPT_ABORT, &[])[0].0, REP_ACK);
}

#[test]
fn export_name_enters_transmission_without_zeroes() {
    let r = start(&[("pm", "pagemap")], ExportOptions::default());
    let mut c = Client::connect(&r);
    c.send_option(OPT_EXPORT_NAME, b"pm");
    assert_eq!(read_u64(&mut c.s).unwrap(), r.server.exports()[0].size());
    assert_eq!(read_u16(&mut c.s).unwrap() & FLAG_HAS_FLAGS, FLAG_HAS_FLAGS);
    // No 124 zeroes: the next bytes are the first reply.
    c.write(4096, &[1; 512]);
    assert_eq!(c.read(4096, 512), vec![1; 512]);

    // An unknown name ends the session.
    let mut c = Client::connect(&r);
    c.send_option(OPT_EXPORT_NAME, b"nope");
    let mut rest = Vec::new();
    c.s.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
}

#[test]
fn data_commands_keep_real_bytes() {
    for kind in ["pagemap", "dftl", "nftl"] {
        let r = start(&[(kind, kind)], ExportOptions::default());
        let mut c = Client::connect(&r);
        let size = c.go(kind);
        let ps = r.server.exports()[0].preferred_block() as usize;
        let mut model = vec![0u8; 64 * ps];
        fn put(c: &mut Client, model: &mut [u8], offset: usize, data: Vec<u8>, flags: u16) {
            assert_eq!(c.call(CMD_WRITE, flags, offset as u64, data.len() as u32, &data).0, 0);
            model[offset..offset + data.len()].copy_from_slice(&data);
        }
        put(&mut c, &mut model, 0, pattern(1, 8 * ps), 0);
        put(&mut c, &mut model, 512, pattern(2, 1024), CMD_FLAG_FUA);
        put(&mut c, &mut model, 3 * ps + 1536, pattern(3, 2 * ps), 0);
        assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
        // Write zeroes that may trim, and that must not (NO_HOLE), with FUA.
        assert_eq!(c.call(CMD_WRITE_ZEROES, 0, ps as u64, ps as u32, &[]).0, 0);
        assert_eq!(c.call(CMD_WRITE_ZEROES, CMD_FLAG_NO_HOLE | CMD_FLAG_FUA, 2 * ps as u64 + 512, 1024, &[]).0, 0);
        model[ps..2 * ps].fill(0);
        model[2 * ps + 512..2 * ps + 1536].fill(0);
        assert_eq!(c.read(0, (8 * ps) as u32), model[..8 * ps], "{kind}");
        // Trim then read: trimmed whole pages read as zeroes, or keep their data
        // where the FTL has no trim; a write after it is what reads back.
        assert_eq!(c.call(CMD_TRIM, 0, 4 * ps as u64, 2 * ps as u32, &[]).0, 0);
        let trimmed = c.read(4 * ps as u64, 2 * ps as u32);
        assert!(trimmed == vec![0; 2 * ps] || trimmed == model[4 * ps..6 * ps], "{kind}: trim left other bytes");
        put(&mut c, &mut model, 4 * ps, pattern(4, 2 * ps), 0);
        assert_eq!(c.read(0, (8 * ps) as u32), model[..8 * ps], "{kind}");
        // The last sector of the export.
        c.write(size - 512, &[9; 512]);
        assert_eq!(c.read(size - 512, 512), vec![9; 512]);
        c.disconnect();
        let stats = r.server.stats();
        assert_eq!(stats[0].counters.errors, 0);
        assert!(stats[0].counters.flushes >= 1);
    }
}

#[test]
fn bad_requests_get_error_codes_and_the_connection_stays() {
    let r = start(&[("pm", "pagemap")], ExportOptions::default());
    let mut c = Client::connect(&r);
    let size = c.go("pm");
    let cases: [(u16, u16, u64, u32, u32); 9] = [
        (CMD_READ, 0, 100, 512, EINVAL),              // misaligned offset
        (CMD_READ, 0, 0, 100, EINVAL),                // misaligned length
        (CMD_READ, 0, size, 512, EINVAL),             // past the end
        (CMD_TRIM, 0, size - 512, 1024, EINVAL),      // past the end
        (CMD_WRITE_ZEROES, 0, size, 512, ENOSPC),     // past the end
        (CMD_READ, 0, 0, MAX_PAYLOAD + 512, EINVAL),  // over the maximum payload
        (CMD_READ, CMD_FLAG_NO_HOLE, 0, 512, EINVAL), // a flag not for reads
        (CMD_READ, 1 << 7, 0, 512, EINVAL),           // an unknown flag
        (42, 0, 0, 512, EINVAL),                      // an unknown command
    ];
    for (kind, flags, offset, len, want) in cases {
        assert_eq!(c.call(kind, flags, offset, len, &[]).0, want, "command {kind} flags {flags} at {offset} len {len}");
    }
    assert_eq!(c.call(CMD_WRITE, 0, size, 512, &[0; 512]).0, ENOSPC);
    assert_eq!(c.call(CMD_WRITE, 0, 512, 700, &[0; 700]).0, EINVAL);
    // A write over the maximum payload: its bytes are skipped, the reply is EINVAL.
    let big = vec![3u8; MAX_PAYLOAD as usize + 512];
    assert_eq!(c.call(CMD_WRITE, 0, 0, big.len() as u32, &big).0, EINVAL);
    // Still in step after all of them.
    c.write(0, &[8; 1024]);
    assert_eq!(c.read(0, 1024), vec![8; 1024]);
    c.disconnect();
    let stats = r.server.stats();
    assert_eq!(stats[0].counters.writes, 1, "no refused write reached the device");
}

#[test]
fn replies_come_in_completion_order_with_requests_in_flight() {
    let r = start(&[("pm", "pagemap")], ExportOptions::default());
    let mut c = Client::connect(&r);
    c.go("pm");
    let ps = r.server.exports()[0].preferred_block();
    c.write(0, &pattern(7, ps as usize));
    // One buffer: a 32-page write, then a read of a page never written (no
    // flash work, done at once), then a read of page 0 (behind the write on its die,
    // or not): the first read overtakes.
    let mut m = Vec::new();
    let big = pattern(8, 32 * ps as usize);
    RequestHeader { flags: 0, kind: CMD_WRITE, cookie: 1, offset: 64 * u64::from(ps), len: 32 * ps }
        .write(&mut m)
        .unwrap();
    m.extend_from_slice(&big);
    RequestHeader { flags: 0, kind: CMD_READ, cookie: 2, offset: 200 * u64::from(ps), len: ps }.write(&mut m).unwrap();
    RequestHeader { flags: 0, kind: CMD_READ, cookie: 3, offset: 0, len: ps }.write(&mut m).unwrap();
    c.reads.insert(2, ps);
    c.reads.insert(3, ps);
    c.s.write_all(&m).unwrap();
    let replies: Vec<(u32, u64, Vec<u8>)> = (0..3).map(|_| c.reply()).collect();
    let order: Vec<u64> = replies.iter().map(|r| r.1).collect();
    assert_eq!(order[0], 2, "the read with no flash work overtakes the long write: {order:?}");
    assert!(replies.iter().all(|r| r.0 == 0));
    let data = |cookie| replies.iter().find(|r| r.1 == cookie).unwrap().2.clone();
    assert_eq!(data(2), vec![0; ps as usize]);
    assert_eq!(data(3), pattern(7, ps as usize));
    assert_eq!(c.read(64 * u64::from(ps), 32 * ps), big);

    // Sixteen in flight, written and read back.
    let mut m = Vec::new();
    for i in 0..16u64 {
        RequestHeader { flags: 0, kind: CMD_WRITE, cookie: 100 + i, offset: i * 3 * u64::from(ps), len: ps }
            .write(&mut m)
            .unwrap();
        m.extend_from_slice(&pattern(i as u8, ps as usize));
    }
    c.s.write_all(&m).unwrap();
    let mut cookies: Vec<u64> = (0..16)
        .map(|_| c.reply())
        .map(|(e, cookie, _)| {
            assert_eq!(e, 0);
            cookie
        })
        .collect();
    cookies.sort_unstable();
    assert_eq!(cookies, (100..116).collect::<Vec<_>>());
    for i in 0..16u64 {
        assert_eq!(c.read(i * 3 * u64::from(ps), ps), pattern(i as u8, ps as usize));
    }
    c.disconnect();
}

#[test]
fn a_client_leaving_mid_request_closes_only_its_connection() {
    let r = start(&[("pm", "pagemap")], ExportOptions::default());
    let mut keep = Client::connect(&r);
    keep.go("pm");
    keep.write(0, &[1; 4096]);

    // Half a write payload, then gone.
    let mut c = Client::connect(&r);
    c.go("pm");
    let mut m = Vec::new();
    RequestHeader { flags: 0, kind: CMD_WRITE, cookie: 1, offset: 0, len: 4096 }.write(&mut m).unwrap();
    m.extend_from_slice(&[2; 100]);
    c.s.write_all(&m).unwrap();
    drop(c);
    // Half a header, then gone; a bad magic.
    let mut c = Client::connect(&r);
    c.go("pm");
    c.s.write_all(&REQUEST_MAGIC.to_be_bytes()).unwrap();
    drop(c);
    let mut c = Client::connect(&r);
    c.go("pm");
    c.s.write_all(&[0xff; 28]).unwrap();
    let mut rest = Vec::new();
    c.s.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "a bad magic closes the connection");
    // Gone during negotiation.
    let mut c = Client::connect(&r);
    c.s.write_all(&IHAVEOPT.to_be_bytes()).unwrap();
    drop(c);

    // The other connection and new ones carry on; the torn write wrote nothing.
    assert_eq!(keep.read(0, 4096), vec![1; 4096]);
    let mut c = Client::connect(&r);
    c.go("pm");
    assert_eq!(c.read(0, 4096), vec![1; 4096]);
    c.disconnect();
    keep.disconnect();
}

#[test]
fn connections_and_exports_share_or_keep_their_devices() {
    let r = start(&[("a", "pagemap"), ("b", "lazy-rtgc")], ExportOptions::default());
    let mut a1 = Client::connect(&r);
    a1.go("a");
    let mut a2 = Client::connect(&r);
    a2.go("a");
    let mut b = Client::connect(&r);
    b.go("b");
    a1.write(8192, &[4; 2048]);
    b.write(8192, &[6; 2048]);
    // One device per export, shared by its connections.
    assert_eq!(a2.read(8192, 2048), vec![4; 2048]);
    assert_eq!(b.read(8192, 2048), vec![6; 2048]);
    // Both connections of `a` with requests in flight at once.
    let ps = r.server.exports()[0].preferred_block();
    for (i, c) in [&mut a1, &mut a2].into_iter().enumerate() {
        for j in 0..8u64 {
            let offset = (i as u64 * 8 + j) * u64::from(ps);
            c.request(CMD_WRITE, 0, j, offset, ps, &pattern((i * 8) as u8 + j as u8, ps as usize));
        }
    }
    for c in [&mut a1, &mut a2] {
        for _ in 0..8 {
            assert_eq!(c.reply().0, 0);
        }
    }
    for k in 0..16u64 {
        assert_eq!(b.read(0, 512), vec![0; 512]);
        assert_eq!(a2.read(k * u64::from(ps), ps), pattern(k as u8, ps as usize));
    }
    let stats = r.server.stats();
    assert_eq!((stats[0].name.as_str(), stats[0].ftl), ("a", "pagemap"));
    assert_eq!(stats[1].ftl, "lazy-rtgc");
    assert_eq!(stats[0].counters.writes, 17);
    assert_eq!(stats[1].counters.writes, 1);
    for c in [a1, a2, b] {
        c.disconnect();
    }
}

#[test]
fn a_power_cut_after_n_commands_recovers_and_keeps_acknowledged_writes() {
    let r = start(&[("pm", "pagemap")], ExportOptions { cut_after: Some(3), ..ExportOptions::default() });
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..6u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    for i in 0..6u64 {
        assert_eq!(c.read(i * 4096, 4096), pattern(i as u8, 4096), "write {i}");
    }
    c.disconnect();
    let stats = r.server.stats();
    assert_eq!(stats[0].power_cuts, 1);
    assert_eq!(stats[0].counters.errors, 0);
}

#[test]
fn paced_replies_carry_the_same_bytes() {
    let r = start(&[("pm", "pagemap")], ExportOptions { pace: Some(1.0), ..ExportOptions::default() });
    let mut c = Client::connect(&r);
    c.go("pm");
    let mut m = Vec::new();
    for i in 0..8u64 {
        RequestHeader { flags: 0, kind: CMD_WRITE, cookie: i, offset: i * 4096, len: 4096 }.write(&mut m).unwrap();
        m.extend_from_slice(&pattern(i as u8, 4096));
    }
    c.s.write_all(&m).unwrap();
    for _ in 0..8 {
        assert_eq!(c.reply().0, 0);
    }
    for i in 0..8u64 {
        assert_eq!(c.read(i * 4096, 4096), pattern(i as u8, 4096));
    }
    c.disconnect();
    assert!(r.server.stats()[0].counters.now_ns > 0);
}

#[test]
fn a_power_cut_on_demand_recovers_and_keeps_acknowledged_writes() {
    let r = start(&[("pm", "pagemap"), ("d", "dftl")], ExportOptions::default());
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..4u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    let cuts = r.server.cut_power();
    assert_eq!(cuts.len(), 2);
    assert!(cuts.iter().all(|(_, cut)| cut.is_ok()), "{cuts:?}");
    for i in 0..4u64 {
        assert_eq!(c.read(i * 4096, 4096), pattern(i as u8, 4096), "write {i}");
    }
    c.write(0, &pattern(9, 4096));
    assert_eq!(c.read(0, 4096), pattern(9, 4096));
    c.disconnect();
    let stats = r.server.stats();
    assert_eq!((stats[0].power_cuts, stats[1].power_cuts), (1, 1));
    assert_eq!(stats[0].counters.errors, 0);
}

/// A config for FTL `kind` with extra `[device]` lines.
fn config(kind: &str, device_extra: &str) -> RunConfig {
    let toml = format!(
        "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n{device_extra}\n[ftl]\nkind = \"{kind}\"\n"
    );
    RunConfig::from_toml(&toml, "test").unwrap()
}

/// Each export's device from its image if the file exists, else formatted,
/// saved to it when the server stops.
fn image_exports(dir: &std::path::Path, specs: &[(&str, &RunConfig)]) -> Vec<Export> {
    specs
        .iter()
        .map(|(name, config)| {
            let path = dir.join(format!("{name}.img"));
            let device =
                if path.exists() { Device::open_image(config, &path).unwrap() } else { Device::open(config).unwrap() };
            Export::new(*name, device, ExportOptions::default()).with_image(path).unwrap()
        })
        .collect()
}

#[test]
fn a_device_image_keeps_every_write_across_a_restart() {
    let images = tempfile::tempdir().unwrap();
    // A write-back buffer: what it holds at the stop is flushed into the image.
    let pm = config("pagemap", "write_buffer_pages = 16");
    let dftl = config("dftl", "");
    let specs = [("pm", &pm), ("d", &dftl)];
    let r = start_exports(image_exports(images.path(), &specs));
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..40u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    // A partial page.
    c.write(7 * 4096 + 1024, &pattern(99, 1024));
    c.disconnect();
    let mut c = Client::connect(&r);
    c.go("d");
    for i in 0..10u64 {
        c.write(i * 8192, &pattern(i as u8 + 100, 8192));
    }
    c.disconnect();
    let server = r.stop();
    let failures = server.save_images();
    assert!(failures.is_empty(), "{failures:?}");
    assert!(images.path().join("pm.img").exists() && images.path().join("d.img").exists());
    drop(server);

    let r = start_exports(image_exports(images.path(), &specs));
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..40u64 {
        let mut want = pattern(i as u8, 4096);
        if i == 7 {
            want[1024..2048].copy_from_slice(&pattern(99, 1024));
        }
        assert_eq!(c.read(i * 4096, 4096), want, "pm page {i}");
    }
    assert_eq!(c.read(40 * 4096, 4096), vec![0; 4096], "never written: zeroes");
    c.disconnect();
    let mut c = Client::connect(&r);
    c.go("d");
    for i in 0..10u64 {
        assert_eq!(c.read(i * 8192, 8192), pattern(i as u8 + 100, 8192), "d write {i}");
    }
    c.disconnect();
    assert!(r.server.stats().iter().all(|s| s.counters.errors == 0));
}

#[test]
fn power_cuts_racing_the_save_leave_an_image_with_every_flushed_write() {
    let images = tempfile::tempdir().unwrap();
    let pm = config("pagemap", "write_buffer_pages = 16");
    let dftl = config("dftl", "");
    let specs = [("pm", &pm), ("d", &dftl)];
    let r = start_exports(image_exports(images.path(), &specs));
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..300u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    let (error, _) = c.call(CMD_FLUSH, 0, 0, 0, &[]);
    assert_eq!(error, 0);
    // Not flushed: the write-back buffer may lose them to a cut before the save.
    for i in 300..305u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    c.disconnect();
    let mut c = Client::connect(&r);
    c.go("d");
    for i in 0..100u64 {
        c.write(i * 4096, &pattern(i as u8 + 7, 4096));
    }
    c.disconnect();
    let server = r.stop();

    // SIGUSR1 at exit: cuts keep coming while the images are saved.
    let start = Arc::new(std::sync::Barrier::new(2));
    let cutter = {
        let (server, start) = (server.clone(), start.clone());
        std::thread::spawn(move || {
            start.wait();
            for _ in 0..20 {
                assert!(server.cut_power().iter().all(|(_, cut)| cut.is_ok()));
                std::thread::yield_now();
            }
        })
    };
    start.wait();
    let failures = server.save_images();
    cutter.join().unwrap();
    assert!(failures.is_empty(), "{failures:?}");
    drop(server);

    let r = start_exports(image_exports(images.path(), &specs));
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..300u64 {
        assert_eq!(c.read(i * 4096, 4096), pattern(i as u8, 4096), "pm page {i}, flushed before the cuts");
    }
    for i in 300..305u64 {
        let got = c.read(i * 4096, 4096);
        assert!(got == pattern(i as u8, 4096) || got == vec![0; 4096], "pm page {i}: its write or nothing");
    }
    c.disconnect();
    let mut c = Client::connect(&r);
    c.go("d");
    for i in 0..100u64 {
        assert_eq!(c.read(i * 4096, 4096), pattern(i as u8 + 7, 4096), "d page {i}");
    }
    c.disconnect();
}

/// Starts `config`'s device as export `pm` with `options`.
fn start_config(config: &RunConfig, options: ExportOptions) -> Running {
    start_exports(vec![Export::new("pm", Device::open(config).unwrap(), options)])
}

#[test]
fn a_flush_after_a_power_cut_that_lost_acknowledged_writes_fails_once() {
    // A write-back buffer; the cut comes right after the third command (B's write).
    let options = ExportOptions { cut_after: Some(3), ..ExportOptions::default() };
    let r = start_config(&config("pagemap", "write_buffer_pages = 64"), options.clone());
    let mut c = Client::connect(&r);
    let mut other = Client::connect(&r);
    c.go("pm");
    other.go("pm");
    c.write(0, &pattern(1, 4096));
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    c.write(0, &pattern(2, 4096));
    // B was acknowledged into the buffer and lost: the flush must not say it is safe.
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, EIO, "flush after the cut that lost B");
    assert_eq!(c.read(0, 4096), pattern(1, 4096), "B is gone, A stands");
    // Told once: the next flush covers nothing lost.
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    // Another connection open at the cut learns it too (one device, multi-conn).
    assert_eq!(other.call(CMD_FLUSH, 0, 0, 0, &[]).0, EIO);
    assert_eq!(other.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    // A connection made after the cut had nothing lost.
    let mut late = Client::connect(&r);
    late.go("pm");
    assert_eq!(late.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    for cl in [c, other, late] {
        cl.disconnect();
    }
    assert_eq!(r.server.exports()[0].losses(), 1);

    // The same commands where nothing was lost: every flush succeeds.
    for (device_extra, flushed_first) in [("", false), ("write_buffer_pages = 64", true)] {
        let r = start_config(&config("pagemap", device_extra), options.clone());
        let mut c = Client::connect(&r);
        c.go("pm");
        c.write(0, &pattern(1, 4096));
        assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
        if flushed_first {
            // FUA: durable before it is acknowledged, so the cut after it loses nothing.
            assert_eq!(c.call(CMD_WRITE, CMD_FLAG_FUA, 0, 4096, &pattern(2, 4096)).0, 0);
        } else {
            // No write-back cache: an acknowledged write is durable.
            c.write(0, &pattern(2, 4096));
        }
        assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0, "{device_extra}: nothing lost");
        assert_eq!(c.read(0, 4096), pattern(2, 4096));
        c.disconnect();
        assert_eq!((r.server.stats()[0].power_cuts, r.server.exports()[0].losses()), (1, 0));
    }
}

#[test]
fn flushed_and_fua_writes_are_in_the_image_when_the_server_dies_without_saving() {
    let images = tempfile::tempdir().unwrap();
    let pm = config("pagemap", "write_buffer_pages = 16");
    let specs = [("pm", &pm)];
    let r = start_exports(image_exports(images.path(), &specs));
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..40u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    assert_eq!(c.call(CMD_WRITE, CMD_FLAG_FUA, 50 * 4096, 4096, &pattern(50, 4096)).0, 0);
    // Neither flushed nor FUA: in the buffer only.
    for i in 60..64u64 {
        c.write(i * 4096, &pattern(i as u8, 4096));
    }
    c.disconnect();
    assert!(r.server.exports()[0].journal_counts().unwrap().0 >= 2, "a record per flush and FUA write");
    // The server dies: no save. Its image and journal are what a crash leaves.
    let server = r.stop();
    drop(server);
    let path = images.path().join("pm.img");
    let device = Device::open_image(&pm, &path).unwrap();
    let r = start_exports(vec![Export::new("pm", device, ExportOptions::default())]);
    let mut c = Client::connect(&r);
    c.go("pm");
    for i in 0..40u64 {
        assert_eq!(c.read(i * 4096, 4096), pattern(i as u8, 4096), "flushed page {i}");
    }
    assert_eq!(c.read(50 * 4096, 4096), pattern(50, 4096), "the FUA write");
    for i in 60..64u64 {
        let got = c.read(i * 4096, 4096);
        assert!(got == pattern(i as u8, 4096) || got == vec![0; 4096], "page {i}: its write or nothing");
    }
    c.disconnect();
}

#[test]
fn a_journal_cut_short_by_a_crash_keeps_the_records_before_it() {
    let images = tempfile::tempdir().unwrap();
    let pm = config("pagemap", "");
    let r = start_exports(image_exports(images.path(), &[("pm", &pm)]));
    let mut c = Client::connect(&r);
    c.go("pm");
    c.write(0, &pattern(1, 4096));
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    c.write(4096, &pattern(2, 4096));
    assert_eq!(c.call(CMD_FLUSH, 0, 0, 0, &[]).0, 0);
    c.disconnect();
    drop(r.stop());
    // A crash in the middle of the second record's append.
    let journal = images.path().join("pm.img.journal");
    let len = std::fs::metadata(&journal).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&journal).unwrap().set_len(len - 5).unwrap();
    let device = Device::open_image(&pm, &images.path().join("pm.img")).unwrap();
    let r = start_exports(vec![Export::new("pm", device, ExportOptions::default())]);
    let mut c = Client::connect(&r);
    c.go("pm");
    assert_eq!(c.read(0, 4096), pattern(1, 4096), "the first flush's record stands");
    assert_eq!(c.read(4096, 4096), vec![0; 4096], "the torn record is ignored");
    c.disconnect();
}

#[test]
fn one_image_is_served_by_one_server_at_a_time() {
    let images = tempfile::tempdir().unwrap();
    let pm = config("pagemap", "");
    let path = images.path().join("pm.img");
    let first = Export::new("pm", Device::open(&pm).unwrap(), ExportOptions::default()).with_image(&path).unwrap();
    let second = Export::new("pm", Device::open(&pm).unwrap(), ExportOptions::default()).with_image(&path);
    let err = second.unwrap_err().to_string();
    assert!(err.contains("pm.img.lock") && err.contains("another"), "{err}");
    drop(first);
    // Released with the export that held it.
    Export::new("pm", Device::open(&pm).unwrap(), ExportOptions::default()).with_image(&path).unwrap();
}
