//! TLS for the server: NBD's `NBD_OPT_STARTTLS` (the NBD project's
//! `doc/proto.md`, "TLS support"), with rustls.
//!
//! [`Tls::require`] is the protocol's FORCEDTLS mode: before TLS, every option
//! but `STARTTLS` and `ABORT` is answered `NBD_REP_ERR_TLS_REQD` and
//! `EXPORT_NAME` closes the connection, so nothing of an export (not even its
//! name) is seen and no byte of it is read or written without TLS. Otherwise
//! TLS is offered and the client chooses (the degenerate SELECTIVETLS mode in
//! which no export requires it).
//!
//! Credentials are a server certificate chain and its key (PEM); with
//! [`Tls::verify_peer`] a client must present a certificate signed by the
//! given CA, which is the access control: a client without one is refused
//! during the TLS handshake. (rustls has no TLS-PSK, so the PSK files of
//! nbdkit and qemu are not accepted.) A directory in nbdkit's and qemu's layout
//! (`server-cert.pem`, `server-key.pem`, `ca-cert.pem`) is read by
//! [`Tls::from_dir`]; libnbd clients take the same directory's `ca-cert.pem`
//! (and `client-cert.pem`, `client-key.pem`) with `tls-certificates=DIR`.
//!
//! Once a client's `STARTTLS` is acknowledged, a thread runs the TLS session
//! between the client's socket and one end of a socket pair ([`start`]); the
//! rest of the connection (the negotiation that follows, the reader and the
//! session of transmission) uses the other end as a plain connection, with the
//! same limits and timeouts.

use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};

use crate::listen::Conn;
use crate::ServerError;

/// The server's TLS: credentials, and whether clients must use it.
#[derive(Clone)]
pub struct Tls {
    config: Arc<ServerConfig>,
    require: bool,
    verify_peer: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("require", &self.require).field("verify_peer", &self.verify_peer).finish()
    }
}

impl Tls {
    /// TLS with the certificate chain in `cert` and its private key in `key`
    /// (PEM files); with `client_ca`, a client must present a certificate
    /// signed by a CA in that PEM file. `require`: clients must use TLS.
    pub fn from_files(cert: &Path, key: &Path, client_ca: Option<&Path>, require: bool) -> Result<Tls, ServerError> {
        let bad = |path: &Path, why: String| ServerError::Tls(format!("{}: {why}", path.display()));
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .map_err(|e| bad(cert, pem_problem(&e)))?
            .collect::<Result<_, _>>()
            .map_err(|e| bad(cert, pem_problem(&e)))?;
        if chain.is_empty() {
            return Err(bad(cert, "holds no certificate (a PEM file of BEGIN CERTIFICATE blocks)".into()));
        }
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, pem_problem(&e)))?;
        // ring: it builds with the C compiler alone (aws-lc-rs, rustls's
        // default, needs its own C build); its key exchange (X25519, P-256,
        // P-384) has no post-quantum group, which rustls now marks deprecated.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| ServerError::Tls(e.to_string()))?;
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                let cas: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(ca)
                    .map_err(|e| bad(ca, pem_problem(&e)))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| bad(ca, pem_problem(&e)))?;
                if cas.is_empty() {
                    return Err(bad(ca, "holds no CA certificate to check clients against".into()));
                }
                for c in cas {
                    roots.add(c).map_err(|e| bad(ca, format!("not a usable CA certificate: {e}")))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| bad(ca, e.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(chain, key_der)
            .map_err(|e| bad(key, format!("does not fit the certificate in {}: {e}", cert.display())))?;
        Ok(Tls { config: Arc::new(config), require, verify_peer: client_ca.is_some() })
    }

    /// TLS from a directory in nbdkit's and qemu's layout: `server-cert.pem`,
    /// `server-key.pem`, and with `verify_peer` `ca-cert.pem` (the CA client
    /// certificates must be signed by).
    pub fn from_dir(dir: &Path, verify_peer: bool, require: bool) -> Result<Tls, ServerError> {
        let file = |name: &str| -> Result<PathBuf, ServerError> {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(ServerError::Tls(format!(
                    "{} is missing: a TLS directory holds server-cert.pem and server-key.pem{} (nbdkit's layout)",
                    path.display(),
                    if verify_peer { ", and ca-cert.pem to check clients' certificates" } else { "" }
                )))
            }
        };
        let ca = if verify_peer { Some(file("ca-cert.pem")?) } else { None };
        Tls::from_files(&file("server-cert.pem")?, &file("server-key.pem")?, ca.as_deref(), require)
    }

    /// Whether clients must use TLS (FORCEDTLS).
    pub fn require(&self) -> bool {
        self.require
    }

    /// Whether clients must present a certificate signed by the CA.
    pub fn verify_peer(&self) -> bool {
        self.verify_peer
    }
}

