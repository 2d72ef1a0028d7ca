//! The crate's one error enum.

use std::path::PathBuf;

use crate::trace::{Compression, TraceFormat};

/// Everything that can go wrong reading, mapping or generating a workload.
///
/// Despite its name it is the crate-wide error: trace I/O and parse errors,
/// address-space overflow, and invalid generator specs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The trace file could not be opened or read (including corrupt compressed data).
    #[error("cannot read trace {}: {source}", path.display())]
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
    /// A line longer than [`crate::trace::MAX_LINE_BYTES`]: no trace format
    /// has such lines, so the file is not a text trace (or not of this format).
    #[error(
        "{}:{line}: a line longer than {max} bytes: this is not a text trace of any format ftlab reads; \
         check that the file is the trace you meant",
        path.display()
    )]
    LineTooLong {
        /// The trace file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The longest line accepted, in bytes.
        max: usize,
    },
    /// The whole trace yielded no request: empty, or read in the wrong format (every
    /// line ignored or skipped as malformed).
    #[error(
        "{}: no request in {lines} lines read as {format} ({skipped} skipped as malformed, the rest blank, \
         comments, a header or lines that are not {format} requests); check that the trace format \
         (--trace-format, workload.trace_format) matches the file, and that the file is the trace you meant",
        path.display()
    )]
    NoRequests {
        /// The trace file.
        path: PathBuf,
        /// The format the file was read in.
        format: TraceFormat,
        /// Lines read.
        lines: u64,
        /// Lines skipped as malformed ([`ReadOptions::skip_bad_lines`](crate::ReadOptions::skip_bad_lines)).
        skipped: u64,
    },
    /// The file name promises a compression (`.gz`, `.bz2`, `.zst`) its content does not have.
    #[error(
        "{}: the name says {named} but the content is {found}; \
         rename the file to match its content, or compress it as its name says",
        path.display()
    )]
    CompressionMismatch {
        /// The trace file.
        path: PathBuf,
        /// The compression the name promises.
        named: Compression,
        /// The compression found by the content's magic bytes.
        found: Compression,
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
