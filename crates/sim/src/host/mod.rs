//! FlashTier's host side, above the device: a disk ([`disk`]), cache managers
//! that put a flash cache in front of it ([`cache`], over a plain SSD or over
//! the solid-state cache's commands of [`ssc`]), and FlashTier's evaluation
//! driving them with filebench-like personalities ([`flashtier`]).

pub mod cache;
pub mod disk;
pub mod flashtier;
pub mod ssc;

use thiserror::Error;

use ftlab_ftl::ErrorKind;

use crate::error::SimError;

/// Errors of a host-side run: the simulator's (a configuration, a trace), or a
/// cache manager's.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum HostError {
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A cache manager ([`cache`]) failed: a bad cache configuration, the disk
    /// or the cache device refusing a request, or a solid-state cache that
    /// lost a dirty block.
    #[error("{system}: {source}")]
    Cache {
        system: String,
        #[source]
        source: Box<cache::CacheError>,
    },
}

impl HostError {
    /// The kind of failure ([`SimError::kind`]; a cache manager's bad
    /// configuration or disk request is [`ErrorKind::Invalid`], its device's
    /// failure keeps the device's kind).
    pub fn kind(&self) -> ErrorKind {
        match self {
            HostError::Sim(e) => e.kind(),
            HostError::Cache { source, .. } => match &**source {
                cache::CacheError::Config(_) | cache::CacheError::Disk(_) => ErrorKind::Invalid,
                cache::CacheError::Device(e) => e.kind(),
                _ => ErrorKind::Io,
            },
        }
    }
}