fn pem_problem(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "holds no PEM item of the kind needed".into(),
        e => format!("not a usable PEM file: {e:?}"),
    }
}

/// Plaintext bytes held for the connection before the pump stops reading
/// the client (backpressure), and TLS bytes held for the client before it
/// stops reading the connection.
const HELD: usize = 1 << 20;

/// Starts TLS on `net`, whose `STARTTLS` was just acknowledged: a thread runs
/// the session (handshake, then records both ways) until either side closes.
/// Returns the plaintext end for the rest of the connection, and the thread,
/// which ends with why TLS failed (`None`: a normal close). A client that
/// reads nothing for `write_timeout` while the server has bytes for it is
/// dropped.
pub(crate) fn start(tls: &Tls, net: Conn, write_timeout: Duration) -> io::Result<(Conn, JoinHandle<Option<String>>)> {
    let session = ServerConnection::new(tls.config.clone()).map_err(io::Error::other)?;
    let (plain, inner) = UnixStream::pair()?;
    let pump = std::thread::Builder::new()
        .name("nbd-tls".into())
        .spawn(move || pump(session, net, inner, write_timeout).err().map(|e| e.to_string()))?;
    Ok((Conn::Unix(plain), pump))
}

/// Moves bytes between the client's socket (`net`, TLS) and the connection's
/// plaintext end (`plain`) until one of them closes.
fn pump(mut tls: ServerConnection, mut net: Conn, mut plain: UnixStream, write_timeout: Duration) -> io::Result<()> {
    net.set_nonblocking(true)?;
    plain.set_nonblocking(true)?;
    let mut to_plain: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut net_open = true;
    let mut plain_open = true;
    let mut stalled_since: Option<Instant> = None;
    let result = loop {
        // TLS records for the client.
        while tls.wants_write() {
            match tls.write_tls(&mut net) {
                Ok(_) => stalled_since = None,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        // Plaintext for the connection.
        while !to_plain.is_empty() {
            match plain.write(&to_plain) {
                Ok(n) => drop(to_plain.drain(..n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // The connection ended (it closed its end): done.
                Err(_) => {
                    plain_open = false;
                    to_plain.clear();
                }
            }
        }
        if !plain_open && !tls.wants_write() {
            break Ok(());
        }
        if !net_open && to_plain.is_empty() {
            break Ok(());
        }
        let tls_pending = tls.wants_write();
        if tls_pending {
            let since = *stalled_since.get_or_insert_with(Instant::now);
            if since.elapsed() > write_timeout {
                break Err(io::Error::new(io::ErrorKind::TimedOut, "the client read nothing within the write timeout"));
            }
        }
        let want_net = net_open && to_plain.len() < HELD;
        let want_plain = plain_open && !tls_pending;
        let mut net_events = PollFlags::empty();
        if want_net {
            net_events |= PollFlags::POLLIN;
        }
        if tls_pending {
            net_events |= PollFlags::POLLOUT;
        }
        let mut plain_events = PollFlags::empty();
        if want_plain {
            plain_events |= PollFlags::POLLIN;
        }
        if !to_plain.is_empty() {
            plain_events |= PollFlags::POLLOUT;
        }
        let (net_ready, plain_ready) = {
            let mut fds = [PollFd::new(net.as_fd(), net_events), PollFd::new(plain.as_fd(), plain_events)];
            match poll(&mut fds, 1000u16) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
            (fds[0].revents().unwrap_or(PollFlags::empty()), fds[1].revents().unwrap_or(PollFlags::empty()))
        };
        let gone = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
        if want_net && net_ready.intersects(gone) {
            match tls.read_tls(&mut net) {
                Ok(0) => net_open = false,
                Ok(_) => {
                    if let Err(e) = tls.process_new_packets() {
                        // Send the alert, then give up.
                        let _ = tls.write_tls(&mut net);
                        break Err(io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")));
                    }
                    loop {
                        match tls.reader().read(&mut buf) {
                            Ok(0) => {
                                // close_notify from the client.
                                net_open = false;
                                break;
                            }
                            Ok(n) => to_plain.extend_from_slice(&buf[..n]),
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                            Err(e) => return Err(e),
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => net_open = false,
            }
        }
        if want_plain && plain_ready.intersects(gone) {
            match plain.read(&mut buf) {
                Ok(n) if n > 0 => tls.writer().write_all(&buf[..n])?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The connection closed its end (or failed): close TLS too.
                _ => {
                    plain_open = false;
                    tls.send_close_notify();
                }
            }
        }
    };
    // Whatever is left for the client (the close_notify), best effort.
    let _ = net.set_nonblocking(false);
    while tls.wants_write() {
        if tls.write_tls(&mut net).is_err() {
            break;
        }
    }
    net.shutdown();
    result
}
