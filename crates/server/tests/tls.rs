//! TLS by NBD's STARTTLS over TCP, spoken by hand with a rustls client: a
//! server that requires TLS refuses every option before it (and closes on
//! EXPORT_NAME), then serves data over TLS; one that offers it serves both; one
//! without it refuses STARTTLS; with client certificates required, a client
//! without one, or with one from another CA, is refused in the handshake and
//! sees nothing of the export. Certificates are made here with rcgen.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use ftlab_server::proto::*;
use ftlab_server::{Export, ExportOptions, Listen, Listener, Server, Tls};
use ftlab_sim::device::Device;
use ftlab_sim::RunConfig;
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A CA and certificates it signed, written in nbdkit's layout.
struct Pki {
    dir: tempfile::TempDir,
}

fn ca(name: &str) -> (rcgen::Certificate, KeyPair) {
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    (p.self_signed(&key).unwrap(), key)
}

fn leaf(names: &[&str], usage: ExtendedKeyUsagePurpose, ca: &(rcgen::Certificate, KeyPair)) -> (String, String) {
    let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    p.extended_key_usages = vec![usage];
    let key = KeyPair::generate().unwrap();
    let cert = p.signed_by(&key, &ca.0, &ca.1).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    /// `server-cert.pem`, `server-key.pem`, `ca-cert.pem`, `client-cert.pem`,
    /// `client-key.pem`, and `stray-cert.pem`/`stray-key.pem`, a client
    /// certificate from another CA.
    fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca = ca("ftlab test CA");
        let (server_cert, server_key) = leaf(&["localhost", "127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth, &ca);
        let (client_cert, client_key) = leaf(&["client"], ExtendedKeyUsagePurpose::ClientAuth, &ca);
        let other = self::ca("another CA");
        let (stray_cert, stray_key) = leaf(&["client"], ExtendedKeyUsagePurpose::ClientAuth, &other);
        let files = [
            ("ca-cert.pem", ca.0.pem()),
            ("server-cert.pem", server_cert),
            ("server-key.pem", server_key),
            ("client-cert.pem", client_cert),
            ("client-key.pem", client_key),
            ("stray-cert.pem", stray_cert),
            ("stray-key.pem", stray_key),
        ];
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        Pki { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A client configuration trusting the CA, presenting `client` (a file
    /// stem: `client`, `stray`) if given.
    fn client(&self, client: Option<&str>) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from_pem_file(self.path().join("ca-cert.pem")).unwrap()).unwrap();
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        Arc::new(match client {
            None => builder.with_no_client_auth(),
            Some(stem) => {
                let cert = CertificateDer::from_pem_file(self.path().join(format!("{stem}-cert.pem"))).unwrap();
                let key = PrivateKeyDer::from_pem_file(self.path().join(format!("{stem}-key.pem"))).unwrap();
                builder.with_client_auth_cert(vec![cert], key).unwrap()
            }
        })
    }
}

struct Running {
    server: Arc<Server>,
    address: String,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.server.stop();
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

fn start(tls: Option<Tls>) -> Running {
    let toml = "seed = 3\n[device]\nchip = \"small-slc\"\nblocks_per_plane = 16\n[ftl]\nkind = \"pagemap\"\n";
    let device = Device::open(&RunConfig::from_toml(toml, "test").unwrap()).unwrap();
    let mut server = Server::new(vec![Export::new("pagemap", device, ExportOptions::default())]).unwrap();
    if let Some(t) = tls {
        server = server.with_tls(t);
    }
    let server = Arc::new(server);
    let listener = Listener::bind(&Listen::Tcp("127.0.0.1:0".into())).unwrap();
    let Listen::Tcp(address) = listener.address() else { unreachable!() };
    let s = server.clone();
    let thread = std::thread::spawn(move || s.serve(&listener).unwrap());
    Running { server, address, thread: Some(thread) }
}

/// A client's stream: plain TCP, then TLS after STARTTLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    Gone,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Gone => unreachable!(),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Gone => unreachable!(),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
            Stream::Gone => unreachable!(),
        }
    }
}

