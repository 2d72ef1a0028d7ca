//! The server's errors: configuration (exports, listen addresses), I/O on
//! the listening socket, and saving device images. A failing connection is never one of them: it is
//! closed and logged, and the server carries on.

use std::path::PathBuf;

/// Why the server could not be set up or stopped serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A listen address that is neither `unix:PATH` nor `tcp:HOST:PORT`.
    #[error("listen address `{0}`: write unix:PATH (a socket file) or tcp:HOST:PORT (e.g. tcp:127.0.0.1:10809)")]
    BadListen(String),
    /// The socket could not be bound.
    #[error("cannot listen on {address}: {error}")]
    Bind { address: String, error: std::io::Error },
    /// A unix socket path is taken by a live server or a file that is not a socket.
    #[error("cannot listen on unix:{}: {why}; pick another path or stop what uses it", path.display())]
    PathTaken { path: PathBuf, why: String },
    /// Accepting a connection failed.
    #[error("accepting a connection failed: {0}")]
    Accept(std::io::Error),
    /// Two exports with one name, or none at all.
    #[error("{0}")]
    Exports(String),
    /// TLS credentials that could not be read or used.
    #[error("TLS: {0}")]
    Tls(String),
    /// An export's image is locked by another process.
    #[error("export `{export}`: device image {}: {why}", path.display())]
    ImageInUse { export: String, path: PathBuf, why: String },
    /// An export's device could not be saved to its image.
    #[error("export `{export}`: {source}")]
    Image {
        export: String,
        #[source]
        source: Box<ftlab_sim::ImageError>,
    },
}
