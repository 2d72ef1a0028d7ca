//! The server: its exports, the accept loop, a thread per connection, and a
//! stop that ends every connection cleanly.

use std::collections::HashMap;
use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ftlab_sim::device::DeviceError;

use crate::export::{Export, ExportStats};
use crate::handshake::{negotiate, options, Negotiated, TlsState};
use crate::listen::{Conn, Listener};
use crate::session::{transmit, Budget};
use crate::tls::Tls;
use crate::ServerError;

/// How often the accept loop looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// What one client, or all of them, may hold of the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Connections open at once (negotiating or transmitting); one more is
    /// accepted and closed at once, with a line on stderr. Default 128.
    pub max_connections: usize,
    /// A client must finish negotiating within this time. Default 30 s.
    pub handshake_timeout: Duration,
    /// A connection that sends no request for this long is closed. Default
    /// `None`: never (a mounted file system may idle for hours).
    pub idle_timeout: Option<Duration>,
    /// A client that does not read its replies for this long is dropped.
    /// Default 60 s.
    pub write_timeout: Duration,
    /// Bytes one connection's requests may pin in the server (reads'
    /// buffers until replied, writes' payloads until on the device, and
    /// about 256 bytes a request) before the server stops reading from it.
    /// Default 64 MiB (two maximum-size requests).
    pub connection_bytes: u64,
    /// The same over all connections (each may still have one request in
    /// flight beyond it). Default 1 GiB.
    pub total_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 128,
            handshake_timeout: Duration::from_secs(30),
            idle_timeout: None,
            write_timeout: Duration::from_secs(60),
            connection_bytes: 64 << 20,
            total_bytes: 1 << 30,
        }
    }
}

/// An NBD server over one or more exports; the first is the default export
/// (the one the empty name selects).
#[derive(Debug)]
pub struct Server {
    exports: Vec<Arc<Export>>,
    stop: AtomicBool,
    conns: Mutex<HashMap<u64, Conn>>,
    next_id: AtomicU64,
    limits: Limits,
    /// Bytes all connections' requests pin now ([`Limits::total_bytes`]).
    pinned: Arc<AtomicU64>,
    /// Connections refused for [`Limits::max_connections`].
    refused: AtomicU64,
    /// Connections that have ended (a stats writer rewrites its file when
    /// this moves: a client's last counters are there once it has left).
    ended: AtomicU64,
    /// TLS credentials and policy ([`Server::with_tls`]).
    tls: Option<Tls>,
}

impl Server {
    /// A server over `exports`: at least one, names unique.
    pub fn new(exports: Vec<Export>) -> Result<Server, ServerError> {
        if exports.is_empty() {
            return Err(ServerError::Exports("no export to serve: give a device configuration".into()));
        }
        for (i, e) in exports.iter().enumerate() {
            if exports[..i].iter().any(|o| o.name() == e.name()) {
                return Err(ServerError::Exports(format!(
                    "two exports are named `{}`: give each --export a name of its own",
                    e.name()
                )));
            }
        }
        Ok(Server {
            exports: exports.into_iter().map(Arc::new).collect(),
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            limits: Limits::default(),
            pinned: Arc::new(AtomicU64::new(0)),
            refused: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            tls: None,
        })
    }

    /// The server with `limits` instead of the defaults.
    pub fn with_limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// The server with TLS ([`crate::tls`]): offered to every client, or
    /// required of every client if [`Tls::require`].
    pub fn with_tls(mut self, tls: Tls) -> Server {
        self.tls = Some(tls);
        self
    }

    /// Its TLS, if it has any.
    pub fn tls(&self) -> Option<&Tls> {
        self.tls.as_ref()
    }

    /// Bytes the connections' requests pin in the server now (reads not yet
    /// replied, write payloads not yet on the device, per-request overhead).
    pub fn bytes_pinned(&self) -> u64 {
        self.pinned.load(Ordering::Acquire)
    }

    /// Connections open now, and connections refused so far for
    /// [`Limits::max_connections`].
    pub fn connections(&self) -> (usize, u64) {
        (self.conns.lock().unwrap_or_else(PoisonError::into_inner).len(), self.refused.load(Ordering::Relaxed))
    }

    /// Its exports, the default first.
    pub fn exports(&self) -> &[Arc<Export>] {
        &self.exports
    }

    /// Every export's counters now.
    pub fn stats(&self) -> Vec<ExportStats> {
        self.exports.iter().map(|e| e.stats()).collect()
    }

    /// Cuts the power on every export now and recovers each with its FTL's own
    /// recovery ([`Export::cut_power`]): commands in flight fail with EIO.
    /// Returns, per export, when its power was cut (ns) or why it could not be
    /// cut or recovered.
    pub fn cut_power(&self) -> Vec<(String, Result<u64, DeviceError>)> {
        self.exports.iter().map(|e| (e.name().to_owned(), e.cut_power())).collect()
    }

    /// Saves every export that has a device image ([`Export::save_image`]),
    /// each flushed and written whole; call it after [`Server::serve`]
    /// returned. Tries every export; returns the failures, none if all saved.
    pub fn save_images(&self) -> Vec<ServerError> {
        self.exports
            .iter()
            .filter_map(|e| {
                e.save_image()
                    .err()
                    .map(|source| ServerError::Image { export: e.name().to_owned(), source: Box::new(source) })
            })
            .collect()
    }