struct Client {
    s: Stream,
}

impl Client {
    fn connect(r: &Running) -> Client {
        let mut s = TcpStream::connect(&r.address).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(20))).unwrap();
        assert_eq!(read_u64(&mut s).unwrap(), NBDMAGIC);
        assert_eq!(read_u64(&mut s).unwrap(), IHAVEOPT);
        assert_eq!(read_u16(&mut s).unwrap(), FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
        s.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes()).unwrap();
        Client { s: Stream::Plain(s) }
    }

    fn send_option(&mut self, option: u32, data: &[u8]) -> std::io::Result<()> {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&option.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m)?;
        self.s.flush()
    }

    /// Sends an option; its replies up to the final one, or the error that
    /// ended the connection.
    fn option(&mut self, option: u32, data: &[u8]) -> std::io::Result<Vec<(u32, Vec<u8>)>> {
        self.send_option(option, data)?;
        let mut replies = Vec::new();
        loop {
            assert_eq!(read_u64(&mut self.s)?, OPT_REPLY_MAGIC);
            assert_eq!(read_u32(&mut self.s)?, option);
            let kind = read_u32(&mut self.s)?;
            let mut body = vec![0; read_u32(&mut self.s)? as usize];
            self.s.read_exact(&mut body)?;
            replies.push((kind, body));
            if kind != REP_SERVER && kind != REP_INFO {
                return Ok(replies);
            }
        }
    }

    fn last(&mut self, option: u32, data: &[u8]) -> u32 {
        self.option(option, data).unwrap().last().unwrap().0
    }

    /// STARTTLS, acknowledged, then the TLS handshake (completed by the
    /// first I/O: `handshake` drives it now).
    fn starttls(&mut self, config: Arc<rustls::ClientConfig>) -> std::io::Result<()> {
        assert_eq!(self.last(OPT_STARTTLS, &[]), REP_ACK);
        let Stream::Plain(tcp) = std::mem::replace(&mut self.s, Stream::Gone) else { panic!("already TLS") };
        let conn = rustls::ClientConnection::new(config, ServerName::try_from("localhost").unwrap()).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        self.s = Stream::Tls(Box::new(tls));
        Ok(())
    }

    fn go(&mut self) -> u32 {
        let mut d = 0u32.to_be_bytes().to_vec();
        d.extend_from_slice(&0u16.to_be_bytes());
        self.last(OPT_GO, &d)
    }

    fn request(&mut self, kind: u16, cookie: u64, offset: u64, data: &[u8], len: u32) -> Vec<u8> {
        let mut m = REQUEST_MAGIC.to_be_bytes().to_vec();
        m.extend_from_slice(&0u16.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&cookie.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
        self.s.flush().unwrap();
        assert_eq!(read_u32(&mut self.s).unwrap(), SIMPLE_REPLY_MAGIC);
        assert_eq!(read_u32(&mut self.s).unwrap(), 0, "no error");
        assert_eq!(read_u64(&mut self.s).unwrap(), cookie);
        let mut out = vec![0; if kind == CMD_READ { len as usize } else { 0 }];
        self.s.read_exact(&mut out).unwrap();
        out
    }

    /// Writes, flushes and reads back a page of `byte`.
    fn round_trip(&mut self, byte: u8) {
        let page = vec![byte; 4096];
        self.request(CMD_WRITE, 1, 8192, &page, 4096);
        self.request(CMD_FLUSH, 2, 0, &[], 0);
        assert_eq!(self.request(CMD_READ, 3, 8192, &[], 4096), page);
    }

    /// Whether the server closed the connection (a read gets end of file or
    /// an error).
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.s.read(&mut b), Ok(0) | Err(_))
    }
}

