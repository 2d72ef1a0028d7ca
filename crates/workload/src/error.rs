//! The crate's one error enum.

use std::path::PathBuf;

/// Everything that can go wrong reading, mapping or generating a workload.
///
/// Despite its name it is the crate-wide error: trace I/O and parse errors,
/// address-space overflow, and invalid generator specs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The trace file could not be opened or read (including corrupt compressed data).
    #[error("{}: {source}", path.display())]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line does not follow the trace format.
    #[error("{}:{line}: expected {expected}, found {found:?}", path.display())]
    Malformed {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What the format requires at this point.
        expected: String,
        /// What the line holds (shortened if long).
        found: String,
    },
    /// A request of size 0 where the format has no legitimate reason for one.
    #[error("{}:{line}: zero-length request (size 0); fix the trace or read it with skip_bad_lines", path.display())]
    ZeroLength {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
    },
    /// A trace format name that is not known.
    #[error("unknown trace format {name:?}; known formats: {known}")]
    UnknownFormat {
        /// The name given.
        name: String,
        /// The accepted names, comma-separated.
        known: String,
    },
    /// The trace touches more distinct pages than the simulated device has.
    #[error(
        "address mapping ({mode}): the trace touches more than {capacity_pages} distinct pages, \
             but the simulated device has only {capacity_pages} logical pages; \
             use a larger device or the modulo address mode"
    )]
    FootprintTooLarge {
        /// The address mode in use.
        mode: String,
        /// Logical pages of the simulated device.
        capacity_pages: u64,
    },
    /// The address mapper was set up or used wrongly.
    #[error("address mapping: {0}")]
    Mapping(String),
    /// A generator spec is invalid.
    #[error("invalid workload: {0}")]
    InvalidSpec(String),
}