    /// Asks [`Server::serve`] to return: it stops accepting, ends every
    /// connection (commands in flight complete on the device first) and returns.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether [`Server::stop`] was called.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Accepts and serves connections on `listener` until [`Server::stop`].
    pub fn serve(&self, listener: &Listener) -> Result<(), ServerError> {
        std::thread::scope(|scope| {
            let mut failure = None;
            while !self.stopping() {
                match listener.try_accept() {
                    Ok(Some(conn)) => {
                        let open = self.conns.lock().unwrap_or_else(PoisonError::into_inner).len();
                        if open >= self.limits.max_connections {
                            let n = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
                            // A line for the first and then every 1000th: a flood cannot fill the log.
                            if n == 1 || n.is_multiple_of(1000) {
                                eprintln!(
                                    "ftlab serve: refused a connection ({n} so far): {open} are open, the limit \
                                     (--max-connections)"
                                );
                            }
                            conn.shutdown();
                            continue;
                        }
                        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                        match conn.try_clone() {
                            Ok(handle) => {
                                self.conns.lock().unwrap_or_else(PoisonError::into_inner).insert(id, handle);
                            }
                            Err(e) => {
                                eprintln!("ftlab serve: connection {id}: {e}");
                                continue;
                            }
                        }
                        let spawned = std::thread::Builder::new()
                            .name(format!("nbd-conn-{id}"))
                            .spawn_scoped(scope, move || self.connection(id, conn));
                        if let Err(e) = spawned {
                            eprintln!("ftlab serve: connection {id}: cannot start its thread: {e}");
                            self.forget(id);
                        }
                    }
                    Ok(None) => std::thread::sleep(POLL),
                    // Out of file descriptors and the like: wait, then accept again.
                    Err(e) if is_transient(&e) => {
                        eprintln!("ftlab serve: accept: {e}");
                        std::thread::sleep(POLL * 10);
                    }
                    Err(e) => {
                        failure = Some(ServerError::Accept(e));
                        self.stop();
                    }
                }
            }
            for conn in self.conns.lock().unwrap_or_else(PoisonError::into_inner).values() {
                conn.shutdown();
            }
            failure.map_or(Ok(()), Err)
        })
    }

    fn forget(&self, id: u64) {
        self.conns.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        self.ended.fetch_add(1, Ordering::Release);
    }

    /// Connections ended so far (normally or not).
    pub fn connections_ended(&self) -> u64 {
        self.ended.load(Ordering::Acquire)
    }

    /// One connection, negotiation then transmission; ends quietly when the
    /// client leaves normally, with a line on stderr otherwise.
    fn connection(&self, id: u64, conn: Conn) {
        let mut pump = None;
        let outcome = (|| -> std::io::Result<Option<String>> {
            let limits = &self.limits;
            conn.set_timeouts(Some(limits.handshake_timeout), Some(limits.handshake_timeout))?;
            let tls = match &self.tls {
                None => TlsState::Off,
                Some(t) => TlsState::Offered { required: t.require() },
            };
            let mut reader = conn.try_clone()?;
            let mut writer = BufWriter::new(conn);
            let mut negotiated = match negotiate(&mut reader, &mut writer, &self.exports, tls) {
                Err(e) if timed_out(&e) => {
                    return Ok(Some(format!("no export chosen within {:?}: closed", limits.handshake_timeout)))
                }
                n => n?,
            };
            let mut conn = writer.into_inner().map_err(|e| e.into_error())?;
            if let (Negotiated::StartTls { no_zeroes }, Some(t)) = (&negotiated, &self.tls) {
                // The rest of the connection runs over the TLS session's
                // plaintext end, with the same timeouts.
                let (plain, thread) = crate::tls::start(t, conn, limits.write_timeout)?;
                pump = Some(thread);
                plain.set_timeouts(Some(limits.handshake_timeout), Some(limits.handshake_timeout))?;
                let mut reader = plain.try_clone()?;
                let mut writer = BufWriter::new(plain);
                negotiated = match options(&mut reader, &mut writer, &self.exports, TlsState::Active, *no_zeroes) {
                    Err(e) if timed_out(&e) => {
                        return Ok(Some(format!(
                            "no TLS handshake and export choice within {:?}: closed",
                            limits.handshake_timeout
                        )))
                    }
                    n => n?,
                };
                conn = writer.into_inner().map_err(|e| e.into_error())?;
            }
            let export = match negotiated {
                Negotiated::Export(export) => export,
                Negotiated::Closed { why } if why == "NBD_OPT_ABORT" => return Ok(None),
                Negotiated::Closed { why } => return Ok(Some(why)),
                Negotiated::StartTls { .. } => return Ok(Some("NBD_OPT_STARTTLS twice".into())),
            };
            conn.set_timeouts(limits.idle_timeout, Some(limits.write_timeout))?;
            let budget = Budget::new(limits.connection_bytes, limits.total_bytes, self.pinned.clone());
            let why = transmit(&export, conn, &self.stop, budget)?;
            let normal = why == "NBD_CMD_DISC" || why == "the client closed the connection";
            Ok((!normal && !self.stopping()).then(|| format!("export `{}`: {why}", export.name())))
        })();
        // Why TLS failed, if it did: the connection's own reason is then only
        // its consequence.
        let tls_failure = pump.and_then(|p| p.join().ok().flatten());
        match (outcome, tls_failure) {
            (_, Some(why)) if !self.stopping() => eprintln!("ftlab serve: connection {id} closed: {why}"),
            (Ok(None), _) => {}
            (Ok(Some(why)), _) => eprintln!("ftlab serve: connection {id} closed: {why}"),
            (Err(e), _) if self.stopping() => drop(e),
            (Err(e), _) => eprintln!("ftlab serve: connection {id}: {e}"),
        }
        self.forget(id);
    }
}

/// A read or write that timed out.
pub(crate) fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionAborted | ConnectionReset | OutOfMemory)
        || e.raw_os_error().is_some_and(|c| c == 24 || c == 23)
}