#[test]
fn a_server_that_requires_tls_shows_nothing_without_it_and_serves_over_it() {
    let pki = Pki::new();
    let r = start(Some(Tls::from_dir(pki.path(), false, true).unwrap()));
    let mut c = Client::connect(&r);
    // Every option but STARTTLS and ABORT: TLS_REQD, the export's name
    // unseen.
    let list = c.option(OPT_LIST, &[]).unwrap();
    assert_eq!(list.len(), 1, "no export listed: {list:?}");
    assert_eq!(list[0].0, REP_ERR_TLS_REQD);
    assert_eq!(c.go(), REP_ERR_TLS_REQD);
    assert_eq!(c.last(OPT_INFO, &[0, 0, 0, 0, 0, 0]), REP_ERR_TLS_REQD);
    assert_eq!(c.last(99, &[]), REP_ERR_TLS_REQD);
    // Over TLS: the export, and its data.
    c.starttls(pki.client(None)).unwrap();
    let list = c.option(OPT_LIST, &[]).unwrap();
    assert_eq!(list[0].0, REP_SERVER);
    assert_eq!(c.last(OPT_STARTTLS, &[]), REP_ERR_INVALID, "TLS is on already");
    assert_eq!(c.go(), REP_ACK);
    c.round_trip(0xA5);
    drop(c);
    // EXPORT_NAME cannot be refused: the connection is closed, no export
    // entered.
    let mut c = Client::connect(&r);
    c.send_option(OPT_EXPORT_NAME, b"").unwrap();
    assert!(c.closed(), "EXPORT_NAME without TLS must end the connection");
}

#[test]
fn a_server_that_offers_tls_serves_clients_with_and_without_it() {
    let pki = Pki::new();
    let r = start(Some(Tls::from_dir(pki.path(), false, false).unwrap()));
    let mut plain = Client::connect(&r);
    assert_eq!(plain.go(), REP_ACK);
    plain.round_trip(1);
    let mut tls = Client::connect(&r);
    tls.starttls(pki.client(None)).unwrap();
    assert_eq!(tls.go(), REP_ACK);
    tls.round_trip(2);
}

#[test]
fn a_server_without_tls_refuses_starttls_by_policy() {
    let r = start(None);
    let mut c = Client::connect(&r);
    assert_eq!(c.last(OPT_STARTTLS, &[]), REP_ERR_POLICY);
    assert_eq!(c.go(), REP_ACK, "the session goes on without TLS");
    c.round_trip(3);
}

#[test]
fn client_certificates_are_the_access_control() {
    let pki = Pki::new();
    let r = start(Some(Tls::from_dir(pki.path(), true, true).unwrap()));
    // No certificate, or one from another CA: the handshake fails.
    for client in [None, Some("stray")] {
        let mut c = Client::connect(&r);
        let shook = c.starttls(pki.client(client));
        // TLS 1.3: the client may finish its side before the server's
        // refusal arrives; then the first read fails.
        let refused = shook.is_err() || c.option(OPT_LIST, &[]).is_err();
        assert!(refused, "{client:?}: a client without the CA's certificate got through");
    }
    let mut c = Client::connect(&r);
    c.starttls(pki.client(Some("client"))).unwrap();
    assert_eq!(c.go(), REP_ACK);
    c.round_trip(4);
}

#[test]
fn bad_credentials_are_named() {
    let pki = Pki::new();
    let e = Tls::from_dir(&pki.path().join("nope"), false, true).unwrap_err().to_string();
    assert!(e.contains("server-cert.pem is missing"), "{e}");
    std::fs::write(pki.path().join("server-key.pem"), "not a key").unwrap();
    let e = Tls::from_dir(pki.path(), false, true).unwrap_err().to_string();
    assert!(e.contains("server-key.pem"), "{e}");
    let other = Pki::new();
    std::fs::copy(other.path().join("client-key.pem"), pki.path().join("server-key.pem")).unwrap();
    let e = Tls::from_dir(pki.path(), false, true).unwrap_err().to_string();
    assert!(e.contains("does not fit the certificate"), "{e}");
    std::fs::remove_file(other.path().join("ca-cert.pem")).unwrap();
    let e = Tls::from_dir(other.path(), true, true).unwrap_err().to_string();
    assert!(e.contains("ca-cert.pem is missing") && e.contains("check clients' certificates"), "{e}");
}
