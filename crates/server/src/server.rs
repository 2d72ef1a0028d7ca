//! The server: its exports, the accept loop, a thread per connection, and a
//! stop that ends every connection cleanly.

use std::collections::HashMap;
use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ftlab_sim::device::DeviceError;

use crate::export::{Export, ExportStats};
use crate::handshake::{negotiate, Negotiated};
use crate::listen::{Conn, Listener};
use crate::session::transmit;
use crate::ServerError;

/// How often the accept loop looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// An NBD server over one or more exports; the first is the default export
/// (the one the empty name selects).
#[derive(Debug)]
pub struct Server {
    exports: Vec<Arc<Export>>,
    stop: AtomicBool,
    conns: Mutex<HashMap<u64, Conn>>,
    next_id: AtomicU64,
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
        })
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
    }

    /// One connection, negotiation then transmission; ends quietly when the
    /// client leaves normally, with a line on stderr otherwise.
    fn connection(&self, id: u64, conn: Conn) {
        let outcome = (|| -> std::io::Result<Option<String>> {
            let mut reader = conn.try_clone()?;
            let mut writer = BufWriter::new(conn);
            let export = match negotiate(&mut reader, &mut writer, &self.exports)? {
                Negotiated::Export(export) => export,
                Negotiated::Closed { why } if why == "NBD_OPT_ABORT" => return Ok(None),
                Negotiated::Closed { why } => return Ok(Some(why)),
            };
            let conn = writer.into_inner().map_err(|e| e.into_error())?;
            let why = transmit(&export, conn, &self.stop)?;
            let normal = why == "NBD_CMD_DISC" || why == "the client closed the connection";
            Ok((!normal && !self.stopping()).then(|| format!("export `{}`: {why}", export.name())))
        })();
        match outcome {
            Ok(None) => {}
            Ok(Some(why)) => eprintln!("ftlab serve: connection {id} closed: {why}"),
            Err(e) if self.stopping() => drop(e),
            Err(e) => eprintln!("ftlab serve: connection {id}: {e}"),
        }
        self.forget(id);
    }
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionAborted | ConnectionReset | OutOfMemory)
        || e.raw_os_error().is_some_and(|c| c == 24 || c == 23)
}
