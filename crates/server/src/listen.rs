//! Where the server listens (`unix:PATH` or `tcp:HOST:PORT`) and the two kinds
//! of connection behind one type.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::ServerError;

/// A listen address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A unix socket at this path (`nbd+unix:///?socket=PATH` for clients).
    Unix(PathBuf),
    /// A TCP `HOST:PORT` (`nbd://HOST:PORT/` for clients).
    Tcp(String),
}

impl FromStr for Listen {
    type Err = ServerError;

    /// Parses `unix:PATH` or `tcp:HOST:PORT`.
    fn from_str(s: &str) -> Result<Self, ServerError> {
        match s.split_once(':') {
            Some(("unix", path)) if !path.is_empty() => Ok(Listen::Unix(PathBuf::from(path))),
            Some(("tcp", addr))
                if addr.rsplit_once(':').is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok()) =>
            {
                Ok(Listen::Tcp(addr.to_owned()))
            }
            _ => Err(ServerError::BadListen(s.to_owned())),
        }
    }
}

impl std::fmt::Display for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Listen::Unix(p) => write!(f, "unix:{}", p.display()),
            Listen::Tcp(a) => write!(f, "tcp:{a}"),
        }
    }
}

/// A bound listening socket. A unix socket's file is made readable and
/// writable by its owner only (0600), and removed when the listener is
/// dropped, unless another server has put its own socket there since.
#[derive(Debug)]
pub struct Listener {
    inner: ListenerKind,
}

#[derive(Debug)]
enum ListenerKind {
    /// The listener, its path, and the socket file's device and inode.
    Unix(UnixListener, PathBuf, (u64, u64)),
    Tcp(TcpListener),
}

impl Listener {
    /// Binds `listen`. A unix socket file left by a server that is gone is
    /// replaced; one a live server answers on is an error, as is a path that is
    /// not a socket.
    pub fn bind(listen: &Listen) -> Result<Listener, ServerError> {
        let bind_err = |error| ServerError::Bind { address: listen.to_string(), error };
        let inner = match listen {
            Listen::Unix(path) => {
                if let Ok(meta) = std::fs::symlink_metadata(path) {
                    let taken = |why: &str| ServerError::PathTaken { path: path.clone(), why: why.to_owned() };
                    if !meta.file_type().is_socket() {
                        return Err(taken("the path exists and is not a socket"));
                    }
                    if UnixStream::connect(path).is_ok() {
                        return Err(taken("a server is listening there"));
                    }
                    std::fs::remove_file(path).map_err(bind_err)?;
                }
                let listener = UnixListener::bind(path).map_err(bind_err)?;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(bind_err)?;
                let meta = std::fs::symlink_metadata(path).map_err(bind_err)?;
                ListenerKind::Unix(listener, path.clone(), (meta.dev(), meta.ino()))
            }
            Listen::Tcp(addr) => ListenerKind::Tcp(TcpListener::bind(addr.as_str()).map_err(bind_err)?),
        };
        let listener = Listener { inner };
        listener.set_nonblocking().map_err(bind_err)?;
        Ok(listener)
    }

    /// The address it is bound to (a TCP port of 0 is resolved).
    pub fn address(&self) -> Listen {
        match &self.inner {
            ListenerKind::Unix(_, p, _) => Listen::Unix(p.clone()),
            ListenerKind::Tcp(l) => Listen::Tcp(l.local_addr().map_or_else(|_| "?".to_owned(), |a| a.to_string())),
        }
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        match &self.inner {
            ListenerKind::Unix(l, ..) => l.set_nonblocking(true),
            ListenerKind::Tcp(l) => l.set_nonblocking(true),
        }
    }

    /// A connection if one is waiting (`Ok(None)` if none), blocking, with
    /// `TCP_NODELAY` on a TCP one.
    pub(crate) fn try_accept(&self) -> io::Result<Option<Conn>> {
        let conn = match &self.inner {
            ListenerKind::Unix(l, ..) => l.accept().map(|(s, _)| Conn::Unix(s)),
            ListenerKind::Tcp(l) => l.accept().map(|(s, _)| Conn::Tcp(s)),
        };
        match conn {
            Ok(conn) => {
                conn.prepare()?;
                Ok(Some(conn))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let ListenerKind::Unix(_, path, id) = &self.inner {
            // Only our own socket file: another server may listen there now.
            let ours = std::fs::symlink_metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == *id);
            if ours {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// One client connection, unix or TCP.
#[derive(Debug)]
pub(crate) enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Conn {
    /// Blocking I/O; no Nagle delay on TCP (small replies go out at once).
    fn prepare(&self) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_nonblocking(false),
            Conn::Tcp(s) => {
                s.set_nonblocking(false)?;
                s.set_nodelay(true)
            }
        }
    }

    /// Reads time out after `read` (`None`: never), writes after `write`.
    pub(crate) fn set_timeouts(&self, read: Option<Duration>, write: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_read_timeout(read).and_then(|()| s.set_write_timeout(write)),
            Conn::Tcp(s) => s.set_read_timeout(read).and_then(|()| s.set_write_timeout(write)),
        }
    }

    /// Non-blocking I/O (`true`) or blocking.
    pub(crate) fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.set_nonblocking(on),
            Conn::Tcp(s) => s.set_nonblocking(on),
        }
    }

    /// A second handle on the same socket.
    pub(crate) fn try_clone(&self) -> io::Result<Conn> {
        Ok(match self {
            Conn::Unix(s) => Conn::Unix(s.try_clone()?),
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
        })
    }

    /// Shuts both directions: a reader blocked on it returns.
    pub(crate) fn shutdown(&self) {
        let _ = match self {
            Conn::Unix(s) => s.shutdown(Shutdown::Both),
            Conn::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }
}

impl std::os::fd::AsFd for Conn {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Conn::Unix(s) => s.as_fd(),
            Conn::Tcp(s) => s.as_fd(),
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.read(buf),
            Conn::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Unix(s) => s.write(buf),
            Conn::Tcp(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Unix(s) => s.flush(),
            Conn::Tcp(s) => s.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn addresses_parse() {
        assert_eq!("unix:/tmp/x.sock".parse::<Listen>().unwrap(), Listen::Unix("/tmp/x.sock".into()));
        assert_eq!("tcp:127.0.0.1:10809".parse::<Listen>().unwrap(), Listen::Tcp("127.0.0.1:10809".into()));
        assert_eq!("tcp:[::1]:10809".parse::<Listen>().unwrap(), Listen::Tcp("[::1]:10809".into()));
        for bad in ["unix:", "tcp:localhost", "tcp::80", "tcp:h:port", "/tmp/x.sock", "udp:1:2"] {
            let e = bad.parse::<Listen>().unwrap_err().to_string();
            assert!(e.contains("unix:PATH"), "{bad}: {e}");
        }
    }
}
